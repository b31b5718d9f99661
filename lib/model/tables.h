/* tables.h — private hash tables of the profile loader: keys made of a few
 * integers, values are dense u32 ids. Open addressing, linear probing; the
 * tables store ids and compare against the arrays that own the keys, so a
 * key is stored once. */
#ifndef PROFF_MODEL_TABLES_H
#define PROFF_MODEL_TABLES_H

#include <stdint.h>
#include <stdlib.h>

#include "proff/util.h"

/* (u32 a, u64 b) -> u32 */
typedef struct pair_table {
	uint32_t *a;
	uint64_t *b;
	uint32_t *val;
	uint8_t *used;
	size_t cap, len;
} pair_table;

static inline uint64_t pair_hash(uint32_t a, uint64_t b)
{
	return pf_hash64(b ^ ((uint64_t)a * 0x9e3779b97f4a7c15ULL));
}

static inline void pair_table_free(pair_table *t)
{
	free(t->a); free(t->b); free(t->val); free(t->used);
	t->a = NULL; t->b = NULL; t->val = NULL; t->used = NULL;
	t->cap = t->len = 0;
}

static inline int pair_table_rehash(pair_table *t, size_t ncap)
{
	uint32_t *a = pf_calloc(ncap, sizeof(*a));
	uint64_t *b = pf_calloc(ncap, sizeof(*b));
	uint32_t *v = pf_calloc(ncap, sizeof(*v));
	uint8_t *u = pf_calloc(ncap, 1);
	if (!a || !b || !v || !u) {
		free(a); free(b); free(v); free(u);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->used[i])
			continue;
		size_t j = pair_hash(t->a[i], t->b[i]) & (ncap - 1);
		while (u[j])
			j = (j + 1) & (ncap - 1);
		u[j] = 1; a[j] = t->a[i]; b[j] = t->b[i]; v[j] = t->val[i];
	}
	free(t->a); free(t->b); free(t->val); free(t->used);
	t->a = a; t->b = b; t->val = v; t->used = u; t->cap = ncap;
	return 0;
}

/* Find (a,b). Returns pointer to its value or NULL; when insert is set and
 * the key is absent, inserts it with value UINT32_MAX (caller fills it). */
static inline uint32_t *pair_table_find(pair_table *t, uint32_t a, uint64_t b, int insert, int *inserted)
{
	if (insert && (t->len + 1) * 4 > t->cap * 3)
		if (pair_table_rehash(t, t->cap ? t->cap * 2 : 256) < 0)
			return NULL;
	if (!t->cap)
		return NULL;
	size_t j = pair_hash(a, b) & (t->cap - 1);
	while (t->used[j]) {
		if (t->a[j] == a && t->b[j] == b) {
			if (inserted) *inserted = 0;
			return &t->val[j];
		}
		j = (j + 1) & (t->cap - 1);
	}
	if (!insert)
		return NULL;
	t->used[j] = 1; t->a[j] = a; t->b[j] = b; t->val[j] = UINT32_MAX;
	t->len++;
	if (inserted) *inserted = 1;
	return &t->val[j];
}

/* Generic id table: stores ids with their hash; equality decided by a
 * callback against the owner's arrays. */
typedef struct id_table {
	uint64_t *hash;
	uint32_t *id;      /* id + 1, 0 = empty */
	size_t cap, len;
} id_table;

static inline void id_table_free(id_table *t)
{
	free(t->hash); free(t->id);
	t->hash = NULL; t->id = NULL; t->cap = t->len = 0;
}

static inline int id_table_grow(id_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	uint64_t *h = pf_calloc(ncap, sizeof(*h));
	uint32_t *id = pf_calloc(ncap, sizeof(*id));
	if (!h || !id) {
		free(h); free(id);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->id[i])
			continue;
		size_t j = t->hash[i] & (ncap - 1);
		while (id[j])
			j = (j + 1) & (ncap - 1);
		id[j] = t->id[i]; h[j] = t->hash[i];
	}
	free(t->hash); free(t->id);
	t->hash = h; t->id = id; t->cap = ncap;
	return 0;
}

#endif
