/* machine.c — the process model of a perf.data file (machine.h): the dso
 * registry and its classifier, threads, per-process map groups, and the
 * side-band records (COMM, FORK, EXIT, MMAP, MMAP2) that change them. One
 * model for the profile loader, the stream loader and the trace
 * symbolizer, so they name, classify and find the same dsos as perf does.
 */
#include "machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int64_t intern(pf_machine *m, const char *s)
{
	return pf_strtab_intern(m->strs, s, strlen(s));
}

/* ---- the dso classifier ------------------------------------------------------- */

enum sym_dso_kind pf_dso_kind_of(const char *name, int cpumode)
{
	if (!strcmp(name, "[vdso]"))
		return SYM_DSO_VDSO;
	if (cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) {
		if (!strncmp(name, "[kernel.kallsyms]", 17) || !strncmp(name, "[guest.kernel", 13))
			return SYM_DSO_KERNEL;
		return SYM_DSO_MODULE;
	}
	/* perf's anonymous and file-less memory: of /dev only /dev/zero (a
	 * device perf can open and fail on stays a dso of its own) */
	if (name[0] == '[' || !strncmp(name, "//anon", 6) || !strncmp(name, "/memfd:", 7) ||
	    !strncmp(name, "/dev/zero", 9) || !strncmp(name, "anon_inode:", 11) ||
	    !strncmp(name, "/SYSV", 5))
		return SYM_DSO_ANON;
	return SYM_DSO_USER;
}

void pf_dso_short_name(const char *name, enum sym_dso_kind kind, char *out, size_t len)
{
	if (kind == SYM_DSO_KERNEL) {
		snprintf(out, len, "[kernel.kallsyms]");
		return;
	}
	if (kind == SYM_DSO_MODULE && name[0] == '/' && !sym_is_kmod_path(name)) {
		/* a kernel map of a file perf takes for no module: its base name */
		const char *b = strrchr(name, '/');
		snprintf(out, len, "%s", b + 1);
		return;
	}
	if (kind == SYM_DSO_MODULE && name[0] == '/') {
		/* /lib/modules/.../kvm.ko(.xz) -> [kvm] */
		const char *b = strrchr(name, '/');
		b = b ? b + 1 : name;
		size_t n = strcspn(b, ".");
		char tmp[256];
		snprintf(tmp, sizeof(tmp), "%.*s", (int)n, b);
		for (char *c = tmp; *c; c++)
			if (*c == '-')
				*c = '_';
		snprintf(out, len, "[%s]", tmp);
		return;
	}
	int jit_pid;
	if (sscanf(name, "/tmp/perf-%d.map", &jit_pid) == 1) {
		/* perf's name for a JIT map, whatever follows the pid */
		snprintf(out, len, "[JIT] tid %d", jit_pid);
		return;
	}
	if (name[0] == '[' || name[0] != '/') {
		snprintf(out, len, "%s", name);
		return;
	}
	const char *b = strrchr(name, '/');
	snprintf(out, len, "%s", b ? b + 1 : name);
}

/* ---- setting up and releasing ------------------------------------------------- */

void pf_machine_init(pf_machine *m, pf_strtab *strs, pf_dso **dsos, size_t *nr_dsos, size_t *cap_dsos)
{
	memset(m, 0, sizeof(*m));
	m->strs = strs;
	m->dsos = dsos;
	m->nr_dsos = nr_dsos;
	m->cap_dsos = cap_dsos;
	m->last_thread[0] = m->last_thread[1] = PF_NONE;
	m->kernel_mg = PF_NONE;
	m->kernel_dso = PF_NONE;
}

static uint32_t new_mg(pf_machine *m)
{
	if (PF_GROW(m->mgs, m->capmgs, m->nmgs + 1) < 0)
		return PF_NONE;
	memset(&m->mgs[m->nmgs], 0, sizeof(pf_mgroup));
	return (uint32_t)m->nmgs++;
}

int pf_machine_start(pf_machine *m, const pd_reader *rd, sym_ctx *const *syms)
{
	m->rd = rd;
	m->syms = syms;
	const pd_header *hdr = pd_get_header(rd);
	for (size_t i = 0; i < hdr->nr_build_ids; i++) {
		const char *fn = hdr->build_ids[i].filename ? hdr->build_ids[i].filename : "";
		int64_t id = intern(m, fn);
		uint64_t *slot = id < 0 ? NULL : pf_map64_upsert(&m->name2bid, (uint64_t)id, NULL);
		if (!slot)
			return -1;
		*slot = i;
	}
	m->kernel_mg = new_mg(m);
	m->kernel_dso = PF_NONE;
	return m->kernel_mg == PF_NONE ? -1 : 0;
}

