/* features.c — perf.data header features (HEADER_HOSTNAME ... PMU_CAPS):
 * validation/decoding of each feature section and printing them the way
 * `perf report --header-only [-I]` does.
 *
 * Each feature has one decoder used twice: with out == NULL while opening
 * (bounds checks, fill pd_header) and with a FILE while printing. Feature
 * payloads are copied into the reader's arena at open time (pipe mode
 * delivers them in HEADER_FEATURE records whose buffers do not last).
 */
#include "pd-int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <time.h>

static const char *const feat_names[] = {
	[0] = "RESERVED", [PD_FEAT_TRACING_DATA] = "TRACING_DATA", [PD_FEAT_BUILD_ID] = "BUILD_ID",
	[PD_FEAT_HOSTNAME] = "HOSTNAME", [PD_FEAT_OSRELEASE] = "OSRELEASE",
	[PD_FEAT_VERSION] = "VERSION", [PD_FEAT_ARCH] = "ARCH", [PD_FEAT_NRCPUS] = "NRCPUS",
	[PD_FEAT_CPUDESC] = "CPUDESC", [PD_FEAT_CPUID] = "CPUID", [PD_FEAT_TOTAL_MEM] = "TOTAL_MEM",
	[PD_FEAT_CMDLINE] = "CMDLINE", [PD_FEAT_EVENT_DESC] = "EVENT_DESC",
	[PD_FEAT_CPU_TOPOLOGY] = "CPU_TOPOLOGY", [PD_FEAT_NUMA_TOPOLOGY] = "NUMA_TOPOLOGY",
	[PD_FEAT_BRANCH_STACK] = "BRANCH_STACK", [PD_FEAT_PMU_MAPPINGS] = "PMU_MAPPINGS",
	[PD_FEAT_GROUP_DESC] = "GROUP_DESC", [PD_FEAT_AUXTRACE] = "AUXTRACE", [PD_FEAT_STAT] = "STAT",
	[PD_FEAT_CACHE] = "CACHE", [PD_FEAT_SAMPLE_TIME] = "SAMPLE_TIME",
	[PD_FEAT_MEM_TOPOLOGY] = "MEM_TOPOLOGY", [PD_FEAT_CLOCKID] = "CLOCKID",
	[PD_FEAT_DIR_FORMAT] = "DIR_FORMAT", [PD_FEAT_BPF_PROG_INFO] = "BPF_PROG_INFO",
	[PD_FEAT_BPF_BTF] = "BPF_BTF", [PD_FEAT_COMPRESSED] = "COMPRESSED",
	[PD_FEAT_CPU_PMU_CAPS] = "CPU_PMU_CAPS", [PD_FEAT_CLOCK_DATA] = "CLOCK_DATA",
	[PD_FEAT_HYBRID_TOPOLOGY] = "HYBRID_TOPOLOGY", [PD_FEAT_PMU_CAPS] = "PMU_CAPS",
};
#define NR_FEAT_NAMES ((int)(sizeof(feat_names) / sizeof(feat_names[0])))

const char *pd_feature_name(int feat)
{
	if (feat >= 0 && feat < NR_FEAT_NAMES && feat_names[feat])
		return feat_names[feat];
	return "UNKNOWN";
}

/* ---- bounded cursor over a feature payload --------------------------------- */

typedef struct cur {
	pd_reader *r;
	const uint8_t *p;
	uint64_t len, pos, off;   /* off: file offset of p[0] */
	int feat;
	int err;
} cur;

static int cerr(cur *c, const char *what)
{
	if (!c->err)
		c->err = pd_fmt_err(c->r, c->off + c->pos, "feature %s truncated or corrupt: %s",
				    pd_feature_name(c->feat), what);
	return c->err;
}

static uint32_t cu32(cur *c)
{
	if (c->err || c->len - c->pos < 4) { cerr(c, "u32 past the end of the section"); return 0; }
	uint32_t v = pd_r32(c->r->swap, c->p + c->pos);
	c->pos += 4;
	return v;
}

static uint64_t cu64(cur *c)
{
	if (c->err || c->len - c->pos < 8) { cerr(c, "u64 past the end of the section"); return 0; }
	uint64_t v = pd_r64(c->r->swap, c->p + c->pos);
	c->pos += 8;
	return v;
}

/* perf_header_string: u32 len (incl. padding), bytes; returns a NUL-terminated
 * pointer into a small static-per-call buffer set */
static const char *cstr(cur *c, char *buf, size_t bufsz)
{
	uint32_t n = cu32(c);
	if (c->err)
		return "";
	if (n > c->len - c->pos) {
		cerr(c, "string length past the end of the section");
		return "";
	}
	const char *s = (const char *)c->p + c->pos;
	size_t k = strnlen(s, n);
	if (k >= bufsz)
		k = bufsz - 1;
	memcpy(buf, s, k);
	buf[k] = '\0';
	c->pos += n;
	return buf;
}

static char *arena_str(pd_reader *r, const char *s) { return pf_arena_strndup(&r->arena, s, strlen(s)); }

