/* report.c — `perf report --stdio`-compatible text and JSON output of a hist:
 * the header block, Children/Self/Overhead columns, sort-key columns with
 * perf's widths and padding, and call graphs (graph, fractal, flat, folded)
 * laid out as perf's stdio browser prints them.
 */
#include "proff/perfdata.h"
#include "proff/report.h"
#include "report-int.h"

#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>

void report_fmt_init(report_fmt *f)
{
	memset(f, 0, sizeof(*f));
	f->cc_threshold = 0.5;
}

static uint64_t hist_total(const hist *h, const report_fmt *f)
{
	return f->relative ? h->total_non_filtered_period : h->total_period;
}

/* ---- call graph ------------------------------------------------------------------- */

typedef struct gctx {
	FILE *out;
	hist *h;
	const report_fmt *f;
	uint64_t total;            /* hists total (graph/flat/folded) */
} gctx;

static uint64_t cumul(const hist *h, uint32_t n)
{
	return h->cc_nodes[n].hit + h->cc_nodes[n].children_hit;
}

static size_t nr_children(const hist *h, uint32_t n)
{
	size_t k = 0;
	for (uint32_t c = h->cc_nodes[n].first_child; c != PF_NONE; c = h->cc_nodes[c].next_sibling)
		k++;
	return k;
}


static const char *frame_name(const hist *h, uint32_t cc_node, char *buf, size_t len)
{
	if (h->bh_nodes)
		return report_bh_frame_name(h, cc_node, !h->bh_no_counts, buf, len);
	const hist_cc_node *cn = &h->cc_nodes[cc_node];
	uint32_t loc = cn->loc;
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[loc];
	if (l->sym != PF_NONE)
		return pf_str(p, p->syms[l->sym].name);
	snprintf(buf, len, "%#" PRIx64, l->ip);
	return buf;
}

typedef struct child_ref { uint32_t node; uint64_t cumul; uint32_t order; } child_ref;

static int child_cmp(const void *pa, const void *pb)
{
	const child_ref *a = pa, *b = pb;
	if (a->cumul != b->cumul)
		return a->cumul > b->cumul ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* perf keeps a node's children in a tree ordered by (dso, symbol start or
 * ip) descending; ties of the sorted output keep that order. `order`
 * ranks a child in it. */
typedef struct ckey { uint32_t node; uint32_t dso; uint64_t addr; const char *name; bool inlined; } ckey;

static int ckey_cmp(const void *pa, const void *pb)
{
	const ckey *a = pa, *b = pb;
	/* perf compares an inlined entry with another by name */
	if ((a->inlined || b->inlined) && a->name && b->name) {
		int c = strcmp(a->name, b->name);
		return c > 0 ? -1 : c < 0;
	}
	if (a->dso != b->dso)
		return a->dso > b->dso ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr > b->addr ? -1 : 1;
	return 0;
}

static ckey node_key(const hist *h, uint32_t n)
{
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[h->cc_nodes[n].loc];
	ckey k = { n, l->dso == PF_NONE ? 0 : l->dso + 1, l->ip, NULL, false };
	if (l->sym != PF_NONE && !h->bh_nodes) {   /* --branch-history: by address */
		k.addr = p->syms[l->sym].start;
		k.name = pf_str(p, p->syms[l->sym].name);
		k.inlined = pf_sym_is_inlined(p, l->sym);
	}
	return k;
}

/* children of n in perf's tree order; *out to be freed */
static size_t ordered_children(const hist *h, uint32_t n, uint32_t **out)
{
	size_t k = 0;
	for (uint32_t c = h->cc_nodes[n].first_child; c != PF_NONE; c = h->cc_nodes[c].next_sibling)
		k++;
	*out = NULL;
	if (!k)
		return 0;
	ckey *v = malloc(k * sizeof(*v));
	uint32_t *r = malloc(k * sizeof(*r));
	if (!v || !r) {
		free(v);
		free(r);
		return 0;
	}
	size_t i = 0;
	for (uint32_t c = h->cc_nodes[n].first_child; c != PF_NONE; c = h->cc_nodes[c].next_sibling)
		v[i++] = node_key(h, c);
	qsort(v, k, sizeof(*v), ckey_cmp);
	for (i = 0; i < k; i++)
		r[i] = v[i].node;
	free(v);
	*out = r;
	return k;
}

/* Children of run-end node n that pass min_hit, sorted by cumulative hits. */
static size_t sorted_children(const hist *h, uint32_t n, uint64_t min_hit, child_ref **out)
{
	size_t k = nr_children(h, n), m = 0;
	*out = NULL;
	if (!k)
		return 0;
	child_ref *v = malloc(k * sizeof(*v));
	uint32_t *ord;
	if (!v || ordered_children(h, n, &ord) != k) {
		free(v);
		return 0;
	}
	for (uint32_t i = 0; i < k; i++) {
		uint32_t c = ord[i];
		uint64_t cu = cumul(h, c);
		if (cu >= min_hit)
			v[m++] = (child_ref){ c, cu, i };
	}
	free(ord);
	qsort(v, m, sizeof(*v), child_cmp);
	*out = v;
	return m;
}

static uint64_t min_hit_for(const gctx *g, uint32_t n)
{
	if (g->f->cc_mode == CC_FRACTAL)
		return (uint64_t)ceil((double)g->h->cc_nodes[n].children_hit * g->f->cc_threshold / 100.0);
	return (uint64_t)((double)g->total * (g->f->cc_threshold / 100.0));
}

