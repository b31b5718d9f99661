/* stream.c — hot streams of one perf.data file (`proff diff --stream`).
 *
 * Reads the records with pd_process (time order), keeps the processes and
 * their maps in the perf.data loaders' one process model (lib/model/machine.c:
 * dsos, threads, map groups, COMM/FORK/EXIT/MMAP/MMAP2), resolves addresses
 * through the symbolizer (cached per dso and address in this loader's view
 * of each dso), and aggregates each sample's path in a per-entry
 * trie keyed by source line, the way perf 6.1 does for `perf diff --stream`:
 *   entry  = (srcline, symbol, dso) of the sample ip;
 *   path   = branch stack entries (newest first, loops removed, each as
 *            target then source) followed by the callchain, truncated as
 *            perf truncates it; without branch stacks, the callchain alone;
 *   trie   = radix tree of paths, children ordered by source line, nodes
 *            split where paths diverge; a node's `hit` is the period of the
 *            paths ending there;
 *   streams= nodes with hit >= min_percent of the total period, entries in
 *            (srcline, symbol, dso) order, nodes by hit; the top N kept in
 *            perf's slot order.
 * Without branch stacks a stream is the full path of its node (root first
 * segment to the node), which is what a callchain user expects to compare.
 *
 * A hist entry whose period is under min_percent of the total holds no
 * stream, and an entry's period is at most that of its (symbol, dso): so
 * --stream first reads the file only to add up the period of each (symbol,
 * dso) of sample ips (no source lines, no paths), then builds paths and
 * tries only for the samples of groups that reach min_percent. The source
 * lines of the rest (often start-up and exit code deep in libc or ld.so,
 * whose DWARF is costly to read) are never looked up.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "proff/perfdata.h"
#include "proff/profile.h"
#include "proff/stream.h"
#include "proff/symbol.h"
#include "proff/unwind.h"
#include "proff/util.h"
#include "stream-int.h"

#define MAX_STACK 127           /* PERF_MAX_STACK_DEPTH */
#define MAX_BRANCH_DEPTH 127    /* PERF_MAX_BRANCH_DEPTH */

void st_opts_init(st_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->top = 5;
	o->min_percent = 0.5;
}

/* ---- dsos (the machine's), maps, address cache --------------------------- */

/* The loader's view of the machine's new dsos: names, kind, a symbolizer
 * handle (anonymous memory has none) and empty address caches. */
static int sync_dsos(st_side *s)
{
	if (s->nr_dsos == s->nr_pdsos)
		return 0;
	if (PF_GROW(s->dsos, s->cap_dsos, s->nr_pdsos) < 0)
		return -1;
	for (; s->nr_dsos < s->nr_pdsos; s->nr_dsos++) {
		const pf_dso *pd = &s->pdsos[s->nr_dsos];
		st_dso *d = &s->dsos[s->nr_dsos];
		memset(d, 0, sizeof(*d));
		d->name = s->strs.strs[pd->long_name];
		d->sname = s->strs.strs[pd->short_name];
		d->kind = pd->kind;
		d->sd = pd->kind == SYM_DSO_ANON ? NULL
			: pd->kind == SYM_DSO_MODULE && pd->has_kmod_start
			? sym_dso_get_kmodule(s->syms, d->name, pd->build_id_size ? pd->build_id : NULL,
					      pd->build_id_size, pd->kmod_start)
			: sym_dso_get(s->syms, d->name, pd->build_id_size ? pd->build_id : NULL,
				      pd->build_id_size, pd->kind);
		pf_map64_init(&d->cache);
		pf_map64_init(&d->gcache);
	}
	return 0;
}

/* the dso of a user-space file name */
static uint32_t get_dso(st_side *s, const char *filename)
{
	uint32_t d = pf_machine_dso(&s->m, filename, PD_CPUMODE_USER, NULL, 0);
	return d == PF_NONE || sync_dsos(s) < 0 ? ST_NONE : d;
}

/* the map at ip in the kernel's maps (K_KERNEL) or pid's */
static const st_map *mg_find_kind(const st_side *s, uint32_t pid, int cpumode, uint64_t ip)
{
	return pf_machine_find_map(&s->m, pid, cpumode, ip);
}

static const char *intern(st_side *s, const char *str)
{
	int64_t id = pf_strtab_intern(&s->strs, str, strlen(str));
	return id < 0 ? NULL : s->strs.strs[id];
}

enum { R_SRC = 1, R_SYM = 2, R_KEY = 4 };

/* Resolve a map address of a dso (cached), as far as asked: R_SRC the
 * callchain srcline, R_SYM the symbol, R_KEY the srcline sort-key text (for
 * hist entries). User symbols always come along (cheap); kernel and module
 * symbols only when asked: the callchain srcline of a kernel address is
 * "??:0" anyway, and reading kallsyms is the costliest step. */
