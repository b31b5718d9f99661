/* profile-int.h — the perf.data profile loader's state, shared by its files
 * (not a public header): profile.c reads the records into it (threads and
 * maps through machine.c, locations, the stack trie, aggregated samples);
 * profile-split.c reads one large file in two halves on two threads and
 * merges the second into the first; profile-unwind.c unwinds dwarf
 * callchains, profile-warnings.c words what a load could not read,
 * profile-free.c releases the state and frees a profile.
 */
#ifndef PROFF_MODEL_PROFILE_INT_H
#define PROFF_MODEL_PROFILE_INT_H

#include "proff/profile.h"
#include "proff/perfdata.h"
#include "proff/unwind.h"

#include "machine.h"
#include "tables.h"

typedef pf_range pmap;

typedef pf_mgroup mgroup;    /* its gen is part of the raw-stack keys */

#define LOC_CACHE_N 8192
typedef struct loc_cache_ent {
	uint64_t ip;
	uint32_t mg, gen, loc, cpumode;
} loc_cache_ent;

/* merge_threads, samples without callchain: (maps, ip) -> the leaf node,
 * with the samples' sums not yet added to the node's (node_acc); a hit
 * touches this entry only. count holds the pending count and the cpumode
 * (low 8 bits). */
#define LEAF_CACHE_N 16384
#define LEAF_COUNT_MAX 0xffffffu
typedef struct leaf_cache_ent {
	uint64_t ip;
	uint32_t mg, gen, node, count_mode;
	uint64_t period;
} leaf_cache_ent;

typedef pf_mthread pthread_;

/* A sample on its way through the loader's short pipeline (prof_on_event,
 * PEND_N stages: profile.c): a copy of the sample, its thread and, for
 * callchains, the packed raw-stack key and its hash, computed on arrival
 * so the table slot can be fetched ahead while earlier samples are
 * aggregated. */
typedef struct pend_sample {
	pd_sample s;              /* s.callchain points to cc */
	uint64_t *cc; size_t cap_cc;
	uint32_t thread;          /* index into threads */
	uint32_t cpu;             /* PF_NONE: the event has no cpu */
	uint8_t *key; size_t klen, cap_key;   /* RAW_HDR bytes of room, then the key */
	uint64_t h;
	bool keyed;               /* key and hash valid */
} pend_sample;

#define PEND_N 3

struct pf_profile_priv {
	pf_load_opts opts;
	uint64_t progress_first, progress_n;   /* opts.progress: first record's offset, records */
	proff_error *err;
	/* threads, map groups, the dso registry (over p->dsos), side-band records */
	pf_machine m;
	/* Once the kernel's symbols are loaded (m.kernel_dso), their extent:
	 * perf stretches the kernel map over its kallsyms text symbols, so an
	 * address outside the recorded map (.init.text: start_kernel) still
	 * finds the kernel */
	int kext_state;          /* 0 not asked yet, 1 known (kext_lo/hi), -1 none */
	uint64_t kext_lo, kext_hi;
	/* interning */
	pair_table loc_tab;      /* (dso, addr) -> loc; dso PF_NONE for no map */
	pair_table sym_tab;      /* (dso, start) -> sym */
	u32x2_table node_tab;    /* (parent, loc) -> node, hashed by path (trie_hash) */
	pair_table br_tab;       /* branch mode: (from, to << 32 | flags) -> branch (branch.c) */
	pair_table bh_tab;       /* branch history: location -> its chain-entry twin (branch.c) */
	uint32_t *phash; size_t cap_phash;   /* node -> its hash in node_tab */
	struct raw_slot *raw_s; size_t raw_cap, raw_len;   /* raw stacks: hash table of record refs */
	uint8_t **raw_chunks; size_t nraw_chunks, cap_raw_chunks;   /* raw-stack records (stack_of) */
	size_t raw_used;                            /* bytes used in the last chunk */
	struct pend_sample *pend; unsigned pend_head, npend;   /* the sample pipeline (on_event) */
	uw_ctx *uw;              /* dwarf callchains: the user stacks' unwinder (NULL: none) */
	uw_stats uw_done;        /* its counts, once released (and the second half's) */
	/* one file in two halves (load_split): 1 = the samples before split_t,
	 * 2 = the samples from split_t on; 0 = the whole file */
	int split_role;
	uint64_t split_t;
	bool split_on;           /* half 2: the split point has been met */
	bool split_read;         /* half 2: a sample at or after split_t was read (prefix_peek) */
	uint32_t *node_sample; size_t cap_node_sample;   /* node -> last sample with that stack */
	uint32_t *sample_next;   /* sample -> next sample with the same stack (cap: cap_samples) */
	struct node_acc *acc; size_t cap_acc;             /* merge_threads: sums per node */
	uint32_t *acc_order; size_t nacc, cap_acc_order;  /* nodes in order of first sample */
	pf_level_note *acc_notes; size_t nacc_notes, cap_acc_notes;   /* level notes by acc_order index */
	/* time filter */
	pf_time_range *ranges; size_t nranges;
	uint32_t *loc_leaf; size_t cap_loc_leaf;   /* location -> its node under the root */
	loc_cache_ent *loc_cache;                   /* LOC_CACHE_N entries (resolve_loc) */
	leaf_cache_ent *leaf_cache;                 /* LEAF_CACHE_N entries, or NULL (merged_ip_sample) */
	/* scratch */
	uint32_t *scratch_locs; size_t cap_scratch;
	struct frame_miss *scratch_miss; size_t cap_miss;   /* build_stack */
	/* the last stack built, root first: its locations and nodes (build_stack) */
	uint32_t *path_locs, *path_nodes, *path_hash; size_t path_len, cap_path, cap_path_nodes, cap_path_hash;
	const pd_reader *rd;
	uint64_t lost;
};

