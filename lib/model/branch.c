/* branch.c — branch mode of the perf.data loader (perf report -b): each
 * entry of a sample's branch stack becomes a sample of period 1 — perf's
 * pseudo period, so rows count branches, not events — whose stack is a
 * node of its own for the branch (p->node_branch), located at the
 * branch's target (perf's row address for a branch entry). Branches are
 * interned once per (from, to, flags); their addresses are resolved as
 * perf's branch stacks are (a kernel map first, then the process's).
 * Also: whether perf report switches to branch mode by default on a file
 * (its rule: the file's BRANCH_STACK feature, no user stacks sampled). */
#include <stdlib.h>
#include <string.h>

#include "profile-int.h"

/* The flags' bits a row can tell apart: mispred, predicted, in_tx, abort,
 * cycles and type (perf_branch_entry's first 24 bits) */
#define BR_FLAG_BITS 0xffffffu

/* A branch address's location: a kernel map's if one holds it, else the
 * process's (perf's thread__find_cpumode_addr_location) */
static uint32_t branch_loc(pf_profile *p, const pthread_ *t, uint64_t ip)
{
	uint32_t l = prof_resolve_loc(p, t, PD_CPUMODE_KERNEL, ip);
	if (l == PF_NONE || p->locs[l].dso != PF_NONE)
		return l;
	return prof_resolve_loc(p, t, PD_CPUMODE_USER, ip);
}

/* The node of branch (from, to, flags) in samples of cpumode, made with
 * the branch when new: a row shows the level of the sample that made it
 * (perf's), and perf's input-tree walks (hist's tree mode) go sample by
 * sample, so the samples of one branch in two cpumodes are two aggregates */
