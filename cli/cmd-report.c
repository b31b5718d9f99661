/* cmd-report.c — `proff report`: perf report --stdio for perf.data files.
 *
 * Options follow perf report's names and meaning (see docs/compat/report.md
 * for the few deliberate differences). The option table below is the single
 * place options are declared; cli/parse-options.c fills a report_args from it.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "cli-engine.h"
#include "cli-store.h"
#include "cmds.h"
#include "parse-options.h"
#include "proff/calibrate.h"
#include "proff/config.h"
#include "proff/hist.h"
#include "proff/perfdata.h"
#include "proff/plan.h"
#include "proff/profile.h"
#include "proff/report.h"
#include "proff/trace.h"

struct report_args {
	const char *input;
	bool children_set, children;
	const char *callgraph;
	bool inverted;
	int max_stack;
	const char *sort;
	const char *fields;                    /* -F: perf's output fields */
	uint64_t time_quantum;                 /* --time-quantum, ns (0: 100 ms) */
	bool group;                            /* event groups as one report (perf's default; --no-group) */
	const char *parent;
	double percent_limit;
	/* the order the two were given in: perf's --percent-limit sets the
	 * callchain threshold too, and the last of it and -g's number counts */
	int percent_limit_at, callgraph_at;
	const char *percentage;
	const char *comms, *dsos, *symbols, *pids, *tids, *cpus, *time;
	bool quiet, json, dump, header, header_only, force, show_nr_samples, show_total_period, no_compensate, stats, tasks, mmaps;
	const char *calibration;
	bool tree;
	bool inline_frames;                    /* --inline (default) / --no-inline: callchain entries with their inlined frames */
	int verbose;
	const char *symfs, *kallsyms, *buildid_dir;
	const char *sample_type, *label;   /* pprof profiles (lib/formats) */
	const char *flamegraph, *min_width;    /* --flamegraph FILE (cli/cli-flamegraph.c) */
	bool flame_srcline;
	const char *store;                     /* --store URL --where SEL (cli/cli-store.c) */
	char *where[64];
	size_t nwhere;
	const char *engine;                    /* --engine SPEC (cli/cli-engine.h): debugging */
	int branch;                            /* -b 1, --no-branch-stack 0, neither -1 (perf's rule) */
	bool branch_history;                   /* --branch-history */
};

static int opt_children(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	a->children_set = true;
	a->children = !unset && !strcmp(d->l, "children");
	return 0;
}

static int opt_callgraph(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	a->callgraph = unset ? "none" : arg ? arg : "graph";
	a->callgraph_at = (int)ctx->seq;
	return 0;
}

static int opt_percent_limit(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	char *end;
	a->percent_limit = strtod(arg, &end);
	if (end == arg || *end)
		return po_error(ctx->cmd, d, "option `%s' expects a numerical value", d->l);
	a->percent_limit_at = (int)ctx->seq;
	return 0;
}

static int opt_branch(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	a->branch = !unset;
	return 0;
}

/* --where TERM, repeatable: the store's selection (cli/cli-store.c) */
static int opt_where(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	if (a->nwhere == sizeof(a->where) / sizeof(a->where[0]))
		return po_error(ctx->cmd, d, "--where: at most 64 terms");
	a->where[a->nwhere++] = (char *)arg;
	return 0;
}

/* --time-quantum N[ns|us|ms|s] (perf's: a bare number is ns) */
static int opt_time_quantum(po_ctx *ctx, const opt_def *d, const char *arg, bool unset)
{
	struct report_args *a = ctx->obj;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 0);
	if (end == arg || errno || *arg == '-')
		return po_error(ctx->cmd, d, "cannot parse time quantum `%s'", arg);
	while (isspace((unsigned char)*end))
		end++;
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	uint64_t mul = 0;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit))
			mul = units[i].ns;
	if (!mul || (v && v > UINT64_MAX / mul))
		return po_error(ctx->cmd, d, "cannot parse time quantum `%s'", arg);
	if (!v)
		return po_error(ctx->cmd, d, "time quantum cannot be 0");
	a->time_quantum = v * mul;
	return 0;
}

