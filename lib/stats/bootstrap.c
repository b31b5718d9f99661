/* bootstrap.c — the exact bootstrap interval of the difference of two
 * medians, with no random draw (Mann-Whitney U's CI, tests.c).
 *
 * Resampling n sorted values x_1 <= ... <= x_n with replacement, the
 * resample's median is an order statistic (odd n) or the mean of two (even
 * n), and which ones depends on the draws' indices only: P(median <= x_i)
 * is a binomial tail, the law over the indices is the same for every row of
 * a given group size (Efron 1979, "Bootstrap methods: another look at the
 * jackknife", section 3; Maritz and Jarrett 1978). So the law is computed
 * once per group size (median_law); a row puts its sorted values on it, and
 * the difference of the two groups' medians, whose resamples are
 * independent, has the law of the difference of two independent discrete
 * variables. Its percentiles are found without listing its |A| x |B|
 * points: P(D <= d) is one staircase walk over the two sorted supports, and
 * a bracket around the percentile, started from the normal approximation,
 * shrinks until few points remain between its ends. This is the limit of
 * the percentile bootstrap as the resamples grow: no Monte-Carlo error, the
 * same interval on every machine by construction. The walks and the sort
 * of a law's points have plain versions (boot_scratch.plain), the
 * reference that the faster ones beside them (the same steps, the same
 * order, the same sums) are tested against bit for bit (test_stats).
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proff/error.h"
#include "proff/stats.h"
#include "proff/util.h"
#include "stats-int.h"

/* ---- the law of a resample's median over the indices ------------------------- */

static double lchoose(double n, double k)
{
	int sign;
	return lgamma_r(n + 1, &sign) - lgamma_r(k + 1, &sign) - lgamma_r(n - k + 1, &sign);
}

/* P(Bin(n, i / n) >= k): at least k of the n draws fall on the i smallest */
static double draws_at_most_ge(size_t n, size_t i, size_t k)
{
	if (k == 0 || i >= n)
		return 1;
	if (i == 0)
		return 0;
	double lp = log((double)i / (double)n), lq = log1p(-(double)i / (double)n), s = 0;
	for (size_t j = k; j <= n; j++)
		s += exp(lchoose((double)n, (double)j) + (double)j * lp + (double)(n - j) * lq);
	return s > 1 ? 1 : s;
}

/* support points in the order of lo + hi, then lo: for evenly spread values
 * that is already their order, so a row's sort has little to move */
static int cmp_pair(const void *x, const void *y, void *arg)
{
	const median_law *l = arg;
	size_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	uint64_t sa = (uint64_t)l->lo[a] + l->hi[a], sb = (uint64_t)l->lo[b] + l->hi[b];
	if (sa != sb)
		return sa < sb ? -1 : 1;
	return l->lo[a] < l->lo[b] ? -1 : l->lo[a] > l->lo[b];
}

static int cmp_weight(const void *x, const void *y, void *arg)
{
	const double *w = arg;
	double a = w[*(const uint32_t *)x], b = w[*(const uint32_t *)y];
	return a < b ? -1 : a > b;
}

void median_law_free(median_law *l)
{
	free(l->lo);
	free(l->hi);
	free(l->w);
	memset(l, 0, sizeof(*l));
}

/* Odd n, k = (n + 1) / 2: P(median = x_i) = G(i) - G(i - 1), G(i) the
 * chance that at least k draws are among the i smallest. Even n, k = n / 2,
 * the median (Y_k + Y_k+1) / 2: for i < j, Y_k = x_i and Y_k+1 = x_j when
 * exactly k draws are <= x_i, at least one of them equal to it, and the
 * other n - k are >= x_j, at least one equal to it:
 *   C(n, k) (i^k - (i-1)^k) ((n-j+1)^(n-k) - (n-j)^(n-k)) / n^n;
 * Y_k = Y_k+1 = x_i takes the rest of P(Y_k = x_i) = G(i) - G(i - 1).
 * Points whose weights sum to less than 2^-53 (below the rounding of the
 * sums that use them) are left out: many for large n, none below n = 18. */
