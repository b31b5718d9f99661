/* fuzz_ksyms.c — libFuzzer target for the kernel's symbol files
 * (lib/symbol/kallsyms.c, kmodule.c): the input is written both as a
 * kallsyms file (--kallsyms) and as a kernel module's .ko under a symfs
 * (SYMFS/lib/modules/r/m.ko), then the kernel and two module dsos (the .ko's
 * path and "[m]", which takes kallsyms' "\t[m]" lines) are loaded through a
 * symbol context as a report loads them, with lookups at a few addresses.
 * Any crash, hang, leak or sanitizer report is a bug. Built and run by
 * tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proff/symbol.h"

static char dir[64], ks[96], ko[128], koxz[128], kogz[128];

static void cleanup(void)
{
	char tmp[128];
	unlink(ks);
	unlink(ko);
	unlink(koxz);
	unlink(kogz);
	const char *sub[] = { "/lib/modules/r", "/lib/modules", "/lib", "" };
	for (size_t i = 0; i < 4; i++) {
		snprintf(tmp, sizeof(tmp), "%s%s", dir, sub[i]);
		rmdir(tmp);
	}
}

static void put(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
}

static void lookups(sym_dso *d, const uint64_t *at, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		sym_info si;
		if (sym_lookup(d, at[i], &si) && !si.name)
			abort();
	}
	(void)sym_dso_problem(d);
	(void)sym_dso_origin(d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/proff-fuzz-ksyms.%d", (int)getpid());
		const char *sub[] = { "", "/lib", "/lib/modules", "/lib/modules/r" };
		for (size_t i = 0; i < 4; i++) {
			char tmp[128];
			snprintf(tmp, sizeof(tmp), "%s%s", dir, sub[i]);
			if (mkdir(tmp, 0700) < 0 && access(tmp, W_OK) < 0)
				abort();
		}
		snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
		snprintf(ko, sizeof(ko), "%s/lib/modules/r/m.ko", dir);
		snprintf(koxz, sizeof(koxz), "%s/lib/modules/r/x.ko.xz", dir);
		snprintf(kogz, sizeof(kogz), "%s/lib/modules/r/g.ko.gz", dir);
		atexit(cleanup);
	}
	put(ks, data, size);
	put(ko, data, size);
	put(koxz, data, size);     /* the same bytes as compressed modules */
	put(kogz, data, size);
	sym_opts o = { .symfs = dir, .kallsyms = ks };
	sym_ctx *ctx;
	proff_error err;
	if (sym_ctx_new(&o, &ctx, &err) < 0)
		return 0;
	const uint64_t base = 0xffffffffc0000000ull;
	uint64_t at[6] = { base, base + 0x10, base + 0x40, base + 0x1000, 0xffffffff81000000ull, 0 };
	/* the addresses the input's first lines name */
	if (size >= 16) {
		uint64_t a = 0;
		for (size_t i = 0; i < 16; i++) {
			unsigned c = data[i];
			a = a << 4 | (c >= '0' && c <= '9' ? c - '0' : (c | 32) >= 'a' && (c | 32) <= 'f' ? (c | 32) - 'a' + 10 : 0);
		}
		at[5] = a;
	}
	sym_kernel_set_ref(ctx, 0xffffffff81000000ull);
	sym_dso *k = sym_dso_get(ctx, "[kernel.kallsyms]", NULL, 0, SYM_DSO_KERNEL);
	sym_dso *m = sym_dso_get_kmodule(ctx, "/lib/modules/r/m.ko", NULL, 0, base);
	sym_dso *b = sym_dso_get_kmodule(ctx, "[m]", NULL, 0, base);
	sym_dso *zx = sym_dso_get_kmodule(ctx, "/lib/modules/r/x.ko.xz", NULL, 0, base);
	sym_dso *zg = sym_dso_get_kmodule(ctx, "/lib/modules/r/g.ko.gz", NULL, 0, base);
	if (zx)
		lookups(zx, at, 6);
	if (zg)
		lookups(zg, at, 6);
	if (k)
		lookups(k, at, 6);
	if (m) {
		lookups(m, at, 6);
		(void)sym_dso_kmod_pgoff(m);
	}
	if (b)
		lookups(b, at, 6);
	sym_ctx_free(ctx);
	return 0;
}
