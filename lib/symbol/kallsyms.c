/* kallsyms.c — kernel and module symbols from a kallsyms file.
 *
 * Which file: --kallsyms FILE always; none under --symfs DIR (perf reads no
 * local file then: the kernel's samples show addresses); else the copy perf record keeps in the
 * build-id cache ([kernel.kallsyms]/<id>/kallsyms), else /proc/kallsyms when
 * the recorded kernel build-id is the running kernel's (/sys/kernel/notes),
 * else /proc/kallsyms when no build-id was recorded and the recorded
 * osrelease is `uname -r` (or none was recorded). The file is parsed once per
 * context; the kernel dso takes the lines without a "[module]" tag, each
 * module dso the lines with its tag.
 *
 * Addresses are runtime addresses. The kernel's symbols are relocated by the
 * difference between the recorded _text address (sym_kernel_set_ref) and the
 * file's _text, as perf does with its reference relocation symbol. A file
 * whose addresses are all zero (kptr_restrict) gives no symbols.
 */
#include "symbol-int.h"
#include "proff/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#define KSYM_NAME_MAX 512

/* GNU build-id from a kernel notes blob (/sys/kernel/notes). */
static int notes_build_id(const char *path, uint8_t *id, size_t max)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	uint8_t buf[4096];
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	size_t off = 0;
	while (off + 12 <= n) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + off, 4);
		memcpy(&descsz, buf + off + 4, 4);
		memcpy(&type, buf + off + 8, 4);
		off += 12;
		size_t nal = (namesz + 3) & ~3u, dal = (descsz + 3) & ~3u;
		if (nal > n - off || dal > n - off - nal)
			break;
		if (type == 3 /* NT_GNU_BUILD_ID */ && namesz == 4 && memcmp(buf + off, "GNU", 4) == 0) {
			size_t k = descsz < max ? descsz : max;
			memcpy(id, buf + off + nal, k);
			return (int)k;
		}
		off += nal + dal;
	}
	return -1;
}

static bool file_exists(const char *p)
{
	FILE *f = fopen(p, "r");
	if (!f)
		return false;
	fclose(f);
	return true;
}

static char *choose_kallsyms(sym_ctx *c, const sym_dso *d)
{
	if (c->kallsyms)
		return strdup(c->kallsyms);
	if (c->symfs)
		return NULL;    /* perf: no local file when a symfs is given */
	if (d->bid_size) {
		/* the copy perf record saved is the same text as the running
		 * kernel's when the ids match, and much faster to read than
		 * /proc/kallsyms (~0.3 s of kernel time for 120k lines) */
		if (c->buildid_dir) {
			char hex[2 * SYM_BUILD_ID_MAX + 1], *p = NULL;
			sym_build_id_hex(d->bid, d->bid_size, hex);
			if (asprintf(&p, "%s/[kernel.kallsyms]/%s/kallsyms", c->buildid_dir, hex) >= 0) {
				if (file_exists(p))
					return p;
				free(p);
			}
		}
		uint8_t id[SYM_BUILD_ID_MAX] = { 0 };
		int n = notes_build_id("/sys/kernel/notes", id, sizeof(id));
		if (n > 0 && (size_t)n <= d->bid_size && memcmp(id, d->bid, (size_t)n) == 0)
			return strdup("/proc/kallsyms");
		if (n > 0)      /* a different kernel, and no saved copy */
			return NULL;
	}
	if (c->osrelease && *c->osrelease) {
		struct utsname u;
		if (uname(&u) != 0 || strcmp(u.release, c->osrelease) != 0)
			return NULL;
	}
	return strdup("/proc/kallsyms");
}

/* a hex digit's value + 1; 0 for anything else */
static const uint8_t hexval[256] = {
	['0'] = 0 + 1, ['1'] = 1 + 1, ['2'] = 2 + 1, ['3'] = 3 + 1, ['4'] = 4 + 1,
	['5'] = 5 + 1, ['6'] = 6 + 1, ['7'] = 7 + 1, ['8'] = 8 + 1, ['9'] = 9 + 1,
	['a'] = 10 + 1, ['b'] = 11 + 1, ['c'] = 12 + 1, ['d'] = 13 + 1, ['e'] = 14 + 1, ['f'] = 15 + 1,
	['A'] = 10 + 1, ['B'] = 11 + 1, ['C'] = 12 + 1, ['D'] = 13 + 1, ['E'] = 14 + 1, ['F'] = 15 + 1,
};

/* Parse a kallsyms file into t ("ADDR TYPE NAME[\t[MODULE]]"); only the
 * types perf keeps (T, W, D, B in either case). Returns 0 or < 0. */
