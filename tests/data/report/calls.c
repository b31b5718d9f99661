/* calls.c — workload for the report oracle tests: a short run (~0.4 s)
 * with a deep and a recursive call path, a thread, a forked child that
 * renames itself, libc and kernel time, so Children/Self, comm, pid, dso
 * and recursion all show up in a perf.data recorded with -g.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile double sink;
static long unit = 1000000;

#define BURN(n) do { double x = 0; for (long i = 0; i < (n); i++) x += (double)i * 1.000001; sink += x; } while (0)

__attribute__((noinline)) void leaf_hot(long n)   { BURN(n * unit); }
__attribute__((noinline)) void leaf_warm(long n)  { BURN(n * unit); }
__attribute__((noinline)) void leaf_cold(long n)  { BURN(n * unit); }

__attribute__((noinline)) long recurse(int depth, long n)
{
	if (depth == 0) {
		leaf_warm(n);
		return 1;
	}
	return recurse(depth - 1, n) + 1;
}

__attribute__((noinline)) void middle(long n)
{
	leaf_hot(n);
	leaf_cold(n / 4);
}

__attribute__((noinline)) void syscalls(long n)
{
	for (long i = 0; i < n * 20000; i++)
		sink += getppid();
}

__attribute__((noinline)) void memops(long n)
{
	static char buf[1 << 16];
	for (long i = 0; i < n * 400; i++) {
		memset(buf, (int)i, sizeof(buf));
		sink += buf[i & 0xffff];
	}
}

__attribute__((noinline)) void *thread_main(void *arg)
{
	(void)arg;
	leaf_cold(40);
	return NULL;
}

__attribute__((noinline)) void child_main(void)
{
	prctl(PR_SET_NAME, "kid");
	leaf_cold(30);
	syscalls(2);
}

int main(int argc, char **argv)
{
	long scale = argc > 1 ? atol(argv[1]) : 1;
	unit *= scale;
	pid_t pid = fork();
	if (pid == 0) {
		child_main();
		_exit(0);
	}
	pthread_t t;
	pthread_create(&t, NULL, thread_main, NULL);
	middle(120);
	recurse(6, 50);
	syscalls(4);
	memops(3);
	pthread_join(t, NULL);
	waitpid(pid, NULL, 0);
	printf("%f\n", sink);
	return 0;
}
