/* proff/hist.h — aggregation of a profile into rows ("hist entries") by sort
 * keys, with Self and Children (cumulative) periods, filters and perf's row
 * order. Used by `report` and `diff`.
 *
 * Sort keys live in one catalogue, lib/hist/keys.c (hist_keys[]): per key
 * its name, header, what it needs, its row identity (key words), perf's
 * comparators, width, printer and diff value. Everything else iterates
 * it; adding a key is one entry and its functions there
 * (docs/architecture.md, "How to add a sort key").
 *
 * Two modes:
 *  - report: rows keyed like perf report (symbol by address within its dso,
 *    unresolved addresses one row each);
 *  - diff:   rows keyed like perf diff (symbol by NAME, dso by short name or,
 *    verbose, long name; all unresolved addresses of a dso in one row), so
 *    rebuilt binaries pair.
 */
#ifndef PROFF_HIST_H
#define PROFF_HIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/profile.h"
#include "proff/util.h"

/* The keys other layers name (the store's query, the report's elided
 * filter columns, the engine's fast paths); keys.c numbers the others
 * after HK__NAMED. A key's id is its index in hist_keys[]. */
enum hist_key_id {
	HK_COMM, HK_PID, HK_TID, HK_DSO, HK_SYM, HK_CPU, HK_PARENT, HK_SRCLINE,
	HK_LABEL,      /* label:NAME, a pprof label's value (hist.label_key names it) */
	HK__NAMED
};
#define HIST_MAX_KEYS 8        /* keys of one --sort */
#define HIST_KEYS_MAX 48       /* entries of the catalogue, at most */

/* filter bits (entry->filtered) */
/* HF_GUEST: a guest's sample (cpumode guest kernel or user), which perf
 * report keeps out of its rows (perf_guest is off but in perf kvm) */
enum { HF_THREAD = 1, HF_DSO = 2, HF_SYMBOL = 4, HF_PARENT = 8, HF_GUEST = 16 };

typedef struct hist_entry {     /* 128 bytes: two cache lines */
	uint32_t comm, pid, tid, cpu;
	uint32_t thread;           /* profile thread of the first sample (column widths use its last comm) */
	uint32_t dso;              /* profile dso index or PF_NONE */
	uint32_t sym;              /* profile sym index or PF_NONE (unresolved) */
	uint32_t sym_name;         /* string id of the symbol name (0 if unresolved) */
	uint32_t loc;              /* representative location (lowest address for collapsed unresolved rows) */
	char level;
	uint8_t filtered;          /* HF_* bits; filtered rows are not printed */
	/* perf's lazily computed keys (HKN_LAZY) whose value perf computed
	 * before printing, a bit per key slot (perf's order sets it; 0xff
	 * until then): perf prints a branch end's srcline it never computed
	 * as "(null)" */
	uint8_t lazy_known;
	uint32_t parent;           /* string id of the parent symbol name ("[other]" if none matched) */
	uint32_t srcline;          /* string id */
	uint32_t cc_root;          /* callchain tree root (hist-owned), PF_NONE if none */
	uint32_t max_depth;        /* longest callchain appended (perf's tie rule puts callers first) */
	uint64_t addr;             /* map address shown for unresolved rows */
	uint64_t ip;
	uint64_t period;           /* Self */
	uint64_t period_acc;       /* Children (== period without children mode) */
	uint64_t nr_events;
	uint64_t ex_incl;          /* exact profiles: summed inclusive ns of the entry's calls */
	uint64_t ex_min;           /* exact profiles: inclusive ns of one call, least */
	union {
		uint64_t ex_max;   /* exact profiles: inclusive ns of one call, most */
		uint32_t branch;   /* branch profiles (never exact): the branch the row shows
				      (pf_profile.branches; keys-branch.c) */
	};
	/* the row's index at its making, which moves with it: its values in
	 * the hist's side arrays (mode_period, row_time) that the reference
	 * path makes for keys that need them */
	uint64_t row_id;
} hist_entry;

