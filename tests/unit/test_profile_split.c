/* test_profile_split.c — one file read in two halves (pf_load_opts.split_load)
 * gives exactly the profile of one sequential read.
 *
 * Records a workload of many short processes, a multi-threaded sort and a
 * forking shell with `perf record -g` (skipped when perf cannot record
 * here), then loads it sequentially and split (split_min_bytes 1, so the
 * small file is split), with and without merge_threads and with a --time
 * range, and compares every array of the model: strings, dsos, symbols,
 * locations, nodes, samples, threads, event totals, lost and time range —
 * same values, same order, and the raw samples' sequence (keep_sequence,
 * lib/hist's tree mode). Also: perf's row order computed on a second
 * thread during the callchain pass is the sequential one. tests/run.sh runs
 * this test in the ThreadSanitizer build too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testutil.h"
#include <linux/perf_event.h>

#include "proff/hist.h"
#include "proff/perfdata-writer.h"
#include "proff/perfdata.h"
#include "proff/profile.h"

static char g_dir[512];
static char g_data[600];
static bool g_have_perf;

static int setup(void **state)
{
	(void)state;
	if (tu_mkdtemp(g_dir, sizeof(g_dir), "split") < 0)
		return -1;
	snprintf(g_data, sizeof(g_data), "%s/p.data", g_dir);
	g_have_perf = tu_sh("cd '%s' && seq 1 150000 | sed 's/$/ lorem/' > words && "
			 "cat > w.sh <<'EOS'\n"
			 "for i in 1 2 3; do\n"
			 "  sort -R --parallel=2 -S 4M words > /dev/null\n"
			 "  for j in 1 2 3 4 5 6 7 8; do ls -l /usr/bin > /dev/null; done\n"
			 "  awk 'BEGIN{for(i=0;i<200000;i++) s+=i*i; print s}' > /dev/null\n"
			 "done\n"
			 "EOS\n"
			 /* -N, not -B: perf writes the first and last sample
			  * times (which the split needs) only where it collects the
			  * build-ids; the symbolizer still reads the binaries from
			  * both threads (tests/run.sh also runs this test under
			  * ThreadSanitizer) */
			 "perf record -q -N -F 5000 -g -e cpu-clock -o p.data sh w.sh >/dev/null 2>&1",
			 g_dir) == 0;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return tu_rmdir(g_dir);
}

