/* test_config.c — unit tests of the config-file object (lib/util/config.c):
 * two configs loaded from different files live side by side (the library
 * keeps none of its own), the last value of a key wins, keys are
 * case-insensitive, booleans, a missing file reads as empty, a NULL config
 * reads as empty, and a malformed line is an error naming the file, the
 * line and its byte offset.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "proff/config.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void two_configs(void **state)
{
	(void)state;
	char pa[] = "/tmp/proff-cfg-a.XXXXXX", pb[] = "/tmp/proff-cfg-b.XXXXXX";
	int fa = mkstemp(pa), fb = mkstemp(pb);
	assert_true(fa >= 0 && fb >= 0);
	close(fa);
	close(fb);
	write_file(pa, "[report]\n\tchildren = false\n[Diff]\n  order = 1\n  order = 2 # the last wins\n");
	write_file(pb, "[report]\nchildren = yes\n[hist]\npercentage = \"relative\"\n[x]\nflag\n");
	proff_config *a = pf_config_new(), *b = pf_config_new();
	assert_non_null(a);
	assert_non_null(b);
	proff_error e = { 0 };
	assert_int_equal(pf_config_load(a, pa, &e), 0);
	assert_int_equal(pf_config_load(b, pb, &e), 0);
	/* each keeps its own keys */
	assert_false(pf_config_bool(a, "report.children", true));
	assert_true(pf_config_bool(b, "report.children", false));
	assert_string_equal(pf_config_get(a, "diff.order"), "2");
	assert_string_equal(pf_config_get(a, "DIFF.Order"), "2");
	assert_null(pf_config_get(b, "diff.order"));
	assert_string_equal(pf_config_get(b, "hist.percentage"), "relative");
	assert_null(pf_config_get(a, "hist.percentage"));
	assert_true(pf_config_bool(b, "x.flag", false));       /* a bare name is true */
	assert_true(pf_config_bool(a, "diff.order", true));    /* "2": not a boolean, the default */
	/* a NULL config is an empty one */
	assert_null(pf_config_get(NULL, "report.children"));
	assert_true(pf_config_bool(NULL, "report.children", true));
	/* reloading replaces; a missing file is an empty config, not an error */
	assert_int_equal(pf_config_load(a, "/nonexistent/proff-config", &e), 0);
	assert_null(pf_config_get(a, "diff.order"));
	assert_string_equal(pf_config_get(b, "hist.percentage"), "relative");
	pf_config_free(a);
	pf_config_free(b);
	pf_config_free(NULL);
	unlink(pa);
	unlink(pb);
}

static void malformed(void **state)
{
	(void)state;
	char p[] = "/tmp/proff-cfg-bad.XXXXXX";
	int fd = mkstemp(p);
	assert_true(fd >= 0);
	close(fd);
	write_file(p, "[report]\nchildren = false\n[diff\n");
	proff_config *c = pf_config_new();
	assert_non_null(c);
	proff_error e = { 0 };
	assert_true(pf_config_load(c, p, &e) < 0);
	assert_int_equal(e.code, PROFF_EFORMAT);
	assert_string_equal(e.file, p);
	assert_int_equal(e.offset, 26);      /* the third line */
	assert_non_null(strstr(e.msg, "line 3"));
	/* the keys before the bad line stay (the CLI reports the error) */
	assert_false(pf_config_bool(c, "report.children", true));
	pf_config_free(c);
	unlink(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_configs),
		cmocka_unit_test(malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
