/* test_store.c — unit tests of lib/store's text and selector layers: label
 * values (1 MB and NUL refused through the API, quotes and backslashes
 * kept), ClickHouse string literals that no value can end early (a
 * small scanner of ClickHouse's literal rules reads each back to the exact
 * bytes), the selectors' SQL (every value inside a literal, whatever it
 * holds), TabSeparated fields round-tripping every byte, the selector
 * grammar's errors, a local profile file parsed and aggregated (Self
 * of leaves, Children once per stack with recursion), and the key rows a
 * push stores giving every query of a stored key set the rows, sums,
 * levels and addresses that aggregating the samples gives.
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
#include "../../lib/store/store-int.h"

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
	"proff-profile\t4\nid\t0123456789abcdef0123456789abcdef\ntime\t1793491200\n"
	"string\tcpu-clock\nstring\tprog\nstring\tmain\nstring\twork\nstring\tleaf\nstring\tother\nstring\tp\n"
	"event\t1\t1\t0\t350\t4\t1\n"
	"frame\t2\t2\t3\t0\t0\t0\t.\nframe\t2\t2\t4\t0\t0\t0\t.\nframe\t2\t2\t5\t0\t0\t0\t.\nframe\t2\t2\t6\t0\t0\t0\t.\n"
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

/* an unresolved frame (map address 1234, absolute 7f0000001234) as a
 * sample's own location and as a caller: by address, the sample's own row
 * is keyed by its map address and a callchain entry's by the absolute one,
 * as the files' reports key them */
static const char prof_ip_text[] =
	"proff-profile\t4\nid\t0123456789abcdef0123456789abcdef\ntime\t1793491200\n"
	"string\tcpu-clock\nstring\tprog\nstring\tmain\nstring\tleaf\nstring\tp\n"
	"event\t1\t1\t0\t110\t2\t1\n"
	"frame\t2\t2\t3\t0\t0\t0\t.\n"                      /* 0 main */
	"frame\t2\t2\t0\t0\t1234\t7f0000001234\t.\n"        /* 1 unresolved */
	"frame\t2\t2\t4\t0\t0\t0\t.\n"                      /* 2 leaf */
	"stack\t00000000000000aa\t1,0\nstack\t00000000000000bb\t2,1,0\n"
	"sample\t0\t5\t0\t100\t1\nsample\t0\t5\t1\t10\t1\nend\t16\n";

static void unresolved_rows_by_address(void **state)
{
	(void)state;
	store_prof *sp;
	proff_error e;
	assert_int_equal(store_prof_parse(prof_ip_text, sizeof(prof_ip_text) - 1, "t.prof", &sp, &e), 0);
	store_sel sel = { 0 };
	store_query q = { .keys = { HK_SYM }, .nkeys = 1, .children = true, .by_addr = true, .groups = &sel,
			  .ngroups = 1, .event = "cpu-clock" };
	store_result *r;
	assert_int_equal(store_result_new(&q, &r, &e), 0);
	long rep = store_result_rep(r, 0, "h", 1);
	assert_true(rep >= 0);
	assert_int_equal(store_result_add_prof(r, (size_t)rep, sp, &q, &e), 0);
	assert_int_equal(store_result_finish(r, &e), 0);
	assert_int_equal(r->nrows, 4);
	int seen = 0;
	for (size_t i = 0; i < r->nrows; i++) {
		const char *k = pf_str(r->prof, r->row_key[i]);
		if (k[0] == '\001' && r->row_addr[i] == 0x1234) {
			/* the sample's own row */
			assert_int_equal(r->self[i], 100);
			assert_int_equal(r->acc[i], 100);
			seen |= 1;
		} else if (k[0] == '\001' && r->row_addr[i] == 0x7f0000001234) {
			/* the callchain entry's: the first sample's leaf and the second's caller */
			assert_int_equal(r->self[i], 0);
			assert_int_equal(r->acc[i], 110);
			seen |= 2;
		} else if (!strcmp(k, "main")) {
			assert_int_equal(r->acc[i], 110);
			seen |= 4;
		} else {
			assert_string_equal(k, "leaf");
			assert_int_equal(r->self[i], 10);
			seen |= 8;
		}
	}
	assert_int_equal(seen, 15);
	store_result_free(r);
	/* the key rows of the report's key set count the same */
	store_keyrow *rows;
	size_t n;
	assert_int_equal(store_keyrows(sp, KS_COMM | KS_DSO | KS_SYM | KS_SYM_ADDR, &rows, &n), 0);
	assert_int_equal(n, 4);
	int unresolved = 0;
	for (size_t i = 0; i < n; i++) {
		if (rows[i].sym)
			continue;
		unresolved++;
		assert_true(rows[i].addr == 0x1234 || rows[i].addr == 0x7f0000001234);
		assert_int_equal(rows[i].self, rows[i].addr == 0x1234 ? 100 : 0);
		assert_int_equal(rows[i].acc, rows[i].addr == 0x1234 ? 100 : 110);
	}
	assert_int_equal(unresolved, 2);
	free(rows);
	store_prof_free(sp);
}

