/* symbol.c — the symbolizer core: the context and its DSO registry, finding
 * the ELF a DSO's symbols come from (build-id checked, perf's candidate
 * order), reading .symtab/.dynsym into a sorted table adjusted to perf's
 * map-address (file offset) space, PLT entry synthesis, and lookup.
 *
 * Candidate order for a user DSO, as perf's binary_type_symtab walk:
 *   'l' .gnu_debuglink target, 'B' build-id cache .../elf, 'D' build-id cache
 *   .../debug, 'b' /usr/lib/debug/.build-id/xx/yyy.debug, 'd' the recorded
 *   path. Every path but the build-id cache is prefixed by --symfs. A
 *   candidate whose build-id differs from the recorded one is rejected. The
 *   first candidate with a .symtab gives the symbols (its char is the origin),
 *   the first with a .dynsym is the "runtime" image (PLT, program headers).
 */
#include "symbol-int.h"
#include "proff/error.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- symbol tables ------------------------------------------------------- */

int symtab_add(sym_symtab *t, uint64_t start, uint64_t size, uint8_t bind, uint8_t type,
	       const char *name, size_t namelen, bool is_plt)
{
	if (PF_GROW(t->v, t->cap, t->n + 1) < 0)
		return PROFF_ENOMEM;
	if (t->names_len + namelen + 1 > PF_ALLOC_LIMIT)
		return PROFF_ENOMEM;
	if (t->names_len + namelen + 1 > t->names_cap &&
	    pf_grow((void **)&t->names, &t->names_cap, t->names_len + namelen + 1, 1) < 0)
		return PROFF_ENOMEM;
	sym_ent *e = &t->v[t->n++];
	memcpy(t->names + t->names_len, name, namelen);
	t->names[t->names_len + namelen] = '\0';
	e->name.off = t->names_len;
	t->names_len += namelen + 1;
	e->start = start;
	e->end = start + size;
	e->bind = bind;
	e->type = type;
	e->is_plt = is_plt;
	e->mangled = 0;
	e->order = t->next_order++;
	return 0;
}

/* The name a mangled entry stands for (malloc'd), or NULL when the
 * demangler gives none (the stored name is then the name). */
static char *ent_demangled(const sym_symtab *t, const char *name, uint8_t mangled)
{
	size_t n = strlen(name), sfx = mangled == SYM_MANGLED_PLT ? 4 : 0;
	char *raw = strndup(name, n - sfx);
	if (!raw)
		return NULL;
	char *dem = sym_demangle(raw, t->demangle_params);
	free(raw);
	if (!dem || !sfx)
		return dem;
	size_t dl = strlen(dem);
	char *r = realloc(dem, dl + sfx + 1);
	if (!r) {
		free(dem);
		return NULL;
	}
	memcpy(r + dl, name + n - sfx, sfx + 1);
	return r;
}

static int ent_cmp(const void *a, const void *b)
{
	const sym_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static size_t leading_underscores(const char *s)
{
	size_t n = 0;
	while (s[n] == '_')
		n++;
	return n;
}

/* perf's choose_best_symbol(): true if a is kept over b (same start). */
static bool prefer_first(const sym_symtab *t, const sym_ent *a, const sym_ent *b)
{
	uint64_t la = a->end - a->start, lb = b->end - b->start;
	if (lb == 0 && la > 0)
		return true;
	if (la == 0 && lb > 0)
		return false;
	bool wa = a->bind == STB_WEAK, wb = b->bind == STB_WEAK;
	if (wb && !wa)
		return true;
	if (wa && !wb)
		return false;
	bool ga = a->bind == STB_GLOBAL, gb = b->bind == STB_GLOBAL;
	if (ga && !gb)
		return true;
	if (gb && !ga)
		return false;
	/* perf compares the names it keeps: demangled ones */
	const char *na = t->names + a->name.off, *nb = t->names + b->name.off;
	char *da = a->mangled ? ent_demangled(t, na, a->mangled) : NULL;
	char *db = b->mangled ? ent_demangled(t, nb, b->mangled) : NULL;
	if (da)
		na = da;
	if (db)
		nb = db;
	size_t ua = leading_underscores(na), ub = leading_underscores(nb);
	size_t sa = strlen(na), sb = strlen(nb);
	free(da);
	free(db);
	if (ub > ua)
		return true;
	if (ua > ub)
		return false;
	if (sa != sb)
		return sa > sb;
	return true;
}

static bool kall_is_module(const sym_symtab *t, const sym_ent *e)
{
	return strchr(t->names + e->name.off, '[') != NULL;
}

/* Give zero-sized symbols an end (symbols__fixup_end) and keep one symbol per
 * start address (symbols__fixup_duplicate), in that order as perf does. */
static void fixup_end(sym_symtab *t, bool is_kallsyms)
{
	for (size_t i = 1; i < t->n; i++) {
		sym_ent *prev = &t->v[i - 1], *curr = &t->v[i];
		if (prev->end == prev->start) {
			if (is_kallsyms && kall_is_module(t, prev) != kall_is_module(t, curr))
				prev->end = ((prev->end + 4096) + 4095) / 4096 * 4096;
			else
				prev->end = curr->start;
		}
	}
	if (t->n) {
		sym_ent *last = &t->v[t->n - 1];
		if (last->end == last->start)
			last->end = (last->start + 4095) / 4096 * 4096 + 4096;
	}
}

/* Remember an erase for the replay of perf's tree (symtree.c); without
 * memory for it the table simply gets no tree. */
static void log_erase(sym_symtab *t, const sym_ent *e)
{
	if (!t->track)
		return;
	if (PF_GROW(t->erased, t->erased_cap, t->nerased + 1) < 0) {
		t->track = false;
		return;
	}
	t->erased[t->nerased++] = (sym_erased){ e->start, e->order, t->next_order };
}

static void fixup_duplicate(sym_symtab *t)
{
	size_t w = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (w && t->v[w - 1].start == t->v[i].start) {
			if (!prefer_first(t, &t->v[w - 1], &t->v[i])) {
				log_erase(t, &t->v[w - 1]);
				t->v[w - 1] = t->v[i];
			} else {
				log_erase(t, &t->v[i]);
			}
			continue;
		}
		t->v[w++] = t->v[i];
	}
	t->n = w;
}

