/* jit.c — a tiny "JIT" for tests/oracle/jit.sh: copies a counting loop
 * into anonymous executable memory (two functions, a page apart, plus one
 * in a MAP_SHARED /dev/zero mapping), runs them, and writes nothing else:
 * the test writes /tmp/perf-PID.map itself, in the forms it wants to
 * compare, once the recording is done. argv[1]: rounds; argv[2]: a file
 * the pid is written to.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* x86-64: mov rax, rdi; 1: dec rax; jnz 1b; ret */
static const unsigned char loop[] = { 0x48, 0x89, 0xf8, 0x48, 0xff, 0xc8, 0x75, 0xfb, 0xc3 };

typedef long (*fn)(long);

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 100;
	unsigned char *m = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int zfd = open("/dev/zero", O_RDWR);
	unsigned char *z = zfd < 0 ? MAP_FAILED
		: mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED, zfd, 0);
	if (m == MAP_FAILED || z == MAP_FAILED)
		return 1;
	memcpy(m, loop, sizeof(loop));
	memcpy(m + 4096 + 64, loop, sizeof(loop));
	memcpy(z + 16, loop, sizeof(loop));
	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");
		if (!f)
			return 1;
		fprintf(f, "%d %lx %lx %lx\n", (int)getpid(), (unsigned long)m,
			(unsigned long)(m + 4096 + 64), (unsigned long)(z + 16));
		fclose(f);
	}
	fn f1 = (fn)(void *)m, f2 = (fn)(void *)(m + 4096 + 64), f3 = (fn)(void *)(z + 16);
	long s = 0;
	for (long i = 0; i < rounds; i++)
		s += f1(400000) + f2(200000) + f3(100000);
	printf("%ld\n", s);
	return 0;
}
