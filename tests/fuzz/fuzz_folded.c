/* fuzz_folded.c — libFuzzer target for the folded-stacks reader
 * (lib/formats, pf_folded_read: lines, counts, thread frames, annotations,
 * gzip). A profile read is reported, written as folded stacks and as pprof,
 * and each must read back with the same total. Errors follow
 * fmt-common.h's contract (a format error names its line). Any crash, hang,
 * leak, sanitizer report or unbounded allocation is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include "fmt-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.keep_sequence = true;
	pf_profile *p;
	proff_error e;
	memset(&e, 0, sizeof(e));
	int rc = pf_folded_read(data, size, "fuzz.folded", &lo, &p, &e);
	check_err(rc, &e, "fuzz.folded");
	if (rc < 0)
		return 0;
	report(p);
	round_trip(p, write_folded, pf_folded_read, false);
	round_trip(p, pf_pprof_write, pf_pprof_read, false);
	pf_profile_free(p);
	return 0;
}
