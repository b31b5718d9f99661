/* test_diff_groups.c — unit tests of lib/diff/groups.c on hists built by
 * hand: every row's means, compute values and test against lib/stats called
 * directly on the same per-run values, the q-values against stats_bh over
 * the printed rows' tests, perf diff's order on the means, the filters, -b,
 * --significant-only, --min-share, --fail-on-regression, the sampling-noise
 * mode of one run per group, and a table large enough for the statistics'
 * two threads (the ThreadSanitizer build runs this test too).
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/diff.h"
#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/stats.h"

typedef struct run {
	pf_profile prof;
	hist h;
} run;

/* the period of row i in run r: a long tail, with +-10 % noise; row 3 grows
 * by `effect` in group 1; rows i % 7 == 5 are missing from run 0 */
static uint64_t period_of(size_t i, size_t r, bool b, double effect)
{
	stats_rng g;
	stats_rng_seed(&g, i * 1000003 + r);
	double u = (double)stats_rng_below(&g, 1000000) / 1e6;
	double p = 1e9 / (double)(i + 1) * (0.9 + 0.2 * u);
	if (i == 3 && b)
		p *= 1 + effect;
	if (i % 7 == 5 && r == 0)
		return 0;
	return (uint64_t)p;
}

static void build(run *x, size_t nrows, size_t r, bool b, double effect)
{
	memset(x, 0, sizeof(*x));
	assert_int_equal(pf_strtab_init(&x->prof.strs), 0);
	x->prof.dsos = calloc(2, sizeof(pf_dso));
	x->prof.syms = calloc(nrows, sizeof(pf_sym));
	x->h.entries = calloc(nrows, sizeof(hist_entry));
	assert_non_null(x->prof.dsos);
	assert_non_null(x->prof.syms);
	assert_non_null(x->h.entries);
	x->prof.nr_dsos = 2;
	x->prof.dsos[0].short_name = x->prof.dsos[0].long_name = (uint32_t)pf_strtab_intern(&x->prof.strs, "prog", 4);
	x->prof.dsos[1].short_name = x->prof.dsos[1].long_name = (uint32_t)pf_strtab_intern(&x->prof.strs, "libc.so.6", 9);
	x->h.prof = &x->prof;
	x->h.keys[0] = HK_DSO;
	x->h.keys[1] = HK_SYM;
	x->h.nkeys = 2;
	x->h.opts.diff_mode = true;
	/* every other run lists its rows backwards: pairing is by key, not place */
	for (size_t k = 0; k < nrows; k++) {
		size_t i = r % 2 ? nrows - 1 - k : k;
		uint64_t p = period_of(i, r, b, effect);
		if (!p)
			continue;
		char name[32];
		int n = snprintf(name, sizeof(name), "f%zu", i);
		uint32_t s = (uint32_t)x->prof.nr_syms++;
		x->prof.syms[s].dso = i % 3 == 0;
		x->prof.syms[s].name = (uint32_t)pf_strtab_intern(&x->prof.strs, name, (size_t)n);
		hist_entry *e = &x->h.entries[x->h.n++];
		e->dso = x->prof.syms[s].dso;
		e->sym = s;
		e->sym_name = x->prof.syms[s].name;
		e->level = '.';
		e->period = p;
		e->period_acc = p + 1000;
		e->nr_events = p / 250000 + 1;
		e->filtered = i == 4 ? HF_SYMBOL : 0;     /* f4 hidden, as by -S */
		x->h.total_period += p;
		x->h.nr_samples += e->nr_events;
		if (!e->filtered) {
			x->h.total_non_filtered_period += p;
			x->h.nr_non_filtered_samples += e->nr_events;
		}
	}
}

static void free_run(run *x)
{
	pf_strtab_free(&x->prof.strs);
	free(x->prof.dsos);
	free(x->prof.syms);
	free(x->h.entries);
}

typedef struct fixture {
	run *runs;
	size_t nruns, per, nrows;
	double effect;
	uint32_t *group;
	diff_table *t;
} fixture;

static void make_table(fixture *f, size_t nrows, size_t per, double effect, const diff_opts *o,
		       const diff_group_opts *g)
{
	f->nruns = 2 * per;
	f->per = per;
	f->effect = effect;
	f->nrows = nrows;
	f->runs = calloc(f->nruns, sizeof(run));
	f->group = calloc(f->nruns, sizeof(uint32_t));
	assert_non_null(f->runs);
	assert_non_null(f->group);
	for (size_t r = 0; r < f->nruns; r++) {
		f->group[r] = r >= per;
		build(&f->runs[r], nrows, r, r >= per, effect);
	}
	int keys[2] = { HK_DSO, HK_SYM };
	proff_error err;
	assert_int_equal(diff_table_new(f->nruns, f->group, keys, 2, o, g, &f->t, &err), 0);
	/* added in another order than the runs' */
	for (size_t k = 0; k < f->nruns; k++) {
		size_t r = f->nruns - 1 - k;
		assert_int_equal(diff_table_add_run(f->t, r, &f->runs[r].h, &err), 0);
	}
	assert_int_equal(diff_table_compute(f->t, &err), 0);
}

