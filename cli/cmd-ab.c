/* cmd-ab.c — `proff ab [options] 'COMMAND A' 'COMMAND B'`: what a user types
 * after a change. Both commands (shell command lines, run by /bin/sh -c) are
 * run in turn — warm-up runs first, unrecorded, then A B A B ... recorded
 * into DIR/a.1 ... DIR/a.N and DIR/b.1 ... DIR/b.N, so that a drift of the
 * machine over the minutes falls on both alike — and then `proff diff
 * DIR/a.* -- DIR/b.*` prints every row's delta with its statistics
 * (cmd_diff, with the diff options given here). The recordings stay for
 * later diffs. docs/statistics.md, "proff ab".
 *
 * Exit status: the diff's (0, 3 when --fail-on-regression finds a
 * regression, 255 for its errors), 129 for usage errors, 1 when a command
 * fails or cannot be recorded, 130 when interrupted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "diff-groups.h"
#include "record-cli.h"

#define MAX_RUNS 1000

/* the diff options passed through: name, takes a value */
static const struct { char s; const char *l; bool arg; } diff_opts_fwd[] = {
	{ 0, "test", true }, { 0, "fdr", true }, { 0, "metric", true }, { 0, "min-share", true },
	{ 0, "children", false }, { 0, "significant-only", false }, { 0, "power", false },
	{ 0, "fail-on-regression", true }, { 's', "sort", true }, { 'c', "compute", true },
	{ 'S', "symbols", true }, { 'd', "dsos", true }, { 'C', "comms", true },
	{ 0, "percentage", true }, { 'b', "baseline-only", false }, { 'p', "period", false },
	{ 't', "field-separator", true }, { 'v', "verbose", false }, { 0, "json", false },
	{ 0, "symfs", true }, { 0, "jobs", true },
};
#define NR_FWD (sizeof(diff_opts_fwd) / sizeof(diff_opts_fwd[0]))

static void usage(FILE *f)
{
	fprintf(f,
		"usage: proff ab [options] [diff options] 'COMMAND A' 'COMMAND B'\n\n"
		"Records both commands in turn (warm-up runs first, then A B A B ...) and prints\n"
		"proff diff DIR/a.1 ... -- DIR/b.1 ... with the statistics of every row.\n\n"
		"    -r, --runs N               recorded runs of each command (default 5)\n"
		"    -w, --warmup N             unrecorded runs of each command first (default 1)\n"
		"    -o, --output-dir DIR       where the recordings go (default proff-ab)\n"
		"    -e, --event EV             event to sample (default cpu-clock)\n"
		"    -F, --freq HZ              sampling frequency (default 4000)\n"
		"        --count N              sample every N events instead (ns for cpu-clock)\n"
		"    -g                         record callchains (--children turns them on)\n"
		"    -q, --quiet                no progress lines\n\n"
		"Diff options passed on: --test, --fdr, --metric, --min-share, --children,\n"
		"--significant-only, --power, --fail-on-regression, -s, -c, -S, -d, -C, --percentage,\n"
		"-b, -p, -t, -v, --json, --symfs, --jobs (see proff diff -h).\n");
}

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
	const char *dir, *freq;
	const char *events;
	bool callgraph, quiet, children;
	const char *cmd[2];
	char **fwd;              /* diff options, as given */
	int nfwd;
} ab_cli;

/* argv's option (short letter sh, or long name) is s / l */
static bool is_opt(char sh, const char *name, char s, const char *l)
{
	return (sh && sh == s) || (name && l && !strcmp(name, l));
}

