/* test_store.c — unit tests of lib/store's text and selector layers: label
 * values (1 MB and NUL refused through the API, quotes and backslashes
 * kept), ClickHouse string literals that no value can end early (a
 * small scanner of ClickHouse's literal rules reads each back to the exact
 * bytes), the selectors' SQL (every value inside a literal, whatever it
 * holds), TabSeparated fields round-tripping every byte, the selector
 * grammar's errors, and a local profile file parsed and aggregated (Self
 * of leaves, Children once per stack with recursion).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/store.h"

static void labels_checked(void **state)
{
	(void)state;
	proff_error e;
	size_t big = 1 << 20;
	char *v = malloc(big);
	assert_non_null(v);
	memset(v, 'x', big);
	assert_int_equal(store_label_check("build", v, big, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "longer than the limit"));
	assert_int_equal(store_label_check("build", v, STORE_VALUE_MAX, &e), 0);
	free(v);
	assert_int_equal(store_label_check("build", "a\0b", 3, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "control character"));
	const char *ok = "x'; DROP TABLE proff_samples; -- \\ \" `";
	assert_int_equal(store_label_check("evil", ok, strlen(ok), &e), 0);
	assert_int_equal(store_label_check("9a", "v", 1, &e), PROFF_EUSAGE);
	assert_int_equal(store_label_check("a b", "v", 1, &e), PROFF_EUSAGE);
	assert_int_equal(store_label_check("time", "v", 1, &e), PROFF_EUSAGE);
	assert_int_equal(store_label_check("id", "v", 1, &e), PROFF_EUSAGE);
	assert_int_equal(store_label_check("host.name-2", "v", 1, &e), 0);
}

/* ClickHouse's string literal as its lexer reads it: '...' with \\, \',
 * \xHH and the other backslash escapes; returns the bytes and where the
 * literal ends (NULL: not a literal) */
static const char *read_literal(const char *p, char *out, size_t *n)
{
	*n = 0;
	if (*p++ != '\'')
		return NULL;
	while (*p && *p != '\'') {
		if (*p == '\\') {
			p++;
			if (*p == 'x') {
				unsigned v;
				if (sscanf(p + 1, "%2x", &v) != 1)
					return NULL;
				out[(*n)++] = (char)v;
				p += 3;
				continue;
			}
			out[(*n)++] = *p == 'n' ? '\n' : *p == 't' ? '\t' : *p == '0' ? '\0' : *p;
			p++;
			continue;
		}
		out[(*n)++] = *p++;
	}
	return *p == '\'' ? p + 1 : NULL;
}

static void literals_hold_any_bytes(void **state)
{
	(void)state;
	const char *hostile[] = { "'", "\\", "\\'", "'; DROP TABLE proff_samples; --", "a'b\\c", "''", "\\\\'",
				  "x') OR 1=1 OR match(id, '", "\x01\x1f\x7f" };
	char buf[256];
	for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
		char *q = store_sql_quote(hostile[i], strlen(hostile[i]));
		assert_non_null(q);
		size_t n;
		const char *end = read_literal(q, buf, &n);
		assert_non_null(end);
		assert_int_equal(*end, '\0');          /* the literal is the whole text */
		assert_int_equal(n, strlen(hostile[i]));
		assert_memory_equal(buf, hostile[i], n);
		free(q);
	}
	/* every byte value */
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	char *q = store_sql_quote(all, 256);
	size_t n;
	char back[256];
	const char *end = read_literal(q, back, &n);
	assert_non_null(end);
	assert_int_equal(*end, '\0');
	assert_int_equal(n, 256);
	assert_memory_equal(back, all, 256);
	free(q);
}

/* the selector's SQL: after removing every literal, the text left is the
 * fixed skeleton of proff's own words (no word of the value outside) */
static void selector_sql_keeps_values_inside(void **state)
{
	(void)state;
	char *words[] = { "evil=x'; DROP TABLE t; --", "path=~a\\'b\\) OR \\(1", "host!=h'", "time>=2026-11-01" };
	store_sel s;
	proff_error e;
	assert_int_equal(store_sel_parse(&s, words, 4, &e), 0);
	char *sql = store_sel_sql(&s);
	assert_non_null(sql);
	char skel[4096] = "", lit[512];
	size_t k = 0, nlit = 0;
	for (const char *p = sql; *p;) {
		if (*p == '\'') {
			size_t n;
			p = read_literal(p, lit, &n);
			assert_non_null(p);
			lit[n] = '\0';
			nlit++;
			skel[k++] = '?';
			continue;
		}
		skel[k++] = *p++;
	}
	skel[k] = '\0';
	assert_null(strstr(skel, "DROP"));
	assert_null(strstr(skel, "OR"));
	assert_null(strstr(skel, "--"));
	assert_non_null(strstr(skel, "toUInt32(time) >= 1793491200"));
	assert_int_equal(nlit, 3 * 3 - 0);   /* key twice (has, indexOf) and the value, per label term */
	free(sql);
	store_sel_free(&s);
}

