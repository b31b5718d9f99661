/* store-int.h — what the store's files share: the store's vtable (a local
 * directory or ClickHouse behind one interface) and small helpers. */
#ifndef PROFF_STORE_INT_H
#define PROFF_STORE_INT_H

#include "proff/store.h"

/* the call paths of a query's replicates, built (paths.c) */
typedef struct paths_build paths_build;
int paths_new(paths_build **out, const char *event);     /* 0 or PROFF_ENOMEM */
void paths_free(paths_build *pb);
/* a frame (names as stored; NULL or "" for none): its index, -1 no memory */
long paths_frame(paths_build *pb, const char *dso, size_t dso_len, const char *sym, size_t sym_len,
		 const char *src, size_t src_len, uint64_t addr, uint64_t ip, char level);
/* a stack of frames (leaf first) under its stored hash: its index, -1 no memory */
long paths_stack(paths_build *pb, uint64_t hash, const uint32_t *frames, size_t n);
/* the stack already given under hash, or -1 */
long paths_stack_of(const paths_build *pb, uint64_t hash);
/* the replicate (group, name), made if new: its index, -1 no memory */
long paths_rep(paths_build *pb, uint32_t group, const char *name, size_t len);
/* sum period and count of (comm, stack) into replicate rep: 0 or PROFF_ENOMEM */
int paths_add(paths_build *pb, size_t rep, const char *comm, size_t comm_len, size_t stack, uint64_t period,
	      uint64_t count);
/* every sample of the query's event of a local store's profile into rep */
int paths_add_prof(paths_build *pb, size_t rep, const store_prof *sp, proff_error *err);
/* the replicates' profiles, by (group, name) */
int paths_finish(paths_build *pb, store_paths *out, proff_error *err);

struct store_ops {
	int (*init)(store *s, const char *cluster, proff_error *err);
	int (*put)(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err);
	int (*query)(store *s, const store_query *q, store_result *r, proff_error *err);
	int (*events)(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err);
	void (*close)(store *s);
	int (*paths)(store *s, const store_query *q, paths_build *pb, proff_error *err);
};

struct store {
	const struct store_ops *ops;
	char *name;                /* printable: no password */
	void *impl;
};

int store_local_open(const char *dir, bool create, store *s, proff_error *err);
int store_ch_open(const char *url, const store_auth *auth, store *s, proff_error *err);

/* A growable byte buffer (SQL, request bodies) */
typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
} sbuf;
void sbuf_put(sbuf *b, const void *s, size_t n);
void sbuf_puts(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a TSV field (store_tsv_put's escapes) */
void sbuf_tsv(sbuf *b, const char *s, size_t len);
/* a ClickHouse string literal */
void sbuf_quote(sbuf *b, const char *s, size_t len);
void sbuf_free(sbuf *b);

/* The events list helper: append name unless present; -1 no memory */
int store_events_add(char ***names, size_t *n, const char *name);

/* which group a profile goes to: the first selector it matches, -1 none */
long store_group_of(const store_query *q, const store_prof *sp);

/* ---- key rows (keyrows.c) ------------------------------------------------- */

/* A key set: the keys a query groups by, as bits */
enum {
	KS_COMM = 1, KS_DSO = 2, KS_DSO_LONG = 4, KS_SYM = 8,
	KS_SYM_ADDR = 16,          /* with KS_SYM: each unresolved address a row of its own */
	KS_SRC = 32,
};
#define STORE_NR_KEYSETS 3
/* the key sets whose rows a push stores */
extern const int store_keysets[STORE_NR_KEYSETS];
/* The stored key set a query's keys are, or -1 (then the samples are read) */
int store_keyset_of(const store_query *q);

/* One row of a profile for a key set: string ids of the profile (0 where
 * the key set has no such key), the address of an unresolved symbol
 * (by address: its own; else the row's lowest; 0: none) */
typedef struct store_keyrow {
	uint32_t event, comm, dso, sym, srcline;
	uint64_t addr;             /* the lowest unresolved address of its frames (0: none) */
	char level;                /* of the frame that made the row first */
	/* the same of its samples' own frames alone (0: none), what a query
	 * without Children shows: a callchain entry makes no row there */
	char self_level;
	uint64_t self_addr;
	uint64_t self, acc, count;
} store_keyrow;

/* What a store_prof keeps besides its public fields */
struct store_prof_priv {
	uint64_t *frame_hash;      /* [nr_frames] (made by store_prof_from_profile) */
	size_t cap_frame_hash;
	store_keyrow *keyrows;     /* key rows read from a local store's file */
	uint8_t *keyrow_set;       /* [nr_keyrows] their key sets */
	size_t nr_keyrows, cap_keyrows;
};

/* A profile's rows for key set ks, in the order they are first met (samples
 * in order, frames leaf first). 0, or -1 (out of memory). */
int store_keyrows(const store_prof *sp, int ks, store_keyrow **rows, size_t *n);
/* Every replicate is made (ClickHouse: from the totals' query): the sums of
 * those go to a dense table from now on, not cells. 0, or -1 (out of memory) */
int store_result_fix_reps(store_result *r);

/* Parse a local store's profile file (local.c) for what a query reads:
 * STORE_PARSE_ALL, STORE_PARSE_HEAD (up to the events: labels and events),
 * or a key set (>= 0: also its key rows; the lines after are skipped but
 * counted against the end line) */
enum { STORE_PARSE_ALL = -2, STORE_PARSE_HEAD = -1 };
int store_prof_parse_part(const char *buf, size_t len, const char *path, int want, store_prof **out,
			  proff_error *err);
/* Add a profile's key rows of the query's key set (read from its file) to
 * replicate rep: what store_result_add_prof sums from its samples */
int store_result_add_keyrows(store_result *r, size_t rep, const store_prof *sp, int ks, const store_query *q,
			     proff_error *err);

/* ---- a stored key set's rows from ClickHouse (chrows.c) ------------------ */

/* The reader of the two RowBinary answers: records of (key hash, the
 * nkeys keys, level, lowest unresolved address), each a row of r; then
 * records of (key hash, profile hash, Self[, Children if acc][, samples
 * if count]), summed into the row's cell of the profile's replicate
 * (profs: profile hash -> replicate; a profile not there is skipped). */
typedef struct store_rows_reader {
	store_result *r;
	const pf_map64 *profs;
	pf_map64 rows;             /* key hash -> row of r */
	size_t nkeys;
	bool acc, count;
	const char *name;          /* the store's, for errors */
} store_rows_reader;
void store_rows_reader_init(store_rows_reader *x, store_result *r, const pf_map64 *profs, size_t nkeys, bool acc,
			    bool count, const char *name);
void store_rows_reader_free(store_rows_reader *x);
/* The whole records of p[0, n) read; *used: the bytes they took (the rest
 * waits for more of the answer). 0, or an error (a malformed answer: a
 * string's length, a row named twice, a value of a row not named). */
int store_rows_names(store_rows_reader *x, const char *p, size_t n, size_t *used, proff_error *err);
int store_rows_values(store_rows_reader *x, const char *p, size_t n, size_t *used, proff_error *err);

#endif
