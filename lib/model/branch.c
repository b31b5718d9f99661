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
