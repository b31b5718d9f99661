/* profile.c — loading a perf.data file into the profile model.
 *
 * The records arrive in time order from the reader. Side-band records
 * (COMM, FORK, EXIT, MMAP, MMAP2) maintain threads and per-process map
 * groups in the process model (machine.c), so each sample sees the maps and
 * comm of its moment. A sample's
 * callchain is interned twice:
 *   1. as raw ips in its map group (same ips + same maps = same stack), which
 *      makes the common case one hash lookup per sample (the keys packed:
 *      varints, and differences between neighbouring frames);
 *   2. new raw stacks are resolved ip by ip into locations (dso, map address),
 *      each location symbolized once, and the frames are inserted into the
 *      stack trie.
 * A sample without callchain skips the raw stacks: its ip goes straight to
 * its location. A small direct-mapped cache of (maps, ip) -> location sits
 * in front of the map search and the location table.
 * Samples are then aggregated by (event, pid, tid, comm, cpu, stack), found
 * through their stack node; with merge_threads, by (event, stack) only.
 *
 * Around it: profile-split.c (one large file on two threads),
 * profile-unwind.c (dwarf callchains), profile-warnings.c (what a load could
 * not read), profile-free.c (the state released, the profile freed),
 * time-spec.c (--time), srcline.c (source lines of locations).
 */
#include "proff/profile.h"
#include "proff/formats.h"
#include "proff/perfdata.h"
#include "proff/unwind.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "model-int.h"
#include "profile-int.h"

void pf_load_opts_init(pf_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->use_callchain = true;
	o->branch_history_max_stack = -1;
}

