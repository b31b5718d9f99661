/* flamegraph-int.h — what the flame graph's files share inside lib/output:
 * the page's embedded CSS and JS, shares, titles and the widths' layout. */
#ifndef PROFF_FLAMEGRAPH_INT_H
#define PROFF_FLAMEGRAPH_INT_H

#include <stddef.h>
#include <stdint.h>

#include "proff/flamegraph.h"

/* lib/output/flamegraph-page.{css,js}, embedded at build time (NUL-ended) */
extern const char fg_page_css[];
extern const char fg_page_js[];

/* v as a share of side's total (0 when the side is empty) */
double fg_share(const flamegraph *g, int side, uint64_t v);
/* FlameGraph's title of frame i of v */
void fg_frame_title(const flamegraph *g, const fg_view *v, size_t i, char *buf, size_t len);
/* each frame's width as a share of the total (the larger side for a diff) */
int fg_layout_widths(const flamegraph *g, const fg_view *v, double *w);

#endif
