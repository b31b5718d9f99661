/* unwind-memo.c — walks remembered and recalled: a sample whose walk would
 * be one the unwinder has already taken gets that walk's frames without
 * libdwfl (proff/unwind.h, enum uw_memo).
 *
 * Why it is exact. libdwfl's walk is a function of what it reads: the
 * initial registers, the memory words it asks memory_read for, the CFI of
 * the modules the frames are in, and (through module_at) the caller's maps
 * at the frames' addresses. A remembered walk keeps its key — the space's
 * Dwfl incarnation, ip, sp, the callee-saved registers (rbx, rbp,
 * r12-r15), the stack copy's sizes and the frames wanted — the words it
 * read with their values, and each frame's map; a sample recalls it when
 * its key is equal, each of those words reads the same in its own stack
 * copy (or file) and each frame's address lies in the same map (which
 * needs no look-up while the caller's maps_gen is the walk's). The other
 * registers (rax, rcx, rdx, rsi, rdi, r8-r11) are left out of the key,
 * because the x86-64 ABI's CFI leaves them undefined in every caller: only
 * the leaf's rules could read them. So a walk is remembered only when the
 * leaf's CFI (.eh_frame at ip: the CFA and every register's rule) names
 * no register outside the key; a "same value" rule of one outside it, an
 * expression over one, or no CFI at ip (libdwfl's frame-pointer guess)
 * keeps it out. Callers' registers then come from the key's registers and
 * the words read, and the walk is the same. UW_MEMO_CHECK walks every
 * recalled sample again and counts a difference (tests/oracle/dwarf.sh).
 *
 * A narrow key. Most walks' rules, in every frame, name only rsp, rbp and
 * rip: the CFA is rsp or rbp plus an offset, saved registers are read at
 * CFA offsets. rbx and r12-r15 are then only copied from frame to frame
 * (their "same value" rules) or read from the stack, never used to find
 * an address or a frame: such a walk is the same whatever their values,
 * and is remembered under a key without them. It is what pays: a loop's
 * counters live in those registers, and a key with them made a new walk
 * of nearly every sample of a hot loop (43 % recalled on the dwarf bench,
 * 99 % with the narrow key). A sample looks for a narrow walk first.
 *
 * Why it pays: a profile's samples meet few (ip, sp) pairs — the hot
 * loops' instructions on the same stacks — and most samples of a pair read
 * the same saved registers and return addresses. The memory is bounded:
 * when the walks fill MEMO_WORDS (or the hash slots are 70 % used), all
 * are forgotten and remembering starts afresh.
 */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "unwind-int.h"

#define MEMO_SLOTS (1u << 17)           /* hash slots (a power of two) */
#define MEMO_WORDS ((size_t)1 << 19)    /* 4 MiB of remembered walks at most */
#define MEMO_MAX_READS 1024             /* a walk reading more is not remembered */
#define MEMO_MAX_FRAMES 255
#define KEYED_SLOTS 4096                /* rules_keyed's answers kept (a power of two) */

/* The key registers (DWARF numbers): rbx, rbp, rsp, r12-r15, rip; the
 * narrow key's: rbp, rsp, rip. */
#define KEY_REGS ((1u << 3) | (1u << 6) | (1u << 7) | (1u << 12) | (1u << 13) | (1u << 14) | \
		  (1u << 15) | (1u << 16))
#define NARROW_REGS ((1u << 6) | (1u << 7) | (1u << 16))
#define ANY_REG UINT32_MAX      /* rules that may read any register (none found, a register > 16) */

/* A walk in memo: KEY_WORDS of key, then the counts word (reads, frames,
 * nofile), rc, beyond, the caller's maps_gen then, the reads (address,
 * value) and their ok bits (one word per 64), the frames (pc, act, map
 * start, map end, map pgoff, map path; start = end = 0 and path NULL: no
 * map there). */
enum { KEY_WORDS = 12, HEAD_WORDS = KEY_WORDS + 4, FRAME_WORDS = 6 };

/* A walk's parts: its reads' count, its frames' count, where its frames
 * start (after the reads and their ok bits) */
static size_t walk_nreads(const uint64_t *e) { return e[KEY_WORDS] & 0xffff; }
static size_t walk_npcs(const uint64_t *e) { return (e[KEY_WORDS] >> 16) & 0xffff; }
static size_t frames_at(size_t nreads) { return HEAD_WORDS + 2 * nreads + (nreads + 63) / 64; }