#define F(x) offsetof(struct report_args, x)
static const opt_def options[] = {
	{ 'i', "input", O_STR, F(input), "FILE", "input file name (default perf.data, - for a pipe)", 0, NULL, 0 },
	{ 0, "children", O_CALLBACK, 0, NULL, "accumulate callchains of children into parent entries", PO_NOARG, opt_children, 0 },
	{ 0, "no-children", O_CALLBACK, 0, NULL, "do not accumulate children (Self only)", PO_NOARG | PO_NONEG, opt_children, 0 },
	{ 'g', "call-graph", O_CALLBACK, 0, "print_type,threshold[,print_limit],order,sort_key[,branch],value", "graph|fractal|flat|folded|none, caller|callee, percent|period|count", PO_OPTARG_NEXT, opt_callgraph, 0 },
	{ 'G', "inverted", O_BOOL, F(inverted), NULL, "alias for caller-based call graph", 0, NULL, 0 },
	{ 0, "max-stack", O_INT, F(max_stack), "N", "limit the callchain depth", 0, NULL, 0 },
	{ 'b', "branch-stack", O_CALLBACK, 0, NULL, "rows of branches from the samples' branch stacks (the default when every event has them; --no-branch-stack: rows of samples)", PO_NOARG, opt_branch, 0 },
	{ 0, "branch-history", O_BOOL, F(branch_history), NULL, "callchains of the branch stacks (each branch's target and source, with their predicted/cycles/loop counts) before the callchain, entries by address; rows by srcline,symbol,dso", 0, NULL, 0 },
	{ 's', "sort", O_STR, F(sort), "KEYS", "sort by these keys (SORT KEYS in proff-report(1); proff --list-values sort)", 0, NULL, 0 },
	{ 'F', "fields", O_STR, F(fields), "FIELDS", "the output fields, in order: overhead columns (overhead, overhead_children, sample, period, overhead_sys, ...) and sort keys", 0, NULL, 0 },
	{ 'p', "parent", O_STR, F(parent), "REGEX", "regex filter to identify the parent (default ^sys_|^do_page_fault)", 0, NULL, 0 },
	{ 0, "percent-limit", O_CALLBACK, 0, "N", "do not show entries below N percent", PO_NONEG, opt_percent_limit, 0 },
	{ 0, "percentage", O_STR, F(percentage), "relative|absolute", "how to compute percentages with filters", 0, NULL, 0 },
	{ 'c', "comms", O_STR, F(comms), "LIST", "only show these comms (CSV or file://)", 0, NULL, 0 },
	{ 'd', "dsos", O_STR, F(dsos), "LIST", "only show these dsos", 0, NULL, 0 },
	{ 'S', "symbols", O_STR, F(symbols), "LIST", "only show these symbols", 0, NULL, 0 },
	{ 0, "pid", O_STR, F(pids), "PIDS", "only show these processes", 0, NULL, 0 },
	{ 0, "tid", O_STR, F(tids), "TIDS", "only show these threads", 0, NULL, 0 },
	{ 'C', "cpu", O_STR, F(cpus), "LIST", "only count samples of these CPUs", 0, NULL, 0 },
	{ 0, "group", O_BOOL, F(group), NULL, "an event group's events in one report, side by side (the default for a file with groups; --no-group: apart)", 0, NULL, 0 },
	{ 0, "time-quantum", O_CALLBACK, 0, "N[ns|us|ms|s]", "--sort time: the length of a time slot (default 100ms)", PO_NONEG, opt_time_quantum, 0 },
	{ 0, "time", O_STR, F(time), "RANGES", "only count samples in these time ranges", 0, NULL, 0 },
	{ 'n', "show-nr-samples", O_BOOL, F(show_nr_samples), NULL, "show a column with the number of samples", 0, NULL, 0 },
	{ 0, "show-total-period", O_BOOL, F(show_total_period), NULL, "show a column with the sum of the periods", 0, NULL, 0 },
	{ 'q', "quiet", O_BOOL, F(quiet), NULL, "rows only, no header", 0, NULL, 0 },
	{ 'v', "verbose", O_COUNT, F(verbose), NULL, "full dso names, symbol addresses", 0, NULL, 0 },
	{ 0, "json", O_BOOL, F(json), NULL, "JSON output (see docs/json.md)", 0, NULL, 0 },
	{ 'D', "dump-raw-trace", O_BOOL, F(dump), NULL, "dump the records in ASCII", 0, NULL, 0 },
	{ 0, "header", O_BOOL, F(header), NULL, "print the header (feature sections), then the report", 0, NULL, 0 },
	{ 0, "header-only", O_BOOL, F(header_only), NULL, "print only the header", 0, NULL, 0 },
	{ 0, "tasks", O_BOOL, F(tasks), NULL, "print the threads as a tree of who forked whom, no report", 0, NULL, 0 },
	{ 0, "mmaps", O_BOOL, F(mmaps), NULL, "print the threads' fork tree with each one's maps, no report", 0, NULL, 0 },
	{ 0, "stats", O_BOOL, F(stats), NULL, "print the counts of the file's records and each event's samples, no report", 0, NULL, 0 },
	{ 'f', "force", O_BOOL, F(force), NULL, "don't complain, do it", 0, NULL, 0 },
	{ 0, "symfs", O_STR, F(symfs), "DIR", "look for files under DIR", 0, NULL, 0 },
	{ 0, "kallsyms", O_STR, F(kallsyms), "FILE", "kernel symbols from FILE", 0, NULL, 0 },
	{ 0, "buildid-dir", O_STR, F(buildid_dir), "DIR", "build-id cache directory (default ~/.debug)", 0, NULL, 0 },
	{ 0, "stdio", O_CALLBACK, 0, NULL, "text output (the default)", PO_NOARG | PO_NONEG, NULL, 0 },
	PO_UI_OPTIONS,
	{ 0, "no-compensate", O_BOOL, F(no_compensate), NULL, "exact traces: raw times, no overhead subtraction", PO_NONEG, NULL, 0 },
	{ 0, "calibration", O_STR, F(calibration), "FILE", "proff calibrate -o FILE: exact traces are compensated with it (default $PROFF_CALIBRATION), sampled profiles show the recorder's cost", 0, NULL, 0 },
	{ 'T', "tree", O_BOOL, F(tree), NULL, "exact traces: the execution tree with times and calls", 0, NULL, 0 },
	{ 0, "sample-type", O_STR, F(sample_type), "TYPE", "pprof profiles: the sample type read (name or index; default the last)", 0, NULL, 0 },
	{ 0, "label", O_STR, F(label), "NAME=VALUES", "pprof profiles: only show samples whose label NAME has one of the values", 0, NULL, 0 },
	{ 0, "flamegraph", O_STR, F(flamegraph), "FILE", "write a flame graph instead of the report: FILE.svg, FILE.html (interactive) or FILE.folded (docs/flamegraph.md)", 0, NULL, 0 },
	{ 0, "min-width", O_STR, F(min_width), "PCT", "flame graph: merge frames narrower than PCT % of the total (default 0.1)", 0, NULL, 0 },
	{ 0, "flamegraph-srcline", O_BOOL, F(flame_srcline), NULL, "flame graph: frames by function and source line too", 0, NULL, 0 },
	{ 0, "store", O_STR, F(store), "URL", "report the profiles of a store (a directory or clickhouse://HOST:PORT/DB; docs/fleet.md)", 0, NULL, 0 },
	{ 0, "where", O_CALLBACK, 0, "TERM", "--store: the profiles whose labels match (build=1.2, host=~web-.*, time>=2026-11-01; repeatable)", PO_NONEG, opt_where, 0 },
	{ 0, "engine", O_STR, F(engine), "SPEC", "debugging: reference (the rows by the plain reference path) or engine, with threads=1|2, replay (docs/architecture.md)", 0, NULL, 0 },
	{ 0, "inline", O_BOOL, F(inline_frames), NULL, "callchain entries with their inlined frames (the default; --no-inline: without; docs/symbols.md)", 0, NULL, 0 },
};
#undef F

static const char *const usage_lines[] = { "report [<options>]", NULL };
const po_cmd cmd_report_opts = {
	"report", usage_lines, options, sizeof(options) / sizeof(options[0]), 0, NULL,
};

