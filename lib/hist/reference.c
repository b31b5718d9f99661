/* reference.c — what a report's rows mean, in plain code: the reference
 * path (include/proff/reference.h). hist_build (hist.c, hist-cc.c,
 * hist-tree.c) computes the same rows fast; tests/cli/reference-matrix.sh
 * (recordings, through the CLI) and tests/unit/test_reference.c (random
 * profiles) check that both give byte for byte the same.
 *
 * The whole meaning, for each sample of the event:
 *   - Self: the row of the sample's own location (its key: the sort keys'
 *     values of the sample and that location) gets the sample's period;
 *   - Children (perf --children): the Self row, then each row met along the
 *     sample's callchain, leaf to root, gets the period — each distinct key
 *     once per sample, so a recursive function counts its samples once (a
 *     key the sample counted is not even looked up again);
 *   - callchain trees (-g): each row so counted gets the callchain from its
 *     frame on, in the order of the -g option (sample_cursor).
 * Totals count every sample; filters (--comms, --dsos, ...) hide rows, and
 * a row is shown when one of its samples passes them.
 *
 * A row's key is the sort keys' words (keys.c, hist_key_def.words): rows
 * of equal words are one. perf finds a row by walking its input tree with
 * the keys' comparators, which are not transitive where addresses lie 2^63
 * apart: its walk may miss the row of a key and make a second one, that
 * its collapse step may merge again. Where the profile kept its samples'
 * reading order (pf_seq) and each raw sample is one event (perf.data's:
 * seq_single_events) we replay that: rows are found by perf's walk
 * (hist_itree_*, perforder.c's replay of perf's trees — the engine's own
 * replay, shared, not an engine speed trick), one raw sample at a time.
 * Otherwise (aggregated inputs, pprof, diff's rows) a row is found by its
 * words.
 *
 * No threads, no caches, no split passes: a newcomer's reading, and the
 * engine's check. Sorting and printing are the engine's (hist_sort_report,
 * lib/output), which replay perf's own row order (perforder.c).
 */
#include "proff/reference.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

/* The pass's state: the rows' key words, a map from words to rows, and
 * the rows one sample counted already. */
typedef struct ref_pass {
	hist *h;
	hist_itree *walk;        /* perf's input tree, or NULL: rows found by their words */
	size_t kw;               /* words per key */
	uint64_t *words;         /* row r's words at words[r * kw] */
	uint32_t *head, *next;   /* rows by their words' hash: chains of rows */
	size_t nhead;            /* a power of two */
	uint32_t *counted;       /* the rows this sample counted (Children) */
	size_t ncounted, cap_counted;
	uint32_t *chain;         /* the sample's callchain (sample_cursor's buffer) */
	size_t cap_chain;
	size_t cap_time;         /* h->row_time's room (a time key) */
} ref_pass;

static uint64_t words_hash(const ref_pass *rp, const uint64_t *w)
{
	return pf_hash_bytes(w, rp->kw * sizeof(uint64_t), 0x5eed);
}

/* The map from words to rows, rebuilt twice as large */
static int map_grow(ref_pass *rp)
{
	size_t n = rp->nhead ? 2 * rp->nhead : 1024;
	uint32_t *head = malloc(n * sizeof(uint32_t));
	if (!head)
		return -1;
	memset(head, 0xff, n * sizeof(uint32_t));
	for (size_t r = 0; r < rp->h->n; r++) {
		size_t b = words_hash(rp, rp->words + r * rp->kw) & (n - 1);
		rp->next[r] = head[b];
		head[b] = (uint32_t)r;
	}
	free(rp->head);
	rp->head = head;
	rp->nhead = n;
	return 0;
}

static int64_t map_find(const ref_pass *rp, const uint64_t *w)
{
	for (uint32_t r = rp->head[words_hash(rp, w) & (rp->nhead - 1)]; r != PF_NONE; r = rp->next[r])
		if (!memcmp(rp->words + (size_t)r * rp->kw, w, rp->kw * sizeof(uint64_t)))
			return r;
	return -1;
}

/* A time key: the time slot of the row to be made next (h->n), which a
 * probe of perf's walk reads too (its row_id, before it is a row) */
static int probe_time(ref_pass *rp, uint64_t time)
{
	hist *h = rp->h;
	if (PF_GROW(h->row_time, rp->cap_time, h->n + 1) < 0)
		return -1;
	h->row_time[h->n] = time;
	return 0;
}