int prof_oom(pf_profile *p)
{
	return proff_err_set(p->priv->err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
}

static int64_t intern(pf_profile *p, const char *s)
{
	return pf_strtab_intern(&p->strs, s, strlen(s));
}

/* ---- dsos ---------------------------------------------------------------- */

/* the dso of a mapped file (machine.c's registry appends to p->dsos) */
static uint32_t get_dso(pf_profile *p, const char *filename, int cpumode)
{
	return pf_machine_dso(&p->priv->m, filename, cpumode, NULL, 0);
}

sym_dso *prof_dso_sd(pf_profile *p, uint32_t dso)
{
	pf_dso *d = &p->dsos[dso];
	if (!d->sd && p->syms_ctx && d->kind == SYM_DSO_MODULE && d->has_kmod_start)
		d->sd = sym_dso_get_kmodule(p->syms_ctx, pf_str(p, d->long_name),
					    d->build_id_size ? d->build_id : NULL, d->build_id_size, d->kmod_start);
	else if (!d->sd && p->syms_ctx && d->kind != SYM_DSO_ANON)
		d->sd = sym_dso_get(p->syms_ctx, pf_str(p, d->long_name),
				    d->build_id_size ? d->build_id : NULL, d->build_id_size, d->kind);
	return d->sd;
}

/* ---- threads and maps ------------------------------------------------------- */

/* The thread of (pid, tid) (machine.h: the last one found inline) */
static inline pthread_ *find_thread(pf_profile *p, uint32_t pid, uint32_t tid, bool create)
{
	return pf_machine_thread(&p->priv->m, pid, tid, create);
}

static inline const pmap *mg_find(const mgroup *g, uint64_t addr)
{
	return pf_mgroup_find(g, addr);
}

/* ---- locations and the stack trie ---------------------------------------------- */

static char level_of(int cpumode)
{
	switch (cpumode) {
	case PD_CPUMODE_KERNEL: return 'k';
	case PD_CPUMODE_GUEST_KERNEL: return 'g';
	case PD_CPUMODE_GUEST_USER: return 'u';
	case PD_CPUMODE_HYPERVISOR: return 'H';
	default: return '.';
	}
}

#define LOC_FINAL 0x80000000u     /* in a loc_tab value: see loc_get */

/* The location (dso, addr) seen at runtime ip: found, or made with the
 * symbol looked up (lookup) or the one given (a merged half's location). */
uint32_t prof_loc_intern(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip, char level,
			   bool lookup, uint32_t sym)
{
	struct pf_profile_priv *pr = p->priv;
	int inserted;
	uint32_t *slot = pair_table_find(&pr->loc_tab, prof_loc_key(dso, addr), addr, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted) {
		/* LOC_FINAL: resolved to a symbol, or no map: the same location
		 * for every ip (known without reading the location) */
		if (*slot & LOC_FINAL)
			return *slot & ~LOC_FINAL;
		uint32_t id = *slot;
		if (p->locs[id].ip == ip)
			return id;
		/* an unresolved location met at another runtime ip (another
		 * process's mapping): keep one location per raw ip */
		slot = pair_table_find(&pr->loc_tab, dso | 0x80000000u, ip, 1, &inserted);
		if (!slot)
			return PF_NONE;
		if (!inserted)
			return *slot;
		if (PF_GROW(p->locs, p->cap_locs, p->nr_locs + 1) < 0)
			return PF_NONE;
		uint32_t nid = (uint32_t)p->nr_locs;
		*slot = nid;
		p->locs[p->nr_locs++] = p->locs[id];
		p->locs[nid].ip = ip;
		return nid;
	}
	if (PF_GROW(p->locs, p->cap_locs, p->nr_locs + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)p->nr_locs;
	*slot = id;     /* set before anything else can rehash the table */
	pf_loc *l = &p->locs[p->nr_locs++];
	l->dso = dso;
	l->sym = lookup ? PF_NONE : sym;
	l->addr = addr;
	l->ip = ip;
	l->level = level;
	l->srcline = PF_NONE;
	if (lookup && dso != PF_NONE) {
		sym_dso *sd = prof_dso_sd(p, dso);
		sym_info si;
		/* a module's symbols are at runtime addresses (kmod_map_addr) */
		uint64_t at = p->dsos[dso].kind == SYM_DSO_MODULE && p->dsos[dso].has_kmod_start ? ip : addr;
		if (sd && sym_lookup(sd, at, &si)) {
			uint32_t *ss = pair_table_find(&pr->sym_tab, dso, si.start, 1, &inserted);
			if (!ss)
				return PF_NONE;
			if (inserted) {
				int64_t nid = intern(p, si.name ? si.name : "");
				if (nid < 0 || PF_GROW(p->syms, p->cap_syms, p->nr_syms + 1) < 0)
					return PF_NONE;
				p->syms[p->nr_syms] = (pf_sym){ dso, (uint32_t)nid, si.start, si.end };
				*ss = (uint32_t)p->nr_syms++;
			}
			p->locs[id].sym = *ss;
		}
	}
	if (p->locs[id].sym != PF_NONE || dso == PF_NONE) {
		/* the slot again: nothing above touched the location table */
		slot = pair_table_find(&pr->loc_tab, prof_loc_key(dso, addr), addr, 0, NULL);
		if (slot)
			*slot = id | LOC_FINAL;
	}
	return id;
}

/* A kernel module's map address of ip, as perf's module map gives it: the
 * offset from the module's start, plus the .ko's .text file offset once its
 * ELF is read (kmodule.c). Its symbols keep runtime addresses (lookups take
 * the ip); the map address is what a row without a symbol shows. */
static uint64_t kmod_map_addr(pf_profile *p, uint32_t dso, uint64_t ip)
{
	const pf_dso *d = &p->dsos[dso];
	if (!d->has_kmod_start || ip < d->kmod_start)
		return ip;
	sym_dso *sd = prof_dso_sd(p, dso);
	return ip - d->kmod_start + (sd ? sym_dso_kmod_pgoff(sd) : 0);
}

/* The location (dso, addr) — addr in map-address space — seen at runtime ip,
 * symbolized once when new. */
static uint32_t loc_get(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip, char level)
{
	return prof_loc_intern(p, dso, addr, ip, level, true, PF_NONE);
}

/* The map group an address of this cpumode is looked up in: the kernel's
 * for kernel addresses, else the thread's process's (PF_NONE: no thread). */
static inline uint32_t mg_for(const struct pf_profile_priv *pr, const pthread_ *t, int cpumode)
{
	if (cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL)
		return pr->m.kernel_mg;
	return t ? t->mg : PF_NONE;
}

static inline size_t loc_cache_slot(uint64_t ip, uint32_t g)
{
	return pf_hash64(ip ^ ((uint64_t)g << 40)) & (LOC_CACHE_N - 1);
}

/* The child of parent at loc, made if new; h = its hash */
static uint32_t node_child_h(pf_profile *p, uint32_t parent, uint32_t loc, uint32_t h)
{
	struct pf_profile_priv *pr = p->priv;
	/* room first: every slot's node has its hash when the table grows */
	if (PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0 ||
	    PF_GROW(pr->phash, pr->cap_phash, p->nr_nodes + 1) < 0)
		return PF_NONE;
	int inserted;
	uint32_t *slot = u32x2_table_find_h(&pr->node_tab, parent, loc, h, pr->phash, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	uint32_t id = (uint32_t)p->nr_nodes++;
	p->nodes[id] = (pf_node){ parent, loc, p->nodes[parent].depth + 1 };
	pr->phash[id] = h;
	*slot = id;
	return id;
}

uint32_t prof_node_child(pf_profile *p, uint32_t parent, uint32_t loc)
{
	return node_child_h(p, parent, loc, trie_hash(parent ? p->priv->phash[parent] : 0, loc));
}

/* The node of a sample ip whose callchain was discarded: a child of the
 * root apart from the ordinary one of the same location (found under the
 * pseudo-parent key NOCHAIN_KEY), flagged in p->nochain. */
#define NOCHAIN_KEY 0xfffffffeu
uint32_t prof_nochain_node(pf_profile *p, uint32_t loc)
{
	struct pf_profile_priv *pr = p->priv;
	uint32_t id = (uint32_t)p->nr_nodes, h = trie_hash(NOCHAIN_KEY, loc);
	size_t old = p->cap_nochain;
	if (PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0 ||
	    PF_GROW(pr->phash, pr->cap_phash, p->nr_nodes + 1) < 0 ||
	    PF_GROW(p->nochain, p->cap_nochain, (size_t)id + 1) < 0)
		return PF_NONE;
	memset(p->nochain + old, 0, p->cap_nochain - old);
	int inserted;
	uint32_t *slot = u32x2_table_find_h(&pr->node_tab, NOCHAIN_KEY, loc, h, pr->phash, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	p->nodes[id] = (pf_node){ 0, loc, 1 };
	p->nochain[id] = 1;
	pr->phash[id] = h;
	p->nr_nodes++;
	*slot = id;
	return id;
}

/* a stack's frames whose trie slots are fetched ahead of the lookups */
#define TRIE_AHEAD 16

/* A frame of a stack being built whose location the cache did not hold:
 * its map's (dso, address), found first so the location table's slots of
 * all such frames are fetched before the first is looked up (a stack of a
 * process new to the loader misses the cache in most frames, and each
 * lookup in a table of 10^5 locations is a cache miss of its own). */
typedef struct frame_miss {
	uint64_t ip, addr;
	uint32_t at, dso, g, cpumode;
} frame_miss;

/* Does the kernel's symbol extent hold ip (perf's map__fixup_start/end of
 * the kernel map once kallsyms is loaded)? */
static bool in_kernel_extent(pf_profile *p, uint64_t ip)
{
	struct pf_profile_priv *pr = p->priv;
	if (pr->m.kernel_dso == PF_NONE)
		return false;
	if (pr->kext_state == 0) {
		sym_dso *sd = prof_dso_sd(p, pr->m.kernel_dso);
		pr->kext_state = sd && sym_dso_extent(sd, &pr->kext_lo, &pr->kext_hi) ? 1 : -1;
	}
	return pr->kext_state == 1 && ip >= pr->kext_lo && ip < pr->kext_hi;
}

/* The location cache's entry for (ip, cpumode) in the thread's maps (hot
 * ips repeat: a small direct-mapped cache of (maps, ip) -> location before
 * the map search and the location table), or, on a miss, PF_NONE with the
 * frame's map looked up into *fm and its table slot fetched. */
static uint32_t loc_cached(pf_profile *p, const pthread_ *t, int cpumode, uint64_t ip, frame_miss *fm)
{
	struct pf_profile_priv *pr = p->priv;
	uint32_t g = mg_for(pr, t, cpumode);
	uint32_t gen = g != PF_NONE ? pr->m.mgs[g].gen : 0;
	const loc_cache_ent *c = &pr->loc_cache[loc_cache_slot(ip, g)];
	if (c->ip == ip && c->mg == g && c->gen == gen && c->cpumode == (uint32_t)cpumode && c->loc != PF_NONE)
		return c->loc;
	/* a guest's address is not the host's: perf report finds no map for
	 * it (a machine of its own, with no maps, and filtered: HF_GUEST) */
	bool guest = cpumode == PD_CPUMODE_GUEST_KERNEL || cpumode == PD_CPUMODE_GUEST_USER;
	const pmap *m = g != PF_NONE && !guest ? mg_find(&pr->m.mgs[g], ip) : NULL;
	uint32_t dso = PF_NONE;
	uint64_t addr = ip;
	if (!m && !guest && g == pr->m.kernel_mg && in_kernel_extent(p, ip))
		dso = pr->m.kernel_dso;
	if (m) {
		dso = m->dso;
		if (p->dsos[dso].kind == SYM_DSO_MODULE)
			addr = kmod_map_addr(p, dso, ip);
		else if (p->dsos[dso].kind != SYM_DSO_KERNEL)
			addr = ip - m->start + m->pgoff;
	}
	*fm = (frame_miss){ ip, addr, 0, dso, g, (uint32_t)cpumode };
	if (pr->loc_tab.cap)
		__builtin_prefetch(&pr->loc_tab.s[pair_hash(dso, addr) & (pr->loc_tab.cap - 1)]);
	return PF_NONE;
}

/* A missed frame's location (made if new), into the cache */
static uint32_t loc_missed(pf_profile *p, const frame_miss *fm)
{
	struct pf_profile_priv *pr = p->priv;
	uint32_t l = loc_get(p, fm->dso, fm->addr, fm->ip, level_of((int)fm->cpumode));
	uint32_t gen = fm->g != PF_NONE ? pr->m.mgs[fm->g].gen : 0;
	pr->loc_cache[loc_cache_slot(fm->ip, fm->g)] = (loc_cache_ent){ fm->ip, fm->g, gen, l, fm->cpumode };
	return l;
}

/* The location of ip in the thread's maps (PF_NONE: out of memory) */
static uint32_t resolve_loc(pf_profile *p, const pthread_ *t, int cpumode, uint64_t ip)
{
	frame_miss fm;
	uint32_t l = loc_cached(p, t, cpumode, ip, &fm);
	return l != PF_NONE ? l : loc_missed(p, &fm);
}

uint32_t prof_resolve_loc(pf_profile *p, const pthread_ *t, int cpumode, uint64_t ip)
{
	return resolve_loc(p, t, cpumode, ip);
}

/* The missed frames' locations, in frame order (new ones are numbered as a
 * frame-by-frame resolution numbers them), into the cache and the stack's
 * scratch. -1: out of memory. */
static int locs_missed(pf_profile *p, const frame_miss *miss, size_t nmiss)
{
	for (size_t i = 0; i < nmiss; i++) {
		uint32_t l = loc_missed(p, &miss[i]);
		if (l == PF_NONE)
			return -1;
		p->priv->scratch_locs[miss[i].at] = l;
	}
	return 0;
}

/* Build the leaf node for a sample from its callchain (or its ip alone). */
static uint32_t build_stack(pf_profile *p, const pthread_ *t, const pd_sample *s, bool use_cc)
{
	struct pf_profile_priv *pr = p->priv;
	size_t n = 0, nmiss = 0;
	uint64_t nr = use_cc ? s->nr_callchain : 0;
	if (PF_GROW(pr->scratch_locs, pr->cap_scratch, (size_t)nr + 2) < 0 ||
	    PF_GROW(pr->scratch_miss, pr->cap_miss, (size_t)nr + 2) < 0)
		return PF_NONE;
	frame_miss *miss = pr->scratch_miss;
	/* a frame: its location from the cache, else a miss to look up below */
#define FRAME(mode, fip) do { \
		uint32_t l_ = loc_cached(p, t, (mode), (fip), &miss[nmiss]); \
		if (l_ == PF_NONE) \
			miss[nmiss++].at = (uint32_t)n; \
		pr->scratch_locs[n++] = l_; \
	} while (0)
	int max = pr->opts.max_stack;
	if (nr) {
		int cpumode = PD_CPUMODE_USER;
		bool first = true;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = s->callchain[i];
			if (ip == UW_CHAIN_ZERO_RETURN && pr->uw) {
				ip = UINT64_MAX;        /* the unwinder's frame: perf's 0 - 1 */
			} else if (ip >= PD_CONTEXT_MAX) {
				bool valid = true;
				switch (ip) {
				case PD_CONTEXT_HV: cpumode = PD_CPUMODE_HYPERVISOR; break;
				case PD_CONTEXT_KERNEL: cpumode = PD_CPUMODE_KERNEL; break;
				case PD_CONTEXT_USER: cpumode = PD_CPUMODE_USER; break;
				default: valid = false; break;
				}
				if (!valid) {
					/* an unknown context value (seen: -1 after a user
					 * frame; perf 6.1 knows no guest contexts either:
					 * a guest's chain is all dropped): the chain is
					 * corrupt, and perf discards all
					 * of it; the sample keeps its own ip, in a node of its
					 * own marked as having no callchain (after the
					 * locations of the frames before, as perf makes them) */
					if (locs_missed(p, miss, nmiss) < 0)
						return PF_NONE;
					uint32_t l = resolve_loc(p, t, s->cpumode, s->ip);
					return l == PF_NONE ? PF_NONE : prof_nochain_node(p, l);
				}
				continue;
			}
			if (first && ip != s->ip)
				/* chain does not start at the sample ip: keep the ip as leaf */
				FRAME(s->cpumode, s->ip);
			first = false;
			if (max > 0 && (int)n >= max)
				break;
			FRAME(cpumode, ip);
		}
	}
	if (n == 0)
		FRAME(s->cpumode, s->ip);
#undef FRAME
	if (locs_missed(p, miss, nmiss) < 0)
		return PF_NONE;
	/* insert root-first; the root side shared with the previous stack
	 * built (the same process, mostly) needs no trie lookups, and the
	 * rest's slots are fetched TRIE_AHEAD frames ahead (trie_hash) */
	if (PF_GROW(pr->path_locs, pr->cap_path, n) < 0 ||
	    PF_GROW(pr->path_nodes, pr->cap_path_nodes, n) < 0 ||
	    PF_GROW(pr->path_hash, pr->cap_path_hash, n) < 0)
		return PF_NONE;
	uint32_t node = 0, h = 0;
	size_t d = 0;
	for (; d < n && d < pr->path_len && pr->path_locs[d] == pr->scratch_locs[n - 1 - d]; d++) {
		node = pr->path_nodes[d];
		h = pr->path_hash[d];
	}
	pr->path_len = d;         /* deeper entries belong to another path */
	for (size_t k = d; k < n; k++) {
		h = trie_hash(h, pr->scratch_locs[n - 1 - k]);
		pr->path_hash[k] = h;
		if (k < d + TRIE_AHEAD)
			trie_prefetch(pr, h);
	}
	for (; d < n; d++) {
		if (d + TRIE_AHEAD < n)
			trie_prefetch(pr, pr->path_hash[d + TRIE_AHEAD]);
		uint32_t l = pr->scratch_locs[n - 1 - d];
		node = node_child_h(p, node, l, pr->path_hash[d]);
		if (node == PF_NONE) {
			pr->path_len = 0;
			return PF_NONE;
		}
		pr->path_locs[d] = l;
		pr->path_nodes[d] = node;
		pr->path_len = d + 1;
	}
	pr->path_len = n;
	return node;
}

/* A raw-stack key is a sequence of 32-bit words; its hash folds them in
 * order, 32 bytes at a time into four lanes (each a multiply chain of its
 * own, so the four run side by side: one chain over a 40-frame key was a
 * third of the loader's per-sample step), then the rest into one (stack_key
 * and the table's rehash use this one function). */
static inline uint64_t key_hash(const uint8_t *k, size_t klen)
{
	const uint64_t m = 0x9e3779b97f4a7c15ull;
	uint64_t h = 0x243f6a8885a308d3ull ^ klen;
	size_t i = 0;
	if (klen >= 32) {
		uint64_t l0 = h, l1 = 0x13198a2e03707344ull, l2 = 0xa4093822299f31d0ull, l3 = 0x082efa98ec4e6c89ull;
		for (; i + 32 <= klen; i += 32) {
			uint64_t w[4];
			memcpy(w, k + i, 32);
			l0 = (l0 ^ w[0]) * m;   /* a bijection of each lane per word */
			l1 = (l1 ^ w[1]) * m;
			l2 = (l2 ^ w[2]) * m;
			l3 = (l3 ^ w[3]) * m;
		}
		h = (((l0 * m + l1) * m + l2) * m + l3);
	}
	for (; i + 8 <= klen; i += 8) {
		uint64_t w;
		memcpy(&w, k + i, 8);
		h = (h ^ w) * m;
	}
	if (i + 4 <= klen) {
		uint32_t w;
		memcpy(&w, k + i, 4);
		h = (h ^ w) * m;
	}
	return pf_hash64(h);
}

/* The raw-stack table: 8-byte slots (the hash's upper half as a tag and a
 * reference to the stack's record); growing rehashes from the records.
 * A record, in 1 MB chunks that never move:
 *   u32 leaf node, u32 hints[2] (the last two samples added with this raw
 *   stack: two threads of a process often alternate on the same stacks),
 *   u16 key length, the packed key; 4-byte aligned.
 * So a sample whose raw stack is known costs one probe, one record (key,
 * leaf and hint together) and, mostly, the hinted sample. */
typedef struct raw_slot { uint32_t tag, ref; } raw_slot;   /* ref 0 = empty */

#define RAW_CHUNK ((size_t)1 << 20)
#define RAW_BUDGET ((size_t)2 << 20)   /* bytes of records (pf_load_opts.stack_cache_bytes) */
#define RAW_HDR 14
static inline uint8_t *raw_rec(const struct pf_profile_priv *pr, uint32_t ref)
{
	ref--;
	return pr->raw_chunks[ref >> 18] + (size_t)(ref & 0x3ffff) * 4;
}

static inline size_t raw_klen(const uint8_t *r) { return (size_t)(r[12] | r[13] << 8); }

static int raw_grow(struct pf_profile_priv *pr)
{
	size_t ncap = pr->raw_cap ? pr->raw_cap * 2 : 1024;
	raw_slot *s = pf_calloc(ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < pr->raw_cap; i++) {
		uint32_t ref = pr->raw_s[i].ref;
		if (!ref)
			continue;
		const uint8_t *o = raw_rec(pr, ref);
		uint64_t h = key_hash(o + RAW_HDR, raw_klen(o));
		size_t j = h & (ncap - 1);
		while (s[j].ref)
			j = (j + 1) & (ncap - 1);
		s[j] = pr->raw_s[i];
	}
	free(pr->raw_s);
	pr->raw_s = s;
	pr->raw_cap = ncap;
	return 0;
}

/* The raw-stack table is a cache in front of the trie: when its records
 * would pass RAW_BUDGET bytes it starts afresh. Most of them belong to exited
 * processes (the map generation is part of the key) and a live process's
 * stacks repeat within a short window: on the bench profile a 2 MB
 * budget rebuilt 1.2 % more stacks than an unbounded table (14 MB),
 * in fewer instructions (no rehashing of a large table). */
static void raw_flush(struct pf_profile_priv *pr)
{
	memset(pr->raw_s, 0, pr->raw_cap * sizeof(*pr->raw_s));
	pr->raw_len = 0;
	for (size_t i = 1; i < pr->nraw_chunks; i++)
		free(pr->raw_chunks[i]);
	pr->nraw_chunks = 1;
	pr->raw_used = 0;
}

/* A new record of rsize bytes (a multiple of 4): its reference, or 0. */
static uint32_t raw_new_rec(struct pf_profile_priv *pr, size_t rsize)
{
	if (!pr->nraw_chunks || pr->raw_used + rsize > RAW_CHUNK) {
		if (pr->nraw_chunks >= (1u << 14) ||
		    PF_GROW(pr->raw_chunks, pr->cap_raw_chunks, pr->nraw_chunks + 1) < 0)
			return 0;
		uint8_t *c = malloc(RAW_CHUNK);
		if (!c)
			return 0;
		pr->raw_chunks[pr->nraw_chunks++] = c;
		pr->raw_used = 0;
	}
	uint32_t ref = (uint32_t)((pr->nraw_chunks - 1) << 18 | pr->raw_used / 4) + 1;
	pr->raw_used += rsize;
	return ref;
}

static inline pthread_ *thread_of(struct pf_profile_priv *pr, uint32_t idx)
{
	return idx == PF_NONE ? NULL : &pr->m.threads[idx];
}

/* The raw-stack key of a callchain sample and its hash: 32-bit words —
 * the map group and generation, the kernel's map generation, the cpumode
 * and frame count, the ip — then each frame as the (zigzag) difference to
 * the one before, which for frames of one stack fits in one word:
 * z < 2^31 is the word z << 1; a larger z is the word 1 and z's two
 * halves. Given the frame count the words decode one way only, so equal
 * keys are equal stacks. */
static int stack_key(pf_profile *p, const pthread_ *t, pend_sample *ps)
{
	struct pf_profile_priv *pr = p->priv;
	const pd_sample *s = &ps->s;
	bool use_cc = pr->opts.use_callchain && s->callchain;
	uint64_t nr = use_cc ? s->nr_callchain : 0;
	ps->keyed = false;
	if (!nr || nr > 6000)
		return 0;
	if (PF_GROW(ps->key, ps->cap_key, (size_t)nr * 12 + 24 + RAW_HDR) < 0)
		return -1;
	uint32_t mg = t ? t->mg : PF_NONE;
	uint32_t gen = mg != PF_NONE ? pr->m.mgs[mg].gen : 0;
	uint32_t kgen = pr->m.mgs[pr->m.kernel_mg].gen;
	uint8_t *k = ps->key + RAW_HDR, *e = k;
#define PUT_WORD(x) do { uint32_t w_ = (uint32_t)(x); memcpy(e, &w_, 4); e += 4; } while (0)
	PUT_WORD(mg);
	PUT_WORD(gen);
	PUT_WORD(kgen);
	PUT_WORD((uint32_t)s->cpumode | (uint32_t)nr << 8);
	PUT_WORD(s->ip);
	PUT_WORD(s->ip >> 32);
	const uint64_t *cc = s->callchain;
	uint64_t prev = s->ip;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t d = cc[i] - prev;
		uint64_t z = (d << 1) ^ (uint64_t)((int64_t)d >> 63);   /* zigzag */
		if (z < 0x80000000u) {
			PUT_WORD(z << 1);
		} else {
			PUT_WORD(1);
			PUT_WORD(z);
			PUT_WORD(z >> 32);
		}
		prev = cc[i];
	}
#undef PUT_WORD
	ps->klen = (size_t)(e - k);
	if (ps->klen > UINT16_MAX)
		return 0;
	ps->h = key_hash(k, ps->klen);
	ps->keyed = true;
	return 0;
}

/* The node of a sample without callchain: its ip's location (a map lookup
 * and one probe of a table as small as the code touched) and that
 * location's leaf under the root. */
static uint32_t ip_leaf(pf_profile *p, const pthread_ *t, const pd_sample *s)
{
	struct pf_profile_priv *pr = p->priv;
	uint32_t l = resolve_loc(p, t, s->cpumode, s->ip);
	if (l == PF_NONE)
		return PF_NONE;
	if (l >= pr->cap_loc_leaf) {
		size_t old = pr->cap_loc_leaf;
		if (PF_GROW(pr->loc_leaf, pr->cap_loc_leaf, (size_t)l + 1) < 0)
			return PF_NONE;
		memset(pr->loc_leaf + old, 0xff, (pr->cap_loc_leaf - old) * sizeof(uint32_t));
	}
	if (pr->loc_leaf[l] == PF_NONE)
		pr->loc_leaf[l] = prof_node_child(p, 0, l);
	return pr->loc_leaf[l];
}

/* The leaf node of a sample: through the raw-stack table when keyed (*hint
 * then points to the record's sample hint), else built directly. */
static uint32_t stack_of(pf_profile *p, const pthread_ *t, pend_sample *ps, uint32_t **hint)
{
	struct pf_profile_priv *pr = p->priv;
	const pd_sample *s = &ps->s;
	bool use_cc = pr->opts.use_callchain && s->callchain;
	uint64_t nr = use_cc ? s->nr_callchain : 0;
	*hint = NULL;
	if (!nr)
		return ip_leaf(p, t, s);
	if (!ps->keyed)
		return build_stack(p, t, s, use_cc);    /* not cached: > 6,000 frames */
	const uint8_t *k = ps->key + RAW_HDR;
	size_t klen = ps->klen;
	uint64_t h = ps->h;
	if ((pr->raw_len + 1) * 2 > pr->raw_cap && raw_grow(pr) < 0)
		return PF_NONE;
	uint32_t tag = (uint32_t)(h >> 32);
	size_t j = h & (pr->raw_cap - 1);
	while (pr->raw_s[j].ref) {
		if (pr->raw_s[j].tag == tag) {
			uint8_t *o = raw_rec(pr, pr->raw_s[j].ref);
			if (raw_klen(o) == klen && !memcmp(o + RAW_HDR, k, klen)) {
				*hint = (uint32_t *)(o + 4);
				return *(uint32_t *)o;
			}
		}
		j = (j + 1) & (pr->raw_cap - 1);
	}
	uint32_t leaf = build_stack(p, t, s, use_cc);
	if (leaf == PF_NONE)
		return PF_NONE;
	/* the stack build touched no raw-stack state: j is still valid,
	 * unless the new record starts the cache afresh */
	size_t rsize = (RAW_HDR + klen + 3) & ~(size_t)3;
	size_t budget = pr->opts.stack_cache_bytes ? pr->opts.stack_cache_bytes : RAW_BUDGET;
	if (pr->nraw_chunks && (pr->nraw_chunks - 1) * RAW_CHUNK + pr->raw_used + rsize > budget) {
		raw_flush(pr);
		j = h & (pr->raw_cap - 1);
	}
	uint32_t ref = raw_new_rec(pr, rsize);
	if (!ref)
		return PF_NONE;
	uint8_t *o = raw_rec(pr, ref);
	uint32_t none = PF_NONE;
	memcpy(o, &leaf, 4);
	memcpy(o + 4, &none, 4);
	memcpy(o + 8, &none, 4);
	o[12] = (uint8_t)klen;
	o[13] = (uint8_t)(klen >> 8);
	memcpy(o + RAW_HDR, k, klen);
	pr->raw_s[j].ref = ref;
	pr->raw_s[j].tag = tag;
	pr->raw_len++;
	*hint = (uint32_t *)(o + 4);
	return leaf;
}

/* Aggregated samples are found through their stack: every node keeps the
 * last sample used there, and samples with the same stack are chained
 * (other threads, comms or cpus; the one found is moved to the front). The per-node array
 * is small and stays in the cache, unlike a hash table over all samples. */
static inline void set_hint(uint32_t *hint, uint32_t id)
{
	if (hint) {
		hint[1] = hint[0];
		hint[0] = id;
	}
}

static int add_sample(pf_profile *p, uint32_t evsel, uint32_t thread, uint32_t pid, uint32_t tid,
		      uint32_t comm, uint32_t cpu, uint32_t stack, uint64_t period, uint32_t *hint)
{
	struct pf_profile_priv *pr = p->priv;
	if (hint) {
		/* the samples last added with this raw stack: usually one of them */
		for (int k = 0; k < 2 && hint[k] != PF_NONE; k++) {
			pf_sample *s = &p->samples[hint[k]];
			if (s->stack == stack && same_key(pr, s, evsel, pid, tid, comm, cpu, thread) &&
			    s->count < UINT32_MAX) {
				s->period += period;
				s->count++;
				return (int)hint[k];
			}
		}
	}
	if (stack >= pr->cap_node_sample) {
		size_t old = pr->cap_node_sample;
		if (PF_GROW(pr->node_sample, pr->cap_node_sample, (size_t)stack + 1) < 0)
			return -1;
		memset(pr->node_sample + old, 0xff, (pr->cap_node_sample - old) * sizeof(uint32_t));
	}
	for (uint32_t id = pr->node_sample[stack], prev = PF_NONE; id != PF_NONE; prev = id, id = pr->sample_next[id]) {
		pf_sample *s = &p->samples[id];
		if (same_key(pr, s, evsel, pid, tid, comm, cpu, thread) && s->count < UINT32_MAX) {
			s->period += period;
			s->count++;
			if (prev != PF_NONE) {
				/* to the front: a thread's samples come in runs, and a
				 * location many threads hit has a long chain */
				pr->sample_next[prev] = pr->sample_next[id];
				pr->sample_next[id] = pr->node_sample[stack];
				pr->node_sample[stack] = id;
			}
			set_hint(hint, id);
			return (int)id;
		}
	}
	size_t cap = p->cap_samples;
	if (PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1) < 0 ||
	    PF_GROW(pr->sample_next, cap, p->nr_samples + 1) < 0)
		return -1;
	uint32_t id = (uint32_t)p->nr_samples++;
	p->samples[id] = (pf_sample){ .evsel = evsel, .thread = thread, .pid = pid, .tid = tid, .comm = comm,
				      .cpu = cpu, .stack = stack, .count = 1, .period = period };
	pr->sample_next[id] = pr->node_sample[stack];
	pr->node_sample[stack] = id;
	set_hint(hint, id);
	return (int)id;
}

