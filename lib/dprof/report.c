/* report.c — dprofpp's output from a finished dprof_model.
 *
 * Reproduces bin/dprofpp byte for byte: -f filtering and -G/-P grouping (with
 * their loops that never look at the last keys), the runtime used for %Time,
 * the sort orders (Perl's sort is a stable merge sort), and the Perl format
 * `write` the table is printed with: ^-fields that cut values at the field
 * width or break them after a '-', the variables a ^-field consumes (so a long
 * name's continuation lines can show the rest of a cut CumulS or Csec/c), a
 * page header every 60 lines preceded by a form feed, trailing spaces removed.
 * -S prints the merged call tree.
 */
#include "proff/dprof.h"

#include <stdlib.h>
#include <string.h>

#define PAGE_LEN 60

/* ---- the Perl format engine, reduced to what dprofpp uses ---- */

typedef struct field {
	const char *p;          /* what is left of the variable */
	size_t n;
} field;

typedef struct line {
	char *buf;
	size_t n, cap;
} line;

static int line_put(line *l, const char *s, size_t n)
{
	if (PF_GROW(l->buf, l->cap, l->n + n + 2) < 0)
		return -1;
	memcpy(l->buf + l->n, s, n);
	l->n += n;
	return 0;
}

static int line_pad(line *l, long n)
{
	if (n <= 0)
		return 0;
	if (PF_GROW(l->buf, l->cap, l->n + (size_t)n + 2) < 0)
		return -1;
	memset(l->buf + l->n, ' ', (size_t)n);
	l->n += (size_t)n;
	return 0;
}

/* FF_ITEM: copy, control characters become spaces */
static int line_item(line *l, const char *s, size_t n)
{
	size_t at = l->n;
	if (line_put(l, s, n) < 0)
		return -1;
	for (size_t i = at; i < l->n; i++) {
		unsigned char c = (unsigned char)l->buf[i];
		if (c < 32 || c == 127)
			l->buf[i] = ' ';
	}
	return 0;
}

static bool perl_space(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

/* A ^>>> or ^<<< field: FF_CHECKCHOP + FF_SPACE/FF_ITEM + FF_CHOP with
 * $: = " \n-". */
static int chop_field(line *l, field *f, int fieldsize, bool right)
{
	const char *s = f->p;
	size_t len = f->n, i = 0;
	long size = 0, itemsize = 0;
	long chop = -1;
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		if (perl_space(c)) {
			if (c == '\r') {
				chop = (long)i;
				itemsize = size;
				break;
			}
			chop = (long)i;
			itemsize = size;
			if (size == fieldsize)
				break;
		} else {
			if (c == '-' || c == '\0') {
				chop = (long)i + 1;
				itemsize = size;
			}
			if (size == fieldsize)
				break;
		}
		i++;
		size++;
	}
	if (chop < 0 || i == len) {
		chop = (long)i;
		itemsize = size;
	}
	int rc = 0;
	if (right)
		rc |= line_pad(l, fieldsize - itemsize);
	rc |= line_item(l, s, (size_t)chop);
	if (!right)
		rc |= line_pad(l, fieldsize - itemsize);
	size_t r = (size_t)chop;
	while (r < len && perl_space((unsigned char)s[r]))
		r++;
	f->p = s + r;
	f->n = len - r;
	return rc;
}

/* An @>>> / @<<< field: FF_CHECKNL (up to the field width or a newline). */
static int at_field(line *l, const char *s, int fieldsize, bool right)
{
	size_t len = strlen(s), i = 0;
	long itemsize = 0;
	while (i < len) {
		if (s[i] == '\n')
			break;
		i++;
		itemsize++;
		if (itemsize == fieldsize)
			break;
	}
	int rc = 0;
	if (right)
		rc |= line_pad(l, fieldsize - itemsize);
	rc |= line_item(l, s, i);
	if (!right)
		rc |= line_pad(l, fieldsize - itemsize);
	return rc;
}

/* FF_NEWLINE: trailing spaces go */
static int line_end(line *l, FILE *out)
{
	while (l->n && l->buf[l->n - 1] == ' ')
		l->n--;
	l->buf[l->n++] = '\n';
	size_t w = fwrite(l->buf, 1, l->n, out);
	l->n = 0;
	return w == 0 ? -1 : 0;
}

/* ---- state of one report ---- */

