/* cmd-record-instrument.c — `proff record --instrument [-o FILE] -- CMD ARGS`.
 *
 * Runs CMD (a -finstrument-functions build) with the proff runtime
 * (libproff-instrument.so, found next to the proff binary or through
 * PROFF_RUNTIME) preloaded; the runtime writes one exact trace for the whole
 * process tree (default proff.trace). The inspection options --info, --stats
 * and --events read an existing trace instead (see docs/instrument.md).
 *
 * --calibration FILE (a `proff calibrate -o FILE` file) has one meaning in
 * both modes: compensate with the file's overheads. Recording, it is checked
 * and handed to the runtime as $PROFF_CALIBRATION, which stores the values
 * in every session instead of its start-up estimate; inspecting, it replaces
 * the values stored in the trace.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "parse-options.h"
#include "proff/calibrate.h"
#include "proff/dprof.h"
#include "proff/trace.h"

struct ri_conf {
	const char *output, *buffer, *clock, *runtime;
	const char *info, *stats, *events, *dprofpp;
	const char *calibration;   /* --calibration FILE, else $PROFF_CALIBRATION */
	bool quiet, compensate;
	int pid;
	bool instrument;
};

static int opt_clock(po_ctx *ctx, const opt_def *d, const char *val, bool unset)
{
	struct ri_conf *c = ctx->obj;
	if (!unset && strcmp(val, "tsc") && strcmp(val, "monotonic") && strcmp(val, "none")) {
		cli_errorf("--clock: '%s' is not tsc, monotonic or none", val);
		return EXIT_USAGE;
	}
	c->clock = unset ? NULL : val;
	return 0;
}

static int opt_no_compensate(po_ctx *ctx, const opt_def *d, const char *val, bool unset)
{
	((struct ri_conf *)ctx->obj)->compensate = false;
	return 0;
}

static int opt_pid(po_ctx *ctx, const opt_def *d, const char *val, bool unset)
{
	char *end;
	long v = strtol(val, &end, 10);
	if (*end || v <= 0 || v > INT_MAX) {
		cli_errorf("--pid: '%s' is not a process id", val);
		return EXIT_USAGE;
	}
	((struct ri_conf *)ctx->obj)->pid = (int)v;
	return 0;
}

#define F(x) offsetof(struct ri_conf, x)
static const opt_def ri_opts[] = {
	{ 0,   "instrument",    O_BOOL, F(instrument), NULL, "record an exact trace (this command)", PO_NONEG, NULL, 0 },
	{ 'o', "output",        O_STR, F(output), "FILE", "trace file (default " PROFF_TRACE_DEFAULT_FILE ", or $PROFF_OUTPUT)", 0, NULL, 0 },
	{ 0,   "buffer",        O_STR, F(buffer), "SIZE", "per-thread buffer, bytes with K/M suffix (default 1M)", 0, NULL, 0 },
	{ 0,   "clock",         O_CALLBACK, 0, "tsc|monotonic|none", "timestamp source (default tsc when invariant; none: counts only)", 0, opt_clock, 0 },
	{ 0,   "runtime",       O_STR, F(runtime), "PATH", "libproff-instrument.so to preload", 0, NULL, 0 },
	{ 'q', "quiet",         O_BOOL, F(quiet), NULL, "no summary line", 0, NULL, 0 },
	{ 0,   "info",          O_STR, F(info), "FILE", "print the trace's sessions and calibration, do not record", 0, NULL, 0 },
	{ 0,   "stats",         O_STR, F(stats), "FILE", "print per-function calls and times of a trace, do not record", 0, NULL, 0 },
	{ 0,   "events",        O_STR, F(events), "FILE", "print every (resynchronised) event of a trace, do not record", 0, NULL, 0 },
	{ 0,   "dprofpp",       O_STR, F(dprofpp), "FILE", "dprofpp's default table (real time) of a trace, do not record", 0, NULL, 0 },
	{ 0,   "no-compensate", O_CALLBACK, 0, NULL, "with --stats/--dprofpp: raw times, no overhead subtraction", PO_NOARG | PO_NONEG, opt_no_compensate, 0 },
	{ 0,   "pid",           O_CALLBACK, 0, "PID", "with --stats: only this process", PO_NONEG, opt_pid, 0 },
	{ 0,   "calibration",   O_STR, F(calibration), "FILE", "overheads from proff calibrate -o FILE (or $" CAL_FILE_ENV "): stored in the trace when recording, replace the stored ones with --stats/--dprofpp/--info", 0, NULL, 0 },
};
#undef F