/* two comms; recursion (work, through two source lines); a symbol of one
 * name in two dsos (dup); unresolved frames of two levels and addresses */
static const char prof2_text[] =
	"proff-profile\t4\nid\t00000000000000000000000000000002\ntime\t1793491200\n"
	"string\tcycles\nstring\tprog\nstring\t/bin/prog\nstring\tmain\nstring\twork\nstring\tleaf\n"
	"string\tlib\nstring\t/lib/lib.so\nstring\tdup\nstring\ta.c:1\nstring\ta.c:2\nstring\tsh\nstring\tprog2\n"
	"event\t1\t0\t0\t1000\t9\t1\n"
	"frame\t2\t3\t4\t0\t0\t0\t.\n"      /* 0 main */
	"frame\t2\t3\t5\t10\t0\t0\t.\n"     /* 1 work a.c:1 */
	"frame\t2\t3\t5\t11\t0\t0\t.\n"     /* 2 work a.c:2 */
	"frame\t2\t3\t6\t0\t0\t0\t.\n"      /* 3 leaf */
	"frame\t7\t8\t9\t0\t0\t0\t.\n"      /* 4 lib dup */
	"frame\t2\t3\t9\t0\t0\t0\t.\n"      /* 5 prog dup */
	"frame\t0\t0\t0\t0\t7f20\t7f20\tk\n"   /* 6 unresolved, k */
	"frame\t0\t0\t0\t0\t7f10\t7f10\t.\n"   /* 7 unresolved, . */
	"frame\t7\t8\t0\t0\t1234\t1234\t.\n"   /* 8 unresolved in lib */
	"stack\t0000000000000001\t3,2,1,0\n"
	"stack\t0000000000000002\t4,5,0\n"
	"stack\t0000000000000003\t6,7,0\n"
	"stack\t0000000000000004\t7,6,5,4,0\n"
	"stack\t0000000000000005\t8,1,1,0\n"
	"sample\t0\t13\t0\t100\t1\nsample\t0\t12\t1\t200\t2\nsample\t0\t13\t2\t300\t3\n"
	"sample\t0\t12\t3\t50\t1\nsample\t0\t12\t4\t70\t1\nsample\t0\t12\t0\t5\t1\n"
	"end\t37\n";

/* a query's result from the samples and from the key rows */
static store_result *result_of(const store_prof *sp, const store_query *q, bool from_keyrows)
{
	proff_error e;
	store_result *r;
	assert_int_equal(store_result_new(q, &r, &e), 0);
	long rep = store_result_rep(r, 0, "h", 1);
	assert_true(rep >= 0);
	if (from_keyrows) {
		int ks = store_keyset_of(q);
		assert_true(ks >= 0);
		assert_int_equal(store_result_add_keyrows(r, (size_t)rep, sp, ks, q, &e), 0);
	} else {
		assert_int_equal(store_result_add_prof(r, (size_t)rep, sp, q, &e), 0);
	}
	assert_int_equal(store_result_finish(r, &e), 0);
	return r;
}

/* A profile parsed from its text, with the key rows a push stores (every
 * stored key set), as a local store's file gives them */
