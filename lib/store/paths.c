/* paths.c — the call paths of a store's selected profiles, for flame
 * graphs (store_query_paths): a profile per replicate, built as the
 * interchange readers build theirs (lib/formats' builder: frames named as
 * stored, symbols at addresses of their own), whose samples are each
 * (comm, stack) summed over the replicate's profiles.
 *
 * A flame graph draws whole call paths, so a store hands over its stacks
 * and their sums, not the rows of a sort key. The stores give them in two
 * steps: the distinct frames and stacks once (paths_frame, paths_stack:
 * the same stack in many profiles is decoded once), then the sums of
 * (replicate, comm, stack) (paths_add); each replicate's profile makes a
 * location of a frame and a node of a stack once, when first met.
 */
#include <stdlib.h>
#include <string.h>

#include "store-int.h"
#include "../formats/fmt-int.h"

typedef struct pframe {
	uint32_t dso, sym, src;    /* string ids of paths_build.strs, 0: none */
	uint64_t addr, ip;
	char level;
} pframe;

typedef struct prep {
	uint32_t group;
	uint32_t name;             /* string id */
	fmt_build b;
	uint32_t *loc_of;          /* [frame] its location + 1, 0: not made yet */
	size_t cap_loc_of;
	uint32_t *node_of;         /* [stack] its node + 1 */
	size_t cap_node_of;
} prep;

struct paths_build {
	char *event;
	pf_strtab strs;
	pframe *frames; size_t nframes, cap_frames;
	pf_map64 frame_of;         /* frame hash -> frame */
	uint32_t *stack_frames; size_t nsf, cap_sf;   /* the stacks' frames, leaf first */
	struct { uint64_t hash; uint32_t first, n; } *stacks; size_t nstacks, cap_stacks;
	pf_map64 stack_of;         /* stack hash -> stack */
	prep *reps; size_t nreps, cap_reps;
	pf_map64 rep_of;           /* hash of (group, name) -> rep */
	uint32_t *locs; size_t cap_locs;   /* a path being built, root first */
	/* the sums given, added to the replicates' profiles at the end in an
	 * order of their own (the stores answer in theirs) */
	struct psum { uint32_t rep, comm, stack; uint64_t period, count; } *sums;
	size_t nsums, cap_sums;
	proff_error err;           /* the builders' (fmt_build keeps a pointer) */
};

int paths_new(paths_build **out, const char *event)
{
	paths_build *pb = pf_calloc(1, sizeof(*pb));
	if (!pb || !(pb->event = pf_strdup(event)) || pf_strtab_init(&pb->strs)) {
		if (pb)
			free(pb->event);
		free(pb);
		return PROFF_ENOMEM;
	}
	pf_map64_init(&pb->frame_of);
	pf_map64_init(&pb->stack_of);
	pf_map64_init(&pb->rep_of);
	*out = pb;
	return 0;
}

void paths_free(paths_build *pb)
{
	if (!pb)
		return;
	for (size_t i = 0; i < pb->nreps; i++) {
		fmt_build_abort(&pb->reps[i].b);
		free(pb->reps[i].loc_of);
		free(pb->reps[i].node_of);
	}
	free(pb->reps);
	pf_strtab_free(&pb->strs);
	free(pb->frames);
	free(pb->stack_frames);
	free(pb->stacks);
	free(pb->locs);
	free(pb->sums);
	free(pb->event);
	pf_map64_free(&pb->frame_of);
	pf_map64_free(&pb->stack_of);
	pf_map64_free(&pb->rep_of);
	free(pb);
}

static long intern(paths_build *pb, const char *s, size_t len)
{
	int64_t id = pf_strtab_intern(&pb->strs, s ? s : "", s ? len : 0);
	return id < 0 ? -1 : (long)id;
}