static void help_tail(FILE *f)
{
	fprintf(f, "\nCMD must be built with -finstrument-functions. The runtime is\n"
		   "libproff-instrument.so next to proff (override: --runtime or PROFF_RUNTIME).\n");
}

static const char *const usage_lines[] = {
	"record --instrument [-o FILE] [<options>] [--] CMD [ARGS]",
	"record --instrument --stats|--events|--info|--dprofpp FILE",
	NULL,
};
const po_cmd cmd_record_instrument_opts = {
	"record --instrument", usage_lines, ri_opts, sizeof(ri_opts) / sizeof(ri_opts[0]),
	PO_CMD_STOP_AT_NON_OPTION, help_tail,
};

/* libproff-instrument.so: $PROFF_RUNTIME, next to the proff binary, or
 * ../lib/proff/ relative to it. */
static int find_runtime(const struct ri_conf *c, char *out, size_t len)
{
	int r = cli_find_runtime(c->runtime, out, len);
	if (r == -2)
		cli_errorf("cannot find libproff-instrument.so next to proff; set PROFF_RUNTIME");
	return r < 0 ? -1 : 0;
}

/* ---- inspection ------------------------------------------------------------------ */

static const char *clock_name(uint32_t c)
{
	return c == PROFF_CLOCK_TSC ? "tsc" : c == PROFF_CLOCK_MONOTONIC ? "monotonic" :
	       c == PROFF_CLOCK_NONE ? "none" : "?";
}

static const char *const end_names[] = { "running/killed", "exit", "_exit", "exec", "signal" };

static int open_trace(const char *path, proff_trace **t)
{
	proff_error err = { 0 };
	if (proff_trace_open(path, t, &err) < 0) {
		cli_error(&err);
		return -1;
	}
	if (proff_trace_symbolize(*t, NULL, &err) < 0)
		cli_warnf("%s: no symbols: %s", path, err.msg);
	return 0;
}

/* Compensate with a proff calibrate file instead of the runtime's start-up
 * estimate: --calibration FILE, else $PROFF_CALIBRATION. Returns the file
 * used (NULL if none), or sets *failed. */
static const char *use_calibration(const struct ri_conf *c, proff_trace *t, bool *failed)
{
	const char *f = c->calibration;
	if (!f || !*f)
		f = getenv(CAL_FILE_ENV);
	if (!f || !*f)
		return NULL;
	proff_error err = { 0 };
	if (cal_file_apply(f, t, &err) < 0) {
		cli_error(&err);
		*failed = true;
		return NULL;
	}
	return f;
}

/* Where a session's overheads come from, for --info and --stats. */
static const char *overhead_source(const proff_trace_session_info *s, const char *cal, char *buf, size_t len)
{
	if (cal)
		snprintf(buf, len, "from %s", cal);
	else if (s->flags & PROFF_SESS_F_CALFILE)
		snprintf(buf, len, "from calibration file at record time");
	else
		snprintf(buf, len, "start-up estimate");
	return buf;
}