/* returns 0, or an exit status */
static int parse(ab_cli *c, int argc, char **argv)
{
	int ncmd = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (a[0] != '-' || !a[1]) {
			if (ncmd == 2) {
				cli_errorf("ab: a third command '%s': give two (quote each: 'prog-a args' 'prog-b args')", a);
				return EXIT_USAGE;
			}
			c->cmd[ncmd++] = a;
			continue;
		}
		const char *name = a[1] == '-' ? a + 2 : NULL, *val = NULL;
		char sh = name ? 0 : a[1];
		char lbuf[64];
		if (name && strchr(name, '=')) {
			size_t n = (size_t)(strchr(name, '=') - name);
			snprintf(lbuf, sizeof(lbuf), "%.*s", (int)(n < 63 ? n : 63), name);
			val = strchr(name, '=') + 1;
			name = lbuf;
		}
#define IS(S, L) is_opt(sh, name, (S), (L))
#define VALUE() (val ? val : (sh && a[2]) ? a + 2 : (i + 1 < argc) ? argv[++i] : NULL)
		if (IS('h', "help")) {
			usage(stdout);
			return -1;
		}
		if (IS('g', NULL) || IS('q', "quiet")) {
			if (sh && a[2]) {
				cli_errorf("ab: unknown option '%s'", a);
				return EXIT_USAGE;
			}
			if (IS('g', NULL))
				c->callgraph = true;
			else
				c->quiet = true;
			continue;
		}
		if (IS('r', "runs") || IS('w', "warmup") || IS('o', "output-dir") || IS('e', "event") ||
		    IS('F', "freq") || IS(0, "count")) {
			const char *v = VALUE();
			if (!v) {
				cli_errorf("ab: option '%s' needs a value", a);
				return EXIT_USAGE;
			}
			if (IS('r', "runs")) {
				if (parse_count("-r", v, MAX_RUNS, &c->runs))
					return EXIT_USAGE;
				if (!c->runs) {
					cli_errorf("ab: -r needs at least one run of each command");
					return EXIT_USAGE;
				}
			} else if (IS('w', "warmup")) {
				if (parse_count("-w", v, MAX_RUNS, &c->warmup))
					return EXIT_USAGE;
			} else if (IS(0, "count")) {
				if (parse_count("--count", v, UINT64_MAX >> 1, &c->count) || !c->count)
					return EXIT_USAGE;
			} else if (IS('o', "output-dir"))
				c->dir = v;
			else if (IS('e', "event"))
				c->events = v;
			else if (IS('F', "freq"))
				c->freq = v;
			continue;
		}
		/* a diff option: kept with its value */
		bool found = false, takes = false;
		for (size_t k = 0; k < NR_FWD && !found; k++)
			if ((sh && diff_opts_fwd[k].s == sh) || (name && !strcmp(diff_opts_fwd[k].l, name))) {
				found = true;
				takes = diff_opts_fwd[k].arg;
			}
		if (!found) {
			cli_errorf("ab: unknown option '%s'", a);
			usage(stderr);
			return EXIT_USAGE;
		}
		if (name && !strcmp(name, "children"))
			c->children = true;
		c->fwd[c->nfwd++] = argv[i];
		if (takes && !val && !(sh && a[2])) {
			if (i + 1 >= argc) {
				cli_errorf("ab: option '%s' needs a value", a);
				return EXIT_USAGE;
			}
			c->fwd[c->nfwd++] = argv[++i];
		}
#undef IS
#undef VALUE
	}
	if (ncmd != 2) {
		cli_errorf("ab: give the two commands to compare, each quoted: proff ab 'prog-a args' 'prog-b args'");
		usage(stderr);
		return EXIT_USAGE;
	}
	return 0;
}

int cmd_ab(int argc, char **argv)
{
	ab_cli c = { .runs = 5, .warmup = 1, .dir = "proff-ab" };
	c.fwd = calloc((size_t)argc + 1, sizeof(char *));
	char **dargv = NULL, *names = NULL;
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
	dargv = calloc((size_t)c.nfwd + 2 * c.runs + 4, sizeof(char *));
	if (!names || !dargv)
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

	/* proff diff [diff options] DIR/a.* -- DIR/b.* */
	int n = 0;
	dargv[n++] = "diff";
	for (int i = 0; i < c.nfwd; i++)
		dargv[n++] = c.fwd[i];
	for (unsigned long i = 0; i < 2 * c.runs; i++) {
		if (i == c.runs)
			dargv[n++] = "--";
		dargv[n++] = names + i * nlen;
	}
	if (c.runs == 1 && !c.quiet)
		fprintf(stderr, "[ proff ab: one run of each: the diff judges sampling noise only; use -r 5 or more ]\n");
	fflush(stderr);
	ret = cmd_diff(n, dargv);
out:
	free(names);
	free(dargv);
	free(c.fwd);
	return ret;
}
