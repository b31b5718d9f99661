/* groups.c — the table of a diff of groups of runs (`proff diff A1 A2 -- B1
 * B2`): rows paired across every run by their keys, each run's periods per
 * row, and per row and group the means, the compute method's value against
 * the baseline group and a test of the per-run values (lib/stats), then
 * Benjamini-Hochberg over every test of the table and perf diff's order on the
 * means.
 *
 * A run's keys are interned into the table's own strings as it is added (each
 * distinct string of the run's profile once, through a map of its string
 * ids), so a run's profile can be freed right after: the CLI loads, adds and
 * frees files a few at a time, whatever the number of runs.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"

#define NONE_ID UINT32_MAX
#define PERF_TYPE_SOFTWARE_ 1      /* linux/perf_event.h: cpu-clock 0, task-clock 1 */

struct diff_table_priv {
	pf_strtab strs;              /* the keys' strings (a row's keys point into it) */
	diff_key *keys;              /* [cap * nkeys] */
	uint64_t *period[2];         /* [cap * nruns]: Self, Children */
	uint32_t *seen;              /* [cap]: the lowest run + 1 that set the row's level and comm (0: none yet);
				      * the lowest, not the first added: runs are added by several threads */
	size_t cap;
	uint32_t *slots;             /* row index + 1, 0 = empty */
	size_t nslots;
	uint64_t *hash;              /* [cap] key hash (for growing the slots) */
	/* the run being added: per string id of its profile, the string's
	 * hash (0: not computed yet) — a row is found by its strings' hashes
	 * and compared by content; its strings are interned only when new */
	uint64_t *shash;
	size_t shash_cap;
	double *scale;               /* [nruns]: 100 / the run's total (0 without samples) */
	diff_gstat *stats;           /* [nrows * ngroups] per metric, rows in creation order */
	/* exact traces: [cap * nruns] calls and inclusive ns, [nrows * ngroups] their statistics */
	uint64_t *calls, *incl;
	diff_cstat *cstats;
};

void diff_group_opts_init(diff_group_opts *g)
{
	memset(g, 0, sizeof(*g));
	stats_config_init(&g->stats);
	g->fdr = 0.05;
	g->metric = DIFF_METRIC_SHARE;
	g->min_share = 0.1;
	g->power_target = 0.8;
	g->power_max = 10000;
}

int diff_table_new(size_t nruns, const uint32_t *group, const int *keys, int nkeys,
		   const diff_opts *o, const diff_group_opts *g, diff_table **out, proff_error *err)
{
	*out = NULL;
	if (nruns < 2 || group[0] != 0)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "diff: groups need a baseline and another group");
	size_t ngroups = 1;
	for (size_t r = 1; r < nruns; r++) {
		if (group[r] != group[r - 1] && group[r] != group[r - 1] + 1)
			return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "diff: groups out of order");
		ngroups = group[r] + 1;
	}
	if (ngroups < 2)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "diff: groups need a baseline and another group");
	diff_table *t = pf_calloc(1, sizeof(*t));
	if (!t)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	t->nruns = nruns;
	t->ngroups = ngroups;
	t->nkeys = nkeys;
	memcpy(t->keys, keys, sizeof(int) * (size_t)nkeys);
	t->o = *o;
	t->g = *g;
	t->priv = pf_calloc(1, sizeof(*t->priv));
	t->group = pf_calloc(nruns, sizeof(*t->group));
	t->group_first = pf_calloc(ngroups, sizeof(size_t));
	t->group_runs = pf_calloc(ngroups, sizeof(size_t));
	t->totals = pf_calloc(nruns, sizeof(uint64_t));
	t->samples = pf_calloc(nruns, sizeof(uint64_t));
	t->have_run = pf_calloc(nruns, sizeof(bool));
	t->total = pf_calloc(ngroups, sizeof(diff_gstat));
	if (!t->priv || !t->group || !t->group_first || !t->group_runs || !t->totals || !t->samples ||
	    !t->have_run || !t->total || pf_strtab_init(&t->priv->strs))
		goto nomem;
	memcpy(t->group, group, nruns * sizeof(*group));
	for (size_t r = nruns; r-- > 0;) {
		t->group_first[group[r]] = r;
		t->group_runs[group[r]]++;
	}
	*out = t;
	return 0;
nomem:
	diff_table_free(t);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

