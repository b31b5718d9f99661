/* hist-tree.c — hist_build's tree mode: which locations perf's input tree
 * finds rows for by its own walk (its comparators are not transitive where
 * addresses or symbol bounds lie 2^63 or more apart), and the pass in that
 * mode on two threads (one finds the rows, the other grows the tree). */
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

/* ---- tree mode ------------------------------------------------------------------ */

/* perf finds a row by walking its input tree with the sort keys'
 * comparators, and two of them are not transitive: `sym` compares
 * unresolved rows by address alone (resolved ones by dso first), and
 * subtracts addresses and symbol bounds as int64 — so on rows whose
 * values lie 2^63 or more apart (garbage frames of a broken frame-pointer
 * chain: text, pointers, small and negative numbers) the walk can miss an
 * existing row of the same key, and perf makes another one: the report
 * then shows two rows of one key, each with part of its samples. Tree mode
 * repeats that: perf's input tree is grown with the rows, and the rows of
 * the locations that can meet it are found by perf's walk (tree_entry).
 * Those locations: with a dso key before `sym`, every location of a dso
 * (by the name the key compares) whose unresolved addresses — Self rows
 * show the map address, callchain rows the ip — or symbol starts or ends
 * span 2^63 or more; without, every location, when that span wraps over
 * the whole profile or unresolved locations of two dsos exist. *susp is
 * NULL when no location is. */
/* a location's values in its row's key: unresolved, both the map address
 * (Self rows) and the ip (callchain rows) */
static void span_loc(sym_span *sp, const pf_profile *p, const pf_loc *l)
{
	if (l->sym == PF_NONE) {
		span_add(sp, true, l->addr, 0, 0);
		span_add(sp, true, l->ip, 0, 0);
	} else {
		span_add(sp, false, 0, p->syms[l->sym].start, p->syms[l->sym].end);
	}
}

