/* test_record.c — unit tests of the perf.data writer and the recorder's
 * helpers, all on inputs known by construction:
 *  - event names -> (type, config, modifiers);
 *  - writer round trip: attrs, records, FINISHED_ROUND, features, read back
 *    by proff's own reader (plain and zstd-compressed);
 *  - a write error (file size limit) leaves a file whose header describes
 *    exactly the whole records that were written;
 *  - GNU build-id from a hand-made ELF image, and the build-id cache layout;
 *  - the loaded kernel modules as perf record names them, from a made-up
 *    root (proc/modules, proc/version, lib/modules/RELEASE, sys/module).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <elf.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proff/perfdata-writer.h"
#include "proff/perfdata.h"
#include "proff/record.h"
#include "../../lib/record/rec-int.h"

static char tmpdir[256];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "%s/proff-test-record.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static void test_events(void **state)
{
	(void)state;
	rec_event ev;
	proff_error err;
	assert_int_equal(rec_parse_event("cpu-clock", &ev, &err), 0);
	assert_int_equal(ev.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_false(ev.hardware);
	assert_int_equal(rec_parse_event("cycles:u", &ev, &err), 0);
	assert_int_equal(ev.type, PERF_TYPE_HARDWARE);
	assert_int_equal(ev.config, PERF_COUNT_HW_CPU_CYCLES);
	assert_true(ev.exclude_kernel);
	assert_false(ev.exclude_user);
	assert_true(ev.hardware);
	assert_string_equal(ev.name, "cycles:u");
	assert_int_equal(rec_parse_event("r1c2", &ev, &err), 0);
	assert_int_equal(ev.type, PERF_TYPE_RAW);
	assert_int_equal(ev.config, 0x1c2);
	assert_int_equal(rec_parse_event("task-clock:k", &ev, &err), 0);
	assert_true(ev.exclude_user);
	assert_int_equal(rec_parse_event("no-such-event", &ev, &err), PROFF_EUSAGE);
	assert_non_null(strstr(err.msg, "unknown event 'no-such-event'"));
	assert_int_equal(rec_parse_event("cpu-clock:x", &ev, &err), PROFF_EUSAGE);
	/* the list of names (a table made at compile time): each one parses */
	const char *const *names = rec_event_names();
	size_t n = 0;
	for (; names[n]; n++)
		assert_int_equal(rec_parse_event(names[n], &ev, &err), 0);
	assert_true(n >= 20);
}

static void test_encode_string(void **state)
{
	(void)state;
	uint8_t buf[80];
	assert_int_equal(pdw_encode_string(NULL, "abc"), 68);
	assert_int_equal(pdw_encode_string(buf, "abc"), 68);
	uint32_t len;
	memcpy(&len, buf, 4);
	assert_int_equal(len, 64);
	assert_string_equal((char *)buf + 4, "abc");
	assert_int_equal(buf[4 + 63], 0);
	char s64[65];
	memset(s64, 'x', 64);
	s64[64] = 0;
	assert_int_equal(pdw_encode_string(NULL, s64), 4 + 128);
}

/* a SAMPLE record with sample_type IP|TID|TIME|PERIOD */
static size_t make_sample(uint8_t *b, uint64_t ip, uint32_t pid, uint64_t time)
{
	memset(b, 0, 40);
	uint32_t type = PERF_RECORD_SAMPLE;
	uint16_t misc = PERF_RECORD_MISC_USER, size = 40;
	uint64_t period = 250000;
	memcpy(b, &type, 4);
	memcpy(b + 4, &misc, 2);
	memcpy(b + 6, &size, 2);
	memcpy(b + 8, &ip, 8);
	memcpy(b + 16, &pid, 4);
	memcpy(b + 20, &pid, 4);
	memcpy(b + 24, &time, 8);
	memcpy(b + 32, &period, 8);
	return 40;
}

struct counts { uint64_t samples, ip_sum; };

static int count_cb(void *ctx, const pd_event *ev)
{
	struct counts *c = ctx;
	if (ev->type == PD_SAMPLE) {
		c->samples++;
		c->ip_sum += ev->u.sample.ip;
	}
	return 0;
}

