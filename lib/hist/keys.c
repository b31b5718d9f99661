/* keys.c — the sort keys' catalogue: one hist_key_def per key (its name,
 * header, what it needs, the words that make a row's identity, perf's
 * comparators, width, printer and diff value), as perf's util/sort.c has
 * one sort_entry per key. The engine (hist.c, perforder.c), the diff,
 * the printers and the CLI iterate it; adding a key is one entry here
 * and its functions (docs/architecture.md, "How to add a sort key"). */
#include <stdlib.h>
#include <string.h>

#include "keys.h"
#include "proff/perfdata.h"

/* ---- display helpers ---------------------------------------------------------- */

const char *hist_dso_name(const hist *h, const hist_entry *e)
{
	if (e->dso == PF_NONE)
		return NULL;
	const pf_dso *d = &h->prof->dsos[e->dso];
	return pf_str(h->prof, h->opts.verbose ? d->long_name : d->short_name);
}

const char *hist_sym_name(const hist *h, const hist_entry *e)
{
	if (e->sym == PF_NONE)
		return NULL;
	return pf_str(h->prof, h->prof->syms[e->sym].name);
}

static int cmp_null(const void *l, const void *r)
{
	if (!l && !r)
		return 0;
	return !l ? 1 : -1;     /* NULL sorts after non-NULL */
}

static int cmp_str(const char *a, const char *b)
{
	if (!a || !b)
		return cmp_null(a, b);
	return strcmp(a, b);
}

static int cmp_u64(uint64_t a, uint64_t b) { return a < b ? -1 : a > b; }

/* Copy s into buf replacing the field separator by '.' (perf's repsep). */
static int put_name(char *buf, size_t len, const char *s, int maxw, char sep)
{
	size_t n = strlen(s);
	if (maxw > 0 && n > (size_t)maxw)
		n = (size_t)maxw;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	if (sep)
		for (char *c = memchr(buf, sep, n); c; c = memchr(c + 1, sep, n - (size_t)(c + 1 - buf)))
			*c = '.';
	buf[n] = '\0';
	return (int)n;
}

static int pad_to(char *buf, size_t len, int n, int width, bool pad)
{
	if (!pad)
		return n;
	int upto = width < 0 ? 0 : (size_t)width + 1 < len ? width : (int)len - 1;
	if (n < upto) {
		memset(buf + n, ' ', (size_t)(upto - n));
		n = upto;
	}
	buf[n] = '\0';
	return n;
}

/* ---- sort keys --------------------------------------------------------------- */

static int k_comm_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(pf_str(h->prof, a->comm), pf_str(h->prof, b->comm));
}
/* perf sizes comm columns by the last comm of the row's thread */
static size_t thread_comm_len(const hist *h, const hist_entry *e)
{
	if (e->thread < h->prof->nr_threads)
		return strlen(pf_str(h->prof, h->prof->threads[e->thread].comm));
	return strlen(pf_str(h->prof, e->comm));
}
static size_t k_comm_width(const hist *h, const hist_entry *e) { return thread_comm_len(h, e); }
static int k_comm_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, pf_str(h->prof, e->comm), width, sep);
	return pad_to(buf, len, n, width, true);
}

static int k_pid_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	/* perf compares tids as ints: -1 (a sample no task owned) first */
	int32_t x = (int32_t)a->tid, y = (int32_t)b->tid;
	return x < y ? -1 : x > y;
}
static size_t k_pid_width(const hist *h, const hist_entry *e) { return thread_comm_len(h, e) + 8; }
static int k_pid_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	/* perf: "%7d:%-*.*s" with the comm padded to width - 8; the comm is
	 * the thread's last one (a row's first sample may predate a rename) */
	char tmp[600];
	int cw = width > 8 ? width - 8 : 0;
	uint32_t comm = e->thread < h->prof->nr_threads ? h->prof->threads[e->thread].comm : e->comm;
	snprintf(tmp, sizeof(tmp), "%7d:%-*.*s", (int32_t)e->tid, cw, cw ? cw : 512, pf_str(h->prof, comm));
	int n = put_name(buf, len, tmp, 0, sep);
	return pad_to(buf, len, n, width, true);
}

static int k_dso_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return cmp_str(hist_dso_name(h, a), hist_dso_name(h, b));
}
static size_t k_dso_width(const hist *h, const hist_entry *e)
{
	const char *n = hist_dso_name(h, e);
	return strlen(n ? n : "[unknown]");
}
static int k_dso_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	const char *nm = hist_dso_name(h, e);
	int n = put_name(buf, len, nm ? nm : "[unknown]", width, sep);
	return pad_to(buf, len, n, width, true);   /* perf pads the dso column even when last */
}

static int k_sym_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	/* output order: by name; unresolved after resolved; unresolved by address */
	const char *na = hist_sym_name(h, a), *nb = hist_sym_name(h, b);
	if (!na || !nb) {
		if (!na && !nb)
			return cmp_u64(a->addr, b->addr);
		return cmp_null(na, nb);
	}
	return strcmp(na, nb);
}
/* perf's sort__sym_cmp, which pairs a group member's rows with the
 * leader's: the dso first (two dsos' symbols of one name, the executable's
 * _start and the dynamic linker's, are two rows), then the symbol's start
 * and end; an inlined one by its name (perf: and overlapping ranges);
 * unresolved rows by address alone. The diff pairs by name (cmp). */
static int k_sym_match(const hist *h, const hist_entry *a, const hist_entry *b)
{
	if (h->opts.diff_mode)
		return k_sym_cmp(h, a, b);
	if (a->sym == PF_NONE && b->sym == PF_NONE)
		return cmp_u64(a->addr, b->addr);
	int c = cmp_str(hist_dso_name(h, a), hist_dso_name(h, b));
	if (c)
		return c;
	if (a->sym == PF_NONE || b->sym == PF_NONE)
		return cmp_null(a->sym == PF_NONE ? NULL : a, b->sym == PF_NONE ? NULL : b);
	const pf_profile *p = h->prof;
	const pf_sym *x = &p->syms[a->sym], *y = &p->syms[b->sym];
	if (pf_sym_is_inlined(p, a->sym) || pf_sym_is_inlined(p, b->sym)) {
		if ((c = strcmp(hist_sym_name(h, a), hist_sym_name(h, b))) != 0)
			return c;
	}
	if (x->start != y->start)
		return cmp_u64(x->start, y->start);
	return cmp_u64(x->end, y->end);
}
static size_t k_sym_width(const hist *h, const hist_entry *e)
{
	size_t w;
	if (e->sym != PF_NONE) {
		w = strlen(hist_sym_name(h, e)) + 4;
		/* perf sizes the column by the symbol's name; an inlined
		 * frame's " (inlined)" is printed after it, not counted */
		if (pf_sym_is_inlined(h->prof, e->sym))
			w -= sizeof(" (inlined)") - 1;
		/* -v's address and origin, counted for a named row only (perf) */
		if (h->opts.verbose)
			w += 16 + 2 + 3;
	} else {
		w = 16 + 4 + 2;
	}
	return w;
}
/* -v's address: the row's, but perf turns a module's back into a runtime
 * address when the symbols came from its .ko (map start - .text offset
 * added, to a callchain row's raw ip too, as perf does) */