typedef struct rep {
	const dprof_model *m;
	const dprof_report_opts *o;
	FILE *out;
	size_t nslots;
	const char **names;     /* slot -> name */
	double *calls, *times, *ctimes, *persecs;
	uint32_t *keys;         /* @idkeys: slots */
	size_t nkeys;
	double runtime;
	double hz;
	/* format state */
	long lines_left;
	long page;
	line l;
} rep;

static void warnf(const rep *r, const char *msg)
{
	if (r->o->warn)
		r->o->warn(r->o->warn_ctx, msg);
}

static bool truthy(const char *s)
{
	return s && *s && strcmp(s, "0") != 0;
}

static int64_t find_slot(rep *r, const char *name)
{
	for (size_t i = 0; i < r->nslots; i++)
		if (r->names[i] && strcmp(r->names[i], name) == 0)
			return (int64_t)i;
	return -1;
}

/* slot for a new pseudo-row (group, "other") */
static uint32_t pseudo_slot(rep *r, const char *name)
{
	int64_t s = find_slot(r, name);
	if (s < 0) {
		s = (int64_t)r->nslots++;
		r->names[s] = name;
	}
	r->calls[s] = r->times[s] = r->ctimes[s] = 0;
	return (uint32_t)s;
}

static void remove_key(rep *r, size_t i)
{
	memmove(r->keys + i, r->keys + i + 1, (r->nkeys - i - 1) * sizeof(*r->keys));
	r->nkeys--;
}

static int filter(rep *r, proff_error *err)
{
	regex_t re;
	char eb[256];
	if (dprof_regcomp(&re, r->o->filter_re, eb, sizeof(eb)) < 0)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "bad -f regular expression '%s': %s",
				     r->o->filter_re, eb);
	/* dprofpp: for ($i = 0; $i < @$idkeys - 2;) — the last two are never filtered */
	for (size_t i = 0; i + 2 < r->nkeys;) {
		uint32_t k = r->keys[i];
		if (regexec(&re, r->names[k], 0, NULL, 0) == 0) {
			remove_key(r, i);
			r->runtime -= r->times[k];
			continue;
		}
		i++;
	}
	regfree(&re);
	return 0;
}

static int group(rep *r, proff_error *err)
{
	regex_t re;
	char eb[256], b1[64], b2[64];
	const char *g = r->o->group_re;
	if (dprof_regcomp(&re, g, eb, sizeof(eb)) < 0)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "bad -G regular expression '%s': %s", g, eb);
	fprintf(r->out, "Option G Grouping: [%s]\n", g);
	uint32_t gs = pseudo_slot(r, g);
	r->keys[r->nkeys++] = gs;
	uint32_t os = 0;
	if (r->o->group_other) {
		os = pseudo_slot(r, "other");
		r->keys[r->nkeys++] = os;
	}
	for (size_t i = 0; i + 2 < r->nkeys;) {
		uint32_t k = r->keys[i];
		if (regexec(&re, r->names[k], 0, NULL, 0) == 0) {
			r->calls[gs] += r->calls[k];
			r->times[gs] += r->times[k];
			r->ctimes[gs] += r->ctimes[k];
			remove_key(r, i);
			continue;
		} else if (r->o->group_other) {
			r->calls[os] += r->calls[k];
			r->times[os] += r->times[k];
			r->ctimes[os] += r->ctimes[k];
			remove_key(r, i);
			continue;
		}
		i++;
	}
	regfree(&re);
	dprof_perl_num(b1, sizeof(b1), r->times[gs]);
	dprof_perl_num(b2, sizeof(b2), r->ctimes[gs]);
	fprintf(r->out, "Grouping [%s] Calls: [%.0f]\nGrouping [%s] Times: [%s]\nGrouping [%s] IncTimes: [%s]\n",
		g, r->calls[gs], g, b1, g, b2);
	return 0;
}

/* ---- sorting: stable merge sort like Perl's ---- */

/* the comparators take the report whose columns they compare */
typedef int (*rep_cmp_fn)(const rep *r, uint32_t a, uint32_t b);

