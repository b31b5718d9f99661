/* test_symbol.c — unit tests of the symbolizer (lib/symbol/).
 *
 * The test binaries are built at test time from tests/data/symbol/ by its
 * build.sh into a temporary directory. Expected values come from binutils
 * run inside the test (nm, readelf, objdump, addr2line, c++filt) or are known
 * by construction (the crafted kallsyms file, the build-id cache layout).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "proff/symbol.h"

static char g_dir[512];      /* build output */
static bool g_built;

/* ---- helpers ------------------------------------------------------------- */

static char *run(const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	FILE *p = popen(cmd, "r");
	if (!p)
		return NULL;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	size_t n;
	while ((n = fread(buf + len, 1, cap - len - 1, p)) > 0) {
		len += n;
		if (cap - len < 2) {
			cap *= 2;
			buf = realloc(buf, cap);
		}
	}
	buf[len] = '\0';
	pclose(p);
	return buf;
}

/* file offset of an ELF virtual address, from `readelf -lW` PT_LOADs */
static uint64_t vaddr_to_off(const char *bin, uint64_t v)
{
	char *out = run("readelf -lW '%s'", bin);
	assert_non_null(out);
	uint64_t res = UINT64_MAX;
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
		unsigned long long off, va, pa, fsz, msz;
		if (sscanf(l, " LOAD %llx %llx %llx %llx %llx", &off, &va, &pa, &fsz, &msz) == 5 &&
		    v >= va && v < va + msz) {
			res = v - va + off;
			break;
		}
	}
	free(out);
	assert_true(res != UINT64_MAX);
	return res;
}

/* value of a symbol in `nm` output */
static uint64_t nm_value(const char *bin, const char *name)
{
	char *out = run("nm '%s'", bin);
	assert_non_null(out);
	uint64_t v = 0;
	size_t nl = strlen(name);
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
		size_t ll = strlen(l);
		if (ll > nl + 3 && strcmp(l + ll - nl, name) == 0 && l[ll - nl - 1] == ' ') {
			v = strtoull(l, NULL, 16);
			break;
		}
	}
	free(out);
	assert_true(v != 0);
	return v;
}

static char *path_of(const char *name)
{
	static char buf[4][1024];
	static int k;
	k = (k + 1) & 3;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", g_dir, name);
	return buf[k];
}

static sym_ctx *new_ctx(const char *buildid_dir)
{
	sym_opts o = { .demangle = true, .buildid_dir = buildid_dir };
	sym_ctx *c = NULL;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	return c;
}

static size_t file_build_id(const char *path, uint8_t *id)
{
	proff_error err;
	int n = sym_read_build_id(path, id, 20, &err);
	assert_true(n > 0);
	return (size_t)n;
}

static int setup(void **state)
{
	if (tu_mkdtemp(g_dir, sizeof(g_dir), "symtest") < 0)
		return -1;
	const char *src = getenv("PROFF_SRCDIR");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "sh '%s/tests/data/symbol/build.sh' '%s' >/dev/null 2>&1",
		 src && *src ? src : ".", g_dir);
	g_built = system(cmd) == 0;
	return g_built ? 0 : -1;
}

static int teardown(void **state)
{
	return tu_rmdir(g_dir);
}

/* ---- ELF symbols ------------------------------------------------------------ */

static void check_fn(sym_dso *d, const char *bin, const char *name)
{
	uint64_t v = nm_value(bin, name);
	uint64_t a = vaddr_to_off(bin, v);
	sym_info si;
	assert_true(sym_lookup(d, a, &si));
	assert_string_equal(si.name, name);
	assert_int_equal(si.start, a);
	assert_true(sym_lookup(d, a + 1, &si));
	assert_string_equal(si.name, name);
	assert_false(si.is_plt);
}

static void test_elf_lookup(void **state)
{
	sym_ctx *c = new_ctx("/nonexistent");
	const char *bin = path_of("prog");
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	assert_non_null(d);
	assert_true(sym_dso_has_symbols(d));
	assert_int_equal(sym_dso_origin(d), 'd');
	assert_ptr_equal(sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER), d);
	assert_string_equal(sym_dso_short_name(d), "prog");
	assert_string_equal(sym_dso_long_name(d), bin);
	check_fn(d, bin, "work_hot");
	check_fn(d, bin, "work_cold");
	check_fn(d, bin, "main");

	/* the end of a symbol comes from st_size: nm -S */
	char *out = run("nm -S '%s' | awk '$4 == \"work_hot\" {print $2}'", bin);
	uint64_t size = strtoull(out, NULL, 16);
	free(out);
	assert_true(size > 0);
	sym_info si;
	uint64_t a = vaddr_to_off(bin, nm_value(bin, "work_hot"));
	assert_true(sym_lookup(d, a, &si));
	assert_int_equal(si.end - si.start, size);
	assert_true(!sym_lookup(d, a + size, &si) || strcmp(si.name, "work_hot") != 0);
	/* nothing below the first symbol */
	assert_false(sym_lookup(d, 0, &si));
	sym_ctx_free(c);
}

static void test_plt(void **state)
{
	sym_ctx *c = new_ctx("/nonexistent");
	const char *bin = path_of("prog");
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	/* objdump labels PLT entries "<getppid@plt>" at their virtual address */
	char *out = run("objdump -d -j .plt '%s' 2>/dev/null | grep '@plt>:$'", bin);
	int seen = 0, named = 0;
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
		unsigned long long v;
		char name[256];
		if (sscanf(l, "%llx <%255[^>]>:", &v, name) != 2)
			continue;
		sym_info si;
		uint64_t a = vaddr_to_off(bin, v);
		assert_true(sym_lookup(d, a + 2, &si));
		seen++;
		/* the size-0 _init stretched over .plt overlaps every entry;
		 * perf's tree lookup meets it first for some of them (which
		 * ones: test_symbol_plt.c, against perf itself) */
		if (strcmp(si.name, "_init") == 0 && !si.is_plt)
			continue;
		assert_string_equal(si.name, name);
		assert_true(si.is_plt);
		named++;
	}
	free(out);
	assert_true(seen >= 2);    /* printf/getppid at least */
	assert_true(named >= 1);
	sym_ctx_free(c);
}

