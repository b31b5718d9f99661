/* cmd-diff-groups.c — the pipeline of `proff diff A1 A2 -- B1 B2 [-- C...]`:
 * every file is loaded, its hist of each event built and added to that
 * event's table (lib/diff/groups.c), and its profile freed, a few files at a
 * time on worker threads (the adds under one lock); nothing is printed until
 * every file is read, so a bad file stops the command before any output.
 * Then the tables are computed and printed in the baseline's event order.
 */
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
	int rc = pf_profile_load(d->paths[f], &d->load[f], &prof, err);
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
