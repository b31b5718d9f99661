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
 *
 * Compressed debug files (SHF_COMPRESSED .debug_info with .debug_aranges, as
 * distributions ship them, e.g. libc's) are inflated lazily: libdw would
 * inflate every debug section in dwarf_begin_elf (~0.1 s for libc), however
 * few addresses are asked about. Instead libdw gets an in-memory ELF whose
 * sections have their full inflated size but are filled only as far as the
 * queries need: .debug_info up to the end of the CU holding the address
 * (found with .debug_aranges), .debug_abbrev up to the end of the abbrev
 * tables of those CUs, .debug_line up to the end of the CU's line program;
 * strings and addresses completely, DIE ranges not at all. An address
 * outside .debug_aranges completes .debug_info, .debug_abbrev and the DIE
 * ranges and switches to the index the complete file has (the CU DIEs' own
 * ranges); an inline query or anything unexpected falls back to the complete
 * file. The answers are those of the complete file (checked address by
 * address on libc and ld.so: tests/unit/test_dwarf_lazy.c).
 */
#include "symbol-int.h"

#include <dwarf.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

typedef struct cu_range {
	uint64_t lo, hi;          /* [lo, hi) */
	Dwarf_Off off;            /* CU DIE offset (CU header offset in the aranges index) */
	Dwarf_Off die;            /* aranges index: the DIE offset, once the unit is inflated */
} cu_range;

typedef struct lazy_dwarf lazy_dwarf;

typedef struct dwarf_index {
	cu_range *v;
	size_t n, cap;
	lazy_dwarf *lazy;         /* lazy inflation (see lazy_open) */
	bool hdr_offs;            /* off is a CU header offset (the .debug_aranges index) */
} dwarf_index;

/* What addr2line (binutils) calls a function, for addresses perf found no
 * symbol for: bfd names the nearest preceding FUNC/NOTYPE/IFUNC symbol of the
 * address's own section, whatever its size (.symtab, or .dynsym when the file
 * has none; of equal values the later in the table). Without a line from
 * DWARF, bfd also gives that symbol's source file from the symbol table: the
 * last FILE symbol before it, unless the function is global and that FILE
 * symbol came after other symbols (elf_find_function). Kept as (value,
 * section, file) sorted by value and table order, plus the allocated
 * sections. */
typedef struct a2l_sym {
	uint64_t value;
	size_t shndx;
	uint32_t order;           /* position in the symbol table */
	int32_t file;             /* offset of the file name in a2l_index.names, -1: none */
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
	char *names;              /* the FILE symbols' names, NUL-terminated */
	size_t names_len, names_cap;
} a2l_index;

static void a2l_index_free(sym_dso *d)
{
	a2l_index *ix = d->a2l_index;
	if (ix) {
		free(ix->syms);
		free(ix->secs);
		free(ix->names);
		free(ix);
	}
	d->a2l_index = NULL;
	d->a2l_tried = false;
}

static int a2l_sym_cmp(const void *a, const void *b)
{
	const a2l_sym *x = a, *y = b;
	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
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
	/* bfd's walk: the current FILE symbol, and whether other symbols came
	 * before it */
	enum { NOTHING_SEEN, SYMBOL_SEEN, FILE_AFTER_SYMBOL } state = NOTHING_SEEN;
	int32_t file = -1;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(data, (int)i, &sym))
			break;
		int type = GELF_ST_TYPE(sym.st_info);
		if (type == STT_FILE) {
			const char *nm = elf_strptr(elf, tsh.sh_link, sym.st_name);
			size_t len = nm ? strlen(nm) : 0;
			file = -1;
			if (nm && len < INT32_MAX - ix->names_len &&
			    pf_grow((void **)&ix->names, &ix->names_cap, ix->names_len + len + 1, 1) == 0) {
				memcpy(ix->names + ix->names_len, nm, len + 1);
				file = (int32_t)ix->names_len;
				ix->names_len += len + 1;
			}
			if (state == SYMBOL_SEEN)
				state = FILE_AFTER_SYMBOL;
			continue;
		}
		if (state == NOTHING_SEEN)
			state = SYMBOL_SEEN;
		if (type != STT_FUNC && type != STT_NOTYPE && type != STT_GNU_IFUNC)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE)
			continue;
		bool named = file >= 0 && (GELF_ST_BIND(sym.st_info) == STB_LOCAL || state != FILE_AFTER_SYMBOL);
		ix->syms[ix->nsyms++] = (a2l_sym){ sym.st_value, sym.st_shndx, (uint32_t)i, named ? file : -1 };
	}
	qsort(ix->syms, ix->nsyms, sizeof(*ix->syms), a2l_sym_cmp);
	return ix;
fail:
	if (ix) {
		free(ix->syms);
		free(ix->secs);
		free(ix->names);
		free(ix);
	}
	return NULL;
}

/* Would `addr2line -f -e <symbol file> vaddr` print a function name? If so,
 * *file is the source file it prints without DWARF (NULL: "??"). */
static bool a2l_names_function(sym_dso *d, uint64_t vaddr, const char **file)
{
	*file = NULL;
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
	size_t lo = PF_COUNT_LE(ix->syms, ix->nsyms, value, vaddr);
	for (; lo > 0 && ix->syms[lo - 1].value >= sec->lo; lo--)
		if (ix->syms[lo - 1].shndx == sec->shndx) {
			if (ix->syms[lo - 1].file >= 0)
				*file = ix->names + ix->syms[lo - 1].file;
			return true;
		}
	return false;
}

