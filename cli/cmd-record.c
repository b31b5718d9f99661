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
	O_OUTPUT, O_EVENT, O_FREQ, O_COUNT, O_CALLGRAPH, O_CALLGRAPH_MODE, O_SAMPLE_CPU, O_BRANCH,
	O_ALL, O_PID, O_TID, O_NO_INHERIT, O_COMPRESS, O_MMAP, O_NO_BUILDID_CACHE,
	O_NO_BUILDID, O_BUILDID_DIR, O_QUIET, O_HELP, O_INSTRUMENT, O_RUNS,
};

/* has_arg: 0 none, 1 required, 2 optional (only as --long=VALUE) */
static const struct opt {
	char short_name;
	const char *long_name;
	int has_arg;
	enum opt_id id;
	const char *help;
} opts[] = {
	{ 'o', "output",             1, O_OUTPUT,          "FILE     output file (default perf.data; an existing one becomes perf.data.old)" },
	{ 'e', "event",              1, O_EVENT,           "EV[,EV]  events (cpu-clock, task-clock, cycles, ...); hardware events fall back to cpu-clock" },
	{ 'F', "freq",               1, O_FREQ,            "HZ       sampling frequency (default 4000, 'max')" },
	{ 'c', "count",              1, O_COUNT,           "N        sample every N events (ns for cpu-clock)" },
	{ 'g', NULL,                 0, O_CALLGRAPH,       "         record frame-pointer callchains (user and kernel)" },
	{ 0,   "call-graph",         1, O_CALLGRAPH_MODE,  "MODE     callchains: fp (as -g), dwarf[,SIZE] (user stacks of SIZE bytes, default 8192, unwound at report time), lbr (needs LBR hardware)" },
	{ 0,   "sample-cpu",         0, O_SAMPLE_CPU,      "         record the CPU of each sample" },
	{ 'b', "branch-any",         0, O_BRANCH,          "         sample taken branches (needs LBR hardware)" },
	{ 'a', "all-cpus",           0, O_ALL,             "         system-wide on every CPU" },
	{ 'p', "pid",                1, O_PID,             "PID[,..] attach to running processes (all their threads)" },
	{ 't', "tid",                1, O_TID,             "TID[,..] attach to threads" },
	{ 'i', "no-inherit",         0, O_NO_INHERIT,      "         do not follow new threads and children" },
	{ 'z', "compression-level",  2, O_COMPRESS,        "[=N]     zstd-compress the data (level 1 by default)" },
	{ 'm', "mmap-pages",         1, O_MMAP,            "PAGES    ring buffer size in pages per CPU (power of 2, default 128)" },
	{ 'N', "no-buildid-cache",   0, O_NO_BUILDID_CACHE, "        do not copy binaries into the build-id cache" },
	{ 'B', "no-buildid",         0, O_NO_BUILDID,      "         no build-ids at all" },
	{ 0,   "buildid-dir",        1, O_BUILDID_DIR,     "DIR      build-id cache (default $PROFF_BUILDID_DIR or ~/.debug)" },
	{ 'q', "quiet",              0, O_QUIET,           "         no summary lines" },
	{ 'r', "runs",               1, O_RUNS,            "N        run the command N times: FILE.1 ... FILE.N (for proff diff A.* -- B.*)" },
	{ 'h', "help",               0, O_HELP,            "         this help" },
	{ 0,   "instrument",         0, O_INSTRUMENT,      "         exact trace of a -finstrument-functions build (see proff record --instrument -h)" },
};
#define NR_OPTS (sizeof(opts) / sizeof(opts[0]))

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