static void same_profile(const pf_profile *a, const pf_profile *b)
{
	assert_int_equal(a->strs.n, b->strs.n);
	for (size_t i = 0; i < a->strs.n; i++)
		assert_string_equal(a->strs.strs[i], b->strs.strs[i]);
	assert_int_equal(a->nr_dsos, b->nr_dsos);
	for (size_t i = 0; i < a->nr_dsos; i++) {
		assert_int_equal(a->dsos[i].long_name, b->dsos[i].long_name);
		assert_int_equal(a->dsos[i].short_name, b->dsos[i].short_name);
		assert_int_equal(a->dsos[i].kind, b->dsos[i].kind);
		assert_int_equal(a->dsos[i].build_id_size, b->dsos[i].build_id_size);
		assert_memory_equal(a->dsos[i].build_id, b->dsos[i].build_id, 20);
	}
	assert_int_equal(a->nr_syms, b->nr_syms);
	for (size_t i = 0; i < a->nr_syms; i++)
		assert_memory_equal(&a->syms[i], &b->syms[i], sizeof(pf_sym));
	assert_int_equal(a->nr_locs, b->nr_locs);
	for (size_t i = 0; i < a->nr_locs; i++) {
		const pf_loc *x = &a->locs[i], *y = &b->locs[i];
		assert_int_equal(x->addr, y->addr);
		assert_int_equal(x->ip, y->ip);
		assert_int_equal(x->dso, y->dso);
		assert_int_equal(x->sym, y->sym);
		assert_int_equal(x->level, y->level);
	}
	assert_int_equal(a->nr_nodes, b->nr_nodes);
	for (size_t i = 0; i < a->nr_nodes; i++) {
		assert_memory_equal(&a->nodes[i], &b->nodes[i], sizeof(pf_node));
		assert_int_equal(pf_node_nochain(a, (uint32_t)i), pf_node_nochain(b, (uint32_t)i));
	}
	assert_int_equal(a->nr_samples, b->nr_samples);
	for (size_t i = 0; i < a->nr_samples; i++)
		assert_memory_equal(&a->samples[i], &b->samples[i], sizeof(pf_sample));
	/* the raw samples' order (keep_sequence): one entry per raw sample */
	assert_int_equal(a->nr_seq, b->nr_seq);
	for (size_t i = 0; i < a->nr_seq; i++)
		assert_memory_equal(&a->seq[i], &b->seq[i], sizeof(pf_seq));
	assert_int_equal(a->nr_seq_big, b->nr_seq_big);
	for (size_t i = 0; i < a->nr_seq_big; i++)
		assert_memory_equal(&a->seq_big[i], &b->seq_big[i], sizeof(pf_seq_big));
	if (a->nr_seq) {
		uint64_t count = 0, period = 0, per_seq = 0;
		for (size_t i = 0; i < a->nr_samples; i++) {
			count += a->samples[i].count;
			period += a->samples[i].period;
		}
		for (size_t i = 0; i < a->nr_seq; i++) {
			assert_true(a->seq[i].sample < a->nr_samples);
			per_seq += pf_seq_period(a, i);
		}
		assert_int_equal(count, a->nr_seq);
		assert_int_equal(period, per_seq);
	}
	assert_int_equal(a->nr_level_notes, b->nr_level_notes);
	for (size_t i = 0; i < a->nr_level_notes; i++) {
		assert_int_equal(a->level_notes[i].sample, b->level_notes[i].sample);
		assert_int_equal(a->level_notes[i].level, b->level_notes[i].level);
	}
	assert_int_equal(a->nr_threads, b->nr_threads);
	for (size_t i = 0; i < a->nr_threads; i++)
		assert_memory_equal(&a->threads[i], &b->threads[i], sizeof(pf_thread));
	assert_int_equal(a->nr_events, b->nr_events);
	for (size_t i = 0; i < a->nr_events; i++) {
		assert_int_equal(a->events[i].total_period, b->events[i].total_period);
		assert_int_equal(a->events[i].nr_samples, b->events[i].nr_samples);
	}
	assert_int_equal(a->nr_lost_samples, b->nr_lost_samples);
	assert_int_equal(a->first_time, b->first_time);
	assert_int_equal(a->last_time, b->last_time);
	assert_int_equal(a->nr_warnings, b->nr_warnings);
}

/* the recorded file loaded with o (the load must succeed) */
static pf_profile *load(const pf_load_opts *o)
{
	proff_error err;
	pf_profile *p = NULL;
	assert_int_equal(pf_profile_load(g_data, o, &p, &err), 0);
	return p;
}

static void check_opts(const pf_load_opts *base, bool merge_threads, const char *time_spec, bool use_callchain)
{
	if (!g_have_perf)
		skip();
	pf_load_opts o = *base;
	o.merge_threads = merge_threads;
	o.keep_sequence = !merge_threads;
	o.time_spec = time_spec;
	o.use_callchain = use_callchain;
	pf_profile *seq = load(&o);
	o.split_load = true;
	o.split_min_bytes = 1;
	pf_profile *split = load(&o);
	assert_true(seq->nr_samples > 100);
	same_profile(seq, split);
	/* the merge on two threads (the second half's nodes and raw-sample
	 * order a step behind its locations and samples) */
	o.split_merge_min = 1;
	pf_profile *split2 = load(&o);
	same_profile(seq, split2);
	pf_profile_free(seq);
	pf_profile_free(split);
	pf_profile_free(split2);
}

static void check(bool merge_threads, const char *time_spec, bool use_callchain)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	check_opts(&o, merge_threads, time_spec, use_callchain);
}

/* With inlined frames asked for: split and sequential agree (this
 * recording is not a dwarf one, so nothing is expanded and the finished
 * half looks nothing up ahead; tests/oracle/dwarf.sh compares a dwarf
 * report read in halves, where it does). */
static void test_split_inlines(void **state)
{
	(void)state;
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.inline_frames = true;
	check_opts(&o, false, NULL, true);
}

/* The raw-stack cache is speed only: a cache of 4 KB (started afresh
 * every few dozen stacks) gives the profile of the default one, read
 * sequentially and in halves. */
static void test_stack_cache_flush(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_load_opts o;
	pf_load_opts_init(&o);
	pf_profile *big = load(&o);
	o.stack_cache_bytes = 4096;
	pf_profile *small = load(&o);
	assert_true(big->nr_nodes > 1000);
	same_profile(big, small);
	pf_profile_free(big);
	pf_profile_free(small);
	check_opts(&o, false, NULL, true);
}

