/* input.c — which format a file holds (by content, never by name), and
 * getting the whole of it into memory: a regular file mapped, standard
 * input read, gzip data decompressed.
 *
 * pf_profile_load asks here first. Standard input is looked at without
 * consuming it (a regular file: pread; a pipe: tee(2) copies its buffered
 * bytes into a pipe of ours; a socket: MSG_PEEK), so that perf.data's pipe
 * reader still gets every byte when the input is a perf.data stream.
 */
#include "fmt-int.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "proff/trace.h"

#define SNIFF_LEN 64

/* The first byte of a pprof Profile message: the tag of one of its fields
 * (numbers 1-15), with the wire type the schema gives it (length-delimited
 * for messages, strings and packed numbers; varint for the numbers). */
static bool pprof_first_byte(uint8_t c)
{
	unsigned field = c >> 3, wt = c & 7;
	switch (field) {
	case 1: case 2: case 3: case 4: case 5: case 6: case 11: case 15:
		return wt == 2;
	case 7: case 8: case 9: case 10: case 12: case 14:
		return wt == 0;
	case 13:
		return wt == 0 || wt == 2;
	default:
		return false;
	}
}

bool fmt_looks_folded(const uint8_t *d, size_t n)
{
	size_t i = 0;
	while (i < n && (d[i] == '\n' || d[i] == '\r'))
		i++;
	if (i == n)
		return false;
	/* text: no control bytes in what is looked at (a pprof's second or
	 * third byte is a small length or tag) */
	size_t end = n < i + 256 ? n : i + 256;
	for (size_t k = i; k < end; k++)
		if (d[k] < 0x20 && d[k] != '\t' && d[k] != '\n' && d[k] != '\r')
			return false;
	return true;
}

enum pf_format pf_format_sniff(const uint8_t *h, size_t n)
{
	if (n >= 4 && (!memcmp(h, "PERF", 4) || !memcmp(h, "2ELI", 4)))
		return PF_FORMAT_PERF;
	if (n >= 4 && h[0] == (PROFF_TRACE_MAGIC & 0xff) && h[1] == (PROFF_TRACE_MAGIC >> 8 & 0xff) &&
	    h[2] == (PROFF_TRACE_MAGIC >> 16 & 0xff) && h[3] == (PROFF_TRACE_MAGIC >> 24))
		return PF_FORMAT_TRACE;
	if (n >= 2 && h[0] == 0x1f && h[1] == 0x8b)
		return PF_FORMAT_PPROF;      /* gzip: pf_formats_load looks inside */
	if (n && fmt_looks_folded(h, n))
		return PF_FORMAT_FOLDED;
	if (n >= 2 && pprof_first_byte(h[0]))
		return PF_FORMAT_PPROF;
	return PF_FORMAT_UNKNOWN;
}

void fmt_input_free(fmt_input *in)
{
	if (in->map)
		munmap(in->map, in->map_len);
	free(in->buf);
	memset(in, 0, sizeof(*in));
}

