/* reader.c — perf.data reader: opening (mmap or stream), header, attrs and
 * feature table validation, the record loop (file, pipe, zstd-compressed) and
 * perf-style ordered delivery (queue flushed at FINISHED_ROUND up to the
 * previous round's max timestamp).
 *
 * Layout notes: docs/formats/perf-data.md. Record decoding: reader-sample.c.
 */
#include "pd-int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define PD_STREAM_CHUNK ((size_t)1 << 20)

/* ---- errors and warnings ------------------------------------------------ */

int pd_fmt_err(pd_reader *r, uint64_t off, const char *fmt, ...)
{
	proff_error *err = r->err;
	if (!err)
		return PROFF_EFORMAT;
	char msg[480];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return proff_err_set(err, PROFF_EFORMAT, r->name, off, "%s", msg);
}

void pd_warn(pd_reader *r, const char *fmt, ...)
{
	if (r->nr_warnings >= 64)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (PF_GROW(r->warnings, r->cap_warnings, r->nr_warnings + 1) < 0)
		return;
	char *s = pf_strdup(buf);
	if (s)
		r->warnings[r->nr_warnings++] = s;
}

size_t pd_nr_warnings(const pd_reader *r) { return r->nr_warnings; }
const char *pd_warning(const pd_reader *r, size_t i) { return i < r->nr_warnings ? r->warnings[i] : NULL; }

/* ---- names ---------------------------------------------------------------- */

static const char *const rec_names[] = {
	[PD_MMAP] = "MMAP", [PD_LOST] = "LOST", [PD_COMM] = "COMM", [PD_EXIT] = "EXIT",
	[PD_THROTTLE] = "THROTTLE", [PD_UNTHROTTLE] = "UNTHROTTLE", [PD_FORK] = "FORK",
	[PD_READ] = "READ", [PD_SAMPLE] = "SAMPLE", [PD_MMAP2] = "MMAP2", [PD_AUX] = "AUX",
	[PD_ITRACE_START] = "ITRACE_START", [PD_LOST_SAMPLES] = "LOST_SAMPLES",
	[PD_SWITCH] = "SWITCH", [PD_SWITCH_CPU_WIDE] = "SWITCH_CPU_WIDE",
	[PD_NAMESPACES] = "NAMESPACES", [PD_KSYMBOL] = "KSYMBOL", [PD_BPF_EVENT] = "BPF_EVENT",
	[PD_CGROUP] = "CGROUP", [PD_TEXT_POKE] = "TEXT_POKE", [PD_AUX_OUTPUT_HW_ID] = "AUX_OUTPUT_HW_ID",
	[PD_HEADER_ATTR] = "HEADER_ATTR", [PD_HEADER_EVENT_TYPE] = "HEADER_EVENT_TYPE",
	[PD_HEADER_TRACING_DATA] = "HEADER_TRACING_DATA", [PD_HEADER_BUILD_ID] = "HEADER_BUILD_ID",
	[PD_FINISHED_ROUND] = "FINISHED_ROUND", [PD_ID_INDEX] = "ID_INDEX",
	[PD_AUXTRACE_INFO] = "AUXTRACE_INFO", [PD_AUXTRACE] = "AUXTRACE",
	[PD_AUXTRACE_ERROR] = "AUXTRACE_ERROR", [PD_THREAD_MAP] = "THREAD_MAP",
	[PD_CPU_MAP] = "CPU_MAP", [PD_STAT_CONFIG] = "STAT_CONFIG", [PD_STAT] = "STAT",
	[PD_STAT_ROUND] = "STAT_ROUND", [PD_EVENT_UPDATE] = "EVENT_UPDATE",
	[PD_TIME_CONV] = "TIME_CONV", [PD_HEADER_FEATURE] = "HEADER_FEATURE",
	[PD_COMPRESSED] = "COMPRESSED", [PD_FINISHED_INIT] = "FINISHED_INIT",
	[PD_COMPRESSED2] = "COMPRESSED2",
};

const char *pd_record_name(uint32_t type)
{
	if (type < sizeof(rec_names) / sizeof(rec_names[0]) && rec_names[type])
		return rec_names[type];
	return "UNKNOWN";
}

/* ---- attrs ------------------------------------------------------------------ */

/* Reverse the bits of every byte: perf's bitfield fix-up for other-endian attrs. */
void pd_swap_attr_bytes(uint8_t *p, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t b = p[i];
		b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
		b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
		b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
		p[i] = b;
	}
}

/* Parse a perf_event_attr at p (avail bytes readable). *attr_len = its size. */
int pd_attr_parse(pd_reader *r, bool sw, const uint8_t *p, size_t avail, uint64_t off, pd_attr *a,
		  size_t *attr_len)
{
	uint8_t buf[PD_ATTR_KNOWN_SIZE];
	if (avail < 8)
		return pd_fmt_err(r, off, "attr truncated: %zu bytes, need at least 8", avail);
	uint32_t size = pd_r32(sw, p + 4);
	if (size == 0)
		size = PD_ATTR_SIZE_VER0;
	if (size < PD_ATTR_SIZE_VER0 || size % 8)
		return pd_fmt_err(r, off + 4, "bad perf_event_attr size %u (expected 64..%u, multiple of 8)",
				  size, PD_ATTR_KNOWN_SIZE);
	if (size > 4096)
		return pd_fmt_err(r, off + 4, "perf_event_attr size %u too large", size);
	if (size > avail)
		return pd_fmt_err(r, off, "attr truncated: size %u but only %zu bytes available", size, avail);
	memset(buf, 0, sizeof(buf));
	memcpy(buf, p, size < sizeof(buf) ? size : sizeof(buf));
	memset(a, 0, sizeof(*a));
	a->type = pd_r32(sw, buf + 0);
	a->size = size;
	a->config = pd_r64(sw, buf + 8);
	a->sample_period = pd_r64(sw, buf + 16);
	a->sample_type = pd_r64(sw, buf + 24);
	a->read_format = pd_r64(sw, buf + 32);
	if (sw)
		pd_swap_attr_bytes(buf + 40, 8);
	a->flags = pd_ld64(buf + 40);
	a->wakeup_events = pd_r32(sw, buf + 48);
	a->config1 = pd_r64(sw, buf + 56);
	a->config2 = pd_r64(sw, buf + 64);
	a->branch_sample_type = pd_r64(sw, buf + 72);
	a->sample_regs_user = pd_r64(sw, buf + 80);
	a->sample_stack_user = pd_r32(sw, buf + 88);
	a->sample_regs_intr = pd_r64(sw, buf + 96);
	a->inherit = a->flags >> 1 & 1;
	a->exclude_user = a->flags >> 4 & 1;
	a->exclude_kernel = a->flags >> 5 & 1;
	a->freq = a->flags >> 10 & 1;
	a->sample_id_all = a->flags >> 18 & 1;
	a->mmap2 = a->flags >> 23 & 1;
	a->comm_exec = a->flags >> 24 & 1;
	a->id_pos = a->is_pos = -1;
	*attr_len = size;
	return 0;
}

