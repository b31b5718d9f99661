/* kmodule.c — a kernel module's symbols from its ELF file (.ko), placed as
 * perf 6.1 places them.
 *
 * A module's MMAP (pid -1, cpumode kernel) names its file, e.g.
 * "/lib/modules/RELEASE/kernel/x/name.ko"; perf opens that path (under
 * --symfs DIR when given). A .ko is relocatable (ET_REL): its symbols'
 * values are offsets in their sections. perf adds .text's file offset to
 * them and sets the module map's pgoff to the same offset, so the module's
 * load address (the MMAP's start) is the start of its .text: a symbol's
 * runtime address is start + st_value. Symbols of other sections (.init.text,
 * .exit.text, data) perf puts in maps of their own at the sections' ELF
 * addresses (0 in a .ko), where no sample falls: they are left out here.
 *
 * A compressed module (.ko.xz, .ko.gz: how distributions ship them) is
 * read decompressed in memory, as perf 6.1 decompresses it; perf 6.1 knows
 * no zstd module (a kernel map of "name.ko.zst" is a dso of that name with
 * no symbols), nor does proff.
 *
 * The table keeps runtime addresses, as the kallsyms module lines do (the
 * profile keeps module ips as they are). A module named only "[name]", or
 * whose file cannot be opened, takes kallsyms' lines (kallsyms.c); a file
 * that is not a relocatable ELF is said once (sym_dso_problem) and falls
 * back the same way.
 */
#include "symbol-int.h"

#include <fcntl.h>
#include <lzma.h>
#include <stdio.h>
#include <sys/stat.h>
#include <zlib.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file perf would read for d: the recorded path, under --symfs. */
static bool kmodule_path(const sym_dso *d, char *buf, size_t len)
{
	if (d->long_name[0] != '/')
		return false;
	const char *fs = d->ctx->symfs;
	int n = snprintf(buf, len, "%s%s", fs ? fs : "", d->long_name);
	return n > 0 && (size_t)n < len;
}

/* The index and header of the section named want, or 0. */
static size_t section_named(Elf *elf, size_t shstrndx, const char *want, GElf_Shdr *out)
{
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, want)) {
			*out = sh;
			return elf_ndxscn(scn);
		}
	}
	return 0;
}

/* .text's function symbols at d->map_start + st_value. */
static int read_text_symbols(sym_dso *d, Elf *elf)
{
	size_t shstrndx;
	GElf_Shdr text_sh;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0;
	size_t text = section_named(elf, shstrndx, ".text", &text_sh);
	if (!text)
		return 0;
	uint64_t pgoff = text_sh.sh_offset;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym s;
			if (!gelf_getsym(data, (int)i, &s))
				continue;
			int type = GELF_ST_TYPE(s.st_info);
			if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx != text || !s.st_name)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			uint8_t bind = GELF_ST_BIND(s.st_info);
			int rc = symtab_add(&d->tab, d->map_start + s.st_value, s.st_size, bind, STT_FUNC,
					    name, strlen(name), false);
			if (rc < 0)
				return rc;
		}
		break;
	}
	d->kmod_pgoff = pgoff;
	return 0;
}

bool sym_kmod_compressed(const char *path)
{
	size_t n = strlen(path);
	return (n > 6 && !strcmp(path + n - 6, ".ko.xz")) || (n > 6 && !strcmp(path + n - 6, ".ko.gz"));
}

bool sym_is_kmod_path(const char *path)
{
	size_t n = strlen(path);
	return (n > 3 && !strcmp(path + n - 3, ".ko")) || (n > 6 && !strcmp(path + n - 6, ".ko.xz")) ||
	       (n > 6 && !strcmp(path + n - 6, ".ko.gz"));
}

/* ---- compressed modules ------------------------------------------------------ */

#define KMOD_MAX_BYTES ((size_t)256 << 20)   /* a decompressed module, at most */

enum kmod_codec { KMOD_PLAIN, KMOD_XZ, KMOD_GZIP };