static int do_info(const struct ri_conf *c)
{
	const char *path = c->info;
	proff_trace *t;
	if (open_trace(path, &t) < 0)
		return 1;
	bool failed = false;
	const char *cal = use_calibration(c, t, &failed);
	if (failed) {
		proff_trace_close(t);
		return 1;
	}
	proff_trace_info in;
	proff_trace_get_info(t, &in);
	printf("# trace %s: %zu records, %zu sessions, %zu threads, %llu events\n", path,
	       in.nrecords, in.nsessions, in.nthreads, (unsigned long long)in.nevents);
	if (in.truncated_bytes)
		printf("# truncated: last %zu bytes are an incomplete record\n", in.truncated_bytes);
	for (size_t i = 0; i < proff_trace_nsessions(t); i++) {
		proff_trace_session_info s;
		proff_trace_session_get(t, i, &s);
		const char *end = s.end_reason >= 0 && s.end_reason <= 4 ? end_names[s.end_reason] : "?";
		char src[4200];
		printf("session %016llx pid %u ppid %u%s%s exe %s clock %.3f MHz o_in %.2f ns o_full %.2f ns (%s) end %s %d\n",
		       (unsigned long long)s.id, s.pid, s.ppid,
		       s.flags & PROFF_SESS_F_FORKED ? " forked" : "",
		       s.flags & PROFF_SESS_F_EXECED ? " execed" : "", s.exe,
		       s.ticks_per_sec / 1e6, s.o_in_ticks * 1e9 / s.ticks_per_sec,
		       s.o_full_ticks * 1e9 / s.ticks_per_sec, overhead_source(&s, cal, src, sizeof(src)),
		       end, s.end_code);
	}
	proff_trace_close(t);
	return 0;
}

static int do_stats(const struct ri_conf *c)
{
	proff_trace *t;
	if (open_trace(c->stats, &t) < 0)
		return 1;
	bool failed = false;
	const char *cal = use_calibration(c, t, &failed);
	if (failed) {
		proff_trace_close(t);
		return 1;
	}
	proff_trace_stats st;
	proff_trace_stats_opts so = { .compensate = c->compensate, .pid = c->pid };
	proff_error err = { 0 };
	if (proff_trace_stats_compute(t, &so, &st, &err) < 0) {
		cli_error(&err);
		proff_trace_close(t);
		return 1;
	}
	proff_trace_info in;
	proff_trace_get_info(t, &in);
	printf("# proff trace %s: %zu processes, %zu threads, %llu calls, clock %s %.3f MHz\n",
	       c->stats, in.nsessions, in.nthreads, (unsigned long long)st.calls,
	       clock_name(in.clock), in.ticks_per_sec / 1e6);
	proff_trace_session_info s0;
	proff_trace_session_get(t, 0, &s0);
	char src[4200];
	printf("# overhead per call: o_in %.2f ns, o_full %.2f ns (%s, %s)\n", in.o_in_ns, in.o_full_ns,
	       c->compensate ? "compensated" : "raw times", overhead_source(&s0, cal, src, sizeof(src)));
	printf("# total %.6f s; synthetic exits %llu, synthetic entries %llu, clamped %llu\n", st.total,
	       (unsigned long long)st.synthetic_exits, (unsigned long long)st.synthetic_entries,
	       (unsigned long long)st.negative_clamped);
	cli_trace_quality_print(stdout, &st.quality);
	cli_trace_quality_warn(c->stats, &st.quality);
	printf("#%11s %14s %14s %12s %12s  %s\n", "calls", "incl(ms)", "excl(ms)", "min(us)", "max(us)", "function");
	for (size_t i = 0; i < st.nfuncs; i++) {
		const proff_trace_func_stats *f = &st.funcs[i];
		printf("%12llu %14.6f %14.6f %12.3f %12.3f  %s%s\n", (unsigned long long)f->calls,
		       f->incl * 1e3, f->excl * 1e3, f->min * 1e6, f->max * 1e6, f->name,
		       f->overcorrected ? " (*)" : "");
	}
	proff_trace_stats_free(&st);
	proff_trace_close(t);
	return 0;
}

struct ev_ctx { proff_trace *t; double tps; };

static int print_event(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	struct ev_ctx *c = arg;
	if (!ev) {
		printf("# thread pid %u tid %u session %016llx\n", th->pid, th->tid,
		       (unsigned long long)th->session);
		c->tps = th->ticks_per_sec;
		return 0;
	}
	printf("%14.3f %c%c %*s%s\n", (double)ev->ticks * 1e6 / c->tps,
	       ev->kind == PROFF_TEV_ENTER ? '>' : '<', ev->synthetic ? '!' : ' ',
	       (int)(ev->depth > 200 ? 200 : ev->depth), "", proff_trace_func_name(c->t, ev->func));
	return 0;
}

