/* fuzz_pprof.c — libFuzzer target for the pprof reader (lib/formats,
 * pf_pprof_read: gzip, the top-level fields, protobuf-c's decoding of each
 * message, ids, strings, labels, sample types). Every input is read with
 * the default sample type and with sample type 0 (keeping the raw samples'
 * order, as a children report does); a profile read is reported, written as
 * pprof (gzipped), as folded stacks and (the second read) as perf.data, and
 * each must read back with the same total. Errors follow fmt-common.h's contract. Any crash, hang, leak,
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
		} else {
			perfdata_round_trip(p);
		}
		pf_profile_free(p);
	}
	return 0;
}
