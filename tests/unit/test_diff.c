/* test_diff.c — unit tests of lib/diff (pairing, compute, order, text format).
 *
 * Three hists are built by hand with the exact periods of the perf 6.1
 * golden outputs in tests/data/diff/golden/ (the workload tests/data/diff/work.c
 * recorded as a.data = "work A", b.data = "work B", c.data = "work B 2"; the
 * rows below were read off `perf diff -c ratio -p a b c`, whose per-file sums
 * equal the files' totals). Each golden file starts with the perf command
 * line; the test parses its options, runs lib/diff and compares the text
 * byte for byte with what perf printed.
 */
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

struct golden_row { const char *dso, *sym; char level; uint64_t p[3]; };

static const struct golden_row rows[] = {
	{ "[kernel.kallsyms]", "finish_task_switch.isra.0", 'k', { 250000, 2250000, 1500000 } },
	{ "[kernel.kallsyms]", "x64_sys_call", 'k', { 4250000, 22500000, 30000000 } },
	{ "work", "do_syscalls", '.', { 18000000, 83250000, 103500000 } },
	{ "[kernel.kallsyms]", "__x64_sys_getppid", 'k', { 29500000, 119000000, 183000000 } },
	{ "[kernel.kallsyms]", "__rcu_read_lock", 'k', { 5500000, 21500000, 24500000 } },
	{ "[kernel.kallsyms]", "__task_pid_nr_ns", 'k', { 67750000, 245750000, 332750000 } },
	{ "[kernel.kallsyms]", "do_syscall_64", 'k', { 155750000, 489750000, 859250000 } },
	{ "libc.so.6", "__GI___getppid", '.', { 67000000, 204750000, 346250000 } },
	{ "[kernel.kallsyms]", "__rcu_read_unlock", 'k', { 24750000, 75500000, 152000000 } },
	{ "work", "compute_mid", '.', { 440500000, 634500000, 1231250000 } },
	{ "work", "compute_cold", '.', { 291000000, 393500000, 779500000 } },
	{ "ld-linux-x86-64.so.2", "handle_amd", '.', { 250000, 250000, 250000 } },
	{ "work", "compute_hot", '.', { 703000000, 355500000, 706000000 } },
	{ "libc.so.6", "__memset_avx512_unaligned_erms", '.', { 43750000, 20500000, 38750000 } },
	{ "[kernel.kallsyms]", "irqentry_exit_to_user_mode", 'k', { 2500000, 750000, 1750000 } },
	{ "work", "only_in_b", '.', { 0, 273000000, 527250000 } },
	{ "[kernel.kallsyms]", "_raw_spin_unlock_irqrestore", 'k', { 0, 750000, 1000000 } },
	{ "[kernel.kallsyms]", "handle_softirqs", 'k', { 0, 500000, 2500000 } },
	{ "work", "getppid@plt", '.', { 0, 500000, 0 } },
	{ "[kernel.kallsyms]", "__get_user_8", 'k', { 0, 250000, 0 } },
	{ "[kernel.kallsyms]", "__kmem_cache_alloc_bulk", 'k', { 0, 250000, 0 } },
	{ "[kernel.kallsyms]", "_raw_spin_unlock_irq", 'k', { 0, 250000, 0 } },
	{ "[kernel.kallsyms]", "rcu_core", 'k', { 0, 250000, 0 } },
	{ "[kernel.kallsyms]", "srso_alias_return_thunk", 'k', { 0, 250000, 0 } },
	{ "work", "only_in_a", '.', { 212500000, 0, 0 } },
	{ "work", "do_memops", '.', { 500000, 0, 0 } },
	{ "[kernel.kallsyms]", "blkcg_maybe_throttle_current", 'k', { 250000, 0, 0 } },
	{ "[kernel.kallsyms]", "do_anonymous_page", 'k', { 250000, 0, 0 } },
	{ "[kernel.kallsyms]", "exc_page_fault", 'k', { 250000, 0, 0 } },
	{ "libc.so.6", "__GI___tcgetattr", '.', { 250000, 0, 0 } },
	{ "[kernel.kallsyms]", "__read_end_io", 'k', { 0, 0, 500000 } },
	{ "[kernel.kallsyms]", "task_mm_cid_work", 'k', { 0, 0, 500000 } },
	{ "[kernel.kallsyms]", "filemap_map_pages", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "kmem_cache_free", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "note_gp_changes", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "pidfs_add_pid", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "sched_balance_update_blocked_averages", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "security_task_prctl", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "slab_update_freelist.isra.0", 'k', { 0, 0, 250000 } },
	{ "[kernel.kallsyms]", "update_io_ticks", 'k', { 0, 0, 250000 } },
};
#define NR_ROWS (sizeof(rows) / sizeof(rows[0]))