/* A new row e with words w: appended (rows keep the order they were first
 * met in: perf's order replays its trees in that order) */
static int64_t new_row(ref_pass *rp, const uint64_t *w, const hist_entry *e, uint64_t time)
{
	hist *h = rp->h;
	size_t cap = h->cap;
	if (PF_GROW(h->entries, h->cap, h->n + 1) < 0)
		return -2;
	if (h->cap != cap || !rp->words) {
		uint64_t *nw = pf_realloc_array(rp->words, h->cap * rp->kw, sizeof(uint64_t));
		uint32_t *nn = nw ? pf_realloc_array(rp->next, h->cap, sizeof(uint32_t)) : NULL;
		if (nw)
			rp->words = nw;
		if (!nn)
			return -2;
		rp->next = nn;
	}
	if (keys_need(h, HKN_CPUMODE) && (h->cap != cap || !h->mode_period)) {
		uint64_t *m = pf_realloc_array(h->mode_period, h->cap * HIST_MODES, sizeof(uint64_t));
		if (!m)
			return -2;
		h->mode_period = m;
	}
	if (keys_need(h, HKN_TIME) && probe_time(rp, time) < 0)
		return -2;
	size_t r = h->n++;
	h->entries[r] = *e;
	h->entries[r].row_id = r;
	h->side_rows = r + 1;
	if (h->mode_period)
		memset(h->mode_period + r * HIST_MODES, 0, HIST_MODES * sizeof(uint64_t));
	if (h->row_time)
		h->row_time[r] = time;
	memcpy(rp->words + r * rp->kw, w, rp->kw * sizeof(uint64_t));
	if (rp->walk && hist_itree_add(rp->walk, h, r) < 0)
		return -2;
	if (h->n > rp->nhead)
		return map_grow(rp) < 0 ? -2 : (int64_t)r;
	size_t b = words_hash(rp, w) & (rp->nhead - 1);
	rp->next[r] = rp->head[b];
	rp->head[b] = (uint32_t)r;
	return (int64_t)r;
}

/* The row of (sample context c, location loc) — a Self row (chain
 * false) or a callchain row — whose key words are w; made when there is
 * none. -2: out of memory. */
static int64_t find_row(ref_pass *rp, const ctx *c, uint32_t loc, bool chain, const uint64_t *w)
{
	hist *h = rp->h;
	hist_entry e;
	if (rp->walk) {
		row_fill(h, c, loc, chain, &e);
		e.row_id = h->n;       /* the probe's side values: the next row's */
		if (keys_need(h, HKN_TIME) && probe_time(rp, c->time) < 0)
			return -2;
		int64_t id = hist_itree_find(rp->walk, h, &e);
		return id != -1 ? id : new_row(rp, w, &e, c->time);
	}
	int64_t id = map_find(rp, w);
	if (id >= 0) {
		/* perf diff's rows of unresolved addresses (one per dso) show
		 * the lowest address */
		hist_entry *x = &h->entries[id];
		const pf_loc *l = &h->prof->locs[loc];
		if (h->opts.diff_mode && x->sym == PF_NONE && l->addr < x->addr) {
			x->addr = l->addr;
			x->ip = l->ip;
			x->loc = loc;
		}
		return id;
	}
	row_fill(h, c, loc, chain, &e);
	return new_row(rp, w, &e, c->time);
}

/* Children: has this sample counted a row of key w already? (perf's
 * he_cache, looked at before its tree: recursion counts once, and a key
 * counted is not looked up again.) */
static bool counted_before(const ref_pass *rp, const uint64_t *w)
{
	for (size_t i = 0; i < rp->ncounted; i++)
		if (!memcmp(rp->words + (size_t)rp->counted[i] * rp->kw, w, rp->kw * sizeof(uint64_t)))
			return true;
	return false;
}

/* Children: row gets the sample's period, and its callchain from the
 * row's frame on (locs, n of them) */
static int count_children(ref_pass *rp, uint32_t row, const uint32_t *locs, size_t n, const pf_sample *s)
{
	hist *h = rp->h;
	if (PF_GROW(rp->counted, rp->cap_counted, rp->ncounted + 1) < 0)
		return -1;
	rp->counted[rp->ncounted++] = row;
	hist_entry *e = &h->entries[row];
	e->period_acc += s->period;
	if (n > e->max_depth)
		e->max_depth = (uint32_t)n;     /* perf's tie rule: callers first */
	if (h->opts.callchain && n && cc_add(h, &h->priv->cc, row, locs, n, s->period, s->count) < 0)
		return -1;
	return 0;
}