/* positions of ID in samples (from start) and in trailers (from end), as perf */
static void attr_layout(pd_attr *a)
{
	uint64_t st = a->sample_type;
	/* byte offsets of the fields in the kernel's order (8: after the header) */
	int off = 8;
	int16_t ident = -1;
	a->o_ip = a->o_tid = a->o_addr = a->o_id = a->o_stream_id = a->o_cpu = a->o_period = a->o_cc = -1;
	a->o_time = -1;
	if (st & PD_S_IDENTIFIER) { ident = (int16_t)off; off += 8; }
	if (st & PD_S_IP) { a->o_ip = (int16_t)off; off += 8; }
	if (st & PD_S_TID) { a->o_tid = (int16_t)off; off += 8; }
	if (st & PD_S_TIME) { a->o_time = off; off += 8; }
	if (st & PD_S_ADDR) { a->o_addr = (int16_t)off; off += 8; }
	a->o_id = ident;
	if (st & PD_S_ID) { a->o_id = (int16_t)off; off += 8; }
	if (st & PD_S_STREAM_ID) { a->o_stream_id = (int16_t)off; off += 8; }
	if (st & PD_S_CPU) { a->o_cpu = (int16_t)off; off += 8; }
	if (st & PD_S_PERIOD) { a->o_period = (int16_t)off; off += 8; }
	if (st & PD_S_CALLCHAIN) { a->o_cc = (int16_t)off; off += 8; }
	a->fixed_size = (uint16_t)off;
	a->fixed_layout = !(st & ~(uint64_t)(PD_S_IDENTIFIER | PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_ADDR |
					  PD_S_ID | PD_S_STREAM_ID | PD_S_CPU | PD_S_PERIOD | PD_S_CALLCHAIN));
	uint64_t base = st & ~(uint64_t)PD_S_CALLCHAIN;
	a->fixed_kind = base == (PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_PERIOD) ? 1 :
			base == (PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_CPU | PD_S_PERIOD) ? 2 : 0;
	if (st & PD_S_IDENTIFIER) {
		a->id_pos = 0;
		a->is_pos = 1;
		return;
	}
	if (!(st & PD_S_ID)) {
		a->id_pos = a->is_pos = -1;
		return;
	}
	a->id_pos = (a->o_id - 8) / 8;     /* ID's offset, in u64s after the header */
	int idx = 1;
	if (st & PD_S_CPU) idx++;
	if (st & PD_S_STREAM_ID) idx++;
	a->is_pos = idx;
}

int pd_add_attr(pd_reader *r, const pd_attr *a)
{
	if (r->nr_attrs >= 65536)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "too many events (> 65536)");
	if (PF_GROW(r->attrs, r->cap_attrs, r->nr_attrs + 1) < 0)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	r->attrs[r->nr_attrs] = *a;
	attr_layout(&r->attrs[r->nr_attrs]);
	r->nr_attrs++;
	return 0;
}

int pd_attr_add_id(pd_reader *r, size_t idx, uint64_t id)
{
	bool found;
	uint64_t *v = pf_map64_upsert(&r->id2attr, id, &found);
	if (!v)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	if (found && *v == idx)
		return 0;
	*v = idx;
	pd_attr *a = &r->attrs[idx];
	if (a->nr_ids >= (1u << 24))
		return 0;
	uint64_t *ids = pf_realloc_array(a->ids, a->nr_ids + 1, sizeof(*ids));
	if (!ids)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	ids[a->nr_ids++] = id;
	a->ids = ids;
	return 0;
}

/* perf's names for the generic events */
static const char *const hw_names[] = {
	"cycles", "instructions", "cache-references", "cache-misses", "branches",
	"branch-misses", "bus-cycles", "stalled-cycles-frontend", "stalled-cycles-backend",
	"ref-cycles",
};
static const char *const sw_names[] = {
	"cpu-clock", "task-clock", "page-faults", "context-switches", "cpu-migrations",
	"minor-faults", "major-faults", "alignment-faults", "emulation-faults", "dummy",
	"bpf-output", "cgroup-switches",
};

void pd_attr_synth_name(pd_reader *r, pd_attr *a)
{
	char buf[64];
	const char *n = NULL;
	if (a->type == 0 && a->config < sizeof(hw_names) / sizeof(hw_names[0]))
		n = hw_names[a->config];
	else if (a->type == 1 && a->config < sizeof(sw_names) / sizeof(sw_names[0]))
		n = sw_names[a->config];
	if (!n) {
		snprintf(buf, sizeof(buf), "raw 0x%llx:0x%llx", (unsigned long long)a->type,
			 (unsigned long long)a->config);
		n = buf;
	}
	char mod[8] = "";
	size_t k = 0;
	if (a->exclude_kernel && !a->exclude_user)
		mod[k++] = 'u';
	if (a->exclude_user && !a->exclude_kernel)
		mod[k++] = 'k';
	mod[k] = '\0';
	char full[96];
	snprintf(full, sizeof(full), k ? "%s:%s" : "%s", n, mod);
	a->name = pf_arena_strndup(&r->arena, full, strlen(full));
}

/* After all attrs are known: evlist-wide id positions, names. */
int pd_finish_attrs(pd_reader *r, uint64_t off)
{
	if (r->nr_attrs == 0)
		return 0;
	r->id_pos = r->attrs[0].id_pos;
	r->is_pos = r->attrs[0].is_pos;
	for (size_t i = 1; i < r->nr_attrs; i++) {
		if (r->attrs[i].id_pos != r->id_pos || r->attrs[i].is_pos != r->is_pos) {
			if (r->nr_attrs > 1)
				return pd_fmt_err(r, off, "events have incompatible sample_type layouts "
						  "(0x%llx vs 0x%llx): cannot tell samples apart",
						  (unsigned long long)r->attrs[0].sample_type,
						  (unsigned long long)r->attrs[i].sample_type);
		}
	}
	return 0;
}

/* ---- opening ------------------------------------------------------------------ */

static pd_reader *reader_new(const char *name)
{
	pd_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->name = pf_strdup(name ? name : "(memory)");
	r->fd = -1;
	r->id_pos = r->is_pos = -1;
	pf_arena_init(&r->arena);
	pf_map64_init(&r->id2attr);
	pf_map64_init(&r->read_prev);
	return r;
}

static void free_chunks(pd_chunk *c)
{
	while (c) {
		pd_chunk *n = c->next;
		free(c);
		c = n;
	}
}

void pd_close(pd_reader *r)
{
	if (!r)
		return;
	if (r->mapped && r->map)
		munmap((void *)r->map, r->map_len);
	if (r->own_fd && r->fd >= 0)
		close(r->fd);
	for (size_t i = 0; i < r->nr_attrs; i++)
		free(r->attrs[i].ids);
	free(r->attrs);
	for (size_t i = 0; i < r->nr_warnings; i++)
		free(r->warnings[i]);
	free(r->warnings);
	free(r->hdr.build_ids);
	free(r->hdr.cmdline);
	pf_map64_free(&r->id2attr);
	pf_map64_free(&r->read_prev);
	pf_arena_free(&r->arena);
	if (r->zds)
		ZSTD_freeDStream(r->zds);
	free(r->sbuf);
	free(r->dcur);
	free_chunks(r->old_head);
	free(r->q);
	free(r->qtmp);
	free(r->runs);
	free(r->name);
	free(r);
}

const pd_header *pd_get_header(const pd_reader *r) { return &r->hdr; }
size_t pd_nr_attrs(const pd_reader *r) { return r->nr_attrs; }
uint64_t pd_data_size(const pd_reader *r) { return r->stream || !r->map ? 0 : r->data_end - r->data_start; }
const pd_attr *pd_get_attr(const pd_reader *r, size_t idx) { return idx < r->nr_attrs ? &r->attrs[idx] : NULL; }

bool pd_has_feature(const pd_reader *r, int feat)
{
	if (feat < 0 || feat >= PD_FEAT_MAX)
		return false;
	return r->hdr.features[feat / 64] >> (feat % 64) & 1;
}

static const uint64_t MAGIC2 = 0x32454c4946524550ULL;  /* "PERFILE2" little-endian */

static int check_magic(pd_reader *r, const uint8_t *p)
{
	uint64_t m = pd_ld64(p);
	if (m == MAGIC2) {
		r->swap = false;
		return 0;
	}
	if (m == bswap_64(MAGIC2)) {
		r->swap = true;
		return 0;
	}
	if (memcmp(p, "PERFFILE", 8) == 0)
		return pd_fmt_err(r, 0, "old perf.data version 1 (PERFFILE) is not supported");
	return pd_fmt_err(r, 0, "not a perf.data file (bad magic)");
}

