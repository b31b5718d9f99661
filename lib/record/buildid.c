/* buildid.c — GNU build-id of an ELF file or memory image, and the perf
 * build-id cache (~/.debug layout) that keeps the exact binaries a profile
 * was recorded against:
 *     DIR/<abs path>/<build-id hex>/elf        (kallsyms, vdso for those)
 *     DIR/.build-id/<2 hex>/<38 hex> -> ../../<abs path>/<build-id hex>
 * Every size read from the ELF file is bounds-checked against the file. */
#include "rec-int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

typedef int (*rd_fn)(void *ctx, uint64_t off, void *buf, size_t len);

struct memsrc { const uint8_t *p; size_t len; };

static int mem_rd(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct memsrc *m = ctx;
	if (off > m->len || len > m->len - off)
		return -1;
	memcpy(buf, m->p + off, len);
	return 0;
}

static int fd_rd(void *ctx, uint64_t off, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	ssize_t n = pread(fd, buf, len, (off_t)off);
	return n == (ssize_t)len ? 0 : -1;
}

/* Scan a note area [off, off+size) for NT_GNU_BUILD_ID. */
static int scan_notes(rd_fn rd, void *ctx, uint64_t off, uint64_t size, uint8_t id[20])
{
	if (size > (1u << 20))
		size = 1u << 20;
	uint8_t *buf = malloc(size ? size : 1);
	if (!buf)
		return -1;
	if (rd(ctx, off, buf, size)) {
		free(buf);
		return -1;
	}
	uint64_t p = 0;
	int ret = -1;
	while (p + 12 <= size) {
		uint32_t namesz, descsz, type;
		memcpy(&namesz, buf + p, 4);
		memcpy(&descsz, buf + p + 4, 4);
		memcpy(&type, buf + p + 8, 4);
		uint64_t name_off = p + 12;
		uint64_t desc_off = name_off + (((uint64_t)namesz + 3) & ~3ull);
		uint64_t next = desc_off + (((uint64_t)descsz + 3) & ~3ull);
		if (next > size || desc_off > size)
			break;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name_off, "GNU", 4) &&
		    descsz > 0) {
			size_t n = descsz > 20 ? 20 : descsz;
			memcpy(id, buf + desc_off, n);
			ret = (int)n;
			break;
		}
		p = next;
	}
	free(buf);
	return ret;
}

static int elf_build_id(rd_fn rd, void *ctx, uint8_t id[20])
{
	unsigned char ident[EI_NIDENT];
	if (rd(ctx, 0, ident, sizeof(ident)) || memcmp(ident, ELFMAG, SELFMAG))
		return -1;
	if (ident[EI_DATA] != ELFDATA2LSB)
		return -1;   /* host is little-endian x86-64/arm64: native files only */
	uint64_t phoff, shoff;
	unsigned phnum, phentsize, shnum, shentsize;
	bool is64 = ident[EI_CLASS] == ELFCLASS64;
	if (is64) {
		Elf64_Ehdr eh;
		if (rd(ctx, 0, &eh, sizeof(eh)))
			return -1;
		phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
		shoff = eh.e_shoff; shnum = eh.e_shnum; shentsize = eh.e_shentsize;
	} else if (ident[EI_CLASS] == ELFCLASS32) {
		Elf32_Ehdr eh;
		if (rd(ctx, 0, &eh, sizeof(eh)))
			return -1;
		phoff = eh.e_phoff; phnum = eh.e_phnum; phentsize = eh.e_phentsize;
		shoff = eh.e_shoff; shnum = eh.e_shnum; shentsize = eh.e_shentsize;
	} else {
		return -1;
	}
	for (unsigned i = 0; i < phnum && i < 256; i++) {
		uint32_t type;
		uint64_t off, size;
		if (is64) {
			Elf64_Phdr ph;
			if (phentsize < sizeof(ph) || rd(ctx, phoff + (uint64_t)i * phentsize, &ph, sizeof(ph)))
				break;
			type = ph.p_type; off = ph.p_offset; size = ph.p_filesz;
		} else {
			Elf32_Phdr ph;
			if (phentsize < sizeof(ph) || rd(ctx, phoff + (uint64_t)i * phentsize, &ph, sizeof(ph)))
				break;
			type = ph.p_type; off = ph.p_offset; size = ph.p_filesz;
		}
		if (type == PT_NOTE) {
			int n = scan_notes(rd, ctx, off, size, id);
			if (n > 0)
				return n;
		}
	}
	for (unsigned i = 0; i < shnum && i < 4096; i++) {
		uint32_t type;
		uint64_t off, size;
		if (is64) {
			Elf64_Shdr sh;
			if (shentsize < sizeof(sh) || rd(ctx, shoff + (uint64_t)i * shentsize, &sh, sizeof(sh)))
				break;
			type = sh.sh_type; off = sh.sh_offset; size = sh.sh_size;
		} else {
			Elf32_Shdr sh;
			if (shentsize < sizeof(sh) || rd(ctx, shoff + (uint64_t)i * shentsize, &sh, sizeof(sh)))
				break;
			type = sh.sh_type; off = sh.sh_offset; size = sh.sh_size;
		}
		if (type == SHT_NOTE) {
			int n = scan_notes(rd, ctx, off, size, id);
			if (n > 0)
				return n;
		}
	}
	return -1;
}

