/* proff/symbol.h — turning (dso, address) into symbol names and source lines.
 *
 * A sym_ctx owns one loaded image per DSO (ELF .symtab/.dynsym through libelf,
 * DWARF line tables through libdw, loaded lazily and once). Lookups take the
 * address in perf's "map address" space: for user DSOs the file offset
 * (ip - map.start + map.pgoff); symbol values are adjusted into that space the
 * way perf does (st_value - p_vaddr + p_offset of the containing PT_LOAD). For
 * the kernel, addresses are the runtime virtual addresses.
 *
 * Where the ELF comes from, in perf's order, every candidate checked against
 * the recorded build-id: .gnu_debuglink target, build-id cache
 * (~/.debug/.build-id/xx/yyyy.../elf, then .../debug), /usr/lib/debug/
 * .build-id/xx/yyyy.debug, the recorded path (--symfs DIR prefixes all but
 * the cache). A DSO that cannot be loaded still works: lookups fail and
 * callers print the address as perf does. docs/symbols.md has the details.
 */
#ifndef PROFF_SYMBOL_H
#define PROFF_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/error.h"

typedef struct sym_ctx sym_ctx;
typedef struct sym_dso sym_dso;

typedef struct sym_opts {
	const char *symfs;          /* --symfs DIR, or NULL */
	const char *kallsyms;       /* --kallsyms FILE, or NULL (then /proc/kallsyms if the kernel matches) */
	const char *buildid_dir;    /* default $HOME/.debug */
	const char *recorded_osrelease;  /* from the perf.data header; kernel symbols only if it matches uname -r (or kallsyms given) */
	bool demangle;              /* C++ demangling (default true) */
	bool demangle_params;       /* keep parameter lists, as perf -v does */
	bool inline_frames;         /* resolve inlined frames for srcline */
	/* Binaries' symbols (user dsos) looked up, and loaded once, in this
	 * context instead: profiles read with the same options share them (a
	 * diff's files). Kernel, module and vdso symbols stay per context (they
	 * depend on the recorded kernel). It must outlive the contexts using it. */
	struct sym_ctx *user_dsos;
} sym_opts;

enum sym_dso_kind {
	SYM_DSO_USER = 0,
	SYM_DSO_KERNEL,             /* [kernel.kallsyms] */
	SYM_DSO_MODULE,             /* [module] or /lib/modules/.../x.ko */
	SYM_DSO_VDSO,               /* [vdso] */
	SYM_DSO_ANON,               /* //anon, [heap], [stack], memfd ... (no symbols) */
};

typedef struct sym_info {
	const char *name;           /* demangled; owned by the dso, valid until sym_ctx_free */
	uint64_t start, end;        /* in map-address space, end exclusive */
	bool is_plt;
} sym_info;

int sym_ctx_new(const sym_opts *opts, sym_ctx **out, proff_error *err);
void sym_ctx_free(sym_ctx *ctx);

/* Get (creating once) the DSO for a recorded filename + optional build-id.
 * Never fails for lack of a file: the dso then simply has no symbols.
 * A "/tmp/perf-PID.map" JIT symbol file (what perf reads for anonymous
 * executable maps) is loaded as such; its addresses are absolute ips. */
sym_dso *sym_dso_get(sym_ctx *ctx, const char *filename,
		     const uint8_t *build_id, size_t build_id_size, enum sym_dso_kind kind);

/* sym_dso_get for a kernel module mapped at map_start (its MMAP's start):
 * the load address of the .ko's .text, where its symbols are placed. */
sym_dso *sym_dso_get_kmodule(sym_ctx *ctx, const char *filename, const uint8_t *build_id,
			     size_t build_id_size, uint64_t map_start);
/* A kernel module's map pgoff as perf sets it: the .ko's .text file offset
 * when its symbols come from the .ko, else 0. Loads the dso. */
uint64_t sym_dso_kmod_pgoff(sym_dso *d);
/* Is path a kernel module's file as perf 6.1 names one: "name.ko", or
 * compressed "name.ko.xz" / "name.ko.gz" (a kernel map of any other file
 * is a dso of its own name, with no symbols)? */
