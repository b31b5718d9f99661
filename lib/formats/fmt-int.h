/* fmt-int.h — what the readers and writers of lib/formats share (not a
 * public header): a builder of profiles that come with their symbols
 * (pprof, folded stacks: names, not addresses to look up in binaries), and
 * the input helpers (whole files, standard input, gzip).
 *
 * A built profile has no symbolizer (syms_ctx NULL) and no loader state
 * (priv NULL): its symbols are the file's names, each dso's symbols get
 * addresses of their own where the file has none (a name's first frame
 * decides its order), so every key and comparison of lib/hist works as on
 * perf.data.
 */
#ifndef PROFF_FORMATS_INT_H
#define PROFF_FORMATS_INT_H

#include "proff/formats.h"
#include "../model/tables.h"

typedef struct fmt_build {
	pf_profile *p;
	proff_error *err;
	const pf_load_opts *opts;
	pf_map64 dso_of_name;        /* long-name string id -> dso */
	pair_table sym_tab;          /* (dso, caller's key) -> sym */
	u32x2_table node_tab;        /* (parent, loc) -> node, hashed by the whole path (fmt_path) */
	uint32_t *phash; size_t cap_phash;   /* node -> its path's hash */
	/* the last path built, root first: its locations, nodes and hashes */
	uint32_t *path_locs, *path_nodes, *path_hash; size_t path_len, cap_path;
	pair_table comm_tab;         /* (comm, pid | tid << 32) -> thread without labels */
	pair_table thread_tab;       /* (label set, that thread) -> thread */
	pair_table sample_tab;       /* (thread, stack | cpu << 32) -> first sample */
	pf_map64 set_of_hash;        /* label set hash -> set (chained through set_next) */
	uint32_t *set_next; size_t cap_set_next;
	size_t cap_threads, cap_thread_labels, cap_labels, cap_sets, cap_warnings;
	uint32_t *base_of;           /* thread -> its thread without labels */
	size_t cap_base_of;
	uint32_t last_key[4], last_thread;   /* the last thread found (pid, tid, comm, set) */
	uint64_t raw;                /* raw samples added (the file's records) */
} fmt_build;

/* A profile named name with one event (its name and the period's unit), the
 * stack trie's root and label set 0. 0, or a negative error (err set). */
int fmt_build_init(fmt_build *b, const char *name, const char *event, const char *unit,
		   const pf_load_opts *opts, proff_error *err);
/* An event's perf type and config from its name (perf's generic events:
 * cpu-clock is software 0, ...); other names get PF_EVENT_TYPE_NAMED and
 * a hash of the name, so that events pair by name across profiles */
void fmt_event_kind(pf_event *e);
/* The profile, finished: events' totals and kinds, arrays cut to size. b is spent. */
pf_profile *fmt_build_finish(fmt_build *b);
/* Frees the profile under construction (after an error). */
void fmt_build_abort(fmt_build *b);

/* "out of memory" for the profile (returns its code) */
int fmt_oom(fmt_build *b);
/* A format error at byte offset off (PROFF_NO_OFFSET: none), or with a line */
int fmt_err_at(fmt_build *b, uint64_t off, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int fmt_err_line(fmt_build *b, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* A warning for the CLI (p->warnings), naming the file */
void fmt_warn(fmt_build *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* string id of s[0, len) (-1: out of memory) */
int64_t fmt_str(fmt_build *b, const char *s, size_t len);
/* The dso of a path or bracketed name (its kind from the name, as perf's:
 * "[kernel.kallsyms]" kernel, "[vdso]", ...) with its build id; PF_NONE
 * out of memory. */
uint32_t fmt_dso(fmt_build *b, const char *name, size_t len, const uint8_t *bid, size_t bid_len);
/* The symbol (dso, key) — key is the caller's identity for it (a name's
 * string id, a pprof function) — made with name, start and end if new;
 * *made tells. PF_NONE out of memory. */
uint32_t fmt_sym(fmt_build *b, uint32_t dso, uint64_t key, uint32_t name, uint64_t start, uint64_t end,
		 bool *made);
/* A new location (no lookup: callers keep their own). srcline: string id
 * or PF_NONE. */
uint32_t fmt_loc(fmt_build *b, uint32_t dso, uint32_t sym, uint64_t addr, uint64_t ip, char level,
		 uint32_t srcline);
/* The stack trie's node of the path locs[0, n) (root first); 0 for n 0,
 * PF_NONE out of memory */
uint32_t fmt_path(fmt_build *b, const uint32_t *locs, size_t n);
/* The label set of labels[0, n) (their order does not matter; sorted here,
 * labels is reordered), 0 for none; PF_NONE out of memory. */
uint32_t fmt_label_set(fmt_build *b, pf_label *labels, size_t n);
/* The thread of (pid, tid, comm string id, label set) */
uint32_t fmt_thread(fmt_build *b, uint32_t pid, uint32_t tid, uint32_t comm, uint32_t set);
/* One raw sample (a record of the file): period and count added to the
 * aggregated sample of (thread, cpu, stack). 0, a negative error, or
 * FMT_OVERFLOW (err not set: the caller names the place) when the
 * stack's periods add up to more than 2^64 - 1. */
#define FMT_OVERFLOW (-100)
int fmt_sample(fmt_build *b, uint32_t thread, uint32_t cpu, uint32_t stack, uint64_t period, uint64_t count);

/* ---- input ---------------------------------------------------------------------- */

/* A whole input in memory: mapped (a regular file) or read (standard
 * input, a pipe), decompressed when it was gzip data. */
typedef struct fmt_input {
	const uint8_t *data;
	size_t len;
	void *map; size_t map_len;   /* a mapping to unmap */
	uint8_t *buf;                /* a buffer to free */
} fmt_input;

/* data[0, len) decompressed into in when it is gzip data (1), else
 * nothing done (0); negative: an error naming `name` and the offset. At
 * most PF_ALLOC_LIMIT bytes of output. */
int fmt_gunzip(const uint8_t *data, size_t len, const char *name, fmt_input *in, proff_error *err);
void fmt_input_free(fmt_input *in);

/* The readers on data known not to be gzip data (unzipped: it was, and
 * error offsets are in the decompressed bytes) */
int fmt_pprof_read(const uint8_t *data, size_t len, const char *name, bool unzipped, const pf_load_opts *opts,
		   pf_profile **out, proff_error *err);
int fmt_folded_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		    pf_profile **out, proff_error *err);

/* Does data[0, len) (decompressed) look like folded stacks (text whose
 * first line ends in a count)? */
bool fmt_looks_folded(const uint8_t *data, size_t len);

#endif
