/* trace-elf.c — which of the objects a traced process loaded are built with
 * -finstrument-functions. `proff record --instrument` asks when a run
 * recorded no call at all, to say why: nothing is instrumented (the usual
 * mistake), or something is but none of its functions ran. The answer comes
 * from what was loaded (the sessions' executables and MODULES records, which
 * include dlopen'ed libraries), never from the executable alone.
 */
#include "proff/trace.h"
#include "trace-int.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#define HOOK "__cyg_profile_func_enter"

/* An object calls the hooks when it imports the entry hook (an undefined
 * dynamic symbol: gcc and clang emit calls through the PLT), or, for an
 * executable, defines it (proff's static runtime linked in). Libraries that
 * define it are not callers: glibc has empty hooks, proff's runtime real ones. */
static bool elf_calls_hooks(const char *path, bool exe)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	bool yes = false;
	for (Elf_Scn *scn = e ? elf_nextscn(e, NULL) : NULL; scn && !yes; scn = elf_nextscn(e, scn)) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_DYNSYM && sh.sh_type != SHT_SYMTAB) || !sh.sh_entsize)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		size_t n = d ? d->d_size / sh.sh_entsize : 0;
		for (size_t i = 1; i < n && !yes; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			const char *nm = elf_strptr(e, sh.sh_link, sym.st_name);
			if (!nm || strcmp(nm, HOOK))
				continue;
			yes = sym.st_shndx == SHN_UNDEF ? sh.sh_type == SHT_DYNSYM : exe;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return yes;
}

const char *proff_trace_instrumented_object(const proff_trace *t)
{
	for (size_t i = 0; i < t->nsessions; i++) {
		const tsession *s = &t->sessions[i];
		if (s->exe && *s->exe && elf_calls_hooks(s->exe, true))
			return s->exe;
		for (size_t k = 0; k < s->nmods; k++)
			if (s->mods[k].name[0] && elf_calls_hooks(s->mods[k].name, false))
				return s->mods[k].name;
	}
	return NULL;
}
