/* fib.c — call-heavy test program for the instrumentation runtime.
 * fib(N) makes exactly 2*F(N+1)-1 calls of fib(); main() calls it once.
 * Usage: fib [N]   (default 25) */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) long fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 25;
	printf("fib(%d) = %ld\n", n, fib(n));
	return 0;
}
