/* planted.c — the workload of the statistics tests (tests/oracle/diff-stats.sh):
 * three hot functions of equal work, hot_b called through caller_b.
 *   planted UNIT [PERCENT_B]
 * runs ROUNDS rounds of hot_a(UNIT), caller_b(UNIT * PERCENT_B / 100),
 * hot_c(UNIT): PERCENT_B = 110 is version B, hot_b 10 % heavier. */
#include <stdlib.h>

static volatile unsigned long sink;

/* a call at the end makes every hot function a non-leaf one, with a frame of
 * its own: frame-pointer callchains then show each caller (gcc drops the
 * frames of leaf functions at -O1 even with -fno-omit-frame-pointer) */
__attribute__((noinline)) static void keep(unsigned long x)
{
	sink += x;
}

#define HOT(name, k) \
	__attribute__((noinline)) static void name(unsigned long n) \
	{ \
		unsigned long x = k; \
		for (unsigned long i = 0; i < n; i++) \
			x = x * 6364136223846793005UL + i; \
		keep(x); \
	}
HOT(hot_a, 1)
HOT(hot_b, 2)
HOT(hot_c, 3)

__attribute__((noinline)) static void caller_b(unsigned long n)
{
	hot_b(n);
	keep(n);
}

int main(int argc, char **argv)
{
	unsigned long unit = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
	unsigned long pct = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
	for (int r = 0; r < 20; r++) {
		hot_a(unit / 20);
		caller_b(unit / 20 * pct / 100);
		hot_c(unit / 20);
	}
	return 0;
}