static int cmp_num(double a, double b) { return a < b ? -1 : a > b ? 1 : 0; }
static int by_time(const rep *r, uint32_t a, uint32_t b) { return cmp_num(r->times[b], r->times[a]); }
static int by_ctime(const rep *r, uint32_t a, uint32_t b) { return cmp_num(r->ctimes[b], r->ctimes[a]); }
static int by_calls(const rep *r, uint32_t a, uint32_t b) { return cmp_num(r->calls[b], r->calls[a]); }
static int by_alpha(const rep *r, uint32_t a, uint32_t b)
{
	int c = strcmp(r->names[a], r->names[b]);
	return c < 0 ? -1 : c > 0;
}
static int by_avg(const rep *r, uint32_t a, uint32_t b) { return cmp_num(r->persecs[b], r->persecs[a]); }

static const struct sort_key {
	enum dprof_sort key;
	rep_cmp_fn cmp;
} sort_keys[] = {
	{ DPROF_SORT_TIME,  by_time },
	{ DPROF_SORT_CTIME, by_ctime },
	{ DPROF_SORT_CALLS, by_calls },
	{ DPROF_SORT_ALPHA, by_alpha },
	{ DPROF_SORT_AVG,   by_avg },
};

static void msort(uint32_t *a, uint32_t *tmp, size_t n, rep_cmp_fn cmp, const rep *r, bool rev)
{
	if (n < 2)
		return;
	size_t h = n / 2;
	msort(a, tmp, h, cmp, r, rev);
	msort(a + h, tmp, n - h, cmp, r, rev);
	size_t i = 0, j = h, k = 0;
	while (i < h && j < n) {
		int c = rev ? cmp(r, a[j], a[i]) : cmp(r, a[i], a[j]);
		if (c <= 0)
			tmp[k++] = a[i++];
		else
			tmp[k++] = a[j++];
	}
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, n * sizeof(*a));
}

/* ---- the table ---- */

static int write_top(rep *r)
{
	const dprof_report_opts *o = r->o;
	static const char *which[] = {
		[DPROF_CLOCK_USER_SYS] = "User+System", [DPROF_CLOCK_USER] = "User",
		[DPROF_CLOCK_SYS] = "System", [DPROF_CLOCK_REAL] = "Real",
	};
	char b[64];
	line *l = &r->l;
	int rc = 0;
	dprof_perl_num(b, sizeof(b), (r->m->run_real - r->m->overhead) / r->m->hz);
	rc |= line_put(l, "Total Elapsed Time = ", 21);
	rc |= at_field(l, b, 8, true);
	rc |= line_put(l, " Seconds", 8);
	rc |= line_end(l, r->out);
	rc |= line_put(l, "  ", 2);
	rc |= at_field(l, which[o->clock], 11, true);
	rc |= line_put(l, " Time = ", 8);
	dprof_perl_num(b, sizeof(b), r->runtime);
	rc |= at_field(l, b, 8, true);
	rc |= line_put(l, " Seconds", 8);
	rc |= line_end(l, r->out);
	rc |= at_field(l, o->inclusive ? "Inclusive" : "Exclusive", 9, false);
	rc |= line_put(l, " Times", 6);
	rc |= line_end(l, r->out);
	rc |= line_put(l, "%Time ExclSec CumulS #Calls sec/call Csec/c  Name", 49);
	rc |= line_end(l, r->out);
	return rc;
}

typedef struct row_fields {
	field pcnt, secs, csecs, ncalls, percall, cpercall, name;
} row_fields;

/* one `write` of format STAT, with pp_leavewrite's paging */
static int write_row(rep *r, row_fields *f)
{
	int rc = 0;
	if (r->lines_left < 1) {
		if (!r->o->quiet) {
			if (r->page > 0)
				fputc('\f', r->out);
			r->lines_left = PAGE_LEN;
			r->page++;
			rc |= write_top(r);
			r->lines_left -= 4;
		} else {
			r->lines_left = PAGE_LEN;
		}
	}
	line *l = &r->l;
	rc |= line_put(l, " ", 1);
	rc |= chop_field(l, &f->pcnt, 4, true);
	rc |= line_put(l, "   ", 3);
	rc |= chop_field(l, &f->secs, 5, true);
	rc |= line_put(l, " ", 1);
	rc |= chop_field(l, &f->csecs, 6, true);
	rc |= line_put(l, " ", 1);
	rc |= chop_field(l, &f->ncalls, 6, true);
	rc |= line_put(l, "   ", 3);
	rc |= chop_field(l, &f->percall, 6, true);
	rc |= line_put(l, " ", 1);
	rc |= chop_field(l, &f->cpercall, 6, true);
	rc |= line_put(l, "  ", 2);
	rc |= chop_field(l, &f->name, r->o->name_width > 0 ? r->o->name_width : 34, false);
	rc |= line_end(l, r->out);
	r->lines_left--;
	return rc;
}

