/* reader-chunks.c — a mapped perf.data file's data section read with
 * pread(2) into chunks instead of from the mapping (pd_set_read_chunks):
 * the records are walked by reader.c's pd_process_records in each chunk,
 * as a pipe's are.
 */
#include "pd-int.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

/* chunks waiting for a FINISHED_ROUND (this many times the chunk size)
 * past which the rest of a file is read from its mapping (a file of few
 * or no rounds) */
#define PD_CHUNKS_KEPT 128
/* a record (with its payload) larger than this is not copied */
#define PD_CHUNK_MAX_RECORD ((uint64_t)64 << 20)

/* Chunks are used again rather than freed: a fresh 1 MiB block is a fresh
 * mapping where the heap does not keep blocks that large (glibc's default
 * threshold), and pread faulting its pages in cost 4 ms a chunk (4 s of
 * system time for bench/dwarf.sh's --no-children report). */
#define PD_CHUNKS_SPARE 8

void pd_chunk_done(pd_reader *r, pd_chunk *c)
{
	if (r->chunking && c->cap == r->chunked && r->nspare < PD_CHUNKS_SPARE) {
		c->next = r->spare;
		r->spare = c;
		r->nspare++;
		return;
	}
	free(c);
}

void pd_chunks_spare_free(pd_reader *r)
{
	while (r->spare) {
		pd_chunk *c = r->spare;
		r->spare = c->next;
		free(c);
	}
	r->nspare = 0;
}

/* pd_set_read_chunks: the data section in chunks of at least
 * r->chunked bytes, each starting with the last one's incomplete
 * record and as large as that record needs (a trace's payload); a chunk
 * stays while records queued from it wait (pd_keep_chunk), as a pipe's do.
 * 1: the record at the chunk's end is too large to copy. */
static int file_fill(pd_reader *r, uint64_t *pos)
{
	size_t rem = r->sbuf ? r->sbuf->len - r->spos : 0;
	size_t cap = r->chunked;
	if (rem >= 8) {
		const uint8_t *h = r->sbuf->data + r->spos;
		uint32_t type = pd_r32(r->swap, h);
		uint64_t need = pd_r16(r->swap, h + 6);
		if (type == PD_HEADER_TRACING_DATA && rem >= 12)
			need += ((uint64_t)pd_r32(r->swap, h + 8) + 7) & ~7ull;
		else if (type == PD_AUXTRACE && rem >= 16)
			need += pd_r64(r->swap, h + 8);
		if (need > r->data_end - (*pos - rem))
			need = r->data_end - (*pos - rem);     /* pd_process_records says what is missing */
		if (need > PD_CHUNK_MAX_RECORD)
			return 1;
		if (need > cap / 2)
			cap = (size_t)need + r->chunked;
	}
	pd_chunk *c;
	if (cap == r->chunked && r->spare) {
		c = r->spare;
		r->spare = c->next;
		r->nspare--;
	} else {
		c = malloc(sizeof(*c) + cap);
	}
	if (!c)
		return proff_err_set(r->err, PROFF_ENOMEM, r->name, PROFF_NO_OFFSET, "out of memory");
	pd_chunk_begin(r, c, cap, rem);
	if (r->sbuf) {
		if (r->sbuf->last_seq)
			pd_keep_chunk(r, r->sbuf);
		else
			pd_chunk_done(r, r->sbuf);
	}
	r->sbuf = c;
	r->spos = 0;
	r->sbuf_off = *pos - rem;
	while (c->len < c->cap && *pos < r->data_end) {
		size_t want = c->cap - c->len;
		if (want > r->data_end - *pos)
			want = (size_t)(r->data_end - *pos);
		ssize_t n = pread(r->fd, c->data + c->len, want, (off_t)*pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? proff_err_sys(r->err, PROFF_EIO, r->name, "read failed")
				     : pd_fmt_err(r, *pos, "the file ends inside its data section");
		c->len += (size_t)n;
		*pos += (uint64_t)n;
	}
	return 0;
}

/* The records before r->map_prefix_end from the mapping (queued ones
 * staying there), a step at a time, each step's pages handed back after
 * it; *pos: where the chunks start, the first record not read so. */
#define PD_PREFIX_STEP ((size_t)16 << 20)
static int mapped_prefix(pd_reader *r, uint64_t *pos)
{
	uint64_t end = r->map_prefix_end < r->data_end ? r->map_prefix_end : r->data_end;
	while (*pos < end) {
		size_t len = end - *pos > PD_PREFIX_STEP ? PD_PREFIX_STEP : (size_t)(end - *pos);
		size_t used = 0;
		int rc = pd_process_records(r, r->map + *pos, len, *pos, false, &used, false);
		if (rc)
			return rc;
		if (!used)
			break;          /* a record across end (or larger than a step) */
		*pos += used;
		pd_release_mapped(r, r->map + *pos);
	}
	return 0;
}

int pd_chunk_records(pd_reader *r)
{
	uint64_t pos = r->data_start;
	int rc = 0;
	if (r->map_prefix_end > pos && (rc = mapped_prefix(r, &pos)) != 0)
		return rc;
	while (rc == 0 && (pos < r->data_end || (r->sbuf && r->spos < r->sbuf->len))) {
		if (r->kept_bytes / PD_CHUNKS_KEPT > r->chunked || (rc = file_fill(r, &pos)) > 0) {
			/* rounds too long to keep in memory, or a trace's
			 * payload too large to copy: the rest from the mapping
			 * (the chunks kept stay until delivered) */
			r->chunking = false;
			uint64_t at = r->sbuf ? r->sbuf_off + r->spos : pos;
			size_t used;
			return pd_process_records(r, r->map + at, r->data_end - at, at, false, &used, true);
		}
		if (rc < 0)
			break;
		size_t used = 0;
		rc = pd_process_records(r, r->sbuf->data, r->sbuf->len, r->sbuf_off, false, &used,
					pos >= r->data_end);
		r->spos = used;
	}
	return rc;
}

