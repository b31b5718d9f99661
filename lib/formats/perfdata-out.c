/* perfdata-out.c — a profile written as a perf.data file (lib/perfdata's
 * writer), for perf report, perf diff and the tools that read perf.data
 * (`proff convert IN OUT.data`).
 *
 * perf.data carries addresses, not names: perf finds the symbols in the
 * binaries the mappings name, so a profile whose frames have their binary's
 * addresses (perf.data itself, exact traces, pprof from Go with its
 * mappings) converts; one whose functions are only names (folded stacks)
 * does not, and says so. Written:
 *   - an attr per event with samples (its perf type and config, sample type
 *     IDENTIFIER|IP|TID|TIME|PERIOD, CALLCHAIN and CPU when the event has
 *     them), its name in EVENT_DESC;
 *   - the kernel's map ([kernel.kallsyms]_text) and the modules', then per
 *     process a COMM per thread and an MMAP per (binary, load address)
 *     spanning the profile's addresses in it, in pieces around the
 *     addresses the source found in no map (they stay unresolved), build
 *     ids in the BUILD_ID feature;
 *   - a SAMPLE record per raw sample in the order read when the profile
 *     kept it (pf_load_opts.keep_sequence: proff convert does; a pprof
 *     Sample or a folded line is one), else one per aggregated sample with
 *     its period; the stack as perf's callchain (context markers where it
 *     crosses between kernel and user), times increasing by 1 µs from 1 s.
 * Threads the profile does not know (pid -1) become processes of their own
 * (pids from 4,000,000 on: above any real pid).
 */
#include "fmt-int.h"

#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "proff/perfdata-writer.h"
#include "proff/perfdata.h"

#define FAKE_PID0 4000000u
#define PAGE 4096u

typedef struct rec {
	uint8_t b[16384];
	size_t n;
} rec;

static void r_hdr(rec *r, uint32_t type, uint16_t misc)
{
	memset(r->b, 0, 8);
	memcpy(r->b, &type, 4);
	memcpy(r->b + 4, &misc, 2);
	r->n = 8;
}
static void r_u32(rec *r, uint32_t v) { memcpy(r->b + r->n, &v, 4); r->n += 4; }
static void r_u64(rec *r, uint64_t v) { memcpy(r->b + r->n, &v, 8); r->n += 8; }
static void r_str(rec *r, const char *s)
{
	size_t l = strlen(s), pad;
	if (l > 4000)
		l = 4000;
	memcpy(r->b + r->n, s, l);
	pad = ((l + 1 + 7) & ~(size_t)7) - l;
	memset(r->b + r->n + l, 0, pad);
	r->n += l + pad;
}
static int r_emit(pdw_writer *w, rec *r, proff_error *err)
{
	uint16_t sz = (uint16_t)r->n;
	memcpy(r->b + 6, &sz, 2);
	return pdw_write(w, r->b, r->n, err);
}

/* a map of one process: (dso, ip - addr) over [lo, hi]; next: the map of
 * another process with the same (dso, delta), PF_NONE at the end */
typedef struct omap { uint32_t pid, dso; uint64_t delta, lo, hi; uint32_t next; } omap;

