/* test_perfdata.c — unit tests of the perf.data reader.
 *
 * Real files (tests/data/perfdata, made by gen.sh with perf record) are
 * checked against perf's own output recorded next to them (perf script
 * samples, perf report --header-only -I, perf report -D record totals), in
 * file, compressed, pipe, two-event and big-endian form. Crafted in-memory
 * files check what real recordings here cannot produce: every sample_type
 * field in order, each side-band record type, the ordered-delivery rounds,
 * and malformed input.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>

#include "proff/hist.h"
#include "proff/perfdata.h"
#include "proff/profile.h"

#define DATA "tests/data/perfdata/"

/* ---- helpers ---------------------------------------------------------------- */

typedef struct collect {
	char *buf;
	size_t len;
	FILE *f;
	uint64_t nrec, nsamp;
	uint64_t times[64];
	uint32_t types[64];
	size_t nt;
} collect;

static int sample_line_cb(void *ctx, const pd_event *ev)
{
	collect *c = ctx;
	c->nrec++;
	if (ev->type != PD_SAMPLE)
		return 0;
	c->nsamp++;
	const pd_sample *s = &ev->u.sample;
	fprintf(c->f, "%" PRIu64 " %u %u %" PRIu64 "\n", s->time, s->pid, s->tid, s->period);
	return 0;
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *b = malloc((size_t)n + 1);
	size_t got = fread(b, 1, (size_t)n, f);
	b[got] = 0;
	fclose(f);
	if (len)
		*len = got;
	return b;
}

/* samples decoded by us == perf script output; record total == perf -D's */
static void check_real(const char *data, const char *oracle)
{
	char path[256];
	pd_reader *r;
	proff_error e;
	snprintf(path, sizeof(path), DATA "%s.data", data);
	int rc = pd_open(path, &r, &e);
	if (rc < 0)
		fail_msg("open %s: %s", path, e.msg);
	collect c = { 0 };
	c.f = open_memstream(&c.buf, &c.len);
	assert_int_equal(pd_process(r, true, sample_line_cb, &c, &e), 0);
	fclose(c.f);
	snprintf(path, sizeof(path), DATA "%s.samples.txt", oracle);
	char *want = slurp(path, NULL);
	assert_non_null(want);
	assert_string_equal(c.buf, want);
	snprintf(path, sizeof(path), DATA "%s.total.txt", oracle);
	char *tot = slurp(path, NULL);
	assert_non_null(tot);
	assert_int_equal(c.nrec, strtoull(tot, NULL, 10));
	free(tot);
	free(want);
	free(c.buf);
	pd_close(r);
}

static void test_real_file(void **s) { (void)s; check_real("small", "small"); }
static void test_real_compressed(void **s) { (void)s; check_real("small-z", "small-z"); }
static void test_real_pipe(void **s) { (void)s; check_real("small-pipe", "small-pipe"); }
static void test_real_two_events(void **s) { (void)s; check_real("small-two", "small-two"); }
static void test_real_big_endian(void **s) { (void)s; check_real("small-be", "small"); }

/* pd_event.stable: a sample read in place from the mapped file says so;
 * a decompressed or byte-swapped one does not (its memory is reused) */
typedef struct stable_count { size_t yes, no; } stable_count;

static int stable_cb(void *ctx, const pd_event *ev)
{
	stable_count *c = ctx;
	if (ev->type == PD_SAMPLE)
		*(ev->stable ? &c->yes : &c->no) += 1;
	return 0;
}

static stable_count count_stable(const char *data)
{
	char path[256];
	pd_reader *r;
	proff_error e;
	snprintf(path, sizeof(path), DATA "%s.data", data);
	if (pd_open(path, &r, &e) < 0)
		fail_msg("open %s: %s", path, e.msg);
	stable_count c = { 0, 0 };
	assert_int_equal(pd_process(r, true, stable_cb, &c, &e), 0);
	pd_close(r);
	return c;
}

static void test_stable_samples(void **s)
{
	(void)s;
	stable_count c = count_stable("small");
	assert_true(c.yes > 0);
	assert_int_equal(c.no, 0);
	c = count_stable("small-z");
	assert_true(c.no > 0);
	assert_int_equal(c.yes, 0);
	c = count_stable("small-be");
	assert_true(c.no > 0);
	assert_int_equal(c.yes, 0);
}

static void check_header(const char *data)
{
	char path[256];
	pd_reader *r;
	proff_error e;
	snprintf(path, sizeof(path), DATA "%s.data", data);
	assert_int_equal(pd_open(path, &r, &e), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	pd_print_header(r, f, true);
	fclose(f);
	/* drop the "captured on" line (file mtime) */
	char *cap = strstr(buf, "# captured on");
	assert_non_null(cap);
	char *nl = strchr(cap, '\n');
	memmove(cap, nl + 1, strlen(nl + 1) + 1);
	snprintf(path, sizeof(path), DATA "%s.header.txt", data);
	char *want = slurp(path, NULL);
	assert_non_null(want);
	assert_string_equal(buf, want);
	free(want);
	free(buf);
	pd_close(r);
}

static void test_header_text(void **s)
{
	(void)s;
	check_header("small");
	check_header("small-z");
	check_header("small-pipe");
	check_header("small-two");
}

static void test_header_fields(void **s)
{
	(void)s;
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open(DATA "small-two.data", &r, &e), 0);
	const pd_header *h = pd_get_header(r);
	assert_false(h->needs_swap);
	assert_int_equal(h->data_offset % 8, 0);
	assert_true(pd_has_feature(r, PD_FEAT_EVENT_DESC));
	assert_true(pd_has_feature(r, PD_FEAT_HOSTNAME));
	assert_non_null(h->hostname);
	assert_string_equal(h->version, "6.1.187");
	assert_int_equal(pd_nr_attrs(r), 2);
	assert_string_equal(pd_get_attr(r, 0)->name, "cpu-clock");
	assert_string_equal(pd_get_attr(r, 1)->name, "task-clock");
	assert_int_equal(pd_get_attr(r, 1)->config, 1);
	assert_true(pd_get_attr(r, 0)->sample_id_all);
	assert_true(pd_get_attr(r, 0)->nr_ids >= 1);
	assert_true(h->nr_cmdline > 3);
	assert_string_equal(h->cmdline[1], "record");
	pd_close(r);
	/* BUILD_ID feature: 20-byte SHA1 ids (size form), kernel entry pid -1 */
	assert_int_equal(pd_open(DATA "small.data", &r, &e), 0);
	h = pd_get_header(r);
	assert_true(h->nr_build_ids >= 2);
	bool kernel = false;
	for (size_t i = 0; i < h->nr_build_ids; i++) {
		assert_int_equal(h->build_ids[i].size, 20);
		if (!strcmp(h->build_ids[i].filename, "[kernel.kallsyms]") && h->build_ids[i].pid == -1)
			kernel = true;
	}
	assert_true(kernel);
	pd_close(r);
	assert_int_equal(pd_open(DATA "small-be.data", &r, &e), 0);
	assert_true(pd_get_header(r)->needs_swap);
	assert_string_equal(pd_get_attr(r, 0)->name, "cpu-clock");
	assert_true(pd_get_attr(r, 0)->sample_id_all);
	assert_true(pd_get_attr(r, 0)->freq == false);
	assert_int_equal(pd_get_attr(r, 0)->sample_period, 200000);
	pd_close(r);
	assert_int_equal(pd_open(DATA "small-z.data", &r, &e), 0);
	assert_int_equal(pd_get_header(r)->compressed.type, 1);
	pd_close(r);
}

