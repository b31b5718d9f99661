/* work.c — a workload for the dwarf-unwinding oracle (tests/oracle/dwarf.sh):
 * built -O2 -fomit-frame-pointer, so only DWARF CFI finds its callers; a
 * recursion deep enough to meet the end of a small stack copy, calls into
 * libc, and two threads; it ends by _exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile double sink;

__attribute__((noinline)) static double spin_a(double x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 1.0000001 + 0.5;
	return x;
}

__attribute__((noinline)) static double spin_b(double x, int n)
{
	for (int i = 0; i < n; i++)
		x = x * 0.9999999 + 0.25;
	return x;
}

__attribute__((noinline)) static double format(int k)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "%d.%d", k, k * 7);
	return strtod(buf, NULL);
}

__attribute__((noinline)) static double recurse(int depth, double x)
{
	char pad[96];
	memset(pad, depth, sizeof(pad));
	if (depth == 0)
		return spin_a(x + pad[5], 3000);
	return recurse(depth - 1, x + pad[depth % 96]) + 1.0;
}

__attribute__((noinline)) static double step(int k)
{
	if (k % 5 == 0)
		return recurse(40, k);
	return (k & 1) ? spin_a(format(k), 2000) : spin_b(k, 3000);
}

static void *worker(void *arg)
{
	int n = *(int *)arg;
	double s = 0;
	for (int k = 0; k < n; k++)
		s += spin_b(s, 4000);
	sink = s;
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 20000;
	int wn = n / 2;
	pthread_t th;
	pthread_create(&th, NULL, worker, &wn);
	double s = 0;
	for (int k = 0; k < n; k++)
		s += step(k);
	pthread_join(th, NULL);
	sink = s;
	/* no exit handlers: perf's unwinder (libunwind) and libdw part ways
	 * in _fini, which has no CFI (docs/symbols.md) */
	_exit(0);
}
