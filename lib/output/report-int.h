/* report-int.h — what lib/output's report files share. */
#ifndef PROFF_OUTPUT_REPORT_INT_H
#define PROFF_OUTPUT_REPORT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/hist.h"

/* --branch-history: callchain node n's text as perf prints it — "sym
 * file:line" and, with counts (perf's graphs; its flat and folded chains
 * have none), the node's branch statistics — into buf */
const char *report_bh_frame_name(const hist *h, uint32_t n, bool counts, char *buf, size_t len);

#endif
