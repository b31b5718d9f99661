/* hist.c — aggregating a profile into rows by sort keys (perf's hists).
 *
 * Works per unique aggregated sample (pf_sample), never per raw sample:
 * each sample's leaf location gives the Self row; with children, every
 * distinct row met on its stack (once per stack, so recursion counts once)
 * gets the period added to Children.
 *
 * Row identity is a small array of u64 key words built from the active
 * sort keys (see key_words()); rows are found through a hash of that array.
 */
#include "proff/hist.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "../model/tables.h"
#include "keys.h"
#include "sym-span.h"

#define KW_PER_KEY 2

_Static_assert(sizeof(hist_entry) <= 128, "a row is two cache lines");

/* What the Children pass updates per row, apart from the row (a row is
 * two cache lines, this a quarter of one): written back when it ends. */
struct hot_ent {
	uint64_t acc;            /* Children period */
	uint32_t seen;           /* stamp of the last sample that touched the row */
	uint32_t depth;          /* longest callchain */
};

/* Callchain tree nodes and the index of large child lists: (node, key) ->
 * child. The hist's trees are built in one pool (published as h->cc_nodes
 * when built); the tree-mode rows' trees may be built in a second one on
 * another thread at the same time, then appended (cc_pool_append). */
struct cc_pool {
	const pf_profile *prof;
	hist_cc_node *nodes;
	size_t n, cap;
	pair_table child;
	uint32_t *roots;         /* the rows whose tree root this pool made */
	size_t nr_roots, cap_roots;
};

struct hist_priv {
	uint64_t *keyw;          /* n * kw words */
	size_t kw;               /* words per entry */
	id_table tab;
	struct hot_ent *hot;     /* per entry: the Children pass's sums (children mode) */
	size_t cap_hot;
	regex_t parent_re;
	bool has_parent_re;
	uint32_t other_id;       /* "[other]" */
	struct cc_pool cc;       /* the callchain trees' nodes while they are built */
	/* the row cache (loc_entry): per location the slot of its key — its
	 * symbol's when the keys see no more of it, else its own — and per
	 * slot two ways (the last comm first), (comm + 1) << 32 | row */
	uint32_t *slot_of;
	size_t nr_slot_of;
	uint64_t *row_cache;     /* 2 * nr_slots */
	size_t nr_slots;
	/* tree mode (suspect_locs): perf's input tree, grown with the rows,
	 * and per location whether its rows are found by walking it */
	hist_itree *itree;
	uint8_t *suspect;        /* per location: 0, or 1 + its dso's column in gwrap */
	/* with comm and dso keys before sym: per (comm, dso) group whether it
	 * wraps — gwrap[cidx_of[comm] * ncol + column]; NULL: every suspect
	 * location is a tree-mode one */
	uint8_t *gwrap;
	uint32_t *cidx_of;       /* per string id (comms only) */
	size_t ncol;
	/* and with callchain trees built after the pass (fast_cc), the chains
	 * its rows got, in order: built once their totals are known */
	struct tree_chain *tchains;
	size_t nr_tchains, cap_tchains;
	/* per key (its first row): the row the last walk found and the number
	 * of rows then — the tree is the same while no row is added */
	uint32_t *wrow, *wsize;
	size_t cap_walk;
	struct tree_agg *taggs;          /* per aggregated sample */
	struct tree_frame **tframes;     /* TF_MAX_CHUNKS chunks */
	size_t nr_tframes;
	bool pipe;                       /* the pass runs on two threads (struct tree_pipe) */
};

/* Tree mode: is loc a tree-mode location for a sample whose comm has the
 * group flags gw (group_row)? */
static inline const uint8_t *group_row(const struct hist_priv *pv, uint32_t comm)
{
	return pv->gwrap ? pv->gwrap + (size_t)pv->cidx_of[comm] * pv->ncol : NULL;
}

static inline bool tree_loc(const uint8_t *suspect, const uint8_t *gw, uint32_t loc)
{
	uint8_t v = suspect[loc];
	return v && (!gw || gw[v - 1]);
}

/* A tree-mode row's chain: aggregated sample si's cursor from position k,
 * with the period and count of the raw samples that added it */
struct tree_chain { uint32_t si, row, k, count; uint64_t period; };

/* Tree mode over raw samples: an aggregate's tree-mode frames (cursor
 * position, location, the key's first row, the level the frame gets),
 * kept the first time one of its raw samples is passed: a raw sample met
 * again walks these only */
struct tree_frame { uint32_t k, loc, key, nrows; char level; };    /* nrows: rows made then */
struct tree_agg {
	uint32_t off, cnt, nk, self_key, self_rows, rows_after;
	char level;              /* the level of the sample's ip */
	bool self_tree;          /* its Self row is a tree-mode one */
};

/* the frames in chunks that never move (the pass on two threads reads
 * them while they are appended) */
#define TF_SHIFT 14
#define TF_CHUNK ((size_t)1 << TF_SHIFT)
#define TF_MAX_CHUNKS ((size_t)1 << 16)

void hist_opts_init(hist_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sort = "comm,dso,sym";
	o->parent_regex = "^sys_|^do_page_fault";
}

void hist_opts_release(hist_opts *o)
{
	pf_strlist_free(&o->comms);
	pf_strlist_free(&o->dsos);
	pf_strlist_free(&o->symbols);
	free(o->pids);
	free(o->tids);
	o->pids = o->tids = NULL;
	o->nr_pids = o->nr_tids = 0;
}

/* ---- building ------------------------------------------------------------------ */

typedef struct ctx {
	const pf_sample *s;
	uint32_t parent;     /* parent name id for this sample (0 = none) */
	uint8_t thread_filtered;
	/* the filters' verdict on the sample: its thread, its own ip's dso and
	 * symbol. Every row the sample adds gets it, its callchain rows too —
	 * perf's cumulative entries share the sample's addr_location — so
	 * `--dsos X` in Children mode keeps the callers of X's samples,
	 * whatever their own dso (a caller without a map among them) */
	uint8_t sample_filtered;
	char self_level;     /* level of the sample ip (chain entries without a map inherit it) */
} ctx;

/* A row's address and level as perf shows them: Self rows use the map
 * address; callchain (cumulative) rows of unresolved frames use the raw ip,
 * and without a map inherit the level of the sample. */
static uint64_t row_addr(const pf_loc *l, bool chain) { return hist_row_addr(l, chain); }
static char row_level(const pf_profile *p, const ctx *c, const pf_loc *l, bool chain)
{
	if (!chain)
		return c->self_level;
	if (l->sym != PF_NONE)
		return l->level;
	if (l->dso == PF_NONE)
		return c->self_level;
	enum sym_dso_kind k = p->dsos[l->dso].kind;
	return (k == SYM_DSO_KERNEL || k == SYM_DSO_MODULE) ? 'k' : '.';
}

/* The row identity of (sample context, location): each key's two words
 * (hist_key_def.words), in the keys' order. */
static void key_words(hist *h, const ctx *c, uint32_t loc, bool chain, uint64_t *w)
{
	hist_key_src src = { c->s, c->parent, loc, chain };
	for (int i = 0; i < h->nkeys; i++)
		hist_keys[h->keys[i]].words(h, &src, w + i * KW_PER_KEY);
}

/* Does one of the sort keys need n (HKN_*)? */
static bool keys_need(const hist *h, unsigned n)
{
	return (hist_keys_needs(h->keys, h->nkeys) & n) != 0;
}

static uint8_t entry_filter(hist *h, const ctx *c, uint32_t loc)
{
	uint8_t f = c->thread_filtered;
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[loc];
	if (h->opts.dsos.n) {
		bool keep = false;
		if (l->dso != PF_NONE) {
			keep = pf_strlist_has(&h->opts.dsos, pf_str(p, p->dsos[l->dso].short_name)) ||
			       pf_strlist_has(&h->opts.dsos, pf_str(p, p->dsos[l->dso].long_name));
		}
		if (!keep)
			f |= HF_DSO;
	}
	if (h->opts.symbols.n) {
		if (l->sym == PF_NONE || !pf_strlist_has(&h->opts.symbols, pf_str(p, p->syms[l->sym].name)))
			f |= HF_SYMBOL;
	}
	return f;
}

/* Room for n rows: the rows, their key words and Children sums. */
static int reserve_rows(hist *h, size_t n)
{
	struct hist_priv *pv = h->priv;
	size_t cap = h->cap;
	if (PF_GROW(h->entries, cap, n) < 0)
		return -1;
	if (cap != h->cap || !pv->keyw) {      /* the key words grow with the rows */
		uint64_t *nk = pf_realloc_array(pv->keyw, cap * pv->kw, 8);
		if (!nk)
			return -1;
		pv->keyw = nk;
	}
	if (PF_GROW(pv->hot, pv->cap_hot, n) < 0)
		return -1;
	if (pv->itree && !pv->pipe && n > pv->cap_walk) {
		size_t c = pv->cap_walk, old = c;
		if (PF_GROW(pv->wrow, c, n) < 0 || PF_GROW(pv->wsize, pv->cap_walk, n) < 0)
			return -1;
		memset(pv->wsize + old, 0, (pv->cap_walk - old) * sizeof(uint32_t));
	}
	h->cap = cap;
	return 0;
}

/* The rows' arrays cut to the rows made, once no more are added: doubling
 * left up to half of each unused, and the callchain trees built next take
 * that room instead of fresh pages (each first touch a page fault; the
 * room is touched anyway, by the allocator's page-ahead, once the heap
 * grows past it). A failed shrink leaves an array as it is. */
static void fit_rows(hist *h)
{
	struct hist_priv *pv = h->priv;
	size_t n = h->n ? h->n : 1;
	if (h->cap > n && (h->cap - n) * sizeof(hist_entry) >= ((size_t)64 << 10)) {
		hist_entry *e = pf_realloc_array(h->entries, n, sizeof(*e));
		if (e) {
			h->entries = e;
			h->cap = n;
			/* key words beyond cap are harmless (reserve_rows sizes them anew) */
			uint64_t *k = pf_realloc_array(pv->keyw, n * pv->kw, 8);
			if (k)
				pv->keyw = k;
		}
	}
	if (pv->cap_hot > n) {
		struct hot_ent *t = pf_realloc_array(pv->hot, n, sizeof(*t));
		if (t) {
			pv->hot = t;
			pv->cap_hot = n;
		}
	}
}

/* Key words equal (a few words: no library call) */
static inline bool same_words(const uint64_t *a, const uint64_t *b, size_t n)
{
	uint64_t d = 0;
	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return !d;
}

/* The row whose key words are w (hash theirs), or PF_NONE; *slot: its
 * table slot, or the empty one a new row would take. */
static inline __attribute__((always_inline)) uint32_t row_probe(const struct hist_priv *pv, const uint64_t *w, uint64_t hash, size_t *slot)
{
	const id_table *t = &pv->tab;
	size_t j = hash & (t->cap - 1);
	for (; t->s[j].id; j = (j + 1) & (t->cap - 1))
		if (t->s[j].hash == hash && same_words(pv->keyw + (size_t)(t->s[j].id - 1) * pv->kw, w, pv->kw))
			break;
	*slot = j;
	return t->s[j].id ? t->s[j].id - 1 : PF_NONE;
}

/* A new row with key words w (hash theirs) in the empty table slot j that
 * row_probe gave: room, key and slot; the caller fills the row (h->n) and
 * its Children sums, then row_publish counts it. -1: out of memory. */
static int row_new(hist *h, const uint64_t *w, uint64_t hash, size_t j)
{
	struct hist_priv *pv = h->priv;
	if (reserve_rows(h, h->n + 1) < 0)
		return -1;
	memcpy(pv->keyw + h->n * pv->kw, w, pv->kw * 8);
	pv->tab.s[j].id = (uint32_t)h->n + 1;
	pv->tab.s[j].hash = hash;
	pv->tab.len++;
	return 0;
}

/* The row row_new made, filled: handed to the row-order stream, counted. */
static int64_t row_publish(hist *h)
{
	if (h->order)
		hist_order_stream_row(h, h->n);
	return (int64_t)h->n++;
}

static void row_fill(hist *h, const ctx *c, uint32_t loc, bool chain, hist_entry *e);

