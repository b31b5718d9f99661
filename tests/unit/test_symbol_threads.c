/* test_symbol_threads.c — one symbolizer context used by two threads, as
 * the two halves of a split read use it (lib/model/profile.c load_split).
 *
 * A dso without a recorded build-id reads the file's own while its symbols
 * load; a second thread that looks the dso up meanwhile must not depend on
 * that (the dso's identity is fixed when it is made). The threads here
 * hand over through a relaxed flag on purpose — no lock orders the loading
 * thread's writes before the other's lookup — so ThreadSanitizer (tests/run.sh
 * runs this test in the TSan build) reports any field both touch. Both then
 * look symbols up, one waiting on the other's load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proff/symbol.h"

static sym_ctx *g_ctx;
static char g_exe[4096];
static atomic_int g_stage;
static sym_dso *g_d1;
static uint64_t g_addr;

static void *loader(void *arg)
{
	(void)arg;
	g_d1 = sym_dso_get(g_ctx, g_exe, NULL, 0, SYM_DSO_USER);
	sym_info si;
	if (g_d1)
		(void)sym_lookup(g_d1, g_addr, &si);      /* loads: reads the file's build-id */
	atomic_store_explicit(&g_stage, 1, memory_order_relaxed);
	return NULL;
}

static void *looker(void *arg)
{
	(void)arg;
	sym_dso *d = sym_dso_get(g_ctx, g_exe, NULL, 0, SYM_DSO_USER);
	sym_info si;
	if (d)
		(void)sym_lookup(d, g_addr, &si);
	return d;
}

static void test_shared_ctx(void **state)
{
	(void)state;
	ssize_t n = readlink("/proc/self/exe", g_exe, sizeof(g_exe) - 1);
	assert_true(n > 0);
	g_exe[n] = '\0';
	sym_opts o;
	memset(&o, 0, sizeof(o));
	o.demangle = true;
	proff_error err;
	assert_int_equal(sym_ctx_new(&o, &g_ctx, &err), 0);
	/* an address inside this program's text: the map address of
	 * test_shared_ctx is its file offset for a PIE's first segment */
	g_addr = 0x1000;
	atomic_store(&g_stage, 0);
	pthread_t t1, t2;
	assert_int_equal(pthread_create(&t1, NULL, loader, NULL), 0);
	while (atomic_load_explicit(&g_stage, memory_order_relaxed) == 0)
		sched_yield();
	sym_dso *d2 = sym_dso_get(g_ctx, g_exe, NULL, 0, SYM_DSO_USER);
	void *d3;
	assert_int_equal(pthread_create(&t2, NULL, looker, NULL), 0);
	assert_int_equal(pthread_join(t1, NULL), 0);
	assert_int_equal(pthread_join(t2, &d3), 0);
	assert_non_null(g_d1);
	assert_ptr_equal(d2, g_d1);      /* the same dso for both threads */
	assert_ptr_equal(d3, g_d1);
	assert_true(sym_dso_has_symbols(g_d1));
	sym_ctx_free(g_ctx);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_shared_ctx),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
