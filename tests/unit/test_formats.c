/* test_formats.c — unit tests of lib/formats: recognising formats by their
 * first bytes, folded stacks read into the model (threads, kernel and
 * unresolved frames, counts, errors with their line), pprof written and read
 * back in memory (gzipped and not: the same samples, stacks, names, threads,
 * cpus and labels), label sets shared by threads, a period past int64 split
 * and summed back, the label sort key of lib/hist, and runs written into one
 * file (pf_pprof_writer: labels run and group, functions shared, each run
 * read back alone through pf_load_opts.label_is). The end-to-end and
 * oracle tests are tests/cli/formats.sh and tests/oracle/{pprof,folded,
 * chrome,speedscope}.sh.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/formats.h"
#include "proff/hist.h"
#include "proff/profile.h"

static pf_profile *folded(const char *text, proff_error *e)
{
	pf_profile *p = NULL;
	memset(e, 0, sizeof(*e));
	int rc = pf_folded_read((const uint8_t *)text, strlen(text), "t.folded", NULL, &p, e);
	return rc < 0 ? NULL : p;
}

/* the stack of sample s as "root;...;leaf" */
static void stack_str(const pf_profile *p, size_t s, char *buf, size_t len)
{
	uint32_t fr[64];
	size_t n = 0;
	for (uint32_t x = p->samples[s].stack; x && n < 64; x = p->nodes[x].parent)
		fr[n++] = p->nodes[x].loc;
	buf[0] = '\0';
	while (n--) {
		const pf_loc *l = &p->locs[fr[n]];
		strncat(buf, l->sym == PF_NONE ? "?" : pf_str(p, p->syms[l->sym].name), len - strlen(buf) - 1);
		if (n)
			strncat(buf, ";", len - strlen(buf) - 1);
	}
}

static void test_sniff(void **state)
{
	(void)state;
	assert_int_equal(pf_format_sniff((const uint8_t *)"PERFILE2", 8), PF_FORMAT_PERF);
	assert_int_equal(pf_format_sniff((const uint8_t *)"PFTR\1\0", 6), PF_FORMAT_TRACE);
	assert_int_equal(pf_format_sniff((const uint8_t *)"\x1f\x8b\x08\0", 4), PF_FORMAT_PPROF);
	assert_int_equal(pf_format_sniff((const uint8_t *)"main;a 1\n", 9), PF_FORMAT_FOLDED);
	assert_int_equal(pf_format_sniff((const uint8_t *)"\x0a\x04\x08\x01\x10\x02", 6), PF_FORMAT_PPROF);
	assert_int_equal(pf_format_sniff((const uint8_t *)"\x32\x00\x32\x03", 4), PF_FORMAT_PPROF);
	assert_int_equal(pf_format_sniff((const uint8_t *)"\xff\xfe\x00", 3), PF_FORMAT_UNKNOWN);
	assert_int_equal(pf_format_sniff((const uint8_t *)"", 0), PF_FORMAT_UNKNOWN);
}

static void test_folded_read(void **state)
{
	(void)state;
	proff_error e;
	pf_profile *p = folded("app-10/11;main;work;memcpy 5\n"
			       "app-10/11;main;work 3\r\n"
			       "\n"
			       "app-10/12;main;sys_write_[k] 2\n"
			       "app-10/11;main;work;memcpy 4\n"
			       "app-?/13;[libc.so.6];[unknown] 1\n", &e);
	assert_non_null(p);
	assert_int_equal(p->nr_events, 1);
	assert_string_equal(p->events[0].name, "folded");
	assert_int_equal(p->events[0].total_period, 15);
	assert_int_equal(p->events[0].nr_samples, 5);        /* one per line */
	assert_int_equal(p->nr_samples, 4);                  /* equal stacks of a thread add up */
	char buf[256];
	stack_str(p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "main;work;memcpy");
	assert_int_equal(p->samples[0].period, 9);
	assert_int_equal(p->samples[0].count, 2);
	assert_int_equal(p->samples[0].pid, 10);
	assert_int_equal(p->samples[0].tid, 11);
	assert_string_equal(pf_str(p, p->samples[0].comm), "app");
	/* the kernel frame */
	const pf_loc *k = &p->locs[p->nodes[p->samples[2].stack].loc];
	assert_int_equal(k->level, 'k');
	assert_string_equal(pf_str(p, p->dsos[k->dso].short_name), "[kernel.kallsyms]");
	assert_string_equal(pf_str(p, p->syms[k->sym].name), "sys_write");
	/* an unknown pid, a dso's unresolved frame */
	assert_int_equal(p->samples[3].pid, PF_NONE);
	assert_int_equal(p->samples[3].tid, 13);
	const pf_loc *u = &p->locs[p->nodes[p->nodes[p->samples[3].stack].parent].loc];
	assert_string_equal(pf_str(p, p->dsos[u->dso].long_name), "libc.so.6");
	pf_profile_free(p);

	/* no thread frames: the first frame is a frame */
	p = folded("main;a 2\nb 1\n", &e);
	assert_non_null(p);
	assert_int_equal(p->samples[0].pid, PF_NONE);
	assert_string_equal(pf_str(p, p->samples[0].comm), "[unknown]");
	stack_str(p, 0, buf, sizeof(buf));
	assert_string_equal(buf, "main;a");
	pf_profile_free(p);
}