static uint64_t verbose_addr(const hist *h, const hist_entry *e)
{
	if (e->dso == PF_NONE)
		return e->addr;
	const pf_dso *d = &h->prof->dsos[e->dso];
	uint64_t pgoff = d->kind == SYM_DSO_MODULE && d->has_kmod_start && d->sd ? sym_dso_kmod_pgoff(d->sd) : 0;
	return pgoff ? e->addr + d->kmod_start - pgoff : e->addr;
}
static int k_sym_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = 0;
	if (h->opts.verbose) {
		char o = '!';     /* perf: no map */
		if (e->dso != PF_NONE)
			o = h->prof->dsos[e->dso].sd ? sym_dso_origin(h->prof->dsos[e->dso].sd) : ' ';
		n = snprintf(buf, len, "%-#*llx %c ", 18, (unsigned long long)verbose_addr(h, e), o);
		if (n < 0 || (size_t)n >= len)
			return (int)len - 1;
	}
	if ((size_t)n + 4 < len) {            /* "[%c] " without printf: one per row */
		buf[n] = '[';
		buf[n + 1] = e->level;
		buf[n + 2] = ']';
		buf[n + 3] = ' ';
		buf[n + 4] = '\0';
		n += 4;
	}
	const char *nm = hist_sym_name(h, e);
	if (nm) {
		/* perf cuts the name at the column, then adds " (inlined)" */
		int w = width + (e->sym != PF_NONE && pf_sym_is_inlined(h->prof, e->sym) ? (int)sizeof(" (inlined)") - 1 : 0);
		n += put_name(buf + n, len - (size_t)n, nm, w - n >= 0 ? w - n : 0, sep);
	} else {
		/* printf's "%#.16llx": sixteen digits, "0x" before all but zero */
		char tmp[24], *t = tmp;
		uint64_t a = e->addr;
		if (a) {
			*t++ = '0';
			*t++ = 'x';
		}
		for (int sh = 60; sh >= 0; sh -= 4)
			*t++ = "0123456789abcdef"[(a >> sh) & 15];
		*t = '\0';
		/* never cut (perf's "%-#.*llx"): -v's prefix is not in the width */
		n += put_name(buf + n, len - (size_t)n, tmp, 0, sep);
	}
	return pad_to(buf, len, n, width, pad);
}

static int k_cpu_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return a->cpu < b->cpu ? -1 : a->cpu > b->cpu;
}
static size_t k_cpu_width(const hist *h, const hist_entry *e) { return 3; }
static int k_cpu_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = snprintf(buf, len, "%*.*d", width, width, e->cpu == PF_NONE ? -1 : (int)e->cpu);
	return n;
}

static int k_parent_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	const char *pa = a->parent ? pf_str(h->prof, a->parent) : NULL;
	const char *pb = b->parent ? pf_str(h->prof, b->parent) : NULL;
	return cmp_str(pa, pb);
}
static size_t k_parent_width(const hist *h, const hist_entry *e)
{
	return e->parent ? strlen(pf_str(h->prof, e->parent)) : 7;
}
static int k_parent_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, e->parent ? pf_str(h->prof, e->parent) : "[other]", width, sep);
	return pad_to(buf, len, n, width, true);
}

static int k_srcline_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(pf_str(h->prof, a->srcline), pf_str(h->prof, b->srcline));
}
static size_t k_srcline_width(const hist *h, const hist_entry *e) { return strlen(pf_str(h->prof, e->srcline)); }
static int k_srcline_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, pf_str(h->prof, e->srcline), width, sep);
	return pad_to(buf, len, n, width, pad);
}

/* label:NAME — the value of a pprof label of the row's samples (their
 * thread carries the label set: pf_profile.thread_labels) */
static const char *label_text(const hist *h, uint32_t thread)
{
	uint32_t v = h->label_key == PF_NONE ? PF_NONE : pf_label_value(h->prof, thread, h->label_key);
	return v == PF_NONE ? "[none]" : pf_str(h->prof, v);
}
static int k_label_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(label_text(h, a->thread), label_text(h, b->thread));
}
static size_t k_label_width(const hist *h, const hist_entry *e) { return strlen(label_text(h, e->thread)); }
static int k_label_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, label_text(h, e->thread), width, sep);
	return pad_to(buf, len, n, width, pad);
}

/* ---- the keys' row identity, perf's comparators and diff values --------------- */

static void w_comm(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = c->s->comm; w[1] = 0; }
static int64_t p_comm(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return rcmp(c->tn[ri].comm, c->tn[li].comm);
}
static void v_comm(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = pf_str(h->prof, e->comm); }

static void w_pid(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = c->s->tid; w[1] = c->s->pid; }
static int64_t p_pid(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return (int64_t)(int32_t)full(c, ri)->tid - (int32_t)full(c, li)->tid;   /* as ints: -1 first */
}
static void v_pid(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = e->tid; v->n2 = e->pid; }

static void w_dso(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[c->loc];
	w[0] = l->dso == PF_NONE ? UINT64_MAX : (h->opts.verbose ? p->dsos[l->dso].long_name : p->dsos[l->dso].short_name);
	w[1] = 0;
}
static int64_t p_dso(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return dso_cmp(&c->tn[li], &c->tn[ri]);
}
static void v_dso(const hist *h, const hist_entry *e, hist_key_value *v)
{
	v->s = e->dso == PF_NONE ? NULL : hist_dso_name(h, e);
}