static int parse_file_header(pd_reader *r)
{
	const uint8_t *m = r->map;
	size_t len = r->map_len;
	bool sw = r->swap;
	uint64_t hsize = pd_r64(sw, m + 8);
	if (hsize == PD_PIPE_HEADER_SIZE) {
		r->hdr.pipe_mode = true;
		r->data_start = PD_PIPE_HEADER_SIZE;
		r->data_end = len;
		return 0;
	}
	if (hsize != PD_FILE_HEADER_SIZE)
		return pd_fmt_err(r, 8, "bad header size %llu (expected %d or %d)",
				  (unsigned long long)hsize, PD_FILE_HEADER_SIZE, PD_PIPE_HEADER_SIZE);
	if (len < PD_FILE_HEADER_SIZE)
		return pd_fmt_err(r, len, "file truncated in the header: %zu bytes, header needs %d",
				  len, PD_FILE_HEADER_SIZE);
	pd_header *h = &r->hdr;
	h->needs_swap = sw;
	h->attr_size = pd_r64(sw, m + 16);
	uint64_t attrs_off = pd_r64(sw, m + 24), attrs_size = pd_r64(sw, m + 32);
	h->data_offset = pd_r64(sw, m + 40);
	h->data_size = pd_r64(sw, m + 48);
	for (int i = 0; i < 4; i++)
		h->features[i] = pd_r64(sw, m + 72 + 8 * i);

	/* attrs */
	if (attrs_size) {
		if (h->attr_size < PD_ATTR_SIZE_VER0 + 16 || h->attr_size > 4096 + 16)
			return pd_fmt_err(r, 16, "bad attr_size %llu (expected %d..%d)",
					  (unsigned long long)h->attr_size, PD_ATTR_SIZE_VER0 + 16, 4096 + 16);
		if (attrs_off > len || attrs_size > len - attrs_off)
			return pd_fmt_err(r, 24, "attrs section [%llu, +%llu) extends past the end of the file (%zu bytes)",
					  (unsigned long long)attrs_off, (unsigned long long)attrs_size, len);
		if (attrs_size % h->attr_size)
			return pd_fmt_err(r, 32, "attrs section size %llu is not a multiple of attr_size %llu",
					  (unsigned long long)attrs_size, (unsigned long long)h->attr_size);
	}
	uint64_t nattrs = attrs_size ? attrs_size / h->attr_size : 0;
	for (uint64_t i = 0; i < nattrs; i++) {
		uint64_t aoff = attrs_off + i * h->attr_size;
		pd_attr a;
		size_t alen;
		int rc = pd_attr_parse(r, sw, m + aoff, h->attr_size - 16, aoff, &a, &alen);
		if (rc < 0)
			return rc;
		uint64_t ids_off = pd_r64(sw, m + aoff + alen), ids_size = pd_r64(sw, m + aoff + alen + 8);
		if (ids_off > len || ids_size > len - ids_off)
			return pd_fmt_err(r, aoff + alen, "ids section of attr %llu [%llu, +%llu) extends past the end of the file (%zu bytes)",
					  (unsigned long long)i, (unsigned long long)ids_off,
					  (unsigned long long)ids_size, len);
		if (ids_size % 8)
			return pd_fmt_err(r, aoff + alen + 8, "ids section size %llu of attr %llu is not a multiple of 8",
					  (unsigned long long)ids_size, (unsigned long long)i);
		if ((rc = pd_add_attr(r, &a)) < 0)
			return rc;
		for (uint64_t k = 0; k < ids_size / 8; k++)
			if ((rc = pd_attr_add_id(r, r->nr_attrs - 1, pd_r64(sw, m + ids_off + 8 * k))) < 0)
				return rc;
	}
	if (nattrs == 0)
		return pd_fmt_err(r, 24, "no events (attrs section is empty)");

	/* data */
	if (h->data_offset > len)
		return pd_fmt_err(r, 40, "data offset %llu is past the end of the file (%zu bytes)",
				  (unsigned long long)h->data_offset, len);
	if (h->data_size == 0) {
		pd_warn(r, "%s: data size field is 0: the recording was not properly terminated; "
			"reading records up to the end of the file", r->name);
		r->data_start = h->data_offset;
		r->data_end = len;
		r->interrupted = true;
		memset(h->features, 0, sizeof(h->features));
		return 0;
	}
	if (h->data_size > len - h->data_offset)
		return pd_fmt_err(r, 48, "data section [%llu, +%llu) extends past the end of the file (%zu bytes): file truncated?",
				  (unsigned long long)h->data_offset, (unsigned long long)h->data_size, len);
	r->data_start = h->data_offset;
	r->data_end = h->data_offset + h->data_size;

	/* feature table: one perf_file_section per set bit, right after the data */
	uint64_t tab = r->data_end;
	int nf = 0;
	for (int f = 1; f < PD_FEAT_MAX; f++) {
		if (!pd_has_feature(r, f))
			continue;
		uint64_t eoff = tab + 16 * (uint64_t)nf;
		nf++;
		if (eoff + 16 > len)
			return pd_fmt_err(r, eoff, "feature section table truncated (entry for %s)", pd_feature_name(f));
		uint64_t fo = pd_r64(sw, m + eoff), fs = pd_r64(sw, m + eoff + 8);
		if (fo > len || fs > len - fo)
			return pd_fmt_err(r, eoff, "feature %s section [%llu, +%llu) extends past the end of the file (%zu bytes)",
					  pd_feature_name(f), (unsigned long long)fo, (unsigned long long)fs, len);
		r->feat_sec[f].off = fo;
		r->feat_sec[f].size = fs;
	}
	for (int f = 1; f < PD_FEAT_MAX; f++) {
		if (!pd_has_feature(r, f))
			continue;
		int rc = pd_parse_feature(r, f, m + r->feat_sec[f].off, r->feat_sec[f].size, r->feat_sec[f].off);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* ---- the record loop ---------------------------------------------------------- */


static bool is_pipe_header_type(uint32_t t)
{
	return t == PD_HEADER_ATTR || t == PD_HEADER_EVENT_TYPE || t == PD_HEADER_TRACING_DATA ||
	       t == PD_HEADER_BUILD_ID || t == PD_HEADER_FEATURE;
}

/* Apply records that change reader state (attrs, ids, names, features).
 * rec is in host order. */
static int apply_record(pd_reader *r, const uint8_t *rec, uint64_t off)
{
	uint32_t type = pd_ld32(rec);
	uint16_t size = pd_ld16(rec + 6);
	int rc;
	switch (type) {
	case PD_HEADER_ATTR: {
		pd_attr a;
		size_t alen;
		if ((rc = pd_attr_parse(r, false, rec + 8, size - 8u, off + 8, &a, &alen)) < 0)
			return rc;
		/* pd_attr_parse swapped already; the record copy is host-order */
		if ((rc = pd_add_attr(r, &a)) < 0)
			return rc;
		pd_attr_synth_name(r, &r->attrs[r->nr_attrs - 1]);
		for (size_t p = 8 + alen; p + 8 <= size; p += 8)
			if ((rc = pd_attr_add_id(r, r->nr_attrs - 1, pd_ld64(rec + p))) < 0)
				return rc;
		return pd_finish_attrs(r, off);
	}
	case PD_HEADER_FEATURE: {
		if (size < 16)
			return pd_fmt_err(r, off, "HEADER_FEATURE record too short (%u bytes)", size);
		uint64_t feat = pd_ld64(rec + 8);
		if (feat >= PD_FEAT_MAX || feat == 0)
			return 0;       /* HEADER_LAST_FEATURE marker or unknown */
		r->hdr.features[feat / 64] |= 1ull << (feat % 64);
		return pd_parse_feature(r, (int)feat, rec + 16, size - 16u, off + 16);
	}
	case PD_HEADER_BUILD_ID:
		return pd_parse_build_id_rec(r, rec + 8, size, pd_ld16(rec + 4), off);
	case PD_ID_INDEX: {
		if (size < 16)
			return pd_fmt_err(r, off, "ID_INDEX record too short (%u bytes)", size);
		uint64_t nr = pd_ld64(rec + 8);
		if (nr > (size - 16u) / 32)
			return pd_fmt_err(r, off + 8, "ID_INDEX nr %llu does not fit in the record (%u bytes)",
					  (unsigned long long)nr, size);
		/* entries {id, idx, cpu, tid}: idx is the mmap index, not the event;
		 * ids are mapped to events by the attr ids / HEADER_ATTR */
		return 0;
	}
	case PD_EVENT_UPDATE: {
		if (size < 24)
			return pd_fmt_err(r, off, "EVENT_UPDATE record too short (%u bytes)", size);
		uint64_t utype = pd_ld64(rec + 8), id = pd_ld64(rec + 16);
		uint64_t idx;
		if (utype == 3 /* NAME */ && pf_map64_get(&r->id2attr, id, &idx)) {
			size_t n = strnlen((const char *)rec + 24, size - 24u);
			r->attrs[idx].name = pf_arena_strndup(&r->arena, (const char *)rec + 24, n);
		}
		return 0;
	}
	default:
		return 0;
	}
}

/* Other-endian or misaligned record: a host-order aligned copy in scratch. */
static const uint8_t *host_record(pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t off, int *rc)
{
	*rc = 0;
	if (!r->swap && ((uintptr_t)rec & 7) == 0)
		return rec;
	memcpy(r->scratch, rec, size);
	if (r->swap && (*rc = pd_swap_record(r, r->scratch, off)) < 0)
		return NULL;
	return r->scratch;
}

/* ordered queue ------------------------------------------------------------------ */

static void merge_runs(pd_qent *dst, const pd_qent *a, size_t na, const pd_qent *b, size_t nb)
{
	size_t i = 0, j = 0, k = 0;
	while (i < na && j < nb) {
		if (b[j].time < a[i].time)
			dst[k++] = b[j++];
		else
			dst[k++] = a[i++];
	}
	while (i < na)
		dst[k++] = a[i++];
	while (j < nb)
		dst[k++] = b[j++];
}

/* Stable natural merge sort of q[from, n) by time (equal times keep their
 * order). A round of records holds a few ascending runs — each cpu's ring
 * buffer is written in time order, and the part of the queue left from the
 * last flush is sorted — so the runs are found by one scan (runs shorter
 * than MINRUN are extended by insertion, which bounds their number) and
 * merged pairwise: two runs cost one pass, not a pass per doubling. */
#define MINRUN 32
static int sort_queue(pd_reader *r, size_t from, size_t n, size_t sorted)
{
	size_t len = n - from;
	if (len < 2)
		return 0;
	pd_qent *v = r->q + from;
	size_t i = sorted > 1 ? sorted : 1;
	while (i < len && v[i - 1].time <= v[i].time)
		i++;
	if (i == len)
		return 0;
	size_t need_runs = len / MINRUN + 3;    /* the first run may be short */
	/* qtmp is as large as q: the result may end in it, and the two swap */
	if (r->qtmp_cap != r->qcap || r->runs_cap < need_runs) {
		pd_qent *t = r->qtmp_cap != r->qcap ? pf_realloc_array(r->qtmp, r->qcap, sizeof(*t)) : r->qtmp;
		if (t) {
			r->qtmp = t;
			r->qtmp_cap = r->qcap;
		}
		size_t *ru = t && r->runs_cap < need_runs ?
			     pf_realloc_array(r->runs, r->qcap / MINRUN + 3, sizeof(*ru)) : r->runs;
		if (!t || !ru)
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory (ordered queue)");
		if (ru != r->runs) {
			r->runs = ru;
			r->runs_cap = r->qcap / MINRUN + 3;
		}
	}
	/* run boundaries: runs[k] is where run k starts, runs[nr] = len */
	size_t *runs = r->runs, nr = 0;
	runs[nr++] = 0;
	for (size_t s = i; s < len;) {
		runs[nr++] = s;
		size_t e = s + 1;
		while (e < len && v[e - 1].time <= v[e].time)
			e++;
		size_t want = s + MINRUN < len ? s + MINRUN : len;
		for (; e < want; e++) {          /* a short run: insertion up to MINRUN */
			pd_qent t = v[e];
			size_t y = e;
			while (y > s && v[y - 1].time > t.time) {
				v[y] = v[y - 1];
				y--;
			}
			v[y] = t;
		}
		while (e < len && v[e - 1].time <= v[e].time)
			e++;
		s = e;
	}
	runs[nr] = len;
	pd_qent *src = v, *dst = r->qtmp;
	while (nr > 1) {
		size_t w = 0;
		for (size_t k = 0; k < nr; k += 2) {
			size_t s = runs[k], m = runs[k + 1], e = k + 2 <= nr ? runs[k + 2] : len;
			if (k + 1 >= nr)
				memcpy(dst + s, src + s, (len - s) * sizeof(*dst));
			else if (src[m - 1].time <= src[m].time)
				memcpy(dst + s, src + s, (e - s) * sizeof(*dst));
			else
				merge_runs(dst + s, src + s, m - s, src + m, e - m);
			runs[w++] = s;
		}
		nr = w;
		runs[nr] = len;
		pd_qent *t = src;
		src = dst;
		dst = t;
	}
	if (src != v) {
		/* sorted into the other buffer's start: the buffers swap, and
		 * the queue is compacted on the way (the entries before `from`
		 * are delivered ones) */
		pd_qent *t = r->q;
		r->q = r->qtmp;
		r->qtmp = t;
		r->qhead = 0;
		r->qlen = len;
	}
	return 0;
}

static int deliver_now(pd_reader *r, const uint8_t *rec, uint64_t off, bool comp);

static void release_chunks(pd_reader *r, uint64_t min_seq)
{
	while (r->old_head && r->old_head->last_seq < min_seq) {
		pd_chunk *c = r->old_head;
		r->old_head = c->next;
		if (!r->old_head)
			r->old_tail = NULL;
		r->kept_bytes -= c->cap;
		free(c);
	}
}

/* keep a chunk until the records queued from it are delivered */
static void keep_chunk(pd_reader *r, pd_chunk *c)
{
	c->next = NULL;
	if (r->old_tail)
		r->old_tail->next = c;
	else
		r->old_head = c;
	r->old_tail = c;
	r->kept_bytes += c->cap;
}

/* Hand the pages of records already delivered back to the kernel, so a
 * large file does not stay resident while it is read (the mapping is
 * private and read-only: a page touched again is simply read again), a
 * step at a time: each release interrupts the process's other threads to
 * flush their TLBs. A file of stack copies (records of kilobytes) in
 * steps of 8 MiB (a split load of bench/dwarf.sh's profile took 4 % more
 * CPU with steps of 4 MiB, 4 % less with 16 MiB but a peak RSS of 49 MB
 * instead of 31); others, whose records cost more to process than their
 * bytes to map, in steps of 1 MiB. */
#define PD_RELEASE_STEP ((size_t)1 << 20)
#define PD_RELEASE_STEP_STACKS ((size_t)8 << 20)
static void release_mapped(pd_reader *r)
{
	if (!r->mapped || r->stream || !r->cur_rec)
		return;
	/* nothing to release before the read is a step past the last release
	 * (the queued records, scanned below, can only lower the bound) */
	if ((size_t)(r->cur_rec - r->map) < r->released + r->release_step)
		return;
	const uint8_t *lo = r->cur_rec;
	for (size_t i = r->qhead; i < r->qlen; i++) {
		const uint8_t *rec = r->q[i].rec;
		if (rec >= r->map && rec < r->map + r->map_len && rec < lo)
			lo = rec;
	}
	size_t upto = (size_t)(lo - r->map);
	long pg = sysconf(_SC_PAGESIZE);
	if (pg <= 0)
		return;
	upto &= ~((size_t)pg - 1);
	if (upto < r->released + r->release_step)
		return;
	madvise((void *)(r->map + r->released), upto - r->released, MADV_DONTNEED);
	r->released = upto;
}

/* deliver queued records with time <= limit (all when all=true) */
static int flush_queue(pd_reader *r, uint64_t limit, bool all)
{
	/* [qhead, qhead + qsorted) is sorted from the last flush: one of the
	 * runs the sort finds */
	int rc = sort_queue(r, r->qhead, r->qlen, r->qsorted);
	if (rc < 0)
		return rc;
	size_t h = r->qhead, n = r->qlen;     /* the sort may have moved the queue */
	size_t k = h;
	rc = 0;
	while (k < n && (all || r->q[k].time <= limit)) {
		pd_qent *e = &r->q[k++];
		rc = deliver_now(r, e->rec, e->off & ~PD_QOFF_COMP, (e->off & PD_QOFF_COMP) != 0);
		if (rc)
			break;
	}
	r->qhead = k;
	if (r->qhead == r->qlen)
		r->qhead = r->qlen = 0;
	r->qsorted = r->qlen - r->qhead;
	if (rc)
		return rc;
	if (r->old_head) {
		uint64_t min_seq = UINT64_MAX;
		for (size_t i = r->qhead; i < r->qlen; i++)
			if (r->q[i].seq < min_seq)
				min_seq = r->q[i].seq;
		release_chunks(r, min_seq);
	}
	release_mapped(r);
	return 0;
}

static int enqueue(pd_reader *r, const uint8_t *rec, uint64_t off, bool comp, uint64_t t)
{
	if (r->qlen == r->qcap && r->qhead) {
		memmove(r->q, r->q + r->qhead, (r->qlen - r->qhead) * sizeof(*r->q));
		r->qlen -= r->qhead;
		r->qhead = 0;
	}
	if (r->qlen == r->qcap) {
		size_t ncap = r->qcap ? r->qcap * 2 : 4096;
		pd_qent *q = pf_realloc_array(r->q, ncap, sizeof(*q));
		if (!q)
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory (ordered queue)");
		r->q = q;
		r->qcap = ncap;
	}
	pd_qent *e = &r->q[r->qlen++];
	e->time = t;
	e->seq = r->seq++;
	e->rec = rec;
	e->off = off | (comp ? PD_QOFF_COMP : 0);
	if (t > r->max_time)
		r->max_time = t;
	return 0;
}

/* decode + callback */
/* PERF_SAMPLE_READ samples are delivered as perf does: one sample per read
 * value, for the event owning the value's id, with period = the counter's
 * increase since the previous sample of that id. */
static int deliver_read_value(pd_reader *r, pd_event *ev, uint64_t value, uint64_t id)
{
	uint64_t idx;
	if (!pf_map64_get(&r->id2attr, id, &idx)) {
		r->nr_unknown_id++;
		return 0;
	}
	bool found;
	uint64_t *prev = pf_map64_upsert(&r->read_prev, id, &found);
	if (!prev)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	ev->u.sample.id = ev->sid.id = id;
	ev->u.sample.period = value - *prev;
	*prev = value;
	ev->u.sample.evsel = (int)idx;
	return r->cb(r->cb_ctx, ev);
}

static int deliver_read(pd_reader *r, pd_event *ev, uint64_t rf)
{
	const uint64_t *v = ev->u.sample.read_values;
	uint32_t n = ev->u.sample.nr_read_values;
	if (!(rf & 4)) {                /* no ids: the sample's own event */
		return r->cb(r->cb_ctx, ev);
	}
	if (!(rf & 8)) {                /* one value: value [enabled] [running] id [lost] */
		uint32_t idp = 1 + !!(rf & 1) + !!(rf & 2);
		return idp < n ? deliver_read_value(r, ev, v[0], v[idp]) : 0;
	}
	uint32_t hdr = 1 + !!(rf & 1) + !!(rf & 2), per = 2 + !!(rf & 16);
	uint64_t nr = v[0];
	for (uint64_t i = 0; i < nr && hdr + (i + 1) * per <= n; i++) {
		int rc = deliver_read_value(r, ev, v[hdr + i * per], v[hdr + i * per + 1]);
		if (rc)
			return rc;
	}
	return 0;
}

static int deliver_now(pd_reader *r, const uint8_t *rec, uint64_t off, bool comp)
{
	pd_event *ev = &r->ev;
	/* in the mapped file itself (not a swapped copy, not decompressed) */
	bool stable = r->mapped && !r->stream && rec >= r->map && rec < r->map + r->map_len;
	if (pd_decode_again(r, rec, off, comp)) {
		ev->stable = stable;
		return r->cb(r->cb_ctx, ev);    /* no READ values in a fixed layout */
	}
	int rc = pd_decode(r, rec, off, comp, ev);
	if (rc < 0)
		return rc;
	if (rc > 0)
		return 0;       /* skipped (unknown sample id) */
	ev->stable = stable;
	if (ev->type == PD_SAMPLE && !r->raw_samples) {
		const pd_attr *a = &r->attrs[ev->u.sample.evsel];
		if (a->sample_type & PD_S_READ)
			return deliver_read(r, ev, a->read_format);
	}
	return r->cb(r->cb_ctx, ev);
}


/* COMPRESSED: feed the payload into the one persistent zstd stream */
static int decompress_record(pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t off, bool comp2)
{
	const uint8_t *src = rec + 8;
	size_t slen = size - 8u;
	if (comp2) {
		if (size < 16)
			return pd_fmt_err(r, off, "COMPRESSED2 record too short (%u bytes)", size);
		uint64_t dsz = pd_r64(r->swap, rec + 8);
		if (dsz > size - 16u)
			return pd_fmt_err(r, off + 8, "COMPRESSED2 data_size %llu exceeds the record (%u bytes)",
					  (unsigned long long)dsz, size);
		src = rec + 16;
		slen = (size_t)dsz;
	}
	if (!r->zds) {
		r->zds = ZSTD_createDStream();
		if (!r->zds || ZSTD_isError(ZSTD_initDStream(r->zds)))
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, off, "cannot create zstd stream");
	}
	/* the current chunk holds the leftover partial record of the previous
	 * output at its start and nothing queued: append the new output to it */
	size_t left = r->dcur ? r->dcur->len : 0;
	size_t need = left + (slen * 8 > 65536 ? slen * 8 : 65536);
	pd_chunk *c = r->dcur;
	if (!c || c->cap < need) {
		c = realloc(r->dcur, sizeof(*c) + need);
		if (!c)
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, off, "out of memory (decompression)");
		if (!r->dcur) {
			c->len = 0;
			c->last_seq = 0;
		}
		c->next = NULL;
		c->cap = need;
		r->dcur = c;
	}
	uint64_t chunk_start = r->doff - left;
	ZSTD_inBuffer in = { src, slen, 0 };
	for (;;) {
		if (c->len == c->cap) {
			if (c->cap >= PD_MAX_DECOMP)
				return pd_fmt_err(r, off, "COMPRESSED record expands to more than %zu bytes",
						  PD_MAX_DECOMP);
			size_t ncap = c->cap * 2;
			pd_chunk *n = realloc(c, sizeof(*c) + ncap);
			if (!n)
				return proff_err_set(r->err, PROFF_ENOMEM, r->name, off, "out of memory (decompression)");
			c = r->dcur = n;
			c->cap = ncap;
		}
		ZSTD_outBuffer out = { c->data, c->cap, c->len };
		size_t zr = ZSTD_decompressStream(r->zds, &out, &in);
		if (ZSTD_isError(zr))
			return pd_fmt_err(r, off, "corrupt zstd data in COMPRESSED record: %s", ZSTD_getErrorName(zr));
		size_t produced = out.pos - c->len;
		c->len = out.pos;
		r->doff += produced;
		if (in.pos == in.size && out.pos < out.size)
			break;
	}
	r->comp_rec_off = off;
	size_t used = 0;
	int rc = pd_process_records(r, c->data, c->len, chunk_start, true, &used, false);
	if (rc)
		return rc;
	/* keep the chunk alive if records were queued from it; keep the remainder */
	size_t rem = c->len - used;
	if (c->last_seq) {
		pd_chunk *n = malloc(sizeof(*n) + (rem > 64 ? rem : 64));
		if (!n)
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, off, "out of memory (decompression)");
		n->next = NULL;
		n->cap = rem > 64 ? rem : 64;
		n->len = rem;
		n->last_seq = 0;
		memcpy(n->data, c->data + used, rem);
		keep_chunk(r, c);
		r->dcur = n;
	} else {
		memmove(c->data, c->data + used, rem);
		c->len = rem;
	}
	return 0;
}

