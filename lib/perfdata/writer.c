/* writer.c — perf.data writer (see proff/perfdata-writer.h).
 *
 * Records are buffered and written with write(2); the header is written at
 * pdw_start_data as a placeholder and rewritten by pdw_close with the real
 * data size and feature bitmap. A failed or short write truncates the file
 * back to the last complete record, so the data section always parses.
 * Compression: one ZSTD_CCtx for the whole file, each staging buffer
 * (<= comp_mmap_len bytes of whole records) is compressed with ZSTD_e_flush
 * into COMPRESSED records of at most 64 KiB each.
 */
#include "proff/perfdata-writer.h"
#include "proff/perfdata.h"
#include "proff/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#define HDR_SIZE      104
#define FILE_ATTR_SZ  (PDW_ATTR_SIZE + 16)
#define WBUF_SIZE     (1u << 20)
#define COMP_REC_MAX  (65535u - 8u)   /* payload of one COMPRESSED record */
#define MAX_FEAT      64

struct wattr {
	uint8_t attr[PDW_ATTR_SIZE];
	char *name;
	uint64_t *ids;
	size_t nr_ids;
};

struct feat {
	bool set;
	uint8_t *data;
	size_t len;
};

struct pdw_writer {
	int fd;
	char *path;
	pdw_opts opts;
	struct wattr *attrs;
	size_t nr_attrs, cap_attrs;
	bool started;
	uint64_t data_offset;
	uint64_t committed;        /* file offset after the last completely written record */
	uint64_t raw_size;
	int werr;                  /* sticky write errno */
	uint8_t *wbuf;             /* pending uncompressed-to-file bytes (whole records) */
	size_t wlen;
	/* compression */
	ZSTD_CCtx *zc;
	uint8_t *stage;            /* records waiting to be compressed */
	size_t slen, scap;
	uint8_t *zout;
	struct feat feats[MAX_FEAT];
	uint8_t *bid;              /* BUILD_ID feature being built */
	size_t bid_len, bid_cap;
};

static int werr_ret(pdw_writer *w, proff_error *err)
{
	errno = w->werr;
	return proff_err_sys(err, PROFF_EIO, w->path, "write failed after %llu bytes of data",
			     (unsigned long long)(w->committed - w->data_offset));
}

/* Write buf (whole records) at the end of the file; on failure truncate back
 * to the last record boundary that made it and make the error sticky. */
static int raw_write(pdw_writer *w, const uint8_t *buf, size_t len, bool records, proff_error *err)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = write(w->fd, buf + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			w->werr = n < 0 ? errno : ENOSPC;
			/* keep whole records only */
			size_t keep = 0;
			if (records) {
				while (keep + 8 <= done) {
					uint16_t sz;
					memcpy(&sz, buf + keep + 6, 2);
					if (sz < 8 || keep + sz > done)
						break;
					keep += sz;
				}
			}
			w->committed += keep;
			if (ftruncate(w->fd, (off_t)w->committed) == 0)
				lseek(w->fd, (off_t)w->committed, SEEK_SET);
			return werr_ret(w, err);
		}
		done += (size_t)n;
	}
	w->committed += len;
	return 0;
}

static int flush_wbuf(pdw_writer *w, proff_error *err)
{
	if (!w->wlen)
		return 0;
	size_t n = w->wlen;
	w->wlen = 0;
	return raw_write(w, w->wbuf, n, true, err);
}

/* Append whole records to the file-level buffer. */
static int out_records(pdw_writer *w, const void *p, size_t len, proff_error *err)
{
	if (w->wlen + len > WBUF_SIZE) {
		int rc = flush_wbuf(w, err);
		if (rc)
			return rc;
	}
	if (len > WBUF_SIZE)
		return raw_write(w, p, len, true, err);
	memcpy(w->wbuf + w->wlen, p, len);
	w->wlen += len;
	return 0;
}

