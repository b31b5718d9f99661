/* cli-engine.h — `--engine=SPEC`, report's and diff's debugging option:
 * which path computes the rows (the engine, or the reference path of
 * include/proff/reference.h) and the engine's tuning forced one way
 * (tests/cli/reference-matrix.sh runs every combination and compares). */
#ifndef PROFF_CLI_ENGINE_H
#define PROFF_CLI_ENGINE_H

#include <stdbool.h>

#include "proff/hist.h"
#include "proff/profile.h"

typedef struct cli_engine {
	bool reference;      /* the reference path */
	int threads;         /* 0: the engine's choice; 1: one thread; 2: two wherever it can */
	bool replay;         /* perf's row order by replaying its trees always */
	int unwind;          /* enum uw_memo: dwarf stacks' remembered walks (on, fresh, check) */
} cli_engine;

/* SPEC: comma-separated words: engine (the default), reference,
 * threads=1, threads=2, replay, unwind=fresh, unwind=check. 0, or -1 after a message on stderr. */
int cli_engine_parse(const char *cmd, const char *spec, cli_engine *e);
/* The tuning into the hist's and the loader's options */
void cli_engine_apply(const cli_engine *e, hist_opts *ho, pf_load_opts *lo);
/* hist_build or hist_build_reference, as e says */
int cli_engine_hist(const cli_engine *e, pf_profile *prof, uint32_t evsel, const hist_opts *o, hist **out,
		    proff_error *err);

#endif