static void free_table(fixture *f)
{
	diff_table_free(f->t);
	for (size_t r = 0; r < f->nruns; r++)
		free_run(&f->runs[r]);
	free(f->runs);
	free(f->group);
}

static long row_index(const diff_trow *row)
{
	return row->keys[1].s ? strtol(row->keys[1].s + 1, NULL, 10) : -1;
}

static void assert_close(double a, double b, double rel)
{
	if (!(fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-300))
		fail_msg("%.17g != %.17g", a, b);
}

/* every row against lib/stats on values computed here */
static void check_rows(const fixture *f, bool absolute)
{
	const diff_table *t = f->t;
	double a[64], b[64];
	double *pv = calloc(t->nrows, sizeof(double)), *qv = calloc(t->nrows, sizeof(double));
	assert_non_null(pv);
	assert_int_equal(t->nrows, f->nrows);
	for (size_t k = 0; k < t->nrows; k++) {
		const diff_trow *row = &t->rows[k];
		long i = row_index(row);
		assert_true(i >= 0 && (size_t)i < f->nrows);
		assert_string_equal(row->keys[0].s, i % 3 == 0 ? "libc.so.6" : "prog");
		for (size_t r = 0; r < f->nruns; r++) {
			const run *x = &f->runs[r];
			double p = (double)period_of((size_t)i, r, r >= f->per, f->effect);
			double v = absolute ? p : 100.0 * p / (double)x->h.total_period;
			(r < f->per ? a : b)[r % f->per] = v;
			assert_close(diff_table_value(t, row, DIFF_SELF, r), v, 1e-12);
		}
		const diff_gstat *g0 = &row->stat[DIFF_SELF][0], *g1 = &row->stat[DIFF_SELF][1];
		assert_close(g0->mean, stats_mean(a, f->per), 1e-12);
		assert_close(g1->mean, stats_mean(b, f->per), 1e-12);
		assert_close(g1->delta, g1->mean - g0->mean, 1e-9);
		assert_int_equal(row->shown, i != 4);
		double pooled = 0;
		for (size_t r = 0; r < f->per; r++)
			pooled += 100.0 * (double)period_of((size_t)i, r, false, f->effect) / (double)f->runs[r].h.total_period +
				  100.0 * (double)period_of((size_t)i, r + f->per, true, f->effect) / (double)f->runs[r + f->per].h.total_period;
		pooled /= (double)(2 * f->per);
		assert_int_equal(g1->small, pooled < t->g.min_share);
		stats_result want;
		stats_welch(a, f->per, b, f->per, 0.95, &want);
		pv[k] = NAN;
		if (g1->small) {
			assert_true(isnan(g1->test.p) && isnan(g1->q));
			continue;
		}
		assert_int_equal(g1->test.status, want.status);
		assert_close(g1->test.p, want.p, 1e-12);
		assert_close(g1->test.ci_low, want.ci_low, 1e-9);
		assert_close(g1->test.ci_high, want.ci_high, 1e-9);
		if (row->shown)
			pv[k] = want.p;
	}
	long m = stats_bh(pv, t->nrows, qv);
	assert_int_equal((size_t)m, t->ntests);
	for (size_t k = 0; k < t->nrows; k++) {
		const diff_gstat *g1 = &t->rows[k].stat[DIFF_SELF][1];
		if (isnan(pv[k]))
			continue;
		assert_close(g1->q, qv[k], 1e-12);
		assert_int_equal(g1->significant, qv[k] <= t->g.fdr);
	}
	/* perf diff's order of delta-abs: |delta| of group 1 descending */
	for (size_t k = 1; k < t->nrows; k++)
		assert_true(fabs(t->rows[k - 1].stat[DIFF_SELF][1].delta) >= fabs(t->rows[k].stat[DIFF_SELF][1].delta));
	free(pv);
	free(qv);
}

static void small_table(void **state)
{
	(void)state;
	diff_opts o;
	diff_opts_init(&o);
	diff_group_opts g;
	diff_group_opts_init(&g);
	fixture f;
	make_table(&f, 300, 5, 1.0, &o, &g);
	assert_int_equal(f.t->mode, DIFF_MODE_RUNS);
	check_rows(&f, false);
	/* the planted row: significant, and a regression above 1 point */
	for (size_t k = 0; k < f.t->nrows; k++)
		if (row_index(&f.t->rows[k]) == 3) {
			assert_true(f.t->rows[k].stat[DIFF_SELF][1].significant);
		}
	free_table(&f);

	g.metric = DIFF_METRIC_ABSOLUTE;
	g.min_share = 0;
	make_table(&f, 300, 4, 0.3, &o, &g);
	check_rows(&f, true);
	free_table(&f);
}