static int compress_stage(pdw_writer *w, proff_error *err)
{
	if (!w->slen)
		return 0;
	ZSTD_inBuffer in = { w->stage, w->slen, 0 };
	for (;;) {
		ZSTD_outBuffer out = { w->zout + 8, COMP_REC_MAX, 0 };
		size_t r = ZSTD_compressStream2(w->zc, &out, &in, ZSTD_e_flush);
		if (ZSTD_isError(r)) {
			w->slen = 0;
			return proff_err_set(err, PROFF_EINTERNAL, w->path, PROFF_NO_OFFSET,
					     "zstd compression failed: %s", ZSTD_getErrorName(r));
		}
		if (out.pos) {
			/* not padded: the reader hands header.size - 8 bytes to zstd
			 * (perf writes unaligned COMPRESSED records too) */
			size_t sz = 8 + out.pos;
			uint32_t type = PD_COMPRESSED;
			uint16_t misc = 0, size16 = (uint16_t)sz;
			memcpy(w->zout, &type, 4);
			memcpy(w->zout + 4, &misc, 2);
			memcpy(w->zout + 6, &size16, 2);
			int rc = out_records(w, w->zout, sz, err);
			if (rc) {
				w->slen = 0;
				return rc;
			}
		}
		if (r == 0 && in.pos == in.size)
			break;
	}
	w->slen = 0;
	return 0;
}

int pdw_create(const char *path, const pdw_opts *opts, pdw_writer **out, proff_error *err)
{
	pdw_writer *w = pf_calloc(1, sizeof(*w));
	if (!w)
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	w->fd = -1;
	if (opts)
		w->opts = *opts;
	if (!w->opts.comp_mmap_len)
		w->opts.comp_mmap_len = 528384;
	w->path = pf_strdup(path);
	w->wbuf = malloc(WBUF_SIZE);
	if (!w->path || !w->wbuf)
		goto nomem;
	if (w->opts.compress_level > 0) {
		w->scap = w->opts.comp_mmap_len < 65536 ? 65536 : w->opts.comp_mmap_len;
		if (w->scap > (1u << 20))
			w->scap = 1u << 20;
		w->stage = malloc(w->scap);
		w->zout = malloc(8 + COMP_REC_MAX + 8);
		w->zc = ZSTD_createCCtx();
		if (!w->stage || !w->zout || !w->zc)
			goto nomem;
		if (w->opts.compress_level > ZSTD_maxCLevel())
			w->opts.compress_level = ZSTD_maxCLevel();
		ZSTD_CCtx_setParameter(w->zc, ZSTD_c_compressionLevel, w->opts.compress_level);
		w->opts.comp_mmap_len = w->scap;
	}
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (w->fd < 0) {
		proff_err_sys(err, errno == EACCES ? PROFF_EPERM : PROFF_EIO, path, "cannot create");
		w->path[0] = 0;
		free(w->path); w->path = NULL;
		pdw_close(w, NULL, NULL);
		return err ? err->code : PROFF_EIO;
	}
	*out = w;
	return 0;
nomem:
	pdw_close(w, NULL, NULL);
	return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
}

int pdw_add_attr(pdw_writer *w, const void *attr, const char *name,
		 const uint64_t *ids, size_t nr_ids, proff_error *err)
{
	if (w->started)
		return proff_err_set(err, PROFF_EINTERNAL, w->path, PROFF_NO_OFFSET,
				     "attr added after the data started");
	if (PF_GROW(w->attrs, w->cap_attrs, w->nr_attrs + 1))
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	struct wattr *a = &w->attrs[w->nr_attrs];
	memset(a, 0, sizeof(*a));
	memcpy(a->attr, attr, PDW_ATTR_SIZE);
	uint32_t sz = PDW_ATTR_SIZE;
	memcpy(a->attr + 4, &sz, 4);          /* attr.size */
	a->name = pf_strdup(name ? name : "");
	a->ids = pf_calloc(nr_ids ? nr_ids : 1, sizeof(uint64_t));
	if (!a->name || !a->ids) {
		free(a->name);
		free(a->ids);
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	}
	if (nr_ids)
		memcpy(a->ids, ids, nr_ids * sizeof(uint64_t));
	a->nr_ids = nr_ids;
	w->nr_attrs++;
	return 0;
}

static uint64_t ids_bytes(const pdw_writer *w)
{
	uint64_t n = 0;
	for (size_t i = 0; i < w->nr_attrs; i++)
		n += w->attrs[i].nr_ids * 8;
	return n;
}