typedef struct hist_opts {
	const char *sort;          /* "comm,dso,sym" (report default), "dso,sym" (diff default) */
	bool diff_mode;
	bool children;             /* cumulate callchains (perf --children) */
	bool verbose;              /* -v: dso long names, symbol addresses */
	bool callchain;            /* build callchain trees for graph output */
	bool caller_order;         /* callchain order: caller (root first) vs callee */
	int max_stack;             /* 0 = unlimited */
	bool no_chain;             /* --max-stack 0: no sample has a callchain (Children = Self) */
	/* Rows whose Children total is below this percent of the hists total
	 * get no callchain tree (perf's graph/flat/folded threshold prints
	 * nothing for them); 0 builds every tree. Children mode, caller order. */
	double cc_min_percent;
	bool relative;             /* --percentage relative */
	/* The caller will sort by perf's order (hist_sort_report): children
	 * mode computes it while the callchain trees are built. */
	bool order_early;
	/* perf's row order by replaying its trees with the generic comparators
	 * always (tests: the stable sorts and written-out comparators used
	 * where they give the same order are checked against it) */
	bool order_replay;
	/* perf prefixes its sort order with Children (Children mode) and Self
	 * ("overhead") unless the --sort spec names them: a key of perf's
	 * overhead columns (its prepare sets these) puts its own comparison
	 * where the spec has it, Self then breaking the remaining ties */
	bool no_children_first, no_self_first;
	/* --sort time: the slot a sample's time falls in (perf's
	 * --time-quantum, ns; 0: 100 ms) */
	uint64_t time_quantum;
	/* Children mode: the first pass runs on two threads from this many
	 * samples (0: the default, 20,000; SIZE_MAX: never; tests force it
	 * to check the two-thread pass gives the rows of one) */
	size_t split_min;
	/* Called once, on the building thread, when hist_build has read the
	 * profile's raw-sample sequence for the last time (NULL: not called):
	 * a caller that needs the sequence no more frees it there
	 * (pf_profile_drop_sequence), and the callchain trees built after
	 * reuse its memory (a children report's peak: 30 MB less on 1 M
	 * samples). Not every path calls it: drop the sequence after
	 * hist_build as well (freeing it twice is harmless). */
	void (*sequence_done)(void *arg);
	void *sequence_done_arg;
	const char *parent_regex;  /* --parent, default "^sys_|^do_page_fault" */
	pf_strlist comms, dsos, symbols;   /* filters (empty = none) */
	uint32_t *pids; size_t nr_pids;
	uint32_t *tids; size_t nr_tids;
} hist_opts;

/* callchain tree node (perf "graph" semantics: a node holds a run of frames) */
typedef struct hist_cc_node {
	uint32_t first_child, next_sibling, parent;   /* siblings in insertion order */
	uint32_t loc;                      /* the frame's location, PF_NONE for a root */
	uint32_t key;                      /* frame identity: symbol id | 1<<31, or location */
	uint32_t nr_children;
	uint64_t hit;                      /* period of chains ending exactly here */
	uint64_t children_hit;             /* period of chains continuing below */
	uint64_t count;
} hist_cc_node;                        /* 48 bytes: millions of them in big children reports */

/* --branch-history: a callchain node's branch statistics, perf's (its
 * callchain_list counts) */
typedef struct hist_bh_node {
	uint64_t branch_count;             /* entries of branches that made or matched it */
	uint64_t predicted, abort;         /* of those that were a branch's target */
	/* the targets' branch types seen (perf's branch_type_stat, of which
	 * it prints what is non-zero): bit t for type t (PERF_BR_*), and
	 * HIST_BH_COND_FWD ... HIST_BH_CROSS_2M */
	uint32_t types;
	uint64_t cycles, iter, iter_cycles;/* of those that were a branch's source */
	uint64_t from_count;               /* sources that matched it (not the one that made it) */
	bool to;                           /* the last branch entry was a target */
} hist_bh_node;
#define HIST_BH_COND_FWD (1u << 16)
#define HIST_BH_COND_BWD (1u << 17)
#define HIST_BH_CROSS_4K (1u << 18)
#define HIST_BH_CROSS_2M (1u << 19)

