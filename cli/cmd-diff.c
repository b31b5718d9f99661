/* cmd-diff.c — `proff diff [options] [baseline] [file1 [file2 ...]]`.
 *
 * The command line of perf diff (same options, defaults, config keys,
 * messages and exit codes: 129 for usage errors, 255 for the errors perf
 * reports while setting up), plus --json. Loading is done by the profile
 * model, aggregation by the hist layer, pairing/compute/order/printing by
 * lib/diff.
 *
 * Groups of runs: `proff diff A1 A2 -- B1 B2 [-- C1 ...]` (or any of the
 * statistics options) hands the files, their groups and the options to
 * cli/cmd-diff-groups.c; without `--` and those options the output is perf
 * diff's.
 */
#include <errno.h>
#include <libelf.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cmds.h"
#include "cli-engine.h"
#include "cli-store.h"
#include "diff-cli.h"
#include "diff-groups.h"
#include "parse-options.h"
#include "proff/config.h"
#include "proff/formats.h"
#include "proff/diff.h"
#include "proff/hist.h"
#include "proff/perfdata.h"
#include "proff/plan.h"
#include "proff/profile.h"
#include "proff/reference.h"
#include "proff/symbol.h"

#define EXIT_SETUP 255     /* perf returns -1 from cmd_diff for these */

typedef struct diff_cli {
	diff_opts o;
	bool cycles_hist, stream, dump, force, modules, json;
	int verbose;
	const char *sort, *dsos, *comms, *symbols, *symfs, *kallsyms, *buildid_dir;
	const char *time_str, *cpu_list, *pid_list, *tid_list, *percentage;
	const char *compute_arg, *order_arg, *jobs_arg;
	const char *flamegraph, *min_width;    /* --flamegraph FILE (cli/cli-flamegraph.c) */
	bool flame_srcline;
	/* groups of runs */
	const char *test_arg, *fdr_arg, *metric_arg, *fail_arg, *min_share_arg;
	bool children, significant_only, power;
	const char *sample_type, *label;   /* pprof profiles (lib/formats) */
	const char *store, *replicate;   /* --store URL SEL_A -- SEL_B (cli/cli-store.c) */
	const char *groups_by;           /* --groups-by LABEL: a labelled file's groups (diff_label_runs) */
	const char *engine;              /* --engine SPEC (cli/cli-engine.h): debugging */
	cli_engine eng;
	bool srclines;                   /* the plan's srcline stage (proff/plan.h) */
} diff_cli;