static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static void build_header(const pdw_writer *w, uint8_t *h, uint64_t data_size, const uint64_t feats[4])
{
	memset(h, 0, HDR_SIZE);
	memcpy(h, "PERFILE2", 8);
	put64(h + 8, HDR_SIZE);
	put64(h + 16, FILE_ATTR_SZ);
	uint64_t attrs_off = HDR_SIZE + ids_bytes(w);
	put64(h + 24, attrs_off);
	put64(h + 32, (uint64_t)w->nr_attrs * FILE_ATTR_SZ);
	put64(h + 40, w->data_offset);
	put64(h + 48, data_size);
	for (int i = 0; i < 4; i++)
		put64(h + 72 + 8 * i, feats[i]);
}

int pdw_start_data(pdw_writer *w, proff_error *err)
{
	uint64_t idb = ids_bytes(w);
	w->data_offset = HDR_SIZE + idb + (uint64_t)w->nr_attrs * FILE_ATTR_SZ;
	size_t len = (size_t)w->data_offset;
	uint8_t *buf = pf_calloc(1, len);
	if (!buf)
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	uint64_t zero[4] = { 0 };
	build_header(w, buf, 0, zero);
	uint64_t off = HDR_SIZE, ids_off = HDR_SIZE;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		memcpy(buf + off, w->attrs[i].ids, w->attrs[i].nr_ids * 8);
		off += w->attrs[i].nr_ids * 8;
	}
	for (size_t i = 0; i < w->nr_attrs; i++) {
		memcpy(buf + off, w->attrs[i].attr, PDW_ATTR_SIZE);
		put64(buf + off + PDW_ATTR_SIZE, ids_off);
		put64(buf + off + PDW_ATTR_SIZE + 8, w->attrs[i].nr_ids * 8);
		ids_off += w->attrs[i].nr_ids * 8;
		off += FILE_ATTR_SZ;
	}
	w->started = true;
	int rc = raw_write(w, buf, len, false, err);
	free(buf);
	return rc;
}

int pdw_write(pdw_writer *w, const void *recs, size_t len, proff_error *err)
{
	if (w->werr)
		return werr_ret(w, err);
	if (!w->started)
		return proff_err_set(err, PROFF_EINTERNAL, w->path, PROFF_NO_OFFSET, "data not started");
	w->raw_size += len;
	if (!w->zc)
		return out_records(w, recs, len, err);
	const uint8_t *p = recs;
	while (len) {
		/* split at record boundaries so a staging buffer only holds whole records */
		size_t take = 0;
		while (take + 8 <= len) {
			uint16_t sz;
			memcpy(&sz, p + take + 6, 2);
			if (sz < 8 || take + sz > len)
				return proff_err_set(err, PROFF_EINTERNAL, w->path, PROFF_NO_OFFSET,
						     "malformed record handed to the writer");
			if (w->slen + take + sz > w->scap)
				break;
			take += sz;
		}
		if (!take) {
			int rc = compress_stage(w, err);
			if (rc)
				return rc;
			if (w->slen + 8 > w->scap)
				return proff_err_set(err, PROFF_EINTERNAL, w->path, PROFF_NO_OFFSET, "staging overflow");
			continue;
		}
		memcpy(w->stage + w->slen, p, take);
		w->slen += take;
		p += take;
		len -= take;
	}
	return 0;
}

int pdw_finished_round(pdw_writer *w, proff_error *err)
{
	if (w->werr)
		return werr_ret(w, err);
	if (w->zc) {
		int rc = compress_stage(w, err);
		if (rc)
			return rc;
	}
	uint8_t rec[8] = { 0 };
	uint32_t type = PD_FINISHED_ROUND;
	uint16_t size = 8;
	memcpy(rec, &type, 4);
	memcpy(rec + 6, &size, 2);
	return out_records(w, rec, 8, err);
}

int pdw_set_feature(pdw_writer *w, int feat, const void *data, size_t len, proff_error *err)
{
	if (feat <= 0 || feat >= MAX_FEAT)
		return proff_err_set(err, PROFF_EUSAGE, w->path, PROFF_NO_OFFSET, "bad feature %d", feat);
	struct feat *f = &w->feats[feat];
	free(f->data);
	f->data = malloc(len ? len : 1);
	if (!f->data)
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	if (len)
		memcpy(f->data, data, len);
	f->len = len;
	f->set = true;
	return 0;
}

int pdw_set_feature_flag(pdw_writer *w, int feat, proff_error *err)
{
	return pdw_set_feature(w, feat, NULL, 0, err);
}

