/* perforder.c — perf report's exact row order, ties included.
 *
 * perf sorts rows by inserting them into red-black trees: first the input
 * tree (rows in the order their first sample arrived, keyed by the sort
 * keys' comparators), then, when a key needs it, a collapse tree, and last
 * the output tree keyed by Children/Self and the keys' sort functions. Two
 * of those comparators are not transitive (unresolved symbols compare by
 * address only, resolved ones by dso first; equal Children compare by
 * callchain depth only within one thread), so the printed order of tied
 * rows depends on the trees' shapes. This file replays the same insertions
 * into the same kind of tree (Linux's rbtree insertion and recoloring), with
 * perf's comparators and sign conventions, and reads the result in order.
 *
 * hist entries are in creation order when this runs: the order in which
 * perf would have created them (first sample first; within a sample the
 * Self row, then the callchain rows in cursor order).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proff/hist.h"

typedef struct rbn {
	uint32_t left, right, parent;
	uint8_t red;
} rbn;

#define NIL UINT32_MAX

typedef struct rbtree {
	rbn *n;
	uint32_t root;
} rbtree;

static void set_child(rbtree *t, uint32_t parent, uint32_t old, uint32_t new_)
{
	if (parent == NIL)
		t->root = new_;
	else if (t->n[parent].left == old)
		t->n[parent].left = new_;
	else
		t->n[parent].right = new_;
}

/* old's position goes to new_ (which takes old's color); old becomes a child
 * of new_ with color `color` (Linux __rb_rotate_set_parents) */
static void rotate_set_parents(rbtree *t, uint32_t old, uint32_t new_, uint8_t color)
{
	uint32_t parent = t->n[old].parent;
	t->n[new_].parent = parent;
	t->n[new_].red = t->n[old].red;
	t->n[old].parent = new_;
	t->n[old].red = color;
	set_child(t, parent, old, new_);
}

/* Linux lib/rbtree.c __rb_insert, node already linked as a red leaf */
static void rb_insert_color(rbtree *t, uint32_t node)
{
	rbn *n = t->n;
	uint32_t parent = n[node].parent, gparent, tmp;
	for (;;) {
		if (parent == NIL) {
			n[node].red = 0;
			break;
		}
		if (!n[parent].red)
			break;
		gparent = n[parent].parent;
		tmp = n[gparent].right;
		if (parent != tmp) {                  /* parent is gparent's left */
			if (tmp != NIL && n[tmp].red) {
				n[tmp].red = 0;
				n[parent].red = 0;
				node = gparent;
				parent = n[node].parent;
				n[node].red = 1;
				continue;
			}
			tmp = n[parent].right;
			if (node == tmp) {
				tmp = n[node].left;
				n[parent].right = tmp;
				n[node].left = parent;
				if (tmp != NIL) {
					n[tmp].parent = parent;
					n[tmp].red = 0;
				}
				n[parent].parent = node;
				n[parent].red = 1;
				parent = node;
				tmp = n[node].right;
			}
			n[gparent].left = tmp;
			n[parent].right = gparent;
			if (tmp != NIL) {
				n[tmp].parent = gparent;
				n[tmp].red = 0;
			}
			rotate_set_parents(t, gparent, parent, 1);
			break;
		} else {
			tmp = n[gparent].left;
			if (tmp != NIL && n[tmp].red) {
				n[tmp].red = 0;
				n[parent].red = 0;
				node = gparent;
				parent = n[node].parent;
				n[node].red = 1;
				continue;
			}
			tmp = n[parent].left;
			if (node == tmp) {
				tmp = n[node].right;
				n[parent].left = tmp;
				n[node].right = parent;
				if (tmp != NIL) {
					n[tmp].parent = parent;
					n[tmp].red = 0;
				}
				n[parent].parent = node;
				n[parent].red = 1;
				parent = node;
				tmp = n[node].left;
			}
			n[gparent].right = tmp;
			n[parent].left = gparent;
			if (tmp != NIL) {
				n[tmp].parent = gparent;
				n[tmp].red = 0;
			}
			rotate_set_parents(t, gparent, parent, 1);
			break;
		}
	}
}

