/* branch-history.c — perf report --branch-history's callchain trees: per
 * row, the chains of its samples (their branch stacks, each branch its
 * target then its source, then what perf leaves of the callchain:
 * pf_profile.bh_samples), and with Children each other row's along a chain
 * from its entry on; nodes keyed by address (one per location, so a
 * function shows as several nodes by source line), each node with the
 * branch statistics perf aggregates on it (taken, predicted, aborted,
 * types, cycles, loop iterations), printed after the frame's name
 * (lib/output/report-bhist.c). The rows themselves, their sums and order
 * are hist_build's: the loader made each sample's stack its chain. */
#include <stdlib.h>
#include <string.h>

#include "hist-priv.h"

/* the row of a chain entry or sample: the keys' values of its location
 * (srcline, symbol, dso; rows of an unresolved symbol are one per address)
 * and of its sample (comm, pid/tid, cpu), matched against the rows' */
static bool is_key(int k, const char *name) { return !strcmp(hist_keys[k].name, name); }

#define BH_SIG_WORDS 6
typedef struct bh_sig { uint64_t w[BH_SIG_WORDS]; uint32_t row; } bh_sig;
typedef struct bh_ctx { uint32_t comm, pid, tid, cpu; } bh_ctx;

static void loc_sig(const hist *h, uint32_t loc, const bh_ctx *c, uint64_t w[BH_SIG_WORDS])
{
	const pf_loc *l = &h->prof->locs[loc];
	memset(w, 0, BH_SIG_WORDS * sizeof(*w));
	for (int i = 0; i < h->nkeys; i++) {
		int k = h->keys[i];
		if (k == HK_SRCLINE)
			w[0] = (uint64_t)l->srcline + 1;
		else if (k == HK_DSO)
			w[2] = (uint64_t)l->dso + 1;
		else if (k == HK_SYM || is_key(k, "ipc_null"))
			w[1] = l->sym != PF_NONE ? (uint64_t)l->sym + 1 : (1ull << 63) | l->addr;
		else if (k == HK_COMM)
			w[3] = (uint64_t)c->comm + 1;
		else if (k == HK_PID || is_key(k, "tid"))
			w[4] = (uint64_t)c->pid << 32 | c->tid;
		else if (k == HK_CPU)
			w[5] = (uint64_t)c->cpu + 1;
	}
}

static int sig_cmp(const void *pa, const void *pb)
{
	const bh_sig *a = pa, *b = pb;
	for (int i = 0; i < BH_SIG_WORDS; i++)
		if (a->w[i] != b->w[i])
			return a->w[i] < b->w[i] ? -1 : 1;
	return 0;
}

bool hist_bh_keys_ok(const int *keys, int nkeys)
{
	for (int i = 0; i < nkeys; i++) {
		int k = keys[i];
		if (k != HK_SRCLINE && k != HK_DSO && k != HK_SYM && k != HK_COMM && k != HK_PID && k != HK_CPU &&
		    !is_key(k, "ipc_null") && !is_key(k, "tid"))
			return false;
	}
	return true;
}

