/* rbtree.c — the red-black tree of perf's row order (rbtree.h): Linux's
 * insertion rebalancing, on nodes linked by index, and the in-order walk
 * that reads a replayed tree's rows.
 */
#include "proff/hist.h"

#include "rbtree.h"

static void set_child(rbtree *t, uint32_t parent, uint32_t old, uint32_t new_)
{
	if (parent == NIL)
		t->root = new_;
	else if (t->n[parent].left == old)
		t->n[parent].left = new_;
	else
		t->n[parent].right = new_;
}

/* old's position goes to new_ (which takes old's color); old becomes a child
 * of new_ with color `color` (Linux __rb_rotate_set_parents) */
static void rotate_set_parents(rbtree *t, uint32_t old, uint32_t new_, uint8_t color)
{
	uint32_t parent = t->n[old].parent;
	t->n[new_].parent = parent;
	t->n[new_].red = t->n[old].red;
	t->n[old].parent = new_;
	t->n[old].red = color;
	set_child(t, parent, old, new_);
}

/* Linux lib/rbtree.c __rb_insert, node already linked as a red leaf */
void rb_insert_color(rbtree *t, uint32_t node)
{
	rbn *n = t->n;
	uint32_t parent = n[node].parent, gparent, tmp;
	for (;;) {
		if (parent == NIL) {
			n[node].red = 0;
			break;
		}
		if (!n[parent].red)
			break;
		gparent = n[parent].parent;
		tmp = n[gparent].right;
		if (parent != tmp) {                  /* parent is gparent's left */
			if (tmp != NIL && n[tmp].red) {
				n[tmp].red = 0;
				n[parent].red = 0;
				node = gparent;
				parent = n[node].parent;
				n[node].red = 1;
				continue;
			}
			tmp = n[parent].right;
			t->rot[0] = node == tmp ? node : NIL;
			t->rot[1] = parent;
			t->rot[2] = gparent;
			if (node == tmp) {
				tmp = n[node].left;
				n[parent].right = tmp;
				n[node].left = parent;
				if (tmp != NIL) {
					n[tmp].parent = parent;
					n[tmp].red = 0;
				}
				n[parent].parent = node;
				n[parent].red = 1;
				parent = node;
				tmp = n[node].right;
			}
			n[gparent].left = tmp;
			n[parent].right = gparent;
			if (tmp != NIL) {
				n[tmp].parent = gparent;
				n[tmp].red = 0;
			}
			rotate_set_parents(t, gparent, parent, 1);
			break;
		} else {
			tmp = n[gparent].left;
			if (tmp != NIL && n[tmp].red) {
				n[tmp].red = 0;
				n[parent].red = 0;
				node = gparent;
				parent = n[node].parent;
				n[node].red = 1;
				continue;
			}
			tmp = n[parent].left;
			t->rot[0] = node == tmp ? node : NIL;
			t->rot[1] = parent;
			t->rot[2] = gparent;
			if (node == tmp) {
				tmp = n[node].right;
				n[parent].left = tmp;
				n[node].right = parent;
				if (tmp != NIL) {
					n[tmp].parent = parent;
					n[tmp].red = 0;
				}
				n[parent].parent = node;
				n[parent].red = 1;
				parent = node;
				tmp = n[node].left;
			}
			n[gparent].right = tmp;
			n[parent].left = gparent;
			if (tmp != NIL) {
				n[tmp].parent = gparent;
				n[tmp].red = 0;
			}
			rotate_set_parents(t, gparent, parent, 1);
			break;
		}
	}
}

/* The tree's in-order sequence as rows (node i is items[i], or i itself
 * when items is NULL); the count. With copy, each node is also copied to
 * copy[k] as it is visited (one pass over the nodes, not two). */
size_t tree_walk_nodes(const rbtree *t, const uint32_t *items, uint32_t *out, rbn *copy)
{
	/* an rb-tree of n < 2^32 nodes is at most 64 deep */
	size_t k = 0, sp = 0;
	uint32_t stack[128];
	uint32_t cur = t->root;
	while (cur != NIL || sp) {
		while (cur != NIL) {
			stack[sp++] = cur;
			cur = t->n[cur].left;
		}
		cur = stack[--sp];
		if (copy)
			copy[k] = t->n[cur];
		out[k++] = items ? items[cur] : cur;
		cur = t->n[cur].right;
	}
	return k;
}

size_t tree_walk(const rbtree *t, const uint32_t *items, uint32_t *out)
{
	return tree_walk_nodes(t, items, out, NULL);
}