static void left_margin(FILE *out, int lm)
{
	fputs("            ", out);
	for (int i = 0; i < lm; i++)
		fputc(' ', out);
}

/* perf's percent_color: red from 5 %, green above 0.5 %, else none (NULL) */
static const char *pct_color(double pct)
{
	if (fabs(pct) >= 5.0)
		return REPORT_COLOR_RED;
	if (fabs(pct) > 0.5)
		return REPORT_COLOR_GREEN;
	return NULL;
}

static void print_value(const gctx *g, uint64_t period, uint64_t count, uint64_t total)
{
	switch (g->f->cc_value) {
	case CCV_PERIOD: fprintf(g->out, "%" PRIu64, period); break;
	case CCV_COUNT: fprintf(g->out, "%" PRIu64, count); break;
	default: {
		double pct = total ? (double)period * 100.0 / (double)total : 0.0;
		const char *c = g->f->color ? pct_color(pct) : NULL;
		fprintf(g->out, "%s%.2f%%%s", c ? c : "", pct, c ? REPORT_COLOR_RESET : "");
	}
	}
}

static uint64_t cumul_count(const hist *h, uint32_t n)
{
	uint64_t c = h->cc_nodes[n].count;
	for (uint32_t k = h->cc_nodes[n].first_child; k != PF_NONE; k = h->cc_nodes[k].next_sibling)
		c += cumul_count(h, k);
	return c;
}

/* perf keeps the graph's pipes in an int and shifts 1 << depth: on x86 the
 * shift count is taken mod 32, so below depth 32 the pipes of the levels
 * 32 up reappear (deep recursions draw so); the same bits here */
#define DEPTH_BIT(d) (1u << ((unsigned)(d) & 31))

static void graph_line(const gctx *g, int depth, uint32_t mask, int lm)
{
	left_margin(g->out, lm);
	for (int i = 0; i < depth; i++)
		fputs((mask & DEPTH_BIT(i)) ? "|          " : "           ", g->out);
	fputc('\n', g->out);
}

static void graph_entry(const gctx *g, uint32_t run_first, const char *name, int depth, uint32_t mask,
			int period_idx, uint64_t total, int lm, uint64_t value_period, uint64_t value_count)
{
	left_margin(g->out, lm);
	for (int i = 0; i < depth; i++) {
		fputc((mask & DEPTH_BIT(i)) ? '|' : ' ', g->out);
		if (!period_idx && i == depth - 1) {
			fputs("--", g->out);
			print_value(g, value_period, value_count, total);
			fputs("--", g->out);
		} else {
			fputs("          ", g->out);
		}
	}
	(void)run_first;
	fputs(name, g->out);
	fputc('\n', g->out);
}

static bool graph_children(const gctx *g, uint32_t parent_end, uint64_t total, int depth, uint32_t mask, int lm)
{
	hist *h = g->h;
	child_ref *kids;
	size_t nk = sorted_children(h, parent_end, min_hit_for(g, parent_end), &kids);
	uint64_t remaining = total;
	uint32_t new_mask = mask;
	unsigned printed = 0;
	uint64_t cumul_cnt = 0;
	char buf[1024];
	for (size_t i = 0; i < nk; i++) {
		uint32_t c = kids[i].node;
		uint64_t cu = kids[i].cumul;
		remaining -= cu;
		if (g->f->cc_value == CCV_COUNT)
			cumul_cnt += cumul_count(h, c);
		bool last = i + 1 == nk;
		if (last && (g->f->cc_mode != CC_FRACTAL || !remaining))
			new_mask &= ~DEPTH_BIT(depth - 1);
		graph_line(g, depth, mask, lm);
		/* the run: c, and single children while the chain does not end */
		int idx = 0;
		uint32_t n = c;
		for (;;) {
			graph_entry(g, c, frame_name(h, n, buf, sizeof(buf)), depth, new_mask, idx++, total, lm,
				    cu, g->f->cc_value == CCV_COUNT ? cumul_count(h, c) : 0);
			if (h->cc_nodes[n].hit != 0 || nr_children(h, n) != 1)
				break;
			n = h->cc_nodes[n].first_child;
		}
		uint64_t new_total = g->f->cc_mode == CC_FRACTAL ? h->cc_nodes[n].children_hit : total;
		graph_children(g, n, new_total, depth + 1, new_mask | DEPTH_BIT(depth), lm);
		if (++printed == g->f->cc_print_limit)
			break;
	}
	if (g->f->cc_mode == CC_FRACTAL && nk && remaining && remaining != total) {
		new_mask &= ~DEPTH_BIT(depth - 1);
		uint64_t rem_count = 0;
		if (g->f->cc_value == CCV_COUNT) {
			uint64_t pc = 0;
			for (uint32_t k = h->cc_nodes[parent_end].first_child; k != PF_NONE; k = h->cc_nodes[k].next_sibling)
				pc += cumul_count(h, k);
			if (pc <= cumul_cnt) {
				free(kids);
				return true;
			}
			rem_count = pc - cumul_cnt;
		}
		/* --branch-history: the line's pseudo-entry has no branch counts */
		graph_entry(g, PF_NONE, h->bh_nodes && !h->bh_no_counts ? "[...] (calltrace)" : "[...]", depth, new_mask, 0, total, lm,
			    remaining, rem_count);
	}
	free(kids);
	return nk > 0;
}

