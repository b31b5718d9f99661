/* fuzz_perfdata.c — libFuzzer target for the perf.data reader and the
 * profile loader: opens the input from memory (file or pipe format),
 * processes it ordered and unordered, prints the header and dumps it to
 * /dev/null, guesses sample times in it (pd_sample_time_near); then loads
 * it as a profile (through the memfd, with no symbol files to find), with
 * callchains (read by one thread, and by two in halves with samples by
 * comm and a tiny raw-stack cache) and with samples
 * merged per stack, and builds its Children and Self report rows in perf's
 * order (the Children rows' order on a thread of its own, streamed) and
 * prints them (in two halves, by two threads); and loads it in branch mode
 * (a row per branch-stack entry) with every branch key; and loads it with
 * branch histories (--branch-history: the chains, their srclines, Children
 * and Self rows with their trees, callee and caller order, printed in graph
 * and folded form). Any crash, hang, sanitizer
 * report or unbounded allocation is a bug. Built and run by tests/fuzz/run.sh.
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "proff/hist.h"
#include "proff/perfdata.h"
#include "proff/profile.h"
#include "proff/report.h"

static FILE *devnull;

/* branch mode: the rows of the branch keys in perf's order, printed */
static void load_branches(const char *path)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.symfs = o.kallsyms = o.buildid_dir = "/nonexistent";
	o.use_callchain = false;
	o.branch_mode = true;
	o.keep_sequence = true;
	pf_profile *p;
	proff_error e;
	if (pf_profile_load(path, &o, &p, &e) < 0)
		return;
	static const char *const sorts[] = {
		"comm,dso_from,symbol_from,symbol_to,cycles", "dso_to,mispredict,in_tx,abort,sym",
	};
	for (size_t ev = 0; ev < p->nr_events; ev++) {
		for (size_t k = 0; k < 2; k++) {
			hist_opts ho;
			hist_opts_init(&ho);
			ho.sort = sorts[k];
			ho.order_early = true;
			hist *h;
			if (hist_build(p, (uint32_t)ev, &ho, &h, &e) == 0) {
				hist_key_widths(h);
				hist_sort_report(h);
				report_fmt f;
				report_fmt_init(&f);
				f.cc_mode = CC_NONE;
				report_print_hist(devnull, h, &f, 0);
				hist_free(h);
			}
		}
	}
	pf_profile_free(p);
}

/* --branch-history: the chains as report makes them, in both orders */
static void load_branch_history(const char *path, bool caller)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.symfs = o.kallsyms = o.buildid_dir = "/nonexistent";
	o.use_callchain = true;
	o.branch_history = true;
	o.branch_history_caller = caller;
	o.keep_sequence = true;
	pf_profile *p;
	proff_error e;
	if (pf_profile_load(path, &o, &p, &e) < 0)
		return;
	if (pf_bhist_srclines(p) == 0) {
		for (size_t ev = 0; ev < p->nr_events; ev++) {
			hist_opts ho;
			hist_opts_init(&ho);
			ho.sort = "srcline,symbol,dso,ipc_null";
			ho.children = caller;
			ho.caller_order = caller;
			hist *h;
			if (hist_srclines(p, (uint32_t)ev, &ho, &e) == 0 && hist_build(p, (uint32_t)ev, &ho, &h, &e) == 0) {
				if (hist_branch_history_chains(h, &e) == 0) {
					hist_key_widths(h);
					hist_sort_report(h);
					report_fmt f;
					report_fmt_init(&f);
					f.children = ho.children;
					f.cc_mode = caller ? CC_GRAPH : CC_FOLDED;
					report_print_hist(devnull, h, &f, 0);
				}
				hist_free(h);
			}
		}
	}
	pf_profile_free(p);
}

static void load_profile(const char *path, bool callchain, bool merge, bool split, bool tight)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.symfs = o.kallsyms = o.buildid_dir = "/nonexistent";
	o.use_callchain = callchain;
	o.merge_threads = merge;
	/* tight: samples by comm, and a raw-stack cache that starts afresh
	 * every few stacks */
	o.merge_by_comm = tight;
	o.stack_cache_bytes = tight ? 64 : 0;
	o.split_load = split;
	o.split_min_bytes = 1;      /* any input: the two-thread read and its merge */
	pf_profile *p;
	proff_error e;
	if (pf_profile_load(path, &o, &p, &e) < 0)
		return;
	for (size_t ev = 0; ev < p->nr_events; ev++) {
		for (int self = 0; self < 2; self++) {
			/* Children rows with caller-order trees, then Self rows
			 * (trees only for the rows over the threshold) */
			hist_opts ho;
			hist_opts_init(&ho);
			ho.children = callchain && !self;
			ho.callchain = callchain;
			ho.caller_order = !self;
			ho.cc_min_percent = 0.5;
			ho.order_early = true;
			hist *h;
			if (hist_build(p, (uint32_t)ev, &ho, &h, &e) == 0) {
				hist_sort_report(h);
				report_fmt f;
				report_fmt_init(&f);
				f.children = ho.children;
				f.cc_mode = callchain ? CC_GRAPH : CC_NONE;
				f.split_rows = 1;
				report_print_hist(devnull, h, &f, 0);
				hist_free(h);
			}
		}
	}
	pf_profile_free(p);
}

static int cb(void *ctx, const pd_event *ev)
{
	uint64_t *acc = ctx;
	*acc += ev->type + ev->size;
	if (ev->type == PD_SAMPLE) {
		const pd_sample *s = &ev->u.sample;
		for (uint64_t i = 0; i < s->nr_callchain; i++)
			*acc += s->callchain[i];
		for (uint64_t i = 0; i < s->nr_branches; i++)
			*acc += s->branches[i].from;
		if (s->raw_size)
			*acc += ((const uint8_t *)s->raw)[s->raw_size - 1];
	} else if (ev->type == PD_MMAP || ev->type == PD_MMAP2) {
		for (const char *p = ev->u.mmap.filename; *p; p++)
			*acc += (uint8_t)*p;
	} else if (ev->type == PD_COMM) {
		for (const char *p = ev->u.comm.comm; *p; p++)
			*acc += (uint8_t)*p;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!devnull)
		devnull = fopen("/dev/null", "w");
	pd_reader *r;
	proff_error e;
	if (pd_open_mem(data, size, "fuzz", &r, &e) < 0)
		return 0;
	uint64_t acc = 0;
	pd_process(r, true, cb, &acc, &e);
	pd_process(r, false, cb, &acc, &e);
	pd_print_header(r, devnull, true);
	pd_group groups[8];
	size_t ng = pd_groups(r, groups, 8);     /* the event groups (report's group output) */
	for (size_t i = 0; i < ng; i++)
		acc += groups[i].leader + groups[i].nr_members;
	pd_dump(r, devnull, &e);
	uint64_t t;
	for (int k = 1; k < 4; k++)     /* the split's guess at a time a quarter of the way on */
		if (pd_sample_time_near(r, k / 4.0, &t))
			acc += t;
	pd_close(r);

	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-perfdata", 0);
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (fd >= 0 && ftruncate(fd, 0) == 0 && pwrite(fd, data, size, 0) == (ssize_t)size) {
		load_profile(path, true, false, false, false);
		load_profile(path, true, false, true, true);
		load_profile(path, false, true, true, false);
		load_branches(path);
		load_branch_history(path, false);
		load_branch_history(path, true);
	}
	return 0;
}
