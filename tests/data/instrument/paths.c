/* paths.c — ways a process ends, and signal handlers.
 * Usage: paths MODE [N]; work() is called N times (default 10) first, from
 * nested(); then:
 *   exit    exit(3) from inside nested()     _exit   _exit(4) from inside nested()
 *   abort   abort()                           segv    NULL dereference
 *   term    raise(SIGTERM)                    kill    raise(SIGKILL) (trace up to the last flush)
 *   handler SIGUSR1 raised N times, handled by handler() which calls work()
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile long sink;
static volatile int *volatile nullp;

__attribute__((noinline)) void work(long i) { sink += i; }

__attribute__((noinline)) void handler(int sig) { work(sig); }

__attribute__((noinline)) void finish(const char *mode, long n)
{
	if (!strcmp(mode, "exit"))
		exit(3);
	if (!strcmp(mode, "_exit"))
		_exit(4);
	if (!strcmp(mode, "abort"))
		abort();
	if (!strcmp(mode, "segv"))
		sink = *nullp;
	if (!strcmp(mode, "term"))
		raise(SIGTERM);
	if (!strcmp(mode, "kill"))
		raise(SIGKILL);
	if (!strcmp(mode, "handler")) {
		signal(SIGUSR1, handler);
		for (long i = 0; i < n; i++)
			raise(SIGUSR1);
	}
}

__attribute__((noinline)) void nested(const char *mode, long n)
{
	for (long i = 0; i < n; i++)
		work(i);
	finish(mode, n);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	long n = argc > 2 ? atol(argv[2]) : 10;
	nested(mode, n);
	printf("returned\n");
	return 0;
}