#define PD_PREFETCH_MIN 1024
#define PD_PREFETCH_HEAD 512
/* The sample peek (pd_set_sample_peek) of a sample of any layout: its
 * time and TID are at fixed offsets whatever follows them. Not one with
 * PERF_SAMPLE_READ: its counter values are the bases of the next ones'
 * periods (read_prev), so it is always delivered. */
static bool peek_drops(pd_reader *r, const uint8_t *rec, uint16_t size, uint64_t t)
{
	int ai = pd_record_attr(r, rec, PD_SAMPLE, size);
	if (ai < 0 || r->attrs[ai].o_tid < 0 || (size_t)r->attrs[ai].o_tid + 8 > size ||
	    (r->attrs[ai].sample_type & PD_S_READ))
		return false;
	const uint8_t *tid = rec + r->attrs[ai].o_tid;
	return r->peek(r->peek_ctx, t, pd_ld32(tid), pd_ld32(tid + 4));
}

/* One record (bytes as in the file/stream). */
static int handle_record(pd_reader *r, const uint8_t *raw, uint16_t size, uint64_t off, bool comp,
			 pd_chunk *owner)
{
	int rc;
	const uint8_t *rec = host_record(r, raw, size, off, &rc);
	if (!rec)
		return rc;
	uint32_t type = pd_ld32(rec);
	if (type == PD_COMPRESSED || type == PD_COMPRESSED2) {
		if (comp)
			return pd_fmt_err(r, off, "COMPRESSED record inside compressed data");
		/* show the record itself (dump), then its contents */
		if ((rc = deliver_now(r, rec, off, comp)) != 0)
			return rc;
		return decompress_record(r, raw, size, off, type == PD_COMPRESSED2);
	}
	if (type >= PD_HEADER_ATTR || !r->ordered) {
		/* user records (and everything when unordered): in file order */
		if (is_pipe_header_type(type)) {
			/* attrs/features/build-ids: applied once (pd_open applies the
			 * leading ones; a later pd_process pass must not repeat them) */
			if (!comp && off >= r->applied_end) {
				if ((rc = apply_record(r, rec, off)) < 0)
					return rc;
				r->applied_end = off + size;
			}
		} else if ((rc = apply_record(r, rec, off)) < 0) {
			return rc;
		}
		if (type == PD_FINISHED_ROUND && r->ordered) {
			if ((rc = flush_queue(r, r->next_flush, false)) != 0)
				return rc;
			r->next_flush = r->max_time;
		}
		return deliver_now(r, rec, off, comp);
	}
	uint64_t t = 0;
	if ((rc = pd_record_time(r, rec, type, size, &t)) < 0)
		return rc;
	if (t == 0 || t == UINT64_MAX)
		return deliver_now(r, rec, off, comp);
	if (type == PD_SAMPLE && r->peek && peek_drops(r, rec, size, t)) {
		/* dropped: the queue's flush point moves as if queued */
		if (t > r->max_time)
			r->max_time = t;
		return 0;
	}
	if (rec == raw && !owner && !comp && size >= PD_PREFETCH_MIN) {
		/* a large record in the mapping (a --call-graph dwarf sample
		 * and its stack copy): the lines its decoding will read — its
		 * first ones (the header, callchain, registers and the
		 * stack's top) and its last (the stack's dynamic size) —
		 * fetched together now, while it waits for its round in the
		 * queue, rather than one miss after another when delivered */
		for (size_t at = 64; at < PD_PREFETCH_HEAD; at += 64)
			__builtin_prefetch(rec + at);
		__builtin_prefetch(rec + size - 8);
	}
	if (rec == r->scratch) {
		/* swapped/misaligned copy: needs storage that outlives this call */
		pd_chunk *c = malloc(sizeof(*c) + size);
		if (!c)
			return proff_err_set(r->err, PROFF_ENOMEM, r->name, off, "out of memory");
		memcpy(c->data, rec, size);
		c->next = NULL;
		c->len = c->cap = size;
		if ((rc = enqueue(r, c->data, off, comp, t)) < 0) {
			free(c);
			return rc;
		}
		c->last_seq = r->seq;
		keep_chunk(r, c);
		return 0;
	}
	if ((rc = enqueue(r, rec, off, comp, t)) < 0)
		return rc;
	if (owner)
		owner->last_seq = r->seq;
	if (r->kept_bytes > PD_MAX_KEPT) {
		/* as perf under memory pressure: deliver what is queued now */
		if (!r->warned_kept)
			pd_warn(r, "%s: more than %zu MiB of decompressed/streamed data waiting for a "
				"FINISHED_ROUND: delivered early, order may be approximate", r->name,
				PD_MAX_KEPT >> 20);
		r->warned_kept = true;
		if ((rc = flush_queue(r, 0, true)) != 0)
			return rc;
	}
	return 0;
}


