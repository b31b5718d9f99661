/* proff/trace.h — the exact-profile trace written by the -finstrument-functions
 * runtime (runtime/, libproff-instrument) and read by lib/trace.
 *
 * Part 1 is the on-disk format, shared by the writer and the reader (plain C,
 * no library dependency: the runtime includes it too). Part 2 is the reader
 * API of libproff. docs/formats/trace.md describes the format in prose.
 *
 * A trace file is a sequence of records, each starting with a 24-byte
 * proff_trace_rec header. Every process image (the started program, each
 * forked child, each exec'd image) is one "session" with its own 64-bit id; all
 * of them append their records to the same file (O_APPEND, one write() per
 * record), so records of different sessions and threads interleave. Per thread,
 * EVENTS records appear in time order.
 */
#ifndef PROFF_TRACE_H
#define PROFF_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ===================== Part 1: on-disk format ============================= */

#define PROFF_TRACE_MAGIC    0x52544650u   /* "PFTR" little-endian */
#define PROFF_TRACE_VERSION  2   /* 2: jump markers, dropped-event counts; 1 still read */
#define PROFF_TRACE_VERSION_MIN 1
#define PROFF_TRACE_DEFAULT_FILE "proff.trace"

enum proff_trace_rec_type {
	PTR_SESSION = 1,   /* proff_trace_session + exe path + cmdline */
	PTR_MAPS    = 2,   /* u64 ts, then the text of /proc/self/maps */
	PTR_MODULES = 3,   /* u64 ts, then proff_trace_module entries */
	PTR_EVENTS  = 4,   /* proff_trace_events_hdr + encoded events */
	PTR_THREAD  = 5,   /* proff_trace_thread_rec: thread start / end */
	PTR_END     = 6,   /* proff_trace_end_rec: session ended (exit, exec, signal) */
	PTR_TYPE_MAX
};

/* Every record: all integers little-endian (the writer's native order; only
 * x86-64 and other little-endian hosts are supported). */
typedef struct proff_trace_rec {
	uint32_t magic;        /* PROFF_TRACE_MAGIC */
	uint16_t type;         /* enum proff_trace_rec_type */
	uint16_t version;      /* PROFF_TRACE_VERSION */
	uint32_t size;         /* whole record including this header */
	uint32_t tid;          /* writing thread (0 if not thread specific) */
	uint64_t session;      /* session id: unique per process image */
} proff_trace_rec;

enum proff_trace_clock {
	PROFF_CLOCK_TSC = 1,        /* rdtsc ticks, invariant TSC */
	PROFF_CLOCK_MONOTONIC = 2,  /* CLOCK_MONOTONIC nanoseconds */
	PROFF_CLOCK_NONE = 3,       /* no timestamps (all deltas 0): counts and call tree only */
};

#define PROFF_SESS_F_FORKED   1u   /* session created by fork() of parent_session */
#define PROFF_SESS_F_EXECED   2u   /* runtime found itself in an exec'd image */
#define PROFF_SESS_F_CALFILE  4u   /* o_in/o_full come from a calibration file
				      ($PROFF_CALIBRATION), not from the start-up estimate */

/* PTR_SESSION payload (after the record header). Followed by exe_len bytes of
 * the executable path and cmd_len bytes of the command line (NUL separated). */
typedef struct proff_trace_session {
	uint32_t clock;            /* enum proff_trace_clock */
	uint32_t flags;            /* PROFF_SESS_F_* */
	uint64_t ticks_per_sec;    /* clock rate (1e9 for MONOTONIC); calibrated for TSC */
	uint64_t start_ts;         /* clock value at session start */
	uint64_t start_realtime_ns;/* CLOCK_REALTIME at start */
	uint64_t start_mono_ns;    /* CLOCK_MONOTONIC at start */
	/* overhead calibration, in clock ticks scaled by 1/1024 (fixed point) */
	uint64_t o_in_x1024;       /* part of one call's cost inside its own interval */
	uint64_t o_full_x1024;     /* whole cost of one instrumented call */
	uint64_t calib_calls;      /* calls used for the calibration */
	uint32_t pid, ppid;
	uint64_t parent_session;   /* for forked sessions, else 0 */
	uint32_t buffer_size;      /* per-thread buffer in bytes */
	uint32_t exe_len;          /* bytes of executable path that follow */
	uint32_t cmd_len;          /* bytes of command line that follow */
	uint32_t reserved;
} proff_trace_session;

