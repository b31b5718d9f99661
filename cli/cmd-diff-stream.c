/* cmd-diff-stream.c — `proff diff --stream` and `proff diff -c cycles`.
 *
 * `proff diff` hands its whole command line (argv[0] = "diff") here when it
 * asks for hot streams (--stream) or hot blocks (-c cycles, --cycles-hist);
 * cmd_diff_stream_wanted() tells. Output as perf 6.1 prints it, plus the
 * source-aware options perf never merged: --before DIR --after DIR,
 * --changed-func NAME, --stream-top N, and --hot-blocks[=N] (the hot-block
 * tables of the unmerged "Stream comparison" v2 series, after perf's output).
 * Without branch stacks, --stream compares -g callchain streams (perf exits
 * 255 silently there).
 */
#include <errno.h>
#include <libelf.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "parse-options.h"
#include "proff/profile.h"
#include "proff/stream.h"

#define EXIT_SETUP 255

enum { O_STREAM, O_COMPUTE, O_CYCLES_HIST, O_HOT_BLOCKS, O_TOP, O_PLIMIT, O_BEFORE, O_AFTER, O_CHFUNC,
       O_SYMFS, O_KALLSYMS, O_BUILDID_DIR, O_QUIET, O_FORCE, O_VERBOSE, O_NR };

/* what the command line gave: each option's value (NULL: none) and whether
 * it was given, by O_*; the --changed-func names in order */
struct stream_cli {
	const char *val[O_NR];
	bool set[O_NR];
	const char **chfuncs;
	size_t nch;
};

static int stream_opt(po_ctx *ctx, const opt_def *d, const char *v, bool unset)
{
	struct stream_cli *c = ctx->obj;
	c->set[d->defval] = true;
	c->val[d->defval] = v;
	if (d->defval == O_CHFUNC)
		c->chfuncs[c->nch++] = v;
	return 0;
}

#define ARG PO_NONEG
#define NOARG (PO_NOARG | PO_NONEG)
static const opt_def sopts[O_NR] = {
	{ 0, "stream", O_CALLBACK, 0, NULL, "Enable hot streams comparison.", NOARG, stream_opt, O_STREAM },
	{ 'c', "compute", O_CALLBACK, 0, "cycles", "hot blocks: cycles diff of the basic blocks (needs branch stacks)", ARG, stream_opt, O_COMPUTE },
	{ 0, "cycles-hist", O_CALLBACK, 0, NULL, "Show cycles histogram and standard deviation - WARNING: use only with -c cycles.", NOARG, stream_opt, O_CYCLES_HIST },
	{ 0, "hot-blocks", O_CALLBACK, 0, "n", "also compare the n hottest basic blocks of each profile (default: --stream-top, 5)", PO_OPTARG | PO_NONEG, stream_opt, O_HOT_BLOCKS },
	{ 0, "stream-top", O_CALLBACK, 0, "n", "hot streams kept per profile (default 5)", ARG, stream_opt, O_TOP },
	{ 0, "percent-limit", O_CALLBACK, 0, "percent", "Don't show streams with hits% below this", ARG, stream_opt, O_PLIMIT },
	{ 0, "before", O_CALLBACK, 0, "dir", "source tree of the old profile's program", ARG, stream_opt, O_BEFORE },
	{ 0, "after", O_CALLBACK, 0, "dir", "source tree of the new profile's program", ARG, stream_opt, O_AFTER },
	{ 0, "changed-func", O_CALLBACK, 0, "name", "function changed in the new profile (repeatable)", ARG, stream_opt, O_CHFUNC },
	{ 0, "symfs", O_CALLBACK, 0, "directory", "Look for files with symbols relative to this directory", ARG, stream_opt, O_SYMFS },
	{ 0, "kallsyms", O_CALLBACK, 0, "file", "kallsyms pathname", ARG, stream_opt, O_KALLSYMS },
	{ 0, "buildid-dir", O_CALLBACK, 0, "dir", "build-id cache directory", ARG, stream_opt, O_BUILDID_DIR },
	{ 'q', "quiet", O_CALLBACK, 0, NULL, "Do not show any warnings or messages", NOARG, stream_opt, O_QUIET },
	{ 'f', "force", O_CALLBACK, 0, NULL, "don't complain, do it", NOARG, stream_opt, O_FORCE },
	{ 'v', "verbose", O_CALLBACK, 0, NULL, "be more verbose (-c cycles: block ranges as symbol offsets)", NOARG, stream_opt, O_VERBOSE },
};
#undef ARG
#undef NOARG