/* narrow: without rbx and r12-r15, and marked (the top bit of the frames
 * wanted) apart from a full key whose registers are 0 */
static void memo_key(const uw_ctx *u, const pd_sample *s, bool narrow, uint64_t *key)
{
	key[0] = u->sp->gen;
	key[1] = u->regs[16];
	key[2] = u->regs[7];
	key[3] = u->regs[6];
	key[4] = narrow ? 0 : u->regs[3];
	key[5] = narrow ? 0 : u->regs[12];
	key[6] = narrow ? 0 : u->regs[13];
	key[7] = narrow ? 0 : u->regs[14];
	key[8] = narrow ? 0 : u->regs[15];
	key[9] = u->stack_size;
	key[10] = s->stack_user_size;
	key[11] = u->want | (uint64_t)narrow << 63;
}

static size_t key_slot(const uint64_t *key)
{
	return (size_t)pf_hash_bytes(key, KEY_WORDS * sizeof(uint64_t), 0x6d656d6f) & (MEMO_SLOTS - 1);
}

/* ---- recalling -------------------------------------------------------------- */

/* Is addr in the map the walk met there (or in none, as then)? */
static bool same_map(uw_ctx *u, uint64_t addr, const uint64_t *fr)
{
	uw_map m;
	if (!u->find_map(u->arg, addr, &m))
		return fr[2] == 0 && fr[3] == 0 && fr[5] == 0;
	return m.start == fr[2] && m.end == fr[3] && m.pgoff == fr[4] && (uint64_t)(uintptr_t)m.path == fr[5];
}

/* Does sample u->s read what walk e read, in the maps e met? */
static bool walk_holds(uw_ctx *u, const uint64_t *e)
{
	size_t nreads = walk_nreads(e), npcs = walk_npcs(e);
	const uint64_t *reads = e + HEAD_WORDS, *okbits = reads + 2 * nreads;
	for (size_t i = 0; i < nreads; i++) {
		Dwarf_Word v = 0;
		bool ok = uw_read_word(u, reads[2 * i], &v);
		if (ok != ((okbits[i / 64] >> (i % 64)) & 1) || (ok && v != reads[2 * i + 1]))
			return false;
	}
	/* the maps the walk met are still the space's: its frames' too */
	if (u->maps_gen && e[KEY_WORDS + 3] == u->maps_gen)
		return true;
	const uint64_t *frames = e + frames_at(nreads);
	for (size_t i = 0; i < npcs; i++)
		if (!same_map(u, frames[i * FRAME_WORDS], frames + i * FRAME_WORDS))
			return false;
	return true;
}

/* u's walk becomes e's */
static int walk_apply(uw_ctx *u, const uint64_t *e, int *rc)
{
	size_t npcs = walk_npcs(e);
	if (PF_GROW(u->pcs, u->cap_pcs, npcs + 1) < 0)
		return -1;
	const uint64_t *frames = e + frames_at(walk_nreads(e));
	for (size_t i = 0; i < npcs; i++)
		u->pcs[i] = (struct uw_pc){ frames[i * FRAME_WORDS], frames[i * FRAME_WORDS + 1] != 0 };
	u->npcs = npcs;
	u->nofile = (e[KEY_WORDS] >> 32) & 1;
	*rc = (int)(int64_t)e[KEY_WORDS + 1];
	u->beyond = (size_t)e[KEY_WORDS + 2];
	u->stale = false;
	return 0;
}

bool memo_recall(uw_ctx *u, const pd_sample *s, int *rc)
{
	u->memo_checked = NULL;
	u->memo_slot[0] = u->memo_slot[1] = 0;
	if (u->memo_mode == UW_MEMO_OFF || !u->memo_slots)
		return false;
	for (int narrow = 1; narrow >= 0; narrow--) {
		uint64_t key[KEY_WORDS];
		memo_key(u, s, narrow, key);
		for (size_t i = key_slot(key); u->memo_slots[i]; i = (i + 1) & (MEMO_SLOTS - 1)) {
			const uint64_t *e = u->memo + (u->memo_slots[i] - 1);
			if (memcmp(e, key, sizeof(key)) != 0)
				continue;
			/* one walk a key: the one this sample's walk will
			 * replace when it does not hold */
			u->memo_slot[narrow] = i + 1;
			if (!walk_holds(u, e))
				break;
			u->stats.recalled++;
			if (u->memo_mode == UW_MEMO_CHECK) {
				u->memo_checked = e;    /* memo_end compares the walk with it */
				return false;
			}
			return walk_apply(u, e, rc) == 0;
		}
	}
	return false;
}

