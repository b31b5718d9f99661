/* workload.c — the program of tests/cli/compensation.sh (overhead compensation
 * of `proff record --instrument`). Built twice from this one source: with
 * -finstrument-functions (recorded by proff) and without (the reference). It
 * prints its own timing of the two measured functions, mean, minimum and
 * maximum per call, measured with clock_gettime around each call:
 *
 *   work()  its own computation plus many calls of the tiny leaf(): once
 *           instrumented, its raw time is a multiple of the plain one
 *           (about 2.5x with NLEAF 200, NCOMP 4000);
 *   pure()  computation only, no callees.
 *
 * usage: workload REPS NLEAF NCOMP NPURE [NWARM]
 *   NWARM calls of leaf() first (untimed: instrumented, they take the trace
 *   buffer past its first use, see docs/instrument.md), then REPS times one
 *   call of work(NLEAF, NCOMP) and one call of pure(NPURE).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

volatile unsigned sink;

__attribute__((noinline)) unsigned leaf(unsigned x)
{
	return x * 2654435761u + 1;
}

/* a dependent chain of multiply-xorshift steps: n steps cost n times one step.
 * Always inlined and never instrumented (gcc would otherwise instrument the
 * inlined copies too, as calls of mix). */
static inline __attribute__((always_inline, no_instrument_function)) unsigned mix(unsigned h, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		h = h * 31u + i;
		h ^= h >> 7;
	}
	return h;
}

__attribute__((noinline)) unsigned work(unsigned nleaf, unsigned ncomp)
{
	unsigned h = sink;
	for (unsigned i = 0; i < nleaf; i++)
		h = leaf(h + i);
	return mix(h, ncomp);
}

__attribute__((noinline)) unsigned pure(unsigned n, unsigned unused)
{
	(void)unused;
	return mix(sink, n);
}

static __attribute__((no_instrument_function)) double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* one timed call of F(A, B): its time less the cost of an empty timing pair */
#define TIME_CALL(F, A, B, sum, min, max) do {                                  \
	double t0 = now_ns();                                                   \
	sink += F(A, B);                                                        \
	double d = now_ns() - t0 - empty;                                       \
	sum += d;                                                               \
	if (d < min)                                                            \
		min = d;                                                        \
	if (d > max)                                                            \
		max = d;                                                        \
} while (0)

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: %s REPS NLEAF NCOMP NPURE [NWARM]\n", argv[0]);
		return 2;
	}
	unsigned reps = (unsigned)atoi(argv[1]), nleaf = (unsigned)atoi(argv[2]);
	unsigned ncomp = (unsigned)atoi(argv[3]), npure = (unsigned)atoi(argv[4]);
	unsigned nwarm = argc > 5 ? (unsigned)atoi(argv[5]) : 0;
	if (!reps)
		return 2;
	for (unsigned i = 0; i < nwarm; i++)
		sink = leaf(sink);
	double empty = 1e30;
	for (int i = 0; i < 1000; i++) {
		double t0 = now_ns(), d = now_ns() - t0;
		if (d < empty)
			empty = d;
	}
	/* alternating, so that both see the same state of the machine */
	double wsum = 0, wmin = 1e30, wmax = 0, psum = 0, pmin = 1e30, pmax = 0;
	for (unsigned r = 0; r < reps; r++) {
		TIME_CALL(work, nleaf, ncomp, wsum, wmin, wmax);
		TIME_CALL(pure, npure, 0, psum, pmin, pmax);
	}
	printf("work mean %.1f min %.1f max %.1f ns\n", wsum / reps, wmin, wmax);
	printf("pure mean %.1f min %.1f max %.1f ns\n", psum / reps, pmin, pmax);
	return 0;
}
