/* pprof-write.c — a profile written as pprof's profile.proto (encoded by
 * protobuf-c from lib/formats/profile.proto), gzip-compressed or not.
 *
 *   - sample types: per event two, "samples"/"count" and "<event>"/unit
 *     for one event (the form of Go's CPU profiles), "<event>_samples"/
 *     "count" and "<event>"/unit for each of several; the unit is the
 *     event's (read from pprof), else nanoseconds for cpu-clock,
 *     task-clock and exact traces' time, else count. default_sample_type
 *     and period_type are the last event's period;
 *   - a mapping per (dso, load address): the dso's path and its build id
 *     in hex, memory_start..memory_limit spanning its locations, with the
 *     file offset that gives back the dso's addresses;
 *   - a location per frame, with a line of its symbol's function (and its
 *     source line with pf_write_opts.lines, or when the profile has them);
 *     consecutive frames of one address (inlined functions, as read from
 *     pprof) are one location with a line each, innermost first;
 *   - labels: pid, tid (numbers), comm (string), cpu (a number, when the
 *     event has cpus), and the profile's own pprof labels.
 * pf_pprof_read reads all of it back (docs/formats/interchange.md).
 */
#include "fmt-int.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "formats/profile.pb-c.h"

typedef Perftools__Profiles__Profile pb_profile;
typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Line pb_line;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Label pb_label;

typedef struct pw_ctx {
	pf_profile *p;
	const pf_write_opts *o;
	proff_error *err;
	pf_arena arena;              /* every message */
	pf_strtab strs;              /* pprof's string table (id 0 is "") */
	int64_t *str_of;             /* model string id -> pprof index (-1: not yet) */
	/* mappings: (dso, ip - addr) -> index */
	pair_table map_tab;
	pb_mapping **maps; size_t nmaps, cap_maps;
	uint32_t *map_dso; size_t cap_map_dso;   /* mapping (in the order made) -> its dso */
	/* functions: symbol -> index + 1 (0: none yet) */
	uint32_t *func_of_sym;
	pb_function **funcs; size_t nfuncs, cap_funcs;
	/* locations: a run of frames of one address -> index; one-frame
	 * runs through loc_of (model location -> index + 1), longer ones
	 * through run_tab (hash of the run -> index, chained by run_next) */
	uint32_t *loc_of;
	pf_map64 run_tab;
	uint32_t *run_next; size_t cap_run_next;
	uint32_t *run_frames; size_t nrun_frames, cap_run_frames;   /* a location's frames, leaf first */
	uint32_t *run_at; size_t cap_run_at;                        /* location -> its first frame */
	pb_location **locs; size_t nlocs, cap_locs;
	bool oom;
} pw_ctx;

static int64_t pw_str(pw_ctx *c, const char *s)
{
	int64_t id = pf_strtab_intern(&c->strs, s, strlen(s));
	if (id < 0)
		c->oom = true;
	return id < 0 ? 0 : id;
}

static int64_t pw_mstr(pw_ctx *c, uint32_t id)
{
	if (c->str_of[id] < 0)
		c->str_of[id] = pw_str(c, pf_str(c->p, id));
	return c->str_of[id];
}

static void *pw_alloc(pw_ctx *c, size_t n)
{
	void *m = pf_arena_alloc(&c->arena, n ? n : 1);
	if (!m)
		c->oom = true;
	return m;
}

/* The unit of an event's period */
static const char *event_unit(pw_ctx *c, const pf_event *e)
{
	if (e->unit && *pf_str(c->p, e->unit))
		return pf_str(c->p, e->unit);
	size_t n = strcspn(e->name, ":/");
	if ((n == 9 && !strncmp(e->name, "cpu-clock", 9)) || (n == 10 && !strncmp(e->name, "task-clock", 10)) ||
	    !strcmp(e->name, "exact-time"))
		return "nanoseconds";
	return "count";
}

