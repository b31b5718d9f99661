/* test_machine.c — the process model shared by the perf.data loaders
 * (lib/model/machine.c): the dso classifier and short names, threads, map
 * groups, and the COMM/FORK/EXIT/MMAP/MMAP2 records, fed as the reader
 * delivers them. The loaders' output against perf is checked end to end by
 * tests/oracle/report.sh, stream.sh and jit.sh; this checks the model's
 * rules one by one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "../../lib/model/machine.h"

typedef struct fixture {
	pf_strtab strs;
	pf_dso *dsos;
	size_t nr_dsos, cap_dsos;
	pf_machine m;
} fixture;

static int setup(void **state)
{
	fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(pf_strtab_init(&f->strs), 0);
	pf_machine_init(&f->m, &f->strs, &f->dsos, &f->nr_dsos, &f->cap_dsos);
	/* the kernel's group, without a reader (no header build ids) */
	assert_int_equal(pf_machine_restart(&f->m), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	fixture *f = *state;
	pf_machine_free(&f->m);
	free(f->dsos);
	pf_strtab_free(&f->strs);
	free(f);
	return 0;
}

static const char *str(const fixture *f, uint32_t id) { return f->strs.strs[id]; }

static void ev_comm(fixture *f, uint32_t pid, uint32_t tid, const char *comm)
{
	pd_event ev = { .type = PD_COMM };
	ev.u.comm.pid = pid;
	ev.u.comm.tid = tid;
	ev.u.comm.comm = comm;
	assert_int_equal(pf_machine_event(&f->m, &ev), 0);
}

static void ev_fork(fixture *f, uint32_t type, uint32_t pid, uint32_t tid, uint32_t ppid, uint32_t ptid)
{
	pd_event ev = { .type = type };
	ev.u.fork.pid = pid;
	ev.u.fork.tid = tid;
	ev.u.fork.ppid = ppid;
	ev.u.fork.ptid = ptid;
	assert_int_equal(pf_machine_event(&f->m, &ev), 0);
}

static void ev_mmap2(fixture *f, int cpumode, uint32_t pid, uint64_t start, uint64_t len, uint64_t pgoff,
		     uint32_t prot, const char *fn)
{
	pd_event ev = { .type = PD_MMAP2, .misc = (uint16_t)cpumode };
	ev.u.mmap.pid = pid;
	ev.u.mmap.tid = pid;
	ev.u.mmap.start = start;
	ev.u.mmap.len = len;
	ev.u.mmap.pgoff = pgoff;
	ev.u.mmap.prot = prot;
	ev.u.mmap.flags = MAP_PRIVATE;
	ev.u.mmap.filename = fn;
	assert_int_equal(pf_machine_event(&f->m, &ev), 0);
}

/* the long name of the dso mapped at addr in pid's maps (NULL: no map) */
static const char *dso_at(fixture *f, uint32_t pid, int cpumode, uint64_t addr)
{
	const pf_range *r = pf_machine_find_map(&f->m, pid, cpumode, addr);
	return r ? str(f, f->dsos[r->dso].long_name) : NULL;
}