static int print_graph(const gctx *g, const hist_entry *e)
{
	hist *h = g->h;
	uint64_t parent_samples = g->f->children ? e->period_acc : e->period;
	uint64_t total = g->total;
	uint32_t root = e->cc_root;
	child_ref *kids;
	size_t nk = sorted_children(h, root, min_hit_for(g, root), &kids);
	bool wrote = false;
	int lm = 0;
	uint32_t start = root;
	char buf[1024];
	if (nk && !(nk > 1 || kids[0].cumul != parent_samples)) {
		/* a single path from the root: print it without a percentage */
		bool printed = false;
		int i = 0;
		unsigned lines = 0;
		uint32_t n = kids[0].node;
		for (;;) {
			if (!(i++ == 0 && g->f->sort_starts_with_sym)) {
				if (!printed) {
					left_margin(g->out, lm);
					fputs("|\n", g->out);
					left_margin(g->out, lm);
					fputs("---", g->out);
					lm += 3;
					printed = true;
				} else {
					left_margin(g->out, lm);
				}
				fprintf(g->out, "%s\n", frame_name(h, n, buf, sizeof(buf)));
				wrote = true;
				if (++lines == g->f->cc_print_limit) {
					/* perf stops printing the run's frames but goes
					 * on with the children of its last one */
					while (h->cc_nodes[n].hit == 0 && nr_children(h, n) == 1)
						n = h->cc_nodes[n].first_child;
					break;
				}
			}
			if (h->cc_nodes[n].hit != 0 || nr_children(h, n) != 1)
				break;
			n = h->cc_nodes[n].first_child;
		}
		start = n;
	}
	free(kids);
	if (g->f->cc_mode == CC_FRACTAL)
		total = parent_samples;
	if (graph_children(g, start, total, 1, 1, lm) || wrote)
		fputc('\n', g->out);
	return 0;
}

/* flat / folded: every node where a chain ends (hit > 0) */
typedef struct flat_ref { uint32_t node; uint64_t hit; uint32_t order; } flat_ref;

