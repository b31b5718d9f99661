/* test_calibrate.c — unit tests of lib/calibrate: the summary statistics of
 * repeated runs (average, sample standard deviation, min, median, max) on
 * inputs whose results are known by hand, the calibration file (parse,
 * round trip, every kind of damage with its byte offset) and the counter
 * table. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proff/calibrate.h"

#define assert_double_equal(a, b, eps) do { \
	double a_ = (a), b_ = (b); \
	if (!(fabs(a_ - b_) <= (eps))) \
		print_error("%.12g != %.12g\n", a_, b_); \
	assert_true(fabs(a_ - b_) <= (eps)); \
} while (0)

/* ---- statistics ---- */

static void test_summary_lttng_row(void **state)
{
	(void)state;
	/* LTTng's calibrate table, LLC-store-misses: 10 samples, average 1.6,
	 * std. dev. 0.516 (sample standard deviation, n - 1) */
	double v[] = { 2, 1, 2, 2, 1, 2, 1, 2, 2, 1 };
	cal_summary s;
	assert_int_equal(cal_summarize(v, 10, &s), 0);
	assert_int_equal(s.n, 10);
	assert_double_equal(s.avg, 1.6, 1e-12);
	assert_double_equal(s.stddev, sqrt(2.4 / 9), 1e-12);
	assert_double_equal(s.stddev, 0.516, 5e-4);
	assert_double_equal(s.min, 1, 0);
	assert_double_equal(s.max, 2, 0);
	assert_double_equal(s.median, 2, 0);
	/* the input is not reordered */
	assert_double_equal(v[1], 1, 0);
	assert_double_equal(v[0], 2, 0);
}

static void test_summary_odd_even(void **state)
{
	(void)state;
	double odd[] = { 5, 3, 1, 4, 2 };
	cal_summary s;
	assert_int_equal(cal_summarize(odd, 5, &s), 0);
	assert_double_equal(s.avg, 3, 1e-12);
	assert_double_equal(s.stddev, sqrt(2.5), 1e-12);   /* (4+1+0+1+4)/4 */
	assert_double_equal(s.median, 3, 0);
	assert_double_equal(s.min, 1, 0);
	assert_double_equal(s.max, 5, 0);

	double even[] = { 4, 1, 3, 2 };
	assert_int_equal(cal_summarize(even, 4, &s), 0);
	assert_double_equal(s.median, 2.5, 0);
	assert_double_equal(s.avg, 2.5, 1e-12);
	assert_double_equal(s.stddev, sqrt(5.0 / 3), 1e-12);

	/* an outlier moves the average, not the median */
	double out[] = { 10, 10, 10, 10, 1000 };
	assert_int_equal(cal_summarize(out, 5, &s), 0);
	assert_double_equal(s.median, 10, 0);
	assert_double_equal(s.avg, 208, 1e-9);
	assert_double_equal(s.max, 1000, 0);
}

static void test_summary_small(void **state)
{
	(void)state;
	cal_summary s;
	double one[] = { 7.25 };
	assert_int_equal(cal_summarize(one, 1, &s), 0);
	assert_int_equal(s.n, 1);
	assert_double_equal(s.avg, 7.25, 0);
	assert_double_equal(s.stddev, 0, 0);
	assert_double_equal(s.median, 7.25, 0);
	assert_int_equal(cal_summarize(NULL, 0, &s), 0);
	assert_int_equal(s.n, 0);
	assert_double_equal(s.avg, 0, 0);
	/* constant input: no spread (no negative rounding under the root) */
	double c[] = { 0.1, 0.1, 0.1 };
	assert_int_equal(cal_summarize(c, 3, &s), 0);
	assert_true(s.stddev >= 0 && s.stddev < 1e-15);
	/* negative values (a difference of two noisy runs) */
	double d[] = { -1, 1 };
	assert_int_equal(cal_summarize(d, 2, &s), 0);
	assert_double_equal(s.avg, 0, 0);
	assert_double_equal(s.median, 0, 0);
	assert_double_equal(s.stddev, sqrt(2), 1e-12);
}

/* ---- calibration file ---- */

static int parse(const char *text, cal_file *cf, proff_error *err)
{
	proff_err_clear(err);
	return cal_file_parse(text, strlen(text), "t.cal", cf, err);
}

