/* folded.c — folded stacks, read and written: one line per stack, frames
 * root first separated by ';', a space and a count ("main;foo;bar 123"),
 * as FlameGraph's stackcollapse scripts, py-spy, async-profiler and
 * bpftrace write them.
 *
 * Reading:
 *   - the first frame is the thread when every line's first frame is of
 *     stackcollapse-perf.pl's --pid/--tid form "comm-PID" or
 *     "comm-PID/TID" ('?' for an unknown number) and more frames follow;
 *     otherwise it is an ordinary frame and the stacks have no thread
 *     (comm "[unknown]", pid and tid -1);
 *   - "_[k]" or "[k]" at the end of a frame marks a kernel function (its
 *     dso is [kernel.kallsyms]); a frame that is a bracketed name "[libc.so.6]"
 *     is an unresolved frame of that dso (stackcollapse-perf.pl's form),
 *     "[unknown]" one of no known dso; any other frame is a function of the
 *     dso "[unknown]". Other annotations ("_[j]", "_[i]") stay part of the name;
 *   - the count is the period of the event "folded"; each line counts as
 *     one sample. Lines of equal stacks add up; lines with a zero count are
 *     dropped; blank lines are skipped.
 * Anything else is an error naming the line: no count, a negative,
 * fractional or too large count, two counts (a differential file of
 * difffolded.pl), an empty frame.
 *
 * Writing (pf_folded_write): the same form back, lines sorted as
 * stackcollapse-perf.pl sorts them, so folded -> pprof -> folded gives
 * the same file.
 */
#include "fmt-int.h"

#include <stdlib.h>
#include <string.h>

#define NO_ID UINT32_MAX

typedef struct folded_ctx {
	fmt_build b;
	uint32_t *locs; size_t cap_locs;   /* a line's frames, root first */
	pair_table frame_tab;        /* (dso, name string id) -> location */
	uint32_t *dso_syms;          /* dso -> symbols made in it (their addresses) */
	size_t cap_dso_syms;
	uint32_t dso_unknown, dso_kernel;
	uint32_t no_line;            /* string id of "??:0", NO_ID until needed */
} folded_ctx;

typedef struct fline {
	const char *stack;           /* the frames: [stack, stack_end) */
	const char *stack_end;
	uint64_t count;
} fline;

/* One line (s, n: without its newline) split into frames and count.
 * 0, 1 for a blank line, or an error. */
