/* store.c — one interface over the stores: the URL picks the local
 * directory or ClickHouse; a query's result is put in its fixed order
 * and given its event here, whichever store filled it. */
#include <stdlib.h>
#include <string.h>

#include "store-int.h"

int store_open(const char *url, const store_auth *auth, bool create, store **out, proff_error *err)
{
	*out = NULL;
	store *s = pf_calloc(1, sizeof(*s));
	if (!s)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc;
	if (!strncmp(url, "clickhouse://", 13)) {
		rc = store_ch_open(url, auth, s, err);
	} else {
		const char *dir = !strncmp(url, "file://", 7) ? url + 7 : url;
		if (!*dir) {
			free(s);
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "--store: an empty directory name");
		}
		s->name = strdup(dir);
		rc = s->name ? store_local_open(dir, create, s, err)
			     : proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (rc) {
		store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void store_close(store *s)
{
	if (!s)
		return;
	if (s->ops && s->impl)
		s->ops->close(s);
	free(s->name);
	free(s);
}

const char *store_name(const store *s)
{
	return s->name ? s->name : "store";
}

int store_init(store *s, const char *cluster, proff_error *err)
{
	return s->ops->init(s, cluster, err);
}

int store_put(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err)
{
	return s->ops->put(s, sps, n, status, err);
}

int store_events(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err)
{
	*names = calloc(1, sizeof(char *));
	if (!*names)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc = s->ops->events(s, groups, ngroups, names, err);
	if (rc) {
		for (char **n = *names; *n; n++)
			free(*n);
		free(*names);
		*names = NULL;
	}
	return rc;
}

int store_query_paths(store *s, const store_query *q, store_paths *out, proff_error *err)
{
	memset(out, 0, sizeof(*out));
	paths_build *pb;
	if (paths_new(&pb, q->event ? q->event : "?"))
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	int rc = s->ops->paths(s, q, pb, err);
	if (!rc)
		rc = paths_finish(pb, out, err);
	paths_free(pb);
	return rc;
}

int store_query_run(store *s, const store_query *q, store_result **out, proff_error *err)
{
	store_result *r;
	int rc = store_result_new(q, &r, err);
	if (rc)
		return rc;
	if ((rc = s->ops->query(s, q, r, err)) || (rc = store_result_finish(r, err))) {
		store_result_free(r);
		return rc;
	}
	pf_profile *p = r->prof;
	p->events = pf_calloc(1, sizeof(pf_event));
	if (!p->events || !(p->events[0].name = strdup(q->event ? q->event : "?"))) {
		store_result_free(r);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	p->nr_events = 1;
	p->events[0].has_callchain = r->callchain;
	/* the time unit of cpu-clock and task-clock (diff tables' ms columns) */
	if (!strcmp(p->events[0].name, "cpu-clock") || !strcmp(p->events[0].name, "task-clock")) {
		p->events[0].type = 1;
		p->events[0].config = !strcmp(p->events[0].name, "task-clock");
	}
	for (size_t i = 0; i < r->nreps; i++) {
		p->events[0].total_period += r->rep_total[i];
		p->events[0].nr_samples += r->rep_samples[i];
	}
	*out = r;
	return 0;
}
