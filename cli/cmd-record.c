/* cmd-record.c — `proff record [options] [--] command [args]`: sample a
 * command (or -p PID / -t TID / -a) with perf_event_open and write a standard
 * perf.data that perf report/script/diff read. Options follow perf record;
 * the first non-option word starts the command. `--instrument` hands the
 * whole command line to cmd_record_instrument().
 *
 * `-r N` records the command N times into FILE.1 ... FILE.N (the groups of
 * runs `proff diff` compares); `proff ab` records two commands in turn
 * through the same helpers (record-cli.h).
 *
 * Exit status: the command's (128+N when killed by signal N, 127 when it
 * cannot be run), 129 for usage errors, 1 when recording failed.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "parse-options.h"
#include "proff/record.h"
#include "record-cli.h"

static volatile sig_atomic_t stop_sig;

static void on_signal(int sig)
{
	if (!stop_sig)
		stop_sig = sig;
}

static void on_notice(void *ctx, const char *msg)
{
	(void)ctx;
	fprintf(stderr, "proff: notice: %s\n", msg);
}

enum opt_id {
	O_OUTPUT, O_EVENT, O_FREQ, O_PERIOD, O_CALLGRAPH, O_CALLGRAPH_MODE, O_SAMPLE_CPU, O_BRANCH,
	O_ALL, O_PID, O_TID, O_NO_INHERIT, O_COMPRESS, O_MMAP, O_NO_BUILDID_CACHE,
	O_NO_BUILDID, O_BUILDID_DIR, O_QUIET, O_RUNS,
};

/* The whole command line's options; apply() reads each one */
struct record_cli {
	rec_opts o;
	bool quiet, instrument;
	unsigned runs;
	pid_t *pids, *tids;
	size_t npids, ntids;
};

/* --call-graph fp | dwarf[,SIZE] | lbr, as perf reads it: SIZE rounded up
 * to 8 bytes, at most 65528 (the kernel's limit for a sample's stack copy). */
static int parse_callgraph_mode(const char *val, rec_opts *o)
{
	o->callgraph = true;
	o->dwarf_stack = 0;
	o->lbr = false;
	if (!strcmp(val, "fp"))
		return 0;
	if (!strcmp(val, "lbr")) {
		o->lbr = true;
		return 0;
	}
	if (!strcmp(val, "dwarf")) {
		o->dwarf_stack = 8192;
		return 0;
	}
	if (!strncmp(val, "dwarf,", 6)) {
		char *end;
		errno = 0;
		unsigned long long n = strtoull(val + 6, &end, 0);
		if (errno || end == val + 6 || *end || val[6] == '-') {
			cli_errorf("--call-graph=%s: the stack dump size is not a number", val);
			return -1;
		}
		n = (n + 7) & ~7ULL;
		if (n == 0 || n > 65528) {
			cli_errorf("--call-graph=%s: the stack dump size must be 1 to 65528 bytes", val);
			return -1;
		}
		o->dwarf_stack = (uint32_t)n;
		return 0;
	}
	cli_errorf("--call-graph=%s: not a mode (fp, dwarf[,SIZE] or lbr)", val);
	return -1;
}

static int record_opt(po_ctx *ctx, const opt_def *d, const char *val, bool unset);