static const st_addr *resolve(st_side *s, uint32_t dso, uint64_t maddr, unsigned want)
{
	st_dso *d = &s->dsos[dso];
	bool found;
	uint64_t *slot = pf_map64_upsert(&d->cache, maddr, &found);
	if (!slot)
		return NULL;
	st_addr *a;
	bool kernel = d->kind == SYM_DSO_KERNEL || d->kind == SYM_DSO_MODULE;
	if (found) {
		a = &s->addrs[*slot];
	} else {
		*slot = s->nr_addrs;
		if (PF_GROW(s->addrs, s->cap_addrs, s->nr_addrs + 1) < 0)
			return NULL;
		a = &s->addrs[s->nr_addrs++];
		memset(a, 0, sizeof(*a));
	}
	if ((want & R_SRC) && !a->have_src) {
		/* callchain srcline: "file:line" or "??:0" (perf's get_srcline
		 * without sym/addr: what addr2line says, "crtstuff.c:?" read as
		 * line 0 where DWARF has no line); for the kernel perf has no
		 * file to ask */
		const char *file = NULL;
		unsigned line = 0;
		if (d->sd && !kernel && sym_srcline_a2l(d->sd, maddr, &file, &line) && file) {
			const char *b = strrchr(file, '/');
			char buf[4096];
			snprintf(buf, sizeof(buf), "%s:%u", b ? b + 1 : file, line);
			a->srcline = intern(s, buf);
			a->path = file;
			a->line = line;
		} else {
			a->srcline = s->unknown_srcline;
		}
		if (!a->srcline)
			return NULL;
		a->have_src = true;
	}
	if (!a->have_sym && ((want & (R_SYM | R_KEY)) || !kernel || s->opts.cycles)) {
		sym_info si;
		if (d->sd && sym_lookup(d->sd, maddr, &si)) {
			a->sym = si.name;
			a->sym_start = si.start;
			a->sym_end = si.end;
		}
		a->have_sym = true;
	}
	if ((want & R_KEY) && !a->key_srcline) {
		/* the hist entry's srcline (perf's srcline sort key text) */
		char buf[4096];
		if (d->sd)
			sym_srcline_str(d->sd, maddr, false, buf, sizeof(buf));
		else
			snprintf(buf, sizeof(buf), "%s[%#llx]", d->sname, (unsigned long long)maddr);
		a->key_srcline = intern(s, buf);
		if (!a->key_srcline)
			return NULL;
	}
	return a;
}

/* cpumode-aware lookup of ip: the map and the map address */
static const st_map *find_map(st_side *s, uint32_t pid, int cpumode, uint64_t ip)
{
	return mg_find_kind(s, pid, cpumode, ip);
}

static uint64_t map_addr(const st_side *s, const st_map *m, uint64_t ip)
{
	const st_dso *d = &s->dsos[m->dso];
	if (d->kind == SYM_DSO_KERNEL || d->kind == SYM_DSO_MODULE)
		return ip;
	return ip - m->start + m->pgoff;
}

uint64_t st_map_addr(const st_side *s, const st_map *m, uint64_t ip)
{
	return map_addr(s, m, ip);
}

/* ---- the cursor (one sample's path) ------------------------------------- */

enum { K_ANY, K_USER, K_KERNEL };   /* how an ip is looked up */

static void cursor_set(st_side *s, st_cnode *c, const st_map *m, const st_addr *a, uint64_t ip,
		       bool branch, uint64_t flags, uint64_t branch_from)
{
	c->ip = ip;
	if (m) {
		c->dso = m->dso;
		c->maddr = map_addr(s, m, ip);
		c->sym = a->sym;
		c->sym_start = a->sym_start;
		c->srcline = a->srcline;
		c->path = a->path;
		c->line = a->line;
	} else {
		c->dso = ST_NONE;
		c->maddr = 0;
		c->sym = NULL;
		c->sym_start = 0;
		c->srcline = NULL;
		c->path = NULL;
		c->line = 0;
	}
	c->branch = branch;
	c->cycles = (flags >> 4) & 0xffff;
	c->branch_from = branch_from;
}

static int cursor_push(st_side *s, const st_map *m, uint64_t ip, bool branch, uint64_t flags,
		       uint64_t branch_from)
{
	if (PF_GROW(s->cur, s->cur_cap, s->cur_nr + 1) < 0)
		return -1;
	const st_addr *a = NULL;
	if (m && !(a = resolve(s, m->dso, map_addr(s, m, ip), R_SRC)))
		return -1;
	cursor_set(s, &s->cur[s->cur_nr++], m, a, ip, branch, flags, branch_from);
	return 0;
}

/* Branch and callchain addresses repeat a lot: the map and the resolved
 * address of (pid, ip, kind) come from a direct-mapped cache. K_ANY is
 * perf's thread__find_cpumode_addr_location for branches: kernel first. */
static int cursor_lookup(st_side *s, uint32_t pid, int kind, uint64_t ip, unsigned want,
			 const st_map **mp, const st_addr **ap)
{
	size_t h = (size_t)(pf_hash64(ip ^ ((uint64_t)pid << 40) ^ ((uint64_t)kind << 62)) & (ST_MAPCACHE - 1));
	st_mapcache *e = &s->mapcache[h];
	if (e->gen == s->map_gen && e->ip == ip && e->pid == pid && e->kind == kind) {
		*mp = e->m;
		*ap = NULL;
		if (!e->m)
			return 0;
		const st_addr *a = &s->addrs[e->addr];
		if (((want & R_SRC) && !a->have_src) || ((want & R_SYM) && !a->have_sym))
			a = resolve(s, e->m->dso, map_addr(s, e->m, ip), want);
		*ap = a;
		return a ? 0 : -1;
	}
	const st_map *m = NULL;
	if (kind != K_USER)
		m = mg_find_kind(s, pid, PD_CPUMODE_KERNEL, ip);
	if (!m && kind != K_KERNEL)
		m = mg_find_kind(s, pid, PD_CPUMODE_USER, ip);
	const st_addr *a = NULL;
	if (m && !(a = resolve(s, m->dso, map_addr(s, m, ip), want)))
		return -1;
	*e = (st_mapcache){ .ip = ip, .pid = pid, .kind = (uint8_t)kind, .gen = s->map_gen, .m = m,
			    .addr = a ? (uint32_t)(a - s->addrs) : ST_NONE };
	*mp = m;
	*ap = a;
	return 0;
}

