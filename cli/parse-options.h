/* parse-options.h — the one option library of the proff commands (all but
 * dprofpp, which keeps Getopt::Std's rules for dprofpp's users).
 *
 * A command declares its options once, in a table of opt_def entries
 * (short name, long name, kind, offset of the field in the command's own
 * options struct, argument hint, help), as perf's and git's OPT_* tables.
 * From that one table come the parsing, `-h` (perf's layout), the man-page
 * consistency test and the shell completion (`--list-opts`). Parsing
 * follows perf's parse-options: bundled short options (-bpF, -o1),
 * --name=value or a value in the next word, unique abbreviations of long
 * names, --no-NAME negation, "--" ends the options (or, for a command
 * that says so, separates groups of words), perf's messages, exit
 * status 129 for usage errors. An unknown option names the nearest ones
 * ("did you mean --children?") instead of the whole usage.
 */
#ifndef PROFF_CLI_PARSE_OPTIONS_H
#define PROFF_CLI_PARSE_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* What an entry's field is, and so how its argument is read. */
enum opt_kind {
	O_BOOL = 1,     /* bool: true; --no-NAME false */
	O_COUNT,        /* int: one more each time (-vv); --no-NAME 0 */
	O_STR,          /* const char *: the argument; --no-NAME NULL */
	O_STR_NOEMPTY,  /* O_STR that refuses an empty argument */
	O_INT,          /* int: a number (decimal, 0x..); --no-NAME 0 */
	O_DOUBLE,       /* double; --no-NAME 0 */
	O_STRLIST,      /* po_strlist: each use adds one (repeatable) */
	O_SET_INT,      /* int: set to defval, no argument; --no-NAME 0 */
	O_CALLBACK,     /* cb decides; off unused unless cb reads it */
	O_GROUP,        /* no option: a heading in -h (help is the heading) */
};

/* flags */
#define PO_OPTARG      0x01u  /* the argument is optional: --name=V or -nV only */
#define PO_OPTARG_NEXT 0x02u  /* optional, also the next word when that is no option */
#define PO_NOARG       0x04u  /* O_CALLBACK without argument */
#define PO_HIDDEN      0x08u  /* parsed, not shown in -h, man pages or completion */
#define PO_NONEG       0x10u  /* no --no-NAME form */
#define PO_STOP        0x20u  /* the words after this option are not parsed */

typedef struct opt_def opt_def;
typedef struct po_ctx po_ctx;

/* A table entry leaves out the trailing fields it does not use (flags,
 * callback, value), as perf's tables do: no warning for that. */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

/* arg is NULL when the option took none (flag or absent optional
 * argument); unset is true for --no-NAME. Returns 0, or the exit status
 * the command stops with (after reporting: po_error() for usage errors). */
typedef int po_callback(po_ctx *ctx, const opt_def *d, const char *arg, bool unset);

struct opt_def {
	char s;                 /* short name, 0 if none */
	const char *l;          /* long name, NULL if none */
	int kind;               /* enum opt_kind */
	size_t off;             /* offset of the field in the command's struct */
	const char *argh;       /* argument hint in -h ("file"), NULL: none */
	const char *help;
	unsigned flags;         /* PO_* above */
	po_callback *cb;        /* O_CALLBACK */
	intptr_t defval;        /* O_SET_INT's value */
};

/* O_STRLIST's field */
typedef struct po_strlist {
	const char **v;
	size_t n;
} po_strlist;
void po_strlist_release(po_strlist *l);

/* The command's flags */
#define PO_CMD_STOP_AT_NON_OPTION 0x01u  /* the first non-option and all after it are positional (record CMD ARGS) */
#define PO_CMD_HELP_EXIT_USAGE    0x02u  /* -h exits 129 as perf diff does (else 0) */
#define PO_CMD_DASHDASH_WORD      0x04u  /* "--" is a word of its own, a NULL in pos[] (diff's groups A -- B), not the end of the options */

typedef struct po_cmd {
	const char *name;              /* "report": proff report, man page proff-report(1) */
	const char *const *usage;      /* usage lines after "proff ", NULL-terminated */
	const opt_def *opts;
	size_t nr;
	unsigned flags;                /* PO_CMD_* */
	void (*help_tail)(FILE *f);    /* lines after the options in -h, or NULL */
} po_cmd;

/* What a callback sees while parsing. */
struct po_ctx {
	const po_cmd *cmd;
	void *obj;                     /* the command's options struct */
	unsigned seq;                  /* options parsed so far, this one included */
};

/* Parse argv[1..argc-1] into obj. The words that are not options go to
 * pos[] (room for argc entries) in order, *npos of them. Returns true to go
 * on; false when the command is to return *status at once: 0 after -h,
 * EXIT_USAGE after a usage error (reported on stderr), a callback's
 * status. `--help` opens the man page on a terminal (else prints -h). */
bool po_parse(const po_cmd *cmd, void *obj, int argc, char **argv, char **pos, int *npos, int *status);

/* perf's usage: the usage lines, then every option (d NULL) or just d. */
void po_usage(const po_cmd *cmd, const opt_def *d, FILE *f);
/* "  Error: <msg>" on stderr, then the usage lines and d's help (d may be
 * NULL). Returns EXIT_USAGE. */
int po_error(const po_cmd *cmd, const opt_def *d, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* One option of cmd's table set in obj as parsing sets it (arg: its
 * argument or NULL; unset: --no-NAME). 0, or the exit status after a
 * message. For a command that takes another's options (ab: diff's). */
int po_set(const po_cmd *cmd, void *obj, const opt_def *d, const char *arg, bool unset);
/* The entry of a long or short name (exact), NULL if none. */
const opt_def *po_find(const po_cmd *cmd, const char *long_name, char short_name);

/* Edit distance (Damerau-Levenshtein, adjacent transpositions) between a
 * and b[0..blen): the "did you mean" measure of options and commands. */
unsigned po_distance(const char *a, const char *b, size_t blen);
/* Would a user who typed `typed` (length len) have meant `cand`? */
bool po_near(const char *typed, size_t len, const char *cand, unsigned best);

/* Every option of the table, one a line, for completion and the
 * man-page test: "--name", "--name=" (takes a value), "-x". */
void po_list_opts(const po_cmd *cmd, FILE *f);

/* The terminal options of the commands that page and colour their output
 * (cli/ui.c): one line in their tables. */
po_callback po_opt_pager, po_opt_color;
#define PO_UI_OPTIONS \
	{ 0, "pager", O_CALLBACK, 0, NULL, "page the output on a terminal (--no-pager: never)", PO_NOARG, po_opt_pager, 0 }, \
	{ 0, "color", O_CALLBACK, 0, "when", "colour the output: auto (on a terminal), always, never", PO_OPTARG, po_opt_color, 0 }

#endif