void pd_set_sample_peek(pd_reader *r, pd_sample_peek_cb cb, void *ctx)
{
	r->peek = cb;
	r->peek_ctx = ctx;
}

/* pd_process_records' inline path applies (the attr), or NULL */
static inline const pd_attr *fast_attr(const pd_reader *r, bool comp)
{
	if (comp || r->stream || r->swap || !r->ordered || r->nr_attrs != 1 || r->old_head)
		return NULL;
	const pd_attr *a = &r->attrs[0];
	return a->fixed_layout && a->o_time >= 0 ? a : NULL;
}

#define PD_AHEAD_RECORDS 8
/* Walk the complete records of buf. *consumed = bytes of whole records used.
 * final: a partial record at the end is an error (file) rather than left over. */
int pd_process_records(pd_reader *r, const uint8_t *buf, size_t len, uint64_t base_off,
			   bool comp, size_t *consumed, bool final)
{
	size_t pos = 0;
	pd_chunk *owner = comp ? r->dcur : (r->stream ? r->sbuf : NULL);
	/* The common record, inline: a sample of the file's one event, in the
	 * file's own buffer (native order, aligned, staying put until
	 * delivered), with its time at the attr's fixed offset — straight into
	 * the ordered queue. Anything else takes the general path below. */
	const pd_attr *fa = fast_attr(r, comp);
	while (len - pos >= 8) {
		const uint8_t *p = buf + pos;
		uint64_t off = base_off + pos;
		if (fa) {
			uint16_t fs = pd_ld16(p + 6);
			if (pd_ld32(p) == PD_SAMPLE && fs >= fa->fixed_size && fs <= len - pos &&
			    ((uintptr_t)p & 7) == 0 && r->qlen < r->qcap) {
				uint64_t t = pd_ld64(p + fa->o_time);
				if (t != 0 && t != UINT64_MAX && r->peek && fa->o_tid >= 0 &&
				    r->peek(r->peek_ctx, t, pd_ld32(p + fa->o_tid), pd_ld32(p + fa->o_tid + 4))) {
					/* dropped: the queue's flush point moves as if queued */
					if (t > r->max_time)
						r->max_time = t;
					pos += fs;
					continue;
				}
				if (t != 0 && t != UINT64_MAX) {
					pd_qent *e = &r->q[r->qlen++];
					e->time = t;
					e->seq = r->seq++;
					e->rec = p;
					e->off = off;
					if (t > r->max_time)
						r->max_time = t;
					if (owner)
						owner->last_seq = r->seq;
					pos += fs;
					continue;
				}
			}
		}
		if (!comp)
			r->cur_rec = p;
		uint16_t size = pd_r16(r->swap, p + 6);
		uint32_t type = pd_r32(r->swap, p);
		if (size < 8) {
			*consumed = pos;
			if (comp)
				return pd_fmt_err(r, r->comp_rec_off, "record of size %u (< 8) at offset %llu of the decompressed data",
						  size, (unsigned long long)off);
			return pd_fmt_err(r, off, "record of size %u (< 8): corrupt data", size);
		}
		if (size > len - pos)
			break;
		/* the header some records on, guessed from this one's size (a
		 * file's samples are mostly of one size): walking a mapping
		 * whose records are dropped after a look (a split's second
		 * half), each header is a cache miss the next one waits for */
		if ((size_t)size * PD_AHEAD_RECORDS < len - pos)
			__builtin_prefetch(p + (size_t)size * PD_AHEAD_RECORDS);
		size_t skip = 0;
		if (type == PD_HEADER_TRACING_DATA || type == PD_AUXTRACE) {
			/* payload follows the record, outside header.size */
			uint64_t extra;
			if (type == PD_HEADER_TRACING_DATA)
				extra = size >= 12 ? ((uint64_t)pd_r32(r->swap, p + 8) + 7) & ~7ull : 0;
			else
				extra = size >= 16 ? pd_r64(r->swap, p + 8) : 0;
			if (extra > len - pos - size) {
				if (final || !r->stream)
					return pd_fmt_err(r, off, "%s payload of %llu bytes extends past the end of the data",
							  pd_record_name(type), (unsigned long long)extra);
				if (extra > ((size_t)256 << 20))
					return pd_fmt_err(r, off, "%s payload of %llu bytes is too large",
							  pd_record_name(type), (unsigned long long)extra);
				break;  /* stream: wait for more */
			}
			skip = (size_t)extra;
		}
		int rc = handle_record(r, p, size, off, comp, owner);
		fa = fast_attr(r, comp);     /* the record may have added attrs (pipe data) */
		if (rc) {
			*consumed = pos;
			if (rc < 0 && comp && r->err && r->err->offset != r->comp_rec_off &&
			    r->err->code == PROFF_EFORMAT && !strstr(r->err->msg, "decompressed")) {
				char m[sizeof(r->err->msg)];
				snprintf(m, sizeof(m), "%.400s (record at offset %llu of the decompressed data)",
					 r->err->msg, (unsigned long long)r->err->offset);
				snprintf(r->err->msg, sizeof(r->err->msg), "%s", m);
				r->err->offset = r->comp_rec_off;
			}
			return rc;
		}
		pos += size + skip;
	}
	*consumed = pos;
	if (final && pos < len && r->interrupted && !comp) {
		pd_warn(r, "%s: the last record (at byte offset %llu) is incomplete: ignored", r->name,
			(unsigned long long)(base_off + pos));
		*consumed = len;
		return 0;
	}
	if (final && pos < len) {
		if (comp)
			return pd_fmt_err(r, r->comp_rec_off, "compressed data ends inside a record");
		uint64_t off = base_off + pos;
		if (len - pos < 8)
			return pd_fmt_err(r, off, "truncated record header (%zu bytes left)", len - pos);
		return pd_fmt_err(r, off, "record of size %u extends past the end of the data (%zu bytes left)",
				  pd_r16(r->swap, buf + pos + 6), len - pos);
	}
	return 0;
}

