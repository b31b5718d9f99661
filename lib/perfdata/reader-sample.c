/* reader-sample.c — decoding one perf.data record into a pd_event: samples
 * (every sample_type field, in the kernel's order), the sample_id_all
 * trailer of side-band records, MMAP/MMAP2/COMM/FORK/EXIT/LOST/... ; the
 * record -> event (attr) mapping via IDENTIFIER/ID; and the in-place byte
 * swap of records from other-endian files.
 */
#include "pd-int.h"

#include <stdio.h>

/* attr index of a record (host order); -1 if unknown */
int pd_record_attr(pd_reader *r, const uint8_t *rec, uint32_t type, uint16_t size)
{
	if (r->nr_attrs == 1)
		return 0;
	uint64_t id, idx;
	if (type == PD_SAMPLE) {
		if (r->id_pos < 0)
			return 0;
		if (8 + 8 * (size_t)(r->id_pos + 1) > size)
			return -1;
		id = pd_ld64(rec + 8 + 8 * r->id_pos);
	} else {
		if (r->is_pos < 0 || !r->attrs[0].sample_id_all)
			return 0;
		if (8 + 8 * (size_t)r->is_pos > size)
			return -1;
		id = pd_ld64(rec + size - 8 * r->is_pos);
	}
	if (id == 0)
		return 0;
	if (pf_map64_get(&r->id2attr, id, &idx))
		return (int)idx;
	return -1;
}

/* timestamp of a kernel record; UINT64_MAX when it has none */
int pd_record_time(pd_reader *r, const uint8_t *rec, uint32_t type, uint16_t size, uint64_t *t)
{
	*t = UINT64_MAX;
	int ai = pd_record_attr(r, rec, type, size);
	const pd_attr *a = &r->attrs[ai < 0 ? 0 : ai];
	uint64_t st = a->sample_type;
	if (!(st & PD_S_TIME))
		return 0;
	if (type == PD_SAMPLE) {
		if (ai < 0)
			return 0;       /* skipped at delivery */
		size_t pos = (size_t)a->o_time;
		if (pos + 8 > size)
			return 0;       /* decode reports it */
		*t = pd_ld64(rec + pos);
		return 0;
	}
	if (!a->sample_id_all)
		return 0;
	size_t back = 8;        /* TIME itself */
	if (st & PD_S_ID) back += 8;
	if (st & PD_S_STREAM_ID) back += 8;
	if (st & PD_S_CPU) back += 8;
	if (st & PD_S_IDENTIFIER) back += 8;
	if (back + 8 > size)
		return 0;
	*t = pd_ld64(rec + size - back);
	return 0;
}

/* trailer size in bytes for attr a */
static size_t trailer_size(const pd_attr *a)
{
	if (!a->sample_id_all)
		return 0;
	uint64_t st = a->sample_type;
	return 8 * (size_t)pf_popcount64(st & (PD_S_TID | PD_S_TIME | PD_S_ID | PD_S_STREAM_ID |
					    PD_S_CPU | PD_S_IDENTIFIER));
}

static int parse_trailer(pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t off,
			 const pd_attr *a, pd_sample_id *sid, size_t body_min)
{
	memset(sid, 0, sizeof(*sid));
	size_t ts = trailer_size(a);
	if (!ts)
		return 0;
	if (ts + body_min > size)
		return pd_fmt_err(r, off, "%s record (%u bytes) too short for its sample_id trailer (%zu bytes)",
				  pd_record_name(pd_ld32(rec)), size, ts);
	const uint8_t *p = rec + size - ts;
	uint64_t st = a->sample_type;
	if (st & PD_S_TID) { sid->has_tid = true; sid->pid = pd_ld32(p); sid->tid = pd_ld32(p + 4); p += 8; }
	if (st & PD_S_TIME) { sid->has_time = true; sid->time = pd_ld64(p); p += 8; }
	if (st & PD_S_ID) { sid->has_id = true; sid->id = pd_ld64(p); p += 8; }
	if (st & PD_S_STREAM_ID) { sid->has_stream_id = true; sid->stream_id = pd_ld64(p); p += 8; }
	if (st & PD_S_CPU) { sid->has_cpu = true; sid->cpu = pd_ld32(p); p += 8; }
	if (st & PD_S_IDENTIFIER) { sid->has_id = true; sid->id = pd_ld64(p); }
	return 0;
}

/* field-wise clear: a memset of the whole struct (rep stos) cost a third of
 * the decode time */
