/* test_hist.c — unit tests of the aggregation (lib/hist): Self and Children
 * on a hand-built profile, recursion counted once per stack, filters and
 * totals, sort-key parsing, perf's row order and the callchain trees.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/report.h"

/* A tiny profile: one dso "prog" with symbols main, a, b, c (c recursive).
 * Stacks (leaf first):
 *   s1: a <- main                 period 100 (comm "prog", tid 10)
 *   s2: b <- a <- main            period 50
 *   s3: c <- c <- c <- main       period 30  (recursion)
 *   s4: b <- main                 period 20  (comm "helper", tid 11)
 */
enum { S_MAIN, S_A, S_B, S_C, NSYM };

typedef struct fixture {
	pf_profile p;
	uint32_t loc[NSYM];
} fixture;

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

static uint32_t stack(fixture *f, const int *frames, int n)   /* frames root first */
{
	uint32_t cur = 0;
	for (int i = 0; i < n; i++)
		cur = node(&f->p, cur, f->loc[frames[i]]);
	return cur;
}

static void add_sample(fixture *f, uint32_t thread, uint32_t tid, const char *comm, uint32_t st, uint64_t period)
{
	pf_profile *p = &f->p;
	(void)PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1);
	p->samples[p->nr_samples++] = (pf_sample){ .evsel = 0, .thread = thread, .pid = tid, .tid = tid,
		.comm = str(p, comm), .cpu = PF_NONE, .stack = st, .period = period, .count = 1 };
	p->events[0].total_period += period;
}

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	pf_profile *p = &f->p;
	pf_strtab_init(&p->strs);
	p->dsos = calloc(1, sizeof(pf_dso));
	p->dsos[0] = (pf_dso){ .long_name = str(p, "/bin/prog"), .short_name = str(p, "prog"), .kind = SYM_DSO_USER };
	p->nr_dsos = 1;
	static const char *names[NSYM] = { "main", "a", "b", "c" };
	p->syms = calloc(NSYM, sizeof(pf_sym));
	p->locs = calloc(NSYM, sizeof(pf_loc));
	for (int i = 0; i < NSYM; i++) {
		p->syms[i] = (pf_sym){ 0, str(p, names[i]), 0x1000 + 0x100 * (uint64_t)i, 0x1080 + 0x100 * (uint64_t)i };
		p->locs[i] = (pf_loc){ .dso = 0, .sym = (uint32_t)i, .addr = 0x1010 + 0x100 * (uint64_t)i,
				       .ip = 0x401010 + 0x100 * (uint64_t)i, .level = '.', .srcline = PF_NONE };
		f->loc[i] = (uint32_t)i;
	}
	p->nr_syms = p->nr_locs = NSYM;
	node(p, 0, PF_NONE);   /* root */
	p->nodes[0].depth = 0;
	p->events = calloc(1, sizeof(pf_event));
	p->events[0] = (pf_event){ .name = strdup("cpu-clock"), .has_callchain = true };
	p->nr_events = 1;
	p->threads = calloc(2, sizeof(pf_thread));
	p->threads[0] = (pf_thread){ 10, 10, str(p, "prog") };
	p->threads[1] = (pf_thread){ 11, 11, str(p, "helper") };
	p->nr_threads = 2;
	add_sample(f, 0, 10, "prog", stack(f, (int[]){ S_MAIN, S_A }, 2), 100);
	add_sample(f, 0, 10, "prog", stack(f, (int[]){ S_MAIN, S_A, S_B }, 3), 50);
	add_sample(f, 0, 10, "prog", stack(f, (int[]){ S_MAIN, S_C, S_C, S_C }, 4), 30);
	add_sample(f, 1, 11, "helper", stack(f, (int[]){ S_MAIN, S_B }, 2), 20);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	pf_profile *p = &f->p;
	pf_strtab_free(&p->strs);
	free(p->dsos); free(p->syms); free(p->locs); free(p->nodes); free(p->samples);
	free(p->events[0].name); free(p->events); free(p->threads);
	free(f);
	return 0;
}

static const hist_entry *find(const hist *h, const char *comm, const char *sym)
{
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		const char *nm = hist_sym_name(h, e);
		if (nm && !strcmp(nm, sym) && (!comm || !strcmp(pf_str(h->prof, e->comm), comm)))
			return e;
	}
	return NULL;
}

