/* profile.c — loading a perf.data file into the profile model.
 *
 * The records arrive in time order from the reader. Side-band records
 * (COMM, FORK, EXIT, MMAP, MMAP2) maintain threads and per-process map
 * groups, so each sample sees the maps and comm of its moment. A sample's
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
 */
#include "proff/profile.h"
#include "proff/perfdata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model-int.h"
#include "tables.h"

typedef pf_range pmap;

typedef struct mgroup {
	pf_ranges maps;
	uint32_t gen;          /* bumped on every change; part of raw-stack keys */
} mgroup;

#define LOC_CACHE_N 8192
typedef struct loc_cache_ent {
	uint64_t ip;
	uint32_t mg, gen, loc, cpumode;
} loc_cache_ent;

typedef struct pthread_ {
	uint32_t pid, tid;
	uint32_t comm;         /* string id */
	uint32_t mg;           /* map group (per process) */
} pthread_;

struct pf_profile_priv {
	pf_load_opts opts;
	proff_error *err;
	/* threads */
	pthread_ *threads; size_t nthreads, capthreads;
	pf_map64 tid2thread;     /* tid -> thread index */
	uint32_t last_tid, last_thread;   /* the last lookup (PF_NONE: none) */
	pf_map64 pid2mg;         /* pid -> map group index */
	mgroup *mgs; size_t nmgs, capmgs;
	uint32_t kernel_mg;
	/* dsos by long-name string id */
	pf_map64 name2dso;
	/* build ids from the header: filename string id -> index into bids */
	pf_map64 name2bid;
	const pd_build_id *bids; size_t nbids;
	/* interning */
	pair_table loc_tab;      /* (dso, addr) -> loc; dso PF_NONE for no map */
	pair_table sym_tab;      /* (dso, start) -> sym */
	u32x2_table node_tab;    /* (parent, loc) -> node */
	struct raw_slot *raw_s; size_t raw_cap, raw_len;   /* raw stacks: hash table of ids */
	uint8_t **raw_keys; size_t nraw, capraw;    /* u16 length + packed key (stack_of) */
	uint8_t *kchunk; size_t kfree;              /* raw keys are carved from 1 MB arena chunks */
	uint8_t *kscratch; size_t cap_kscratch;
	uint32_t *raw_leaf;
	pf_arena raw_arena;
	uint32_t *node_sample; size_t cap_node_sample;   /* node -> last sample with that stack */
	uint32_t *sample_next;   /* sample -> next sample with the same stack (cap: cap_samples) */
	struct node_acc *acc; size_t cap_acc;             /* merge_threads: sums per node */
	uint32_t *acc_order; size_t nacc, cap_acc_order;  /* nodes in order of first sample */
	/* time filter */
	pf_time_range *ranges; size_t nranges;
	uint32_t *loc_leaf; size_t cap_loc_leaf;   /* location -> its node under the root */
	loc_cache_ent *loc_cache;                   /* LOC_CACHE_N entries (resolve_loc) */
	/* scratch */
	uint32_t *scratch_locs; size_t cap_scratch;
	const pd_reader *rd;
	uint64_t lost;
};

void pf_load_opts_init(pf_load_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->use_callchain = true;
}

static void release_load_state(struct pf_profile_priv *pr);

static int oom(pf_profile *p)
{
	return proff_err_set(p->priv->err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
}

static int64_t intern(pf_profile *p, const char *s)
{
	return pf_strtab_intern(&p->strs, s, strlen(s));
}

/* ---- dsos ---------------------------------------------------------------- */

static enum sym_dso_kind dso_kind_of(const char *name, int cpumode)
{
	if (!strcmp(name, "[vdso]"))
		return SYM_DSO_VDSO;
	if (cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) {
		if (!strncmp(name, "[kernel.kallsyms]", 17) || !strncmp(name, "[guest.kernel", 13))
			return SYM_DSO_KERNEL;
		return SYM_DSO_MODULE;
	}
	if (name[0] == '[' || !strncmp(name, "//anon", 6) || !strncmp(name, "/memfd:", 7) ||
	    !strncmp(name, "/dev/zero", 9) || !strncmp(name, "anon_inode:", 11) ||
	    !strncmp(name, "/SYSV", 5))
		return SYM_DSO_ANON;
	return SYM_DSO_USER;
}

static void short_name_of(const char *name, enum sym_dso_kind kind, char *out, size_t len)
{
	if (kind == SYM_DSO_KERNEL) {
		snprintf(out, len, "[kernel.kallsyms]");
		return;
	}
	if (kind == SYM_DSO_MODULE && name[0] == '/') {
		/* /lib/modules/.../kvm.ko(.xz) -> [kvm] */
		const char *b = strrchr(name, '/');
		b = b ? b + 1 : name;
		size_t n = strcspn(b, ".");
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)n, b);
		for (char *c = tmp; *c; c++)
			if (*c == '-')
				*c = '_';
		snprintf(out, len, "[%s]", tmp);
		return;
	}
	if (name[0] == '[' || name[0] != '/') {
		snprintf(out, len, "%s", name);
		return;
	}
	const char *b = strrchr(name, '/');
	snprintf(out, len, "%s", b ? b + 1 : name);
}

