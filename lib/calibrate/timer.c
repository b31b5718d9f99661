/* timer.c — the "timer" measurements of proff calibrate: the timing
 * primitives proff may use (rdtsc, rdtscp, lfence;rdtsc, vDSO
 * clock_gettime(CLOCK_MONOTONIC)) and a plain call of an empty function,
 * each N times in a tight loop, thread CPU time / N (loop included). */
#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "cal-int.h"

/* the loops' sums must be computed but go nowhere: an empty asm that takes
 * the value keeps the compiler from dropping the loop (a store to a volatile
 * global would do too, but the library keeps no mutable globals) */
static inline void keep(uint64_t s)
{
	__asm__ volatile("" : : "r"(s) : "memory");
}

#if HAVE_TSC
static __attribute__((noinline)) void loop_rdtsc(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++)
		s += __rdtsc();
	keep(s);
}

static __attribute__((noinline)) void loop_rdtscp(uint64_t n)
{
	uint64_t s = 0;
	unsigned aux;
	for (uint64_t i = 0; i < n; i++)
		s += __rdtscp(&aux);
	keep(s);
}

static __attribute__((noinline)) void loop_lfence_rdtsc(uint64_t n)
{
	uint64_t s = 0;
	for (uint64_t i = 0; i < n; i++) {
		_mm_lfence();
		s += __rdtsc();
	}
	keep(s);
}
#endif

static __attribute__((noinline)) void loop_clock_gettime(uint64_t n)
{
	uint64_t s = 0;
	struct timespec ts;
	for (uint64_t i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s += (uint64_t)ts.tv_nsec;
	}
	keep(s);
}

/* what a call costs without instrumentation (the o_full recipe subtracts it) */
static __attribute__((noinline)) void empty_fn(void)
{
	__asm__ __volatile__("");
}

static __attribute__((noinline)) void loop_call(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		empty_fn();
}

double cal_empty_call_ns(void)
{
	double best = 0;
	for (int r = 0; r < 3; r++) {
		double t0 = cal_thread_ns();
		loop_call(1000000);
		double ns = (cal_thread_ns() - t0) / 1e6;
		if (r == 0 || ns < best)
			best = ns;
	}
	return best;
}

static const struct timer_def {
	const char *name;
	const char *per;             /* what one iteration is */
	void (*loop)(uint64_t n);
	unsigned scale;              /* iterations relative to the base N */
} timers[] = {
#if HAVE_TSC
	{ "rdtsc",         "read", loop_rdtsc,         1 },
	{ "rdtscp",        "read", loop_rdtscp,        1 },
	{ "lfence;rdtsc",  "read", loop_lfence_rdtsc,  1 },
#endif
	{ "clock_gettime", "read", loop_clock_gettime, 1 },
	{ "empty call",    "call", loop_call,          4 },
};
#define NTIMERS (sizeof(timers) / sizeof(timers[0]))

typedef struct timer_state {
	int row[NTIMERS];
	uint64_t n;
} timer_state;

int cal_timer_setup(cal_ctx *c, void **state)
{
	timer_state *t = calloc(1, sizeof(*t));
	if (!t)
		return -1;
	*state = t;
	t->n = c->opts->quick ? 200000 : 1000000;
	for (size_t i = 0; i < NTIMERS; i++)
		t->row[i] = cal_add_row(c, "timer", timers[i].name, timers[i].per,
					t->n * timers[i].scale);
	for (size_t i = 0; i < NTIMERS; i++)      /* warm up: page in, vDSO resolved */
		timers[i].loop(1000);
	return 0;
}

void cal_timer_run(cal_ctx *c, void *state, unsigned run)
{
	timer_state *t = state;
	(void)run;
	for (size_t i = 0; i < NTIMERS; i++) {
		uint64_t n = t->n * timers[i].scale;
		cal_self m;
		cal_sample s;
		cal_self_begin(c, &m);
		timers[i].loop(n);
		cal_self_end(c, &m, &s);
		if (s.migrated) {
			cal_row_discard(c, t->row[i]);
			continue;
		}
		double cnt[CAL_MAX_COUNTERS];
		bool ok[CAL_MAX_COUNTERS];
		cal_cnt_delta(c, &s, NULL, (double)n, cnt, ok);
		cal_row_value(c, t->row[i], s.cpu_ns / (double)n, cnt, ok);
	}
}

void cal_timer_teardown(cal_ctx *c, void *state)
{
	(void)c;
	free(state);
}
