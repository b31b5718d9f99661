/* trace.c — reader of proff's exact traces (written by runtime/instrument.c,
 * format in include/proff/trace.h and docs/formats/trace.md).
 *
 * proff_trace_open maps the file and indexes it in one pass over the record
 * headers (sessions, threads, maps, modules); events are decoded per thread on
 * demand. Decoding resynchronises the shadow stack by frame address so that
 * exits skipped by longjmp or C++ unwinding never produce wrong or negative
 * times (see resync rules in decode_thread).
 */
#include "proff/trace.h"
#include "proff/symbol.h"
#include "proff/util.h"
#include "trace-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- limits -------------------------------------------------------------------------- */

#define MAX_SESSIONS    (1u << 20)
#define MAX_THREADS     (1u << 22)
#define MAX_MAPS        (1u << 20)
#define ALTSTACK_SLACK  (1u << 20)   /* frame this far above the stack bottom: another stack */

/* ---- varints --------------------------------------------------------------------------- */

size_t proff_trace_get_varint(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
	uint64_t r = 0;
	const uint8_t *s = p;
	for (unsigned sh = 0; p < end && sh < 64; sh += 7) {
		uint8_t c = *p++;
		if (sh == 63 && (c & 0x7e))
			return 0;          /* more than 64 bits */
		r |= (uint64_t)(c & 0x7f) << sh;
		if (!(c & 0x80)) {
			*v = r;
			return (size_t)(p - s);
		}
	}
	return 0;
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- index building -------------------------------------------------------------------------- */

static tsession *session_get(proff_trace *t, uint64_t id, uint64_t off, proff_error *err)
{
	uint64_t *slot, idx;
	bool found;
	if (pf_map64_get(&t->sess_by_id, id, &idx))
		return &t->sessions[idx];
	if (t->nsessions >= MAX_SESSIONS) {
		proff_err_set(err, PROFF_ENOMEM, t->path, off, "more than %u sessions", MAX_SESSIONS);
		return NULL;
	}
	if (PF_GROW(t->sessions, t->sess_cap, t->nsessions + 1) < 0 ||
	    !(slot = pf_map64_upsert(&t->sess_by_id, id, &found))) {
		proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		return NULL;
	}
	*slot = t->nsessions;
	tsession *s = &t->sessions[t->nsessions++];
	memset(s, 0, sizeof(*s));
	s->id = id;
	s->first_off = off;
	pf_map64_init(&s->func_by_addr);
	pf_map64_init(&s->map_seen);
	return s;
}

static tthread *thread_get(proff_trace *t, tsession *s, uint32_t tid, uint64_t off, proff_error *err)
{
	/* exact key: session index (< MAX_SESSIONS) and tid, so no two threads
	 * share one (a hash of the session id could be made to collide) */
	uint64_t key = (uint64_t)(s - t->sessions) << 32 | tid, idx;
	if (pf_map64_get(&t->thr_by_key, key, &idx))
		return &t->threads[idx];
	if (t->nthreads >= MAX_THREADS) {
		proff_err_set(err, PROFF_ENOMEM, t->path, off, "more than %u threads", MAX_THREADS);
		return NULL;
	}
	bool found;
	uint64_t *slot;
	if (PF_GROW(t->threads, t->thr_cap, t->nthreads + 1) < 0 ||
	    !(slot = pf_map64_upsert(&t->thr_by_key, key, &found))) {
		proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		return NULL;
	}
	*slot = t->nthreads;
	tthread *th = &t->threads[t->nthreads++];
	memset(th, 0, sizeof(*th));
	th->session = s->id;
	th->tid = tid;
	return th;
}

static int parse_maps(proff_trace *t, tsession *s, const char *p, size_t n, uint64_t off,
		      proff_error *err)
{
	const char *end = p + n;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end;
		char line[4352];
		size_t ll = (size_t)(le - p);
		if (ll >= sizeof(line))
			ll = sizeof(line) - 1;
		memcpy(line, p, ll);
		line[ll] = 0;
		p = nl ? nl + 1 : end;
		unsigned long long start, stop, pgoff, inode;
		char perms[8];
		int pathpos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*x:%*x %llu %n", &start, &stop, perms, &pgoff,
			   &inode, &pathpos) < 5)
			continue;              /* not a maps line: ignore (forward compatible) */
		if (strlen(perms) < 3 || perms[2] != 'x' || stop <= start)
			continue;
		const char *path = pathpos > 0 ? line + pathpos : "";
		while (*path == ' ')
			path++;
		if (!*path)
			continue;
		/* same mapping already known (maps are re-recorded at dlopen and exit):
		 * found through a hash of the mapping; a hash shared with another
		 * mapping falls back to looking at all of them */
		uint64_t h = pf_hash64(start ^ pf_hash64(stop ^ pf_hash64(pgoff))) ^ pf_hash_bytes(path, strlen(path), 0);
		uint64_t seen;
		bool dup = false;
		if (pf_map64_get(&s->map_seen, h, &seen)) {
			const tmap *m = &s->maps[seen - 1];
			if (m->start == start && m->end == stop && m->pgoff == pgoff && !strcmp(m->path, path)) {
				dup = true;
			} else {
				for (size_t i = s->nmaps; i-- > 0 && !dup;) {
					m = &s->maps[i];
					dup = m->start == start && m->end == stop && m->pgoff == pgoff && !strcmp(m->path, path);
				}
			}
		}
		if (dup)
			continue;
		if (s->nmaps >= MAX_MAPS)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "too many mappings");
		if (PF_GROW(s->maps, s->maps_cap, s->nmaps + 1) < 0)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		tmap *m = &s->maps[s->nmaps++];
		memset(m, 0, sizeof(*m));
		m->start = start;
		m->end = stop;
		m->pgoff = pgoff;
		m->path = pf_arena_strndup(&t->arena, path, strlen(path));
		uint64_t *slot = pf_map64_upsert(&s->map_seen, h, NULL);
		if (!m->path || !slot || pf_ranges_insert(&s->map_index, start, stop, pgoff, (uint32_t)(s->nmaps - 1)) < 0)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		*slot = s->nmaps;
	}
	return 0;
}

