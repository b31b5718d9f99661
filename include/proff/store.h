/* proff/store.h — profiles of many machines in one store, queried as one.
 *
 * `proff push` turns a profile (any file pf_profile_load reads) into a
 * store_prof: its distinct frames (dso, symbol, source line, level),
 * its stacks (frame lists, leaf first, each with a 64-bit hash of its
 * frames), its samples aggregated per (event, comm, stack), the events'
 * totals and the labels (host, build, ...). A store keeps such profiles,
 * each under an id that is a hash of the file's bytes, so pushing a file
 * again changes nothing.
 *
 * Two stores: a local directory (lib/store/local.c; one file per
 * profile, made visible by a rename) and ClickHouse over its HTTP
 * interface (lib/store/clickhouse.c; stacks and samples tables, a profile
 * marker written last). A query selects profiles with a selector
 * (lib/store/select.c: `build=1.2 host=~web-.* time>=2026-11-01`, never
 * raw SQL), groups them into replicates by a label, and aggregates the
 * rows of the sort keys (comm, dso, sym, srcline, label:NAME) with Self
 * and Children per replicate: the store_result. The CLI turns a result
 * into the hist and diff tables the file commands print (store_result_hist,
 * store_result_run_hist), so the text, JSON and statistics are theirs.
 *
 * Rows are keyed as perf diff keys them (symbols by name, a dso's
 * unresolved addresses in one row): profiles of other builds and hosts
 * pair by name. docs/fleet.md has the formats, the schema and the SQL.
 */
#ifndef PROFF_STORE_H
#define PROFF_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/hist.h"
#include "proff/profile.h"
#include "proff/util.h"

/* ---- labels --------------------------------------------------------------- */

#define STORE_ID_LEN 32             /* hex digits of a profile id */
#define STORE_KEY_MAX 64            /* bytes of a label key */
#define STORE_VALUE_MAX 65536       /* bytes of a label value */
#define STORE_MAX_LABELS 64

/* Is key a valid label key ([A-Za-z_][A-Za-z0-9_.-]*, at most
 * STORE_KEY_MAX bytes, not "time" or "id", which selectors reserve)?
 * And a value (len bytes, no control character, at most STORE_VALUE_MAX)?
 * On failure the reason is in err (PROFF_EUSAGE). */
int store_label_check(const char *key, const char *value, size_t value_len, proff_error *err);

/* ---- one profile as stored -------------------------------------------------- */

typedef struct store_frame {
	uint32_t dso;              /* string id of the dso's short name, 0: no map ([unknown]) */
	uint32_t dso_long;         /* string id of its long name */
	uint32_t sym;              /* string id of the symbol's name, 0: unresolved */
	uint32_t srcline;          /* string id of "file:line", 0: not computed */
	uint64_t addr;             /* unresolved frames: the map address (the row of a sample's
				    * own location: perf's map-relative address); 0 otherwise */
	uint64_t ip;               /* unresolved frames: the absolute address (the row of a
				    * callchain entry); 0 otherwise */
	char level;                /* '.', 'k', ... */
} store_frame;

typedef struct store_stack {
	uint64_t hash;             /* store_stack_hash of its frames */
	uint32_t first, n;         /* frames stack_frames[first .. first + n), leaf first */
} store_stack;

typedef struct store_sample {
	uint32_t event;            /* index into events */
	uint32_t comm;             /* string id */
	uint32_t stack;            /* index into stacks */
	uint64_t period, count;
} store_sample;

typedef struct store_event {
	uint32_t name;             /* string id */
	uint32_t type;
	uint64_t config;
	uint64_t total;            /* the event's total period */
	uint64_t samples;          /* its number of samples */
	bool callchain;
} store_event;

typedef struct store_label {
	uint32_t key, value;       /* string ids */
} store_label;

typedef struct store_prof {
	char id[STORE_ID_LEN + 1];
	pf_strtab strs;
	int64_t time;              /* unix seconds (label time) */
	store_label *labels; size_t nr_labels;
	store_event *events; size_t nr_events;
	store_frame *frames; size_t nr_frames, cap_frames;
	uint32_t *stack_frames; size_t nr_stack_frames, cap_stack_frames;
	store_stack *stacks; size_t nr_stacks, cap_stacks;
	store_sample *samples; size_t nr_samples, cap_samples;
	struct store_prof_priv *priv;
} store_prof;

/* The id of a file: 128 bits of hashes of its bytes, in hex (not a
 * cryptographic hash: it tells pushes of one file apart from others). */
