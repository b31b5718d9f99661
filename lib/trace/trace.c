/* trace.c — reader of proff's exact traces (written by runtime/instrument.c,
 * format in include/proff/trace.h and docs/formats/trace.md).
 *
 * proff_trace_open maps the file and indexes it in one pass over the record
 * headers (sessions, threads, maps, modules); events are decoded per thread on
 * demand. Decoding pairs every exit with its own entry by function address
 * and uses the frames' addresses only to resynchronise where exits never came
 * (longjmp, exceptions through code without exit hooks, the end of a thread):
 * the rules are at on_event. What could not be decoded exactly is counted
 * (trace-quality.c).
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

/* An address delta: version 2's avarint (multiples of 16 divided by 16, low
 * bit 0; others whole, low bit 1), version 1's plain zigzag. */
static inline uint64_t address_delta(uint64_t v, uint16_t version)
{
	if (version < 2)
		return (uint64_t)unzigzag(v);
	uint64_t d = (uint64_t)unzigzag(v >> 1);
	return v & 1 ? d : d << 4;
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
		proff_trace_events_hdr eh;
		memcpy(&eh, pl, sizeof(eh));
		th->dropped += eh.dropped;
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
		if (r.version < PROFF_TRACE_VERSION_MIN || r.version > PROFF_TRACE_VERSION) {
			rc = proff_err_set(err, PROFF_ENOTSUP, path, off,
					   "trace version %u not supported (this proff reads versions %u to %u)",
					   r.version, PROFF_TRACE_VERSION_MIN, PROFF_TRACE_VERSION);
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

int proff_trace_has_events(const char *path, proff_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proff_err_sys(err, errno == ENOENT ? PROFF_ENOENT : PROFF_EIO, path, "cannot open");
	uint64_t off = 0;
	int rc = 0;
	for (;;) {
		proff_trace_rec r;
		ssize_t n = pread(fd, &r, sizeof(r), (off_t)off);
		if (n < (ssize_t)sizeof(r))
			break;             /* end (or a torn last record): no event found */
		if (r.magic != PROFF_TRACE_MAGIC || r.size < sizeof(r)) {
			rc = proff_err_set(err, PROFF_EFORMAT, path, off, off ? "bad record at this offset"
									: "not a proff trace");
			break;
		}
		if (r.type == PTR_EVENTS && r.size > sizeof(r) + sizeof(proff_trace_events_hdr)) {
			rc = 1;
			break;
		}
		off += r.size;
	}
	close(fd);
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
	trace_quality_free(t);
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
	for (size_t i = 0; i < t->nthreads; i++)
		info->dropped_events += t->threads[i].dropped;
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
	bool jump_unknown;         /* a longjmp whose landing frame is not known came last */
} decoder;

static int emit(decoder *d, int kind, uint32_t func, uint64_t ticks, uint32_t depth, int reason)
{
	proff_trace_event ev = { .kind = kind, .func = func, .ticks = ticks, .depth = depth,
				 .synthetic = reason != PROFF_TA_NONE, .reason = (uint8_t)reason };
	if (reason != PROFF_TA_NONE) {
		if (kind == PROFF_TEV_EXIT)
			d->synth_exits++;
		else
			d->synth_entries++;
		proff_trace_note(d->t, reason, func);
	}
	if (kind == PROFF_TEV_ENTER)
		d->t->qcalls++;
	return d->cb(d->arg, &d->ti, &ev);
}

static int pop_synth(decoder *d, uint64_t ticks, int reason)
{
	d->n--;
	return emit(d, PROFF_TEV_EXIT, d->stk[d->n].func, ticks, (uint32_t)d->n, reason);
}

/* The shadow stack. cfa = frame address of the hook; deeper frames are
 * lower. The entry hook runs in the instrumented function's frame, and so
 * does the exit hook, or (tail-called) just after the frame was torn down:
 * an activation with entry cfa e whose parent has entry cfa p exits with
 * e <= c <= p. A function inlined into its caller keeps its hooks: they run
 * in the caller's frame, so its e equals the caller's (e == p). A real
 * callee's frame is strictly below its caller's.
 *
 *  exit(fn, c): paired with its own entry by function address first: the
 *     top frame when it is fn's and e <= c <= p (also when c < e: alloca),
 *     else the topmost frame of fn with e == c, else the topmost one of fn
 *     with e <= c <= p, is the one exited; frames above it never got their exits
 *     (lost: an exception through code without exit hooks) and are closed
 *     first. With none, frames below c are dead (lost exits) and closed; if
 *     the stack is then empty the call began before this thread's trace (the
 *     child side of fork): an entry is synthesised at the thread's first
 *     timestamp. Otherwise the exit is dropped (its entry was lost).
 *  enter(fn, c): frames on top with a cfa strictly below c are dead (their
 *     stack is being reused: their exits were lost) and are closed. A frame
 *     at c itself stays: the new function may be inlined into it. Not
 *     applied when c is far above the stack bottom (a handler on an
 *     alternate signal stack).
 *  jump marker (version 2, longjmp) landing at l: every frame below l was
 *     abandoned at the jump's time and is closed then; the landing frame and
 *     what is inlined into it (cfa == l) stay. A jump with an unknown landing
 *     closes, at the next entry at c, the frames at or below c too (the
 *     version-1 rule: a frame at c then is more likely abandoned than an
 *     inlined caller). */
static int on_jump(decoder *d, uint64_t landing, uint64_t ticks)
{
	int rc;
	if (!landing) {
		d->jump_unknown = true;
		return 0;
	}
	while (d->n && d->stk[d->n - 1].cfa < landing)
		if ((rc = pop_synth(d, ticks, PROFF_TA_LONGJMP)))
			return rc;
	return 0;
}

static int on_event(decoder *d, tsession *s, bool is_exit, uint64_t fn, uint64_t cfa, uint64_t ticks)
{
	int rc;
	if (!is_exit) {
		if (d->n && cfa <= d->stk[0].cfa + ALTSTACK_SLACK) {
			bool jumped = d->jump_unknown;
			while (d->n && (d->stk[d->n - 1].cfa < cfa || (jumped && d->stk[d->n - 1].cfa == cfa)))
				if ((rc = pop_synth(d, ticks, jumped ? PROFF_TA_LONGJMP : PROFF_TA_LOST_EXIT)))
					return rc;
		}
		d->jump_unknown = false;
		int64_t f = func_of(d->t, s, fn);
		if (f < 0)
			return PROFF_ENOMEM;
		if (PF_GROW(d->stk, d->cap, d->n + 1) < 0)
			return PROFF_ENOMEM;
		d->stk[d->n] = (sframe){ .func = (uint32_t)f, .fn = fn, .cfa = cfa };
		d->n++;
		return emit(d, PROFF_TEV_ENTER, (uint32_t)f, ticks, (uint32_t)(d->n - 1), PROFF_TA_NONE);
	}
	d->jump_unknown = false;
	size_t i = (size_t)-1;
	if (d->n) {
		const sframe *top = &d->stk[d->n - 1];
		if (top->fn == fn && (cfa <= top->cfa || d->n == 1 || cfa <= d->stk[d->n - 2].cfa))
			i = d->n - 1;
		/* below the top, exits were lost: an activation exited from its
		 * own frame (c == e) first, then one whose tail-called exit hook
		 * lands at c */
		for (size_t k = d->n - 1; i == (size_t)-1 && k-- > 0;) {
			if (d->stk[k].cfa > cfa)
				break;
			if (d->stk[k].fn == fn && d->stk[k].cfa == cfa)
				i = k;
		}
		for (size_t k = d->n - 1; i == (size_t)-1 && k-- > 0;) {
			if (d->stk[k].cfa > cfa)
				break;             /* this and all lower frames are above c */
			if (d->stk[k].fn == fn && (k == 0 || cfa <= d->stk[k - 1].cfa))
				i = k;
		}
	}
	if (i != (size_t)-1) {
		while (d->n > i + 1)
			if ((rc = pop_synth(d, ticks, PROFF_TA_LOST_EXIT)))
				return rc;
		d->n--;
		return emit(d, PROFF_TEV_EXIT, d->stk[i].func, ticks, (uint32_t)i, PROFF_TA_NONE);
	}
	while (d->n && d->stk[d->n - 1].cfa < cfa)
		if ((rc = pop_synth(d, ticks, PROFF_TA_LOST_EXIT)))
			return rc;
	int64_t f = func_of(d->t, s, fn);
	if (f < 0)
		return PROFF_ENOMEM;
	if (d->n) {
		d->dropped++;
		proff_trace_note(d->t, PROFF_TA_UNMATCHED, (uint32_t)f);
		return 0;
	}
	if ((rc = emit(d, PROFF_TEV_ENTER, (uint32_t)f, d->ti.first_ticks, 0, PROFF_TA_PRE_TRACE)))
		return rc;
	return emit(d, PROFF_TEV_EXIT, (uint32_t)f, ticks, 0, PROFF_TA_NONE);
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
		t->qcount[PROFF_TA_DROPPED] += eh.dropped;
		while (p < end) {
			size_t k1 = proff_trace_get_varint(p, end, &v);
			size_t k2 = k1 ? proff_trace_get_varint(p + k1, end, &fz) : 0;
			size_t k3 = k2 ? proff_trace_get_varint(p + k1 + k2, end, &cz) : 0;
			if (!k3)
				return proff_err_set(err, PROFF_EFORMAT, t->path, (uint64_t)(p - t->data), "malformed event");
			p += k1 + k2 + k3;
			ts += v >> 1;
			fn += address_delta(fz, rh.version);
			cfa += address_delta(cz, rh.version);
			uint64_t adj = ts - s->hdr.start_ts - pause;
			if (adj < prev)
				adj = prev;        /* never backwards */
			prev = adj;
			if (!fn) {                 /* a marker (version 2) */
				if (!(v & 1))
					return proff_err_set(err, PROFF_EFORMAT, t->path, (uint64_t)(p - t->data),
							     "reserved marker event (function address 0, entry)");
				rc = on_jump(d, cfa, adj);
			} else {
				rc = on_event(d, s, v & 1, fn, cfa, adj);
			}
			if (rc > 0)
				return rc;
			if (rc < 0)
				return proff_err_set(err, rc, t->path, (uint64_t)(p - t->data), "out of memory");
		}
	}
	/* frames still open at the end (exit() from inside, a kill): closed at the last time */
	d->jump_unknown = false;
	while (d->n)
		if ((rc = pop_synth(d, prev, PROFF_TA_END)))
			return rc > 0 ? rc : proff_err_set(err, rc, t->path, PROFF_NO_OFFSET, "out of memory");
	return 0;
}

int trace_decode_all(proff_trace *t, proff_trace_event_cb cb, void *arg, trace_decode_stats *st,
		     proff_error *err)
{
	decoder d = { .t = t, .cb = cb, .arg = arg };
	int rc = 0;
	trace_quality_reset(t);
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