static void write_file(const char *path, int level, int nrec)
{
	pdw_writer *w;
	proff_error err;
	pdw_opts o = { .compress_level = level, .comp_mmap_len = 0 };
	assert_int_equal(pdw_create(path, &o, &w, &err), 0);
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	a.sample_freq = 4000;
	a.freq = 1;
	a.sample_id_all = 1;
	uint64_t ids[2] = { 11, 12 };
	assert_int_equal(pdw_add_attr(w, &a, "cpu-clock", ids, 2, &err), 0);
	assert_int_equal(pdw_start_data(w, &err), 0);
	uint8_t rec[40];
	for (int i = 0; i < nrec; i++) {
		make_sample(rec, 0x1000 + (uint64_t)i, 42, 1000 + (uint64_t)i);
		assert_int_equal(pdw_write(w, rec, sizeof(rec), &err), 0);
		if (i % 1000 == 999)
			assert_int_equal(pdw_finished_round(w, &err), 0);
	}
	assert_int_equal(pdw_finished_round(w, &err), 0);
	assert_int_equal(pdw_set_feature_string(w, PD_FEAT_HOSTNAME, "testhost", &err), 0);
	char *cl[] = { "proff", "record", "./x" };
	assert_int_equal(pdw_set_feature_strings(w, PD_FEAT_CMDLINE, cl, 3, &err), 0);
	uint8_t bid[20];
	for (int i = 0; i < 20; i++)
		bid[i] = (uint8_t)i;
	assert_int_equal(pdw_add_build_id(w, -1, PERF_RECORD_MISC_USER, bid, 20, "/bin/x", &err), 0);
	pdw_stats st;
	assert_int_equal(pdw_close(w, &st, &err), 0);
	assert_int_equal(st.raw_size, (uint64_t)nrec * 40);     /* records handed in */
	if (level)
		assert_true(st.data_size < st.raw_size / 4);     /* repetitive samples compress */
}

static void check_file(const char *path, int nrec)
{
	pd_reader *r;
	proff_error err;
	assert_int_equal(pd_open(path, &r, &err), 0);
	assert_int_equal(pd_nr_attrs(r), 1);
	const pd_attr *a = pd_get_attr(r, 0);
	assert_int_equal(a->nr_ids, 2);
	assert_int_equal(a->ids[1], 12);
	assert_string_equal(a->name, "cpu-clock");
	const pd_header *h = pd_get_header(r);
	assert_string_equal(h->hostname, "testhost");
	assert_int_equal(h->nr_cmdline, 3);
	assert_string_equal(h->cmdline[2], "./x");
	assert_int_equal(h->nr_build_ids, 1);
	assert_string_equal(h->build_ids[0].filename, "/bin/x");
	assert_int_equal(h->build_ids[0].size, 20);
	assert_int_equal(h->build_ids[0].id[19], 19);
	struct counts c = { 0, 0 };
	assert_int_equal(pd_process(r, true, count_cb, &c, &err), 0);
	assert_int_equal(c.samples, (uint64_t)nrec);
	uint64_t want = 0;
	for (int i = 0; i < nrec; i++)
		want += 0x1000 + (uint64_t)i;
	assert_int_equal(c.ip_sum, want);
	pd_close(r);
}

static void test_roundtrip(void **state)
{
	(void)state;
	char path[400];
	snprintf(path, sizeof(path), "%s/plain.data", tmpdir);
	write_file(path, 0, 2500);
	check_file(path, 2500);
}

static void test_roundtrip_zstd(void **state)
{
	(void)state;
	char path[400];
	snprintf(path, sizeof(path), "%s/z.data", tmpdir);
	write_file(path, 1, 30000);     /* > one staging buffer of records */
	check_file(path, 30000);
	pd_reader *r;
	proff_error err;
	assert_int_equal(pd_open(path, &r, &err), 0);
	assert_true(pd_has_feature(r, PD_FEAT_COMPRESSED));
	assert_int_equal(pd_get_header(r)->compressed.type, 1);
	pd_close(r);
}

static uint64_t rd64(int fd, off_t off)
{
	uint64_t v = 0;
	assert_int_equal(pread(fd, &v, 8, off), 8);
	return v;
}

