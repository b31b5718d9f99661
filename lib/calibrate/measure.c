/* measure.c — the measurements of `proff calibrate`.
 *
 * A table of measurement groups (name, setup, run, teardown). setup builds
 * what the group needs (workload programs compiled with `cc` from sources
 * embedded in instrument.c and sample.c) and declares the rows it
 * measures; run does one repetition and fills a value per row; teardown
 * removes what setup made.
 * Every repetition runs pinned to one CPU (sched_setaffinity, inherited by
 * the workloads); a repetition in which a task migrated (cpu-migrations
 * software counter, sched_getcpu before/after) is discarded.
 *
 *  timer       rdtsc, rdtscp, lfence;rdtsc, clock_gettime(CLOCK_MONOTONIC)
 *              and a plain call of an empty function: N in a tight loop,
 *              thread CPU time / N.
 *  instrument  a call-heavy program (N calls of an empty function) built
 *              with and without -finstrument-functions, run plain, with the
 *              hooks compiled in but no runtime (glibc's empty hooks: "idle"),
 *              and with libproff-instrument.so preloaded; CPU time of each
 *              (wait4), differences / N. The runtime's fixed start-up cost
 *              comes from the same runs with N = 0. o_in and o_full the TAU
 *              way from the recorded trace: o_in = recorded duration of the
 *              empty function, o_full = (recorded duration of the loop - o_in)
 *              / N - the plain call's cost.
 *  sample      a busy loop that notes the interrupts it suffers, run under
 *              the sampling recorder (rec_run in a child) at 10 Hz and at
 *              each -F, with and without -g; per sample = the added
 *              interrupt time the workload saw + the recorder's own added
 *              CPU time, over the added samples (sample.c).
 *
 * Hardware counters are opened around every run (perf_event_open, inherited
 * by the workload's children); a counter that does not open is reported as
 * not supported, time is always measured.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "proff/calibrate.h"
#include "proff/record.h"
#include "proff/trace.h"
#include "proff/util.h"
#include "cal-int.h"

extern char **environ;

/* ---- counters ----------------------------------------------------------------- */

#define HWC(c) PERF_TYPE_HARDWARE, PERF_COUNT_HW_##c
#define SWC(c) PERF_TYPE_SOFTWARE, PERF_COUNT_SW_##c
#define CACHE(c, op, res) PERF_TYPE_HW_CACHE, \
	(PERF_COUNT_HW_CACHE_##c | (PERF_COUNT_HW_CACHE_OP_##op << 8) | (PERF_COUNT_HW_CACHE_RESULT_##res << 16))

/* each counter once (its name, type and config); the definitions and the
 * list of names are both made from it at compile time, so nothing is
 * filled in at run time */
#define COUNTERS(X) \
	X("instructions",          HWC(INSTRUCTIONS)) \
	X("cycles",                HWC(CPU_CYCLES)) \
	X("branches",              HWC(BRANCH_INSTRUCTIONS)) \
	X("branch-misses",         HWC(BRANCH_MISSES)) \
	X("cache-references",      HWC(CACHE_REFERENCES)) \
	X("cache-misses",          HWC(CACHE_MISSES)) \
	X("LLC-loads",             CACHE(LL, READ, ACCESS)) \
	X("LLC-load-misses",       CACHE(LL, READ, MISS)) \
	X("LLC-stores",            CACHE(LL, WRITE, ACCESS)) \
	X("LLC-store-misses",      CACHE(LL, WRITE, MISS)) \
	X("LLC-prefetch-misses",   CACHE(LL, PREFETCH, MISS)) \
	X("L1-dcache-load-misses", CACHE(L1D, READ, MISS)) \
	X("L1-icache-load-misses", CACHE(L1I, READ, MISS)) \
	X("dTLB-load-misses",      CACHE(DTLB, READ, MISS)) \
	X("task-clock",            SWC(TASK_CLOCK)) \
	X("cpu-clock",             SWC(CPU_CLOCK)) \
	X("page-faults",           SWC(PAGE_FAULTS)) \
	X("context-switches",      SWC(CONTEXT_SWITCHES)) \
	X("cpu-migrations",        SWC(CPU_MIGRATIONS))
#define COUNTER_ROW(name, ...) { name, __VA_ARGS__ },
#define COUNTER_NAME(name, ...) name,
static const cal_counter_def counter_defs[] = { COUNTERS(COUNTER_ROW) };
static const char *const counter_names[] = { COUNTERS(COUNTER_NAME) NULL };
#define NCOUNTER_DEFS (sizeof(counter_defs) / sizeof(counter_defs[0]))

const char *const *cal_counter_names(void)
{
	return counter_names;
}

const cal_counter_def *cal_counter_find(const char *name)
{
	for (size_t i = 0; i < NCOUNTER_DEFS; i++)
		if (!strcmp(counter_defs[i].name, name))
			return &counter_defs[i];
	return NULL;
}

static int pe_open(uint32_t type, uint64_t config, pid_t pid, bool disabled, int *err_no)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = type;
	a.config = config;
	a.disabled = disabled;
	a.inherit = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0) {
		/* perf_event_paranoid may forbid kernel counting: user space only */
		a.exclude_kernel = 1;
		fd = (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0 && err_no)
		*err_no = errno;
	return fd;
}