static store_prof *parse_with_keyrows(const char *text, size_t len, const char *name)
{
	store_prof *sp;
	proff_error e;
	if (store_prof_parse(text, len, name, &sp, &e))
		fail_msg("%s", e.msg);
	sp->priv = calloc(1, sizeof(*sp->priv));
	assert_non_null(sp->priv);
	for (int k = 0; k < STORE_NR_KEYSETS; k++) {
		store_keyrow *rows;
		size_t n;
		assert_int_equal(store_keyrows(sp, store_keysets[k], &rows, &n), 0);
		assert_true(n > 0);
		sp->priv->keyrows = realloc(sp->priv->keyrows, (sp->priv->nr_keyrows + n) * sizeof(store_keyrow));
		sp->priv->keyrow_set = realloc(sp->priv->keyrow_set, sp->priv->nr_keyrows + n);
		assert_non_null(sp->priv->keyrows);
		assert_non_null(sp->priv->keyrow_set);
		memcpy(sp->priv->keyrows + sp->priv->nr_keyrows, rows, n * sizeof(store_keyrow));
		memset(sp->priv->keyrow_set + sp->priv->nr_keyrows, store_keysets[k], n);
		sp->priv->nr_keyrows += n;
		free(rows);
	}
	return sp;
}

static void keyrows_equal_samples(void **state)
{
	(void)state;
	store_prof *sp = parse_with_keyrows(prof2_text, sizeof(prof2_text) - 1, "t2.prof");
	store_sel sel = { 0 };
	/* every stored key set, keys in either order, Self and Children */
	static const struct { int keys[3], nkeys; bool by_addr; } qs[] = {
		{ { HK_DSO, HK_SYM }, 2, false }, { { HK_SYM, HK_DSO }, 2, false }, { { HK_SYM }, 1, false },
		{ { HK_COMM, HK_DSO, HK_SYM }, 3, true }, { { HK_SYM, HK_COMM, HK_DSO }, 3, true },
	};
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		for (int children = 0; children < 2; children++) {
			store_query q = { .nkeys = qs[i].nkeys, .by_addr = qs[i].by_addr, .children = children,
					  .groups = &sel, .ngroups = 1, .event = "cycles" };
			memcpy(q.keys, qs[i].keys, sizeof(qs[i].keys));
			store_result *a = result_of(sp, &q, false), *b = result_of(sp, &q, true);
			assert_int_equal(a->nrows, b->nrows);
			assert_true(a->nrows >= 3);
			assert_int_equal(a->rep_total[0], b->rep_total[0]);
			for (size_t r = 0; r < a->nrows; r++) {
				for (int k = 0; k < q.nkeys; k++)
					assert_string_equal(pf_str(a->prof, a->row_key[r * (size_t)q.nkeys + (size_t)k]),
							    pf_str(b->prof, b->row_key[r * (size_t)q.nkeys + (size_t)k]));
				assert_int_equal(a->self[r], b->self[r]);
				if (children)
					assert_int_equal(a->acc[r], b->acc[r]);
				assert_int_equal(a->row_level[r], b->row_level[r]);
				assert_int_equal(a->row_addr[r], b->row_addr[r]);
			}
			store_result_free(a);
			store_result_free(b);
		}
	}
	/* a key set not stored (srcline): the samples are read */
	store_query q = { .keys = { HK_SRCLINE }, .nkeys = 1, .groups = &sel, .ngroups = 1, .event = "cycles" };
	assert_int_equal(store_keyset_of(&q), -1);
	store_prof_free(sp);
}

/* by symbol alone every dso's unresolved frames are one row: with Children
 * it shows the level and lowest address of all its frames, without them
 * those of the samples' own frames only (a callchain entry makes no row
 * there): a kernel sample's mapless caller at 0x10 comes first, a user
 * sample's own unresolved frame at 0x500 later */
static const char prof_self_text[] =
	"proff-profile\t4\nid\t00000000000000000000000000000003\ntime\t1793491200\n"
	"string\tcycles\nstring\tprog\nstring\tmain\nstring\t[kernel.kallsyms]\nstring\tkfn\nstring\tp\n"
	"event\t1\t0\t0\t300\t3\t1\n"
	"frame\t2\t2\t3\t0\t0\t0\t.\n"      /* 0 main */
	"frame\t4\t4\t5\t0\t0\t0\tk\n"      /* 1 kfn */
	"frame\t0\t0\t0\t0\t10\t10\tk\n"    /* 2 mapless, k */
	"frame\t2\t2\t0\t0\t500\t5500\t.\n" /* 3 unresolved in prog */
	"stack\t0000000000000001\t1,2,0\nstack\t0000000000000002\t3,0\n"
	"sample\t0\t6\t0\t100\t1\nsample\t0\t6\t1\t200\t2\nend\t18\n";

