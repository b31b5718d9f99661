/* test_plan.c — the planner (lib/plan/plan.c) derives the loader's options
 * and the stages from the keys, filters and outputs:
 *  - named cases: what each option is for (a pid key keeps threads apart, a
 *    parent key resolves callchains, --max-stack 0 resolves none, a
 *    srcline key plans the srcline stage, ...);
 *  - every key of the catalogue and a few key sets, under every
 *    combination of filters and outputs, against the two derivations the
 *    commands made before the planner (cmd-report.c's and cmd-diff.c's,
 *    written out below as they were), so moving them into the library
 *    changed no command's loading. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/hist.h"
#include "proff/plan.h"

static void plan_ok(const plan_request *r, pf_load_opts *lo, plan_stages *st)
{
	proff_error err = { 0 };
	pf_load_opts_init(lo);
	memset(st, 0xff, sizeof(*st));
	assert_int_equal(proff_plan(r, lo, st, &err), 0);
}

static void test_named_cases(void **state)
{
	(void)state;
	pf_load_opts lo;
	plan_stages st;
	/* report's default: comm,dso,sym with Children: per comm, callchains,
	 * the raw order for perf's input tree */
	plan_request r = { .sort = "comm,dso,sym", .children = true, .graph = true, .report_order = true };
	plan_ok(&r, &lo, &st);
	assert_true(lo.merge_by_comm);
	assert_false(lo.merge_threads);
	assert_true(lo.use_callchain);
	assert_true(lo.keep_sequence);
	assert_false(st.srclines);
	/* no Children, -g none: leaves only, no raw order */
	r = (plan_request){ .sort = "comm,dso,sym", .report_order = true };
	plan_ok(&r, &lo, &st);
	assert_false(lo.use_callchain);
	assert_false(lo.keep_sequence);
	/* ... unless a parent key or --parent reads the callers */
	r.sort = "parent,sym";
	plan_ok(&r, &lo, &st);
	assert_true(lo.use_callchain);
	r.sort = "sym";
	r.parent = true;
	plan_ok(&r, &lo, &st);
	assert_true(lo.use_callchain);
	/* --max-stack 0: no callchain, even with Children and a graph */
	r = (plan_request){ .sort = "sym", .children = true, .graph = true, .no_stack = true, .report_order = true };
	plan_ok(&r, &lo, &st);
	assert_false(lo.use_callchain);
	/* pid, tid and cpu keys or filters keep threads apart */
	const char *thread_keys[] = { "pid", "tid", "cpu", "comm,pid" };
	for (size_t i = 0; i < sizeof(thread_keys) / sizeof(thread_keys[0]); i++) {
		r = (plan_request){ .sort = thread_keys[i] };
		plan_ok(&r, &lo, &st);
		assert_false(lo.merge_by_comm);
		assert_false(lo.merge_threads);
	}
	r = (plan_request){ .sort = "dso,sym", .thread_filter = true };
	plan_ok(&r, &lo, &st);
	assert_false(lo.merge_by_comm);
	assert_false(lo.merge_threads);
	/* diff's dso,sym: one sample per stack; not with a comm filter, a
	 * flame graph (per comm) or perf report's order (ties per thread) */
	r = (plan_request){ .sort = "dso,sym" };
	plan_ok(&r, &lo, &st);
	assert_true(lo.merge_threads);
	assert_false(lo.keep_sequence);
	r.comm_filter = true;
	plan_ok(&r, &lo, &st);
	assert_false(lo.merge_threads);
	assert_true(lo.merge_by_comm);
	r = (plan_request){ .sort = "dso,sym", .flamegraph = true };
	plan_ok(&r, &lo, &st);
	assert_false(lo.merge_threads);
	assert_true(lo.use_callchain);
	r = (plan_request){ .sort = "dso,sym", .report_order = true };
	plan_ok(&r, &lo, &st);
	assert_false(lo.merge_threads);
	/* a flame graph reads every call path, keeps no raw order */
	r = (plan_request){ .sort = "comm,dso,sym", .flamegraph = true, .children = true, .no_stack = true,
			    .report_order = true };
	plan_ok(&r, &lo, &st);
	assert_true(lo.use_callchain);
	assert_false(lo.keep_sequence);
	/* srcline keys plan the srcline stage, others not */
	const char *src_keys[] = { "srcline", "sym,srcline", "srcfile" };
	for (size_t i = 0; i < sizeof(src_keys) / sizeof(src_keys[0]); i++) {
		r = (plan_request){ .sort = src_keys[i] };
		plan_ok(&r, &lo, &st);
		assert_true(st.srclines);
	}
	r = (plan_request){ .sort = NULL };     /* the default keys */
	plan_ok(&r, &lo, &st);
	assert_false(st.srclines);
	assert_true(lo.merge_by_comm);
	/* what the plan does not decide stays as it was */
	pf_load_opts_init(&lo);
	lo.symfs = "/x";
	lo.split_load = true;
	proff_error err = { 0 };
	assert_int_equal(proff_plan(&r, &lo, &st, &err), 0);
	assert_string_equal(lo.symfs, "/x");
	assert_true(lo.split_load);
}

static void test_unknown_key(void **state)
{
	(void)state;
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	plan_stages st;
	proff_error err = { 0 };
	plan_request r = { .sort = "dso,nosuchkey" };
	assert_true(proff_plan(&r, &lo, &st, &err) < 0);
	assert_int_equal(err.code, PROFF_EUSAGE);
	assert_non_null(strstr(err.msg, "nosuchkey"));
}