static void free_groups(pf_machine *m)
{
	pf_map64_free(&m->tid2thread);
	pf_map64_free(&m->pid2mg);
	for (size_t i = 0; i < m->nmgs; i++)
		pf_ranges_free(&m->mgs[i].maps);
	free(m->mgs);
	m->mgs = NULL;
	m->nmgs = m->capmgs = 0;
	m->kernel_mg = PF_NONE;
}

int pf_machine_restart(pf_machine *m)
{
	free_groups(m);
	free(m->threads);
	m->threads = NULL;
	m->nthreads = m->capthreads = 0;
	m->last_thread[0] = m->last_thread[1] = PF_NONE;
	m->kernel_mg = new_mg(m);
	return m->kernel_mg == PF_NONE ? -1 : 0;
}

void pf_machine_free_maps(pf_machine *m)
{
	free_groups(m);
	pf_map64_free(&m->name2bid);
}

void pf_machine_free(pf_machine *m)
{
	pf_machine_free_maps(m);
	pf_map64_free(&m->name2dso);
	free(m->threads);
	m->threads = NULL;
	m->nthreads = m->capthreads = 0;
	m->last_thread[0] = m->last_thread[1] = PF_NONE;
}

/* ---- dsos ------------------------------------------------------------------------ */

/* The build id the header recorded for filename (the kernel's is recorded
 * as "[kernel.kallsyms]" while its map is "[kernel.kallsyms]_text": then
 * the long name's, lid). Read at the dso's creation: a HEADER_BUILD_ID
 * record in the data appends to the table (and may move it). */
static size_t header_build_id(pf_machine *m, const char *filename, int64_t lid, const uint8_t **bid)
{
	int64_t fid = intern(m, filename);
	uint64_t bi;
	if (fid < 0 || !pf_map64_get(&m->name2bid, (uint64_t)fid, NULL))
		fid = lid;
	const pd_header *hdr = m->rd ? pd_get_header(m->rd) : NULL;
	if (fid < 0 || !hdr || !pf_map64_get(&m->name2bid, (uint64_t)fid, &bi) || bi >= hdr->nr_build_ids)
		return 0;
	*bid = hdr->build_ids[bi].id;
	return hdr->build_ids[bi].size;
}

uint32_t pf_machine_dso(pf_machine *m, const char *filename, int cpumode,
			const uint8_t *bid, size_t bid_size)
{
	const char *name = filename;
	if ((cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL) &&
	    !strncmp(filename, "[kernel.kallsyms]", 17))
		name = "[kernel.kallsyms]";
	char namebuf[4096];
	snprintf(namebuf, sizeof(namebuf), "%s", name);
	int64_t lid = intern(m, namebuf);
	if (lid < 0)
		return PF_NONE;
	uint64_t v;
	if (pf_map64_get(&m->name2dso, (uint64_t)lid, &v))
		return (uint32_t)v;
	enum sym_dso_kind kind = pf_dso_kind_of(namebuf, cpumode);
	char sbuf[4096];
	pf_dso_short_name(namebuf, kind, sbuf, sizeof(sbuf));
	int64_t sid = intern(m, sbuf);
	if (sid < 0 || PF_GROW(*m->dsos, *m->cap_dsos, *m->nr_dsos + 1) < 0)
		return PF_NONE;
	pf_dso *d = &(*m->dsos)[*m->nr_dsos];
	memset(d, 0, sizeof(*d));
	d->long_name = (uint32_t)lid;
	d->short_name = (uint32_t)sid;
	d->kind = kind;
	if (!bid_size)
		bid_size = header_build_id(m, filename, lid, &bid);
	if (bid_size > 20)
		bid_size = 20;
	if (bid_size)
		memcpy(d->build_id, bid, bid_size);
	d->build_id_size = (uint8_t)bid_size;
	d->sd = NULL;     /* the owner's symbolizer handle, made on first lookup */
	uint64_t *slot = pf_map64_upsert(&m->name2dso, (uint64_t)lid, NULL);
	if (!slot)
		return PF_NONE;
	*slot = *m->nr_dsos;
	return (uint32_t)(*m->nr_dsos)++;
}

/* ---- threads and map groups --------------------------------------------------------- */

uint32_t pf_machine_mg_of_pid(pf_machine *m, uint32_t pid, bool create)
{
	uint64_t v;
	if (pf_map64_get(&m->pid2mg, pid, &v))
		return (uint32_t)v;
	if (!create)
		return PF_NONE;
	uint32_t mg = new_mg(m);
	if (mg == PF_NONE)
		return PF_NONE;
	uint64_t *slot = pf_map64_upsert(&m->pid2mg, pid, NULL);
	if (!slot)
		return PF_NONE;
	*slot = mg;
	return mg;
}