static void test_folded_errors(void **state)
{
	(void)state;
	static const struct { const char *in, *msg; } bad[] = {
		{ "a;b 1\na;b\n", "line 2: no count" },
		{ "a;b -1\n", "line 1: negative count" },
		{ "a;b 1.5\n", "line 1: count '1.5' is not a whole number" },
		{ "a;b 18446744073709551616\n", "line 1: count '18446744073709551616' is larger than 2^64 - 1" },
		{ "a;b 1 2\n", "line 1: two counts" },
		{ "a;;b 1\n", "line 1: an empty frame" },
		{ "a 18446744073709551615\na 1\n", "line 2: the counts of this stack add up" },
		{ "\n\n", "no stacks" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		proff_error e;
		pf_profile *p = folded(bad[i].in, &e);
		assert_null(p);
		assert_int_equal(e.code, PROFF_EFORMAT);
		assert_string_equal(e.file, "t.folded");
		if (!strstr(e.msg, bad[i].msg))
			fail_msg("input %zu: '%s' lacks '%s'", i, e.msg, bad[i].msg);
	}
}

/* p written as pprof into memory and read back */
static pf_profile *pprof_again(pf_profile *p, bool gzip, const pf_load_opts *lo)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	pf_write_opts wo = { .gzip = gzip, .evsel = -1 };
	proff_error e;
	memset(&e, 0, sizeof(e));
	assert_int_equal(pf_pprof_write(p, m, &wo, &e), 0);
	fclose(m);
	if (gzip)
		assert_true(len > 2 && (uint8_t)buf[0] == 0x1f && (uint8_t)buf[1] == 0x8b);
	pf_profile *q = NULL;
	int rc = pf_pprof_read((const uint8_t *)buf, len, "again.pb", lo, &q, &e);
	if (rc < 0)
		fail_msg("read back: %s", e.msg);
	free(buf);
	return q;
}

static void test_pprof_round_trip(void **state)
{
	(void)state;
	proff_error e;
	pf_profile *p = folded("app-10/11;main;work;memcpy 5\n"
			       "app-10/12;main;sys_write_[k] 2\n"
			       "app-10/11;main;work 3\n", &e);
	assert_non_null(p);
	for (int gz = 0; gz < 2; gz++) {
		pf_profile *q = pprof_again(p, gz, NULL);
		assert_string_equal(q->events[0].name, "folded");
		assert_string_equal(pf_str(q, q->events[0].unit), "count");
		assert_int_equal(q->events[0].total_period, p->events[0].total_period);
		assert_int_equal(q->events[0].nr_samples, p->events[0].nr_samples);
		assert_int_equal(q->nr_samples, p->nr_samples);
		for (size_t i = 0; i < p->nr_samples; i++) {
			char a[256], b[256];
			stack_str(p, i, a, sizeof(a));
			stack_str(q, i, b, sizeof(b));
			assert_string_equal(a, b);
			assert_int_equal(p->samples[i].period, q->samples[i].period);
			assert_int_equal(p->samples[i].count, q->samples[i].count);
			assert_int_equal(p->samples[i].pid, q->samples[i].pid);
			assert_int_equal(p->samples[i].tid, q->samples[i].tid);
			assert_string_equal(pf_str(p, p->samples[i].comm), pf_str(q, q->samples[i].comm));
		}
		/* the kernel frame stays one */
		const pf_loc *k = &q->locs[q->nodes[q->samples[1].stack].loc];
		assert_int_equal(k->level, 'k');
		pf_profile_free(q);
	}
	/* the samples type: the counts */
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.sample_type = "samples";
	pf_profile *q = pprof_again(p, false, &lo);
	assert_string_equal(q->events[0].name, "samples");
	assert_int_equal(q->events[0].total_period, 3);
	pf_profile_free(q);
	lo.sample_type = "nope";
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	pf_write_opts wo = { .evsel = -1 };
	assert_int_equal(pf_pprof_write(p, m, &wo, &e), 0);
	fclose(m);
	assert_int_equal(pf_pprof_read((const uint8_t *)buf, len, "x.pb", &lo, &q, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "--sample-type nope: the profile has samples, folded"));
	free(buf);
	pf_profile_free(p);
}

