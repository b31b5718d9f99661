/* unwind.c — DWARF unwinding of perf samples' user stacks with libdwfl
 * (include/proff/unwind.h).
 *
 * libdwfl does the CFI work: a Dwfl per address space, attached to a
 * "process" whose one thread's registers come from the sample being
 * unwound and whose memory is the sample's stack copy (else the mapped
 * file). Modules are reported the way perf's libdw backend reports them, as
 * the walk reaches their code (a frame's module must be known before libdwfl
 * unwinds from it), but the Dwfl lives on across samples of the same space:
 * opening the ELF files and their CFI once per process instead of once per
 * sample is most of the speed. Each frame checks the module libdwfl knows at
 * its address against the caller's map there; a difference (a library
 * unmapped and another mapped at its place) ends that Dwfl and the sample is
 * unwound again with a fresh one.
 *
 * The frames follow perf 6.1's report (which unwinds with libunwind here):
 * the leaf is the registers' ip, every caller is its return address minus
 * one unless the frame is a signal frame (then its address as it is), at
 * most max_frames of them, and the last word of the stack copy is not read
 * (perf's bounds check excludes it).
 */
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proff/unwind.h"
#include "proff/util.h"
#include "unwind-int.h"

/* DWARF register n (x86-64 psABI: rax rdx rcx rbx rsi rdi rbp rsp r8-r15 rip) */
static const uint8_t dwarf_to_perf[17] = {
	PR_AX, PR_DX, PR_CX, PR_BX, PR_SI, PR_DI, PR_BP, PR_SP,
	PR_R8, PR_R9, PR_R10, PR_R11, PR_R12, PR_R13, PR_R14, PR_R15, PR_IP,
};


/* ---- ELF files ------------------------------------------------------------ */

static void file_free(uw_file *f)
{
	if (!f)
		return;
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->loads);
	free(f->path);
	free(f);
}

