/* rec-int.h — internals shared by the recorder's files (lib/record/):
 * the recording state, the record scanner (counts samples and lost records,
 * tracks maps per process to know which DSOs samples hit), synthesized
 * records and header features. */
#ifndef PROFF_REC_INT_H
#define PROFF_REC_INT_H

#include "proff/perfdata-writer.h"
#include "proff/record.h"
#include "proff/util.h"

#include <stdbool.h>
#include <stdint.h>

struct rec_map {
	uint64_t start, end;
	uint32_t dso;
};

struct rec_proc {
	uint32_t pid;
	struct rec_map *maps;
	size_t n, cap;
	size_t last;               /* index of the last map hit (lookup cache) */
};

struct rec_dso {
	const char *name;          /* interned */
	bool hit;
	bool module;               /* a kernel module's map (pid -1) */
	uint8_t bid_size;          /* a module's build id from the kernel's note */
	uint8_t bid[20];
};

/* A loaded kernel module (modules.c). */
typedef struct rec_module {
	char *filename;            /* its .ko under /lib/modules/RELEASE, else "[name]" */
	uint64_t start, size;
	uint8_t bid[20];
	uint8_t bid_size;          /* 0: the kernel gave none */
} rec_module;

/* The kernel-module maps' pseudo-process in the scanner's map table. */
#define REC_KERNEL_PID UINT32_MAX

typedef struct rec_state {
	const rec_opts *o;
	rec_stats *st;
	pdw_writer *w;
	uint64_t sample_type;
	size_t id_hdr_size;        /* bytes of the sample_id_all trailer */
	/* DSOs and per-process maps (for build-ids of hit DSOs) */
	pf_strtab names;
	struct rec_dso *dsos;
	size_t nr_dsos, cap_dsos;
	uint32_t kernel_dso;
	pf_map64 pid_index;        /* pid -> index + 1 into procs */
	struct rec_proc *procs;
	size_t nr_procs, cap_procs;
	size_t kmods_at;           /* index + 1 in procs of the modules' maps (REC_KERNEL_PID), 0: none */
	uint64_t first_time, last_time;
} rec_state;

/* scan.c */
int rec_state_init(rec_state *s);
void rec_state_free(rec_state *s);
uint32_t rec_dso_intern(rec_state *s, const char *name);
/* Look at one record (stats, maps, hits). size is the record size. */
void rec_scan(rec_state *s, const uint8_t *rec, size_t size);
/* Scan then write records (synthesized ones). */
int rec_emit(rec_state *s, const void *rec, size_t size, proff_error *err);

/* buildid.c: build-id from a raw note area (/sys/kernel/notes) */
int rec_build_id_notes(const void *buf, size_t len, uint8_t id[20]);

/* modules.c: the modules of root/proc/modules ("" for this host), named
 * by their files under root/lib/modules/RELEASE as perf record names them;
 * none when root has no /proc/modules. 0 or PROFF_ENOMEM. */
int rec_modules_read(const char *root, rec_module **out, size_t *n);
void rec_modules_free(rec_module *m, size_t n);

/* synth.c */
/* a small file (/proc, /sys) into buf, NUL-terminated: its length, or -1 */
int rec_read_small(const char *path, char *buf, size_t len);
int rec_synth_kernel(rec_state *s, proff_error *err);
int rec_synth_comm(rec_state *s, uint32_t pid, uint32_t tid, const char *comm, proff_error *err);
/* FORK + COMM of every thread of pid, and its executable maps. Processes
 * that vanished meanwhile are skipped silently. */
int rec_synth_process(rec_state *s, uint32_t pid, proff_error *err);
int rec_synth_all(rec_state *s, proff_error *err);
int rec_set_features(rec_state *s, proff_error *err);
/* Build-ids of hit DSOs into the BUILD_ID feature and the cache. */
int rec_build_ids(rec_state *s, proff_error *err);

#endif
