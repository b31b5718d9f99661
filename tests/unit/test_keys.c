/* test_keys.c — the sort keys' catalogue (lib/hist/keys.c) keeps its
 * invariants: every key has a name, a header and every function the engine,
 * the printers and the diff call; names and aliases are unique and found;
 * a key's id is its index; the fields the engine reads are consistent
 * (lazy keys have their values made before the pass, keys without a replay
 * field give one). The man page's list is checked by tests/cli/man.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "proff/hist.h"

static void test_every_key_complete(void **state)
{
	(void)state;
	assert_true(hist_nr_keys >= HK__NAMED);
	assert_true(hist_nr_keys <= HIST_KEYS_MAX);
	for (int i = 0; i < hist_nr_keys; i++) {
		const hist_key_def *k = &hist_keys[i];
		print_message("key %d: %s\n", i, k->name ? k->name : "(none)");
		assert_non_null(k->name);
		assert_true(k->name[0] != '\0');
		assert_non_null(k->header);
		assert_true(k->header[0] != '\0');
		assert_int_equal(k->id, i);
		assert_non_null(k->words);
		assert_non_null(k->cmp);
		assert_non_null(k->perf_cmp);
		assert_non_null(k->width);
		assert_non_null(k->print);
		assert_non_null(k->value);
		assert_true(k->collapse == HKC_NONE || k->collapse == HKC_ALWAYS || k->collapse == HKC_DIFF);
		/* perf computes a lazy key's value while comparing: proff makes
		 * it before the pass (srclines first, on one thread) */
		if (k->needs & HKN_LAZY)
			assert_true(k->needs & HKN_SRCLINE);
		/* a value only the location has is a location key */
		if (k->needs & (HKN_SRCLINE | HKN_SUBSYM))
			assert_true(k->needs & HKN_LOC);
		if (k->perf_str)
			assert_non_null(k->perf_value);
	}
}

static void test_names_unique_and_found(void **state)
{
	(void)state;
	for (int i = 0; i < hist_nr_keys; i++) {
		const char *names[2] = { hist_keys[i].name, hist_keys[i].alias };
		for (int a = 0; a < 2; a++) {
			if (!names[a])
				continue;
			assert_ptr_equal(hist_key_find(names[a]), &hist_keys[i]);
			for (int j = 0; j < hist_nr_keys; j++) {
				if (j == i)
					continue;
				assert_string_not_equal(names[a], hist_keys[j].name);
				if (hist_keys[j].alias)
					assert_string_not_equal(names[a], hist_keys[j].alias);
			}
		}
	}
	assert_null(hist_key_find("no-such-key"));
}

/* every key parses alone (label as label:NAME), and once when given twice */
static void test_every_key_parses(void **state)
{
	(void)state;
	for (int i = 0; i < hist_nr_keys; i++) {
		char spec[64];
		int keys[HIST_MAX_KEYS];
		proff_error err;
		proff_err_clear(&err);
		const char *nm = hist_keys[i].name;
		snprintf(spec, sizeof(spec), i == HK_LABEL ? "%s:x" : "%s", nm);
		int n = hist_parse_sort(spec, keys, HIST_MAX_KEYS, &err);
		print_message("%s: %d\n", spec, n);
		assert_int_equal(n, 1);
		assert_int_equal(keys[0], i);
		snprintf(spec, sizeof(spec), i == HK_LABEL ? "%s:x,%s:x" : "%s,%s", nm, nm);
		assert_int_equal(hist_parse_sort(spec, keys, HIST_MAX_KEYS, &err), 1);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_key_complete),
		cmocka_unit_test(test_names_unique_and_found),
		cmocka_unit_test(test_every_key_parses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
