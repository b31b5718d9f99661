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
 * Several profiles go into one file through a pf_pprof_writer (proff
 * convert A1 A2 -- B1 B2): each profile's samples get the labels the caller
 * gives (run, group), and a mapping, function or location that an earlier
 * profile already wrote (the same file name, build id and load bias; name,
 * binary and address; mapping, address and lines) is written once, so a
 * function is one function of the file whatever the number of runs.
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

/* Content-keyed lookups across profiles: a hash of the content -> the
 * first index with it, the others chained through next[] (the caller
 * compares the content) */
typedef struct ck_table {
	pf_map64 head;
	uint32_t *next; size_t cap;
} ck_table;

static uint32_t ck_first(const ck_table *t, uint64_t h)
{
	uint64_t v;
	return pf_map64_get(&t->head, h, &v) ? (uint32_t)v : PF_NONE;
}

static int ck_add(ck_table *t, uint64_t h, uint32_t idx)
{
	if (PF_GROW(t->next, t->cap, (size_t)idx + 1) < 0)
		return -1;
	bool found;
	uint64_t *slot = pf_map64_upsert(&t->head, h, &found);
	if (!slot)
		return -1;
	t->next[idx] = found ? (uint32_t)*slot : PF_NONE;
	*slot = idx;
	return 0;
}

static void ck_free(ck_table *t)
{
	pf_map64_free(&t->head);
	free(t->next);
}

struct pf_pprof_writer {
	pf_profile *p;               /* the profile being added */
	size_t nprof;                /* profiles added before it */
	pf_write_opts o;
	proff_error *err;
	size_t nextra;               /* its own labels (run, group) */
	pb_label **extra_pb;
	/* the first profile's events: every later one must have the same */
	char *first_path;
	char **ev_name, **ev_unit; bool *ev_used; size_t nev;
	int64_t duration;
	pb_sample **samples; size_t nsamples, cap_samples;
	pf_strtab comms;             /* comm names, for the main mapping */
	uint64_t *comm_period; size_t ncomm_period, cap_comm_period;
	/* across profiles: dsos by (file name, build id) -> their rank (the
	 * profile that met one first, its index there), mappings, functions
	 * and locations by content */
	ck_table dso_ck, map_ck, func_ck, loc_ck;
	struct gdso { int64_t name, bid; uint64_t rank; } *gdso; size_t ngdso, cap_gdso;
	uint32_t *dso_g;             /* model dso -> global dso + 1 (0: not yet) */
	uint64_t *map_delta; size_t cap_map_delta;
	struct fkey { int64_t name; uint64_t dso, start; } *func_key; size_t cap_func_key;
	pf_arena arena;              /* every message */
	pf_strtab strs;              /* pprof's string table (id 0 is "") */
	int64_t *str_of;             /* model string id -> pprof index (-1: not yet) */
	/* mappings: (dso, ip - addr) -> index */
	pair_table map_tab;
	pb_mapping **maps; size_t nmaps, cap_maps;
	uint64_t *map_dso; size_t cap_map_dso;   /* mapping (in the order made) -> its dso's rank */
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
	uint32_t *loc_stamp; size_t cap_loc_stamp;   /* location -> the profile (+ 1) whose frames run_at holds */
	pb_location **locs; size_t nlocs, cap_locs;
	uint32_t best_comm; uint64_t best;   /* the comm with the most period (c->comms) */
	bool oom;
};
typedef struct pf_pprof_writer pw_ctx;

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

/* The rank of model dso `dso` among every profile's dsos (file name and
 * build id as string indices): the profile that met it first and its
 * index there, so that the first profile's dsos keep its order */
static uint64_t dso_rank(pw_ctx *c, uint32_t dso, int64_t name, int64_t bid)
{
	if (c->dso_g[dso])
		return c->gdso[c->dso_g[dso] - 1].rank;
	uint64_t h = pf_hash64(pf_hash64((uint64_t)name) ^ (uint64_t)bid);
	uint32_t g = PF_NONE;
	if (c->nprof)
		for (uint32_t i = ck_first(&c->dso_ck, h); i != PF_NONE && g == PF_NONE; i = c->dso_ck.next[i])
			if (c->gdso[i].name == name && c->gdso[i].bid == bid)
				g = i;
	if (g == PF_NONE) {
		if (PF_GROW(c->gdso, c->cap_gdso, c->ngdso + 1) < 0 || ck_add(&c->dso_ck, h, (uint32_t)c->ngdso) < 0) {
			c->oom = true;
			return 0;
		}
		g = (uint32_t)c->ngdso++;
		c->gdso[g] = (struct gdso){ name, bid, (uint64_t)c->nprof << 32 | dso };
	}
	c->dso_g[dso] = g + 1;
	return c->gdso[g].rank;
}

