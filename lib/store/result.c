/* result.c — a store query's result: rows of the sort keys with Self,
 * Children and sample counts per replicate, and the totals of each
 * replicate. Filled by a store (the local one aggregates its profiles
 * here, store_result_add_prof; ClickHouse returns rows it aggregated),
 * then put in a fixed order (store_result_finish) and turned into the
 * hists that the report printer and the diff tables read — so a store's
 * report and diff are printed, ordered and tested by the same code as
 * those of files.
 *
 * The rows' strings, dsos, symbols and comms live in a pf_profile of the
 * result's own: one dso per dso name, one symbol per (dso, name) with
 * made-up addresses in name order (perf's order compares symbols of a
 * dso by address), one thread per comm.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "store-int.h"

struct store_result_priv {
	pf_map64 rows;             /* key hash -> row index (chained through next) */
	uint32_t *next;            /* [cap_rows] next row of the same hash, PF_NONE */
	uint64_t *hash;            /* [cap_rows] */
	size_t cap_rows, cap_keys;
	pf_map64 reps;             /* (group, name id) hash -> rep index (chained) */
	uint32_t *rep_next;
	size_t cap_reps;
	uint32_t *row_cell;        /* [cap_rows] the row's last cell (a replicate's sums go to one
	                            * cell while its profile is added; cells of one (row, rep)
	                            * made at other times are summed by store_result_finish) */
	uint64_t *cell;            /* [3 * ncells] self, acc, count */
	size_t dense_reps;         /* store_result_fix_reps: replicates [0, dense_reps) sum into */
	uint64_t *dense[3];        /* self, acc, count [cap_rows * dense_reps], row-major: store_result_finish
	                            * orders them in place into r->self, r->acc and row_count */
	size_t dense_bytes;        /* the size of each dense table's mapping (table_grow) */
	bool mapped[3];            /* r->self, r->acc, row_count are dense tables (unmapped, not freed) */
	bool dense_counted;        /* a sample count went to dense[2] (else it is dropped at finish
	                            * and row_count stays NULL: all zeros, never touched) */
	uint32_t *cell_row, *cell_rep;
	size_t ncells, cap_cells, cap_cell_rc;
	uint32_t *stamp;           /* [cap_rows] last sample that counted the row's Children */
	uint32_t sample_no;
	uint32_t *row_dso, *row_sym, *row_thread;   /* after finish */
	uint64_t *row_count;       /* after finish: [nrows * nreps], or NULL: no counts (all 0) */
	size_t *rep_off;           /* after finish: rep_row[rep_off[q] .. rep_off[q + 1]) are the */
	uint32_t *rep_row;         /* rows replicate q has (a replicate's hist reads only those) */
	size_t nkw;                /* keys per row (at least 1) */
	const char *label_key;
};

/* The dense tables: mapped memory, grown by remapping (the pages not
 * touched yet cost nothing, and come zeroed), with transparent huge pages
 * asked for — a table of rows x replicates is megabytes written once in
 * a scattered order, and on a virtual machine each 4 KiB page's first
 * touch costs more than the sums written into it. */
