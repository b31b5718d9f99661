/* inline.c — inlined frames in a loaded profile's callchains (perf report's
 * --inline, its default).
 *
 * perf replaces each callchain entry of a resolved symbol by the list
 * `addr2line -f -i` gives for its address: the innermost inlined function
 * with the address's own line, then each enclosing function with its call
 * site, the outermost last. An entry whose name is the real symbol's is the
 * real symbol; any other is a symbol of its own named after the function,
 * over the real one's range, flagged inlined and printed "NAME (inlined)".
 * A sample's own row keeps the real symbol of its ip.
 *
 * This is done once, after loading, on the stack trie: every location's
 * frames are looked up once (one libdw query per (dso, address)); each
 * trie node becomes the chain of its frames' nodes under its parent's new
 * node, so stacks that shared nodes still share them. The samples' leaves
 * then are innermost frames: p->loc_real maps them back to the real
 * location for the Self row (pf_leaf_loc).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/profile.h"
#include "tables.h"

#define MAX_INLINE 64      /* frames looked at per address (deeper nests are cut) */

struct expand {
	pf_profile *p;
	pair_table syms;       /* (dso, name id of "NAME (inlined)") x real start -> sym */
	pair_table names;      /* (0, name id) -> the first inlined sym of that name */
	pair_table nodes;      /* (parent, loc) -> new node */
	pair_table a2l;        /* (dso, a2l_key) -> 1: asked about once, 2: named by its symbol for good */
	uint32_t *first;       /* per old location: its first frame location (innermost), PF_NONE: itself */
	uint32_t *count;       /* per old location: its number of frames (0: not yet looked up) */
	uint32_t *frames;      /* frame locations, innermost first, in runs */
	uint32_t *by_name;     /* per symbol: p->sym_inlined in the making */
	size_t cap_by_name;
	size_t nframes, cap_frames;
	pf_node *nn;           /* the new trie */
	size_t nr_nn, cap_nn;
};

static int oom(proff_error *err, const pf_profile *p)
{
	return proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
}

static int64_t intern_str(pf_profile *p, const char *s, size_t len)
{
	return pf_strtab_intern(&p->strs, s, len);
}

/* The inlined symbol NAME of the real symbol real: one per (dso, name,
 * real symbol), which is perf's row of an inlined symbol (same name,
 * overlapping range). */
