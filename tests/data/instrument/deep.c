/* deep.c — deep recursion: down(N) recurses N levels (default 150000) in a
 * thread with a 256 MB stack. Calls: down = N + 1. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static volatile long sink;

__attribute__((noinline)) long down(long n)
{
	if (n == 0)
		return 0;
	long r = down(n - 1) + 1;
	sink += r;
	return r;
}

static void *run(void *arg)
{
	long n = (long)arg;
	printf("depth %ld\n", down(n));
	return NULL;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 150000;
	pthread_attr_t at;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 256u << 20);
	pthread_t t;
	if (pthread_create(&t, &at, run, (void *)n))
		return 1;
	pthread_join(t, NULL);
	return 0;
}
