/* proff/plan.h — the planner: what a command will do with a profile (its
 * sort keys, filters and outputs) decides how the profile is loaded (what
 * the loader keeps apart, resolves and remembers) and which stages run
 * between the load and the rows (srclines made first). One set of rules
 * for every command: report and diff call proff_plan, never derive the
 * loader's options themselves.
 */
#ifndef PROFF_PLAN_H
#define PROFF_PLAN_H

#include <stdbool.h>

#include "proff/error.h"
#include "proff/profile.h"

/* What the command does with the profile */
typedef struct plan_request {
	/* keys */
	const char *sort;          /* the --sort spec (hist_parse_sort), NULL: "comm,dso,sym" */
	/* filters */
	bool thread_filter;        /* --pid or --tid: rows of some threads only */
	bool comm_filter;          /* --comms */
	/* outputs */
	bool children;             /* Children (cumulated callchains) */
	bool graph;                /* callchain graphs printed under the rows */
	bool parent;               /* --parent: each sample's parent symbol matched */
	bool no_stack;             /* --max-stack 0: no frame of any callchain kept */
	bool flamegraph;           /* a flame graph: every sample's call path, per comm */
	/* rows in perf report's order: equal Children tie by callchain depth
	 * within one thread only (so threads stay apart), and perf's input
	 * tree is replayed over the raw samples' order (diff: false, its rows
	 * are paired by keys) */
	bool report_order;
} plan_request;

/* The stages between the load and the rows */
typedef struct plan_stages {
	/* the locations' srclines made before the rows (hist_srclines):
	 * a srcline key reads them */
	bool srclines;
	/* the rows made by the reference path (hist_build_reference): a key
	 * reads the rows' periods by cpumode (overhead_sys, ...) or the raw
	 * samples' times (time), which only it keeps (the engine's passes
	 * stay as fast as without) */
	bool reference;
} plan_stages;

/* The loader's options for the request, set in *lo (the others left as
 * they are: paths, filters by time or cpu, progress), and the stages.
 * 0, or PROFF_EUSAGE for an unknown sort key. */
int proff_plan(const plan_request *r, pf_load_opts *lo, plan_stages *st, proff_error *err);

#endif
