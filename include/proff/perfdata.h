/* proff/perfdata.h — reading perf.data files (file and pipe mode).
 *
 * The reader maps the file, validates the header, attrs and feature sections,
 * and delivers the data records to a callback, decoded into host byte order,
 * optionally in time order (buffered between FINISHED_ROUND records, as perf
 * does). Every size and count read from the file is bounds-checked; errors are
 * returned as a proff_error naming the file and byte offset.
 *
 * See docs/formats/perf-data.md for the layout notes this follows.
 */
#ifndef PROFF_PERFDATA_H
#define PROFF_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/error.h"

/* record types (PERF_RECORD_*) */
enum {
	PD_MMAP = 1, PD_LOST = 2, PD_COMM = 3, PD_EXIT = 4, PD_THROTTLE = 5,
	PD_UNTHROTTLE = 6, PD_FORK = 7, PD_READ = 8, PD_SAMPLE = 9, PD_MMAP2 = 10,
	PD_AUX = 11, PD_ITRACE_START = 12, PD_LOST_SAMPLES = 13, PD_SWITCH = 14,
	PD_SWITCH_CPU_WIDE = 15, PD_NAMESPACES = 16, PD_KSYMBOL = 17, PD_BPF_EVENT = 18,
	PD_CGROUP = 19, PD_TEXT_POKE = 20, PD_AUX_OUTPUT_HW_ID = 21,
	PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE = 65, PD_HEADER_TRACING_DATA = 66,
	PD_HEADER_BUILD_ID = 67, PD_FINISHED_ROUND = 68, PD_ID_INDEX = 69,
	PD_AUXTRACE_INFO = 70, PD_AUXTRACE = 71, PD_AUXTRACE_ERROR = 72,
	PD_THREAD_MAP = 73, PD_CPU_MAP = 74, PD_STAT_CONFIG = 75, PD_STAT = 76,
	PD_STAT_ROUND = 77, PD_EVENT_UPDATE = 78, PD_TIME_CONV = 79,
	PD_HEADER_FEATURE = 80, PD_COMPRESSED = 81, PD_FINISHED_INIT = 82,
	PD_COMPRESSED2 = 83,
};

/* sample_type bits (PERF_SAMPLE_*) */
enum {
	PD_S_IP = 1u << 0, PD_S_TID = 1u << 1, PD_S_TIME = 1u << 2, PD_S_ADDR = 1u << 3,
	PD_S_READ = 1u << 4, PD_S_CALLCHAIN = 1u << 5, PD_S_ID = 1u << 6, PD_S_CPU = 1u << 7,
	PD_S_PERIOD = 1u << 8, PD_S_STREAM_ID = 1u << 9, PD_S_RAW = 1u << 10,
	PD_S_BRANCH_STACK = 1u << 11, PD_S_REGS_USER = 1u << 12, PD_S_STACK_USER = 1u << 13,
	PD_S_WEIGHT = 1u << 14, PD_S_DATA_SRC = 1u << 15, PD_S_IDENTIFIER = 1u << 16,
	PD_S_TRANSACTION = 1u << 17, PD_S_REGS_INTR = 1u << 18, PD_S_PHYS_ADDR = 1u << 19,
	PD_S_AUX = 1u << 20, PD_S_CGROUP = 1u << 21, PD_S_DATA_PAGE_SIZE = 1u << 22,
	PD_S_CODE_PAGE_SIZE = 1u << 23, PD_S_WEIGHT_STRUCT = 1u << 24,
};

/* header.misc cpumode values */
enum {
	PD_CPUMODE_MASK = 7, PD_CPUMODE_UNKNOWN = 0, PD_CPUMODE_KERNEL = 1,
	PD_CPUMODE_USER = 2, PD_CPUMODE_HYPERVISOR = 3, PD_CPUMODE_GUEST_KERNEL = 4,
	PD_CPUMODE_GUEST_USER = 5,
};
#define PD_MISC_COMM_EXEC      (1u << 13)
#define PD_MISC_MMAP_DATA      (1u << 13)   /* an MMAP record of a data (not executable) mapping */
#define PD_MISC_FORK_EXEC      (1u << 13)   /* a FORK that perf record synthesized for a running process */
#define PD_MISC_MMAP_BUILD_ID  (1u << 14)
#define PD_MISC_EXACT_IP       (1u << 14)