/* full decode of small.data and small-be.data must be identical */
static void test_big_endian_identical(void **s)
{
	(void)s;
	char *out[2];
	size_t len[2];
	const char *files[2] = { DATA "small.data", DATA "small-be.data" };
	for (int i = 0; i < 2; i++) {
		pd_reader *r;
		proff_error e;
		assert_int_equal(pd_open(files[i], &r, &e), 0);
		FILE *f = open_memstream(&out[i], &len[i]);
		assert_int_equal(pd_dump(r, f, &e), 0);
		fclose(f);
		pd_close(r);
	}
	assert_true(len[0] > 10000);
	assert_string_equal(out[0], out[1]);
	free(out[0]);
	free(out[1]);
}

/* ---- crafted files --------------------------------------------------------- */

typedef struct buf {
	uint8_t d[1 << 16];
	size_t n;
} buf;

static void put(buf *b, const void *p, size_t n) { memcpy(b->d + b->n, p, n); b->n += n; }
static void p64(buf *b, uint64_t v) { put(b, &v, 8); }
static void p32(buf *b, uint32_t v) { put(b, &v, 4); }
static void p16(buf *b, uint16_t v) { put(b, &v, 2); }
static void p8(buf *b, uint8_t v) { put(b, &v, 1); }
static void pset(buf *b, size_t at, const void *p, size_t n) { memcpy(b->d + at, p, n); }

/* record start: returns its offset; rec_end patches the size */
static size_t rec_begin(buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;
	p32(b, type);
	p16(b, misc);
	p16(b, 0);
	return at;
}
static void rec_end(buf *b, size_t at)
{
	uint16_t sz = (uint16_t)(b->n - at);
	pset(b, at + 6, &sz, 2);
}

typedef struct craft {
	uint64_t sample_type, read_format, flags, branch_sample_type, regs_user, regs_intr;
	uint32_t stack_user;
} craft;

/* header + one attr (size 128) + its ids; returns offset of data start */
static size_t file_begin(buf *b, const craft *c, const uint64_t *ids, int nids)
{
	memset(b, 0, sizeof(*b));
	put(b, "PERFILE2", 8);
	p64(b, 104);
	p64(b, 128 + 16);                  /* attr_size */
	b->n = 104;
	size_t ids_off = b->n;
	for (int i = 0; i < nids; i++)
		p64(b, ids[i]);
	size_t attr_off = b->n;
	uint8_t attr[128] = { 0 };
	uint32_t t = 1, sz = 128;
	memcpy(attr, &t, 4);
	memcpy(attr + 4, &sz, 4);
	uint64_t period = 1000;
	memcpy(attr + 16, &period, 8);
	memcpy(attr + 24, &c->sample_type, 8);
	memcpy(attr + 32, &c->read_format, 8);
	memcpy(attr + 40, &c->flags, 8);
	memcpy(attr + 72, &c->branch_sample_type, 8);
	memcpy(attr + 80, &c->regs_user, 8);
	memcpy(attr + 88, &c->stack_user, 4);
	memcpy(attr + 96, &c->regs_intr, 8);
	put(b, attr, 128);
	p64(b, ids_off);
	p64(b, 8 * (uint64_t)nids);
	uint64_t v = attr_off;
	pset(b, 24, &v, 8);
	v = 144;
	pset(b, 32, &v, 8);
	v = b->n;
	pset(b, 40, &v, 8);
	return b->n;
}
static void file_end(buf *b, size_t data_off)
{
	uint64_t v = b->n - data_off;
	pset(b, 48, &v, 8);
}

typedef struct evs {
	pd_event ev[32];
	pd_sample_id sid[32];
	uint64_t cc[8];
	size_t n;
	char strs[32][64];
} evs;

static int keep_cb(void *ctx, const pd_event *ev)
{
	evs *v = ctx;
	if (v->n >= 32)
		return 0;
	v->ev[v->n] = *ev;
	if (ev->type == PD_MMAP || ev->type == PD_MMAP2)
		snprintf(v->strs[v->n], 64, "%s", ev->u.mmap.filename);
	if (ev->type == PD_COMM)
		snprintf(v->strs[v->n], 64, "%s", ev->u.comm.comm);
	v->n++;
	return 0;
}

