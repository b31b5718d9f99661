/* diff.c — pairing, compute methods and row order of `proff diff`.
 *
 * Follows perf diff (builtin-diff.c + util/hist.c) step by step:
 *   match:  every baseline row looks up the entry of file i with equal keys;
 *   link:   (unless -b) every unpaired entry of file i becomes a dummy row,
 *           matching happens before linking per file, so with 3+ files a
 *           dummy created for file 1 pairs with file 2;
 *   -b:     rows without any pair are dropped;
 *   compute delta / ratio / wdiff per pair;
 *   sort:   [compute of file -o] > baseline period > compute of each file > keys.
 * Keys are compared by value (strings, numbers) so entries of different
 * profiles (different string tables) pair.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"

static const char *const compute_names[DIFF__NR_COMPUTE] = {
	[DIFF_DELTA] = "delta", [DIFF_DELTA_ABS] = "delta-abs", [DIFF_RATIO] = "ratio",
	[DIFF_WDIFF] = "wdiff", [DIFF_CYCLES] = "cycles",
};

struct diff_priv {
	diff_pair *pairs;         /* rows * nfiles */
	diff_key *keys;           /* rows * nkeys */
	size_t cap;               /* rows allocated */
	const diff_opts *o;       /* during sort */
};

const char *diff_compute_name(int compute)
{
	return compute >= 0 && compute < DIFF__NR_COMPUTE ? compute_names[compute] : "?";
}

void diff_opts_init(diff_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->compute = DIFF_DELTA_ABS;
	o->order = 1;
}

int diff_parse_compute(const char *arg, diff_opts *o, char *msg, size_t msglen)
{
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	const char *opt = colon ? colon + 1 : NULL;
	int c = -1;

	for (int i = 0; i < DIFF__NR_COMPUTE; i++)
		if (strlen(compute_names[i]) == len && !strncmp(arg, compute_names[i], len))
			c = i;
	if (c < 0 || len >= 50) {
		snprintf(msg, msglen, "Failed: '%s' is not computation method (use 'delta','ratio' or 'wdiff')", arg);
		return PROFF_EUSAGE;
	}
	if (c == DIFF_WDIFF) {
		const char *comma = opt ? strchr(opt, ',') : NULL;
		if (!comma || !comma[1]) {
			snprintf(msg, msglen, "Failed: wrong weight data, use 'wdiff:w1,w2'");
			return PROFF_EUSAGE;
		}
		/* perf parses each weight with strtol (trailing garbage ignored) */
		long long w1 = strtoll(opt, NULL, 10), w2 = strtoll(comma + 1, NULL, 10);
		if (!w1 || !w2) {
			snprintf(msg, msglen, "Failed: wrong weight data, use 'wdiff:w1,w2'");
			return PROFF_EUSAGE;
		}
		o->w1 = w1;
		o->w2 = w2;
	} else if (opt) {
		snprintf(msg, msglen, "Failed: extra option specified '%s'", opt);
		return PROFF_EUSAGE;
	}
	o->compute = c;
	return 0;
}

/* ---- keys ------------------------------------------------------------------ */

static void row_keys(const hist *h, const hist_entry *e, const int *keys, int nkeys, diff_key *out)
{
	for (int k = 0; k < nkeys; k++) {
		out[k] = (diff_key){ 0 };
		hist_keys[keys[k]].value(h, e, &out[k]);
	}
}

static uint64_t keys_hash(const diff_key *k, int nkeys)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < nkeys; i++) {
		if (k[i].s)
			x = pf_hash_bytes(k[i].s, strlen(k[i].s), x);
		else
			x = pf_hash64(x ^ 0x5bd1e995);
		x = pf_hash64(x ^ k[i].n ^ (k[i].n2 << 32));
	}
	return x;
}

static bool keys_equal(const diff_key *a, const diff_key *b, int nkeys)
{
	for (int i = 0; i < nkeys; i++) {
		if (a[i].n != b[i].n || a[i].n2 != b[i].n2)
			return false;
		if (!a[i].s || !b[i].s) {
			if (a[i].s != b[i].s)
				return false;
		} else if (strcmp(a[i].s, b[i].s)) {
			return false;
		}
	}
	return true;
}

int diff_keys_sort(const diff_key *a, const diff_key *b, int nkeys)
{
	for (int i = 0; i < nkeys; i++) {
		if (a[i].s || b[i].s) {
			if (!a[i].s || !b[i].s)
				return a[i].s ? 1 : -1;
			int c = strcmp(a[i].s, b[i].s);
			if (c)
				return c < 0 ? 1 : -1;
		}
		if (a[i].n != b[i].n)
			return a[i].n < b[i].n ? 1 : -1;
		if (a[i].n2 != b[i].n2)
			return a[i].n2 < b[i].n2 ? 1 : -1;
	}
	return 0;
}

