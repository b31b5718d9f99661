/* tests.c — the two-group tests: Welch's t, Mann-Whitney U (exact
 * distribution for small groups without ties, normal approximation with tie
 * and continuity corrections otherwise, as scipy's mannwhitneyu chooses) with
 * a bootstrap CI of the difference of medians, and the sampling-noise tests of
 * one run per side. Each returns what the data can support: a status instead
 * of a p-value where the runs are too few or do not vary at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proff/error.h"
#include "proff/stats.h"
#include "proff/util.h"

/* exact U distributions are computed while the larger group is at most this
 * big (the table costs min^2 * max^2 / 4 additions); beyond, the normal
 * approximation is used, which is then very good */
#define MWU_EXACT_MAX_N 1000
#define MWU_EXACT_MIN_N 8          /* exact when the smaller group has at most this many runs */
#define MWU_TABLES 4               /* cached (na, nb) tables */

typedef struct mwu_table {
	size_t m, n;               /* group sizes (m = a's) */
	double *sf;                /* sf[u] = P(U >= u), u = 0 .. m n */
} mwu_table;

struct stats_ctx {
	stats_config cfg;
	/* Welch's CI: t's quantile over the df a pair of group sizes allows */
	stats_tq tq;
	size_t tq_na, tq_nb;
	mwu_table tables[MWU_TABLES];
	size_t next_table;
	/* scratch: combined values with their group, ranks, resample medians */
	struct ranked { double v; uint32_t group; } *rk;
	double *ranks, *boot;
	size_t cap_rk, cap_boot;
};

static void result_init(stats_result *r)
{
	r->status = STATS_TOO_FEW;
	r->mean_a = r->mean_b = r->delta = NAN;
	r->ci_low = r->ci_high = r->p = r->stat = r->df = NAN;
	r->exact = false;
}

void stats_config_init(stats_config *c)
{
	c->test = STATS_WELCH;
	c->level = 0.95;
	c->resamples = 2000;
	c->seed = 0x70726f6666ULL;     /* "proff" */
}

/* ---- Welch ---------------------------------------------------------------------- */

static void welch(const double *a, size_t na, const double *b, size_t nb, double level,
		  const stats_tq *tq, stats_result *r)
{
	result_init(r);
	if (na)
		r->mean_a = stats_mean(a, na);
	if (nb)
		r->mean_b = stats_mean(b, nb);
	r->delta = r->mean_b - r->mean_a;
	if (na < 2 || nb < 2)
		return;
	double va = stats_var(a, na) / (double)na, vb = stats_var(b, nb) / (double)nb;
	double se2 = va + vb;
	if (!(se2 > 0)) {
		r->status = STATS_ZERO_VARIANCE;
		return;
	}
	double se = sqrt(se2);
	r->df = se2 * se2 / (va * va / (double)(na - 1) + vb * vb / (double)(nb - 1));
	r->stat = r->delta / se;
	r->p = stats_t_sf2(r->stat, r->df);
	double t = tq ? stats_tq_eval(tq, r->df) : stats_t_quantile(0.5 + level / 2, r->df);
	r->ci_low = r->delta - t * se;
	r->ci_high = r->delta + t * se;
	r->status = STATS_OK;
}

void stats_welch(const double *a, size_t na, const double *b, size_t nb, double level,
		 stats_result *r)
{
	welch(a, na, b, nb, level, NULL, r);
}

/* ---- one run per side --------------------------------------------------------------- */