static int cursor_add(st_side *s, uint32_t pid, int *cpumode, uint64_t ip,
		      bool branch, uint64_t flags, uint64_t branch_from)
{
	int kind = K_ANY;
	if (cpumode && ip == UW_CHAIN_ZERO_RETURN && s->uw) {
		ip = UINT64_MAX;        /* the unwinder's frame: perf's 0 - 1 */
		kind = K_USER;
	} else if (cpumode) {
		if (ip >= PD_CONTEXT_MAX) {
			if (ip == PD_CONTEXT_KERNEL)
				*cpumode = PD_CPUMODE_KERNEL;
			else if (ip == PD_CONTEXT_USER)
				*cpumode = PD_CPUMODE_USER;
			else if (ip == PD_CONTEXT_HV)
				*cpumode = PD_CPUMODE_HYPERVISOR;
			else if (ip == PD_CONTEXT_GUEST_KERNEL)     /* kept by perf 6.1 (checked) */
				*cpumode = PD_CPUMODE_GUEST_KERNEL;
			else if (ip == PD_CONTEXT_GUEST_USER)
				*cpumode = PD_CPUMODE_GUEST_USER;
			else {
				s->cur_nr = 0;    /* corrupted: perf discards the chain */
				return 1;
			}
			return 0;
		}
		kind = *cpumode == PD_CPUMODE_KERNEL || *cpumode == PD_CPUMODE_GUEST_KERNEL ? K_KERNEL : K_USER;
	}
	if (PF_GROW(s->cur, s->cur_cap, s->cur_nr + 1) < 0)
		return -1;
	const st_map *m;
	const st_addr *a;
	if (cursor_lookup(s, pid, kind, ip, R_SRC, &m, &a) < 0)
		return -1;
	cursor_set(s, &s->cur[s->cur_nr++], m, a, ip, branch, flags, branch_from);
	return 0;
}

const st_addr *st_lookup_sym(st_side *s, uint32_t pid, uint64_t ip, const st_map **m)
{
	const st_addr *a;
	*m = NULL;
	return cursor_lookup(s, pid, K_ANY, ip, R_SYM, m, &a) < 0 ? NULL : a;
}

/* perf's remove_loops: drop repeated sequences of branch sources */
#define CHASHSZ 127
#define CHASHBITS 7
static int remove_loops(pd_branch_entry *l, int nr)
{
	unsigned char chash[CHASHSZ];
	memset(chash, 0xff, sizeof(chash));
	for (int i = 0; i < nr; i++) {
		int h = (int)((l[i].from * 0x61C8864680B583EBull) >> (64 - CHASHBITS)) % CHASHSZ;
		if (chash[h] == 0xff) {
			chash[h] = (unsigned char)i;
		} else if (l[chash[h]].from == l[i].from) {
			bool is_loop = true;
			int off = 0, j;
			for (j = chash[h]; j < i && i + off < nr; j++, off++)
				if (l[j].from != l[i + off].from) {
					is_loop = false;
					break;
				}
			if (is_loop) {
				j = nr - (i + off);
				if (j > 0)
					memmove(l + i, l + i + off, (size_t)j * sizeof(*l));
				nr -= off;
			}
		}
	}
	return nr;
}

static int build_cursor(st_side *s, const pd_sample *sm)
{
	s->cur_nr = 0;
	const uint64_t *chain = sm->callchain;
	int chain_nr = chain ? (int)sm->nr_callchain : 0;
	int first_call = 0;
	if (sm->branches && s->use_branches) {
		int nr = (int)sm->nr_branches < MAX_STACK ? (int)sm->nr_branches : MAX_STACK;
		if (sm->nr_branches <= MAX_BRANCH_DEPTH) {
			pd_branch_entry be[MAX_STACK];
			for (int i = 0; i < nr; i++) {
				be[i] = sm->branches[i];
				if (!chain || first_call >= (int)sm->nr_callchain)
					continue;
				if (chain[first_call] >= PD_CONTEXT_MAX)
					first_call++;
				else if (be[i].from < chain[first_call] && be[i].from >= chain[first_call] - 8)
					first_call++;
			}
			nr = remove_loops(be, nr);
			for (int i = 0; i < nr; i++) {
				int rc = cursor_add(s, sm->pid, NULL, be[i].to, true, be[i].flags, be[i].from);
				if (!rc)
					rc = cursor_add(s, sm->pid, NULL, be[i].from, true, be[i].flags, 0);
				if (rc < 0)
					return rc;
				if (rc)
					break;
			}
			if (chain_nr == 0)
				return 0;
			chain_nr -= nr;
		}
	}
	int cpumode = PD_CPUMODE_USER;
	for (int i = first_call, n = 0; i < chain_nr && n < MAX_STACK; i++) {
		uint64_t ip = chain[i];
		if (ip < PD_CONTEXT_MAX || (ip == UW_CHAIN_ZERO_RETURN && s->uw))
			n++;
		int rc = cursor_add(s, sm->pid, &cpumode, ip, false, 0, 0);
		if (rc < 0)
			return rc;
		if (rc)
			return 0;
	}
	return 0;
}

/* ---- the trie (perf's callchain radix tree, CCKEY_SRCLINE) --------------- */

enum { M_ERR = -1, M_EQ = 0, M_LT = 1, M_GT = 2 };

static int match_strings(const char *l, const char *r)
{
	int c;
	if (l == r && l)
		return M_EQ;        /* interned */
	if (l && r)
		c = strcmp(l, r);
	else if (!l && r)
		c = 1;
	else if (l && !r)
		c = -1;
	else
		return M_ERR;
	return c == 0 ? M_EQ : c < 0 ? M_LT : M_GT;
}