static int64_t find_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	uint64_t w[HIST_MAX_KEYS * KW_PER_KEY];
	key_words(h, c, loc, chain, w);
	uint64_t hash = pf_hash_bytes(w, pv->kw * 8, 0x5eed);
	id_table *t = &pv->tab;
	if ((t->len + 1) * 2 > t->cap && id_table_grow(t) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	size_t j;
	uint32_t id = row_probe(pv, w, hash, &j);
	if (id != PF_NONE) {
		hist_entry *e = &h->entries[id];
		/* unresolved rows collapsed by name: show the lowest address */
		const pf_loc *l = &h->prof->locs[loc];
		if (h->opts.diff_mode && e->sym == PF_NONE && l->addr < e->addr) {
			e->addr = l->addr;
			e->ip = l->ip;
			e->loc = loc;
		}
		return id;
	}
	if (row_new(h, w, hash, j) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	pv->hot[h->n] = (struct hot_ent){ 0, UINT32_MAX, 0 };
	row_fill(h, c, loc, chain, &h->entries[h->n]);
	if (pv->itree && (pv->pipe ? hist_itree_stage(pv->itree, h, h->n) : hist_itree_add(pv->itree, h, h->n)) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return row_publish(h);
}

/* A new row's fields: the key of (sample context, location) and what the
 * creating sample shows of it. */
static void row_fill(hist *h, const ctx *c, uint32_t loc, bool chain, hist_entry *e)
{
	const pf_profile *p = h->prof;
	const pf_loc *l = &p->locs[loc];
	memset(e, 0, sizeof(*e));
	e->comm = c->s->comm;
	e->thread = c->s->thread;
	e->pid = c->s->pid;
	e->tid = c->s->tid;
	e->cpu = c->s->cpu;
	e->dso = l->dso;
	e->sym = l->sym;
	e->sym_name = l->sym != PF_NONE ? p->syms[l->sym].name : 0;
	e->loc = loc;
	e->addr = row_addr(l, chain);
	e->ip = l->ip;
	e->level = row_level(p, c, l, chain);
	e->parent = c->parent;
	e->filtered = chain ? c->sample_filtered : entry_filter(h, c, loc);
	e->cc_root = PF_NONE;
	hist_key_src src = { c->s, c->parent, loc, chain };
	for (int i = 0; i < h->nkeys; i++)
		if (hist_keys[h->keys[i]].fill)
			hist_keys[h->keys[i]].fill(h, &src, e);
}

/* Tree mode: the row perf's findnew walk stops at for this key — the row
 * the hash gives, another row of the same key, or, when the walk meets
 * none (a comparator that is not transitive sent it astray), a new row of
 * that key, as perf makes one: kept out of the hash table, which keeps
 * the key's first row (the once-per-sample rule compares keys). */
static int64_t tree_entry(hist *h, const ctx *c, uint32_t loc, bool chain, uint32_t key, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	uint32_t ver = hist_itree_version(pv->itree, key);
	if (pv->wsize[key] == ver)
		return pv->wrow[key];
	hist_entry probe;
	row_fill(h, c, loc, chain, &probe);    /* tree mode made every srcline first */
	int64_t id = hist_itree_find(pv->itree, h, &probe);
	if (id >= 0) {
		pv->wrow[key] = (uint32_t)id;
		pv->wsize[key] = ver;
		return id;
	}
	if (id < -1 || reserve_rows(h, h->n + 1) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	key_words(h, c, loc, chain, pv->keyw + h->n * pv->kw);
	pv->hot[h->n] = (struct hot_ent){ 0, UINT32_MAX, 0 };
	h->entries[h->n] = probe;
	if (hist_itree_add(pv->itree, h, h->n) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return row_publish(h);
}

/* A callchain frame's row, through a cache when the sort keys see no more
 * of the sample than its comm (perf's default comm,dso,sym): the row is
 * then a function of (comm, location) — of (comm, symbol) for a resolved
 * location without srcline keys — and a slot per location or symbol finds
 * it without hashing the key (a children report looks up every frame of
 * every sample; a symbol's slot serves all its addresses). A slot keeps
 * the rows of the last two comms that met it (libc's frames alternate
 * between processes): on the bench profile 21 % of the lookups missed
 * with one. */
static int64_t loc_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	if (loc >= pv->nr_slot_of)
		return find_entry(h, c, loc, chain, err);
	uint64_t tag = (uint64_t)c->s->comm + 1;
	uint64_t *slot = &pv->row_cache[2 * (size_t)pv->slot_of[loc]];
	if (slot[0] >> 32 == tag)
		return (int64_t)(uint32_t)slot[0];
	if (slot[1] >> 32 == tag) {
		uint64_t v = slot[1];
		slot[1] = slot[0];
		slot[0] = v;
		return (int64_t)(uint32_t)v;
	}
	int64_t id = find_entry(h, c, loc, chain, err);
	if (id >= 0) {
		slot[1] = slot[0];
		slot[0] = tag << 32 | (uint64_t)id;
	}
	return id;
}

static int64_t chain_entry(hist *h, const ctx *c, uint32_t loc, proff_error *err)
{
	return loc_entry(h, c, loc, true, err);
}

/* A sample's Self row: through the same cache where the Self key equals the
 * callchain key (resolved, or without a map: the key holds the address,
 * the map address for Self, the raw ip for callchain rows). */
static bool self_key_is_chain_key(const pf_loc *l) { return l->sym != PF_NONE || l->dso == PF_NONE; }

static int64_t self_entry(hist *h, const ctx *c, uint32_t loc, bool same_key, proff_error *err)
{
	if (h->priv->row_cache && same_key)
		return loc_entry(h, c, loc, false, err);
	return find_entry(h, c, loc, false, err);
}

/* Children mode, per location, what the pass reads of it (two bytes
 * instead of the location's cache line): its map's level for the frames
 * after it ('k', '.'; 0 without a map: the level stays), and its own level
 * with bit 7 set when its Self key is its callchain key. */
typedef struct loc_bits {
	uint8_t map_level, level_self;
} loc_bits;

static uint32_t sample_parent(hist *h, const pf_sample *s)
{
	struct hist_priv *pv = h->priv;
	if (!pv->has_parent_re)
		return 0;
	const pf_profile *p = h->prof;
	for (uint32_t n = s->stack; n; n = p->nodes[n].parent) {
		const pf_loc *l = &p->locs[p->nodes[n].loc];
		if (l->sym == PF_NONE)
			continue;
		const char *name = pf_str(p, p->syms[l->sym].name);
		if (regexec(&pv->parent_re, name, 0, NULL, 0) == 0)
			return p->syms[l->sym].name;
	}
	return 0;
}

static bool u32_in(const uint32_t *a, size_t n, uint32_t v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return true;
	return false;
}

/* ---- callchain trees (graph output) -------------------------------------------- */

/* perf matches callchain entries by symbol, unresolved ones by location:
 * symbol id | 1<<31, or the location id (both below 2^31). */
static inline uint32_t cc_key(const pf_profile *prof, uint32_t loc)
{
	const pf_loc *l = &prof->locs[loc];
	if (l->sym == PF_NONE)
		return loc & 0x7fffffffu;
	/* perf matches inlined entries by name alone */
	return (pf_sym_is_inlined(prof, l->sym) ? prof->sym_inlined[l->sym] : l->sym) | 0x80000000u;
}

static uint32_t cc_new_node(struct cc_pool *cp, uint32_t parent, uint32_t loc)
{
	if (PF_GROW(cp->nodes, cp->cap, cp->n + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)cp->n++;
	hist_cc_node *n = &cp->nodes[id];
	memset(n, 0, sizeof(*n));
	n->first_child = n->next_sibling = PF_NONE;
	n->parent = parent;
	n->nr_children = 0;
	n->loc = loc;
	n->key = loc != PF_NONE ? cc_key(cp->prof, loc) : UINT32_MAX;
	if (parent != PF_NONE) {
		/* prepended; cc_finish restores insertion order */
		hist_cc_node *pn = &cp->nodes[parent];
		n->next_sibling = pn->first_child;
		pn->first_child = id;
		pn->nr_children++;
	}
	return id;
}

/* The child of cc node cur for location loc (created if needed). perf
 * matches callchain entries by symbol, unresolved ones by (map, ip): the
 * child is keyed by symbol id or by location. */
#define CC_LIST_MAX 8      /* children searched by a list scan up to this many */

static uint32_t cc_child(struct cc_pool *cp, uint32_t cur, uint32_t loc)
{
	uint32_t key = cc_key(cp->prof, loc);
	if (cp->nodes[cur].nr_children <= CC_LIST_MAX) {
		for (uint32_t c = cp->nodes[cur].first_child; c != PF_NONE; c = cp->nodes[c].next_sibling)
			if (cp->nodes[c].key == key)
				return c;
		uint32_t nn = cc_new_node(cp, cur, loc);
		if (nn == PF_NONE)
			return PF_NONE;
		if (cp->nodes[cur].nr_children == CC_LIST_MAX + 1) {
			/* many children: index them all */
			for (uint32_t c = cp->nodes[cur].first_child; c != PF_NONE; c = cp->nodes[c].next_sibling) {
				uint32_t *slot = pair_table_find(&cp->child, cur, cp->nodes[c].key, 1, NULL);
				if (!slot)
					return PF_NONE;
				*slot = c;
			}
		}
		return nn;
	}
	int inserted;
	uint32_t *slot = pair_table_find(&cp->child, cur, key, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	uint32_t nn = cc_new_node(cp, cur, loc);
	if (nn == PF_NONE)
		return PF_NONE;
	slot = pair_table_find(&cp->child, cur, key, 0, NULL);
	*slot = nn;
	return nn;
}

static uint32_t cc_root_of(struct cc_pool *cp, hist_entry *e, uint32_t row)
{
	if (e->cc_root == PF_NONE) {
		if (PF_GROW(cp->roots, cp->cap_roots, cp->nr_roots + 1) < 0)
			return PF_NONE;
		e->cc_root = cc_new_node(cp, PF_NONE, PF_NONE);
		cp->roots[cp->nr_roots++] = row;
	}
	return e->cc_root;
}

/* Add one chain (a sequence of locations, in print order) with its period
 * to the entry's callchain tree. The tree keeps one location per node; the
 * printer merges single-child runs, which is what perf's graph shows.
 * children_hit is filled in once at the end (cc_finish). */
static int cc_add(hist *h, struct cc_pool *cp, uint32_t row, const uint32_t *locs, size_t n, uint64_t period,
		  uint64_t count)
{
	uint32_t cur = cc_root_of(cp, &h->entries[row], row);
	if (cur == PF_NONE)
		return -1;
	for (size_t i = 0; i < n; i++) {
		cur = cc_child(cp, cur, locs[i]);
		if (cur == PF_NONE)
			return -1;
	}
	cp->nodes[cur].hit += period;
	cp->nodes[cur].count += count;
	return 0;
}

/* A pool's memory freed; the pool left empty (for prof's locations) */
static void cc_pool_free(struct cc_pool *cp, const pf_profile *prof)
{
	free(cp->nodes);
	free(cp->roots);
	pair_table_free(&cp->child);
	*cp = (struct cc_pool){ prof, NULL, 0, 0, { 0 }, NULL, 0, 0 };
}

/* Pool b's nodes after a's (its ids moved by a's count: parents still
 * before children, siblings in their order), its rows' roots with them
 * and its large child lists indexed in a's table (cc_merge adds to the
 * trees after); b is emptied. -1: out of memory. */
static int cc_pool_append(hist *h, struct cc_pool *a, struct cc_pool *b)
{
	if (PF_GROW(a->nodes, a->cap, a->n + b->n) < 0)
		return -1;
	uint32_t off = (uint32_t)a->n;
#define CC_MOVE(x) ((x) == PF_NONE ? PF_NONE : (x) + off)
	for (size_t i = 0; i < b->n; i++) {
		hist_cc_node n = b->nodes[i];
		n.first_child = CC_MOVE(n.first_child);
		n.next_sibling = CC_MOVE(n.next_sibling);
		n.parent = CC_MOVE(n.parent);
		a->nodes[a->n++] = n;
	}
	for (size_t i = 0; i < b->nr_roots; i++)
		h->entries[b->roots[i]].cc_root = CC_MOVE(h->entries[b->roots[i]].cc_root);
#undef CC_MOVE
	for (size_t i = off; i < a->n; i++) {
		if (a->nodes[i].nr_children <= CC_LIST_MAX)
			continue;
		for (uint32_t c = a->nodes[i].first_child; c != PF_NONE; c = a->nodes[c].next_sibling) {
			uint32_t *slot = pair_table_find(&a->child, (uint32_t)i, a->nodes[c].key, 1, NULL);
			if (!slot)
				return -1;
			*slot = c;
		}
	}
	cc_pool_free(b, a->prof);
	return 0;
}

/* Sum children_hit bottom-up (children are created after their parents),
 * unlink nodes no chain reached (hit and children_hit both 0) and turn the
 * prepended sibling lists back into insertion order. */
static void cc_finish(struct cc_pool *cp)
{
	for (size_t i = cp->n; i-- > 0;) {
		hist_cc_node *n = &cp->nodes[i];
		if (n->parent != PF_NONE)
			cp->nodes[n->parent].children_hit += n->hit + n->children_hit;
	}
	for (size_t i = 0; i < cp->n; i++) {
		hist_cc_node *n = &cp->nodes[i];
		uint32_t c = n->first_child, head = PF_NONE;
		while (c != PF_NONE) {
			uint32_t next = cp->nodes[c].next_sibling;
			if (cp->nodes[c].hit + cp->nodes[c].children_hit) {
				cp->nodes[c].next_sibling = head;    /* reversing: newest was first */
				head = c;
			}
			c = next;
		}
		n->first_child = head;
	}
}

/* Children mode, caller order, no --max-stack: build every row's callchain
 * tree with one walk of the stack trie per sample context instead of one
 * insertion per (sample, row) pair. A row met at trie node t (its first
 * occurrence on the path) follows the trie below t; a sample ending at a
 * node adds its period where each such row currently is. The sample's Self
 * row gets the whole path, and is skipped as a caller row (perf's
 * once-per-sample rule). */
typedef struct cc_rec { uint32_t entry, cur; } cc_rec;

typedef struct ctx_sort { const hist *h; const uint32_t *parent; } ctx_sort;

/* A sample's context key words: every key's that is not the location's
 * (comm, pid, cpu, parent, label), in the keys' order */
static void ctx_words(const hist *h, const uint32_t *parent_of, uint32_t si, uint64_t *w)
{
	hist_key_src src = { &h->prof->samples[si], parent_of ? parent_of[si] : 0, 0, false };
	for (int i = 0; i < h->nkeys; i++) {
		const hist_key_def *k = &hist_keys[h->keys[i]];
		if (k->needs & HKN_LOC)
			w[2 * i] = w[2 * i + 1] = 0;
		else
			k->words(h, &src, w + 2 * i);
	}
}

static int ctx_cmp(const void *pa, const void *pb, void *arg)
{
	const ctx_sort *cs = arg;
	const hist *h = cs->h;
	uint32_t ia = *(const uint32_t *)pa, ib = *(const uint32_t *)pb;
	uint64_t x[HIST_MAX_KEYS * 2], y[HIST_MAX_KEYS * 2];
	ctx_words(h, cs->parent, ia, x);
	ctx_words(h, cs->parent, ib, y);
	for (int i = 0; i < 2 * h->nkeys; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return ia < ib ? -1 : ia > ib;
}

/* idx[0, n) ordered by the samples' context keys, equal contexts by index
 * (ctx_cmp). When idx is ascending and the comm is the only context key
 * (perf's default comm,dso,sym), a counting sort by comm id (stable: the
 * same order); with no context key, idx as it is. */
static void ctx_order(const hist *h, const uint32_t *parent_of, const uint32_t *idx, size_t n, uint32_t *order)
{
	bool comm = false, other = false, ascending = true;
	for (int i = 0; i < h->nkeys; i++) {
		unsigned n = hist_keys[h->keys[i]].needs;
		if (!(n & HKN_LOC)) {
			comm |= n == HKN_COMM;
			other |= n != HKN_COMM;
		}
	}
	for (size_t k = 1; k < n && ascending; k++)
		ascending = idx[k - 1] < idx[k];
	if (!comm && !other && ascending) {
		memcpy(order, idx, n * sizeof(uint32_t));   /* one context: by index */
		return;
	}
	size_t ncomm = h->prof->strs.n;
	uint32_t *start = comm && !other && ascending ? calloc(ncomm + 1, sizeof(uint32_t)) : NULL;
	if (!start) {
		memcpy(order, idx, n * sizeof(uint32_t));
		ctx_sort cs = { h, parent_of };
		qsort_r(order, n, sizeof(uint32_t), ctx_cmp, &cs);
		return;
	}
	const pf_sample *sm = h->prof->samples;
	for (size_t k = 0; k < n; k++)
		start[sm[idx[k]].comm + 1]++;
	for (size_t c = 0; c < ncomm; c++)
		start[c + 1] += start[c];
	for (size_t k = 0; k < n; k++)
		order[start[sm[idx[k]].comm]++] = idx[k];
	free(start);
}

static bool same_ctx(const hist *h, const uint32_t *parent_of, uint32_t ia, uint32_t ib)
{
	uint64_t x[HIST_MAX_KEYS * 2], y[HIST_MAX_KEYS * 2];
	ctx_words(h, parent_of, ia, x);
	ctx_words(h, parent_of, ib, y);
	return !memcmp(x, y, 2 * (size_t)h->nkeys * sizeof(uint64_t));
}

/* v[0, n) ascending, all below `bound` (tmp: n words): least significant
 * byte first, as many passes as bound needs. */
static void radix_sort_u32(uint32_t *v, uint32_t *tmp, size_t n, uint32_t bound)
{
	uint32_t *src = v, *dst = tmp;
	for (unsigned shift = 0; shift < 32 && (bound - 1) >> shift; shift += 8) {
		size_t cnt[257] = { 0 };
		for (size_t i = 0; i < n; i++)
			cnt[((src[i] >> shift) & 0xff) + 1]++;
		for (int b = 0; b < 256; b++)
			cnt[b + 1] += cnt[b];
		for (size_t i = 0; i < n; i++)
			dst[cnt[(src[i] >> shift) & 0xff]++] = src[i];
		uint32_t *t = src; src = dst; dst = t;
	}
	if (src != v)
		memcpy(v, src, n * sizeof(*v));
}

/* The tree-mode rows' trees (tree_chains_build): built in a pool of their
 * own by the second worker of cc_children_caller, its own chain buffer */
typedef struct tchains_job {
	hist *h;
	struct cc_pool cp;
	uint64_t min_keep;
	uint32_t *chain;
	size_t cap_chain;
	/* built beside perf's collapse, before the totals: a row's Children
	 * read from the pass's sums, no row merged (else built again after);
	 * done set when built */
	bool early;
	atomic_int done;
} tchains_job;
static int tree_chains_build(tchains_job *j, struct cc_pool *cp);
static bool tree_chains_stale(const hist *h, uint64_t min_keep);

/* A callchain frame's row for the context c, read only (two workers build
 * trees at once): the row cache as the pass left it, else the hash table.
 * -2: no such row (the pass made every one; the caller then builds the
 * trees on one thread). */
static int64_t chain_row_ro(hist *h, const ctx *c, uint32_t loc)
{
	const struct hist_priv *pv = h->priv;
	if (loc < pv->nr_slot_of) {
		const uint64_t *slot = &pv->row_cache[2 * (size_t)pv->slot_of[loc]];
		for (int k = 0; k < 2; k++)
			if (slot[k] >> 32 == (uint64_t)c->s->comm + 1)
				return (int64_t)(uint32_t)slot[k];
	}
	uint64_t w[HIST_MAX_KEYS * KW_PER_KEY];
	key_words(h, c, loc, true, w);
	size_t j;
	uint32_t id = row_probe(pv, w, pf_hash_bytes(w, pv->kw * 8, 0x5eed), &j);
	return id == PF_NONE ? -2 : (int64_t)id;
}

/* One worker's scratch over the stack trie's nodes: per context the
 * marked nodes (sorted), and per node (cc_nd) the context's stamp, its
 * first marked child and next marked sibling (children in index order) and
 * the first sample ending there, set when the node is marked: one cache
 * line holds a node's four, which the marking and the walk touch together */
typedef struct cc_nd { uint32_t vis, first, next, end; } cc_nd;

typedef struct cc_scratch {
	cc_nd *nd;
	uint32_t *marked, *mtmp, *onpath;
	uint32_t *dnode, *dchild, *dintro, *path;
	size_t *seg;
	cc_rec *recs;
	size_t cap_recs;
	size_t nrows;                  /* onpath's rows */
	uint32_t stamp;
} cc_scratch;

static void cc_scratch_free(cc_scratch *sc)
{
	free(sc->nd); free(sc->marked); free(sc->mtmp); free(sc->onpath);
	free(sc->dnode); free(sc->dchild); free(sc->dintro); free(sc->path); free(sc->seg);
	free(sc->recs);
	*sc = (cc_scratch){ 0 };
}

/* A kept scratch for a hist with more rows than when it was made (onpath
 * is zero between contexts) */
static int cc_scratch_rows(cc_scratch *sc, const hist *h)
{
	if (h->n + 1 <= sc->nrows)
		return 0;
	uint32_t *o = realloc(sc->onpath, (h->n + 1) * sizeof(uint32_t));
	if (!o)
		return -1;
	memset(o + sc->nrows, 0, (h->n + 1 - sc->nrows) * sizeof(uint32_t));
	sc->onpath = o;
	sc->nrows = h->n + 1;
	return 0;
}

static int cc_scratch_init(cc_scratch *sc, const hist *h, size_t maxd)
{
	size_t N = h->prof->nr_nodes;
	*sc = (cc_scratch){ 0 };
	sc->nd = calloc(N ? N : 1, sizeof(cc_nd));
	sc->marked = malloc((N ? N : 1) * sizeof(uint32_t));
	sc->mtmp = malloc((N ? N : 1) * sizeof(uint32_t));
	sc->onpath = calloc(h->n + 1, sizeof(uint32_t));
	sc->nrows = h->n + 1;
	sc->dnode = malloc(maxd * sizeof(uint32_t));
	sc->dchild = malloc(maxd * sizeof(uint32_t));
	sc->dintro = malloc(maxd * sizeof(uint32_t));
	sc->path = malloc(maxd * sizeof(uint32_t));
	sc->seg = malloc((maxd + 1) * sizeof(size_t));
	return sc->nd && sc->marked && sc->mtmp &&
	       sc->onpath && sc->dnode && sc->dchild && sc->dintro && sc->path && sc->seg ? 0 : -1;
}

/* The callchain trees' work: the sample contexts (order[gstart[g],
 * gstart[g+1]) is context g), heaviest first, taken by the workers from
 * either end (each context's rows are its own: the context keys are row
 * keys), each into its own pool; a worker with tj builds the tree-mode
 * rows' trees first. */
typedef struct cc_work {
	hist *h;
	const uint32_t *order, *self_of, *parent_of;
	uint32_t *end_next;            /* per order position: written by its context's worker */
	const size_t *gstart;
	const uint32_t *gorder;        /* contexts, heaviest first */
	size_t ngroups;
	/* contexts taken: from the heavy end (low 32 bits) and from the
	 * light end (high 32 bits); a worker that finds them meeting stops */
	atomic_ullong taken;
	uint64_t min_keep;
	size_t maxd;
	bool ro;                       /* two workers: read-only row lookups */
	const uint8_t *tree_row;       /* with ro: the rows of tree-mode chains (another pool's) */
	/* begun early, while the pass's other thread still runs (cc_begin):
	 * no context is taken once *pause is set, and the rows met are
	 * marked in touched (tree_row is known only after that thread) */
	const atomic_int *pause;
	uint8_t *touched;
} cc_work;

typedef struct cc_worker {
	cc_work *w;
	struct cc_pool *cp;
	tchains_job *tj;               /* run first, or NULL */
	bool light;                    /* takes contexts from the light end */
	int rc;                        /* 0, -1 out of memory, -2 a row not found (ro) */
	proff_error err;
	cc_scratch *sc;                /* kept across runs (NULL: the run's own) */
	struct cc_pool *tj_cp;         /* tj's trees' pool (NULL: cp) */
} cc_worker;

/* One context's trees: mark its samples' paths, then one DFS of the
 * marked trie from the root */
static int cc_context(cc_worker *wk, cc_scratch *sc, size_t g0, size_t g1)
{
	cc_work *w = wk->w;
	hist *h = w->h;
	struct cc_pool *cp = wk->cp;
	const pf_profile *p = h->prof;
	const uint32_t *order = w->order, *self_of = w->self_of;
	uint32_t *end_next = w->end_next;
	cc_nd *nd = sc->nd;
	uint32_t *marked = sc->marked, *onpath = sc->onpath;
	uint32_t *dnode = sc->dnode, *dchild = sc->dchild, *dintro = sc->dintro, *path = sc->path;
	size_t *seg = sc->seg;
	const struct hot_ent *hot = h->priv->hot;   /* the rows' Children (period_acc) */
	const uint8_t *suspect = h->priv->suspect;
	uint64_t min_keep = w->min_keep;
	uint32_t stamp = ++sc->stamp;
	/* mark this context's paths and the samples ending at each node */
	size_t nm = 0;
	nd[0].first = nd[0].end = PF_NONE;
	for (size_t k = g0; k < g1; k++) {
		const pf_sample *s = &p->samples[order[k]];
		for (uint32_t n = s->stack; n && nd[n].vis != stamp; n = p->nodes[n].parent) {
			nd[n].vis = stamp;
			nd[n].first = nd[n].end = PF_NONE;
			marked[nm++] = n;
		}
		end_next[k] = nd[s->stack].end;
		nd[s->stack].end = (uint32_t)k;
	}
	/* the marked children of every marked node, in index order (the DFS
	 * visits siblings in the trie's order; a full child list would be
	 * scanned once per context: the root's holds every outermost frame
	 * of the file) */
	radix_sort_u32(marked, sc->mtmp, nm, (uint32_t)p->nr_nodes);
	for (size_t i = nm; i-- > 0;) {
		uint32_t n = marked[i], par = p->nodes[n].parent;
		nd[n].next = nd[par].first;
		nd[par].first = n;
	}
	ctx c = { &p->samples[order[g0]], w->parent_of[order[g0]], 0, 0, '.' };
	const uint8_t *gw = suspect ? group_row(h->priv, c.s->comm) : NULL;
	/* iterative DFS from the root over marked nodes */
	size_t d = 0;
	dnode[0] = 0;
	dchild[0] = nd[0].first;
	dintro[0] = PF_NONE;
	seg[0] = 0;
	seg[1] = 0;
	for (;;) {
		uint32_t ch = dchild[d];
		/* a node without callchain is no frame of any chain */
		while (ch != PF_NONE && pf_node_nochain(p, ch))
			ch = nd[ch].next;
		if (ch == PF_NONE) {
			if (dintro[d] != PF_NONE)
				onpath[dintro[d]] = 0;
			if (d == 0)
				break;
			d--;
			continue;
		}
		dchild[d] = nd[ch].next;
		uint32_t loc = p->nodes[ch].loc;
		/* tree mode's rows got their chains in the first pass */
		bool tree = suspect && tree_loc(suspect, gw, loc);
		int64_t eid = tree ? 0 : w->ro ? chain_row_ro(h, &c, loc) : chain_entry(h, &c, loc, &wk->err);
		if (eid < 0)
			return (int)eid == -2 ? -2 : -1;
		if (!tree && w->tree_row && w->tree_row[eid])
			return -2;     /* a row with tree-mode chains too: one pool, alone */
		if (!tree && w->touched)
			w->touched[eid] = 1;
		/* level d+1: advance every active row, maybe start one */
		size_t from = seg[d], to = seg[d + 1], nrec = to - from;
		if (PF_GROW(sc->recs, sc->cap_recs, to + nrec + 1) < 0)
			return -1;
		cc_rec *recs = sc->recs;
		size_t wr = to;
		for (size_t r = from; r < to; r++) {
			uint32_t nc = cc_child(cp, recs[r].cur, loc);
			if (nc == PF_NONE)
				return -1;
			recs[wr++] = (cc_rec){ recs[r].entry, nc };
		}
		dintro[d + 1] = PF_NONE;
		if (tree) {
			/* no record */
		} else if (!onpath[eid] && hot[eid].acc < min_keep) {
			/* a row too small to show a chain: no tree */
			onpath[eid] = (uint32_t)d + 1;
			dintro[d + 1] = (uint32_t)eid;
		} else if (!onpath[eid]) {
			uint32_t root = cc_root_of(cp, &h->entries[eid], (uint32_t)eid);
			uint32_t nc = root == PF_NONE ? PF_NONE : cc_child(cp, root, loc);
			if (nc == PF_NONE)
				return -1;
			recs[wr++] = (cc_rec){ (uint32_t)eid, nc };
			onpath[eid] = (uint32_t)d + 1;
			dintro[d + 1] = (uint32_t)eid;
		}
		path[d] = loc;
		/* samples ending here */
		for (uint32_t k = nd[ch].end; k != PF_NONE; k = end_next[k]) {
			const pf_sample *s = &p->samples[order[k]];
			/* a tree-mode leaf's Self row is a tree-mode one, none of
			 * the rows here (and written by the pass's other thread
			 * while an early run reads) */
			uint32_t self = tree ? PF_NONE : self_of[order[k]];
			for (size_t r = to; r < wr; r++) {
				if (recs[r].entry == self)
					continue;
				cp->nodes[recs[r].cur].hit += s->period;
				cp->nodes[recs[r].cur].count += s->count;
			}
			if (!tree && w->tree_row && w->tree_row[self])
				return -2;
			if (!tree && w->touched)
				w->touched[self] = 1;
			if (!tree && hot[self].acc >= min_keep &&
			    cc_add(h, cp, self, path, d + 1, s->period, s->count) < 0)
				return -1;
		}
		d++;
		dnode[d] = ch;
		dchild[d] = nd[ch].first;
		seg[d] = to;
		seg[d + 1] = wr;
	}
	return 0;
}

static void *cc_worker_run(void *arg)
{
	cc_worker *wk = arg;
	cc_work *w = wk->w;
	if (wk->tj) {
		int trc = tree_chains_build(wk->tj, wk->tj_cp ? wk->tj_cp : wk->cp);
		if (wk->tj->early)
			atomic_store_explicit(&wk->tj->done, 1, memory_order_release);
		if (trc < 0) {
			wk->rc = -1;
			return NULL;
		}
	}
	cc_scratch own, *sc = wk->sc ? wk->sc : &own;
	if (w->ngroups && (wk->sc && sc->nd ? cc_scratch_rows(sc, w->h) : cc_scratch_init(sc, w->h, w->maxd)) < 0) {
		cc_scratch_free(sc);
		wk->rc = -1;
		return NULL;
	}
	for (size_t ng = w->ngroups; ng;) {
		if (w->pause && atomic_load_explicit(w->pause, memory_order_acquire))
			break;
		unsigned long long v = atomic_fetch_add_explicit(&w->taken, wk->light ? 1ULL << 32 : 1, memory_order_relaxed);
		size_t lo = (size_t)(v & 0xffffffffu), hi = (size_t)(v >> 32);
		if (lo + hi >= ng)
			break;
		uint32_t x = w->gorder[wk->light ? ng - 1 - hi : lo];
		if ((wk->rc = cc_context(wk, sc, w->gstart[x], w->gstart[x + 1])) < 0)
			break;
	}
	if (w->ngroups && !wk->sc)
		cc_scratch_free(sc);
	return NULL;
}

/* Children mode, caller order, no --max-stack: every row's callchain
 * tree (see above). cc_begin sets the work up and, with two (several
 * contexts), starts the second worker on the contexts at once, into a pool
 * of its own: the rows perf's collapse merges are tree-mode rows, whose
 * trees wait for it (tj), so the collapse runs beside. cc_end builds the
 * tree-mode rows' trees into tj's pool, then takes contexts into the
 * hist's pool (without two, the tree-mode trees on another thread beside),
 * and appends the second worker's pool; the caller appends tj's.
 *
 * Begun early (tree mode on two threads, cc_begin's pause): this thread
 * takes the heaviest contexts while the pass's other one finishes (their
 * rows and sums are this one's: no row met in a context is a tree-mode
 * one), and cc_resume, once that thread is joined, checks the rows met
 * against the tree-mode chains' and starts the second worker. */
typedef struct cc_run {
	hist *h;
	const uint32_t *idx, *self_of, *parent_of;
	size_t nidx;
	uint64_t min_keep;
	tchains_job *tj;
	bool two, alone, ro, threaded;
	uint32_t *order, *end_next, *gorder;
	size_t *gstart;
	uint64_t *gweight;
	uint8_t *tree_row;
	struct cc_pool p2;             /* the second worker's (two) */
	cc_work w;
	cc_worker one, other;
	pthread_t th;
	cc_scratch sc;                 /* this thread's (one's), kept from an early run */
	uint8_t *touched;              /* begun early: the rows met then */
	size_t ntouched;
} cc_run;

static void cc_run_free(cc_run *r)
{
	cc_scratch_free(&r->sc);
	free(r->touched);
	r->touched = NULL;
	free(r->order); free(r->end_next); free(r->gstart); free(r->gorder); free(r->gweight); free(r->tree_row);
	r->order = r->end_next = r->gorder = NULL;
	r->gstart = NULL;
	r->gweight = NULL;
	r->tree_row = NULL;
}

/* The rows of the tree-mode chains, flagged in r->tree_row */
static int cc_tree_rows(cc_run *r)
{
	const struct hist_priv *pv = r->h->priv;
	if (!(r->tree_row = calloc(r->h->n + 1, 1)))
		return -1;
	for (size_t i = 0; i < pv->nr_tchains; i++)
		r->tree_row[pv->tchains[i].row] = 1;
	return 0;
}

static int cc_begin(cc_run *r, hist *h, const uint32_t *idx, size_t nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, uint64_t min_keep, tchains_job *tj, bool two, bool alone,
		    const atomic_int *pause)
{
	const pf_profile *p = h->prof;
	struct hist_priv *pv = h->priv;
	*r = (cc_run){ .h = h, .idx = idx, .self_of = self_of, .parent_of = parent_of, .nidx = nidx,
		       .min_keep = min_keep, .tj = tj, .alone = alone };
	r->p2.prof = p;
	r->end_next = malloc((nidx + 1) * sizeof(uint32_t));
	r->order = malloc((nidx + 1) * sizeof(uint32_t));
	r->gstart = malloc((nidx + 2) * sizeof(size_t));
	if (!r->end_next || !r->order || !r->gstart)
		return -1;
	size_t maxd = 1;
	for (size_t i = 0; i < p->nr_nodes; i++)
		if (p->nodes[i].depth + 2 > maxd)
			maxd = p->nodes[i].depth + 2;
	ctx_order(h, parent_of, idx, nidx, r->order);
	size_t ng = 0;
	for (size_t g0 = 0; g0 < nidx; ng++) {
		r->gstart[ng] = g0;
		size_t g1 = g0 + 1;
		while (g1 < nidx && same_ctx(h, parent_of, r->order[g0], r->order[g1]))
			g1++;
		g0 = g1;
	}
	r->gstart[ng] = nidx;
	/* two workers where the contexts are several, the trees start empty
	 * (a fallback starts them again) and a row lookup reads only */
	r->two = two && !alone && ng >= 2 && pv->cc.n == 0 && !h->opts.diff_mode && !keys_need(h, HKN_SRCLINE);
	/* beside another thread, row lookups read only (the tree-mode trees
	 * read the rows); one that fails starts over alone (begun early, the
	 * tree-mode chains are still being added: cc_resume) */
	size_t ntc = pause ? 0 : pv->nr_tchains;
	r->ro = (r->two || ntc) && !alone && pv->cc.n == 0;
	r->gorder = malloc((ng + 1) * sizeof(uint32_t));
	r->gweight = malloc((ng + 1) * sizeof(uint64_t));
	if (!r->gorder || !r->gweight)
		return -1;
	/* heaviest first (the frames its samples bring), in order on one */
	for (size_t g = 0; g < ng; g++) {
		r->gorder[g] = (uint32_t)g;
		r->gweight[g] = 0;
		for (size_t k = r->gstart[g]; r->two && k < r->gstart[g + 1]; k++)
			r->gweight[g] += p->nodes[p->samples[r->order[k]].stack].depth;
	}
	if (r->two)
		for (size_t a = 1; a < ng; a++)
			for (size_t b = a; b > 0 && r->gweight[r->gorder[b - 1]] < r->gweight[r->gorder[b]]; b--) {
				uint32_t t = r->gorder[b - 1];
				r->gorder[b - 1] = r->gorder[b];
				r->gorder[b] = t;
			}
	/* the rows of the tree-mode chains: a tree of both kinds of rows is
	 * built in one pool (alone), the tree-mode chains after (begun
	 * early: known in cc_resume; the rows met till then are marked) */
	if (r->ro && ntc && cc_tree_rows(r) < 0)
		return -1;
	if (pause && r->two && r->ro) {
		if (!(r->touched = calloc(h->n + 1, 1)))
			return -1;
		r->ntouched = h->n + 1;
	}
	r->w = (cc_work){ h, r->order, self_of, parent_of, r->end_next, r->gstart, r->gorder, ng, 0, min_keep, maxd,
			  r->ro, r->tree_row, pause, r->touched };
	atomic_init(&r->w.taken, 0);
	/* with two, the second worker (started first) from the heavy end,
	 * this one (later, after the collapse) from the light end */
	r->one = (cc_worker){ &r->w, &pv->cc, NULL, r->two, 0, { 0 }, &r->sc, NULL };
	r->other = (cc_worker){ &r->w, &r->p2, NULL, false, 0, { 0 }, NULL, NULL };
	if (r->two && !pause)
		r->threaded = pthread_create(&r->th, NULL, cc_worker_run, &r->other) == 0;
	if (r->touched) {
		/* the heaviest contexts here until *pause */
		cc_worker early = { &r->w, &pv->cc, NULL, false, 0, { 0 }, &r->sc, NULL };
		cc_worker_run(&early);
		if (early.rc < 0) {
			/* no more contexts: cc_end reports it (-1) or starts
			 * over alone (-2) */
			r->one.rc = early.rc;
			r->one.err = early.err;
			atomic_store(&r->w.taken, (unsigned long long)ng);
		}
	}
	return 0;
}

/* A run begun early, the pass's other thread joined: the tree-mode
 * chains' rows known, checked against the rows met (one of both kinds:
 * all again, alone, in cc_end), and the second worker started. */
static int cc_resume(cc_run *r)
{
	hist *h = r->h;
	struct hist_priv *pv = h->priv;
	r->w.pause = NULL;
	r->w.touched = NULL;
	if (!r->ro && pv->nr_tchains && !r->alone && pv->cc.n == 0)
		r->ro = r->w.ro = true;
	if (r->ro && pv->nr_tchains) {
		if (cc_tree_rows(r) < 0)
			return -1;
		for (size_t i = 0; i < pv->nr_tchains && r->touched && r->one.rc == 0; i++) {
			uint32_t row = pv->tchains[i].row;
			if (row < r->ntouched && r->touched[row]) {
				r->one.rc = -2;
				atomic_store(&r->w.taken, (unsigned long long)r->w.ngroups);
			}
		}
		r->w.tree_row = r->tree_row;
	}
	/* the second worker builds the tree-mode rows' trees first, beside
	 * perf's collapse on this thread (tj->early) */
	if (r->two && pv->nr_tchains && r->one.rc == 0) {
		r->tj->early = true;
		r->other.tj = r->tj;
		r->other.tj_cp = &r->tj->cp;
	}
	if (r->two && !r->threaded)
		r->threaded = pthread_create(&r->th, NULL, cc_worker_run, &r->other) == 0;
	if (r->two && !r->threaded && r->other.tj) {
		r->tj->early = false;       /* no thread: after the collapse, here */
		r->other.tj = NULL;
	}
	return 0;
}

static void cc_pool_reset(hist *h, struct cc_pool *cp)
{
	for (size_t r = 0; r < cp->nr_roots; r++)
		h->entries[cp->roots[r]].cc_root = PF_NONE;
	cc_pool_free(cp, h->prof);
}

/* Stop a begun run on a failure elsewhere: its worker takes no more
 * contexts and is joined; what it made is freed. */
static void cc_abort(cc_run *r)
{
	atomic_store(&r->w.taken, (unsigned long long)r->w.ngroups);
	if (r->threaded)
		pthread_join(r->th, NULL);
	cc_pool_free(&r->p2, r->h->prof);
	cc_run_free(r);
}

static int cc_end(cc_run *r, proff_error *err)
{
	hist *h = r->h;
	struct hist_priv *pv = h->priv;
	tchains_job *tj = r->tj;
	int rc = 0;
	/* the tree-mode trees: first here beside the second worker, or on
	 * another thread beside this one's contexts; alone: after them, in
	 * the hist's pool */
	cc_work wt = { h, r->order, r->self_of, r->parent_of, r->end_next, r->gstart, r->gorder, 0, 0, r->min_keep, 0,
		       false, NULL, NULL, NULL };
	atomic_init(&wt.taken, 0);
	cc_worker tw = { &wt, r->alone ? &pv->cc : &tj->cp, tj, false, 0, { 0 }, NULL, NULL };
	pthread_t th;
	bool beside = !r->two && r->ro && pv->nr_tchains && pthread_create(&th, NULL, cc_worker_run, &tw) == 0;
	if (r->two && pv->nr_tchains && !r->other.tj)
		cc_worker_run(&tw);
	cc_worker_run(&r->one);
	if (r->threaded)
		pthread_join(r->th, NULL);
	else if (r->two)
		cc_worker_run(&r->other);      /* no thread: what is left */
	if (beside)
		pthread_join(th, NULL);
	else if (!r->two && pv->nr_tchains)
		cc_worker_run(&tw);
	if (r->other.tj) {
		/* built before the collapse: again, if the rows it merged
		 * change which chains pass the threshold */
		tj->early = false;
		if (h->merged_into && r->other.rc == 0 && tree_chains_stale(h, tj->min_keep)) {
			cc_pool_reset(h, &tj->cp);
			cc_worker_run(&tw);
		}
	}
	if (r->one.rc == -2 || r->other.rc == -2) {
		/* a row not found read only: all trees again, on one thread */
		cc_pool_reset(h, &pv->cc);
		cc_pool_reset(h, &r->p2);
		cc_pool_reset(h, &tj->cp);
		const uint32_t *idx = r->idx, *self_of = r->self_of, *parent_of = r->parent_of;
		size_t nidx = r->nidx;
		uint64_t min_keep = r->min_keep;
		cc_run_free(r);
		if (cc_begin(r, h, idx, nidx, self_of, parent_of, min_keep, tj, false, true, NULL) < 0) {
			cc_run_free(r);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		return cc_end(r, err);
	}
	if (r->one.rc == -1 && r->one.err.code) {
		*err = r->one.err;
		rc = r->one.err.code;
	} else if (r->one.rc < 0 || r->other.rc < 0 || tw.rc < 0 || cc_pool_append(h, &pv->cc, &r->p2) < 0)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	cc_pool_free(&r->p2, h->prof);
	cc_run_free(r);
	return rc;
}

/* ---- tree mode ------------------------------------------------------------------ */

/* perf finds a row by walking its input tree with the sort keys'
 * comparators, and two of them are not transitive: `sym` compares
 * unresolved rows by address alone (resolved ones by dso first), and
 * subtracts addresses and symbol bounds as int64 — so on rows whose
 * values lie 2^63 or more apart (garbage frames of a broken frame-pointer
 * chain: text, pointers, small and negative numbers) the walk can miss an
 * existing row of the same key, and perf makes another one: the report
 * then shows two rows of one key, each with part of its samples. Tree mode
 * repeats that: perf's input tree is grown with the rows, and the rows of
 * the locations that can meet it are found by perf's walk (tree_entry).
 * Those locations: with a dso key before `sym`, every location of a dso
 * (by the name the key compares) whose unresolved addresses — Self rows
 * show the map address, callchain rows the ip — or symbol starts or ends
 * span 2^63 or more; without, every location, when that span wraps over
 * the whole profile or unresolved locations of two dsos exist. *susp is
 * NULL when no location is. */
/* a location's values in its row's key: unresolved, both the map address
 * (Self rows) and the ip (callchain rows) */
static void span_loc(sym_span *sp, const pf_profile *p, const pf_loc *l)
{
	if (l->sym == PF_NONE) {
		span_add(sp, true, l->addr, 0, 0);
		span_add(sp, true, l->ip, 0, 0);
	} else {
		span_add(sp, false, 0, p->syms[l->sym].start, p->syms[l->sym].end);
	}
}

static int dso_name_cmp(const void *a, const void *b, void *arg)
{
	const uint32_t *name = arg;
	uint32_t x = name[*(const uint32_t *)a], y = name[*(const uint32_t *)b];
	return x < y ? -1 : x > y;
}

/* With only comm and dso keys before sym (perf's default comm,dso,sym),
 * a group is a (comm, dso): the spans of the suspect dsos' locations per
 * comm, from the samples' stacks (a node's path to the root is added once
 * per comm in a row: vis). Sets pv->gwrap, cidx_of, ncol; *any: whether
 * some group wraps. */
static int group_spans(hist *h, const uint8_t *susp, size_t ncol, bool *any)
{
	struct hist_priv *pv = h->priv;
	const pf_profile *p = h->prof;
	*any = false;
	uint32_t *cidx = malloc((p->strs.n ? p->strs.n : 1) * sizeof(uint32_t));
	uint32_t *vis = calloc(p->nr_nodes ? p->nr_nodes : 1, sizeof(uint32_t));
	sym_span *gs = NULL;
	uint8_t *gw = NULL;
	if (!cidx || !vis)
		goto nomem;
	size_t nc = 0;
	memset(cidx, 0xff, (p->strs.n ? p->strs.n : 1) * sizeof(uint32_t));
	for (size_t si = 0; si < p->nr_samples; si++)
		if (cidx[p->samples[si].comm] == UINT32_MAX)
			cidx[p->samples[si].comm] = (uint32_t)nc++;
	size_t ng = nc * ncol;
	gs = malloc((ng ? ng : 1) * sizeof(*gs));
	gw = malloc(ng ? ng : 1);
	if (!gs || !gw)
		goto nomem;
	for (size_t i = 0; i < ng; i++)
		gs[i] = (sym_span)SYM_SPAN_EMPTY;
	for (size_t si = 0; si < p->nr_samples; si++) {
		uint32_t c = cidx[p->samples[si].comm];
		sym_span *row = gs + (size_t)c * ncol;
		/* without children only the samples' own locations make rows */
		uint32_t top = h->opts.children ? 0 : p->nodes[p->samples[si].stack].parent;
		for (uint32_t n = p->samples[si].stack; n && n != top && vis[n] != c + 1; n = p->nodes[n].parent) {
			vis[n] = c + 1;
			uint32_t loc = n == p->samples[si].stack ? pf_leaf_loc(p, n) : p->nodes[n].loc;
			if (susp[loc])
				span_loc(&row[susp[loc] - 1], p, &p->locs[loc]);
		}
	}
	for (size_t i = 0; i < ng; i++)
		*any |= (gw[i] = span_wraps(&gs[i]));
	free(gs);
	free(vis);
	pv->gwrap = gw;
	pv->cidx_of = cidx;
	pv->ncol = ncol;
	return 0;
nomem:
	free(cidx);
	free(vis);
	free(gs);
	free(gw);
	return -1;
}

static int suspect_locs(hist *h, uint8_t **susp)
{
	*susp = NULL;
	const pf_profile *p = h->prof;
	int sym_at = -1, dso_at = -1;
	bool only_cd = true;       /* nothing but comm and dso keys before sym */
	for (int i = h->nkeys; i-- > 0;) {
		if (h->keys[i] == HK_SYM)
			sym_at = i;
		if (h->keys[i] == HK_DSO)
			dso_at = i;
	}
	for (int i = 0; i < sym_at; i++)
		only_cd &= h->keys[i] == HK_COMM || h->keys[i] == HK_DSO;
	if (h->opts.diff_mode || sym_at < 0 || !p->nr_locs)
		return 0;
	size_t nd = p->nr_dsos;
	uint8_t *dsus = calloc(nd + 1, 1);      /* per dso, and [nd]: no dso: 0, or 1 + column */
	sym_span *sp = malloc((nd + 1) * sizeof(*sp));
	uint32_t *name = malloc((nd + 1) * sizeof(uint32_t)), *ord = malloc((nd + 1) * sizeof(uint32_t));
	int rc = 0;
	size_t ncol = 0;
	uint8_t *used = NULL;
	if (!dsus || !sp || !name || !ord) {
		rc = -1;
		goto out;
	}
	for (size_t d = 0; d <= nd; d++) {
		sp[d] = (sym_span)SYM_SPAN_EMPTY;
		name[d] = d < nd ? (h->opts.verbose ? p->dsos[d].long_name : p->dsos[d].short_name) : UINT32_MAX;
		ord[d] = (uint32_t)d;
	}
	bool all = false;
	/* the locations that make rows: without children, the samples' own */
	if (!h->opts.children) {
		if (!(used = calloc(p->nr_locs, 1))) {
			rc = -1;
			goto out;
		}
		for (size_t si = 0; si < p->nr_samples; si++)
			used[pf_leaf_loc(p, p->samples[si].stack)] = 1;
	}
	if (dso_at >= 0 && dso_at < sym_at) {
		for (size_t i = 0; i < p->nr_locs; i++) {
			const pf_loc *l = &p->locs[i];
			if (!used || used[i])
				span_loc(&sp[l->dso == PF_NONE ? nd : l->dso], p, l);
		}
		/* dsos of one name are one group (one column) */
		qsort_r(ord, nd + 1, sizeof(uint32_t), dso_name_cmp, name);
		for (size_t a = 0, b; a <= nd; a = b) {
			sym_span g = SYM_SPAN_EMPTY;
			for (b = a; b <= nd && name[ord[b]] == name[ord[a]]; b++)
				span_merge(&g, &sp[ord[b]]);
			if (span_wraps(&g)) {
				ncol++;
				for (size_t k = a; k < b; k++)
					dsus[ord[k]] = (uint8_t)(ncol < 255 ? ncol : 255);
			}
		}
	} else {
		sym_span g = SYM_SPAN_EMPTY;
		bool seen = false;
		uint32_t first = 0;     /* the dso name of the first unresolved location */
		for (size_t i = 0; i < p->nr_locs; i++) {
			const pf_loc *l = &p->locs[i];
			if (used && !used[i])
				continue;
			span_loc(&g, p, l);
			if (l->sym == PF_NONE) {
				uint32_t nm = name[l->dso == PF_NONE ? nd : l->dso];
				if (!seen)
					first = nm;
				else if (nm != first)
					all = true;
				seen = true;
			}
		}
		all |= span_wraps(&g);
	}
	if (!all && !ncol)
		goto out;
	*susp = malloc(p->nr_locs);
	if (!*susp) {
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < p->nr_locs; i++)
		(*susp)[i] = all ? 1 : dsus[p->locs[i].dso == PF_NONE ? nd : p->locs[i].dso];
	/* per (comm, dso) when the keys before sym are comm and dso only */
	if (!all && only_cd && sym_at > dso_at && ncol < 255) {
		for (int i = 0; i < sym_at; i++)
			if (h->keys[i] == HK_COMM) {
				bool any;
				if (group_spans(h, *susp, ncol, &any) < 0) {
					rc = -1;
				} else if (!any) {
					free(*susp);    /* no group wraps: no tree mode */
					*susp = NULL;
				}
				break;
			}
	}
out:
	if (rc < 0) {
		free(*susp);
		*susp = NULL;
	}
	free(used);
	free(dsus);
	free(sp);
	free(name);
	free(ord);
	return rc;
}

/* A sample's callchain as perf's cursor sees it: at most max_stack
 * entries, counted from the leaf in callee order and from the root in
 * caller order; in *chain (grown as needed). Sets *nk; NULL with *nk 0 when
 * there is no chain, NULL with *nk set on allocation failure. */
static uint32_t *sample_cursor(const hist *h, const pf_sample *s, uint32_t **chain, size_t *cap_chain,
			       size_t *nk)
{
	const pf_profile *prof = h->prof;
	const hist_opts *opts = &h->opts;
	size_t full = prof->nodes[s->stack].depth;
	*nk = 0;
	if (PF_GROW(*chain, *cap_chain, 2 * full + 2) < 0) {
		*nk = 1;
		return NULL;
	}
	uint32_t *ch = *chain;
	size_t n = 0;
	if (!opts->no_chain && !pf_node_nochain(prof, s->stack))
		for (uint32_t nd = s->stack; nd; nd = prof->nodes[nd].parent)
			ch[n++] = prof->nodes[nd].loc;     /* leaf first */
	size_t lo = 0, hi = n;
	if (opts->max_stack > 0 && n > (size_t)opts->max_stack) {
		if (opts->caller_order)
			lo = n - (size_t)opts->max_stack;
		else
			hi = (size_t)opts->max_stack;
	}
	uint32_t *cursor = ch + n;
	for (size_t k = 0; k < hi - lo; k++)
		cursor[k] = opts->caller_order ? ch[hi - 1 - k] : ch[lo + k];
	*nk = hi - lo;
	return cursor;
}

/* The first pass over samples from..to-1 (of the hist's event): Self rows
 * and sums, and in children mode every row met on the stacks with its
 * Children sum; self_of and parent_of, when given, get each sample's Self
 * row and parent. Two of these may run at once on two hists (hist_build,
 * merge_pass): they only read the profile. */
typedef struct pass_state {
	hist *h;
	size_t from, to;
	const loc_bits *lb;      /* children mode */
	bool want_cc, fast_cc, late_cc, filters;
	uint32_t *self_of, *parent_of;
	uint32_t *chain;         /* the cursor's buffer */
	size_t cap_chain;
	uint8_t *whole;          /* tree mode over raw samples: sample_whole() */
	bool raw;                /* tree mode over raw samples, on one thread */
	struct tree_pipe *tp;    /* tree mode on two threads: this is A */
} pass_state;

static int tree_chain_add(struct hist_priv *pv, size_t si, uint32_t row, uint32_t k, const pf_sample *s)
{
	if (PF_GROW(pv->tchains, pv->cap_tchains, pv->nr_tchains + 1) < 0)
		return -1;
	pv->tchains[pv->nr_tchains++] = (struct tree_chain){ (uint32_t)si, row, k, (uint32_t)s->count, s->period };
	return 0;
}

/* Tree mode, per aggregated sample: 1 when no location of its stack is a
 * tree-mode one (then it is passed whole, once), else 0; NULL out of
 * memory. A node's parent comes before it. */
static uint8_t *sample_whole(const hist *h)
{
	const pf_profile *p = h->prof;
	const struct hist_priv *pv = h->priv;
	if (!pv->gwrap || pv->ncol <= 32) {
		/* A location's column does not depend on the comm, only whether
		 * it wraps does: each node's columns on its path in one pass
		 * over the nodes (parents first), then per sample against its
		 * comm's wrapping columns (without gwrap every suspect location
		 * is a tree-mode one: one column). No walk per comm. */
		uint32_t *cols = malloc((p->nr_nodes ? p->nr_nodes : 1) * sizeof(uint32_t));
		uint8_t *w = malloc(p->nr_samples ? p->nr_samples : 1);
		if (!cols || !w) {
			free(cols);
			free(w);
			return NULL;
		}
		cols[0] = 0;
		for (size_t n = 1; n < p->nr_nodes; n++) {
			const pf_node *x = &p->nodes[n];
			uint8_t v = pv->suspect[x->loc];
			cols[n] = cols[x->parent] | (v ? (pv->gwrap ? 1u << (v - 1) : 1u) : 0);
		}
		uint32_t cm = UINT32_MAX, wm = pv->gwrap ? 0 : 1;   /* the last comm's wrapping columns */
		for (size_t si = 0; si < p->nr_samples; si++) {
			const pf_sample *s = &p->samples[si];
			if (pv->gwrap && s->comm != cm) {
				const uint8_t *gw = group_row(pv, s->comm);
				wm = 0;
				for (size_t c = 0; c < pv->ncol; c++)
					wm |= (uint32_t)(gw[c] != 0) << c;
				cm = s->comm;
			}
			w[si] = !(cols[s->stack] & wm);
		}
		free(cols);
		return w;
	}
	/* per node, for the comm that last reached it (vis: its column + 1),
	 * whether its path to the root holds a tree-mode location */
	uint32_t *vis = calloc(p->nr_nodes ? p->nr_nodes : 1, sizeof(uint32_t));
	uint8_t *res = malloc(p->nr_nodes ? p->nr_nodes : 1);
	uint32_t *path = NULL;
	size_t cap = 0;
	uint8_t *w = malloc(p->nr_samples ? p->nr_samples : 1);
	if (!vis || !res || !w)
		goto nomem;
	for (size_t si = 0; si < p->nr_samples; si++) {
		const pf_sample *s = &p->samples[si];
		uint32_t tag = pv->gwrap ? pv->cidx_of[s->comm] + 1 : 1;
		const uint8_t *gw = group_row(pv, s->comm);
		size_t np = 0;
		uint32_t n = s->stack;
		for (; n && vis[n] != tag; n = p->nodes[n].parent) {
			if (PF_GROW(path, cap, np + 1) < 0)
				goto nomem;
			path[np++] = n;
		}
		uint8_t r = n ? res[n] : 0;
		while (np--) {
			uint32_t x = path[np];
			r |= tree_loc(pv->suspect, gw, p->nodes[x].loc);
			vis[x] = tag;
			res[x] = r;
		}
		w[si] = !(s->stack ? res[s->stack] : 0);
	}
	free(vis);
	free(res);
	free(path);
	return w;
nomem:
	free(vis);
	free(res);
	free(path);
	free(w);
	return NULL;
}

/* Raw sample q of aggregate agg as a sample of its own */
static void raw_sample(const pf_profile *prof, size_t it, const pf_sample *agg, pf_sample *one)
{
	const pf_seq *q = &prof->seq[it];
	*one = *agg;
	one->thread = q->thread;
	one->pid = prof->threads[q->thread].pid;
	one->tid = prof->threads[q->thread].tid;
	one->period = pf_seq_period(prof, it);
	one->count = 1;
}

/* The level of aggregated sample si's own location (its leaf) */
static char sample_level(const hist *h, const loc_bits *lb, size_t si, uint32_t leaf_loc)
{
	const pf_profile *prof = h->prof;
	if (prof->nr_level_notes)
		return pf_sample_level(prof, si);
	return lb ? (char)(lb[leaf_loc].level_self & 0x7f) : prof->locs[leaf_loc].level;
}

/* A sample's context: its parent, whether its thread is filtered out, the
 * level of its ip */
static ctx sample_ctx(hist *h, const pf_sample *s, char level)
{
	const hist_opts *opts = &h->opts;
	ctx c = { s, sample_parent(h, s), 0, 0, level };
	if (opts->comms.n && !pf_strlist_has(&opts->comms, pf_str(h->prof, s->comm)))
		c.thread_filtered |= HF_THREAD;
	if (opts->nr_pids && !u32_in(opts->pids, opts->nr_pids, s->pid))
		c.thread_filtered |= HF_THREAD;
	if (opts->nr_tids && !u32_in(opts->tids, opts->nr_tids, s->tid))
		c.thread_filtered |= HF_THREAD;
	c.sample_filtered = entry_filter(h, &c, pf_leaf_loc(h->prof, s->stack));
	return c;
}

static int tframe_push(struct hist_priv *pv, struct tree_frame tf)
{
	size_t j = pv->nr_tframes, c = j >> TF_SHIFT;
	if (!pv->tframes && !(pv->tframes = calloc(TF_MAX_CHUNKS, sizeof(*pv->tframes))))
		return -1;
	if (c >= TF_MAX_CHUNKS || (!pv->tframes[c] && !(pv->tframes[c] = malloc(TF_CHUNK * sizeof(**pv->tframes)))))
		return -1;
	pv->tframes[c][j & (TF_CHUNK - 1)] = tf;
	pv->nr_tframes++;
	return 0;
}

/* what only the pass reads of tree mode (freed once it is done: the memory
 * serves the rows' callchain trees and order) */
static void tree_pass_free(struct hist_priv *pv)
{
	free(pv->taggs);
	pv->taggs = NULL;
	if (pv->tframes)
		for (size_t c = 0; c < TF_MAX_CHUNKS && pv->tframes[c]; c++)
			free(pv->tframes[c]);
	free(pv->tframes);
	pv->tframes = NULL;
	pv->nr_tframes = 0;
}

static inline const struct tree_frame *tframe_at(const struct hist_priv *pv, size_t j)
{
	return &pv->tframes[j >> TF_SHIFT][j & (TF_CHUNK - 1)];
}

/* Tree mode: a raw sample of an aggregate passed before — its tree-mode
 * rows only, from the frames kept then (struct tree_agg) */
static int again_sample(pass_state *ps, size_t it, size_t si, const pf_sample *s, ctx *c, bool self_tree,
			proff_error *err)
{
	hist *h = ps->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	const struct tree_agg *ta = &pv->taggs[si];
	bool children = h->opts.children, want_cc = ps->want_cc, fast_cc = ps->fast_cc;
	uint32_t stamp = (uint32_t)it, leaf_loc = pf_leaf_loc(prof, s->stack);
	size_t nk = ta->nk;
	uint32_t *cursor = NULL;
	if (want_cc && !fast_cc && !ps->late_cc && (self_tree || (children && ta->cnt))) {
		cursor = sample_cursor(h, s, &ps->chain, &ps->cap_chain, &nk);
		if (!cursor && nk)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (self_tree) {
		int64_t self = tree_entry(h, c, leaf_loc, false, ta->self_key, err);
		if (self < 0)
			return (int)self;
		hist_entry *e = &h->entries[self];
		if (ps->self_of)
			ps->self_of[si] = (uint32_t)self;
		e->filtered &= entry_filter(h, c, leaf_loc);
		e->period += s->period;
		e->nr_events += s->count;
		if (!children) {
			e->period_acc += s->period;
			if (cursor && nk && cc_add(h, &pv->cc, (uint32_t)self, cursor, nk, s->period, s->count) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			return 0;
		}
		pv->hot[ta->self_key].seen = stamp;
		struct hot_ent *he = &pv->hot[self];
		he->seen = stamp;
		he->acc += s->period;
		if (nk > he->depth)
			he->depth = (uint32_t)nk;
		if (cursor && nk && cc_add(h, &pv->cc, (uint32_t)self, cursor, nk, s->period, s->count) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (want_cc && fast_cc && nk && tree_chain_add(pv, si, (uint32_t)self, 0, s) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (!children)
		return 0;
	for (uint32_t j = ta->off; j < ta->off + ta->cnt; j++) {
		const struct tree_frame *tf = tframe_at(pv, j);
		struct hot_ent *he = &pv->hot[tf->key];
		if (he->seen == stamp)
			continue;
		he->seen = stamp;
		c->self_level = tf->level;
		int64_t id = tree_entry(h, c, tf->loc, true, tf->key, err);
		if (id < 0)
			return (int)id;
		he = &pv->hot[id];
		he->seen = stamp;
		he->acc += s->period;
		if (nk - tf->k > he->depth)
			he->depth = (uint32_t)(nk - tf->k);
		if (ps->filters)
			h->entries[id].filtered &= c->sample_filtered;
		if (cursor && cc_add(h, &pv->cc, (uint32_t)id, cursor + tf->k, nk - tf->k, s->period, s->count) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (want_cc && fast_cc && tree_chain_add(pv, si, (uint32_t)id, tf->k, s) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	return 0;
}

/* One step of the pass: aggregated sample si — or, in tree mode over raw
 * samples, raw sample `it` of it; with the pass on two threads (pipe) the
 * aggregate's rows that are no tree-mode ones, and its tree-mode frames
 * kept for the other thread. */
static int pass_one(pass_state *ps, size_t it, size_t si, proff_error *err)
{
	hist *h = ps->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	const hist_opts *opts = &h->opts;
	const loc_bits *lb = ps->lb;
	uint32_t evsel = h->evsel, *self_of = ps->self_of, *parent_of = ps->parent_of;
	bool want_cc = ps->want_cc, fast_cc = ps->fast_cc, late_cc = ps->late_cc, filters = ps->filters;
	const uint8_t *suspect = pv->suspect;   /* tree mode */
	bool raw = ps->raw, pipe = ps->tp != NULL;
	uint8_t *whole = ps->whole;   /* 1 whole, 2 whole and passed, 0 raw, 3 raw and met */
	pf_sample one;
	const pf_sample *s = &prof->samples[si], *agg = s;
	if (s->evsel != evsel)
		return 0;
	/* a raw sample of an aggregate met before: its rows that are no
	 * tree-mode ones got the aggregate's sums the first time */
	bool again = false;
	if (raw && whole[si] == 1) {
		whole[si] = 2;
	} else if (raw) {
		again = whole[si] == 3;
		whole[si] = 3;
		raw_sample(prof, it, s, &one);
		s = &one;
	}
	uint32_t leaf_loc = pf_leaf_loc(prof, s->stack);
	ctx c = sample_ctx(h, s, sample_level(h, lb, si, leaf_loc));
	const uint8_t *gw = suspect ? group_row(pv, s->comm) : NULL;
	bool self_tree = suspect && tree_loc(suspect, gw, leaf_loc);
	if (again && pv->taggs) {
		int rc = again_sample(ps, it, si, s, &c, self_tree, err);
		if (rc < 0)
			return rc;
		return 0;
	}
	/* the first raw sample of an aggregate passed raw: its tree-mode
	 * frames are kept for the next */
	struct tree_agg *ta = ((raw && !again) || pipe) && pv->taggs ? &pv->taggs[si] : NULL;
	/* what a row that is no tree-mode one gets of this sample: the
	 * aggregate's sums, once (nothing on a raw sample met again) */
	const pf_sample *ns = again ? NULL : agg;
	int64_t self = 0;
	uint32_t self_key = PF_NONE;
	hist_entry *e = NULL;
	if (self_tree || ns) {
		self = self_entry(h, &c, leaf_loc,
				  lb ? (lb[leaf_loc].level_self & 0x80) != 0 : self_key_is_chain_key(&prof->locs[leaf_loc]),
				  err);
		if (self < 0)
			return (int)self;
		/* the key's first row (once-per-sample marks), and the row
		 * perf's walk finds (tree mode) */
		self_key = (uint32_t)self;
		if (self_tree && !pipe && (self = tree_entry(h, &c, leaf_loc, false, self_key, err)) < 0)
			return (int)self;
		e = &h->entries[self];
	}
	/* the Self row's sums, NULL: none (on two threads the other one adds
	 * a tree-mode row's) */
	const pf_sample *es = self_tree ? (pipe ? NULL : s) : ns;
	if (self_of && e && !(pipe && self_tree))
		self_of[si] = (uint32_t)self;
	if (ta)
		*ta = (struct tree_agg){ (uint32_t)pv->nr_tframes, 0, 0, self_key, (uint32_t)h->n, 0, c.self_level,
					 self_tree };
	if (parent_of)
		parent_of[si] = c.parent;
	/* an entry is shown if any of its samples passes the filters */
	uint8_t f = entry_filter(h, &c, leaf_loc);
	if (es) {
		e->filtered &= f;
		if (prof->exact && si < prof->cap_exact) {
			const pf_exact *x = &prof->exact[si];
			if (!e->nr_events || x->min < e->ex_min)
				e->ex_min = x->min;
			if (x->max > e->ex_max)
				e->ex_max = x->max;
			e->ex_incl += x->incl;
		}
		e->period += es->period;
		e->nr_events += es->count;
	}
	if (ns) {
		h->total_period += ns->period;
		h->nr_samples += ns->count;
		if (!f) {
			h->total_non_filtered_period += ns->period;
			h->nr_non_filtered_samples += ns->count;
		}
	}
	if (!opts->children && (!want_cc || late_cc)) {
		if (es)
			e->period_acc += es->period;
		return 0;
	}
	size_t nk = 0;
	uint32_t *cursor = sample_cursor(h, s, &ps->chain, &ps->cap_chain, &nk);
	if (!cursor && nk)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (ta)
		ta->nk = (uint32_t)nk;
	if (!opts->children) {
		if (es) {
			e->period_acc += es->period;
			if (want_cc && nk && cc_add(h, &pv->cc, (uint32_t)self, cursor, nk, es->period, es->count) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		return 0;
	}
	/* children: the self row, then every distinct row met along the
	 * cursor (first occurrence wins, so recursion counts once) */
	uint32_t stamp = (uint32_t)it;
	struct hot_ent *he;
	if (es) {
		pv->hot[self_key].seen = stamp;
		he = &pv->hot[self];
		he->seen = stamp;
		he->acc += es->period;
		if (nk > he->depth)
			he->depth = (uint32_t)nk;
		/* the callchain-tree pass leaves tree-mode rows to this one */
		if (want_cc && !fast_cc && nk && cc_add(h, &pv->cc, (uint32_t)self, cursor, nk, es->period, es->count) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (want_cc && fast_cc && self_tree && nk && tree_chain_add(pv, si, (uint32_t)self, 0, s) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	for (size_t k = 0; k < nk; k++) {
		uint32_t loc = cursor[k];
		/* perf reuses one addr_location along the cursor: a frame
		 * without a map keeps the level of the last frame with one */
		if (lb[loc].map_level)
			c.self_level = (char)lb[loc].map_level;
		bool tree = suspect && tree_loc(suspect, gw, loc);
		if (!tree && !ns)
			continue;
		const pf_sample *rs = tree ? s : ns;     /* the row's sums */
		int64_t id = chain_entry(h, &c, loc, err);
		if (id < 0)
			return (int)id;
		if (tree && ta) {
			if (tframe_push(pv, (struct tree_frame){ (uint32_t)k, loc, (uint32_t)id, (uint32_t)h->n, c.self_level }) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			ta->cnt++;
		}
		if (tree && pipe)
			continue;       /* the other thread's */
		he = &pv->hot[id];
		if (he->seen == stamp)
			continue;
		he->seen = stamp;
		if (tree) {
			if ((id = tree_entry(h, &c, loc, true, (uint32_t)id, err)) < 0)
				return (int)id;
			he = &pv->hot[id];
			he->seen = stamp;
		}
		he->acc += rs->period;
		if (nk - k > he->depth)
			he->depth = (uint32_t)(nk - k);
		if (filters)
			h->entries[id].filtered &= c.sample_filtered;
		if (want_cc && !fast_cc &&
		    cc_add(h, &pv->cc, (uint32_t)id, cursor + k, nk - k, rs->period, rs->count) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (want_cc && fast_cc && tree && tree_chain_add(pv, si, (uint32_t)id, (uint32_t)k, s) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	return 0;
}

/* ---- tree mode on two threads ----------------------------------------------------
 *
 * perf's walks need the raw samples in reading order, one by one, and its
 * input tree grown with every row as it is made; the rows that are no
 * tree-mode ones need neither. So one thread (A, pass_one over the
 * aggregates in the order of their first raw samples) makes every row
 * through the hash table, sums the rows that are no tree-mode ones and
 * keeps each aggregate's tree-mode frames, with the number of rows made
 * up to each; the other (B, pipe_b) goes over the raw samples, grows the
 * input tree with A's rows (staged keys) up to the point of each walk,
 * walks, and sums the tree-mode rows apart, making the rows a walk misses
 * as references (HIST_ITREE_DUP) numbered after A's rows at the end
 * (pipe_merge). A publishes how many aggregates it has done; B waits for
 * the aggregate it meets first. Neither writes what the other reads. */
/* B's per row of A's: its sums and, when it is its key's row, the key's
 * last walk — what a raw sample touches of a key, in one place */
struct tree_sum {
	uint64_t acc, period, count;
	uint32_t depth, seen;
	uint32_t wrow, wver;       /* the last walk's row and its group's version then */
	uint32_t grp;              /* the row's group in the input tree (PF_NONE: not read yet) */
	uint8_t filt;
};
#define TREE_SUM_NEW ((struct tree_sum){ 0, 0, 0, 0, UINT32_MAX, 0, 0, PF_NONE, 0xff })

struct tree_dup {
	hist_entry e;
	uint64_t w[HIST_MAX_KEYS * KW_PER_KEY];
	struct tree_sum sum;
};

struct tree_pipe {
	_Atomic size_t done;       /* aggregates A has passed, in first-raw order */
	_Atomic int stop;          /* a thread failed */
	atomic_int b_done;         /* B has ended (cc_begin's pause) */
	pass_state *ps;
	uint8_t *met_a, *met_b;    /* per aggregate: met by A; B's state (pipe_b_run) */
	uint8_t *whole;            /* B's sample_whole() */
	/* B's */
	struct tree_sum *sum;      /* per row of A's */
	size_t cap_sum;
	struct tree_dup *dups;
	size_t nr_dups, cap_dups;
	/* the chains B adds (tree_chain), one per aggregate, frame and row:
	 * per aggregate (its Self frame) and per kept frame the last one */
	uint32_t *tc_self, *tc_frame;
	size_t cap_tc_frame;
	proff_error err;
	int rc;
};

static void tree_pipe_free(struct tree_pipe *tp)
{
	free(tp->met_a);
	free(tp->met_b);
	free(tp->whole);
	free(tp->sum);
	free(tp->dups);
	free(tp->tc_self);
	free(tp->tc_frame);
	free(tp);
}

/* B waits until A has passed its first pos aggregates (pos >= 1); false:
 * A failed */
static bool pipe_wait(struct tree_pipe *tp, size_t pos)
{
	return pf_wait_past(&tp->done, pos - 1, &tp->stop) != 0;
}

static struct tree_sum *pipe_sum(struct tree_pipe *tp, uint32_t ref)
{
	if (ref & HIST_ITREE_DUP)
		return &tp->dups[ref & ~HIST_ITREE_DUP].sum;
	if (ref >= tp->cap_sum) {
		size_t old = tp->cap_sum;
		if (PF_GROW(tp->sum, tp->cap_sum, (size_t)ref + 1) < 0)
			return NULL;
		for (size_t i = old; i < tp->cap_sum; i++)
			tp->sum[i] = TREE_SUM_NEW;
	}
	return &tp->sum[ref];
}

/* A tree-mode row's chain on B: the raw samples of one aggregate that add
 * one frame's chain to one row add it once, with their sums, where the
 * first did (the callchain tree a chain makes does not depend on when the
 * same chain is added again) */
static int pipe_chain(struct tree_pipe *tp, uint32_t *last, size_t si, uint32_t row, uint32_t k, const pf_sample *s)
{
	struct hist_priv *pv = tp->ps->h->priv;
	if (*last != PF_NONE && pv->tchains[*last].row == row) {
		pv->tchains[*last].period += s->period;
		pv->tchains[*last].count += s->count;
		return 0;
	}
	*last = (uint32_t)pv->nr_tchains;
	return tree_chain_add(pv, si, row, k, s);
}

static int pipe_room_tc(struct tree_pipe *tp, size_t j)
{
	if (j < tp->cap_tc_frame)
		return 0;
	size_t old = tp->cap_tc_frame;
	if (PF_GROW(tp->tc_frame, tp->cap_tc_frame, j + 1) < 0)
		return -1;
	memset(tp->tc_frame + old, 0xff, (tp->cap_tc_frame - old) * sizeof(uint32_t));
	return 0;
}

/* tree_entry on B: the input tree holds A's rows before upto first */
static int64_t pipe_entry(struct tree_pipe *tp, const ctx *c, uint32_t loc, bool chain, uint32_t key, size_t upto,
			  proff_error *err)
{
	hist *h = tp->ps->h;
	hist_itree *it = h->priv->itree;
	if (hist_itree_add_staged(it, h, upto) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	struct tree_sum *k = pipe_sum(tp, key);
	if (!k)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (k->grp == PF_NONE)
		k->grp = hist_itree_group_of(it, key);
	uint32_t ver = hist_itree_group_version(it, k->grp);
	if (!k->wver && (k->wver = hist_itree_leaf_version(it, key)))
		k->wrow = key;
	if (k->wver == ver)
		return k->wrow;
	hist_entry probe;
	row_fill(h, c, loc, chain, &probe);
	int64_t id = hist_itree_find(it, h, &probe);
	if (id >= 0) {
		k->wrow = (uint32_t)id;
		k->wver = ver;
		return id;
	}
	if (id < -1 || tp->nr_dups >= HIST_ITREE_DUP - 1 || PF_GROW(tp->dups, tp->cap_dups, tp->nr_dups + 1) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	struct tree_dup *d = &tp->dups[tp->nr_dups];
	d->e = probe;
	key_words(h, c, loc, chain, d->w);
	d->sum = TREE_SUM_NEW;
	uint32_t ref = HIST_ITREE_DUP | (uint32_t)tp->nr_dups;
	if (hist_itree_add_entry(it, h, &probe, ref) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	tp->nr_dups++;
	return ref;
}

static int pipe_b_run(struct tree_pipe *tp, proff_error *err)
{
	pass_state *ps = tp->ps;
	hist *h = ps->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	const uint8_t *whole = tp->whole = sample_whole(h);
	if (!whole)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	/* per aggregate, one byte: B_MET once met, B_SKIP when B has nothing
	 * to do for its raw samples (passed whole by A, or another event's);
	 * about half the raw samples are skipped, touching this byte only */
	enum { B_MET = 1, B_SKIP = 2 };
	uint8_t *st = tp->met_b;
	bool one_event = prof->nr_events == 1;    /* (then no sample need be read) */
	for (size_t si = 0; si < prof->nr_samples; si++)
		st[si] = whole[si] || (!one_event && prof->samples[si].evsel != h->evsel) ? B_SKIP : 0;
	bool chains = ps->want_cc && ps->fast_cc;
	/* pos: aggregates met; lim: A's rows made before the raw sample at
	 * hand (from the last aggregate met first: pend, when not read yet) */
	size_t pos = 0, pend_pos = 0, lim = 0, end = prof->nr_seq;
	uint32_t pend = PF_NONE;
	for (size_t it = 0; it < end; it++) {
		const pf_seq *q = &prof->seq[it];
		size_t si = q->sample;
		if (it + 8 < end) {
			uint32_t ahead = prof->seq[it + 8].sample;
			if (!(st[ahead] & B_SKIP)) {
				__builtin_prefetch(&prof->samples[ahead]);
				__builtin_prefetch(&pv->taggs[ahead]);
			}
		}
		uint8_t sb = st[si];
		bool first = !(sb & B_MET);
		if (first) {
			st[si] = sb | B_MET;
			pos++;
		}
		if (sb & B_SKIP) {
			if (first) {
				pend_pos = pos;
				pend = (uint32_t)si;
			}
			continue;
		}
		const pf_sample *agg = &prof->samples[si];
		if (first) {
			if (!pipe_wait(tp, pos))
				return 0;       /* A failed: its error is the one */
			pend = PF_NONE;
		} else if (pend != PF_NONE) {
			if (!pipe_wait(tp, pend_pos))
				return 0;
			lim = pv->taggs[pend].rows_after;
			pend = PF_NONE;
		}
		const struct tree_agg *ta = &pv->taggs[si];
		pf_sample one;
		raw_sample(prof, it, agg, &one);
		const pf_sample *s = &one;
		/* (what the first raw sample's pass found of the aggregate) */
		ctx c = sample_ctx(h, s, ta->level);
		uint32_t stamp = (uint32_t)it, nk = ta->nk;
		if (ta->self_tree) {
			uint32_t leaf_loc = pf_leaf_loc(prof, s->stack);
			int64_t ref = pipe_entry(tp, &c, leaf_loc, false, ta->self_key, first ? ta->self_rows : lim, err);
			if (ref < 0)
				return (int)ref;
			struct tree_sum *ks = pipe_sum(tp, ta->self_key);
			if (!ks)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			struct tree_sum *ts = ref == ta->self_key ? ks : pipe_sum(tp, (uint32_t)ref);
			if (ps->self_of)
				ps->self_of[si] = (uint32_t)ref;
			ts->filt &= entry_filter(h, &c, leaf_loc);
			ts->period += s->period;
			ts->count += s->count;
			ks->seen = ts->seen = stamp;
			ts->acc += s->period;
			if (nk > ts->depth)
				ts->depth = nk;
			if (chains && nk && pipe_chain(tp, &tp->tc_self[si], si, (uint32_t)ref, 0, s) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		for (uint32_t j = ta->off; j < ta->off + ta->cnt; j++) {
			const struct tree_frame *tf = tframe_at(pv, j);
			struct tree_sum *ks = pipe_sum(tp, tf->key);
			if (!ks)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			if (ks->seen == stamp)
				continue;
			ks->seen = stamp;
			c.self_level = tf->level;
			int64_t ref = pipe_entry(tp, &c, tf->loc, true, tf->key, first ? tf->nrows : lim, err);
			if (ref < 0)
				return (int)ref;
			struct tree_sum *ts = ref == tf->key ? ks : pipe_sum(tp, (uint32_t)ref);
			ts->seen = stamp;
			ts->acc += s->period;
			if (nk - tf->k > ts->depth)
				ts->depth = nk - tf->k;
			if (ps->filters)
				ts->filt &= c.sample_filtered;
			if (chains && (pipe_room_tc(tp, j) < 0 ||
				       pipe_chain(tp, &tp->tc_frame[j], si, (uint32_t)ref, tf->k, s) < 0))
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		if (first)
			lim = ta->rows_after;
	}
	return 0;
}

static void *pipe_b(void *arg)
{
	struct tree_pipe *tp = arg;
	tp->rc = pipe_b_run(tp, &tp->err);
	if (tp->rc < 0)
		atomic_store_explicit(&tp->stop, 1, memory_order_relaxed);
	atomic_store_explicit(&tp->b_done, 1, memory_order_release);
	return NULL;
}

/* A: the aggregates in the order of their first raw samples */
static int pipe_a(pass_state *ps, proff_error *err)
{
	struct tree_pipe *tp = ps->tp;
	hist *h = ps->h;
	const pf_profile *prof = h->prof;
	struct tree_agg *taggs = h->priv->taggs;
	uint8_t *met = tp->met_a;
	size_t pos = 0;
	for (size_t it = 0; it < prof->nr_seq; it++) {
		size_t si = prof->seq[it].sample;
		if (met[si])
			continue;
		met[si] = 1;
		int rc = pass_one(ps, it, si, err);
		if (rc < 0) {
			atomic_store_explicit(&tp->stop, 1, memory_order_relaxed);
			return rc;
		}
		taggs[si].rows_after = (uint32_t)h->n;
		atomic_store_explicit(&tp->done, ++pos, memory_order_release);
		if (atomic_load_explicit(&tp->stop, memory_order_relaxed))
			break;      /* B failed: its error is the one */
	}
	return 0;
}

static void sum_apply(hist *h, uint32_t r, const struct tree_sum *t)
{
	hist_entry *e = &h->entries[r];
	struct hot_ent *he = &h->priv->hot[r];
	e->period += t->period;
	e->nr_events += t->count;
	e->filtered &= t->filt;
	he->acc += t->acc;
	if (t->depth > he->depth)
		he->depth = t->depth;
}

/* After both threads: the rest of A's rows into the input tree, the rows
 * B's walks made after A's, B's sums into the rows, and B's references
 * to its rows resolved. */
static int pipe_merge(hist *h, struct tree_pipe *tp, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	if (hist_itree_add_staged(pv->itree, h, h->n) < 0)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	uint32_t base = (uint32_t)h->n;
	for (size_t d = 0; d < tp->nr_dups; d++) {
		if (reserve_rows(h, h->n + 1) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		memcpy(pv->keyw + h->n * pv->kw, tp->dups[d].w, pv->kw * 8);
		pv->hot[h->n] = (struct hot_ent){ 0, UINT32_MAX, 0 };
		h->entries[h->n] = tp->dups[d].e;
		row_publish(h);
	}
	hist_itree_resolve_dups(pv->itree, base);
	for (size_t r = 0; r < tp->cap_sum && r < base; r++)
		sum_apply(h, (uint32_t)r, &tp->sum[r]);
	for (size_t d = 0; d < tp->nr_dups; d++)
		sum_apply(h, base + (uint32_t)d, &tp->dups[d].sum);
	if (tp->nr_dups) {
		uint32_t *self_of = tp->ps->self_of;
		for (size_t si = 0; self_of && si < prof->nr_samples; si++)
			if (self_of[si] != PF_NONE && (self_of[si] & HIST_ITREE_DUP))
				self_of[si] = base + (self_of[si] & ~HIST_ITREE_DUP);
		for (size_t i = 0; i < pv->nr_tchains; i++)
			if (pv->tchains[i].row & HIST_ITREE_DUP)
				pv->tchains[i].row = base + (pv->tchains[i].row & ~HIST_ITREE_DUP);
	}
	return 0;
}

/* The pass over ps->from..ps->to (or, in tree mode, over the raw samples;
 * with ps->tp, A's part of the pass on two threads) */
static int sample_pass(pass_state *ps, proff_error *err)
{
	if (ps->tp)
		return pipe_a(ps, err);
	hist *h = ps->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	bool raw = ps->raw;
	const uint8_t *whole = ps->whole;
	for (size_t it = raw ? 0 : ps->from, end = raw ? prof->nr_seq : ps->to; it < end; it++) {
		size_t si = raw ? prof->seq[it].sample : it;
		if (raw && it + 8 < end) {
			/* the raw samples' aggregates are met at random: fetched ahead */
			uint32_t ahead = prof->seq[it + 8].sample;
			__builtin_prefetch(&whole[ahead]);
			__builtin_prefetch(&prof->samples[ahead]);
			if (pv->taggs)
				__builtin_prefetch(&pv->taggs[ahead]);
		}
		if (raw && whole[si] == 2)
			continue;       /* passed whole at its first raw sample (its state is
					   read before the sample: most raw samples stop here) */
		int rc = pass_one(ps, it, si, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

typedef struct pass_job {
	pass_state ps;
	proff_error err;
	int rc;
} pass_job;

static void *pass_thread(void *arg)
{
	pass_job *j = arg;
	j->rc = sample_pass(&j->ps, &j->err);
	return NULL;
}

/* The rows of h2, made by the pass over the samples after h's, into h: a
 * row h has gets h2's sums, a new one is appended, in h2's order. That is
 * the order and the creating sample one pass over all samples gives: a row
 * first met after h's samples was first met where h2 met it. map[r]: h's
 * row of h2's row r. */
static int merge_pass(hist *h, hist *h2, uint32_t *map, proff_error *err)
{
	struct hist_priv *pv = h->priv, *pv2 = h2->priv;
	id_table *t = &pv->tab;
	/* the table's room for every row at once: the slots are then fetched
	 * a few rows ahead (the lookups are cache misses, one after another) */
	while ((t->len + h2->n + 1) * 2 > t->cap)
		if (id_table_grow(t) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	enum { AHEAD = 8 };
	uint64_t ahead[AHEAD];
	for (size_t r = 0; r < h2->n && r < AHEAD; r++) {
		ahead[r] = pf_hash_bytes(pv2->keyw + r * pv2->kw, pv->kw * 8, 0x5eed);
		__builtin_prefetch(&t->s[ahead[r] & (t->cap - 1)]);
	}
	for (size_t r = 0; r < h2->n; r++) {
		const uint64_t *w = pv2->keyw + r * pv2->kw;
		uint64_t hash = ahead[r % AHEAD];
		if (r + AHEAD < h2->n) {
			uint64_t hn = pf_hash_bytes(pv2->keyw + (r + AHEAD) * pv2->kw, pv->kw * 8, 0x5eed);
			ahead[r % AHEAD] = hn;
			__builtin_prefetch(&t->s[hn & (t->cap - 1)]);
		}
		size_t j;
		uint32_t id = row_probe(pv, w, hash, &j);
		const hist_entry *e2 = &h2->entries[r];
		const struct hot_ent *x2 = &pv2->hot[r];
		map[r] = id;
		if (id == PF_NONE) {
			if (row_new(h, w, hash, j) < 0)
				return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			pv->hot[h->n] = (struct hot_ent){ x2->acc, UINT32_MAX, x2->depth };
			h->entries[h->n] = *e2;
			map[r] = (uint32_t)row_publish(h);
			continue;
		}
		hist_entry *e = &h->entries[id];
		if (e2->nr_events && (!e->nr_events || e2->ex_min < e->ex_min))
			e->ex_min = e2->ex_min;
		if (e2->ex_max > e->ex_max)
			e->ex_max = e2->ex_max;
		e->ex_incl += e2->ex_incl;
		e->period += e2->period;
		e->nr_events += e2->nr_events;
		e->filtered &= e2->filtered;
		pv->hot[id].acc += x2->acc;
		if (x2->depth > pv->hot[id].depth)
			pv->hot[id].depth = x2->depth;
	}
	/* the row cache as the last samples left it (the callchain trees'
	 * pass looks up through it) */
	if (pv->row_cache && pv2->row_cache)
		for (size_t j = 0; j < 2 * pv2->nr_slots; j++)
			if (pv2->row_cache[j] >> 32)
				pv->row_cache[j] = (pv2->row_cache[j] >> 32) << 32 | map[(uint32_t)pv2->row_cache[j]];
	h->total_period += h2->total_period;
	h->nr_samples += h2->nr_samples;
	h->total_non_filtered_period += h2->total_non_filtered_period;
	h->nr_non_filtered_samples += h2->nr_non_filtered_samples;
	return 0;
}

/* Where the samples split for the two passes: after 55 % of the frames to
 * walk (counted on every 32nd sample). The second pass starts a hist of
 * its own (cold tables, fresh pages) and its rows are merged after: the two
 * end together there (50 % and 60 % measured slower). */
static size_t split_point(const pf_profile *p)
{
	uint64_t total = 0, acc = 0;
	for (size_t si = 0; si < p->nr_samples; si += 32)
		total += p->nodes[p->samples[si].stack].depth + 1;
	size_t si = 0;
	for (; si < p->nr_samples && 20 * acc < 11 * total; si += 32)
		acc += p->nodes[p->samples[si].stack].depth + 1;
	return si < p->nr_samples ? si : p->nr_samples / 2;
}

/* From this many samples a children pass runs on two threads */
#define SPLIT_PASS_MIN 20000

/* label:NAME's name as a string id of the profile (looked up, not
 * interned: the second pass's thread makes its hist here too, beside
 * readers of the strings; a name the profile lacks has no samples) */
static int label_setup(hist *h, proff_error *err)
{
	h->label_key = PF_NONE;
	const char *prev = NULL;
	size_t prev_n = 0;
	for (const char *s = h->opts.sort; keys_need(h, HKN_LABEL) && (s = strstr(s, "label:"));) {
		if (s != h->opts.sort && s[-1] != ',') {
			s += 6;
			continue;
		}
		s += 6;
		size_t n = strcspn(s, ",");
		int64_t id = pf_strtab_find(&h->prof->strs, s, n);
		if (id < 0)
			id = PF_NONE - 1;      /* no sample has it */
		if (prev && (prev_n != n || memcmp(prev, s, n)))
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "--sort: one label key at a time (label:%.*s and label:%.*s)",
					     (int)prev_n, prev, (int)n, s);
		h->label_key = (uint32_t)id;
		prev = s;
		prev_n = n;
	}
	return 0;
}

/* A hist with its sort keys, room for rows and the row cache: all but the
 * rows (hist_build's, and the second pass thread's). */
static int hist_new(pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
{
	*out = NULL;
	hist *h = calloc(1, sizeof(*h));
	struct hist_priv *pv = calloc(1, sizeof(*pv));
	if (!h || !pv) {
		free(h);
		free(pv);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	h->prof = prof;
	h->evsel = evsel;
	h->opts = *opts;
	h->priv = pv;
	pv->cc.prof = prof;
	int rc = hist_parse_sort(opts->sort, h->keys, HIST_MAX_KEYS, err);
	if (rc < 0) {
		hist_free(h);
		return rc;
	}
	h->nkeys = rc;
	pv->kw = (size_t)h->nkeys * KW_PER_KEY;
	if ((rc = label_setup(h, err)) < 0) {
		hist_free(h);
		return rc;
	}
	if (keys_need(h, HKN_CALLCHAIN) && opts->parent_regex) {
		if (regcomp(&pv->parent_re, opts->parent_regex, REG_EXTENDED | REG_NOSUB) != 0) {
			hist_free(h);
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "invalid --parent regex '%s'", opts->parent_regex);
		}
		pv->has_parent_re = true;
	}

	/* rows mostly number fewer than the locations: room for that many at
	 * once (growing by doubling copies every row again; untouched room
	 * costs no memory) */
	if (reserve_rows(h, prof->nr_locs + 1) < 0) {
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}

	/* the row cache: keys of the location and the comm only, rows not
	 * rewritten when found again (diff mode's lowest address) */
	bool loc_keyed = !opts->diff_mode;
	for (int i = 0; i < h->nkeys; i++)
		if (!(hist_keys[h->keys[i]].needs & HKN_LOC) && hist_keys[h->keys[i]].needs != HKN_COMM)
			loc_keyed = false;
	if (loc_keyed && opts->children && prof->nr_locs) {
		bool by_sym = !keys_need(h, HKN_SUBSYM);
		size_t nslots = prof->nr_locs + (by_sym ? prof->nr_syms : 0);
		pv->row_cache = calloc(2 * nslots, sizeof(uint64_t));
		pv->slot_of = malloc(prof->nr_locs * sizeof(uint32_t));
		if (!pv->row_cache || !pv->slot_of || nslots > UINT32_MAX) {
			hist_free(h);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		for (size_t i = 0; i < prof->nr_locs; i++) {
			uint32_t y = prof->locs[i].sym;
			pv->slot_of[i] = by_sym && y != PF_NONE ? y : (uint32_t)((by_sym ? prof->nr_syms : 0) + i);
		}
		pv->nr_slot_of = prof->nr_locs;
		pv->nr_slots = nslots;
	}
	*out = h;
	return 0;
}

/* Tree mode: src's callchain tree into dst's, chain by chain (each node
 * that ends chains, with its period), in the order the chains were added;
 * before cc_finish. perf's collapse merges the trees of the rows it
 * merges so. */
static int cc_merge(hist *h, struct cc_pool *cp, uint32_t dst, uint32_t src)
{
	uint32_t root = h->entries[src].cc_root;
	if (root == PF_NONE)
		return 0;
	size_t cap = 64, cap_path = 64, sp = 0;
	uint32_t *stack = malloc(cap * sizeof(uint32_t)), *path = malloc(cap_path * sizeof(uint32_t));
	if (!stack || !path)
		goto nomem;
	/* depth-first; a node's children are prepended until cc_finish, so
	 * pushing the list in its order pops the first added first */
	for (uint32_t cur = root;;) {
		for (uint32_t k = cp->nodes[cur].first_child; k != PF_NONE; k = cp->nodes[k].next_sibling) {
			if (sp == cap) {
				uint32_t *a = realloc(stack, 2 * cap * sizeof(uint32_t));
				if (!a)
					goto nomem;
				stack = a;
				cap *= 2;
			}
			stack[sp++] = k;
		}
		if (!sp)
			break;
		cur = stack[--sp];
		size_t depth = 0;
		for (uint32_t x = cur; x != root; x = cp->nodes[x].parent)
			depth++;
		if (depth > cap_path) {
			uint32_t *np = realloc(path, depth * sizeof(uint32_t));
			if (!np)
				goto nomem;
			path = np;
			cap_path = depth;
		}
		size_t d = depth;
		for (uint32_t x = cur; x != root; x = cp->nodes[x].parent)
			path[--d] = cp->nodes[x].loc;
		uint64_t hit = cp->nodes[cur].hit, count = cp->nodes[cur].count;
		if (hit && cc_add(h, cp, dst, path, depth, hit, count) < 0)
			goto nomem;
	}
	free(stack);
	free(path);
	return 0;
nomem:
	free(stack);
	free(path);
	return -1;
}

/* Tree mode: rows perf's collapse merges into an equal row (two rows of one
 * key that its collapse tree, fed in the input tree's order, finds equal):
 * their sums and chains into that row; perf's order leaves them out. */
static int collapse_merge(hist *h, bool trees, const atomic_int *wait, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	uint32_t *into = malloc((h->n ? h->n : 1) * sizeof(uint32_t));
	uint32_t *seq = malloc((h->n ? h->n : 1) * sizeof(uint32_t));
	size_t nseq = 0;
	int merged = into && seq ? hist_itree_collapse(pv->itree, h, into, seq, &nseq) : -1;
	if (merged < 0) {
		free(into);
		free(seq);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	h->collapsed = seq;
	h->nr_collapsed = nseq;
	if (!merged) {
		free(into);
		return 0;
	}
	/* the tree-mode trees built beside read the sums merged here: done
	 * first (and built again, cc_end) */
	while (wait && !atomic_load_explicit(wait, memory_order_acquire))
		sched_yield();
	for (size_t r = 0; r < h->n; r++) {
		uint32_t s = into[r];
		if (s == PF_NONE)
			continue;
		hist_entry *d = &h->entries[s];
		const hist_entry *e = &h->entries[r];
		d->period += e->period;
		d->nr_events += e->nr_events;
		pv->hot[s].acc += pv->hot[r].acc;
		if (trees && cc_merge(h, &pv->cc, s, (uint32_t)r) < 0) {
			free(into);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
	}
	h->merged_into = into;
	return 0;
}

/* Tree mode with the callchain-tree pass: the tree rows' chains (which
 * that pass leaves to them), for the rows whose Children reach min_keep,
 * in the order perf appended them; then the merged rows' trees into the
 * rows they were merged into. */

/* Would the tree-mode trees built before perf's collapse (tj early) come
 * out otherwise after it? A tree-mode chain is added where its row's
 * Children reach the threshold: before, by the row's own pass sum; after,
 * by the total of the row it was merged into. Where no merged row, nor the
 * row it went into, changes sides, tree_chains_build adds the same chains in
 * the same order: the same trees. (Many merged rows: built again, unchecked.) */
#define STALE_CHECK_MAX 4096
static bool tree_chains_stale(const hist *h, uint64_t min_keep)
{
	const struct hist_priv *pv = h->priv;
	uint32_t m[STALE_CHECK_MAX];
	size_t nm = 0;
	for (size_t r = 0; r < h->n; r++) {
		uint32_t s = h->merged_into[r];
		if (s == PF_NONE)
			continue;
		if (nm == STALE_CHECK_MAX || h->merged_into[s] != PF_NONE)
			return true;
		m[nm++] = (uint32_t)r;
	}
	for (size_t i = 0; i < nm; i++) {
		uint32_t r = m[i], s = h->merged_into[r];
		bool after = h->entries[s].period_acc >= min_keep;
		if ((pv->hot[r].acc >= min_keep) != after)
			return true;
		/* the row merged into, by its own sum (the merge added the others') */
		uint64_t own = pv->hot[s].acc;
		for (size_t k = 0; k < nm; k++)
			if (h->merged_into[m[k]] == s)
				own -= pv->hot[m[k]].acc;
		if ((own >= min_keep) != after)
			return true;
	}
	return false;
}

/* The tree-mode rows' chains (pv->tchains) into their trees, in pool cp
 * (tj's, or the hist's when alone) with tj's chain buffer (cc_worker_run). */
static int tree_chains_build(tchains_job *j, struct cc_pool *cp)
{
	hist *h = j->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	uint32_t last = UINT32_MAX, *cursor = NULL;
	size_t nk = 0;
	for (size_t i = 0; i < pv->nr_tchains; i++) {
		const struct tree_chain *t = &pv->tchains[i];
		uint32_t keep = !j->early && h->merged_into && h->merged_into[t->row] != PF_NONE ? h->merged_into[t->row]
												  : t->row;
		if ((j->early ? pv->hot[keep].acc : h->entries[keep].period_acc) < j->min_keep)
			continue;
		if (t->si != last) {
			cursor = sample_cursor(h, &prof->samples[t->si], &j->chain, &j->cap_chain, &nk);
			if (!cursor && nk)
				return -1;
			last = t->si;
		}
		if (t->k < nk && cc_add(h, cp, t->row, cursor + t->k, nk - t->k, t->period, t->count) < 0)
			return -1;
	}
	return 0;
}

/* The callchain trees' run begun (cc_begin) over the samples of the
 * hist's event, with perf's threshold: (u64)(total * percent / 100), for
 * either total (both known once every aggregate is passed) */
static int cc_start(hist *h, cc_run *ccr, uint32_t *idx, size_t *nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, tchains_job *tj, uint64_t *min_keep, size_t split_min,
		    const atomic_int *pause, bool *started, proff_error *err)
{
	const pf_profile *prof = h->prof;
	*nidx = 0;
	for (size_t si = 0; si < prof->nr_samples; si++)
		if (prof->samples[si].evsel == h->evsel)
			idx[(*nidx)++] = (uint32_t)si;
	uint64_t tot = h->total_period < h->total_non_filtered_period ? h->total_period : h->total_non_filtered_period;
	*min_keep = h->opts.cc_min_percent > 0 ? (uint64_t)((double)tot * (h->opts.cc_min_percent / 100.0)) : 0;
	tj->min_keep = *min_keep;
	if (cc_begin(ccr, h, idx, *nidx, self_of, parent_of, *min_keep, tj, *nidx >= split_min, false, pause) < 0) {
		cc_run_free(ccr);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	*started = true;
	return 0;
}

/* The srclines of the locations that can be rows (every one with
 * children, the event's samples' own without), made before the pass by
 * pf_locs_srclines. Out of memory, every location's: no error (they are
 * made one by one then, as the pass would). */
static void srclines_first(hist *h)
{
	pf_profile *p = h->prof;
	uint8_t *want = h->opts.children ? NULL : calloc(p->nr_locs ? p->nr_locs : 1, 1);
	for (size_t i = 0; want && i < p->nr_samples; i++)
		if (p->samples[i].evsel == h->evsel && p->samples[i].stack)
			want[pf_leaf_loc(p, p->samples[i].stack)] = 1;
	pf_locs_srclines(p, want);
	free(want);
}

int hist_build(pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
{
	*out = NULL;
	hist *h;
	int rc = hist_new(prof, evsel, opts, &h, err);
	if (rc < 0)
		return rc;
	struct hist_priv *pv = h->priv;
	/* srcline keys: the rows' srclines made first, one binary at a time,
	 * its DWARF data released after it (before the pass's arrays, which
	 * then take that memory); tree mode's input tree compares them by
	 * rank, so every location's is made before it anyway */
	if (keys_need(h, HKN_SRCLINE))
		srclines_first(h);
	for (int i = 0; i < h->nkeys; i++)
		if (hist_keys[h->keys[i]].prepare && (rc = hist_keys[h->keys[i]].prepare(h, i, err)) < 0) {
			hist_free(h);
			return rc;
		}
	uint32_t *chain = NULL;
	size_t cap_chain = 0;
	bool want_cc = opts->callchain;
	/* children + caller order + full stacks: callchain trees in a second pass */
	bool fast_cc = want_cc && opts->children && opts->caller_order && opts->max_stack <= 0 && !opts->no_chain;
	/* Self rows with a threshold: a row below it shows no chain, so the
	 * trees are built in a second pass, for the rows that reach it only */
	bool late_cc = want_cc && !opts->children && opts->cc_min_percent > 0;
	/* both second passes need each sample's Self row (PF_NONE: another event) */
	uint32_t *self_of = NULL, *parent_of = NULL, *idx = NULL;
	size_t nidx = 0;
	if (late_cc || fast_cc) {
		self_of = malloc((prof->nr_samples + 1) * sizeof(uint32_t));
		if (self_of)
			memset(self_of, 0xff, (prof->nr_samples + 1) * sizeof(uint32_t));
	}
	if (fast_cc) {
		parent_of = calloc(prof->nr_samples + 1, sizeof(uint32_t));
		idx = malloc((prof->nr_samples + 1) * sizeof(uint32_t));
	}
	if (((late_cc || fast_cc) && !self_of) || (fast_cc && (!parent_of || !idx))) {
		free(self_of); free(parent_of); free(idx);
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	/* children: a location's level for the frames after it ('k', '.';
	 * 0 without a map: the level stays) */
	loc_bits *lb = NULL;
	if (opts->children) {
		lb = malloc((prof->nr_locs ? prof->nr_locs : 1) * sizeof(*lb));
		if (!lb) {
			free(self_of); free(parent_of); free(idx);
			hist_free(h);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		for (size_t i = 0; i < prof->nr_locs; i++) {
			const pf_loc *l = &prof->locs[i];
			enum sym_dso_kind dk = l->dso != PF_NONE ? prof->dsos[l->dso].kind : SYM_DSO_ANON;
			lb[i].map_level = l->dso == PF_NONE ? 0 : (dk == SYM_DSO_KERNEL || dk == SYM_DSO_MODULE) ? 'k' : '.';
			lb[i].level_self = (uint8_t)((l->level & 0x7f) | (self_key_is_chain_key(l) ? 0x80 : 0));
		}
	}
	/* tree mode where perf's input tree can hold two rows of one key (its
	 * nodes compare srclines by rank: made above) */
	/* (with the raw samples' order only: over aggregates the walks would
	 * be in another order than perf's — the hash is the better guess) */
	rc = prof->nr_seq ? suspect_locs(h, &pv->suspect) : 0;
	if (rc < 0 || (pv->suspect && (!(pv->itree = hist_itree_new(h)) || reserve_rows(h, h->cap) < 0))) {
		free(self_of); free(parent_of); free(idx); free(lb);
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	/* without filters every row stays unfiltered */
	bool filters = opts->comms.n || opts->nr_pids || opts->nr_tids || opts->dsos.n || opts->symbols.n;
	pass_state ps = { h, 0, prof->nr_samples, lb, want_cc, fast_cc, late_cc, filters, self_of, parent_of, NULL, 0, NULL,
			  pv->suspect && prof->nr_seq, NULL };
	size_t split_min = opts->split_min ? opts->split_min : SPLIT_PASS_MIN;
	/* tree mode over raw samples: on two threads (struct tree_pipe) where
	 * the pass adds no callchain trees (their nodes are shared); B finds
	 * the aggregates it passes whole itself (sample_whole) */
	bool pipe = ps.raw && opts->children && (!want_cc || fast_cc) && !prof->exact && prof->nr_seq >= split_min;
	if (ps.raw && ((!pipe && !(ps.whole = sample_whole(h))) ||
		       !(pv->taggs = malloc(prof->nr_samples * sizeof(*pv->taggs))))) {
		free(self_of); free(parent_of); free(idx); free(lb); free(ps.whole);
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	/* children without callchain trees in the pass: the second half of the
	 * samples on another thread, into a hist of its own merged after
	 * (srcline keys compute and cache strings in the profile: not) */
	hist *h2 = NULL;
	struct tree_pipe *tp = NULL;
	/* the callchain trees' run (cc_begin), begun after the pass or, in
	 * tree mode on two threads, as soon as A is done */
	cc_run ccr;
	tchains_job tj = { h, { prof, NULL, 0, 0, { 0 }, NULL, 0, 0 }, 0, NULL, 0, false, 0 };
	bool cc_started = false;
	uint64_t min_keep = 0;
	if (pipe && (tp = calloc(1, sizeof(*tp)))) {
		tp->met_a = calloc(prof->nr_samples ? prof->nr_samples : 1, 1);
		tp->met_b = calloc(prof->nr_samples ? prof->nr_samples : 1, 1);
		tp->tc_self = malloc((prof->nr_samples ? prof->nr_samples : 1) * sizeof(uint32_t));
		if (tp->tc_self)
			memset(tp->tc_self, 0xff, (prof->nr_samples ? prof->nr_samples : 1) * sizeof(uint32_t));
		if (tp->met_a && tp->met_b && tp->tc_self) {
			tp->ps = &ps;
			ps.tp = tp;
			ps.raw = false;
			pv->pipe = true;
		} else {
			tree_pipe_free(tp);
			tp = NULL;
		}
	}
	if (pipe && !tp && !(ps.whole = sample_whole(h))) {     /* on one thread */
		free(self_of); free(parent_of); free(idx); free(lb);
		hist_free(h);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (opts->children && (!want_cc || fast_cc) && !opts->diff_mode && !keys_need(h, HKN_SRCLINE) && !pv->itree &&
	    prof->nr_samples >= split_min && prof->nr_samples >= 2 && hist_new(prof, evsel, opts, &h2, err) < 0)
		h2 = NULL;       /* the pass then runs here alone */
	/* perf's row order begun on another thread, its input tree built
	 * while this pass creates the rows (with the pass on two threads,
	 * once both halves are done: the two cores are busy until then) */
	if (fast_cc && opts->order_early && !h2 && !pv->itree)
		hist_order_stream_begin(h);
	if (h2) {
		size_t mid = split_point(prof);
		pass_job j = { ps, { 0 }, 0 };
		j.ps.h = h2;
		j.ps.from = mid;
		ps.to = mid;
		pthread_t th;
		bool threaded = pthread_create(&th, NULL, pass_thread, &j) == 0;
		rc = sample_pass(&ps, err);
		if (threaded)
			pthread_join(th, NULL);
		else if (rc == 0)
			pass_thread(&j);
		if (rc == 0 && j.rc < 0) {
			*err = j.err;
			rc = j.rc;
		}
		/* the first half's rows are final: perf's input tree begins
		 * with them while the second half's are merged */
		if (rc == 0 && fast_cc && opts->order_early)
			hist_order_stream_begin(h);
		uint32_t *map = rc == 0 ? malloc((h2->n + 1) * sizeof(uint32_t)) : NULL;
		if (rc == 0 && !map)
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (rc == 0)
			rc = merge_pass(h, h2, map, err);
		if (rc == 0 && self_of)
			for (size_t si = mid; si < prof->nr_samples; si++)
				if (self_of[si] != PF_NONE)
					self_of[si] = map[self_of[si]];
		free(map);
		free(j.ps.chain);
		hist_free(h2);
	} else if (tp) {
		pthread_t th;
		bool threaded = pthread_create(&th, NULL, pipe_b, tp) == 0;
		rc = sample_pass(&ps, err);
		/* A is done, B maybe not: the callchain trees begun here, their
		 * heaviest contexts taken till B ends */
		if (rc == 0 && fast_cc && threaded && !atomic_load_explicit(&tp->b_done, memory_order_acquire))
			rc = cc_start(h, &ccr, idx, &nidx, self_of, parent_of, &tj, &min_keep, split_min, &tp->b_done,
				      &cc_started, err);
		if (threaded)
			pthread_join(th, NULL);
		else if (rc == 0)
			pipe_b(tp);
		if (rc == 0 && tp->rc < 0) {
			*err = tp->err;
			rc = tp->rc;
		}
		pv->pipe = false;
		if (rc == 0)
			rc = pipe_merge(h, tp, err);
		tree_pipe_free(tp);
		if (rc == 0)
			fit_rows(h);     /* no other thread: the rows are all there */
	} else {
		rc = sample_pass(&ps, err);
	}
	chain = ps.chain;
	cap_chain = ps.cap_chain;
	free(ps.whole);
	tree_pass_free(pv);
	if (opts->drop_sequence)
		pf_profile_drop_sequence(prof);
	/* the callchain trees begun: with several sample contexts their
	 * second worker starts now, beside perf's collapse */
	if (rc == 0 && fast_cc && !cc_started)
		rc = cc_start(h, &ccr, idx, &nidx, self_of, parent_of, &tj, &min_keep, split_min, NULL, &cc_started, err);
	else if (rc == 0 && cc_started && cc_resume(&ccr) < 0)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (rc == 0 && pv->itree)
		rc = collapse_merge(h, !fast_cc, cc_started && tj.early ? &tj.done : NULL, err);
	hist_itree_free(pv->itree);
	pv->itree = NULL;
	if (rc < 0) {
		if (cc_started)
			cc_abort(&ccr);
		free(tj.chain);
		cc_pool_free(&tj.cp, prof);
		goto fail;
	}
	/* every row is there: perf's input and collapse trees are finished
	 * on the other thread while the totals are written */
	if (fast_cc && opts->order_early)
		hist_order_stream_rows_end(h);
	if (opts->children) {
		/* the pass's sums into the rows (created with zero Children) */
		for (size_t i = 0; i < h->n; i++) {
			h->entries[i].period_acc += pv->hot[i].acc;
			h->entries[i].max_depth = pv->hot[i].depth;
		}
	}
	if (fast_cc) {
		/* the rows and their totals are final: perf's row order on the
		 * other core while this one builds the trees */
		if (opts->order_early) {
			hist_order_stream_end(h);
			hist_order_start(h);    /* unless streamed */
		}
		/* the tree-mode rows' trees in a pool of their own, built beside
		 * the others (and the contexts shared on two threads) */
		rc = cc_end(&ccr, err);
		if (rc == 0 && cc_pool_append(h, &pv->cc, &tj.cp) < 0)
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		free(tj.chain);
		cc_pool_free(&tj.cp, prof);
		/* the rows perf's collapse merged: their chains into the kept row */
		if (rc == 0 && pv->nr_tchains && h->merged_into)
			for (size_t r = 0; r < h->n && rc == 0; r++)
				if (h->merged_into[r] != PF_NONE && cc_merge(h, &pv->cc, h->merged_into[r], (uint32_t)r) < 0)
					rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (rc < 0)
			goto fail;
	}
	if (late_cc) {
		/* perf's threshold: (u64)(total * percent / 100), for either total */
		uint64_t tot = h->total_period < h->total_non_filtered_period ? h->total_period
									       : h->total_non_filtered_period;
		uint64_t min_keep = (uint64_t)((double)tot * (opts->cc_min_percent / 100.0));
		for (size_t si = 0; si < prof->nr_samples; si++) {
			if (self_of[si] == PF_NONE)
				continue;
			hist_entry *e = &h->entries[self_of[si]];
			if (e->period_acc < min_keep)
				continue;
			const pf_sample *s = &prof->samples[si];
			size_t nk = 0;
			uint32_t *cursor = sample_cursor(h, s, &chain, &cap_chain, &nk);
			if ((!cursor && nk) || (nk && cc_add(h, &pv->cc, self_of[si], cursor, nk, s->period, s->count) < 0)) {
				rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
				goto fail;
			}
		}
	}
	if (want_cc)
		cc_finish(&pv->cc);
	/* the trees are built: published */
	h->cc_nodes = pv->cc.nodes;
	h->nr_cc_nodes = pv->cc.n;
	h->cap_cc_nodes = pv->cc.cap;
	free(chain);
	free(lb);
	free(self_of); free(parent_of); free(idx);
	*out = h;
	return 0;
fail:
	free(chain);
	free(lb);
	free(self_of); free(parent_of); free(idx);
	hist_free(h);
	return rc;
}

void hist_free(hist *h)
{
	if (!h)
		return;
	hist_order_discard(h);
	for (int i = 0; i < HIST_MAX_KEYS; i++)
		free(h->loc_value[i]);
	if (h->priv) {
		free(h->priv->keyw);
		id_table_free(&h->priv->tab);
		free(h->priv->hot);
		pair_table_free(&h->priv->cc.child);
		free(h->priv->cc.roots);
		if (h->priv->cc.nodes != h->cc_nodes)
			free(h->priv->cc.nodes);
		free(h->priv->slot_of);
		free(h->priv->row_cache);
		hist_itree_free(h->priv->itree);
		free(h->priv->suspect);
		free(h->priv->gwrap);
		free(h->priv->cidx_of);
		free(h->priv->tchains);
		free(h->priv->wrow);
		free(h->priv->wsize);
		tree_pass_free(h->priv);
		if (h->priv->has_parent_re)
			regfree(&h->priv->parent_re);
		free(h->priv);
	}
	free(h->merged_into);
	free(h->collapsed);
	free(h->entries);
	free(h->cc_nodes);
	free(h);
}

/* ---- ordering ------------------------------------------------------------------- */

int hist_entry_cmp_keys(const hist *h, const hist_entry *a, const hist_entry *b)
{
	for (int i = 0; i < h->nkeys; i++) {
		int r = hist_keys[h->keys[i]].cmp(h, a, b);
		if (r)
			return r;
	}
	return 0;
}

static int report_cmp(const void *pa, const void *pb, void *ctx)
{
	const hist_entry *a = pa, *b = pb;
	const hist *sort_h = ctx;
	if (sort_h->opts.children) {
		if (a->period_acc != b->period_acc)
			return a->period_acc > b->period_acc ? -1 : 1;
		/* perf: with equal Children, put the caller (longer chains)
		 * above the callee, within one thread */
		if (a->thread == b->thread && a->max_depth != b->max_depth && sort_h->opts.callchain) {
			bool longer_first = sort_h->opts.caller_order;
			if ((a->max_depth > b->max_depth) == longer_first)
				return -1;
			return 1;
		}
	}
	if (a->period != b->period)
		return a->period > b->period ? -1 : 1;
	return hist_entry_cmp_keys(sort_h, a, b);
}

void hist_sort_report(hist *h)
{
	/* entries are reordered: the key index is rebuilt lazily if ever needed */
	if (hist_order_perf(h) < 0) {
		qsort_r(h->entries, h->n, sizeof(*h->entries), report_cmp, h);
	}
	id_table_free(&h->priv->tab);
	free(h->priv->keyw);
	h->priv->keyw = NULL;
}

static size_t key_width_of(const hist *h, int key_id)
{
	const hist_key_def *k = &hist_keys[key_id];
	size_t w = strlen(k->header);
	bool unresolved = false;
	for (size_t i = 0; i < h->n; i++) {
		const hist_entry *e = &h->entries[i];
		if (e->filtered || (h->merged_into && h->merged_into[i] != PF_NONE))
			continue;
		size_t x = k->width(h, e);
		if (x > w)
			w = x;
		if (e->sym == PF_NONE)
			unresolved = true;
	}
	/* perf: a column at least as wide as an address (its dso with an
	 * unresolved row), unless --dsos */
	if (unresolved && !h->opts.dsos.n && w < k->unresolved_width)
		w = k->unresolved_width;
	return w;
}

size_t hist_key_col_width(const hist *h, int key_id)
{
	for (int i = 0; i < h->nkeys; i++)
		if (h->keys[i] == key_id && h->key_width[i])
			return h->key_width[i];
	return key_width_of(h, key_id);
}

void hist_key_widths(hist *h)
{
	/* a lazy key's width is perf's order's (hist_order_perf) */
	for (int i = 0; i < h->nkeys; i++)
		if (!(hist_keys[h->keys[i]].needs & HKN_LAZY))
			h->key_width[i] = key_width_of(h, h->keys[i]);
}