/* merge_threads: the first event's samples are summed per stack node in a
 * small array (16 bytes a node instead of a sample record each), and
 * become pf_samples, in order of first occurrence, when the file is read. */
typedef struct node_acc { uint64_t period, count; } node_acc;

/* -1: out of memory; 0: added to an aggregate; 1: a node's first sample
 * (acc_order's last); 2: a new pf_sample (the last). */
static int merged_sample(pf_profile *p, uint32_t evsel, uint32_t stack, uint64_t period)
{
	struct pf_profile_priv *pr = p->priv;
	if (evsel != 0) {
		size_t before = p->nr_samples;
		if (add_sample(p, evsel, 0, 0, 0, 0, PF_NONE, stack, period, NULL) < 0)
			return -1;
		return p->nr_samples > before ? 2 : 0;
	}
	if (stack >= pr->cap_acc) {
		size_t old = pr->cap_acc;
		if (PF_GROW(pr->acc, pr->cap_acc, (size_t)stack + 1) < 0)
			return -1;
		memset(pr->acc + old, 0, (pr->cap_acc - old) * sizeof(*pr->acc));
	}
	node_acc *a = &pr->acc[stack];
	int fresh = 0;
	if (!a->count) {
		if (PF_GROW(pr->acc_order, pr->cap_acc_order, pr->nacc + 1) < 0)
			return -1;
		pr->acc_order[pr->nacc++] = stack;
		fresh = 1;
	}
	a->period += period;
	a->count++;
	return fresh;
}