static uint32_t get_dso(pf_profile *p, const char *filename, int cpumode,
			const uint8_t *bid, size_t bid_size)
{
	struct pf_profile_priv *pr = p->priv;
	char namebuf[4096];
	const char *name = filename;
	if ((cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) &&
	    !strncmp(filename, "[kernel.kallsyms]", 17))
		name = "[kernel.kallsyms]";
	snprintf(namebuf, sizeof(namebuf), "%s", name);
	int64_t lid = intern(p, namebuf);
	if (lid < 0)
		return PF_NONE;
	uint64_t v;
	if (pf_map64_get(&pr->name2dso, (uint64_t)lid, &v))
		return (uint32_t)v;
	enum sym_dso_kind kind = dso_kind_of(namebuf, cpumode);
	char sbuf[4096];
	short_name_of(namebuf, kind, sbuf, sizeof(sbuf));
	int64_t sid = intern(p, sbuf);
	if (sid < 0 || PF_GROW(p->dsos, p->cap_dsos, p->nr_dsos + 1) < 0)
		return PF_NONE;
	pf_dso *d = &p->dsos[p->nr_dsos];
	memset(d, 0, sizeof(*d));
	d->long_name = (uint32_t)lid;
	d->short_name = (uint32_t)sid;
	d->kind = kind;
	if (!bid_size) {
		uint64_t bi;
		int64_t fid = intern(p, filename);
		/* the kernel's build-id is recorded as "[kernel.kallsyms]" while its
		 * map is "[kernel.kallsyms]_text" */
		if (fid >= 0 && !pf_map64_get(&pr->name2bid, (uint64_t)fid, NULL))
			fid = lid;
		if (fid >= 0 && pf_map64_get(&pr->name2bid, (uint64_t)fid, &bi)) {
			bid = pr->bids[bi].id;
			bid_size = pr->bids[bi].size;
		}
	}
	if (bid_size > 20)
		bid_size = 20;
	if (bid_size)
		memcpy(d->build_id, bid, bid_size);
	d->build_id_size = (uint8_t)bid_size;
	d->sd = NULL;     /* symbolizer handle created on first lookup */
	uint64_t *slot = pf_map64_upsert(&pr->name2dso, (uint64_t)lid, NULL);
	if (!slot)
		return PF_NONE;
	*slot = p->nr_dsos;
	return (uint32_t)p->nr_dsos++;
}

static sym_dso *dso_sd(pf_profile *p, uint32_t dso)
{
	pf_dso *d = &p->dsos[dso];
	if (!d->sd && p->syms_ctx && d->kind != SYM_DSO_ANON)
		d->sd = sym_dso_get(p->syms_ctx, pf_str(p, d->long_name),
				    d->build_id_size ? d->build_id : NULL, d->build_id_size, d->kind);
	return d->sd;
}

/* ---- threads and maps ------------------------------------------------------- */

static uint32_t new_mg(pf_profile *p)
{
	struct pf_profile_priv *pr = p->priv;
	if (PF_GROW(pr->mgs, pr->capmgs, pr->nmgs + 1) < 0)
		return PF_NONE;
	memset(&pr->mgs[pr->nmgs], 0, sizeof(mgroup));
	return (uint32_t)pr->nmgs++;
}

static uint32_t mg_of_pid(pf_profile *p, uint32_t pid, bool create)
{
	struct pf_profile_priv *pr = p->priv;
	uint64_t v;
	if (pf_map64_get(&pr->pid2mg, pid, &v))
		return (uint32_t)v;
	if (!create)
		return PF_NONE;
	uint32_t mg = new_mg(p);
	if (mg == PF_NONE)
		return PF_NONE;
	uint64_t *slot = pf_map64_upsert(&pr->pid2mg, pid, NULL);
	if (!slot)
		return PF_NONE;
	*slot = mg;
	return mg;
}

static pthread_ *find_thread(pf_profile *p, uint32_t pid, uint32_t tid, bool create)
{
	struct pf_profile_priv *pr = p->priv;
	uint64_t v;
	if (pr->last_thread != PF_NONE && pr->last_tid == tid) {
		/* samples come in runs of one thread */
		pthread_ *t = &pr->threads[pr->last_thread];
		if (t->pid == pid || pid == (uint32_t)-1 || !create)
			return t;
	}
	if (pf_map64_get(&pr->tid2thread, tid, &v)) {
		pthread_ *t = &pr->threads[v];
		pr->last_tid = tid;
		pr->last_thread = (uint32_t)v;
		if (t->pid == pid || pid == (uint32_t)-1 || !create)
			return t;
		/* tid reused by another process: start a new thread */
	}
	if (!create)
		return NULL;
	if (PF_GROW(pr->threads, pr->capthreads, pr->nthreads + 1) < 0)
		return NULL;
	pthread_ *t = &pr->threads[pr->nthreads];
	t->pid = pid;
	t->tid = tid;
	char buf[32];
	snprintf(buf, sizeof(buf), ":%d", (int)tid);
	int64_t c = intern(p, buf);
	t->comm = c < 0 ? 0 : (uint32_t)c;
	t->mg = mg_of_pid(p, pid, true);
	if (t->mg == PF_NONE)
		return NULL;
	uint64_t *slot = pf_map64_upsert(&pr->tid2thread, tid, NULL);
	if (!slot)
		return NULL;
	pr->last_tid = tid;
	pr->last_thread = (uint32_t)pr->nthreads;
	*slot = pr->nthreads++;
	return t;
}

static int mg_insert(mgroup *g, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t dso)
{
	if (pf_ranges_insert(&g->maps, start, end, pgoff, dso) < 0)
		return -1;
	g->gen++;
	return 0;
}

static int mg_clone(mgroup *dst, const mgroup *src)
{
	if (pf_ranges_copy(&dst->maps, &src->maps) < 0)
		return -1;
	dst->gen++;
	return 0;
}

