/* testutil.h — small helpers the cmocka tests share: running a shell command
 * built with printf formatting, and a scratch directory under $TMPDIR (kept
 * after the test when PROFF_KEEP is set, for looking at what went wrong). */
#ifndef PROFF_TESTUTIL_H
#define PROFF_TESTUTIL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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

#endif
