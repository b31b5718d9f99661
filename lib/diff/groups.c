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
#include <stdlib.h>
#include <string.h>

#include "diff-int.h"

#define NONE_ID UINT32_MAX
#define PERF_TYPE_SOFTWARE_ 1      /* linux/perf_event.h: cpu-clock 0, task-clock 1 */

struct diff_table_priv {
	pf_strtab strs;
	uint32_t other_id;           /* "[other]": a row without a parent match */
	diff_key *keys;              /* [cap * nkeys] */
	uint32_t *kid;               /* [cap * nkeys]: string id per key (NONE_ID: none) */
	uint64_t *period[2];         /* [cap * nruns]: Self, Children */
	uint8_t *seen;               /* [cap]: a run has set the row's flags */
	size_t cap;
	uint32_t *slots;             /* row index + 1, 0 = empty */
	size_t nslots;
	uint64_t *hash;              /* [cap] key hash (for growing the slots) */
	uint32_t *smap;              /* the run being added: profile string id -> table's */
	size_t smap_cap;
	diff_gstat *stats;           /* [nrows * ngroups] per metric, rows in creation order */
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
	int64_t oid = pf_strtab_intern(&t->priv->strs, "[other]", 7);
	if (oid < 0)
		goto nomem;
	t->priv->other_id = (uint32_t)oid;
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
		free(p->kid);
		free(p->period[0]);
		free(p->period[1]);
		free(p->seen);
		free(p->slots);
		free(p->hash);
		free(p->smap);
		free(p->stats);
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

/* the table's id of a string of the run's profile (interned on first use) */
static uint32_t map_str(diff_table *t, const pf_profile *prof, uint32_t sid)
{
	struct diff_table_priv *p = t->priv;
	if (sid >= p->smap_cap)
		return NONE_ID;
	if (p->smap[sid] == NONE_ID) {
		const char *s = pf_str(prof, sid);
		int64_t id = pf_strtab_intern(&p->strs, s, prof->strs.lens ? prof->strs.lens[sid] : strlen(s));
		if (id < 0)
			return NONE_ID - 1;      /* out of memory */
		p->smap[sid] = (uint32_t)id;
	}
	return p->smap[sid];
}

static uint64_t row_hash(const uint32_t *kid, const diff_key *k, int nkeys)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < nkeys; i++)
		x = pf_hash64(x ^ kid[i] ^ ((uint64_t)pf_hash64(k[i].n ^ (k[i].n2 << 32)) << 1));
	return x;
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
	k = pf_realloc_array(p->kid, ncap * nk, sizeof(uint32_t));
	if (!k)
		return PROFF_ENOMEM;
	p->kid = k;
	k = pf_realloc_array(p->hash, ncap, sizeof(uint64_t));
	if (!k)
		return PROFF_ENOMEM;
	p->hash = k;
	k = pf_realloc_array(p->seen, ncap, 1);
	if (!k)
		return PROFF_ENOMEM;
	p->seen = k;
	for (int w = 0; w < (t->g.children ? 2 : 1); w++) {
		uint64_t *v = pf_realloc_array(p->period[w], ncap * t->nruns, sizeof(uint64_t));
		if (!v)
			return PROFF_ENOMEM;
		memset(v + p->cap * t->nruns, 0, (ncap - p->cap) * t->nruns * sizeof(uint64_t));
		p->period[w] = v;
	}
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