static void test_sample_all_fields(void **s)
{
	(void)s;
	static buf b;
	craft c = {
		.sample_type = PD_S_IDENTIFIER | PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_ADDR | PD_S_ID |
			PD_S_STREAM_ID | PD_S_CPU | PD_S_PERIOD | PD_S_READ | PD_S_CALLCHAIN | PD_S_RAW |
			PD_S_BRANCH_STACK | PD_S_REGS_USER | PD_S_STACK_USER | PD_S_WEIGHT_STRUCT |
			PD_S_DATA_SRC | PD_S_TRANSACTION | PD_S_REGS_INTR | PD_S_PHYS_ADDR | PD_S_CGROUP |
			PD_S_DATA_PAGE_SIZE | PD_S_CODE_PAGE_SIZE | PD_S_AUX,
		.read_format = 1 | 2 | 4 | 8 | 16,     /* enabled, running, id, group, lost */
		.flags = 1ull << 18,
		.branch_sample_type = 1ull << 17,      /* HW_INDEX */
		.regs_user = 0x7,                      /* 3 regs */
		.regs_intr = 0x3,                      /* 2 regs */
		.stack_user = 16,
	};
	uint64_t ids[2] = { 77, 78 };
	size_t d0 = file_begin(&b, &c, ids, 2);
	size_t at = rec_begin(&b, PD_SAMPLE, PD_CPUMODE_USER);
	p64(&b, 77);                       /* IDENTIFIER */
	p64(&b, 0x401000);                 /* IP */
	p32(&b, 100); p32(&b, 101);        /* TID */
	p64(&b, 5000);                     /* TIME */
	p64(&b, 0xdead);                   /* ADDR */
	p64(&b, 77);                       /* ID */
	p64(&b, 78);                       /* STREAM_ID */
	p32(&b, 3); p32(&b, 0);            /* CPU */
	p64(&b, 12345);                    /* PERIOD */
	p64(&b, 2); p64(&b, 10); p64(&b, 11);          /* READ: nr, enabled, running */
	p64(&b, 1); p64(&b, 77); p64(&b, 0);            /* value, id, lost */
	p64(&b, 2); p64(&b, 78); p64(&b, 5);
	p64(&b, 3);                        /* CALLCHAIN */
	p64(&b, PD_CONTEXT_USER); p64(&b, 0x401000); p64(&b, 0x402000);
	p32(&b, 12); put(&b, "rawrawrawraw", 12);      /* RAW: 4 + 12 = 16 */
	p64(&b, 2); p64(&b, 9);            /* BRANCH_STACK nr, hw_idx */
	p64(&b, 0x1); p64(&b, 0x2); p64(&b, 1 | (7u << 4));
	p64(&b, 0x3); p64(&b, 0x4); p64(&b, 2);
	p64(&b, 2); p64(&b, 21); p64(&b, 22); p64(&b, 23);   /* REGS_USER abi 64, 3 regs */
	p64(&b, 16); put(&b, "stackstackstack!", 16); p64(&b, 8);   /* STACK_USER */
	p32(&b, 300); p16(&b, 4); p16(&b, 5);                /* WEIGHT_STRUCT */
	p64(&b, 0x55);                     /* DATA_SRC */
	p64(&b, 0x66);                     /* TRANSACTION */
	p64(&b, 2); p64(&b, 31); p64(&b, 32);                /* REGS_INTR */
	p64(&b, 0x7000);                   /* PHYS_ADDR */
	p64(&b, 99);                       /* CGROUP */
	p64(&b, 4096);                     /* DATA_PAGE_SIZE */
	p64(&b, 2097152);                  /* CODE_PAGE_SIZE */
	p64(&b, 8); put(&b, "auxdata!", 8);                  /* AUX */
	rec_end(&b, at);
	file_end(&b, d0);

	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	static evs v;
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, true, keep_cb, &v, &e), 0);
	/* READ with a group: one sample per value (as perf), period = counter delta */
	assert_int_equal(v.n, 2);
	assert_int_equal(v.ev[1].u.sample.id, 78);
	assert_int_equal(v.ev[1].u.sample.period, 2);
	assert_int_equal(v.ev[1].u.sample.ip, 0x401000);
	const pd_sample *x = &v.ev[0].u.sample;
	assert_int_equal(x->cpumode, PD_CPUMODE_USER);
	assert_int_equal(x->ip, 0x401000);
	assert_int_equal(x->pid, 100);
	assert_int_equal(x->tid, 101);
	assert_int_equal(x->time, 5000);
	assert_int_equal(x->addr, 0xdead);
	assert_int_equal(x->id, 77);
	assert_int_equal(x->stream_id, 78);
	assert_int_equal(x->cpu, 3);
	assert_int_equal(x->period, 1);
	assert_int_equal(x->nr_read_values, 9);
	assert_int_equal(x->weight, 300);
	assert_int_equal(x->weight_var2, 4);
	assert_int_equal(x->weight_var3, 5);
	assert_int_equal(x->data_src, 0x55);
	assert_int_equal(x->transaction, 0x66);
	assert_int_equal(x->nr_regs_user, 3);
	assert_int_equal(x->regs_user_abi, 2);
	assert_int_equal(x->nr_regs_intr, 2);
	assert_int_equal(x->stack_user_size, 16);
	assert_int_equal(x->stack_user_dyn_size, 8);
	assert_int_equal(x->phys_addr, 0x7000);
	assert_int_equal(x->cgroup, 99);
	assert_int_equal(x->data_page_size, 4096);
	assert_int_equal(x->code_page_size, 2097152);
	assert_int_equal(x->aux_size, 8);
	assert_int_equal(x->nr_callchain, 3);
	assert_int_equal(x->raw_size, 12);
	assert_int_equal(x->nr_branches, 2);
	assert_true(x->has_hw_idx);
	assert_int_equal(x->hw_idx, 9);
	/* the pointers are only valid in the callback; re-check via a second pass */
	pd_close(r);
}

/* pointer fields checked inside the callback */
static int ptr_cb(void *ctx, const pd_event *ev)
{
	int *ok = ctx;
	const pd_sample *x = &ev->u.sample;
	*ok = x->callchain[0] == PD_CONTEXT_USER && x->callchain[2] == 0x402000 &&
	      memcmp(x->raw, "rawrawrawraw", 12) == 0 && x->branches[0].to == 2 &&
	      (x->branches[0].flags >> 4 & 0xffff) == 7 && x->branches[1].from == 3 &&
	      x->regs_user[2] == 23 && x->regs_intr[1] == 32 && memcmp(x->stack_user, "stack", 5) == 0 &&
	      memcmp(x->aux, "auxdata!", 8) == 0 && x->read_values[0] == 2 && x->read_values[8] == 5;
	return 0;
}

static void test_sample_pointers(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_CALLCHAIN | PD_S_RAW | PD_S_READ | PD_S_BRANCH_STACK |
		    PD_S_REGS_USER | PD_S_STACK_USER | PD_S_REGS_INTR | PD_S_AUX,
		    .read_format = 1 | 2 | 4 | 8 | 16, .branch_sample_type = 1ull << 17,
		    .regs_user = 7, .regs_intr = 3 };
	uint64_t ids[2] = { 77, 78 };
	size_t d0 = file_begin(&b, &c, ids, 2);
	size_t at = rec_begin(&b, PD_SAMPLE, 2);
	p64(&b, 0x401000);
	p64(&b, 2); p64(&b, 10); p64(&b, 11); p64(&b, 1); p64(&b, 77); p64(&b, 0); p64(&b, 2); p64(&b, 78); p64(&b, 5);
	p64(&b, 3); p64(&b, PD_CONTEXT_USER); p64(&b, 0x401000); p64(&b, 0x402000);
	p32(&b, 12); put(&b, "rawrawrawraw", 12);
	p64(&b, 2); p64(&b, 9); p64(&b, 1); p64(&b, 2); p64(&b, 1 | (7u << 4)); p64(&b, 3); p64(&b, 4); p64(&b, 2);
	p64(&b, 2); p64(&b, 21); p64(&b, 22); p64(&b, 23);
	p64(&b, 16); put(&b, "stackstackstack!", 16); p64(&b, 8);
	p64(&b, 2); p64(&b, 31); p64(&b, 32);
	p64(&b, 8); put(&b, "auxdata!", 8);
	rec_end(&b, at);
	file_end(&b, d0);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	int ok = 0;
	assert_int_equal(pd_process(r, false, ptr_cb, &ok, &e), 0);
	assert_true(ok);
	pd_close(r);
}

static void trailer(buf *b, uint32_t pid, uint32_t tid, uint64_t time)
{
	p32(b, pid); p32(b, tid); p64(b, time);   /* sample_type TID|TIME */
}

