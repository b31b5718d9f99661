/* proff.c — entry point and command table (git/perf style).
 *
 * `proff CMD [options]` looks CMD up in commands[] and calls its function;
 * adding a command touches this table and one cli/cmd-NAME.c file.
 */
#include <stdio.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include "cmds.h"
#include "parse-options.h"
#include "proff/calibrate.h"
#include "proff/hist.h"
#include "proff/record.h"

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd_struct commands[] = {
	{ "record",    cmd_record,    "Run a command and record its profile into perf.data (or an exact trace with --instrument)" },
	{ "report",    cmd_report,    "Show Self/Children overhead of a profile, like perf report" },
	{ "diff",      cmd_diff,      "Compare profiles, like perf diff (and --stream, -c cycles)" },
	{ "dprofpp",   cmd_dprofpp,   "Devel::DProf-compatible reports of tmon.out and proff traces" },
	{ "calibrate", cmd_calibrate, "Measure what proff's own measuring costs on this machine" },
	{ "convert",   cmd_convert,   "Write a profile as pprof, folded stacks, Chrome trace events or speedscope" },
	{ "ab",        cmd_ab,        "Record two versions in turn (A B A B ...) and diff them with statistics" },
	{ "push",      cmd_push,      "Store profiles with labels in a store directory or ClickHouse (docs/fleet.md)" },
};
#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The option tables by command, for `proff CMD --list-opts` and the
 * completion (dprofpp has Getopt::Std's options, listed by itself). */
static const struct po_cmd *const option_tables[] = {
	&cmd_record_opts, &cmd_record_instrument_opts, &cmd_report_opts, &cmd_diff_opts, &cmd_diff_stream_opts, &cmd_calibrate_opts,
	&cmd_convert_opts, &cmd_ab_opts, &cmd_push_opts,
};

static void usage(FILE *f)
{
	fprintf(f, "usage: proff [--version] [--help] [--no-pager] [--color[=WHEN]] COMMAND [ARGS]\n\n"
		   "The most commonly used proff commands are:\n");
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "   %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nSee 'proff COMMAND -h' for the options of a command, 'proff help COMMAND' for its manual.\n");
}

static const struct cmd_struct *find_command(const char *name)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/* git's message for a mistyped command, with the nearest ones */
static int unknown_command(const char *cmd)
{
	fprintf(stderr, "proff: '%s' is not a proff command. See 'proff --help'.\n", cmd);
	unsigned best = 99, n = 0;
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		unsigned d = po_distance(cmd, commands[i].name, strlen(commands[i].name));
		if (d < best)
			best = d, n = 0;
		n += d == best;
	}
	if (po_near(cmd, strlen(cmd), NULL, best)) {
		fprintf(stderr, "\nThe most similar command%s\n", n > 1 ? "s are" : " is");
		for (size_t i = 0; i < NR_COMMANDS; i++)
			if (po_distance(cmd, commands[i].name, strlen(commands[i].name)) == best)
				fprintf(stderr, "\t%s\n", commands[i].name);
	}
	return 1;
}

/* proff help [COMMAND]: the manual page on a terminal, else the usage */
static int help(const char *cmd)
{
	if (cmd && !find_command(cmd))
		return unknown_command(cmd);
	if (cli_show_manual(cmd) == 0)
		return 0;
	if (!cmd) {
		usage(stdout);
		return 0;
	}
	char *argv[] = { (char *)cmd, (char *)"-h", NULL };
	find_command(cmd)->fn(2, argv);    /* -h: its usage (exit status 0: asked for) */
	return 0;
}

/* proff --list-cmds: the commands, one a line (completion) */
static void list_commands(void)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		printf("%s\n", commands[i].name);
}

