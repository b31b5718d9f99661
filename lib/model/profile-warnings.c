/* profile-warnings.c — what a perf.data load could not read, said once per file
 * with a count in the profile's warnings (the CLI prints them): user stacks
 * not unwound, JIT maps not read, binaries with samples not found.
 */
#include "proff/profile.h"
#include "proff/unwind.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-int.h"

/* The unwinder's counts into the profile's warnings, once per file. */
static void unwind_warnings(pf_profile *p)
{
	struct pf_profile_priv *pr = p->priv;
	uw_stats st = pr->uw_done;
	if (pr->uw)
		uw_stats_add(&st, uw_get_stats(pr->uw));
	char buf[512];
	const char *path = p->path ? p->path : "";
	size_t cap = p->nr_warnings;
	if (st.partial) {
		snprintf(buf, sizeof(buf), "%s: %" PRIu64 " of %" PRIu64 " samples' user stacks go deeper than "
			 "their recorded copy (perf record --call-graph dwarf,SIZE): unwound in part",
			 path, st.partial, st.samples);
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
	if (st.no_stack) {
		snprintf(buf, sizeof(buf), "%s: %" PRIu64 " samples have no copy of their user stack (the "
			 "kernel could not read it): their user frames are not known", path, st.no_stack);
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
	if (st.no_regs || st.bad_abi) {
		snprintf(buf, sizeof(buf), "%s: %" PRIu64 " samples' user stacks were not unwound "
			 "(%" PRIu64 " without the instruction or stack pointer, %" PRIu64 " not of a 64-bit x86 process)",
			 path, st.no_regs + st.bad_abi, st.no_regs, st.bad_abi);
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
	if (pr->opts.unwind_memo == UW_MEMO_CHECK) {
		snprintf(buf, sizeof(buf), "%s: remembered walks checked: %" PRIu64 " of %" PRIu64 " samples' user "
			 "stacks recalled, %" PRIu64 " different from a fresh walk", path, st.recalled, st.samples,
			 st.mismatched);
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
	if (st.no_file) {
		snprintf(buf, sizeof(buf), "%s: %" PRIu64 " samples' user stacks met a mapped file that "
			 "could not be read as ELF: unwound no further there", path, st.no_file);
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
}

/* What could not be read from the JIT maps the samples met (their owner,
 * their kind, lines not of their form), from kernel modules' files (not a
 * .ko) and the kallsyms file (lines not of its form), once per file and map. */
static void jit_warnings(pf_profile *p)
{
	for (size_t i = 0; i < p->nr_dsos; i++) {
		const pf_dso *d = &p->dsos[i];
		if (!d->sd || (d->kind != SYM_DSO_MODULE && d->kind != SYM_DSO_KERNEL &&
			       !sym_is_perf_map(pf_str(p, d->long_name), NULL)))
			continue;
		const char *why = sym_dso_problem(d->sd);
		if (!why)
			continue;
		char buf[1024];
		snprintf(buf, sizeof(buf), "%s: %s", p->path ? p->path : "", why);
		size_t cap = p->nr_warnings;
		if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
			p->warnings[p->nr_warnings++] = strdup(buf);
	}
}

/* Binaries the samples met that the symbol search found nowhere (not at
 * the recorded path, in the build-id cache, under --symfs): their samples
 * show addresses, as in perf, which says so only with -v. Once per file,
 * with a count and the first few names. */
static void missing_dso_warning(pf_profile *p)
{
	size_t n = 0;
	char names[640] = "";
	size_t used = 0;
	for (size_t i = 0; i < p->nr_dsos; i++) {
		const pf_dso *d = &p->dsos[i];
		const char *name = pf_str(p, d->long_name);
		if (d->sd && d->kind == SYM_DSO_MODULE) {
			/* a module with neither its .ko nor kallsyms lines */
			if (sym_dso_has_symbols(d->sd))
				continue;
		} else {
			if (!d->sd || d->kind != SYM_DSO_USER || name[0] != '/' || sym_is_perf_map(name, NULL))
				continue;
			if (sym_dso_unwind_path(d->sd) || sym_dso_origin(d->sd) != '!')
				continue;
		}
		if (n++ < 3 && used < sizeof(names)) {
			int w = snprintf(names + used, sizeof(names) - used, "%s%s", used ? ", " : "", name);
			if (w > 0)
				used += (size_t)w;
		}
	}
	if (!n)
		return;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s: %zu binar%s with samples not found (their samples show addresses; "
		 "--symfs or the build-id cache may have them): %s%s", p->path ? p->path : "", n,
		 n == 1 ? "y" : "ies", names, n > 3 ? ", ..." : "");
	size_t cap = p->nr_warnings;
	if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
		p->warnings[p->nr_warnings++] = strdup(buf);
}

/* A guest's samples (cpumode guest kernel or user, as `perf kvm record`
 * writes them): perf report keeps them out of its rows and says nothing;
 * once per file, with a count. */
static void guest_warning(pf_profile *p)
{
	uint64_t n = 0, all = 0;
	for (size_t i = 0; i < p->nr_samples; i++) {
		char level = p->nr_level_notes ? pf_sample_level(p, i)
			: p->locs[pf_leaf_loc(p, p->samples[i].stack)].level;
		all += p->samples[i].count;
		if (level == 'g' || level == 'u')
			n += p->samples[i].count;
	}
	if (!n)
		return;
	char buf[512];
	snprintf(buf, sizeof(buf), "%s: %" PRIu64 " of %" PRIu64 " samples are a guest's (guest kernel or "
		 "user mode): no guest's maps or symbols are read, and a report leaves them out of its rows "
		 "and callchains, as perf report does", p->path ? p->path : "", n, all);
	size_t cap = p->nr_warnings;
	if (PF_GROW(p->warnings, cap, p->nr_warnings + 1) == 0)
		p->warnings[p->nr_warnings++] = strdup(buf);
}

void prof_load_warnings(pf_profile *p)
{
	guest_warning(p);
	unwind_warnings(p);
	jit_warnings(p);
	missing_dso_warning(p);
}
