/* fdr.c — Benjamini-Hochberg q-values: the false discovery rate control over
 * every row a diff tests (valid for independent tests and for the positively
 * dependent ones that the shares of one profile are). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proff/error.h"
#include "proff/stats.h"
#include "proff/util.h"

typedef struct pidx {
	uint64_t key;            /* the p-value's bits: for p >= 0 they sort as the values */
	size_t i;
} pidx;

/* LSD radix sort by key, 11 bits a pass (p-values in [0, 1] use 62 bits:
 * six passes), stable: equal p-values keep their order */
static int radix_sort(pidx *v, size_t n)
{
	pidx *tmp = pf_calloc(n ? n : 1, sizeof(*tmp));
	if (!tmp)
		return PROFF_ENOMEM;
	pidx *src = v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 11) {
		size_t count[2048] = { 0 };
		for (size_t i = 0; i < n; i++)
			count[(src[i].key >> shift) & 2047]++;
		if (count[(src[0].key >> shift) & 2047] == n)
			continue;            /* every key the same in these bits */
		size_t sum = 0;
		for (size_t b = 0; b < 2048; b++) {
			size_t c = count[b];
			count[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			dst[count[(src[i].key >> shift) & 2047]++] = src[i];
		pidx *t = src;
		src = dst;
		dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
	free(tmp);
	return 0;
}

long stats_bh(const double *p, size_t n, double *q)
{
	pidx *s = pf_calloc(n ? n : 1, sizeof(*s));
	if (!s)
		return PROFF_ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		q[i] = NAN;
		if (!isnan(p[i])) {
			double v = p[i] > 0 ? p[i] : 0;     /* -0 and below sort as 0 */
			uint64_t bits;
			memcpy(&bits, &v, sizeof(bits));
			s[m++] = (pidx){ bits, i };
		}
	}
	if (m && radix_sort(s, m)) {
		free(s);
		return PROFF_ENOMEM;
	}
	double run = 1;
	for (size_t k = m; k-- > 0;) {
		double v = p[s[k].i] * (double)m / (double)(k + 1);
		if (v < run)
			run = v;
		q[s[k].i] = run;
	}
	free(s);
	return (long)m;
}
