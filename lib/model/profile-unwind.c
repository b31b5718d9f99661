/* profile-unwind.c — dwarf callchains in the perf.data loader: a sample
 * recorded with --call-graph dwarf (user registers and a copy of the user
 * stack) gets the chain perf's report resolves, its user frames unwound by
 * lib/unwind through the process's maps of that moment (the machine's).
 */
#include "proff/profile.h"
#include "proff/perfdata.h"
#include "proff/unwind.h"

#include <stdlib.h>

#include "profile-int.h"

typedef struct uw_arg {
	pf_profile *p;
	uint32_t mg;
} uw_arg;

/* The unwinder's map lookup: the process's map at addr, with the ELF file
 * the symbol search found for its dso (user dsos only). */
static bool uw_find(void *arg, uint64_t addr, uw_map *out)
{
	const uw_arg *ua = arg;
	struct pf_profile_priv *pr = ua->p->priv;
	const pmap *m = pf_mgroup_find(&pr->m.mgs[ua->mg], addr);
	if (!m)
		return false;
	*out = (uw_map){ m->start, m->end, m->pgoff, NULL };
	if (ua->p->dsos[m->dso].kind == SYM_DSO_USER || ua->p->dsos[m->dso].kind == SYM_DSO_VDSO) {
		sym_dso *sd = prof_dso_sd(ua->p, m->dso);
		out->path = sd ? sym_dso_unwind_path(sd) : NULL;
	}
	return true;
}

/* A sample with user registers and stack: *us becomes it with the chain
 * perf's report resolves (the recorded one, then the unwound user frames;
 * us->callchain the same as s's when nothing was unwound). */
int prof_unwound_chain(pf_profile *p, const pthread_ *t, const pd_sample *s, pd_sample *us)
{
	/* a chain perf discards (an unknown context word): the sample then
	 * has no callchain at all, as a corrupt one has (build_stack) */
	static const uint64_t no_chain[1] = { UINT64_MAX };
	struct pf_profile_priv *pr = p->priv;
	us->callchain = s->callchain;
	if ((size_t)s->evsel >= pd_nr_attrs(pr->rd))
		return 0;
	const pd_attr *a = pd_get_attr(pr->rd, (size_t)s->evsel);
	if (!uw_event_wants(a))
		return 0;
	long n = 0;
	const uint64_t *cc = NULL;
	/* perf unwinds in a process once it has a binary mapped: not in a
	 * process exec'ing, whose samples come before its maps */
	if (t->mg != PF_NONE && pr->m.mgs[t->mg].has_file) {
		uw_arg ua = { p, t->mg };
		n = uw_sample_chain(pr->uw, t->mg, pr->m.mgs[t->mg].gen, s, a, uw_find, &ua, &cc);
		if (n < 0)
			return prof_oom(p);
	}
	if (n == 0) {
		/* no user frame: perf's chain is the recorded one, and when that
		 * has no frame either, none (not even the sample's ip) */
		for (uint64_t i = 0; s->callchain && i < s->nr_callchain; i++)
			if (s->callchain[i] < PD_CONTEXT_MAX)
				return 0;
		cc = no_chain;
		n = 1;
	}
	*us = *s;
	us->callchain = cc;
	us->nr_callchain = (uint64_t)n;
	return 0;
}