/* c, with room for cap bytes, made the next chunk: the current chunk's
 * unread tail (rem bytes) first */
static void chunk_begin(const pd_reader *r, pd_chunk *c, size_t cap, size_t rem)
{
	c->next = NULL;
	c->last_seq = 0;
	c->cap = cap;
	c->len = rem;
	if (rem)
		memcpy(c->data, r->sbuf->data + r->spos, rem);
}

/* stream input: read more bytes into a fresh chunk (keeping the partial tail) */
static int stream_fill(pd_reader *r)
{
	size_t rem = r->sbuf ? r->sbuf->len - r->spos : 0;
	size_t cap = PD_STREAM_CHUNK;
	pd_chunk *c = malloc(sizeof(*c) + cap);
	if (!c)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	chunk_begin(r, c, cap, rem);
	if (r->sbuf) {
		r->sbuf_off += r->spos;
		if (r->sbuf->last_seq) {
			keep_chunk(r, r->sbuf);
		} else {
			free(r->sbuf);
		}
	}
	r->sbuf = c;
	r->spos = 0;
	while (c->len < c->cap) {
		ssize_t n = read(r->fd, c->data + c->len, c->cap - c->len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return proff_err_sys(r->err, PROFF_EIO, r->name, "read failed");
		}
		if (n == 0) {
			r->seof = true;
			break;
		}
		c->len += (size_t)n;
		if (c->len - rem >= 65536 + 8)
			break;
	}
	return 0;
}