static int parse_modules(proff_trace *t, tsession *s, const uint8_t *p, size_t n, uint64_t off,
			 proff_error *err)
{
	size_t pos = 8;   /* after ts */
	while (pos < n) {
		if (n - pos < sizeof(proff_trace_module))
			return proff_err_set(err, PROFF_EFORMAT, t->path, off + pos,
					     "truncated module entry");
		proff_trace_module m;
		memcpy(&m, p + pos, sizeof(m));
		size_t need = (sizeof(m) + m.build_id_len + m.name_len + 7) & ~(size_t)7;
		if (m.build_id_len > 64 || need > n - pos)
			return proff_err_set(err, PROFF_EFORMAT, t->path, off + pos,
					     "module entry of %zu bytes overruns its record", need);
		if (PF_GROW(s->mods, s->mods_cap, s->nmods + 1) < 0)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		tmodule *md = &s->mods[s->nmods++];
		md->base = m.base;
		md->bid_len = m.build_id_len;
		memcpy(md->bid, p + pos + sizeof(m), m.build_id_len);
		md->name = pf_arena_strndup(&t->arena, (const char *)p + pos + sizeof(m) + m.build_id_len,
					    m.name_len);
		if (!md->name)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		pos += need;
	}
	return 0;
}

static const char *rec_names[PTR_TYPE_MAX] = {
	[PTR_SESSION] = "session", [PTR_MAPS] = "maps", [PTR_MODULES] = "modules",
	[PTR_EVENTS] = "events", [PTR_THREAD] = "thread", [PTR_END] = "end",
};

static const size_t rec_min_payload[PTR_TYPE_MAX] = {
	[PTR_SESSION] = sizeof(proff_trace_session), [PTR_MAPS] = 8, [PTR_MODULES] = 8,
	[PTR_EVENTS] = sizeof(proff_trace_events_hdr), [PTR_THREAD] = sizeof(proff_trace_thread_rec),
	[PTR_END] = sizeof(proff_trace_end_rec),
};