static int match_dso_addr(uint32_t ld, uint64_t lip, uint32_t rd, uint64_t rip)
{
	if (ld != rd)
		return ld < rd ? M_LT : M_GT;
	if (lip != rip)
		return lip < rip ? M_LT : M_GT;
	return M_EQ;
}

/* compare the cursor node with an existing entry; counts branches on a match */
static int match_chain(const st_cnode *n, st_call *c)
{
	int m = match_strings(c->srcline, n->srcline);
	if (m == M_ERR) {
		if (n->sym && c->sym)
			m = match_dso_addr(c->dso, c->sym_start, n->dso, n->sym_start);
		else
			m = match_dso_addr(c->dso, c->ip, n->dso, n->ip);
	}
	if (m == M_EQ && n->branch) {
		c->branch_count++;
		if (!n->branch_from)
			c->cycles_count += n->cycles;
	}
	return m;
}

static st_node *node_new(st_side *s, st_node *parent)
{
	st_node *nd = pf_arena_alloc(&s->arena, sizeof(*nd));
	if (nd)
		nd->parent = parent;
	return nd;
}

static int fill_node(st_side *s, st_node *nd, size_t pos)
{
	size_t n = s->cur_nr - pos;
	st_call *v = pf_arena_alloc(&s->arena, (n ? n : 1) * sizeof(*v));
	if (!v)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const st_cnode *c = &s->cur[pos + i];
		st_call *d = &v[i];
		d->sym = c->sym;
		d->srcline = c->srcline;
		d->path = c->path;
		d->line = c->line;
		d->ip = c->ip;
		d->dso = c->dso;
		d->maddr = c->maddr;
		d->sym_start = c->sym_start;
		if (c->branch) {
			d->branch_count = 1;
			if (!c->branch_from)
				d->cycles_count = c->cycles;
		}
	}
	nd->val = v;
	nd->nval = n;
	return 0;
}

static int kids_insert(st_node *parent, size_t at, st_node *kid)
{
	if (PF_GROW(parent->kids, parent->cap_kids, parent->nr_kids + 1) < 0)
		return -1;
	memmove(&parent->kids[at + 1], &parent->kids[at], (parent->nr_kids - at) * sizeof(st_node *));
	parent->kids[at] = kid;
	parent->nr_kids++;
	return 0;
}

static int append_chain(st_side *s, st_node *root, size_t *pos, uint64_t period);

/* children kept in perf's rb-tree in-order: MATCH_LT goes left */
static int append_children(st_side *s, st_node *root, size_t *pos, uint64_t period)
{
	if (*pos >= s->cur_nr)
		return -1;
	size_t lo = 0, hi = root->nr_kids;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int r = append_chain(s, root->kids[mid], pos, period);
		if (r == M_EQ)
			goto inc;
		if (r == M_ERR)
			return -1;
		if (r == M_LT)
			hi = mid;
		else
			lo = mid + 1;
	}
	st_node *nd = node_new(s, root);
	if (!nd || fill_node(s, nd, *pos) < 0 || kids_insert(root, lo, nd) < 0)
		return -1;
	*pos = s->cur_nr;
	nd->hit = period;
inc:
	root->children_hit += period;
	return 0;
}

static int split_add_child(st_side *s, st_node *parent, size_t *pos, size_t idx_local, uint64_t period)
{
	st_node *nw = node_new(s, parent);
	if (!nw)
		return -1;
	nw->val = parent->val + idx_local;
	nw->nval = parent->nval - idx_local;
	nw->kids = parent->kids;
	nw->nr_kids = parent->nr_kids;
	nw->cap_kids = parent->cap_kids;
	for (size_t i = 0; i < nw->nr_kids; i++)
		nw->kids[i]->parent = nw;
	nw->hit = parent->hit;
	nw->children_hit = parent->children_hit;
	parent->kids = NULL;
	parent->nr_kids = parent->cap_kids = 0;
	parent->nval = idx_local;
	parent->children_hit = nw->hit + nw->children_hit;
	if (kids_insert(parent, 0, nw) < 0)
		return -1;
	if (*pos < s->cur_nr) {
		parent->hit = 0;
		parent->children_hit += period;
		const st_cnode *c = &s->cur[*pos];
		st_node *add = node_new(s, parent);
		if (!add || fill_node(s, add, *pos) < 0)
			return -1;
		add->hit = period;
		*pos = s->cur_nr;
		int m = match_chain(c, &nw->val[0]);
		if (kids_insert(parent, m == M_LT ? 0 : 1, add) < 0)
			return -1;
	} else {
		parent->hit = period;
	}
	return 0;
}

static int append_chain(st_side *s, st_node *root, size_t *pos, uint64_t period)
{
	size_t start = *pos, i;
	int cmp = M_ERR;
	bool found = false;
	for (i = 0; i < root->nval; i++) {
		if (*pos >= s->cur_nr)
			break;
		cmp = match_chain(&s->cur[*pos], &root->val[i]);
		if (cmp != M_EQ)
			break;
		found = true;
		(*pos)++;
	}
	if (!found)
		return cmp;
	size_t matches = *pos - start;
	if (matches < root->nval)
		return split_add_child(s, root, pos, matches, period) < 0 ? M_ERR : M_EQ;
	if (*pos == s->cur_nr) {
		root->hit += period;
		return M_EQ;
	}
	return append_children(s, root, pos, period) < 0 ? M_ERR : M_EQ;
}

/* ---- hist entries -------------------------------------------------------- */

