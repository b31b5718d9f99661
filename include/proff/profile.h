/* proff/profile.h — the in-memory profile every command works on.
 *
 * A profile is read once from a file (perf.data, or an exact trace of
 * proff record --instrument: calls become samples whose period is their
 * exclusive time in ns, count 1 per call) into compact, interned form:
 *   - dsos: one per recorded object (path + build-id), with its symbolizer handle;
 *   - syms: symbol instances (dso, start, end, name) found while resolving;
 *   - locs: unique code locations (dso, map address) resolved ONCE to a sym;
 *   - nodes: a trie of call stacks (leaf -> parent -> ... -> root), one node per
 *     (parent, loc), so identical stacks share storage;
 *   - samples: aggregated by (event, pid, tid, comm, cpu, stack) with summed
 *     period and count.
 * Reports, diffs and streams then work per unique stack, never per sample.
 *
 * Filters that drop samples entirely (--time, --cpu) are applied while
 * loading (pf_load_opts); filters that only hide rows (--comms, --dsos,
 * --symbols, --pid, --tid) are applied later by the hist layer.
 */
#ifndef PROFF_PROFILE_H
#define PROFF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/error.h"
#include "proff/symbol.h"
#include "proff/util.h"

#define PF_NONE UINT32_MAX

typedef struct pf_dso {
	uint32_t long_name;        /* string id: recorded path ("[kernel.kallsyms]", "/usr/lib/.../libc.so.6") */
	uint32_t short_name;       /* string id: basename, or the bracketed name */
	enum sym_dso_kind kind;
	sym_dso *sd;               /* symbolizer handle (may be NULL) */
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint64_t map_size;         /* its first executable map's length (perf's dso_size key), 0: none */
	uint64_t ino;              /* the inode of its first MMAP2 (perf's dso id), 0: none */
	uint64_t kmod_start;       /* a kernel module: its first map's start (where its .text is) */
	bool has_kmod_start;
} pf_dso;

typedef struct pf_sym {
	uint32_t dso;
	uint32_t name;             /* string id */
	uint64_t start, end;       /* map-address space */
} pf_sym;

typedef struct pf_loc {
	uint64_t addr;             /* map address (file-offset space for user dsos; the ip if no map) */
	uint64_t ip;               /* runtime ip: unresolved locations are kept per raw ip (perf shows
	                            * callchain entries by raw ip), resolved ones keep the first seen */
	uint32_t dso;              /* PF_NONE: no map covered the address */
	uint32_t sym;              /* index into syms, PF_NONE: unresolved */
	uint32_t srcline;          /* string id of "file:line" (perf's text), PF_NONE until computed */
	char level;                /* '.' user, 'k' kernel, 'g' guest kernel, 'u' guest user, 'H' hypervisor */
} pf_loc;                      /* 32 bytes */

typedef struct pf_node {
	uint32_t parent;           /* node index; 0 is the root (no location) */
	uint32_t loc;              /* location of this frame */
	uint32_t depth;            /* 1 for the leaf-most frame under the root */
} pf_node;

typedef struct pf_thread {
	uint32_t pid, tid;
	uint32_t comm;             /* string id of the thread's last comm (perf's width rule uses it) */
} pf_thread;

/* A sample label of a pprof profile (lib/formats): key and value as
 * strings; a numeric label's value is its number as text, with its unit
 * when it has one ("4096 bytes"). */
typedef struct pf_label {
	uint32_t key;              /* string id */
	uint32_t value;            /* string id of the value's text */
	int64_t num;               /* numeric labels: the number */
	uint32_t unit;             /* numeric labels: string id of the unit, 0 if none */
	bool is_num;
} pf_label;

typedef struct pf_sample {
	uint32_t evsel;
	uint32_t thread;           /* index into threads */
	uint32_t pid, tid;
	uint32_t comm;             /* string id of the thread's comm at sample time */
	uint32_t cpu;              /* PF_NONE if the file has no CPU field */
	uint32_t stack;            /* node of the sample ip; callers reached through parent links */
	uint32_t count;            /* number of samples (a full one is continued in another
	                            * pf_sample with the same key: consumers sum) */
	uint64_t period;           /* summed */
} pf_sample;                   /* 40 bytes */