long paths_frame(paths_build *pb, const char *dso, size_t dso_len, const char *sym, size_t sym_len,
		 const char *src, size_t src_len, uint64_t addr, uint64_t ip, char level)
{
	long d = intern(pb, dso, dso_len), s = intern(pb, sym, sym_len), l = intern(pb, src, src_len);
	if (d < 0 || s < 0 || l < 0)
		return -1;
	pframe f = { (uint32_t)d, (uint32_t)s, (uint32_t)l, s ? 0 : addr, s ? 0 : ip, level ? level : '.' };
	uint64_t h = pf_hash64(((uint64_t)f.dso << 40) ^ ((uint64_t)f.sym << 20) ^ f.src);
	h = pf_hash64(h ^ pf_hash64(f.addr) ^ pf_hash64(f.ip ^ (uint64_t)(unsigned char)f.level << 56));
	uint64_t v;
	if (pf_map64_get(&pb->frame_of, h, &v)) {
		const pframe *o = &pb->frames[v];
		if (o->dso == f.dso && o->sym == f.sym && o->src == f.src && o->addr == f.addr && o->ip == f.ip &&
		    o->level == f.level)
			return (long)v;
		/* another frame of the same hash: a frame of its own, not in the map */
	} else {
		bool found;
		uint64_t *slot = pf_map64_upsert(&pb->frame_of, h, &found);
		if (!slot)
			return -1;
		*slot = pb->nframes;
	}
	if (PF_GROW(pb->frames, pb->cap_frames, pb->nframes + 1))
		return -1;
	pb->frames[pb->nframes] = f;
	return (long)pb->nframes++;
}

long paths_stack(paths_build *pb, uint64_t hash, const uint32_t *frames, size_t n)
{
	uint64_t v;
	if (pf_map64_get(&pb->stack_of, hash, &v)) {
		if (pb->stacks[v].n == n && !memcmp(pb->stack_frames + pb->stacks[v].first, frames, n * sizeof(*frames)))
			return (long)v;
	} else {
		bool found;
		uint64_t *slot = pf_map64_upsert(&pb->stack_of, hash, &found);
		if (!slot)
			return -1;
		*slot = pb->nstacks;
	}
	if (PF_GROW(pb->stacks, pb->cap_stacks, pb->nstacks + 1) ||
	    PF_GROW(pb->stack_frames, pb->cap_sf, pb->nsf + n + 1))
		return -1;
	pb->stacks[pb->nstacks].hash = hash;
	pb->stacks[pb->nstacks].first = (uint32_t)pb->nsf;
	pb->stacks[pb->nstacks].n = (uint32_t)n;
	memcpy(pb->stack_frames + pb->nsf, frames, n * sizeof(*frames));
	pb->nsf += n;
	return (long)pb->nstacks++;
}

long paths_stack_of(const paths_build *pb, uint64_t hash)
{
	uint64_t v;
	return pf_map64_get(&pb->stack_of, hash, &v) ? (long)v : -1;
}

long paths_rep(paths_build *pb, uint32_t group, const char *name, size_t len)
{
	long nm = intern(pb, name, len);
	if (nm < 0)
		return -1;
	uint64_t key = pf_hash64(((uint64_t)group << 32) | (uint64_t)nm);
	uint64_t v;
	if (pf_map64_get(&pb->rep_of, key, &v))
		return (long)v;
	if (PF_GROW(pb->reps, pb->cap_reps, pb->nreps + 1))
		return -1;
	prep *r = &pb->reps[pb->nreps];
	memset(r, 0, sizeof(*r));
	r->group = group;
	r->name = (uint32_t)nm;
	/* the event's unit: the stores keep none (the flame graph names the event) */
	if (fmt_build_init(&r->b, pf_strtab_get(&pb->strs, (uint32_t)nm), pb->event, "count", NULL, &pb->err))
		return -1;
	bool found;
	uint64_t *slot = pf_map64_upsert(&pb->rep_of, key, &found);
	if (!slot) {
		fmt_build_abort(&r->b);
		return -1;
	}
	*slot = pb->nreps;
	return (long)pb->nreps++;
}

/* frame f's location in replicate r's profile */
static uint32_t rep_loc(paths_build *pb, prep *r, uint32_t f)
{
	if (f >= r->cap_loc_of) {
		size_t cap = pb->cap_frames > f ? pb->cap_frames : (size_t)f + 1;
		uint32_t *a = pf_realloc_array(r->loc_of, cap, sizeof(*a));
		if (!a)
			return PF_NONE;
		memset(a + r->cap_loc_of, 0, (cap - r->cap_loc_of) * sizeof(*a));
		r->loc_of = a;
		r->cap_loc_of = cap;
	}
	if (r->loc_of[f])
		return r->loc_of[f] - 1;
	const pframe *fr = &pb->frames[f];
	fmt_build *b = &r->b;
	uint32_t dso = PF_NONE, sym = PF_NONE, src = PF_NONE;
	if (fr->dso) {
		const char *d = pf_strtab_get(&pb->strs, fr->dso);
		if ((dso = fmt_dso(b, d, pb->strs.lens[fr->dso], NULL, 0)) == PF_NONE)
			return PF_NONE;
	}
	if (fr->sym) {
		int64_t nm = fmt_str(b, pf_strtab_get(&pb->strs, fr->sym), pb->strs.lens[fr->sym]);
		/* a symbol per (dso, name), at an address of its own (the order met) */
		uint64_t start = (uint64_t)(b->p->nr_syms + 1) << 4;
		if (nm < 0 || (sym = fmt_sym(b, dso, (uint64_t)nm, (uint32_t)nm, start, start + 16, NULL)) == PF_NONE)
			return PF_NONE;
	}
	if (fr->src) {
		int64_t id = fmt_str(b, pf_strtab_get(&pb->strs, fr->src), pb->strs.lens[fr->src]);
		if (id < 0)
			return PF_NONE;
		src = (uint32_t)id;
	}
	uint64_t at = sym != PF_NONE ? b->p->syms[sym].start : fr->addr;
	uint32_t loc = fmt_loc(b, dso, sym, at, sym != PF_NONE ? at : fr->ip, fr->level, src);
	if (loc != PF_NONE)
		r->loc_of[f] = loc + 1;
	return loc;
}

