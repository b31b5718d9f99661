/* cmd-ab.c — `proff ab [options] 'COMMAND A' 'COMMAND B'`: what a user types
 * after a change. Both commands (shell command lines, run by /bin/sh -c) are
 * run in turn — warm-up runs first, unrecorded, then A B A B ... recorded
 * into DIR/a.1 ... DIR/a.N and DIR/b.1 ... DIR/b.N, so that a drift of the
 * machine over the minutes falls on both alike — and then `proff diff
 * DIR/a.* -- DIR/b.*` prints every row's delta with its statistics
 * (diff_cli_run, the diff command's work, with the diff options given
 * here set by diff's own option table). The recordings stay for later
 * diffs. docs/statistics.md, "proff ab".
 *
 * Exit status: the diff's (0, 3 when --fail-on-regression finds a
 * regression, 255 for its errors), 129 for usage errors, 1 when a command
 * fails or cannot be recorded, 130 when interrupted.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "diff-cli.h"
#include "diff-groups.h"
#include "parse-options.h"
#include "record-cli.h"

#define MAX_RUNS 1000

static int parse_count(const char *opt, const char *v, unsigned long max, unsigned long *out)
{
	char *end;
	errno = 0;
	unsigned long x = strtoul(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-' || x > max) {
		cli_errorf("ab: bad value for %s: '%s' (expected a number up to %lu)", opt, v, max);
		return -1;
	}
	*out = x;
	return 0;
}

/* run `sh -c cmd` once, unrecorded; its exit status */
static int run_plain(const char *cmd)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	return 128 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

typedef struct ab_cli {
	unsigned long runs, warmup, count;
	const char *runs_arg, *warmup_arg, *count_arg;
	const char *dir, *freq;
	const char *events;
	bool callgraph, quiet, children;
	const char *cmd[2];
	struct ab_fwd {          /* a diff option: its long name in diff's table */
		const char *name, *arg;
		bool unset;
	} *fwd;
	int nfwd;
} ab_cli;

/* A diff option: set in the diff's options (diff_cli_set) once the runs
 * are recorded, in the order given */
static int opt_forward(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	ab_cli *c = ctx->obj;
	if (!strcmp(d->l, "compute") && !unset && arg && !strcmp(arg, "cycles")) {
		cli_errorf("ab: -c cycles compares the branch cycles of two files (proff diff -c cycles), not runs");
		return EXIT_USAGE;
	}
	c->fwd[c->nfwd++] = (struct ab_fwd){ d->l, arg, unset };
	if (!strcmp(d->l, "children"))
		c->children = !unset;
	return 0;
}

#define F(x) offsetof(ab_cli, x)
#define FWD(S, L, ARGH, HELP) { S, L, O_CALLBACK, 0, ARGH, HELP, (ARGH) ? 0u : PO_NOARG, opt_forward, 0 }
static const opt_def opts[] = {
	{ 'r', "runs", O_STR, F(runs_arg), "N", "recorded runs of each command (default 5)", PO_NONEG, NULL, 0 },
	{ 'w', "warmup", O_STR, F(warmup_arg), "N", "unrecorded runs of each command first (default 1)", PO_NONEG, NULL, 0 },
	{ 'o', "output-dir", O_STR, F(dir), "dir", "where the recordings go (default proff-ab)", PO_NONEG, NULL, 0 },
	{ 'e', "event", O_STR, F(events), "event", "event to sample (default cpu-clock)", 0, NULL, 0 },
	{ 'F', "freq", O_STR, F(freq), "hz", "sampling frequency (default 4000)", 0, NULL, 0 },
	{ 0, "count", O_STR, F(count_arg), "n", "sample every n events instead (ns for cpu-clock)", 0, NULL, 0 },
	{ 'g', NULL, O_BOOL, F(callgraph), NULL, "record callchains (--children turns them on)", 0, NULL, 0 },
	{ 'q', "quiet", O_BOOL, F(quiet), NULL, "no progress lines", 0, NULL, 0 },
	{ 0, NULL, O_GROUP, 0, NULL, "Passed on to proff diff (see proff diff -h):" },
	FWD(0, "test", "welch|mwu", "Welch's t-test (default) or Mann-Whitney U"),
	FWD(0, "fdr", "Q", "false discovery rate, significant when q <= Q (default 0.05)"),
	FWD(0, "metric", "share|absolute", "per-run share of the total (default) or period"),
	FWD(0, "min-share", "P", "rows under P% of the total are not tested (default 0.1)"),
	FWD(0, "children", NULL, "Children (inclusive) values too (records callchains)"),
	FWD(0, "significant-only", NULL, "only rows with a significant change"),
	FWD(0, "power", NULL, "runs per group needed to detect the delta of other rows"),
	FWD(0, "fail-on-regression", "T|T%", "exit 3 when a significant increase above T exists"),
	FWD('s', "sort", "key[,key2...]", "sort by key(s)"),
	FWD('c', "compute", "method", "Entries differential computation selection"),
	FWD('S', "symbols", "symbol[,symbol...]", "only consider these symbols"),
	FWD('d', "dsos", "dso[,dso...]", "only consider symbols in these dsos"),
	FWD('C', "comms", "comm[,comm...]", "only consider symbols in these comms"),
	FWD(0, "percentage", "relative|absolute", "How to display percentage of filtered entries"),
	FWD('b', "baseline-only", NULL, "Show only items with match in baseline"),
	FWD('p', "period", NULL, "Show period values."),
	FWD('t', "field-separator", "separator", "separator for columns"),
	FWD('v', "verbose", NULL, "be more verbose"),
	FWD(0, "json", NULL, "the diff as JSON"),
	FWD(0, "symfs", "directory", "Look for files with symbols relative to this directory"),
	FWD(0, "jobs", "n", "load at most n files at once"),
	PO_UI_OPTIONS,
};
#undef FWD
#undef F

