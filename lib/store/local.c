/* local.c — the embedded store: a directory, no server.
 *
 *   DIR/PROFF-STORE            "proff store 1": what makes DIR a store
 *   DIR/profiles/ID.prof       one profile (text, format below)
 *   DIR/profiles/.ID.tmp.PID   a push under way (never read)
 *
 * A push writes the profile's file under a temporary name, syncs it and
 * renames it into place: the rename is the marker, so a profile is whole
 * or absent, and a second push of the same id finds it and does nothing.
 * A query reads every profile file, keeps those a group's selector
 * matches and aggregates their rows here (store_result_add_prof).
 *
 * The profile file is lines of tab-separated fields, escaped as
 * ClickHouse's TabSeparated format escapes them (docs/fleet.md):
 *   proff-profile 1 | id ID | time SECS
 *   string TEXT                       (ids 1, 2, ... in order; 0 is "")
 *   label KEY VALUE                   (string ids)
 *   event NAME TYPE CONFIG TOTAL SAMPLES CALLCHAIN   (NAME a string id)
 *   keyrow KEYSET EVENT COMM DSO SYM SRCLINE ADDR LEVEL SELF CHILDREN SAMPLES
 *                                     (keyrows.c: a query of a stored key set
 *                                     reads these and skips what follows)
 *   frame DSO DSO_LONG SYM SRCLINE ADDR LEVEL   (string ids; ADDR hex)
 *   stack HASH FRAME,FRAME,...        (leaf first)
 *   sample EVENT COMM STACK PERIOD COUNT
 *   end LINES                         (the number of lines before it)
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store-int.h"

#define STORE_MAGIC "proff store 2\n"

typedef struct local_store {
	char *dir;
} local_store;

/* ---- writing ------------------------------------------------------------------- */

