/* trace-model.c — an exact trace (proff record --instrument) as a profile.
 *
 * Every call becomes one sample of the event "exact-time": its stack is the
 * call path (the function under its callers, per thread), its period the
 * call's exclusive time in nanoseconds and its count 1. Self is then
 * exclusive time, Children inclusive time (each function counted once per
 * path, so recursion is not counted twice), the sample count the number of
 * calls — and report, diff, sort keys, filters and JSON work unchanged.
 * The inclusive time of every call is kept beside the samples (pf_exact) for
 * the per-call columns (average, min, max).
 *
 * Overhead compensation as in lib/trace: with the session's calibrated o_in
 * and o_full (clock ticks), a call with D descendants has
 *   incl' = incl - o_in - D*o_full,  excl' = incl' - sum of its children's incl'
 * each clamped at 0; pf_load_opts.no_compensate keeps raw times.
 *
 * What the trace could not tell exactly (synthetic exits by reason, unmatched
 * exits, dropped events, the clamps above) is kept in p->trace_quality for
 * the CLI's warnings.
 */
#include "model-int.h"
#include "proff/trace.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool pf_is_trace_file(const char *path)
{
	if (!path || !strcmp(path, "-"))
		return false;
	/* only regular files: a named pipe given with -i is a perf.data stream,
	 * and reading its first bytes here would take them from the reader */
	int fd = pf_open_regular(path);
	if (fd < 0)
		return false;
	uint32_t magic = 0;
	bool yes = read(fd, &magic, sizeof(magic)) == (ssize_t)sizeof(magic) && magic == PROFF_TRACE_MAGIC;
	close(fd);
	return yes;
}

typedef struct tframe {
	uint32_t node;
	uint64_t t0;               /* entry ticks */
	uint64_t g0;               /* calls started before this one (descendant count) */
	double child_comp;         /* children's inclusive ticks, compensated */
} tframe;

typedef struct tm_ctx {
	pf_profile *p;
	proff_trace *t;
	const pf_load_opts *opts;
	proff_error *err;
	uint32_t *func_loc;        /* function id -> location (PF_NONE: not yet) */
	size_t nfunc_loc;
	tframe *stk;
	size_t n, cap;
	uint64_t g;                /* calls started in this thread */
	uint32_t thread;           /* profile thread index of the current thread */
	double o_in, o_full;       /* current thread's session overheads, ticks */
	bool comp;                 /* compensating (o_in, o_full may still be 0) */
	double ns_per_tick;
	double carry;              /* sub-nanosecond remainder of the thread's exclusive times */
} tm_ctx;

static int tm_oom(tm_ctx *c)
{
	return proff_err_set(c->err, PROFF_ENOMEM, c->p->path, PROFF_NO_OFFSET, "out of memory");
}

static uint32_t loc_of_func(tm_ctx *c, uint32_t f)
{
	if (f >= c->nfunc_loc) {
		size_t nn = proff_trace_nfuncs(c->t);
		if (nn <= f)
			nn = (size_t)f + 1;
		uint32_t *v = pf_realloc_array(c->func_loc, nn, sizeof(*v));
		if (!v)
			return PF_NONE;
		for (size_t i = c->nfunc_loc; i < nn; i++)
			v[i] = PF_NONE;
		c->func_loc = v;
		c->nfunc_loc = nn;
	}
	if (c->func_loc[f] != PF_NONE)
		return c->func_loc[f];
	uint64_t addr = 0, off = 0;
	uint32_t loc;
	if (proff_trace_func_where(c->t, f, &addr, &off)) {
		const char *path = proff_trace_func_dso(c->t, f);
		uint32_t dso = pf__dso(c->p, path);
		if (dso == PF_NONE)
			return PF_NONE;
		loc = pf__loc(c->p, dso, off, addr);
	} else {
		loc = pf__loc(c->p, PF_NONE, addr, addr);
	}
	c->func_loc[f] = loc;
	return loc;
}

static void session_of(tm_ctx *c, uint64_t id, proff_trace_session_info *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < proff_trace_nsessions(c->t); i++) {
		proff_trace_session_get(c->t, i, out);
		if (out->id == id)
			return;
	}
	memset(out, 0, sizeof(*out));
}

/* Nanoseconds as an integer. A damaged trace can put 2^64 ticks between two
 * events, more than 2^64 ns: saturate instead of an undefined conversion. */
static uint64_t ns_sat(double ns)
{
	return ns >= 0x1p64 ? UINT64_MAX : ns > 0 ? (uint64_t)ns : 0;
}

