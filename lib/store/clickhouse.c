/* clickhouse.c — the ClickHouse store, over its HTTP interface (libcurl,
 * loaded when a store opens: curl-api.h).
 *
 * Tables (docs/fleet.md has the DDL this file sends):
 *   proff_stacks    one row per distinct stack: its hash and the frames'
 *                   columns as parallel arrays (ReplacingMergeTree by hash);
 *   proff_samples   one row per (profile, push, event, comm, stack): period
 *                   and count, with the profile's labels and time
 *                   (MergeTree, partitioned by day, ordered by event, id);
 *   proff_profiles  one row per push of a profile, written last: the marker.
 *   proff_rows      a view of samples joined with their stacks.
 * On a cluster the first three are Distributed tables over *_local tables
 * on every shard, samples and stacks sharded by the stack hash (a sample
 * and its stack on one shard: the view's join is local), and proff_rows a
 * Distributed table over each shard's view: a query's GROUP BY runs on the
 * shards, and only rows per replicate come back.
 *
 * A push: is the id marked? (then nothing to do); insert the stacks the
 * server lacks; insert the samples (one INSERT); insert the marker. A
 * push that fails before the marker leaves rows no query reads (queries
 * read the samples of marked pushes only, one push per id), and pushing
 * again makes a new push of them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "curl-api.h"
#include "store-int.h"

typedef struct ch_store {
	ch_curl api;               /* libcurl's functions */
	CURL *curl;
	char *base;                /* http://host:port/ */
	char *db;
	char *user, *password;
	int mode;                  /* 0 unknown, 1 one server, 2 cluster */
	int stop_after;            /* test hook: fail a push after this step */
} ch_store;

/* ---- HTTP -------------------------------------------------------------------- */

/* An answer's lines handed to a function as they arrive (a query's rows:
 * no copy of a large answer is kept); an answer other than 200 is kept
 * whole, for its message */
typedef int (*line_fn)(void *arg, char *line);
/* A binary answer (RowBinary) handed on as it arrives: the function takes
 * the whole records of p[0, n), says how many bytes it took (*used), and
 * the rest waits for more */
typedef int (*bytes_fn)(void *arg, const char *p, size_t n, size_t *used);

typedef struct sink {
	sbuf *b;
	const ch_curl *api;
	CURL *h;
	line_fn fn;                /* NULL: keep the answer in b (or give it to bfn) */
	bytes_fn bfn;
	void *arg;
	int mode;                  /* 0 not known yet, 1 lines, 2 an error answer kept */
	int rc;                    /* fn's non-zero */
} sink;

static size_t on_data(char *p, size_t sz, size_t n, void *arg)
{
	sink *k = arg;
	size_t len = sz * n;
	sbuf_put(k->b, p, len);
	if (k->b->oom)
		return 0;
	if (!k->fn && !k->bfn)
		return len;
	if (!k->mode) {
		long st = 0;
		k->api->easy_getinfo(k->h, CURLINFO_RESPONSE_CODE, &st);
		k->mode = st == 200 ? 1 : 2;
	}
	if (k->mode != 1)
		return len;
	if (k->bfn) {
		size_t used = 0;
		if ((k->rc = k->bfn(k->arg, k->b->p, k->b->n, &used)))
			return 0;
		memmove(k->b->p, k->b->p + used, k->b->n - used);
		k->b->n -= used;
		return len;
	}
	char *start = k->b->p, *end = k->b->p + k->b->n, *nl;
	for (; (nl = memchr(start, '\n', (size_t)(end - start))); start = nl + 1) {
		*nl = '\0';
		if ((k->rc = k->fn(k->arg, start)))
			return 0;
	}
	size_t rest = (size_t)(end - start);
	memmove(k->b->p, start, rest);
	k->b->n = rest;
	k->b->p[rest] = '\0';
	return len;
}

/* POST body (SQL, then data for an INSERT) with query (URL-encoded SQL or
 * NULL); the answer in *resp, or its lines given to fn (then fn's error
 * stops the transfer and is returned). 0, or an error naming the store. */
static int ch_post_any(store *s, const char *query, const char *body, size_t blen, const char *settings,
		       sbuf *resp, line_fn fn, bytes_fn bfn, void *fn_arg, proff_error *err)
{
	ch_store *c = s->impl;
	sbuf url = { 0 };
	sbuf_printf(&url, "%s?database=%s", c->base, c->db);
	if (settings)
		sbuf_printf(&url, "&%s", settings);
	if (query) {
		char *q = c->api.easy_escape(c->curl, query, 0);
		if (!q) {
			sbuf_free(&url);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
		sbuf_printf(&url, "&query=%s", q);
		c->api.free(q);
	}
	if (url.oom) {
		sbuf_free(&url);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	resp->n = 0;
	CURL *h = c->curl;
	sink k = { resp, &c->api, h, fn, bfn, fn_arg, 0, 0 };
	c->api.easy_reset(h);
	c->api.easy_setopt(h, CURLOPT_URL, url.p);
	c->api.easy_setopt(h, CURLOPT_POST, 1L);
	c->api.easy_setopt(h, CURLOPT_POSTFIELDS, body);
	c->api.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)blen);
	c->api.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_data);
	c->api.easy_setopt(h, CURLOPT_WRITEDATA, &k);
	c->api.easy_setopt(h, CURLOPT_CONNECTTIMEOUT, 10L);
	c->api.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	c->api.easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");
	struct curl_slist *hdr = c->api.slist_append(NULL, "Content-Type: text/plain; charset=UTF-8");
	c->api.easy_setopt(h, CURLOPT_HTTPHEADER, hdr);
	if (c->user) {
		c->api.easy_setopt(h, CURLOPT_USERNAME, c->user);
		c->api.easy_setopt(h, CURLOPT_PASSWORD, c->password ? c->password : "");
	}
	CURLcode cc = c->api.easy_perform(h);
	c->api.slist_free_all(hdr);
	sbuf_free(&url);
	if (k.rc)
		return k.rc;
	if (cc != CURLE_OK)
		return proff_err_set(err, PROFF_EIO, s->name, PROFF_NO_OFFSET, "cannot reach the server: %s",
				     c->api.easy_strerror(cc));
	if (resp->oom)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	long status = 0;
	c->api.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &status);
	if (status != 200) {
		/* ClickHouse's message: its first line, without the stack trace */
		const char *m = resp->p ? resp->p : "";
		size_t l = strcspn(m, "\n");
		if (l > 400)
			l = 400;
		return proff_err_set(err, PROFF_EIO, s->name, PROFF_NO_OFFSET, "the server answered %ld: %.*s", status,
				     (int)l, m);
	}
	if (fn && resp->n)         /* a last line without its newline */
		return fn(fn_arg, resp->p);
	if (bfn && resp->n)        /* a record cut short */
		return proff_err_set(err, PROFF_EFORMAT, s->name, PROFF_NO_OFFSET,
				     "an answer of another shape (%zu bytes after its last whole row)", resp->n);
	return 0;
}

static int ch_post_lines(store *s, const char *query, const char *body, size_t blen, const char *settings,
			 sbuf *resp, line_fn fn, void *fn_arg, proff_error *err)
{
	return ch_post_any(s, query, body, blen, settings, resp, fn, NULL, fn_arg, err);
}

static int ch_post(store *s, const char *query, const char *body, size_t blen, const char *settings, sbuf *resp,
		   proff_error *err)
{
	return ch_post_lines(s, query, body, blen, settings, resp, NULL, NULL, err);
}

static int ch_sql(store *s, const char *sql, sbuf *resp, proff_error *err)
{
	return ch_post(s, NULL, sql, strlen(sql), NULL, resp, err);
}

/* ---- schema ---------------------------------------------------------------------- */

static const char *const cols_stacks =
	"(stack UInt64, dso Array(String), dso_long Array(String), sym Array(String), "
	"srcline Array(String), addr Array(UInt64), ip Array(UInt64), level Array(String))";
