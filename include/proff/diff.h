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
	/* sizes of the -d / -C / -S lists: a sort column whose list has exactly
	 * one entry is elided, as perf does */
	size_t nr_dso_filter, nr_comm_filter, nr_sym_filter;
} diff_opts;

void diff_opts_init(diff_opts *o);

/* Parse a -c/--compute argument into o->compute (+ weights). On error
 * returns PROFF_EUSAGE and writes perf's message ("Failed: ...") to msg. */
int diff_parse_compute(const char *arg, diff_opts *o, char *msg, size_t msglen);

/* A sort-key value of a row, comparable across files. */
typedef struct diff_key {
	const char *s;            /* string keys (NULL: no dso / unresolved symbol) */
	uint64_t n, n2;           /* numeric keys (pid/tid: tid, pid; cpu) */
} diff_key;

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

#endif
