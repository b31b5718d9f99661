/* test_symbol_plt.c — overlapping symbols against real perf (oracle test).
 *
 * tests/data/symbol/plt.c is built with lazily bound PLT entries and a
 * size-0 _init (checked with libelf), once plain and once with -rdynamic
 * (.dynsym duplicates of .symtab symbols: perf's duplicate fixup erases them
 * from its tree, and rebalances it, before the PLT entries are added). perf stretches that _init to the next
 * symbol before it adds the PLT entries, so _init overlaps all of .plt, and
 * perf's tree lookup names, per address, whichever of the two it meets first.
 * A perf.data with one sample at every byte from .init to the start of .text
 * is written with proff's writer; then
 *  - `perf script -F ip,sym` (one line per sample) must name exactly what
 *    sym_lookup() names at the same address, and
 *  - `perf report --stdio -s sym` must equal `proff report --stdio -s sym`
 *    (the proff next to this test binary, or $PROFF), and so must their
 *    `-s srcline` reports for the builds without generated symbols
 *    (addr2line names no function in the PLT header, the lazy resolver's
 *    stub, so perf prints `_init+OFF` there).
 * For each build, every address of .plt is covered.
 * Skipped when perf or a C compiler is missing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <libgen.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "proff/perfdata-writer.h"
#include "proff/perfdata.h"
#include "proff/symbol.h"

#define MAP_BASE 0x555555554000ull
#define PID 4242

static char g_dir[512];
static char g_proff[PATH_MAX];

/* what the test needs to know of the binary */
typedef struct layout {
	uint64_t init_addr, plt_addr, plt_size, text_addr;
	uint64_t seg_vaddr, seg_off;    /* PT_LOAD holding .plt */
	uint64_t init_size;             /* st_size of _init */
	bool have_init_sym;
	size_t nrel;                    /* .rela.plt entries */
	uint64_t file_size;
	uint64_t ovl_begin, ovl_end;    /* the generated symbols' region, if any */
} layout;

/* one build of plt.c and its perf.data, in g_dir/NAME/ */
typedef struct tcase {
	const char *name, *flags;
	unsigned gen_seed;      /* != 0: add generated overlapping symbols */
	char dir[600], bin[700];
	layout lay;
	bool ok;                /* binary built and perf.data written */
	bool have_perf;         /* perf's outputs made */
} tcase;

static tcase g_cases[] = {
	{ .name = "plain", .flags = "" },
	{ .name = "rdynamic", .flags = "-rdynamic" },
	{ .name = "random", .flags = "-rdynamic", .gen_seed = 12345 },
	{ .name = "random2", .flags = "", .gen_seed = 777 },
};
#define NCASES (sizeof(g_cases) / sizeof(g_cases[0]))

static bool read_layout(const char *path, layout *l)
{
	memset(l, 0, sizeof(*l));
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	struct stat st;
	fstat(fd, &st);
	l->file_size = (uint64_t)st.st_size;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstr;
	if (!e || elf_getshdrstrndx(e, &shstr) != 0) {
		close(fd);
		return false;
	}
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn)) != NULL) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		const char *n = elf_strptr(e, shstr, sh.sh_name);
		if (!n)
			continue;
		if (strcmp(n, ".init") == 0)
			l->init_addr = sh.sh_addr;
		else if (strcmp(n, ".plt") == 0) {
			l->plt_addr = sh.sh_addr;
			l->plt_size = sh.sh_size;
		} else if (strcmp(n, ".text") == 0)
			l->text_addr = sh.sh_addr;
		else if (strcmp(n, ".rela.plt") == 0 && sh.sh_entsize)
			l->nrel = sh.sh_size / sh.sh_entsize;
		if (sh.sh_type == SHT_SYMTAB) {
			Elf_Data *d = elf_getdata(scn, NULL);
			for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				gelf_getsym(d, (int)i, &s);
				const char *sn = elf_strptr(e, sh.sh_link, s.st_name);
				if (sn && strcmp(sn, "_init") == 0) {
					l->have_init_sym = true;
					l->init_size = s.st_size;
				} else if (sn && strcmp(sn, "ovl_begin") == 0) {
					l->ovl_begin = s.st_value;
				} else if (sn && strcmp(sn, "ovl_end") == 0) {
					l->ovl_end = s.st_value;
				}
			}
		}
	}
	size_t phnum = 0;
	elf_getphdrnum(e, &phnum);
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD && l->plt_addr >= ph.p_vaddr &&
		    l->plt_addr < ph.p_vaddr + ph.p_memsz) {
			l->seg_vaddr = ph.p_vaddr;
			l->seg_off = ph.p_offset;
		}
	}
	elf_end(e);
	close(fd);
	return l->init_addr && l->plt_addr && l->text_addr > l->plt_addr && l->seg_vaddr;
}

