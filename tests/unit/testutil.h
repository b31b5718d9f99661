/* testutil.h — small helpers the cmocka tests share: running a shell command
 * built with printf formatting, a scratch directory under $TMPDIR (kept
 * after the test when PROFF_KEEP is set, for looking at what went wrong),
 * and pieces of hand-written perf.data records. */
#ifndef PROFF_TESTUTIL_H
#define PROFF_TESTUTIL_H

#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/perfdata-writer.h"

static inline int __attribute__((format(printf, 1, 2))) tu_sh(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* dir: at least 512 bytes; "$TMPDIR/proff-TAG-XXXXXX". 0 or -1. */
static inline int tu_mkdtemp(char *dir, size_t len, const char *tag)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, len, "%s/proff-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", tag);
	return mkdtemp(dir) ? 0 : -1;
}

static inline int tu_rmdir(const char *dir)
{
	if (getenv("PROFF_KEEP"))
		return 0;
	return tu_sh("rm -rf '%s'", dir) == 0 ? 0 : -1;
}

/* a record's header: type, misc, size */
static inline void tu_put_hdr(uint8_t *b, uint32_t type, uint16_t misc, uint16_t size)
{
	memcpy(b, &type, 4);
	memcpy(b + 4, &misc, 2);
	memcpy(b + 6, &size, 2);
}

/* the attr of a cpu-clock event as pdw_add_attr takes it */
static inline void tu_cpu_clock_attr(uint8_t attr[PDW_ATTR_SIZE], uint64_t sample_type, uint64_t period,
				     bool sample_id_all)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.size = PDW_ATTR_SIZE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = period;
	a.sample_type = sample_type;
	a.sample_id_all = sample_id_all;
	memset(attr, 0, PDW_ATTR_SIZE);
	memcpy(attr, &a, sizeof(a) < PDW_ATTR_SIZE ? sizeof(a) : PDW_ATTR_SIZE);
}

#endif