int prof_add_note(pf_level_note **v, size_t *n, size_t *cap, uint32_t id, char level)
{
	if (PF_GROW(*v, *cap, *n + 1) < 0)
		return -1;
	(*v)[(*n)++] = (pf_level_note){ id, level };
	return 0;
}

char pf_sample_level(const pf_profile *p, size_t si)
{
	size_t k = PF_COUNT_LE(p->level_notes, p->nr_level_notes, sample, si);
	if (k && p->level_notes[k - 1].sample == si)
		return p->level_notes[k - 1].level;
	return p->locs[p->nodes[p->samples[si].stack].loc].level;
}

int prof_make_merged_samples(pf_profile *p)
{
	struct pf_profile_priv *pr = p->priv;
	size_t nn = 0;    /* acc_notes done */
	for (size_t i = 0; i < pr->nacc; i++) {
		uint32_t stack = pr->acc_order[i];
		node_acc *a = &pr->acc[stack];
		if (nn < pr->nacc_notes && pr->acc_notes[nn].sample == i &&
		    prof_add_note(&p->level_notes, &p->nr_level_notes, &p->cap_level_notes,
			     (uint32_t)p->nr_samples, pr->acc_notes[nn++].level) < 0)
			return -1;
		/* counts beyond a pf_sample's u32 continue in more samples */
		while (a->count) {
			uint32_t c = a->count > UINT32_MAX ? UINT32_MAX : (uint32_t)a->count;
			uint64_t per = c == a->count ? a->period : 0;
			size_t cap = p->cap_samples;
			if (PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1) < 0 ||
			    PF_GROW(pr->sample_next, cap, p->nr_samples + 1) < 0)
				return -1;
			p->samples[p->nr_samples] = (pf_sample){ .evsel = 0, .thread = 0, .pid = 0, .tid = 0, .comm = 0,
								  .cpu = PF_NONE, .stack = stack, .count = c,
								  .period = per };
			/* on its node's chain (a merged second half finds it) */
			if (stack >= pr->cap_node_sample) {
				size_t old = pr->cap_node_sample;
				if (PF_GROW(pr->node_sample, pr->cap_node_sample, (size_t)stack + 1) < 0)
					return -1;
				memset(pr->node_sample + old, 0xff, (pr->cap_node_sample - old) * sizeof(uint32_t));
			}
			pr->sample_next[p->nr_samples] = pr->node_sample[stack];
			pr->node_sample[stack] = (uint32_t)p->nr_samples++;
			a->count -= c;
			a->period -= per;
		}
	}
	return 0;
}