/* PTR_MODULES payload: u64 ts, then entries, each: */
typedef struct proff_trace_module {
	uint64_t base;             /* load bias (dlpi_addr) */
	uint16_t build_id_len;     /* <= 64 */
	uint16_t name_len;         /* bytes of name after build id */
	uint32_t reserved;
	/* uint8_t build_id[build_id_len]; char name[name_len]; padding to 8 */
} proff_trace_module;

/* PTR_EVENTS payload header. The state the first event is encoded against:
 * the thread's previous timestamp, function and frame address. */
typedef struct proff_trace_events_hdr {
	uint64_t base_ts;          /* timestamp of the thread's previous event */
	uint64_t base_fn;          /* function address of the previous event */
	uint64_t base_cfa;         /* frame address of the previous event */
	uint64_t pause_ticks;      /* time spent writing the previous record:
				      subtract from this and all later events */
	uint32_t seq;              /* per-thread record sequence number, from 0 */
	uint32_t dropped;          /* version 2: events the thread dropped since its
				      previous record (a hook re-entered from a signal
				      handler); 0 in version 1 */
} proff_trace_events_hdr;

/* Event encoding (after proff_trace_events_hdr), per event:
 *   varint  (ts - prev_ts) << 1 | is_exit
 *   avarint fn - prev_fn        (fn = this_fn of the hook)
 *   avarint cfa - prev_cfa      (cfa = frame address of the hook: the instrumented
 *                                function's stack pointer at the call less 16;
 *                                deeper frames are lower)
 * varint: 7 bits per byte, low first, high bit = more; at most 10 bytes.
 * avarint (version 2), an address delta d: a multiple of 16 (functions and
 * frames are 16-byte aligned) as varint(zigzag(d / 16) << 1), any other d as
 * varint(zigzag(d) << 1 | 1). Version 1: varint(zigzag(d)).
 * zigzag(v) = (v << 1) ^ (v >> 63). A typical call (entry + exit) takes 6-8
 * bytes.
 *
 * Version 2: an event whose function address is 0 is a marker, not a call.
 * With the exit bit set it is a jump: the thread called longjmp (or
 * siglongjmp, _longjmp, __longjmp_chk) and execution continues in the frame
 * whose hooks have frame address cfa; every frame with a lower frame address
 * was abandoned at this time. cfa 0: the landing frame is not known. A marker
 * with the exit bit clear is reserved (an error). */
#define PROFF_TRACE_MAX_EVENT 30

enum proff_trace_thread_kind { PROFF_THREAD_START = 1, PROFF_THREAD_END = 2 };
typedef struct proff_trace_thread_rec {
	uint32_t kind;             /* enum proff_trace_thread_kind */
	uint32_t reserved;
	uint64_t ts;
	char name[16];             /* comm of the thread */
} proff_trace_thread_rec;

enum proff_trace_end_reason {
	PROFF_END_EXIT = 1,        /* exit() / return from main */
	PROFF_END__EXIT = 2,       /* _exit() / _Exit() */
	PROFF_END_EXEC = 3,        /* before execve (a new session follows if it succeeds) */
	PROFF_END_SIGNAL = 4,      /* fatal signal; code = signal number */
};
typedef struct proff_trace_end_rec {
	uint32_t reason;
	int32_t code;              /* exit status or signal number, -1 if unknown */
	uint64_t ts;               /* clock at the end */
	uint64_t mono_ns;          /* CLOCK_MONOTONIC at the end: with start_ts and
				      start_mono_ns it refines the TSC rate */
} proff_trace_end_rec;

/* ===================== Part 2: reader API (libproff) ====================== */

#include "proff/error.h"

typedef struct proff_trace proff_trace;

/* Open and index a trace file (mmap + one pass over the record headers).
 * Every size is bounds-checked; a truncated last record (a run killed while
 * writing) is dropped with a warning count, any other damage is an error. */
int proff_trace_open(const char *path, proff_trace **out, proff_error *err);
void proff_trace_close(proff_trace *t);

/* Whether the file holds an event at all: a look at record headers up to
 * the first events record that is not empty (cheap on a large trace, which
 * proff_trace_open reads whole). 1 yes, 0 no, < 0 error (not a trace). */
int proff_trace_has_events(const char *path, proff_error *err);