static void file_open(uw_file *f)
{
	f->fd = pf_open_regular(f->path);
	if (f->fd < 0)
		return;
	f->elf = elf_begin(f->fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	size_t phnum;
	if (!f->elf || elf_kind(f->elf) != ELF_K_ELF || !gelf_getehdr(f->elf, &eh) ||
	    eh.e_machine != EM_X86_64 || elf_getphdrnum(f->elf, &phnum) != 0)
		goto bad;
	f->exec = eh.e_type == ET_EXEC;
	f->loads = pf_calloc(phnum ? phnum : 1, sizeof(*f->loads));
	if (!f->loads)
		goto bad;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(f->elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->loads[f->nloads++] = ph;
	}
	if (!f->nloads)
		goto bad;
	f->raw = (const uint8_t *)elf_rawfile(f->elf, &f->rawsize);
	return;
bad:
	if (f->elf)
		elf_end(f->elf);
	f->elf = NULL;
	close(f->fd);
	f->fd = -1;
}

/* The file at path, opened once (NULL: no memory; fd -1: not an ELF of
 * this machine). */
static uw_file *file_get(uw_ctx *u, const char *path)
{
	uint64_t h = pf_hash_bytes(path, strlen(path), 0x75770000);
	uint64_t v;
	if (pf_map64_get(&u->file_index, h, &v)) {
		for (size_t i = v - 1; i < u->nfiles; i++)
			if (strcmp(u->files[i]->path, path) == 0)
				return u->files[i];
	}
	if (u->nfiles >= UW_MAX_FILES)
		return NULL;
	if (PF_GROW(u->files, u->cap_files, u->nfiles + 1) < 0)
		return NULL;
	uw_file *f = calloc(1, sizeof(*f));
	if (!f || !(f->path = strdup(path))) {
		free(f);
		return NULL;
	}
	f->fd = -1;
	file_open(f);
	uint64_t *slot = pf_map64_upsert(&u->file_index, h, NULL);
	if (!slot) {
		file_free(f);
		return NULL;
	}
	if (!*slot)
		*slot = u->nfiles + 1;
	u->files[u->nfiles++] = f;
	return f;
}

/* The load bias of file f mapped at [m->start, ...) from offset m->pgoff:
 * the segment holding that offset gives vaddr = offset - p_offset + p_vaddr. */
static bool file_bias(const uw_file *f, const uw_map *m, uint64_t *bias)
{
	if (f->exec) {
		*bias = 0;
		return true;
	}
	for (size_t i = 0; i < f->nloads; i++) {
		const GElf_Phdr *ph = &f->loads[i];
		uint64_t align = ph->p_align > 1 ? ph->p_align : 1;
		uint64_t off = ph->p_offset & ~(align - 1);
		if (m->pgoff >= off && m->pgoff < ph->p_offset + ph->p_filesz) {
			*bias = m->start - m->pgoff + ph->p_offset - ph->p_vaddr;
			return true;
		}
	}
	return false;
}

/* ---- Dwfl callbacks -------------------------------------------------------- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl; (void)dwfl_arg; (void)thread_argp;
	return 0;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl; (void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

/* What a read outside the stack copy finds (read_outside). */
enum uw_got { UR_READ, UR_ZERO, UR_NONE };

/* 8 bytes at addr outside the stack copy, as perf's unwinder reads them:
 * from the mapped file holding it (UR_READ); where a map holds addr but
 * has no file to read it from (the stack above or below the copy, the
 * heap, anonymous memory, a file's .bss or a file not found), perf's
 * access_dso_mem fails with a positive code that libunwind takes for
 * success, and access_mem's 0 is the value (UR_ZERO); no map there:
 * an error (UR_NONE). */
static enum uw_got read_outside(uw_ctx *u, uint64_t addr, Dwarf_Word *out)
{
	uw_map m;
	if (!u->find_map(u->arg, addr, &m))
		return UR_NONE;
	*out = 0;
	if (!m.path)
		return UR_ZERO;
	uw_file *f = file_get(u, m.path);
	if (!f || f->fd < 0 || !f->raw)
		return UR_ZERO;
	uint64_t off = addr - m.start + m.pgoff;
	if (off > f->rawsize || f->rawsize - off < 8)
		return UR_ZERO;
	memcpy(out, f->raw + off, 8);
	return UR_READ;
}

/* 8 bytes at addr of the stack copy, else read_outside's */
static enum uw_got read_word(uw_ctx *u, uint64_t addr, Dwarf_Word *result)
{
	if (addr + 8 < addr)
		return UR_NONE;
	/* perf reads the copy for addr + 8 < end only: its last word is out */
	if (addr < u->stack_lo || addr + 8 >= u->stack_lo + u->stack_size)
		return read_outside(u, addr, result);
	memcpy(result, (const uint8_t *)u->s->stack_user + (addr - u->stack_lo), 8);
	return UR_READ;
}

bool uw_read_word(uw_ctx *u, uint64_t addr, Dwarf_Word *result)
{
	return read_word(u, addr, result) != UR_NONE;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	(void)dwfl;
	uw_ctx *u = arg;
	enum uw_got r = read_word(u, addr, result);
	bool ok = r != UR_NONE;
	if (r != UR_READ && addr >= u->stack_lo && addr + 8 > addr)
		u->beyond = u->npcs + 1;
	/* the last read of a frame's unwinding is its return address's (the
	 * CFA's reads come first, libdwfl restores rip last) */
	u->step_reads++;
	u->step_last = ok ? *result : 1;
	if (u->logging)
		memo_log(u, addr, ok, ok ? *result : 0);
	return ok;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	uw_ctx *u = arg;
	return dwfl_thread_state_registers(thread, 0, 17, (const Dwarf_Word *)u->regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};


/* ---- address spaces -------------------------------------------------------- */

static void space_clear(uw_space *sp)
{
	if (sp->dwfl)
		dwfl_end(sp->dwfl);
	sp->dwfl = NULL;
	sp->nmods = 0;
}

static bool space_start(uw_ctx *u, uw_space *sp)
{
	space_clear(sp);
	sp->gen = ++u->gen;
	sp->dwfl = dwfl_begin(&u->dwfl_callbacks);
	if (!sp->dwfl)
		return false;
	if (!dwfl_attach_state(sp->dwfl, u->machine_elf, 1, &thread_callbacks, u)) {
		space_clear(sp);
		return false;
	}
	return true;
}

/* The space of key: found, or made in a free slot or the least recently
 * used one's. NULL: no Dwfl could be made. */
static uw_space *space_get(uw_ctx *u, uint64_t key)
{
	uw_space *lru = NULL;
	u->clock++;
	for (size_t i = 0; i < u->nspaces; i++) {
		uw_space *sp = &u->spaces[i];
		if (sp->key == key && sp->dwfl) {
			sp->used = u->clock;
			return sp;
		}
		if (!lru || sp->used < lru->used)
			lru = sp;
	}
	uw_space *sp = u->nspaces < UW_MAX_SPACES ? &u->spaces[u->nspaces++] : lru;
	sp->key = key;
	sp->used = u->clock;
	return space_start(u, sp) ? sp : NULL;
}

/* The module at pc is the caller's map's file at its bias, reported now if
 * libdwfl has none there. False when the module libdwfl knows there is
 * another (u->stale: the space must start afresh). */
static bool module_at_map(uw_ctx *u, uint64_t pc, const uw_map *mp);

static bool module_at(uw_ctx *u, uint64_t pc)
{
	for (unsigned i = 0; i < u->nseen; i++)
		if (pc >= u->seen[i].start && pc < u->seen[i].end)
			return true;
	uw_map m;
	if (!u->find_map(u->arg, pc, &m))
		return true;
	bool ok = module_at_map(u, pc, &m);
	if (ok && !u->stale) {
		unsigned k = u->nseen < 8 ? u->nseen++ : (unsigned)(pc >> 4) % 8;
		u->seen[k].start = m.start;
		u->seen[k].end = m.end;
	}
	return ok;
}

static bool module_at_map(uw_ctx *u, uint64_t pc, const uw_map *mp)
{
	uw_space *sp = u->sp;
	uw_map m = *mp;
	if (!m.path)
		return true;        /* anonymous code: libdwfl has no CFI there either */
	uw_file *f = file_get(u, m.path);
	uint64_t bias;
	if (!f || f->fd < 0 || !file_bias(f, &m, &bias)) {
		u->nofile = true;
		return true;
	}
	Dwfl_Module *mod = dwfl_addrmodule(sp->dwfl, pc);
	if (mod) {
		for (size_t i = 0; i < sp->nmods; i++)
			if (sp->mods[i].mod == mod)
				return (sp->mods[i].file == f && sp->mods[i].bias == bias) || !(u->stale = true);
		u->stale = true;    /* not one of ours: cannot happen */
		return false;
	}
	if (PF_GROW(sp->mods, sp->cap_mods, sp->nmods + 1) < 0)
		return true;
	int fd = dup(f->fd);
	if (fd < 0)
		return true;
	mod = dwfl_report_elf(sp->dwfl, f->path, f->path, fd, bias, true);
	if (!mod) {
		close(fd);
		u->nofile = true;
		return true;
	}
	sp->mods[sp->nmods++] = (uw_mod){ mod, f, bias };
	if (dwfl_addrmodule(sp->dwfl, pc) != mod) {
		u->stale = true;    /* overlaps a module reported before */
		return false;
	}
	return true;
}

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	uw_ctx *u = arg;
	Dwarf_Addr pc;
	bool act;
	u->step_reads = 0;      /* the reads that unwind this frame follow (from asking for act on) */
	/* the pc first without asking whether it is an activation: asking
	 * unwinds the frame, and libdwfl must know its module before (it
	 * looks up the CFI of the call, one byte before a return address;
	 * without a module it guesses from rbp and keeps that guess) */
	if (!dwfl_frame_pc(state, &pc, NULL))
		return DWARF_CB_ABORT;
	if (!module_at(u, pc) || (pc && !module_at(u, pc - 1)))
		return DWARF_CB_ABORT;
	if (!dwfl_frame_pc(state, &pc, &act))
		return DWARF_CB_ABORT;
	if (PF_GROW(u->pcs, u->cap_pcs, u->npcs + 1) < 0)
		return DWARF_CB_ABORT;
	u->pcs[u->npcs] = (struct uw_pc){ pc, act };
	size_t k = u->npcs % 2;
	u->fmask[k] = 0;
	/* each dwfl_frame_reg costs an ebl call and, for a register libdwfl
	 * does not know (most of them above the leaf), a thread-local error:
	 * the walk's end (walk_on) needs only these, the others only when it
	 * goes on, which is rare (then the walk is taken again with all) */
	for (uint32_t want = u->all_regs ? (1u << 17) - 1 : UW_END_REGS; want; want &= want - 1) {
		unsigned r = (unsigned)__builtin_ctz(want);
		if (dwfl_frame_reg(state, r, &u->fregs[k][r]) == 0)
			u->fmask[k] |= 1u << r;
	}
	u->npcs++;
	return u->npcs >= u->want ? DWARF_CB_ABORT : DWARF_CB_OK;
}

/* libdwfl asks for a module's separate debug file when its .eh_frame ends a
 * walk (the outermost frame of every thread: clone3's undefined return
 * address) and then reads that file's .debug_frame, which says the same
 * there; opening and decompressing libc's debug file once per address
 * space was a tenth of a report's CPU. A module without .eh_frame still
 * gets its debug file's .debug_frame (libdwfl's standard search). */
static int find_debuginfo_for_cfi(Dwfl_Module *mod, void **userdata, const char *modname,
				  Dwarf_Addr base, const char *file_name,
				  const char *debuglink_file, GElf_Word debuglink_crc,
				  char **debuginfo_file_name)
{
	Dwarf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t shstrndx;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0) {
		for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
			GElf_Shdr shdr;
			const char *name;
			if (gelf_getshdr(scn, &shdr) && shdr.sh_type == SHT_PROGBITS &&
			    (name = elf_strptr(elf, shstrndx, shdr.sh_name)) && !strcmp(name, ".eh_frame"))
				return -1;
		}
	}
	return dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
					    debuglink_crc, debuginfo_file_name);
}