static void test_file_parse(void **state)
{
	(void)state;
	cal_file cf;
	proff_error err;
	const char *ok = "# comment\n\nproff-calibration 1\n o_in_ns 12.5\n"
			 "o_full_ns 40\ncall_ns 50.25 # trailing comment\nfuture_key 1 2 3\ncpu 1\n";
	assert_int_equal(parse(ok, &cf, &err), 0);
	assert_double_equal(cf.o_in_ns, 12.5, 0);
	assert_double_equal(cf.o_full_ns, 40, 0);
	assert_double_equal(cf.call_ns, 50.25, 0);
	assert_double_equal(cf.idle_ns, 0, 0);
	assert_int_equal(cf.cpu, 1);
	/* no final newline, CRLF */
	assert_int_equal(parse("proff-calibration 1\r\no_in_ns 0\r\no_full_ns 0", &cf, &err), 0);
	assert_double_equal(cf.o_full_ns, 0, 0);
	assert_int_equal(cf.cpu, -1);
}

static void expect_bad(const char *text, int code, uint64_t offset, const char *what)
{
	cal_file cf;
	proff_error err;
	assert_int_equal(parse(text, &cf, &err), code);
	if (offset != PROFF_NO_OFFSET - 1)
		assert_int_equal(err.offset, offset);
	assert_string_equal(err.file, "t.cal");
	if (!strstr(err.msg, what))
		print_error("message '%s' lacks '%s'\n", err.msg, what);
	assert_non_null(strstr(err.msg, what));
}

static void test_file_damage(void **state)
{
	(void)state;
	expect_bad("", PROFF_EFORMAT, 0, "no 'proff-calibration N' line");
	expect_bad("o_in_ns 1\n", PROFF_EFORMAT, 0, "first line");
	expect_bad("proff-calibration 2\no_in_ns 1\n", PROFF_ENOTSUP, 0, "version 2");
	expect_bad("proff-calibration x\n", PROFF_EFORMAT, 0, "bad version");
	expect_bad("proff-calibration 1\no_in_ns 1\n", PROFF_EFORMAT, 30, "no o_full_ns");
	expect_bad("proff-calibration 1\no_in_ns abc\no_full_ns 1\n", PROFF_EFORMAT, 20, "o_in_ns 'abc'");
	expect_bad("proff-calibration 1\no_in_ns -3\no_full_ns 1\n", PROFF_EFORMAT, 20, "o_in_ns '-3'");
	expect_bad("proff-calibration 1\no_in_ns nan\no_full_ns 1\n", PROFF_EFORMAT, 20, "o_in_ns 'nan'");
	expect_bad("proff-calibration 1\no_in_ns 1e300\no_full_ns 1\n", PROFF_EFORMAT, 20, "not a number in");
	expect_bad("proff-calibration 1\no_in_ns 1\no_in_ns 2\n", PROFF_EFORMAT, 30, "o_in_ns given twice");
	/* at the o_in_ns line (was no offset; fuzz_calfile checks every error has one) */
	expect_bad("proff-calibration 1\no_in_ns 5\no_full_ns 4\n", PROFF_EFORMAT, 20, "exceeds o_full_ns");
	expect_bad("proff-calibration 1\no_full_ns 4\n# c\no_in_ns 5\n", PROFF_EFORMAT, 36, "exceeds o_full_ns");
	expect_bad("proff-calibration 1\no_in_ns\n", PROFF_EFORMAT, 20, "expected 'key value'");
	expect_bad("proff-calibration 1\no_in_ns 1 2\n", PROFF_EFORMAT, 20, "more than one value");

	char longline[700];
	memset(longline, 'x', sizeof(longline));
	memcpy(longline, "proff-calibration 1\n", 20);
	longline[sizeof(longline) - 1] = 0;
	expect_bad(longline, PROFF_EFORMAT, 20, "line too long");

	const char nul[] = "proff-calibration 1\no_in\0_ns 1\n";
	cal_file cf;
	proff_error err;
	assert_int_equal(cal_file_parse(nul, sizeof(nul) - 1, "t.cal", &cf, &err), PROFF_EFORMAT);
	assert_int_equal(err.offset, 20);

	/* size bound */
	size_t big = 64 * 1024 + 1;
	char *b = malloc(big);
	assert_non_null(b);
	memset(b, '#', big);
	assert_int_equal(cal_file_parse(b, big, "t.cal", &cf, &err), PROFF_ENOMEM);
	free(b);
}

