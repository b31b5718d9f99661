/* exec.c — events before exec are flushed; the exec'd image is a new session.
 * First image: a() x2 then execv(self, "child"); second image: b() x4. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile int sink;
__attribute__((noinline)) void a(void) { sink++; }
__attribute__((noinline)) void b(void) { sink++; }

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "child")) {
		for (int i = 0; i < 4; i++)
			b();
		printf("child done\n");
		return 0;
	}
	for (int i = 0; i < 2; i++)
		a();
	char *args[] = { argv[0], "child", NULL };
	execv("/proc/self/exe", args);
	perror("execv");
	return 1;
}
