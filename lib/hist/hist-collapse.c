/* hist-collapse.c — tree mode's collapse: the rows perf's collapse tree
 * finds equal merged into one (their sums and callchain trees), and the
 * tree-mode rows' chains added in the order perf appends them (whether
 * those built early must be built again). Called by hist_build (hist.c)
 * and the callchain trees' workers (hist-cc.c).
 */
#include "proff/hist.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

/* Tree mode: src's callchain tree into dst's, chain by chain (each node
 * that ends chains, with its period), in the order the chains were added;
 * before cc_finish. perf's collapse merges the trees of the rows it
 * merges so. */
int cc_merge(hist *h, struct cc_pool *cp, uint32_t dst, uint32_t src) {
	uint32_t root = h->entries[src].cc_root;
	if (root == PF_NONE)
		return 0;
	size_t cap = 64, cap_path = 64, sp = 0;
	uint32_t *stack = malloc(cap * sizeof(uint32_t)), *path = malloc(cap_path * sizeof(uint32_t));
	if (!stack || !path)
		goto nomem;
	/* depth-first; a node's children are prepended until cc_finish, so
	 * pushing the list in its order pops the first added first */
	for (uint32_t cur = root;;) {
		for (uint32_t k = cp->nodes[cur].first_child; k != PF_NONE; k = cp->nodes[k].next_sibling) {
			if (sp == cap) {
				uint32_t *a = realloc(stack, 2 * cap * sizeof(uint32_t));
				if (!a)
					goto nomem;
				stack = a;
				cap *= 2;
			}
			stack[sp++] = k;
		}
		if (!sp)
			break;
		cur = stack[--sp];
		size_t depth = 0;
		for (uint32_t x = cur; x != root; x = cp->nodes[x].parent)
			depth++;
		if (depth > cap_path) {
			uint32_t *np = realloc(path, depth * sizeof(uint32_t));
			if (!np)
				goto nomem;
			path = np;
			cap_path = depth;
		}
		size_t d = depth;
		for (uint32_t x = cur; x != root; x = cp->nodes[x].parent)
			path[--d] = cp->nodes[x].loc;
		uint64_t hit = cp->nodes[cur].hit, count = cp->nodes[cur].count;
		if (hit && cc_add(h, cp, dst, path, depth, hit, count) < 0)
			goto nomem;
	}
	free(stack);
	free(path);
	return 0;
nomem:
	free(stack);
	free(path);
	return -1;
}

/* Tree mode: rows perf's collapse merges into an equal row (two rows of one
 * key that its collapse tree, fed in the input tree's order, finds equal):
 * their sums and chains into that row; perf's order leaves them out. */
int collapse_merge(hist *h, bool trees, const atomic_int *wait, proff_error *err)
{
	struct hist_priv *pv = h->priv;
	uint32_t *into = malloc((h->n ? h->n : 1) * sizeof(uint32_t));
	uint32_t *seq = malloc((h->n ? h->n : 1) * sizeof(uint32_t));
	size_t nseq = 0;
	int merged = into && seq ? hist_itree_collapse(pv->itree, h, into, seq, &nseq) : -1;
	if (merged < 0) {
		free(into);
		free(seq);
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	}
	h->collapsed = seq;
	h->nr_collapsed = nseq;
	if (!merged) {
		free(into);
		return 0;
	}
	/* the tree-mode trees built beside read the sums merged here: done
	 * first (and built again, cc_end) */
	while (wait && !atomic_load_explicit(wait, memory_order_acquire))
		sched_yield();
	for (size_t r = 0; r < h->n; r++) {
		uint32_t s = into[r];
		if (s == PF_NONE)
			continue;
		hist_entry *d = &h->entries[s];
		const hist_entry *e = &h->entries[r];
		d->period += e->period;
		d->nr_events += e->nr_events;
		pv->hot[s].acc += pv->hot[r].acc;
		if (trees && cc_merge(h, &pv->cc, s, (uint32_t)r) < 0) {
			free(into);
			return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		}
	}
	h->merged_into = into;
	return 0;
}

/* Tree mode with the callchain-tree pass: the tree rows' chains (which
 * that pass leaves to them), for the rows whose Children reach min_keep,
 * in the order perf appended them; then the merged rows' trees into the
 * rows they were merged into. */

/* Would the tree-mode trees built before perf's collapse (tj early) come
 * out otherwise after it? A tree-mode chain is added where its row's
 * Children reach the threshold: before, by the row's own pass sum; after,
 * by the total of the row it was merged into. Where no merged row, nor the
 * row it went into, changes sides, tree_chains_build adds the same chains in
 * the same order: the same trees. (Many merged rows: built again, unchecked.) */
#define STALE_CHECK_MAX 4096
bool tree_chains_stale(const hist *h, uint64_t min_keep) {
	const struct hist_priv *pv = h->priv;
	uint32_t m[STALE_CHECK_MAX];
	size_t nm = 0;
	for (size_t r = 0; r < h->n; r++) {
		uint32_t s = h->merged_into[r];
		if (s == PF_NONE)
			continue;
		if (nm == STALE_CHECK_MAX || h->merged_into[s] != PF_NONE)
			return true;
		m[nm++] = (uint32_t)r;
	}
	for (size_t i = 0; i < nm; i++) {
		uint32_t r = m[i], s = h->merged_into[r];
		bool after = h->entries[s].period_acc >= min_keep;
		if ((pv->hot[r].acc >= min_keep) != after)
			return true;
		/* the row merged into, by its own sum (the merge added the others') */
		uint64_t own = pv->hot[s].acc;
		for (size_t k = 0; k < nm; k++)
			if (h->merged_into[m[k]] == s)
				own -= pv->hot[m[k]].acc;
		if ((own >= min_keep) != after)
			return true;
	}
	return false;
}

/* The tree-mode rows' chains (pv->tchains) into their trees, in pool cp
 * (tj's, or the hist's when alone) with tj's chain buffer (cc_worker_run). */
int tree_chains_build(tchains_job *j, struct cc_pool *cp) {
	hist *h = j->h;
	struct hist_priv *pv = h->priv;
	const pf_profile *prof = h->prof;
	uint32_t last = UINT32_MAX, *cursor = NULL;
	size_t nk = 0;
	for (size_t i = 0; i < pv->nr_tchains; i++) {
		const struct tree_chain *t = &pv->tchains[i];
		uint32_t keep = !j->early && h->merged_into && h->merged_into[t->row] != PF_NONE ? h->merged_into[t->row]
												  : t->row;
		if ((j->early ? pv->hot[keep].acc : h->entries[keep].period_acc) < j->min_keep)
			continue;
		if (t->si != last) {
			cursor = sample_cursor(h, &prof->samples[t->si], &j->chain, &j->cap_chain, &nk);
			if (!cursor && nk)
				return -1;
			last = t->si;
		}
		if (t->k < nk && cc_add(h, cp, t->row, cursor + t->k, nk - t->k, t->period, t->count) < 0)
			return -1;
	}
	return 0;
}
