/* test_stats.c — unit tests of lib/stats by identities that hold exactly:
 * closed forms of Student's t for 1 and 2 degrees of freedom, the incomplete
 * beta function's symmetry and its elementary cases, quantiles inverting
 * CDFs, the symmetry of the tests under swapping the groups, the exact
 * Mann-Whitney distribution summing to one, Benjamini-Hochberg's defining
 * properties, the exact bootstrap's law of a resample's median (closed
 * forms for 2 and 3 values, summing to one, the mean order statistic by
 * symmetry) and its interval (negated when the groups swap, moved by a
 * shift of one group; its fast search and sort give the plain ones' bits).
 * The comparison with scipy and statsmodels on random inputs is
 * tests/oracle/stats.sh.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/stats.h"
#include "../../lib/stats/stats-int.h"

static void assert_close(double a, double b, double rel)
{
	if (!(fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300))
		fail_msg("%.17g != %.17g (rel %g)", a, b, rel);
}

static void t_closed_forms(void **state)
{
	(void)state;
	/* the lower tails written without cancellation: df 1 (Cauchy)
	 * atan2(1, -t) / pi; df 2: 1 / (s (s - t)), s = sqrt(2 + t^2) */
	for (double t = -50; t <= 50; t += 0.37) {
		double s = sqrt(2 + t * t);
		assert_close(stats_t_cdf(t, 1), atan2(1, -t) / M_PI, 1e-13);
		assert_close(stats_t_sf(-t, 1), atan2(1, -t) / M_PI, 1e-13);
		assert_close(stats_t_cdf(t, 2), t < 0 ? 1 / (s * (s - t)) : 0.5 + t / (2 * s), 1e-13);
	}
	assert_true(stats_t_cdf(0, 7.5) == 0.5);
	assert_true(isnan(stats_t_cdf(1, 0)));
}

static void betainc_identities(void **state)
{
	(void)state;
	for (double x = 0.01; x < 1; x += 0.07) {
		assert_close(stats_betainc(1, 1, x), x, 1e-14);
		assert_close(stats_betainc(2.5, 1, x), pow(x, 2.5), 1e-13);
		assert_close(stats_betainc(1, 3.5, x), 1 - pow(1 - x, 3.5), 1e-13);
		for (double a = 0.3; a < 40; a *= 2.3)
			for (double b = 0.4; b < 40; b *= 2.7)
				assert_close(stats_betainc(a, b, x) + stats_betainc(b, a, 1 - x), 1, 1e-12);
	}
	assert_true(stats_betainc(2, 3, 0) == 0);
	assert_true(stats_betainc(2, 3, 1) == 1);
}

static void quantiles_invert(void **state)
{
	(void)state;
	double ps[] = { 1e-12, 1e-6, 0.001, 0.025, 0.2, 0.5, 0.7, 0.975, 0.999999 };
	double dfs[] = { 1, 1.3, 2, 2.7, 4, 9.5, 30, 250, 1e5 };
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		double z = stats_norm_quantile(ps[i]);
		assert_close(ps[i] < 0.5 ? stats_norm_cdf(z) : stats_norm_sf(z), ps[i] < 0.5 ? ps[i] : 1 - ps[i], 1e-12);
		for (size_t j = 0; j < sizeof(dfs) / sizeof(dfs[0]); j++) {
			double t = stats_t_quantile(ps[i], dfs[j]);
			double back = ps[i] < 0.5 ? stats_t_cdf(t, dfs[j]) : stats_t_sf(t, dfs[j]);
			assert_close(back, ps[i] < 0.5 ? ps[i] : 1 - ps[i], 1e-11);
		}
	}
	/* the noncentral t with ncp 0 is the central one */
	for (double t = -6; t < 6; t += 0.5)
		assert_close(stats_nct_cdf(t, 7, 0), stats_t_cdf(t, 7), 1e-10);
}

