/* fuzz_calfile.c — libFuzzer target for the calibration-file parser
 * (cal_file_parse, lib/calibrate/calfile-parse.h, shared with the
 * instrumentation runtime). An error must name the file and the byte offset;
 * a parsed file must satisfy what the parser promises: every value finite
 * and in its range, o_in_ns <= o_full_ns. Any crash, hang, sanitizer report
 * or broken promise is a bug. Built and run by tests/fuzz/run.sh.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proff/calibrate.h"

static void in_range(double v, double lo, double hi)
{
	if (!isfinite(v) || v < lo || v > hi)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	cal_file cf;
	proff_error e;
	memset(&e, 0, sizeof(e));
	if (cal_file_parse((const char *)data, size, "fuzz.cal", &cf, &e) < 0) {
		if (!e.code || !e.msg[0] || strcmp(e.file, "fuzz.cal") || e.offset == PROFF_NO_OFFSET)
			abort();           /* an error says what is wrong, in which file, where */
		return 0;
	}
	in_range(cf.o_in_ns, 0, 1e9);
	in_range(cf.o_full_ns, 0, 1e9);
	if (cf.o_in_ns > cf.o_full_ns)
		abort();
	in_range(cf.call_ns, 0, 1e9);
	in_range(cf.idle_ns, 0, 1e9);
	in_range(cf.start_ns, 0, 1e12);
	in_range(cf.tsc_hz, 0, 1e12);
	in_range(cf.sample_ns, 0, 1e9);
	in_range(cf.sample_cg_ns, 0, 1e9);
	in_range(cf.sample_hz, 0, 1e9);
	if (cf.cpu < -1 || cf.cpu > 1000000)
		abort();
	return 0;
}