static void lazy_free(lazy_dwarf *lz);

/* the Dwarf and its index (the lazy image too), not the file */
static void dwarf_drop(sym_dso *d)
{
	if (d->dwarf)
		dwarf_end(d->dwarf);
	d->dwarf = NULL;
	d->line_units = 0;
	if (d->cu_index) {
		dwarf_index *ix = d->cu_index;
		lazy_free(ix->lazy);
		free(ix->v);
		free(ix);
		d->cu_index = NULL;
	}
}

/* sym_inlines' answers: the frames of each address asked (up to
 * INLINE_CACHE_MAX of them), so an address asked ahead on an idle thread
 * (sym_dso_prepare_inlines' caller) is not looked up again. The strings
 * are the dso's, valid as long as it is. */
#define INLINE_CACHE_MAX 64
typedef struct inline_cache {
	pf_map64 at;                /* address + 1 -> first frame << 8 | count */
	sym_inline_frame *fr;
	size_t n, cap;
} inline_cache;

static void inline_cache_free(sym_dso *d)
{
	inline_cache *c = d->inline_cache;
	if (!c)
		return;
	pf_map64_free(&c->at);
	free(c->fr);
	free(c);
	d->inline_cache = NULL;
}

void sym_dwarf_close(sym_dso *d)
{
	inline_cache_free(d);
	dwarf_drop(d);
	if (d->dwarf_elf)
		elf_end(d->dwarf_elf);
	if (d->dwarf_fd >= 0)
		close(d->dwarf_fd);
	d->dwarf_elf = NULL;
	d->dwarf_fd = -1;
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
				ix->v[ix->n++] = (cu_range){ lo, hi, off + hsize, 0 };
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

/* ---- lazily inflated compressed debug files ------------------------------ */

enum { LZ_INFO, LZ_ABBREV, LZ_LINE, LZ_NPREFIX };
#define LZ_MAX_SECS 16
#define LZ_CHUNK ((uint64_t)64 << 10)

typedef struct lz_sec {
	const char *name;
	const uint8_t *in;        /* zlib stream after the Elf64_Chdr, or the plain bytes */
	size_t in_size;
	uint64_t size;            /* inflated size */
	uint64_t off;             /* of the data in the image */
	bool compressed, z_init, z_done;
	z_stream z;
	uint64_t have;            /* [0, have) is in the image */
} lz_sec;

struct lazy_dwarf {
	uint8_t *image;
	size_t image_size;
	Elf *elf;                 /* elf_memory over image */
	lz_sec secs[LZ_MAX_SECS];
	size_t nsecs;
	lz_sec *prefix[LZ_NPREFIX];
	uint64_t walked;          /* .debug_info unit headers read up to here */
	uint64_t max_abbrev;      /* largest abbrev offset of those units */
	bool any_unit;
};

/* the sections a srcline query may read (the first LZ_NPREFIX in enum
 * order, inflated as far as needed); the others are left out */
static const char *const lz_wanted[] = {
	".debug_info", ".debug_abbrev", ".debug_line", ".debug_str", ".debug_line_str",
	".debug_str_offsets", ".debug_addr", ".debug_rnglists", ".debug_ranges", ".debug_aranges",
};

/* address ranges of DIEs: only the complete index reads them */
static bool lz_late(const lz_sec *s)
{
	return !strcmp(s->name, ".debug_rnglists") || !strcmp(s->name, ".debug_ranges");
}

static void lazy_free(lazy_dwarf *lz)
{
	if (!lz)
		return;
	for (size_t i = 0; i < lz->nsecs; i++)
		if (lz->secs[i].z_init)
			inflateEnd(&lz->secs[i].z);
	if (lz->elf)
		elf_end(lz->elf);
	if (lz->image)
		munmap(lz->image, lz->image_size);
	free(lz);
}

/* make [0, want) of the section available (rounded up to a chunk) */
static bool lz_ensure(lazy_dwarf *lz, lz_sec *s, uint64_t want)
{
	if (want <= s->have)
		return true;
	if (want > s->size)
		return false;
	if (!s->compressed || s->z_done)
		return false;
	uint64_t to = want + LZ_CHUNK < s->size ? want + LZ_CHUNK : s->size;
	if (!s->z_init) {
		memset(&s->z, 0, sizeof(s->z));
		if (inflateInit(&s->z) != Z_OK)
			return false;
		s->z_init = true;
		s->z.next_in = (Bytef *)(uintptr_t)s->in;
		s->z.avail_in = (uInt)s->in_size;
	}
	while (s->have < to) {
		uint64_t room = to - s->have;
		s->z.next_out = lz->image + s->off + s->have;
		s->z.avail_out = room > UINT32_MAX ? UINT32_MAX : (uInt)room;
		uInt before = s->z.avail_out;
		int r = inflate(&s->z, Z_SYNC_FLUSH);
		s->have += before - s->z.avail_out;
		if (r == Z_STREAM_END) {
			s->z_done = true;
			break;
		}
		if (r != Z_OK || before == s->z.avail_out)
			return false;
	}
	return s->have >= want;
}

static bool lz_u8(lazy_dwarf *lz, lz_sec *s, uint64_t at, uint8_t *v)
{
	if (!lz_ensure(lz, s, at + 1))
		return false;
	*v = lz->image[s->off + at];
	return true;
}

static bool lz_uint(lazy_dwarf *lz, lz_sec *s, uint64_t at, unsigned n, uint64_t *v)
{
	if (at + n < at || !lz_ensure(lz, s, at + n))
		return false;
	uint64_t x = 0;
	for (unsigned i = 0; i < n; i++)       /* little-endian only (checked at open) */
		x |= (uint64_t)lz->image[s->off + at + i] << (8 * i);
	*v = x;
	return true;
}

static bool lz_uleb(lazy_dwarf *lz, lz_sec *s, uint64_t *at, uint64_t *v)
{
	uint64_t x = 0;
	for (unsigned shift = 0; shift < 70; shift += 7) {
		uint8_t b;
		if (!lz_u8(lz, s, (*at)++, &b))
			return false;
		if (shift < 64)
			x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return true;
		}
	}
	return false;
}

