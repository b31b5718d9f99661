/* work.c — call-heavy workload for the calibrate prediction test: a small
 * tree of short functions (each top() call makes 1 + 4 + 16 calls), built
 * with -finstrument-functions; argv[1] is the number of top() calls. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) unsigned leaf(unsigned x)
{
	return x * 2654435761u + 1;
}

__attribute__((noinline)) unsigned mid(unsigned x)
{
	for (int i = 0; i < 4; i++)
		x = leaf(x) ^ (unsigned)i;
	return x;
}

__attribute__((noinline)) unsigned top(unsigned x)
{
	for (int i = 0; i < 4; i++)
		x = mid(x) + (unsigned)i;
	return x;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	unsigned acc = 1;
	for (long i = 0; i < n; i++)
		acc = top(acc);
	printf("%u\n", acc);
	return 0;
}