int paths_add(paths_build *pb, size_t rep, const char *comm, size_t comm_len, size_t stack, uint64_t period,
	      uint64_t count)
{
	long cm = intern(pb, comm, comm_len);
	if (cm < 0 || PF_GROW(pb->sums, pb->cap_sums, pb->nsums + 1))
		return PROFF_ENOMEM;
	pb->sums[pb->nsums++] = (struct psum){ (uint32_t)rep, (uint32_t)cm, (uint32_t)stack, period, count };
	return 0;
}

/* a sum into replicate rep's profile */
static int rep_add(paths_build *pb, size_t rep, uint32_t comm, size_t stack, uint64_t period, uint64_t count)
{
	prep *r = &pb->reps[rep];
	fmt_build *b = &r->b;
	if (stack >= r->cap_node_of) {
		size_t cap = pb->cap_stacks > stack ? pb->cap_stacks : stack + 1;
		uint32_t *a = pf_realloc_array(r->node_of, cap, sizeof(*a));
		if (!a)
			return PROFF_ENOMEM;
		memset(a + r->cap_node_of, 0, (cap - r->cap_node_of) * sizeof(*a));
		r->node_of = a;
		r->cap_node_of = cap;
	}
	uint32_t node = r->node_of[stack] ? r->node_of[stack] - 1 : PF_NONE;
	if (node == PF_NONE) {
		size_t n = pb->stacks[stack].n;
		const uint32_t *fr = pb->stack_frames + pb->stacks[stack].first;
		if (PF_GROW(pb->locs, pb->cap_locs, n + 1))
			return PROFF_ENOMEM;
		for (size_t i = 0; i < n; i++) {     /* root first */
			uint32_t loc = rep_loc(pb, r, fr[n - 1 - i]);
			if (loc == PF_NONE)
				return PROFF_ENOMEM;
			pb->locs[i] = loc;
		}
		if ((node = fmt_path(b, pb->locs, n)) == PF_NONE)
			return PROFF_ENOMEM;
		r->node_of[stack] = node + 1;
	}
	int64_t cm = fmt_str(b, pf_strtab_get(&pb->strs, comm), pb->strs.lens[comm]);
	if (cm < 0)
		return PROFF_ENOMEM;
	uint32_t thread = fmt_thread(b, (uint32_t)-1, (uint32_t)-1, (uint32_t)cm, 0);
	if (thread == PF_NONE || fmt_sample(b, thread, PF_NONE, node, period, count) < 0)
		return PROFF_ENOMEM;
	return 0;
}

