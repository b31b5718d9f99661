/* fuzz_store.c — libFuzzer target for the local store's profile reader
 * (lib/store/local.c, store_prof_parse): a profile file parsed from the
 * input; one that parses is aggregated into a query's rows (Self,
 * Children, every key the store keeps) and its result put in order, as a
 * query does; the same for its key rows (keyrows.c) of every stored key
 * set, the partial parses a query makes (the head, one key set's
 * rows), and its call paths made into a replicate's profile, as a flame
 * graph of a store asks (paths.c). A rejected input must say what and where (the file's name, a
 * message). Any crash, hang, leak or sanitizer report is a bug. Built and
 * run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proff/store.h"
#include "../../lib/store/store-int.h"

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
	/* the call paths of its first event, twice into one replicate (a
	 * replicate of two profiles) and once into another */
	if (sp->nr_events) {
		paths_build *pb = NULL;
		if (paths_new(&pb, pf_strtab_get(&sp->strs, sp->events[0].name)) == 0) {
			long r0 = paths_rep(pb, 0, "a", 1), r1 = paths_rep(pb, 1, "b", 1);
			store_paths out;
			if (r0 >= 0 && r1 >= 0 && !paths_add_prof(pb, (size_t)r0, sp, &e) &&
			    !paths_add_prof(pb, (size_t)r0, sp, &e) && !paths_add_prof(pb, (size_t)r1, sp, &e) &&
			    !paths_finish(pb, &out, &e))
				store_paths_free(&out);
			paths_free(pb);
		}
	}
	/* a query of a stored key set: the key rows of a partial parse */
	for (int k = -1; k < STORE_NR_KEYSETS; k++) {
		int want = k < 0 ? STORE_PARSE_HEAD : store_keysets[k];
		store_prof *pp = NULL;
		if (store_prof_parse_part((const char *)data, size, "fuzz.prof", want, &pp, &e)) {
			if (!e.code || !e.msg[0] || strcmp(e.file, "fuzz.prof"))
				abort();
			continue;
		}
		store_query kq = { .keys = { HK_COMM, HK_DSO, HK_SYM }, .nkeys = 3, .children = true, .by_addr = true,
				   .groups = &sel, .ngroups = 1 };
		if (k >= 0 && pp->nr_events) {
			kq.event = pf_strtab_get(&pp->strs, pp->events[0].name);
			store_result *r = NULL;
			if (store_result_new(&kq, &r, &e) == 0) {
				long rep = store_result_rep(r, 0, pp->id, strlen(pp->id));
				if (rep >= 0 && store_result_add_keyrows(r, (size_t)rep, pp, want, &kq, &e) == 0)
					store_result_finish(r, &e);
				store_result_free(r);
			}
		}
		store_prof_free(pp);
	}
	store_prof_free(sp);
	return 0;
}