static void self_rows_level(void **state)
{
	(void)state;
	store_prof *sp = parse_with_keyrows(prof_self_text, sizeof(prof_self_text) - 1, "t3.prof");
	store_sel sel = { 0 };
	for (int children = 0; children < 2; children++) {
		store_query q = { .keys = { HK_SYM }, .nkeys = 1, .children = children, .groups = &sel, .ngroups = 1,
				  .event = "cycles" };
		for (int from_keyrows = 0; from_keyrows < 2; from_keyrows++) {
			store_result *r = result_of(sp, &q, from_keyrows);
			size_t found = 0;
			for (size_t i = 0; i < r->nrows; i++) {
				if (*pf_str(r->prof, r->row_key[i]))
					continue;               /* a symbol's row */
				found++;
				assert_int_equal(r->self[i], 200);
				assert_int_equal(r->row_level[i], children ? 'k' : '.');
				assert_int_equal(r->row_addr[i], children ? 0x10 : 0x500);
			}
			assert_int_equal(found, 1);
			store_result_free(r);
		}
	}
	store_prof_free(sp);
}

/* ClickHouse's rows summed into a dense table (store_result_fix_reps once
 * the replicates are known) and the same rows as cells: the same result,
 * also with a replicate that appears after (cells beside the table), rows
 * of one (row, replicate) given twice, and replicates not in order */
static store_result *sums_of(bool dense, bool late)
{
	static const struct { const char *sym; int rep; uint64_t self, acc, count; } lines[] = {
		{ "b", 0, 10, 20, 1 }, { "a", 1, 5, 5, 1 }, { "c", 2, 0, 7, 0 }, { "b", 1, 3, 4, 1 },
		{ "a", 0, 1, 1, 1 }, { "b", 0, 2, 2, 1 }, { "d", 3, 8, 9, 2 }, { "a", 3, 1, 1, 1 }, { "c", 0, 4, 4, 4 },
	};
	static const char *reps[] = { "r2", "r0", "r1", "r9" };
	static const uint32_t grp[] = { 1, 0, 0, 1 };
	store_sel sel = { 0 };
	store_query q = { .keys = { HK_SYM }, .nkeys = 1, .children = true, .groups = &sel, .ngroups = 1 };
	proff_error e;
	store_result *r;
	assert_int_equal(store_result_new(&q, &r, &e), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(store_result_rep(r, grp[i], reps[i], 2), i);
	if (dense)
		assert_int_equal(store_result_fix_reps(r), 0);
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (lines[i].rep == 3 && !late)
			continue;
		if (lines[i].rep == 3)
			assert_int_equal(store_result_rep(r, grp[3], reps[3], 2), 3);
		const char *k[1] = { lines[i].sym };
		size_t kl[1] = { 1 };
		long row = store_result_row(r, k, kl);
		assert_true(row >= 0);
		assert_int_equal(store_result_add_count(r, (size_t)row, (size_t)lines[i].rep, lines[i].self, lines[i].acc,
							lines[i].count), 0);
	}
	assert_int_equal(store_result_finish(r, &e), 0);
	return r;
}

