/* test_dwarf_lazy.c — source lines from a compressed debug file, inflated
 * lazily (lib/symbol/dwarf.c), are those of the completely inflated file.
 *
 * The files are the system's own libc and dynamic loader, whose debug files
 * (/usr/lib/debug/.build-id/...) distributions ship with compressed debug
 * sections; without such a file the test is skipped. One symbolizer is put
 * into the complete mode with an inline query (which always reads the whole
 * file), another one answers lazily; every answer is compared: at random
 * addresses of functions that have a line (answered through .debug_aranges),
 * then over the whole text every 61 bytes (PLT and padding included: the
 * first address outside .debug_aranges completes .debug_info and
 * .debug_abbrev).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <gelf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proff/symbol.h"

typedef struct text {
	char path[512];
	uint64_t lo, hi;           /* executable map, in map-address space (file offsets) */
} text;

/* the executable mapping of the loaded object whose path ends with `suffix` */
static bool find_text(const char *suffix, text *t)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[1024];
	bool ok = false;
	while (!ok && fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perm[8], path[512] = "";
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %511s", &lo, &hi, perm, &off, path) != 5 ||
		    perm[2] != 'x')
			continue;
		size_t n = strlen(path), m = strlen(suffix);
		if (n >= m && !strcmp(path + n - m, suffix)) {
			snprintf(t->path, sizeof(t->path), "%s", path);
			t->lo = off;
			t->hi = off + (hi - lo);
			ok = true;
		}
	}
	fclose(f);
	return ok;
}

/* Is there a debug file for `path` with a compressed .debug_info? */
static bool has_compressed_debug(const char *path)
{
	uint8_t id[64];
	proff_error err = { 0 };
	int n = sym_read_build_id(path, id, sizeof(id), &err);
	if (n < 2)
		return false;
	char hex[129], dbg[600];
	sym_build_id_hex(id, (size_t)n, hex);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	int fd = open(dbg, O_RDONLY);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	bool z = false;
	size_t shstr;
	if (e && elf_getshdrstrndx(e, &shstr) == 0) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			GElf_Shdr sh;
			const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(e, shstr, sh.sh_name) : NULL;
			if (name && !strcmp(name, ".debug_info"))
				z = (sh.sh_flags & SHF_COMPRESSED) != 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return z;
}

typedef struct pair {
	sym_ctx *ca, *cb;
	sym_dso *lazy, *full;
	size_t n, lines, differ;
} pair;

static void pair_open(pair *p, const char *path, uint64_t any_addr)
{
	sym_opts o = { .demangle = true };
	proff_error err = { 0 };
	memset(p, 0, sizeof(*p));
	assert_int_equal(sym_ctx_new(&o, &p->ca, &err), 0);
	assert_int_equal(sym_ctx_new(&o, &p->cb, &err), 0);
	p->lazy = sym_dso_get(p->ca, path, NULL, 0, SYM_DSO_USER);
	p->full = sym_dso_get(p->cb, path, NULL, 0, SYM_DSO_USER);
	assert_non_null(p->lazy);
	assert_non_null(p->full);
	sym_inline_frame fr[8];
	sym_inlines(p->full, any_addr, fr, 8);     /* the complete file from here on */
}

static void pair_check(pair *p, uint64_t addr)
{
	const char *fa = NULL, *fb = NULL;
	unsigned la = 0, lb = 0;
	bool ra = sym_srcline(p->lazy, addr, &fa, &la);
	bool rb = sym_srcline(p->full, addr, &fb, &lb);
	p->n++;
	p->lines += rb;
	if (ra != rb || (ra && (strcmp(fa, fb) || la != lb))) {
		if (p->differ++ < 5)
			print_message("%#llx: lazy %s:%u, complete %s:%u\n", (unsigned long long)addr,
				      ra ? fa : "-", la, rb ? fb : "-", lb);
	}
}

