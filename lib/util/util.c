/* util.c — bounded allocation, arena, hash map, string interning and string
 * lists (see proff/util.h). */
#include "proff/util.h"
#include "proff/error.h"

#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *pf_calloc(size_t n, size_t size)
{
	if (size && n > PF_ALLOC_LIMIT / size)
		return NULL;
	return calloc(n ? n : 1, size ? size : 1);
}

void *pf_calloc_written(size_t n, size_t size)
{
	volatile char *p = pf_calloc(n, size);
	for (size_t i = 0; p && i < n * size; i += 4096)
		p[i] = 0;
	return (void *)p;
}

void *pf_realloc_array(void *p, size_t n, size_t size)
{
	if (size && n > PF_ALLOC_LIMIT / size)
		return NULL;
	size_t bytes = n * size;
	return realloc(p, bytes ? bytes : 1);
}

char *pf_strdup(const char *s) { return s ? strdup(s) : NULL; }

int pf_open_regular(const char *path)
{
	/* stat first: even a non-blocking open of a named pipe counts as its
	 * reader, and closing it again can take the data (and the writer's
	 * life: SIGPIPE) from whoever reads the pipe next */
	struct stat st;
	if (stat(path, &st) < 0)
		return -1;
	if (!S_ISREG(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}
char *pf_strndup(const char *s, size_t n) { return s ? strndup(s, n) : NULL; }

int pf_grow(void **arr, size_t *cap, size_t need, size_t esz)
{
	if (need <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 16;
	while (nc < need) {
		if (nc > PF_ALLOC_LIMIT / 2)
			return -1;
		nc *= 2;
	}
	void *p = pf_realloc_array(*arr, nc, esz);
	if (!p)
		return -1;
	*arr = p;
	*cap = nc;
	return 0;
}

/* ---- arena ---- */

struct pf_arena_chunk {
	pf_arena_chunk *next;
	size_t cap;
	_Alignas(16) unsigned char data[];
};

void pf_arena_init(pf_arena *a) { memset(a, 0, sizeof(*a)); }

void *pf_arena_alloc(pf_arena *a, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	if (!a->head || a->used + size > a->cap) {
		size_t cap = size > 65536 ? size : 65536;
		if (a->head && a->head->cap * 2 > cap && a->head->cap < (1u << 24))
			cap = a->head->cap * 2;
		pf_arena_chunk *c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->next = a->head;
		c->cap = cap;
		a->head = c;
		a->used = 0;
		a->cap = cap;
	}
	void *p = a->head->data + a->used;
	a->used += size;
	a->total += size;
	memset(p, 0, size);
	return p;
}

char *pf_arena_strndup(pf_arena *a, const char *s, size_t n)
{
	char *p = pf_arena_alloc(a, n + 1);
	if (!p)
		return NULL;
	memcpy(p, s, n);
	p[n] = '\0';
	return p;
}

void pf_arena_free(pf_arena *a)
{
	pf_arena_chunk *c = a->head;
	while (c) {
		pf_arena_chunk *n = c->next;
		free(c);
		c = n;
	}
	memset(a, 0, sizeof(*a));
}

uint64_t pf_hash_bytes(const void *p, size_t n, uint64_t seed)
{
	/* FNV-1a over 8-byte words, finished with the 64-bit mixer */
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed;
	while (n >= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ULL;
		h ^= h >> 29;
		s += 8;
		n -= 8;
	}
	while (n--) {
		h = (h ^ *s++) * 0x100000001b3ULL;
	}
	return pf_hash64(h);
}

/* ---- map64 ---- */

void pf_map64_init(pf_map64 *m) { memset(m, 0, sizeof(*m)); }

void pf_map64_free(pf_map64 *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static int map64_rehash(pf_map64 *m, size_t ncap)
{
	uint64_t *k = pf_calloc(ncap, sizeof(*k));
	uint64_t *v = pf_calloc(ncap, sizeof(*v));
	uint8_t *u = pf_calloc(ncap, 1);
	if (!k || !v || !u) {
		free(k); free(v); free(u);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->used[i])
			continue;
		size_t j = pf_hash64(m->keys[i]) & (ncap - 1);
		while (u[j])
			j = (j + 1) & (ncap - 1);
		u[j] = 1;
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys); free(m->vals); free(m->used);
	m->keys = k; m->vals = v; m->used = u; m->cap = ncap;
	return 0;
}

uint64_t *pf_map64_upsert(pf_map64 *m, uint64_t key, bool *found)
{
	if ((m->len + 1) * 4 > m->cap * 3) {
		if (map64_rehash(m, m->cap ? m->cap * 2 : 64) < 0)
			return NULL;
	}
	size_t j = pf_hash64(key) & (m->cap - 1);
	while (m->used[j]) {
		if (m->keys[j] == key) {
			if (found) *found = true;
			return &m->vals[j];
		}
		j = (j + 1) & (m->cap - 1);
	}
	m->used[j] = 1;
	m->keys[j] = key;
	m->vals[j] = 0;
	m->len++;
	if (found) *found = false;
	return &m->vals[j];
}

bool pf_map64_get(const pf_map64 *m, uint64_t key, uint64_t *val)
{
	if (!m->cap)
		return false;
	size_t j = pf_hash64(key) & (m->cap - 1);
	while (m->used[j]) {
		if (m->keys[j] == key) {
			if (val) *val = m->vals[j];
			return true;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return false;
}

/* ---- strtab ---- */

int pf_strtab_init(pf_strtab *t)
{
	memset(t, 0, sizeof(*t));
	pf_arena_init(&t->arena);
	return pf_strtab_intern(t, "", 0) == 0 ? 0 : -1;
}

void pf_strtab_free(pf_strtab *t)
{
	pf_arena_free(&t->arena);
	free(t->strs);
	free(t->lens);
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

static int strtab_rehash(pf_strtab *t, size_t nslots)
{
	uint32_t *s = pf_calloc(nslots, sizeof(*s));
	if (!s)
		return -1;
	for (size_t id = 0; id < t->n; id++) {
		size_t j = pf_hash_bytes(t->strs[id], t->lens[id], 0) & (nslots - 1);
		while (s[j])
			j = (j + 1) & (nslots - 1);
		s[j] = (uint32_t)id + 1;
	}
	free(t->slots);
	t->slots = s;
	t->nslots = nslots;
	return 0;
}

int64_t pf_strtab_find(const pf_strtab *t, const char *str, size_t len)
{
	if (!t->nslots)
		return -1;
	size_t j = pf_hash_bytes(str, len, 0) & (t->nslots - 1);
	while (t->slots[j]) {
		uint32_t id = t->slots[j] - 1;
		if (t->lens[id] == len && memcmp(t->strs[id], str, len) == 0)
			return id;
		j = (j + 1) & (t->nslots - 1);
	}
	return -1;
}

int64_t pf_strtab_intern(pf_strtab *t, const char *str, size_t len)
{
	if ((t->n + 1) * 2 > t->nslots) {
		if (strtab_rehash(t, t->nslots ? t->nslots * 2 : 256) < 0)
			return -1;
	}
	size_t j = pf_hash_bytes(str, len, 0) & (t->nslots - 1);
	while (t->slots[j]) {
		uint32_t id = t->slots[j] - 1;
		if (t->lens[id] == len && memcmp(t->strs[id], str, len) == 0)
			return id;
		j = (j + 1) & (t->nslots - 1);
	}
	if (t->n == UINT32_MAX - 1)
		return -1;
	size_t cap = t->cap;
	if (PF_GROW(t->strs, cap, t->n + 1) < 0)
		return -1;
	if (PF_GROW(t->lens, t->cap, t->n + 1) < 0)
		return -1;
	char *copy = pf_arena_strndup(&t->arena, str, len);
	if (!copy)
		return -1;
	t->strs[t->n] = copy;
	t->lens[t->n] = (uint32_t)len;
	t->slots[j] = (uint32_t)t->n + 1;
	return (int64_t)t->n++;
}

/* ---- strlist ---- */

static int strlist_add(pf_strlist *l, const char *s, size_t n)
{
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	if (!n)
		return 0;
	if (PF_GROW(l->items, l->cap, l->n + 1) < 0)
		return -1;
	l->items[l->n] = strndup(s, n);
	if (!l->items[l->n])
		return -1;
	l->n++;
	return 0;
}

int pf_strlist_parse(pf_strlist *l, const char *spec, char *errbuf, size_t errlen)
{
	if (strncmp(spec, "file://", 7) == 0) {
		FILE *f = fopen(spec + 7, "r");
		if (!f) {
			snprintf(errbuf, errlen, "%s: %s", spec + 7, strerror(errno));
			return PROFF_EIO;
		}
		char *line = NULL;
		size_t cap = 0;
		ssize_t n;
		while ((n = getline(&line, &cap, f)) > 0) {
			while (n && (line[n - 1] == '\n'))
				n--;
			if (strlist_add(l, line, (size_t)n) < 0) {
				free(line);
				fclose(f);
				snprintf(errbuf, errlen, "out of memory");
				return PROFF_ENOMEM;
			}
		}
		free(line);
		fclose(f);
		return 0;
	}
	const char *p = spec;
	for (;;) {
		const char *c = strchr(p, ',');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (strlist_add(l, p, n) < 0) {
			snprintf(errbuf, errlen, "out of memory");
			return PROFF_ENOMEM;
		}
		if (!c)
			break;
		p = c + 1;
	}
	return 0;
}

bool pf_strlist_has(const pf_strlist *l, const char *s)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i], s) == 0)
			return true;
	return false;
}

void pf_strlist_free(pf_strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->items[i]);
	free(l->items);
	memset(l, 0, sizeof(*l));
}

/* ---- address ranges ----------------------------------------------------------- */

int pf_ranges_insert(pf_ranges *r, uint64_t start, uint64_t end, uint64_t pgoff, uint32_t dso)
{
	if (end <= start)
		return 0;
	size_t lo = 0, hi;
	while (lo < r->n && r->v[lo].end <= start)
		lo++;
	for (hi = lo; hi < r->n && r->v[hi].start < end; hi++)
		;
	pf_range repl[3];
	size_t nr = 0;
	if (lo < hi && r->v[lo].start < start) {
		repl[nr] = r->v[lo];
		repl[nr++].end = start;
	}
	repl[nr++] = (pf_range){ start, end, pgoff, dso, 0 };
	if (lo < hi && r->v[hi - 1].end > end) {
		pf_range t = r->v[hi - 1];
		t.pgoff += end - t.start;
		t.start = end;
		repl[nr++] = t;
	}
	size_t n = r->n - (hi - lo) + nr;
	if (PF_GROW(r->v, r->cap, n) < 0)
		return -1;
	memmove(&r->v[lo + nr], &r->v[hi], (r->n - hi) * sizeof(pf_range));
	memcpy(&r->v[lo], repl, nr * sizeof(pf_range));
	r->n = n;
	return 0;
}

int pf_ranges_copy(pf_ranges *dst, const pf_ranges *src)
{
	if (src->n && PF_GROW(dst->v, dst->cap, src->n) < 0)
		return -1;
	if (src->n)
		memcpy(dst->v, src->v, src->n * sizeof(pf_range));
	dst->n = src->n;
	return 0;
}

const pf_range *pf_ranges_find(const pf_ranges *r, uint64_t addr)
{
	if (!r)
		return NULL;
	size_t lo = PF_COUNT_LE(r->v, r->n, start, addr);
	if (lo == 0)
		return NULL;
	const pf_range *m = &r->v[lo - 1];
	return addr < m->end ? m : NULL;
}

void pf_ranges_free(pf_ranges *r)
{
	free(r->v);
	memset(r, 0, sizeof(*r));
}

/* ---- JSON ------------------------------------------------------------------ */

void pf_json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

void pf_json_num(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.17g", v);
	else
		fputs("null", out);
}