/* Addresses perf finds no symbol for: perf prints what addr2line says.
 * binutils names the nearest preceding function symbol of the section
 * whatever its size ("??:0" then), and nothing where the section has none
 * before the address ("dso[vaddr]" then). Checked against addr2line itself
 * on the gaps between the dynamic symbols of the system's libgcc_s. */
static void test_srcline_no_symbol(void **state)
{
	const char *lib = "/lib/x86_64-linux-gnu/libgcc_s.so.1";
	if (access(lib, R_OK) != 0)
		skip();
	char *a2l = run("command -v addr2line");
	bool have = a2l && a2l[0];
	free(a2l);
	if (!have)
		skip();
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, lib, NULL, 0, SYM_DSO_USER);
	/* candidate addresses: just after each dynamic symbol's end, and the
	 * start of every executable section */
	uint64_t cand[512];
	size_t nc = 0;
	char *out = run("nm -D -S --defined-only '%s' | sort", lib);
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l && nc < 400; l = strtok_r(NULL, "\n", &sv)) {
		unsigned long long v, sz;
		char t;
		if (sscanf(l, "%llx %llx %c", &v, &sz, &t) == 3 && (t == 'T' || t == 't') && sz)
			cand[nc++] = v + sz + 1;
	}
	free(out);
	out = run("readelf -SW '%s'", lib);
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l && nc < 512; l = strtok_r(NULL, "\n", &sv)) {
		char name[64], type[64], flg[16];
		unsigned long long addr, off, size, es;
		const char *b = strchr(l, ']');
		if (b && sscanf(b + 1, " %63s %63s %llx %llx %llx %llx %15s", name, type, &addr, &off, &size, &es, flg) == 7 &&
		    strchr(flg, 'X') && size)
			cand[nc++] = addr;
	}
	free(out);
	char cmd[16384];
	size_t cl = (size_t)snprintf(cmd, sizeof(cmd), "addr2line -f -e '%s'", lib);
	for (size_t i = 0; i < nc && cl < sizeof(cmd) - 32; i++)
		cl += (size_t)snprintf(cmd + cl, sizeof(cmd) - cl, " %llx", (unsigned long long)cand[i]);
	out = run("%s", cmd);
	int named = 0, anon = 0;
	char *sv = NULL, *fn = strtok_r(out, "\n", &sv);
	for (size_t i = 0; i < nc && fn; i++) {
		char *fl = strtok_r(NULL, "\n", &sv);
		assert_non_null(fl);
		uint64_t a = vaddr_to_off(lib, cand[i]);
		char buf[256], want[256];
		if (!sym_lookup(d, a, NULL)) {
			if (strcmp(fn, "??") != 0) {
				snprintf(want, sizeof(want), "??:0");
				named++;
			} else {
				snprintf(want, sizeof(want), "libgcc_s.so.1[%llx]", (unsigned long long)cand[i]);
				anon++;
			}
			sym_srcline_str(d, a, false, buf, sizeof(buf));
			assert_string_equal(buf, want);
		}
		fn = strtok_r(NULL, "\n", &sv);
	}
	free(out);
	assert_true(named >= 1);
	assert_true(anon >= 1);
	sym_ctx_free(c);
}

/* Code without a line in DWARF but inside a function of the symbol table
 * (crtstuff.c's deregister_tm_clones, frame_dummy, ... in every program):
 * addr2line names the source file from the symbol table's FILE symbols and
 * says "crtstuff.c:?", which perf shows as "crtstuff.c:0" (in the srcline
 * sort key and in callchain srclines: sym_srcline_a2l). Checked against
 * addr2line on every local text symbol of prog that gets no line. */
static void test_srcline_file_symbol(void **state)
{
	char *a2l = run("command -v addr2line");
	bool have = a2l && a2l[0];
	free(a2l);
	if (!have)
		skip();
	const char *bin = path_of("prog");
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	char *out = run("nm --defined-only '%s' | awk '$2 == \"t\" { print $1 }' | sort -u", bin);
	uint64_t cand[256];
	size_t nc = 0;
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l && nc < 256; l = strtok_r(NULL, "\n", &sv))
		cand[nc++] = strtoull(l, NULL, 16);
	free(out);
	int checked = 0;
	for (size_t i = 0; i < nc; i++) {
		char *ans = run("addr2line -e '%s' %llx", bin, (unsigned long long)cand[i]);
		size_t n = strlen(ans);
		if (n < 3 || strcmp(ans + n - 3, ":?\n") != 0) {      /* a real line: not this case */
			free(ans);
			continue;
		}
		ans[n - 3] = '\0';
		const char *base = strrchr(ans, '/');
		char want[256], buf[256];
		snprintf(want, sizeof(want), "%s:0", base ? base + 1 : ans);
		sym_srcline_str(d, vaddr_to_off(bin, cand[i]), false, buf, sizeof(buf));
		assert_string_equal(buf, want);
		/* the same file for perf's callchain srclines (diff --stream) */
		const char *file = NULL;
		unsigned line = 1;
		assert_true(sym_srcline_a2l(d, vaddr_to_off(bin, cand[i]), &file, &line));
		if (!strcmp(ans, "??")) {
			assert_null(file);              /* no FILE symbol: perf's "??:0" */
		} else {
			assert_non_null(file);
			snprintf(buf, sizeof(buf), "%s:%u", strrchr(file, '/') ? strrchr(file, '/') + 1 : file, line);
			assert_string_equal(buf, want);
		}
		free(ans);
		checked++;
	}
	assert_true(checked >= 2);     /* crtstuff.c's functions at least */
	sym_ctx_free(c);
}

