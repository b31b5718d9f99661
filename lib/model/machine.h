/* machine.h — the process model of a perf.data file, shared by its loaders
 * (lib/model/profile.c, lib/stream/stream.c) and the trace symbolizer
 * (lib/trace/trace-sym.c); not a public header.
 *
 * One machine is what perf calls `struct machine`: the dso registry (each
 * dso with its kind, short name and build id), the threads (pid/tid ->
 * comm, map group), the map groups (one per process: the kernel's, and a
 * copy of the parent's at a FORK of a new process), and the side-band
 * records that change them (COMM, FORK, EXIT, MMAP, MMAP2). The records
 * come in time order, so a sample sees the maps and comm of its moment.
 *
 * The dsos and the strings (dso names, comms) are the owner's: the machine
 * appends to the owner's pf_dso array and interns into its string table, so
 * the profile loader's pf_profile.dsos is the registry itself (no copy).
 * The lookups on a loader's hot path (the thread of a sample, a map group's
 * map at an address) are static inline here.
 */
#ifndef PROFF_MODEL_MACHINE_H
#define PROFF_MODEL_MACHINE_H

#include "proff/perfdata.h"
#include "proff/profile.h"
#include "proff/symbol.h"
#include "proff/util.h"

/* one process's maps (pf_range: start, end, pgoff, dso; attr: the map's
 * PROT_* bits, PF_MAP_SHARED for a shared one) */
#define PF_MAP_SHARED 0x80000000u
typedef struct pf_mgroup {
	pf_ranges maps;
	uint32_t gen;          /* bumped on every change of this group */
	bool has_file;         /* a binary was mapped: perf unwinds dwarf stacks only then */
} pf_mgroup;

typedef struct pf_mthread {
	uint32_t pid, tid;
	uint32_t comm;         /* string id in the owner's table */
	uint32_t mg;           /* map group (per process) */
	uint32_t ppid;         /* the tid of the thread that forked it, -1: not seen (perf's thread->ppid) */
	bool comm_set;         /* comm is a COMM's (or inherited one), not the ":tid" placeholder */
} pf_mthread;

typedef struct pf_machine {
	/* the owner's string table and dso array (appended to) */
	pf_strtab *strs;
	pf_dso **dsos; size_t *nr_dsos, *cap_dsos;
	sym_ctx *const *syms;    /* the owner's symbolizer, told the kernel's text address (NULL, *NULL: none) */
	const pd_reader *rd;     /* the header's build ids (NULL: none) */
	pf_map64 name2dso;       /* long-name string id -> dso */
	pf_map64 name2bid;       /* filename string id -> index in the header's build ids */
	/* threads */
	pf_mthread *threads; size_t nthreads, capthreads;
	pf_map64 tid2thread;     /* tid -> thread index */
	uint32_t last_tid[2], last_thread[2];   /* the last two threads found (PF_NONE: none) */
	/* map groups */
	pf_map64 pid2mg;         /* pid -> map group index */
	pf_mgroup *mgs; size_t nmgs, capmgs;
	uint32_t kernel_mg;      /* PF_NONE until pf_machine_start */
	uint32_t kernel_dso;     /* the first [kernel.kallsyms] of a host kernel MMAP (PF_NONE: none) */
} pf_machine;

/* ---- the dso classifier ------------------------------------------------------- */

/* What a mapped name is, as perf tells it: [vdso]; the kernel or a module
 * (kernel cpumode); anonymous or file-less memory (no symbols to read:
 * [heap], [stack...], //anon, /dev/zero, /memfd:, anon_inode:, /SYSV...);
 * else a user binary. */
enum sym_dso_kind pf_dso_kind_of(const char *name, int cpumode);
/* perf's short name: [kernel.kallsyms], a module's [name] (dashes as
 * underscores), "[JIT] tid N" for /tmp/perf-N.map, a path's basename, else
 * the name itself */
void pf_dso_short_name(const char *name, enum sym_dso_kind kind, char *out, size_t len);

/* ---- setting up and releasing ------------------------------------------------- */

/* An empty machine over the owner's strings and dso array (no kernel map
 * group yet: see pf_machine_start). */
