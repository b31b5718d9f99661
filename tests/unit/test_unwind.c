/* test_unwind.c — the DWARF unwinder (lib/unwind) on this process's own
 * stack, against glibc's backtrace() (libgcc's unwinder, an independent
 * one), and on bad register and stack input.
 *
 * capture() takes the registers a perf sample carries (x86-64,
 * sample_regs_user 0xff0fff) and a copy of the stack from its sp, as the
 * kernel does for PERF_SAMPLE_REGS_USER / STACK_USER; the maps come from
 * /proc/self/maps. The unwound callers must be backtrace()'s return
 * addresses (minus one, perf's non-activation frames). Then the same
 * sample damaged: a stack copy cut short (fewer frames, UW_PARTIAL), a copy
 * the kernel could not make (dyn_size 0, or larger than the copy), the
 * instruction or stack pointer missing from the mask, a 32-bit ABI, no
 * registers at all, a stack of random bytes: a status for each, counted,
 * never more frames than asked, no crash (the ASan build runs this too).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <execinfo.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proff/unwind.h"

#if defined(__x86_64__)

#define REGS_MASK 0xff0fffULL     /* perf's x86-64 PERF_REGS_MASK */
#define NREGS 20                  /* its popcount */
#define STACK_MAX 16384

typedef struct map_ent {
	uint64_t start, end, off;
	char path[256];
} map_ent;

static map_ent maps[512];
static size_t nmaps;

static void read_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	assert_non_null(f);
	char line[1024];
	nmaps = 0;
	while (fgets(line, sizeof(line), f) && nmaps < 512) {
		map_ent *m = &maps[nmaps];
		char perms[8] = "";
		unsigned long long s, e, o;
		int n = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &s, &e, perms, &o, &n) < 4)
			continue;
		m->start = s, m->end = e, m->off = o;
		m->path[0] = '\0';
		const char *p = line + n;
		while (*p == ' ')
			p++;
		if (*p == '/') {
			snprintf(m->path, sizeof(m->path), "%s", p);
			m->path[strcspn(m->path, "\n")] = '\0';
		}
		nmaps++;
	}
	fclose(f);
}

static bool find_map(void *arg, uint64_t addr, uw_map *out)
{
	(void)arg;
	for (size_t i = 0; i < nmaps; i++)
		if (addr >= maps[i].start && addr < maps[i].end) {
			*out = (uw_map){ maps[i].start, maps[i].end, maps[i].off,
					 maps[i].path[0] ? maps[i].path : NULL };
			return true;
		}
	return false;
}

typedef struct snap {
	uint64_t regs[NREGS];
	uint8_t stack[STACK_MAX] __attribute__((aligned(8)));
	uint64_t size;             /* bytes copied */
	void *bt[64];
	int nbt;
} snap;

/* The stack words as the kernel copies them, whatever a sanitizer thinks
 * of other frames' bytes (AddressSanitizer poisons their redzones). */
__attribute__((noinline, no_sanitize_address)) static void copy_stack(uint64_t *dst, uint64_t sp, uint64_t n)
{
	const volatile uint64_t *src = (const volatile uint64_t *)(uintptr_t)sp;
	for (uint64_t i = 0; i < n / 8; i++)
		dst[i] = src[i];
}

/* The registers in perf's order for mask 0xff0fff: ax bx cx dx si di bp sp
 * ip flags cs ss r8..r15 (the values the CFI needs: ip, sp, bp, bx, r12-15). */
__attribute__((noinline)) static void capture(snap *s)
{
	uint64_t ip, sp, bp, bx, r12, r13, r14, r15;
	__asm__ volatile("lea 1f(%%rip), %0\n\t"
			 "mov %%rsp, %1\n\t"
			 "mov %%rbp, %2\n\t"
			 "mov %%rbx, %3\n\t"
			 "mov %%r12, %4\n\t"
			 "mov %%r13, %5\n\t"
			 "mov %%r14, %6\n\t"
			 "mov %%r15, %7\n"
			 "1:"
			 : "=&r"(ip), "=&r"(sp), "=&r"(bp), "=&r"(bx), "=&r"(r12), "=&r"(r13), "=&r"(r14), "=&r"(r15));
	memset(s->regs, 0, sizeof(s->regs));
	s->regs[1] = bx;
	s->regs[6] = bp;
	s->regs[7] = sp;
	s->regs[8] = ip;
	s->regs[12 + 4] = r12;         /* r8..r15 at 12..19 */
	s->regs[12 + 5] = r13;
	s->regs[12 + 6] = r14;
	s->regs[12 + 7] = r15;
	uint64_t top = sp + STACK_MAX;
	for (size_t i = 0; i < nmaps; i++)
		if (sp >= maps[i].start && sp < maps[i].end && maps[i].end < top)
			top = maps[i].end;
	s->size = (top - sp) & ~7ULL;
	copy_stack((uint64_t *)(void *)s->stack, sp, s->size);
	s->nbt = backtrace(s->bt, 64);
}