/* ---- the public part ------------------------------------------------------- */

uw_ctx *uw_new(int max_frames)
{
	uw_ctx *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->max_frames = max_frames > 0 ? max_frames : UW_DEFAULT_FRAMES;
	elf_version(EV_CURRENT);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)u->machine_img;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_CORE;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(Elf64_Ehdr);
	u->machine_elf = elf_memory((char *)u->machine_img, sizeof(u->machine_img));
	if (!u->machine_elf) {
		free(u);
		return NULL;
	}
	pf_map64_init(&u->file_index);
	u->dwfl_callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo_for_cfi,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &u->debuginfo_path,
	};
	return u;
}

void uw_free(uw_ctx *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nspaces; i++) {
		space_clear(&u->spaces[i]);
		free(u->spaces[i].mods);
	}
	for (size_t i = 0; i < u->nfiles; i++)
		file_free(u->files[i]);
	free(u->files);
	pf_map64_free(&u->file_index);
	elf_end(u->machine_elf);
	free(u->pcs);
	free(u->chain);
	memo_free(u);
	free(u);
}

bool uw_event_wants(const pd_attr *a)
{
	return (a->sample_type & PD_S_REGS_USER) && (a->sample_type & PD_S_STACK_USER) &&
	       a->sample_stack_user > 0;
}