bool sym_is_kmod_path(const char *path);

const char *sym_dso_long_name(const sym_dso *d);    /* recorded path */
const char *sym_dso_short_name(const sym_dso *d);   /* basename, or "[kernel.kallsyms]" etc */
enum sym_dso_kind sym_dso_kind(const sym_dso *d);
/* perf's origin char for -v output: 'B' build-id cache elf, 'D' build-id
 * cache debug file, 'b' /usr/lib/debug/.build-id, 'l' debuglink, 'd' the
 * recorded path, 'k' kallsyms, 'K' a kernel module, 'j' perf-PID.map, '!'
 * no symbol file found (perf's "not found") */
char sym_dso_origin(const sym_dso *d);
bool sym_dso_has_symbols(sym_dso *d);

/* The ELF file a user dso's code comes from (the binary the symbol search
 * found: build-id cache, --symfs, the recorded path), for an unwinder's
 * CFI; NULL for other kinds or when none was found. Loads the dso. */
const char *sym_dso_unwind_path(sym_dso *d);

/* The extent of the dso's symbols: the first one's start, the last one's
 * end (perf's map__fixup_start/end of a kernel map loaded from kallsyms).
 * False when it has none. Loads the dso. */
bool sym_dso_extent(sym_dso *d, uint64_t *lo, uint64_t *hi);

/* Symbol containing addr (map-address space). Returns false if none. */
bool sym_lookup(sym_dso *d, uint64_t addr, sym_info *out);

/* Source line of addr: file name (as DWARF has it, full path) and line, like
 * `addr2line -e FILE ADDR` (line 0 when DWARF says 0). Returns false if no
 * line info. Strings valid until sym_ctx_free. */
bool sym_srcline(sym_dso *d, uint64_t addr, const char **file, unsigned *line);

/* What `addr2line -e FILE ADDR` says, as perf's callchain srclines read it:
 * sym_srcline's line, else, when addr2line still names a function there,
 * the source file it takes from the symbol table's FILE symbols with line 0
 * ("crtstuff.c:?" — *file NULL when it has none: "??:?"). False when
 * addr2line names nothing (perf then shows "??:0" too). */
bool sym_srcline_a2l(sym_dso *d, uint64_t addr, const char **file, unsigned *line);

/* The address objdump/addr2line use for addr (perf's map__rip_2objdump):
 * the ELF virtual address for user DSOs, addr itself for the kernel. */
uint64_t sym_objdump_addr(sym_dso *d, uint64_t addr);

/* perf's srcline text for addr (map-address space), into buf:
 *   "file.c:42"  (basename of the DWARF file name; the full path if full_path),
 *   "??:0"       no line, but addr is inside a symbol of the DSO's file (what
 *                perf gets from `addr2line` answering "??:?"),
 *   "sym+off"    no file to ask (kernel, modules) or a PLT entry, but a symbol
 *                (off decimal from the symbol start), e.g. "do_syscall_64+70",
 *   "dso[hex]"   neither line nor symbol (short name, objdump address in hex).
 * Returns buf. */
const char *sym_srcline_str(sym_dso *d, uint64_t addr, bool full_path, char *buf, size_t len);

/* The DSO's DWARF data (libdw's parsed units and line tables, the debug
 * file's mapping) released: a caller done with the DSO's source lines gives
 * their memory back. Strings handed out stay valid; a later query opens the
 * file again. */
void sym_dso_release_dwarf(sym_dso *d);
/* The same when the DWARF data holds the line tables of more than
 * max_units compile units (counted as the queries go from one to another)
 * and opening the file again costs little (its sections are not
 * compressed): for a caller asking in address order, which seldom needs a
 * released unit again. True when released. */
bool sym_dso_trim_dwarf(sym_dso *d, size_t max_units);

/* Inlined frames at addr, innermost first, as `addr2line -f -i`: frame 0 is
 * the innermost (inlined) function with addr's own line, each next frame the
 * function that contains the previous one with the call site, the last one the
 * out-of-line function. Names demangled as symbols are. Returns the number
 * written (<= max), 0 without DWARF. */