int rec_build_id_notes(const void *buf, size_t len, uint8_t id[20])
{
	struct memsrc m = { buf, len };
	return scan_notes(mem_rd, &m, 0, len, id);
}

int rec_build_id_mem(const void *img, size_t len, uint8_t id[20])
{
	struct memsrc m = { img, len };
	return elf_build_id(mem_rd, &m, id);
}

int rec_read_build_id(const char *path, uint8_t id[20], proff_error *err)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return proff_err_sys(err, PROFF_EIO, path, "cannot open");
	int n = elf_build_id(fd_rd, &fd, id);
	close(fd);
	if (n < 0)
		return proff_err_set(err, PROFF_ENOENT, path, PROFF_NO_OFFSET, "no GNU build-id note");
	return n;
}

static int mkdir_p(const char *path)
{
	char tmp[PATH_MAX];
	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -1;
	for (char *p = tmp + 1; *p; p++) {
		if (*p == '/') {
			*p = 0;
			if (mkdir(tmp, 0755) && errno != EEXIST)
				return -1;
			*p = '/';
		}
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static int write_all(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int copy_file(const char *src, const char *dst, mode_t mode)
{
	int in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -1;
	int out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (out < 0) {
		close(in);
		return -1;
	}
	char buf[65536];
	int rc = 0;
	for (;;) {
		ssize_t n = read(in, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		if (write_all(out, buf, (size_t)n)) {
			rc = -1;
			break;
		}
	}
	close(in);
	if (close(out))
		rc = -1;
	return rc;
}

int rec_cache_add(const char *dir, const char *name, const uint8_t *id, size_t id_len,
		  const char *base, const void *data, size_t data_len, const char *src,
		  proff_error *err)
{
	char hex[41];
	for (size_t i = 0; i < id_len && i < 20; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	hex[2 * (id_len > 20 ? 20 : id_len)] = 0;
	if (strlen(hex) < 4)
		return proff_err_set(err, PROFF_EUSAGE, name, PROFF_NO_OFFSET, "build-id too short");
	/* names like "[kernel.kallsyms]" live at the top; paths keep their absolute layout */
	const char *rel = name[0] == '/' ? name + 1 : name;
	char d[PATH_MAX], f[PATH_MAX], link[PATH_MAX], target[PATH_MAX], ldir[PATH_MAX];
	if (snprintf(d, sizeof(d), "%s/%s/%s", dir, rel, hex) >= (int)sizeof(d) ||
	    snprintf(f, sizeof(f), "%s/%s", d, base) >= (int)sizeof(f) ||
	    snprintf(ldir, sizeof(ldir), "%s/.build-id/%.2s", dir, hex) >= (int)sizeof(ldir) ||
	    snprintf(link, sizeof(link), "%s/%s", ldir, hex + 2) >= (int)sizeof(link) ||
	    snprintf(target, sizeof(target), "../../%s/%s", rel, hex) >= (int)sizeof(target))
		return proff_err_set(err, PROFF_EUSAGE, name, PROFF_NO_OFFSET, "path too long for the build-id cache");
	struct stat sb;
	if (stat(f, &sb) != 0) {
		if (mkdir_p(d))
			return proff_err_sys(err, PROFF_EIO, d, "cannot create build-id cache directory");
		char tmp[PATH_MAX + 16];
		snprintf(tmp, sizeof(tmp), "%s.tmp%d", f, (int)getpid());
		int rc;
		if (data) {
			int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			rc = fd < 0 ? -1 : write_all(fd, data, data_len);
			if (fd >= 0 && close(fd))
				rc = -1;
		} else {
			struct stat ss;
			mode_t mode = stat(src, &ss) == 0 ? (ss.st_mode & 0777) : 0644;
			rc = copy_file(src, tmp, mode);
		}
		if (rc || rename(tmp, f)) {
			proff_err_sys(err, PROFF_EIO, f, "cannot write build-id cache entry");
			unlink(tmp);
			return err ? err->code : PROFF_EIO;
		}
	}
	if (lstat(link, &sb) != 0) {
		if (mkdir_p(ldir))
			return proff_err_sys(err, PROFF_EIO, ldir, "cannot create build-id cache directory");
		if (symlink(target, link) && errno != EEXIST)
			return proff_err_sys(err, PROFF_EIO, link, "cannot create build-id link");
	}
	return 0;
}