static hist *build(fixture *f, const char *sort, bool children, hist_opts *o_out)
{
	hist_opts o;
	hist_opts_init(&o);
	o.sort = sort;
	o.children = children;
	o.callchain = true;
	o.caller_order = children;
	if (o_out)
		o = *o_out, o.sort = sort, o.children = children;
	hist *h;
	proff_error err;
	assert_int_equal(hist_build(&f->p, 0, &o, &h, &err), 0);
	hist_sort_report(h);
	return h;
}

static void test_self(void **state)
{
	fixture *f = *state;
	hist *h = build(f, "sym", false, NULL);
	assert_int_equal(h->total_period, 200);
	assert_int_equal(h->n, 3);     /* a, b, c: main never a leaf */
	assert_int_equal(find(h, NULL, "a")->period, 100);
	assert_int_equal(find(h, NULL, "b")->period, 70);
	assert_int_equal(find(h, NULL, "c")->period, 30);
	assert_null(find(h, NULL, "main"));
	/* rows by Self descending */
	assert_string_equal(hist_sym_name(h, &h->entries[0]), "a");
	assert_string_equal(hist_sym_name(h, &h->entries[1]), "b");
	hist_free(h);
}

static void test_children_and_recursion(void **state)
{
	fixture *f = *state;
	hist *h = build(f, "sym", true, NULL);
	const hist_entry *m = find(h, NULL, "main"), *a = find(h, NULL, "a"), *c = find(h, NULL, "c");
	assert_non_null(m);
	assert_int_equal(m->period, 0);
	assert_int_equal(m->period_acc, 200);     /* every stack goes through main */
	assert_int_equal(a->period_acc, 150);     /* a itself + b under a */
	assert_int_equal(c->period_acc, 30);      /* c three times on one stack: counted once */
	assert_int_equal(c->period, 30);
	/* main (Children 100%) is the first row */
	assert_string_equal(hist_sym_name(h, &h->entries[0]), "main");
	hist_free(h);
}

static void test_comm_key_and_filters(void **state)
{
	fixture *f = *state;
	hist *h = build(f, "comm,sym", false, NULL);
	assert_int_equal(find(h, "prog", "b")->period, 50);
	assert_int_equal(find(h, "helper", "b")->period, 20);
	hist_free(h);

	hist_opts o;
	hist_opts_init(&o);
	char eb[64];
	assert_int_equal(pf_strlist_parse(&o.comms, "helper", eb, sizeof(eb)), 0);
	h = build(f, "comm,sym", false, &o);
	assert_int_equal(h->total_period, 200);
	assert_int_equal(h->total_non_filtered_period, 20);
	assert_true(find(h, "prog", "a")->filtered & HF_THREAD);
	assert_false(find(h, "helper", "b")->filtered);
	hist_free(h);
	hist_opts_release(&o);

	hist_opts_init(&o);
	assert_int_equal(pf_strlist_parse(&o.symbols, "a,c", eb, sizeof(eb)), 0);
	h = build(f, "sym", false, &o);
	assert_int_equal(h->total_non_filtered_period, 130);
	assert_true(find(h, NULL, "b")->filtered & HF_SYMBOL);
	hist_free(h);
	hist_opts_release(&o);
}

static void test_callchain_tree(void **state)
{
	fixture *f = *state;
	/* self mode, callee order: b's chains are b<-a<-main (50) and b<-main (20) */
	hist *h = build(f, "sym", false, NULL);
	const hist_entry *b = find(h, NULL, "b");
	assert_int_not_equal(b->cc_root, PF_NONE);
	const hist_cc_node *root = &h->cc_nodes[b->cc_root];
	assert_int_equal(root->children_hit, 70);
	/* first level: a single node "b" (both chains start at the leaf) */
	const hist_cc_node *n1 = &h->cc_nodes[root->first_child];
	assert_int_equal(n1->next_sibling, PF_NONE);
	assert_int_equal(n1->children_hit, 70);
	/* below it: "a" (50) and "main" (20) */
	const hist_cc_node *k1 = &h->cc_nodes[n1->first_child];
	const hist_cc_node *k2 = &h->cc_nodes[k1->next_sibling];
	assert_int_equal(k1->hit + k1->children_hit + k2->hit + k2->children_hit, 70);
	hist_free(h);
}