/* ---- decoders (out == NULL: parse/validate and fill the header) ----------- */

static int f_string(cur *c, FILE *out, bool full)
{
	char buf[4096];
	const char *s = cstr(c, buf, sizeof(buf));
	if (c->err)
		return c->err;
	pd_header *h = &c->r->hdr;
	static const char *const label[] = {
		[PD_FEAT_HOSTNAME] = "hostname", [PD_FEAT_OSRELEASE] = "os release",
		[PD_FEAT_VERSION] = "perf version", [PD_FEAT_ARCH] = "arch",
		[PD_FEAT_CPUDESC] = "cpudesc", [PD_FEAT_CPUID] = "cpuid",
	};
	if (out) {
		fprintf(out, "# %s : %s\n", label[c->feat], s);
		return 0;
	}
	char *d = arena_str(c->r, s);
	switch (c->feat) {
	case PD_FEAT_HOSTNAME: h->hostname = d; break;
	case PD_FEAT_OSRELEASE: h->osrelease = d; break;
	case PD_FEAT_VERSION: h->version = d; break;
	case PD_FEAT_ARCH: h->arch = d; break;
	case PD_FEAT_CPUDESC: h->cpudesc = d; break;
	case PD_FEAT_CPUID: h->cpuid = d; break;
	}
	(void)full;
	return 0;
}

static int f_nrcpus(cur *c, FILE *out, bool full)
{
	uint32_t avail = cu32(c), online = cu32(c);
	if (c->err)
		return c->err;
	if (out) {
		fprintf(out, "# nrcpus online : %u\n# nrcpus avail : %u\n", online, avail);
	} else {
		c->r->hdr.nr_cpus_avail = avail;
		c->r->hdr.nr_cpus_online = online;
	}
	(void)full;
	return 0;
}

static int f_total_mem(cur *c, FILE *out, bool full)
{
	uint64_t m = cu64(c);
	if (c->err)
		return c->err;
	if (out)
		fprintf(out, "# total memory : %" PRIu64 " kB\n", m);
	else
		c->r->hdr.total_mem = m;
	(void)full;
	return 0;
}

static int f_cmdline(cur *c, FILE *out, bool full)
{
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > (c->len - c->pos) / 4)
		return cerr(c, "cmdline nr larger than the section");
	char buf[4096];
	if (out)
		fprintf(out, "# cmdline : ");
	else {
		free(c->r->hdr.cmdline);        /* a repeated CMDLINE replaces the first */
		c->r->hdr.nr_cmdline = 0;
		c->r->hdr.cmdline = pf_calloc(nr, sizeof(char *));
		if (!c->r->hdr.cmdline)
			return proff_err_set(c->r->err, PROFF_ENOMEM, c->r->name, PROFF_NO_OFFSET, "out of memory");
		c->r->hdr.nr_cmdline = nr;
	}
	for (uint32_t i = 0; i < nr; i++) {
		const char *s = cstr(c, buf, sizeof(buf));
		if (c->err)
			return c->err;
		if (out)
			fprintf(out, "%s ", s);
		else
			c->r->hdr.cmdline[i] = arena_str(c->r, s);
	}
	if (out)
		fputc('\n', out);
	(void)full;
	return 0;
}

/* attr printing as perf_event_attr__fprintf: only non-zero fields */
static void bits_str(char *buf, size_t n, uint64_t v, const char *const *names, int nnames)
{
	size_t k = 0;
	buf[0] = '\0';
	for (int i = 0; i < 64; i++) {
		if (!(v >> i & 1))
			continue;
		const char *nm = i < nnames && names[i] ? names[i] : NULL;
		char tmp[32];
		if (!nm) {
			snprintf(tmp, sizeof(tmp), "0x%llx", 1ull << i);
			nm = tmp;
		}
		k += (size_t)snprintf(buf + k, k < n ? n - k : 0, "%s%s", k ? "|" : "", nm);
		if (k >= n)
			break;
	}
}

static const char *const st_names[] = {
	"IP", "TID", "TIME", "ADDR", "READ", "CALLCHAIN", "ID", "CPU", "PERIOD", "STREAM_ID", "RAW",
	"BRANCH_STACK", "REGS_USER", "STACK_USER", "WEIGHT", "DATA_SRC", "IDENTIFIER", "TRANSACTION",
	"REGS_INTR", "PHYS_ADDR", "AUX", "CGROUP", "DATA_PAGE_SIZE", "CODE_PAGE_SIZE", "WEIGHT_STRUCT",
};
static const char *const rf_names[] = { "TOTAL_TIME_ENABLED", "TOTAL_TIME_RUNNING", "ID", "GROUP", "LOST" };
static const char *const flag_names[] = {
	"disabled", "inherit", "pinned", "exclusive", "exclude_user", "exclude_kernel", "exclude_hv",
	"exclude_idle", "mmap", "comm", "freq", "inherit_stat", "enable_on_exec", "task", "watermark",
	"precise_ip", NULL, "mmap_data", "sample_id_all", "exclude_host", "exclude_guest",
	"exclude_callchain_kernel", "exclude_callchain_user", "mmap2", "comm_exec", "use_clockid",
	"context_switch", "write_backward", "namespaces", "ksymbol", "bpf_event", "aux_output",
	"cgroup", "text_poke", "build_id", "inherit_thread", "remove_on_exec", "sigtrap",
};
static const char *const bst_names[] = {
	"USER", "KERNEL", "HV", "ANY", "ANY_CALL", "ANY_RET", "IND_CALL", "ABORT_TX", "IN_TX",
	"NO_TX", "COND", "CALL_STACK", "IND_JUMP", "CALL", "NO_FLAGS", "NO_CYCLES", "TYPE_SAVE",
	"HW_INDEX", "PRIV_SAVE",
};