static int parse_u32_list(const char *s, uint32_t **out, size_t *n)
{
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (*s) {
		char *end;
		errno = 0;
		unsigned long v = strtoul(s, &end, 10);
		if (end == s || errno || v > UINT32_MAX)
			return -1;
		if (PF_GROW(*out, cap, *n + 1) < 0)
			return -1;
		(*out)[(*n)++] = (uint32_t)v;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return 0;
}

/* "0,2-3" -> bitmap */
static int parse_cpu_list(const char *s, uint8_t *mask, size_t bits)
{
	memset(mask, 0, bits / 8);
	while (*s) {
		char *end;
		unsigned long a = strtoul(s, &end, 10), b;
		if (end == s)
			return -1;
		b = a;
		s = end;
		if (*s == '-') {
			s++;
			b = strtoul(s, &end, 10);
			if (end == s || b < a)
				return -1;
			s = end;
		}
		if (b >= bits)
			return -1;
		for (unsigned long c = a; c <= b; c++)
			mask[c / 8] |= (uint8_t)(1u << (c % 8));
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return 0;
}

/* The calibration file: for an exact trace (--calibration FILE, else
 * $PROFF_CALIBRATION) its overheads replace the runtime's start-up estimate;
 * for a sampled profile (--calibration only) its cost per sample is shown in
 * the header. */
static int apply_calibration(const char *path, bool exact, pf_load_opts *lo, report_fmt *fmt)
{
	if (!path && exact)
		path = getenv(CAL_FILE_ENV);
	if (!path || !*path)
		return 0;
	cal_file cf;
	proff_error err;
	proff_err_clear(&err);
	if (cal_file_read(path, &cf, &err) < 0) {
		cli_error(&err);
		return -1;
	}
	if (exact) {
		lo->have_overheads = true;
		lo->o_in_ns = cf.o_in_ns;
		lo->o_full_ns = cf.o_full_ns;
		return 0;
	}
	if (cf.sample_ns <= 0 && cf.sample_cg_ns <= 0) {
		cli_errorf("%s: no sampling cost in this calibration file (run proff calibrate with the sample group)",
			   path);
		return -1;
	}
	fmt->calibration = path;
	fmt->sample_cost_ns = cf.sample_ns;
	fmt->sample_cg_cost_ns = cf.sample_cg_ns;
	return 0;
}

/* --branch-history: what of it proff does (the rest refused, one line);
 * 0 or the exit code */
static int branch_history_setup(struct report_args *a, bool exact, bool regular)
{
	if (exact || a->store) {
		cli_errorf("%s: --branch-history: needs a perf.data file with branch stacks (perf record -b)",
			   a->store ? a->store : a->input);
		return EXIT_USAGE;
	}
	bool by_default = false, sampled = false;
	proff_error err;
	proff_err_clear(&err);
	/* a pipe or a FIFO is not probed (the probe would consume it) */
	if (regular && pf_file_branch_stacks(a->input, &by_default, &sampled, &err) == 0 && !sampled) {
		cli_errorf("%s: Selected --branch-history but no branch data. Did you call perf record without -b?", a->input);
		return 1;
	}
	if (a->sort) {
		int keys[HIST_MAX_KEYS];
		int nk = hist_parse_sort(a->sort, keys, HIST_MAX_KEYS, &err);
		if (nk > 0 && !hist_bh_keys_ok(keys, nk)) {
			cli_errorf("--branch-history: --sort %s: only the keys srcline, sym, dso, comm, pid, tid, cpu are done", a->sort);
			return EXIT_USAGE;
		}
	}
	return 0;
}

/* perf's -g parser: tokens in any order */
static int parse_callgraph(const char *s, report_fmt *f, bool *caller_set, bool *caller, bool *none)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", s);
	int nums = 0;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		if (!strcmp(tok, "graph")) f->cc_mode = CC_GRAPH;
		else if (!strcmp(tok, "fractal")) f->cc_mode = CC_FRACTAL;
		else if (!strcmp(tok, "flat")) f->cc_mode = CC_FLAT;
		else if (!strcmp(tok, "folded")) f->cc_mode = CC_FOLDED;
		else if (!strcmp(tok, "none")) { f->cc_mode = CC_NONE; *none = true; }
		else if (!strcmp(tok, "caller")) { *caller_set = true; *caller = true; }
		else if (!strcmp(tok, "callee")) { *caller_set = true; *caller = false; }
		else if (!strcmp(tok, "function") || !strcmp(tok, "address") || !strcmp(tok, "srcline") ||
			 !strcmp(tok, "branch")) { /* keys: function is the only one implemented */ }
		else if (!strcmp(tok, "percent")) f->cc_value = CCV_PERCENT;
		else if (!strcmp(tok, "period")) f->cc_value = CCV_PERIOD;
		else if (!strcmp(tok, "count")) f->cc_value = CCV_COUNT;
		else {
			char *end;
			double v = strtod(tok, &end);
			if (end == tok || *end)
				return -1;
			if (nums == 0)
				f->cc_threshold = v;
			else if (nums == 1)
				f->cc_print_limit = (unsigned)v;
			else
				return -1;
			nums++;
		}
	}
	return 0;
}

/* -F's sort order: the --sort keys (sort, or none), then each field the
 * sort lacks, in the fields' order */
static int fields_sort(const char *sort, const char *fields, char *out, size_t len)
{
	size_t n = (size_t)snprintf(out, len, "%s", sort ? sort : "");
	for (const char *p = fields; *p;) {
		size_t l = strcspn(p, ",");
		bool have = false;
		for (const char *q = out; *q && !have;) {
			size_t m = strcspn(q, ",");
			have = m == l && !strncmp(q, p, l);
			q += m + (q[m] == ',');
		}
		if (!have && l) {
			if (n + l + 2 > len)
				return -1;
			n += (size_t)snprintf(out + n, len - n, "%s%.*s", n ? "," : "", (int)l, p);
		}
		p += l + (p[l] == ',');
	}
	return n < len ? 0 : -1;
}

static int load_list(pf_strlist *l, const char *spec, const char *what)
{
	char eb[512];
	if (pf_strlist_parse(l, spec, eb, sizeof(eb)) < 0) {
		cli_errorf("--%s: %s", what, eb);
		return -1;
	}
	return 0;
}

/* PROFF_TIMING=1 prints the CPU and wall time of each phase on stderr
 * (development aid) */
