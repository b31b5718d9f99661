/* symtree.c — perf's symbol lookup where a DSO's symbols overlap.
 *
 * perf 6.1 keeps a DSO's symbols in a red-black tree keyed by start address
 * (an equal start goes right) and finds an address by descending it: left if
 * ip < start, right if ip is at or past the end (a zero-sized symbol holds its
 * own start), else that node. Where symbols overlap — typically a size-0
 * `_init` that the end fixup stretched over .plt before the PLT entries were
 * added — the answer is whichever candidate lies first on the descent path,
 * so it depends on the tree's shape: on the insertion order, on the erases of
 * the duplicate fixup, and on the rebalancing of the kernel's rbtree
 * (lib/rbtree.c: colour flips and rotations on insert; on erase, a node with
 * two children replaced by its in-order successor, then the sibling cases).
 *
 * For a table whose final symbols overlap, this file replays that history on
 * an index-based red-black tree that makes the same decisions, and keeps just
 * the final child links. Lookups inside the overlapping ranges descend it;
 * every other address keeps the binary search (both give the same answer
 * there). Tables without overlaps get no tree at all. A dso's tree is built
 * when its symbols are loaded (under the dso's lock), so lookups from several
 * threads only read it; symtab_find still builds one on first use for
 * tables loaded elsewhere.
 */
#include "symbol-int.h"

#include <stdlib.h>

/* The replay tree: nodes are insertion orders. */
typedef struct rbt {
	const uint64_t *key;
	int32_t (*c)[2];            /* children: [0] left, [1] right, -1 none */
	int32_t *p;                 /* parent, -1 for the root */
	uint8_t *red;
	int32_t root;
} rbt;

static void change_child(rbt *t, int32_t old, int32_t new, int32_t parent)
{
	if (parent < 0)
		t->root = new;
	else if (t->c[parent][0] == old)
		t->c[parent][0] = new;
	else
		t->c[parent][1] = new;
}

/* After a rotation: top takes old's parent and colour, old hangs below top
 * with the given colour. */
static void rotate_set_parents(rbt *t, int32_t old, int32_t top, bool red)
{
	int32_t parent = t->p[old];
	t->p[top] = parent;
	t->red[top] = t->red[old];
	t->p[old] = top;
	t->red[old] = red;
	change_child(t, old, top, parent);
}

static void set_black_child(rbt *t, int32_t x, int32_t parent)
{
	t->p[x] = parent;
	t->red[x] = 0;
}

static void rb_insert(rbt *t, int32_t n)
{
	int32_t parent = -1, cur = t->root;
	int side = 0;
	while (cur >= 0) {
		parent = cur;
		side = t->key[n] < t->key[cur] ? 0 : 1;
		cur = t->c[cur][side];
	}
	t->c[n][0] = t->c[n][1] = -1;
	t->p[n] = parent;
	t->red[n] = 1;
	if (parent < 0)
		t->root = n;
	else
		t->c[parent][side] = n;

	for (;;) {
		if (parent < 0) {
			t->red[n] = 0;
			break;
		}
		if (!t->red[parent])
			break;
		int32_t g = t->p[parent];
		int d = t->c[g][1] == parent;   /* parent's side under g */
		int o = !d;
		int32_t uncle = t->c[g][o];
		if (uncle >= 0 && t->red[uncle]) {
			/* colour flips, then go on from the grandparent */
			t->red[uncle] = 0;
			t->red[parent] = 0;
			n = g;
			parent = t->p[n];
			t->red[n] = 1;
			continue;
		}
		int32_t tmp = t->c[parent][o];
		if (n == tmp) {
			/* inner child: rotate it above parent first */
			tmp = t->c[n][d];
			t->c[parent][o] = tmp;
			t->c[n][d] = parent;
			if (tmp >= 0)
				set_black_child(t, tmp, parent);
			t->p[parent] = n;
			t->red[parent] = 1;
			parent = n;
			tmp = t->c[n][o];
		}
		/* rotate parent above the grandparent */
		t->c[g][d] = tmp;
		t->c[parent][o] = g;
		if (tmp >= 0)
			set_black_child(t, tmp, g);
		rotate_set_parents(t, g, parent, true);
		break;
	}
}

