/* plt.c — a program with many lazily bound PLT entries, for
 * tests/unit/test_symbol_plt.c (built with -Wl,-z,lazy, without -fno-plt: its
 * size-0 _init is stretched over .plt and overlaps every PLT entry). The
 * global functions g00..g47 put, with -rdynamic, as many .dynsym duplicates of
 * .symtab symbols into perf's symbol tree, which its duplicate fixup erases
 * again before the PLT entries come. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define G(n) int g##n(int x); int g##n(int x) { return x * (n + 3) + 1; }
#define G8(a) G(a##0) G(a##1) G(a##2) G(a##3) G(a##4) G(a##5) G(a##6) G(a##7)
G8(0) G8(1) G8(2) G8(3) G8(4) G8(5)

static int cmp_char(const void *a, const void *b)
{
	return *(const char *)a - *(const char *)b;
}

int main(int argc, char **argv)
{
	const char *home = getenv("HOME");
	long v = strtol(argc > 1 ? argv[1] : "7", NULL, 10);
	char buf[128];
	snprintf(buf, sizeof(buf), "%ld %d %d", v, (int)getppid(), (int)getpid());
	size_t n = strlen(buf) + (home ? strlen(home) : 0);
	char *m = malloc(n + 1);
	if (!m)
		return 1;
	memset(m, 'x', n);
	m[n] = '\0';
	char *d = strdup(m);
	char *r = realloc(d, n + 8);
	if (r)
		d = r;
	memcpy(d, buf, strlen(buf) + 1);
	qsort(m, n, 1, cmp_char);
	printf("%s %d %d %ld %d\n", buf, toupper('a'), abs(-3), (long)time(NULL) & 1,
	       strcmp(d, m) != 0);
	fprintf(stderr, "%s", strstr(buf, "7") ? "" : "");
	puts(strchr(buf, ' ') ? "s" : "n");
	fputs(strrchr(buf, ' ') ? "" : "-", stdout);
	long pg = sysconf(_SC_PAGESIZE);
	double x = atof("1.5");
	free(d);
	free(m);
	return atoi("0") + (int)(pg & 0) + (int)(x - 1.5);
}