static double count_limit(const char *s)
{
	if (!truthy(s))
		return 15;
	return dprof_perl_numify(s);
}

static int display_table(rep *r, proff_error *err)
{
	double cnt = count_limit(r->o->count);
	double hz = r->hz;
	char pcnt[64], secs[64], csecs[512], ncalls[64], percall[64], cpercall[512];
	row_fields f;
	for (size_t x = 0; x < r->nkeys; x++) {
		uint32_t k = r->keys[x];
		double nc = r->calls[k];
		const char *name = r->names[k];
		double s = r->times[k] / hz;
		snprintf(secs, sizeof(secs), "%.3f", s);
		double cs = r->ctimes[k] / hz;
		snprintf(csecs, sizeof(csecs), "%.3f", cs);
		if (nc == 0)
			return proff_err_set(err, PROFF_EFORMAT, NULL, PROFF_NO_OFFSET,
					     "Illegal division by zero (row '%s' has no calls)", name);
		snprintf(percall, sizeof(percall), "%.4f", s / nc);
		snprintf(cpercall, sizeof(cpercall), "%.4f", cs / nc);
		double pv = r->runtime != 0
			? ((dprof_perl_numify(r->o->inclusive ? csecs : secs) / r->runtime) * 100.0) : 0;
		snprintf(pcnt, sizeof(pcnt), "%.2f", pv);
		dprof_perl_num(ncalls, sizeof(ncalls), nc);
		f.pcnt = (field){ pcnt, strlen(pcnt) };
		f.secs = (field){ secs, strlen(secs) };
		f.ncalls = (field){ ncalls, strlen(ncalls) };
		f.percall = (field){ percall, strlen(percall) };
		/* $csecs and $cpercall are not reset between rows' continuation lines */
		f.csecs = (field){ csecs, strlen(csecs) };
		f.cpercall = (field){ cpercall, strlen(cpercall) };
		f.name = (field){ name, strlen(name) };
		if (write_row(r, &f) < 0)
			goto ioerr;
		f.pcnt = f.secs = f.ncalls = f.percall = (field){ "", 0 };
		while (f.name.n) {
			if (write_row(r, &f) < 0)
				goto ioerr;
		}
		if (--cnt == 0)
			break;
	}
	return 0;
ioerr:
	return proff_err_set(err, PROFF_EIO, NULL, PROFF_NO_OFFSET, "write error or out of memory");
}

/* ---- -S ---- */

typedef struct kidref {
	uint32_t node;
	const char *name;
} kidref;

static int cmp_kid(const void *a, const void *b)
{
	return strcmp(((const kidref *)a)->name, ((const kidref *)b)->name);
}

static int display_tree(rep *r, proff_error *err)
{
	const dprof_model *m = r->m;
	if (!m->nodes || !m->nnodes)
		return 0;
	double hz = m->hz;
	char tp[64];
	snprintf(tp, sizeof(tp), "%lld", (long long)(hz - 1));
	int prec = (int)strlen(tp);
	double *incl = malloc(m->nnodes * sizeof(*incl));
	uint32_t *stk = malloc(m->nnodes * sizeof(*stk));
	int *lvl = malloc(m->nnodes * sizeof(*lvl));
	kidref *kids = NULL;
	size_t kcap = 0;
	int rc = 0;
	if (!incl || !stk || !lvl) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < m->nnodes; i++)
		incl[i] = m->nodes[i].incl >= 0 ? m->nodes[i].incl : 0;
	size_t sp = 0;
	stk[sp] = 0;
	lvl[sp++] = -1;
	while (sp) {
		sp--;
		uint32_t nd = stk[sp];
		int level = lvl[sp];
		const dprof_node *n = &m->nodes[nd];
		size_t nk = 0;
		for (uint32_t k = n->first_kid; k; k = m->nodes[k].next) {
			if (PF_GROW(kids, kcap, nk + 1) < 0) {
				rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
				goto out;
			}
			kids[nk].node = k;
			kids[nk].name = m->names.strs[m->nodes[k].name];
			nk++;
		}
		if (nk > 1)
			qsort(kids, nk, sizeof(*kids), cmp_kid);
		if (n->count) {
			double kt = 0;
			for (size_t i = 0; i < nk; i++)
				kt += incl[kids[i].node];
			if (!(kt >= 0))
				kt = 0;
			double ex = incl[nd] - kt;
			if (!(ex >= 0))
				ex = 0;
			for (int i = 0; i < 2 * level; i++)
				fputc(' ', r->out);
			fprintf(r->out, "%s x %llu  \t", m->names.strs[n->name], (unsigned long long)n->count);
			if (nk)
				fprintf(r->out, "%.*fs = (%.*f + %.*f)s\n", prec, incl[nd] / hz, prec, ex / hz, prec, kt / hz);
			else
				fprintf(r->out, "%.*fs\n", prec, incl[nd] / hz);
		}
		/* push in reverse so the first name comes out first */
		for (size_t i = nk; i-- > 0;) {
			if (sp >= m->nnodes)
				break;
			stk[sp] = kids[i].node;
			lvl[sp++] = level + 1;
		}
	}