/* Branch mode (pf_load_opts.branch_mode): one branch of a sample's branch
 * stack, as perf's report -b makes a row of each — where it jumped from
 * and to (locations resolved as perf resolves branch addresses: a kernel
 * map first, then the process's), and its flags word's low bits. */
typedef struct pf_branch {
	uint32_t from, to;         /* locations */
	uint32_t flags;            /* bit 0 mispredicted, 1 predicted, 2 in_tx, 3 abort,
				      4-19 cycles, 20-23 type (perf_branch_entry's) */
} pf_branch;
#define PF_BR_MISPRED  1u
#define PF_BR_PREDICTED 2u
#define PF_BR_IN_TX    4u
#define PF_BR_ABORT    8u
static inline unsigned pf_branch_cycles(const pf_branch *b) { return (b->flags >> 4) & 0xffff; }

/* Branch history: one entry of a sample's chain (perf's callchain cursor
 * node) — a branch's target (PF_BH_TO: flags, the branch's), its source
 * (flags; iter: the loop iterations removed before it and
 * their cycles) or a callchain entry (neither bit) */
typedef struct pf_bh_entry {
	uint32_t loc;
	/* its row's location in Children mode: loc's twin, whose srcline
	 * is perf's callchain text of it (a symbol's "sym+off" loses the
	 * symbol: "+off", a row apart from the sample's own "sym+off") */
	uint32_t row_loc;
	uint32_t flags;            /* pf_branch's flags | PF_BH_BRANCH | PF_BH_TO */
	/* a source's loop iterations removed before it (perf counts at most
	 * 127 branches: 7 bits) << 24 | their cycles (at most 127 * 65535) */
	uint32_t iter;
} pf_bh_entry;                 /* 16 bytes: one per branch end of every sample */
static inline unsigned pf_bh_iter(const pf_bh_entry *e) { return e->iter >> 24; }
static inline unsigned pf_bh_iter_cycles(const pf_bh_entry *e) { return e->iter & 0xffffff; }
/* a typed target's geometry (perf's branch type statistics): the branch
 * went forward, crossed a 2 MiB or (else) a 4 KiB boundary; PF_BH_NO_FROM:
 * its source address was 0 (perf counts no type then) */
#define PF_BH_FWD      (1u << 24)
#define PF_BH_CROSS_2M (1u << 25)
#define PF_BH_CROSS_4K (1u << 26)
#define PF_BH_NO_FROM  (1u << 27)
#define PF_BH_BRANCH (1u << 30)
#define PF_BH_TO     (1u << 31)
typedef struct pf_bh_sample {
	uint32_t evsel;
	uint32_t loc;              /* the sample's own location (its row's) */
	uint32_t n;                /* entries */
	uint32_t thread;           /* profile thread index */
	uint32_t comm, pid, tid;   /* the sample's (comm: string id, at sample time) */
	uint32_t cpu;              /* PF_NONE without a CPU field */
	size_t first;
	uint64_t period;
} pf_bh_sample;

/* A sample whose own level ('.', 'k', ...: perf's, from the cpumode of its
 * first sample) is not its leaf location's: a location without a map is
 * shared by every cpumode that meets its address and keeps the first one's
 * level. Rare; see pf_sample_level. */
typedef struct pf_level_note {
	uint32_t sample;
	char level;
} pf_level_note;

typedef struct pf_event {
	char *name;                /* "cpu-clock" */
	uint32_t unit;             /* string id of the period's unit ("nanoseconds", "bytes"), 0: unknown */
	uint32_t type;
	uint64_t config;
	uint64_t sample_type;
	bool has_callchain;
	bool has_cpu;
	bool has_branch_stack;
	uint64_t total_period;     /* after --time/--cpu drops */
	uint64_t nr_samples;
	uint64_t nr_lost;          /* lost sample records attributed to this event */
} pf_event;

