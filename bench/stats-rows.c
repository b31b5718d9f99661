/* stats-rows.c — the cost of a groups diff's statistics (bench/diff-groups.sh):
 * R runs per group, N rows, every row present in every run with a period
 * drawn around its own mean (a profile's long tail: row i weighs ~1/(i+1)),
 * built as hists by hand and added to one diff_table (lib/diff/groups.c);
 * prints the medians of the add and of diff_table_compute (Welch's t, CI,
 * Benjamini-Hochberg, order) over the repetitions, then of the same with
 * --test mwu (not with STATS_ROWS_NO_MWU set). The first repetition is a
 * warm-up: freed blocks stay in the heap (as under proff diff, whose heap
 * the runs' freed profiles leave warm: cli_fast_heap), so the repetitions
 * measure the work, not the first touches of fresh pages.
 *   stats-rows [ROWS [RUNS_PER_GROUP [REPS]]]     (100000 10 5)
 * Every row is tested (--min-share 0, the worst case) unless
 * STATS_ROWS_MIN_SHARE gives the share under which a row is not.
 * Build: cc -O2 -Iinclude bench/stats-rows.c build/libproff.a -lm ...
 */
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proff/diff.h"
#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/stats.h"

/* wall and CPU time (the host is shared: CPU time is the steadier figure;
 * the statistics use two threads from 16 K rows) */
static double clock_s(clockid_t id)
{
	struct timespec t;
	clock_gettime(id, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

typedef struct run {
	pf_profile prof;
	hist h;
} run;

/* one run: N rows "sym<i>" of one dso, periods around 1e9 / (i + 1) */
static int build(run *r, size_t nrows, stats_rng *rng, double scale)
{
	memset(r, 0, sizeof(*r));
	if (pf_strtab_init(&r->prof.strs))
		return -1;
	r->prof.dsos = calloc(1, sizeof(pf_dso));
	r->prof.syms = calloc(nrows, sizeof(pf_sym));
	r->h.entries = calloc(nrows, sizeof(hist_entry));
	if (!r->prof.dsos || !r->prof.syms || !r->h.entries)
		return -1;
	r->prof.nr_dsos = 1;
	r->prof.dsos[0].short_name = r->prof.dsos[0].long_name = (uint32_t)pf_strtab_intern(&r->prof.strs, "prog", 4);
	r->h.prof = &r->prof;
	r->h.keys[0] = HK_DSO;
	r->h.keys[1] = HK_SYM;
	r->h.nkeys = 2;
	r->h.opts.diff_mode = true;
	char name[32];
	for (size_t i = 0; i < nrows; i++) {
		int n = snprintf(name, sizeof(name), "sym%zu", i);
		r->prof.syms[i].name = (uint32_t)pf_strtab_intern(&r->prof.strs, name, (size_t)n);
		hist_entry *e = &r->h.entries[r->h.n++];
		e->dso = 0;
		e->sym = (uint32_t)i;
		e->sym_name = r->prof.syms[i].name;
		e->level = '.';
		double u = (double)stats_rng_below(rng, 1000000) / 1e6;
		e->period = e->period_acc = (uint64_t)(scale * 1e9 / (double)(i + 1) * (0.8 + 0.4 * u)) + 1;
		e->nr_events = e->period / 250000 + 1;
		r->h.total_period += e->period;
	}
	r->h.total_non_filtered_period = r->h.total_period;
	r->prof.nr_syms = nrows;
	return 0;
}

static void measure(run *runs, size_t nruns, const uint32_t *group, int test, int reps, const char *label)
{
	double *ta = calloc((size_t)reps, sizeof(double)), *tc = calloc((size_t)reps, sizeof(double));
	double *tw = calloc((size_t)reps, sizeof(double));
	size_t rows = 0, tests = 0;
	for (int rep = -1; rep < reps; rep++) {    /* -1: the warm-up */
		diff_opts o;
		diff_opts_init(&o);
		diff_group_opts g;
		diff_group_opts_init(&g);
		g.stats.test = test;
		/* every row tested, the worst case; STATS_ROWS_MIN_SHARE=0.1:
		 * proff diff's default, rows under 0.1 % of the total untested */
		g.min_share = getenv("STATS_ROWS_MIN_SHARE") ? atof(getenv("STATS_ROWS_MIN_SHARE")) : 0;
		diff_table *t;
		proff_error err;
		int keys[2] = { HK_DSO, HK_SYM };
		if (diff_table_new(nruns, group, keys, 2, &o, &g, &t, &err)) {
			fprintf(stderr, "stats-rows: %s\n", err.msg);
			exit(1);
		}
		double t0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
		for (size_t r = 0; r < nruns; r++)
			if (diff_table_add_run(t, r, &runs[r].h, &err)) {
				fprintf(stderr, "stats-rows: %s\n", err.msg);
				exit(1);
			}
		double t1 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w1 = clock_s(CLOCK_MONOTONIC);
		if (diff_table_compute(t, &err)) {
			fprintf(stderr, "stats-rows: %s\n", err.msg);
			exit(1);
		}
		double t2 = clock_s(CLOCK_PROCESS_CPUTIME_ID), w2 = clock_s(CLOCK_MONOTONIC);
		if (rep >= 0) {
			ta[rep] = t1 - t0;
			tc[rep] = t2 - t1;
			tw[rep] = w2 - w1;
		}
		rows = t->nrows;
		tests = t->ntests;
		diff_table_free(t);
	}
	qsort(ta, (size_t)reps, sizeof(double), cmp_d);
	qsort(tc, (size_t)reps, sizeof(double), cmp_d);
	qsort(tw, (size_t)reps, sizeof(double), cmp_d);
	printf("  %-6s %zu rows x %zu runs: add %.1f ms CPU; statistics %.1f ms wall, %.1f ms CPU (%zu tests; medians of %d)\n",
	       label, rows, nruns, ta[reps / 2] * 1e3, tw[reps / 2] * 1e3, tc[reps / 2] * 1e3, tests, reps);
	free(tw);
	free(ta);
	free(tc);
}

int main(int argc, char **argv)
{
	size_t nrows = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
	size_t per = argc > 2 ? strtoul(argv[2], NULL, 10) : 10;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	if (nrows < 1 || per < 1 || reps < 1)
		return 2;
	mallopt(M_MMAP_THRESHOLD, 1 << 30);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	size_t nruns = 2 * per;
	run *runs = calloc(nruns, sizeof(*runs));
	uint32_t *group = calloc(nruns, sizeof(*group));
	stats_rng rng;
	stats_rng_seed(&rng, 28);
	for (size_t r = 0; r < nruns; r++) {
		group[r] = r >= per;
		if (build(&runs[r], nrows, &rng, r >= per ? 1.01 : 1.0)) {
			fprintf(stderr, "stats-rows: out of memory\n");
			return 1;
		}
	}
	measure(runs, nruns, group, STATS_WELCH, reps, "welch");
	if (!getenv("STATS_ROWS_NO_MWU"))
		measure(runs, nruns, group, STATS_MWU, reps, "mwu");
	for (size_t r = 0; r < nruns; r++) {
		pf_strtab_free(&runs[r].prof.strs);
		free(runs[r].prof.dsos);
		free(runs[r].prof.syms);
		free(runs[r].h.entries);
	}
	free(runs);
	free(group);
	return 0;
}