pf_mthread *pf_machine_thread_slow(pf_machine *m, uint32_t pid, uint32_t tid, bool create)
{
	uint64_t v;
	/* samples come in runs of one thread, and two cpus interleave two */
	for (int i = 0; i < 2; i++) {
		if (m->last_thread[i] == PF_NONE || m->last_tid[i] != tid)
			continue;
		uint32_t idx = m->last_thread[i];
		pf_mthread *t = &m->threads[idx];
		if (t->pid == pid || pid == (uint32_t)-1 || !create) {
			if (i)
				pf_machine_remember(m, tid, idx);
			return t;
		}
		break;
	}
	if (pf_map64_get(&m->tid2thread, tid, &v)) {
		pf_mthread *t = &m->threads[v];
		pf_machine_remember(m, tid, (uint32_t)v);
		if (t->pid == pid || pid == (uint32_t)-1 || !create)
			return t;
		/* tid reused by another process: start a new thread */
	}
	if (!create)
		return NULL;
	if (PF_GROW(m->threads, m->capthreads, m->nthreads + 1) < 0)
		return NULL;
	pf_mthread *t = &m->threads[m->nthreads];
	t->pid = pid;
	t->tid = tid;
	t->ppid = (uint32_t)-1;
	char buf[32];
	/* perf registers the idle task (0/0) as "swapper" before reading */
	if (tid == 0 && (pid == 0 || pid == (uint32_t)-1))
		snprintf(buf, sizeof(buf), "swapper");
	else
		snprintf(buf, sizeof(buf), ":%d", (int)tid);
	int64_t c = intern(m, buf);
	t->comm = c < 0 ? 0 : (uint32_t)c;
	t->comm_set = tid == 0 && (pid == 0 || pid == (uint32_t)-1);
	t->mg = pf_machine_mg_of_pid(m, pid, true);
	if (t->mg == PF_NONE)
		return NULL;
	uint64_t *slot = pf_map64_upsert(&m->tid2thread, tid, NULL);
	if (!slot)
		return NULL;
	pf_machine_remember(m, tid, (uint32_t)m->nthreads);
	*slot = m->nthreads++;
	return t;
}

/* ---- side-band records ----------------------------------------------------------- */

static int on_comm(pf_machine *m, const pd_event *ev)
{
	pf_mthread *t = pf_machine_thread(m, ev->u.comm.pid, ev->u.comm.tid, true);
	if (!t)
		return -1;
	int64_t c = intern(m, ev->u.comm.comm ? ev->u.comm.comm : "");
	if (c < 0)
		return -1;
	t->comm = (uint32_t)c;
	t->comm_set = true;
	return 0;
}

static int on_fork(pf_machine *m, const pd_event *ev)
{
	uint32_t pid = ev->u.fork.pid, ppid = ev->u.fork.ppid;
	uint32_t tid = ev->u.fork.tid, ptid = ev->u.fork.ptid;
	pf_mthread *parent = pf_machine_thread(m, ppid, ptid, true);
	if (!parent)
		return -1;
	uint32_t pcomm = parent->comm, pmg = parent->mg, pptid = parent->tid;
	bool pcomm_set = parent->comm_set;
	if (pid != ppid) {
		/* a new process: a copy of the parent's maps, but for a FORK
		 * perf record synthesized for a running process (its own
		 * MMAP2 records follow: perf clones nothing then) */
		bool clone = !(ev->misc & PD_MISC_FORK_EXEC);
		uint32_t mg = new_mg(m);
		if (mg == PF_NONE || (clone && pf_ranges_copy(&m->mgs[mg].maps, &m->mgs[pmg].maps) < 0))
			return -1;
		m->mgs[mg].gen++;
		m->mgs[mg].has_file = clone && m->mgs[pmg].has_file;
		uint64_t *slot = pf_map64_upsert(&m->pid2mg, pid, NULL);
		if (!slot)
			return -1;
		*slot = mg;
	}
	/* a fresh thread record (a reused tid starts over) */
	uint64_t *ts = pf_map64_upsert(&m->tid2thread, tid, NULL);
	if (!ts || PF_GROW(m->threads, m->capthreads, m->nthreads + 1) < 0)
		return -1;
	m->last_thread[0] = m->last_thread[1] = PF_NONE;
	pf_mthread *t = &m->threads[m->nthreads];
	t->pid = pid;
	t->tid = tid;
	/* perf: the parent's comm if a COMM set it, else the child's own ":tid" */
	if (pcomm_set) {
		t->comm = pcomm;
	} else {
		char buf[32];
		snprintf(buf, sizeof(buf), ":%d", (int)tid);
		int64_t c = intern(m, buf);
		t->comm = c < 0 ? 0 : (uint32_t)c;
	}
	t->comm_set = pcomm_set;
	t->ppid = pptid;
	t->mg = pf_machine_mg_of_pid(m, pid, true);
	if (t->mg == PF_NONE)
		return -1;
	*ts = m->nthreads++;
	return 0;
}