static inline void sample_clear(pd_sample *s)
{
	s->ip = 0; s->pid = s->tid = 0; s->time = 0; s->addr = 0; s->id = 0; s->stream_id = 0;
	s->cpu = 0; s->period = 0;
	s->read_values = NULL; s->nr_read_values = 0;
	s->callchain = NULL; s->nr_callchain = 0;
	s->raw = NULL; s->raw_size = 0;
	s->branches = NULL; s->nr_branches = 0;
	s->has_hw_idx = false; s->hw_idx = 0; s->branch_counters = NULL;
	s->regs_user_abi = 0; s->regs_user = NULL; s->nr_regs_user = 0;
	s->stack_user_size = 0; s->stack_user = NULL; s->stack_user_dyn_size = 0;
	s->weight = 0; s->weight_var2 = s->weight_var3 = 0;
	s->data_src = 0; s->transaction = 0;
	s->regs_intr_abi = 0; s->regs_intr = NULL; s->nr_regs_intr = 0;
	s->phys_addr = 0; s->cgroup = 0; s->data_page_size = s->code_page_size = 0;
	s->aux_size = 0; s->aux = NULL;
}

/* The fields decode_sample_fixed sets (the rest stay as they are). */
static inline void sample_clear_common(pd_sample *s)
{
	s->ip = 0; s->pid = s->tid = 0; s->time = 0; s->addr = 0; s->id = 0; s->stream_id = 0;
	s->cpu = 0; s->period = 0;
	s->callchain = NULL; s->nr_callchain = 0;
}

#define NEED(n, what) do { \
	if ((uint64_t)(n) > (uint64_t)(end - p)) \
		return pd_fmt_err(r, off + (uint64_t)(p - rec), \
				  "SAMPLE record truncated: %s needs %llu bytes, %zu left in the record", \
				  what, (unsigned long long)(n), (size_t)(end - p)); \
} while (0)

