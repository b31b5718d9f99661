/* proff/dprof.h — exact (enter/exit) profiles and Devel::DProf-compatible
 * reports, as printed by dprofpp.
 *
 * Three layers:
 *
 *  1. A builder (dprof_builder_*) that turns a stream of enter / exit / goto /
 *     unwind events into the dprofpp model: per subroutine call counts,
 *     exclusive and inclusive (cumulative) times with DProf's overhead
 *     subtraction, the merged call tree (-S) and, while building, the -T/-t
 *     call-tree listing. It reproduces dprofpp's arithmetic step by step (same
 *     order of floating point operations), so that reports are byte-identical.
 *     Any event source can drive it:
 *
 *        dprof_builder *b = dprof_builder_new(&opts, &err);
 *        dprof_builder_set_clock(b, hz);                   // ticks per second
 *        dprof_builder_set_overhead(b, ticks_per_mark);    // 0 if unknown
 *        dprof_builder_set_run_times(b, run_selected, run_real);  // ticks
 *        uint32_t f = dprof_builder_intern(b, "main::f", 7);
 *        dprof_builder_enter(b, tid, f, t0);               // t in ticks of the
 *        dprof_builder_exit(b, tid, f, t1);                //  selected clock
 *        ...
 *        dprof_model *m; dprof_builder_finish(b, &m, &err); dprof_builder_free(b);
 *        dprof_report(stdout, m, &ropts, &err);  dprof_model_free(m);
 *
 *     Times are absolute, in ticks of whatever clock the source chose (the
 *     tmon.out reader passes user+system, user, system or real time as asked
 *     by -u/-s/-r). Each thread id gets its own call stack; DProf itself only
 *     ever uses tid 0. Overhead: every enter, exit and goto adds
 *     ticks_per_mark to a running total that is subtracted from every later
 *     timestamp (dprofpp's model of the profiler's own cost); a pause/resume
 *     pair (DProf's buffer flush, "Devel::DProf::write") removes the time
 *     between them as well.
 *
 *  2. The tmon.out reader (dprof_read_tmon*): old (1996-97, absolute times per
 *     mark) and new (1997+, '@' time deltas, '&' name definitions) formats.
 *
 *  3. The report (dprof_report): the dprofpp table with its Perl-format field
 *     semantics (truncation, breaking at '-', name continuation lines, paging),
 *     -S merged tree, -G grouping, -f filtering.
 *
 * The library never prints on its own: -T/-t listings and the names dprofpp
 * prints for garbled profiles go to opts.out; warnings go to opts.warn.
 */
#ifndef PROFF_DPROF_H
#define PROFF_DPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <regex.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/util.h"

/* Which time a report is about (dprofpp -u / -s / -r, default user+system). */
enum dprof_clock {
	DPROF_CLOCK_USER_SYS = 0,
	DPROF_CLOCK_USER,
	DPROF_CLOCK_SYS,
	DPROF_CLOCK_REAL,
};

/* Name id 0 is the empty name; dprofpp's "undefined name" maps to it. */
#define DPROF_NAME_NONE 0u

/* The name DProf uses for its own buffer flushes (pause/resume). */
#define DPROF_WRITE_NAME "Devel::DProf::write"

typedef void (*dprof_warn_fn)(void *ctx, const char *msg);

/* What the builder must know before the first event (dprofpp options that
 * change the computation itself). */
typedef struct dprof_build_opts {
	const char *only_sub;   /* -g NAME: count only NAME and what it calls; NULL = all */
	const char *group_re;   /* -G RE: exits whose name matches RE are checked against the stack */
	bool autoload;          /* -A: charge mismatched exits to *::AUTOLOAD */
	bool fake_exits;        /* -F: close frames left open at the end */
	bool deep;              /* -S: build the merged call tree */
	char tree;              /* 'T' (-T), 't' (-t) or 0: print the call tree to out while building */
	bool tree_t_too;        /* -T and -t both given: dprofpp still ends with -t's (empty) last line */
	FILE *out;              /* -T/-t output and garbled-stack names (dprofpp's stdout) */
	dprof_warn_fn warn;     /* dprofpp's warnings (stderr); may be NULL */
	void *warn_ctx;
} dprof_build_opts;

/* One node of the merged call tree (-S). Index 0 is the root ("toplevel"). */
typedef struct dprof_node {
	uint32_t name;          /* name id */
	uint32_t first_kid;     /* index of first child, 0 = none */
	uint32_t next;          /* next sibling, 0 = none */
	uint32_t parent;
	uint64_t count;
	double incl;            /* inclusive ticks, overhead removed */
} dprof_node;

/* The finished model. Per-name arrays are indexed by name id. */
typedef struct dprof_model {
	pf_strtab names;
	size_t nnames;
	uint64_t *calls;        /* number of entries */
	double *excl;           /* exclusive ticks (dprofpp %times) */
	double *incl;           /* inclusive ticks, outermost activations only (%ctimes) */
	uint32_t *order;        /* name ids in order of first entry (dprofpp @idkeys) */
	size_t norder;

	double hz;              /* ticks per second */
	double overhead;        /* total ticks subtracted */
	double run_selected;    /* whole run in the selected clock (ticks) */
	double run_real;        /* whole run in real time (ticks) */
	bool has_only_sub;      /* built with -g */
	double only_sub_runtime;/* -g: inclusive seconds of that sub, clamped >= 0 */

	dprof_node *nodes;      /* -S tree (NULL without -S) */
	size_t nnodes;

	char xs_version[128];   /* $XS_VERSION of a tmon.out, "" otherwise */
} dprof_model;

