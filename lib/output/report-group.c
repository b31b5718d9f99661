/* report-group.c — perf report's group output (perf record -e '{a,b}'):
 * one report for an event group, its rows the leader's, each with the
 * overhead of every member event side by side (each of its own event's
 * total), as perf's hists__match / hists__link and its group-aware hpp
 * columns do. The rows' order: the leader's overhead, then each member's,
 * then perf's order of the leader's rows (hist_sort_report); a row only a
 * member has comes after the leader's, with 0.00% for the leader. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "proff/report.h"

/* qsort_r context: the rows' periods, nm per row */
typedef struct gsort { const hist *h; const uint64_t *per; size_t nm, ne; } gsort;

static int by_keys(const void *pa, const void *pb, void *ctx)
{
	const hist *h = ctx;
	const hist_entry *a = *(const hist_entry *const *)pa, *b = *(const hist_entry *const *)pb;
	return hist_entry_match_keys(h, a, b);
}

/* Rows of equal leader periods (Children and Self) in the leader's order:
 * by the members' Self, the group part of perf's comparator; the rest of
 * it (Children, callers first, the keys, and its tree's insertion order)
 * is the leader's order already */
static int members_cmp(const gsort *g, size_t a, size_t b)
{
	const uint64_t *x = g->per + a * g->nm, *y = g->per + b * g->nm;
	for (size_t k = 1; k < g->ne; k++)
		if (x[k] != y[k])
			return x[k] > y[k] ? -1 : 1;
	return 0;
}
static int by_members(const void *pa, const void *pb, void *ctx)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = members_cmp(ctx, a, b);
	return c ? c : a < b ? -1 : a > b;
}

/* The rows only members have (the leader's periods 0): by the members'
 * Self, then the keys (perf's dummy rows have no callchain for its
 * callers-first rule) */
static int by_dummy(const void *pa, const void *pb, void *ctx)
{
	const gsort *g = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	int c = members_cmp(g, a, b);
	if (c)
		return c;
	c = hist_entry_cmp_keys(g->h, &g->h->entries[a], &g->h->entries[b]);
	return c ? c : a < b ? -1 : a > b;
}

/* Sorted pointers to the shown rows of hist x */
static const hist_entry **sorted_rows(const hist *h, const hist *x, size_t *n)
{
	const hist_entry **v = malloc((x->n ? x->n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	*n = 0;
	for (size_t i = 0; i < x->n; i++)
		v[(*n)++] = &x->entries[i];
	qsort_r(v, *n, sizeof(*v), by_keys, (void *)h);
	return v;
}

int report_group_rows(hist *h, hist *const *members, size_t nmemb, uint64_t **periods, proff_error *err)
{
	size_t ne = nmemb + 1, nm = 3 * ne;       /* per row: Self of each event, then Children, then samples */
	*periods = NULL;
	size_t n0 = h->n;
	uint64_t *per = calloc((n0 ? n0 : 1) * nm, sizeof(uint64_t));
	if (!per)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	size_t cap_per = (n0 ? n0 : 1) * nm;      /* in periods */
	for (size_t i = 0; i < n0; i++) {
		per[i * nm] = h->entries[i].period;
		per[i * nm + ne] = h->entries[i].period_acc;
		per[i * nm + 2 * ne] = h->entries[i].nr_events;
	}
	for (size_t m = 0; m < nmemb; m++) {
		const hist *x = members[m];
		size_t nl, nx;
		/* the leader's rows now (with the rows an earlier member added) */
		const hist_entry **lv = sorted_rows(h, h, &nl), **xv = sorted_rows(h, x, &nx);
		size_t *lidx = lv ? malloc((nl ? nl : 1) * sizeof(size_t)) : NULL;
		if (!lv || !xv || !lidx) {
			free(lv);
			free(xv);
			free(lidx);
			free(per);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		for (size_t i = 0; i < nl; i++)
			lidx[i] = (size_t)(lv[i] - h->entries);
		free(lv);
		size_t li = 0;
		for (size_t xi = 0; xi < nx; xi++) {
			const hist_entry *e = xv[xi];
			int c = 1;
			while (li < nl && (c = hist_entry_match_keys(h, &h->entries[lidx[li]], e)) < 0)
				li++;
			if (li < nl && c == 0) {
				per[lidx[li] * nm + m + 1] += e->period;
				per[lidx[li] * nm + ne + m + 1] += e->period_acc;
				per[lidx[li] * nm + 2 * ne + m + 1] += e->nr_events;
				continue;
			}
			/* a row only this member has: the leader's with nothing of it */
			size_t r = h->n;
			if (PF_GROW(h->entries, h->cap, r + 1) < 0 || PF_GROW(per, cap_per, (r + 1) * nm) < 0) {
				free(xv);
				free(lidx);
				free(per);
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			}
			hist_entry d = *e;
			d.period = d.period_acc = d.nr_events = 0;
			d.cc_root = PF_NONE;
			h->entries[r] = d;
			h->n = r + 1;
			memset(per + r * nm, 0, nm * sizeof(uint64_t));
			per[r * nm + m + 1] = e->period;
			per[r * nm + ne + m + 1] = e->period_acc;
			per[r * nm + 2 * ne + m + 1] = e->nr_events;
		}
		free(xv);
		free(lidx);
	}
	/* the order: periods of the leader, then of each member */
	size_t n = h->n;
	size_t *ord = malloc((n ? n : 1) * sizeof(size_t));
	hist_entry *rows = malloc((n ? n : 1) * sizeof(hist_entry));
	uint64_t *out = malloc((n ? n : 1) * nm * sizeof(uint64_t));
	if (!ord || !rows || !out) {
		free(ord);
		free(rows);
		free(out);
		free(per);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	for (size_t i = 0; i < n; i++)
		ord[i] = i;
	gsort g = { h, per, nm, ne };
	for (size_t i = 0; i < n0;) {
		size_t j = i + 1;
		while (j < n0 && per[j * nm] == per[i * nm] && per[j * nm + ne] == per[i * nm + ne])
			j++;
		if (j - i > 1)
			qsort_r(ord + i, j - i, sizeof(size_t), by_members, &g);
		i = j;
	}
	/* the rows only members have, where perf's tree puts them: after
	 * every row of the leader with a period (theirs are 0) */
	qsort_r(ord + n0, n - n0, sizeof(size_t), by_dummy, &g);
	for (size_t i = 0; i < n; i++) {
		rows[i] = h->entries[ord[i]];
		memcpy(out + i * nm, per + ord[i] * nm, nm * sizeof(uint64_t));
	}
	free(h->entries);
	h->entries = rows;
	h->cap = n;
	free(ord);
	free(per);
	*periods = out;
	return 0;
}
