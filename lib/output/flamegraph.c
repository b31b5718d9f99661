/* flamegraph.c — building flame graphs: every kept sample's call path
 * (process name, then the callers from the outermost down to the sample's
 * own function) merged into a trie of frames per name, for one profile or
 * the two sides of a diff; then the views the writers draw (caller and
 * callee order, by function or function and source line), with siblings
 * sorted by name and those below the minimum width merged into one frame.
 *
 * Frames are named as FlameGraph's stackcollapse-perf.pl names perf script's
 * lines (docs/flamegraph.md), so proff's folded stacks equal the field's.
 */
#include <stdlib.h>
#include <string.h>

#include "proff/flamegraph.h"

#define NONE UINT32_MAX

/* A trie of call paths keyed by (parent, name, srcline); node 0 is "all".
 * Children are made after their parents, so ids are a parents-first order. */
typedef struct trie {
	uint32_t *parent, *name, *srcl;
	uint64_t *self[2], *scount[2];       /* per side: period and samples ending here */
	uint64_t *total[2], *count[2];       /* inclusive, after trie_sums */
	/* groups of runs: period ending here and inclusive, per run */
	uint64_t **rself, **rtotal;
	size_t nruns;
	size_t n, cap;
	uint32_t *slots;                     /* hash: node id + 1, 0 empty */
	size_t nslots;
} trie;

struct fg_raw {
	trie paths;                /* by function, or function and srcline */
	trie byfn;                 /* srcline mode: the same paths by function only */
	uint32_t *rank;            /* string id -> place in byte order of the names */
	size_t nrank;
};

void fg_opts_init(fg_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->min_width = 0.1;
	stats_config_init(&o->stats);
	o->fdr = 0.05;
}

int fg_format_of(const char *path)
{
	if (!strcmp(path, "-"))
		return FG_FOLDED;
	const char *dot = strrchr(path, '.');
	if (!dot || strchr(dot, '/'))
		return -1;
	if (!strcasecmp(dot, ".svg"))
		return FG_SVG;
	if (!strcasecmp(dot, ".html") || !strcasecmp(dot, ".htm"))
		return FG_HTML;
	if (!strcasecmp(dot, ".folded") || !strcasecmp(dot, ".txt"))
		return FG_FOLDED;
	return -1;
}

/* ---- the trie ------------------------------------------------------------ */

static uint64_t trie_hash(uint32_t parent, uint32_t name, uint32_t srcl)
{
	return pf_hash64(((uint64_t)parent << 32 | name) ^ ((uint64_t)srcl * 0x9e3779b97f4a7c15ULL));
}

static int trie_grow(trie *t)
{
	size_t cap = t->cap ? t->cap * 2 : 1024;
	uint32_t **u32[] = { &t->parent, &t->name, &t->srcl };
	for (size_t i = 0; i < 3; i++) {
		void *q = pf_realloc_array(*u32[i], cap, sizeof(uint32_t));
		if (!q)
			return -1;
		*u32[i] = q;
	}
	uint64_t **u64[] = { &t->self[0], &t->self[1], &t->scount[0], &t->scount[1] };
	for (size_t i = 0; i < 4; i++) {
		void *q = pf_realloc_array(*u64[i], cap, sizeof(uint64_t));
		if (!q)
			return -1;
		*u64[i] = q;
		memset(*u64[i] + t->cap, 0, (cap - t->cap) * sizeof(uint64_t));
	}
	for (size_t r = 0; r < t->nruns; r++) {
		uint64_t *q = pf_realloc_array(t->rself[r], cap, sizeof(uint64_t));
		if (!q)
			return -1;
		t->rself[r] = q;
		memset(q + t->cap, 0, (cap - t->cap) * sizeof(uint64_t));
	}
	t->cap = cap;
	return 0;
}

