/* diff-int.h — what lib/diff's files share: perf diff's key order (diff.c),
 * used by the groups' table (groups.c) too. */
#ifndef PROFF_DIFF_INT_H
#define PROFF_DIFF_INT_H

#include "proff/diff.h"

/* perf's output comparators of the sort keys: > 0 when a goes first.
 * Strings ascend (NULL last), numbers ascend. */
int diff_keys_sort(const diff_key *a, const diff_key *b, int nkeys);

/* groups-calls.c: the calls' and avgs' statistics of every row of an exact
 * table (row->calls set, the table's mode known), their q-values, and
 * whether each row has a significant change of either */
int diff_table_calls_stats(diff_table *t);

#endif
