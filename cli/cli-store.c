/* cli-store.c — `proff report --store URL --where SEL` and `proff diff
 * --store URL SEL_A -- SEL_B`: the store's rows (lib/store) made into the
 * hists and diff tables the file commands print, with their printers:
 * the same text, JSON and statistics as for files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli-store.h"
#include "cmds.h"
#include "proff/config.h"
#include "proff/report.h"

int cli_store_open(const char *url, bool create, store **out)
{
	store_auth auth = { 0 };
	/* credentials: the environment, else the config file; never argv */
	auth.user = getenv("PROFF_CLICKHOUSE_USER");
	auth.password = getenv("PROFF_CLICKHOUSE_PASSWORD");
	if (!auth.user)
		auth.user = pf_config_get(cli_config(), "store.user");
	if (!auth.password)
		auth.password = pf_config_get(cli_config(), "store.password");
	const char *hook = getenv("PROFF_STORE_STOP_AFTER");    /* tests: a push cut short */
	if (hook)
		auth.stop_after = !strcmp(hook, "stacks") ? 1 : !strcmp(hook, "samples") ? 2 : 0;
	proff_error err;
	proff_err_clear(&err);
	if (store_open(url, &auth, create, out, &err)) {
		cli_error(&err);
		return err.code == PROFF_EUSAGE ? EXIT_USAGE : 1;
	}
	return 0;
}

/* the sort spec's keys, checked against what a store keeps */
static int store_keys(const char *sort, store_query *q)
{
	proff_error err;
	proff_err_clear(&err);
	q->nkeys = hist_parse_sort(sort, q->keys, HIST_MAX_KEYS, &err);
	if (q->nkeys < 0) {
		cli_error(&err);
		return -1;
	}
	for (int k = 0; k < q->nkeys; k++) {
		int id = q->keys[k];
		if (id == HK_LABEL) {
			const char *l = strstr(sort, "label:");
			size_t n = l ? strcspn(l + 6, ",") : 0;
			static char name[STORE_KEY_MAX + 1];
			if (!n || n > STORE_KEY_MAX) {
				cli_errorf("--sort: label:NAME needs a label's name");
				return -1;
			}
			memcpy(name, l + 6, n);
			name[n] = '\0';
			q->label_key = name;
			continue;
		}
		if (id != HK_COMM && id != HK_DSO && id != HK_SYM && id != HK_SRCLINE) {
			cli_errorf("--sort %s: a store keeps comm, dso, sym, srcline and labels (label:NAME), not %s", sort,
				   hist_keys[id].name);
			return -1;
		}
	}
	return 0;
}

static void free_names(char **names)
{
	for (char **n = names; n && *n; n++)
		free(*n);
	free(names);
}

int cli_store_report(const char *url, char *const *where, size_t nwhere, const hist_opts *ho,
		     const report_fmt *fmt, bool children, bool json)
{
	store *s;
	store_sel sel;
	proff_error err;
	proff_err_clear(&err);
	if (store_sel_parse(&sel, where, nwhere, &err)) {
		cli_error(&err);
		return EXIT_USAGE;
	}
	store_query q = { .verbose = ho->verbose, .by_addr = true, .children = children, .groups = &sel, .ngroups = 1 };
	if (store_keys(ho->sort, &q)) {
		store_sel_free(&sel);
		return EXIT_USAGE;
	}
	int orc = cli_store_open(url, false, &s);
	if (orc) {
		store_sel_free(&sel);
		return orc;
	}
	int rc = 1;
	char **events = NULL;
	if (store_events(s, &sel, 1, &events, &err)) {
		cli_error(&err);
		goto out;
	}
	if (!events[0]) {
		cli_errorf("%s: no stored profile matches the selector", store_name(s));
		goto out;
	}
	if (!fmt->quiet && !json)
		printf("# To display the perf.data header info, please use --header/--header-only options.\n#\n#\n");
	if (json) {
		printf("{\"file\":");
		fputc('"', stdout);
		for (const char *p = store_name(s); *p; p++)
			printf(*p == '"' || *p == '\\' ? "\\%c" : "%c", *p);
		printf("\",\"events\":[\n");
	}
	rc = 0;
	for (size_t e = 0; events[e] && !rc; e++) {
		store_result *r;
		q.event = events[e];
		if (store_query_run(s, &q, &r, &err)) {
			cli_error(&err);
			rc = 1;
			break;
		}
		report_fmt f = *fmt;
		f.children = children && r->callchain;
		f.not_first_event = e > 0;
		f.cc_mode = CC_NONE;
		hist_opts o = *ho;
		o.children = f.children;
		o.callchain = false;
		hist *h;
		if (store_result_hist(r, SIZE_MAX, &o, &h, &err)) {
			cli_error(&err);
			store_result_free(r);
			rc = 1;
			break;
		}
		if (json)
			report_print_json(stdout, h, &f, e == 0);
		else
			report_print_hist(stdout, h, &f, 0);
		store_hist_free(h);
		store_result_free(r);
	}
	if (!rc) {
		if (json)
			printf("\n]}\n");
		else if (!fmt->quiet)
			printf("\n\n#\n# (Tip: compare two profiles with: proff diff before.data after.data)\n#\n");
		else
			printf("\n\n");
	}
out:
	free_names(events);
	store_sel_free(&sel);
	store_close(s);
	return rc;
}