static int prof_write(FILE *f, const store_prof *sp)
{
	size_t lines = 3;
	fprintf(f, "proff-profile\t4\nid\t%s\ntime\t%lld\n", sp->id, (long long)sp->time);
	for (size_t i = 1; i < sp->strs.n; i++, lines++) {
		fputs("string\t", f);
		store_tsv_put(f, pf_strtab_get(&sp->strs, (uint32_t)i), sp->strs.lens[i]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < sp->nr_labels; i++, lines++)
		fprintf(f, "label\t%u\t%u\n", sp->labels[i].key, sp->labels[i].value);
	for (size_t e = 0; e < sp->nr_events; e++, lines++) {
		const store_event *ev = &sp->events[e];
		fprintf(f, "event\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d\n", ev->name, ev->type, ev->config,
			ev->total, ev->samples, ev->callchain);
	}
	for (int k = 0; k < STORE_NR_KEYSETS; k++) {
		store_keyrow *rows;
		size_t n;
		if (store_keyrows(sp, store_keysets[k], &rows, &n))
			return -1;
		for (size_t i = 0; i < n; i++, lines++) {
			const store_keyrow *kr = &rows[i];
			fprintf(f, "keyrow\t%d\t%u\t%u\t%u\t%u\t%u\t%" PRIx64 "\t%c\t%" PRIx64 "\t%c\t%" PRIu64 "\t%" PRIu64
				"\t%" PRIu64 "\n", store_keysets[k], kr->event, kr->comm, kr->dso, kr->sym, kr->srcline, kr->addr,
				kr->level, kr->self_addr, kr->self_level ? kr->self_level : '-', kr->self, kr->acc, kr->count);
		}
		free(rows);
	}
	for (size_t i = 0; i < sp->nr_frames; i++, lines++) {
		const store_frame *fr = &sp->frames[i];
		fprintf(f, "frame\t%u\t%u\t%u\t%u\t%" PRIx64 "\t%" PRIx64 "\t%c\n", fr->dso, fr->dso_long, fr->sym,
			fr->srcline, fr->addr, fr->ip, fr->level ? fr->level : '.');
	}
	for (size_t i = 0; i < sp->nr_stacks; i++, lines++) {
		const store_stack *st = &sp->stacks[i];
		fprintf(f, "stack\t%016" PRIx64 "\t", st->hash);
		for (uint32_t j = 0; j < st->n; j++)
			fprintf(f, j ? ",%u" : "%u", sp->stack_frames[st->first + j]);
		fputc('\n', f);
	}
	for (size_t i = 0; i < sp->nr_samples; i++, lines++) {
		const store_sample *s = &sp->samples[i];
		fprintf(f, "sample\t%u\t%u\t%u\t%" PRIu64 "\t%" PRIu64 "\n", s->event, s->comm, s->stack, s->period,
			s->count);
	}
	fprintf(f, "end\t%zu\n", lines);
	return ferror(f) ? -1 : 0;
}

/* ---- reading ---------------------------------------------------------------------- */

typedef struct cursor {
	const char *p, *end;
	const char *line;           /* start of the current line */
	const char *base;
	size_t lineno;
	const char *path;
	proff_error *err;
} cursor;

static int bad(cursor *c, const char *what)
{
	return proff_err_set(c->err, PROFF_EFORMAT, c->path, (uint64_t)(c->line - c->base),
			     "line %zu: %s", c->lineno, what);
}

/* the next field of the line as text (unescaped, malloc'd) */
static int field_str(cursor *c, char **s, size_t *len)
{
	if (c->p >= c->end || *c->p == '\n')
		return bad(c, "a field is missing");
	int rc = store_tsv_get(&c->p, c->end, s, len);
	if (rc == -2)
		return proff_err_set(c->err, PROFF_ENOMEM, c->path, PROFF_NO_OFFSET, "out of memory");
	if (rc)
		return bad(c, "a bad escape sequence");
	if (c->p < c->end && *c->p == '\t')
		c->p++;
	return 0;
}

static int field_u64(cursor *c, uint64_t *v, int base)
{
	if (c->p >= c->end || *c->p == '\n' || *c->p == '\t')
		return bad(c, "a number is missing");
	uint64_t x = 0;
	const char *q = c->p;
	for (; q < c->end && *q != '\t' && *q != '\n' && *q != ','; q++) {
		int d;
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if (base == 16 && *q >= 'a' && *q <= 'f')
			d = *q - 'a' + 10;
		else
			return bad(c, "not a number");
		if (x > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return bad(c, "a number too large");
		x = x * (uint64_t)base + (uint64_t)d;
	}
	if (q - c->p > 20)
		return bad(c, "a number too long");
	*v = x;
	c->p = q;
	if (c->p < c->end && *c->p == '\t')
		c->p++;
	return 0;
}

static int field_u32(cursor *c, uint32_t *v, uint64_t bound, const char *what)
{
	uint64_t x;
	int rc = field_u64(c, &x, 10);
	if (rc)
		return rc;
	if (x >= bound) {
		char m[96];
		snprintf(m, sizeof(m), "%s %" PRIu64 " out of range", what, x);
		return bad(c, m);
	}
	*v = (uint32_t)x;
	return 0;
}

static int line_end(cursor *c)
{
	if (c->p < c->end && *c->p != '\n')
		return bad(c, "more fields than expected");
	if (c->p >= c->end)
		return bad(c, "the file ends inside a line (truncated)");
	c->p++;
	c->lineno++;
	return 0;
}

/* Parse a profile file's bytes. */
/* a level: one character and a tab */
static int level_field(cursor *c, char *level)
{
	if (c->end - c->p < 2 || c->p[0] == '\n' || c->p[0] == '\t' || c->p[1] != '\t')
		return bad(c, "a key row's level is one character");
	*level = *c->p;
	c->p += 2;
	return 0;
}

/* keyrow KEYSET EVENT COMM DSO SYM SRCLINE ADDR LEVEL SELF_ADDR SELF_LEVEL SELF CHILDREN SAMPLES
 * (SELF_LEVEL '-': no sample's own frame made the row) */
static int keyrow_line(cursor *c, store_prof *sp)
{
	store_keyrow kr = { 0 };
	uint32_t ks;
	uint64_t ns = sp->strs.n;
	int rc;
	if ((rc = field_u32(c, &ks, 256, "key set")) || (rc = field_u32(c, &kr.event, sp->nr_events, "event")) ||
	    (rc = field_u32(c, &kr.comm, ns, "string")) || (rc = field_u32(c, &kr.dso, ns, "string")) ||
	    (rc = field_u32(c, &kr.sym, ns, "string")) || (rc = field_u32(c, &kr.srcline, ns, "string")) ||
	    (rc = field_u64(c, &kr.addr, 16)))
		return rc;
	if ((rc = level_field(c, &kr.level)) || (rc = field_u64(c, &kr.self_addr, 16)) ||
	    (rc = level_field(c, &kr.self_level)))
		return rc;
	if (kr.self_level == '-')
		kr.self_level = 0;
	if ((rc = field_u64(c, &kr.self, 10)) || (rc = field_u64(c, &kr.acc, 10)) || (rc = field_u64(c, &kr.count, 10)))
		return rc;
	if (!sp->priv && !(sp->priv = pf_calloc(1, sizeof(*sp->priv))))
		return proff_err_set(c->err, PROFF_ENOMEM, c->path, PROFF_NO_OFFSET, "out of memory");
	struct store_prof_priv *pp = sp->priv;
	if (pp->nr_keyrows == pp->cap_keyrows) {
		size_t nc = pp->cap_keyrows ? 2 * pp->cap_keyrows : 256;
		store_keyrow *a = pf_realloc_array(pp->keyrows, nc, sizeof(*a));
		if (a)
			pp->keyrows = a;
		uint8_t *b = a ? pf_realloc_array(pp->keyrow_set, nc, 1) : NULL;
		if (!b)
			return proff_err_set(c->err, PROFF_ENOMEM, c->path, PROFF_NO_OFFSET, "out of memory");
		pp->keyrow_set = b;
		pp->cap_keyrows = nc;
	}
	pp->keyrow_set[pp->nr_keyrows] = (uint8_t)ks;
	pp->keyrows[pp->nr_keyrows++] = kr;
	return 0;
}

/* what a parse reads (store_prof_parse_part): everything, the lines before
 * the key rows (labels and events: enough to select a profile), or those
 * and the key rows of one key set (the other key rows, frames, stacks and
 * samples skipped but counted, so that the end line still tells a damaged
 * file) */
enum { PARSE_ALL = STORE_PARSE_ALL, PARSE_HEAD = STORE_PARSE_HEAD };

static bool skipped_kind(const cursor *c, int want)
{
	static const char *const kinds[] = { "frame\t", "stack\t", "sample\t" };
	size_t left = (size_t)(c->end - c->p);
	for (size_t i = 0; i < 3; i++)
		if (left > strlen(kinds[i]) && !memcmp(c->p, kinds[i], strlen(kinds[i])))
			return true;
	if (left > 7 && !memcmp(c->p, "keyrow\t", 7)) {
		if (want == PARSE_HEAD)
			return true;
		int ks = 0;
		const char *q = c->p + 7;
		for (; q < c->end && *q >= '0' && *q <= '9' && ks < 1000; q++)
			ks = ks * 10 + (*q - '0');
		return ks != want;
	}
	return false;
}

int store_prof_parse_part(const char *buf, size_t len, const char *path, int want, store_prof **out, proff_error *err)
{
	*out = NULL;
	cursor c = { buf, buf + len, buf, buf, 1, path, err };
	store_prof *sp = pf_calloc(1, sizeof(*sp));
	if (!sp || pf_strtab_init(&sp->strs)) {
		free(sp);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	int rc = 0;
	bool ended = false, have_id = false;
	size_t nlines = 0;
	char *s = NULL, *v = NULL;
	size_t sl, vl;
	while (c.p < c.end && !rc) {
		c.line = c.p;
		if (ended) {
			rc = bad(&c, "data after the end line");
			break;
		}
		if (want != PARSE_ALL && nlines && skipped_kind(&c, want)) {
			if (want == PARSE_HEAD) {
				ended = true;     /* what was asked for is read */
				break;
			}
			const char *nl = memchr(c.p, '\n', (size_t)(c.end - c.p));
			if (!nl) {
				rc = bad(&c, "the file ends inside a line (truncated)");
				break;
			}
			c.p = nl + 1;
			c.lineno++;
			nlines++;
			continue;
		}
		if ((rc = field_str(&c, &s, &sl)))
			break;
		if (nlines == 0 && strcmp(s, "proff-profile")) {
			rc = bad(&c, "not a proff store profile (no 'proff-profile' line)");
		} else if (!strcmp(s, "proff-profile")) {
			uint64_t ver;
			if (nlines)
				rc = bad(&c, "a second header line");
			else if (!(rc = field_u64(&c, &ver, 10)) && ver == 2)
				rc = bad(&c, "a profile stored by an older proff (version 2: one address an unresolved "
					 "frame): push the profiles again into a new store (docs/fleet.md)");
			else if (!rc && ver == 3)
				rc = bad(&c, "a profile stored by an older proff (version 3: key rows without their "
					 "samples' own level): push the profiles again into a new store (docs/fleet.md)");
			else if (!rc && ver != 4)
				rc = bad(&c, "unknown version (this proff reads version 4)");
		} else if (!strcmp(s, "id")) {
			if (!(rc = field_str(&c, &v, &vl))) {
				if (vl != STORE_ID_LEN || strspn(v, "0123456789abcdef") != vl)
					rc = bad(&c, "an id is 32 hex digits");
				else
					memcpy(sp->id, v, vl + 1), have_id = true;
				free(v);
				v = NULL;
			}
		} else if (!strcmp(s, "time")) {
			uint64_t t;
			if (!(rc = field_u64(&c, &t, 10)))
				sp->time = (int64_t)(t > INT64_MAX ? INT64_MAX : t);
		} else if (!strcmp(s, "label")) {
			uint32_t k, lv;
			if (!(rc = field_u32(&c, &k, sp->strs.n, "string")) && !(rc = field_u32(&c, &lv, sp->strs.n, "string"))) {
				proff_error le;
				const char *ks = pf_strtab_get(&sp->strs, k);
				if (strlen(ks) != sp->strs.lens[k] ||
				    store_prof_label(sp, ks, pf_strtab_get(&sp->strs, lv), sp->strs.lens[lv], &le))
					rc = bad(&c, "a bad label");
			}
		} else if (!strcmp(s, "event")) {
			store_event ev = { 0 };
			uint64_t type, cc;
			if (!(rc = field_u32(&c, &ev.name, sp->strs.n, "string")) && !(rc = field_u64(&c, &type, 10)) &&
			    !(rc = field_u64(&c, &ev.config, 10)) && !(rc = field_u64(&c, &ev.total, 10)) &&
			    !(rc = field_u64(&c, &ev.samples, 10)) && !(rc = field_u64(&c, &cc, 10))) {
				store_event *ne = pf_realloc_array(sp->events, sp->nr_events + 1, sizeof(*ne));
				if (!ne) {
					rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
				} else {
					sp->events = ne;
					if (type > UINT32_MAX || cc > 1 || sp->nr_events >= 256) {
						rc = bad(&c, "a bad event line");
					} else {
						ev.type = (uint32_t)type;
						ev.callchain = cc;
						sp->events[sp->nr_events++] = ev;
					}
				}
			}
		} else if (!strcmp(s, "string")) {
			if (!(rc = field_str(&c, &v, &vl))) {
				size_t before = sp->strs.n;
				int64_t id = pf_strtab_intern(&sp->strs, v, vl);
				if (id < 0)
					rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
				else if ((size_t)id != before || sp->nr_frames || sp->nr_labels || sp->nr_events ||
					 (sp->priv && sp->priv->nr_keyrows))
					rc = bad(&c, "a string given twice, or after the labels, events or frames");
			}
			free(v);
			v = NULL;
		} else if (!strcmp(s, "keyrow")) {
			rc = keyrow_line(&c, sp);
		} else if (!strcmp(s, "frame")) {
			store_frame f = { 0 };
			uint64_t ns = sp->strs.n, lvl;
			if (!(rc = field_u32(&c, &f.dso, ns, "string")) && !(rc = field_u32(&c, &f.dso_long, ns, "string")) &&
			    !(rc = field_u32(&c, &f.sym, ns, "string")) && !(rc = field_u32(&c, &f.srcline, ns, "string")) &&
			    !(rc = field_u64(&c, &f.addr, 16)) && !(rc = field_u64(&c, &f.ip, 16))) {
				if (c.p + 1 > c.end || c.p[0] == '\n' || (c.p + 1 < c.end && c.p[1] != '\n')) {
					rc = bad(&c, "a frame's level is one character");
				} else {
					lvl = (unsigned char)*c.p++;
					f.level = (char)lvl;
					if (PF_GROW(sp->frames, sp->cap_frames, sp->nr_frames + 1))
						rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
					else
						sp->frames[sp->nr_frames++] = f;
				}
			}
		} else if (!strcmp(s, "stack")) {
			uint64_t h;
			if (!(rc = field_u64(&c, &h, 16))) {
				size_t first = sp->nr_stack_frames, n = 0;
				while (!rc && c.p < c.end && *c.p != '\n') {
					uint32_t f;
					if ((rc = field_u32(&c, &f, sp->nr_frames, "frame")))
						break;
					if (PF_GROW(sp->stack_frames, sp->cap_stack_frames, sp->nr_stack_frames + 1)) {
						rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
						break;
					}
					sp->stack_frames[sp->nr_stack_frames++] = f;
					n++;
					if (c.p < c.end && *c.p == ',')
						c.p++;
					else if (c.p < c.end && *c.p != '\n')
						rc = bad(&c, "frames are separated by ','");
				}
				if (!rc && !n)
					rc = bad(&c, "a stack without frames");
				if (!rc && PF_GROW(sp->stacks, sp->cap_stacks, sp->nr_stacks + 1))
					rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
				if (!rc)
					sp->stacks[sp->nr_stacks++] = (store_stack){ h, (uint32_t)first, (uint32_t)n };
			}
		} else if (!strcmp(s, "sample")) {
			store_sample sm;
			if (!(rc = field_u32(&c, &sm.event, sp->nr_events, "event")) &&
			    !(rc = field_u32(&c, &sm.comm, sp->strs.n, "string")) &&
			    !(rc = field_u32(&c, &sm.stack, sp->nr_stacks, "stack")) &&
			    !(rc = field_u64(&c, &sm.period, 10)) && !(rc = field_u64(&c, &sm.count, 10))) {
				if (PF_GROW(sp->samples, sp->cap_samples, sp->nr_samples + 1))
					rc = proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
				else
					sp->samples[sp->nr_samples++] = sm;
			}
		} else if (!strcmp(s, "end")) {
			uint64_t n;
			if (!(rc = field_u64(&c, &n, 10))) {
				if (n != nlines)
					rc = bad(&c, "the end line counts another number of lines (a damaged file)");
				ended = true;
			}
		} else {
			rc = bad(&c, "an unknown kind of line");
		}
		free(s);
		s = NULL;
		if (!rc)
			rc = line_end(&c);
		nlines++;
	}
	free(s);
	if (!rc && !ended) {
		c.line = c.p;
		rc = bad(&c, "no end line (a truncated file)");
	}
	if (!rc && !have_id)
		rc = bad(&c, "no id line");
	if (rc) {
		store_prof_free(sp);
		return rc;
	}
	*out = sp;
	return 0;
}

int store_prof_parse(const char *buf, size_t len, const char *path, store_prof **out, proff_error *err)
{
	return store_prof_parse_part(buf, len, path, PARSE_ALL, out, err);
}

/* Read and parse a profile file (want: parse_part's) with buf, a buffer
 * kept from one file to the next (read, not mapped: unmapping a file
 * after each of thousands costs more than reading it) */
static int prof_read(const char *path, int want, sbuf *buf, store_prof **out, proff_error *err)
{
	int fd = pf_open_regular(path);
	if (fd < 0)
		return proff_err_sys(err, PROFF_EIO, path, "cannot open");
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return proff_err_sys(err, PROFF_EIO, path, "cannot stat");
	}
	if (st.st_size == 0) {
		close(fd);
		return proff_err_set(err, PROFF_EFORMAT, path, 0, "an empty profile file");
	}
	size_t size = (size_t)st.st_size, got = 0;
	if (size + 1 > buf->cap) {
		char *np = realloc(buf->p, size + 1);
		if (!np) {
			close(fd);
			return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
		}
		buf->p = np;
		buf->cap = size + 1;
	}
	while (got < size) {
		ssize_t r = read(fd, buf->p + got, size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			int e = errno;
			close(fd);
			if (r == 0)
				return proff_err_set(err, PROFF_EFORMAT, path, got, "the file shrank while read");
			errno = e;
			return proff_err_sys(err, PROFF_EIO, path, "cannot read");
		}
		got += (size_t)r;
	}
	close(fd);
	return store_prof_parse_part(buf->p, size, path, want, out, err);
}

/* ---- the store ----------------------------------------------------------------------- */

static int path_of(const local_store *ls, const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "%s/%s", ls->dir, name);
	return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* Every new profile written under its temporary name and synced, then
 * each renamed into place and the directory synced: a file is whole or
 * absent. */
static int local_put(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err)
{
	local_store *ls = s->impl;
	char dir[4096], name[128];
	if (path_of(ls, "profiles", dir, sizeof(dir)))
		return proff_err_set(err, PROFF_EUSAGE, ls->dir, PROFF_NO_OFFSET, "store path too long");
	char (*tmp)[4400] = calloc(n ? n : 1, sizeof(*tmp));
	if (!tmp)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc = 0;
	size_t made = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char fin[4400];
		snprintf(fin, sizeof(fin), "%s/%s.prof", dir, sps[i]->id);
		status[i] = access(fin, F_OK) == 0 ? STORE_PUT_EXISTS : STORE_PUT_NEW;
		for (size_t j = 0; j < i && status[i] == STORE_PUT_NEW; j++)
			if (!strcmp(sps[j]->id, sps[i]->id))
				status[i] = STORE_PUT_EXISTS;      /* the same file twice in one push */
		if (status[i] == STORE_PUT_EXISTS)
			continue;
		snprintf(name, sizeof(name), ".%s.tmp.%ld", sps[i]->id, (long)getpid());
		snprintf(tmp[i], sizeof(tmp[i]), "%s/%s", dir, name);
		FILE *f = fopen(tmp[i], "w");
		if (!f) {
			rc = proff_err_sys(err, PROFF_EIO, tmp[i], "cannot create");
			break;
		}
		made = i + 1;
		if (prof_write(f, sps[i]) || fflush(f) != 0 || fdatasync(fileno(f)) != 0) {
			rc = proff_err_sys(err, PROFF_EIO, tmp[i], "cannot write");
			fclose(f);
			break;
		}
		if (fclose(f) != 0)
			rc = proff_err_sys(err, PROFF_EIO, tmp[i], "cannot write");
	}
	int dfd = rc ? -1 : open(dir, O_RDONLY | O_DIRECTORY);
	if (!rc && dfd < 0)
		rc = proff_err_sys(err, PROFF_EIO, dir, "cannot open");
	for (size_t i = 0; i < n && !rc; i++) {
		if (status[i] != STORE_PUT_NEW)
			continue;
		char fin[4400];
		snprintf(fin, sizeof(fin), "%s/%s.prof", dir, sps[i]->id);
		if (rename(tmp[i], fin) != 0)
			rc = proff_err_sys(err, PROFF_EIO, fin, "cannot rename the new profile into place");
		else
			tmp[i][0] = '\0';
	}
	if (!rc && fsync(dfd) < 0)
		rc = proff_err_sys(err, PROFF_EIO, dir, "cannot sync");
	if (dfd >= 0)
		close(dfd);
	for (size_t i = 0; i < made; i++)
		if (tmp[i][0])
			unlink(tmp[i]);
	free(tmp);
	return rc;
}

/* every stored profile, in id order; the callback may stop with non-zero */
typedef int (*prof_cb)(void *arg, store_prof *sp, proff_error *err);

static int name_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int each_prof(local_store *ls, int want, prof_cb cb, void *arg, proff_error *err)
{
	sbuf buf = { 0 };
	char dir[4096];
	if (path_of(ls, "profiles", dir, sizeof(dir)))
		return proff_err_set(err, PROFF_EUSAGE, ls->dir, PROFF_NO_OFFSET, "store path too long");
	DIR *d = opendir(dir);
	if (!d)
		return proff_err_sys(err, PROFF_EIO, dir, "cannot open the store's profiles");
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (struct dirent *e; (e = readdir(d));) {
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || l != STORE_ID_LEN + 5 || strcmp(e->d_name + STORE_ID_LEN, ".prof"))
			continue;
		if (PF_GROW(names, cap, n + 1) || !(names[n] = strdup(e->d_name))) {
			rc = proff_err_set(err, PROFF_ENOMEM, dir, PROFF_NO_OFFSET, "out of memory");
			break;
		}
		n++;
	}
	closedir(d);
	if (!rc && n)
		qsort(names, n, sizeof(char *), name_cmp);
	for (size_t i = 0; i < n && !rc; i++) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		store_prof *sp;
		rc = prof_read(path, want, &buf, &sp, err);
		if (!rc) {
			rc = cb(arg, sp, err);
			store_prof_free(sp);
		}
	}
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	sbuf_free(&buf);
	return rc;
}