/* Sorted by (start, insertion order). Tables often arrive sorted already
 * (kallsyms; every table the second time, in symtab_finish): one check is
 * much cheaper than a merge sort of a sorted array. */
static void symtab_sort(sym_symtab *t)
{
	if (t->n < 2)
		return;
	size_t i = 1;
	while (i < t->n && ent_cmp(&t->v[i - 1], &t->v[i]) < 0)
		i++;
	if (i == t->n)
		return;
	if (i >= t->n / 2) {
		/* a sorted table and entries added after it (the PLT entries
		 * after the fixups): sort the tail, merge the two */
		size_t nt = t->n - i;
		sym_ent *tmp = pf_realloc_array(NULL, t->n, sizeof(*tmp));
		if (tmp) {
			sym_ent *tail = tmp + i;
			memcpy(tail, t->v + i, nt * sizeof(*tail));
			qsort(tail, nt, sizeof(*tail), ent_cmp);
			memcpy(tmp, t->v, i * sizeof(*tmp));
			size_t a = 0, b = 0, k = 0;
			while (a < i && b < nt)
				t->v[k++] = ent_cmp(&tail[b], &tmp[a]) < 0 ? tail[b++] : tmp[a++];
			while (a < i)
				t->v[k++] = tmp[a++];
			while (b < nt)
				t->v[k++] = tail[b++];
			free(tmp);
			return;
		}
	}
	/* entries in insertion order (the usual case): a stable radix sort on
	 * the start address gives (start, order), several times faster than a
	 * merge sort for the 10^5 symbols of a big program */
	bool in_order = true;
	for (i = 1; i < t->n && in_order; i++)
		in_order = t->v[i - 1].order < t->v[i].order;
	sym_ent *tmp = in_order ? pf_realloc_array(NULL, t->n, sizeof(*tmp)) : NULL;
	if (!tmp) {
		qsort(t->v, t->n, sizeof(*t->v), ent_cmp);
		return;
	}
	sym_ent *src = t->v, *dst = tmp;
	for (int shift = 0; shift < 64; shift += 8) {
		size_t cnt[256] = { 0 };
		for (i = 0; i < t->n; i++)
			cnt[(src[i].start >> shift) & 0xff]++;
		if (cnt[(src[0].start >> shift) & 0xff] == t->n)
			continue;       /* every key has this byte: nothing to do */
		size_t pos = 0;
		for (int b = 0; b < 256; b++) {
			size_t c = cnt[b];
			cnt[b] = pos;
			pos += c;
		}
		for (i = 0; i < t->n; i++)
			dst[cnt[(src[i].start >> shift) & 0xff]++] = src[i];
		sym_ent *x = src; src = dst; dst = x;
	}
	if (src != t->v)
		memcpy(t->v, src, t->n * sizeof(*t->v));
	free(tmp);
}

/* Sorting and the two fixups, with names still offsets. */
void symtab_fixup(sym_symtab *t, bool is_kallsyms)
{
	symtab_sort(t);
	fixup_end(t, is_kallsyms);
	fixup_duplicate(t);
}

void symtab_finish(sym_symtab *t, bool is_kallsyms)
{
	(void)is_kallsyms;
	symtab_sort(t);
	/* the room doubling left handed back (a large report reuses it) */
	if (t->cap > t->n && t->n) {
		sym_ent *v = pf_realloc_array(t->v, t->n, sizeof(*v));
		if (v) {
			t->v = v;
			t->cap = t->n;
		}
	}
	if (t->names_cap > t->names_len && t->names_len) {
		char *nm = realloc(t->names, t->names_len);
		if (nm) {
			t->names = nm;
			t->names_cap = t->names_len;
		}
	}
	for (size_t i = 0; i < t->n; i++)
		t->v[i].name.ptr = t->names + t->v[i].name.off;
	if (t->track && symtree_prepare(t) < 0) {
		symtree_free(t->tree);  /* out of memory: the plain lookup */
		t->tree = NULL;
	}
	if (!t->tree) {
		free(t->erased);
		t->erased = NULL;
		t->nerased = t->erased_cap = 0;
	}
	t->track = false;
}

void symtab_free(sym_symtab *t)
{
	for (size_t i = 0; i < t->ndem; i++)
		free(t->dem[i]);
	free(t->dem);
	free(t->v);
	free(t->names);
	free(t->erased);
	symtree_free(t->tree);
	memset(t, 0, sizeof(*t));
}

/* The symbol containing addr: the last one starting at or before addr whose
 * range holds it (a zero-sized symbol holds its own start). Nested symbols are
 * rare; a few predecessors are checked for them. Where symbols overlap, the
 * answer is the one perf's tree lookup meets first (symtree.c); elsewhere
 * both agree. */
const sym_ent *symtab_find(sym_symtab *t, uint64_t addr)
{
	if (t->tree) {
		const sym_tree *tr = t->tree;
		size_t k = PF_COUNT_LE(tr->spans, tr->nspans, lo, addr);
		if (k && addr < tr->spans[k - 1].hi && (tr->kid || symtree_build(t)))
			return symtree_find(t, addr);
	}
	size_t lo = PF_COUNT_LE(t->v, t->n, start, addr);
	for (size_t k = 0; k < 8 && lo > 0; k++, lo--) {
		const sym_ent *e = &t->v[lo - 1];
		if (addr < e->end || (addr == e->start && e->end == e->start))
			return e;
	}
	return NULL;
}

/* ---- build-ids ------------------------------------------------------------ */

void sym_build_id_hex(const uint8_t *id, size_t size, char *out)
{
	static const char hx[] = "0123456789abcdef";
	for (size_t i = 0; i < size; i++) {
		out[2 * i] = hx[id[i] >> 4];
		out[2 * i + 1] = hx[id[i] & 15];
	}
	out[2 * size] = '\0';
}

