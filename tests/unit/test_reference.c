/* test_reference.c — the engine against the reference path (#29) on random
 * profiles: hist_build under its tunings (one thread, the pass on two,
 * perf's order replayed always) and hist_build_reference give the same
 * rows, totals and report text, over sort keys, Children and Self,
 * callchain orders, filters and --max-stack, on aggregated samples and on
 * raw samples whose callchains end in garbage addresses (perf's walk then
 * makes two rows of one key); diff_compute and diff_compute_reference the
 * same pairs, values and order. tests/cli/reference-matrix.sh does the
 * same on recordings, through the CLI.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/diff.h"
#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/reference.h"
#include "proff/report.h"

static uint32_t str(pf_profile *p, const char *s)
{
	return (uint32_t)pf_strtab_intern(&p->strs, s, strlen(s));
}

static uint32_t node(pf_profile *p, uint32_t parent, uint32_t loc)
{
	(void)PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1);
	p->nodes[p->nr_nodes] = (pf_node){ parent, loc, parent ? p->nodes[parent].depth + 1 : 1 };
	return (uint32_t)p->nr_nodes++;
}

/* A random profile: 3 dsos (one kernel), 36 symbols of 8 names, 100
 * locations (40 unresolved), 4 threads of 3 comms, 600 samples of stacks
 * 1-6 deep (recursion included). With garbage: 300 more of a resolved
 * frame over 3 garbage addresses anywhere in 64 bits, and the samples as
 * raw samples in reading order (pf_seq), each one event. */
static void random_profile(pf_profile *p, unsigned seed, bool garbage)
{
	static const char *names[] = { "main", "sys_read", "f", "g", "h", "memcpy", "do_page_fault", "k" };
	static const char *dsos[] = { "prog", "libx.so", "[kernel.kallsyms]" };
	static const struct { uint32_t pid, tid; const char *comm; } th[] = {
		{ 100, 100, "alpha" }, { 100, 101, "alpha" }, { 200, 200, "beta" }, { 300, 300, "gamma" } };
	memset(p, 0, sizeof(*p));
	pf_strtab_init(&p->strs);
	srand(seed);
	p->nr_dsos = 3;
	p->dsos = calloc(3, sizeof(pf_dso));
	for (int d = 0; d < 3; d++)
		p->dsos[d] = (pf_dso){ .long_name = str(p, dsos[d]), .short_name = str(p, dsos[d]),
				       .kind = d == 2 ? SYM_DSO_KERNEL : SYM_DSO_USER };
	p->nr_syms = 36;
	p->syms = calloc(p->nr_syms, sizeof(pf_sym));
	for (size_t i = 0; i < p->nr_syms; i++) {
		uint64_t start = 0x1000 + 0x10 * (uint64_t)(rand() % 64);
		p->syms[i] = (pf_sym){ (uint32_t)(i % 3), str(p, names[rand() % 8]), start,
				       start + 0x10 + 0x10 * (uint64_t)(rand() % 16) };
	}
	size_t ng = garbage ? 600 : 0;
	p->nr_locs = 100 + ng;
	p->locs = calloc(p->nr_locs, sizeof(pf_loc));
	for (size_t i = 0; i < p->nr_locs; i++) {
		pf_loc *l = &p->locs[i];
		*l = (pf_loc){ .srcline = PF_NONE, .level = '.', .sym = PF_NONE, .dso = PF_NONE };
		if (i < 60) {
			l->sym = (uint32_t)(rand() % (int)p->nr_syms);
			l->dso = p->syms[l->sym].dso;
			l->addr = p->syms[l->sym].start + 4 * (uint64_t)(rand() % 3);
		} else if (i < 100) {
			l->dso = rand() % 4 == 0 ? PF_NONE : (uint32_t)(rand() % 3);
			l->addr = ((uint64_t)rand() << 31 ^ (uint64_t)rand()) & 0xffffffffffULL;
		} else {
			l->addr = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
		}
		/* an unresolved address in a map: the map's address (Self rows)
		 * apart from the ip (callchain rows); without a map the same */
		l->ip = l->addr + (l->sym == PF_NONE && l->dso != PF_NONE && i % 2 ? 0x400000 : 0);
		if (l->dso == 2)
			l->level = 'k';
	}
	node(p, 0, PF_NONE);
	p->nodes[0].depth = 0;
	p->events = calloc(1, sizeof(pf_event));
	p->events[0] = (pf_event){ .name = strdup("cpu-clock"), .has_callchain = true };
	p->nr_events = 1;
	p->nr_threads = 4;
	p->threads = calloc(4, sizeof(pf_thread));
	for (int t = 0; t < 4; t++)
		p->threads[t] = (pf_thread){ th[t].pid, th[t].tid, str(p, th[t].comm) };
	for (int k = 0; k < 600 + (garbage ? 300 : 0); k++) {
		uint32_t cur = 0;
		if (k < 600) {
			uint32_t rec = (uint32_t)(rand() % 60);
			for (int d = 0, depth = 1 + rand() % 6; d < depth; d++)
				cur = node(p, cur, d == 2 && k % 5 == 0 ? rec : (uint32_t)(rand() % 100));
			if (k % 5 == 0)
				cur = node(p, cur, rec);     /* recursion: rec twice on the stack */
		} else {
			cur = node(p, 0, (uint32_t)(rand() % 60));
			for (int d = 0; d < 3; d++)
				cur = node(p, cur, (uint32_t)(100 + (size_t)rand() % ng));
		}
		int t = rand() % 4;
		uint64_t period = 1000 * (uint64_t)(1 + rand() % 3);
		(void)PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1);
		p->samples[p->nr_samples++] = (pf_sample){ .evsel = 0, .thread = (uint32_t)t, .pid = th[t].pid,
			.tid = th[t].tid, .comm = str(p, th[t].comm), .cpu = (uint32_t)(rand() % 4), .stack = cur,
			.period = period, .count = 1 };
		p->events[0].total_period += period;
	}
	if (garbage) {
		p->seq = malloc(p->nr_samples * sizeof(pf_seq));
		p->cap_seq = p->nr_samples;
		for (size_t i = 0; i < p->nr_samples; i++)
			assert_int_equal(pf_seq_push(p, (uint32_t)i, p->samples[i].thread, p->samples[i].period), 0);
	}
}