/* ---- record handling ------------------------------------------------------------- */

/* ---- the sample pipeline ---------------------------------------------------------- */

/* Samples pass through PEND_N stages, one sample per stage, so the memory
 * each needs is fetched while the samples ahead of it are aggregated (the
 * loader is bound by cache misses, not instructions):
 *   arrival: filters, thread, raw-stack key and hash; fetch the table slot
 *            (or, without callchain, the location cache entry);
 *   next:    fetch the raw-stack record the slot points to;
 *   last:    find the stack, aggregate the sample.
 * Side-band records drain the pipeline first, so every sample still sees
 * the threads and maps of its moment. (PEND_N: profile-int.h) */

static bool time_kept(const struct pf_profile_priv *pr, uint64_t t)
{
	if (!pr->nranges)
		return true;
	for (size_t i = 0; i < pr->nranges; i++)
		if (t >= pr->ranges[i].start && (!pr->ranges[i].end || t <= pr->ranges[i].end))
			return true;
	return false;
}

/* A sample in its event's totals and the profile's time span. */
static inline void sample_totals(pf_profile *p, const pd_sample *s)
{
	pf_event *e = &p->events[s->evsel];
	e->total_period += s->period;   /* the reader gives attr.sample_period when not sampled */
	e->nr_samples++;
	if (!p->first_time || s->time < p->first_time)
		p->first_time = s->time;
	if (s->time > p->last_time)
		p->last_time = s->time;
}

/* A sample of thread index `thread` (cpu PF_NONE: none) whose stack is
 * known: into its aggregated sample and the totals. */