static uint32_t mapping_of(pw_ctx *c, const pf_loc *l)
{
	if (l->dso == PF_NONE)
		return 0;
	uint64_t delta = l->ip - l->addr;
	int ins;
	uint32_t *slot = pair_table_find(&c->map_tab, l->dso, delta, 1, &ins);
	if (!slot) {
		c->oom = true;
		return 0;
	}
	if (!ins) {
		pb_mapping *m = c->maps[*slot];
		if (l->ip < m->memory_start) {
			m->memory_start = l->ip;
			m->file_offset = l->ip - delta;
		}
		if (l->ip >= m->memory_limit)
			m->memory_limit = l->ip + 1;
		return (uint32_t)m->id;
	}
	pb_mapping *m = pw_alloc(c, sizeof(*m));
	if (!m || PF_GROW(c->maps, c->cap_maps, c->nmaps + 1) < 0 || PF_GROW(c->map_dso, c->cap_map_dso, c->nmaps + 1) < 0) {
		c->oom = true;
		*slot = 0;
		return 0;
	}
	perftools__profiles__mapping__init(m);
	const pf_dso *d = &c->p->dsos[l->dso];
	m->id = c->nmaps + 1;
	m->memory_start = l->ip;
	m->memory_limit = l->ip + 1;
	m->file_offset = l->addr;
	m->filename = pw_mstr(c, d->long_name);
	if (d->build_id_size) {
		char hex[2 * sizeof(d->build_id) + 1];
		for (unsigned i = 0; i < d->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", d->build_id[i]);
		m->build_id = pw_str(c, hex);
	}
	m->has_functions = true;
	*slot = (uint32_t)c->nmaps;
	c->map_dso[c->nmaps] = l->dso;
	c->maps[c->nmaps++] = m;
	return (uint32_t)m->id;
}

/* "file.c:42" of a location, split (0: none) */
static int64_t srcline_of(pw_ctx *c, uint32_t loc, int64_t *file)
{
	pf_loc *l = &c->p->locs[loc];
	*file = 0;
	if (l->srcline == PF_NONE && !(c->o && c->o->lines))
		return 0;
	const char *s = pf_loc_srcline(c->p, loc);
	const char *colon = strrchr(s, ':');
	if (!colon || colon == s || !colon[1])
		return 0;
	char *end;
	long long line = strtoll(colon + 1, &end, 10);
	if (*end || line <= 0)
		return 0;
	char buf[600];
	snprintf(buf, sizeof(buf), "%.*s", (int)(colon - s > 590 ? 590 : colon - s), s);
	*file = pw_str(c, buf);
	return line;
}

static uint64_t function_of(pw_ctx *c, uint32_t sym, int64_t file)
{
	if (c->func_of_sym[sym])
		return c->func_of_sym[sym];
	pb_function *f = pw_alloc(c, sizeof(*f));
	if (!f || PF_GROW(c->funcs, c->cap_funcs, c->nfuncs + 1) < 0) {
		c->oom = true;
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = c->nfuncs + 1;
	f->name = f->system_name = pw_mstr(c, c->p->syms[sym].name);
	f->filename = file;
	c->funcs[c->nfuncs++] = f;
	c->func_of_sym[sym] = (uint32_t)f->id;
	return f->id;
}

/* The location of frames[0, n) (one address; leaf first): its id */
static uint64_t location_of(pw_ctx *c, const uint32_t *frames, size_t n)
{
	uint64_t h = 0;
	if (n == 1) {
		if (c->loc_of[frames[0]])
			return c->loc_of[frames[0]];
	} else {
		h = 0x10c;
		for (size_t i = 0; i < n; i++)
			h = pf_hash64(h ^ frames[i]);
		uint64_t v;
		if (pf_map64_get(&c->run_tab, h, &v))
			for (uint32_t li = (uint32_t)v; li != PF_NONE; li = c->run_next[li]) {
				const pb_location *x = c->locs[li];
				if (x->n_line == n && !memcmp(c->run_frames + c->run_at[li], frames, n * sizeof(*frames)))
					return x->id;
			}
	}
	pb_location *m = pw_alloc(c, sizeof(*m));
	pb_line **lines = pw_alloc(c, n * sizeof(*lines));
	size_t li = c->nlocs;
	if (!m || !lines || PF_GROW(c->locs, c->cap_locs, li + 1) < 0 ||
	    PF_GROW(c->run_at, c->cap_run_at, li + 1) < 0 || PF_GROW(c->run_next, c->cap_run_next, li + 1) < 0 ||
	    PF_GROW(c->run_frames, c->cap_run_frames, c->nrun_frames + n) < 0) {
		c->oom = true;
		return 0;
	}
	perftools__profiles__location__init(m);
	const pf_loc *l = &c->p->locs[frames[0]];
	m->id = li + 1;
	m->mapping_id = mapping_of(c, l);
	m->address = l->ip;
	m->line = lines;
	for (size_t i = 0; i < n; i++) {
		const pf_loc *fl = &c->p->locs[frames[i]];
		if (fl->sym == PF_NONE)
			break;        /* an unresolved frame: a location without lines */
		pb_line *ln = pw_alloc(c, sizeof(*ln));
		if (!ln)
			return 0;
		perftools__profiles__line__init(ln);
		int64_t file;
		ln->line = srcline_of(c, frames[i], &file);
		ln->function_id = function_of(c, fl->sym, file);
		lines[m->n_line++] = ln;
	}
	if (!m->n_line && m->mapping_id)
		c->maps[m->mapping_id - 1]->has_functions = false;
	c->run_at[li] = (uint32_t)c->nrun_frames;
	memcpy(c->run_frames + c->nrun_frames, frames, n * sizeof(*frames));
	c->nrun_frames += n;
	c->run_next[li] = PF_NONE;
	c->locs[c->nlocs++] = m;
	if (n == 1) {
		c->loc_of[frames[0]] = (uint32_t)m->id;
	} else {
		bool found;
		uint64_t *slot = pf_map64_upsert(&c->run_tab, h, &found);
		if (!slot) {
			c->oom = true;
			return 0;
		}
		c->run_next[li] = found ? (uint32_t)*slot : PF_NONE;
		*slot = li;
	}
	return m->id;
}

static pb_label *num_label(pw_ctx *c, const char *key, int64_t v)
{
	pb_label *l = pw_alloc(c, sizeof(*l));
	if (!l)
		return NULL;
	perftools__profiles__label__init(l);
	l->key = pw_str(c, key);
	l->num = v;
	return l;
}

/* A sample's labels: its thread's fields, cpu, its pprof labels */
static int sample_labels(pw_ctx *c, const pf_sample *s, bool cpu, pb_sample *m)
{
	const pf_profile *p = c->p;
	uint32_t set = p->thread_labels ? p->thread_labels[s->thread] : 0;
	size_t nset = set ? p->label_sets[set + 1] - p->label_sets[set] : 0;
	m->label = pw_alloc(c, (4 + nset) * sizeof(*m->label));
	if (!m->label)
		return -1;
	if (s->pid != PF_NONE)
		m->label[m->n_label++] = num_label(c, "pid", s->pid);
	if (s->tid != PF_NONE)
		m->label[m->n_label++] = num_label(c, "tid", s->tid);
	if (cpu && s->cpu != PF_NONE)
		m->label[m->n_label++] = num_label(c, "cpu", s->cpu);
	if (strcmp(pf_str(p, s->comm), "[unknown]")) {
		pb_label *l = num_label(c, "comm", 0);
		if (l)
			l->str = pw_mstr(c, s->comm);
		m->label[m->n_label++] = l;
	}
	for (size_t i = 0; i < nset; i++) {
		const pf_label *x = &p->labels[p->label_sets[set] + i];
		pb_label *l = num_label(c, pf_str(p, x->key), x->num);
		if (l && x->is_num)
			l->num_unit = x->unit ? pw_mstr(c, x->unit) : 0;
		else if (l)
			l->str = pw_mstr(c, x->value);
		m->label[m->n_label++] = l;
	}
	for (size_t i = 0; i < m->n_label; i++)
		if (!m->label[i])
			return -1;
	return 0;
}

/* ---- output: straight, or through deflate ----------------------------------------------- */

typedef struct pw_out {
	ProtobufCBuffer base;
	FILE *f;
	z_stream *z;
	uint8_t *zbuf;
	bool failed;
} pw_out;

#define ZBUF ((size_t)256 << 10)

static void out_write(pw_out *o, const uint8_t *d, size_t n, int flush)
{
	if (o->failed)
		return;
	if (!o->z) {
		if (n && fwrite(d, 1, n, o->f) != n)
			o->failed = true;
		return;
	}
	o->z->next_in = (Bytef *)d;
	o->z->avail_in = (uInt)n;
	do {
		o->z->next_out = o->zbuf;
		o->z->avail_out = (uInt)ZBUF;
		int r = deflate(o->z, flush);
		if (r == Z_STREAM_ERROR) {
			o->failed = true;
			return;
		}
		size_t have = ZBUF - o->z->avail_out;
		if (have && fwrite(o->zbuf, 1, have, o->f) != have) {
			o->failed = true;
			return;
		}
	} while (o->z->avail_out == 0 || (flush == Z_FINISH && o->z->avail_in));
}

static void out_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	pw_out *o = (pw_out *)b;
	while (len) {
		size_t n = len > UINT32_MAX ? UINT32_MAX : len;
		out_write(o, data, n, Z_NO_FLUSH);
		data += n;
		len -= n;
	}
}

/* pprof takes the first mapping for the main binary ("File:"): the
 * executable of the comm with the most period, else the first user-space
 * file, goes first */
static void main_mapping_first(pw_ctx *c)
{
	const pf_profile *p = c->p;
	if (c->nmaps < 2)
		return;
	uint32_t best_comm = PF_NONE;
	uint64_t best = 0;
	pf_map64 per_comm;
	pf_map64_init(&per_comm);
	for (size_t i = 0; i < p->nr_samples; i++) {
		uint64_t *v = pf_map64_upsert(&per_comm, p->samples[i].comm, NULL);
		if (!v)
			break;
		*v += p->samples[i].period;
		if (*v > best) {
			best = *v;
			best_comm = p->samples[i].comm;
		}
	}
	pf_map64_free(&per_comm);
	size_t pick = SIZE_MAX;
	for (size_t i = 0; i < c->nmaps && pick == SIZE_MAX; i++) {
		uint32_t fn = (uint32_t)c->maps[i]->filename;
		const char *path = c->strs.strs[fn], *base = strrchr(path, '/');
		if (best_comm != PF_NONE && !strcmp(base ? base + 1 : path, pf_str(p, best_comm)))
			pick = i;
	}
	for (size_t i = 0; i < c->nmaps && pick == SIZE_MAX; i++)
		if (c->strs.strs[c->maps[i]->filename][0] == '/')
			pick = i;
	if (pick == SIZE_MAX || pick == 0)
		return;
	/* the picked one first, the others after it in their order (the ids
	 * stay: they give the dsos' order, mapping_ids_by_dso) */
	pb_mapping *m = c->maps[pick];
	memmove(c->maps + 1, c->maps, pick * sizeof(*c->maps));
	c->maps[0] = m;
}

typedef struct map_rank { uint32_t dso, made; } map_rank;

static int map_rank_cmp(const void *x, const void *y)
{
	const map_rank *a = x, *b = y;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->made < b->made ? -1 : a->made > b->made;
}

/* Mapping ids in the order of the profile's dsos (pf_pprof_read makes a
 * dso per mapping in id order: the dsos keep their order, which perf's
 * tie orders read), mappings of one dso in the order they were made */
static int mapping_ids_by_dso(pw_ctx *c)
{
	size_t n = c->nmaps;
	map_rank *r = malloc((n ? n : 1) * sizeof(*r));
	uint64_t *new_id = malloc((n + 1) * sizeof(*new_id));
	if (!r || !new_id) {
		free(r);
		free(new_id);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		r[i] = (map_rank){ c->map_dso[i], (uint32_t)i };
	if (n)
		qsort(r, n, sizeof(*r), map_rank_cmp);
	new_id[0] = 0;
	for (size_t k = 0; k < n; k++)
		new_id[r[k].made + 1] = k + 1;
	for (size_t i = 0; i < n; i++)
		c->maps[i]->id = new_id[i + 1];
	for (size_t i = 0; i < c->nlocs; i++)
		c->locs[i]->mapping_id = new_id[c->locs[i]->mapping_id];
	free(r);
	free(new_id);
	return 0;
}

static void pw_free(pw_ctx *c)
{
	pf_arena_free(&c->arena);
	pf_strtab_free(&c->strs);
	free(c->str_of);
	pair_table_free(&c->map_tab);
	free(c->maps);
	free(c->map_dso);
	free(c->func_of_sym);
	free(c->funcs);
	free(c->loc_of);
	pf_map64_free(&c->run_tab);
	free(c->run_next);
	free(c->run_frames);
	free(c->run_at);
	free(c->locs);
}

static int pw_build(pw_ctx *c, pb_profile *m)
{
	pf_profile *p = c->p;
	/* events with samples: two sample types each */
	size_t nev = 0;
	int *slot_of = pw_alloc(c, (p->nr_events + 1) * sizeof(int));
	if (!slot_of)
		return -1;
	for (size_t i = 0; i < p->nr_events; i++)
		slot_of[i] = p->events[i].nr_samples ? (int)nev++ : -1;
	if (!nev)
		return proff_err_set(c->err, PROFF_EUSAGE, p->path, PROFF_NO_OFFSET, "no samples to write");
	m->sample_type = pw_alloc(c, 2 * nev * sizeof(*m->sample_type));
	if (!m->sample_type)
		return -1;
	pb_value_type *last = NULL;
	for (size_t i = 0; i < p->nr_events; i++) {
		if (slot_of[i] < 0)
			continue;
		const pf_event *e = &p->events[i];
		pb_value_type *vt[2] = { pw_alloc(c, sizeof(pb_value_type)), pw_alloc(c, sizeof(pb_value_type)) };
		if (!vt[0] || !vt[1])
			return -1;
		perftools__profiles__value_type__init(vt[0]);
		perftools__profiles__value_type__init(vt[1]);
		char name[600];
		snprintf(name, sizeof(name), "%.500s_samples", e->name);
		vt[0]->type = pw_str(c, nev == 1 ? "samples" : name);
		vt[0]->unit = pw_str(c, "count");
		vt[1]->type = pw_str(c, e->name);
		vt[1]->unit = pw_str(c, event_unit(c, e));
		m->sample_type[m->n_sample_type++] = vt[0];
		m->sample_type[m->n_sample_type++] = vt[1];
		last = vt[1];
	}
	m->period_type = last;
	m->default_sample_type = last->type;
	if (p->last_time > p->first_time)
		m->duration_nanos = (int64_t)(p->last_time - p->first_time);
	/* samples */
	size_t ns = 0;
	for (size_t i = 0; i < p->nr_samples; i++)
		if (p->samples[i].evsel < p->nr_events && slot_of[p->samples[i].evsel] >= 0 && p->samples[i].stack)
			ns += p->samples[i].period ? (p->samples[i].period - 1) / INT64_MAX + 1 : 1;
	m->sample = pw_alloc(c, ns * sizeof(*m->sample));
	uint32_t *frames = NULL;
	size_t cap_frames = 0;
	if (!m->sample)
		return -1;
	for (size_t i = 0; i < p->nr_samples && !c->oom; i++) {
		const pf_sample *s = &p->samples[i];
		if (s->evsel >= p->nr_events || slot_of[s->evsel] < 0 || !s->stack)
			continue;
		pb_sample *x = pw_alloc(c, sizeof(*x));
		size_t depth = p->nodes[s->stack].depth;
		if (!x || PF_GROW(frames, cap_frames, depth + 1) < 0) {
			c->oom = true;
			break;
		}
		perftools__profiles__sample__init(x);
		x->value = pw_alloc(c, 2 * nev * sizeof(*x->value));
		x->location_id = pw_alloc(c, depth * sizeof(*x->location_id));
		if (!x->value || !x->location_id)
			break;
		x->n_value = 2 * nev;
		x->value[2 * slot_of[s->evsel]] = s->count;
		x->value[2 * slot_of[s->evsel] + 1] = (int64_t)s->period;
		size_t nf = 0;
		for (uint32_t n = s->stack; n; n = p->nodes[n].parent)
			frames[nf++] = p->nodes[n].loc;
		/* runs of frames at one address (resolved, distinct locations):
		 * one location with a line each */
		for (size_t k = 0; k < nf;) {
			size_t e = k + 1;
			const pf_loc *l = &p->locs[frames[k]];
			while (e < nf && l->sym != PF_NONE) {
				const pf_loc *x2 = &p->locs[frames[e]];
				if (x2->ip != l->ip || x2->addr != l->addr || x2->dso != l->dso || x2->sym == PF_NONE ||
				    frames[e] == frames[e - 1])
					break;
				e++;
			}
			x->location_id[x->n_location_id++] = location_of(c, frames + k, e - k);
			k = e;
		}
		if (sample_labels(c, s, p->events[s->evsel].has_cpu, x) < 0)
			c->oom = true;
		m->sample[m->n_sample++] = x;
		/* pprof's values are int64: a period of 2^63 or more goes into
		 * more samples of the same stack (readers sum them) */
		for (uint64_t rest = s->period; rest > INT64_MAX && !c->oom;) {
			x->value[2 * slot_of[s->evsel] + 1] = INT64_MAX;
			rest -= INT64_MAX;
			pb_sample *y = pw_alloc(c, sizeof(*y));
			int64_t *v = pw_alloc(c, 2 * nev * sizeof(*v));
			if (!y || !v)
				break;
			*y = *x;
			y->value = v;
			v[2 * slot_of[s->evsel] + 1] = rest > INT64_MAX ? INT64_MAX : (int64_t)rest;
			m->sample[m->n_sample++] = x = y;
		}
	}
	free(frames);
	if (c->oom)
		return -1;
	if (mapping_ids_by_dso(c) < 0)
		return -1;
	main_mapping_first(c);
	m->mapping = c->maps;
	m->n_mapping = c->nmaps;
	m->location = c->locs;
	m->n_location = c->nlocs;
	m->function = c->funcs;
	m->n_function = c->nfuncs;
	m->string_table = (char **)c->strs.strs;
	m->n_string_table = c->strs.n;
	return 0;
}

int pf_pprof_write(pf_profile *p, FILE *out, const pf_write_opts *o, proff_error *err)
{
	pw_ctx c;
	memset(&c, 0, sizeof(c));
	c.p = p;
	c.o = o;
	c.err = err;
	pf_arena_init(&c.arena);
	int rc = 0;
	if (pf_strtab_init(&c.strs) < 0 ||
	    !(c.str_of = malloc((p->strs.n ? p->strs.n : 1) * sizeof(*c.str_of))) ||
	    !(c.func_of_sym = pf_calloc(p->nr_syms + 1, sizeof(*c.func_of_sym))) ||
	    !(c.loc_of = pf_calloc(p->nr_locs + 1, sizeof(*c.loc_of)))) {
		rc = -1;
		goto out;
	}
	memset(c.str_of, 0xff, p->strs.n * sizeof(*c.str_of));
	if (o && o->lines)
		pf_locs_srclines(p, NULL);
	pb_profile m;
	perftools__profiles__profile__init(&m);
	if ((rc = pw_build(&c, &m)) < 0)
		goto out;
	if (c.oom) {
		rc = -1;
		goto out;
	}
	pw_out w = { .base = { out_append }, .f = out };
	z_stream zs;
	if (o && o->gzip) {
		memset(&zs, 0, sizeof(zs));
		w.zbuf = malloc(ZBUF);
		if (!w.zbuf || deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			free(w.zbuf);
			rc = -1;
			goto out;
		}
		w.z = &zs;
	}
	perftools__profiles__profile__pack_to_buffer(&m, &w.base);
	if (w.z) {
		out_write(&w, NULL, 0, Z_FINISH);
		deflateEnd(&zs);
		free(w.zbuf);
	}
	if (w.failed || fflush(out) != 0 || ferror(out))
		rc = proff_err_sys(err, PROFF_EIO, p->path, "cannot write the pprof profile");
out:
	if (rc < 0 && (!err || !err->code))
		rc = proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
	pw_free(&c);
	return rc;
}