/* unit length at `at`: sets the offset size and the end of the unit */
static bool lz_unit_length(lazy_dwarf *lz, lz_sec *s, uint64_t at, unsigned *offsz, uint64_t *hdr_end, uint64_t *end)
{
	uint64_t len;
	if (!lz_uint(lz, s, at, 4, &len))
		return false;
	*offsz = 4;
	*hdr_end = at + 4;
	if (len == 0xffffffffu) {
		if (!lz_uint(lz, s, at + 4, 8, &len))
			return false;
		*offsz = 8;
		*hdr_end = at + 12;
	} else if (len >= 0xfffffff0u) {
		return false;
	}
	*end = *hdr_end + len;
	return *end >= *hdr_end && *end <= s->size;
}

/* the abbrev table at `at` is complete in the image */
static bool lz_abbrev_table(lazy_dwarf *lz, uint64_t at)
{
	lz_sec *s = lz->prefix[LZ_ABBREV];
	for (;;) {
		uint64_t code, tag, name, form, ic;
		uint8_t children;
		if (!lz_uleb(lz, s, &at, &code))
			return false;
		if (!code)
			return true;
		if (!lz_uleb(lz, s, &at, &tag) || !lz_u8(lz, s, at++, &children))
			return false;
		do {
			if (!lz_uleb(lz, s, &at, &name) || !lz_uleb(lz, s, &at, &form))
				return false;
			if (form == DW_FORM_implicit_const && !lz_uleb(lz, s, &at, &ic))
				return false;
		} while (name || form);
	}
}

/* header of the unit at `at`: its end, abbrev offset and DIE offset */
static bool lz_unit_hdr(lazy_dwarf *lz, uint64_t at, unsigned *offsz, uint64_t *end, uint64_t *abbrev, uint64_t *die)
{
	lz_sec *info = lz->prefix[LZ_INFO];
	uint64_t h, ver, ut = DW_UT_compile;
	unsigned osz;
	if (!lz_unit_length(lz, info, at, &osz, &h, end) || !lz_uint(lz, info, h, 2, &ver) || ver < 2 || ver > 5)
		return false;
	if (ver == 5) {
		if (!lz_uint(lz, info, h + 2, 1, &ut) || !lz_uint(lz, info, h + 4, osz, abbrev))
			return false;
		h += 4 + osz;
		if (ut == DW_UT_skeleton || ut == DW_UT_split_compile)
			h += 8;
		else if (ut == DW_UT_type || ut == DW_UT_split_type)
			h += 8 + osz;
	} else {
		if (!lz_uint(lz, info, h + 2, osz, abbrev))
			return false;
		h += 2 + osz + 1;
	}
	*offsz = osz;
	*die = h;
	return h <= *end;
}

/* the line program of a CU DIE is complete in the image */
static bool lazy_line(lazy_dwarf *lz, Dwarf_Die *cu)
{
	Dwarf_Attribute at;
	uint8_t offsz = 0;
	if (!dwarf_attr(cu, DW_AT_stmt_list, &at))
		return true;        /* no lines: libdw will say so */
	if (dwarf_cu_info(cu->cu, NULL, NULL, NULL, NULL, NULL, NULL, &offsz) != 0)
		return false;
	unsigned n = at.form == DW_FORM_sec_offset ? offsz : at.form == DW_FORM_data4 ? 4 : at.form == DW_FORM_data8 ? 8 : 0;
	if (!n || !at.valp)
		return false;
	uint64_t stmt = 0;
	for (unsigned i = 0; i < n; i++)
		stmt |= (uint64_t)at.valp[i] << (8 * i);
	lz_sec *line = lz->prefix[LZ_LINE];
	unsigned osz;
	uint64_t hdr_end, end;
	return lz_unit_length(lz, line, stmt, &osz, &hdr_end, &end) && lz_ensure(lz, line, end);
}

/* Make the unit at cu_off usable by libdw: .debug_info through its end
 * (libdw reads every unit header before it), the abbrev tables of all those
 * units, and its line program. Sets the offset of its DIE. */
static bool lazy_unit(sym_dso *d, lazy_dwarf *lz, uint64_t cu_off, Dwarf_Off *die_off)
{
	lz_sec *info = lz->prefix[LZ_INFO];
	unsigned offsz, osz;
	uint64_t end, ab, die, uend;
	if (!lz_unit_hdr(lz, cu_off, &offsz, &end, &ab, &die) || !lz_ensure(lz, info, end))
		return false;
	while (lz->walked < end) {
		uint64_t a, dd;
		if (!lz_unit_hdr(lz, lz->walked, &osz, &uend, &a, &dd))
			return false;
		if (!lz->any_unit || a > lz->max_abbrev)
			lz->max_abbrev = a;
		lz->any_unit = true;
		lz->walked = uend;
	}
	if (!lz_abbrev_table(lz, lz->max_abbrev) || !lz_abbrev_table(lz, ab))
		return false;
	/* libdw must see this unit's DIE where the header says */
	Dwarf_Die cu, cudie;
	if (!dwarf_offdie(d->dwarf, die, &cu) || !dwarf_diecu(&cu, &cudie, NULL, NULL) ||
	    dwarf_dieoffset(&cudie) != die)
		return false;
	*die_off = die;
	return lazy_line(lz, &cu);
}