/* merge_by_comm: one sample per (event, comm, stack), in order of first
 * occurrence, with the sums of the full key's samples and the thread,
 * pid, tid and cpu of the first of them; split and sequential agree. */
static void test_merge_by_comm(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_load_opts o;
	pf_load_opts_init(&o);
	pf_profile *full = load(&o);
	o.merge_by_comm = true;
	pf_profile *bc = load(&o);
	assert_true(bc->nr_samples < full->nr_samples);     /* threads of one comm share stacks */
	assert_int_equal(bc->nr_nodes, full->nr_nodes);
	size_t next = 0;
	uint64_t sum_full = 0, sum_bc = 0;
	for (size_t i = 0; i < full->nr_samples; i++) {
		const pf_sample *f = &full->samples[i];
		sum_full += f->period;
		size_t j = 0;
		while (j < bc->nr_samples && !(bc->samples[j].evsel == f->evsel && bc->samples[j].comm == f->comm &&
					       bc->samples[j].stack == f->stack))
			j++;
		assert_true(j < bc->nr_samples);
		if (j == next) {
			/* first occurrence: the aggregate stands for this sample's thread */
			const pf_sample *b = &bc->samples[j];
			assert_int_equal(b->thread, f->thread);
			assert_int_equal(b->pid, f->pid);
			assert_int_equal(b->tid, f->tid);
			assert_int_equal(b->cpu, f->cpu);
			next++;
		} else {
			assert_true(j < next);
		}
	}
	assert_int_equal(next, bc->nr_samples);
	for (size_t j = 0; j < bc->nr_samples; j++) {
		const pf_sample *b = &bc->samples[j];
		uint64_t per = 0, cnt = 0;
		for (size_t i = 0; i < full->nr_samples; i++) {
			const pf_sample *f = &full->samples[i];
			if (f->evsel == b->evsel && f->comm == b->comm && f->stack == b->stack) {
				per += f->period;
				cnt += f->count;
			}
		}
		assert_int_equal(b->period, per);
		assert_int_equal(b->count, cnt);
		sum_bc += b->period;
	}
	assert_int_equal(sum_bc, sum_full);
	pf_profile_free(full);
	pf_profile_free(bc);
	check_opts(&o, false, NULL, true);
}

/* merge_threads without callchains (the leaf cache of merged_ip_sample):
 * per stack node the sums of the per-thread load, in the order of each
 * node's first sample */
static void test_merged_ip_sums(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.use_callchain = false;
	pf_profile *full = load(&o);
	o.merge_threads = true;
	pf_profile *m = load(&o);
	assert_int_equal(m->nr_nodes, full->nr_nodes);
	assert_true(m->nr_samples > 10 && m->nr_samples <= full->nr_samples);
	uint64_t *per = calloc(full->nr_nodes, sizeof(uint64_t)), *cnt = calloc(full->nr_nodes, sizeof(uint64_t));
	uint32_t *order = calloc(full->nr_nodes, sizeof(uint32_t));
	assert_non_null(per);
	assert_non_null(cnt);
	assert_non_null(order);
	size_t norder = 0;
	for (size_t i = 0; i < full->nr_samples; i++) {
		const pf_sample *f = &full->samples[i];
		if (f->evsel != 0)
			continue;
		if (!cnt[f->stack])
			order[norder++] = f->stack;
		per[f->stack] += f->period;
		cnt[f->stack] += f->count;
	}
	size_t k = 0;
	for (size_t j = 0; j < m->nr_samples; j++) {
		const pf_sample *b = &m->samples[j];
		if (b->evsel != 0)
			continue;
		assert_true(k < norder);
		assert_int_equal(b->stack, order[k]);
		assert_int_equal(b->period, per[b->stack]);
		assert_int_equal(b->count, cnt[b->stack]);
		k++;
	}
	assert_int_equal(k, norder);
	for (size_t i = 0; i < full->nr_events; i++) {
		assert_int_equal(m->events[i].total_period, full->events[i].total_period);
		assert_int_equal(m->events[i].nr_samples, full->events[i].nr_samples);
	}
	free(per);
	free(cnt);
	free(order);
	pf_profile_free(full);
	pf_profile_free(m);
}

/* perf's row order computed on a thread of its own while the callchain
 * trees are built (hist_opts.order_early) is the order computed after */