static void map_extend(pb_mapping *m, uint64_t ip, uint64_t delta)
{
	if (ip < m->memory_start) {
		m->memory_start = ip;
		m->file_offset = ip - delta;
	}
	if (ip >= m->memory_limit)
		m->memory_limit = ip + 1;
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
		map_extend(m, l->ip, delta);
		return (uint32_t)m->id;
	}
	const pf_dso *d = &c->p->dsos[l->dso];
	int64_t filename = pw_mstr(c, d->long_name), build_id = 0;
	if (d->build_id_size) {
		char hex[2 * sizeof(d->build_id) + 1];
		for (unsigned i = 0; i < d->build_id_size; i++)
			snprintf(hex + 2 * i, 3, "%02x", d->build_id[i]);
		build_id = pw_str(c, hex);
	}
	uint64_t rank = dso_rank(c, l->dso, filename, build_id);
	/* the same file at the same load bias in an earlier profile */
	uint64_t h = pf_hash64(pf_hash64(pf_hash64((uint64_t)filename) ^ (uint64_t)build_id) ^ delta);
	if (c->nprof)
		for (uint32_t i = ck_first(&c->map_ck, h); i != PF_NONE; i = c->map_ck.next[i]) {
			pb_mapping *m = c->maps[i];
			if (m->filename == filename && m->build_id == build_id && c->map_delta[i] == delta) {
				*slot = i;
				map_extend(m, l->ip, delta);
				return (uint32_t)m->id;
			}
		}
	pb_mapping *m = pw_alloc(c, sizeof(*m));
	if (!m || PF_GROW(c->maps, c->cap_maps, c->nmaps + 1) < 0 || PF_GROW(c->map_dso, c->cap_map_dso, c->nmaps + 1) < 0 ||
	    PF_GROW(c->map_delta, c->cap_map_delta, c->nmaps + 1) < 0 || ck_add(&c->map_ck, h, (uint32_t)c->nmaps) < 0) {
		c->oom = true;
		*slot = 0;
		return 0;
	}
	perftools__profiles__mapping__init(m);
	m->id = c->nmaps + 1;
	m->memory_start = l->ip;
	m->memory_limit = l->ip + 1;
	m->file_offset = l->addr;
	m->filename = filename;
	m->build_id = build_id;
	m->has_functions = true;
	*slot = (uint32_t)c->nmaps;
	c->map_dso[c->nmaps] = rank;
	c->map_delta[c->nmaps] = delta;
	c->maps[c->nmaps++] = m;
	return (uint32_t)m->id;
}

