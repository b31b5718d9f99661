/* pprof-read.c — pprof's profile.proto read into the profile model.
 *
 * Every message is decoded by protobuf-c (the code generated from
 * lib/formats/profile.proto). The top-level Profile is not decoded as one
 * message: its fields are walked one by one (a tag, a length, the bytes),
 * and each Sample, Location, Mapping and Function is decoded on its own
 * into a bump arena that is reset after it. So memory holds the file and
 * the model, never every Sample at once (protobuf-c's whole Profile of a
 * 1 M-sample file is several hundred MB), and an error names the byte
 * offset of the message it is in.
 *
 * The model (docs/formats/interchange.md):
 *   - the event is one sample type (pf_load_opts.sample_type, by name or
 *     index; else default_sample_type; else the last, as pprof), its value
 *     the period; the sample count comes from a "samples"/"count" type (or
 *     "<type>_samples") when there is one, else each Sample counts one; a
 *     Sample of value 0 is kept only when it has a count;
 *   - a Mapping is a dso (its file name, build id as hex); a Location's
 *     address is turned into the dso's address space (address -
 *     memory_start + file_offset);
 *   - each Line of a Location is a frame (inlined callees first), a symbol
 *     per (dso, Function) with addresses of its own: the span of its
 *     locations' addresses (pprof has no symbol addresses), its srcline
 *     "file:line" from the Line;
 *   - labels pid, tid (numbers), comm (string) and cpu (number) are the
 *     sample's thread and cpu; every other label goes into the sample's
 *     label set (pf_thread.labels), for `-s label:NAME`;
 *   - a Location without Lines is an unresolved frame of its dso.
 */
#include "fmt-int.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/profile.pb-c.h"

typedef Perftools__Profiles__Sample pb_sample;
typedef Perftools__Profiles__Location pb_location;
typedef Perftools__Profiles__Mapping pb_mapping;
typedef Perftools__Profiles__Function pb_function;
typedef Perftools__Profiles__ValueType pb_value_type;
typedef Perftools__Profiles__Profile pb_profile;

/* ---- a bump arena for protobuf-c ---------------------------------------------------- */

typedef struct arena_chunk {
	struct arena_chunk *next;
	size_t cap;
	max_align_t data[];
} arena_chunk;

typedef struct pb_arena {
	arena_chunk *head;           /* the chunk being filled; older ones after it */
	size_t used;
	size_t total;                /* bytes handed out since the last reset */
} pb_arena;

#define ARENA_CHUNK ((size_t)64 << 10)

static void *arena_alloc(void *ctx, size_t size)
{
	pb_arena *a = ctx;
	size = (size + 15) & ~(size_t)15;
	if (size > PF_ALLOC_LIMIT || a->total + size > PF_ALLOC_LIMIT)
		return NULL;
	if (!a->head || a->used + size > a->head->cap) {
		size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
		arena_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->next = a->head;
		a->head = c;
		a->used = 0;
	}
	void *p = (char *)a->head->data + a->used;
	a->used += size;
	a->total += size;
	return p;
}

static void arena_free_one(void *ctx, void *ptr) { (void)ctx; (void)ptr; }

/* Everything handed out forgotten; one chunk of the usual size kept */
static void arena_reset(pb_arena *a)
{
	arena_chunk *keep = NULL;
	while (a->head) {
		arena_chunk *c = a->head;
		a->head = c->next;
		if (!keep && c->cap == ARENA_CHUNK) {
			keep = c;
			keep->next = NULL;
		} else {
			free(c);
		}
	}
	a->head = keep;
	a->used = 0;
	a->total = 0;
}

static void arena_free(pb_arena *a)
{
	while (a->head) {
		arena_chunk *c = a->head;
		a->head = c->next;
		free(c);
	}
}

/* ---- the top level's fields ---------------------------------------------------------- */

typedef struct pb_field {
	uint32_t num;                /* field number */
	uint32_t wt;                 /* wire type */
	size_t at;                   /* its tag's offset */
	size_t data, end;            /* its bytes (wire type 2: the payload) */
} pb_field;