static uint64_t *table_grow(uint64_t *old, size_t old_bytes, size_t new_bytes)
{
	void *m = old ? mremap(old, old_bytes, new_bytes, MREMAP_MAYMOVE)
		      : mmap(NULL, new_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	madvise(m, new_bytes, MADV_HUGEPAGE);     /* (a hint: no error if it is not taken) */
	return m;
}

static void table_free(uint64_t *t, size_t bytes)
{
	if (t)
		munmap(t, bytes);
}

static size_t table_bytes_for(size_t cells)
{
	size_t b = (cells ? cells : 1) * sizeof(uint64_t);
	return (b + 4095) & ~(size_t)4095;
}

int store_result_new(const store_query *q, store_result **out, proff_error *err)
{
	*out = NULL;
	store_result *r = pf_calloc(1, sizeof(*r));
	if (!r)
		goto nomem;
	r->priv = pf_calloc(1, sizeof(*r->priv));
	r->prof = pf_calloc(1, sizeof(*r->prof));
	if (!r->priv || !r->prof || pf_strtab_init(&r->prof->strs))
		goto nomem;
	r->prof->path = strdup("store");
	r->nkeys = q->nkeys;
	memcpy(r->keys, q->keys, sizeof(int) * (size_t)q->nkeys);
	r->children = q->children;
	r->priv->nkw = q->nkeys ? (size_t)q->nkeys : 1;
	r->priv->label_key = q->label_key;
	pf_map64_init(&r->priv->rows);
	pf_map64_init(&r->priv->reps);
	*out = r;
	return 0;
nomem:
	store_result_free(r);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

void store_result_free(store_result *r)
{
	if (!r)
		return;
	struct store_result_priv *p = r->priv;
	bool self_mapped = p && p->mapped[0], acc_mapped = p && p->mapped[1];
	size_t table_bytes = p ? p->dense_bytes : 0;
	if (p) {
		pf_map64_free(&p->rows);
		pf_map64_free(&p->reps);
		free(p->row_cell);
		for (int i = 0; i < 3; i++)
			table_free(p->dense[i], p->dense_bytes);
		free(p->next);
		free(p->hash);
		free(p->rep_next);
		free(p->cell);
		free(p->cell_row);
		free(p->cell_rep);
		free(p->stamp);
		free(p->row_dso);
		free(p->row_sym);
		free(p->row_thread);
		if (p->mapped[2])
			table_free(p->row_count, p->dense_bytes);
		else
			free(p->row_count);
		free(p->rep_off);
		free(p->rep_row);
		free(p);
	}
	if (r->prof)
		pf_profile_free(r->prof);
	free(r->rep_name);
	free(r->rep_group);
	free(r->rep_total);
	free(r->rep_samples);
	free(r->rep_profiles);
	free(r->row_key);
	free(r->row_level);
	free(r->row_addr);
	if (self_mapped)
		table_free(r->self, table_bytes);
	else
		free(r->self);
	if (acc_mapped)
		table_free(r->acc, table_bytes);
	else
		free(r->acc);
	free(r);
}

long store_result_rep(store_result *r, uint32_t group, const char *name, size_t len)
{
	struct store_result_priv *p = r->priv;
	int64_t nid = pf_strtab_intern(&r->prof->strs, name, len);
	if (nid < 0)
		return -1;
	uint64_t h = pf_hash64(((uint64_t)group << 32) | (uint64_t)nid) | 1;
	bool found;
	uint64_t *slot = pf_map64_upsert(&p->reps, h, &found);
	if (!slot)
		return -1;
	if (found)
		for (uint32_t i = (uint32_t)*slot; i != PF_NONE; i = p->rep_next[i])
			if (r->rep_group[i] == group && r->rep_name[i] == (uint32_t)nid)
				return i;
	size_t n = r->nreps;
	if (n == p->cap_reps) {
		size_t nc = n ? 2 * n : 64;
		uint32_t *a = pf_realloc_array(r->rep_name, nc, sizeof(uint32_t));
		if (!a)
			return -1;
		r->rep_name = a;
		if (!(a = pf_realloc_array(r->rep_group, nc, sizeof(uint32_t))))
			return -1;
		r->rep_group = a;
		if (!(a = pf_realloc_array(r->rep_profiles, nc, sizeof(uint32_t))))
			return -1;
		r->rep_profiles = a;
		if (!(a = pf_realloc_array(p->rep_next, nc, sizeof(uint32_t))))
			return -1;
		p->rep_next = a;
		uint64_t *b = pf_realloc_array(r->rep_total, nc, sizeof(uint64_t));
		if (!b)
			return -1;
		r->rep_total = b;
		if (!(b = pf_realloc_array(r->rep_samples, nc, sizeof(uint64_t))))
			return -1;
		r->rep_samples = b;
		p->cap_reps = nc;
	}
	r->rep_name[n] = (uint32_t)nid;
	r->rep_group[n] = group;
	r->rep_total[n] = r->rep_samples[n] = 0;
	r->rep_profiles[n] = 0;
	/* a new slot (found false) has no chain yet; a found one is chained */
	p->rep_next[n] = found ? (uint32_t)*slot : PF_NONE;
	*slot = n;
	r->nreps++;
	return (long)n;
}

static uint64_t keys_hash(const uint32_t *k, size_t n)
{
	uint64_t h = 0x51ed270b27a6d43fULL;
	for (size_t i = 0; i < n; i++)
		h = pf_hash64(h ^ k[i]) + i;
	return h | 1;
}

/* the row of key ids, made if new */
static long row_of_ids(store_result *r, const uint32_t *kid)
{
	struct store_result_priv *p = r->priv;
	size_t nk = p->nkw;
	uint64_t h = keys_hash(kid, nk);
	bool found;
	uint64_t *slot = pf_map64_upsert(&p->rows, h, &found);
	if (!slot)
		return -1;
	if (found)
		for (uint32_t i = (uint32_t)*slot; i != PF_NONE; i = p->next[i])
			if (!memcmp(&r->row_key[i * nk], kid, nk * sizeof(uint32_t)))
				return i;
	size_t n = r->nrows;
	if (n == p->cap_rows) {
		size_t nc = n ? 2 * n : 1024;
		uint32_t *k = pf_realloc_array(r->row_key, nc * nk, sizeof(uint32_t));
		if (!k)
			return -1;
		r->row_key = k;
		if (!(k = pf_realloc_array(p->next, nc, sizeof(uint32_t))))
			return -1;
		p->next = k;
		if (!(k = pf_realloc_array(p->stamp, nc, sizeof(uint32_t))))
			return -1;
		p->stamp = k;
		if (!(k = pf_realloc_array(p->row_cell, nc, sizeof(uint32_t))))
			return -1;
		p->row_cell = k;
		char *l = pf_realloc_array(r->row_level, nc, 1);
		if (!l)
			return -1;
		r->row_level = l;
		uint64_t *a = pf_realloc_array(r->row_addr, nc, sizeof(uint64_t));
		if (!a)
			return -1;
		r->row_addr = a;
		if (p->dense_reps) {
			if (nc > SIZE_MAX / sizeof(uint64_t) / p->dense_reps)
				return -1;
			size_t nb = table_bytes_for(nc * p->dense_reps);
			for (int i = 0; i < 3; i++) {
				uint64_t *d = table_grow(p->dense[i], p->dense_bytes, nb);
				if (!d)
					return -1;
				p->dense[i] = d;
			}
			p->dense_bytes = nb;
		}
		p->cap_rows = nc;
		/* the slot pointer may have moved? No: only pf_map64 inserts move it */
	}
	memcpy(&r->row_key[n * nk], kid, nk * sizeof(uint32_t));
	p->next[n] = found ? (uint32_t)*slot : PF_NONE;
	p->stamp[n] = 0;
	p->row_cell[n] = PF_NONE;
	r->row_level[n] = 0;
	r->row_addr[n] = UINT64_MAX;
	*slot = n;
	r->nrows++;
	return (long)n;
}

long store_result_row(store_result *r, const char *const *keys, const size_t *lens)
{
	uint32_t kid[HIST_MAX_KEYS] = { 0 };
	for (int k = 0; k < r->nkeys; k++) {
		int64_t id = keys[k] ? pf_strtab_intern(&r->prof->strs, keys[k], lens[k]) : 0;
		if (id < 0)
			return -1;
		kid[k] = (uint32_t)id;
	}
	return row_of_ids(r, kid);
}

static int add_cell(store_result *r, size_t row, size_t rep, uint64_t self, uint64_t acc, uint64_t count)
{
	struct store_result_priv *p = r->priv;
	if (rep < p->dense_reps) {
		/* (a table no sum goes to is never touched: its pages stay unmapped) */
		size_t at = row * p->dense_reps + rep;
		p->dense[0][at] += self;
		if (acc)
			p->dense[1][at] += acc;
		if (count) {
			p->dense[2][at] += count;
			p->dense_counted = true;
		}
		return 0;
	}
	uint32_t c = p->row_cell[row];
	if (c == PF_NONE || p->cell_rep[c] != rep) {
		if (PF_GROW(p->cell, p->cap_cells, 3 * (p->ncells + 1)))
			return -1;
		if (p->ncells + 1 > p->cap_cell_rc) {
			size_t nc = p->cap_cell_rc ? 2 * p->cap_cell_rc : 4096;
			uint32_t *a = pf_realloc_array(p->cell_row, nc, sizeof(uint32_t));
			if (!a)
				return -1;
			p->cell_row = a;
			if (!(a = pf_realloc_array(p->cell_rep, nc, sizeof(uint32_t))))
				return -1;
			p->cell_rep = a;
			p->cap_cell_rc = nc;
		}
		c = (uint32_t)p->ncells++;
		p->cell[3 * c] = p->cell[3 * c + 1] = p->cell[3 * c + 2] = 0;
		p->cell_row[c] = (uint32_t)row;
		p->cell_rep[c] = (uint32_t)rep;
		p->row_cell[row] = c;
	}
	uint64_t *v = &p->cell[3 * (size_t)c];
	v[0] += self;
	v[1] += acc;
	v[2] += count;
	return 0;
}

int store_result_add(store_result *r, size_t row, size_t rep, uint64_t self, uint64_t acc)
{
	return add_cell(r, row, rep, self, acc, 0);
}

int store_result_add_count(store_result *r, size_t row, size_t rep, uint64_t self, uint64_t acc, uint64_t count)
{
	return add_cell(r, row, rep, self, acc, count);
}

int store_result_fix_reps(store_result *r)
{
	struct store_result_priv *p = r->priv;
	if (p->dense_reps || p->ncells || !r->nreps)
		return 0;
	size_t cap = p->cap_rows ? p->cap_rows : 1;
	if (cap > SIZE_MAX / sizeof(uint64_t) / r->nreps)
		return -1;
	p->dense_bytes = table_bytes_for(cap * r->nreps);
	for (int i = 0; i < 3; i++)
		if (!(p->dense[i] = table_grow(NULL, 0, p->dense_bytes)))
			return -1;
	p->dense_reps = r->nreps;
	return 0;
}

/* ---- the local store's aggregation ------------------------------------------------- */

/* A profile counted in its replicate, and its totals of the queried event
 * added: the event's index in sp, or -1 when sp has no such event */
static long add_totals(store_result *r, size_t rep, const store_prof *sp, const store_query *q)
{
	long ev = -1;
	for (size_t e = 0; e < sp->nr_events && ev < 0; e++)
		if (!strcmp(pf_strtab_get(&sp->strs, sp->events[e].name), q->event))
			ev = (long)e;
	r->rep_profiles[rep]++;
	if (ev < 0)
		return -1;
	r->rep_total[rep] += sp->events[ev].total;
	r->rep_samples[rep] += sp->events[ev].samples;
	r->callchain |= sp->events[ev].callchain;
	return ev;
}

int store_result_add_prof(store_result *r, size_t rep, const store_prof *sp, const store_query *q,
			  proff_error *err)
{
	struct store_result_priv *p = r->priv;
	long ev = add_totals(r, rep, sp, q);
	if (ev < 0)
		return 0;
	uint32_t *smap = pf_calloc(sp->strs.n ? sp->strs.n : 1, sizeof(uint32_t));
	pf_map64 fr;     /* comm << 32 | frame << 1 | callchain visit -> row + 1 */
	pf_map64_init(&fr);
	if (!smap)
		goto nomem;
	memset(smap, 0xff, (sp->strs.n ? sp->strs.n : 1) * sizeof(uint32_t));
	uint32_t label_id = 0;
	if (q->label_key) {
		const char *lv = store_prof_label_value(sp, q->label_key);
		int64_t id = pf_strtab_intern(&r->prof->strs, lv ? lv : "[none]", strlen(lv ? lv : "[none]"));
		if (id < 0)
			goto nomem;
		label_id = (uint32_t)id;
	}
#define MAP(sid) __extension__ ({ uint32_t s_ = (sid); \
	if (smap[s_] == PF_NONE) { \
		int64_t id_ = pf_strtab_intern(&r->prof->strs, pf_strtab_get(&sp->strs, s_), sp->strs.lens[s_]); \
		if (id_ < 0) goto nomem; \
		smap[s_] = (uint32_t)id_; } \
	smap[s_]; })
	for (size_t si = 0; si < sp->nr_samples; si++) {
		const store_sample *s = &sp->samples[si];
		if (s->event != (uint32_t)ev)
			continue;
		const store_stack *st = &sp->stacks[s->stack];
		if (++p->sample_no == 0) {
			memset(p->stamp, 0, r->nrows * sizeof(uint32_t));
			p->sample_no = 1;
		}
		/* visit 0: the leaf's own row; visit v: callchain entry v - 1 (by
		 * address, an unresolved frame's own row has its map address, a
		 * callchain entry's its absolute one, as in the files' reports) */
		for (uint32_t v = 0; v <= st->n; v++) {
			uint32_t i = v ? v - 1 : 0;
			uint32_t f = sp->stack_frames[st->first + i];
			const store_frame *fm = &sp->frames[f];
			bool chain = v > 0, by_addr = q->by_addr && !fm->sym;
			if (v == 1 && !(by_addr && fm->ip != fm->addr))
				continue;       /* the leaf's callchain row is its own row */
			uint64_t fkey = ((uint64_t)s->comm << 32) | (uint64_t)f << 1 | chain;
			bool found;
			uint64_t *slot = pf_map64_upsert(&fr, fkey, &found);
			if (!slot)
				goto nomem;
			uint64_t row;
			if (found) {
				row = *slot - 1;
			} else {
				uint32_t kid[HIST_MAX_KEYS] = { 0 };
				for (int k = 0; k < r->nkeys; k++) {
					switch (r->keys[k]) {
					case HK_COMM: kid[k] = MAP(s->comm); break;
					case HK_DSO: kid[k] = MAP(q->verbose ? fm->dso_long : fm->dso); break;
					case HK_SYM:
						if (by_addr) {
							char a[24];
							int n = snprintf(a, sizeof(a), "\001%" PRIx64, chain ? fm->ip : fm->addr);
							int64_t id = pf_strtab_intern(&r->prof->strs, a, (size_t)n);
							if (id < 0)
								goto nomem;
							kid[k] = (uint32_t)id;
						} else {
							kid[k] = MAP(fm->sym);
						}
						break;
					case HK_SRCLINE: kid[k] = MAP(fm->srcline); break;
					case HK_LABEL: kid[k] = label_id; break;
					default: kid[k] = 0; break;
					}
				}
				long ri = row_of_ids(r, kid);
				if (ri < 0)
					goto nomem;
				/* the map may have grown: look the slot up again */
				slot = pf_map64_upsert(&fr, fkey, &found);
				if (!slot)
					goto nomem;
				*slot = (uint64_t)ri + 1;
				row = (uint64_t)ri;
				/* a row's level is its first frame's (perf: its first
				 * sample's); without Children only a sample's own frame
				 * makes a row */
				uint64_t a = by_addr && chain ? fm->ip : fm->addr;
				if (r->children || !chain) {
					if (!r->row_level[ri])
						r->row_level[ri] = fm->level;
					if (!fm->sym && a < r->row_addr[ri])
						r->row_addr[ri] = a;
				}
			}
			uint64_t self = v == 0 ? s->period : 0, cnt = v == 0 ? s->count : 0, acc = 0;
			if (p->stamp[row] != p->sample_no) {
				p->stamp[row] = p->sample_no;
				acc = s->period;
			}
			if ((self || acc || cnt || v == 0) && add_cell(r, row, rep, self, r->children ? acc : 0, cnt))
				goto nomem;
		}
	}
#undef MAP
	free(smap);
	pf_map64_free(&fr);
	return 0;
nomem:
	free(smap);
	pf_map64_free(&fr);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

int store_result_add_keyrows(store_result *r, size_t rep, const store_prof *sp, int ks, const store_query *q,
			     proff_error *err)
{
	long ev = add_totals(r, rep, sp, q);
	if (ev < 0)
		return 0;
	uint32_t *smap = pf_calloc(sp->strs.n ? sp->strs.n : 1, sizeof(uint32_t));
	if (!smap)
		goto nomem;
	memset(smap, 0xff, (sp->strs.n ? sp->strs.n : 1) * sizeof(uint32_t));
	const struct store_prof_priv *pp = sp->priv;
	for (size_t i = 0; pp && i < pp->nr_keyrows; i++) {
		const store_keyrow *kr = &pp->keyrows[i];
		if (pp->keyrow_set[i] != ks || kr->event != (uint32_t)ev)
			continue;
		uint32_t kid[HIST_MAX_KEYS] = { 0 };
		for (int k = 0; k < r->nkeys; k++) {
			uint32_t sid = 0;
			switch (r->keys[k]) {
			case HK_COMM: sid = kr->comm; break;
			case HK_DSO: sid = kr->dso; break;
			case HK_SYM:
				if (q->by_addr && !kr->sym) {
					char a[24];
					int n = snprintf(a, sizeof(a), "\001%" PRIx64, kr->addr);
					int64_t id = pf_strtab_intern(&r->prof->strs, a, (size_t)n);
					if (id < 0)
						goto nomem;
					kid[k] = (uint32_t)id;
					continue;
				}
				sid = kr->sym;
				break;
			case HK_SRCLINE: sid = kr->srcline; break;
			default: break;
			}
			if (smap[sid] == PF_NONE) {
				int64_t id = pf_strtab_intern(&r->prof->strs, pf_strtab_get(&sp->strs, sid), sp->strs.lens[sid]);
				if (id < 0)
					goto nomem;
				smap[sid] = (uint32_t)id;
			}
			kid[k] = smap[sid];
		}
		long ri = row_of_ids(r, kid);
		if (ri < 0)
			goto nomem;
		/* a row's level is the first frame's that made it (the rows come
		 * in the order their first frames were met); without Children,
		 * the first of the samples' own frames */
		char level = r->children ? kr->level : kr->self_level;
		uint64_t addr = r->children ? kr->addr : kr->self_addr;
		if (!r->row_level[ri])
			r->row_level[ri] = level;
		if (!kr->sym && (r->children || addr) && addr < r->row_addr[ri])
			r->row_addr[ri] = addr;
		if (add_cell(r, (size_t)ri, rep, kr->self, r->children ? kr->acc : 0, kr->count))
			goto nomem;
	}
	free(smap);
	return 0;
nomem:
	free(smap);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* ---- a fixed order --------------------------------------------------------------------- */

/* (qsort_r's argument: the result whose replicates or rows are ordered) */
static int rep_cmp(const void *a, const void *b, void *arg)
{
	const store_result *cmp_r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (cmp_r->rep_group[x] != cmp_r->rep_group[y])
		return cmp_r->rep_group[x] < cmp_r->rep_group[y] ? -1 : 1;
	int c = strcmp(pf_str(cmp_r->prof, cmp_r->rep_name[x]), pf_str(cmp_r->prof, cmp_r->rep_name[y]));
	return c ? c : (x < y ? -1 : x > y);
}

static int row_cmp(const void *a, const void *b, void *arg)
{
	const store_result *cmp_r = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t nk = cmp_r->priv->nkw;
	for (size_t k = 0; k < (size_t)cmp_r->nkeys; k++) {
		int c = strcmp(pf_str(cmp_r->prof, cmp_r->row_key[x * nk + k]), pf_str(cmp_r->prof, cmp_r->row_key[y * nk + k]));
		if (c)
			return c;
	}
	return x < y ? -1 : x > y;
}

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

static int sym_cmp(const void *a, const void *b, void *arg)
{
	const pf_profile *p = arg;
	const pf_sym *x = &p->syms[*(const uint32_t *)a], *y = &p->syms[*(const uint32_t *)b];
	const char *dx = x->dso == PF_NONE ? "" : pf_str(p, p->dsos[x->dso].short_name);
	const char *dy = y->dso == PF_NONE ? "" : pf_str(p, p->dsos[y->dso].short_name);
	int c = strcmp(dx, dy);
	return c ? c : strcmp(pf_str(p, x->name), pf_str(p, y->name));
}

/* dsos, symbols and threads of the result's profile for the rows */
static int make_model(store_result *r)
{
	struct store_result_priv *p = r->priv;
	pf_profile *pp = r->prof;
	size_t nk = p->nkw;
	int kd = -1, ks = -1, kc = -1, kl = -1;
	for (int k = 0; k < r->nkeys; k++) {
		if (r->keys[k] == HK_DSO) kd = k;
		if (r->keys[k] == HK_SYM) ks = k;
		if (r->keys[k] == HK_COMM) kc = k;
		if (r->keys[k] == HK_LABEL) kl = k;
	}
	/* label:NAME: a thread per (comm, value), each with a label set of
	 * its value (the report's key reads a row's thread's label) */
	uint32_t lname = 0;
	if (kl >= 0) {
		int64_t id = pf_strtab_intern(&pp->strs, p->label_key ? p->label_key : "", strlen(p->label_key ? p->label_key : ""));
		if (id < 0)
			return -1;
		lname = (uint32_t)id;
	}
	p->row_dso = pf_calloc(r->nrows ? r->nrows : 1, sizeof(uint32_t));
	p->row_sym = pf_calloc(r->nrows ? r->nrows : 1, sizeof(uint32_t));
	p->row_thread = pf_calloc(r->nrows ? r->nrows : 1, sizeof(uint32_t));
	if (!p->row_dso || !p->row_sym || !p->row_thread)
		return -1;
	pf_map64 dm, sm, tm;
	pf_map64_init(&dm);
	pf_map64_init(&sm);
	pf_map64_init(&tm);
	int rc = -1;
	for (size_t i = 0; i < r->nrows; i++) {
		uint32_t d = kd >= 0 ? r->row_key[i * nk + (size_t)kd] : 0;
		uint32_t s = ks >= 0 ? r->row_key[i * nk + (size_t)ks] : 0;
		uint32_t c = kc >= 0 ? r->row_key[i * nk + (size_t)kc] : 0;
		bool found;
		uint64_t *slot;
		p->row_dso[i] = PF_NONE;
		if (d) {
			if (!(slot = pf_map64_upsert(&dm, d, &found)))
				goto out;
			if (!found) {
				if (PF_GROW(pp->dsos, pp->cap_dsos, pp->nr_dsos + 1))
					goto out;
				pf_dso *o = &pp->dsos[pp->nr_dsos];
				memset(o, 0, sizeof(*o));
				o->long_name = o->short_name = d;
				o->kind = SYM_DSO_USER;
				*slot = pp->nr_dsos++;
			}
			p->row_dso[i] = (uint32_t)*slot;
		}
		p->row_sym[i] = PF_NONE;
		if (s && pf_str(pp, s)[0] == '\001') {
			/* an unresolved address of its own (store_query.by_addr) */
			r->row_addr[i] = strtoull(pf_str(pp, s) + 1, NULL, 16);
		} else if (s) {
			if (!(slot = pf_map64_upsert(&sm, ((uint64_t)p->row_dso[i] << 32) | s, &found)))
				goto out;
			if (!found) {
				if (PF_GROW(pp->syms, pp->cap_syms, pp->nr_syms + 1))
					goto out;
				pp->syms[pp->nr_syms] = (pf_sym){ p->row_dso[i], s, 0, 0 };
				*slot = pp->nr_syms++;
			}
			p->row_sym[i] = (uint32_t)*slot;
		}
		uint32_t lv = kl >= 0 ? r->row_key[i * nk + (size_t)kl] : 0;
		if (!(slot = pf_map64_upsert(&tm, ((uint64_t)lv << 32) | c, &found)))
			goto out;
		if (!found) {
			pf_thread *t = pf_realloc_array(pp->threads, pp->nr_threads + 1, sizeof(*t));
			if (!t)
				goto out;
			pp->threads = t;
			t[pp->nr_threads] = (pf_thread){ 0, 0, c };
			if (kl >= 0) {
				/* set n + 1 holds label n; set 0 is the empty one */
				uint32_t *tl = pf_realloc_array(pp->thread_labels, pp->nr_threads + 1, sizeof(uint32_t));
				pf_label *lb = pf_realloc_array(pp->labels, pp->nr_labels + 1, sizeof(pf_label));
				if (tl)
					pp->thread_labels = tl;
				if (lb)
					pp->labels = lb;
				uint32_t *ls = pf_realloc_array(pp->label_sets, pp->nr_labels + 3, sizeof(uint32_t));
				if (!tl || !lb || !ls)
					goto out;
				pp->label_sets = ls;
				lb[pp->nr_labels] = (pf_label){ .key = lname, .value = lv };
				ls[0] = 0;
				ls[pp->nr_labels + 1] = (uint32_t)pp->nr_labels;
				ls[pp->nr_labels + 2] = (uint32_t)pp->nr_labels + 1;
				tl[pp->nr_threads] = (uint32_t)pp->nr_labels + 1;
				pp->nr_labels++;
				pp->nr_label_sets = pp->nr_labels + 1;
			}
			*slot = pp->nr_threads++;
		}
		p->row_thread[i] = (uint32_t)*slot;
	}
	/* addresses in (dso, name) order: perf compares a dso's symbols by address */
	uint32_t *ord = pf_calloc(pp->nr_syms ? pp->nr_syms : 1, sizeof(uint32_t));
	if (!ord)
		goto out;
	for (size_t i = 0; i < pp->nr_syms; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, pp->nr_syms, sizeof(uint32_t), sym_cmp, pp);
	for (size_t i = 0; i < pp->nr_syms; i++) {
		pp->syms[ord[i]].start = 0x1000 + 0x10 * (uint64_t)i;
		pp->syms[ord[i]].end = pp->syms[ord[i]].start + 0x10;
	}
	free(ord);
	rc = 0;
out:
	pf_map64_free(&dm);
	pf_map64_free(&sm);
	pf_map64_free(&tm);
	return rc;
}

/* Rows and replicates of the dense tables put in order in place: row i
 * becomes row word[i]'s, replicate q goes to rpos[q]. -1 out of memory. */
static int dense_order(uint64_t *const d[3], size_t nr, size_t nrep, const uint32_t *word, const uint32_t *rpos)
{
	uint64_t *tmp = pf_calloc(nrep, sizeof(uint64_t));
	bool *done = pf_calloc(nr, sizeof(bool));
	if (!tmp || !done) {
		free(tmp);
		free(done);
		return -1;
	}
	bool same_reps = true;
	for (size_t q = 0; q < nrep; q++)
		same_reps &= rpos[q] == q;
	for (int a = 0; a < 3; a++) {
		uint64_t *m = d[a];
		if (!m)
			continue;       /* a table of zeros: in any order */
		size_t rb = nrep * sizeof(uint64_t);
		memset(done, 0, nr * sizeof(bool));
		/* new[j] = old[word[j]], cycle by cycle */
		for (size_t i = 0; i < nr; i++) {
			if (done[i] || word[i] == i) {
				done[i] = true;
				continue;
			}
			memcpy(tmp, m + i * nrep, rb);
			size_t j = i;
			while (word[j] != i) {
				memcpy(m + j * nrep, m + (size_t)word[j] * nrep, rb);
				done[j] = true;
				j = word[j];
			}
			memcpy(m + j * nrep, tmp, rb);
			done[j] = true;
		}
		for (size_t i = 0; i < nr && !same_reps; i++) {
			uint64_t *row = m + i * nrep;
			for (size_t q = 0; q < nrep; q++)
				tmp[rpos[q]] = row[q];
			memcpy(row, tmp, rb);
		}
	}
	free(tmp);
	free(done);
	return 0;
}

int store_result_finish(store_result *r, proff_error *err)
{
	struct store_result_priv *p = r->priv;
	size_t nk = p->nkw, nr = r->nrows, nrep = r->nreps;
	uint32_t *rord = pf_calloc(nrep ? nrep : 1, sizeof(uint32_t)), *rpos = pf_calloc(nrep ? nrep : 1, sizeof(uint32_t));
	uint32_t *word = pf_calloc(nr ? nr : 1, sizeof(uint32_t)), *wpos = pf_calloc(nr ? nr : 1, sizeof(uint32_t));
	if (!rord || !rpos || !word || !wpos)
		goto nomem;
	for (size_t i = 0; i < nrep; i++)
		rord[i] = (uint32_t)i;
	for (size_t i = 0; i < nr; i++)
		word[i] = (uint32_t)i;
	if (nrep)
		qsort_r(rord, nrep, sizeof(uint32_t), rep_cmp, (void *)r);
	if (nr)
		qsort_r(word, nr, sizeof(uint32_t), row_cmp, (void *)r);
	for (size_t i = 0; i < nrep; i++)
		rpos[rord[i]] = (uint32_t)i;
	for (size_t i = 0; i < nr; i++)
		wpos[word[i]] = (uint32_t)i;
	/* the replicates' arrays in the new order */
#define PERMUTE(arr, T, n, ord) do { \
	T *t_ = pf_calloc((n) ? (n) : 1, sizeof(T)); \
	if (!t_) goto nomem; \
	for (size_t i_ = 0; i_ < (n); i_++) t_[i_] = (arr)[(ord)[i_]]; \
	free(arr); (arr) = t_; } while (0)
	PERMUTE(r->rep_name, uint32_t, nrep, rord);
	PERMUTE(r->rep_group, uint32_t, nrep, rord);
	PERMUTE(r->rep_total, uint64_t, nrep, rord);
	PERMUTE(r->rep_samples, uint64_t, nrep, rord);
	PERMUTE(r->rep_profiles, uint32_t, nrep, rord);
	PERMUTE(r->row_level, char, nr, word);
	PERMUTE(r->row_addr, uint64_t, nr, word);
#undef PERMUTE
	uint32_t *keys = pf_calloc(nr ? nr * nk : 1, sizeof(uint32_t));
	if (!keys)
		goto nomem;
	for (size_t i = 0; i < nr; i++)
		memcpy(&keys[i * nk], &r->row_key[(size_t)word[i] * nk], nk * sizeof(uint32_t));
	free(r->row_key);
	r->row_key = keys;
	for (size_t i = 0; i < nr; i++)
		if (r->row_addr[i] == UINT64_MAX)
			r->row_addr[i] = 0;
	size_t cells = nr * nrep;
	if (!cells)
		cells = 1;
	size_t ndense = 0;          /* (row, rep) sums of the dense part that are not 0 */
	if (p->dense_reps == nrep && nr) {
		/* the dense sums are the tables: put in order in place */
		bool counted = p->dense_counted || p->ncells;
		uint64_t *const ord[3] = { p->dense[0], r->children ? p->dense[1] : NULL, counted ? p->dense[2] : NULL };
		if (dense_order(ord, nr, nrep, word, rpos))
			goto nomem;
		r->self = p->dense[0];
		p->mapped[0] = true;
		if (counted) {
			p->row_count = p->dense[2];
			p->mapped[2] = true;
		} else {
			table_free(p->dense[2], p->dense_bytes);
		}
		if (r->children) {
			r->acc = p->dense[1];
			p->mapped[1] = true;
		} else {
			table_free(p->dense[1], p->dense_bytes);
		}
		p->dense[0] = p->dense[1] = p->dense[2] = NULL;
		for (size_t i = 0; i < cells; i++)
			ndense += r->self[i] || (p->row_count && p->row_count[i]) || (r->acc && r->acc[i]);
	} else {
		r->self = pf_calloc(cells, sizeof(uint64_t));
		p->row_count = pf_calloc(cells, sizeof(uint64_t));
		if (r->children)
			r->acc = pf_calloc(cells, sizeof(uint64_t));
		if (!r->self || !p->row_count || (r->children && !r->acc))
			goto nomem;
		/* (replicates made after store_result_fix_reps: none here) */
		for (size_t o = 0; o < nr && p->dense_reps; o++) {
			size_t at = (size_t)wpos[o] * nrep;
			for (size_t q = 0; q < p->dense_reps; q++) {
				size_t from = o * p->dense_reps + q;
				r->self[at + rpos[q]] = p->dense[0][from];
				if (r->acc)
					r->acc[at + rpos[q]] = p->dense[1][from];
				p->row_count[at + rpos[q]] = p->dense[2][from];
				ndense += p->dense[0][from] || p->dense[1][from] || p->dense[2][from];
			}
		}
	}
	for (size_t c = 0; c < p->ncells; c++) {
		size_t at = (size_t)wpos[p->cell_row[c]] * nrep + rpos[p->cell_rep[c]];
		r->self[at] += p->cell[3 * c];
		p->row_count[at] += p->cell[3 * c + 2];
		if (r->acc)
			r->acc[at] += p->cell[3 * c + 1];
	}
	/* each replicate's rows, by row: the cells sorted by (rep, row) */
	p->rep_off = pf_calloc(nrep + 1, sizeof(size_t));
	p->rep_row = pf_calloc(ndense + 2 * p->ncells ? ndense + 2 * p->ncells : 1, sizeof(uint32_t));
	if (!p->rep_off || !p->rep_row)
		goto nomem;
	/* (the dense part: the sums in order now, the cells not added yet) */
	for (size_t i = 0; i < nr && ndense; i++)
		for (size_t q = 0; q < nrep; q++) {
			size_t at = i * nrep + q;
			if (r->self[at] || (p->row_count && p->row_count[at]) || (r->acc && r->acc[at]))
				p->rep_off[q + 1]++;
		}
	for (size_t c = 0; c < p->ncells; c++)
		p->rep_off[rpos[p->cell_rep[c]] + 1]++;
	for (size_t q = 0; q < nrep; q++)
		p->rep_off[q + 1] += p->rep_off[q];
	{
		size_t *fill = pf_calloc(nrep ? nrep : 1, sizeof(size_t));
		bool *unsorted = pf_calloc(nrep ? nrep : 1, sizeof(bool));
		if (!fill || !unsorted) {
			free(fill);
			free(unsorted);
			goto nomem;
		}
		/* the dense part by row (each list sorted) */
		for (size_t i = 0; i < nr && ndense; i++)
			for (size_t q = 0; q < nrep; q++) {
				size_t at = i * nrep + q;
				if (r->self[at] || (p->row_count && p->row_count[at]) || (r->acc && r->acc[at]))
					p->rep_row[p->rep_off[q] + fill[q]++] = (uint32_t)i;
			}
		for (size_t c = 0; c < p->ncells; c++) {
			size_t q = rpos[p->cell_rep[c]];
			p->rep_row[p->rep_off[q] + fill[q]++] = wpos[p->cell_row[c]];
			unsorted[q] = true;
		}
		free(fill);
		for (size_t q = 0; q < nrep; q++) {
			uint32_t *a = p->rep_row + p->rep_off[q];
			size_t n = p->rep_off[q + 1] - p->rep_off[q];
			if (n && unsorted[q])
				qsort(a, n, sizeof(uint32_t), u32_cmp);
		}
		free(unsorted);
		/* a (row, rep) of two cells (its profiles added apart) listed once */
		size_t o = 0;
		for (size_t q = 0; q < nrep; q++) {
			size_t lo = p->rep_off[q], hi = p->rep_off[q + 1];
			p->rep_off[q] = o;
			for (size_t j = lo; j < hi; j++)
				if (j == lo || p->rep_row[j] != p->rep_row[j - 1])
					p->rep_row[o++] = p->rep_row[j];
		}
		p->rep_off[nrep] = o;
	}
	free(p->cell);
	p->cell = NULL;
	p->ncells = p->cap_cells = 0;
	for (int i = 0; i < 3; i++) {
		table_free(p->dense[i], p->dense_bytes);
		p->dense[i] = NULL;
	}
	p->dense_reps = 0;
	free(rord);
	free(rpos);
	free(word);
	free(wpos);
	if (make_model(r))
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
nomem:
	free(rord);
	free(rpos);
	free(word);
	free(wpos);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* ---- as hists -------------------------------------------------------------------------- */

void store_hist_free(hist *h)
{
	if (!h)
		return;
	free(h->entries);
	free(h);
}

static int make_hist(const store_result *r, const hist_opts *ho, size_t rep_lo, size_t rep_hi, size_t group,
		     hist **out, proff_error *err)
{
	const struct store_result_priv *p = r->priv;
	size_t nk = p->nkw;
	*out = NULL;
	if (!r->prof->events) {
		/* the result's one event, made when a hist first needs it */
		pf_profile *pp = r->prof;
		pp->events = pf_calloc(1, sizeof(pf_event));
		if (!pp->events)
			goto nomem;
		pp->nr_events = 1;
	}
	hist *h = pf_calloc(1, sizeof(*h));
	if (!h)
		goto nomem;
	h->prof = r->prof;
	h->opts = *ho;
	h->nkeys = r->nkeys;
	memcpy(h->keys, r->keys, sizeof(int) * (size_t)r->nkeys);
	h->label_key = PF_NONE;
	if (r->prof->labels && r->prof->nr_labels)
		h->label_key = r->prof->labels[0].key;
	size_t room = rep_hi == rep_lo + 1 && group == SIZE_MAX ? p->rep_off[rep_lo + 1] - p->rep_off[rep_lo] : r->nrows;
	h->entries = pf_calloc(room ? room : 1, sizeof(hist_entry));
	if (!h->entries) {
		free(h);
		goto nomem;
	}
	for (size_t q = rep_lo; q < rep_hi; q++) {
		if (group != SIZE_MAX && r->rep_group[q] != group)
			continue;
		h->total_period += r->rep_total[q];
		h->nr_samples += r->rep_samples[q];
	}
	h->total_non_filtered_period = h->total_period;
	h->nr_non_filtered_samples = h->nr_samples;
	bool one = rep_hi == rep_lo + 1 && group == SIZE_MAX;
	size_t nscan = one ? p->rep_off[rep_lo + 1] - p->rep_off[rep_lo] : r->nrows;
	for (size_t j = 0; j < nscan; j++) {
		size_t i = one ? p->rep_row[p->rep_off[rep_lo] + j] : j;
		uint64_t self = 0, acc = 0, cnt = 0;
		for (size_t q = rep_lo; q < rep_hi; q++) {
			if (group != SIZE_MAX && r->rep_group[q] != group)
				continue;
			self += r->self[i * r->nreps + q];
			if (p->row_count)
				cnt += p->row_count[i * r->nreps + q];
			if (r->acc)
				acc += r->acc[i * r->nreps + q];
		}
		if (!r->acc)
			acc = self;
		if (!self && !acc)
			continue;
		hist_entry *e = &h->entries[h->n++];
		e->cpu = PF_NONE;
		e->thread = p->row_thread[i];
		e->dso = p->row_dso[i];
		e->sym = p->row_sym[i];
		e->loc = PF_NONE;
		e->cc_root = PF_NONE;
		e->level = r->row_level[i] ? r->row_level[i] : '.';
		e->addr = r->row_addr[i];
		e->period = self;
		e->period_acc = acc;
		e->nr_events = cnt;
		for (int k = 0; k < r->nkeys; k++) {
			uint32_t v = r->row_key[i * nk + (size_t)k];
			switch (r->keys[k]) {
			case HK_COMM: e->comm = v; break;
			case HK_SYM: e->sym_name = v; break;
			case HK_SRCLINE: e->srcline = v; break;
			default: break;
			}
		}
	}
	*out = h;
	return 0;
nomem:
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

int store_result_hist(const store_result *r, size_t group, const hist_opts *ho, hist **out, proff_error *err)
{
	int rc = make_hist(r, ho, 0, r->nreps, group, out, err);
	if (rc)
		return rc;
	hist *h = *out;
	/* perf's row order over the rows made in key order */
	if (hist_order_perf(h) < 0) {
		store_hist_free(h);
		*out = NULL;
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	hist_key_widths(h);
	return 0;
}

int store_result_run_hist(const store_result *r, size_t rep, const hist_opts *ho, hist **out, proff_error *err)
{
	return make_hist(r, ho, rep, rep + 1, SIZE_MAX, out, err);
}
