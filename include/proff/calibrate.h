/* proff/calibrate.h — `proff calibrate`: what proff's own measuring costs on
 * this machine (after LTTng's calibrate, done for proff's mechanisms).
 *
 * Three parts:
 *  - summary statistics of repeated runs (average, sample standard deviation,
 *    min, median, max);
 *  - the measurements (a table of name / setup / run / teardown): timing
 *    primitives, the -finstrument-functions runtime (idle hooks, per-call cost,
 *    TAU-style o_in / o_full) and the sampling recorder (cost per sample), each
 *    in time and, where perf_event_open allows, in hardware counters;
 *  - the calibration file (-o FILE, PROFF_CALIBRATION): a small text format
 *    that trace readers use for overhead compensation instead of the runtime's
 *    start-up estimate (docs/calibrate.md).
 *
 * The library never prints: progress goes through a callback.
 */
#ifndef PROFF_CALIBRATE_H
#define PROFF_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"

/* ---- statistics ------------------------------------------------------------ */

typedef struct cal_summary {
	size_t n;
	double avg;
	double stddev;     /* sample standard deviation (n - 1), 0 when n < 2 */
	double min, median, max;
} cal_summary;

/* Summarise v[0..n). n == 0 gives all zeros. v is not modified. Returns
 * PROFF_ENOMEM if a scratch copy cannot be allocated. */
int cal_summarize(const double *v, size_t n, cal_summary *out);

/* ---- hardware counters ------------------------------------------------------- */

#define CAL_MAX_COUNTERS 16

typedef struct cal_counter_def {
	const char *name;          /* as perf names it: "instructions", "LLC-load-misses" */
	uint32_t type;             /* PERF_TYPE_* */
	uint64_t config;
} cal_counter_def;

/* Known counter names, NULL terminated (for help and errors). */
const char *const *cal_counter_names(void);
/* Look up one name; NULL if unknown. */
const cal_counter_def *cal_counter_find(const char *name);

#define CAL_DEFAULT_COUNTERS "instructions,cycles,branch-misses,LLC-load-misses"

/* ---- measurements ------------------------------------------------------------ */

typedef struct cal_opts {
	unsigned runs;             /* -r, default 10 */
	int cpu;                   /* CPU to pin to; -1: the current one */
	bool quick;                /* shorter workloads (tests) */
	const char *counters;      /* comma list (NULL: CAL_DEFAULT_COUNTERS, "": none) */
	const char *groups;        /* comma list of timer,instrument,sample (NULL: all) */
	uint64_t freqs[4];         /* sampling frequencies (0-terminated; default 4000, 20000) */
	const char *cc;            /* compiler for the workloads (NULL: $CC or cc) */
	const char *runtime;       /* libproff-instrument.so (NULL: skip the instrument group) */
	const char *tmpdir;        /* NULL: $TMPDIR or /tmp */
	void (*progress)(void *ctx, const char *msg);
	void *progress_ctx;
} cal_opts;

typedef struct cal_counter_result {
	bool supported;            /* opened for every kept run */
	char why[64];              /* "<not supported>" reason when not */
	cal_summary per_op;        /* counter delta per operation */
} cal_counter_result;

typedef struct cal_result_row {
	char name[48];             /* "rdtsc", "instrument: per call", ... */
	char group[16];            /* "timer", "instrument", "sample" */
	char per[16];              /* what one operation is: "read", "call", "sample", "run" */
	bool measured;             /* false: skipped, see note */
	char note[160];            /* why it was skipped, or a remark */
	uint64_t ops;              /* operations per run */
	unsigned kept, discarded;  /* runs kept / discarded (migrated, failed) */
	cal_summary ns;            /* nanoseconds per operation */
	bool counters_na;          /* derived from a trace: no counters apply */
	cal_counter_result counters[CAL_MAX_COUNTERS];
} cal_result_row;

typedef struct cal_result {
	int cpu;
	unsigned runs;
	double tsc_hz;             /* 0 if there is no TSC */
	char cc[64];
	size_t ncounters;
	const cal_counter_def *counters[CAL_MAX_COUNTERS];
	bool counter_supported[CAL_MAX_COUNTERS]; /* opened at least once */
	char counter_why[CAL_MAX_COUNTERS][64];   /* error of the first failed open */
	cal_result_row *rows;
	size_t nrows;
	/* the compensation values (medians), 0 if not measured */
	double o_in_ns, o_full_ns, call_ns, idle_ns;
	double start_ns;           /* runtime start-up per process */
	double sample_ns, sample_cg_ns;   /* sampling cost per sample at sample_hz, without / with -g */
	double sample_hz;
} cal_result;

/* Run every measurement. Returns 0 (rows that could not be measured say why
 * in their note) or a negative code for usage errors (unknown counter or
 * group, bad CPU). */
int cal_run(const cal_opts *opts, cal_result *out, proff_error *err);
void cal_result_free(cal_result *r);

/* Output: the table (Average, Std.Dev., Min, Median, cycles, runs) and JSON. */
void cal_print_table(FILE *f, const cal_result *r);
void cal_print_json(FILE *f, const cal_result *r);

/* ---- calibration file -------------------------------------------------------- */

typedef struct cal_file {
	double o_in_ns, o_full_ns;  /* compensation per call (required) */
	double call_ns, idle_ns;    /* per-call cost of the runtime / of idle hooks (0: absent) */
	double start_ns;            /* runtime start-up per process (0: absent) */
	double tsc_hz;              /* 0: absent */
	double sample_ns, sample_cg_ns;   /* cost per sample of perf_event sampling, without / with
					     callchains, at sample_hz (0: absent) */
	double sample_hz;
	int cpu;                    /* -1: absent */
} cal_file;

/* Write the calibration file of a result (text, one "key value" per line). */
int cal_file_write(const char *path, const cal_result *r, proff_error *err);
/* Read and validate one (size-limited; errors name the file and byte offset). */
int cal_file_read(const char *path, cal_file *out, proff_error *err);
/* Parse from memory (for tests and fuzzing); name is used in errors. */
int cal_file_parse(const char *buf, size_t len, const char *name, cal_file *out, proff_error *err);

#define CAL_FILE_ENV "PROFF_CALIBRATION"

/* Read a calibration file and use its o_in / o_full for a trace's
 * compensation instead of the runtime's start-up estimate
 * (proff_trace_set_overheads). */
struct proff_trace;
int cal_file_apply(const char *path, struct proff_trace *t, proff_error *err);

#endif
