/* fuzz_trace.c — libFuzzer target for the exact-trace reader (lib/trace) and
 * its conversions: the input is written to a memfd and opened by path
 * (/proc/self/fd/N: proff_trace_open maps a file), then every event is
 * decoded (proff_trace_foreach, invariants checked; proff_trace_has_events
 * and the pass's anomaly counts too), the statistics computed
 * with and without compensation, the trace fed to the dprofpp builder and
 * reported, and finally loaded as a profile (pf_profile_load, which detects
 * the trace magic). Symbols are looked up under a symfs that does not exist,
 * so nothing outside the input is read. An error must say what is wrong and
 * name the file (and the byte offset for a format error). Any crash, hang,
 * leak, sanitizer report or unbounded allocation is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proff/dprof.h"
#include "proff/profile.h"
#include "proff/trace.h"

static FILE *devnull;
static int fd = -1;
static char path[64];

typedef struct ctx {
	proff_trace *t;
	uint64_t acc, nev;
	size_t nthreads;
	bool in_thread;
} ctx;

static int ev_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	ctx *c = arg;
	if (!ev) {
		if (th->index >= c->nthreads)
			abort();
		c->in_thread = true;
		c->acc += th->tid + th->first_ticks + th->last_ticks;
		return 0;
	}
	if (!c->in_thread || ev->func >= proff_trace_nfuncs(c->t))
		abort();               /* events only after their thread, functions known */
	if (ev->kind != PROFF_TEV_ENTER && ev->kind != PROFF_TEV_EXIT)
		abort();
	const char *n = proff_trace_func_name(c->t, ev->func), *d = proff_trace_func_dso(c->t, ev->func);
	c->acc += strlen(n) + strlen(d) + ev->ticks + ev->depth;
	uint64_t a, o;
	proff_trace_func_where(c->t, ev->func, &a, &o);
	c->nev++;
	return 0;
}

/* A failure must say what is wrong and name the file; a format error also
 * says where: the byte offset, or the line for the text formats that
 * pf_profile_load also recognises (folded stacks: "line N: ..."). */
static void check_err(int rc, const proff_error *e)
{
	if (rc < 0 && (!e->code || !e->msg[0] || strcmp(e->file, path) ||
		       (e->code == PROFF_EFORMAT && e->offset == PROFF_NO_OFFSET &&
			strncmp(e->msg, "line ", 5))))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	if (fd < 0) {
		fd = memfd_create("fuzz-trace", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		abort();

	proff_trace *t;
	proff_error e;
	memset(&e, 0, sizeof(e));
	int has = proff_trace_has_events(path, &e);
	if (has < 0)
		check_err(has, &e);
	memset(&e, 0, sizeof(e));
	int rc = proff_trace_open(path, &t, &e);
	check_err(rc, &e);
	if (rc == 0) {
		proff_trace_info in;
		proff_trace_get_info(t, &in);
		for (size_t i = 0; i < proff_trace_nsessions(t); i++) {
			proff_trace_session_info si;
			proff_trace_session_get(t, i, &si);
			fprintf(devnull, "%s %d\n", si.exe, si.end_reason);
		}
		ctx c = { .t = t, .nthreads = in.nthreads };
		memset(&e, 0, sizeof(e));
		check_err(proff_trace_foreach(t, ev_cb, &c, &e), &e);
		/* the pass's anomaly counts: consistent with what was decoded */
		proff_trace_quality q;
		memset(&e, 0, sizeof(e));
		if (proff_trace_quality_get(t, &q, &e) == 0) {
			for (int a = 0; a < PROFF_TA_COUNT; a++)
				for (int k = 0; k < PROFF_TRACE_QUALITY_TOP && q.top[a][k].name; k++)
					if (q.top[a][k].count > q.count[a] || q.top[a][k].func >= proff_trace_nfuncs(t))
						abort();
			fprintf(devnull, "%d\n", proff_trace_quality_warns(&q, PROFF_TA_LOST_EXIT));
			proff_trace_quality_free(&q);
		}
		for (int comp = 0; comp < 2; comp++) {
			proff_trace_stats_opts so = { .compensate = comp };
			proff_trace_stats st;
			memset(&e, 0, sizeof(e));
			rc = proff_trace_stats_compute(t, &so, &st, &e);
			check_err(rc, &e);
			if (rc == 0) {
				for (size_t i = 0; i < st.nfuncs; i++)
					fprintf(devnull, "%s %llu %g %g\n", st.funcs[i].name,
						(unsigned long long)st.funcs[i].calls, st.funcs[i].incl, st.funcs[i].excl);
				proff_trace_stats_free(&st);
			}
		}
		dprof_build_opts bo = { .deep = true, .fake_exits = true, .out = devnull };
		dprof_model *m;
		if (proff_trace_to_dprof(t, &bo, true, &m, &e) == 0) {
			dprof_report_opts ro = { .clock = DPROF_CLOCK_REAL, .name_width = 34, .deep = true };
			dprof_report(devnull, m, &ro, &e);
			dprof_model_free(m);
		}
		proff_trace_set_overheads(t, 11, 23);
		proff_trace_close(t);
	}

	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.symfs = "/nonexistent-proff-fuzz-symfs";
	pf_profile *p;
	memset(&e, 0, sizeof(e));
	rc = pf_profile_load(path, &lo, &p, &e);
	check_err(rc, &e);
	if (rc == 0)
		pf_profile_free(p);
	return 0;
}