/* GNU build-id note of an open ELF: from SHT_NOTE sections, else PT_NOTE. */
int sym_elf_build_id(Elf *elf, uint8_t *id, size_t max)
{
	size_t shnum = 0;
	Elf_Scn *scn = NULL;
	if (elf_getshdrnum(elf, &shnum) == 0) {
		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
				continue;
			Elf_Data *data = elf_getdata(scn, NULL);
			if (!data)
				continue;
			size_t off = 0, noff, doff;
			GElf_Nhdr nh;
			while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
				if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
				    memcmp((char *)data->d_buf + noff, "GNU", 4) == 0) {
					size_t n = nh.n_descsz < max ? nh.n_descsz : max;
					memcpy(id, (char *)data->d_buf + doff, n);
					return (int)n;
				}
			}
		}
	}
	size_t phnum = 0;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return -1;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_NOTE)
			continue;
		Elf_Data *data = elf_getdata_rawchunk(elf, ph.p_offset, ph.p_filesz, ELF_T_NHDR);
		if (!data)
			continue;
		size_t off = 0, noff, doff;
		GElf_Nhdr nh;
		while ((off = gelf_getnote(data, off, &nh, &noff, &doff)) > 0) {
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    memcmp((char *)data->d_buf + noff, "GNU", 4) == 0) {
				size_t n = nh.n_descsz < max ? nh.n_descsz : max;
				memcpy(id, (char *)data->d_buf + doff, n);
				return (int)n;
			}
		}
	}
	return -1;
}

/* libelf wants its version set before elf_begin; setting it on every call
 * (one store of a constant, as trace-elf.c and unwind.c do) needs no
 * "done" flag, so no shared mutable state and no race between threads */
static void elf_init(void)
{
	elf_version(EV_CURRENT);
}

int sym_read_build_id(const char *path, uint8_t *id, size_t max, proff_error *err)
{
	elf_init();
	int fd = pf_open_regular(path);
	if (fd < 0)
		return proff_err_sys(err, errno == ENOENT ? PROFF_ENOENT : PROFF_EIO, path, "cannot open");
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(fd);
		return proff_err_set(err, PROFF_EFORMAT, path, 0, "not an ELF file");
	}
	int n = sym_elf_build_id(elf, id, max);
	elf_end(elf);
	close(fd);
	if (n < 0)
		return proff_err_set(err, PROFF_ENOENT, path, PROFF_NO_OFFSET, "no GNU build-id note");
	return n;
}

/* perf stores build-ids zero-padded to 20 bytes; a shorter id in the file
 * matches when the rest of the recorded one is zero. */
static bool bid_equal(const uint8_t *rec, size_t rsz, const uint8_t *got, size_t gsz)
{
	if (gsz > rsz)
		return false;
	if (memcmp(rec, got, gsz) != 0)
		return false;
	for (size_t i = gsz; i < rsz; i++)
		if (rec[i])
			return false;
	return gsz > 0;
}

/* ---- the context and its DSOs -------------------------------------------- */

int sym_mutex_init(pthread_mutex_t *m)
{
	pthread_mutexattr_t a;
	if (pthread_mutexattr_init(&a) != 0)
		return -1;
	int rc = pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE) == 0 && pthread_mutex_init(m, &a) == 0 ? 0 : -1;
	pthread_mutexattr_destroy(&a);
	return rc;
}