static st_entry *get_entry(st_side *s, const char *srcline, const char *sym, uint32_t dso, size_t *idx)
{
	char key[8192];
	int n = snprintf(key, sizeof(key), "%s%c%s%c%u", srcline, 0, sym ? sym : "", 0, dso);
	if (n < 0 || (size_t)n >= sizeof(key))
		n = sizeof(key) - 1;
	int64_t id = pf_strtab_intern(&s->strs, key, (size_t)n);
	if (id < 0)
		return NULL;
	bool found;
	uint64_t *slot = pf_map64_upsert(&s->key2entry, (uint64_t)id, &found);
	if (!slot)
		return NULL;
	if (found) {
		if (idx)
			*idx = (size_t)*slot;
		return s->entries[*slot];
	}
	st_entry *e = pf_arena_alloc(&s->arena, sizeof(*e));
	if (!e || PF_GROW(s->entries, s->cap_entries, s->nr_entries + 1) < 0)
		return NULL;
	e->srcline = srcline;
	e->sym = sym;
	e->dso = dso;
	e->root.parent = NULL;
	*slot = s->nr_entries;
	if (idx)
		*idx = s->nr_entries;
	s->entries[s->nr_entries++] = e;
	return e;
}

/* ---- record processing -------------------------------------------------- */

static int oom(st_side *s)
{
	return proff_err_set(s->err, PROFF_ENOMEM, s->path, PROFF_NO_OFFSET, "out of memory");
}

static uint64_t min_hit_of(const st_side *s)
{
	return (uint64_t)((double)s->total_period * (s->opts.min_percent / 100.0));
}

static int64_t new_group(st_side *s)
{
	if (PF_GROW(s->group_period, s->cap_groups, s->nr_groups + 1) < 0)
		return -1;
	s->group_period[s->nr_groups] = 0;
	return (int64_t)s->nr_groups++;
}

/* the (symbol name, dso) group of a sample ip, or (address, dso) for the
 * kernel, whose hist entries are keyed by address until make_streams */
static int64_t sample_group(st_side *s, const st_map *m, uint64_t ip)
{
	uint64_t key = ((uint64_t)ST_NONE << 32) | 0xffffffffu, v;
	st_dso *d = NULL;
	uint64_t maddr = 0;
	bool own = false;
	if (m) {
		d = &s->dsos[m->dso];
		maddr = map_addr(s, m, ip);
		if (pf_map64_get(&d->gcache, maddr, &v))
			return (int64_t)v;
		uint32_t name = 0xffffffffu;
		sym_info si;
		if (d->kind == SYM_DSO_KERNEL || d->kind == SYM_DSO_MODULE) {
			own = true;
		} else if (d->sd && sym_lookup(d->sd, maddr, &si)) {
			int64_t id = pf_strtab_intern(&s->strs, si.name, strlen(si.name));
			if (id < 0 || id >= 0xffffffff)
				return -1;
			name = (uint32_t)id;
		}
		key = ((uint64_t)m->dso << 32) | name;
	}
	int64_t g;
	if (own) {
		if ((g = new_group(s)) < 0)
			return -1;
	} else {
		bool found;
		uint64_t *slot = pf_map64_upsert(&s->key2group, key, &found);
		if (!slot)
			return -1;
		if (!found) {
			if ((g = new_group(s)) < 0)
				return -1;
			*slot = (uint64_t)g;
		}
		g = (int64_t)*slot;
	}
	if (d) {
		uint64_t *slot = pf_map64_upsert(&d->gcache, maddr, NULL);
		if (!slot)
			return -1;
		*slot = (uint64_t)g;
	}
	return g;
}

/* first pass: the period of each group */
static int on_sample_count(st_side *s, const pd_event *ev)
{
	const pd_sample *sm = &ev->u.sample;
	int64_t g = sample_group(s, find_map(s, sm->pid, sm->cpumode, sm->ip), sm->ip);
	if (g < 0)
		return oom(s);
	s->group_period[g] += sm->period;
	s->total_period += sm->period;
	return 0;
}

/* the unwinder's map lookup (lib/unwind): the process's map at addr with
 * the binary the symbol search found */
static bool uw_find(void *arg, uint64_t addr, uw_map *out)
{
	st_side *s = ((void **)arg)[0];
	const st_map *m = pf_mgroup_find(((void **)arg)[1], addr);
	if (!m)
		return false;
	*out = (uw_map){ m->start, m->end, m->pgoff, NULL };
	const st_dso *d = &s->dsos[m->dso];
	if ((d->kind == SYM_DSO_USER || d->kind == SYM_DSO_VDSO) && d->sd)
		out->path = sym_dso_unwind_path(d->sd);
	return true;
}

/* A dwarf-mode sample with the chain perf resolves for it (the recorded
 * one, then the unwound user frames): sm itself when nothing was unwound,
 * NULL when out of memory. */
static const pd_sample *unwound(st_side *s, const pd_sample *sm)
{
	uint32_t mg = pf_machine_mg_of_pid(&s->m, sm->pid, false);
	pf_mgroup *g = mg != PF_NONE ? &s->m.mgs[mg] : NULL;
	if (!g || !g->has_file || sm->evsel < 0 || (size_t)sm->evsel >= pd_nr_attrs(s->rd))
		return sm;
	const pd_attr *a = pd_get_attr(s->rd, (size_t)sm->evsel);
	if (!uw_event_wants(a))
		return sm;
	void *arg[2] = { s, g };
	const uint64_t *cc;
	long n = uw_sample_chain(s->uw, mg, g->gen, sm, a, uw_find, arg, &cc);
	if (n < 0)
		return NULL;
	if (!n)
		return sm;
	s->unwound = *sm;
	s->unwound.callchain = cc;
	s->unwound.nr_callchain = (uint64_t)n;
	return &s->unwound;
}