/* one hand-built profile + hist per file */
typedef struct tfile {
	pf_profile prof;
	hist h;
} tfile;

static uint32_t intern(pf_profile *p, const char *s)
{
	int64_t id = pf_strtab_intern(&p->strs, s, strlen(s));
	assert_true(id >= 0);
	return (uint32_t)id;
}

typedef struct topts {
	diff_opts o;
	int files[4];           /* 0 = a, 1 = b, 2 = c */
	size_t nfiles;
	pf_strlist dsos, syms;
} topts;

static void build_file(tfile *t, int which, const topts *to)
{
	memset(t, 0, sizeof(*t));
	assert_int_equal(pf_strtab_init(&t->prof.strs), 0);
	t->prof.dsos = calloc(NR_ROWS, sizeof(pf_dso));
	t->prof.syms = calloc(NR_ROWS, sizeof(pf_sym));
	t->h.entries = calloc(NR_ROWS, sizeof(hist_entry));
	assert_non_null(t->prof.dsos);
	assert_non_null(t->prof.syms);
	assert_non_null(t->h.entries);
	t->h.prof = &t->prof;
	t->h.keys[0] = HK_DSO;
	t->h.keys[1] = HK_SYM;
	t->h.nkeys = 2;
	t->h.opts.diff_mode = true;
	for (size_t i = 0; i < NR_ROWS; i++) {
		const struct golden_row *g = &rows[i];
		uint64_t period = g->p[which];
		if (!period)
			continue;
		/* one dso record per distinct name */
		uint32_t dname = intern(&t->prof, g->dso), d;
		for (d = 0; d < t->prof.nr_dsos; d++)
			if (t->prof.dsos[d].short_name == dname)
				break;
		if (d == t->prof.nr_dsos) {
			t->prof.dsos[d].short_name = t->prof.dsos[d].long_name = dname;
			t->prof.nr_dsos++;
		}
		uint32_t s = (uint32_t)t->prof.nr_syms++;
		t->prof.syms[s].dso = d;
		t->prof.syms[s].name = intern(&t->prof, g->sym);
		hist_entry *e = &t->h.entries[t->h.n++];
		e->dso = d;
		e->sym = s;
		e->sym_name = t->prof.syms[s].name;
		e->level = g->level;
		e->period = e->period_acc = period;
		e->nr_events = period / 250000;
		if (to->dsos.n && !pf_strlist_has(&to->dsos, g->dso))
			e->filtered |= HF_DSO;
		if (to->syms.n && !pf_strlist_has(&to->syms, g->sym))
			e->filtered |= HF_SYMBOL;
		t->h.total_period += period;
		if (!e->filtered)
			t->h.total_non_filtered_period += period;
	}
}

static void free_file(tfile *t)
{
	pf_strtab_free(&t->prof.strs);
	free(t->prof.dsos);
	free(t->prof.syms);
	free(t->h.entries);
}