static void help_tail(FILE *f)
{
	fprintf(f, "\nRecords both commands in turn (warm-up runs first, then A B A B ...) and prints\n"
		   "proff diff DIR/a.1 ... -- DIR/b.1 ... with the statistics of every row.\n");
}

static const char *const usage_lines[] = { "ab [<options>] [<diff options>] 'COMMAND A' 'COMMAND B'", NULL };
const po_cmd cmd_ab_opts = {
	"ab", usage_lines, opts, sizeof(opts) / sizeof(opts[0]), 0, help_tail,
};

/* returns 0, -1 (done: -h), or an exit status */
static int parse(ab_cli *c, int argc, char **argv)
{
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0, st;
	if (!pos) {
		cli_errorf("out of memory");
		return 1;
	}
	bool go = po_parse(&cmd_ab_opts, c, argc, argv, pos, &npos, &st);
	if (go && npos > 2) {
		st = po_error(&cmd_ab_opts, NULL, "ab: a third command '%s': give two (quote each: 'prog-a args' 'prog-b args')", pos[2]);
		go = false;
	} else if (go && npos < 2) {
		st = po_error(&cmd_ab_opts, NULL, "ab: give the two commands to compare, each quoted: proff ab 'prog-a args' 'prog-b args'");
		go = false;
	}
	if (go) {
		c->cmd[0] = pos[0];
		c->cmd[1] = pos[1];
	}
	free(pos);
	if (!go)
		return st ? st : -1;
	if (c->runs_arg) {
		if (parse_count("-r", c->runs_arg, MAX_RUNS, &c->runs))
			return EXIT_USAGE;
		if (!c->runs) {
			cli_errorf("ab: -r needs at least one run of each command");
			return EXIT_USAGE;
		}
	}
	if (c->warmup_arg && parse_count("-w", c->warmup_arg, MAX_RUNS, &c->warmup))
		return EXIT_USAGE;
	if (c->count_arg && (parse_count("--count", c->count_arg, UINT64_MAX >> 1, &c->count) || !c->count))
		return EXIT_USAGE;
	return 0;
}

