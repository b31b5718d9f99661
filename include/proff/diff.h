/* proff/diff.h — `perf diff` semantics on top of the hist layer.
 *
 * For one event, the hists of N files (file 0 = baseline) are paired by
 * their sort keys (compared by value across files, so rebuilt binaries pair
 * by symbol name), entries only present in other files become "dummy"
 * baseline rows, the compute method (delta, delta-abs, ratio, wdiff) is
 * evaluated per pair, and the rows are put in perf diff's order. The result
 * is then printed as perf's text (same widths, formats and order) or as JSON.
 *
 * Where perf 6.1 is internally inconsistent proff is consistent (see
 * docs/compat/diff.md): the Baseline column and the formula use the same
 * per-file totals the deltas use, also with -b and relative percentages.
 */
#ifndef PROFF_DIFF_H
#define PROFF_DIFF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/hist.h"
#include "proff/stats.h"

enum diff_compute {
	DIFF_DELTA, DIFF_DELTA_ABS, DIFF_RATIO, DIFF_WDIFF, DIFF_CYCLES,
	DIFF__NR_COMPUTE
};

/* name as perf spells it ("delta", "delta-abs", "ratio", "wdiff", "cycles") */
const char *diff_compute_name(int compute);

typedef struct diff_opts {
	int compute;              /* enum diff_compute, default DIFF_DELTA_ABS */
	int64_t w1, w2;           /* wdiff weights: w1 baseline, w2 other files */
	unsigned order;           /* -o: file whose compute value sorts first (0 = none); default 1 */
	bool show_period;         /* -p */
	bool show_formula;        /* -F */
	bool baseline_only;       /* -b */
	bool verbose;             /* -v */
	bool quiet;               /* -q */
	bool relative;            /* --percentage relative */
	const char *field_sep;    /* -t; NULL = aligned columns */
	bool color;               /* perf's colours of Baseline and the compute column, by value (a terminal; the CLI decides) */
	/* sizes of the -d / -C / -S lists: a sort column whose list has exactly
	 * one entry is elided, as perf does */
	size_t nr_dso_filter, nr_comm_filter, nr_sym_filter;
} diff_opts;

void diff_opts_init(diff_opts *o);

/* Parse a -c/--compute argument into o->compute (+ weights). On error
 * returns PROFF_EUSAGE and writes perf's message ("Failed: ...") to msg. */
int diff_parse_compute(const char *arg, diff_opts *o, char *msg, size_t msglen);

/* A sort-key value of a row, comparable across files. */
typedef hist_key_value diff_key;

typedef struct diff_pair {
	const hist_entry *e;      /* the paired entry of that file, NULL if none */
	double delta;             /* percentage points (delta and delta-abs) */
	double ratio;
	int64_t wdiff;
} diff_pair;

typedef struct diff_row {
	const hist *h;            /* hist owning e: the baseline, or the file a dummy came from */
	const hist_entry *e;      /* entry whose keys the row shows */
	bool dummy;               /* not in the baseline: created for an entry of another file */
	uint64_t period;          /* baseline period (0 for dummies) */
	uint8_t filtered;         /* HF_* bits; filtered rows are kept for totals, not printed */
	diff_pair *pairs;         /* [nfiles]; pairs[0] is unused */
	diff_key *keys;           /* [nkeys] */
	size_t seq;               /* creation order (final tie-break) */
} diff_row;

typedef struct diff_result {
	size_t nfiles;
	const hist **hists;       /* [nfiles]; NULL where that file lacks the event */
	uint64_t *totals;         /* [nfiles]: the total each file's percentages use */
	int keys[HIST_MAX_KEYS];
	int nkeys;
	diff_row *rows;           /* in output order after diff_compute() */
	size_t nrows;
	size_t key_width[HIST_MAX_KEYS];
	bool key_elided[HIST_MAX_KEYS];
	struct diff_priv *priv;
} diff_result;

/* Pair, compute and sort. hists[0] is the baseline and must not be NULL; the
 * others may be NULL (file without that event). All hists must have been built
 * with the same sort keys and diff_mode. The hists must outlive the result. */
int diff_compute(const hist *const *hists, size_t nfiles, const diff_opts *o,
		 diff_result **out, proff_error *err);
void diff_result_free(diff_result *r);

/* Percentage of a baseline row (Baseline column) and of a pair (file i). */
double diff_row_baseline_pct(const diff_result *r, const diff_row *row);
double diff_pair_pct(const diff_result *r, size_t file, const diff_pair *p);

/* perf diff's text for one event: "# Event" line (first == false prefixes
 * a blank line), "# Data files:" block (verbose or >2 files), headers, rows.
 * paths[nfiles] are printed as given. Returns 0 or a negative error. */