static const char *const cols_samples =
	"(day Date, time DateTime, id String, push UInt64, label_keys Array(String), "
	"label_values Array(String), event String, seq UInt32, comm String, stack UInt64, period UInt64, count UInt64)";
static const char *const cols_profiles =
	"(day Date, time DateTime, id String, push UInt64, label_keys Array(String), label_values Array(String), "
	"events Array(String), event_types Array(UInt32), event_configs Array(UInt64), totals Array(UInt64), "
	"nsamples Array(UInt64), callchain Array(UInt8), nr_stacks UInt64, nr_samples UInt64)";

/* a profile's key rows (keyrows.c) for the key sets of store_keysets; dso is
 * the long name in a key set of long names. Created first: a database with
 * proff_samples and no proff_keyrows is one of an older proff. */
static const char *const cols_keyrows =
	"(day Date, time DateTime, id String, push UInt64, label_keys Array(String), label_values Array(String), "
	"event String, keyset UInt8, seq UInt32, comm String, dso String, sym String, srcline String, addr UInt64, "
	"level String, self_addr UInt64, self_level String, self UInt64, acc UInt64, count UInt64)";

static int create_local(store *s, const char *sfx, proff_error *err)
{
	ch_store *c = s->impl;
	sbuf q = { 0 }, r = { 0 };
	int rc = 0;
	for (int t = -1; t < 3 && !rc; t++) {
		q.n = 0;
		if (t == -1)
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.proff_keyrows%s %s ENGINE = MergeTree "
				    "PARTITION BY day ORDER BY (keyset, event, id, push)", c->db, sfx, cols_keyrows);
		else if (t == 0)
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.proff_stacks%s %s ENGINE = ReplacingMergeTree "
				    "ORDER BY stack", c->db, sfx, cols_stacks);
		else if (t == 1)
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.proff_samples%s %s ENGINE = MergeTree "
				    "PARTITION BY day ORDER BY (event, id, push, comm, stack)", c->db, sfx, cols_samples);
		else
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.proff_profiles%s %s ENGINE = MergeTree "
				    "PARTITION BY day ORDER BY (id, push)", c->db, sfx, cols_profiles);
		rc = q.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : ch_sql(s, q.p, &r, err);
	}
	if (!rc) {
		q.n = 0;
		sbuf_printf(&q, "CREATE VIEW IF NOT EXISTS %s.proff_rows%s AS SELECT * FROM %s.proff_samples%s "
			    "ANY INNER JOIN %s.proff_stacks%s USING stack", c->db, sfx, c->db, sfx, c->db, sfx);
		rc = ch_sql(s, q.p, &r, err);
	}
	sbuf_free(&q);
	sbuf_free(&r);
	return rc;
}

static int valid_ident(const char *s)
{
	if (!*s || strlen(s) > 64)
		return 0;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '_' || (p != s && *p >= '0' && *p <= '9')))
			return 0;
	return 1;
}

/* An error when TABLE (or TABLE_local) lacks COLUMN: an older proff's */
static int ch_older_columns(store *s, const char *table, const char *column, proff_error *err)
{
	ch_store *c = s->impl;
	sbuf q = { 0 }, r = { 0 };
	sbuf_printf(&q, "SELECT table FROM system.columns WHERE database = ");
	sbuf_quote(&q, c->db, strlen(c->db));
	sbuf_printf(&q, " AND table IN ('%s', '%s_local') GROUP BY table HAVING countIf(name = '%s') = 0 "
		    "FORMAT TabSeparated", table, table, column);
	int rc = q.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : ch_sql(s, q.p, &r, err);
	if (!rc && r.n)
		rc = proff_err_set(err, PROFF_EFORMAT, s->name, PROFF_NO_OFFSET,
				   "the proff tables here are an older proff's (%s without %s): push the profiles "
				   "again into a new database (docs/fleet.md)", table, column);
	sbuf_free(&q);
	sbuf_free(&r);
	return rc;
}

/* What the database holds: 0 no proff tables, 1 one server's, 2 a
 * cluster's (Distributed), or an error for the tables of an older proff
 * (samples without key rows, here or shard-local) */
static int ch_tables(store *s, int *mode, proff_error *err)
{
	ch_store *c = s->impl;
	sbuf q = { 0 }, r = { 0 };
	sbuf_printf(&q, "SELECT name, engine FROM system.tables WHERE database = ");
	sbuf_quote(&q, c->db, strlen(c->db));
	sbuf_puts(&q, " AND name IN ('proff_samples', 'proff_keyrows', 'proff_samples_local', 'proff_keyrows_local') "
		      "FORMAT TabSeparated");
	int rc = q.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : ch_sql(s, q.p, &r, err);
	*mode = 0;
	if (!rc) {
		bool samples = false, keyrows = false, samples_l = false, keyrows_l = false;
		for (char *p = r.p; p && *p;) {
			char *nl = strchr(p, '\n');
			size_t l = nl ? (size_t)(nl - p) : strlen(p);
			if (!strncmp(p, "proff_samples\t", 14)) {
				samples = true;
				*mode = !strncmp(p + 14, "Distributed", 11) ? 2 : 1;
			}
			keyrows |= l > 14 && !strncmp(p, "proff_keyrows\t", 14);
			samples_l |= !strncmp(p, "proff_samples_local\t", 20);
			keyrows_l |= !strncmp(p, "proff_keyrows_local\t", 20);
			p = nl ? nl + 1 : NULL;
		}
		if ((samples && !keyrows) || (samples_l && !keyrows_l))
			rc = proff_err_set(err, PROFF_EFORMAT, s->name, PROFF_NO_OFFSET,
					   "the proff tables here are an older proff's (no proff_keyrows): push the "
					   "profiles again into a new database (docs/fleet.md)");
	}
	/* stacks of a proff that kept one address an unresolved frame; key
	 * rows of a proff that kept one level a row */
	if (!rc && *mode)
		rc = ch_older_columns(s, "proff_stacks", "ip", err);
	if (!rc && *mode)
		rc = ch_older_columns(s, "proff_keyrows", "self_level", err);
	sbuf_free(&q);
	sbuf_free(&r);
	return rc;
}

static int ch_init(store *s, const char *cluster, proff_error *err)
{
	ch_store *c = s->impl;
	int mode, rc = ch_tables(s, &mode, err);
	if (rc)
		return rc;
	if (!cluster)
		return create_local(s, "", err);
	if (!strcmp(cluster, "local"))
		return create_local(s, "_local", err);
	if (!valid_ident(cluster))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "--init: '%.64s' is no cluster name (letters, digits, '_')", cluster);
	rc = create_local(s, "_local", err);
	sbuf q = { 0 }, r = { 0 };
	/* key rows first (what marks the tables of this proff), the view's
	 * Distributed table last */
	static const struct { const char *t, *key; } d[] = {
		{ "proff_keyrows", "cityHash64(id)" }, { "proff_stacks", "stack" }, { "proff_samples", "stack" },
		{ "proff_profiles", "cityHash64(id)" },
	};
	for (size_t i = 0; i < 5 && !rc; i++) {
		q.n = 0;
		if (i < 4)
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.%s AS %s.%s_local ENGINE = Distributed(%s, %s, %s_local, %s)",
				    c->db, d[i].t, c->db, d[i].t, cluster, c->db, d[i].t, d[i].key);
		else
			/* a view has no engine to copy: the columns of samples and stacks */
			sbuf_printf(&q, "CREATE TABLE IF NOT EXISTS %s.proff_rows (day Date, time DateTime, id String, push UInt64, "
				    "label_keys Array(String), label_values Array(String), event String, seq UInt32, comm String, "
				    "stack UInt64, period UInt64, count UInt64, dso Array(String), dso_long Array(String), "
				    "sym Array(String), srcline Array(String), addr Array(UInt64), ip Array(UInt64), level Array(String)) "
				    "ENGINE = Distributed(%s, %s, proff_rows_local, stack)", c->db, cluster, c->db);
		rc = q.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : ch_sql(s, q.p, &r, err);
	}
	sbuf_free(&q);
	sbuf_free(&r);
	c->mode = 0;
	return rc;
}