static void test_big_period(void **state)
{
	(void)state;
	proff_error e;
	/* 2^64 - 1: more than one int64 pprof value */
	pf_profile *p = folded("a;b 18446744073709551615\n", &e);
	assert_non_null(p);
	pf_profile *q = pprof_again(p, true, NULL);
	assert_int_equal(q->nr_samples, 1);
	assert_int_equal(q->samples[0].period, UINT64_MAX);
	assert_int_equal(q->samples[0].count, 1);
	pf_profile_free(q);
	pf_profile_free(p);
}

/* A pprof profile with labels (folded stacks have none), encoded here by
 * hand: varints and length-delimited fields of profile.proto */
static size_t varint(uint8_t *o, uint64_t v)
{
	size_t n = 0;
	do {
		o[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			o[n] |= 0x80;
		n++;
	} while (v);
	return n;
}

typedef struct pbuf { uint8_t b[4096]; size_t n; } pbuf;

static void put_v(pbuf *p, unsigned field, uint64_t v)
{
	p->n += varint(p->b + p->n, (uint64_t)field << 3);
	p->n += varint(p->b + p->n, v);
}

static void put_m(pbuf *p, unsigned field, const pbuf *m)
{
	p->n += varint(p->b + p->n, (uint64_t)field << 3 | 2);
	p->n += varint(p->b + p->n, m->n);
	memcpy(p->b + p->n, m->b, m->n);
	p->n += m->n;
}

static void put_s(pbuf *p, const char *s)
{
	pbuf m = { .n = strlen(s) };
	memcpy(m.b, s, m.n);
	put_m(p, 6, &m);
}

static void test_labels(void **state)
{
	(void)state;
	/* strings: 1 cpu, 2 nanoseconds, 3 main, 4 phase, 5 parse, 6 render, 7 bytes, 8 tid */
	pbuf prof = { .n = 0 }, m;
	m = (pbuf){ .n = 0 };
	put_v(&m, 1, 1);
	put_v(&m, 2, 2);
	put_m(&prof, 1, &m);                       /* sample type cpu/nanoseconds */
	m = (pbuf){ .n = 0 };
	put_v(&m, 1, 1);
	put_v(&m, 2, 3);
	put_m(&prof, 5, &m);                       /* function 1 main */
	pbuf line = { .n = 0 };
	put_v(&line, 1, 1);
	m = (pbuf){ .n = 0 };
	put_v(&m, 1, 1);
	put_m(&m, 4, &line);
	put_m(&prof, 4, &m);                       /* location 1: main */
	static const struct { int64_t v, str, num; uint32_t tid; } smp[] = {
		{ 10, 5, 0, 7 }, { 20, 6, 0, 7 }, { 5, 5, 0, 8 }, { 1, 0, 4096, 7 },
	};
	for (size_t i = 0; i < 4; i++) {
		pbuf s = { .n = 0 }, l = { .n = 0 }, t = { .n = 0 };
		put_v(&s, 1, 1);
		put_v(&s, 2, (uint64_t)smp[i].v);
		if (smp[i].str) {
			put_v(&l, 1, 4);
			put_v(&l, 2, (uint64_t)smp[i].str);
		} else {
			put_v(&l, 1, 7);
			put_v(&l, 3, (uint64_t)smp[i].num);
		}
		put_m(&s, 3, &l);
		put_v(&t, 1, 8);
		put_v(&t, 3, smp[i].tid);
		put_m(&s, 3, &t);
		put_m(&prof, 2, &s);
	}
	static const char *strs[] = { "", "cpu", "nanoseconds", "main", "phase", "parse", "render", "bytes", "tid" };
	for (size_t i = 0; i < 9; i++)
		put_s(&prof, strs[i]);
	pf_profile *p;
	proff_error e;
	memset(&e, 0, sizeof(e));
	int rc = pf_pprof_read(prof.b, prof.n, "l.pb", NULL, &p, &e);
	if (rc < 0)
		fail_msg("%s", e.msg);
	assert_int_equal(p->nr_samples, 4);
	assert_int_equal(p->samples[0].tid, 7);
	assert_int_equal(p->samples[2].tid, 8);
	/* threads: one per (tid, label set); two samples share a set */
	assert_non_null(p->thread_labels);
	uint32_t phase = (uint32_t)pf_strtab_find(&p->strs, "phase", 5);
	uint32_t bytes = (uint32_t)pf_strtab_find(&p->strs, "bytes", 5);
	assert_string_equal(pf_str(p, pf_label_value(p, p->samples[0].thread, phase)), "parse");
	assert_string_equal(pf_str(p, pf_label_value(p, p->samples[1].thread, phase)), "render");
	assert_string_equal(pf_str(p, pf_label_value(p, p->samples[2].thread, phase)), "parse");
	assert_int_equal(p->thread_labels[p->samples[0].thread], p->thread_labels[p->samples[2].thread]);
	assert_int_not_equal(p->samples[0].thread, p->samples[2].thread);
	assert_string_equal(pf_str(p, pf_label_value(p, p->samples[3].thread, bytes)), "4096");
	assert_int_equal(pf_label_value(p, p->samples[3].thread, phase), PF_NONE);

	/* -s label:phase */
	hist_opts ho;
	hist_opts_init(&ho);
	ho.sort = "label:phase";
	hist *h;
	assert_int_equal(hist_build(p, 0, &ho, &h, &e), 0);
	hist_sort_report(h);
	assert_int_equal(h->n, 3);
	uint64_t got[3] = { 0 };
	for (size_t i = 0; i < h->n; i++) {
		char buf[64];
		hist_keys[HK_LABEL].print(h, &h->entries[i], buf, sizeof(buf), 0, false, 0);
		if (!strcmp(buf, "parse"))
			got[0] = h->entries[i].period;
		else if (!strcmp(buf, "render"))
			got[1] = h->entries[i].period;
		else if (!strcmp(buf, "[none]"))
			got[2] = h->entries[i].period;
		else
			fail_msg("label value '%s'", buf);
	}
	assert_int_equal(got[0], 15);
	assert_int_equal(got[1], 20);
	assert_int_equal(got[2], 1);
	hist_free(h);
	hist_opts_release(&ho);

	/* --label phase=render,parse; bytes=4096 (a number) */
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.label_filter = "phase=render";
	pf_profile *q;
	assert_int_equal(pf_pprof_read(prof.b, prof.n, "l.pb", &lo, &q, &e), 0);
	assert_int_equal(q->events[0].total_period, 20);
	pf_profile_free(q);
	lo.label_filter = "bytes=4096";
	assert_int_equal(pf_pprof_read(prof.b, prof.n, "l.pb", &lo, &q, &e), 0);
	assert_int_equal(q->events[0].total_period, 1);
	pf_profile_free(q);
	lo.label_filter = "nope=1";
	assert_int_equal(pf_pprof_read(prof.b, prof.n, "l.pb", &lo, &q, &e), PROFF_EUSAGE);

	/* written and read again: the labels and threads are kept */
	q = pprof_again(p, false, NULL);
	assert_int_equal(q->nr_samples, 4);
	for (size_t i = 0; i < 4; i++) {
		uint32_t a = pf_label_value(p, p->samples[i].thread, phase);
		uint32_t qp = (uint32_t)pf_strtab_find(&q->strs, "phase", 5);
		uint32_t b = pf_label_value(q, q->samples[i].thread, qp);
		assert_string_equal(a == PF_NONE ? "-" : pf_str(p, a), b == PF_NONE ? "-" : pf_str(q, b));
		assert_int_equal(p->samples[i].tid, q->samples[i].tid);
	}
	pf_profile_free(q);
	pf_profile_free(p);
}

/* pf_pprof_writer's output of two profiles as runs a (group 0) and b (1) */
static int write_runs(pf_profile *a, pf_profile *b, char **buf, size_t *len, proff_error *e)
{
	FILE *m = open_memstream(buf, len);
	assert_non_null(m);
	pf_write_opts wo = { .evsel = -1 };
	pf_pprof_writer *w;
	memset(e, 0, sizeof(*e));
	assert_int_equal(pf_pprof_writer_new(&wo, &w, e), 0);
	const pf_extra_label la[2] = { { "run", "a", 0 }, { "group", "0", 0 } }, lb[2] = { { "run", "b", 0 }, { "group", "1", 0 } };
	int rc = pf_pprof_writer_add(w, a, la, 2, e);
	if (rc == 0)
		rc = pf_pprof_writer_add(w, b, lb, 2, e);
	if (rc == 0)
		rc = pf_pprof_writer_finish(w, m, e);
	pf_pprof_writer_free(w);
	fclose(m);
	return rc;
}

static uint64_t total_where(const char *buf, size_t len, const char *key, const char *value)
{
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.label_is[0].key = key;
	lo.label_is[0].value = value;
	pf_profile *q;
	proff_error e;
	memset(&e, 0, sizeof(e));
	if (pf_pprof_read((const uint8_t *)buf, len, "runs.pb", &lo, &q, &e) < 0)
		fail_msg("read runs: %s", e.msg);
	uint64_t t = q->events[0].total_period;
	pf_profile_free(q);
	return t;
}

static void test_pprof_runs(void **state)
{
	(void)state;
	proff_error e;
	pf_profile *a = folded("app-10/11;main;work;memcpy 5\napp-10/11;main;idle 2\n", &e);
	pf_profile *b = folded("app-20/21;main;work;memcpy 1\napp-20/21;main;other 4\n", &e);
	assert_non_null(a);
	assert_non_null(b);
	char *buf = NULL;
	size_t len = 0;
	assert_int_equal(write_runs(a, b, &buf, &len, &e), 0);
	pf_profile *q;
	assert_int_equal(pf_pprof_read((const uint8_t *)buf, len, "runs.pb", NULL, &q, &e), 0);
	/* the functions both runs have are one: main, work, memcpy, idle, other */
	assert_int_equal(q->nr_syms, 5);
	assert_int_equal(q->nr_dsos, 1);
	assert_int_equal(q->events[0].total_period, 12);
	/* every sample labelled */
	int64_t run = pf_strtab_find(&q->strs, "run", 3), grp = pf_strtab_find(&q->strs, "group", 5);
	assert_true(run >= 0 && grp >= 0);
	for (size_t i = 0; i < q->nr_samples; i++) {
		uint32_t r = pf_label_value(q, q->samples[i].thread, (uint32_t)run);
		uint32_t g = pf_label_value(q, q->samples[i].thread, (uint32_t)grp);
		assert_true(r != PF_NONE && g != PF_NONE);
		assert_string_equal(pf_str(q, g), !strcmp(pf_str(q, r), "a") ? "0" : "1");
	}
	/* each run alone, and a group */
	assert_int_equal(total_where(buf, len, "run", "a"), 7);
	assert_int_equal(total_where(buf, len, "run", "b"), 5);
	assert_int_equal(total_where(buf, len, "group", "1"), 5);
	assert_int_equal(total_where(buf, len, "run", "c"), 0);
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.label_is[1].key = "nope";
	lo.label_is[1].value = "1";
	pf_profile *x = NULL;
	assert_int_equal(pf_pprof_read((const uint8_t *)buf, len, "runs.pb", &lo, &x, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "the profile has no label nope"));
	/* a profile that has the labels already is refused */
	char *buf2 = NULL;
	size_t len2 = 0;
	assert_int_equal(write_runs(a, q, &buf2, &len2, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "a label 'run' of its own"));
	free(buf2);
	buf2 = NULL;
	/* other events: refused, naming both */
	pf_load_opts_init(&lo);
	lo.sample_type = "samples";
	pf_profile *s = pprof_again(a, false, &lo);
	assert_int_equal(write_runs(a, s, &buf2, &len2, &e), PROFF_EUSAGE);
	assert_non_null(strstr(e.msg, "events (samples) differ from those of t.folded (folded)"));
	free(buf2);
	pf_profile_free(s);
	pf_profile_free(q);
	free(buf);
	pf_profile_free(a);
	pf_profile_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sniff),
		cmocka_unit_test(test_folded_read),
		cmocka_unit_test(test_folded_errors),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_big_period),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_pprof_runs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