static enum kmod_codec codec_of(const char *path)
{
	size_t n = strlen(path);
	if (n > 3 && !strcmp(path + n - 3, ".xz"))
		return KMOD_XZ;
	if (n > 3 && !strcmp(path + n - 3, ".gz"))
		return KMOD_GZIP;
	return KMOD_PLAIN;
}

/* out grown to hold at least need bytes (doubling, up to KMOD_MAX_BYTES) */
static bool out_grow(unsigned char **out, size_t *cap, size_t need)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 1 << 16;
	while (c < need)
		c *= 2;
	if (c > KMOD_MAX_BYTES)
		c = KMOD_MAX_BYTES;
	if (c < need)
		return false;
	unsigned char *p = realloc(*out, c);
	if (!p)
		return false;
	*out = p;
	*cap = c;
	return true;
}

/* in[0, n) decompressed by codec into *out (malloc'd, *len bytes); false
 * when it is not that format, is cut short or grows past KMOD_MAX_BYTES */
static bool decompress(enum kmod_codec codec, const unsigned char *in, size_t n, unsigned char **out,
		       size_t *len)
{
	size_t cap = 0, used = 0;
	bool ok = false;
	*out = NULL;
	if (codec == KMOD_XZ) {
		lzma_stream z = LZMA_STREAM_INIT;
		if (lzma_stream_decoder(&z, UINT64_MAX, 0) != LZMA_OK)
			return false;
		z.next_in = in;
		z.avail_in = n;
		for (;;) {
			if (!out_grow(out, &cap, used + 1))
				break;
			z.next_out = *out + used;
			z.avail_out = cap - used;
			lzma_ret r = lzma_code(&z, LZMA_FINISH);
			used = cap - z.avail_out;
			if (r == LZMA_STREAM_END) {
				ok = true;
				break;
			}
			if (r != LZMA_OK || (z.avail_out && !z.avail_in))
				break;
			if (!out_grow(out, &cap, cap + 1))
				break;
		}
		lzma_end(&z);
	} else if (codec == KMOD_GZIP) {
		z_stream z = { 0 };
		if (inflateInit2(&z, 15 + 16) != Z_OK)
			return false;
		z.next_in = (unsigned char *)in;
		z.avail_in = (uInt)n;
		for (;;) {
			if (!out_grow(out, &cap, used + 1))
				break;
			z.next_out = *out + used;
			z.avail_out = (uInt)(cap - used);
			int r = inflate(&z, Z_NO_FLUSH);
			used = cap - z.avail_out;
			if (r == Z_STREAM_END) {
				ok = true;
				break;
			}
			if ((r != Z_OK && r != Z_BUF_ERROR) || (z.avail_out && !z.avail_in))
				break;
			if (!z.avail_out && !out_grow(out, &cap, cap + 1))
				break;
		}
		inflateEnd(&z);
	}
	if (!ok) {
		free(*out);
		*out = NULL;
		return false;
	}
	*len = used;
	return true;
}

/* The module file's ELF: opened as it is, or decompressed into *image
 * (freed by the caller after elf_end). NULL with *problem set when a
 * compressed file could not be read. */
