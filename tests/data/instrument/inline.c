/* inline.c — instrumented functions that the compiler inlines keep their
 * hooks, which then run in their caller's frame: `static inline` sq() and
 * twice() and always_inline clamp() under work(), leaf() a real call.
 * Built at -O2 and -O3 by tests/oracle/uftrace.sh. burn() has 20-40 us of
 * work per call, burn2() twice as much (times are compared there).
 * Calls by construction: main 1, work 1, sq 2000, twice 1000, clamp 1000,
 * leaf 1000, burn 30, burn2 30. */
#include <stdio.h>

static volatile long sink;

static inline long sq(long x) { return x * x; }
static inline long twice(long x) { return sq(x) + sq(x + 1); }
static inline __attribute__((always_inline)) long clamp(long x) { return x > 1000 ? 1000 : x; }

__attribute__((noinline)) long leaf(long x) { sink += x; return x + 1; }

__attribute__((noinline)) void burn(void)
{
	/* summed in a register (the asm keeps the compiler from vectorizing it or
	 * closing the sum): a volatile store and load per iteration ran 1x or 3x
	 * slower by the CPU's store forwarding, run to run, function to function */
	long s = 0;
	for (long i = 0; i < 60000; i++) {
		s += i ^ (i >> 3);
		__asm__ volatile("" : "+r"(s));
	}
	sink += s;
}

__attribute__((noinline)) void burn2(void)
{
	/* summed in a register (the asm keeps the compiler from vectorizing it or
	 * closing the sum): a volatile store and load per iteration ran 1x or 3x
	 * slower by the CPU's store forwarding, run to run, function to function */
	long s = 0;
	for (long i = 0; i < 120000; i++) {
		s += i ^ (i >> 3);
		__asm__ volatile("" : "+r"(s));
	}
	sink += s;
}

__attribute__((noinline)) long work(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += leaf(clamp(twice(i)));
	return s;
}

int main(void)
{
	long s = work(1000);
	for (int i = 0; i < 30; i++) {
		burn();
		burn2();
	}
	printf("%ld\n", s);
	return 0;
}