int sym_ctx_new(const sym_opts *opts, sym_ctx **out, proff_error *err)
{
	elf_init();
	sym_ctx *c = calloc(1, sizeof(*c));
	if (!c)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	if (sym_mutex_init(&c->lock) < 0) {
		free(c);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	if (opts)
		c->opts = *opts;
	else
		c->opts.demangle = true;
	c->symfs = opts && opts->symfs && *opts->symfs ? strdup(opts->symfs) : NULL;
	c->kallsyms = opts && opts->kallsyms ? strdup(opts->kallsyms) : NULL;
	c->osrelease = opts && opts->recorded_osrelease ? strdup(opts->recorded_osrelease) : NULL;
	if (c->symfs) {
		/* perf: --symfs DIR moves the build-id cache to DIR/.debug, over
		 * --buildid-dir (a symfs is another machine's files) */
		if (asprintf(&c->buildid_dir, "%s/.debug", c->symfs) < 0)
			c->buildid_dir = NULL;
	} else if (opts && opts->buildid_dir) {
		c->buildid_dir = strdup(opts->buildid_dir);
	} else {
		const char *home = getenv("HOME");
		if (home && *home && asprintf(&c->buildid_dir, "%s/.debug", home) < 0)
			c->buildid_dir = NULL;
	}
	/* pointers in the copied options must not outlive the caller's strings */
	c->opts.symfs = c->symfs;
	c->opts.kallsyms = c->kallsyms;
	c->opts.buildid_dir = c->buildid_dir;
	c->opts.recorded_osrelease = c->osrelease;
	pf_map64_init(&c->index);
	if (pf_strtab_init(&c->strs) < 0) {
		sym_ctx_free(c);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	c->strs_init = true;
	*out = c;
	return 0;
}

static void dso_free(sym_dso *d)
{
	sym_dwarf_close(d);
	symtab_free(&d->tab);
	free(d->long_name);
	free(d->short_name);
	free(d->symsrc_path);
	free(d->runtime_path);
	free(d->dwarf_path);
	free(d->problem);
	free(d->loads);
	free(d->image);
	if (d->image_fd >= 0)
		close(d->image_fd);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void sym_ctx_free(sym_ctx *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->ndsos; i++)
		dso_free(c->dsos[i]);
	free(c->dsos);
	pf_map64_free(&c->index);
	symtab_free(&c->kall);
	free(c->kall_path);
	if (c->strs_init)
		pf_strtab_free(&c->strs);
	free(c->symfs);
	free(c->kallsyms);
	free(c->buildid_dir);
	free(c->osrelease);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

void sym_kernel_set_ref(sym_ctx *ctx, uint64_t text_addr)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->have_ref = true;
	ctx->kernel_ref = text_addr;
	pthread_mutex_unlock(&ctx->lock);
}

bool sym_kernel_ref(sym_ctx *ctx, uint64_t *text_addr)
{
	pthread_mutex_lock(&ctx->lock);
	bool have = ctx->have_ref;
	*text_addr = have ? ctx->kernel_ref : 0;
	pthread_mutex_unlock(&ctx->lock);
	return have;
}

static char *make_short_name(const char *name, enum sym_dso_kind kind)
{
	if (name[0] == '[' || (name[0] == '/' && name[1] == '/') || kind == SYM_DSO_ANON)
		return strdup(name);
	const char *s = strrchr(name, '/');
	return strdup(s ? s + 1 : name);
}

static sym_dso *dso_get_locked(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			       size_t build_id_size, enum sym_dso_kind kind, uint64_t key,
			       const uint64_t *map_start);

static sym_dso *dso_get(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			size_t build_id_size, enum sym_dso_kind kind, const uint64_t *map_start);

sym_dso *sym_dso_get(sym_ctx *ctx, const char *filename,
		     const uint8_t *build_id, size_t build_id_size, enum sym_dso_kind kind)
{
	return dso_get(ctx, filename, build_id, build_id_size, kind, NULL);
}

/* a module's map start is part of its identity: two files of one context
 * (a diff) may have loaded it at two addresses */
sym_dso *sym_dso_get_kmodule(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			     size_t build_id_size, uint64_t map_start)
{
	return dso_get(ctx, filename, build_id, build_id_size, SYM_DSO_MODULE, &map_start);
}

static sym_dso *dso_get(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			size_t build_id_size, enum sym_dso_kind kind, const uint64_t *map_start)
{
	if (!filename)
		filename = "";
	if (build_id_size > SYM_BUILD_ID_MAX)
		build_id_size = SYM_BUILD_ID_MAX;
	if (kind == SYM_DSO_USER && ctx->opts.user_dsos)
		return dso_get(ctx->opts.user_dsos, filename, build_id, build_id_size, kind, map_start);
	static const uint8_t none[SYM_BUILD_ID_MAX];
	if (!build_id || !build_id_size) {
		build_id = none;
		build_id_size = 0;
	}
	uint64_t key = pf_hash_bytes(filename, strlen(filename), 0x5d);
	key = pf_hash_bytes(build_id, build_id_size, key) ^ (uint64_t)kind;
	if (map_start)
		key ^= pf_hash64(*map_start);
	pthread_mutex_lock(&ctx->lock);
	sym_dso *r = dso_get_locked(ctx, filename, build_id, build_id_size, kind, key, map_start);
	pthread_mutex_unlock(&ctx->lock);
	return r;
}

static sym_dso *dso_get_locked(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			       size_t build_id_size, enum sym_dso_kind kind, uint64_t key,
			       const uint64_t *map_start)
{
	uint64_t slot;
	if (pf_map64_get(&ctx->index, key, &slot)) {
		for (sym_dso *d = ctx->dsos[slot - 1]; d; d = d->hnext)
			if (d->kind == kind && d->key_bid_size == build_id_size &&
			    strcmp(d->long_name, filename) == 0 &&
			    memcmp(d->bid, build_id, build_id_size) == 0 &&
			    d->have_map_start == (map_start != NULL) && (!map_start || d->map_start == *map_start))
				return d;
	}
	sym_dso *d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	if (sym_mutex_init(&d->lock) < 0) {
		free(d);
		return NULL;
	}
	d->ctx = ctx;
	d->kind = kind;
	d->key = key;
	d->origin = '!';        /* perf -v: no symbol file found */
	d->dwarf_fd = -1;
	d->image_fd = -1;
	d->long_name = strdup(filename);
	d->short_name = make_short_name(filename, kind);
	if (build_id_size)
		memcpy(d->bid, build_id, build_id_size);
	d->bid_size = d->key_bid_size = build_id_size;
	if (map_start) {
		d->map_start = *map_start;
		d->have_map_start = true;
	}
	if (!d->long_name || !d->short_name || PF_GROW(ctx->dsos, ctx->cap, ctx->ndsos + 1) < 0) {
		dso_free(d);
		return NULL;
	}
	bool found;
	uint64_t *v = pf_map64_upsert(&ctx->index, key, &found);
	if (!v) {
		dso_free(d);
		return NULL;
	}
	ctx->dsos[ctx->ndsos++] = d;
	if (found)
		d->hnext = ctx->dsos[*v - 1];
	*v = ctx->ndsos;
	return d;
}

const char *sym_dso_long_name(const sym_dso *d) { return d->long_name; }
const char *sym_dso_short_name(const sym_dso *d) { return d->short_name; }
enum sym_dso_kind sym_dso_kind(const sym_dso *d) { return d->kind; }

/* ---- ELF candidates -------------------------------------------------------- */

typedef struct elf_src {
	int fd;
	Elf *elf;
	char *path;
	char origin;
	bool has_symtab, has_dynsym, has_debug_info;
} elf_src;

static void src_close(elf_src *s)
{
	if (s->elf)
		elf_end(s->elf);
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static void src_scan_sections(elf_src *s)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(s->elf, &shstrndx) != 0)
		shstrndx = 0;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(s->elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB)
			s->has_symtab = true;
		else if (sh.sh_type == SHT_DYNSYM)
			s->has_dynsym = true;
		else if (sh.sh_type == SHT_PROGBITS && shstrndx) {
			const char *n = elf_strptr(s->elf, shstrndx, sh.sh_name);
			if (n && (strcmp(n, ".debug_info") == 0 || strcmp(n, ".zdebug_info") == 0))
				s->has_debug_info = true;
		}
	}
}

/* Open path as an ELF whose build-id matches the dso's (if it has one). */
static bool src_open(sym_dso *d, const char *path, char origin, elf_src *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	s->fd = pf_open_regular(path);
	if (s->fd < 0)
		return false;
	s->elf = elf_begin(s->fd, ELF_C_READ_MMAP, NULL);
	if (!s->elf || elf_kind(s->elf) != ELF_K_ELF)
		goto fail;
	if (d->bid_size) {
		uint8_t id[SYM_BUILD_ID_MAX];
		int n = sym_elf_build_id(s->elf, id, sizeof(id));
		if (n <= 0 || !bid_equal(d->bid, d->bid_size, id, (size_t)n))
			goto fail;
	}
	s->path = strdup(path);
	if (!s->path)
		goto fail;
	s->origin = origin;
	src_scan_sections(s);
	return true;
fail:
	src_close(s);
	return false;
}

