/* proff/perfdata-writer.h — writing standard perf.data files (file mode).
 *
 * Layout written (the one perf record writes):
 *   [header 104][ids of each attr][attrs: perf_event_attr + ids section]
 *   [data records ...][feature section table][feature payloads]
 * The header is written last (rewritten in place), so a recording that stops
 * early — a full disk included — still leaves a readable file holding every
 * record that was written completely.
 *
 * With compression (-z), data records are packed into PERF_RECORD_COMPRESSED
 * records that are the consecutive chunks of one continuous zstd stream, and
 * the COMPRESSED feature announces the decompression buffer size; no chunk
 * decompresses to more than that. FINISHED_ROUND records stay uncompressed.
 */
#ifndef PROFF_PERFDATA_WRITER_H
#define PROFF_PERFDATA_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/error.h"

/* perf 6.1 reads perf_event_attr up to PERF_ATTR_SIZE_VER7; we write that size. */
#define PDW_ATTR_SIZE 128

typedef struct pdw_opts {
	int compress_level;        /* 0: no compression; 1..22: zstd level */
	size_t comp_mmap_len;      /* announced decompression buffer (0: 528384) */
} pdw_opts;

typedef struct pdw_stats {
	uint64_t data_size;        /* bytes of the data section in the file */
	uint64_t raw_size;         /* bytes of records before compression */
	uint64_t file_size;        /* whole file, after pdw_close */
	int write_errno;           /* first write error (ENOSPC, EFBIG, EIO), 0 if none */
} pdw_stats;

typedef struct pdw_writer pdw_writer;

/* Create (truncate) path. Nothing is written until pdw_start_data. */
int pdw_create(const char *path, const pdw_opts *opts, pdw_writer **out, proff_error *err);

/* Declare one event: attr is PDW_ATTR_SIZE bytes of perf_event_attr, name
 * goes into EVENT_DESC, ids are the sample ids of its file descriptors. */
int pdw_add_attr(pdw_writer *w, const void *attr, const char *name,
		 const uint64_t *ids, size_t nr_ids, proff_error *err);

/* Write the header placeholder, ids and attrs; records may follow. */
int pdw_start_data(pdw_writer *w, proff_error *err);

/* Append whole records (len bytes, one or more complete records). After a
 * write error every call fails fast with the same error; the file keeps the
 * records written completely before it. */
int pdw_write(pdw_writer *w, const void *recs, size_t len, proff_error *err);

/* Flush pending (compressed) data and append a FINISHED_ROUND record. */
int pdw_finished_round(pdw_writer *w, proff_error *err);

/* Feature payloads. A feature may be set once; they are written in bit order
 * at close. EVENT_DESC is generated from the attrs, COMPRESSED from opts. */
int pdw_set_feature(pdw_writer *w, int feat, const void *data, size_t len, proff_error *err);
int pdw_set_feature_string(pdw_writer *w, int feat, const char *s, proff_error *err);
int pdw_set_feature_strings(pdw_writer *w, int feat, char *const *v, size_t n, proff_error *err);
/* Flag-only feature (no payload), e.g. BRANCH_STACK. */
int pdw_set_feature_flag(pdw_writer *w, int feat, proff_error *err);
/* One entry of the BUILD_ID feature. cpumode: 1 kernel, 2 user. */
int pdw_add_build_id(pdw_writer *w, int32_t pid, uint16_t cpumode, const uint8_t *id,
		     size_t id_len, const char *filename, proff_error *err);

/* Finish: flush, write the feature table and payloads, rewrite the header.
 * Frees w. Returns 0, or the first error (the file is still made readable
 * when at all possible: features are dropped if they do not fit). */
int pdw_close(pdw_writer *w, pdw_stats *st, proff_error *err);

/* Statistics so far. */
void pdw_get_stats(const pdw_writer *w, pdw_stats *st);

/* Encode a perf.data string ("u32 len" + NUL-padded to 64) into buf;
 * returns the encoded size (call with buf NULL to size it). */
size_t pdw_encode_string(void *buf, const char *s);

#endif
