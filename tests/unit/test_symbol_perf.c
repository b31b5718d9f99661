/* test_symbol_perf.c — the symbolizer against real perf (oracle test).
 *
 * Builds tests/data/symbol/shapes.cpp, records it with `perf record` into a
 * private build-id cache, and checks every row of `perf report -v -s
 * dso,sym,srcline` (address, origin char, symbol with parameters, srcline)
 * and of `perf report -s dso,sym` (symbol without parameters) against
 * sym_lookup / sym_dso_origin / sym_srcline_str on the same address. Skipped
 * when perf is missing or cannot record here.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include "proff/symbol.h"

static char g_dir[512];
static bool g_have_perf;

static int setup(void **state)
{
	if (tu_mkdtemp(g_dir, sizeof(g_dir), "symperf") < 0)
		return -1;
	const char *src = getenv("PROFF_SRCDIR");
	if (tu_sh("sh '%s/tests/data/symbol/build.sh' '%s' >/dev/null 2>&1", src && *src ? src : ".", g_dir) != 0)
		return -1;
	g_have_perf = tu_sh("cd '%s' && perf --buildid-dir '%s/cache' record -q -e cpu-clock -o p.data ./shapes "
			 ">/dev/null 2>&1 && "
			 "perf --buildid-dir '%s/cache' report -i p.data --stdio -v -s dso,sym,srcline "
			 "> rep_v.txt 2>/dev/null && "
			 "perf --buildid-dir '%s/cache' report -i p.data --stdio -s dso,sym > rep.txt 2>/dev/null && "
			 "perf buildid-list -i p.data > bids.txt 2>/dev/null",
			 g_dir, g_dir, g_dir, g_dir) == 0;
	return 0;
}

static int teardown(void **state)
{
	return tu_rmdir(g_dir);
}

typedef struct row {
	char dso[512];
	uint64_t addr;
	char origin, level;
	char name[1024];
	char srcline[512];
} row;

/* "  7.99%  DSO  0xADDR  O [.] NAME  SRCLINE" (verbose) or "  7.99%  DSO  [.] NAME" */
static bool parse_row(char *l, bool verbose, row *r)
{
	memset(r, 0, sizeof(*r));
	char *p = strchr(l, '%');
	if (!p || l[0] == '#')
		return false;
	p++;
	while (*p == ' ')
		p++;
	char *e = strstr(p, "  ");
	if (!e)
		return false;
	snprintf(r->dso, sizeof(r->dso), "%.*s", (int)(e - p), p);
	char *lv = strstr(e, "[.] ");
	if (!lv)
		lv = strstr(e, "[k] ");
	if (!lv)
		return false;
	r->level = lv[1];
	if (verbose) {
		r->addr = strtoull(e, NULL, 16);
		r->origin = lv[-2];
	}
	char *n = lv + 4;
	char *ne = strstr(n, "  ");
	size_t nl = ne ? (size_t)(ne - n) : strlen(n);
	while (nl && (n[nl - 1] == ' ' || n[nl - 1] == '\n'))
		nl--;
	snprintf(r->name, sizeof(r->name), "%.*s", (int)nl, n);
	if (ne) {
		char *s = ne;
		while (*s == ' ')
			s++;
		size_t sl = strlen(s);
		while (sl && (s[sl - 1] == ' ' || s[sl - 1] == '\n'))
			sl--;
		snprintf(r->srcline, sizeof(r->srcline), "%.*s", (int)sl, s);
	}
	return true;
}

static size_t read_rows(const char *name, bool verbose, row **out)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", g_dir, name);
	FILE *f = fopen(path, "r");
	assert_non_null(f);
	char line[4096];
	size_t n = 0, cap = 0;
	row *v = NULL;
	while (fgets(line, sizeof(line), f)) {
		row r;
		if (!parse_row(line, verbose, &r))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			v = realloc(v, cap * sizeof(*v));
			assert_non_null(v);
		}
		v[n++] = r;
	}
	fclose(f);
	*out = v;
	return n;
}