/* CU header offsets by address, from .debug_aranges */
static bool lazy_index(lazy_dwarf *lz, lz_sec *ar, dwarf_index *ix)
{
	uint64_t at = 0;
	while (at < ar->size) {
		unsigned offsz;
		uint64_t p, end, ver, cu, asz, ssz;
		if (!lz_unit_length(lz, ar, at, &offsz, &p, &end) || !lz_uint(lz, ar, p, 2, &ver) ||
		    !lz_uint(lz, ar, p + 2, offsz, &cu) || !lz_uint(lz, ar, p + 2 + offsz, 1, &asz) ||
		    !lz_uint(lz, ar, p + 3 + offsz, 1, &ssz))
			return false;
		if (ver != 2 || asz != 8 || ssz != 0)
			return false;
		/* tuples start at a multiple of twice the address size from the set start */
		p += 4 + offsz;
		uint64_t rel = p - at;
		p = at + ((rel + 15) & ~(uint64_t)15);
		for (; p + 16 <= end; p += 16) {
			uint64_t lo, len;
			if (!lz_uint(lz, ar, p, 8, &lo) || !lz_uint(lz, ar, p + 8, 8, &len))
				return false;
			if (!lo && !len)
				break;
			if (lo + len <= lo)
				continue;
			if (PF_GROW(ix->v, ix->cap, ix->n + 1) < 0)
				return false;
			ix->v[ix->n++] = (cu_range){ lo, lo + len, cu, 0 };
		}
		at = end;
	}
	if (ix->n > 1)
		qsort(ix->v, ix->n, sizeof(*ix->v), range_cmp);
	return true;
}

/* Set up lazy inflation if the DWARF file is a compressed one we can serve
 * that way; false leaves d untouched (open the file as usual). */
static bool lazy_open(sym_dso *d)
{
	Elf *elf = d->dwarf_elf;
	GElf_Ehdr eh;
	size_t shstrndx;
	const uint16_t one = 1;
	if (!gelf_getehdr(elf, &eh) || eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_ident[EI_DATA] != ELFDATA2LSB ||
	    *(const uint8_t *)&one != 1 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return false;
	lazy_dwarf *lz = calloc(1, sizeof(*lz));
	if (!lz)
		return false;
	bool info_z = false, aranges = false;
	size_t names = 1 + sizeof(".shstrtab");
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			goto no;
		const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!n)
			continue;
		if (!strcmp(n, ".gnu_debugaltlink") || !strncmp(n, ".zdebug", 7))
			goto no;        /* dwz alternate files, old-style compression: as usual */
		size_t w = 0;
		while (w < sizeof(lz_wanted) / sizeof(*lz_wanted) && strcmp(n, lz_wanted[w]))
			w++;
		if (w == sizeof(lz_wanted) / sizeof(*lz_wanted) || sh.sh_type == SHT_NOBITS || (sh.sh_flags & SHF_GROUP))
			continue;
		if (lz->nsecs == LZ_MAX_SECS)
			goto no;
		Elf_Data *raw = elf_rawdata(scn, NULL);
		if (!raw || (!raw->d_buf && raw->d_size))
			goto no;
		lz_sec *s = &lz->secs[lz->nsecs++];
		s->name = lz_wanted[w];
		s->in = raw->d_buf;
		s->in_size = raw->d_size;
		s->size = raw->d_size;
		if (sh.sh_flags & SHF_COMPRESSED) {
			Elf64_Chdr ch;
			if (raw->d_size < sizeof(ch))
				goto no;
			memcpy(&ch, raw->d_buf, sizeof(ch));
			if (ch.ch_type != ELFCOMPRESS_ZLIB)
				goto no;
			s->compressed = true;
			s->in += sizeof(ch);
			s->in_size -= sizeof(ch);
			s->size = ch.ch_size;
			if (w == LZ_INFO)
				info_z = true;
		}
		if (!strcmp(n, ".debug_aranges"))
			aranges = true;
		if (w < LZ_NPREFIX) {
			if (lz->prefix[w])
				goto no;
			lz->prefix[w] = s;
		}
		names += strlen(s->name) + 1;
	}
	if (!info_z || !aranges || !lz->prefix[LZ_ABBREV] || !lz->prefix[LZ_LINE])
		goto no;
	/* the image: ehdr, .shstrtab, the sections, the section headers */
	size_t nsh = lz->nsecs + 2;
	uint64_t pos = sizeof(Elf64_Ehdr), strtab_off = pos;
	pos += names;
	for (size_t i = 0; i < lz->nsecs; i++) {
		pos = (pos + 15) & ~(uint64_t)15;
		lz->secs[i].off = pos;
		pos += lz->secs[i].size;
		if (pos < lz->secs[i].size)
			goto no;
	}
	pos = (pos + 15) & ~(uint64_t)15;
	uint64_t shoff = pos;
	pos += nsh * sizeof(Elf64_Shdr);
	if (pos > SIZE_MAX / 2)
		goto no;
	lz->image_size = (size_t)pos;
	void *img = mmap(NULL, lz->image_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (img == MAP_FAILED)
		goto no;
	lz->image = img;
	Elf64_Ehdr *e = (Elf64_Ehdr *)lz->image;
	memcpy(e->e_ident, eh.e_ident, EI_NIDENT);
	e->e_type = eh.e_type;
	e->e_machine = eh.e_machine;
	e->e_version = EV_CURRENT;
	e->e_shoff = shoff;
	e->e_ehsize = sizeof(Elf64_Ehdr);
	e->e_shentsize = sizeof(Elf64_Shdr);
	e->e_shnum = (uint16_t)nsh;
	e->e_shstrndx = (uint16_t)(nsh - 1);
	Elf64_Shdr *sh = (Elf64_Shdr *)(lz->image + shoff);
	char *names_at = (char *)lz->image + strtab_off;
	size_t np = 1;
	for (size_t i = 0; i < lz->nsecs; i++) {
		lz_sec *s = &lz->secs[i];
		sh[i + 1] = (Elf64_Shdr){ .sh_name = (uint32_t)np, .sh_type = SHT_PROGBITS,
					  .sh_offset = s->off, .sh_size = s->size, .sh_addralign = 1 };
		memcpy(names_at + np, s->name, strlen(s->name) + 1);
		np += strlen(s->name) + 1;
		if (!s->compressed) {
			memcpy(lz->image + s->off, s->in, s->size);
			s->have = s->size;
		} else if (s != lz->prefix[LZ_INFO] && s != lz->prefix[LZ_ABBREV] && s != lz->prefix[LZ_LINE] &&
			   !lz_late(s) && !lz_ensure(lz, s, s->size)) {
			goto no;
		}
	}
	sh[nsh - 1] = (Elf64_Shdr){ .sh_name = (uint32_t)np, .sh_type = SHT_STRTAB,
				    .sh_offset = strtab_off, .sh_size = names, .sh_addralign = 1 };
	memcpy(names_at + np, ".shstrtab", sizeof(".shstrtab"));
	dwarf_index *ix = calloc(1, sizeof(*ix));
	if (!ix)
		goto no;
	lz_sec *ar = NULL;
	for (size_t i = 0; i < lz->nsecs; i++)
		if (!strcmp(lz->secs[i].name, ".debug_aranges"))
			ar = &lz->secs[i];
	if (!lazy_index(lz, ar, ix) || !ix->n) {
		free(ix->v);
		free(ix);
		goto no;
	}
	lz->elf = elf_memory((char *)lz->image, lz->image_size);
	Dwarf *dw = lz->elf ? dwarf_begin_elf(lz->elf, DWARF_C_READ, NULL) : NULL;
	/* libdw must read the sections in place (filled in later) */
	bool in_place = dw != NULL;
	scn = NULL;
	for (size_t i = 1; in_place && (scn = elf_nextscn(lz->elf, scn)) != NULL && i < nsh - 1; i++) {
		Elf_Data *dd = elf_getdata(scn, NULL);
		if (!dd || dd->d_buf != lz->image + lz->secs[i - 1].off || dd->d_size != lz->secs[i - 1].size)
			in_place = false;
	}
	if (!in_place) {
		if (dw)
			dwarf_end(dw);
		free(ix->v);
		free(ix);
		goto no;
	}
	ix->lazy = lz;
	ix->hdr_offs = true;
	d->dwarf = dw;
	d->cu_index = ix;
	return true;
no:
	lazy_free(lz);
	return false;
}