static void pair_close(pair *p)
{
	sym_ctx_free(p->ca);
	sym_ctx_free(p->cb);
}

static void check_object(const char *suffix)
{
	text t;
	if (!find_text(suffix, &t) || !has_compressed_debug(t.path))
		skip();
	/* random addresses inside functions */
	pair p;
	pair_open(&p, t.path, t.lo);
	uint64_t x = 88172645463325252ull;
	for (int i = 0; i < 3000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t a = t.lo + x % (t.hi - t.lo);
		sym_info si;
		const char *file;
		unsigned line;
		/* with a line: no address outside .debug_aranges before the end */
		if (sym_lookup(p.full, a, &si) && !si.is_plt && sym_srcline(p.full, a, &file, &line))
			pair_check(&p, a);
	}
	assert_true(p.n > 1000);
	assert_true(p.lines * 10 > p.n * 9);
	assert_int_equal(p.differ, 0);
	pair_close(&p);
	/* the whole text */
	pair_open(&p, t.path, t.lo);
	for (uint64_t a = t.lo; a < t.hi; a += 61)
		pair_check(&p, a);
	assert_true(p.lines * 10 > p.n * 8);
	assert_int_equal(p.differ, 0);
	pair_close(&p);
}

/* sym_dso_prepare_inlines (the DWARF opened in full ahead of the first
 * query, on another thread in a split load) changes no answer: inlined
 * frames at random addresses of the text are those of a symbolizer asked
 * cold, and asked again (the dso's kept answers) the same. */
static void check_prepared(const char *suffix)
{
	text t;
	if (!find_text(suffix, &t) || !has_compressed_debug(t.path))
		skip();
	sym_opts o = { .demangle = true };
	proff_error err = { 0 };
	sym_ctx *ca, *cb;
	assert_int_equal(sym_ctx_new(&o, &ca, &err), 0);
	assert_int_equal(sym_ctx_new(&o, &cb, &err), 0);
	sym_dso *cold = sym_dso_get(ca, t.path, NULL, 0, SYM_DSO_USER);
	sym_dso *prep = sym_dso_get(cb, t.path, NULL, 0, SYM_DSO_USER);
	assert_non_null(cold);
	assert_non_null(prep);
	sym_dso_prepare_inlines(prep);
	uint64_t x = 2463534242ull;
	size_t frames = 0;
	for (int i = 0; i < 2000; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t a = t.lo + x % (t.hi - t.lo);
		sym_inline_frame fa[8], fb[8], fc[8];
		size_t na = sym_inlines(cold, a, fa, 8), nb = sym_inlines(prep, a, fb, 8);
		assert_int_equal(na, nb);
		/* asked again: the kept answer, cut to max */
		size_t nc = sym_inlines(prep, a, fc, 2);
		assert_int_equal(nc, nb < 2 ? nb : 2);
		for (size_t k = 0; k < nc; k++)
			assert_memory_equal(&fb[k], &fc[k], sizeof(fc[k]));
		frames += na;
		for (size_t k = 0; k < na; k++) {
			assert_string_equal(fa[k].name ? fa[k].name : "-", fb[k].name ? fb[k].name : "-");
			assert_string_equal(fa[k].file ? fa[k].file : "-", fb[k].file ? fb[k].file : "-");
			assert_int_equal(fa[k].line, fb[k].line);
			assert_int_equal(fa[k].a2l_key != 0, fb[k].a2l_key != 0);
		}
	}
	assert_true(frames > 1000);
	sym_ctx_free(ca);
	sym_ctx_free(cb);
}

static void test_libc(void **state) { (void)state; check_object("/libc.so.6"); }
static void test_libc_prepared(void **state) { (void)state; check_prepared("/libc.so.6"); }
static void test_ld_so(void **state) { (void)state; check_object("/ld-linux-x86-64.so.2"); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_libc),
		cmocka_unit_test(test_libc_prepared),
		cmocka_unit_test(test_ld_so),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