/* A frame's map level ('k' kernel, '.' user), 0 without a map */
static char map_level(const pf_profile *p, uint32_t loc)
{
	const pf_loc *l = &p->locs[loc];
	if (l->dso == PF_NONE)
		return 0;
	enum sym_dso_kind k = p->dsos[l->dso].kind;
	return k == SYM_DSO_KERNEL || k == SYM_DSO_MODULE ? 'k' : '.';
}

/* perf's he_stat__add_cpumode_period: a Self row's period by the
 * sample's cpumode (its level: 'k' kernel, '.' user, 'g' guest kernel,
 * 'u' guest user; a hypervisor sample counts in none) */
static void add_mode_period(hist *h, const hist_entry *e, char level, uint64_t period)
{
	static const char levels[HIST_MODES] = { 'k', '.', 'g', 'u' };
	for (int m = 0; m < HIST_MODES; m++)
		if (level == levels[m])
			h->mode_period[e->row_id * HIST_MODES + (uint64_t)m] += period;
}

/* perf's hist_time: raw sample it's time, down to its --time-quantum slot
 * (0 without a time key) */
static uint64_t time_slot(const hist *h, size_t it)
{
	if (!h->prof->seq_time)
		return 0;
	uint64_t q = h->opts.time_quantum ? h->opts.time_quantum : 100000000ULL;
	return h->prof->seq_time[it] / q * q;
}

/* One sample s (aggregated sample si, or one raw sample of it) */
static int add_sample(ref_pass *rp, const pf_sample *s, size_t si, bool aggregated, uint64_t time)
{
	hist *h = rp->h;
	const pf_profile *p = h->prof;
	uint32_t leaf = pf_leaf_loc(p, s->stack);
	char level = p->nr_level_notes ? pf_sample_level(p, si) : p->locs[leaf].level;
	ctx c = sample_ctx(h, s, level);
	c.time = time;

	/* the totals: every sample; the ones the filters keep apart */
	uint8_t f = entry_filter(h, &c, leaf);
	h->total_period += s->period;
	h->nr_samples += s->count;
	if (!f) {
		h->total_non_filtered_period += s->period;
		h->nr_non_filtered_samples += s->count;
	}

	/* Self: the sample's own row */
	uint64_t w[HIST_MAX_KEYS * KW_PER_KEY];
	key_words(h, &c, leaf, false, w);
	int64_t self = find_row(rp, &c, leaf, false, w);
	if (self < 0)
		return -1;
	hist_entry *e = &h->entries[self];
	e->filtered &= f;
	if (aggregated && p->exact && si < p->cap_exact) {
		const pf_exact *x = &p->exact[si];
		if (!e->nr_events || x->min < e->ex_min)
			e->ex_min = x->min;
		if (x->max > e->ex_max)
			e->ex_max = x->max;
		e->ex_incl += x->incl;
	}
	e->period += s->period;
	e->nr_events += s->count;
	if (h->mode_period)
		add_mode_period(h, e, level, s->period);

	size_t nk = 0;
	uint32_t *cursor = sample_cursor(h, s, &rp->chain, &rp->cap_chain, &nk);
	if (!cursor && nk)
		return -1;
	if (!h->opts.children) {
		e->period_acc += s->period;
		if (h->opts.callchain && nk && cc_add(h, &h->priv->cc, (uint32_t)self, cursor, nk, s->period, s->count) < 0)
			return -1;
		return 0;
	}

	/* Children: the Self row, then each distinct row along the callchain */
	rp->ncounted = 0;
	if (count_children(rp, (uint32_t)self, cursor, nk, s) < 0)
		return -1;
	for (size_t k = 0; k < nk; k++) {
		uint32_t loc = cursor[k];
		/* perf reuses one addr_location along the callchain: a frame
		 * without a map keeps the level of the last frame with one */
		if (map_level(p, loc))
			c.self_level = map_level(p, loc);
		key_words(h, &c, loc, true, w);
		if (counted_before(rp, w))
			continue;
		int64_t id = find_row(rp, &c, loc, true, w);
		if (id < 0)
			return -1;
		/* the filters' verdict on the sample holds for its callers */
		h->entries[id].filtered &= c.sample_filtered;
		if (count_children(rp, (uint32_t)id, cursor + k, nk - k, s) < 0)
			return -1;
	}
	return 0;
}

