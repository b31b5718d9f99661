/* forkexec.c — fork, then exec in the child. The parent calls before()
 * twice, forks; the child calls in_child() 3 times, then execs this program
 * again with "image2", whose main calls image2() 4 times; the parent waits
 * and calls after() once. Three process images, three sessions of one
 * trace (uftrace: the same, one session per image).
 * Calls by construction: main 2 (parent, exec'd image), before 2,
 * in_child 3, image2 4, after 1. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile long sink;

__attribute__((noinline)) void before(void) { sink++; }
__attribute__((noinline)) void in_child(void) { sink++; }
__attribute__((noinline)) void image2(void) { sink++; }
__attribute__((noinline)) void after(void) { sink++; }

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "image2")) {
		for (int i = 0; i < 4; i++)
			image2();
		return 0;
	}
	for (int i = 0; i < 2; i++)
		before();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			in_child();
		char *args[] = { argv[0], "image2", NULL };
		execv("/proc/self/exe", args);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	after();
	printf("parent done\n");
	return 0;
}