__attribute__((noinline)) static void level3(snap *s) { capture(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void level2(snap *s) { level3(s); __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) static void level1(snap *s) { level2(s); __asm__ volatile("" ::: "memory"); }

static pd_attr attr(uint64_t mask)
{
	pd_attr a;
	memset(&a, 0, sizeof(a));
	a.sample_type = PD_S_IP | PD_S_TID | PD_S_REGS_USER | PD_S_STACK_USER;
	a.sample_regs_user = mask;
	a.sample_stack_user = STACK_MAX;
	return a;
}

static pd_sample sample_of(const snap *s, uint64_t abi, uint64_t dyn)
{
	pd_sample x;
	memset(&x, 0, sizeof(x));
	x.ip = s->regs[8];
	x.regs_user_abi = abi;
	x.regs_user = s->regs;
	x.nr_regs_user = NREGS;
	x.stack_user = s->stack;
	x.stack_user_size = STACK_MAX;    /* requested; the copy (dyn) may be shorter */
	x.stack_user_dyn_size = dyn;
	return x;
}

static snap *S;

static int setup(void **state)
{
	(void)state;
	read_maps();
	S = calloc(1, sizeof(*S));
	if (!S)
		return -1;
	level1(S);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	free(S);
	return 0;
}

/* The unwound callers are backtrace()'s return addresses. */
static void test_own_stack(void **state)
{
	(void)state;
	assert_true(S->nbt >= 5);
	uw_ctx *u = uw_new(0);
	assert_non_null(u);
	pd_attr a = attr(REGS_MASK);
	pd_sample x = sample_of(S, 2, S->size);
	uint64_t ips[128];
	enum uw_status st;
	size_t n = uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 128, &st);
	assert_true(n >= 5);
	assert_int_equal(ips[0], S->regs[8]);
	/* backtrace()'s frames are return addresses: its own in capture()
	 * (after a sanitizer's interceptor's, in the ASan build), then
	 * capture's callers level3, level2, level1, setup, cmocka ...: the
	 * unwound callers from ips[1] on are those, as far as both go */
	int j = 0;
	while (j < S->nbt && (uint64_t)(uintptr_t)S->bt[j] != ips[1] + 1)
		j++;
	size_t both = 0;
	for (size_t i = 1; i < n && j < S->nbt; i++, j++) {
		if (ips[i] + 1 != (uint64_t)(uintptr_t)S->bt[j]) {
			print_message("frame %zu: unwound %#llx, backtrace %p\n", i,
				      (unsigned long long)ips[i] + 1, S->bt[j]);
			break;
		}
		both++;
	}
	assert_true(both >= 4);    /* level3, level2, level1, setup at least */
	assert_int_equal(uw_get_stats(u)->samples, 1);
	uw_free(u);
}

/* A copy cut short: fewer frames, the same ones as far as they go, and
 * the walk said to be partial. */
static void test_truncated_stack(void **state)
{
	(void)state;
	uw_ctx *u = uw_new(0);
	pd_attr a = attr(REGS_MASK);
	uint64_t full[128], cut[128];
	enum uw_status st;
	pd_sample x = sample_of(S, 2, S->size);
	size_t nf = uw_unwind(u, 1, 0, &x, &a, find_map, NULL, full, 128, &st);
	assert_int_equal(st, UW_DONE);
	/* the frames of the full copy, then where a return address above
	 * the cut is read from the stack's map (no file there: perf's
	 * unwinder reads 0), perf's frame 0 - 1 */
	size_t zero_frames = 0;
	for (uint64_t sz = 8; sz < S->size && sz <= 512; sz *= 2) {
		pd_sample y = sample_of(S, 2, sz);
		y.stack_user_size = sz;
		size_t nc = uw_unwind(u, 1, 0, &y, &a, find_map, NULL, cut, 128, &st);
		size_t same = nc > 1 && cut[nc - 1] == UINT64_MAX ? nc - 1 : nc;
		zero_frames += same < nc;
		assert_true(nc >= 1 && same <= nf);
		assert_memory_equal(cut, full, same * sizeof(uint64_t));
		if (same < nf)
			assert_int_equal(st, UW_PARTIAL);
	}
	assert_true(zero_frames >= 1);
	assert_true(uw_get_stats(u)->partial >= 1);
	/* at most the frames asked for */
	size_t n2 = uw_unwind(u, 1, 0, &x, &a, find_map, NULL, cut, 2, &st);
	assert_int_equal(n2, 2);
	uw_free(u);
}

/* Registers or stack missing or not usable: a status, a count, no frame. */
static void test_bad_input(void **state)
{
	(void)state;
	uw_ctx *u = uw_new(0);
	uint64_t ips[16];
	enum uw_status st;
	pd_attr a = attr(REGS_MASK);

	pd_sample x = sample_of(S, 2, 0);                    /* the kernel copied nothing */
	assert_int_equal(uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NO_STACK);
	x = sample_of(S, 2, STACK_MAX + 8);                  /* dyn_size beyond the copy */
	assert_int_equal(uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NO_STACK);
	x = sample_of(S, 1, S->size);                        /* PERF_SAMPLE_REGS_ABI_32 */
	assert_int_equal(uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_BAD_ABI);
	x = sample_of(S, 0, S->size);                        /* no registers (kernel thread) */
	assert_int_equal(uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NONE);

	/* the mask without ip (bit 8), then without sp (bit 7): the values
	 * shift, and the missing register is said */
	pd_attr noip = attr(REGS_MASK & ~(1ULL << 8)), nosp = attr(REGS_MASK & ~(1ULL << 7));
	x = sample_of(S, 2, S->size);
	x.nr_regs_user = NREGS - 1;
	assert_int_equal(uw_unwind(u, 1, 0, &x, &noip, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NO_REGS);
	assert_int_equal(uw_unwind(u, 1, 0, &x, &nosp, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NO_REGS);
	/* fewer register values than the mask names (a truncated record) */
	x = sample_of(S, 2, S->size);
	x.nr_regs_user = 4;
	assert_int_equal(uw_unwind(u, 1, 0, &x, &a, find_map, NULL, ips, 16, &st), 0);
	assert_int_equal(st, UW_NO_REGS);

	const uw_stats *c = uw_get_stats(u);
	assert_int_equal(c->no_stack, 2);
	assert_int_equal(c->bad_abi, 1);
	assert_int_equal(c->no_regs, 3);
	uw_free(u);
}

/* A remembered walk is recalled while the caller's maps generation is
 * the walk's (its frames' maps not looked up again); when a map goes and
 * the generation changes with it, the maps are looked up again: the walk
 * (whose second frame had a map) is not recalled, and the sample's frames
 * are a fresh walk's in the new maps. */
static void test_memo_maps_gen(void **state)
{
	(void)state;
	uw_ctx *u = uw_new(0), *fresh = uw_new(0);
	assert_non_null(u);
	assert_non_null(fresh);
	uw_set_memo(fresh, UW_MEMO_OFF);
	pd_attr a = attr(REGS_MASK);
	pd_sample x = sample_of(S, 2, S->size);
	uint64_t first[128], again[128], want[128];
	enum uw_status st;
	size_t n = uw_unwind(u, 1, 5, &x, &a, find_map, NULL, first, 128, &st);
	assert_true(n >= 5);
	assert_int_equal(uw_unwind(u, 1, 5, &x, &a, find_map, NULL, again, 128, &st), n);
	assert_memory_equal(first, again, n * sizeof(first[0]));
	assert_int_equal(uw_get_stats(u)->recalled, 1);
	/* the map of the second frame (level3's caller's code) goes */
	map_ent saved[512];
	size_t nsaved = nmaps, k = 0;
	memcpy(saved, maps, sizeof(saved));
	for (size_t i = 0; i < nsaved; i++)
		if (!(first[1] >= saved[i].start && first[1] < saved[i].end))
			maps[k++] = saved[i];
	assert_int_equal(k, nsaved - 1);
	nmaps = k;
	size_t nw = uw_unwind(fresh, 1, 6, &x, &a, find_map, NULL, want, 128, &st);
	size_t n3 = uw_unwind(u, 1, 6, &x, &a, find_map, NULL, again, 128, &st);
	memcpy(maps, saved, sizeof(saved));
	nmaps = nsaved;
	assert_int_equal(n3, nw);
	assert_memory_equal(again, want, nw * sizeof(want[0]));
	assert_int_equal(uw_get_stats(u)->recalled, 1);
	uw_free(u);
	uw_free(fresh);
}

/* Garbage: a stack of random words, an ip nothing maps, maps that say no
 * file: no crash, never more than asked. */
static void test_garbage(void **state)
{
	(void)state;
	uw_ctx *u = uw_new(8);
	pd_attr a = attr(REGS_MASK);
	snap *g = malloc(sizeof(*g));
	assert_non_null(g);
	memcpy(g, S, sizeof(*g));
	srand(7);
	uint64_t ips[32];
	enum uw_status st;
	for (int round = 0; round < 50; round++) {
		for (size_t i = 0; i < g->size; i++)
			g->stack[i] = (uint8_t)rand();
		if (round % 3 == 1)
			g->regs[8] = ((uint64_t)rand() << 32) | (uint64_t)rand();
		if (round % 3 == 2)
			g->regs[7] = S->regs[7] + (uint64_t)(rand() % 64) * 8;
		pd_sample x = sample_of(g, 2, g->size);
		size_t n = uw_unwind(u, (uint64_t)round % 3, 0, &x, &a, find_map, NULL, ips, 32, &st);
		assert_true(n <= 8);
		assert_true(st == UW_DONE || st == UW_PARTIAL);
		if (n)
			assert_int_equal(ips[0], g->regs[8]);
	}
	free(g);
	uw_free(u);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_own_stack),
		cmocka_unit_test(test_truncated_stack),
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_garbage),
		cmocka_unit_test(test_memo_maps_gen),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}

#else

static void test_skip(void **state) { (void)state; skip(); }

int main(void)
{
	const struct CMUnitTest tests[] = { cmocka_unit_test(test_skip) };
	return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