int paths_add_prof(paths_build *pb, size_t rep, const store_prof *sp, proff_error *err)
{
	/* the event's index in this profile */
	long ev = -1;
	for (size_t e = 0; e < sp->nr_events && ev < 0; e++)
		if (!strcmp(pf_strtab_get(&sp->strs, sp->events[e].name), pb->event))
			ev = (long)e;
	if (ev < 0)
		return 0;
	uint32_t *frame_of = pf_calloc(sp->nr_frames ? sp->nr_frames : 1, sizeof(uint32_t));
	uint32_t *stack_of = pf_calloc(sp->nr_stacks ? sp->nr_stacks : 1, sizeof(uint32_t));
	uint32_t *ids = NULL;
	size_t cap_ids = 0;
	int rc = PROFF_ENOMEM;
	if (!frame_of || !stack_of)
		goto out;
	const pf_strtab *t = &sp->strs;
	for (size_t i = 0; i < sp->nr_samples; i++) {
		const store_sample *s = &sp->samples[i];
		if (s->event != (uint32_t)ev)
			continue;
		if (!stack_of[s->stack]) {
			const store_stack *st = &sp->stacks[s->stack];
			if (PF_GROW(ids, cap_ids, st->n + 1))
				goto out;
			for (uint32_t j = 0; j < st->n; j++) {
				uint32_t f = sp->stack_frames[st->first + j];
				if (!frame_of[f]) {
					const store_frame *fm = &sp->frames[f];
					long id = paths_frame(pb, pf_strtab_get(t, fm->dso_long), t->lens[fm->dso_long],
							      pf_strtab_get(t, fm->sym), t->lens[fm->sym],
							      pf_strtab_get(t, fm->srcline), t->lens[fm->srcline], fm->addr,
							      fm->ip, fm->level);
					if (id < 0)
						goto out;
					frame_of[f] = (uint32_t)id + 1;
				}
				ids[j] = frame_of[f] - 1;
			}
			long id = paths_stack(pb, st->hash, ids, st->n);
			if (id < 0)
				goto out;
			stack_of[s->stack] = (uint32_t)id + 1;
		}
		const char *comm = pf_strtab_get(t, s->comm);
		if (paths_add(pb, rep, comm, t->lens[s->comm], stack_of[s->stack] - 1, s->period, s->count))
			goto out;
	}
	rc = 0;
out:
	free(frame_of);
	free(stack_of);
	free(ids);
	return rc ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : 0;
}

static int cmp_rep(const void *a, const void *b, void *arg)
{
	const paths_build *pb = arg;
	const prep *x = &pb->reps[*(const uint32_t *)a], *y = &pb->reps[*(const uint32_t *)b];
	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return strcmp(pf_strtab_get(&pb->strs, x->name), pf_strtab_get(&pb->strs, y->name));
}

static int cmp_sum(const void *a, const void *b, void *arg)
{
	const paths_build *pb = arg;
	const struct psum *x = a, *y = b;
	if (x->rep != y->rep)
		return x->rep < y->rep ? -1 : 1;
	if (x->comm != y->comm) {
		int c = strcmp(pf_strtab_get(&pb->strs, x->comm), pf_strtab_get(&pb->strs, y->comm));
		if (c)
			return c;
	}
	uint64_t hx = pb->stacks[x->stack].hash, hy = pb->stacks[y->stack].hash;
	if (hx != hy)
		return hx < hy ? -1 : 1;
	return x->stack < y->stack ? -1 : x->stack > y->stack;
}

int paths_finish(paths_build *pb, store_paths *out, proff_error *err)
{
	memset(out, 0, sizeof(*out));
	size_t n = pb->nreps;
	uint32_t *order = pf_calloc(n ? n : 1, sizeof(uint32_t));
	out->profs = pf_calloc(n ? n : 1, sizeof(pf_profile *));
	out->group = pf_calloc(n ? n : 1, sizeof(uint32_t));
	out->name = pf_calloc(n ? n : 1, sizeof(char *));
	if (!order || !out->profs || !out->group || !out->name)
		goto nomem;
	for (size_t i = 0; i < n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, n, sizeof(*order), cmp_rep, pb);
	/* the sums by replicate, comm and stack hash (a stack's hash is
	 * its frames', the same in every store): the profiles do not
	 * depend on the order a store gave them in */
	qsort_r(pb->sums, pb->nsums, sizeof(*pb->sums), cmp_sum, pb);
	for (size_t i = 0; i < pb->nsums; i++) {
		const struct psum *x = &pb->sums[i];
		if (rep_add(pb, x->rep, x->comm, x->stack, x->period, x->count))
			goto nomem;
	}
	for (size_t i = 0; i < n; i++) {
		prep *r = &pb->reps[order[i]];
		if (!(out->name[i] = pf_strdup(pf_strtab_get(&pb->strs, r->name))))
			goto nomem;
		out->group[i] = r->group;
		out->profs[i] = fmt_build_finish(&r->b);
		memset(&r->b, 0, sizeof(r->b));     /* finished: nothing left for paths_free */
		out->n = i + 1;
		if (!out->profs[i])
			goto nomem;
	}
	free(order);
	return 0;
nomem:
	free(order);
	store_paths_free(out);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

void store_paths_free(store_paths *p)
{
	for (size_t i = 0; i < p->n; i++) {
		pf_profile_free(p->profs[i]);
		free(p->name[i]);
	}
	free(p->profs);
	free(p->group);
	free(p->name);
	memset(p, 0, sizeof(*p));
}
