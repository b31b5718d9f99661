/* unwind-int.h — the unwinder's state, shared by unwind.c (the walks
 * through libdwfl) and unwind-memo.c (walks remembered and recalled).
 */
#ifndef PROFF_UNWIND_INT_H
#define PROFF_UNWIND_INT_H

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdint.h>

#include "proff/unwind.h"
#include "proff/util.h"

#define UW_DEFAULT_FRAMES 127   /* perf's PERF_MAX_STACK_DEPTH */
#define UW_MAX_SPACES 64        /* Dwfls kept alive (least recently used goes) */
#define UW_MAX_FILES 4096       /* ELF files kept open */

/* perf's x86-64 register numbers (PERF_REG_X86_*) */
enum {
	PR_AX, PR_BX, PR_CX, PR_DX, PR_SI, PR_DI, PR_BP, PR_SP, PR_IP, PR_FLAGS,
	PR_CS, PR_SS, PR_DS, PR_ES, PR_FS, PR_GS, PR_R8, PR_R9, PR_R10, PR_R11,
	PR_R12, PR_R13, PR_R14, PR_R15,
};

/* The callee-saved registers (DWARF numbers: rbx, rbp, r12-r15). */
#define UW_CALLEE_SAVED ((1u << 3) | (1u << 6) | (1u << 12) | (1u << 13) | (1u << 14) | (1u << 15))
/* The registers walk_on looks at to decide whether a walk goes on: the
 * callee-saved ones, rsp and rip. */
#define UW_END_REGS (UW_CALLEE_SAVED | (1u << 7) | (1u << 16))

/* An ELF file the CFI comes from: opened once per unwinder. */
typedef struct uw_file {
	char *path;
	int fd;                     /* -1: could not be opened as ELF */
	Elf *elf;
	const uint8_t *raw;         /* the file's bytes (reads outside the stack copy) */
	size_t rawsize;
	bool exec;                  /* ET_EXEC: no bias */
	GElf_Phdr *loads;           /* PT_LOAD headers */
	size_t nloads;
} uw_file;

/* A module reported to a Dwfl: which file at which bias (the check of
 * every frame against the caller's maps). */
typedef struct uw_mod {
	Dwfl_Module *mod;
	const uw_file *file;
	uint64_t bias;
} uw_mod;

typedef struct uw_space {
	uint64_t key;
	uint64_t gen;               /* this Dwfl's incarnation (uw_ctx.gen): remembered walks name it */
	Dwfl *dwfl;
	uw_mod *mods;
	size_t nmods, cap_mods;
	uint64_t used;              /* the unwinder's clock at its last use */
} uw_space;

struct uw_ctx {
	int max_frames;
	Elf *machine_elf;           /* an x86-64 header: the ebl backend for dwfl_attach_state */
	uint8_t machine_img[sizeof(Elf64_Ehdr)];
	uw_file **files;
	size_t nfiles, cap_files;
	pf_map64 file_index;        /* path hash -> 1 + index of the first file with that hash */
	uw_space spaces[UW_MAX_SPACES];
	size_t nspaces;
	uint64_t clock;
	uw_stats stats;
	Dwfl_Callbacks dwfl_callbacks;  /* libdwfl's defaults for finding .debug_frame */
	char *debuginfo_path;           /* NULL: libdwfl's default search path */

	/* the sample being unwound (the Dwfl callbacks' argument) */
	const pd_sample *s;
	const pd_attr *a;
	uw_find_map_fn find_map;
	uint64_t maps_gen;          /* the caller's generation of find_map's maps (uw_unwind) */
	void *arg;
	uw_space *sp;
	uint64_t regs[17];          /* DWARF order */
	uint64_t stack_lo;          /* SP: the stack copy's address */
	uint64_t stack_size;        /* bytes valid in the copy */
	struct uw_pc { uint64_t pc; bool act; } *pcs;   /* the walk's frames: pc, whether an activation */
	size_t npcs, cap_pcs;
	/* the registers of the walk's last two frames (frame i in [i % 2]),
	 * bit r of fmask set when libdwfl knows register r there; only those
	 * of UW_END_REGS unless all_regs (walk_on's second look) */
	Dwarf_Word fregs[2][17];
	uint32_t fmask[2];
	bool all_regs;
	/* maps module_at checked during this sample's walk (maps do not change
	 * within a sample): most frames are in a few of them */
	struct { uint64_t start, end; } seen[8];
	unsigned nseen;
	size_t want;                /* frames to collect */
	bool stale;                 /* a frame's module is not the map's: start afresh */
	size_t beyond;              /* 1 + frames walked when a read above the stack copy found nothing, 0: none */
	size_t step_reads;          /* memory reads since the walk's last frame was reported */
	uint64_t step_last;         /* the last one's value (1: it failed) */
	bool nofile;

	uint64_t *chain;            /* uw_sample_chain's result */
	size_t cap_chain;

	/* remembered walks (unwind-memo.c) */
	enum uw_memo memo_mode;
	uint64_t gen;               /* Dwfls started so far */
	uint64_t *memo;             /* the walks, one after another */
	size_t memo_len, memo_cap;
	uint32_t *memo_slots;       /* hash slots: 1 + a walk's offset in memo, 0: free */
	size_t memo_used;
	bool logging;               /* memory_read logs its reads (a walk to remember) */
	bool log_full;              /* more than the log keeps: not remembered */
	struct uw_read { uint64_t addr, value; bool ok; } *log;
	size_t nlog, cap_log;
	struct uw_keyed { uint64_t gen, pc; uint32_t regs; } *keyed_at;   /* rules_regs' answers */
	size_t memo_slot[2];        /* 1 + the slot of the sample's key, 0: none (full, narrow) */
	const uint64_t *memo_checked;   /* UW_MEMO_CHECK: the remembered walk the fresh one must equal */
};

/* unwind.c */
/* 8 bytes at addr as perf's unwinder reads them: the stack copy, else the mapped
 * file there, else 0 where a map without a file to read holds addr; false
 * only where no map does (unwind.c, read_outside) */
bool uw_read_word(uw_ctx *u, uint64_t addr, Dwarf_Word *result);

/* unwind-memo.c: memo_begin before a walk (its reads logged), memo_end
 * after (remembered when keep), memo_recall instead of one (true: u's
 * frames and *rc are the remembered walk's) */
void memo_log(uw_ctx *u, uint64_t addr, bool ok, uint64_t value);
void memo_begin(uw_ctx *u);
void memo_end(uw_ctx *u, const pd_sample *s, int rc, bool keep);
bool memo_recall(uw_ctx *u, const pd_sample *s, int *rc);
void memo_free(uw_ctx *u);

#endif
