/* test_hist_stage.c — hist_build only reads the profile (#29): srclines are
 * a stage before it (hist_srclines, chosen by the planner), and freeing
 * the raw sequence is the caller's call. On a small `perf record -g` of a
 * shell workload (skipped when perf cannot record here):
 *  - a srcline key without the stage is refused with an error naming it,
 *    and the profile is left as it was;
 *  - with the stage, every key set (srcline, srcfile, the default keys,
 *    pid) in Self and Children mode, with and without callchain trees,
 *    builds its rows and leaves every array of the profile byte-identical
 *    (strings, locations, symbols, dsos, nodes, samples, raw sequence);
 *  - the stage made the srcline of every row's location. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "proff/hist.h"
#include "proff/plan.h"
#include "proff/profile.h"

static char g_dir[512];
static char g_data[600];
static bool g_have_perf;

static int setup(void **state)
{
	(void)state;
	if (tu_mkdtemp(g_dir, sizeof(g_dir), "stage") < 0)
		return -1;
	snprintf(g_data, sizeof(g_data), "%s/p.data", g_dir);
	g_have_perf = tu_sh("cd '%s' && seq 1 60000 | sed 's/$/ lorem/' > words && "
			    "perf record -q -F 5000 -g -e cpu-clock -o p.data sh -c "
			    "'for i in 1 2; do sort -R words > /dev/null; ls -l /usr/bin > /dev/null; done' "
			    ">/dev/null 2>&1", g_dir) == 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tu_rmdir(g_dir);
}

/* The profile's arrays, copied: what hist_build must leave as it is */
typedef struct snap {
	size_t nstr, nlocs, nsyms, ndsos, nnodes, nsamples, nseq;
	char *strs;          /* every string, NUL-separated */
	size_t strs_len;
	void *locs, *syms, *nodes, *samples, *seq;
	uint32_t *dso_names;
} snap;

static void *dup_mem(const void *p, size_t n)
{
	void *q = malloc(n ? n : 1);
	assert_non_null(q);
	if (n)
		memcpy(q, p, n);
	return q;
}

static void snap_take(const pf_profile *p, snap *s)
{
	s->nstr = p->strs.n;
	s->strs_len = 0;
	for (size_t i = 0; i < p->strs.n; i++)
		s->strs_len += p->strs.lens[i] + 1;
	s->strs = malloc(s->strs_len + 1);
	assert_non_null(s->strs);
	size_t at = 0;
	for (size_t i = 0; i < p->strs.n; i++) {
		memcpy(s->strs + at, p->strs.strs[i], p->strs.lens[i]);
		at += p->strs.lens[i];
		s->strs[at++] = 0;
	}
	s->nlocs = p->nr_locs;
	s->nsyms = p->nr_syms;
	s->ndsos = p->nr_dsos;
	s->nnodes = p->nr_nodes;
	s->nsamples = p->nr_samples;
	s->nseq = p->nr_seq;
	s->locs = dup_mem(p->locs, p->nr_locs * sizeof(*p->locs));
	s->syms = dup_mem(p->syms, p->nr_syms * sizeof(*p->syms));
	s->nodes = dup_mem(p->nodes, p->nr_nodes * sizeof(*p->nodes));
	s->samples = dup_mem(p->samples, p->nr_samples * sizeof(*p->samples));
	s->seq = dup_mem(p->seq, p->nr_seq * sizeof(*p->seq));
	s->dso_names = malloc((p->nr_dsos + 1) * sizeof(uint32_t));
	assert_non_null(s->dso_names);
	for (size_t i = 0; i < p->nr_dsos; i++)
		s->dso_names[i] = p->dsos[i].long_name;
}