/* Exact profiles only: per aggregated sample (one call path of one thread),
 * the calls' inclusive times. Self periods are exclusive times in ns. */
typedef struct pf_exact {
	uint64_t incl;             /* summed inclusive ns (every activation, recursion included) */
	uint64_t min, max;         /* inclusive ns of one call */
} pf_exact;

/* One raw sample in the order they were read (perf's order of processing
 * them): its aggregated sample, its own thread (merge_by_comm keeps the
 * first sample's in the aggregate) and period. Kept with
 * pf_load_opts.keep_sequence, for perf's input tree where its walks depend
 * on the order (lib/hist, tree mode). 12 bytes a raw sample: a period of
 * PF_SEQ_BIG or more is PF_SEQ_BIG here and in full in pf_profile.seq_big
 * (pf_seq_period reads either). */
typedef struct pf_seq {
	uint32_t sample, thread;
	uint32_t period;
} pf_seq;
#define PF_SEQ_BIG UINT32_MAX
typedef struct pf_seq_big { uint64_t at, period; } pf_seq_big;   /* ascending by at */

typedef struct pf_time_range { uint64_t start, end; } pf_time_range;   /* ns, end 0 = open */

typedef struct pf_load_opts {
	const char *symfs;
	const char *kallsyms;
	const char *buildid_dir;
	bool use_callchain;        /* keep callchains (default true) */
	int max_stack;             /* 0 = unlimited */
	/* --time: either absolute ranges or percent ranges (resolved against the
	 * file's first/last sample time) */
	const char *time_spec;     /* perf's --time syntax for this file, or NULL */
	const uint8_t *cpu_mask;   /* --cpu: bitmap of CPUs kept (NULL = all) */
	size_t cpu_mask_bits;
	/* Callchain entries expanded into their inlined frames as perf's
	 * --inline does (pf_profile_expand_inlines), for profiles with
	 * callchains */
	bool inline_frames;
	/* perf's callchain order when it resolves a sample (caller: the root
	 * first), the order in which its addr2line is asked about addresses:
	 * binutils names a function without a linkage name by the symbol table
	 * at its first query (sym_inline_frame.a2l_key) */
	bool inline_root_first;
	/* Aggregate samples by event and stack only (thread, comm, pid, tid
	 * and cpu left out, the samples' thread index 0): for callers whose
	 * sort keys and filters use none of them (perf diff's dso,sym). */
	bool merge_threads;
	/* Aggregate samples by event, comm and stack: the first sample's
	 * thread, pid, tid and cpu stand for the others of its key (for sort
	 * keys and filters that look at none of them but comm; perf's row
	 * order still sees the thread of each row's first sample). */
	bool merge_by_comm;
	/* Bytes of raw callchains kept to find repeated stacks with one hash
	 * probe (0: 2 MiB); a full cache starts afresh. Speed only: the
	 * profile is the same for any size. */
	size_t stack_cache_bytes;
	bool demangle_params;      /* C++ names with parameter lists (perf -v) */
	/* Binaries' symbol tables shared with other profiles read with the
	 * same symbol options (sym_opts.user_dsos; NULL: the profile's own). */
	struct sym_ctx *shared_syms;
	/* A large file may be read by two threads (two halves by time, merged:
	 * the same profile as one sequential read): files whose data section
	 * has at least split_min_bytes (0: 16 MiB). */
	bool split_load;
	uint64_t split_min_bytes;
	/* The split read's merge runs on two threads from so many nodes of
	 * the second half (0: 65536); the profile is the same either way. */
	size_t split_merge_min;
	/* --call-graph dwarf samples: the unwinder's remembered walks (enum
	 * uw_memo, proff/unwind.h: 0 on; off; check, which walks every
	 * recalled sample as well and says in a warning how many differed).
	 * Speed only: the profile is the same. */
	int unwind_memo;
	/* Keep every raw sample's place in the order of reading (pf_seq);
	 * not with merge_threads */
	bool keep_sequence;
	/* and each raw sample's time with it (pf_profile.seq_time): a sort
	 * key by time; not with a split load */
	bool keep_time;
	/* exact traces (proff record --instrument): */
	bool no_compensate;        /* raw times, no overhead subtraction */
	bool have_overheads;       /* use o_in_ns / o_full_ns instead of the recorded estimate */
	double o_in_ns, o_full_ns;
	/* pprof profiles (lib/formats): the sample type read, by name or
	 * index (NULL: the default, the last one, as pprof does) */
	const char *sample_type;
	/* pprof profiles: only the samples whose label NAME has one of the
	 * values ("NAME=VALUE[,VALUE...]", as pprof's -tagfocus; NULL: all) */
	const char *label_filter;
	/* pprof profiles: only the samples whose label label_is[i].key has
	 * exactly the value label_is[i].value (a numeric label's as text: the
	 * number, a space and the unit if it has one) — the runs `proff diff
	 * --replicate/--groups-by` makes of one file. key NULL: not used. */
	struct { const char *key, *value; } label_is[2];
	/* Where the read is, for a progress line: called every few thousand
	 * records from the reading thread (part 0: the whole file; 1 and 2:
	 * the halves of a split read, on two threads) with the bytes of the
	 * data section that part has read. NULL: not called. */
	void (*progress)(void *ctx, unsigned part, uint64_t done, uint64_t total);
	void *progress_ctx;
	/* perf report -b: every entry of a sample's branch stack is a sample
	 * of period 1 (perf's pseudo period: rows count branches) whose stack
	 * is a node of its own for the branch (pf_node_branch), its location
	 * the branch's target; samples without branch stacks count nothing.
	 * The file is read in one part. */
	bool branch_mode;
	/* perf report --branch-history: each sample's branch stack, newest
	 * first, loops removed, every branch giving its target then its
	 * source, before what is left of its callchain (perf's cursor), kept
	 * per raw sample (pf_profile.bh_samples); the sample itself is one of
	 * its ip alone. The file is read in one part. */
	bool branch_history;
	bool branch_history_caller;   /* the chains in caller order (perf's -g caller) */
	/* perf's --max-stack for the chains: the branches kept at most, and
	 * the callchain entries at most; -1: perf's default, 127 */
	int branch_history_max_stack;
} pf_load_opts;

