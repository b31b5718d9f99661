/* cmd-calibrate.c — `proff calibrate`: measure what proff's own measuring
 * costs on this machine (timing primitives, the -finstrument-functions
 * runtime, the sampling recorder), in time and hardware counters, over
 * repeated runs pinned to one CPU; print a table or JSON, and optionally
 * write a calibration file for overhead compensation (docs/calibrate.md).
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "proff/calibrate.h"

enum opt_id { O_REPEAT, O_COUNTER, O_FREQ, O_CPU, O_QUICK, O_JSON, O_OUTPUT, O_ONLY, O_CC, O_RUNTIME,
	      O_QUIET, O_HELP };

static const struct cli_opt opts[] = {
	{ 'r', "repeat",  1, O_REPEAT,  "N        runs per measurement (default 10, --quick 3)" },
	{ 't', "counter", 1, O_COUNTER, "LIST     hardware counters (default " CAL_DEFAULT_COUNTERS "; '' for none)" },
	{ 'F', "freq",    1, O_FREQ,    "HZ[,HZ]  sampling frequencies to measure (default 4000,20000)" },
	{ 'C', "cpu",     1, O_CPU,     "CPU      pin to this CPU (default: the current one)" },
	{ 0,   "quick",   0, O_QUICK,   "         short workloads and 3 runs (a few seconds)" },
	{ 0,   "json",    0, O_JSON,    "         JSON instead of the table" },
	{ 'o', "output",  1, O_OUTPUT,  "FILE     write a calibration file (for --calibration / $" CAL_FILE_ENV ")" },
	{ 0,   "only",    1, O_ONLY,    "LIST     measurement groups: timer,instrument,sample (default all)" },
	{ 0,   "cc",      1, O_CC,      "CC       compiler for the workloads (default $CC or cc)" },
	{ 0,   "runtime", 1, O_RUNTIME, "PATH     libproff-instrument.so (default next to proff, or $PROFF_RUNTIME)" },
	{ 'q', "quiet",   0, O_QUIET,   "         no progress on stderr" },
	{ 'h', "help",    0, O_HELP,    "         this help" },
};
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

static void usage(FILE *f)
{
	fprintf(f, "usage: proff calibrate [options]\n\n");
	for (size_t i = 0; i < NR_OPTS; i++) {
		char names[64];
		if (opts[i].short_name)
			snprintf(names, sizeof(names), "-%c, --%s", opts[i].short_name, opts[i].long_name);
		else
			snprintf(names, sizeof(names), "    --%s", opts[i].long_name);
		fprintf(f, "    %-16s %s\n", names, opts[i].help);
	}
	fprintf(f, "\nCounters: ");
	const char *const *n = cal_counter_names();
	for (size_t i = 0; n[i]; i++)
		fprintf(f, "%s%s", i ? ", " : "", n[i]);
	fprintf(f, "\n");
}

struct conf {
	cal_opts co;
	bool json, quiet, runs_set;
	const char *output;
};

static int parse_uint(const char *opt, const char *v, long lo, long hi, long *out)
{
	char *e;
	errno = 0;
	long x = strtol(v, &e, 10);
	if (!*v || *e || errno || x < lo || x > hi) {
		cli_errorf("%s: '%s' is not a number in %ld..%ld", opt, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static int apply(struct conf *c, enum opt_id id, const char *v)
{
	long x;
	switch (id) {
	case O_REPEAT:
		if (parse_uint("--repeat", v, 1, 200, &x) < 0)
			return -1;
		c->co.runs = (unsigned)x;
		c->runs_set = true;
		break;
	case O_COUNTER: c->co.counters = v; break;
	case O_FREQ: {
		memset(c->co.freqs, 0, sizeof(c->co.freqs));
		size_t n = 0, max = sizeof(c->co.freqs) / sizeof(c->co.freqs[0]) - 1;
		char buf[128];
		snprintf(buf, sizeof(buf), "%s", v);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (n >= max) {
				cli_errorf("--freq: at most %zu frequencies", max);
				return -1;
			}
			if (parse_uint("--freq", t, 11, 1000000, &x) < 0)
				return -1;
			c->co.freqs[n++] = (uint64_t)x;
		}
		if (!n) {
			cli_errorf("--freq: no frequency given");
			return -1;
		}
		break;
	}
	case O_CPU:
		if (parse_uint("--cpu", v, 0, 4095, &x) < 0)
			return -1;
		c->co.cpu = (int)x;
		break;
	case O_QUICK: c->co.quick = true; break;
	case O_JSON: c->json = true; break;
	case O_OUTPUT: c->output = v; break;
	case O_ONLY: c->co.groups = v; break;
	case O_CC: c->co.cc = v; break;
	case O_RUNTIME: c->co.runtime = v; break;
	case O_QUIET: c->quiet = true; break;
	case O_HELP: break;
	}
	return 0;
}

/* 0, -1 on a usage error (reported), -2 for --help */
static int parse(int argc, char **argv, struct conf *c)
{
	for (int i = 1; i < argc;) {
		const struct cli_opt *op;
		const char *val;
		int r = cli_parse_opt(argc, argv, &i, opts, NR_OPTS, "", &op, &val);
		if (r < 0)
			return -1;
		if (r == 0) {
			cli_errorf("calibrate takes no arguments ('%s')", argv[i]);
			return -1;
		}
		if (op->id == O_HELP)
			return -2;
		if (apply(c, op->id, val) < 0)
			return -1;
	}
	return 0;
}