static void test_parse_sort(void **state)
{
	(void)state;
	int keys[HIST_MAX_KEYS];
	proff_error err;
	assert_int_equal(hist_parse_sort("comm,dso,symbol", keys, HIST_MAX_KEYS, &err), 3);
	assert_int_equal(keys[2], HK_SYM);
	assert_int_equal(hist_parse_sort("dso,dso", keys, HIST_MAX_KEYS, &err), 1);
	assert_true(hist_parse_sort("bogus", keys, HIST_MAX_KEYS, &err) < 0);
	assert_non_null(strstr(err.msg, "bogus"));
	assert_true(hist_parse_sort("", keys, HIST_MAX_KEYS, &err) < 0);
}

static void test_diff_mode_collapses_by_name(void **state)
{
	fixture *f = *state;
	/* a second symbol named "a" at another address: report keeps two rows,
	 * diff mode pairs by name and keeps one */
	pf_profile *p = &f->p;
	p->syms = realloc(p->syms, (NSYM + 1) * sizeof(pf_sym));
	p->locs = realloc(p->locs, (NSYM + 1) * sizeof(pf_loc));
	p->syms[NSYM] = (pf_sym){ 0, str(p, "a"), 0x5000, 0x5080 };
	p->locs[NSYM] = (pf_loc){ .dso = 0, .sym = NSYM, .addr = 0x5010, .ip = 0x405010, .level = '.', .srcline = PF_NONE };
	p->nr_syms = p->nr_locs = NSYM + 1;
	uint32_t st = node(p, node(p, 0, f->loc[S_MAIN]), NSYM);
	add_sample(f, 0, 10, "prog", st, 5);
	hist *h = build(f, "dso,sym", false, NULL);
	size_t na = 0;
	for (size_t i = 0; i < h->n; i++)
		na += hist_sym_name(h, &h->entries[i]) && !strcmp(hist_sym_name(h, &h->entries[i]), "a");
	assert_int_equal(na, 2);
	hist_free(h);
	hist_opts o;
	hist_opts_init(&o);
	o.diff_mode = true;
	h = build(f, "dso,sym", false, &o);
	na = 0;
	for (size_t i = 0; i < h->n; i++)
		na += hist_sym_name(h, &h->entries[i]) && !strcmp(hist_sym_name(h, &h->entries[i]), "a");
	assert_int_equal(na, 1);
	assert_int_equal(find(h, NULL, "a")->period, 105);
	hist_free(h);
}

/* ---- perf's row order: the fast paths against the generic replay -------------- */

/* A random profile: three dsos with overlapping, same-named and
 * same-start symbols, unresolved locations (addresses within 2^40, or
 * anywhere when wide: perf's address comparison then wraps), four threads
 * of three comms, periods from a small set (many ties). */
static void random_profile(pf_profile *p, unsigned seed, bool wide)
{
	static const char *names[] = { "main", "sys_read", "f", "g", "h", "memcpy", "do_page_fault", "k" };
	static const char *dsos[] = { "prog", "libx.so", "[kernel.kallsyms]" };
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
	p->nr_locs = 100;
	p->locs = calloc(p->nr_locs, sizeof(pf_loc));
	for (size_t i = 0; i < p->nr_locs; i++) {
		pf_loc *l = &p->locs[i];
		*l = (pf_loc){ .srcline = PF_NONE, .level = '.' };
		if (i < 60) {
			uint32_t y = (uint32_t)(rand() % (int)p->nr_syms);
			l->sym = y;
			l->dso = p->syms[y].dso;
			l->addr = p->syms[y].start + 4;
		} else {
			l->sym = PF_NONE;
			l->dso = rand() % 4 == 0 ? PF_NONE : (uint32_t)(rand() % 3);
			uint64_t a = (uint64_t)rand() << 31 ^ (uint64_t)rand();
			l->addr = wide ? a << 24 ^ (uint64_t)rand() : a & 0xffffffffffULL;
		}
		l->ip = l->addr;
		if (l->dso == 2)
			l->level = 'k';
	}
	node(p, 0, PF_NONE);
	p->nodes[0].depth = 0;
	p->events = calloc(1, sizeof(pf_event));
	p->events[0] = (pf_event){ .name = strdup("cpu-clock"), .has_callchain = true };
	p->nr_events = 1;
	static const struct { uint32_t pid, tid; const char *comm; } th[] = {
		{ 100, 100, "alpha" }, { 100, 101, "alpha" }, { 200, 200, "beta" }, { 300, 300, "gamma" } };
	p->nr_threads = 4;
	p->threads = calloc(4, sizeof(pf_thread));
	for (int t = 0; t < 4; t++)
		p->threads[t] = (pf_thread){ th[t].pid, th[t].tid, str(p, th[t].comm) };
	for (int k = 0; k < 500; k++) {
		uint32_t cur = 0;
		for (int d = 0, depth = 1 + rand() % 6; d < depth; d++)
			cur = node(p, cur, (uint32_t)(rand() % (int)p->nr_locs));
		int t = rand() % 4;
		uint64_t period = 1000 * (uint64_t)(1 + rand() % 3);
		(void)PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1);
		p->samples[p->nr_samples++] = (pf_sample){ .evsel = 0, .thread = (uint32_t)t, .pid = th[t].pid,
			.tid = th[t].tid, .comm = str(p, th[t].comm), .cpu = (uint32_t)(rand() % 4), .stack = cur,
			.period = period, .count = 1 };
		p->events[0].total_period += period;
	}
}

