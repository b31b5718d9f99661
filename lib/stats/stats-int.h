/* stats-int.h — what lib/stats' files share: the exact bootstrap of the
 * difference of two medians (bootstrap.c), used by Mann-Whitney U (tests.c). */
#ifndef PROFF_STATS_INT_H
#define PROFF_STATS_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The law of the median of a resample (n draws with replacement) of n
 * sorted values, over the values' indices: support point i is the mean of
 * the order statistics lo[i] and hi[i] (0-based; equal for odd n) and has
 * probability w[i]. It depends on n only: built once per group size. */
typedef struct median_law {
	size_t n, npts;
	uint32_t *lo, *hi;
	double *w;
} median_law;

int median_law_init(median_law *l, size_t n);   /* 0 or PROFF_ENOMEM */
void median_law_free(median_law *l);

/* scratch of boot_median_diff_ci, grown on demand; zero-initialized */
typedef struct boot_scratch {
	double *v[2], *w[2], *sf[2];    /* the two laws on the row's values, sorted; suffix sums */
	size_t cap_pts;
	uint32_t *s[3];                 /* staircases: bracket low, high, trial */
	uint32_t *key, *at[2];          /* put_law's buckets: each law's ends */
	size_t cap_s;
	struct boot_cand { double v, w; } *cand;
	size_t cap_cand;
	bool plain;                     /* the reference walks and sorts (tests compare the fast ones to them) */
} boot_scratch;

void boot_scratch_free(boot_scratch *s);

/* The exact percentile bootstrap interval of median(b) - median(a) at
 * two-sided level 1 - 2 alpha: lo is the smallest value d of the
 * difference's law with P(D <= d) >= alpha, hi the largest with
 * P(D >= d) >= alpha. sa, sb: the groups' values sorted ascending; la, lb:
 * the laws of their sizes. Returns 0 or PROFF_ENOMEM. */
int boot_median_diff_ci(boot_scratch *s, const median_law *la, const double *sa,
			const median_law *lb, const double *sb, double alpha, double *lo, double *hi);

#endif
