/* proff/util.h — small, hot data structures shared by the whole library:
 * a bump arena, string interning, a u64->u64 open-addressing hash map,
 * growable arrays, bounded allocation helpers, a bit count, and the JSON
 * writers' string and number forms.
 *
 * Allocation failure is reported (NULL / negative return), never fatal.
 */
#ifndef PROFF_UTIL_H
#define PROFF_UTIL_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- bounded allocation ------------------------------------------------ */

/* Largest single allocation the library makes from a size read in a file. */
#define PF_ALLOC_LIMIT ((size_t)1 << 32)

/* The bits set in v. Without -mpopcnt __builtin_popcountll is a library
 * call (2 % of bench/dwarf.sh's CPU, the unwinder's register look-ups):
 * the bit-parallel count, inline. */
static inline int pf_popcount64(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ULL);
	v = (v & 0x3333333333333333ULL) + ((v >> 2) & 0x3333333333333333ULL);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int)((v * 0x0101010101010101ULL) >> 56);
}

void *pf_calloc(size_t n, size_t size);          /* NULL on overflow/limit/failure */
/* pf_calloc, each page written once, for a table looked up (read) before
 * it is written: a fresh page read first is the shared zero page, and its
 * first write then copies it and flushes the TLBs of the process's other
 * threads (an interrupt each; 4 % of bench/dwarf.sh's CPU, the unwinder's
 * memo). */
void *pf_calloc_written(size_t n, size_t size);
void *pf_realloc_array(void *p, size_t n, size_t size);
char *pf_strdup(const char *s);
/* open(path) read-only, only if it is a regular file (paths named inside
 * profiles may be FIFOs or devices: opening those could block or act);
 * -1 with errno set otherwise (EINVAL for a non-regular file). */
int pf_open_regular(const char *path);
char *pf_strndup(const char *s, size_t n);

/* Grow *arr (element size esz) so that at least `need` elements fit.
 * *cap is updated. Returns 0 or -1 on allocation failure. */
int pf_grow(void **arr, size_t *cap, size_t need, size_t esz);
/* the common case (room enough) inline: the loaders grow arrays per record */
#define PF_GROW(arr, cap, need) \
	(__builtin_expect((size_t)(need) <= (cap), 1) ? 0 : pf_grow((void **)&(arr), &(cap), (need), sizeof(*(arr))))

/* In the array a[0..n) sorted by member `field`, how many elements have
 * field <= v: the index just past the last one (binary search). */
#define PF_COUNT_LE(a, n, field, v) __extension__ ({ \
	size_t pf_lo_ = 0, pf_hi_ = (n); \
	while (pf_lo_ < pf_hi_) { \
		size_t pf_mid_ = pf_lo_ + (pf_hi_ - pf_lo_) / 2; \
		if ((a)[pf_mid_].field <= (v)) \
			pf_lo_ = pf_mid_ + 1; \
		else \
			pf_hi_ = pf_mid_; \
	} \
	pf_lo_; })

/* ---- arena --------------------------------------------------------------- */

typedef struct pf_arena_chunk pf_arena_chunk;
typedef struct pf_arena {
	pf_arena_chunk *head;
	size_t used, cap;       /* in head chunk */
	size_t total;           /* bytes handed out */
} pf_arena;

void pf_arena_init(pf_arena *a);
void *pf_arena_alloc(pf_arena *a, size_t size);   /* 16-byte aligned, zeroed */
char *pf_arena_strndup(pf_arena *a, const char *s, size_t n);
void pf_arena_free(pf_arena *a);

/* ---- hashing -------------------------------------------------------------- */

static inline uint64_t pf_hash64(uint64_t x)
{
	x ^= x >> 33; x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33; x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}
uint64_t pf_hash_bytes(const void *p, size_t n, uint64_t seed);

/* ---- address ranges: a process's maps -------------------------------------- */

