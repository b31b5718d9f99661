/* fmt-common.h — what the fuzz targets of lib/formats (fuzz_pprof.c,
 * fuzz_folded.c) share: the error contract, a report of a profile read
 * (hist_build in children and self mode, printed to /dev/null), and the
 * round trips through proff's own writers, which must read back to the same
 * totals. */
#ifndef PROFF_FUZZ_FMT_COMMON_H
#define PROFF_FUZZ_FMT_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/formats.h"
#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/report.h"

static FILE *devnull;

/* A failure says what is wrong in one line and names the input; a format
 * error also says where (a byte offset, or a line of folded stacks). */
static void check_err(int rc, const proff_error *e, const char *name)
{
	if (rc >= 0)
		return;
	if (!e->code || !e->msg[0] || strcmp(e->file, name) || strchr(e->msg, '\n'))
		abort();
	if (e->code == PROFF_EFORMAT && e->offset == PROFF_NO_OFFSET && !strstr(e->msg, "line "))
		abort();
}

/* The profile reported as proff report would (children, graph; then self,
 * perf diff's keys; then a label key) */
static void report(pf_profile *p)
{
	static const char *sorts[] = { "comm,dso,sym", "dso,sym", "pid,label:phase,sym,srcline" };
	for (int i = 0; i < 3; i++) {
		hist_opts ho;
		hist_opts_init(&ho);
		ho.sort = sorts[i];
		ho.children = i == 0 && p->events[0].has_callchain;
		ho.callchain = i != 1;
		ho.caller_order = ho.children;
		ho.diff_mode = i == 1;
		hist *h;
		proff_error e;
		memset(&e, 0, sizeof(e));
		if (hist_build(p, 0, &ho, &h, &e) == 0) {
			hist_sort_report(h);
			report_fmt f;
			report_fmt_init(&f);
			f.children = ho.children;
			f.cc_mode = ho.callchain ? CC_GRAPH : CC_NONE;
			report_print_hist(devnull, h, &f, 0);
			hist_free(h);
		}
		hist_opts_release(&ho);
	}
}

typedef int (*reader_fn)(const uint8_t *, size_t, const char *, const pf_load_opts *, pf_profile **, proff_error *);

/* p written by writer and read back by reader: the same totals */
static void round_trip(pf_profile *p, int (*writer)(pf_profile *, FILE *, const pf_write_opts *, proff_error *),
		       reader_fn reader, bool gzip)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	pf_write_opts wo = { .gzip = gzip, .evsel = -1 };
	proff_error e;
	memset(&e, 0, sizeof(e));
	int rc = writer(p, m, &wo, &e);
	fclose(m);
	if (rc == 0) {
		pf_profile *q;
		memset(&e, 0, sizeof(e));
		if (reader((const uint8_t *)buf, len, "again", NULL, &q, &e) < 0) {
			if (e.code != PROFF_ENOMEM)
				abort();     /* proff's own output must read */
		} else {
			if (q->events[0].total_period != p->events[0].total_period)
				abort();
			pf_profile_free(q);
		}
	} else if (e.code != PROFF_ENOMEM && e.code != PROFF_EUSAGE && e.code != PROFF_ENOTSUP) {
		abort();
	}
	free(buf);
}

static int write_folded(pf_profile *p, FILE *f, const pf_write_opts *o, proff_error *e)
{
	return pf_folded_write(p, f, o, e);
}

#endif