void diff_table_free(diff_table *t)
{
	if (!t)
		return;
	struct diff_table_priv *p = t->priv;
	if (p) {
		pf_strtab_free(&p->strs);
		free(p->keys);
		free(p->period[0]);
		free(p->period[1]);
		free(p->seen);
		free(p->slots);
		free(p->hash);
		free(p->shash);
		free(p->scale);
		free(p->stats);
		free(p->calls);
		free(p->incl);
		free(p->cstats);
		free(p);
	}
	free(t->rows);
	free(t->group);
	free(t->group_first);
	free(t->group_runs);
	free(t->totals);
	free(t->samples);
	free(t->have_run);
	free(t->total);
	free(t);
}

/* ---- adding a run ---------------------------------------------------------------- */

/* A run's key of a row: each key's string (NULL: none) with its hash, and
 * its numbers */
typedef struct run_key {
	const char *s[HIST_MAX_KEYS];
	uint64_t h[HIST_MAX_KEYS];
	diff_key k[HIST_MAX_KEYS];
} run_key;

#define NO_STRING_HASH 0x5bd1e995u
static const char other_parent[] = "[other]";    /* a row without a parent match */

/* string sid of the run's profile into key j, its hash computed once per run */
static void key_str(diff_table *t, const pf_profile *prof, uint32_t sid, run_key *rk, int j)
{
	struct diff_table_priv *p = t->priv;
	if (sid == NONE_ID) {
		rk->s[j] = NULL;
		rk->h[j] = NO_STRING_HASH;
		return;
	}
	rk->s[j] = pf_str(prof, sid);
	if (sid < p->shash_cap) {
		if (!p->shash[sid])
			p->shash[sid] = pf_hash_bytes(rk->s[j], prof->strs.lens[sid], 0x9e3779b97f4a7c15ULL) | 1;
		rk->h[j] = p->shash[sid];
	} else {
		rk->h[j] = pf_hash_bytes(rk->s[j], strlen(rk->s[j]), 0x9e3779b97f4a7c15ULL) | 1;
	}
}

static uint64_t row_hash(const run_key *rk, int nkeys)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < nkeys; i++)
		x = pf_hash64(x ^ rk->h[i] ^ (pf_hash64(rk->k[i].n ^ (rk->k[i].n2 << 32)) << 1));
	return x;
}

/* the calls' arrays from p->cap rows to ncap (made on the first exact run) */
static int grow_calls(diff_table *t, size_t ncap)
{
	struct diff_table_priv *p = t->priv;
	size_t old = p->calls ? p->cap : 0;
	uint64_t **arr[2] = { &p->calls, &p->incl };
	for (int i = 0; i < 2; i++) {
		uint64_t *v = pf_realloc_array(*arr[i], ncap ? ncap * t->nruns : 1, sizeof(uint64_t));
		if (!v)
			return PROFF_ENOMEM;
		memset(v + old * t->nruns, 0, (ncap - old) * t->nruns * sizeof(uint64_t));
		*arr[i] = v;
	}
	return 0;
}

static int grow_rows(diff_table *t)
{
	struct diff_table_priv *p = t->priv;
	size_t ncap = p->cap ? p->cap * 2 : 1024, nk = (size_t)(t->nkeys ? t->nkeys : 1);
	diff_trow *rows = pf_realloc_array(t->rows, ncap, sizeof(*rows));
	if (!rows)
		return PROFF_ENOMEM;
	t->rows = rows;
	void *k = pf_realloc_array(p->keys, ncap * nk, sizeof(diff_key));
	if (!k)
		return PROFF_ENOMEM;
	p->keys = k;
	k = pf_realloc_array(p->hash, ncap, sizeof(uint64_t));
	if (!k)
		return PROFF_ENOMEM;
	p->hash = k;
	k = pf_realloc_array(p->seen, ncap, sizeof(uint32_t));
	if (!k)
		return PROFF_ENOMEM;
	p->seen = k;
	for (int w = 0; w < (t->g.children ? 2 : 1); w++) {
		/* the first table from calloc: a large one comes as zeroed pages,
		 * touched only where rows are (1,024 rows x the runs of a fleet
		 * are megabytes, most of them never written) */
		uint64_t *v = p->period[w] ? pf_realloc_array(p->period[w], ncap * t->nruns, sizeof(uint64_t))
					   : pf_calloc(ncap * t->nruns, sizeof(uint64_t));
		if (!v)
			return PROFF_ENOMEM;
		if (p->cap)
			memset(v + p->cap * t->nruns, 0, (ncap - p->cap) * t->nruns * sizeof(uint64_t));
		p->period[w] = v;
	}
	if (p->calls && grow_calls(t, ncap))
		return PROFF_ENOMEM;
	p->cap = ncap;
	/* the slots: at most half full */
	size_t nslots = ncap * 2;
	uint32_t *slots = pf_calloc(nslots, sizeof(uint32_t));
	if (!slots)
		return PROFF_ENOMEM;
	for (size_t i = 0; i < t->nrows; i++) {
		size_t s = p->hash[i] & (nslots - 1);
		while (slots[s])
			s = (s + 1) & (nslots - 1);
		slots[s] = (uint32_t)i + 1;
	}
	free(p->slots);
	p->slots = slots;
	p->nslots = nslots;
	return 0;
}