/* The report of h as text (graphs without threshold, or no chains) */
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

/* Do two rows differ in a field the printed report or perf's order reads? */
static bool rows_differ(const hist_entry *x, const hist_entry *y)
{
	return x->loc != y->loc || x->comm != y->comm || x->tid != y->tid || x->thread != y->thread ||
	       x->cpu != y->cpu || x->addr != y->addr || x->level != y->level || x->parent != y->parent ||
	       x->period != y->period || x->period_acc != y->period_acc || x->nr_events != y->nr_events ||
	       x->filtered != y->filtered || x->max_depth != y->max_depth;
}

static void free_profile(pf_profile *p)
{
	pf_strtab_free(&p->strs);
	free(p->dsos); free(p->syms); free(p->locs); free(p->nodes); free(p->samples);
	free(p->events[0].name); free(p->events); free(p->threads);
}

/* The stable sorts (where a stage's comparator is a total preorder), the
 * written-out comparators of the default keys (and their collapse-tree
 * shortcut, which compares in full only within (comm, dso) groups whose
 * addresses wrap) and the ordering streamed to another thread during the
 * Children pass give the order of the generic replay of perf's trees, ties
 * included. */
static void test_order_fast_paths(void **state)
{
	(void)state;
	static const char *sorts[] = { "comm,dso,sym", "dso,sym", "sym", "sym,dso", "comm", "pid,sym",
				       "dso", "cpu,sym", "parent,sym", "comm,sym", "tid" };
	size_t compared = 0;
	for (unsigned seed = 1; seed <= 12; seed++) {
		pf_profile p;
		random_profile(&p, seed, seed > 6);
		for (size_t si = 0; si < sizeof(sorts) / sizeof(sorts[0]); si++) {
			for (int mode = 0; mode < 3; mode++) {
				/* 0: fast paths, 1: the generic replay, 2: the order
				 * computed on another thread (streamed in children mode) */
				hist *hv[3];
				for (int r = 0; r < 3; r++) {
					hist_opts o;
					hist_opts_init(&o);
					o.sort = sorts[si];
					o.children = mode > 0;
					o.callchain = mode != 2;
					o.caller_order = mode == 1;
					o.order_replay = r == 1;
					o.order_early = r == 2;
					proff_error err;
					assert_int_equal(hist_build(&p, 0, &o, &hv[r], &err), 0);
					if (r == 2)
						hist_key_widths(hv[r]);     /* before the order, as a report does */
					hist_sort_report(hv[r]);
				}
				for (int r = 0; r < 3; r += 2) {
					assert_int_equal(hv[r]->n, hv[1]->n);
					for (size_t i = 0; i < hv[r]->n; i++) {
						const hist_entry *a = &hv[r]->entries[i], *b = &hv[1]->entries[i];
						if (a->loc != b->loc || a->comm != b->comm || a->tid != b->tid ||
						    a->period != b->period || a->period_acc != b->period_acc)
							fail_msg("seed %u, -s %s, mode %d, way %d: row %zu differs", seed,
								 sorts[si], mode, r, i);
					}
				}
				for (int k = 0; k < hv[1]->nkeys; k++)
					assert_int_equal(hist_key_col_width(hv[2], hv[1]->keys[k]),
							 hist_key_col_width(hv[1], hv[1]->keys[k]));
				compared += hv[0]->n;
				for (int r = 0; r < 3; r++)
					hist_free(hv[r]);
			}
		}
		free_profile(&p);
	}
	assert_true(compared > 10000);
}

