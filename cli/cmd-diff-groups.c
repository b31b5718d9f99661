/* cmd-diff-groups.c — the pipeline of `proff diff A1 A2 -- B1 B2 [-- C...]`:
 * every file is loaded, its hist of each event built and added to that
 * event's table (lib/diff/groups.c), and its profile freed, a few files at a
 * time on worker threads (the adds under one lock); nothing is printed until
 * every file is read, so a bad file stops the command before any output.
 * Then the tables are computed and printed in the baseline's event order.
 * Runs may also be parts of files, split by their labels (diff_label_runs:
 * --replicate, --groups-by).
 */
#include <errno.h>
#include <inttypes.h>
#include <libelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "diff-groups.h"
#include "proff/hist.h"

#define EXIT_SETUP 255

typedef struct ev_table {
	uint32_t type;
	uint64_t config;
	char *name;
	long base_index;         /* the event's place in the first file, -1: not there */
	diff_table *t;
} ev_table;

typedef struct groups_state {
	const diff_groups_run *d;
	pthread_mutex_t lock;
	ev_table *tabs;
	size_t ntabs;
	size_t next;             /* next file to load */
	char **events_of;        /* [nruns]: "name,name" of each file, for the check */
	proff_error *err;        /* [nruns] */
	int *rc;                 /* [nruns] */
} groups_state;

static ev_table *table_for(groups_state *s, const pf_event *ev, proff_error *err)
{
	for (size_t i = 0; i < s->ntabs; i++)
		if (s->tabs[i].type == ev->type && s->tabs[i].config == ev->config)
			return &s->tabs[i];
	ev_table *nt = realloc(s->tabs, (s->ntabs + 1) * sizeof(*nt));
	if (!nt)
		goto nomem;
	s->tabs = nt;
	ev_table *e = &s->tabs[s->ntabs];
	memset(e, 0, sizeof(*e));
	e->type = ev->type;
	e->config = ev->config;
	e->base_index = -1;
	e->name = strdup(ev->name ? ev->name : "?");
	if (!e->name)
		goto nomem;
	const diff_groups_run *d = s->d;
	int keys[HIST_MAX_KEYS];
	int nk = hist_parse_sort(d->ho->sort, keys, HIST_MAX_KEYS, err);
	if (nk < 0) {
		free(e->name);
		return NULL;
	}
	if (diff_table_new(d->nruns, d->group, keys, nk, d->o, d->g, &e->t, err)) {
		free(e->name);
		return NULL;
	}
	s->ntabs++;
	return e;
nomem:
	proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return NULL;
}

/* one file: load, one hist per event into its table, free */
static int do_file(groups_state *s, size_t f)
{
	const diff_groups_run *d = s->d;
	proff_error *err = &s->err[f];
	pf_profile *prof = NULL;
	int rc = pf_profile_load(d->files ? d->files[f] : d->paths[f], &d->load[f], &prof, err);
	if (rc < 0)
		return rc;
	cli_trace_quality_warn(d->paths[f], prof->trace_quality);   /* exact traces' anomalies, as report */
	size_t len = 1;
	for (size_t e = 0; e < prof->nr_events; e++)
		len += strlen(prof->events[e].name ? prof->events[e].name : "?") + 2;
	s->events_of[f] = calloc(1, len);
	for (size_t e = 0; e < prof->nr_events && s->events_of[f]; e++) {
		if (e)
			strcat(s->events_of[f], ", ");
		strcat(s->events_of[f], prof->events[e].name ? prof->events[e].name : "?");
	}
	for (size_t e = 0; e < prof->nr_events && !rc; e++) {
		hist *h = NULL;
		if (d->srclines)
			rc = hist_srclines(prof, (uint32_t)e, d->ho, err);
		if (rc == 0)
			rc = hist_build(prof, (uint32_t)e, d->ho, &h, err);
		if (rc < 0)
			break;
		pthread_mutex_lock(&s->lock);
		ev_table *t = table_for(s, &prof->events[e], err);
		if (!t)
			rc = err->code ? err->code : PROFF_ENOMEM;
		else {
			if (f == 0)
				t->base_index = (long)e;
			rc = diff_table_add_run(t->t, f, h, err);
		}
		pthread_mutex_unlock(&s->lock);
		hist_free(h);
	}
	pf_profile_free(prof);
	return rc;
}