/* Open an in-memory image (the running vdso). */
static bool src_open_mem(sym_dso *d, uint8_t *img, size_t size, const char *label, char origin, elf_src *s)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->elf = elf_memory((char *)img, size);
	if (!s->elf || elf_kind(s->elf) != ELF_K_ELF)
		goto fail;
	if (d->bid_size) {
		uint8_t id[SYM_BUILD_ID_MAX];
		int n = sym_elf_build_id(s->elf, id, sizeof(id));
		if (n <= 0 || !bid_equal(d->bid, d->bid_size, id, (size_t)n))
			goto fail;
	}
	s->path = strdup(label);
	if (!s->path)
		goto fail;
	s->origin = origin;
	src_scan_sections(s);
	return true;
fail:
	src_close(s);
	return false;
}

/* snprintf into a path buffer; false (and "") when it does not fit */
static bool __attribute__((format(printf, 3, 4))) fmt_path(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		buf[0] = '\0';
		return false;
	}
	return true;
}

static const char *symfs_join(const sym_ctx *c, const char *path, char *buf, size_t len)
{
	if (!c->symfs)
		return path;
	fmt_path(buf, len, "%s%s%s", c->symfs, path[0] == '/' ? "" : "/", path);
	return buf;
}

/* .gnu_debuglink name of an ELF, or NULL. */
static const char *debuglink_name(Elf *elf)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n || strcmp(n, ".gnu_debuglink") != 0)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data || data->d_size < 2 || !memchr(data->d_buf, '\0', data->d_size))
			return NULL;
		const char *name = data->d_buf;
		return *name && !strchr(name, '/') ? name : NULL;
	}
	return NULL;
}

/* ---- reading symbols --------------------------------------------------------- */

static int load_phdrs(sym_dso *d, Elf *elf)
{
	size_t phnum = 0;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return 0;
	free(d->loads);
	d->loads = NULL;
	d->nloads = 0;
	if (!phnum)
		return 0;
	d->loads = pf_calloc(phnum, sizeof(*d->loads));
	if (!d->loads)
		return PROFF_ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		d->loads[d->nloads++] = (sym_load){ ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_memsz };
	}
	return 0;
}

/* perf's elf_read_program_header(): the PT_LOAD whose [vaddr, vaddr+max(memsz,
 * filesz)) holds v. */
static const sym_load *load_of_vaddr(const sym_dso *d, uint64_t v)
{
	for (size_t i = 0; i < d->nloads; i++) {
		const sym_load *l = &d->loads[i];
		uint64_t sz = l->memsz > l->filesz ? l->memsz : l->filesz;
		if (sz && v >= l->vaddr && v - l->vaddr < sz)
			return l;
	}
	return NULL;
}

bool sym_map_to_vaddr(const sym_dso *d, uint64_t addr, uint64_t *vaddr)
{
	for (size_t i = 0; i < d->nloads; i++) {
		const sym_load *l = &d->loads[i];
		uint64_t sz = l->memsz > l->filesz ? l->memsz : l->filesz;
		if (addr >= l->offset && addr - l->offset < sz) {
			*vaddr = addr - l->offset + l->vaddr;
			return true;
		}
	}
	if (!d->nloads) {
		*vaddr = addr;
		return true;
	}
	return false;
}

static bool name_has(const char *s, const char *part) { return s && strstr(s, part) != NULL; }

/* One ELF symbol, or (is_plt) a PLT entry named "NAME@plt". C++ names are
 * kept mangled and demangled when first looked up (sym_lookup). */
static int add_name(sym_dso *d, uint64_t start, uint64_t size, uint8_t bind, uint8_t type,
		    const char *name, bool is_plt)
{
	uint8_t mangled = 0;
	if (d->ctx->opts.demangle && name[0] == '_' && name[1] == 'Z')
		mangled = is_plt ? SYM_MANGLED_PLT : SYM_MANGLED;
	int rc;
	if (is_plt) {
		size_t a = strlen(name);
		char *tmp = malloc(a + sizeof("@plt"));
		if (!tmp)
			return PROFF_ENOMEM;
		memcpy(tmp, name, a);
		memcpy(tmp + a, "@plt", sizeof("@plt"));
		rc = symtab_add(&d->tab, start, size, bind, type, tmp, a + 4, true);
		free(tmp);
	} else {
		rc = symtab_add(&d->tab, start, size, bind, type, name, strlen(name), false);
	}
	if (rc == 0)
		d->tab.v[d->tab.n - 1].mangled = mangled;
	return rc;
}

/* Symbols of one symbol table (SHT_SYMTAB or SHT_DYNSYM) of syms, adjusted
 * with runtime's program headers, the way dso__load_sym() does for
 * user-space DSOs. */
