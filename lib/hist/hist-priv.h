/* hist-priv.h — what the parts of hist_build share inside lib/hist: the
 * hist's private state (struct hist_priv), the pass's sample context and
 * the functions one part calls in another (hist.c: rows and the pass;
 * hist-cc.c: the callchain trees). Not a public header. */
#ifndef PROFF_HIST_PRIV_H
#define PROFF_HIST_PRIV_H

#include <pthread.h>
#include <regex.h>
#include <stdatomic.h>

#include "proff/hist.h"
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
	uint64_t time;       /* the raw sample's time slot (the reference path, a time key), else 0 */
} ctx;

/* Children mode, per location, what the pass reads of it (two bytes
 * instead of the location's cache line): its map's level for the frames
 * after it ('k', '.'; 0 without a map: the level stays), and its own level
 * with bit 7 set when its Self key is its callchain key. */
typedef struct loc_bits {
	uint8_t map_level, level_self;
} loc_bits;

typedef struct cc_rec { uint32_t entry, cur; } cc_rec;

typedef struct ctx_sort { const hist *h; const uint32_t *parent; } ctx_sort;

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

typedef struct pass_job {
	pass_state ps;
	proff_error err;
	int rc;
} pass_job;

/* From this many samples a children pass runs on two threads */
#define SPLIT_PASS_MIN 20000

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

/* Functions one part of hist_build calls in another (the library's
 * internals: no proff_ prefix, not in a public header) */

/* hist.c: rows, the sample context, the pass */
int pass_one(pass_state *ps, size_t it, size_t si, proff_error *err);
const struct tree_frame *tframe_at(const struct hist_priv *pv, size_t j);
uint8_t *sample_whole(const hist *h);
ctx sample_ctx(hist *h, const pf_sample *s, char level);
int reserve_rows(hist *h, size_t n);
int tree_chain_add(struct hist_priv *pv, size_t si, uint32_t row, uint32_t k, const pf_sample *s);
void raw_sample(const pf_profile *prof, size_t it, const pf_sample *agg, pf_sample *one);
int64_t row_publish(hist *h);
void key_words(hist *h, const ctx *c, uint32_t loc, bool chain, uint64_t *w);
int64_t chain_entry(hist *h, const ctx *c, uint32_t loc, proff_error *err);
bool keys_need(const hist *h, unsigned n);
int tree_chains_build(tchains_job *j, struct cc_pool *cp);
bool tree_chains_stale(const hist *h, uint64_t min_keep);
int cc_start(hist *h, cc_run *ccr, uint32_t *idx, size_t *nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, tchains_job *tj, uint64_t *min_keep, size_t split_min,
		    const atomic_int *pause, bool *started, proff_error *err);
int64_t find_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err);
int64_t loc_entry(hist *h, const ctx *c, uint32_t loc, bool chain, proff_error *err);
void row_fill(hist *h, const ctx *c, uint32_t loc, bool chain, hist_entry *e);
uint32_t *sample_cursor(const hist *h, const pf_sample *s, uint32_t **chain, size_t *cap_chain,
			       size_t *nk);
uint32_t sample_parent(hist *h, const pf_sample *s);
int cc_merge(hist *h, struct cc_pool *cp, uint32_t dst, uint32_t src);
char row_level(const pf_profile *p, const ctx *c, const pf_loc *l, bool chain);
uint8_t entry_filter(hist *h, const ctx *c, uint32_t loc);
/* A hist with its sort keys, label key and --parent regex, no rows: *out
 * NULL on an error (hist.c) */
int hist_new_keys(const pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err);

/* hist-cc.c: the callchain trees */
int cc_add(hist *h, struct cc_pool *cp, uint32_t row, const uint32_t *locs, size_t n, uint64_t period,
		  uint64_t count);
void cc_pool_free(struct cc_pool *cp, const pf_profile *prof);
int cc_pool_append(hist *h, struct cc_pool *a, struct cc_pool *b);
void cc_finish(struct cc_pool *cp);
int cc_resume(cc_run *r);
void cc_abort(cc_run *r);
int cc_end(cc_run *r, proff_error *err);
int cc_begin(cc_run *r, hist *h, const uint32_t *idx, size_t nidx, const uint32_t *self_of,
		    const uint32_t *parent_of, uint64_t min_keep, tchains_job *tj, bool two, bool alone,
		    const atomic_int *pause);
void cc_run_free(cc_run *r);
uint32_t cc_new_node(struct cc_pool *cp, uint32_t parent, uint32_t loc);
uint32_t cc_child(struct cc_pool *cp, uint32_t cur, uint32_t loc);
uint32_t cc_root_of(struct cc_pool *cp, hist_entry *e, uint32_t row);
void ctx_order(const hist *h, const uint32_t *parent_of, const uint32_t *idx, size_t n, uint32_t *order);
bool same_ctx(const hist *h, const uint32_t *parent_of, uint32_t ia, uint32_t ib);
void radix_sort_u32(uint32_t *v, uint32_t *tmp, size_t n, uint32_t bound);
uint32_t cc_key(const pf_profile *prof, uint32_t loc);
void ctx_words(const hist *h, const uint32_t *parent_of, uint32_t si, uint64_t *w);
int64_t chain_row_ro(hist *h, const ctx *c, uint32_t loc);
int cc_tree_rows(cc_run *r);
void cc_pool_reset(hist *h, struct cc_pool *cp);
void cc_scratch_free(cc_scratch *sc);

/* hist.c, the pass and a row (hist-split.c merges rows of a second pass) */
int sample_pass(pass_state *ps, proff_error *err);
int row_new(hist *h, const uint64_t *w, uint64_t hash, size_t j);

/* hist-split.c: the children pass on two threads */
void *pass_thread(void *arg);
int merge_pass(hist *h, hist *h2, uint32_t *map, proff_error *err);
size_t split_point(const pf_profile *p);

/* hist-collapse.c: tree mode's collapse */
int collapse_merge(hist *h, bool trees, const atomic_int *wait, proff_error *err);

/* hist-tree.c: tree mode */
int pipe_a(pass_state *ps, proff_error *err);
int suspect_locs(hist *h, uint8_t **susp);
bool seq_single_events(const pf_profile *p);
void tree_pipe_free(struct tree_pipe *tp);
int pipe_merge(hist *h, struct tree_pipe *tp, proff_error *err);
void *pipe_b(void *arg);

#endif
