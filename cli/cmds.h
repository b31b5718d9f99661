/* cmds.h — the proff subcommands. One function and one file per command
 * (cli/cmd-NAME.c); the table in cli/proff.c maps names to functions.
 * A command returns the process exit status. */
#ifndef PROFF_CLI_CMDS_H
#define PROFF_CLI_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_dprofpp(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);

/* diff --stream / -c cycles (cli/cmd-diff-stream.c); cmd_diff dispatches
 * there when cmd_diff_stream_wanted(argc, argv). */
#include <stdbool.h>
int cmd_diff_stream(int argc, char **argv);
bool cmd_diff_stream_wanted(int argc, char **argv);

/* record --instrument is handled by cli/cmd-record-instrument.c */
int cmd_record_instrument(int argc, char **argv);

/* Shared CLI helpers (cli/cli-util.c) */
#include "proff/error.h"
void cli_error(const proff_error *err);                   /* "proff: ..." on stderr */
void cli_errorf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cli_warnf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#define EXIT_USAGE 129   /* as perf/git for usage errors */

#endif