out:
	free(incl); free(stk); free(lvl); free(kids);
	return rc;
}

/* ---- entry point ---- */

int dprof_report(FILE *out, const dprof_model *m, const dprof_report_opts *o, proff_error *err)
{
	rep r;
	memset(&r, 0, sizeof(r));
	r.m = m;
	r.o = o;
	r.out = out;
	size_t cap = m->nnames + 2;
	r.names = calloc(cap, sizeof(*r.names));
	r.calls = calloc(cap, sizeof(double));
	r.times = calloc(cap, sizeof(double));
	r.ctimes = calloc(cap, sizeof(double));
	r.persecs = calloc(cap, sizeof(double));
	r.keys = calloc(m->norder + 2, sizeof(*r.keys));
	int rc = 0;
	if (!r.names || !r.calls || !r.times || !r.ctimes || !r.persecs || !r.keys) {
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	r.nslots = m->nnames;
	for (size_t i = 0; i < m->nnames; i++) {
		r.names[i] = m->names.strs[i];
		r.calls[i] = (double)m->calls[i];
		r.times[i] = m->excl[i];
		r.ctimes[i] = m->incl[i];
	}
	if (m->norder)
		memcpy(r.keys, m->order, m->norder * sizeof(*r.keys));
	r.nkeys = m->norder;
	r.runtime = m->has_only_sub ? m->only_sub_runtime : 0;
	r.hz = m->hz;

	if (truthy(o->filter_re) && (rc = filter(&r, err)) < 0)
		goto out;
	if (truthy(o->group_re) && (rc = group(&r, err)) < 0)
		goto out;
	if (!m->has_only_sub) {
		double hz = m->hz ? m->hz : 1;
		r.runtime = (m->run_selected - m->overhead) / hz;
		if (!(r.runtime > 0))
			r.runtime = 0;
	}
	if (o->tree_only)
		goto out;
	if (o->sort == DPROF_SORT_AVG && !o->unsorted) {
		for (size_t x = 0; x < r.nkeys; x++) {
			uint32_t k = r.keys[x];
			double t = (o->inclusive ? r.ctimes[k] : r.times[k]) / r.hz;
			if (t != 0 && r.calls[k] == 0) {
				rc = proff_err_set(err, PROFF_EFORMAT, NULL, PROFF_NO_OFFSET,
						   "Illegal division by zero (row '%s' has no calls)", r.names[k]);
				goto out;
			}
			r.persecs[k] = t != 0 ? t / r.calls[k] : 0;
		}
	}
	if (!o->unsorted && !o->deep) {
		uint32_t *tmp = malloc((r.nkeys + 1) * sizeof(*tmp));
		if (!tmp) {
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			goto out;
		}
		rep_cmp_fn cmp = by_time;
		for (size_t i = 0; i < sizeof(sort_keys) / sizeof(sort_keys[0]); i++)
			if (sort_keys[i].key == o->sort)
				cmp = sort_keys[i].cmp;
		msort(r.keys, tmp, r.nkeys, cmp, &r, o->reverse);
		free(tmp);
	}
	if (o->deep)
		rc = display_tree(&r, err);
	else
		rc = display_table(&r, err);
out:
	(void)warnf;
	free(r.names); free(r.calls); free(r.times); free(r.ctimes); free(r.persecs); free(r.keys);
	free(r.l.buf);
	return rc;
}