/* What the comparators read of a row, in one array (a replay compares
 * each new row with some 17 others: reading a rank here instead of the row,
 * its symbol, its dso and a string rank saves most of the cache misses).
 * Strings are their ranks (strcmp order); NONE_R marks a missing dso,
 * symbol or parent. */
#define NONE_R UINT32_MAX
typedef struct pkey {
	uint64_t period_acc, period;
	uint64_t addr, sym_start, sym_end;
	uint32_t comm, tid, cpu, dso, sym, parent, srcline;
	uint32_t thread, max_depth;
	uint32_t idx;              /* the row (h->entries) */
} pkey;

static _Thread_local const pkey *pk;   /* the rows' keys while an ordering runs (its thread's) */

/* perf 6.1 computes a row's srcline lazily, in the first comparison that
 * reaches the srcline key, and sizes the column from the rows whose srcline
 * was known when they entered the output tree (longer ones print cut). */
static _Thread_local uint8_t *srcline_known;
static _Thread_local size_t srcline_width;

static void srcline_touch(const pkey *a, const pkey *b)
{
	if (srcline_known) {
		srcline_known[a->idx] = 1;
		srcline_known[b->idx] = 1;
	}
}

/* goes_left(new, existing): the per-stage descent rule */
typedef bool (*descend_fn)(const hist *h, const pkey *nw, const pkey *ex);

static bool left_output(const hist *h, const pkey *a, const pkey *b);
static const descend_fn left_output_fn = left_output;

/* Insert items (indexes into h->entries, in order) and return their in-order
 * sequence in `out`. */
static int replay(const hist *h, const uint32_t *items, size_t n, descend_fn left, uint32_t *out)
{
	rbtree t;
	t.n = malloc((n ? n : 1) * sizeof(rbn));
	if (!t.n)
		return -1;
	t.root = NIL;
	for (size_t i = 0; i < n; i++) {
		uint32_t x = (uint32_t)i;
		t.n[x] = (rbn){ NIL, NIL, NIL, 1 };
		uint32_t cur = t.root, parent = NIL;
		bool go_left = false;
		const pkey *nw = &pk[items[i]];
		while (cur != NIL) {
			parent = cur;
			go_left = left(h, nw, &pk[items[cur]]);
			cur = go_left ? t.n[cur].left : t.n[cur].right;
		}
		t.n[x].parent = parent;
		if (parent == NIL)
			t.root = x;
		else if (go_left)
			t.n[parent].left = x;
		else
			t.n[parent].right = x;
		rb_insert_color(&t, x);
		/* user-space rows are known from the start (observed: their
		 * srclines always size the column), others once compared */
		if (left == left_output_fn && srcline_known &&
		    (srcline_known[items[i]] || h->entries[items[i]].level == '.') &&
		    !h->entries[items[i]].filtered) {
			size_t l = strlen(pf_str(h->prof, h->entries[items[i]].srcline));
			if (l > srcline_width)
				srcline_width = l;
		}
	}
	/* in-order walk (an rb-tree of n < 2^32 nodes is at most 64 deep) */
	size_t k = 0, sp = 0;
	uint32_t stack[128];
	uint32_t cur = t.root;
	while (cur != NIL || sp) {
		while (cur != NIL) {
			stack[sp++] = cur;
			cur = t.n[cur].left;
		}
		cur = stack[--sp];
		out[k++] = items[cur];
		cur = t.n[cur].right;
	}
	free(t.n);
	return k == n ? 0 : -1;
}

/* ---- perf's comparators: cmp(left, right), int64 sign conventions ---------- */

/* cmp_null(l, r) of perf: both missing 0, only l missing -1, else 1 */
static inline int64_t null_cmp(bool l_missing, bool r_missing)
{
	if (l_missing && r_missing)
		return 0;
	return l_missing ? -1 : 1;
}