static void welch_symmetry(void **state)
{
	(void)state;
	double a[] = { 3.1, 2.9, 3.3, 3.0, 3.4 }, b[] = { 3.6, 3.5, 3.9, 3.4 };
	stats_result r1, r2;
	stats_welch(a, 5, b, 4, 0.95, &r1);
	stats_welch(b, 4, a, 5, 0.95, &r2);
	assert_int_equal(r1.status, STATS_OK);
	assert_close(r1.p, r2.p, 1e-14);
	assert_close(r1.delta, -r2.delta, 1e-14);
	assert_close(r1.ci_low, -r2.ci_high, 1e-14);
	assert_true(r1.ci_low < r1.delta && r1.delta < r1.ci_high);
	/* the CI excludes 0 exactly when p < 0.05 */
	assert_true((r1.ci_low > 0) == (r1.p < 0.05));
	/* a 99 % interval contains the 95 % one */
	stats_result r3;
	stats_welch(a, 5, b, 4, 0.99, &r3);
	assert_true(r3.ci_low < r1.ci_low && r3.ci_high > r1.ci_high);
	stats_welch(a, 1, b, 4, 0.95, &r3);
	assert_int_equal(r3.status, STATS_TOO_FEW);
	assert_true(isnan(r3.p));
	double c[] = { 2, 2, 2 };
	stats_welch(c, 3, c, 3, 0.95, &r3);
	assert_int_equal(r3.status, STATS_ZERO_VARIANCE);
	assert_true(isnan(r3.p) && r3.delta == 0);
}

static void mwu_exact(void **state)
{
	(void)state;
	stats_config cfg;
	stats_config_init(&cfg);
	cfg.test = STATS_MWU;
	stats_ctx *c = stats_ctx_new(&cfg);
	assert_non_null(c);
	/* completely separated groups: the smallest p, 2 / C(na + nb, na) */
	for (size_t na = 1; na <= 8; na++)
		for (size_t nb = 1; nb <= 12; nb++) {
			double a[8], b[12];
			for (size_t i = 0; i < na; i++)
				a[i] = (double)i;
			for (size_t i = 0; i < nb; i++)
				b[i] = (double)(100 + i);
			stats_result r;
			assert_int_equal(stats_mwu(c, a, na, b, nb, &r), 0);
			assert_true(r.exact);
			assert_close(r.stat, (double)(na * nb), 1e-15);
			assert_close(r.p, stats_min_p(&cfg, na, nb), 1e-12);
			double comb = 1;
			for (size_t i = 1; i <= na; i++)
				comb = comb * (double)(nb + i) / (double)i;
			assert_close(r.p, fmin(1, 2 / comb), 1e-12);
		}
	/* interleaved groups: U = mn / 2 gives p = 1 */
	double a[] = { 1, 4, 5, 8 }, b[] = { 2, 3, 6, 7 };
	stats_result r, r2;
	assert_int_equal(stats_mwu(c, a, 4, b, 4, &r), 0);
	assert_close(r.p, 1, 1e-15);
	/* reproducible bootstrap, whatever ran before */
	double x[] = { 1.5, 2.25, 3, 4.75, 5 }, y[] = { 2, 3.5, 4, 6.25, 7 };
	assert_int_equal(stats_mwu(c, x, 5, y, 5, &r), 0);
	assert_int_equal(stats_mwu(c, a, 4, b, 4, &r2), 0);
	assert_int_equal(stats_mwu(c, x, 5, y, 5, &r2), 0);
	assert_true(r.ci_low == r2.ci_low && r.ci_high == r2.ci_high);
	assert_true(r.ci_low <= r.delta && r.delta <= r.ci_high);
	/* ties everywhere: nothing to rank */
	double t1[] = { 3, 3, 3 }, t2[] = { 3, 3 };
	assert_int_equal(stats_mwu(c, t1, 3, t2, 2, &r), 0);
	assert_int_equal(r.status, STATS_ZERO_VARIANCE);
	stats_ctx_free(c);
}

