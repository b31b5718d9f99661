/* tests.c — the two-group tests: Welch's t, Mann-Whitney U (exact
 * distribution for small groups without ties, normal approximation with tie
 * and continuity corrections otherwise, as scipy's mannwhitneyu chooses) with
 * the exact bootstrap CI of the difference of medians (bootstrap.c), and the
 * sampling-noise tests of
 * one run per side. Each returns what the data can support: a status instead
 * of a p-value where the runs are too few or do not vary at all.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proff/error.h"
#include "proff/stats.h"
#include "proff/util.h"
#include "stats-int.h"

/* exact U distributions are computed while the larger group is at most this
 * big (the table costs min^2 * max^2 / 4 additions); beyond, the normal
 * approximation is used, which is then very good */
#define MWU_EXACT_MAX_N 1000
#define MWU_EXACT_MIN_N 8          /* exact when the smaller group has at most this many runs */
#define MWU_TABLES 4               /* cached (na, nb) tables, median laws */
/* the exact bootstrap's laws hold n (odd) or n (n + 1) / 2 (even) points,
 * fewer once the negligible ones are left out; beyond this group size the
 * interval is not computed (NaN) */
#define BOOT_MAX_N 2000

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
	median_law laws[MWU_TABLES];
	size_t next_law;
	/* scratch: the two groups' values sorted; the bootstrap's */
	double *sorted;
	size_t cap_sorted;
	boot_scratch boot;
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
	for (size_t i = 0; i < MWU_TABLES; i++) {
		free(c->tables[i].sf);
		median_law_free(&c->laws[i]);
	}
	free(c->sorted);
	boot_scratch_free(&c->boot);
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

static int grow(void **p, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	return pf_grow(p, cap, need, esz);
}

/* the law of a resample's median for n values, cached (not evicting keep) */
static const median_law *median_law_of(stats_ctx *c, size_t n, const median_law *keep)
{
	for (size_t i = 0; i < MWU_TABLES; i++)
		if (c->laws[i].w && c->laws[i].n == n)
			return &c->laws[i];
	if (&c->laws[c->next_law] == keep)
		c->next_law = (c->next_law + 1) % MWU_TABLES;
	median_law *l = &c->laws[c->next_law];
	c->next_law = (c->next_law + 1) % MWU_TABLES;
	median_law_free(l);
	return median_law_init(l, n) ? NULL : l;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* v ascending: insertion for the few runs of a group, else qsort */
static void sort_values(double *v, size_t n)
{
	if (n > 32) {
		qsort(v, n, sizeof(double), cmp_double);
		return;
	}
	for (size_t i = 1; i < n; i++) {
		double x = v[i];
		size_t j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
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
	size_t n = na + nb;
	if (grow((void **)&c->sorted, &c->cap_sorted, n, sizeof(double)))
		return PROFF_ENOMEM;
	double *sa = c->sorted, *sb = sa + na;
	memcpy(sa, a, na * sizeof(double));
	memcpy(sb, b, nb * sizeof(double));
	sort_values(sa, na);
	sort_values(sb, nb);
	r->delta = (sb[(nb - 1) / 2] + sb[nb / 2]) / 2 - (sa[(na - 1) / 2] + sa[na / 2]) / 2;
	/* the pooled order by merging: each run of equal values gets its
	 * mid-rank; rank sum of b; tie term sum(t^3 - t) */
	double rb = 0, ties = 0;
	for (size_t i = 0, j = 0; i < na || j < nb;) {
		double v = j == nb || (i < na && sa[i] < sb[j]) ? sa[i] : sb[j];
		size_t ta = 0, tb = 0;
		while (i + ta < na && sa[i + ta] == v)
			ta++;
		while (j + tb < nb && sb[j + tb] == v)
			tb++;
		double t = (double)(ta + tb), first = (double)(i + j) + 1;
		rb += (double)tb * (first + (t - 1) / 2);
		ties += t * t * t - t;
		i += ta;
		j += tb;
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
	r->ci_low = r->ci_high = NAN;
	if (na <= BOOT_MAX_N && nb <= BOOT_MAX_N) {
		const median_law *la = median_law_of(c, na, NULL);
		const median_law *lb = la && nb != na ? median_law_of(c, nb, la) : la;
		if (!la || !lb || boot_median_diff_ci(&c->boot, la, sa, lb, sb, (1 - c->cfg.level) / 2,
						       &r->ci_low, &r->ci_high))
			return PROFF_ENOMEM;
	}
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