/* print the raw attr (host-order fields from pd_attr plus the raw bytes for the rest) */
static void print_attr(FILE *out, const pd_attr *a, const uint8_t *raw, bool sw)
{
	char buf[1024];
	uint8_t b[PD_ATTR_KNOWN_SIZE];
	memset(b, 0, sizeof(b));
	memcpy(b, raw, a->size < sizeof(b) ? a->size : sizeof(b));
	fprintf(out, ", type = %u, size = %u", a->type, a->size);
	if (a->config)
		fprintf(out, ", config = %#" PRIx64, a->config);
	if (a->sample_period)
		fprintf(out, ", { sample_period, sample_freq } = %" PRIu64, a->sample_period);
	if (a->sample_type) {
		bits_str(buf, sizeof(buf), a->sample_type, st_names, 25);
		fprintf(out, ", sample_type = %s", buf);
	}
	if (a->read_format) {
		bits_str(buf, sizeof(buf), a->read_format, rf_names, 5);
		fprintf(out, ", read_format = %s", buf);
	}
	for (int i = 0; i < (int)(sizeof(flag_names) / sizeof(flag_names[0])); i++) {
		if (i == 15) {
			unsigned pi = (unsigned)(a->flags >> 15 & 3);
			if (pi)
				fprintf(out, ", precise_ip = %u", pi);
			continue;
		}
		if (flag_names[i] && (a->flags >> i & 1))
			fprintf(out, ", %s = 1", flag_names[i]);
	}
	if (a->wakeup_events)
		fprintf(out, ", { wakeup_events, wakeup_watermark } = %u", a->wakeup_events);
	uint32_t bp_type = pd_r32(sw, b + 52);
	if (bp_type)
		fprintf(out, ", bp_type = %u", bp_type);
	if (a->config1)
		fprintf(out, ", { bp_addr, config1 } = %#" PRIx64, a->config1);
	if (a->config2)
		fprintf(out, ", { bp_len, config2 } = %#" PRIx64, a->config2);
	if (a->branch_sample_type) {
		bits_str(buf, sizeof(buf), a->branch_sample_type, bst_names, 19);
		fprintf(out, ", branch_sample_type = %s", buf);
	}
	if (a->sample_regs_user)
		fprintf(out, ", sample_regs_user = %#" PRIx64, a->sample_regs_user);
	if (a->sample_stack_user)
		fprintf(out, ", sample_stack_user = %u", a->sample_stack_user);
	int32_t clockid = (int32_t)pd_r32(sw, b + 92);
	if (a->flags >> 25 & 1)
		fprintf(out, ", clockid = %d", clockid);
	if (a->sample_regs_intr)
		fprintf(out, ", sample_regs_intr = %#" PRIx64, a->sample_regs_intr);
	uint32_t aux_wm = pd_r32(sw, b + 104);
	if (aux_wm)
		fprintf(out, ", aux_watermark = %u", aux_wm);
	uint16_t max_stack = pd_r16(sw, b + 108);
	if (max_stack)
		fprintf(out, ", sample_max_stack = %u", max_stack);
	uint32_t aux_ss = pd_r32(sw, b + 112);
	if (aux_ss)
		fprintf(out, ", aux_sample_size = %u", aux_ss);
	uint64_t sig = pd_r64(sw, b + 120);
	if (sig)
		fprintf(out, ", sig_data = %" PRIu64, sig);
}