static int on_mmap(pf_machine *m, const pd_event *ev)
{
	int cpumode = ev->misc & PD_CPUMODE_MASK;
	const char *fn = ev->u.mmap.filename ? ev->u.mmap.filename : "";
	bool kernel = cpumode == PD_CPUMODE_KERNEL || cpumode == PD_CPUMODE_GUEST_KERNEL;
	bool file = fn[0] == '/' && pf_dso_kind_of(fn, cpumode) == SYM_DSO_USER;
	char jit[64];
	uint64_t pgoff = ev->u.mmap.pgoff;
	if (!kernel) {
		/* executable memory without a file: perf names it by the
		 * process's JIT map, whose addresses are the ips */
		uint32_t prot = ev->type == PD_MMAP2 ? ev->u.mmap.prot
			: (ev->misc & PD_MISC_MMAP_DATA) ? 0 : PROT_EXEC;
		const char *jfn = sym_jit_map_name(fn, ev->u.mmap.pid, prot, ev->u.mmap.flags, jit, sizeof(jit));
		if (jfn != fn) {
			fn = jfn;
			pgoff = ev->u.mmap.start;
		}
	}
	uint32_t dso = pf_machine_dso(m, fn, cpumode,
				      ev->u.mmap.has_build_id ? ev->u.mmap.build_id : NULL,
				      ev->u.mmap.has_build_id ? ev->u.mmap.build_id_size : 0);
	if (dso == PF_NONE)
		return -1;
	uint64_t start = ev->u.mmap.start, len = ev->u.mmap.len;
	uint64_t end = start + len < start ? UINT64_MAX : start + len;
	/* perf: an MMAP (not MMAP2) is PROT_EXEC unless it maps data */
	uint32_t prot = ev->type == PD_MMAP2 ? ev->u.mmap.prot : (ev->misc & PD_MISC_MMAP_DATA) ? 0 : PROT_EXEC;
	if ((prot & PROT_EXEC) && !(*m->dsos)[dso].map_size)
		(*m->dsos)[dso].map_size = len;
	if ((*m->dsos)[dso].kind == SYM_DSO_MODULE && kernel && !(*m->dsos)[dso].has_kmod_start) {
		(*m->dsos)[dso].kmod_start = start;
		(*m->dsos)[dso].has_kmod_start = true;
	}
	if (ev->type == PD_MMAP2 && !(*m->dsos)[dso].ino)
		(*m->dsos)[dso].ino = ev->u.mmap.ino;
	uint32_t g;
	if (kernel) {
		g = m->kernel_mg;
		if (g == PF_NONE)
			return 0;       /* no kernel group: not a perf.data file's records */
		/* (perf: a pgoff of 0, _text hidden by kptr_restrict at
		 * record time, is no reference) */
		if ((*m->dsos)[dso].kind == SYM_DSO_KERNEL && m->syms && *m->syms && ev->u.mmap.pgoff)
			sym_kernel_set_ref(*m->syms, ev->u.mmap.pgoff);
		if ((*m->dsos)[dso].kind == SYM_DSO_KERNEL && cpumode == PD_CPUMODE_KERNEL && m->kernel_dso == PF_NONE)
			m->kernel_dso = dso;
	} else {
		pf_mthread *t = pf_machine_thread(m, ev->u.mmap.pid, ev->u.mmap.tid, true);
		if (!t)
			return -1;
		g = t->mg;
	}
	pf_mgroup *mg = &m->mgs[g];
	/* every map, data maps too: perf inserts them all (a data map over a
	 * code map's range replaces that part of it) */
	if (pf_ranges_insert(&mg->maps, start, end, pgoff, dso) < 0)
		return -1;
	size_t at = PF_COUNT_LE(mg->maps.v, mg->maps.n, start, start);
	if (at && mg->maps.v[at - 1].start == start)
		mg->maps.v[at - 1].attr = prot | ((ev->type == PD_MMAP2 && (ev->u.mmap.flags & MAP_SHARED)) ? PF_MAP_SHARED : 0);
	mg->gen++;
	if (file)
		mg->has_file = true;
	return 0;
}

int pf_machine_event(pf_machine *m, const pd_event *ev)
{
	switch (ev->type) {
	case PD_COMM:
		return on_comm(m, ev);
	case PD_FORK:
		return on_fork(m, ev);
	case PD_EXIT:
		/* perf marks the thread dead and keeps it: samples after the
		 * EXIT (other cpus' buffers) still find its comm and maps */
		return 0;
	case PD_MMAP:
	case PD_MMAP2:
		return on_mmap(m, ev);
	default:
		return 0;
	}
}
