/* profile-split.c — one large perf.data file read in two halves on two
 * threads (pf_load_opts.split_load), and the second half merged into the
 * first so the profile is the one a sequential read makes: the profile
 * loader's engine for speed, apart from what it computes (profile.c).
 */
#include "proff/profile.h"
#include "proff/perfdata.h"
#include "proff/unwind.h"

#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <stdatomic.h>
#include <unistd.h>

#include "profile-int.h"

/* A large file is read by two threads, both readers delivering the same
 * records in the same (time) order: the first aggregates the samples
 * delivered before the first one at or after a time T and stops there; the
 * second replays every side-band record from the start (and the first
 * half's samples only as far as they create threads) and aggregates every
 * record from that sample on. So the first half is exactly the start of a
 * sequential read and the second half's state at the split point is the
 * sequential state (a late sample of an earlier time still counts once,
 * in the second half). The halves share
 * the symbolizer; the second is then merged into the first in its own
 * order of first occurrence, which gives the same strings, dsos, symbols,
 * locations, nodes and samples, in the same order, as one sequential read
 * (tests/unit/test_profile_split.c checks it). */
#define SPLIT_MIN_BYTES ((uint64_t)16 << 20)
/* The first half's share of a dwarf profile's bytes: the second half also
 * passes over the first's records (looking at their headers only:
 * pd_set_sample_peek), so it gets less. On bench/dwarf.sh's profile the
 * report took (medians of 21 runs, --no-children) 85 ms at 0.5 and 0.53,
 * 82-83 ms at 0.55 and 0.58. */
#define SPLIT_UNWIND_FRACTION 0.55