static int f_event_desc(cur *c, FILE *out, bool full)
{
	pd_reader *r = c->r;
	uint32_t nr = cu32(c), asz = cu32(c);
	if (c->err)
		return c->err;
	if (asz < PD_ATTR_SIZE_VER0 || asz > 4096)
		return cerr(c, "bad attr size");
	char name[1024];
	for (uint32_t i = 0; i < nr; i++) {
		if (c->len - c->pos < asz)
			return cerr(c, "event attr past the end of the section");
		pd_attr a;
		size_t alen;
		int rc = pd_attr_parse(r, r->swap, c->p + c->pos, asz, c->off + c->pos, &a, &alen);
		if (rc < 0)
			return rc;
		const uint8_t *raw = c->p + c->pos;
		c->pos += asz;
		uint32_t nids = cu32(c);
		const char *nm = cstr(c, name, sizeof(name));
		if (c->err)
			return c->err;
		if (nids > (c->len - c->pos) / 8)
			return cerr(c, "event ids past the end of the section");
		if (out) {
			fprintf(out, "# event : name = %s, ", nm);
			if (nids) {
				fprintf(out, ", id = {");
				for (uint32_t k = 0; k < nids; k++)
					fprintf(out, "%s %" PRIu64, k ? "," : "", pd_r64(r->swap, c->p + c->pos + 8 * k));
				fprintf(out, " }");
			}
			print_attr(out, &a, raw, r->swap);
			fputc('\n', out);
		} else if (*nm) {
			/* name the matching attr: by id, else by index */
			size_t idx = i;
			uint64_t v;
			if (nids && pf_map64_get(&r->id2attr, pd_r64(r->swap, c->p + c->pos), &v))
				idx = (size_t)v;
			if (idx < r->nr_attrs)
				r->attrs[idx].name = arena_str(r, nm);
		}
		c->pos += 8 * (uint64_t)nids;
	}
	(void)full;
	return 0;
}

static int f_cpu_topology(cur *c, FILE *out, bool full)
{
	char buf[4096];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 4)
		return cerr(c, "sibling sockets nr too large");
	if (out && !full) {
		fprintf(out, "# CPU_TOPOLOGY info available, use -I to display\n");
		return 0;
	}
	/* collect lines; dies come later in the file but perf prints them after sockets */
	uint64_t sock_pos = c->pos;
	for (uint32_t i = 0; i < nr; i++)
		cstr(c, buf, sizeof(buf));
	uint32_t nt = cu32(c);
	if (c->err)
		return c->err;
	if (nt > c->len / 4)
		return cerr(c, "sibling threads nr too large");
	uint64_t thr_pos = c->pos;
	for (uint32_t i = 0; i < nt; i++)
		cstr(c, buf, sizeof(buf));
	if (c->err)
		return c->err;
	/* optional: per-cpu {core_id, socket_id}, then dies */
	uint32_t ncpu = c->r->hdr.nr_cpus_avail;
	uint64_t core_pos = 0, dies_pos = 0, dieid_pos = 0;
	uint32_t nd = 0;
	if (ncpu && c->len - c->pos >= 8ull * ncpu) {
		core_pos = c->pos;
		c->pos += 8ull * ncpu;
		if (c->len - c->pos >= 4) {
			nd = cu32(c);
			if (nd > c->len / 4)
				return cerr(c, "sibling dies nr too large");
			dies_pos = c->pos;
			for (uint32_t i = 0; i < nd; i++)
				cstr(c, buf, sizeof(buf));
			if (c->err)
				return c->err;
			if (c->len - c->pos >= 4ull * ncpu)
				dieid_pos = c->pos;
		}
	}
	if (!out)
		return 0;
	cur t = *c;
	t.pos = sock_pos;
	for (uint32_t i = 0; i < nr; i++)
		fprintf(out, "# sibling sockets : %s\n", cstr(&t, buf, sizeof(buf)));
	if (dies_pos) {
		t.pos = dies_pos;
		for (uint32_t i = 0; i < nd; i++)
			fprintf(out, "# sibling dies    : %s\n", cstr(&t, buf, sizeof(buf)));
	}
	t.pos = thr_pos;
	for (uint32_t i = 0; i < nt; i++)
		fprintf(out, "# sibling threads : %s\n", cstr(&t, buf, sizeof(buf)));
	if (core_pos) {
		for (uint32_t i = 0; i < ncpu; i++) {
			uint32_t core = pd_r32(c->r->swap, c->p + core_pos + 8 * i);
			uint32_t sock = pd_r32(c->r->swap, c->p + core_pos + 8 * i + 4);
			if (dieid_pos)
				fprintf(out, "# CPU %u: Core ID %d, Die ID %d, Socket ID %d\n", i, (int)core,
					(int)pd_r32(c->r->swap, c->p + dieid_pos + 4 * i), (int)sock);
			else
				fprintf(out, "# CPU %u: Core ID %d, Socket ID %d\n", i, (int)core, (int)sock);
		}
	}
	return 0;
}

static int f_numa(cur *c, FILE *out, bool full)
{
	char buf[4096];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 24)
		return cerr(c, "numa nodes nr too large");
	if (out && !full) {
		fprintf(out, "# NUMA_TOPOLOGY info available, use -I to display\n");
		return 0;
	}
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t node = cu32(c);
		uint64_t total = cu64(c), freem = cu64(c);
		const char *cpus = cstr(c, buf, sizeof(buf));
		if (c->err)
			return c->err;
		if (out) {
			fprintf(out, "# node%u meminfo  : total = %" PRIu64 " kB, free = %" PRIu64 " kB\n",
				node, total, freem);
			fprintf(out, "# node%u cpu list : %s\n", node, cpus);
		}
	}
	return 0;
}

static int f_branch_stack(cur *c, FILE *out, bool full)
{
	if (out)
		fprintf(out, "# contains samples with branch stack\n");
	(void)c; (void)full;
	return 0;
}

