/* srcdiff.c — in-process line diff and the after->before line table
 * (`proff diff --stream --before DIR --after DIR`).
 *
 * st_line_diff is Myers' O((N+M)D) greedy diff after stripping the common
 * prefix and suffix; the edit trace is bounded (past the bound the middle is
 * treated as changed, which only makes more lines "changed"). Runs of
 * inserted or deleted lines are then slid down where the lines allow it
 * (slide_runs), as GNU diff does: a function added below another ends with
 * the same "}" as the one above it, and the stripped suffix had paired the
 * old closing brace with the new function's. A source file
 * of the new side is found under the after tree by the longest suffix of its
 * DWARF path that exists there; the same relative path in the before tree is
 * its old version (missing: file renamed or deleted).
 */
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <sys/stat.h>

#include "stream-int.h"

#define TRACE_LIMIT ((size_t)1 << 25)   /* ints kept for the Myers trace */

/* Slide every run of lines of b that map nowhere (inserted) down while its
 * first line equals the matched line after it: that line then pairs with
 * the run's first, and the run moves one down (merging with a run it
 * meets). Then the same for runs of a that no line maps to (deleted). The
 * pairs stay in order and as many; only equal lines are re-paired. */
static void slide_runs(const char *const *a, size_t na, const char *const *b, size_t nb, long *map)
{
	for (size_t j = 0; j < nb;) {
		if (map[j] >= 0) {
			j++;
			continue;
		}
		size_t j0 = j, j1 = j;          /* the run [j0, j1] */
		while (j1 + 1 < nb && map[j1 + 1] < 0)
			j1++;
		while (j1 + 1 < nb && map[j1 + 1] >= 0 && !strcmp(b[j0], b[j1 + 1])) {
			map[j0] = map[j1 + 1];
			map[j1 + 1] = -1;
			j0++;
			j1++;
			while (j1 + 1 < nb && map[j1 + 1] < 0)
				j1++;
		}
		j = j1 + 1;
	}
	/* deleted runs: old lines between two consecutive pairs */
	char *used = calloc(na ? na : 1, 1);
	long *at = malloc((na ? na : 1) * sizeof(long));   /* old line -> the new line paired with it */
	if (!used || !at) {
		free(used);
		free(at);
		return;                 /* the map stays as Myers left it */
	}
	for (size_t j = 0; j < nb; j++)
		if (map[j] >= 0) {
			used[map[j]] = 1;
			at[map[j]] = (long)j;
		}
	for (size_t i = 0; i < na;) {
		if (used[i]) {
			i++;
			continue;
		}
		size_t i0 = i, i1 = i;
		while (i1 + 1 < na && !used[i1 + 1])
			i1++;
		while (i1 + 1 < na && used[i1 + 1] && !strcmp(a[i0], a[i1 + 1])) {
			long j = at[i1 + 1];
			map[j] = (long)i0;
			at[i0] = j;
			used[i0] = 1;
			used[i1 + 1] = 0;
			i0++;
			i1++;
			while (i1 + 1 < na && !used[i1 + 1])
				i1++;
		}
		i = i1 + 1;
	}
	free(used);
	free(at);
}

static int line_diff(const char *const *a, size_t na, const char *const *b, size_t nb, long *map);

int st_line_diff(const char *const *a, size_t na, const char *const *b, size_t nb, long *map)
{
	int rc = line_diff(a, na, b, nb, map);
	if (rc == 0)
		slide_runs(a, na, b, nb, map);
	return rc;
}

static int line_diff(const char *const *a, size_t na, const char *const *b, size_t nb, long *map)
{
	size_t pre = 0;
	while (pre < na && pre < nb && !strcmp(a[pre], b[pre]))
		pre++;
	size_t suf = 0;
	while (suf < na - pre && suf < nb - pre && !strcmp(a[na - 1 - suf], b[nb - 1 - suf]))
		suf++;
	for (size_t j = 0; j < nb; j++)
		map[j] = -1;
	for (size_t j = 0; j < pre; j++)
		map[j] = (long)j;
	for (size_t k = 0; k < suf; k++)
		map[nb - 1 - k] = (long)(na - 1 - k);
	const char *const *A = a + pre, *const *B = b + pre;
	long N = (long)(na - pre - suf), M = (long)(nb - pre - suf);
	if (N == 0 || M == 0)
		return 0;
	long max = N + M, off = max;
	size_t width = (size_t)(2 * max + 1);
	long *v = malloc(width * sizeof(long));
	long **trace = NULL;
	size_t ntrace = 0;
	if (!v)
		return PROFF_ENOMEM;
	v[off + 1] = 0;
	long found_d = -1;
	for (long d = 0; d <= max; d++) {
		if ((size_t)(d + 1) * width > TRACE_LIMIT)
			break;
		long *snap = malloc(width * sizeof(long));
		long **nt = snap ? realloc(trace, (ntrace + 1) * sizeof(*trace)) : NULL;
		if (!nt) {
			free(snap);
			for (size_t i = 0; i < ntrace; i++)
				free(trace[i]);
			free(trace);
			free(v);
			return PROFF_ENOMEM;
		}
		trace = nt;
		for (long k = -d; k <= d; k += 2) {
			long x;
			if (k == -d || (k != d && v[off + k - 1] < v[off + k + 1]))
				x = v[off + k + 1];
			else
				x = v[off + k - 1] + 1;
			long y = x - k;
			while (x < N && y < M && !strcmp(A[x], B[y])) {
				x++;
				y++;
			}
			v[off + k] = x;
			if (x >= N && y >= M) {
				found_d = d;
				break;
			}
		}
		memcpy(snap, v, width * sizeof(long));
		trace[ntrace++] = snap;
		if (found_d >= 0)
			break;
	}
	if (found_d >= 0) {
		/* walk back, recording the diagonal (equal) moves */
		long x = N, y = M;
		for (long d = found_d; d > 0; d--) {
			const long *pv = trace[d - 1];
			long k = x - y, pk;
			if (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1]))
				pk = k + 1;
			else
				pk = k - 1;
			long px = pv[off + pk], py = px - pk;
			while (x > px && y > py) {
				x--;
				y--;
				map[pre + (size_t)y] = (long)(pre + (size_t)x);
			}
			x = px;
			y = py;
		}
		while (x > 0 && y > 0) {
			x--;
			y--;
			map[pre + (size_t)y] = (long)(pre + (size_t)x);
		}
	}
	for (size_t i = 0; i < ntrace; i++)
		free(trace[i]);
	free(trace);
	free(v);
	return 0;
}