static int omap_cmp(const void *x, const void *y)
{
	const omap *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* an address the source found in no map (of a process; PF_NONE: the
 * kernel's): no map written may cover it */
typedef struct hole { uint32_t pid; uint64_t ip; } hole;

static int hole_cmp(const void *x, const void *y)
{
	const hole *a = x, *b = y;
	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

typedef struct pd_out {
	pf_profile *p;
	proff_error *err;
	uint32_t *pid_of;            /* thread -> the pid written */
	hole *holes; size_t nholes, cap_holes;
	omap *maps; size_t nmaps, cap_maps;
	pair_table map_tab;          /* (dso, delta) -> the first map of a process with them */
} pd_out;

static bool kernel_dso(const pf_dso *d) { return d->kind == SYM_DSO_KERNEL || d->kind == SYM_DSO_MODULE; }

/* Can perf find this location's symbol? A resolved frame needs its binary */
static bool carried(const pf_profile *p, const pf_loc *l)
{
	if (l->sym == PF_NONE || l->dso == PF_NONE)
		return true;
	const pf_dso *d = &p->dsos[l->dso];
	const char *n = pf_str(p, d->long_name);
	return n[0] == '/' || kernel_dso(d) || d->kind == SYM_DSO_VDSO;
}

/* The maps: per process, every (dso, load address) its samples meet */
static int collect_maps(pd_out *o)
{
	pf_profile *p = o->p;
	for (size_t i = 0; i < p->nr_samples; i++) {
		const pf_sample *s = &p->samples[i];
		uint32_t pid = o->pid_of[s->thread];
		for (uint32_t n = s->stack; n; n = p->nodes[n].parent) {
			const pf_loc *l = &p->locs[p->nodes[n].loc];
			if (!carried(p, l))
				return proff_err_set(o->err, PROFF_ENOTSUP, p->path, PROFF_NO_OFFSET,
						     "%s is a function name without its binary (%s): perf.data carries "
						     "addresses, perf would not find it", pf_str(p, p->syms[l->sym].name),
						     pf_str(p, p->dsos[l->dso].long_name));
			if (l->dso == PF_NONE) {
				if (PF_GROW(o->holes, o->cap_holes, o->nholes + 1) < 0)
					return proff_err_set(o->err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
				o->holes[o->nholes++] = (hole){ l->level == 'k' || l->level == 'g' ? PF_NONE : pid, l->ip };
				continue;
			}
			bool kern = kernel_dso(&p->dsos[l->dso]);
			uint32_t mpid = kern ? PF_NONE : pid;
			uint64_t delta = l->ip - l->addr;
			int ins;
			uint32_t *slot = pair_table_find(&o->map_tab, l->dso, delta, 1, &ins);
			if (!slot)
				return proff_err_set(o->err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
			uint32_t at = ins ? PF_NONE : *slot;
			while (at != PF_NONE && o->maps[at].pid != mpid)
				at = o->maps[at].next;
			if (at == PF_NONE) {
				if (PF_GROW(o->maps, o->cap_maps, o->nmaps + 1) < 0)
					return proff_err_set(o->err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
				at = (uint32_t)o->nmaps++;
				o->maps[at] = (omap){ mpid, l->dso, delta, l->ip, l->ip, ins ? PF_NONE : *slot };
				*slot = at;
			}
			omap *m = &o->maps[at];
			if (l->ip < m->lo)
				m->lo = l->ip;
			if (l->ip > m->hi)
				m->hi = l->ip;
		}
	}
	return 0;
}

static int write_map(pd_out *o, pdw_writer *w, rec *r, const omap *m, uint64_t start, uint64_t end)
{
	const pf_profile *p = o->p;
	const pf_dso *d = &p->dsos[m->dso];
	bool kernel = m->pid == PF_NONE;
	r_hdr(r, PERF_RECORD_MMAP, kernel ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	r_u32(r, kernel ? (uint32_t)-1 : m->pid);
	r_u32(r, kernel ? 0 : m->pid);
	r_u64(r, start);
	r_u64(r, end - start);
	/* the kernel's pgoff is the recorded address of _text, by which a
	 * reader relocates the kallsyms it finds (0: none, no relocation) */
	bool ktext = d->kind == SYM_DSO_KERNEL;
	uint64_t pgoff = ktext ? 0 : start - m->delta;
	if (ktext && p->syms_ctx)
		sym_kernel_ref(p->syms_ctx, &pgoff);
	r_u64(r, pgoff);
	r_str(r, ktext ? "[kernel.kallsyms]_text" : pf_str(p, d->long_name));
	return r_emit(w, r, o->err);
}

/* The maps of the kernel (kernel) or of the processes: each spans its
 * addresses, in pieces around the addresses the source found in no map */
static int write_maps(pd_out *o, pdw_writer *w, rec *r, bool kernel)
{
	if (o->nmaps)
		qsort(o->maps, o->nmaps, sizeof(*o->maps), omap_cmp);
	if (o->nholes)
		qsort(o->holes, o->nholes, sizeof(*o->holes), hole_cmp);
	for (size_t i = 0; i < o->nmaps; i++) {
		const omap *m = &o->maps[i];
		if ((m->pid == PF_NONE) != kernel)
			continue;
		/* the first hole of this map's address space at or after lo */
		size_t lo = 0, hi = o->nholes;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			const hole *x = &o->holes[mid];
			if (x->pid < m->pid || (x->pid == m->pid && x->ip < m->lo))
				lo = mid + 1;
			else
				hi = mid;
		}
		uint64_t start = m->lo;
		for (size_t k = lo; k < o->nholes && o->holes[k].pid == m->pid && o->holes[k].ip <= m->hi; k++) {
			uint64_t h = o->holes[k].ip;
			int rc = h > start ? write_map(o, w, r, m, start, h) : 0;
			if (rc < 0)
				return rc;
			start = h + 1;
		}
		int rc = start <= m->hi ? write_map(o, w, r, m, start, m->hi + 1) : 0;
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One sample's record in r (its period and time written by the caller at
 * *period_at and *time_at) */
static void sample_rec(pd_out *o, rec *r, const pf_sample *s, uint32_t thread, const int *slot_of, const bool *cpu,
		       const bool *cc, size_t *time_at, size_t *period_at)
{
	const pf_profile *p = o->p;
	const pf_loc *leaf = &p->locs[p->nodes[s->stack].loc];
	bool leaf_k = leaf->level == 'k' || leaf->level == 'g';
	const pf_thread *t = &p->threads[thread];
	r_hdr(r, PERF_RECORD_SAMPLE, leaf_k ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER);
	r_u64(r, (uint64_t)slot_of[s->evsel] + 1);              /* IDENTIFIER */
	r_u64(r, leaf->ip);                                      /* IP */
	r_u32(r, o->pid_of[thread]);                             /* TID: pid, tid */
	r_u32(r, t->tid == PF_NONE ? o->pid_of[thread] : t->tid);
	*time_at = r->n;
	r_u64(r, 0);                                             /* TIME */
	if (cpu[s->evsel]) {
		r_u32(r, s->cpu == PF_NONE ? 0 : s->cpu);
		r_u32(r, 0);
	}
	*period_at = r->n;
	r_u64(r, 0);                                             /* PERIOD */
	if (!cc[s->evsel])
		return;
	/* the callchain, leaf first, with perf's context markers; none for a
	 * sample whose callchain perf discarded (a corrupt one) */
	size_t ncc_at = r->n;
	uint64_t ncc = 0;
	r_u64(r, 0);
	int ctx = -1;
	for (uint32_t n = pf_node_nochain(p, s->stack) ? 0 : s->stack; n; n = p->nodes[n].parent) {
		const pf_loc *l = &p->locs[p->nodes[n].loc];
		int k = l->level == 'k' || l->level == 'g';
		if (r->n + 24 > sizeof(r->b) - 8)
			break;               /* 16 KB: 2,000 frames (a record is at most 64 KB) */
		if (k != ctx) {
			r_u64(r, k ? (uint64_t)PERF_CONTEXT_KERNEL : (uint64_t)PERF_CONTEXT_USER);
			ncc++;
			ctx = k;
		}
		r_u64(r, l->ip);
		ncc++;
	}
	memcpy(r->b + ncc_at, &ncc, 8);
}

/* The samples: in the order they were read when the profile kept it (a
 * record per raw sample, its own thread and period: perf's orders that
 * depend on it come out the same), else a record per aggregated sample
 * with its whole period (a count of millions would be millions of
 * records) */
static int write_samples(pd_out *o, pdw_writer *w, rec *r, const int *slot_of, uint64_t *time, const bool *cpu,
			 const bool *cc)
{
	pf_profile *p = o->p;
	size_t time_at, period_at;
	if (p->seq) {
		for (size_t i = 0; i < p->nr_seq; i++) {
			const pf_sample *s = &p->samples[p->seq[i].sample];
			if (s->evsel >= p->nr_events || slot_of[s->evsel] < 0 || !s->stack)
				continue;
			sample_rec(o, r, s, p->seq[i].thread, slot_of, cpu, cc, &time_at, &period_at);
			uint64_t period = pf_seq_period(p, i);
			*time += 1000;
			memcpy(r->b + time_at, time, 8);
			memcpy(r->b + period_at, &period, 8);
			int rc = r_emit(w, r, o->err);
			if (rc < 0)
				return rc;
		}
		return 0;
	}
	for (size_t i = 0; i < p->nr_samples; i++) {
		const pf_sample *s = &p->samples[i];
		if (s->evsel >= p->nr_events || slot_of[s->evsel] < 0 || !s->stack)
			continue;
		sample_rec(o, r, s, s->thread, slot_of, cpu, cc, &time_at, &period_at);
		*time += 1000;
		memcpy(r->b + time_at, time, 8);
		memcpy(r->b + period_at, &s->period, 8);
		int rc = r_emit(w, r, o->err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

int pf_perfdata_write(pf_profile *p, const char *path, proff_error *err)
{
	pd_out o = { .p = p, .err = err };
	int rc = 0;
	pdw_writer *w = NULL;
	rec *r = malloc(sizeof(*r));
	int *slot_of = calloc(p->nr_events + 1, sizeof(*slot_of));
	bool *cpu = calloc(p->nr_events + 1, sizeof(*cpu));
	bool *cc = calloc(p->nr_events + 1, sizeof(*cc));
	o.pid_of = malloc((p->nr_threads + 1) * sizeof(*o.pid_of));
	if (!r || !slot_of || !cpu || !cc || !o.pid_of) {
		rc = proff_err_set(err, PROFF_ENOMEM, p->path, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t t = 0; t < p->nr_threads; t++)
		o.pid_of[t] = p->threads[t].pid != PF_NONE ? p->threads[t].pid :
			      p->threads[t].tid != PF_NONE ? p->threads[t].tid : FAKE_PID0 + (uint32_t)t;
	if ((rc = collect_maps(&o)) < 0)
		goto out;
	pdw_opts wo = { 0 };
	if ((rc = pdw_create(path, &wo, &w, err)) < 0)
		goto out;
	size_t nev = 0;
	for (size_t e = 0; e < p->nr_events && rc == 0; e++) {
		slot_of[e] = -1;
		if (!p->events[e].nr_samples)
			continue;
		const pf_event *ev = &p->events[e];
		struct perf_event_attr a;
		uint8_t buf[PDW_ATTR_SIZE];
		memset(&a, 0, sizeof(a));
		a.type = ev->type == PF_EVENT_TYPE_NAMED ? PERF_TYPE_SOFTWARE : ev->type;
		a.config = ev->type == PF_EVENT_TYPE_NAMED ? PERF_COUNT_SW_CPU_CLOCK : ev->config;
		a.size = PDW_ATTR_SIZE;
		a.sample_period = 1;
		a.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				PERF_SAMPLE_PERIOD;
		cc[e] = ev->has_callchain;
		if (ev->has_callchain)
			a.sample_type |= PERF_SAMPLE_CALLCHAIN;
		cpu[e] = ev->has_cpu;
		if (ev->has_cpu)
			a.sample_type |= PERF_SAMPLE_CPU;
		a.mmap = a.comm = a.task = nev == 0;
		a.disabled = 1;
		memset(buf, 0, sizeof(buf));
		memcpy(buf, &a, sizeof(a) < sizeof(buf) ? sizeof(a) : sizeof(buf));
		uint64_t id = nev + 1;
		slot_of[e] = (int)nev++;
		rc = pdw_add_attr(w, buf, ev->name, &id, 1, err);
	}
	if (rc == 0 && !nev)
		rc = proff_err_set(err, PROFF_EUSAGE, p->path, PROFF_NO_OFFSET, "no samples to write");
	if (rc == 0)
		rc = pdw_start_data(w, err);
	if (rc == 0)
		rc = write_maps(&o, w, r, true);
	/* per process: its threads' comms, then its maps */
	for (size_t t = 0; t < p->nr_threads && rc == 0; t++) {
		r_hdr(r, PERF_RECORD_COMM, 0);
		r_u32(r, o.pid_of[t]);
		r_u32(r, p->threads[t].tid != PF_NONE ? p->threads[t].tid : o.pid_of[t]);
		char c[16];
		snprintf(c, sizeof(c), "%s", pf_str(p, p->threads[t].comm));
		r_str(r, c);
		rc = r_emit(w, r, err);
	}
	if (rc == 0)
		rc = write_maps(&o, w, r, false);
	uint64_t time = 1000000000;
	if (rc == 0)
		rc = write_samples(&o, w, r, slot_of, &time, cpu, cc);
	if (rc == 0)
		rc = pdw_finished_round(w, err);
	for (size_t d = 0; d < p->nr_dsos && rc == 0; d++) {
		const pf_dso *x = &p->dsos[d];
		if (x->build_id_size)
			rc = pdw_add_build_id(w, kernel_dso(x) ? -1 : 0, kernel_dso(x) ? 1 : 2, x->build_id,
					      x->build_id_size, pf_str(p, x->long_name), err);
	}
	if (rc == 0) {
		char *cmd[] = { (char *)"proff", (char *)"convert", p->path };
		rc = pdw_set_feature_strings(w, PD_FEAT_CMDLINE, cmd, 3, err);
	}
	if (w) {
		proff_error e2;
		int crc = pdw_close(w, NULL, rc ? &e2 : err);
		if (!rc)
			rc = crc;
	}
out:
	free(r);
	free(slot_of);
	free(cpu);
	free(cc);
	free(o.pid_of);
	free(o.maps);
	free(o.holes);
	pair_table_free(&o.map_tab);
	return rc;
}
