/* cycles.c — hot blocks from branch-stack cycles (`proff diff -c cycles`).
 * Placeholder accounting: filled in by the hot-block table. */
#include "stream-int.h"

int st_account_cycles(st_side *s, const pd_sample *sm)
{
	for (uint64_t i = 0; i < sm->nr_branches; i++)
		if ((sm->branches[i].flags >> 4) & 0xffff)
			s->any_cycles = true;
	return 0;
}

int st_blocks_finish(st_side *s) { (void)s; return 0; }
void st_blocks_free(st_side *s) { (void)s; }

int st_cycles_report(FILE *out, st_side *old, st_side *new_, const st_cycles_opts *co)
{
	(void)out; (void)old; (void)new_; (void)co;
	return PROFF_ENOTSUP;
}