static int decode_sample(pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t off,
			 const pd_attr *a, pd_sample *s, pd_sample_id *sid)
{
	const uint8_t *p = rec + 8, *end = rec + size;
	uint64_t st = a->sample_type;
	if (st & PD_S_IDENTIFIER) { NEED(8, "IDENTIFIER"); sid->id = s->id = pd_ld64(p); p += 8; }
	if (st & PD_S_IP) { NEED(8, "IP"); s->ip = pd_ld64(p); p += 8; }
	if (st & PD_S_TID) { NEED(8, "TID"); sid->pid = s->pid = pd_ld32(p); sid->tid = s->tid = pd_ld32(p + 4); p += 8; }
	if (st & PD_S_TIME) { NEED(8, "TIME"); sid->time = s->time = pd_ld64(p); p += 8; }
	if (st & PD_S_ADDR) { NEED(8, "ADDR"); s->addr = pd_ld64(p); p += 8; }
	if (st & PD_S_ID) { NEED(8, "ID"); sid->id = s->id = pd_ld64(p); p += 8; }
	if (st & PD_S_STREAM_ID) { NEED(8, "STREAM_ID"); sid->stream_id = s->stream_id = pd_ld64(p); p += 8; }
	if (st & PD_S_CPU) { NEED(8, "CPU"); sid->cpu = s->cpu = pd_ld32(p); p += 8; }
	if (st & PD_S_PERIOD) { NEED(8, "PERIOD"); s->period = pd_ld64(p); p += 8; }
	if (st & PD_S_READ) {
		uint64_t rf = a->read_format;
		uint64_t n;
		if (rf & 8 /* GROUP */) {
			NEED(8, "READ nr");
			uint64_t nr = pd_ld64(p);
			uint64_t per = 1 + !!(rf & 4) + !!(rf & 16);
			uint64_t hdr = 1 + !!(rf & 1) + !!(rf & 2);
			if (nr > (uint64_t)(end - p) / 8 / per)
				return pd_fmt_err(r, off + (uint64_t)(p - rec), "SAMPLE READ group nr %llu does not fit in the record",
						  (unsigned long long)nr);
			n = hdr + nr * per;
		} else {
			n = 1 + !!(rf & 1) + !!(rf & 2) + !!(rf & 4) + !!(rf & 16);
		}
		NEED(8 * n, "READ");
		s->read_values = (const uint64_t *)p;
		s->nr_read_values = (uint32_t)n;
		p += 8 * n;
	}
	if (st & PD_S_CALLCHAIN) {
		NEED(8, "CALLCHAIN nr");
		uint64_t nr = pd_ld64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8)
			return pd_fmt_err(r, off + (uint64_t)(p - 8 - rec),
					  "SAMPLE callchain nr %llu does not fit in the record (%zu bytes left)",
					  (unsigned long long)nr, (size_t)(end - p));
		s->callchain = (const uint64_t *)p;
		s->nr_callchain = nr;
		p += 8 * nr;
	}
	if (st & PD_S_RAW) {
		NEED(4, "RAW size");
		uint32_t rs = pd_ld32(p);
		p += 4;
		NEED(rs, "RAW data");
		s->raw = p;
		s->raw_size = rs;
		p += rs;
		if ((uintptr_t)(p - rec) % 8)
			return pd_fmt_err(r, off + (uint64_t)(p - rec), "SAMPLE RAW size %u leaves the record misaligned", rs);
	}
	if (st & PD_S_BRANCH_STACK) {
		NEED(8, "BRANCH_STACK nr");
		uint64_t nr = pd_ld64(p);
		p += 8;
		if (a->branch_sample_type & (1ull << 17)) {   /* PERF_SAMPLE_BRANCH_HW_INDEX */
			NEED(8, "BRANCH_STACK hw_idx");
			s->has_hw_idx = true;
			s->hw_idx = pd_ld64(p);
			p += 8;
		}
		if (nr > (uint64_t)(end - p) / 24)
			return pd_fmt_err(r, off + (uint64_t)(p - rec), "SAMPLE branch stack nr %llu does not fit in the record",
					  (unsigned long long)nr);
		s->branches = (const pd_branch_entry *)p;
		s->nr_branches = nr;
		p += 24 * nr;
		if (a->branch_sample_type & (1ull << 19)) {   /* PERF_SAMPLE_BRANCH_COUNTERS */
			NEED(8 * nr, "BRANCH_STACK counters");
			s->branch_counters = (const uint64_t *)p;
			p += 8 * nr;
		}
	}
	if (st & PD_S_REGS_USER) {
		NEED(8, "REGS_USER abi");
		s->regs_user_abi = pd_ld64(p);
		p += 8;
		if (s->regs_user_abi) {
			uint32_t n = (uint32_t)pf_popcount64(a->sample_regs_user);
			NEED(8 * (uint64_t)n, "REGS_USER");
			s->regs_user = (const uint64_t *)p;
			s->nr_regs_user = n;
			p += 8 * n;
		}
	}
	if (st & PD_S_STACK_USER) {
		NEED(8, "STACK_USER size");
		uint64_t sz = pd_ld64(p);
		p += 8;
		NEED(sz, "STACK_USER data");
		s->stack_user_size = sz;
		s->stack_user = p;
		p += sz;
		if (sz) {
			NEED(8, "STACK_USER dyn_size");
			s->stack_user_dyn_size = pd_ld64(p);
			p += 8;
		}
		if ((uintptr_t)(p - rec) % 8)
			return pd_fmt_err(r, off + (uint64_t)(p - rec), "SAMPLE STACK_USER size leaves the record misaligned");
	}
	if (st & (PD_S_WEIGHT | PD_S_WEIGHT_STRUCT)) {
		NEED(8, "WEIGHT");
		if (st & PD_S_WEIGHT_STRUCT) {
			s->weight = pd_ld32(p);
			s->weight_var2 = pd_ld16(p + 4);
			s->weight_var3 = pd_ld16(p + 6);
		} else {
			s->weight = pd_ld64(p);
		}
		p += 8;
	}
	if (st & PD_S_DATA_SRC) { NEED(8, "DATA_SRC"); s->data_src = pd_ld64(p); p += 8; }
	if (st & PD_S_TRANSACTION) { NEED(8, "TRANSACTION"); s->transaction = pd_ld64(p); p += 8; }
	if (st & PD_S_REGS_INTR) {
		NEED(8, "REGS_INTR abi");
		s->regs_intr_abi = pd_ld64(p);
		p += 8;
		if (s->regs_intr_abi) {
			uint32_t n = (uint32_t)pf_popcount64(a->sample_regs_intr);
			NEED(8 * (uint64_t)n, "REGS_INTR");
			s->regs_intr = (const uint64_t *)p;
			s->nr_regs_intr = n;
			p += 8 * n;
		}
	}
	if (st & PD_S_PHYS_ADDR) { NEED(8, "PHYS_ADDR"); s->phys_addr = pd_ld64(p); p += 8; }
	if (st & PD_S_CGROUP) { NEED(8, "CGROUP"); s->cgroup = pd_ld64(p); p += 8; }
	if (st & PD_S_DATA_PAGE_SIZE) { NEED(8, "DATA_PAGE_SIZE"); s->data_page_size = pd_ld64(p); p += 8; }
	if (st & PD_S_CODE_PAGE_SIZE) { NEED(8, "CODE_PAGE_SIZE"); s->code_page_size = pd_ld64(p); p += 8; }
	if (st & PD_S_AUX) {
		NEED(8, "AUX size");
		uint64_t sz = pd_ld64(p);
		p += 8;
		NEED(sz, "AUX data");
		s->aux_size = sz;
		s->aux = p;
		p += sz;
	}
	return 0;
}