typedef struct hist {
	const pf_profile *prof;
	uint32_t evsel;
	hist_opts opts;
	int keys[HIST_MAX_KEYS];
	int nkeys;
	hist_entry *entries; size_t n, cap;
	uint64_t total_period;              /* all samples of the event kept by the loader */
	uint64_t total_non_filtered_period; /* samples not hidden by filters */
	uint64_t nr_samples, nr_non_filtered_samples;
	/* keys[i]'s column width once hist_key_widths ran, or for a key perf
	 * computes while comparing (HKN_LAZY) once hist_order_perf did (0: not yet) */
	size_t key_width[HIST_MAX_KEYS];
	/* keys[i]'s value per location, for a key whose prepare made one
	 * (srcfile: its file name's string id), else NULL */
	uint32_t *loc_value[HIST_MAX_KEYS];
	/* callchain storage */
	hist_cc_node *cc_nodes; size_t nr_cc_nodes, cap_cc_nodes;
	/* --branch-history: per callchain node its branch statistics (nodes
	 * are then locations, printed with their source line); NULL otherwise */
	hist_bh_node *bh_nodes; size_t cap_bh_nodes;
	bool bh_no_counts;                  /* print the nodes without their counts (perf on a pipe) */
	uint32_t label_key;                 /* label:NAME's string id (PF_NONE: no label key) */
	struct hist_priv *priv;
	struct hist_order *order;           /* perf's row order, computed ahead (hist_order_start) */
	/* Rows perf's collapse merged into an equal one (tree mode; their sums
	 * and chains are in it): merged_into[row], PF_NONE if kept; NULL when
	 * none is. perf's order leaves them out (hist_order_perf drops them). */
	uint32_t *merged_into;
	/* Tree mode: the rows in the order perf's output tree receives them
	 * (its input and collapse trees were kept); NULL otherwise */
	uint32_t *collapsed;
	size_t nr_collapsed;
	/* perf's --sort overhead_sys, overhead_us, ...: the Self periods of
	 * each row by its samples' cpumode (HIST_MODE_*), 4 per row at
	 * hist_entry.row_id; NULL unless a key needs it (HKN_CPUMODE: the
	 * reference path makes it) */
	uint64_t *mode_period;
	/* --sort time: each row's time slot (ns, a multiple of
	 * opts.time_quantum) at hist_entry.row_id; NULL without (HKN_TIME) */
	uint64_t *row_time;
	/* the rows the side arrays hold (a row_id is below it; a probe of
	 * perf's walk has row_id side_rows, whose row_time is room made) */
	size_t side_rows;
} hist;

/* hist.mode_period's four: perf's period_sys, period_us, period_guest_sys,
 * period_guest_us (a hypervisor sample counts in none) */
enum { HIST_MODE_SYS, HIST_MODE_US, HIST_MODE_GUEST_SYS, HIST_MODE_GUEST_US, HIST_MODES };

/* What a key reads or makes the engine do (hist_key_def.needs) */
enum {
	HKN_LOC      = 1 << 0,  /* its value is the location's (dso, symbol, source): not the sample context's */
	HKN_COMM     = 1 << 1,  /* the sample's comm */
	HKN_THREAD   = 1 << 2,  /* the sample's pid and tid (the loader keeps threads apart) */
	HKN_CPU      = 1 << 3,  /* the sample's cpu */
	HKN_CALLCHAIN = 1 << 4, /* the sample's callchain (the loader resolves it) */
	HKN_SRCLINE  = 1 << 5,  /* the locations' srclines, made before the pass (one thread) */
	HKN_LAZY     = 1 << 6,  /* perf computes the value while comparing: its order is replayed
				   and the column is as wide as the values it computed */
	HKN_LABEL    = 1 << 7,  /* a pprof label of the sample's thread */
	HKN_BRANCH   = 1 << 8,  /* the sample's branch stack */
	HKN_SUBSYM   = 1 << 9,  /* tells apart locations of one symbol */
	HKN_CPUMODE  = 1 << 10, /* the rows' Self periods by cpumode (hist.mode_period): the
				   reference path only (plan_stages.reference) */
	HKN_TIME     = 1 << 11, /* the raw samples' times (pf_profile.seq_time): the reference
				   path only */
	HKN_PARTIAL  = 1 << 12, /* perf's comparator is no order (mispredict: 0 equal, 1 not): rows are
				   found by perf's input-tree walks over the raw samples (tree mode) */
};

/* perf's collapse stage: does the key have a collapse comparator? */
enum { HKC_NONE, HKC_ALWAYS, HKC_DIFF };

/* A row's value of a key, comparable across files (diff pairing) */
typedef struct hist_key_value {
	const char *s;             /* string keys (NULL: no dso / unresolved symbol) */
	uint64_t n, n2;            /* numeric keys (pid/tid: tid, pid; cpu) */
} hist_key_value;

struct hist_key_src;           /* the sample and location a row is made from (lib/hist/keys.h) */
struct replay_ctx;             /* perf's tree replay (lib/hist/keys.h) */