/* the row of the keys, made if new; -1 out of memory */
static long find_row(diff_table *t, const uint32_t *kid, const diff_key *k)
{
	struct diff_table_priv *p = t->priv;
	size_t nk = (size_t)t->nkeys;
	uint64_t h = row_hash(kid, k, t->nkeys);
	if (p->nslots) {
		size_t s = h & (p->nslots - 1);
		for (; p->slots[s]; s = (s + 1) & (p->nslots - 1)) {
			size_t i = p->slots[s] - 1;
			if (p->hash[i] != h || memcmp(&p->kid[i * nk], kid, nk * sizeof(*kid)))
				continue;
			bool same = true;
			for (size_t j = 0; j < nk && same; j++)
				same = p->keys[i * nk + j].n == k[j].n && p->keys[i * nk + j].n2 == k[j].n2;
			if (same)
				return (long)i;
		}
	}
	if (t->nrows == p->cap && grow_rows(t))
		return -1;
	size_t i = t->nrows++;
	memcpy(&p->kid[i * nk], kid, nk * sizeof(*kid));
	memcpy(&p->keys[i * nk], k, nk * sizeof(*k));
	for (size_t j = 0; j < nk; j++)      /* the strings stay where the arena put them */
		p->keys[i * nk + j].s = kid[j] == NONE_ID ? NULL : pf_strtab_get(&p->strs, kid[j]);
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
	if (prof->strs.n > p->smap_cap) {
		free(p->smap);
		p->smap_cap = 0;
		p->smap = pf_calloc(prof->strs.n, sizeof(uint32_t));
		if (!p->smap)
			goto nomem;
		p->smap_cap = prof->strs.n;
	}
	memset(p->smap, 0xff, p->smap_cap * sizeof(uint32_t));
	t->have_run[run] = true;
	t->totals[run] = t->o.relative ? h->total_non_filtered_period : h->total_period;
	t->samples[run] = t->o.relative ? h->nr_non_filtered_samples : h->nr_samples;
	t->exact |= prof->exact != NULL;
	t->time_unit |= time_event(prof, h->evsel);
	bool base = t->group[run] == 0;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		uint32_t kid[HIST_MAX_KEYS];
		diff_key k[HIST_MAX_KEYS];
		uint32_t pid_comm = NONE_ID;
		for (int j = 0; j < t->nkeys; j++) {
			uint32_t sid = NONE_ID;
			k[j] = (diff_key){ 0 };
			switch (t->keys[j]) {
			case HK_COMM: sid = e->comm; break;
			case HK_PID:
			case HK_TID:
				k[j].n = e->tid;
				k[j].n2 = e->pid;
				pid_comm = map_str(t, prof, e->thread < prof->nr_threads ? prof->threads[e->thread].comm : e->comm);
				break;
			case HK_DSO:
				if (e->dso != PF_NONE)
					sid = t->o.verbose ? prof->dsos[e->dso].long_name : prof->dsos[e->dso].short_name;
				break;
			case HK_SYM:
				if (e->sym != PF_NONE)
					sid = prof->syms[e->sym].name;
				break;
			case HK_CPU: k[j].n = e->cpu; break;
			case HK_PARENT: sid = e->parent ? e->parent : NONE_ID - 2; break;
			case HK_SRCLINE: sid = e->srcline; break;
			default: break;
			}
			if (sid == NONE_ID - 2)
				kid[j] = p->other_id;
			else
				kid[j] = sid == NONE_ID ? NONE_ID : map_str(t, prof, sid);
			if (kid[j] == NONE_ID - 1 || pid_comm == NONE_ID - 1)
				goto nomem;
		}
		long ri = find_row(t, kid, k);
		if (ri < 0)
			goto nomem;
		diff_trow *row = &t->rows[ri];
		if (!p->seen[ri]) {
			p->seen[ri] = 1;
			row->filtered = e->filtered;
			row->level = e->level;
			if (pid_comm != NONE_ID)
				row->pid_comm = pf_strtab_get(&p->strs, pid_comm);
		} else {
			row->filtered &= e->filtered;
		}
		if (e->sym == PF_NONE && e->addr < row->addr)
			row->addr = e->addr;
		row->in_baseline |= base;
		p->period[DIFF_SELF][(size_t)ri * t->nruns + run] += e->period;
		if (t->g.children)
			p->period[DIFF_CHILDREN][(size_t)ri * t->nruns + run] += e->period_acc;
	}
	return 0;
nomem:
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* ---- statistics ------------------------------------------------------------------- */

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

/* the row's mean share (%) over the runs of the baseline group and group g */
static double pooled_share(const diff_table *t, const diff_trow *row, int which, size_t g)
{
	double sum = 0;
	size_t n = 0;
	for (size_t gi = 0; gi <= g; gi += g) {
		for (size_t r = t->group_first[gi]; r < t->group_first[gi] + t->group_runs[gi]; r++, n++)
			if (t->totals[r])
				sum += 100.0 * (double)diff_table_period(t, row, which, r) / (double)t->totals[r];
		if (!g)
			break;
	}
	return n ? sum / (double)n : 0;
}