static int get_varint(const uint8_t *d, size_t len, size_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (int i = 0; i < 10; i++) {
		if (*at >= len)
			return -1;
		uint8_t c = d[(*at)++];
		x |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return -1;
}

typedef struct pp_ctx {
	fmt_build b;
	const uint8_t *d;
	size_t len;
	bool unzipped;
	pb_arena arena;
	ProtobufCAllocator alloc;
	/* the string table */
	const uint8_t **str; uint32_t *str_len; size_t nstr, cap_str, cap_str_len;
	uint32_t *str_id;            /* string -> model string id (PF_NONE: not interned yet) */
	/* sample types */
	struct vtype { int64_t type, unit; size_t at; } *types; size_t ntypes, cap_types;
	/* mappings */
	struct pmap { uint64_t id, start, limit, offset; int64_t filename, build_id; size_t at; uint32_t dso; } *maps;
	size_t nmaps, cap_maps;
	/* functions */
	struct pfunc { uint64_t id; int64_t name, system_name, filename; size_t at; } *funcs;
	size_t nfuncs, cap_funcs;
	/* locations and their lines */
	struct ploc { uint64_t id, mapping_id, address; size_t at; uint32_t line0, nlines; uint32_t map; } *locs;
	size_t nlocs, cap_locs;
	struct pline { uint64_t function_id; int64_t line; uint32_t func; } *lines;
	size_t nlines, cap_lines;
	/* scalars of the Profile */
	int64_t drop_frames, keep_frames, default_sample_type;
	size_t nsamples;
	/* ids -> indices: dense arrays when the ids are (nearly) 1..n, else maps */
	uint32_t *map_of_id, *func_of_id, *loc_of_id;
	size_t map_ids, func_ids, loc_ids;
	pf_map64 map_idx, func_idx, loc_idx;
	/* a location's frames (pf_loc ids, leaf first): frames[frame0[i] .. frame0[i + 1]) */
	uint32_t *frame0, *frames;
	/* reading samples */
	int vi, ci;                  /* value index read as period, as count (-1: none) */
	int64_t pid_key, tid_key, comm_key, cpu_key;   /* string indices of the thread labels (-1: none) */
	uint32_t default_comm, no_frames_loc;
	pf_label *lab; size_t cap_lab;
	uint32_t *path; size_t cap_path;   /* a sample's frames, root first */
	/* --label NAME=VALUE,...: NAME's string index (-1: no filter) and the values */
	int64_t lf_key;
	const char *lf_vals;
	/* pf_load_opts.label_is: the keys' string indices (-1: not used) and values */
	int64_t li_key[2];
	const char *li_val[2];
	bool has_cpu;
	uint64_t dropped_cpu;
} pp_ctx;

static int pp_err(pp_ctx *c, size_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int pp_err(pp_ctx *c, size_t off, const char *fmt, ...)
{
	char msg[360];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return fmt_err_at(&c->b, off, "%s%s", c->unzipped ? "decompressed data: " : "", msg);
}

/* The next field of the Profile at *at: 1, 0 at the end, or an error */
static int next_field(pp_ctx *c, size_t *at, pb_field *f)
{
	if (*at >= c->len)
		return 0;
	f->at = *at;
	uint64_t tag;
	if (get_varint(c->d, c->len, at, &tag) < 0)
		return pp_err(c, f->at, "truncated field tag of the Profile message");
	f->num = (uint32_t)(tag >> 3);
	f->wt = (uint32_t)(tag & 7);
	if (tag >> 3 == 0 || tag >> 32)
		return pp_err(c, f->at, "invalid field number %llu (not a pprof profile?)", (unsigned long long)(tag >> 3));
	uint64_t v;
	switch (f->wt) {
	case 0:
		f->data = *at;
		if (get_varint(c->d, c->len, at, &v) < 0)
			return pp_err(c, f->at, "truncated number (field %u)", f->num);
		break;
	case 1:
	case 5:
		f->data = *at;
		if (c->len - *at < (f->wt == 1 ? 8u : 4u))
			return pp_err(c, f->at, "truncated number (field %u)", f->num);
		*at += f->wt == 1 ? 8 : 4;
		break;
	case 2:
		if (get_varint(c->d, c->len, at, &v) < 0)
			return pp_err(c, f->at, "truncated length (field %u)", f->num);
		if (v > c->len - *at)
			return pp_err(c, f->at, "field %u declares %llu bytes, %zu are left in the file", f->num,
				      (unsigned long long)v, c->len - *at);
		f->data = *at;
		*at += (size_t)v;
		break;
	default:
		return pp_err(c, f->at, "wire type %u of field %u is not valid here (not a pprof profile?)",
			      f->wt, f->num);
	}
	f->end = *at;
	return 1;
}

/* A string index read from the file: in the table? */
static int check_str(pp_ctx *c, int64_t idx, size_t at, const char *what)
{
	if (idx < 0 || (uint64_t)idx >= c->nstr)
		return pp_err(c, at, "%s is string %lld, the string table has %zu", what, (long long)idx, c->nstr);
	return 0;
}

/* The model's id of string idx (checked before) */
static int64_t str_of(pp_ctx *c, int64_t idx)
{
	if (c->str_id[idx] != PF_NONE)
		return c->str_id[idx];
	int64_t id = fmt_str(&c->b, (const char *)c->str[idx], c->str_len[idx]);
	if (id >= 0)
		c->str_id[idx] = (uint32_t)id;
	return id;
}

static bool str_is(const pp_ctx *c, int64_t idx, const char *s)
{
	size_t n = strlen(s);
	return idx >= 0 && (uint64_t)idx < c->nstr && c->str_len[idx] == n && !memcmp(c->str[idx], s, n);
}

/* ---- pass 1: everything but the samples ---------------------------------------------- */

static int scalar_field(pp_ctx *c, const pb_field *f)
{
	/* a Profile of this one field, decoded by protobuf-c */
	pb_profile *m = perftools__profiles__profile__unpack(&c->alloc, f->end - f->at, c->d + f->at);
	if (!m)
		return pp_err(c, f->at, "field %u of the Profile does not decode", f->num);
	if (f->num == 7)
		c->drop_frames = m->drop_frames;
	else if (f->num == 8)
		c->keep_frames = m->keep_frames;
	else if (f->num == 14)
		c->default_sample_type = m->default_sample_type;
	arena_reset(&c->arena);
	return 0;
}

static int read_field(pp_ctx *c, const pb_field *f)
{
	const uint8_t *p = c->d + f->data;
	size_t n = f->end - f->data;
	if (f->wt != 2) {
		if (f->num == 7 || f->num == 8 || f->num == 9 || f->num == 10 || f->num == 12 || f->num == 13 ||
		    f->num == 14)
			return f->wt == 0 ? scalar_field(c, f) : pp_err(c, f->at, "field %u has a wrong wire type", f->num);
		if (f->num <= 6 || f->num == 11)
			return pp_err(c, f->at, "field %u has a wrong wire type", f->num);
		return 0;            /* a field this schema does not know */
	}
	switch (f->num) {
	case 1: {
		pb_value_type *m = perftools__profiles__value_type__unpack(&c->alloc, n, p);
		if (!m)
			return pp_err(c, f->at, "a ValueType (sample_type) does not decode");
		if (PF_GROW(c->types, c->cap_types, c->ntypes + 1) < 0)
			return fmt_oom(&c->b);
		c->types[c->ntypes++] = (struct vtype){ m->type, m->unit, f->at };
		break;
	}
	case 2:
		c->nsamples++;
		return 0;
	case 3: {
		pb_mapping *m = perftools__profiles__mapping__unpack(&c->alloc, n, p);
		if (!m)
			return pp_err(c, f->at, "a Mapping does not decode");
		if (PF_GROW(c->maps, c->cap_maps, c->nmaps + 1) < 0)
			return fmt_oom(&c->b);
		c->maps[c->nmaps++] = (struct pmap){ m->id, m->memory_start, m->memory_limit, m->file_offset,
						    m->filename, m->build_id, f->at, PF_NONE };
		break;
	}
	case 4: {
		pb_location *m = perftools__profiles__location__unpack(&c->alloc, n, p);
		if (!m)
			return pp_err(c, f->at, "a Location does not decode");
		if (PF_GROW(c->locs, c->cap_locs, c->nlocs + 1) < 0 ||
		    PF_GROW(c->lines, c->cap_lines, c->nlines + m->n_line) < 0 || c->nlines + m->n_line >= PF_NONE)
			return fmt_oom(&c->b);
		c->locs[c->nlocs++] = (struct ploc){ m->id, m->mapping_id, m->address, f->at, (uint32_t)c->nlines,
						    (uint32_t)m->n_line, PF_NONE };
		for (size_t i = 0; i < m->n_line; i++)
			c->lines[c->nlines++] = (struct pline){ m->line[i]->function_id, m->line[i]->line, PF_NONE };
		break;
	}
	case 5: {
		pb_function *m = perftools__profiles__function__unpack(&c->alloc, n, p);
		if (!m)
			return pp_err(c, f->at, "a Function does not decode");
		if (PF_GROW(c->funcs, c->cap_funcs, c->nfuncs + 1) < 0)
			return fmt_oom(&c->b);
		c->funcs[c->nfuncs++] = (struct pfunc){ m->id, m->name, m->system_name, m->filename, f->at };
		break;
	}
	case 6:
		if (n >= UINT32_MAX)
			return pp_err(c, f->at, "a string of %zu bytes", n);
		if (PF_GROW(c->str, c->cap_str, c->nstr + 1) < 0 ||
		    PF_GROW(c->str_len, c->cap_str_len, c->nstr + 1) < 0)
			return fmt_oom(&c->b);
		c->str[c->nstr] = p;
		c->str_len[c->nstr++] = (uint32_t)n;
		return 0;
	case 11: {
		pb_value_type *m = perftools__profiles__value_type__unpack(&c->alloc, n, p);
		if (!m)
			return pp_err(c, f->at, "the period_type does not decode");
		break;
	}
	case 13: {
		pb_profile *m = perftools__profiles__profile__unpack(&c->alloc, f->end - f->at, c->d + f->at);
		if (!m)
			return pp_err(c, f->at, "the comment field does not decode");
		break;
	}
	default:
		if (f->num <= 14)
			return pp_err(c, f->at, "field %u has a wrong wire type", f->num);
		return 0;            /* a newer field: skipped */
	}
	arena_reset(&c->arena);
	return 0;
}

/* ids -> indices: a dense array when the largest id is at most 4n + 1024 */
static int index_ids(pp_ctx *c, const char *what, size_t n, const void *base, size_t stride, size_t id_off,
		     size_t at_off, uint32_t **dense, size_t *ndense, pf_map64 *map)
{
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t id = *(const uint64_t *)((const char *)base + i * stride + id_off);
		size_t at = *(const size_t *)((const char *)base + i * stride + at_off);
		if (!id)
			return pp_err(c, at, "%s with id 0 (ids start at 1)", what);
		if (id > max)
			max = id;
	}
	if (max <= 4 * (uint64_t)n + 1024) {
		*ndense = (size_t)max + 1;
		*dense = malloc(*ndense * sizeof(**dense));
		if (!*dense)
			return fmt_oom(&c->b);
		memset(*dense, 0xff, *ndense * sizeof(**dense));
	}
	for (size_t i = 0; i < n; i++) {
		uint64_t id = *(const uint64_t *)((const char *)base + i * stride + id_off);
		size_t at = *(const size_t *)((const char *)base + i * stride + at_off);
		bool dup;
		if (*dense) {
			dup = (*dense)[id] != PF_NONE;
			(*dense)[id] = (uint32_t)i;
		} else {
			uint64_t *slot = pf_map64_upsert(map, id, &dup);
			if (!slot)
				return fmt_oom(&c->b);
			*slot = i;
		}
		if (dup)
			return pp_err(c, at, "%s id %llu appears twice", what, (unsigned long long)id);
	}
	return 0;
}

static uint32_t find_id(uint32_t *dense, size_t ndense, const pf_map64 *map, uint64_t id)
{
	if (dense)
		return id < ndense ? dense[id] : PF_NONE;
	uint64_t v;
	return pf_map64_get(map, id, &v) ? (uint32_t)v : PF_NONE;
}

static int hexval(int ch)
{
	if (ch >= '0' && ch <= '9') return ch - '0';
	if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
	return -1;
}

static int make_dso(pp_ctx *c, struct pmap *m);

static int map_id_cmp(const void *x, const void *y, void *arg)
{
	const struct pmap *m = arg;
	uint64_t a = m[*(const uint32_t *)x].id, b = m[*(const uint32_t *)y].id;
	return a < b ? -1 : a > b;
}

/* Mappings as dsos (a hex build id kept as bytes), made in the order of
 * the mappings' ids (pf_pprof_write numbers them in its dsos' order) */
static int make_dsos(pp_ctx *c)
{
	uint32_t *ord = malloc((c->nmaps ? c->nmaps : 1) * sizeof(*ord));
	if (!ord)
		return fmt_oom(&c->b);
	for (size_t i = 0; i < c->nmaps; i++)
		ord[i] = (uint32_t)i;
	qsort_r(ord, c->nmaps, sizeof(*ord), map_id_cmp, c->maps);
	int rc = 0;
	for (size_t k = 0; k < c->nmaps && rc == 0; k++)
		rc = make_dso(c, &c->maps[ord[k]]);
	free(ord);
	return rc;
}

/* One mapping's dso */
static int make_dso(pp_ctx *c, struct pmap *m)
{
	if (check_str(c, m->filename, m->at, "a Mapping's file name") < 0 ||
	    check_str(c, m->build_id, m->at, "a Mapping's build id") < 0)
		return -1;
	uint8_t bid[20];
	size_t nb = 0, bl = c->str_len[m->build_id];
	const uint8_t *bs = c->str[m->build_id];
	if (bl && bl % 2 == 0 && bl <= 2 * sizeof(bid)) {
		for (nb = 0; nb < bl / 2; nb++) {
			int hi = hexval(bs[2 * nb]), lo = hexval(bs[2 * nb + 1]);
			if (hi < 0 || lo < 0)
				break;
			bid[nb] = (uint8_t)(hi << 4 | lo);
		}
		if (nb != bl / 2)
			nb = 0;
	}
	const char *name = (const char *)c->str[m->filename];
	size_t nl = c->str_len[m->filename];
	if (!nl) {
		name = "[unknown]";
		nl = 9;
	}
	if ((m->dso = fmt_dso(&c->b, name, nl, bid, nb)) == PF_NONE)
		return fmt_oom(&c->b);
	return 0;
}

/* A location's address in its dso's space */
static uint64_t loc_addr(const pp_ctx *c, const struct ploc *l)
{
	if (l->map == PF_NONE)
		return l->address;
	const struct pmap *m = &c->maps[l->map];
	return l->address - m->start + m->offset;
}

typedef struct sym_span { uint32_t dso, func; uint64_t lo, hi; uint32_t sym; } sym_span;

/* span indices by (dso, start, end, function) */
static int span_cmp(const void *x, const void *y, void *arg)
{
	const sym_span *sp = arg;
	const sym_span *a = &sp[*(const uint32_t *)x], *b = &sp[*(const uint32_t *)y];
	if (a->dso != b->dso)
		return a->dso < b->dso ? -1 : 1;
	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	if (a->hi != b->hi)
		return a->hi < b->hi ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

/* Functions, locations and their lines checked and made into symbols and
 * locations of the model */
static int make_locations(pp_ctx *c)
{
	fmt_build *b = &c->b;
	for (size_t i = 0; i < c->nfuncs; i++) {
		struct pfunc *f = &c->funcs[i];
		if (check_str(c, f->name, f->at, "a Function's name") < 0 ||
		    check_str(c, f->system_name, f->at, "a Function's system name") < 0 ||
		    check_str(c, f->filename, f->at, "a Function's file name") < 0)
			return -1;
	}
	uint32_t dso_unknown = PF_NONE;
	/* each (dso, function)'s span of addresses: its symbol's */
	pair_table span_of = { 0 };
	sym_span *spans = NULL;
	size_t nspans = 0, cap_spans = 0;
	int rc = 0;
	for (size_t i = 0; i < c->nlocs && rc == 0; i++) {
		struct ploc *l = &c->locs[i];
		if (l->mapping_id) {
			l->map = find_id(c->map_of_id, c->map_ids, &c->map_idx, l->mapping_id);
			if (l->map == PF_NONE) {
				rc = pp_err(c, l->at, "a Location refers to mapping %llu, which is not in the file",
					    (unsigned long long)l->mapping_id);
				break;
			}
		}
		uint32_t dso = l->map != PF_NONE ? c->maps[l->map].dso : PF_NONE;
		if (dso == PF_NONE && l->nlines) {
			if (dso_unknown == PF_NONE && (dso_unknown = fmt_dso(b, "[unknown]", 9, NULL, 0)) == PF_NONE) {
				rc = fmt_oom(b);
				break;
			}
			dso = dso_unknown;
		}
		uint64_t a = loc_addr(c, l);
		for (uint32_t k = 0; k < l->nlines; k++) {
			struct pline *ln = &c->lines[l->line0 + k];
			ln->func = find_id(c->func_of_id, c->func_ids, &c->func_idx, ln->function_id);
			if (ln->func == PF_NONE) {
				rc = pp_err(c, l->at, "a Location's line refers to function %llu, which is not in the file",
					    (unsigned long long)ln->function_id);
				break;
			}
			int ins;
			uint32_t *slot = pair_table_find(&span_of, dso, ln->func, 1, &ins);
			if (!slot || (ins && PF_GROW(spans, cap_spans, nspans + 1) < 0)) {
				rc = fmt_oom(b);
				break;
			}
			if (ins) {
				*slot = (uint32_t)nspans;
				spans[nspans++] = (sym_span){ dso, ln->func, a, a, PF_NONE };
			} else {
				sym_span *s = &spans[*slot];
				if (a < s->lo) s->lo = a;
				if (a > s->hi) s->hi = a;
			}
		}
	}
	/* symbols: addresses the span's, made unique per dso (an inlined
	 * function and the one it is in may share a span); made in the order
	 * their first locations come (perf.data's loader makes them as it
	 * resolves the locations: ties in perf's orders follow the ids) */
	uint32_t *ord = rc == 0 ? malloc((nspans ? nspans : 1) * sizeof(*ord)) : NULL;
	if (rc == 0 && !ord)
		rc = fmt_oom(b);
	if (rc == 0) {
		for (size_t i = 0; i < nspans; i++)
			ord[i] = (uint32_t)i;
		qsort_r(ord, nspans, sizeof(*ord), span_cmp, spans);
		for (size_t k = 1; k < nspans; k++) {
			const sym_span *p = &spans[ord[k - 1]];
			sym_span *s = &spans[ord[k]];
			if (s->dso == p->dso && s->lo == p->lo && s->hi <= p->hi)
				s->hi = p->hi + 1;
		}
		for (size_t i = 0; i < nspans; i++) {
			sym_span *s = &spans[i];
			const struct pfunc *f = &c->funcs[s->func];
			int64_t nm = str_of(c, c->str_len[f->name] ? f->name : f->system_name);
			if (nm < 0 || (s->sym = fmt_sym(b, s->dso, s->func, (uint32_t)nm, s->lo, s->hi + 1, NULL)) == PF_NONE) {
				rc = fmt_oom(b);
				break;
			}
		}
	}
	free(ord);
	/* the locations' frames, leaf first */
	c->frame0 = rc == 0 ? malloc((c->nlocs + 1) * sizeof(*c->frame0)) : NULL;
	size_t nframes = 0;
	for (size_t i = 0; i < c->nlocs && rc == 0; i++)
		nframes += c->locs[i].nlines ? c->locs[i].nlines : 1;
	c->frames = rc == 0 ? pf_calloc(nframes ? nframes : 1, sizeof(*c->frames)) : NULL;
	if (rc == 0 && (!c->frame0 || !c->frames))
		rc = fmt_oom(b);
	size_t at = 0;
	char sl[600];
	for (size_t i = 0; i < c->nlocs && rc == 0; i++) {
		const struct ploc *l = &c->locs[i];
		uint32_t dso = l->map != PF_NONE ? c->maps[l->map].dso : (l->nlines ? dso_unknown : PF_NONE);
		char level = dso != PF_NONE && b->p->dsos[dso].kind == SYM_DSO_KERNEL ? 'k' : '.';
		uint64_t a = loc_addr(c, l);
		c->frame0[i] = (uint32_t)at;
		if (!l->nlines) {
			if ((c->frames[at++] = fmt_loc(b, dso, PF_NONE, a, l->address, level, PF_NONE)) == PF_NONE)
				rc = fmt_oom(b);
			continue;
		}
		for (uint32_t k = 0; k < l->nlines; k++) {
			const struct pline *ln = &c->lines[l->line0 + k];
			const uint32_t *si = pair_table_find(&span_of, dso, ln->func, 0, NULL);
			uint32_t sym = spans[*si].sym;
			const struct pfunc *f = &c->funcs[ln->func];
			uint32_t srcline = PF_NONE;
			if (c->str_len[f->filename] && ln->line > 0) {
				const char *fn = (const char *)c->str[f->filename];
				size_t fl = c->str_len[f->filename];
				const char *slash = memrchr(fn, '/', fl);
				if (slash) {
					fl -= (size_t)(slash + 1 - fn);
					fn = slash + 1;
				}
				int n = snprintf(sl, sizeof(sl), "%.*s:%lld", (int)(fl > 500 ? 500 : fl), fn,
						 (long long)ln->line);
				int64_t id = fmt_str(b, sl, (size_t)n);
				if (id < 0) {
					rc = fmt_oom(b);
					break;
				}
				srcline = (uint32_t)id;
			}
			if ((c->frames[at++] = fmt_loc(b, dso, sym, a, l->address, level, srcline)) == PF_NONE) {
				rc = fmt_oom(b);
				break;
			}
		}
	}
	if (rc == 0)
		c->frame0[c->nlocs] = (uint32_t)at;
	pair_table_free(&span_of);
	free(spans);
	return rc;
}

/* The sample type read and the one giving the count */
static int choose_types(pp_ctx *c, const char *want)
{
	if (!c->ntypes)
		return pp_err(c, 0, "the profile declares no sample types");
	for (size_t i = 0; i < c->ntypes; i++)
		if (check_str(c, c->types[i].type, c->types[i].at, "a sample type's name") < 0 ||
		    check_str(c, c->types[i].unit, c->types[i].at, "a sample type's unit") < 0)
			return -1;
	c->vi = -1;
	if (want) {
		char *end;
		long v = strtol(want, &end, 10);
		if (*want && !*end && v >= 0 && (size_t)v < c->ntypes)
			c->vi = (int)v;
		for (size_t i = 0; i < c->ntypes && c->vi < 0; i++)
			if (str_is(c, c->types[i].type, want))
				c->vi = (int)i;
		if (c->vi < 0) {
			char list[300] = "";
			for (size_t i = 0; i < c->ntypes; i++) {
				size_t l = strlen(list);
				snprintf(list + l, sizeof(list) - l, "%s%.*s", i ? ", " : "",
					 (int)(c->str_len[c->types[i].type] > 40 ? 40 : c->str_len[c->types[i].type]),
					 (const char *)c->str[c->types[i].type]);
			}
			return proff_err_set(c->b.err, PROFF_EUSAGE, c->b.p->path, PROFF_NO_OFFSET,
					     "--sample-type %s: the profile has %s", want, list);
		}
	} else {
		c->vi = (int)c->ntypes - 1;
		if (c->default_sample_type > 0) {
			for (size_t i = 0; i < c->ntypes; i++)
				if (c->types[i].type == c->default_sample_type)
					c->vi = (int)i;
		}
	}
	/* the count: "<type>_samples", else "samples"/"count" */
	c->ci = -1;
	const uint8_t *tn = c->str[c->types[c->vi].type];
	size_t tl = c->str_len[c->types[c->vi].type];
	for (size_t i = 0; i < c->ntypes && c->ci < 0; i++) {
		int64_t t = c->types[i].type;
		if ((int)i != c->vi && c->str_len[t] == tl + 8 && !memcmp(c->str[t], tn, tl) &&
		    !memcmp(c->str[t] + tl, "_samples", 8))
			c->ci = (int)i;
	}
	for (size_t i = 0; i < c->ntypes && c->ci < 0; i++)
		if ((int)i != c->vi && str_is(c, c->types[i].type, "samples") && str_is(c, c->types[i].unit, "count"))
			c->ci = (int)i;
	return 0;
}

/* ---- pass 2: the samples ------------------------------------------------------------- */

static int64_t find_key(const pp_ctx *c, const char *k)
{
	for (size_t i = 1; i < c->nstr; i++)
		if (str_is(c, (int64_t)i, k))
			return (int64_t)i;
	return -1;
}

/* Does label l's value equal one of --label's values? */
static bool label_wanted(const pp_ctx *c, const Perftools__Profiles__Label *l)
{
	char num[64], numu[400];
	const char *sv = NULL;
	size_t sl = 0;
	if (l->str) {
		sv = (const char *)c->str[l->str];
		sl = c->str_len[l->str];
	} else {
		snprintf(num, sizeof(num), "%lld", (long long)l->num);
		snprintf(numu, sizeof(numu), "%lld %.*s", (long long)l->num,
			 (int)(c->str_len[l->num_unit] > 300 ? 300 : c->str_len[l->num_unit]),
			 (const char *)c->str[l->num_unit]);
	}
	for (const char *v = c->lf_vals;;) {
		size_t n = strcspn(v, ",");
		if (sv ? n == sl && !memcmp(v, sv, n)
		       : (n == strlen(num) && !memcmp(v, num, n)) || (l->num_unit && n == strlen(numu) && !memcmp(v, numu, n)))
			return true;
		if (!v[n])
			return false;
		v += n + 1;
	}
}

/* Is label l's value, as text, exactly v? (a number: "N" or "N unit") */
static bool label_is(const pp_ctx *c, const Perftools__Profiles__Label *l, const char *v)
{
	size_t n = strlen(v);
	if (l->str)
		return c->str_len[l->str] == n && !memcmp(c->str[l->str], v, n);
	char t[400];
	int tn = l->num_unit ? snprintf(t, sizeof(t), "%lld %.*s", (long long)l->num,
					(int)(c->str_len[l->num_unit] > 300 ? 300 : c->str_len[l->num_unit]),
					(const char *)c->str[l->num_unit])
			     : snprintf(t, sizeof(t), "%lld", (long long)l->num);
	return (size_t)tn == n && !memcmp(t, v, n);
}

static int read_sample(pp_ctx *c, const pb_field *f)
{
	fmt_build *b = &c->b;
	pb_sample *s = perftools__profiles__sample__unpack(&c->alloc, f->end - f->data, c->d + f->data);
	if (!s)
		return pp_err(c, f->at, "a Sample does not decode");
	int rc = 0;
	if (s->n_value != c->ntypes) {
		rc = pp_err(c, f->at, "a Sample has %zu values for %zu sample types", s->n_value, c->ntypes);
		goto out;
	}
	int64_t v = s->value[c->vi];
	int64_t n = c->ci >= 0 ? s->value[c->ci] : 1;
	if (v < 0 || n < 0) {
		rc = pp_err(c, f->at, "a Sample's value is negative (%lld): proff reads profiles, not differences of them",
			    (long long)(v < 0 ? v : n));
		goto out;
	}
	/* a Sample of value 0 counts when a count type says it happened (an
	 * exact trace's call whose self time is 0); without one (a heap
	 * profile's freed objects under inuse_space) it is left out, as pprof
	 * shows no such row */
	if (!v && (c->ci < 0 || !n))
		goto out;
	if (c->lf_key >= 0) {
		bool keep = false;
		for (size_t i = 0; i < s->n_label && !keep; i++) {
			const Perftools__Profiles__Label *l = s->label[i];
			if (l->key == c->lf_key && check_str(c, l->str, f->at, "a Label's value") == 0 &&
			    check_str(c, l->num_unit, f->at, "a Label's unit") == 0)
				keep = label_wanted(c, l);
		}
		if (!keep)
			goto out;
	}
	for (int k = 0; k < 2; k++) {
		if (c->li_key[k] < 0)
			continue;
		bool keep = false;
		for (size_t i = 0; i < s->n_label && !keep; i++) {
			const Perftools__Profiles__Label *l = s->label[i];
			if (l->key == c->li_key[k] && check_str(c, l->str, f->at, "a Label's value") == 0 &&
			    check_str(c, l->num_unit, f->at, "a Label's unit") == 0)
				keep = label_is(c, l, c->li_val[k]);
		}
		if (!keep)
			goto out;
	}
	/* labels: the thread's, and the others as the sample's label set */
	uint32_t pid = PF_NONE, tid = PF_NONE, cpu = PF_NONE, comm = c->default_comm;
	size_t nl = 0;
	if (s->n_label && PF_GROW(c->lab, c->cap_lab, s->n_label) < 0) {
		rc = fmt_oom(b);
		goto out;
	}
	for (size_t i = 0; i < s->n_label; i++) {
		const Perftools__Profiles__Label *l = s->label[i];
		if (check_str(c, l->key, f->at, "a Label's key") < 0 || check_str(c, l->str, f->at, "a Label's value") < 0 ||
		    check_str(c, l->num_unit, f->at, "a Label's unit") < 0) {
			rc = -1;
			goto out;
		}
		bool is_num = !l->str;
		if (is_num && (l->key == c->pid_key || l->key == c->tid_key || l->key == c->cpu_key) &&
		    l->num >= 0 && l->num < PF_NONE) {
			if (l->key == c->pid_key)
				pid = (uint32_t)l->num;
			else if (l->key == c->tid_key)
				tid = (uint32_t)l->num;
			else
				cpu = (uint32_t)l->num;
			continue;
		}
		if (!is_num && l->key == c->comm_key) {
			int64_t id = str_of(c, l->str);
			if (id < 0) {
				rc = fmt_oom(b);
				goto out;
			}
			comm = (uint32_t)id;
			continue;
		}
		int64_t key = str_of(c, l->key), val, unit = 0;
		if (is_num) {
			char t[400];
			unit = l->num_unit ? str_of(c, l->num_unit) : 0;
			int tn = unit > 0 ? snprintf(t, sizeof(t), "%lld %.300s", (long long)l->num, pf_str(b->p, (uint32_t)unit))
					  : snprintf(t, sizeof(t), "%lld", (long long)l->num);
			val = fmt_str(b, t, (size_t)tn);
		} else {
			val = str_of(c, l->str);
		}
		if (key < 0 || val < 0 || unit < 0) {
			rc = fmt_oom(b);
			goto out;
		}
		c->lab[nl++] = (pf_label){ (uint32_t)key, (uint32_t)val, is_num ? l->num : 0, (uint32_t)unit, is_num };
	}
	if (cpu != PF_NONE) {
		c->has_cpu = true;
		const pf_load_opts *o = b->opts;
		if (o && o->cpu_mask && (cpu >= o->cpu_mask_bits || !(o->cpu_mask[cpu / 8] & (1u << (cpu % 8))))) {
			c->dropped_cpu++;
			goto out;
		}
	}
	uint32_t set = fmt_label_set(b, c->lab, nl);
	uint32_t thread = set == PF_NONE ? PF_NONE : fmt_thread(b, pid, tid, comm, set);
	if (thread == PF_NONE) {
		rc = fmt_oom(b);
		goto out;
	}
	/* the stack: the locations root first, each location's frames outermost first */
	size_t nf = 0;
	for (size_t i = s->n_location_id; i-- > 0;) {
		uint32_t li = find_id(c->loc_of_id, c->loc_ids, &c->loc_idx, s->location_id[i]);
		if (li == PF_NONE) {
			rc = pp_err(c, f->at, "a Sample refers to location %llu, which is not in the file",
				    (unsigned long long)s->location_id[i]);
			goto out;
		}
		if (PF_GROW(c->path, c->cap_path, nf + (c->frame0[li + 1] - c->frame0[li])) < 0) {
			rc = fmt_oom(b);
			goto out;
		}
		for (uint32_t k = c->frame0[li + 1]; k-- > c->frame0[li];)
			c->path[nf++] = c->frames[k];
	}
	uint32_t node = fmt_path(b, c->path, nf);
	if (node == PF_NONE) {
		rc = fmt_oom(b);
		goto out;
	}
	if (!node) {
		if (c->no_frames_loc == PF_NONE) {
			uint32_t d = fmt_dso(b, "[unknown]", 9, NULL, 0);
			int64_t nm = fmt_str(b, "[no frames]", 11);
			uint32_t sym = d == PF_NONE || nm < 0 ? PF_NONE : fmt_sym(b, d, UINT64_MAX, (uint32_t)nm, 0, 1, NULL);
			c->no_frames_loc = sym == PF_NONE ? PF_NONE : fmt_loc(b, d, sym, 0, 0, '.', PF_NONE);
			if (c->no_frames_loc == PF_NONE) {
				rc = fmt_oom(b);
				goto out;
			}
		}
		if ((node = fmt_path(b, &c->no_frames_loc, 1)) == PF_NONE) {
			rc = fmt_oom(b);
			goto out;
		}
	}
	rc = fmt_sample(b, thread, cpu, node, (uint64_t)v, (uint64_t)n);
	if (rc == FMT_OVERFLOW)
		rc = pp_err(c, f->at, "the values of this Sample's stack add up to more than 2^64 - 1");
out:
	arena_reset(&c->arena);
	return rc;
}

static void pp_free(pp_ctx *c)
{
	arena_free(&c->arena);
	free(c->str);
	free(c->str_len);
	free(c->str_id);
	free(c->types);
	free(c->maps);
	free(c->funcs);
	free(c->locs);
	free(c->lines);
	free(c->map_of_id);
	free(c->func_of_id);
	free(c->loc_of_id);
	pf_map64_free(&c->map_idx);
	pf_map64_free(&c->func_idx);
	pf_map64_free(&c->loc_idx);
	free(c->frame0);
	free(c->frames);
	free(c->lab);
	free(c->path);
}

static int pp_read(pp_ctx *c, const pf_load_opts *opts)
{
	fmt_build *b = &c->b;
	if (opts && opts->time_spec)
		return pp_err(c, PROFF_NO_OFFSET, "--time: a pprof profile has no sample times");
	size_t at = 0;
	pb_field f;
	int r;
	while ((r = next_field(c, &at, &f)) > 0)
		if (read_field(c, &f) < 0)
			return -1;
	if (r < 0)
		return r;
	if (!c->nstr || c->str_len[0])
		return pp_err(c, 0, "the string table does not start with \"\" (not a pprof profile?)");
	c->str_id = malloc(c->nstr * sizeof(*c->str_id));
	if (!c->str_id)
		return fmt_oom(b);
	memset(c->str_id, 0xff, c->nstr * sizeof(*c->str_id));
	c->str_id[0] = 0;
	if (check_str(c, c->drop_frames, 0, "drop_frames") < 0 || check_str(c, c->keep_frames, 0, "keep_frames") < 0 ||
	    check_str(c, c->default_sample_type, 0, "default_sample_type") < 0)
		return -1;
	if ((r = choose_types(c, opts ? opts->sample_type : NULL)) < 0)
		return r;
	/* the event: the sample type read */
	pf_event *e = &b->p->events[0];
	free(e->name);
	int64_t unit = str_of(c, c->types[c->vi].unit);
	e->name = pf_strndup((const char *)c->str[c->types[c->vi].type], c->str_len[c->types[c->vi].type]);
	if (!e->name || unit < 0)
		return fmt_oom(b);
	e->unit = (uint32_t)unit;
	if ((r = index_ids(c, "a Mapping", c->nmaps, c->maps, sizeof(*c->maps), offsetof(struct pmap, id),
			   offsetof(struct pmap, at), &c->map_of_id, &c->map_ids, &c->map_idx)) < 0 ||
	    (r = index_ids(c, "a Function", c->nfuncs, c->funcs, sizeof(*c->funcs), offsetof(struct pfunc, id),
			   offsetof(struct pfunc, at), &c->func_of_id, &c->func_ids, &c->func_idx)) < 0 ||
	    (r = index_ids(c, "a Location", c->nlocs, c->locs, sizeof(*c->locs), offsetof(struct ploc, id),
			   offsetof(struct ploc, at), &c->loc_of_id, &c->loc_ids, &c->loc_idx)) < 0)
		return r;
	if ((r = make_dsos(c)) < 0 || (r = make_locations(c)) < 0)
		return r;
	c->pid_key = find_key(c, "pid");
	c->tid_key = find_key(c, "tid");
	c->comm_key = find_key(c, "comm");
	c->cpu_key = find_key(c, "cpu");
	int64_t unknown = fmt_str(b, "[unknown]", 9);
	if (unknown < 0)
		return fmt_oom(b);
	c->default_comm = (uint32_t)unknown;
	c->no_frames_loc = PF_NONE;
	c->lf_key = -1;
	if (opts && opts->label_filter) {
		const char *lf = opts->label_filter, *eq = strchr(lf, '=');
		if (!eq || eq == lf)
			return proff_err_set(b->err, PROFF_EUSAGE, b->p->path, PROFF_NO_OFFSET,
					     "--label %s: NAME=VALUE[,VALUE...] expected", lf);
		char key[256];
		snprintf(key, sizeof(key), "%.*s", (int)(eq - lf), lf);
		c->lf_key = find_key(c, key);
		if (c->lf_key < 0)
			return proff_err_set(b->err, PROFF_EUSAGE, b->p->path, PROFF_NO_OFFSET,
					     "--label: the profile has no label %s", key);
		c->lf_vals = eq + 1;
	}
	for (int k = 0; k < 2; k++) {
		c->li_key[k] = -1;
		const char *key = opts ? opts->label_is[k].key : NULL;
		if (!key)
			continue;
		if ((c->li_key[k] = find_key(c, key)) < 0)
			return proff_err_set(b->err, PROFF_EUSAGE, b->p->path, PROFF_NO_OFFSET,
					     "the profile has no label %s", key);
		c->li_val[k] = opts->label_is[k].value ? opts->label_is[k].value : "";
	}
	at = 0;
	while ((r = next_field(c, &at, &f)) > 0)
		if (f.num == 2 && f.wt == 2 && (r = read_sample(c, &f)) < 0)
			return r;
	if (r < 0)
		return r;
	e->has_cpu = c->has_cpu;
	if (c->drop_frames || c->keep_frames)
		fmt_warn(b, "drop_frames/keep_frames of the profile not applied (every frame is shown)");
	return 0;
}

int fmt_pprof_read(const uint8_t *data, size_t len, const char *name, bool unzipped, const pf_load_opts *opts,
		   pf_profile **out, proff_error *err)
{
	*out = NULL;
	pp_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	c->d = data;
	c->len = len;
	c->unzipped = unzipped;
	c->alloc = (ProtobufCAllocator){ arena_alloc, arena_free_one, &c->arena };
	int rc = fmt_build_init(&c->b, name, "pprof", "", opts, err);
	if (rc == 0)
		rc = pp_read(c, opts);
	if (rc < 0) {
		if (!err || !err->code)
			rc = proff_err_set(err, PROFF_EFORMAT, name, PROFF_NO_OFFSET, "cannot read the profile");
		fmt_build_abort(&c->b);
	} else {
		*out = fmt_build_finish(&c->b);
	}
	pp_free(c);
	free(c);
	return rc < 0 ? rc : 0;
}

int pf_pprof_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		  pf_profile **out, proff_error *err)
{
	fmt_input unz;
	int rc = fmt_gunzip(data, len, name, &unz, err);
	if (rc < 0)
		return rc;
	if (rc == 1)
		rc = fmt_pprof_read(unz.data, unz.len, name, true, opts, out, err);
	else
		rc = fmt_pprof_read(data, len, name, false, opts, out, err);
	fmt_input_free(&unz);
	return rc;
}