bool prof_split_time(const pf_profile *p, pd_reader *rd, uint64_t *t)
{
	const struct pf_profile_priv *pr = p->priv;
	uint64_t min = pr->opts.split_min_bytes ? pr->opts.split_min_bytes : SPLIT_MIN_BYTES;
	if (!pr->opts.split_load || pr->opts.branch_mode || pr->opts.branch_history || pd_data_size(rd) < min || sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return false;
	for (size_t i = 0; i < p->nr_events; i++)
		if (!(p->events[i].sample_type & PD_S_TIME))
			return false;
	const pd_header *hdr = pd_get_header(rd);
	uint64_t first = hdr->sample_time_first, last = hdr->sample_time_last;
	if (!first || last <= first + 1)
		return false;
	*t = first + (last - first) / 2;
	/* Samples unwound from their stack copies (--call-graph dwarf) cost
	 * far more than reading a record, and are not spread evenly over the
	 * recording's time (bursts of lost records, threads ending): their
	 * halves are cut by bytes instead, at the time of a sample about
	 * there. The second half reads the first's records too (their
	 * headers, and the side-band ones in full): it gets less. */
	bool unwinds = false;
	for (size_t i = 0; i < pd_nr_attrs(rd); i++)
		unwinds |= uw_event_wants(pd_get_attr(rd, i));
	uint64_t tb;
	if (unwinds && pd_sample_time_near(rd, SPLIT_UNWIND_FRACTION, &tb) && tb > first && tb < last)
		*t = tb;
	return true;
}

/* Half 2's look at a sample as it is read (pd_set_sample_peek): before the
 * split point a sample only makes its thread, if none of that (pid, tid)
 * is there yet (sample_arrive), so one whose thread is known needs neither
 * the ordered queue nor decoding. Every sample read before the first one
 * at or after split_t is delivered before any of those (the queue delivers
 * in time order what it holds), so all of them are the prefix's. A thread
 * made by a record still queued is not known yet: that sample goes through. */
static bool prefix_peek(void *ctx, uint64_t time, uint32_t pid, uint32_t tid)
{
	pf_profile *q = ctx;
	struct pf_profile_priv *pr = q->priv;
	if (pr->split_read)
		return false;
	if (time >= pr->split_t) {
		pr->split_read = true;
		return false;
	}
	uint64_t v;
	for (int i = 0; i < 2; i++)
		if (pr->m.last_thread[i] != PF_NONE && pr->m.last_tid[i] == tid)
			return pr->m.threads[pr->m.last_thread[i]].pid == pid || pid == (uint32_t)-1;
	return pf_map64_get(&pr->m.tid2thread, tid, &v) && (pr->m.threads[v].pid == pid || pid == (uint32_t)-1);
}

typedef struct half_job {
	pf_profile *q;
	pd_reader *rd;
	proff_error err;
	int rc;
	atomic_int finished;        /* halves done reading */
} half_job;

/* Called by each half when it has read its part: the first one, while the
 * other reads on, opens the DWARF of the binaries its locations are in and
 * looks up their inlined frames, which the expansion after the load
 * (pf_profile_expand_inlines, a step on one thread) then finds answered
 * (inflating libc's compressed debug file and the look-ups were 0.13 s of
 * bench/dwarf.sh's report after its load). */
static void half_done(half_job *j, const pf_profile *p, int rc)
{
	const struct pf_profile_priv *pr = p->priv;
	if (atomic_fetch_add(&j->finished, 1) != 0 || rc != 0 || !pr->opts.inline_frames ||
	    !pr->opts.use_callchain)
		return;
	/* the expansion's own condition: chains proff unwinds (dwarf) only */
	bool dwarf = false;
	for (size_t i = 0; i < p->nr_events; i++)
		dwarf |= (p->events[i].sample_type & PD_S_STACK_USER) != 0;
	if (!dwarf)
		return;
	bool *seen = calloc(p->nr_dsos ? p->nr_dsos : 1, sizeof(*seen));
	if (!seen)
		return;
	for (size_t i = 0; i < p->nr_locs; i++) {
		const pf_loc *l = &p->locs[i];
		if (l->sym == PF_NONE || l->dso == PF_NONE || l->dso >= p->nr_dsos || !p->dsos[l->dso].sd)
			continue;
		if (!seen[l->dso])
			sym_dso_prepare_inlines(p->dsos[l->dso].sd);
		seen[l->dso] = true;
		/* the dso keeps the answer for the expansion */
		sym_inline_frame fr[1];
		sym_inlines(p->dsos[l->dso].sd, l->addr, fr, 1);
	}
	free(seen);
}


static void *second_half(void *arg)
{
	half_job *j = arg;
	j->q->priv->err = &j->err;
	j->rc = prof_finish_read(j->q, pd_process(j->rd, true, prof_on_event, j->q, &j->err));
	half_done(j, j->q, j->rc);
	/* the merge needs the arrays and the thread list, nothing else */
	prof_release_read_state(j->q->priv);
	prof_release_tables(j->q->priv);
	return NULL;
}

/* A sample of q whose stack is new to p (created by the merge): no sample
 * of p has it, and q's samples are distinct keys, so it is new — no chain
 * to search, none to keep (the merge is the last lookup). 1, or -1. */
static int sample_append(pf_profile *p, const pf_sample *k)
{
	struct pf_profile_priv *pr = p->priv;
	size_t cap = p->cap_samples;
	if (PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1) < 0 ||
	    PF_GROW(pr->sample_next, cap, p->nr_samples + 1) < 0)
		return -1;
	pr->sample_next[p->nr_samples] = PF_NONE;
	p->samples[p->nr_samples++] = *k;
	return 1;
}

/* Sum a sample of q (key already in p's ids) into p: 0 summed into one of
 * p's, 1 a new sample, -1 out of memory; *at: p's sample. */