int store_file_id(const char *path, char id[STORE_ID_LEN + 1], proff_error *err);

/* A profile's stored form. srclines: compute the frames' source lines
 * (libdw; costly on large binaries). The labels are added after
 * (store_prof_label). */
int store_prof_from_profile(pf_profile *p, const char *id, bool srclines, store_prof **out, proff_error *err);
/* Add or replace a label (checked with store_label_check). */
int store_prof_label(store_prof *sp, const char *key, const char *value, size_t value_len, proff_error *err);
const char *store_prof_label_value(const store_prof *sp, const char *key);
void store_prof_free(store_prof *sp);
/* The hash of n frames (leaf first): equal for equal frames in any profile. */
uint64_t store_stack_hash(const store_prof *sp, const uint32_t *frames, size_t n);

/* ---- text fields --------------------------------------------------------------- */

/* A field written as ClickHouse's TabSeparated format escapes it (\\, \t,
 * \n, \0 ... as backslash sequences). */
void store_tsv_put(FILE *out, const char *s, size_t len);
/* The field at *p (up to a tab, newline or end): unescaped into a string
 * of len bytes (NUL-terminated), *p past it. -1 on a bad escape. */
int store_tsv_get(const char **p, const char *end, char **out, size_t *len);

/* ---- selectors ------------------------------------------------------------------ */

enum store_op { SEL_EQ, SEL_NE, SEL_RE, SEL_NRE, SEL_LT, SEL_LE, SEL_GT, SEL_GE };

typedef struct store_term {
	char *key;                 /* a label key, "time" or "id" */
	int op;                    /* enum store_op */
	char *value;
	size_t value_len;
	int64_t time;              /* key "time": the value in unix seconds */
	void *re;                  /* regex_t of =~ and !~ (local store) */
} store_term;

typedef struct store_sel {
	store_term *terms;
	size_t n;
} store_sel;

/* Terms (one per word, ANDed): KEY=V, KEY!=V, KEY=~RE, KEY!~RE; time also
 * <, <=, >, >= with YYYY-MM-DD[THH:MM[:SS]] (UTC) or unix seconds. An
 * error names the word and the place in it. */
int store_sel_parse(store_sel *s, char *const *words, size_t nwords, proff_error *err);
void store_sel_free(store_sel *s);
bool store_sel_match(const store_sel *s, const store_prof *sp);
/* The selector as a ClickHouse boolean expression over the profiles
 * table's columns (labels as parallel arrays), every value an escaped
 * string literal. Returns a malloc'd string or NULL (out of memory). */
char *store_sel_sql(const store_sel *s);
/* s as a ClickHouse string literal, quotes included (malloc'd) */
char *store_sql_quote(const char *s, size_t len);

/* ---- query results --------------------------------------------------------------- */

/* What a query asks for: the keys of the rows (comm, dso, sym, srcline,
 * label:NAME), the event, and how profiles become replicates. */
typedef struct store_query {
	int keys[HIST_MAX_KEYS];
	int nkeys;
	const char *label_key;     /* label:NAME's NAME */
	bool verbose;              /* dso by long name */
	bool by_addr;              /* report: an unresolved symbol's row per address (as perf
	                            * report), not one per dso (as perf diff) */
	bool children;             /* Children sums too */
	bool no_counts;            /* the Self samples' counts are not needed (a diff of groups
	                            * reads periods only): a store may leave them 0 */
	const char *replicate;     /* label whose value makes a replicate; NULL: one per profile */
	const store_sel *groups;   /* [ngroups] selectors: a profile goes to the first that matches */
	size_t ngroups;
	const char *event;         /* event name; NULL: the first one of the selected profiles */
} store_query;

/* Rows of one event over replicates. A replicate belongs to one group
 * (the selector that chose its profiles); its totals are its profiles'.
 * The strings, dsos and symbols live in a profile of their own (prof)
 * that the hists made from the result point into. */
typedef struct store_result {
	pf_profile *prof;          /* strings, dsos, symbols, threads (one per comm), the event */
	int keys[HIST_MAX_KEYS];
	int nkeys;
	bool children;
	size_t nreps;
	uint32_t *rep_name;        /* [nreps] string id */
	uint32_t *rep_group;       /* [nreps], non-decreasing */
	uint64_t *rep_total, *rep_samples;   /* [nreps] */
	uint32_t *rep_profiles;    /* [nreps] how many profiles */
	size_t nrows;
	uint32_t *row_key;         /* [nrows * nkeys] string ids (sym, dso: 0 = none) */
	char *row_level;           /* [nrows] */
	uint64_t *row_addr;        /* [nrows] lowest unresolved address */
	uint64_t *self, *acc;      /* [nrows * nreps] Self, Children (acc NULL without children) */
	size_t nprofiles;          /* profiles selected */
	bool callchain;            /* the event has callchains */
	struct store_result_priv *priv;
} store_result;