static int sample_add(pf_profile *p, const pd_sample *s, uint32_t thread, uint32_t cpu, uint32_t stack,
		      uint32_t *hint)
{
	struct pf_profile_priv *pr = p->priv;
	if (stack == PF_NONE)
		return prof_oom(p);
	uint64_t period = s->period;
	int fresh;
	if (pr->opts.merge_threads) {
		fresh = merged_sample(p, (uint32_t)s->evsel, stack, period);
	} else {
		size_t before = p->nr_samples;
		int id = add_sample(p, (uint32_t)s->evsel, thread, s->pid, s->tid, pr->m.threads[thread].comm,
				    cpu, stack, period, hint);
		fresh = id < 0 ? -1 : p->nr_samples > before ? 2 : 0;
		if (id >= 0 && pr->opts.keep_sequence) {
			if (PF_GROW(p->seq, p->cap_seq, p->nr_seq + 1) < 0 ||
			    pf_seq_push(p, (uint32_t)id, thread, period) < 0)
				return prof_oom(p);
			if (pr->opts.keep_time) {
				if (PF_GROW(p->seq_time, p->cap_seq_time, p->nr_seq) < 0)
					return prof_oom(p);
				p->seq_time[p->nr_seq - 1] = s->time;
			}
		}
	}
	if (fresh < 0)
		return prof_oom(p);
	if (fresh) {
		/* a new aggregate: perf's level of its ip is the sample's cpumode's */
		char lv = level_of(s->cpumode);
		if (lv != p->locs[p->nodes[stack].loc].level &&
		    (fresh == 1 ? prof_add_note(&pr->acc_notes, &pr->nacc_notes, &pr->cap_acc_notes,
					   (uint32_t)(pr->nacc - 1), lv)
				: prof_add_note(&p->level_notes, &p->nr_level_notes, &p->cap_level_notes,
					   (uint32_t)(p->nr_samples - 1), lv)) < 0)
			return prof_oom(p);
	}
	sample_totals(p, s);
	return 0;
}

/* A leaf-cache entry's pending sums into its node's. */
static inline void leaf_flush(struct pf_profile_priv *pr, leaf_cache_ent *c)
{
	uint32_t n = c->count_mode >> 8;
	if (n) {
		node_acc *a = &pr->acc[c->node];
		a->period += c->period;
		a->count += n;
		c->period = 0;
		c->count_mode &= 0xff;
	}
}

void prof_leaf_flush_all(struct pf_profile_priv *pr)
{
	if (pr->leaf_cache)
		for (size_t i = 0; i < LEAF_CACHE_N; i++)
			leaf_flush(pr, &pr->leaf_cache[i]);
}

/* merge_threads, the first event, no callchain: the sample's (maps, ip) in
 * the leaf cache takes it (its node's sums later), else the leaf is found
 * and the sample added as sample_add does; the entry then is the leaf's.
 * The node's first sample always goes through merged_sample, so the order
 * of first occurrence is kept. */
static int merged_ip_sample(pf_profile *p, const pthread_ *t, const pd_sample *s)
{
	struct pf_profile_priv *pr = p->priv;
	if (!pr->leaf_cache) {
		pr->leaf_cache = malloc(LEAF_CACHE_N * sizeof(*pr->leaf_cache));
		if (!pr->leaf_cache)
			return prof_oom(p);
		for (size_t i = 0; i < LEAF_CACHE_N; i++)
			pr->leaf_cache[i] = (leaf_cache_ent){ 0, PF_NONE, 0, PF_NONE, 0, 0 };
	}
	uint32_t g = mg_for(pr, t, s->cpumode);
	uint32_t gen = pr->m.mgs[g].gen;
	uint32_t mode = (uint32_t)s->cpumode & 0xff;
	leaf_cache_ent *c = &pr->leaf_cache[pf_hash64(s->ip ^ ((uint64_t)g << 40)) & (LEAF_CACHE_N - 1)];
	if (c->ip == s->ip && c->mg == g && c->gen == gen && (c->count_mode & 0xff) == mode &&
	    (c->count_mode >> 8) < LEAF_COUNT_MAX) {
		c->period += s->period;
		c->count_mode += 1u << 8;
		sample_totals(p, s);
		return 0;
	}
	leaf_flush(pr, c);
	uint32_t node = ip_leaf(p, t, s);
	int rc = sample_add(p, s, 0, PF_NONE, node, NULL);
	if (rc)
		return rc;
	*c = (leaf_cache_ent){ s->ip, g, gen, node, mode, 0 };
	return 0;
}

uint32_t prof_ip_leaf(pf_profile *p, const pthread_ *t, const pd_sample *s)
{
	return ip_leaf(p, t, s);
}

int prof_sample_add(pf_profile *p, const pd_sample *s, uint32_t thread, uint32_t cpu, uint32_t stack)
{
	return sample_add(p, s, thread, cpu, stack, NULL);
}

static int sample_done(pf_profile *p, pend_sample *ps)
{
	uint32_t *hint;
	uint32_t stack = stack_of(p, thread_of(p->priv, ps->thread), ps, &hint);
	return sample_add(p, &ps->s, ps->thread, ps->cpu, stack, hint);
}

int prof_drain_samples(pf_profile *p)
{
	struct pf_profile_priv *pr = p->priv;
	while (pr->npend) {
		pend_sample *ps = &pr->pend[pr->pend_head];
		pr->pend_head = (pr->pend_head + 1) % PEND_N;
		pr->npend--;
		int rc = sample_done(p, ps);
		if (rc)
			return rc;
	}
	return 0;
}

/* the raw-stack record a keyed sample will compare with: into the cache */
static void fetch_record(struct pf_profile_priv *pr, const pend_sample *ps)
{
	if (!ps->keyed || !pr->raw_cap)
		return;
	uint32_t tag = (uint32_t)(ps->h >> 32);
	for (size_t j = ps->h & (pr->raw_cap - 1); pr->raw_s[j].ref; j = (j + 1) & (pr->raw_cap - 1)) {
		if (pr->raw_s[j].tag == tag) {
			__builtin_prefetch(raw_rec(pr, pr->raw_s[j].ref));
			return;
		}
	}
}

/* what the later stages read of a sample (its callchain: by the caller) */
static inline void pend_fill(pend_sample *ps, uint32_t thread, uint32_t cpu, const pd_sample *s)
{
	ps->thread = thread;
	ps->cpu = cpu;
	ps->s.evsel = s->evsel;
	ps->s.cpumode = s->cpumode;
	ps->s.ip = s->ip;
	ps->s.pid = s->pid;
	ps->s.tid = s->tid;
	ps->s.time = s->time;
	ps->s.period = s->period;
	ps->s.callchain = NULL;
	ps->s.nr_callchain = 0;
	ps->keyed = false;
}