/* the law of a resample's median over the indices */
static void median_law_closed_forms(void **state)
{
	(void)state;
	median_law l;
	/* n = 2: both draws the first (1/4), one of each (1/2), both the second */
	assert_int_equal(median_law_init(&l, 2), 0);
	assert_int_equal(l.npts, 3);
	for (size_t i = 0; i < l.npts; i++)
		assert_close(l.w[i], l.lo[i] == l.hi[i] ? 0.25 : 0.5, 1e-15);
	median_law_free(&l);
	/* n = 3: the median is x_1 when two or three draws are x_1: 7/27 */
	assert_int_equal(median_law_init(&l, 3), 0);
	assert_int_equal(l.npts, 3);
	assert_close(l.w[0], 7.0 / 27, 1e-15);
	assert_close(l.w[1], 13.0 / 27, 1e-15);
	assert_close(l.w[2], 7.0 / 27, 1e-15);
	median_law_free(&l);
	/* every size: weights sum to one, and the law is symmetric (the mean
	 * of lo + hi is n - 1) */
	for (size_t n = 1; n <= 60; n++) {
		assert_int_equal(median_law_init(&l, n), 0);
		double sum = 0, mean = 0;
		for (size_t i = 0; i < l.npts; i++) {
			assert_true(l.w[i] >= 0 && l.lo[i] <= l.hi[i] && l.hi[i] < n);
			sum += l.w[i];
			mean += l.w[i] * (double)(l.lo[i] + l.hi[i]);
		}
		assert_close(sum, 1, 1e-13);
		assert_close(mean, (double)(n - 1), 1e-12);
		if (n <= 12)
			assert_int_equal(l.npts, n % 2 ? n : n * (n + 1) / 2);
		median_law_free(&l);
	}
}

/* the exact bootstrap interval: swapping the groups negates it, shifting
 * b by c moves it by c (values chosen so the shift is exact) */
static void boot_interval_symmetry(void **state)
{
	(void)state;
	stats_config cfg;
	stats_config_init(&cfg);
	stats_ctx *c = stats_ctx_new(&cfg);
	assert_non_null(c);
	stats_rng rng;
	stats_rng_seed(&rng, 11);
	for (int it = 0; it < 300; it++) {
		size_t na = 1 + stats_rng_below(&rng, 12), nb = 1 + stats_rng_below(&rng, 12);
		double a[12], b[12], b2[12];
		for (size_t i = 0; i < na; i++)
			a[i] = (double)stats_rng_below(&rng, 64) / 4;
		for (size_t i = 0; i < nb; i++) {
			b[i] = (double)stats_rng_below(&rng, 64) / 4;
			b2[i] = b[i] + 8;
		}
		stats_result r1, r2, r3;
		assert_int_equal(stats_mwu(c, a, na, b, nb, &r1), 0);
		assert_int_equal(stats_mwu(c, b, nb, a, na, &r2), 0);
		assert_int_equal(stats_mwu(c, a, na, b2, nb, &r3), 0);
		if (r1.status != STATS_OK)
			continue;
		assert_true(r1.ci_low <= r1.ci_high);
		assert_true(r1.ci_low == -r2.ci_high && r1.ci_high == -r2.ci_low);
		assert_true(r3.ci_low == r1.ci_low + 8 && r3.ci_high == r1.ci_high + 8);
	}
	stats_ctx_free(c);
}

/* the fast search and sort of the exact bootstrap (branchless searches
 * within the bracket, the laws' points sorted by buckets) against the
 * plain ones: the same interval bit for bit, on values with many ties,
 * zeros, one value repeated, a long tail, negatives, odd and even group
 * sizes, laws with points left out (18 runs and more) */
static void boot_fast_is_plain(void **state)
{
	(void)state;
	median_law laws[41];
	for (size_t n = 1; n <= 40; n++)
		assert_int_equal(median_law_init(&laws[n], n), 0);
	boot_scratch fast = { 0 }, plain = { .plain = true };
	stats_rng rng;
	stats_rng_seed(&rng, 28);
	double a[40], b[40];
	for (int it = 0; it < 3000; it++) {
		size_t n[2] = { 1 + stats_rng_below(&rng, it < 2500 ? 16 : 40),
				1 + stats_rng_below(&rng, it < 2500 ? 16 : 40) };
		double *v[2] = { a, b };
		unsigned kind = stats_rng_below(&rng, 6);
		for (int g = 0; g < 2; g++) {
			for (size_t i = 0; i < n[g]; i++) {
				double u = (double)stats_rng_below(&rng, 1000000) / 1e6;
				switch (kind) {
				case 0: v[g][i] = 1 + 0.4 * u + 0.01 * g; break;
				case 1: v[g][i] = floor(4 * u); break;
				case 2: v[g][i] = u < 0.5 ? 0 : u; break;
				case 3: v[g][i] = u < 0.9 ? 5 : 5 + u; break;
				case 4: v[g][i] = exp(20 * u - 10); break;
				default: v[g][i] = (u - 0.5) * 1e6; break;
				}
			}
			for (size_t i = 1; i < n[g]; i++)   /* sorted, as the interval wants */
				for (size_t j = i; j > 0 && v[g][j - 1] > v[g][j]; j--) {
					double t = v[g][j];
					v[g][j] = v[g][j - 1];
					v[g][j - 1] = t;
				}
		}
		double alpha = it % 3 ? 0.025 : 0.005, lo1, hi1, lo2, hi2;
		assert_int_equal(boot_median_diff_ci(&fast, &laws[n[0]], a, &laws[n[1]], b, alpha, &lo1, &hi1), 0);
		assert_int_equal(boot_median_diff_ci(&plain, &laws[n[0]], a, &laws[n[1]], b, alpha, &lo2, &hi2), 0);
		if (memcmp(&lo1, &lo2, sizeof(double)) || memcmp(&hi1, &hi2, sizeof(double)))
			fail_msg("sizes %zu, %zu, kind %u: fast [%a, %a], plain [%a, %a]", n[0], n[1], kind, lo1, hi1, lo2, hi2);
	}
	boot_scratch_free(&fast);
	boot_scratch_free(&plain);
	for (size_t n = 1; n <= 40; n++)
		median_law_free(&laws[n]);
}

