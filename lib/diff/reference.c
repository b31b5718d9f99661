/* reference.c — what perf diff's pairing means, in plain code: the
 * reference path of `proff diff` (include/proff/reference.h). diff.c's
 * diff_compute computes the same with a hash index of each file's rows;
 * tests/cli/reference-matrix.sh checks that both print the same.
 *
 * The meaning (perf diff, builtin-diff.c):
 *   - every row of the baseline (file 0) is a row of the result;
 *   - for each other file f in turn, each row of the result (the dummies
 *     made for files before f too) is paired with f's first row of equal
 *     key values not paired yet — values, not ids: symbols pair by name, so
 *     rebuilt binaries pair;
 *   - f's rows left unpaired become dummy rows (no baseline period), unless
 *     -b, which drops every row that has no pair at all;
 *   - per pair, with each file's percentages of its own total:
 *       delta = new % - baseline %, ratio = new period / baseline period
 *       (1 for a dummy's), wdiff = new period * w2 - baseline period * w1;
 *   - rows in perf diff's order (diff.c's diff_result_order, shared).
 */
#include "proff/reference.h"

#include <stdlib.h>

#include "diff-int.h"

/* The rows before they go into the result: whose entry each shows and,
 * per file, its pair */
typedef struct ref_rows {
	const hist **h;
	const hist_entry **e;
	bool *dummy;
	diff_key *keys;            /* nkeys per row */
	const hist_entry **pair;   /* nfiles per row */
	size_t n, cap, nfiles;
	int nkeys;
	const int *key_ids;
} ref_rows;

static int ref_row_add(ref_rows *rr, const hist *h, const hist_entry *e, bool dummy)
{
	if (rr->n == rr->cap) {
		size_t c = rr->cap ? 2 * rr->cap : 64, nk = (size_t)(rr->nkeys ? rr->nkeys : 1);
		const hist **nh = pf_realloc_array(rr->h, c, sizeof(*nh));
		if (nh)
			rr->h = nh;
		const hist_entry **ne = pf_realloc_array(rr->e, c, sizeof(*ne));
		if (ne)
			rr->e = ne;
		bool *nd = pf_realloc_array(rr->dummy, c, sizeof(*nd));
		if (nd)
			rr->dummy = nd;
		diff_key *nky = pf_realloc_array(rr->keys, c * nk, sizeof(*nky));
		if (nky)
			rr->keys = nky;
		const hist_entry **np = pf_realloc_array(rr->pair, c * rr->nfiles, sizeof(*np));
		if (np)
			rr->pair = np;
		if (!nh || !ne || !nd || !nky || !np)
			return -1;
		rr->cap = c;
	}
	size_t i = rr->n++;
	rr->h[i] = h;
	rr->e[i] = e;
	rr->dummy[i] = dummy;
	for (int k = 0; k < rr->nkeys; k++) {
		rr->keys[i * (size_t)rr->nkeys + (size_t)k] = (diff_key){ 0 };
		hist_keys[rr->key_ids[k]].value(h, e, &rr->keys[i * (size_t)rr->nkeys + (size_t)k]);
	}
	for (size_t f = 0; f < rr->nfiles; f++)
		rr->pair[i * rr->nfiles + f] = NULL;
	return 0;
}

/* Row i's and entry e's key values equal? */
static bool same_values(const ref_rows *rr, size_t i, const hist *h, const hist_entry *e)
{
	diff_key v[HIST_MAX_KEYS];
	for (int k = 0; k < rr->nkeys; k++) {
		v[k] = (diff_key){ 0 };
		hist_keys[rr->key_ids[k]].value(h, e, &v[k]);
	}
	return diff_keys_sort(&rr->keys[i * (size_t)rr->nkeys], v, rr->nkeys) == 0;
}

/* File f's rows paired with the result's; the unpaired ones as dummies */
static int pair_file(ref_rows *rr, size_t f, const hist *h, bool baseline_only)
{
	bool *used = calloc(h->n ? h->n : 1, 1);
	if (!used)
		return -1;
	size_t n = rr->n;           /* the rows so far: dummies made for f are not paired again */
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; j < h->n; j++)
			if (!used[j] && same_values(rr, i, h, &h->entries[j])) {
				used[j] = true;
				rr->pair[i * rr->nfiles + f] = &h->entries[j];
				break;
			}
	int rc = 0;
	for (size_t j = 0; j < h->n && !baseline_only && rc == 0; j++)
		if (!used[j] && (rc = ref_row_add(rr, h, &h->entries[j], true)) == 0)
			rr->pair[(rr->n - 1) * rr->nfiles + f] = &h->entries[j];
	free(used);
	return rc;
}

/* The pairs' values, as perf diff computes them */
static void compute(diff_result *r, const diff_opts *o)
{
	for (size_t i = 0; i < r->nrows; i++) {
		diff_row *row = &r->rows[i];
		double base_pct = (row->period * 100.0) / r->totals[0];
		for (size_t f = 1; f < r->nfiles; f++) {
			diff_pair *p = &row->pairs[f];
			if (!p->e)
				continue;
			uint64_t period = p->e->period;
			p->delta = (period * 100.0) / r->totals[f] - base_pct;
			p->ratio = (double)period / (row->period ? (double)row->period : 1.0);
			p->wdiff = (int64_t)(period * (uint64_t)o->w2 - row->period * (uint64_t)o->w1);
		}
	}
}

static bool has_a_pair(const diff_row *row, size_t nfiles)
{
	for (size_t f = 1; f < nfiles; f++)
		if (row->pairs[f].e)
			return true;
	return false;
}

int diff_compute_reference(const hist *const *hists, size_t nfiles, const diff_opts *o, diff_result **out,
			   proff_error *err)
{
	*out = NULL;
	if (nfiles < 2 || !hists[0])
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "diff needs a baseline and at least one other file");
	if (o->order >= nfiles)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "Order option out of limit.");
	const hist *base = hists[0];
	ref_rows rr = { .nfiles = nfiles, .nkeys = base->nkeys, .key_ids = base->keys };
	int rc = 0;
	for (size_t i = 0; i < base->n && rc == 0; i++)
		rc = ref_row_add(&rr, base, &base->entries[i], false);
	for (size_t f = 1; f < nfiles && rc == 0; f++)
		if (hists[f])
			rc = pair_file(&rr, f, hists[f], o->baseline_only);
	/* into the result: rows, then their pairs */
	diff_result *r = rc == 0 ? diff_result_new(hists, nfiles, o) : NULL;
	for (size_t i = 0; r && i < rr.n && rc == 0; i++)
		rc = diff_add_row(r, rr.h[i], rr.e[i], rr.dummy[i]);
	if (r && rc == 0) {
		diff_fix_row_pointers(r);
		for (size_t i = 0; i < rr.n; i++)
			for (size_t f = 1; f < nfiles; f++)
				r->rows[i].pairs[f].e = rr.pair[i * nfiles + f];
	}
	free(rr.h);
	free(rr.e);
	free(rr.dummy);
	free(rr.keys);
	free(rr.pair);
	if (!r || rc != 0) {
		diff_result_free(r);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (o->baseline_only) {
		size_t n = 0;
		for (size_t i = 0; i < r->nrows; i++)
			if (has_a_pair(&r->rows[i], nfiles))
				r->rows[n++] = r->rows[i];
		r->nrows = n;
	}
	compute(r, o);
	diff_result_order(r, o);
	*out = r;
	return 0;
}
