/* keys.h — what the sort-key catalogue (keys.c) and the engine (hist.c,
 * perforder.c) share inside lib/hist: the source of a row's key words,
 * and perf's tree replay's nodes, row keys and comparators, which the
 * keys' perf_cmp functions read. Not a public header. */
#ifndef PROFF_HIST_KEYS_H
#define PROFF_HIST_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "proff/hist.h"

/* What a row is made from: a sample (its context) and one location of
 * its stack. */
typedef struct hist_key_src {
	const pf_sample *s;
	uint32_t parent;          /* the sample's parent symbol name id (0: none) */
	uint32_t loc;             /* the row's location */
	bool chain;               /* a callchain (cumulative) row, not the sample's own */
	uint64_t time;            /* the raw sample's time slot (a time key), else 0 */
} hist_key_src;

/* A row's address as perf shows it: Self rows use the map address,
 * callchain (cumulative) rows of unresolved frames the raw ip. */
static inline uint64_t hist_row_addr(const pf_loc *l, bool chain) { return chain ? l->ip : l->addr; }
/* ... and a branch-mode row (its location the branch's target) the raw ip
 * too: perf's row address there is the branch entry's own "to" */
static inline bool hist_row_raw_addr(const pf_profile *p, const pf_sample *s, bool chain)
{
	return chain || (s && p->node_branch && pf_node_branch(p, s->stack));
}

/* keys of one --sort that have no field of their own in pkey (perf_value) */
#define HIST_GEN_KEYS 4

/* A tree node and what the comparators read first, in one 64-byte line: a
 * replay's descent compares the new row with some 17 others, most of them
 * cache misses. The rest of a row's key (pkey) is read on ties only. */
#define NONE_R UINT32_MAX
typedef struct rbn {
	uint32_t left, right, parent;
	uint32_t comm, dso, sym;       /* string ranks, NONE_R: no dso or symbol */
	uint64_t x0, x1, x2;           /* stages 0 and 1: address, symbol start and end;
					  stage 2: Children and Self periods, and the
					  thread << 32 | callchain depth (ties) */
	uint8_t red;
	uint8_t wrap;                  /* stage 1 (comm,dso,sym): the row's (comm, dso) group
					  compares addresses or symbol bounds 2^63 or more apart */
} __attribute__((aligned(64))) rbn;

/* A row's whole key, in one array (reading ranks here instead of the row,
 * its symbol, its dso and strings saves most of the cache misses); a
 * replay copies the fields it reads first into its tree nodes (rbn).
 * Strings are their ranks (strcmp order); NONE_R marks a missing dso,
 * symbol or parent. */
typedef struct pkey {
	uint64_t period_acc, period;
	uint64_t addr, sym_start, sym_end;
	uint32_t comm, tid, cpu, dso, sym, parent, srcline;
	uint32_t thread;
	union {
		uint32_t max_depth;
		/* branch profiles (rows without callchains, so no depth): the
		 * row's branch (hist_entry.branch; a probe of perf's input
		 * tree is no row of h->entries yet) */
		uint32_t branch;
	};
	uint32_t idx;              /* the row (h->entries) */
	/* keys without a field here (hist_key_def.perf_value), in their
	 * order in h->keys: their values (strings as ranks) */
	uint64_t gen[HIST_GEN_KEYS];
} pkey;

/* What a replay's comparators read, passed down to them (the library keeps
 * no global state: orderings run on several threads at once).
 *
 * perf 6.1 computes a row's srcline lazily, in the first comparison that
 * reaches the srcline key (sort__srcline_cmp; a new row keeps the one its
 * walk computed), and sizes the column from the rows whose srcline was
 * known when they entered the output tree (hists__calc_col_len, right
 * after each insertion; longer ones print cut); so for every key perf
 * computes while comparing (HKN_LAZY: srcline, srcfile): known, a bit
 * per key slot and row, seeded with srcline_seed's rows, marked by the
 * replayed comparisons (replay_mark). */
typedef struct replay_ctx {
	const hist *h;
	const pkey *pk;            /* the rows' keys */
	const rbn *tn;             /* the running replay's nodes, in insertion order */
	const uint32_t *titems;    /* and their rows */
	uint8_t *known;            /* lazy keys only, else NULL */
	size_t lazy_width[HIST_MAX_KEYS];
} replay_ctx;

/* the whole key of node x */
static inline const pkey *full(const replay_ctx *c, uint32_t x) { return &c->pk[c->titems[x]]; }

