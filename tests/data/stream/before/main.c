/* main.c — stream test workload: drives the hot functions of hot.c and util.c. */
#include <stdlib.h>

long alpha(long n);
long beta(long n);
long gamma_(long n);
long util_mix(long n);

volatile long sink;

static long run(long n)
{
	long s = 0;
	s += alpha(n);
	s += beta(n / 2);
	s += gamma_(n / 4);
	s += util_mix(n / 3);
	return s;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	for (int r = 0; r < 6; r++)
		sink += run(n);
	return 0;
}
