/* describe.c — descriptive statistics of per-run values (mean, sample
 * variance, median) and the seeded generator the bootstrap draws from
 * (xoshiro256**, its state seeded by splitmix64: the same seed gives the same
 * resamples on every machine). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proff/stats.h"

double stats_mean(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double s = 0;
	for (size_t i = 0; i < n; i++)
		s += v[i];
	return s / (double)n;
}

/* two passes: the sum of squared deviations from the mean, not the
 * difference of two large sums */
double stats_var(const double *v, size_t n)
{
	if (n < 2)
		return 0;
	double m = stats_mean(v, n), ss = 0, c = 0;
	for (size_t i = 0; i < n; i++) {
		double d = v[i] - m;
		ss += d * d;
		c += d;
	}
	return (ss - c * c / (double)n) / (double)(n - 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

double stats_median(const double *v, size_t n)
{
	if (!n)
		return NAN;
	double buf[64], *s = n <= 64 ? buf : malloc(n * sizeof(double));
	if (!s)
		return NAN;
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	if (s != buf)
		free(s);
	return m;
}

/* ---- generator ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void stats_rng_seed(stats_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t stats_rng_next(stats_rng *r)
{
	uint64_t *s = r->s;
	uint64_t out = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return out;
}

/* Lemire's multiply-shift; the bias (n / 2^64) is far below anything a
 * bootstrap of a few thousand resamples could show */
uint64_t stats_rng_below(stats_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)stats_rng_next(r) * n) >> 64);
}