typedef struct proff_trace_info {
	size_t nsessions, nthreads, nrecords;
	uint64_t nevents;
	size_t truncated_bytes;    /* bytes of an incomplete record at the end */
	uint64_t dropped_events;   /* events the runtime dropped (hooks re-entered from signal handlers) */
	uint32_t clock;            /* of the first session */
	double ticks_per_sec;
	double o_in_ns, o_full_ns; /* calibrated overhead of the first session */
} proff_trace_info;
void proff_trace_get_info(const proff_trace *t, proff_trace_info *info);

/* Replace every session's calibrated overheads (the runtime's start-up
 * estimate) with values in nanoseconds, e.g. from a `proff calibrate` file;
 * they are converted with each session's clock rate. Used by compensation in
 * proff_trace_stats_compute and proff_trace_to_dprof, and reported by
 * proff_trace_get_info. */
void proff_trace_set_overheads(proff_trace *t, double o_in_ns, double o_full_ns);

typedef struct proff_trace_session_info {
	uint64_t id, parent;
	uint32_t pid, ppid, flags;
	const char *exe;
	double ticks_per_sec, o_in_ticks, o_full_ticks;
	int end_reason, end_code;  /* 0 if no PTR_END record */
} proff_trace_session_info;
size_t proff_trace_nsessions(const proff_trace *t);
void proff_trace_session_get(const proff_trace *t, size_t i, proff_trace_session_info *out);

/* Resolve function names through the symbolizer (include/proff/symbol.h).
 * Without it (or when a DSO has no symbols) names are "dso+0xOFFSET" or
 * "0xADDR". symfs may be NULL. */
int proff_trace_symbolize(proff_trace *t, const char *symfs, proff_error *err);

/* What a trace could not tell exactly, by kind: the reason of a synthetic
 * event, events the reader or the runtime could not use, and times the
 * overhead compensation clamped at 0 (docs/formats/trace.md). */
enum proff_trace_anomaly {
	PROFF_TA_NONE = 0,
	PROFF_TA_LONGJMP,          /* exit of a frame a longjmp abandoned, at the jump's time (exact) */
	PROFF_TA_END,              /* exit of a frame still open when its thread's trace ended */
	PROFF_TA_LOST_EXIT,        /* exit that never came, inferred from frame addresses at the next event */
	PROFF_TA_PRE_TRACE,        /* entry of a call begun before the thread's trace (fork child) */
	PROFF_TA_UNMATCHED,        /* exit whose entry was not found: dropped (no event) */
	PROFF_TA_DROPPED,          /* events the runtime dropped: hook re-entered from a signal handler */
	PROFF_TA_CLAMP_INCL,       /* a call's compensated inclusive time clamped at 0 */
	PROFF_TA_CLAMP_EXCL,       /* a call's compensated exclusive time clamped at 0 */
	PROFF_TA_COUNT
};
/* Short name of an anomaly ("lost exit", ...). */
const char *proff_trace_anomaly_name(int a);

/* Event iteration: per thread, in time order, after shadow-stack
 * resynchronisation (see below). */
enum proff_tev_kind { PROFF_TEV_ENTER = 1, PROFF_TEV_EXIT = 2 };
typedef struct proff_trace_event {
	int kind;                  /* enum proff_tev_kind */
	uint32_t func;             /* function id, see proff_trace_func_name */
	uint64_t ticks;            /* time since the thread's session start, flush pauses removed */
	uint32_t depth;            /* stack depth of the call (0 = outermost) */
	bool synthetic;            /* exit invented by resynchronisation (longjmp,
				      lost exit, end of trace) or entry invented for
				      an exit whose entry precedes the trace (fork child) */
	uint8_t reason;            /* enum proff_trace_anomaly of a synthetic event, else 0 */
} proff_trace_event;

typedef struct proff_trace_thread_info {
	size_t index;              /* 0..nthreads-1 */
	uint64_t session;
	uint32_t pid, tid;
	double ticks_per_sec;
	uint64_t first_ticks, last_ticks;
} proff_trace_thread_info;

/* Called for every thread before its events (ev == NULL) and per event.
 * Return non-zero to stop. */
typedef int (*proff_trace_event_cb)(void *arg, const proff_trace_thread_info *th,
				    const proff_trace_event *ev);
int proff_trace_foreach(proff_trace *t, proff_trace_event_cb cb, void *arg, proff_error *err);