int cli_store_diff(const char *url, const char *replicate, char *const *words, const uint32_t *group, size_t nwords,
		   const hist_opts *ho, const diff_opts *o, const diff_group_opts *g, bool json)
{
	size_t ngroups = nwords ? group[nwords - 1] + 1 : 0;
	if (ngroups < 2) {
		cli_errorf("diff --store: two selectors, SELECTOR_A -- SELECTOR_B (e.g. build=1.2 -- build=1.3)");
		return EXIT_USAGE;
	}
	store_sel *sels = calloc(ngroups, sizeof(*sels));
	if (!sels)
		return 255;
	proff_error err;
	proff_err_clear(&err);
	int rc = EXIT_USAGE;
	size_t made = 0;
	for (size_t gi = 0, at = 0; gi < ngroups; gi++, made++) {
		size_t n = 0;
		while (at + n < nwords && group[at + n] == gi)
			n++;
		if (store_sel_parse(&sels[gi], words + at, n, &err)) {
			cli_error(&err);
			goto out_sels;
		}
		at += n;
	}
	store_query q = { .verbose = o->verbose, .children = g->children, .no_counts = true, .replicate = replicate,
			  .groups = sels, .ngroups = ngroups };
	if (store_keys(ho->sort, &q))
		goto out_sels;
	if (q.label_key) {
		/* the diff tables pair rows by comm, dso, sym and srcline */
		cli_errorf("diff --store: label:%s is a key of report --store only", q.label_key);
		goto out_sels;
	}
	if (replicate) {
		proff_error le;
		if (store_label_check(replicate, "", 0, &le)) {
			cli_errorf("--replicate: %s", le.msg);
			goto out_sels;
		}
	}
	store *s;
	if ((rc = cli_store_open(url, false, &s)))
		goto out_sels;
	rc = 1;
	char **events = NULL;
	if (store_events(s, sels, ngroups, &events, &err)) {
		cli_error(&err);
		goto out_store;
	}
	if (!events[0]) {
		cli_errorf("%s: no stored profile matches the selectors", store_name(s));
		goto out_store;
	}
	/* every event's result first: nothing printed until every query answered */
	size_t nev = 0;
	while (events[nev])
		nev++;
	store_result **res = calloc(nev, sizeof(*res));
	diff_table **tabs = calloc(nev, sizeof(*tabs));
	if (!res || !tabs)
		goto out_res;
	for (size_t e = 0; e < nev; e++) {
		q.event = events[e];
		if (store_query_run(s, &q, &res[e], &err)) {
			cli_error(&err);
			goto out_res;
		}
		store_result *r = res[e];
		for (size_t gi = 0; gi < ngroups; gi++) {
			bool any = false;
			for (size_t i = 0; i < r->nreps; i++)
				any |= r->rep_group[i] == gi;
			if (!any) {
				cli_errorf("%s: no stored profile matches selector %zu (%s...)", store_name(s), gi + 1,
					   sels[gi].n ? sels[gi].terms[0].key : "");
				goto out_res;
			}
		}
		if (diff_table_new(r->nreps, r->rep_group, q.keys, q.nkeys, o, g, &tabs[e], &err)) {
			cli_error(&err);
			goto out_res;
		}
		for (size_t i = 0; i < r->nreps; i++) {
			hist *h;
			hist_opts ro = *ho;
			ro.children = g->children;
			if (store_result_run_hist(r, i, &ro, &h, &err) || diff_table_add_run(tabs[e], i, h, &err)) {
				cli_error(&err);
				store_hist_free(h);
				goto out_res;
			}
			store_hist_free(h);
		}
		if (diff_table_compute(tabs[e], &err)) {
			cli_error(&err);
			goto out_res;
		}
	}
	size_t nreg = 0;
	for (size_t e = 0; e < nev; e++) {
		store_result *r = res[e];
		const char **names = calloc(r->nreps ? r->nreps : 1, sizeof(char *));
		if (!names)
			goto out_res;
		for (size_t i = 0; i < r->nreps; i++)
			names[i] = pf_str(r->prof, r->rep_name[i]);
		if (json) {
			if (e == 0)
				diff_table_json_begin(o, g, names, r->nreps, r->rep_group, ho->sort, stdout);
			diff_table_json_event(tabs[e], events[e], r->prof->events[0].type, r->prof->events[0].config, e == 0,
					      stdout);
			for (size_t i = 0; i < tabs[e]->nrows; i++)
				nreg += diff_trow_regression(tabs[e], &tabs[e]->rows[i], NULL, NULL);
		} else {
			diff_table_print_text(tabs[e], events[e], names, e == 0, stdout);
			nreg += diff_table_print_regressions(tabs[e], events[e], stdout);
		}
		free(names);
	}
	if (json)
		diff_table_json_end(stdout);
	rc = 0;
	if (g->fail_on && nreg) {
		fflush(stdout);
		cli_errorf("diff: %zu significant regression%s above %g%s (exit status %d)", nreg, nreg == 1 ? "" : "s",
			   g->fail_threshold, g->fail_relative ? "%" : "", 3);
		rc = 3;
	}
out_res:
	for (size_t e = 0; res && tabs && e < nev; e++) {
		diff_table_free(tabs[e]);
		store_result_free(res[e]);
	}
	free(res);
	free(tabs);
out_store:
	free_names(events);
	store_close(s);
out_sels:
	for (size_t i = 0; i < made; i++)
		store_sel_free(&sels[i]);
	free(sels);
	return rc;
}