/* perf's collapse step (after the walk): rows of one key that its walk
 * made twice and its collapse tree finds equal are merged into the first;
 * the printed order takes the rows in the order the collapse tree gives
 * them (h->collapsed), the merged ones left out (h->merged_into). */
static int collapse(ref_pass *rp)
{
	hist *h = rp->h;
	size_t n = h->n ? h->n : 1;
	uint32_t *into = malloc(n * sizeof(uint32_t));
	h->collapsed = malloc(n * sizeof(uint32_t));
	int merged = into && h->collapsed ? hist_itree_collapse(rp->walk, h, into, h->collapsed, &h->nr_collapsed) : -1;
	if (merged <= 0) {
		free(into);
		return merged;
	}
	for (size_t r = 0; r < h->n; r++) {
		if (into[r] == PF_NONE)
			continue;
		hist_entry *d = &h->entries[into[r]];
		const hist_entry *e = &h->entries[r];
		d->period += e->period;
		d->nr_events += e->nr_events;
		d->period_acc += e->period_acc;
		for (int m = 0; h->mode_period && m < HIST_MODES; m++)
			h->mode_period[d->row_id * HIST_MODES + (uint64_t)m] +=
				h->mode_period[e->row_id * HIST_MODES + (uint64_t)m];
		if (h->opts.callchain && cc_merge(h, &h->priv->cc, into[r], (uint32_t)r) < 0) {
			free(into);
			return -1;
		}
	}
	h->merged_into = into;
	return 0;
}

int hist_build_reference(pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
{
	*out = NULL;
	hist *h = NULL;
	int rc = hist_new_keys(prof, evsel, opts, &h, err);
	if (rc < 0) {
		hist_free(h);
		return rc;
	}
	/* every location's srcline first: perf's walk compares them */
	if (keys_need(h, HKN_SRCLINE))
		pf_locs_srclines(prof, NULL);
	for (int i = 0; i < h->nkeys && rc == 0; i++)
		if (hist_keys[h->keys[i]].prepare)
			rc = hist_keys[h->keys[i]].prepare(h, i, err);
	if (rc < 0) {
		hist_free(h);
		return rc;
	}
	ref_pass rp = { .h = h, .kw = h->priv->kw };
	bool raw_ok = !opts->diff_mode && seq_single_events(prof);
	if (keys_need(h, HKN_TIME) && (!raw_ok || !prof->seq_time)) {
		hist_free(h);
		return proff_err_set(err, PROFF_ENOTSUP, prof->path, PROFF_NO_OFFSET,
				     "--sort time: the profile keeps no sample times (perf.data files, "
				     "loaded with pf_load_opts.keep_time)");
	}
	/* perf's walks, one per event (seq_single_events: perf.data's raw
	 * samples), replayed; diff's rows are found by key (perf diff's
	 * collapse by name) */
	bool raw = !opts->diff_mode && seq_single_events(prof);
	if ((raw && !(rp.walk = hist_itree_new(h))) || map_grow(&rp) < 0)
		rc = -1;
	if (raw) {
		/* the raw samples in reading order, as perf walks them */
		for (size_t it = 0; it < prof->nr_seq && rc == 0; it++) {
			size_t si = prof->seq[it].sample;
			const pf_sample *agg = &prof->samples[si];
			pf_sample one;
			if (agg->evsel != evsel)
				continue;
			raw_sample(prof, it, agg, &one);
			rc = add_sample(&rp, &one, si, false, time_slot(h, it));
		}
		if (rc == 0)
			rc = collapse(&rp);
	} else {
		for (size_t si = 0; si < prof->nr_samples && rc == 0; si++)
			if (prof->samples[si].evsel == evsel)
				rc = add_sample(&rp, &prof->samples[si], si, true, 0);
	}
	hist_itree_free(rp.walk);
	free(rp.words);
	free(rp.head);
	free(rp.next);
	free(rp.counted);
	free(rp.chain);
	if (rc < 0) {
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	/* the callchain trees: children's sums, insertion order; published */
	struct cc_pool *cc = &h->priv->cc;
	if (opts->callchain)
		cc_finish(cc);
	h->cc_nodes = cc->nodes;
	h->nr_cc_nodes = cc->n;
	h->cap_cc_nodes = cc->cap;
	*out = h;
	return 0;
}