static int index_record(proff_trace *t, const proff_trace_rec *r, uint64_t off, proff_error *err)
{
	const uint8_t *pl = t->data + off + sizeof(*r);
	size_t n = r->size - sizeof(*r);
	if (r->type == 0 || r->type >= PTR_TYPE_MAX)
		return 0;                          /* unknown type: skipped */
	if (n < rec_min_payload[r->type])
		return proff_err_set(err, PROFF_EFORMAT, t->path, off,
				     "%s record of %u bytes is too short", rec_names[r->type], r->size);
	tsession *s = session_get(t, r->session, off, err);
	if (!s)
		return err ? err->code : PROFF_ENOMEM;
	switch (r->type) {
	case PTR_SESSION: {
		proff_trace_session h;
		memcpy(&h, pl, sizeof(h));
		if (s->have_hdr)
			return proff_err_set(err, PROFF_EFORMAT, t->path, off,
					     "second session record for session %016llx",
					     (unsigned long long)r->session);
		if ((uint64_t)h.exe_len + h.cmd_len > n - sizeof(h))
			return proff_err_set(err, PROFF_EFORMAT, t->path, off,
					     "session record: path and command line overrun the record");
		if (h.clock != PROFF_CLOCK_TSC && h.clock != PROFF_CLOCK_MONOTONIC && h.clock != PROFF_CLOCK_NONE)
			return proff_err_set(err, PROFF_ENOTSUP, t->path, off,
					     "session record: unknown clock %u", h.clock);
		if (h.ticks_per_sec < 1000 || h.ticks_per_sec > 1000000000000ull)
			return proff_err_set(err, PROFF_EFORMAT, t->path, off,
					     "session record: implausible clock rate %llu Hz",
					     (unsigned long long)h.ticks_per_sec);
		s->have_hdr = true;
		s->hdr = h;
		s->exe = pf_arena_strndup(&t->arena, (const char *)pl + sizeof(h), h.exe_len);
		size_t cl = h.cmd_len;
		char *cmd = pf_arena_strndup(&t->arena, (const char *)pl + sizeof(h) + h.exe_len, cl);
		if (!s->exe || !cmd)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		for (size_t i = 0; i + 1 < cl; i++)
			if (!cmd[i])
				cmd[i] = ' ';
		s->cmdline = cmd;
		s->tps = (double)h.ticks_per_sec;
		s->o_in = (double)h.o_in_x1024 / 1024.0;
		s->o_full = (double)h.o_full_x1024 / 1024.0;
		break;
	}
	case PTR_MAPS:
		return parse_maps(t, s, (const char *)pl + 8, n - 8, off, err);
	case PTR_MODULES:
		return parse_modules(t, s, pl, n, off, err);
	case PTR_EVENTS: {
		tthread *th = thread_get(t, s, r->tid, off, err);
		if (!th)
			return err ? err->code : PROFF_ENOMEM;
		if (PF_GROW(th->recs, th->recs_cap, th->nrecs + 1) < 0)
			return proff_err_set(err, PROFF_ENOMEM, t->path, off, "out of memory");
		th->recs[th->nrecs++] = off;
		/* events = number of varint terminators / 3 */
		const uint8_t *e = pl + sizeof(proff_trace_events_hdr), *end = pl + n;
		uint64_t terms = 0;
		for (; e < end; e++)
			terms += !(*e & 0x80);
		th->nevents += terms / 3;
		t->nevents += terms / 3;
		break;
	}
	case PTR_THREAD: {
		proff_trace_thread_rec tr;
		memcpy(&tr, pl, sizeof(tr));
		tthread *th = thread_get(t, s, r->tid, off, err);
		if (!th)
			return err ? err->code : PROFF_ENOMEM;
		if (tr.kind == PROFF_THREAD_START)
			memcpy(th->name, tr.name, sizeof(tr.name)), th->name[15] = 0;
		break;
	}
	case PTR_END: {
		proff_trace_end_rec er;
		memcpy(&er, pl, sizeof(er));
		s->end = er;
		s->have_end = true;
		break;
	}
	}
	return 0;
}

int proff_trace_open(const char *path, proff_trace **out, proff_error *err)
{
	*out = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proff_err_sys(err, errno == ENOENT ? PROFF_ENOENT : PROFF_EIO, path, "cannot open");
	struct stat st;
	if (fstat(fd, &st) < 0) {
		close(fd);
		return proff_err_sys(err, PROFF_EIO, path, "cannot stat");
	}
	proff_trace *t = pf_calloc(1, sizeof(*t));
	if (!t) {
		close(fd);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	t->path = pf_strdup(path);
	t->size = (size_t)st.st_size;
	pf_arena_init(&t->arena);
	pf_map64_init(&t->sess_by_id);
	pf_map64_init(&t->thr_by_key);
	pf_map64_init(&t->func_by_key);
	pf_strtab_init(&t->names);
	if (t->size) {
		t->data = mmap(NULL, t->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (t->data == MAP_FAILED) {
			t->data = NULL;
			close(fd);
			int rc = proff_err_sys(err, PROFF_EIO, path, "cannot mmap");
			proff_trace_close(t);
			return rc;
		}
	}
	close(fd);
	int rc = 0;
	if (t->size < sizeof(proff_trace_rec)) {
		rc = proff_err_set(err, PROFF_EFORMAT, path, 0, "empty or truncated trace (%zu bytes)", t->size);
		goto fail;
	}
	uint64_t off = 0;
	while (off < t->size) {
		proff_trace_rec r;
		if (t->size - off < sizeof(r)) {
			t->truncated = t->size - off;
			break;
		}
		memcpy(&r, t->data + off, sizeof(r));
		if (r.magic != PROFF_TRACE_MAGIC) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, off,
					   off ? "bad record magic 0x%08x" : "not a proff trace (magic 0x%08x)",
					   r.magic);
			goto fail;
		}
		if (r.version != PROFF_TRACE_VERSION) {
			rc = proff_err_set(err, PROFF_ENOTSUP, path, off, "trace version %u not supported (this proff reads %u)",
					   r.version, PROFF_TRACE_VERSION);
			goto fail;
		}
		if (r.size < sizeof(r)) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, off, "record size %u is smaller than its header", r.size);
			goto fail;
		}
		if (r.size > t->size - off) {
			t->truncated = t->size - off;   /* a run killed while writing */
			break;
		}
		if ((rc = index_record(t, &r, off, err)) < 0)
			goto fail;
		t->nrecords++;
		off += r.size;
	}
	for (size_t i = 0; i < t->nsessions; i++) {
		tsession *s = &t->sessions[i];
		if (!s->have_hdr) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, s->first_off,
					   "records of session %016llx but no session record",
					   (unsigned long long)s->id);
			goto fail;
		}
		/* refine the TSC rate over the whole run when the end is known */
		if (s->have_end && s->hdr.clock == PROFF_CLOCK_TSC && s->end.mono_ns > s->hdr.start_mono_ns + 100000000ull &&
		    s->end.ts > s->hdr.start_ts) {
			double r2 = (double)(s->end.ts - s->hdr.start_ts) * 1e9 / (double)(s->end.mono_ns - s->hdr.start_mono_ns);
			if (r2 > s->tps * 0.9 && r2 < s->tps * 1.1)
				s->tps = r2;
		}
	}
	for (size_t i = 0; i < t->nthreads; i++) {
		uint64_t idx = 0;
		pf_map64_get(&t->sess_by_id, t->threads[i].session, &idx);
		t->threads[i].sess = idx;
	}
	*out = t;
	return 0;