static const char *const usage_lines[] = { "diff --stream|-c cycles [<options>] [old_file] [new_file]", NULL };
const po_cmd cmd_diff_stream_opts = {
	"diff", usage_lines, sopts, O_NR, PO_CMD_HELP_EXIT_USAGE, NULL,
};

static int usage(FILE *f)
{
	po_usage(&cmd_diff_stream_opts, NULL, f);
	return EXIT_USAGE;
}

/* Does this `proff diff` command line ask for streams or hot blocks? */
bool cmd_diff_stream_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--stream") || !strcmp(a, "--cycles-hist") ||
		    !strcmp(a, "--compute=cycles") || !strcmp(a, "-ccycles") ||
		    !strcmp(a, "--hot-blocks") || !strncmp(a, "--hot-blocks=", 13))
			return true;
		if ((!strcmp(a, "-c") || !strcmp(a, "--compute")) && i + 1 < argc &&
		    !strcmp(argv[i + 1], "cycles"))
			return true;
	}
	return false;
}

typedef struct load_job {
	const char *path;
	const st_opts *o;
	st_side *side;
	proff_error err;
	int rc;
	pthread_t th;
	bool started;
} load_job;

static void *load_thread(void *arg)
{
	load_job *j = arg;
	j->rc = st_load(j->path, j->o, &j->side, &j->err);
	return NULL;
}