int diff_print_text(const diff_result *r, const diff_opts *o, const char *event_name,
		    const char *const *paths, bool first, FILE *out);

/* JSON (schema in docs/compat/diff.md): begin, one call per event, end. */
void diff_json_begin(const diff_opts *o, const char *const *paths, size_t nfiles,
		     const char *sort_spec, FILE *out);
void diff_json_event(const diff_result *r, const diff_opts *o, const char *event_name,
		     uint32_t type, uint64_t config, bool first, FILE *out);
void diff_json_end(FILE *out);

/* ---- groups of runs: `proff diff A1 A2 -- B1 B2 [-- C1 ...]` -----------------
 *
 * Every run is one file's hist of one event. Rows are paired across all runs
 * by their keys (as above); a row absent from a run counts 0 there. Per row,
 * per group: the mean of the per-run values (share of the run's total in
 * percent, or the period), the compute method's value against the baseline
 * group (group 0) on the means, and a test of the per-run values against the
 * baseline's (lib/stats); Benjamini-Hochberg q-values over every test of the
 * table. Where every group has one run, only sampling noise is judged
 * (effective sample counts: a share times the run's samples). Formulas and
 * choices: docs/statistics.md; output: docs/compat/diff.md, docs/json.md.
 * The runs' profiles need not outlive diff_table_add_run (the keys are copied),
 * so a caller can load, add and free one file after another.
 */

enum diff_metric { DIFF_METRIC_SHARE, DIFF_METRIC_ABSOLUTE };
enum diff_which { DIFF_SELF, DIFF_CHILDREN };
/* what the table's rows could be tested with */
enum diff_mode {
	DIFF_MODE_RUNS,       /* repeated runs: the configured test (Welch, MWU) */
	DIFF_MODE_SAMPLING,   /* one run per group: sampling noise only */
	DIFF_MODE_NOISELESS,  /* one run per group of exact traces: no sampling noise to judge */
};

typedef struct diff_group_opts {
	stats_config stats;       /* test (STATS_WELCH), level (0.95), bootstrap */
	double fdr;               /* --fdr Q: a row is significant when q <= Q (0.05) */
	int metric;               /* enum diff_metric */
	bool children;            /* --children: Children (inclusive) values too */
	bool significant_only;    /* print only rows with a significant change */
	/* --min-share P: rows whose mean share over the two groups compared
	 * is below P percent are not tested (independent filtering: the
	 * pooled mean says nothing about the difference under the null, and
	 * the tests of rows too small to judge only dilute the others' q) */
	double min_share;         /* 0.1 */
	bool power;               /* runs per side that would detect a non-significant delta */
	double power_target;      /* 0.8 */
	long power_max;           /* 10000: more is printed as ">10000" */
	/* --fail-on-regression T / T%: a significant increase above T
	 * percentage points (or absolute units), or T percent of the baseline */
	bool fail_on;
	double fail_threshold;
	bool fail_relative;
} diff_group_opts;

void diff_group_opts_init(diff_group_opts *g);

/* one row's statistics of one metric in one group */
typedef struct diff_gstat {
	double mean;              /* mean per-run value (share in %, or period) */
	double mean_period;       /* mean period (ratio and wdiff use it) */
	double sd;                /* the per-run values' standard deviation */
	uint32_t present;         /* runs of the group that have the row */
	/* against the baseline group (groups > 0) */
	double delta;             /* mean - baseline mean */
	double ratio;             /* mean period / baseline mean period (NaN: baseline 0) */
	int64_t wdiff;            /* mean period * w2 - baseline mean period * w1 */
	stats_result test;        /* status, estimate, CI, p (the share tests in %) */
	bool small;               /* below --min-share: not tested */
	double q;                 /* NaN when not tested */
	bool significant;
	long runs_needed;         /* --power: 0 none computed, power_max + 1: more */
} diff_gstat;

/* Exact traces: one row's calls and inclusive time per call in one group.
 * Per run, calls are the row's calls and avg its inclusive ns over its
 * calls; the means are over the group's runs (avg: over the runs that have
 * calls). Against the baseline group, with repeated runs, each is tested
 * with the table's test on the per-run values, and q-values are
 * Benjamini-Hochberg over that column's tests; calls that are the same in
 * every run of each group but differ between them are a change without
 * noise (significant, status STATS_ZERO_VARIANCE). docs/exact.md. */