/* The counters of one run, plus the migrations counter. */
typedef struct cal_pe_set cal_pe;

static void pe_open_all(cal_ctx *c, cal_pe *pe, pid_t pid, bool disabled)
{
	for (size_t i = 0; i < c->res->ncounters; i++) {
		int e = 0;
		pe->fd[i] = pe_open(c->res->counters[i]->type, c->res->counters[i]->config, pid, disabled, &e);
		if (pe->fd[i] >= 0) {
			c->res->counter_supported[i] = true;
		} else if (!c->res->counter_why[i][0]) {
			snprintf(c->res->counter_why[i], sizeof(c->res->counter_why[i]), "%s",
				 e == ENOENT || e == EOPNOTSUPP || e == EINVAL ? "<not supported>" :
				 e == EACCES || e == EPERM ? "<not permitted>" : "<not counted>");
		}
	}
	pe->mig_fd = pe_open(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, pid, disabled, NULL);
}

static void pe_ioctl_all(cal_ctx *c, cal_pe *pe, unsigned long req)
{
	for (size_t i = 0; i < c->res->ncounters; i++)
		if (pe->fd[i] >= 0)
			ioctl(pe->fd[i], req, 0);
	if (pe->mig_fd >= 0)
		ioctl(pe->mig_fd, req, 0);
}

/* Read and close; values into s. */
static void pe_close_all(cal_ctx *c, cal_pe *pe, cal_sample *s)
{
	for (size_t i = 0; i < c->res->ncounters; i++) {
		uint64_t v;
		s->cnt_ok[i] = pe->fd[i] >= 0 && read(pe->fd[i], &v, sizeof(v)) == (ssize_t)sizeof(v);
		s->cnt[i] = s->cnt_ok[i] ? (double)v : 0;
		if (pe->fd[i] >= 0)
			close(pe->fd[i]);
	}
	if (pe->mig_fd >= 0) {
		uint64_t v;
		if (read(pe->mig_fd, &v, sizeof(v)) == (ssize_t)sizeof(v) && v > 0)
			s->migrated = true;
		close(pe->mig_fd);
	}
}

/* ---- helpers ---------------------------------------------------------------------- */

void cal_progress(cal_ctx *c, const char *fmt, ...)
{
	if (!c->opts->progress)
		return;
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->opts->progress(c->opts->progress_ctx, buf);
}

static double ts_ns(const struct timespec *t)
{
	return (double)t->tv_sec * 1e9 + (double)t->tv_nsec;
}

double cal_thread_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return ts_ns(&t);
}

int cal_add_row(cal_ctx *c, const char *group, const char *name, const char *per, uint64_t ops)
{
	if (c->nrows >= CAL_MAX_ROWS)
		return -1;
	cal_row_data *d = &c->rowdata[c->nrows];
	memset(d, 0, sizeof(*d));
	cal_result_row *r = &c->res->rows[c->nrows];
	memset(r, 0, sizeof(*r));
	snprintf(r->group, sizeof(r->group), "%s", group);
	snprintf(r->name, sizeof(r->name), "%s", name);
	snprintf(r->per, sizeof(r->per), "%s", per);
	r->ops = ops;
	r->measured = true;
	c->res->nrows = ++c->nrows;
	return (int)c->nrows - 1;
}

void cal_row_skip(cal_ctx *c, int row, const char *fmt, ...)
{
	if (row < 0)
		return;
	cal_result_row *r = &c->res->rows[row];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->note, sizeof(r->note), fmt, ap);
	va_end(ap);
	r->measured = false;
}

/* One kept value of a row for the current run: ns per op and the counter
 * deltas per op (cnt_ok false where a counter was not read). */