/* recorded build-id of a dso, from `perf buildid-list` */
static size_t recorded_bid(const char *dso, uint8_t *id)
{
	char path[1024], line[2048];
	snprintf(path, sizeof(path), "%s/bids.txt", g_dir);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = 0;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		char *sp = strchr(line, ' ');
		if (!sp || strcmp(sp + 1, dso) != 0)
			continue;
		for (n = 0; n < 20 && sscanf(line + 2 * n, "%2hhx", &id[n]) == 1 && line + 2 * n < sp; n++)
			;
		break;
	}
	fclose(f);
	return n;
}

static sym_dso *dso_for(sym_ctx *c, const char *name)
{
	uint8_t id[20];
	size_t n = recorded_bid(name, id);
	enum sym_dso_kind k = SYM_DSO_USER;
	if (strcmp(name, "[kernel.kallsyms]") == 0)
		k = SYM_DSO_KERNEL;
	else if (strcmp(name, "[vdso]") == 0)
		k = SYM_DSO_VDSO;
	else if (name[0] == '[')
		k = SYM_DSO_MODULE;
	return sym_dso_get(c, name, n ? id : NULL, n, k);
}

static void test_against_perf(void **state)
{
	if (!g_have_perf)
		skip();
	char cache[1024];
	snprintf(cache, sizeof(cache), "%s/cache", g_dir);
	row *rv, *rn;
	size_t nv = read_rows("rep_v.txt", true, &rv);
	size_t nn = read_rows("rep.txt", false, &rn);
	assert_true(nv >= 12);

	sym_opts ov = { .demangle = true, .demangle_params = true, .buildid_dir = cache };
	sym_opts on = { .demangle = true, .buildid_dir = cache };
	sym_ctx *cv, *cn;
	proff_error err;
	assert_int_equal(sym_ctx_new(&ov, &cv, &err), 0);
	assert_int_equal(sym_ctx_new(&on, &cn, &err), 0);
	int workload_rows = 0;
	for (size_t i = 0; i < nv; i++) {
		row *r = &rv[i];
		sym_dso *d = dso_for(cv, r->dso);
		sym_info si;
		char buf[1024];
		bool unresolved = strncmp(r->name, "0x0000", 6) == 0;
		if (unresolved) {
			assert_false(sym_lookup(d, r->addr, &si));
		} else {
			assert_true(sym_lookup(d, r->addr, &si));
			assert_string_equal(si.name, r->name);
			assert_int_equal(sym_dso_origin(d), r->origin);
		}
		/* perf cuts the last column to a width computed from the entries
		 * whose srcline was known when widths were set: compare the prefix */
		if (r->srcline[0] && strcmp(r->dso, "[unknown]") != 0) {  /* no map: perf says ??:0 */
			sym_srcline_str(d, r->addr, false, buf, sizeof(buf));
			if (strncmp(buf, r->srcline, strlen(r->srcline)) != 0)
				assert_string_equal(buf, r->srcline);
		}
		if (strstr(r->dso, "/shapes"))
			workload_rows++;
	}
	assert_true(workload_rows >= 12);

	/* without -v: names without parameters, same rows for the workload */
	size_t checked = 0;
	for (size_t i = 0; i < nn; i++) {
		if (!strstr(rn[i].dso, "shapes") || strncmp(rn[i].name, "0x0000", 6) == 0)
			continue;
		/* the verbose row with the same (unique) name prefix gives the address */
		for (size_t j = 0; j < nv; j++) {
			if (!strstr(rv[j].dso, "/shapes"))
				continue;
			sym_dso *d = dso_for(cn, rv[j].dso);
			sym_info si;
			if (!sym_lookup(d, rv[j].addr, &si) || strcmp(si.name, rn[i].name) != 0)
				continue;
			checked++;
			break;
		}
	}
	size_t shapes_rows = 0;
	for (size_t i = 0; i < nn; i++)
		shapes_rows += strstr(rn[i].dso, "shapes") && strncmp(rn[i].name, "0x0000", 6) != 0;
	assert_int_equal(checked, shapes_rows);
	assert_true(checked >= 12);
	sym_ctx_free(cv);
	sym_ctx_free(cn);
	free(rv);
	free(rn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_against_perf),
	};
	return cmocka_run_group_tests_name("symbol_perf", tests, setup, teardown);
}
