/* longjmp.c — exits skipped by longjmp. rec() recurses DEPTH (10) levels and
 * the innermost longjmps back to main; repeated ROUNDS (100) times, then
 * after() runs once. Calls: rec = 1000, jump = 100, after = 1. */
#include <setjmp.h>
#include <stdio.h>

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) void jump(void) { longjmp(env, 1); }

__attribute__((noinline)) void rec(int n)
{
	sink++;
	if (n <= 1)
		jump();
	else
		rec(n - 1);
	sink++;
}

__attribute__((noinline)) void after(void) { sink++; }

int main(void)
{
	volatile int rounds = 0;
	setjmp(env);
	if (rounds < 100) {
		rounds++;
		rec(10);
	}
	after();
	printf("rounds %d\n", rounds);
	return 0;
}