static int f_pmu_mappings(cur *c, FILE *out, bool full)
{
	char buf[1024];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 8)
		return cerr(c, "pmu mappings nr too large");
	if (out)
		fprintf(out, "# pmu mappings: ");
	for (uint32_t i = 0; i < nr; i++) {
		uint32_t type = cu32(c);
		const char *nm = cstr(c, buf, sizeof(buf));
		if (c->err)
			return c->err;
		if (out)
			fprintf(out, "%s%s = %u", i ? ", " : "", nm, type);
	}
	if (out) {
		if (!nr)
			fprintf(out, "not available");
		fputc('\n', out);
	}
	(void)full;
	return 0;
}

static int f_group_desc(cur *c, FILE *out, bool full)
{
	char buf[1024];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 12)
		return cerr(c, "group nr too large");
	for (uint32_t i = 0; i < nr; i++) {
		const char *nm = cstr(c, buf, sizeof(buf));
		uint32_t leader = cu32(c), nmemb = cu32(c);
		if (c->err)
			return c->err;
		if (!out)
			continue;
		pd_reader *r = c->r;
		if (!strcmp(nm, "{anon_group}"))       /* perf's name for unnamed groups */
			nm = "";
		fprintf(out, "# group: %s{", nm);
		for (uint32_t k = 0; k < nmemb && leader + k < r->nr_attrs; k++)
			fprintf(out, "%s%s", k ? "," : "", r->attrs[leader + k].name ? r->attrs[leader + k].name : "?");
		fprintf(out, "}\n");
	}
	(void)full;
	return 0;
}

static int f_cache(cur *c, FILE *out, bool full)
{
	char t[64], s[64], m[1024];
	uint32_t ver = cu32(c), cnt = cu32(c);
	if (c->err)
		return c->err;
	if (ver != 1)
		return cerr(c, "unknown cache version");
	if (cnt > c->len / 28)
		return cerr(c, "cache entries nr too large");
	if (out && !full) {
		fprintf(out, "# CACHE info available, use -I to display\n");
		return 0;
	}
	if (out)
		fprintf(out, "# CPU cache info:\n");
	for (uint32_t i = 0; i < cnt; i++) {
		uint32_t level = cu32(c);
		cu32(c); cu32(c); cu32(c);     /* line_size, sets, ways */
		const char *ty = cstr(c, t, sizeof(t));
		const char *sz = cstr(c, s, sizeof(s));
		const char *map = cstr(c, m, sizeof(m));
		if (c->err)
			return c->err;
		if (out)
			fprintf(out, "#  L%d %-15s %8s [%s]\n", level, ty, sz, map);
	}
	return 0;
}

static void fmt_ts(char *buf, size_t n, uint64_t t)
{
	snprintf(buf, n, "%" PRIu64 ".%06" PRIu64, t / UINT64_C(1000000000), t % UINT64_C(1000000000) / 1000);
}

static int f_sample_time(cur *c, FILE *out, bool full)
{
	uint64_t first = cu64(c), last = cu64(c);
	if (c->err)
		return c->err;
	if (out) {
		char b1[64], b2[64];
		fmt_ts(b1, sizeof(b1), first);
		fmt_ts(b2, sizeof(b2), last);
		fprintf(out, "# time of first sample : %s\n# time of last sample : %s\n", b1, b2);
		fprintf(out, "# sample duration : %10.3f ms\n", (double)(last - first) / 1e6);
	} else {
		c->r->hdr.sample_time_first = first;
		c->r->hdr.sample_time_last = last;
	}
	(void)full;
	return 0;
}

static void unit_size(char *buf, size_t n, uint64_t bytes)
{
	static const char units[] = "BKMGTPE";
	int u = 0;
	while (bytes / 1024 > 1 && u < 6) {
		bytes /= 1024;
		u++;
	}
	snprintf(buf, n, "%" PRIu64 "%c", bytes, units[u]);
}

