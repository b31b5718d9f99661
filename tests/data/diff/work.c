/* work.c — test workload for proff diff: a parent and a forked "helper"
 * child burn CPU in named functions whose shares differ between mode A and
 * mode B (functions only in A / only in B, libc memset, getppid syscalls).
 * Build with -DWORK_EXTRA for a rebuilt variant whose functions moved.
 * Usage: work A|B [repeat]; WORK_UNIT=n scales the burn loops (default 20000000).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

static volatile double sink;
static long UNIT = 20000000L;

#define BURN(n) do { double x = 0; for (long i = 0; i < (n); i++) x += (double)i * 1.000001; sink += x; } while (0)

#ifdef WORK_EXTRA   /* a "rebuilt" binary: one more function moves all the others */
__attribute__((noinline)) void extra_first(long n)  { BURN(n * UNIT / 4); }
#endif
__attribute__((noinline)) void compute_hot(long n)  { BURN(n * UNIT); }
__attribute__((noinline)) void compute_mid(long n)  { BURN(n * UNIT); }
__attribute__((noinline)) void compute_cold(long n) { BURN(n * UNIT); }
__attribute__((noinline)) void only_in_a(long n)    { BURN(n * UNIT); }
__attribute__((noinline)) void only_in_b(long n)    { BURN(n * UNIT); }

__attribute__((noinline)) void do_memops(long n)
{
	static char buf[1 << 16];
	for (long i = 0; i < n * (UNIT / 3333); i++) {
		memset(buf, (int)i, sizeof(buf));
		sink += buf[i & 0xffff];
	}
}

__attribute__((noinline)) void do_syscalls(long n)
{
	for (long i = 0; i < n * (UNIT / 66); i++)
		sink += getppid();
}

__attribute__((noinline)) void phase_compute(long hot, long mid)
{
	compute_hot(hot);
	compute_mid(mid);
}

__attribute__((noinline)) void helper_main(long w)
{
	prctl(PR_SET_NAME, "helper");
	compute_cold(w);
	do_syscalls(w / 4 + 1);
}

int main(int argc, char **argv)
{
	int mode_b = argc > 1 && argv[1][0] == 'B';
	long scale = argc > 2 ? atol(argv[2]) : 1;
	pid_t pid;

	if (getenv("WORK_UNIT"))
		UNIT = atol(getenv("WORK_UNIT"));

	for (long r = 0; r < scale; r++) {
		pid = fork();
		if (pid == 0) {
			helper_main(mode_b ? 12 : 6);
			_exit(0);
		}
#ifdef WORK_EXTRA
		extra_first(1);
#endif
		if (!mode_b) {
			phase_compute(40, 25);
			compute_cold(10);
			only_in_a(10);
			do_memops(10);
			do_syscalls(5);
		} else {
			phase_compute(20, 35);
			compute_cold(10);
			only_in_b(15);
			do_memops(5);
			do_syscalls(15);
		}
		waitpid(pid, NULL, 0);
	}
	printf("done %f\n", sink);
	return 0;
}