static void test_order_early(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_load_opts o;
	pf_load_opts_init(&o);
	proff_error err;
	pf_profile *p = load(&o);
	hist *h[2];
	for (int k = 0; k < 2; k++) {
		hist_opts ho;
		hist_opts_init(&ho);
		ho.children = ho.callchain = ho.caller_order = true;
		ho.cc_min_percent = 0.5;
		ho.order_early = k == 1;
		assert_int_equal(hist_build(p, 0, &ho, &h[k], &err), 0);
		hist_sort_report(h[k]);
	}
	assert_true(h[0]->n > 100);
	assert_int_equal(h[0]->n, h[1]->n);
	for (size_t i = 0; i < h[0]->n; i++) {
		const hist_entry *a = &h[0]->entries[i], *b = &h[1]->entries[i];
		assert_int_equal(a->comm, b->comm);
		assert_int_equal(a->dso, b->dso);
		assert_int_equal(a->sym, b->sym);
		assert_int_equal(a->addr, b->addr);
		assert_int_equal(a->period, b->period);
		assert_int_equal(a->period_acc, b->period_acc);
		assert_int_equal(a->nr_events, b->nr_events);
	}
	hist_free(h[0]);
	hist_free(h[1]);
	pf_profile_free(p);
}

/* ---- a late sample: delivered after the split point, timed before it ---- */

/* A sample of misc `misc` (cpumode) with callchain chain[0..n-1]. */
static void put_chain_sample(pdw_writer *w, uint16_t misc, uint32_t tid, uint64_t t, uint64_t ip,
			     const uint64_t *chain, uint64_t n)
{
	uint8_t r[128] = { 0 };
	uint32_t pid = 100;
	uint64_t period = 1000;
	uint16_t size = (uint16_t)(48 + 8 * n);
	assert_true(size <= sizeof(r));
	tu_put_hdr(r, PERF_RECORD_SAMPLE, misc, size);
	memcpy(r + 8, &ip, 8);
	memcpy(r + 16, &pid, 4);
	memcpy(r + 20, &tid, 4);
	memcpy(r + 24, &t, 8);
	memcpy(r + 32, &period, 8);
	memcpy(r + 40, &n, 8);
	memcpy(r + 48, chain, 8 * n);
	proff_error err;
	assert_int_equal(pdw_write(w, r, size, &err), 0);
}

/* a user sample: ip, pid/tid, time, period, callchain of 2 (the ip and a caller) */
static void put_sample(pdw_writer *w, uint32_t tid, uint64_t t, uint64_t ip)
{
	put_chain_sample(w, PERF_RECORD_MISC_USER, tid, t, ip, (uint64_t[]){ ip, 0x7000 + (ip & 0x30) }, 2);
}

/* A crafted file at path: one cpu-clock event (ip, tid, time, period,
 * callchain), its data section begun. */
static pdw_writer *crafted_open(const char *path)
{
	pdw_writer *w;
	proff_error err;
	assert_int_equal(pdw_create(path, NULL, &w, &err), 0);
	uint8_t attr[PDW_ATTR_SIZE];
	tu_cpu_clock_attr(attr, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
			  PERF_SAMPLE_CALLCHAIN, 1000, true);
	uint64_t id = 1;
	assert_int_equal(pdw_add_attr(w, attr, "cpu-clock", &id, 1, &err), 0);
	assert_int_equal(pdw_start_data(w, &err), 0);
	return w;
}

/* Closed with the header's sample time range 100..2000: the split time is 1050. */
static void crafted_close(pdw_writer *w)
{
	proff_error err;
	uint64_t st[2] = { 100, 2000 };
	assert_int_equal(pdw_set_feature(w, PD_FEAT_SAMPLE_TIME, st, sizeof(st), &err), 0);
	pdw_stats stats;
	assert_int_equal(pdw_close(w, &stats, &err), 0);
}

/* The crafted file read sequentially and in halves (no symbols): the same profile. */
static void crafted_load(const char *path, bool merge_threads, pf_profile **seq, pf_profile **split)
{
	pf_load_opts o;
	pf_load_opts_init(&o);
	o.symfs = o.kallsyms = o.buildid_dir = "/nonexistent";
	o.merge_threads = merge_threads;
	proff_error err;
	assert_int_equal(pf_profile_load(path, &o, seq, &err), 0);
	o.split_load = true;
	o.split_min_bytes = 1;
	assert_int_equal(pf_profile_load(path, &o, split, &err), 0);
	same_profile(*seq, *split);
}