static bool dwarf_open(sym_dso *d)
{
	if (d->dwarf_tried)
		return d->dwarf != NULL;
	d->dwarf_tried = true;
	sym_dso_has_symbols(d);     /* finds the files */
	if (!d->dwarf_path)
		return false;
	d->dwarf_fd = pf_open_regular(d->dwarf_path);
	if (d->dwarf_fd < 0)
		return false;
	d->dwarf_elf = elf_begin(d->dwarf_fd, ELF_C_READ_MMAP, NULL);
	if (d->dwarf_elf && lazy_open(d))
		return true;
	if (d->dwarf_elf)
		d->dwarf = dwarf_begin_elf(d->dwarf_elf, DWARF_C_READ, NULL);
	if (!d->dwarf) {
		sym_dwarf_close(d);
		return false;
	}
	build_index(d);
	return true;
}

/* the DWARF file opened completely (leaving lazy inflation) */
static bool dwarf_full(sym_dso *d)
{
	if (!dwarf_open(d))
		return false;
	dwarf_index *ix = d->cu_index;
	if (!ix || !ix->lazy)
		return true;
	dwarf_drop(d);
	d->dwarf = dwarf_begin_elf(d->dwarf_elf, DWARF_C_READ, NULL);
	if (!d->dwarf) {
		sym_dwarf_close(d);
		return false;
	}
	build_index(d);
	return true;
}

/* the innermost (last starting) range holding v */
static const cu_range *index_find(const dwarf_index *ix, uint64_t v)
{
	if (!ix || !ix->n)
		return NULL;
	size_t lo = PF_COUNT_LE(ix->v, ix->n, lo, v);
	for (size_t k = 0; k < 16 && lo > 0; k++, lo--)
		if (v < ix->v[lo - 1].hi)
			return &ix->v[lo - 1];
	return NULL;
}

static void build_index(sym_dso *d);

/* An address outside .debug_aranges: the index of the complete file after
 * all (the CU DIEs' own ranges, libdw's aranges lookup after them), which
 * needs .debug_info and .debug_abbrev inflated, not the line programs. */