/* Restore the black heights after a black node left parent's subtree. */
static void rb_erase_color(rbt *t, int32_t parent)
{
	int32_t node = -1;
	for (;;) {
		int32_t sib = t->c[parent][1];
		int d = 0;
		if (node == sib) {
			d = 1;
			sib = t->c[parent][0];
		}
		int o = !d;
		int32_t tmp1, tmp2;
		if (t->red[sib]) {
			/* red sibling: rotate it above parent */
			tmp1 = t->c[sib][d];
			t->c[parent][o] = tmp1;
			t->c[sib][d] = parent;
			set_black_child(t, tmp1, parent);
			rotate_set_parents(t, parent, sib, true);
			sib = tmp1;
		}
		tmp1 = t->c[sib][o];
		if (tmp1 < 0 || !t->red[tmp1]) {
			tmp2 = t->c[sib][d];
			if (tmp2 < 0 || !t->red[tmp2]) {
				/* sibling turns red; recurse if parent was black */
				t->p[sib] = parent;
				t->red[sib] = 1;
				if (t->red[parent]) {
					t->red[parent] = 0;
				} else {
					node = parent;
					parent = t->p[node];
					if (parent >= 0)
						continue;
				}
				break;
			}
			/* near nephew red: rotate it above the sibling */
			tmp1 = t->c[tmp2][o];
			t->c[sib][d] = tmp1;
			t->c[tmp2][o] = sib;
			t->c[parent][o] = tmp2;
			if (tmp1 >= 0)
				set_black_child(t, tmp1, sib);
			tmp1 = sib;
			sib = tmp2;
		}
		/* far nephew red: rotate the sibling above parent */
		tmp2 = t->c[sib][d];
		t->c[parent][o] = tmp2;
		t->c[sib][d] = parent;
		set_black_child(t, tmp1, sib);
		if (tmp2 >= 0)
			t->p[tmp2] = parent;
		rotate_set_parents(t, parent, sib, false);
		break;
	}
}

static void rb_erase(rbt *t, int32_t n)
{
	int32_t child = t->c[n][1], tmp = t->c[n][0];
	int32_t parent, rebalance = -1;
	int32_t pc_parent = t->p[n];
	uint8_t pc_red = t->red[n];
	if (tmp < 0) {
		change_child(t, n, child, pc_parent);
		if (child >= 0) {
			t->p[child] = pc_parent;
			t->red[child] = pc_red;
		} else if (!pc_red) {
			rebalance = pc_parent;
		}
	} else if (child < 0) {
		t->p[tmp] = pc_parent;
		t->red[tmp] = pc_red;
		change_child(t, n, tmp, pc_parent);
	} else {
		/* two children: the in-order successor takes n's place */
		int32_t succ = child, child2;
		tmp = t->c[child][0];
		if (tmp < 0) {
			parent = succ;
			child2 = t->c[succ][1];
		} else {
			do {
				parent = succ;
				succ = tmp;
				tmp = t->c[tmp][0];
			} while (tmp >= 0);
			child2 = t->c[succ][1];
			t->c[parent][0] = child2;
			t->c[succ][1] = child;
			t->p[child] = succ;
		}
		tmp = t->c[n][0];
		t->c[succ][0] = tmp;
		t->p[tmp] = succ;
		change_child(t, n, succ, pc_parent);
		bool succ_black = !t->red[succ];
		t->p[succ] = pc_parent;
		t->red[succ] = pc_red;
		if (child2 >= 0)
			set_black_child(t, child2, parent);
		else if (succ_black)
			rebalance = parent;
	}
	if (rebalance >= 0)
		rb_erase_color(t, rebalance);
}

void symtree_free(sym_tree *tr)
{
	if (!tr)
		return;
	free(tr->kid);
	free(tr->spans);
	free(tr);
}

/* [start, end), a zero-sized symbol counting as its start byte */
static uint64_t ent_hi(const sym_ent *e)
{
	return e->end > e->start ? e->end : e->start + (e->start != UINT64_MAX);
}

/* Maximal address ranges covered by two or more overlapping symbols. */
static size_t overlap_spans(const sym_symtab *t, sym_span *out)
{
	size_t ns = 0;
	for (size_t i = 0; i < t->n;) {
		uint64_t lo = t->v[i].start, hi = ent_hi(&t->v[i]);
		size_t j = i + 1;
		for (; j < t->n && t->v[j].start < hi; j++) {
			uint64_t h = ent_hi(&t->v[j]);
			if (h > hi)
				hi = h;
		}
		if (j - i > 1) {
			if (out)
				out[ns] = (sym_span){ lo, hi };
			ns++;
		}
		i = j;
	}
	return ns;
}