static int sample_import(pf_profile *p, const pf_sample *k, uint32_t *at)
{
	struct pf_profile_priv *pr = p->priv;
	if (k->stack >= pr->cap_node_sample) {
		size_t old = pr->cap_node_sample;
		if (PF_GROW(pr->node_sample, pr->cap_node_sample, (size_t)k->stack + 1) < 0)
			return -1;
		memset(pr->node_sample + old, 0xff, (pr->cap_node_sample - old) * sizeof(uint32_t));
	}
	for (uint32_t id = pr->node_sample[k->stack]; id != PF_NONE; id = pr->sample_next[id]) {
		pf_sample *s = &p->samples[id];
		if (same_key(pr, s, k->evsel, k->pid, k->tid, k->comm, k->cpu, k->thread) &&
		    (uint64_t)s->count + k->count <= UINT32_MAX) {
			s->period += k->period;
			s->count += k->count;
			*at = id;
			return 0;
		}
	}
	if (sample_append(p, k) < 0)
		return -1;
	uint32_t id = (uint32_t)(p->nr_samples - 1);
	*at = id;
	pr->sample_next[id] = pr->node_sample[k->stack];
	pr->node_sample[k->stack] = id;
	return 1;
}

/* Room in p for so many more locations, nodes, samples and raw samples,
 * at once (growing by doubling would copy p's arrays again), and in its
 * location table for as many more keys: the merge then fetches the slots a
 * few locations ahead (each lookup is a cache miss, one after another). */
static int merge_room(pf_profile *p, size_t locs, size_t nodes, size_t samples, size_t seq)
{
	struct pf_profile_priv *pr = p->priv;
	size_t cap_next = p->cap_samples;
	if (PF_GROW(p->locs, p->cap_locs, p->nr_locs + locs) < 0 ||
	    PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + nodes) < 0 ||
	    PF_GROW(p->samples, p->cap_samples, p->nr_samples + samples) < 0 ||
	    PF_GROW(pr->sample_next, cap_next, p->nr_samples + samples) < 0 ||
	    (seq && PF_GROW(p->seq, p->cap_seq, p->nr_seq + seq) < 0))
		return -1;
	while ((pr->loc_tab.len + locs + 1) * 4 > pr->loc_tab.cap * 3)
		if (pair_table_rehash(&pr->loc_tab, pr->loc_tab.cap ? pr->loc_tab.cap * 2 : 256) < 0)
			return -1;
	return 0;
}

/* merge_half's stages after the strings, dsos and symbols: q's locations,
 * nodes, samples and raw samples' order into p, each stage mapping q's ids
 * to p's. A node's location was made before it, a sample's node before
 * it, and a raw sample's aggregate before it, so each stage can follow the
 * one it reads a step behind: with two threads the nodes and the raw
 * samples' order go to the second (merge_second), which waits only for a
 * location or a sample not mapped yet. Neither touches what the other
 * writes: locations and their table here, nodes, their table and the
 * nochain flags there; the samples read nodes that were published (the
 * arrays' room was made first, so nothing moves). On the bench profile:
 * about 10, 11, 7 and 4 ms one after another. */
#define MERGE_TWO_MIN 65536    /* q's nodes: below, one thread (pf_load_opts.split_merge_min) */
typedef struct merge_job {
	pf_profile *p, *q;
	uint32_t *smap, *dmap, *ymap;   /* q's string, dso, symbol -> p's */
	uint32_t *lmap, *nmap, *qsid;   /* q's location, node, sample -> p's */
	uint8_t *lchg, *nchg;           /* their level changed in the merge */
	size_t p_locs, p_nodes;         /* p's before the merge */
	atomic_size_t locs_done, nodes_done, samples_done;   /* q's mapped (release) */
	atomic_int failed;
	int rc;                         /* the second thread's */
} merge_job;

enum { MERGE_AHEAD = 8 };