/* the selectors of words (group[i]: word i's selector; NULL: one); their
 * number, or -1 after a message */
static long parse_sels(char *const *words, const uint32_t *group, size_t nwords, store_sel **out)
{
	size_t ngroups = group && nwords ? group[nwords - 1] + 1 : 1;
	store_sel *sels = calloc(ngroups, sizeof(*sels));
	if (!sels) {
		cli_errorf("out of memory");
		return -1;
	}
	proff_error err;
	proff_err_clear(&err);
	for (size_t gi = 0, at = 0; gi < ngroups; gi++) {
		size_t n = 0;
		while (at + n < nwords && (!group || group[at + n] == gi))
			n++;
		if (store_sel_parse(&sels[gi], words + at, n, &err)) {
			cli_error(&err);
			for (size_t i = 0; i < gi; i++)
				store_sel_free(&sels[i]);
			free(sels);
			return -1;
		}
		at += n;
	}
	*out = sels;
	return (long)ngroups;
}

int cli_store_flamegraph(const char *url, const char *replicate, char *const *words, const uint32_t *group,
			 size_t nwords, int nsides, const char *path, fg_opts *fo)
{
	store_sel *sels;
	long ngroups = parse_sels(words, group, nwords, &sels);
	if (ngroups < 0)
		return EXIT_USAGE;
	int rc = EXIT_USAGE;
	store *s = NULL;
	char **events = NULL;
	store_paths paths = { 0 };
	uint8_t *side = NULL;
	uint32_t *evsel = NULL;
	proff_error err;
	proff_err_clear(&err);
	if (ngroups != nsides) {
		cli_errorf("diff --store --flamegraph: a differential flame graph compares two selectors, not %ld", ngroups);
		goto out;
	}
	if ((rc = cli_store_open(url, false, &s)))
		goto out;
	rc = 1;
	if (store_events(s, sels, (size_t)ngroups, &events, &err)) {
		cli_error(&err);
		goto out;
	}
	if (!events[0]) {
		cli_errorf("%s: no stored profile matches the selector%s", store_name(s), nsides > 1 ? "s" : "");
		goto out;
	}
	/* the first event, as a file's flame graph draws its first */
	store_query q = { .replicate = replicate, .groups = sels, .ngroups = (size_t)ngroups, .event = events[0] };
	if (store_query_paths(s, &q, &paths, &err)) {
		cli_error(&err);
		goto out;
	}
	size_t count[2] = { 0, 0 };
	side = calloc(paths.n ? paths.n : 1, 1);
	evsel = calloc(paths.n ? paths.n : 1, sizeof(*evsel));
	if (!side || !evsel) {
		cli_errorf("out of memory");
		goto out;
	}
	for (size_t i = 0; i < paths.n; i++) {
		side[i] = (uint8_t)paths.group[i];
		count[side[i]]++;
	}
	for (long gi = 0; gi < ngroups; gi++)
		if (!count[gi]) {
			cli_errorf("%s: no stored profile matches selector %ld (%s...)", store_name(s), gi + 1,
				   sels[gi].n ? sels[gi].terms[0].key : "");
			goto out;
		}
	/* groups of runs as the files' diff: each side's replicates its runs */
	fo->runs = nsides == 2 && count[0] > 1 && count[1] > 1;
	rc = cli_flamegraph(path, paths.profs, evsel, side, paths.n, nsides, fo);
out:
	free(side);
	free(evsel);
	store_paths_free(&paths);
	free_names(events);
	if (s)
		store_close(s);
	for (long i = 0; i < ngroups; i++)
		store_sel_free(&sels[i]);
	free(sels);
	return rc;
}
