/* trace-dprof.c — feeding a proff trace into the dprofpp builder
 * (include/proff/dprof.h), so that `proff dprofpp` can report exact traces.
 *
 * Clock: microseconds (hz = 1e6). DProf is single-threaded; here every thread
 * (of every process) is laid end to end on one time line, in trace order, so
 * that dprofpp's running overhead total stays monotonic; the run time is the
 * sum of the thread spans. Events arrive already resynchronised (longjmp,
 * exceptions, fork children), so the builder always sees well-nested calls.
 * Overhead per mark: half the calibrated o_full (DProf's model) when
 * compensating, else 0.
 */
#include "proff/dprof.h"
#include "proff/trace.h"
#include "trace-int.h"

#include <stdlib.h>
#include <string.h>

typedef struct feed {
	proff_trace *t;
	dprof_builder *b;
	uint32_t *name_of;     /* trace function id -> builder name id + 1 */
	size_t nname;
	double offset;         /* start of the current thread on the common time line (us) */
	double end;            /* end of the last thread seen */
	double us_per_tick;
	uint64_t first;
	uint64_t tid;
	int rc;
} feed;

static int feed_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	feed *f = arg;
	if (!ev) {
		f->offset = f->end;
		f->us_per_tick = 1e6 / th->ticks_per_sec;
		f->first = th->first_ticks;
		f->tid = th->index;
		f->end = f->offset + (double)(th->last_ticks - th->first_ticks) * f->us_per_tick;
		return 0;
	}
	if (ev->func >= f->nname) {
		size_t nn = proff_trace_nfuncs(f->t);
		uint32_t *p = pf_realloc_array(f->name_of, nn, sizeof(*p));
		if (!p)
			return PROFF_ENOMEM;
		memset(p + f->nname, 0, (nn - f->nname) * sizeof(*p));
		f->name_of = p;
		f->nname = nn;
	}
	if (!f->name_of[ev->func]) {
		const char *nm = proff_trace_func_name(f->t, ev->func);
		int64_t id = dprof_builder_intern(f->b, nm, strlen(nm));
		if (id < 0)
			return PROFF_ENOMEM;
		f->name_of[ev->func] = (uint32_t)id + 1;
	}
	uint64_t tk = ev->ticks > f->first ? ev->ticks - f->first : 0;
	double t = f->offset + (double)tk * f->us_per_tick;
	int rc = ev->kind == PROFF_TEV_ENTER
		? dprof_builder_enter(f->b, f->tid, f->name_of[ev->func] - 1, t)
		: dprof_builder_exit(f->b, f->tid, f->name_of[ev->func] - 1, t);
	if (rc < 0) {
		f->rc = rc;
		return rc;
	}
	return 0;
}

int proff_trace_to_dprof(proff_trace *t, const struct dprof_build_opts *opts, bool compensate,
			 struct dprof_model **out, proff_error *err)
{
	*out = NULL;
	dprof_builder *b = dprof_builder_new(opts, err);
	if (!b)
		return err && err->code ? err->code : PROFF_ENOMEM;
	proff_trace_info in;
	proff_trace_get_info(t, &in);
	dprof_builder_set_clock(b, 1e6);
	dprof_builder_set_overhead(b, compensate ? in.o_full_ns / 1e3 / 2 : 0);
	feed f = { .t = t, .b = b };
	int rc = proff_trace_foreach(t, feed_cb, &f, err);
	if (f.rc < 0) {
		const proff_error *be = dprof_builder_error(b);
		rc = proff_err_set(err, f.rc, t->path, PROFF_NO_OFFSET, "%s", be ? be->msg : "dprof builder failed");
	}
	if (rc >= 0) {
		dprof_builder_set_run_times(b, f.end, f.end);
		rc = dprof_builder_finish(b, f.end, out, err);
	}
	free(f.name_of);
	dprof_builder_free(b);
	return rc < 0 ? rc : 0;
}
