/* cli-util.c — how the CLI reports errors and warnings (one line on stderr),
 * the option reader of the commands with their own option tables, and where
 * the instrumentation runtime is found. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

int cli_parse_opt(int argc, char **argv, int *i, const struct cli_opt *opts, size_t nopts,
		  const char *what, const struct cli_opt **op_out, const char **val_out)
{
	const char *a = argv[*i], *val = NULL;
	const struct cli_opt *op = NULL;
	if (a[0] != '-' || !a[1])
		return 0;
	if (a[1] == '-') {
		const char *name = a + 2, *eq = strchr(name, '=');
		size_t len = eq ? (size_t)(eq - name) : strlen(name);
		for (size_t k = 0; k < nopts; k++)
			if (strlen(opts[k].long_name) == len && !strncmp(opts[k].long_name, name, len))
				op = &opts[k];
		if (!op) {
			cli_errorf("unknown option '%s'%s", a, what);
			return -1;
		}
		if (eq && !op->has_arg) {
			cli_errorf("option '--%s' takes no value", op->long_name);
			return -1;
		}
		if (eq)
			val = eq + 1;
	} else {
		for (size_t k = 0; k < nopts; k++)
			if (opts[k].short_name == a[1])
				op = &opts[k];
		if (!op || (!op->has_arg && a[2])) {
			cli_errorf("unknown option '%s'%s", a, what);
			return -1;
		}
		if (a[2])
			val = a + 2;
	}
	(*i)++;
	if (op->has_arg && !val) {
		if (*i >= argc) {
			cli_errorf("option '%s' needs a value", a);
			return -1;
		}
		val = argv[(*i)++];
	}
	*op_out = op;
	*val_out = val;
	return 1;
}

int cli_find_runtime(const char *given, char *out, size_t len)
{
	const char *e = given ? given : getenv("PROFF_RUNTIME");
	if (e && *e) {
		if (access(e, R_OK) < 0) {
			cli_errorf("runtime %s: %s", e, strerror(errno));
			return -1;
		}
		if (!realpath(e, out))
			snprintf(out, len, "%s", e);
		return 0;
	}
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -2;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -2;
	*slash = 0;
	static const char *const rel[] = { "libproff-instrument.so", "../lib/proff/libproff-instrument.so" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(out, len, "%s/%s", self, rel[i]) >= len)
			continue;
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -2;
}