static void w_sym(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[c->loc];
	uint64_t a, b;
	if (h->opts.diff_mode) {
		/* the diff pairs rows by name: every unresolved frame is one
		 * row. Without Children the no-map ips are an entry of their own
		 * (the row's level and address come from the entries as perf
		 * diff makes them); with Children one entry, or a sample with
		 * both kinds of frame would count twice in the row */
		a = l->sym == PF_NONE ? 0 : p->syms[l->sym].name;
		b = a || h->opts.children ? 0 : (l->dso == PF_NONE ? 1 : 0);
	} else if (l->sym != PF_NONE && pf_sym_is_inlined(p, l->sym)) {
		/* perf: an inlined symbol's row is one per name and
		 * overlapping range (the real symbol's) */
		a = p->syms[l->sym].start;
		b = (uint64_t)p->syms[l->sym].name | (1ULL << 62) | ((uint64_t)l->dso << 32);
	} else if (l->sym != PF_NONE) {
		/* perf: dso name, then symbol start and end */
		a = p->syms[l->sym].start;
		b = (p->syms[l->sym].end & 0xffffffffffULL) |
		    ((uint64_t)p->dsos[l->dso].short_name << 40) | (1ULL << 63);
	} else {
		a = hist_row_addr(l, hist_row_raw_addr(p, c->s, c->chain));
		b = 0;
	}
	w[0] = a;
	w[1] = b;
}
static int64_t p_sym(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	const rbn *l = &c->tn[li], *r = &c->tn[ri];
	if (c->h->opts.diff_mode && stage > 0)
		return sym_sort(l, r);
	return stage == 2 ? sym_sort(l, r) : sym_cmp(l, r);
}
static void v_sym(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = hist_sym_name(h, e); }

static void w_cpu(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = c->s->cpu; w[1] = 0; }
static int64_t p_cpu(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return (int64_t)full(c, ri)->cpu - (int64_t)full(c, li)->cpu;
}
static void v_cpu(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = e->cpu; }

static void w_parent(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = c->parent; w[1] = 0; }
static int64_t p_parent(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	uint32_t lp = full(c, li)->parent, rp = full(c, ri)->parent;
	if (lp == NONE_R || rp == NONE_R)
		return null_cmp(lp == NONE_R, rp == NONE_R);
	return rcmp(rp, lp);
}
static void v_parent(const hist *h, const hist_entry *e, hist_key_value *v)
{
	v->s = e->parent ? pf_str(h->prof, e->parent) : "[other]";
}

static void w_srcline(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	/* made before the rows (HKN_SRCLINE: hist_srclines, hist_build checks) */
	w[0] = h->prof->locs[c->loc].srcline;
	w[1] = 0;
}
static void f_srcline(const hist *h, const hist_key_src *c, hist_entry *e) { e->srcline = h->prof->locs[c->loc].srcline; }
static int64_t p_srcline(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* perf 6.1: one comparator for every stage, strings computed on use */
	replay_mark(c, slot, li, ri);
	return rcmp(full(c, ri)->srcline, full(c, li)->srcline);
}
static void v_srcline(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = pf_str(h->prof, e->srcline); }

static void w_label(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	w[0] = pf_label_value(h->prof, c->s->thread, h->label_key);
	w[1] = 0;
}
static int64_t p_label(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* not a perf key: the values' text, as the key's comparator */
	const hist *h = c->h;
	return strcmp(label_text(h, full(c, ri)->thread), label_text(h, full(c, li)->thread));
}
static void v_label(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = label_text(h, e->thread); }

/* srcfile — perf's source file key: the file of the location's srcline
 * (perf asks addr2line for the line and keeps what is before its ':'),
 * empty where there is none (no line: "sym+off", "dso[addr]", "??:0") */
enum { HK_SRCFILE = HK__NAMED };

static int key_slot(const hist *h, int id)
{
	for (int i = 0; i < h->nkeys; i++)
		if (h->keys[i] == id)
			return i;
	return -1;
}

/* The length of the file part of srcline s, 0 for none */
static size_t srcfile_len(const char *s)
{
	const char *colon = strchr(s, ':');
	size_t n = 0;
	if (colon && colon != s && strcmp(s, "??:0")) {
		const char *last = strrchr(s, ':');
		bool line = last[1] != '\0';
		for (const char *d = last + 1; *d; d++)
			line &= *d >= '0' && *d <= '9';
		n = line ? (size_t)(colon - s) : 0;
	}
	return n;
}

int hist_srcfile_names(pf_profile *prof)
{
	for (size_t i = 0; i < prof->nr_locs; i++) {
		if (prof->locs[i].srcline == PF_NONE)
			continue;
		const char *s = pf_str(prof, prof->locs[i].srcline);
		if (pf_strtab_intern(&prof->strs, s, srcfile_len(s)) < 0)
			return -1;
	}
	return 0;
}

/* the srcfile string id of location loc (its name made with the srclines,
 * hist_srcfile_names; PF_NONE: none) */
