/* test_dprof.c — unit tests of lib/dprof: the tmon.out reader (each line
 * kind, old and new formats, malformed input with its byte offset), the
 * exact-profile computation (overhead subtraction, recursion, goto, -g, -S,
 * several threads through the generic builder) and the report's Perl format
 * semantics.
 *
 * Expected numbers are either known by construction (hand-made event streams
 * whose exclusive/inclusive times follow from dprofpp's formulas) or the
 * output real dprofpp printed for DProf's own test1 profile (the golden
 * tests/data/dprof/test1.tmon.out, reproduced inline below).
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

#include "proff/dprof.h"

#define HDR(ou, os, orr, tests, ru, rs, rr) \
	"#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 20110802.00';\n# All values are given in HZ\n" \
	"$over_utime=" #ou "; $over_stime=" #os "; $over_rtime=" #orr ";\n$over_tests=" #tests ";\n" \
	"$rrun_utime=" #ru "; $rrun_stime=" #rs "; $rrun_rtime=" #rr ";\n$total_marks=0      \n\nPART2\n"

static const char test1[] =
	"#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 20110802.00';\n# All values are given in HZ\n"
	"$over_utime=0; $over_stime=1; $over_rtime=1;\n$over_tests=10000;\n"
	"$rrun_utime=0; $rrun_stime=0; $rrun_rtime=0;\n$total_marks=14                    \n\nPART2\n"
	"& 2 main bar\n+ 2\n- 2\n& 3 main baz\n+ 3\n+ 2\n- 2\n& 4 main foo\n+ 4\n+ 2\n- 2\n- 4\n- 3\n+ 4\n+ 2\n- 2\n- 4\n";

static int read_buf(const char *text, const dprof_read_opts *o, dprof_model **m, proff_error *err)
{
	dprof_read_opts def;
	memset(&def, 0, sizeof(def));
	proff_err_clear(err);
	return dprof_read_tmon_buf(text, strlen(text), "t.tmon", o ? o : &def, m, err);
}

static dprof_model *must_read(const char *text, const dprof_read_opts *o)
{
	dprof_model *m = NULL;
	proff_error err;
	int rc = read_buf(text, o, &m, &err);
	if (rc < 0)
		fprintf(stderr, "read failed: %s (offset %llu)\n", err.msg, (unsigned long long)err.offset);
	assert_int_equal(rc, 0);
	assert_non_null(m);
	return m;
}

static int64_t id_of(const dprof_model *m, const char *name)
{
	int64_t id = dprof_model_find(m, name);
	assert_true(id >= 0);
	return id;
}

static char *report(const dprof_model *m, const dprof_report_opts *o)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	proff_error err;
	proff_err_clear(&err);
	dprof_report_opts def;
	memset(&def, 0, sizeof(def));
	def.name_width = 34;
	assert_int_equal(dprof_report(f, m, o ? o : &def, &err), 0);
	fclose(f);
	return buf;
}

/* ---- reader: line kinds ---- */

static void test_new_format_lines(void **state)
{
	(void)state;
	/* f: enter 0, @ 10 ticks, g (by name) enters, @ 20, g exits, @ 70, f exits */
	dprof_model *m = must_read(HDR(0, 0, 0, 10000, 1, 0, 1)
		"# a comment line\n& 1a pkg f\n+ 1a\n@ 6 4 99\n+ & pkg::g\n@ 20 0 0\n- & pkg::g\n@ 30 40 0\n- 1a\n", NULL);
	int64_t f = id_of(m, "pkg::f"), g = id_of(m, "pkg::g");
	assert_int_equal(m->calls[f], 1);
	assert_int_equal(m->calls[g], 1);
	assert_true(m->excl[f] == 80 && m->incl[f] == 100);
	assert_true(m->excl[g] == 20 && m->incl[g] == 20);
	assert_int_equal(m->norder, 2);
	assert_int_equal(m->order[0], f);
	assert_true(m->hz == 100);
	assert_string_equal(m->xs_version, "DProf 20110802.00");
	dprof_model_free(m);
}