#undef NEED

static const char *rec_str(const uint8_t *rec, size_t from, size_t lim)
{
	/* strings are NUL-terminated inside the record; make sure of it */
	if (from >= lim)
		return "";
	const char *s = (const char *)rec + from;
	if (!memchr(s, 0, lim - from))
		return NULL;
	return s;
}

int pd_decode(pd_reader *r, const uint8_t *rec, uint64_t off, bool comp, pd_event *ev)
{
	uint32_t type = pd_ld32(rec);
	uint16_t misc = pd_ld16(rec + 4), size = pd_ld16(rec + 6);
	pd_event_head(ev, type, misc, size, off, comp, rec);
	if (type == PD_SAMPLE) {
		int ai = pd_record_attr(r, rec, type, size);
		if (ai < 0) {
			r->nr_unknown_id++;
			return 1;
		}
		pd_sample *s = &ev->u.sample;
		const pd_attr *a = &r->attrs[ai];
		uint64_t st = a->sample_type;
		/* the reader's own event, whose other fields are still zero from
		 * the last full clear: only the fields this kind of sample sets */
		bool common = a->fixed_layout;
		bool clean = common && ev == &r->ev && r->ev_sample_clean;
		if (!clean) {
			sample_clear(s);
			r->ev_sample_clean = common && ev == &r->ev;
		}
		s->evsel = ai;
		s->misc = misc;
		s->cpumode = misc & PD_CPUMODE_MASK;
		pd_sample_id *sid = &ev->sid;
		sid->has_tid = st & PD_S_TID;
		sid->has_time = st & PD_S_TIME;
		sid->has_id = st & (PD_S_ID | PD_S_IDENTIFIER);
		sid->has_cpu = st & PD_S_CPU;
		sid->has_stream_id = st & PD_S_STREAM_ID;
		if (!common || !pd_sample_fixed(a, rec, size, s, sid)) {
			if (clean)
				sample_clear_common(s);
			sid->pid = sid->tid = sid->cpu = 0;
			sid->time = sid->id = sid->stream_id = 0;
			int rc = decode_sample(r, rec, size, off, a, s, sid);
			if (rc < 0)
				return rc;
		}
		if (!(st & PD_S_PERIOD))
			s->period = a->sample_period;   /* as perf: the attr value */
		return 0;
	}
	memset(&ev->u, 0, sizeof(ev->u));
	if (ev == &r->ev)
		r->ev_sample_clean = false;     /* the union's other members written below */
	if (type >= PD_HEADER_ATTR) {
		memset(&ev->sid, 0, sizeof(ev->sid));
		if (type == PD_TIME_CONV && size >= 32) {
			ev->u.time_conv.time_shift = pd_ld64(rec + 8);
			ev->u.time_conv.time_mult = pd_ld64(rec + 16);
			ev->u.time_conv.time_zero = pd_ld64(rec + 24);
		}
		return 0;
	}
	int ai = pd_record_attr(r, rec, type, size);
	const pd_attr *a = &r->attrs[ai < 0 ? 0 : ai];
	size_t ts = trailer_size(a);
	int rc;
	switch (type) {
	case PD_MMAP:
	case PD_MMAP2: {
		size_t fixed = type == PD_MMAP ? 40 : 72;
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, fixed)) < 0)
			return rc;
		if (size < fixed + ts)
			return pd_fmt_err(r, off, "%s record too short (%u bytes)", pd_record_name(type), size);
		ev->u.mmap.pid = pd_ld32(rec + 8);
		ev->u.mmap.tid = pd_ld32(rec + 12);
		ev->u.mmap.start = pd_ld64(rec + 16);
		ev->u.mmap.len = pd_ld64(rec + 24);
		ev->u.mmap.pgoff = pd_ld64(rec + 32);
		if (type == PD_MMAP2) {
			if (misc & PD_MISC_MMAP_BUILD_ID) {
				ev->u.mmap.has_build_id = true;
				uint8_t bs = rec[40];
				ev->u.mmap.build_id_size = bs > 20 ? 20 : bs;
				memcpy(ev->u.mmap.build_id, rec + 44, 20);
			} else {
				ev->u.mmap.maj = pd_ld32(rec + 40);
				ev->u.mmap.min = pd_ld32(rec + 44);
				ev->u.mmap.ino = pd_ld64(rec + 48);
				ev->u.mmap.ino_generation = pd_ld64(rec + 56);
			}
			ev->u.mmap.prot = pd_ld32(rec + 64);
			ev->u.mmap.flags = pd_ld32(rec + 68);
		}
		ev->u.mmap.filename = rec_str(rec, fixed, size - ts);
		if (!ev->u.mmap.filename)
			return pd_fmt_err(r, off + fixed, "%s file name is not NUL-terminated", pd_record_name(type));
		return 0;
	}
	case PD_COMM:
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 16)) < 0)
			return rc;
		if (size < 16 + ts)
			return pd_fmt_err(r, off, "COMM record too short (%u bytes)", size);
		ev->u.comm.pid = pd_ld32(rec + 8);
		ev->u.comm.tid = pd_ld32(rec + 12);
		ev->u.comm.exec = misc & PD_MISC_COMM_EXEC;
		ev->u.comm.comm = rec_str(rec, 16, size - ts);
		if (!ev->u.comm.comm)
			return pd_fmt_err(r, off + 16, "COMM name is not NUL-terminated");
		return 0;
	case PD_FORK:
	case PD_EXIT:
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 32)) < 0)
			return rc;
		if (size < 32 + ts)
			return pd_fmt_err(r, off, "%s record too short (%u bytes)", pd_record_name(type), size);
		ev->u.fork.pid = pd_ld32(rec + 8);
		ev->u.fork.ppid = pd_ld32(rec + 12);
		ev->u.fork.tid = pd_ld32(rec + 16);
		ev->u.fork.ptid = pd_ld32(rec + 20);
		ev->u.fork.time = pd_ld64(rec + 24);
		return 0;
	case PD_LOST:
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 24)) < 0)
			return rc;
		if (size < 24 + ts)
			return pd_fmt_err(r, off, "LOST record too short (%u bytes)", size);
		ev->u.lost.id = pd_ld64(rec + 8);
		ev->u.lost.lost = pd_ld64(rec + 16);
		return 0;
	case PD_LOST_SAMPLES:
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 16)) < 0)
			return rc;
		if (size < 16 + ts)
			return pd_fmt_err(r, off, "LOST_SAMPLES record too short (%u bytes)", size);
		ev->u.lost_samples.lost = pd_ld64(rec + 8);
		return 0;
	case PD_THROTTLE:
	case PD_UNTHROTTLE:
		if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 32)) < 0)
			return rc;
		if (size < 32 + ts)
			return pd_fmt_err(r, off, "%s record too short (%u bytes)", pd_record_name(type), size);
		ev->u.throttle.time = pd_ld64(rec + 8);
		ev->u.throttle.id = pd_ld64(rec + 16);
		ev->u.throttle.stream_id = pd_ld64(rec + 24);
		return 0;
	default:
		/* other kernel records: only the trailer; unknown types pass through */
		if (type < PD_HEADER_ATTR && a->sample_id_all && size >= 8 + ts) {
			if ((rc = parse_trailer(r, rec, size, off, a, &ev->sid, 8)) < 0)
				return rc;
		} else {
			memset(&ev->sid, 0, sizeof(ev->sid));
		}
		return 0;
	}
}