typedef struct hist_key_def {
	const char *name;          /* "sym" */
	const char *alias;         /* "symbol" or NULL */
	const char *header;        /* "Symbol" */
	int id;                    /* its index in hist_keys[] (enum hist_key_id for the named ones) */
	unsigned needs;            /* HKN_* */
	int collapse;              /* HKC_*: perf's collapse comparator */
	size_t unresolved_width;   /* the column's width at least, when a row is unresolved and no --dsos */
	/* the row identity: two words from the sample and location (rows of
	 * equal words are one) */
	void (*words)(const hist *h, const struct hist_key_src *src, uint64_t w[2]);
	/* what a new row keeps of this key beyond the fields every row has, or NULL */
	void (*fill)(const hist *h, const struct hist_key_src *src, hist_entry *e);
	/* made once before the pass (one thread), or NULL; slot: the key's
	 * index in h->keys */
	int (*prepare)(hist *h, int slot, proff_error *err);
	/* output order / pairing comparator for this key in the hist's mode */
	int (*cmp)(const hist *h, const hist_entry *a, const hist_entry *b);
	/* where perf pairs a group member's rows with the leader's
	 * (hists__match) by another comparator than cmp's order: that one
	 * (a total order), else NULL (cmp) */
	int (*match)(const hist *h, const hist_entry *a, const hist_entry *b);
	/* perf's comparator of stage 0 (input), 1 (collapse) or 2 (output)
	 * on nodes l, r of a replay: perf's cmp(l, r) and its sign */
	int64_t (*perf_cmp)(const struct replay_ctx *c, int slot, int stage, uint32_t l, uint32_t r);
	/* a key without a field in perf's replay keys: its value there (a
	 * string id, compared by rank, when perf_str), else NULL */
	uint64_t (*perf_value)(const hist *h, const hist_entry *e);
	bool perf_str;
	/* width the cell needs for this entry (excluding padding) */
	size_t (*width)(const hist *h, const hist_entry *e);
	/* print the cell into buf (at most len bytes). width: column width;
	 * pad: pad to width (perf pads every column but an unpadded last symbol);
	 * sep: field separator (0 if none) — occurrences inside names become '.' */
	int (*print)(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep);
	/* pads its cell when it is the last column (perf's unpadded last symbol, srcline) */
	bool pad_last;
	/* the row's value compared across files (diff) */
	void (*value)(const hist *h, const hist_entry *e, hist_key_value *v);
	/* perf's output column the key is (HKP_*): a report shows such a
	 * column once (Overhead, Children, -n's Samples, --show-total-period's
	 * Period where the report has it already) */
	int hpp;
} hist_key_def;

/* hist_key_def.hpp: perf's hpp columns as sort keys */
enum { HKP_NONE, HKP_OVERHEAD, HKP_CHILDREN, HKP_SAMPLES, HKP_PERIOD, HKP_MODE };

extern const hist_key_def hist_keys[];
extern const int hist_nr_keys;
const hist_key_def *hist_key_find(const char *name);
/* the OR of the keys' needs (HKN_*) */
unsigned hist_keys_needs(const int *keys, int nkeys);

void hist_opts_init(hist_opts *o);
void hist_opts_release(hist_opts *o);
/* Parse a sort spec into key ids. Returns count or a negative error. */
int hist_parse_sort(const char *spec, int *keys, int max, proff_error *err);

/* The srcline stage (plan_stages.srclines, proff/plan.h): the srclines of
 * the locations that can be rows of event evsel's hist with opts (every
 * one with Children, the samples' own without) made into the profile, and
 * the srcfile key's file names; nothing without a srcline key. Before
 * hist_build, which reads them and makes none. 0 or an error. */
int hist_srclines(pf_profile *prof, uint32_t evsel, const hist_opts *opts, proff_error *err);
/* The rows of event evsel by opts' keys. The profile is only read (its
 * raw-sample sequence, once no hist needs it, the caller frees:
 * pf_profile_drop_sequence). */
int hist_build(const pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err);
void hist_free(hist *h);

/* --branch-history (lib/hist/branch-history.c): the keys it groups rows
 * by (srcline, sym, dso: the location's); and the rows' callchain trees
 * made from the profile's branch-history chains (pf_load_opts
 * .branch_history; rows built without callchains, their locations'
 * srclines made). 0, or an error. */
bool hist_bh_keys_ok(const int *keys, int nkeys);
int hist_branch_history_chains(hist *h, proff_error *err);

/* Compare two entries by the sort keys (the hist's mode), as perf's collapse/sort. */
int hist_entry_cmp_keys(const hist *h, const hist_entry *a, const hist_entry *b);
/* The rows' identity as perf's hists__match pairs an event group's rows
 * (each key's match comparator, else its cmp): a total order. */