static uint32_t srcfile_find(const hist *h, uint32_t loc)
{
	uint32_t sl = h->prof->locs[loc].srcline;
	const char *s = sl != PF_NONE ? pf_str(h->prof, sl) : "";
	int64_t id = pf_strtab_find(&h->prof->strs, s, srcfile_len(s));
	return id < 0 ? PF_NONE : (uint32_t)id;
}
static uint32_t srcfile_of(const hist *h, uint32_t loc)
{
	uint32_t *v = h->loc_value[key_slot(h, HK_SRCFILE)];
	if (v[loc] == PF_NONE) {
		uint32_t id = srcfile_find(h, loc);
		v[loc] = id == PF_NONE ? 0 : id;
	}
	return v[loc];
}
static int prep_srcfile(hist *h, int slot, proff_error *err)
{
	size_t n = h->prof->nr_locs ? h->prof->nr_locs : 1;
	h->loc_value[slot] = malloc(n * sizeof(uint32_t));
	if (!h->loc_value[slot])
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	memset(h->loc_value[slot], 0xff, n * sizeof(uint32_t));    /* PF_NONE: not made yet */
	/* the values of every location whose srcline is made (before perf's
	 * input tree ranks the strings, in tree mode) */
	for (size_t i = 0; i < h->prof->nr_locs; i++) {
		if (h->prof->locs[i].srcline == PF_NONE)
			continue;
		if ((h->loc_value[slot][i] = srcfile_find(h, (uint32_t)i)) == PF_NONE)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "srcfile: the source files' names are not made (hist_srclines before hist_build)");
	}
	return 0;
}
static const char *srcfile_text(const hist *h, const hist_entry *e) { return pf_str(h->prof, srcfile_of(h, e->loc)); }
static void w_srcfile(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = srcfile_of(h, c->loc); w[1] = 0; }
static int k_srcfile_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(srcfile_text(h, a), srcfile_text(h, b));
}
static int64_t p_srcfile(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* perf 6.1: sort__srcfile_cmp for every stage, computed on use */
	replay_mark(c, slot, li, ri);
	int g = replay_gen_index(c->h, slot);
	uint64_t l = full(c, li)->gen[g], r = full(c, ri)->gen[g];
	return r < l ? -1 : r > l;
}
static uint64_t pv_srcfile(const hist *h, const hist_entry *e) { return srcfile_of(h, e->loc); }
static size_t k_srcfile_width(const hist *h, const hist_entry *e) { return strlen(srcfile_text(h, e)); }
static int k_srcfile_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, srcfile_text(h, e), width, sep);   /* cut to the width */
	return pad_to(buf, len, n, width, pad);                        /* padded but when last */
}
static void v_srcfile(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = srcfile_text(h, e); }

/* sample, period — perf's hpp columns as sort keys: the row's Self sample
 * count and period, right-aligned in 12 columns. They split no row (their
 * words are constant), compare nothing in perf's input and collapse trees,
 * and order rows by their value in its output tree (after the Overhead
 * perf puts first). */
enum { HK_SAMPLE = HK__NAMED + 1, HK_PERIOD = HK__NAMED + 2 };

static void w_none(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = w[1] = 0; }
static void v_none(const hist *h, const hist_entry *e, hist_key_value *v) { (void)e; }
static int64_t p_hpp(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	if (stage < 2)
		return 0;          /* perf's hpp__nop_cmp */
	int g = replay_gen_index(c->h, slot);
	uint64_t l = full(c, li)->gen[g], r = full(c, ri)->gen[g];
	return l > r ? 1 : l < r ? -1 : 0;
}
static size_t k_hpp_width(const hist *h, const hist_entry *e) { return 12; }
static int put_u64(char *buf, size_t len, uint64_t v, int width)
{
	int n = snprintf(buf, len, "%*llu", width, (unsigned long long)v);
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}

static int k_sample_cmp(const hist *h, const hist_entry *a, const hist_entry *b) { return -(a->nr_events > b->nr_events) + (a->nr_events < b->nr_events); }
static uint64_t pv_sample(const hist *h, const hist_entry *e) { return e->nr_events; }
static int k_sample_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_u64(buf, len, e->nr_events, width);
}

static int k_period_cmp(const hist *h, const hist_entry *a, const hist_entry *b) { return -(a->period > b->period) + (a->period < b->period); }
static uint64_t pv_period(const hist *h, const hist_entry *e) { return e->period; }
static int k_period_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_u64(buf, len, e->period, width);
}

/* ipc_null — perf report appends it to a sort order that names
 * "symbol" (symbol, symbol_size, ...) without branch stacks: the IPC
 * columns with nothing to say ("-"), a row per symbol (its comparator is
 * perf's sort__sym_cmp, at every stage: it has no collapse or sort
 * comparator of its own). */
enum { HK_IPC_NULL = HK__NAMED + 3 };

/* perf's sort__sym_cmp on two rows' keys (the tree nodes of stage 2 hold
 * periods, not addresses) */
static int64_t pkey_sym_cmp(const pkey *l, const pkey *r)
{
	if (l->sym == NONE_R && r->sym == NONE_R)
		return addr_cmp(l->addr, r->addr);
	if (l->dso == NONE_R || r->dso == NONE_R) {
		if (l->dso != r->dso)
			return null_cmp(l->dso == NONE_R, r->dso == NONE_R);
	} else if (l->dso != r->dso) {
		return rcmp(r->dso, l->dso);
	}
	if (l->sym == NONE_R || r->sym == NONE_R)
		return null_cmp(l->sym == NONE_R, r->sym == NONE_R);
	if (l->sym_start != r->sym_start)
		return (int64_t)(r->sym_start - l->sym_start);
	return (int64_t)(r->sym_end - l->sym_end);
}
static int64_t p_ipc_null(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return pkey_sym_cmp(full(c, li), full(c, ri));
}
static int prep_ipc_null(hist *h, int slot, proff_error *err)
{
	/* sort__sym_cmp orders unresolved rows by address alone and the
	 * others by dso first, at the output stage too: not a sort, so
	 * perf's tree insertions are replayed */
	h->opts.order_replay = true;
	return 0;
}
static size_t k_zero_width(const hist *h, const hist_entry *e) { return 0; }
static int k_ipc_null_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, "-      -", 0, 0);   /* perf: "%-5s %2s" of "-" */
	return pad_to(buf, len, n, width, true);
}

/* symbol_size — perf's: the size of the row's symbol (its end less its
 * start), "unknown" without one. Rows of equal size are one (with
 * ipc_null after it, as perf report has it, one per symbol). */
enum { HK_SYMBOL_SIZE = HK__NAMED + 4 };

static uint64_t sym_size_of(const hist *h, uint32_t sym)
{
	return sym == PF_NONE ? 0 : h->prof->syms[sym].end - h->prof->syms[sym].start;
}
static void w_symbol_size(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	w[0] = sym_size_of(h, h->prof->locs[c->loc].sym);
	w[1] = 0;
}
static uint64_t pv_symbol_size(const hist *h, const hist_entry *e) { return sym_size_of(h, e->sym); }
static int64_t p_gen_num(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* perf's numeric keys: cmp(left, right) of (right, left) */
	int g = replay_gen_index(c->h, slot);
	uint64_t l = full(c, li)->gen[g], r = full(c, ri)->gen[g];
	return r < l ? -1 : r > l;
}
static int k_symbol_size_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return cmp_u64(sym_size_of(h, a->sym), sym_size_of(h, b->sym));
}
static int put_size(char *buf, size_t len, bool known, uint64_t v, int width)
{
	/* perf: "%*d" of the size, "%*s" of "unknown" */
	int n = known ? snprintf(buf, len, "%*d", width, (int)v) : snprintf(buf, len, "%*s", width, "unknown");
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}
static int k_symbol_size_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_size(buf, len, e->sym != PF_NONE, sym_size_of(h, e->sym), width);
}
static void v_symbol_size(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = sym_size_of(h, e->sym); }

