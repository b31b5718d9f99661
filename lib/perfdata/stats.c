/* stats.c — perf report --stats: how many records of each type a perf.data
 * file holds (every record of the data section, user records and those
 * inside COMPRESSED ones included, as perf counts them while it reads), and
 * per event its samples and lost samples; and their printing, as perf 6.1
 * prints them (events_stats__fprintf, evlist__fprintf_nr_events). */
#include "pd-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef struct stats_ctx {
	const pd_reader *r;
	pd_record_stats *st;
} stats_ctx;

/* the event of a sample id (perf's evlist__id2evsel: the first without one) */
static size_t evsel_of_id(const pd_reader *r, const pd_sample_id *sid)
{
	if (sid->has_id)
		for (size_t i = 0; i < r->nr_attrs; i++)
			for (size_t j = 0; j < r->attrs[i].nr_ids; j++)
				if (r->attrs[i].ids[j] == sid->id)
					return i;
	return 0;
}

static int stats_cb(void *ctx, const pd_event *ev)
{
	const pd_reader *r = ((stats_ctx *)ctx)->r;
	pd_record_stats *st = ((stats_ctx *)ctx)->st;
	st->nr_events[0]++;
	if (ev->type < PD_STATS_TYPES)
		st->nr_events[ev->type]++;
	else
		st->nr_other++;
	if (ev->type == PD_SAMPLE && ev->u.sample.evsel >= 0 && (size_t)ev->u.sample.evsel < st->nr_evsels)
		st->nr_samples[ev->u.sample.evsel]++;
	else if (ev->type == PD_LOST_SAMPLES && st->nr_evsels) {
		st->nr_lost_samples[evsel_of_id(r, &ev->sid)] += ev->u.lost_samples.lost;
	}
	return 0;
}

int pd_record_stats_read(pd_reader *r, pd_record_stats *st, proff_error *err)
{
	memset(st, 0, sizeof(*st));
	st->nr_evsels = r->nr_attrs;
	size_t n = st->nr_evsels ? st->nr_evsels : 1;
	st->nr_samples = calloc(n, sizeof(uint64_t));
	st->nr_lost_samples = calloc(n, sizeof(uint64_t));
	if (!st->nr_samples || !st->nr_lost_samples) {
		pd_record_stats_free(st);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	r->raw_samples = true;     /* a record is one sample, whatever it reads */
	stats_ctx c = { r, st };
	int rc = pd_process(r, false, stats_cb, &c, err);
	r->raw_samples = false;
	if (rc)
		pd_record_stats_free(st);
	return rc;
}

void pd_record_stats_free(pd_record_stats *st)
{
	free(st->nr_samples);
	free(st->nr_lost_samples);
	st->nr_samples = st->nr_lost_samples = NULL;
	st->nr_evsels = 0;
}

/* perf 6.1's names (perf_event__name), where they are not the reader's */
static const char *perf_record_name(uint32_t type)
{
	switch (type) {
	case 0: return "TOTAL";
	case PD_HEADER_ATTR: return "ATTR";
	case PD_HEADER_EVENT_TYPE: return "EVENT_TYPE";
	case PD_HEADER_TRACING_DATA: return "TRACING_DATA";
	case PD_HEADER_BUILD_ID: return "BUILD_ID";
	case PD_HEADER_FEATURE: return "FEATURE";
	case PD_COMPRESSED2: return NULL;          /* not a perf 6.1 record */
	default: break;
	}
	const char *n = pd_record_name(type);
	return n && strcmp(n, "UNKNOWN") && strncmp(n, "UNKNOWN", 7) ? n : NULL;
}

static void print_count(FILE *out, const char *name, uint64_t n)
{
	/* perf prints the u32 counts with %10d */
	fprintf(out, "%16s events: %10d\n", name, (int)(uint32_t)n);
}

void pd_record_stats_print(const pd_reader *r, const pd_record_stats *st, FILE *out)
{
	uint32_t total = (uint32_t)st->nr_events[0];
	fprintf(out, "\nAggregated stats:\n");
	for (uint32_t i = 0; i < PD_STATS_TYPES; i++) {
		const char *name = perf_record_name(i);
		if (!name || !st->nr_events[i])
			continue;
		if (i && total)
			fprintf(out, "%16s events: %10d  (%4.1f%%)\n", name, (int)(uint32_t)st->nr_events[i],
				100.0 * (double)(uint32_t)st->nr_events[i] / total);
		else
			print_count(out, name, st->nr_events[i]);
	}
	for (size_t e = 0; e < st->nr_evsels; e++) {
		if (!st->nr_samples[e] && !st->nr_lost_samples[e])
			continue;       /* perf skips empty events */
		const pd_attr *a = &r->attrs[e];
		fprintf(out, "%s stats:\n", a->name ? a->name : "unknown");
		if (st->nr_samples[e])
			print_count(out, "SAMPLE", st->nr_samples[e]);
		if (st->nr_lost_samples[e])
			print_count(out, "LOST_SAMPLES", st->nr_lost_samples[e]);
	}
}