static int trie_rehash(trie *t)
{
	size_t ns = t->nslots ? t->nslots * 2 : 2048;
	uint32_t *s = pf_calloc(ns, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 1; i < t->n; i++) {
		size_t h = trie_hash(t->parent[i], t->name[i], t->srcl[i]) & (ns - 1);
		while (s[h])
			h = (h + 1) & (ns - 1);
		s[h] = (uint32_t)i + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = ns;
	return 0;
}

static int trie_init(trie *t)
{
	memset(t, 0, sizeof(*t));
	if (trie_grow(t) < 0 || trie_rehash(t) < 0)
		return -1;
	t->parent[0] = NONE;
	t->name[0] = 0;
	t->srcl[0] = 0;
	t->n = 1;
	return 0;
}

static void trie_free(trie *t)
{
	free(t->parent); free(t->name); free(t->srcl);
	for (int s = 0; s < 2; s++) {
		free(t->self[s]); free(t->scount[s]);
		free(t->total[s]); free(t->count[s]);
	}
	for (size_t r = 0; r < t->nruns; r++) {
		free(t->rself[r]);
		if (t->rtotal)
			free(t->rtotal[r]);
	}
	free(t->rself);
	free(t->rtotal);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/* One more run's per-node periods (zero); -1 out of memory. */
static int trie_add_run(trie *t)
{
	uint64_t **a = pf_realloc_array(t->rself, t->nruns + 1, sizeof(*a));
	if (!a)
		return -1;
	t->rself = a;
	if (!(a[t->nruns] = pf_calloc(t->cap, sizeof(uint64_t))))
		return -1;
	t->nruns++;
	return 0;
}

/* The child of parent with that key, made if new; NONE out of memory. */
static uint32_t trie_child(trie *t, uint32_t parent, uint32_t name, uint32_t srcl)
{
	size_t mask = t->nslots - 1, h = trie_hash(parent, name, srcl) & mask;
	for (uint32_t id; (id = t->slots[h]); h = (h + 1) & mask) {
		id--;
		if (t->parent[id] == parent && t->name[id] == name && t->srcl[id] == srcl)
			return id;
	}
	if (t->n >= NONE - 1 || (t->n == t->cap && trie_grow(t) < 0))
		return NONE;
	uint32_t id = (uint32_t)t->n++;
	t->parent[id] = parent;
	t->name[id] = name;
	t->srcl[id] = srcl;
	t->slots[h] = id + 1;
	if (t->n * 2 > t->nslots && trie_rehash(t) < 0)
		return NONE;
	return id;
}

/* Inclusive sums: children come after their parents. */
static int trie_sums(trie *t)
{
	for (int s = 0; s < 2; s++) {
		free(t->total[s]);
		free(t->count[s]);
		t->total[s] = pf_realloc_array(NULL, t->n, sizeof(uint64_t));
		t->count[s] = pf_realloc_array(NULL, t->n, sizeof(uint64_t));
		if (!t->total[s] || !t->count[s])
			return -1;
		memcpy(t->total[s], t->self[s], t->n * sizeof(uint64_t));
		memcpy(t->count[s], t->scount[s], t->n * sizeof(uint64_t));
		for (size_t i = t->n - 1; i > 0; i--) {
			t->total[s][t->parent[i]] += t->total[s][i];
			t->count[s][t->parent[i]] += t->count[s][i];
		}
	}
	if (!t->nruns)
		return 0;
	if (!t->rtotal && !(t->rtotal = pf_calloc(t->nruns, sizeof(*t->rtotal))))
		return -1;
	for (size_t r = 0; r < t->nruns; r++) {
		free(t->rtotal[r]);
		if (!(t->rtotal[r] = pf_realloc_array(NULL, t->n, sizeof(uint64_t))))
			return -1;
		memcpy(t->rtotal[r], t->rself[r], t->n * sizeof(uint64_t));
		for (size_t i = t->n - 1; i > 0; i--)
			t->rtotal[r][t->parent[i]] += t->rtotal[r][i];
	}
	return 0;
}

/* ---- names ----------------------------------------------------------------- */

static uint32_t intern(flamegraph *g, const char *s, size_t len)
{
	int64_t id = pf_strtab_intern(&g->names, s, len);
	return id < 0 ? NONE : (uint32_t)id;
}

/* stackcollapse-perf.pl's tidying of a function name: ';' would split the
 * frame, what follows the first '(' (not "(anonymous namespace)", nor in a
 * Go method name "pkg.(*T).M") is a parameter list, quotes go. */
static size_t tidy_name(const char *in, char *out, size_t cap)
{
	size_t n = 0;
	const char *go = strstr(in, ".(");
	bool go_name = go && strchr(go + 2, ')') && strchr(strchr(go + 2, ')'), '.');
	for (const char *p = in; *p && n + 1 < cap; p++) {
		if (*p == '(' && !go_name && strncmp(p, "(anonymous namespace)", 21))
			break;
		if (*p == '"' || *p == '\'')
			continue;
		out[n++] = *p == ';' ? ':' : *p;
	}
	out[n] = 0;
	return n;
}

/* A location's frame name: its function, else "[dso's file name]", else
 * "[unknown]" (perf script's "[unknown]" as stackcollapse-perf.pl turns it). */
static uint32_t loc_name(flamegraph *g, const pf_profile *p, uint32_t loc)
{
	char buf[4096];
	const pf_loc *l = &p->locs[loc];
	size_t n;
	if (l->sym != PF_NONE) {
		n = tidy_name(pf_str(p, p->syms[l->sym].name), buf, sizeof(buf));
	} else if (l->dso != PF_NONE) {
		const char *path = pf_str(p, p->dsos[l->dso].long_name);
		const char *base = strrchr(path, '/');
		base = base ? base + 1 : path;
		char t[4096];
		tidy_name(base, t, sizeof(t));
		n = (size_t)snprintf(buf, sizeof(buf), "[%s]", t);
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
	} else {
		n = (size_t)snprintf(buf, sizeof(buf), "[unknown]");
	}
	return intern(g, buf, n);
}

/* The process name frame: spaces become '_' (stackcollapse-perf.pl) */
static uint32_t comm_name(flamegraph *g, const char *comm)
{
	char buf[256];
	size_t n = 0;
	for (; comm[n] && n + 1 < sizeof(buf); n++)
		buf[n] = comm[n] == ' ' ? '_' : comm[n] == ';' ? ':' : comm[n];
	return intern(g, buf, n);
}

/* ---- adding a profile --------------------------------------------------------- */

int fg_new(flamegraph **out, int nsides, const fg_opts *o, proff_error *err)
{
	flamegraph *g = calloc(1, sizeof(*g));
	if (!g || !(g->raw = calloc(1, sizeof(*g->raw))) || pf_strtab_init(&g->names) < 0 ||
	    trie_init(&g->raw->paths) < 0) {
		if (g) {
			if (g->raw)
				trie_free(&g->raw->paths);
			free(g->raw);
			pf_strtab_free(&g->names);
		}
		free(g);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	g->nsides = nsides == 2 ? 2 : 1;
	g->srcline = o->srcline;
	g->min_width = o->min_width;
	g->runs = o->runs && g->nsides == 2;
	g->stats = o->stats;
	g->fdr = o->fdr;
	g->absolute = o->absolute;
	g->title = pf_strdup(o->title ? o->title : nsides == 2 ? "Differential Flame Graph" : "Flame Graph");
	intern(g, "all", 3);      /* string 1: the root's name */
	g->raw->paths.name[0] = 1;
	*out = g;
	return 0;
}

static bool sample_kept(const pf_profile *p, const pf_sample *s, uint32_t evsel, const fg_opts *o)
{
	if (s->evsel != evsel)
		return false;
	if (o->comms && o->comms->n && !pf_strlist_has(o->comms, pf_str(p, s->comm)))
		return false;
	bool in = !o->nr_pids;
	for (size_t i = 0; i < o->nr_pids && !in; i++)
		in = o->pids[i] == s->pid;
	if (!in)
		return false;
	in = !o->nr_tids;
	for (size_t i = 0; i < o->nr_tids && !in; i++)
		in = o->tids[i] == s->tid;
	return in;
}

typedef struct add_ctx {
	flamegraph *g;
	pf_profile *p;
	uint32_t *loc_name, *loc_srcl;  /* per location, NONE until made */
	uint32_t *node_of, *stamp;      /* per pf_node: its trie node for the comm stamped */
	uint32_t *walk;                 /* pf_nodes not yet mapped, leaf first */
	size_t walk_cap;
} add_ctx;

static int cmp_by_comm(const void *a, const void *b, void *arg)
{
	const pf_profile *p = arg;
	const pf_sample *x = &p->samples[*(const uint32_t *)a], *y = &p->samples[*(const uint32_t *)b];
	if (x->comm != y->comm)
		return x->comm < y->comm ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

static int loc_key(add_ctx *c, uint32_t loc, uint32_t *name, uint32_t *srcl)
{
	if (c->loc_name[loc] == NONE) {
		c->loc_name[loc] = loc_name(c->g, c->p, loc);
		if (c->loc_name[loc] == NONE)
			return -1;
	}
	*name = c->loc_name[loc];
	*srcl = 0;
	if (c->g->srcline) {
		if (c->loc_srcl[loc] == NONE) {
			const char *s = pf_loc_srcline(c->p, loc);
			c->loc_srcl[loc] = intern(c->g, s, strlen(s));
			if (c->loc_srcl[loc] == NONE)
				return -1;
		}
		*srcl = c->loc_srcl[loc];
	}
	return 0;
}

/* The trie node of pf_node nd under the comm frame stamped `stamp`. */
static uint32_t node_for(add_ctx *c, uint32_t nd, uint32_t stamp, uint32_t comm_node)
{
	const pf_profile *p = c->p;
	trie *t = &c->g->raw->paths;
	size_t nw = 0;
	uint32_t at = nd;
	while (at != 0 && c->stamp[at] != stamp) {
		if (PF_GROW(c->walk, c->walk_cap, nw + 1) < 0)
			return NONE;
		c->walk[nw++] = at;
		at = p->nodes[at].parent;
	}
	uint32_t tn = at == 0 ? comm_node : c->node_of[at];
	while (nw) {
		uint32_t x = c->walk[--nw], name, srcl;
		if (loc_key(c, p->nodes[x].loc, &name, &srcl) < 0)
			return NONE;
		tn = trie_child(t, tn, name, srcl);
		if (tn == NONE)
			return NONE;
		c->node_of[x] = tn;
		c->stamp[x] = stamp;
	}
	return tn;
}

/* groups of runs: one more run of side */
static int add_run(flamegraph *g, int side, const pf_profile *p)
{
	size_t n = g->nruns + 1;
	uint8_t *sd = pf_realloc_array(g->run_side, n, sizeof(*sd));
	if (sd)
		g->run_side = sd;
	uint64_t *per = pf_realloc_array(g->run_period, n, sizeof(*per));
	if (per)
		g->run_period = per;
	uint64_t *smp = pf_realloc_array(g->run_samples, n, sizeof(*smp));
	if (smp)
		g->run_samples = smp;
	char **paths = pf_realloc_array(g->run_paths, n, sizeof(*paths));
	if (paths)
		g->run_paths = paths;
	if (!sd || !per || !smp || !paths || !(paths[n - 1] = pf_strdup(p->path ? p->path : "")))
		return -1;
	if (trie_add_run(&g->raw->paths) < 0) {
		free(paths[n - 1]);
		return -1;
	}
	sd[n - 1] = (uint8_t)side;
	per[n - 1] = smp[n - 1] = 0;
	g->nruns = n;
	return 0;
}

int fg_add_profile(flamegraph *g, int side, pf_profile *p, uint32_t evsel, const fg_opts *o,
		   proff_error *err)
{
	if (side < 0 || side >= g->nsides || !g->raw)
		return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "flame graph: bad side %d", side);
	add_ctx c = { .g = g, .p = p };
	uint32_t *order = NULL;
	size_t nk = 0;
	int rc = PROFF_ENOMEM;
	size_t run = g->nruns;
	if (g->runs && add_run(g, side, p) < 0)
		goto out;
	if (o->srcline && pf_locs_srclines(p, NULL) < 0)
		goto out;
	c.loc_name = malloc((p->nr_locs + 1) * sizeof(uint32_t));
	c.loc_srcl = malloc((p->nr_locs + 1) * sizeof(uint32_t));
	c.node_of = malloc((p->nr_nodes + 1) * sizeof(uint32_t));
	c.stamp = calloc(p->nr_nodes + 1, sizeof(uint32_t));
	order = malloc((p->nr_samples + 1) * sizeof(uint32_t));
	if (!c.loc_name || !c.loc_srcl || !c.node_of || !c.stamp || !order)
		goto out;
	memset(c.loc_name, 0xff, (p->nr_locs + 1) * sizeof(uint32_t));
	memset(c.loc_srcl, 0xff, (p->nr_locs + 1) * sizeof(uint32_t));
	for (size_t i = 0; i < p->nr_samples; i++)
		if (sample_kept(p, &p->samples[i], evsel, o))
			order[nk++] = (uint32_t)i;
	/* by comm: a pf_node's trie node holds for one comm frame at a time */
	qsort_r(order, nk, sizeof(*order), cmp_by_comm, p);
	trie *t = &g->raw->paths;
	uint32_t stamp = 0, comm = NONE, comm_node = NONE;
	for (size_t k = 0; k < nk; k++) {
		const pf_sample *s = &p->samples[order[k]];
		if (s->comm != comm) {
			comm = s->comm;
			stamp++;
			uint32_t name = comm_name(g, pf_str(p, comm));
			if (name == NONE || (comm_node = trie_child(t, 0, name, 0)) == NONE)
				goto out;
		}
		uint32_t tn = node_for(&c, s->stack, stamp, comm_node);
		if (tn == NONE)
			goto out;
		t->self[side][tn] += s->period;
		t->scount[side][tn] += s->count;
		if (g->runs) {
			t->rself[run][tn] += s->period;
			g->run_period[run] += s->period;
			g->run_samples[run] += s->count;
		}
		g->total[side] += s->period;
		g->samples[side] += s->count;
	}
	if (p->exact)
		g->exact = true;
	if (!g->event && evsel < p->nr_events)
		g->event = pf_strdup(p->events[evsel].name);
	free(g->paths[side]);
	g->paths[side] = pf_strdup(p->path ? p->path : "");
	rc = 0;
out:
	free(c.loc_name);
	free(c.loc_srcl);
	free(c.node_of);
	free(c.stamp);
	free(c.walk);
	free(order);
	if (rc < 0)
		return proff_err_set(err, rc, p->path, PROFF_NO_OFFSET, "flame graph: out of memory");
	return 0;
}

/* ---- views ------------------------------------------------------------------ */

typedef struct view_ctx {
	flamegraph *g;
	const trie *t;
	fg_view *v;
	bool group_by_name;        /* callee order of a srcline trie: by function */
	uint64_t min[2];           /* the minimum width per side, in period */
	struct item { uint32_t node, cursor; } *items;
} view_ctx;

static uint32_t add_frame(fg_view *v, uint32_t parent, uint32_t name, uint32_t srcl)
{
	size_t cap = v->cap;
	if (PF_GROW(v->frames, v->cap, v->n + 1) < 0)
		return NONE;
	if (v->nruns && (v->cap != cap || !v->run_total)) {
		/* per-run values grow with the frames */
		uint64_t *a = pf_realloc_array(v->run_total, v->cap * v->nruns, sizeof(uint64_t));
		if (a)
			v->run_total = a;
		uint64_t *b = pf_realloc_array(v->run_self, v->cap * v->nruns, sizeof(uint64_t));
		if (b)
			v->run_self = b;
		if (!a || !b)
			return NONE;
	}
	if (v->nruns) {
		memset(v->run_total + v->n * v->nruns, 0, v->nruns * sizeof(uint64_t));
		memset(v->run_self + v->n * v->nruns, 0, v->nruns * sizeof(uint64_t));
	}
	fg_frame *f = &v->frames[v->n];
	memset(f, 0, sizeof(*f));
	f->parent = parent;
	f->name = name;
	f->srcline = srcl;
	f->depth = parent == NONE ? 0 : v->frames[parent].depth + 1;
	if (f->depth > v->max_depth)
		v->max_depth = f->depth;
	return (uint32_t)v->n++;
}

static bool is_small(const view_ctx *c, const uint64_t total[2])
{
	for (int s = 0; s < c->g->nsides; s++)
		if (total[s] >= c->min[s] && total[s] > 0)
			return false;
	return true;
}

/* The frame standing for `count` siblings below the minimum width */
static int add_merged(view_ctx *c, uint32_t parent, const uint64_t tot[2], const uint64_t cnt[2],
		      const uint64_t *run_tot, uint32_t count)
{
	char buf[64];
	int len = snprintf(buf, sizeof(buf), "[%u frame%s below %g%%]", count, count == 1 ? "" : "s",
			   c->g->min_width);
	uint32_t name = intern(c->g, buf, (size_t)len);
	uint32_t f = name == NONE ? NONE : add_frame(c->v, parent, name, 0);
	if (f == NONE)
		return -1;
	fg_frame *fr = &c->v->frames[f];
	fr->merged = count;
	for (int s = 0; s < 2; s++) {
		fr->total[s] = fr->self[s] = tot[s];
		fr->count[s] = fr->self_count[s] = cnt[s];
	}
	size_t R = c->v->nruns;
	for (size_t r = 0; r < R; r++)
		c->v->run_total[f * R + r] = c->v->run_self[f * R + r] = run_tot[r];
	return 0;
}

static int cmp_key(const view_ctx *c, uint32_t na, uint32_t sa, uint32_t nb, uint32_t sb)
{
	const uint32_t *r = c->g->raw->rank;
	if (na != nb)
		return r[na] < r[nb] ? -1 : 1;
	if (sa != sb)
		return r[sa] < r[sb] ? -1 : 1;
	return 0;
}

static int cmp_nodes(const void *a, const void *b, void *arg)
{
	const view_ctx *c = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int r = cmp_key(c, c->t->name[x], c->t->srcl[x], c->t->name[y], c->t->srcl[y]);
	return r ? r : (x < y ? -1 : x > y);
}

/* Caller order: the trie's own shape. A frame's children at or above the
 * minimum width are sorted by name (only those: a large profile's trie has
 * hundreds of thousands of nodes, its view a few thousand frames). */
static int caller_frame(view_ctx *c, uint32_t node, uint32_t parent_frame, const uint32_t *first,
			const uint32_t *next)
{
	const trie *t = c->t;
	uint32_t f = add_frame(c->v, parent_frame, t->name[node], t->srcl[node]);
	if (f == NONE)
		return -1;
	fg_frame *fr = &c->v->frames[f];
	for (int s = 0; s < 2; s++) {
		fr->total[s] = t->total[s][node];
		fr->self[s] = t->self[s][node];
		fr->count[s] = t->count[s][node];
		fr->self_count[s] = t->scount[s][node];
	}
	size_t R = c->v->nruns;
	uint64_t *srun = NULL;     /* the small children's per-run sums */
	if (R) {
		for (size_t r = 0; r < R; r++) {
			c->v->run_total[f * R + r] = t->rtotal[r][node];
			c->v->run_self[f * R + r] = t->rself[r][node];
		}
		if (!(srun = pf_calloc(R, sizeof(uint64_t))))
			return -1;
	}
	uint64_t stot[2] = { 0, 0 }, scnt[2] = { 0, 0 };
	uint32_t nsmall = 0, *big = NULL;
	size_t nbig = 0, cap = 0;
	for (uint32_t k = first[node]; k != NONE; k = next[k]) {
		uint64_t tot[2] = { t->total[0][k], t->total[1][k] };
		if (!is_small(c, tot)) {
			if (PF_GROW(big, cap, nbig + 1) < 0) {
				free(big);
				free(srun);
				return -1;
			}
			big[nbig++] = k;
			continue;
		}
		nsmall++;
		for (int s = 0; s < 2; s++) {
			stot[s] += t->total[s][k];
			scnt[s] += t->count[s][k];
		}
		for (size_t r = 0; r < R; r++)
			srun[r] += t->rtotal[r][k];
	}
	if (nbig > 1)
		qsort_r(big, nbig, sizeof(*big), cmp_nodes, c);
	int rc = 0;
	for (size_t i = 0; i < nbig && !rc; i++)
		rc = caller_frame(c, big[i], f, first, next);
	free(big);
	if (!rc && nsmall && add_merged(c, f, stot, scnt, srun, nsmall) < 0)
		rc = -1;
	free(srun);
	return rc;
}

static int view_caller(view_ctx *c)
{
	const trie *t = c->t;
	uint32_t *first = malloc(t->n * sizeof(uint32_t)), *next = malloc(t->n * sizeof(uint32_t));
	int rc = -1;
	if (first && next) {
		for (size_t i = 0; i < t->n; i++)
			first[i] = next[i] = NONE;
		for (size_t i = t->n - 1; i >= 1; i--) {
			next[i] = first[t->parent[i]];
			first[t->parent[i]] = (uint32_t)i;
		}
		rc = caller_frame(c, 0, NONE, first, next);
	}
	free(first);
	free(next);
	return rc;
}

/* Callee order: the paths from each frame with self samples up to the
 * process name, grouped level by level (a recursive partition of the
 * items, so only frames at or above the minimum width are ever made). */
static int cmp_items(const void *a, const void *b, void *arg)
{
	const view_ctx *c = arg;
	const struct item *x = a, *y = b;
	uint32_t sx = c->group_by_name ? 0 : c->t->srcl[x->cursor];
	uint32_t sy = c->group_by_name ? 0 : c->t->srcl[y->cursor];
	int r = cmp_key(c, c->t->name[x->cursor], sx, c->t->name[y->cursor], sy);
	return r ? r : (x->node < y->node ? -1 : x->node > y->node);
}

static int callee_expand(view_ctx *c, size_t a, size_t b, uint32_t frame)
{
	const trie *t = c->t;
	size_t R = c->v->nruns;
	/* groups of runs: a child's per-run sums, and the small children's */
	uint64_t *grun = NULL, *srun = NULL;
	if (R) {
		if (!(grun = pf_calloc(2 * R, sizeof(uint64_t))))
			return -1;
		srun = grun + R;
	}
	int rc = -1;
	/* items whose path ended here: their samples are this frame's own */
	size_t m = a;
	for (size_t i = a; i < b; i++) {
		if (c->items[i].cursor == 0) {
			struct item tmp = c->items[m];
			c->items[m++] = c->items[i];
			c->items[i] = tmp;
		}
	}
	for (size_t i = a; i < m; i++) {
		for (int s = 0; s < 2; s++) {
			c->v->frames[frame].self[s] += t->self[s][c->items[i].node];
			c->v->frames[frame].self_count[s] += t->scount[s][c->items[i].node];
		}
		for (size_t r = 0; r < R; r++)
			c->v->run_self[frame * R + r] += t->rself[r][c->items[i].node];
	}
	qsort_r(c->items + m, b - m, sizeof(*c->items), cmp_items, c);
	uint64_t stot[2] = { 0, 0 }, scnt[2] = { 0, 0 };
	uint32_t nsmall = 0;
	for (size_t i = m; i < b;) {
		size_t j = i;
		uint64_t tot[2] = { 0, 0 }, cnt[2] = { 0, 0 };
		uint32_t cu = c->items[i].cursor;
		uint32_t name = t->name[cu], srcl = c->group_by_name ? 0 : t->srcl[cu];
		if (R)
			memset(grun, 0, R * sizeof(uint64_t));
		for (; j < b; j++) {
			uint32_t cj = c->items[j].cursor;
			if (t->name[cj] != name || (c->group_by_name ? 0 : t->srcl[cj]) != srcl)
				break;
			for (int s = 0; s < 2; s++) {
				tot[s] += t->self[s][c->items[j].node];
				cnt[s] += t->scount[s][c->items[j].node];
			}
			for (size_t r = 0; r < R; r++)
				grun[r] += t->rself[r][c->items[j].node];
		}
		if (is_small(c, tot)) {
			nsmall++;
			for (int s = 0; s < 2; s++) {
				stot[s] += tot[s];
				scnt[s] += cnt[s];
			}
			for (size_t r = 0; r < R; r++)
				srun[r] += grun[r];
		} else {
			uint32_t f = add_frame(c->v, frame, name, srcl);
			if (f == NONE)
				goto out;
			for (int s = 0; s < 2; s++) {
				c->v->frames[f].total[s] = tot[s];
				c->v->frames[f].count[s] = cnt[s];
			}
			for (size_t r = 0; r < R; r++)
				c->v->run_total[f * R + r] = grun[r];
			for (size_t k = i; k < j; k++)
				c->items[k].cursor = t->parent[c->items[k].cursor];
			if (callee_expand(c, i, j, f) < 0)
				goto out;
		}
		i = j;
	}
	if (nsmall && add_merged(c, frame, stot, scnt, srun, nsmall) < 0)
		goto out;
	rc = 0;
out:
	free(grun);
	return rc;
}

static int view_callee(view_ctx *c)
{
	const trie *t = c->t;
	size_t n = 0;
	c->items = malloc(t->n * sizeof(*c->items));
	if (!c->items)
		return -1;
	for (size_t i = 1; i < t->n; i++)
		if (t->scount[0][i] || t->scount[1][i] || t->self[0][i] || t->self[1][i])
			c->items[n++] = (struct item){ (uint32_t)i, (uint32_t)i };
	uint32_t root = add_frame(c->v, NONE, 1, 0);
	int rc = -1;
	if (root != NONE) {
		for (int s = 0; s < 2; s++) {
			c->v->frames[root].total[s] = t->total[s][0];
			c->v->frames[root].count[s] = t->count[s][0];
			c->v->frames[root].self[s] = t->self[s][0];
			c->v->frames[root].self_count[s] = t->scount[s][0];
		}
		for (size_t r = 0; r < c->v->nruns; r++) {
			c->v->run_total[root * c->v->nruns + r] = t->rtotal[r][0];
			c->v->run_self[root * c->v->nruns + r] = t->rself[r][0];
		}
		rc = callee_expand(c, 0, n, root);
	}
	free(c->items);
	c->items = NULL;
	return rc;
}

static int cmp_names(const void *a, const void *b, void *arg)
{
	const pf_strtab *s = arg;
	return strcmp(s->strs[*(const uint32_t *)a], s->strs[*(const uint32_t *)b]);
}

static int name_rank(flamegraph *g)
{
	size_t n = g->names.n;
	uint32_t *ids = malloc(n * sizeof(*ids));
	g->raw->rank = malloc(n * sizeof(uint32_t));
	if (!ids || !g->raw->rank) {
		free(ids);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		ids[i] = (uint32_t)i;
	qsort_r(ids, n, sizeof(*ids), cmp_names, &g->names);
	for (size_t i = 0; i < n; i++)
		g->raw->rank[ids[i]] = (uint32_t)i;
	g->raw->nrank = n;
	free(ids);
	return 0;
}

/* srcline mode: the function-keyed trie of the same paths */
static int byfn_trie(flamegraph *g)
{
	const trie *t = &g->raw->paths;
	trie *f = &g->raw->byfn;
	uint32_t *map = malloc(t->n * sizeof(uint32_t));
	if (!map || trie_init(f) < 0) {
		free(map);
		return -1;
	}
	f->name[0] = t->name[0];
	map[0] = 0;
	for (size_t r = 0; r < t->nruns; r++)
		if (trie_add_run(f) < 0) {
			free(map);
			return -1;
		}
	for (size_t i = 1; i < t->n; i++) {
		map[i] = trie_child(f, map[t->parent[i]], t->name[i], 0);
		if (map[i] == NONE) {
			free(map);
			return -1;
		}
		for (int s = 0; s < 2; s++) {
			f->self[s][map[i]] += t->self[s][i];
			f->scount[s][map[i]] += t->scount[s][i];
		}
		for (size_t r = 0; r < t->nruns; r++)
			f->rself[r][map[i]] += t->rself[r][i];
	}
	free(map);
	return trie_sums(f);
}

static int view_significance(const flamegraph *g, fg_view *v)
{
	uint64_t *c[4];
	for (int i = 0; i < 4; i++)
		c[i] = malloc((v->n + 1) * sizeof(uint64_t));
	v->sig_total = calloc(v->n + 1, sizeof(fg_sig));
	v->sig_self = calloc(v->n + 1, sizeof(fg_sig));
	int rc = -1;
	if (c[0] && c[1] && c[2] && c[3] && v->sig_total && v->sig_self) {
		for (size_t i = 0; i < v->n; i++) {
			c[0][i] = v->frames[i].count[0];
			c[1][i] = v->frames[i].count[1];
			c[2][i] = v->frames[i].self_count[0];
			c[3][i] = v->frames[i].self_count[1];
		}
		rc = 0;
		if (g->runs) {
			if (fg_runs_significance(g, v->n, v->run_total, v->sig_total) < 0 ||
			    fg_runs_significance(g, v->n, v->run_self, v->sig_self) < 0)
				rc = -1;
		} else {
			fg_significance(g, v->n, c[0], c[1], v->sig_total);
			fg_significance(g, v->n, c[2], c[3], v->sig_self);
		}
	}
	for (int i = 0; i < 4; i++)
		free(c[i]);
	return rc;
}

int fg_finish(flamegraph *g, proff_error *err)
{
	struct fg_raw *r = g->raw;
	if (!r)
		return 0;
	if (trie_sums(&r->paths) < 0 || (g->srcline && byfn_trie(g) < 0))
		goto oom;
	/* merged frames' names are interned below: ranks cover the paths' names */
	if (name_rank(g) < 0)
		goto oom;
	static const struct { enum fg_view_key key; enum fg_view_order order; } kinds[] = {
		{ FG_BY_FUNCTION, FG_CALLER }, { FG_BY_FUNCTION, FG_CALLEE },
		{ FG_BY_SRCLINE, FG_CALLER }, { FG_BY_SRCLINE, FG_CALLEE },
	};
	for (size_t k = 0; k < (g->srcline ? 4u : 2u); k++) {
		fg_view *v = &g->views[g->nviews++];
		v->key = kinds[k].key;
		v->order = kinds[k].order;
		v->nruns = g->runs ? g->nruns : 0;
		view_ctx c = { .g = g, .v = v };
		c.t = g->srcline && v->key == FG_BY_FUNCTION ? &r->byfn : &r->paths;
		for (int s = 0; s < 2; s++)
			c.min[s] = (uint64_t)((double)g->total[s] * g->min_width / 100.0);
		int rc = v->order == FG_CALLER ? view_caller(&c) : view_callee(&c);
		if (rc < 0 || (g->nsides == 2 && view_significance(g, v) < 0))
			goto oom;
	}
	return 0;
oom:
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "flame graph: out of memory");
}

const fg_view *fg_get_view(const flamegraph *g, enum fg_view_key key, enum fg_view_order order)
{
	for (size_t i = 0; i < g->nviews; i++)
		if (g->views[i].key == key && g->views[i].order == order)
			return &g->views[i];
	return NULL;
}

void fg_free(flamegraph *g)
{
	if (!g)
		return;
	if (g->raw) {
		trie_free(&g->raw->paths);
		trie_free(&g->raw->byfn);
		free(g->raw->rank);
		free(g->raw);
	}
	for (size_t i = 0; i < g->nviews; i++) {
		free(g->views[i].frames);
		free(g->views[i].sig_total);
		free(g->views[i].sig_self);
		free(g->views[i].run_total);
		free(g->views[i].run_self);
	}
	for (size_t r = 0; r < g->nruns; r++)
		free(g->run_paths[r]);
	free(g->run_paths);
	free(g->run_side);
	free(g->run_period);
	free(g->run_samples);
	pf_strtab_free(&g->names);
	free(g->title);
	free(g->event);
	free(g->paths[0]);
	free(g->paths[1]);
	free(g);
}

/* ---- folded stacks ---------------------------------------------------------------- */

typedef struct folded_line { char *stack; uint64_t v[2]; } folded_line;

static int cmp_folded(const void *a, const void *b)
{
	return strcmp(((const folded_line *)a)->stack, ((const folded_line *)b)->stack);
}

int fg_write_folded(const flamegraph *g, FILE *out)
{
	const trie *t = &g->raw->paths;
	folded_line *lines = NULL;
	size_t n = 0, cap = 0;
	uint32_t *path = NULL;
	size_t pcap = 0;
	int rc = -1;
	for (size_t i = 1; i < t->n; i++) {
		if (!t->scount[0][i] && !t->scount[1][i])
			continue;
		size_t depth = 0, len = 0;
		for (uint32_t x = (uint32_t)i; x != 0; x = t->parent[x]) {
			if (PF_GROW(path, pcap, depth + 1) < 0)
				goto out;
			path[depth++] = x;
			len += strlen(g->names.strs[t->name[x]]) + 1;
			if (t->srcl[x])
				len += strlen(g->names.strs[t->srcl[x]]) + 1;
		}
		char *s = malloc(len + 1), *w = s;
		if (!s || PF_GROW(lines, cap, n + 1) < 0) {
			free(s);
			goto out;
		}
		while (depth) {
			uint32_t x = path[--depth];
			w = stpcpy(w, g->names.strs[t->name[x]]);
			if (t->srcl[x]) {
				*w++ = ':';
				w = stpcpy(w, g->names.strs[t->srcl[x]]);
			}
			if (depth)
				*w++ = ';';
		}
		*w = 0;
		lines[n++] = (folded_line){ s, { t->self[0][i], t->self[1][i] } };
	}
	if (n > 1)
		qsort(lines, n, sizeof(*lines), cmp_folded);
	for (size_t i = 0; i < n; i++) {
		/* the same stack from two tries' nodes (a srcline's text equal to
		 * another's) is one line */
		uint64_t v0 = lines[i].v[0], v1 = lines[i].v[1];
		while (i + 1 < n && !strcmp(lines[i].stack, lines[i + 1].stack)) {
			i++;
			v0 += lines[i].v[0];
			v1 += lines[i].v[1];
		}
		if (g->nsides == 2)
			fprintf(out, "%s %llu %llu\n", lines[i].stack, (unsigned long long)v0, (unsigned long long)v1);
		else
			fprintf(out, "%s %llu\n", lines[i].stack, (unsigned long long)v0);
	}
	rc = ferror(out) ? -1 : 0;
out:
	for (size_t i = 0; i < n; i++)
		free(lines[i].stack);
	free(lines);
	free(path);
	return rc;
}