static uint32_t bh_new_node(hist *h, uint32_t parent, uint32_t loc)
{
	if (PF_GROW(h->cc_nodes, h->cap_cc_nodes, h->nr_cc_nodes + 1) < 0)
		return PF_NONE;
	if (PF_GROW(h->bh_nodes, h->cap_bh_nodes, h->nr_cc_nodes + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)h->nr_cc_nodes++;
	hist_cc_node *n = &h->cc_nodes[id];
	memset(n, 0, sizeof(*n));
	memset(&h->bh_nodes[id], 0, sizeof(h->bh_nodes[id]));
	n->first_child = n->next_sibling = PF_NONE;
	n->parent = parent;
	n->loc = loc;
	n->key = loc;
	if (parent != PF_NONE) {
		/* prepended; reversed once all are in */
		n->next_sibling = h->cc_nodes[parent].first_child;
		h->cc_nodes[parent].first_child = id;
		h->cc_nodes[parent].nr_children++;
	}
	return id;
}

/* perf's callchain node statistics: a node made by an entry takes the
 * entry's values; an entry matching a node adds to them, and a source
 * counts its match (from_count: perf's iterations average divides by it) */
static void bh_account(hist_bh_node *s, const pf_bh_entry *e, bool fresh)
{
	if (!(e->flags & PF_BH_BRANCH))
		return;
	s->branch_count++;
	unsigned cycles = (e->flags >> 4) & 0xffff;
	if (e->flags & PF_BH_TO) {
		s->to = true;
		s->predicted += (e->flags & PF_BR_PREDICTED) != 0;
		s->abort += (e->flags & PF_BR_ABORT) != 0;
		unsigned type = (e->flags >> 20) & 0xf;
		if (type && !(e->flags & PF_BH_NO_FROM)) {
			s->types |= 1u << type;
			if (type == 1)          /* PERF_BR_COND */
				s->types |= e->flags & PF_BH_FWD ? HIST_BH_COND_FWD : HIST_BH_COND_BWD;
			s->types |= e->flags & PF_BH_CROSS_2M ? HIST_BH_CROSS_2M :
				    e->flags & PF_BH_CROSS_4K ? HIST_BH_CROSS_4K : 0;
		}
	} else {
		s->to = false;
		s->cycles += cycles;
		s->iter += pf_bh_iter(e);
		s->iter_cycles += pf_bh_iter_cycles(e);
		s->from_count += !fresh;
	}
}

/* the row of location loc (its key values'), PF_NONE if none */
static uint32_t bh_row(const hist *h, const bh_sig *sig, size_t nrows, uint32_t *row_of, uint32_t loc,
		       const bh_ctx *c)
{
	if (!row_of || row_of[loc] == PF_NONE) {
		bh_sig key;
		loc_sig(h, loc, c, key.w);
		const bh_sig *f = bsearch(&key, sig, nrows, sizeof(*sig), sig_cmp);
		if (!f)
			return PF_NONE;
		if (!row_of)
			return f->row;
		row_of[loc] = f->row;
	}
	return row_of[loc];
}

/* chain e[0 .. n) with its period into row r's tree */
static int bh_add_chain(hist *h, pair_table *child, uint32_t r, const pf_bh_entry *e, uint32_t n, uint64_t period)
{
	hist_entry *he = &h->entries[r];
	if (!n)
		return 0;               /* perf appends no empty chain */
	if (he->cc_root == PF_NONE && (he->cc_root = bh_new_node(h, PF_NONE, PF_NONE)) == PF_NONE)
		return -1;
	if (n > he->max_depth)
		he->max_depth = n;      /* perf's tie rule (callers first) reads it */
	uint32_t cur = he->cc_root;
	for (uint32_t k = 0; k < n; k++) {
		int inserted;
		uint32_t *slot = pair_table_find(child, cur, e[k].loc, 1, &inserted);
		if (!slot)
			return -1;
		if (inserted) {
			uint32_t nn = bh_new_node(h, cur, e[k].loc);
			if (nn == PF_NONE)
				return -1;
			slot = pair_table_find(child, cur, e[k].loc, 0, NULL);
			*slot = nn;
		}
		cur = *slot;
		bh_account(&h->bh_nodes[cur], &e[k], inserted);
	}
	h->cc_nodes[cur].hit += period;
	h->cc_nodes[cur].count++;
	return 0;
}

int hist_branch_history_chains(hist *h, proff_error *err)
{
	const pf_profile *p = h->prof;
	size_t nrows = h->n;
	bh_sig *sig = malloc((nrows ? nrows : 1) * sizeof(*sig));
	uint32_t *row_of = malloc((p->nr_locs ? p->nr_locs : 1) * sizeof(*row_of));
	pair_table child = { 0 };
	uint32_t *seen = NULL;
	size_t nseen = 0, cap_seen = 0;
	int rc = -1;
	if (!sig || !row_of || PF_GROW(seen, cap_seen, 64) < 0)
		goto out;
	for (size_t r = 0; r < nrows; r++) {
		const hist_entry *e = &h->entries[r];
		bh_ctx c = { e->comm, e->pid, e->tid, e->cpu };
		loc_sig(h, e->loc, &c, sig[r].w);
		sig[r].row = (uint32_t)r;
		h->entries[r].cc_root = PF_NONE;
		h->entries[r].max_depth = 0;
	}
	qsort(sig, nrows, sizeof(*sig), sig_cmp);
	bool ctx_keys = false;
	for (int i = 0; i < h->nkeys; i++)
		ctx_keys |= h->keys[i] == HK_COMM || h->keys[i] == HK_PID || h->keys[i] == HK_CPU || is_key(h->keys[i], "tid");
	memset(row_of, 0xff, (p->nr_locs ? p->nr_locs : 1) * sizeof(*row_of));
	for (size_t i = 0; i < p->nr_bh_samples; i++) {
		const pf_bh_sample *s = &p->bh_samples[i];
		if (s->evsel != h->evsel)
			continue;
		/* the sample's row gets its whole chain; with Children each
		 * other row along the chain, at its first entry, the chain from
		 * there (perf's cumulative entries: once per sample and row) */
		bh_ctx c = { s->comm, s->pid, s->tid, s->cpu };
		/* (rows by location alone: found once per location) */
		uint32_t *cache = ctx_keys ? NULL : row_of;
		uint32_t r0 = bh_row(h, sig, nrows, cache, s->loc, &c);
		if (r0 == PF_NONE)
			continue;
		const pf_bh_entry *chain = s->n ? &p->bh_entries[s->first] : NULL;
		if (bh_add_chain(h, &child, r0, chain, s->n, s->period) < 0)
			goto out;
		if (!h->opts.children)
			continue;
		nseen = 0;
		seen[nseen++] = r0;
		for (uint32_t k = 0; k < s->n; k++) {
			const pf_bh_entry *be = &chain[k];
			uint32_t r = bh_row(h, sig, nrows, cache, be->row_loc, &c);
			bool dup = r == PF_NONE;
			for (size_t j = 0; j < nseen && !dup; j++)
				dup = seen[j] == r;
			if (dup)
				continue;
			if (PF_GROW(seen, cap_seen, nseen + 1) < 0 ||
			    bh_add_chain(h, &child, r, be, s->n - k, s->period) < 0)
				goto out;
			seen[nseen++] = r;
		}
	}
	/* children_hit bottom-up (children come after their parents), and the
	 * sibling lists back in insertion order */
	for (size_t i = h->nr_cc_nodes; i-- > 0;) {
		hist_cc_node *n = &h->cc_nodes[i];
		if (n->parent != PF_NONE)
			h->cc_nodes[n->parent].children_hit += n->hit + n->children_hit;
	}
	for (size_t i = 0; i < h->nr_cc_nodes; i++) {
		uint32_t c = h->cc_nodes[i].first_child, head = PF_NONE;
		while (c != PF_NONE) {
			uint32_t next = h->cc_nodes[c].next_sibling;
			h->cc_nodes[c].next_sibling = head;
			head = c;
			c = next;
		}
		h->cc_nodes[i].first_child = head;
	}
	h->opts.callchain = true;   /* the rows have trees now */
	rc = 0;
out:
	if (rc)
		proff_err_set(err, PROFF_ENOMEM, p->path, 0, "out of memory building the branch history");
	free(sig);
	free(row_of);
	free(seen);
	pair_table_free(&child);
	return rc;
}