static const opt_def opts[] = {
	{ 'o', "output",            O_CALLBACK, 0, "FILE", "output file (default perf.data; an existing one becomes perf.data.old)", PO_NONEG, record_opt, O_OUTPUT },
	{ 'e', "event",             O_CALLBACK, 0, "EV[,EV]", "events (cpu-clock, task-clock, cycles, ...); hardware events fall back to cpu-clock", PO_NONEG, record_opt, O_EVENT },
	{ 'F', "freq",              O_CALLBACK, 0, "HZ", "sampling frequency (default 4000, 'max')", PO_NONEG, record_opt, O_FREQ },
	{ 'c', "count",             O_CALLBACK, 0, "N", "sample every N events (ns for cpu-clock)", PO_NONEG, record_opt, O_PERIOD },
	{ 'g', NULL,                O_CALLBACK, 0, NULL, "record frame-pointer callchains (user and kernel)", PO_NOARG | PO_NONEG, record_opt, O_CALLGRAPH },
	{ 0,   "call-graph",        O_CALLBACK, 0, "MODE", "callchains: fp (as -g), dwarf[,SIZE] (user stacks of SIZE bytes, default 8192, unwound at report time), lbr (needs LBR hardware)", PO_NONEG, record_opt, O_CALLGRAPH_MODE },
	{ 0,   "sample-cpu",        O_CALLBACK, 0, NULL, "record the CPU of each sample", PO_NOARG | PO_NONEG, record_opt, O_SAMPLE_CPU },
	{ 'b', "branch-any",        O_CALLBACK, 0, NULL, "sample taken branches (needs LBR hardware)", PO_NOARG | PO_NONEG, record_opt, O_BRANCH },
	{ 'a', "all-cpus",          O_CALLBACK, 0, NULL, "system-wide on every CPU", PO_NOARG | PO_NONEG, record_opt, O_ALL },
	{ 'p', "pid",               O_CALLBACK, 0, "PID[,..]", "attach to running processes (all their threads)", PO_NONEG, record_opt, O_PID },
	{ 't', "tid",               O_CALLBACK, 0, "TID[,..]", "attach to threads", PO_NONEG, record_opt, O_TID },
	{ 'i', "no-inherit",        O_CALLBACK, 0, NULL, "do not follow new threads and children", PO_NOARG | PO_NONEG, record_opt, O_NO_INHERIT },
	{ 'z', "compression-level", O_CALLBACK, 0, "N", "zstd-compress the data (level 1 by default)", PO_OPTARG | PO_NONEG, record_opt, O_COMPRESS },
	{ 'm', "mmap-pages",        O_CALLBACK, 0, "PAGES", "ring buffer size in pages per CPU (power of 2, default 128)", PO_NONEG, record_opt, O_MMAP },
	{ 'N', "no-buildid-cache",  O_CALLBACK, 0, NULL, "do not copy binaries into the build-id cache", PO_NOARG | PO_NONEG, record_opt, O_NO_BUILDID_CACHE },
	{ 'B', "no-buildid",        O_CALLBACK, 0, NULL, "no build-ids at all", PO_NOARG | PO_NONEG, record_opt, O_NO_BUILDID },
	{ 0,   "buildid-dir",       O_CALLBACK, 0, "DIR", "build-id cache (default $PROFF_BUILDID_DIR or ~/.debug)", PO_NONEG, record_opt, O_BUILDID_DIR },
	{ 'q', "quiet",             O_CALLBACK, 0, NULL, "no summary lines", PO_NOARG | PO_NONEG, record_opt, O_QUIET },
	{ 'r', "runs",              O_CALLBACK, 0, "N", "run the command N times: FILE.1 ... FILE.N (for proff diff A.* -- B.*)", PO_NONEG, record_opt, O_RUNS },
	{ 0,   "instrument",        O_BOOL, offsetof(struct record_cli, instrument), NULL, "exact trace of a -finstrument-functions build (see proff record --instrument -h)", PO_STOP | PO_NONEG, NULL, 0 },
};

static const char *const usage_lines[] = {
	"record [<options>] [--] command [args]",
	"record [<options>] -p PID | -t TID | -a",
	NULL,
};
const po_cmd cmd_record_opts = {
	"record", usage_lines, opts, sizeof(opts) / sizeof(opts[0]), PO_CMD_STOP_AT_NON_OPTION, NULL,
};

static int parse_u64(const char *opt, const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long x = strtoull(v, &end, 10);
	if (errno || end == v || *end || v[0] == '-') {
		cli_errorf("bad value for %s: '%s' (expected a number)", opt, v);
		return -1;
	}
	*out = x;
	return 0;
}

static int parse_pids(const char *opt, const char *v, pid_t **arr, size_t *n)
{
	char *dup = strdup(v), *save = NULL;
	if (!dup)
		return -1;
	for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t x;
		if (parse_u64(opt, tok, &x) || x == 0 || x > INT_MAX) {
			free(dup);
			return -1;
		}
		pid_t *p = realloc(*arr, (*n + 1) * sizeof(pid_t));
		if (!p) {
			free(dup);
			return -1;
		}
		*arr = p;
		(*arr)[(*n)++] = (pid_t)x;
	}
	free(dup);
	return 0;
}

static uint64_t max_sample_rate(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long long v = 0;
	if (f) {
		if (fscanf(f, "%llu", &v) != 1)
			v = 0;
		fclose(f);
	}
	return v;
}