static void test_side_band_records(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_TID | PD_S_TIME, .flags = 1ull << 18 };
	uint64_t ids[1] = { 1 };
	size_t d0 = file_begin(&b, &c, ids, 1);
	size_t at = rec_begin(&b, PD_MMAP, 0);
	p32(&b, 10); p32(&b, 10); p64(&b, 0x1000); p64(&b, 0x2000); p64(&b, 0); put(&b, "/bin/x\0\0", 8);
	trailer(&b, 10, 10, 0);
	rec_end(&b, at);
	at = rec_begin(&b, PD_MMAP2, PD_MISC_MMAP_BUILD_ID);
	p32(&b, 10); p32(&b, 11); p64(&b, 0x5000); p64(&b, 0x1000); p64(&b, 0x3000);
	p8(&b, 20); p8(&b, 0); p16(&b, 0);
	for (int i = 0; i < 20; i++) p8(&b, (uint8_t)i);
	p32(&b, 5); p32(&b, 2);
	put(&b, "/lib/y.so\0\0\0\0\0\0\0", 16);
	trailer(&b, 10, 11, 0);
	rec_end(&b, at);
	at = rec_begin(&b, PD_COMM, PD_MISC_COMM_EXEC);
	p32(&b, 10); p32(&b, 10); put(&b, "prog\0\0\0\0", 8); trailer(&b, 10, 10, 100);
	rec_end(&b, at);
	at = rec_begin(&b, PD_FORK, 0);
	p32(&b, 12); p32(&b, 10); p32(&b, 12); p32(&b, 10); p64(&b, 200); trailer(&b, 12, 12, 200);
	rec_end(&b, at);
	at = rec_begin(&b, 999, 0);        /* unknown record type: passed through */
	p64(&b, 1);
	rec_end(&b, at);
	at = rec_begin(&b, PD_EXIT, 0);
	p32(&b, 12); p32(&b, 10); p32(&b, 12); p32(&b, 10); p64(&b, 300); trailer(&b, 12, 12, 300);
	rec_end(&b, at);
	at = rec_begin(&b, PD_LOST, 0);
	p64(&b, 1); p64(&b, 42); trailer(&b, 0, 0, 310);
	rec_end(&b, at);
	at = rec_begin(&b, PD_LOST_SAMPLES, 0);
	p64(&b, 43); trailer(&b, 0, 0, 320);
	rec_end(&b, at);
	at = rec_begin(&b, PD_THROTTLE, 0);
	p64(&b, 330); p64(&b, 1); p64(&b, 2); trailer(&b, 0, 0, 330);
	rec_end(&b, at);
	file_end(&b, d0);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	static evs v;
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, true, keep_cb, &v, &e), 0);
	assert_int_equal(v.n, 9);
	assert_int_equal(v.ev[0].type, PD_MMAP);
	assert_int_equal(v.ev[0].u.mmap.start, 0x1000);
	assert_string_equal(v.strs[0], "/bin/x");
	assert_int_equal(v.ev[1].type, PD_MMAP2);
	assert_true(v.ev[1].u.mmap.has_build_id);
	assert_int_equal(v.ev[1].u.mmap.build_id_size, 20);
	assert_int_equal(v.ev[1].u.mmap.build_id[19], 19);
	assert_int_equal(v.ev[1].u.mmap.pgoff, 0x3000);
	assert_int_equal(v.ev[1].u.mmap.prot, 5);
	assert_int_equal(v.ev[1].u.mmap.tid, 11);
	assert_string_equal(v.strs[1], "/lib/y.so");
	/* user-type (>= 64) records are delivered at once, before the queued ones */
	assert_int_equal(v.ev[2].type, 999);
	assert_int_equal(v.ev[3].type, PD_COMM);
	assert_true(v.ev[3].u.comm.exec);
	assert_string_equal(v.strs[3], "prog");
	assert_int_equal(v.ev[3].sid.time, 100);
	assert_int_equal(v.ev[4].type, PD_FORK);
	assert_int_equal(v.ev[4].u.fork.pid, 12);
	assert_int_equal(v.ev[4].u.fork.ppid, 10);
	assert_int_equal(v.ev[5].type, PD_EXIT);
	assert_int_equal(v.ev[5].u.fork.time, 300);
	assert_int_equal(v.ev[6].u.lost.lost, 42);
	assert_int_equal(v.ev[7].u.lost_samples.lost, 43);
	assert_int_equal(v.ev[8].u.throttle.time, 330);
	assert_true(v.ev[8].sid.has_tid);
	pd_close(r);
}

/* perf's rounds: at FINISHED_ROUND flush up to the previous round's max time */
static void test_ordered_rounds(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_TIME, .flags = 1ull << 18 };
	uint64_t ids[1] = { 1 };
	size_t d0 = file_begin(&b, &c, ids, 1);
	const uint64_t times[] = { 5, 3, 9, 0 /* round */, 7, 4, 12, 0, 11, 10 };
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++) {
		if (!times[i]) {
			size_t at = rec_begin(&b, PD_FINISHED_ROUND, 0);
			rec_end(&b, at);
			continue;
		}
		size_t at = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x1000 + i);
		p64(&b, times[i]);
		rec_end(&b, at);
	}
	file_end(&b, d0);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	static evs v;
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, true, keep_cb, &v, &e), 0);
	/* round 1: nothing flushed (limit 0); round 2: <= 9; end: rest */
	const uint64_t want[] = { 0, 3, 4, 5, 7, 9, 0, 10, 11, 12 };   /* 0 = FINISHED_ROUND */
	assert_int_equal(v.n, 10);
	for (size_t i = 0; i < 10; i++) {
		if (!want[i])
			assert_int_equal(v.ev[i].type, PD_FINISHED_ROUND);
		else
			assert_int_equal(v.ev[i].u.sample.time, want[i]);
	}
	/* unordered: file order */
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, false, keep_cb, &v, &e), 0);
	assert_int_equal(v.ev[0].u.sample.time, 5);
	assert_int_equal(v.ev[1].u.sample.time, 3);
	pd_close(r);
}

/* The ordered queue against a model of perf's rounds: rounds of a few
 * ascending per-cpu runs (long and short, overlapping, equal times) and
 * random records; each FINISHED_ROUND delivers, stably by time, what is
 * queued up to the previous round's highest time, the end the rest. */
typedef struct ord_seen { uint64_t ip[2600]; size_t n; } ord_seen;

static int ord_cb(void *ctx, const pd_event *ev)
{
	ord_seen *o = ctx;
	if (ev->type == PD_SAMPLE && o->n < 2600)
		o->ip[o->n++] = ev->u.sample.ip;
	return 0;
}

typedef struct ord_ent { uint64_t t, ip; } ord_ent;

static void ord_flush(ord_ent *q, size_t *nq, uint64_t limit, bool all, uint64_t *out, size_t *nout)
{
	/* stable: repeatedly take the first entry of the smallest time */
	for (;;) {
		size_t best = *nq;
		for (size_t i = 0; i < *nq; i++)
			if ((all || q[i].t <= limit) && (best == *nq || q[i].t < q[best].t))
				best = i;
		if (best == *nq)
			return;
		out[(*nout)++] = q[best].ip;
		memmove(q + best, q + best + 1, (*nq - best - 1) * sizeof(*q));
		(*nq)--;
	}
}

