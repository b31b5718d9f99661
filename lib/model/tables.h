/* tables.h — private hash tables of the profile loader: keys made of a few
 * integers, values are dense u32 ids. Open addressing, linear probing; the
 * tables store ids and compare against the arrays that own the keys, so a
 * key is stored once. */
#ifndef PROFF_MODEL_TABLES_H
#define PROFF_MODEL_TABLES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "proff/util.h"

/* (u32 a, u64 b) -> u32. One 16-byte slot per entry (key and value side by
 * side: a lookup touches one cache line). */
typedef struct pair_slot {
	uint64_t b;
	uint32_t a;
	uint32_t val;
} pair_slot;

typedef struct pair_table {
	pair_slot *s;
	size_t cap, len;
} pair_table;

/* The empty-slot marker; never a real key (no table uses a == UINT32_MAX
 * together with b == UINT64_MAX: that would be the no-map location of the
 * ip -1, a callchain context marker). */
#define PT_EMPTY_A UINT32_MAX
#define PT_EMPTY_B UINT64_MAX

static inline uint64_t pair_hash(uint32_t a, uint64_t b)
{
	return pf_hash64(b ^ ((uint64_t)a * 0x9e3779b97f4a7c15ULL));
}

static inline void pair_table_free(pair_table *t)
{
	free(t->s);
	t->s = NULL;
	t->cap = t->len = 0;
}

static inline bool pt_empty(const pair_slot *x) { return x->a == PT_EMPTY_A && x->b == PT_EMPTY_B; }

static inline int pair_table_rehash(pair_table *t, size_t ncap)
{
	pair_slot *s = pf_calloc(ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < ncap; i++) {
		s[i].a = PT_EMPTY_A;
		s[i].b = PT_EMPTY_B;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (pt_empty(&t->s[i]))
			continue;
		size_t j = pair_hash(t->s[i].a, t->s[i].b) & (ncap - 1);
		while (!pt_empty(&s[j]))
			j = (j + 1) & (ncap - 1);
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = ncap;
	return 0;
}

/* Find (a,b). Returns pointer to its value or NULL; when insert is set and
 * the key is absent, inserts it with value UINT32_MAX (caller fills it). */
static inline uint32_t *pair_table_find(pair_table *t, uint32_t a, uint64_t b, int insert, int *inserted)
{
	if (a == PT_EMPTY_A && b == PT_EMPTY_B)
		return NULL;
	if (insert && (t->len + 1) * 4 > t->cap * 3)
		if (pair_table_rehash(t, t->cap ? t->cap * 2 : 256) < 0)
			return NULL;
	if (!t->cap)
		return NULL;
	size_t j = pair_hash(a, b) & (t->cap - 1);
	for (;;) {
		pair_slot *x = &t->s[j];
		if (x->a == a && x->b == b) {
			if (inserted) *inserted = 0;
			return &x->val;
		}
		if (pt_empty(x))
			break;
		j = (j + 1) & (t->cap - 1);
	}
	if (!insert)
		return NULL;
	t->s[j].a = a; t->s[j].b = b; t->s[j].val = UINT32_MAX;
	t->len++;
	if (inserted) *inserted = 1;
	return &t->s[j].val;
}

/* (u32 a, u32 b) -> u32 in 12-byte slots (the stack trie's (parent,
 * location) -> node: hundreds of thousands of entries). a == UINT32_MAX
 * marks an empty slot. */
typedef struct u32x2_slot {
	uint32_t a, b, val;
} u32x2_slot;

typedef struct u32x2_table {
	u32x2_slot *s;
	size_t cap, len;
} u32x2_table;

static inline void u32x2_table_free(u32x2_table *t)
{
	free(t->s);
	t->s = NULL;
	t->cap = t->len = 0;
}

static inline uint64_t u32x2_hash(uint32_t a, uint32_t b) { return pf_hash64(((uint64_t)a << 32) | b); }

static inline int u32x2_table_rehash(u32x2_table *t, size_t ncap)
{
	u32x2_slot *s = pf_realloc_array(NULL, ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < ncap; i++)
		s[i].a = UINT32_MAX;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->s[i].a == UINT32_MAX)
			continue;
		size_t j = u32x2_hash(t->s[i].a, t->s[i].b) & (ncap - 1);
		while (s[j].a != UINT32_MAX)
			j = (j + 1) & (ncap - 1);
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = ncap;
	return 0;
}