static bool same_keys(const diff_key *row, const run_key *rk, int nkeys)
{
	for (int j = 0; j < nkeys; j++) {
		if (row[j].n != rk->k[j].n || row[j].n2 != rk->k[j].n2)
			return false;
		if (!row[j].s || !rk->s[j]) {
			if (row[j].s != rk->s[j])
				return false;
		} else if (strcmp(row[j].s, rk->s[j])) {
			return false;
		}
	}
	return true;
}

/* the row of the keys, made if new (its strings interned); -1 out of memory */
static long find_row(diff_table *t, const run_key *rk)
{
	struct diff_table_priv *p = t->priv;
	size_t nk = (size_t)t->nkeys;
	uint64_t h = row_hash(rk, t->nkeys);
	if (p->nslots) {
		for (size_t s = h & (p->nslots - 1); p->slots[s]; s = (s + 1) & (p->nslots - 1)) {
			size_t i = p->slots[s] - 1;
			if (p->hash[i] == h && same_keys(&p->keys[i * nk], rk, t->nkeys))
				return (long)i;
		}
	}
	if (t->nrows == p->cap && grow_rows(t))
		return -1;
	size_t i = t->nrows;
	for (size_t j = 0; j < nk; j++) {
		diff_key *d = &p->keys[i * nk + j];
		*d = rk->k[j];
		d->s = NULL;
		if (rk->s[j]) {     /* the strings stay where the arena put them */
			int64_t id = pf_strtab_intern(&p->strs, rk->s[j], strlen(rk->s[j]));
			if (id < 0)
				return -1;
			d->s = pf_strtab_get(&p->strs, (uint32_t)id);
		}
	}
	t->nrows++;
	p->hash[i] = h;
	p->seen[i] = 0;
	memset(&t->rows[i], 0, sizeof(t->rows[i]));
	t->rows[i].seq = i;
	t->rows[i].addr = UINT64_MAX;
	size_t s = h & (p->nslots - 1);
	while (p->slots[s])
		s = (s + 1) & (p->nslots - 1);
	p->slots[s] = (uint32_t)i + 1;
	return (long)i;
}

static bool key_has_pid(const diff_table *t)
{
	for (int j = 0; j < t->nkeys; j++)
		if (t->keys[j] == HK_PID || t->keys[j] == HK_TID)
			return true;
	return false;
}

static bool time_event(const pf_profile *prof, uint32_t evsel)
{
	if (prof->exact)
		return true;
	if (evsel >= prof->nr_events)
		return false;
	const pf_event *ev = &prof->events[evsel];
	return ev->type == PERF_TYPE_SOFTWARE_ && (ev->config == 0 || ev->config == 1);
}