int median_law_init(median_law *l, size_t n)
{
	memset(l, 0, sizeof(*l));
	l->n = n;
	size_t np = n % 2 ? n : n * (n + 1) / 2;
	uint32_t *lo = pf_calloc(np, sizeof(uint32_t)), *hi = pf_calloc(np, sizeof(uint32_t));
	uint32_t *ord = pf_calloc(np, sizeof(uint32_t));
	double *w = pf_calloc(np, sizeof(double)), *g = pf_calloc(n + 1, sizeof(double));
	int rc = PROFF_ENOMEM;
	if (!lo || !hi || !ord || !w || !g)
		goto out;
	size_t k = n % 2 ? (n + 1) / 2 : n / 2;
	for (size_t i = 0; i <= n; i++)
		g[i] = draws_at_most_ge(n, i, k);
	if (n % 2) {
		for (size_t i = 0; i < n; i++) {
			lo[i] = hi[i] = (uint32_t)i;
			w[i] = g[i + 1] - g[i];
		}
	} else {
		double lc = lchoose((double)n, (double)k), dn = (double)n, nk = (double)(n - k);
		size_t p = 0;
		for (size_t i = 1; i <= n; i++) {
			/* (i/n)^k (1 - ((i-1)/i)^k), without cancellation */
			double li = (double)k * log((double)i / dn);
			double fi = -expm1((double)k * log1p(-1 / (double)i));
			double rest = g[i] - g[i - 1];
			size_t diag = p++;
			lo[diag] = hi[diag] = (uint32_t)(i - 1);
			for (size_t j = i + 1; j <= n; j++) {
				double m = (double)(n - j + 1);
				double gj = -expm1(nk * log1p(-1 / m));
				double v = exp(lc + li + nk * log(m / dn)) * fi * gj;
				lo[p] = (uint32_t)(i - 1);
				hi[p] = (uint32_t)(j - 1);
				w[p++] = v;
				rest -= v;
			}
			w[diag] = rest > 0 ? rest : 0;
		}
	}
	/* leave out the lightest points while their sum stays under 2^-53 */
	for (size_t i = 0; i < np; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, np, sizeof(uint32_t), cmp_weight, w);
	double dropped = 0;
	size_t first = 0;
	while (first < np && dropped + w[ord[first]] < 0x1p-53) {
		dropped += w[ord[first]];
		w[ord[first++]] = -1;
	}
	size_t kept = 0;
	for (size_t i = 0; i < np; i++)
		if (w[i] >= 0) {
			lo[kept] = lo[i];
			hi[kept] = hi[i];
			w[kept++] = w[i];
		}
	l->lo = lo;
	l->hi = hi;
	l->w = w;
	l->npts = kept;
	/* in the order of lo + hi */
	for (size_t i = 0; i < kept; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, kept, sizeof(uint32_t), cmp_pair, l);
	uint32_t *lo2 = pf_calloc(kept ? kept : 1, sizeof(uint32_t)), *hi2 = pf_calloc(kept ? kept : 1, sizeof(uint32_t));
	double *w2 = pf_calloc(kept ? kept : 1, sizeof(double));
	if (!lo2 || !hi2 || !w2) {
		free(lo2);
		free(hi2);
		free(w2);
		memset(l, 0, sizeof(*l));
		goto out;
	}
	for (size_t i = 0; i < kept; i++) {
		lo2[i] = lo[ord[i]];
		hi2[i] = hi[ord[i]];
		w2[i] = w[ord[i]];
	}
	l->lo = lo2;
	l->hi = hi2;
	l->w = w2;
	rc = 0;
out:
	free(lo);
	free(hi);
	free(w);
	free(ord);
	free(g);
	return rc;
}

/* ---- a row: the laws on its values, the percentiles of their difference --------- */

void boot_scratch_free(boot_scratch *s)
{
	for (int i = 0; i < 2; i++) {
		free(s->v[i]);
		free(s->w[i]);
		free(s->sf[i]);
	}
	for (int i = 0; i < 3; i++)
		free(s->s[i]);
	free(s->key);
	free(s->at[0]);
	free(s->at[1]);
	free(s->cand);
	memset(s, 0, sizeof(*s));
}

