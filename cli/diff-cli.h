/* diff-cli.h — the diff command's work on a parsed configuration, for the
 * commands that end in a diff (proff ab): they set the diff's options with
 * diff's own option table and call the function cmd_diff calls, never
 * cmd_diff itself with a forged command line.
 */
#ifndef PROFF_CLI_DIFF_CLI_H
#define PROFF_CLI_DIFF_CLI_H

#include <stdbool.h>

/* The diff's options (cli/cmd-diff.c) */
typedef struct diff_cli diff_cli;

/* The config files' defaults (diff.order, diff.compute, hist.percentage);
 * NULL with *status the exit status after a message. */
diff_cli *diff_cli_new(int *status);
void diff_cli_free(diff_cli *c);
/* One option of diff's table by its long name, as --NAME[=arg] (unset:
 * --no-NAME) sets it. 0, or the exit status after a message. arg is kept:
 * it must live until diff_cli_run. */
int diff_cli_set(diff_cli *c, const char *long_name, const char *arg, bool unset);
/* The diff: pos[0, npos) its words that are not options (files, or a
 * store's selectors), NULL where a `--` separates groups; pos (allocated)
 * is freed. The exit status. */
int diff_cli_run(diff_cli *c, char **pos, int npos);

#endif