/* dso_size — perf's: the size of the map the row's address is in (the
 * dso's executable map; the kernel's is its symbols' extent, as perf
 * fixes the kernel map up once kallsyms is read), "unknown" without a
 * map. Rows of equal size are one. */
enum { HK_DSO_SIZE = HK__NAMED + 5 };

static uint64_t dso_size_of(const hist *h, uint32_t dso)
{
	if (dso == PF_NONE)
		return 0;
	const pf_dso *d = &h->prof->dsos[dso];
	uint64_t lo, hi;
	if (d->kind == SYM_DSO_KERNEL && d->sd && sym_dso_extent(d->sd, &lo, &hi))
		return hi - lo;
	return d->map_size;
}
static void w_dso_size(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	w[0] = dso_size_of(h, h->prof->locs[c->loc].dso);
	w[1] = 0;
}
static uint64_t pv_dso_size(const hist *h, const hist_entry *e) { return dso_size_of(h, e->dso); }
static int k_dso_size_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return cmp_u64(dso_size_of(h, a->dso), dso_size_of(h, b->dso));
}
static int k_dso_size_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_size(buf, len, e->dso != PF_NONE, dso_size_of(h, e->dso), width);
}
static void v_dso_size(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = dso_size_of(h, e->dso); }

/* cgroup — perf's: the cgroup of the row's samples, "N/A" for samples
 * without one (a recording without --all-cgroups: perf's cgroup id 0). A
 * file whose samples carry cgroup ids is refused: the profile keeps no
 * per-sample cgroup yet (docs/compat/report.md). */
enum { HK_CGROUP = HK__NAMED + 6 };

static int prep_cgroup(hist *h, int slot, proff_error *err)
{
	for (size_t i = 0; i < h->prof->nr_events; i++)
		if (h->prof->events[i].sample_type & PD_S_CGROUP)
			return proff_err_set(err, PROFF_ENOTSUP, h->prof->path, PROFF_NO_OFFSET,
					     "--sort cgroup: the samples carry cgroup ids (perf record --all-cgroups), "
					     "which proff does not read yet");
	return 0;
}
static int k_none_cmp(const hist *h, const hist_entry *a, const hist_entry *b) { return 0; }
static int64_t p_none(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri) { return 0; }
static size_t k_cgroup_width(const hist *h, const hist_entry *e) { return 3; }
static int k_cgroup_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	int n = put_name(buf, len, "N/A", width, sep);
	return pad_to(buf, len, n, width, pad);
}
static void v_cgroup(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = "N/A"; }

/* overhead, overhead_children, overhead_sys, overhead_us,
 * overhead_guest_sys, overhead_guest_us — perf's percent columns as sort
 * keys: the row's Self period, its Children period, and its Self period
 * of kernel, user, guest kernel and guest user samples (the reference
 * path makes that split: HKN_CPUMODE), each in percent of the report's
 * total. Like sample and period they split no row and compare nothing
 * before perf's output tree; perf prefixes its sort order with Children
 * and Self unless the spec's text holds "overhead_children" or
 * "overhead" (util/sort.c's setup_overhead), so naming any of them puts
 * its comparison where the spec has it, Self breaking the remaining ties.
 * overhead (and overhead_children in Children mode) is the report's own
 * column, shown once. */
enum { HK_OVERHEAD = HK__NAMED + 7, HK_OVERHEAD_CHILDREN = HK__NAMED + 8, HK_OVERHEAD_SYS = HK__NAMED + 9,
       HK_OVERHEAD_US = HK__NAMED + 10, HK_OVERHEAD_GUEST_SYS = HK__NAMED + 11,
       HK_OVERHEAD_GUEST_US = HK__NAMED + 12 };

static int prep_overhead(hist *h, int slot, proff_error *err)
{
	h->opts.no_self_first = true;
	if (h->keys[slot] == HK_OVERHEAD_CHILDREN)
		h->opts.no_children_first = true;
	h->opts.order_replay = true;     /* the written-out default orders assume the prefix */
	return 0;
}
static uint64_t report_total(const hist *h) { return h->opts.relative ? h->total_non_filtered_period : h->total_period; }
static int put_percent(char *buf, size_t len, uint64_t v, const hist *h, int width)
{
	/* perf's " %*.2f%%" of width - 1 */
	uint64_t t = report_total(h);
	int n = snprintf(buf, len, "%*.2f%%", width > 1 ? width - 1 : 0, t ? (double)v * 100.0 / (double)t : 0.0);
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}
static size_t k_pct_width(const hist *h, const hist_entry *e) { return 8; }
static size_t k_guest_width(const hist *h, const hist_entry *e) { return 9; }

static int k_overhead_cmp(const hist *h, const hist_entry *a, const hist_entry *b) { return -(a->period > b->period) + (a->period < b->period); }
static int64_t p_overhead(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	if (stage < 2)
		return 0;          /* perf's hpp__nop_cmp */
	uint64_t l = full(c, li)->period, r = full(c, ri)->period;
	return l > r ? 1 : l < r ? -1 : 0;
}
static int k_overhead_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_percent(buf, len, e->period, h, width);
}

static int k_children_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return -(a->period_acc > b->period_acc) + (a->period_acc < b->period_acc);
}
static int64_t p_children(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* perf's __hpp__sort_acc: nothing in Self mode; equal Children put
	 * the caller (the longer chain) first within one thread */
	const hist *h = c->h;
	if (stage < 2 || !h->opts.children)
		return 0;
	const pkey *l = full(c, li), *r = full(c, ri);
	if (l->period_acc != r->period_acc)
		return l->period_acc > r->period_acc ? 1 : -1;
	if (!h->opts.callchain || l->thread != r->thread)
		return 0;
	int64_t d = (int64_t)r->max_depth - (int64_t)l->max_depth;
	return h->opts.caller_order ? -d : d;
}
static int k_children_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	if (!h->opts.children) {
		int n = snprintf(buf, len, "%*s", width, "N/A");    /* perf: " %*s" of width - 1 */
		return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
	}
	return put_percent(buf, len, e->period_acc, h, width);
}