/* ---- build-ids ---------------------------------------------------------------- */

static void test_build_id(void **state)
{
	uint8_t id[20], other[20];
	size_t n = file_build_id(path_of("prog"), id);
	assert_int_equal(n, 20);
	char hex[41];
	sym_build_id_hex(id, n, hex);
	char *out = run("readelf -n '%s' | sed -n 's/.*Build ID: //p'", path_of("prog"));
	assert_true(strncmp(out, hex, 40) == 0);
	free(out);
	size_t m = file_build_id(path_of("prog.other"), other);
	assert_int_equal(m, 20);
	assert_memory_not_equal(id, other, 20);

	proff_error err;
	assert_true(sym_read_build_id(path_of("no-such-file"), id, 20, &err) < 0);
	assert_int_equal(err.code, PROFF_ENOENT);

	sym_ctx *c = new_ctx("/nonexistent");
	/* matching build-id: symbols */
	sym_dso *d = sym_dso_get(c, path_of("prog"), id, 20, SYM_DSO_USER);
	assert_true(sym_dso_has_symbols(d));
	/* recorded build-id differs from the file's: rejected, no symbols */
	sym_dso *x = sym_dso_get(c, path_of("prog"), other, 20, SYM_DSO_USER);
	assert_ptr_not_equal(x, d);
	assert_false(sym_dso_has_symbols(x));
	assert_int_equal(sym_dso_origin(x), '!');   /* perf -v: not found */
	sym_info si;
	assert_false(sym_lookup(x, vaddr_to_off(path_of("prog"), nm_value(path_of("prog"), "main")), &si));
	sym_ctx_free(c);
}

static void test_stripped_and_cache(void **state)
{
	uint8_t id[20];
	size_t n = file_build_id(path_of("prog"), id);
	uint8_t sid[20];
	assert_int_equal(file_build_id(path_of("prog.stripped"), sid), n);
	assert_memory_equal(id, sid, n);     /* strip keeps the build-id */
	uint64_t a = vaddr_to_off(path_of("prog"), nm_value(path_of("prog"), "work_hot"));

	/* no cache: a stripped binary has no such symbol -> caller prints raw */
	sym_ctx *c = new_ctx(path_of("emptycache"));
	sym_dso *d = sym_dso_get(c, path_of("prog.stripped"), id, n, SYM_DSO_USER);
	sym_info si;
	assert_false(sym_lookup(d, a, &si));
	sym_ctx_free(c);

	/* perf's cache layout: .build-id/xx/<rest> -> ../../<path>/<id>/elf */
	char hex[41];
	sym_build_id_hex(id, n, hex);
	char *out = run("set -e; cd '%s'; mkdir -p cache/x/prog/%s cache/.build-id/%.2s; "
			"cp prog cache/x/prog/%s/elf; "
			"ln -s ../../x/prog/%s cache/.build-id/%.2s/%s && echo ok",
			g_dir, hex, hex, hex, hex, hex, hex + 2);
	assert_string_equal(out, "ok\n");
	free(out);
	c = new_ctx(path_of("cache"));
	d = sym_dso_get(c, path_of("prog.stripped"), id, n, SYM_DSO_USER);
	assert_true(sym_lookup(d, a, &si));
	assert_string_equal(si.name, "work_hot");
	assert_int_equal(sym_dso_origin(d), 'B');
	/* the recorded file gone: the cache alone is enough */
	sym_dso *g = sym_dso_get(c, "/nonexistent/prog", id, n, SYM_DSO_USER);
	assert_true(sym_lookup(g, a, &si));
	assert_string_equal(si.name, "work_hot");
	/* a cache entry is only used under its own build-id */
	uint8_t other[20];
	file_build_id(path_of("prog.other"), other);
	sym_dso *o = sym_dso_get(c, "/nonexistent/prog", other, 20, SYM_DSO_USER);
	assert_false(sym_dso_has_symbols(o));
	sym_ctx_free(c);
}

/* ---- DWARF ------------------------------------------------------------------------ */