/* The anomalies of the last proff_trace_foreach (or stats / dprof pass),
 * counted per kind and per function. The decoder counts synthetic events,
 * unmatched exits and dropped events; a consumer that compensates adds its
 * clamps with proff_trace_note (per call). */
void proff_trace_note(proff_trace *t, int anomaly, uint32_t func);

#define PROFF_TRACE_QUALITY_TOP 3
typedef struct proff_trace_quality {
	uint64_t calls;                    /* calls decoded (synthetic entries included) */
	uint64_t count[PROFF_TA_COUNT];    /* per enum proff_trace_anomaly */
	/* per anomaly, the functions with the most of it, most first (name NULL: none) */
	struct { char *name; uint32_t func; uint64_t count; } top[PROFF_TA_COUNT][PROFF_TRACE_QUALITY_TOP];
} proff_trace_quality;
/* A copy of the counts of the last pass (names copied). */
int proff_trace_quality_get(const proff_trace *t, proff_trace_quality *q, proff_error *err);
void proff_trace_quality_free(proff_trace_quality *q);
/* Anomalies worth a warning: lost exits, unmatched exits, dropped events and
 * clamped times, each when more than 0.1 % of the calls (a trace's noise).
 * Synthetic exits of longjmp, of the end of a thread and entries before a
 * fork child's trace are exact or expected and never warned about. */
bool proff_trace_quality_warns(const proff_trace_quality *q, int anomaly);

/* A loaded object of the trace's sessions (executables, and the libraries of
 * their MODULES records, dlopen'ed ones included) that calls the
 * -finstrument-functions hooks, or NULL: none does (nothing in the run was
 * built with -finstrument-functions). Reads the objects' ELF symbols. */
const char *proff_trace_instrumented_object(const proff_trace *t);

size_t proff_trace_nfuncs(const proff_trace *t);
const char *proff_trace_func_name(const proff_trace *t, uint32_t func);
const char *proff_trace_func_dso(const proff_trace *t, uint32_t func);
/* The function's first runtime address and, when a map of its session held
 * it (returns true), its file offset in proff_trace_func_dso. */
bool proff_trace_func_where(const proff_trace *t, uint32_t func, uint64_t *addr, uint64_t *file_off);

/* Per-function statistics over all sessions and threads. Times in seconds. */
typedef struct proff_trace_func_stats {
	uint32_t func;
	const char *name;
	uint64_t calls;
	double incl, excl;         /* inclusive counts only the outermost activation of a recursion */
	double min, max;           /* inclusive time per call */
	uint64_t descendants;      /* D: calls started inside its (outermost) activations */
	uint64_t children;         /* K: direct children */
	bool overcorrected;        /* compensation removed more than half of the raw time */
} proff_trace_func_stats;

typedef struct proff_trace_stats {
	proff_trace_func_stats *funcs;   /* sorted by exclusive time, descending */
	size_t nfuncs;
	double total;              /* sum over threads of (last - first) time, compensated if asked */
	uint64_t calls;
	uint64_t synthetic_exits;  /* exits invented by resynchronisation */
	uint64_t synthetic_entries;
	uint64_t negative_clamped; /* compensated times clamped at 0 */
	proff_trace_quality quality;   /* the same per reason, with the functions most affected */
} proff_trace_stats;

typedef struct proff_trace_stats_opts {
	bool compensate;           /* subtract the calibrated overheads (TAU-style) */
	int pid;                   /* only this pid (0 = all) */
} proff_trace_stats_opts;

int proff_trace_stats_compute(proff_trace *t, const proff_trace_stats_opts *opts,
			      proff_trace_stats *out, proff_error *err);
void proff_trace_stats_free(proff_trace_stats *s);

/* Feed the trace into the dprofpp builder (include/proff/dprof.h) and finish
 * the model: every thread of every process on one time line (laid end to
 * end), clock in microseconds (hz 1e6), overhead per mark o_full/2 when
 * compensate is set (DProf's model), else 0. `proff dprofpp` can call this
 * for files that start with PROFF_TRACE_MAGIC. */
struct dprof_build_opts;
struct dprof_model;
int proff_trace_to_dprof(proff_trace *t, const struct dprof_build_opts *opts, bool compensate,
			 struct dprof_model **out, proff_error *err);

/* Decoding helpers, exposed for tests and fuzzing. */
/* Read a varint at p (< end). Returns bytes used, 0 if malformed/truncated. */
size_t proff_trace_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v);

#endif