static int do_events(const char *path)
{
	proff_trace *t;
	if (open_trace(path, &t) < 0)
		return 1;
	struct ev_ctx c = { .t = t };
	proff_error err = { 0 };
	printf("# time(us) >enter <exit !synthetic (resynchronised)\n");
	int rc = proff_trace_foreach(t, print_event, &c, &err);
	if (rc < 0)
		cli_error(&err);
	proff_trace_close(t);
	return rc < 0;
}

static int do_dprofpp(const struct ri_conf *c)
{
	proff_trace *t;
	if (open_trace(c->dprofpp, &t) < 0)
		return 1;
	bool failed = false;
	use_calibration(c, t, &failed);
	if (failed) {
		proff_trace_close(t);
		return 1;
	}
	dprof_build_opts bo = { .out = stdout };
	dprof_model *m;
	proff_error err = { 0 };
	int rc = proff_trace_to_dprof(t, &bo, c->compensate, &m, &err);
	proff_trace_quality q;
	if (rc == 0 && proff_trace_quality_get(t, &q, &err) == 0) {
		cli_trace_quality_warn(c->dprofpp, &q);
		proff_trace_quality_free(&q);
	}
	if (rc == 0 && m->norder == 0) {
		cli_warnf("%s: no calls recorded", c->dprofpp);
		dprof_model_free(m);
	} else if (rc == 0) {
		dprof_report_opts ro = { .clock = DPROF_CLOCK_REAL, .name_width = 34 };
		rc = dprof_report(stdout, m, &ro, &err);
		dprof_model_free(m);
	}
	if (rc < 0)
		cli_error(&err);
	proff_trace_close(t);
	return rc < 0;
}

/* ---- recording ---------------------------------------------------------------------- */

static void summary(const char *path)
{
	proff_trace *t;
	proff_error err = { 0 };
	struct stat st;
	if (stat(path, &st) < 0 || st.st_size == 0) {
		cli_warnf("%s: no trace was written (was the program built with -finstrument-functions?)", path);
		return;
	}
	if (proff_trace_open(path, &t, &err) < 0) {
		cli_error(&err);
		return;
	}
	proff_trace_info in;
	proff_trace_get_info(t, &in);
	double calls = (double)in.nevents / 2;
	fprintf(stderr, "[ proff record: %.0f calls, %zu process%s, %zu thread%s, %.3f MB (%.1f bytes/call) written to %s ]\n",
		calls, in.nsessions, in.nsessions == 1 ? "" : "es", in.nthreads, in.nthreads == 1 ? "" : "s",
		(double)st.st_size / 1e6, calls > 0 ? (double)st.st_size / calls : 0.0, path);
	if (in.truncated_bytes)
		fprintf(stderr, "[ proff record: last %zu bytes incomplete (process killed while writing) ]\n",
			in.truncated_bytes);
	proff_trace_close(t);
}

/* A run that recorded no call: an error that says why (nothing loaded is
 * built with -finstrument-functions, or what is did not run), and the trace
 * is removed. False when calls were recorded, or when the trace cannot be
 * read (the summary then says what is wrong with it). */
static bool no_calls(const char *path, const char *prog)
{
	proff_trace *t;
	proff_error err = { 0 };
	struct stat st;
	if (stat(path, &st) < 0 || st.st_size == 0) {
		cli_errorf("%s: no trace was written: the runtime never started (a static executable, which "
			   "LD_PRELOAD cannot reach, or killed at once); build it dynamically linked with "
			   "-finstrument-functions", prog);
		return true;
	}
	/* the common case, at the cost of a few record headers (a trace of
	 * gigabytes is not read here) */
	if (proff_trace_has_events(path, &err) != 0)
		return false;
	if (proff_trace_open(path, &t, &err) < 0)
		return false;
	proff_trace_info in;
	proff_trace_get_info(t, &in);
	bool none = in.nevents == 0;
	if (none) {
		const char *obj = proff_trace_instrumented_object(t);
		if (obj)
			cli_errorf("%s: no instrumented function ran (%s is built with -finstrument-functions, "
				   "but none of its functions was called); no trace written", prog, obj);
		else
			cli_errorf("%s: no function is instrumented: build it (or the libraries it loads) with "
				   "-finstrument-functions (gcc or clang); no trace written", prog);
	}
	proff_trace_close(t);
	return none;
}

