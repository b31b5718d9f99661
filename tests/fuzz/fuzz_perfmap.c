/* fuzz_perfmap.c — libFuzzer target for the JIT map reader
 * (lib/symbol/perfmap.c, symbol.c's load_perf_map): the input is parsed
 * from memory (sym_perfmap_parse: every symbol's name must lie in its line
 * and be as long as said, the counts must add up), then written as
 * SYMFS/tmp/perf-1.map and loaded through a symbol context as a report
 * loads it (--symfs SYMFS), with lookups at a few addresses the input
 * names. Any crash, hang, leak or sanitizer report is a bug. Built and run
 * by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "proff/symbol.h"

static char dir[64], path[96];

typedef struct seen {
	size_t n;
	uint64_t addr[8];
} seen;

static int on_sym(void *arg, const sym_perfmap_entry *e)
{
	seen *s = arg;
	if (strlen(e->name) != e->name_len)
		abort();
	if (s->n < 8)
		s->addr[s->n] = e->start + e->size / 2;
	s->n++;
	return 0;
}

static void cleanup(void)
{
	char tmp[96];
	unlink(path);
	snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
	rmdir(tmp);
	rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/proff-fuzz-perfmap.%d", (int)getpid());
		char tmp[96];
		snprintf(tmp, sizeof(tmp), "%s/tmp", dir);
		if ((mkdir(dir, 0700) < 0 && access(dir, W_OK) < 0) || (mkdir(tmp, 0700) < 0 && access(tmp, W_OK) < 0))
			abort();
		snprintf(path, sizeof(path), "%s/tmp/perf-1.map", dir);
		atexit(cleanup);
	}
	seen s = { 0 };
	sym_perfmap_stats st = { 0 };
	if (sym_perfmap_parse((const char *)data, size, on_sym, &s, &st) < 0)
		return 0;
	if (st.skipped + s.n != st.lines || st.loose > s.n)
		abort();

	FILE *f = fopen(path, "w");
	if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0)
		abort();
	sym_opts o = { .symfs = dir, .demangle = true };
	sym_ctx *ctx;
	proff_error err;
	if (sym_ctx_new(&o, &ctx, &err) < 0)
		return 0;
	sym_dso *d = sym_dso_get(ctx, "/tmp/perf-1.map", NULL, 0, SYM_DSO_USER);
	if (d) {
		for (size_t i = 0; i < s.n && i < 8; i++) {
			sym_info si;
			if (sym_lookup(d, s.addr[i], &si) && !si.name)
				abort();
		}
		const char *why = sym_dso_problem(d);
		if (why && (st.skipped + st.loose) == 0)
			abort();    /* a problem with nothing to say */
		char buf[256];
		sym_srcline_str(d, s.n ? s.addr[0] : 0, false, buf, sizeof(buf));
	}
	sym_ctx_free(ctx);
	return 0;
}
