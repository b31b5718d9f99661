/* error.c — filling and formatting proff_error values (see proff/error.h). */
#include "proff/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static void set_file(proff_error *err, const char *file)
{
	if (file)
		snprintf(err->file, sizeof(err->file), "%s", file);
	else
		err->file[0] = '\0';
}

int proff_err_set(proff_error *err, int code, const char *file, uint64_t offset,
		  const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	err->code = code;
	err->sys_errno = 0;
	err->offset = offset;
	set_file(err, file);
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
	va_end(ap);
	return code;
}

int proff_err_sys(proff_error *err, int code, const char *file, const char *fmt, ...)
{
	int e = errno;
	if (!err)
		return code;
	va_list ap;
	char tmp[400];
	va_start(ap, fmt);
	vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	err->code = code;
	err->sys_errno = e;
	err->offset = PROFF_NO_OFFSET;
	set_file(err, file);
	snprintf(err->msg, sizeof(err->msg), "%s: %s", tmp, strerror(e));
	return code;
}

void proff_err_clear(proff_error *err)
{
	if (!err)
		return;
	memset(err, 0, sizeof(*err));
	err->offset = PROFF_NO_OFFSET;
}

const char *proff_err_str(const proff_error *err, char *buf, size_t len)
{
	if (err->offset != PROFF_NO_OFFSET && err->file[0])
		snprintf(buf, len, "%s: %s (at byte offset %llu)", err->file, err->msg,
			 (unsigned long long)err->offset);
	else if (err->file[0])
		snprintf(buf, len, "%s: %s", err->file, err->msg);
	else
		snprintf(buf, len, "%s", err->msg);
	return buf;
}
