/* diff-int.h — what lib/diff's files share: perf diff's key order (diff.c),
 * used by the groups' table (groups.c) too. */
#ifndef PROFF_DIFF_INT_H
#define PROFF_DIFF_INT_H

#include "proff/diff.h"

/* perf's output comparators of the sort keys: > 0 when a goes first.
 * Strings ascend (NULL last), numbers ascend. */
int diff_keys_sort(const diff_key *a, const diff_key *b, int nkeys);

/* diff.c's steps the reference path (lib/diff/reference.c) shares with
 * diff_compute: an empty result for these hists (their keys, each file's
 * total), a row (dummy: an entry of another file than the baseline; the
 * rows' pairs and keys stay in the result's arrays, and the rows point at
 * them once diff_fix_row_pointers ran), and perf diff's row order and
 * column widths. */
diff_result *diff_result_new(const hist *const *hists, size_t nfiles, const diff_opts *o);
int diff_add_row(diff_result *r, const hist *h, const hist_entry *e, bool dummy);
void diff_fix_row_pointers(diff_result *r);
void diff_result_order(diff_result *r, const diff_opts *o);

/* groups-calls.c: the calls' and avgs' statistics of every row of an exact
 * table (row->calls set, the table's mode known), their q-values, and
 * whether each row has a significant change of either */
int diff_table_calls_stats(diff_table *t);

#endif