static void test_ordered_random(void **s)
{
	(void)s;
	static buf b;
	static ord_ent q[2600];
	static uint64_t want[2600];
	static ord_seen got;
	uint64_t seed = 12345;
	for (int trial = 0; trial < 6; trial++) {
		craft c = { .sample_type = PD_S_IP | PD_S_TIME, .flags = 1ull << 18 };
		uint64_t ids[1] = { 1 };
		size_t d0 = file_begin(&b, &c, ids, 1);
		size_t nq = 0, nwant = 0;
		uint64_t ip = 0, base = 1000, max_time = 0, next_flush = 0;
		for (int round = 0; round < 8; round++) {
			int runs = 1 + (int)((seed = seed * 6364136223846793005ull + 1442695040888963407ull) >> 60) % 5;
			for (int k = 0; k < runs; k++) {
				seed = seed * 6364136223846793005ull + 1442695040888963407ull;
				int len = trial % 2 ? (int)(seed >> 58) + 1 : (int)(seed >> 55) + 1;  /* short or long runs */
				uint64_t t = base + (seed >> 40) % 300;
				for (int i = 0; i < len && ip < 2000; i++) {
					seed = seed * 6364136223846793005ull + 1442695040888963407ull;
					bool noise = trial >= 4 && (seed >> 61) == 0;
					uint64_t rt = noise ? base + (seed >> 33) % 400 : t;
					t += (seed >> 62);              /* steps of 0..3: equal times too */
					size_t at = rec_begin(&b, PD_SAMPLE, 2);
					p64(&b, ++ip);
					p64(&b, rt);
					rec_end(&b, at);
					q[nq++] = (ord_ent){ rt, ip };
					if (rt > max_time)
						max_time = rt;
				}
			}
			size_t at = rec_begin(&b, PD_FINISHED_ROUND, 0);
			rec_end(&b, at);
			ord_flush(q, &nq, next_flush, false, want, &nwant);
			next_flush = max_time;
			base += 250;
		}
		ord_flush(q, &nq, 0, true, want, &nwant);
		file_end(&b, d0);
		assert_true(nwant > 100);
		pd_reader *r;
		proff_error e;
		assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
		got.n = 0;
		assert_int_equal(pd_process(r, true, ord_cb, &got, &e), 0);
		assert_int_equal(got.n, nwant);
		for (size_t i = 0; i < nwant; i++)
			assert_int_equal(got.ip[i], want[i]);
		pd_close(r);
	}
}

/* Runs of samples of perf record's default layouts (IP|TID|TIME|PERIOD,
 * with CPU, each with and without CALLCHAIN), decoded by the general
 * decoder first and then by the reader's constant-offset path: every field
 * of every sample as written, the absent ones zero. */
static void test_fixed_kinds(void **s)
{
	(void)s;
	static buf b;
	static evs v;
	const uint64_t kinds[4] = {
		PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_PERIOD,
		PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_PERIOD | PD_S_CALLCHAIN,
		PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_CPU | PD_S_PERIOD,
		PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_CPU | PD_S_PERIOD | PD_S_CALLCHAIN,
	};
	for (int k = 0; k < 4; k++) {
		uint64_t st = kinds[k];
		craft c = { .sample_type = st, .flags = 1ull << 18 };
		uint64_t ids[1] = { 1 };
		size_t d0 = file_begin(&b, &c, ids, 1);
		for (uint64_t i = 0; i < 6; i++) {
			size_t at = rec_begin(&b, PD_SAMPLE, i % 2 ? 2 : 1);
			p64(&b, 0x1000 + i);                         /* ip */
			p32(&b, 100 + (uint32_t)i); p32(&b, 200 + (uint32_t)i);   /* pid, tid */
			p64(&b, 10 + i);                             /* time */
			if (st & PD_S_CPU) { p32(&b, 3 + (uint32_t)i); p32(&b, 0); }
			p64(&b, 5000 + i);                           /* period */
			if (st & PD_S_CALLCHAIN) {
				p64(&b, i % 3);
				for (uint64_t j = 0; j < i % 3; j++)
					p64(&b, 0x9000 + 16 * i + j);
			}
			rec_end(&b, at);
		}
		file_end(&b, d0);
		pd_reader *r;
		proff_error e;
		assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
		memset(&v, 0, sizeof(v));
		assert_int_equal(pd_process(r, true, keep_cb, &v, &e), 0);
		assert_int_equal(v.n, 6);
		for (uint64_t i = 0; i < 6; i++) {
			const pd_sample *x = &v.ev[i].u.sample;
			assert_int_equal(v.ev[i].type, PD_SAMPLE);
			assert_int_equal(x->ip, 0x1000 + i);
			assert_int_equal(x->pid, 100 + i);
			assert_int_equal(x->tid, 200 + i);
			assert_int_equal(v.ev[i].sid.tid, 200 + i);
			assert_int_equal(x->time, 10 + i);
			assert_int_equal(v.ev[i].sid.time, 10 + i);
			assert_int_equal(x->cpu, st & PD_S_CPU ? 3 + i : 0);
			assert_int_equal(v.ev[i].sid.cpu, st & PD_S_CPU ? 3 + i : 0);
			assert_int_equal(x->period, 5000 + i);
			assert_int_equal(x->cpumode, i % 2 ? 2 : 1);
			assert_int_equal(x->addr, 0);
			assert_int_equal(x->id, 0);
			assert_int_equal(x->nr_callchain, st & PD_S_CALLCHAIN ? i % 3 : 0);
			for (uint64_t j = 0; j < x->nr_callchain; j++)
				assert_int_equal(x->callchain[j], 0x9000 + 16 * i + j);
			assert_true(v.ev[i].sid.has_tid && v.ev[i].sid.has_time);
		}
		pd_close(r);
	}
}

static int count_cb(void *ctx, const pd_event *ev) { (void)ev; (*(int *)ctx)++; return 0; }

/* pd_sample_time_near: the time of the first sample starting at or after
 * a fraction of the data section, found again from the middle of a record
 * (zero payload bytes, ips and times are no record header). */
static void test_sample_time_near(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_TIME | PD_S_RAW };
	uint64_t ids[1] = { 1 };
	size_t d0 = file_begin(&b, &c, ids, 1);
	enum { N = 150 };
	size_t at[N];
	for (size_t i = 0; i < N; i++) {
		at[i] = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x401000 + i);
		p64(&b, 5000 + 10 * i);
		uint32_t raw = 4 + 8 * (uint32_t)(i % 7);
		p32(&b, raw);
		for (uint32_t k = 0; k < raw; k++)
			p8(&b, 0);
		rec_end(&b, at[i]);
	}
	file_end(&b, d0);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	const double fr[] = { 0.001, 0.25, 0.5, 0.58, 0.77, 0.999 };
	for (size_t k = 0; k < sizeof(fr) / sizeof(fr[0]); k++) {
		size_t want = d0 + ((size_t)((double)(b.n - d0) * fr[k]) & ~(size_t)7);
		size_t i = 0;
		while (i < N && at[i] < want)
			i++;
		uint64_t t = 0;
		if (i == N) {
			assert_false(pd_sample_time_near(r, fr[k], &t));
			continue;
		}
		assert_true(pd_sample_time_near(r, fr[k], &t));
		assert_int_equal(t, 5000 + 10 * i);
	}
	uint64_t t;
	assert_false(pd_sample_time_near(r, 0, &t));
	assert_false(pd_sample_time_near(r, 1, &t));
	pd_close(r);
	/* samples without a time: no guess */
	c.sample_type = PD_S_IP;
	d0 = file_begin(&b, &c, ids, 1);
	for (size_t i = 0; i < N; i++) {
		size_t a = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x401000 + i);
		rec_end(&b, a);
	}
	file_end(&b, d0);
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	assert_false(pd_sample_time_near(r, 0.5, &t));
	pd_close(r);
}