/* The sampled virtual addresses: .init to 16 bytes into .text, and the
 * generated region with some margin. */
static bool next_addr(const layout *l, uint64_t *v, bool first)
{
	if (first) {
		*v = l->init_addr;
		return true;
	}
	++*v;
	if (*v == l->text_addr + 16 && l->ovl_end > l->ovl_begin)
		*v = l->ovl_begin - 16;
	if (l->ovl_end > l->ovl_begin && *v >= l->ovl_begin - 16)
		return *v < l->ovl_end + 32;
	return *v < l->text_addr + 16;
}

static size_t nr_addrs(const layout *l)
{
	size_t n = l->text_addr + 16 - l->init_addr;
	if (l->ovl_end > l->ovl_begin)
		n += l->ovl_end + 32 - (l->ovl_begin - 16);
	return n;
}

/* map address (file offset) of a virtual address of the text segment */
static uint64_t off_of(const layout *l, uint64_t vaddr)
{
	return vaddr - l->seg_vaddr + l->seg_off;
}

static bool write_data(const tcase *tc, const char *path)
{
	const layout *l = &tc->lay;
	pdw_writer *w;
	proff_error err;
	if (pdw_create(path, NULL, &w, &err) != 0)
		return false;
	uint8_t attr[PDW_ATTR_SIZE];
	tu_cpu_clock_attr(attr, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD, 1, false);
	uint64_t id = 1;
	if (pdw_add_attr(w, attr, "cpu-clock", &id, 1, &err) != 0 || pdw_start_data(w, &err) != 0)
		return false;
	uint8_t rec[1024];
	uint32_t pid = PID;

	/* COMM */
	memset(rec, 0, sizeof(rec));
	tu_put_hdr(rec, PERF_RECORD_COMM, 0, 24);
	memcpy(rec + 8, &pid, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, "plt", 4);
	if (pdw_write(w, rec, 24, &err) != 0)
		return false;

	/* MMAP of the whole file, executable, page offset 0 */
	memset(rec, 0, sizeof(rec));
	size_t nl = strlen(tc->bin) + 1, sz = 40 + ((nl + 7) & ~(size_t)7);
	if (sz > sizeof(rec))
		return false;
	tu_put_hdr(rec, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER, (uint16_t)sz);
	uint64_t start = MAP_BASE, len = (l->file_size + 4095) & ~4095ull, pgoff = 0;
	memcpy(rec + 8, &pid, 4);
	memcpy(rec + 12, &pid, 4);
	memcpy(rec + 16, &start, 8);
	memcpy(rec + 24, &len, 8);
	memcpy(rec + 32, &pgoff, 8);
	memcpy(rec + 40, tc->bin, nl);
	if (pdw_write(w, rec, sz, &err) != 0)
		return false;

	/* one sample per byte from .init to 16 bytes into .text */
	uint64_t v;
	for (bool more = next_addr(l, &v, true); more; more = next_addr(l, &v, false)) {
		memset(rec, 0, 32);
		tu_put_hdr(rec, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 32);
		uint64_t ip = MAP_BASE + off_of(l, v), period = 1;
		memcpy(rec + 8, &ip, 8);
		memcpy(rec + 16, &pid, 4);
		memcpy(rec + 20, &pid, 4);
		memcpy(rec + 24, &period, 8);
		if (pdw_write(w, rec, 32, &err) != 0)
			return false;
	}
	if (pdw_finished_round(w, &err) != 0)
		return false;
	pdw_stats st;
	return pdw_close(w, &st, &err) == 0;
}

/* An assembly file of pseudo-random function symbols over one 4 KiB region:
 * nested and overlapping ranges, zero sizes, several symbols on one start
 * (duplicates perf's fixup chooses among), local, global and weak. */