static int merge_locs(merge_job *mj)
{
	pf_profile *p = mj->p, *q = mj->q;
	struct pf_profile_priv *pr = p->priv;
	for (size_t i = 0; i < q->nr_locs; i++) {
		if (i + MERGE_AHEAD < q->nr_locs) {
			const pf_loc *la = &q->locs[i + MERGE_AHEAD];
			uint32_t da = la->dso == PF_NONE ? PF_NONE : mj->dmap[la->dso];
			__builtin_prefetch(&pr->loc_tab.s[pair_hash(da, la->addr) & (pr->loc_tab.cap - 1)]);
		}
		const pf_loc *l = &q->locs[i];
		uint32_t dso = l->dso == PF_NONE ? PF_NONE : mj->dmap[l->dso];
		uint32_t sym = l->sym == PF_NONE ? PF_NONE : mj->ymap[l->sym];
		if ((mj->lmap[i] = prof_loc_intern(p, dso, l->addr, l->ip, l->level, false, sym)) == PF_NONE)
			return -1;
		mj->lchg[i] = p->locs[mj->lmap[i]].level != l->level;
		if ((i & 63) == 63)
			atomic_store_explicit(&mj->locs_done, i + 1, memory_order_release);
	}
	atomic_store_explicit(&mj->locs_done, q->nr_locs, memory_order_release);
	return 0;
}

/* A node whose parent or location the merge created is new to p (the
 * mapping of q's nodes is one-to-one): appended without a lookup, and
 * none of its descendants is ever looked up either. */
static int merge_nodes(merge_job *mj)
{
	pf_profile *p = mj->p, *q = mj->q;
	struct pf_profile_priv *pr = p->priv;
	const uint32_t *lmap = mj->lmap, *nmap = mj->nmap;
	size_t p_locs = mj->p_locs, p_nodes = mj->p_nodes;
	size_t ld = atomic_load_explicit(&mj->locs_done, memory_order_acquire);
	mj->nmap[0] = 0;
	for (size_t i = 1; i < q->nr_nodes; i++) {
		if (i + MERGE_AHEAD < q->nr_nodes) {
			/* an existing node's slot, when its parent is mapped */
			const pf_node *na = &q->nodes[i + MERGE_AHEAD];
			if (na->parent < i && na->loc < ld && nmap[na->parent] < p_nodes && lmap[na->loc] < p_locs)
				trie_prefetch(pr, trie_hash(nmap[na->parent] ? pr->phash[nmap[na->parent]] : 0,
							    lmap[na->loc]));
		}
		const pf_node *n = &q->nodes[i];
		if (n->loc >= ld && !(ld = pf_wait_past(&mj->locs_done, n->loc, &mj->failed)))
			return -1;
		uint32_t par = nmap[n->parent], loc = lmap[n->loc], id;
		if (pf_node_nochain(q, (uint32_t)i)) {
			id = prof_nochain_node(p, loc);
		} else if (par >= p_nodes || loc >= p_locs) {
			/* room made by merge_room, one node per q's: the array must
			 * not move while the other thread reads it */
			if (p->nr_nodes >= p->cap_nodes)
				return -1;
			id = (uint32_t)p->nr_nodes;
			p->nodes[p->nr_nodes++] = (pf_node){ par, loc, p->nodes[par].depth + 1 };
		} else {
			id = prof_node_child(p, par, loc);
		}
		if (id == PF_NONE)
			return -1;
		mj->nmap[i] = id;
		mj->nchg[i] = mj->lchg[n->loc];
		if ((i & 63) == 63)
			atomic_store_explicit(&mj->nodes_done, i + 1, memory_order_release);
	}
	atomic_store_explicit(&mj->nodes_done, q->nr_nodes ? q->nr_nodes : 1, memory_order_release);
	return 0;
}

