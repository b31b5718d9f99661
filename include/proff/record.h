/* proff/record.h — sampling recorder: perf_event_open + mmap'd ring buffers
 * written to a standard perf.data file (proff record).
 *
 * rec_run() starts (or attaches to) the target, opens one sampling event per
 * (event, CPU, target), maps one ring buffer per CPU, synthesizes the process
 * state that existed before recording (kernel map, COMM/FORK/MMAP2 from /proc),
 * copies the ring buffers to the file until the workload exits or *stop is
 * set, then writes the header features and fills the build-id cache.
 *
 * The library never prints: notices (e.g. "cycles not supported, using
 * cpu-clock") are handed to opts->notice.
 */
#ifndef PROFF_RECORD_H
#define PROFF_RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "proff/error.h"

/* ---- event names ---------------------------------------------------------- */

typedef struct rec_event {
	char name[96];            /* as shown in EVENT_DESC ("cpu-clock", "cycles:u") */
	uint32_t type;            /* PERF_TYPE_* */
	uint64_t config;
	bool exclude_user, exclude_kernel;
	bool hardware;            /* may fall back to cpu-clock */
} rec_event;

/* Parse one event spec ("cpu-clock", "task-clock:u", "cycles", "r01c2").
 * Unknown names give PROFF_EUSAGE with the list of known names. */
int rec_parse_event(const char *spec, rec_event *ev, proff_error *err);
/* Known event names, NULL terminated (for help/errors). */
const char *const *rec_event_names(void);

/* ---- recording ------------------------------------------------------------ */

typedef void (*rec_notice_fn)(void *ctx, const char *msg);

typedef struct rec_opts {
	const char *output;           /* file name (default perf.data) */
	rec_event events[16];
	size_t nr_events;             /* 0: cpu-clock */
	uint64_t freq;                /* -F (0: 4000 unless period) */
	uint64_t period;              /* -c (0: use freq) */
	bool callgraph;               /* -g: frame-pointer callchains */
	uint32_t dwarf_stack;         /* --call-graph dwarf,SIZE: user registers and SIZE bytes of user stack
				       * per sample (a multiple of 8, <= 65528), kernel callchain; 0: none */
	bool lbr;                     /* --call-graph lbr: the CPU's LBR call stack for user frames */
	bool sample_cpu;              /* --sample-cpu */
	bool branch_stack;            /* -b */
	bool system_wide;             /* -a */
	bool no_inherit;              /* -i */
	int compress_level;           /* -z (0 = off) */
	unsigned mmap_pages;          /* data pages per ring buffer, power of 2 (0: 128) */
	const pid_t *pids;            /* -p: processes to attach to */
	size_t nr_pids;
	const pid_t *tids;            /* -t: threads to attach to */
	size_t nr_tids;
	char *const *argv;            /* workload (NULL/empty: none) */
	const char *buildid_dir;      /* NULL: $PROFF_BUILDID_DIR, else $HOME/.debug */
	bool no_buildid_cache;        /* -N */
	bool no_buildid;              /* -B: no BUILD_ID feature either */
	char *const *cmdline;         /* for the CMDLINE feature */
	size_t nr_cmdline;
	volatile sig_atomic_t *stop;  /* set by the caller's signal handler */
	rec_notice_fn notice;
	void *notice_ctx;
} rec_opts;

typedef struct rec_stats {
	uint64_t samples;             /* SAMPLE records written */
	uint64_t lost;                /* samples lost (sum of LOST records) */
	uint64_t lost_records;
	uint64_t lost_samples;        /* kernel lost counts (LOST_SAMPLES records written) */
	uint64_t wakeups;
	uint64_t data_size, raw_size, file_size;
	uint64_t nr_build_ids, nr_cached;
	bool workload_started;
	bool have_status;             /* workload reaped: status is valid */
	int status;                   /* wait(2) status of the workload */
	bool killed_by_us;            /* we sent SIGTERM after *stop */
	int exec_errno;               /* workload could not be run */
	int write_errno;              /* data writing failed (e.g. ENOSPC): file truncated */
} rec_stats;

/* Run a recording. Returns 0 or a negative proff_errcode (err set); stats
 * are filled as far as the run got. A workload that cannot be executed gives
 * PROFF_ENOENT with stats->exec_errno set; the output file is still valid. */
int rec_run(const rec_opts *opts, rec_stats *stats, proff_error *err);

/* ---- helpers (exposed for tests) ---------------------------------------- */

/* Read a GNU build-id from an ELF file or memory image; returns its length
 * (1..20) or a negative code. */
int rec_read_build_id(const char *path, uint8_t id[20], proff_error *err);
int rec_build_id_mem(const void *img, size_t len, uint8_t id[20]);
/* Copy file `src` into the build-id cache `dir` under perf's layout:
 *   dir/<abs path>/<hex>/<base>  and  dir/.build-id/<hh>/<rest> -> ../../<abs path>/<hex>
 * base is "elf", "kallsyms" or "vdso". Existing entries are kept. */
int rec_cache_add(const char *dir, const char *name, const uint8_t *id, size_t id_len,
		  const char *base, const void *data, size_t data_len, const char *src,
		  proff_error *err);
/* /proc/sys/kernel/perf_event_paranoid, or INT32_MIN if unreadable. */
int rec_paranoid(void);

#endif
