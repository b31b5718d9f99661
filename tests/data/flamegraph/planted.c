/* planted.c — the differential flame graph's test program. main() calls
 * steady() and planted() each ROUNDS times, both spinning in spin(); built
 *   -DPLANTED=1   planted() spins three times as long (the planted change),
 *   -DOLD_PATH    main() also calls old_path() (a path only the baseline has).
 * The same build twice is an A/A pair. */
#include <stdlib.h>

#ifndef PLANTED
#define PLANTED 0
#endif

static volatile unsigned long sink;

__attribute__((noinline)) void tick(void) { sink++; }

/* not a leaf (it calls tick): a leaf may run without a frame of its own,
 * and a frame-pointer callchain would then skip its caller */
__attribute__((noinline)) void spin(long n)
{
	for (long i = 0; i < n; i++) {
		sink += (unsigned long)i;
		if (!(i & 0xffff))
			tick();
	}
}

__attribute__((noinline)) void steady(void) { spin(200000); }
__attribute__((noinline)) void planted(void) { spin(PLANTED ? 600000 : 200000); }
#ifdef OLD_PATH
__attribute__((noinline)) void old_path(void) { spin(100000); }
#endif

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 600;
	for (int r = 0; r < rounds; r++) {
		steady();
		planted();
#ifdef OLD_PATH
		old_path();
#endif
	}
	return 0;
}