/* ---- rows ------------------------------------------------------------------ */

int diff_add_row(diff_result *r, const hist *h, const hist_entry *e, bool dummy)
{
	struct diff_priv *p = r->priv;
	if (r->nrows == p->cap) {
		size_t ncap = p->cap ? p->cap * 2 : 256;
		diff_row *rows = pf_realloc_array(r->rows, ncap, sizeof(*rows));
		if (!rows)
			return PROFF_ENOMEM;
		r->rows = rows;
		diff_pair *pairs = pf_realloc_array(p->pairs, ncap * r->nfiles, sizeof(*pairs));
		if (!pairs)
			return PROFF_ENOMEM;
		p->pairs = pairs;
		diff_key *keys = pf_realloc_array(p->keys, ncap * (size_t)(r->nkeys ? r->nkeys : 1), sizeof(*keys));
		if (!keys)
			return PROFF_ENOMEM;
		p->keys = keys;
		p->cap = ncap;
	}
	diff_row *row = &r->rows[r->nrows];
	memset(row, 0, sizeof(*row));
	row->h = h;
	row->e = e;
	row->dummy = dummy;
	row->period = dummy ? 0 : e->period;
	row->filtered = e->filtered;
	row->seq = r->nrows;
	memset(&p->pairs[r->nrows * r->nfiles], 0, r->nfiles * sizeof(diff_pair));
	row_keys(h, e, r->keys, r->nkeys, &p->keys[r->nrows * (size_t)r->nkeys]);
	r->nrows++;
	return 0;
}

/* pointers into priv arrays are only fixed once all rows exist */
void diff_fix_row_pointers(diff_result *r)
{
	for (size_t i = 0; i < r->nrows; i++) {
		r->rows[i].pairs = &r->priv->pairs[r->rows[i].seq * r->nfiles];
		r->rows[i].keys = &r->priv->keys[r->rows[i].seq * (size_t)r->nkeys];
	}
}

/* open-addressing index of one hist's entries by key value */
typedef struct kindex {
	uint32_t *slots;     /* entry index + 1, 0 = empty */
	size_t mask;
	diff_key *keys;      /* [n * nkeys] */
	uint8_t *used;       /* entry paired already */
} kindex;

static int kindex_build(kindex *ix, const hist *h, const int *keys, int nkeys)
{
	size_t cap = 16;
	while (cap < h->n * 2 + 2)
		cap <<= 1;
	ix->slots = pf_calloc(cap, sizeof(uint32_t));
	ix->keys = pf_calloc(h->n ? h->n * (size_t)(nkeys ? nkeys : 1) : 1, sizeof(diff_key));
	ix->used = pf_calloc(h->n ? h->n : 1, 1);
	ix->mask = cap - 1;
	if (!ix->slots || !ix->keys || !ix->used)
		return PROFF_ENOMEM;
	for (size_t i = 0; i < h->n; i++) {
		diff_key *k = &ix->keys[i * (size_t)nkeys];
		row_keys(h, &h->entries[i], keys, nkeys, k);
		size_t s = keys_hash(k, nkeys) & ix->mask;
		while (ix->slots[s])
			s = (s + 1) & ix->mask;
		ix->slots[s] = (uint32_t)i + 1;
	}
	return 0;
}

static long kindex_find(const kindex *ix, const diff_key *k, int nkeys)
{
	size_t s = keys_hash(k, nkeys) & ix->mask;
	while (ix->slots[s]) {
		uint32_t i = ix->slots[s] - 1;
		if (!ix->used[i] && keys_equal(&ix->keys[(size_t)i * nkeys], k, nkeys))
			return i;
		s = (s + 1) & ix->mask;
	}
	return -1;
}

static void kindex_free(kindex *ix)
{
	free(ix->slots);
	free(ix->keys);
	free(ix->used);
}

/* ---- totals and values ---------------------------------------------------------- */

static uint64_t hist_total(const hist *h, bool relative)
{
	if (!h)
		return 0;
	return relative ? h->total_non_filtered_period : h->total_period;
}

double diff_row_baseline_pct(const diff_result *r, const diff_row *row)
{
	return 100.0 * row->period / r->totals[0];
}

double diff_pair_pct(const diff_result *r, size_t file, const diff_pair *p)
{
	return (p->e->period * 100.0) / r->totals[file];
}