static double now_s(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* hist_opts.sequence_done: the profile's raw samples are read no more */
static void drop_sequence(void *prof)
{
	pf_profile_drop_sequence(prof);
}

static void phase(const char *name, double *t0)
{
	static int on = -1;
	static double w0;
	if (on < 0)
		on = getenv("PROFF_TIMING") != NULL;
	double t = now_s(CLOCK_PROCESS_CPUTIME_ID), w = now_s(CLOCK_MONOTONIC);
	if (on && name) {
		struct rusage ru;
		getrusage(RUSAGE_SELF, &ru);
		/* the anonymous part is what fresh pages cost; the mapped file is
		 * in the page cache already */
		long anon = -1, file = -1;
		FILE *st = fopen("/proc/self/status", "r");
		char line[128];
		while (st && fgets(line, sizeof(line), st)) {
			if (!strncmp(line, "RssAnon:", 8))
				anon = atol(line + 8) / 1024;
			else if (!strncmp(line, "RssFile:", 8))
				file = atol(line + 8) / 1024;
		}
		if (st)
			fclose(st);
		fprintf(stderr, "proff: timing: %-8s %.3f s cpu, %.3f s wall, peak RSS %ld MB (now anon %ld, file %ld)\n",
			name, t - *t0, w - w0, ru.ru_maxrss / 1024, anon, file);
	}
	*t0 = t;
	w0 = w;
}

static int print_header_lines(const char *path, bool full)
{
	pd_reader *r;
	proff_error err;
	proff_err_clear(&err);
	if (pd_open(path, &r, &err) < 0) {
		cli_error(&err);
		return -1;
	}
	pd_print_header(r, stdout, full);
	pd_close(r);
	return 0;
}

/* The file's event groups (HEADER_GROUP_DESC), none for a pipe (read
 * once: its stream is the profile's), a FIFO or a file that is not
 * perf.data */
static size_t file_groups(const char *path, pd_group *g, size_t max)
{
	pd_reader *r;
	proff_error err;
	proff_err_clear(&err);
	struct stat st;
	if (!strcmp(path, "-") || stat(path, &st) < 0 || !S_ISREG(st.st_mode) || pd_open(path, &r, &err) < 0)
		return 0;
	size_t n = pd_groups(r, g, max);
	pd_close(r);
	return n;
}

/* perf's group output: the members' hists (made as the leader's), their
 * rows joined to the leader's h, and the columns' values into f */
static int group_report(pf_profile *prof, const pd_group *grp, hist *h, const cli_engine *eng, const hist_opts *o,
			bool srclines, report_fmt *f, uint64_t **gper, uint64_t *gtot, uint64_t *gsam, char *desc,
			size_t desc_len, proff_error *err)
{
	size_t nmemb = grp->nr_members - 1;
	if (nmemb + 1 > 64)
		return proff_err_set(err, PROFF_ENOTSUP, prof->path, PROFF_NO_OFFSET, "an event group of over 64 events");
	hist *mh[64];
	int rc = 0;
	size_t built = 0;
	for (size_t k = 0; k < nmemb && rc == 0; k++) {
		uint32_t ev = grp->leader + 1 + (uint32_t)k;
		if (srclines && (rc = hist_srclines(prof, ev, o, err)) < 0)
			break;
		if ((rc = cli_engine_hist(eng, prof, ev, o, &mh[k], err)) == 0)
			built++;
	}
	if (rc == 0)
		rc = report_group_rows(h, mh, nmemb, gper, err);
	for (size_t k = 0; k <= nmemb && rc == 0; k++) {
		const hist *x = k ? mh[k - 1] : h;
		gtot[k] = f->relative ? x->total_non_filtered_period : x->total_period;
		gsam[k] = f->relative ? x->nr_non_filtered_samples : x->nr_samples;
	}
	for (size_t k = 0; k < built; k++)
		hist_free(mh[k]);
	if (rc < 0)
		return rc;
	hist_key_widths(h);       /* with the rows only the members have */
	size_t n = (size_t)snprintf(desc, desc_len, "%s {", grp->name[0] ? grp->name : "anon group");
	for (size_t k = 0; k <= nmemb && n < desc_len; k++)
		n += (size_t)snprintf(desc + n, desc_len - n, "%s %s", k ? "," : "", prof->events[grp->leader + k].name);
	if (n < desc_len)
		snprintf(desc + n, desc_len - n, " }");
	f->group_n = nmemb + 1;
	f->group_periods = *gper;
	f->group_totals = gtot;
	f->group_samples = gsam;
	f->group_desc = desc;
	return 0;
}

int cmd_report(int argc, char **argv)
{
	cli_stdout_bulk();
	struct report_args a = { .input = "perf.data", .max_stack = -1, .inline_frames = true, .group = true,
				 .branch = -1 };
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0, st;
	if (!pos)
		return 1;
	bool go = po_parse(&cmd_report_opts, &a, argc, argv, pos, &npos, &st);
	if (go && npos) {
		st = po_error(&cmd_report_opts, NULL, "unexpected argument '%s'", pos[0]);
		go = false;
	}
	free(pos);
	if (!go)
		return st;

	if (a.nwhere && !a.store) {
		cli_errorf("--where selects the profiles of a store: give --store URL");
		return EXIT_USAGE;
	}
	bool exact = !a.store && pf_is_trace_file(a.input);
	if (exact && (a.dump || a.header || a.header_only || a.stats || a.tasks || a.mmaps)) {
		/* an exact trace has no perf.data header: its record summary instead */
		return cli_trace_info(a.input);
	}
	if (exact && a.time) {
		cli_errorf("%s: --time: an exact trace has no sample times to select", a.input);
		return 1;
	}
	if (a.tree && !exact) {
		cli_errorf("%s: --tree needs an exact trace (proff record --instrument), not a sampled profile",
			   a.input);
		return 1;
	}
	if (a.header_only || a.dump || a.stats || a.tasks || a.mmaps)
		cli_pager_start("report");
	if (a.header_only)
		return print_header_lines(a.input, true) < 0 ? 1 : 0;
	if (a.dump) {
		pd_reader *r;
		proff_error err;
		proff_err_clear(&err);
		if (pd_open(a.input, &r, &err) < 0 || pd_dump(r, stdout, &err) < 0) {
			cli_error(&err);
			return 1;
		}
		pd_close(r);
		return 0;
	}
	if (a.tasks || a.mmaps) {
		pd_reader *r;
		proff_error err;
		proff_err_clear(&err);
		if (pd_open(a.input, &r, &err) < 0) {
			cli_error(&err);
			return 1;
		}
		int rc = pf_tasks_print(r, a.mmaps, stdout, &err);
		pd_close(r);
		if (rc < 0) {
			cli_error(&err);
			return 1;
		}
		return 0;
	}
	if (a.stats) {
		pd_reader *r;
		pd_record_stats st;
		proff_error err;
		proff_err_clear(&err);
		if (pd_open(a.input, &r, &err) < 0 || pd_record_stats_read(r, &st, &err) < 0) {
			cli_error(&err);
			return 1;
		}
		pd_record_stats_print(r, &st, stdout);
		pd_record_stats_free(&st);
		pd_close(r);
		return 0;
	}

	/* perf's config key report.percent-limit: as the option, given before
	 * the command line's */
	cli_config_warnings();
	const char *cfg_limit = a.percent_limit_at ? NULL : pf_config_get(cli_config(), "report.percent-limit");
	if (cfg_limit) {
		char *end;
		double v = strtod(cfg_limit, &end);
		if (end == cfg_limit || *end || v < 0) {
			cli_config_bad("report.percent-limit", "not a percentage");
		} else {
			a.percent_limit = v;
			a.percent_limit_at = -1;
		}
	}
	report_fmt fmt;
	report_fmt_init(&fmt);
	fmt.quiet = a.quiet;
	fmt.percent_limit = a.percent_limit;
	fmt.show_nr_samples = a.show_nr_samples;
	fmt.show_total_period = a.show_total_period;
	fmt.time_spec = a.time;
	fmt.color = !a.json && cli_use_color("report");
	const char *pct = a.percentage ? a.percentage : pf_config_get(cli_config(), "hist.percentage");
	if (pct && !a.percentage && strcmp(pct, "relative") && strcmp(pct, "absolute")) {
		cli_config_bad("hist.percentage", "neither relative nor absolute");
		pct = NULL;
	}
	if (pct) {
		if (!strcmp(pct, "relative"))
			fmt.relative = true;
		else if (strcmp(pct, "absolute")) {
			cli_errorf("--percentage: '%s' is neither relative nor absolute", pct);
			return EXIT_USAGE;
		}
	}
	bool caller_set = false, caller = false, cc_none = false;
	fmt.cc_mode = CC_GRAPH;
	double thr = fmt.cc_threshold;
	/* perf's call-graph.* config keys: the defaults -g changes */
	static const char *const cg_words[] = { "call-graph.print-type", "call-graph.order" };
	for (size_t k = 0; k < 2; k++) {
		const char *v = pf_config_get(cli_config(), cg_words[k]);
		report_fmt t = fmt;
		bool cs = caller_set, c = caller, n = cc_none;
		if (!v)
			continue;
		if (strchr(v, ',') || parse_callgraph(v, &t, &cs, &c, &n) < 0 || t.cc_threshold != fmt.cc_threshold)
			cli_config_bad(cg_words[k], NULL);
		else
			fmt = t, caller_set = cs, caller = c, cc_none = n;
	}
	static const char *const cg_nums[] = { "call-graph.threshold", "call-graph.print-limit" };
	for (size_t k = 0; k < 2; k++) {
		const char *v = pf_config_get(cli_config(), cg_nums[k]);
		char *end;
		double x = v ? strtod(v, &end) : 0;
		if (!v)
			continue;
		if (end == v || *end || x < 0)
			cli_config_bad(cg_nums[k], "not a number");
		else if (k == 0)
			thr = x;
		else
			fmt.cc_print_limit = (unsigned)x;
	}
	fmt.cc_threshold = -1;      /* set: -g gave a threshold */
	if (a.callgraph && parse_callgraph(a.callgraph, &fmt, &caller_set, &caller, &cc_none) < 0) {
		cli_errorf("invalid --call-graph '%s'", a.callgraph);
		return EXIT_USAGE;
	}
	/* --max-stack 0: perf keeps no frame of any callchain, so no graph
	 * and Children = Self */
	if (a.max_stack == 0)
		cc_none = true;
	if (a.percent_limit_at && (fmt.cc_threshold < 0 || a.percent_limit_at > a.callgraph_at))
		fmt.cc_threshold = a.percent_limit;
	else if (fmt.cc_threshold < 0)
		fmt.cc_threshold = thr;
	if (a.inverted) {
		caller_set = true;
		caller = true;
	}

	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.symfs = a.symfs;
	lo.kallsyms = a.kallsyms;
	lo.buildid_dir = a.buildid_dir;
	lo.max_stack = 0;    /* applied by the hist layer, which knows the callchain order */
	lo.time_spec = a.time;
	lo.demangle_params = a.verbose > 0;
	lo.inline_frames = a.inline_frames;
	lo.no_compensate = a.no_compensate;
	lo.sample_type = a.sample_type;
	lo.label_filter = a.label;
	/* A large file is read in two halves by two threads (the raw-stack
	 * caches are bounded, so the halves cost a few MB more than one read) */
	lo.split_load = true;
	cli_engine eng;
	if (cli_engine_parse("report", a.engine ? a.engine : "engine", &eng) < 0)
		return EXIT_USAGE;
	cli_engine_apply(&eng, NULL, &lo);
	if (eng.reference && (a.store || a.flamegraph || a.tree)) {
		cli_errorf("--engine=reference: a report's rows only (not %s)",
			   a.store ? "--store" : a.flamegraph ? "--flamegraph" : "--tree");
		return EXIT_USAGE;
	}
	if (apply_calibration(a.calibration, exact, &lo, &fmt) < 0)
		return 1;
	uint8_t cpumask[4096 / 8];
	if (a.cpus) {
		if (parse_cpu_list(a.cpus, cpumask, sizeof(cpumask) * 8) < 0) {
			cli_errorf("--cpu: invalid CPU list '%s'", a.cpus);
			return EXIT_USAGE;
		}
		lo.cpu_mask = cpumask;
		lo.cpu_mask_bits = sizeof(cpumask) * 8;
	}

	hist_opts ho;
	hist_opts_init(&ho);
	ho.verbose = a.verbose > 0;
	ho.relative = fmt.relative;
	ho.time_quantum = a.time_quantum;
	ho.max_stack = a.max_stack > 0 ? a.max_stack : 0;
	ho.no_chain = a.max_stack == 0;
	cli_engine_apply(&eng, &ho, NULL);
	if (a.parent)
		ho.parent_regex = a.parent;
	int rc = 0;
	if ((a.comms && load_list(&ho.comms, a.comms, "comms") < 0) ||
	    (a.dsos && load_list(&ho.dsos, a.dsos, "dsos") < 0) ||
	    (a.symbols && load_list(&ho.symbols, a.symbols, "symbols") < 0)) {
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	if ((a.pids && parse_u32_list(a.pids, &ho.pids, &ho.nr_pids) < 0) ||
	    (a.tids && parse_u32_list(a.tids, &ho.tids, &ho.nr_tids) < 0)) {
		cli_errorf("invalid --pid/--tid list");
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	proff_error err;
	proff_err_clear(&err);
	/* perf report's branch mode: rows of branches when the file says it has
	 * branch stacks (or -b), each branch counting 1 (lib/model/branch.c) */
	if (a.branch == 1 && (exact || a.store)) {
		cli_errorf("%s: -b: %s has no branch stacks", a.store ? a.store : a.input,
			   a.store ? "a store's profile" : "an exact trace");
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	/* a pipe or a FIFO (whose header a probe would consume): -b says so */
	struct stat in_st;
	bool regular = strcmp(a.input, "-") && stat(a.input, &in_st) == 0 && S_ISREG(in_st.st_mode);
	bool branch = a.branch == 1 && !regular;
	if (a.branch != 0 && !exact && !a.store && regular) {
		bool by_default = false, sampled = false;
		int br = pf_file_branch_stacks(a.input, &by_default, &sampled, &err);
		proff_err_clear(&err);      /* an unreadable file: the load says why */
		branch = br == 0 && (a.branch == 1 ? sampled : by_default);
		if (a.branch == 1 && br == 0 && !sampled) {
			cli_errorf("%s: Selected -b but no branch data. Did you call perf record without -b?", a.input);
			hist_opts_release(&ho);
			return 1;
		}
	}
	bool bh_pipe = false;
	if (a.branch_history) {
		int brc = branch_history_setup(&a, exact, regular);
		if (brc) {
			hist_opts_release(&ho);
			return brc;
		}
		branch = false;
		lo.branch_history = true;
		/* perf reads a pipe's branch stacks without the header's feature:
		 * no branch counts printed, and Children off (its order stays
		 * Children's, caller) */
		bh_pipe = !regular;
		/* --max-stack cuts the chains as the loader makes them (perf's) */
		lo.branch_history_max_stack = a.max_stack;
		ho.max_stack = 0;
		ho.no_chain = false;
		if (bh_pipe && !a.children_set) {
			a.children_set = true;
			a.children = false;
			if (!caller_set)
				caller_set = caller = true;
		}
		if (!a.sort)
			a.sort = "srcline,symbol,dso";
	}
	if (branch && a.sort && strstr(a.sort, "symbol")) {
		/* perf appends ipc_lbr (IPC columns from the branches' cycles) */
		cli_errorf("--sort %s: in branch mode perf adds its IPC columns (ipc_lbr) to a sort naming a symbol key, "
			   "which proff does not compute yet (docs/compat/report.md); sort by the other keys", a.sort);
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	if (!branch && a.sort) {
		int keys[HIST_MAX_KEYS];
		int nk = hist_parse_sort(a.sort, keys, HIST_MAX_KEYS, &err);
		for (int i = 0; i < nk; i++)
			if (hist_keys[keys[i]].needs & HKN_BRANCH) {
				cli_errorf("Invalid --sort key: `%s' (a branch key: needs a file with branch stacks, perf record -b)",
					   hist_keys[keys[i]].name);
				hist_opts_release(&ho);
				return EXIT_USAGE;
			}
		proff_err_clear(&err);      /* an unknown key: the plan says so */
	}
	if (branch) {
		/* perf: no Children and no callchains in branch mode */
		a.children_set = true;
		a.children = false;
		cc_none = true;
		lo.branch_mode = true;
	}
	ho.sort = a.sort ? a.sort : branch ? "comm,dso_from,symbol_from,symbol_to,cycles" : "comm,dso,sym";
	/* perf report appends ipc_null (the IPC columns, "-" without branch
	 * stacks) to a --sort that names "symbol" anywhere */
	if (a.sort && strstr(a.sort, "ipc")) {
		/* perf prints its usage and reports nothing (exit 0) */
		cli_errorf("--sort %s: the IPC columns come with a sort by symbol, not as keys", a.sort);
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	char sort_ipc[1024];
	if (a.sort && strstr(a.sort, "symbol") && strlen(a.sort) + 10 < sizeof(sort_ipc)) {
		snprintf(sort_ipc, sizeof(sort_ipc), "%s,ipc_null", a.sort);
		ho.sort = sort_ipc;
	}
	char sort_fields[2048];
	if (a.fields) {
		/* perf's strict field order: the columns are the fields, then the
		 * --sort keys they lack; the rows sort by the --sort keys, then
		 * the fields; no Overhead or Children column or sort prefix but
		 * as fields (util/sort.c's setup_sorting) */
		if (a.fields[0] == '+' || !a.fields[0]) {
			cli_errorf("-F '%s': fields added to the default ones (+FIELDS) are not supported", a.fields);
			hist_opts_release(&ho);
			return EXIT_USAGE;
		}
		if (fields_sort(a.sort ? ho.sort : NULL, a.fields, sort_fields, sizeof(sort_fields)) < 0) {
			cli_errorf("-F '%s': too long", a.fields);
			hist_opts_release(&ho);
			return EXIT_USAGE;
		}
		ho.sort = sort_fields;
		ho.no_self_first = ho.no_children_first = true;
		ho.order_replay = true;
		fmt.fields = a.fields;
	}
	/* the loader's options and the stages before the rows: the planner's
	 * (proff/plan.h), from the keys, filters and outputs (an unknown key:
	 * its error) */
	bool children_wanted = a.children_set ? a.children : cli_config_bool("report.children", true);
	plan_request preq = {
		.sort = ho.sort, .thread_filter = ho.nr_pids || ho.nr_tids, .comm_filter = ho.comms.n > 0,
		.children = children_wanted, .graph = !cc_none, .parent = a.parent != NULL,
		.no_stack = a.max_stack == 0, .flamegraph = a.flamegraph != NULL, .report_order = true,
	};
	plan_stages stages;
	if (proff_plan(&preq, &lo, &stages, &err) < 0) {
		cli_error(&err);
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	lo.inline_root_first = caller_set ? caller : children_wanted;
	lo.branch_history_caller = caller_set ? caller : children_wanted;

	if (a.header)
		cli_pager_start("report");
	if (a.header && print_header_lines(a.input, false) < 0) {
		hist_opts_release(&ho);
		return 1;
	}

	if (a.store) {
		/* what a store does not keep is refused, not ignored */
		const char *no = a.comms ? "--comms" : a.dsos ? "--dsos" : a.symbols ? "--symbols" : a.pids ? "--pid" :
				 a.tids ? "--tid" : a.cpus ? "--cpu" : a.time ? "--time" :
				 a.tree ? "--tree" : a.parent ? "--parent" : a.label ? "--label" : NULL;
		if (no) {
			cli_errorf("--store: %s is not available for a store's profiles (docs/fleet.md)", no);
			hist_opts_release(&ho);
			return EXIT_USAGE;
		}
		if (a.flamegraph) {
			/* the store's call paths, one profile per stored profile */
			fg_opts sfo;
			fg_opts_init(&sfo);
			rc = cli_flamegraph_check(a.flamegraph, a.min_width, &sfo);
			sfo.srcline = a.flame_srcline;
			if (!rc)
				rc = cli_store_flamegraph(a.store, NULL, a.where, NULL, a.nwhere, 1, a.flamegraph, &sfo);
			hist_opts_release(&ho);
			return rc;
		}
		/* the store's rows, printed as a file's (cli/cli-store.c) */
		rc = cli_store_report(a.store, a.where, a.nwhere, &ho, &fmt, children_wanted, a.json);
		hist_opts_release(&ho);
		return rc;
	}
	fg_opts fo;
	fg_opts_init(&fo);
	if (a.flamegraph) {
		/* every sample's whole call path, per comm; no raw order */
		int frc = cli_flamegraph_check(a.flamegraph, a.min_width, &fo);
		if (!frc && (a.dsos || a.symbols || a.parent)) {
			cli_errorf("--flamegraph: --dsos, --symbols and --parent hide report rows; a flame graph draws whole call paths (use --comms, --pid, --tid)");
			frc = EXIT_USAGE;
		}
		if (frc) {
			hist_opts_release(&ho);
			return frc;
		}
		children_wanted = false;    /* (the plan kept no raw order, resolved every chain) */
	}
	pf_profile *prof;
	double t0;
	if (children_wanted || a.flamegraph || a.branch_history)
		cli_fast_heap(8);
	phase(NULL, &t0);
	char what[256];
	snprintf(what, sizeof(what), "reading %s", a.input);
	cli_progress *progress = cli_progress_start(what, a.quiet, 1);
	lo.progress = progress ? cli_progress_update : NULL;
	lo.progress_ctx = cli_progress_slot(progress, 0);
	int lrc = pf_profile_load(a.input, &lo, &prof, &err);
	cli_progress_done(progress);
	if (lrc < 0) {
		cli_error(&err);
		hist_opts_release(&ho);
		return 1;
	}
	if (!a.flamegraph || !strcmp(a.flamegraph, "-"))
		cli_pager_start("report");   /* a flame graph written to a file leaves stdout empty */
	for (size_t i = 0; i < prof->nr_warnings; i++)
		cli_warnf("%s", prof->warnings[i]);   /* they name the file */
	cli_trace_quality_warn(a.input, prof->trace_quality);
	fmt.exact = prof->exact != NULL;
	if (a.flamegraph) {
		uint32_t ev = 0;   /* the first event with samples */
		while (ev + 1 < prof->nr_events && !prof->events[ev].nr_samples)
			ev++;
		fo.srcline = a.flame_srcline;
		fo.comms = &ho.comms;
		fo.pids = ho.pids, fo.nr_pids = ho.nr_pids;
		fo.tids = ho.tids, fo.nr_tids = ho.nr_tids;
		rc = cli_flamegraph(a.flamegraph, &prof, &ev, NULL, 1, 1, &fo);
		cli_fast_heap_done();
		pf_profile_free(prof);
		hist_opts_release(&ho);
		return rc;
	}
	if (a.tree) {
		if (report_print_tree(stdout, prof, a.percent_limit) < 0) {
			cli_errorf("%s: out of memory", a.input);
			rc = 1;
		}
		pf_profile_free(prof);
		hist_opts_release(&ho);
		return rc;
	}
	if (a.cpus) {
		bool any = false;
		for (size_t i = 0; i < prof->nr_events; i++)
			any |= prof->events[i].has_cpu;
		if (!any) {
			cli_errorf("%s: file does not contain CPU events; remove --cpu to proceed", a.input);
			pf_profile_free(prof);
			hist_opts_release(&ho);
			return 1;
		}
	}

	/* elided columns: a filter list with exactly one entry */
	char filter_lines[1024] = "";
	if (ho.dsos.n == 1) {
		fmt.elide[HK_DSO] = true;
		snprintf(filter_lines + strlen(filter_lines), sizeof(filter_lines) - strlen(filter_lines),
			 "# dso: %s\n", ho.dsos.items[0]);
	}
	if (ho.comms.n == 1) {
		fmt.elide[HK_COMM] = true;
		snprintf(filter_lines + strlen(filter_lines), sizeof(filter_lines) - strlen(filter_lines),
			 "# comm: %s\n", ho.comms.items[0]);
	}
	if (ho.symbols.n == 1) {
		fmt.elide[HK_SYM] = true;
		snprintf(filter_lines + strlen(filter_lines), sizeof(filter_lines) - strlen(filter_lines),
			 "# symbol: %s\n", ho.symbols.items[0]);
	}
	fmt.sort_starts_with_sym = !strncmp(ho.sort, "sym", 3);

	/* perf skips events without samples (report.skip-empty) and, when no
	 * event kept any (e.g. --cpu or --time left nothing), says so and stops */
	uint64_t kept = 0;
	for (size_t ev = 0; ev < prof->nr_events; ev++)
		kept += prof->events[ev].nr_samples;
	if (!kept && !a.json) {
		if (!a.quiet)
			printf("# To display the perf.data header info, please use --header/--header-only options.\n#\n");
		fflush(stdout);
		fprintf(stderr, "The %s data has no samples!\n", a.input);
		pf_profile_free(prof);
		hist_opts_release(&ho);
		return 0;
	}
	if (!a.quiet && !a.json)
		printf("# To display the perf.data header info, please use --header/--header-only options.\n#\n%s#\n",
		       filter_lines);
	if (a.json)
		report_json_begin(stdout, a.input);
	/* event groups (perf record -e '{a,b}'): one report each, perf's
	 * default; a pipe or a store has no groups here */
	pd_group groups[64];
	size_t ngroups = !a.json && !a.store ? file_groups(a.input, groups, 64) : 0;
	size_t printed = 0;
	for (size_t ev = 0; ev < prof->nr_events; ev++) {
		pf_event *e = &prof->events[ev];
		const pd_group *grp = NULL;
		bool member = false;     /* reported with its group's leader */
		for (size_t g = 0; g < ngroups; g++) {
			if (groups[g].leader == ev)
				grp = &groups[g];
			else if (ev > groups[g].leader && ev < groups[g].leader + groups[g].nr_members)
				member = true;
		}
		if (!a.group && grp) {
			grp = NULL;               /* --no-group: each event apart, */
			fmt.events_plural = true; /* perf's "of events" for a leader still */
		} else {
			fmt.events_plural = false;
		}
		if ((member && a.group) || (!e->nr_samples && kept && !grp))
			continue;
		bool has_cc = e->has_callchain || a.branch_history;
		bool children = has_cc && pf_config_bool(cli_config(), "report.children", true);
		if (a.children_set)
			children = a.children && has_cc;
		report_fmt f = fmt;
		f.children = children;
		f.not_first_event = printed++ > 0;
		if (!has_cc || cc_none)
			f.cc_mode = CC_NONE;
		hist_opts o = ho;
		o.children = children;
		o.callchain = f.cc_mode != CC_NONE;
		o.caller_order = caller_set ? caller : children;
		/* graph, flat and folded print no chain below the threshold (of the
		 * hists total); fractal's threshold is relative to each node */
		if (f.cc_mode == CC_GRAPH || f.cc_mode == CC_FLAT || f.cc_mode == CC_FOLDED)
			o.cc_min_percent = f.cc_threshold;
		o.order_early = true;     /* hist_sort_report below */
		hist *h;
		phase("load", &t0);
		if (getenv("PROFF_TIMING"))
			fprintf(stderr, "proff: timing: %zu aggregated samples, %zu stack nodes, %zu locations, %zu symbols\n",
				prof->nr_samples, prof->nr_nodes, prof->nr_locs, prof->nr_syms);
		bool more = false;     /* another event's report to come */
		for (size_t k = ev + 1; k < prof->nr_events && !more; k++)
			more = prof->events[k].nr_samples || !kept;
		/* the stages before the rows the plan chose (the branch history's
		 * chain srclines first: its rows' twins have perf's callchain text) */
		if (a.branch_history && pf_bhist_srclines(prof) < 0) {
			cli_errorf("%s: out of memory", a.input);
			rc = 1;
			break;
		}
		if (stages.srclines && hist_srclines(prof, (uint32_t)ev, &o, &err) < 0) {
			cli_error(&err);
			rc = 1;
			break;
		}
		cli_engine ev_eng = eng;
		ev_eng.reference |= stages.reference;
		if (a.branch_history) {
			/* rows of the samples' ips; the chains are the branch history's */
			o.callchain = false;
			o.cc_min_percent = 0;
			o.order_early = false;      /* perf's order reads the chains' depths */
		}
		/* the last report that reads the sequence frees it as soon as
		 * its pass is done */
		o.sequence_done = more ? NULL : drop_sequence;
		o.sequence_done_arg = prof;
		int hrc = cli_engine_hist(&ev_eng, prof, (uint32_t)ev, &o, &h, &err);
		if (hrc >= 0 && a.branch_history && f.cc_mode != CC_NONE && hist_branch_history_chains(h, &err) == 0)
			h->bh_no_counts = bh_pipe;
		else if (hrc >= 0 && a.branch_history && f.cc_mode != CC_NONE) {
			if (!err.code)
				proff_err_set(&err, PROFF_ENOMEM, a.input, 0, "out of memory");
			hist_free(h);
			hrc = -1;
		}
		if (!more)
			pf_profile_drop_sequence(prof);   /* the last report that reads it */
		if (hrc < 0) {
			cli_error(&err);
			rc = 1;
			break;
		}
		phase("hist", &t0);
		if (getenv("PROFF_TIMING"))
			fprintf(stderr, "proff: timing: %zu rows\n", h->n);
		/* the columns' widths while perf's order is made on its thread */
		if (!a.json)
			hist_key_widths(h);
		hist_sort_report(h);
		phase("sort", &t0);
		uint64_t *gper = NULL, gtot[64], gsam[64];
		char gdesc[1024];
		if (grp && group_report(prof, grp, h, &ev_eng, &o, stages.srclines, &f, &gper, gtot, gsam, gdesc,
					sizeof(gdesc), &err) < 0) {
			cli_error(&err);
			hist_free(h);
			rc = 1;
			break;
		}
		if (a.json)
			report_print_json(stdout, h, &f, !f.not_first_event);
		else
			report_print_hist(stdout, h, &f, prof->nr_lost_samples);
		fflush(stdout);
		phase("print", &t0);
		free(gper);
		hist_free(h);
	}
	cli_fast_heap_done();
	if (a.json)
		report_json_end(stdout);
	else if (!a.quiet)
		printf("\n\n#\n# (Tip: compare two profiles with: proff diff before.data after.data)\n#\n");
	else
		printf("\n\n");
	pf_profile_free(prof);
	hist_opts_release(&ho);
	return rc;
}