/* The Children pass on two threads (each half of the samples into a hist
 * of its own, the second merged into the first) makes the rows one pass
 * makes: the same rows in the same creation order, with the same creating
 * sample's fields and the same sums; and the same order and report. With
 * filters, several sort keys, with and without callchain trees, the order
 * streamed or not. Also built with ThreadSanitizer. */
static void test_pass_split(void **state)
{
	(void)state;
	static const char *sorts[] = { "comm,dso,sym", "dso,sym", "pid,sym", "sym", "parent,sym", "cpu,comm" };
	size_t compared = 0, split_rows = 0;
	for (unsigned seed = 1; seed <= 8; seed++) {
		pf_profile p;
		random_profile(&p, seed, seed > 4);
		for (size_t si = 0; si < sizeof(sorts) / sizeof(sorts[0]); si++) {
			for (int mode = 0; mode < 4; mode++) {
				hist *hv[2];
				char *buf[2] = { NULL, NULL };
				size_t len[2] = { 0, 0 };
				for (int k = 0; k < 2; k++) {
					hist_opts o;
					hist_opts_init(&o);
					o.sort = sorts[si];
					o.children = true;
					o.caller_order = true;
					o.callchain = mode != 1;
					o.order_early = mode != 2;
					if (mode == 3)
						assert_int_equal(pf_strlist_parse(&o.comms, "alpha", NULL, 0), 0);
					o.split_min = k == 0 ? SIZE_MAX : 1;
					proff_error err;
					assert_int_equal(hist_build(&p, 0, &o, &hv[k], &err), 0);
					hist_opts_release(&o);
				}
				hist *a = hv[0], *b = hv[1];
				assert_int_equal(a->n, b->n);
				assert_int_equal(a->total_period, b->total_period);
				assert_int_equal(a->total_non_filtered_period, b->total_non_filtered_period);
				assert_int_equal(a->nr_samples, b->nr_samples);
				for (size_t i = 0; i < a->n; i++) {
					if (rows_differ(&a->entries[i], &b->entries[i]))
						fail_msg("seed %u, -s %s, mode %d: row %zu differs", seed, sorts[si], mode, i);
				}
				for (int k = 0; k < 2; k++) {
					hist_sort_report(hv[k]);
					buf[k] = report_text(hv[k], true, mode != 1, &len[k]);
				}
				assert_int_equal(len[0], len[1]);
				assert_memory_equal(buf[0], buf[1], len[0]);
				compared += a->n;
				split_rows += len[0];
				free(buf[0]);
				free(buf[1]);
				hist_free(a);
				hist_free(b);
			}
		}
		free_profile(&p);
	}
	assert_true(compared > 10000);
	assert_true(split_rows > 100000);
}

/* The report printed with its second half formatted on another thread is
 * the report printed by one thread, byte for byte (children with graphs,
 * Self with folded chains). Also built with ThreadSanitizer. */
static void test_print_split(void **state)
{
	(void)state;
	pf_profile p;
	random_profile(&p, 7, true);
	for (int mode = 0; mode < 2; mode++) {
		hist_opts o;
		hist_opts_init(&o);
		o.children = mode == 0;
		o.callchain = true;
		o.caller_order = mode == 0;
		o.order_early = true;
		hist *h;
		proff_error err;
		assert_int_equal(hist_build(&p, 0, &o, &h, &err), 0);
		hist_sort_report(h);
		char *buf[2] = { NULL, NULL };
		size_t len[2] = { 0, 0 };
		for (int k = 0; k < 2; k++) {
			report_fmt f;
			report_fmt_init(&f);
			f.children = o.children;
			f.cc_mode = mode == 0 ? CC_GRAPH : CC_FOLDED;
			f.cc_threshold = 0;
			f.split_rows = k == 0 ? 1 : SIZE_MAX;
			FILE *m = open_memstream(&buf[k], &len[k]);
			assert_non_null(m);
			assert_int_equal(report_print_hist(m, h, &f, 0), 0);
			assert_int_equal(fclose(m), 0);
		}
		assert_true(h->n > 100);
		assert_true(len[0] > 10000);
		assert_int_equal(len[0], len[1]);
		assert_memory_equal(buf[0], buf[1], len[0]);
		free(buf[0]);
		free(buf[1]);
		hist_free(h);
	}
	free_profile(&p);
}