/* [start, end) mapped from file offset pgoff of object dso (the caller's id). */
typedef struct pf_range {
	uint64_t start, end, pgoff;
	uint32_t dso;
	uint32_t attr;             /* the owner's (lib/model: the map's protection and sharing) */
} pf_range;

/* Sorted by start, never overlapping. */
typedef struct pf_ranges {
	pf_range *v;
	size_t n, cap;
} pf_ranges;

/* Insert [start, end): the ranges it overlaps are replaced by their parts left
 * and right of it (as a new mmap replaces older mappings). 0, or -1 (no memory). */
int pf_ranges_insert(pf_ranges *r, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t dso);
/* dst becomes a copy of src. 0 or -1. */
int pf_ranges_copy(pf_ranges *dst, const pf_ranges *src);
/* The range holding addr, or NULL. r may be NULL. */
const pf_range *pf_ranges_find(const pf_ranges *r, uint64_t addr);
void pf_ranges_free(pf_ranges *r);

/* ---- u64 -> u64 map (open addressing, linear probing) -------------------- */

typedef struct pf_map64 {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap, len;   /* cap is a power of two */
} pf_map64;

void pf_map64_init(pf_map64 *m);
void pf_map64_free(pf_map64 *m);
/* Returns pointer to the value slot (inserting 0 if absent; *found tells),
 * or NULL on allocation failure. The pointer is valid until the next insert. */
uint64_t *pf_map64_upsert(pf_map64 *m, uint64_t key, bool *found);
bool pf_map64_get(const pf_map64 *m, uint64_t key, uint64_t *val);

/* ---- string interning ----------------------------------------------------- */

/* Strings get dense ids 0..n-1; id 0 is always "" . */
typedef struct pf_strtab {
	pf_arena arena;
	const char **strs;     /* id -> string */
	uint32_t *lens;
	size_t n, cap;
	uint32_t *slots;       /* hash slots: id+1, 0 = empty */
	size_t nslots;
} pf_strtab;

int pf_strtab_init(pf_strtab *t);
void pf_strtab_free(pf_strtab *t);
/* Returns the id (>= 0) or -1 on allocation failure. */
int64_t pf_strtab_intern(pf_strtab *t, const char *s, size_t len);
/* The id of a string already interned, -1 if it is not (reads only: safe
 * beside other readers) */
int64_t pf_strtab_find(const pf_strtab *t, const char *s, size_t len);
static inline const char *pf_strtab_get(const pf_strtab *t, uint32_t id) { return t->strs[id]; }

/* ---- string lists (comma separated or file://path, one per line) -------- */

typedef struct pf_strlist {
	char **items;
	size_t n, cap;
} pf_strlist;

/* Parse "a,b,c" or "file://path". Returns 0, or a negative proff_errcode with
 * the error text in errbuf. */
int pf_strlist_parse(pf_strlist *l, const char *spec, char *errbuf, size_t errlen);
bool pf_strlist_has(const pf_strlist *l, const char *s);
void pf_strlist_free(pf_strlist *l);

/* One thread waiting for another's progress (a pass or a merge split in
 * two): spinning a little, then yielding, until *done passes need. Its
 * value then, or 0 once *stop is set (the other side failed). */
static inline size_t pf_wait_past(const atomic_size_t *done, size_t need, const atomic_int *stop)
{
	size_t d;
	for (unsigned spin = 0; (d = atomic_load_explicit(done, memory_order_acquire)) <= need; spin++) {
		if (atomic_load_explicit(stop, memory_order_relaxed))
			return 0;
		if (spin > 64)
			sched_yield();
	}
	return d;
}

/* JSON output shared by the writers: a string quoted and escaped (quotes,
 * backslashes, control bytes as \u00XX; NULL as null), a double at full
 * precision (NaN and infinities as null). */
void pf_json_str(FILE *out, const char *s);
void pf_json_num(FILE *out, double v);

#endif