static inline int64_t rcmp(uint32_t a, uint32_t b) { return a < b ? -1 : a > b; }

static inline int64_t dso_cmp(const pkey *l, const pkey *r)
{
	/* sort__dso_cmp(l, r) = _sort__dso_cmp(r->map, l->map) */
	if (l->dso == NONE_R || r->dso == NONE_R)
		return null_cmp(l->dso == NONE_R, r->dso == NONE_R);
	return rcmp(r->dso, l->dso);
}

static int64_t addr_cmp(uint64_t l, uint64_t r) { return (int64_t)(r - l); }

static int64_t sym_cmp(const pkey *l, const pkey *r)
{
	if (l->sym == NONE_R && r->sym == NONE_R)
		return addr_cmp(l->addr, r->addr);
	int64_t ret = dso_cmp(l, r);
	if (ret)
		return ret;
	if (l->sym == NONE_R || r->sym == NONE_R)
		return null_cmp(l->sym == NONE_R, r->sym == NONE_R);
	if (l->sym_start != r->sym_start)
		return (int64_t)(r->sym_start - l->sym_start);
	return (int64_t)(r->sym_end - l->sym_end);
}

static int64_t sym_sort(const pkey *l, const pkey *r)
{
	if (l->sym == NONE_R || r->sym == NONE_R)
		return null_cmp(l->sym == NONE_R, r->sym == NONE_R);
	return rcmp(r->sym, l->sym);
}

static int64_t key_cmp(const hist *h, int key, int stage, const pkey *l, const pkey *r)
{
	switch (key) {
	case HK_COMM:
		return rcmp(r->comm, l->comm);
	case HK_PID:
	case HK_TID:
		return (int64_t)r->tid - (int64_t)l->tid;
	case HK_DSO:
		return dso_cmp(l, r);
	case HK_SYM:
		if (h->opts.diff_mode && stage > 0)
			return sym_sort(l, r);
		return stage == 2 ? sym_sort(l, r) : sym_cmp(l, r);
	case HK_CPU:
		return (int64_t)r->cpu - (int64_t)l->cpu;
	case HK_PARENT:
		if (l->parent == NONE_R || r->parent == NONE_R)
			return null_cmp(l->parent == NONE_R, r->parent == NONE_R);
		return rcmp(r->parent, l->parent);
	case HK_SRCLINE:
		/* perf 6.1: one comparator for every stage, strings computed on use */
		srcline_touch(l, r);
		return rcmp(r->srcline, l->srcline);
	}
	return 0;
}

static int64_t entry_cmp(const hist *h, int stage, const pkey *l, const pkey *r)
{
	for (int i = 0; i < h->nkeys; i++) {
		int64_t c = key_cmp(h, h->keys[i], stage, l, r);
		if (c)
			return c;
	}
	return 0;
}

/* stage 0 (input) and 1 (collapse): cmp(existing, new) < 0 -> left */
static bool left_input(const hist *h, const pkey *nw, const pkey *ex)
{
	return entry_cmp(h, 0, ex, nw) < 0;
}
static bool left_collapse(const hist *h, const pkey *nw, const pkey *ex)
{
	return entry_cmp(h, 1, ex, nw) < 0;
}

static int64_t field_cmp(uint64_t a, uint64_t b) { return a > b ? 1 : a < b ? -1 : 0; }

/* stage 2 (output): hist_entry__sort(new, existing) > 0 -> left */
static bool left_output(const hist *h, const pkey *a, const pkey *b)
{
	int64_t c = 0;
	if (h->opts.children) {
		c = field_cmp(a->period_acc, b->period_acc);
		if (!c && a->thread == b->thread && h->opts.callchain) {
			c = (int64_t)b->max_depth - (int64_t)a->max_depth;
			if (h->opts.caller_order)
				c = -c;
		}
	}
	if (!c)
		c = field_cmp(a->period, b->period);
	if (!c)
		c = entry_cmp(h, 2, a, b);
	return c > 0;
}