static int f_mem_topology(cur *c, FILE *out, bool full)
{
	uint64_t ver = cu64(c), bsize = cu64(c), nr = cu64(c);
	if (c->err)
		return c->err;
	(void)ver;
	if (nr > c->len / 24)
		return cerr(c, "memory nodes nr too large");
	if (out && !full) {
		fprintf(out, "# MEM_TOPOLOGY info available, use -I to display\n");
		return 0;
	}
	if (out)
		fprintf(out, "# memory nodes (nr %" PRIu64 ", block size 0x%" PRIx64 "):\n", nr, bsize);
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t node = cu64(c), size = cu64(c), bits = cu64(c);
		if (c->err)
			return c->err;
		uint64_t words = (bits + 63) / 64;
		if (bits > (uint64_t)1 << 32 || words > (c->len - c->pos) / 8)
			return cerr(c, "memory node bitmap past the end of the section");
		if (out) {
			char sz[32];
			uint64_t set = 0;
			for (uint64_t k = 0; k < words; k++)
				set += (uint64_t)__builtin_popcountll(pd_r64(c->r->swap, c->p + c->pos + 8 * k) &
					(k == words - 1 && bits % 64 ? (1ull << (bits % 64)) - 1 : ~0ull));
			unit_size(sz, sizeof(sz), set * bsize);
			(void)size;
			fprintf(out, "#  %3" PRIu64 " [%s]: ", node, sz);
			/* ranges of set bits */
			bool first = true;
			uint64_t b = 0;
			while (b < bits) {
				uint64_t w = pd_r64(c->r->swap, c->p + c->pos + 8 * (b / 64));
				if (!(w >> (b % 64) & 1)) {
					b++;
					continue;
				}
				uint64_t s = b;
				while (b < bits && (pd_r64(c->r->swap, c->p + c->pos + 8 * (b / 64)) >> (b % 64) & 1))
					b++;
				if (b - 1 > s)
					fprintf(out, "%s%" PRIu64 "-%" PRIu64, first ? "" : ",", s, b - 1);
				else
					fprintf(out, "%s%" PRIu64, first ? "" : ",", s);
				first = false;
			}
			fputc('\n', out);
		}
		c->pos += 8 * words;
	}
	return 0;
}

static int f_clockid(cur *c, FILE *out, bool full)
{
	uint64_t res = cu64(c);
	if (c->err)
		return c->err;
	if (out)
		fprintf(out, "# clockid frequency: %" PRIu64 " MHz\n", res * 1000);
	else
		c->r->hdr.clockid_res_ns = res;
	(void)full;
	return 0;
}

static int f_dir_format(cur *c, FILE *out, bool full)
{
	uint64_t v = cu64(c);
	if (c->err)
		return c->err;
	if (out)
		fprintf(out, "# directory data version : %" PRIu64 "\n", v);
	(void)full;
	return 0;
}

static int f_compressed(cur *c, FILE *out, bool full)
{
	uint32_t ver = cu32(c), type = cu32(c), level = cu32(c), ratio = cu32(c), mlen = cu32(c);
	if (c->err)
		return c->err;
	if (out) {
		fprintf(out, "# compressed : %s, level = %u, ratio = %u\n", type == 1 ? "Zstd" : "Unknown",
			level, ratio);
	} else {
		pd_header *h = &c->r->hdr;
		h->compressed.version = ver;
		h->compressed.type = type;
		h->compressed.level = level;
		h->compressed.ratio = ratio;
		h->compressed.mmap_len = mlen;
	}
	(void)full;
	return 0;
}

static int f_caps(cur *c, FILE *out, bool full)
{
	char n[256], v[256];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 8)
		return cerr(c, "capabilities nr too large");
	if (out)
		fprintf(out, "# cpu pmu capabilities: ");
	for (uint32_t i = 0; i < nr; i++) {
		const char *nm = cstr(c, n, sizeof(n));
		const char *val = cstr(c, v, sizeof(v));
		if (c->err)
			return c->err;
		if (out)
			fprintf(out, "%s%s=%s", i ? ", " : "", nm, val);
	}
	if (out) {
		if (!nr)
			fprintf(out, "not available");
		fputc('\n', out);
	}
	(void)full;
	return 0;
}

static int f_pmu_caps(cur *c, FILE *out, bool full)
{
	char n[256], v[256], pmu[256];
	uint32_t npmu = cu32(c);
	if (c->err)
		return c->err;
	if (npmu > c->len / 8)
		return cerr(c, "pmu nr too large");
	for (uint32_t i = 0; i < npmu; i++) {
		uint32_t ncaps = cu32(c);
		const char *pn = cstr(c, pmu, sizeof(pmu));
		if (c->err)
			return c->err;
		if (ncaps > c->len / 8)
			return cerr(c, "pmu caps nr too large");
		if (out)
			fprintf(out, "# %s pmu capabilities: ", pn);
		for (uint32_t k = 0; k < ncaps; k++) {
			const char *nm = cstr(c, n, sizeof(n));
			const char *val = cstr(c, v, sizeof(v));
			if (c->err)
				return c->err;
			if (out)
				fprintf(out, "%s%s=%s", k ? ", " : "", nm, val);
		}
		if (out) {
			if (!ncaps)
				fprintf(out, "not available");
			fputc('\n', out);
		}
	}
	(void)full;
	return 0;
}

