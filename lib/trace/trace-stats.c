/* trace-stats.c — per-function statistics of an exact trace (calls,
 * inclusive and exclusive time, min/max per call, descendants), over the
 * resynchronised event stream of trace.c, with TAU-style overhead
 * compensation: a call with D descendants and K children gets
 *   incl' = incl - o_in - D*o_full,  excl' = incl' - sum of the children's incl'
 * each clamped at 0 (the clamps are counted per function as anomalies).
 */
#include "proff/trace.h"
#include "proff/util.h"
#include "trace-int.h"

#include <stdlib.h>
#include <string.h>

typedef struct aframe {
	uint32_t func;
	uint64_t t0, g0;
	double child_raw, child_comp;
} aframe;

typedef struct faccum {
	uint64_t calls, active, D, K;
	double incl, excl, incl_raw, excl_raw, min, max;
} faccum;

typedef struct stats_ctx {
	proff_trace *t;
	const proff_trace_stats_opts *o;
	faccum *f;
	size_t nf;
	aframe *stk;
	size_t n, cap;
	double o_in, o_full, scale;   /* ticks, ticks, seconds per tick */
	uint64_t g;                   /* calls so far in this thread */
	double root_raw, root_comp;   /* completed outermost frames of this thread */
	uint64_t clamped;
	double total;
	uint64_t calls;
	bool skip;
} stats_ctx;

static int stats_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	stats_ctx *c = arg;
	if (!ev) {
		c->skip = c->o->pid && (int)th->pid != c->o->pid;
		c->n = 0;
		c->g = 0;
		c->root_raw = c->root_comp = 0;
		const tsession *s = &c->t->sessions[c->t->threads[th->index].sess];
		c->o_in = c->o->compensate ? s->o_in : 0;
		c->o_full = c->o->compensate ? s->o_full : 0;
		c->scale = 1.0 / s->tps;
		if (!c->skip) {
			/* total: the thread's span, less the overhead of all its calls */
			double span = (double)(th->last_ticks - th->first_ticks);
			double calls = (double)c->t->threads[th->index].nevents / 2;
			double comp = span - calls * c->o_full;
			c->total += (comp > 0 ? comp : 0) * c->scale;
		}
		return 0;
	}
	if (c->skip)
		return 0;
	if (ev->func >= c->nf) {
		size_t nn = c->t->nfuncs;
		faccum *nf = pf_realloc_array(c->f, nn, sizeof(*nf));
		if (!nf)
			return PROFF_ENOMEM;
		memset(nf + c->nf, 0, (nn - c->nf) * sizeof(*nf));
		c->f = nf;
		c->nf = nn;
	}
	faccum *fa = &c->f[ev->func];
	if (ev->kind == PROFF_TEV_ENTER) {
		if (PF_GROW(c->stk, c->cap, c->n + 1) < 0)
			return PROFF_ENOMEM;
		c->g++;
		aframe *a = &c->stk[c->n++];
		*a = (aframe){ .func = ev->func, .t0 = ev->ticks, .g0 = c->g };
		if (ev->reason == PROFF_TA_PRE_TRACE && c->n == 1) {
			/* entry invented at the thread start: the outermost frames
			 * completed so far ran inside it */
			a->child_raw = c->root_raw;
			a->child_comp = c->root_comp;
			c->root_raw = c->root_comp = 0;
		}
		fa->active++;
		return 0;
	}
	if (!c->n)
		return 0;
	aframe *a = &c->stk[--c->n];
	double raw = (double)(ev->ticks - a->t0);
	uint64_t D = c->g - a->g0;
	double comp = raw - c->o_in - (double)D * c->o_full;
	if (comp < 0) {
		if (c->o->compensate) {
			c->clamped++;
			proff_trace_note(c->t, PROFF_TA_CLAMP_INCL, ev->func);
		}
		comp = 0;
	}
	double ex_raw = raw - a->child_raw, ex = comp - a->child_comp;
	if (ex_raw < 0)
		ex_raw = 0;
	if (ex < 0) {
		if (c->o->compensate) {
			c->clamped++;
			proff_trace_note(c->t, PROFF_TA_CLAMP_EXCL, ev->func);
		}
		ex = 0;
	}
	if (fa->active)
		fa->active--;
	double per = (c->o->compensate ? comp : raw) * c->scale;
	if (!fa->calls || per < fa->min)
		fa->min = per;
	if (per > fa->max)
		fa->max = per;
	fa->calls++;
	c->calls++;
	fa->excl += ex * c->scale;
	fa->excl_raw += ex_raw * c->scale;
	if (!fa->active) {          /* outermost activation of a recursion */
		fa->incl += comp * c->scale;
		fa->incl_raw += raw * c->scale;
		fa->D += D;
	}
	if (c->n) {
		aframe *p = &c->stk[c->n - 1];
		p->child_raw += raw;
		p->child_comp += comp;
		c->f[p->func].K++;
	} else {
		c->root_raw += raw;
		c->root_comp += comp;
	}
	return 0;
}

static int cmp_excl(const void *a, const void *b)
{
	const proff_trace_func_stats *x = a, *y = b;
	if (x->excl != y->excl)
		return x->excl < y->excl ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

int proff_trace_stats_compute(proff_trace *t, const proff_trace_stats_opts *opts,
			      proff_trace_stats *out, proff_error *err)
{
	proff_trace_stats_opts dflt = { .compensate = true };
	stats_ctx c = { .t = t, .o = opts ? opts : &dflt };
	memset(out, 0, sizeof(*out));
	trace_decode_stats ds = { 0 };
	int rc = trace_decode_all(t, stats_cb, &c, &ds, err);
	if (rc < 0) {
		if (err && !err->code)
			proff_err_set(err, rc, t->path, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < c.nf; i++)
		n += c.f[i].calls > 0;
	out->funcs = pf_calloc(n ? n : 1, sizeof(*out->funcs));
	if (!out->funcs) {
		rc = proff_err_set(err, PROFF_ENOMEM, t->path, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c.nf; i++) {
		faccum *fa = &c.f[i];
		if (!fa->calls)
			continue;
		proff_trace_func_stats *fs = &out->funcs[out->nfuncs++];
		fs->func = (uint32_t)i;
		fs->name = proff_trace_func_name(t, (uint32_t)i);
		fs->calls = fa->calls;
		fs->incl = fa->incl;
		fs->excl = fa->excl;
		fs->min = fa->min;
		fs->max = fa->max;
		fs->descendants = fa->D;
		fs->children = fa->K;
		fs->overcorrected = c.o->compensate && fa->excl < 0.5 * fa->excl_raw;
	}
	qsort(out->funcs, out->nfuncs, sizeof(*out->funcs), cmp_excl);
	out->total = c.total;
	out->calls = c.calls;
	out->synthetic_exits = ds.synth_exits;
	out->synthetic_entries = ds.synth_entries;
	out->negative_clamped = c.clamped;
	rc = proff_trace_quality_get(t, &out->quality, err);
	if (rc < 0)
		proff_trace_stats_free(out);
out:
	free(c.f);
	free(c.stk);
	return rc;
}

void proff_trace_stats_free(proff_trace_stats *s)
{
	proff_trace_quality_free(&s->quality);
	free(s->funcs);
	memset(s, 0, sizeof(*s));
}
