/* symbol-int.h — internals shared by the files of lib/symbol/ (not a public
 * header): the dso and context structures, the symbol table entry, and the
 * helpers the ELF, kallsyms, DWARF and demangling parts call on each other.
 */
#ifndef PROFF_SYMBOL_INT_H
#define PROFF_SYMBOL_INT_H

#include <pthread.h>

#include <gelf.h>
#include <libelf.h>
#include <elfutils/libdw.h>

#include "proff/symbol.h"
#include "proff/util.h"

#define SYM_BUILD_ID_MAX 20     /* perf's BUILD_ID_SIZE */

/* One symbol. Names are offsets into the dso's name buffer while loading and
 * become pointers once the table is final. */
typedef struct sym_ent {
	uint64_t start, end;        /* map-address space, end exclusive */
	union { size_t off; const char *ptr; } name;
	uint32_t order;             /* insertion order: ties keep perf's tree order */
	uint8_t bind, type;
	uint8_t is_plt;
	/* The name is a C++ symbol not demangled yet (SYM_MANGLED; with
	 * SYM_MANGLED_PLT the last 4 bytes are "@plt", kept as they are):
	 * names are demangled when first looked up, most never are. Read
	 * and cleared atomically (lookups of a shared context). */
	uint8_t mangled;
} sym_ent;

#define SYM_MANGLED 1
#define SYM_MANGLED_PLT 2

/* A PT_LOAD of the runtime ELF, for map-address <-> ELF virtual address. */
typedef struct sym_load {
	uint64_t vaddr, offset, filesz, memsz;
} sym_load;

/* A symbol erased by the duplicate fixup: what replaying perf's tree needs. */
typedef struct sym_erased {
	uint64_t start;
	uint32_t order;             /* its insertion order */
	uint32_t at;                /* symbols inserted before it was erased */
} sym_erased;

/* An address range where symbols overlap: lookups there follow perf's tree. */
typedef struct sym_span {
	uint64_t lo, hi;
} sym_span;

/* perf's symbol red-black tree as its lookup sees it (symtree.c): children
 * by index into the table's sorted entries, -1 for none. Only a table with
 * overlapping symbols has one; a dso's links are made when it is loaded
 * (until then the table keeps its erase log). */
typedef struct sym_tree {
	int32_t root;
	int32_t (*kid)[2];          /* [i][0] left, [i][1] right child of v[i]; NULL: not built yet */
	sym_span *spans;            /* sorted, disjoint */
	size_t nspans;
} sym_tree;

typedef struct sym_symtab {
	sym_ent *v;
	size_t n, cap;
	char *names;                /* name bytes, each NUL-terminated */
	size_t names_len, names_cap;
	uint32_t next_order;
	bool track;                 /* log erases, build the tree if symbols overlap */
	sym_erased *erased;         /* erases in the order perf makes them (kept until the tree is built) */
	size_t nerased, erased_cap;
	sym_tree *tree;             /* NULL unless symbols overlap */
	bool demangle_params;       /* the demangled form (sym_opts.demangle_params) */
	char **dem;                 /* demangled names made by lookups */
	size_t ndem, dem_cap;
} sym_symtab;

struct sym_dso {
	sym_ctx *ctx;
	sym_dso *hnext;             /* hash chain */
	char *long_name, *short_name;
	enum sym_dso_kind kind;
	uint8_t bid[SYM_BUILD_ID_MAX];
	size_t bid_size;            /* 0: no build-id known */
	bool bid_from_file;         /* none recorded: read from the file, as perf does */
	size_t key_bid_size;        /* the recorded size (the dso's identity; never changes) */
	uint64_t key;

	/* A context may be shared by threads (one file loaded in two halves):
	 * lock guards the lazy symbol load and every DWARF query; loaded is
	 * read without it (set, with release order, once the table is final). */
	pthread_mutex_t lock;       /* recursive */
	bool loaded;                /* symbol load done */
	bool loading;               /* symbol load started (guards recursion) */
	char origin;                /* perf's symtab origin char, ' ' if none */
	sym_symtab tab;
	char *symsrc_path;          /* file the symbols came from */
	char *runtime_path;         /* file the PLT / program headers came from */
	char *dwarf_path;           /* file with .debug_info, if any */
	char *problem;              /* what went wrong reading the symbol file (sym_dso_problem) */
	sym_load *loads;
	size_t nloads;
	uint64_t text_offset;       /* vdso: address of the image; 0 otherwise */
	uint64_t map_start;         /* a kernel module: its map's start (sym_dso_get_kmodule: part of its identity) */
	bool have_map_start;
	uint64_t kmod_pgoff;        /* a module read from its .ko: .text's file offset */
	uint8_t *image;             /* in-memory ELF copy (vdso), owned */
	size_t image_size;
	int image_fd;               /* a memfd holding image for an unwinder (-1: none yet) */
	char image_path[32];        /* "/proc/self/fd/N" of image_fd */