typedef struct pf_profile {
	char *path;
	pf_strtab strs;
	pf_dso *dsos;   size_t nr_dsos, cap_dsos;
	pf_sym *syms;   size_t nr_syms, cap_syms;
	pf_loc *locs;   size_t nr_locs, cap_locs;
	pf_node *nodes; size_t nr_nodes, cap_nodes;
	/* Per node, non-zero: a sample's own ip whose callchain was discarded
	 * (a corrupt chain, as perf discards it): no callchain entries, not even
	 * the ip itself. NULL when no such node exists. */
	uint8_t *nochain; size_t cap_nochain;
	/* Inlined frames (pf_profile_expand_inlines): per location, the one
	 * it was made from — an inlined frame's location the real location of
	 * its address, others themselves; NULL when nothing was expanded. A
	 * sample's Self row is its leaf's real location (pf_leaf_loc). */
	uint32_t *loc_real;
	/* Per symbol with loc_real: PF_NONE for a real one; for an inlined
	 * function's frame (named "NAME (inlined)", over the range of the
	 * real symbol it was inlined into) the first inlined symbol of that
	 * name (perf matches inlined callchain entries by name). */
	uint32_t *sym_inlined;
	pf_sample *samples; size_t nr_samples, cap_samples;
	pf_level_note *level_notes; size_t nr_level_notes, cap_level_notes;   /* ascending by sample */
	pf_seq *seq; size_t nr_seq, cap_seq;   /* pf_load_opts.keep_sequence */
	pf_seq_big *seq_big; size_t nr_seq_big, cap_seq_big;   /* the periods seq does not hold */
	uint64_t *seq_time; size_t cap_seq_time;   /* pf_load_opts.keep_time: seq[i]'s time, ns */
	pf_exact *exact;           /* exact trace: parallel to samples; NULL for sampled profiles */
	size_t cap_exact;
	/* exact trace: what it could not tell exactly (synthetic exits, clamped
	 * times ... per kind, with the functions most affected; include/proff/trace.h).
	 * The CLI warns about it; NULL for sampled profiles */
	struct proff_trace_quality *trace_quality;
	pf_event *events; size_t nr_events;
	pf_thread *threads; size_t nr_threads;
	uint64_t nr_lost_samples;  /* "Total Lost Samples" */
	uint64_t first_time, last_time;
	bool has_branch_stack_feature;
	sym_ctx *syms_ctx;
	struct pf_profile_priv *priv;   /* loader state (hash tables) */
	char **warnings; size_t nr_warnings;
	/* pprof labels (lib/formats): a profile read from pprof has one
	 * thread per (pid, tid, comm, label set); thread_labels[thread] is its
	 * set. Set i is labels[label_sets[i] .. label_sets[i + 1]), sorted by
	 * key id; set 0 is empty. All NULL when the profile has no labels. */
	uint32_t *thread_labels;
	pf_label *labels; size_t nr_labels;
	uint32_t *label_sets; size_t nr_label_sets;
	/* branch mode (pf_load_opts.branch_mode): the distinct branches, and
	 * per node the branch it stands for (PF_NONE: none); NULL otherwise */
	pf_branch *branches; size_t nr_branches, cap_branches;
	uint32_t *node_branch; size_t cap_node_branch;
	/* branch history (pf_load_opts.branch_history): per raw sample its
	 * chain, bh_entries[first .. first + n), in perf's cursor order */
	struct pf_bh_sample *bh_samples; size_t nr_bh_samples, cap_bh_samples;
	struct pf_bh_entry *bh_entries; size_t nr_bh_entries, cap_bh_entries;
} pf_profile;

