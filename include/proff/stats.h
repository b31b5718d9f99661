/* proff/stats.h — "is the change real?": the statistics of repeated runs.
 *
 * Pure functions on arrays of per-run values, shared by every part of proff
 * that compares two groups of runs (diff rows, flame-graph frames, the fleet
 * store's series): the tests (Welch's t, Mann-Whitney U with the exact
 * bootstrap CI of the difference of medians, the sampling-noise tests of one
 * run per side), Benjamini-Hochberg q-values, power (runs needed), and the
 * distributions they rest on. No globals: a seeded generator (for tests and
 * benches) lives in a struct, a comparison's scratch and cached tables in a
 * stats_ctx (one per thread). Formulas and choices: docs/statistics.md.
 */
#ifndef PROFF_STATS_H
#define PROFF_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- distributions --------------------------------------------------------- */

/* Regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1. */
double stats_betainc(double a, double b, double x);
/* Standard normal: CDF, upper tail P(Z > z), quantile (0 < p < 1). */
double stats_norm_cdf(double z);
double stats_norm_sf(double z);
double stats_norm_quantile(double p);
/* Student's t with df > 0 degrees of freedom (df need not be an integer):
 * CDF, upper tail P(T > t), two-sided tail P(|T| >= |t|), quantile. */
double stats_t_cdf(double t, double df);
double stats_t_sf(double t, double df);
double stats_t_sf2(double t, double df);
double stats_t_quantile(double p, double df);
/* The quantile p of Student's t over a range of degrees of freedom, for many
 * tests at one level (Welch's CI, df different for every row): a Chebyshev
 * interpolation of log t in 1/df, built from STATS_TQ_NODES exact quantiles
 * and checked against the exact ones between its nodes; where that check
 * fails (relative error above 1e-11) stats_tq_eval computes exactly. */
#define STATS_TQ_NODES 40
typedef struct stats_tq {
	double p, df_lo, df_hi;
	double c[STATS_TQ_NODES];
	int nc;                 /* coefficients used: the tail below 1e-14 of the first is dropped */
	bool ok;                /* the interpolation passed its check */
} stats_tq;
void stats_tq_init(stats_tq *q, double p, double df_lo, double df_hi);
double stats_tq_eval(const stats_tq *q, double df);

/* Noncentral t: P(T' <= t) with df degrees of freedom and noncentrality ncp
 * (accurate for |ncp| up to about 37; beyond, the mass is far from any
 * critical value a power computation asks about). */
double stats_nct_cdf(double t, double df, double ncp);

/* ---- descriptive ----------------------------------------------------------- */

double stats_mean(const double *v, size_t n);
/* sample variance (n - 1 denominator); 0 for n < 2 */
double stats_var(const double *v, size_t n);
/* median of v (not modified); NaN for n == 0 */
double stats_median(const double *v, size_t n);

/* ---- a seeded generator (xoshiro256**, seeded by splitmix64) ------------------ */

typedef struct stats_rng {
	uint64_t s[4];
} stats_rng;

void stats_rng_seed(stats_rng *r, uint64_t seed);
uint64_t stats_rng_next(stats_rng *r);
/* uniform in [0, n), n > 0 */
uint64_t stats_rng_below(stats_rng *r, uint64_t n);

/* ---- tests ----------------------------------------------------------------- */

enum stats_test {
	STATS_WELCH,        /* Welch's two-sample t-test, two-sided */
	STATS_MWU,          /* Mann-Whitney U, two-sided; exact bootstrap CI of the median difference */
	STATS__NR_TESTS
};

/* what the data could support */
enum stats_status {
	STATS_OK = 0,           /* p and CI are valid */
	STATS_TOO_FEW,          /* too few runs (or samples) for the test */
	STATS_ZERO_VARIANCE,    /* no variation at all: nothing to judge a delta against */
};