static int on_sample(st_side *s, const pd_event *ev)
{
	const pd_sample *sm = &ev->u.sample;
	int cpumode = sm->cpumode;
	const st_map *m = find_map(s, sm->pid, cpumode, sm->ip);
	if (s->pruning) {
		int64_t g = sample_group(s, m, sm->ip);
		if (g < 0)
			return oom(s);
		if (!s->group_period[g] || s->group_period[g] < s->prune_below) {
			s->total_period += sm->period;
			if (sm->branches && sm->nr_branches)
				s->any_branches = true;
			return 0;
		}
	}
	if (s->opts.cycles && s->opts.blocks_only) {
		/* -c cycles: the blocks alone */
		s->total_period += sm->period;
		if (sm->branches && sm->nr_branches)
			s->any_branches = true;
		return sm->branches && st_account_cycles(s, sm) < 0 ? oom(s) : 0;
	}
	const char *srcline, *sym = NULL;
	uint32_t dso = ST_NONE;
	uint64_t kaddr = 0;
	st_addr *addr = NULL;
	st_entry *e = NULL;
	if (m && !s->opts.cycles && (s->dsos[m->dso].kind == SYM_DSO_KERNEL || s->dsos[m->dso].kind == SYM_DSO_MODULE)) {
		/* kernel samples: keyed by address now, named in make_streams only if
		 * hot enough to matter (loading kernel symbols is the costliest part) */
		char kb[64];
		kaddr = map_addr(s, m, sm->ip);
		snprintf(kb, sizeof(kb), "\001%llx", (unsigned long long)kaddr);
		srcline = intern(s, kb);
		if (!srcline)
			return oom(s);
		dso = m->dso;
	} else if (m) {
		const st_addr *a = resolve(s, m->dso, map_addr(s, m, sm->ip), R_SYM | R_KEY);
		if (!a)
			return oom(s);
		srcline = a->key_srcline;
		sym = a->sym;
		dso = m->dso;
		addr = (st_addr *)a;
		if (a->entry)
			e = s->entries[a->entry - 1];
	} else {
		srcline = s->unknown_srcline;
	}
	if (!e) {
		size_t idx;
		if (!(e = get_entry(s, srcline, sym, dso, &idx)))
			return oom(s);
		if (addr)
			addr->entry = (uint32_t)(idx + 1);
	}
	if (srcline[0] == '\001') {
		e->deferred = true;
		e->kaddr = kaddr;
	}
	uint64_t period = sm->period;
	s->total_period += period;
	e->period += period;
	if (sm->branches && sm->nr_branches)
		s->any_branches = true;
	if (s->uw && sm->stack_user && (sm = unwound(s, sm)) == NULL)
		return oom(s);
	if (build_cursor(s, sm) < 0)
		return oom(s);
	if (s->opts.cycles && sm->branches && st_account_cycles(s, sm) < 0)
		return oom(s);
	if (!s->cur_nr)
		return 0;
	size_t pos = 0;
	if (append_children(s, &e->root, &pos, period) < 0)
		return oom(s);
	return 0;
}

static int on_event(void *ctx, const pd_event *ev)
{
	st_side *s = ctx;
	switch (ev->type) {
	case PD_SAMPLE:
		return s->counting ? on_sample_count(s, ev) : on_sample(s, ev);
	case PD_COMM:
	case PD_FORK:
	case PD_EXIT:
	case PD_MMAP:
	case PD_MMAP2:
		/* a map changed: the map cache's entries are stale */
		s->map_gen++;
		if (pf_machine_event(&s->m, ev) < 0 || sync_dsos(s) < 0)
			return oom(s);
		return 0;
	default:
		return 0;
	}
}

/* ---- streams ------------------------------------------------------------- */

static int entry_cmp(const void *pa, const void *pb)
{
	const st_entry *a = *(st_entry *const *)pa, *b = *(st_entry *const *)pb;
	/* perf diff has no overhead sort key, yet its output tree comes out
	 * by period (checked against perf 6.1); ties by srcline, symbol */
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	int c = strcmp(a->srcline, b->srcline);
	if (c)
		return c;
	if (!a->sym || !b->sym) {
		if (a->sym != b->sym)
			return a->sym ? 1 : -1;
	} else if ((c = strcmp(a->sym, b->sym)))
		return c;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

/* post-order walk, children in order; nodes with hit >= min_hit */
static int collect_flat(st_node *nd, uint64_t min_hit, st_node ***out, size_t *n, size_t *cap)
{
	for (size_t i = 0; i < nd->nr_kids; i++)
		if (collect_flat(nd->kids[i], min_hit, out, n, cap) < 0)
			return -1;
	if (nd->hit && nd->hit >= min_hit) {
		if (PF_GROW(*out, *cap, *n + 1) < 0)
			return -1;
		(*out)[(*n)++] = nd;
	}
	return 0;
}

static int64_t avg_cycles(const st_call *c, size_t n)
{
	int64_t cyc = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].srcline && c[i].branch_count)
			cyc += (int64_t)(c[i].cycles_count / c[i].branch_count);
	return cyc;
}

