/* tmon.c — reader for Devel::DProf's tmon.out, old and new formats.
 *
 *   #fOrTyTwO                      first line, exactly
 *   $hz=100; ...                   header: Perl assignments, evaluated
 *   PART2                          end of header
 *   @ du ds dr                     new format: user/system/real ticks since the last '@'
 *   & id pkg name                  new format: defines sub id (hex text)
 *   + id | - id | * id | / id      enter, exit, goto &target, unwound by die
 *   + & name | - & name | / & name by-name marks
 *   + u s r name | - u s r name    old format: absolute times per mark
 *   # ...                          comment
 *
 * It follows dprofpp's own reading (split on white space, chop of the last
 * character, the running time t) and feeds a dprof_builder. Every problem is
 * reported with the file and the byte offset of the line.
 */
#include "proff/dprof.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_TOK 6
#define MAX_FILE ((size_t)1 << 34)

typedef struct tok {
	const char *p;
	size_t n;
} tok;

static bool is_ws(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* Perl's split ' ': fields separated by runs of white space. Returns the
 * number of fields (at most MAX_TOK are stored; *more tells if there were more). */
static int split_ws(const char *s, size_t n, tok *t, int *total)
{
	int k = 0, all = 0;
	size_t i = 0;
	while (i < n) {
		while (i < n && is_ws((unsigned char)s[i]))
			i++;
		if (i >= n)
			break;
		size_t st = i;
		while (i < n && !is_ws((unsigned char)s[i]))
			i++;
		if (k < MAX_TOK) {
			t[k].p = s + st;
			t[k].n = i - st;
			k++;
		}
		all++;
	}
	*total = all;
	return k;
}

/* integer tick count (DProf writes plain decimal integers) */
static bool parse_int(const tok *t, double *v)
{
	size_t i = 0;
	bool neg = false;
	if (i < t->n && (t->p[i] == '-' || t->p[i] == '+'))
		neg = t->p[i++] == '-';
	if (i == t->n || t->n - i > 18)
		return false;
	long long x = 0;
	for (; i < t->n; i++) {
		if (t->p[i] < '0' || t->p[i] > '9')
			return false;
		x = x * 10 + (t->p[i] - '0');
	}
	*v = (double)(neg ? -x : x);
	return true;
}

/* ---- header ---- */

typedef struct header {
	double hz, over_u, over_s, over_r, over_tests, rrun_u, rrun_s, rrun_r, total_marks;
	bool has_hz;
	uint64_t hz_off;        /* byte offset of the line setting $hz */
	char xs_version[128];
} header;

/* $hz above this is no clock rate (dprofpp's -S tree prints hz - 1 as an integer) */
#define MAX_HZ 1e12

static const struct hvar {
	const char *name;
	size_t off;
} hvars[] = {
	{ "hz",          offsetof(header, hz) },
	{ "over_utime",  offsetof(header, over_u) },
	{ "over_stime",  offsetof(header, over_s) },
	{ "over_rtime",  offsetof(header, over_r) },
	{ "over_tests",  offsetof(header, over_tests) },
	{ "rrun_utime",  offsetof(header, rrun_u) },
	{ "rrun_stime",  offsetof(header, rrun_s) },
	{ "rrun_rtime",  offsetof(header, rrun_r) },
	{ "total_marks", offsetof(header, total_marks) },
};

/* One header line, which dprofpp evals as Perl: `$var = value;` statements
 * with numbers or single-quoted strings. */
static int header_line(header *h, const char *s, size_t n, const char *file, uint64_t off, proff_error *err)
{
	size_t i = 0;
	for (;;) {
		while (i < n && (is_ws((unsigned char)s[i]) || s[i] == ';'))
			i++;
		if (i >= n)
			return 0;
		if (s[i] != '$')
			goto bad;
		size_t ns = ++i;
		while (i < n && (s[i] == '_' || (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
				 (s[i] >= '0' && s[i] <= '9')))
			i++;
		size_t nl = i - ns;
		if (!nl)
			goto bad;
		while (i < n && is_ws((unsigned char)s[i]))
			i++;
		if (i >= n || s[i] != '=')
			goto bad;
		i++;
		while (i < n && is_ws((unsigned char)s[i]))
			i++;
		if (i < n && s[i] == '\'') {
			size_t vs = ++i;
			while (i < n && s[i] != '\'')
				i++;
			if (i >= n)
				goto bad;
			if (nl == 10 && !memcmp(s + ns, "XS_VERSION", 10)) {
				size_t vl = i - vs;
				if (vl >= sizeof(h->xs_version))
					vl = sizeof(h->xs_version) - 1;
				memcpy(h->xs_version, s + vs, vl);
				h->xs_version[vl] = '\0';
			}
			i++;
		} else {
			char num[64];
			size_t vs = i;
			while (i < n && !is_ws((unsigned char)s[i]) && s[i] != ';')
				i++;
			size_t vl = i - vs;
			if (!vl || vl >= sizeof(num))
				goto bad;
			memcpy(num, s + vs, vl);
			num[vl] = '\0';
			char *end;
			errno = 0;
			double v = strtod(num, &end);
			if (*end || errno || !isfinite(v))
				goto bad;
			for (size_t k = 0; k < sizeof(hvars) / sizeof(hvars[0]); k++)
				if (strlen(hvars[k].name) == nl && !memcmp(hvars[k].name, s + ns, nl)) {
					*(double *)((char *)h + hvars[k].off) = v;
					if (k == 0) {
						h->has_hz = true;
						h->hz_off = off;
					}
				}
		}
		while (i < n && is_ws((unsigned char)s[i]))
			i++;
		if (i < n && s[i] != ';')
			goto bad;
	}
bad:
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;               /* the message stays one line */
	return proff_err_set(err, PROFF_EFORMAT, file, off, "cannot parse header line '%.*s'",
			     (int)(n > 80 ? 80 : n), s);
}

/* Reads the first line and the header; returns the offset of the body. */
static int read_header(const char *buf, size_t len, const char *file, header *h, size_t *body, proff_error *err)
{
	memset(h, 0, sizeof(*h));
	snprintf(h->xs_version, sizeof(h->xs_version), "early");
	const char *nl = memchr(buf, '\n', len);
	size_t l1 = nl ? (size_t)(nl - buf) + 1 : len;
	/* chop */
	if (l1 == 0 || l1 - 1 != 9 || memcmp(buf, "#fOrTyTwO", 9) != 0)
		return proff_err_set(err, PROFF_EFORMAT, file, 0, "Not a perl profile (first line is not #fOrTyTwO)");
	size_t i = l1;
	while (i < len) {
		const char *e = memchr(buf + i, '\n', len - i);
		size_t ll = e ? (size_t)(e - (buf + i)) + 1 : len - i;
		const char *s = buf + i;
		if (ll >= 4 && !memcmp(s, "PART", 4)) {
			*body = i + ll;
			if (!h->has_hz || !(h->hz > 0))
				return proff_err_set(err, PROFF_EFORMAT, file, h->has_hz ? h->hz_off : 0,
						     "header has no positive $hz");
			if (h->hz > MAX_HZ)
				return proff_err_set(err, PROFF_EFORMAT, file, h->hz_off,
						     "header: $hz=%g is not a plausible clock rate (at most %g)", h->hz, MAX_HZ);
			return 0;
		}
		if (s[0] != '#') {
			int rc = header_line(h, s, ll, file, i, err);
			if (rc < 0)
				return rc;
		}
		i += ll;
	}
	return proff_err_set(err, PROFF_EFORMAT, file, len, "no PART2 line: the header never ends");
}

/* ---- body ---- */

/* Sub ids are strings to dprofpp ("1a" and "01a" differ). Canonical
 * lower-case hex ids of up to 5 digits (what DProf writes) index `hex`
 * directly; anything else goes through a string table. */
typedef struct idmap {
	pf_strtab ids;
	uint32_t *name;         /* id index -> name id + 1 (0 = undefined) */
	size_t cap;
	uint32_t *hex;          /* hex value -> name id + 1 */
	size_t hexcap;
} idmap;

static bool canon_hex(const tok *t, uint32_t *v)
{
	if (t->n == 0 || t->n > 5 || (t->p[0] == '0' && t->n > 1))
		return false;
	uint32_t x = 0;
	for (size_t i = 0; i < t->n; i++) {
		char c = t->p[i];
		if (c >= '0' && c <= '9')
			x = x * 16 + (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			x = x * 16 + (uint32_t)(c - 'a' + 10);
		else
			return false;
	}
	*v = x;
	return true;
}

/* Slot holding the name of id t (created if absent), NULL on no memory. */
static uint32_t *id_slot(idmap *m, const tok *t)
{
	uint32_t v;
	if (canon_hex(t, &v)) {
		if (v >= m->hexcap) {
			size_t old = m->hexcap;
			if (PF_GROW(m->hex, m->hexcap, (size_t)v + 1) < 0)
				return NULL;
			memset(m->hex + old, 0, (m->hexcap - old) * sizeof(*m->hex));
		}
		return &m->hex[v];
	}
	int64_t ix = pf_strtab_intern(&m->ids, t->p, t->n);
	if (ix < 0)
		return NULL;
	if ((size_t)ix >= m->cap) {
		size_t old = m->cap;
		if (PF_GROW(m->name, m->cap, (size_t)ix + 1) < 0)
			return NULL;
		memset(m->name + old, 0, (m->cap - old) * sizeof(*m->name));
	}
	return &m->name[ix];
}

static double pick(enum dprof_clock c, double u, double s, double r)
{
	switch (c) {
	case DPROF_CLOCK_USER: return u;
	case DPROF_CLOCK_SYS:  return s;
	case DPROF_CLOCK_REAL: return r;
	default:               return u + s;
	}
}

static int fail_b(dprof_builder *b, const char *file, uint64_t off, proff_error *err)
{
	const proff_error *be = dprof_builder_error(b);
	return proff_err_set(err, be->code ? be->code : PROFF_EFORMAT, file, off, "%s", be->msg);
}

int dprof_read_tmon_buf(const char *buf, size_t len, const char *file,
			const dprof_read_opts *opts, dprof_model **out, proff_error *err)
{
	*out = NULL;
	header h;
	size_t i;
	int rc = read_header(buf, len, file, &h, &i, err);
	if (rc < 0)
		return rc;
	dprof_builder *b = dprof_builder_new(&opts->build, err);
	if (!b)
		return err && err->code ? err->code : PROFF_ENOMEM;
	idmap ids;
	memset(&ids, 0, sizeof(ids));
	if (pf_strtab_init(&ids.ids) < 0) {
		dprof_builder_free(b);
		return proff_err_set(err, PROFF_ENOMEM, file, PROFF_NO_OFFSET, "out of memory");
	}
	if (h.over_tests == 0)
		h.over_tests = 1;
	dprof_builder_set_clock(b, h.hz);
	dprof_builder_set_overhead(b, pick(opts->clock, h.over_u, h.over_s, h.over_r) / (2 * h.over_tests));
	dprof_builder_set_run_times(b, pick(opts->run_clock, h.rrun_u, h.rrun_s, h.rrun_r), h.rrun_r);
	dprof_builder_set_xs_version(b, h.xs_version);

	double t = 0;
	size_t marks_end = len;
	char namebuf[4096];
	tok tk[MAX_TOK];
	while (i < len) {
		const char *s = buf + i;
		const char *e = memchr(s, '\n', len - i);
		size_t ll = e ? (size_t)(e - s) + 1 : len - i;
		uint64_t off = i;
		i += ll;
		if (s[0] == '#')
			continue;
		if (ll >= 4 && !memcmp(s, "PART", 4)) {
			marks_end = off;
			break;
		}
		size_t n = ll - 1;   /* chop */
		if (memchr(s, '\0', n)) {
			rc = proff_err_set(err, PROFF_EFORMAT, file, off, "NUL byte in a line");
			goto done;
		}
		int total;
		int nt = split_ws(s, n, tk, &total);
		if (nt > 0 && s[0] == '&') {
			/* & id pkg name */
			if (nt < 2) {
				rc = proff_err_set(err, PROFF_EFORMAT, file, off, "'&' line without a sub id");
				goto done;
			}
			size_t pl = nt > 2 ? tk[2].n : 0, nl = nt > 3 ? tk[3].n : 0;
			if (pl + nl + tk[1].n + 8 > sizeof(namebuf)) {
				rc = proff_err_set(err, PROFF_EFORMAT, file, off, "sub name longer than %zu bytes", sizeof(namebuf) - 8);
				goto done;
			}
			size_t k = 0;
			if (pl) memcpy(namebuf, tk[2].p, pl);
			k = pl;
			memcpy(namebuf + k, "::", 2);
			k += 2;
			if (nl) memcpy(namebuf + k, tk[3].p, nl);
			k += nl;
			if (opts->anon_split && nl &&
			    ((nl >= 8 && !memcmp(tk[3].p + nl - 8, "__ANON__", 8)) || (nl >= 3 && !memcmp(tk[3].p + nl - 3, "END", 3)))) {
				namebuf[k++] = '(';
				memcpy(namebuf + k, tk[1].p, tk[1].n);
				k += tk[1].n;
				namebuf[k++] = ')';
			}
			int64_t nid = dprof_builder_intern(b, namebuf, k);
			uint32_t *slot = nid < 0 ? NULL : id_slot(&ids, &tk[1]);
			if (!slot) {
				rc = proff_err_set(err, PROFF_ENOMEM, file, off, "out of memory");
				goto done;
			}
			*slot = (uint32_t)nid + 1;
			continue;
		}
		if (nt == 0) {
			rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: empty line");
			goto done;
		}
		char dir = tk[0].n == 1 ? tk[0].p[0] : '?';
		if (dir != '+' && dir != '-' && dir != '*' && dir != '/' && dir != '@') {
			rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: unknown line '%.*s'",
					   (int)(n > 60 ? 60 : n), s);
			goto done;
		}
		if (nt >= 4) {
			/* '@ du ds dr' or old format '± u s r name' */
			double u, sy, r;
			if (dir == '/' || !parse_int(&tk[1], &u) || !parse_int(&tk[2], &sy) || !parse_int(&tk[3], &r)) {
				rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: expected '%c' and three tick counts", dir);
				goto done;
			}
			if (dir == '@') {
				t += pick(opts->clock, u, sy, r);
				continue;
			}
			t = pick(opts->clock, u, sy, r);
			if (nt < 5) {
				rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: mark without a sub name");
				goto done;
			}
			int64_t nid = dprof_builder_intern(b, tk[4].p, tk[4].n);
			if (nid < 0) {
				rc = proff_err_set(err, PROFF_ENOMEM, file, off, "out of memory");
				goto done;
			}
			rc = dir == '+' ? dprof_builder_enter(b, 0, (uint32_t)nid, t)
			   : dir == '-' ? dprof_builder_exit(b, 0, (uint32_t)nid, t)
			   : dprof_builder_goto(b, 0, (uint32_t)nid, t);
			if (rc < 0) {
				rc = fail_b(b, file, off, err);
				goto done;
			}
			continue;
		}
		if (dir == '@') {
			rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: '@' needs three tick counts");
			goto done;
		}
		/* name: third field if present ("± & name"), else the id's name */
		int64_t nid = -1;
		if (nt >= 3) {
			nid = dprof_builder_intern(b, tk[2].p, tk[2].n);
			if (nid < 0) {
				rc = proff_err_set(err, PROFF_ENOMEM, file, off, "out of memory");
				goto done;
			}
		} else if (nt == 2) {
			uint32_t *slot = id_slot(&ids, &tk[1]);
			if (!slot) {
				rc = proff_err_set(err, PROFF_ENOMEM, file, off, "out of memory");
				goto done;
			}
			if (*slot)
				nid = *slot - 1;
		}
		if (dir == '/') {
			rc = dprof_builder_unwind(b, 0, nid >= 0 ? (uint32_t)nid : DPROF_NAME_NONE, t);
		} else {
			if (nid < 0) {
				if (nt == 2)
					rc = proff_err_set(err, PROFF_EFORMAT, file, off,
							   "Bad profile: sub id '%.*s' used before its '&' definition",
							   (int)(tk[1].n > 40 ? 40 : tk[1].n), tk[1].p);
				else
					rc = proff_err_set(err, PROFF_EFORMAT, file, off, "Bad profile: '%c' without a sub id", dir);
				goto done;
			}
			rc = dir == '+' ? dprof_builder_enter(b, 0, (uint32_t)nid, t)
			   : dir == '-' ? dprof_builder_exit(b, 0, (uint32_t)nid, t)
			   : dprof_builder_goto(b, 0, (uint32_t)nid, t);
		}
		if (rc < 0) {
			rc = fail_b(b, file, off, err);
			goto done;
		}
	}
	rc = dprof_builder_finish(b, t, out, err);
	if (rc < 0 && err && !err->file[0])
		snprintf(err->file, sizeof(err->file), "%s", file);
	if (rc < 0 && err && err->offset == PROFF_NO_OFFSET)
		err->offset = marks_end;   /* found at the end of the marks (e.g. calls never exited) */
done:
	pf_strtab_free(&ids.ids);
	free(ids.name);
	free(ids.hex);
	dprof_builder_free(b);
	return rc;
}

static int slurp(const char *path, char **buf, size_t *len, proff_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proff_err_sys(err, errno == ENOENT ? PROFF_ENOENT : PROFF_EIO, path, "Unable to open");
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return proff_err_sys(err, PROFF_EIO, path, "fstat");
	}
	size_t cap = S_ISREG(st.st_mode) && st.st_size > 0 ? (size_t)st.st_size + 1 : 65536, n = 0;
	if (cap > MAX_FILE) {
		close(fd);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "file too large");
	}
	char *b = malloc(cap);
	if (!b) {
		close(fd);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	for (;;) {
		if (n == cap) {
			if (cap >= MAX_FILE) {
				free(b);
				close(fd);
				return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "file too large");
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				close(fd);
				return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
			}
			b = nb;
			cap *= 2;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(b);
			close(fd);
			return proff_err_sys(err, PROFF_EIO, path, "read");
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	*buf = b;
	*len = n;
	return 0;
}

int dprof_read_tmon(const char *path, const dprof_read_opts *opts, dprof_model **out, proff_error *err)
{
	char *buf;
	size_t len;
	/* regular files are mapped (the parser never reads past len) */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= MAX_FILE) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		close(fd);
		if (p != MAP_FAILED) {
			madvise(p, (size_t)st.st_size, MADV_SEQUENTIAL);
			int rc = dprof_read_tmon_buf(p, (size_t)st.st_size, path, opts, out, err);
			munmap(p, (size_t)st.st_size);
			return rc;
		}
	} else if (fd >= 0) {
		close(fd);
	}
	int rc = slurp(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	rc = dprof_read_tmon_buf(buf, len, path, opts, out, err);
	free(buf);
	return rc;
}

int dprof_tmon_xs_version(const char *path, char *out, size_t outlen, proff_error *err)
{
	char *buf;
	size_t len, body;
	header h;
	int rc = slurp(path, &buf, &len, err);
	if (rc < 0)
		return rc;
	rc = read_header(buf, len, path, &h, &body, err);
	free(buf);
	if (rc < 0)
		return rc;
	snprintf(out, outlen, "%s", h.xs_version);
	return 0;
}