int diff_table_add_run(diff_table *t, size_t run, const hist *h, proff_error *err)
{
	struct diff_table_priv *p = t->priv;
	const pf_profile *prof = h->prof;
	if (run >= t->nruns || h->nkeys != t->nkeys || memcmp(h->keys, t->keys, sizeof(int) * (size_t)t->nkeys))
		return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "diff: a run built with other sort keys");
	if (prof->strs.n > p->shash_cap) {
		free(p->shash);
		p->shash_cap = 0;
		p->shash = pf_calloc(prof->strs.n, sizeof(uint64_t));
		if (!p->shash)
			goto nomem;
		p->shash_cap = prof->strs.n;
	}
	memset(p->shash, 0, p->shash_cap * sizeof(uint64_t));
	t->have_run[run] = true;
	t->totals[run] = t->o.relative ? h->total_non_filtered_period : h->total_period;
	t->samples[run] = t->o.relative ? h->nr_non_filtered_samples : h->nr_samples;
	t->exact |= prof->exact != NULL;
	t->time_unit |= time_event(prof, h->evsel);
	if (prof->exact && !p->calls && grow_calls(t, p->cap))
		goto nomem;
	bool base = t->group[run] == 0;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		run_key rk;
		for (int j = 0; j < t->nkeys; j++) {
			uint32_t sid = NONE_ID;
			rk.k[j] = (diff_key){ 0 };
			switch (t->keys[j]) {
			case HK_COMM: sid = e->comm; break;
			case HK_PID:
			case HK_TID:
				rk.k[j].n = e->tid;
				rk.k[j].n2 = e->pid;
				break;
			case HK_DSO:
				if (e->dso != PF_NONE)
					sid = t->o.verbose ? prof->dsos[e->dso].long_name : prof->dsos[e->dso].short_name;
				break;
			case HK_SYM:
				if (e->sym != PF_NONE)
					sid = prof->syms[e->sym].name;
				break;
			case HK_CPU: rk.k[j].n = e->cpu; break;
			case HK_PARENT: sid = e->parent; break;
			case HK_SRCLINE: sid = e->srcline; break;
			default: {
				/* the others as the catalogue gives them (lib/hist/keys.c):
				 * the strings the hist's profile holds */
				hist_key_value v = { 0 };
				hist_keys[t->keys[j]].value(h, e, &v);
				rk.k[j].n = v.n;
				rk.k[j].n2 = v.n2;
				rk.s[j] = v.s;
				rk.h[j] = v.s ? pf_hash_bytes(v.s, strlen(v.s), 0x9e3779b97f4a7c15ULL) | 1 : NO_STRING_HASH;
				continue;
			}
			}
			if (t->keys[j] == HK_PARENT && !e->parent) {
				rk.s[j] = other_parent;
				rk.h[j] = pf_hash_bytes(other_parent, sizeof(other_parent) - 1, 0x9e3779b97f4a7c15ULL) | 1;
			} else {
				key_str(t, prof, sid, &rk, j);
			}
		}
		long ri = find_row(t, &rk);
		if (ri < 0)
			goto nomem;
		diff_trow *row = &t->rows[ri];
		if (!p->seen[ri])
			row->filtered = e->filtered;
		else
			row->filtered &= e->filtered;
		if (!p->seen[ri] || run + 1 < p->seen[ri]) {
			p->seen[ri] = (uint32_t)run + 1;
			row->level = e->level;
			if (key_has_pid(t)) {
				const char *c = pf_str(prof, e->thread < prof->nr_threads ? prof->threads[e->thread].comm : e->comm);
				int64_t id = pf_strtab_intern(&p->strs, c, strlen(c));
				if (id < 0)
					goto nomem;
				row->pid_comm = pf_strtab_get(&p->strs, (uint32_t)id);
			}
		}
		if (e->sym == PF_NONE && e->addr < row->addr)
			row->addr = e->addr;
		row->in_baseline |= base;
		p->period[DIFF_SELF][(size_t)ri * t->nruns + run] += e->period;
		if (t->g.children)
			p->period[DIFF_CHILDREN][(size_t)ri * t->nruns + run] += e->period_acc;
		if (prof->exact) {
			p->calls[(size_t)ri * t->nruns + run] += e->nr_events;
			p->incl[(size_t)ri * t->nruns + run] += e->ex_incl;
		}
	}
	return 0;
nomem:
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* ---- statistics ------------------------------------------------------------------- */

uint64_t diff_table_calls(const diff_table *t, const diff_trow *row, size_t run)
{
	return t->priv->calls ? t->priv->calls[row->seq * t->nruns + run] : 0;
}

uint64_t diff_table_incl(const diff_table *t, const diff_trow *row, size_t run)
{
	return t->priv->incl ? t->priv->incl[row->seq * t->nruns + run] : 0;
}

uint64_t diff_table_period(const diff_table *t, const diff_trow *row, int which, size_t run)
{
	return t->priv->period[which][row->seq * t->nruns + run];
}

double diff_table_value(const diff_table *t, const diff_trow *row, int which, size_t run)
{
	uint64_t v = diff_table_period(t, row, which, run);
	if (t->g.metric == DIFF_METRIC_ABSOLUTE)
		return (double)v;
	return t->totals[run] ? 100.0 * (double)v / (double)t->totals[run] : 0;
}

/* A row's values of one metric: per group the means, and against the
 * baseline group the compute values and the test. vals: [nruns] scratch. */
