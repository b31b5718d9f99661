/* pd-int.h — internals of the perf.data reader shared by reader.c,
 * reader-sample.c, features.c and dump.c. Not part of the public API.
 */
#ifndef PROFF_PD_INT_H
#define PROFF_PD_INT_H

#include <stdarg.h>
#include <string.h>
#include <byteswap.h>
#include <stdio.h>

#include "proff/perfdata.h"
#include "proff/util.h"

#define PD_FILE_HEADER_SIZE 104
#define PD_PIPE_HEADER_SIZE 16
#define PD_ATTR_SIZE_VER0   64
#define PD_ATTR_KNOWN_SIZE  136   /* VER8; larger attrs: extra bytes ignored */
#define PD_MAX_DECOMP       ((size_t)64 << 20)  /* per COMPRESSED record output bound */
#define PD_MAX_KEPT         ((size_t)1 << 30)   /* buffered bytes before a forced flush */

/* unaligned, endian-aware loads */
static inline uint64_t pd_ld64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t pd_ld32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t pd_ld16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline uint64_t pd_r64(bool sw, const void *p) { uint64_t v = pd_ld64(p); return sw ? bswap_64(v) : v; }
static inline uint32_t pd_r32(bool sw, const void *p) { uint32_t v = pd_ld32(p); return sw ? bswap_32(v) : v; }
static inline uint16_t pd_r16(bool sw, const void *p) { uint16_t v = pd_ld16(p); return sw ? bswap_16(v) : v; }

/* decompressed / streamed bytes, kept until every queued record in it is delivered */
typedef struct pd_chunk {
	struct pd_chunk *next;
	uint64_t last_seq;          /* seq of the last record queued from it */
	size_t len, cap;
	_Alignas(16) uint8_t data[];
} pd_chunk;

typedef struct pd_qent {
	uint64_t time;
	uint64_t seq;
	const uint8_t *rec;
	uint64_t off;               /* bit 63: from compressed stream */
} pd_qent;

#define PD_QOFF_COMP (1ull << 63)

struct pd_reader {
	char *name;
	int fd;
	bool own_fd;
	const uint8_t *map;         /* whole file (file mode, or in-memory pipe data) */
	size_t map_len;
	bool mapped;                /* map came from mmap (munmap on close) */
	const uint8_t *cur_rec;     /* record being processed (file mode) */
	pd_sample_peek_cb peek;     /* pd_set_sample_peek */
	void *peek_ctx;
	size_t released;            /* map bytes [0, released) handed back (MADV_DONTNEED) */
	size_t release_step;        /* ... when so many more can be (release_mapped) */
	bool stream;                /* pipe format read from a non-seekable fd */
	bool swap;
	bool interrupted;          /* header data.size was 0 */
	pd_header hdr;
	pd_attr *attrs;
	size_t nr_attrs, cap_attrs;
	pf_map64 id2attr;           /* sample id -> attr index */
	pf_map64 read_prev;         /* PERF_SAMPLE_READ: id -> last counter value */
	bool raw_samples;           /* pd_dump: READ samples not split per value */
	int id_pos, is_pos;         /* evlist-wide positions (u64 index; is_pos from the end) */
	pf_arena arena;
	char **warnings;
	size_t nr_warnings, cap_warnings;
	uint64_t data_start, data_end;   /* data records range (file mode / in-memory pipe) */
	struct { uint64_t off, size; } feat_sec[PD_FEAT_MAX];
	const uint8_t *feat_data[PD_FEAT_MAX];   /* arena copies of the payloads */
	uint64_t feat_len[PD_FEAT_MAX];
	uint64_t feat_off[PD_FEAT_MAX];
	int64_t mtime;
	/* pipe header records already applied by pd_open (offsets below this) */
	uint64_t applied_end;
	/* stream (fd) input */
	pd_chunk *sbuf;             /* current stream buffer */
	size_t spos;                /* parse position in sbuf */
	uint64_t sbuf_off;          /* file offset of sbuf->data[0] */
	bool seof;
	bool stream_done;           /* a stream can be processed once */
	/* compressed stream state */
	void *zds;
	pd_chunk *dcur;             /* current decompressed chunk */
	uint64_t doff;              /* offset of the next decompressed byte in the stream */
	uint64_t comp_rec_off;      /* file offset of the COMPRESSED record being expanded */
	/* chunk lists waiting for delivery */
	pd_chunk *old_head, *old_tail;
	size_t kept_bytes;
	bool warned_kept;
	/* ordered queue */
	pd_qent *q, *qtmp;
	size_t qhead, qlen, qcap, qtmp_cap;
	size_t qsorted;             /* entries from qhead known to be sorted */
	size_t *runs, runs_cap;     /* sort_queue's run boundaries */
	uint64_t seq;
	uint64_t next_flush, max_time;
	bool ordered;
	pd_event_cb cb;
	void *cb_ctx;
	proff_error *err;
	uint64_t nr_unknown_id;
	/* the event records are decoded into (deliver_now); ev_sample_clean:
	 * its sample fields other than the fixed ones and the callchain are
	 * all zero (pd_decode then clears only those) */
	pd_event ev;
	bool ev_sample_clean;
	/* scratch for other-endian / misaligned records */
	_Alignas(16) uint8_t scratch[65536 + 64];
	uint64_t scratch2[65536 / 8 + 8];
};