static int merge_samples(merge_job *mj, size_t *qn_io)
{
	pf_profile *p = mj->p, *q = mj->q;
	struct pf_profile_priv *pr = p->priv;
	const uint32_t *nmap = mj->nmap;
	size_t p_nodes = mj->p_nodes, qn = *qn_io;
	size_t nd = atomic_load_explicit(&mj->nodes_done, memory_order_acquire);
	for (size_t i = 0; i < q->nr_samples; i++) {
		if (i + MERGE_AHEAD < q->nr_samples) {
			uint32_t qa = q->samples[i + MERGE_AHEAD].stack;
			uint32_t sa = qa < nd ? nmap[qa] : PF_NONE;
			if (sa < p_nodes && sa < pr->cap_node_sample)
				__builtin_prefetch(&pr->node_sample[sa]);
		}
		uint32_t qstack = q->samples[i].stack;
		if (qstack >= nd && !(nd = pf_wait_past(&mj->nodes_done, qstack, &mj->failed)))
			return -1;
		pf_sample k = q->samples[i];
		k.comm = mj->smap[k.comm];
		k.stack = nmap[qstack];
		uint32_t at = (uint32_t)p->nr_samples;
		int fresh = k.stack >= p_nodes ? sample_append(p, &k) : sample_import(p, &k, &at);
		if (fresh < 0)
			return -1;
		if (mj->qsid)
			mj->qsid[i] = at;
		bool noted = qn < q->nr_level_notes && q->level_notes[qn].sample == i;
		if (fresh && (noted || mj->nchg[qstack])) {
			char lv = noted ? q->level_notes[qn].level : q->locs[q->nodes[qstack].loc].level;
			if (lv != p->locs[p->nodes[k.stack].loc].level &&
			    prof_add_note(&p->level_notes, &p->nr_level_notes, &p->cap_level_notes,
				     (uint32_t)(p->nr_samples - 1), lv) < 0)
				return -1;
		}
		qn += noted;
		if ((i & 63) == 63)
			atomic_store_explicit(&mj->samples_done, i + 1, memory_order_release);
	}
	atomic_store_explicit(&mj->samples_done, q->nr_samples ? q->nr_samples : 1, memory_order_release);
	*qn_io = qn;
	return 0;
}

/* the raw samples' order: the second half's after the first's (room
 * made by merge_room) */
static int merge_seq(merge_job *mj)
{
	pf_profile *p = mj->p, *q = mj->q;
	size_t sd = atomic_load_explicit(&mj->samples_done, memory_order_acquire), b = 0;
	for (size_t i = 0; i < q->nr_seq; i++) {
		uint32_t qs = q->seq[i].sample;
		if (qs >= sd && !(sd = pf_wait_past(&mj->samples_done, qs, &mj->failed)))
			return -1;
		uint64_t period = q->seq[i].period;
		if (period == PF_SEQ_BIG)
			period = q->seq_big[b++].period;   /* q's in order */
		if (pf_seq_push(p, mj->qsid[qs], q->seq[i].thread, period) < 0)
			return -1;
	}
	return 0;
}

static void *merge_second(void *arg)
{
	merge_job *mj = arg;
	mj->rc = merge_nodes(mj);
	if (mj->rc == 0)
		mj->rc = merge_seq(mj);
	if (mj->rc < 0)
		atomic_store_explicit(&mj->failed, 1, memory_order_relaxed);
	return NULL;
}