typedef struct sym_inline_frame {
	const char *name;
	const char *file;
	unsigned line;
	/* Frame 0 only: binutils' addr2line names the first address it is
	 * asked about in a function whose DWARF name is no linkage name (C++
	 * without DW_AT_linkage_name: `main`, a static template, an extern "C"
	 * header inline) by the symbol table's function there, every later one
	 * by the DWARF name; for good when that symbol starts where the
	 * function does. a2l_key identifies such a function (0: not one, or
	 * addr2line would read the DWARF from another file than the symbols'),
	 * a2l_at_start says the symbol holding addr starts at its low pc. */
	uint64_t a2l_key;
	bool a2l_at_start;
} sym_inline_frame;
size_t sym_inlines(sym_dso *d, uint64_t addr, sym_inline_frame *out, size_t max);
/* What sym_inlines' first call costs, done now: the DSO's DWARF opened in
 * full (a compressed debug file's sections inflated) and its units
 * indexed. For a thread that would otherwise wait. */
void sym_dso_prepare_inlines(sym_dso *d);

/* ---- JIT symbol files (perfmap.c) ----
 * /tmp/perf-PID.map, "START SIZE name" per line in hex, read as perf 6.1
 * reads it: the line's last byte dropped (newline or not), each number as
 * strtoull(.., 16) reads it, one byte skipped after each, and a line whose
 * rest after a number is 2 bytes or less skipped. */
typedef struct sym_perfmap_entry {
	uint64_t start, size;
	const char *name;           /* into the line */
	size_t name_len;
	bool strict;                /* the line has the documented form */
} sym_perfmap_entry;

typedef struct sym_perfmap_stats {
	size_t lines;               /* lines read */
	size_t skipped;             /* lines perf skips */
	size_t loose;               /* lines read as perf reads them, not of the documented form */
} sym_perfmap_stats;

/* One line of n bytes (its newline included; line[n] must be writable,
 * the line is changed): 1 and *out for a symbol, 0 for a line perf skips. */
int sym_perfmap_line(char *line, size_t n, sym_perfmap_entry *out);

/* Every line of buf: fn for each symbol (its non-zero return ends the
 * parse and is returned), counts into *st. PROFF_ENOMEM without memory. */
typedef int (*sym_perfmap_fn)(void *arg, const sym_perfmap_entry *e);
int sym_perfmap_parse(const char *buf, size_t len, sym_perfmap_fn fn, void *arg, sym_perfmap_stats *st);

/* The name perf gives a mapping of process pid: "/tmp/perf-PID.map" (into
 * buf) for an executable mapping with no file (//anon, /dev/zero,
 * /anon_hugepage, MAP_HUGETLB, [stack], [heap], /SYSV); fn otherwise. prot
 * and flags as in the MMAP2 record (an MMAP record: PROT_EXEC unless it is a
 * data mapping). */
const char *sym_jit_map_name(const char *fn, uint32_t pid, uint32_t prot, uint32_t flags, char *buf, size_t len);

/* Is name "/tmp/perf-PID.map"? *pid set when so (pid may be NULL). */
bool sym_is_perf_map(const char *name, int *pid);

/* What went wrong reading the dso's symbol file, as one line (a JIT map
 * not owned by the user or root, not a regular file, lines not of its
 * form), or NULL. Loads the dso. */
const char *sym_dso_problem(sym_dso *d);

/* The kernel's address relocation: perf's kernel map is recorded as an MMAP of
 * "[kernel.kallsyms]_text" with pgoff = runtime address of _text. */
void sym_kernel_set_ref(sym_ctx *ctx, uint64_t text_addr);
/* The recorded _text address (sym_kernel_set_ref): false when none was */
bool sym_kernel_ref(sym_ctx *ctx, uint64_t *text_addr);

/* Build-id helpers */
int sym_read_build_id(const char *path, uint8_t *id, size_t max, proff_error *err);  /* returns size or <0 */
void sym_build_id_hex(const uint8_t *id, size_t size, char *out /* 2*size+1 */);

#endif