int store_result_new(const store_query *q, store_result **out, proff_error *err);
void store_result_free(store_result *r);
/* Replicate of (group, name), made if new: its index, or -1 (no memory) */
long store_result_rep(store_result *r, uint32_t group, const char *name, size_t len);
/* The row of key strings (NULL or "" for none), made if new: index, -1 (no memory) */
long store_result_row(store_result *r, const char *const *keys, const size_t *lens);
/* Sum into a row of a replicate (with the Self samples' count) */
int store_result_add(store_result *r, size_t row, size_t rep, uint64_t self, uint64_t acc);
int store_result_add_count(store_result *r, size_t row, size_t rep, uint64_t self, uint64_t acc, uint64_t count);
/* Replicates sorted by (group, name), rows by their keys: a result
 * independent of the order the store returned them in. */
int store_result_finish(store_result *r, proff_error *err);
/* Add one profile of the local store (aggregated here) to replicate rep */
int store_result_add_prof(store_result *r, size_t rep, const store_prof *sp, const store_query *q,
			  proff_error *err);

/* The rows summed over the replicates of group (SIZE_MAX: all) as a hist
 * (report mode, the given options' keys), its rows in perf's order; and
 * one replicate's rows, for diff_table_add_run. Free with store_hist_free. */
int store_result_hist(const store_result *r, size_t group, const hist_opts *ho, hist **out, proff_error *err);
int store_result_run_hist(const store_result *r, size_t rep, const hist_opts *ho, hist **out, proff_error *err);
void store_hist_free(hist *h);

/* ---- stores ------------------------------------------------------------------------ */

typedef struct store store;

/* "DIR" or "file://DIR": the local store; "clickhouse://HOST:PORT/DB[?cluster=NAME]".
 * ClickHouse's credentials come from auth (the CLI takes them from
 * $PROFF_CLICKHOUSE_USER / $PROFF_CLICKHOUSE_PASSWORD or the config file),
 * never from the URL. */
typedef struct store_auth {
	const char *user, *password;
	int stop_after;            /* tests: a ClickHouse push fails after its stacks (1) or samples (2) */
} store_auth;

int store_open(const char *url, const store_auth *auth, bool create, store **out, proff_error *err);
void store_close(store *s);
/* The URL without any password (for messages) */
const char *store_name(const store *s);
/* Create the schema. ClickHouse: cluster NULL makes the tables of one
 * server; "local" the shard-local tables; a cluster name the local tables
 * and the Distributed tables over that cluster. */
int store_init(store *s, const char *cluster, proff_error *err);

enum store_put_status { STORE_PUT_NEW, STORE_PUT_EXISTS };
/* Store profiles, or nothing of one whose id is there already
 * (status[i]). Atomic per profile: a failure leaves none of the profiles
 * not stored yet visible (ClickHouse: their markers are one INSERT,
 * written last; the local store: each file renamed into place after the
 * batch is on disk); pushing them again completes them. */
int store_put(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err);
/* Run a query into *out (store_result_finish done). */
int store_query_run(store *s, const store_query *q, store_result **out, proff_error *err);
/* The call paths of the selected profiles, for flame graphs (which draw
 * whole paths, not the rows of a key): for the event q->event (q's keys,
 * children and counts are not used), one profile per replicate, in the
 * order of store_result's (by group, then name), whose samples are each
 * (comm, stack) summed over the replicate's profiles, its frames named as
 * stored (dso, symbol, source line, level; symbols at addresses of their
 * own). Free with store_paths_free. */
typedef struct store_paths {
	pf_profile **profs;
	uint32_t *group;           /* [n] the replicate's group */
	char **name;               /* [n] its name (a profile id or the --replicate label's value) */
	size_t n;
} store_paths;
int store_query_paths(store *s, const store_query *q, store_paths *out, proff_error *err);
void store_paths_free(store_paths *p);
/* The events of the selected profiles (names, in the order the first
 * profile has them, then new ones as met): a NULL-terminated list. */
int store_events(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err);

/* The local store's profile file (lib/store/local.c) parsed from memory
 * (path names it in errors): exposed for the fuzz target. */
int store_prof_parse(const char *buf, size_t len, const char *path, store_prof **out, proff_error *err);

#endif