static int sample_arrive(pf_profile *p, const pd_sample *s, bool stable)
{
	struct pf_profile_priv *pr = p->priv;
	if (s->evsel < 0 || (size_t)s->evsel >= p->nr_events)
		return 0;
	/* the halves part at the first sample delivered at or after split_t:
	 * a position in the (same) delivery order of both readers, so even a
	 * late sample of an earlier time is aggregated exactly once */
	if (pr->split_role == 1 && s->time >= pr->split_t)
		return SPLIT_STOP;      /* the rest is the other half's */
	bool prefix = false;
	if (pr->split_role == 2 && !pr->split_on) {
		if (s->time >= pr->split_t)
			pr->split_on = true;
		else
			prefix = true;
	}
	const pf_event *e = &p->events[s->evsel];
	if (!time_kept(pr, s->time))
		return 0;
	if (pr->opts.cpu_mask && e->has_cpu) {
		if (s->cpu >= pr->opts.cpu_mask_bits ||
		    !(pr->opts.cpu_mask[s->cpu / 8] & (1u << (s->cpu % 8))))
			return 0;
	}
	pthread_ *t = find_thread(p, s->pid, s->tid, true);
	if (!t)
		return prof_oom(p);
	if (prefix)
		return 0;               /* the other half's sample: only its thread counts here */
	if (pr->opts.branch_mode) {
		/* rows of branches, not of the sample's ip: straight through */
		if (pr->npend) {
			int rc = prof_drain_samples(p);
			if (rc)
				return rc;
		}
		return prof_branch_sample(p, t, s, (uint32_t)(t - pr->m.threads), e->has_cpu ? s->cpu : PF_NONE);
	}
	if (pr->opts.branch_history) {
		/* the ip's row, the chain kept apart (branch.c): straight through */
		if (pr->npend) {
			int rc = prof_drain_samples(p);
			if (rc)
				return rc;
		}
		return prof_bhist_sample(p, t, s, (uint32_t)(t - pr->m.threads), e->has_cpu ? s->cpu : PF_NONE);
	}
	pd_sample us;
	if (pr->uw && s->stack_user && pr->opts.use_callchain) {
		int rc = prof_unwound_chain(p, t, s, &us);
		if (rc)
			return rc;
		if (us.callchain != s->callchain) {
			s = &us;
			stable = false;
		}
	}
	if (!pr->opts.use_callchain || !s->callchain || !s->nr_callchain) {
		/* the ip alone: a location-cache probe, nothing worth fetching
		 * ahead; straight through (after the samples before it) */
		if (pr->npend) {
			int rc = prof_drain_samples(p);
			if (rc)
				return rc;
		}
		if (pr->opts.merge_threads && s->evsel == 0)
			return merged_ip_sample(p, t, s);
		return sample_add(p, s, (uint32_t)(t - pr->m.threads), e->has_cpu ? s->cpu : PF_NONE,
				  ip_leaf(p, t, s), NULL);
	}
	if (pr->npend == PEND_N) {
		pend_sample *old = &pr->pend[pr->pend_head];
		pr->pend_head = (pr->pend_head + 1) % PEND_N;
		pr->npend--;
		int rc = sample_done(p, old);
		if (rc)
			return rc;
	}
	pend_sample *ps = &pr->pend[(pr->pend_head + pr->npend) % PEND_N];
	pr->npend++;
	pend_fill(ps, (uint32_t)(t - pr->m.threads), e->has_cpu ? s->cpu : PF_NONE, s);
	if (pr->opts.use_callchain && s->callchain) {
		/* the chain where it is, when it stays there (the mapped file);
		 * else a copy: the sample waits a few others in the pipeline */
		if (stable) {
			ps->s.callchain = s->callchain;
		} else {
			if (PF_GROW(ps->cc, ps->cap_cc, (size_t)s->nr_callchain + 1) < 0)
				return prof_oom(p);
			memcpy(ps->cc, s->callchain, (size_t)s->nr_callchain * sizeof(uint64_t));
			ps->s.callchain = ps->cc;
		}
		ps->s.nr_callchain = s->nr_callchain;
		if (stack_key(p, t, ps) < 0)
			return prof_oom(p);
	}
	if (ps->keyed) {
		if (pr->raw_cap)
			__builtin_prefetch(&pr->raw_s[ps->h & (pr->raw_cap - 1)]);
	} else if (!ps->s.nr_callchain) {
		uint32_t g = mg_for(pr, t, s->cpumode);
		__builtin_prefetch(&pr->loc_cache[loc_cache_slot(s->ip, g)]);
	}
	if (pr->npend >= 2)
		fetch_record(pr, &pr->pend[(pr->pend_head + pr->npend - 2) % PEND_N]);
	return 0;
}

/* Which half counts a LOST record: the one whose part of the delivery
 * order holds it (the first stops where the second starts). */
static bool lost_here(const struct pf_profile_priv *pr)
{
	return pr->split_role != 2 || pr->split_on;
}

int prof_on_event(void *ctx, const pd_event *ev)
{
	pf_profile *p = ctx;
	struct pf_profile_priv *pr = p->priv;
	if (pr->opts.progress && !(pr->progress_n++ & 4095)) {
		if (pr->progress_n == 1)
			pr->progress_first = ev->file_offset;
		if (ev->file_offset > pr->progress_first)
			pr->opts.progress(pr->opts.progress_ctx, (unsigned)pr->split_role,
					  ev->file_offset - pr->progress_first, pd_data_size(pr->rd));
	}
	if (ev->type != PD_SAMPLE && pr->npend) {
		/* side-band changes threads and maps: the samples before it first */
		int rc = prof_drain_samples(p);
		if (rc)
			return rc;
	}
	switch (ev->type) {
	case PD_SAMPLE:
		return sample_arrive(p, &ev->u.sample, ev->stable);
	case PD_COMM:
	case PD_FORK:
	case PD_EXIT:
	case PD_MMAP:
	case PD_MMAP2:
		return pf_machine_event(&pr->m, ev) < 0 ? prof_oom(p) : 0;
	case PD_LOST_SAMPLES:
		/* perf's "Total Lost Samples" counts these only: LOST records
		 * (the ring buffer's losses) are counted apart (perf -D's
		 * summary), and perf record ends with a LOST_SAMPLES record of
		 * the kernel's own count of the same losses */
		if (lost_here(pr))
			p->nr_lost_samples += ev->u.lost_samples.lost;
		return 0;
	default:
		return 0;
	}
}

static int on_time_only(void *ctx, const pd_event *ev)
{
	pf_profile *p = ctx;
	if (ev->type == PD_SAMPLE) {
		uint64_t t = ev->u.sample.time;
		if (!p->first_time || t < p->first_time)
			p->first_time = t;
		if (t > p->last_time)
			p->last_time = t;
	}
	return 0;
}

/* ---- load ------------------------------------------------------------------------ */

