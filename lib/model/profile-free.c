/* profile-free.c — a profile's memory: the loader's state released once the
 * records are read (raw stacks, maps, caches, interning tables), the
 * model's arrays fitted to their size, and the profile freed.
 */
#include "proff/profile.h"
#include "proff/unwind.h"

#include <stdlib.h>

#include "model-int.h"
#include "profile-int.h"

/* The loader's interning tables, maps and raw stacks: needed while records
 * arrive, not afterwards (the raw callchains alone can be tens of MB). */
/* What only reading records needs: raw stacks, maps, caches, the pipeline. */
void prof_release_read_state(struct pf_profile_priv *pr)
{
	if (pr->uw) {
		uw_stats_add(&pr->uw_done, uw_get_stats(pr->uw));
		uw_free(pr->uw);
		pr->uw = NULL;
	}
	pf_machine_free_maps(&pr->m);
	free(pr->raw_s);
	pr->raw_s = NULL;
	pr->raw_cap = pr->raw_len = 0;
	free(pr->acc);
	pr->acc = NULL;
	pr->cap_acc = 0;
	free(pr->acc_order);
	pr->acc_order = NULL;
	pr->nacc = pr->cap_acc_order = 0;
	free(pr->acc_notes);
	pr->acc_notes = NULL;
	pr->nacc_notes = pr->cap_acc_notes = 0;
	for (size_t i = 0; i < pr->nraw_chunks; i++)
		free(pr->raw_chunks[i]);
	free(pr->raw_chunks);
	pr->raw_chunks = NULL;
	pr->nraw_chunks = pr->cap_raw_chunks = pr->raw_used = 0;
	if (pr->pend) {
		for (int i = 0; i < PEND_N; i++) {
			free(pr->pend[i].cc);
			free(pr->pend[i].key);
		}
		free(pr->pend);
		pr->pend = NULL;
	}
	pr->npend = pr->pend_head = 0;
	free(pr->ranges);
	pr->ranges = NULL;
	pr->nranges = 0;
	free(pr->scratch_locs);
	pr->scratch_locs = NULL;
	free(pr->scratch_miss);
	pr->scratch_miss = NULL;
	pr->cap_scratch = pr->cap_miss = 0;
	free(pr->path_locs);
	free(pr->path_nodes);
	free(pr->path_hash);
	pr->path_locs = pr->path_nodes = pr->path_hash = NULL;
	pr->path_len = pr->cap_path = pr->cap_path_nodes = pr->cap_path_hash = 0;
	free(pr->loc_leaf);
	pr->loc_leaf = NULL;
	pr->cap_loc_leaf = 0;
	free(pr->loc_cache);
	pr->loc_cache = NULL;
	free(pr->leaf_cache);
	pr->leaf_cache = NULL;
}

/* The interning tables (a merged second half is looked up in them). */
void prof_release_tables(struct pf_profile_priv *pr)
{
	pf_map64_free(&pr->m.name2dso);
	pair_table_free(&pr->loc_tab);
	pair_table_free(&pr->sym_tab);
	pair_table_free(&pr->br_tab);
	pair_table_free(&pr->bh_tab);
	u32x2_table_free(&pr->node_tab);
	free(pr->phash);
	pr->phash = NULL;
	pr->cap_phash = 0;
	free(pr->node_sample);
	pr->node_sample = NULL;
	pr->cap_node_sample = 0;
	free(pr->sample_next);
	pr->sample_next = NULL;
}

/* An array's room beyond n handed back (realloc shrinks in place): the
 * arrays grow by doubling, and the slack of the largest is tens of MB,
 * which the reports' own arrays reuse instead of fresh pages (each first
 * touch a page fault). Left as it is when the shrink fails. */
static void fit_array(void **arr, size_t *cap, size_t n, size_t esz)
{
	if (!*arr || n >= *cap || (*cap - n) * esz < ((size_t)64 << 10))
		return;
	void *q = pf_realloc_array(*arr, n ? n : 1, esz);
	if (q) {
		*arr = q;
		*cap = n ? n : 1;
	}
}

void prof_fit_arrays(pf_profile *p)
{
	fit_array((void **)&p->locs, &p->cap_locs, p->nr_locs, sizeof(*p->locs));
	fit_array((void **)&p->nodes, &p->cap_nodes, p->nr_nodes, sizeof(*p->nodes));
	fit_array((void **)&p->samples, &p->cap_samples, p->nr_samples, sizeof(*p->samples));
	fit_array((void **)&p->seq, &p->cap_seq, p->nr_seq, sizeof(*p->seq));
	fit_array((void **)&p->syms, &p->cap_syms, p->nr_syms, sizeof(*p->syms));
	fit_array((void **)&p->level_notes, &p->cap_level_notes, p->nr_level_notes, sizeof(*p->level_notes));
}

void prof_release_load_state(struct pf_profile_priv *pr)
{
	prof_release_read_state(pr);
	prof_release_tables(pr);
	pf_machine_free(&pr->m);
}

void pf_profile_free(pf_profile *p)
{
	if (!p)
		return;
	struct pf_profile_priv *pr = p->priv;
	if (pr) {
		prof_release_load_state(pr);
		free(pr);
	}
	for (size_t i = 0; i < p->nr_events; i++)
		free(p->events[i].name);
	free(p->events);
	free(p->dsos);
	free(p->syms);
	free(p->locs);
	free(p->nodes);
	free(p->nochain);
	free(p->loc_real);
	free(p->sym_inlined);
	free(p->samples);
	free(p->level_notes);
	free(p->exact);
	free(p->branches);
	free(p->node_branch);
	free(p->bh_samples);
	free(p->bh_entries);
	pf__free_trace_quality(p);
	free(p->seq);
	free(p->seq_time);
	free(p->seq_big);
	free(p->threads);
	free(p->thread_labels);
	free(p->labels);
	free(p->label_sets);
	for (size_t i = 0; i < p->nr_warnings; i++)
		free(p->warnings[i]);
	free(p->warnings);
	if (p->syms_ctx)
		sym_ctx_free(p->syms_ctx);
	pf_strtab_free(&p->strs);
	free(p->path);
	free(p);
}