typedef struct query_state {
	const store_query *q;
	store_result *r;
	int ks;                    /* the stored key set of the query, -1: the samples are read */
} query_state;

/* the replicate's name of a profile: its --replicate label's value or its id */
static const char *replicate_of(const store_query *q, const store_prof *sp)
{
	const char *rn = q->replicate ? store_prof_label_value(sp, q->replicate) : sp->id;
	return rn ? rn : "[none]";
}

static int query_one(void *arg, store_prof *sp, proff_error *err)
{
	query_state *qs = arg;
	const store_query *q = qs->q;
	long g = store_group_of(q, sp);
	if (g < 0)
		return 0;
	const char *rn = replicate_of(q, sp);
	long rep = store_result_rep(qs->r, (uint32_t)g, rn, strlen(rn));
	if (rep < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	qs->r->nprofiles++;
	if (qs->ks >= 0)
		return store_result_add_keyrows(qs->r, (size_t)rep, sp, qs->ks, q, err);
	return store_result_add_prof(qs->r, (size_t)rep, sp, q, err);
}

static int local_query(store *s, const store_query *q, store_result *r, proff_error *err)
{
	query_state qs = { q, r, store_keyset_of(q) };
	return each_prof(s->impl, qs.ks >= 0 ? qs.ks : PARSE_ALL, query_one, &qs, err);
}

typedef struct paths_state {
	const store_query *q;
	paths_build *pb;
} paths_state;

static int paths_one(void *arg, store_prof *sp, proff_error *err)
{
	paths_state *ps = arg;
	long g = store_group_of(ps->q, sp);
	if (g < 0)
		return 0;
	const char *rn = replicate_of(ps->q, sp);
	long rep = paths_rep(ps->pb, (uint32_t)g, rn, strlen(rn));
	if (rep < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return paths_add_prof(ps->pb, (size_t)rep, sp, err);
}

static int local_paths(store *s, const store_query *q, paths_build *pb, proff_error *err)
{
	paths_state ps = { q, pb };
	return each_prof(s->impl, PARSE_ALL, paths_one, &ps, err);
}

typedef struct events_state {
	const store_sel *groups;
	size_t ngroups;
	char ***names;
	size_t n;
} events_state;

static int events_one(void *arg, store_prof *sp, proff_error *err)
{
	events_state *es = arg;
	bool any = false;
	for (size_t g = 0; g < es->ngroups && !any; g++)
		any = store_sel_match(&es->groups[g], sp);
	if (!any)
		return 0;
	for (size_t e = 0; e < sp->nr_events; e++)
		if (store_events_add(es->names, &es->n, pf_strtab_get(&sp->strs, sp->events[e].name)))
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
}

static int local_events(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err)
{
	events_state es = { groups, ngroups, names, 0 };
	return each_prof(s->impl, PARSE_HEAD, events_one, &es, err);
}

static int local_init(store *s, const char *cluster, proff_error *err)
{
	return 0;
}

static void local_close(store *s)
{
	local_store *ls = s->impl;
	if (ls)
		free(ls->dir);
	free(ls);
}

static const struct store_ops local_ops = { local_init, local_put, local_query, local_events, local_close, local_paths };

int store_local_open(const char *dir, bool create, store *s, proff_error *err)
{
	local_store *ls = pf_calloc(1, sizeof(*ls));
	if (!ls || !(ls->dir = strdup(dir))) {
		free(ls);
		return proff_err_set(err, PROFF_ENOMEM, dir, PROFF_NO_OFFSET, "out of memory");
	}
	s->ops = &local_ops;
	s->impl = ls;
	char path[4096];
	if (path_of(ls, "PROFF-STORE", path, sizeof(path)))
		return proff_err_set(err, PROFF_EUSAGE, dir, PROFF_NO_OFFSET, "store path too long");
	int fd = open(path, O_RDONLY);
	if (fd >= 0) {
		char buf[32] = "";
		ssize_t n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n >= 0 && !strncmp(buf, "proff store 1\n", 14))
			return proff_err_set(err, PROFF_EFORMAT, path, 0,
					     "a store of an older proff (version 1, no key rows): push the profiles "
					     "again into a new store (docs/fleet.md)");
		if (n < 0 || strncmp(buf, STORE_MAGIC, strlen(STORE_MAGIC)))
			return proff_err_set(err, PROFF_EFORMAT, path, 0, "not a proff store (expected '%.13s')", STORE_MAGIC);
		return 0;
	}
	if (!create)
		return proff_err_set(err, PROFF_ENOENT, dir, PROFF_NO_OFFSET,
				     "no proff store here (proff push creates one)");
	/* a new store: the directory may exist (empty or not), the marker not */
	if (mkdir(dir, 0777) < 0 && errno != EEXIST)
		return proff_err_sys(err, PROFF_EIO, dir, "cannot create the store");
	char pdir[4096];
	path_of(ls, "profiles", pdir, sizeof(pdir));
	if (mkdir(pdir, 0777) < 0 && errno != EEXIST)
		return proff_err_sys(err, PROFF_EIO, pdir, "cannot create");
	char tmp[4200];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	FILE *f = fopen(tmp, "w");
	if (!f)
		return proff_err_sys(err, PROFF_EIO, tmp, "cannot create");
	fputs(STORE_MAGIC, f);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return proff_err_sys(err, PROFF_EIO, path, "cannot create");
	}
	return 0;
}
