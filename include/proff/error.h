/* proff/error.h — the library's error value.
 *
 * Library functions never print and never exit: they fill a proff_error and
 * return a negative code. The CLI turns it into one line:
 *   "proff: FILE: MESSAGE (at byte offset N)"  and a non-zero exit.
 */
#ifndef PROFF_ERROR_H
#define PROFF_ERROR_H

#include <stdint.h>
#include <stddef.h>

enum proff_errcode {
	PROFF_OK       = 0,
	PROFF_EIO      = -1,   /* open/read/mmap failed (errno in sys_errno) */
	PROFF_EFORMAT  = -2,   /* malformed or truncated input */
	PROFF_ENOMEM   = -3,   /* allocation failed or a size read from a file exceeds a bound */
	PROFF_EUSAGE   = -4,   /* bad option / argument value */
	PROFF_ENOTSUP  = -5,   /* valid input using something proff does not handle */
	PROFF_ENOENT   = -6,   /* file or item not found */
	PROFF_EPERM    = -7,   /* permission denied */
	PROFF_EINTERNAL = -8,
};

#define PROFF_NO_OFFSET UINT64_MAX

typedef struct proff_error {
	int code;                /* enum proff_errcode, 0 when no error */
	int sys_errno;           /* errno when relevant, else 0 */
	uint64_t offset;         /* byte offset in file, PROFF_NO_OFFSET if none */
	char file[512];          /* file the error is about ("" if none) */
	char msg[512];           /* what is wrong, no trailing newline */
} proff_error;

/* Set *err (if non-NULL) and return code. file may be NULL. */
int proff_err_set(proff_error *err, int code, const char *file, uint64_t offset,
		  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Like proff_err_set, appending ": strerror(errno)" and recording errno. */
int proff_err_sys(proff_error *err, int code, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void proff_err_clear(proff_error *err);
/* "FILE: MSG (at byte offset N)" into buf. */
const char *proff_err_str(const proff_error *err, char *buf, size_t len);

#endif
