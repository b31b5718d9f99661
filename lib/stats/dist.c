/* dist.c — the distributions behind proff's tests: the regularized incomplete
 * beta function (continued fraction, DLMF 8.17.22), the normal and Student's
 * t distributions with their quantiles, and the noncentral t (the series of
 * Lenth, AS 243) for power. Accuracy goals and checks: docs/statistics.md.
 *
 * lgamma_r, not lgamma: lgamma writes the global signgam, and tests may run
 * on several threads.
 */
#include <float.h>
#include <math.h>

#include "proff/stats.h"

#define CF_EPS 1e-16
#define CF_TINY 1e-300
#define CF_MAX_ITER 400

static double lgam(double x)
{
	int sign;
	return lgamma_r(x, &sign);
}

static double lbeta(double a, double b)
{
	return lgam(a) + lgam(b) - lgam(a + b);
}

/* The continued fraction of I_x(a, b) (modified Lentz), valid and quickly
 * convergent for x < (a + 1) / (a + b + 2). */
static double betacf(double a, double b, double x)
{
	double qab = a + b, qap = a + 1, qam = a - 1;
	double c = 1, d = 1 - qab * x / qap;
	if (fabs(d) < CF_TINY)
		d = CF_TINY;
	d = 1 / d;
	double h = d;
	for (int m = 1; m <= CF_MAX_ITER; m++) {
		double m2 = 2.0 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2));
		d = 1 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < CF_TINY)
			d = CF_TINY;
		c = 1 + aa / c;
		if (fabs(c) < CF_TINY)
			c = CF_TINY;
		d = 1 / d;
		double del = d * c;
		h *= del;
		if (fabs(del - 1) < CF_EPS)
			break;
	}
	return h;
}

/* I_x(a, b) with y = 1 - x given separately, so that neither tail loses
 * digits to the subtraction (the t distribution passes both exactly). */
static double betainc_xy(double a, double b, double x, double y)
{
	if (!(x > 0))
		return 0;
	if (!(y > 0))
		return 1;
	double lfront = a * log(x) + b * log(y) - lbeta(a, b);
	if (x < (a + 1) / (a + b + 2))
		return exp(lfront) * betacf(a, b, x) / a;
	return 1 - exp(lfront) * betacf(b, a, y) / b;
}

double stats_betainc(double a, double b, double x)
{
	if (isnan(x) || isnan(a) || isnan(b) || a <= 0 || b <= 0)
		return NAN;
	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	return betainc_xy(a, b, x, 1 - x);
}

/* ---- normal -------------------------------------------------------------------- */

double stats_norm_cdf(double z)
{
	return 0.5 * erfc(-z / M_SQRT2);
}

double stats_norm_sf(double z)
{
	return 0.5 * erfc(z / M_SQRT2);
}

static double norm_pdf(double z)
{
	return exp(-0.5 * z * z) / sqrt(2 * M_PI);
}

/* Acklam's rational approximation (relative error 1.15e-9), then one step
 * of Halley's method on the exact CDF (erfc), which brings it to about
 * double precision. */
double stats_norm_quantile(double p)
{
	static const double a[] = { -3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
				    1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00 };
	static const double b[] = { -5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
				    6.680131188771972e+01, -1.328068155288572e+01 };
	static const double c[] = { -7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
				    -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00 };
	static const double d[] = { 7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
				    3.754408661907416e+00 };
	if (isnan(p) || p < 0 || p > 1)
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	double q, x;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p <= 1 - 0.02425) {
		q = p - 0.5;
		double r = q * q;
		x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
		    (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1);
	} else {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	}
	/* Halley: the error in the tail that is small (so no digits are lost) */
	double e = p < 0.5 ? stats_norm_cdf(x) - p : (1 - p) - stats_norm_sf(x);
	double u = e / norm_pdf(x);
	x = x - u / (1 + x * u / 2);
	return x;
}

/* ---- Student's t ----------------------------------------------------------------- */

