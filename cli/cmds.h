/* cmds.h — the proff subcommands. One function and one file per command
 * (cli/cmd-NAME.c); the table in cli/proff.c maps names to functions.
 * A command returns the process exit status. */
#ifndef PROFF_CLI_CMDS_H
#define PROFF_CLI_CMDS_H

#include <stdbool.h>
#include <stddef.h>

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_dprofpp(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_ab(int argc, char **argv);
int cmd_push(int argc, char **argv);

/* diff --stream / -c cycles (cli/cmd-diff-stream.c); cmd_diff dispatches
 * there when cmd_diff_stream_wanted(argc, argv). */
#include <stdbool.h>
int cmd_diff_stream(int argc, char **argv);
bool cmd_diff_stream_wanted(int argc, char **argv);

/* record --instrument is handled by cli/cmd-record-instrument.c */
int cmd_record_instrument(int argc, char **argv);
/* a trace's sessions and calibration, as record --instrument --info FILE
 * prints them (report --header of an exact trace); the exit status */
int cli_trace_info(const char *path);

/* The option tables (cli/parse-options.h) of the commands that have one */
struct po_cmd;
extern const struct po_cmd cmd_calibrate_opts;
extern const struct po_cmd cmd_record_instrument_opts;
extern const struct po_cmd cmd_record_opts;
extern const struct po_cmd cmd_report_opts;
extern const struct po_cmd cmd_diff_opts;
extern const struct po_cmd cmd_diff_stream_opts;
extern const struct po_cmd cmd_convert_opts;
extern const struct po_cmd cmd_ab_opts;
extern const struct po_cmd cmd_push_opts;

/* Shared CLI helpers (cli/cli-util.c) */
#include "proff/error.h"
void cli_error(const proff_error *err);                   /* "proff: ..." on stderr */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Groups of runs, `A1 A2 -- B1 B2 [-- C1 ...]` (diff, convert): pos[0,
 * *npos) holds the words with NULL where a `--` stood (the command's
 * PO_CMD_DASHDASH_WORD); it is compacted to the files, *group_out
 * (allocated, room for at least 2) gets each file's group, 0 the baseline,
 * and *seps whether a `--` was given (without one every file is a group of
 * its own). 0, or the exit status after one line naming cmd. */
#include <stdint.h>
int cli_groups_split(const char *cmd, char **pos, int *npos, uint32_t **group_out, bool *seps);

/* The config files (perf's, then proff's), loaded on first use
 * (cli/cli-config.c); the error from loading proff's (code 0 if none) */
#include "proff/config.h"
const proff_config *cli_config(void);
const proff_error *cli_config_load_error(void);

#define EXIT_USAGE 129   /* as perf/git for usage errors */

/* The config file (proff/config.h) as perf treats it: a value that is not
 * one gets "bad config value for 'KEY' in FILE line N, ignoring..." and the
 * default; cli_config_warnings says once that a file was malformed. */
void cli_config_bad(const char *key, const char *why);
void cli_config_error(const char *key, const char *why);   /* the same, not ignored: an error */
bool cli_config_bool(const char *key, bool def);
void cli_config_warnings(void);

/* The terminal (cli/ui.c): the pager and colour of a command's output.
 * cli_ui_init before anything else (whether stdout is a terminal, before
 * the pager takes it); cli_pager_start just before a command's output
 * (nothing unless stdout is a terminal and no option or config says no);
 * cli_pager_finish once the command is done (proff.c). */
enum { CLI_COLOR_AUTO, CLI_COLOR_ALWAYS, CLI_COLOR_NEVER };
void cli_ui_init(void);
void cli_pager_option(bool on);                  /* --pager / --no-pager */
int cli_color_option(const char *when);          /* --color[=WHEN]; -1 if WHEN is not one */
int cli_color_parse(const char *v);              /* auto|always|never and booleans; -1 */
bool cli_use_color(const char *cmd);
void cli_pager_start(const char *cmd);
bool cli_pager_active(void);
void cli_pager_finish(void);

/* The progress line of a long load of nslots files (cli/progress.c): NULL
 * when stderr is no terminal or quiet; cli_progress_update is the
 * pf_load_opts.progress callback, its ctx cli_progress_slot (one per file
 * read); done erases the line. */
#include <stdint.h>
typedef struct cli_progress cli_progress;
cli_progress *cli_progress_start(const char *what, bool quiet, size_t nslots);
void *cli_progress_slot(cli_progress *p, size_t i);
void cli_progress_update(void *ctx, unsigned part, uint64_t done, uint64_t total);
void cli_progress_done(cli_progress *p);

/* The manual page of a command (NULL: proff(1)), cli/help.c: its path
 * (0, or -1 if not installed nor built), or shown with man on a terminal
 * (0 shown, -1 not: no terminal, no page or no man). */
int cli_manual_path(const char *cmd, char *out, size_t len);
int cli_show_manual(const char *cmd);

/* libproff-instrument.so: `given`, else $PROFF_RUNTIME, else next to the proff
 * binary or in ../lib/proff/ relative to it. 0 found (path in out); -1 the
 * given/environment path is unreadable (reported); -2 not found (not reported). */
int cli_find_runtime(const char *given, char *out, size_t len);

/* Before a large read: the heap set up for it (see cli-util.c); with
 * ahead_mb (2-8), a thread faults the heap in that far ahead of the
 * allocator until cli_fast_heap_done (more resident by about as much). */
void cli_fast_heap(unsigned ahead_mb);
void cli_fast_heap_done(void);
/* Before any output of a command whose report is megabytes written by one
 * thread: stdout without stdio's per-call locking, and a 64 KB buffer when
 * it is not a terminal. */
void cli_stdout_bulk(void);

/* Exact traces (cli/cli-trace.c): one warning line per kind of anomaly the
 * library counted that is worth one (proff_trace_quality_warns); the full
 * counts as "# anomalies" lines (--stats). */
#include <stdio.h>
struct proff_trace_quality;
void cli_trace_quality_warn(const char *path, const struct proff_trace_quality *q);
void cli_trace_quality_print(FILE *out, const struct proff_trace_quality *q);
/* --flamegraph FILE of report and diff (cli/cli-flamegraph.c): the file
 * name and --min-width checked into o (0, or the exit status after a
 * message); then the graph of nsides profiles' events built and written. */
#include "proff/flamegraph.h"
int cli_flamegraph_check(const char *path, const char *min_width, fg_opts *o);
/* profs[f] is side side[f] (NULL: side f); several profiles on a side are
 * its runs (groups of runs: fg_opts.runs) */
int cli_flamegraph(const char *path, pf_profile *const *profs, const uint32_t *evsel, const uint8_t *side,
		   size_t nprofs, int nsides,
		   const fg_opts *o);

#endif