/* callchain context markers */
#define PD_CONTEXT_HV            ((uint64_t)-32)
#define PD_CONTEXT_KERNEL        ((uint64_t)-128)
#define PD_CONTEXT_USER          ((uint64_t)-512)
#define PD_CONTEXT_GUEST         ((uint64_t)-2048)
#define PD_CONTEXT_GUEST_KERNEL  ((uint64_t)-2176)
#define PD_CONTEXT_GUEST_USER    ((uint64_t)-2560)
#define PD_CONTEXT_MAX           ((uint64_t)-4095)

/* feature bits (HEADER_*) */
enum {
	PD_FEAT_TRACING_DATA = 1, PD_FEAT_BUILD_ID = 2, PD_FEAT_HOSTNAME = 3,
	PD_FEAT_OSRELEASE = 4, PD_FEAT_VERSION = 5, PD_FEAT_ARCH = 6, PD_FEAT_NRCPUS = 7,
	PD_FEAT_CPUDESC = 8, PD_FEAT_CPUID = 9, PD_FEAT_TOTAL_MEM = 10, PD_FEAT_CMDLINE = 11,
	PD_FEAT_EVENT_DESC = 12, PD_FEAT_CPU_TOPOLOGY = 13, PD_FEAT_NUMA_TOPOLOGY = 14,
	PD_FEAT_BRANCH_STACK = 15, PD_FEAT_PMU_MAPPINGS = 16, PD_FEAT_GROUP_DESC = 17,
	PD_FEAT_AUXTRACE = 18, PD_FEAT_STAT = 19, PD_FEAT_CACHE = 20, PD_FEAT_SAMPLE_TIME = 21,
	PD_FEAT_MEM_TOPOLOGY = 22, PD_FEAT_CLOCKID = 23, PD_FEAT_DIR_FORMAT = 24,
	PD_FEAT_BPF_PROG_INFO = 25, PD_FEAT_BPF_BTF = 26, PD_FEAT_COMPRESSED = 27,
	PD_FEAT_CPU_PMU_CAPS = 28, PD_FEAT_CLOCK_DATA = 29, PD_FEAT_HYBRID_TOPOLOGY = 30,
	PD_FEAT_PMU_CAPS = 31, PD_FEAT_MAX = 256,
};

/* One event (evsel): the perf_event_attr fields proff uses, plus ids/name. */
typedef struct pd_attr {
	uint32_t type;
	uint32_t size;              /* attr.size as recorded */
	uint64_t config;
	uint64_t sample_period;     /* or sample_freq when freq */
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags;             /* the bitfield word (disabled, inherit, ... ) */
	bool freq, sample_id_all, exclude_kernel, exclude_user, inherit, mmap2, comm_exec;
	uint64_t branch_sample_type;
	uint64_t sample_regs_user;
	uint32_t sample_stack_user;
	uint64_t sample_regs_intr;
	uint32_t wakeup_events;
	uint64_t config1, config2;
	uint64_t *ids;              /* sample ids of this event */
	size_t nr_ids;
	char *name;                 /* from EVENT_DESC / EVENT_UPDATE, else synthesized ("cpu-clock") */
	/* derived layout */
	int id_pos;                 /* index (in u64s) of ID in a sample, -1 if none */
	int is_pos;                 /* index from the end of the sample_id trailer, -1 if none */
	int o_time;                 /* byte offset of TIME in a sample, -1 if none */
	/* Samples with fixed 8-byte fields and a callchain only (perf record's
	 * default kinds): each field's byte offset (-1: absent) and the bytes
	 * up to the callchain's nr, for a decoder without a test per kind. */
	bool fixed_layout;
	int16_t o_ip, o_tid, o_addr, o_id, o_stream_id, o_cpu, o_period, o_cc;
	uint16_t fixed_size;
	/* IP|TID|TIME|PERIOD (1) or IP|TID|TIME|CPU|PERIOD (2), either with or
	 * without CALLCHAIN — perf record's defaults, without and with -a —
	 * decoded by constant offsets; 0: any other layout */
	uint8_t fixed_kind;
} pd_attr;

/* A decoded sample. Pointers point into reader-owned memory valid during the
 * callback only (already byte-swapped for other-endian files). */
typedef struct pd_branch_entry {
	uint64_t from, to;
	uint64_t flags;             /* raw flags word: mispred:1 predicted:1 in_tx:1 abort:1 cycles:16 type:4 ... */
} pd_branch_entry;

