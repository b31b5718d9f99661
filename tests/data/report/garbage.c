/* garbage.c — a workload whose callchains end in garbage return addresses,
 * as programs without frame pointers give perf (tests/oracle/report.sh):
 * spin() runs with the frame pointer on a fake chain of frames whose
 * return addresses are drawn from a pool of random 64-bit values, so the
 * unresolved callchain rows' addresses lie far more than 2^63 apart. perf
 * subtracts them to compare, so its input tree's walks can miss a row of
 * the same address and make a second one, and its collapse can merge some
 * again (lib/hist's tree mode). x86-64 only. Usage: garbage CPU-SECONDS */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define DEPTH 3
#define POOL 4096

static uint64_t fake[2 * DEPTH];
static uint64_t pool[POOL];
static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void __attribute__((noinline)) spin(long n)
{
	/* rbp on the fake chain while the loop runs (saved in r12) */
	__asm__ volatile("mov %%rbp, %%r12\n\t"
			 "mov %1, %%rbp\n\t"
			 "1: dec %0\n\t"
			 "jnz 1b\n\t"
			 "mov %%r12, %%rbp\n\t"
			 : "+r"(n) : "r"(fake) : "r12", "memory", "cc");
}

static double cpu_seconds(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	for (int i = 0; i < POOL; i++)
		pool[i] = next();
	for (int i = 0; i < DEPTH; i++)
		fake[2 * i] = i + 1 < DEPTH ? (uint64_t)(uintptr_t)&fake[2 * (i + 1)] : 0;
	double end = cpu_seconds() + secs;
	while (cpu_seconds() < end) {
		for (int i = 0; i < DEPTH; i++)
			fake[2 * i + 1] = pool[next() % POOL];
		spin(20000);
	}
	return 0;
}