/* Every address of work_hot and work_cold against `addr2line -f -i -a`. */
static void test_srcline_inlines(void **state)
{
	const char *bin = path_of("prog");
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	const char *fns[] = { "work_hot", "work_cold" };
	int checked = 0, inlined = 0;
	for (size_t f = 0; f < 2; f++) {
		uint64_t v = nm_value(bin, fns[f]);
		uint64_t a = vaddr_to_off(bin, v);
		sym_info si;
		assert_true(sym_lookup(d, a, &si));
		uint64_t size = si.end - si.start;
		char cmd[8192];
		int len = snprintf(cmd, sizeof(cmd), "addr2line -f -i -a -e '%s'", bin);
		for (uint64_t k = 0; k < size && len < (int)sizeof(cmd) - 24; k++)
			len += snprintf(cmd + len, sizeof(cmd) - (size_t)len, " %#llx", (unsigned long long)(v + k));
		char *out = run("%s", cmd);
		/* blocks: "0xADDR" then (function, file:line) pairs */
		uint64_t cur = 0;
		sym_inline_frame fr[8];
		size_t nfr = 0, idx = 0;
		char *name = NULL;
		for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
			if (l[0] == '0' && l[1] == 'x') {
				if (cur)
					assert_int_equal(idx, nfr);
				cur = strtoull(l, NULL, 16);
				uint64_t m = vaddr_to_off(bin, cur);
				const char *file;
				unsigned line;
				assert_true(sym_srcline(d, m, &file, &line));
				nfr = sym_inlines(d, m, fr, 8);
				assert_true(nfr >= 1);
				inlined += nfr > 1;
				idx = 0;
				name = NULL;
				checked++;
				continue;
			}
			if (!name) {
				name = l;
				continue;
			}
			char *disc = strstr(l, " (discriminator");
			if (disc)
				*disc = '\0';
			char *colon = strrchr(l, ':');
			assert_non_null(colon);
			*colon = '\0';
			unsigned want = (unsigned)strtoul(colon + 1, NULL, 10);
			assert_true(idx < nfr);
			assert_string_equal(fr[idx].name, name);
			assert_string_equal(fr[idx].file, l);
			assert_int_equal(fr[idx].line, want);
			if (idx == 0) {
				const char *file;
				unsigned line;
				assert_true(sym_srcline(d, vaddr_to_off(bin, cur), &file, &line));
				assert_string_equal(file, l);
				assert_int_equal(line, want);
			}
			idx++;
			name = NULL;
		}
		assert_int_equal(idx, nfr);
		free(out);
	}
	assert_true(checked > 20);
	assert_true(inlined > 0);      /* mix() is always_inline */

	/* perf's srcline text */
	char buf[256];
	uint64_t a = vaddr_to_off(bin, nm_value(bin, "work_cold"));
	const char *file;
	unsigned line;
	assert_true(sym_srcline(d, a, &file, &line));
	char want[64];
	snprintf(want, sizeof(want), "prog.c:%u", line);
	assert_string_equal(sym_srcline_str(d, a, false, buf, sizeof(buf)), want);
	char full[1024];
	snprintf(full, sizeof(full), "%s:%u", file, line);
	assert_string_equal(sym_srcline_str(d, a, true, buf, sizeof(buf)), full);

	/* no line for a PLT entry: "name@plt+off" (addr2line knows no symbol there) */
	char *pl = run("objdump -d -j .plt '%s' | sed -n 's/^0*\\([0-9a-f]*\\) <\\(getppid@plt\\)>:$/\\1/p'", bin);
	uint64_t plt = vaddr_to_off(bin, strtoull(pl, NULL, 16));
	free(pl);
	assert_string_equal(sym_srcline_str(d, plt + 6, false, buf, sizeof(buf)), "getppid@plt+6");
	/* no line but a symbol of the file (_init has no DWARF): addr2line says "??:?" */
	char *a2l = run("addr2line -e '%s' %#llx", bin, (unsigned long long)nm_value(bin, "_init"));
	assert_string_equal(a2l, "??:?\n");
	free(a2l);
	assert_string_equal(sym_srcline_str(d, vaddr_to_off(bin, nm_value(bin, "_init")), false, buf, sizeof(buf)), "??:0");

	/* the DWARF data released (twice: a no-op the second time): the
	 * strings handed out stay valid, and the next queries open it again */
	sym_dso_release_dwarf(d);
	sym_dso_release_dwarf(d);
	assert_int_equal(strncmp(full, file, strlen(file)), 0);   /* file still valid (ASan) */
	const char *file2;
	unsigned line2;
	assert_true(sym_srcline(d, a, &file2, &line2));
	assert_string_equal(file2, file);
	assert_int_equal(line2, line);
	assert_string_equal(sym_srcline_str(d, a, false, buf, sizeof(buf)), want);
	assert_string_equal(sym_srcline_str(d, vaddr_to_off(bin, nm_value(bin, "_init")), false, buf, sizeof(buf)), "??:0");
	sym_dso_release_dwarf(d);
	assert_true(sym_inlines(d, a, (sym_inline_frame[1]){ 0 }, 1) >= 1);
	sym_ctx_free(c);

	/* no DWARF (stripped), no symbol: dso[addr] */
	c = new_ctx("/nonexistent");
	d = sym_dso_get(c, path_of("prog.stripped"), NULL, 0, SYM_DSO_USER);
	assert_false(sym_srcline(d, a, &file, &line));
	assert_int_equal(sym_inlines(d, a, (sym_inline_frame[1]){ 0 }, 1), 0);
	snprintf(want, sizeof(want), "prog.stripped[%llx]",
		 (unsigned long long)nm_value(bin, "work_cold"));
	assert_string_equal(sym_srcline_str(d, a, false, buf, sizeof(buf)), want);
	sym_ctx_free(c);

	const char *ks = path_of("kallsyms.sl");
	FILE *fk = fopen(ks, "w");
	assert_non_null(fk);
	fputs("ffffffff81000000 T _text\nffffffff81000100 T do_syscall_64\nffffffff81000200 T next\n", fk);
	fclose(fk);
	sym_opts o = { .kallsyms = ks };
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	d = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_string_equal(sym_srcline_str(d, 0xffffffff81000146, false, buf, sizeof(buf)), "do_syscall_64+70");
	sym_ctx_free(c);
}

/* sym_dso_trim_dwarf over a walk of the text in address order, the DWARF
 * data released whenever it holds the lines of more than one compile unit:
 * the answers of a walk that keeps it. A file with compressed debug
 * sections is kept (opening it again would inflate them again). */