static int merge_half(pf_profile *p, pf_profile *q)
{
	struct pf_profile_priv *pr = p->priv, *qr = q->priv;
	int rc = -1;
	uint32_t *smap = malloc((q->strs.n + 1) * sizeof(uint32_t));
	uint32_t *dmap = malloc((q->nr_dsos + 1) * sizeof(uint32_t));
	uint32_t *ymap = malloc((q->nr_syms + 1) * sizeof(uint32_t));
	uint32_t *lmap = malloc((q->nr_locs + 1) * sizeof(uint32_t));
	uint32_t *nmap = malloc((q->nr_nodes + 1) * sizeof(uint32_t));
	/* locations (and leaf nodes) whose level the merge changed: a location
	 * without a map met in both halves keeps the first half's */
	uint8_t *lchg = calloc(q->nr_locs + 1, 1), *nchg = calloc(q->nr_nodes + 1, 1);
	uint32_t *qsid = q->nr_seq ? malloc(q->nr_samples * sizeof(uint32_t)) : NULL;   /* p's sample of q's */
	size_t qn = 0;    /* q's level notes passed */
	if (!smap || !dmap || !ymap || !lmap || !nmap || !lchg || !nchg || (q->nr_seq && !qsid))
		goto out;
	for (size_t i = 0; i < q->strs.n; i++) {
		int64_t id = pf_strtab_intern(&p->strs, q->strs.strs[i], q->strs.lens[i]);
		if (id < 0)
			goto out;
		smap[i] = (uint32_t)id;
	}
	for (size_t i = 0; i < q->nr_dsos; i++) {
		const pf_dso *d = &q->dsos[i];
		uint64_t v;
		if (pf_map64_get(&pr->m.name2dso, smap[d->long_name], &v)) {
			dmap[i] = (uint32_t)v;
			if (!p->dsos[v].map_size)          /* mapped first in the second half */
				p->dsos[v].map_size = d->map_size;
			if (!p->dsos[v].has_kmod_start) {
				p->dsos[v].kmod_start = d->kmod_start;
				p->dsos[v].has_kmod_start = d->has_kmod_start;
			}
			continue;
		}
		uint64_t *slot = pf_map64_upsert(&pr->m.name2dso, smap[d->long_name], NULL);
		if (!slot || PF_GROW(p->dsos, p->cap_dsos, p->nr_dsos + 1) < 0)
			goto out;
		pf_dso *n = &p->dsos[p->nr_dsos];
		*n = *d;
		n->long_name = smap[d->long_name];
		n->short_name = smap[d->short_name];
		*slot = p->nr_dsos;
		dmap[i] = (uint32_t)p->nr_dsos++;
	}
	for (size_t i = 0; i < q->nr_syms; i++) {
		const pf_sym *y = &q->syms[i];
		int inserted;
		uint32_t *ss = pair_table_find(&pr->sym_tab, dmap[y->dso], y->start, 1, &inserted);
		if (!ss)
			goto out;
		if (inserted) {
			if (PF_GROW(p->syms, p->cap_syms, p->nr_syms + 1) < 0)
				goto out;
			p->syms[p->nr_syms] = (pf_sym){ dmap[y->dso], smap[y->name], y->start, y->end };
			*ss = (uint32_t)p->nr_syms++;
		}
		ymap[i] = *ss;
	}
	/* room for all of q at once (merge_room; mostly made already by
	 * merge_room_early) */
	if (merge_room(p, q->nr_locs, q->nr_nodes, q->nr_samples, q->nr_seq) < 0)
		goto out;
	merge_job mj = { .p = p, .q = q, .smap = smap, .dmap = dmap, .ymap = ymap, .lmap = lmap, .nmap = nmap,
			 .qsid = qsid, .lchg = lchg, .nchg = nchg, .p_locs = p->nr_locs, .p_nodes = p->nr_nodes };
	/* the nodes and the raw samples' order on another thread, each a step
	 * behind the locations and the samples made here */
	pthread_t th;
	size_t two_min = pr->opts.split_merge_min ? pr->opts.split_merge_min : MERGE_TWO_MIN;
	bool two = q->nr_nodes >= two_min && pthread_create(&th, NULL, merge_second, &mj) == 0;
	int mrc = merge_locs(&mj);
	if (mrc == 0 && !two)
		mrc = merge_nodes(&mj);
	if (mrc == 0)
		mrc = merge_samples(&mj, &qn);
	if (mrc == 0 && !two)
		mrc = merge_seq(&mj);
	if (mrc < 0)
		atomic_store_explicit(&mj.failed, 1, memory_order_relaxed);
	if (two)
		pthread_join(th, NULL);
	if (mrc < 0 || mj.rc < 0)
		goto out;
	/* the second half replayed every thread: its list is the whole file's */
	free(pr->m.threads);
	pr->m.threads = qr->m.threads;
	pr->m.nthreads = qr->m.nthreads;
	pr->m.capthreads = qr->m.capthreads;
	qr->m.threads = NULL;
	qr->m.nthreads = qr->m.capthreads = 0;
	for (size_t i = 0; i < pr->m.nthreads; i++)
		pr->m.threads[i].comm = smap[pr->m.threads[i].comm];
	for (size_t i = 0; i < p->nr_events && i < q->nr_events; i++) {
		p->events[i].total_period += q->events[i].total_period;
		p->events[i].nr_samples += q->events[i].nr_samples;
	}
	p->nr_lost_samples += q->nr_lost_samples;
	if (q->first_time && (!p->first_time || q->first_time < p->first_time))
		p->first_time = q->first_time;
	if (q->last_time > p->last_time)
		p->last_time = q->last_time;
	rc = 0;
out:
	free(smap);
	free(dmap);
	free(ymap);
	free(lmap);
	free(nmap);
	free(lchg);
	free(nchg);
	free(qsid);
	return rc < 0 ? prof_oom(p) : 0;
}