/* a lazy key's comparison: both rows' values computed now */
static inline void replay_mark(const replay_ctx *c, int slot, uint32_t a, uint32_t b)
{
	if (c->known) {
		c->known[full(c, a)->idx] |= (uint8_t)(1u << slot);
		c->known[full(c, b)->idx] |= (uint8_t)(1u << slot);
	}
}

/* the index in pkey.gen of the key in slot (the keys with a perf_value before it) */
static inline int replay_gen_index(const hist *h, int slot)
{
	int g = 0;
	for (int i = 0; i < slot; i++)
		g += hist_keys[h->keys[i]].perf_value != NULL;
	return g;
}

/* ---- perf's comparators: cmp(left, right), int64 sign conventions ---------- */

/* cmp_null(l, r) of perf: both missing 0, only l missing -1, else 1 */
static inline int64_t null_cmp(bool l_missing, bool r_missing)
{
	if (l_missing && r_missing)
		return 0;
	return l_missing ? -1 : 1;
}

static inline int64_t rcmp(uint32_t a, uint32_t b) { return a < b ? -1 : a > b; }

static inline int64_t dso_cmp(const rbn *l, const rbn *r)
{
	/* sort__dso_cmp(l, r) = _sort__dso_cmp(r->map, l->map) */
	if (l->dso == NONE_R || r->dso == NONE_R)
		return null_cmp(l->dso == NONE_R, r->dso == NONE_R);
	return rcmp(r->dso, l->dso);
}

static inline int64_t addr_cmp(uint64_t l, uint64_t r) { return (int64_t)(r - l); }

/* stages 0 and 1: x0 address, x1 symbol start, x2 symbol end */
static inline int64_t sym_cmp(const rbn *l, const rbn *r)
{
	if (l->sym == NONE_R && r->sym == NONE_R)
		return addr_cmp(l->x0, r->x0);
	int64_t ret = dso_cmp(l, r);
	if (ret)
		return ret;
	if (l->sym == NONE_R || r->sym == NONE_R)
		return null_cmp(l->sym == NONE_R, r->sym == NONE_R);
	if (l->x1 != r->x1)
		return (int64_t)(r->x1 - l->x1);
	return (int64_t)(r->x2 - l->x2);
}

static inline int64_t sym_sort(const rbn *l, const rbn *r)
{
	if (l->sym == NONE_R || r->sym == NONE_R)
		return null_cmp(l->sym == NONE_R, r->sym == NONE_R);
	return rcmp(r->sym, l->sym);
}

/* ---- the catalogue's printers other key files reuse (keys.c) ---- */
size_t hist_key_sym_width(const hist *h, const hist_entry *e);
int hist_key_sym_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep);
int hist_key_dso_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep);

/* ---- the branch keys (keys-branch.c; their entries in keys.c) ---- */
void hist_branch_fill(const hist *h, const hist_key_src *c, hist_entry *e);
int hist_branch_prepare(hist *h, int slot, proff_error *err);
#define HIST_BRANCH_KEY_FNS(k) \
	void hist_w_##k(const hist *h, const hist_key_src *c, uint64_t w[2]); \
	int hist_k_##k##_cmp(const hist *h, const hist_entry *a, const hist_entry *b); \
	int64_t hist_p_##k(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri); \
	int hist_k_##k##_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep); \
	void hist_v_##k(const hist *h, const hist_entry *e, hist_key_value *v);
HIST_BRANCH_KEY_FNS(dso_from)
HIST_BRANCH_KEY_FNS(dso_to)
HIST_BRANCH_KEY_FNS(sym_from)
HIST_BRANCH_KEY_FNS(sym_to)
HIST_BRANCH_KEY_FNS(cycles)
HIST_BRANCH_KEY_FNS(mispredict)
HIST_BRANCH_KEY_FNS(in_tx)
HIST_BRANCH_KEY_FNS(abort)
HIST_BRANCH_KEY_FNS(srcline_from)
HIST_BRANCH_KEY_FNS(srcline_to)
size_t hist_k_srcline_from_width(const hist *h, const hist_entry *e);
size_t hist_k_srcline_to_width(const hist *h, const hist_entry *e);
size_t hist_k_dso_from_width(const hist *h, const hist_entry *e);
size_t hist_k_dso_to_width(const hist *h, const hist_entry *e);
size_t hist_k_sym_from_width(const hist *h, const hist_entry *e);
size_t hist_k_sym_to_width(const hist *h, const hist_entry *e);

/* The srcfile key's file names of every location with a srcline, into
 * the profile's strings (hist_srclines' stage, before hist_build) */
int hist_srcfile_names(pf_profile *prof);

#endif