static bool needs_collapse(const hist *h)
{
	for (int i = 0; i < h->nkeys; i++)
		if (h->keys[i] == HK_COMM ||
		    (h->keys[i] == HK_SYM && h->opts.diff_mode))
			return true;
	return false;
}

static uint32_t dso_name_id(const hist *h, const hist_entry *e)
{
	const pf_dso *d = &h->prof->dsos[e->dso];
	return h->opts.verbose ? d->long_name : d->short_name;
}

static uint32_t sym_name_id(const hist *h, const hist_entry *e) { return h->prof->syms[e->sym].name; }

static const pf_profile *rank_prof;
static int rank_cmp(const void *a, const void *b)
{
	return strcmp(pf_str(rank_prof, *(const uint32_t *)a), pf_str(rank_prof, *(const uint32_t *)b));
}

/* The rows' keys: every string a row's key may compare replaced by its rank
 * (equal strings share an id, so ranks compare as strcmp would). */
static pkey *build_keys(const hist *h)
{
	const pf_profile *p = h->prof;
	size_t ns = p->strs.n;
	uint32_t *srank = calloc(ns ? ns : 1, sizeof(uint32_t));
	uint8_t *used = calloc(ns ? ns : 1, 1);
	pkey *k = malloc((h->n ? h->n : 1) * sizeof(*k));
	uint32_t *ids = NULL;
	if (!srank || !used || !k)
		goto fail;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		used[e->comm] = 1;
		if (e->dso != PF_NONE)
			used[dso_name_id(h, e)] = 1;
		if (e->sym != PF_NONE)
			used[sym_name_id(h, e)] = 1;
		if (e->parent < ns)
			used[e->parent] = 1;
		if (e->srcline < ns)
			used[e->srcline] = 1;
	}
	size_t nu = 0;
	for (size_t i = 0; i < ns; i++)
		nu += used[i];
	ids = malloc((nu ? nu : 1) * sizeof(uint32_t));
	if (!ids)
		goto fail;
	nu = 0;
	for (size_t i = 0; i < ns; i++)
		if (used[i])
			ids[nu++] = (uint32_t)i;
	rank_prof = p;
	qsort(ids, nu, sizeof(uint32_t), rank_cmp);
	for (size_t i = 0; i < nu; i++)
		srank[ids[i]] = (uint32_t)i;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		pkey *x = &k[i];
		x->period_acc = e->period_acc;
		x->period = e->period;
		x->addr = e->addr;
		x->comm = srank[e->comm];
		x->tid = e->tid;
		x->cpu = e->cpu;
		x->dso = e->dso != PF_NONE ? srank[dso_name_id(h, e)] : NONE_R;
		if (e->sym != PF_NONE) {
			const pf_sym *y = &p->syms[e->sym];
			x->sym = srank[y->name];
			x->sym_start = y->start;
			x->sym_end = y->end;
		} else {
			x->sym = NONE_R;
			x->sym_start = x->sym_end = 0;
		}
		x->parent = e->parent ? (e->parent < ns ? srank[e->parent] : 0) : NONE_R;
		x->srcline = e->srcline < ns ? srank[e->srcline] : 0;
		x->thread = e->thread;
		x->max_depth = e->max_depth;
		x->idx = (uint32_t)i;
	}
	free(ids);
	free(used);
	free(srank);
	return k;
fail:
	free(ids);
	free(used);
	free(srank);
	free(k);
	return NULL;
}

/* One ordering: the rows' keys (built from the rows first), then the
 * replays, which read nothing else of the hist that the callchain-tree
 * pass changes — so they may run on a thread of their own meanwhile
 * (hist_order_start), without srcline keys (those intern strings). */