void pf_load_opts_init(pf_load_opts *o);
/* Does the file start like an exact trace (proff record --instrument)?
 * pf_profile_load reads both kinds. */
bool pf_is_trace_file(const char *path);
int pf_profile_load(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err);
void pf_profile_free(pf_profile *p);
/* perf report's branch mode and the perf.data file at path: *by_default,
 * perf switches to it unasked (the file's HEADER_BRANCH_STACK feature is
 * set and no event samples user stacks, which perf's rule excludes);
 * *sampled, some event samples branch stacks (-b needs it). 0, or a
 * negative proff code when the file cannot be opened (err set). */
int pf_file_branch_stacks(const char *path, bool *by_default, bool *sampled, proff_error *err);
/* The srclines of the branch-history chains' locations made (perf labels
 * each chain entry with its source line), and their twins' (perf's
 * callchain text). Before any other srcline stage. 0, or -1 out of memory. */
int pf_bhist_srclines(pf_profile *p);
/* The branch a node stands for in branch mode, NULL for other nodes */
static inline const pf_branch *pf_node_branch(const pf_profile *p, uint32_t node)
{
	if (!p->node_branch || node >= p->cap_node_branch || p->node_branch[node] == UINT32_MAX)
		return NULL;
	return &p->branches[p->node_branch[node]];
}
/* The raw samples' sequence (pf_load_opts.keep_sequence) freed once no
 * more reports need it: its memory serves what comes after. */
void pf_profile_drop_sequence(pf_profile *p);

static inline const char *pf_str(const pf_profile *p, uint32_t id) { return p->strs.strs[id]; }

/* The value (string id) of the label whose key is string id key of a
 * thread's samples, PF_NONE when they have none. */
static inline uint32_t pf_label_value(const pf_profile *p, uint32_t thread, uint32_t key)
{
	uint32_t set = p->thread_labels && thread < p->nr_threads ? p->thread_labels[thread] : 0;
	if (!set || set >= p->nr_label_sets)
		return PF_NONE;
	for (uint32_t i = p->label_sets[set]; i < p->label_sets[set + 1]; i++)
		if (p->labels[i].key == key)
			return p->labels[i].value;
	return PF_NONE;
}