static void dense_sums_equal_cells(void **state)
{
	(void)state;
	for (int late = 0; late < 2; late++) {
		size_t nrep = late ? 4 : 3;
		store_result *a = sums_of(false, late), *b = sums_of(true, late);
		assert_int_equal(a->nrows, 3 + late);
		assert_int_equal(b->nrows, 3 + late);
		assert_int_equal(a->nreps, nrep);
		assert_int_equal(b->nreps, nrep);
		for (size_t q = 0; q < nrep; q++) {
			assert_string_equal(pf_str(a->prof, a->rep_name[q]), pf_str(b->prof, b->rep_name[q]));
			assert_int_equal(a->rep_group[q], b->rep_group[q]);
		}
		/* group 0 first (r0, r1), then r2 (r9) */
		assert_string_equal(pf_str(b->prof, b->rep_name[0]), "r0");
		assert_string_equal(pf_str(b->prof, b->rep_name[2]), "r2");
		for (size_t i = 0; i < b->nrows * nrep; i++) {
			assert_int_equal(a->self[i], b->self[i]);
			assert_int_equal(a->acc[i], b->acc[i]);
		}
		/* row b (1), replicate r2 (2): 10 + 2 given in two lines */
		assert_int_equal(b->self[1 * nrep + 2], 12);
		assert_int_equal(b->acc[1 * nrep + 2], 22);
		/* each replicate's hist: the same rows, samples and periods */
		hist_opts ho = { 0 };
		for (size_t q = 0; q < nrep; q++) {
			hist *ha, *hb;
			proff_error e;
			assert_int_equal(store_result_run_hist(a, q, &ho, &ha, &e), 0);
			assert_int_equal(store_result_run_hist(b, q, &ho, &hb, &e), 0);
			assert_int_equal(ha->n, hb->n);
			assert_true(ha->n > 0);
			for (size_t i = 0; i < ha->n; i++) {
				assert_string_equal(pf_str(a->prof, ha->entries[i].sym_name), pf_str(b->prof, hb->entries[i].sym_name));
				assert_int_equal(ha->entries[i].period, hb->entries[i].period);
				assert_int_equal(ha->entries[i].period_acc, hb->entries[i].period_acc);
				assert_int_equal(ha->entries[i].nr_events, hb->entries[i].nr_events);
			}
			store_hist_free(ha);
			store_hist_free(hb);
		}
		store_result_free(a);
		store_result_free(b);
	}
}

/* ---- ClickHouse's rows answers (chrows.c) ---------------------------------------------- */

static void put_u64(char **p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		*(*p)++ = (char)(v >> (8 * i));
}

static void put_str(char **p, const char *s)
{
	size_t n = strlen(s);
	*(*p)++ = (char)n;
	memcpy(*p, s, n);
	*p += n;
}

