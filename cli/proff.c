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

static void usage(FILE *f)
{
	fprintf(f, "usage: proff [--version] [--help] COMMAND [ARGS]\n\n"
		   "The most commonly used proff commands are:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "   %-11s %s\n", commands[i].name, commands[i].help);
	fprintf(f, "\nSee 'proff COMMAND -h' for the options of a command.\n");
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
	if (argc < 2) {
		usage(stderr);
		return 1;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version") || !strcmp(cmd, "version")) {
		printf("proff version " PROFF_VERSION "\n");
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(commands[i].name, cmd)) {
			int rc = commands[i].fn(argc - 1, argv + 1);
			if (fflush(stdout) != 0 || ferror(stdout)) {
				perror("proff: write error on standard output");
				return rc ? rc : 1;
			}
			return rc;
		}
	}
	fprintf(stderr, "proff: '%s' is not a proff command. See 'proff --help'.\n", cmd);
	return 1;
}