int pd_fmt_err(pd_reader *r, uint64_t off, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void pd_warn(pd_reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* attrs */
int pd_attr_parse(pd_reader *r, bool sw, const uint8_t *p, size_t avail, uint64_t off, pd_attr *a,
		  size_t *attr_len);
int pd_add_attr(pd_reader *r, const pd_attr *a);
int pd_attr_add_id(pd_reader *r, size_t idx, uint64_t id);
void pd_attr_synth_name(pd_reader *r, pd_attr *a);
int pd_finish_attrs(pd_reader *r, uint64_t off);

/* features.c */
int pd_parse_feature(pd_reader *r, int feat, const uint8_t *p, uint64_t size, uint64_t off);
/* body = record bytes after the 8-byte header; size = whole record; misc host order */
int pd_parse_build_id_rec(pd_reader *r, const uint8_t *body, size_t size, uint16_t misc, uint64_t off);
int pd_print_features(pd_reader *r, FILE *out, bool full);

/* reader.c: the records of buf (see there); a chunk kept until the records
 * queued from it are delivered */
int pd_process_records(pd_reader *r, const uint8_t *buf, size_t len, uint64_t base_off,
		       bool comp, size_t *consumed, bool final);

/* reader-sample.c: decode one record (host order, aligned) into ev */
int pd_decode(pd_reader *r, const uint8_t *rec, uint64_t off, bool from_comp, pd_event *ev);
int pd_record_attr(pd_reader *r, const uint8_t *rec, uint32_t type, uint16_t size);
int pd_record_time(pd_reader *r, const uint8_t *rec, uint32_t type, uint16_t size, uint64_t *t);
/* swap one record in place (other-endian files) */
int pd_swap_record(pd_reader *r, uint8_t *rec, uint64_t off);
void pd_swap_attr_bytes(uint8_t *p, size_t len);

/* A decoded record's header fields. */
static inline void pd_event_head(pd_event *ev, uint32_t type, uint16_t misc, uint16_t size, uint64_t off,
				 bool comp, const uint8_t *rec)
{
	ev->type = type;
	ev->misc = misc;
	ev->size = size;
	ev->file_offset = off;
	ev->from_compressed = comp;
	ev->raw = rec;
}

/* The sample types perf record writes by default (fixed 8-byte fields and a
 * callchain, pd_attr.fixed_layout), by the attr's precomputed offsets: no
 * test per field kind. Sets every such field (absent ones 0). false: not
 * whole (the general decoder then says what is wrong). */
static inline bool pd_sample_fixed(const pd_attr *a, const uint8_t *rec, uint16_t size,
				       pd_sample *s, pd_sample_id *sid)
{
	if (size < a->fixed_size)
		return false;
	const uint64_t *cc = NULL;
	uint64_t nr = 0;
	if (a->o_cc >= 0) {
		nr = pd_ld64(rec + a->o_cc);
		if (nr > (uint64_t)(size - a->fixed_size) / 8)
			return false;
		cc = (const uint64_t *)(rec + a->fixed_size);
	}
	s->callchain = cc;
	s->nr_callchain = nr;
	s->ip = a->o_ip >= 0 ? pd_ld64(rec + a->o_ip) : 0;
	uint32_t pid = 0, tid = 0;
	if (a->o_tid >= 0) {
		pid = pd_ld32(rec + a->o_tid);
		tid = pd_ld32(rec + a->o_tid + 4);
	}
	sid->pid = s->pid = pid;
	sid->tid = s->tid = tid;
	sid->time = s->time = a->o_time >= 0 ? pd_ld64(rec + a->o_time) : 0;
	s->addr = a->o_addr >= 0 ? pd_ld64(rec + a->o_addr) : 0;
	sid->id = s->id = a->o_id >= 0 ? pd_ld64(rec + a->o_id) : 0;
	sid->stream_id = s->stream_id = a->o_stream_id >= 0 ? pd_ld64(rec + a->o_stream_id) : 0;
	sid->cpu = s->cpu = a->o_cpu >= 0 ? pd_ld32(rec + a->o_cpu) : 0;
	s->period = a->o_period >= 0 ? pd_ld64(rec + a->o_period) : 0;
	return true;
}

/* The next fixed-layout sample of the file's one event into r->ev, when the
 * last record decoded there was such a sample too (ev_sample_clean: the
 * event's other fields, the sample's event and its id flags are already
 * right): what pd_decode would set, in fewer steps. false: use pd_decode. */
static inline bool pd_decode_again(pd_reader *r, const uint8_t *rec, uint64_t off, bool comp)
{
	if (!r->ev_sample_clean || r->nr_attrs != 1 || pd_ld32(rec) != PD_SAMPLE)
		return false;
	const pd_attr *a = &r->attrs[0];
	uint16_t misc = pd_ld16(rec + 4), size = pd_ld16(rec + 6);
	pd_event *ev = &r->ev;
	pd_sample *s = &ev->u.sample;
	if (a->fixed_kind) {
		/* constant offsets; the absent fields are still zero */
		if (size < a->fixed_size)
			return false;
		if (a->o_cc >= 0) {
			uint64_t nr = pd_ld64(rec + a->o_cc);
			if (nr > (uint64_t)(size - a->fixed_size) / 8)
				return false;
			s->callchain = (const uint64_t *)(rec + a->fixed_size);
			s->nr_callchain = nr;
		}
		s->ip = pd_ld64(rec + 8);
		ev->sid.pid = s->pid = pd_ld32(rec + 16);
		ev->sid.tid = s->tid = pd_ld32(rec + 20);
		ev->sid.time = s->time = pd_ld64(rec + 24);
		if (a->fixed_kind == 2) {
			ev->sid.cpu = s->cpu = pd_ld32(rec + 32);
			s->period = pd_ld64(rec + 40);
		} else {
			s->period = pd_ld64(rec + 32);
		}
	} else if (!pd_sample_fixed(a, rec, size, s, &ev->sid)) {
		return false;       /* nothing written: pd_decode says what is wrong */
	}
	pd_event_head(ev, PD_SAMPLE, misc, size, off, comp, rec);
	s->misc = misc;
	s->cpumode = misc & PD_CPUMODE_MASK;
	if (!(a->sample_type & PD_S_PERIOD))
		s->period = a->sample_period;     /* (not for a fixed_kind) */
	return true;
}

#endif