static void trim_walk(const char *name, bool compressed)
{
	const char *bin = path_of(name);
	sym_ctx *ck = new_ctx("/nonexistent"), *ct = new_ctx("/nonexistent");
	sym_dso *kept = sym_dso_get(ck, bin, NULL, 0, SYM_DSO_USER);
	sym_dso *trimmed = sym_dso_get(ct, bin, NULL, 0, SYM_DSO_USER);
	uint64_t lo = UINT64_MAX, hi = 0;
	const char *fns[] = { "main", "unit1", "unit2", "unit3", "unit4", "unit5", "unit6", "unit7", "unit8" };
	for (size_t i = 0; i < sizeof(fns) / sizeof(*fns); i++) {
		uint64_t a = vaddr_to_off(bin, nm_value(bin, fns[i]));
		lo = a < lo ? a : lo;
		hi = a > hi ? a : hi;
	}
	size_t trims = 0, lines = 0, n = 0;
	for (uint64_t a = lo; a < hi + 64; a += 2, n++) {
		const char *fk = NULL, *ft = NULL;
		unsigned lk = 0, lt = 0;
		bool rk = sym_srcline(kept, a, &fk, &lk);
		bool rt = sym_srcline(trimmed, a, &ft, &lt);
		assert_int_equal(rk, rt);
		if (rk) {
			assert_string_equal(fk, ft);
			assert_int_equal(lk, lt);
			lines++;
		}
		trims += sym_dso_trim_dwarf(trimmed, 1);
		assert_false(sym_dso_trim_dwarf(kept, 1000));
	}
	assert_true(lines * 2 > n);
	if (compressed)
		assert_int_equal(trims, 0);
	else
		assert_true(trims >= 7);      /* at each next unit: 9 units */
	sym_ctx_free(ck);
	sym_ctx_free(ct);
}

static void test_trim_dwarf(void **state)
{
	trim_walk("units", false);
	trim_walk("units.z", true);
}

/* A stripped system binary whose symbols and lines come from the separate
 * debug file in /usr/lib/debug/.build-id (python3-dbg): origin 'b'. */
static void test_debug_file(void **state)
{
	char *py = run("readlink -f /usr/bin/python3 2>/dev/null");
	py[strcspn(py, "\n")] = '\0';
	uint8_t id[20];
	proff_error err;
	int n = *py ? sym_read_build_id(py, id, sizeof(id), &err) : -1;
	char hex[41], dbg[256];
	if (n > 0) {
		sym_build_id_hex(id, (size_t)n, hex);
		snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	}
	if (n <= 0 || access(dbg, R_OK) != 0) {
		free(py);
		skip();
	}
	uint64_t v = nm_value(dbg, "_PyEval_EvalFrameDefault");
	uint64_t a = vaddr_to_off(py, v);
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, py, id, (size_t)n, SYM_DSO_USER);
	sym_info si;
	assert_true(sym_lookup(d, a + 0x40, &si));
	assert_string_equal(si.name, "_PyEval_EvalFrameDefault");
	assert_int_equal(sym_dso_origin(d), 'b');
	const char *file;
	unsigned line;
	assert_true(sym_srcline(d, a + 0x40, &file, &line));
	char *want = run("addr2line -e '%s' %#llx", dbg, (unsigned long long)(v + 0x40));
	char *disc = strstr(want, " (discriminator");
	if (disc)
		*disc = '\0';
	want[strcspn(want, "\n")] = '\0';
	char got[1024];
	snprintf(got, sizeof(got), "%s:%u", file, line);
	assert_string_equal(got, want);
	free(want);
	free(py);
	sym_ctx_free(c);
}

/* A DWARF 5 line table whose entry 1 is not the primary file (as in
 * glibc's ld.so): addr2line, so perf, names rows before a sequence's first
 * set_file by entry 0 (file1.c), later file-1 rows by entry 1 (hdr.h). */
static void test_dwarf5_initial_file(void **state)
{
	const char *bin = path_of("file1");
	uint64_t v = nm_value(bin, "f1");
	uint64_t a = vaddr_to_off(bin, v);
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	static const char *const tail[] = { "file1.c:10", "file1.c:11", "file1.c:20", "hdr.h:12" };
	for (unsigned k = 0; k < 4; k++) {
		const char *file;
		unsigned line;
		assert_true(sym_srcline(d, a + k, &file, &line));
		char got[1024];
		snprintf(got, sizeof(got), "%s:%u", file, line);
		char *want = run("addr2line -e '%s' %#llx", bin, (unsigned long long)(v + k));
		want[strcspn(want, "\n")] = '\0';
		assert_string_equal(got, want);
		size_t gl = strlen(got), tl = strlen(tail[k]);
		assert_true(gl > tl && strcmp(got + gl - tl, tail[k]) == 0 && got[gl - tl - 1] == '/');
		free(want);
	}
	sym_ctx_free(c);
}

/* ---- C++ ------------------------------------------------------------------------ */

static void test_demangle(void **state)
{
	const char *bin = path_of("progpp");
	struct { const char *mangled, *bare; } cases[] = {
		{ "_ZNK6shapes3BoxIiE3getEi", "shapes::Box<int>::get" },
		{ "_ZN6shapes5twiceIlEET_S1_", "shapes::twice<long>" },
		{ "_ZN6shapesltERKNS_3VecES2_", "shapes::operator<" },
	};
	for (int params = 0; params < 2; params++) {
		sym_opts o = { .demangle = true, .demangle_params = params, .buildid_dir = "/nonexistent" };
		sym_ctx *c;
		proff_error err;
		assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
		sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			uint64_t a = vaddr_to_off(bin, nm_value(bin, cases[i].mangled));
			sym_info si;
			assert_true(sym_lookup(d, a, &si));
			if (params) {
				char *full = run("echo '%s' | c++filt", cases[i].mangled);
				full[strcspn(full, "\n")] = '\0';
				assert_string_equal(si.name, full);
				free(full);
			} else {
				assert_string_equal(si.name, cases[i].bare);
			}
		}
		sym_ctx_free(c);
	}
	/* demangling off: the ELF name */
	sym_opts o = { .demangle = false, .buildid_dir = "/nonexistent" };
	sym_ctx *c;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_dso *d = sym_dso_get(c, bin, NULL, 0, SYM_DSO_USER);
	sym_info si;
	assert_true(sym_lookup(d, vaddr_to_off(bin, nm_value(bin, cases[0].mangled)), &si));
	assert_string_equal(si.name, cases[0].mangled);
	sym_ctx_free(c);
}