static bool lazy_complete_info(sym_dso *d)
{
	dwarf_index *old = d->cu_index;
	lazy_dwarf *lz = old->lazy;
	if (!lz_ensure(lz, lz->prefix[LZ_INFO], lz->prefix[LZ_INFO]->size) ||
	    !lz_ensure(lz, lz->prefix[LZ_ABBREV], lz->prefix[LZ_ABBREV]->size))
		return false;
	for (size_t i = 0; i < lz->nsecs; i++)
		if (lz_late(&lz->secs[i]) && !lz_ensure(lz, &lz->secs[i], lz->secs[i].size))
			return false;
	d->cu_index = NULL;
	build_index(d);
	dwarf_index *ix = d->cu_index;
	if (!ix) {
		d->cu_index = old;
		return false;
	}
	ix->lazy = lz;
	free(old->v);
	free(old);
	return true;
}

/* CU DIE covering vaddr */
static bool cu_of(sym_dso *d, uint64_t v, Dwarf_Die *cu)
{
	dwarf_index *ix = d->cu_index;
	cu_range *r = (cu_range *)index_find(ix, v);
	if (ix && ix->lazy) {
		lazy_dwarf *lz = ix->lazy;
		if (ix->hdr_offs) {
			if (r && (r->die || lazy_unit(d, lz, r->off, &r->die)))
				return dwarf_offdie(d->dwarf, r->die, cu) != NULL;
			if (!r && lazy_complete_info(d))
				return cu_of(d, v, cu);
		} else {
			if (r ? dwarf_offdie(d->dwarf, r->off, cu) != NULL : dwarf_addrdie(d->dwarf, v, cu) != NULL)
				return lazy_line(lz, cu);
			if (!r)
				return false;
		}
		/* not as expected: the complete file */
			if (!dwarf_full(d))
			return false;
		ix = d->cu_index;
		r = (cu_range *)index_find(ix, v);
	}
	if (r)
		return dwarf_offdie(d->dwarf, r->off, cu) != NULL;
	return dwarf_addrdie(d->dwarf, v, cu) != NULL;
}