int cmd_diff_stream(int argc, char **argv)
{
	struct stream_cli sc = { .nch = 0 };
	const char **val = sc.val;
	bool *set = sc.set;
	const char **chfuncs = calloc((size_t)argc + 1, sizeof(char *));
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	size_t nch = 0;
	int npos = 0, st;
	int rc = EXIT_USAGE;
	st_side *sides[2] = { NULL, NULL };
	st_srcmap *sm = NULL;
	if (!chfuncs || !pos) {
		cli_errorf("out of memory");
		rc = 1;
		goto out;
	}
	sc.chfuncs = chfuncs;
	if (!po_parse(&cmd_diff_stream_opts, &sc, argc, argv, pos, &npos, &st)) {
		rc = st;
		goto out;
	}
	nch = sc.nch;
	bool cycles = false;
	if (set[O_COMPUTE]) {
		if (strcmp(val[O_COMPUTE], "cycles")) {
			cli_errorf("-c %s: only -c cycles goes with --stream", val[O_COMPUTE]);
			goto out;
		}
		cycles = true;
	}
	if (set[O_CYCLES_HIST] && !cycles) {
		usage(stderr);
		goto out;
	}
	if (!cycles && !set[O_STREAM]) {
		cli_errorf(set[O_HOT_BLOCKS] ? "--hot-blocks goes with -c cycles or --stream"
					     : "diff: neither --stream nor -c cycles given");
		goto out;
	}
	if (set[O_BEFORE] != set[O_AFTER]) {
		cli_errorf("--before and --after go together");
		goto out;
	}
	st_opts so;
	st_opts_init(&so);
	so.symfs = val[O_SYMFS];
	so.kallsyms = val[O_KALLSYMS];
	so.buildid_dir = val[O_BUILDID_DIR];
	so.cycles = cycles;
	so.blocks_only = cycles;     /* -c cycles prints blocks, never streams */
	if (set[O_TOP]) {
		char *end;
		long n = strtol(val[O_TOP], &end, 10);
		if (*end || n < 1 || n > 100000) {
			cli_errorf("--stream-top: '%s' is not a count from 1 to 100000", val[O_TOP]);
			goto out;
		}
		so.top = (unsigned)n;
	}
	unsigned hot_blocks = 0;
	if (set[O_HOT_BLOCKS]) {
		hot_blocks = so.top;
		if (val[O_HOT_BLOCKS]) {
			char *end;
			long n = strtol(val[O_HOT_BLOCKS], &end, 10);
			if (*end || end == val[O_HOT_BLOCKS] || n < 1 || n > 100000) {
				cli_errorf("--hot-blocks: '%s' is not a count from 1 to 100000", val[O_HOT_BLOCKS]);
				goto out;
			}
			hot_blocks = (unsigned)n;
		}
		so.cycles = true;      /* the blocks are collected while loading */
	}
	st_report_opts ro = { 0 };
	if (set[O_PLIMIT]) {
		char *end;
		ro.percent_limit = strtod(val[O_PLIMIT], &end);
		if (*end || end == val[O_PLIMIT] || ro.percent_limit < 0) {
			cli_errorf("--percent-limit: '%s' is not a percentage", val[O_PLIMIT]);
			goto out;
		}
	}
	const char *paths[2] = { "perf.data.old", "perf.data" };
	if (npos == 1)
		paths[1] = pos[0];
	else if (npos >= 2) {
		paths[0] = pos[0];
		paths[1] = pos[1];
	}
	rc = EXIT_SETUP;
	for (int f = 0; hot_blocks && f < 2; f++)
		if (pf_is_trace_file(paths[f])) {
			cli_errorf("%s: --hot-blocks needs branch stacks with cycles (an exact trace has none)", paths[f]);
			goto out;
		}
	if (set[O_BEFORE]) {
		proff_error err = { 0 };
		if (st_srcmap_new(val[O_BEFORE], val[O_AFTER], &sm, &err) < 0) {
			cli_error(&err);
			goto out;
		}
	}
	/* both files load concurrently (separate readers and symbolizers) */
	load_job jobs[2] = { { .path = paths[0], .o = &so }, { .path = paths[1], .o = &so } };
	elf_version(EV_CURRENT);     /* libelf's global init, before any thread */
	jobs[1].started = pthread_create(&jobs[1].th, NULL, load_thread, &jobs[1]) == 0;
	load_thread(&jobs[0]);
	if (jobs[1].started)
		pthread_join(jobs[1].th, NULL);
	else
		load_thread(&jobs[1]);
	sides[0] = jobs[0].side;
	sides[1] = jobs[1].side;
	for (int f = 0; f < 2; f++) {
		if (jobs[f].rc < 0) {
			cli_error(&jobs[f].err);
			goto out;
		}
		if (cycles && !st_has_branches(sides[f])) {
			cli_errorf("%s: -c cycles needs branch stacks (record with -b)", paths[f]);
			goto out;
		}
		if (hot_blocks && (!st_has_branches(sides[f]) || !st_has_cycles(sides[f]))) {
			cli_errorf("%s: --hot-blocks needs branch stacks with cycles (record with -b on a CPU that "
				   "reports cycles, e.g. Intel LBR)", paths[f]);
			goto out;
		}
	}
	st_match_opts mo = { .srcmap = sm, .changed_funcs = nch ? chfuncs : NULL };
	st_cycles_opts co = { .hist = set[O_CYCLES_HIST], .offsets = set[O_VERBOSE], .match = &mo,
			      .hot_blocks = hot_blocks };
	if (cycles) {
		int r = st_cycles_report(stdout, sides[0], sides[1], &co);
		if (r < 0) {
			cli_errorf("-c cycles: %s", r == PROFF_ENOTSUP ? "not available in this build" : "write error");
			goto out;
		}
	} else {
		st_match(sides[0], sides[1], &mo);
		ro.source_section = sm || nch;
		if (st_report(stdout, sides[0], sides[1], &ro) < 0) {
			rc = 1;
			goto out;
		}
	}
	if (hot_blocks) {
		fputc('\n', stdout);
		int r = st_hot_blocks_report(stdout, sides[0], sides[1], &co);
		if (r < 0) {
			cli_errorf("--hot-blocks: %s", r == PROFF_ENOMEM ? "out of memory" : "write error");
			rc = 1;
			goto out;
		}
	}
	rc = 0;
out:
	st_side_free(sides[0]);
	st_side_free(sides[1]);
	st_srcmap_free(sm);
	free(chfuncs);
	free(pos);
	return rc;
}