/* A profile with its loader state, not yet read. */
int prof_new(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err)
{
	*out = NULL;
	pf_profile *p = calloc(1, sizeof(*p));
	struct pf_profile_priv *pr = calloc(1, sizeof(*pr));
	if (!p || !pr) {
		free(p);
		free(pr);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	p->priv = pr;
	pr->err = err;
	pf_machine_init(&pr->m, &p->strs, &p->dsos, &p->nr_dsos, &p->cap_dsos);
	if (opts)
		pr->opts = *opts;
	else
		pf_load_opts_init(&pr->opts);
	pr->loc_cache = malloc(LOC_CACHE_N * sizeof(*pr->loc_cache));
	pr->pend = calloc(PEND_N, sizeof(*pr->pend));
	p->path = strdup(path);
	if (!pr->loc_cache || !pr->pend || !p->path || pf_strtab_init(&p->strs) < 0) {
		pf_profile_free(p);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	for (size_t i = 0; i < LOC_CACHE_N; i++)
		pr->loc_cache[i].loc = PF_NONE;
	*out = p;
	return 0;
}

/* Events, the header's build-ids, the kernel's map group and the root of
 * the stack trie, from an open perf.data reader. */
int prof_perf_setup(pf_profile *p, pd_reader *rd)
{
	struct pf_profile_priv *pr = p->priv;
	pr->rd = rd;
	p->nr_events = pd_nr_attrs(rd);
	p->events = calloc(p->nr_events ? p->nr_events : 1, sizeof(pf_event));
	if (!p->events)
		return prof_oom(p);
	for (size_t i = 0; i < p->nr_events; i++) {
		const pd_attr *a = pd_get_attr(rd, i);
		pf_event *e = &p->events[i];
		e->name = strdup(a->name ? a->name : "unknown");
		if (!e->name)
			return prof_oom(p);
		e->type = a->type;
		e->config = a->config;
		e->sample_type = a->sample_type;
		e->has_callchain = (a->sample_type & PD_S_CALLCHAIN) != 0;
		e->has_cpu = (a->sample_type & PD_S_CPU) != 0;
		e->has_branch_stack = (a->sample_type & PD_S_BRANCH_STACK) != 0;
	}
	for (size_t i = 0; i < p->nr_events && pr->opts.use_callchain && !pr->uw; i++)
		if (uw_event_wants(pd_get_attr(rd, i)) && !(pr->uw = uw_new(0)))
			return prof_oom(p);
	if (pr->uw)
		uw_set_memo(pr->uw, (enum uw_memo)pr->opts.unwind_memo);
	p->has_branch_stack_feature = pd_has_feature(rd, PD_FEAT_BRANCH_STACK);
	if (pf_machine_start(&pr->m, rd, &p->syms_ctx) < 0 || PF_GROW(p->nodes, p->cap_nodes, 1) < 0)
		return prof_oom(p);
	p->nodes[0] = (pf_node){ 0, PF_NONE, 0 };
	p->nr_nodes = 1;
	return 0;
}

void prof_take_warnings(pf_profile *p, const pd_reader *rd)
{
	for (size_t i = 0; i < pd_nr_warnings(rd); i++) {
		size_t cap = p->nr_warnings;
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(pd_warning(rd, i));
	}
}

int prof_finish_read(pf_profile *p, int rc)
{
	if (rc == SPLIT_STOP || rc == 0)
		rc = prof_drain_samples(p);
	if (rc > 0)
		rc = PROFF_ENOMEM;   /* our callback only stops on allocation failure (err set) */
	prof_leaf_flush_all(p->priv);
	if (rc == 0 && prof_make_merged_samples(p) < 0)
		rc = prof_oom(p);
	return rc;
}

int pf_profile_load(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err)
{
	*out = NULL;
	/* pprof profiles and folded stacks, known by their content: lib/formats */
	int rc = pf_formats_load(path, opts, out, err);
	if (rc != 0)
		return rc < 0 ? rc : 0;
	if (opts && opts->label_filter)
		return proff_err_set(err, PROFF_EUSAGE, path, PROFF_NO_OFFSET, "--label: only pprof profiles have labels");
	pf_profile *p;
	rc = prof_new(path, opts, &p, err);
	if (rc < 0)
		return rc;
	struct pf_profile_priv *pr = p->priv;
	if (pf_is_trace_file(path)) {
		/* an exact profile: lib/model/trace-model.c */
		sym_opts to = {
			.symfs = pr->opts.symfs, .buildid_dir = pr->opts.buildid_dir, .demangle = true,
			.demangle_params = pr->opts.demangle_params, .inline_frames = pr->opts.inline_frames,
		};
		if ((rc = sym_ctx_new(&to, &p->syms_ctx, err)) < 0)
			goto fail;
		if (PF_GROW(p->nodes, p->cap_nodes, 1) < 0) {
			rc = prof_oom(p);
			goto fail;
		}
		p->nodes[0] = (pf_node){ 0, PF_NONE, 0 };
		p->nr_nodes = 1;
		rc = pf__load_trace(p, path, &pr->opts, err);
		if (rc < 0)
			goto fail;
		goto threads;
	}
	pd_reader *rd = NULL;
	rc = pd_open(path, &rd, err);
	if (rc < 0)
		goto fail;
	if ((rc = prof_perf_setup(p, rd)) < 0)
		goto fail_rd;
	const pd_header *hdr = pd_get_header(rd);
	sym_opts so = {
		.symfs = pr->opts.symfs,
		.kallsyms = pr->opts.kallsyms,
		.buildid_dir = pr->opts.buildid_dir,
		.recorded_osrelease = hdr->osrelease,
		.demangle = true,
		.demangle_params = pr->opts.demangle_params,
		.inline_frames = pr->opts.inline_frames,
		.user_dsos = pr->opts.shared_syms,
	};
	if ((rc = sym_ctx_new(&so, &p->syms_ctx, err)) < 0)
		goto fail_rd;

	/* --time: percent ranges need the first/last sample time */
	if (pr->opts.time_spec) {
		uint64_t first = hdr->sample_time_first, last = hdr->sample_time_last;
		if (strchr(pr->opts.time_spec, '%') && (!first || !last || last <= first)) {
			rc = pd_process(rd, false, on_time_only, p, err);
			if (rc < 0)
				goto fail_rd;
			first = p->first_time;
			last = p->last_time;
			p->first_time = p->last_time = 0;
			pd_close(rd);
			pr->rd = NULL;
			rc = pd_open(path, &rd, err);
			if (rc < 0)
				goto fail;
			pr->rd = rd;
			hdr = pd_get_header(rd);
		}
		rc = pf_parse_time_spec(pr->opts.time_spec, 0, 1, first, last, &pr->ranges, &pr->nranges, err);
		if (rc < 0)
			goto fail_rd;
	}

	uint64_t t;
	if (prof_split_time(p, rd, &t)) {
		rc = prof_load_split(p, rd, t, err);
	} else {
		rc = prof_finish_read(p, pd_process(rd, true, prof_on_event, p, err));
		prof_take_warnings(p, rd);
	}
	pd_close(rd);
	pr->rd = NULL;
	if (rc < 0)
		goto fail;
	prof_load_warnings(p);
threads:
	p->threads = calloc(pr->m.nthreads ? pr->m.nthreads : 1, sizeof(pf_thread));
	if (!p->threads) {
		rc = prof_oom(p);
		goto fail;
	}
	for (size_t i = 0; i < pr->m.nthreads; i++)
		p->threads[i] = (pf_thread){ pr->m.threads[i].pid, pr->m.threads[i].tid, pr->m.threads[i].comm };
	p->nr_threads = pr->m.nthreads;
	prof_release_load_state(pr);
	prof_fit_arrays(p);
	if (pr->opts.inline_frames && pr->opts.use_callchain && (rc = pf_profile_expand_inlines(p, pr->opts.inline_root_first, err)) < 0)
		goto fail;
	*out = p;
	return 0;
fail_rd:
	pd_close(rd);
	pr->rd = NULL;
fail:
	pf_profile_free(p);
	return rc;
}

uint64_t pf_seq_period_big(const pf_profile *p, size_t i)
{
	size_t k = PF_COUNT_LE(p->seq_big, p->nr_seq_big, at, i);
	return k && p->seq_big[k - 1].at == i ? p->seq_big[k - 1].period : PF_SEQ_BIG;
}

int pf_seq_push(pf_profile *p, uint32_t sample, uint32_t thread, uint64_t period)
{
	if (period >= PF_SEQ_BIG) {
		if (PF_GROW(p->seq_big, p->cap_seq_big, p->nr_seq_big + 1) < 0)
			return -1;
		p->seq_big[p->nr_seq_big++] = (pf_seq_big){ p->nr_seq, period };
		period = PF_SEQ_BIG;
	}
	p->seq[p->nr_seq++] = (pf_seq){ sample, thread, (uint32_t)period };
	return 0;
}

void pf_profile_drop_sequence(pf_profile *p)
{
	free(p->seq);
	p->seq = NULL;
	p->nr_seq = p->cap_seq = 0;
	free(p->seq_big);
	p->seq_big = NULL;
	p->nr_seq_big = p->cap_seq_big = 0;
	free(p->seq_time);
	p->seq_time = NULL;
	p->cap_seq_time = 0;
}

/* ---- the builder interface of model-int.h (exact traces) ------------------------- */

uint32_t pf__dso(pf_profile *p, const char *path)
{
	return get_dso(p, path, PD_CPUMODE_USER);
}

uint32_t pf__loc(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip)
{
	return loc_get(p, dso, addr, ip, '.');
}

uint32_t pf__node(pf_profile *p, uint32_t parent, uint32_t loc)
{
	return prof_node_child(p, parent, loc);
}

uint32_t pf__thread(pf_profile *p, uint32_t pid, uint32_t tid, const char *comm)
{
	pthread_ *t = find_thread(p, pid, tid, true);
	if (!t)
		return PF_NONE;
	if (comm && *comm) {
		int64_t c = intern(p, comm);
		if (c < 0)
			return PF_NONE;
		t->comm = (uint32_t)c;
	}
	return (uint32_t)(t - p->priv->m.threads);
}

int pf__sample(pf_profile *p, uint32_t thread, uint32_t stack, uint64_t period)
{
	const pthread_ *t = &p->priv->m.threads[thread];
	return add_sample(p, 0, thread, t->pid, t->tid, t->comm, PF_NONE, stack, period, NULL);
}