static void *worker(void *arg)
{
	groups_state *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->lock);
		size_t f = s->next < s->d->nruns ? s->next++ : SIZE_MAX;
		pthread_mutex_unlock(&s->lock);
		if (f == SIZE_MAX)
			return NULL;
		s->rc[f] = do_file(s, f);
	}
}

/* every file must hold the events of the first one (and no others): runs
 * of different events are no repetitions of one experiment */
static int check_events(const groups_state *s)
{
	const diff_groups_run *d = s->d;
	for (size_t f = 1; f < d->nruns; f++) {
		const char *a = s->events_of[0] ? s->events_of[0] : "", *b = s->events_of[f] ? s->events_of[f] : "";
		if (strcmp(a, b)) {
			cli_errorf("%s: events (%s) differ from those of %s (%s): the runs of a group diff must record the same events",
				   d->paths[f], b, d->paths[0], a);
			return -1;
		}
	}
	return 0;
}

static int cmp_base_index(const void *x, const void *y)
{
	const ev_table *a = x, *b = y;
	return a->base_index < b->base_index ? -1 : a->base_index > b->base_index;
}

int cmd_diff_groups(const diff_groups_run *d)
{
	groups_state s;
	memset(&s, 0, sizeof(s));
	s.d = d;
	pthread_mutex_init(&s.lock, NULL);
	s.events_of = calloc(d->nruns, sizeof(char *));
	s.err = calloc(d->nruns, sizeof(proff_error));
	s.rc = calloc(d->nruns, sizeof(int));
	int status = EXIT_SETUP;
	if (!s.events_of || !s.err || !s.rc) {
		cli_errorf("out of memory");
		goto out;
	}
	size_t par = d->par;
	if (!par) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		par = n > 1 ? (size_t)n : 2;
	}
	if (par > d->nruns)
		par = d->nruns;
	elf_version(EV_CURRENT);
	cli_fast_heap(2);
	pthread_t *th = calloc(par, sizeof(*th));
	bool *started = calloc(par, sizeof(bool));
	if (!th || !started) {
		free(th);
		free(started);
		cli_errorf("out of memory");
		goto out;
	}
	for (size_t i = 1; i < par; i++)
		started[i] = pthread_create(&th[i], NULL, worker, &s) == 0;
	worker(&s);
	for (size_t i = 1; i < par; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	free(th);
	free(started);
	for (size_t f = 0; f < d->nruns; f++)
		if (s.rc[f] < 0) {
			cli_error(&s.err[f]);
			goto out;
		}
	if (check_events(&s))
		goto out;

	/* the baseline's events, in its order */
	qsort(s.tabs, s.ntabs, sizeof(*s.tabs), cmp_base_index);
	size_t nreg = 0;
	bool first = true;
	for (size_t i = 0; i < s.ntabs; i++) {
		proff_error err = { 0 };
		if (s.tabs[i].base_index >= 0 && diff_table_compute(s.tabs[i].t, &err) < 0) {
			cli_error(&err);
			goto out;
		}
	}
	cli_pager_start("diff");
	if (d->json)
		diff_table_json_begin(d->o, d->g, d->paths, d->nruns, d->group, d->ho->sort, stdout);
	for (size_t i = 0; i < s.ntabs; i++) {
		const ev_table *e = &s.tabs[i];
		if (e->base_index < 0)
			continue;
		if (d->json) {
			diff_table_json_event(e->t, e->name, e->type, e->config, first, stdout);
			for (size_t r = 0; r < e->t->nrows; r++)
				nreg += diff_trow_regression(e->t, &e->t->rows[r], NULL, NULL);
		} else {
			diff_table_print_text(e->t, e->name, d->paths, first, stdout);
			nreg += diff_table_print_regressions(e->t, e->name, stdout);
		}
		first = false;
	}
	if (d->json)
		diff_table_json_end(stdout);
	status = 0;
	if (d->g->fail_on && nreg) {
		fflush(stdout);
		cli_errorf("diff: %zu significant regression%s above %g%s (exit status %d)", nreg, nreg == 1 ? "" : "s",
			   d->g->fail_threshold, d->g->fail_relative ? "%" : "", EXIT_REGRESSION);
		status = EXIT_REGRESSION;
	}
out:
	cli_fast_heap_done();
	for (size_t i = 0; i < s.ntabs; i++) {
		diff_table_free(s.tabs[i].t);
		free(s.tabs[i].name);
	}
	free(s.tabs);
	if (s.events_of)
		for (size_t f = 0; f < d->nruns; f++)
			free(s.events_of[f]);
	free(s.events_of);
	free(s.err);
	free(s.rc);
	pthread_mutex_destroy(&s.lock);
	return status;
}