static int read_elf_symbols(sym_dso *d, elf_src *syms, elf_src *runtime, GElf_Word want)
{
	Elf *elf = syms->elf;
	Elf_Scn *scn = NULL, *tab = NULL;
	GElf_Shdr tabsh;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (gelf_getshdr(scn, &tabsh) && tabsh.sh_type == want) {
			tab = scn;
			break;
		}
	}
	if (!tab)
		return 0;
	Elf_Data *data = elf_getdata(tab, NULL);
	if (!data || !tabsh.sh_entsize)
		return 0;
	size_t nsyms = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t shstr_s = 0, shstr_r = 0;
	if (elf_getshdrstrndx(elf, &shstr_s) != 0)
		shstr_s = 0;
	if (elf_getshdrstrndx(runtime->elf, &shstr_r) != 0)
		shstr_r = 0;
	for (size_t i = 1; i < nsyms; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		int vis = GELF_ST_VISIBILITY(sym.st_other);
		bool is_label = type == STT_NOTYPE && sym.st_name && sym.st_shndx != SHN_UNDEF &&
				sym.st_shndx != SHN_ABS && vis != STV_HIDDEN && vis != STV_INTERNAL;
		bool keep = (type == STT_FUNC || type == STT_GNU_IFUNC || type == STT_OBJECT) &&
			    sym.st_name && sym.st_shndx != SHN_UNDEF;
		if (!is_label && !keep)
			continue;
		if (sym.st_shndx == SHN_ABS || sym.st_shndx >= SHN_LORESERVE)
			continue;
		Elf_Scn *sec = elf_getscn(elf, sym.st_shndx);
		GElf_Shdr sh;
		if (!sec || !gelf_getshdr(sec, &sh))
			continue;
		if (!(sh.sh_flags & SHF_ALLOC))
			continue;
		Elf *secelf = elf;
		size_t secstr = shstr_s;
		if (sh.sh_type == SHT_NOBITS && runtime->elf != elf) {
			sec = elf_getscn(runtime->elf, sym.st_shndx);
			if (!sec || !gelf_getshdr(sec, &sh))
				continue;
			secelf = runtime->elf;
			secstr = shstr_r;
		}
		if (is_label) {
			const char *sn = secstr ? elf_strptr(secelf, secstr, sh.sh_name) : NULL;
			if (!name_has(sn, "text") && !name_has(sn, "data"))
				continue;
		}
		const char *name = elf_strptr(elf, tabsh.sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		uint64_t v = sym.st_value;
		const sym_load *l = load_of_vaddr(d, v);
		if (l)
			v -= l->vaddr - l->offset;
		else
			v -= sh.sh_addr - sh.sh_offset;
		int rc = add_name(d, v, sym.st_size, GELF_ST_BIND(sym.st_info), (uint8_t)type, name, false);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static Elf_Scn *section_by_name(Elf *elf, const char *want, GElf_Shdr *sh)
{
	size_t shstrndx;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return NULL;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		if (!gelf_getshdr(scn, sh))
			continue;
		const char *n = elf_strptr(elf, shstrndx, sh->sh_name);
		if (n && strcmp(n, want) == 0)
			return scn;
	}
	return NULL;
}

/* name@plt for every .rela.plt/.rel.plt entry, in .plt after its header
 * entry, as perf 6.1's dso__synthesize_plt_symbols() places them. */
static int synthesize_plt(sym_dso *d, Elf *elf)
{
	GElf_Shdr plt, rel, dynsh;
	Elf_Scn *relscn = section_by_name(elf, ".rela.plt", &rel);
	if (!relscn)
		relscn = section_by_name(elf, ".rel.plt", &rel);
	if (!relscn || (rel.sh_type != SHT_RELA && rel.sh_type != SHT_REL) || !rel.sh_entsize)
		return 0;
	if (!section_by_name(elf, ".plt", &plt) || plt.sh_type == SHT_NOBITS)
		return 0;
	Elf_Scn *dynscn = elf_getscn(elf, rel.sh_link);
	if (!dynscn || !gelf_getshdr(dynscn, &dynsh) ||
	    (dynsh.sh_type != SHT_DYNSYM && dynsh.sh_type != SHT_SYMTAB))
		return 0;
	Elf_Data *reldata = elf_getdata(relscn, NULL);
	Elf_Data *symdata = elf_getdata(dynscn, NULL);
	if (!reldata || !symdata)
		return 0;
	uint64_t entsize = plt.sh_entsize;
	if (entsize != 8 && entsize != 16)
		entsize = plt.sh_addralign == 8 ? 8 : 16;
	/* perf 6.1 knows no .plt.sec (IBT layout): entries always follow the
	 * .plt header, so .plt.sec samples fall into the symbol before (_init) */
	uint64_t off = plt.sh_offset + entsize;
	size_t n = rel.sh_size / rel.sh_entsize;
	if (n > (1u << 24))
		return 0;
	for (size_t i = 0; i < n; i++) {
		size_t symidx;
		if (rel.sh_type == SHT_RELA) {
			GElf_Rela r;
			if (!gelf_getrela(reldata, (int)i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		} else {
			GElf_Rel r;
			if (!gelf_getrel(reldata, (int)i, &r))
				break;
			symidx = GELF_R_SYM(r.r_info);
		}
		GElf_Sym s;
		const char *name = NULL;
		if (gelf_getsym(symdata, (int)symidx, &s))
			name = elf_strptr(elf, dynsh.sh_link, s.st_name);
		if (!name)
			name = "";      /* perf 6.1 prints "@plt" for IRELATIVE entries */
		int rc = add_name(d, off, entsize, STB_GLOBAL, STT_FUNC, name, true);
		if (rc < 0)
			return rc;
		off += entsize;
	}
	return 0;
}

/* The running process's vdso image, copied (the auxv pointer stays valid, but
 * a copy keeps the dso independent of it). */
static bool running_vdso(uint8_t **img, size_t *size)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	if (!base)
		return false;
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[512];
	unsigned long lo = 0, hi = 0;
	bool ok = false;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "[vdso]"))
			continue;
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo == base && hi > lo)
			ok = true;
		break;
	}
	fclose(f);
	if (!ok || hi - lo > (64u << 20))
		return false;
	*img = malloc(hi - lo);
	if (!*img)
		return false;
	memcpy(*img, (void *)lo, hi - lo);
	*size = hi - lo;
	return true;
}