static Elf *kmodule_elf(const char *path, int fd, unsigned char **image, const char **problem)
{
	*image = NULL;
	*problem = NULL;
	enum kmod_codec codec = codec_of(path);
	if (codec == KMOD_PLAIN)
		return elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size > KMOD_MAX_BYTES) {
		*problem = "not a compressed module of a size proff reads";
		return NULL;
	}
	size_t n = (size_t)st.st_size;
	unsigned char *in = malloc(n);
	if (!in) {
		*problem = "out of memory";
		return NULL;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(fd, in + got, n - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	size_t len = 0;
	bool ok = got == n && decompress(codec, in, n, image, &len);
	free(in);
	if (!ok) {
		*problem = codec == KMOD_XZ ? "not an xz file that decompresses" : "not a gzip file that decompresses";
		return NULL;
	}
	return elf_memory((char *)*image, len);
}

/* The build-id cache's copy of d (<dir>/.build-id/xx/yyy/elf, or the old
 * layout's link to the file itself), as perf looks for it first. */
static bool kmodule_cache_path(const sym_dso *d, char *buf, size_t len)
{
	const char *dir = d->ctx->buildid_dir;
	if (!d->bid_size || !dir)
		return false;
	char hex[2 * SYM_BUILD_ID_MAX + 1];
	sym_build_id_hex(d->bid, d->bid_size, hex);
	int n = snprintf(buf, len, "%s/.build-id/%.2s/%s", dir, hex, hex + 2);
	if (n <= 0 || (size_t)n >= len)
		return false;
	struct stat st;
	if (stat(buf, &st) == 0 && S_ISREG(st.st_mode))
		return true;
	return (size_t)n + 4 < len && (memcpy(buf + n, "/elf", 5), true);
}

/* 1 when the file at path (decompressed as d's name says: perf decides by
 * the module's name, also for the cache's copy) is a .ko whose build id is
 * d's and its symbols are read; 0 when it is not there or not d's (*why
 * says how, for the one warning); < 0 out of memory. */
static int kmodule_try(sym_dso *d, const char *path, char origin, char *why, size_t why_len)
{
	struct stat st;
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	unsigned char *image;
	const char *problem;
	Elf *elf = kmodule_elf(d->long_name, fd, &image, &problem);
	GElf_Ehdr eh;
	uint8_t id[SYM_BUILD_ID_MAX];
	int rc = 0, idlen;
	if (problem) {
		snprintf(why, why_len, "%s: %s", path, problem);
	} else if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		snprintf(why, why_len, "%s: not an ELF file", path);
	} else if (eh.e_type != ET_REL) {
		snprintf(why, why_len, "%s: not a relocatable ELF file (a .ko)", path);
	} else if (d->bid_size && ((idlen = sym_elf_build_id(elf, id, sizeof(id))) <= 0 ||
				   (size_t)idlen != d->bid_size || memcmp(id, d->bid, d->bid_size))) {
		char want[2 * SYM_BUILD_ID_MAX + 1], got[2 * SYM_BUILD_ID_MAX + 1] = "none";
		sym_build_id_hex(d->bid, d->bid_size, want);
		if (idlen > 0)
			sym_build_id_hex(id, (size_t)idlen, got);
		snprintf(why, why_len, "%s: build id %s, not the recorded %s", path, got, want);
	} else {
		rc = read_text_symbols(d, elf);
		if (rc == 0) {
			symtab_fixup(&d->tab, false);
			d->origin = sym_kmod_compressed(d->long_name) ? 'm' : origin;
			free(d->symsrc_path);
			d->symsrc_path = strdup(path);
			rc = 1;
		} else {
			symtab_free(&d->tab);
		}
	}
	if (elf)
		elf_end(elf);
	free(image);
	close(fd);
	return rc;
}

/* perf's order: the build-id cache ('B'), then the recorded path under
 * --symfs ('K'). A candidate that is there but cannot be d's module is
 * said once (the first, which is why the next ones were tried). */
int sym_kmodule_load(sym_dso *d)
{
	if (!d->have_map_start || !sym_is_kmod_path(d->long_name))
		return 0;
	char path[4096], why[4096 + 160] = "", later[sizeof(why)];
	int rc = 0;
	if (kmodule_cache_path(d, path, sizeof(path)))
		rc = kmodule_try(d, path, 'B', why, sizeof(why));
	if (rc == 0 && kmodule_path(d, path, sizeof(path)))
		rc = kmodule_try(d, path, 'K', why[0] ? later : why, sizeof(why));
	if (rc == 0 && why[0])
		sym_dso_set_problem(d, "%s: the module's symbols are kallsyms' (if any)", why);
	return rc;
}

uint64_t sym_dso_kmod_pgoff(sym_dso *d)
{
	if (d->kind != SYM_DSO_MODULE)
		return 0;
	(void)sym_dso_has_symbols(d);    /* loaded */
	return d->kmod_pgoff;
}
