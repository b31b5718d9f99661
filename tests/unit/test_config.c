/* test_config.c — unit tests of the config-file object (lib/util/config.c):
 * two configs loaded from different files live side by side (the library
 * keeps none of its own), the last value of a key wins, keys are
 * case-insensitive, booleans, a missing file reads as empty, a NULL config
 * reads as empty, a malformed line is an error naming the file, the
 * line and its byte offset, and the user's files (perf's sections of
 * perf's file, then proff's, which wins) load into one object that keeps
 * each value's file and line, and why perf's file was left out.
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

static void perf_then_proff(void **state)
{
	(void)state;
	char pp[] = "/tmp/proff-cfg-perf.XXXXXX", po[] = "/tmp/proff-cfg-own.XXXXXX";
	int fp = mkstemp(pp), fo = mkstemp(po);
	assert_true(fp >= 0 && fo >= 0);
	close(fp);
	close(fo);
	write_file(pp, "[report]\nchildren = false\npercent-limit = 5\n[core]\npager = perfs\n");
	write_file(po, "# proff's\n[report]\nchildren = true\n");
	assert_int_equal(setenv("PERF_CONFIG", pp, 1), 0);
	assert_int_equal(setenv("PROFF_CONFIG", po, 1), 0);
	proff_config *c = pf_config_new();
	assert_non_null(c);
	proff_error e = { 0 };
	assert_int_equal(pf_config_load_default(c, &e), 0);
	assert_true(pf_config_bool(c, "report.children", false));       /* proff's wins */
	assert_string_equal(pf_config_get(c, "report.percent-limit"), "5");
	assert_null(pf_config_get(c, "core.pager"));                    /* not a section proff reads of perf's */
	assert_null(pf_config_note(c));
	const char *file = NULL;
	unsigned line = 0;
	assert_true(pf_config_where(c, "report.children", &file, &line));
	assert_string_equal(file, po);
	assert_int_equal(line, 3);
	assert_true(pf_config_where(c, "REPORT.percent-limit", &file, &line));
	assert_string_equal(file, pp);
	assert_int_equal(line, 3);
	assert_false(pf_config_where(c, "diff.order", &file, &line));
	assert_false(pf_config_where(NULL, "report.children", &file, &line));
	/* a perf file proff cannot read is left out whole, and said why */
	write_file(pp, "[report]\npercent-limit = 5\n[hist\n");
	assert_int_equal(pf_config_load_default(c, &e), 0);
	assert_null(pf_config_get(c, "report.percent-limit"));
	assert_true(pf_config_bool(c, "report.children", false));
	const char *note = pf_config_note(c);
	assert_non_null(note);
	assert_non_null(strstr(note, pp));
	assert_non_null(strstr(note, "line 3"));
	assert_non_null(strstr(note, "perf's config file ignored"));
	/* a plain load forgets the note */
	assert_int_equal(pf_config_load(c, po, &e), 0);
	assert_null(pf_config_note(c));
	assert_null(pf_config_note(NULL));
	assert_int_equal(pf_config_parse_bool("On"), 1);
	assert_int_equal(pf_config_parse_bool("0"), 0);
	assert_int_equal(pf_config_parse_bool("maybe"), -1);
	pf_config_free(c);
	unsetenv("PERF_CONFIG");
	unsetenv("PROFF_CONFIG");
	unlink(pp);
	unlink(po);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(two_configs),
		cmocka_unit_test(malformed),
		cmocka_unit_test(perf_then_proff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