static int dso_name_cmp(const void *a, const void *b, void *arg)
{
	const uint32_t *name = arg;
	uint32_t x = name[*(const uint32_t *)a], y = name[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

/* With only comm and dso keys before sym (perf's default comm,dso,sym),
 * a group is a (comm, dso): the spans of the suspect dsos' locations per
 * comm, from the samples' stacks (a node's path to the root is added once
 * per comm in a row: vis). Sets pv->gwrap, cidx_of, ncol; *any: whether
 * some group wraps. */
static int group_spans(hist *h, const uint8_t *susp, size_t ncol, bool *any)
{
	struct hist_priv *pv = h->priv;
	const pf_profile *p = h->prof;
	*any = false;
	uint32_t *cidx = malloc((p->strs.n ? p->strs.n : 1) * sizeof(uint32_t));
	uint32_t *vis = calloc(p->nr_nodes ? p->nr_nodes : 1, sizeof(uint32_t));
	sym_span *gs = NULL;
	uint8_t *gw = NULL;
	if (!cidx || !vis)
		goto nomem;
	size_t nc = 0;
	memset(cidx, 0xff, (p->strs.n ? p->strs.n : 1) * sizeof(uint32_t));
	for (size_t si = 0; si < p->nr_samples; si++)
		if (cidx[p->samples[si].comm] == UINT32_MAX)
			cidx[p->samples[si].comm] = (uint32_t)nc++;
	size_t ng = nc * ncol;
	gs = malloc((ng ? ng : 1) * sizeof(*gs));
	gw = malloc(ng ? ng : 1);
	if (!gs || !gw)
		goto nomem;
	for (size_t i = 0; i < ng; i++)
		gs[i] = (sym_span)SYM_SPAN_EMPTY;
	for (size_t si = 0; si < p->nr_samples; si++) {
		uint32_t c = cidx[p->samples[si].comm];
		sym_span *row = gs + (size_t)c * ncol;
		/* without children only the samples' own locations make rows */
		uint32_t top = h->opts.children ? 0 : p->nodes[p->samples[si].stack].parent;
		for (uint32_t n = p->samples[si].stack; n && n != top && vis[n] != c + 1; n = p->nodes[n].parent) {
			vis[n] = c + 1;
			uint32_t loc = n == p->samples[si].stack ? pf_leaf_loc(p, n) : p->nodes[n].loc;
			if (susp[loc])
				span_loc(&row[susp[loc] - 1], p, &p->locs[loc]);
		}
	}
	for (size_t i = 0; i < ng; i++)
		*any |= (gw[i] = span_wraps(&gs[i]));
	free(gs);
	free(vis);
	pv->gwrap = gw;
	pv->cidx_of = cidx;
	pv->ncol = ncol;
	return 0;
nomem:
	free(cidx);
	free(vis);
	free(gs);
	free(gw);
	return -1;
}

/* perf walks its input tree once per event. A perf.data's raw samples
 * (pf_seq) are one event each, and tree mode replays those walks; a
 * pprof sample read as one raw sample may count several events (its
 * aggregate then counts more events than raw samples): perf never walked
 * those, so they are found by key, and each row counts its aggregates'
 * events (the walk per raw sample would count one each). */
bool seq_single_events(const pf_profile *p)
{
	if (!p->nr_seq)
		return false;
	uint32_t *raws = calloc(p->nr_samples ? p->nr_samples : 1, sizeof(uint32_t));
	if (!raws)
		return true;      /* as before: tree mode (its own allocations fail soon) */
	for (size_t it = 0; it < p->nr_seq; it++)
		raws[p->seq[it].sample]++;
	bool single = true;
	for (size_t si = 0; si < p->nr_samples && single; si++)
		single = raws[si] == p->samples[si].count;
	free(raws);
	return single;
}

int suspect_locs(hist *h, uint8_t **susp) {
	*susp = NULL;
	const pf_profile *p = h->prof;
	int sym_at = -1, dso_at = -1;
	bool only_cd = true;       /* nothing but comm and dso keys before sym */
	for (int i = h->nkeys; i-- > 0;) {
		if (h->keys[i] == HK_SYM)
			sym_at = i;
		if (h->keys[i] == HK_DSO)
			dso_at = i;
	}
	for (int i = 0; i < sym_at; i++)
		only_cd &= h->keys[i] == HK_COMM || h->keys[i] == HK_DSO;
	if (!h->opts.diff_mode && (hist_keys_needs(h->keys, h->nkeys) & HKN_PARTIAL) && p->nr_locs) {
		/* a comparator that is no order: every row is found by perf's walks */
		if (!(*susp = malloc(p->nr_locs)))
			return -1;
		memset(*susp, 1, p->nr_locs);
		return 0;
	}
	if (h->opts.diff_mode || sym_at < 0 || !p->nr_locs)
		return 0;
	size_t nd = p->nr_dsos;
	uint8_t *dsus = calloc(nd + 1, 1);      /* per dso, and [nd]: no dso: 0, or 1 + column */
	sym_span *sp = malloc((nd + 1) * sizeof(*sp));
	uint32_t *name = malloc((nd + 1) * sizeof(uint32_t)), *ord = malloc((nd + 1) * sizeof(uint32_t));
	int rc = 0;
	size_t ncol = 0;
	uint8_t *used = NULL;
	if (!dsus || !sp || !name || !ord) {
		rc = -1;
		goto out;
	}
	for (size_t d = 0; d <= nd; d++) {
		sp[d] = (sym_span)SYM_SPAN_EMPTY;
		name[d] = d < nd ? (h->opts.verbose ? p->dsos[d].long_name : p->dsos[d].short_name) : UINT32_MAX;
		ord[d] = (uint32_t)d;
	}
	bool all = false;
	/* the locations that make rows: without children, the samples' own */
	if (!h->opts.children) {
		if (!(used = calloc(p->nr_locs, 1))) {
			rc = -1;
			goto out;
		}
		for (size_t si = 0; si < p->nr_samples; si++)
			used[pf_leaf_loc(p, p->samples[si].stack)] = 1;
	}
	if (dso_at >= 0 && dso_at < sym_at) {
		for (size_t i = 0; i < p->nr_locs; i++) {
			const pf_loc *l = &p->locs[i];
			if (!used || used[i])
				span_loc(&sp[l->dso == PF_NONE ? nd : l->dso], p, l);
		}
		/* dsos of one name are one group (one column) */
		qsort_r(ord, nd + 1, sizeof(uint32_t), dso_name_cmp, name);
		for (size_t a = 0, b; a <= nd; a = b) {
			sym_span g = SYM_SPAN_EMPTY;
			for (b = a; b <= nd && name[ord[b]] == name[ord[a]]; b++)
				span_merge(&g, &sp[ord[b]]);
			if (span_wraps(&g)) {
				ncol++;
				for (size_t k = a; k < b; k++)
					dsus[ord[k]] = (uint8_t)(ncol < 255 ? ncol : 255);
			}
		}
	} else {
		sym_span g = SYM_SPAN_EMPTY;
		bool seen = false;
		uint32_t first = 0;     /* the dso name of the first unresolved location */
		for (size_t i = 0; i < p->nr_locs; i++) {
			const pf_loc *l = &p->locs[i];
			if (used && !used[i])
				continue;
			span_loc(&g, p, l);
			if (l->sym == PF_NONE) {
				uint32_t nm = name[l->dso == PF_NONE ? nd : l->dso];
				if (!seen)
					first = nm;
				else if (nm != first)
					all = true;
				seen = true;
			}
		}
		all |= span_wraps(&g);
	}
	if (!all && !ncol)
		goto out;
	*susp = malloc(p->nr_locs);
	if (!*susp) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < p->nr_locs; i++)
		(*susp)[i] = all ? 1 : dsus[p->locs[i].dso == PF_NONE ? nd : p->locs[i].dso];
	/* per (comm, dso) when the keys before sym are comm and dso only */
	if (!all && only_cd && sym_at > dso_at && ncol < 255) {
		for (int i = 0; i < sym_at; i++)
			if (h->keys[i] == HK_COMM) {
				bool any;
				if (group_spans(h, *susp, ncol, &any) < 0) {
					rc = -1;
				} else if (!any) {
					free(*susp);    /* no group wraps: no tree mode */
					*susp = NULL;
				}
				break;
			}
	}
out:
	if (rc < 0) {
		free(*susp);
		*susp = NULL;
	}
	free(used);
	free(dsus);
	free(sp);
	free(name);
	free(ord);
	return rc;
}


void tree_pipe_free(struct tree_pipe *tp) {
	free(tp->met_a);
	free(tp->met_b);
	free(tp->whole);
	free(tp->sum);
	free(tp->dups);
	free(tp->tc_self);
	free(tp->tc_frame);
	free(tp);
}

/* B waits until A has passed its first pos aggregates (pos >= 1); false:
 * A failed */
static bool pipe_wait(struct tree_pipe *tp, size_t pos)
{
	return pf_wait_past(&tp->done, pos - 1, &tp->stop) != 0;
}

static struct tree_sum *pipe_sum(struct tree_pipe *tp, uint32_t ref)
{
	if (ref & HIST_ITREE_DUP)
		return &tp->dups[ref & ~HIST_ITREE_DUP].sum;
	if (ref >= tp->cap_sum) {
		size_t old = tp->cap_sum;
		if (PF_GROW(tp->sum, tp->cap_sum, (size_t)ref + 1) < 0)
			return NULL;
		for (size_t i = old; i < tp->cap_sum; i++)
			tp->sum[i] = TREE_SUM_NEW;
	}
	return &tp->sum[ref];
}

/* A tree-mode row's chain on B: the raw samples of one aggregate that add
 * one frame's chain to one row add it once, with their sums, where the
 * first did (the callchain tree a chain makes does not depend on when the
 * same chain is added again) */
static int pipe_chain(struct tree_pipe *tp, uint32_t *last, size_t si, uint32_t row, uint32_t k, const pf_sample *s)
{
	struct hist_priv *pv = tp->ps->h->priv;
	if (*last != PF_NONE && pv->tchains[*last].row == row) {
		pv->tchains[*last].period += s->period;
		pv->tchains[*last].count += s->count;
		return 0;
	}
	*last = (uint32_t)pv->nr_tchains;
	return tree_chain_add(pv, si, row, k, s);
}

static int pipe_room_tc(struct tree_pipe *tp, size_t j)
{
	if (j < tp->cap_tc_frame)
		return 0;
	size_t old = tp->cap_tc_frame;
	if (PF_GROW(tp->tc_frame, tp->cap_tc_frame, j + 1) < 0)
		return -1;
	memset(tp->tc_frame + old, 0xff, (tp->cap_tc_frame - old) * sizeof(uint32_t));
	return 0;
}

/* tree_entry on B: the input tree holds A's rows before upto first */
static int64_t pipe_entry(struct tree_pipe *tp, const ctx *c, uint32_t loc, bool chain, uint32_t key, size_t upto,
			  proff_error *err)
{
	hist *h = tp->ps->h;
	hist_itree *it = h->priv->itree;
	if (hist_itree_add_staged(it, h, upto) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	struct tree_sum *k = pipe_sum(tp, key);
	if (!k)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (k->grp == PF_NONE)
		k->grp = hist_itree_group_of(it, key);
	uint32_t ver = hist_itree_group_version(it, k->grp);
	if (!k->wver && (k->wver = hist_itree_leaf_version(it, key)))
		k->wrow = key;
	if (k->wver == ver)
		return k->wrow;
	hist_entry probe;
	row_fill(h, c, loc, chain, &probe);
	int64_t id = hist_itree_find(it, h, &probe);
	if (id >= 0) {
		k->wrow = (uint32_t)id;
		k->wver = ver;
		return id;
	}
	if (id < -1 || tp->nr_dups >= HIST_ITREE_DUP - 1 || PF_GROW(tp->dups, tp->cap_dups, tp->nr_dups + 1) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	struct tree_dup *d = &tp->dups[tp->nr_dups];
	d->e = probe;
	key_words(h, c, loc, chain, d->w);
	d->sum = TREE_SUM_NEW;
	uint32_t ref = HIST_ITREE_DUP | (uint32_t)tp->nr_dups;
	if (hist_itree_add_entry(it, h, &probe, ref) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	tp->nr_dups++;
	return ref;
}

static int pipe_b_run(struct tree_pipe *tp, proff_error *err)
{
	pass_state *ps = tp->ps;
	hist *h = ps->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	const uint8_t *whole = tp->whole = sample_whole(h);
	if (!whole)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	/* per aggregate, one byte: B_MET once met, B_SKIP when B has nothing
	 * to do for its raw samples (passed whole by A, or another event's);
	 * about half the raw samples are skipped, touching this byte only */
	enum { B_MET = 1, B_SKIP = 2 };
	uint8_t *st = tp->met_b;
	bool one_event = prof->nr_events == 1;    /* (then no sample need be read) */
	for (size_t si = 0; si < prof->nr_samples; si++)
		st[si] = whole[si] || (!one_event && prof->samples[si].evsel != h->evsel) ? B_SKIP : 0;
	bool chains = ps->want_cc && ps->fast_cc;
	/* pos: aggregates met; lim: A's rows made before the raw sample at
	 * hand (from the last aggregate met first: pend, when not read yet) */
	size_t pos = 0, pend_pos = 0, lim = 0, end = prof->nr_seq;
	uint32_t pend = PF_NONE;
	for (size_t it = 0; it < end; it++) {
		const pf_seq *q = &prof->seq[it];
		size_t si = q->sample;
		if (it + 8 < end) {
			uint32_t ahead = prof->seq[it + 8].sample;
			if (!(st[ahead] & B_SKIP)) {
				__builtin_prefetch(&prof->samples[ahead]);
				__builtin_prefetch(&pv->taggs[ahead]);
			}
		}
		uint8_t sb = st[si];
		bool first = !(sb & B_MET);
		if (first) {
			st[si] = sb | B_MET;
			pos++;
		}
		if (sb & B_SKIP) {
			if (first) {
				pend_pos = pos;
				pend = (uint32_t)si;
			}
			continue;
		}
		const pf_sample *agg = &prof->samples[si];
		if (first) {
			if (!pipe_wait(tp, pos))
				return 0;       /* A failed: its error is the one */
			pend = PF_NONE;
		} else if (pend != PF_NONE) {
			if (!pipe_wait(tp, pend_pos))
				return 0;
			lim = pv->taggs[pend].rows_after;
			pend = PF_NONE;
		}
		const struct tree_agg *ta = &pv->taggs[si];
		pf_sample one;
		raw_sample(prof, it, agg, &one);
		const pf_sample *s = &one;
		/* (what the first raw sample's pass found of the aggregate) */
		ctx c = sample_ctx(h, s, ta->level);
		uint32_t stamp = (uint32_t)it, nk = ta->nk;
		if (ta->self_tree) {
			uint32_t leaf_loc = pf_leaf_loc(prof, s->stack);
			int64_t ref = pipe_entry(tp, &c, leaf_loc, false, ta->self_key, first ? ta->self_rows : lim, err);
			if (ref < 0)
				return (int)ref;
			struct tree_sum *ks = pipe_sum(tp, ta->self_key);
			if (!ks)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			struct tree_sum *ts = ref == ta->self_key ? ks : pipe_sum(tp, (uint32_t)ref);
			if (ps->self_of)
				ps->self_of[si] = (uint32_t)ref;
			ts->filt &= entry_filter(h, &c, leaf_loc);
			ts->period += s->period;
			ts->count += s->count;
			ks->seen = ts->seen = stamp;
			ts->acc += s->period;
			if (nk > ts->depth)
				ts->depth = nk;
			if (chains && nk && pipe_chain(tp, &tp->tc_self[si], si, (uint32_t)ref, 0, s) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		for (uint32_t j = ta->off; j < ta->off + ta->cnt; j++) {
			const struct tree_frame *tf = tframe_at(pv, j);
			struct tree_sum *ks = pipe_sum(tp, tf->key);
			if (!ks)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			if (ks->seen == stamp)
				continue;
			ks->seen = stamp;
			c.self_level = tf->level;
			int64_t ref = pipe_entry(tp, &c, tf->loc, true, tf->key, first ? tf->nrows : lim, err);
			if (ref < 0)
				return (int)ref;
			struct tree_sum *ts = ref == tf->key ? ks : pipe_sum(tp, (uint32_t)ref);
			ts->seen = stamp;
			ts->acc += s->period;
			if (nk - tf->k > ts->depth)
				ts->depth = nk - tf->k;
			if (ps->filters)
				ts->filt &= c.sample_filtered;
			if (chains && (pipe_room_tc(tp, j) < 0 ||
				       pipe_chain(tp, &tp->tc_frame[j], si, (uint32_t)ref, tf->k, s) < 0))
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		if (first)
			lim = ta->rows_after;
	}
	return 0;
}

void *pipe_b(void *arg) {
	struct tree_pipe *tp = arg;
	tp->rc = pipe_b_run(tp, &tp->err);
	if (tp->rc < 0)
		atomic_store_explicit(&tp->stop, 1, memory_order_relaxed);
	atomic_store_explicit(&tp->b_done, 1, memory_order_release);
	return NULL;
}

/* A: the aggregates in the order of their first raw samples */
int pipe_a(pass_state *ps, proff_error *err) {
	struct tree_pipe *tp = ps->tp;
	hist *h = ps->h;
	const pf_profile *prof = h->prof;
	struct tree_agg *taggs = h->priv->taggs;
	uint8_t *met = tp->met_a;
	size_t pos = 0;
	for (size_t it = 0; it < prof->nr_seq; it++) {
		size_t si = prof->seq[it].sample;
		if (met[si])
			continue;
		met[si] = 1;
		int rc = pass_one(ps, it, si, err);
		if (rc < 0) {
			atomic_store_explicit(&tp->stop, 1, memory_order_relaxed);
			return rc;
		}
		taggs[si].rows_after = (uint32_t)h->n;
		atomic_store_explicit(&tp->done, ++pos, memory_order_release);
		if (atomic_load_explicit(&tp->stop, memory_order_relaxed))
			break;      /* B failed: its error is the one */
	}
	return 0;
}

static void sum_apply(hist *h, uint32_t r, const struct tree_sum *t)
{
	hist_entry *e = &h->entries[r];
	struct hot_ent *he = &h->priv->hot[r];
	e->period += t->period;
	e->nr_events += t->count;
	e->filtered &= t->filt;
	he->acc += t->acc;
	if (t->depth > he->depth)
		he->depth = t->depth;
}

/* After both threads: the rest of A's rows into the input tree, the rows
 * B's walks made after A's, B's sums into the rows, and B's references
 * to its rows resolved. */
int pipe_merge(hist *h, struct tree_pipe *tp, proff_error *err) {
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	if (hist_itree_add_staged(pv->itree, h, h->n) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	uint32_t base = (uint32_t)h->n;
	for (size_t d = 0; d < tp->nr_dups; d++) {
		if (reserve_rows(h, h->n + 1) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		memcpy(pv->keyw + h->n * pv->kw, tp->dups[d].w, pv->kw * 8);
		pv->hot[h->n] = (struct hot_ent){ 0, UINT32_MAX, 0 };
		h->entries[h->n] = tp->dups[d].e;
		row_publish(h);
	}
	hist_itree_resolve_dups(pv->itree, base);
	for (size_t r = 0; r < tp->cap_sum && r < base; r++)
		sum_apply(h, (uint32_t)r, &tp->sum[r]);
	for (size_t d = 0; d < tp->nr_dups; d++)
		sum_apply(h, base + (uint32_t)d, &tp->dups[d].sum);
	if (tp->nr_dups) {
		uint32_t *self_of = tp->ps->self_of;
		for (size_t si = 0; self_of && si < prof->nr_samples; si++)
			if (self_of[si] != PF_NONE && (self_of[si] & HIST_ITREE_DUP))
				self_of[si] = base + (self_of[si] & ~HIST_ITREE_DUP);
		for (size_t i = 0; i < pv->nr_tchains; i++)
			if (pv->tchains[i].row & HIST_ITREE_DUP)
				pv->tchains[i].row = base + (pv->tchains[i].row & ~HIST_ITREE_DUP);
	}
	return 0;
}

