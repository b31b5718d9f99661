/* calfile.c — the calibration file written by `proff calibrate -o FILE` and
 * read through --calibration FILE / $PROFF_CALIBRATION by the trace reports.
 *
 * Text, one "key value" per line, '#' comments; the first non-comment line is
 * "proff-calibration 1". Keys are in a table; unknown keys are ignored (a newer
 * proff may add some), a repeated key is an error. Format: docs/calibrate.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proff/calibrate.h"
#include "proff/trace.h"

#define CAL_FILE_MAGIC "proff-calibration"
#define CAL_FILE_VERSION 1
#define CAL_FILE_MAX (64 * 1024)
#define CAL_LINE_MAX 512

enum { K_O_IN, K_O_FULL, K_CALL, K_IDLE, K_START, K_TSC, K_CPU, K_NKEYS };

static const struct cal_key {
	const char *name;
	int id;
	bool required;
	double max;                /* values are 0 <= v <= max */
} cal_keys[] = {
	{ "o_in_ns",   K_O_IN,   true,  1e9 },
	{ "o_full_ns", K_O_FULL, true,  1e9 },
	{ "call_ns",   K_CALL,   false, 1e9 },
	{ "idle_ns",   K_IDLE,   false, 1e9 },
	{ "start_ns",  K_START,  false, 1e12 },
	{ "tsc_hz",    K_TSC,    false, 1e12 },
	{ "cpu",       K_CPU,    false, 1e6 },
};
#define NKEYS (sizeof(cal_keys) / sizeof(cal_keys[0]))

int cal_file_write(const char *path, const cal_result *r, proff_error *err)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return proff_err_sys(err, PROFF_EIO, path, "cannot create");
	fprintf(f, "# proff calibration file: overhead of proff's instrumentation on this machine\n"
		   "# (written by proff calibrate; read through --calibration FILE or $%s)\n"
		   CAL_FILE_MAGIC " %d\n", CAL_FILE_ENV, CAL_FILE_VERSION);
	fprintf(f, "o_in_ns %.3f\n", r->o_in_ns);
	fprintf(f, "o_full_ns %.3f\n", r->o_full_ns);
	if (r->call_ns > 0)
		fprintf(f, "call_ns %.3f\n", r->call_ns);
	if (r->idle_ns > 0)
		fprintf(f, "idle_ns %.3f\n", r->idle_ns);
	if (r->start_ns > 0)
		fprintf(f, "start_ns %.0f\n", r->start_ns);
	if (r->tsc_hz > 0)
		fprintf(f, "tsc_hz %.0f\n", r->tsc_hz);
	fprintf(f, "cpu %d\n", r->cpu);
	fprintf(f, "# medians of %u runs, ns per operation:\n", r->runs);
	for (size_t i = 0; i < r->nrows; i++) {
		const cal_result_row *w = &r->rows[i];
		if (w->measured)
			fprintf(f, "#   %-32s %12.3f per %s\n", w->name, w->ns.median, w->per);
	}
	if (fclose(f) != 0)
		return proff_err_sys(err, PROFF_EIO, path, "write error");
	return 0;
}

static int bad(proff_error *err, const char *name, size_t off, const char *what)
{
	return proff_err_set(err, PROFF_EFORMAT, name, off, "not a valid calibration file: %s", what);
}

