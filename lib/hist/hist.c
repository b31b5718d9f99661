/* hist.c — aggregating a profile into rows by sort keys (perf's hists).
 *
 * Works per unique aggregated sample (pf_sample), never per raw sample:
 * each sample's leaf location gives the Self row; with children, every
 * distinct row met on its stack (once per stack, so recursion counts once)
 * gets the period added to Children.
 *
 * Row identity is a small array of u64 key words built from the active
 * sort keys (see key_words()); rows are found through a hash of that array.
 *
 * The rest of hist_build is in hist-cc.c (the callchain trees),
 * hist-tree.c (tree mode), hist-collapse.c (tree mode's collapse) and
 * hist-split.c (the children pass on two threads), what they share in
 * hist-priv.h; the sort keys are keys.c's, perf's row order perforder.c's.
 */
#include "proff/hist.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"
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


/* A row's address and level as perf shows them: Self rows use the map
 * address; callchain (cumulative) rows of unresolved frames use the raw ip,
 * and without a map inherit the level of the sample. */
static uint64_t row_addr(const pf_loc *l, bool chain) { return hist_row_addr(l, chain); }
char row_level(const pf_profile *p, const ctx *c, const pf_loc *l, bool chain) {
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
void key_words(hist *h, const ctx *c, uint32_t loc, bool chain, uint64_t *w) {
	hist_key_src src = { c->s, c->parent, loc, chain, c->time };
	for (int i = 0; i < h->nkeys; i++)
		hist_keys[h->keys[i]].words(h, &src, w + i * KW_PER_KEY);
}

/* Does one of the sort keys need n (HKN_*)? */
bool keys_need(const hist *h, unsigned n) {
	return (hist_keys_needs(h->keys, h->nkeys) & n) != 0;
}

uint8_t entry_filter(hist *h, const ctx *c, uint32_t loc) {
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
int reserve_rows(hist *h, size_t n) {
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

/* A new row with key words w (hash theirs) in the empty table slot j that
 * row_probe gave: room, key and slot; the caller fills the row (h->n) and
 * its Children sums, then row_publish counts it. -1: out of memory. */
int row_new(hist *h, const uint64_t *w, uint64_t hash, size_t j)
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
int64_t row_publish(hist *h) {
	if (h->order)
		hist_order_stream_row(h, h->n);
	return (int64_t)h->n++;
}

void row_fill(hist *h, const ctx *c, uint32_t loc, bool chain, hist_entry *e);

int64_t find_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err) {
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
void row_fill(hist *h, const ctx *c, uint32_t loc, bool chain, hist_entry *e)
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
	/* diff mode: a dso's unresolved row shows its lowest map address,
	 * whether a sample's own location or a callchain entry met it first */
	e->addr = h->opts.diff_mode ? l->addr : row_addr(l, hist_row_raw_addr(p, c->s, chain));
	e->ip = l->ip;
	e->level = row_level(p, c, l, chain);
	e->parent = c->parent;
	e->filtered = chain ? c->sample_filtered : entry_filter(h, c, loc);
	e->cc_root = PF_NONE;
	e->lazy_known = 0xff;
	hist_key_src src = { c->s, c->parent, loc, chain, c->time };
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
int64_t loc_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err) {
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

int64_t chain_entry(hist *h, const ctx *c, uint32_t loc, proff_error *err) {
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


uint32_t sample_parent(hist *h, const pf_sample *s) {
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

/* The cursor of a --call-graph dwarf sample's chain ch (n locations, leaf
 * first: the recorded kernel part, then the unwound user frames) cut to
 * max_stack as perf cuts it: the recorded part as a recorded chain (the
 * max entries nearest the leaf in callee order, the root in caller order),
 * and, apart, the max unwound frames nearest the leaf in either order
 * (perf's unwinder stops after max frames), each frame with all of its
 * inlined entries. Into out (n entries at most); returns how many. */
static size_t dwarf_cursor(const pf_profile *p, const uint32_t *ch, size_t n, size_t max, bool caller,
			   uint32_t *out)
{
	size_t k = 0;
	while (k < n && p->locs[ch[k]].level != '.')
		k++;
	size_t klo = caller && k > max ? k - max : 0, khi = caller || k <= max ? k : max;
	size_t uhi = k, frames = 0;
	for (; uhi < n; uhi++) {
		if (uhi == k || !pf_loc_continues(p, ch[uhi - 1], ch[uhi]))
			frames++;
		if (frames > max)
			break;
	}
	size_t m = 0;
	if (caller) {
		for (size_t i = uhi; i > k; i--)
			out[m++] = ch[i - 1];
		for (size_t i = khi; i > klo; i--)
			out[m++] = ch[i - 1];
	} else {
		for (size_t i = klo; i < khi; i++)
			out[m++] = ch[i];
		for (size_t i = k; i < uhi; i++)
			out[m++] = ch[i];
	}
	return m;
}

/* A sample's callchain as perf's cursor sees it: at most max_stack
 * entries, counted from the leaf in callee order and from the root in
 * caller order; in *chain (grown as needed). Sets *nk; NULL with *nk 0 when
 * there is no chain, NULL with *nk set on allocation failure. */
uint32_t *sample_cursor(const hist *h, const pf_sample *s, uint32_t **chain, size_t *cap_chain,
			       size_t *nk) {
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
	if (opts->max_stack > 0 && n > (size_t)opts->max_stack &&
	    (prof->events[s->evsel].sample_type & (1ULL << 13))) {   /* PERF_SAMPLE_STACK_USER */
		*nk = dwarf_cursor(prof, ch, n, (size_t)opts->max_stack, opts->caller_order, ch + n);
		return ch + n;
	}
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


int tree_chain_add(struct hist_priv *pv, size_t si, uint32_t row, uint32_t k, const pf_sample *s) {
	if (PF_GROW(pv->tchains, pv->cap_tchains, pv->nr_tchains + 1) < 0)
		return -1;
	pv->tchains[pv->nr_tchains++] = (struct tree_chain){ (uint32_t)si, row, k, (uint32_t)s->count, s->period };
	return 0;
}

/* Tree mode, per aggregated sample: 1 when no location of its stack is a
 * tree-mode one (then it is passed whole, once), else 0; NULL out of
 * memory. A node's parent comes before it. */
uint8_t *sample_whole(const hist *h) {
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
void raw_sample(const pf_profile *prof, size_t it, const pf_sample *agg, pf_sample *one) {
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
ctx sample_ctx(hist *h, const pf_sample *s, char level) {
	const hist_opts *opts = &h->opts;
	ctx c = { s, sample_parent(h, s), 0, 0, level, 0 };
	if (level == 'g' || level == 'u')
		c.thread_filtered |= HF_GUEST;
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

const struct tree_frame *tframe_at(const struct hist_priv *pv, size_t j) {
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
int pass_one(pass_state *ps, size_t it, size_t si, proff_error *err) {
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

/* The pass over ps->from..ps->to (or, in tree mode, over the raw samples;
 * with ps->tp, A's part of the pass on two threads) */
int sample_pass(pass_state *ps, proff_error *err)
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

/* A hist with its sort keys, its label key and its --parent regex, no
 * room for rows yet (the engine's hist_new and the reference path's). */
int hist_new_keys(const pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
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
	int nvalued = 0;      /* keys with a value of their own in perf's replay (pkey.gen) */
	for (int i = 0; i < h->nkeys; i++)
		nvalued += hist_keys[h->keys[i]].perf_value != NULL;
	if (nvalued > HIST_GEN_KEYS) {
		hist_free(h);
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "--sort: at most %d of the keys srcfile, sample, period, symbol_size, dso_size, time, "
				     "overhead_sys, overhead_us, overhead_guest_sys, overhead_guest_us in one sort order",
				     HIST_GEN_KEYS);
	}
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
	*out = h;
	return 0;
}

/* A hist with its sort keys, room for rows and the row cache: all but the
 * rows (hist_build's, and the second pass thread's). */
static int hist_new(const pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
{
	int rc = hist_new_keys(prof, evsel, opts, out, err);
	if (rc < 0)
		return rc;
	hist *h = *out;
	struct hist_priv *pv = h->priv;
	*out = NULL;

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

/* The callchain trees' run begun (cc_begin) over the samples of the
 * hist's event, with perf's threshold: (u64)(total * percent / 100), for
 * either total (both known once every aggregate is passed) */
int cc_start(hist *h, cc_run *ccr, uint32_t *idx, size_t *nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, tchains_job *tj, uint64_t *min_keep, size_t split_min,
		    const atomic_int *pause, bool *started, proff_error *err) {
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

/* The locations that can be rows of event evsel's hist: every one with
 * children, the event's samples' own without, and in branch mode their
 * branches' sources (NULL: every one; NULL with *oom when out of memory) */
static uint8_t *row_locs(const pf_profile *p, uint32_t evsel, bool children, bool *oom)
{
	*oom = false;
	if (children)
		return NULL;
	uint8_t *want = calloc(p->nr_locs ? p->nr_locs : 1, 1);
	*oom = !want;
	for (size_t i = 0; want && i < p->nr_samples; i++)
		if (p->samples[i].evsel == evsel && p->samples[i].stack) {
			want[pf_leaf_loc(p, p->samples[i].stack)] = 1;
			const pf_branch *b = pf_node_branch(p, p->samples[i].stack);
			if (b)
				want[b->from] = 1;
		}
	return want;
}

int hist_srclines(pf_profile *prof, uint32_t evsel, const hist_opts *opts, proff_error *err)
{
	int keys[HIST_MAX_KEYS];
	int nk = hist_parse_sort(opts->sort, keys, HIST_MAX_KEYS, err);
	if (nk < 0)
		return nk;
	if (!(hist_keys_needs(keys, nk) & HKN_SRCLINE))
		return 0;
	/* one binary at a time, its DWARF data released after it (before the
	 * pass's arrays, which then take that memory). Out of memory, every
	 * location's: no error (they are made one by one then) */
	bool oom;
	uint8_t *want = row_locs(prof, evsel, opts->children, &oom);
	pf_locs_srclines(prof, oom ? NULL : want);
	free(want);
	const hist_key_def *sf = hist_key_find("srcfile");
	for (int i = 0; sf && i < nk; i++)
		if (keys[i] == sf->id && hist_srcfile_names(prof) < 0)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
}

/* srcline keys read the rows' srclines: made before (hist_srclines)? */
static int srclines_made(const hist *h, proff_error *err)
{
	const pf_profile *p = h->prof;
	bool oom;
	uint8_t *want = row_locs(p, h->evsel, h->opts.children, &oom);
	if (oom)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	size_t missing = 0;
	for (size_t i = 0; i < p->nr_locs; i++)
		missing += (!want || want[i]) && p->locs[i].srcline == PF_NONE;
	free(want);
	if (missing)
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "srcline keys: %zu locations have no srcline made (hist_srclines before hist_build)",
				     missing);
	return 0;
}

int hist_build(const pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err)
{
	*out = NULL;
	hist *h;
	int rc = hist_new(prof, evsel, opts, &h, err);
	if (rc < 0)
		return rc;
	struct hist_priv *pv = h->priv;
	/* srcline keys: the rows' srclines were made first (hist_srclines, a
	 * stage the planner chose); tree mode's input tree compares them by
	 * rank, so every location's is made before it */
	if (keys_need(h, HKN_SRCLINE) && (rc = srclines_made(h, err)) < 0) {
		hist_free(h);
		return rc;
	}
	/* the engine keeps no cpumode split or sample times: the reference
	 * path makes them */
	for (int i = 0; i < h->nkeys; i++) {
		if (!(hist_keys[h->keys[i]].needs & (HKN_CPUMODE | HKN_TIME)))
			continue;
		const char *name = hist_keys[h->keys[i]].name;
		hist_free(h);
		return proff_err_set(err, PROFF_ENOTSUP, NULL, PROFF_NO_OFFSET,
				     "--sort %s: in proff report only (its rows are made by the reference path, "
				     "plan_stages.reference)", name);
	}
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
	rc = seq_single_events(prof) ? suspect_locs(h, &pv->suspect) : 0;
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
	if (opts->sequence_done)
		opts->sequence_done(opts->sequence_done_arg);
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
	free(h->mode_period);
	free(h->row_time);
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
	free(h->bh_nodes);
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

int hist_entry_match_keys(const hist *h, const hist_entry *a, const hist_entry *b)
{
	for (int i = 0; i < h->nkeys; i++) {
		const hist_key_def *k = &hist_keys[h->keys[i]];
		int r = (k->match ? k->match : k->cmp)(h, a, b);
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
