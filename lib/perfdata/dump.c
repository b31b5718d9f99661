/* dump.c — `perf report -D` style ASCII dump of every record of a perf.data
 * file, in file order (compressed records followed by their contents):
 *   "<time> 0x<offset> [0x<size>]: PERF_RECORD_<TYPE> <decoded fields>"
 * Records inside COMPRESSED data show their offset in the decompressed
 * stream, marked with a 'z' ("0x40z").
 */
#include "pd-int.h"

#include <inttypes.h>

typedef struct dump_ctx {
	pd_reader *r;
	FILE *out;
} dump_ctx;

static void print_bid(FILE *out, const uint8_t *id, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		fprintf(out, "%02x", id[i]);
}

static void dump_sample(dump_ctx *d, const pd_event *ev)
{
	FILE *out = d->out;
	const pd_sample *s = &ev->u.sample;
	const pd_attr *a = &d->r->attrs[s->evsel];
	fprintf(out, "PERF_RECORD_SAMPLE(IP, 0x%x): %u/%u: %#" PRIx64 " period: %" PRIu64 " addr: %#" PRIx64 "\n",
		ev->misc, s->pid, s->tid, s->ip, s->period, s->addr);
	if (d->r->nr_attrs > 1)
		fprintf(out, "... event: %s (id %" PRIu64 ")\n", a->name ? a->name : "?", s->id);
	if (a->sample_type & PD_S_CALLCHAIN) {
		fprintf(out, "... FP chain: nr:%" PRIu64 "\n", s->nr_callchain);
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			fprintf(out, "..... %2" PRIu64 ": %016" PRIx64 "\n", i, s->callchain[i]);
	}
	if (a->sample_type & PD_S_BRANCH_STACK) {
		fprintf(out, "... branch stack: nr:%" PRIu64 "\n", s->nr_branches);
		if (s->has_hw_idx)
			fprintf(out, "... hw_idx: %" PRIu64 "\n", s->hw_idx);
		for (uint64_t i = 0; i < s->nr_branches; i++) {
			uint64_t f = s->branches[i].flags;
			fprintf(out, "..... %2" PRIu64 ": %016" PRIx64 " -> %016" PRIx64 " %u cycles %s%s%s%s %x\n", i,
				s->branches[i].from, s->branches[i].to, (unsigned)(f >> 4 & 0xffff),
				f & 1 ? "M" : " ", f & 2 ? "P" : " ", f & 4 ? "A" : " ", f & 8 ? "T" : " ",
				(unsigned)(f >> 20 & 0xf));
		}
	}
	if (a->sample_type & PD_S_READ) {
		fprintf(out, "... read values: %u\n", s->nr_read_values);
		for (uint32_t i = 0; i < s->nr_read_values; i++)
			fprintf(out, "..... %2u: %" PRIu64 "\n", i, s->read_values[i]);
	}
	if ((a->sample_type & PD_S_REGS_USER) && s->regs_user_abi) {
		fprintf(out, "... user regs: mask %#" PRIx64 " ABI %s\n", a->sample_regs_user,
			s->regs_user_abi == 2 ? "64-bit" : "32-bit");
		for (uint32_t i = 0; i < s->nr_regs_user; i++)
			fprintf(out, ".... reg%-5u 0x%016" PRIx64 "\n", i, s->regs_user[i]);
	}
	if ((a->sample_type & PD_S_REGS_INTR) && s->regs_intr_abi) {
		fprintf(out, "... intr regs: mask %#" PRIx64 " ABI %s\n", a->sample_regs_intr,
			s->regs_intr_abi == 2 ? "64-bit" : "32-bit");
		for (uint32_t i = 0; i < s->nr_regs_intr; i++)
			fprintf(out, ".... reg%-5u 0x%016" PRIx64 "\n", i, s->regs_intr[i]);
	}
	if (a->sample_type & PD_S_STACK_USER)
		fprintf(out, "... ustack: size %" PRIu64 ", offset 0x%x\n", s->stack_user_size,
			(unsigned)((const uint8_t *)s->stack_user - (const uint8_t *)ev->raw));
	if (a->sample_type & (PD_S_WEIGHT | PD_S_WEIGHT_STRUCT))
		fprintf(out, "... weight: %" PRIu64 "\n", s->weight);
	if (a->sample_type & PD_S_DATA_SRC)
		fprintf(out, " . data_src: 0x%" PRIx64 "\n", s->data_src);
	if (a->sample_type & PD_S_PHYS_ADDR)
		fprintf(out, " .. phys_addr: 0x%" PRIx64 "\n", s->phys_addr);
	if (a->sample_type & PD_S_TRANSACTION)
		fprintf(out, "... transaction: %" PRIx64 "\n", s->transaction);
	if (a->sample_type & PD_S_RAW)
		fprintf(out, "... raw size: %u\n", s->raw_size);
	if (a->sample_type & PD_S_CGROUP)
		fprintf(out, "... cgroup: %" PRIu64 "\n", s->cgroup);
	if (a->sample_type & PD_S_DATA_PAGE_SIZE)
		fprintf(out, " .. data page size: %" PRIu64 "\n", s->data_page_size);
	if (a->sample_type & PD_S_CODE_PAGE_SIZE)
		fprintf(out, " .. code page size: %" PRIu64 "\n", s->code_page_size);
	if (a->sample_type & PD_S_AUX)
		fprintf(out, "... aux size: %" PRIu64 "\n", s->aux_size);
}