	/* DWARF, opened lazily */
	bool dwarf_tried;
	int dwarf_fd;
	Elf *dwarf_elf;
	Dwarf *dwarf;
	void *cu_index;             /* dwarf.c's CU address ranges */
	size_t line_units;          /* units whose lines were asked since the open (sym_dso_trim_dwarf) */
	uint64_t line_unit;         /* the last one's DIE offset */
	uint8_t dwarf_packed;       /* DWARF file compressed: 0 not known yet, 1 no, 2 yes */
	bool a2l_tried;
	void *a2l_index;            /* dwarf.c's addr2line function-symbol view */
	void *inline_cache;         /* dwarf.c's answers of sym_inlines, by address */
};

struct sym_ctx {
	pthread_mutex_t lock;       /* recursive; the dso list, kallsyms, strs (a dso's lock may be held) */
	sym_opts opts;
	char *symfs, *kallsyms, *buildid_dir, *osrelease;
	sym_dso **dsos;
	size_t ndsos, cap;
	pf_map64 index;             /* key hash -> 1 + index of the first dso of the chain */
	bool have_ref;
	uint64_t kernel_ref;        /* runtime address of _text as recorded */
	/* kallsyms, parsed once for the kernel and every module */
	bool kallsyms_tried;
	sym_symtab kall;            /* every function symbol, names keep "\t[module]" */
	char *kall_path;
	size_t kall_bad;            /* lines not of kallsyms' form, skipped */
	uint64_t kall_first_bad;    /* the first one's byte offset */
	pf_strtab strs;             /* interned strings: file names, inline names */
	bool strs_init;
};

/* symtab building (symbol.c) */
int symtab_add(sym_symtab *t, uint64_t start, uint64_t size, uint8_t bind, uint8_t type,
	       const char *name, size_t namelen, bool is_plt);
/* sort + perf's fixup_end + fixup_duplicate (names still offsets) */
void symtab_fixup(sym_symtab *t, bool is_kallsyms);
/* final sort; names become pointers */
void symtab_finish(sym_symtab *t, bool is_kallsyms);
void symtab_free(sym_symtab *t);
const sym_ent *symtab_find(sym_symtab *t, uint64_t addr);

/* symtree.c: perf's symbol tree. symtree_prepare (t final and sorted) finds
 * the overlapping ranges; without any, t->tree stays NULL. symtree_build
 * replays the insertion order and the logged erases, then frees the log;
 * false (and t->tree NULL) when it cannot. symtree_find descends the tree. */
int symtree_prepare(sym_symtab *t);
bool symtree_build(sym_symtab *t);
void symtree_free(sym_tree *tr);
const sym_ent *symtree_find(const sym_symtab *t, uint64_t addr);

/* a recursive mutex (the dso and context locks) */
int sym_mutex_init(pthread_mutex_t *m);

/* kallsyms.c */
int sym_kernel_load(sym_dso *d);

/* kmodule.c: a module's symbols from its .ko; 1 read, 0 no such file (or
 * not a .ko: then a problem is set), < 0 out of memory */
int sym_kmodule_load(sym_dso *d);

/* what went wrong reading d's symbol file, for sym_dso_problem (symbol.c) */
/* the GNU build-id note of an open ELF (sections, else program headers): its
 * length, or -1 */
int sym_elf_build_id(Elf *elf, uint8_t *id, size_t max);
/* a module file perf decompresses (.ko.xz, .ko.gz): its -v origin is 'm' */
bool sym_kmod_compressed(const char *path);
void sym_dso_set_problem(sym_dso *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* demangle.c: returns a malloc'd demangled name or NULL if not mangled.
 * Without params the result is the name the way perf 6.1 prints it by
 * default (no parameter list, return type or qualifiers). */
char *sym_demangle(const char *name, bool with_params);

/* dwarf.c */
void sym_dwarf_close(sym_dso *d);

/* map address -> ELF virtual address of the runtime file (for DWARF) */
bool sym_map_to_vaddr(const sym_dso *d, uint64_t addr, uint64_t *vaddr);


#endif