static int parse_kallsyms(const char *path, sym_symtab *t, uint64_t *text_addr, bool *have_text,
			  size_t *nbad, uint64_t *first_bad, proff_error *err)
{
	/* 64 KB at a time, lines parsed by hand: stdio line reads and strtoull
	 * were most of the time of a kernel-symbol load (a buffer for the whole
	 * file would raise malloc's mmap threshold for the rest of the run) */
	FILE *f = fopen(path, "r");
	if (!f)
		return proff_err_sys(err, PROFF_EIO, path, "cannot open");
	enum { KBUF = 65536 };
	char *buf = malloc(KBUF);
	if (!buf) {
		fclose(f);
		return proff_err_set(err, PROFF_ENOMEM, path, PROFF_NO_OFFSET, "out of memory");
	}
	size_t len = 0, pos = 0;
	uint64_t base = 0;          /* file offset of buf[0] */
	bool eof = false, any_nonzero = false;
	int rc = 0;
	for (;;) {
		char *nl = pos < len ? memchr(buf + pos, '\n', len - pos) : NULL;
		if (!nl && !eof) {
			/* keep the partial line, read more */
			memmove(buf, buf + pos, len - pos);
			base += pos;
			len -= pos;
			pos = 0;
			size_t n = fread(buf + len, 1, KBUF - len, f);
			len += n;
			if (n == 0) {
				if (ferror(f)) {
					rc = proff_err_sys(err, PROFF_EIO, path, "cannot read");
					break;
				}
				eof = true;
			}
			if (len == KBUF && !memchr(buf, '\n', len)) {
				rc = proff_err_set(err, PROFF_EFORMAT, path, base, "malformed kallsyms line");
				break;
			}
			continue;
		}
		if (pos >= len)
			break;
		uint64_t lineoff = base + pos;
		char *line = buf + pos;
		size_t ll = nl ? (size_t)(nl - line) : len - pos;
		pos += ll + (nl ? 1 : 0);
		uint64_t a = 0;
		size_t k = 0;
		if (ll > 16 && line[16] == ' ') {
			/* 64-bit kernels: always 16 digits, parsed without a loop test */
			unsigned ok = 1;
#define HEX4(i) do { \
				unsigned v0 = hexval[(unsigned char)line[i]], v1 = hexval[(unsigned char)line[i + 1]]; \
				unsigned v2 = hexval[(unsigned char)line[i + 2]], v3 = hexval[(unsigned char)line[i + 3]]; \
				ok &= (v0 != 0) & (v1 != 0) & (v2 != 0) & (v3 != 0); \
				a = a << 16 | (uint64_t)((v0 - 1) << 12 | (v1 - 1) << 8 | (v2 - 1) << 4 | (v3 - 1)); \
			} while (0)
			HEX4(0); HEX4(4); HEX4(8); HEX4(12);
#undef HEX4
			k = ok ? 16 : 0;
		} else {
			for (; k < ll && k < 17; k++) {
				unsigned v = hexval[(unsigned char)line[k]];
				if (!v)
					break;
				a = a << 4 | (v - 1);
			}
		}
		/* a line not of the form (perf skips it too): counted, skipped */
		size_t nlen = k && k <= 16 && k + 3 <= ll ? strnlen(line + k + 3, ll - k - 3) : 0;
		if (k == 0 || k > 16 || k + 3 > ll || line[k] != ' ' || line[k + 2] != ' ' ||
		    nlen == 0 || nlen >= KSYM_NAME_MAX) {
			if (ll && !(*nbad)++)
				*first_bad = lineoff;
			continue;
		}
		char type = line[k + 1];
		const char *name = line + k + 3;
		if (a)
			any_nonzero = true;
		if (nlen == 5 && memcmp(name, "_text", 5) == 0) {
			*text_addr = a;
			*have_text = true;
		}
		/* ASCII case, not the locale's */
		bool upper = type >= 'A' && type <= 'Z';
		char up = upper || type < 'a' || type > 'z' ? type : (char)(type - 'a' + 'A');
		if (up != 'T' && up != 'W' && up != 'D' && up != 'B')
			continue;
		uint8_t bind = type == 'W' ? STB_WEAK : upper ? STB_GLOBAL : STB_LOCAL;
		uint8_t stype = (up == 'T' || up == 'W') ? STT_FUNC : STT_OBJECT;
		rc = symtab_add(t, a, 0, bind, stype, name, nlen, false);
		if (rc < 0) {
			proff_err_set(err, rc, path, lineoff, "out of memory");
			break;
		}
	}
	free(buf);
	fclose(f);
	if (rc == 0 && !any_nonzero)
		t->n = 0;       /* addresses hidden (kptr_restrict) */
	return rc;
}

/* The module a kallsyms name belongs to ("name\t[mod]"), or NULL. */
static const char *kall_module(const char *name, size_t *mlen)
{
	const char *tab = strchr(name, '\t');
	if (!tab || tab[1] != '[')
		return NULL;
	const char *m = tab + 2, *e = strchr(m, ']');
	*mlen = e ? (size_t)(e - m) : strlen(m);
	return m;
}