/* cmd-report.c's derivation before the planner */
static void report_before(const plan_request *r, unsigned needs, pf_load_opts *lo)
{
	lo->merge_by_comm = !r->thread_filter && !(needs & (HKN_THREAD | HKN_CPU));
	lo->keep_sequence = r->children;
	/* (added since: a key whose perf comparator is no order, branch
	 * mode's mispredict, is replayed over the raw samples too) */
	lo->keep_sequence |= (needs & HKN_PARTIAL) != 0;
	bool parent_key = r->parent || (needs & HKN_CALLCHAIN);
	lo->use_callchain = !r->no_stack && (r->children || r->graph || parent_key);
	if (r->flamegraph) {
		lo->keep_sequence = false;
		lo->use_callchain = true;
	}
	/* the time key (newer than this derivation): the raw samples and
	 * their times, whatever the outputs */
	if (needs & HKN_TIME)
		lo->keep_sequence = true;
}

/* cmd-diff.c's derivation before the planner (no --parent, no graph, no
 * --max-stack in diff) */
static void diff_before(const plan_request *r, const int *keys, int nk, pf_load_opts *lo)
{
	bool need_callchain = r->flamegraph || r->children;
	bool merge_threads = !r->comm_filter && !r->thread_filter && !r->flamegraph;
	bool merge_by_comm = !r->thread_filter;
	for (int k = 0; k < nk; k++) {
		unsigned n = hist_keys[keys[k]].needs;
		need_callchain |= (n & HKN_CALLCHAIN) != 0;
		if (!(n & HKN_LOC))
			merge_threads = false;
		if (n & (HKN_THREAD | HKN_CPU))
			merge_by_comm = false;
	}
	lo->use_callchain = need_callchain;
	lo->merge_threads = merge_threads;
	lo->merge_by_comm = merge_by_comm;
	/* the time key (newer than this derivation): the raw samples and
	 * their times */
	lo->keep_sequence = (hist_keys_needs(keys, nk) & HKN_TIME) != 0;
}

static void check_spec(const char *spec, size_t *ncases)
{
	int keys[HIST_MAX_KEYS];
	proff_error err = { 0 };
	int nk = hist_parse_sort(spec, keys, HIST_MAX_KEYS, &err);
	assert_true(nk > 0);
	unsigned needs = hist_keys_needs(keys, nk);
	for (unsigned bits = 0; bits < 128; bits++) {
		plan_request r = {
			.sort = spec, .thread_filter = bits & 1, .comm_filter = bits & 2, .children = bits & 4,
			.graph = bits & 8, .parent = bits & 16, .no_stack = bits & 32, .flamegraph = bits & 64,
		};
		pf_load_opts got, want;
		plan_stages st;
		/* report */
		r.report_order = true;
		plan_ok(&r, &got, &st);
		pf_load_opts_init(&want);
		report_before(&r, needs, &want);
		if (got.merge_by_comm != want.merge_by_comm || got.merge_threads != want.merge_threads ||
		    got.use_callchain != want.use_callchain || got.keep_sequence != want.keep_sequence)
			fail_msg("report -s %s, request bits 0x%x: planned comm %d threads %d callchain %d sequence %d, "
				 "the command had %d %d %d %d", spec, bits, got.merge_by_comm, got.merge_threads,
				 got.use_callchain, got.keep_sequence, want.merge_by_comm, want.merge_threads,
				 want.use_callchain, want.keep_sequence);
		assert_int_equal(st.srclines, (needs & HKN_SRCLINE) != 0);
		assert_int_equal(st.reference, (needs & (HKN_CPUMODE | HKN_TIME)) != 0);
		assert_int_equal(got.keep_time, (needs & HKN_TIME) != 0);
		if (needs & HKN_TIME)
			assert_false(got.split_load);
		(*ncases)++;
		/* diff: its own options only */
		if (r.graph || r.parent || r.no_stack)
			continue;
		r.report_order = false;
		plan_ok(&r, &got, &st);
		pf_load_opts_init(&want);
		diff_before(&r, keys, nk, &want);
		if (got.merge_by_comm != want.merge_by_comm || got.merge_threads != want.merge_threads ||
		    got.use_callchain != want.use_callchain || got.keep_sequence != want.keep_sequence)
			fail_msg("diff -s %s, request bits 0x%x: planned comm %d threads %d callchain %d sequence %d, "
				 "the command had %d %d %d %d", spec, bits, got.merge_by_comm, got.merge_threads,
				 got.use_callchain, got.keep_sequence, want.merge_by_comm, want.merge_threads,
				 want.use_callchain, want.keep_sequence);
		(*ncases)++;
	}
}

static void test_same_as_the_commands(void **state)
{
	(void)state;
	size_t ncases = 0;
	char spec[128];
	for (int i = 0; i < hist_nr_keys; i++) {
		snprintf(spec, sizeof(spec), i == HK_LABEL ? "%s:x" : "%s", hist_keys[i].name);
		check_spec(spec, &ncases);
	}
	const char *sets[] = { "comm,dso,sym", "dso,sym", "pid,sym", "comm,dso", "sym,srcline", "cpu,comm",
			       "parent,dso,sym", "dso,sym,srcfile" };
	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++)
		check_spec(sets[i], &ncases);
	print_message("%zu requests compared\n", ncases);
	assert_true(ncases > 1000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_named_cases),
		cmocka_unit_test(test_unknown_key),
		cmocka_unit_test(test_same_as_the_commands),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