static void precompute(diff_result *r, const diff_opts *o)
{
	for (size_t i = 0; i < r->nrows; i++) {
		diff_row *row = &r->rows[i];
		double old_pct = (row->period * 100.0) / r->totals[0];
		for (size_t f = 1; f < r->nfiles; f++) {
			diff_pair *p = &row->pairs[f];
			if (!p->e)
				continue;
			uint64_t np = p->e->period;
			p->delta = (np * 100.0) / r->totals[f] - old_pct;
			double oldp = row->period ? (double)row->period : 1.0;
			p->ratio = (double)np / oldp;
			p->wdiff = (int64_t)(np * (uint64_t)o->w2 - row->period * (uint64_t)o->w1);
		}
	}
}

/* ---- order ---------------------------------------------------------------------- */

static int cmp_doubles(double l, double r)
{
	if (l > r)
		return -1;
	if (l < r)
		return 1;
	return 0;
}

static int cmp_value(const diff_pair *l, const diff_pair *r, int c)
{
	switch (c) {
	case DIFF_DELTA: return cmp_doubles(l->delta, r->delta);
	case DIFF_DELTA_ABS: return cmp_doubles(fabs(l->delta), fabs(r->delta));
	case DIFF_RATIO: return cmp_doubles(l->ratio, r->ratio);
	case DIFF_WDIFF: return r->wdiff > l->wdiff ? 1 : r->wdiff < l->wdiff ? -1 : 0;
	default: return 0;
	}
}

static bool has_pairs(const diff_row *row, size_t nfiles)
{
	for (size_t f = 1; f < nfiles; f++)
		if (row->pairs[f].e)
			return true;
	return false;
}

/* perf's hist_entry__cmp_compute(left, right, c, idx) */
static int cmp_compute(const diff_row *l, const diff_row *r, int c, size_t idx, size_t nfiles)
{
	bool pl = has_pairs(l, nfiles), pr = has_pairs(r, nfiles);
	if (!pl && !pr)
		return 0;
	if (!pl || !pr)
		return pl ? -1 : 1;
	const diff_pair *a = &l->pairs[idx], *b = &r->pairs[idx];
	if (!a->e && !b->e)
		return 0;
	if (!a->e || !b->e)
		return a->e ? -1 : 1;
	return cmp_value(a, b, c);
}

/* perf's hist_entry__cmp_compute_idx(left, right, c, idx) */
static int cmp_compute_idx(const diff_row *l, const diff_row *r, int c, size_t idx)
{
	const diff_pair *a = &l->pairs[idx], *b = &r->pairs[idx];
	if (!a->e && !b->e)
		return 0;
	if (!a->e || !b->e)
		return a->e ? -1 : 1;
	if (c != DIFF_DELTA && c != DIFF_DELTA_ABS) {
		if (l->dummy && r->dummy)
			return 0;
		if (l->dummy || r->dummy)
			return l->dummy ? 1 : -1;
	}
	return cmp_value(a, b, c);
}

/* perf's hist_entry__sort(a, b): > 0 when a goes before b */
static int perf_sort(const diff_row *a, const diff_row *b, const diff_result *r, const diff_opts *o)
{
	int c;
	if (o->compute != DIFF_CYCLES) {
		if (o->order) {
			c = cmp_compute_idx(b, a, o->compute, o->order);
			if (c)
				return c;
		}
	}
	if (a->period != b->period)
		return a->period > b->period ? 1 : -1;
	if (o->compute != DIFF_CYCLES) {
		for (size_t f = 1; f < r->nfiles; f++) {
			c = cmp_compute(b, a, o->compute, f, r->nfiles);
			if (c)
				return c;
		}
	}
	return diff_keys_sort(a->keys, b->keys, r->nkeys);
}

