/* groups-calls.c — calls and time per call in a diff of groups of runs of
 * exact traces (`proff diff A1.trace A2.trace -- B1.trace B2.trace`).
 *
 * A trace counts every call, so a row's calls per run and its inclusive
 * time per call (avg) are measured, not sampled: with one run per group
 * there is no noise to judge them against (as for the time columns, the
 * table's DIFF_MODE_NOISELESS), and with repeated runs the run-to-run
 * variation is the noise. Each is tested like the time metric, with the
 * table's test (Welch by default, or Mann-Whitney U) on the per-run values,
 * and gets Benjamini-Hochberg q-values over its own column: calls and time
 * per call answer other questions than the shares, and folding them into
 * the shares' family would change the shares' q-values with and without a
 * trace. Rows under --min-share are not tested, as for the shares.
 *
 * Calls that are equal in every run of each group but differ between the
 * groups (a deterministic program that now calls a function more often)
 * have no variance for a test to use, yet no doubt either: such a change is
 * significant (q 0), and said so by its status STATS_ZERO_VARIANCE.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"

static void no_test(stats_result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = STATS_TOO_FEW;
	r->p = r->ci_low = r->ci_high = r->df = NAN;
}

/* calls[] and avgs[] of a group's runs; avgs only of runs with calls
 * (returns their number) */
static size_t group_values(const diff_table *t, const diff_trow *row, size_t g, double *calls, double *avgs)
{
	size_t f = t->group_first[g], n = t->group_runs[g], na = 0;
	for (size_t r = 0; r < n; r++) {
		uint64_t c = diff_table_calls(t, row, f + r);
		calls[r] = (double)c;
		if (c)
			avgs[na++] = (double)diff_table_incl(t, row, f + r) / (double)c;
	}
	return na;
}

/* a test of b against a; a deterministic difference of calls is significant */
static int test_values(stats_ctx *ctx, const double *a, size_t na, const double *b, size_t nb,
		       bool counts, stats_result *r, double *p_out)
{
	*p_out = NAN;
	if (stats_compare(ctx, a, na, b, nb, r))
		return PROFF_ENOMEM;
	if (r->status == STATS_OK)
		*p_out = r->p;
	else if (counts && r->status == STATS_ZERO_VARIANCE && na > 1 && nb > 1 &&
		 stats_mean(a, na) != stats_mean(b, nb))
		*p_out = 0;
	return 0;
}

int diff_table_calls_stats(diff_table *t)
{
	size_t ng = t->ngroups, nmax = 0, np = 0;
	for (size_t g = 0; g < ng; g++)
		if (t->group_runs[g] > nmax)
			nmax = t->group_runs[g];
	size_t ntests = t->nrows * (ng - 1);
	double *buf = pf_calloc(4 * nmax, sizeof(double));
	double *pc = pf_calloc(ntests ? ntests : 1, sizeof(double));
	double *pa = pf_calloc(ntests ? ntests : 1, sizeof(double));
	double *qc = pf_calloc(ntests ? ntests : 1, sizeof(double));
	double *qa = pf_calloc(ntests ? ntests : 1, sizeof(double));
	stats_ctx *ctx = stats_ctx_new(&t->g.stats);
	int rc = PROFF_ENOMEM;
	if (!buf || !pc || !pa || !qc || !qa || !ctx)
		goto out;
	double *c0 = buf, *a0 = buf + nmax, *cg = buf + 2 * nmax, *ag = buf + 3 * nmax;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_trow *row = &t->rows[i];
		diff_cstat *cs = row->calls;
		size_t n0 = t->group_runs[0];
		size_t na0 = group_values(t, row, 0, c0, a0);
		for (size_t g = 0; g < ng; g++) {
			diff_cstat *s = &cs[g];
			size_t n = t->group_runs[g];
			const double *cv = c0, *av = a0;
			size_t nav = na0;
			if (g) {
				nav = group_values(t, row, g, cg, ag);
				cv = cg;
				av = ag;
			}
			s->calls = stats_mean(cv, n);
			s->calls_sd = sqrt(stats_var(cv, n));
			s->avg_runs = (uint32_t)nav;
			s->avg = nav ? stats_mean(av, nav) : NAN;
			s->avg_sd = nav ? sqrt(stats_var(av, nav)) : NAN;
			s->calls_q = s->avg_q = NAN;
			s->calls_significant = s->avg_significant = false;
			no_test(&s->calls_test);
			no_test(&s->avg_test);
			if (!g) {
				s->calls_delta = s->avg_delta = NAN;
				continue;
			}
			s->calls_delta = s->calls - cs[0].calls;
			s->avg_delta = s->avg - cs[0].avg;
			double p_c = NAN, p_a = NAN;
			bool tested = row->shown && t->mode == DIFF_MODE_RUNS && !row->stat[DIFF_SELF][g].small;
			if (tested && (test_values(ctx, c0, n0, cv, n, true, &s->calls_test, &p_c) ||
				       test_values(ctx, a0, na0, av, nav, false, &s->avg_test, &p_a)))
				goto out;
			pc[np] = p_c;
			pa[np] = p_a;
			np++;
		}
	}
	long mc = stats_bh(pc, np, qc), ma = stats_bh(pa, np, qa);
	if (mc < 0 || ma < 0)
		goto out;
	t->ntests_calls = (size_t)mc;
	t->ntests_avg = (size_t)ma;
	np = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_cstat *cs = t->rows[i].calls;
		for (size_t g = 1; g < ng; g++, np++) {
			cs[g].calls_q = qc[np];
			cs[g].avg_q = qa[np];
			cs[g].calls_significant = !isnan(qc[np]) && qc[np] <= t->g.fdr;
			cs[g].avg_significant = !isnan(qa[np]) && qa[np] <= t->g.fdr;
		}
	}
	rc = 0;
out:
	free(buf);
	free(pc);
	free(pa);
	free(qc);
	free(qa);
	stats_ctx_free(ctx);
	return rc;
}