const uw_stats *uw_get_stats(const uw_ctx *u) { return &u->stats; }

void uw_set_memo(uw_ctx *u, enum uw_memo mode) { u->memo_mode = mode; }

void uw_stats_add(uw_stats *a, const uw_stats *b)
{
	a->samples += b->samples;
	a->partial += b->partial;
	a->no_regs += b->no_regs;
	a->no_stack += b->no_stack;
	a->bad_abi += b->bad_abi;
	a->no_file += b->no_file;
	a->restarts += b->restarts;
	a->recalled += b->recalled;
	a->mismatched += b->mismatched;
}

/* The sample's register r (perf numbering), false when its mask lacks it. */
static bool sample_reg(const pd_sample *s, uint64_t mask, unsigned r, uint64_t *v)
{
	if (!(mask & (1ull << r)))
		return false;
	unsigned at = (unsigned)pf_popcount64(mask & ((1ull << r) - 1));
	if (at >= s->nr_regs_user)
		return false;
	*v = s->regs_user[at];
	return true;
}


/* libdwfl leaves a callee-saved register that a frame's CFI does not
 * mention undefined in its caller, where DWARF's x86-64 ABI (and perf's
 * libunwind) keep its value. A caller whose CFA is such a register then
 * ends the walk as if it were the outermost frame: the dynamic linker's
 * lazy-binding trampoline (_dl_runtime_resolve_xsavec, CFA = rbx + 32)
 * above _dl_fixup's first instructions. Then the walk starts again at the
 * last frame with the registers it has and those values, as long as that
 * makes progress. True when it did. */