static uint32_t branch_node(pf_profile *p, uint32_t from, uint32_t to, uint32_t flags, int cpumode)
{
	struct pf_profile_priv *pr = p->priv;
	int inserted;
	uint32_t *slot = pair_table_find(&pr->br_tab, from, (uint64_t)to << 32 | flags | (uint64_t)(cpumode & 7) << 24,
					 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	uint32_t id = (uint32_t)p->nr_nodes;
	size_t old = p->cap_node_branch;
	if (PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0 ||
	    PF_GROW(pr->phash, pr->cap_phash, p->nr_nodes + 1) < 0 ||
	    PF_GROW(p->node_branch, p->cap_node_branch, (size_t)id + 1) < 0 ||
	    PF_GROW(p->branches, p->cap_branches, p->nr_branches + 1) < 0)
		return PF_NONE;
	memset(p->node_branch + old, 0xff, (p->cap_node_branch - old) * sizeof(uint32_t));
	/* a child of the root apart from the trie (never found by a path):
	 * rows of branches have no callchain */
	p->nodes[id] = (pf_node){ 0, to, 1 };
	pr->phash[id] = trie_hash(0xfffffffdu, (uint32_t)p->nr_branches);
	p->node_branch[id] = (uint32_t)p->nr_branches;
	p->branches[p->nr_branches++] = (pf_branch){ from, to, flags };   /* (another cpumode's: again) */
	p->nr_nodes++;
	*slot = id;
	return id;
}

int prof_branch_sample(pf_profile *p, const pthread_ *t, const pd_sample *s, uint32_t thread, uint32_t cpu)
{
	pd_sample one = *s;
	one.period = 1;
	one.callchain = NULL;
	one.nr_callchain = 0;
	for (uint64_t i = 0; i < s->nr_branches; i++) {
		const pd_branch_entry *b = &s->branches[i];
		uint32_t to = branch_loc(p, t, b->to);
		uint32_t from = to != PF_NONE ? branch_loc(p, t, b->from) : PF_NONE;
		uint32_t node = from != PF_NONE ? branch_node(p, from, to, (uint32_t)(b->flags & BR_FLAG_BITS), s->cpumode) : PF_NONE;
		if (node == PF_NONE)
			return prof_oom(p);
		/* the row's level stays the sample's (perf moves its location to
		 * the branch's target, not its level): one.cpumode */
		int rc = prof_sample_add(p, &one, thread, cpu, node);
		if (rc)
			return rc;
	}
	return 0;
}

int pf_file_branch_stacks(const char *path, bool *by_default, bool *sampled, proff_error *err)
{
	pd_reader *r;
	int rc = pd_open(path, &r, err);
	if (rc < 0)
		return rc;
	bool any = false, stack_user = false;
	for (size_t i = 0; i < pd_nr_attrs(r); i++) {
		any |= (pd_get_attr(r, i)->sample_type & PD_S_BRANCH_STACK) != 0;
		stack_user |= (pd_get_attr(r, i)->sample_type & PD_S_STACK_USER) != 0;
	}
	*sampled = any;
	*by_default = pd_has_feature(r, PD_FEAT_BRANCH_STACK) && !stack_user;
	pd_close(r);
	return 0;
}

/* ---- branch history (perf report --branch-history) ------------------------------ */

#define BH_MAX_STACK 127       /* perf's default --max-stack, and its branch depth limit */

/* perf's remove_loops: a run of sources repeating the run just before it
 * is a loop iteration, dropped; the entry after it counts the iterations
 * and the dropped run's cycles. perf finds the earlier run by a 127-slot
 * hash of the source address without collision handling: the same here,
 * so the same loops are found. */
typedef struct bh_iter { uint32_t n; uint64_t cycles; } bh_iter;

static unsigned bh_hash(uint64_t from)
{
	return (unsigned)(((from * 0x61C8864680B583EBull) >> (64 - 7)) % 127);
}

static size_t bh_remove_loops(pd_branch_entry *l, size_t nr, bh_iter *iter)
{
	unsigned char slot[127];
	memset(slot, 0xff, sizeof(slot));
	for (size_t i = 0; i < nr; i++) {
		unsigned h = bh_hash(l[i].from);
		if (slot[h] == 0xff) {
			slot[h] = (unsigned char)i;
			continue;
		}
		if (l[slot[h]].from != l[i].from)
			continue;
		bool loop = true;
		size_t off = 0;
		for (size_t j = slot[h]; j < i && i + off < nr; j++, off++)
			if (l[j].from != l[i + off].from) {
				loop = false;
				break;
			}
		if (!loop)
			continue;
		if (nr > i + off) {
			size_t rest = nr - (i + off);
			bh_iter *it = &iter[i + off];
			it->n++;
			it->cycles = 0;
			for (size_t k = 0; k < off; k++)
				it->cycles += (l[i + k].flags >> 4) & 0xffff;
			memmove(iter + i, iter + i + off, rest * sizeof(*iter));
			memmove(l + i, l + i + off, rest * sizeof(*l));
		}
		nr -= off;
	}
	return nr;
}

/* loc's twin for the rows of chain entries (pf_bh_entry.row_loc): the same
 * location, its srcline made apart (pf_bhist_srclines) */
static uint32_t bh_twin(pf_profile *p, uint32_t loc)
{
	struct pf_profile_priv *pr = p->priv;
	int inserted;
	uint32_t *slot = pair_table_find(&pr->bh_tab, loc, 0, 1, &inserted);
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	if (PF_GROW(p->locs, p->cap_locs, p->nr_locs + 1) < 0)
		return PF_NONE;
	uint32_t id = (uint32_t)p->nr_locs++;
	p->locs[id] = p->locs[loc];
	p->locs[id].srcline = PF_NONE;
	*slot = id;
	return id;
}

static int bh_push(pf_profile *p, uint32_t loc, uint32_t flags, uint32_t iter, uint64_t iter_cycles)
{
	uint32_t twin = loc != PF_NONE ? bh_twin(p, loc) : PF_NONE;
	if (twin == PF_NONE || PF_GROW(p->bh_entries, p->cap_bh_entries, p->nr_bh_entries + 1) < 0)
		return prof_oom(p);
	p->bh_entries[p->nr_bh_entries++] = (pf_bh_entry){ loc, twin, flags,
		(iter < 0x7f ? iter : 0x7f) << 24 | (uint32_t)(iter_cycles < 0xffffff ? iter_cycles : 0xffffff) };
	return 0;
}

static int context_mode(uint64_t ip)
{
	switch (ip) {
	case PD_CONTEXT_HV: return PD_CPUMODE_HYPERVISOR;
	case PD_CONTEXT_KERNEL: return PD_CPUMODE_KERNEL;
	case PD_CONTEXT_USER: return PD_CPUMODE_USER;
	default: return -1;
	}
}

/* The chain of sample s as perf's callchain resolution makes it with
 * branch stacks: the branches newest first (caller order: oldest first),
 * loops removed, each its target then its source, resolved as branch
 * addresses are; then the callchain short by the number of branches kept
 * (perf's count: with a full branch stack nothing of it is left) — in
 * callee order its entries past those the branches overlap, in caller
 * order its outermost ones, each in its context's cpumode. 1 when perf
 * drops the chain (an unknown context) */
static int bh_chain(pf_profile *p, const pthread_ *t, const pd_sample *s, bool caller, size_t max_stack)
{
	const uint64_t *cc = s->callchain;
	long chain_nr = cc ? (long)s->nr_callchain : 0;
	size_t first_call = 0;
	if (s->nr_branches <= BH_MAX_STACK) {
		size_t nr = (size_t)s->nr_branches < max_stack ? (size_t)s->nr_branches : max_stack;
		pd_branch_entry be[BH_MAX_STACK];
		bh_iter iter[BH_MAX_STACK];
		for (size_t i = 0; i < nr; i++) {
			if (caller) {
				/* (perf's: of the whole stack, the last nr) */
				be[i] = s->branches[s->nr_branches - i - 1];
				continue;
			}
			be[i] = s->branches[i];
			if (!cc || first_call >= s->nr_callchain)
				continue;
			/* a return address is one past its call: a source within 8
			 * bytes below a callchain entry is that call */
			uint64_t ip = cc[first_call];
			if (ip >= PD_CONTEXT_MAX || (be[i].from < ip && be[i].from >= ip - 8))
				first_call++;
		}
		memset(iter, 0, sizeof(iter));
		nr = bh_remove_loops(be, nr, iter);
		for (size_t i = 0; i < nr; i++) {
			uint32_t fl = (uint32_t)(be[i].flags & BR_FLAG_BITS) | PF_BH_BRANCH;
			uint64_t from = be[i].from, to = be[i].to;
			uint32_t geo = (to > from ? PF_BH_FWD : 0) | (from == 0 ? PF_BH_NO_FROM : 0) |
				       ((from >> 21) != (to >> 21) ? PF_BH_CROSS_2M :
					(from >> 12) != (to >> 12) ? PF_BH_CROSS_4K : 0);
			int rc = bh_push(p, branch_loc(p, t, to), fl | PF_BH_TO | geo, 0, 0);
			if (!rc)
				rc = bh_push(p, branch_loc(p, t, be[i].from), fl, iter[i].n, iter[i].cycles);
			if (rc)
				return rc;
		}
		if (chain_nr == 0)
			return 0;
		chain_nr -= (long)nr;
	}
	int cpumode = PD_CPUMODE_USER;
	if (caller && cc) {
		/* the context of the outermost entry: the last marker */
		for (long j = (long)s->nr_callchain; --j >= 0;)
			if (cc[j] >= PD_CONTEXT_MAX) {
				if ((cpumode = context_mode(cc[j])) < 0)
					return 1;
				break;
			}
	}
	size_t nr_entries = 0;
	for (long i = (long)first_call; i < chain_nr && nr_entries < max_stack; i++) {
		long j = caller ? (long)s->nr_callchain - i - 1 : i;
		uint64_t ip = cc[j];
		if (ip >= PD_CONTEXT_MAX) {
			if (caller) {
				/* the entries before it are in the context before it */
				for (long k = j; --k >= 0;)
					if (cc[k] >= PD_CONTEXT_MAX) {
						if ((cpumode = context_mode(cc[k])) < 0)
							return 1;
						break;
					}
			} else if ((cpumode = context_mode(ip)) < 0) {
				return 1;       /* perf drops the chain it has made (the caller) */
			}
			continue;
		}
		nr_entries++;
		int rc = bh_push(p, prof_resolve_loc(p, t, cpumode, ip), 0, 0, 0);
		if (rc)
			return rc;
	}
	return 0;
}

int prof_bhist_sample(pf_profile *p, const pthread_ *t, const pd_sample *s, uint32_t thread, uint32_t cpu)
{
	struct pf_profile_priv *pr = p->priv;
	pd_sample one = *s;
	one.callchain = NULL;
	one.nr_callchain = 0;
	uint32_t leaf = prof_ip_leaf(p, t, s);
	if (leaf == PF_NONE || PF_GROW(p->bh_samples, p->cap_bh_samples, p->nr_bh_samples + 1) < 0)
		return prof_oom(p);
	uint32_t loc = p->nodes[leaf].loc;
	size_t first = p->nr_bh_entries;
	int ms = pr->opts.branch_history_max_stack;
	int rc = bh_chain(p, t, s, pr->opts.branch_history_caller, ms < 0 ? BH_MAX_STACK : (size_t)ms);
	if (rc < 0)
		return rc;
	if (rc > 0)
		p->nr_bh_entries = first;
	uint32_t n = (uint32_t)(p->nr_bh_entries - first);
	/* the sample's stack: its ip under the chain's rows' twins (Children
	 * counts a sample once in each distinct row along it, as perf). The
	 * engine meets a stack's rows in perf's cursor order — from the leaf
	 * in callee order, from the root in caller order — and perf makes
	 * the rows in the chain's order: the chain leaf first in callee order,
	 * root first in caller order */
	if (n) {
		uint32_t node = 0;
		bool caller = pr->opts.branch_history_caller;
		for (size_t i = 0; i < n && node != PF_NONE; i++) {
			size_t k = caller ? first + i : p->nr_bh_entries - 1 - i;
			node = prof_node_child(p, node, p->bh_entries[k].row_loc);
		}
		leaf = node != PF_NONE ? prof_node_child(p, node, loc) : PF_NONE;
	}
	rc = prof_sample_add(p, &one, thread, cpu, leaf);
	if (rc)
		return rc;
	p->bh_samples[p->nr_bh_samples++] = (pf_bh_sample){
		(uint32_t)s->evsel, loc, n, thread, pr->m.threads[thread].comm, s->pid, s->tid, cpu, first, s->period
	};
	return 0;
}

int pf_bhist_srclines(pf_profile *p)
{
	uint8_t *want = calloc(p->nr_locs ? p->nr_locs : 1, 1);
	if (!want)
		return -1;
	for (size_t i = 0; i < p->nr_bh_entries; i++)
		want[p->bh_entries[i].loc] = 1;
	int rc = pf_locs_srclines(p, want);
	free(want);
	/* the twins: perf's callchain srcline, asked without the symbol */
	for (size_t i = 0; i < p->nr_bh_entries && !rc; i++) {
		const pf_loc *l = &p->locs[p->bh_entries[i].loc];
		pf_loc *tw = &p->locs[p->bh_entries[i].row_loc];
		if (tw->srcline != PF_NONE)
			continue;
		tw->srcline = l->srcline;
		if (l->dso == PF_NONE) {
			/* perf has no callchain srcline without a map: the row's,
			 * made on use, is its unknown one */
			int64_t id = pf_strtab_intern(&p->strs, "??:0", 4);
			if (id < 0)
				rc = -1;
			else
				tw->srcline = (uint32_t)id;
			continue;
		}
		if (l->sym == PF_NONE || l->srcline == PF_NONE)
			continue;
		const char *sl = pf_str(p, l->srcline), *name = pf_str(p, p->syms[l->sym].name);
		size_t n = strlen(name);
		if (strncmp(sl, name, n) || sl[n] != '+')
			continue;
		int64_t id = pf_strtab_intern(&p->strs, sl + n, strlen(sl + n));
		if (id < 0)
			rc = -1;
		else
			tw->srcline = (uint32_t)id;
	}
	return rc;
}