static int apply(rec_opts *o, enum opt_id id, const char *name, const char *val, bool *quiet,
		 pid_t **pids, size_t *npids, pid_t **tids, size_t *ntids, unsigned *runs)
{
	uint64_t x = 0;
	proff_error err;
	switch (id) {
	case O_OUTPUT: o->output = val; break;
	case O_EVENT: {
		char *dup = strdup(val), *save = NULL;
		if (!dup)
			return -1;
		for (char *tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
			if (o->nr_events >= sizeof(o->events) / sizeof(o->events[0])) {
				cli_errorf("too many events (at most 16)");
				free(dup);
				return -1;
			}
			if (rec_parse_event(tok, &o->events[o->nr_events], &err)) {
				cli_error(&err);
				free(dup);
				return -1;
			}
			o->nr_events++;
		}
		free(dup);
		break;
	}
	case O_FREQ:
		if (!strcmp(val, "max")) {
			o->freq = max_sample_rate();
			if (!o->freq)
				o->freq = 4000;
			break;
		}
		if (parse_u64(name, val, &x))
			return -1;
		if (!x) {
			cli_errorf("-F needs a frequency above 0");
			return -1;
		}
		o->freq = x;
		o->period = 0;
		break;
	case O_PERIOD:
		if (parse_u64(name, val, &x))
			return -1;
		if (!x) {
			cli_errorf("-c needs a period above 0");
			return -1;
		}
		o->period = x;
		o->freq = 0;
		break;
	case O_CALLGRAPH: o->callgraph = true; break;
	case O_CALLGRAPH_MODE:
		if (parse_callgraph_mode(val, o) < 0)
			return -1;
		break;
	case O_SAMPLE_CPU: o->sample_cpu = true; break;
	case O_BRANCH: o->branch_stack = true; break;
	case O_ALL: o->system_wide = true; break;
	case O_PID: return parse_pids(name, val, pids, npids);
	case O_TID: return parse_pids(name, val, tids, ntids);
	case O_NO_INHERIT: o->no_inherit = true; break;
	case O_COMPRESS:
		if (val) {
			if (parse_u64(name, val, &x) || x < 1 || x > 22) {
				cli_errorf("compression level must be 1..22");
				return -1;
			}
			o->compress_level = (int)x;
		} else {
			o->compress_level = 1;
		}
		break;
	case O_MMAP:
		if (parse_u64(name, val, &x) || !x || (x & (x - 1)) || x > (1u << 20)) {
			cli_errorf("-m needs a power of two number of pages, got '%s'", val);
			return -1;
		}
		o->mmap_pages = (unsigned)x;
		break;
	case O_NO_BUILDID_CACHE: o->no_buildid_cache = true; break;
	case O_NO_BUILDID: o->no_buildid = true; o->no_buildid_cache = true; break;
	case O_BUILDID_DIR: o->buildid_dir = val; break;
	case O_QUIET: *quiet = true; break;
	case O_RUNS:
		if (parse_u64(name, val, &x))
			return -1;
		if (!x || x > 100000) {
			cli_errorf("-r needs a number of runs from 1 to 100000");
			return -1;
		}
		*runs = (unsigned)x;
		break;
	}
	return 0;
}

static int record_opt(po_ctx *ctx, const opt_def *d, const char *val, bool unset)
{
	struct record_cli *c = ctx->obj;
	char name[64];
	if (d->l)
		snprintf(name, sizeof(name), "--%s", d->l);
	else
		snprintf(name, sizeof(name), "-%c", d->s);
	if (apply(&c->o, (enum opt_id)d->defval, name, val, &c->quiet, &c->pids, &c->npids, &c->tids, &c->ntids,
		  &c->runs))
		return EXIT_USAGE;
	return 0;
}

static int exit_status(const rec_stats *st)
{
	if (!st->have_status)
		return 0;
	if (st->killed_by_us && stop_sig)
		return 128 + stop_sig;
	if (WIFEXITED(st->status))
		return WEXITSTATUS(st->status);
	if (WIFSIGNALED(st->status))
		return 128 + WTERMSIG(st->status);
	return 1;
}

void cli_record_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGXFSZ, SIG_IGN);   /* a file size limit is a write error, not a crash */
}

bool cli_record_stopped(void)
{
	return stop_sig != 0;
}

uint64_t cli_record_freq(uint64_t freq)
{
	uint64_t f = freq ? freq : 4000, mx = max_sample_rate();
	if (mx && f > mx) {
		fprintf(stderr, "proff: notice: maximum frequency rate (%llu Hz) exceeded, throttling from %llu Hz to %llu Hz "
				"(kernel.perf_event_max_sample_rate)\n",
			(unsigned long long)mx, (unsigned long long)f, (unsigned long long)mx);
		f = mx;
	}
	return f;
}

