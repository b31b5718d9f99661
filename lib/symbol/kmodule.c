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
 * The table keeps runtime addresses, as the kallsyms module lines do (the
 * profile keeps module ips as they are). A module named only "[name]", or
 * whose file cannot be opened, takes kallsyms' lines (kallsyms.c); a file
 * that is not a relocatable ELF is said once (sym_dso_problem) and falls
 * back the same way.
 */
#include "symbol-int.h"

#include <fcntl.h>
#include <stdio.h>
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

int sym_kmodule_load(sym_dso *d)
{
	char path[4096];
	if (!d->have_map_start || !kmodule_path(d, path, sizeof(path)))
		return 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	GElf_Ehdr eh;
	int rc = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh)) {
		sym_dso_set_problem(d, "%s: not an ELF file: the module's symbols are kallsyms' (if any)", path);
	} else if (eh.e_type != ET_REL) {
		sym_dso_set_problem(d, "%s: not a relocatable ELF file (a .ko): the module's symbols are "
				    "kallsyms' (if any)", path);
	} else {
		rc = read_text_symbols(d, elf);
		if (rc == 0) {
			symtab_fixup(&d->tab, false);
			d->origin = 'K';
			free(d->symsrc_path);
			d->symsrc_path = strdup(path);
			rc = 1;
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

uint64_t sym_dso_kmod_pgoff(sym_dso *d)
{
	if (d->kind != SYM_DSO_MODULE)
		return 0;
	(void)sym_dso_has_symbols(d);    /* loaded */
	return d->kmod_pgoff;
}