void pf_machine_init(pf_machine *m, pf_strtab *strs, pf_dso **dsos, size_t *nr_dsos, size_t *cap_dsos);
/* Ready for a perf.data file's records: the header's build ids by file
 * name, the kernel's map group. -1 when out of memory. */
int pf_machine_start(pf_machine *m, const pd_reader *rd, sym_ctx *const *syms);
/* The maps and threads dropped, the kernel's group made again (the records
 * read again from the start); the dsos stay. -1 when out of memory. */
int pf_machine_restart(pf_machine *m);
/* What only reading records needs: the map groups, the tid and pid
 * indexes, the build-id index. The threads and the dso index stay. */
void pf_machine_free_maps(pf_machine *m);
void pf_machine_free(pf_machine *m);

/* ---- dsos, threads, map groups -------------------------------------------------- */

/* The dso of a mapped file name (created on first use, with its kind, short
 * name and build id: the record's, else the header's). PF_NONE when out of
 * memory. */
uint32_t pf_machine_dso(pf_machine *m, const char *filename, int cpumode,
			const uint8_t *bid, size_t bid_size);
/* The map group of pid, created empty with create. PF_NONE: none, or out of
 * memory. */
uint32_t pf_machine_mg_of_pid(pf_machine *m, uint32_t pid, bool create);
/* tid's thread is idx now (the last-two-threads cache) */
static inline void pf_machine_remember(pf_machine *m, uint32_t tid, uint32_t idx)
{
	if (m->last_thread[0] == PF_NONE || m->last_tid[0] != tid) {
		m->last_tid[1] = m->last_tid[0];
		m->last_thread[1] = m->last_thread[0];
	}
	m->last_tid[0] = tid;
	m->last_thread[0] = idx;
	if (m->last_tid[1] == tid)
		m->last_thread[1] = PF_NONE;
}
pf_mthread *pf_machine_thread_slow(pf_machine *m, uint32_t pid, uint32_t tid, bool create);
/* The thread of (pid, tid) (pid -1: any), created with create (comm ":tid",
 * or "swapper" for the idle task; a tid reused by another process starts a
 * new thread). NULL: none, or out of memory with create. The last one
 * found inline (samples come in runs of one thread). */
static inline pf_mthread *pf_machine_thread(pf_machine *m, uint32_t pid, uint32_t tid, bool create)
{
	if (m->last_thread[0] != PF_NONE && m->last_tid[0] == tid) {
		pf_mthread *t = &m->threads[m->last_thread[0]];
		if (t->pid == pid || pid == (uint32_t)-1 || !create)
			return t;
	}
	return pf_machine_thread_slow(m, pid, tid, create);
}
/* The map of a map group at addr (NULL: none) */
static inline const pf_range *pf_mgroup_find(const pf_mgroup *g, uint64_t addr)
{
	return pf_ranges_find(&g->maps, addr);
}
/* The map of pid's group at addr; the kernel's group for a kernel cpumode */
static inline const pf_range *pf_machine_find_map(const pf_machine *m, uint32_t pid, int cpumode, uint64_t addr)
{
	uint32_t g;
	if (cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) {
		g = m->kernel_mg;
	} else {
		uint64_t v;
		if (!pf_map64_get(&m->pid2mg, pid, &v))
			return NULL;
		g = (uint32_t)v;
	}
	return g != PF_NONE ? pf_mgroup_find(&m->mgs[g], addr) : NULL;
}
/* the map address of ip in map r: the ip itself for the kernel and its
 * modules (kallsyms addresses), else the file offset */
static inline uint64_t pf_machine_map_addr(const pf_machine *m, const pf_range *r, uint64_t ip)
{
	enum sym_dso_kind k = (*m->dsos)[r->dso].kind;
	return k == SYM_DSO_KERNEL || k == SYM_DSO_MODULE ? ip : ip - r->start + r->pgoff;
}

/* ---- side-band records ----------------------------------------------------------- */

/* A COMM, FORK, EXIT, MMAP or MMAP2 record applied (other records: nothing
 * to do). 0, or -1 when out of memory. */
int pf_machine_event(pf_machine *m, const pd_event *ev);

#endif
