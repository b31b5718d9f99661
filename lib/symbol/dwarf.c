/* dwarf.c — source lines and inlined frames through libdw.
 *
 * The DWARF file of a dso is the first build-id matching candidate with a
 * .debug_info (the binary itself when built with -g, the build-id cache's
 * "debug" copy, or /usr/lib/debug/.build-id/xx/yyy.debug). It is opened on
 * the first srcline/inline query. An index of compile-unit address ranges is
 * built once (one pass over the CU headers, not dependent on .debug_aranges);
 * each CU's line table is then read by libdw on first use and kept.
 *
 * Addresses come in perf's map-address space and are turned back into ELF
 * virtual addresses with the runtime file's PT_LOAD headers.
 */
#include "symbol-int.h"

#include <dwarf.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct cu_range {
	uint64_t lo, hi;          /* [lo, hi) */
	Dwarf_Off off;            /* CU DIE offset */
} cu_range;

typedef struct dwarf_index {
	cu_range *v;
	size_t n, cap;
} dwarf_index;

/* What addr2line (binutils) calls a function, for addresses perf found no
 * symbol for: bfd names the nearest preceding FUNC/NOTYPE/IFUNC symbol of the
 * address's own section, whatever its size (.symtab, or .dynsym when the file
 * has none). Kept as (value, section) pairs sorted by value, plus the
 * allocated sections. */
typedef struct a2l_sym {
	uint64_t value;
	size_t shndx;
} a2l_sym;

typedef struct a2l_sec {
	uint64_t lo, hi;          /* [lo, hi), ELF virtual addresses */
	size_t shndx;
} a2l_sec;

typedef struct a2l_index {
	a2l_sym *syms;
	size_t nsyms;
	a2l_sec *secs;
	size_t nsecs;
} a2l_index;

static void a2l_index_free(sym_dso *d)
{
	a2l_index *ix = d->a2l_index;
	if (ix) {
		free(ix->syms);
		free(ix->secs);
		free(ix);
	}
	d->a2l_index = NULL;
	d->a2l_tried = false;
}

static int a2l_sym_cmp(const void *a, const void *b)
{
	const a2l_sym *x = a, *y = b;
	return x->value < y->value ? -1 : x->value > y->value;
}

static a2l_index *a2l_index_build(Elf *elf)
{
	a2l_index *ix = calloc(1, sizeof(*ix));
	size_t nscn = 0;
	if (!ix || elf_getshdrnum(elf, &nscn) != 0)
		goto fail;
	ix->secs = calloc(nscn ? nscn : 1, sizeof(*ix->secs));
	if (!ix->secs)
		goto fail;
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB && !symtab)
			symtab = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynsym)
			dynsym = scn;
		if ((sh.sh_flags & SHF_ALLOC) && sh.sh_size && ix->nsecs < nscn)
			ix->secs[ix->nsecs++] = (a2l_sec){ sh.sh_addr, sh.sh_addr + sh.sh_size, elf_ndxscn(scn) };
	}
	scn = symtab ? symtab : dynsym;
	GElf_Shdr tsh;
	Elf_Data *data = scn && gelf_getshdr(scn, &tsh) ? elf_getdata(scn, NULL) : NULL;
	size_t esz = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	size_t n = data && esz ? data->d_size / esz : 0;
	ix->syms = calloc(n ? n : 1, sizeof(*ix->syms));
	if (!ix->syms)
		goto fail;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_NOTYPE && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		ix->syms[ix->nsyms++] = (a2l_sym){ sym.st_value, sym.st_shndx };
	}
	qsort(ix->syms, ix->nsyms, sizeof(*ix->syms), a2l_sym_cmp);
	return ix;
fail:
	if (ix) {
		free(ix->syms);
		free(ix->secs);
		free(ix);
	}
	return NULL;
}

/* Would `addr2line -f -e <symbol file> vaddr` print a function name? */
static bool a2l_names_function(sym_dso *d, uint64_t vaddr)
{
	if (!d->a2l_tried) {
		d->a2l_tried = true;
		int fd = d->symsrc_path ? pf_open_regular(d->symsrc_path) : -1;
		if (fd >= 0) {
			Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
			if (elf && elf_kind(elf) == ELF_K_ELF)
				d->a2l_index = a2l_index_build(elf);
			if (elf)
				elf_end(elf);
			close(fd);
		}
	}
	a2l_index *ix = d->a2l_index;
	if (!ix)
		return false;
	const a2l_sec *sec = NULL;
	for (size_t i = 0; i < ix->nsecs && !sec; i++)
		if (vaddr >= ix->secs[i].lo && vaddr < ix->secs[i].hi)
			sec = &ix->secs[i];
	if (!sec)
		return false;
	size_t lo = 0, hi = ix->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (ix->syms[mid].value <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo > 0 && ix->syms[lo - 1].value >= sec->lo; lo--)
		if (ix->syms[lo - 1].shndx == sec->shndx)
			return true;
	return false;
}