/* The period of raw sample i (p->seq[i]) */
uint64_t pf_seq_period_big(const pf_profile *p, size_t i);
static inline uint64_t pf_seq_period(const pf_profile *p, size_t i)
{
	uint32_t v = p->seq[i].period;
	return v != PF_SEQ_BIG ? v : pf_seq_period_big(p, i);
}
/* Raw sample (sample, thread, period) appended to p->seq, whose room is
 * made (cap_seq); the period's overflow entry grown as needed. */
int pf_seq_push(pf_profile *p, uint32_t sample, uint32_t thread, uint64_t period);
static inline bool pf_node_nochain(const pf_profile *p, uint32_t node)
{
	return p->nochain && node < p->cap_nochain && p->nochain[node];
}

/* The location of a sample's own ip for its Self row: the stack's leaf
 * location, or, where the leaf is an inlined frame, the real one. */
static inline uint32_t pf_leaf_loc(const pf_profile *p, uint32_t node)
{
	uint32_t l = p->nodes[node].loc;
	return p->loc_real ? p->loc_real[l] : l;
}

/* Does location cur, met right after prev in a leaf-first chain, belong
 * to the same unwound frame (an outer inlined entry of prev's address)?
 * pf_profile_expand_inlines makes a location's frames consecutive
 * locations, innermost first. */
static inline bool pf_loc_continues(const pf_profile *p, uint32_t prev, uint32_t cur)
{
	return p->loc_real && p->loc_real[cur] != cur && cur == prev + 1 && p->loc_real[prev] == p->loc_real[cur];
}

/* Is symbol sym an inlined function's frame? */
static inline bool pf_sym_is_inlined(const pf_profile *p, uint32_t sym)
{
	return p->sym_inlined && p->sym_inlined[sym] != PF_NONE;
}

/* Every callchain entry of a resolved symbol replaced by the inlined
 * frames at its address, innermost first (the innermost with the
 * address's line, each next with its call site), the outermost being the
 * real symbol when DWARF names it so: perf report's --inline. Each
 * location's frames are looked up once (sym_inlines), in the order perf's
 * report asks addr2line (the samples' order, each chain root first when
 * root_first), for binutils' first-query names. Samples keep their
 * real leaf for the Self row (loc_real). 0, or a negative proff code. */
int pf_profile_expand_inlines(pf_profile *p, bool root_first, proff_error *err);

/* The level of sample si's own ip, as perf shows it for the sample: its leaf
 * location's unless a note says otherwise. */
char pf_sample_level(const pf_profile *p, size_t si);

/* perf's srcline text for a location ("file.c:42", or "sym+0x1f"-style
 * fallbacks as perf prints them); computed once and cached. */
const char *pf_loc_srcline(pf_profile *p, uint32_t loc);
/* pf_loc_srcline for every location whose byte in want is non-zero (want
 * NULL: every location), made one binary at a time and each binary's DWARF
 * data released after its last location: the memory of one binary's line
 * tables at once rather than all of them. Locations made before are kept.
 * 0, or -1 out of memory (then made one by one, nothing released). */
int pf_locs_srclines(pf_profile *p, const uint8_t *want);

/* Parse perf's --time syntax ("a%-b%", "10%/2", "start,stop", with ':'
 * separating per-file ranges when several files are given) for file index
 * `file_idx` of `nfiles`. Exposed for tests. */
int pf_parse_time_spec(const char *spec, size_t file_idx, size_t nfiles,
		       uint64_t first, uint64_t last,
		       pf_time_range **ranges, size_t *nranges, proff_error *err);

/* perf report --tasks (--mmaps: with each thread's maps): the threads of a
 * perf.data file as perf 6.1 prints them, a tree of who forked whom
 * (lib/model/tasks.c). Reads r once. */
#include <stdio.h>
struct pd_reader;
int pf_tasks_print(struct pd_reader *r, bool mmaps, FILE *out, proff_error *err);

#endif