/* A LOST_SAMPLES record (perf's "Total Lost Samples" counts these; LOST
 * records, the ring buffer's losses, are counted apart, as perf does). */
static void put_lost(pdw_writer *w, uint64_t t, uint64_t n)
{
	uint8_t r[32] = { 0 };
	uint32_t pid = 100;
	tu_put_hdr(r, PERF_RECORD_LOST_SAMPLES, 0, 32);
	memcpy(r + 8, &n, 8);
	memcpy(r + 16, &pid, 4);       /* sample_id_all trailer: pid, tid, time */
	memcpy(r + 20, &pid, 4);
	memcpy(r + 24, &t, 8);
	proff_error err;
	assert_int_equal(pdw_write(w, r, 32, &err), 0);
}

/* Rounds of 10 samples 100 ns apart; the fourth round also holds a sample
 * and a LOST_SAMPLES record timed 500/600, which the reader delivers after the
 * second round's samples (rounds are flushed up to the previous round's
 * last time). The halves part at the sample of 1100, so the late ones
 * belong to the second half although their times are before the split. */
static void test_split_late_sample(void **state)
{
	(void)state;
	char path[600];
	snprintf(path, sizeof(path), "%s/late.data", g_dir);
	pdw_writer *w = crafted_open(path);
	proff_error err;
	for (int round = 0; round < 4; round++) {
		for (int i = 1; i <= 10; i++)
			put_sample(w, 100 + (uint32_t)(i & 1), (uint64_t)(round * 1000 + i * 100),
				   0x4000 + (uint64_t)((round * 7 + i) % 5) * 16);
		if (round == 3) {
			put_sample(w, 101, 500, 0x4abc);    /* late, a location of its own */
			put_lost(w, 600, 7);                /* a late LOST_SAMPLES record */
		}
		assert_int_equal(pdw_finished_round(w, &err), 0);
	}
	/* the split time is 1050: the halves part at the sample of 1100, the
	 * late ones come three rounds later */
	crafted_close(w);
	pf_profile *seq = NULL, *split = NULL;
	crafted_load(path, false, &seq, &split);
	assert_int_equal(seq->events[0].nr_samples, 41);
	assert_int_equal(seq->nr_lost_samples, 7);
	pf_profile_free(seq);
	pf_profile_free(split);
}

/* A location without a map is shared by the cpumodes that meet its
 * address and keeps the first one's level, but perf shows a sample's own
 * level (its cpumode): the samples where they differ carry a note. Three
 * unmapped addresses, each met by a kernel sample (X, X / Y / Z alone)
 * and a user sample (the address called from G): X first in kernel context
 * in the first half and in user context in the second; Y both in the
 * second half, kernel first; Z user first in the first half, kernel in the
 * second. Read sequentially and in halves, with and without
 * merge_threads: the same notes, and every sample's level its cpumode's. */
static void test_split_levels(void **state)
{
	(void)state;
	char path[600];
	snprintf(path, sizeof(path), "%s/levels.data", g_dir);
	pdw_writer *w = crafted_open(path);
	proff_error err;
	const uint64_t X = 0x1234, Y = 0x2345, Z = 0x3456, G = 0xdfdfdfdf00000000ull;
	const uint64_t K = PERF_CONTEXT_KERNEL, U = PERF_CONTEXT_USER;
	const uint16_t MK = PERF_RECORD_MISC_KERNEL, MU = PERF_RECORD_MISC_USER;
	for (int i = 0; i < 20; i++)
		put_sample(w, 100, 100 + (uint64_t)i * 90, 0x4000 + (uint64_t)(i % 3) * 16);
	put_chain_sample(w, MK, 101, 150, X, (uint64_t[]){ K, X, X }, 3);
	put_chain_sample(w, MU, 101, 250, Z, (uint64_t[]){ U, Z, G }, 3);
	put_chain_sample(w, MU, 101, 1500, X, (uint64_t[]){ U, X, G }, 3);
	put_chain_sample(w, MK, 101, 1200, Y, (uint64_t[]){ K, Y }, 2);
	put_chain_sample(w, MU, 101, 1300, Y, (uint64_t[]){ U, Y, G }, 3);
	put_chain_sample(w, MK, 101, 1400, Z, (uint64_t[]){ K, Z }, 2);
	put_chain_sample(w, MU, 101, 1600, X, (uint64_t[]){ U, X, G }, 3);
	assert_int_equal(pdw_finished_round(w, &err), 0);
	crafted_close(w);    /* the halves part at 1050 */

	for (int merged = 0; merged < 2; merged++) {
		pf_profile *seq = NULL, *split = NULL;
		crafted_load(path, merged, &seq, &split);
		/* X's and Z's user stacks, Y's user stack, Z's kernel stack */
		assert_int_equal(seq->nr_level_notes, 3);
		int seen = 0;
		for (size_t i = 0; i < seq->nr_samples; i++) {
			const pf_node *n = &seq->nodes[seq->samples[i].stack];
			uint64_t ip = seq->locs[n->loc].ip;
			if (ip != X && ip != Y && ip != Z)
				continue;
			bool user = n->parent && seq->locs[seq->nodes[n->parent].loc].ip == G;
			assert_int_equal(pf_sample_level(seq, i), user ? '.' : 'k');
			assert_int_equal(pf_sample_level(split, i), user ? '.' : 'k');
			seen++;
		}
		assert_int_equal(seen, 6);
		pf_profile_free(seq);
		pf_profile_free(split);
	}
}