static int f_clock_data(cur *c, FILE *out, bool full)
{
	uint32_t ver = cu32(c), clockid = cu32(c);
	uint64_t wall = cu64(c), clk = cu64(c);
	if (c->err)
		return c->err;
	(void)ver;
	if (out) {
		static const struct { uint32_t id; const char *name; } clk_names[] = {
			{ 1, "monotonic" }, { 4, "monotonic_raw" }, { 0, "realtime" },
			{ 7, "boottime" }, { 11, "tai" },
		};
		const char *cn = "(not found)";
		for (size_t i = 0; i < sizeof(clk_names) / sizeof(clk_names[0]); i++)
			if (clk_names[i].id == clockid)
				cn = clk_names[i].name;
		time_t sec = (time_t)(wall / UINT64_C(1000000000));
		struct tm tm;
		char date[64] = "";
		if (localtime_r(&sec, &tm))
			strftime(date, sizeof(date), "%F %T", &tm);
		fprintf(out, "# clockid: %s (%u)\n", cn, clockid);
		fprintf(out, "# reference time: %s.%06" PRIu64 " = %" PRIu64 ".%06" PRIu64 " (TOD) = %" PRIu64 ".%09" PRIu64 " (%s)\n",
			date, wall % UINT64_C(1000000000) / 1000, wall / UINT64_C(1000000000),
			wall % UINT64_C(1000000000) / 1000, clk / UINT64_C(1000000000),
			clk % UINT64_C(1000000000), cn);
	}
	(void)full;
	return 0;
}

static int f_hybrid(cur *c, FILE *out, bool full)
{
	char n[256], cpus[1024];
	uint32_t nr = cu32(c);
	if (c->err)
		return c->err;
	if (nr > c->len / 8)
		return cerr(c, "hybrid nodes nr too large");
	if (out)
		fprintf(out, "# hybrid cpu system:\n");
	for (uint32_t i = 0; i < nr; i++) {
		const char *pn = cstr(c, n, sizeof(n));
		const char *cl = cstr(c, cpus, sizeof(cpus));
		if (c->err)
			return c->err;
		if (out)
			fprintf(out, "# %s cpu list : %s\n", pn, cl);
	}
	(void)full;
	return 0;
}

static int f_build_id(cur *c, FILE *out, bool full)
{
	/* sequence of build-id records; not printed by --header-only (perf buildid-list does) */
	if (out)
		return 0;
	while (c->len - c->pos >= 8) {
		const uint8_t *p = c->p + c->pos;
		uint16_t misc = pd_r16(c->r->swap, p + 4), size = pd_r16(c->r->swap, p + 6);
		if (size < 8 || size > c->len - c->pos)
			return cerr(c, "build-id record size");
		int rc = pd_parse_build_id_rec(c->r, p + 8, size, misc, c->off + c->pos);
		if (rc < 0)
			return rc;
		c->pos += size;
	}
	(void)full;
	return 0;
}

static int f_stat(cur *c, FILE *out, bool full)
{
	if (out)
		fprintf(out, "# contains stat data\n");
	(void)c; (void)full;
	return 0;
}

static int f_skip(cur *c, FILE *out, bool full)
{
	(void)c; (void)out; (void)full;
	return 0;
}

typedef int (*feat_fn)(cur *c, FILE *out, bool full);
static const feat_fn feat_fns[] = {
	[PD_FEAT_TRACING_DATA] = f_skip, [PD_FEAT_BUILD_ID] = f_build_id,
	[PD_FEAT_HOSTNAME] = f_string, [PD_FEAT_OSRELEASE] = f_string, [PD_FEAT_VERSION] = f_string,
	[PD_FEAT_ARCH] = f_string, [PD_FEAT_NRCPUS] = f_nrcpus, [PD_FEAT_CPUDESC] = f_string,
	[PD_FEAT_CPUID] = f_string, [PD_FEAT_TOTAL_MEM] = f_total_mem, [PD_FEAT_CMDLINE] = f_cmdline,
	[PD_FEAT_EVENT_DESC] = f_event_desc, [PD_FEAT_CPU_TOPOLOGY] = f_cpu_topology,
	[PD_FEAT_NUMA_TOPOLOGY] = f_numa, [PD_FEAT_BRANCH_STACK] = f_branch_stack,
	[PD_FEAT_PMU_MAPPINGS] = f_pmu_mappings, [PD_FEAT_GROUP_DESC] = f_group_desc,
	[PD_FEAT_AUXTRACE] = f_skip, [PD_FEAT_STAT] = f_stat, [PD_FEAT_CACHE] = f_cache,
	[PD_FEAT_SAMPLE_TIME] = f_sample_time, [PD_FEAT_MEM_TOPOLOGY] = f_mem_topology,
	[PD_FEAT_CLOCKID] = f_clockid, [PD_FEAT_DIR_FORMAT] = f_dir_format,
	[PD_FEAT_BPF_PROG_INFO] = f_skip, [PD_FEAT_BPF_BTF] = f_skip,
	[PD_FEAT_COMPRESSED] = f_compressed, [PD_FEAT_CPU_PMU_CAPS] = f_caps,
	[PD_FEAT_CLOCK_DATA] = f_clock_data, [PD_FEAT_HYBRID_TOPOLOGY] = f_hybrid,
	[PD_FEAT_PMU_CAPS] = f_pmu_caps,
};
#define NR_FEAT_FNS ((int)(sizeof(feat_fns) / sizeof(feat_fns[0])))