static const pmap *mg_find(const mgroup *g, uint64_t addr)
{
	return pf_ranges_find(&g->maps, addr);
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

/* The location (dso, addr) — addr in map-address space — seen at runtime ip,
 * symbolized once when new. */
static uint32_t loc_get(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip, char level)
{
	struct pf_profile_priv *pr = p->priv;
	int inserted;
	uint32_t *slot = pair_table_find(&pr->loc_tab, dso, addr, 1, &inserted);
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
	l->sym = PF_NONE;
	l->addr = addr;
	l->ip = ip;
	l->level = level;
	l->srcline = PF_NONE;
	if (dso != PF_NONE) {
		sym_dso *sd = dso_sd(p, dso);
		sym_info si;
		if (sd && sym_lookup(sd, addr, &si)) {
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
		slot = pair_table_find(&pr->loc_tab, dso, addr, 0, NULL);
		if (slot)
			*slot = id | LOC_FINAL;
	}
	return id;
}

static uint32_t resolve_loc(pf_profile *p, const pthread_ *t, int cpumode, uint64_t ip)
{
	struct pf_profile_priv *pr = p->priv;
	const pmap *m = NULL;
	bool kernel = cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL;
	uint32_t g = kernel ? pr->kernel_mg : t ? t->mg : PF_NONE;
	uint32_t gen = g != PF_NONE ? pr->mgs[g].gen : 0;
	/* hot ips repeat: a small direct-mapped cache of (maps, ip) -> location
	 * before the map search and the location table */
	loc_cache_ent *c = &pr->loc_cache[pf_hash64(ip ^ ((uint64_t)g << 40)) & (LOC_CACHE_N - 1)];
	if (c->ip == ip && c->mg == g && c->gen == gen && c->cpumode == (uint32_t)cpumode && c->loc != PF_NONE)
		return c->loc;
	if (g != PF_NONE)
		m = mg_find(&pr->mgs[g], ip);
	uint32_t dso = PF_NONE;
	uint64_t addr = ip;
	if (m) {
		dso = m->dso;
		if (p->dsos[dso].kind == SYM_DSO_KERNEL || p->dsos[dso].kind == SYM_DSO_MODULE)
			addr = ip;                     /* kernel maps use identity addresses */
		else
			addr = ip - m->start + m->pgoff;
	}
	uint32_t l = loc_get(p, dso, addr, ip, level_of(cpumode));
	*c = (loc_cache_ent){ ip, g, gen, l, (uint32_t)cpumode };
	return l;
}

static uint32_t node_child(pf_profile *p, uint32_t parent, uint32_t loc)
{
	int inserted;
	uint32_t *slot = u32x2_table_find(&p->priv->node_tab, parent, loc, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	if (PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)p->nr_nodes++;
	p->nodes[id] = (pf_node){ parent, loc, p->nodes[parent].depth + 1 };
	*slot = id;
	return id;
}

/* The node of a sample ip whose callchain was discarded: a child of the
 * root apart from the ordinary one of the same location (found under the
 * pseudo-parent key NOCHAIN_KEY), flagged in p->nochain. */
#define NOCHAIN_KEY 0xfffffffeu
static uint32_t nochain_node(pf_profile *p, uint32_t loc)
{
	int inserted;
	uint32_t *slot = u32x2_table_find(&p->priv->node_tab, NOCHAIN_KEY, loc, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	uint32_t id = (uint32_t)p->nr_nodes;
	size_t old = p->cap_nochain;
	if (PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0 ||
	    PF_GROW(p->nochain, p->cap_nochain, (size_t)id + 1) < 0)
		return PF_NONE;
	memset(p->nochain + old, 0, p->cap_nochain - old);
	p->nodes[id] = (pf_node){ 0, loc, 1 };
	p->nochain[id] = 1;
	p->nr_nodes++;
	*slot = id;
	return id;
}

/* Build the leaf node for a sample from its callchain (or its ip alone). */
static uint32_t build_stack(pf_profile *p, const pthread_ *t, const pd_sample *s, bool use_cc)
{
	struct pf_profile_priv *pr = p->priv;
	size_t n = 0;
	uint64_t nr = use_cc ? s->nr_callchain : 0;
	if (PF_GROW(pr->scratch_locs, pr->cap_scratch, (size_t)nr + 2) < 0)
		return PF_NONE;
	int max = pr->opts.max_stack;
	if (nr) {
		int cpumode = PD_CPUMODE_USER;
		bool first = true;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip = s->callchain[i];
			if (ip >= PD_CONTEXT_MAX) {
				bool valid = true;
				switch (ip) {
				case PD_CONTEXT_HV: cpumode = PD_CPUMODE_HYPERVISOR; break;
				case PD_CONTEXT_KERNEL: cpumode = PD_CPUMODE_KERNEL; break;
				case PD_CONTEXT_USER: cpumode = PD_CPUMODE_USER; break;
				case PD_CONTEXT_GUEST_KERNEL: cpumode = PD_CPUMODE_GUEST_KERNEL; break;
				case PD_CONTEXT_GUEST_USER: cpumode = PD_CPUMODE_GUEST_USER; break;
				default: valid = false; break;
				}
				if (!valid) {
					/* an unknown context value (seen: -1 after a user
					 * frame): the chain is corrupt, and perf discards all
					 * of it; the sample keeps its own ip, in a node of its
					 * own marked as having no callchain */
					uint32_t l = resolve_loc(p, t, s->cpumode, s->ip);
					return l == PF_NONE ? PF_NONE : nochain_node(p, l);
				}
				continue;
			}
			if (first && ip != s->ip) {
				/* chain does not start at the sample ip: keep the ip as leaf */
				uint32_t l = resolve_loc(p, t, s->cpumode, s->ip);
				if (l == PF_NONE)
					return PF_NONE;
				pr->scratch_locs[n++] = l;
			}
			first = false;
			if (max > 0 && (int)n >= max)
				break;
			uint32_t l = resolve_loc(p, t, cpumode, ip);
			if (l == PF_NONE)
				return PF_NONE;
			pr->scratch_locs[n++] = l;
		}
	}
	if (n == 0) {
		uint32_t l = resolve_loc(p, t, s->cpumode, s->ip);
		if (l == PF_NONE)
			return PF_NONE;
		pr->scratch_locs[n++] = l;
	}
	/* insert root-first */
	uint32_t node = 0;
	for (size_t i = n; i-- > 0;) {
		node = node_child(p, node, pr->scratch_locs[i]);
		if (node == PF_NONE)
			return PF_NONE;
	}
	return node;
}

static inline uint8_t *put_varint(uint8_t *e, uint64_t v)
{
	while (v >= 0x80) {
		*e++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*e++ = (uint8_t)v;
	return e;
}

/* The raw-stack table: 8-byte slots (the hash's upper half as a tag and the
 * id); growing rehashes from the stored keys. */
typedef struct raw_slot { uint32_t tag, id; } raw_slot;   /* id + 1, 0 = empty */

static int raw_grow(struct pf_profile_priv *pr)
{
	size_t ncap = pr->raw_cap ? pr->raw_cap * 2 : 1024;
	raw_slot *s = pf_calloc(ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < pr->raw_cap; i++) {
		uint32_t id = pr->raw_s[i].id;
		if (!id)
			continue;
		const uint8_t *o = pr->raw_keys[id - 1];
		uint64_t h = pf_hash_bytes(o + 2, (size_t)(o[0] | o[1] << 8), 0);
		size_t j = h & (ncap - 1);
		while (s[j].id)
			j = (j + 1) & (ncap - 1);
		s[j] = pr->raw_s[i];
	}
	free(pr->raw_s);
	pr->raw_s = s;
	pr->raw_cap = ncap;
	return 0;
}

/* raw stack cache: (mg, gen, cpumode, ip, callchain) -> leaf node */
static uint32_t stack_of(pf_profile *p, const pthread_ *t, const pd_sample *s)
{
	struct pf_profile_priv *pr = p->priv;
	bool use_cc = pr->opts.use_callchain && s->callchain;
	uint64_t nr = use_cc ? s->nr_callchain : 0;
	if (!nr) {
		/* the ip alone: its location (a map lookup and one probe of a
		 * table as small as the code touched) and that location's leaf */
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
			pr->loc_leaf[l] = node_child(p, 0, l);
		return pr->loc_leaf[l];
	}
	uint32_t mg = t ? t->mg : PF_NONE;
	uint32_t gen = mg != PF_NONE ? pr->mgs[mg].gen : 0;
	uint32_t kgen = pr->mgs[pr->kernel_mg].gen;
	/* the key, packed: map state, cpumode, ip and the callchain as
	 * differences to the previous entry (frames of one stack are close:
	 * 2-4 bytes each instead of 8) */
	if (PF_GROW(pr->kscratch, pr->cap_kscratch, (size_t)nr * 10 + 64) < 0)
		return PF_NONE;
	uint8_t *k = pr->kscratch + 2, *e = k;
	e = put_varint(e, mg);
	e = put_varint(e, gen);
	e = put_varint(e, kgen);
	*e++ = (uint8_t)s->cpumode;
	e = put_varint(e, nr);
	e = put_varint(e, s->ip);
	uint64_t prev = s->ip;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t d = s->callchain[i] - prev;
		e = put_varint(e, (d << 1) ^ (uint64_t)((int64_t)d >> 63));   /* zigzag */
		prev = s->callchain[i];
	}
	size_t klen = (size_t)(e - k);
	if (klen > UINT16_MAX)
		return build_stack(p, t, s, use_cc);    /* not cached: > 6,000 frames */
	uint64_t h = pf_hash_bytes(k, klen, 0);
	if ((pr->raw_len + 1) * 2 > pr->raw_cap && raw_grow(pr) < 0)
		return PF_NONE;
	uint32_t tag = (uint32_t)(h >> 32);
	size_t j = h & (pr->raw_cap - 1);
	while (pr->raw_s[j].id) {
		if (pr->raw_s[j].tag == tag) {
			const uint8_t *o = pr->raw_keys[pr->raw_s[j].id - 1];
			if ((size_t)(o[0] | o[1] << 8) == klen && !memcmp(o + 2, k, klen))
				return pr->raw_leaf[pr->raw_s[j].id - 1];
		}
		j = (j + 1) & (pr->raw_cap - 1);
	}
	uint32_t leaf = build_stack(p, t, s, use_cc);
	if (leaf == PF_NONE)
		return PF_NONE;
	/* the stack build may have grown nothing in tab; j is still valid */
	size_t cap2 = pr->capraw;
	if (PF_GROW(pr->raw_keys, cap2, pr->nraw + 1) < 0 ||
	    PF_GROW(pr->raw_leaf, pr->capraw, pr->nraw + 1) < 0)
		return PF_NONE;
	if (pr->kfree < klen + 2) {
		pr->kchunk = pf_arena_alloc(&pr->raw_arena, 1 << 20);
		if (!pr->kchunk)
			return PF_NONE;
		pr->kfree = 1 << 20;
	}
	uint8_t *stored = pr->kchunk;
	pr->kchunk += klen + 2;
	pr->kfree -= klen + 2;
	pr->kscratch[0] = (uint8_t)klen;
	pr->kscratch[1] = (uint8_t)(klen >> 8);
	memcpy(stored, pr->kscratch, klen + 2);
	pr->raw_keys[pr->nraw] = stored;
	pr->raw_leaf[pr->nraw] = leaf;
	pr->raw_s[j].id = (uint32_t)pr->nraw + 1;
	pr->raw_s[j].tag = tag;
	pr->raw_len++;
	pr->nraw++;
	return leaf;
}

/* Aggregated samples are found through their stack: every node keeps the
 * last sample used there, and samples with the same stack are chained
 * (other threads, comms or cpus; the one found is moved to the front). The per-node array
 * is small and stays in the cache, unlike a hash table over all samples. */
static int add_sample(pf_profile *p, uint32_t evsel, uint32_t thread, uint32_t pid, uint32_t tid,
		      uint32_t comm, uint32_t cpu, uint32_t stack, uint64_t period)
{
	struct pf_profile_priv *pr = p->priv;
	if (stack >= pr->cap_node_sample) {
		size_t old = pr->cap_node_sample;
		if (PF_GROW(pr->node_sample, pr->cap_node_sample, (size_t)stack + 1) < 0)
			return -1;
		memset(pr->node_sample + old, 0xff, (pr->cap_node_sample - old) * sizeof(uint32_t));
	}
	for (uint32_t id = pr->node_sample[stack], prev = PF_NONE; id != PF_NONE; prev = id, id = pr->sample_next[id]) {
		pf_sample *s = &p->samples[id];
		if (s->evsel == evsel && s->pid == pid && s->tid == tid && s->comm == comm &&
		    s->cpu == cpu && s->thread == thread && s->count < UINT32_MAX) {
			s->period += period;
			s->count++;
			if (prev != PF_NONE) {
				/* to the front: a thread's samples come in runs, and a
				 * location many threads hit has a long chain */
				pr->sample_next[prev] = pr->sample_next[id];
				pr->sample_next[id] = pr->node_sample[stack];
				pr->node_sample[stack] = id;
			}
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
	return (int)id;
}

/* merge_threads: the first event's samples are summed per stack node in a
 * small array (16 bytes a node instead of a sample record each), and
 * become pf_samples, in order of first occurrence, when the file is read. */
typedef struct node_acc { uint64_t period, count; } node_acc;

static int merged_sample(pf_profile *p, uint32_t evsel, uint32_t stack, uint64_t period)
{
	struct pf_profile_priv *pr = p->priv;
	if (evsel != 0)
		return add_sample(p, evsel, 0, 0, 0, 0, PF_NONE, stack, period);
	if (stack >= pr->cap_acc) {
		size_t old = pr->cap_acc;
		if (PF_GROW(pr->acc, pr->cap_acc, (size_t)stack + 1) < 0)
			return -1;
		memset(pr->acc + old, 0, (pr->cap_acc - old) * sizeof(*pr->acc));
	}
	node_acc *a = &pr->acc[stack];
	if (!a->count) {
		if (PF_GROW(pr->acc_order, pr->cap_acc_order, pr->nacc + 1) < 0)
			return -1;
		pr->acc_order[pr->nacc++] = stack;
	}
	a->period += period;
	a->count++;
	return 0;
}

static int make_merged_samples(pf_profile *p)
{
	struct pf_profile_priv *pr = p->priv;
	for (size_t i = 0; i < pr->nacc; i++) {
		uint32_t stack = pr->acc_order[i];
		node_acc *a = &pr->acc[stack];
		/* counts beyond a pf_sample's u32 continue in more samples */
		while (a->count) {
			uint32_t c = a->count > UINT32_MAX ? UINT32_MAX : (uint32_t)a->count;
			uint64_t per = c == a->count ? a->period : 0;
			size_t cap = p->cap_samples;
			if (PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1) < 0 ||
			    PF_GROW(pr->sample_next, cap, p->nr_samples + 1) < 0)
				return -1;
			p->samples[p->nr_samples++] = (pf_sample){ .evsel = 0, .thread = 0, .pid = 0, .tid = 0, .comm = 0,
								    .cpu = PF_NONE, .stack = stack, .count = c,
								    .period = per };
			a->count -= c;
			a->period -= per;
		}
	}
	return 0;
}

/* ---- record handling ------------------------------------------------------------- */

static bool time_kept(const struct pf_profile_priv *pr, uint64_t t)
{
	if (!pr->nranges)
		return true;
	for (size_t i = 0; i < pr->nranges; i++)
		if (t >= pr->ranges[i].start && (!pr->ranges[i].end || t <= pr->ranges[i].end))
			return true;
	return false;
}

static int on_event(void *ctx, const pd_event *ev)
{
	pf_profile *p = ctx;
	struct pf_profile_priv *pr = p->priv;
	switch (ev->type) {
	case PD_SAMPLE: {
		const pd_sample *s = &ev->u.sample;
		if (s->evsel < 0 || (size_t)s->evsel >= p->nr_events)
			return 0;
		pf_event *e = &p->events[s->evsel];
		if (!time_kept(pr, s->time))
			return 0;
		uint32_t cpu = e->has_cpu ? s->cpu : PF_NONE;
		if (pr->opts.cpu_mask && e->has_cpu) {
			if (s->cpu >= pr->opts.cpu_mask_bits ||
			    !(pr->opts.cpu_mask[s->cpu / 8] & (1u << (s->cpu % 8))))
				return 0;
		}
		pthread_ *t = find_thread(p, s->pid, s->tid, true);
		if (!t)
			return oom(p);
		uint32_t stack = stack_of(p, t, s);
		if (stack == PF_NONE)
			return oom(p);
		uint64_t period = s->period;   /* the reader gives attr.sample_period when not sampled */
		if (pr->opts.merge_threads ? merged_sample(p, (uint32_t)s->evsel, stack, period) < 0 :
		    add_sample(p, (uint32_t)s->evsel, (uint32_t)(t - pr->threads), s->pid, s->tid, t->comm,
			       cpu, stack, period) < 0)
			return oom(p);
		e->total_period += period;
		e->nr_samples++;
		if (!p->first_time || s->time < p->first_time)
			p->first_time = s->time;
		if (s->time > p->last_time)
			p->last_time = s->time;
		return 0;
	}
	case PD_COMM: {
		pthread_ *t = find_thread(p, ev->u.comm.pid, ev->u.comm.tid, true);
		if (!t)
			return oom(p);
		int64_t c = intern(p, ev->u.comm.comm ? ev->u.comm.comm : "");
		if (c < 0)
			return oom(p);
		t->comm = (uint32_t)c;
		return 0;
	}
	case PD_FORK: {
		uint32_t pid = ev->u.fork.pid, ppid = ev->u.fork.ppid;
		uint32_t tid = ev->u.fork.tid, ptid = ev->u.fork.ptid;
		pthread_ *parent = find_thread(p, ppid, ptid, true);
		if (!parent)
			return oom(p);
		uint32_t pcomm = parent->comm, pmg = parent->mg;
		if (pid != ppid) {
			/* new process: it gets a copy of the parent's maps */
			uint32_t mg = new_mg(p);
			if (mg == PF_NONE)
				return oom(p);
			if (mg_clone(&pr->mgs[mg], &pr->mgs[pmg]) < 0)
				return oom(p);
			uint64_t *slot = pf_map64_upsert(&pr->pid2mg, pid, NULL);
			if (!slot)
				return oom(p);
			*slot = mg;
		}
		/* a fresh thread record (a reused tid starts over) */
		uint64_t *ts = pf_map64_upsert(&pr->tid2thread, tid, NULL);
		if (!ts || PF_GROW(pr->threads, pr->capthreads, pr->nthreads + 1) < 0)
			return oom(p);
		pr->last_thread = PF_NONE;
		pthread_ *t = &pr->threads[pr->nthreads];
		t->pid = pid;
		t->tid = tid;
		t->comm = pcomm;
		t->mg = mg_of_pid(p, pid, true);
		if (t->mg == PF_NONE)
			return oom(p);
		*ts = pr->nthreads++;
		return 0;
	}
	case PD_MMAP:
	case PD_MMAP2: {
		int cpumode = ev->misc & PD_CPUMODE_MASK;
		const char *fn = ev->u.mmap.filename ? ev->u.mmap.filename : "";
		uint32_t dso = get_dso(p, fn, cpumode,
				       ev->u.mmap.has_build_id ? ev->u.mmap.build_id : NULL,
				       ev->u.mmap.has_build_id ? ev->u.mmap.build_id_size : 0);
		if (dso == PF_NONE)
			return oom(p);
		uint64_t start = ev->u.mmap.start, len = ev->u.mmap.len;
		uint64_t end = start + len < start ? UINT64_MAX : start + len;
		mgroup *g;
		if (cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) {
			g = &pr->mgs[pr->kernel_mg];
			if (p->dsos[dso].kind == SYM_DSO_KERNEL && p->syms_ctx)
				sym_kernel_set_ref(p->syms_ctx, ev->u.mmap.pgoff);
		} else {
			pthread_ *t = find_thread(p, ev->u.mmap.pid, ev->u.mmap.tid, true);
			if (!t)
				return oom(p);
			g = &pr->mgs[t->mg];
		}
		if (mg_insert(g, start, end, ev->u.mmap.pgoff, dso) < 0)
			return oom(p);
		return 0;
	}
	case PD_LOST:
		p->nr_lost_samples += ev->u.lost.lost;
		return 0;
	case PD_LOST_SAMPLES:
		p->nr_lost_samples += ev->u.lost_samples.lost;
		return 0;
	default:
		return 0;
	}
}

/* ---- time specs ------------------------------------------------------------------ */

static int parse_abs_time(const char *s, size_t n, uint64_t *out)
{
	/* "sec.usec" (perf prints sample times as seconds with 6 decimals) */
	char buf[64];
	if (n == 0) {
		*out = 0;
		return 0;
	}
	if (n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	char *end;
	unsigned long long sec = strtoull(buf, &end, 10);
	uint64_t ns = 0;
	if (*end == '.') {
		const char *f = end + 1;
		int digits = 0;
		while (*f >= '0' && *f <= '9' && digits < 9) {
			ns = ns * 10 + (uint64_t)(*f - '0');
			f++;
			digits++;
		}
		while (digits++ < 9)
			ns *= 10;
		while (*f >= '0' && *f <= '9')
			f++;
		end = (char *)f;
	}
	if (*end)
		return -1;
	*out = sec * 1000000000ULL + ns;
	return 0;
}

int pf_parse_time_spec(const char *spec, size_t file_idx, size_t nfiles,
		       uint64_t first, uint64_t last,
		       pf_time_range **ranges, size_t *nranges, proff_error *err)
{
	*ranges = NULL;
	*nranges = 0;
	if (!spec || !*spec)
		return 0;
	bool percent = strchr(spec, '%') != NULL;
	size_t cap = 0;
	pf_time_range *r = NULL;
	if (percent) {
		/* comma separated items: "a%-b%" or "N%/M" */
		const char *p = spec;
		while (*p) {
			const char *c = strchr(p, ',');
			size_t n = c ? (size_t)(c - p) : strlen(p);
			char item[64];
			if (n >= sizeof(item))
				goto bad;
			memcpy(item, p, n);
			item[n] = '\0';
			double a, b;
			int m;
			uint64_t span = last > first ? last - first : 0;
			pf_time_range tr;
			if (sscanf(item, "%lf%%/%d", &a, &m) == 2 && strchr(item, '/')) {
				if (a <= 0 || a > 100 || m < 1 || (double)m * a > 100.0 + 1e-9)
					goto bad;
				tr.start = first + (uint64_t)((double)span * a * (m - 1) / 100.0);
				tr.end = first + (uint64_t)((double)span * a * m / 100.0);
			} else if (sscanf(item, "%lf%%-%lf%%", &a, &b) == 2) {
				if (a < 0 || b > 100 || a > b)
					goto bad;
				tr.start = first + (uint64_t)((double)span * a / 100.0);
				tr.end = first + (uint64_t)((double)span * b / 100.0);
			} else {
				goto bad;
			}
			if (PF_GROW(r, cap, *nranges + 1) < 0) {
				free(r);
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			}
			r[(*nranges)++] = tr;
			if (!c)
				break;
			p = c + 1;
		}
		*ranges = r;
		return 0;
	}
	/* absolute: "start,stop" with ':' separating per-file ranges */
	const char *p = spec;
	for (size_t i = 0; i < file_idx; i++) {
		const char *c = strchr(p, ':');
		if (!c) {
			/* fewer ranges than files: this file gets nothing kept? perf applies
			 * only the given ranges; files without one are not filtered */
			(void)nfiles;
			return 0;
		}
		p = c + 1;
	}
	const char *colon = strchr(p, ':');
	size_t n = colon ? (size_t)(colon - p) : strlen(p);
	const char *comma = memchr(p, ',', n);
	if (!comma)
		goto bad;
	pf_time_range tr;
	if (parse_abs_time(p, (size_t)(comma - p), &tr.start) < 0 ||
	    parse_abs_time(comma + 1, n - (size_t)(comma + 1 - p), &tr.end) < 0)
		goto bad;
	r = malloc(sizeof(*r));
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	r[0] = tr;
	*ranges = r;
	*nranges = 1;
	return 0;
bad:
	free(r);
	*ranges = NULL;
	*nranges = 0;
	return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "invalid time string '%s'", spec);
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

int pf_profile_load(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err)
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
	pr->last_thread = PF_NONE;
	pr->loc_cache = malloc(LOC_CACHE_N * sizeof(*pr->loc_cache));
	if (!pr->loc_cache) {
		free(pr);
		free(p);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	for (size_t i = 0; i < LOC_CACHE_N; i++)
		pr->loc_cache[i].loc = PF_NONE;
	if (opts)
		pr->opts = *opts;
	else
		pf_load_opts_init(&pr->opts);
	p->path = strdup(path);
	int rc;
	if (!p->path || pf_strtab_init(&p->strs) < 0) {
		rc = oom(p);
		goto fail;
	}
	pf_arena_init(&pr->raw_arena);
	if (pf_is_trace_file(path)) {
		/* an exact profile: lib/model/trace-model.c */
		sym_opts to = {
			.symfs = pr->opts.symfs, .buildid_dir = pr->opts.buildid_dir, .demangle = true,
			.demangle_params = pr->opts.demangle_params, .inline_frames = pr->opts.inline_frames,
		};
		if ((rc = sym_ctx_new(&to, &p->syms_ctx, err)) < 0)
			goto fail;
		if (PF_GROW(p->nodes, p->cap_nodes, 1) < 0) {
			rc = oom(p);
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
	pr->rd = rd;

	/* events */
	p->nr_events = pd_nr_attrs(rd);
	p->events = calloc(p->nr_events ? p->nr_events : 1, sizeof(pf_event));
	if (!p->events) {
		pd_close(rd);
		rc = oom(p);
		goto fail;
	}
	for (size_t i = 0; i < p->nr_events; i++) {
		const pd_attr *a = pd_get_attr(rd, i);
		pf_event *e = &p->events[i];
		e->name = strdup(a->name ? a->name : "unknown");
		e->type = a->type;
		e->config = a->config;
		e->sample_type = a->sample_type;
		e->has_callchain = (a->sample_type & PD_S_CALLCHAIN) != 0;
		e->has_cpu = (a->sample_type & PD_S_CPU) != 0;
		e->has_branch_stack = (a->sample_type & PD_S_BRANCH_STACK) != 0;
	}
	p->has_branch_stack_feature = pd_has_feature(rd, PD_FEAT_BRANCH_STACK);

	/* header build-ids */
	const pd_header *hdr = pd_get_header(rd);
	pr->bids = hdr->build_ids;
	pr->nbids = hdr->nr_build_ids;
	for (size_t i = 0; i < hdr->nr_build_ids; i++) {
		const char *fn = hdr->build_ids[i].filename ? hdr->build_ids[i].filename : "";
		int64_t id = intern(p, fn);
		uint64_t *slot = id < 0 ? NULL : pf_map64_upsert(&pr->name2bid, (uint64_t)id, NULL);
		if (!slot) {
			pd_close(rd);
			rc = oom(p);
			goto fail;
		}
		*slot = i;
	}

	sym_opts so = {
		.symfs = pr->opts.symfs,
		.kallsyms = pr->opts.kallsyms,
		.buildid_dir = pr->opts.buildid_dir,
		.recorded_osrelease = hdr->osrelease,
		.demangle = true,
		.demangle_params = pr->opts.demangle_params,
		.inline_frames = pr->opts.inline_frames,
	};
	rc = sym_ctx_new(&so, &p->syms_ctx, err);
	if (rc < 0) {
		pd_close(rd);
		goto fail;
	}
	pr->kernel_mg = new_mg(p);
	if (pr->kernel_mg == PF_NONE || PF_GROW(p->nodes, p->cap_nodes, 1) < 0) {
		pd_close(rd);
		rc = oom(p);
		goto fail;
	}
	p->nodes[0] = (pf_node){ 0, PF_NONE, 0 };
	p->nr_nodes = 1;

	/* --time: percent ranges need the first/last sample time */
	if (pr->opts.time_spec) {
		uint64_t first = hdr->sample_time_first, last = hdr->sample_time_last;
		if (strchr(pr->opts.time_spec, '%') && (!first || !last || last <= first)) {
			rc = pd_process(rd, false, on_time_only, p, err);
			if (rc < 0) {
				pd_close(rd);
				goto fail;
			}
			first = p->first_time;
			last = p->last_time;
			p->first_time = p->last_time = 0;
			pd_close(rd);
			rc = pd_open(path, &rd, err);
			if (rc < 0)
				goto fail;
			pr->rd = rd;
			hdr = pd_get_header(rd);
			pr->bids = hdr->build_ids;
		}
		rc = pf_parse_time_spec(pr->opts.time_spec, 0, 1, first, last, &pr->ranges, &pr->nranges, err);
		if (rc < 0) {
			pd_close(rd);
			goto fail;
		}
	}

	rc = pd_process(rd, true, on_event, p, err);
	if (rc > 0)
		rc = PROFF_ENOMEM;   /* our callback only stops on allocation failure (err set) */
	for (size_t i = 0; i < pd_nr_warnings(rd); i++) {
		size_t cap = p->nr_warnings;
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(pd_warning(rd, i));
	}
	pd_close(rd);
	pr->rd = NULL;
	pr->bids = NULL;
	pr->nbids = 0;
	if (rc < 0)
		goto fail;
	if (make_merged_samples(p) < 0) {
		rc = oom(p);
		goto fail;
	}
threads:
	p->threads = calloc(pr->nthreads ? pr->nthreads : 1, sizeof(pf_thread));
	if (!p->threads) {
		rc = oom(p);
		goto fail;
	}
	for (size_t i = 0; i < pr->nthreads; i++)
		p->threads[i] = (pf_thread){ pr->threads[i].pid, pr->threads[i].tid, pr->threads[i].comm };
	p->nr_threads = pr->nthreads;
	release_load_state(pr);
	*out = p;
	return 0;
fail:
	pf_profile_free(p);
	return rc;
}

/* The loader's interning tables, maps and raw stacks: needed while records
 * arrive, not afterwards (the raw callchains alone can be tens of MB). */
static void release_load_state(struct pf_profile_priv *pr)
{
	free(pr->threads);
	pr->threads = NULL;
	pr->nthreads = pr->capthreads = 0;
	pf_map64_free(&pr->tid2thread);
	pf_map64_free(&pr->pid2mg);
	for (size_t i = 0; i < pr->nmgs; i++)
		pf_ranges_free(&pr->mgs[i].maps);
	free(pr->mgs);
	pr->mgs = NULL;
	pr->nmgs = pr->capmgs = 0;
	pf_map64_free(&pr->name2dso);
	pf_map64_free(&pr->name2bid);
	pair_table_free(&pr->loc_tab);
	pair_table_free(&pr->sym_tab);
	u32x2_table_free(&pr->node_tab);
	free(pr->raw_s);
	pr->raw_s = NULL;
	pr->raw_cap = pr->raw_len = 0;
	free(pr->node_sample);
	pr->node_sample = NULL;
	pr->cap_node_sample = 0;
	free(pr->acc);
	pr->acc = NULL;
	pr->cap_acc = 0;
	free(pr->acc_order);
	pr->acc_order = NULL;
	pr->nacc = pr->cap_acc_order = 0;
	free(pr->sample_next);
	pr->sample_next = NULL;
	free(pr->raw_keys);
	free(pr->raw_leaf);
	pr->raw_keys = NULL;
	pr->raw_leaf = NULL;
	pr->nraw = pr->capraw = 0;
	pf_arena_free(&pr->raw_arena);
	pr->kchunk = NULL;
	pr->kfree = 0;
	free(pr->kscratch);
	pr->kscratch = NULL;
	pr->cap_kscratch = 0;
	free(pr->ranges);
	pr->ranges = NULL;
	pr->nranges = 0;
	free(pr->scratch_locs);
	pr->scratch_locs = NULL;
	pr->cap_scratch = 0;
	free(pr->loc_leaf);
	pr->loc_leaf = NULL;
	pr->cap_loc_leaf = 0;
	free(pr->loc_cache);
	pr->loc_cache = NULL;
}

void pf_profile_free(pf_profile *p)
{
	if (!p)
		return;
	struct pf_profile_priv *pr = p->priv;
	if (pr) {
		release_load_state(pr);
		free(pr);
	}
	for (size_t i = 0; i < p->nr_events; i++)
		free(p->events[i].name);
	free(p->events);
	free(p->dsos);
	free(p->syms);
	free(p->locs);
	free(p->nodes);
	free(p->nochain);
	free(p->samples);
	free(p->exact);
	free(p->threads);
	for (size_t i = 0; i < p->nr_warnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	if (p->syms_ctx)
		sym_ctx_free(p->syms_ctx);
	pf_strtab_free(&p->strs);
	free(p->path);
	free(p);
}

/* ---- the builder interface of model-int.h (exact traces) ------------------------- */

uint32_t pf__dso(pf_profile *p, const char *path)
{
	return get_dso(p, path, PD_CPUMODE_USER, NULL, 0);
}

uint32_t pf__loc(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip)
{
	return loc_get(p, dso, addr, ip, '.');
}

uint32_t pf__node(pf_profile *p, uint32_t parent, uint32_t loc)
{
	return node_child(p, parent, loc);
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
	return (uint32_t)(t - p->priv->threads);
}

int pf__sample(pf_profile *p, uint32_t thread, uint32_t stack, uint64_t period)
{
	const pthread_ *t = &p->priv->threads[thread];
	return add_sample(p, 0, thread, t->pid, t->tid, t->comm, PF_NONE, stack, period);
}

/* ---- srcline --------------------------------------------------------------------- */

const char *pf_loc_srcline(pf_profile *p, uint32_t loc)
{
	pf_loc *l = &p->locs[loc];
	if (l->srcline != PF_NONE)
		return pf_str(p, l->srcline);
	char buf[4096];
	sym_dso *sd = l->dso != PF_NONE ? dso_sd(p, l->dso) : NULL;
	if (sd) {
		sym_srcline_str(sd, l->addr, false, buf, sizeof(buf));
	} else if (l->dso != PF_NONE) {
		snprintf(buf, sizeof(buf), "%s[%llx]", pf_str(p, p->dsos[l->dso].short_name),
			 (unsigned long long)l->addr);
	} else {
		snprintf(buf, sizeof(buf), "[unknown][%llx]", (unsigned long long)l->addr);
	}
	int64_t id = pf_strtab_intern(&p->strs, buf, strlen(buf));
	if (id < 0)
		return "??";
	l->srcline = (uint32_t)id;
	return pf_str(p, l->srcline);
}
