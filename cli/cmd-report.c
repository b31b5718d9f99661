/* cmd-report.c — `proff report`: perf report --stdio for perf.data files.
 *
 * Options follow perf report's names and meaning (see docs/compat/report.md
 * for the few deliberate differences). The option table below is the single
 * place options are declared; parsing fills a report_args.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "cli-store.h"
#include "cmds.h"
#include "proff/calibrate.h"
#include "proff/config.h"
#include "proff/hist.h"
#include "proff/perfdata.h"
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
	const char *parent;
	double percent_limit;
	/* the order the two were given in: perf's --percent-limit sets the
	 * callchain threshold too, and the last of it and -g's number counts */
	int percent_limit_at, callgraph_at;
	const char *percentage;
	const char *comms, *dsos, *symbols, *pids, *tids, *cpus, *time;
	bool quiet, json, dump, header, header_only, force, show_nr_samples, no_compensate;
	const char *calibration;
	bool tree;
	bool no_inline;                        /* --no-inline: callchain entries without their inlined frames */
	int verbose;
	const char *symfs, *kallsyms, *buildid_dir;
	const char *sample_type, *label;   /* pprof profiles (lib/formats) */
	const char *flamegraph, *min_width;    /* --flamegraph FILE (cli/cli-flamegraph.c) */
	bool flame_srcline;
	const char *store;                     /* --store URL --where SEL (cli/cli-store.c) */
	char *where[64];
	size_t nwhere;
};

enum {
	O_CHILDREN = 256, O_NO_CHILDREN, O_MAX_STACK, O_PERCENT_LIMIT, O_PERCENTAGE, O_PID, O_TID,
	O_CPU, O_TIME, O_JSON, O_HEADER, O_HEADER_ONLY, O_SYMFS, O_KALLSYMS, O_BUILDID_DIR,
	O_STDIO, O_COMMS, O_DSOS, O_SYMBOLS, O_NO_PAGER, O_NO_COMPENSATE, O_CALIBRATION,
	O_SAMPLE_TYPE, O_LABEL,
	O_FLAMEGRAPH, O_MIN_WIDTH, O_FLAME_SRCLINE,
	O_STORE, O_WHERE,
	O_INLINE, O_NO_INLINE,
};

struct opt_doc { struct option o; int shortc; const char *arg, *help; };