static void snap_check(const pf_profile *p, const snap *s, const char *what)
{
	snap now;
	snap_take(p, &now);
	print_message("%s: %zu strings, %zu locations, %zu samples, %zu raw samples\n", what, now.nstr, now.nlocs,
		      now.nsamples, now.nseq);
	assert_int_equal(now.nstr, s->nstr);
	assert_int_equal(now.strs_len, s->strs_len);
	assert_memory_equal(now.strs, s->strs, s->strs_len);
	assert_int_equal(now.nlocs, s->nlocs);
	assert_int_equal(now.nsyms, s->nsyms);
	assert_int_equal(now.ndsos, s->ndsos);
	assert_int_equal(now.nnodes, s->nnodes);
	assert_int_equal(now.nsamples, s->nsamples);
	assert_int_equal(now.nseq, s->nseq);
	if (s->nlocs)
		assert_memory_equal(now.locs, s->locs, s->nlocs * sizeof(*p->locs));
	if (s->nsyms)
		assert_memory_equal(now.syms, s->syms, s->nsyms * sizeof(*p->syms));
	if (s->nnodes)
		assert_memory_equal(now.nodes, s->nodes, s->nnodes * sizeof(*p->nodes));
	if (s->nsamples)
		assert_memory_equal(now.samples, s->samples, s->nsamples * sizeof(*p->samples));
	if (s->nseq)
		assert_memory_equal(now.seq, s->seq, s->nseq * sizeof(*p->seq));
	if (s->ndsos)
		assert_memory_equal(now.dso_names, s->dso_names, s->ndsos * sizeof(uint32_t));
	free(now.strs); free(now.locs); free(now.syms); free(now.nodes); free(now.samples); free(now.seq);
	free(now.dso_names);
}

static void snap_free(snap *s)
{
	free(s->strs); free(s->locs); free(s->syms); free(s->nodes); free(s->samples); free(s->seq);
	free(s->dso_names);
}

static pf_profile *load(void)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.keep_sequence = true;      /* tree mode's raw order: read, never freed by hist_build */
	proff_error err = { 0 };
	pf_profile *p = NULL;
	assert_int_equal(pf_profile_load(g_data, &o, &p, &err), 0);
	return p;
}

/* the first event with samples */
static uint32_t event_of(const pf_profile *p)
{
	uint32_t ev = 0;
	while (ev + 1 < p->nr_events && !p->events[ev].nr_samples)
		ev++;
	return ev;
}

static void test_srcline_key_needs_the_stage(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_profile *p = load();
	snap s;
	snap_take(p, &s);
	hist_opts o;
	hist_opts_init(&o);
	o.sort = "sym,srcline";
	hist *h = NULL;
	proff_error err = { 0 };
	assert_true(hist_build(p, event_of(p), &o, &h, &err) < 0);
	assert_null(h);
	assert_int_equal(err.code, PROFF_EUSAGE);
	assert_non_null(strstr(err.msg, "hist_srclines"));
	snap_check(p, &s, "refused");
	snap_free(&s);
	pf_profile_free(p);
}

static void test_build_reads_only(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_profile *p = load();
	uint32_t ev = event_of(p);
	const char *sorts[] = { "sym,srcline", "dso,srcfile", "comm,dso,sym", "pid,sym", "srcline" };
	size_t nbuilt = 0;
	for (size_t k = 0; k < sizeof(sorts) / sizeof(sorts[0]); k++)
		for (int mode = 0; mode < 4; mode++) {
			hist_opts o;
			hist_opts_init(&o);
			o.sort = sorts[k];
			o.children = mode & 1;
			o.callchain = mode & 2;
			o.caller_order = o.children;
			o.order_early = true;
			proff_error err = { 0 };
			/* the stage the planner chooses for these keys */
			plan_request r = { .sort = sorts[k], .children = o.children, .graph = o.callchain,
					   .report_order = true };
			pf_load_opts lo;
			pf_load_opts_init(&lo);
			plan_stages st;
			assert_int_equal(proff_plan(&r, &lo, &st, &err), 0);
			assert_int_equal(st.srclines, strstr(sorts[k], "src") != NULL);
			if (st.srclines)
				assert_int_equal(hist_srclines(p, ev, &o, &err), 0);
			snap s;
			snap_take(p, &s);
			hist *h = NULL;
			if (hist_build(p, ev, &o, &h, &err) < 0)
				fail_msg("-s %s mode %d: %s", sorts[k], mode, err.msg);
			assert_true(h->n > 0);
			hist_sort_report(h);
			for (size_t i = 0; st.srclines && i < h->n; i++)
				assert_int_not_equal(p->locs[h->entries[i].loc].srcline, PF_NONE);
			char what[96];
			snprintf(what, sizeof(what), "-s %s mode %d, %zu rows", sorts[k], mode, h->n);
			hist_free(h);
			snap_check(p, &s, what);
			snap_free(&s);
			nbuilt++;
		}
	assert_int_equal(nbuilt, 20);
	/* the raw sequence stays until the caller frees it */
	assert_true(p->nr_seq > 0);
	pf_profile_drop_sequence(p);
	assert_int_equal(p->nr_seq, 0);
	pf_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_srcline_key_needs_the_stage),
		cmocka_unit_test(test_build_reads_only),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
