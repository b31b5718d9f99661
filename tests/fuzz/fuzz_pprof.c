/* fuzz_pprof.c — libFuzzer target for the pprof reader (lib/formats,
 * pf_pprof_read: gzip, the top-level fields, protobuf-c's decoding of each
 * message, ids, strings, labels, sample types). Every input is read with
 * the default sample type and with sample type 0 (keeping the raw samples'
 * order, as a children report does); a profile read is reported, written as
 * pprof (gzipped) and as folded stacks, and each must read back with the
 * same total. Errors follow fmt-common.h's contract. Any crash, hang, leak,
 * sanitizer report or unbounded allocation is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include "fmt-common.h"

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
		}
		pf_profile_free(p);
	}
	return 0;
}