static void usage(FILE *f)
{
	fprintf(f, "usage: proff record [options] [--] command [args]\n"
		   "       proff record [options] -p PID | -t TID | -a\n\n");
	for (size_t i = 0; i < NR_OPTS; i++) {
		char names[64];
		if (opts[i].short_name && opts[i].long_name)
			snprintf(names, sizeof(names), "-%c, --%s", opts[i].short_name, opts[i].long_name);
		else if (opts[i].short_name)
			snprintf(names, sizeof(names), "-%c", opts[i].short_name);
		else
			snprintf(names, sizeof(names), "    --%s", opts[i].long_name);
		fprintf(f, "    %-26s %s\n", names, opts[i].help);
	}
}

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
	case O_COUNT:
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
	case O_HELP: case O_INSTRUMENT: break;
	}
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
	rec_opts o;
	memset(&o, 0, sizeof(o));
	bool quiet = false;
	unsigned runs = 0;
	pid_t *pids = NULL, *tids = NULL;
	size_t npids = 0, ntids = 0;
	int ai = 1, ret = 1;

	while (ai < argc) {
		const char *a = argv[ai];
		if (!strcmp(a, "--")) {
			ai++;
			break;
		}
		if (a[0] != '-' || !a[1])
			break;          /* the command starts here */
		const struct opt *op = NULL;
		const char *val = NULL;
		char oname[64];
		if (a[1] == '-') {
			const char *nm = a + 2, *eq = strchr(nm, '=');
			size_t nl = eq ? (size_t)(eq - nm) : strlen(nm);
			for (size_t i = 0; i < NR_OPTS; i++)
				if (opts[i].long_name && strlen(opts[i].long_name) == nl &&
				    !strncmp(opts[i].long_name, nm, nl))
					op = &opts[i];
			if (!op) {
				cli_errorf("unknown option '%s'", a);
				usage(stderr);
				ret = EXIT_USAGE;
				goto out;
			}
			snprintf(oname, sizeof(oname), "--%s", op->long_name);
			if (eq) {
				if (!op->has_arg) {
					cli_errorf("option '%s' takes no value", oname);
					ret = EXIT_USAGE;
					goto out;
				}
				val = eq + 1;
			} else if (op->has_arg == 1) {
				if (ai + 1 >= argc) {
					cli_errorf("option '%s' needs a value", oname);
					ret = EXIT_USAGE;
					goto out;
				}
				val = argv[++ai];
			}
			ai++;
			if (op->id == O_INSTRUMENT) {
				free(pids);
				free(tids);
				return cmd_record_instrument(argc, argv);
			}
			if (op->id == O_HELP) {
				usage(stdout);
				ret = 0;
				goto out;
			}
			if (apply(&o, op->id, oname, val, &quiet, &pids, &npids, &tids, &ntids, &runs)) {
				ret = EXIT_USAGE;
				goto out;
			}
			continue;
		}
		/* bundled short options: -ag, -F4000, -o file */
		ai++;
		for (const char *c = a + 1; *c; c++) {
			op = NULL;
			for (size_t i = 0; i < NR_OPTS; i++)
				if (opts[i].short_name == *c)
					op = &opts[i];
			if (!op) {
				cli_errorf("unknown option '-%c'", *c);
				usage(stderr);
				ret = EXIT_USAGE;
				goto out;
			}
			snprintf(oname, sizeof(oname), "-%c", *c);
			val = NULL;
			if (op->has_arg == 1) {
				if (c[1]) {
					val = c + 1;
				} else if (ai < argc) {
					val = argv[ai++];
				} else {
					cli_errorf("option '%s' needs a value", oname);
					ret = EXIT_USAGE;
					goto out;
				}
			}
			if (op->id == O_HELP) {
				usage(stdout);
				ret = 0;
				goto out;
			}
			if (apply(&o, op->id, oname, val, &quiet, &pids, &npids, &tids, &ntids, &runs)) {
				ret = EXIT_USAGE;
				goto out;
			}
			if (val)
				break;
		}
	}
	if (ai < argc)
		o.argv = argv + ai;
	o.pids = pids;
	o.nr_pids = npids;
	o.tids = tids;
	o.nr_tids = ntids;
	if (!o.argv && !npids && !ntids && !o.system_wide) {
		cli_errorf("nothing to record: give a command, -p PID, -t TID or -a");
		usage(stderr);
		ret = EXIT_USAGE;
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