static void test_clock_selection(void **state)
{
	(void)state;
	const char *t = HDR(0, 0, 0, 1, 3, 5, 11) "& 2 main f\n+ 2\n@ 1 2 7\n- 2\n";
	static const struct { enum dprof_clock c; double excl; } cases[] = {
		{ DPROF_CLOCK_USER_SYS, 3 }, { DPROF_CLOCK_USER, 1 }, { DPROF_CLOCK_SYS, 2 }, { DPROF_CLOCK_REAL, 7 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		dprof_read_opts o;
		memset(&o, 0, sizeof(o));
		o.clock = o.run_clock = cases[i].c;
		dprof_model *m = must_read(t, &o);
		assert_true(m->excl[id_of(m, "main::f")] == cases[i].excl);
		double run[] = { 8, 3, 5, 11 };
		assert_true(m->run_selected == run[cases[i].c]);
		assert_true(m->run_real == 11);
		dprof_model_free(m);
	}
}

static void test_old_format(void **state)
{
	(void)state;
	/* the POD example: absolute times, $rrun_rtime without ';', no overhead */
	dprof_model *m = must_read("#fOrTyTwO\n$hz=100;\n$XS_VERSION='DProf 19970606';\n# All values are given in HZ\n"
		"$rrun_utime=2; $rrun_stime=0; $rrun_rtime=7\nPART2\n"
		"+ 26 28 566822884 DynaLoader::import\n- 26 28 566822884 DynaLoader::import\n"
		"+ 27 28 566822885 main::bar\n- 27 28 566822886 main::bar\n+ 27 28 566822886 main::baz\n"
		"+ 27 28 566822887 main::bar\n- 28 28 566822888 main::bar\n- 29 28 566822889 main::baz\n", NULL);
	int64_t bar = id_of(m, "main::bar"), baz = id_of(m, "main::baz");
	assert_int_equal(m->calls[bar], 2);
	assert_true(m->excl[bar] == 1 && m->incl[bar] == 1);   /* (55-55) + (56-55) */
	assert_true(m->excl[baz] == 1 && m->incl[baz] == 2);
	assert_true(m->overhead == 0 && m->run_selected == 2 && m->run_real == 7);
	char *out = report(m, NULL);
	/* real dprofpp output for this file (tests/data/dprof/old.tmon.out) */
	assert_string_equal(out,
		"Total Elapsed Time =     0.07 Seconds\n"
		"  User+System Time =     0.02 Seconds\n"
		"Exclusive Times\n"
		"%Time ExclSec CumulS #Calls sec/call Csec/c  Name\n"
		" 50.0   0.010  0.010      2   0.0050 0.0050  main::bar\n"
		" 50.0   0.010  0.020      1   0.0100 0.0200  main::baz\n"
		" 0.00   0.000  0.000      1   0.0000 0.0000  DynaLoader::import\n");
	free(out);
	dprof_model_free(m);
}

static void test_goto_die_and_write(void **state)
{
	(void)state;
	/* jumper gotos target (dprofpp: the frame closes under target's name and
	 * the target frame is closed by the final '- jumper'); dier is unwound by
	 * '/'; a buffer flush (Devel::DProf::write) of 5 ticks is removed. */
	dprof_model *m = must_read(HDR(0, 0, 0, 1, 0, 0, 0)
		"& 2 main jumper\n& 3 main target\n& 4 main dier\n"
		"+ 2\n@ 1 0 0\n* 3\n@ 4 0 0\n- 2\n"
		"+ 4\n@ 2 0 0\n+ & Devel::DProf::write\n@ 5 0 0\n- & Devel::DProf::write\n@ 3 0 0\n/ 4\n", NULL);
	int64_t j = id_of(m, "main::jumper"), t = id_of(m, "main::target"), d = id_of(m, "main::dier");
	assert_int_equal(m->calls[j], 1);
	assert_int_equal(m->calls[t], 1);
	assert_true(m->incl[j] == 4);      /* target's frame, charged as jumper */
	assert_true(m->excl[t] == 0);      /* reset when target is first entered */
	assert_true(m->incl[d] == 5);      /* 2 + 3, the flush removed */
	assert_true(m->overhead == 5);
	assert_int_equal(dprof_model_find(m, "Devel::DProf::write") >= 0, 1);
	assert_int_equal(m->calls[id_of(m, "Devel::DProf::write")], 0);
	dprof_model_free(m);
}

/* ---- reader: malformed input ---- */

static void expect_error(const char *text, int code, uint64_t offset, const char *msg_part)
{
	dprof_model *m = NULL;
	proff_error err;
	int rc = read_buf(text, NULL, &m, &err);
	assert_int_equal(rc, code);
	assert_null(m);
	assert_string_equal(err.file, "t.tmon");
	if (offset != PROFF_NO_OFFSET)
		assert_int_equal(err.offset, offset);
	if (!strstr(err.msg, msg_part))
		fail_msg("message '%s' lacks '%s'", err.msg, msg_part);
}

static void test_malformed(void **state)
{
	(void)state;
	const char h[] = HDR(0, 0, 0, 1, 0, 0, 0);
	size_t hl = strlen(h);
	char buf[4096];
	expect_error("", PROFF_EFORMAT, 0, "Not a perl profile");
	expect_error("#fOrTyTwO", PROFF_EFORMAT, 0, "Not a perl profile");
	expect_error("#fortytwo\n$hz=100;\nPART2\n", PROFF_EFORMAT, 0, "Not a perl profile");
	expect_error("#fOrTyTwO\n$hz=100;\n", PROFF_EFORMAT, PROFF_NO_OFFSET, "PART2");
	expect_error("#fOrTyTwO\n$x=1;\nPART2\n", PROFF_EFORMAT, PROFF_NO_OFFSET, "hz");
	expect_error("#fOrTyTwO\n$hz=0;\nPART2\n", PROFF_EFORMAT, PROFF_NO_OFFSET, "hz");
	expect_error("#fOrTyTwO\n$hz=100;\nsystem('rm -rf /');\nPART2\n", PROFF_EFORMAT, 19, "header line");
	expect_error("#fOrTyTwO\n$hz='100;\nPART2\n", PROFF_EFORMAT, 10, "header line");
	snprintf(buf, sizeof(buf), "%s& 2 main f\n+ 2\n? 2\n", h);
	expect_error(buf, PROFF_EFORMAT, hl + 15, "unknown line");
	snprintf(buf, sizeof(buf), "%s+ 7\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "before its '&' definition");
	snprintf(buf, sizeof(buf), "%s& 2 main f\n- 2\n", h);
	expect_error(buf, PROFF_EFORMAT, hl + 11, "missing an enter time stamp");
	snprintf(buf, sizeof(buf), "%s@ 1 2\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "three tick counts");
	snprintf(buf, sizeof(buf), "%s@ 1 2 3x\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "tick counts");
	snprintf(buf, sizeof(buf), "%s@ 99999999999999999999 2 3\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "tick counts");
	snprintf(buf, sizeof(buf), "%s+ 1 2 3\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "without a sub name");
	snprintf(buf, sizeof(buf), "%s\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "empty line");
	snprintf(buf, sizeof(buf), "%s&\n", h);
	expect_error(buf, PROFF_EFORMAT, hl, "without a sub id");
	snprintf(buf, sizeof(buf), "%s& 2 main f\n+ 2\n", h);
	expect_error(buf, PROFF_EFORMAT, hl + 15, "never exited");   /* at the end of the marks */
	snprintf(buf, sizeof(buf), "%s& 2 main f\n+ 2\nPART3\n# more\n", h);
	expect_error(buf, PROFF_EFORMAT, hl + 15, "never exited");
	/* a NUL byte inside a line */
	memcpy(buf, h, hl);
	memcpy(buf + hl, "+ \0002\n", 5);
	{
		dprof_model *m = NULL;
		proff_error err;
		dprof_read_opts o;
		memset(&o, 0, sizeof(o));
		assert_int_equal(dprof_read_tmon_buf(buf, hl + 5, "t.tmon", &o, &m, &err), PROFF_EFORMAT);
		assert_int_equal(err.offset, hl);
	}
	/* a sub name longer than the reader accepts */
	char *big = malloc(20000);
	memcpy(big, h, hl);
	size_t n = hl + (size_t)sprintf(big + hl, "& 2 main ");
	memset(big + n, 'x', 10000);
	strcpy(big + n + 10000, "\n+ 2\n- 2\n");
	expect_error(big, PROFF_EFORMAT, hl, "longer than");
	free(big);
	/* every prefix of a valid profile either parses or fails cleanly */
	for (size_t cut = 0; cut < sizeof(test1) - 1; cut++) {
		dprof_model *m = NULL;
		proff_error err;
		dprof_read_opts o;
		memset(&o, 0, sizeof(o));
		int rc = dprof_read_tmon_buf(test1, cut, "t.tmon", &o, &m, &err);
		assert_true(rc == 0 || rc == PROFF_EFORMAT);
		dprof_model_free(m);
	}
}

/* Found by tests/fuzz/fuzz_dprof: a $hz of 1e300 passed the header check and
 * the -S tree report converted hz - 1 to an integer (undefined behaviour);
 * non-finite header numbers were accepted too. Now a clear error at the line. */
static void test_implausible_hz(void **state)
{
	(void)state;
	expect_error("#fOrTyTwO\n$hz=1e300;\nPART2\n& 2 main bar\n+ 2\n- 2\n", PROFF_EFORMAT, 10,
		     "not a plausible clock rate");
	expect_error("#fOrTyTwO\n# c\n$over_tests=1; $hz=2e12;\nPART2\n", PROFF_EFORMAT, 14,
		     "not a plausible clock rate");
	expect_error("#fOrTyTwO\n$hz=inf;\nPART2\n", PROFF_EFORMAT, 10, "header line");
	expect_error("#fOrTyTwO\n$hz=100; $over_tests=nan;\nPART2\n", PROFF_EFORMAT, 10, "header line");
	expect_error("#fOrTyTwO\n$x=1;\n$hz=-5;\nPART2\n", PROFF_EFORMAT, 16, "no positive $hz");
	/* the quoted header line in the message has no newline: one error line */
	{
		dprof_model *m = NULL;
		proff_error err;
		assert_int_equal(read_buf("#fOrTyTwO\n$hz=nan;\r\nPART2\n", NULL, &m, &err), PROFF_EFORMAT);
		assert_string_equal(err.msg, "cannot parse header line '$hz=nan;'");
	}
	/* the largest accepted rate still reports its -S tree */
	dprof_read_opts o;
	memset(&o, 0, sizeof(o));
	o.build.deep = true;
	dprof_model *m = must_read("#fOrTyTwO\n$hz=1e12;\nPART2\n& 2 main bar\n+ 2\n@ 0 0 0\n- 2\n", &o);
	char *out = report(m, &(dprof_report_opts){ .deep = true, .name_width = 34 });
	assert_non_null(strstr(out, "main::bar x 1"));
	free(out);
	dprof_model_free(m);
}

/* ---- computation ---- */

static void test_overhead(void **state)
{
	(void)state;
	/* o = (4+0)/(2*1) = 2 ticks per mark. f [0,100] calls g [10,30]:
	 * incl'(f) = 100 - (2*1+1)*2 = 94, excl'(f) = 80 - (1+1)*2 = 76,
	 * incl'(g) = excl'(g) = 20 - 2 = 18. */
	dprof_model *m = must_read(HDR(4, 0, 0, 1, 200, 0, 300)
		"& 2 main f\n& 3 main g\n+ 2\n@ 10 0 0\n+ 3\n@ 20 0 0\n- 3\n@ 70 0 0\n- 2\n", NULL);
	int64_t f = id_of(m, "main::f"), g = id_of(m, "main::g");
	assert_true(m->incl[f] == 94);
	assert_true(m->excl[f] == 76);
	assert_true(m->incl[g] == 18 && m->excl[g] == 18);
	assert_true(m->overhead == 8);
	dprof_model_free(m);
}

static void test_recursion(void **state)
{
	(void)state;
	/* r [0,30] -> r [10,20]: inclusive counts the outer activation only,
	 * exclusive sums both (20 + 10). */
	dprof_model *m = must_read(HDR(0, 0, 0, 1, 0, 0, 0)
		"& 2 main r\n+ 2\n@ 10 0 0\n+ 2\n@ 10 0 0\n- 2\n@ 10 0 0\n- 2\n", NULL);
	int64_t r = id_of(m, "main::r");
	assert_int_equal(m->calls[r], 2);
	assert_true(m->incl[r] == 30);
	assert_true(m->excl[r] == 30);
	dprof_model_free(m);
}

static void test_only_sub(void **state)
{
	(void)state;
	const char *t = HDR(0, 0, 0, 1, 100, 0, 100)
		"& 2 main a\n& 3 main b\n& 4 main c\n+ 2\n@ 5 0 0\n+ 3\n@ 5 0 0\n+ 4\n@ 10 0 0\n- 4\n- 3\n+ 4\n@ 20 0 0\n- 4\n- 2\n";
	dprof_read_opts o;
	memset(&o, 0, sizeof(o));
	o.build.only_sub = "main::b";
	dprof_model *m = must_read(t, &o);
	assert_int_equal(dprof_model_find(m, "main::a") >= 0 ? m->calls[id_of(m, "main::a")] : 0, 0);
	assert_int_equal(m->calls[id_of(m, "main::b")], 1);
	assert_int_equal(m->calls[id_of(m, "main::c")], 1);   /* only the call inside b */
	assert_true(m->has_only_sub && m->only_sub_runtime == 0.15);
	dprof_model_free(m);
}

static void test_deep_tree(void **state)
{
	(void)state;
	dprof_read_opts o;
	memset(&o, 0, sizeof(o));
	o.build.deep = true;
	dprof_model *m = must_read(test1, &o);
	char *out = report(m, &(dprof_report_opts){ .deep = true, .name_width = 34 });
	/* real dprofpp -S output for test1 */
	assert_string_equal(out,
		"main::bar x 1  \t0.00s\n"
		"main::baz x 1  \t0.00s = (0.00 + 0.00)s\n"
		"  main::bar x 1  \t0.00s\n"
		"  main::foo x 1  \t0.00s = (0.00 + 0.00)s\n"
		"    main::bar x 1  \t0.00s\n"
		"main::foo x 1  \t0.00s = (0.00 + 0.00)s\n"
		"  main::bar x 1  \t0.00s\n");
	free(out);
	dprof_model_free(m);
}

static void test_tree_listing(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		dprof_read_opts o;
		memset(&o, 0, sizeof(o));
		o.build.tree = k ? 't' : 'T';
		o.build.out = f;
		dprof_model *m = must_read(test1, &o);
		fclose(f);
		/* real dprofpp -T and -t output for test1 (identical here) */
		assert_string_equal(buf, "main::bar\nmain::baz\n   main::bar\n   main::foo\n      main::bar\nmain::foo\n   main::bar\n");
		free(buf);
		dprof_model_free(m);
	}
}

static void test_builder_threads(void **state)
{
	(void)state;
	/* the generic builder: two threads with their own stacks, nanosecond clock */
	proff_error err;
	dprof_build_opts bo;
	memset(&bo, 0, sizeof(bo));
	dprof_builder *b = dprof_builder_new(&bo, &err);
	assert_non_null(b);
	dprof_builder_set_clock(b, 1e9);
	dprof_builder_set_run_times(b, 1000, 1000);
	uint32_t f = (uint32_t)dprof_builder_intern(b, "f", 1), g = (uint32_t)dprof_builder_intern(b, "g", 1);
	assert_int_equal(dprof_builder_enter(b, 1, f, 0), 0);
	assert_int_equal(dprof_builder_enter(b, 2, g, 100), 0);
	assert_int_equal(dprof_builder_enter(b, 1, g, 200), 0);
	assert_int_equal(dprof_builder_exit(b, 2, g, 400), 0);
	assert_int_equal(dprof_builder_exit(b, 1, g, 250), 0);
	assert_int_equal(dprof_builder_exit(b, 1, f, 1000), 0);
	assert_int_equal(dprof_builder_exit(b, 1, f, 1100), PROFF_EFORMAT);
	dprof_model *m;
	proff_err_clear(&err);
	assert_int_equal(dprof_builder_finish(b, 1100, &m, &err), 0);
	dprof_builder_free(b);
	assert_int_equal(m->calls[f], 1);
	assert_int_equal(m->calls[g], 2);
	assert_true(m->incl[f] == 1000 && m->excl[f] == 950);
	assert_true(m->excl[g] == 350);
	dprof_model_free(m);
}

/* ---- report ---- */

static void test_report_test1(void **state)
{
	(void)state;
	dprof_model *m = must_read(test1, NULL);
	char *out = report(m, NULL);
	/* real dprofpp output: negative values too long for their ^-field print as "-" */
	assert_string_equal(out,
		"Total Elapsed Time =   -7e-06 Seconds\n"
		"  User+System Time =        0 Seconds\n"
		"Exclusive Times\n"
		"%Time ExclSec CumulS #Calls sec/call Csec/c  Name\n"
		" 0.00        - -0.000      1         -       -  main::baz\n"
		" 0.00        - -0.000      4         -       -  main::bar\n"
		" 0.00        - -0.000      2         -       -  main::foo\n");
	free(out);
	out = report(m, &(dprof_report_opts){ .inclusive = true, .sort = DPROF_SORT_CTIME, .quiet = true, .name_width = 34 });
	assert_string_equal(out,
		" 0.00        - -0.000      4         -       -  main::bar\n"
		" 0.00        - -0.000      2         -       -  main::foo\n"
		" 0.00        - -0.000      1         -       -  main::baz\n");
	free(out);
	out = report(m, &(dprof_report_opts){ .sort = DPROF_SORT_ALPHA, .count = "2", .quiet = true, .name_width = 34 });
	assert_string_equal(out,
		" 0.00        - -0.000      4         -       -  main::bar\n"
		" 0.00        - -0.000      1         -       -  main::baz\n");
	free(out);
	dprof_model_free(m);
}

static void test_long_names_and_pages(void **state)
{
	(void)state;
	/* 70 subs with 40-character names: each row takes two lines; the page
	 * header comes again after 60 lines, preceded by a form feed. */
	char *t = malloc(200000);
	size_t n = (size_t)sprintf(t, HDR(0, 0, 0, 1, 100, 0, 100));
	for (int i = 0; i < 70; i++)
		n += (size_t)sprintf(t + n, "& %x main sub_with_a_long_name_number_%04d\n+ %x\n@ 1 0 0\n- %x\n", i + 2, i, i + 2, i + 2);
	dprof_model *m = must_read(t, NULL);
	char *out = report(m, &(dprof_report_opts){ .count = "100", .unsorted = true, .name_width = 34 });
	assert_non_null(strstr(out, "  main::sub_with_a_long_name_number_\n"
				    "                                             0000\n"));
	char *ff = strchr(out, '\f');
	assert_non_null(ff);
	assert_true(strncmp(ff + 1, "Total Elapsed Time", 18) == 0);
	int lines = 0;
	for (char *p = out; p < ff; p++)
		lines += *p == '\n';
	assert_int_equal(lines, 60);
	free(out);
	dprof_model_free(m);
	free(t);
}

static void test_perl_helpers(void **state)
{
	(void)state;
	char b[64];
	dprof_perl_num(b, sizeof(b), -0.0);
	assert_string_equal(b, "0");
	dprof_perl_num(b, sizeof(b), -7e-06);
	assert_string_equal(b, "-7e-06");
	dprof_perl_num(b, sizeof(b), 1.5467159999999);
	assert_string_equal(b, "1.5467159999999");
	dprof_perl_num(b, sizeof(b), 1e15);
	assert_string_equal(b, "1e+15");
	dprof_perl_num(b, sizeof(b), 30300);
	assert_string_equal(b, "30300");
	assert_true(dprof_perl_numify("-0.000") == 0 && !signbit(dprof_perl_numify("-0.000")));
	assert_true(dprof_perl_numify("12abc") == 12);
	assert_true(dprof_perl_numify(" 2.5e1x") == 25);
	assert_true(dprof_perl_numify("0x10") == 0);
	assert_true(dprof_perl_numify("abc") == 0);
	regex_t re;
	char eb[128];
	assert_int_equal(dprof_regcomp(&re, "^main::\\w+\\d$", eb, sizeof(eb)), 0);
	assert_int_equal(regexec(&re, "main::f1", 0, NULL, 0), 0);
	assert_int_not_equal(regexec(&re, "main::f", 0, NULL, 0), 0);
	regfree(&re);
	assert_int_equal(dprof_regcomp(&re, "(?:a|b", eb, sizeof(eb)), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_new_format_lines),
		cmocka_unit_test(test_clock_selection),
		cmocka_unit_test(test_old_format),
		cmocka_unit_test(test_goto_die_and_write),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_implausible_hz),
		cmocka_unit_test(test_overhead),
		cmocka_unit_test(test_recursion),
		cmocka_unit_test(test_only_sub),
		cmocka_unit_test(test_deep_tree),
		cmocka_unit_test(test_tree_listing),
		cmocka_unit_test(test_builder_threads),
		cmocka_unit_test(test_report_test1),
		cmocka_unit_test(test_long_names_and_pages),
		cmocka_unit_test(test_perl_helpers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