/* ---- other-endian: swap one record in place to host order ----------------- */

static void sw64(uint8_t *p) { uint64_t v = pd_ld64(p); v = bswap_64(v); memcpy(p, &v, 8); }
static void sw32(uint8_t *p) { uint32_t v = pd_ld32(p); v = bswap_32(v); memcpy(p, &v, 4); }
static void sw16(uint8_t *p) { uint16_t v = pd_ld16(p); v = bswap_16(v); memcpy(p, &v, 2); }

static void swap_u64s(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sw64(p + 8 * i);
}

static void swap_trailer(const pd_attr *a, uint8_t *rec, uint16_t size)
{
	size_t ts = trailer_size(a);
	if (!ts || ts + 8 > size)
		return;
	uint8_t *p = rec + size - ts;
	uint64_t st = a->sample_type;
	if (st & PD_S_TID) { sw32(p); sw32(p + 4); p += 8; }
	if (st & PD_S_TIME) { sw64(p); p += 8; }
	if (st & PD_S_ID) { sw64(p); p += 8; }
	if (st & PD_S_STREAM_ID) { sw64(p); p += 8; }
	if (st & PD_S_CPU) { sw32(p); sw32(p + 4); p += 8; }
	if (st & PD_S_IDENTIFIER) { sw64(p); }
}