#define SPLIT_STOP 2    /* on_event: the first half is done (load_split) */

/* The stack trie's table is keyed by (parent, location) but hashed by the
 * whole path: a node's hash is trie_hash(its parent's, its location), the
 * root's 0. A path's hashes follow from its locations alone, so the slots
 * of all its frames can be fetched before the first is found (with the
 * parent's id in the hash, each lookup waited for the one before: a chain
 * of cache misses per stack). pr->phash[node]: the node's hash. */
static inline uint32_t trie_hash(uint32_t parent_hash, uint32_t loc)
{
	return (uint32_t)u32x2_hash(parent_hash, loc);
}

static inline void trie_prefetch(const struct pf_profile_priv *pr, uint32_t hash)
{
	if (pr->node_tab.cap)
		__builtin_prefetch(&pr->node_tab.s[hash & (pr->node_tab.cap - 1)], 1);
}

/* Does aggregated sample s take a sample of this key (its stack aside)?
 * With merge_by_comm, the event and comm decide; the first sample's
 * thread, pid, tid and cpu stand for the rest. */
static inline bool same_key(const struct pf_profile_priv *pr, const pf_sample *s, uint32_t evsel,
			    uint32_t pid, uint32_t tid, uint32_t comm, uint32_t cpu, uint32_t thread)
{
	if (s->evsel != evsel || s->comm != comm)
		return false;
	return pr->opts.merge_by_comm ||
	       (s->pid == pid && s->tid == tid && s->cpu == cpu && s->thread == thread);
}

/* ---- profile.c, for profile-split.c ---------------------------------------------------- */

int prof_oom(pf_profile *p);
/* a profile of path with its loader state, nothing read yet */
int prof_new(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err);
/* events, the machine's start, the trie's root, from an open reader */
int prof_perf_setup(pf_profile *p, pd_reader *rd);
/* pd_process's callback: one record (SPLIT_STOP: the first half is done) */
int prof_on_event(void *ctx, const pd_event *ev);
/* the end of a read: the pipeline drained, pending sums flushed, merged samples made */
int prof_finish_read(pf_profile *p, int rc);
void prof_take_warnings(pf_profile *p, const pd_reader *rd);
void prof_release_read_state(struct pf_profile_priv *pr);
void prof_release_tables(struct pf_profile_priv *pr);
int prof_drain_samples(pf_profile *p);
void prof_leaf_flush_all(struct pf_profile_priv *pr);
int prof_make_merged_samples(pf_profile *p);
int prof_add_note(pf_level_note **v, size_t *n, size_t *cap, uint32_t id, char level);
uint32_t prof_loc_intern(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip, char level,
			 bool lookup, uint32_t sym);
uint32_t prof_node_child(pf_profile *p, uint32_t parent, uint32_t loc);
uint32_t prof_nochain_node(pf_profile *p, uint32_t loc);
/* the location of ip in the thread's maps of cpumode (PF_NONE: out of memory) */
uint32_t prof_resolve_loc(pf_profile *p, const pthread_ *t, int cpumode, uint64_t ip);
/* a sample of thread index `thread` whose stack is known, into its
 * aggregate and the totals (the pipeline drained before) */
int prof_sample_add(pf_profile *p, const pd_sample *s, uint32_t thread, uint32_t cpu, uint32_t stack);
/* branch mode (branch.c): every branch of sample s's stack as a sample of
 * period 1; 0, or a negative proff code */
int prof_branch_sample(pf_profile *p, const pthread_ *t, const pd_sample *s, uint32_t thread, uint32_t cpu);
/* branch history (branch.c): sample s as a sample of its ip alone, and
 * its chain (perf's cursor) into p->bh_samples; 0, or a negative code */
int prof_bhist_sample(pf_profile *p, const pthread_ *t, const pd_sample *s, uint32_t thread, uint32_t cpu);
/* the one-frame stack of sample s's ip (PF_NONE: out of memory) */
uint32_t prof_ip_leaf(pf_profile *p, const pthread_ *t, const pd_sample *s);
/* a dso's symbolizer handle, opened on first use (NULL: none) */
sym_dso *prof_dso_sd(pf_profile *p, uint32_t dso);

/* ---- profile-unwind.c, profile-warnings.c, profile-free.c ----------------------- */

/* a sample with user registers and stack: *us with the chain perf's report
 * resolves (-1: out of memory) */
int prof_unwound_chain(pf_profile *p, const pthread_ *t, const pd_sample *s, pd_sample *us);
/* what the load could not read, into p->warnings (once per file) */
void prof_load_warnings(pf_profile *p);
/* the arrays' room beyond their size handed back */
void prof_fit_arrays(pf_profile *p);
/* all the loader's state: read state, tables, the machine */
void prof_release_load_state(struct pf_profile_priv *pr);

/* The loc_tab key's dso part of location (dso, addr): the dso, but for the
 * no-map location at address UINT64_MAX (the unwinder's frame of a return
 * address 0: perf's 0 - 1), whose (PF_NONE, UINT64_MAX) is the table's
 * empty pair, a dso index no profile reaches. */
static inline uint32_t prof_loc_key(uint32_t dso, uint64_t addr)
{
	return dso == PF_NONE && addr == UINT64_MAX ? 0x7fffffffu : dso;
}

/* ---- profile-split.c ------------------------------------------------------------------ */

/* Is the file worth reading in two halves, and where do they part (*t)? */
bool prof_split_time(const pf_profile *p, pd_reader *rd, uint64_t *t);
/* the file read in two halves, parting at time t, the second merged into p */
int prof_load_split(pf_profile *p, pd_reader *rd, uint64_t t, proff_error *err);

#endif