static const struct opt_doc options[] = {
	{ { "input", required_argument, NULL, 'i' }, 'i', "FILE", "input file name (default perf.data, - for a pipe)" },
	{ { "children", no_argument, NULL, O_CHILDREN }, 0, NULL, "accumulate callchains of children into parent entries" },
	{ { "no-children", no_argument, NULL, O_NO_CHILDREN }, 0, NULL, "do not accumulate children (Self only)" },
	{ { "call-graph", optional_argument, NULL, 'g' }, 'g', "print_type,threshold[,print_limit],order,sort_key[,branch],value", "graph|fractal|flat|folded|none, caller|callee, percent|period|count" },
	{ { "inverted", no_argument, NULL, 'G' }, 'G', NULL, "alias for caller-based call graph" },
	{ { "max-stack", required_argument, NULL, O_MAX_STACK }, 0, "N", "limit the callchain depth" },
	{ { "sort", required_argument, NULL, 's' }, 's', "KEYS", "sort by pid, tid, comm, dso, symbol, cpu, parent, srcline, label:NAME" },
	{ { "parent", required_argument, NULL, 'p' }, 'p', "REGEX", "regex filter to identify the parent (default ^sys_|^do_page_fault)" },
	{ { "percent-limit", required_argument, NULL, O_PERCENT_LIMIT }, 0, "N", "do not show entries below N percent" },
	{ { "percentage", required_argument, NULL, O_PERCENTAGE }, 0, "relative|absolute", "how to compute percentages with filters" },
	{ { "comms", required_argument, NULL, O_COMMS }, 'c', "LIST", "only show these comms (CSV or file://)" },
	{ { "dsos", required_argument, NULL, 'd' }, 'd', "LIST", "only show these dsos" },
	{ { "symbols", required_argument, NULL, 'S' }, 'S', "LIST", "only show these symbols" },
	{ { "pid", required_argument, NULL, O_PID }, 0, "PIDS", "only show these processes" },
	{ { "tid", required_argument, NULL, O_TID }, 0, "TIDS", "only show these threads" },
	{ { "cpu", required_argument, NULL, 'C' }, 'C', "LIST", "only count samples of these CPUs" },
	{ { "time", required_argument, NULL, O_TIME }, 0, "RANGES", "only count samples in these time ranges" },
	{ { "show-nr-samples", no_argument, NULL, 'n' }, 'n', NULL, "show a column with the number of samples" },
	{ { "quiet", no_argument, NULL, 'q' }, 'q', NULL, "rows only, no header" },
	{ { "verbose", no_argument, NULL, 'v' }, 'v', NULL, "full dso names, symbol addresses" },
	{ { "json", no_argument, NULL, O_JSON }, 0, NULL, "JSON output (see docs/json.md)" },
	{ { "dump-raw-trace", no_argument, NULL, 'D' }, 'D', NULL, "dump the records in ASCII" },
	{ { "header", no_argument, NULL, O_HEADER }, 0, NULL, "print the header (feature sections), then the report" },
	{ { "header-only", no_argument, NULL, O_HEADER_ONLY }, 0, NULL, "print only the header" },
	{ { "force", no_argument, NULL, 'f' }, 'f', NULL, "don't complain, do it" },
	{ { "symfs", required_argument, NULL, O_SYMFS }, 0, "DIR", "look for files under DIR" },
	{ { "kallsyms", required_argument, NULL, O_KALLSYMS }, 0, "FILE", "kernel symbols from FILE" },
	{ { "buildid-dir", required_argument, NULL, O_BUILDID_DIR }, 0, "DIR", "build-id cache directory (default ~/.debug)" },
	{ { "stdio", no_argument, NULL, O_STDIO }, 0, NULL, "text output (the default)" },
	{ { "no-pager", no_argument, NULL, O_NO_PAGER }, 0, NULL, "(accepted; proff never pages)" },
	{ { "no-compensate", no_argument, NULL, O_NO_COMPENSATE }, 0, NULL, "exact traces: raw times, no overhead subtraction" },
	{ { "calibration", required_argument, NULL, O_CALIBRATION }, 0, "FILE", "proff calibrate -o FILE: exact traces are compensated with it (default $PROFF_CALIBRATION), sampled profiles show the recorder's cost" },
	{ { "tree", no_argument, NULL, 'T' }, 'T', NULL, "exact traces: the execution tree with times and calls" },
	{ { "sample-type", required_argument, NULL, O_SAMPLE_TYPE }, 0, "TYPE", "pprof profiles: the sample type read (name or index; default the last)" },
	{ { "label", required_argument, NULL, O_LABEL }, 0, "NAME=VALUES", "pprof profiles: only show samples whose label NAME has one of the values" },
	{ { "flamegraph", required_argument, NULL, O_FLAMEGRAPH }, 0, "FILE", "write a flame graph instead of the report: FILE.svg, FILE.html (interactive) or FILE.folded (docs/flamegraph.md)" },
	{ { "min-width", required_argument, NULL, O_MIN_WIDTH }, 0, "PCT", "flame graph: merge frames narrower than PCT % of the total (default 0.1)" },
	{ { "flamegraph-srcline", no_argument, NULL, O_FLAME_SRCLINE }, 0, NULL, "flame graph: frames by function and source line too" },
	{ { "store", required_argument, NULL, O_STORE }, 0, "URL", "report the profiles of a store (a directory or clickhouse://HOST:PORT/DB; docs/fleet.md)" },
	{ { "where", required_argument, NULL, O_WHERE }, 0, "TERM", "--store: the profiles whose labels match (build=1.2, host=~web-.*, time>=2026-11-01; repeatable)" },
	{ { "inline", no_argument, NULL, O_INLINE }, 0, NULL, "callchain entries with their inlined frames (the default; docs/symbols.md)" },
	{ { "no-inline", no_argument, NULL, O_NO_INLINE }, 0, NULL, "callchain entries without their inlined frames" },
	{ { "help", no_argument, NULL, 'h' }, 'h', NULL, "this help" },
};
#define NOPTS (sizeof(options) / sizeof(options[0]))

static void usage(FILE *f)
{
	fprintf(f, "\n Usage: proff report [<options>]\n\n");
	for (size_t i = 0; i < NOPTS; i++) {
		char left[128];
		const struct opt_doc *d = &options[i];
		if (d->shortc)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", d->shortc, d->o.name,
				 d->arg ? " <" : "", d->arg ? d->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", d->o.name, d->arg ? " <" : "",
				 d->arg ? d->arg : "");
		if (d->arg)
			strncat(left, ">", sizeof(left) - strlen(left) - 1);
		fprintf(f, "    %-30s  %s\n", left, d->help);
	}
	fputc('\n', f);
}

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

