/* store-int.h — what the store's files share: the store's vtable (a local
 * directory or ClickHouse behind one interface) and small helpers. */
#ifndef PROFF_STORE_INT_H
#define PROFF_STORE_INT_H

#include "proff/store.h"

struct store_ops {
	int (*init)(store *s, const char *cluster, proff_error *err);
	int (*put)(store *s, const store_prof *const *sps, size_t n, int *status, proff_error *err);
	int (*query)(store *s, const store_query *q, store_result *r, proff_error *err);
	int (*events)(store *s, const store_sel *groups, size_t ngroups, char ***names, proff_error *err);
	void (*close)(store *s);
};

struct store {
	const struct store_ops *ops;
	char *name;                /* printable: no password */
	void *impl;
};

int store_local_open(const char *dir, bool create, store *s, proff_error *err);
int store_ch_open(const char *url, const store_auth *auth, store *s, proff_error *err);

/* A growable byte buffer (SQL, request bodies) */
typedef struct sbuf {
	char *p;
	size_t n, cap;
	bool oom;
} sbuf;
void sbuf_put(sbuf *b, const void *s, size_t n);
void sbuf_puts(sbuf *b, const char *s);
void sbuf_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* a TSV field (store_tsv_put's escapes) */
void sbuf_tsv(sbuf *b, const char *s, size_t len);
/* a ClickHouse string literal */
void sbuf_quote(sbuf *b, const char *s, size_t len);
void sbuf_free(sbuf *b);

/* The events list helper: append name unless present; -1 no memory */
int store_events_add(char ***names, size_t *n, const char *name);

/* which group a profile goes to: the first selector it matches, -1 none */
long store_group_of(const store_query *q, const store_prof *sp);

#endif
