/* chrows.c — the rows of a stored key set as ClickHouse answers them
 * (clickhouse.c's two RowBinary queries, docs/fleet.md): first each row's
 * keys once, under a hash of them; then a record of numbers per profile
 * and row, summed into the row's cell of the profile's replicate. The
 * answers come in pieces of any size: each function takes the whole
 * records it is given and says how many bytes it took. A malformed answer
 * is an error naming the store, never a row read wrong
 * (tests/fuzz/fuzz_chrows.c).
 */
#include <string.h>

#include "store-int.h"

void store_rows_reader_init(store_rows_reader *x, store_result *r, const pf_map64 *profs, size_t nkeys, bool acc,
			    bool count, const char *name)
{
	memset(x, 0, sizeof(*x));
	x->r = r;
	x->profs = profs;
	x->nkeys = nkeys;
	x->acc = acc;
	x->count = count;
	x->name = name;
	pf_map64_init(&x->rows);
}

void store_rows_reader_free(store_rows_reader *x)
{
	pf_map64_free(&x->rows);
}

/* RowBinary: integers little-endian, a string its length (LEB128) then
 * its bytes */
static uint64_t rb_u64(const char *p)
{
	const unsigned char *u = (const unsigned char *)p;
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | u[i];
	return v;
}

/* a string at *p (before end): 1 taken (*p past it), 0 not all here yet,
 * -1 malformed (a length over 4 GiB, or of more than ten bytes) */
static int rb_str(const char **p, const char *end, const char **s, size_t *len)
{
	uint64_t n = 0;
	const char *q = *p;
	for (int shift = 0;; shift += 7) {
		if (q >= end)
			return 0;
		if (shift > 63)
			return -1;
		unsigned char b = (unsigned char)*q++;
		n |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	if (n > ((uint64_t)1 << 32))
		return -1;
	if (n > (uint64_t)(end - q))
		return 0;
	*s = q;
	*len = (size_t)n;
	*p = q + n;
	return 1;
}

static int shape_error(const store_rows_reader *x, proff_error *err, const char *what)
{
	return proff_err_set(err, PROFF_EFORMAT, x->name, PROFF_NO_OFFSET, "an answer of another shape (%s)", what);
}

int store_rows_names(store_rows_reader *x, const char *p, size_t n, size_t *used, proff_error *err)
{
	const char *end = p + n, *at = p;
	const char *ks[HIST_MAX_KEYS + 1];
	size_t kl[HIST_MAX_KEYS + 1];
	*used = 0;
	if (x->nkeys > HIST_MAX_KEYS)
		return shape_error(x, err, "too many keys");
	for (;;) {
		const char *q = at;
		if (end - q < 8)
			break;
		uint64_t h = rb_u64(q);
		q += 8;
		int got = 1;
		for (size_t k = 0; k <= x->nkeys && got == 1; k++)     /* the keys, then the level */
			got = rb_str(&q, end, &ks[k], &kl[k]);
		if (got < 0)
			return shape_error(x, err, "a string's length");
		if (!got || end - q < 8)
			break;
		uint64_t a = rb_u64(q);
		q += 8;
		long row = store_result_row(x->r, ks, kl);
		bool found;
		uint64_t *slot = row < 0 ? NULL : pf_map64_upsert(&x->rows, h, &found);
		if (!slot)
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		if (found)
			return shape_error(x, err, "a row named twice");
		*slot = (uint64_t)row;
		if (kl[x->nkeys] == 1 && !x->r->row_level[row])
			x->r->row_level[row] = ks[x->nkeys][0];
		if (a && a < x->r->row_addr[row])
			x->r->row_addr[row] = a;
		at = q;
	}
	*used = (size_t)(at - p);
	return 0;
}

int store_rows_values(store_rows_reader *x, const char *p, size_t n, size_t *used, proff_error *err)
{
	size_t rec = 8 * (3 + (size_t)x->acc + (size_t)x->count), i = 0;
	*used = 0;
	for (; n - i >= rec; i += rec) {
		const char *q = p + i;
		uint64_t rep, row;
		/* a profile marked since the profiles query: not in this answer
		 * (its totals are not either) */
		if (!pf_map64_get(x->profs, rb_u64(q + 8), &rep))
			continue;
		if (rep >= x->r->nreps)
			return shape_error(x, err, "a replicate out of range");
		if (!pf_map64_get(&x->rows, rb_u64(q), &row))
			return shape_error(x, err, "a row not named");
		uint64_t acc = x->acc ? rb_u64(q + 24) : 0, cnt = x->count ? rb_u64(q + 24 + 8 * (size_t)x->acc) : 0;
		if (store_result_add_count(x->r, (size_t)row, (size_t)rep, rb_u64(q + 16), acc, cnt))
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	*used = i;
	return 0;
}
