/* cli-trace.c — the CLI's words for what an exact trace could not tell
 * exactly: one warning line per kind of anomaly worth one (more than 0.1 %
 * of the calls: lost exits, unmatched exits, dropped events, clamped times),
 * naming the functions most affected, and the full counts for --stats. The
 * counts come from the library (proff_trace_quality, include/proff/trace.h). */
#include <stdio.h>
#include <string.h>

#include "cmds.h"
#include "proff/trace.h"

/* "f (12), g (3), h (1)" */
static void top_list(char *buf, size_t len, const proff_trace_quality *q, int a)
{
	size_t n = 0;
	buf[0] = '\0';
	for (int k = 0; k < PROFF_TRACE_QUALITY_TOP && q->top[a][k].name; k++) {
		int w = snprintf(buf + n, len - n, "%s%.200s (%llu)", k ? ", " : "", q->top[a][k].name,
				 (unsigned long long)q->top[a][k].count);
		if (w < 0 || (size_t)w >= len - n)
			break;
		n += (size_t)w;
	}
}

/* per kind: what the count counts, and why it matters */
static const char *const what[PROFF_TA_COUNT][2] = {
	[PROFF_TA_LOST_EXIT] = { "calls never returned in the trace",
				 "their exits were found missing by frame address (an exception through "
				 "code without exit hooks, a lost record) and their times end at the next event" },
	[PROFF_TA_UNMATCHED] = { "exits without an entry were dropped", "their entries were lost" },
	[PROFF_TA_DROPPED] = { "events were dropped by the runtime", "a signal handler interrupted a hook" },
	[PROFF_TA_CLAMP_INCL] = { "call total times were clamped at 0 by the overhead compensation",
				  "shorter than the calibrated overhead: --no-compensate shows raw times" },
	[PROFF_TA_CLAMP_EXCL] = { "call self times were clamped at 0 by the overhead compensation",
				  "shorter than the calibrated overhead: --no-compensate shows raw times" },
};

void cli_trace_quality_warn(const char *path, const proff_trace_quality *q)
{
	if (!q)
		return;
	for (int a = 1; a < PROFF_TA_COUNT; a++) {
		if (!proff_trace_quality_warns(q, a) || !what[a][0])
			continue;
		char top[800];
		top_list(top, sizeof(top), q, a);
		cli_warnf("%s: %llu %s (%.2f %% of %llu calls; %s)%s%s", path, (unsigned long long)q->count[a],
			  what[a][0], q->calls ? 100.0 * (double)q->count[a] / (double)q->calls : 100.0,
			  (unsigned long long)q->calls, what[a][1], top[0] ? ", most in " : "", top);
	}
}

void cli_trace_quality_print(FILE *out, const proff_trace_quality *q)
{
	fprintf(out, "# anomalies:");
	for (int a = 1; a < PROFF_TA_COUNT; a++)
		fprintf(out, "%s %s %llu", a > 1 ? "," : "", proff_trace_anomaly_name(a),
			(unsigned long long)q->count[a]);
	fputc('\n', out);
	for (int a = 1; a < PROFF_TA_COUNT; a++) {
		if (!q->count[a] || !q->top[a][0].name)
			continue;
		char top[800];
		top_list(top, sizeof(top), q, a);
		fprintf(out, "#   %s: %s\n", proff_trace_anomaly_name(a), top);
	}
}