fail:
	proff_trace_close(t);
	return rc;
}

void proff_trace_close(proff_trace *t)
{
	if (!t)
		return;
	if (t->data)
		munmap((void *)t->data, t->size);
	for (size_t i = 0; i < t->nsessions; i++) {
		free(t->sessions[i].maps);
		pf_ranges_free(&t->sessions[i].map_index);
		pf_map64_free(&t->sessions[i].map_seen);
		free(t->sessions[i].mods);
		pf_map64_free(&t->sessions[i].func_by_addr);
	}
	for (size_t i = 0; i < t->nthreads; i++)
		free(t->threads[i].recs);
	free(t->sessions);
	free(t->threads);
	free(t->funcs);
	pf_map64_free(&t->sess_by_id);
	pf_map64_free(&t->thr_by_key);
	pf_map64_free(&t->func_by_key);
	pf_strtab_free(&t->names);
	pf_arena_free(&t->arena);
	if (t->sym)
		trace_sym_free(t);
	free(t->path);
	free(t);
}

void proff_trace_get_info(const proff_trace *t, proff_trace_info *info)
{
	memset(info, 0, sizeof(*info));
	info->nsessions = t->nsessions;
	info->nthreads = t->nthreads;
	info->nrecords = t->nrecords;
	info->nevents = t->nevents;
	info->truncated_bytes = t->truncated;
	if (t->nsessions) {
		const tsession *s = &t->sessions[0];
		info->clock = s->hdr.clock;
		info->ticks_per_sec = s->tps;
		info->o_in_ns = s->o_in * 1e9 / s->tps;
		info->o_full_ns = s->o_full * 1e9 / s->tps;
	}
}

void proff_trace_set_overheads(proff_trace *t, double o_in_ns, double o_full_ns)
{
	for (size_t i = 0; i < t->nsessions; i++) {
		tsession *s = &t->sessions[i];
		s->o_in = o_in_ns * s->tps / 1e9;
		s->o_full = o_full_ns * s->tps / 1e9;
	}
}

size_t proff_trace_nsessions(const proff_trace *t)
{
	return t->nsessions;
}

void proff_trace_session_get(const proff_trace *t, size_t i, proff_trace_session_info *o)
{
	memset(o, 0, sizeof(*o));
	if (i >= t->nsessions)
		return;
	const tsession *s = &t->sessions[i];
	o->id = s->id;
	o->parent = s->hdr.parent_session;
	o->pid = s->hdr.pid;
	o->ppid = s->hdr.ppid;
	o->flags = s->hdr.flags;
	o->exe = s->exe ? s->exe : "";
	o->ticks_per_sec = s->tps;
	o->o_in_ticks = s->o_in;
	o->o_full_ticks = s->o_full;
	if (s->have_end) {
		o->end_reason = (int)s->end.reason;
		o->end_code = s->end.code;
	}
}

/* ---- functions ---------------------------------------------------------------------------- */

/* The latest recorded map holding addr (map_index keeps, for every address,
 * the last map inserted over it). */