static const char *intern(sym_dso *d, const char *s)
{
	if (!s)
		return NULL;
	pthread_mutex_lock(&d->ctx->lock);
	int64_t id = pf_strtab_intern(&d->ctx->strs, s, strlen(s));
	const char *r = id < 0 ? NULL : pf_strtab_get(&d->ctx->strs, (uint32_t)id);
	pthread_mutex_unlock(&d->ctx->lock);
	return r;
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

/* The source file of a line row as addr2line (binutils 2.40, which perf
 * runs) names it. In a DWARF 5 line table bfd takes the file register's
 * initial value as entry 0 (the CU's primary file) where the standard and
 * libdw say entry 1; an explicit DW_LNS_set_file 1 it names right. gas sets
 * the file only when it changes, so a row's file 1 is the initial one when
 * no row before it in its sequence has another file. Most compilers list
 * the primary file as entry 1 too, so this changes a name only where the
 * two entries differ. */
static const char *line_src(Dwarf_Die *cu, Dwarf_Line *l)
{
	const char *src = dwarf_linesrc(l, NULL, NULL);
	Dwarf_Files *files;
	size_t idx;
	Dwarf_Half ver = 0;
	if (!src || dwarf_line_file(l, &files, &idx) != 0 || idx != 1 ||
	    dwarf_cu_info(cu->cu, &ver, NULL, NULL, NULL, NULL, NULL, NULL) != 0 || ver < 5)
		return src;
	const char *f0 = dwarf_filesrc(files, 0, NULL, NULL);
	Dwarf_Lines *lines;
	size_t n;
	Dwarf_Addr a;
	if (!f0 || strcmp(f0, src) == 0 || dwarf_getsrclines(cu, &lines, &n) != 0 || dwarf_lineaddr(l, &a) != 0)
		return src;
	/* l's index: the rows are sorted by address */
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		Dwarf_Addr ma = 0;
		dwarf_lineaddr(dwarf_onesrcline(lines, mid), &ma);
		if (ma < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t i = lo;
	while (i < n && dwarf_onesrcline(lines, i) != l)
		i++;
	if (i == n)
		return src;
	while (i-- > 0) {
		Dwarf_Line *p = dwarf_onesrcline(lines, i);
		bool end = false;
		Dwarf_Files *pf;
		size_t pi;
		if (dwarf_lineendsequence(p, &end) != 0 || end)
			break;
		if (dwarf_line_file(p, &pf, &pi) != 0 || pi != 1)
			return src;
	}
	return f0;
}

static bool sym_srcline_unlocked(sym_dso *d, uint64_t addr, const char **file, unsigned *line)
{
	uint64_t v;
	Dwarf_Die cu;
	if (!dwarf_open(d) || !sym_map_to_vaddr(d, addr, &v) || !cu_of(d, v, &cu))
		return false;
	Dwarf_Off unit = dwarf_dieoffset(&cu);
	if (!d->line_units || unit != d->line_unit) {
		d->line_units++;
		d->line_unit = unit;
	}
	Dwarf_Line *l = dwarf_getsrc_die(&cu, v);
	if (!l)
		return false;
	int ln = 0;
	const char *src = line_src(&cu, l);
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

/* The subprogram addr2line names at v when the innermost scope is the
 * top-level subprogram *sub of an assembler CU. gas (2.36 and later) gives
 * every function symbol of a .S file a DW_TAG_subprogram, so aliases
 * (glibc's __madvise, __GI___madvise, madvise, __GI_madvise) are
 * subprograms of the same range. bfd takes the function of the smallest
 * range holding the address, and of equal ranges the one read last (its
 * tie-break compares the records' addresses, allocated in DIE order):
 * addr2line says __GI_madvise, __memcpy_avx512_unaligned_erms (after
 * __memmove_...), clone3 (after __clone3 and __GI___clone3); libdw's
 * scopes give the first. Assembler CUs only: C and C++ CUs do not repeat
 * a range, and walking their many DIEs for every address would cost. */
static void asm_alias(Dwarf_Die *cu, uint64_t v, Dwarf_Die *sub)
{
	if (dwarf_srclang(cu) != DW_LANG_Mips_Assembler)
		return;
	Dwarf_Addr lo, hi;
	if (dwarf_lowpc(sub, &lo) != 0 || dwarf_highpc(sub, &hi) != 0)
		return;
	uint64_t best = hi - lo;
	Dwarf_Die c;
	if (dwarf_child(cu, &c) != 0)
		return;
	do {
		if (dwarf_tag(&c) != DW_TAG_subprogram || dwarf_lowpc(&c, &lo) != 0 || dwarf_highpc(&c, &hi) != 0)
			continue;
		if (v >= lo && v < hi && hi - lo <= best) {
			best = hi - lo;
			*sub = c;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

/* Does bfd take a DW_AT_name in a CU of language lang as a linkage name
 * (binutils' non_mangled())? */
static bool lang_unmangled(int lang)
{
	switch (lang) {
	case DW_LANG_C89: case DW_LANG_C: case DW_LANG_Ada83: case DW_LANG_Cobol74:
	case DW_LANG_Cobol85: case DW_LANG_Fortran77: case DW_LANG_Pascal83: case DW_LANG_C99:
	case DW_LANG_Ada95: case DW_LANG_PLI: case DW_LANG_UPC: case DW_LANG_C11:
	case DW_LANG_Mips_Assembler:
		return true;
	default:
		return false;
	}
}

/* sym_inline_frame's a2l_key and a2l_at_start for the innermost function
 * fn at v (addr in map space). addr2line is asked about the file the
 * symbols came from (perf: dso->symsrc_filename); only when that file
 * holds the DWARF too does bfd look the symbol table up for a name (with
 * the DWARF in a separate file it has no symbols to look in). */
static void a2l_first_query(sym_dso *d, Dwarf_Die *cu, Dwarf_Die *fn, uint64_t addr, sym_inline_frame *f)
{
	f->a2l_key = 0;
	f->a2l_at_start = false;
	if (!d->dwarf_path || !d->symsrc_path || strcmp(d->dwarf_path, d->symsrc_path) != 0 ||
	    lang_unmangled(dwarf_srclang(cu)))
		return;
	Dwarf_Attribute at;
	if (dwarf_attr_integrate(fn, DW_AT_linkage_name, &at) || dwarf_attr_integrate(fn, DW_AT_MIPS_linkage_name, &at))
		return;
	f->a2l_key = dwarf_dieoffset(fn) + 1;
	Dwarf_Addr low = 0, base, end;
	ptrdiff_t off = 0;
	if (dwarf_lowpc(fn, &low) != 0 && dwarf_ranges(fn, off, &base, &low, &end) <= 0)
		return;
	sym_info si;
	uint64_t sv;
	f->a2l_at_start = sym_lookup(d, addr, &si) && sym_map_to_vaddr(d, si.start, &sv) && sv == low;
}

/* Like `addr2line -f -i`: the innermost inlined function with the line of
 * addr, then each caller with the call site of the frame inside it, ending
 * with the out-of-line function. */
static size_t sym_inlines_unlocked(sym_dso *d, uint64_t addr, sym_inline_frame *out, size_t max)
{
	uint64_t v;
	Dwarf_Die cu;
	if (!max || !dwarf_full(d) || !sym_map_to_vaddr(d, addr, &v) || !cu_of(d, v, &cu))
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
	if (dwarf_tag(&inner) == DW_TAG_subprogram)
		asm_alias(&cu, v, &inner);
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
		file = intern_path(d, &cu, line_src(&cu, l));
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
		out[n].a2l_key = 0;
		out[n].a2l_at_start = false;
		if (n == 0)
			a2l_first_query(d, &cu, &scopes[i], addr, &out[n]);
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
	sym_dso_has_symbols(d);
	uint64_t v;
	return sym_map_to_vaddr(d, addr, &v) ? v : addr;
}

static const char *sym_srcline_str_unlocked(sym_dso *d, uint64_t addr, bool full_path, char *buf, size_t len)
{
	const char *file;
	unsigned line;
	if (!len)
		return buf;
	bool has_file = d->kind != SYM_DSO_KERNEL && d->kind != SYM_DSO_MODULE && d->kind != SYM_DSO_ANON;
	if (has_file && sym_srcline_unlocked(d, addr, &file, &line)) {
		const char *base = full_path ? NULL : strrchr(file, '/');
		snprintf(buf, len, "%s:%u", base ? base + 1 : file, line);
		return buf;
	}
	sym_info si;
	bool have_sym = sym_lookup(d, addr, &si);
	/* perf asks addr2line about the file its symbols came from; without a
	 * line but inside one of that file's symbols addr2line says "FILE:?",
	 * FILE from the symbol table's FILE symbols ("??" without one, "" for
	 * an empty one), which perf shows as "FILE:0". PLT entries are perf's
	 * own invention; for [vdso] perf asks nobody (verified:
	 * "__vdso_clock_gettime+86"). addr2line names the nearest preceding
	 * symbol of the address's own section (it ignores symbol sizes), so it
	 * may name one where perf has none, and none where perf's symbol was
	 * stretched from another section: in .plt's header, the lazy
	 * resolver's stub, perf's symbol is the size-0 _init of .init and it
	 * prints "_init+OFF". */
	const char *afile = NULL;
	bool a2l_func = false;
	if (has_file && d->symsrc_path && d->kind != SYM_DSO_VDSO && !(have_sym && si.is_plt))
		a2l_func = a2l_names_function(d, sym_objdump_addr(d, addr), &afile);
	if (a2l_func && afile) {
		const char *base = full_path ? NULL : strrchr(afile, '/');
		snprintf(buf, len, "%s:0", base ? base + 1 : afile);
	} else if (a2l_func)
		snprintf(buf, len, "??:0");
	else if (have_sym)
		snprintf(buf, len, "%s+%llu", si.name, (unsigned long long)(addr - si.start));
	else
		snprintf(buf, len, "%s[%llx]", sym_dso_short_name(d),
			 (unsigned long long)sym_objdump_addr(d, addr));
	return buf;
}

/* The public DWARF queries: one thread at a time per dso (the lazy
 * inflation, libdw's caches and the interned strings are shared state). */
bool sym_srcline(sym_dso *d, uint64_t addr, const char **file, unsigned *line)
{
	pthread_mutex_lock(&d->lock);
	bool r = sym_srcline_unlocked(d, addr, file, line);
	pthread_mutex_unlock(&d->lock);
	return r;
}

bool sym_srcline_a2l(sym_dso *d, uint64_t addr, const char **file, unsigned *line)
{
	pthread_mutex_lock(&d->lock);
	bool r = sym_srcline_unlocked(d, addr, file, line);
	if (!r && d->kind != SYM_DSO_KERNEL && d->kind != SYM_DSO_MODULE && d->kind != SYM_DSO_ANON &&
	    d->kind != SYM_DSO_VDSO && d->symsrc_path) {
		*line = 0;
		r = a2l_names_function(d, sym_objdump_addr(d, addr), file);
	}
	pthread_mutex_unlock(&d->lock);
	return r;
}

size_t sym_inlines(sym_dso *d, uint64_t addr, sym_inline_frame *out, size_t max)
{
	pthread_mutex_lock(&d->lock);
	inline_cache *c = d->inline_cache;
	uint64_t v;
	size_t n;
	if (c && addr + 1 && pf_map64_get(&c->at, addr + 1, &v)) {
		n = (size_t)(v & 0xff) < max ? (size_t)(v & 0xff) : max;
		if (n)
			memcpy(out, c->fr + (v >> 8), n * sizeof(*out));
		pthread_mutex_unlock(&d->lock);
		return n;
	}
	if (!c && (c = calloc(1, sizeof(*c))) != NULL) {
		pf_map64_init(&c->at);
		d->inline_cache = c;
	}
	sym_inline_frame fr[INLINE_CACHE_MAX];
	n = sym_inlines_unlocked(d, addr, fr, INLINE_CACHE_MAX);
	c = d->inline_cache;    /* the query may have closed and opened the DWARF again */
	bool found;
	uint64_t *slot;
	if (c && addr + 1 && PF_GROW(c->fr, c->cap, c->n + n) == 0 &&
	    (slot = pf_map64_upsert(&c->at, addr + 1, &found)) != NULL) {
		if (n)
			memcpy(c->fr + c->n, fr, n * sizeof(*fr));
		*slot = (uint64_t)c->n << 8 | n;
		c->n += n;
	}
	pthread_mutex_unlock(&d->lock);
	if (n > max)
		n = max;
	if (n)
		memcpy(out, fr, n * sizeof(*out));
	return n;
}

void sym_dso_prepare_inlines(sym_dso *d)
{
	pthread_mutex_lock(&d->lock);
	dwarf_full(d);
	pthread_mutex_unlock(&d->lock);
}

const char *sym_srcline_str(sym_dso *d, uint64_t addr, bool full_path, char *buf, size_t len)
{
	pthread_mutex_lock(&d->lock);
	const char *r = sym_srcline_str_unlocked(d, addr, full_path, buf, len);
	pthread_mutex_unlock(&d->lock);
	return r;
}

/* closed, and opened again by the next query (under d->lock) */
static void dwarf_release(sym_dso *d)
{
	sym_dwarf_close(d);
	d->dwarf_tried = false;
}

void sym_dso_release_dwarf(sym_dso *d)
{
	pthread_mutex_lock(&d->lock);
	dwarf_release(d);
	pthread_mutex_unlock(&d->lock);
}

/* Has the file compressed sections (SHF_COMPRESSED, or old-style .zdebug)? */
static bool any_compressed(Elf *elf)
{
	size_t shstrndx;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return true;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			return true;
		const char *n = elf_strptr(elf, shstrndx, sh.sh_name);
		if ((sh.sh_flags & SHF_COMPRESSED) || (n && !strncmp(n, ".zdebug", 7)))
			return true;
	}
	return false;
}

bool sym_dso_trim_dwarf(sym_dso *d, size_t max_units)
{
	pthread_mutex_lock(&d->lock);
	bool trim = d->dwarf && d->line_units > max_units;
	if (trim && !d->dwarf_packed)
		d->dwarf_packed = any_compressed(d->dwarf_elf) ? 2 : 1;
	trim = trim && d->dwarf_packed == 1;
	if (trim)
		dwarf_release(d);
	pthread_mutex_unlock(&d->lock);
	return trim;
}