static uint64_t mode_period(const hist *h, const hist_entry *e, int m)
{
	/* a probe of perf's walk (row_id side_rows) has no split yet */
	return h->mode_period && e->row_id < h->side_rows ? h->mode_period[e->row_id * HIST_MODES + (uint64_t)m] : 0;
}
static int mode_of(int key)
{
	return key == HK_OVERHEAD_SYS ? HIST_MODE_SYS : key == HK_OVERHEAD_US ? HIST_MODE_US :
	       key == HK_OVERHEAD_GUEST_SYS ? HIST_MODE_GUEST_SYS : HIST_MODE_GUEST_US;
}
#define MODE_KEY_FNS(name, key)                                                                                  \
	static uint64_t pv_##name(const hist *h, const hist_entry *e) { return mode_period(h, e, mode_of(key)); } \
	static int k_##name##_cmp(const hist *h, const hist_entry *a, const hist_entry *b)                          \
	{                                                                                                            \
		uint64_t x = pv_##name(h, a), y = pv_##name(h, b);                                                   \
		return -(x > y) + (x < y);                                                                           \
	}                                                                                                            \
	static int k_##name##_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, \
				    char sep)                                                                        \
	{                                                                                                            \
		return put_percent(buf, len, pv_##name(h, e), h, width);                                             \
	}
MODE_KEY_FNS(sys, HK_OVERHEAD_SYS)
MODE_KEY_FNS(us, HK_OVERHEAD_US)
MODE_KEY_FNS(guest_sys, HK_OVERHEAD_GUEST_SYS)
MODE_KEY_FNS(guest_us, HK_OVERHEAD_GUEST_US)
#undef MODE_KEY_FNS

/* time — perf's: the time slot of the row's samples (their time down to
 * a multiple of --time-quantum, 100 ms by default), printed in seconds
 * with microseconds in a 12-column field (perf cuts longer ones). The
 * raw samples' times are kept only when the key is planned (HKN_TIME:
 * pf_load_opts.keep_time), and the reference path makes its rows. */
enum { HK_TIME = HK__NAMED + 13 };

static uint64_t row_time_of(const hist *h, const hist_entry *e)
{
	return h->row_time && e->row_id <= h->side_rows ? h->row_time[e->row_id] : 0;
}
static void w_time(const hist *h, const hist_key_src *c, uint64_t w[2]) { w[0] = c->time; w[1] = 0; }
static int k_time_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return cmp_u64(row_time_of(h, a), row_time_of(h, b));
}
static size_t k_time_width(const hist *h, const hist_entry *e) { return 12; }
static int k_time_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	/* perf: timestamp__scnprintf_usec, then "%-.*s" of the width */
	char tmp[48];
	uint64_t t = row_time_of(h, e);
	snprintf(tmp, sizeof(tmp), "%llu.%06llu", (unsigned long long)(t / 1000000000ULL),
		 (unsigned long long)(t % 1000000000ULL / 1000ULL));
	int n = put_name(buf, len, tmp, width, sep);
	return pad_to(buf, len, n, width, pad);
}
static void v_time(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = row_time_of(h, e); }

/* the printers keys-branch.c shows a branch's ends with */
size_t hist_key_sym_width(const hist *h, const hist_entry *e) { return k_sym_width(h, e); }
int hist_key_sym_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return k_sym_print(h, e, buf, len, width, pad, sep);
}
int hist_key_dso_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return k_dso_print(h, e, buf, len, width, pad, sep);
}

/* perf report -b's keys (functions: keys-branch.c) */
enum {
	HK_DSO_FROM = HK__NAMED + 14, HK_DSO_TO, HK_SYM_FROM, HK_SYM_TO, HK_CYCLES, HK_MISPREDICT,
	HK_IN_TX, HK_ABORT, HK_SRCLINE_FROM, HK_SRCLINE_TO,
};
static size_t k_header_width(const hist *h, const hist_entry *e) { return 0; }
#define BRANCH_KEY(ID, NAME, HEADER, FN, WIDTH, PADLAST) \
	[ID] = { \
		.name = NAME, .header = HEADER, .id = ID, \
		.needs = HKN_LOC | HKN_BRANCH | (ID == HK_MISPREDICT ? HKN_PARTIAL : 0) | \
			 (ID == HK_SRCLINE_FROM || ID == HK_SRCLINE_TO ? HKN_SRCLINE | HKN_LAZY | HKN_SUBSYM : 0), \
		.words = hist_w_##FN, .fill = hist_branch_fill, .prepare = hist_branch_prepare, \
		.cmp = hist_k_##FN##_cmp, .perf_cmp = hist_p_##FN, \
		.width = WIDTH, .print = hist_k_##FN##_print, .pad_last = PADLAST, .value = hist_v_##FN, \
	}

/* ---- the catalogue ------------------------------------------------------------ */

/* perf's keys of the same name (util/sort.c), in its order where it has
 * one; label is proff's. Field by field: hist_key_def in proff/hist.h. */