/* P(T > t) for t >= 0: half of I_{df/(df+t^2)}(df/2, 1/2) */
static double t_upper(double t, double df)
{
	double t2 = t * t;
	double x = df / (df + t2), y = t2 / (df + t2);
	return 0.5 * betainc_xy(df / 2, 0.5, x, y);
}

double stats_t_sf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 0 : 1;
	return t >= 0 ? t_upper(t, df) : 1 - t_upper(-t, df);
}

double stats_t_cdf(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	return t >= 0 ? 1 - t_upper(t, df) : t_upper(-t, df);
}

double stats_t_sf2(double t, double df)
{
	if (isnan(t) || !(df > 0))
		return NAN;
	if (isinf(t))
		return 0;
	double v = 2 * t_upper(fabs(t), df);
	return v > 1 ? 1 : v;
}

static double t_logpdf(double t, double df)
{
	return lgam((df + 1) / 2) - lgam(df / 2) - 0.5 * log(df * M_PI) -
	       (df + 1) / 2 * log1p(t * t / df);
}

/* Start of the quantile's Newton iteration: the Cornish-Fisher expansion
 * of t in z (Abramowitz & Stegun 26.7.5), exact forms for df 1 and 2. */
static double t_quantile_start(double q, double df)
{
	/* q: the upper tail, q <= 0.5; returns t >= 0 */
	if (df == 1)
		return tan(M_PI * (0.5 - q));
	if (df == 2) {
		double p = 1 - q;
		return (2 * p - 1) / sqrt(2 * p * (1 - p));
	}
	double z = -stats_norm_quantile(q), z2 = z * z;
	double g1 = (z2 + 1) * z / 4;
	double g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
	double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
	double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;
	double t = z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
	return t > 0 ? t : z;
}

/* Upper-tail quantile: t >= 0 with P(T > t) = q, 0 < q <= 0.5. Newton's
 * method on log P(T > t) (well conditioned in the far tail), kept inside a
 * bracket that bisection falls back on. */
static double t_upper_quantile(double q, double df)
{
	double lo = 0, hi = INFINITY;
	double t = t_quantile_start(q, df);
	if (!isfinite(t) || t < 0)
		t = 1;
	double lq = log(q);
	for (int it = 0; it < 100; it++) {
		double s = t_upper(t, df);
		if (s > q)
			lo = t;
		else
			hi = t;
		if (s == q)
			return t;
		double ls = log(s);
		double step = (ls - lq) / exp(t_logpdf(t, df) - ls);    /* g / g', g' = -pdf / sf */
		double nt = t + step;
		if (!(nt > lo && nt < hi))
			nt = isinf(hi) ? (lo > 0 ? lo * 2 : 1) : (lo + hi) / 2;
		if (fabs(nt - t) <= 4 * DBL_EPSILON * fabs(nt))
			return nt;
		t = nt;
	}
	return t;
}

double stats_t_quantile(double p, double df)
{
	if (isnan(p) || p < 0 || p > 1 || !(df > 0))
		return NAN;
	if (p == 0)
		return -INFINITY;
	if (p == 1)
		return INFINITY;
	if (p == 0.5)
		return 0;
	return p > 0.5 ? t_upper_quantile(1 - p, df) : -t_upper_quantile(p, df);
}

/* ---- one quantile over a range of df ---------------------------------------------- */

/* x in [-1, 1] <-> df in [lo, hi] through u = 1/df, linear in u */
static double tq_df(const stats_tq *q, double x)
{
	double ulo = 1 / q->df_hi, uhi = 1 / q->df_lo;
	return 1 / (ulo + (x + 1) / 2 * (uhi - ulo));
}

