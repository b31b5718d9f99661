/* flamegraph-sig.c — whether a differential flame graph's frame changed
 * beyond chance: the one place the flame graphs ask the statistics of
 * lib/stats, so the page greys what is not significant.
 *
 * One profile per side: the only noise a single pair of profiles shows is
 * sampling noise, and two things besides the code move a frame beyond it:
 *  - a sibling's change: a frame doing the same work keeps its sample COUNT
 *    but its SHARE falls when a sibling grows (a test on shares alone flags
 *    every unchanged sibling of a planted change);
 *  - the machine's speed: a run on a busier host takes more CPU time for the
 *    same work, so every frame's COUNT grows while the SHARES stay (a test
 *    on counts alone flags the whole hot path of an A/A pair: measured on a
 *    shared 2-core host, A/A runs differed by 30 % in samples).
 * So a frame's change is significant only when both its share and its
 * count changed beyond sampling noise: the intersection-union test of the
 * two, whose p-value is the larger of the two tests' (each at level alpha,
 * so the pair is too). The share test is `proff diff`'s for one run per
 * side (two-proportion z-test of the frame's samples out of each side's),
 * the count test the one `proff diff --metric absolute` makes (z-test of
 * two Poisson sums with unit weights: z = (c1 - c0) / sqrt(c0 + c1)).
 * The p-values get Benjamini-Hochberg q-values over the view's frames
 * (inclusive and self counts separately, as the two colourings are), and a
 * change is significant at q <= FG_FDR: 0.01, stricter than diff's default
 * 0.05, because a view has many more frames than a diff has rows. lo / hi
 * are the share test's Wald interval of the share's change, in percentage
 * points.
 *
 * Exact traces count calls and measure times: there is no sampling noise,
 * and one run per side shows no run-to-run variation, so nothing is tested
 * (fg_sig.tested false; the page colours every change and says so).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "proff/flamegraph.h"
#include "proff/stats.h"

#define FG_FDR 0.01        /* a frame's change is significant when q <= FG_FDR */
#define FG_LEVEL 0.95      /* confidence level of lo / hi */

void fg_significance(const flamegraph *g, size_t n, const uint64_t *c0, const uint64_t *c1, fg_sig *out)
{
	memset(out, 0, n * sizeof(*out));
	if (g->exact || g->nsides != 2 || !n || !g->samples[0] || !g->samples[1])
		return;
	double *p = pf_calloc(n, sizeof(double)), *q = pf_calloc(n, sizeof(double));
	if (!p || !q) {         /* no test rather than a wrong one: the page says none was made */
		free(p);
		free(q);
		return;
	}
	double n0 = (double)g->samples[0], n1 = (double)g->samples[1];
	for (size_t i = 0; i < n; i++) {
		stats_result share, count;
		p[i] = NAN;
		if (!c0[i] && !c1[i])
			continue;       /* on neither side: nothing to test */
		stats_two_proportions((double)c0[i], n0, (double)c1[i], n1, FG_LEVEL, &share);
		stats_poisson_sums((double)c0[i], (double)c0[i], (double)c1[i], (double)c1[i], FG_LEVEL, &count);
		if (share.status == STATS_ZERO_VARIANCE) {
			/* the whole of both sides (the root, a lone process): its
			 * share cannot change, so neither can the frame */
			p[i] = 1;
			out[i].lo = out[i].hi = 0;
			continue;
		}
		if (share.status != STATS_OK || count.status != STATS_OK)
			continue;
		p[i] = fmax(share.p, count.p);
		out[i].lo = 100 * share.ci_low;
		out[i].hi = 100 * share.ci_high;
	}
	if (stats_bh(p, n, q) < 0) {
		memset(out, 0, n * sizeof(*out));
	} else {
		for (size_t i = 0; i < n; i++) {
			if (isnan(p[i]))
				continue;
			out[i].tested = true;
			out[i].p = p[i];
			out[i].q = q[i];
			out[i].significant = q[i] <= FG_FDR;
		}
	}
	free(p);
	free(q);
}

/* Groups of runs (proff diff A1 A2 -- B1 B2): each run is a replicate, so
 * a frame's change is judged against the run-to-run variation of its own
 * per-run values, as `proff diff` judges the groups' rows: the frame's
 * inclusive (or self) period as a share of the run's total in percent (or
 * the period itself with --metric absolute), tested with the groups'
 * configured test (Welch's t, or Mann-Whitney U), Benjamini-Hochberg
 * q-values over the view's frames, significant at q <= --fdr. A frame with
 * the same value in every run of both sides (the root's share) has nothing
 * to change: tested, never significant, no p. lo / hi are the test's
 * interval of the change of means (medians: MWU), in the metric's unit. */
int fg_runs_significance(const flamegraph *g, size_t n, const uint64_t *v, fg_sig *out)
{
	memset(out, 0, n * sizeof(*out));
	size_t R = g->nruns, na = 0;
	for (size_t r = 0; r < R; r++)
		na += g->run_side[r] == 0;
	if (!n || !R)
		return 0;
	double *p = pf_calloc(n, sizeof(double)), *q = pf_calloc(n, sizeof(double));
	double *a = pf_calloc(R, sizeof(double)), *b = a ? a + na : NULL;
	double *vals = pf_calloc(R, sizeof(double));
	stats_ctx *ctx = stats_ctx_new(&g->stats);
	int rc = PROFF_ENOMEM;
	if (!p || !q || !a || !vals || !ctx)
		goto out;
	for (size_t i = 0; i < n; i++) {
		size_t ka = 0, kb = 0;
		for (size_t r = 0; r < R; r++) {
			double x = (double)v[i * R + r];
			if (!g->absolute)
				x = g->run_period[r] ? 100.0 * x / (double)g->run_period[r] : 0;
			if (g->run_side[r] == 0)
				a[ka++] = x;
			else
				vals[kb++] = x;
		}
		memcpy(b, vals, kb * sizeof(double));
		stats_result res;
		p[i] = NAN;
		if (stats_compare(ctx, a, ka, b, kb, &res) < 0)
			goto out;
		if (res.status == STATS_ZERO_VARIANCE && res.mean_a == res.mean_b) {
			out[i].tested = true;          /* the same in every run: no change */
			out[i].p = out[i].q = NAN;
			continue;
		}
		if (res.status != STATS_OK)
			continue;
		p[i] = res.p;
		out[i].lo = res.ci_low;
		out[i].hi = res.ci_high;
	}
	if (stats_bh(p, n, q) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if (isnan(p[i]))
			continue;
		out[i].tested = true;
		out[i].p = p[i];
		out[i].q = q[i];
		out[i].significant = q[i] <= g->fdr;
	}
	rc = 0;
out:
	if (rc < 0)
		memset(out, 0, n * sizeof(*out));
	free(p);
	free(q);
	free(a);
	free(vals);
	stats_ctx_free(ctx);
	return rc;
}