typedef struct diff_cstat {
	double calls, calls_sd;   /* mean calls per run and their standard deviation */
	double avg, avg_sd;       /* mean inclusive ns per call, over the runs with calls */
	uint32_t avg_runs;        /* runs with calls */
	double calls_delta, avg_delta;            /* mean - baseline mean (groups > 0) */
	stats_result calls_test, avg_test;
	double calls_q, avg_q;                    /* NaN when not tested */
	bool calls_significant, avg_significant;
} diff_cstat;

typedef struct diff_trow {
	diff_key *keys;           /* [nkeys], strings owned by the table */
	const char *pid_comm;     /* pid/tid keys: the thread's comm */
	char level;
	uint64_t addr;            /* unresolved symbol: its (lowest) address */
	uint8_t filtered;         /* HF_* bits common to every run that has the row */
	bool in_baseline;
	bool shown;               /* printed (not filtered, -b, --significant-only) */
	diff_gstat *stat[2];      /* [DIFF_SELF], [DIFF_CHILDREN] (NULL without --children): [ngroups] */
	diff_cstat *calls;        /* exact traces: [ngroups]; else NULL */
	size_t seq;               /* creation order */
} diff_trow;

typedef struct diff_table {
	size_t nruns, ngroups;
	uint32_t *group;          /* [nruns]: the group of each run */
	size_t *group_first, *group_runs;   /* [ngroups]: runs r of group g are group_first[g] + 0 .. */
	int keys[HIST_MAX_KEYS];
	int nkeys;
	diff_opts o;
	diff_group_opts g;
	int mode;                 /* enum diff_mode, set by diff_table_compute */
	bool exact;               /* the runs are exact traces (ns measured, not sampled) */
	bool time_unit;           /* periods are nanoseconds (cpu-clock, task-clock, traces) */
	uint64_t *totals;         /* [nruns] the totals the shares use */
	uint64_t *samples;        /* [nruns] samples of the event */
	bool *have_run;           /* [nruns] the run's file has the event */
	diff_gstat *total;        /* [ngroups] whole-run figures: the totals per run */
	diff_trow *rows;          /* in output order after diff_table_compute */
	size_t nrows;
	size_t ntests;            /* p-values in the Benjamini-Hochberg family */
	size_t ntests_calls, ntests_avg;   /* exact traces: the calls' and avgs' families */
	double min_p;             /* the smallest p the test can give (MWU), else 0 */
	size_t key_width[HIST_MAX_KEYS];
	struct diff_table_priv *priv;
} diff_table;

/* group[r] in 0 .. ngroups-1, non-decreasing, every group non-empty */
int diff_table_new(size_t nruns, const uint32_t *group, const int *keys, int nkeys,
		   const diff_opts *o, const diff_group_opts *g, diff_table **out, proff_error *err);
/* Add run r (its file's hist of the table's event; built with the table's
 * sort keys, diff_mode, children as g->children). Not thread-safe: callers
 * adding from several threads hold a lock. */
int diff_table_add_run(diff_table *t, size_t run, const hist *h, proff_error *err);
/* Every run added (a file without the event: none): statistics, q-values,
 * order, widths. */
int diff_table_compute(diff_table *t, proff_error *err);
void diff_table_free(diff_table *t);
/* run r's value of a row (share in % or period) and period */
double diff_table_value(const diff_table *t, const diff_trow *row, int which, size_t run);
uint64_t diff_table_period(const diff_table *t, const diff_trow *row, int which, size_t run);
/* exact traces: run r's calls of a row and their summed inclusive ns */
uint64_t diff_table_calls(const diff_table *t, const diff_trow *row, size_t run);
uint64_t diff_table_incl(const diff_table *t, const diff_trow *row, size_t run);
/* Is the row a regression by --fail-on-regression (in any group or metric)? */
bool diff_trow_regression(const diff_table *t, const diff_trow *row, int *which, size_t *group);

/* Text: "# Event" line, the statistics header (test, FDR, groups, whole-run
 * figures), the column header and the rows. paths[nruns]. */
int diff_table_print_text(const diff_table *t, const char *event_name, const char *const *paths,
			  bool first, FILE *out);
/* The rows --fail-on-regression found, one line each (after the table). */
size_t diff_table_print_regressions(const diff_table *t, const char *event_name, FILE *out);
/* JSON (schema in docs/json.md): begin, one call per event, end. */
void diff_table_json_begin(const diff_opts *o, const diff_group_opts *g, const char *const *paths,
			   size_t nruns, const uint32_t *group, const char *sort_spec, FILE *out);
void diff_table_json_event(const diff_table *t, const char *event_name, uint32_t type,
			   uint64_t config, bool first, FILE *out);
void diff_table_json_end(FILE *out);

#endif