static void test_interrupted_recording(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP };
	uint64_t ids[1] = { 1 };
	file_begin(&b, &c, ids, 1);
	for (int i = 0; i < 3; i++) {
		size_t at = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x1000);
		rec_end(&b, at);
	}
	/* data.size left 0 */
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "crafted", &r, &e), 0);
	assert_true(pd_nr_warnings(r) >= 1);
	assert_non_null(strstr(pd_warning(r, 0), "data size"));
	int n = 0;
	assert_int_equal(pd_process(r, true, count_cb, &n, &e), 0);
	assert_int_equal(n, 3);
	pd_close(r);
}

/* malformed input: one error naming the problem and the byte offset */
static void expect_process_error(buf *b, const char *what, uint64_t off)
{
	pd_reader *r;
	proff_error e;
	int rc = pd_open_mem(b->d, b->n, "bad", &r, &e);
	if (rc == 0) {
		int n = 0;
		rc = pd_process(r, true, count_cb, &n, &e);
		pd_close(r);
	}
	assert_true(rc < 0);
	if (!strstr(e.msg, what))
		fail_msg("error '%s' does not mention '%s'", e.msg, what);
	assert_string_equal(e.file, "bad");
	assert_int_equal(e.offset, off);
}

static void test_bad_records(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_CALLCHAIN };
	uint64_t ids[1] = { 1 };
	/* record size 0 */
	size_t d0 = file_begin(&b, &c, ids, 1);
	size_t at = rec_begin(&b, PD_SAMPLE, 2);
	p64(&b, 0);
	file_end(&b, d0);
	expect_process_error(&b, "size 0", at);
	/* callchain nr huge */
	d0 = file_begin(&b, &c, ids, 1);
	at = rec_begin(&b, PD_SAMPLE, 2);
	p64(&b, 0x1000);
	p64(&b, 1ull << 60);
	rec_end(&b, at);
	file_end(&b, d0);
	expect_process_error(&b, "callchain nr", at + 16);
	/* record past the end of the data */
	d0 = file_begin(&b, &c, ids, 1);
	at = rec_begin(&b, PD_SAMPLE, 2);
	p64(&b, 0x1000);
	p64(&b, 0);
	rec_end(&b, at);
	file_end(&b, d0);
	b.d[at + 6] = 0xf0;    /* size 0xf0 > data */
	expect_process_error(&b, "past the end", at);
	/* bad magic */
	d0 = file_begin(&b, &c, ids, 1);
	file_end(&b, d0);
	memcpy(b.d, "NOTPERF!", 8);
	expect_process_error(&b, "bad magic", 0);
	/* attr_size 0 */
	d0 = file_begin(&b, &c, ids, 1);
	file_end(&b, d0);
	memset(b.d + 16, 0, 8);
	expect_process_error(&b, "attr_size", 16);
	/* data section past the end of the file */
	d0 = file_begin(&b, &c, ids, 1);
	file_end(&b, d0);
	b.d[48 + 5] = 1;
	expect_process_error(&b, "data section", 48);
	/* truncated header */
	d0 = file_begin(&b, &c, ids, 1);
	file_end(&b, d0);
	b.n = 50;
	expect_process_error(&b, "truncated", 50);
	/* empty */
	b.n = 0;
	expect_process_error(&b, "empty", 0);
}

/* PERF_SAMPLE_READ without GROUP and with GROUP over two events: the
 * counter deltas per id become the periods, the value's id picks the event */
static void test_sample_read_split(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_ID | PD_S_READ, .read_format = 4 | 8 /* ID|GROUP */ };
	uint64_t ids[1] = { 11 };
	size_t d0 = file_begin(&b, &c, ids, 1);
	/* second event: patch in a second attr entry is complex; instead map id 12
	 * to the same file through a pipe-style HEADER_ATTR in the data */
	size_t at = rec_begin(&b, PD_HEADER_ATTR, 0);
	uint8_t attr[128] = { 0 };
	uint32_t t = 1, sz = 128;
	uint64_t cfg = 1;
	memcpy(attr, &t, 4); memcpy(attr + 4, &sz, 4); memcpy(attr + 8, &cfg, 8);
	memcpy(attr + 24, &c.sample_type, 8); memcpy(attr + 32, &c.read_format, 8);
	put(&b, attr, 128);
	p64(&b, 12);
	rec_end(&b, at);
	const uint64_t vals[3][2] = { { 100, 1000 }, { 250, 1600 }, { 300, 1700 } };
	for (int i = 0; i < 3; i++) {
		at = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x1000 + (uint64_t)i);
		p64(&b, 11);
		p64(&b, 2);
		p64(&b, vals[i][0]); p64(&b, 11);
		p64(&b, vals[i][1]); p64(&b, 12);
		rec_end(&b, at);
	}
	file_end(&b, d0);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_mem(b.d, b.n, "read", &r, &e), 0);
	static evs v;
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, false, keep_cb, &v, &e), 0);
	/* HEADER_ATTR + 3 samples x 2 values */
	assert_int_equal(v.n, 7);
	const uint64_t want_period[6] = { 100, 1000, 150, 600, 50, 100 };
	for (int i = 0; i < 6; i++) {
		const pd_sample *x = &v.ev[1 + i].u.sample;
		assert_int_equal(x->period, want_period[i]);
		assert_int_equal(x->evsel, i % 2);
		assert_int_equal(x->id, 11 + (uint64_t)(i % 2));
		assert_int_equal(x->ip, 0x1000 + (uint64_t)(i / 2));
	}
	assert_string_equal(pd_get_attr(r, 1)->name, "task-clock");
	/* a second pass starts the deltas again */
	memset(&v, 0, sizeof(v));
	assert_int_equal(pd_process(r, false, keep_cb, &v, &e), 0);
	assert_int_equal(v.ev[1].u.sample.period, 100);
	pd_close(r);
}

/* The sample peek (pd_set_sample_peek) sees the samples of any layout
 * with a time and a TID (here with a stack copy after them), except those
 * with PERF_SAMPLE_READ: a counter value is the base of the next one's
 * period, so such a sample is never dropped (a split's second half would
 * otherwise take its first sample's period from the wrong base). */
