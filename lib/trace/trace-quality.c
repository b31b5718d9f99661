/* trace-quality.c — what a trace could not tell exactly, counted.
 *
 * A pass over a trace (proff_trace_foreach, the statistics, the dprof feed)
 * counts its anomalies per kind and per function: the decoder its synthetic
 * events, unmatched exits and the events the runtime dropped, a consumer
 * that compensates the times it clamped (proff_trace_note). The readers'
 * callers turn the counts into one warning line per kind
 * (proff_trace_quality_warns says which are worth one) and --stats prints
 * them all. Nothing here prints.
 */
#include "proff/trace.h"
#include "proff/util.h"
#include "trace-int.h"

#include <stdlib.h>
#include <string.h>

static const char *const anomaly_names[PROFF_TA_COUNT] = {
	[PROFF_TA_NONE] = "none",
	[PROFF_TA_LONGJMP] = "longjmp",
	[PROFF_TA_END] = "open at end",
	[PROFF_TA_LOST_EXIT] = "lost exit",
	[PROFF_TA_PRE_TRACE] = "before trace",
	[PROFF_TA_UNMATCHED] = "unmatched exit",
	[PROFF_TA_DROPPED] = "dropped",
	[PROFF_TA_CLAMP_INCL] = "clamped total",
	[PROFF_TA_CLAMP_EXCL] = "clamped self",
};

const char *proff_trace_anomaly_name(int a)
{
	return a >= 0 && a < PROFF_TA_COUNT ? anomaly_names[a] : "?";
}

void trace_quality_reset(proff_trace *t)
{
	t->qcalls = 0;
	memset(t->qcount, 0, sizeof(t->qcount));
	if (t->qfunc)
		memset(t->qfunc, 0, t->nqfunc * sizeof(*t->qfunc));
}

void trace_quality_free(proff_trace *t)
{
	free(t->qfunc);
	t->qfunc = NULL;
	t->nqfunc = 0;
}

/* PF_NONE-like func (UINT32_MAX): counted, attributed to no function (the
 * runtime's dropped events are not known by function). */
void proff_trace_note(proff_trace *t, int anomaly, uint32_t func)
{
	if (anomaly <= PROFF_TA_NONE || anomaly >= PROFF_TA_COUNT)
		return;
	t->qcount[anomaly]++;
	if (func == UINT32_MAX)
		return;
	if (func >= t->nqfunc) {
		/* geometric: functions keep appearing while a trace is decoded */
		size_t nn = t->nqfunc * 2 > (size_t)func + 1 ? t->nqfunc * 2 : (size_t)func + 1;
		if (nn < t->nfuncs)
			nn = t->nfuncs;
		uint64_t(*q)[PROFF_TA_COUNT] = pf_realloc_array(t->qfunc, nn, sizeof(*q));
		if (!q)
			return;            /* the total still counts; only the naming is lost */
		memset(q + t->nqfunc, 0, (nn - t->nqfunc) * sizeof(*q));
		t->qfunc = q;
		t->nqfunc = nn;
	}
	t->qfunc[func][anomaly]++;
}

int proff_trace_quality_get(const proff_trace *t, proff_trace_quality *q, proff_error *err)
{
	memset(q, 0, sizeof(*q));
	q->calls = t->qcalls;
	memcpy(q->count, t->qcount, sizeof(q->count));
	for (int a = 1; a < PROFF_TA_COUNT; a++) {
		if (!q->count[a])
			continue;
		/* the PROFF_TRACE_QUALITY_TOP largest, by insertion into a short sorted list */
		uint32_t best[PROFF_TRACE_QUALITY_TOP];
		size_t nb = 0;
		for (size_t f = 0; f < t->nqfunc; f++) {
			uint64_t c = t->qfunc[f][a];
			if (!c)
				continue;
			size_t k = nb < PROFF_TRACE_QUALITY_TOP ? nb++ : PROFF_TRACE_QUALITY_TOP;
			if (k == PROFF_TRACE_QUALITY_TOP) {
				if (c <= t->qfunc[best[k - 1]][a])
					continue;
				k--;
			}
			while (k > 0 && t->qfunc[best[k - 1]][a] < c) {
				best[k] = best[k - 1];
				k--;
			}
			best[k] = (uint32_t)f;
		}
		for (size_t k = 0; k < nb; k++) {
			const char *nm = proff_trace_func_name(t, best[k]);
			q->top[a][k].name = pf_strdup(nm);
			q->top[a][k].func = best[k];
			q->top[a][k].count = t->qfunc[best[k]][a];
			if (!q->top[a][k].name) {
				proff_trace_quality_free(q);
				return proff_err_set(err, PROFF_ENOMEM, t->path, PROFF_NO_OFFSET, "out of memory");
			}
		}
	}
	return 0;
}

void proff_trace_quality_free(proff_trace_quality *q)
{
	for (int a = 0; a < PROFF_TA_COUNT; a++)
		for (int k = 0; k < PROFF_TRACE_QUALITY_TOP; k++) {
			free(q->top[a][k].name);
			q->top[a][k].name = NULL;
		}
}

bool proff_trace_quality_warns(const proff_trace_quality *q, int a)
{
	switch (a) {
	case PROFF_TA_LOST_EXIT:
	case PROFF_TA_UNMATCHED:
	case PROFF_TA_DROPPED:
	case PROFF_TA_CLAMP_INCL:
	case PROFF_TA_CLAMP_EXCL:
		/* more than 0.1 % of the calls; any at all in a trace of few calls */
		return q->count[a] > 0 && (double)q->count[a] * 1000.0 > (double)(q->calls ? q->calls : 1);
	default:
		return false;
	}
}