void sym_dwarf_close(sym_dso *d)
{
	if (d->dwarf)
		dwarf_end(d->dwarf);
	if (d->dwarf_elf)
		elf_end(d->dwarf_elf);
	if (d->dwarf_fd >= 0)
		close(d->dwarf_fd);
	d->dwarf = NULL;
	d->dwarf_elf = NULL;
	d->dwarf_fd = -1;
	if (d->cu_index) {
		free(((dwarf_index *)d->cu_index)->v);
		free(d->cu_index);
		d->cu_index = NULL;
	}
	a2l_index_free(d);
}

static int range_cmp(const void *a, const void *b)
{
	const cu_range *x = a, *y = b;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static void build_index(sym_dso *d)
{
	dwarf_index *ix = calloc(1, sizeof(*ix));
	if (!ix)
		return;
	Dwarf_Off off = 0, next;
	size_t hsize;
	Dwarf_Half version;
	uint8_t unit_type;
	while (dwarf_next_unit(d->dwarf, off, &next, &hsize, &version, NULL, NULL, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(d->dwarf, off + hsize, &cu)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				if (hi <= lo)
					continue;
				if (PF_GROW(ix->v, ix->cap, ix->n + 1) < 0)
					goto done;
				ix->v[ix->n++] = (cu_range){ lo, hi, off + hsize };
			}
		}
		off = next;
	}
	(void)unit_type;
done:
	if (ix->n > 1)
		qsort(ix->v, ix->n, sizeof(*ix->v), range_cmp);
	d->cu_index = ix;
}

static bool dwarf_open(sym_dso *d)
{
	if (d->dwarf_tried)
		return d->dwarf != NULL;
	d->dwarf_tried = true;
	if (!d->loaded)
		sym_dso_has_symbols(d);     /* finds the files */
	if (!d->dwarf_path)
		return false;
	d->dwarf_fd = pf_open_regular(d->dwarf_path);
	if (d->dwarf_fd < 0)
		return false;
	d->dwarf_elf = elf_begin(d->dwarf_fd, ELF_C_READ_MMAP, NULL);
	if (d->dwarf_elf)
		d->dwarf = dwarf_begin_elf(d->dwarf_elf, DWARF_C_READ, NULL);
	if (!d->dwarf) {
		sym_dwarf_close(d);
		return false;
	}
	build_index(d);
	return true;
}

/* CU DIE covering vaddr: the innermost (last starting) range holding it. */
static bool cu_of(sym_dso *d, uint64_t v, Dwarf_Die *cu)
{
	dwarf_index *ix = d->cu_index;
	if (ix && ix->n) {
		size_t lo = 0, hi = ix->n;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (ix->v[mid].lo <= v)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = 0; k < 16 && lo > 0; k++, lo--) {
			const cu_range *r = &ix->v[lo - 1];
			if (v < r->hi)
				return dwarf_offdie(d->dwarf, r->off, cu) != NULL;
		}
	}
	return dwarf_addrdie(d->dwarf, v, cu) != NULL;
}

static const char *intern(sym_dso *d, const char *s)
{
	if (!s)
		return NULL;
	int64_t id = pf_strtab_intern(&d->ctx->strs, s, strlen(s));
	return id < 0 ? NULL : pf_strtab_get(&d->ctx->strs, (uint32_t)id);
}

/* A DWARF file name made absolute with the CU's DW_AT_comp_dir, as addr2line
 * prints it ("/build/x/../Python/ceval.c"). */
static const char *intern_path(sym_dso *d, Dwarf_Die *cu, const char *src)
{
	if (!src || src[0] == '/')
		return intern(d, src);
	Dwarf_Attribute at;
	const char *dir = dwarf_attr(cu, DW_AT_comp_dir, &at) ? dwarf_formstring(&at) : NULL;
	if (!dir || !*dir)
		return intern(d, src);
	size_t a = strlen(dir), b = strlen(src);
	char *tmp = malloc(a + b + 2);
	if (!tmp)
		return NULL;
	memcpy(tmp, dir, a);
	tmp[a] = '/';
	memcpy(tmp + a + 1, src, b + 1);
	const char *r = intern(d, tmp);
	free(tmp);
	return r;
}

bool sym_srcline(sym_dso *d, uint64_t addr, const char **file, unsigned *line)
{
	uint64_t v;
	Dwarf_Die cu;
	if (!dwarf_open(d) || !sym_map_to_vaddr(d, addr, &v) || !cu_of(d, v, &cu))
		return false;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, v);
	if (!l)
		return false;
	int ln = 0;
	const char *src = dwarf_linesrc(l, NULL, NULL);
	if (!src || dwarf_lineno(l, &ln) != 0)
		return false;
	const char *f = intern_path(d, &cu, src);
	if (!f)
		return false;
	*file = f;
	*line = (unsigned)(ln > 0 ? ln : 0);
	return true;
}

/* Name of a subprogram or inlined instance: the demangled linkage name when
 * there is one (C++), else DW_AT_name; both through abstract origins. */
