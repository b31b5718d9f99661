/* fork.c — the child's calls belong to the child's own session.
 * Parent: a() x3, then fork; child: b() x5, exit(0); parent: wait, c() x2. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int sink;
__attribute__((noinline)) void a(void) { sink++; }
__attribute__((noinline)) void b(void) { sink++; }
__attribute__((noinline)) void c(void) { sink++; }

int main(void)
{
	for (int i = 0; i < 3; i++)
		a();
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 5; i++)
			b();
		exit(0);
	}
	waitpid(pid, NULL, 0);
	for (int i = 0; i < 2; i++)
		c();
	printf("parent done\n");
	return 0;
}