void stats_two_proportions(double xa, double na, double xb, double nb, double level,
			   stats_result *r)
{
	result_init(r);
	if (!(na > 0) || !(nb > 0))
		return;
	double pa = xa / na, pb = xb / nb;
	r->mean_a = pa;
	r->mean_b = pb;
	r->delta = pb - pa;
	double pp = (xa + xb) / (na + nb);
	double se0 = sqrt(pp * (1 - pp) * (1 / na + 1 / nb));
	if (!(se0 > 0)) {
		r->status = STATS_ZERO_VARIANCE;
		return;
	}
	r->stat = r->delta / se0;
	r->p = erfc(fabs(r->stat) / M_SQRT2);
	double se = sqrt(pa * (1 - pa) / na + pb * (1 - pb) / nb);
	double z = stats_norm_quantile(0.5 + level / 2);
	r->ci_low = r->delta - z * se;
	r->ci_high = r->delta + z * se;
	r->status = STATS_OK;
}

void stats_poisson_sums(double va, double xa, double vb, double xb, double level,
			stats_result *r)
{
	result_init(r);
	r->mean_a = va;
	r->mean_b = vb;
	r->delta = vb - va;
	double var = (xa > 0 ? va * va / xa : 0) + (xb > 0 ? vb * vb / xb : 0);
	if (!(var > 0)) {
		r->status = (xa > 0 || xb > 0) ? STATS_ZERO_VARIANCE : STATS_TOO_FEW;
		return;
	}
	double se = sqrt(var);
	r->stat = r->delta / se;
	r->p = erfc(fabs(r->stat) / M_SQRT2);
	double z = stats_norm_quantile(0.5 + level / 2);
	r->ci_low = r->delta - z * se;
	r->ci_high = r->delta + z * se;
	r->status = STATS_OK;
}

/* ---- Mann-Whitney U ------------------------------------------------------------------ */

stats_ctx *stats_ctx_new(const stats_config *c)
{
	stats_ctx *x = pf_calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->cfg = *c;
	return x;
}

void stats_ctx_free(stats_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < MWU_TABLES; i++)
		free(c->tables[i].sf);
	free(c->rk);
	free(c->ranks);
	free(c->boot);
	free(c);
}

/* The exact null distribution of U for group sizes m and n: the number of
 * arrangements with U = u follows c(m, n, u) = c(m-1, n, u-n) + c(m, n-1, u)
 * (the largest of the m + n values belongs to the first group, adding n to
 * U, or to the second); built up over n with every m' <= m at once, as
 * doubles (sums of positive counts: no cancellation). */
static const double *mwu_sf(stats_ctx *c, size_t m, size_t n)
{
	for (size_t i = 0; i < MWU_TABLES; i++)
		if (c->tables[i].sf && c->tables[i].m == m && c->tables[i].n == n)
			return c->tables[i].sf;
	size_t s = m < n ? m : n, l = m < n ? n : m;  /* U's distribution is symmetric in (m, n) */
	size_t umax = s * l;
	double *cur = pf_calloc((s + 1) * (umax + 1), sizeof(double));
	double *sf = pf_calloc(umax + 2, sizeof(double));
	if (!cur || !sf) {
		free(cur);
		free(sf);
		return NULL;
	}
	/* row k: c(k, n', .) for the current n'; n' = 0: only k = 0.. with U = 0 */
#define ROW(k) (cur + (size_t)(k) * (umax + 1))
	for (size_t k = 0; k <= s; k++)
		ROW(k)[0] = 1;
	for (size_t np = 1; np <= l; np++) {
		/* c(k, np, u) = c(k-1, np, u - np) + c(k, np-1, u): k ascending,
		 * row k-1 already holds np, row k still np-1; u descending is
		 * not needed since row k is only read at the same u */
		for (size_t k = 1; k <= s; k++) {
			double *row = ROW(k), *prev = ROW(k - 1);
			size_t top = k * np;
			for (size_t u = top + 1; u-- > np;)
				row[u] += prev[u - np];
		}
	}
	double total = 0;
	for (size_t u = umax + 1; u-- > 0;) {
		total += ROW(s)[u];
		sf[u] = total;
	}
#undef ROW
	for (size_t u = 0; u <= umax; u++)
		sf[u] /= total;
	free(cur);
	mwu_table *t = &c->tables[c->next_table];
	c->next_table = (c->next_table + 1) % MWU_TABLES;
	free(t->sf);
	t->m = m;
	t->n = n;
	t->sf = sf;
	return sf;
}

