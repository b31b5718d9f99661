/* ljdeep.c — leaving deep recursion without returning: rec() recurses 200
 * levels and the innermost call of leave() jumps back to main, 20 times;
 * then after() runs in main. Built as C, leave() calls longjmp (proff's
 * runtime records a jump marker); built as C++ with -DUSE_THROW, leave()
 * throws and main catches, and the compiler runs the exit hooks while
 * unwinding. uftrace 0.13 mis-nests everything after a longjmp, so
 * tests/oracle/uftrace.sh compares proff's tree of the longjmp build with
 * uftrace's tree of the exception build: the same calls, the same tree.
 * Calls by construction: main 1, rec 4000, leave 20, after 1. */
#include <setjmp.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif
static jmp_buf env;
static volatile long sink;

__attribute__((noinline)) void leave(void)
{
#ifdef USE_THROW
	throw 1;
#else
	longjmp(env, 1);
#endif
}

__attribute__((noinline)) void rec(int n)
{
	sink++;
	if (n <= 1)
		leave();
	else
		rec(n - 1);
	sink++;
}

__attribute__((noinline)) void after(void) { sink++; }

int main(void)
{
	volatile int rounds = 0;
#ifdef USE_THROW
	while (rounds < 20) {
		rounds++;
		try {
			rec(200);
		} catch (int) {
		}
	}
#else
	setjmp(env);
	if (rounds < 20) {
		rounds++;
		rec(200);
	}
#endif
	after();
	printf("rounds %d\n", rounds);
	return 0;
}
#ifdef __cplusplus
}
#endif