/* Tree mode (addresses 2^63 apart: perf's walks can miss a row of their
 * key and make another): an aggregated profile with the raw samples'
 * order (pf_seq; a raw sample of an aggregate met again walks only its
 * tree-mode frames, an aggregate without any is passed whole) makes the
 * rows, sums, chains and order that the raw samples make passed one by one
 * as samples of their own; and some key has two rows, so tree mode ran. */
static void test_tree_mode(void **state)
{
	(void)state;
	static const char *sorts[] = { "comm,dso,sym", "sym", "dso,sym" };
	size_t compared = 0, dup_keys = 0;
	for (unsigned seed = 1; seed <= 6; seed++) {
		pf_profile raw;
		random_profile(&raw, seed, true);
		/* and chains ending in garbage, as a broken frame-pointer chain
		 * gives: 1500 unmapped addresses anywhere in 64 bits, three deep
		 * below a resolved frame (every 20th stack 80 deep: a merged
		 * row's tree deeper than the first buffers; every third drawn
		 * from 25 of the addresses only: merged rows' trees with nodes
		 * of more children than a list holds, looked up in the index
		 * of an appended pool), in 400 stacks of comm alpha */
		size_t g0 = raw.nr_locs;
		raw.locs = realloc(raw.locs, (g0 + 1500) * sizeof(pf_loc));
		for (size_t i = 0; i < 1500; i++) {
			uint64_t a = (uint64_t)rand() << 42 ^ (uint64_t)rand() << 21 ^ (uint64_t)rand();
			raw.locs[g0 + i] = (pf_loc){ .addr = a, .ip = a, .dso = PF_NONE, .sym = PF_NONE,
						     .srcline = PF_NONE, .level = '.' };
		}
		raw.nr_locs = g0 + 1500;
		size_t npool = 80 + 400;
		pf_sample *pool = malloc(npool * sizeof(*pool));
		memcpy(pool, raw.samples, 80 * sizeof(*pool));
		for (size_t k = 80; k < npool; k++) {
			uint32_t cur = node(&raw, 0, (uint32_t)(rand() % 60));
			for (int d = 0, depth = k % 20 ? 3 : 80; d < depth; d++)
				cur = node(&raw, cur, (uint32_t)(g0 + (k % 3 == 0 ? (size_t)rand() % 25 : (size_t)rand() % 1500)));
			pool[k] = raw.samples[0];
			pool[k].thread = 0;
			pool[k].pid = pool[k].tid = 100;
			pool[k].comm = str(&raw, "alpha");
			pool[k].stack = cur;
		}
		/* 8000 raw samples drawn from them (repeats) */
		raw.nr_samples = 0;
		raw.events[0].total_period = 0;
		for (int k = 0; k < 8000; k++) {
			(void)PF_GROW(raw.samples, raw.cap_samples, raw.nr_samples + 1);
			raw.samples[raw.nr_samples++] = pool[(size_t)rand() % npool];
			if (k % 97 == 0)   /* periods the sequence keeps aside (PF_SEQ_BIG) */
				raw.samples[raw.nr_samples - 1].period += (uint64_t)5 << 30;
			raw.events[0].total_period += raw.samples[raw.nr_samples - 1].period;
		}
		raw.seq = malloc(raw.nr_samples * sizeof(pf_seq));
		raw.cap_seq = raw.nr_samples;
		raw.nr_seq = 0;
		raw.seq_big = NULL;
		raw.nr_seq_big = raw.cap_seq_big = 0;
		for (size_t i = 0; i < raw.nr_samples; i++)
			assert_int_equal(pf_seq_push(&raw, (uint32_t)i, raw.samples[i].thread, raw.samples[i].period), 0);
		assert_true(raw.nr_seq_big > 50);
		for (size_t i = 0; i < raw.nr_seq; i++)
			assert_true(pf_seq_period(&raw, i) == raw.samples[i].period);
		/* the same raw samples aggregated by (thread, stack), first seen first */
		pf_profile agg = raw;
		agg.samples = malloc(raw.nr_samples * sizeof(pf_sample));
		agg.nr_samples = 0;
		agg.seq = malloc(raw.nr_seq * sizeof(pf_seq));
		agg.cap_seq = raw.nr_seq;
		agg.nr_seq = 0;
		agg.seq_big = NULL;
		agg.nr_seq_big = agg.cap_seq_big = 0;
		for (size_t i = 0; i < raw.nr_samples; i++) {
			const pf_sample *r = &raw.samples[i];
			size_t a = 0;
			while (a < agg.nr_samples && (agg.samples[a].stack != r->stack || agg.samples[a].thread != r->thread))
				a++;
			if (a == agg.nr_samples)
				agg.samples[agg.nr_samples++] = *r;
			else
				agg.samples[a].period += r->period, agg.samples[a].count++;
			assert_int_equal(pf_seq_push(&agg, (uint32_t)a, r->thread, r->period), 0);
		}
		assert_true(agg.nr_samples < raw.nr_samples / 4);
		for (size_t si = 0; si < sizeof(sorts) / sizeof(sorts[0]); si++) {
			for (int mode = 0; mode < 2; mode++) {
				/* the raw samples one by one, on one thread; the
				 * aggregates on one thread, and on two (the pass
				 * split where it applies: caller order); and the raw
				 * samples with every chain added in the pass (a
				 * --max-stack above every depth: callchain trees
				 * without the trie walk, the pools, the workers) */
				enum { NV = 5 };
				hist *hv[NV];
				char *buf[NV] = { NULL };
				size_t len[NV] = { 0 };
				for (int k = 0; k < NV; k++) {
					hist_opts o;
					hist_opts_init(&o);
					o.sort = sorts[si];
					o.children = true;
					o.callchain = true;
					o.caller_order = mode == 0;     /* 1: callee order, chains added in the pass */
					o.order_early = true;
					o.split_min = k < 2 || k == 4 ? SIZE_MAX : 1;
					o.max_stack = k == 4 ? 1000000 : 0;
					proff_error err;
					assert_int_equal(hist_build(k & 1 && k < 4 ? &agg : &raw, 0, &o, &hv[k], &err), 0);
					/* the columns' widths before perf's order (rows it
					 * merged away still there) or after: the same text */
					if (k >= 2)
						hist_key_widths(hv[k]);
					hist_sort_report(hv[k]);
					buf[k] = report_text(hv[k], true, true, &len[k]);
				}
				hist *a = hv[0];
				for (int k = 1; k < NV; k++) {
					hist *b = hv[k];
					assert_int_equal(a->n, b->n);
					assert_int_equal(a->total_period, b->total_period);
					assert_int_equal(a->nr_samples, b->nr_samples);
					for (size_t i = 0; i < a->n; i++)
						if (rows_differ(&a->entries[i], &b->entries[i]))
							fail_msg("seed %u, -s %s, mode %d, variant %d: row %zu differs", seed,
								 sorts[si], mode, k, i);
					assert_int_equal(len[0], len[k]);
					assert_memory_equal(buf[0], buf[k], len[0]);
				}
				/* two rows of one key (next to each other or not) */
				for (size_t i = 0; i < a->n && !si && !mode; i++)
					for (size_t j = i + 1; j < a->n; j++) {
						const hist_entry *x = &a->entries[i], *z = &a->entries[j];
						dup_keys += z->sym == PF_NONE && x->sym == PF_NONE && z->comm == x->comm &&
							    z->dso == x->dso && z->addr == x->addr;
					}
				compared += a->n;
				for (int k = 0; k < NV; k++) {
					free(buf[k]);
					hist_free(hv[k]);
				}
			}
		}
		free(agg.samples);
		free(agg.seq);
		free(agg.seq_big);
		free(raw.seq);
		free(raw.seq_big);
		free(pool);
		free_profile(&raw);
	}
	print_message("tree mode: %zu rows compared, %zu pairs of rows of one key\n", compared, dup_keys);
	assert_true(compared > 5000);
	assert_true(dup_keys > 0);
}