static double tq_cheb(const stats_tq *q, double df)
{
	double ulo = 1 / q->df_hi, uhi = 1 / q->df_lo;
	double x = uhi > ulo ? 2 * (1 / df - ulo) / (uhi - ulo) - 1 : 0;
	/* Clenshaw */
	double b1 = 0, b2 = 0;
	for (int j = q->nc - 1; j >= 1; j--) {
		double b0 = 2 * x * b1 - b2 + q->c[j];
		b2 = b1;
		b1 = b0;
	}
	return exp(x * b1 - b2 + q->c[0] / 2);
}

void stats_tq_init(stats_tq *q, double p, double df_lo, double df_hi)
{
	const int n = STATS_TQ_NODES;
	double f[STATS_TQ_NODES];
	q->p = p;
	q->df_lo = df_lo;
	q->df_hi = df_hi > df_lo ? df_hi : df_lo;
	q->ok = false;
	if (!(df_lo > 0) || !(p > 0.5 && p < 1) || !isfinite(q->df_hi))
		return;
	for (int k = 0; k < n; k++)
		f[k] = log(stats_t_quantile(p, tq_df(q, cos(M_PI * (k + 0.5) / n))));
	for (int j = 0; j < n; j++) {
		double s = 0;
		for (int k = 0; k < n; k++)
			s += f[k] * cos(M_PI * j * (k + 0.5) / n);
		q->c[j] = 2.0 / n * s;
	}
	q->nc = n;
	while (q->nc > 2 && fabs(q->c[q->nc - 1]) < 1e-14 * fabs(q->c[0]))
		q->nc--;
	/* the check: between the nodes, and at both ends */
	q->ok = true;
	for (int k = 0; k <= n && q->ok; k++) {
		double x = k == 0 ? -1 : k == n ? 1 : cos(M_PI * k / n);
		double df = tq_df(q, x), exact = stats_t_quantile(p, df);
		q->ok = fabs(tq_cheb(q, df) - exact) <= 1e-11 * exact;
	}
}

double stats_tq_eval(const stats_tq *q, double df)
{
	if (q->ok && df >= q->df_lo && df <= q->df_hi)
		return tq_cheb(q, df);
	return stats_t_quantile(q->p, df);
}

/* ---- noncentral t (Lenth 1989, algorithm AS 243) ----------------------------------- */

double stats_nct_cdf(double t, double df, double ncp)
{
	if (isnan(t) || isnan(ncp) || !(df > 0))
		return NAN;
	if (isinf(t))
		return t > 0 ? 1 : 0;
	bool neg = t < 0;
	double tt = neg ? -t : t, del = neg ? -ncp : ncp;
	double tnc = 0;
	double x = tt * tt / (tt * tt + df);
	if (x > 0) {
		double lambda = del * del;
		double p = 0.5 * exp(-0.5 * lambda);
		double q = sqrt(2 / M_PI) * p * del;
		double s = 0.5 - p;
		double a = 0.5, b = 0.5 * df;
		double y = df / (tt * tt + df);       /* 1 - x without the subtraction */
		double rxb = pow(y, b);
		double albeta = 0.5 * log(M_PI) + lgam(b) - lgam(0.5 + b);
		double xodd = betainc_xy(a, b, x, y);
		double godd = 2 * rxb * exp(a * log(x) - albeta);
		double xeven = 1 - rxb;
		double geven = b * x * rxb;
		tnc = p * xodd + q * xeven;
		for (double en = 1; en <= 2000; en++) {
			a += 1;
			xodd -= godd;
			xeven -= geven;
			godd *= x * (a + b - 1) / a;
			geven *= x * (a + b - 0.5) / (a + 0.5);
			p *= lambda / (2 * en);
			q *= lambda / (2 * en + 1);
			s -= p;
			tnc += p * xodd + q * xeven;
			double errbd = 2 * s * (xodd - godd);
			if (fabs(errbd) < 1e-14 && en > 2)
				break;
		}
	}
	tnc += stats_norm_cdf(-del);
	if (neg)
		tnc = 1 - tnc;
	return tnc < 0 ? 0 : tnc > 1 ? 1 : tnc;
}