/* two threads from 16 K rows: the same checks */
static void large_table(void **state)
{
	(void)state;
	diff_opts o;
	diff_opts_init(&o);
	diff_group_opts g;
	diff_group_opts_init(&g);
	g.min_share = 0.001;
	g.power = true;
	fixture f;
	make_table(&f, 40000, 3, 0.3, &o, &g);
	check_rows(&f, false);
	size_t needed = 0;
	for (size_t k = 0; k < f.t->nrows; k++) {
		const diff_gstat *s = &f.t->rows[k].stat[DIFF_SELF][1];
		if (s->runs_needed) {
			needed++;
			assert_true(!s->significant && s->test.status == STATS_OK);
		}
	}
	assert_true(needed > 0);
	free_table(&f);
}

static void gate_and_filters(void **state)
{
	(void)state;
	diff_opts o;
	diff_opts_init(&o);
	diff_group_opts g;
	diff_group_opts_init(&g);
	g.fail_on = true;
	g.fail_threshold = 1;          /* percentage points */
	g.significant_only = true;
	fixture f;
	make_table(&f, 300, 5, 1.0, &o, &g);
	size_t shown = 0, reg = 0;
	for (size_t k = 0; k < f.t->nrows; k++) {
		const diff_trow *row = &f.t->rows[k];
		bool sig = row->stat[DIFF_SELF][1].significant;
		assert_true(!row->shown || sig);
		shown += row->shown;
		int w;
		size_t gr;
		if (diff_trow_regression(f.t, row, &w, &gr)) {
			reg++;
			assert_int_equal(row_index(row), 3);
			assert_true(row->stat[DIFF_SELF][1].delta > 1);
		}
	}
	assert_true(shown >= 1);
	assert_int_equal(reg, 1);
	free_table(&f);
	/* relative: twice as heavy is above 50 %, not above 150 % */
	g.fail_relative = true;
	g.metric = DIFF_METRIC_ABSOLUTE;
	g.fail_threshold = 50;
	make_table(&f, 300, 5, 1.0, &o, &g);
	reg = 0;
	for (size_t k = 0; k < f.t->nrows; k++)
		reg += diff_trow_regression(f.t, &f.t->rows[k], NULL, NULL);
	assert_int_equal(reg, 1);
	free_table(&f);
	g.fail_threshold = 150;
	make_table(&f, 300, 5, 1.0, &o, &g);
	for (size_t k = 0; k < f.t->nrows; k++)
		assert_false(diff_trow_regression(f.t, &f.t->rows[k], NULL, NULL));
	free_table(&f);
	/* -b: rows absent from every baseline run are not printed */
	diff_group_opts_init(&g);
	o.baseline_only = true;
	make_table(&f, 300, 1, 0.3, &o, &g);
	for (size_t k = 0; k < f.t->nrows; k++) {
		long i = row_index(&f.t->rows[k]);
		assert_int_equal(f.t->rows[k].shown, i != 4 && i % 7 != 5);
	}
	free_table(&f);
}

/* one run per group: the two-proportion test on effective sample counts */
static void sampling_noise(void **state)
{
	(void)state;
	diff_opts o;
	diff_opts_init(&o);
	diff_group_opts g;
	diff_group_opts_init(&g);
	fixture f;
	make_table(&f, 200, 1, 0.3, &o, &g);
	assert_int_equal(f.t->mode, DIFF_MODE_SAMPLING);
	const run *ra = &f.runs[0], *rb = &f.runs[1];
	for (size_t k = 0; k < f.t->nrows; k++) {
		const diff_trow *row = &f.t->rows[k];
		const diff_gstat *s = &row->stat[DIFF_SELF][1];
		if (s->small)
			continue;
		long i = row_index(row);
		double pa = (double)period_of((size_t)i, 0, false, f.effect) / (double)ra->h.total_period;
		double pb = (double)period_of((size_t)i, 1, true, f.effect) / (double)rb->h.total_period;
		stats_result want;
		stats_two_proportions(pa * (double)ra->h.nr_samples, (double)ra->h.nr_samples,
				      pb * (double)rb->h.nr_samples, (double)rb->h.nr_samples, 0.95, &want);
		assert_close(s->test.p, want.p, 1e-12);
		assert_close(s->test.ci_low, 100 * want.ci_low, 1e-9);
	}
	free_table(&f);
}

static void bad_groups(void **state)
{
	(void)state;
	diff_opts o;
	diff_opts_init(&o);
	diff_group_opts g;
	diff_group_opts_init(&g);
	int keys[2] = { HK_DSO, HK_SYM };
	diff_table *t = NULL;
	proff_error err;
	uint32_t one[3] = { 0, 0, 0 }, gap[3] = { 0, 2, 2 }, late[2] = { 1, 1 };
	assert_true(diff_table_new(3, one, keys, 2, &o, &g, &t, &err) < 0);
	assert_null(t);
	assert_true(diff_table_new(3, gap, keys, 2, &o, &g, &t, &err) < 0);
	assert_true(diff_table_new(2, late, keys, 2, &o, &g, &t, &err) < 0);
	assert_null(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(small_table),
		cmocka_unit_test(large_table),
		cmocka_unit_test(gate_and_filters),
		cmocka_unit_test(sampling_noise),
		cmocka_unit_test(bad_groups),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
