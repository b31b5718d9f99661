/* sigjmp.c — siglongjmp out of a signal handler. A profiling timer
 * (ITIMER_PROF: a tick of CPU time, 1-4 ms) interrupts a loop of calls of
 * leaf(), which spends about a third of its time inside the runtime's hooks;
 * the handler jumps back to main's sigsetjmp, 10 times. A jump out of a
 * handler that interrupted a hook abandons that hook; tracing must go on:
 * after() is then called 7 times and every call is in the trace.
 * Calls by construction: after = 7, spin = 10 (each left by a jump). */
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>

static sigjmp_buf env;
static volatile int jumps;
static volatile long sink;

__attribute__((noinline)) void leaf(long i)
{
	for (int k = 0; k < 40; k++)
		sink += i ^ k;
}

__attribute__((noinline)) void spin(void)
{
	for (long i = 0;; i++)
		leaf(i);
}

__attribute__((noinline)) void after(void) { sink++; }

static void on_prof(int sig)
{
	(void)sig;
	jumps++;
	siglongjmp(env, 1);
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_prof;
	sigaction(SIGPROF, &sa, NULL);
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };
	setitimer(ITIMER_PROF, &it, NULL);
	sigsetjmp(env, 1);
	if (jumps < 10)
		spin();
	struct itimerval off = { { 0, 0 }, { 0, 0 } };
	setitimer(ITIMER_PROF, &off, NULL);
	for (int i = 0; i < 7; i++)
		after();
	printf("jumps %d\n", jumps);
	return 0;
}