int fmt_gunzip(const uint8_t *data, size_t len, const char *name, fmt_input *in, proff_error *err)
{
	memset(in, 0, sizeof(*in));
	if (len < 2 || data[0] != 0x1f || data[1] != 0x8b)
		return 0;
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory (zlib)");
	size_t cap = len < ((size_t)1 << 20) ? ((size_t)1 << 20) : len * 4, n = 0;
	uint8_t *out = malloc(cap);
	size_t in_off = 0;
	int rc = 0;
	if (!out) {
		rc = proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
		goto done;
	}
	for (;;) {
		if (n == cap) {
			if (cap >= PF_ALLOC_LIMIT) {
				rc = proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET,
						   "decompresses to more than %zu GiB", PF_ALLOC_LIMIT >> 30);
				goto done;
			}
			size_t nc = cap * 2 > PF_ALLOC_LIMIT ? PF_ALLOC_LIMIT : cap * 2;
			uint8_t *q = realloc(out, nc);
			if (!q) {
				rc = proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
				goto done;
			}
			out = q;
			cap = nc;
		}
		size_t avail = len - in_off;
		zs.next_in = (Bytef *)(data + in_off);
		zs.avail_in = avail > UINT32_MAX ? UINT32_MAX : (uInt)avail;
		zs.next_out = out + n;
		size_t room = cap - n;
		zs.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
		uInt in0 = zs.avail_in, out0 = zs.avail_out;
		int z = inflate(&zs, Z_NO_FLUSH);
		in_off += in0 - zs.avail_in;
		n += out0 - zs.avail_out;
		if (z == Z_STREAM_END) {
			/* a gzip file may hold several members, one after another */
			if (in_off < len && len - in_off >= 2 && data[in_off] == 0x1f && data[in_off + 1] == 0x8b) {
				inflateReset(&zs);
				continue;
			}
			if (in_off < len) {
				bool zeros = true;      /* padding some tools append */
				for (size_t k = in_off; k < len && zeros; k++)
					zeros = !data[k];
				if (!zeros) {
					rc = proff_err_set(err, PROFF_EFORMAT, name, in_off,
							   "data after the end of the gzip stream");
					goto done;
				}
			}
			break;
		}
		if (z == Z_BUF_ERROR && in_off >= len) {
			rc = proff_err_set(err, PROFF_EFORMAT, name, in_off,
					   "truncated gzip data (the stream ends early)");
			goto done;
		}
		if (z != Z_OK && z != Z_BUF_ERROR) {
			rc = proff_err_set(err, PROFF_EFORMAT, name, in_off, "corrupt gzip data (%s)",
					   zs.msg ? zs.msg : "inflate failed");
			goto done;
		}
	}
	in->buf = out;
	in->data = out;
	in->len = n;
	out = NULL;
	rc = 1;
done:
	inflateEnd(&zs);
	free(out);
	return rc;
}

/* ---- standard input --------------------------------------------------------------- */

/* The first bytes of a pipe without consuming them: tee(2) copies what the
 * pipe holds into a pipe of ours. Waits until want bytes are there or the
 * writer is gone. Returns how many bytes were seen (-1: tee unusable). */
static ssize_t peek_pipe(int fd, uint8_t *buf, size_t want)
{
	int pp[2];
	if (pipe2(pp, O_CLOEXEC | O_NONBLOCK) < 0)
		return -1;
	ssize_t got = -1;
	for (;;) {
		ssize_t t = tee(fd, pp[1], want, SPLICE_F_NONBLOCK);
		if (t < 0 && errno != EAGAIN) {
			got = -1;
			break;
		}
		if (t > 0) {
			/* what tee copied, read back (it always starts at the front) */
			uint8_t tmp[SNIFF_LEN];
			ssize_t r = read(pp[0], tmp, sizeof(tmp));
			while (r > 0 && read(pp[0], tmp + r, sizeof(tmp) - (size_t)r) > 0)
				;
			got = t;
			memcpy(buf, tmp, (size_t)t < sizeof(tmp) ? (size_t)t : sizeof(tmp));
			if ((size_t)t >= want)
				break;
		}
		if (t == 0) {        /* empty pipe, no writer: the end */
			got = got < 0 ? 0 : got;
			break;
		}
		struct pollfd pf = { .fd = fd, .events = POLLIN };
		if (poll(&pf, 1, -1) < 0 && errno != EINTR)
			break;
		if (got >= 0 && (pf.revents & POLLHUP))
			break;           /* the writer is gone: what the pipe holds is all */
		if (got > 0) {
			/* data, but not enough yet: the writer is still writing */
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, NULL);
		}
	}
	close(pp[0]);
	close(pp[1]);
	return got;
}

/* The first bytes of standard input, left unread. -1: cannot be looked at
 * (a terminal, ...). */