static void test_write_error(void **state)
{
	(void)state;
	char path[400];
	snprintf(path, sizeof(path), "%s/full.data", tmpdir);
	struct rlimit old, lim;
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 100000 + 7;   /* not on a record boundary */
	void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
	assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
	pdw_writer *w;
	proff_error err;
	assert_int_equal(pdw_create(path, NULL, &w, &err), 0);
	uint8_t attr[PDW_ATTR_SIZE] = { 0 };
	uint64_t id = 1;
	assert_int_equal(pdw_add_attr(w, attr, "cpu-clock", &id, 1, &err), 0);
	assert_int_equal(pdw_start_data(w, &err), 0);
	uint8_t rec[40];
	int rc = 0;
	for (int i = 0; i < 100000 && !rc; i++) {
		make_sample(rec, (uint64_t)i, 1, (uint64_t)i);
		rc = pdw_write(w, rec, sizeof(rec), &err);
	}
	assert_int_not_equal(rc, 0);
	pdw_stats st;
	assert_int_not_equal(pdw_close(w, &st, &err), 0);
	setrlimit(RLIMIT_FSIZE, &old);
	signal(SIGXFSZ, prev);
	assert_int_not_equal(st.write_errno, 0);
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	struct stat sb;
	fstat(fd, &sb);
	uint64_t doff = rd64(fd, 40), dsz = rd64(fd, 48);
	close(fd);
	assert_int_equal(doff + dsz, (uint64_t)sb.st_size);
	assert_int_equal(dsz % 40, 0);
	assert_true(dsz > 90000);
	pd_reader *r;
	assert_int_equal(pd_open(path, &r, &err), 0);
	struct counts c = { 0, 0 };
	assert_int_equal(pd_process(r, false, count_cb, &c, &err), 0);
	assert_int_equal(c.samples, dsz / 40);
	pd_close(r);
}

/* A minimal ELF64 image: header, one PT_NOTE program header, the note. */
static size_t make_elf(uint8_t *b, const uint8_t id[20])
{
	memset(b, 0, 256);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)b;
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_phoff = sizeof(Elf64_Ehdr);
	eh->e_phentsize = sizeof(Elf64_Phdr);
	eh->e_phnum = 1;
	Elf64_Phdr *ph = (Elf64_Phdr *)(b + sizeof(Elf64_Ehdr));
	size_t noff = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
	ph->p_type = PT_NOTE;
	ph->p_offset = noff;
	ph->p_filesz = 12 + 4 + 20;
	uint32_t nh[3] = { 4, 20, NT_GNU_BUILD_ID };
	memcpy(b + noff, nh, 12);
	memcpy(b + noff + 12, "GNU", 4);
	memcpy(b + noff + 16, id, 20);
	return noff + 36;
}

static void test_build_id(void **state)
{
	(void)state;
	uint8_t img[256], id[20], got[20];
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(0xa0 + i);
	size_t n = make_elf(img, id);
	assert_int_equal(rec_build_id_mem(img, n, got), 20);
	assert_memory_equal(got, id, 20);
	assert_true(rec_build_id_mem(img, 40, got) < 0);       /* truncated */
	img[0] = 0;
	assert_true(rec_build_id_mem(img, n, got) < 0);        /* not ELF */
	make_elf(img, id);

	char bin[400], cache[400], path[900], link[900];
	snprintf(bin, sizeof(bin), "%s/bin", tmpdir);
	snprintf(cache, sizeof(cache), "%s/cache", tmpdir);
	FILE *f = fopen(bin, "wb");
	assert_non_null(f);
	fwrite(img, 1, n, f);
	fclose(f);
	proff_error err;
	assert_int_equal(rec_read_build_id(bin, got, &err), 20);
	assert_memory_equal(got, id, 20);
	assert_int_equal(rec_cache_add(cache, bin, id, 20, "elf", NULL, 0, bin, &err), 0);
	const char *hex = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3";
	snprintf(path, sizeof(path), "%s%s/%s/elf", cache, bin, hex);
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	assert_int_equal((size_t)sb.st_size, n);
	snprintf(link, sizeof(link), "%s/.build-id/a0/%s", cache, hex + 2);
	char target[900];
	ssize_t l = readlink(link, target, sizeof(target) - 1);
	assert_true(l > 0);
	target[l] = 0;
	snprintf(path, sizeof(path), "../..%s/%s", bin, hex);
	assert_string_equal(target, path);
	/* a second add keeps the entry */
	assert_int_equal(rec_cache_add(cache, bin, id, 20, "elf", NULL, 0, bin, &err), 0);
	/* memory images (vdso) */
	assert_int_equal(rec_cache_add(cache, "[vdso]", id, 20, "vdso", img, n, NULL, &err), 0);
	snprintf(path, sizeof(path), "%s/[vdso]/%s/vdso", cache, hex);
	assert_int_equal(stat(path, &sb), 0);
}