static int stream_records(pd_reader *r, bool header_only)
{
	for (;;) {
		if (header_only) {
			/* apply leading header records, stop at the first other one */
			while (r->sbuf && r->sbuf->len - r->spos >= 8) {
				const uint8_t *p = r->sbuf->data + r->spos;
				uint16_t size = pd_r16(r->swap, p + 6);
				uint32_t type = pd_r32(r->swap, p);
				if (!is_pipe_header_type(type) || type == PD_HEADER_TRACING_DATA)
					return 0;
				if (size < 8)
					return pd_fmt_err(r, r->sbuf_off + r->spos, "record of size %u (< 8): corrupt data", size);
				if (size > r->sbuf->len - r->spos)
					break;
				int rc;
				const uint8_t *rec = host_record(r, p, size, r->sbuf_off + r->spos, &rc);
				if (!rec)
					return rc;
				if ((rc = apply_record(r, rec, r->sbuf_off + r->spos)) < 0)
					return rc;
				r->spos += size;
				r->applied_end = r->sbuf_off + r->spos;
			}
		} else if (r->sbuf) {
			size_t used = 0;
			int rc = pd_process_records(r, r->sbuf->data + r->spos, r->sbuf->len - r->spos,
						 r->sbuf_off + r->spos, false, &used, r->seof);
			r->spos += used;
			if (rc)
				return rc;
		}
		if (r->seof)
			return 0;
		/* header phase keeps everything in the buffer for pd_process */
		int rc = stream_fill(r);
		if (rc < 0)
			return rc;
	}
}