/* field-by-field swap of a sample; stops quietly at the record end (decode reports) */
static void swap_sample(const pd_attr *a, uint8_t *rec, uint16_t size)
{
	uint8_t *p = rec + 8, *end = rec + size;
	uint64_t st = a->sample_type;
#define HAVE(n) ((uint64_t)(n) <= (uint64_t)(end - p))
#define U64(bit) if (st & (bit)) { if (!HAVE(8)) return; sw64(p); p += 8; }
#define PAIR(bit) if (st & (bit)) { if (!HAVE(8)) return; sw32(p); sw32(p + 4); p += 8; }
	U64(PD_S_IDENTIFIER) U64(PD_S_IP) PAIR(PD_S_TID) U64(PD_S_TIME) U64(PD_S_ADDR)
	U64(PD_S_ID) U64(PD_S_STREAM_ID) PAIR(PD_S_CPU) U64(PD_S_PERIOD)
	if (st & PD_S_READ) {
		uint64_t rf = a->read_format, n;
		if (rf & 8) {
			if (!HAVE(8)) return;
			sw64(p);
			uint64_t nr = pd_ld64(p);
			uint64_t per = 1 + !!(rf & 4) + !!(rf & 16);
			if (nr > (uint64_t)(end - p) / 8 / per) return;
			n = 1 + !!(rf & 1) + !!(rf & 2) + nr * per;
			if (!HAVE(8 * n)) return;
			swap_u64s(p + 8, n - 1);
		} else {
			n = 1 + !!(rf & 1) + !!(rf & 2) + !!(rf & 4) + !!(rf & 16);
			if (!HAVE(8 * n)) return;
			swap_u64s(p, n);
		}
		p += 8 * n;
	}
	if (st & PD_S_CALLCHAIN) {
		if (!HAVE(8)) return;
		sw64(p);
		uint64_t nr = pd_ld64(p);
		p += 8;
		if (nr > (uint64_t)(end - p) / 8) return;
		swap_u64s(p, nr);
		p += 8 * nr;
	}
	if (st & PD_S_RAW) {
		/* raw data stays as recorded (tracepoint payloads are interpreted elsewhere) */
		if (!HAVE(4)) return;
		sw32(p);
		uint32_t rs = pd_ld32(p);
		p += 4;
		if (!HAVE(rs)) return;
		p += rs;
	}
	if (st & PD_S_BRANCH_STACK) {
		if (!HAVE(8)) return;
		sw64(p);
		uint64_t nr = pd_ld64(p);
		p += 8;
		if (a->branch_sample_type & (1ull << 17)) { if (!HAVE(8)) return; sw64(p); p += 8; }
		if (nr > (uint64_t)(end - p) / 24) return;
		for (uint64_t i = 0; i < nr; i++) {
			sw64(p); sw64(p + 8);
			/* flags is a bitfield word: swap the bytes, then the bit order in each byte */
			pd_swap_attr_bytes(p + 16, 8);
			p += 24;
		}
		if (a->branch_sample_type & (1ull << 19)) {
			if (!HAVE(8 * nr)) return;
			swap_u64s(p, nr);
			p += 8 * nr;
		}
	}
	if (st & PD_S_REGS_USER) {
		if (!HAVE(8)) return;
		sw64(p);
		uint64_t abi = pd_ld64(p);
		p += 8;
		if (abi) {
			size_t n = (size_t)pf_popcount64(a->sample_regs_user);
			if (!HAVE(8 * n)) return;
			swap_u64s(p, n);
			p += 8 * n;
		}
	}
	if (st & PD_S_STACK_USER) {
		if (!HAVE(8)) return;
		sw64(p);
		uint64_t sz = pd_ld64(p);
		p += 8;
		if (!HAVE(sz)) return;
		p += sz;
		if (sz) { if (!HAVE(8)) return; sw64(p); p += 8; }
	}
	if (st & (PD_S_WEIGHT | PD_S_WEIGHT_STRUCT)) {
		if (!HAVE(8)) return;
		if (st & PD_S_WEIGHT_STRUCT) { sw32(p); sw16(p + 4); sw16(p + 6); } else sw64(p);
		p += 8;
	}
	U64(PD_S_DATA_SRC) U64(PD_S_TRANSACTION)
	if (st & PD_S_REGS_INTR) {
		if (!HAVE(8)) return;
		sw64(p);
		uint64_t abi = pd_ld64(p);
		p += 8;
		if (abi) {
			size_t n = (size_t)pf_popcount64(a->sample_regs_intr);
			if (!HAVE(8 * n)) return;
			swap_u64s(p, n);
			p += 8 * n;
		}
	}
	U64(PD_S_PHYS_ADDR) U64(PD_S_CGROUP) U64(PD_S_DATA_PAGE_SIZE) U64(PD_S_CODE_PAGE_SIZE)
	if (st & PD_S_AUX) {
		if (!HAVE(8)) return;
		sw64(p);
	}
#undef HAVE
#undef U64
#undef PAIR
}