/* (a,b) from its hash's slot on (the table has room): its value, or with
 * insert a new entry's (UINT32_MAX, the caller fills it) */
static inline uint32_t *u32x2_probe(u32x2_table *t, uint32_t a, uint32_t b, uint64_t hash, int insert, int *inserted)
{
	size_t j = hash & (t->cap - 1);
	for (;;) {
		u32x2_slot *x = &t->s[j];
		if (x->a == a && x->b == b) {
			if (inserted) *inserted = 0;
			return &x->val;
		}
		if (x->a == UINT32_MAX)
			break;
		j = (j + 1) & (t->cap - 1);
	}
	if (!insert)
		return NULL;
	t->s[j].a = a; t->s[j].b = b; t->s[j].val = UINT32_MAX;
	t->len++;
	if (inserted) *inserted = 1;
	return &t->s[j].val;
}

/* As pair_table_find; a must not be UINT32_MAX. */
static inline uint32_t *u32x2_table_find(u32x2_table *t, uint32_t a, uint32_t b, int insert, int *inserted)
{
	if (a == UINT32_MAX)
		return NULL;
	if (insert && (t->len + 1) * 4 > t->cap * 3)
		if (u32x2_table_rehash(t, t->cap ? t->cap * 2 : 256) < 0)
			return NULL;
	if (!t->cap)
		return NULL;
	return u32x2_probe(t, a, b, u32x2_hash(a, b), insert, inserted);
}

/* The same slots with a hash of the caller's (the stack trie's: a hash of
 * the whole path, known before the parent's node is, so the slots of a
 * path's frames can be fetched together). hash_of[val] is the hash an
 * entry was inserted with (its own array: a rehash reads it). */
static inline int u32x2_table_rehash_by(u32x2_table *t, size_t ncap, const uint32_t *hash_of)
{
	u32x2_slot *s = pf_realloc_array(NULL, ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < ncap; i++)
		s[i].a = UINT32_MAX;
	for (size_t i = 0; i < t->cap; i++) {
		if (t->s[i].a == UINT32_MAX)
			continue;
		size_t j = hash_of[t->s[i].val] & (ncap - 1);
		while (s[j].a != UINT32_MAX)
			j = (j + 1) & (ncap - 1);
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = ncap;
	return 0;
}

/* As u32x2_table_find with the caller's hash (every entry's value is
 * filled, and its hash_of[] set, before the next insertion). */
static inline uint32_t *u32x2_table_find_h(u32x2_table *t, uint32_t a, uint32_t b, uint32_t hash,
					   const uint32_t *hash_of, int insert, int *inserted)
{
	if (a == UINT32_MAX)
		return NULL;
	if (insert && (t->len + 1) * 4 > t->cap * 3)
		if (u32x2_table_rehash_by(t, t->cap ? t->cap * 2 : 256, hash_of) < 0)
			return NULL;
	if (!t->cap)
		return NULL;
	return u32x2_probe(t, a, b, hash, insert, inserted);
}

/* Generic id table: stores ids with their hash in one 16-byte slot;
 * equality is decided by the caller against the owner's arrays. */
typedef struct id_slot {
	uint64_t hash;
	uint32_t id;       /* id + 1, 0 = empty */
	uint32_t pad;
} id_slot;

typedef struct id_table {
	id_slot *s;
	size_t cap, len;
} id_table;

static inline void id_table_free(id_table *t)
{
	free(t->s);
	t->s = NULL;
	t->cap = t->len = 0;
}

static inline int id_table_grow(id_table *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 1024;
	id_slot *s = pf_calloc(ncap, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->s[i].id)
			continue;
		size_t j = t->s[i].hash & (ncap - 1);
		while (s[j].id)
			j = (j + 1) & (ncap - 1);
		s[j] = t->s[i];
	}
	free(t->s);
	t->s = s;
	t->cap = ncap;
	return 0;
}

#endif