size_t pdw_encode_string(void *buf, const char *s)
{
	size_t n = strlen(s) + 1;
	size_t padded = (n + 63) & ~(size_t)63;
	if (buf) {
		uint32_t l = (uint32_t)padded;
		memcpy(buf, &l, 4);
		memset((uint8_t *)buf + 4, 0, padded);
		memcpy((uint8_t *)buf + 4, s, n);
	}
	return 4 + padded;
}

int pdw_set_feature_string(pdw_writer *w, int feat, const char *s, proff_error *err)
{
	size_t n = pdw_encode_string(NULL, s);
	uint8_t *b = malloc(n);
	if (!b)
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	pdw_encode_string(b, s);
	int rc = pdw_set_feature(w, feat, b, n, err);
	free(b);
	return rc;
}

int pdw_set_feature_strings(pdw_writer *w, int feat, char *const *v, size_t n, proff_error *err)
{
	size_t total = 4;
	for (size_t i = 0; i < n; i++)
		total += pdw_encode_string(NULL, v[i]);
	uint8_t *b = malloc(total);
	if (!b)
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	uint32_t nr = (uint32_t)n;
	memcpy(b, &nr, 4);
	size_t off = 4;
	for (size_t i = 0; i < n; i++)
		off += pdw_encode_string(b + off, v[i]);
	int rc = pdw_set_feature(w, feat, b, total, err);
	free(b);
	return rc;
}

int pdw_add_build_id(pdw_writer *w, int32_t pid, uint16_t cpumode, const uint8_t *id,
		     size_t id_len, const char *filename, proff_error *err)
{
	/* perf_record_header_build_id: header, pid, build_id[20]+size+pad (24), filename */
	size_t fl = (strlen(filename) + 1 + 63) & ~(size_t)63;
	size_t sz = 8 + 4 + 24 + fl;
	if (id_len > 20 || sz > 65535)
		return proff_err_set(err, PROFF_EUSAGE, filename, PROFF_NO_OFFSET, "build-id entry too large");
	if (w->bid_len + sz > w->bid_cap) {
		size_t nc = w->bid_cap ? w->bid_cap * 2 : 4096;
		while (nc < w->bid_len + sz)
			nc *= 2;
		uint8_t *p = realloc(w->bid, nc);
		if (!p)
			return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
		w->bid = p;
		w->bid_cap = nc;
	}
	uint8_t *e = w->bid + w->bid_len;
	memset(e, 0, sz);
	uint16_t misc = (uint16_t)(cpumode | (1u << 15));   /* PERF_RECORD_MISC_BUILD_ID_SIZE */
	uint16_t size16 = (uint16_t)sz;
	memcpy(e + 4, &misc, 2);
	memcpy(e + 6, &size16, 2);
	memcpy(e + 8, &pid, 4);
	memcpy(e + 12, id, id_len);
	e[12 + 20] = (uint8_t)id_len;
	memcpy(e + 36, filename, strlen(filename));
	w->bid_len += sz;
	return 0;
}

static int build_event_desc(pdw_writer *w, proff_error *err)
{
	size_t total = 8;
	for (size_t i = 0; i < w->nr_attrs; i++)
		total += PDW_ATTR_SIZE + 4 + pdw_encode_string(NULL, w->attrs[i].name) + 8 * w->attrs[i].nr_ids;
	uint8_t *b = malloc(total);
	if (!b)
		return proff_err_set(err, PROFF_ENOMEM, w->path, PROFF_NO_OFFSET, "out of memory");
	uint32_t nr = (uint32_t)w->nr_attrs, asz = PDW_ATTR_SIZE;
	memcpy(b, &nr, 4);
	memcpy(b + 4, &asz, 4);
	size_t off = 8;
	for (size_t i = 0; i < w->nr_attrs; i++) {
		memcpy(b + off, w->attrs[i].attr, PDW_ATTR_SIZE);
		off += PDW_ATTR_SIZE;
		uint32_t ni = (uint32_t)w->attrs[i].nr_ids;
		memcpy(b + off, &ni, 4);
		off += 4;
		off += pdw_encode_string(b + off, w->attrs[i].name);
		memcpy(b + off, w->attrs[i].ids, 8 * w->attrs[i].nr_ids);
		off += 8 * w->attrs[i].nr_ids;
	}
	int rc = pdw_set_feature(w, PD_FEAT_EVENT_DESC, b, total, err);
	free(b);
	return rc;
}