static tmap *find_map(tsession *s, uint64_t addr)
{
	const pf_range *r = pf_ranges_find(&s->map_index, addr);
	return r ? &s->maps[r->dso] : NULL;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Function id for an address of session s (names resolved once per address). */
static int64_t func_of(proff_trace *t, tsession *s, uint64_t addr)
{
	uint64_t v;
	if (pf_map64_get(&s->func_by_addr, addr, &v))
		return (int64_t)v;
	char buf[512];
	const char *name = NULL, *dso = "";
	tmap *m = find_map(s, addr);
	if (m) {
		dso = m->path;
		name = trace_sym_name(t, s, m, addr - m->start + m->pgoff);
		if (!name) {
			snprintf(buf, sizeof(buf), "%s+0x%llx", base_name(m->path),
				 (unsigned long long)(addr - m->start + m->pgoff));
			name = buf;
		}
	} else {
		snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
		name = buf;
	}
	int64_t nid = pf_strtab_intern(&t->names, name, strlen(name));
	int64_t did = pf_strtab_intern(&t->names, dso, strlen(dso));
	if (nid < 0 || did < 0)
		return -1;
	bool found;
	uint64_t *slot = pf_map64_upsert(&t->func_by_key, (uint64_t)nid << 32 | (uint64_t)did, &found);
	if (!slot)
		return -1;
	if (!found) {
		if (PF_GROW(t->funcs, t->funcs_cap, t->nfuncs + 1) < 0)
			return -1;
		t->funcs[t->nfuncs].name = (uint32_t)nid;
		t->funcs[t->nfuncs].dso = (uint32_t)did;
		t->funcs[t->nfuncs].addr = addr;
		t->funcs[t->nfuncs].off = m ? addr - m->start + m->pgoff : 0;
		t->funcs[t->nfuncs].mapped = m != NULL;
		*slot = t->nfuncs++;
	}
	uint64_t fid = *slot;
	uint64_t *as = pf_map64_upsert(&s->func_by_addr, addr, &found);
	if (!as)
		return -1;
	*as = fid;
	return (int64_t)fid;
}

size_t proff_trace_nfuncs(const proff_trace *t)
{
	return t->nfuncs;
}

const char *proff_trace_func_name(const proff_trace *t, uint32_t f)
{
	return f < t->nfuncs ? pf_strtab_get(&t->names, t->funcs[f].name) : "?";
}

const char *proff_trace_func_dso(const proff_trace *t, uint32_t f)
{
	return f < t->nfuncs ? pf_strtab_get(&t->names, t->funcs[f].dso) : "?";
}

bool proff_trace_func_where(const proff_trace *t, uint32_t f, uint64_t *addr, uint64_t *file_off)
{
	if (f >= t->nfuncs)
		return false;
	*addr = t->funcs[f].addr;
	*file_off = t->funcs[f].off;
	return t->funcs[f].mapped;
}

/* ---- decoding with shadow-stack resynchronisation ---------------------------------------- */

typedef struct sframe {
	uint32_t func;
	uint64_t fn, cfa;
} sframe;

typedef struct decoder {
	proff_trace *t;
	sframe *stk;
	size_t n, cap;
	proff_trace_event_cb cb;
	void *arg;
	proff_trace_thread_info ti;
	uint64_t synth_exits, synth_entries, dropped;
} decoder;

static int emit(decoder *d, int kind, uint32_t func, uint64_t ticks, uint32_t depth, bool synth)
{
	proff_trace_event ev = { .kind = kind, .func = func, .ticks = ticks, .depth = depth, .synthetic = synth };
	if (synth) {
		if (kind == PROFF_TEV_EXIT)
			d->synth_exits++;
		else
			d->synth_entries++;
	}
	return d->cb(d->arg, &d->ti, &ev);
}

static int pop_synth(decoder *d, uint64_t ticks)
{
	d->n--;
	return emit(d, PROFF_TEV_EXIT, d->stk[d->n].func, ticks, (uint32_t)d->n, true);
}

/* Resync rules. cfa = frame address of the hook; deeper frames are lower.
 * The entry hook is called inside the instrumented function's frame; the
 * exit hook is called either there too or, as a tail call, after the frame
 * is torn down. So an activation with entry cfa e, whose parent has entry cfa
 * p, exits with e <= c <= p.
 *  enter(fn, c): every frame at the top with cfa <= c is dead (a longjmp or an
 *     exception left it): it gets a synthetic exit now. Not applied when c is
 *     far above the stack bottom (a signal handler on an alternate stack).
 *  exit(fn, c): the frame exited is the topmost one with the same function
 *     and e <= c <= p (the top frame also matches when c < e: alloca);
 *     frames above it get synthetic exits first. If there is none, frames
 *     below c are dead; if the stack is then empty the call began before this
 *     thread's trace did (the child side of fork): a synthetic entry at the
 *     thread's first timestamp is emitted. Otherwise the exit is dropped (its
 *     entry was lost). */
static int on_event(decoder *d, tsession *s, bool is_exit, uint64_t fn, uint64_t cfa, uint64_t ticks)
{
	int rc;
	if (!is_exit) {
		if (d->n && cfa <= d->stk[0].cfa + ALTSTACK_SLACK)
			while (d->n && d->stk[d->n - 1].cfa <= cfa)
				if ((rc = pop_synth(d, ticks)))
					return rc;
		int64_t f = func_of(d->t, s, fn);
		if (f < 0)
			return PROFF_ENOMEM;
		if (PF_GROW(d->stk, d->cap, d->n + 1) < 0)
			return PROFF_ENOMEM;
		d->stk[d->n] = (sframe){ .func = (uint32_t)f, .fn = fn, .cfa = cfa };
		d->n++;
		return emit(d, PROFF_TEV_ENTER, (uint32_t)f, ticks, (uint32_t)(d->n - 1), false);
	}
	size_t i = (size_t)-1;
	if (d->n) {
		const sframe *top = &d->stk[d->n - 1];
		if (top->fn == fn && (cfa <= top->cfa || d->n == 1 || cfa <= d->stk[d->n - 2].cfa))
			i = d->n - 1;
		for (size_t k = d->n - 1; i == (size_t)-1 && k-- > 0;) {
			if (d->stk[k].cfa > cfa)
				break;             /* this and all lower frames are above c */
			if (d->stk[k].fn == fn && (k == 0 || cfa <= d->stk[k - 1].cfa))
				i = k;
		}
	}
	if (i != (size_t)-1) {
		while (d->n > i + 1)
			if ((rc = pop_synth(d, ticks)))
				return rc;
		d->n--;
		return emit(d, PROFF_TEV_EXIT, d->stk[i].func, ticks, (uint32_t)i, false);
	}
	while (d->n && d->stk[d->n - 1].cfa < cfa)
		if ((rc = pop_synth(d, ticks)))
			return rc;
	if (d->n) {
		d->dropped++;
		return 0;
	}
	int64_t f = func_of(d->t, s, fn);
	if (f < 0)
		return PROFF_ENOMEM;
	if ((rc = emit(d, PROFF_TEV_ENTER, (uint32_t)f, d->ti.first_ticks, 0, true)))
		return rc;
	return emit(d, PROFF_TEV_EXIT, (uint32_t)f, ticks, 0, false);
}

/* Decode the events of one record (offset off) with the pause total that
 * applies to it; calls back with adjusted timestamps. Returns 0 or an error. */
static int scan_record(proff_trace *t, const tsession *s, uint64_t off, uint64_t pause, bool only_first,
		       uint64_t *first, uint64_t *last, bool *any, proff_error *err)
{
	proff_trace_rec rh;
	proff_trace_events_hdr eh;
	memcpy(&rh, t->data + off, sizeof(rh));
	memcpy(&eh, t->data + off + sizeof(rh), sizeof(eh));
	const uint8_t *p = t->data + off + sizeof(rh) + sizeof(eh), *end = t->data + off + rh.size;
	uint64_t ts = eh.base_ts, v, f, c;
	while (p < end) {
		size_t k1 = proff_trace_get_varint(p, end, &v), k2 = 0, k3 = 0;
		if (k1)
			k2 = proff_trace_get_varint(p + k1, end, &f);
		if (k2)
			k3 = proff_trace_get_varint(p + k1 + k2, end, &c);
		if (!k3)
			return proff_err_set(err, PROFF_EFORMAT, t->path, (uint64_t)(p - t->data),
					     "malformed event in events record at %llu", (unsigned long long)off);
		p += k1 + k2 + k3;
		ts += v >> 1;
		uint64_t adj = ts - s->hdr.start_ts - pause;
		if (!*any) {
			*first = *last = adj;
			*any = true;
		}
		if (adj > *last)
			*last = adj;
		if (only_first)
			break;
	}
	return 0;
}

/* A thread's first and last timestamps: from its first event and its last
 * record (every record carries absolute base values), not a whole pass. */
static int thread_span(proff_trace *t, tthread *th, uint64_t *first, uint64_t *last, proff_error *err)
{
	tsession *s = &t->sessions[th->sess];
	*first = *last = 0;
	uint64_t pause = 0, pause_first = 0;
	bool any = false;
	size_t r0 = th->nrecs;
	for (size_t r = 0; r < th->nrecs; r++) {
		proff_trace_events_hdr eh;
		proff_trace_rec rh;
		memcpy(&rh, t->data + th->recs[r], sizeof(rh));
		memcpy(&eh, t->data + th->recs[r] + sizeof(rh), sizeof(eh));
		pause += eh.pause_ticks;
		if (r0 == th->nrecs && rh.size > sizeof(rh) + sizeof(eh)) {
			r0 = r;
			pause_first = pause;
		}
	}
	if (r0 == th->nrecs)
		return 0;
	int rc = scan_record(t, s, th->recs[r0], pause_first, true, first, last, &any, err);
	if (rc < 0)
		return rc;
	uint64_t f2 = 0, l2 = 0;
	bool any2 = false;
	for (size_t r = th->nrecs; r-- > r0;) {
		proff_trace_events_hdr eh;
		memcpy(&eh, t->data + th->recs[r] + sizeof(proff_trace_rec), sizeof(eh));
		if ((rc = scan_record(t, s, th->recs[r], pause, false, &f2, &l2, &any2, err)) < 0)
			return rc;
		if (any2)
			break;
		pause -= eh.pause_ticks;
	}
	if (any2 && l2 > *last)
		*last = l2;
	return 0;
}

static int decode_thread(proff_trace *t, tthread *th, decoder *d, proff_error *err)
{
	tsession *s = &t->sessions[th->sess];
	int rc;
	uint64_t first, last;
	if ((rc = thread_span(t, th, &first, &last, err)) < 0)
		return rc;
	d->n = 0;
	d->ti = (proff_trace_thread_info){
		.index = (size_t)(th - t->threads), .session = s->id, .pid = s->hdr.pid, .tid = th->tid,
		.ticks_per_sec = s->tps, .first_ticks = first, .last_ticks = last,
	};
	if ((rc = d->cb(d->arg, &d->ti, NULL)))
		return rc;
	uint64_t pause = 0, prev = first;
	for (size_t r = 0; r < th->nrecs; r++) {
		uint64_t off = th->recs[r];
		proff_trace_rec rh;
		proff_trace_events_hdr eh;
		memcpy(&rh, t->data + off, sizeof(rh));
		memcpy(&eh, t->data + off + sizeof(rh), sizeof(eh));
		const uint8_t *p = t->data + off + sizeof(rh) + sizeof(eh), *end = t->data + off + rh.size;
		uint64_t ts = eh.base_ts, fn = eh.base_fn, cfa = eh.base_cfa, v, fz, cz;
		pause += eh.pause_ticks;
		while (p < end) {
			size_t k1 = proff_trace_get_varint(p, end, &v);
			size_t k2 = k1 ? proff_trace_get_varint(p + k1, end, &fz) : 0;
			size_t k3 = k2 ? proff_trace_get_varint(p + k1 + k2, end, &cz) : 0;
			if (!k3)
				return proff_err_set(err, PROFF_EFORMAT, t->path, (uint64_t)(p - t->data), "malformed event");
			p += k1 + k2 + k3;
			ts += v >> 1;
			fn += (uint64_t)unzigzag(fz);
			cfa += (uint64_t)unzigzag(cz);
			uint64_t adj = ts - s->hdr.start_ts - pause;
			if (adj < prev)
				adj = prev;        /* never backwards */
			prev = adj;
			rc = on_event(d, s, v & 1, fn, cfa, adj);
			if (rc > 0)
				return rc;
			if (rc < 0)
				return proff_err_set(err, rc, t->path, (uint64_t)(p - t->data), "out of memory");
		}
	}
	/* frames still open at the end (exit() from inside, a kill): closed at the last time */
	while (d->n)
		if ((rc = pop_synth(d, prev)))
			return rc > 0 ? rc : proff_err_set(err, rc, t->path, PROFF_NO_OFFSET, "out of memory");
	return 0;
}

int trace_decode_all(proff_trace *t, proff_trace_event_cb cb, void *arg, trace_decode_stats *st,
		     proff_error *err)
{
	decoder d = { .t = t, .cb = cb, .arg = arg };
	int rc = 0;
	for (size_t i = 0; i < t->nthreads && !rc; i++) {
		rc = decode_thread(t, &t->threads[i], &d, err);
		if (rc < 0 && err && !err->code)
			proff_err_set(err, rc, t->path, PROFF_NO_OFFSET, "out of memory");
	}
	free(d.stk);
	if (st) {
		st->synth_exits = d.synth_exits;
		st->synth_entries = d.synth_entries;
		st->dropped = d.dropped;
	}
	return rc < 0 ? rc : 0;
}

int proff_trace_foreach(proff_trace *t, proff_trace_event_cb cb, void *arg, proff_error *err)
{
	return trace_decode_all(t, cb, arg, NULL, err);
}

/* ---- statistics ----------------------------------------------------------------------------- */

typedef struct aframe {
	uint32_t func;
	uint64_t t0, g0;
	double child_raw, child_comp;
} aframe;

typedef struct faccum {
	uint64_t calls, active, D, K;
	double incl, excl, incl_raw, excl_raw, min, max;
} faccum;

typedef struct stats_ctx {
	proff_trace *t;
	const proff_trace_stats_opts *o;
	faccum *f;
	size_t nf;
	aframe *stk;
	size_t n, cap;
	double o_in, o_full, scale;   /* ticks, ticks, seconds per tick */
	uint64_t g;                   /* calls so far in this thread */
	double root_raw, root_comp;   /* completed outermost frames of this thread */
	uint64_t clamped;
	double total;
	uint64_t calls;
	bool skip;
} stats_ctx;

static int stats_cb(void *arg, const proff_trace_thread_info *th, const proff_trace_event *ev)
{
	stats_ctx *c = arg;
	if (!ev) {
		c->skip = c->o->pid && (int)th->pid != c->o->pid;
		c->n = 0;
		c->g = 0;
		c->root_raw = c->root_comp = 0;
		const tsession *s = &c->t->sessions[c->t->threads[th->index].sess];
		c->o_in = c->o->compensate ? s->o_in : 0;
		c->o_full = c->o->compensate ? s->o_full : 0;
		c->scale = 1.0 / s->tps;
		if (!c->skip) {
			/* total: the thread's span, less the overhead of all its calls */
			double span = (double)(th->last_ticks - th->first_ticks);
			double calls = (double)c->t->threads[th->index].nevents / 2;
			double comp = span - calls * c->o_full;
			c->total += (comp > 0 ? comp : 0) * c->scale;
		}
		return 0;
	}
	if (c->skip)
		return 0;
	if (ev->func >= c->nf) {
		size_t nn = c->t->nfuncs;
		faccum *nf = pf_realloc_array(c->f, nn, sizeof(*nf));
		if (!nf)
			return PROFF_ENOMEM;
		memset(nf + c->nf, 0, (nn - c->nf) * sizeof(*nf));
		c->f = nf;
		c->nf = nn;
	}
	faccum *fa = &c->f[ev->func];
	if (ev->kind == PROFF_TEV_ENTER) {
		if (PF_GROW(c->stk, c->cap, c->n + 1) < 0)
			return PROFF_ENOMEM;
		c->g++;
		aframe *a = &c->stk[c->n++];
		*a = (aframe){ .func = ev->func, .t0 = ev->ticks, .g0 = c->g };
		if (ev->synthetic && c->n == 1) {
			/* entry invented at the thread start: the outermost frames
			 * completed so far ran inside it */
			a->child_raw = c->root_raw;
			a->child_comp = c->root_comp;
			c->root_raw = c->root_comp = 0;
		}
		fa->active++;
		return 0;
	}
	if (!c->n)
		return 0;
	aframe *a = &c->stk[--c->n];
	double raw = (double)(ev->ticks - a->t0);
	uint64_t D = c->g - a->g0;
	double comp = raw - c->o_in - (double)D * c->o_full;
	if (comp < 0) {
		if (c->o->compensate)
			c->clamped++;
		comp = 0;
	}
	double ex_raw = raw - a->child_raw, ex = comp - a->child_comp;
	if (ex_raw < 0)
		ex_raw = 0;
	if (ex < 0) {
		if (c->o->compensate)
			c->clamped++;
		ex = 0;
	}
	if (fa->active)
		fa->active--;
	double per = (c->o->compensate ? comp : raw) * c->scale;
	if (!fa->calls || per < fa->min)
		fa->min = per;
	if (per > fa->max)
		fa->max = per;
	fa->calls++;
	c->calls++;
	fa->excl += ex * c->scale;
	fa->excl_raw += ex_raw * c->scale;
	fa->K += 0;
	if (!fa->active) {          /* outermost activation of a recursion */
		fa->incl += comp * c->scale;
		fa->incl_raw += raw * c->scale;
		fa->D += D;
	}
	if (c->n) {
		aframe *p = &c->stk[c->n - 1];
		p->child_raw += raw;
		p->child_comp += comp;
		c->f[p->func].K++;
	} else {
		c->root_raw += raw;
		c->root_comp += comp;
	}
	return 0;
}

static int cmp_excl(const void *a, const void *b)
{
	const proff_trace_func_stats *x = a, *y = b;
	if (x->excl != y->excl)
		return x->excl < y->excl ? 1 : -1;
	if (x->calls != y->calls)
		return x->calls < y->calls ? 1 : -1;
	return strcmp(x->name, y->name);
}

int proff_trace_stats_compute(proff_trace *t, const proff_trace_stats_opts *opts,
			      proff_trace_stats *out, proff_error *err)
{
	proff_trace_stats_opts dflt = { .compensate = true };
	stats_ctx c = { .t = t, .o = opts ? opts : &dflt };
	memset(out, 0, sizeof(*out));
	trace_decode_stats ds = { 0 };
	int rc = trace_decode_all(t, stats_cb, &c, &ds, err);
	if (rc < 0) {
		if (err && !err->code)
			proff_err_set(err, rc, t->path, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	size_t n = 0;
	for (size_t i = 0; i < c.nf; i++)
		n += c.f[i].calls > 0;
	out->funcs = pf_calloc(n ? n : 1, sizeof(*out->funcs));
	if (!out->funcs) {
		rc = proff_err_set(err, PROFF_ENOMEM, t->path, PROFF_NO_OFFSET, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < c.nf; i++) {
		faccum *fa = &c.f[i];
		if (!fa->calls)
			continue;
		proff_trace_func_stats *fs = &out->funcs[out->nfuncs++];
		fs->func = (uint32_t)i;
		fs->name = proff_trace_func_name(t, (uint32_t)i);
		fs->calls = fa->calls;
		fs->incl = fa->incl;
		fs->excl = fa->excl;
		fs->min = fa->min;
		fs->max = fa->max;
		fs->descendants = fa->D;
		fs->children = fa->K;
		fs->overcorrected = c.o->compensate && fa->excl < 0.5 * fa->excl_raw;
	}
	qsort(out->funcs, out->nfuncs, sizeof(*out->funcs), cmp_excl);
	out->total = c.total;
	out->calls = c.calls;
	out->synthetic_exits = ds.synth_exits;
	out->synthetic_entries = ds.synth_entries;
	out->negative_clamped = c.clamped;
out:
	free(c.f);
	free(c.stk);
	return rc;
}

void proff_trace_stats_free(proff_trace_stats *s)
{
	free(s->funcs);
	memset(s, 0, sizeof(*s));
}
