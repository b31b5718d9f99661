/* fuzz_store.c — libFuzzer target for the local store's profile reader
 * (lib/store/local.c, store_prof_parse): a profile file parsed from the
 * input; one that parses is aggregated into a query's rows (Self,
 * Children, every key the store keeps) and its result put in order, as a
 * query does. A rejected input must say what and where (the file's name,
 * a message). Any crash, hang, leak or sanitizer report is a bug. Built and
 * run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proff/store.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	store_prof *sp = NULL;
	proff_error e;
	memset(&e, 0, sizeof(e));
	if (store_prof_parse((const char *)data, size, "fuzz.prof", &sp, &e) < 0) {
		if (!e.code || !e.msg[0] || strcmp(e.file, "fuzz.prof"))
			abort();
		return 0;
	}
	store_sel sel = { 0 };
	store_query q = { .keys = { HK_COMM, HK_DSO, HK_SYM, HK_SRCLINE }, .nkeys = 4, .children = true,
			  .by_addr = true, .groups = &sel, .ngroups = 1 };
	for (size_t ev = 0; ev < sp->nr_events && ev < 2; ev++) {
		q.event = pf_strtab_get(&sp->strs, sp->events[ev].name);
		store_result *r = NULL;
		if (store_result_new(&q, &r, &e) == 0) {
			long rep = store_result_rep(r, 0, sp->id, strlen(sp->id));
			if (rep >= 0 && store_result_add_prof(r, (size_t)rep, sp, &q, &e) == 0)
				store_result_finish(r, &e);
			store_result_free(r);
		}
	}
	store_prof_free(sp);
	return 0;
}
