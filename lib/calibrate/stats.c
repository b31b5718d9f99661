/* stats.c — summary statistics of repeated calibration runs: average, sample
 * standard deviation (n - 1, as LTTng's calibrate table and perf stat -r),
 * min, median and max. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proff/calibrate.h"
#include "proff/util.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int cal_summarize(const double *v, size_t n, cal_summary *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return 0;
	double *s = pf_calloc(n, sizeof(double));
	if (!s)
		return PROFF_ENOMEM;
	memcpy(s, v, n * sizeof(double));
	qsort(s, n, sizeof(double), cmp_double);
	double sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	double avg = sum / (double)n, ss = 0;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - avg) * (s[i] - avg);
	out->n = n;
	out->avg = avg;
	out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return 0;
}