typedef struct dprof_builder dprof_builder;

dprof_builder *dprof_builder_new(const dprof_build_opts *opts, proff_error *err);
void dprof_builder_free(dprof_builder *b);
/* Intern a name; returns its id (>= 1 for non-empty names) or -1 (no memory). */
int64_t dprof_builder_intern(dprof_builder *b, const char *name, size_t len);
const char *dprof_builder_name(const dprof_builder *b, uint32_t id);
void dprof_builder_set_clock(dprof_builder *b, double hz);
void dprof_builder_set_overhead(dprof_builder *b, double ticks_per_mark);
void dprof_builder_set_run_times(dprof_builder *b, double run_selected, double run_real);
void dprof_builder_set_xs_version(dprof_builder *b, const char *v);

/* Events. t = absolute time in ticks of the selected clock. They return 0,
 * or a negative proff_errcode with the reason in the builder's error
 * (dprof_builder_error) — the caller adds file and offset. */
int dprof_builder_enter(dprof_builder *b, uint64_t tid, uint32_t name, double t);
int dprof_builder_exit(dprof_builder *b, uint64_t tid, uint32_t name, double t);
/* goto &target: the current frame ends (charged under target's name, as
 * dprofpp does) and target begins. */
int dprof_builder_goto(dprof_builder *b, uint64_t tid, uint32_t target, double t);
/* Frame left by an exception: exits the frame on top of the stack (or, when
 * the stack is empty, `fallback`). */
int dprof_builder_unwind(dprof_builder *b, uint64_t tid, uint32_t fallback, double t);
/* The recorder's own work (e.g. writing its buffer) between pause and resume
 * is removed from all times. */
int dprof_builder_pause(dprof_builder *b, uint64_t tid, double t);
int dprof_builder_resume(dprof_builder *b, uint64_t tid, double t);
const proff_error *dprof_builder_error(const dprof_builder *b);

/* Close the model. `t_end` is the last time seen (used to fake missing exits
 * with -F). On success *out owns a model; the builder can then be freed. */
int dprof_builder_finish(dprof_builder *b, double t_end, dprof_model **out, proff_error *err);
void dprof_model_free(dprof_model *m);
/* Name id of `name`, or -1 if the model never saw it. */
int64_t dprof_model_find(const dprof_model *m, const char *name);

/* ---- tmon.out ------------------------------------------------------------ */

typedef struct dprof_read_opts {
	dprof_build_opts build;
	enum dprof_clock clock;     /* times and overhead: dprofpp checks -u, then -s, then -r */
	enum dprof_clock run_clock; /* whole-run total: dprofpp checks -r, then -s, then -u */
	bool anon_split;        /* -R: name __ANON__ and END subs "name(id)" */
} dprof_read_opts;

/* Parse a whole tmon.out held in memory (`file` names it in errors). */
int dprof_read_tmon_buf(const char *buf, size_t len, const char *file,
			const dprof_read_opts *opts, dprof_model **out, proff_error *err);
int dprof_read_tmon(const char *path, const dprof_read_opts *opts,
		    dprof_model **out, proff_error *err);
/* Only the header: $XS_VERSION (for -V). Returns 0 or a negative code. */
int dprof_tmon_xs_version(const char *path, char *buf, size_t len, proff_error *err);

/* ---- report -------------------------------------------------------------- */

enum dprof_sort {
	DPROF_SORT_TIME = 0,    /* -z exclusive time (default) */
	DPROF_SORT_CTIME,       /* -I inclusive time */
	DPROF_SORT_CALLS,       /* -l */
	DPROF_SORT_ALPHA,       /* -a */
	DPROF_SORT_AVG,         /* -v */
};

typedef struct dprof_report_opts {
	enum dprof_sort sort;
	bool reverse;           /* -d */
	bool unsorted;          /* -U */
	bool inclusive;         /* -I: header and %Time from CumulS */
	const char *count;      /* -O text as given (dprofpp semantics), NULL = 15 */
	bool quiet;             /* -q */
	enum dprof_clock clock;     /* header label: -u wins over -r over -s */
	const char *filter_re;  /* -f */
	const char *group_re;   /* -G */
	bool group_other;       /* -P */
	bool deep;              /* -S */
	bool tree_only;         /* -T/-t: stop after grouping (tree printed while building) */
	int name_width;         /* width of the Name column, 34 in dprofpp (more on wide ttys) */
	dprof_warn_fn warn;
	void *warn_ctx;
} dprof_report_opts;

int dprof_report(FILE *out, const dprof_model *m, const dprof_report_opts *o, proff_error *err);

/* ---- helpers shared with tests ------------------------------------------- */

/* Perl's stringification of a number ("%.15g", zero as "0"). */
void dprof_perl_num(char *buf, size_t len, double v);
/* Perl's numification of a string (leading number, else 0; -0 becomes 0). */
double dprof_perl_numify(const char *s);
/* Perl's regex subset as POSIX ERE (\d, \D, \w, \s, (?:...) translated);
 * returns 0 or -1 with a message in errbuf. The result must be regfree'd. */
int dprof_regcomp(regex_t *preg, const char *re, char *errbuf, size_t errlen);

#endif