int symtree_prepare(sym_symtab *t)
{
	symtree_free(t->tree);
	t->tree = NULL;
	size_t nspans = overlap_spans(t, NULL);
	if (!nspans)
		return 0;
	sym_tree *tr = calloc(1, sizeof(*tr));
	if (!tr)
		return PROFF_ENOMEM;
	tr->spans = pf_realloc_array(NULL, nspans, sizeof(*tr->spans));
	if (!tr->spans) {
		free(tr);
		return PROFF_ENOMEM;
	}
	tr->nspans = overlap_spans(t, tr->spans);
	t->tree = tr;
	return 0;
}

/* The replay, into tr->kid / tr->root; false if the history is not one
 * perf could have made, or without memory. */
static bool replay(sym_symtab *t, sym_tree *tr)
{
	size_t total = t->next_order;
	if (total > INT32_MAX || t->n + t->nerased != total)
		return false;
	bool ok = false;
	uint64_t *key = pf_realloc_array(NULL, total, sizeof(*key));
	int32_t *pos = pf_realloc_array(NULL, total, sizeof(*pos));
	rbt r = { .key = key, .root = -1 };
	r.c = pf_realloc_array(NULL, total, sizeof(*r.c));
	r.p = pf_realloc_array(NULL, total, sizeof(*r.p));
	r.red = pf_realloc_array(NULL, total, sizeof(*r.red));
	tr->kid = pf_realloc_array(NULL, t->n, sizeof(*tr->kid));
	if (!key || !pos || !r.c || !r.p || !r.red || !tr->kid)
		goto out;

	/* every insertion order must be known exactly once */
	for (size_t i = 0; i < total; i++)
		pos[i] = -2;
	for (size_t i = 0; i < t->n; i++) {
		uint32_t o = t->v[i].order;
		if (o >= total || pos[o] != -2)
			goto out;
		pos[o] = (int32_t)i;
		key[o] = t->v[i].start;
	}
	for (size_t i = 0; i < t->nerased; i++) {
		const sym_erased *e = &t->erased[i];
		if (e->order >= total || pos[e->order] != -2 || e->at <= e->order ||
		    (i && e->at < t->erased[i - 1].at))
			goto out;
		pos[e->order] = -1;
		key[e->order] = e->start;
	}

	/* the history: inserts in order, each erase after the inserts it saw */
	size_t j = 0;
	for (size_t k = 0; k < total; k++) {
		for (; j < t->nerased && t->erased[j].at <= k; j++)
			rb_erase(&r, (int32_t)t->erased[j].order);
		rb_insert(&r, (int32_t)k);
	}
	for (; j < t->nerased; j++)
		rb_erase(&r, (int32_t)t->erased[j].order);

	/* the in-order walk must be the sorted table itself */
	int32_t x = r.root;
	while (x >= 0 && r.c[x][0] >= 0)
		x = r.c[x][0];
	for (size_t i = 0; i < t->n; i++) {
		if (x < 0 || pos[x] != (int32_t)i)
			goto out;
		if (r.c[x][1] >= 0) {
			x = r.c[x][1];
			while (r.c[x][0] >= 0)
				x = r.c[x][0];
		} else {
			int32_t up = r.p[x];
			while (up >= 0 && r.c[up][1] == x) {
				x = up;
				up = r.p[x];
			}
			x = up;
		}
	}
	if (x >= 0 || r.root < 0)
		goto out;

	for (size_t i = 0; i < t->n; i++) {
		uint32_t o = t->v[i].order;
		for (int s = 0; s < 2; s++)
			tr->kid[i][s] = r.c[o][s] >= 0 ? pos[r.c[o][s]] : -1;
	}
	tr->root = pos[r.root];
	ok = true;
out:
	if (!ok) {
		free(tr->kid);
		tr->kid = NULL;
	}
	free(key);
	free(pos);
	free(r.c);
	free(r.p);
	free(r.red);
	return ok;
}

bool symtree_build(sym_symtab *t)
{
	bool ok = t->tree && replay(t, t->tree);
	if (!ok) {
		symtree_free(t->tree);
		t->tree = NULL;
	}
	free(t->erased);
	t->erased = NULL;
	t->nerased = t->erased_cap = 0;
	return ok;
}

/* perf's symbols__find(): end exclusive, a zero-sized symbol holds its start. */
const sym_ent *symtree_find(const sym_symtab *t, uint64_t addr)
{
	const sym_tree *tr = t->tree;
	int32_t i = tr->root;
	while (i >= 0) {
		const sym_ent *e = &t->v[i];
		if (addr < e->start)
			i = tr->kid[i][0];
		else if (addr > e->end || (addr == e->end && addr != e->start))
			i = tr->kid[i][1];
		else
			return e;
	}
	return NULL;
}