static int row_stats(diff_table *t, stats_ctx *ctx, const diff_trow *row, int which, diff_gstat *st,
		     double *vals)
{
	size_t nr = t->nruns;
	const uint64_t *per = &t->priv->period[which][row->seq * nr];
	const double *scale = t->priv->scale;
	bool abs = t->g.metric == DIFF_METRIC_ABSOLUTE;
	double *shares = vals + nr;
	for (size_t r = 0; r < nr; r++) {
		shares[r] = (double)per[r] * scale[r];
		vals[r] = abs ? (double)per[r] : shares[r];
	}
	double share0 = 0;
	for (size_t g = 0; g < t->ngroups; g++) {
		diff_gstat *s = &st[g];
		size_t f = t->group_first[g], n = t->group_runs[g];
		double sum = 0, vsum = 0, ssum = 0;
		s->present = 0;
		for (size_t r = f; r < f + n; r++) {
			sum += (double)per[r];
			vsum += vals[r];
			ssum += shares[r];
			s->present += per[r] != 0;
		}
		s->mean = vsum / (double)n;
		double ss = 0;
		for (size_t r = f; r < f + n; r++)
			ss += (vals[r] - s->mean) * (vals[r] - s->mean);
		s->sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
		s->mean_period = sum / (double)n;
		s->q = NAN;
		s->significant = false;
		s->runs_needed = 0;
		if (!g) {
			share0 = ssum;
			s->delta = s->ratio = NAN;
			s->wdiff = 0;
			s->small = false;
			memset(&s->test, 0, sizeof(s->test));
			s->test.status = STATS_TOO_FEW;
			s->test.p = NAN;
			continue;
		}
		/* --min-share: the mean share over the baseline's runs and these */
		s->small = (share0 + ssum) / (double)(t->group_runs[0] + n) < t->g.min_share;
		const diff_gstat *b = &st[0];
		s->delta = s->mean - b->mean;
		s->ratio = b->mean_period > 0 ? s->mean_period / b->mean_period : NAN;
		s->wdiff = (int64_t)llround(s->mean_period * (double)t->o.w2 - b->mean_period * (double)t->o.w1);
		size_t f0 = t->group_first[0], n0 = t->group_runs[0];
		switch (s->small ? -1 : t->mode) {
		case DIFF_MODE_RUNS:
			if (stats_compare(ctx, vals + f0, n0, vals + f, n, &s->test))
				return PROFF_ENOMEM;
			break;
		case DIFF_MODE_SAMPLING: {
			/* effective sample counts: the row's period over the run's
			 * mean sample period */
			double na = (double)t->samples[f0], nb = (double)t->samples[f];
			double ta = (double)t->totals[f0], tb = (double)t->totals[f];
			double pa = (double)diff_table_period(t, row, which, f0);
			double pb = (double)diff_table_period(t, row, which, f);
			if (t->g.metric == DIFF_METRIC_ABSOLUTE) {
				stats_poisson_sums(pa, ta > 0 ? pa * na / ta : 0, pb, tb > 0 ? pb * nb / tb : 0,
						   t->g.stats.level, &s->test);
			} else {
				stats_two_proportions(ta > 0 ? pa / ta * na : 0, na, tb > 0 ? pb / tb * nb : 0, nb,
						      t->g.stats.level, &s->test);
				s->test.mean_a *= 100;
				s->test.mean_b *= 100;
				s->test.delta *= 100;
				s->test.ci_low *= 100;
				s->test.ci_high *= 100;
			}
			break;
		}
		default:
			memset(&s->test, 0, sizeof(s->test));
			s->test.status = STATS_TOO_FEW;
			s->test.p = s->test.ci_low = s->test.ci_high = NAN;
			break;
		}
	}
	return 0;
}

/* the runs' totals as a row of their own */
static int total_stats(diff_table *t, stats_ctx *ctx, double *vals)
{
	for (size_t r = 0; r < t->nruns; r++)
		vals[r] = (double)t->totals[r];
	for (size_t g = 0; g < t->ngroups; g++) {
		diff_gstat *s = &t->total[g];
		size_t f = t->group_first[g], n = t->group_runs[g];
		s->mean = s->mean_period = stats_mean(vals + f, n);
		s->sd = sqrt(stats_var(vals + f, n));
		s->q = NAN;
		s->present = (uint32_t)n;
		if (!g) {
			s->test.status = STATS_TOO_FEW;
			s->test.p = NAN;
			s->delta = s->ratio = NAN;
			continue;
		}
		size_t f0 = t->group_first[0], n0 = t->group_runs[0];
		s->delta = s->mean - t->total[0].mean;
		s->ratio = t->total[0].mean > 0 ? s->mean / t->total[0].mean : NAN;
		if (t->mode == DIFF_MODE_RUNS) {
			if (stats_compare(ctx, vals + f0, n0, vals + f, n, &s->test))
				return PROFF_ENOMEM;
		} else if (t->mode == DIFF_MODE_SAMPLING) {
			stats_poisson_sums(vals[f0], (double)t->samples[f0], vals[f], (double)t->samples[f],
					   t->g.stats.level, &s->test);
		} else {
			memset(&s->test, 0, sizeof(s->test));
			s->test.status = STATS_TOO_FEW;
			s->test.p = s->test.ci_low = s->test.ci_high = NAN;
		}
	}
	return 0;
}