static int run(const struct ri_conf *c, char **cmd)
{
	char rt[PATH_MAX], out[PATH_MAX], cal[PATH_MAX] = "";
	if (find_runtime(c, rt, sizeof(rt)) < 0)
		return 1;
	if (c->calibration) {
		/* checked here (the runtime would only warn and fall back); the
		 * runtime reads it again at start-up in every process image */
		cal_file cf;
		proff_error err = { 0 };
		if (cal_file_read(c->calibration, &cf, &err) < 0) {
			cli_error(&err);
			return 1;
		}
		if (!realpath(c->calibration, cal))
			snprintf(cal, sizeof(cal), "%s", c->calibration);
	}
	const char *o = c->output ? c->output : getenv("PROFF_OUTPUT");
	if (!o || !*o)
		o = PROFF_TRACE_DEFAULT_FILE;
	int fd = open(o, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		cli_errorf("cannot create %s: %s", o, strerror(errno));
		return 1;
	}
	close(fd);
	if (!realpath(o, out))
		snprintf(out, sizeof(out), "%s", o);

	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		cli_errorf("fork: %s", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		const char *old = getenv("LD_PRELOAD");
		char *pre = malloc(strlen(rt) + (old ? strlen(old) : 0) + 2);
		if (!pre)
			_exit(127);
		sprintf(pre, "%s%s%s", rt, old && *old ? ":" : "", old && *old ? old : "");
		setenv("LD_PRELOAD", pre, 1);
		setenv("PROFF_OUTPUT", out, 1);
		setenv("PROFF_APPEND", "1", 1);
		unsetenv("PROFF_EXECED");
		unsetenv("PROFF_TSC_HZ");
		if (c->buffer)
			setenv("PROFF_BUFFER", c->buffer, 1);
		if (c->clock)
			setenv("PROFF_CLOCK", c->clock, 1);
		if (cal[0])
			setenv(CAL_FILE_ENV, cal, 1);
		unsetenv("PROFF_CALIBRATION_WARNED");
		signal(SIGINT, SIG_DFL);
		signal(SIGQUIT, SIG_DFL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "proff: cannot run '%s': %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	/* like perf record: the terminal's ^C goes to the workload; proff waits */
	struct sigaction ign = { .sa_handler = SIG_IGN }, oint, oquit;
	sigaction(SIGINT, &ign, &oint);
	sigaction(SIGQUIT, &ign, &oquit);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	sigaction(SIGINT, &oint, NULL);
	sigaction(SIGQUIT, &oquit, NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127) {
		struct stat st;
		if (stat(out, &st) == 0 && st.st_size == 0)
			return 127;        /* exec failed, already reported */
	}
	if (no_calls(o, cmd[0])) {
		unlink(o);
		if (WIFSIGNALED(status))
			return 128 + WTERMSIG(status);
		return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : 1;
	}
	if (!c->quiet)
		summary(o);
	if (WIFSIGNALED(status)) {
		if (!c->quiet)
			fprintf(stderr, "[ proff record: %s terminated by signal %d ]\n", cmd[0], WTERMSIG(status));
		return 128 + WTERMSIG(status);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int cli_trace_info(const char *path)
{
	struct ri_conf c = { .compensate = true, .info = path };
	return do_info(&c);
}

int cmd_record_instrument(int argc, char **argv)
{
	struct ri_conf c = { .compensate = true };
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0, st;
	if (!pos)
		return 1;
	bool go = po_parse(&cmd_record_instrument_opts, &c, argc, argv, pos, &npos, &st);
	free(pos);
	if (!go)
		return st;
	int i = argc - npos;    /* the command: the words after the options */
	if (c.info)
		return do_info(&c);
	if (c.stats)
		return do_stats(&c);
	if (c.events)
		return do_events(c.events);
	if (c.dprofpp)
		return do_dprofpp(&c);
	if (i >= argc) {
		return po_error(&cmd_record_instrument_opts, NULL, "record --instrument: no command to run");
	}
	return run(&c, argv + i);
}