/* find the attr of a still-swapped record: peek the id with a swapped load */
static const pd_attr *swapped_attr(pd_reader *r, const uint8_t *rec, uint32_t type, uint16_t size)
{
	if (r->nr_attrs <= 1)
		return r->nr_attrs ? &r->attrs[0] : NULL;
	uint64_t id = 0, idx;
	if (type == PD_SAMPLE) {
		if (r->id_pos >= 0 && 8 + 8 * (size_t)(r->id_pos + 1) <= size)
			id = bswap_64(pd_ld64(rec + 8 + 8 * r->id_pos));
	} else if (r->is_pos >= 0 && 8 + 8 * (size_t)r->is_pos <= size) {
		id = bswap_64(pd_ld64(rec + size - 8 * r->is_pos));
	}
	if (id && pf_map64_get(&r->id2attr, id, &idx))
		return &r->attrs[idx];
	return &r->attrs[0];
}

int pd_swap_record(pd_reader *r, uint8_t *rec, uint64_t off)
{
	sw32(rec);
	sw16(rec + 4);
	sw16(rec + 6);
	uint32_t type = pd_ld32(rec);
	uint16_t size = pd_ld16(rec + 6);
	uint8_t *b = rec + 8;
	size_t blen = size >= 8 ? size - 8u : 0;
	const pd_attr *a = type < PD_HEADER_ATTR ? swapped_attr(r, rec, type, size) : NULL;
	(void)off;
	switch (type) {
	case PD_SAMPLE:
		if (a)
			swap_sample(a, rec, size);
		return 0;
	case PD_MMAP:
	case PD_MMAP2:
		if (blen >= 32) {
			sw32(b); sw32(b + 4); swap_u64s(b + 8, 3);
		}
		if (type == PD_MMAP2 && blen >= 64) {
			if (!(pd_ld16(rec + 4) & PD_MISC_MMAP_BUILD_ID)) {
				sw32(b + 32); sw32(b + 36); swap_u64s(b + 40, 2);
			}
			sw32(b + 56); sw32(b + 60);
		}
		break;
	case PD_COMM:
		if (blen >= 8) { sw32(b); sw32(b + 4); }
		break;
	case PD_FORK:
	case PD_EXIT:
		if (blen >= 24) { sw32(b); sw32(b + 4); sw32(b + 8); sw32(b + 12); sw64(b + 16); }
		break;
	case PD_LOST:
		if (blen >= 16) swap_u64s(b, 2);
		break;
	case PD_LOST_SAMPLES:
		if (blen >= 8) sw64(b);
		break;
	case PD_THROTTLE:
	case PD_UNTHROTTLE:
		if (blen >= 24) swap_u64s(b, 3);
		break;
	case PD_HEADER_ATTR: {
		/* attr fields, then u64 ids; pd_attr_parse expects host order here */
		if (blen < 8)
			return 0;
		sw32(b); sw32(b + 4);
		uint32_t asz = pd_ld32(b + 4);
		if (asz == 0)
			asz = PD_ATTR_SIZE_VER0;
		if (asz > blen || asz < PD_ATTR_SIZE_VER0)
			return 0;
		swap_u64s(b + 8, 4);                   /* config, period, sample_type, read_format */
		pd_swap_attr_bytes(b + 40, 8);         /* flags bitfield */
		sw32(b + 48); sw32(b + 52);
		for (size_t o = 56; o + 8 <= asz; o += 8) {
			if (o == 88 || o == 104 || o == 112) {  /* u32 pairs / u32+u16+u16 */
				sw32(b + o);
				if (o == 104) { sw16(b + o + 4); sw16(b + o + 6); } else sw32(b + o + 4);
			} else {
				sw64(b + o);
			}
		}
		for (size_t o = asz; o + 8 <= blen; o += 8)
			sw64(b + o);
		return 0;
	}
	case PD_HEADER_FEATURE:
		/* the feature payload is parsed with swapped loads (r->swap) */
		if (blen >= 8) sw64(b);
		return 0;
	case PD_HEADER_BUILD_ID:
		return 0;       /* parsed with swapped loads */
	case PD_ID_INDEX:
		swap_u64s(b, blen / 8);
		return 0;
	case PD_EVENT_UPDATE:
		if (blen >= 16) swap_u64s(b, 2);
		if (blen >= 24) {
			uint64_t ut = pd_ld64(b);
			if (ut == 2 /* SCALE: double */)
				sw64(b + 16);
		}
		return 0;
	case PD_TIME_CONV:
		if (blen >= 40) swap_u64s(b, 5);
		else swap_u64s(b, blen / 8);
		return 0;
	case PD_THREAD_MAP:
		if (blen >= 8) {
			sw64(b);
			uint64_t nr = pd_ld64(b);
			for (uint64_t i = 0; i < nr && 8 + 24 * (i + 1) <= blen; i++)
				sw64(b + 8 + 24 * i);
		}
		return 0;
	case PD_CPU_MAP:
		if (blen >= 2) {
			sw16(b);
			uint16_t t = pd_ld16(b);
			if (t == 0 && blen >= 4) {
				sw16(b + 2);
				uint16_t nr = pd_ld16(b + 2);
				for (size_t i = 0; i < nr && 4 + 2 * (i + 1) <= blen; i++)
					sw16(b + 4 + 2 * i);
			} else if (t == 1 && blen >= 6) {
				sw16(b + 2); sw16(b + 4);       /* nr, long_size; masks left as is */
			} else if (t == 2 && blen >= 8) {
				sw16(b + 4); sw16(b + 6);
			}
		}
		return 0;
	case PD_COMPRESSED2:
		if (blen >= 8) sw64(b);
		return 0;
	case PD_AUXTRACE:
	case PD_HEADER_TRACING_DATA:
		if (type == PD_AUXTRACE) swap_u64s(b, blen >= 24 ? 3 : blen / 8);
		else if (blen >= 4) sw32(b);
		return 0;
	default:
		if (type >= PD_HEADER_ATTR)
			return 0;
		break;
	}
	if (a)
		swap_trailer(a, rec, size);
	return 0;
}

