/* pdtool.c — tiny driver of the perf.data reader for tests and debugging
 * (until/besides `proff report`):
 *   pdtool dump FILE           perf report -D style dump
 *   pdtool header FILE [-I]    perf report --header-only style header
 *   pdtool check FILE          open + process ordered and unordered; prints
 *                              record counts, or ONE error line and exits 1
 *   pdtool samples FILE [-u]   one line per sample (time pid tid ip period
 *                              evsel callchain...), ordered unless -u
 *   pdtool bench FILE [N]      parse+deliver rate (records/s, CPU time), median of N
 * Build: cc -Iinclude tests/tools/pdtool.c BUILD/libproff.a -lzstd ...
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "proff/perfdata.h"

static int fail(const proff_error *e)
{
	char buf[1200];
	fprintf(stderr, "pdtool: %s\n", proff_err_str(e, buf, sizeof(buf)));
	return 1;
}

struct counts {
	uint64_t n, by_type[128], last_time, unordered;
	uint64_t last_off;
	bool have_last;
};

static int count_cb(void *ctx, const pd_event *ev)
{
	struct counts *c = ctx;
	/* a PERF_SAMPLE_READ group sample arrives once per value: count records */
	uint64_t key = ev->file_offset ^ (ev->from_compressed ? 1ull << 63 : 0);
	if (c->have_last && key == c->last_off && ev->type == PD_SAMPLE)
		return 0;
	c->last_off = key;
	c->have_last = true;
	c->n++;
	c->by_type[ev->type < 128 ? ev->type : 127]++;
	if (ev->type < 64 && ev->sid.has_time && ev->sid.time) {
		if (ev->sid.time < c->last_time)
			c->unordered++;
		c->last_time = ev->sid.time;
	}
	return 0;
}

static int sample_cb(void *ctx, const pd_event *ev)
{
	FILE *out = ctx;
	if (ev->type != PD_SAMPLE)
		return 0;
	const pd_sample *s = &ev->u.sample;
	fprintf(out, "%" PRIu64 " %u %u %#" PRIx64 " %" PRIu64 " %d %u", s->time, s->pid, s->tid, s->ip,
		s->period, s->evsel, s->cpu);
	for (uint64_t i = 0; i < s->nr_callchain; i++)
		fprintf(out, " %" PRIx64, s->callchain[i]);
	fputc('\n', out);
	return 0;
}

static int null_cb(void *ctx, const pd_event *ev)
{
	uint64_t *n = ctx;
	(*n) += ev->type == PD_SAMPLE ? ev->u.sample.nr_callchain + 1 : 1;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: pdtool dump|header|check|samples|bench FILE [opts]\n");
		return 2;
	}
	const char *cmd = argv[1], *file = argv[2];
	pd_reader *r;
	proff_error e;
	if (pd_open(file, &r, &e) < 0)
		return fail(&e);
	int rc = 0;
	if (!strcmp(cmd, "dump")) {
		rc = pd_dump(r, stdout, &e);
	} else if (!strcmp(cmd, "header")) {
		rc = pd_print_header(r, stdout, argc > 3 && !strcmp(argv[3], "-I"));
	} else if (!strcmp(cmd, "samples")) {
		rc = pd_process(r, !(argc > 3 && !strcmp(argv[3], "-u")), sample_cb, stdout, &e);
	} else if (!strcmp(cmd, "check")) {
		struct counts c1 = { 0 }, c2 = { 0 };
		rc = pd_process(r, true, count_cb, &c1, &e);
		if (rc == 0 && strcmp(file, "-"))
			rc = pd_process(r, false, count_cb, &c2, &e);
		if (rc == 0) {
			printf("records %" PRIu64 " samples %" PRIu64 " out-of-order(ordered) %" PRIu64 "\n",
			       c1.n, c1.by_type[PD_SAMPLE], c1.unordered);
			for (size_t i = 0; i < pd_nr_attrs(r); i++)
				printf("event %zu %s\n", i, pd_get_attr(r, i)->name);
		}
	} else if (!strcmp(cmd, "bench")) {
		/* CPU time (the machine may be shared), median of N passes each */
		int n = argc > 3 ? atoi(argv[3]) : 5;
		if (n < 1 || n > 99)
			n = 5;
		double ro[99], ru[99];
		uint64_t nrec = 0;
		for (int k = 0; k < n && rc == 0; k++) {
			struct counts c = { 0 };
			uint64_t x = 0;
			struct timespec t0, t1;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			rc = pd_process(r, true, count_cb, &c, &e);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
			ro[k] = c.n / ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) / 1e6;
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
			if (rc == 0)
				rc = pd_process(r, false, null_cb, &x, &e);
			clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
			ru[k] = c.n / ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) / 1e6;
			nrec = c.n;
		}
		if (rc == 0) {
			qsort(ro, (size_t)n, sizeof(double), cmp_double);
			qsort(ru, (size_t)n, sizeof(double), cmp_double);
			printf("records %" PRIu64 ": ordered %.1f M records/s, unordered %.1f M records/s "
			       "(median of %d, CPU time)\n", nrec, ro[n / 2], ru[n / 2], n);
		}
	} else {
		fprintf(stderr, "pdtool: unknown command %s\n", cmd);
		rc = 2;
	}
	for (size_t i = 0; i < pd_nr_warnings(r); i++)
		fprintf(stderr, "pdtool: warning: %s\n", pd_warning(r, i));
	pd_close(r);
	if (rc < 0)
		return fail(&e);
	return rc ? 1 : 0;
}