/* A row's values of one metric: per group the means, and against the
 * baseline group the compute values and the test. vals: [nruns] scratch. */
static int row_stats(diff_table *t, stats_ctx *ctx, const diff_trow *row, int which, diff_gstat *st,
		     double *vals)
{
	size_t nr = t->nruns;
	for (size_t r = 0; r < nr; r++)
		vals[r] = diff_table_value(t, row, which, r);
	for (size_t g = 0; g < t->ngroups; g++) {
		diff_gstat *s = &st[g];
		size_t f = t->group_first[g], n = t->group_runs[g];
		double sum = 0;
		s->present = 0;
		for (size_t r = f; r < f + n; r++) {
			uint64_t pv = diff_table_period(t, row, which, r);
			sum += (double)pv;
			s->present += pv != 0;
		}
		s->mean = stats_mean(vals + f, n);
		s->sd = sqrt(stats_var(vals + f, n));
		s->mean_period = sum / (double)n;
		s->q = NAN;
		s->significant = false;
		s->runs_needed = 0;
		if (!g) {
			s->delta = s->ratio = NAN;
			s->wdiff = 0;
			memset(&s->test, 0, sizeof(s->test));
			s->test.status = STATS_TOO_FEW;
			s->test.p = NAN;
			continue;
		}
		const diff_gstat *b = &st[0];
		s->small = pooled_share(t, row, which, g) < t->g.min_share;
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
	double *vals = pf_calloc(t->nruns, sizeof(double));
	double *pv = pf_calloc(t->nrows ? t->nrows * ng * nw : 1, sizeof(double));
	double *qv = pf_calloc(t->nrows ? t->nrows * ng * nw : 1, sizeof(double));
	stats_ctx *ctx = stats_ctx_new(&t->g.stats);
	int rc = PROFF_ENOMEM;
	if (!p->stats || !vals || !pv || !qv || !ctx)
		goto out;
	if (total_stats(t, ctx, vals))
		goto out;
	for (size_t i = 0; i < t->nrows; i++) {
		diff_trow *row = &t->rows[i];
		row->keys = &p->keys[i * nk];
		for (size_t w = 0; w < nw; w++) {
			row->stat[w] = &p->stats[(i * nw + w) * ng];
			if (row_stats(t, ctx, row, (int)w, row->stat[w], vals))
				goto out;
		}
		bool other = false;
		for (size_t g = 1; g < ng; g++)
			other |= row->stat[DIFF_SELF][g].present != 0 ||
				 (nw > 1 && row->stat[DIFF_CHILDREN][g].present != 0);
		row->shown = !row->filtered && (!t->o.baseline_only || (row->in_baseline && other));
	}
	/* Benjamini-Hochberg over every test of the printed rows */
	size_t np = 0;
	for (size_t i = 0; i < t->nrows; i++)
		for (size_t w = 0; w < nw; w++)
			for (size_t g = 1; g < ng; g++) {
				const diff_gstat *s = &t->rows[i].stat[w][g];
				pv[np++] = t->rows[i].shown && s->test.status == STATS_OK ? s->test.p : NAN;
			}
	long m = stats_bh(pv, np, qv);
	if (m < 0)
		goto out;
	t->ntests = (size_t)m;
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
				if (t->g.power && !s->significant && s->test.status == STATS_OK &&
				    t->mode == DIFF_MODE_RUNS && row->shown)
					s->runs_needed = stats_runs_for_power(s->delta, row->stat[w][0].sd, s->sd, t->g.fdr,
									      t->g.power_target, t->g.power_max);
			}
		if (t->g.significant_only && !any)
			row->shown = false;
	}
	qsort_r(t->rows, t->nrows, sizeof(*t->rows), row_order, t);
	key_widths(t);
	rc = 0;
out:
	free(vals);
	free(pv);
	free(qv);
	stats_ctx_free(ctx);
	if (rc)
		return proff_err_set(err, rc, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
}
