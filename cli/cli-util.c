/* cli-util.c — how the CLI reports errors and warnings (one line on stderr),
 * config values it cannot use, and where the instrumentation runtime is
 * found. */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmds.h"
#include "proff/config.h"

void cli_error(const proff_error *err)
{
	char buf[1200];
	fprintf(stderr, "proff: %s\n", proff_err_str(err, buf, sizeof(buf)));
}

void cli_errorf(const char *fmt, ...)
{
	va_list ap;
	flockfile(stderr);      /* one line, whole: loads on worker threads warn too */
	fputs("proff: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void cli_warnf(const char *fmt, ...)
{
	va_list ap;
	flockfile(stderr);      /* one line, whole: loads on worker threads warn too */
	fputs("proff: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

static void config_bad(const char *key, const char *why, const char *tail)
{
	const char *file, *v = pf_config_get(cli_config(), key);
	unsigned line;
	if (pf_config_where(cli_config(), key, &file, &line))
		fprintf(stderr, "proff: bad config value for '%s' in %s line %u ('%s'%s%s)%s\n", key, file, line,
			v ? v : "", why ? ": " : "", why ? why : "", tail);
	else
		fprintf(stderr, "proff: bad config value for '%s'%s\n", key, tail);
}

void cli_config_bad(const char *key, const char *why)
{
	config_bad(key, why, ", ignoring...");
}

void cli_config_error(const char *key, const char *why)
{
	config_bad(key, why, "");
}

bool cli_config_bool(const char *key, bool def)
{
	const char *v = pf_config_get(cli_config(), key);
	if (!v)
		return def;
	int b = pf_config_parse_bool(v);
	if (b < 0) {
		cli_config_bad(key, "not a boolean");
		return def;
	}
	return b;
}

void cli_config_warnings(void)
{
	const proff_error *e = cli_config_load_error();
	if (e && e->code)
		cli_warnf("%s; config ignored from there on", proff_err_str(e, (char[600]){0}, 600));
	const char *n = pf_config_note(cli_config());
	if (n)
		cli_warnf("%s", n);
}

int cli_find_runtime(const char *given, char *out, size_t len)
{
	const char *e = given ? given : getenv("PROFF_RUNTIME");
	if (e && *e) {
		if (access(e, R_OK) < 0) {
			cli_errorf("runtime %s: %s", e, strerror(errno));
			return -1;
		}
		if (!realpath(e, out))
			snprintf(out, len, "%s", e);
		return 0;
	}
	char self[PATH_MAX - 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		return -2;
	self[n] = 0;
	char *slash = strrchr(self, '/');
	if (!slash)
		return -2;
	*slash = 0;
	static const char *const rel[] = { "libproff-instrument.so", "../lib/proff/libproff-instrument.so" };
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if ((size_t)snprintf(out, len, "%s/%s", self, rel[i]) >= len)
			continue;
		if (access(out, R_OK) == 0)
			return 0;
	}
	return -2;
}

/* ---- the heap of a large read ------------------------------------------------- */

#ifdef __GLIBC__
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <time.h>
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23   /* Linux 5.14 */
#endif
#endif

/* A large read fills a profile model of many arrays and hash tables that
 * grow by doubling: first touches of fresh memory, one page fault per 4 KB
 * (70 K faults, a tenth of the CPU time of a children report). Before such
 * a read the commands that can afford the memory (the RSS targets of
 * docs/performance.md) take one heap for every thread (one arena), keep
 * blocks below 32 MB in it and never trim it, and reserve 1 GB of address
 * space for it at once, marked for transparent huge pages: one fault per
 * 2 MB. Nothing is committed until touched; where the reservation or the
 * advice fails (strict overcommit, THP off, another allocator), malloc
 * works as before. */
#ifdef __GLIBC__
/* Fresh huge pages can be slow: a virtual machine with free page reporting
 * hands the host back the guest's free blocks a second or two after they
 * are freed, and the host faults in each one's 512 small pages when it is
 * touched again (3-7 ms per huge page, against 0.1-0.3 ms for one still
 * warm; small pages come from fragments the host never took back, 0.5 ms
 * per 2 MB). Whether the pages at hand are warm changes within a run (the
 * blocks a previous run freed are handed back over about a second), so one
 * probe at the start does not tell. With ahead_mb, a thread of its own
 * faults the reservation in, that many MB ahead of the allocator, one huge
 * page at a time, each one timed: from the second slow one of four on, the
 * rest is left to small pages (which the thread goes on faulting in ahead). A
 * children report of the bench profile 6 s after the last: 1.7-1.8 s with
 * huge pages throughout, 0.94-1.15 s so; back-to-back runs the same. */
#define AHEAD_HUGE ((uintptr_t)2 << 20)
#define AHEAD_MAX_STEP ((uintptr_t)8 << 20)
#define AHEAD_SLOW_MS 1.0

static struct {
	pthread_t th;
	bool running;
	atomic_bool stop;
	uintptr_t lo, hi;    /* the reservation, huge-page aligned */
	uintptr_t step;       /* faulted in past the allocator */
	unsigned char vec[AHEAD_MAX_STEP / 4096];
} ahead;

static double ms_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) * 1e3 + (double)(b->tv_nsec - a->tv_nsec) * 1e-6;
}

static void *ahead_main(void *arg)
{
	(void)arg;
	uintptr_t p = ahead.lo;                /* faulted in below p */
	uintptr_t want = ahead.lo + ahead.step;
	bool small = false;
	unsigned slow = 0;   /* the last pages faulted in, one bit each: slow */
	long page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || AHEAD_HUGE % (uintptr_t)page)
		return NULL;
	while (!atomic_load_explicit(&ahead.stop, memory_order_relaxed)) {
		/* the allocator has reached past p: the last page it touched
		 * in the step above p, plus a step (a touch further up, such
		 * as a large block's end, is left alone: the allocator may
		 * never touch the gap below it) */
		uintptr_t len = ahead.hi - p < ahead.step ? ahead.hi - p : ahead.step;
		if (want <= p && len && mincore((void *)p, len, ahead.vec) == 0)
			for (uintptr_t i = len / (uintptr_t)page; i-- > 0;)
				if (ahead.vec[i] & 1) {
					want = p + (i + 1) * (uintptr_t)page + ahead.step;
					break;
				}
		if (want > ahead.hi)
			want = ahead.hi;
		if (want <= p) {
			if (p >= ahead.hi)
				break;
			nanosleep(&(struct timespec){ .tv_nsec = 1000000 }, NULL);
			continue;
		}
		for (; p < want && !atomic_load_explicit(&ahead.stop, memory_order_relaxed); p += AHEAD_HUGE) {
			struct timespec t0, t1;
			clock_gettime(CLOCK_MONOTONIC, &t0);
			if (madvise((void *)p, AHEAD_HUGE, MADV_POPULATE_WRITE) != 0)
				return NULL;   /* an older kernel: the allocator faults its pages */
			clock_gettime(CLOCK_MONOTONIC, &t1);
			slow = slow << 1 | (ms_between(&t0, &t1) > AHEAD_SLOW_MS);
			/* two slow ones of the last four: not a moment's preemption */
			if (!small && __builtin_popcount(slow & 15) >= 2 && p + AHEAD_HUGE < ahead.hi) {
				small = true;
				madvise((void *)(p + AHEAD_HUGE), ahead.hi - (p + AHEAD_HUGE), MADV_NOHUGEPAGE);
			}
		}
	}
	return NULL;
}
#endif

void cli_fast_heap_done(void)
{
#ifdef __GLIBC__
	if (!ahead.running)
		return;
	atomic_store(&ahead.stop, true);
	pthread_join(ahead.th, NULL);
	ahead.running = false;
#endif
}

void cli_fast_heap(unsigned ahead_mb)
{
#ifdef __GLIBC__
	const size_t reserve = (size_t)1 << 30, pad = (size_t)64 << 20, huge = (size_t)2 << 20;
	mallopt(M_ARENA_MAX, 1);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	mallopt(M_TOP_PAD, (int)reserve);
	char *lo = sbrk(0);
	/* more than the heap has free, so it grows by the pad (volatile: the
	 * compiler must not drop the pair) */
	void *volatile grow = malloc(16 << 20);
	free(grow);
	char *hi = sbrk(0);
	mallopt(M_TOP_PAD, (int)pad);
	if (lo == (char *)-1 || hi == (char *)-1 || hi <= lo)
		return;
	uintptr_t a = ((uintptr_t)lo + huge - 1) & ~(uintptr_t)(huge - 1);
	uintptr_t b = (uintptr_t)hi & ~(uintptr_t)(huge - 1);
	if (b <= a || madvise((void *)a, b - a, MADV_HUGEPAGE) != 0 || !ahead_mb || ahead.running)
		return;
	ahead.lo = a;
	ahead.hi = b;
	ahead.step = (((uintptr_t)ahead_mb << 20) + huge - 1) & ~(uintptr_t)(huge - 1);
	if (ahead.step > AHEAD_MAX_STEP)
		ahead.step = AHEAD_MAX_STEP;
	atomic_store(&ahead.stop, false);
	ahead.running = pthread_create(&ahead.th, NULL, ahead_main, NULL) == 0;
#endif
}

void cli_stdout_bulk(void)
{
	__fsetlocking(stdout, FSETLOCKING_BYCALLER);
	if (!isatty(STDOUT_FILENO))
		setvbuf(stdout, NULL, _IOFBF, (size_t)1 << 16);
}

int cli_groups_split(const char *cmd, char **pos, int *npos, uint32_t **group_out, bool *seps_out)
{
	int n = *npos;
	uint32_t *group = calloc((size_t)(n > 2 ? n : 2), sizeof(*group));
	if (!group) {
		cli_errorf("out of memory");
		return 255;
	}
	bool seps = false;
	for (int i = 0; i < n; i++)
		seps |= !pos[i];
	int k = 0;
	uint32_t gi = 0;
	for (int i = 0; i < n; i++) {
		if (pos[i]) {
			group[k] = seps ? gi : (uint32_t)k;
			pos[k++] = pos[i];
			continue;
		}
		if (i == 0) {
			cli_errorf("%s: '--' before any file: the baseline group is empty (usage: proff %s A1 A2 -- B1 B2)",
				   cmd, cmd);
			goto bad;
		}
		if (i == n - 1) {
			cli_errorf("%s: '--' after the last file: the last group is empty (usage: proff %s A1 A2 -- B1 B2)",
				   cmd, cmd);
			goto bad;
		}
		if (!pos[i - 1]) {
			cli_errorf("%s: '-- --': an empty group (usage: proff %s A1 A2 -- B1 B2 -- C1 C2)", cmd, cmd);
			goto bad;
		}
		gi++;
	}
	*npos = k;
	*group_out = group;
	*seps_out = seps;
	return 0;
bad:
	free(group);
	return EXIT_USAGE;
}