#define F(x) offsetof(diff_cli, x)
static const opt_def opts[] = {
	{ 'v', "verbose", O_COUNT, F(verbose), NULL, "be more verbose (show symbol address, etc)" },
	{ 'q', "quiet", O_BOOL, F(o.quiet), NULL, "Do not show any warnings or messages" },
	{ 'b', "baseline-only", O_BOOL, F(o.baseline_only), NULL, "Show only items with match in baseline" },
	{ 'c', "compute", O_STR, F(compute_arg), "delta,delta-abs,ratio,wdiff:w1,w2 (default delta-abs),cycles",
	  "Entries differential computation selection" },
	{ 'p', "period", O_BOOL, F(o.show_period), NULL, "Show period values." },
	{ 'F', "formula", O_BOOL, F(o.show_formula), NULL, "Show formula." },
	{ 0, "cycles-hist", O_BOOL, F(cycles_hist), NULL,
	  "Show cycles histogram and standard deviation - WARNING: use only with -c cycles." },
	{ 'D', "dump-raw-trace", O_BOOL, F(dump), NULL, "dump raw trace in ASCII" },
	{ 'f', "force", O_BOOL, F(force), NULL, "don't complain, do it" },
	{ 0, "kallsyms", O_STR, F(kallsyms), "file", "kallsyms pathname" },
	{ 'm', "modules", O_BOOL, F(modules), NULL,
	  "load module symbols - WARNING: use only with -k and LIVE kernel" },
	{ 'd', "dsos", O_STR, F(dsos), "dso[,dso...]", "only consider symbols in these dsos" },
	{ 'C', "comms", O_STR, F(comms), "comm[,comm...]", "only consider symbols in these comms" },
	{ 'S', "symbols", O_STR, F(symbols), "symbol[,symbol...]", "only consider these symbols" },
	{ 's', "sort", O_STR, F(sort), "key[,key2...]",
	  "sort by key(s): pid, comm, dso, symbol, parent, cpu, srcline, ... Please refer the man page for the complete list." },
	{ 't', "field-separator", O_STR_NOEMPTY, F(o.field_sep), "separator",
	  "separator for columns, no spaces will be added between columns '.' is reserved." },
	{ 0, "symfs", O_STR, F(symfs), "directory", "Look for files with symbols relative to this directory" },
	{ 0, "buildid-dir", O_STR, F(buildid_dir), "dir",
	  "build-id cache directory (perf's global 'perf --buildid-dir DIR diff')" },
	{ 'o', "order", O_STR, F(order_arg), "n", "Specify compute sorting." },
	{ 0, "percentage", O_STR, F(percentage), "relative|absolute", "How to display percentage of filtered entries" },
	{ 0, "time", O_STR, F(time_str), "str", "Time span (time percent or absolute timestamp)" },
	{ 0, "cpu", O_STR, F(cpu_list), "cpu", "list of cpus to profile" },
	{ 0, "pid", O_STR, F(pid_list), "pid[,pid...]", "only consider symbols in these pids" },
	{ 0, "tid", O_STR, F(tid_list), "tid[,tid...]", "only consider symbols in these tids" },
	{ 0, "stream", O_BOOL, F(stream), NULL, "Enable hot streams comparison." },
	{ 0, "json", O_BOOL, F(json), NULL, "print the rows and every computed value as JSON" },
	{ 0, "store", O_STR, F(store), "url", "compare selections of a store: SELECTOR_A -- SELECTOR_B (docs/fleet.md)" },
	{ 0, "replicate", O_STR, F(replicate), "label",
	  "one run per value of this label (--store, or labelled pprof files: run; default: per profile or file)" },
	{ 0, "groups-by", O_STR, F(groups_by), "label",
	  "the groups by this label's value (labelled pprof files, as proff convert A1 -- B1 -o F writes: group)" },
	{ 0, "flamegraph", O_STR, F(flamegraph), "file",
	  "write a differential flame graph instead: file.svg, file.html (interactive) or file.folded (docs/flamegraph.md)" },
	{ 0, "min-width", O_STR, F(min_width), "pct", "flame graph: merge frames narrower than pct % (default 0.1)" },
	{ 0, "flamegraph-srcline", O_BOOL, F(flame_srcline), NULL, "flame graph: frames by function and source line too" },
	{ 0, "jobs", O_STR, F(jobs_arg), "n", "load at most n files at once (default: all; with groups one per CPU)" },
	PO_UI_OPTIONS,
	{ 0, NULL, O_GROUP, 0, NULL, "Groups of runs (A1 A2 -- B1 B2, docs/statistics.md):" },
	{ 0, "test", O_STR, F(test_arg), "welch|mwu", "groups: Welch's t-test (default) or Mann-Whitney U" },
	{ 0, "fdr", O_STR, F(fdr_arg), "Q", "groups: false discovery rate, significant when q <= Q (default 0.05)" },
	{ 0, "metric", O_STR, F(metric_arg), "share|absolute", "groups: per-run share of the total (default) or period" },
	{ 0, "min-share", O_STR, F(min_share_arg), "P", "groups: rows under P% of the total are not tested (default 0.1)" },
	{ 0, "children", O_BOOL, F(children), NULL, "groups: Children (inclusive) values too" },
	{ 0, "significant-only", O_BOOL, F(significant_only), NULL, "groups: only rows with a significant change" },
	{ 0, "power", O_BOOL, F(power), NULL, "groups: runs per group needed to detect the delta of other rows" },
	{ 0, "fail-on-regression", O_STR, F(fail_arg), "T|T%",
	  "groups: exit 3 when a significant increase above T (points, or T% of the baseline) exists" },
	{ 0, "sample-type", O_STR, F(sample_type), "type", "pprof profiles: the sample type compared (name or index; default the last)" },
	{ 0, "label", O_STR, F(label), "name=value[,value...]", "pprof profiles: only the samples whose label name has one of the values" },
	{ 0, "engine", O_STR, F(engine), "spec",
	  "debugging: reference (rows and pairs by the plain reference path) or engine, with threads=1|2, replay (docs/architecture.md)" },
};
#undef F
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

static const char *const usage_lines[] = { "diff [<options>] [old_file] [new_file]", NULL };
const po_cmd cmd_diff_opts = {
	"diff", usage_lines, opts, NR_OPTS, PO_CMD_HELP_EXIT_USAGE | PO_CMD_DASHDASH_WORD, NULL,
};

/* perf's usage_with_options: everything (d == NULL) or just one option */
static int usage(const opt_def *d, FILE *f)
{
	po_usage(&cmd_diff_opts, d, f);
	return EXIT_USAGE;
}

static const opt_def *find_short(char c)
{
	return po_find(&cmd_diff_opts, NULL, c);
}

static int parse_args(diff_cli *c, int argc, char **argv, char ***files, int *nfiles)
{
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int st;
	if (!pos)
		return EXIT_SETUP;
	*files = pos;
	if (!po_parse(&cmd_diff_opts, c, argc, argv, pos, nfiles, &st))
		return st ? st : -1;    /* -1: done (--list-opts), exit 0 */
	return 0;
}

/* "1,2,5-7" -> bitmap; returns bits or -1 */
static long parse_cpu_list(const char *s, uint8_t **mask)
{
	size_t bits = 4096;
	uint8_t *m = calloc(bits / 8, 1);
	if (!m)
		return -1;
	const char *p = s;
	while (*p) {
		char *end;
		long a = strtol(p, &end, 10), b;
		if (end == p || a < 0)
			goto bad;
		b = a;
		if (*end == '-') {
			p = end + 1;
			b = strtol(p, &end, 10);
			if (end == p || b < a)
				goto bad;
		}
		if ((size_t)b >= bits)
			goto bad;
		for (long x = a; x <= b; x++)
			m[x / 8] |= (uint8_t)(1u << (x % 8));
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			goto bad;
	}
	*mask = m;
	return (long)bits;
bad:
	free(m);
	return -1;
}

static int parse_ids(const char *s, uint32_t **out, size_t *n)
{
	size_t cap = 8;
	uint32_t *v = malloc(cap * sizeof(*v));
	*n = 0;
	if (!v)
		return -1;
	for (const char *p = s; *p;) {
		char *end;
		unsigned long x = strtoul(p, &end, 10);
		if (end == p || x > UINT32_MAX) {
			free(v);
			return -1;
		}
		if (*n == cap) {
			uint32_t *nv = realloc(v, cap * 2 * sizeof(*v));
			if (!nv) {
				free(v);
				return -1;
			}
			v = nv;
			cap *= 2;
		}
		v[(*n)++] = (uint32_t)x;
		p = end;
		while (*p == ',' || *p == ' ')
			p++;
	}
	*out = v;
	return 0;
}

