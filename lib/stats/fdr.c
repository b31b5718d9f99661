/* fdr.c — Benjamini-Hochberg q-values: the false discovery rate control over
 * every row a diff tests (valid for independent tests and for the positively
 * dependent ones that the shares of one profile are). */
#include <math.h>
#include <stdlib.h>

#include "proff/error.h"
#include "proff/stats.h"
#include "proff/util.h"

typedef struct pidx {
	double p;
	size_t i;
} pidx;

static int cmp_pidx(const void *x, const void *y)
{
	const pidx *a = x, *b = y;
	if (a->p != b->p)
		return a->p < b->p ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

long stats_bh(const double *p, size_t n, double *q)
{
	pidx *s = pf_calloc(n ? n : 1, sizeof(*s));
	if (!s)
		return PROFF_ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		q[i] = NAN;
		if (!isnan(p[i]))
			s[m++] = (pidx){ p[i], i };
	}
	qsort(s, m, sizeof(*s), cmp_pidx);
	double run = 1;
	for (size_t k = m; k-- > 0;) {
		double v = s[k].p * (double)m / (double)(k + 1);
		if (v < run)
			run = v;
		q[s[k].i] = run;
	}
	free(s);
	return (long)m;
}
