/* prog.c — test program for the symbolizer unit tests: known functions, a
 * static one, PLT calls into libc and a forcibly inlined helper. Built at test
 * time by build.sh; never run for its output. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline __attribute__((always_inline)) long mix(long a, long b)
{
	return (a * 31) ^ (b >> 3);        /* MIX_LINE */
}

__attribute__((noinline)) long work_hot(long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += mix(i, s);            /* HOT_LINE */
	return s;
}

__attribute__((noinline)) static long work_cold(long n)
{
	long s = 1;
	for (long i = 0; i < n; i++)
		s ^= i * 7;
	return s + getppid();
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	printf("%ld\n", work_hot(n) + work_cold(n));
	return 0;
}
