/* vdso.c — most of its time in the vdso (clock_gettime), for
 * tests/oracle/dwarf.sh: the unwinder must read the vdso's CFI to go from
 * its helpers through __vdso_clock_gettime to the callers in libc and here. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) static long spin(long n)
{
	struct timespec ts;
	long s = 0;
	for (long i = 0; i < n; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		s += ts.tv_nsec;
	}
	return s;
}

int main(int argc, char **argv)
{
	printf("%ld\n", spin(argc > 1 ? atol(argv[1]) : 1000000));
	return 0;
}
