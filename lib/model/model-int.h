/* model-int.h — the loader's building blocks, shared by the files of
 * lib/model/ (not a public header): profile.c owns the interning tables and
 * implements these; trace-model.c builds exact profiles with them. Every
 * function returns PF_NONE (or < 0) on allocation failure.
 */
#ifndef PROFF_MODEL_INT_H
#define PROFF_MODEL_INT_H

#include "proff/profile.h"

/* the dso of a user-space file path */
uint32_t pf__dso(pf_profile *p, const char *path);
/* the location (dso, file offset) seen at runtime address ip; dso may be PF_NONE */
uint32_t pf__loc(pf_profile *p, uint32_t dso, uint64_t addr, uint64_t ip);
/* the trie node for loc called from parent (0 = root) */
uint32_t pf__node(pf_profile *p, uint32_t parent, uint32_t loc);
/* thread index of (pid, tid), created with comm when new */
uint32_t pf__thread(pf_profile *p, uint32_t pid, uint32_t tid, const char *comm);
/* add period to the aggregated sample (event 0, thread, stack); returns its index */
int pf__sample(pf_profile *p, uint32_t thread, uint32_t stack, uint64_t period);

/* trace-model.c */
int pf__load_trace(pf_profile *p, const char *path, const pf_load_opts *opts, proff_error *err);
void pf__free_trace_quality(pf_profile *p);

#endif