/* the answer given in pieces of chunk bytes, the rest kept as the HTTP sink keeps it */
static int read_in_pieces(store_rows_reader *x, int values, const char *a, size_t n, size_t chunk, size_t *left,
			  proff_error *e)
{
	char buf[512];
	size_t have = 0;
	for (size_t at = 0; at < n; at += chunk) {
		size_t k = n - at < chunk ? n - at : chunk, used;
		memcpy(buf + have, a + at, k);
		have += k;
		int rc = values ? store_rows_values(x, buf, have, &used, e) : store_rows_names(x, buf, have, &used, e);
		if (rc)
			return rc;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	*left = have;
	return 0;
}

static void rows_answers_read(void **state)
{
	(void)state;
	/* two rows (dso, sym): h 1 = libc main (level '.'), h 2 = the unresolved
	 * row of [unknown] (level 'k', lowest address 0x40); profiles 10 and 11
	 * in replicates r0 (group 0) and r1 (group 1), 12 not selected */
	char names[256], values[256], *p = names;
	put_u64(&p, 1), put_str(&p, "libc"), put_str(&p, "main"), put_str(&p, "."), put_u64(&p, 0);
	put_u64(&p, 2), put_str(&p, "[unknown]"), put_str(&p, ""), put_str(&p, "k"), put_u64(&p, 0x40);
	size_t nn = (size_t)(p - names);
	p = values;
	const uint64_t rec[][3] = { { 1, 10, 100 }, { 2, 10, 5 }, { 1, 11, 120 }, { 1, 12, 999 }, { 2, 11, 7 } };
	for (size_t i = 0; i < 5; i++)
		put_u64(&p, rec[i][0]), put_u64(&p, rec[i][1]), put_u64(&p, rec[i][2]);
	size_t nv = (size_t)(p - values);
	for (size_t chunk = 1; chunk <= nn + nv; chunk += 7) {
		store_sel sel = { 0 };
		store_query q = { .keys = { HK_DSO, HK_SYM }, .nkeys = 2, .groups = &sel, .ngroups = 1, .event = "cycles",
				  .no_counts = true };
		store_result *r;
		proff_error e;
		assert_int_equal(store_result_new(&q, &r, &e), 0);
		pf_map64 profs;
		pf_map64_init(&profs);
		bool f;
		*pf_map64_upsert(&profs, 10, &f) = (uint64_t)store_result_rep(r, 0, "r0", 2);
		*pf_map64_upsert(&profs, 11, &f) = (uint64_t)store_result_rep(r, 1, "r1", 2);
		assert_int_equal(store_result_fix_reps(r), 0);
		store_rows_reader x;
		store_rows_reader_init(&x, r, &profs, 2, false, false, "test");
		size_t left;
		assert_int_equal(read_in_pieces(&x, 0, names, nn, chunk, &left, &e), 0);
		assert_int_equal(left, 0);
		assert_int_equal(read_in_pieces(&x, 1, values, nv, chunk, &left, &e), 0);
		assert_int_equal(left, 0);
		store_rows_reader_free(&x);
		assert_int_equal(store_result_finish(r, &e), 0);
		/* rows in key order: [unknown] before libc */
		assert_int_equal(r->nrows, 2);
		assert_int_equal(r->nreps, 2);
		assert_int_equal(r->self[0 * 2 + 0], 5);
		assert_int_equal(r->self[0 * 2 + 1], 7);
		assert_int_equal(r->self[1 * 2 + 0], 100);
		assert_int_equal(r->self[1 * 2 + 1], 120);
		assert_int_equal(r->row_level[0], 'k');
		assert_int_equal(r->row_addr[0], 0x40);
		/* no counts asked: none kept, the hists' sample counts 0 */
		hist_opts ho = { 0 };
		hist *h;
		assert_int_equal(store_result_run_hist(r, 1, &ho, &h, &e), 0);
		assert_int_equal(h->n, 2);
		assert_int_equal(h->entries[0].nr_events + h->entries[1].nr_events, 0);
		assert_int_equal(h->entries[0].period + h->entries[1].period, 127);
		store_hist_free(h);
		pf_map64_free(&profs);
		store_result_free(r);
	}
	/* malformed: a row named twice; a value of a row not named; a record cut short */
	store_sel sel = { 0 };
	store_query q = { .keys = { HK_DSO, HK_SYM }, .nkeys = 2, .groups = &sel, .ngroups = 1, .event = "cycles" };
	store_result *r;
	proff_error e;
	assert_int_equal(store_result_new(&q, &r, &e), 0);
	pf_map64 profs;
	pf_map64_init(&profs);
	bool f;
	*pf_map64_upsert(&profs, 10, &f) = (uint64_t)store_result_rep(r, 0, "r0", 2);
	assert_int_equal(store_result_fix_reps(r), 0);
	store_rows_reader x;
	store_rows_reader_init(&x, r, &profs, 2, false, false, "clickhouse://h:1/db");
	size_t used, left;
	char twice[128];
	p = twice;
	put_u64(&p, 1), put_str(&p, "a"), put_str(&p, "b"), put_str(&p, "."), put_u64(&p, 0);
	put_u64(&p, 1), put_str(&p, "a"), put_str(&p, "c"), put_str(&p, "."), put_u64(&p, 0);
	assert_int_equal(store_rows_names(&x, twice, (size_t)(p - twice), &used, &e), PROFF_EFORMAT);
	assert_non_null(strstr(e.msg, "a row named twice"));
	assert_string_equal(e.file, "clickhouse://h:1/db");
	char unnamed[24];
	p = unnamed;
	put_u64(&p, 77), put_u64(&p, 10), put_u64(&p, 1);
	assert_int_equal(store_rows_values(&x, unnamed, 24, &used, &e), PROFF_EFORMAT);
	assert_non_null(strstr(e.msg, "a row not named"));
	assert_int_equal(read_in_pieces(&x, 1, unnamed, 20, 5, &left, &e), 0);
	assert_int_equal(left, 20);       /* (clickhouse.c: bytes left at the end are an error) */
	store_rows_reader_free(&x);
	pf_map64_free(&profs);
	store_result_free(r);
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
		cmocka_unit_test(unresolved_rows_by_address),
		cmocka_unit_test(keyrows_equal_samples),
		cmocka_unit_test(self_rows_level),
		cmocka_unit_test(dense_sums_equal_cells),
		cmocka_unit_test(rows_answers_read),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