static int row_cmp(const void *pa, const void *pb, void *arg)
{
	const diff_result *r = arg;
	const diff_row *a = pa, *b = pb;
	int c = perf_sort(a, b, r, r->priv->o);
	if (c)
		return -c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- column widths (perf's hists__calc_col_len over the printed rows) ----------- */

static void calc_widths(diff_result *r, const diff_opts *o)
{
	bool unresolved = false;
	for (int k = 0; k < r->nkeys; k++)
		r->key_width[k] = strlen(hist_keys[r->keys[k]].header);
	for (size_t i = 0; i < r->nrows; i++) {
		const diff_row *row = &r->rows[i];
		if (row->filtered)
			continue;
		const char *sym = hist_sym_name(row->h, row->e);
		if (!sym)
			unresolved = true;
		for (int k = 0; k < r->nkeys; k++) {
			size_t w;
			switch (r->keys[k]) {
			case HK_SYM:
				w = sym ? strlen(sym) + 4 + (o->verbose ? 21 : 0) : 22;
				break;
			case HK_DSO:
				w = row->e->dso == PF_NONE ? 0 : strlen(hist_dso_name(row->h, row->e));
				break;
			default:
				w = hist_keys[r->keys[k]].width(row->h, row->e);
				break;
			}
			if (w > r->key_width[k])
				r->key_width[k] = w;
		}
	}
	for (int k = 0; k < r->nkeys; k++)
		if (unresolved && !o->field_sep && !o->nr_dso_filter &&
		    r->key_width[k] < hist_keys[r->keys[k]].unresolved_width)
			r->key_width[k] = hist_keys[r->keys[k]].unresolved_width;

	/* elide single-entry filter columns, unless that would hide them all */
	bool all = true;
	for (int k = 0; k < r->nkeys; k++) {
		int id = r->keys[k];
		r->key_elided[k] = (id == HK_SYM && o->nr_sym_filter == 1) ||
				   (id == HK_DSO && o->nr_dso_filter == 1) ||
				   (id == HK_COMM && o->nr_comm_filter == 1);
		all &= r->key_elided[k];
	}
	if (all)
		for (int k = 0; k < r->nkeys; k++)
			r->key_elided[k] = false;
}

/* ---- driver ---------------------------------------------------------------------- */

void diff_result_order(diff_result *r, const diff_opts *o)
{
	r->priv->o = o;
	qsort_r(r->rows, r->nrows, sizeof(*r->rows), row_cmp, r);
	r->priv->o = NULL;
	calc_widths(r, o);
}

diff_result *diff_result_new(const hist *const *hists, size_t nfiles, const diff_opts *o)
{
	diff_result *r = pf_calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->priv = pf_calloc(1, sizeof(*r->priv));
	r->hists = pf_calloc(nfiles, sizeof(*r->hists));
	r->totals = pf_calloc(nfiles, sizeof(*r->totals));
	if (!r->priv || !r->hists || !r->totals) {
		diff_result_free(r);
		return NULL;
	}
	r->nfiles = nfiles;
	r->nkeys = hists[0]->nkeys;
	memcpy(r->keys, hists[0]->keys, sizeof(r->keys));
	for (size_t f = 0; f < nfiles; f++) {
		r->hists[f] = hists[f];
		r->totals[f] = hist_total(hists[f], o->relative);
	}
	return r;
}

int diff_compute(const hist *const *hists, size_t nfiles, const diff_opts *o,
		 diff_result **out, proff_error *err)
{
	*out = NULL;
	if (nfiles < 2 || !hists[0])
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "diff needs a baseline and at least one other file");
	if (o->order >= nfiles)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "Order option out of limit.");

	diff_result *r = diff_result_new(hists, nfiles, o);
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	for (size_t f = 0; f < nfiles; f++)
		if (hists[f] && (hists[f]->nkeys != r->nkeys ||
				 memcmp(hists[f]->keys, r->keys, sizeof(int) * (size_t)r->nkeys)))
			goto badkeys;

	const hist *base = hists[0];
	for (size_t i = 0; i < base->n; i++)
		if (diff_add_row(r, base, &base->entries[i], false))
			goto nomem;

	for (size_t f = 1; f < nfiles; f++) {
		const hist *h = hists[f];
		if (!h)
			continue;
		kindex ix = {0};
		if (kindex_build(&ix, h, r->keys, r->nkeys)) {
			kindex_free(&ix);
			goto nomem;
		}
		/* match */
		for (size_t i = 0; i < r->nrows; i++) {
			const diff_key *k = &r->priv->keys[r->rows[i].seq * (size_t)r->nkeys];
			long j = kindex_find(&ix, k, r->nkeys);
			if (j >= 0) {
				ix.used[j] = 1;
				r->priv->pairs[r->rows[i].seq * nfiles + f].e = &h->entries[j];
			}
		}
		/* link */
		if (!o->baseline_only) {
			for (size_t j = 0; j < h->n; j++) {
				if (ix.used[j])
					continue;
				if (diff_add_row(r, h, &h->entries[j], true)) {
					kindex_free(&ix);
					goto nomem;
				}
				r->priv->pairs[(r->nrows - 1) * nfiles + f].e = &h->entries[j];
			}
		}
		kindex_free(&ix);
	}
	diff_fix_row_pointers(r);

	if (o->baseline_only) {
		size_t n = 0;
		for (size_t i = 0; i < r->nrows; i++)
			if (has_pairs(&r->rows[i], nfiles))
				r->rows[n++] = r->rows[i];
		r->nrows = n;
	}

	precompute(r, o);
	diff_result_order(r, o);
	*out = r;
	return 0;

badkeys:
	diff_result_free(r);
	return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "diff: hists built with different sort keys");
nomem:
	diff_result_free(r);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

void diff_result_free(diff_result *r)
{
	if (!r)
		return;
	if (r->priv) {
		free(r->priv->pairs);
		free(r->priv->keys);
		free(r->priv);
	}
	free(r->rows);
	free(r->hists);
	free(r->totals);
	free(r);
}