static const char *die_name(sym_dso *d, Dwarf_Die *die)
{
	Dwarf_Attribute at;
	const char *ln = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &at) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &at))
		ln = dwarf_formstring(&at);
	if (ln && d->ctx->opts.demangle) {
		char *dem = sym_demangle(ln, d->ctx->opts.demangle_params);
		if (dem) {
			const char *r = intern(d, dem);
			free(dem);
			return r;
		}
	}
	if (ln)
		return intern(d, ln);
	return intern(d, dwarf_diename(die));
}

static const char *call_file(sym_dso *d, Dwarf_Die *cu, Dwarf_Die *inl)
{
	Dwarf_Attribute at;
	Dwarf_Word idx;
	if (!dwarf_attr(inl, DW_AT_call_file, &at) || dwarf_formudata(&at, &idx) != 0)
		return NULL;
	Dwarf_Files *files;
	size_t nfiles;
	if (dwarf_getsrcfiles(cu, &files, &nfiles) != 0 || idx >= nfiles)
		return NULL;
	return intern_path(d, cu, dwarf_filesrc(files, idx, NULL, NULL));
}

/* Like `addr2line -f -i`: the innermost inlined function with the line of
 * addr, then each caller with the call site of the frame inside it, ending
 * with the out-of-line function. */
size_t sym_inlines(sym_dso *d, uint64_t addr, sym_inline_frame *out, size_t max)
{
	uint64_t v;
	Dwarf_Die cu;
	if (!max || !dwarf_open(d) || !sym_map_to_vaddr(d, addr, &v) || !cu_of(d, v, &cu))
		return 0;
	/* dwarf_getscopes() continues into an inlined function's abstract
	 * definition; the physical nesting comes from dwarf_getscopes_die() on
	 * the innermost scope, as eu-addr2line does. */
	Dwarf_Die *scopes = NULL, inner;
	int ns = dwarf_getscopes(&cu, v, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	inner = scopes[0];
	free(scopes);
	scopes = NULL;
	ns = dwarf_getscopes_die(&inner, &scopes);
	if (ns <= 0) {
		free(scopes);
		return 0;
	}
	const char *file = NULL;
	unsigned line = 0;
	Dwarf_Line *l = dwarf_getsrc_die(&cu, v);
	int ln = 0;
	if (l && dwarf_lineno(l, &ln) == 0) {
		file = intern_path(d, &cu, dwarf_linesrc(l, NULL, NULL));
		line = ln > 0 ? (unsigned)ln : 0;
	}
	size_t n = 0;
	for (int i = 0; i < ns && n < max; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
			continue;
		out[n].name = die_name(d, &scopes[i]);
		out[n].file = file;
		out[n].line = line;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the caller's location is this instance's call site */
		Dwarf_Attribute at;
		Dwarf_Word cl = 0;
		file = call_file(d, &cu, &scopes[i]);
		if (dwarf_attr(&scopes[i], DW_AT_call_line, &at) && dwarf_formudata(&at, &cl) == 0)
			line = (unsigned)cl;
		else
			line = 0;
	}
	free(scopes);
	return n;
}

uint64_t sym_objdump_addr(sym_dso *d, uint64_t addr)
{
	if (d->kind == SYM_DSO_KERNEL || d->kind == SYM_DSO_MODULE)
		return addr;
	if (!d->loaded)
		sym_dso_has_symbols(d);
	uint64_t v;
	return sym_map_to_vaddr(d, addr, &v) ? v : addr;
}

const char *sym_srcline_str(sym_dso *d, uint64_t addr, bool full_path, char *buf, size_t len)
{
	const char *file;
	unsigned line;
	if (!len)
		return buf;
	bool has_file = d->kind != SYM_DSO_KERNEL && d->kind != SYM_DSO_MODULE && d->kind != SYM_DSO_ANON;
	if (has_file && sym_srcline(d, addr, &file, &line)) {
		const char *base = full_path ? NULL : strrchr(file, '/');
		snprintf(buf, len, "%s:%u", base ? base + 1 : file, line);
		return buf;
	}
	sym_info si;
	bool have_sym = sym_lookup(d, addr, &si);
	/* perf asks addr2line about the file its symbols came from; without a
	 * line but inside one of that file's symbols addr2line says "??:?",
	 * which perf shows as "??:0". PLT entries are perf's own invention; for
	 * [vdso] perf asks nobody (verified: "__vdso_clock_gettime+86"). Where
	 * perf has no symbol, addr2line may still name the preceding one of
	 * the same section (it ignores symbol sizes): "??:0" as well. */
	bool a2l_func = has_file && d->symsrc_path && d->kind != SYM_DSO_VDSO &&
			(have_sym ? !si.is_plt : a2l_names_function(d, sym_objdump_addr(d, addr)));
	if (a2l_func)
		snprintf(buf, len, "??:0");
	else if (have_sym)
		snprintf(buf, len, "%s+%llu", si.name, (unsigned long long)(addr - si.start));
	else
		snprintf(buf, len, "%s[%llx]", sym_dso_short_name(d),
			 (unsigned long long)sym_objdump_addr(d, addr));
	return buf;
}
