/* tailcall.c — calls in tail position: first() returns second(x), which
 * returns third(2x), and even()/odd()
 * call each other in tail position. Instrumented, none of them is a tail
 * call (the exit hook comes after the callee returns), so uftrace's tree
 * nests them; several of their exit hooks are themselves tail-called
 * (jmp __cyg_profile_func_exit), after the frame is torn down.
 * (No one-letter names: uftrace --demangle=full takes "f" for float.)
 * Calls by construction: main 1, first 100, second 100, third 100,
 * even 550, odd 500. */
#include <stdio.h>

static volatile long sink;

__attribute__((noinline)) long third(long x) { sink += x; return x + 3; }
__attribute__((noinline)) long second(long x) { return third(x * 2); }
__attribute__((noinline)) long first(long x) { return second(x + 1); }

long odd(long n);
__attribute__((noinline)) long even(long n) { return n == 0 ? 1 : odd(n - 1); }
__attribute__((noinline)) long odd(long n) { return n == 0 ? 0 : even(n - 1); }

int main(void)
{
	long s = 0;
	for (long i = 0; i < 100; i++)
		s += first(i);
	for (long i = 0; i < 50; i++)
		s += even(20);
	printf("%ld\n", s);
	return 0;
}
