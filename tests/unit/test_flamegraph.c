/* test_flamegraph.c — the flame graph builder on hand-made profiles whose
 * frames are known by construction: stackcollapse-perf.pl's naming rules,
 * the folded stacks' order, the minimum width's merged frame, the callee
 * view, a diff's union of both sides, and the output names' formats. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "proff/flamegraph.h"

/* A profile made by hand: one event, one comm ("prog one"), a main() with
 * callees named to exercise the naming rules. */
typedef struct fake {
	pf_profile p;
	pf_dso dsos[2];
	pf_sym syms[6];
	pf_loc locs[8];
	pf_node nodes[9];
	pf_sample samples[8];
	pf_event ev;
} fake;

static uint32_t S(fake *f, const char *s)
{
	return (uint32_t)pf_strtab_intern(&f->p.strs, s, strlen(s));
}

/* periods per stack node 1..8 (0: no sample there) */
static void fake_init(fake *f, const uint64_t period[9])
{
	memset(f, 0, sizeof(*f));
	assert_int_equal(pf_strtab_init(&f->p.strs), 0);
	f->dsos[0] = (pf_dso){ .long_name = S(f, "/usr/bin/prog"), .short_name = S(f, "prog") };
	f->dsos[1] = (pf_dso){ .long_name = S(f, "/usr/lib/libx.so.1"), .short_name = S(f, "libx.so.1") };
	const char *names[6] = { "main", "work(int, char)", "ns::f;g", "\"quoted\"", "(anonymous namespace)::h(int)",
				 "net/http.(*Client).Do" };
	for (int i = 0; i < 6; i++) {
		f->syms[i] = (pf_sym){ .dso = 0, .name = S(f, names[i]), .start = 0x1000u * (i + 1), .end = 0x1000u * (i + 2) };
		f->locs[i] = (pf_loc){ .addr = 0x1000u * (i + 1), .dso = 0, .sym = (uint32_t)i, .srcline = PF_NONE, .level = '.' };
	}
	f->locs[6] = (pf_loc){ .addr = 0x40, .dso = 1, .sym = PF_NONE, .srcline = PF_NONE, .level = '.' };
	f->locs[7] = (pf_loc){ .addr = 0x99, .dso = PF_NONE, .sym = PF_NONE, .srcline = PF_NONE, .level = '.' };
	/* node: parent, loc — main; work under main; ns::f;g under work; the
	 * others under main; [unknown] under [libx.so.1] */
	static const uint32_t parent[9] = { 0, 0, 1, 2, 1, 1, 1, 1, 7 }, loc[9] = { 0, 0, 1, 2, 3, 4, 5, 6, 7 };
	for (int i = 0; i < 9; i++)
		f->nodes[i] = (pf_node){ .parent = parent[i], .loc = loc[i] };
	uint32_t comm = S(f, "prog one");
	size_t n = 0;
	for (uint32_t i = 1; i < 9; i++)
		if (period[i])
			f->samples[n++] = (pf_sample){ .evsel = 0, .comm = comm, .pid = 7, .tid = 7, .cpu = PF_NONE,
						       .stack = i, .count = 1, .period = period[i] };
	f->ev.name = (char *)"cpu-clock";
	f->p.path = (char *)"fake.data";
	f->p.dsos = f->dsos, f->p.nr_dsos = 2;
	f->p.syms = f->syms, f->p.nr_syms = 6;
	f->p.locs = f->locs, f->p.nr_locs = 8;
	f->p.nodes = f->nodes, f->p.nr_nodes = 9;
	f->p.samples = f->samples, f->p.nr_samples = n;
	f->p.events = &f->ev, f->p.nr_events = 1;
}

static const uint64_t A[9] = { 0, 20, 100, 50, 10, 5, 1, 3, 2 };

static char *folded_of(flamegraph *g)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(fg_write_folded(g, m), 0);
	fclose(m);
	return buf;
}

static flamegraph *build(fake *fa, fake *fb, double min_width)
{
	fg_opts o;
	fg_opts_init(&o);
	o.min_width = min_width;
	flamegraph *g;
	proff_error err;
	assert_int_equal(fg_new(&g, fb ? 2 : 1, &o, &err), 0);
	assert_int_equal(fg_add_profile(g, 0, &fa->p, 0, &o, &err), 0);
	if (fb)
		assert_int_equal(fg_add_profile(g, 1, &fb->p, 0, &o, &err), 0);
	assert_int_equal(fg_finish(g, &err), 0);
	return g;
}

/* stackcollapse-perf.pl's names and sort order */
static void test_folded_names(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, A);
	flamegraph *g = build(&f, NULL, 0);
	char *out = folded_of(g);
	assert_string_equal(out,
			    "prog_one;main 20\n"
			    "prog_one;main;(anonymous namespace)::h 5\n"
			    "prog_one;main;[libx.so.1] 3\n"
			    "prog_one;main;[libx.so.1];[unknown] 2\n"
			    "prog_one;main;net/http.(*Client).Do 1\n"
			    "prog_one;main;quoted 10\n"
			    "prog_one;main;work 100\n"
			    "prog_one;main;work;ns::f:g 50\n");
	free(out);
	assert_int_equal(g->total[0], 191);
	fg_free(g);
	pf_strtab_free(&f.p.strs);
}

