/* fuzz_chrows.c — libFuzzer target for the reader of a stored key set's
 * rows as ClickHouse answers them (lib/store/chrows.c): the input's first
 * byte chooses the keys (1-4), Children and sample counts; its second the
 * size of the pieces the answers arrive in (as libcurl hands them on);
 * the rest is split at a 0xff 0xfe pair into the names answer and the
 * values answer, read as clickhouse.c reads them: whole records taken,
 * the rest kept for the next piece, bytes left at the end an error. Three
 * profiles (hashes 0, 1, 2) in two replicates. A read that fails must say
 * why; one that succeeds is put in order as a query does. Any crash, hang,
 * leak or sanitizer report is a bug. Built and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proff/store.h"
#include "../../lib/store/store-int.h"

typedef int (*reader_fn)(store_rows_reader *x, const char *p, size_t n, size_t *used, proff_error *err);

/* the answer in pieces of chunk bytes, through a buffer as the HTTP sink keeps it */
static int feed(store_rows_reader *x, reader_fn fn, const uint8_t *a, size_t n, size_t chunk, proff_error *e)
{
	char *buf = malloc(n + 1);
	if (!buf)
		return -1;
	size_t have = 0;
	int rc = 0;
	for (size_t at = 0; at < n && !rc; at += chunk) {
		size_t k = n - at < chunk ? n - at : chunk;
		memcpy(buf + have, a + at, k);
		have += k;
		size_t used = 0;
		rc = fn(x, buf, have, &used, e);
		if (!rc) {
			if (used > have)
				abort();
			memmove(buf, buf + used, have - used);
			have -= used;
		}
	}
	if (!rc && have)
		rc = proff_err_set(e, PROFF_EFORMAT, "fuzz", PROFF_NO_OFFSET, "an answer cut short");
	free(buf);
	return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	unsigned flags = data[0];
	size_t chunk = 1 + data[1];
	data += 2;
	size -= 2;
	size_t split = size;
	for (size_t i = 0; i + 1 < size; i++)
		if (data[i] == 0xff && data[i + 1] == 0xfe) {
			split = i;
			break;
		}
	const uint8_t *names = data, *values = split < size ? data + split + 2 : data + size;
	size_t nn = split, nv = split < size ? size - split - 2 : 0;

	store_sel sel = { 0 };
	store_query q = { .keys = { HK_COMM, HK_DSO, HK_SYM, HK_SRCLINE }, .nkeys = 1 + (int)(flags % 4),
			  .children = (flags & 4) != 0, .groups = &sel, .ngroups = 1, .event = "cycles" };
	proff_error e;
	memset(&e, 0, sizeof(e));
	store_result *r = NULL;
	if (store_result_new(&q, &r, &e))
		return 0;
	pf_map64 profs;
	pf_map64_init(&profs);
	long r0 = store_result_rep(r, 0, "a", 1), r1 = store_result_rep(r, 1, "b", 1);
	bool f;
	uint64_t *s0 = pf_map64_upsert(&profs, 0, &f);
	if (s0)
		*s0 = (uint64_t)r0;
	uint64_t *s1 = pf_map64_upsert(&profs, 1, &f);
	if (s1)
		*s1 = (uint64_t)r1;
	uint64_t *s2 = pf_map64_upsert(&profs, 2, &f);
	if (s2)
		*s2 = (uint64_t)r1;
	if (r0 < 0 || r1 < 0 || !s0 || !s1 || !s2 || store_result_fix_reps(r))
		goto out;
	store_rows_reader x;
	store_rows_reader_init(&x, r, &profs, (size_t)q.nkeys, q.children, (flags & 8) != 0, "fuzz");
	int rc = feed(&x, store_rows_names, names, nn, chunk, &e);
	if (!rc)
		rc = feed(&x, store_rows_values, values, nv, chunk, &e);
	store_rows_reader_free(&x);
	if (rc) {
		if (rc > 0 || !e.code || !e.msg[0])
			abort();
	} else if (store_result_finish(r, &e)) {
		if (!e.code)
			abort();
	}
out:
	pf_map64_free(&profs);
	store_result_free(r);
	return 0;
}