static int make_streams(st_side *s)
{
	uint64_t min_hit = min_hit_of(s);
	for (size_t i = 0; i < s->nr_entries; i++) {
		st_entry *e = s->entries[i];
		e->seq = i;
		if (e->deferred && e->period >= min_hit) {
			const st_addr *a = resolve(s, e->dso, e->kaddr, R_SYM | R_KEY);
			if (!a)
				return -1;
			e->srcline = a->key_srcline;
			e->sym = a->sym;
		}
	}
	/* dso names break ties after symbol (perf's sort order srcline,symbol,dso) */
	if (s->nr_entries > 1)
		qsort(s->entries, s->nr_entries, sizeof(*s->entries), entry_cmp);
	st_node **flat = NULL;
	size_t cap = 0;
	size_t top = s->opts.top ? s->opts.top : 5;
	st_node **slots = calloc(top, sizeof(*slots));
	if (!slots)
		return -1;
	size_t nslots = 0;
	for (size_t e = 0; e < s->nr_entries; e++) {
		size_t n = 0;
		if (collect_flat(&s->entries[e]->root, min_hit, &flat, &n, &cap) < 0) {
			free(flat);
			free(slots);
			return -1;
		}
		/* stable sort by hit descending (rb insert: ties go right) */
		for (size_t i = 1; i < n; i++) {
			st_node *x = flat[i];
			size_t j = i;
			while (j > 0 && flat[j - 1]->hit < x->hit) {
				flat[j] = flat[j - 1];
				j--;
			}
			flat[j] = x;
		}
		for (size_t i = 0; i < n; i++) {
			st_node *nd = flat[i];
			s->stream_hits += nd->hit;
			if (nslots < top) {
				slots[nslots++] = nd;
				continue;
			}
			size_t idx = 0;
			uint64_t h = slots[0]->hit;
			for (size_t k = 1; k < nslots; k++)
				if (slots[k]->hit < h) {
					h = slots[k]->hit;
					idx = k;
				}
			if (nd->hit > h)
				slots[idx] = nd;
		}
	}
	free(flat);
	s->streams = calloc(nslots ? nslots : 1, sizeof(*s->streams));
	if (!s->streams) {
		free(slots);
		return -1;
	}
	for (size_t i = 0; i < nslots; i++) {
		st_stream *st = &s->streams[i];
		st_node *nd = slots[i];
		st->hit = nd->hit;
		st->pair = -1;
		if (s->full_path) {
			/* whole path: segments from the entry root down to this node */
			size_t len = 0;
			for (st_node *p = nd; p && p->parent; p = p->parent)
				len += p->nval;
			st_call *v = pf_arena_alloc(&s->arena, (len ? len : 1) * sizeof(*v));
			if (!v) {
				free(slots);
				return -1;
			}
			size_t at = len;
			for (st_node *p = nd; p && p->parent; p = p->parent) {
				at -= p->nval;
				memcpy(v + at, p->val, p->nval * sizeof(*v));
			}
			st->calls = v;
			st->nr_calls = len;
		} else {
			st->calls = nd->val;
			st->nr_calls = nd->nval;
		}
		for (size_t k = 0; k < st->nr_calls; k++) {
			st_call *c = (st_call *)&st->calls[k];
			if (!c->sym && c->dso != ST_NONE && s->dsos[c->dso].kind != SYM_DSO_USER) {
				const st_addr *a = resolve(s, c->dso, c->maddr, R_SYM);
				if (!a) {
					free(slots);
					return -1;
				}
				c->sym = a->sym;
			}
		}
		st->cycles = avg_cycles(st->calls, st->nr_calls);
		st->percent = s->stream_hits ? 100.0 * (double)nd->hit / (double)s->stream_hits : 0;
		st->call_changed = pf_arena_alloc(&s->arena, (st->nr_calls ? st->nr_calls : 1) * sizeof(bool));
		if (!st->call_changed) {
			free(slots);
			return -1;
		}
	}
	s->nr_streams = nslots;
	free(slots);
	return 0;
}

static void free_kids(st_node *nd)
{
	for (size_t i = 0; i < nd->nr_kids; i++)
		free_kids(nd->kids[i]);
	free(nd->kids);
}

/* An exact trace (proff record --instrument): its call paths, read through
 * the profile model (lib/model/trace-model.c), become the cursors — leaf
 * first, each frame the function's entry address with its file offset —
 * and its calls the samples, weighted by exclusive time (ns). */
static int load_trace(st_side *s, const char *path)
{
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.symfs = s->opts.symfs;
	lo.buildid_dir = s->opts.buildid_dir;
	pf_profile *p;
	int rc = pf_profile_load(path, &lo, &p, s->err);
	if (rc < 0)
		return rc;
	uint32_t *dmap = pf_calloc(p->nr_dsos ? p->nr_dsos : 1, sizeof(*dmap));
	if (!dmap) {
		pf_profile_free(p);
		return oom(s);
	}
	for (size_t i = 0; i < p->nr_dsos; i++) {
		dmap[i] = get_dso(s, pf_str(p, p->dsos[i].long_name));
		if (dmap[i] == ST_NONE)
			goto nomem;
	}
	for (size_t si = 0; si < p->nr_samples; si++) {
		const pf_sample *sm = &p->samples[si];
		s->cur_nr = 0;
		for (uint32_t nd = sm->stack; nd && s->cur_nr < MAX_STACK; nd = p->nodes[nd].parent) {
			const pf_loc *l = &p->locs[p->nodes[nd].loc];
			st_map m = { l->ip, l->ip + 1, l->addr, l->dso != PF_NONE ? dmap[l->dso] : ST_NONE, 0 };
			if (cursor_push(s, l->dso != PF_NONE ? &m : NULL, l->ip, false, 0, 0) < 0)
				goto nomem;
		}
		if (!s->cur_nr)
			continue;
		const st_cnode *leaf = &s->cur[0];
		const char *srcline = s->unknown_srcline, *sym = NULL;
		if (leaf->dso != ST_NONE) {
			const st_addr *a = resolve(s, leaf->dso, leaf->maddr, R_SYM | R_KEY);
			if (!a)
				goto nomem;
			srcline = a->key_srcline;
			sym = a->sym;
		}
		st_entry *e = get_entry(s, srcline, sym, leaf->dso, NULL);
		if (!e)
			goto nomem;
		s->total_period += sm->period;
		e->period += sm->period;
		size_t pos = 0;
		if (append_children(s, &e->root, &pos, sm->period) < 0)
			goto nomem;
	}
	free(dmap);
	pf_profile_free(p);
	return 0;
nomem:
	free(dmap);
	pf_profile_free(p);
	return oom(s);
}