/* pf_locs_srclines (a binary at a time, each one's DWARF released after
 * it) makes the wanted locations' srclines, and only those, the strings
 * pf_loc_srcline makes one by one in the locations' order; the released
 * binaries answer later queries the same. */
static void test_locs_srclines(void **state)
{
	(void)state;
	if (!g_have_perf)
		skip();
	pf_load_opts o;
	pf_load_opts_init(&o);
	pf_profile *one = load(&o), *grouped = load(&o);
	assert_true(one->nr_locs > 100 && one->nr_dsos > 3);
	for (size_t i = 0; i < one->nr_locs; i++)
		pf_loc_srcline(one, (uint32_t)i);
	uint8_t *want = calloc(grouped->nr_locs, 1);
	assert_non_null(want);
	for (size_t i = 0; i < grouped->nr_locs; i += 3)
		want[i] = 1;
	assert_int_equal(pf_locs_srclines(grouped, want), 0);
	for (size_t i = 0; i < grouped->nr_locs; i++) {
		if (!want[i]) {
			assert_int_equal(grouped->locs[i].srcline, PF_NONE);
			continue;
		}
		assert_int_not_equal(grouped->locs[i].srcline, PF_NONE);
		assert_string_equal(pf_str(grouped, grouped->locs[i].srcline), pf_str(one, one->locs[i].srcline));
	}
	/* the rest, then each once more (cached), after the releases */
	assert_int_equal(pf_locs_srclines(grouped, NULL), 0);
	for (size_t i = 0; i < grouped->nr_locs; i++)
		assert_string_equal(pf_loc_srcline(grouped, (uint32_t)i), pf_str(one, one->locs[i].srcline));
	/* a location not made yet, made after its binary's release */
	pf_profile *late = load(&o);
	memset(want, 0, late->nr_locs);
	want[0] = 1;
	assert_int_equal(pf_locs_srclines(late, want), 0);
	for (size_t i = late->nr_locs; i-- > 0;)
		assert_string_equal(pf_loc_srcline(late, (uint32_t)i), pf_str(one, one->locs[i].srcline));
	free(want);
	pf_profile_free(one);
	pf_profile_free(grouped);
	pf_profile_free(late);
}

static void test_split_callchains(void **state) { (void)state; check(false, NULL, true); }
static void test_split_no_callchains(void **state) { (void)state; check(false, NULL, false); }
static void test_split_merged(void **state) { (void)state; check(true, NULL, true); }
static void test_split_merged_ip(void **state) { (void)state; check(true, NULL, false); }
static void test_split_time(void **state) { (void)state; check(false, "20%-70%", true); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_split_callchains),
		cmocka_unit_test(test_split_no_callchains),
		cmocka_unit_test(test_split_merged),
		cmocka_unit_test(test_split_merged_ip),
		cmocka_unit_test(test_split_time),
		cmocka_unit_test(test_order_early),
		cmocka_unit_test(test_split_late_sample),
		cmocka_unit_test(test_split_levels),
		cmocka_unit_test(test_stack_cache_flush),
		cmocka_unit_test(test_split_inlines),
		cmocka_unit_test(test_merge_by_comm),
		cmocka_unit_test(test_merged_ip_sums),
		cmocka_unit_test(test_locs_srclines),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