int cal_file_parse(const char *buf, size_t len, const char *name, cal_file *out, proff_error *err)
{
	cal_file cf = { .cpu = -1 };
	bool seen[K_NKEYS] = { false }, magic = false;
	if (len > CAL_FILE_MAX)
		return proff_err_set(err, PROFF_ENOMEM, name, CAL_FILE_MAX,
				     "calibration file larger than %d bytes", CAL_FILE_MAX);
	size_t pos = 0;
	while (pos < len) {
		size_t start = pos, end = pos;
		while (end < len && buf[end] != '\n')
			end++;
		pos = end < len ? end + 1 : end;
		if (end - start >= CAL_LINE_MAX)
			return bad(err, name, start, "line too long");
		char line[CAL_LINE_MAX];
		memcpy(line, buf + start, end - start);
		line[end - start] = 0;
		if (memchr(line, 0, end - start))
			return bad(err, name, start, "NUL byte in a line");
		char *p = line;
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (!*p || *p == '#')
			continue;
		char key[64], val[128], extra[8];
		int nf = sscanf(p, "%63s %127s %7s", key, val, extra);
		bool extra_value = nf == 3 && extra[0] != '#';
		if (nf < 2)
			return bad(err, name, start, "expected 'key value'");
		if (!magic) {
			if (strcmp(key, CAL_FILE_MAGIC))
				return bad(err, name, start, "first line is not '" CAL_FILE_MAGIC " N'");
			char *e;
			long v = strtol(val, &e, 10);
			if (*e || v < 1 || extra_value)
				return bad(err, name, start, "bad version");
			if (v != CAL_FILE_VERSION)
				return proff_err_set(err, PROFF_ENOTSUP, name, start,
						     "calibration file version %ld (this proff reads %d)", v,
						     CAL_FILE_VERSION);
			magic = true;
			continue;
		}
		const struct cal_key *k = NULL;
		for (size_t i = 0; i < NKEYS; i++)
			if (!strcmp(cal_keys[i].name, key))
				k = &cal_keys[i];
		if (!k)
			continue;          /* a newer proff's key */
		if (extra_value)
			return bad(err, name, start, "more than one value on a line");
		if (seen[k->id])
			return proff_err_set(err, PROFF_EFORMAT, name, start,
					     "not a valid calibration file: %s given twice", k->name);
		char *e;
		errno = 0;
		double v = strtod(val, &e);
		if (*e || errno || !isfinite(v) || v < (k->id == K_CPU ? -1 : 0) || v > k->max)
			return proff_err_set(err, PROFF_EFORMAT, name, start,
					     "not a valid calibration file: %s '%s' is not a number in 0..%g",
					     k->name, val, k->max);
		seen[k->id] = true;
		switch (k->id) {
		case K_O_IN: cf.o_in_ns = v; break;
		case K_O_FULL: cf.o_full_ns = v; break;
		case K_CALL: cf.call_ns = v; break;
		case K_IDLE: cf.idle_ns = v; break;
		case K_START: cf.start_ns = v; break;
		case K_TSC: cf.tsc_hz = v; break;
		case K_CPU: cf.cpu = (int)v; break;
		}
	}
	if (!magic)
		return bad(err, name, 0, "no '" CAL_FILE_MAGIC " N' line");
	for (size_t i = 0; i < NKEYS; i++)
		if (cal_keys[i].required && !seen[cal_keys[i].id])
			return proff_err_set(err, PROFF_EFORMAT, name, len,
					     "not a valid calibration file: no %s", cal_keys[i].name);
	if (cf.o_in_ns > cf.o_full_ns)
		return proff_err_set(err, PROFF_EFORMAT, name, PROFF_NO_OFFSET,
				     "not a valid calibration file: o_in_ns %.3f exceeds o_full_ns %.3f",
				     cf.o_in_ns, cf.o_full_ns);
	*out = cf;
	return 0;
}

int cal_file_read(const char *path, cal_file *out, proff_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proff_err_sys(err, errno == ENOENT ? PROFF_ENOENT : PROFF_EIO, path, "cannot open");
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return proff_err_set(err, PROFF_EIO, path, PROFF_NO_OFFSET, "not a regular file");
	}
	if (st.st_size > CAL_FILE_MAX) {
		close(fd);
		return proff_err_set(err, PROFF_ENOMEM, path, CAL_FILE_MAX,
				     "calibration file larger than %d bytes", CAL_FILE_MAX);
	}
	size_t cap = CAL_FILE_MAX + 1, n = 0;
	char *buf = malloc(cap);
	if (!buf) {
		close(fd);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	for (;;) {
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			int e = errno;
			free(buf);
			close(fd);
			errno = e;
			return proff_err_sys(err, PROFF_EIO, path, "read");
		}
		if (r == 0)
			break;
		n += (size_t)r;
		if (n == cap)
			break;
	}
	close(fd);
	int rc = cal_file_parse(buf, n, path, out, err);
	free(buf);
	return rc;
}

int cal_file_apply(const char *path, struct proff_trace *t, proff_error *err)
{
	cal_file cf;
	int rc = cal_file_read(path, &cf, err);
	if (rc < 0)
		return rc;
	proff_trace_set_overheads(t, cf.o_in_ns, cf.o_full_ns);
	return 0;
}
