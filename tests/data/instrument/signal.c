/* signal.c — a signal handler that calls instrumented code: on_usr1() runs
 * on the thread's stack, on_usr2() on an alternate signal stack
 * (sigaltstack, SA_ONSTACK) — a frame address far from the others. Both
 * signals are raised synchronously from inside poke() (raise() returns only
 * after the handler ran), so the handlers never interrupt the runtime's own
 * hooks and the tree is deterministic: poke > {on_usr1, on_usr2} > work.
 * Calls by construction: main 1, poke 20, on_usr1 10, on_usr2 10, work 40. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile long sink;

__attribute__((noinline)) void work(long x) { sink += x; }

__attribute__((noinline)) void on_usr1(int sig)
{
	work(sig);
	work(sig + 1);
}

__attribute__((noinline)) void on_usr2(int sig)
{
	work(sig);
	work(sig + 2);
}

__attribute__((noinline)) void poke(int sig) { raise(sig); }

int main(void)
{
	static char altstack[1 << 16];
	stack_t ss = { .ss_sp = altstack, .ss_size = sizeof(altstack) };
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = on_usr2;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR2, &sa, NULL);
	for (int i = 0; i < 10; i++) {
		poke(SIGUSR1);
		poke(SIGUSR2);
	}
	printf("%ld\n", sink);
	return 0;
}