/* "ext4" from "[ext4]", "/lib/modules/x/ext4.ko.xz", "nf-nat.ko" ("-" -> "_") */
static void module_tag(const char *long_name, char *out, size_t len)
{
	if (long_name[0] == '/' && !sym_is_kmod_path(long_name)) {
		out[0] = '\0';     /* a kernel map of another file: no module's lines */
		return;
	}
	const char *b = strrchr(long_name, '/');
	b = b ? b + 1 : long_name;
	if (*b == '[')
		b++;
	size_t i = 0;
	for (; *b && *b != ']' && *b != '.' && i + 1 < len; b++)
		out[i++] = *b == '-' ? '_' : *b;
	out[i] = '\0';
}

static int kernel_load_locked(sym_dso *d);

/* The context's kallsyms table is shared: under the context lock. */
int sym_kernel_load(sym_dso *d)
{
	pthread_mutex_lock(&d->ctx->lock);
	int rc = kernel_load_locked(d);
	pthread_mutex_unlock(&d->ctx->lock);
	return rc;
}

static int kernel_load_locked(sym_dso *d)
{
	sym_ctx *c = d->ctx;
	if (!c->kallsyms_tried) {
		c->kallsyms_tried = true;
		c->kall_path = choose_kallsyms(c, d);
		if (c->kall_path) {
			proff_error e;
			uint64_t text = 0;
			bool have_text = false;
			if (parse_kallsyms(c->kall_path, &c->kall, &text, &have_text, &c->kall_bad,
					   &c->kall_first_bad, &e) < 0) {
				symtab_free(&c->kall);
			} else {
				/* fixups over the whole file, then relocate the kernel part */
				sym_symtab *t = &c->kall;
				symtab_fixup(t, true);
				if (c->have_ref && have_text && text != c->kernel_ref) {
					uint64_t delta = text - c->kernel_ref;
					for (size_t i = 0; i < t->n; i++) {
						if (strchr(t->names + t->v[i].name.off, '\t'))
							continue;
						t->v[i].start -= delta;
						t->v[i].end -= delta;
					}
				}
			}
		}
	}
	sym_symtab *k = &c->kall;
	if (c->kall_bad && d->kind == SYM_DSO_KERNEL)
		sym_dso_set_problem(d, "%s: %zu lines are not \"ADDRESS TYPE NAME\" (the first at byte "
				    "offset %llu): skipped, as perf does", c->kall_path, c->kall_bad,
				    (unsigned long long)c->kall_first_bad);
	if (!c->kall_path && c->symfs && d->kind == SYM_DSO_KERNEL)
		d->origin = '!';        /* perf -v: no symbol file was looked for */
	if (!k->n)
		return 0;
	if (d->kind == SYM_DSO_KERNEL) {
		/* the kernel takes the parsed table itself, its own symbols
		 * moved to the front; the modules' (usually few) are copied into
		 * a small table kept for later module dsos. No second copy of
		 * the kernel's symbols is ever made. */
		sym_symtab mods = { 0 };
		size_t w = 0;
		for (size_t i = 0; i < k->n; i++) {
			const sym_ent *e = &k->v[i];
			const char *name = k->names + e->name.off;
			size_t mlen = 0;
			if (!kall_module(name, &mlen)) {
				k->v[w++] = *e;
				continue;
			}
			if (symtab_add(&mods, e->start, e->end - e->start, e->bind, e->type, name, strlen(name),
				       false) < 0) {
				symtab_free(&mods);
				return PROFF_ENOMEM;
			}
		}
		k->n = w;
		symtab_free(&d->tab);
		d->tab = *k;
		*k = mods;
		if (d->tab.n)
			d->origin = 'k';
		return 0;
	}
	char tag[256] = "";
	if (d->kind == SYM_DSO_MODULE)
		module_tag(d->long_name, tag, sizeof(tag));
	for (size_t i = 0; i < k->n; i++) {
		const sym_ent *e = &k->v[i];
		const char *name = k->names + e->name.off;
		size_t mlen = 0;
		const char *mod = kall_module(name, &mlen);
		size_t nlen = mod ? (size_t)(strchr(name, '\t') - name) : strlen(name);
		if (d->kind == SYM_DSO_KERNEL ? mod != NULL
		    : (!mod || mlen != strlen(tag) || memcmp(mod, tag, mlen) != 0))
			continue;
		int rc = symtab_add(&d->tab, e->start, e->end - e->start, e->bind, e->type, name, nlen, false);
		if (rc < 0)
			return rc;
	}
	if (d->tab.n)
		d->origin = 'k';
	return 0;
}