static bool gen_asm(const char *path, unsigned seed)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return false;
	uint32_t x = seed;
	const unsigned region = 4096, nsym = 400;
	fprintf(f, "\t.text\n\t.p2align 4\n\t.globl ovl_begin\n\t.type ovl_begin,@function\n"
		   "ovl_begin:\n\t.fill %u, 1, 0x90\n\t.globl ovl_end\n\t.type ovl_end,@function\n"
		   "ovl_end:\n\tret\n\t.size ovl_end, 1\n", region);
	unsigned off = 0;
	for (unsigned i = 0; i < nsym; i++) {
		x = x * 1103515245u + 12345u;
		unsigned r = x >> 8;
		if (i == 0 || r % 4 != 0)       /* else: same start as the previous one */
			off = (r >> 2) % region & ~(r & 64 ? 15u : 0u);
		x = x * 1103515245u + 12345u;
		r = x >> 8;
		unsigned size;
		switch (r % 6) {
		case 0: size = 0; break;
		case 1: case 2: size = 1 + (r >> 3) % 32; break;
		case 3: case 4: size = 16 + (r >> 3) % 256; break;
		default: size = 256 + (r >> 3) % 2048; break;
		}
		if (size > region - off)
			size = region - off;
		const char *bind = (r >> 20) % 3 == 0 ? "" : (r >> 20) % 3 == 1 ? "\t.globl" : "\t.weak";
		if (*bind)
			fprintf(f, "%s s%u\n", bind, i);
		fprintf(f, "\t.type s%u,@function\n\t.set s%u, ovl_begin + %u\n\t.size s%u, %u\n",
			i, i, off, i, size);
	}
	return fclose(f) == 0;
}

static void prepare(tcase *tc)
{
	const char *src = getenv("PROFF_SRCDIR");
	const char *cc = getenv("CC_FOR_TESTS");
	snprintf(tc->dir, sizeof(tc->dir), "%s/%s", g_dir, tc->name);
	snprintf(tc->bin, sizeof(tc->bin), "%s/plt", tc->dir);
	if (mkdir(tc->dir, 0755) != 0)
		return;
	char gen[800] = "";
	if (tc->gen_seed) {
		snprintf(gen, sizeof(gen), "%s/ovl.s", tc->dir);
		if (!gen_asm(gen, tc->gen_seed))
			return;
	}
	/* lazy binding, ordinary PLT calls (no -fno-plt), no IBT .plt.sec */
	if (tu_sh("%s -O1 -g -fno-omit-frame-pointer -fcf-protection=none -Wl,-z,lazy -Wl,--build-id=sha1 %s "
	       "-o '%s' '%s/tests/data/symbol/plt.c' %s >/dev/null 2>&1",
	       cc && *cc ? cc : "cc", tc->flags, tc->bin, src && *src ? src : ".", gen) != 0)
		return;
	if (!read_layout(tc->bin, &tc->lay))
		return;
	char data[800];
	snprintf(data, sizeof(data), "%s/p.data", tc->dir);
	tc->ok = write_data(tc, data);
	tc->have_perf = tc->ok &&
		tu_sh("cd '%s' && perf --buildid-dir '%s/cache' script -i p.data -F ip,sym > script.txt 2>/dev/null && "
		   "perf --buildid-dir '%s/cache' report -i p.data --stdio -s sym 2>/dev/null "
		   "| grep -v '^# (Tip:' > perf_report.txt && "
		   "perf --buildid-dir '%s/cache' report -i p.data --stdio -s srcline 2>/dev/null "
		   "| grep -v '^# (Tip:' > perf_srcline.txt",
		   tc->dir, tc->dir, tc->dir, tc->dir) == 0;
}

static int setup(void **state)
{
	(void)state;
	if (tu_mkdtemp(g_dir, sizeof(g_dir), "symplt") < 0)
		return -1;
	for (size_t i = 0; i < NCASES; i++)
		prepare(&g_cases[i]);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tu_rmdir(g_dir);
}

/* The binary has the shape the test is about. */
static void check_shape(const tcase *tc)
{
	const layout *l = &tc->lay;
	print_message("%s: %zu PLT entries\n", tc->name, l->nrel);
	assert_true(l->have_init_sym);
	assert_int_equal(l->init_size, 0);           /* perf stretches it over .plt */
	assert_true(l->nrel >= 16);                  /* a tree worth the name */
	assert_int_equal(l->plt_size, (l->nrel + 1) * 16);
	assert_true(l->init_addr < l->plt_addr);
}