static int flat_cmp(const void *pa, const void *pb)
{
	const flat_ref *a = pa, *b = pb;
	if (a->hit != b->hit)
		return a->hit > b->hit ? -1 : 1;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* post-order over perf's tree order: a node's children, then the node */
static void collect_flat(const hist *h, uint32_t n, uint64_t min_hit, flat_ref **v, size_t *nv, size_t *cap)
{
	uint32_t *ord;
	size_t k = ordered_children(h, n, &ord);
	for (size_t i = 0; i < k; i++) {
		uint32_t c = ord[i];
		collect_flat(h, c, min_hit, v, nv, cap);
		if (h->cc_nodes[c].hit && h->cc_nodes[c].hit >= min_hit) {
			if (PF_GROW(*v, *cap, *nv + 1) < 0)
				break;
			(*v)[*nv] = (flat_ref){ c, h->cc_nodes[c].hit, (uint32_t)*nv };
			(*nv)++;
		}
	}
	free(ord);
}

static void print_path(const gctx *g, uint32_t n, bool folded, bool *first)
{
	hist *h = g->h;
	if (h->cc_nodes[n].parent == PF_NONE)
		return;
	print_path(g, h->cc_nodes[n].parent, folded, first);
	/* perf's flat and folded printers skip a frame whose address reads
	 * as a context word: the unwinder's 0xffffffffffffffff (the graph
	 * prints it) */
	if (!h->bh_nodes && h->prof->locs[h->cc_nodes[n].loc].ip >= PD_CONTEXT_MAX)
		return;
	char buf[1024];
	const char *nm = h->bh_nodes ? report_bh_frame_name(h, n, false, buf, sizeof(buf)) : frame_name(h, n, buf, sizeof(buf));
	if (folded) {
		if (!*first)
			fputc(';', g->out);
		fputs(nm, g->out);
		*first = false;
	} else {
		fprintf(g->out, "                %s\n", nm);
	}
}

static void print_flat(const gctx *g, const hist_entry *e, bool folded)
{
	hist *h = g->h;
	flat_ref *v = NULL;
	size_t nv = 0, cap = 0;
	uint64_t min_hit = (uint64_t)((double)g->total * (g->f->cc_threshold / 100.0));
	collect_flat(h, e->cc_root, min_hit, &v, &nv, &cap);
	if (nv)
		qsort(v, nv, sizeof(*v), flat_cmp);
	for (size_t i = 0; i < nv; i++) {
		uint32_t n = v[i].node;
		if (folded) {
			print_value(g, h->cc_nodes[n].hit, h->cc_nodes[n].count, g->total);
			fputc(' ', g->out);
			bool first = true;
			print_path(g, n, true, &first);
			fputc('\n', g->out);
		} else {
			fputs("           ", g->out);
			print_value(g, cumul(h, n), g->f->cc_value == CCV_COUNT ? cumul_count(h, n) : 0, g->total);
			fputc('\n', g->out);
			bool first = true;
			print_path(g, n, false, &first);
			fputc('\n', g->out);
		}
		if (g->f->cc_print_limit && i + 1 == g->f->cc_print_limit)
			break;
	}
	free(v);
}

/* ---- rows --------------------------------------------------------------------------- */

typedef struct col {
	const char *header;
	int width;
	int key;            /* hist key id, or a COL_* value */
} col;

enum { COL_CHILDREN = -1, COL_SELF = -2, COL_SAMPLES = -3, COL_CALLS = -4, COL_TOTAL_T = -5,
       COL_SELF_T = -6, COL_AVG_T = -7, COL_MIN_T = -8, COL_MAX_T = -9, COL_PERIOD = -10 };

void report_fmt_time(char *buf, size_t len, double ns)
{
	static const char *units[] = { "ns", "us", "ms", "s" };
	int u = 0;
	while (u < 3 && ns >= 999.9995) {
		ns /= 1000.0;
		u++;
	}
	snprintf(buf, len, "%7.3f %2s", ns, units[u]);
}

/* A key that is one of the report's own columns: perf shows it once, where
 * the report has it (its Overhead or Self, Children, -n's Samples,
 * --show-total-period's Period) */
static bool key_is_shown_column(const hist_key_def *k, const report_fmt *f)
{
	return k->hpp == HKP_OVERHEAD || (k->hpp == HKP_CHILDREN && f->children) ||
	       (k->hpp == HKP_SAMPLES && f->show_nr_samples) || (k->hpp == HKP_PERIOD && f->show_total_period);
}

/* -F: the fields' columns in their order, then the sort keys they lack */
static size_t field_cols(hist *h, const report_fmt *f, col *cols)
{
	int ids[HIST_MAX_KEYS];
	proff_error err;
	int nf = hist_parse_sort(f->fields, ids, HIST_MAX_KEYS, &err);
	size_t n = 0;
	for (int i = 0; i < nf; i++)
		cols[n++] = (col){ hist_keys[ids[i]].header, (int)hist_key_col_width(h, ids[i]), ids[i] };
	for (int i = 0; i < h->nkeys; i++) {
		bool in = false;
		for (int j = 0; j < nf; j++)
			in |= ids[j] == h->keys[i];
		if (!in)
			cols[n++] = (col){ hist_keys[h->keys[i]].header, (int)hist_key_col_width(h, h->keys[i]),
					   h->keys[i] };
	}
	return n;
}

static size_t build_cols(hist *h, const report_fmt *f, col *cols)
{
	size_t n = 0;
	if (f->fields)
		return field_cols(h, f, cols);
	if (f->children) {
		int w = f->group_n > 1 ? 8 * (int)f->group_n : 8;
		cols[n++] = (col){ "Children", w, -1 };
		cols[n++] = (col){ "Self", w, -2 };
	} else {
		cols[n++] = (col){ "Overhead", f->group_n > 1 ? 8 * (int)f->group_n : 8, -2 };
	}
	int gw = f->group_n > 1 ? 12 * (int)f->group_n : 12;
	if (f->show_nr_samples)
		cols[n++] = (col){ "Samples", gw, COL_SAMPLES };
	if (f->show_total_period)
		cols[n++] = (col){ "Period", gw, COL_PERIOD };
	if (f->exact) {
		/* uftrace's columns: times of the row's calls */
		if (f->children)
			cols[n++] = (col){ "Total time", 10, COL_TOTAL_T };
		cols[n++] = (col){ "Self time", 10, COL_SELF_T };
		cols[n++] = (col){ "Calls", 10, COL_CALLS };
		cols[n++] = (col){ "Avg total", 10, COL_AVG_T };
		cols[n++] = (col){ "Min total", 10, COL_MIN_T };
		cols[n++] = (col){ "Max total", 10, COL_MAX_T };
	}
	bool all_elided = true;
	for (int i = 0; i < h->nkeys; i++)
		if (!f->elide[h->keys[i]])
			all_elided = false;
	for (int i = 0; i < h->nkeys; i++) {
		int k = h->keys[i];
		if (f->elide[k] && !all_elided)
			continue;
		if (key_is_shown_column(&hist_keys[k], f))
			continue;
		cols[n++] = (col){ hist_keys[k].header, (int)hist_key_col_width(h, k), k };
	}
	return n;
}

/* not filtered out, and above --percent-limit (Children or Self as shown) */
static bool row_shown(const hist_entry *e, const report_fmt *f, uint64_t total)
{
	if (e->filtered)
		return false;
	uint64_t v = f->children ? e->period_acc : e->period;
	return !(f->percent_limit > 0 && total && (double)v * 100.0 / (double)total < f->percent_limit);
}

/* "%*.2f%%" of v/total into b (room for width + 32 bytes); its length.
 * Rows are many (10^5 in a children report): the digits are made here
 * unless the value lies within 1e-6 of a rounding tie in its third
 * decimal, where printf's exact rounding decides. */
static size_t fmt_pct(char *b, uint64_t v, uint64_t total, int width)
{
	double pct = total ? (double)v * 100.0 / (double)total : 0.0;
	double x = pct * 100.0, fl = floor(x);
	if (pct < 1e9 && fabs(x - fl - 0.5) > 1e-6) {
		uint64_t c = (uint64_t)fl + (x - fl > 0.5);
		char tmp[32], *e = tmp + sizeof(tmp), *d = e;
		*--d = '%';
		*--d = (char)('0' + c % 10);
		*--d = (char)('0' + c / 10 % 10);
		*--d = '.';
		uint64_t ip = c / 100;
		do {
			*--d = (char)('0' + ip % 10);
			ip /= 10;
		} while (ip);
		size_t k = (size_t)(e - d), pad = width > (int)k ? (size_t)width - k : 0;
		memset(b, ' ', pad);
		memcpy(b + pad, d, k);
		return pad + k;
	}
	int n = snprintf(b, (size_t)width + 32, "%*.2f%%", width - 1, pct);
	return n < 0 ? 0 : n < width + 32 ? (size_t)n : (size_t)width + 31;
}

/* fmt_pct, in perf's percent colour when color is set (the cell's padding
 * inside the colour, as perf) */
static size_t put_pct(char *b, uint64_t v, uint64_t total, int width, bool color)
{
	const char *c = color ? pct_color(total ? (double)v * 100.0 / (double)total : 0.0) : NULL;
	if (!c)
		return fmt_pct(b, v, total, width);
	size_t k = strlen(c), n;
	memcpy(b, c, k);
	n = k + fmt_pct(b + k, v, total, width);
	memcpy(b + n, REPORT_COLOR_RESET, sizeof(REPORT_COLOR_RESET) - 1);
	return n + sizeof(REPORT_COLOR_RESET) - 1;
}

/* With a calibration file: what taking the samples cost the profiled
 * program, samples x cost per sample; for time events also as a share of the
 * sampled time. */
static void print_recorder_cost(FILE *out, const hist *h, const report_fmt *f)
{
	const pf_event *e = &h->prof->events[h->evsel];
	double per = e->has_callchain && f->sample_cg_cost_ns > 0 ? f->sample_cg_cost_ns : f->sample_cost_ns;
	if (!f->calibration || per <= 0)
		return;
	double cost = per * (double)h->nr_samples;
	char a[32], b[32];
	report_fmt_time(a, sizeof(a), per);
	report_fmt_time(b, sizeof(b), cost);
	fprintf(out, "# Recorder cost (%s): %" PRIu64 " samples x %s = %s", f->calibration, h->nr_samples,
		a + strspn(a, " "), b + strspn(b, " "));
	size_t nl = strcspn(e->name, ":");
	bool is_time = (nl == 9 && !strncmp(e->name, "cpu-clock", 9)) ||
		       (nl == 10 && !strncmp(e->name, "task-clock", 10));
	if (is_time && h->total_period)
		fprintf(out, " (%.2f%% of the sampled time)", cost * 100.0 / (double)h->total_period);
	fputc('\n', out);
}

/* The rows from..to-1 with their call graphs. The rows' lines are put
 * together in a buffer of this function's and written a buffer at a time
 * (a call graph's lines go to out directly, after the buffer). */
#define ROWS_BUF ((size_t)64 << 10)
#define ROWS_PIECE ((size_t)4096 + 64)     /* the most one column adds */

static void print_rows(FILE *out, hist *h, const report_fmt *f, const col *cols, size_t ncols,
		       uint64_t total, size_t from, size_t to)
{
	gctx g = { out, h, f, total };
	char buf[4096], line[ROWS_BUF];
	size_t ln = 0;
#define ROOM() do { if (ln + ROWS_PIECE > ROWS_BUF) { fwrite(line, 1, ln, out); ln = 0; } } while (0)
#define PUT(str, k) do { size_t k_ = (k); memcpy(line + ln, (str), k_); ln += k_; } while (0)
	for (size_t i = from; i < to; i++) {
		hist_entry *e = &h->entries[i];
		if (!row_shown(e, f, total))
			continue;
		ROOM();
		PUT("  ", 2);
		for (size_t c = 0; c < ncols; c++) {
			if (c) {
				ROOM();
				PUT("  ", 2);
			}
			int w = cols[c].width < 2048 ? cols[c].width : 2048;
			int n = 0;
			switch (cols[c].key) {
			case COL_CHILDREN:
				if (f->group_n > 1) {
					const uint64_t *gp = f->group_periods + i * 3 * f->group_n + f->group_n;
					for (size_t k = 0; k < f->group_n; k++)
						ln += put_pct(line + ln, gp[k], f->group_totals[k], 8, f->color);
					continue;
				}
				ln += put_pct(line + ln, e->period_acc, total, w, f->color);
				continue;
			case COL_SELF:
				if (f->group_n > 1) {
					/* perf's group columns: each event's share of its own total */
					const uint64_t *gp = f->group_periods + i * 3 * f->group_n;
					for (size_t k = 0; k < f->group_n; k++)
						ln += put_pct(line + ln, gp[k], f->group_totals[k], 8, f->color);
					continue;
				}
				ln += put_pct(line + ln, e->period, total, w, f->color);
				continue;
			case COL_PERIOD:
			case COL_SAMPLES:
				if (f->group_n > 1 && !f->exact) {
					/* a group: one value per event, 12 columns each */
					size_t base = cols[c].key == COL_PERIOD ? 0 : 2 * f->group_n;
					const uint64_t *gp = f->group_periods + i * 3 * f->group_n + base;
					for (size_t k = 0; k < f->group_n; k++)
						ln += (size_t)snprintf(line + ln, 16, "%12" PRIu64, gp[k]);
					continue;
				}
				if (cols[c].key == COL_PERIOD) {
					n = snprintf(buf, sizeof(buf), "%*" PRIu64, w, e->period);
					break;
				}
				/* fall through */
			case COL_CALLS: n = snprintf(buf, sizeof(buf), "%*" PRIu64, w, e->nr_events); break;
			case COL_TOTAL_T: report_fmt_time(buf, sizeof(buf), (double)e->period_acc); n = -1; break;
			case COL_SELF_T: report_fmt_time(buf, sizeof(buf), (double)e->period); n = -1; break;
			case COL_AVG_T:
				report_fmt_time(buf, sizeof(buf), e->nr_events ? (double)e->ex_incl / (double)e->nr_events : 0);
				n = -1;
				break;
			case COL_MIN_T: report_fmt_time(buf, sizeof(buf), (double)e->ex_min); n = -1; break;
			case COL_MAX_T: report_fmt_time(buf, sizeof(buf), (double)e->ex_max); n = -1; break;
			default: {
				const hist_key_def *kd = &hist_keys[cols[c].key];
				if (f->color && (kd->hpp == HKP_OVERHEAD || kd->hpp == HKP_MODE ||
						 (kd->hpp == HKP_CHILDREN && h->opts.children))) {
					/* perf's percent keys, coloured as its Overhead column */
					uint64_t v = kd->hpp == HKP_OVERHEAD ? e->period :
						     kd->hpp == HKP_CHILDREN ? e->period_acc : kd->perf_value(h, e);
					ln += put_pct(line + ln, v, total, w, true);
					continue;
				}
				bool last = c + 1 == ncols;
				n = hist_keys[cols[c].key].print(h, e, buf, sizeof(buf), cols[c].width, !last, 0);
			}
			}
			/* a key's length as printed (a printf-style count may say
			 * more than the buffer held) */
			if (n < 0 || (size_t)n >= sizeof(buf) || buf[n] != '\0')
				n = (int)strlen(buf);
			PUT(buf, (size_t)n);
		}
		line[ln++] = '\n';
		if (f->cc_mode != CC_NONE && e->cc_root != PF_NONE) {
			fwrite(line, 1, ln, out);
			ln = 0;
			if (f->cc_mode == CC_GRAPH || f->cc_mode == CC_FRACTAL)
				print_graph(&g, e);
			else
				print_flat(&g, e, f->cc_mode == CC_FOLDED);
		}
	}
#undef PUT
#undef ROOM
	fwrite(line, 1, ln, out);
}

/* A children report prints some 10^5 rows: the second half is formatted
 * into memory on another thread while this one prints the first (the
 * printing reads the hist and the profile only). From this many rows
 * (report_fmt.split_rows): */
#define PRINT_SPLIT_MIN 20000

typedef struct print_half {
	hist *h;
	const report_fmt *f;
	const col *cols;
	size_t ncols, from, to;
	uint64_t total;
	char *buf;
	size_t len;
	bool ok;
} print_half;

static void *print_half_run(void *arg)
{
	print_half *ph = arg;
	FILE *m = open_memstream(&ph->buf, &ph->len);
	if (!m)
		return NULL;
	__fsetlocking(m, FSETLOCKING_BYCALLER);    /* this thread's own stream */
	print_rows(m, ph->h, ph->f, ph->cols, ph->ncols, ph->total, ph->from, ph->to);
	ph->ok = fclose(m) == 0;
	return NULL;
}

int report_print_hist(FILE *out, hist *h, const report_fmt *f, uint64_t nr_lost)
{
	const pf_profile *p = h->prof;
	uint64_t total = hist_total(h, f);
	col cols[HIST_MAX_KEYS + 12];
	size_t ncols = build_cols(h, f, cols);
	if (!f->quiet) {
		if (!f->not_first_event)
			fprintf(out, "# Total Lost Samples: %" PRIu64 "\n#\n", nr_lost);
		else
			fputs("\n\n", out);
		uint64_t ns = f->relative ? h->nr_non_filtered_samples : h->nr_samples;
		uint64_t count = total;     /* a group's: every event's */
		if (f->group_n > 1) {
			ns = count = 0;
			for (size_t k = 0; k < f->group_n; k++) {
				ns += f->group_samples[k];
				count += f->group_totals[k];
			}
		}
		char unit = ' ';
		if (ns > 1000) { ns /= 1000; unit = 'K'; }
		if (ns > 1000) { ns /= 1000; unit = 'M'; }
		if (ns > 1000) { ns /= 1000; unit = 'G'; }
		if (f->group_n > 1)
			fprintf(out, "# Samples: %" PRIu64 "%c of events '%s'", ns, unit, f->group_desc);
		else
			fprintf(out, "# Samples: %" PRIu64 "%c of event%s '%s'", ns, unit, f->events_plural ? "s" : "",
				p->events[h->evsel].name);
		if (f->time_spec)
			fprintf(out, " (time slices: %s)", f->time_spec);
		fputc('\n', out);
		fprintf(out, "# Event count (approx.): %" PRIu64 "\n", count);
		print_recorder_cost(out, h, f);
		fputs("#\n", out);
		fputs("# ", out);
		for (size_t i = 0; i < ncols; i++) {
			if (i)
				fputs("  ", out);
			if (cols[i].key < 0)
				fprintf(out, "%*s", cols[i].width, cols[i].header);
			else
				fprintf(out, "%-*s", cols[i].width, cols[i].header);
		}
		fputs("\n# ", out);
		for (size_t i = 0; i < ncols; i++) {
			if (i)
				fputs("  ", out);
			for (int k = 0; k < cols[i].width; k++)
				fputc('.', out);
		}
		fputs("\n#\n", out);
	}
	size_t mid = h->n;
	print_half ph = { h, f, cols, ncols, 0, h->n, total, NULL, 0, false };
	pthread_t th;
	bool threaded = false;
	size_t split = f->split_rows ? f->split_rows : PRINT_SPLIT_MIN;
	if (h->n >= split && h->n >= 2) {
		mid = h->n / 2;
		ph.from = mid;
		threaded = pthread_create(&th, NULL, print_half_run, &ph) == 0;
		if (!threaded)
			mid = h->n;
	}
	print_rows(out, h, f, cols, ncols, total, 0, mid);
	if (threaded) {
		pthread_join(th, NULL);
		if (ph.ok)
			fwrite(ph.buf, 1, ph.len, out);
		else
			print_rows(out, h, f, cols, ncols, total, mid, h->n);
		free(ph.buf);
	}
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------- */

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* A row's call graph as a JSON tree: the nodes the text graph shows (the
 * same threshold, order and print limit), one frame each; percent as the
 * text prints it (of the total; fractal: of the parent). */
static void json_chain(const gctx *g, uint32_t parent, uint64_t total)
{
	hist *h = g->h;
	const pf_profile *p = h->prof;
	child_ref *kids;
	size_t nk = sorted_children(h, parent, min_hit_for(g, parent), &kids);
	fputc('[', g->out);
	for (size_t i = 0; i < nk; i++) {
		if (g->f->cc_print_limit && i == g->f->cc_print_limit)
			break;
		uint32_t c = kids[i].node;
		const pf_loc *l = &p->locs[h->cc_nodes[c].loc];
		fputs(i ? ",{\"name\":" : "{\"name\":", g->out);
		char buf[32];
		json_str(g->out, frame_name(h, c, buf, sizeof(buf)));   /* as the text */
		if (l->dso != PF_NONE) {
			fputs(",\"dso\":", g->out);
			json_str(g->out, pf_str(p, p->dsos[l->dso].short_name));
		}
		fprintf(g->out, ",\"period\":%" PRIu64 ",\"count\":%" PRIu64 ",\"percent\":%.6f", kids[i].cumul,
			cumul_count(h, c), total ? (double)kids[i].cumul * 100.0 / (double)total : 0.0);
		if (h->cc_nodes[c].first_child != PF_NONE) {
			fputs(",\"children\":", g->out);
			json_chain(g, c, g->f->cc_mode == CC_FRACTAL ? h->cc_nodes[c].children_hit : total);
		}
		fputc('}', g->out);
	}
	fputc(']', g->out);
	free(kids);
}

void report_json_begin(FILE *out, const char *file)
{
	fprintf(out, "{\"schema\":\"%s\",\"file\":", REPORT_JSON_SCHEMA);
	json_str(out, file);
	fputs(",\"events\":[\n", out);
}

void report_json_end(FILE *out)
{
	fputs("\n]}\n", out);
}

int report_print_json(FILE *out, hist *h, const report_fmt *f, bool first_event)
{
	const pf_profile *p = h->prof;
	uint64_t total = hist_total(h, f);
	fprintf(out, "%s{\"event\":", first_event ? "" : ",\n");
	json_str(out, p->events[h->evsel].name);
	fprintf(out, ",\"total_period\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"children\":%s,\"exact\":%s,\"rows\":[",
		total, f->relative ? h->nr_non_filtered_samples : h->nr_samples,
		f->children ? "true" : "false", f->exact ? "true" : "false");
	bool first = true;
	char buf[4096];
	for (size_t i = 0; i < h->n; i++) {
		hist_entry *e = &h->entries[i];
		if (!row_shown(e, f, total))
			continue;
		fprintf(out, "%s\n  {", first ? "" : ",");
		first = false;
		fprintf(out, "\"self\":%.6f,\"self_period\":%" PRIu64,
			total ? (double)e->period * 100.0 / (double)total : 0.0, e->period);
		if (f->children)
			fprintf(out, ",\"children\":%.6f,\"children_period\":%" PRIu64,
				total ? (double)e->period_acc * 100.0 / (double)total : 0.0, e->period_acc);
		fprintf(out, ",\"samples\":%" PRIu64, e->nr_events);
		if (f->exact) {
			fprintf(out, ",\"calls\":%" PRIu64 ",\"self_ns\":%" PRIu64, e->nr_events, e->period);
			if (f->children)
				fprintf(out, ",\"total_ns\":%" PRIu64, e->period_acc);
			fprintf(out, ",\"avg_total_ns\":%.1f,\"min_total_ns\":%" PRIu64 ",\"max_total_ns\":%" PRIu64,
				e->nr_events ? (double)e->ex_incl / (double)e->nr_events : 0.0, e->ex_min, e->ex_max);
		}
		for (int k = 0; k < h->nkeys; k++) {
			int key = h->keys[k];
			fprintf(out, ",\"%s\":", hist_keys[key].name);
			switch (key) {
			case HK_PID:
			case HK_TID:
				fprintf(out, "%d", (int32_t)e->tid);   /* -1: a sample no task owned */
				break;
			case HK_CPU:
				fprintf(out, "%d", e->cpu == PF_NONE ? -1 : (int)e->cpu);
				break;
			case HK_SYM: {
				const char *nm = hist_sym_name(h, e);
				if (nm) {
					json_str(out, nm);
				} else {
					snprintf(buf, sizeof(buf), "0x%016" PRIx64, e->addr);
					json_str(out, buf);
				}
				break;
			}
			default:
				hist_keys[key].print(h, e, buf, sizeof(buf), 0, false, 0);
				json_str(out, buf);
			}
		}
		/* every row has it when the report prints graphs (docs/json.md):
		 * a row below the threshold, whose tree the engine may not
		 * have built, has an empty one */
		if (f->cc_mode != CC_NONE) {
			gctx g = { out, h, f, total };
			fputs(",\"callchain\":", out);
			if (e->cc_root != PF_NONE)
				json_chain(&g, e->cc_root,
					   f->cc_mode == CC_FRACTAL ? (f->children ? e->period_acc : e->period) : total);
			else
				fputs("[]", out);
		}
		fputc('}', out);
	}
	fputs("\n]}", out);
	return 0;
}

/* ---- exact profiles: the execution tree ----------------------------------------- */

static void loc_label(const pf_profile *p, uint32_t loc, char *buf, size_t len)
{
	const pf_loc *l = &p->locs[loc];
	if (l->sym != PF_NONE)
		snprintf(buf, len, "%s", pf_str(p, p->syms[l->sym].name));
	else if (l->dso != PF_NONE)
		snprintf(buf, len, "%s+%#" PRIx64, pf_str(p, p->dsos[l->dso].short_name), l->addr);
	else
		snprintf(buf, len, "%#" PRIx64, l->ip);
}

typedef struct tnode {
	uint64_t self, total, calls;
	uint32_t first, next;      /* children by total time, descending */
} tnode;

static int tnode_cmp_total(const void *a, const void *b, void *arg)
{
	const tnode *t = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (t[x].total != t[y].total)
		return t[x].total < t[y].total ? 1 : -1;
	return x < y ? -1 : x > y;
}

int report_print_tree(FILE *out, const pf_profile *p, double percent_limit)
{
	size_t n = p->nr_nodes;
	tnode *t = pf_calloc(n ? n : 1, sizeof(*t));
	uint32_t *order = pf_calloc(n ? n : 1, sizeof(*order));
	uint32_t *stk = pf_calloc(n ? n : 1, sizeof(*stk));
	char *prefix = malloc(3 * (n ? n : 1) + 1);
	if (!t || !order || !stk || !prefix) {
		free(t); free(order); free(stk); free(prefix);
		return PROFF_ENOMEM;
	}
	uint64_t grand = 0;
	for (size_t i = 0; i < p->nr_samples; i++) {
		const pf_sample *s = &p->samples[i];
		t[s->stack].self += s->period;
		t[s->stack].calls += s->count;
		grand += s->period;
	}
	/* children are created after their parents: one backward pass sums */
	for (size_t i = n; i-- > 1;) {
		t[i].total += t[i].self;
		t[p->nodes[i].parent].total += t[i].total;
	}
	for (size_t i = 0; i < n; i++) {
		order[i] = (uint32_t)i;
		t[i].first = t[i].next = PF_NONE;
	}
	qsort_r(order, n, sizeof(*order), tnode_cmp_total, t);
	/* link in reverse sorted order so each list ends up descending */
	for (size_t k = n; k-- > 0;) {
		uint32_t i = order[k];
		if (i == 0)
			continue;
		uint32_t par = p->nodes[i].parent;
		t[i].next = t[par].first;
		t[par].first = i;
	}
	fprintf(out, "# Execution tree of '%s' (event '%s'): every call path, merged over threads\n"
		"# Total: time of the path with its callees; Self: without them; Calls: calls of the path\n#\n",
		p->path, p->nr_events ? p->events[0].name : "exact-time");
	fprintf(out, "#  Total time   Self time       Calls  Function\n");
	fprintf(out, "#  ==========  ==========  ==========  ====================\n");
	/* iterative depth-first walk: stk holds the next node to print per depth */
	size_t sp = 0;
	prefix[0] = '\0';
	if (t[0].first != PF_NONE)
		stk[sp++] = t[0].first;
	char name[1024], a[32], b[32];
	while (sp) {
		uint32_t i = stk[sp - 1];
		if (i == PF_NONE) {
			sp--;
			continue;
		}
		stk[sp - 1] = t[i].next;
		size_t depth = sp - 1;
		if (percent_limit > 0 && grand && (double)t[i].total * 100.0 / (double)grand < percent_limit)
			continue;
		loc_label(p, p->nodes[i].loc, name, sizeof(name));
		report_fmt_time(a, sizeof(a), (double)t[i].total);
		report_fmt_time(b, sizeof(b), (double)t[i].self);
		/* the prefix of this depth: one column per ancestor below the top
		 * level, "|  " where that ancestor has later siblings */
		prefix[depth ? 3 * (depth - 1) : 0] = '\0';
		fprintf(out, "  %s  %s  %10" PRIu64 "  %s%s%s\n", a, b, t[i].calls, prefix,
			depth ? "+- " : "", name);
		if (t[i].first != PF_NONE) {
			if (depth) {
				memcpy(prefix + 3 * (depth - 1), t[i].next != PF_NONE ? "|  " : "   ", 3);
			}
			prefix[3 * depth] = '\0';
			stk[sp++] = t[i].first;
		}
	}
	free(t);
	free(order);
	free(stk);
	free(prefix);
	return 0;
}