/* ---- a sample's time at a place in the file (split_load's guess) ---------- */

/* A record header a perf.data file may hold at p (host order): a known
 * type and a size that is whole words and ends by end. */
static bool plausible_header(const uint8_t *p, const uint8_t *end, uint16_t *size)
{
	if (end - p < 8)
		return false;
	uint32_t type = pd_ld32(p);
	uint16_t sz = pd_ld16(p + 6);
	if (!((type >= 1 && type <= 21) || (type >= 64 && type <= 84)) || sz < 8 || sz % 8 ||
	    sz > end - p)
		return false;
	*size = sz;
	return true;
}

#define NEAR_CHAIN 32                    /* headers that must follow each other */
#define NEAR_SCAN ((size_t)4 << 20)       /* bytes looked through for them */

bool pd_sample_time_near(pd_reader *r, double fraction, uint64_t *time)
{
	if (!r->map || r->stream || r->swap || r->data_end <= r->data_start || r->data_end > r->map_len ||
	    !(fraction > 0 && fraction < 1))
		return false;
	const uint8_t *lo = r->map + r->data_start, *end = r->map + r->data_end;
	size_t at = (size_t)((double)(r->data_end - r->data_start) * fraction) & ~(size_t)7;
	for (const uint8_t *p = lo + at; p < end && (size_t)(p - lo) < at + NEAR_SCAN; p += 8) {
		/* a place where NEAR_CHAIN headers (or all up to the end) chain */
		const uint8_t *q = p, *sample = NULL;
		int n = 0;
		uint16_t size;
		while (n < NEAR_CHAIN && q < end && plausible_header(q, end, &size)) {
			if (!sample && pd_ld32(q) == PD_SAMPLE)
				sample = q;
			q += size;
			n++;
		}
		if ((n < NEAR_CHAIN && q != end) || !sample)
			continue;
		uint64_t t;
		if (pd_record_time(r, sample, PD_SAMPLE, pd_ld16(sample + 6), &t) < 0 || t == UINT64_MAX)
			return false;
		*time = t;
		return true;
	}
	return false;
}