/* Every sample: perf script's symbol == sym_lookup's. */
static void check_every_address(const tcase *tc)
{
	const layout *l = &tc->lay;
	char path[800];
	snprintf(path, sizeof(path), "%s/script.txt", tc->dir);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char cache[700];
	snprintf(cache, sizeof(cache), "%s/cache", tc->dir);
	sym_opts o = { .demangle = true, .buildid_dir = cache };
	sym_ctx *c;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_dso *d = sym_dso_get(c, tc->bin, NULL, 0, SYM_DSO_USER);
	assert_non_null(d);

	char line[1024];
	uint64_t want_v;
	bool more = next_addr(l, &want_v, true);
	size_t n = 0, bad = 0, in_plt_init = 0, in_plt_entry = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long ip;
		char name[900] = "";
		if (sscanf(line, " %llx %899[^\n]", &ip, name) < 1)
			continue;
		/* perf script prints the symbol or "[unknown]" */
		assert_true(more);
		assert_int_equal(ip, MAP_BASE + off_of(l, want_v));
		sym_info si;
		const char *mine = sym_lookup(d, ip - MAP_BASE, &si) ? si.name : "[unknown]";
		if (strcmp(mine, name) != 0) {
			if (bad++ < 20)
				print_message("%s: 0x%llx (vaddr 0x%llx): perf '%s', proff '%s'\n", tc->name, ip,
					      (unsigned long long)want_v, name, mine);
		}
		if (want_v >= l->plt_addr + 16 && want_v < l->plt_addr + l->plt_size) {
			if (strcmp(name, "_init") == 0)
				in_plt_init++;
			else if (strstr(name, "@plt"))
				in_plt_entry++;
		}
		more = next_addr(l, &want_v, false);
		n++;
	}
	fclose(f);
	sym_ctx_free(c);
	assert_int_equal(n, nr_addrs(l));
	assert_int_equal(bad, 0);
	/* the case at hand: in the PLT entries perf names both kinds */
	assert_true(in_plt_init > 0);
	assert_true(in_plt_entry > 0);
}

/* perf report -s KEY == proff report -s KEY, byte for byte (OUT: perf's
 * output file in the case's directory). */
static void check_same_report(const tcase *tc, const char *key, const char *out)
{
	assert_int_equal(tu_sh("cd '%s' && '%s' report -i p.data --buildid-dir '%s/cache' --stdio -s %s "
			    "> proff_out.txt 2>/dev/null && grep -v '^# (Tip:' proff_out.txt > proff_%s",
			    tc->dir, g_proff, tc->dir, key, out), 0);
	int rc = tu_sh("cmp -s '%s/%s' '%s/proff_%s'", tc->dir, out, tc->dir, out);
	if (rc != 0)
		tu_sh("diff '%s/%s' '%s/proff_%s' | head -40", tc->dir, out, tc->dir, out);
	assert_int_equal(rc, 0);
}

/* perf report -s sym == proff report -s sym, byte for byte; the same for
 * -s srcline, which has perf's _init+OFF in the PLT header. */
static void check_report(const tcase *tc)
{
	check_same_report(tc, "sym", "perf_report.txt");
	/* and the report is about the PLT: several @plt rows and _init */
	assert_int_equal(tu_sh("test $(grep -c '@plt$' '%s/perf_report.txt') -ge 8", tc->dir), 0);
	assert_int_equal(tu_sh("grep -q ' _init$' '%s/perf_report.txt'", tc->dir), 0);
	/* the generated symbols lie in an assembler CU whose DWARF names
	 * functions but has no line rows: addr2line then prints no file, a
	 * case proff does not model (docs/symbols.md) */
	if (tc->gen_seed)
		return;
	check_same_report(tc, "srcline", "perf_srcline.txt");
	assert_int_equal(tu_sh("grep -q ' _init+[0-9]' '%s/perf_srcline.txt'", tc->dir), 0);
	assert_int_equal(tu_sh("test $(grep -c '@plt+[0-9]' '%s/perf_srcline.txt') -ge 8", tc->dir), 0);
}

static void test_binary_shape(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		if (!g_cases[i].ok)
			skip();
		check_shape(&g_cases[i]);
	}
}

static void test_every_address(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		if (!g_cases[i].have_perf)
			skip();
		check_every_address(&g_cases[i]);
	}
}

static void test_report(void **state)
{
	(void)state;
	if (access(g_proff, X_OK) != 0) {
		print_message("no proff binary at %s\n", g_proff);
		skip();
	}
	for (size_t i = 0; i < NCASES; i++) {
		if (!g_cases[i].have_perf)
			skip();
		check_report(&g_cases[i]);
	}
}

int main(int argc, char **argv)
{
	(void)argc;
	const char *p = getenv("PROFF");
	char self[900], rel[1000];
	if (p && *p) {
		snprintf(rel, sizeof(rel), "%s", p);
	} else {
		snprintf(self, sizeof(self), "%s", argv[0]);
		snprintf(rel, sizeof(rel), "%s/../proff", dirname(self));
	}
	/* absolute: the commands run in the test directory */
	if (!realpath(rel, g_proff))
		snprintf(g_proff, sizeof(g_proff), "%s", rel);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_binary_shape),
		cmocka_unit_test(test_every_address),
		cmocka_unit_test(test_report),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