/* internal, exported by the library for this test */
char *sym_demangle(const char *name, bool with_params);

/* Rust legacy names: the hash goes, escapes are decoded (by construction of
 * the Rust legacy mangling); non-mangled names are left alone. */
static void test_demangle_rust(void **state)
{
	struct { const char *in, *out; } cases[] = {
		{ "_ZN4core3fmt5write17h0123456789abcdefE", "core::fmt::write" },
		{ "_ZN60_$LT$alloc..vec..Vec$LT$T$GT$$u20$as$u20$core..ops..Drop$GT$4drop17h1234567890abcdefE",
		  "<alloc::vec::Vec<T> as core::ops::Drop>::drop" },
		{ "_ZN3std2rt10lang_start28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
		  "std::rt::lang_start::{{closure}}" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		for (int params = 0; params < 2; params++) {
			char *d = sym_demangle(cases[i].in, params);
			assert_non_null(d);
			assert_string_equal(d, cases[i].out);
			free(d);
		}
	}
	assert_null(sym_demangle("main", false));
	assert_null(sym_demangle("_Z", false));
	assert_null(sym_demangle("_Zfoo(", true));
}

/* ---- kallsyms ---------------------------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_kallsyms(void **state)
{
	const char *ks = path_of("kallsyms");
	write_file(ks,
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81000000 T _text\n"
		   "ffffffff81000100 t do_thing\n"
		   "ffffffff81000180 T do_syscall_64\n"
		   "ffffffff81000200 W weak_one\n"
		   "ffffffff81000300 r not_text\n"
		   "ffffffff81000400 T last_kernel\n"
		   "ffffffffc0000000 t mod_fn\t[mymod]\n"
		   "ffffffffc0000040 T mod_other\t[mymod]\n");
	sym_opts o = { .kallsyms = ks };
	sym_ctx *c;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_dso *k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	sym_info si;
	assert_true(sym_lookup(k, 0xffffffff81000190, &si));
	assert_string_equal(si.name, "do_syscall_64");
	assert_int_equal(si.start, 0xffffffff81000180);
	assert_int_equal(si.end, 0xffffffff81000200);
	assert_true(sym_lookup(k, 0xffffffff81000100, &si));
	assert_string_equal(si.name, "do_thing");
	/* 'r' is not kept: weak_one extends to the next kept symbol */
	assert_true(sym_lookup(k, 0xffffffff81000350, &si));
	assert_string_equal(si.name, "weak_one");
	/* the last kernel symbol ends at the next page boundary + 4096 */
	assert_true(sym_lookup(k, 0xffffffff81001fff, &si));
	assert_string_equal(si.name, "last_kernel");
	assert_false(sym_lookup(k, 0xffffffff81002000, &si));
	assert_false(sym_lookup(k, 0xffffffffc0000000, &si));   /* a module's */
	assert_int_equal(sym_dso_origin(k), 'k');
	sym_dso *m = sym_dso_get(c, "[mymod]", NULL, 0, SYM_DSO_MODULE);
	assert_true(sym_lookup(m, 0xffffffffc0000010, &si));
	assert_string_equal(si.name, "mod_fn");
	sym_dso *m2 = sym_dso_get(c, "/lib/modules/x/kernel/mymod.ko.xz", NULL, 0, SYM_DSO_MODULE);
	assert_true(sym_lookup(m2, 0xffffffffc0000050, &si));
	assert_string_equal(si.name, "mod_other");
	sym_ctx_free(c);

	/* relocation: recorded _text 0x1000 above the file's */
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_kernel_set_ref(c, 0xffffffff81001000);
	k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_true(sym_lookup(k, 0xffffffff81001190, &si));
	assert_string_equal(si.name, "do_syscall_64");
	assert_int_equal(si.start, 0xffffffff81001180);
	sym_ctx_free(c);

	/* kptr_restrict: all zero -> no symbols, no error */
	write_file(ks, "0000000000000000 T _text\n0000000000000000 T do_syscall_64\n");
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_false(sym_dso_has_symbols(k));
	assert_false(sym_lookup(k, 0, &si));
	sym_ctx_free(c);

	/* malformed file: no symbols, no crash */
	write_file(ks, "zzzz\n\n ffff T\n");
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_false(sym_dso_has_symbols(k));
	sym_ctx_free(c);
	/* ... a bad digit among sixteen (each of the four groups) ... */
	for (int at = 0; at < 16; at += 5) {
		char line[] = "ffffffff81000000 T do_syscall_64\n";
		line[at] = at % 2 ? 'g' : ' ';
		write_file(ks, line);
		assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
		k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
		assert_false(sym_dso_has_symbols(k));
		sym_ctx_free(c);
	}
	/* ... and upper-case digits are digits */
	write_file(ks, "FFFFFFFF81000000 T _text\nFFFFFFFF810001A0 T Upper\n");
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_true(sym_lookup(k, 0xffffffff810001a8, &si));
	assert_string_equal(si.name, "Upper");
	assert_int_equal(si.start, 0xffffffff810001a0);
	sym_ctx_free(c);

	/* a file read in many pieces (20,000 lines, ~1 MB), the last line without
	 * a newline: every symbol found, whatever buffer boundary it straddled */
	{
		FILE *kf = fopen(ks, "w");
		assert_non_null(kf);
		fprintf(kf, "ffffffff80fff000 T _text\n");
		for (int i = 0; i < 20000; i++)
			fprintf(kf, "%016llx %c sym_number_%d_with_a_longer_name_to_fill_the_buffers%s",
				0xffffffff81000000ULL + 0x40ULL * (unsigned)i, i % 3 ? 't' : 'T', i, i < 19999 ? "\n" : "");
		fclose(kf);
		assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
		k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
		for (int i = 0; i < 20000; i++) {
			char want[96];
			snprintf(want, sizeof(want), "sym_number_%d_with_a_longer_name_to_fill_the_buffers", i);
			assert_true(sym_lookup(k, 0xffffffff81000000ULL + 0x40ULL * (unsigned)i + 8, &si));
			assert_string_equal(si.name, want);
		}
		assert_true(sym_lookup(k, 0xffffffff81000000ULL + 0x40ULL * 19999, &si));
		assert_string_equal(si.name, "sym_number_19999_with_a_longer_name_to_fill_the_buffers");
		sym_ctx_free(c);
	}

	/* a kernel other than the recorded one: no /proc/kallsyms */
	sym_opts o2 = { .recorded_osrelease = "0.0.0-not-this-kernel", .buildid_dir = "/nonexistent" };
	assert_int_equal(sym_ctx_new(&o2, &c, &err), 0);
	k = sym_dso_get(c, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	assert_false(sym_dso_has_symbols(k));
	sym_ctx_free(c);
}

static void test_symfs(void **state)
{
	/* the recorded path only exists under --symfs DIR */
	char *out = run("set -e; cd '%s'; mkdir -p symfs/opt/app; cp prog symfs/opt/app/prog && echo ok", g_dir);
	assert_string_equal(out, "ok\n");
	free(out);
	uint8_t id[20];
	size_t n = file_build_id(path_of("prog"), id);
	sym_opts o = { .demangle = true, .symfs = path_of("symfs"), .buildid_dir = "/nonexistent" };
	sym_ctx *c;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_dso *d = sym_dso_get(c, "/opt/app/prog", id, n, SYM_DSO_USER);
	sym_info si;
	assert_true(sym_lookup(d, vaddr_to_off(path_of("prog"), nm_value(path_of("prog"), "main")), &si));
	assert_string_equal(si.name, "main");
	assert_int_equal(sym_dso_origin(d), 'd');
	assert_string_equal(sym_dso_long_name(d), "/opt/app/prog");
	sym_ctx_free(c);

	/* perf: --symfs DIR moves the build-id cache to DIR/.debug, over
	 * --buildid-dir: a path found nowhere else is read from there */
	char hex[41];
	sym_build_id_hex(id, n, hex);
	out = run("set -e; cd '%s'; mkdir -p symfs/.debug/.build-id/%.2s; cp prog symfs/.debug/.build-id/%.2s/%s && echo ok",
		  g_dir, hex, hex, hex + 2);
	assert_string_equal(out, "ok\n");
	free(out);
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	d = sym_dso_get(c, "/opt/gone/prog", id, n, SYM_DSO_USER);
	assert_true(sym_lookup(d, vaddr_to_off(path_of("prog"), nm_value(path_of("prog"), "main")), &si));
	assert_string_equal(si.name, "main");
	assert_int_equal(sym_dso_origin(d), 'B');
	sym_ctx_free(c);
}

/* Broken files: no symbols, never a crash. */
static void test_bad_files(void **state)
{
	char *out = run("set -e; cd '%s'; head -c 3000 prog > trunc; head -c 64 prog > tiny; "
			"printf 'not an elf at all' > text; : > empty; "
			"dd if=/dev/urandom of=noise bs=1k count=16 2>/dev/null; "
			"cp prog flipped; printf '\\377\\377\\377\\377' | dd of=flipped bs=1 seek=40 conv=notrunc 2>/dev/null; "
			"echo ok", g_dir);
	assert_string_equal(out, "ok\n");
	free(out);
	const char *names[] = { "trunc", "tiny", "text", "empty", "noise", "flipped" };
	sym_ctx *c = new_ctx("/nonexistent");
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		sym_dso *d = sym_dso_get(c, path_of(names[i]), NULL, 0, SYM_DSO_USER);
		sym_info si;
		const char *file;
		unsigned line;
		sym_inline_frame fr[4];
		char buf[256];
		for (uint64_t a = 0; a < 0x3000; a += 0x101) {
			(void)sym_lookup(d, a, &si);
			(void)sym_srcline(d, a, &file, &line);
			(void)sym_inlines(d, a, fr, 4);
			(void)sym_srcline_str(d, a, false, buf, sizeof(buf));
		}
		uint8_t id[20];
		proff_error err;
		(void)sym_read_build_id(path_of(names[i]), id, sizeof(id), &err);
	}
	sym_ctx_free(c);
}