/* ---- runs split by labels ------------------------------------------------------------ */

typedef struct lr_entry { size_t file; char *gval, *rval; uint32_t group; size_t seen; } lr_entry;

static bool all_numbers(char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		char *end;
		errno = 0;
		strtoll(v[i], &end, 10);
		if (!*v[i] || *end || errno)
			return false;
	}
	return true;
}

static int cmp_num(const void *x, const void *y)
{
	long long a = strtoll(*(char *const *)x, NULL, 10), b = strtoll(*(char *const *)y, NULL, 10);
	return a < b ? -1 : a > b;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

static int cmp_entry(const void *x, const void *y)
{
	const lr_entry *a = x, *b = y;
	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	return a->seen < b->seen ? -1 : a->seen > b->seen;
}

/* One file's (group value, replicate value) pairs, in the order its
 * samples meet them, appended to *e */
static int file_label_pairs(const char *path, const pf_load_opts *lo0, const char *replicate, const char *groups_by,
			    size_t f, lr_entry **e, size_t *ne, size_t *cap)
{
	pf_load_opts lo = *lo0;
	lo.use_callchain = false;
	lo.merge_threads = false;
	lo.merge_by_comm = false;
	pf_profile *p = NULL;
	proff_error err;
	proff_err_clear(&err);
	if (pf_profile_load(path, &lo, &p, &err) < 0) {
		cli_error(&err);
		return EXIT_SETUP;
	}
	const char *keys[2] = { replicate, groups_by };
	uint32_t kid[2] = { PF_NONE, PF_NONE };
	int rc = 0;
	for (int k = 0; k < 2 && !rc; k++) {
		if (!keys[k])
			continue;
		int64_t id = pf_strtab_find(&p->strs, keys[k], strlen(keys[k]));
		bool used = false;
		for (size_t i = 0; id >= 0 && i < p->nr_labels && !used; i++)
			used = p->labels[i].key == (uint32_t)id;
		if (!used) {
			cli_errorf("%s: no label '%s' to make runs or groups of (proff convert A1 A2 -- B1 B2 -o FILE "
				   "labels run and group)", path, keys[k]);
			rc = EXIT_SETUP;
		}
		kid[k] = (uint32_t)id;
	}
	pf_map64 seen;
	pf_map64_init(&seen);
	size_t missing = 0, first = *ne;
	for (size_t i = 0; i < p->nr_samples && !rc; i++) {
		uint32_t t = p->samples[i].thread;
		uint32_t v[2] = { 0, 0 };
		for (int k = 0; k < 2; k++)
			if (keys[k] && (v[k] = pf_label_value(p, t, kid[k])) == PF_NONE)
				missing++;
		if (missing)
			continue;
		bool found;
		uint64_t *slot = pf_map64_upsert(&seen, (uint64_t)v[1] << 32 | v[0], &found);
		if (!slot || (!found && PF_GROW(*e, *cap, *ne + 1) < 0)) {
			cli_errorf("out of memory");
			rc = EXIT_SETUP;
			break;
		}
		if (found)
			continue;
		lr_entry *x = &(*e)[(*ne)++];
		*x = (lr_entry){ f, strdup(keys[1] ? pf_str(p, v[1]) : ""), strdup(keys[0] ? pf_str(p, v[0]) : ""), 0, *ne };
		if (!x->gval || !x->rval) {
			cli_errorf("out of memory");
			rc = EXIT_SETUP;
		}
	}
	if (!rc && missing) {
		cli_errorf("%s: %zu samples lack the label%s %s%s%s: every sample must belong to one run", path, missing,
			   replicate && groups_by ? "s" : "", replicate ? replicate : "", replicate && groups_by ? " or " : "",
			   groups_by ? groups_by : "");
		rc = EXIT_SETUP;
	}
	if (!rc && *ne == first) {
		cli_errorf("%s: no samples to make runs of", path);
		rc = EXIT_SETUP;
	}
	pf_map64_free(&seen);
	pf_profile_free(p);
	return rc;
}

void label_runs_free(label_runs *r)
{
	for (size_t i = 0; r->names && i < r->n; i++)
		free(r->names[i]);
	for (size_t i = 0; r->vals && i < 2 * r->n; i++)
		free(r->vals[i]);
	free(r->names);
	free(r->files);
	free(r->group);
	free(r->load);
	free(r->vals);
	memset(r, 0, sizeof(*r));
}

int diff_label_runs(const char *const *files, const uint32_t *file_group, size_t nfiles, const pf_load_opts *lo,
		    const char *replicate, const char *groups_by, label_runs *out)
{
	memset(out, 0, sizeof(*out));
	lr_entry *e = NULL;
	size_t ne = 0, cap = 0;
	int rc = 0;
	for (size_t f = 0; f < nfiles && !rc; f++)
		rc = file_label_pairs(files[f], &lo[f], replicate, groups_by, f, &e, &ne, &cap);
	char **gv = NULL;
	size_t ngv = 0;
	if (!rc && groups_by) {
		/* the groups: the values, in numeric order when all are numbers */
		gv = malloc((ne ? ne : 1) * sizeof(*gv));
		if (!gv) {
			cli_errorf("out of memory");
			rc = EXIT_SETUP;
		}
		for (size_t i = 0; i < ne && gv; i++) {
			size_t k = 0;
			while (k < ngv && strcmp(gv[k], e[i].gval))
				k++;
			if (k == ngv)
				gv[ngv++] = e[i].gval;
		}
		if (gv)
			qsort(gv, ngv, sizeof(*gv), all_numbers(gv, ngv) ? cmp_num : cmp_str);
		for (size_t i = 0; i < ne && gv; i++)
			for (size_t k = 0; k < ngv; k++)
				if (!strcmp(gv[k], e[i].gval))
					e[i].group = (uint32_t)k;
	} else if (!rc) {
		for (size_t i = 0; i < ne; i++)
			e[i].group = file_group[e[i].file];
	}
	if (!rc) {
		bool one = true;
		for (size_t i = 0; i < ne; i++)
			one &= e[i].group == 0;
		if (one) {
			cli_errorf("diff: the runs make one group: nothing to compare (--groups-by LABEL, or files in "
				   "groups: A -- B)");
			rc = EXIT_USAGE;
		}
	}
	if (!rc) {
		qsort(e, ne, sizeof(*e), cmp_entry);
		out->n = ne;
		out->names = calloc(ne + 1, sizeof(char *));
		out->files = calloc(ne + 1, sizeof(char *));
		out->group = calloc(ne + 1, sizeof(uint32_t));
		out->load = calloc(ne + 1, sizeof(pf_load_opts));
		out->vals = calloc(2 * ne + 1, sizeof(char *));
		if (!out->names || !out->files || !out->group || !out->load || !out->vals) {
			cli_errorf("out of memory");
			rc = EXIT_SETUP;
		}
	}
	for (size_t i = 0; i < ne && !rc; i++) {
		out->files[i] = files[e[i].file];
		out->group[i] = e[i].group;
		out->vals[2 * i] = e[i].rval;
		out->vals[2 * i + 1] = e[i].gval;
		e[i].rval = e[i].gval = NULL;
		pf_load_opts *l = &out->load[i];
		*l = lo[e[i].file];
		int k = 0;
		if (replicate)
			l->label_is[k].key = replicate, l->label_is[k++].value = out->vals[2 * i];
		if (groups_by)
			l->label_is[k].key = groups_by, l->label_is[k++].value = out->vals[2 * i + 1];
		char name[600];
		if (replicate)
			snprintf(name, sizeof(name), "%s", out->vals[2 * i]);
		else
			snprintf(name, sizeof(name), "%s:%s=%s", files[e[i].file], groups_by, out->vals[2 * i + 1]);
		if (!(out->names[i] = strdup(name))) {
			cli_errorf("out of memory");
			rc = EXIT_SETUP;
		}
	}
	for (size_t i = 0; i < ne; i++) {
		free(e[i].gval);
		free(e[i].rval);
	}
	free(e);
	free(gv);
	if (rc)
		label_runs_free(out);
	return rc;
}