static int load_user(sym_dso *d)
{
	sym_ctx *c = d->ctx;
	d->tab.demangle_params = c->opts.demangle_params;   /* for lazy demangling */
	char bid_hex[2 * SYM_BUILD_ID_MAX + 1] = "";
	char path[PATH_MAX], tmp[PATH_MAX];
	elf_src cand[6];
	size_t nc = 0;
	int syms_i = -1, run_i = -1, dwarf_i = -1;

	if (!d->bid_size && d->long_name[0] == '/' && d->kind == SYM_DSO_USER) {
		/* no build-id recorded: the file's own, to find its debug files */
		int n = sym_read_build_id(symfs_join(c, d->long_name, tmp, sizeof(tmp)), d->bid,
					  sizeof(d->bid), NULL);
		if (n > 0) {
			d->bid_size = (size_t)n;
			d->bid_from_file = true;
		}
	}
	if (d->bid_size)
		sym_build_id_hex(d->bid, d->bid_size, bid_hex);
	d->tab.track = true;    /* perf's tree shape matters where symbols overlap */

	/* the recorded file: also gives the debuglink */
	elf_src sys;
	bool have_sys = false;
	if (d->kind == SYM_DSO_VDSO) {
		uint8_t *img = NULL;
		size_t sz = 0;
		if (running_vdso(&img, &sz)) {
			if (src_open_mem(d, img, sz, "[vdso]", 'd', &sys)) {
				have_sys = true;
				d->image = img;
				d->image_size = sz;
			} else {
				free(img);
			}
		}
	} else if (d->long_name[0] == '/') {
		have_sys = src_open(d, symfs_join(c, d->long_name, tmp, sizeof(tmp)), 'd', &sys);
	}

	/* 'l' debuglink */
	const char *link = have_sys ? debuglink_name(sys.elf) : NULL;
	if (link && d->long_name[0] == '/') {
		char dir[PATH_MAX];
		fmt_path(dir, sizeof(dir), "%s", d->long_name);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		for (size_t k = 0; slash && k < 3; k++) {
			if (!fmt_path(path, sizeof(path), "%s%s/%s", k == 2 ? "/usr/lib/debug" : "", dir, k == 1 ? ".debug/" : ""))
				continue;
			size_t pl = strlen(path);
			if (!fmt_path(path + pl, sizeof(path) - pl, "%s", link))
				continue;
			if (strcmp(path, d->long_name) == 0)
				continue;
			if (src_open(d, symfs_join(c, path, tmp, sizeof(tmp)), 'l', &cand[nc])) {
				nc++;
				break;
			}
		}
	}
	if (d->bid_size && c->buildid_dir) {
		char base[PATH_MAX];
		fmt_path(base, sizeof(base), "%s/.build-id/%.2s/%s", c->buildid_dir, bid_hex, bid_hex + 2);
		/* 'B': <cache>/.build-id/xx/yyy is a directory holding "elf" (or, in
		 * the old layout, a link to the file itself) */
		fmt_path(path, sizeof(path), "%s/elf", base);
		if (src_open(d, path, 'B', &cand[nc]) || src_open(d, base, 'B', &cand[nc]))
			nc++;
		fmt_path(path, sizeof(path), "%s/debug", base);
		if (src_open(d, path, 'D', &cand[nc]))
			nc++;
		if (d->kind == SYM_DSO_VDSO) {
			fmt_path(path, sizeof(path), "%s/[vdso]/%s/vdso", c->buildid_dir, bid_hex);
			if (src_open(d, path, 'B', &cand[nc]))
				nc++;
		}
	}
	if (d->bid_size) {
		fmt_path(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", bid_hex, bid_hex + 2);
		if (src_open(d, symfs_join(c, path, tmp, sizeof(tmp)), 'b', &cand[nc]))
			nc++;
	}
	if (have_sys)
		cand[nc++] = sys;

	for (size_t i = 0; i < nc; i++) {
		if (syms_i < 0 && cand[i].has_symtab)
			syms_i = (int)i;
		if (run_i < 0 && cand[i].has_dynsym)
			run_i = (int)i;
		if (dwarf_i < 0 && cand[i].has_debug_info)
			dwarf_i = (int)i;
	}
	if (syms_i < 0)
		syms_i = run_i;
	if (run_i < 0)
		run_i = syms_i;
	int rc = 0;
	if (syms_i >= 0) {
		elf_src *ss = &cand[syms_i], *rs = &cand[run_i];
		d->origin = ss->origin;
		d->symsrc_path = strdup(ss->path);
		d->runtime_path = strdup(rs->path);
		if (dwarf_i >= 0)
			d->dwarf_path = strdup(cand[dwarf_i].path);
		rc = load_phdrs(d, rs->elf);
		/* .symtab, then .dynsym of the same file (perf >= 5.14 reads both);
		 * each pass ends with the end/duplicate fixups over everything */
		if (rc == 0 && ss->has_symtab) {
			rc = read_elf_symbols(d, ss, rs, SHT_SYMTAB);
			symtab_fixup(&d->tab, false);
		}
		if (rc == 0 && ss->has_dynsym) {
			rc = read_elf_symbols(d, ss, rs, SHT_DYNSYM);
			symtab_fixup(&d->tab, false);
		}
		if (rc == 0)
			rc = synthesize_plt(d, rs->elf);
		if (!d->tab.n)
			d->origin = '!';
	}
	for (size_t i = 0; i < nc; i++)
		src_close(&cand[i]);
	return rc;
}

static void dso_load(sym_dso *d);

/* "/tmp/perf-PID.map" (JIT symbol files, perfmap.c), perf's
 * dso__load_perf_map(); origin 'j'. */
static bool is_perf_map(const char *name)
{
	return sym_is_perf_map(name, NULL);
}

void sym_dso_set_problem(sym_dso *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	free(d->problem);
	d->problem = s;
}

static int perfmap_add(void *arg, const sym_perfmap_entry *e)
{
	sym_dso *d = arg;
	return symtab_add(&d->tab, e->start, e->size, STB_GLOBAL, STT_FUNC, e->name, e->name_len, false);
}

/* The map file: under --symfs when it is there, else where the process
 * wrote it (perf reads it there only). Symbols are taken from a regular
 * file only. perf 6.1 reads a map whatever its owner (older perfs ignored
 * one owned by another user than root or the reader): proff reads it as
 * perf does, and says so, since anyone could have written it. */
static int load_perf_map(sym_dso *d)
{
	char tmp[PATH_MAX];
	const char *path = symfs_join(d->ctx, d->long_name, tmp, sizeof(tmp));
	struct stat st;
	if (lstat(path, &st) < 0 && path != d->long_name)
		path = d->long_name;
	if (lstat(path, &st) < 0)
		return 0;   /* no map: perf prints the addresses, so does proff */
	bool foreign = S_ISREG(st.st_mode) && st.st_uid && st.st_uid != geteuid();
	int pfd = pf_open_regular(path);
	FILE *f = pfd >= 0 ? fdopen(pfd, "r") : NULL;
	if (!f && pfd >= 0)
		close(pfd);
	if (!f) {
		sym_dso_set_problem(d, "%s: %s: its JIT symbols are not used", path,
			    errno == EINVAL ? "not a regular file" : strerror(errno));
		return 0;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	sym_perfmap_stats ps = { 0 };
	while (rc == 0 && (len = getline(&line, &cap, f)) > 0) {
		sym_perfmap_entry e;
		ps.lines++;
		if (sym_perfmap_line(line, (size_t)len, &e)) {
			ps.loose += !e.strict;
			rc = perfmap_add(d, &e);
		} else {
			ps.skipped++;
		}
	}
	free(line);
	fclose(f);
	if (rc == 0 && (ps.skipped || ps.loose))
		sym_dso_set_problem(d, "%s: %zu of %zu lines are not \"START SIZE name\" (hex): %zu skipped, "
			    "%zu read as perf reads them%s", path, ps.skipped + ps.loose, ps.lines, ps.skipped,
			    ps.loose, foreign ? "; owned by another user than root or you: read all the same, as perf does" : "");
	else if (rc == 0 && foreign)
		sym_dso_set_problem(d, "%s: owned by uid %u, neither root nor you: its JIT symbols are read all the "
			    "same, as perf 6.1 does", path, (unsigned)st.st_uid);
	/* no end or duplicate fixups: perf adds the symbols as they are (a
	 * size of 0 holds its start address only) */
	if (rc == 0 && d->tab.n)
		d->origin = 'j';
	return rc;
}

const char *sym_dso_problem(sym_dso *d)
{
	dso_load(d);
	return d->problem;
}

static void dso_load_locked(sym_dso *d);

static void dso_load(sym_dso *d)
{
	if (__atomic_load_n(&d->loaded, __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&d->lock);
	if (!d->loaded && !d->loading) {
		d->loading = true;
		dso_load_locked(d);
		__atomic_store_n(&d->loaded, true, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
}

static void dso_load_locked(sym_dso *d)
{
	int rc = 0;
	switch (d->kind) {
	case SYM_DSO_USER:
	case SYM_DSO_VDSO:
		rc = is_perf_map(d->long_name) ? load_perf_map(d) : load_user(d);
		break;
	case SYM_DSO_KERNEL:
		rc = sym_kernel_load(d);
		break;
	case SYM_DSO_MODULE:
		/* the .ko when it can be read, as perf prefers it; else kallsyms' lines */
		rc = sym_kmodule_load(d);
		rc = rc == 0 ? sym_kernel_load(d) : rc > 0 ? 0 : rc;
		/* perf's module dsos say 'K' ('m' compressed) whatever they
		 * read, but for a .ko from the build-id cache ('B') */
		if (d->origin != 'B')
			d->origin = sym_kmod_compressed(d->long_name) ? 'm' : 'K';
		break;
	case SYM_DSO_ANON:
		if (is_perf_map(d->long_name))
			rc = load_perf_map(d);
		break;
	}
	if (rc < 0)
		symtab_free(&d->tab);   /* out of memory: behave as "no symbols" */
	symtab_finish(&d->tab, false);
	/* perf's tree (where symbols overlap) built now, under the dso's lock:
	 * lookups from several threads then only read the table */
	if (d->tab.tree && !d->tab.tree->kid)
		symtree_build(&d->tab);
}

/* The ELF file a user dso's code was loaded from (its program headers and
 * .eh_frame: what an unwinder reads), as the symbol search found it. The
 * vdso's is the build-id cache's copy, or the running vdso (the same
 * build-id) handed over in a memfd. */
const char *sym_dso_unwind_path(sym_dso *d)
{
	if (d->kind != SYM_DSO_USER && d->kind != SYM_DSO_VDSO)
		return NULL;
	dso_load(d);
	if (d->kind == SYM_DSO_USER || (d->runtime_path && d->runtime_path[0] == '/'))
		return d->runtime_path;
	if (!d->image || !d->runtime_path)
		return NULL;
	pthread_mutex_lock(&d->lock);
	if (d->image_fd < 0) {
		int fd = memfd_create("proff-vdso", MFD_CLOEXEC);
		if (fd >= 0 && write(fd, d->image, d->image_size) == (ssize_t)d->image_size) {
			d->image_fd = fd;
			snprintf(d->image_path, sizeof(d->image_path), "/proc/self/fd/%d", fd);
		} else if (fd >= 0) {
			close(fd);
		}
	}
	const char *path = d->image_fd >= 0 ? d->image_path : NULL;
	pthread_mutex_unlock(&d->lock);
	return path;
}

bool sym_dso_extent(sym_dso *d, uint64_t *lo, uint64_t *hi)
{
	dso_load(d);
	if (!d->tab.n)
		return false;
	*lo = d->tab.v[0].start;
	uint64_t end = 0;
	for (size_t i = 0; i < d->tab.n; i++)
		if (d->tab.v[i].end > end)
			end = d->tab.v[i].end;
	*hi = end;
	return true;
}

bool sym_dso_has_symbols(sym_dso *d)
{
	dso_load(d);
	return d->tab.n > 0;
}

char sym_dso_origin(const sym_dso *d)
{
	dso_load((sym_dso *)d);
	return d->origin;
}

/* A mangled entry's name demangled, once (under the dso's lock: a
 * context may be shared by threads); kept as it is when the demangler
 * gives nothing or memory runs out. */
static void demangle_entry(sym_dso *d, sym_ent *e)
{
	pthread_mutex_lock(&d->lock);
	if (e->mangled) {
		sym_symtab *t = &d->tab;
		char *dem = ent_demangled(t, e->name.ptr, e->mangled);
		if (dem && PF_GROW(t->dem, t->dem_cap, t->ndem + 1) == 0) {
			t->dem[t->ndem++] = dem;
			e->name.ptr = dem;
		} else {
			free(dem);
		}
		__atomic_store_n(&e->mangled, 0, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&d->lock);
}

bool sym_lookup(sym_dso *d, uint64_t addr, sym_info *out)
{
	dso_load(d);
	const sym_ent *e = symtab_find(&d->tab, addr);
	if (!e)
		return false;
	if (out) {
		if (__atomic_load_n(&e->mangled, __ATOMIC_ACQUIRE))
			demangle_entry(d, (sym_ent *)e);
		out->name = e->name.ptr;
		out->start = e->start;
		out->end = e->end;
		out->is_plt = e->is_plt;
	}
	return true;
}
