/* sym-span.h — the value ranges perf's sym comparator subtracts in, shared by
 * perf's row order (perforder.c: may a stage's replay be a sort?) and tree
 * mode (hist.c: may perf's input tree hold two rows of one key?). Private
 * to lib/hist. */
#ifndef PROFF_HIST_SYM_SPAN_H
#define PROFF_HIST_SYM_SPAN_H

#include <stdbool.h>
#include <stdint.h>

/* unresolved rows' addresses (0), resolved rows' symbol starts (1) and
 * ends (2). sym_cmp's comparisons are transitive on a set of rows unless
 * one range spans 2^63 or more (perf subtracts them as int64). */
typedef struct sym_span { uint64_t lo[3], hi[3]; } sym_span;
#define SYM_SPAN_EMPTY { { UINT64_MAX, UINT64_MAX, UINT64_MAX }, { 0, 0, 0 } }

static inline void span_add(sym_span *sp, bool unresolved, uint64_t addr, uint64_t start, uint64_t end)
{
	uint64_t v[3] = { addr, start, end };
	for (int j = unresolved ? 0 : 1; j < (unresolved ? 1 : 3); j++) {
		if (v[j] < sp->lo[j])
			sp->lo[j] = v[j];
		if (v[j] > sp->hi[j])
			sp->hi[j] = v[j];
	}
}

/* dst also covers src's ranges (the empty ones add nothing) */
static inline void span_merge(sym_span *dst, const sym_span *src)
{
	for (int j = 0; j < 3; j++) {
		if (src->hi[j] < src->lo[j])
			continue;
		if (src->lo[j] < dst->lo[j])
			dst->lo[j] = src->lo[j];
		if (src->hi[j] > dst->hi[j])
			dst->hi[j] = src->hi[j];
	}
}

static inline bool span_wraps(const sym_span *sp)
{
	for (int j = 0; j < 3; j++)
		if (sp->hi[j] >= sp->lo[j] && sp->hi[j] - sp->lo[j] >= (1ULL << 63))
			return true;
	return false;
}

#endif