/* one server or a cluster: the engine of proff_samples */
static int ch_mode(store *s, bool create, proff_error *err)
{
	ch_store *c = s->impl;
	if (c->mode)
		return 0;
	int mode, rc = ch_tables(s, &mode, err);
	if (rc)
		return rc;
	if (mode)
		c->mode = mode;
	else if (create && !(rc = create_local(s, "", err)))
		c->mode = 1;
	else if (!rc)
		rc = proff_err_set(err, PROFF_ENOENT, s->name, PROFF_NO_OFFSET,
				   "no proff tables in this database (proff push creates them)");
	return rc;
}

/* A query's error when the tables were not looked at first (a query of
 * stored key sets need not know one server from a cluster: a round trip
 * saved): what the tables say instead when they are missing or an older
 * proff's, else the error itself */
static int tables_error(store *s, int rc, proff_error *err)
{
	if (rc != PROFF_EIO)
		return rc;
	proff_error te;
	proff_err_clear(&te);
	int trc = ch_mode(s, false, &te);
	if (trc) {
		*err = te;
		return trc;
	}
	return rc;
}

/* ---- push ------------------------------------------------------------------------ */

static void json_str(sbuf *b, const char *s, size_t len)
{
	sbuf_put(b, "\"", 1);
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch >= 0x20 && ch != '"' && ch != '\\' && ch != 0x7f)
			continue;
		sbuf_put(b, s + run, i - run);
		if (ch == '"' || ch == '\\') {
			char e[2] = { '\\', (char)ch };
			sbuf_put(b, e, 2);
		} else {
			sbuf_printf(b, "\\u%04x", ch);
		}
		run = i + 1;
	}
	sbuf_put(b, s + run, len - run);
	sbuf_put(b, "\"", 1);
}

static void json_sid(sbuf *b, const store_prof *sp, uint32_t id)
{
	json_str(b, pf_strtab_get(&sp->strs, id), sp->strs.lens[id]);
}

static void labels_json(sbuf *b, const store_prof *sp)
{
	sbuf_puts(b, "\"label_keys\":[");
	for (size_t i = 0; i < sp->nr_labels; i++) {
		if (i)
			sbuf_puts(b, ",");
		json_sid(b, sp, sp->labels[i].key);
	}
	sbuf_puts(b, "],\"label_values\":[");
	for (size_t i = 0; i < sp->nr_labels; i++) {
		if (i)
			sbuf_puts(b, ",");
		json_sid(b, sp, sp->labels[i].value);
	}
	sbuf_puts(b, "]");
}

static void day_time(sbuf *b, int64_t t)
{
	time_t tt = (time_t)(t < 0 ? 0 : t);
	struct tm tm;
	gmtime_r(&tt, &tm);
	sbuf_printf(b, "\"day\":\"%04d-%02d-%02d\",\"time\":%lld", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
		    (long long)tt);
}

/* RowBinary, written: integers little-endian; a string, or an array, its
 * length (LEB128) then its bytes, or elements. Text formats cost the server
 * more to read than the rows cost to store (a push's stacks and key rows
 * are millions of fields). */
static void rb_put_uint(sbuf *b, uint64_t v, int bytes)
{
	char x[8];
	for (int i = 0; i < bytes; i++)
		x[i] = (char)(v >> (8 * i));
	sbuf_put(b, x, (size_t)bytes);
}