static void test_kinds_and_short_names(void **state)
{
	(void)state;
	static const struct { const char *name; int cpumode; enum sym_dso_kind kind; const char *sname; } c[] = {
		{ "/usr/lib/x86_64-linux-gnu/libc.so.6", PD_CPUMODE_USER, SYM_DSO_USER, "libc.so.6" },
		{ "[vdso]", PD_CPUMODE_USER, SYM_DSO_VDSO, "[vdso]" },
		{ "[kernel.kallsyms]_text", PD_CPUMODE_KERNEL, SYM_DSO_KERNEL, "[kernel.kallsyms]" },
		{ "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-intel.ko.xz", PD_CPUMODE_KERNEL, SYM_DSO_MODULE, "[kvm_intel]" },
		{ "[kvm]", PD_CPUMODE_KERNEL, SYM_DSO_MODULE, "[kvm]" },
		{ "//anon", PD_CPUMODE_USER, SYM_DSO_ANON, "anon" },
		{ "/dev/zero (deleted)", PD_CPUMODE_USER, SYM_DSO_ANON, "zero (deleted)" },
		{ "/dev/shm/data", PD_CPUMODE_USER, SYM_DSO_USER, "data" },
		{ "/memfd:jit (deleted)", PD_CPUMODE_USER, SYM_DSO_ANON, "memfd:jit (deleted)" },
		{ "[heap]", PD_CPUMODE_USER, SYM_DSO_ANON, "[heap]" },
		{ "/SYSV00000000 (deleted)", PD_CPUMODE_USER, SYM_DSO_ANON, "SYSV00000000 (deleted)" },
		{ "/tmp/perf-4242.map", PD_CPUMODE_USER, SYM_DSO_USER, "[JIT] tid 4242" },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		enum sym_dso_kind k = pf_dso_kind_of(c[i].name, c[i].cpumode);
		char sn[256];
		pf_dso_short_name(c[i].name, k, sn, sizeof(sn));
		if (k != c[i].kind || strcmp(sn, c[i].sname))
			fail_msg("%s: kind %d short name '%s', expected %d '%s'", c[i].name, (int)k, sn,
				 (int)c[i].kind, c[i].sname);
	}
}

static void test_dso_registry(void **state)
{
	fixture *f = *state;
	static const uint8_t bid[20] = { 1, 2, 3, 4 };
	uint32_t a = pf_machine_dso(&f->m, "/usr/bin/a", PD_CPUMODE_USER, bid, 20);
	uint32_t b = pf_machine_dso(&f->m, "/usr/lib/b.so", PD_CPUMODE_USER, NULL, 0);
	assert_int_not_equal(a, b);
	assert_int_equal(pf_machine_dso(&f->m, "/usr/bin/a", PD_CPUMODE_USER, NULL, 0), a);
	assert_int_equal(f->nr_dsos, 2);
	assert_string_equal(str(f, f->dsos[a].short_name), "a");
	assert_int_equal(f->dsos[a].build_id_size, 20);
	assert_memory_equal(f->dsos[a].build_id, bid, 20);
	assert_int_equal(f->dsos[b].build_id_size, 0);
	/* the kernel's map name is the one [kernel.kallsyms] dso */
	uint32_t k1 = pf_machine_dso(&f->m, "[kernel.kallsyms]_text", PD_CPUMODE_KERNEL, NULL, 0);
	uint32_t k2 = pf_machine_dso(&f->m, "[kernel.kallsyms]", PD_CPUMODE_KERNEL, NULL, 0);
	assert_int_equal(k1, k2);
	assert_string_equal(str(f, f->dsos[k1].long_name), "[kernel.kallsyms]");
}

static void test_fork_copies_maps(void **state)
{
	fixture *f = *state;
	ev_comm(f, 10, 10, "parent");
	ev_mmap2(f, PD_CPUMODE_USER, 10, 0x400000, 0x1000, 0, PROT_READ | PROT_EXEC, "/usr/bin/a");
	ev_fork(f, PD_FORK, 11, 11, 10, 10);
	ev_mmap2(f, PD_CPUMODE_USER, 11, 0x7f0000, 0x1000, 0x2000, PROT_READ | PROT_EXEC, "/usr/lib/b.so");
	/* the child has the parent's maps and its own; the parent only its own */
	assert_string_equal(dso_at(f, 11, PD_CPUMODE_USER, 0x400800), "/usr/bin/a");
	assert_string_equal(dso_at(f, 11, PD_CPUMODE_USER, 0x7f0010), "/usr/lib/b.so");
	assert_null(dso_at(f, 10, PD_CPUMODE_USER, 0x7f0010));
	/* the map address of a user map is the file offset */
	const pf_range *r = pf_machine_find_map(&f->m, 11, PD_CPUMODE_USER, 0x7f0010);
	assert_non_null(r);
	assert_int_equal(pf_machine_map_addr(&f->m, r, 0x7f0010), 0x2010);
	/* the child starts with the parent's comm, and the FORK of a thread
	 * shares its process's maps */
	pf_mthread *t = pf_machine_thread(&f->m, 11, 11, false);
	assert_non_null(t);
	assert_string_equal(str(f, t->comm), "parent");
	ev_fork(f, PD_FORK, 11, 12, 11, 11);
	ev_comm(f, 11, 12, "worker");
	pf_mthread *w = pf_machine_thread(&f->m, 11, 12, false);
	assert_non_null(w);
	assert_string_equal(str(f, w->comm), "worker");
	assert_int_equal(w->mg, pf_machine_thread(&f->m, 11, 11, false)->mg);
	assert_true(f->m.mgs[w->mg].has_file);
}