static void free_profile(pf_profile *p)
{
	pf_strtab_free(&p->strs);
	free(p->dsos); free(p->syms); free(p->locs); free(p->nodes); free(p->samples);
	free(p->seq); free(p->seq_big);
	free(p->events[0].name); free(p->events); free(p->threads);
}

static char *report_text(hist *h, bool children, bool graphs, size_t *len)
{
	char *buf = NULL;
	report_fmt f;
	report_fmt_init(&f);
	f.children = children;
	f.cc_mode = graphs ? CC_GRAPH : CC_NONE;
	f.cc_threshold = 0;
	FILE *m = open_memstream(&buf, len);
	assert_non_null(m);
	assert_int_equal(report_print_hist(m, h, &f, 0), 0);
	assert_int_equal(fclose(m), 0);
	return buf;
}

static bool rows_differ(const hist_entry *x, const hist_entry *y)
{
	return x->loc != y->loc || x->comm != y->comm || x->tid != y->tid || x->thread != y->thread ||
	       x->cpu != y->cpu || x->addr != y->addr || x->level != y->level || x->parent != y->parent ||
	       x->period != y->period || x->period_acc != y->period_acc || x->nr_events != y->nr_events ||
	       x->filtered != y->filtered || x->max_depth != y->max_depth || x->sym != y->sym || x->dso != y->dso;
}

/* How a case's hist is made: the option sets compared */
typedef struct ref_case {
	const char *sort;
	bool children, callchain, caller;
	int max_stack;
	const char *comms, *dsos;
} ref_case;