/* The first half read, the second maybe still reading: room for a second
 * half about as large as the first (the split parts the samples' time at
 * its middle), made while waiting — the merge (merge_half) then finds the
 * arrays grown and the location table's slots ready instead of copying
 * and rehashing them after the join (on the bench profile 15-60 ms of a
 * 35-70 ms merge, when the first half ends first). */
static int merge_room_early(pf_profile *p)
{
	return merge_room(p, p->nr_locs, p->nr_nodes, p->nr_samples, p->nr_seq);
}

int prof_load_split(pf_profile *p, pd_reader *rd, uint64_t t, proff_error *err)
{
	struct pf_profile_priv *pr = p->priv;
	half_job j = { 0 };
	int rc = prof_new(p->path, &pr->opts, &j.q, err);
	if (rc < 0)
		return rc;
	pf_profile *q = j.q;
	struct pf_profile_priv *qr = q->priv;
	qr->err = &j.err;
	if (pr->nranges) {
		qr->ranges = malloc(pr->nranges * sizeof(*qr->ranges));
		if (!qr->ranges) {
			rc = prof_oom(p);
			goto out;
		}
		memcpy(qr->ranges, pr->ranges, pr->nranges * sizeof(*qr->ranges));
		qr->nranges = pr->nranges;
	}
	if ((rc = pd_open(p->path, &j.rd, err)) < 0)
		goto out;
	if ((rc = prof_perf_setup(q, j.rd)) < 0) {
		*err = j.err;
		goto out;
	}
	q->syms_ctx = p->syms_ctx;      /* shared (thread-safe) */
	pd_set_sample_peek(j.rd, prefix_peek, q);
	pr->split_role = 1;
	qr->split_role = 2;
	pr->split_t = qr->split_t = t;
	pthread_t th;
	if (pthread_create(&th, NULL, second_half, &j) != 0) {
		/* no thread: read it all here */
		pr->split_role = 0;
		rc = prof_finish_read(p, pd_process(rd, true, prof_on_event, p, err));
		prof_take_warnings(p, rd);
		goto out;
	}
	rc = prof_finish_read(p, pd_process(rd, true, prof_on_event, p, err));
	half_done(&j, p, rc);
	prof_release_read_state(pr);   /* the merge looks up in the tables only */
	if (rc == 0 && merge_room_early(p) < 0)
		rc = prof_oom(p);
	pthread_join(th, NULL);
	prof_take_warnings(p, j.rd);   /* the second reader read the whole file */
	/* the second half's unwinder counts: released with its read state */
	uw_stats_add(&pr->uw_done, &qr->uw_done);
	if (qr->uw)
		uw_stats_add(&pr->uw_done, uw_get_stats(qr->uw));
	if (rc == 0 && j.rc < 0) {
		*err = j.err;
		rc = j.rc;
	}
	if (rc == 0)
		rc = merge_half(p, q);
out:
	if (j.rd)
		pd_close(j.rd);
	q->syms_ctx = NULL;
	pf_profile_free(q);
	return rc;
}