void cal_row_value(cal_ctx *c, int row, double ns, const double *cnt, const bool *cnt_ok)
{
	if (row < 0 || !c->res->rows[row].measured)
		return;
	cal_row_data *d = &c->rowdata[row];
	if (d->n >= CAL_MAX_RUNS)
		return;
	d->ns[d->n] = ns;
	for (size_t i = 0; i < c->res->ncounters; i++) {
		d->cnt[i][d->n] = cnt ? cnt[i] : 0;
		if (!cnt || !cnt_ok[i])
			d->cnt_bad[i] = true;
	}
	d->n++;
}

void cal_row_no_counters(cal_ctx *c, int row)
{
	if (row >= 0)
		c->res->rows[row].counters_na = true;
}

void cal_row_discard(cal_ctx *c, int row)
{
	if (row >= 0)
		c->res->rows[row].discarded++;
}

/* Per-op counter deltas of (a - b) / ops; ok only where both were read. */
void cal_cnt_delta(cal_ctx *c, const cal_sample *a, const cal_sample *b, double ops, double *out, bool *ok)
{
	for (size_t i = 0; i < c->res->ncounters; i++) {
		ok[i] = a->cnt_ok[i] && (!b || b->cnt_ok[i]);
		out[i] = ok[i] ? (a->cnt[i] - (b ? b->cnt[i] : 0)) / ops : 0;
	}
}

char *cal_path(cal_ctx *c, const char *name)
{
	char *p = malloc(strlen(c->dir) + strlen(name) + 2);
	if (p)
		sprintf(p, "%s/%s", c->dir, name);
	return p;
}

int cal_write_file(cal_ctx *c, const char *name, const char *text)
{
	char *p = cal_path(c, name);
	if (!p)
		return -1;
	FILE *f = fopen(p, "w");
	free(p);
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* ---- running a child -------------------------------------------------------------- */

/* Run argv (envp, or environ) or fn(arg) in a child pinned like us, stdout
 * and stderr to /dev/null, with the counters attached before it starts.
 * CPU time (user + system, the child and its waited-for descendants) into s.
 * Returns 0, or -1 if it could not be run or did not exit with 0. */
int cal_spawn(cal_ctx *c, char *const argv[], char *const envp[], int (*fn)(void *), void *arg,
	      cal_sample *s)
{
	memset(s, 0, sizeof(*s));
	int go[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -1;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(go[0]);
		close(go[1]);
		return -1;
	}
	if (pid == 0) {
		close(go[1]);
		char b;
		if (read(go[0], &b, 1) != 1)
			_exit(126);
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 1);
			dup2(nul, 2);
			if (nul > 2)
				close(nul);
		}
		if (fn)
			_exit(fn(arg));
		execve(argv[0], argv, envp ? envp : environ);
		_exit(127);
	}
	close(go[0]);
	cal_pe pe;
	pe_open_all(c, &pe, pid, false);
	int cpu0 = sched_getcpu();
	if (write(go[1], "g", 1) != 1) {
		/* nothing to do: the child sees EOF and exits 126 */
	}
	close(go[1]);
	int st = 0;
	struct rusage ru;
	while (wait4(pid, &st, 0, &ru) < 0) {
		if (errno != EINTR) {
			pe_close_all(c, &pe, s);
			return -1;
		}
	}
	pe_close_all(c, &pe, s);
	if (sched_getcpu() != cpu0)
		s->migrated = true;
	s->cpu_ns = ((double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec) * 1e9 +
		    ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e3;
	s->status = st;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

/* Compile dir/src into dir/out with the workload compiler and extra flags
 * (NULL terminated). Returns 0 or -1 (compiler missing or failing). */
int cal_compile(cal_ctx *c, const char *src, const char *out, const char *const *flags)
{
	char *argv[32];
	size_t n = 0;
	char *s = cal_path(c, src), *o = cal_path(c, out);
	int rc = -1;
	if (!s || !o)
		goto done;
	argv[n++] = (char *)c->cc;
	argv[n++] = (char *)"-O2";
	for (size_t i = 0; flags && flags[i] && n < 24; i++)
		argv[n++] = (char *)flags[i];
	argv[n++] = (char *)"-o";
	argv[n++] = o;
	argv[n++] = s;
	argv[n] = NULL;
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		goto done;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR);
		if (nul >= 0) {
			dup2(nul, 1);
			dup2(nul, 2);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			goto done;
	rc = WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
done:
	free(s);
	free(o);
	return rc;
}

/* ---- in-process measurement ------------------------------------------------------- */

void cal_self_begin(cal_ctx *c, cal_self *m)
{
	pe_open_all(c, &m->pe, 0, true);
	m->cpu0 = sched_getcpu();
	pe_ioctl_all(c, &m->pe, PERF_EVENT_IOC_ENABLE);
	m->t0 = cal_thread_ns();
}

void cal_self_end(cal_ctx *c, cal_self *m, cal_sample *s)
{
	double t1 = cal_thread_ns();
	pe_ioctl_all(c, &m->pe, PERF_EVENT_IOC_DISABLE);
	memset(s, 0, sizeof(*s));
	pe_close_all(c, &m->pe, s);
	if (sched_getcpu() != m->cpu0)
		s->migrated = true;
	s->cpu_ns = t1 - m->t0;
}

/* ---- TSC rate ---------------------------------------------------------------------- */

static double tsc_rate(double ms)
{
#if HAVE_TSC
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	uint64_t t0 = __rdtsc(), t1;
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
		t1 = __rdtsc();
	} while (ts_ns(&b) - ts_ns(&a) < ms * 1e6);
	return (double)(t1 - t0) * 1e9 / (ts_ns(&b) - ts_ns(&a));
#else
	(void)ms;
	return 0;
#endif
}

