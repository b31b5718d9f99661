/* trace-sym.c — naming the functions of a trace through the symbolizer
 * (include/proff/symbol.h): the address looked up is the file offset
 * ip - map.start + map.pgoff, the DSO is found by path and, when the runtime
 * recorded one, build-id (from the PTR_MODULES records); its kind by the
 * perf.data loaders' classifier (pf_dso_kind_of). */
#include "proff/symbol.h"
#include "proff/trace.h"
#include "trace-int.h"
#include "../model/machine.h"

#include <string.h>

int proff_trace_symbolize(proff_trace *t, const char *symfs, proff_error *err)
{
	if (t->sym)
		return 0;
	sym_opts o = { .symfs = symfs, .demangle = true };
	sym_ctx *ctx;
	int rc = sym_ctx_new(&o, &ctx, err);
	if (rc < 0)
		return rc;
	t->sym = ctx;
	t->symbolize = true;
	return 0;
}

void trace_sym_free(proff_trace *t)
{
	sym_ctx_free(t->sym);
	t->sym = NULL;
}

/* The module loaded at the map's base, or with the map's path. */
static const tmodule *module_of(const tsession *s, const tmap *m)
{
	for (size_t i = s->nmods; i-- > 0;) {
		const tmodule *md = &s->mods[i];
		const char *name = md->name[0] ? md->name : (s->exe ? s->exe : "");
		if (!strcmp(name, m->path) || md->base == m->start - m->pgoff)
			return md;
	}
	return NULL;
}

const char *trace_sym_name(proff_trace *t, tsession *s, tmap *m, uint64_t file_off)
{
	if (!t->sym)
		return NULL;
	if (!m->dso_done) {
		m->dso_done = true;
		const tmodule *md = module_of(s, m);
		/* the perf.data loaders' classifier (lib/model/machine.c): a
		 * trace's maps are user space */
		enum sym_dso_kind kind = pf_dso_kind_of(m->path, PD_CPUMODE_USER);
		m->dso = sym_dso_get(t->sym, m->path, md && md->bid_len ? md->bid : NULL,
				     md ? md->bid_len : 0, kind);
	}
	if (!m->dso)
		return NULL;
	sym_info si;
	if (!sym_lookup(m->dso, file_off, &si) || !si.name)
		return NULL;
	return si.name;
}
