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
#include "parse-options.h"
#include "proff/calibrate.h"

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

static int opt_repeat(po_ctx *ctx, const opt_def *d, const char *v, bool unset)
{
	struct conf *c = ctx->obj;
	long x;
	if (unset || parse_uint("--repeat", v, 1, 200, &x) < 0)
		return EXIT_USAGE;
	c->co.runs = (unsigned)x;
	c->runs_set = true;
	return 0;
}

static int opt_freq(po_ctx *ctx, const opt_def *d, const char *v, bool unset)
{
	struct conf *c = ctx->obj;
	long x;
	memset(c->co.freqs, 0, sizeof(c->co.freqs));
	if (unset)
		return 0;
	size_t n = 0, max = sizeof(c->co.freqs) / sizeof(c->co.freqs[0]) - 1;
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", v);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		if (n >= max) {
			cli_errorf("--freq: at most %zu frequencies", max);
			return EXIT_USAGE;
		}
		if (parse_uint("--freq", t, 11, 1000000, &x) < 0)
			return EXIT_USAGE;
		c->co.freqs[n++] = (uint64_t)x;
	}
	if (!n) {
		cli_errorf("--freq: no frequency given");
		return EXIT_USAGE;
	}
	return 0;
}

static int opt_cpu(po_ctx *ctx, const opt_def *d, const char *v, bool unset)
{
	struct conf *c = ctx->obj;
	long x = -1;
	if (!unset && parse_uint("--cpu", v, 0, 4095, &x) < 0)
		return EXIT_USAGE;
	c->co.cpu = (int)x;
	return 0;
}

#define F(x) offsetof(struct conf, x)
static const opt_def opts[] = {
	{ 'r', "repeat",  O_CALLBACK, 0, "N", "runs per measurement (default 10, --quick 3)", PO_NONEG, opt_repeat, 0 },
	{ 't', "counter", O_STR, F(co.counters), "LIST", "hardware counters (default " CAL_DEFAULT_COUNTERS "; '' for none)", 0, NULL, 0 },
	{ 'F', "freq",    O_CALLBACK, 0, "HZ[,HZ]", "sampling frequencies to measure (default 4000,20000)", 0, opt_freq, 0 },
	{ 'C', "cpu",     O_CALLBACK, 0, "CPU", "pin to this CPU (default: the current one)", 0, opt_cpu, 0 },
	{ 0,   "quick",   O_BOOL, F(co.quick), NULL, "short workloads and 3 runs (a few seconds)", 0, NULL, 0 },
	{ 0,   "json",    O_BOOL, F(json), NULL, "JSON instead of the table", 0, NULL, 0 },
	{ 'o', "output",  O_STR, F(output), "FILE", "write a calibration file (for --calibration / $" CAL_FILE_ENV ")", 0, NULL, 0 },
	{ 0,   "only",    O_STR, F(co.groups), "LIST", "measurement groups: timer,instrument,sample (default all)", 0, NULL, 0 },
	{ 0,   "cc",      O_STR, F(co.cc), "CC", "compiler for the workloads (default $CC or cc)", 0, NULL, 0 },
	{ 0,   "runtime", O_STR, F(co.runtime), "PATH", "libproff-instrument.so (default next to proff, or $PROFF_RUNTIME)", 0, NULL, 0 },
	{ 'q', "quiet",   O_BOOL, F(quiet), NULL, "no progress on stderr", 0, NULL, 0 },
};
#undef F

static void help_tail(FILE *f)
{
	fprintf(f, "\nCounters: ");
	const char *const *n = cal_counter_names();
	for (size_t i = 0; n[i]; i++)
		fprintf(f, "%s%s", i ? ", " : "", n[i]);
	fprintf(f, "\n");
}

static const char *const usage_lines[] = { "calibrate [<options>]", NULL };
const po_cmd cmd_calibrate_opts = {
	"calibrate", usage_lines, opts, sizeof(opts) / sizeof(opts[0]), 0, help_tail,
};

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
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0, st;
	if (!pos)
		return 1;
	bool go = po_parse(&cmd_calibrate_opts, &c, argc, argv, pos, &npos, &st);
	if (go && npos) {
		st = po_error(&cmd_calibrate_opts, NULL, "calibrate takes no arguments ('%s')", pos[0]);
		go = false;
	}
	free(pos);
	if (!go)
		return st;
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