/* One stretch of a walk: libdwfl's frames from the registers u->regs on,
 * into u->pcs from index from (frame_cb reading all registers of each
 * frame or only UW_END_REGS). */
static int walk_from(uw_ctx *u, size_t from, bool all_regs)
{
	u->npcs = from;
	u->all_regs = all_regs;
	return dwfl_getthread_frames(u->sp->dwfl, 1, frame_cb, u);
}

/* Of the registers regs, those that frame i's CFI row says its caller
 * finds in memory or computes (a rule with an expression: saved at CFA+N
 * and so on), in the CFI libdwfl unwinds frame i with (.eh_frame's FDE,
 * else .debug_frame's). Such a register missing in the caller is one whose
 * saved value could not be read, not one the CFI left out. */
static uint32_t cfi_saved(const uw_ctx *u, size_t i, uint32_t regs)
{
	Dwarf_Addr pc = u->pcs[i].act || !u->pcs[i].pc ? u->pcs[i].pc : u->pcs[i].pc - 1;
	Dwfl_Module *mod = dwfl_addrmodule(u->sp->dwfl, pc);
	if (!mod)
		return 0;
	Dwarf_Frame *frame = NULL;
	Dwarf_Addr bias;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0) {
		cfi = dwfl_module_dwarf_cfi(mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, pc - bias, &frame) != 0)
			return 0;
	}
	uint32_t saved = 0;
	for (uint32_t want = regs; want; want &= want - 1) {
		int r = __builtin_ctz(want);
		Dwarf_Op ops_mem[3], *ops;
		size_t nops;
		if (dwarf_frame_register(frame, r, ops_mem, &ops, &nops) == 0 && nops > 0)
			saved |= 1u << r;
	}
	free(frame);
	return saved;
}

/* Whether the walk goes on from its last frame (see above): the registers
 * to fill in, 0 when it does not. Only registers the previous frame's CFI
 * does not say where it saved: where it does and the saved value could not
 * be read (a leaf in its epilogue, past the pops, has its CFI still name
 * slots below the stack pointer, outside the stack copy), perf's libunwind
 * fails to read it and ends the walk there too. */
static uint32_t walk_fill(const uw_ctx *u, int rc)
{
	if (rc != 0 || u->npcs < 2 || u->npcs >= u->want || u->stale)
		return 0;
	size_t last = u->npcs - 1;
	uint32_t have = u->fmask[last % 2], prev = u->fmask[(last - 1) % 2];
	if (!(have & (1u << 16)) || !(have & (1u << 7)))
		return 0;
	uint32_t fill = UW_CALLEE_SAVED & ~have & prev;
	if (fill)
		fill &= ~cfi_saved(u, last - 1, fill);
	return fill;
}