static const ref_case cases[] = {
	{ "comm,dso,sym", true, true, true, 0, NULL, NULL },
	{ "comm,dso,sym", true, true, false, 0, NULL, NULL },
	{ "comm,dso,sym", false, true, true, 0, NULL, NULL },
	{ "comm,dso,sym", true, false, true, 3, NULL, NULL },
	{ "sym", true, true, true, 0, NULL, NULL },
	{ "sym", false, false, false, 0, NULL, NULL },
	{ "dso,sym", true, true, false, 2, NULL, NULL },
	{ "pid", true, false, true, 0, NULL, NULL },
	{ "cpu,comm", true, true, true, 0, NULL, NULL },
	{ "parent,sym", true, false, true, 0, NULL, NULL },
	{ "comm,dso,sym", true, true, true, 0, "alpha", "libx.so" },
	{ "sym", false, true, true, 0, "beta,gamma", NULL },
};

/* The case's hist by the reference path (variant 0) or the engine:
 * 1 one thread, 2 the pass on two threads, 3 perf's order replayed */
static hist *make(pf_profile *p, const ref_case *c, int variant)
{
	hist_opts o;
	hist_opts_init(&o);
	o.sort = c->sort;
	o.children = c->children;
	o.callchain = c->callchain;
	o.caller_order = c->caller;
	o.max_stack = c->max_stack;
	o.order_early = true;
	o.split_min = variant == 1 ? SIZE_MAX : 2;
	o.order_replay = variant == 3;
	char ebuf[256];
	if (c->comms)
		assert_int_equal(pf_strlist_parse(&o.comms, c->comms, ebuf, sizeof(ebuf)), 0);
	if (c->dsos)
		assert_int_equal(pf_strlist_parse(&o.dsos, c->dsos, ebuf, sizeof(ebuf)), 0);
	hist *h;
	proff_error err;
	int rc = variant ? hist_build(p, 0, &o, &h, &err) : hist_build_reference(p, 0, &o, &h, &err);
	assert_int_equal(rc, 0);
	hist_key_widths(h);
	hist_sort_report(h);
	hist_opts_release(&o);
	h->opts.comms = h->opts.dsos = (pf_strlist){ 0 };    /* released with o */
	return h;
}

static void test_engine_is_reference(void **state)
{
	(void)state;
	size_t rows = 0, cases_run = 0;
	for (unsigned seed = 1; seed <= 4; seed++)
		for (int garbage = 0; garbage < 2; garbage++) {
			pf_profile p;
			random_profile(&p, seed, garbage);
			for (size_t ci = 0; ci < sizeof(cases) / sizeof(cases[0]); ci++) {
				const ref_case *c = &cases[ci];
				hist *ref = make(&p, c, 0);
				size_t rlen;
				char *rtext = report_text(ref, c->children, c->callchain, &rlen);
				for (int v = 1; v <= 3; v++) {
					hist *h = make(&p, c, v);
					if (h->n != ref->n)
						fail_msg("seed %u%s, -s %s, case %zu, variant %d: %zu rows, the reference %zu",
							 seed, garbage ? " (garbage)" : "", c->sort, ci, v, h->n, ref->n);
					assert_int_equal(h->total_period, ref->total_period);
					assert_int_equal(h->nr_samples, ref->nr_samples);
					assert_int_equal(h->total_non_filtered_period, ref->total_non_filtered_period);
					for (size_t i = 0; i < h->n; i++)
						if (rows_differ(&h->entries[i], &ref->entries[i]))
							fail_msg("seed %u%s, -s %s, case %zu, variant %d: row %zu differs", seed,
								 garbage ? " (garbage)" : "", c->sort, ci, v, i);
					size_t len;
					char *text = report_text(h, c->children, c->callchain, &len);
					if (len != rlen || memcmp(text, rtext, len))
						fail_msg("seed %u%s, -s %s, case %zu, variant %d: the report text differs", seed,
							 garbage ? " (garbage)" : "", c->sort, ci, v);
					free(text);
					hist_free(h);
				}
				rows += ref->n;
				cases_run++;
				free(rtext);
				hist_free(ref);
			}
			free_profile(&p);
		}
	print_message("%zu cases, %zu rows compared\n", cases_run, rows);
	assert_true(rows > 10000);
}