typedef struct stats_result {
	int status;             /* enum stats_status */
	double mean_a, mean_b;  /* the groups' means */
	double delta;           /* the test's estimate of B - A: difference of means
	                         * (Welch, sampling noise), of medians (MWU) */
	double ci_low, ci_high; /* confidence interval of delta (NaN unless STATS_OK) */
	double p;               /* two-sided p-value (NaN unless STATS_OK) */
	double stat;            /* t (Welch), U of B (MWU: pairs with b > a, ties 1/2), z */
	double df;              /* Welch's degrees of freedom (NaN otherwise) */
	bool exact;             /* MWU: p from the exact distribution of U */
} stats_result;

/* Welch's t-test of b against a; CI at `level` (0.95). */
void stats_welch(const double *a, size_t na, const double *b, size_t nb, double level,
		 stats_result *r);

/* Sampling noise of one run per side, on sample counts.
 * Shares: xa of na samples against xb of nb, two-proportion z-test (pooled),
 * Wald CI of pb - pa (as proportions). The counts may be effective ones
 * (not integers): a share of a run's period times its number of samples. */
void stats_two_proportions(double xa, double na, double xb, double nb, double level,
			   stats_result *r);
/* Absolute sums: va made of xa samples against vb of xb; each sum's
 * variance estimated as v^2 / x (a compound Poisson sum whose samples weigh
 * v / x on average; with equal sample weights the Poisson test of the
 * counts), z-test and Wald CI of vb - va. */
void stats_poisson_sums(double va, double xa, double vb, double xb, double level,
			stats_result *r);

/* ---- the generic comparison: per-run values of group A and group B -> result */

typedef struct stats_config {
	int test;               /* enum stats_test */
	double level;           /* confidence level of the intervals (0.95) */
} stats_config;

void stats_config_init(stats_config *c);

/* Scratch space and cached exact distributions for stats_compare; one per
 * thread. */
typedef struct stats_ctx stats_ctx;
stats_ctx *stats_ctx_new(const stats_config *c);    /* NULL: out of memory */
void stats_ctx_free(stats_ctx *c);
/* Compare b against a with the configured test. Returns 0, or PROFF_ENOMEM
 * (r->status is then STATS_TOO_FEW). */
int stats_compare(stats_ctx *c, const double *a, size_t na, const double *b, size_t nb,
		  stats_result *r);
/* Mann-Whitney U on its own; its CI: the exact bootstrap of the difference
 * of medians (NaN for groups over 2000 runs). */
int stats_mwu(stats_ctx *c, const double *a, size_t na, const double *b, size_t nb,
	      stats_result *r);
/* The smallest two-sided p-value the configured test can give with na and
 * nb runs (MWU without ties: 2 / C(na + nb, na)); 0 where none exists. */
double stats_min_p(const stats_config *c, size_t na, size_t nb);

/* ---- multiple comparisons ------------------------------------------------------ */

/* Benjamini-Hochberg q-values of p[0..n): q of the i-th smallest of the m
 * valid p-values is min over j >= i of p_(j) m / j, at most 1. NaN p-values
 * (tests not made) are not counted and get NaN. Returns m, or PROFF_ENOMEM. */
long stats_bh(const double *p, size_t n, double *q);

/* ---- power --------------------------------------------------------------------- */

/* Power of the two-sided two-sample t-test at level alpha with n runs per
 * side and effect size d (difference / common standard deviation): the
 * noncentral t with 2n - 2 degrees of freedom. */
double stats_t_power(double d, double n, double alpha);
/* Runs per side for the two-sided t-test at level alpha to detect `delta`
 * with probability `power`, the common standard deviation taken as
 * sqrt((sd_a^2 + sd_b^2) / 2): the smallest n >= 2 whose power reaches it,
 * 0 when delta or the deviation is 0 or not finite, max + 1 when even `max`
 * runs do not reach it. */
long stats_runs_for_power(double delta, double sd_a, double sd_b, double alpha, double power,
			  long max);

#endif