static ssize_t peek_stdin(uint8_t *buf, size_t want)
{
	struct stat st;
	if (fstat(0, &st) < 0)
		return -1;
	if (S_ISREG(st.st_mode)) {
		off_t at = lseek(0, 0, SEEK_CUR);
		if (at < 0)
			return -1;
		return pread(0, buf, want, at);
	}
	if (S_ISFIFO(st.st_mode))
		return peek_pipe(0, buf, want);
	if (S_ISSOCK(st.st_mode))
		return recv(0, buf, want, MSG_PEEK | MSG_WAITALL);
	return -1;
}

/* All of fd into a buffer (bounded by PF_ALLOC_LIMIT) */
static int read_all(int fd, const char *name, fmt_input *in, proff_error *err)
{
	size_t cap = (size_t)1 << 20, n = 0;
	uint8_t *buf = malloc(cap);
	if (!buf)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	for (;;) {
		if (n == cap) {
			if (cap >= PF_ALLOC_LIMIT) {
				free(buf);
				return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET,
						     "more than %zu GiB of input", PF_ALLOC_LIMIT >> 30);
			}
			uint8_t *q = realloc(buf, cap * 2);
			if (!q) {
				free(buf);
				return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
			}
			buf = q;
			cap *= 2;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(buf);
			return proff_err_sys(err, PROFF_EIO, name, "cannot read");
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	in->buf = buf;
	in->data = buf;
	in->len = n;
	return 0;
}

/* A regular file mapped */
static int map_file(int fd, const char *name, fmt_input *in, proff_error *err)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return proff_err_sys(err, PROFF_EIO, name, "cannot stat");
	if (st.st_size == 0)
		return 0;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return proff_err_sys(err, PROFF_EIO, name, "cannot map the file");
	/* the whole file is read: read it ahead (one advice a call: the values are not flags) */
	madvise(m, (size_t)st.st_size, MADV_WILLNEED);
	in->map = m;
	in->map_len = (size_t)st.st_size;
	in->data = m;
	in->len = (size_t)st.st_size;
	return 0;
}

int pf_formats_load(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err)
{
	*out = NULL;
	uint8_t head[SNIFF_LEN];
	ssize_t n;
	int fd = -1;
	bool is_stdin = !strcmp(path, "-");
	const char *name = is_stdin ? "(stdin)" : path;
	if (is_stdin) {
		n = peek_stdin(head, sizeof(head));
	} else {
		fd = pf_open_regular(path);
		if (fd < 0)
			return 0;            /* perf.data's reader says why */
		n = pread(fd, head, sizeof(head), 0);
	}
	enum pf_format f = n > 0 ? pf_format_sniff(head, (size_t)n) : PF_FORMAT_UNKNOWN;
	if (f != PF_FORMAT_PPROF && f != PF_FORMAT_FOLDED) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	fmt_input raw = { 0 }, unz = { 0 };
	int rc = is_stdin ? read_all(0, name, &raw, err) : map_file(fd, name, &raw, err);
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		return rc;
	rc = fmt_gunzip(raw.data, raw.len, name, &unz, err);
	if (rc < 0) {
		fmt_input_free(&raw);
		return rc;
	}
	const uint8_t *d = raw.data;
	size_t len = raw.len;
	bool unzipped = rc == 1;
	if (unzipped) {
		fmt_input_free(&raw);    /* the compressed bytes are not needed any more */
		d = unz.data;
		len = unz.len;
		f = fmt_looks_folded(d, len) ? PF_FORMAT_FOLDED : PF_FORMAT_PPROF;
	}
	if (f == PF_FORMAT_FOLDED)
		rc = fmt_folded_read(d, len, name, opts, out, err);
	else
		rc = fmt_pprof_read(d, len, name, unzipped, opts, out, err);
	fmt_input_free(&raw);
	fmt_input_free(&unz);
	return rc < 0 ? rc : 1;
}