int hist_entry_match_keys(const hist *h, const hist_entry *a, const hist_entry *b);
/* Sort entries in perf report order (Children or Self desc, then keys),
 * ties included: replays perf's tree insertions (lib/hist/perforder.c). */
void hist_sort_report(hist *h);
int hist_order_perf(hist *h);
/* Start computing perf's row order on a thread of its own (rows and their
 * totals final, callchain trees not needed); hist_order_perf then joins and
 * applies it. Without srcline keys only; otherwise a no-op. */
typedef struct hist_order hist_order;
void hist_order_start(hist *h);
void hist_order_discard(hist *h);
/* The same, streamed (hist_build's Children pass): begun before any row
 * exists or with the rows there handed over at once, each new row handed
 * over as it is created (ids in order), ended when the rows and totals are
 * final; perf's input tree is built by the thread meanwhile. Without
 * srcline keys only; otherwise no-ops. */
void hist_order_stream_begin(hist *h);
void hist_order_stream_row(hist *h, size_t id);
/* No more rows: the thread finishes the input and collapse trees. */
void hist_order_stream_rows_end(hist *h);
/* The rows' totals are final (after hist_order_stream_rows_end, or both). */
void hist_order_stream_end(hist *h);
/* perf's input tree as perf grows it (hist_build's tree mode): rows added
 * in creation order (row must be the next one), and perf's findnew walk
 * for a probe row's key: the row it stops at, -1 when it finds none equal
 * (perf then makes a new row, even when an equal one exists elsewhere in
 * the tree), -2 out of memory. */
typedef struct hist_itree hist_itree;
hist_itree *hist_itree_new(const hist *h);
void hist_itree_free(hist_itree *t);
int hist_itree_add(hist_itree *t, const hist *h, size_t row);
/* The same in two steps, for a pass on two threads: one thread stages
 * each new row's key (rows in order; nothing else of the tree is touched),
 * the other inserts the staged rows before `upto` — and rows that exist
 * outside h->entries yet (add_entry: a row not yet made, ref has
 * HIST_ITREE_DUP set; resolve_dups numbers them base + ref's index). The
 * walk returns such a reference while unresolved. */
#define HIST_ITREE_DUP 0x80000000u
int hist_itree_stage(hist_itree *t, const hist *h, size_t row);
int hist_itree_add_staged(hist_itree *t, const hist *h, size_t upto);
int hist_itree_add_entry(hist_itree *t, const hist *h, const hist_entry *e, uint32_t ref);
void hist_itree_resolve_dups(hist_itree *t, uint32_t base);
int64_t hist_itree_find(hist_itree *t, const hist *h, const hist_entry *probe);
/* A number that changes whenever the walk for a key of row's may change
 * (never 0): a walk's result holds while it stays the same. */
uint32_t hist_itree_version(const hist_itree *t, size_t row);
/* The same in two steps: row's group (one for the rows of one key), and a
 * group's version. */
uint32_t hist_itree_group_of(const hist_itree *t, size_t row);
uint32_t hist_itree_group_version(const hist_itree *t, uint32_t g);
/* The version at which the walk for row's key ends at row (row being its
 * key's first, inserted as a leaf that moved no node), else 0. */
uint32_t hist_itree_leaf_version(const hist_itree *t, size_t row);
/* perf's collapse tree over the input tree's in-order sequence: into[row]
 * is the row an equal one was merged into (UINT32_MAX: none); out gets the
 * rows as the output tree receives them (the collapse tree's in-order, or
 * without a collapse the input tree's), *nout of them. Returns the number
 * merged, -1 out of memory. */
int hist_itree_collapse(hist_itree *t, const hist *h, uint32_t *into, uint32_t *out, size_t *nout);
/* Column width of key k over the non-filtered entries (perf's hists__calc_col_len);
 * rows perf's collapse merged away do not count. */
size_t hist_key_col_width(const hist *h, int key_id);
/* The widths of every key but srcline (whose width perf's order sets),
 * computed now and kept for hist_key_col_width: they do not depend on the
 * rows' order, so a report computes them while perf's order is still being
 * made on another thread (before hist_sort_report). */
void hist_key_widths(hist *h);

/* Display names */
const char *hist_dso_name(const hist *h, const hist_entry *e);   /* short or long per verbose */
const char *hist_sym_name(const hist *h, const hist_entry *e);   /* NULL if unresolved */

#endif