int st_load(const char *path, const st_opts *o, st_side **out, proff_error *err)
{
	*out = NULL;
	st_side *s = calloc(1, sizeof(*s));
	if (!s)
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	s->opts = *o;
	s->path = path;
	s->err = err;
	pf_arena_init(&s->arena);
	pf_machine_init(&s->m, &s->strs, &s->pdsos, &s->nr_pdsos, &s->cap_pdsos);
	pf_map64_init(&s->key2entry);
	pf_map64_init(&s->key2group);
	int rc = pf_strtab_init(&s->strs);
	if (rc < 0) {
		st_side_free(s);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	s->unknown_srcline = intern(s, "??:0");
	s->map_gen = 1;            /* the cache's zeroed entries are invalid */
	s->mapcache = calloc(ST_MAPCACHE, sizeof(*s->mapcache));
	if (!s->mapcache) {
		st_side_free(s);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	if (pf_is_trace_file(path) && !o->cycles) {
		s->full_path = true;
		sym_opts to = { .symfs = o->symfs, .buildid_dir = o->buildid_dir, .demangle = true };
		rc = sym_ctx_new(&to, &s->syms, err);
		if (rc >= 0)
			rc = load_trace(s, path);
		if (rc >= 0 && make_streams(s) < 0)
			rc = oom(s);
		if (rc < 0) {
			st_side_free(s);
			return rc;
		}
		*out = s;
		return 0;
	}
	pd_reader *rd;
	rc = pd_open(path, &rd, err);
	if (rc < 0) {
		st_side_free(s);
		return rc;
	}
	s->rd = rd;
	size_t na = pd_nr_attrs(rd);
	s->use_branches = na > 0;
	for (size_t i = 0; i < na; i++)
		if (!(pd_get_attr(rd, i)->sample_type & PD_S_BRANCH_STACK))
			s->use_branches = false;
	s->full_path = !s->use_branches;
	sym_opts so = {
		.symfs = o->symfs, .kallsyms = o->kallsyms, .buildid_dir = o->buildid_dir,
		.recorded_osrelease = pd_get_header(rd)->osrelease, .demangle = true,
	};
	rc = sym_ctx_new(&so, &s->syms, err);
	if (rc >= 0)
		rc = pf_machine_start(&s->m, rd, &s->syms) < 0 ? oom(s) : 0;
	for (size_t i = 0; i < na && rc >= 0 && !s->uw; i++)
		if (uw_event_wants(pd_get_attr(rd, i)) && !(s->uw = uw_new(0)))
			rc = oom(s);
	struct stat st;
	if (rc >= 0 && !o->cycles && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
		/* the counting pass (a pipe can be read only once) */
		s->counting = true;
		rc = pd_process(rd, true, on_event, s, err);
		if (rc > 0)
			rc = s->err->code ? s->err->code : PROFF_EINTERNAL;
		s->counting = false;
		s->pruning = true;
		s->prune_below = min_hit_of(s);
		s->total_period = 0;
		/* the maps again from the start */
		s->map_gen++;
		if (pf_machine_restart(&s->m) < 0 && rc >= 0)
			rc = oom(s);
	}
	if (rc >= 0)
		rc = pd_process(rd, true, on_event, s, err);
	if (rc > 0)
		rc = s->err->code ? s->err->code : PROFF_EINTERNAL;
	if (rc >= 0 && make_streams(s) < 0)
		rc = oom(s);
	if (rc >= 0 && o->cycles)
		rc = st_blocks_finish(s);
	if (rc < 0) {
		st_side_free(s);
		return rc;
	}
	*out = s;
	return 0;
}

void st_side_free(st_side *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_entries; i++)
		free_kids(&s->entries[i]->root);
	free(s->entries);
	for (size_t i = 0; i < s->nr_dsos; i++) {
		pf_map64_free(&s->dsos[i].cache);
		pf_map64_free(&s->dsos[i].gcache);
	}
	free(s->dsos);
	pf_machine_free(&s->m);
	free(s->pdsos);
	free(s->addrs);
	free(s->cur);
	free(s->mapcache);
	free(s->streams);
	st_blocks_free(s);
	pf_map64_free(&s->key2entry);
	pf_map64_free(&s->key2group);
	free(s->group_period);
	uw_free(s->uw);
	if (s->syms)
		sym_ctx_free(s->syms);
	if (s->rd)
		pd_close(s->rd);
	pf_strtab_free(&s->strs);
	pf_arena_free(&s->arena);
	free(s);
}

bool st_has_branches(const st_side *s) { return s->use_branches; }
bool st_has_cycles(const st_side *s) { return s->any_cycles; }
size_t st_nr_streams(const st_side *s) { return s->nr_streams; }
st_stream *st_get_stream(st_side *s, size_t i) { return i < s->nr_streams ? &s->streams[i] : NULL; }
uint64_t st_total_hits(const st_side *s) { return s->stream_hits; }