static void rb_put_len(sbuf *b, uint64_t n)
{
	char x[10];
	size_t k = 0;
	do {
		x[k++] = (char)((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
		n >>= 7;
	} while (n);
	sbuf_put(b, x, k);
}

static void rb_put_str(sbuf *b, const char *str, size_t len)
{
	rb_put_len(b, len);
	sbuf_put(b, str, len);
}

static void rb_put_sid(sbuf *b, const store_prof *sp, uint32_t id)
{
	rb_put_str(b, pf_strtab_get(&sp->strs, id), sp->strs.lens[id]);
}

/* the columns every row of a profile starts with: its day, time, id, push
 * and labels */
#define RB_HEAD_COLS "day, time, id, push, label_keys, label_values"
static void rb_head(sbuf *b, const store_prof *sp, uint64_t push)
{
	int64_t t = sp->time < 0 ? 0 : sp->time > (int64_t)UINT32_MAX ? (int64_t)UINT32_MAX : sp->time;
	rb_put_uint(b, (uint64_t)(t / 86400), 2);          /* Date: days since 1970-01-01 */
	rb_put_uint(b, (uint64_t)t, 4);                    /* DateTime */
	rb_put_str(b, sp->id, strlen(sp->id));
	rb_put_uint(b, push, 8);
	rb_put_len(b, sp->nr_labels);
	for (size_t i = 0; i < sp->nr_labels; i++)
		rb_put_sid(b, sp, sp->labels[i].key);
	rb_put_len(b, sp->nr_labels);
	for (size_t i = 0; i < sp->nr_labels; i++)
		rb_put_sid(b, sp, sp->labels[i].value);
}

/* INSERT rows into table: JSONEachRow lines (cols NULL), or RowBinary
 * records of the columns cols (in that order) */
static int insert(store *s, const char *table, const char *cols, const sbuf *rows, proff_error *err)
{
	ch_store *c = s->impl;
	char q[512];
	if (cols)
		snprintf(q, sizeof(q), "INSERT INTO %s.%s (%s) FORMAT RowBinary", c->db, table, cols);
	else
		snprintf(q, sizeof(q), "INSERT INTO %s.%s FORMAT JSONEachRow", c->db, table);
	sbuf r = { 0 };
	int rc = ch_post(s, q, rows->p ? rows->p : "", rows->n,
			 c->mode == 2 ? "insert_distributed_sync=1&input_format_skip_unknown_fields=0" : NULL, &r, err);
	sbuf_free(&r);
	return rc;
}

/* The stacks of the batch the server lacks (asked by hash in chunks),
 * each once, in one INSERT */
static int insert_stacks(store *s, const store_prof *const *sps, size_t n, const int *status, proff_error *err)
{
	ch_store *c = s->impl;
	pf_map64 idx;        /* hash -> profile << 32 | stack, for the stacks of the new profiles */
	pf_map64_init(&idx);
	uint64_t *hashes = NULL;
	size_t nh = 0, cap = 0;
	sbuf q = { 0 }, r = { 0 }, b = { 0 };
	int rc = 0;
	for (size_t p = 0; p < n && !rc; p++) {
		if (status[p] != STORE_PUT_NEW)
			continue;
		for (size_t i = 0; i < sps[p]->nr_stacks; i++) {
			bool f;
			uint64_t *v = pf_map64_upsert(&idx, sps[p]->stacks[i].hash, &f);
			if (!v || (!f && PF_GROW(hashes, cap, nh + 1))) {
				rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
				break;
			}
			if (!f) {
				*v = (uint64_t)p << 32 | i;
				hashes[nh++] = sps[p]->stacks[i].hash;
			}
		}
	}
	for (size_t at = 0; at < nh && !rc; at += 8192) {
		q.n = 0;
		sbuf_printf(&q, "SELECT DISTINCT stack FROM %s.proff_stacks WHERE stack IN (", c->db);
		for (size_t i = at; i < nh && i < at + 8192; i++)
			sbuf_printf(&q, i > at ? ",%" PRIu64 : "%" PRIu64, hashes[i]);
		sbuf_puts(&q, ") FORMAT TabSeparated");
		if (q.oom) {
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
			break;
		}
		/* in the body: a long IN list exceeds no URL limit */
		if ((rc = ch_sql(s, q.p, &r, err)))
			break;
		for (const char *p = r.p; p && *p;) {
			char *e;
			uint64_t h = strtoull(p, &e, 10), v;
			if (e != p && pf_map64_get(&idx, h, &v))
				pf_map64_upsert(&idx, h, &(bool){ 0 })[0] = UINT64_MAX;     /* there already */
			p = strchr(e, '\n');
			p = p ? p + 1 : NULL;
		}
	}
	size_t nnew = 0;
	for (size_t k = 0; k < nh && !rc; k++) {
		uint64_t v;
		if (!pf_map64_get(&idx, hashes[k], &v) || v == UINT64_MAX)
			continue;
		const store_prof *sp = sps[v >> 32];
		const store_stack *st = &sp->stacks[v & 0xffffffffu];
		const uint32_t *fr = sp->stack_frames + st->first;
		rb_put_uint(&b, st->hash, 8);
		for (int col = 0; col < 4; col++) {        /* dso, dso_long, sym, srcline */
			rb_put_len(&b, st->n);
			for (uint32_t j = 0; j < st->n; j++) {
				const store_frame *f = &sp->frames[fr[j]];
				rb_put_sid(&b, sp, col == 0 ? f->dso : col == 1 ? f->dso_long : col == 2 ? f->sym : f->srcline);
			}
		}
		for (int col = 0; col < 2; col++) {        /* addr, ip */
			rb_put_len(&b, st->n);
			for (uint32_t j = 0; j < st->n; j++)
				rb_put_uint(&b, col ? sp->frames[fr[j]].ip : sp->frames[fr[j]].addr, 8);
		}
		rb_put_len(&b, st->n);
		for (uint32_t j = 0; j < st->n; j++) {
			char l = sp->frames[fr[j]].level ? sp->frames[fr[j]].level : '.';
			rb_put_str(&b, &l, 1);
		}
		nnew++;
	}
	if (!rc && b.oom)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (!rc && nnew)
		rc = insert(s, "proff_stacks", "stack, dso, dso_long, sym, srcline, addr, ip, level", &b, err);
	pf_map64_free(&idx);
	free(hashes);
	sbuf_free(&q);
	sbuf_free(&r);
	sbuf_free(&b);
	return rc;
}

#define RB_SAMPLES_COLS RB_HEAD_COLS ", event, seq, comm, stack, period, count"
static void samples_rb(sbuf *b, const store_prof *sp, uint64_t push)
{
	sbuf head = { 0 };
	rb_head(&head, sp, push);
	for (size_t i = 0; i < sp->nr_samples; i++) {
		const store_sample *sm = &sp->samples[i];
		sbuf_put(b, head.p, head.n);
		rb_put_sid(b, sp, sp->events[sm->event].name);
		rb_put_uint(b, i, 4);
		rb_put_sid(b, sp, sm->comm);
		rb_put_uint(b, sp->stacks[sm->stack].hash, 8);
		rb_put_uint(b, sm->period, 8);
		rb_put_uint(b, sm->count, 8);
	}
	if (head.oom)
		b->oom = true;
	sbuf_free(&head);
}

/* the profile's key rows of every stored key set; -1 out of memory */
#define RB_KEYROWS_COLS RB_HEAD_COLS ", event, keyset, seq, comm, dso, sym, srcline, addr, level, self_addr, self_level, " \
	"self, acc, count"
static int keyrows_rb(sbuf *b, const store_prof *sp, uint64_t push)
{
	sbuf head = { 0 };
	rb_head(&head, sp, push);
	int rc = head.oom ? -1 : 0;
	for (int k = 0; k < STORE_NR_KEYSETS && !rc; k++) {
		store_keyrow *rows;
		size_t n;
		if (store_keyrows(sp, store_keysets[k], &rows, &n)) {
			rc = -1;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			const store_keyrow *kr = &rows[i];
			sbuf_put(b, head.p, head.n);
			rb_put_sid(b, sp, sp->events[kr->event].name);
			rb_put_uint(b, (uint64_t)store_keysets[k], 1);
			rb_put_uint(b, i, 4);
			rb_put_sid(b, sp, kr->comm);
			rb_put_sid(b, sp, kr->dso);
			rb_put_sid(b, sp, kr->sym);
			rb_put_sid(b, sp, kr->srcline);
			rb_put_uint(b, kr->addr, 8);
			rb_put_str(b, &kr->level, 1);
			rb_put_uint(b, kr->self_addr, 8);
			rb_put_str(b, &kr->self_level, kr->self_level ? 1 : 0);
			rb_put_uint(b, kr->self, 8);
			rb_put_uint(b, kr->acc, 8);
			rb_put_uint(b, kr->count, 8);
		}
		free(rows);
	}
	sbuf_free(&head);
	return rc || b->oom ? -1 : 0;
}

static void marker_json(sbuf *bp, const store_prof *sp, uint64_t push)
{
#define b (*bp)
	sbuf_puts(&b, "{");
	day_time(&b, sp->time);
	sbuf_printf(&b, ",\"id\":\"%s\",\"push\":%" PRIu64 ",", sp->id, push);
	labels_json(&b, sp);
	sbuf_puts(&b, ",\"events\":[");
	for (size_t e = 0; e < sp->nr_events; e++) {
		if (e)
			sbuf_puts(&b, ",");
		json_sid(&b, sp, sp->events[e].name);
	}
#define ARR(name, fmt, expr) do { \
	sbuf_puts(&b, "],\"" name "\":["); \
	for (size_t e = 0; e < sp->nr_events; e++) \
		sbuf_printf(&b, e ? "," fmt : fmt, expr); } while (0)
	ARR("event_types", "%u", sp->events[e].type);
	ARR("event_configs", "%" PRIu64, sp->events[e].config);
	ARR("totals", "%" PRIu64, sp->events[e].total);
	ARR("nsamples", "%" PRIu64, sp->events[e].samples);
	ARR("callchain", "%d", sp->events[e].callchain ? 1 : 0);
#undef ARR
	sbuf_printf(&b, "],\"nr_stacks\":%zu,\"nr_samples\":%zu}\n", sp->nr_stacks, sp->nr_samples);
#undef b
}

static int ch_put(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err)
{
	ch_store *c = s->impl;
	int rc = ch_mode(s, true, err);
	if (rc)
		return rc;
	/* which ids are marked already */
	sbuf q = { 0 }, r = { 0 };
	sbuf_printf(&q, "SELECT DISTINCT id FROM %s.proff_profiles WHERE id IN (", c->db);
	for (size_t i = 0; i < n; i++)
		sbuf_printf(&q, i ? ",'%s'" : "'%s'", sps[i]->id);       /* ids are hex digits */
	sbuf_puts(&q, ") FORMAT TabSeparated");
	rc = q.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory") : ch_sql(s, q.p, &r, err);
	sbuf_free(&q);
	if (rc) {
		sbuf_free(&r);
		return rc;
	}
	size_t nnew = 0;
	for (size_t i = 0; i < n; i++) {
		status[i] = r.p && strstr(r.p, sps[i]->id) ? STORE_PUT_EXISTS : STORE_PUT_NEW;
		for (size_t j = 0; j < i && status[i] == STORE_PUT_NEW; j++)
			if (!strcmp(sps[j]->id, sps[i]->id))
				status[i] = STORE_PUT_EXISTS;
		nnew += status[i] == STORE_PUT_NEW;
	}
	sbuf_free(&r);
	if (!nnew)
		return 0;
	/* a push's number: its time in ns (the earliest marked push of an id is
	 * the one queries read) */
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t push = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	if ((rc = insert_stacks(s, sps, n, status, err)))
		return rc;
	if (c->stop_after == 1)
		return proff_err_set(err, PROFF_EIO, s->name, PROFF_NO_OFFSET, "stopped after the stacks (test hook)");
	sbuf b = { 0 };
	for (size_t i = 0; i < n; i++)
		if (status[i] == STORE_PUT_NEW)
			samples_rb(&b, sps[i], push);
	rc = b.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory")
		   : b.n ? insert(s, "proff_samples", RB_SAMPLES_COLS, &b, err) : 0;
	/* the key rows (read by the common queries instead of the samples) */
	b.n = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (status[i] == STORE_PUT_NEW && keyrows_rb(&b, sps[i], push))
			rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (!rc && b.n)
		rc = insert(s, "proff_keyrows", RB_KEYROWS_COLS, &b, err);
	if (!rc && c->stop_after == 2)
		rc = proff_err_set(err, PROFF_EIO, s->name, PROFF_NO_OFFSET, "stopped after the samples (test hook)");
	/* the markers last, in one INSERT: the batch's profiles appear together */
	b.n = 0;
	for (size_t i = 0; i < n && !rc; i++)
		if (status[i] == STORE_PUT_NEW)
			marker_json(&b, sps[i], push);
	if (!rc)
		rc = b.oom ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory")
			   : insert(s, "proff_profiles", NULL, &b, err);
	sbuf_free(&b);
	return rc;
}

/* ---- queries ----------------------------------------------------------------------- */

/* the replicate's name and the group of a row of samples or profiles */
static void rep_group_sql(sbuf *q, const store_query *qq)
{
	if (qq->replicate) {
		sbuf_puts(q, "if(has(label_keys, ");
		sbuf_quote(q, qq->replicate, strlen(qq->replicate));
		sbuf_puts(q, "), label_values[indexOf(label_keys, ");
		sbuf_quote(q, qq->replicate, strlen(qq->replicate));
		sbuf_puts(q, ")], '[none]') AS rep, ");
	} else {
		sbuf_puts(q, "id AS rep, ");
	}
	sbuf_puts(q, "multiIf(");
	for (size_t g = 0; g < qq->ngroups; g++) {
		char *w = store_sel_sql(&qq->groups[g]);
		if (!w) {
			q->oom = true;
			return;
		}
		sbuf_printf(q, "%s, %zu, ", w, g);
		free(w);
	}
	sbuf_puts(q, "-1) AS grp");
}

static void marked_sql(sbuf *q, const ch_store *c)
{
	sbuf_printf(q, "(id, push) GLOBAL IN (SELECT id, min(push) FROM %s.proff_profiles GROUP BY id)", c->db);
}

/* a TSV line's fields, unescaped in place into f[] (pointers into line) */
static int split_tsv(char *line, char **f, size_t *len, size_t nf)
{
	size_t i = 0;
	char *p = line;
	for (; i < nf; i++) {
		f[i] = p;
		char *o = p;
		while (*p && *p != '\t') {
			if (*p == '\\' && p[1]) {
				char e = p[1];
				*o++ = e == 't' ? '\t' : e == 'n' ? '\n' : e == '0' ? '\0' : e == 'r' ? '\r' :
				       e == 'b' ? '\b' : e == 'f' ? '\f' : e;
				p += 2;
			} else {
				*o++ = *p++;
			}
		}
		len[i] = (size_t)(o - f[i]);
		bool more = *p == '\t';
		*o = '\0';
		if (more)
			p++;
		else
			return i + 1 == nf ? 0 : -1;
		(void)o;
	}
	return -1;
}

/* a line of a rows query: rep, grp, the keys, Self, Children, samples,
 * level, lowest unresolved address */
typedef struct rows_ctx {
	store *s;
	store_result *r;
	size_t nkeys, nf;
	char **f;
	size_t *fl;
	long last_rep;             /* the replicate of the line before (lines come by profile) */
	uint32_t last_grp;
	char *last_name;
	size_t last_len, cap_name;
	proff_error *err;
} rows_ctx;

static uint64_t dec_u64(const char *p)
{
	uint64_t v = 0;
	for (; *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (uint64_t)(*p - '0');
	return v;
}

static int row_line(void *arg, char *line)
{
	rows_ctx *x = arg;
	store_result *r = x->r;
	char **f = x->f;
	size_t *fl = x->fl;
	if (!*line)
		return 0;
	if (!strncmp(line, "Code: ", 6))         /* an error after the answer began */
		return proff_err_set(x->err, PROFF_EIO, x->s->name, PROFF_NO_OFFSET, "the server failed: %.400s", line);
	if (split_tsv(line, f, fl, x->nf))
		return proff_err_set(x->err, PROFF_EFORMAT, x->s->name, PROFF_NO_OFFSET, "an answer of another shape");
	uint32_t grp = (uint32_t)dec_u64(f[1]);
	long rep = x->last_rep;
	if (rep < 0 || grp != x->last_grp || fl[0] != x->last_len || memcmp(f[0], x->last_name, fl[0])) {
		rep = store_result_rep(r, grp, f[0], fl[0]);
		if (rep < 0 || PF_GROW(x->last_name, x->cap_name, fl[0] + 1))
			goto nomem;
		memcpy(x->last_name, f[0], fl[0]);
		x->last_len = fl[0];
		x->last_grp = grp;
		x->last_rep = rep;
	}
	long row = store_result_row(r, (const char *const *)f + 2, fl + 2);
	size_t b = 2 + x->nkeys;
	if (row < 0 || store_result_add_count(r, (size_t)row, (size_t)rep, dec_u64(f[b]),
					      r->children ? dec_u64(f[b + 1]) : 0, dec_u64(f[b + 2])))
		goto nomem;
	if (fl[b + 3] == 1 && !r->row_level[row])
		r->row_level[row] = f[b + 3][0];
	uint64_t a = dec_u64(f[b + 4]);
	if (a && a < r->row_addr[row])
		r->row_addr[row] = a;
	return 0;
nomem:
	return proff_err_set(x->err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* Run a rows query (sql), its lines summed into r as they arrive */
static int query_rows(store *s, const store_query *qq, store_result *r, const char *sql, const char *settings,
		      proff_error *err)
{
	rows_ctx x = { .s = s, .r = r, .nkeys = (size_t)qq->nkeys, .nf = 2 + (size_t)qq->nkeys + 5, .last_rep = -1,
		       .err = err };
	x.f = calloc(x.nf, sizeof(char *));
	x.fl = calloc(x.nf, sizeof(size_t));
	sbuf resp = { 0 };
	int rc = !x.f || !x.fl ? proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory")
			       : ch_post_lines(s, NULL, sql, strlen(sql), settings, &resp, row_line, &x, err);
	free(x.f);
	free(x.fl);
	free(x.last_name);
	sbuf_free(&resp);
	return rc;
}

/* ---- the rows of a stored key set ------------------------------------------------ */

/* A line of the profiles query: the hash of (id, push), group, replicate,
 * and the event's total, samples and callchain flag. The profile is
 * counted in its replicate, and its hash remembered (profs: hash ->
 * replicate) for the key rows that name it. A (id, push) met twice (a
 * marker stored twice) counts once. */
typedef struct profiles_ctx {
	store *s;
	store_result *r;
	pf_map64 *profs;
	proff_error *err;
} profiles_ctx;

static int profiles_line(void *arg, char *line)
{
	profiles_ctx *x = arg;
	store_result *r = x->r;
	char *f[6];
	size_t fl[6];
	if (!*line)
		return 0;
	if (!strncmp(line, "Code: ", 6))
		return proff_err_set(x->err, PROFF_EIO, x->s->name, PROFF_NO_OFFSET, "the server failed: %.400s", line);
	if (split_tsv(line, f, fl, 6))
		return proff_err_set(x->err, PROFF_EFORMAT, x->s->name, PROFF_NO_OFFSET, "an answer of another shape");
	bool found;
	uint64_t *slot = pf_map64_upsert(x->profs, dec_u64(f[0]), &found);
	if (!slot)
		goto nomem;
	if (found)
		return 0;
	long rep = store_result_rep(r, (uint32_t)dec_u64(f[1]), f[2], fl[2]);
	if (rep < 0)
		goto nomem;
	/* (the map may have grown since: upsert again) */
	if (!(slot = pf_map64_upsert(x->profs, dec_u64(f[0]), &found)))
		goto nomem;
	*slot = (uint64_t)rep;
	r->rep_total[rep] += dec_u64(f[3]);
	r->rep_samples[rep] += dec_u64(f[4]);
	r->rep_profiles[rep]++;
	r->nprofiles++;
	r->callchain |= f[5][0] == '1';
	return 0;
nomem:
	return proff_err_set(x->err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

/* the rows answers handed to chrows.c's reader as they arrive */
typedef struct keyrows_ctx {
	store_rows_reader rd;
	proff_error *err;
} keyrows_ctx;

static int names_bytes(void *arg, const char *p, size_t n, size_t *used)
{
	keyrows_ctx *x = arg;
	return store_rows_names(&x->rd, p, n, used, x->err);
}

static int values_bytes(void *arg, const char *p, size_t n, size_t *used)
{
	keyrows_ctx *x = arg;
	return store_rows_values(&x->rd, p, n, used, x->err);
}

/* a stored key set's key k as a column of proff_keyrows */
static const char *keyrow_expr(const store_query *qq, int k)
{
	int key = qq->keys[k];
	return key == HK_COMM ? "comm" : key == HK_DSO ? "dso" : key == HK_SRCLINE ? "srcline" :
	       qq->by_addr ? "if(sym = '', concat('\\x01', lower(hex(addr))), sym)" : "sym";
}

static int query_keyrows(store *s, const store_query *qq, int ks, store_result *r, const pf_map64 *profs,
			 proff_error *err)
{
	ch_store *c = s->impl;
	keyrows_ctx x = { .err = err };
	store_rows_reader_init(&x.rd, r, profs, (size_t)qq->nkeys, qq->children, !qq->no_counts, s->name);
	sbuf hash = { 0 }, where = { 0 }, q = { 0 }, resp = { 0 };
	sbuf_puts(&hash, "cityHash64(");
	for (int k = 0; k < qq->nkeys; k++)
		sbuf_printf(&hash, k ? ", %s" : "%s", keyrow_expr(qq, k));
	sbuf_puts(&hash, ")");
	sbuf_printf(&where, " FROM %s.proff_keyrows WHERE keyset = %d AND event = ", c->db, ks);
	sbuf_quote(&where, qq->event, strlen(qq->event));
	/* the rows of the selected profiles' marked pushes */
	sbuf_printf(&where, " AND cityHash64(id, push) GLOBAL IN (SELECT cityHash64(id, push) FROM %s.proff_profiles WHERE ",
		    c->db);
	marked_sql(&where, c);
	sbuf_puts(&where, " AND multiIf(");
	for (size_t g = 0; g < qq->ngroups; g++) {
		char *w = store_sel_sql(&qq->groups[g]);
		if (!w) {
			where.oom = true;
			break;
		}
		sbuf_printf(&where, "%s, %zu, ", w, g);
		free(w);
	}
	sbuf_puts(&where, "-1) >= 0)");
	int rc;
	if (hash.oom || where.oom)
		goto nomem;
	/* the rows: each one's keys once; its level the first frame's in the local
	 * store's order (profiles by id, each one's rows as met), its lowest address */
	sbuf_printf(&q, "SELECT %s AS h", hash.p);
	for (int k = 0; k < qq->nkeys; k++)
		sbuf_printf(&q, ", any(%s)", keyrow_expr(qq, k));
	/* (a key row's addr is 0 where it has a symbol: an unresolved row's
	 * lowest address counts at 0 too, a caller in no map, as in the local
	 * store; without Children a self_addr of 0 is "no own frame") */
	if (qq->children)
		sbuf_printf(&q, ", argMin(level, (id, seq)), minIf(addr, sym = '')");
	else    /* without Children: of the samples' own frames */
		sbuf_printf(&q, ", argMinIf(self_level, (id, seq), self_level != ''), minIf(self_addr, self_addr != 0)");
	sbuf_printf(&q, "%s GROUP BY h FORMAT RowBinary", where.p);
	/* (wait_end_of_query: an error found after the first rows is a 500
	 * answer, not a message inside the binary rows) */
	if (q.oom)
		goto nomem;
	if ((rc = ch_post_any(s, NULL, q.p, q.n, "wait_end_of_query=1", &resp, NULL, names_bytes, &x, err)))
		goto out;
	/* the numbers: a record per profile and row */
	q.n = 0;
	sbuf_printf(&q, "SELECT %s, cityHash64(id, push), self%s%s%s FORMAT RowBinary", hash.p, x.rd.acc ? ", acc" : "",
		    x.rd.count ? ", count" : "", where.p);
	if (q.oom)
		goto nomem;
	rc = ch_post_any(s, NULL, q.p, q.n, "wait_end_of_query=1", &resp, NULL, values_bytes, &x, err);
out:
	store_rows_reader_free(&x.rd);
	sbuf_free(&hash);
	sbuf_free(&where);
	sbuf_free(&q);
	sbuf_free(&resp);
	return rc;
nomem:
	rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	goto out;
}

static int ch_query(store *s, const store_query *qq, store_result *r, proff_error *err)
{
	ch_store *c = s->impl;
	/* the samples' query differs on a cluster: the tables looked at first;
	 * a stored key set's, only if a query fails (tables_error) */
	int ks = store_keyset_of(qq);
	int rc = ks < 0 ? ch_mode(s, false, err) : 0;
	if (rc)
		return rc;
	sbuf q = { 0 }, resp = { 0 };
	/* the selected profiles: each one's replicate and totals, and the hash
	 * its key rows are selected by (profiles_line) */
	pf_map64 profs;
	pf_map64_init(&profs);
	sbuf_puts(&q, "SELECT cityHash64(id, push), grp, rep, totals[indexOf(events, ");
	sbuf_quote(&q, qq->event, strlen(qq->event));
	sbuf_puts(&q, ")], nsamples[indexOf(events, ");
	sbuf_quote(&q, qq->event, strlen(qq->event));
	sbuf_puts(&q, ")], callchain[indexOf(events, ");
	sbuf_quote(&q, qq->event, strlen(qq->event));
	sbuf_puts(&q, ")] FROM (SELECT id, push, totals, nsamples, events, callchain, ");
	rep_group_sql(&q, qq);
	sbuf_printf(&q, " FROM %s.proff_profiles WHERE ", c->db);
	marked_sql(&q, c);
	/* (in the order store_result_finish puts the replicates: the rows'
	 * sums go to a table it need not reorder) */
	sbuf_puts(&q, ") WHERE grp >= 0 ORDER BY grp, rep FORMAT TabSeparated");
	profiles_ctx pc = { s, r, &profs, err };
	if (q.oom)
		goto nomem;
	if ((rc = ch_post_lines(s, NULL, q.p, q.n, NULL, &resp, profiles_line, &pc, err))) {
		rc = tables_error(s, rc, err);
		goto out;
	}
	if (store_result_fix_reps(r))
		goto nomem;
	q.n = 0;
	if (ks >= 0) {
		if ((rc = query_keyrows(s, qq, ks, r, &profs, err)))
			rc = tables_error(s, rc, err);
		goto out;
	}
	/* the rows: Self of each stack's leaf, Children once per distinct key
	 * of a stack (arrayEnumerateUniq numbers a value's occurrences). By
	 * address, an unresolved frame's row is keyed as the files' reports
	 * key it: a sample's own row by the map address, a callchain entry's
	 * by the absolute one (ip); so the arrays get their leaf twice, first
	 * as the sample's own row (position 1: Self), then as a callchain
	 * entry (counted when its key differs, as the files count it) */
	bool by_addr = false;
	for (int k = 0; k < qq->nkeys; k++)
		by_addr |= qq->by_addr && qq->keys[k] == HK_SYM;
#define LEAD(col) (by_addr ? "arrayConcat(arraySlice(" col ", 1, 1), " col ")" : col)
	const char *addr_arr = by_addr ? "arrayConcat(arraySlice(addr, 1, 1), ip)" : "addr";
	const char *karr[HIST_MAX_KEYS];
	size_t nfk = 0;
	sbuf_puts(&q, "SELECT ");
	rep_group_sql(&q, qq);
	for (int k = 0; k < qq->nkeys; k++) {
		switch (qq->keys[k]) {
		case HK_COMM: sbuf_puts(&q, ", comm"); break;
		case HK_DSO: sbuf_puts(&q, ", f_dso"); karr[nfk++] = qq->verbose ? LEAD("dso_long") : LEAD("dso"); break;
		case HK_SYM:
			sbuf_puts(&q, by_addr ? ", if(f_sym = '', concat('\\x01', lower(hex(f_addr))), f_sym)" : ", f_sym");
			karr[nfk++] = by_addr ? "arrayMap((s, a) -> if(s = '', toString(a), s), "
						"arrayConcat(arraySlice(sym, 1, 1), sym), arrayConcat(arraySlice(addr, 1, 1), ip))"
					      : "sym";
			break;
		case HK_SRCLINE: sbuf_puts(&q, ", f_src"); karr[nfk++] = LEAD("srcline"); break;
		case HK_LABEL:
			sbuf_puts(&q, ", if(has(label_keys, ");
			sbuf_quote(&q, qq->label_key, strlen(qq->label_key));
			sbuf_puts(&q, "), label_values[indexOf(label_keys, ");
			sbuf_quote(&q, qq->label_key, strlen(qq->label_key));
			sbuf_puts(&q, ")], '[none]')");
			break;
		default: sbuf_puts(&q, ", ''"); break;
		}
		sbuf_printf(&q, " AS k%d", k);
	}
	sbuf_puts(&q, ", sum(if(f_pos = 1, period, 0)), sum(if(f_first = 1, period, 0)), sum(if(f_pos = 1, count, 0)), ");
	/* a row's level and lowest address: of its frames, or without
	 * Children of the samples' own (a callchain entry makes no row there) */
	sbuf_puts(&q, qq->children ? "argMin(f_level, (id, seq, f_pos)), minIf(f_addr, f_sym = '')"
				   : "argMinIf(f_level, (id, seq, f_pos), f_pos = 1), minIf(f_addr, f_sym = '' AND f_pos = 1)");
	/* only the arrays the keys read are joined (each is a column read per row) */
	bool want_dso = false, want_src = false;
	for (int k = 0; k < qq->nkeys; k++) {
		want_dso |= qq->keys[k] == HK_DSO;
		want_src |= qq->keys[k] == HK_SRCLINE;
	}
	const char *dcol = qq->verbose ? "dso_long" : "dso";
	if (c->mode == 2) {
		/* a cluster: each shard's view joins its samples and stacks */
		sbuf_printf(&q, " FROM %s.proff_rows", c->db);
	} else {
		/* one server: the selected samples first, joined with only the
		 * stacks they use (the view would hash every stack stored) */
		sbuf v = { 0 };
		sbuf_puts(&v, "event = ");
		sbuf_quote(&v, qq->event, strlen(qq->event));
		sbuf_puts(&v, " AND ");
		marked_sql(&v, c);
		sbuf_puts(&v, " AND multiIf(");
		for (size_t g = 0; g < qq->ngroups; g++) {
			char *w = store_sel_sql(&qq->groups[g]);
			if (!w) {
				v.oom = true;
				break;
			}
			sbuf_printf(&v, "%s, %zu, ", w, g);
			free(w);
		}
		sbuf_puts(&v, "-1) >= 0");
		sbuf_printf(&q, " FROM (SELECT * FROM (SELECT id, push, time, label_keys, label_values, event, seq, comm, "
			    "stack, period, count FROM %s.proff_samples WHERE %s) ANY INNER JOIN (SELECT stack, sym, level, "
			    "addr%s%s%s%s FROM %s.proff_stacks WHERE stack IN (SELECT stack FROM %s.proff_samples WHERE %s)) "
			    "USING stack)", c->db, v.p ? v.p : "0", by_addr ? ", ip" : "", want_dso ? ", " : "", want_dso ? dcol : "",
			    want_src ? ", srcline" : "", c->db, c->db, v.p ? v.p : "0");
		if (v.oom)
			q.oom = true;
		sbuf_free(&v);
	}
	sbuf_printf(&q, " ARRAY JOIN %s AS f_sym, %s AS f_level, %s AS f_addr, arrayEnumerate(%s) AS f_pos, ", LEAD("sym"),
		    LEAD("level"), addr_arr, LEAD("sym"));
	if (want_dso)
		sbuf_printf(&q, "%s AS f_dso, ", qq->verbose ? LEAD("dso_long") : LEAD("dso"));
	if (want_src)
		sbuf_printf(&q, "%s AS f_src, ", LEAD("srcline"));
#undef LEAD
	if (nfk) {
		sbuf_puts(&q, "arrayEnumerateUniq(");
		for (size_t i = 0; i < nfk; i++)
			sbuf_printf(&q, i ? ", %s" : "%s", karr[i]);
		sbuf_puts(&q, ") AS f_first");
	} else {
		sbuf_puts(&q, "arrayEnumerate(sym) AS f_first");
	}
	sbuf_puts(&q, " WHERE event = ");
	sbuf_quote(&q, qq->event, strlen(qq->event));
	sbuf_puts(&q, " AND ");
	marked_sql(&q, c);
	sbuf_puts(&q, " AND (f_pos = 1 OR f_first = 1) AND grp >= 0 GROUP BY grp, rep");
	for (int k = 0; k < qq->nkeys; k++)
		sbuf_printf(&q, ", k%d", k);
	sbuf_puts(&q, " FORMAT TabSeparated");
	if (q.oom)
		goto nomem;
	/* the selection columns are read before the join where the server can */
	rc = query_rows(s, qq, r, q.p, "enable_optimize_predicate_expression=1", err);
out:
	pf_map64_free(&profs);
	sbuf_free(&q);
	sbuf_free(&resp);
	return rc;
nomem:
	pf_map64_free(&profs);
	sbuf_free(&q);
	sbuf_free(&resp);
	return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
}

static int ch_events(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err)
{
	ch_store *c = s->impl;
	int rc;
	sbuf q = { 0 }, r = { 0 };
	sbuf_printf(&q, "SELECT events FROM %s.proff_profiles WHERE ", c->db);
	marked_sql(&q, c);
	sbuf_puts(&q, " AND (0");
	for (size_t g = 0; g < ngroups; g++) {
		char *w = store_sel_sql(&groups[g]);
		if (!w) {
			q.oom = true;
			break;
		}
		sbuf_printf(&q, " OR %s", w);
		free(w);
	}
	sbuf_puts(&q, ") ORDER BY id FORMAT TabSeparated");
	if (q.oom)
		rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	else if ((rc = ch_sql(s, q.p, &r, err)))
		rc = tables_error(s, rc, err);
	size_t n = 0;
	/* lines like ['cycles','instructions'] (names quoted, \' and \\ escaped,
	 * the whole TSV-escaped once more) */
	for (char *p = r.p; !rc && p && *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = '\0';
		char *f[1];
		size_t fl[1];
		if (split_tsv(p, f, fl, 1) || f[0][0] != '[') {
			rc = proff_err_set(err, PROFF_EFORMAT, s->name, PROFF_NO_OFFSET, "an answer of another shape");
			break;
		}
		for (char *a = f[0] + 1; *a == '\'';) {
			char *o = a + 1, *w = o, *start = o;
			while (*o && *o != '\'') {
				if (*o == '\\' && o[1])
					o++;
				*w++ = *o++;
			}
			*w = '\0';
			if (store_events_add(names, &n, start)) {
				rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
				break;
			}
			a = *o ? o + 1 : o;
			if (*a == ',')
				a++;
		}
		p = nl ? nl + 1 : NULL;
	}
	sbuf_free(&q);
	sbuf_free(&r);
	return rc;
}

static void ch_close(store *s)
{
	ch_store *c = s->impl;
	if (!c)
		return;
	if (c->curl)
		c->api.easy_cleanup(c->curl);
	free(c->base);
	free(c->db);
	free(c->user);
	free(c->password);
	free(c);
}

/* ---- call paths (flame graphs) ----------------------------------------------------- */

/* the stacks' frames, a row per (stack, position), gathered then sorted */
typedef struct path_row {
	uint64_t stack;
	uint32_t pos, frame;
} path_row;

typedef struct paths_ctx {
	store *s;
	paths_build *pb;
	path_row *rows; size_t n, cap;
	proff_error *err;
} paths_ctx;

static int answer_error(paths_ctx *x, const char *line)
{
	if (!strncmp(line, "Code: ", 6))
		return proff_err_set(x->err, PROFF_EIO, x->s->name, PROFF_NO_OFFSET, "the server failed: %.400s", line);
	return proff_err_set(x->err, PROFF_EFORMAT, x->s->name, PROFF_NO_OFFSET, "an answer of another shape");
}

/* stack, position, dso, sym, srcline, addr, ip, level */
static int path_frame_line(void *arg, char *line)
{
	paths_ctx *x = arg;
	char *f[8];
	size_t fl[8];
	if (!*line)
		return 0;
	if (!strncmp(line, "Code: ", 6) || split_tsv(line, f, fl, 8) || fl[7] > 1)
		return answer_error(x, line);
	long id = paths_frame(x->pb, f[2], fl[2], f[3], fl[3], f[4], fl[4], dec_u64(f[5]), dec_u64(f[6]),
			      fl[7] ? f[7][0] : '.');
	if (id < 0 || PF_GROW(x->rows, x->cap, x->n + 1))
		return proff_err_set(x->err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	x->rows[x->n++] = (path_row){ dec_u64(f[0]), (uint32_t)dec_u64(f[1]), (uint32_t)id };
	return 0;
}

static int cmp_path_row(const void *a, const void *b)
{
	const path_row *x = a, *y = b;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* grp, rep, comm, stack, period, count */
static int path_sum_line(void *arg, char *line)
{
	paths_ctx *x = arg;
	char *f[6];
	size_t fl[6];
	if (!*line)
		return 0;
	if (!strncmp(line, "Code: ", 6) || split_tsv(line, f, fl, 6))
		return answer_error(x, line);
	long stack = paths_stack_of(x->pb, dec_u64(f[3]));
	if (stack < 0)
		return proff_err_set(x->err, PROFF_EFORMAT, x->s->name, PROFF_NO_OFFSET,
				     "a sample's stack %.30s is not in proff_stacks (a push cut short? push it again)", f[3]);
	long rep = paths_rep(x->pb, (uint32_t)dec_u64(f[0]), f[1], fl[1]);
	if (rep < 0 || paths_add(x->pb, (size_t)rep, f[2], fl[2], (size_t)stack, dec_u64(f[4]), dec_u64(f[5])))
		return proff_err_set(x->err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	return 0;
}

/* The selected samples of the event: their stacks' frames first (each
 * stack once), then the sums of (replicate, comm, stack) */
static int ch_paths(store *s, const store_query *qq, paths_build *pb, proff_error *err)
{
	ch_store *c = s->impl;
	int rc = ch_mode(s, false, err);
	if (rc)
		return rc;
	paths_ctx x = { s, pb, NULL, 0, 0, err };
	sbuf sel = { 0 }, q = { 0 }, resp = { 0 };
	sbuf_puts(&sel, "event = ");
	sbuf_quote(&sel, qq->event ? qq->event : "", qq->event ? strlen(qq->event) : 0);
	sbuf_puts(&sel, " AND ");
	marked_sql(&sel, c);
	sbuf_printf(&q, "SELECT stack, f_pos, f_dso, f_sym, f_src, f_addr, f_ip, f_level FROM %s.proff_stacks "
		    "ARRAY JOIN dso_long AS f_dso, sym AS f_sym, srcline AS f_src, addr AS f_addr, ip AS f_ip, "
		    "level AS f_level, arrayEnumerate(sym) AS f_pos WHERE stack GLOBAL IN (SELECT stack FROM "
		    "(SELECT stack, ", c->db);
	rep_group_sql(&q, qq);
	sbuf_printf(&q, " FROM %s.proff_samples WHERE %s) WHERE grp >= 0) FORMAT TabSeparated", c->db,
		    sel.p ? sel.p : "0");
	if (sel.oom || q.oom)
		goto nomem;
	if ((rc = ch_post_lines(s, NULL, q.p, q.n, NULL, &resp, path_frame_line, &x, err))) {
		rc = tables_error(s, rc, err);
		goto out;
	}
	/* the stacks, leaf first; a stack's rows twice (parts of a
	 * ReplacingMergeTree not merged yet) are one stack */
	qsort(x.rows, x.n, sizeof(*x.rows), cmp_path_row);
	uint32_t *frames = NULL;
	size_t cap_frames = 0;
	for (size_t i = 0; i < x.n;) {
		size_t j = i, n = 0;
		for (; j < x.n && x.rows[j].stack == x.rows[i].stack; j++) {
			if (n && x.rows[j].pos == x.rows[j - 1].pos)
				continue;
			if (x.rows[j].pos != n + 1) {
				free(frames);
				rc = proff_err_set(err, PROFF_EFORMAT, s->name, PROFF_NO_OFFSET, "an answer of another shape");
				goto out;
			}
			if (PF_GROW(frames, cap_frames, n + 1)) {
				free(frames);
				goto nomem;
			}
			frames[n++] = x.rows[j].frame;
		}
		if (paths_stack(pb, x.rows[i].stack, frames, n) < 0) {
			free(frames);
			goto nomem;
		}
		i = j;
	}
	free(frames);
	q.n = 0;
	sbuf_puts(&q, "SELECT grp, rep, comm, stack, sum(period), sum(count) FROM (SELECT ");
	rep_group_sql(&q, qq);
	sbuf_printf(&q, ", comm, stack, period, count FROM %s.proff_samples WHERE %s) WHERE grp >= 0 "
		    "GROUP BY grp, rep, comm, stack FORMAT TabSeparated", c->db, sel.p ? sel.p : "0");
	if (q.oom)
		goto nomem;
	if ((rc = ch_post_lines(s, NULL, q.p, q.n, NULL, &resp, path_sum_line, &x, err)))
		rc = tables_error(s, rc, err);
	goto out;
nomem:
	rc = proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
out:
	free(x.rows);
	sbuf_free(&sel);
	sbuf_free(&q);
	sbuf_free(&resp);
	return rc;
}

static const struct store_ops ch_ops = { ch_init, ch_put, ch_query, ch_events, ch_close, ch_paths };

int store_ch_open(const char *url, const store_auth *auth, store *s, proff_error *err)
{
	const char *hp = url + strlen("clickhouse://");
	if (strchr(hp, '@'))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "--store: credentials do not go in the URL (use $PROFF_CLICKHOUSE_USER and "
				     "$PROFF_CLICKHOUSE_PASSWORD, or store.user and store.password in the config file)");
	const char *slash = strchr(hp, '/');
	if (!slash || slash == hp || !slash[1])
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "--store: expected clickhouse://HOST:PORT/DATABASE");
	size_t hl = (size_t)(slash - hp);
	for (size_t i = 0; i < hl; i++) {
		char ch = hp[i];
		if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '.' ||
		      ch == '-' || ch == ':' || ch == '[' || ch == ']'))
			return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
					     "--store: the host '%.*s' has a character that is not allowed", (int)hl, hp);
	}
	const char *db = slash + 1;
	if (!valid_ident(db))
		return proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET,
				     "--store: '%.64s' is no database name (letters, digits, '_')", db);
	ch_store *c = pf_calloc(1, sizeof(*c));
	if (!c)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	s->ops = &ch_ops;
	s->impl = c;
	c->db = strdup(db);
	c->base = malloc(hl + 16);
	s->name = malloc(strlen(url) + 1);
	if (!c->db || !c->base || !s->name)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	snprintf(c->base, hl + 16, "http://%.*s/", (int)hl, hp);
	strcpy(s->name, url);
	const char *user = auth ? auth->user : NULL, *pass = auth ? auth->password : NULL;
	if (user && !(c->user = strdup(user)))
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (pass && !(c->password = strdup(pass)))
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (auth)
		c->stop_after = auth->stop_after;
	int rc = ch_curl_load(&c->api, err);
	if (rc)
		return rc;
	if (c->api.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(c->curl = c->api.easy_init()))
		return proff_err_set(err, PROFF_EINTERNAL, NULL, PROFF_NO_OFFSET, "cannot start libcurl");
	return 0;
}
