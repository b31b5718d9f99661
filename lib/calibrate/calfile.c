/* calfile.c — the calibration file written by `proff calibrate -o FILE` and
 * read through --calibration FILE / $PROFF_CALIBRATION by the trace reports.
 *
 * Text, one "key value" per line, '#' comments; the first non-comment line is
 * "proff-calibration 1". Keys are in a table; unknown keys are ignored (a newer
 * proff may add some), a repeated key is an error. Format: docs/calibrate.md.
 * The parser is calfile-parse.h, shared with the instrumentation runtime
 * (which reads the file named by $PROFF_CALIBRATION at start-up).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proff/calibrate.h"
#include "proff/trace.h"

#include "calfile-parse.h"

#define CAL_FILE_MAGIC CALP_MAGIC
#define CAL_FILE_VERSION CALP_VERSION
#define CAL_FILE_MAX CALP_FILE_MAX

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
	if (r->sample_hz > 0) {
		if (r->sample_ns > 0)
			fprintf(f, "sample_ns %.1f\n", r->sample_ns);
		if (r->sample_cg_ns > 0)
			fprintf(f, "sample_cg_ns %.1f\n", r->sample_cg_ns);
		fprintf(f, "sample_hz %.0f\n", r->sample_hz);
	}
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

/* The parser itself is in calfile-parse.h, shared with the runtime. */
int cal_file_parse(const char *buf, size_t len, const char *name, cal_file *out, proff_error *err)
{
	calp_values v = { .cpu = -1 };
	char msg[600];
	size_t off;
	int rc = calp_parse(buf, len, &v, msg, sizeof(msg), &off);
	if (rc != CALP_OK)
		return proff_err_set(err, rc == CALP_TOO_BIG ? PROFF_ENOMEM : rc == CALP_VERSION_NEW ? PROFF_ENOTSUP :
				     PROFF_EFORMAT, name, off == CALP_NO_OFFSET ? PROFF_NO_OFFSET : (uint64_t)off,
				     "%s", msg);
	*out = (cal_file){ .o_in_ns = v.o_in_ns, .o_full_ns = v.o_full_ns, .call_ns = v.call_ns,
			   .idle_ns = v.idle_ns, .start_ns = v.start_ns, .tsc_hz = v.tsc_hz, .cpu = v.cpu,
			   .sample_ns = v.sample_ns, .sample_cg_ns = v.sample_cg_ns, .sample_hz = v.sample_hz };
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