static int cmp_ranked(const void *x, const void *y)
{
	const struct ranked *a = x, *b = y;
	return a->v < b->v ? -1 : a->v > b->v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int grow(void **p, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	return pf_grow(p, cap, need, esz);
}

/* median of a resample, given how often each of the sorted values was
 * drawn: the counts' running sum finds the middle order statistics */
static double counted_median(const double *sorted, const uint32_t *cnt, size_t n)
{
	size_t lo = (n - 1) / 2, hi = n / 2, run = 0;
	double vlo = NAN;
	for (size_t i = 0; i < n; i++) {
		run += cnt[i];
		if (isnan(vlo) && run > lo)
			vlo = sorted[i];
		if (run > hi)
			return (vlo + sorted[i]) / 2;
	}
	return vlo;
}

/* v[k] becomes the k-th smallest, smaller ones before it, larger after
 * (Hoare's selection, middle pivot; the resamples are no adversary) */
static void select_kth(double *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;
	while (lo < hi) {
		double pivot = v[lo + (hi - lo) / 2];
		size_t i = lo, j = hi;
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];
				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

/* numpy's default percentile (linear between the order statistics) of v,
 * which is reordered: two selections, no sort */
static double percentile(double *v, size_t n, double q)
{
	double h = (double)(n - 1) * q;
	size_t i = (size_t)floor(h);
	select_kth(v, n, i);
	if (i + 1 >= n)
		return v[i];
	double next = v[i + 1];
	for (size_t j = i + 2; j < n; j++)     /* the smallest above the i-th */
		if (v[j] < next)
			next = v[j];
	return v[i] + (h - (double)i) * (next - v[i]);
}

/* Percentile bootstrap of median(b) - median(a): each resample draws na
 * values of a and nb of b with replacement; the generator starts from the
 * configured seed for every comparison, so a row's interval does not depend
 * on which rows came before it. */
static int bootstrap_median_diff(stats_ctx *c, const double *a, size_t na, const double *b, size_t nb,
				 double *lo, double *hi)
{
	size_t nr = c->cfg.resamples ? c->cfg.resamples : 2000;
	size_t tot = na + nb;
	if (grow((void **)&c->boot, &c->cap_boot, nr + 2 * tot, sizeof(double)))
		return PROFF_ENOMEM;
	double *sa = c->boot + nr, *sb = sa + na;
	memcpy(sa, a, na * sizeof(double));
	memcpy(sb, b, nb * sizeof(double));
	qsort(sa, na, sizeof(double), cmp_double);
	qsort(sb, nb, sizeof(double), cmp_double);
	uint32_t cbuf[256], *cnt = tot <= 256 ? cbuf : pf_calloc(tot, sizeof(uint32_t));
	if (!cnt)
		return PROFF_ENOMEM;
	stats_rng rng;
	stats_rng_seed(&rng, c->cfg.seed);
	for (size_t r = 0; r < nr; r++) {
		memset(cnt, 0, tot * sizeof(uint32_t));
		for (size_t i = 0; i < na; i++)
			cnt[stats_rng_below(&rng, na)]++;
		for (size_t i = 0; i < nb; i++)
			cnt[na + stats_rng_below(&rng, nb)]++;
		c->boot[r] = counted_median(sb, cnt + na, nb) - counted_median(sa, cnt, na);
	}
	if (cnt != cbuf)
		free(cnt);
	double alpha = 1 - c->cfg.level;
	*lo = percentile(c->boot, nr, alpha / 2);
	*hi = percentile(c->boot, nr, 1 - alpha / 2);
	return 0;
}

int stats_mwu(stats_ctx *c, const double *a, size_t na, const double *b, size_t nb,
	      stats_result *r)
{
	result_init(r);
	if (na)
		r->mean_a = stats_mean(a, na);
	if (nb)
		r->mean_b = stats_mean(b, nb);
	if (!na || !nb)
		return 0;
	r->delta = stats_median(b, nb) - stats_median(a, na);
	size_t n = na + nb;
	if (grow((void **)&c->rk, &c->cap_rk, n, sizeof(*c->rk)))
		return PROFF_ENOMEM;
	for (size_t i = 0; i < na; i++)
		c->rk[i] = (struct ranked){ a[i], 0 };
	for (size_t i = 0; i < nb; i++)
		c->rk[na + i] = (struct ranked){ b[i], 1 };
	qsort(c->rk, n, sizeof(*c->rk), cmp_ranked);
	/* midranks; rank sum of b; tie term sum(t^3 - t) */
	double rb = 0, ties = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && c->rk[j].v == c->rk[i].v)
			j++;
		double mid = ((double)i + 1 + (double)j) / 2, t = (double)(j - i);
		for (size_t k = i; k < j; k++)
			if (c->rk[k].group)
				rb += mid;
		ties += t * t * t - t;
		i = j;
	}
	double ub = rb - (double)nb * ((double)nb + 1) / 2;
	double mn = (double)na * (double)nb;
	double umax = ub > mn - ub ? ub : mn - ub;
	r->stat = ub;
	size_t small = na < nb ? na : nb, large = na < nb ? nb : na;
	if (ties == 0 && small <= MWU_EXACT_MIN_N && large <= MWU_EXACT_MAX_N) {
		const double *sf = mwu_sf(c, na, nb);
		if (!sf)
			return PROFF_ENOMEM;
		double p = 2 * sf[(size_t)umax];
		r->p = p > 1 ? 1 : p;
		r->exact = true;
	} else {
		double s = sqrt(mn / 12 * (((double)n + 1) - ties / ((double)n * ((double)n - 1))));
		if (!(s > 0)) {
			r->status = STATS_ZERO_VARIANCE;
			return 0;
		}
		double z = (umax - mn / 2 - 0.5) / s;   /* continuity correction */
		double p = 2 * stats_norm_sf(z);
		r->p = p > 1 ? 1 : p;
	}
	int rc = bootstrap_median_diff(c, a, na, b, nb, &r->ci_low, &r->ci_high);
	if (rc)
		return rc;
	r->status = STATS_OK;
	return 0;
}

