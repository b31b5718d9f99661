/* test_stream.c — unit tests of lib/stream: the line diff behind
 * --before/--after and the after->before source map. Expected maps are known
 * by construction (lines inserted, deleted, changed at known places). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "proff/stream.h"

static void diff_of(const char *const *a, size_t na, const char *const *b, size_t nb, long *map)
{
	assert_int_equal(st_line_diff(a, na, b, nb, map), 0);
}

static void test_identical(void **state)
{
	const char *a[] = { "x", "y", "z" };
	long map[3];
	diff_of(a, 3, a, 3, map);
	for (long i = 0; i < 3; i++)
		assert_int_equal(map[i], i);
}

static void test_insert_above(void **state)
{
	const char *a[] = { "f() {", "  hot;", "}" };
	const char *b[] = { "// new 1", "// new 2", "f() {", "  hot;", "}" };
	long map[5];
	diff_of(a, 3, b, 5, map);
	long want[] = { -1, -1, 0, 1, 2 };
	assert_memory_equal(map, want, sizeof(want));
}

static void test_change_inside(void **state)
{
	const char *a[] = { "a", "b", "c", "d", "e" };
	const char *b[] = { "a", "b", "C", "d", "e" };
	long map[5];
	diff_of(a, 5, b, 5, map);
	long want[] = { 0, 1, -1, 3, 4 };
	assert_memory_equal(map, want, sizeof(want));
}

static void test_delete_block_and_insert(void **state)
{
	const char *a[] = { "1", "2", "3", "4", "5", "6", "7", "8" };
	const char *b[] = { "1", "5", "6", "new", "7", "8", "tail" };
	long map[7];
	diff_of(a, 8, b, 7, map);
	long want[] = { 0, 4, 5, -1, 6, 7, -1 };
	assert_memory_equal(map, want, sizeof(want));
}

static void test_repeated_lines(void **state)
{
	/* braces and blank lines repeat: the common subsequence must still be longest */
	const char *a[] = { "{", "}", "", "{", "x", "}", "" };
	const char *b[] = { "{", "}", "", "{", "y", "x", "}", "" };
	long map[8];
	diff_of(a, 7, b, 8, map);
	size_t kept = 0;
	for (int i = 0; i < 8; i++) {
		if (map[i] >= 0) {
			kept++;
			assert_string_equal(a[map[i]], b[i]);
		}
	}
	assert_int_equal(kept, 7);
	assert_int_equal(map[4], -1);
}

static void test_slide_to_the_natural_pairing(void **state)
{
	/* a function added below the last one: the stripped common suffix
	 * pairs the old closing brace with the new function's; slid down, it
	 * pairs with its own (and the added function is all inserted) */
	const char *a[] = { "// top", "long g(long n)", "{", "\treturn n;", "}" };
	const char *b[] = { "// top", "long g(long n)", "{", "\treturn n;", "}", "", "long u(long x)", "{",
			    "\treturn x * 2;", "}" };
	long map[10];
	diff_of(a, 5, b, 10, map);
	long want[] = { 0, 1, 2, 3, 4, -1, -1, -1, -1, -1 };
	assert_memory_equal(map, want, sizeof(want));
	/* the same with three lines added on top (the moved-code case) */
	const char *c[] = { "/* 1 */", "/* 2 */", "/* 3 */", "// top", "long g(long n)", "{", "\treturn n;", "}", "",
			    "long u(long x)", "{", "\treturn x * 2;", "}" };
	long map2[13];
	diff_of(a, 5, c, 13, map2);
	long want2[] = { -1, -1, -1, 0, 1, 2, 3, 4, -1, -1, -1, -1, -1 };
	assert_memory_equal(map2, want2, sizeof(want2));
	/* and a function deleted below another: the kept brace pairs with its own */
	long map3[5];
	diff_of(b, 10, a, 5, map3);
	long want3[] = { 0, 1, 2, 3, 4 };
	assert_memory_equal(map3, want3, sizeof(want3));
}

static void test_empty(void **state)
{
	const char *b[] = { "only" };
	long map[1];
	diff_of(NULL, 0, b, 1, map);
	assert_int_equal(map[0], -1);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_srcmap(void **state)
{
	char dir[] = "/tmp/proff-stream-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char before[256], after[256], p[512];
	snprintf(before, sizeof(before), "%s/before", dir);
	snprintf(after, sizeof(after), "%s/after", dir);
	assert_int_equal(mkdir(before, 0700), 0);
	assert_int_equal(mkdir(after, 0700), 0);
	snprintf(p, sizeof(p), "%s/a.c", before);
	write_file(p, "int f(void)\n{\n\treturn 1;\n}\n");
	snprintf(p, sizeof(p), "%s/a.c", after);
	write_file(p, "/* c */\nint f(void)\n{\n\treturn 2;\n}\n");
	snprintf(p, sizeof(p), "%s/new.c", after);
	write_file(p, "int g;\n");

	st_srcmap *m;
	proff_error err = { 0 };
	assert_int_equal(st_srcmap_new(before, after, &m, &err), 0);
	/* DWARF paths point anywhere: the longest suffix under the after tree counts */
	assert_int_equal(st_srcmap_line(m, "/build/somewhere/a.c", 2), 1);
	assert_int_equal(st_srcmap_line(m, "/build/somewhere/a.c", 4), -1);
	assert_int_equal(st_srcmap_line(m, "/build/somewhere/a.c", 5), 4);
	assert_int_equal(st_srcmap_line(m, "/x/new.c", 1), -2);
	assert_int_equal(st_srcmap_line(m, "/x/unknown.c", 1), 0);
	st_srcmap_free(m);

	assert_true(st_srcmap_new("/nonexistent-dir", after, &m, &err) < 0);
	assert_int_equal(err.code, PROFF_ENOENT);

	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_load_bad_file(void **state)
{
	st_opts o;
	st_opts_init(&o);
	st_side *s = NULL;
	proff_error err = { 0 };
	assert_true(st_load("/nonexistent.data", &o, &s, &err) < 0);
	assert_null(s);
	assert_string_equal(err.file, "/nonexistent.data");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_identical),
		cmocka_unit_test(test_insert_above),
		cmocka_unit_test(test_change_inside),
		cmocka_unit_test(test_delete_block_and_insert),
		cmocka_unit_test(test_repeated_lines),
		cmocka_unit_test(test_slide_to_the_natural_pairing),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_srcmap),
		cmocka_unit_test(test_load_bad_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