void pdw_get_stats(const pdw_writer *w, pdw_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->data_size = w->started ? w->committed + w->wlen - w->data_offset : 0;
	st->raw_size = w->raw_size;
	st->write_errno = w->werr;
}

static int pwrite_all(int fd, const void *buf, size_t len, uint64_t off)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = pwrite(fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = ENOSPC;
			return -1;
		}
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

int pdw_close(pdw_writer *w, pdw_stats *st, proff_error *err)
{
	int rc = 0;
	proff_error e2;
	if (!err)
		err = &e2;
	if (w->fd >= 0 && w->started) {
		if (!w->werr && w->zc)
			rc = compress_stage(w, err);
		if (!w->werr && !rc)
			rc = flush_wbuf(w, err);
		else
			w->wlen = 0;
		int first = rc;
		uint64_t data_size = w->committed - w->data_offset;
		uint64_t feats[4] = { 0 };
		/* features: only if the data is intact */
		if (!w->werr) {
			if (w->zc) {
				uint32_t c[5] = { 0, 1, (uint32_t)w->opts.compress_level, 0,
						  (uint32_t)w->opts.comp_mmap_len };
				uint64_t ratio = data_size ? (w->raw_size + data_size / 2) / data_size : 0;
				c[3] = (uint32_t)ratio;
				pdw_set_feature(w, PD_FEAT_COMPRESSED, c, sizeof(c), NULL);
			}
			if (w->bid_len)
				pdw_set_feature(w, PD_FEAT_BUILD_ID, w->bid, w->bid_len, NULL);
			build_event_desc(w, NULL);
			size_t nf = 0;
			for (int i = 1; i < MAX_FEAT; i++)
				nf += w->feats[i].set;
			uint64_t table_off = w->committed;
			uint64_t off = table_off + nf * 16;
			uint8_t *table = pf_calloc(nf ? nf : 1, 16);
			bool ok = table != NULL;
			size_t k = 0;
			for (int i = 1; i < MAX_FEAT && ok; i++) {
				struct feat *f = &w->feats[i];
				if (!f->set)
					continue;
				if (f->len && pwrite_all(w->fd, f->data, f->len, off)) {
					ok = false;
					break;
				}
				put64(table + 16 * k, off);
				put64(table + 16 * k + 8, f->len);
				k++;
				off += f->len;
				feats[i / 64] |= 1ull << (i % 64);
			}
			if (ok && nf && pwrite_all(w->fd, table, nf * 16, table_off))
				ok = false;
			free(table);
			if (!ok) {
				if (!first)
					first = proff_err_sys(err, PROFF_EIO, w->path,
							      "cannot write the feature sections (file kept without them)");
				memset(feats, 0, sizeof(feats));
				if (ftruncate(w->fd, (off_t)w->committed)) { /* best effort */ }
			}
		}
		uint8_t h[HDR_SIZE];
		build_header(w, h, data_size, feats);
		if (pwrite_all(w->fd, h, HDR_SIZE, 0) && !first)
			first = proff_err_sys(err, PROFF_EIO, w->path, "cannot rewrite the header");
		if (w->werr && !first) {
			first = werr_ret(w, err);
		}
		rc = first;
		if (st) {
			pdw_get_stats(w, st);
			struct stat sb;
			st->data_size = data_size;
			st->file_size = fstat(w->fd, &sb) == 0 ? (uint64_t)sb.st_size : 0;
		}
	} else if (st) {
		memset(st, 0, sizeof(*st));
	}
	if (w->fd >= 0 && close(w->fd) && !rc)
		rc = proff_err_sys(err, PROFF_EIO, w->path, "close failed");
	for (size_t i = 0; i < w->nr_attrs; i++) {
		free(w->attrs[i].name);
		free(w->attrs[i].ids);
	}
	for (int i = 0; i < MAX_FEAT; i++)
		free(w->feats[i].data);
	free(w->attrs);
	free(w->wbuf);
	free(w->stage);
	free(w->zout);
	free(w->bid);
	ZSTD_freeCCtx(w->zc);
	free(w->path);
	free(w);
	return rc;
}