const hist_key_def hist_keys[] = {
	[HK_COMM] = {
		.name = "comm", .header = "Command", .id = HK_COMM,
		.needs = HKN_COMM, .collapse = HKC_ALWAYS,
		.words = w_comm, .cmp = k_comm_cmp, .perf_cmp = p_comm,
		.width = k_comm_width, .print = k_comm_print, .pad_last = true, .value = v_comm,
	},
	[HK_PID] = {
		.name = "pid", .header = "    Pid:Command", .id = HK_PID,
		.needs = HKN_THREAD,
		.words = w_pid, .cmp = k_pid_cmp, .perf_cmp = p_pid,
		.width = k_pid_width, .print = k_pid_print, .pad_last = true, .value = v_pid,
	},
	[HK_TID] = {
		.name = "tid", .header = "    Tid:Command", .id = HK_TID,
		.needs = HKN_THREAD,
		.words = w_pid, .cmp = k_pid_cmp, .perf_cmp = p_pid,
		.width = k_pid_width, .print = k_pid_print, .pad_last = true, .value = v_pid,
	},
	[HK_DSO] = {
		.name = "dso", .header = "Shared Object", .id = HK_DSO,
		.needs = HKN_LOC, .unresolved_width = 16,
		.words = w_dso, .cmp = k_dso_cmp, .perf_cmp = p_dso,
		.width = k_dso_width, .print = k_dso_print, .pad_last = true, .value = v_dso,
	},
	[HK_SYM] = {
		.name = "sym", .alias = "symbol", .header = "Symbol", .id = HK_SYM,
		.needs = HKN_LOC, .collapse = HKC_DIFF,
		.words = w_sym, .cmp = k_sym_cmp, .match = k_sym_match, .perf_cmp = p_sym,
		.width = k_sym_width, .print = k_sym_print, .value = v_sym,
	},
	[HK_CPU] = {
		.name = "cpu", .header = "CPU", .id = HK_CPU,
		.needs = HKN_CPU,
		.words = w_cpu, .cmp = k_cpu_cmp, .perf_cmp = p_cpu,
		.width = k_cpu_width, .print = k_cpu_print, .pad_last = true, .value = v_cpu,
	},
	[HK_PARENT] = {
		.name = "parent", .header = "Parent symbol", .id = HK_PARENT,
		.needs = HKN_CALLCHAIN,
		.words = w_parent, .cmp = k_parent_cmp, .perf_cmp = p_parent,
		.width = k_parent_width, .print = k_parent_print, .pad_last = true, .value = v_parent,
	},
	[HK_SRCLINE] = {
		.name = "srcline", .header = "Source:Line", .id = HK_SRCLINE,
		.needs = HKN_LOC | HKN_SRCLINE | HKN_LAZY | HKN_SUBSYM,
		.words = w_srcline, .fill = f_srcline, .cmp = k_srcline_cmp, .perf_cmp = p_srcline,
		.width = k_srcline_width, .print = k_srcline_print, .value = v_srcline,
	},
	[HK_LABEL] = {
		.name = "label", .header = "Label", .id = HK_LABEL,
		.needs = HKN_LABEL,
		.words = w_label, .cmp = k_label_cmp, .perf_cmp = p_label,
		.width = k_label_width, .print = k_label_print, .pad_last = true, .value = v_label,
	},
	[HK_SRCFILE] = {
		.name = "srcfile", .header = "Source File", .id = HK_SRCFILE,
		.needs = HKN_LOC | HKN_SRCLINE | HKN_LAZY | HKN_SUBSYM,
		.words = w_srcfile, .prepare = prep_srcfile, .cmp = k_srcfile_cmp,
		.perf_cmp = p_srcfile, .perf_value = pv_srcfile, .perf_str = true,
		.width = k_srcfile_width, .print = k_srcfile_print, .value = v_srcfile,
	},
	[HK_SAMPLE] = {
		.name = "sample", .header = "     Samples", .id = HK_SAMPLE, .hpp = HKP_SAMPLES,
		.words = w_none, .cmp = k_sample_cmp, .perf_cmp = p_hpp, .perf_value = pv_sample,
		.width = k_hpp_width, .print = k_sample_print, .pad_last = true, .value = v_none,
	},
	[HK_PERIOD] = {
		.name = "period", .header = "      Period", .id = HK_PERIOD, .hpp = HKP_PERIOD,
		.words = w_none, .cmp = k_period_cmp, .perf_cmp = p_hpp, .perf_value = pv_period,
		.width = k_hpp_width, .print = k_period_print, .pad_last = true, .value = v_none,
	},
	[HK_IPC_NULL] = {
		.name = "ipc_null", .header = "IPC   [IPC Coverage]", .id = HK_IPC_NULL,
		.needs = HKN_LOC,
		.words = w_sym, .prepare = prep_ipc_null, .cmp = k_sym_cmp, .match = k_sym_match,
		.perf_cmp = p_ipc_null,
		.width = k_zero_width, .print = k_ipc_null_print, .pad_last = true, .value = v_sym,
	},
	[HK_SYMBOL_SIZE] = {
		.name = "symbol_size", .header = "Symbol size", .id = HK_SYMBOL_SIZE,
		.needs = HKN_LOC,
		.words = w_symbol_size, .cmp = k_symbol_size_cmp, .perf_cmp = p_gen_num,
		.perf_value = pv_symbol_size,
		.width = k_zero_width, .print = k_symbol_size_print, .pad_last = true, .value = v_symbol_size,
	},
	[HK_DSO_SIZE] = {
		.name = "dso_size", .header = "DSO size", .id = HK_DSO_SIZE,
		.needs = HKN_LOC,
		.words = w_dso_size, .cmp = k_dso_size_cmp, .perf_cmp = p_gen_num,
		.perf_value = pv_dso_size,
		.width = k_zero_width, .print = k_dso_size_print, .pad_last = true, .value = v_dso_size,
	},
	[HK_OVERHEAD] = {
		.name = "overhead", .header = "Overhead", .id = HK_OVERHEAD, .hpp = HKP_OVERHEAD,
		.words = w_none, .prepare = prep_overhead, .cmp = k_overhead_cmp, .perf_cmp = p_overhead,
		.width = k_pct_width, .print = k_overhead_print, .pad_last = true, .value = v_none,
	},
	[HK_OVERHEAD_CHILDREN] = {
		.name = "overhead_children", .header = "Children", .id = HK_OVERHEAD_CHILDREN, .hpp = HKP_CHILDREN,
		.words = w_none, .prepare = prep_overhead, .cmp = k_children_cmp, .perf_cmp = p_children,
		.width = k_pct_width, .print = k_children_print, .pad_last = true, .value = v_none,
	},
	[HK_OVERHEAD_SYS] = {
		.name = "overhead_sys", .header = "     sys", .id = HK_OVERHEAD_SYS, .hpp = HKP_MODE,
		.needs = HKN_CPUMODE,
		.words = w_none, .prepare = prep_overhead, .cmp = k_sys_cmp, .perf_cmp = p_hpp, .perf_value = pv_sys,
		.width = k_pct_width, .print = k_sys_print, .pad_last = true, .value = v_none,
	},
	[HK_OVERHEAD_US] = {
		.name = "overhead_us", .header = "     usr", .id = HK_OVERHEAD_US, .hpp = HKP_MODE,
		.needs = HKN_CPUMODE,
		.words = w_none, .prepare = prep_overhead, .cmp = k_us_cmp, .perf_cmp = p_hpp, .perf_value = pv_us,
		.width = k_pct_width, .print = k_us_print, .pad_last = true, .value = v_none,
	},
	[HK_OVERHEAD_GUEST_SYS] = {
		.name = "overhead_guest_sys", .header = "guest sys", .id = HK_OVERHEAD_GUEST_SYS, .hpp = HKP_MODE,
		.needs = HKN_CPUMODE,
		.words = w_none, .prepare = prep_overhead, .cmp = k_guest_sys_cmp, .perf_cmp = p_hpp,
		.perf_value = pv_guest_sys,
		.width = k_guest_width, .print = k_guest_sys_print, .pad_last = true, .value = v_none,
	},
	[HK_OVERHEAD_GUEST_US] = {
		.name = "overhead_guest_us", .header = "guest usr", .id = HK_OVERHEAD_GUEST_US, .hpp = HKP_MODE,
		.needs = HKN_CPUMODE,
		.words = w_none, .prepare = prep_overhead, .cmp = k_guest_us_cmp, .perf_cmp = p_hpp,
		.perf_value = pv_guest_us,
		.width = k_guest_width, .print = k_guest_us_print, .pad_last = true, .value = v_none,
	},
	[HK_TIME] = {
		.name = "time", .header = "Time", .id = HK_TIME,
		.needs = HKN_TIME,
		.words = w_time, .cmp = k_time_cmp, .perf_cmp = p_gen_num, .perf_value = row_time_of,
		.width = k_time_width, .print = k_time_print, .value = v_time,
	},
	[HK_CGROUP] = {
		.name = "cgroup", .header = "Cgroup", .id = HK_CGROUP,
		.words = w_none, .prepare = prep_cgroup, .cmp = k_none_cmp, .perf_cmp = p_none,
		.width = k_cgroup_width, .print = k_cgroup_print, .value = v_cgroup,
	},
	BRANCH_KEY(HK_DSO_FROM, "dso_from", "Source Shared Object", dso_from, hist_k_dso_from_width, true),
	BRANCH_KEY(HK_DSO_TO, "dso_to", "Target Shared Object", dso_to, hist_k_dso_to_width, true),
	BRANCH_KEY(HK_SYM_FROM, "symbol_from", "Source Symbol", sym_from, hist_k_sym_from_width, false),
	BRANCH_KEY(HK_SYM_TO, "symbol_to", "Target Symbol", sym_to, hist_k_sym_to_width, false),
	BRANCH_KEY(HK_MISPREDICT, "mispredict", "Branch Mispredicted", mispredict, k_header_width, true),
	BRANCH_KEY(HK_IN_TX, "in_tx", "Branch in transaction", in_tx, k_header_width, true),
	BRANCH_KEY(HK_ABORT, "abort", "Transaction abort", abort, k_header_width, true),
	BRANCH_KEY(HK_CYCLES, "cycles", "Basic Block Cycles", cycles, k_header_width, true),
	BRANCH_KEY(HK_SRCLINE_FROM, "srcline_from", "From Source:Line", srcline_from, hist_k_srcline_from_width, true),
	BRANCH_KEY(HK_SRCLINE_TO, "srcline_to", "To Source:Line", srcline_to, hist_k_srcline_to_width, true),
};
const int hist_nr_keys = (int)(sizeof(hist_keys) / sizeof(hist_keys[0]));
_Static_assert(sizeof(hist_keys) / sizeof(hist_keys[0]) <= HIST_KEYS_MAX, "HIST_KEYS_MAX holds the catalogue");

