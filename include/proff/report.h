/* proff/report.h — printing a hist the way `perf report --stdio` does
 * (rows, Children/Self columns, call graphs in graph/fractal/flat/folded
 * form), and as JSON. The caller passes the FILE*; nothing here chooses
 * stdout or exits.
 */
#ifndef PROFF_REPORT_H
#define PROFF_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "proff/hist.h"

enum report_cc_mode {
	CC_NONE = 0,
	CC_GRAPH,      /* percentages of the total (perf "graph") */
	CC_FRACTAL,    /* percentages of the parent (perf "fractal") */
	CC_FLAT,
	CC_FOLDED,
};

/* the escape sequences perf colours with */
#define REPORT_COLOR_RED "\033[31m"
#define REPORT_COLOR_GREEN "\033[32m"
#define REPORT_COLOR_RESET "\033[m"

enum report_cc_value { CCV_PERCENT = 0, CCV_PERIOD, CCV_COUNT };

typedef struct report_fmt {
	bool quiet;                /* -q: rows only */
	bool children;             /* Children + Self columns */
	enum report_cc_mode cc_mode;
	enum report_cc_value cc_value;
	double cc_threshold;       /* percent, default 0.5 */
	unsigned cc_print_limit;   /* 0 = unlimited */
	double percent_limit;      /* --percent-limit */
	bool relative;             /* --percentage relative */
	bool sort_starts_with_sym; /* perf skips the first chain entry then */
	char field_sep;            /* -t; 0 = none */
	bool elide[HIST_KEYS_MAX];       /* columns hidden (single-entry filters) */
	const char *filter_lines;  /* "# dso: work\n"-style lines for the header, or NULL */
	bool show_nr_samples;      /* -n */
	bool show_total_period;    /* --show-total-period: the Self period's column */
	const char *fields;        /* -F: the output fields in order (key names), NULL: perf's default columns */
	/* an event group's report (report_group_rows): group_n events, the
	 * rows' values (3 * group_n per row: each event's Self period, the
	 * leader's first, then each one's Children, then samples), each event's
	 * total and sample count, the Samples line's description */
	size_t group_n;
	const uint64_t *group_periods, *group_totals, *group_samples;
	const char *group_desc;
	bool events_plural;        /* --no-group, a group's leader: perf says "of events" still */
	const char *time_spec;     /* --time, echoed in the Samples line */
	bool not_first_event;      /* later events: no "Total Lost Samples" block */
	bool exact;                /* exact profile: time and per-call columns */
	/* sampled profiles with --calibration: the recorder's own cost per
	 * sample (ns, without / with callchains) and where it came from */
	double sample_cost_ns, sample_cg_cost_ns;
	const char *calibration;
	/* perf's colours (escape sequences) on the percentages: red from 5 %,
	 * green above 0.5 %; the caller decides (a terminal, --color) */
	bool color;
	/* Rows from which the second half is formatted on another thread
	 * (0: 20000; SIZE_MAX: never) */
	size_t split_rows;
} report_fmt;

void report_fmt_init(report_fmt *f);

/* perf's group output (lib/output/report-group.c): the leader's hist h
 * (in perf's order, hist_sort_report) gets the rows only the members
 * have, and its rows the order of the group's periods; *periods: 3 * (nmemb +
 * 1) per row (Self of each event, the leader's first, then Children, then
 * sample counts), the
 * caller frees. 0 or an error. */
int report_group_rows(hist *h, hist *const *members, size_t nmemb, uint64_t **periods, proff_error *err);

/* The "# Total Lost Samples / # Samples / # Event count" block and the
 * column header, then the rows. */
int report_print_hist(FILE *out, hist *h, const report_fmt *f, uint64_t nr_lost);

/* Exact profiles: the execution tree (every call path, merged over threads)
 * with total time, self time and calls per node, children by total time;
 * nodes below percent_limit % of the total are left out. */
int report_print_tree(FILE *out, const pf_profile *p, double percent_limit);

/* "  1.234 ms": nanoseconds in the unit that keeps 1-3 integer digits, 10
 * characters (uftrace's style). */
void report_fmt_time(char *buf, size_t len, double ns);

/* JSON (docs/json.md): report_json_begin (the object, its schema and
 * file), one report_print_json per event, report_json_end. */
#define REPORT_JSON_SCHEMA "proff-report/2"
void report_json_begin(FILE *out, const char *file);
int report_print_json(FILE *out, hist *h, const report_fmt *f, bool first_event);
void report_json_end(FILE *out);

#endif
