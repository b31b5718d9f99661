/* fuzz_perfdata.c — libFuzzer target for the perf.data reader: opens the
 * input from memory (file or pipe format), processes it ordered and
 * unordered, prints the header and dumps it to /dev/null. Any crash, hang,
 * sanitizer report or unbounded allocation is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>

#include "proff/perfdata.h"

static FILE *devnull;

static int cb(void *ctx, const pd_event *ev)
{
	uint64_t *acc = ctx;
	*acc += ev->type + ev->size;
	if (ev->type == PD_SAMPLE) {
		const pd_sample *s = &ev->u.sample;
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			*acc += s->callchain[i];
		for (uint64_t i = 0; i < s->nr_branches; i++)
			*acc += s->branches[i].from;
		if (s->raw_size)
			*acc += ((const uint8_t *)s->raw)[s->raw_size - 1];
	} else if (ev->type == PD_MMAP || ev->type == PD_MMAP2) {
		for (const char *p = ev->u.mmap.filename; *p; p++)
			*acc += (uint8_t)*p;
	} else if (ev->type == PD_COMM) {
		for (const char *p = ev->u.comm.comm; *p; p++)
			*acc += (uint8_t)*p;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	pd_reader *r;
	proff_error e;
	if (pd_open_mem(data, size, "fuzz", &r, &e) < 0)
		return 0;
	uint64_t acc = 0;
	pd_process(r, true, cb, &acc, &e);
	pd_process(r, false, cb, &acc, &e);
	pd_print_header(r, devnull, true);
	pd_dump(r, devnull, &e);
	pd_close(r);
	return 0;
}