static bool peek_drop_early(void *ctx, uint64_t time, uint32_t pid, uint32_t tid)
{
	int *calls = ctx;
	(*calls)++;
	return time < 25 && pid == 7 && tid == 8;
}

static void test_sample_peek(void **s)
{
	(void)s;
	static buf b;
	for (int read = 0; read < 2; read++) {
		craft c = { .sample_type = PD_S_IP | PD_S_TID | PD_S_TIME | (read ? PD_S_READ : PD_S_STACK_USER),
			    .read_format = read ? 4 /* ID */ : 0, .stack_user = 16 };
		uint64_t ids[1] = { 1 };
		size_t d0 = file_begin(&b, &c, ids, 1);
		const uint64_t counter[4] = { 100, 250, 300, 420 };
		for (int i = 0; i < 4; i++) {
			size_t at = rec_begin(&b, PD_SAMPLE, 2);
			p64(&b, 0x1000 + (uint64_t)i);
			p32(&b, 7);
			p32(&b, 8);
			p64(&b, 10 + 10 * (uint64_t)i);
			if (read) {
				p64(&b, counter[i]);
				p64(&b, 1);
			} else {
				p64(&b, 16);
				p64(&b, 0x1111);
				p64(&b, 0x2222);
				p64(&b, 16);
			}
			rec_end(&b, at);
		}
		file_end(&b, d0);
		pd_reader *r;
		proff_error e;
		assert_int_equal(pd_open_mem(b.d, b.n, "peek", &r, &e), 0);
		int calls = 0;
		pd_set_sample_peek(r, peek_drop_early, &calls);
		static evs v;
		memset(&v, 0, sizeof(v));
		assert_int_equal(pd_process(r, true, keep_cb, &v, &e), 0);
		if (read) {
			assert_int_equal(calls, 0);
			assert_int_equal(v.n, 4);
			const uint64_t want_period[4] = { 100, 150, 50, 120 };
			for (int i = 0; i < 4; i++)
				assert_int_equal(v.ev[i].u.sample.period, want_period[i]);
		} else {
			assert_int_equal(calls, 4);
			assert_int_equal(v.n, 2);       /* times 10 and 20 dropped */
			assert_int_equal(v.ev[0].u.sample.time, 30);
			assert_int_equal(v.ev[0].u.sample.stack_user_dyn_size, 16);
		}
		pd_close(r);
	}
}

/* attr versions: attr.size 64 (VER0), 136 (VER8) and a future 160; the
 * header's attr_size is attr.size + 16 and the ids section follows attr.size */
static void test_attr_sizes(void **s)
{
	(void)s;
	static const uint32_t sizes[] = { 64, 72, 96, 120, 128, 136, 160 };
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		static buf b;
		uint32_t asz = sizes[k];
		memset(&b, 0, sizeof(b));
		put(&b, "PERFILE2", 8);
		p64(&b, 104);
		p64(&b, asz + 16);
		b.n = 104;
		size_t ids_off = b.n;
		p64(&b, 4242);
		size_t attr_off = b.n;
		uint8_t attr[256] = { 0 };
		uint32_t t = 1;
		uint64_t cfg = 1, st = PD_S_IP | PD_S_ID, period = 777, flags = (1ull << 5) | (1ull << 18);
		memcpy(attr, &t, 4); memcpy(attr + 4, &asz, 4); memcpy(attr + 8, &cfg, 8);
		memcpy(attr + 16, &period, 8); memcpy(attr + 24, &st, 8); memcpy(attr + 40, &flags, 8);
		if (asz >= 104) {
			uint64_t ri = 0x5;
			memcpy(attr + 96, &ri, 8);
		}
		put(&b, attr, asz);
		p64(&b, ids_off);
		p64(&b, 8);
		uint64_t v = attr_off;
		pset(&b, 24, &v, 8);
		v = asz + 16;
		pset(&b, 32, &v, 8);
		size_t d0 = b.n;
		v = d0;
		pset(&b, 40, &v, 8);
		size_t at = rec_begin(&b, PD_SAMPLE, 2);
		p64(&b, 0x1234);
		p64(&b, 4242);
		rec_end(&b, at);
		file_end(&b, d0);
		pd_reader *r;
		proff_error e;
		if (pd_open_mem(b.d, b.n, "attr", &r, &e) < 0)
			fail_msg("attr.size %u: %s", asz, e.msg);
		const pd_attr *a = pd_get_attr(r, 0);
		assert_int_equal(a->size, asz);
		assert_int_equal(a->sample_period, 777);
		assert_true(a->exclude_kernel);
		assert_true(a->sample_id_all);
		assert_string_equal(a->name, "task-clock:u");
		assert_int_equal(a->nr_ids, 1);
		assert_int_equal(a->ids[0], 4242);
		assert_int_equal(a->sample_regs_intr, asz >= 104 ? 5 : 0);
		static evs ev;
		memset(&ev, 0, sizeof(ev));
		assert_int_equal(pd_process(r, true, keep_cb, &ev, &e), 0);
		assert_int_equal(ev.n, 1);
		assert_int_equal(ev.ev[0].u.sample.ip, 0x1234);
		assert_int_equal(ev.ev[0].u.sample.id, 4242);
		assert_int_equal(ev.ev[0].u.sample.period, 777);
		pd_close(r);
	}
}

/* pipe stream larger than the reader's buffer, written in odd pieces: records
 * straddle reads, the ordered queue keeps stream chunks alive */
struct writer { int fd; uint8_t *p; size_t n; };
static void *writer_main(void *arg)
{
	struct writer *w = arg;
	size_t off = 0, step = 1;
	while (off < w->n) {
		size_t k = step < w->n - off ? step : w->n - off;
		ssize_t got = write(w->fd, w->p + off, k);
		if (got <= 0)
			break;
		off += (size_t)got;
		step = step * 7 % 100003 + 1;
	}
	close(w->fd);
	return NULL;
}

typedef struct order { uint64_t n, last, bad, rounds; } order;
static int order_cb(void *ctx, const pd_event *ev)
{
	order *o = ctx;
	if (ev->type == PD_FINISHED_ROUND)
		o->rounds++;
	if (ev->type != PD_SAMPLE)
		return 0;
	if (ev->u.sample.time < o->last)
		o->bad++;
	o->last = ev->u.sample.time;
	o->n++;
	return 0;
}

