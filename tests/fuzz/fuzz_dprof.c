/* fuzz_dprof.c — libFuzzer target for the Devel::DProf tmon.out reader
 * (lib/dprof/tmon.c, dprof_read_tmon_buf) and the dprofpp builder and report
 * behind it. Every input is read three times with different dprofpp options
 * (plain; -S -F -T -R with -u; -g -G -A -t with -r), and each model is
 * reported (table, -S tree, filter, grouping) to /dev/null. An error must be
 * one line naming the file and, for a format error, the byte offset. Any
 * crash, hang, leak, sanitizer report or unbounded allocation is a bug. Built
 * and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/dprof.h"

static FILE *devnull;

static void warn(void *ctx, const char *msg)
{
	fprintf(ctx, "%s\n", msg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	dprof_read_opts ro[3] = {
		{ .build = { .out = devnull } },
		{ .build = { .deep = true, .fake_exits = true, .tree = 'T', .out = devnull, .warn = warn,
			     .warn_ctx = devnull },
		  .clock = DPROF_CLOCK_USER, .run_clock = DPROF_CLOCK_SYS, .anon_split = true },
		{ .build = { .only_sub = "main::foo", .group_re = "^main::", .autoload = true, .tree = 't',
			     .tree_t_too = true, .out = devnull, .warn = warn, .warn_ctx = devnull },
		  .clock = DPROF_CLOCK_REAL, .run_clock = DPROF_CLOCK_REAL },
	};
	dprof_report_opts rep[3] = {
		{ .name_width = 34 },
		{ .sort = DPROF_SORT_CTIME, .inclusive = true, .deep = true, .count = "1000", .name_width = 20,
		  .clock = DPROF_CLOCK_USER, .warn = warn, .warn_ctx = devnull },
		{ .sort = DPROF_SORT_AVG, .reverse = true, .filter_re = "b", .group_re = "^main::",
		  .group_other = true, .count = "-1", .name_width = 60, .clock = DPROF_CLOCK_REAL,
		  .warn = warn, .warn_ctx = devnull },
	};
	for (int i = 0; i < 3; i++) {
		dprof_model *m;
		proff_error e;
		memset(&e, 0, sizeof(e));
		if (dprof_read_tmon_buf((const char *)data, size, "fuzz.tmon.out", &ro[i], &m, &e) < 0) {
			if (!e.code || !e.msg[0] || strcmp(e.file, "fuzz.tmon.out") || strchr(e.msg, '\n') ||
			    (e.code == PROFF_EFORMAT && e.offset == PROFF_NO_OFFSET))
				abort();   /* one line saying what is wrong, naming the file and offset */
			continue;
		}
		dprof_report(devnull, m, &rep[i], &e);
		dprof_model_free(m);
	}
	return 0;
}
