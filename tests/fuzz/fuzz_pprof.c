/* fuzz_pprof.c — libFuzzer target for the pprof reader (lib/formats,
 * pf_pprof_read: gzip, the top-level fields, protobuf-c's decoding of each
 * message, ids, strings, labels, sample types). Every input is read with
 * the default sample type and with sample type 0 (keeping the raw samples'
 * order, as a children report does); a profile read is reported, written as
 * pprof (gzipped), as folded stacks and (the second read) as perf.data, and
 * each must read back with the same total; the first read is also written
 * twice into one file as two runs (pf_pprof_writer, labels run=a and
 * run=b, as proff convert A -- B writes them), and the samples of run a
 * (pf_load_opts.label_is) must read back with its total. Errors follow fmt-common.h's contract. Any crash, hang, leak,
 * sanitizer report or unbounded allocation is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include "fmt-common.h"

#include <sys/mman.h>
#include <unistd.h>

/* p written as perf.data (into a memfd, by path) and read back by the
 * perf.data loader: it must read, with the same total (one event), unless
 * the profile's functions have no binary (ENOTSUP) */
static void perfdata_round_trip(pf_profile *p)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-pprof-data", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0)
		abort();
	proff_error e;
	memset(&e, 0, sizeof(e));
	int rc = pf_perfdata_write(p, path, &e);
	if (rc < 0) {
		if (e.code != PROFF_ENOTSUP && e.code != PROFF_ENOMEM && e.code != PROFF_EUSAGE)
			abort();
		return;
	}
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.symfs = "/nonexistent-proff-fuzz-symfs";
	lo.kallsyms = "/nonexistent-proff-fuzz-kallsyms";
	pf_profile *q;
	memset(&e, 0, sizeof(e));
	if (pf_profile_load(path, &lo, &q, &e) < 0) {
		if (e.code != PROFF_ENOMEM)
			abort();
		return;
	}
	uint64_t a = 0, b = 0;
	for (size_t i = 0; i < p->nr_events; i++)
		a += p->events[i].total_period;
	for (size_t i = 0; i < q->nr_events; i++)
		b += q->events[i].total_period;
	if (a != b)
		abort();
	pf_profile_free(q);
}

/* p as two runs of one pprof file: run "a" read back alone has p's total
 * (a profile with a label "run" of its own is refused: EUSAGE) */
static void runs_round_trip(pf_profile *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	pf_write_opts wo = { .gzip = false, .evsel = -1 };
	proff_error e;
	memset(&e, 0, sizeof(e));
	pf_pprof_writer *w;
	if (pf_pprof_writer_new(&wo, &w, &e) < 0)
		abort();
	const pf_extra_label a[2] = { { "run", "a", 0 }, { "group", "0", 0 } }, b[2] = { { "run", "b", 0 }, { "group", "1", 0 } };
	int rc = pf_pprof_writer_add(w, p, a, 2, &e);
	if (rc == 0)
		rc = pf_pprof_writer_add(w, p, b, 2, &e);
	if (rc == 0)
		rc = pf_pprof_writer_finish(w, m, &e);
	pf_pprof_writer_free(w);
	fclose(m);
	if (rc < 0) {
		if (e.code != PROFF_ENOMEM && e.code != PROFF_EUSAGE)
			abort();
		free(buf);
		return;
	}
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.label_is[0].key = "run";
	lo.label_is[0].value = "a";
	pf_profile *q;
	memset(&e, 0, sizeof(e));
	if (pf_pprof_read((const uint8_t *)buf, len, "runs", &lo, &q, &e) < 0) {
		if (e.code != PROFF_ENOMEM)
			abort();     /* proff's own output must read */
	} else {
		if (q->events[0].total_period != p->events[0].total_period)
			abort();
		pf_profile_free(q);
	}
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	for (int v = 0; v < 2; v++) {
		pf_load_opts lo;
		pf_load_opts_init(&lo);
		if (v) {
			lo.sample_type = "0";
			lo.keep_sequence = true;
		}
		pf_profile *p;
		proff_error e;
		memset(&e, 0, sizeof(e));
		int rc = pf_pprof_read(data, size, "fuzz.pb", &lo, &p, &e);
		check_err(rc, &e, "fuzz.pb");
		if (rc < 0)
			continue;
		report(p);
		if (!v) {
			round_trip(p, pf_pprof_write, pf_pprof_read, true);
			round_trip(p, write_folded, pf_folded_read, false);
			runs_round_trip(p);
		} else {
			perfdata_round_trip(p);
		}
		pf_profile_free(p);
	}
	return 0;
}