int cmd_ab(int argc, char **argv)
{
	ab_cli c = { .runs = 5, .warmup = 1, .dir = "proff-ab" };
	c.fwd = calloc((size_t)argc + 1, sizeof(*c.fwd));
	char **dpos = NULL, *names = NULL;
	int ret = 1;
	if (!c.fwd)
		return 1;
	int rc = parse(&c, argc, argv);
	if (rc) {
		free(c.fwd);
		return rc < 0 ? 0 : rc;
	}

	rec_opts o;
	memset(&o, 0, sizeof(o));
	o.callgraph = c.callgraph || c.children;
	if (c.events) {
		char *dup = strdup(c.events), *save = NULL;
		if (!dup)
			goto out;
		for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			proff_error err;
			if (o.nr_events >= sizeof(o.events) / sizeof(o.events[0]) ||
			    rec_parse_event(tok, &o.events[o.nr_events], &err)) {
				if (o.nr_events >= sizeof(o.events) / sizeof(o.events[0]))
					cli_errorf("ab: too many events (at most 16)");
				else
					cli_error(&err);
				free(dup);
				ret = EXIT_USAGE;
				goto out;
			}
			o.nr_events++;
		}
		free(dup);
	}
	if (c.count) {
		o.period = c.count;
	} else {
		unsigned long f = 0;
		if (c.freq && (parse_count("-F", c.freq, 10000000, &f) || !f)) {
			ret = EXIT_USAGE;
			goto out;
		}
		o.freq = cli_record_freq(f);
	}
	if (mkdir(c.dir, 0777) && errno != EEXIST) {
		cli_errorf("ab: cannot create %s: %s", c.dir, strerror(errno));
		goto out;
	}
	o.cmdline = argv;
	o.nr_cmdline = (size_t)argc;

	/* the files' names: DIR/a.1 ... DIR/a.N, DIR/b.1 ... */
	size_t nlen = strlen(c.dir) + 24;
	names = calloc(2 * c.runs, nlen);
	dpos = calloc(2 * c.runs + 2, sizeof(char *));
	if (!names || !dpos)
		goto out;
	for (unsigned long i = 0; i < 2 * c.runs; i++)
		snprintf(names + i * nlen, nlen, "%s/%c.%lu", c.dir, i < c.runs ? 'a' : 'b', i % c.runs + 1);

	cli_record_signals();
	for (unsigned long w = 0; w < c.warmup; w++)
		for (int v = 0; v < 2; v++) {
			if (!c.quiet)
				fprintf(stderr, "[ proff ab: warm-up %lu of %lu: %c ]\n", w + 1, c.warmup, 'A' + v);
			int st = run_plain(c.cmd[v]);
			if (cli_record_stopped()) {
				ret = 130;
				goto out;
			}
			if (st) {
				cli_errorf("ab: command %c ('%s') exited with status %d in a warm-up run", 'A' + v, c.cmd[v], st);
				goto out;
			}
		}
	for (unsigned long r = 0; r < c.runs; r++)
		for (int v = 0; v < 2; v++) {
			char *const sh[] = { "/bin/sh", "-c", (char *)c.cmd[v], NULL };
			o.argv = sh;
			o.output = names + ((size_t)v * c.runs + r) * nlen;
			if (!c.quiet)
				fprintf(stderr, "[ proff ab: run %lu of %lu: %c -> %s ]\n", r + 1, c.runs, 'A' + v, o.output);
			int st = cli_record_once(&o, true);
			if (cli_record_stopped()) {
				ret = 130;
				goto out;
			}
			if (st) {
				cli_errorf("ab: command %c ('%s') exited with status %d in run %lu (kept: %s)", 'A' + v, c.cmd[v],
					   st, r + 1, o.output);
				goto out;
			}
		}

	/* proff diff [diff options] DIR/a.* -- DIR/b.*: the diff's options
	 * (the config files', then those given here), and its work */
	if (c.runs == 1 && !c.quiet)
		fprintf(stderr, "[ proff ab: one run of each: the diff judges sampling noise only; use -r 5 or more ]\n");
	fflush(stderr);
	cli_stdout_bulk();
	diff_cli *d = diff_cli_new(&ret);
	if (!d)
		goto out;
	for (int i = 0; i < c.nfwd; i++)
		if ((ret = diff_cli_set(d, c.fwd[i].name, c.fwd[i].arg, c.fwd[i].unset)) != 0) {
			diff_cli_free(d);
			goto out;
		}
	int n = 0;
	for (unsigned long i = 0; i < 2 * c.runs; i++) {
		if (i == c.runs)
			dpos[n++] = NULL;      /* the `--` between the groups */
		dpos[n++] = names + i * nlen;
	}
	ret = diff_cli_run(d, dpos, n);     /* frees dpos */
	dpos = NULL;
	diff_cli_free(d);
out:
	free(names);
	free(dpos);
	free(c.fwd);
	return ret;
}
