/* scan.c — the recorder's view of the records it writes: counts samples and
 * lost samples, keeps the first/last sample time (SAMPLE_TIME feature) and
 * tracks executable maps per process (MMAP/MMAP2, FORK clones, exec clears)
 * so that each DSO hit by a sample ip or callchain address is known — those
 * get a BUILD_ID entry and a copy in the build-id cache. */
#include "rec-int.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

int rec_state_init(rec_state *s)
{
	memset(s, 0, sizeof(*s));
	pf_map64_init(&s->pid_index);
	if (pf_strtab_init(&s->names))
		return -1;
	s->kernel_dso = rec_dso_intern(s, "[kernel.kallsyms]");
	return s->kernel_dso == UINT32_MAX ? -1 : 0;
}

void rec_state_free(rec_state *s)
{
	for (size_t i = 0; i < s->nr_procs; i++)
		free(s->procs[i].maps);
	free(s->procs);
	free(s->dsos);
	pf_map64_free(&s->pid_index);
	pf_strtab_free(&s->names);
}

uint32_t rec_dso_intern(rec_state *s, const char *name)
{
	int64_t id = pf_strtab_intern(&s->names, name, strlen(name));
	if (id < 0)
		return UINT32_MAX;
	if ((size_t)id >= s->nr_dsos) {
		if (PF_GROW(s->dsos, s->cap_dsos, (size_t)id + 1))
			return UINT32_MAX;
		for (size_t i = s->nr_dsos; i <= (size_t)id; i++) {
			memset(&s->dsos[i], 0, sizeof(s->dsos[i]));
			s->dsos[i].name = pf_strtab_get(&s->names, (uint32_t)i);
		}
		s->nr_dsos = (size_t)id + 1;
	}
	return (uint32_t)id;
}