static int open_common(pd_reader *r, proff_error *err)
{
	r->err = err;
	int rc;
	if (r->stream) {
		/* pipe header (16 bytes) */
		uint8_t h[16];
		size_t got = 0;
		while (got < 16) {
			ssize_t n = read(r->fd, h + got, 16 - got);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0)
				return proff_err_sys(err, PROFF_EIO, r->name, "read failed");
			if (n == 0)
				break;
			got += (size_t)n;
		}
		if (got == 0)
			return pd_fmt_err(r, 0, "empty input: not a perf.data file");
		if (got < 8)
			return pd_fmt_err(r, got, "input truncated in the magic (%zu bytes)", got);
		if ((rc = check_magic(r, h)) < 0)
			return rc;
		if (got < 16)
			return pd_fmt_err(r, got, "input truncated in the header (%zu bytes)", got);
		uint64_t hs = pd_r64(r->swap, h + 8);
		if (hs != PD_PIPE_HEADER_SIZE)
			return pd_fmt_err(r, 8, "input is not a seekable file and not in pipe format (header size %llu); "
					  "use a file", (unsigned long long)hs);
		r->hdr.pipe_mode = true;
		r->hdr.needs_swap = r->swap;
		r->sbuf_off = 16;
		if ((rc = stream_fill(r)) < 0)
			return rc;
		r->sbuf_off = 16;
		if ((rc = stream_records(r, true)) < 0)
			return rc;
		/* pd_process re-walks the buffer from offset 16 when it still holds
		 * it (applied header records are delivered, not re-applied) */
	} else {
		if (r->map_len == 0)
			return pd_fmt_err(r, 0, "empty file: not a perf.data file");
		if (r->map_len < 8)
			return pd_fmt_err(r, r->map_len, "file truncated in the magic (%zu bytes)", r->map_len);
		if ((rc = check_magic(r, r->map)) < 0)
			return rc;
		if (r->map_len < 16)
			return pd_fmt_err(r, r->map_len, "file truncated in the header (%zu bytes)", r->map_len);
		if ((rc = parse_file_header(r)) < 0)
			return rc;
		r->hdr.needs_swap = r->swap;
		if (r->hdr.pipe_mode) {
			/* pipe data saved to a file: apply the leading header records */
			uint64_t pos = r->data_start;
			while (r->data_end - pos >= 8) {
				const uint8_t *p = r->map + pos;
				uint16_t size = pd_r16(r->swap, p + 6);
				uint32_t type = pd_r32(r->swap, p);
				if (!is_pipe_header_type(type) || type == PD_HEADER_TRACING_DATA)
					break;
				if (size < 8)
					return pd_fmt_err(r, pos, "record of size %u (< 8): corrupt data", size);
				if (size > r->data_end - pos)
					return pd_fmt_err(r, pos, "record of size %u extends past the end of the file", size);
				const uint8_t *rec = host_record(r, p, size, pos, &rc);
				if (!rec)
					return rc;
				if ((rc = apply_record(r, rec, pos)) < 0)
					return rc;
				pos += size;
			}
			r->applied_end = pos;
		}
	}
	if (r->hdr.pipe_mode && r->nr_attrs == 0)
		return pd_fmt_err(r, r->applied_end ? r->applied_end : 16, "pipe-mode data has no HEADER_ATTR record before the data");
	if ((rc = pd_finish_attrs(r, 24)) < 0)
		return rc;
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (!r->attrs[i].name)
			pd_attr_synth_name(r, &r->attrs[i]);
	return 0;
}

int pd_open_mem(const void *buf, size_t len, const char *name, pd_reader **out, proff_error *err)
{
	*out = NULL;
	proff_err_clear(err);
	pd_reader *r = reader_new(name);
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	r->map = buf;
	r->map_len = len;
	int rc = open_common(r, err);
	if (rc < 0) {
		pd_close(r);
		return rc;
	}
	r->err = NULL;
	*out = r;
	return 0;
}

int pd_open_fd(int fd, const char *name, pd_reader **out, proff_error *err)
{
	*out = NULL;
	proff_err_clear(err);
	pd_reader *r = reader_new(name);
	if (!r)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	r->fd = fd;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int rc = proff_err_sys(err, PROFF_EIO, name, "cannot stat");
		pd_close(r);
		return rc;
	}
	if (S_ISDIR(st.st_mode)) {
		pd_close(r);
		return proff_err_set(err, PROFF_EIO, name, PROFF_NO_OFFSET,
				     "is a directory (perf --dir/--threads recordings are not supported)");
	}
	r->mtime = st.st_mtime;
	if (S_ISREG(st.st_mode)) {
		if (st.st_size > 0) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED) {
				int rc = proff_err_sys(err, PROFF_EIO, name, "cannot map the file");
				pd_close(r);
				return rc;
			}
			/* the whole file is read: read it ahead (one advice a call: the values are not flags) */
			madvise(m, (size_t)st.st_size, MADV_WILLNEED);
			r->map = m;
			r->mapped = true;
			r->map_len = (size_t)st.st_size;
		}
	} else {
		r->stream = true;
	}
	int rc = open_common(r, err);
	if (rc < 0) {
		r->fd = -1;     /* caller's fd */
		pd_close(r);
		return rc;
	}
	r->err = NULL;
	*out = r;
	return 0;
}

int pd_open(const char *path, pd_reader **out, proff_error *err)
{
	*out = NULL;
	proff_err_clear(err);
	if (strcmp(path, "-") == 0)
		return pd_open_fd(0, "(stdin)", out, err);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int code = errno == ENOENT ? PROFF_ENOENT : errno == EACCES || errno == EPERM ? PROFF_EPERM : PROFF_EIO;
		return proff_err_sys(err, code, path, "cannot open");
	}
	int rc = pd_open_fd(fd, path, out, err);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	(*out)->own_fd = true;
	return 0;
}

/* ---- pd_process ----------------------------------------------------------------- */

int pd_process(pd_reader *r, bool ordered, pd_event_cb cb, void *ctx, proff_error *err)
{
	proff_err_clear(err);
	r->err = err;
	r->cb = cb;
	r->cb_ctx = ctx;
	r->ordered = ordered;
	r->qlen = r->qhead = r->qsorted = 0;
	r->next_flush = r->max_time = 0;
	r->nr_unknown_id = 0;
	pf_map64_free(&r->read_prev);
	pf_map64_init(&r->read_prev);
	r->release_step = PD_RELEASE_STEP;
	for (size_t i = 0; i < r->nr_attrs; i++)
		if (r->attrs[i].sample_type & PD_S_STACK_USER)
			r->release_step = PD_RELEASE_STEP_STACKS;
	int rc;
	if (r->stream) {
		if (r->stream_done) {
			r->err = NULL;
			return proff_err_set(err, PROFF_EUSAGE, r->name, PROFF_NO_OFFSET,
					     "a pipe can be read only once");
		}
		r->stream_done = true;
		/* restart from the beginning of what pd_open buffered */
		if (r->sbuf && r->sbuf_off == 16)
			r->spos = 0;
		rc = stream_records(r, false);
		if (rc == 0 && r->sbuf && r->sbuf->len > r->spos)
			rc = pd_fmt_err(r, r->sbuf_off + r->spos, "input ends inside a record");
	} else {
		if (r->dcur) {          /* second pass over a compressed file: fresh stream */
			free(r->dcur);
			r->dcur = NULL;
		}
		if (r->zds)
			ZSTD_initDStream(r->zds);
		r->doff = 0;
		size_t used;
		rc = pd_process_records(r, r->map + r->data_start, r->data_end - r->data_start, r->data_start,
				     false, &used, true);
	}
	if (rc == 0 && r->dcur && r->dcur->len)
		rc = pd_fmt_err(r, r->comp_rec_off, "compressed data ends inside a record (%zu bytes left)", r->dcur->len);
	if (rc == 0 && r->ordered)
		rc = flush_queue(r, 0, true);
	r->qlen = r->qhead = r->qsorted = 0;
	free_chunks(r->old_head);
	r->old_head = r->old_tail = NULL;
	r->kept_bytes = 0;
	if (r->dcur) {
		free(r->dcur);
		r->dcur = NULL;
	}
	if (r->nr_unknown_id)
		pd_warn(r, "%s: %llu samples with an unknown sample id were skipped", r->name,
			(unsigned long long)r->nr_unknown_id);
	r->err = NULL;
	return rc;
}