static void test_exit_keeps_thread(void **state)
{
	fixture *f = *state;
	ev_comm(f, 20, 21, "short");
	ev_fork(f, PD_EXIT, 20, 21, 20, 21);
	pf_mthread *t = pf_machine_thread(&f->m, 20, 21, false);
	assert_non_null(t);
	assert_string_equal(str(f, t->comm), "short");
	/* a tid reused by another process: a new thread */
	pf_mthread *u = pf_machine_thread(&f->m, 30, 21, true);
	assert_non_null(u);
	assert_int_equal(u->pid, 30);
	assert_string_equal(str(f, u->comm), ":21");
	assert_int_equal(f->m.nthreads, 2);
}

static void test_kernel_data_and_jit_maps(void **state)
{
	fixture *f = *state;
	ev_mmap2(f, PD_CPUMODE_KERNEL, (uint32_t)-1, 0xffffffff81000000ull, 0x1000000, 0xffffffff81000000ull,
		 PROT_READ | PROT_EXEC, "[kernel.kallsyms]_text");
	assert_string_equal(dso_at(f, 5, PD_CPUMODE_KERNEL, 0xffffffff81000100ull), "[kernel.kallsyms]");
	assert_null(dso_at(f, 5, PD_CPUMODE_USER, 0xffffffff81000100ull));
	assert_int_not_equal(f->m.kernel_dso, PF_NONE);
	/* a data map is a map too (perf inserts every MMAP2) */
	ev_mmap2(f, PD_CPUMODE_USER, 5, 0x600000, 0x1000, 0, PROT_READ | PROT_WRITE, "/var/data.bin");
	assert_string_equal(dso_at(f, 5, PD_CPUMODE_USER, 0x600010), "/var/data.bin");
	/* executable anonymous memory: the process's JIT map, addressed by ip */
	ev_mmap2(f, PD_CPUMODE_USER, 5, 0x7000000, 0x2000, 0, PROT_READ | PROT_WRITE | PROT_EXEC, "//anon");
	const pf_range *r = pf_machine_find_map(&f->m, 5, PD_CPUMODE_USER, 0x7000040);
	assert_non_null(r);
	assert_string_equal(str(f, f->dsos[r->dso].long_name), "/tmp/perf-5.map");
	assert_string_equal(str(f, f->dsos[r->dso].short_name), "[JIT] tid 5");
	assert_int_equal(pf_machine_map_addr(&f->m, r, 0x7000040), 0x7000040);
	/* the maps read again from the start: the dsos stay */
	size_t nd = f->nr_dsos;
	assert_int_equal(pf_machine_restart(&f->m), 0);
	assert_null(dso_at(f, 5, PD_CPUMODE_USER, 0x600010));
	assert_null(dso_at(f, 5, PD_CPUMODE_KERNEL, 0xffffffff81000100ull));
	assert_int_equal(f->nr_dsos, nd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_and_short_names),
		cmocka_unit_test_setup_teardown(test_dso_registry, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fork_copies_maps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exit_keeps_thread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_data_and_jit_maps, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
