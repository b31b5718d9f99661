/* trace-int.h — internals of the trace reader shared by the lib/trace sources. */
#ifndef PROFF_TRACE_INT_H
#define PROFF_TRACE_INT_H

#include "proff/trace.h"
#include "proff/util.h"

typedef struct tmap {
	uint64_t start, end, pgoff;
	const char *path;
	void *dso;                 /* sym_dso *, resolved lazily */
	bool dso_done;
} tmap;

typedef struct tmodule {
	uint64_t base;
	uint8_t bid[64];
	size_t bid_len;
	const char *name;
} tmodule;

typedef struct tsession {
	uint64_t id;
	uint64_t first_off;
	bool have_hdr, have_end;
	proff_trace_session hdr;
	proff_trace_end_rec end;
	const char *exe, *cmdline;
	double tps, o_in, o_full;  /* ticks per second; overheads in ticks */
	tmap *maps;
	size_t nmaps, maps_cap;
	pf_ranges map_index;       /* address -> latest map holding it (index in dso) */
	pf_map64 map_seen;         /* hash of (start, end, pgoff, path) -> map index + 1 */
	tmodule *mods;
	size_t nmods, mods_cap;
	pf_map64 func_by_addr;     /* address -> function id */
} tsession;

typedef struct tthread {
	uint64_t session;
	size_t sess;               /* index in sessions */
	uint32_t tid;
	char name[16];
	uint64_t *recs;            /* offsets of its PTR_EVENTS records, in file order */
	size_t nrecs, recs_cap;
	uint64_t nevents;
	uint64_t dropped;          /* events the runtime dropped (records' dropped counts) */
} tthread;

typedef struct tfunc {
	uint32_t name, dso;        /* string ids */
	uint64_t addr;             /* first address seen */
	uint64_t off;              /* its file offset in dso (mapped only) */
	bool mapped;               /* a map of the session held addr */
} tfunc;

struct proff_trace {
	char *path;
	const uint8_t *data;
	size_t size, truncated, nrecords;
	uint64_t nevents;
	pf_arena arena;
	tsession *sessions;
	size_t nsessions, sess_cap;
	pf_map64 sess_by_id;
	tthread *threads;
	size_t nthreads, thr_cap;
	pf_map64 thr_by_key;
	tfunc *funcs;
	size_t nfuncs, funcs_cap;
	pf_map64 func_by_key;      /* name id << 32 | dso id -> function id */
	pf_strtab names;
	void *sym;                 /* sym_ctx * when symbolizing */
	bool symbolize;
	/* anomalies of the last pass (proff_trace_quality_get) */
	uint64_t qcalls;
	uint64_t qcount[PROFF_TA_COUNT];
	uint64_t (*qfunc)[PROFF_TA_COUNT];   /* per function id */
	size_t nqfunc;
};

typedef struct trace_decode_stats {
	uint64_t synth_exits, synth_entries, dropped;
} trace_decode_stats;

/* trace-quality.c: the anomaly counts of a pass */
void trace_quality_reset(proff_trace *t);
void trace_quality_free(proff_trace *t);

int trace_decode_all(proff_trace *t, proff_trace_event_cb cb, void *arg, trace_decode_stats *st,
		     proff_error *err);

/* trace-sym.c: symbol name at a file offset of map m, or NULL. */
const char *trace_sym_name(proff_trace *t, tsession *s, tmap *m, uint64_t file_off);
void trace_sym_free(proff_trace *t);

#endif
