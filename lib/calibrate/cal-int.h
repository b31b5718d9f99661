/* cal-int.h — internals shared by the lib/calibrate sources: the run context,
 * the per-row data of repeated runs and the measurement groups. */
#ifndef PROFF_CAL_INT_H
#define PROFF_CAL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "proff/calibrate.h"

#define CAL_MAX_RUNS 200
#define CAL_MAX_ROWS 32

typedef struct cal_row_data {
	size_t n;
	double ns[CAL_MAX_RUNS];
	double cnt[CAL_MAX_COUNTERS][CAL_MAX_RUNS];
	bool cnt_bad[CAL_MAX_COUNTERS];   /* some kept run did not read it */
} cal_row_data;

typedef struct cal_ctx {
	const cal_opts *opts;
	cal_result *res;
	cal_row_data *rowdata;
	size_t nrows;
	const char *cc;
	char dir[4096];                   /* scratch directory */
} cal_ctx;

/* One run of something: CPU time and counter values. */
typedef struct cal_sample {
	double cpu_ns;
	double cnt[CAL_MAX_COUNTERS];
	bool cnt_ok[CAL_MAX_COUNTERS];
	bool migrated;
	int status;
} cal_sample;

typedef struct cal_pe_set {
	int fd[CAL_MAX_COUNTERS];
	int mig_fd;
} cal_pe_set;

typedef struct cal_self {
	struct cal_pe_set pe;
	int cpu0;
	double t0;
} cal_self;

typedef struct cal_group {
	const char *name;
	int (*setup)(cal_ctx *c, void **state);     /* declares rows; <0: rows skipped */
	void (*run)(cal_ctx *c, void *state, unsigned run);
	void (*teardown)(cal_ctx *c, void *state);
} cal_group;

/* measure.c */
void cal_progress(cal_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
double cal_thread_ns(void);
int cal_add_row(cal_ctx *c, const char *group, const char *name, const char *per, uint64_t ops);
void cal_row_skip(cal_ctx *c, int row, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void cal_row_value(cal_ctx *c, int row, double ns, const double *cnt, const bool *cnt_ok);
void cal_row_discard(cal_ctx *c, int row);
void cal_row_no_counters(cal_ctx *c, int row);
void cal_cnt_delta(cal_ctx *c, const cal_sample *a, const cal_sample *b, double ops, double *out, bool *ok);
char *cal_path(cal_ctx *c, const char *name);
int cal_write_file(cal_ctx *c, const char *name, const char *text);
int cal_spawn(cal_ctx *c, char *const argv[], char *const envp[], int (*fn)(void *), void *arg,
	      cal_sample *s);
int cal_compile(cal_ctx *c, const char *src, const char *out, const char *const *flags);
void cal_self_begin(cal_ctx *c, cal_self *m);
void cal_self_end(cal_ctx *c, cal_self *m, cal_sample *s);

/* timer.c: a plain call of an empty function, ns (minimum of 3 loops) */
double cal_empty_call_ns(void);

/* groups (timer.c, instrument.c, sample.c) */
int cal_timer_setup(cal_ctx *c, void **state);
void cal_timer_run(cal_ctx *c, void *state, unsigned run);
void cal_timer_teardown(cal_ctx *c, void *state);
int cal_instrument_setup(cal_ctx *c, void **state);
void cal_instrument_run(cal_ctx *c, void *state, unsigned run);
void cal_instrument_teardown(cal_ctx *c, void *state);
int cal_sample_setup(cal_ctx *c, void **state);
void cal_sample_run(cal_ctx *c, void *state, unsigned run);
void cal_sample_teardown(cal_ctx *c, void *state);

#endif