static int scratch_grow(boot_scratch *s, size_t pts)
{
	if (pts + 1 <= s->cap_pts)
		return 0;
	size_t cap = pts + 1;
	for (int i = 0; i < 2; i++) {
		double **arr[3] = { &s->v[i], &s->w[i], &s->sf[i] };
		for (int j = 0; j < 3; j++) {
			double *v = realloc(*arr[j], cap * sizeof(double));
			if (!v)
				return PROFF_ENOMEM;
			*arr[j] = v;
		}
	}
	uint32_t **idx[6] = { &s->s[0], &s->s[1], &s->s[2], &s->key, &s->at[0], &s->at[1] };
	for (int i = 0; i < 6; i++) {
		uint32_t *x = realloc(*idx[i], cap * sizeof(uint32_t));
		if (!x)
			return PROFF_ENOMEM;
		*idx[i] = x;
	}
	s->cap_pts = cap;
	return 0;
}

/* a bucket of the values: (value - lo) * scale, truncated into [0, n - 1]:
 * it never decreases as the value grows */
typedef struct buckets {
	const uint32_t *end;        /* end[k]: the end of bucket k in the sorted values; NULL: none */
	double lo, scale;
} buckets;

static inline uint32_t bucket_of(double val, double lo, double scale, size_t n)
{
	double t = (val - lo) * scale;
	return t > 0 ? t < (double)(n - 1) ? (uint32_t)t : (uint32_t)(n - 1) : 0;
}

typedef struct side {
	const double *v, *w, *sf;   /* values ascending, weights, sf[i] = sum of w[i..] */
	size_t n;
	double mean, var, m3;       /* the law's mean, variance, third central moment */
	buckets bk;
} side;

static int cmp_cand(const void *a, const void *b)
{
	double x = ((const struct boot_cand *)a)->v, y = ((const struct boot_cand *)b)->v;
	return x < y ? -1 : x > y;
}

/* The law l's points on the sorted values x, in the order of their values,
 * ties in the law's order (the reference): insertion for the small laws of
 * the usual group sizes (the law's order is nearly theirs), else qsort
 * (glibc's merges: stable). pt: scratch of l->npts points. */
static void sort_law_plain(const median_law *l, const double *x, double *v, double *w, struct boot_cand *pt)
{
	size_t n = l->npts;
	if (n <= 64) {
		for (size_t i = 0; i < n; i++) {
			double val = (x[l->lo[i]] + x[l->hi[i]]) / 2, wt = l->w[i];
			size_t j = i;
			while (j > 0 && v[j - 1] > val) {
				v[j] = v[j - 1];
				w[j] = w[j - 1];
				j--;
			}
			v[j] = val;
			w[j] = wt;
		}
	} else {
		for (size_t i = 0; i < n; i++)
			pt[i] = (struct boot_cand){ (x[l->lo[i]] + x[l->hi[i]]) / 2, l->w[i] };
		qsort(pt, n, sizeof(*pt), cmp_cand);
		for (size_t i = 0; i < n; i++) {
			v[i] = pt[i].v;
			w[i] = pt[i].w;
		}
	}
}