static const fg_frame *child(const flamegraph *g, const fg_view *v, uint32_t parent, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		if (v->frames[i].parent == parent && !strcmp(g->names.strs[v->frames[i].name], name))
			return &v->frames[i];
	return NULL;
}

/* 5 % of 191 is 9.55: (anonymous namespace)::h, the Go method and
 * [libx.so.1] (5 + 1 + 5) become one frame; children + self = total */
static void test_min_width(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, A);
	flamegraph *g = build(&f, NULL, 5);
	const fg_view *v = fg_get_view(g, FG_BY_FUNCTION, FG_CALLER);
	assert_non_null(v);
	assert_int_equal(v->frames[0].total[0], 191);
	const fg_frame *comm = child(g, v, 0, "prog_one");
	assert_non_null(comm);
	uint32_t main_i = (uint32_t)(child(g, v, (uint32_t)(comm - v->frames), "main") - v->frames);
	const fg_frame *m = &v->frames[main_i];
	assert_int_equal(m->total[0], 191);
	assert_int_equal(m->self[0], 20);
	const fg_frame *merged = child(g, v, main_i, "[3 frames below 5%]");
	assert_non_null(merged);
	assert_int_equal(merged->merged, 3);
	assert_int_equal(merged->total[0], 11);
	assert_int_equal(merged->count[0], 4);
	assert_int_equal(child(g, v, main_i, "work")->total[0], 150);
	assert_int_equal(child(g, v, main_i, "quoted")->total[0], 10);
	assert_null(child(g, v, main_i, "[libx.so.1]"));
	/* siblings by name, the merged frame last; parents first */
	uint64_t sum = 0;
	const char *prev = "";
	for (size_t i = 0; i < v->n; i++) {
		assert_true(v->frames[i].parent == UINT32_MAX || v->frames[i].parent < i);
		if (v->frames[i].parent == main_i) {
			const char *nm = g->names.strs[v->frames[i].name];
			assert_true(v->frames[i].merged || strcmp(prev, nm) < 0);
			prev = nm;
			sum += v->frames[i].total[0];
		}
	}
	assert_int_equal(sum + m->self[0], m->total[0]);
	fg_free(g);
	pf_strtab_free(&f.p.strs);
}

/* the callee view: leaf functions first, their callers above */
static void test_callee(void **state)
{
	(void)state;
	fake f;
	fake_init(&f, A);
	flamegraph *g = build(&f, NULL, 0);
	const fg_view *v = fg_get_view(g, FG_BY_FUNCTION, FG_CALLEE);
	assert_non_null(v);
	assert_int_equal(v->frames[0].total[0], 191);
	const fg_frame *nsf = child(g, v, 0, "ns::f:g");
	assert_non_null(nsf);
	assert_int_equal(nsf->total[0], 50);
	const fg_frame *w = child(g, v, (uint32_t)(nsf - v->frames), "work");
	assert_non_null(w);
	assert_int_equal(w->total[0], 50);
	const fg_frame *wm = child(g, v, (uint32_t)(w - v->frames), "main");
	const fg_frame *wc = child(g, v, (uint32_t)(wm - v->frames), "prog_one");
	assert_non_null(wc);
	assert_int_equal(wc->self[0], 50);   /* the path ends at the process name */
	assert_int_equal(child(g, v, 0, "work")->total[0], 100);
	assert_int_equal(child(g, v, 0, "main")->total[0], 20);
	fg_free(g);
	pf_strtab_free(&f.p.strs);
}

/* a diff: the union of both sides, a path only the baseline has kept */
static void test_diff_union(void **state)
{
	(void)state;
	static const uint64_t B[9] = { 0, 20, 200, 50, 0, 5, 1, 3, 2 };   /* no "quoted", work doubled */
	fake fa, fb;
	fake_init(&fa, A);
	fake_init(&fb, B);
	flamegraph *g = build(&fa, &fb, 0);
	char *out = folded_of(g);
	assert_non_null(strstr(out, "prog_one;main;quoted 10 0\n"));
	assert_non_null(strstr(out, "prog_one;main;work 100 200\n"));
	free(out);
	const fg_view *v = fg_get_view(g, FG_BY_FUNCTION, FG_CALLER);
	const fg_frame *q = NULL;
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(g->names.strs[v->frames[i].name], "quoted"))
			q = &v->frames[i];
	assert_non_null(q);
	assert_int_equal(q->total[0], 10);
	assert_int_equal(q->total[1], 0);
	assert_non_null(v->sig_total);
	assert_int_equal(g->total[1], 281);
	fg_free(g);
	pf_strtab_free(&fa.p.strs);
	pf_strtab_free(&fb.p.strs);
}

static void test_formats(void **state)
{
	(void)state;
	assert_int_equal(fg_format_of("a/b.svg"), FG_SVG);
	assert_int_equal(fg_format_of("x.HTML"), FG_HTML);
	assert_int_equal(fg_format_of("x.htm"), FG_HTML);
	assert_int_equal(fg_format_of("x.folded"), FG_FOLDED);
	assert_int_equal(fg_format_of("-"), FG_FOLDED);
	assert_int_equal(fg_format_of("x.png"), -1);
	assert_int_equal(fg_format_of("dir.svg/x"), -1);
	assert_int_equal(fg_format_of("noext"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_names),
		cmocka_unit_test(test_min_width),
		cmocka_unit_test(test_callee),
		cmocka_unit_test(test_diff_union),
		cmocka_unit_test(test_formats),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