static int nwhich(const diff_table *t)
{
	return t->g.children ? 2 : 1;
}

bool diff_trow_regression(const diff_table *t, const diff_trow *row, int *which, size_t *group)
{
	if (!t->g.fail_on || !row->shown)
		return false;
	for (int w = nwhich(t); w-- > 0;) {
		for (size_t g = 1; g < t->ngroups; g++) {
			const diff_gstat *s = &row->stat[w][g];
			if (!s->significant || !(s->delta > 0))
				continue;
			double v = s->delta;
			if (t->g.metric == DIFF_METRIC_ABSOLUTE && t->time_unit)
				v /= 1e6;     /* the threshold is in ms, as printed */
			if (t->g.fail_relative) {
				double b = row->stat[w][0].mean;
				v = b > 0 ? 100 * s->delta / b : INFINITY;
			}
			if (v > t->g.fail_threshold) {
				if (which)
					*which = w;
				if (group)
					*group = g;
				return true;
			}
		}
	}
	return false;
}

/* ---- order (perf diff's, on the means) ------------------------------------------------ */

static double compute_value(const diff_gstat *s, int compute)
{
	double v;
	switch (compute) {
	case DIFF_DELTA: v = s->delta; break;
	case DIFF_DELTA_ABS: v = fabs(s->delta); break;
	case DIFF_RATIO: v = s->ratio; break;
	case DIFF_WDIFF: v = (double)s->wdiff; break;
	default: v = 0; break;
	}
	return isnan(v) ? -INFINITY : v;
}

static int cmp_desc(double a, double b)
{
	return a > b ? -1 : a < b ? 1 : 0;
}