/* *from: where the stretch that ended the walk began (u->regs its
 * registers). */
static bool walk_on(uw_ctx *u, int *rc, size_t *from)
{
	uint32_t fill = walk_fill(u, *rc);
	if (!fill)
		return false;
	if (!u->all_regs) {
		/* the last frame's other registers were not read: the same
		 * stretch again (the same frames), reading them all */
		struct uw_pc first = u->pcs[*from];
		*rc = walk_from(u, *from, true);
		if (*from && u->npcs > *from)
			u->pcs[*from].act = first.act;
		if (!(fill = walk_fill(u, *rc)))
			return false;
	}
	size_t last = u->npcs - 1;
	uint32_t have = u->fmask[last % 2];
	for (unsigned r = 0; r < 17; r++) {
		if (have & (1u << r))
			u->regs[r] = u->fregs[last % 2][r];
		else if (fill & (1u << r))
			u->regs[r] = u->fregs[(last - 1) % 2][r];
		else
			u->regs[r] = 0;
	}
	struct uw_pc top = u->pcs[last];
	*from = last;
	*rc = walk_from(u, last, false);
	bool moved = u->npcs > last + 1;
	if (u->npcs > last)
		u->pcs[last].act = top.act;     /* a return address still, not where it was interrupted */
	return moved;
}

/* Whether the walk ended on a return address of 0 read from memory (the
 * last frame's CFI has it saved, not undefined as at _start): libdwfl takes
 * that for the outermost frame, perf's libunwind for one more frame, which
 * perf keeps as 0 - 1 (0xffffffffffffffff), mostly a read above a stack
 * copy that ended below the stack's top (read_outside's 0). */
static bool zero_return(const uw_ctx *u, int rc)
{
	return rc == 0 && !u->stale && u->npcs && u->npcs < u->want && u->step_reads &&
	       u->step_last == 0 && cfi_saved(u, u->npcs - 1, 1u << 16);
}

/* One walk over the space's Dwfl: the frames into u->pcs. */
static int walk(uw_ctx *u)
{
	u->npcs = 0;
	u->stale = false;
	u->beyond = 0;
	u->nseen = 0;
	if (!module_at(u, u->regs[16]))
		return -1;
	uint64_t regs[17];
	memcpy(regs, u->regs, sizeof(regs));
	size_t from = 0;
	int rc = walk_from(u, 0, false);
	for (int i = 0; i < 4 && walk_on(u, &rc, &from); i++)
		;
	if (zero_return(u, rc) && PF_GROW(u->pcs, u->cap_pcs, u->npcs + 1) == 0)
		u->pcs[u->npcs++] = (struct uw_pc){ 0, false };
	memcpy(u->regs, regs, sizeof(regs));    /* a second walk (stale maps) starts from the sample's */
	return rc;
}