int cli_record_once(rec_opts *o, bool quiet)
{
	o->stop = &stop_sig;
	o->notice = on_notice;
	rec_stats st;
	proff_error err;
	proff_err_clear(&err);
	int rc = rec_run(o, &st, &err);
	if (rc) {
		if (st.exec_errno) {
			cli_errorf("cannot run '%s': %s", o->argv[0], strerror(st.exec_errno));
			return 127;
		}
		cli_error(&err);
		if (st.write_errno)
			fprintf(stderr, "proff: %s kept the %llu bytes of data written before the error; "
					"it is readable (header rewritten)\n",
				o->output, (unsigned long long)st.data_size);
		if (!st.workload_started)
			return 1;
	}
	if (!quiet) {
		fprintf(stderr, "[ proff record: Woken up %llu times to write data ]\n",
			(unsigned long long)st.wakeups);
		if (st.lost || st.lost_samples)
			fprintf(stderr, "[ proff record: Lost %llu samples (%llu LOST records of %llu samples): "
					"try a bigger -m or a lower -F ]\n",
				(unsigned long long)(st.lost_samples ? st.lost_samples : st.lost),
				(unsigned long long)st.lost_records, (unsigned long long)st.lost);
		if (st.write_errno)
			fprintf(stderr, "[ proff record: Wrote %.3f MB %s before the write error ]\n",
				st.file_size / 1048576.0, o->output);
		else if (o->compress_level)
			fprintf(stderr, "[ proff record: Captured and wrote %.3f MB %s, compressed "
					"(original %.3f MB, ratio is %.3f) ]\n",
				st.file_size / 1048576.0, o->output, st.raw_size / 1048576.0,
				st.data_size ? (double)st.raw_size / (double)st.data_size : 0.0);
		else
			fprintf(stderr, "[ proff record: Captured and wrote %.3f MB %s (%llu samples) ]\n",
				st.file_size / 1048576.0, o->output, (unsigned long long)st.samples);
	}
	if (!rc)
		return exit_status(&st);
	if (st.have_status && exit_status(&st))
		return exit_status(&st);
	return 1;
}

int cmd_record(int argc, char **argv)
{
	struct record_cli rc_;
	memset(&rc_, 0, sizeof(rc_));
	rec_opts o;
	bool quiet = false;
	unsigned runs = 0;
	pid_t *pids = NULL, *tids = NULL;
	size_t npids = 0, ntids = 0;
	int ai, ret = 1, pst;

	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0;
	bool go = pos && po_parse(&cmd_record_opts, &rc_, argc, argv, pos, &npos, &pst);
	free(pos);
	o = rc_.o;
	quiet = rc_.quiet;
	runs = rc_.runs;
	pids = rc_.pids;
	tids = rc_.tids;
	npids = rc_.npids;
	ntids = rc_.ntids;
	if (!go) {
		ret = pst;
		goto out;
	}
	if (rc_.instrument) {
		free(pids);
		free(tids);
		return cmd_record_instrument(argc, argv);
	}
	ai = argc - npos;       /* the command: the words after the options */
	if (ai < argc)
		o.argv = argv + ai;
	o.pids = pids;
	o.nr_pids = npids;
	o.tids = tids;
	o.nr_tids = ntids;
	if (!o.argv && !npids && !ntids && !o.system_wide) {
		ret = po_error(&cmd_record_opts, NULL, "nothing to record: give a command, -p PID, -t TID or -a");
		goto out;
	}
	if (o.argv && (npids || ntids)) {
		cli_errorf("a command and -p/-t cannot be combined");
		ret = EXIT_USAGE;
		goto out;
	}
	if (runs && !o.argv) {
		cli_errorf("-r repeats a command: give one (-p, -t and -a record what runs already)");
		ret = EXIT_USAGE;
		goto out;
	}
	if (!o.period)
		o.freq = cli_record_freq(o.freq);
	if (!o.output)
		o.output = "perf.data";

	/* CMDLINE feature: the proff binary, then its arguments */
	char exe[PATH_MAX];
	ssize_t el = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (el > 0)
		exe[el] = 0;
	else
		snprintf(exe, sizeof(exe), "proff");
	char **cl = calloc((size_t)argc + 1, sizeof(char *));
	if (!cl) {
		cli_errorf("out of memory");
		goto out;
	}
	cl[0] = exe;
	for (int i = 0; i < argc; i++)
		cl[i + 1] = argv[i];
	o.cmdline = cl;
	o.nr_cmdline = (size_t)argc + 1;
	cli_record_signals();
	if (!runs) {
		ret = cli_record_once(&o, quiet);
	} else {
		/* FILE.1 ... FILE.N; a run that fails or is interrupted ends the series */
		const char *base = o.output;
		size_t len = strlen(base) + 16;
		char *name = malloc(len);
		ret = name ? 0 : 1;
		for (unsigned i = 1; name && i <= runs; i++) {
			snprintf(name, len, "%s.%u", base, i);
			o.output = name;
			if (!quiet)
				fprintf(stderr, "[ proff record: run %u of %u: %s ]\n", i, runs, name);
			ret = cli_record_once(&o, quiet);
			if (cli_record_stopped())
				break;
			if (ret) {
				cli_errorf("run %u of %u exited with status %d: the series stops (%s is kept)", i, runs, ret, name);
				break;
			}
		}
		free(name);
	}
	free(cl);
out:
	free(pids);
	free(tids);
	return ret;
}
