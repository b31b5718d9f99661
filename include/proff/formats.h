/* proff/formats.h — the field's interchange formats (lib/formats).
 *
 * Read into the profile model (so report, diff, sort keys and filters work
 * on them as on perf.data):
 *   - pprof's profile.proto, gzipped or not (decoded by protobuf-c from
 *     lib/formats/profile.proto): one sample type, chosen by
 *     pf_load_opts.sample_type (default the last, as pprof);
 *   - folded stacks ("a;b;c 123" per line, as FlameGraph's stackcollapse
 *     scripts write them).
 * pf_profile_load recognises both by content (pf_formats_load), files and
 * standard input alike.
 *
 * Written from a profile: pprof (gzipped or not) and folded stacks; from an
 * exact trace (proff record --instrument): Chrome's trace event JSON and
 * speedscope's evented JSON. docs/formats/interchange.md describes the
 * mapping both ways.
 */
#ifndef PROFF_FORMATS_H
#define PROFF_FORMATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "proff/error.h"
#include "proff/profile.h"

/* The perf type of an event read from pprof or folded stacks whose name is
 * no perf event's ("cpu", "alloc_space", "folded"); its config is a hash of
 * the name. No perf PMU has this type ("prof"). */
#define PF_EVENT_TYPE_NAMED 0x70726f66u

enum pf_format {
	PF_FORMAT_UNKNOWN = 0,
	PF_FORMAT_PERF,            /* perf.data (file or pipe) */
	PF_FORMAT_TRACE,           /* proff's exact trace */
	PF_FORMAT_PPROF,           /* profile.proto, gzipped or not */
	PF_FORMAT_FOLDED,          /* folded stacks (text), gzipped or not */
};

/* The format of a file from its first bytes (n of them; 64 are plenty).
 * gzip data is PF_FORMAT_PPROF when its start cannot be looked into here;
 * pf_formats_load looks inside. Anything not recognised is
 * PF_FORMAT_UNKNOWN (perf.data's reader then says what is wrong). */
enum pf_format pf_format_sniff(const uint8_t *head, size_t n);

/* pf_profile_load's hook. If path ("-": standard input) holds a pprof
 * profile or folded stacks, reads it into *out and returns 1; returns 0
 * when it holds something else (perf.data, an exact trace: nothing of
 * standard input is consumed then), or a negative proff_errcode with err
 * set (one line: the file, the problem and its byte offset or line). */
int pf_formats_load(const char *path, const pf_load_opts *opts, pf_profile **out, proff_error *err);

/* The readers, on bytes in memory (name: for messages and p->path). data
 * may be gzip-compressed. */
int pf_pprof_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		  pf_profile **out, proff_error *err);
int pf_folded_read(const uint8_t *data, size_t len, const char *name, const pf_load_opts *opts,
		   pf_profile **out, proff_error *err);

/* ---- writing ------------------------------------------------------------------ */

typedef struct pf_write_opts {
	bool gzip;                 /* pprof: gzip-compress the output (.pb.gz, .pprof) */
	bool lines;                /* pprof: source files and lines of the locations (DWARF) */
	int evsel;                 /* folded: the event written (-1: the first with samples) */
} pf_write_opts;

/* pprof: every event of p as two sample types, "<event>_samples"/"count"
 * and "<event>"/its unit ("samples" and "<event>" for a single event), the
 * samples' threads as labels pid, tid, comm (and cpu), their pprof labels
 * again, mappings with their build ids. */
int pf_pprof_write(pf_profile *p, FILE *out, const pf_write_opts *o, proff_error *err);

/* Several profiles as one pprof file (proff convert A1 A2 -- B1 B2): added
 * one at a time (each may be freed once added), every sample of a profile
 * carrying the labels given with it (run, group) besides its thread's.
 * A mapping, function or location several profiles share is written once
 * (the same file name, build id and load bias; name in its binary, at its
 * address where the symbols have true ones; mapping, address and lines).
 * Every profile must have the first one's events (else PROFF_EUSAGE, the
 * file named), and no label of the given names of its own. */
typedef struct pf_pprof_writer pf_pprof_writer;
typedef struct pf_extra_label {
	const char *key;
	const char *str;           /* a string label, or NULL: the number num */
	int64_t num;
} pf_extra_label;
int pf_pprof_writer_new(const pf_write_opts *o, pf_pprof_writer **out, proff_error *err);
int pf_pprof_writer_add(pf_pprof_writer *w, pf_profile *p, const pf_extra_label *labels, size_t nlabels,
			proff_error *err);
/* Writes every profile added (gzipped as o->gzip says) */
int pf_pprof_writer_finish(pf_pprof_writer *w, FILE *out, proff_error *err);
void pf_pprof_writer_free(pf_pprof_writer *w);

/* perf.data (a file: path), for perf report and perf diff: every event,
 * thread, map and sample (a record per raw sample when the profile kept
 * their order, pf_load_opts.keep_sequence; else per aggregated sample), the
 * stacks as callchains. Needs addresses perf can look up: a profile whose
 * functions are names without their binary (folded stacks) is refused
 * (PROFF_ENOTSUP). */
int pf_perfdata_write(pf_profile *p, const char *path, proff_error *err);

/* Folded stacks of one event: "comm-pid/tid;root;...;leaf period" per
 * stack (the comm prefix when the profile knows its threads), kernel
 * frames with "_[k]" as stackcollapse-perf.pl --kernel, lines sorted. */
int pf_folded_write(const pf_profile *p, FILE *out, const pf_write_opts *o, proff_error *err);

/* Exact traces (proff record --instrument): every call as an event pair,
 * per thread, in the trace's time order. Chrome's trace event format
 * ("B"/"E" events, microseconds, as uftrace dump --chrome writes it), which
 * Perfetto and chrome://tracing open; speedscope's file format with one
 * evented profile per thread (nanoseconds). */
struct proff_trace;
int pf_chrome_write(struct proff_trace *t, FILE *out, proff_error *err);
int pf_speedscope_write(struct proff_trace *t, const char *name, FILE *out, proff_error *err);

#endif
