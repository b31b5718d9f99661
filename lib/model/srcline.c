/* srcline.c — a location's source line ("file.c:42"), made on demand and
 * kept in the profile's strings; for many locations at once, one binary at
 * a time in address order, its DWARF data released as it goes.
 */
#include "proff/profile.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile-int.h"

const char *pf_loc_srcline(pf_profile *p, uint32_t loc)
{
	pf_loc *l = &p->locs[loc];
	if (l->srcline != PF_NONE)
		return pf_str(p, l->srcline);
	char buf[4096];
	sym_dso *sd = l->dso != PF_NONE ? prof_dso_sd(p, l->dso) : NULL;
	if (sd) {
		sym_srcline_str(sd, l->addr, false, buf, sizeof(buf));
	} else if (l->dso != PF_NONE) {
		snprintf(buf, sizeof(buf), "%s[%llx]", pf_str(p, p->dsos[l->dso].short_name),
			 (unsigned long long)l->addr);
	} else {
		snprintf(buf, sizeof(buf), "??:0");   /* no map: perf's SRCLINE_UNKNOWN */
	}
	int64_t id = pf_strtab_intern(&p->strs, buf, strlen(buf));
	if (id < 0)
		return "??";
	l->srcline = (uint32_t)id;
	return pf_str(p, l->srcline);
}

/* The compile units whose line tables a binary's DWARF data holds at once
 * at most (then it is released and opened again: libdw frees none alone) */
#define SRCLINE_UNITS 24

typedef struct loc_at { uint64_t addr; uint32_t loc; } loc_at;

static int loc_at_cmp(const void *a, const void *b)
{
	const loc_at *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->loc < y->loc ? -1 : x->loc > y->loc;
}

static bool srcline_wanted(const pf_profile *p, const uint8_t *want, size_t i)
{
	return (!want || want[i]) && p->locs[i].srcline == PF_NONE;
}

int pf_locs_srclines(pf_profile *p, const uint8_t *want)
{
	/* the binaries' groups: dsos with one symbolizer handle are one */
	size_t nd = p->nr_dsos, nl = p->nr_locs;
	uint32_t *group = malloc((nd + 1) * sizeof(*group));
	size_t *first = calloc(nd + 2, sizeof(*first));
	loc_at *order = malloc((nl ? nl : 1) * sizeof(*order));
	int rc = 0;
	if (!group || !first || !order) {
		for (size_t i = 0; i < nl; i++)
			if (srcline_wanted(p, want, i))
				pf_loc_srcline(p, (uint32_t)i);
		rc = -1;
		goto out;
	}
	for (size_t i = 0; i < nd; i++) {
		sym_dso *sd = prof_dso_sd(p, (uint32_t)i);
		group[i] = (uint32_t)i;
		for (size_t j = 0; sd && j < i; j++)
			if (p->dsos[j].sd == sd) {
				group[i] = group[j];
				break;
			}
	}
	group[nd] = (uint32_t)nd;              /* locations without a map */
	/* the wanted locations by group */
	for (size_t i = 0; i < nl; i++)
		if (srcline_wanted(p, want, i))
			first[group[p->locs[i].dso == PF_NONE ? nd : p->locs[i].dso] + 1]++;
	for (size_t g = 0; g <= nd; g++)
		first[g + 1] += first[g];
	size_t n = first[nd + 1];
	for (size_t i = 0; i < nl; i++) {
		const pf_loc *l = &p->locs[i];
		if (srcline_wanted(p, want, i))
			order[first[group[l->dso == PF_NONE ? nd : l->dso]]++] = (loc_at){ l->addr, (uint32_t)i };
	}
	/* first[g] is now group g's end. Within a binary in address order:
	 * its compile units one after another, so the DWARF data can be
	 * released every few units without needing one of them again */
	size_t at = 0;
	for (size_t g = 0; g <= nd && at < n; g++) {
		if (at == first[g])
			continue;
		sym_dso *sd = g < nd ? p->dsos[g].sd : NULL;
		if (sd)
			qsort(order + at, first[g] - at, sizeof(*order), loc_at_cmp);
		for (; at < first[g]; at++) {
			pf_loc_srcline(p, order[at].loc);
			if (sd)
				sym_dso_trim_dwarf(sd, SRCLINE_UNITS);
		}
		if (sd)
			sym_dso_release_dwarf(sd);
	}
out:
	free(group);
	free(first);
	free(order);
	return rc;
}