static uint32_t inlined_sym(struct expand *x, uint32_t real, const char *name)
{
	pf_profile *p = x->p;
	size_t n = strlen(name);
	char *s = malloc(n + sizeof(" (inlined)"));
	if (!s)
		return PF_NONE;
	memcpy(s, name, n);
	memcpy(s + n, " (inlined)", sizeof(" (inlined)"));
	int64_t nid = intern_str(p, s, n + sizeof(" (inlined)") - 1);
	free(s);
	if (nid < 0)
		return PF_NONE;
	const pf_sym rs = p->syms[real];
	int ins;
	/* the key's a: the name id with the dso in the high bits would not
	 * fit; the dso goes into b beside the real start instead */
	uint32_t *slot = pair_table_find(&x->syms, (uint32_t)nid, rs.start ^ ((uint64_t)rs.dso << 48), 1, &ins);
	if (!slot)
		return PF_NONE;
	if (!ins && p->syms[*slot].dso == rs.dso && p->syms[*slot].start == rs.start)
		return *slot;
	if (!ins) {
		/* a (dso, start) pair folded onto another: search linearly (rare) */
		for (size_t i = 0; i < p->nr_syms; i++)
			if (i < x->cap_by_name && x->by_name[i] != PF_NONE && p->syms[i].name == (uint32_t)nid && p->syms[i].dso == rs.dso &&
			    p->syms[i].start == rs.start)
				return (uint32_t)i;
	}
	if (PF_GROW(p->syms, p->cap_syms, p->nr_syms + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)p->nr_syms;
	size_t old = x->cap_by_name;
	if (PF_GROW(x->by_name, x->cap_by_name, p->nr_syms + 1) < 0)
		return PF_NONE;
	for (size_t i = old; i < x->cap_by_name; i++)
		x->by_name[i] = PF_NONE;
	int bins;
	uint32_t *bn = pair_table_find(&x->names, 0, (uint64_t)nid, 1, &bins);
	if (!bn)
		return PF_NONE;
	if (bins)
		*bn = id;
	x->by_name[id] = *bn;
	p->syms[p->nr_syms++] = (pf_sym){ rs.dso, (uint32_t)nid, rs.start, rs.end };
	if (ins)
		*slot = id;
	return id;
}

/* A new location for frame f of location loc (same address, ip, dso and
 * level): symbol sym, srcline the frame's "file:line" (perf's text: the
 * file's base name). */
static uint32_t frame_loc(struct expand *x, uint32_t loc, uint32_t sym, const sym_inline_frame *f)
{
	pf_profile *p = x->p;
	uint32_t srcline = PF_NONE;
	if (f->file) {
		const char *base = strrchr(f->file, '/');
		base = base ? base + 1 : f->file;
		char buf[4096];
		int n = snprintf(buf, sizeof(buf), "%s:%u", base, f->line);
		if (n > 0 && (size_t)n < sizeof(buf)) {
			int64_t id = intern_str(p, buf, (size_t)n);
			if (id < 0)
				return PF_NONE;
			srcline = (uint32_t)id;
		}
	}
	if (PF_GROW(p->locs, p->cap_locs, p->nr_locs + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)p->nr_locs;
	p->locs[p->nr_locs] = p->locs[loc];
	p->locs[p->nr_locs].sym = sym;
	p->locs[p->nr_locs].srcline = srcline;
	p->nr_locs++;
	return id;
}

/* The frames of old location loc (looked up once): x->count[loc] of them
 * from x->frames[x->first[loc]], or loc itself alone. */
static int look_up(struct expand *x, uint32_t loc)
{
	pf_profile *p = x->p;
	x->count[loc] = 1;
	x->first[loc] = PF_NONE;
	const pf_loc l = p->locs[loc];
	if (l.sym == PF_NONE || l.dso == PF_NONE || !p->dsos[l.dso].sd)
		return 0;
	sym_inline_frame fr[MAX_INLINE];
	size_t nf = sym_inlines(p->dsos[l.dso].sd, l.addr, fr, MAX_INLINE);
	const char *real = pf_str(p, p->syms[l.sym].name);
	if (nf > 0 && fr[0].a2l_key) {
		/* binutils' addr2line: the first query of a function without
		 * a linkage name names it by the symbol table (the real
		 * symbol), and for good when that symbol starts at it */
		int ins;
		uint32_t *st = pair_table_find(&x->a2l, l.dso, fr[0].a2l_key, 1, &ins);
		if (!st)
			return -1;
		if (ins)
			*st = fr[0].a2l_at_start ? 2 : 1;
		if (ins || *st == 2)
			fr[0].name = real;
	}
	if (nf == 0 || (nf == 1 && fr[0].name && !strcmp(fr[0].name, real)))
		return 0;    /* perf's entry as it was: the symbol, the address's line */
	if (PF_GROW(x->frames, x->cap_frames, x->nframes + nf) < 0)
		return -1;
	size_t at = x->nframes;
	for (size_t k = 0; k < nf; k++) {
		const char *name = fr[k].name ? fr[k].name : "??";
		uint32_t sym = !strcmp(name, real) ? l.sym : inlined_sym(x, l.sym, name);   /* perf: any frame of the real name */
		if (sym == PF_NONE)
			return -1;
		/* consecutive locations, innermost first: pf_loc_continues */
		uint32_t fl = frame_loc(x, loc, sym, &fr[k]);
		if (fl == PF_NONE)
			return -1;
		x->frames[x->nframes++] = fl;
	}
	x->first[loc] = (uint32_t)at;
	x->count[loc] = (uint32_t)nf;
	return 0;
}

/* The new trie's child of parent for loc */
static uint32_t new_child(struct expand *x, uint32_t parent, uint32_t loc)
{
	int ins;
	uint32_t *slot = pair_table_find(&x->nodes, parent, loc, 1, &ins);
	if (!slot)
		return PF_NONE;
	if (!ins)
		return *slot;
	if (PF_GROW(x->nn, x->cap_nn, x->nr_nn + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)x->nr_nn++;
	x->nn[id] = (pf_node){ parent, loc, x->nn[parent].depth + 1 };
	*slot = id;
	return id;
}

static void expand_free(struct expand *x)
{
	pair_table_free(&x->syms);
	pair_table_free(&x->names);
	free(x->by_name);
	pair_table_free(&x->nodes);
	pair_table_free(&x->a2l);
	free(x->first);
	free(x->count);
	free(x->frames);
	free(x->nn);
}

/* Every location of the samples' chains looked up in the order perf's
 * report asks addr2line: the samples in the order they were read, each
 * chain leaf first, or root first when root_first (perf's callchain order
 * when it resolves a sample). */
static int look_up_in_perf_order(struct expand *x, bool root_first)
{
	pf_profile *p = x->p;
	uint32_t *path = NULL;
	size_t cap = 0;
	for (size_t si = 0; si < p->nr_samples; si++) {
		uint32_t leaf = p->samples[si].stack;
		if (pf_node_nochain(p, leaf))
			continue;
		size_t n = 0;
		for (uint32_t nd = leaf; nd; nd = p->nodes[nd].parent) {
			if (PF_GROW(path, cap, n + 1) < 0) {
				free(path);
				return -1;
			}
			path[n++] = p->nodes[nd].loc;
		}
		for (size_t k = 0; k < n; k++) {
			uint32_t loc = path[root_first ? n - 1 - k : k];
			if (!x->count[loc] && look_up(x, loc) < 0) {
				free(path);
				return -1;
			}
		}
	}
	free(path);
	return 0;
}

int pf_profile_expand_inlines(pf_profile *p, bool root_first, proff_error *err)
{
	if (p->loc_real || p->nr_nodes < 2 || p->exact)
		return 0;
	/* perf 6.1 adds inlined frames to the chains it unwinds itself
	 * (--call-graph dwarf: PERF_SAMPLE_STACK_USER), not to recorded ones */
	bool dwarf = false;
	for (size_t i = 0; i < p->nr_events; i++)
		dwarf |= (p->events[i].sample_type & (1ULL << 13)) != 0;
	if (!dwarf)
		return 0;
	struct expand x = { .p = p };
	size_t nold = p->nr_locs, nodes = p->nr_nodes;
	uint32_t *map = malloc(nodes * sizeof(*map));
	x.first = malloc((nold ? nold : 1) * sizeof(*x.first));
	x.count = calloc(nold ? nold : 1, sizeof(*x.count));
	if (!map || !x.first || !x.count || PF_GROW(x.nn, x.cap_nn, nodes) < 0)
		goto nomem;
	if (look_up_in_perf_order(&x, root_first) < 0)
		goto nomem;
	x.nn[0] = p->nodes[0];
	x.nr_nn = 1;
	map[0] = 0;
	for (size_t i = 1; i < nodes; i++)
		map[i] = PF_NONE;
	uint32_t *todo = NULL;
	size_t cap_todo = 0;
	for (size_t i = 1; i < nodes; i++) {
		/* the node's ancestors first (a parent may come after its child
		 * in a merged trie) */
		size_t nt = 0;
		for (uint32_t n = (uint32_t)i; map[n] == PF_NONE; n = p->nodes[n].parent) {
			if (PF_GROW(todo, cap_todo, nt + 1) < 0) {
				free(todo);
				goto nomem;
			}
			todo[nt++] = n;
		}
		while (nt) {
			uint32_t n = todo[--nt], loc = p->nodes[n].loc, cur = map[p->nodes[n].parent];
			if (pf_node_nochain(p, n)) {
				/* a sample whose chain perf discarded: no entries to expand
				 * (its own node, kept as it was) */
				cur = PF_GROW(x.nn, x.cap_nn, x.nr_nn + 1) < 0 ? PF_NONE : (uint32_t)x.nr_nn++;
				if (cur != PF_NONE)
					x.nn[cur] = (pf_node){ 0, loc, 1 };
			} else {
				if (!x.count[loc] && look_up(&x, loc) < 0) {
					free(todo);
					goto nomem;
				}
				if (x.first[loc] == PF_NONE) {
					cur = new_child(&x, cur, loc);
				} else {
					/* outermost (nearest the root) first */
					for (uint32_t k = x.count[loc]; k-- > 0 && cur != PF_NONE;)
						cur = new_child(&x, cur, x.frames[x.first[loc] + k]);
				}
			}
			if (cur == PF_NONE) {
				free(todo);
				goto nomem;
			}
			map[n] = cur;
		}
	}
	free(todo);
	if (p->nr_locs == nold) {
		/* nothing inlined: the profile stays as it is */
		expand_free(&x);
		free(map);
		return 0;
	}
	/* every symbol's entry (the real ones PF_NONE) */
	size_t oldc = x.cap_by_name;
	if (PF_GROW(x.by_name, x.cap_by_name, p->nr_syms ? p->nr_syms : 1) < 0)
		goto nomem;
	for (size_t i = oldc; i < x.cap_by_name; i++)
		x.by_name[i] = PF_NONE;
	p->loc_real = malloc(p->nr_locs * sizeof(*p->loc_real));
	uint8_t *nochain = NULL;
	if (p->nochain) {
		nochain = calloc(x.nr_nn, 1);
		if (!nochain)
			goto nomem;
	}
	if (!p->loc_real) {
		free(nochain);
		goto nomem;
	}
	for (size_t i = 0; i < nold; i++)
		p->loc_real[i] = (uint32_t)i;
	for (size_t i = 0; i < nold; i++)
		for (uint32_t k = 0; x.first[i] != PF_NONE && k < x.count[i]; k++)
			p->loc_real[x.frames[x.first[i] + k]] = (uint32_t)i;
	if (nochain) {
		for (size_t i = 1; i < nodes; i++)
			if (pf_node_nochain(p, (uint32_t)i))
				nochain[map[i]] = 1;
		free(p->nochain);
		p->nochain = nochain;
		p->cap_nochain = x.nr_nn;
	}
	for (size_t i = 0; i < p->nr_samples; i++)
		p->samples[i].stack = map[p->samples[i].stack];
	p->sym_inlined = x.by_name;
	x.by_name = NULL;
	free(p->nodes);
	p->nodes = x.nn;
	p->nr_nodes = p->cap_nodes = x.nr_nn;
	x.nn = NULL;
	expand_free(&x);
	free(map);
	return 0;
nomem:
	expand_free(&x);
	free(map);
	free(p->loc_real);
	p->loc_real = NULL;
	return oom(err, p);
}