/* The --time string for file idx: "a,b:c,d" gives one range per file in order */
static char *time_spec_for(const char *spec, size_t idx)
{
	if (!strchr(spec, ':'))
		return strdup(spec);
	const char *p = spec;
	for (size_t i = 0; i < idx; i++) {
		p = strchr(p, ':');
		if (!p)
			return NULL;
		p++;
	}
	const char *e = strchr(p, ':');
	size_t len = e ? (size_t)(e - p) : strlen(p);
	if (!len)
		return NULL;
	return strndup(p, len);
}

static int config_defaults(diff_cli *c)
{
	const proff_error *ce = cli_config_load_error();
	if (ce && ce->code) {
		cli_error(ce);
		return EXIT_SETUP;
	}
	const char *v = pf_config_get(cli_config(), "diff.order");
	if (v) {
		char *end;
		long x = strtol(v, &end, 0);
		if (*end || end == v || x < 0 || x > INT_MAX) {
			cli_config_error("diff.order", "not an order");
			return EXIT_SETUP;
		}
		c->o.order = (unsigned)x;
	}
	v = pf_config_get(cli_config(), "diff.compute");
	if (v) {
		char msg[256];
		if (!strcmp(v, "wdiff")) {
			cli_errorf("diff.compute=wdiff needs weights: use wdiff:w1,w2");
			return EXIT_SETUP;
		}
		if (diff_parse_compute(v, &c->o, msg, sizeof(msg))) {
			cli_errorf("Invalid compute method: %s", v);
			return EXIT_SETUP;
		}
	}
	v = pf_config_get(cli_config(), "hist.percentage");
	if (v) {
		if (!strcmp(v, "relative"))
			c->o.relative = true;
		else if (!strcmp(v, "absolute"))
			c->o.relative = false;
		else {
			cli_errorf("Invalid percentage: %s", v);
			return EXIT_SETUP;
		}
	}
	return 0;
}

static int check_owner(const char *path, bool force)
{
	struct stat st;
	if (force || stat(path, &st))
		return 0;    /* a missing file is reported by the loader */
	if (st.st_uid && st.st_uid != geteuid()) {
		cli_errorf("File %s not owned by current user or root (use -f to override)", path);
		return -1;
	}
	return 0;
}

/* One file to load; files are loaded concurrently (each profile is
 * independent), errors are reported afterwards in file order. */
/* The head of a job run by run_jobs (first member of every job struct). */
typedef struct job_thread {
	pthread_t th;
	bool started;
} job_thread;

/* Run fn on n jobs of `size` bytes each, at most `par` at a time (the first
 * of each batch on this thread, the others on threads of their own; a job
 * whose thread cannot start runs here). */
static void run_jobs(void *jobs, size_t size, size_t n, size_t par, void *(*fn)(void *))
{
	char *base = jobs;
	for (size_t b = 0; b < n; b += par) {
		size_t e = b + par < n ? b + par : n;
		for (size_t f = b + 1; f < e; f++) {
			job_thread *t = (job_thread *)(base + f * size);
			t->started = pthread_create(&t->th, NULL, fn, t) == 0;
		}
		fn(base + b * size);
		for (size_t f = b + 1; f < e; f++) {
			job_thread *t = (job_thread *)(base + f * size);
			if (t->started)
				pthread_join(t->th, NULL);
			else
				fn(t);
		}
	}
}

typedef struct load_job {
	job_thread t;
	const char *path;
	pf_load_opts lo;
	char *time_spec;
	pf_profile *prof;
	proff_error err;
	int rc;
} load_job;

/* PROFF_TIMING=1: wall time of each phase on stderr (development aid) */
static void phase(const char *name)
{
	static int on = -1;
	static struct timespec t0;
	if (on < 0) {
		on = getenv("PROFF_TIMING") != NULL;
		clock_gettime(CLOCK_MONOTONIC, &t0);
	}
	if (!on)
		return;
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	fprintf(stderr, "proff: timing: %-12s at %.3f s\n", name,
		(double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) / 1e9);
}

static void *load_thread(void *arg)
{
	load_job *j = arg;
	j->rc = pf_profile_load(j->path, &j->lo, &j->prof, &j->err);
	phase(j->path);
	return NULL;
}

typedef struct hist_job {
	job_thread t;
	pf_profile *prof;
	long evsel;                /* -1: the file has no matching event */
	const hist_opts *ho;
	const cli_engine *eng;
	bool srclines;             /* the plan's srcline stage first (hist_srclines) */
	hist *out;
	proff_error err;
	int rc;
} hist_job;

static void *hist_thread(void *arg)
{
	hist_job *j = arg;
	if (j->evsel >= 0 && j->srclines)
		j->rc = hist_srclines(j->prof, (uint32_t)j->evsel, j->ho, &j->err);
	if (j->evsel >= 0 && j->rc >= 0)
		j->rc = cli_engine_hist(j->eng, j->prof, (uint32_t)j->evsel, j->ho, &j->out, &j->err);
	return NULL;
}

static int dump_file(const char *path)
{
	pd_reader *rd;
	proff_error err = {0};
	if (pd_open(path, &rd, &err) < 0) {
		cli_error(&err);
		return -1;
	}
	int rc = pd_dump(rd, stdout, &err);
	pd_close(rd);
	if (rc < 0) {
		cli_error(&err);
		return -1;
	}
	return 0;
}