static int split_line(fmt_build *b, size_t lineno, const char *s, size_t n, fline *out)
{
	if (memchr(s, '\0', n))
		return fmt_err_line(b, lineno, "a NUL byte (not text)");
	while (n && (s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	if (!n)
		return 1;
	size_t sp = n;
	while (sp && s[sp - 1] != ' ' && s[sp - 1] != '\t')
		sp--;
	const char *c = s + sp, *ce = s + n;
	if (!sp)
		return fmt_err_line(b, lineno, "no count at the end of the line (\"stack count\" expected)");
	if (*c == '-')
		return fmt_err_line(b, lineno, "negative count '%.*s'", (int)(ce - c), c);
	uint64_t v = 0;
	for (const char *q = c; q < ce; q++) {
		if (*q < '0' || *q > '9') {
			if (*q == '.' || *q == 'e' || *q == 'E')
				return fmt_err_line(b, lineno, "count '%.*s' is not a whole number", (int)(ce - c), c);
			return fmt_err_line(b, lineno, "no count at the end of the line (found '%.*s')",
					    (int)(ce - c > 40 ? 40 : ce - c), c);
		}
		unsigned dgt = (unsigned)(*q - '0');
		if (v > (UINT64_MAX - dgt) / 10)
			return fmt_err_line(b, lineno, "count '%.*s' is larger than 2^64 - 1", (int)(ce - c), c);
		v = v * 10 + dgt;
	}
	/* a carriage return before the count is blank too: kept in the last
	 * frame, it would be written back as a space and read as no frame */
	size_t e = sp;
	while (e && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\r'))
		e--;
	if (!e)
		return fmt_err_line(b, lineno, "a count without frames");
	/* "stack 12 34": difffolded.pl's two columns */
	size_t k = e;
	while (k && s[k - 1] >= '0' && s[k - 1] <= '9')
		k--;
	if (k < e && k && (s[k - 1] == ' ' || s[k - 1] == '\t'))
		return fmt_err_line(b, lineno, "two counts (a differential file of difffolded.pl?): "
				    "compare the two profiles with proff diff instead");
	out->stack = s;
	out->stack_end = s + e;
	out->count = v;
	return 0;
}

/* "comm-PID" or "comm-PID/TID" ('?' for a number not known) */
static bool thread_frame(const char *f, size_t n, size_t *comm_len, uint32_t *pid, uint32_t *tid)
{
	size_t slash = n, dash;
	for (size_t i = n; i-- > 0;)
		if (f[i] == '/') {
			slash = i;
			break;
		}
	for (dash = slash; dash-- > 0;)
		if (f[dash] == '-')
			break;
	if (dash >= slash || !dash)
		return false;
	uint64_t v[2] = { PF_NONE, PF_NONE };
	const char *part[2] = { f + dash + 1, slash < n ? f + slash + 1 : NULL };
	size_t plen[2] = { slash - dash - 1, slash < n ? n - slash - 1 : 0 };
	for (int j = 0; j < 2; j++) {
		if (!part[j])
			continue;
		if (plen[j] == 1 && part[j][0] == '?')
			continue;
		if (!plen[j] || plen[j] > 10)
			return false;
		uint64_t x = 0;
		for (size_t i = 0; i < plen[j]; i++) {
			if (part[j][i] < '0' || part[j][i] > '9')
				return false;
			x = x * 10 + (uint64_t)(part[j][i] - '0');
		}
		if (x >= PF_NONE)
			return false;
		v[j] = x;
	}
	*comm_len = dash;
	*pid = (uint32_t)v[0];
	*tid = (uint32_t)v[1];
	return true;
}

/* The location of one frame's text */
static uint32_t frame_loc(folded_ctx *c, const char *f, size_t n)
{
	fmt_build *b = &c->b;
	uint32_t dso = c->dso_unknown;
	char level = '.';
	if (n >= 4 && !memcmp(f + n - 4, "_[k]", 4)) {
		n -= 4;
		level = 'k';
	} else if (n >= 3 && !memcmp(f + n - 3, "[k]", 3) && n > 3) {
		n -= 3;
		while (n && f[n - 1] == ' ')
			n--;
		level = 'k';
	}
	if (level == 'k') {
		if (c->dso_kernel == NO_ID && (c->dso_kernel = fmt_dso(b, "[kernel.kallsyms]", 17, NULL, 0)) == PF_NONE)
			return PF_NONE;
		dso = c->dso_kernel;
	} else if (n > 2 && f[0] == '[' && f[n - 1] == ']' && (n != 9 || memcmp(f, "[unknown]", 9))) {
		/* stackcollapse-perf.pl's "[dso]" ("[[kernel.kallsyms]]" for the kernel) */
		const char *in = f + 1;
		size_t inl = n - 2;
		if ((inl == 17 && !memcmp(in, "[kernel.kallsyms]", 17)) || (inl == 15 && !memcmp(in, "kernel.kallsyms", 15))) {
			in = "[kernel.kallsyms]";
			inl = 17;
		}
		dso = fmt_dso(b, in, inl, NULL, 0);
		if (dso == PF_NONE)
			return PF_NONE;
	}
	int64_t name = fmt_str(b, f, n);
	if (name < 0)
		return PF_NONE;
	int inserted;
	uint32_t *slot = pair_table_find(&c->frame_tab, dso, (uint64_t)name, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	/* a symbol of its own, at an address of its own in its dso (in the
	 * order of first appearance) */
	pf_profile *p = b->p;
	if (PF_GROW(c->dso_syms, c->cap_dso_syms, p->nr_dsos) < 0)
		return PF_NONE;
	uint64_t start = ((uint64_t)++c->dso_syms[dso]) << 4;
	uint32_t sym = fmt_sym(b, dso, (uint64_t)name, (uint32_t)name, start, start + 16, NULL);
	/* a folded stack names functions, not lines: every frame's source line
	 * is perf's unknown one, the same in every file (an address made up
	 * here would be a line that differs from one file to the next) */
	if (c->no_line == NO_ID) {
		int64_t id = fmt_str(b, "??:0", 4);
		if (id < 0)
			return PF_NONE;
		c->no_line = (uint32_t)id;
	}
	uint32_t loc = sym == PF_NONE ? PF_NONE : fmt_loc(b, dso, sym, start, start, level, c->no_line);
	/* the slot again: fmt_dso and fmt_sym do not touch frame_tab */
	*pair_table_find(&c->frame_tab, dso, (uint64_t)name, 0, NULL) = loc == PF_NONE ? 0 : loc;
	return loc;
}

static int folded_parse(folded_ctx *c, const uint8_t *data, size_t len)
{
	fmt_build *b = &c->b;
	const char *d = (const char *)data, *end = d + len;
	/* pass 1: do all lines start with a thread frame? */
	bool threads = true;
	size_t lines = 0, lineno = 0;
	for (const char *s = d; s < end && threads;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		fline fl;
		lineno++;
		int r = split_line(b, lineno, s, (size_t)(le - s), &fl);
		if (r < 0)
			return r;
		if (r == 0) {
			lines++;
			const char *semi = memchr(fl.stack, ';', (size_t)(fl.stack_end - fl.stack));
			size_t cl;
			uint32_t pid, tid;
			threads = semi && thread_frame(fl.stack, (size_t)(semi - fl.stack), &cl, &pid, &tid);
		}
		s = nl ? nl + 1 : end;
	}
	if (!lines)
		return fmt_err_at(b, 0, "no stacks (an empty folded file)");
	int64_t unknown = fmt_str(b, "[unknown]", 9);
	if (unknown < 0)
		return fmt_oom(b);
	uint32_t none_thread = threads ? PF_NONE : fmt_thread(b, PF_NONE, PF_NONE, (uint32_t)unknown, 0);
	if (!threads && none_thread == PF_NONE)
		return fmt_oom(b);
	/* pass 2: the stacks */
	lineno = 0;
	for (const char *s = d; s < end;) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *le = nl ? nl : end;
		fline fl;
		lineno++;
		int r = split_line(b, lineno, s, (size_t)(le - s), &fl);
		s = nl ? nl + 1 : end;
		if (r < 0)
			return r;
		if (r == 1)
			continue;
		const char *f = fl.stack;
		uint32_t thread = none_thread;
		if (threads) {
			const char *semi = memchr(f, ';', (size_t)(fl.stack_end - f));
			size_t cl;
			uint32_t pid, tid;
			thread_frame(f, (size_t)(semi - f), &cl, &pid, &tid);
			int64_t comm = fmt_str(b, f, cl);
			if (comm < 0 || (thread = fmt_thread(b, pid, tid, (uint32_t)comm, 0)) == PF_NONE)
				return fmt_oom(b);
			f = semi + 1;
		}
		size_t nf = 0;
		for (;;) {
			const char *semi = memchr(f, ';', (size_t)(fl.stack_end - f));
			const char *fe = semi ? semi : fl.stack_end;
			if (fe == f)
				return fmt_err_line(b, lineno, "an empty frame (';;' or ';' at an end)");
			uint32_t loc = frame_loc(c, f, (size_t)(fe - f));
			if (loc == PF_NONE || PF_GROW(c->locs, c->cap_locs, nf + 1) < 0)
				return fmt_oom(b);
			c->locs[nf++] = loc;
			if (!semi)
				break;
			f = semi + 1;
		}
		uint32_t node = fmt_path(b, c->locs, nf);
		if (node == PF_NONE)
			return fmt_oom(b);
		if (fl.count && (r = fmt_sample(b, thread, PF_NONE, node, fl.count, 1)) < 0)
			return r == FMT_OVERFLOW ? fmt_err_line(b, lineno, "the counts of this stack add up to more than 2^64 - 1") : r;
	}
	return 0;
}

int fmt_folded_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		    pf_profile **out, proff_error *err)
{
	*out = NULL;
	folded_ctx c;
	memset(&c, 0, sizeof(c));
	c.dso_kernel = NO_ID;
	c.no_line = NO_ID;
	int rc = fmt_build_init(&c.b, name, "folded", "count", opts, err);
	if (rc < 0)
		return rc;
	if (opts && opts->time_spec) {
		rc = fmt_err_at(&c.b, PROFF_NO_OFFSET, "--time: folded stacks have no sample times");
		goto fail;
	}
	if (opts && opts->label_filter) {
		rc = proff_err_set(err, PROFF_EUSAGE, name, PROFF_NO_OFFSET, "--label: folded stacks have no labels");
		goto fail;
	}
	if ((c.dso_unknown = fmt_dso(&c.b, "[unknown]", 9, NULL, 0)) == PF_NONE) {
		rc = fmt_oom(&c.b);
		goto fail;
	}
	if ((rc = folded_parse(&c, data, len)) < 0)
		goto fail;
	pair_table_free(&c.frame_tab);
	free(c.dso_syms);
	free(c.locs);
	*out = fmt_build_finish(&c.b);
	return 0;
fail:
	pair_table_free(&c.frame_tab);
	free(c.dso_syms);
	free(c.locs);
	fmt_build_abort(&c.b);
	return rc;
}

int pf_folded_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		   pf_profile **out, proff_error *err)
{
	fmt_input unz;
	int rc = fmt_gunzip(data, len, name, &unz, err);
	if (rc < 0)
		return rc;
	if (rc == 1)
		rc = fmt_folded_read(unz.data, unz.len, name, opts, out, err);
	else
		rc = fmt_folded_read(data, len, name, opts, out, err);
	fmt_input_free(&unz);
	return rc;
}

/* ---- writing ------------------------------------------------------------------------ */

typedef struct oline {
	char *text;                  /* the stack, NUL-terminated */
	uint64_t period;
} oline;

typedef struct sbuf {
	char *s;
	size_t n, cap;
} sbuf;

static int sb_put(sbuf *b, const char *s, size_t n)
{
	if (PF_GROW(b->s, b->cap, b->n + n + 1) < 0)
		return -1;
	memcpy(b->s + b->n, s, n);
	b->n += n;
	b->s[b->n] = '\0';
	return 0;
}

/* A name as a frame: ';' separates frames and a line ends the stack */
static int sb_name(sbuf *b, const char *s, bool spaces)
{
	size_t at = b->n;
	if (sb_put(b, s, strlen(s)) < 0)
		return -1;
	for (size_t i = at; i < b->n; i++) {
		char ch = b->s[i];
		if (ch == ';')
			b->s[i] = ':';
		else if (ch == '\n' || ch == '\r')
			b->s[i] = ' ';
		if (spaces && b->s[i] == ' ')
			b->s[i] = '_';
	}
	return 0;
}

static int frame_text_raw(const pf_profile *p, uint32_t loc, sbuf *b);

/* A frame's text, readable back as one frame: never empty, and never
 * ending in a space and digits (a count to the reader) */
static int frame_text(const pf_profile *p, uint32_t loc, sbuf *b)
{
	size_t at = b->n;
	if (frame_text_raw(p, loc, b) < 0)
		return -1;
	if (b->n == at)
		return sb_put(b, "[unknown]", 9);
	size_t e = b->n;
	while (e > at && b->s[e - 1] >= '0' && b->s[e - 1] <= '9')
		e--;
	if (e > at && e < b->n && (b->s[e - 1] == ' ' || b->s[e - 1] == '\t'))
		b->s[e - 1] = '_';
	return 0;
}

static int frame_text_raw(const pf_profile *p, uint32_t loc, sbuf *b)
{
	const pf_loc *l = &p->locs[loc];
	const pf_dso *d = l->dso != PF_NONE ? &p->dsos[l->dso] : NULL;
	bool kernel = l->level == 'k';
	if (l->sym != PF_NONE) {
		if (sb_name(b, pf_str(p, p->syms[l->sym].name), false) < 0)
			return -1;
	} else {
		/* stackcollapse-perf.pl's form of a frame without a symbol */
		if (sb_put(b, "[", 1) < 0 || sb_name(b, d ? pf_str(p, d->short_name) : "unknown", false) < 0 ||
		    sb_put(b, "]", 1) < 0)
			return -1;
		return 0;
	}
	return kernel ? sb_put(b, "_[k]", 4) : 0;
}

static void put_num(sbuf *b, uint32_t v, int *rc)
{
	char t[16];
	int n = v == PF_NONE ? snprintf(t, sizeof(t), "?") : snprintf(t, sizeof(t), "%u", v);
	if (sb_put(b, t, (size_t)n) < 0)
		*rc = -1;
}

static int oline_cmp(const void *x, const void *y)
{
	return strcmp(((const oline *)x)->text, ((const oline *)y)->text);
}

int pf_folded_write(const pf_profile *p, FILE *out, const pf_write_opts *o, proff_error *err)
{
	int ev = o ? o->evsel : -1;
	if (ev < 0) {
		ev = 0;
		for (size_t i = 0; i < p->nr_events; i++)
			if (p->events[i].nr_samples) {
				ev = (int)i;
				break;
			}
	}
	if ((size_t)ev >= p->nr_events && p->nr_events)
		return proff_err_set(err, PROFF_EUSAGE, p->path, PROFF_NO_OFFSET, "no event %d", ev);
	/* do the stacks know their threads? */
	int64_t unknown = -1;
	for (size_t i = 1; i < p->strs.n && unknown < 0; i++)
		if (!strcmp(p->strs.strs[i], "[unknown]"))
			unknown = (int64_t)i;
	bool threads = false;
	for (size_t i = 0; i < p->nr_samples && !threads; i++) {
		const pf_sample *s = &p->samples[i];
		threads = s->evsel == (uint32_t)ev &&
			  (s->pid != PF_NONE || s->tid != PF_NONE || (int64_t)s->comm != unknown);
	}
	oline *lines = NULL;
	size_t nl = 0, capl = 0;
	sbuf b = { 0 };
	uint32_t *path = NULL;
	size_t cap_path = 0;
	int rc = 0;
	for (size_t i = 0; i < p->nr_samples && rc == 0; i++) {
		const pf_sample *s = &p->samples[i];
		if (s->evsel != (uint32_t)ev || !s->period || s->stack == 0)
			continue;
		b.n = 0;
		if (threads) {
			sb_name(&b, pf_str(p, s->comm), true);
			sb_put(&b, "-", 1);
			put_num(&b, s->pid, &rc);
			if (s->tid != PF_NONE) {
				sb_put(&b, "/", 1);
				put_num(&b, s->tid, &rc);
			}
			sb_put(&b, ";", 1);
		}
		size_t depth = 0;
		for (uint32_t n = s->stack; n; n = p->nodes[n].parent) {
			if (PF_GROW(path, cap_path, depth + 1) < 0) {
				rc = -1;
				break;
			}
			path[depth++] = p->nodes[n].loc;
		}
		for (size_t k = depth; k-- > 0 && rc == 0;) {
			if (frame_text(p, path[k], &b) < 0 || (k && sb_put(&b, ";", 1) < 0))
				rc = -1;
		}
		char *t = rc == 0 && b.s ? strdup(b.s) : NULL;
		if (!t || PF_GROW(lines, capl, nl + 1) < 0) {
			free(t);
			rc = -1;
			break;
		}
		lines[nl++] = (oline){ t, s->period };
	}
	int err_code = 0;
	if (rc == 0 && !nl)
		err_code = PROFF_EUSAGE;         /* no stack with a period */
	if (rc == 0 && nl) {
		qsort(lines, nl, sizeof(*lines), oline_cmp);
		for (size_t i = 0; i < nl && !err_code;) {
			size_t j = i + 1;
			uint64_t sum = lines[i].period;
			while (j < nl && !strcmp(lines[j].text, lines[i].text)) {
				if (lines[j].period > UINT64_MAX - sum)
					err_code = PROFF_ENOTSUP;
				sum += lines[j++].period;
			}
			if (!err_code)
				fprintf(out, "%s %llu\n", lines[i].text, (unsigned long long)sum);
			i = j;
		}
	}
	for (size_t i = 0; i < nl; i++)
		free(lines[i].text);
	free(lines);
	free(b.s);
	free(path);
	if (rc < 0)
		return proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
	if (err_code == PROFF_EUSAGE)
		return proff_err_set(err, err_code, p->path, PROFF_NO_OFFSET, "no samples to write");
	if (err_code)
		return proff_err_set(err, err_code, p->path, PROFF_NO_OFFSET,
				     "the periods of one folded stack add up to more than 2^64 - 1");
	return 0;
}
