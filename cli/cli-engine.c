/* cli-engine.c — `--engine=SPEC` (cli-engine.h): a debugging option of
 * report and diff; docs/architecture.md, "The reference path". */
#include "cli-engine.h"

#include <stdint.h>
#include <string.h>

#include "cmds.h"
#include "proff/reference.h"
#include "proff/unwind.h"

int cli_engine_parse(const char *cmd, const char *spec, cli_engine *e)
{
	*e = (cli_engine){ 0 };
	for (const char *w = spec; *w;) {
		size_t n = strcspn(w, ",");
		if (n == 6 && !strncmp(w, "engine", n))
			e->reference = false;
		else if (n == 9 && !strncmp(w, "reference", n))
			e->reference = true;
		else if (n == 9 && !strncmp(w, "threads=1", n))
			e->threads = 1;
		else if (n == 9 && !strncmp(w, "threads=2", n))
			e->threads = 2;
		else if (n == 6 && !strncmp(w, "replay", n))
			e->replay = true;
		else if (n == 12 && !strncmp(w, "unwind=fresh", n))
			e->unwind = UW_MEMO_OFF;
		else if (n == 12 && !strncmp(w, "unwind=check", n))
			e->unwind = UW_MEMO_CHECK;
		else {
			cli_errorf("%s: --engine: unknown word '%.*s' (expected engine, reference, threads=1, threads=2, "
				   "replay, unwind=fresh, unwind=check)", cmd, (int)n, w);
			return -1;
		}
		w += n;
		if (*w == ',')
			w++;
	}
	return 0;
}

void cli_engine_apply(const cli_engine *e, hist_opts *ho, pf_load_opts *lo)
{
	if (ho) {
		ho->order_replay |= e->replay;
		if (e->threads == 1)
			ho->split_min = SIZE_MAX;
		else if (e->threads == 2)
			ho->split_min = 2;
	}
	if (lo) {
		/* the reference path walks every dwarf stack afresh */
		lo->unwind_memo = e->reference && !e->unwind ? UW_MEMO_OFF : e->unwind;
		if (e->threads == 1) {
			lo->split_load = false;
		} else if (e->threads == 2) {
			/* any file read in two halves (with time stamps), merged on two threads */
			lo->split_load = true;
			lo->split_min_bytes = 1;
			lo->split_merge_min = 1;
		}
	}
}

int cli_engine_hist(const cli_engine *e, pf_profile *prof, uint32_t evsel, const hist_opts *o, hist **out,
		    proff_error *err)
{
	return e && e->reference ? hist_build_reference(prof, evsel, o, out, err) : hist_build(prof, evsel, o, out, err);
}