/* ---- remembering ------------------------------------------------------------ */

void memo_log(uw_ctx *u, uint64_t addr, bool ok, uint64_t value)
{
	if (u->nlog >= MEMO_MAX_READS || PF_GROW(u->log, u->cap_log, u->nlog + 1) < 0) {
		u->log_full = true;
		return;
	}
	u->log[u->nlog++] = (struct uw_read){ addr, value, ok };
}

void memo_begin(uw_ctx *u)
{
	u->nlog = 0;
	u->log_full = false;
	u->logging = u->memo_mode != UW_MEMO_OFF;
}

/* The registers the DWARF expression names (ANY_REG: one above rip) */
static uint32_t ops_regs(const Dwarf_Op *ops, size_t n)
{
	uint32_t regs = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned atom = ops[i].atom;
		uint64_t reg;
		if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31)
			reg = atom - DW_OP_reg0;
		else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31)
			reg = atom - DW_OP_breg0;
		else if (atom == DW_OP_regx || atom == DW_OP_bregx)
			reg = ops[i].number;
		else
			continue;
		if (reg >= 17)
			return ANY_REG;
		regs |= 1u << reg;
	}
	return regs;
}

/* The registers the rules at pc (.eh_frame, which libdwfl reads first:
 * the CFA and every register's) name. No CFI there (libdwfl would guess
 * from the frame pointer) is ANY_REG. */
static uint32_t rules_regs_at(uw_ctx *u, uint64_t pc)
{
	Dwfl_Module *mod = dwfl_addrmodule(u->sp->dwfl, pc);
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = mod ? dwfl_module_eh_cfi(mod, &bias) : NULL;
	Dwarf_Frame *frame;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
		return ANY_REG;
	Dwarf_Op *ops;
	size_t nops;
	uint32_t regs = dwarf_frame_cfa(frame, &ops, &nops) == 0 && nops ? ops_regs(ops, nops) : ANY_REG;
	for (int r = 0; regs != ANY_REG && r < 17; r++) {
		Dwarf_Op mem[3];
		if (dwarf_frame_register(frame, r, mem, &ops, &nops) != 0)
			regs = ANY_REG;
		else if (nops)
			regs |= ops_regs(ops, nops);
		/* undefined, or the same value: a copy, read only where a
		 * rule names the register */
	}
	free(frame);
	return regs;
}

/* rules_regs_at, its answers kept per (Dwfl, pc) */
static uint32_t rules_regs(uw_ctx *u, uint64_t pc)
{
	if (!u->keyed_at && !(u->keyed_at = pf_calloc_written(KEYED_SLOTS, sizeof(*u->keyed_at))))
		return ANY_REG;
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 52) & (KEYED_SLOTS - 1);
	struct uw_keyed *k = &u->keyed_at[i];
	if (k->gen != u->sp->gen || k->pc != pc)
		*k = (struct uw_keyed){ u->sp->gen, pc, rules_regs_at(u, pc) };
	return k->regs;
}

/* The registers the rules of u's walk name, in every frame. Frames after
 * the leaf are looked up one byte before their address as well (a return
 * address: libdwfl looks there unless the frame below was a signal frame). */
static uint32_t walk_regs(uw_ctx *u)
{
	uint32_t regs = 0;
	for (size_t i = 0; i < u->npcs && regs != ANY_REG; i++) {
		uint64_t pc = u->pcs[i].pc;
		regs |= rules_regs(u, pc);
		if (i && pc)
			regs |= rules_regs(u, pc - 1);
	}
	return regs;
}

static void memo_forget(uw_ctx *u)
{
	u->memo_len = 0;
	u->memo_used = 0;
	memset(u->memo_slots, 0, MEMO_SLOTS * sizeof(*u->memo_slots));
}

/* Is walk e the same as u's? */
static bool walk_same(const uw_ctx *u, const uint64_t *e, int rc)
{
	size_t npcs = walk_npcs(e);
	if (npcs != u->npcs || (int)(int64_t)e[KEY_WORDS + 1] != rc || e[KEY_WORDS + 2] != u->beyond ||
	    ((e[KEY_WORDS] >> 32) & 1) != u->nofile)
		return false;
	const uint64_t *frames = e + frames_at(walk_nreads(e));
	for (size_t i = 0; i < npcs; i++)
		if (frames[i * FRAME_WORDS] != u->pcs[i].pc || (frames[i * FRAME_WORDS + 1] != 0) != u->pcs[i].act)
			return false;
	return true;
}

