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
 *
 * The tree itself (Linux's insertion and recoloring, the in-order walk)
 * is rbtree.c's.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "proff/hist.h"
#include "../model/tables.h"
#include "keys.h"
#include "sym-span.h"
#include "rbtree.h"

/* goes_left(new, existing): the per-stage descent rule, on node indices */
typedef bool (*descend_fn)(const replay_ctx *c, uint32_t nw, uint32_t ex);

static int64_t entry_cmp(const replay_ctx *c, int stage, uint32_t l, uint32_t r)
{
	const hist *h = c->h;
	for (int i = 0; i < h->nkeys; i++) {
		int64_t k = hist_keys[h->keys[i]].perf_cmp(c, i, stage, l, r);
		if (k)
			return k;
	}
	return 0;
}

/* stage 0 (input) and 1 (collapse): cmp(existing, new) < 0 -> left */
static bool left_input(const replay_ctx *c, uint32_t nw, uint32_t ex)
{
	return entry_cmp(c, 0, ex, nw) < 0;
}
static bool left_collapse(const replay_ctx *c, uint32_t nw, uint32_t ex)
{
	return entry_cmp(c, 1, ex, nw) < 0;
}

static int64_t field_cmp(uint64_t a, uint64_t b) { return a > b ? 1 : a < b ? -1 : 0; }

/* stage 2 (output), hist_entry__sort(new, existing) up to the sort keys:
 * Children (x0; equal ones by callchain depth within one thread), Self (x1) */
static inline int64_t output_periods_cmp(const replay_ctx *rc, uint32_t a, uint32_t b)
{
	const hist *h = rc->h;
	const rbn *tn = rc->tn;
	int64_t c = 0;
	if (h->opts.children && !h->opts.no_children_first) {
		c = field_cmp(tn[a].x0, tn[b].x0);
		if (!c && h->opts.callchain) {
			/* the node's copy of the rows' thread and depth (x2) */
			uint64_t xa = tn[a].x2, xb = tn[b].x2;
			if (xa >> 32 == xb >> 32) {
				c = (int64_t)(uint32_t)xb - (int64_t)(uint32_t)xa;
				if (h->opts.caller_order)
					c = -c;
			}
		}
	}
	return c || h->opts.no_self_first ? c : field_cmp(tn[a].x1, tn[b].x1);
}

/* stage 2: hist_entry__sort(new, existing) > 0 -> left; Self after the
 * keys when the spec named an overhead column (perf appends the output
 * columns the sort order lacks) */
static bool left_output(const replay_ctx *rc, uint32_t a, uint32_t b)
{
	int64_t c = output_periods_cmp(rc, a, b);
	if (!c)
		c = entry_cmp(rc, 2, a, b);
	if (!c && rc->h->opts.no_self_first)
		c = field_cmp(rc->tn[a].x1, rc->tn[b].x1);
	return c > 0;
}

/* perf's default sort keys comm,dso,sym outside diff mode: the replays'
 * comparators written out (the generic ones loop over the keys) */
static bool is_cds(const hist *h)
{
	return h->nkeys == 3 && h->keys[0] == HK_COMM && h->keys[1] == HK_DSO && h->keys[2] == HK_SYM &&
	       !h->opts.diff_mode && !h->opts.order_replay;
}

/* stages 0 and 1: entry_cmp for comm,dso,sym */
static inline int64_t cmp_cds(const rbn *l, const rbn *r)
{
	if (l->comm != r->comm)
		return rcmp(r->comm, l->comm);
	int64_t c = dso_cmp(l, r);
	return c ? c : sym_cmp(l, r);
}

/* stage 2: left_output for comm,dso,sym */
static inline bool left_output_cds(const replay_ctx *rc, uint32_t a, uint32_t b)
{
	const rbn *l = &rc->tn[a], *r = &rc->tn[b];
	int64_t c = output_periods_cmp(rc, a, b);
	if (!c)
		c = rcmp(r->comm, l->comm);
	if (!c)
		c = dso_cmp(l, r);
	if (!c)
		c = sym_sort(l, r);
	return c > 0;
}

/* Is stage `stage`'s comparator a total preorder on the rows (c->pk)? Then
 * the tree's in-order sequence is a stable sort. Not so (the replay is
 * needed) with srcline keys (perf computes the strings while comparing),
 * for equal Children (perf compares callchain depths within one thread
 * only), for sym_cmp's unresolved rows unless a dso key came first (they
 * compare by address alone, the others by dso first), and for addresses
 * or symbol bounds more than 2^63 apart (perf subtracts them). */
static bool stage_is_sort(const replay_ctx *c, int stage)
{
	const hist *h = c->h;
	const pkey *pk = c->pk;
	if (h->opts.order_replay)
		return false;
	bool dso_seen = false;
	for (int i = 0; i < h->nkeys; i++) {
		if (hist_keys[h->keys[i]].needs & HKN_LAZY)
			return false;
		switch (h->keys[i]) {
		case HK_DSO:
			dso_seen = true;
			break;
		case HK_SYM:
			if (stage == 2 || (stage == 1 && h->opts.diff_mode))
				break;      /* sym_sort: names */
			if (!dso_seen)
				return false;
			sym_span sp = SYM_SPAN_EMPTY;
			for (size_t r = 0; r < h->n; r++)
				span_add(&sp, pk[r].sym == NONE_R, pk[r].addr, pk[r].sym_start, pk[r].sym_end);
			if (span_wraps(&sp))
				return false;
			break;
		default:
			break;
		}
	}
	if (stage == 2 && h->opts.children && h->opts.callchain)
		return false;
	return true;
}

/* A tree node's key fields from the row's key: stage 2 (output) keeps the
 * periods, the others the address and symbol range. */
static void node_fill(rbn *x, const pkey *k, bool out_stage)
{
	x->comm = k->comm;
	x->dso = k->dso;
	x->sym = k->sym;
	if (out_stage) {
		x->x0 = k->period_acc;
		x->x1 = k->period;
		x->x2 = (uint64_t)k->thread << 32 | k->max_depth;
	} else {
		x->x0 = k->addr;
		x->x1 = k->sym_start;
		x->x2 = k->sym_end;
	}
}

/* Stage 1 with comm,dso,sym: nodes 0..n-1 in the input tree's in-order,
 * so each (comm, dso) group is one run. A group's comparisons (sym_cmp)
 * are transitive unless its unresolved addresses, or its symbols' starts
 * or ends, span 2^63 or more (perf subtracts them): those groups are
 * flagged, and compared in full. */
static void group_wrap(rbn *v, size_t n)
{
	for (size_t s = 0, e; s < n; s = e) {
		sym_span sp = SYM_SPAN_EMPTY;
		for (e = s; e < n && v[e].comm == v[s].comm && v[e].dso == v[s].dso; e++)
			span_add(&sp, v[e].sym == NONE_R, v[e].x0, v[e].x1, v[e].x2);
		bool wrap = span_wraps(&sp);
		for (size_t i = s; i < e; i++)
			v[i].wrap = wrap;
	}
}

/* Insert node x (its key fields filled; c->tn is t->n) into a stage's tree:
 * perf's descent with the stage's rule, then Linux's recoloring. */
static void tree_insert(const replay_ctx *rc, rbtree *t, uint32_t x, int stage, bool cds, descend_fn left)
{
	rbn *n = t->n;
	n[x].left = n[x].right = n[x].parent = NIL;
	n[x].red = 1;
	uint32_t cur = t->root, parent = NIL;
	bool go_left = false;
	if (cds && stage == 1) {
		/* the collapse tree of perf's default keys takes the input tree's
		 * in-order sequence, compared the same way (cmp_cds): that
		 * sequence is sorted by (comm, dso), and within a group whose
		 * comparisons are transitive, by the comparator — so a new row
		 * goes right of every earlier one but in its own group when
		 * that group is not (wrap; see group_wrap) */
		const rbn *nw = &n[x];
		if (!nw->wrap) {
			/* every comparison would send it right: after the last node */
			parent = t->rightmost;
			cur = NIL;
		}
		while (cur != NIL) {      /* a row of a wrapping group */
			parent = cur;
			const rbn *c = &n[cur];
			if (c->comm != nw->comm || c->dso != nw->dso)
				go_left = false;
			else if (c->sym == NONE_R && nw->sym == NONE_R)
				go_left = addr_cmp(c->x0, nw->x0) < 0;     /* sym_cmp's first case */
			else
				go_left = cmp_cds(c, nw) < 0;
			cur = go_left ? c->left : c->right;
		}
		if (!go_left && parent == t->rightmost)
			t->rightmost = x;
	} else if (cds && stage < 2) {
		/* perf's default keys, the comparator inlined */
		const rbn *nw = &n[x];
		while (cur != NIL) {
			parent = cur;
			go_left = cmp_cds(&n[cur], nw) < 0;
			cur = go_left ? n[cur].left : n[cur].right;
		}
	} else if (cds) {
		while (cur != NIL) {
			parent = cur;
			go_left = left_output_cds(rc, x, cur);
			cur = go_left ? n[cur].left : n[cur].right;
		}
	} else {
		while (cur != NIL) {
			parent = cur;
			go_left = left(rc, x, cur);
			cur = go_left ? n[cur].left : n[cur].right;
		}
	}
	n[x].parent = parent;
	if (parent == NIL)
		t->root = x;
	else if (go_left)
		n[parent].left = x;
	else
		n[parent].right = x;
	rb_insert_color(t, x);
}

/* Stable merge sort of the node indices 0..n-1 by `left` (a sorts before b
 * when left(a, b)): what the tree gives when the comparator is a total
 * preorder (stage_is_sort) — a row goes right of its equals, so equal
 * rows keep their insertion order. A sequence already in order costs one
 * pass. */
static int sort_nodes(const replay_ctx *c, size_t n, descend_fn left, uint32_t *v)
{
	for (size_t i = 0; i < n; i++)
		v[i] = (uint32_t)i;
	size_t i = 1;
	while (i < n && !left(c, v[i], v[i - 1]))
		i++;
	if (i >= n)
		return 0;
	uint32_t *tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -1;
	uint32_t *src = v, *dst = tmp;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t a = lo, b = mid, k = lo;
			while (a < mid && b < hi)
				dst[k++] = left(c, src[b], src[a]) ? src[b++] : src[a++];
			while (a < mid)
				dst[k++] = src[a++];
			while (b < hi)
				dst[k++] = src[b++];
		}
		uint32_t *t = src; src = dst; dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

/* A row entering the output tree: perf's column widths of the lazy keys
 * whose value it computed (bits: known, per key slot) */
static void lazy_widths(replay_ctx *c, const hist_entry *e, uint8_t bits)
{
	const hist *h = c->h;
	for (int i = 0; i < h->nkeys; i++) {
		if (!(bits & (1u << i)) || !(hist_keys[h->keys[i]].needs & HKN_LAZY))
			continue;
		size_t l = hist_keys[h->keys[i]].width(h, e);
		if (l > c->lazy_width[i])
			c->lazy_width[i] = l;
	}
}

/* Insert items (indexes into h->entries, in order) into stage `stage`'s
 * tree (0 input, 1 collapse, 2 output) and return their in-order sequence
 * in `out`. Node i is items[i]; stage 2 keeps the periods in a node, the
 * others the address and symbol range. Where the stage's comparator is a
 * total preorder on these rows, a stable sort gives the same sequence. */
static int replay(replay_ctx *c, const uint32_t *items, size_t n, int stage, uint32_t *out)
{
	const hist *h = c->h;
	const pkey *pk = c->pk;
	descend_fn left = stage == 0 ? left_input : stage == 1 ? left_collapse : left_output;
	rbtree t;
	t.n = aligned_alloc(64, (n ? n : 1) * sizeof(rbn));
	if (!t.n)
		return -1;
	bool out_stage = stage == 2;
	for (size_t i = 0; i < n; i++) {
		if (i + 8 < n) {
			/* the items are the rows in another order: fetched ahead */
			__builtin_prefetch(&pk[items[i + 8]]);
			__builtin_prefetch((const char *)&pk[items[i + 8]] + 64);
		}
		node_fill(&t.n[i], &pk[items[i]], out_stage);
	}
	c->tn = t.n;
	c->titems = items;
	if (stage_is_sort(c, stage)) {
		int rc = sort_nodes(c, n, left, out);
		for (size_t i = 0; i < n && !rc; i++)
			out[i] = items[out[i]];
		c->tn = NULL;
		c->titems = NULL;
		free(t.n);
		return rc;
	}
	bool cds = is_cds(h);
	if (cds && stage == 1)
		group_wrap(t.n, n);
	t.root = NIL;
	t.rightmost = NIL;
	for (size_t i = 0; i < n; i++) {
		tree_insert(c, &t, (uint32_t)i, stage, cds, left);
		if (out_stage && c->known && c->known[items[i]] && !h->entries[items[i]].filtered)
			lazy_widths(c, &h->entries[items[i]], c->known[items[i]]);
	}
	size_t k = tree_walk(&t, items, out);
	c->tn = NULL;
	c->titems = NULL;
	free(t.n);
	return k == n ? 0 : -1;
}

/* perf's collapse stage runs when a key has a collapse comparator */
static bool needs_collapse(const hist *h)
{
	for (int i = 0; i < h->nkeys; i++) {
		int c = hist_keys[h->keys[i]].collapse;
		if (c == HKC_ALWAYS || (c == HKC_DIFF && h->opts.diff_mode))
			return true;
	}
	return false;
}

static uint32_t dso_name_id(const hist *h, const hist_entry *e)
{
	const pf_dso *d = &h->prof->dsos[e->dso];
	return h->opts.verbose ? d->long_name : d->short_name;
}

static uint32_t sym_name_id(const hist *h, const hist_entry *e) { return h->prof->syms[e->sym].name; }

/* strcmp order of string ids (qsort_r: orderings may run on several threads) */
static int rank_cmp(const void *a, const void *b, void *prof)
{
	const pf_profile *p = prof;
	return strcmp(pf_str(p, *(const uint32_t *)a), pf_str(p, *(const uint32_t *)b));
}

/* Row e's key with its strings' ranks (srank, over ns string ids) */
static void key_of(const hist *h, const uint32_t *srank, size_t ns, const hist_entry *e, size_t idx, pkey *x)
{
	memset(x, 0, sizeof(*x));
	x->period_acc = e->period_acc;
	x->period = e->period;
	x->addr = e->addr;
	x->comm = e->comm < ns ? srank[e->comm] : 0;
	x->tid = e->tid;
	x->cpu = e->cpu;
	x->dso = e->dso != PF_NONE ? srank[dso_name_id(h, e)] : NONE_R;
	if (e->sym != PF_NONE) {
		const pf_sym *y = &h->prof->syms[e->sym];
		x->sym = srank[y->name];
		x->sym_start = y->start;
		x->sym_end = y->end;
	} else {
		x->sym = NONE_R;
	}
	x->parent = e->parent ? (e->parent < ns ? srank[e->parent] : 0) : NONE_R;
	x->srcline = e->srcline < ns ? srank[e->srcline] : 0;
	x->thread = e->thread;
	if (h->prof->branches)
		x->branch = e->branch;
	else
		x->max_depth = e->max_depth;
	x->idx = (uint32_t)idx;
	int g = 0;
	for (int i = 0; i < h->nkeys && g < HIST_GEN_KEYS; i++) {
		const hist_key_def *k = &hist_keys[h->keys[i]];
		if (!k->perf_value)
			continue;
		uint64_t v = k->perf_value(h, e);
		x->gen[g++] = k->perf_str ? (v < ns ? srank[v] : 0) : v;
	}
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
		for (int j = 0; j < h->nkeys; j++) {
			const hist_key_def *kd = &hist_keys[h->keys[j]];
			if (kd->perf_value && kd->perf_str) {
				uint64_t v = kd->perf_value(h, e);
				if (v < ns)
					used[v] = 1;
			}
		}
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
	qsort_r(ids, nu, sizeof(uint32_t), rank_cmp, (void *)p);
	for (size_t i = 0; i < nu; i++)
		srank[ids[i]] = (uint32_t)i;
	for (size_t i = 0; i < h->n; i++)
		key_of(h, srank, ns, &h->entries[i], i, &k[i]);
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
	uint8_t *known;            /* lazy keys: per row, the key slots whose value perf computed */
	uint32_t *perm;            /* the rows in perf's order */
	size_t nout;               /* how many (merged rows left out) */
	size_t width[HIST_MAX_KEYS];   /* lazy keys' column widths */
	int rc;
	bool threaded;
	pthread_t th;
	/* Streamed (hist_order_stream_begin): the rows reach the thread as the
	 * Children pass creates them, and the input tree grows meanwhile. */
	bool streaming;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct srow **chunks;      /* SROW_CHUNK rows each, never moved */
	size_t produced;           /* rows written (the creating thread's) */
	size_t published;          /* rows the thread may read (under mu) */
	bool done, failed;         /* (under mu) */
	bool periods;              /* (under mu) per_acc, per_self, per_depth are set */
	bool failed_local;         /* the creating thread's failure (not under mu) */
	uint64_t *per_acc, *per_self;   /* once done: the rows' Children and Self */
	uint32_t *per_depth;
};

/* A streamed row: its key as the rows hold it (string ids, not ranks) */
typedef struct srow {
	uint64_t addr, sym_start, sym_end;
	uint32_t comm, tid, cpu, dso, sym, parent, thread;
} srow;

#define SROW_SHIFT 14
#define SROW_CHUNK ((size_t)1 << SROW_SHIFT)
#define SROW_MAX_CHUNKS ((size_t)1 << (32 - SROW_SHIFT))
#define SROW_PUBLISH 4096          /* rows handed over at a time */

static void order_free(hist_order *o)
{
	if (!o)
		return;
	if (o->streaming) {
		for (size_t i = 0; i < SROW_MAX_CHUNKS && o->chunks && o->chunks[i]; i++)
			free(o->chunks[i]);
		free(o->chunks);
		free(o->per_acc);
		free(o->per_self);
		free(o->per_depth);
		pthread_mutex_destroy(&o->mu);
		pthread_cond_destroy(&o->cv);
	}
	free(o->keys);
	free(o->known);
	free(o->perm);
	free(o);
}

/* The rows whose srcline perf computes in its input tree besides those its
 * insertions compare (replayed): every row of two samples or more — each
 * raw sample walks the tree (hists__findnew_entry), and a walk to an
 * existing row ends comparing it on every key. Other walks compare no
 * more: where the comparators are an order, a walk meets a row whose keys
 * before the srcline equal its own only if its group has two rows, and
 * each of those was compared when the second was inserted or at its own
 * insertion (an insertion's walk passes the new row's in-order
 * neighbours, one of them of its group). So the raw samples' order does
 * not matter (checked once against a replay of every raw sample's walk,
 * on random profiles and on recordings). With Children a row's walks are
 * its samples' that reach it by any frame: a row of one Self sample may
 * have more. */
static void srcline_seed(const hist *h, uint8_t *known)
{
	for (size_t i = 0; i < h->n; i++)
		known[i] = h->entries[i].nr_events >= 2 ? 0xff : 0;
}

static hist_order *order_prepare(const hist *h)
{
	hist_order *o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->h = h;
	o->n = h->n;
	bool has_srcline = (hist_keys_needs(h->keys, h->nkeys) & HKN_LAZY) != 0;
	o->keys = build_keys(h);
	o->perm = malloc((o->n ? o->n : 1) * sizeof(uint32_t));
	o->known = has_srcline ? calloc(o->n ? o->n : 1, 1) : NULL;
	if (!o->keys || !o->perm || (has_srcline && !o->known)) {
		order_free(o);
		return NULL;
	}
	if (o->known)
		srcline_seed(h, o->known);
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
	replay_ctx c = { .h = h, .pk = o->keys, .known = o->known };
	if (!o->rc && h->collapsed) {
		/* tree mode kept perf's input and collapse trees: the output
		 * tree's insertions are known. The srclines perf computes
		 * while comparing in those two trees are marked by replaying
		 * them (as without tree mode; their order is not used) */
		if (o->known) {
			for (size_t i = 0; i < n; i++)
				a[i] = (uint32_t)i;
			o->rc = replay(&c, a, n, 0, b);
			size_t k = 0;
			for (size_t i = 0; i < n; i++)
				if (!h->merged_into || h->merged_into[b[i]] == UINT32_MAX)
					b[k++] = b[i];
			if (!o->rc && needs_collapse(h))
				o->rc = replay(&c, b, k, 1, a);
			if (o->rc)
				goto done;
		}
		memcpy(b, h->collapsed, h->nr_collapsed * sizeof(uint32_t));
		n = h->nr_collapsed;
		o->nout = n;
		o->rc = replay(&c, b, n, 2, a);
		goto done;
	}
	if (!o->rc) {
		for (size_t i = 0; i < n; i++)
			a[i] = (uint32_t)i;
		o->rc = replay(&c, a, n, 0, b);
	}
	if (!o->rc && h->merged_into) {
		/* rows perf's collapse merged into another: in the input tree only */
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (h->merged_into[b[i]] == UINT32_MAX)
				b[k++] = b[i];
		n = k;
	}
	o->nout = n;
	if (!o->rc && needs_collapse(h)) {
		o->rc = replay(&c, b, n, 1, a);
		uint32_t *t = a; a = b; b = t;
	}
	if (!o->rc)
		o->rc = replay(&c, b, n, 2, a);
done:
	if (!o->rc && a != o->perm)
		memcpy(o->perm, a, n * sizeof(*a));
	if (a != o->perm)
		free(a);
	else
		free(b);
	memcpy(o->width, c.lazy_width, sizeof(o->width));
	return NULL;
}

static int order_apply(hist *h, hist_order *o)
{
	if (o->rc < 0 || o->n != h->n)
		return -1;
	size_t n = o->nout;
	if (n) {
		hist_entry *sorted = malloc(n * sizeof(*sorted));
		if (!sorted)
			return -1;
		for (size_t i = 0; i < n; i++) {
			sorted[i] = h->entries[o->perm[i]];
			if (o->known)
				sorted[i].lazy_known = o->known[o->perm[i]];
		}
		free(h->entries);       /* the rows are the new array (no copy back) */
		h->entries = sorted;
		h->cap = n;
	}
	h->n = n;
	free(h->merged_into);       /* row ids of before */
	h->merged_into = NULL;
	free(h->collapsed);
	h->collapsed = NULL;
	for (int i = 0; o->known && i < h->nkeys; i++) {
		if (!(hist_keys[h->keys[i]].needs & HKN_LAZY))
			continue;
		size_t hw = strlen(hist_keys[h->keys[i]].header);
		h->key_width[i] = o->width[i] > hw ? o->width[i] : hw;
	}
	return 0;
}

/* ---- the streamed ordering --------------------------------------------------- */

/* Ranks of every string of the profile (strcmp order): the rows are not
 * known yet, so all strings are ranked (ranks of the used ones compare
 * as build_keys' do). */
static uint32_t *all_ranks(const pf_profile *p)
{
	size_t ns = p->strs.n;
	uint32_t *ids = malloc((ns ? ns : 1) * sizeof(uint32_t));
	uint32_t *srank = malloc((ns ? ns : 1) * sizeof(uint32_t));
	if (!ids || !srank) {
		free(ids);
		free(srank);
		return NULL;
	}
	for (size_t i = 0; i < ns; i++)
		ids[i] = (uint32_t)i;
	qsort_r(ids, ns, sizeof(uint32_t), rank_cmp, (void *)p);
	for (size_t i = 0; i < ns; i++)
		srank[ids[i]] = (uint32_t)i;
	free(ids);
	return srank;
}

static void *order_stream_run(void *arg)
{
	hist_order *o = arg;
	const hist *h = o->h;
	uint32_t *srank = all_ranks(h->prof);
	size_t ns = h->prof->strs.n;
	rbtree t = { NULL, NIL, NIL, { NIL, NIL, NIL } };
	size_t cap = 0, done_rows = 0;
	pkey *keys = NULL;
	uint32_t *ident = NULL;
	int rc = srank ? 0 : -1;
	bool cds = is_cds(h);
	replay_ctx c = { .h = h };
	for (;;) {
		pthread_mutex_lock(&o->mu);
		while (!rc && done_rows == o->published && !o->done && !o->failed)
			pthread_cond_wait(&o->cv, &o->mu);
		size_t upto = o->published;
		bool fin = o->done, failed = o->failed;
		pthread_mutex_unlock(&o->mu);
		if (failed || rc)
			break;
		if (upto > cap) {
			size_t ncap = cap ? cap : SROW_CHUNK;
			while (ncap < upto)
				ncap *= 2;
			rbn *nn = aligned_alloc(64, ncap * sizeof(rbn));
			pkey *nk = realloc(keys, ncap * sizeof(pkey));
			uint32_t *ni = realloc(ident, ncap * sizeof(uint32_t));
			if (nk)
				keys = nk;
			if (ni)
				ident = ni;
			if (!nn || !nk || !ni) {
				free(nn);
				rc = -1;
				break;
			}
			if (t.n)
				memcpy(nn, t.n, done_rows * sizeof(rbn));
			free(t.n);
			t.n = nn;
			cap = ncap;
		}
		c.pk = keys;
		c.tn = t.n;
		c.titems = ident;
		for (; done_rows < upto; done_rows++) {
			const srow *r = &o->chunks[done_rows >> SROW_SHIFT][done_rows & (SROW_CHUNK - 1)];
			pkey *x = &keys[done_rows];
			memset(x, 0, sizeof(*x));
			x->addr = r->addr;
			x->comm = r->comm < ns ? srank[r->comm] : 0;
			x->tid = r->tid;
			x->cpu = r->cpu;
			x->dso = r->dso != UINT32_MAX && r->dso < ns ? srank[r->dso] : NONE_R;
			x->sym = r->sym != UINT32_MAX && r->sym < ns ? srank[r->sym] : NONE_R;
			x->sym_start = x->sym != NONE_R ? r->sym_start : 0;
			x->sym_end = x->sym != NONE_R ? r->sym_end : 0;
			x->parent = r->parent ? (r->parent < ns ? srank[r->parent] : 0) : NONE_R;
			x->thread = r->thread;
			x->idx = (uint32_t)done_rows;
			ident[done_rows] = (uint32_t)done_rows;
			node_fill(&t.n[done_rows], x, false);
			tree_insert(&c, &t, (uint32_t)done_rows, 0, cds, left_input);
		}
		if (fin && done_rows == upto)
			break;
	}
	size_t n = done_rows;
	uint32_t *a = NULL, *b = NULL;
	if (!rc) {
		a = malloc((n ? n : 1) * sizeof(*a));
		b = malloc((n ? n : 1) * sizeof(*b));
		if (!a || !b || tree_walk(&t, ident, b) != n)
			rc = -1;
	}
	free(t.n);
	free(ident);
	free(srank);
	c.tn = NULL;
	c.titems = NULL;
	c.pk = keys;
	/* the collapse tree compares no period: while the other thread
	 * finishes the rows' totals */
	if (!rc && needs_collapse(h)) {
		rc = replay(&c, b, n, 1, a);
		uint32_t *x = a; a = b; b = x;
	}
	if (!rc) {
		pthread_mutex_lock(&o->mu);
		while (!o->periods && !o->failed)
			pthread_cond_wait(&o->cv, &o->mu);
		if (o->failed || !o->per_acc)
			rc = -1;
		pthread_mutex_unlock(&o->mu);
	}
	if (!rc) {
		/* the periods, final once the Children pass is done */
		for (size_t i = 0; i < n; i++) {
			keys[i].period_acc = o->per_acc[i];
			keys[i].period = o->per_self[i];
			keys[i].max_depth = o->per_depth[i];
		}
		rc = replay(&c, b, n, 2, a);
	}
	free(b);
	o->keys = keys;
	o->perm = a;
	o->n = n;
	o->nout = n;
	o->rc = rc ? -1 : 0;
	return NULL;
}

/* Can perf's order be computed ahead, on a thread of its own? Not with
 * keys perf computes while comparing (srcline keys intern strings), nor
 * with keys outside the streamed rows' fields (perf_value). */
static bool order_ahead(const hist *h)
{
	for (int i = 0; i < h->nkeys; i++)
		if ((hist_keys[h->keys[i]].needs & HKN_LAZY) || hist_keys[h->keys[i]].perf_value)
			return false;
	return true;
}

void hist_order_stream_begin(hist *h)
{
	if (h->order)
		return;
	if (!order_ahead(h))
		return;     /* srcline keys compute strings: in hist_order_perf */
	hist_order *o = calloc(1, sizeof(*o));
	if (!o)
		return;
	o->h = h;
	o->chunks = calloc(SROW_MAX_CHUNKS, sizeof(*o->chunks));
	if (!o->chunks || pthread_mutex_init(&o->mu, NULL) != 0) {
		free(o->chunks);
		free(o);
		return;
	}
	if (pthread_cond_init(&o->cv, NULL) != 0) {
		pthread_mutex_destroy(&o->mu);
		free(o->chunks);
		free(o);
		return;
	}
	o->streaming = true;
	if (pthread_create(&o->th, NULL, order_stream_run, o) != 0) {
		order_free(o);
		return;             /* hist_order_start then works as before */
	}
	o->threaded = true;
	h->order = o;
	for (size_t i = 0; i < h->n; i++)
		hist_order_stream_row(h, i);
}

static void stream_publish(hist_order *o, bool done, bool failed)
{
	pthread_mutex_lock(&o->mu);
	o->published = o->produced;
	o->done |= done;
	o->failed |= failed;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

void hist_order_stream_row(hist *h, size_t id)
{
	hist_order *o = h->order;
	if (!o || !o->streaming || o->done || o->failed_local || id != o->produced)
		return;
	size_t c = id >> SROW_SHIFT;
	if (c >= SROW_MAX_CHUNKS) {
		o->failed_local = true;
		stream_publish(o, false, true);
		return;
	}
	if (!o->chunks[c] && !(o->chunks[c] = malloc(SROW_CHUNK * sizeof(srow)))) {
		o->failed_local = true;
		stream_publish(o, false, true);
		return;
	}
	const hist_entry *e = &h->entries[id];
	srow *r = &o->chunks[c][id & (SROW_CHUNK - 1)];
	r->addr = e->addr;
	r->comm = e->comm;
	r->tid = e->tid;
	r->cpu = e->cpu;
	r->dso = e->dso != PF_NONE ? dso_name_id(h, e) : UINT32_MAX;
	if (e->sym != PF_NONE) {
		const pf_sym *y = &h->prof->syms[e->sym];
		r->sym = y->name;
		r->sym_start = y->start;
		r->sym_end = y->end;
	} else {
		r->sym = UINT32_MAX;
		r->sym_start = r->sym_end = 0;
	}
	r->parent = e->parent;
	r->thread = e->thread;
	o->produced = id + 1;
	if (o->produced % SROW_PUBLISH == 0)
		stream_publish(o, false, false);
}

void hist_order_stream_rows_end(hist *h)
{
	hist_order *o = h->order;
	if (!o || !o->streaming || o->done)
		return;
	stream_publish(o, true, o->failed_local || o->produced != h->n);
}

void hist_order_stream_end(hist *h)
{
	hist_order *o = h->order;
	if (!o || !o->streaming || o->periods)
		return;
	hist_order_stream_rows_end(h);
	size_t n = o->produced;
	bool ok = !o->failed_local && n == h->n;
	if (ok) {
		o->per_acc = malloc((n ? n : 1) * sizeof(uint64_t));
		o->per_self = malloc((n ? n : 1) * sizeof(uint64_t));
		o->per_depth = malloc((n ? n : 1) * sizeof(uint32_t));
		ok = o->per_acc && o->per_self && o->per_depth;
	}
	if (ok) {
		for (size_t i = 0; i < n; i++) {
			o->per_acc[i] = h->entries[i].period_acc;
			o->per_self[i] = h->entries[i].period;
			o->per_depth[i] = h->entries[i].max_depth;
		}
	}
	pthread_mutex_lock(&o->mu);
	o->periods = true;
	o->failed |= !ok;
	pthread_cond_signal(&o->cv);
	pthread_mutex_unlock(&o->mu);
}

void hist_order_start(hist *h)
{
	if (h->order)
		return;
	if (!order_ahead(h))
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
	hist_order *o = h->order;
	if (o->streaming && o->threaded) {
		/* a thread still waiting for rows stops */
		pthread_mutex_lock(&o->mu);
		if (!o->done || !o->periods)
			o->failed = true;
		pthread_cond_signal(&o->cv);
		pthread_mutex_unlock(&o->mu);
	}
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

/* ---- perf's input tree, kept while the rows are made ------------------------ */

/* hist_build's tree mode (see hist.h): the input tree as perf grows it,
 * row by row in creation order, and perf's findnew walk on it. Nodes are
 * numbered in insertion order (their keys in keys[], ident[] the identity
 * the comparators read them through); row_of[node] is the node's row (or
 * a HIST_ITREE_DUP reference), node_of[row] the way back. The node after
 * the last is scratch room for a probe. Rows may be staged first by one
 * thread (hist_itree_stage: their keys, in chunks that never move) and
 * inserted by another (hist_itree_add_staged). */
#define STG_SHIFT 12
#define STG_CHUNK ((size_t)1 << STG_SHIFT)
#define STG_MAX_CHUNKS ((size_t)1 << 19)

struct hist_itree {
	rbtree t;
	pkey *keys;
	uint32_t *ident;
	uint32_t *row_of;
	size_t n, cap;
	uint32_t *node_of;
	size_t cap_node_of;
	uint32_t *srank;
	size_t ns;
	bool cds;
	/* walk versions (hist_itree_version): per node its group — with
	 * comm,dso,sym the rows of one (comm, dso), else all rows — and per
	 * group the tick of its last change */
	uint32_t *grp;
	uint32_t *gver;
	uint32_t *leafver;         /* per node: its group's version right after its
				      insertion when that moved no node, else 0 */
	size_t ngrp, cap_grp;
	u32x2_table gmap;          /* (comm rank, dso rank) -> group */
	uint32_t tick;
	pkey **stg;                /* staged keys, STG_CHUNK per chunk */
	size_t nstaged, nadded;    /* rows staged; staged rows inserted */
};

hist_itree *hist_itree_new(const hist *h)
{
	hist_itree *it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->srank = all_ranks(h->prof);
	if (!it->srank) {
		free(it);
		return NULL;
	}
	it->ns = h->prof->strs.n;
	it->t.root = NIL;
	it->t.rightmost = NIL;
	it->cds = is_cds(h);
	return it;
}

void hist_itree_free(hist_itree *it)
{
	if (!it)
		return;
	free(it->t.n);
	free(it->keys);
	free(it->ident);
	free(it->row_of);
	free(it->node_of);
	free(it->srank);
	free(it->grp);
	free(it->gver);
	free(it->leafver);
	u32x2_table_free(&it->gmap);
	if (it->stg)
		for (size_t c = 0; c <= it->nstaged >> STG_SHIFT && c < STG_MAX_CHUNKS; c++)
			free(it->stg[c]);
	free(it->stg);
	free(it);
}

/* room for node `need` (and the scratch node after it) */
static int itree_room(hist_itree *it, size_t need)
{
	if (need + 2 <= it->cap)
		return 0;
	size_t ncap = it->cap ? it->cap : 4096;
	while (ncap < need + 2)
		ncap *= 2;
	rbn *nn = aligned_alloc(64, ncap * sizeof(rbn));
	pkey *nk = realloc(it->keys, (it->cds ? 1 : ncap) * sizeof(pkey));
	if (nk)
		it->keys = nk;
	/* the per-node words (a failed one keeps its old size: cap stays) */
	uint32_t **words[] = { &it->ident, &it->row_of, &it->grp, &it->leafver };
	bool ok = nn && nk;
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		uint32_t *w = realloc(*words[i], ncap * sizeof(uint32_t));
		if (w)
			*words[i] = w;
		ok &= w != NULL;
	}
	if (!ok) {
		free(nn);
		return -1;
	}
	if (it->t.n)
		memcpy(nn, it->t.n, it->n * sizeof(rbn));
	free(it->t.n);
	it->t.n = nn;
	it->cap = ncap;
	return 0;
}

/* the comparators' view of the input tree */
static replay_ctx itree_ctx(const hist_itree *it, const hist *h)
{
	return (replay_ctx){ .h = h, .pk = it->keys, .tn = it->t.n, .titems = it->ident };
}

/* A walk meets the nodes of its key's group only: with comm,dso,sym the
 * tree's in-order holds each (comm, dso) group as one run (the comparisons
 * across groups are a total order), so a walk reaches the group's topmost
 * node along nodes that all send it one way, and goes on through the
 * group's nodes as the tree nests them. That nesting changes only when a
 * rotation moves a node of the group (a rotation of two other groups'
 * nodes moves whole runs of a third); a new leaf takes a place no
 * successful walk went through. */
static void itree_bump(hist_itree *it, uint32_t node)
{
	if (node != NIL)
		it->gver[it->grp[node]] = ++it->tick;
}

static int itree_group(hist_itree *it, const pkey *k, uint32_t *g)
{
	uint32_t *v = it->cds ? u32x2_table_find(&it->gmap, k->comm, k->dso, 1, NULL) : NULL;
	if (it->cds && !v)
		return -1;
	if (v && *v != UINT32_MAX) {
		*g = *v;
		return 0;
	}
	if (!v && it->ngrp) {
		*g = 0;         /* one group: every row */
		return 0;
	}
	if (PF_GROW(it->gver, it->cap_grp, it->ngrp + 1) < 0)
		return -1;
	it->gver[it->ngrp] = ++it->tick;
	*g = (uint32_t)it->ngrp++;
	if (v)
		*v = *g;
	return 0;
}

/* Where node x's key goes: with comm,dso,sym a node carries all that the
 * comparators read (rbn), so one scratch key serves every node */
static inline pkey *node_key(hist_itree *it, size_t x)
{
	return it->cds ? it->keys : &it->keys[x];
}

/* Insert the node of key node_key(it->n) (filled) for row `row` */
static int itree_insert(hist_itree *it, const hist *h, uint32_t row)
{
	uint32_t x = (uint32_t)it->n;
	if (itree_group(it, node_key(it, x), &it->grp[x]) < 0)
		return -1;
	if (!(row & HIST_ITREE_DUP)) {
		if (row >= it->cap_node_of) {
			size_t old = it->cap_node_of;
			if (PF_GROW(it->node_of, it->cap_node_of, (size_t)row + 1) < 0)
				return -1;
			memset(it->node_of + old, 0xff, (it->cap_node_of - old) * sizeof(uint32_t));
		}
		it->node_of[row] = x;
	}
	node_fill(&it->t.n[x], node_key(it, x), false);
	it->ident[x] = x;
	it->row_of[x] = row;
	replay_ctx c = itree_ctx(it, h);
	it->t.rot[0] = it->t.rot[1] = it->t.rot[2] = NIL;
	tree_insert(&c, &it->t, x, 0, it->cds, left_input);
	it->n++;
	for (int i = 0; i < 3; i++)
		itree_bump(it, it->t.rot[i]);
	it->leafver[x] = it->t.rot[1] == NIL ? it->gver[it->grp[x]] : 0;
	return 0;
}

int hist_itree_add(hist_itree *it, const hist *h, size_t row)
{
	if (itree_room(it, it->n) < 0)
		return -1;
	key_of(h, it->srank, it->ns, &h->entries[row], row, node_key(it, it->n));
	return itree_insert(it, h, (uint32_t)row);
}

int hist_itree_stage(hist_itree *it, const hist *h, size_t row)
{
	if (row != it->nstaged)
		return -1;
	if (!it->stg && !(it->stg = calloc(STG_MAX_CHUNKS, sizeof(*it->stg))))
		return -1;
	size_t c = row >> STG_SHIFT;
	if (c >= STG_MAX_CHUNKS || (!it->stg[c] && !(it->stg[c] = malloc(STG_CHUNK * sizeof(pkey)))))
		return -1;
	key_of(h, it->srank, it->ns, &h->entries[row], row, &it->stg[c][row & (STG_CHUNK - 1)]);
	it->nstaged++;
	return 0;
}

int hist_itree_add_staged(hist_itree *it, const hist *h, size_t upto)
{
	for (; it->nadded < upto; it->nadded++) {
		size_t r = it->nadded;
		if (itree_room(it, it->n) < 0)
			return -1;
		*node_key(it, it->n) = it->stg[r >> STG_SHIFT][r & (STG_CHUNK - 1)];
		if (itree_insert(it, h, (uint32_t)r) < 0)
			return -1;
		if ((r & (STG_CHUNK - 1)) == STG_CHUNK - 1) {
			/* a chunk inserted whole: the stager is past it */
			free(it->stg[r >> STG_SHIFT]);
			it->stg[r >> STG_SHIFT] = NULL;
		}
	}
	return 0;
}

int hist_itree_add_entry(hist_itree *it, const hist *h, const hist_entry *e, uint32_t ref)
{
	if (itree_room(it, it->n) < 0)
		return -1;
	key_of(h, it->srank, it->ns, e, ref, node_key(it, it->n));
	return itree_insert(it, h, ref);
}

void hist_itree_resolve_dups(hist_itree *it, uint32_t base)
{
	for (size_t x = 0; x < it->n; x++)
		if (it->row_of[x] & HIST_ITREE_DUP)
			it->row_of[x] = base + (it->row_of[x] & ~HIST_ITREE_DUP);
}

uint32_t hist_itree_version(const hist_itree *it, size_t row)
{
	return it->gver[it->grp[it->node_of[row]]];
}

uint32_t hist_itree_group_of(const hist_itree *it, size_t row)
{
	return it->grp[it->node_of[row]];
}

uint32_t hist_itree_group_version(const hist_itree *it, uint32_t g)
{
	return it->gver[g];
}

/* A row inserted as a leaf, moving no node, sits where the walk for its
 * key ends: its insertion compared the walk's way (no equal row exists:
 * the row is its key's first) and nothing has moved since while its
 * group's version is the one after it. */
uint32_t hist_itree_leaf_version(const hist_itree *it, size_t row)
{
	return it->leafver[it->node_of[row]];
}

int64_t hist_itree_find(hist_itree *it, const hist *h, const hist_entry *probe)
{
	if (itree_room(it, it->n) < 0)
		return -2;
	uint32_t x = (uint32_t)it->n;     /* the scratch node */
	key_of(h, it->srank, it->ns, probe, x, node_key(it, x));
	node_fill(&it->t.n[x], node_key(it, x), false);
	it->ident[x] = x;
	replay_ctx rc = itree_ctx(it, h);
	const rbn *tn = rc.tn;
	int64_t found = -1;
	for (uint32_t cur = it->t.root; cur != NIL;) {
		/* hists__findnew_entry: cmp = hist_entry__cmp(existing, new) */
		int64_t c = it->cds ? cmp_cds(&tn[cur], &tn[x]) : entry_cmp(&rc, 0, cur, x);
		if (!c) {
			found = it->row_of[cur];
			break;
		}
		cur = c < 0 ? tn[cur].left : tn[cur].right;
	}
	return found;
}

int hist_itree_collapse(hist_itree *it, const hist *h, uint32_t *into, uint32_t *out, size_t *nout)
{
	size_t n = it->n;
	*nout = 0;
	for (size_t i = 0; i < n; i++)
		into[i] = UINT32_MAX;
	if (!n)
		return 0;
	/* the nodes in order (their keys are keys[node]), then as rows */
	if (!needs_collapse(h)) {
		if (tree_walk(&it->t, it->ident, out) != n)
			return -1;
		*nout = n;
		for (size_t i = 0; i < n; i++)
			out[i] = it->row_of[out[i]];
		return 0;       /* the output tree takes the input tree's order */
	}
	uint32_t *seq = malloc(n * sizeof(uint32_t));
	rbtree c = { aligned_alloc(64, n * sizeof(rbn)), NIL, NIL, { NIL, NIL, NIL } };
	/* the collapse tree's nodes: the input tree's, in its order (a node
	 * is its own identity there: ident[x] = x) */
	if (!seq || !c.n || tree_walk_nodes(&it->t, NULL, seq, c.n) != n) {
		free(seq);
		free(c.n);
		return -1;
	}
	*nout = n;
	/* comm,dso,sym: the sequence is sorted by (comm, dso), and within a
	 * group whose comparisons are transitive, by the comparator (replay's
	 * stage 1): a row of such a group goes after the last one, and only
	 * rows of a wrapping group are compared, with their group's */
	bool cds = it->cds;
	if (cds)
		group_wrap(c.n, n);
	replay_ctx rc = { .h = h, .pk = it->keys, .tn = c.n, .titems = seq };
	int merged = 0;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t cur = c.root, parent = NIL;
		bool go_left = false, equal = false;
		const rbn *ni = &c.n[i];
		if (cds && !ni->wrap) {
			parent = c.rightmost;
			cur = NIL;
		}
		while (cur != NIL) {
			/* hists__collapse_insert_entry: hist_entry__collapse(existing, new) */
			const rbn *cn = &c.n[cur];
			int64_t cmp;
			if (cds)
				cmp = cn->comm != ni->comm || cn->dso != ni->dso ? 1 : cmp_cds(cn, ni);
			else
				cmp = entry_cmp(&rc, 1, cur, i);
			if (!cmp) {
				into[it->row_of[seq[i]]] = it->row_of[seq[cur]];
				equal = true;
				break;
			}
			parent = cur;
			go_left = cmp < 0;
			cur = go_left ? cn->left : cn->right;
		}
		if (equal) {
			merged++;
			continue;
		}
		c.n[i].left = c.n[i].right = NIL;
		c.n[i].red = 1;
		c.n[i].parent = parent;
		if (parent == NIL)
			c.root = i;
		else if (go_left)
			c.n[parent].left = i;
		else
			c.n[parent].right = i;
		if (!go_left && parent == c.rightmost)
			c.rightmost = i;
		rb_insert_color(&c, i);
	}
	*nout = tree_walk(&c, seq, out);
	for (size_t i = 0; i < *nout; i++)
		out[i] = it->row_of[out[i]];
	free(seq);
	free(c.n);
	return merged;
}
