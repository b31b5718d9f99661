/* threads.c — many threads starting and ending while calling instrumented code.
 * Usage: threads [NTHREADS [ITERS]]  (default 32 threads x 1000 iterations)
 * Calls by construction: worker = NTHREADS, step = NTHREADS*ITERS,
 * leaf = 2*NTHREADS*ITERS. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) void leaf(long i) { sink += i; }
__attribute__((noinline)) void step(long i) { leaf(i); leaf(i + 1); }

static long iters = 1000;

__attribute__((noinline)) void *worker(void *arg)
{
	for (long i = 0; i < iters; i++)
		step(i);
	return arg;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 32;
	if (argc > 2)
		iters = atol(argv[2]);
	pthread_t *t = calloc((size_t)n, sizeof(*t));
	/* start in two waves so that threads end while others start */
	for (int w = 0; w < 2; w++) {
		for (int i = w; i < n; i += 2)
			pthread_create(&t[i], NULL, worker, NULL);
		for (int i = w; i < n; i += 2)
			pthread_join(t[i], NULL);
	}
	free(t);
	printf("threads %d iters %ld\n", n, iters);
	return 0;
}