/* The groups' options and the groups themselves: pos[] holds the files
 * with NULL where a `--` stood; it is compacted to the files and group[]
 * gets each file's group. Returns 0 or the exit status. */
static int groups_setup(diff_cli *c, diff_group_opts *g, char **pos, int *npos, uint32_t **group_out)
{
	if (c->test_arg) {
		if (!strcmp(c->test_arg, "welch"))
			g->stats.test = STATS_WELCH;
		else if (!strcmp(c->test_arg, "mwu"))
			g->stats.test = STATS_MWU;
		else {
			cli_errorf("diff: --test %s: expected welch or mwu", c->test_arg);
			return EXIT_USAGE;
		}
	}
	if (c->fdr_arg) {
		char *end;
		double q = strtod(c->fdr_arg, &end);
		if (*end || end == c->fdr_arg || !(q > 0 && q < 1)) {
			cli_errorf("diff: --fdr %s: expected a false discovery rate between 0 and 1 (e.g. 0.05)", c->fdr_arg);
			return EXIT_USAGE;
		}
		g->fdr = q;
	}
	if (c->min_share_arg) {
		char *end;
		double v = strtod(c->min_share_arg, &end);
		if (*end || end == c->min_share_arg || !(v >= 0 && v <= 100)) {
			cli_errorf("diff: --min-share %s: expected a percentage of the total, 0 to 100", c->min_share_arg);
			return EXIT_USAGE;
		}
		g->min_share = v;
	}
	if (c->metric_arg) {
		if (!strcmp(c->metric_arg, "share"))
			g->metric = DIFF_METRIC_SHARE;
		else if (!strcmp(c->metric_arg, "absolute"))
			g->metric = DIFF_METRIC_ABSOLUTE;
		else {
			cli_errorf("diff: --metric %s: expected share or absolute", c->metric_arg);
			return EXIT_USAGE;
		}
	}
	if (c->fail_arg) {
		char *end;
		double t = strtod(c->fail_arg, &end);
		bool rel = *end == '%';
		if (end == c->fail_arg || (rel ? end[1] != '\0' : *end != '\0') || !(t >= 0) || !isfinite(t)) {
			cli_errorf("diff: --fail-on-regression %s: expected a threshold T (percentage points of share, "
				   "or the metric's unit) or T%% (relative to the baseline), T >= 0", c->fail_arg);
			return EXIT_USAGE;
		}
		g->fail_on = true;
		g->fail_threshold = t;
		g->fail_relative = rel;
	}
	g->children = c->children;
	g->significant_only = c->significant_only;
	g->power = c->power;
	if (c->o.show_formula) {
		cli_errorf("diff: -F/--formula shows perf's formula of one pair of files; groups of runs have none");
		return EXIT_USAGE;
	}
	if (c->stream || c->o.compute == DIFF_CYCLES) {
		cli_errorf("diff: --stream and -c cycles compare two files, not groups of runs");
		return EXIT_USAGE;
	}
	bool seps;
	int rc = cli_groups_split("diff", pos, npos, group_out, &seps);
	if (rc)
		return rc;
	if (*npos == 1 && !seps)
		(*group_out)[1] = 1;        /* one file: perf.data.old against it */
	return 0;
}

/* groups of runs: the files' load options go to the groups' pipeline
 * (runs' own load options and files when they are parts of files) */
static int run_groups(const diff_cli *c, const diff_group_opts *g, const char **paths, const char **files,
		      const uint32_t *group, size_t nfiles, const load_job *jobs, const pf_load_opts *run_lo,
		      const hist_opts *ho, size_t par, sym_ctx **shared_syms)
{
	pf_load_opts *lo = calloc(nfiles, sizeof(*lo));
	if (!lo)
		return EXIT_SETUP;
	for (size_t f = 0; f < nfiles; f++)
		lo[f] = run_lo ? run_lo[f] : jobs[f].lo;
	/* the files' binaries are mostly the same ones: their symbol tables
	 * read once for all (kernel symbols stay per file) */
	sym_opts so = {
		.symfs = lo[0].symfs, .buildid_dir = lo[0].buildid_dir, .demangle = true,
		.demangle_params = lo[0].demangle_params, .inline_frames = lo[0].inline_frames,
	};
	proff_error serr = { 0 };
	elf_version(EV_CURRENT);
	if (sym_ctx_new(&so, shared_syms, &serr) == 0)
		for (size_t f = 0; f < nfiles; f++)
			lo[f].shared_syms = *shared_syms;
	diff_groups_run d = {
		.paths = paths, .files = files, .group = group, .nruns = nfiles, .load = lo, .ho = ho, .o = &c->o,
		.g = g, .json = c->json, .par = par, .srclines = c->srclines,
	};
	int rc = cmd_diff_groups(&d);
	free(lo);
	return rc;
}

/* --replicate / --groups-by on files: the runs their labels make */
static int run_label_groups(const diff_cli *c, const diff_group_opts *g, const char **paths, const uint32_t *group,
			    size_t nfiles, const load_job *jobs, const hist_opts *ho, size_t par, sym_ctx **shared_syms)
{
	pf_load_opts *lo = calloc(nfiles, sizeof(*lo));
	if (!lo)
		return EXIT_SETUP;
	for (size_t f = 0; f < nfiles; f++)
		lo[f] = jobs[f].lo;
	label_runs r;
	int rc = diff_label_runs(paths, group, nfiles, lo, c->replicate, c->groups_by, &r);
	free(lo);
	if (rc)
		return rc;
	if (c->o.order > r.group[r.n - 1]) {
		fprintf(stderr, "Order option out of limit.\n");
		rc = EXIT_SETUP;
	} else {
		rc = run_groups(c, g, (const char **)r.names, r.files, r.group, r.n, jobs, r.load, ho, par, shared_syms);
	}
	label_runs_free(&r);
	return rc;
}