static struct rec_proc *get_proc(rec_state *s, uint32_t pid, bool create)
{
	uint64_t v;
	if (pf_map64_get(&s->pid_index, pid, &v))
		return &s->procs[v - 1];
	if (!create)
		return NULL;
	if (PF_GROW(s->procs, s->cap_procs, s->nr_procs + 1))
		return NULL;
	bool found;
	uint64_t *slot = pf_map64_upsert(&s->pid_index, pid, &found);
	if (!slot)
		return NULL;
	*slot = s->nr_procs + 1;
	struct rec_proc *p = &s->procs[s->nr_procs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

/* Maps of a process are kept sorted by start and non-overlapping: a new map
 * replaces whatever it covers (trimmed pieces of partly covered maps are
 * dropped too: only "which DSO is at this address" matters here). */
static void add_map(rec_state *s, uint32_t pid, uint64_t start, uint64_t len, const char *name)
{
	struct rec_proc *p = get_proc(s, pid, true);
	if (!p || !len)
		return;
	uint32_t dso = rec_dso_intern(s, name);
	if (dso == UINT32_MAX)
		return;
	uint64_t end = start + len;
	size_t j = 0;
	for (size_t i = 0; i < p->n; i++)       /* drop what the new map overlaps */
		if (p->maps[i].end <= start || p->maps[i].start >= end)
			p->maps[j++] = p->maps[i];
	p->n = j;
	p->last = 0;
	if (PF_GROW(p->maps, p->cap, p->n + 1))
		return;
	size_t lo = 0, hi = p->n;             /* first map starting after start */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (p->maps[mid].start < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	memmove(p->maps + lo + 1, p->maps + lo, (p->n - lo) * sizeof(*p->maps));
	p->maps[lo] = (struct rec_map){ start, end, dso };
	p->n++;
}

static void mark_user(rec_state *s, struct rec_proc *p, uint64_t ip)
{
	if (!p || !p->n)
		return;
	if (p->last < p->n && ip >= p->maps[p->last].start && ip < p->maps[p->last].end) {
		s->dsos[p->maps[p->last].dso].hit = true;
		return;
	}
	size_t lo = PF_COUNT_LE(p->maps, p->n, start, ip);   /* past the last map with start <= ip */
	if (lo && ip < p->maps[lo - 1].end) {
		s->dsos[p->maps[lo - 1].dso].hit = true;
		p->last = lo - 1;
	}
}

/* a kernel address: a module's when a module map holds it, else the kernel's */
static void mark_kernel(rec_state *s, struct rec_proc *kmods, uint64_t ip)
{
	if (kmods && kmods->n) {
		size_t lo = PF_COUNT_LE(kmods->maps, kmods->n, start, ip);
		if (lo && ip < kmods->maps[lo - 1].end) {
			s->dsos[kmods->maps[lo - 1].dso].hit = true;
			return;
		}
	}
	s->dsos[s->kernel_dso].hit = true;
}

static void scan_sample(rec_state *s, const uint8_t *r, size_t size)
{
	uint64_t st = s->sample_type;
	size_t off = 8;
	uint64_t ip = 0, time = 0;
	uint32_t pid = 0;
#define NEED(n) do { if (off + (n) > size) goto done; } while (0)
	if (st & PERF_SAMPLE_IDENTIFIER) off += 8;
	if (st & PERF_SAMPLE_IP) { NEED(8); memcpy(&ip, r + off, 8); off += 8; }
	if (st & PERF_SAMPLE_TID) { NEED(8); memcpy(&pid, r + off, 4); off += 8; }
	if (st & PERF_SAMPLE_TIME) { NEED(8); memcpy(&time, r + off, 8); off += 8; }
	if (st & PERF_SAMPLE_ADDR) off += 8;
	if (st & PERF_SAMPLE_ID) off += 8;
	if (st & PERF_SAMPLE_STREAM_ID) off += 8;
	if (st & PERF_SAMPLE_CPU) off += 8;
	if (st & PERF_SAMPLE_PERIOD) off += 8;
	if (time) {
		if (!s->first_time || time < s->first_time)
			s->first_time = time;
		if (time > s->last_time)
			s->last_time = time;
	}
	{
		unsigned mode = r[4] & PERF_RECORD_MISC_CPUMODE_MASK;
		struct rec_proc *p = get_proc(s, pid, false);
		struct rec_proc *kmods = s->kmods_at ? &s->procs[s->kmods_at - 1] : NULL;
		if (mode == PERF_RECORD_MISC_KERNEL)
			mark_kernel(s, kmods, ip);
		else if (mode == PERF_RECORD_MISC_USER)
			mark_user(s, p, ip);
		if (st & PERF_SAMPLE_CALLCHAIN) {
			uint64_t nr;
			NEED(8);
			memcpy(&nr, r + off, 8);
			off += 8;
			if (nr > (size - off) / 8)
				goto done;
			bool user = mode == PERF_RECORD_MISC_USER;
			for (uint64_t i = 0; i < nr; i++) {
				uint64_t a;
				memcpy(&a, r + off + 8 * i, 8);
				if (a >= (uint64_t)PERF_CONTEXT_MAX) {
					if (a == (uint64_t)PERF_CONTEXT_KERNEL)
						user = false;
					else if (a == (uint64_t)PERF_CONTEXT_USER)
						user = true;
					continue;
				}
				if (user)
					mark_user(s, p, a);
				else
					mark_kernel(s, kmods, a);
			}
		}
	}
done:
	s->st->samples++;
#undef NEED
}

void rec_scan(rec_state *s, const uint8_t *r, size_t size)
{
	uint32_t type;
	memcpy(&type, r, 4);
	switch (type) {
	case PERF_RECORD_SAMPLE:
		scan_sample(s, r, size);
		break;
	case PERF_RECORD_LOST:
		if (size >= 24) {
			uint64_t lost;
			memcpy(&lost, r + 16, 8);
			s->st->lost += lost;
			s->st->lost_records++;
		}
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2: {
		size_t fo = type == PERF_RECORD_MMAP ? 40 : 72;
		if (size <= fo)
			break;
		uint32_t pid;
		uint64_t start, len;
		memcpy(&pid, r + 8, 4);
		memcpy(&start, r + 16, 8);
		memcpy(&len, r + 24, 8);
		if (type == PERF_RECORD_MMAP2) {
			uint32_t prot;
			memcpy(&prot, r + 64, 4);
			if (!(prot & PROT_EXEC))
				break;
		}
		bool kernel = (r[4] & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
		char name[4096];
		size_t n = size - fo;
		if (n >= sizeof(name))
			n = sizeof(name) - 1;
		memcpy(name, r + fo, n);
		name[n] = 0;
		if (kernel) {
			/* the kernel's own map is kernel_dso; a module's is kept
			 * with the other modules' */
			if (strncmp(name, "[kernel.kallsyms]", 17) != 0) {
				add_map(s, REC_KERNEL_PID, start, len, name);
				struct rec_proc *k = get_proc(s, REC_KERNEL_PID, false);
				s->kmods_at = k ? (size_t)(k - s->procs) + 1 : 0;
				uint32_t d = rec_dso_intern(s, name);
				if (d != UINT32_MAX)
					s->dsos[d].module = true;
			}
			break;
		}
		add_map(s, pid, start, len, name);
		break;
	}
	case PERF_RECORD_FORK:
		if (size >= 24) {
			uint32_t pid, ppid;
			memcpy(&pid, r + 8, 4);
			memcpy(&ppid, r + 12, 4);
			if (pid != ppid) {
				struct rec_proc *c = get_proc(s, pid, true);
				struct rec_proc *pp = get_proc(s, ppid, false);   /* after c: procs may move */
				if (c && pp && pp->n && !PF_GROW(c->maps, c->cap, pp->n)) {
					memcpy(c->maps, pp->maps, pp->n * sizeof(*c->maps));
					c->n = pp->n;
					c->last = 0;
				}
			}
		}
		break;
	case PERF_RECORD_COMM:
		if ((r[5] << 8 | r[4]) & PERF_RECORD_MISC_COMM_EXEC) {
			uint32_t pid;
			memcpy(&pid, r + 8, 4);
			struct rec_proc *p = get_proc(s, pid, false);
			if (p)
				p->n = 0;
		}
		break;
	default:
		break;
	}
}

int rec_emit(rec_state *s, const void *rec, size_t size, proff_error *err)
{
	rec_scan(s, rec, size);
	return pdw_write(s->w, rec, size, err);
}
