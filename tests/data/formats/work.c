/* work.c — a small program with a known call structure (recursion, a
 * function called from two places), profiled by the format tests
 * (tests/oracle/pprof.sh, tests/oracle/folded.sh, tests/cli/formats.sh):
 *     work [N]   (N: loop length, default 20000000) */
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void leaf_a(long n) { for (long i = 0; i < n; i++) sink += i * i; }
__attribute__((noinline)) void leaf_b(long n) { for (long i = 0; i < n; i++) sink ^= i; }
__attribute__((noinline)) void mid(long n) { leaf_a(n); leaf_b(n / 2); }
__attribute__((noinline)) void rec(int d, long n) { if (d) rec(d - 1, n); else mid(n); }

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000000;
	for (int i = 0; i < 5; i++) {
		mid(n);
		rec(3, n);
		leaf_b(n);
	}
	return 0;
}