static void test_pipe_stream(void **s)
{
	(void)s;
	const size_t nsamp = 60000, per_round = 1000;
	size_t cap = 16 + 200 + nsamp * 40 + (nsamp / per_round) * 8 + 64;
	uint8_t *img = calloc(1, cap);
	buf *b = malloc(sizeof(buf));
	size_t n = 0;
	memcpy(img, "PERFILE2", 8);
	uint64_t hs = 16;
	memcpy(img + 8, &hs, 8);
	n = 16;
	/* HEADER_ATTR: attr (128) + one id */
	memset(b, 0, sizeof(*b));
	size_t at = rec_begin(b, PD_HEADER_ATTR, 0);
	uint8_t attr[128] = { 0 };
	uint32_t t1 = 1, sz = 128;
	uint64_t st = PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_PERIOD, fl = 1ull << 18;
	memcpy(attr, &t1, 4); memcpy(attr + 4, &sz, 4); memcpy(attr + 24, &st, 8); memcpy(attr + 40, &fl, 8);
	put(b, attr, 128);
	p64(b, 5);
	rec_end(b, at);
	memcpy(img + n, b->d, b->n);
	n += b->n;
	uint64_t x = 12345;
	for (size_t i = 0; i < nsamp; i++) {
		b->n = 0;
		at = rec_begin(b, PD_SAMPLE, 2);
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		p64(b, 0x1000 + i);
		p32(b, 1); p32(b, 1);
		p64(b, 1000000 + (i / per_round) * 10000 + (x >> 33) % 5000);   /* shuffled inside a round */
		p64(b, 1);
		rec_end(b, at);
		memcpy(img + n, b->d, b->n);
		n += b->n;
		if (i % per_round == per_round - 1) {
			b->n = 0;
			at = rec_begin(b, PD_FINISHED_ROUND, 0);
			rec_end(b, at);
			memcpy(img + n, b->d, b->n);
			n += b->n;
		}
	}
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	struct writer w = { fds[1], img, n };
	pthread_t th;
	pthread_create(&th, NULL, writer_main, &w);
	pd_reader *r;
	proff_error e;
	assert_int_equal(pd_open_fd(fds[0], "pipe", &r, &e), 0);
	assert_true(pd_get_header(r)->pipe_mode);
	order o = { 0 };
	int rc = pd_process(r, true, order_cb, &o, &e);
	if (rc)
		fail_msg("%s", e.msg);
	assert_int_equal(o.n, nsamp);
	assert_int_equal(o.bad, 0);
	assert_int_equal(o.rounds, nsamp / per_round);
	/* a pipe cannot be read twice */
	assert_true(pd_process(r, true, order_cb, &o, &e) < 0);
	pd_close(r);
	pthread_join(th, NULL);
	close(fds[0]);
	/* the same bytes from memory: same result, unordered sees the shuffle */
	assert_int_equal(pd_open_mem(img, n, "mem", &r, &e), 0);
	memset(&o, 0, sizeof(o));
	assert_int_equal(pd_process(r, true, order_cb, &o, &e), 0);
	assert_int_equal(o.n, nsamp);
	assert_int_equal(o.bad, 0);
	memset(&o, 0, sizeof(o));
	assert_int_equal(pd_process(r, false, order_cb, &o, &e), 0);
	assert_true(o.bad > 0);
	pd_close(r);
	free(b);
	free(img);
}

/* A callchain with an unknown context value (-1, as a broken user stack
 * gives) is discarded whole, as perf discards it: the sample counts for its
 * own row only, and adds no callchain rows (loaded as a profile, rows built
 * in Children mode). The same stack without the bad value adds its rows. */
static void test_corrupt_callchain_discarded(void **s)
{
	(void)s;
	static buf b;
	craft c = { .sample_type = PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_CALLCHAIN, .flags = 1ull << 18 };
	uint64_t ids[1] = { 1 };
	size_t d0 = file_begin(&b, &c, ids, 1);
	size_t at = rec_begin(&b, PD_MMAP, PD_CPUMODE_USER);
	p32(&b, 10); p32(&b, 10); p64(&b, 0x1000); p64(&b, 0x1000); p64(&b, 0); put(&b, "/nonexistent/x\0\0", 16);
	trailer(&b, 10, 10, 1);
	rec_end(&b, at);
	const uint64_t good[] = { PD_CONTEXT_USER, 0x1100, 0x1200 };
	const uint64_t bad[] = { PD_CONTEXT_USER, 0x1100, 0x1300, UINT64_MAX };
	for (int k = 0; k < 2; k++) {
		const uint64_t *cc = k ? good : bad;
		uint64_t nr = k ? 3 : 4;
		at = rec_begin(&b, PD_SAMPLE, PD_CPUMODE_USER);
		p64(&b, 0x1100); p32(&b, 10); p32(&b, 10); p64(&b, 10 + (uint64_t)k);
		p64(&b, nr);
		for (uint64_t i = 0; i < nr; i++)
			p64(&b, cc[i]);
		rec_end(&b, at);
	}
	file_end(&b, d0);
	char path[] = "/tmp/proff-test-cc.XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, b.d, b.n), (ssize_t)b.n);
	close(fd);
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.buildid_dir = o.kallsyms = "/nonexistent";
	pf_profile *p;
	proff_error e;
	assert_int_equal(pf_profile_load(path, &o, &p, &e), 0);
	unlink(path);
	assert_int_equal(p->nr_samples, 2);
	assert_true(pf_node_nochain(p, p->samples[0].stack));
	assert_false(pf_node_nochain(p, p->samples[1].stack));
	hist_opts ho;
	hist_opts_init(&ho);
	ho.children = ho.callchain = ho.caller_order = true;
	hist *h;
	assert_int_equal(hist_build(p, 0, &ho, &h, &e), 0);
	uint64_t self_0x100 = 0, chain_0x1100 = 0, chain_0x1200 = 0, chain_0x1300 = 0;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *x = &h->entries[i];
		if (x->period)
			self_0x100 += x->period;     /* the one Self row */
		else if (x->ip == 0x1100)
			chain_0x1100 += x->period_acc;
		else if (x->ip == 0x1200)
			chain_0x1200 += x->period_acc;
		else if (x->ip == 0x1300)
			chain_0x1300 += x->period_acc;
	}
	assert_int_equal(self_0x100, 2000);
	assert_int_equal(chain_0x1100, 1000);    /* the good sample only */
	assert_int_equal(chain_0x1200, 1000);
	assert_int_equal(chain_0x1300, 0);       /* the bad sample's frames: none */
	hist_free(h);
	pf_profile_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_real_file),
		cmocka_unit_test(test_real_compressed),
		cmocka_unit_test(test_real_pipe),
		cmocka_unit_test(test_real_two_events),
		cmocka_unit_test(test_real_big_endian),
		cmocka_unit_test(test_stable_samples),
		cmocka_unit_test(test_header_text),
		cmocka_unit_test(test_header_fields),
		cmocka_unit_test(test_big_endian_identical),
		cmocka_unit_test(test_sample_all_fields),
		cmocka_unit_test(test_sample_pointers),
		cmocka_unit_test(test_side_band_records),
		cmocka_unit_test(test_corrupt_callchain_discarded),
		cmocka_unit_test(test_ordered_rounds),
		cmocka_unit_test(test_ordered_random),
		cmocka_unit_test(test_fixed_kinds),
		cmocka_unit_test(test_interrupted_recording),
		cmocka_unit_test(test_sample_time_near),
		cmocka_unit_test(test_sample_peek),
		cmocka_unit_test(test_bad_records),
		cmocka_unit_test(test_pipe_stream),
		cmocka_unit_test(test_attr_sizes),
		cmocka_unit_test(test_sample_read_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