static int row_order(const void *pa, const void *pb, void *arg)
{
	const diff_table *t = arg;
	const diff_trow *a = pa, *b = pb;
	int w = t->g.children ? DIFF_CHILDREN : DIFF_SELF, c;
	int compute = t->o.compute;
	unsigned ord = t->o.order;
	if (ord && ord < t->ngroups && (c = cmp_desc(compute_value(&a->stat[w][ord], compute),
						      compute_value(&b->stat[w][ord], compute))))
		return c;
	if ((c = cmp_desc(a->stat[w][0].mean_period, b->stat[w][0].mean_period)))
		return c;
	for (size_t g = 1; g < t->ngroups; g++)
		if ((c = cmp_desc(compute_value(&a->stat[w][g], compute), compute_value(&b->stat[w][g], compute))))
			return c;
	if ((c = diff_keys_sort(a->keys, b->keys, t->nkeys)))
		return -c;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* ---- widths of the key columns ------------------------------------------------------ */

static size_t key_cell_width(const diff_table *t, const diff_trow *row, int k)
{
	const diff_key *d = &row->keys[k];
	switch (t->keys[k]) {
	case HK_PID:
	case HK_TID: return 8 + (row->pid_comm ? strlen(row->pid_comm) : 0);
	case HK_DSO: return d->s ? strlen(d->s) : 9;           /* [unknown] */
	case HK_SYM: return d->s ? strlen(d->s) + 4 : 18 + 4;  /* "[.] ", 0x + 16 digits */
	case HK_CPU: return 3;
	default: return d->s ? strlen(d->s) : 0;
	}
}

static void key_widths(diff_table *t)
{
	for (int k = 0; k < t->nkeys; k++)
		t->key_width[k] = t->keys[k] == HK_PID ? 15 : strlen(hist_keys[t->keys[k]].header);
	for (size_t i = 0; i < t->nrows; i++) {
		if (!t->rows[i].shown)
			continue;
		for (int k = 0; k < t->nkeys; k++) {
			size_t w = key_cell_width(t, &t->rows[i], k);
			if (w > t->key_width[k])
				t->key_width[k] = w;
		}
	}
}

/* ---- the driver ----------------------------------------------------------------------- */

/* The rows' statistics, a range of rows per worker: each has its own
 * comparison context and scratch, and writes only its rows' slots. */
typedef struct rows_job {
	diff_table *t;
	size_t from, to;
	bool power;                  /* the second pass: runs needed (q known) */
	int rc;
	pthread_t th;
	bool started;
} rows_job;

static void *rows_work(void *arg)
{
	rows_job *j = arg;
	diff_table *t = j->t;
	size_t ng = t->ngroups, nw = (size_t)nwhich(t);
	j->rc = PROFF_ENOMEM;
	if (j->power) {
		for (size_t i = j->from; i < j->to; i++) {
			diff_trow *row = &t->rows[i];
			for (size_t w = 0; w < nw && row->shown; w++)
				for (size_t g = 1; g < ng; g++) {
					diff_gstat *s = &row->stat[w][g];
					if (!s->significant && s->test.status == STATS_OK)
						s->runs_needed = stats_runs_for_power(s->delta, row->stat[w][0].sd, s->sd,
										      t->g.fdr, t->g.power_target, t->g.power_max);
				}
		}
		j->rc = 0;
		return NULL;
	}
	double *vals = pf_calloc(2 * t->nruns, sizeof(double));
	stats_ctx *ctx = stats_ctx_new(&t->g.stats);
	if (!vals || !ctx)
		goto out;
	for (size_t i = j->from; i < j->to; i++)
		for (size_t w = 0; w < nw; w++)
			if (row_stats(t, ctx, &t->rows[i], (int)w, t->rows[i].stat[w], vals))
				goto out;
	j->rc = 0;
out:
	free(vals);
	stats_ctx_free(ctx);
	return NULL;
}

/* rows_work over every row, on two threads from ROWS_SPLIT rows */
#define ROWS_SPLIT 16384
static int rows_run(diff_table *t, bool power)
{
	rows_job jobs[2] = { { .t = t, .from = 0, .to = t->nrows, .power = power } };
	size_t n = 1;
	if (t->nrows >= ROWS_SPLIT) {
		jobs[1] = jobs[0];
		jobs[0].to = jobs[1].from = t->nrows / 2;
		n = 2;
		jobs[1].started = pthread_create(&jobs[1].th, NULL, rows_work, &jobs[1]) == 0;
	}
	rows_work(&jobs[0]);
	if (n == 2) {
		if (jobs[1].started)
			pthread_join(jobs[1].th, NULL);
		else
			rows_work(&jobs[1]);
	}
	return jobs[0].rc ? jobs[0].rc : n == 2 ? jobs[1].rc : 0;
}

/* perf diff's order, its two leading keys read once per row: sorted as
 * small records, the rows' full comparison only on their ties */
typedef struct order_key {
	double k1, k2;
	uint32_t i;
} order_key;

static int order_cmp(const void *pa, const void *pb, void *arg)
{
	const order_key *a = pa, *b = pb;
	const diff_table *t = arg;
	if (a->k1 != b->k1)
		return a->k1 > b->k1 ? -1 : 1;
	if (a->k2 != b->k2)
		return a->k2 > b->k2 ? -1 : 1;
	return row_order(&t->rows[a->i], &t->rows[b->i], (void *)t);
}

/* The order's keys sorted on a thread of its own while the q-values are
 * computed: it reads the means, compute values and keys, the q-value pass
 * writes q, significance and the shown flag — other fields. */
typedef struct order_job {
	diff_table *t;
	order_key *k;
	pthread_t th;
	bool started;
} order_job;

static void *order_work(void *arg)
{
	order_job *j = arg;
	diff_table *t = j->t;
	int w = t->g.children ? DIFF_CHILDREN : DIFF_SELF;
	unsigned ord = t->o.order;
	for (size_t i = 0; i < t->nrows; i++) {
		const diff_trow *r = &t->rows[i];
		j->k[i].k1 = ord && ord < t->ngroups ? compute_value(&r->stat[w][ord], t->o.compute) : 0;
		j->k[i].k2 = r->stat[w][0].mean_period;
		j->k[i].i = (uint32_t)i;
	}
	qsort_r(j->k, t->nrows, sizeof(*j->k), order_cmp, t);
	return NULL;
}

static int order_start(diff_table *t, order_job *j)
{
	j->t = t;
	j->k = pf_calloc(t->nrows ? t->nrows : 1, sizeof(*j->k));
	if (!j->k)
		return PROFF_ENOMEM;
	j->started = t->nrows >= ROWS_SPLIT && pthread_create(&j->th, NULL, order_work, j) == 0;
	return 0;
}

/* the rows put in the order (a worker that did not start: sorted here) */
static int order_finish(order_job *j)
{
	diff_table *t = j->t;
	if (j->started)
		pthread_join(j->th, NULL);
	else
		order_work(j);
	j->started = false;
	diff_trow *sorted = pf_calloc(t->nrows ? t->nrows : 1, sizeof(*sorted));
	if (!sorted)
		return PROFF_ENOMEM;
	for (size_t i = 0; i < t->nrows; i++)
		sorted[i] = t->rows[j->k[i].i];
	memcpy(t->rows, sorted, t->nrows * sizeof(*sorted));
	free(sorted);
	return 0;
}

int diff_table_compute(diff_table *t, proff_error *err)
{
	struct diff_table_priv *p = t->priv;
	size_t ng = t->ngroups, nw = (size_t)nwhich(t), nk = (size_t)t->nkeys;
	bool one_each = true;
	for (size_t g = 0; g < ng; g++)
		one_each &= t->group_runs[g] == 1;
	t->mode = !one_each ? DIFF_MODE_RUNS : t->exact ? DIFF_MODE_NOISELESS : DIFF_MODE_SAMPLING;
	t->min_p = 0;
	if (t->mode == DIFF_MODE_RUNS)
		for (size_t g = 1; g < ng; g++) {
			double m = stats_min_p(&t->g.stats, t->group_runs[0], t->group_runs[g]);
			if (m > t->min_p)
				t->min_p = m;
		}

	p->stats = pf_calloc(t->nrows ? t->nrows * ng * nw : 1, sizeof(diff_gstat));
	p->scale = pf_calloc(t->nruns, sizeof(double));
	double *vals = pf_calloc(t->nruns, sizeof(double));
	double *pv = pf_calloc(t->nrows ? t->nrows * ng * nw : 1, sizeof(double));
	double *qv = pf_calloc(t->nrows ? t->nrows * ng * nw : 1, sizeof(double));
	stats_ctx *ctx = stats_ctx_new(&t->g.stats);
	order_job oj = { 0 };
	int rc = PROFF_ENOMEM;
	if (p->calls && !(p->cstats = pf_calloc(t->nrows ? t->nrows * ng : 1, sizeof(diff_cstat))))
		goto out;
	if (!p->stats || !p->scale || !vals || !pv || !qv || !ctx)
		goto out;
	for (size_t r = 0; r < t->nruns; r++)
		p->scale[r] = t->totals[r] ? 100.0 / (double)t->totals[r] : 0;
	if (total_stats(t, ctx, vals))
		goto out;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_trow *row = &t->rows[i];
		row->keys = &p->keys[i * nk];
		for (size_t w = 0; w < nw; w++)
			row->stat[w] = &p->stats[(i * nw + w) * ng];
		row->calls = p->cstats ? &p->cstats[i * ng] : NULL;
	}
	if (rows_run(t, false))
		goto out;
	if (order_start(t, &oj))
		goto out;
	/* Benjamini-Hochberg over every test of the printed rows */
	size_t np = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_trow *row = &t->rows[i];
		bool other = false;
		for (size_t g = 1; g < ng; g++)
			other |= row->stat[DIFF_SELF][g].present != 0 ||
				 (nw > 1 && row->stat[DIFF_CHILDREN][g].present != 0);
		row->shown = !row->filtered && (!t->o.baseline_only || (row->in_baseline && other));
		for (size_t w = 0; w < nw; w++)
			for (size_t g = 1; g < ng; g++) {
				const diff_gstat *s = &row->stat[w][g];
				pv[np++] = row->shown && s->test.status == STATS_OK ? s->test.p : NAN;
			}
	}
	long m = stats_bh(pv, np, qv);
	if (m < 0)
		goto out;
	t->ntests = (size_t)m;
	if (p->cstats && diff_table_calls_stats(t))
		goto out;
	np = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_trow *row = &t->rows[i];
		bool any = false;
		for (size_t w = 0; w < nw; w++)
			for (size_t g = 1; g < ng; g++) {
				diff_gstat *s = &row->stat[w][g];
				s->q = qv[np++];
				s->significant = !isnan(s->q) && s->q <= t->g.fdr;
				any |= s->significant;
			}
		for (size_t g = 1; row->calls && g < ng; g++)
			any |= row->calls[g].calls_significant || row->calls[g].avg_significant;
		if (t->g.significant_only && !any)
			row->shown = false;
	}
	if (t->g.power && t->mode == DIFF_MODE_RUNS && rows_run(t, true))
		goto out;
	if (order_finish(&oj))
		goto out;
	key_widths(t);
	rc = 0;
out:
	if (oj.started)
		pthread_join(oj.th, NULL);
	free(oj.k);
	free(vals);
	free(pv);
	free(qv);
	stats_ctx_free(ctx);
	if (rc)
		return proff_err_set(err, rc, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
}