/* libproff-instrument.so: --runtime, $PROFF_RUNTIME, next to the proff
 * binary or ../lib/proff/ relative to it (as record --instrument). */
static const char *find_runtime(const char *given, char *out, size_t len)
{
	return cli_find_runtime(given, out, len) == 0 ? out : NULL;
}

static void progress(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "\rproff calibrate: %-60s", msg);
	fflush(stderr);
}

int cmd_calibrate(int argc, char **argv)
{
	struct conf c = { .co = { .cpu = -1 } };
	int p = parse(argc, argv, &c);
	if (p == -2) {
		usage(stdout);
		return 0;
	}
	if (p < 0) {
		usage(stderr);
		return EXIT_USAGE;
	}
	if (!c.runs_set)
		c.co.runs = c.co.quick ? 3 : 10;
	if (!c.co.freqs[0]) {
		c.co.freqs[0] = 4000;
		c.co.freqs[1] = 20000;
	}
	char rt[PATH_MAX];
	const char *given = c.co.runtime, *env = getenv("PROFF_RUNTIME");
	c.co.runtime = find_runtime(given, rt, sizeof(rt));
	if (!c.co.runtime && (given || (env && *env)))
		return 1;              /* reported */
	bool show = !c.quiet && isatty(2);
	if (show) {
		c.co.progress = progress;
	}
	cal_result r;
	proff_error err = { 0 };
	int rc = cal_run(&c.co, &r, &err);
	if (show)
		fprintf(stderr, "\r%-78s\r", "");
	if (rc < 0) {
		cli_error(&err);
		return rc == PROFF_EUSAGE ? EXIT_USAGE : 1;
	}
	if (c.json)
		cal_print_json(stdout, &r);
	else
		cal_print_table(stdout, &r);
	int ret = 0;
	if (c.output) {
		if (r.o_full_ns <= 0) {
			cli_errorf("%s not written: the instrumentation overheads (o_in, o_full) were not measured",
				   c.output);
			ret = 1;
		} else if (cal_file_write(c.output, &r, &err) < 0) {
			cli_error(&err);
			ret = 1;
		} else if (!c.quiet) {
			fprintf(stderr, "[ proff calibrate: calibration written to %s ]\n", c.output);
		}
	}
	cal_result_free(&r);
	return ret;
}