void memo_end(uw_ctx *u, const pd_sample *s, int rc, bool keep)
{
	u->logging = false;
	if (u->memo_checked) {
		if (!walk_same(u, u->memo_checked, rc))
			u->stats.mismatched++;
		u->memo_checked = NULL;
		return;
	}
	if (!keep || u->memo_mode == UW_MEMO_OFF || u->log_full || u->npcs > MEMO_MAX_FRAMES)
		return;
	uint32_t regs = walk_regs(u);
	if (regs & ~KEY_REGS)
		return;
	bool narrow = !(regs & ~NARROW_REGS);
	size_t nreads = u->nlog, words = frames_at(nreads) + FRAME_WORDS * u->npcs;
	if (!u->memo_slots) {
		u->memo_slots = pf_calloc_written(MEMO_SLOTS, sizeof(*u->memo_slots));
		if (!u->memo_slots)
			return;
	}
	if (u->memo_len + words > MEMO_WORDS || (u->memo_used + 1) * 10 > (size_t)MEMO_SLOTS * 7) {
		memo_forget(u);
		u->memo_slot[0] = u->memo_slot[1] = 0;
	}
	if (u->memo_len + words > u->memo_cap) {
		size_t cap = u->memo_cap ? u->memo_cap : 4096;
		while (cap < u->memo_len + words)
			cap *= 2;
		uint64_t *m = realloc(u->memo, cap * sizeof(*m));
		if (!m)
			return;
		u->memo = m;
		u->memo_cap = cap;
	}
	uint64_t *e = u->memo + u->memo_len;
	memo_key(u, s, narrow, e);
	e[KEY_WORDS] = nreads | (uint64_t)u->npcs << 16 | (uint64_t)u->nofile << 32;
	e[KEY_WORDS + 1] = (uint64_t)(int64_t)rc;
	e[KEY_WORDS + 2] = u->beyond;
	e[KEY_WORDS + 3] = u->maps_gen;
	uint64_t *reads = e + HEAD_WORDS, *okbits = reads + 2 * nreads;
	memset(okbits, 0, (nreads + 63) / 64 * sizeof(uint64_t));
	for (size_t i = 0; i < nreads; i++) {
		reads[2 * i] = u->log[i].addr;
		reads[2 * i + 1] = u->log[i].value;
		if (u->log[i].ok)
			okbits[i / 64] |= 1ull << (i % 64);
	}
	uint64_t *frames = e + frames_at(nreads);
	for (size_t i = 0; i < u->npcs; i++) {
		uint64_t pc = u->pcs[i].pc, *fr = frames + i * FRAME_WORDS;
		uw_map m;
		fr[0] = pc;
		fr[1] = u->pcs[i].act;
		if (u->find_map(u->arg, pc, &m)) {
			/* the walk looked one byte before a return address too
			 * (module_at): that byte must be in the same map */
			if (pc && (pc - 1 < m.start || pc - 1 >= m.end))
				return;
			fr[2] = m.start;
			fr[3] = m.end;
			fr[4] = m.pgoff;
			fr[5] = (uint64_t)(uintptr_t)m.path;
		} else {
			uw_map m1;
			if (pc && u->find_map(u->arg, pc - 1, &m1))
				return;
			fr[2] = fr[3] = fr[4] = fr[5] = 0;
		}
	}
	/* the walk's first look (walk: module_at of the registers' ip) is
	 * the leaf's frame, ip itself */
	if (!u->npcs || u->pcs[0].pc != u->regs[16])
		return;
	if (u->memo_slot[narrow]) {
		/* the key's walk, which did not hold for this sample: replaced
		 * (the most recent walk of a key is the likeliest to recur) */
		u->memo_slots[u->memo_slot[narrow] - 1] = (uint32_t)(u->memo_len + 1);
	} else {
		size_t i = key_slot(e);
		while (u->memo_slots[i])
			i = (i + 1) & (MEMO_SLOTS - 1);
		u->memo_slots[i] = (uint32_t)(u->memo_len + 1);
		u->memo_used++;
	}
	u->memo_len += words;
}

void memo_free(uw_ctx *u)
{
	free(u->memo);
	free(u->memo_slots);
	free(u->log);
	free(u->keyed_at);
}
