/* plan.c — the planner (proff/plan.h): the loader's options and the stages
 * before the rows, from the sort keys' needs (the key catalogue's HKN_*
 * flags, lib/hist/keys.c), the filters and the outputs.
 */
#include "proff/plan.h"

#include "proff/hist.h"

int proff_plan(const plan_request *r, pf_load_opts *lo, plan_stages *st, proff_error *err)
{
	int keys[HIST_MAX_KEYS];
	int nk = hist_parse_sort(r->sort ? r->sort : "comm,dso,sym", keys, HIST_MAX_KEYS, err);
	if (nk < 0)
		return nk;
	unsigned needs = hist_keys_needs(keys, nk);
	bool loc_only = true;       /* every key the location's: no sample context */
	for (int k = 0; k < nk; k++)
		if (!(hist_keys[keys[k]].needs & HKN_LOC))
			loc_only = false;
	/* samples merged per comm and stack when nothing sees a pid, tid or
	 * cpu (fewer of them to build rows from) */
	lo->merge_by_comm = !r->thread_filter && !(needs & (HKN_THREAD | HKN_CPU));
	/* ... or per stack alone when nothing sees the thread at all: keys of
	 * the location only, no comm or thread filter, no flame graph (its
	 * frames are per comm) and no perf report order (its ties are per
	 * thread) */
	lo->merge_threads = loc_only && !r->thread_filter && !r->comm_filter && !r->flamegraph && !r->report_order;
	/* callchains resolved when something reads them; without, a row is a
	 * sample's own ip and perf resolves no callchain either (a profile of
	 * leaves only: a fraction of the memory and the reading) */
	bool parent = r->parent || (needs & HKN_CALLCHAIN);
	lo->use_callchain = r->flamegraph || (!r->no_stack && (r->children || r->graph || parent));
	/* the raw samples' order, for perf's input tree where its walks depend
	 * on it (hist's tree mode: Children in perf's order, or a key whose
	 * comparator is no order) */
	lo->keep_sequence = r->report_order && (r->children || (needs & HKN_PARTIAL)) && !r->flamegraph;
	st->srclines = (needs & HKN_SRCLINE) != 0;
	/* a time key: each raw sample's time, read one thread (the split
	 * read's halves keep no times), rows by the reference path */
	if (needs & HKN_TIME) {
		lo->keep_sequence = lo->keep_time = true;
		lo->split_load = false;
	}
	st->reference = (needs & (HKN_CPUMODE | HKN_TIME)) != 0;
	return 0;
}