static int tm_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	tm_ctx *c = arg;
	pf_profile *p = c->p;
	if (!ev) {
		proff_trace_session_info si;
		session_of(c, th->session, &si);
		char comm[16] = "";
		if (si.exe) {
			const char *b = strrchr(si.exe, '/');
			snprintf(comm, sizeof(comm), "%s", b ? b + 1 : si.exe);
		}
		c->thread = pf__thread(p, th->pid, th->tid, comm);
		if (c->thread == PF_NONE)
			return tm_oom(c);
		bool comp = c->comp = !c->opts->no_compensate;
		c->o_in = comp ? si.o_in_ticks : 0;
		c->o_full = comp ? si.o_full_ticks : 0;
		c->ns_per_tick = th->ticks_per_sec > 0 ? 1e9 / th->ticks_per_sec : 1;
		c->n = 0;
		c->g = 0;
		c->carry = 0;
		return 0;
	}
	if (ev->kind == PROFF_TEV_ENTER) {
		uint32_t loc = loc_of_func(c, ev->func);
		uint32_t parent = c->n ? c->stk[c->n - 1].node : 0;
		uint32_t node = loc == PF_NONE ? PF_NONE : pf__node(p, parent, loc);
		if (node == PF_NONE || PF_GROW(c->stk, c->cap, c->n + 1) < 0)
			return tm_oom(c);
		c->stk[c->n++] = (tframe){ node, ev->ticks, c->g++, 0 };
		return 0;
	}
	if (!c->n)
		return 0;
	tframe *f = &c->stk[--c->n];
	double raw = ev->ticks > f->t0 ? (double)(ev->ticks - f->t0) : 0;
	double D = (double)(c->g - f->g0 - 1);
	double incl = raw - c->o_in - D * c->o_full;
	if (incl < 0) {
		if (c->comp)
			proff_trace_note(c->t, PROFF_TA_CLAMP_INCL, ev->func);
		incl = 0;
	}
	double excl = incl - f->child_comp;
	if (excl < 0) {
		if (c->comp)
			proff_trace_note(c->t, PROFF_TA_CLAMP_EXCL, ev->func);
		excl = 0;
	}
	if (c->n)
		c->stk[c->n - 1].child_comp += incl;
	/* whole nanoseconds, the remainders carried to the thread's next call:
	 * rounding each call alone would bias the sums by up to 0.5 ns a call */
	double want = excl * c->ns_per_tick + c->carry;
	uint64_t excl_ns = ns_sat(want);
	c->carry = want < 0x1p64 ? want - (double)excl_ns : 0;
	uint64_t incl_ns = ns_sat(incl * c->ns_per_tick + 0.5);
	int idx = pf__sample(p, c->thread, f->node, excl_ns);
	if (idx < 0)
		return tm_oom(c);
	if ((size_t)idx >= c->p->cap_exact) {
		size_t old = p->cap_exact;
		if (PF_GROW(p->exact, p->cap_exact, (size_t)idx + 1) < 0)
			return tm_oom(c);
		memset(p->exact + old, 0, (p->cap_exact - old) * sizeof(*p->exact));
	}
	pf_exact *x = &p->exact[idx];
	if (!x->incl && !x->max && !x->min)
		x->min = incl_ns;
	x->incl += incl_ns;
	if (incl_ns < x->min)
		x->min = incl_ns;
	if (incl_ns > x->max)
		x->max = incl_ns;
	p->events[0].total_period += excl_ns;
	p->events[0].nr_samples++;
	return 0;
}

/* The functions the quality counts name, named as the profile names their
 * locations (the trace itself is not symbolized here). */
static int name_quality(tm_ctx *c, proff_trace_quality *q)
{
	for (int a = 0; a < PROFF_TA_COUNT; a++)
		for (int k = 0; k < PROFF_TRACE_QUALITY_TOP && q->top[a][k].name; k++) {
			uint32_t f = q->top[a][k].func;
			uint32_t loc = f < c->nfunc_loc ? c->func_loc[f] : PF_NONE;
			if (loc == PF_NONE || c->p->locs[loc].sym == PF_NONE)
				continue;
			char *nm = pf_strdup(pf_str(c->p, c->p->syms[c->p->locs[loc].sym].name));
			if (!nm)
				return tm_oom(c);
			free(q->top[a][k].name);
			q->top[a][k].name = nm;
		}
	return 0;
}

int pf__load_trace(pf_profile *p, const char *path, const pf_load_opts *opts, proff_error *err)
{
	proff_trace *t = NULL;
	int rc = proff_trace_open(path, &t, err);
	if (rc < 0)
		return rc;
	if (opts->have_overheads)
		proff_trace_set_overheads(t, opts->o_in_ns, opts->o_full_ns);
	p->events = calloc(1, sizeof(*p->events));
	if (!p->events || !(p->events[0].name = strdup("exact-time"))) {
		proff_trace_close(t);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	p->nr_events = 1;
	p->events[0].has_callchain = true;
	tm_ctx c = { .p = p, .t = t, .opts = opts, .err = err };
	rc = proff_trace_foreach(t, tm_cb, &c, err);
	if (rc > 0)
		rc = err && err->code ? err->code : PROFF_ENOMEM;
	if (rc >= 0) {
		p->trace_quality = calloc(1, sizeof(*p->trace_quality));
		rc = p->trace_quality ? proff_trace_quality_get(t, p->trace_quality, err)
				      : proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	if (rc >= 0)
		rc = name_quality(&c, p->trace_quality);
	free(c.func_loc);
	free(c.stk);
	proff_trace_close(t);
	return rc < 0 ? rc : 0;
}

void pf__free_trace_quality(pf_profile *p)
{
	if (!p->trace_quality)
		return;
	proff_trace_quality_free(p->trace_quality);
	free(p->trace_quality);
	p->trace_quality = NULL;
}