/* The diff command's configuration: config files' defaults (diff.order,
 * diff.compute, hist.percentage), then options set over them. */
diff_cli *diff_cli_new(int *status)
{
	diff_cli *c = calloc(1, sizeof(*c));
	if (!c) {
		cli_errorf("out of memory");
		*status = EXIT_SETUP;
		return NULL;
	}
	diff_opts_init(&c->o);
	*status = config_defaults(c);
	if (*status) {
		free(c);
		return NULL;
	}
	return c;
}

void diff_cli_free(diff_cli *c)
{
	free(c);
}

int diff_cli_set(diff_cli *c, const char *long_name, const char *arg, bool unset)
{
	const opt_def *d = po_find(&cmd_diff_opts, long_name, 0);
	if (!d) {
		cli_errorf("diff: no option --%s", long_name);
		return EXIT_USAGE;
	}
	return po_set(&cmd_diff_opts, c, d, arg, unset);
}

int cmd_diff(int argc, char **argv)
{
	cli_stdout_bulk();
	/* hot streams and hot blocks have their own command line (cmd-diff-stream.c) */
	if (cmd_diff_stream_wanted(argc, argv))
		return cmd_diff_stream(argc, argv);

	int rc;
	diff_cli *c = diff_cli_new(&rc);
	if (!c)
		return rc;
	char **pos = NULL;
	int npos = 0;
	rc = parse_args(c, argc, argv, &pos, &npos);
	if (rc) {
		free(pos);
		diff_cli_free(c);
		return rc < 0 ? 0 : rc;
	}
	rc = diff_cli_run(c, pos, npos);
	diff_cli_free(c);
	return rc;
}

/* The diff's work on the parsed options (cmd_diff, proff ab): pos[0, npos)
 * the words that are not options, NULL where a `--` stood; pos is freed. */