/* "file.c:42" of a location, split (0: none) */
static int64_t srcline_of(pw_ctx *c, uint32_t loc, int64_t *file)
{
	pf_loc *l = &c->p->locs[loc];
	*file = 0;
	if (l->srcline == PF_NONE && !c->o.lines)
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

/* The function of model symbol sym, whose location is in the dso of rank
 * drank (UINT64_MAX: none). Across profiles a function is its name in
 * its binary, at its address when the profile's symbols have true ones
 * (perf.data: two static functions of one name stay two) */
static uint64_t function_of(pw_ctx *c, uint32_t sym, int64_t file, uint64_t drank)
{
	if (c->func_of_sym[sym])
		return c->func_of_sym[sym];
	const pf_sym *ms = &c->p->syms[sym];
	struct fkey key = { pw_mstr(c, ms->name), drank, c->p->syms_ctx ? ms->start : 0 };
	uint64_t h = pf_hash64(pf_hash64(pf_hash64((uint64_t)key.name) ^ key.dso) ^ key.start);
	if (c->nprof)
		for (uint32_t i = ck_first(&c->func_ck, h); i != PF_NONE; i = c->func_ck.next[i])
			if (c->func_key[i].name == key.name && c->func_key[i].dso == key.dso &&
			    c->func_key[i].start == key.start) {
				c->func_of_sym[sym] = (uint32_t)c->funcs[i]->id;
				return c->funcs[i]->id;
			}
	pb_function *f = pw_alloc(c, sizeof(*f));
	if (!f || PF_GROW(c->funcs, c->cap_funcs, c->nfuncs + 1) < 0 ||
	    PF_GROW(c->func_key, c->cap_func_key, c->nfuncs + 1) < 0 || ck_add(&c->func_ck, h, (uint32_t)c->nfuncs) < 0) {
		c->oom = true;
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = c->nfuncs + 1;
	f->name = f->system_name = key.name;
	f->filename = file;
	c->func_key[c->nfuncs] = key;
	c->funcs[c->nfuncs++] = f;
	c->func_of_sym[sym] = (uint32_t)f->id;
	return f->id;
}

/* A location of an earlier profile with m's mapping, address and lines */
static uint32_t same_location(const pw_ctx *c, const pb_location *m, uint64_t h)
{
	for (uint32_t i = ck_first(&c->loc_ck, h); i != PF_NONE; i = c->loc_ck.next[i]) {
		const pb_location *x = c->locs[i];
		if (x->mapping_id != m->mapping_id || x->address != m->address || x->n_line != m->n_line)
			continue;
		size_t k = 0;
		while (k < m->n_line && x->line[k]->function_id == m->line[k]->function_id &&
		       x->line[k]->line == m->line[k]->line)
			k++;
		if (k == m->n_line)
			return i;
	}
	return PF_NONE;
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
	    PF_GROW(c->loc_stamp, c->cap_loc_stamp, li + 1) < 0 ||
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
	uint64_t drank = l->dso != PF_NONE && c->dso_g[l->dso] ? c->gdso[c->dso_g[l->dso] - 1].rank : UINT64_MAX;
	uint64_t ch = pf_hash64(pf_hash64(m->mapping_id) ^ m->address);
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
		ln->function_id = function_of(c, fl->sym, file, drank);
		lines[m->n_line++] = ln;
		ch = pf_hash64(pf_hash64(ch ^ ln->function_id) ^ (uint64_t)ln->line);
	}
	/* written by an earlier profile: that one, cached for this profile's
	 * frames (once: a location already in this profile's run table keeps
	 * its chain, and frames of the same content found again later are
	 * looked up by content again) */
	uint32_t old = c->nprof ? same_location(c, m, ch) : PF_NONE;
	if (old != PF_NONE) {
		li = old;
		m = c->locs[li];
		if (n == 1)
			c->loc_of[frames[0]] = (uint32_t)m->id;
		if (n == 1 || c->loc_stamp[li] == c->nprof + 1)
			return m->id;
	} else {
		if (ck_add(&c->loc_ck, ch, (uint32_t)li) < 0) {
			c->oom = true;
			return 0;
		}
		if (!m->n_line && m->mapping_id)
			c->maps[m->mapping_id - 1]->has_functions = false;
		c->locs[c->nlocs++] = m;
	}
	c->loc_stamp[li] = (uint32_t)c->nprof + 1;
	c->run_at[li] = (uint32_t)c->nrun_frames;
	memcpy(c->run_frames + c->nrun_frames, frames, n * sizeof(*frames));
	c->nrun_frames += n;
	c->run_next[li] = PF_NONE;
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
	m->label = pw_alloc(c, (4 + nset + c->nextra) * sizeof(*m->label));
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
	/* the caller's (run, group): one message shared by the profile's samples */
	for (size_t i = 0; i < c->nextra; i++)
		m->label[m->n_label++] = c->extra_pb[i];
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
	if (c->nmaps < 2)
		return;
	const char *best = c->best_comm != PF_NONE ? c->comms.strs[c->best_comm] : NULL;
	size_t pick = SIZE_MAX;
	for (size_t i = 0; i < c->nmaps && pick == SIZE_MAX; i++) {
		uint32_t fn = (uint32_t)c->maps[i]->filename;
		const char *path = c->strs.strs[fn], *base = strrchr(path, '/');
		if (best && !strcmp(base ? base + 1 : path, best))
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

typedef struct map_rank { uint64_t dso; uint32_t made; } map_rank;

static int map_rank_cmp(const void *x, const void *y)
{
	const map_rank *a = x, *b = y;
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	return a->made < b->made ? -1 : a->made > b->made;
}

/* Mapping ids in the order of the profile's dsos (pf_pprof_read makes a
 * dso per mapping in id order: the dsos keep their order, which perf's
 * tie orders read; a later profile's new dsos after the first's),
 * mappings of one dso in the order they were made */
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

void pf_pprof_writer_free(pf_pprof_writer *c)
{
	if (!c)
		return;
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
	free(c->loc_stamp);
	free(c->locs);
	free(c->first_path);
	for (size_t i = 0; i < c->nev; i++) {
		free(c->ev_name[i]);
		free(c->ev_unit[i]);
	}
	free(c->ev_name);
	free(c->ev_unit);
	free(c->ev_used);
	free(c->samples);
	pf_strtab_free(&c->comms);
	free(c->comm_period);
	ck_free(&c->dso_ck);
	ck_free(&c->map_ck);
	ck_free(&c->func_ck);
	ck_free(&c->loc_ck);
	free(c->gdso);
	free(c->dso_g);
	free(c->map_delta);
	free(c->func_key);
	free(c);
}

int pf_pprof_writer_new(const pf_write_opts *o, pf_pprof_writer **out, proff_error *err)
{
	*out = NULL;
	pw_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (o)
		c->o = *o;
	c->best_comm = PF_NONE;
	pf_arena_init(&c->arena);
	pf_map64_init(&c->run_tab);
	if (pf_strtab_init(&c->strs) < 0 || pf_strtab_init(&c->comms) < 0) {
		pf_pprof_writer_free(c);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	*out = c;
	return 0;
}

/* "a, b, c": the names of p's events */
static void event_list(const pf_profile *p, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < p->nr_events; i++) {
		size_t l = strlen(buf);
		snprintf(buf + l, len - l, "%s%s", i ? ", " : "", p->events[i].name ? p->events[i].name : "?");
	}
}

/* The first profile's events taken, or a later one's checked against them */
static int add_events(pw_ctx *c, const pf_profile *p)
{
	if (c->nprof) {
		bool same = p->nr_events == c->nev;
		for (size_t i = 0; i < p->nr_events && same; i++)
			same = !strcmp(p->events[i].name ? p->events[i].name : "?", c->ev_name[i]);
		if (!same) {
			char mine[200], first[200] = "";
			event_list(p, mine, sizeof(mine));
			for (size_t i = 0; i < c->nev; i++) {
				size_t l = strlen(first);
				snprintf(first + l, sizeof(first) - l, "%s%s", i ? ", " : "", c->ev_name[i]);
			}
			return proff_err_set(c->err, PROFF_EUSAGE, p->path, PROFF_NO_OFFSET,
					     "events (%s) differ from those of %s (%s): the runs of one pprof file "
					     "must record the same events", mine, c->first_path, first);
		}
	} else {
		c->nev = p->nr_events;
		c->first_path = strdup(p->path ? p->path : "-");
		c->ev_name = calloc(c->nev + 1, sizeof(char *));
		c->ev_unit = calloc(c->nev + 1, sizeof(char *));
		c->ev_used = calloc(c->nev + 1, sizeof(bool));
		if (!c->first_path || !c->ev_name || !c->ev_unit || !c->ev_used)
			return -1;
		for (size_t i = 0; i < c->nev; i++) {
			c->ev_name[i] = strdup(p->events[i].name ? p->events[i].name : "?");
			c->ev_unit[i] = strdup(event_unit(c, &p->events[i]));
			if (!c->ev_name[i] || !c->ev_unit[i])
				return -1;
		}
		/* the sample types' strings first, as pw_build names them */
		size_t used = 0;
		for (size_t i = 0; i < c->nev; i++)
			used += p->events[i].nr_samples > 0;
		for (size_t i = 0; i < c->nev; i++) {
			if (!p->events[i].nr_samples)
				continue;
			char name[600];
			snprintf(name, sizeof(name), "%.500s_samples", c->ev_name[i]);
			pw_str(c, used == 1 ? "samples" : name);
			pw_str(c, "count");
			pw_str(c, c->ev_name[i]);
			pw_str(c, c->ev_unit[i]);
		}
	}
	for (size_t i = 0; i < p->nr_events; i++)
		c->ev_used[i] |= p->events[i].nr_samples > 0;
	return 0;
}

/* The tables of the profile before (model ids -> pprof ids) made anew */
static int reset_profile_tables(pw_ctx *c, const pf_profile *p)
{
	free(c->str_of);
	free(c->func_of_sym);
	free(c->loc_of);
	free(c->dso_g);
	pair_table_free(&c->map_tab);
	memset(&c->map_tab, 0, sizeof(c->map_tab));
	pf_map64_free(&c->run_tab);
	pf_map64_init(&c->run_tab);
	c->str_of = malloc((p->strs.n ? p->strs.n : 1) * sizeof(*c->str_of));
	c->func_of_sym = pf_calloc(p->nr_syms + 1, sizeof(*c->func_of_sym));
	c->loc_of = pf_calloc(p->nr_locs + 1, sizeof(*c->loc_of));
	c->dso_g = pf_calloc(p->nr_dsos + 1, sizeof(*c->dso_g));
	if (!c->str_of || !c->func_of_sym || !c->loc_of || !c->dso_g)
		return -1;
	memset(c->str_of, 0xff, p->strs.n * sizeof(*c->str_of));
	return 0;
}

/* The caller's labels as messages, refused where the profile has a label
 * of that name itself (one of the two would be lost) */
static int extra_labels(pw_ctx *c, const pf_profile *p, const pf_extra_label *labels, size_t n)
{
	c->nextra = 0;
	c->extra_pb = pw_alloc(c, (n + 1) * sizeof(*c->extra_pb));
	if (!c->extra_pb)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int64_t k = pf_strtab_find(&p->strs, labels[i].key, strlen(labels[i].key));
		for (size_t j = 0; k >= 0 && j < p->nr_labels; j++)
			if (p->labels[j].key == (uint32_t)k)
				return proff_err_set(c->err, PROFF_EUSAGE, p->path, PROFF_NO_OFFSET,
						     "the profile has a label '%s' of its own, which the runs' label "
						     "'%s' would hide", labels[i].key, labels[i].key);
		pb_label *l = num_label(c, labels[i].key, labels[i].str ? 0 : labels[i].num);
		if (!l)
			return -1;
		if (labels[i].str)
			l->str = pw_str(c, labels[i].str);
		c->extra_pb[c->nextra++] = l;
	}
	return 0;
}

/* The samples of p, its comms' periods for the main mapping */
static void add_samples(pw_ctx *c)
{
	const pf_profile *p = c->p;
	size_t nv = 2 * c->nev;
	uint32_t *frames = NULL;
	size_t cap_frames = 0;
	for (size_t i = 0; i < p->nr_samples && !c->oom; i++) {
		const pf_sample *s = &p->samples[i];
		if (s->evsel >= p->nr_events || !p->events[s->evsel].nr_samples || !s->stack)
			continue;
		int64_t ci = pf_strtab_intern(&c->comms, pf_str(p, s->comm), strlen(pf_str(p, s->comm)));
		if (ci < 0 || PF_GROW(c->comm_period, c->cap_comm_period, (size_t)ci + 1) < 0) {
			c->oom = true;
			break;
		}
		for (; c->ncomm_period <= (size_t)ci; c->ncomm_period++)
			c->comm_period[c->ncomm_period] = 0;
		c->comm_period[ci] += s->period;
		if (c->comm_period[ci] > c->best) {
			c->best = c->comm_period[ci];
			c->best_comm = (uint32_t)ci;
		}
		pb_sample *x = pw_alloc(c, sizeof(*x));
		size_t depth = p->nodes[s->stack].depth;
		if (!x || PF_GROW(frames, cap_frames, depth + 1) < 0 ||
		    PF_GROW(c->samples, c->cap_samples, c->nsamples + 1) < 0) {
			c->oom = true;
			break;
		}
		perftools__profiles__sample__init(x);
		x->value = pw_alloc(c, nv * sizeof(*x->value));
		x->location_id = pw_alloc(c, depth * sizeof(*x->location_id));
		if (!x->value || !x->location_id)
			break;
		memset(x->value, 0, nv * sizeof(*x->value));
		x->n_value = nv;
		x->value[2 * s->evsel] = s->count;
		x->value[2 * s->evsel + 1] = (int64_t)s->period;
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
		c->samples[c->nsamples++] = x;
		/* pprof's values are int64: a period of 2^63 or more goes into
		 * more samples of the same stack (readers sum them) */
		for (uint64_t rest = s->period; rest > INT64_MAX && !c->oom;) {
			x->value[2 * s->evsel + 1] = INT64_MAX;
			rest -= INT64_MAX;
			pb_sample *y = pw_alloc(c, sizeof(*y));
			int64_t *v = pw_alloc(c, nv * sizeof(*v));
			if (!y || !v || PF_GROW(c->samples, c->cap_samples, c->nsamples + 1) < 0) {
				c->oom = true;
				break;
			}
			*y = *x;
			memset(v, 0, nv * sizeof(*v));
			y->value = v;
			v[2 * s->evsel + 1] = rest > INT64_MAX ? INT64_MAX : (int64_t)rest;
			c->samples[c->nsamples++] = x = y;
		}
	}
	free(frames);
}

int pf_pprof_writer_add(pf_pprof_writer *c, pf_profile *p, const pf_extra_label *labels, size_t nlabels,
			proff_error *err)
{
	c->p = p;
	c->err = err;
	int rc = add_events(c, p);
	if (rc == 0)
		rc = reset_profile_tables(c, p);
	if (rc == 0)
		rc = extra_labels(c, p, labels, nlabels);
	if (rc == 0) {
		if (c->o.lines)
			pf_locs_srclines(p, NULL);
		if (p->last_time > p->first_time)
			c->duration += (int64_t)(p->last_time - p->first_time);
		add_samples(c);
		if (c->oom)
			rc = -1;
	}
	c->p = NULL;
	c->nprof++;
	if (rc < 0 && (!err || !err->code))
		rc = proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
	return rc;
}

/* The Profile message of every profile added: sample types of the events
 * that have samples (the value columns of the others dropped) */
static int pw_build(pw_ctx *c, pb_profile *m)
{
	size_t nev = 0;
	int *slot_of = pw_alloc(c, (c->nev + 1) * sizeof(int));
	if (!slot_of)
		return -1;
	for (size_t i = 0; i < c->nev; i++)
		slot_of[i] = c->ev_used[i] ? (int)nev++ : -1;
	if (!nev)
		return proff_err_set(c->err, PROFF_EUSAGE, c->first_path, PROFF_NO_OFFSET, "no samples to write");
	if (nev < c->nev)
		for (size_t k = 0; k < c->nsamples; k++) {
			int64_t *v = c->samples[k]->value;
			for (size_t i = 0; i < c->nev; i++)
				if (slot_of[i] >= 0) {
					v[2 * slot_of[i]] = v[2 * i];
					v[2 * slot_of[i] + 1] = v[2 * i + 1];
				}
			c->samples[k]->n_value = 2 * nev;
		}
	m->sample_type = pw_alloc(c, 2 * nev * sizeof(*m->sample_type));
	if (!m->sample_type)
		return -1;
	pb_value_type *last = NULL;
	for (size_t i = 0; i < c->nev; i++) {
		if (slot_of[i] < 0)
			continue;
		pb_value_type *vt[2] = { pw_alloc(c, sizeof(pb_value_type)), pw_alloc(c, sizeof(pb_value_type)) };
		if (!vt[0] || !vt[1])
			return -1;
		perftools__profiles__value_type__init(vt[0]);
		perftools__profiles__value_type__init(vt[1]);
		char name[600];
		snprintf(name, sizeof(name), "%.500s_samples", c->ev_name[i]);
		vt[0]->type = pw_str(c, nev == 1 ? "samples" : name);
		vt[0]->unit = pw_str(c, "count");
		vt[1]->type = pw_str(c, c->ev_name[i]);
		vt[1]->unit = pw_str(c, c->ev_unit[i]);
		m->sample_type[m->n_sample_type++] = vt[0];
		m->sample_type[m->n_sample_type++] = vt[1];
		last = vt[1];
	}
	m->period_type = last;
	m->default_sample_type = last->type;
	m->duration_nanos = c->duration;
	m->sample = c->samples;
	m->n_sample = c->nsamples;
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

int pf_pprof_writer_finish(pf_pprof_writer *c, FILE *out, proff_error *err)
{
	c->err = err;
	const char *name = c->first_path;
	int rc = 0;
	pb_profile m;
	perftools__profiles__profile__init(&m);
	if (!c->nprof)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "no profile to write");
	if ((rc = pw_build(c, &m)) < 0)
		goto out;
	if (c->oom) {
		rc = -1;
		goto out;
	}
	pw_out w = { .base = { out_append }, .f = out };
	z_stream zs;
	if (c->o.gzip) {
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
		rc = proff_err_sys(err, PROFF_EIO, name, "cannot write the pprof profile");
out:
	if (rc < 0 && (!err || !err->code))
		rc = proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	return rc;
}

int pf_pprof_write(pf_profile *p, FILE *out, const pf_write_opts *o, proff_error *err)
{
	pf_pprof_writer *w;
	int rc = pf_pprof_writer_new(o, &w, err);
	if (rc < 0)
		return rc;
	rc = pf_pprof_writer_add(w, p, NULL, 0, err);
	if (rc == 0)
		rc = pf_pprof_writer_finish(w, out, err);
	pf_pprof_writer_free(w);
	return rc;
}