static int cmp_at(const void *a, const void *b, void *arg)
{
	const double *v = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (v[i] != v[j])
		return v[i] < v[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* sorts v[from..to) and w alike by (value, position), with pt and ix as
 * scratch: a bucket too crowded for insertion */
static void sort_run(double *v, double *w, size_t from, size_t to, struct boot_cand *pt, uint32_t *ix)
{
	size_t n = to - from;
	for (size_t i = 0; i < n; i++) {
		ix[i] = (uint32_t)(from + i);
		pt[i] = (struct boot_cand){ v[from + i], w[from + i] };
	}
	qsort_r(ix, n, sizeof(*ix), cmp_at, v);
	for (size_t i = 0; i < n; i++) {
		v[from + i] = pt[ix[i] - from].v;
		w[from + i] = pt[ix[i] - from].w;
	}
}

/* The same order, faster: a counting sort by a bucket that grows with the
 * value ((value - x_1) scaled to one bucket a point on average: a bucket
 * never holds a larger value than a later one, and the scatter keeps the
 * law's order within each), then insertion, which moves points only
 * within their bucket: few moves and few mispredicted branches, where
 * sorting the law's order directly mispredicts about once a point, and
 * qsort calls a comparison for each step. A bucket of more than 32 points
 * (values crowded by a long tail) is sorted by (value, position). Odd
 * sizes need nothing: the law's order (x_i alone) is the values'. key, at:
 * scratch of npts and npts + 1. */
static buckets sort_law_buckets(const median_law *l, const double *x, double *v, double *w, struct boot_cand *pt,
				uint32_t *key, uint32_t *at)
{
	size_t n = l->npts;
	if (l->n % 2) {
		for (size_t i = 0; i < n; i++) {
			v[i] = (x[l->lo[i]] + x[l->hi[i]]) / 2;
			w[i] = l->w[i];
		}
		return (buckets){ NULL, 0, 0 };
	}
	double lo = x[0], scale = (double)n / (x[l->n - 1] - x[0]);
	if (!(scale < INFINITY))   /* every value equal (or the range overflowed): one bucket */
		scale = 0;
	memset(at, 0, (n + 1) * sizeof(*at));
	for (size_t i = 0; i < n; i++) {
		double val = (x[l->lo[i]] + x[l->hi[i]]) / 2;
		uint32_t k = bucket_of(val, lo, scale, n);
		pt[i] = (struct boot_cand){ val, l->w[i] };
		key[i] = k;
		at[k + 1]++;
	}
	for (size_t k = 1; k < n; k++)
		at[k] += at[k - 1];
	/* at[k]: where bucket k starts, then (after the scatter) ends */
	for (size_t i = 0; i < n; i++) {
		uint32_t j = at[key[i]]++;
		v[j] = pt[i].v;
		w[j] = pt[i].w;
	}
	for (size_t k = 0, from = 0; k < n; from = at[k++])
		if (at[k] - from > 32)
			sort_run(v, w, from, at[k], pt, key);
	for (size_t i = 1; i < n; i++) {
		double val = v[i], wt = w[i];
		size_t j = i;
		while (j > 0 && v[j - 1] > val) {
			v[j] = v[j - 1];
			w[j] = w[j - 1];
			j--;
		}
		v[j] = val;
		w[j] = wt;
	}
	return (buckets){ at, lo, scale };
}

/* the law l on the sorted values x: its points sorted, suffix sums, mean,
 * variance and third moment (in this order of summation: the search's
 * first guess is made of them) */
static void put_law(boot_scratch *s, const median_law *l, const double *x, int i, side *sd)
{
	size_t n = l->npts;
	double *v = s->v[i], *w = s->w[i], *sf = s->sf[i];
	buckets bk = { NULL, 0, 0 };
	if (s->plain)
		sort_law_plain(l, x, v, w, s->cand);
	else
		bk = sort_law_buckets(l, x, v, w, s->cand, s->key, s->at[i]);
	double acc = 0, m = 0;
	sf[n] = 0;
	for (size_t i = n; i-- > 0;) {
		acc += w[i];
		sf[i] = acc;
		m += w[i] * v[i];
	}
	double var = 0, m3 = 0;
	for (size_t i = 0; i < n; i++) {
		double dv = v[i] - m, w2 = w[i] * dv * dv;
		var += w2;
		m3 += w2 * dv;
	}
	*sd = (side){ v, w, sf, n, m, var, m3, bk };
}

/* P(Y - X <= d) = sum over y_q of w_q P(X >= y_q - d); st[q] = the first
 * index p with y_q - x_p <= d (as computed: the candidates' own rounding),
 * which does not decrease with q; *sum = the sum of st */
static double cdf_at(const side *x, const side *y, double d, uint32_t *st, size_t *sum)
{
	double f = 0;
	size_t p = 0, tot = 0;
	for (size_t q = 0; q < y->n; q++) {
		while (p < x->n && y->v[q] - x->v[p] > d)
			p++;
		st[q] = (uint32_t)p;
		tot += p;
		f += y->w[q] * x->sf[p];
	}
	*sum = tot;
	return f;
}

/* the same for P(Y - X < d) */
static double cdf_below(const side *x, const side *y, double d, uint32_t *st, size_t *sum)
{
	double f = 0;
	size_t p = 0, tot = 0;
	for (size_t q = 0; q < y->n; q++) {
		while (p < x->n && y->v[q] - x->v[p] >= d)
			p++;
		st[q] = (uint32_t)p;
		tot += p;
		f += y->w[q] * x->sf[p];
	}
	*sum = tot;
	return f;
}

/* The same walks, faster, for a trial inside the bracket: st[q] lies in
 * [shi[q], slo[q]] (P(D <= d) grows with d), and each row finds its step by
 * a binary search there: the predicate y_q - x_p > d (>= d for below) is
 * true then false along p (x ascending, and rounding keeps the difference
 * monotone), so the first p where it fails is the plain walk's, whatever
 * the search. The search branches on the bracket's width only, not on
 * the values (the plain walk's exit from its inner loop is mispredicted
 * about once a row), and the rows do not wait on each other (each starts
 * from its own bound, not the previous row's step), so they overlap in the
 * processor. p = slo[q] is never
 * tested: there the predicate fails (y_q - x_p <= dlo < d), or it is x->n,
 * "no such p". The sum runs over q in the same order as cdf_at's: the same
 * double. */
static inline uint32_t step_in(const double *xv, uint32_t lo, uint32_t hi, double yq, double d, bool below)
{
	const double *b = xv + lo;
	size_t n = (size_t)(hi - lo) + 1;      /* [lo, hi]: the step is at hi at the latest */
	while (n > 1) {
		size_t half = n / 2;
		double t = yq - b[half - 1];
		b = (below ? t >= d : t > d) ? b + half : b;
		n -= half;
	}
	return (uint32_t)(b - xv);
}

static inline double cdf_in(const side *x, const side *y, double d, bool below, const uint32_t *shi,
			    const uint32_t *slo, uint32_t *st, size_t *sum)
{
	double f = 0;
	size_t tot = 0;
	for (size_t q = 0; q < y->n; q++) {
		uint32_t p = step_in(x->v, shi[q], slo[q], y->v[q], d, below);
		st[q] = p;
		tot += p;
		f += y->w[q] * x->sf[p];
	}
	*sum = tot;
	return f;
}

/* The same walk with no bracket yet: row q's step is where x crosses
 * y_q - d, so it lies within the buckets of x around that value's; the
 * range [a, b] they give is checked (the predicate holds at a - 1 and fails
 * at b, else the whole of x: rounding, or values too close for buckets to
 * part them), then searched as in cdf_in. Rows independent, a few tests
 * each, where the plain walk takes a step per row and per point of x and
 * mispredicts. */
static double cdf_bucketed(const side *x, const side *y, double d, uint32_t *st, size_t *sum)
{
	const uint32_t *end = x->bk.end;
	uint32_t n = (uint32_t)x->n;
	double f = 0;
	size_t tot = 0;
	for (size_t q = 0; q < y->n; q++) {
		double yq = y->v[q];
		uint32_t k = bucket_of(yq - d, x->bk.lo, x->bk.scale, n);
		uint32_t a = k >= 2 ? end[k - 2] : 0, b = k + 1 < n ? end[k + 1] : n;
		if ((a > 0 && !(yq - x->v[a - 1] > d)) || (b < n && yq - x->v[b] > d)) {
			a = 0;
			b = n;
		}
		uint32_t p = step_in(x->v, a, b, yq, d, false);
		st[q] = p;
		tot += p;
		f += y->w[q] * x->sf[p];
	}
	*sum = tot;
	return f;
}

static int grow_cand(boot_scratch *s, size_t n)
{
	if (n <= s->cap_cand)
		return 0;
	struct boot_cand *c = realloc(s->cand, n * sizeof(*c));
	if (!c)
		return PROFF_ENOMEM;
	s->cand = c;
	s->cap_cand = n;
	return 0;
}

/* a normal score for the search's guesses only (Abramowitz and Stegun
 * 26.2.23, error under 4.5e-4): one logarithm, where the exact quantile's
 * refinement would cost more than the guesses gain */
static double rough_probit(double p)
{
	if (p <= 0)
		return -40;
	if (p >= 1)
		return 40;
	double r = p < 0.5 ? p : 1 - p, t = sqrt(-2 * log(r));
	double z = t - (2.515517 + t * (0.802853 + t * 0.010328)) /
		       (1 + t * (1.432788 + t * (0.189269 + t * 0.001308)));
	return p < 0.5 ? -z : z;
}

/* the bracket's points are gathered and sorted once this few remain
 * (fewer steps than another walk of the staircase) */
#define FEW_CANDIDATES 16

/* a point of the bracket near its middle: the middle one of the row that
 * holds the middle of the candidates in row order; when that is the top,
 * the bracket's smallest point (each row's last); NAN when every point of
 * the bracket is the top (nothing left to split) */
static double bracket_point(const side *x, const side *y, const uint32_t *slo, const uint32_t *shi,
			    size_t count, bool have_hi, double dhi)
{
	size_t half = count / 2, q = 0;
	while (half >= slo[q] - shi[q]) {
		half -= slo[q] - shi[q];
		q++;
	}
	double pivot = y->v[q] - x->v[shi[q] + half];
	if (!have_hi || pivot < dhi)
		return pivot;
	double m = pivot;
	for (size_t r = 0; r < y->n; r++)
		if (slo[r] > shi[r] && y->v[r] - x->v[slo[r] - 1] < m)
			m = y->v[r] - x->v[slo[r] - 1];
	return m < dhi ? m : NAN;
}

/* *out = the smallest value d of Y - X with P(Y - X <= d) >= alpha.
 * A bracket (dlo, dhi] with P(<= dlo) < alpha <= P(<= dhi), at first the
 * whole support, shrinks by trials: the normal approximation of D first,
 * then steps by its slope until both ends are known, then interpolation
 * between the ends (Illinois: an end kept twice has its weight halved);
 * the middle point of the bracket when a trial would not split it. Its
 * candidates: row q's p in [shi[q], slo[q]), sum_lo - sum_hi of them. */
static int lower_percentile(boot_scratch *s, const side *x, const side *y, double alpha, double *out)
{
	uint32_t *slo = s->s[0], *shi = s->s[1], *st = s->s[2];
	for (size_t q = 0; q < y->n; q++) {
		slo[q] = (uint32_t)x->n;
		shi[q] = 0;
	}
	size_t sum_lo = x->n * y->n, sum_hi = 0;
	double flo = 0, dlo = 0, dhi = 0, zlo = 0, zhi = 0;
	bool have_lo = false, have_hi = false;
	/* the first trial: D's percentile by Cornish-Fisher from its exact
	 * mean, variance and skewness (the laws' cumulants add) */
	double var = x->var + y->var, sd = sqrt(var), za = rough_probit(alpha);
	double skew = var > 0 ? (y->m3 - x->m3) / (var * sd) : 0;
	double guess = y->mean - x->mean + sd * (za + (za * za - 1) * skew / 6);
	int kept = 0;       /* > 0: the low end kept that many times in a row; < 0: the high end */
	bool stalled = false;
	for (int iter = 0; sum_lo - sum_hi > FEW_CANDIDATES; iter++) {
		size_t sum;
		double f;
		if (stalled && have_hi && kept > 0) {
			/* the top did not move: a heavy point there? If P(D < dhi)
			 * is under alpha, dhi is the answer; else the points at
			 * dhi leave the bracket */
			if (s->plain)
				f = cdf_below(x, y, dhi, st, &sum);
			else
				f = cdf_in(x, y, dhi, true, shi, slo, st, &sum);
			if (f < alpha) {
				*out = dhi;
				return 0;
			}
			uint32_t *t = st;
			st = shi;
			shi = t;
			sum_hi = sum;
			dhi = nextafter(dhi, -INFINITY);
			zhi = rough_probit(f);
			stalled = false;
			continue;
		}
		double pivot = guess;
		if (stalled || iter >= 24 || !isfinite(pivot) || (have_lo && pivot <= dlo) || (have_hi && pivot >= dhi)) {
			pivot = bracket_point(x, y, slo, shi, sum_lo - sum_hi, have_hi, dhi);
			if (isnan(pivot))
				break;
		}
		/* the first trial, with no bracket yet: within buckets (even
		 * sizes), else the plain walk, as searching each row over all
		 * of x costs more than the walk's mispredictions */
		if (s->plain || (!have_lo && !have_hi && !x->bk.end))
			f = cdf_at(x, y, pivot, st, &sum);
		else if (!have_lo && !have_hi)
			f = cdf_bucketed(x, y, pivot, st, &sum);
		else
			f = cdf_in(x, y, pivot, false, shi, slo, st, &sum);
		/* the trial's distance from the percentile in normal scores */
		double z = rough_probit(f);
		/* a trial that moved no point out of the bracket: split it next */
		stalled = f >= alpha ? sum == sum_hi : sum == sum_lo;
		uint32_t *t = st;
		if (f >= alpha) {
			st = shi;
			shi = t;
			sum_hi = sum;
			dhi = pivot;
			zhi = z;
			have_hi = true;
			kept = kept > 0 ? kept + 1 : 1;
		} else {
			st = slo;
			slo = t;
			sum_lo = sum;
			dlo = pivot;
			flo = f;
			zlo = z;
			have_lo = true;
			kept = kept < 0 ? kept - 1 : -1;
		}
		if (have_lo && have_hi) {
			/* interpolation in normal scores between the ends */
			double wl = za - zlo, wh = zhi - za;
			if (kept >= 2)
				wl /= 2;
			else if (kept <= -2)
				wh /= 2;
			guess = wl + wh > 0 ? dlo + (dhi - dlo) * wl / (wl + wh) : NAN;
		} else {
			/* one end known: a step by the normal slope, a little past,
			 * and at least a hundredth of D's deviation */
			double step = 1.1 * sd * (za - z);
			if (fabs(step) < sd / 100)
				step = copysign(sd / 100, za - z);
			guess = sd > 0 ? pivot + step : NAN;
		}
	}
	/* the points in (dlo, dhi], in order, added to P(<= dlo) */
	size_t count = sum_lo - sum_hi;
	if (grow_cand(s, count))
		return PROFF_ENOMEM;
	size_t nc = 0;
	for (size_t q = 0; q < y->n; q++)
		for (size_t p = shi[q]; p < slo[q]; p++) {
			struct boot_cand c = { y->v[q] - x->v[p], y->w[q] * x->w[p] };
			size_t j = nc++;
			for (; j > 0 && s->cand[j - 1].v > c.v; j--)
				s->cand[j] = s->cand[j - 1];
			s->cand[j] = c;
		}
	double f = flo;
	for (size_t i = 0; i < nc; i++) {
		f += s->cand[i].w;
		if (f >= alpha && (i + 1 == nc || s->cand[i + 1].v != s->cand[i].v)) {
			*out = s->cand[i].v;
			return 0;
		}
	}
	/* rounding kept the sum under alpha: the bracket's top is the answer */
	*out = nc ? s->cand[nc - 1].v : dhi;
	return 0;
}

int boot_median_diff_ci(boot_scratch *s, const median_law *la, const double *sa,
			const median_law *lb, const double *sb, double alpha, double *lo, double *hi)
{
	size_t pts = la->npts > lb->npts ? la->npts : lb->npts;
	if (scratch_grow(s, pts) || grow_cand(s, pts))
		return PROFF_ENOMEM;
	side a, b;
	put_law(s, la, sa, 0, &a);
	put_law(s, lb, sb, 1, &b);
	/* the upper one: the lower percentile of A - B, negated (the
	 * candidates' differences round alike both ways) */
	double up = NAN;
	int rc = lower_percentile(s, &a, &b, alpha, lo);
	if (!rc)
		rc = lower_percentile(s, &b, &a, alpha, &up);
	*hi = -up;
	return rc;
}