typedef struct pd_sample {
	int evsel;                  /* index into attrs */
	uint16_t misc;
	uint8_t cpumode;
	uint64_t ip;
	uint32_t pid, tid;
	uint64_t time;
	uint64_t addr;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint64_t period;
	/* READ: raw u64s */
	const uint64_t *read_values; uint32_t nr_read_values;
	const uint64_t *callchain; uint64_t nr_callchain;
	const void *raw; uint32_t raw_size;
	const pd_branch_entry *branches; uint64_t nr_branches;
	bool has_hw_idx; uint64_t hw_idx;
	const uint64_t *branch_counters;   /* NULL unless present */
	uint64_t regs_user_abi; const uint64_t *regs_user; uint32_t nr_regs_user;
	uint64_t stack_user_size; const void *stack_user; uint64_t stack_user_dyn_size;
	uint64_t weight;            /* WEIGHT or WEIGHT_STRUCT var1 */
	uint16_t weight_var2, weight_var3;
	uint64_t data_src;
	uint64_t transaction;
	uint64_t regs_intr_abi; const uint64_t *regs_intr; uint32_t nr_regs_intr;
	uint64_t phys_addr;
	uint64_t cgroup;
	uint64_t data_page_size, code_page_size;
	uint64_t aux_size; const void *aux;
} pd_sample;

/* sample_id_all trailer of non-sample records; has_* tell what was present. */
typedef struct pd_sample_id {
	bool has_tid, has_time, has_id, has_stream_id, has_cpu;
	uint32_t pid, tid;
	uint64_t time, id, stream_id;
	uint32_t cpu;
} pd_sample_id;

typedef struct pd_event {
	uint32_t type;
	uint16_t misc;
	uint16_t size;
	uint64_t file_offset;       /* offset of the record in the file (or in the decompressed stream, see from_compressed) */
	bool from_compressed;
	const void *raw;            /* the record bytes; other-endian records are swapped field by
				     * field into a scratch copy first, so raw is host order except
				     * byte payloads (RAW, strings) */
	bool stable;                /* raw (and what points into it: callchain, branch stack) stays
				     * valid until pd_close: read in place from the mapped file;
				     * otherwise only during the callback */
	pd_sample_id sid;
	union {
		pd_sample sample;
		struct { uint32_t pid, tid; uint64_t start, len, pgoff;
			 uint32_t maj, min; uint64_t ino, ino_generation;
			 uint32_t prot, flags;
			 bool has_build_id; uint8_t build_id_size; uint8_t build_id[20];
			 const char *filename; } mmap;          /* MMAP and MMAP2 */
		struct { uint32_t pid, tid; const char *comm; bool exec; } comm;
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } fork;   /* FORK and EXIT */
		struct { uint64_t id, lost; } lost;
		struct { uint64_t lost; } lost_samples;
		struct { uint64_t time, id, stream_id; } throttle;  /* THROTTLE/UNTHROTTLE */
		struct { uint64_t time_shift, time_mult, time_zero; } time_conv;
	} u;
} pd_event;

/* Header feature data (all optional; has_feature tells which were present). */
typedef struct pd_build_id {
	int32_t pid;
	uint16_t misc;              /* cpumode of the DSO */
	uint8_t size;               /* 20 for SHA1 */
	uint8_t id[20];
	char *filename;
} pd_build_id;

typedef struct pd_header {
	bool needs_swap;
	bool pipe_mode;
	uint64_t attr_size;
	uint64_t data_offset, data_size;
	uint64_t features[4];
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t total_mem;         /* kB */
	char **cmdline; uint32_t nr_cmdline;
	pd_build_id *build_ids; size_t nr_build_ids;
	uint64_t sample_time_first, sample_time_last;
	uint64_t clockid_res_ns;
	struct { uint32_t version, type, level, ratio, mmap_len; } compressed;
	/* CPU_TOPOLOGY / NUMA / PMU_MAPPINGS / GROUP_DESC / CACHE / MEM_TOPOLOGY ...
	 * are kept as validated payloads and decoded by pd_print_header. */
} pd_header;

typedef struct pd_reader pd_reader;

/* Open a file ("-" = stdin, read as pipe-mode stream). */
int pd_open(const char *path, pd_reader **out, proff_error *err);
/* fd: regular files are mapped, anything else is streamed (pipe format).
 * The fd stays owned by the caller (closed by the caller after pd_close). */