static void test_file_roundtrip(void **state)
{
	(void)state;
	const char *tmp = getenv("TMPDIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/test_calibrate.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	cal_result_row rows[1];
	memset(rows, 0, sizeof(rows));
	snprintf(rows[0].name, sizeof(rows[0].name), "o_in");
	snprintf(rows[0].per, sizeof(rows[0].per), "call");
	rows[0].measured = true;
	rows[0].ns.median = 11.5;
	cal_result r;
	memset(&r, 0, sizeof(r));
	r.runs = 10;
	r.cpu = 3;
	r.tsc_hz = 2.5e9;
	r.o_in_ns = 11.5;
	r.o_full_ns = 33.25;
	r.call_ns = 41;
	r.idle_ns = 2.125;
	r.start_ns = 1500000;
	r.rows = rows;
	r.nrows = 1;
	proff_error err;
	assert_int_equal(cal_file_write(path, &r, &err), 0);
	cal_file cf;
	assert_int_equal(cal_file_read(path, &cf, &err), 0);
	assert_double_equal(cf.o_in_ns, 11.5, 1e-3);
	assert_double_equal(cf.o_full_ns, 33.25, 1e-3);
	assert_double_equal(cf.call_ns, 41, 1e-3);
	assert_double_equal(cf.idle_ns, 2.125, 1e-3);
	assert_double_equal(cf.start_ns, 1500000, 1);
	assert_double_equal(cf.tsc_hz, 2.5e9, 1);
	assert_int_equal(cf.cpu, 3);
	unlink(path);
	assert_int_equal(cal_file_read(path, &cf, &err), PROFF_ENOENT);
	assert_string_equal(err.file, path);
}

static void test_counters(void **state)
{
	(void)state;
	const char *const *n = cal_counter_names();
	size_t count = 0;
	for (; n[count]; count++)
		assert_non_null(cal_counter_find(n[count]));
	assert_true(count >= 10);
	assert_non_null(cal_counter_find("instructions"));
	assert_non_null(cal_counter_find("LLC-load-misses"));
	assert_non_null(cal_counter_find("LLC-store-misses"));
	assert_non_null(cal_counter_find("LLC-prefetch-misses"));
	assert_null(cal_counter_find("nonsense"));

	/* an unknown counter or group is a usage error before anything runs */
	cal_opts o = { .runs = 1, .cpu = -1, .counters = "instructions,bogus" };
	cal_result r;
	proff_error err;
	assert_int_equal(cal_run(&o, &r, &err), PROFF_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown counter 'bogus'"));
	cal_opts g = { .runs = 1, .cpu = -1, .counters = "", .groups = "timer,bogus" };
	assert_int_equal(cal_run(&g, &r, &err), PROFF_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown measurement group 'bogus'"));
}

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* the timer group runs in-process: every row is measured, per-op times are
 * positive, and a software counter (task-clock: ns of CPU time per op)
 * agrees with the measured time */
static void test_timer_group(void **state)
{
	(void)state;
	cal_opts o = { .runs = 3, .cpu = -1, .quick = true, .counters = "task-clock", .groups = "timer" };
	/* the timing comparison below is measured again (up to three times)
	 * when a busy host skews one measurement; the other checks hold for
	 * every measurement */
	bool agree = false;
	for (int attempt = 0; attempt < 3 && !agree; attempt++) {
		cal_result r;
		proff_error err;
		assert_int_equal(cal_run(&o, &r, &err), 0);
		assert_true(r.nrows >= 2);
		agree = true;
		for (size_t i = 0; i < r.nrows; i++) {
			const cal_result_row *w = &r.rows[i];
			assert_string_equal(w->group, "timer");
			assert_true(w->measured);
			assert_int_equal(w->kept + w->discarded, 3);
			assert_true(w->ns.min > 0 && w->ns.min <= w->ns.median && w->ns.median <= w->ns.max);
			/* a timing comparison: only meaningful without sanitizers
			 * (their instrumentation around the counter reads skews
			 * short loops), and loose enough for three quick runs on a
			 * shared machine */
			if (w->counters[0].supported && !SANITIZED) {
				double ratio = w->counters[0].per_op.median / w->ns.median;
				if (ratio < 0.67 || ratio > 1.5) {
					print_error("attempt %d, %s: task-clock %.3f vs %.3f ns\n", attempt + 1, w->name,
						    w->counters[0].per_op.median, w->ns.median);
					agree = false;
				}
			}
		}
		cal_result_free(&r);
	}
	assert_true(agree);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_summary_lttng_row),
		cmocka_unit_test(test_summary_odd_even),
		cmocka_unit_test(test_summary_small),
		cmocka_unit_test(test_file_parse),
		cmocka_unit_test(test_file_damage),
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_timer_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
