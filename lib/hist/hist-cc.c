/* hist-cc.c — the rows' callchain trees (perf's graph output): node pools,
 * one insertion per chain, and in Children mode with caller order the
 * trees of every row built in one walk of the stack trie per sample
 * context, on up to two workers. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

/* ---- callchain trees (graph output) -------------------------------------------- */

/* perf matches callchain entries by symbol, unresolved ones by location:
 * symbol id | 1<<31, or the location id (both below 2^31). */
uint32_t cc_key(const pf_profile *prof, uint32_t loc) {
	const pf_loc *l = &prof->locs[loc];
	if (l->sym == PF_NONE)
		return loc & 0x7fffffffu;
	/* perf matches inlined entries by name alone */
	return (pf_sym_is_inlined(prof, l->sym) ? prof->sym_inlined[l->sym] : l->sym) | 0x80000000u;
}

uint32_t cc_new_node(struct cc_pool *cp, uint32_t parent, uint32_t loc) {
	if (PF_GROW(cp->nodes, cp->cap, cp->n + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)cp->n++;
	hist_cc_node *n = &cp->nodes[id];
	memset(n, 0, sizeof(*n));
	n->first_child = n->next_sibling = PF_NONE;
	n->parent = parent;
	n->nr_children = 0;
	n->loc = loc;
	n->key = loc != PF_NONE ? cc_key(cp->prof, loc) : UINT32_MAX;
	if (parent != PF_NONE) {
		/* prepended; cc_finish restores insertion order */
		hist_cc_node *pn = &cp->nodes[parent];
		n->next_sibling = pn->first_child;
		pn->first_child = id;
		pn->nr_children++;
	}
	return id;
}

/* The child of cc node cur for location loc (created if needed). perf
 * matches callchain entries by symbol, unresolved ones by (map, ip): the
 * child is keyed by symbol id or by location. */
#define CC_LIST_MAX 8      /* children searched by a list scan up to this many */

uint32_t cc_child(struct cc_pool *cp, uint32_t cur, uint32_t loc) {
	uint32_t key = cc_key(cp->prof, loc);
	if (cp->nodes[cur].nr_children <= CC_LIST_MAX) {
		for (uint32_t c = cp->nodes[cur].first_child; c != PF_NONE; c = cp->nodes[c].next_sibling)
			if (cp->nodes[c].key == key)
				return c;
		uint32_t nn = cc_new_node(cp, cur, loc);
		if (nn == PF_NONE)
			return PF_NONE;
		if (cp->nodes[cur].nr_children == CC_LIST_MAX + 1) {
			/* many children: index them all */
			for (uint32_t c = cp->nodes[cur].first_child; c != PF_NONE; c = cp->nodes[c].next_sibling) {
				uint32_t *slot = pair_table_find(&cp->child, cur, cp->nodes[c].key, 1, NULL);
				if (!slot)
					return PF_NONE;
				*slot = c;
			}
		}
		return nn;
	}
	int inserted;
	uint32_t *slot = pair_table_find(&cp->child, cur, key, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	uint32_t nn = cc_new_node(cp, cur, loc);
	if (nn == PF_NONE)
		return PF_NONE;
	slot = pair_table_find(&cp->child, cur, key, 0, NULL);
	*slot = nn;
	return nn;
}

uint32_t cc_root_of(struct cc_pool *cp, hist_entry *e, uint32_t row) {
	if (e->cc_root == PF_NONE) {
		if (PF_GROW(cp->roots, cp->cap_roots, cp->nr_roots + 1) < 0)
			return PF_NONE;
		e->cc_root = cc_new_node(cp, PF_NONE, PF_NONE);
		cp->roots[cp->nr_roots++] = row;
	}
	return e->cc_root;
}

/* Add one chain (a sequence of locations, in print order) with its period
 * to the entry's callchain tree. The tree keeps one location per node; the
 * printer merges single-child runs, which is what perf's graph shows.
 * children_hit is filled in once at the end (cc_finish). */
int cc_add(hist *h, struct cc_pool *cp, uint32_t row, const uint32_t *locs, size_t n, uint64_t period,
		  uint64_t count) {
	uint32_t cur = cc_root_of(cp, &h->entries[row], row);
	if (cur == PF_NONE)
		return -1;
	for (size_t i = 0; i < n; i++) {
		cur = cc_child(cp, cur, locs[i]);
		if (cur == PF_NONE)
			return -1;
	}
	cp->nodes[cur].hit += period;
	cp->nodes[cur].count += count;
	return 0;
}

/* A pool's memory freed; the pool left empty (for prof's locations) */
void cc_pool_free(struct cc_pool *cp, const pf_profile *prof) {
	free(cp->nodes);
	free(cp->roots);
	pair_table_free(&cp->child);
	*cp = (struct cc_pool){ prof, NULL, 0, 0, { 0 }, NULL, 0, 0 };
}

/* Pool b's nodes after a's (its ids moved by a's count: parents still
 * before children, siblings in their order), its rows' roots with them
 * and its large child lists indexed in a's table (cc_merge adds to the
 * trees after); b is emptied. -1: out of memory. */
int cc_pool_append(hist *h, struct cc_pool *a, struct cc_pool *b) {
	if (PF_GROW(a->nodes, a->cap, a->n + b->n) < 0)
		return -1;
	uint32_t off = (uint32_t)a->n;
#define CC_MOVE(x) ((x) == PF_NONE ? PF_NONE : (x) + off)
	for (size_t i = 0; i < b->n; i++) {
		hist_cc_node n = b->nodes[i];
		n.first_child = CC_MOVE(n.first_child);
		n.next_sibling = CC_MOVE(n.next_sibling);
		n.parent = CC_MOVE(n.parent);
		a->nodes[a->n++] = n;
	}
	for (size_t i = 0; i < b->nr_roots; i++)
		h->entries[b->roots[i]].cc_root = CC_MOVE(h->entries[b->roots[i]].cc_root);
#undef CC_MOVE
	for (size_t i = off; i < a->n; i++) {
		if (a->nodes[i].nr_children <= CC_LIST_MAX)
			continue;
		for (uint32_t c = a->nodes[i].first_child; c != PF_NONE; c = a->nodes[c].next_sibling) {
			uint32_t *slot = pair_table_find(&a->child, (uint32_t)i, a->nodes[c].key, 1, NULL);
			if (!slot)
				return -1;
			*slot = c;
		}
	}
	cc_pool_free(b, a->prof);
	return 0;
}

/* Sum children_hit bottom-up (children are created after their parents),
 * unlink nodes no chain reached (hit and children_hit both 0) and turn the
 * prepended sibling lists back into insertion order. */
void cc_finish(struct cc_pool *cp) {
	for (size_t i = cp->n; i-- > 0;) {
		hist_cc_node *n = &cp->nodes[i];
		if (n->parent != PF_NONE)
			cp->nodes[n->parent].children_hit += n->hit + n->children_hit;
	}
	for (size_t i = 0; i < cp->n; i++) {
		hist_cc_node *n = &cp->nodes[i];
		uint32_t c = n->first_child, head = PF_NONE;
		while (c != PF_NONE) {
			uint32_t next = cp->nodes[c].next_sibling;
			if (cp->nodes[c].hit + cp->nodes[c].children_hit) {
				cp->nodes[c].next_sibling = head;    /* reversing: newest was first */
				head = c;
			}
			c = next;
		}
		n->first_child = head;
	}
}

/* Children mode, caller order, no --max-stack: build every row's callchain
 * tree with one walk of the stack trie per sample context instead of one
 * insertion per (sample, row) pair. A row met at trie node t (its first
 * occurrence on the path) follows the trie below t; a sample ending at a
 * node adds its period where each such row currently is. The sample's Self
 * row gets the whole path, and is skipped as a caller row (perf's
 * once-per-sample rule). */


/* A sample's context key words: every key's that is not the location's
 * (comm, pid, cpu, parent, label), in the keys' order */
void ctx_words(const hist *h, const uint32_t *parent_of, uint32_t si, uint64_t *w) {
	hist_key_src src = { &h->prof->samples[si], parent_of ? parent_of[si] : 0, 0, false, 0 };
	for (int i = 0; i < h->nkeys; i++) {
		const hist_key_def *k = &hist_keys[h->keys[i]];
		if (k->needs & HKN_LOC)
			w[2 * i] = w[2 * i + 1] = 0;
		else
			k->words(h, &src, w + 2 * i);
	}
}

static int ctx_cmp(const void *pa, const void *pb, void *arg)
{
	const ctx_sort *cs = arg;
	const hist *h = cs->h;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	uint64_t x[HIST_MAX_KEYS * 2], y[HIST_MAX_KEYS * 2];
	ctx_words(h, cs->parent, ia, x);
	ctx_words(h, cs->parent, ib, y);
	for (int i = 0; i < 2 * h->nkeys; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* idx[0, n) ordered by the samples' context keys, equal contexts by index
 * (ctx_cmp). When idx is ascending and the comm is the only context key
 * (perf's default comm,dso,sym), a counting sort by comm id (stable: the
 * same order); with no context key, idx as it is. */
void ctx_order(const hist *h, const uint32_t *parent_of, const uint32_t *idx, size_t n, uint32_t *order) {
	bool comm = false, other = false, ascending = true;
	for (int i = 0; i < h->nkeys; i++) {
		unsigned n = hist_keys[h->keys[i]].needs;
		if (!(n & HKN_LOC)) {
			comm |= n == HKN_COMM;
			other |= n != HKN_COMM;
		}
	}
	for (size_t k = 1; k < n && ascending; k++)
		ascending = idx[k - 1] < idx[k];
	if (!comm && !other && ascending) {
		memcpy(order, idx, n * sizeof(uint32_t));   /* one context: by index */
		return;
	}
	size_t ncomm = h->prof->strs.n;
	uint32_t *start = comm && !other && ascending ? calloc(ncomm + 1, sizeof(uint32_t)) : NULL;
	if (!start) {
		memcpy(order, idx, n * sizeof(uint32_t));
		ctx_sort cs = { h, parent_of };
		qsort_r(order, n, sizeof(uint32_t), ctx_cmp, &cs);
		return;
	}
	const pf_sample *sm = h->prof->samples;
	for (size_t k = 0; k < n; k++)
		start[sm[idx[k]].comm + 1]++;
	for (size_t c = 0; c < ncomm; c++)
		start[c + 1] += start[c];
	for (size_t k = 0; k < n; k++)
		order[start[sm[idx[k]].comm]++] = idx[k];
	free(start);
}

bool same_ctx(const hist *h, const uint32_t *parent_of, uint32_t ia, uint32_t ib) {
	uint64_t x[HIST_MAX_KEYS * 2], y[HIST_MAX_KEYS * 2];
	ctx_words(h, parent_of, ia, x);
	ctx_words(h, parent_of, ib, y);
	return !memcmp(x, y, 2 * (size_t)h->nkeys * sizeof(uint64_t));
}

/* v[0, n) ascending, all below `bound` (tmp: n words): least significant
 * byte first, as many passes as bound needs. */
void radix_sort_u32(uint32_t *v, uint32_t *tmp, size_t n, uint32_t bound) {
	uint32_t *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 32 && (bound - 1) >> shift; shift += 8) {
		size_t cnt[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[((src[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
		uint32_t *t = src; src = dst; dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}


/* A callchain frame's row for the context c, read only (two workers build
 * trees at once): the row cache as the pass left it, else the hash table.
 * -2: no such row (the pass made every one; the caller then builds the
 * trees on one thread). */
int64_t chain_row_ro(hist *h, const ctx *c, uint32_t loc) {
	const struct hist_priv *pv = h->priv;
	if (loc < pv->nr_slot_of) {
		const uint64_t *slot = &pv->row_cache[2 * (size_t)pv->slot_of[loc]];
		for (int k = 0; k < 2; k++)
			if (slot[k] >> 32 == (uint64_t)c->s->comm + 1)
				return (int64_t)(uint32_t)slot[k];
	}
	uint64_t w[HIST_MAX_KEYS * KW_PER_KEY];
	key_words(h, c, loc, true, w);
	size_t j;
	uint32_t id = row_probe(pv, w, pf_hash_bytes(w, pv->kw * 8, 0x5eed), &j);
	return id == PF_NONE ? -2 : (int64_t)id;
}

/* One worker's scratch over the stack trie's nodes: per context the
 * marked nodes (sorted), and per node (cc_nd) the context's stamp, its
 * first marked child and next marked sibling (children in index order) and
 * the first sample ending there, set when the node is marked: one cache
 * line holds a node's four, which the marking and the walk touch together */


void cc_scratch_free(cc_scratch *sc) {
	free(sc->nd); free(sc->marked); free(sc->mtmp); free(sc->onpath);
	free(sc->dnode); free(sc->dchild); free(sc->dintro); free(sc->path); free(sc->seg);
	free(sc->recs);
	*sc = (cc_scratch){ 0 };
}

/* A kept scratch for a hist with more rows than when it was made (onpath
 * is zero between contexts) */
static int cc_scratch_rows(cc_scratch *sc, const hist *h)
{
	if (h->n + 1 <= sc->nrows)
		return 0;
	uint32_t *o = realloc(sc->onpath, (h->n + 1) * sizeof(uint32_t));
	if (!o)
		return -1;
	memset(o + sc->nrows, 0, (h->n + 1 - sc->nrows) * sizeof(uint32_t));
	sc->onpath = o;
	sc->nrows = h->n + 1;
	return 0;
}

static int cc_scratch_init(cc_scratch *sc, const hist *h, size_t maxd)
{
	size_t N = h->prof->nr_nodes;
	*sc = (cc_scratch){ 0 };
	sc->nd = calloc(N ? N : 1, sizeof(cc_nd));
	sc->marked = malloc((N ? N : 1) * sizeof(uint32_t));
	sc->mtmp = malloc((N ? N : 1) * sizeof(uint32_t));
	sc->onpath = calloc(h->n + 1, sizeof(uint32_t));
	sc->nrows = h->n + 1;
	sc->dnode = malloc(maxd * sizeof(uint32_t));
	sc->dchild = malloc(maxd * sizeof(uint32_t));
	sc->dintro = malloc(maxd * sizeof(uint32_t));
	sc->path = malloc(maxd * sizeof(uint32_t));
	sc->seg = malloc((maxd + 1) * sizeof(size_t));
	return sc->nd && sc->marked && sc->mtmp &&
	       sc->onpath && sc->dnode && sc->dchild && sc->dintro && sc->path && sc->seg ? 0 : -1;
}



/* One context's trees: mark its samples' paths, then one DFS of the
 * marked trie from the root */
static int cc_context(cc_worker *wk, cc_scratch *sc, size_t g0, size_t g1)
{
	cc_work *w = wk->w;
	hist *h = w->h;
	struct cc_pool *cp = wk->cp;
	const pf_profile *p = h->prof;
	const uint32_t *order = w->order, *self_of = w->self_of;
	uint32_t *end_next = w->end_next;
	cc_nd *nd = sc->nd;
	uint32_t *marked = sc->marked, *onpath = sc->onpath;
	uint32_t *dnode = sc->dnode, *dchild = sc->dchild, *dintro = sc->dintro, *path = sc->path;
	size_t *seg = sc->seg;
	const struct hot_ent *hot = h->priv->hot;   /* the rows' Children (period_acc) */
	const uint8_t *suspect = h->priv->suspect;
	uint64_t min_keep = w->min_keep;
	uint32_t stamp = ++sc->stamp;
	/* mark this context's paths and the samples ending at each node */
	size_t nm = 0;
	nd[0].first = nd[0].end = PF_NONE;
	for (size_t k = g0; k < g1; k++) {
		const pf_sample *s = &p->samples[order[k]];
		for (uint32_t n = s->stack; n && nd[n].vis != stamp; n = p->nodes[n].parent) {
			nd[n].vis = stamp;
			nd[n].first = nd[n].end = PF_NONE;
			marked[nm++] = n;
		}
		end_next[k] = nd[s->stack].end;
		nd[s->stack].end = (uint32_t)k;
	}
	/* the marked children of every marked node, in index order (the DFS
	 * visits siblings in the trie's order; a full child list would be
	 * scanned once per context: the root's holds every outermost frame
	 * of the file) */
	radix_sort_u32(marked, sc->mtmp, nm, (uint32_t)p->nr_nodes);
	for (size_t i = nm; i-- > 0;) {
		uint32_t n = marked[i], par = p->nodes[n].parent;
		nd[n].next = nd[par].first;
		nd[par].first = n;
	}
	ctx c = { &p->samples[order[g0]], w->parent_of[order[g0]], 0, 0, '.', 0 };
	const uint8_t *gw = suspect ? group_row(h->priv, c.s->comm) : NULL;
	/* iterative DFS from the root over marked nodes */
	size_t d = 0;
	dnode[0] = 0;
	dchild[0] = nd[0].first;
	dintro[0] = PF_NONE;
	seg[0] = 0;
	seg[1] = 0;
	for (;;) {
		uint32_t ch = dchild[d];
		/* a node without callchain is no frame of any chain */
		while (ch != PF_NONE && pf_node_nochain(p, ch))
			ch = nd[ch].next;
		if (ch == PF_NONE) {
			if (dintro[d] != PF_NONE)
				onpath[dintro[d]] = 0;
			if (d == 0)
				break;
			d--;
			continue;
		}
		dchild[d] = nd[ch].next;
		uint32_t loc = p->nodes[ch].loc;
		/* tree mode's rows got their chains in the first pass */
		bool tree = suspect && tree_loc(suspect, gw, loc);
		int64_t eid = tree ? 0 : w->ro ? chain_row_ro(h, &c, loc) : chain_entry(h, &c, loc, &wk->err);
		if (eid < 0)
			return (int)eid == -2 ? -2 : -1;
		if (!tree && w->tree_row && w->tree_row[eid])
			return -2;     /* a row with tree-mode chains too: one pool, alone */
		if (!tree && w->touched)
			w->touched[eid] = 1;
		/* level d+1: advance every active row, maybe start one */
		size_t from = seg[d], to = seg[d + 1], nrec = to - from;
		if (PF_GROW(sc->recs, sc->cap_recs, to + nrec + 1) < 0)
			return -1;
		cc_rec *recs = sc->recs;
		size_t wr = to;
		for (size_t r = from; r < to; r++) {
			uint32_t nc = cc_child(cp, recs[r].cur, loc);
			if (nc == PF_NONE)
				return -1;
			recs[wr++] = (cc_rec){ recs[r].entry, nc };
		}
		dintro[d + 1] = PF_NONE;
		if (tree) {
			/* no record */
		} else if (!onpath[eid] && hot[eid].acc < min_keep) {
			/* a row too small to show a chain: no tree */
			onpath[eid] = (uint32_t)d + 1;
			dintro[d + 1] = (uint32_t)eid;
		} else if (!onpath[eid]) {
			uint32_t root = cc_root_of(cp, &h->entries[eid], (uint32_t)eid);
			uint32_t nc = root == PF_NONE ? PF_NONE : cc_child(cp, root, loc);
			if (nc == PF_NONE)
				return -1;
			recs[wr++] = (cc_rec){ (uint32_t)eid, nc };
			onpath[eid] = (uint32_t)d + 1;
			dintro[d + 1] = (uint32_t)eid;
		}
		path[d] = loc;
		/* samples ending here */
		for (uint32_t k = nd[ch].end; k != PF_NONE; k = end_next[k]) {
			const pf_sample *s = &p->samples[order[k]];
			/* a tree-mode leaf's Self row is a tree-mode one, none of
			 * the rows here (and written by the pass's other thread
			 * while an early run reads) */
			uint32_t self = tree ? PF_NONE : self_of[order[k]];
			for (size_t r = to; r < wr; r++) {
				if (recs[r].entry == self)
					continue;
				cp->nodes[recs[r].cur].hit += s->period;
				cp->nodes[recs[r].cur].count += s->count;
			}
			if (!tree && w->tree_row && w->tree_row[self])
				return -2;
			if (!tree && w->touched)
				w->touched[self] = 1;
			if (!tree && hot[self].acc >= min_keep &&
			    cc_add(h, cp, self, path, d + 1, s->period, s->count) < 0)
				return -1;
		}
		d++;
		dnode[d] = ch;
		dchild[d] = nd[ch].first;
		seg[d] = to;
		seg[d + 1] = wr;
	}
	return 0;
}

static void *cc_worker_run(void *arg)
{
	cc_worker *wk = arg;
	cc_work *w = wk->w;
	if (wk->tj) {
		int trc = tree_chains_build(wk->tj, wk->tj_cp ? wk->tj_cp : wk->cp);
		if (wk->tj->early)
			atomic_store_explicit(&wk->tj->done, 1, memory_order_release);
		if (trc < 0) {
			wk->rc = -1;
			return NULL;
		}
	}
	cc_scratch own, *sc = wk->sc ? wk->sc : &own;
	if (w->ngroups && (wk->sc && sc->nd ? cc_scratch_rows(sc, w->h) : cc_scratch_init(sc, w->h, w->maxd)) < 0) {
		cc_scratch_free(sc);
		wk->rc = -1;
		return NULL;
	}
	for (size_t ng = w->ngroups; ng;) {
		if (w->pause && atomic_load_explicit(w->pause, memory_order_acquire))
			break;
		unsigned long long v = atomic_fetch_add_explicit(&w->taken, wk->light ? 1ULL << 32 : 1, memory_order_relaxed);
		size_t lo = (size_t)(v & 0xffffffffu), hi = (size_t)(v >> 32);
		if (lo + hi >= ng)
			break;
		uint32_t x = w->gorder[wk->light ? ng - 1 - hi : lo];
		if ((wk->rc = cc_context(wk, sc, w->gstart[x], w->gstart[x + 1])) < 0)
			break;
	}
	if (w->ngroups && !wk->sc)
		cc_scratch_free(sc);
	return NULL;
}


void cc_run_free(cc_run *r) {
	cc_scratch_free(&r->sc);
	free(r->touched);
	r->touched = NULL;
	free(r->order); free(r->end_next); free(r->gstart); free(r->gorder); free(r->gweight); free(r->tree_row);
	r->order = r->end_next = r->gorder = NULL;
	r->gstart = NULL;
	r->gweight = NULL;
	r->tree_row = NULL;
}

/* The rows of the tree-mode chains, flagged in r->tree_row */
int cc_tree_rows(cc_run *r) {
	const struct hist_priv *pv = r->h->priv;
	if (!(r->tree_row = calloc(r->h->n + 1, 1)))
		return -1;
	for (size_t i = 0; i < pv->nr_tchains; i++)
		r->tree_row[pv->tchains[i].row] = 1;
	return 0;
}

int cc_begin(cc_run *r, hist *h, const uint32_t *idx, size_t nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, uint64_t min_keep, tchains_job *tj, bool two, bool alone,
		    const atomic_int *pause) {
	const pf_profile *p = h->prof;
	struct hist_priv *pv = h->priv;
	*r = (cc_run){ .h = h, .idx = idx, .self_of = self_of, .parent_of = parent_of, .nidx = nidx,
		       .min_keep = min_keep, .tj = tj, .alone = alone };
	r->p2.prof = p;
	r->end_next = malloc((nidx + 1) * sizeof(uint32_t));
	r->order = malloc((nidx + 1) * sizeof(uint32_t));
	r->gstart = malloc((nidx + 2) * sizeof(size_t));
	if (!r->end_next || !r->order || !r->gstart)
		return -1;
	size_t maxd = 1;
	for (size_t i = 0; i < p->nr_nodes; i++)
		if (p->nodes[i].depth + 2 > maxd)
			maxd = p->nodes[i].depth + 2;
	ctx_order(h, parent_of, idx, nidx, r->order);
	size_t ng = 0;
	for (size_t g0 = 0; g0 < nidx; ng++) {
		r->gstart[ng] = g0;
		size_t g1 = g0 + 1;
		while (g1 < nidx && same_ctx(h, parent_of, r->order[g0], r->order[g1]))
			g1++;
		g0 = g1;
	}
	r->gstart[ng] = nidx;
	/* two workers where the contexts are several, the trees start empty
	 * (a fallback starts them again) and a row lookup reads only */
	r->two = two && !alone && ng >= 2 && pv->cc.n == 0 && !h->opts.diff_mode && !keys_need(h, HKN_SRCLINE);
	/* beside another thread, row lookups read only (the tree-mode trees
	 * read the rows); one that fails starts over alone (begun early, the
	 * tree-mode chains are still being added: cc_resume) */
	size_t ntc = pause ? 0 : pv->nr_tchains;
	r->ro = (r->two || ntc) && !alone && pv->cc.n == 0;
	r->gorder = malloc((ng + 1) * sizeof(uint32_t));
	r->gweight = malloc((ng + 1) * sizeof(uint64_t));
	if (!r->gorder || !r->gweight)
		return -1;
	/* heaviest first (the frames its samples bring), in order on one */
	for (size_t g = 0; g < ng; g++) {
		r->gorder[g] = (uint32_t)g;
		r->gweight[g] = 0;
		for (size_t k = r->gstart[g]; r->two && k < r->gstart[g + 1]; k++)
			r->gweight[g] += p->nodes[p->samples[r->order[k]].stack].depth;
	}
	if (r->two)
		for (size_t a = 1; a < ng; a++)
			for (size_t b = a; b > 0 && r->gweight[r->gorder[b - 1]] < r->gweight[r->gorder[b]]; b--) {
				uint32_t t = r->gorder[b - 1];
				r->gorder[b - 1] = r->gorder[b];
				r->gorder[b] = t;
			}
	/* the rows of the tree-mode chains: a tree of both kinds of rows is
	 * built in one pool (alone), the tree-mode chains after (begun
	 * early: known in cc_resume; the rows met till then are marked) */
	if (r->ro && ntc && cc_tree_rows(r) < 0)
		return -1;
	if (pause && r->two && r->ro) {
		if (!(r->touched = calloc(h->n + 1, 1)))
			return -1;
		r->ntouched = h->n + 1;
	}
	r->w = (cc_work){ h, r->order, self_of, parent_of, r->end_next, r->gstart, r->gorder, ng, 0, min_keep, maxd,
			  r->ro, r->tree_row, pause, r->touched };
	atomic_init(&r->w.taken, 0);
	/* with two, the second worker (started first) from the heavy end,
	 * this one (later, after the collapse) from the light end */
	r->one = (cc_worker){ &r->w, &pv->cc, NULL, r->two, 0, { 0 }, &r->sc, NULL };
	r->other = (cc_worker){ &r->w, &r->p2, NULL, false, 0, { 0 }, NULL, NULL };
	if (r->two && !pause)
		r->threaded = pthread_create(&r->th, NULL, cc_worker_run, &r->other) == 0;
	if (r->touched) {
		/* the heaviest contexts here until *pause */
		cc_worker early = { &r->w, &pv->cc, NULL, false, 0, { 0 }, &r->sc, NULL };
		cc_worker_run(&early);
		if (early.rc < 0) {
			/* no more contexts: cc_end reports it (-1) or starts
			 * over alone (-2) */
			r->one.rc = early.rc;
			r->one.err = early.err;
			atomic_store(&r->w.taken, (unsigned long long)ng);
		}
	}
	return 0;
}

/* A run begun early, the pass's other thread joined: the tree-mode
 * chains' rows known, checked against the rows met (one of both kinds:
 * all again, alone, in cc_end), and the second worker started. */
int cc_resume(cc_run *r) {
	hist *h = r->h;
	struct hist_priv *pv = h->priv;
	r->w.pause = NULL;
	r->w.touched = NULL;
	if (!r->ro && pv->nr_tchains && !r->alone && pv->cc.n == 0)
		r->ro = r->w.ro = true;
	if (r->ro && pv->nr_tchains) {
		if (cc_tree_rows(r) < 0)
			return -1;
		for (size_t i = 0; i < pv->nr_tchains && r->touched && r->one.rc == 0; i++) {
			uint32_t row = pv->tchains[i].row;
			if (row < r->ntouched && r->touched[row]) {
				r->one.rc = -2;
				atomic_store(&r->w.taken, (unsigned long long)r->w.ngroups);
			}
		}
		r->w.tree_row = r->tree_row;
	}
	/* the second worker builds the tree-mode rows' trees first, beside
	 * perf's collapse on this thread (tj->early) */
	if (r->two && pv->nr_tchains && r->one.rc == 0) {
		r->tj->early = true;
		r->other.tj = r->tj;
		r->other.tj_cp = &r->tj->cp;
	}
	if (r->two && !r->threaded)
		r->threaded = pthread_create(&r->th, NULL, cc_worker_run, &r->other) == 0;
	if (r->two && !r->threaded && r->other.tj) {
		r->tj->early = false;       /* no thread: after the collapse, here */
		r->other.tj = NULL;
	}
	return 0;
}

void cc_pool_reset(hist *h, struct cc_pool *cp) {
	for (size_t r = 0; r < cp->nr_roots; r++)
		h->entries[cp->roots[r]].cc_root = PF_NONE;
	cc_pool_free(cp, h->prof);
}

/* Stop a begun run on a failure elsewhere: its worker takes no more
 * contexts and is joined; what it made is freed. */
void cc_abort(cc_run *r) {
	atomic_store(&r->w.taken, (unsigned long long)r->w.ngroups);
	if (r->threaded)
		pthread_join(r->th, NULL);
	cc_pool_free(&r->p2, r->h->prof);
	cc_run_free(r);
}

int cc_end(cc_run *r, proff_error *err) {
	hist *h = r->h;
	struct hist_priv *pv = h->priv;
	tchains_job *tj = r->tj;
	int rc = 0;
	/* the tree-mode trees: first here beside the second worker, or on
	 * another thread beside this one's contexts; alone: after them, in
	 * the hist's pool */
	cc_work wt = { h, r->order, r->self_of, r->parent_of, r->end_next, r->gstart, r->gorder, 0, 0, r->min_keep, 0,
		       false, NULL, NULL, NULL };
	atomic_init(&wt.taken, 0);
	cc_worker tw = { &wt, r->alone ? &pv->cc : &tj->cp, tj, false, 0, { 0 }, NULL, NULL };
	pthread_t th;
	bool beside = !r->two && r->ro && pv->nr_tchains && pthread_create(&th, NULL, cc_worker_run, &tw) == 0;
	if (r->two && pv->nr_tchains && !r->other.tj)
		cc_worker_run(&tw);
	cc_worker_run(&r->one);
	if (r->threaded)
		pthread_join(r->th, NULL);
	else if (r->two)
		cc_worker_run(&r->other);      /* no thread: what is left */
	if (beside)
		pthread_join(th, NULL);
	else if (!r->two && pv->nr_tchains)
		cc_worker_run(&tw);
	if (r->other.tj) {
		/* built before the collapse: again, if the rows it merged
		 * change which chains pass the threshold */
		tj->early = false;
		if (h->merged_into && r->other.rc == 0 && tree_chains_stale(h, tj->min_keep)) {
			cc_pool_reset(h, &tj->cp);
			cc_worker_run(&tw);
		}
	}
	if (r->one.rc == -2 || r->other.rc == -2) {
		/* a row not found read only: all trees again, on one thread */
		cc_pool_reset(h, &pv->cc);
		cc_pool_reset(h, &r->p2);
		cc_pool_reset(h, &tj->cp);
		const uint32_t *idx = r->idx, *self_of = r->self_of, *parent_of = r->parent_of;
		size_t nidx = r->nidx;
		uint64_t min_keep = r->min_keep;
		cc_run_free(r);
		if (cc_begin(r, h, idx, nidx, self_of, parent_of, min_keep, tj, false, true, NULL) < 0) {
			cc_run_free(r);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		return cc_end(r, err);
	}
	if (r->one.rc == -1 && r->one.err.code) {
		*err = r->one.err;
		rc = r->one.err.code;
	} else if (r->one.rc < 0 || r->other.rc < 0 || tw.rc < 0 || cc_pool_append(h, &pv->cc, &r->p2) < 0)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	cc_pool_free(&r->p2, h->prof);
	cc_run_free(r);
	return rc;
}