int stats_compare(stats_ctx *c, const double *a, size_t na, const double *b, size_t nb,
		  stats_result *r)
{
	if (c->cfg.test == STATS_MWU) {
		int rc = stats_mwu(c, a, na, b, nb, r);
		if (rc)
			r->status = STATS_TOO_FEW;
		return rc;
	}
	/* Welch's df lies between min(na, nb) - 1 and na + nb - 2 */
	if (na >= 2 && nb >= 2 && (c->tq_na != na || c->tq_nb != nb)) {
		double lo = (double)(na < nb ? na : nb) - 1, hi = (double)(na + nb) - 2;
		stats_tq_init(&c->tq, 0.5 + c->cfg.level / 2, lo, hi);
		c->tq_na = na;
		c->tq_nb = nb;
	}
	welch(a, na, b, nb, c->cfg.level, &c->tq, r);
	return 0;
}

double stats_min_p(const stats_config *c, size_t na, size_t nb)
{
	if (c->test != STATS_MWU || !na || !nb)
		return 0;
	size_t small = na < nb ? na : nb, large = na < nb ? nb : na;
	if (small > MWU_EXACT_MIN_N || large > MWU_EXACT_MAX_N)
		return 0;
	/* 2 / C(na + nb, small) */
	double comb = 1;
	for (size_t i = 1; i <= small; i++)
		comb = comb * (double)(large + i) / (double)i;
	double p = 2 / comb;
	return p > 1 ? 1 : p;
}
