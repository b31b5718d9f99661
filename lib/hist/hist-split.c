/* hist-split.c — the engine's children pass on two threads: where the
 * samples split (split_point), the second half's pass on a thread of its
 * own into a hist of its own (pass_thread), and its rows merged into the
 * first half's so the rows are those of one pass (merge_pass). hist_build
 * (hist.c) decides when; tests/unit/test_hist.c forces it (split_min) and
 * compares with one pass.
 */
#include "proff/hist.h"

#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

void *pass_thread(void *arg)
{
	pass_job *j = arg;
	j->rc = sample_pass(&j->ps, &j->err);
	return NULL;
}

/* The rows of h2, made by the pass over the samples after h's, into h: a
 * row h has gets h2's sums, a new one is appended, in h2's order. That is
 * the order and the creating sample one pass over all samples gives: a row
 * first met after h's samples was first met where h2 met it. map[r]: h's
 * row of h2's row r. */
int merge_pass(hist *h, hist *h2, uint32_t *map, proff_error *err)
{
	struct hist_priv *pv = h->priv, *pv2 = h2->priv;
	id_table *t = &pv->tab;
	/* the table's room for every row at once: the slots are then fetched
	 * a few rows ahead (the lookups are cache misses, one after another) */
	while ((t->len + h2->n + 1) * 2 > t->cap)
		if (id_table_grow(t) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	enum { AHEAD = 8 };
	uint64_t ahead[AHEAD];
	for (size_t r = 0; r < h2->n && r < AHEAD; r++) {
		ahead[r] = pf_hash_bytes(pv2->keyw + r * pv2->kw, pv->kw * 8, 0x5eed);
		__builtin_prefetch(&t->s[ahead[r] & (t->cap - 1)]);
	}
	for (size_t r = 0; r < h2->n; r++) {
		const uint64_t *w = pv2->keyw + r * pv2->kw;
		uint64_t hash = ahead[r % AHEAD];
		if (r + AHEAD < h2->n) {
			uint64_t hn = pf_hash_bytes(pv2->keyw + (r + AHEAD) * pv2->kw, pv->kw * 8, 0x5eed);
			ahead[r % AHEAD] = hn;
			__builtin_prefetch(&t->s[hn & (t->cap - 1)]);
		}
		size_t j;
		uint32_t id = row_probe(pv, w, hash, &j);
		const hist_entry *e2 = &h2->entries[r];
		const struct hot_ent *x2 = &pv2->hot[r];
		map[r] = id;
		if (id == PF_NONE) {
			if (row_new(h, w, hash, j) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			pv->hot[h->n] = (struct hot_ent){ x2->acc, UINT32_MAX, x2->depth };
			h->entries[h->n] = *e2;
			map[r] = (uint32_t)row_publish(h);
			continue;
		}
		hist_entry *e = &h->entries[id];
		if (e2->nr_events && (!e->nr_events || e2->ex_min < e->ex_min))
			e->ex_min = e2->ex_min;
		if (e2->ex_max > e->ex_max)
			e->ex_max = e2->ex_max;
		e->ex_incl += e2->ex_incl;
		e->period += e2->period;
		e->nr_events += e2->nr_events;
		e->filtered &= e2->filtered;
		pv->hot[id].acc += x2->acc;
		if (x2->depth > pv->hot[id].depth)
			pv->hot[id].depth = x2->depth;
	}
	/* the row cache as the last samples left it (the callchain trees'
	 * pass looks up through it) */
	if (pv->row_cache && pv2->row_cache)
		for (size_t j = 0; j < 2 * pv2->nr_slots; j++)
			if (pv2->row_cache[j] >> 32)
				pv->row_cache[j] = (pv2->row_cache[j] >> 32) << 32 | map[(uint32_t)pv2->row_cache[j]];
	h->total_period += h2->total_period;
	h->nr_samples += h2->nr_samples;
	h->total_non_filtered_period += h2->total_non_filtered_period;
	h->nr_non_filtered_samples += h2->nr_non_filtered_samples;
	return 0;
}

/* Where the samples split for the two passes: after 55 % of the frames to
 * walk (counted on every 32nd sample). The second pass starts a hist of
 * its own (cold tables, fresh pages) and its rows are merged after: the two
 * end together there (50 % and 60 % measured slower). */
size_t split_point(const pf_profile *p)
{
	uint64_t total = 0, acc = 0;
	for (size_t si = 0; si < p->nr_samples; si += 32)
		total += p->nodes[p->samples[si].stack].depth + 1;
	size_t si = 0;
	for (; si < p->nr_samples && 20 * acc < 11 * total; si += 32)
		acc += p->nodes[p->samples[si].stack].depth + 1;
	return si < p->nr_samples ? si : p->nr_samples / 2;
}
