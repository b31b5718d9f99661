/* proff/stream.h — hot streams and hot blocks (`proff diff --stream`, `-c cycles`).
 *
 * A stream is a call path aggregated over samples, each entry "function
 * file:line". With branch stacks (perf record -b, or synthetic ones) the path
 * is built as perf 6.1 builds it for `perf diff --stream`: the LBR entries
 * (loops removed) then the callchain, aggregated in a trie keyed by source
 * line; the streams are the trie nodes that end sample paths (their own
 * segment only, as perf prints them). Without branch stacks the ordinary -g
 * callchain is used and a stream is the whole path from the sampled line to
 * the outermost caller, so the comparison works on any machine.
 *
 * Source-aware matching: st_srcmap builds, per source file, the after->before
 * line table from an in-process line diff of two source trees (-1 for
 * changed lines), so streams still match when code moved.
 *
 * Hot blocks: per-symbol basic blocks [previous branch target, branch
 * source] with their cycles from the branch stacks, paired between two
 * profiles for `-c cycles` / `--cycles-hist` (perf's
 * `[Program Block Range] Cycles Diff`), and the hot-block tables of
 * --hot-blocks. See docs/compat/stream.md.
 */
#ifndef PROFF_STREAM_H
#define PROFF_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"

typedef struct st_opts {
	const char *symfs, *kallsyms, *buildid_dir;
	unsigned top;               /* hot streams kept per side (perf: 5) */
	double min_percent;         /* callchain nodes under this % of the period are dropped (perf: 0.5) */
	bool cycles;                /* -c cycles: collect hot blocks too */
	bool blocks_only;           /* with cycles: no streams wanted (no paths, tries, source lines) */
} st_opts;

void st_opts_init(st_opts *o);

/* One entry of a stream. */
typedef struct st_call {
	const char *sym;            /* function name, NULL if unresolved */
	const char *srcline;        /* "file.c:42", "??:0", or NULL (address outside any map) */
	const char *path;           /* full source path from DWARF, NULL if none */
	unsigned line;
	uint64_t ip;
	uint64_t maddr;              /* ip in the dso's map-address space */
	uint32_t dso;
	uint64_t sym_start;         /* symbol start (map address), for unresolved-srcline compares */
	uint32_t branch_count;      /* times this entry was a branch source or target */
	uint64_t cycles_count;      /* cycles summed over the times it was a branch source */
} st_call;

typedef struct st_stream {
	const st_call *calls;
	size_t nr_calls;
	uint64_t hit;               /* period of the samples whose path ends here */
	int64_t cycles;             /* perf's callchain_avg_cycles */
	double percent;             /* 100 * hit / all stream hits of the side */
	int pair;                   /* index of the matched stream of the other side, -1 */
	bool changed;               /* matched, but through a changed line or function */
	bool *call_changed;         /* per entry (new side): line changed / function declared changed */
} st_stream;

typedef struct st_side st_side;

/* Read one perf.data file and compute its hot streams. */
int st_load(const char *path, const st_opts *o, st_side **out, proff_error *err);
void st_side_free(st_side *s);
bool st_has_branches(const st_side *s);       /* every sample event had PERF_SAMPLE_BRANCH_STACK */
bool st_has_cycles(const st_side *s);         /* some branch entry had a cycle count */
size_t st_nr_streams(const st_side *s);
st_stream *st_get_stream(st_side *s, size_t i);
uint64_t st_total_hits(const st_side *s);

/* ---- source-line mapping (--before DIR --after DIR) ---------------------- */

/* Line diff (Myers, O((N+M)D)): fills map_b2a[j] (j < nb) with the index in a
 * of line j of b, or -1 when line j is inserted/changed. Returns 0 or a
 * negative proff_errcode. Lines compared with strcmp. */
int st_line_diff(const char *const *a, size_t na, const char *const *b, size_t nb, long *map_b2a);

typedef struct st_srcmap st_srcmap;
int st_srcmap_new(const char *before_dir, const char *after_dir, st_srcmap **out, proff_error *err);
void st_srcmap_free(st_srcmap *m);
/* Line in the before tree for line `line` of `path` (a path of the after
 * tree as DWARF has it; located under after_dir by its longest existing
 * suffix): >0 the before line, -1 changed/inserted, 0 file unknown to both
 * trees (then lines compare as they are), -2 file deleted or renamed. */
long st_srcmap_line(st_srcmap *m, const char *path, unsigned line);

/* ---- matching and report ------------------------------------------------- */

typedef struct st_match_opts {
	st_srcmap *srcmap;          /* NULL: srcline strings compared as perf does */
	const char *const *changed_funcs;   /* --changed-func NAME..., NULL-terminated or NULL */
} st_match_opts;

void st_match(st_side *old, st_side *new_, const st_match_opts *mo);

typedef struct st_report_opts {
	double percent_limit;       /* streams under this hits% are not shown (0 = all) */
	bool source_section;        /* print the "source line changed (*)" section */
} st_report_opts;

int st_report(FILE *out, st_side *old, st_side *new_, const st_report_opts *ro);

/* ---- hot blocks (-c cycles) ---------------------------------------------- */

/* perf diff -c cycles [--cycles-hist] table for the two sides (which must
 * have been loaded with o.cycles). */
typedef struct st_cycles_opts {
	bool hist;                  /* --cycles-hist */
	bool offsets;               /* ranges as symbol offsets (-v), not srclines */
	const st_match_opts *match; /* changed functions/lines: "[block changed in new stream]" */
	unsigned hot_blocks;        /* --hot-blocks=N: rows per table (0: 5) */
} st_cycles_opts;
int st_cycles_report(FILE *out, st_side *old, st_side *new_, const st_cycles_opts *co);

/* --hot-blocks: the N hottest blocks of each side (share of all block
 * cycles, average cycles) paired with the other side's block of the same
 * symbol and range (new lines mapped through co->match->srcmap), as the
 * tables "# Output based on old perf data:" and "... new perf data:". */
int st_hot_blocks_report(FILE *out, st_side *old, st_side *new_, const st_cycles_opts *co);

#endif