/* proff --list-values KIND: the words an option takes (completion) */
static int list_values(const char *kind)
{
	static const char *const compute[] = { "delta", "delta-abs", "ratio", "wdiff:", "cycles", NULL };
	static const char *const callgraph[] = { "graph", "fractal", "flat", "folded", "none", "caller", "callee",
						 "function", "percent", "period", "count", NULL };
	static const char *const color[] = { "auto", "always", "never", NULL };
	static const char *const percentage[] = { "relative", "absolute", NULL };
	static const char *const groups[] = { "timer", "instrument", "sample", NULL };
	static const char *const clock[] = { "tsc", "monotonic", "none", NULL };
	const char *const *v = NULL;
	if (!strcmp(kind, "sort")) {
		for (int k = 0; k < hist_nr_keys; k++) {
			printf("%s\n", hist_keys[k].name);
			if (hist_keys[k].alias)
				printf("%s\n", hist_keys[k].alias);
		}
		return 0;
	}
	if (!strcmp(kind, "compute")) v = compute;
	else if (!strcmp(kind, "call-graph")) v = callgraph;
	else if (!strcmp(kind, "color")) v = color;
	else if (!strcmp(kind, "percentage")) v = percentage;
	else if (!strcmp(kind, "groups")) v = groups;
	else if (!strcmp(kind, "clock")) v = clock;
	else if (!strcmp(kind, "event")) v = rec_event_names();
	else if (!strcmp(kind, "counter")) v = cal_counter_names();
	if (!v) {
		fprintf(stderr, "proff: --list-values: no such kind '%s'\n", kind);
		return EXIT_USAGE;
	}
	for (size_t i = 0; v[i]; i++)
		printf("%s\n", v[i]);
	return 0;
}

static int run(const struct cmd_struct *c, int argc, char **argv)
{
	int rc = c->fn(argc, argv);
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("proff: write error on standard output");
		cli_pager_finish();
		return rc ? rc : 1;
	}
	cli_pager_finish();
	return rc;
}

int main(int argc, char **argv)
{
#ifdef __GLIBC__
	/* The profile model is a few large arrays that grow by doubling and
	 * hash tables rehashed into new ones. A fixed threshold keeps every
	 * one of them in its own mapping: it grows in place (mremap) and goes
	 * back to the system when freed. glibc's default threshold rises
	 * with each large free, after which such blocks stay in the heap:
	 * a two-thread read then peaked 4-6 MB higher. */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	cli_ui_init();
	/* git's and perf's options before the command */
	int i = 1;
	for (; i < argc && argv[i][0] == '-'; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			usage(stdout);
			return 0;
		}
		if (!strcmp(a, "--version")) {
			printf("proff version " PROFF_VERSION "\n");
			return 0;
		}
		if (!strcmp(a, "--no-pager") || !strcmp(a, "-P")) {
			cli_pager_option(false);
		} else if (!strcmp(a, "--pager") || !strcmp(a, "--paginate") || !strcmp(a, "-p")) {
			cli_pager_option(true);
		} else if (!strcmp(a, "--no-color")) {
			cli_color_option("never");
		} else if (!strncmp(a, "--color", 7) && (!a[7] || a[7] == '=')) {
			if (cli_color_option(a[7] ? a + 8 : NULL) < 0) {
				fprintf(stderr, "proff: --color: '%s' is not auto, always or never\n", a + 8);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--list-values") && i + 1 < argc) {
			return list_values(argv[i + 1]);
		} else if (!strcmp(a, "--list-cmds")) {
			list_commands();
			return 0;
		} else if (!strcmp(a, "--list-opts")) {
			/* every command's options (the man-page test) */
			for (size_t k = 0; k < sizeof(option_tables) / sizeof(option_tables[0]); k++) {
				printf("[%s]\n", option_tables[k]->name);
				po_list_opts(option_tables[k], stdout);
			}
			return 0;
		} else {
			fprintf(stderr, "proff: unknown option: %s\n", a);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 1;
	}
	const char *cmd = argv[i];
	if (!strcmp(cmd, "help"))
		return help(i + 1 < argc ? argv[i + 1] : NULL);
	if (!strcmp(cmd, "version")) {
		printf("proff version " PROFF_VERSION "\n");
		return 0;
	}
	const struct cmd_struct *c = find_command(cmd);
	if (!c)
		return unknown_command(cmd);
	return run(c, argc - i, argv + i);
}