int diff_cli_run(diff_cli *c, char **pos, int npos)
{
	uint32_t *group = NULL;     /* groups of runs: each file's group */
	int rc;
	rc = EXIT_USAGE;
	diff_opts *o = &c->o;
	o->verbose = c->verbose > 0;
	if (c->compute_arg) {
		char msg[300];
		if (diff_parse_compute(c->compute_arg, o, msg, sizeof(msg))) {
			fprintf(stderr, "%s\n", msg);
			usage(find_short('c'), stderr);
			goto out_free;
		}
	}
	if (c->order_arg) {
		char *end;
		long x = strtol(c->order_arg, &end, 0);
		if (*end || end == c->order_arg || x < 0 || x > INT_MAX) {
			fprintf(stderr, "  Error: switch `o' expects a numerical value\n");
			usage(find_short('o'), stderr);
			goto out_free;
		}
		o->order = (unsigned)x;
	}
	if (c->percentage) {
		if (!strcmp(c->percentage, "relative"))
			o->relative = true;
		else if (!strcmp(c->percentage, "absolute"))
			o->relative = false;
		else {
			usage(po_find(&cmd_diff_opts, "percentage", 0), stderr);
			goto out_free;
		}
	}
	if (c->cycles_hist && o->compute != DIFF_CYCLES) {
		usage(NULL, stderr);
		goto out_free;
	}

	/* groups of runs: `--` separates them; the statistics options alone
	 * make every file a group of its own */
	diff_group_opts gopt;
	diff_group_opts_init(&gopt);
	bool stats_opts = c->test_arg || c->fdr_arg || c->metric_arg || c->fail_arg || c->min_share_arg || c->children ||
			  c->significant_only || c->power;
	size_t nsep = 0;
	for (int i = 0; i < npos; i++)
		nsep += !pos[i];
	/* runs (and groups) that are parts of files, by their labels */
	bool split = (c->replicate || c->groups_by) && !c->store;
	if (c->groups_by && (nsep || c->store)) {
		cli_errorf(c->store ? "diff: --groups-by splits labelled files; a store's groups are its selectors (A -- B)"
				   : "diff: --groups-by %s makes the groups: give the files without '--'", c->groups_by);
		rc = EXIT_USAGE;
		goto out_free;
	}
	if (split && (!npos || c->flamegraph)) {
		cli_errorf(npos ? "diff: --flamegraph compares two files, not runs split by labels"
				: "diff: --replicate/--groups-by split the files given: give one (proff diff --groups-by "
				  "group --replicate run FILE)");
		rc = EXIT_USAGE;
		goto out_free;
	}
	if (nsep || stats_opts || c->store || split) {
		rc = groups_setup(c, &gopt, pos, &npos, &group);
		if (rc)
			goto out_free;
		rc = EXIT_USAGE;
	}

	const char *defaults[2] = { "perf.data.old", "perf.data" };
	const char **paths;
	size_t nfiles;
	if (npos >= 2 || split) {
		paths = (const char **)pos;
		nfiles = (size_t)npos;
	} else {
		if (npos == 1)
			defaults[1] = pos[0];
		paths = defaults;
		nfiles = 2;
	}

	rc = EXIT_SETUP;
	if (group && npos < 2 && !split) {
		/* the default files, a group each */
		free(group);
		group = calloc(2, sizeof(*group));
		if (!group)
			goto out_free;
		group[1] = 1;
	}
	if (!split && o->order >= (group ? group[nfiles - 1] + 1 : nfiles)) {
		fprintf(stderr, "Order option out of limit.\n");
		goto out_free;
	}

	/* -s / filters */
	hist_opts ho;
	hist_opts_init(&ho);
	ho.sort = c->sort ? c->sort : "dso,sym";
	ho.diff_mode = true;
	ho.verbose = o->verbose;
	ho.relative = o->relative;
	if (cli_engine_parse("diff", c->engine ? c->engine : "engine", &c->eng) < 0) {
		rc = EXIT_USAGE;
		goto out_free;
	}
	cli_engine_apply(&c->eng, &ho, NULL);
	if (c->eng.reference && (c->store || c->flamegraph || group || split)) {
		cli_errorf("--engine=reference: files compared as perf diff does only (not groups of runs, stores or "
			   "flame graphs)");
		rc = EXIT_USAGE;
		goto out_free;
	}
	{
		int keys[HIST_MAX_KEYS];
		proff_error err = {0};
		if (hist_parse_sort(ho.sort, keys, HIST_MAX_KEYS, &err) < 0) {
			fprintf(stderr, "  Error: Invalid --sort key: `%s'\n", ho.sort);
			usage(find_short('s'), stderr);
			rc = EXIT_USAGE;
			goto out_free;
		}
	}
	if (c->store) {
		/* what a store does not keep is refused, not ignored */
		const char *no = c->dsos ? "--dsos" : c->comms ? "--comms" : c->symbols ? "--symbols" : c->pid_list ? "--pid" :
				 c->tid_list ? "--tid" : c->time_str ? "--time" : c->cpu_list ? "--cpu" : NULL;
		if (no) {
			cli_errorf("--store: %s is not available for a store's profiles (docs/fleet.md)", no);
			rc = EXIT_USAGE;
			goto out_hopts;
		}
		if (c->flamegraph) {
			/* a differential flame graph of the two selectors' replicates */
			fg_opts sfo;
			fg_opts_init(&sfo);
			if ((rc = cli_flamegraph_check(c->flamegraph, c->min_width, &sfo)) != 0)
				goto out_hopts;
			sfo.srcline = c->flame_srcline;
			sfo.stats = gopt.stats;
			sfo.fdr = gopt.fdr;
			sfo.absolute = gopt.metric == DIFF_METRIC_ABSOLUTE;
			rc = cli_store_flamegraph(c->store, c->replicate, pos, group, (size_t)npos, 2, c->flamegraph, &sfo);
			goto out_hopts;
		}
		/* the positional words are selectors (cli/cli-store.c) */
		rc = cli_store_diff(c->store, c->replicate, pos, group, (size_t)npos, &ho, o, &gopt, c->json);
		goto out_hopts;
	}
	struct { const char *spec; pf_strlist *l; size_t *n; const char *what; } lists[] = {
		{ c->dsos, &ho.dsos, &o->nr_dso_filter, "--dsos" },
		{ c->comms, &ho.comms, &o->nr_comm_filter, "--comms" },
		{ c->symbols, &ho.symbols, &o->nr_sym_filter, "--symbols" },
	};
	for (size_t i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		char ebuf[512];
		if (!lists[i].spec)
			continue;
		if (pf_strlist_parse(lists[i].l, lists[i].spec, ebuf, sizeof(ebuf)) < 0) {
			cli_errorf("%s: %s", lists[i].what, ebuf);
			goto out_hopts;
		}
		*lists[i].n = lists[i].l->n;
	}
	if (c->pid_list && parse_ids(c->pid_list, &ho.pids, &ho.nr_pids) < 0) {
		cli_errorf("--pid: invalid list '%s'", c->pid_list);
		goto out_hopts;
	}
	if (c->tid_list && parse_ids(c->tid_list, &ho.tids, &ho.nr_tids) < 0) {
		cli_errorf("--tid: invalid list '%s'", c->tid_list);
		goto out_hopts;
	}
	fg_opts fo;
	fg_opts_init(&fo);
	if (c->flamegraph) {
		if ((rc = cli_flamegraph_check(c->flamegraph, c->min_width, &fo)) != 0)
			goto out_hopts;
		if (c->dsos || c->symbols) {
			cli_errorf("--flamegraph: --dsos and --symbols hide diff rows; a flame graph draws whole call paths (use --comms, --pid, --tid)");
			rc = EXIT_USAGE;
			goto out_hopts;
		}
		if (group && group[nfiles - 1] != 1) {
			cli_errorf("--flamegraph: a differential flame graph compares two groups of runs, not %u",
				   group[nfiles - 1] + 1);
			rc = EXIT_USAGE;
			goto out_hopts;
		}
		if (!group && nfiles != 2) {
			cli_errorf("--flamegraph: a differential flame graph compares two files, not %zu", nfiles);
			rc = EXIT_USAGE;
			goto out_hopts;
		}
		rc = EXIT_SETUP;
	}
	ho.children = c->children;
	/* the loader's options and the stages before the rows: the planner's
	 * (proff/plan.h), from the keys, filters and outputs */
	plan_request preq = {
		.sort = ho.sort, .thread_filter = ho.nr_pids || ho.nr_tids, .comm_filter = ho.comms.n > 0,
		.children = c->children, .flamegraph = c->flamegraph != NULL,
	};
	plan_stages stages = { 0 };
	pf_load_opts planned;
	pf_load_opts_init(&planned);
	{
		proff_error perr = {0};
		if (proff_plan(&preq, &planned, &stages, &perr) < 0) {
			cli_error(&perr);
			rc = EXIT_USAGE;
			goto out_hopts;
		}
	}
	c->srclines = stages.srclines;
	uint8_t *cpu_mask = NULL;
	long cpu_bits = 0;
	if (c->cpu_list) {
		cpu_bits = parse_cpu_list(c->cpu_list, &cpu_mask);
		if (cpu_bits < 0) {
			fprintf(stderr, "Invalid cpu_list\n");
			goto out_hopts;
		}
	}

	/* load every file completely (concurrently; results used in file order) */
	pf_profile **profs = calloc(nfiles, sizeof(*profs));
	load_job *jobs = calloc(nfiles, sizeof(*jobs));
	sym_ctx *shared_syms = NULL;   /* below: before the loads */
	if (!profs || !jobs) {
		free(jobs);
		goto out_cpu;
	}
	for (size_t f = 0; f < nfiles; f++) {
		if (check_owner(paths[f], c->force))
			goto out_jobs;
		if (c->dump && dump_file(paths[f]))
			goto out_jobs;
		load_job *j = &jobs[f];
		j->path = paths[f];
		pf_load_opts_init(&j->lo);
		j->lo.symfs = c->symfs;
		j->lo.kallsyms = c->kallsyms;
		j->lo.sample_type = c->sample_type;
		j->lo.label_filter = c->label;
		if (c->buildid_dir)
			j->lo.buildid_dir = c->buildid_dir;
		j->lo.use_callchain = planned.use_callchain;
		j->lo.merge_threads = planned.merge_threads;
		j->lo.merge_by_comm = planned.merge_by_comm;
		j->lo.keep_sequence = planned.keep_sequence;
		j->lo.cpu_mask = cpu_mask;
		j->lo.cpu_mask_bits = cpu_mask ? (size_t)cpu_bits : 0;
		cli_engine_apply(&c->eng, NULL, &j->lo);
		if (c->time_str) {
			j->time_spec = time_spec_for(c->time_str, f);
			if (!j->time_spec) {
				fprintf(stderr, "Invalid time string\n");
				goto out_jobs;
			}
			j->lo.time_spec = j->time_spec;
		}
	}
	size_t par = nfiles;
	if (c->jobs_arg) {
		long x = strtol(c->jobs_arg, NULL, 10);
		par = x < 1 ? 1 : (size_t)x;
	}
	o->color = !c->json && cli_use_color("diff");   /* perf's colours, on a terminal */
	if (split) {
		rc = run_label_groups(c, &gopt, paths, group, nfiles, jobs, &ho, c->jobs_arg ? par : 0, &shared_syms);
		goto out_jobs;
	}
	if (group && !c->flamegraph) {
		rc = run_groups(c, &gopt, paths, NULL, group, nfiles, jobs, NULL, &ho, c->jobs_arg ? par : 0, &shared_syms);
		goto out_jobs;
	}
	elf_version(EV_CURRENT);     /* libelf's global init, before any thread */
	/* the files' binaries are mostly the same ones: their symbol tables
	 * read once for all (kernel symbols stay per file) */
	if (nfiles > 1) {
		sym_opts so = {
			.symfs = jobs[0].lo.symfs, .buildid_dir = jobs[0].lo.buildid_dir, .demangle = true,
			.demangle_params = jobs[0].lo.demangle_params, .inline_frames = jobs[0].lo.inline_frames,
		};
		proff_error serr = {0};   /* out of memory: each file keeps its own */
		if (sym_ctx_new(&so, &shared_syms, &serr) == 0)
			for (size_t f = 0; f < nfiles; f++)
				jobs[f].lo.shared_syms = shared_syms;
	}
	cli_fast_heap(2);   /* its RSS target: no more ahead */
	phase("start");
	char what[64];
	snprintf(what, sizeof(what), "reading %zu files", nfiles);
	cli_progress *progress = cli_progress_start(what, o->quiet, nfiles);
	for (size_t f = 0; progress && f < nfiles; f++) {
		jobs[f].lo.progress = cli_progress_update;
		jobs[f].lo.progress_ctx = cli_progress_slot(progress, f);
	}
	run_jobs(jobs, sizeof(*jobs), nfiles, par, load_thread);
	cli_progress_done(progress);
	for (size_t f = 0; f < nfiles; f++)
		profs[f] = jobs[f].prof;
	for (size_t f = 0; f < nfiles; f++) {
		if (jobs[f].rc < 0) {
			cli_error(&jobs[f].err);
			goto out_jobs;
		}
		cli_trace_quality_warn(paths[f], profs[f]->trace_quality);   /* exact traces' anomalies, as report */
		if (c->cpu_list) {
			for (size_t e = 0; e < profs[f]->nr_events; e++)
				if (!profs[f]->events[e].has_cpu) {
					fprintf(stderr, "File does not contain CPU events. Remove -C option to proceed.\n");
					goto out_jobs;
				}
		}
	}
	if (o->compute == DIFF_CYCLES || c->stream) {
		for (size_t f = 0; f < nfiles; f++)
			if (!profs[f]->has_branch_stack_feature) {
				cli_errorf("%s: %s needs branch stacks (record with -b)", paths[f],
					   c->stream ? "--stream" : "-c cycles");
				goto out_jobs;
			}
		/* the command line forms are handled by cmd_diff_stream(); only the
		 * config key diff.compute = cycles gets here */
		cli_errorf("diff.compute = cycles: give -c cycles on the command line instead");
		goto out_jobs;
	}

	if (c->flamegraph) {
		/* the baseline's first event with samples, and every other file's of the same event */
		uint32_t *ev = calloc(nfiles, sizeof(*ev));
		uint8_t *side = calloc(nfiles, sizeof(*side));
		if (!ev || !side) {
			free(ev);
			free(side);
			goto out_jobs;
		}
		while (ev[0] + 1 < profs[0]->nr_events && !profs[0]->events[ev[0]].nr_samples)
			ev[0]++;
		const pf_event *be = &profs[0]->events[ev[0]];
		size_t nside[2] = { 0, 0 };
		for (size_t f = 0; f < nfiles; f++) {
			while (f && ev[f] + 1 < profs[f]->nr_events &&
			       (profs[f]->events[ev[f]].type != be->type || profs[f]->events[ev[f]].config != be->config))
				ev[f]++;
			const pf_event *fe = f < nfiles && profs[f]->nr_events ? &profs[f]->events[ev[f]] : NULL;
			if (!fe || fe->type != be->type || fe->config != be->config) {
				cli_errorf("%s: no %s samples to compare with %s's", paths[f], be->name, paths[0]);
				free(ev);
				free(side);
				goto out_jobs;
			}
			side[f] = group ? (uint8_t)group[f] : (uint8_t)f;
			nside[side[f]]++;
		}
		fo.srcline = c->flame_srcline;
		fo.comms = &ho.comms;
		fo.pids = ho.pids, fo.nr_pids = ho.nr_pids;
		fo.tids = ho.tids, fo.nr_tids = ho.nr_tids;
		/* repeated runs on both sides: the groups' test on the frames'
		 * per-run values; one run on a side: sampling noise (docs/flamegraph.md) */
		fo.runs = nside[0] > 1 && nside[1] > 1;
		fo.stats = gopt.stats;
		fo.fdr = gopt.fdr;
		fo.absolute = gopt.metric == DIFF_METRIC_ABSOLUTE;
		rc = cli_flamegraph(c->flamegraph, profs, ev, side, nfiles, 2, &fo);
		free(ev);
		free(side);
		goto out_jobs;
	}
	cli_pager_start("diff");
	if (c->json)
		diff_json_begin(o, paths, nfiles, ho.sort, stdout);
	const pf_profile *base = profs[0];
	hist **hs = calloc(nfiles, sizeof(*hs));
	if (!hs)
		goto out_jobs;
	bool first = true;
	rc = 0;
	for (size_t ev = 0; ev < base->nr_events && !rc; ev++) {
		const pf_event *be = &base->events[ev];
		proff_error err = {0};
		/* every file's hists at once (as the loads) */
		hist_job *hj = calloc(nfiles, sizeof(*hj));
		if (!hj) {
			rc = EXIT_SETUP;
			break;
		}
		for (size_t f = 0; f < nfiles; f++) {
			hs[f] = NULL;
			long match = -1;
			if (f == 0)
				match = (long)ev;
			else
				for (size_t e = 0; e < profs[f]->nr_events && match < 0; e++)
					if (profs[f]->events[e].type == be->type && profs[f]->events[e].config == be->config)
						match = (long)e;
			/* profiles of one event each, one of them read from pprof or
			 * folded stacks under a name that is no perf event's (Go's
			 * "cpu" against a perf.data's cpu-clock): that event */
			if (match < 0 && profs[0]->nr_events == 1 && profs[f]->nr_events == 1 &&
			    (be->type == PF_EVENT_TYPE_NAMED || profs[f]->events[0].type == PF_EVENT_TYPE_NAMED))
				match = 0;
			hj[f] = (hist_job){ .prof = profs[f], .evsel = match, .ho = &ho, .eng = &c->eng, .srclines = stages.srclines };
		}
		run_jobs(hj, sizeof(*hj), nfiles, par, hist_thread);
		for (size_t f = 0; f < nfiles; f++) {
			hs[f] = hj[f].out;
			if (hj[f].rc < 0 && !rc) {
				cli_error(&hj[f].err);
				rc = EXIT_SETUP;
			}
		}
		free(hj);
		if (!rc) {
			diff_result *dr = NULL;
			if ((c->eng.reference ? diff_compute_reference : diff_compute)((const hist *const *)hs, nfiles, o, &dr,
										      &err) < 0) {
				cli_error(&err);
				rc = EXIT_SETUP;
			} else {
				if (c->json)
					diff_json_event(dr, o, be->name, be->type, be->config, first, stdout);
				else
					diff_print_text(dr, o, be->name, paths, first, stdout);
				diff_result_free(dr);
			}
		}
		first = false;
		for (size_t f = 0; f < nfiles; f++) {
			hist_free(hs[f]);
			hs[f] = NULL;
		}
	}
	if (c->json && !rc)
		diff_json_end(stdout);
	free(hs);
	cli_fast_heap_done();
	phase("printed");
out_jobs:
	for (size_t f = 0; f < nfiles; f++) {
		if (jobs[f].prof)
			pf_profile_free(jobs[f].prof);
		free(jobs[f].time_spec);
	}
	sym_ctx_free(shared_syms);
	free(jobs);
	free(profs);
out_cpu:
	free(cpu_mask);
out_hopts:
	hist_opts_release(&ho);
out_free:
	free(group);
	free(pos);
	phase("freed");
	return rc;
}