static void bh_properties(void **state)
{
	(void)state;
	stats_rng rng;
	stats_rng_seed(&rng, 7);
	double p[300], q[300];
	for (int round = 0; round < 20; round++) {
		size_t n = 1 + stats_rng_below(&rng, 300);
		for (size_t i = 0; i < n; i++) {
			p[i] = (double)stats_rng_below(&rng, 1000000) / 1e6;
			if (stats_rng_below(&rng, 10) == 0)
				p[i] = NAN;
		}
		long m = stats_bh(p, n, q);
		long valid = 0;
		for (size_t i = 0; i < n; i++) {
			if (isnan(p[i])) {
				assert_true(isnan(q[i]));
				continue;
			}
			valid++;
			assert_true(q[i] >= p[i] * (1 - 1e-15) && q[i] <= 1);   /* p m / m may round */
			for (size_t j = 0; j < n; j++)   /* monotone in p */
				if (!isnan(p[j]) && p[j] <= p[i])
					assert_true(q[j] <= q[i]);
		}
		assert_int_equal(m, valid);
	}
	double one[] = { 0.03 }, q1[1];
	assert_int_equal(stats_bh(one, 1, q1), 1);
	assert_true(q1[0] == 0.03);
}

static void power_monotone(void **state)
{
	(void)state;
	double last = 0;
	for (double n = 2; n < 200; n *= 1.5) {
		double pw = stats_t_power(0.5, n, 0.05);
		assert_true(pw > last && pw <= 1);
		last = pw;
	}
	long n = stats_runs_for_power(1, 1, 1, 0.05, 0.8, 100000);
	assert_true(stats_t_power(1, (double)n, 0.05) >= 0.8);
	assert_true(stats_t_power(1, (double)(n - 1), 0.05) < 0.8);
	assert_int_equal(stats_runs_for_power(0, 1, 1, 0.05, 0.8, 100), 0);
	assert_int_equal(stats_runs_for_power(1e-6, 1, 1, 0.05, 0.8, 100), 101);
}

static void rng_bounds(void **state)
{
	(void)state;
	stats_rng a, b;
	stats_rng_seed(&a, 42);
	stats_rng_seed(&b, 42);
	unsigned hist[7] = { 0 };
	for (int i = 0; i < 70000; i++) {
		uint64_t x = stats_rng_below(&a, 7);
		assert_true(x < 7);
		assert_true(x == stats_rng_below(&b, 7));
		hist[x]++;
	}
	for (int i = 0; i < 7; i++)
		assert_true(hist[i] > 9400 && hist[i] < 10600);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_closed_forms),
		cmocka_unit_test(betainc_identities),
		cmocka_unit_test(quantiles_invert),
		cmocka_unit_test(welch_symmetry),
		cmocka_unit_test(mwu_exact),
		cmocka_unit_test(median_law_closed_forms),
		cmocka_unit_test(boot_interval_symmetry),
		cmocka_unit_test(boot_fast_is_plain),
		cmocka_unit_test(bh_properties),
		cmocka_unit_test(power_monotone),
		cmocka_unit_test(rng_bounds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