struct hist_order {
	const hist *h;
	size_t n;
	pkey *keys;
	uint8_t *known;            /* srcline keys: rows whose srcline was compared */
	uint32_t *perm;            /* the rows in perf's order */
	size_t width;              /* srcline column width */
	int rc;
	bool threaded;
	pthread_t th;
};

static void order_free(hist_order *o)
{
	if (!o)
		return;
	free(o->keys);
	free(o->known);
	free(o->perm);
	free(o);
}

static hist_order *order_prepare(const hist *h)
{
	hist_order *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->h = h;
	o->n = h->n;
	bool has_srcline = false;
	for (int i = 0; i < h->nkeys; i++)
		has_srcline |= h->keys[i] == HK_SRCLINE;
	o->keys = build_keys(h);
	o->perm = malloc((o->n ? o->n : 1) * sizeof(uint32_t));
	o->known = has_srcline ? calloc(o->n ? o->n : 1, 1) : NULL;
	if (!o->keys || !o->perm || (has_srcline && !o->known)) {
		order_free(o);
		return NULL;
	}
	return o;
}

static void *order_run(void *arg)
{
	hist_order *o = arg;
	const hist *h = o->h;
	size_t n = o->n;
	uint32_t *a = o->perm;
	uint32_t *b = malloc((n ? n : 1) * sizeof(*b));
	o->rc = b ? 0 : -1;
	pk = o->keys;
	srcline_known = o->known;
	srcline_width = 0;
	if (!o->rc) {
		for (size_t i = 0; i < n; i++)
			a[i] = (uint32_t)i;
		o->rc = replay(h, a, n, left_input, b);
	}
	if (!o->rc && needs_collapse(h)) {
		o->rc = replay(h, b, n, left_collapse, a);
		uint32_t *t = a; a = b; b = t;
	}
	if (!o->rc)
		o->rc = replay(h, b, n, left_output, a);
	if (!o->rc && a != o->perm)
		memcpy(o->perm, a, n * sizeof(*a));
	if (a != o->perm)
		free(a);
	else
		free(b);
	o->width = srcline_width;
	pk = NULL;
	srcline_known = NULL;
	return NULL;
}

static int order_apply(hist *h, hist_order *o)
{
	if (o->rc < 0 || o->n != h->n)
		return -1;
	size_t n = h->n;
	hist_entry *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	if (!sorted)
		return -1;
	for (size_t i = 0; i < n; i++)
		sorted[i] = h->entries[o->perm[i]];
	memcpy(h->entries, sorted, n * sizeof(*sorted));
	free(sorted);
	if (o->known) {
		size_t hw = strlen(hist_keys[HK_SRCLINE].header);
		h->srcline_width = o->width > hw ? o->width : hw;
	}
	return 0;
}

void hist_order_start(hist *h)
{
	if (h->order)
		return;
	for (int i = 0; i < h->nkeys; i++)
		if (h->keys[i] == HK_SRCLINE)
			return;     /* srcline keys compute strings: in hist_order_perf */
	hist_order *o = order_prepare(h);
	if (!o)
		return;             /* hist_order_perf will try again */
	o->threaded = pthread_create(&o->th, NULL, order_run, o) == 0;
	if (!o->threaded)
		order_run(o);
	h->order = o;
}

static void order_join(hist_order *o)
{
	if (o->threaded) {
		pthread_join(o->th, NULL);
		o->threaded = false;
	}
}

void hist_order_discard(hist *h)
{
	if (!h->order)
		return;
	order_join(h->order);
	order_free(h->order);
	h->order = NULL;
}

int hist_order_perf(hist *h)
{
	int rc = -1;
	if (h->order) {
		/* started by hist_build while it built the callchain trees */
		order_join(h->order);
		rc = order_apply(h, h->order);
		hist_order_discard(h);
		if (rc == 0)
			return 0;
	}
	hist_order *o = order_prepare(h);
	if (!o)
		return -1;
	order_run(o);
	rc = order_apply(h, o);
	order_free(o);
	return rc;
}