/* the subset of perf diff's command line the golden files use */
static void parse_cmdline(char *line, topts *to)
{
	char *save, *tok;
	char ebuf[256];
	memset(to, 0, sizeof(*to));
	diff_opts_init(&to->o);
	strtok_r(line, " \n", &save);       /* "$" */
	strtok_r(NULL, " \n", &save);       /* "perf" */
	strtok_r(NULL, " \n", &save);       /* "diff" */
	while ((tok = strtok_r(NULL, " \n", &save))) {
		if (!strcmp(tok, "-c")) {
			assert_int_equal(diff_parse_compute(strtok_r(NULL, " \n", &save), &to->o, ebuf, sizeof(ebuf)), 0);
		} else if (!strcmp(tok, "-p")) {
			to->o.show_period = true;
		} else if (!strcmp(tok, "-F")) {
			to->o.show_formula = true;
		} else if (!strcmp(tok, "-b")) {
			to->o.baseline_only = true;
		} else if (!strcmp(tok, "-q")) {
			to->o.quiet = true;
		} else if (!strcmp(tok, "-t")) {
			to->o.field_sep = strdup(strtok_r(NULL, " \n", &save));
		} else if (!strcmp(tok, "-o")) {
			to->o.order = (unsigned)atoi(strtok_r(NULL, " \n", &save));
		} else if (!strcmp(tok, "-d")) {
			assert_int_equal(pf_strlist_parse(&to->dsos, strtok_r(NULL, " \n", &save), ebuf, sizeof(ebuf)), 0);
			to->o.nr_dso_filter = to->dsos.n;
		} else if (!strcmp(tok, "-S")) {
			assert_int_equal(pf_strlist_parse(&to->syms, strtok_r(NULL, " \n", &save), ebuf, sizeof(ebuf)), 0);
			to->o.nr_sym_filter = to->syms.n;
		} else if (!strcmp(tok, "--percentage")) {
			to->o.relative = !strcmp(strtok_r(NULL, " \n", &save), "relative");
		} else if (tok[0] == '/') {
			const char *b = strrchr(tok, '/') + 1;
			assert_true(to->nfiles < 4);
			to->files[to->nfiles++] = b[0] - 'a';
		} else {
			fail_msg("unexpected option %s", tok);
		}
	}
}

static char *read_golden(const char *name, char **cmdline)
{
	char path[256];
	snprintf(path, sizeof(path), "tests/data/diff/golden/%s.txt", name);
	FILE *f = fopen(path, "r");
	if (!f) {
		snprintf(path, sizeof(path), "../../tests/data/diff/golden/%s.txt", name);
		f = fopen(path, "r");
	}
	assert_non_null(f);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	char line[4096];
	*cmdline = NULL;
	while (fgets(line, sizeof(line), f)) {
		if (!*cmdline) {
			*cmdline = strdup(line);
			continue;
		}
		if (!strncmp(line, "[exit=", 6))
			break;
		fputs(line, m);
	}
	fclose(f);
	fclose(m);
	return buf;
}