/* perf 6.1 sizes the Source:Line column from the srclines it computed by
 * the time each row entered its output tree, and computes one only in a
 * comparison that reaches the srcline key: the walks of a row's second
 * and later samples end at it (compared on every key), and a row is
 * compared with the others of its symbol when they are inserted. Rows:
 * x (5 samples), y (1 or 2, the longest kernel srcline), z1 and z2 (one
 * symbol, 1 sample each), w (a user row of 1 sample, the longest
 * srcline); -s sym,srcline without Children. */
static size_t srcline_width_of(unsigned y_count)
{
	enum { X, Y, Z, W };
	static const struct { int sym; const char *srcline; unsigned count; } row[] = {
		{ X, "x.c:1", 5 }, { Y, "__raw_callee_save_pvm_irq_enable+17", 0 }, { Z, "z+1", 1 },
		{ Z, "__get_pfnblock_flags+74", 1 }, { W, "a/long/user/source/file/name.c:77", 1 } };
	pf_profile p;
	memset(&p, 0, sizeof(p));
	pf_strtab_init(&p.strs);
	p.nr_dsos = 2;
	p.dsos = calloc(2, sizeof(pf_dso));
	p.dsos[0] = (pf_dso){ .long_name = str(&p, "/bin/prog"), .short_name = str(&p, "prog"), .kind = SYM_DSO_USER };
	p.dsos[1] = (pf_dso){ .long_name = str(&p, "[kernel.kallsyms]"), .short_name = str(&p, "[kernel.kallsyms]"),
			      .kind = SYM_DSO_KERNEL };
	static const char *names[] = { "x", "y", "z", "w" };
	p.nr_syms = 4;
	p.syms = calloc(4, sizeof(pf_sym));
	for (uint32_t i = 0; i < 4; i++)
		p.syms[i] = (pf_sym){ i == Y || i == Z, str(&p, names[i]), 0x1000 + 0x100 * (uint64_t)i,
				      0x1080 + 0x100 * (uint64_t)i };
	p.nr_locs = 5;
	p.locs = calloc(5, sizeof(pf_loc));
	node(&p, 0, PF_NONE);
	p.nodes[0].depth = 0;
	p.events = calloc(1, sizeof(pf_event));
	p.events[0] = (pf_event){ .name = strdup("cpu-clock") };
	p.nr_events = 1;
	p.threads = calloc(1, sizeof(pf_thread));
	p.threads[0] = (pf_thread){ 10, 10, str(&p, "prog") };
	p.nr_threads = 1;
	for (uint32_t i = 0; i < 5; i++) {
		const pf_sym *y = &p.syms[row[i].sym];
		p.locs[i] = (pf_loc){ .dso = y->dso, .sym = (uint32_t)row[i].sym, .addr = y->start + 4 * (i + 1),
				      .ip = y->start + 4 * (i + 1), .level = y->dso ? 'k' : '.',
				      .srcline = str(&p, row[i].srcline) };
		unsigned count = row[i].count ? row[i].count : y_count;
		(void)PF_GROW(p.samples, p.cap_samples, p.nr_samples + 1);
		p.samples[p.nr_samples++] = (pf_sample){ .evsel = 0, .thread = 0, .pid = 10, .tid = 10,
			.comm = p.threads[0].comm, .cpu = PF_NONE, .stack = node(&p, 0, i),
			.period = 1000 * (uint64_t)count, .count = count };
		p.events[0].total_period += 1000 * (uint64_t)count;
	}
	hist_opts o;
	hist_opts_init(&o);
	o.sort = "sym,srcline";
	hist *h;
	proff_error err;
	assert_int_equal(hist_build(&p, 0, &o, &h, &err), 0);
	hist_sort_report(h);
	assert_int_equal(h->n, 5);
	size_t w = hist_key_col_width(h, HK_SRCLINE);
	hist_free(h);
	free_profile(&p);
	return w;
}

static void test_srcline_width(void **state)
{
	(void)state;
	/* y of one sample: neither y nor w was compared; z1 and z2 were */
	assert_int_equal(srcline_width_of(1), strlen("__get_pfnblock_flags+74"));
	/* y's second sample compared it */
	assert_int_equal(srcline_width_of(2), strlen("__raw_callee_save_pvm_irq_enable+17"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_self, setup, teardown),
		cmocka_unit_test_setup_teardown(test_children_and_recursion, setup, teardown),
		cmocka_unit_test_setup_teardown(test_comm_key_and_filters, setup, teardown),
		cmocka_unit_test_setup_teardown(test_callchain_tree, setup, teardown),
		cmocka_unit_test(test_parse_sort),
		cmocka_unit_test(test_pass_split),
		cmocka_unit_test_setup_teardown(test_diff_mode_collapses_by_name, setup, teardown),
		cmocka_unit_test(test_order_fast_paths),
		cmocka_unit_test(test_print_split),
		cmocka_unit_test(test_tree_mode),
		cmocka_unit_test(test_srcline_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
