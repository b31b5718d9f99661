/* proff/unwind.h — user stacks of perf samples unwound with DWARF CFI.
 *
 * A sample recorded with `perf record --call-graph dwarf` carries the user
 * registers (PERF_SAMPLE_REGS_USER) and a copy of the top of the user stack
 * (PERF_SAMPLE_STACK_USER) instead of a user callchain. The callers are found
 * by elfutils' unwinder (libdwfl: dwfl_attach_state, dwfl_getthread_frames)
 * reading the registers from the sample, memory from the stack copy (else
 * from the mapped ELF file) and the CFI (.eh_frame, .debug_frame) from the
 * binaries the caller names through a map lookup.
 *
 * Both perf.data loaders call this one unwinder (lib/model and lib/stream):
 * uw_sample_chain gives the callchain perf's report resolves for the sample
 * (the recorded kernel part, then PERF_CONTEXT_USER and the unwound user
 * frames), which the loaders then treat as a recorded chain.
 *
 * A caller unwinds a sample only where perf does: in a process that has a
 * binary mapped (perf sets its unwinder up with the first ELF map; before
 * an exec's maps arrive, a sample keeps its kernel frames only).
 *
 * One unwinder per thread (libdwfl is not thread-safe); it keeps a Dwfl per
 * address space (the caller's id for a process's maps) with the modules
 * reported as frames reach them, checked against the caller's maps at every
 * frame, so maps that change under an address space start it afresh.
 * docs/symbols.md has the details and how this differs from perf's own
 * (libunwind) unwinder.
 */
#ifndef PROFF_UNWIND_H
#define PROFF_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/perfdata.h"

typedef struct uw_ctx uw_ctx;

/* A mapping of the sample's process, as the caller's lookup finds it:
 * [start, end) maps file offset pgoff of the ELF file path (NULL: no file
 * to read — anonymous or JIT memory, or the file was not found). */
typedef struct uw_map {
	uint64_t start, end, pgoff;
	const char *path;
} uw_map;

/* The caller's map lookup in the sample's address space: false when no map
 * holds addr. Called for each frame and each read outside the stack copy. */
typedef bool (*uw_find_map_fn)(void *arg, uint64_t addr, uw_map *out);

/* What became of one sample's user stack (counted for the warnings). */
enum uw_status {
	UW_NONE = 0,        /* no user registers or stack in the sample: nothing to do */
	UW_DONE,            /* unwound to the outermost frame */
	UW_PARTIAL,         /* stopped early: the stack copy was too short */
	UW_NO_REGS,         /* registers missing (no IP or SP in the sample's mask) */
	UW_NO_STACK,        /* the kernel copied none of the stack (dyn_size 0): no user frame */
	UW_BAD_ABI,         /* not a 64-bit x86 process: not unwound */
};

typedef struct uw_stats {
	uint64_t samples;       /* samples with registers and a stack copy */
	uint64_t partial;       /* UW_PARTIAL */
	uint64_t no_regs;       /* UW_NO_REGS */
	uint64_t no_stack;      /* UW_NO_STACK */
	uint64_t bad_abi;       /* UW_BAD_ABI */
	uint64_t no_file;       /* frames in a mapped file that could not be opened as ELF */
	uint64_t restarts;      /* address spaces started afresh (their maps changed) */
	uint64_t recalled;      /* samples whose walk was a remembered one (uw_set_memo) */
	uint64_t mismatched;    /* UW_MEMO_CHECK: remembered walks that a fresh one contradicted */
} uw_stats;

/* Remembered walks. A walk is a function of the sample's ip, stack pointer,
 * callee-saved registers, the stack words it read and the maps of the
 * frames it met (where the leaf's CFI names no other register); a sample
 * that matches a remembered walk in all of those gets its frames without
 * walking again. UW_MEMO_CHECK walks every such sample as well and counts
 * a difference in uw_stats.mismatched (tests). */
enum uw_memo {
	UW_MEMO_ON = 0,         /* the default */
	UW_MEMO_OFF,
	UW_MEMO_CHECK,
};

/* max_frames: user frames kept per sample, the leaf included (perf's
 * --max-stack, 127 by default); 0 means 127. NULL on no memory. */
uw_ctx *uw_new(int max_frames);
void uw_free(uw_ctx *u);

/* Does this event's sample carry what the unwinder needs (REGS_USER and
 * STACK_USER with a stack size)? */
bool uw_event_wants(const pd_attr *a);

/* The user frames of sample s (event a), callee first: the sample's user ip
 * (from its registers), then each caller's return address minus one (perf's
 * "non-activation frames"; a signal frame's own address is kept). space
 * names the sample's address space (the caller's maps for find_map);
 * maps_gen is their generation: a number that changes whenever find_map's
 * answers in space may change (0: not known). A remembered walk then
 * skips checking its frames' maps when space's are still the ones it was
 * taken in. Returns the number of frames written to ips (<= max), *st
 * what became of the stack. */
size_t uw_unwind(uw_ctx *u, uint64_t space, uint64_t maps_gen, const pd_sample *s, const pd_attr *a,
		 uw_find_map_fn find_map, void *arg, uint64_t *ips, size_t max, enum uw_status *st);

/* In uw_sample_chain's chain, the frame perf's unwinder makes of a return
 * address of 0 read from memory, which perf keeps as 0 - 1: its address
 * 0xffffffffffffffff would read as a context word (perf's unwinder hands
 * its frames over one by one, never as such a word). No perf context has
 * this value, and the kernel writes no user frames into a dwarf-mode
 * sample's chain. */
#define UW_CHAIN_ZERO_RETURN PD_CONTEXT_MAX

/* The sample's callchain as perf's report resolves it in dwarf mode: the
 * recorded chain (the kernel part; perf records no user part with
 * --call-graph dwarf), then PERF_CONTEXT_USER and the unwound user frames
 * (the last one UW_CHAIN_ZERO_RETURN where uw_unwind's is UINT64_MAX).
 * *out points to the unwinder's buffer, valid until its next call; returns
 * the number of entries, 0 when nothing was unwound (the caller then uses
 * the recorded chain as it is). -1: out of memory. */
long uw_sample_chain(uw_ctx *u, uint64_t space, uint64_t maps_gen, const pd_sample *s, const pd_attr *a,
		     uw_find_map_fn find_map, void *arg, const uint64_t **out);

const uw_stats *uw_get_stats(const uw_ctx *u);
void uw_set_memo(uw_ctx *u, enum uw_memo mode);
/* Adds b's counts to a (the halves of a split load). */
void uw_stats_add(uw_stats *a, const uw_stats *b);

#endif