/* [vdso]: the running image, checked against nm on a dump of it */
static void test_vdso(void **state)
{
	char *out = run("grep '\\[vdso\\]' /proc/self/maps | head -1");
	unsigned long lo, hi;
	if (sscanf(out, "%lx-%lx", &lo, &hi) != 2) {
		free(out);
		skip();
	}
	free(out);
	/* our own mapping (the child's differs only by address) */
	FILE *m = fopen("/proc/self/maps", "r");
	assert_non_null(m);
	char line[512];
	lo = hi = 0;
	while (fgets(line, sizeof(line), m))
		if (strstr(line, "[vdso]"))
			sscanf(line, "%lx-%lx", &lo, &hi);
	fclose(m);
	assert_true(hi > lo);
	FILE *f = fopen(path_of("vdso.so"), "wb");
	assert_non_null(f);
	assert_int_equal(fwrite((void *)lo, 1, hi - lo, f), hi - lo);
	fclose(f);
	uint8_t id[20];
	proff_error err;
	int n = sym_read_build_id(path_of("vdso.so"), id, sizeof(id), &err);
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, "[vdso]", n > 0 ? id : NULL, n > 0 ? (size_t)n : 0, SYM_DSO_VDSO);
	assert_true(sym_dso_has_symbols(d));
	out = run("nm -D '%s' | awk '$2 == \"T\" {print $1, $3}'", path_of("vdso.so"));
	int seen = 0;
	for (char *sv = NULL, *l = strtok_r(out, "\n", &sv); l; l = strtok_r(NULL, "\n", &sv)) {
		char name[128];
		unsigned long long v;
		if (sscanf(l, "%llx %127s", &v, name) != 2)
			continue;
		char *at = strchr(name, '@');
		if (at)
			*at = '\0';
		sym_info si;
		assert_true(sym_lookup(d, vaddr_to_off(path_of("vdso.so"), v), &si));
		/* aliases (clock_gettime / __vdso_clock_gettime): one of them */
		assert_true(strstr(si.name, name) || strstr(name, si.name));
		char buf[256], want[256];
		snprintf(want, sizeof(want), "%s+1", si.name);
		assert_string_equal(sym_srcline_str(d, si.start + 1, false, buf, sizeof(buf)), want);
		seen++;
	}
	free(out);
	assert_true(seen >= 2);
	assert_int_equal(sym_dso_origin(d), 'd');
	if (n > 0) {
		/* perf's cache layout for the vdso: [vdso]/<id>/vdso */
		char hex[41];
		sym_build_id_hex(id, (size_t)n, hex);
		out = run("set -e; cd '%s'; mkdir -p vcache/[vdso]/%s vcache/.build-id/%.2s; "
			  "cp vdso.so vcache/[vdso]/%s/vdso; ln -s '../../[vdso]/%s' vcache/.build-id/%.2s/%s; echo ok",
			  g_dir, hex, hex, hex, hex, hex, hex + 2);
		assert_string_equal(out, "ok\n");
		free(out);
		sym_ctx *vc = new_ctx(path_of("vcache"));
		sym_dso *vd = sym_dso_get(vc, "[vdso]", id, (size_t)n, SYM_DSO_VDSO);
		assert_true(sym_dso_has_symbols(vd));
		assert_int_equal(sym_dso_origin(vd), 'B');
		sym_ctx_free(vc);
		/* another vdso's build-id: the running image is not used */
		id[0] ^= 0xff;
		sym_dso *x = sym_dso_get(c, "[vdso]", id, (size_t)n, SYM_DSO_VDSO);
		assert_false(sym_dso_has_symbols(x));
	}
	sym_ctx_free(c);
}