/* ---- the table of groups ------------------------------------------------------------- */

static const cal_group groups[] = {
	{ "timer",      cal_timer_setup,      cal_timer_run,      cal_timer_teardown },
	{ "instrument", cal_instrument_setup, cal_instrument_run, cal_instrument_teardown },
	{ "sample",     cal_sample_setup,     cal_sample_run,     cal_sample_teardown },
};
#define NGROUPS (sizeof(groups) / sizeof(groups[0]))

static bool group_wanted(const char *list, const char *name)
{
	if (!list)
		return true;
	size_t n = strlen(name);
	for (const char *p = list; *p;) {
		const char *e = strchr(p, ',');
		size_t len = e ? (size_t)(e - p) : strlen(p);
		if (len == n && !strncmp(p, name, n))
			return true;
		if (!e)
			break;
		p = e + 1;
	}
	return false;
}

static int parse_lists(const cal_opts *o, cal_result *res, proff_error *err)
{
	const char *spec = o->counters ? o->counters : CAL_DEFAULT_COUNTERS;
	char buf[512];
	if (strlen(spec) >= sizeof(buf))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "counter list too long");
	strcpy(buf, spec);
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const cal_counter_def *d = cal_counter_find(t);
		if (!d) {
			char names[1024] = "";
			for (size_t i = 0; i < NCOUNTER_DEFS; i++) {
				strncat(names, i ? ", " : "", sizeof(names) - strlen(names) - 1);
				strncat(names, counter_defs[i].name, sizeof(names) - strlen(names) - 1);
			}
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "unknown counter '%s' (known: %s)", t, names);
		}
		if (res->ncounters >= CAL_MAX_COUNTERS)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "at most %d counters", CAL_MAX_COUNTERS);
		res->counters[res->ncounters++] = d;
	}
	if (o->groups) {
		size_t n = strlen(o->groups);
		for (size_t p = 0; p < n;) {
			size_t e = p;
			while (e < n && o->groups[e] != ',')
				e++;
			bool found = false;
			for (size_t g = 0; g < NGROUPS; g++)
				if (strlen(groups[g].name) == e - p && !strncmp(groups[g].name, o->groups + p, e - p))
					found = true;
			if (!found)
				return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
						     "unknown measurement group '%.*s' (known: timer, instrument, sample)",
						     (int)(e - p), o->groups + p);
			p = e + 1;
		}
	}
	return 0;
}

static void summarize_rows(cal_ctx *c)
{
	for (size_t i = 0; i < c->nrows; i++) {
		cal_result_row *r = &c->res->rows[i];
		cal_row_data *d = &c->rowdata[i];
		r->kept = (unsigned)d->n;
		if (r->measured && d->n == 0) {
			r->measured = false;
			if (!r->note[0])
				snprintf(r->note, sizeof(r->note), "no run could be kept (%u discarded)", r->discarded);
		}
		cal_summarize(d->ns, d->n, &r->ns);
		for (size_t k = 0; k < c->res->ncounters; k++) {
			cal_counter_result *cr = &r->counters[k];
			cr->supported = r->measured && !r->counters_na && !d->cnt_bad[k];
			if (cr->supported)
				cal_summarize(d->cnt[k], d->n, &cr->per_op);
			else
				snprintf(cr->why, sizeof(cr->why), "%s",
					 c->res->counter_why[k][0] ? c->res->counter_why[k] : "<not counted>");
		}
	}
}