int pd_open_fd(int fd, const char *name, pd_reader **out, proff_error *err);
/* In-memory image (file or pipe format); buf must outlive the reader. */
int pd_open_mem(const void *buf, size_t len, const char *name, pd_reader **out, proff_error *err);
void pd_close(pd_reader *r);

const pd_header *pd_get_header(const pd_reader *r);
size_t pd_nr_attrs(const pd_reader *r);
/* bytes of the data section of a file (0 for a pipe) */
uint64_t pd_data_size(const pd_reader *r);
const pd_attr *pd_get_attr(const pd_reader *r, size_t idx);
/* The time of a sample about fraction (0..1) of the way through a file's
 * data section: the first sample of the first run of records found there
 * whose headers follow each other. A guess (records are not in time order,
 * and stack bytes can look like headers), for choosing where to split a
 * read; false when none is found (a pipe, a compressed or other-endian
 * file, samples without time). */
bool pd_sample_time_near(pd_reader *r, double fraction, uint64_t *time);
bool pd_has_feature(const pd_reader *r, int feat);
/* An event group of the file (HEADER_GROUP_DESC: perf record -e
 * '{a,b}'): its attrs leader .. leader + nr_members - 1, its name ("" for
 * an unnamed one) */
typedef struct pd_group {
	uint32_t leader, nr_members;
	char name[64];
} pd_group;
/* The file's groups of two events or more, at most max into g; their count */
size_t pd_groups(pd_reader *r, pd_group *g, size_t max);
/* Warnings collected while reading (e.g. "data size 0: recording was interrupted"). */
size_t pd_nr_warnings(const pd_reader *r);
const char *pd_warning(const pd_reader *r, size_t i);

/* Callback: return 0 to continue, non-zero to stop (that value is returned
 * from pd_process, with err untouched). */
typedef int (*pd_event_cb)(void *ctx, const pd_event *ev);

/* A look at a sample before pd_process queues it (ordered mode), in file
 * order: returning true drops it, undelivered. Every sample with a time
 * and a TID is shown (those are at fixed offsets in any layout), but for
 * one with PERF_SAMPLE_READ (its counter values are the base of the next
 * sample's period); the others are always queued. For a reader that wants a file's
 * side-band records from its start but its samples only from a point on
 * (lib/model's second half): before that point a sample matters only
 * through the thread it names. */
typedef bool (*pd_sample_peek_cb)(void *ctx, uint64_t time, uint32_t pid, uint32_t tid);
void pd_set_sample_peek(pd_reader *r, pd_sample_peek_cb cb, void *ctx);

/* Deliver every data record. ordered=true: samples and side-band records in
 * time order (records without a time keep file order relative to each other,
 * as perf's ordered_events queue does). Samples with PERF_SAMPLE_READ and ids
 * in read_format are delivered once per read value, as perf does (evsel = the
 * value's event, period = counter increase since that id's previous sample).
 * A pipe/stdin reader can be processed once. Returns 0, a PROFF_E* code (err
 * set), or the callback's non-zero value. */
int pd_process(pd_reader *r, bool ordered, pd_event_cb cb, void *ctx, proff_error *err);

/* perf report --stats: the records of each type (nr_events[0]: all of
 * them; types from PD_STATS_TYPES on in nr_other), and per event (attr)
 * its samples and lost samples (lib/perfdata/stats.c). */
#define PD_STATS_TYPES 96
typedef struct pd_record_stats {
	uint64_t nr_events[PD_STATS_TYPES];
	uint64_t nr_other;
	size_t nr_evsels;
	uint64_t *nr_samples, *nr_lost_samples;
} pd_record_stats;
/* Read every record of r (once: a pipe reader is then spent). */
int pd_record_stats_read(pd_reader *r, pd_record_stats *st, proff_error *err);
void pd_record_stats_free(pd_record_stats *st);

/* Human-readable name of a record type ("MMAP2", "SAMPLE", ...). */
const char *pd_record_name(uint32_t type);
const char *pd_feature_name(int feat);

/* perf report -D style dump of every record; --header printing. Output goes to
 * a caller-provided FILE (the library never chooses stdout itself). */
#include <stdio.h>
int pd_dump(pd_reader *r, FILE *out, proff_error *err);
int pd_print_header(pd_reader *r, FILE *out, bool full);
/* perf report --stats, as perf 6.1 prints it: "Aggregated stats:", then per event */
void pd_record_stats_print(const pd_reader *r, const pd_record_stats *st, FILE *out);

#endif