static void test_perf_map(void **state)
{
	/* the name must be /tmp/perf-PID.map: use --symfs to keep it private */
	char *out = run("set -e; cd '%s'; mkdir -p pm/tmp; "
			"printf '7f0000001000 40 jit_one\\n7f0000001040 20 Interp::run(int)\\nbad line\\n' "
			"> pm/tmp/perf-4242.map && echo ok", g_dir);
	assert_string_equal(out, "ok\n");
	free(out);
	sym_opts o = { .symfs = path_of("pm"), .buildid_dir = "/nonexistent" };
	sym_ctx *c;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &c, &err), 0);
	sym_dso *d = sym_dso_get(c, "/tmp/perf-4242.map", NULL, 0, SYM_DSO_ANON);
	sym_info si;
	assert_true(sym_lookup(d, 0x7f0000001010, &si));
	assert_string_equal(si.name, "jit_one");
	assert_true(sym_lookup(d, 0x7f000000105f, &si));
	assert_string_equal(si.name, "Interp::run(int)");
	assert_false(sym_lookup(d, 0x7f0000001060, &si));
	assert_int_equal(sym_dso_origin(d), 'j');
	sym_ctx_free(c);
}

static void test_anon(void **state)
{
	sym_ctx *c = new_ctx("/nonexistent");
	sym_dso *d = sym_dso_get(c, "//anon", NULL, 0, SYM_DSO_ANON);
	sym_info si;
	assert_false(sym_lookup(d, 0x1000, &si));
	assert_string_equal(sym_dso_short_name(d), "//anon");
	sym_dso *e = sym_dso_get(c, "/does/not/exist.so", NULL, 0, SYM_DSO_USER);
	assert_false(sym_dso_has_symbols(e));
	assert_string_equal(sym_dso_short_name(e), "exist.so");
	sym_ctx_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_elf_lookup),
		cmocka_unit_test(test_plt),
		cmocka_unit_test(test_srcline_no_symbol),
		cmocka_unit_test(test_srcline_file_symbol),
		cmocka_unit_test(test_build_id),
		cmocka_unit_test(test_stripped_and_cache),
		cmocka_unit_test(test_srcline_inlines),
		cmocka_unit_test(test_trim_dwarf),
		cmocka_unit_test(test_debug_file),
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_demangle_rust),
		cmocka_unit_test(test_kallsyms),
		cmocka_unit_test(test_symfs),
		cmocka_unit_test(test_bad_files),
		cmocka_unit_test(test_vdso),
		cmocka_unit_test(test_perf_map),
		cmocka_unit_test(test_anon),
		cmocka_unit_test(test_dwarf5_initial_file),
	};
	return cmocka_run_group_tests_name("symbol", tests, setup, teardown);
}