static void selector_errors(void **state)
{
	(void)state;
	proff_error e;
	store_sel s;
	char *w1[] = { "build" };
	assert_int_equal(store_sel_parse(&s, w1, 1, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "no operator"));
	char *w2[] = { "=x" };
	assert_int_equal(store_sel_parse(&s, w2, 1, &e), PROFF_EUSAGE);
	char *w3[] = { "time>=2026-13-01" };
	assert_int_equal(store_sel_parse(&s, w3, 1, &e), PROFF_EUSAGE);
	char *w4[] = { "host<3" };
	assert_int_equal(store_sel_parse(&s, w4, 1, &e), PROFF_EUSAGE);
	char *w5[] = { "host=~[" };
	assert_int_equal(store_sel_parse(&s, w5, 1, &e), PROFF_EUSAGE);
	char *w6[] = { "time>=2026-11-01T10:30", "time<1800000000", "host=~^web-[0-9]+$", "build=" };
	assert_int_equal(store_sel_parse(&s, w6, 4, &e), 0);
	assert_int_equal(s.terms[0].time, 1793529000);
	store_sel_free(&s);
}

static void tsv_round_trip(void **state)
{
	(void)state;
	char all[300];
	for (int i = 0; i < 300; i++)
		all[i] = (char)(i * 7);
	char *text = NULL;
	size_t tl = 0;
	FILE *f = open_memstream(&text, &tl);
	store_tsv_put(f, all, sizeof(all));
	fclose(f);
	assert_null(memchr(text, '\t', tl));
	assert_null(memchr(text, '\n', tl));
	const char *p = text;
	char *back;
	size_t n;
	assert_int_equal(store_tsv_get(&p, text + tl, &back, &n), 0);
	assert_int_equal(n, sizeof(all));
	assert_memory_equal(back, all, n);
	free(back);
	free(text);
}

/* main -> work -> work (recursion) -> leaf, and main -> other */
static const char prof_text[] =
	"proff-profile\t1\nid\t0123456789abcdef0123456789abcdef\ntime\t1793491200\n"
	"string\tcpu-clock\nstring\tprog\nstring\tmain\nstring\twork\nstring\tleaf\nstring\tother\nstring\tp\n"
	"event\t1\t1\t0\t350\t4\t1\n"
	"frame\t2\t2\t3\t0\t0\t.\nframe\t2\t2\t4\t0\t0\t.\nframe\t2\t2\t5\t0\t0\t.\nframe\t2\t2\t6\t0\t0\t.\n"
	"stack\t00000000000000aa\t2,1,1,0\nstack\t00000000000000bb\t3,0\n"
	"sample\t0\t7\t0\t300\t3\nsample\t0\t7\t1\t50\t1\nend\t19\n";

static void aggregate_local_profile(void **state)
{
	(void)state;
	store_prof *sp;
	proff_error e;
	assert_int_equal(store_prof_parse(prof_text, sizeof(prof_text) - 1, "t.prof", &sp, &e), 0);
	store_sel sel = { 0 };
	store_query q = { .keys = { HK_SYM }, .nkeys = 1, .children = true, .groups = &sel, .ngroups = 1,
			  .event = "cpu-clock" };
	store_result *r;
	assert_int_equal(store_result_new(&q, &r, &e), 0);
	long rep = store_result_rep(r, 0, "h", 1);
	assert_true(rep >= 0);
	assert_int_equal(store_result_add_prof(r, (size_t)rep, sp, &q, &e), 0);
	assert_int_equal(store_result_finish(r, &e), 0);
	assert_int_equal(r->nrows, 4);
	assert_int_equal(r->rep_total[0], 350);
	/* rows in key order: leaf, main, other, work */
	static const char *names[] = { "leaf", "main", "other", "work" };
	static const uint64_t self[] = { 300, 0, 50, 0 }, acc[] = { 300, 350, 50, 300 };
	for (size_t i = 0; i < 4; i++) {
		assert_string_equal(pf_str(r->prof, r->row_key[i]), names[i]);
		assert_int_equal(r->self[i], self[i]);
		assert_int_equal(r->acc[i], acc[i]);     /* work's recursion counted once */
	}
	store_result_free(r);
	/* a damaged copy: a frame index out of range, a missing end line */
	char bad[sizeof(prof_text)];
	memcpy(bad, prof_text, sizeof(prof_text));
	char *at = strstr(bad, "2,1,1,0");
	at[0] = '9';
	store_prof *sp3;
	assert_int_equal(store_prof_parse(bad, sizeof(bad) - 1, "t.prof", &sp3, &e), PROFF_EFORMAT);
	assert_non_null(strstr(e.msg, "frame 9 out of range"));
	store_prof *sp2;
	assert_int_equal(store_prof_parse(prof_text, sizeof(prof_text) - 8, "t.prof", &sp2, &e), PROFF_EFORMAT);
	store_prof_free(sp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(labels_checked),
		cmocka_unit_test(literals_hold_any_bytes),
		cmocka_unit_test(selector_sql_keeps_values_inside),
		cmocka_unit_test(selector_errors),
		cmocka_unit_test(tsv_round_trip),
		cmocka_unit_test(aggregate_local_profile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