static char *run_diff(topts *to, diff_result **keep)
{
	tfile files[4];
	const hist *hs[4];
	const char *paths[4];
	static const char *const names[] = { "/tmp/a.data", "/tmp/b.data", "/tmp/c.data" };
	for (size_t f = 0; f < to->nfiles; f++) {
		build_file(&files[f], to->files[f], to);
		hs[f] = &files[f].h;
		paths[f] = names[to->files[f]];
	}
	diff_result *r = NULL;
	proff_error err = {0};
	assert_int_equal(diff_compute(hs, to->nfiles, &to->o, &r, &err), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_int_equal(diff_print_text(r, &to->o, "cpu-clock", paths, true, m), 0);
	fclose(m);
	if (keep)
		*keep = r;
	else
		diff_result_free(r);
	for (size_t f = 0; f < to->nfiles; f++)
		if (!keep)
			free_file(&files[f]);
	return buf;
}

static void release(topts *to)
{
	pf_strlist_free(&to->dsos);
	pf_strlist_free(&to->syms);
	free((char *)to->o.field_sep);
}

static void test_golden(void **state)
{
	const char *name = *state;
	char *cmd;
	char *want = read_golden(name, &cmd);
	topts to;
	parse_cmdline(cmd, &to);
	char *got = run_diff(&to, NULL);
	if (strcmp(want, got)) {
		print_error("--- perf (%s)\n%s--- proff\n%s", name, want, got);
		fail_msg("%s differs", name);
	}
	free(want);
	free(got);
	free(cmd);
	release(&to);
}

/* -b: proff keeps the baseline percentages of the full profile (perf renormalises
 * them to the matched rows but keeps the deltas): the rows, their order and the
 * deltas are perf's, the Baseline column equals the one without -b. */
static void test_baseline_only_consistent(void **state)
{
	char *cmd;
	char *want = read_golden("diff_b", &cmd);
	topts to;
	parse_cmdline(cmd, &to);
	char *got = run_diff(&to, NULL);
	assert_string_not_equal(want, got);
	/* perf's rows with the Baseline recomputed on the full total */
	char *w = want, *g = got, *wl, *gl, *ws, *gs;
	size_t nlines = 0;
	while ((wl = strtok_r(w, "\n", &ws)) && (gl = strtok_r(g, "\n", &gs))) {
		w = g = NULL;
		nlines++;
		if (wl[0] == '#') {
			assert_string_equal(wl, gl);
			continue;
		}
		assert_string_equal(wl + 10, gl + 10);          /* delta and keys */
	}
	assert_int_equal(nlines, 20);
	free(want);
	free(got);
	free(cmd);
	release(&to);
	(void)state;
}

static void test_compute_parse(void **state)
{
	diff_opts o;
	char msg[256];
	diff_opts_init(&o);
	assert_int_equal(o.compute, DIFF_DELTA_ABS);
	assert_int_equal(o.order, 1);
	assert_int_equal(diff_parse_compute("ratio", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.compute, DIFF_RATIO);
	assert_int_equal(diff_parse_compute("wdiff:5,3", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.compute, DIFF_WDIFF);
	assert_int_equal(o.w1, 5);
	assert_int_equal(o.w2, 3);
	assert_int_equal(diff_parse_compute("wdiff", &o, msg, sizeof(msg)), PROFF_EUSAGE);
	assert_string_equal(msg, "Failed: wrong weight data, use 'wdiff:w1,w2'");
	assert_int_equal(diff_parse_compute("wdiff:0,1", &o, msg, sizeof(msg)), PROFF_EUSAGE);
	assert_int_equal(diff_parse_compute("wdiff:1,", &o, msg, sizeof(msg)), PROFF_EUSAGE);
	assert_int_equal(diff_parse_compute("foo", &o, msg, sizeof(msg)), PROFF_EUSAGE);
	assert_string_equal(msg, "Failed: 'foo' is not computation method (use 'delta','ratio' or 'wdiff')");
	assert_int_equal(diff_parse_compute("ratio:1", &o, msg, sizeof(msg)), PROFF_EUSAGE);
	assert_string_equal(msg, "Failed: extra option specified '1'");
	assert_int_equal(diff_parse_compute("cycles", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.compute, DIFF_CYCLES);
	assert_int_equal(diff_parse_compute("delta", &o, msg, sizeof(msg)), 0);
	assert_int_equal(o.compute, DIFF_DELTA);
	(void)state;
}

static void test_order_limit(void **state)
{
	topts to;
	memset(&to, 0, sizeof(to));
	diff_opts_init(&to.o);
	to.o.order = 2;
	tfile a, b;
	build_file(&a, 0, &to);
	build_file(&b, 1, &to);
	const hist *hs[2] = { &a.h, &b.h };
	diff_result *r = NULL;
	proff_error err = {0};
	assert_int_equal(diff_compute(hs, 2, &to.o, &r, &err), PROFF_EUSAGE);
	assert_string_equal(err.msg, "Order option out of limit.");
	assert_null(r);
	/* a missing event in the other file: no pairs, every compute cell blank */
	const hist *hs2[2] = { &a.h, NULL };
	to.o.order = 1;
	assert_int_equal(diff_compute(hs2, 2, &to.o, &r, &err), 0);
	assert_int_equal(r->nrows, a.h.n);
	for (size_t i = 0; i < r->nrows; i++)
		assert_null(r->rows[i].pairs[1].e);
	/* sorted by baseline period, descending */
	for (size_t i = 1; i < r->nrows; i++)
		assert_true(r->rows[i - 1].period >= r->rows[i].period);
	diff_result_free(r);
	free_file(&a);
	free_file(&b);
	(void)state;
}

static void test_json(void **state)
{
	topts to;
	memset(&to, 0, sizeof(to));
	diff_opts_init(&to.o);
	to.nfiles = 2;
	to.files[0] = 0;
	to.files[1] = 1;
	tfile a, b;
	build_file(&a, 0, &to);
	build_file(&b, 1, &to);
	const hist *hs[2] = { &a.h, &b.h };
	const char *paths[2] = { "a.data", "b.data" };
	diff_result *r = NULL;
	proff_error err = {0};
	assert_int_equal(diff_compute(hs, 2, &to.o, &r, &err), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	diff_json_begin(&to.o, paths, 2, "dso,sym", m);
	diff_json_event(r, &to.o, "cpu-clock", 1, 0, true, m);
	diff_json_end(m);
	fclose(m);
	assert_non_null(strstr(buf, "{\"proff_diff\":1,\"files\":[\"a.data\",\"b.data\"],\"compute\":\"delta-abs\""));
	/* first row: compute_hot, 703000000 -> 355500000 */
	assert_non_null(strstr(buf, "\"rows\":[\n{\"keys\":{\"dso\":\"work\",\"sym\":\"compute_hot\",\"level\":\".\"},"
				    "\"in_baseline\":true,\"baseline\":{\"period\":703000000,"));
	assert_non_null(strstr(buf, "{\"file\":1,\"period\":355500000,"));
	assert_non_null(strstr(buf, "\"in_baseline\":false,\"baseline\":null"));
	free(buf);
	diff_result_free(r);
	free_file(&a);
	free_file(&b);
	(void)state;
}

#define GOLDEN(n) cmocka_unit_test_prestate(test_golden, (void *)n)

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compute_parse),
		cmocka_unit_test(test_order_limit),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_baseline_only_consistent),
		GOLDEN("diff_default"), GOLDEN("diff_delta"), GOLDEN("diff_delta_abs"),
		GOLDEN("diff_ratio"), GOLDEN("diff_wdiff"), GOLDEN("diff_wdiff_5_3"),
		GOLDEN("diff_p"), GOLDEN("diff_p_ratio"), GOLDEN("diff_F"), GOLDEN("diff_F_delta"),
		GOLDEN("diff_F_ratio"), GOLDEN("diff_F_wdiff"), GOLDEN("diff_t"), GOLDEN("diff_t_pF"),
		GOLDEN("diff_t_ratio"), GOLDEN("diff_t_wdiff"), GOLDEN("diff_t_underscore"),
		GOLDEN("diff_t_3"), GOLDEN("diff_S_abs"), GOLDEN("diff_S_rel"), GOLDEN("diff_S_abs_F"),
		GOLDEN("diff_S_rel_F"), GOLDEN("diff_S1"), GOLDEN("diff_d"), GOLDEN("diff_d_rel"),
		GOLDEN("diff_F_plain_d"), GOLDEN("diff_q"), GOLDEN("diff_o0"), GOLDEN("diff_3"),
		GOLDEN("diff_3_delta"), GOLDEN("diff_3_ratio_p"), GOLDEN("diff_3_F"), GOLDEN("diff_3_o2"),
		GOLDEN("diff_3_o0"), GOLDEN("diff_self"), GOLDEN("diff_reverse"),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