static int dump_cb(void *ctx, const pd_event *ev)
{
	dump_ctx *d = ctx;
	FILE *out = d->out;
	const uint8_t *rec = ev->raw;
	fprintf(out, "\n");
	if (ev->sid.has_cpu)
		fprintf(out, "%u ", ev->sid.cpu);
	fprintf(out, "%" PRIu64 " %#" PRIx64 "%s [%#x]: ", ev->sid.time, ev->file_offset,
		ev->from_compressed ? "z" : "", ev->size);
	switch (ev->type) {
	case PD_SAMPLE:
		dump_sample(d, ev);
		return 0;
	case PD_MMAP:
		fprintf(out, "PERF_RECORD_MMAP %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 "]: %c %s\n",
			(int)ev->u.mmap.pid, (int)ev->u.mmap.tid, ev->u.mmap.start, ev->u.mmap.len,
			ev->u.mmap.pgoff, (ev->misc & (1u << 13)) ? 'r' : 'x', ev->u.mmap.filename);
		return 0;
	case PD_MMAP2: {
		const typeof(ev->u.mmap) *m = &ev->u.mmap;
		fprintf(out, "PERF_RECORD_MMAP2 %d/%d: [%#" PRIx64 "(%#" PRIx64 ") @ %#" PRIx64 " ",
			(int)m->pid, (int)m->tid, m->start, m->len, m->pgoff);
		if (m->has_build_id) {
			fprintf(out, "<");
			print_bid(out, m->build_id, m->build_id_size);
			fprintf(out, ">");
		} else {
			fprintf(out, "%02x:%02x %" PRIu64 " %" PRIu64, m->maj, m->min, m->ino, m->ino_generation);
		}
		fprintf(out, "]: %c%c%c%c %s\n", m->prot & 1 ? 'r' : '-', m->prot & 2 ? 'w' : '-',
			m->prot & 4 ? 'x' : '-', m->flags & 1 ? 's' : 'p', m->filename);
		return 0;
	}
	case PD_COMM:
		fprintf(out, "PERF_RECORD_COMM%s: %s:%d/%d\n", ev->u.comm.exec ? " exec" : "",
			ev->u.comm.comm, (int)ev->u.comm.pid, (int)ev->u.comm.tid);
		return 0;
	case PD_FORK:
	case PD_EXIT:
		fprintf(out, "PERF_RECORD_%s(%d:%d):(%d:%d)\n", pd_record_name(ev->type),
			(int)ev->u.fork.pid, (int)ev->u.fork.tid, (int)ev->u.fork.ppid, (int)ev->u.fork.ptid);
		return 0;
	case PD_LOST:
		fprintf(out, "PERF_RECORD_LOST lost: %" PRIu64 " id: %" PRIu64 "\n", ev->u.lost.lost, ev->u.lost.id);
		return 0;
	case PD_LOST_SAMPLES:
		fprintf(out, "PERF_RECORD_LOST_SAMPLES lost: %" PRIu64 "\n", ev->u.lost_samples.lost);
		return 0;
	case PD_THROTTLE:
	case PD_UNTHROTTLE:
		fprintf(out, "PERF_RECORD_%s: time %" PRIu64 " id %" PRIu64 " stream_id %" PRIu64 "\n",
			pd_record_name(ev->type), ev->u.throttle.time, ev->u.throttle.id, ev->u.throttle.stream_id);
		return 0;
	case PD_ID_INDEX: {
		uint64_t nr = pd_ld64(rec + 8);
		fprintf(out, "PERF_RECORD_ID_INDEX nr: %" PRIu64 "\n", nr);
		for (uint64_t i = 0; i < nr && 16 + 32 * (i + 1) <= ev->size; i++)
			fprintf(out, " ... id: %" PRIu64 "  idx: %" PRIu64 "  cpu: %" PRId64 "  tid: %" PRId64 "\n",
				pd_ld64(rec + 16 + 32 * i), pd_ld64(rec + 24 + 32 * i),
				(int64_t)pd_ld64(rec + 32 + 32 * i), (int64_t)pd_ld64(rec + 40 + 32 * i));
		return 0;
	}
	case PD_THREAD_MAP: {
		uint64_t nr = ev->size >= 16 ? pd_ld64(rec + 8) : 0;
		fprintf(out, "PERF_RECORD_THREAD_MAP nr: %" PRIu64, nr);
		for (uint64_t i = 0; i < nr && 16 + 24 * (i + 1) <= ev->size; i++)
			fprintf(out, " thread: %" PRIu64, pd_ld64(rec + 16 + 24 * i));
		fprintf(out, "\n");
		return 0;
	}
	case PD_EVENT_UPDATE:
		if (ev->size >= 24 && pd_ld64(rec + 8) == 3)
			fprintf(out, "PERF_RECORD_EVENT_UPDATE id: %" PRIu64 " name: %.*s\n", pd_ld64(rec + 16),
				(int)strnlen((const char *)rec + 24, ev->size - 24u), (const char *)rec + 24);
		else
			fprintf(out, "PERF_RECORD_EVENT_UPDATE\n");
		return 0;
	case PD_TIME_CONV:
		fprintf(out, "PERF_RECORD_TIME_CONV shift %" PRIu64 " mult %" PRIu64 " zero %" PRIu64 "\n",
			ev->u.time_conv.time_shift, ev->u.time_conv.time_mult, ev->u.time_conv.time_zero);
		return 0;
	case PD_CPU_MAP: {
		/* u16 type: 0 = list {u16 nr, u16 cpu[]}, 2 = range {u8 any, u8 pad, u16 start, u16 end} */
		uint16_t t = ev->size >= 10 ? pd_ld16(rec + 8) : 0xffff;
		fprintf(out, "PERF_RECORD_CPU_MAP");
		if (t == 2 && ev->size >= 16) {
			fprintf(out, ": %u-%u", pd_ld16(rec + 12), pd_ld16(rec + 14));
		} else if (t == 0 && ev->size >= 12) {
			uint16_t nr = pd_ld16(rec + 10);
			fprintf(out, ":");
			for (uint16_t i = 0; i < nr && 12u + 2u * (i + 1u) <= ev->size; i++)
				fprintf(out, "%s%d", i ? "," : " ", (int16_t)pd_ld16(rec + 12 + 2 * i));
		}
		fprintf(out, "\n");
		return 0;
	}
	case PD_HEADER_FEATURE:
		fprintf(out, "PERF_RECORD_HEADER_FEATURE %s\n",
			ev->size >= 16 ? pd_feature_name((int)pd_ld64(rec + 8)) : "?");
		return 0;
	default:
		fprintf(out, "PERF_RECORD_%s", pd_record_name(ev->type));
		if (!strcmp(pd_record_name(ev->type), "UNKNOWN"))
			fprintf(out, " (type %u)", ev->type);
		fprintf(out, "\n");
		return 0;
	}
}

int pd_dump(pd_reader *r, FILE *out, proff_error *err)
{
	dump_ctx d = { r, out };
	r->raw_samples = true;
	int rc = pd_process(r, false, dump_cb, &d, err);
	r->raw_samples = false;
	return rc;
}
