/* proff/flamegraph.h — flame graphs of one profile and differential flame
 * graphs of two: the call paths of every sample merged into a tree of
 * frames (the process name first, as FlameGraph's stackcollapse-perf.pl
 * does), written as folded stacks, a static SVG in FlameGraph's convention,
 * or an interactive, self-contained HTML page (docs/flamegraph.md).
 *
 * A graph is built in three steps: fg_new, fg_add_profile once per side
 * (side 0: the profile, or a diff's baseline; side 1: a diff's new
 * profile), fg_finish (the views: caller and callee order, by function and,
 * with srclines, by function and source line; frames below the minimum width
 * merged; per-frame significance for a diff). The writers only read it.
 */
#ifndef PROFF_FLAMEGRAPH_H
#define PROFF_FLAMEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/profile.h"
#include "proff/stats.h"
#include "proff/util.h"

enum fg_format { FG_FOLDED, FG_SVG, FG_HTML };

typedef struct fg_opts {
	/* Siblings narrower than this percentage of the total (on both sides
	 * of a diff) are merged into one frame; 0 keeps every frame. */
	double min_width;
	/* Frames keyed by function and source line (the page can merge them
	 * by function); else by function only. Costs the srclines' lookup. */
	bool srcline;
	const char *title;         /* NULL: "Flame Graph" / "Differential Flame Graph" */
	/* samples kept (NULL / 0: all): comm names, pids, tids */
	const pf_strlist *comms;
	const uint32_t *pids; size_t nr_pids;
	const uint32_t *tids; size_t nr_tids;
	/* Groups of runs (proff diff A1 A2 -- B1 B2): every fg_add_profile is
	 * one more run of its side, each run's value per frame is kept, and a
	 * frame's change is tested on them with `stats` (test, level) as the
	 * groups' rows are, BH q-values over a view's frames, significant at
	 * q <= fdr; the values are shares of the run's total in percent, or
	 * the period with `absolute` (docs/flamegraph.md). */
	bool runs;
	stats_config stats;
	double fdr;                /* 0.05 */
	bool absolute;
} fg_opts;

void fg_opts_init(fg_opts *o);

/* "x.svg" -> FG_SVG, "x.html"/"x.htm" -> FG_HTML, "x.folded"/"x.txt"/"-"
 * -> FG_FOLDED; -1 for anything else. */
int fg_format_of(const char *path);

/* One frame of a view: parents before children, siblings by name. */
typedef struct fg_frame {
	uint32_t parent;           /* UINT32_MAX for the root ("all") */
	uint32_t name;             /* string id in flamegraph.names */
	uint32_t srcline;          /* string id, 0 if none */
	uint32_t merged;           /* > 0: a frame standing for this many frames below the minimum width */
	uint32_t depth;            /* 0 for the root */
	uint64_t total[2], self[2];    /* period (exact traces: ns) per side */
	uint64_t count[2], self_count[2];   /* samples (exact traces: calls) per side */
} fg_frame;

/* A change's significance (diffs): from the statistics of issue #28. */
typedef struct fg_sig {
	bool tested;               /* false: no test made (the page says so) */
	bool significant;
	double p, q;               /* p-value and its BH q-value over the view's frames */
	double lo, hi;             /* confidence interval of the share's change, percentage points */
} fg_sig;

enum fg_view_key { FG_BY_FUNCTION, FG_BY_SRCLINE };
enum fg_view_order { FG_CALLER, FG_CALLEE };

typedef struct fg_view {
	enum fg_view_key key;
	enum fg_view_order order;
	fg_frame *frames; size_t n, cap;
	fg_sig *sig_total, *sig_self;   /* [n] for diffs, else NULL */
	uint32_t max_depth;
	/* groups of runs: each frame's inclusive and own period in each run,
	 * [frame * nruns + run]; NULL otherwise */
	size_t nruns;
	uint64_t *run_total, *run_self;
} fg_view;

typedef struct flamegraph flamegraph;
struct flamegraph {
	int nsides;                /* 1: a profile, 2: baseline and new */
	bool exact;                /* widths are ns of exact traces; counts are calls */
	bool srcline;
	double min_width;
	char *title;
	char *event;               /* the event drawn ("cpu-clock") */
	char *paths[2];
	uint64_t total[2];         /* period of every kept sample per side */
	uint64_t samples[2];
	pf_strtab names;           /* frame names and srclines */
	fg_view views[4];          /* caller/callee x function[/srcline] */
	size_t nviews;
	struct fg_raw *raw;        /* the merged call paths, until fg_finish */
	/* groups of runs (fg_opts.runs): the runs in the order added */
	bool runs;
	size_t nruns;
	uint8_t *run_side;         /* [nruns] 0 baseline, 1 new */
	uint64_t *run_period, *run_samples;   /* [nruns] totals of each run's kept samples */
	char **run_paths;          /* [nruns] */
	stats_config stats;
	double fdr;
	bool absolute;
};

int fg_new(flamegraph **out, int nsides, const fg_opts *o, proff_error *err);
/* Add the samples of event evsel of p as side `side`. With o->srcline the
 * locations' srclines are computed (pf_locs_srclines). */
int fg_add_profile(flamegraph *g, int side, pf_profile *p, uint32_t evsel, const fg_opts *o,
		   proff_error *err);
int fg_finish(flamegraph *g, proff_error *err);
void fg_free(flamegraph *g);

/* The view of that key and order, or NULL. */
const fg_view *fg_get_view(const flamegraph *g, enum fg_view_key key, enum fg_view_order order);

/* Folded stacks, one line per call path with self samples, sorted by the
 * stack's bytes: "comm;f1;f2 COUNT" (the period, as stackcollapse-perf.pl
 * counts perf script's samples), and for a diff "comm;f1;f2 BASE NEW" as
 * difffolded.pl prints them. Full resolution: no minimum width. */
int fg_write_folded(const flamegraph *g, FILE *out);
/* A static SVG of the caller view by function: one <g><title>NAME (N
 * samples, P%)</title><rect/><text/></g> per frame ("; +D%" added for a
 * diff), as flamegraph.pl draws it; no script. */
int fg_write_svg(const flamegraph *g, FILE *out);
/* The interactive page: inline CSS and JS, the data as JSON in
 * <script type="application/json" id="proff-data">. */
int fg_write_html(const flamegraph *g, FILE *out);
/* The JSON document the page embeds (docs/flamegraph.md). */
int fg_write_json(const flamegraph *g, FILE *out);

/* The significance of a view's frames' changes (count per side out of the
 * side's samples; also with merged frames' summed counts). Filled in from
 * lib/stats (issue #28). */
void fg_significance(const flamegraph *g, size_t n, const uint64_t *c0, const uint64_t *c1, fg_sig *out);
/* Groups of runs: the significance of n frames' changes from their per-run
 * periods v[frame * g->nruns + run], with the groups' test. 0 or
 * PROFF_ENOMEM. */
int fg_runs_significance(const flamegraph *g, size_t n, const uint64_t *v, fg_sig *out);

#endif