size_t uw_unwind(uw_ctx *u, uint64_t space, uint64_t maps_gen, const pd_sample *s, const pd_attr *a,
		 uw_find_map_fn find_map, void *arg, uint64_t *ips, size_t max, enum uw_status *st)
{
	*st = UW_NONE;
	if (!s->regs_user_abi || !s->regs_user || !s->stack_user || !max)
		return 0;
	u->stats.samples++;
	if (!s->stack_user_dyn_size || s->stack_user_dyn_size > s->stack_user_size) {
		/* the kernel could copy none of the stack: perf then keeps no
		 * user frame at all, not even the registers' ip */
		u->stats.no_stack++;
		*st = UW_NO_STACK;
		return 0;
	}
	if (s->regs_user_abi != 2) {        /* PERF_SAMPLE_REGS_ABI_64 */
		u->stats.bad_abi++;
		*st = UW_BAD_ABI;
		return 0;
	}
	uint64_t sp_val, ip_val;
	if (!sample_reg(s, a->sample_regs_user, PR_IP, &ip_val) ||
	    !sample_reg(s, a->sample_regs_user, PR_SP, &sp_val)) {
		u->stats.no_regs++;
		*st = UW_NO_REGS;
		return 0;
	}
	for (unsigned i = 0; i < 17; i++) {
		uint64_t v = 0;
		sample_reg(s, a->sample_regs_user, dwarf_to_perf[i], &v);
		u->regs[i] = v;
	}
	u->s = s;
	u->a = a;
	u->find_map = find_map;
	u->arg = arg;
	u->maps_gen = maps_gen;
	u->stack_lo = sp_val;
	u->stack_size = s->stack_user_dyn_size;     /* what the kernel could copy */
	if (max > (size_t)u->max_frames)
		max = (size_t)u->max_frames;
	u->want = max;
	u->nofile = false;
	int rc = -1;
	u->sp = space_get(u, space);
	if (u->sp && !memo_recall(u, s, &rc)) {
		memo_begin(u);
		rc = walk(u);
		bool restarted = u->stale;
		if (u->stale) {
			/* the space's maps changed: a fresh Dwfl, once */
			u->stats.restarts++;
			if (space_start(u, u->sp))
				rc = walk(u);
			else
				rc = -1, u->npcs = 0;
		}
		if (u->stale)
			u->npcs = 0;
		memo_end(u, s, rc, !restarted && !u->stale);
	}
	if (u->nofile)
		u->stats.no_file++;
	/* the leaf is the registers' ip, even where nothing could be walked */
	size_t n = 0;
	ips[n++] = ip_val;
	for (size_t i = 1; i < u->npcs && n < max; i++) {
		/* a caller's return address minus one, unless the frame is a
		 * signal frame (the frame after it is then an activation) */
		bool signal = i + 1 < u->npcs && u->pcs[i + 1].act;
		uint64_t ip = signal ? u->pcs[i].pc : u->pcs[i].pc - 1;
		ips[n++] = ip;      /* a pc 0 is zero_return's: perf's 0 - 1 */
	}
	/* A walk that ends in an error is mostly the normal end of a stack
	 * whose outermost code marks no end in its CFI (the dynamic linker's
	 * _start): libdwfl then reads an argument as a return address. It is
	 * an early stop when it wanted stack beyond a copy that the requested
	 * size cut (a copy shorter than requested reached the stack's top, and
	 * what lies above is no frame). Any such read counts, not only the
	 * last step's: libdwfl goes on after a register it could not restore,
	 * with guesses. */
	bool cut = s->stack_user_dyn_size >= s->stack_user_size;
	bool complete = (rc == DWARF_CB_ABORT && u->npcs >= u->want) || !u->beyond || !cut;
	*st = complete ? UW_DONE : UW_PARTIAL;
	if (!complete)
		u->stats.partial++;


	return n;
}

long uw_sample_chain(uw_ctx *u, uint64_t space, uint64_t maps_gen, const pd_sample *s, const pd_attr *a,
		     uw_find_map_fn find_map, void *arg, const uint64_t **out)
{
	size_t rec = s->callchain ? (size_t)s->nr_callchain : 0;
	size_t max = (size_t)u->max_frames;
	if (PF_GROW(u->chain, u->cap_chain, rec + 1 + max) < 0)
		return -1;
	enum uw_status st;
	size_t n = uw_unwind(u, space, maps_gen, s, a, find_map, arg, u->chain + rec + 1, max, &st);
	if (!n)
		return 0;
	if (rec)
		memcpy(u->chain, s->callchain, rec * sizeof(uint64_t));
	u->chain[rec] = PD_CONTEXT_USER;
	if (u->chain[rec + n] == UINT64_MAX)
		u->chain[rec + n] = UW_CHAIN_ZERO_RETURN;
	*out = u->chain;
	return (long)(rec + 1 + n);
}