static void put_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* perf record's module maps: each /proc/modules line, named by its file
 * under /lib/modules/RELEASE ("a-b.ko" is module a_b; .ko.xz and .ko.gz
 * count, .ko.zst and the top-level source/build links do not), else
 * "[name]"; the build id from /sys/module/NAME/notes */
static void test_modules(void **state)
{
	(void)state;
	char root[512], cmd[2048], path[1024];
	snprintf(root, sizeof(root), "%s/root", tmpdir);
	snprintf(cmd, sizeof(cmd),
		 "set -e; r='%s'; mkdir -p $r/proc $r/lib/modules/6.1.0-test/kernel/fs/x $r/lib/modules/6.1.0-test/extra "
		 "$r/lib/modules/6.1.0-test/build/kernel $r/sys/module/fat/notes $r/sys/module/zmod/notes; "
		 "printf 'Linux version 6.1.0-test (root@host) (gcc) #1 SMP\\n' > $r/proc/version; "
		 "printf 'fat 86016 1 vfat, Live 0xffffffffc0a00000\\nnls_cp_437 16384 1 - Live 0xffffffffc0b00000\\n"
		 "zmod 4096 0 - Live 0xffffffffc0c00000\\ngone 8192 0 - Live 0xffffffffc0d00000\\n"
		 "fresh 4096 0 - Loading 0x0000000000000000\\n' > $r/proc/modules; "
		 "touch $r/lib/modules/6.1.0-test/kernel/fs/x/fat.ko.xz $r/lib/modules/6.1.0-test/extra/nls-cp-437.ko "
		 "$r/lib/modules/6.1.0-test/extra/zmod.ko.zst $r/lib/modules/6.1.0-test/build/kernel/gone.ko "
		 "$r/lib/modules/6.1.0-test/extra/notes.txt",
		 root);
	assert_int_equal(system(cmd), 0);
	/* a GNU build-id note as the kernel shows it */
	uint8_t note[12 + 4 + 20];
	uint32_t hdr[3] = { 4, 20, 3 };   /* namesz, descsz, NT_GNU_BUILD_ID */
	memcpy(note, hdr, 12);
	memcpy(note + 12, "GNU", 4);
	for (int i = 0; i < 20; i++)
		note[16 + i] = (uint8_t)(0xa0 + i);
	snprintf(path, sizeof(path), "%s/sys/module/fat/notes/.note.gnu.build-id", root);
	put_file(path, note, sizeof(note));

	rec_module *m;
	size_t n;
	assert_int_equal(rec_modules_read(root, &m, &n), 0);
	assert_int_equal(n, 4);                 /* "fresh" has no address yet */
	snprintf(path, sizeof(path), "%s/lib/modules/6.1.0-test/kernel/fs/x/fat.ko.xz", root);
	assert_string_equal(m[0].filename, path);
	assert_int_equal(m[0].start, 0xffffffffc0a00000ull);
	assert_int_equal(m[0].size, 86016);
	assert_int_equal(m[0].bid_size, 20);
	assert_memory_equal(m[0].bid, note + 16, 20);
	snprintf(path, sizeof(path), "%s/lib/modules/6.1.0-test/extra/nls-cp-437.ko", root);
	assert_string_equal(m[1].filename, path);
	assert_int_equal(m[1].bid_size, 0);
	assert_string_equal(m[2].filename, "[zmod]");        /* .ko.zst: no module file */
	assert_string_equal(m[3].filename, "[gone]");        /* only under build/ */
	rec_modules_free(m, n);

	/* no /proc/version: no release, every module keeps "[name]" */
	snprintf(path, sizeof(path), "%s/proc/version", root);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rec_modules_read(root, &m, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(m[0].filename, "[fat]");
	rec_modules_free(m, n);
	/* no /proc/modules (a kernel without modules): none */
	snprintf(path, sizeof(path), "%s/nonexistent", root);
	assert_int_equal(rec_modules_read(path, &m, &n), 0);
	assert_int_equal(n, 0);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events),
		cmocka_unit_test(test_encode_string),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_roundtrip_zstd),
		cmocka_unit_test(test_write_error),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_modules),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
