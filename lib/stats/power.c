/* power.c — how many runs would show a delta: the power of the two-sided
 * two-sample t-test from the noncentral t distribution (as statsmodels'
 * TTestIndPower computes it), and the smallest number of runs per side that
 * reaches a wanted power for an observed delta and spread. */
#include <math.h>

#include "proff/stats.h"

double stats_t_power(double d, double n, double alpha)
{
	if (!(n >= 2) || !(alpha > 0 && alpha < 1) || isnan(d))
		return NAN;
	double df = 2 * n - 2;
	double ncp = fabs(d) * sqrt(n / 2);
	double crit = stats_t_quantile(1 - alpha / 2, df);
	double pw = (1 - stats_nct_cdf(crit, df, ncp)) + stats_nct_cdf(-crit, df, ncp);
	return pw > 1 ? 1 : pw;
}

long stats_runs_for_power(double delta, double sd_a, double sd_b, double alpha, double power,
			  long max)
{
	double sd = sqrt((sd_a * sd_a + sd_b * sd_b) / 2);
	if (!(sd > 0) || !isfinite(sd) || !(fabs(delta) > 0) || !isfinite(delta) || max < 2)
		return 0;
	double d = fabs(delta) / sd;
	if (stats_t_power(d, 2, alpha) >= power)
		return 2;
	/* the power grows with n: double until reached, then bisect */
	long lo = 2, hi = 4;
	while (stats_t_power(d, (double)hi, alpha) < power) {
		lo = hi;
		if (hi >= max)
			return max + 1;
		hi = hi * 2 > max ? max : hi * 2;
	}
	while (hi - lo > 1) {
		long mid = lo + (hi - lo) / 2;
		if (stats_t_power(d, (double)mid, alpha) >= power)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}