/* ---- files ---------------------------------------------------------------- */

typedef struct sm_file {
	char *path;                /* DWARF path asked for */
	long *map;                 /* after line (1-based) -> before line, -1 changed */
	size_t nlines;
	int state;                 /* 0 mapped, -2 deleted/renamed, 1 unknown */
} sm_file;

struct st_srcmap {
	char *before, *after;
	sm_file *files;
	size_t nr, cap;
};

int st_srcmap_new(const char *before_dir, const char *after_dir, st_srcmap **out, proff_error *err)
{
	struct stat st;
	const char *dirs[2] = { before_dir, after_dir };
	for (int i = 0; i < 2; i++)
		if (stat(dirs[i], &st) < 0 || !S_ISDIR(st.st_mode))
			return proff_err_set(err, PROFF_ENOENT, dirs[i], PROFF_NO_OFFSET, "not a directory");
	st_srcmap *m = calloc(1, sizeof(*m));
	if (!m || !(m->before = strdup(before_dir)) || !(m->after = strdup(after_dir))) {
		st_srcmap_free(m);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	*out = m;
	return 0;
}

void st_srcmap_free(st_srcmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr; i++) {
		free(m->files[i].path);
		free(m->files[i].map);
	}
	free(m->files);
	free(m->before);
	free(m->after);
	free(m);
}

#define MAX_SRC_BYTES ((size_t)64 << 20)

/* whole file split in lines (the buffer is modified); NULL if unreadable */
static char **read_lines(const char *path, size_t *n, char **bufp)
{
	/* regular files only: the path comes from the profile's debug info */
	int fd = pf_open_regular(path);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "rb");
	if (!f) {
		close(fd);
		return NULL;
	}
	size_t cap = 0, len = 0;
	char *buf = NULL;
	char tmp[65536];
	size_t r;
	while ((r = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (len + r + 1 > MAX_SRC_BYTES)
			break;
		if (len + r + 1 > cap) {
			cap = (len + r + 1) * 2;
			char *nb = realloc(buf, cap);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		memcpy(buf + len, tmp, r);
		len += r;
	}
	fclose(f);
	if (!buf && !(buf = calloc(1, 1)))
		return NULL;
	buf[len] = 0;
	size_t nl = 0;
	for (size_t i = 0; i < len; i++)
		nl += buf[i] == '\n';
	char **lines = calloc(nl + 2, sizeof(char *));
	if (!lines) {
		free(buf);
		return NULL;
	}
	size_t k = 0;
	char *p = buf;
	while (*p || (p < buf + len)) {
		lines[k++] = p;
		char *e = strchr(p, '\n');
		if (!e)
			break;
		*e = 0;
		p = e + 1;
		if (p >= buf + len)
			break;
	}
	*n = k;
	*bufp = buf;
	return lines;
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static sm_file *load_file(st_srcmap *m, const char *path)
{
	for (size_t i = 0; i < m->nr; i++)
		if (!strcmp(m->files[i].path, path))
			return &m->files[i];
	if (PF_GROW(m->files, m->cap, m->nr + 1) < 0)
		return NULL;
	sm_file *f = &m->files[m->nr];
	memset(f, 0, sizeof(*f));
	f->path = strdup(path);
	if (!f->path)
		return NULL;
	m->nr++;
	f->state = 1;
	/* longest suffix of path that exists under the after tree */
	const char *rel = NULL;
	char buf[8192];
	for (const char *s = path; s; s = strchr(s + 1, '/')) {
		const char *cand = *s == '/' ? s + 1 : s;
		if (!*cand)
			break;
		snprintf(buf, sizeof(buf), "%s/%s", m->after, cand);
		if (exists(buf)) {
			rel = cand;
			break;
		}
	}
	if (!rel)
		return f;
	char bpath[8192];
	snprintf(bpath, sizeof(bpath), "%s/%s", m->before, rel);
	if (!exists(bpath)) {
		f->state = -2;
		return f;
	}
	size_t na = 0, nb = 0;
	char *abuf = NULL, *bbuf = NULL;
	char **al = read_lines(bpath, &na, &abuf);
	char **bl = read_lines(buf, &nb, &bbuf);
	if (al && bl && (f->map = calloc(nb + 1, sizeof(long)))) {
		if (st_line_diff((const char *const *)al, na, (const char *const *)bl, nb, f->map) == 0) {
			f->nlines = nb;
			f->state = 0;
		}
	}
	free(al);
	free(bl);
	free(abuf);
	free(bbuf);
	return f;
}

long st_srcmap_line(st_srcmap *m, const char *path, unsigned line)
{
	sm_file *f = load_file(m, path);
	if (!f || f->state == 1)
		return 0;
	if (f->state == -2)
		return -2;
	if (line == 0 || line > f->nlines)
		return 0;
	long v = f->map[line - 1];
	return v < 0 ? -1 : v + 1;
}
