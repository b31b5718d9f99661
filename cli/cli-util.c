/* cli-util.c — how the CLI reports errors and warnings (one line on stderr). */
#include <stdarg.h>
#include <stdio.h>

#include "cmds.h"

void cli_error(const proff_error *err)
{
	char buf[1200];
	fprintf(stderr, "proff: %s\n", proff_err_str(err, buf, sizeof(buf)));
}

void cli_errorf(const char *fmt, ...)
{
	va_list ap;
	fputs("proff: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_warnf(const char *fmt, ...)
{
	va_list ap;
	fputs("proff: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