unsigned hist_keys_needs(const int *keys, int nkeys)
{
	unsigned n = 0;
	for (int i = 0; i < nkeys; i++)
		n |= hist_keys[keys[i]].needs;
	return n;
}

const hist_key_def *hist_key_find(const char *name)
{
	for (int i = 0; i < hist_nr_keys; i++)
		if (!strcmp(hist_keys[i].name, name) ||
		    (hist_keys[i].alias && !strcmp(hist_keys[i].alias, name)))
			return &hist_keys[i];
	return NULL;
}

int hist_parse_sort(const char *spec, int *keys, int max, proff_error *err)
{
	int n = 0;
	const char *p = spec;
	while (p && *p) {
		const char *c = strchr(p, ',');
		size_t l = c ? (size_t)(c - p) : strlen(p);
		char name[64];
		if (l == 0 || l >= sizeof(name))
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "Unknown --sort key: '%.*s'", (int)l, p);
		memcpy(name, p, l);
		name[l] = '\0';
		if (!strncmp(name, "label:", 6) && name[6])
			name[5] = '\0';       /* label:NAME: the label's name is hist_label_name's */
		else if (!strcmp(name, "label"))
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "--sort label needs the label's name: label:NAME");
		const hist_key_def *k = hist_key_find(name);
		if (!k)
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "Unknown --sort key: '%s'", name);
		bool dup = false;
		for (int i = 0; i < n; i++)
			dup |= keys[i] == k->id;
		if (!dup) {
			if (n >= max)
				return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "too many sort keys");
			keys[n++] = k->id;
		}
		p = c ? c + 1 : NULL;
	}
	if (!n)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "empty --sort");
	return n;
}

/* ---- column widths (perf's hists__calc_col_len) ------------------------------- */

static size_t key_width_of(const hist *h, int key_id)
{
	const hist_key_def *k = &hist_keys[key_id];
	size_t w = strlen(k->header);
	bool unresolved = false;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		if (e->filtered || (h->merged_into && h->merged_into[i] != PF_NONE))
			continue;
		size_t x = k->width(h, e);
		if (x > w)
			w = x;
		if (e->sym == PF_NONE)
			unresolved = true;
	}
	/* perf: a column at least as wide as an address (its dso with an
	 * unresolved row), unless --dsos */
	if (unresolved && !h->opts.dsos.n && w < k->unresolved_width)
		w = k->unresolved_width;
	return w;
}

size_t hist_key_col_width(const hist *h, int key_id)
{
	for (int i = 0; i < h->nkeys; i++)
		if (h->keys[i] == key_id && h->key_width[i])
			return h->key_width[i];
	return key_width_of(h, key_id);
}

void hist_key_widths(hist *h)
{
	/* a lazy key's width is perf's order's (hist_order_perf) */
	for (int i = 0; i < h->nkeys; i++)
		if (!(hist_keys[h->keys[i]].needs & HKN_LAZY))
			h->key_width[i] = key_width_of(h, h->keys[i]);
}
