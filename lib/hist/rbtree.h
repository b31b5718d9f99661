/* rbtree.h — the red-black tree perf's row order replays (perforder.c):
 * nodes are rbn (keys.h) in one array, linked by index, with Linux's
 * insertion and recoloring (lib/rbtree.c) so a replay's trees have perf's
 * shapes. Not a public header.
 */
#ifndef PROFF_HIST_RBTREE_H
#define PROFF_HIST_RBTREE_H

#include <stddef.h>
#include <stdint.h>

#include "keys.h"

#define NIL UINT32_MAX

typedef struct rbtree {
	rbn *n;
	uint32_t root;
	uint32_t rightmost;        /* the last node in order (stage 1 of comm,dso,sym) */
	uint32_t rot[3];           /* the nodes a rotation of the last insertion moved
				      (NIL: none; set only by a rotation) */
} rbtree;

/* node, linked as a red leaf, recolored and rotated as Linux does */
void rb_insert_color(rbtree *t, uint32_t node);
/* the tree's in-order sequence (rbtree.c) */
size_t tree_walk_nodes(const rbtree *t, const uint32_t *items, uint32_t *out, rbn *copy);
size_t tree_walk(const rbtree *t, const uint32_t *items, uint32_t *out);

#endif