int cmd_report(int argc, char **argv)
{
	cli_stdout_bulk();
	struct report_args a = { .input = "perf.data", .max_stack = -1 };
	struct option longopts[NOPTS + 1];
	char shortopts[128] = "+";
	for (size_t i = 0; i < NOPTS; i++) {
		longopts[i] = options[i].o;
		if (options[i].shortc) {
			char s[4] = { (char)options[i].shortc, 0, 0, 0 };
			if (options[i].o.has_arg == required_argument)
				s[1] = ':';
			else if (options[i].o.has_arg == optional_argument)
				s[1] = ':', s[2] = ':';
			strcat(shortopts, s);
		}
	}
	/* -c is perf's short form of --comms */
	strcat(shortopts, "c:");
	memset(&longopts[NOPTS], 0, sizeof(longopts[NOPTS]));
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		switch (c) {
		case 'i': a.input = optarg; break;
		case O_CHILDREN: a.children_set = true; a.children = true; break;
		case O_NO_CHILDREN: a.children_set = true; a.children = false; break;
		case 'g':
			if (!optarg && optind < argc && argv[optind][0] != '-')
				optarg = argv[optind++];
			a.callgraph = optarg ? optarg : "graph";
			a.callgraph_at = optind;
			break;
		case 'G': a.inverted = true; break;
		case O_MAX_STACK: a.max_stack = atoi(optarg); break;
		case 's': a.sort = optarg; break;
		case 'p': a.parent = optarg; break;
		case O_PERCENT_LIMIT: a.percent_limit = strtod(optarg, NULL); a.percent_limit_at = optind; break;
		case O_PERCENTAGE: a.percentage = optarg; break;
		case 'c': case O_COMMS: a.comms = optarg; break;
		case 'd': a.dsos = optarg; break;
		case 'S': a.symbols = optarg; break;
		case O_PID: a.pids = optarg; break;
		case O_TID: a.tids = optarg; break;
		case 'C': a.cpus = optarg; break;
		case O_TIME: a.time = optarg; break;
		case 'n': a.show_nr_samples = true; break;
		case 'q': a.quiet = true; break;
		case 'v': a.verbose++; break;
		case O_JSON: a.json = true; break;
		case 'D': a.dump = true; break;
		case O_HEADER: a.header = true; break;
		case O_HEADER_ONLY: a.header_only = true; break;
		case 'f': a.force = true; break;
		case O_SYMFS: a.symfs = optarg; break;
		case O_KALLSYMS: a.kallsyms = optarg; break;
		case O_BUILDID_DIR: a.buildid_dir = optarg; break;
		case O_STDIO: case O_NO_PAGER: break;
		case O_NO_COMPENSATE: a.no_compensate = true; break;
		case O_CALIBRATION: a.calibration = optarg; break;
		case 'T': a.tree = true; break;
		case O_SAMPLE_TYPE: a.sample_type = optarg; break;
		case O_LABEL: a.label = optarg; break;
		case O_FLAMEGRAPH: a.flamegraph = optarg; break;
		case O_MIN_WIDTH: a.min_width = optarg; break;
		case O_FLAME_SRCLINE: a.flame_srcline = true; break;
		case O_STORE: a.store = optarg; break;
		case O_INLINE: a.no_inline = false; break;
		case O_NO_INLINE: a.no_inline = true; break;
		case O_WHERE:
			if (a.nwhere == sizeof(a.where) / sizeof(a.where[0])) {
				cli_errorf("--where: at most 64 terms");
				return EXIT_USAGE;
			}
			a.where[a.nwhere++] = optarg;
			break;
		case 'h': usage(stdout); return 0;
		default:
			if (optopt)
				cli_errorf("unknown or incomplete option '-%c'", optopt);
			else
				cli_errorf("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		cli_errorf("unexpected argument '%s'", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}

	if (a.nwhere && !a.store) {
		cli_errorf("--where selects the profiles of a store: give --store URL");
		return EXIT_USAGE;
	}
	bool exact = !a.store && pf_is_trace_file(a.input);
	if (exact && (a.dump || a.header || a.header_only)) {
		/* an exact trace has no perf.data header: its record summary instead */
		char *argv[] = { (char *)"record", (char *)"--instrument", (char *)"--info", (char *)a.input, NULL };
		return cmd_record_instrument(4, argv);
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

	/* perf's config key report.percent-limit: as the option, given before
	 * the command line's */
	const char *cfg_limit = a.percent_limit_at ? NULL : pf_config_get("report.percent-limit");
	if (cfg_limit) {
		a.percent_limit = strtod(cfg_limit, NULL);
		a.percent_limit_at = -1;
	}
	report_fmt fmt;
	report_fmt_init(&fmt);
	fmt.quiet = a.quiet;
	fmt.percent_limit = a.percent_limit;
	fmt.show_nr_samples = a.show_nr_samples;
	fmt.time_spec = a.time;
	const char *pct = a.percentage ? a.percentage : pf_config_get("hist.percentage");
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
	lo.inline_frames = !a.no_inline;
	lo.no_compensate = a.no_compensate;
	lo.sample_type = a.sample_type;
	lo.label_filter = a.label;
	/* A large file is read in two halves by two threads (the raw-stack
	 * caches are bounded, so the halves cost a few MB more than one read) */
	lo.split_load = true;
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
	ho.max_stack = a.max_stack > 0 ? a.max_stack : 0;
	ho.no_chain = a.max_stack == 0;
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
	int keys[HIST_MAX_KEYS];
	proff_error err;
	proff_err_clear(&err);
	ho.sort = a.sort ? a.sort : "comm,dso,sym";
	int nkeys = hist_parse_sort(ho.sort, keys, HIST_MAX_KEYS, &err);
	if (nkeys < 0) {
		cli_error(&err);
		hist_opts_release(&ho);
		return EXIT_USAGE;
	}
	/* keys and filters that see no pid, tid or cpu: samples aggregated
	 * by comm and stack (fewer of them to build rows from) */
	lo.merge_by_comm = !ho.nr_pids && !ho.nr_tids;
	for (int k = 0; k < nkeys; k++)
		if (keys[k] == HK_PID || keys[k] == HK_TID || keys[k] == HK_CPU)
			lo.merge_by_comm = false;
	/* the raw samples' order, for perf's input tree where its walks
	 * depend on it (hist's tree mode: garbage callchain frames; the
	 * samples' own addresses hardly ever need it) */
	bool children_wanted = a.children_set ? a.children : pf_config_bool("report.children", true);
	lo.keep_sequence = children_wanted;
	/* no Children, no chains shown and no parent key: a row is a
	 * sample's own ip, and perf resolves no callchain either (a profile
	 * of leaves only: a fraction of the memory and the reading) */
	bool parent_key = a.parent != NULL;
	for (int k = 0; k < nkeys; k++)
		parent_key |= keys[k] == HK_PARENT;
	lo.use_callchain = a.max_stack != 0 && (children_wanted || !cc_none || parent_key);

	if (a.header && print_header_lines(a.input, false) < 0) {
		hist_opts_release(&ho);
		return 1;
	}

	if (a.store) {
		/* what a store does not keep is refused, not ignored */
		const char *no = a.comms ? "--comms" : a.dsos ? "--dsos" : a.symbols ? "--symbols" : a.pids ? "--pid" :
				 a.tids ? "--tid" : a.cpus ? "--cpu" : a.time ? "--time" : a.flamegraph ? "--flamegraph" :
				 a.tree ? "--tree" : a.parent ? "--parent" : a.label ? "--label" : NULL;
		if (no) {
			cli_errorf("--store: %s is not available for a store's profiles (docs/fleet.md)", no);
			hist_opts_release(&ho);
			return EXIT_USAGE;
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
		lo.keep_sequence = false;
		lo.use_callchain = true;
		children_wanted = false;
	}
	pf_profile *prof;
	double t0;
	if (children_wanted || a.flamegraph)
		cli_fast_heap(8);
	phase(NULL, &t0);
	if (pf_profile_load(a.input, &lo, &prof, &err) < 0) {
		cli_error(&err);
		hist_opts_release(&ho);
		return 1;
	}
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
		rc = cli_flamegraph(a.flamegraph, &prof, &ev, 1, &fo);
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
		printf("{\"file\":\"%s\",\"events\":[\n", a.input);
	size_t printed = 0;
	for (size_t ev = 0; ev < prof->nr_events; ev++) {
		pf_event *e = &prof->events[ev];
		if (!e->nr_samples && kept)
			continue;
		bool has_cc = e->has_callchain;
		bool children = has_cc && pf_config_bool("report.children", true);
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
		o.drop_sequence = !more;   /* the last report that reads it */
		if (hist_build(prof, (uint32_t)ev, &o, &h, &err) < 0) {
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
		if (a.json)
			report_print_json(stdout, h, &f, !f.not_first_event);
		else
			report_print_hist(stdout, h, &f, prof->nr_lost_samples);
		fflush(stdout);
		phase("print", &t0);
		hist_free(h);
	}
	cli_fast_heap_done();
	if (a.json)
		printf("\n]}\n");
	else if (!a.quiet)
		printf("\n\n#\n# (Tip: compare two profiles with: proff diff before.data after.data)\n#\n");
	else
		printf("\n\n");
	pf_profile_free(prof);
	hist_opts_release(&ho);
	return rc;
}