int pd_parse_build_id_rec(pd_reader *r, const uint8_t *body, size_t size, uint16_t misc, uint64_t off)
{
	if (size < 8 + 4 + 24)
		return pd_fmt_err(r, off, "build-id record too short (%zu bytes)", size);
	if (r->hdr.nr_build_ids >= (1u << 20))
		return 0;
	pd_build_id *b = pf_realloc_array(r->hdr.build_ids, r->hdr.nr_build_ids + 1, sizeof(*b));
	if (!b)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	r->hdr.build_ids = b;
	b = &b[r->hdr.nr_build_ids++];
	memset(b, 0, sizeof(*b));
	b->pid = (int32_t)pd_r32(r->swap, body);
	b->misc = misc;
	memcpy(b->id, body + 4, 20);
	b->size = 20;
	if (misc & (1u << 15)) {        /* PERF_RECORD_MISC_BUILD_ID_SIZE */
		b->size = body[4 + 20];
		if (b->size > 20)
			b->size = 20;
	}
	size_t flen = size - 8 - 4 - 24;
	const char *fn = (const char *)body + 28;
	b->filename = pf_arena_strndup(&r->arena, fn, strnlen(fn, flen));
	return 0;
}

int pd_parse_feature(pd_reader *r, int feat, const uint8_t *p, uint64_t size, uint64_t off)
{
	if (feat <= 0 || feat >= NR_FEAT_FNS || !feat_fns[feat])
		return 0;       /* unknown: skipped */
	/* keep a copy for printing */
	uint8_t *copy = pf_arena_alloc(&r->arena, size ? size : 1);
	if (!copy)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	memcpy(copy, p, size);
	r->feat_data[feat] = copy;
	r->feat_len[feat] = size;
	r->feat_off[feat] = off;
	cur c = { .r = r, .p = copy, .len = size, .off = off, .feat = feat };
	return feat_fns[feat](&c, NULL, false);
}

size_t pd_groups(pd_reader *r, pd_group *g, size_t max)
{
	if (!pd_has_feature(r, PD_FEAT_GROUP_DESC) || !r->feat_data[PD_FEAT_GROUP_DESC])
		return 0;
	cur c = { .r = r, .p = r->feat_data[PD_FEAT_GROUP_DESC], .len = r->feat_len[PD_FEAT_GROUP_DESC],
		  .off = r->feat_off[PD_FEAT_GROUP_DESC], .feat = PD_FEAT_GROUP_DESC };
	proff_error e;
	proff_error *saved = r->err;
	r->err = &e;       /* checked at open (pd_parse_feature): nothing to report here */
	uint32_t nr = cu32(&c);
	size_t n = 0;
	for (uint32_t i = 0; i < nr && !c.err && n < max; i++) {
		char buf[sizeof(g->name)];
		const char *nm = cstr(&c, buf, sizeof(buf));
		uint32_t leader = cu32(&c), nmemb = cu32(&c);
		if (c.err || nmemb < 2 || leader >= r->nr_attrs || nmemb > r->nr_attrs - leader)
			continue;
		g[n] = (pd_group){ .leader = leader, .nr_members = nmemb };
		snprintf(g[n].name, sizeof(g[n].name), "%s", strcmp(nm, "{anon_group}") ? nm : "");
		n++;
	}
	r->err = saved;
	return n;
}

int pd_print_features(pd_reader *r, FILE *out, bool full)
{
	for (int f = 1; f < NR_FEAT_FNS; f++) {
		if (!pd_has_feature(r, f) || !r->feat_data[f] || !feat_fns[f])
			continue;
		cur c = { .r = r, .p = r->feat_data[f], .len = r->feat_len[f], .off = r->feat_off[f], .feat = f };
		proff_error e;
		proff_error *saved = r->err;
		r->err = &e;
		feat_fns[f](&c, out, full);
		r->err = saved;
	}
	return 0;
}

int pd_print_header(pd_reader *r, FILE *out, bool full)
{
	const pd_header *h = &r->hdr;
	fprintf(out, "# ========\n");
	time_t mt = (time_t)r->mtime;
	char tbuf[64] = "";
	struct tm tm;
	if (localtime_r(&mt, &tm))
		strftime(tbuf, sizeof(tbuf), "%a %b %e %H:%M:%S %Y", &tm);
	fprintf(out, "# captured on    : %s\n", tbuf);
	fprintf(out, "# header version : 1\n");
	fprintf(out, "# data offset    : %" PRIu64 "\n", h->pipe_mode ? 0 : h->data_offset);
	fprintf(out, "# data size      : %" PRIu64 "\n", h->pipe_mode ? 0 : h->data_size);
	fprintf(out, "# feat offset    : %" PRIu64 "\n", h->pipe_mode ? 0 : h->data_offset + h->data_size);
	if (h->pipe_mode) {
		/* perf prints the header end first and the features as they arrive */
		fprintf(out, "# ========\n#\n");
		return pd_print_features(r, out, full);
	}
	pd_print_features(r, out, full);
	fprintf(out, "# missing features: ");
	for (int f = 1; f < NR_FEAT_NAMES; f++)
		if (!pd_has_feature(r, f))
			fprintf(out, "%s ", pd_feature_name(f));
	fprintf(out, "\n# ========\n#\n");
	return 0;
}