static double row_median(const cal_result *r, const char *group, const char *name)
{
	for (size_t i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i].group, group) && !strcmp(r->rows[i].name, name) && r->rows[i].measured)
			return r->rows[i].ns.median;
	return 0;
}

int cal_run(const cal_opts *opts, cal_result *res, proff_error *err)
{
	memset(res, 0, sizeof(*res));
	cal_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc = 0;
	cpu_set_t old;
	bool pinned = false;
	c->opts = opts;
	c->res = res;
	res->runs = opts->runs ? opts->runs : 10;
	if (res->runs > CAL_MAX_RUNS) {
		rc = proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "at most %d runs", CAL_MAX_RUNS);
		goto out;
	}
	if ((rc = parse_lists(opts, res, err)) < 0)
		goto out;
	res->rows = calloc(CAL_MAX_ROWS, sizeof(cal_result_row));
	c->rowdata = calloc(CAL_MAX_ROWS, sizeof(cal_row_data));
	if (!res->rows || !c->rowdata) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	c->cc = opts->cc ? opts->cc : getenv("CC") && *getenv("CC") ? getenv("CC") : "cc";
	snprintf(res->cc, sizeof(res->cc), "%s", c->cc);

	/* pin */
	int cpu = opts->cpu >= 0 ? opts->cpu : sched_getcpu();
	if (cpu < 0)
		cpu = 0;
	if (sched_getaffinity(0, sizeof(old), &old) == 0) {
		if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &old)) {
			rc = proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					   "CPU %d is not available to this process", cpu);
			goto out;
		}
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one) < 0) {
			rc = proff_err_sys(err, PROFF_EIO, NULL, "cannot pin to CPU %d", cpu);
			goto out;
		}
		pinned = true;
	}
	res->cpu = cpu;
	res->tsc_hz = tsc_rate(opts->quick ? 10 : 50);

	const char *tmp = opts->tmpdir ? opts->tmpdir : getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	snprintf(c->dir, sizeof(c->dir), "%s/proff-calibrate.XXXXXX", tmp);
	if (!mkdtemp(c->dir)) {
		rc = proff_err_sys(err, PROFF_EIO, c->dir, "cannot create a directory");
		goto out;
	}

	for (size_t g = 0; g < NGROUPS; g++) {
		if (!group_wanted(opts->groups, groups[g].name))
			continue;
		void *state = NULL;
		size_t first = c->nrows;
		if (groups[g].setup(c, &state) < 0) {
			for (size_t i = first; i < c->nrows; i++)
				if (!res->rows[i].note[0])
					cal_row_skip(c, (int)i, "setup failed");
			if (groups[g].teardown)
				groups[g].teardown(c, state);
			continue;
		}
		for (unsigned r = 0; r < res->runs; r++) {
			cal_progress(c, "%s: run %u of %u", groups[g].name, r + 1, res->runs);
			groups[g].run(c, state, r);
		}
		if (groups[g].teardown)
			groups[g].teardown(c, state);
	}
	summarize_rows(c);
	res->o_in_ns = row_median(res, "instrument", "o_in");
	res->o_full_ns = row_median(res, "instrument", "o_full");
	res->call_ns = row_median(res, "instrument", "proff per call");
	res->idle_ns = row_median(res, "instrument", "idle hooks");
	res->start_ns = row_median(res, "instrument", "runtime start-up");
	if (c->opts->freqs[0]) {
		char nm[48];
		res->sample_hz = (double)c->opts->freqs[0];
		snprintf(nm, sizeof(nm), "F=%llu", (unsigned long long)c->opts->freqs[0]);
		res->sample_ns = row_median(res, "sample", nm);
		snprintf(nm, sizeof(nm), "F=%llu -g", (unsigned long long)c->opts->freqs[0]);
		res->sample_cg_ns = row_median(res, "sample", nm);
		if (res->sample_ns <= 0 && res->sample_cg_ns <= 0)
			res->sample_hz = 0;
	}
	if (res->o_in_ns > res->o_full_ns)
		res->o_in_ns = res->o_full_ns;
	rmdir(c->dir);
out:
	if (pinned)
		sched_setaffinity(0, sizeof(old), &old);
	free(c->rowdata);
	free(c);
	if (rc < 0) {
		cal_result_free(res);
		memset(res, 0, sizeof(*res));
	}
	return rc;
}

void cal_result_free(cal_result *r)
{
	free(r->rows);
	r->rows = NULL;
	r->nrows = 0;
}