/* perf's walk makes two rows of one key on garbage frames: the reference
 * path must too (else the comparison above would not reach it) */
static void test_reference_walks_as_perf(void **state)
{
	(void)state;
	size_t dups = 0;
	for (unsigned seed = 1; seed <= 4; seed++) {
		pf_profile p;
		random_profile(&p, seed, true);
		hist *h = make(&p, &(ref_case){ "sym", true, false, true, 0, NULL, NULL }, 0);
		for (size_t i = 0; i < h->n; i++)
			for (size_t j = i + 1; j < h->n; j++) {
				const hist_entry *x = &h->entries[i], *z = &h->entries[j];
				dups += x->sym == PF_NONE && z->sym == PF_NONE && x->addr == z->addr && x->dso == z->dso;
			}
		hist_free(h);
		free_profile(&p);
	}
	print_message("%zu pairs of rows of one key\n", dups);
	assert_true(dups > 0);
}

/* diff: two random profiles' rows paired, computed and ordered alike */
static void test_diff_is_reference(void **state)
{
	(void)state;
	static const char *sorts[] = { "dso,sym", "sym", "comm,dso", "pid" };
	static const int computes[] = { DIFF_DELTA_ABS, DIFF_DELTA, DIFF_RATIO, DIFF_WDIFF };
	size_t compared = 0;
	for (unsigned seed = 1; seed <= 3; seed++) {
		pf_profile a, b;
		random_profile(&a, seed, false);
		random_profile(&b, seed + 100, false);
		for (size_t si = 0; si < sizeof(sorts) / sizeof(sorts[0]); si++) {
			hist_opts o;
			hist_opts_init(&o);
			o.sort = sorts[si];
			o.diff_mode = true;
			hist *ha, *hb;
			proff_error err;
			assert_int_equal(hist_build(&a, 0, &o, &ha, &err), 0);
			assert_int_equal(hist_build(&b, 0, &o, &hb, &err), 0);
			const hist *hs[3] = { ha, hb, ha };
			for (size_t ci = 0; ci < 4; ci++)
				for (int bo = 0; bo < 2; bo++) {
					diff_opts d;
					diff_opts_init(&d);
					d.compute = computes[ci];
					d.w1 = 2;
					d.w2 = 3;
					d.baseline_only = bo;
					size_t nf = 2 + (ci == 2);
					diff_result *r1, *r2;
					assert_int_equal(diff_compute(hs, nf, &d, &r1, &err), 0);
					assert_int_equal(diff_compute_reference(hs, nf, &d, &r2, &err), 0);
					assert_int_equal(r1->nrows, r2->nrows);
					for (size_t i = 0; i < r1->nrows; i++) {
						const diff_row *x = &r1->rows[i], *y = &r2->rows[i];
						assert_ptr_equal(x->e, y->e);
						assert_int_equal(x->dummy, y->dummy);
						assert_int_equal(x->period, y->period);
						for (size_t f = 1; f < nf; f++) {
							assert_ptr_equal(x->pairs[f].e, y->pairs[f].e);
							assert_memory_equal(&x->pairs[f].delta, &y->pairs[f].delta, sizeof(double));
							assert_memory_equal(&x->pairs[f].ratio, &y->pairs[f].ratio, sizeof(double));
							assert_int_equal(x->pairs[f].wdiff, y->pairs[f].wdiff);
						}
					}
					assert_memory_equal(r1->key_width, r2->key_width, sizeof(r1->key_width));
					compared += r1->nrows;
					diff_result_free(r1);
					diff_result_free(r2);
				}
			hist_free(ha);
			hist_free(hb);
		}
		free_profile(&a);
		free_profile(&b);
	}
	print_message("%zu diff rows compared\n", compared);
	assert_true(compared > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_engine_is_reference),
		cmocka_unit_test(test_reference_walks_as_perf),
		cmocka_unit_test(test_diff_is_reference),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
