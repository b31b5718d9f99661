/* keyrows.c — a profile's rows for a set of sort keys, computed once when
 * it is pushed: the "key rows" a store keeps beside its samples so that the
 * common queries read a few hundred summed rows per profile instead of
 * walking every frame of every stack (docs/fleet.md, "Key rows").
 *
 * A key set is the set of sort keys a query groups by (the order of keys
 * does not change the sums): comm, dso (short or long name), sym (by name,
 * a dso's unresolved addresses in one row, or with each unresolved address
 * a row of its own) and srcline. For one profile and key set the rows are
 * exactly what a query aggregates from the samples (store_result_add_prof):
 * Self of each sample's leaf, Children once per distinct key of its stack,
 * the leaf's sample count, the level of the frame that made the row first
 * (samples in their stored order, frames leaf first) and the lowest
 * unresolved address, and those two of the samples' own frames alone (a
 * report or diff without Children makes rows of those only). By address, an unresolved frame's row is keyed as
 * the files' reports key it: a sample's own row by the frame's map address,
 * a callchain entry's row (the leaf's too) by its absolute address. Rows
 * come out in the order they were first met.
 */
#include <stdlib.h>
#include <string.h>

#include "store-int.h"

/* the key sets stored: perf diff's default (dso,sym), -s sym, and perf
 * report's default (comm,dso,sym with unresolved addresses apart) */
const int store_keysets[STORE_NR_KEYSETS] = {
	KS_DSO | KS_SYM,
	KS_SYM,
	KS_COMM | KS_DSO | KS_SYM | KS_SYM_ADDR,
};

int store_keyset_of(const store_query *q)
{
	int ks = 0;
	for (int k = 0; k < q->nkeys; k++) {
		switch (q->keys[k]) {
		case HK_COMM: ks |= KS_COMM; break;
		case HK_DSO: ks |= q->verbose ? KS_DSO_LONG : KS_DSO; break;
		case HK_SYM: ks |= q->by_addr ? KS_SYM | KS_SYM_ADDR : KS_SYM; break;
		case HK_SRCLINE: ks |= KS_SRC; break;
		default: return -1;            /* label:NAME: not a key set stored */
		}
	}
	for (int i = 0; i < STORE_NR_KEYSETS; i++)
		if (store_keysets[i] == ks)
			return ks;
	return -1;
}

/* a row's key: string ids (0: not a key) and, by address, the address */
typedef struct rkey {
	uint32_t event, comm, dso, sym, src;
	uint64_t addr;
} rkey;

static uint64_t rkey_hash(const rkey *k)
{
	uint64_t h = pf_hash64(((uint64_t)k->event << 32) | k->comm);
	h = pf_hash64(h ^ (((uint64_t)k->dso << 32) | k->sym));
	h = pf_hash64(h ^ k->src);
	return pf_hash64(h ^ k->addr) | 1;
}

int store_keyrows(const store_prof *sp, int ks, store_keyrow **out, size_t *nout)
{
	*out = NULL;
	*nout = 0;
	store_keyrow *rows = NULL;
	size_t n = 0, cap = 0;
	uint32_t *next = NULL, *stamp = NULL;     /* [cap] hash chain, last sample counted */
	size_t cap_aux = 0;
	pf_map64 map;                             /* key hash -> first row of the chain */
	pf_map64 fr;                              /* event, comm, frame -> row + 1 */
	pf_map64_init(&map);
	pf_map64_init(&fr);
	int rc = -1;
	for (size_t si = 0; si < sp->nr_samples; si++) {
		const store_sample *s = &sp->samples[si];
		const store_stack *st = &sp->stacks[s->stack];
		uint32_t sample_no = (uint32_t)si + 1;
		/* visit 0: the leaf's own row; visit v: callchain entry v - 1 */
		for (uint32_t v = 0; v <= st->n; v++) {
			uint32_t i = v ? v - 1 : 0;
			uint32_t f = sp->stack_frames[st->first + i];
			const store_frame *fm = &sp->frames[f];
			bool by_addr = (ks & KS_SYM_ADDR) && !fm->sym, chain = v > 0;
			if (v == 1 && !(by_addr && fm->ip != fm->addr))
				continue;       /* the leaf's callchain row is its own row */
			bool found;
			uint64_t fk = ((uint64_t)s->event << 56) ^ ((uint64_t)s->comm << 28) ^ ((uint64_t)f << 1 | chain);
			/* (event < 256, comm and frame ids < 2^27 in practice; the
			 * frame map is only a cache: a collision is checked below) */
			uint64_t *slot = pf_map64_upsert(&fr, fk, &found);
			if (!slot)
				goto out;
			size_t row = 0;
			rkey k = { s->event, ks & KS_COMM ? s->comm : 0,
				   ks & KS_DSO ? fm->dso : ks & KS_DSO_LONG ? fm->dso_long : 0,
				   ks & KS_SYM ? fm->sym : 0, ks & KS_SRC ? fm->srcline : 0,
				   by_addr ? (chain ? fm->ip : fm->addr) : 0 };
			bool have = false;
			if (found) {
				row = *slot - 1;
				const store_keyrow *r = &rows[row];
				have = r->event == k.event && r->comm == k.comm && r->dso == k.dso && r->sym == k.sym &&
				       r->srcline == k.src && (!(ks & KS_SYM_ADDR) || r->sym || r->addr == k.addr);
			}
			if (!have) {
				uint64_t h = rkey_hash(&k);
				bool hf;
				uint64_t *hs = pf_map64_upsert(&map, h, &hf);
				if (!hs)
					goto out;
				if (hf)
					for (uint32_t j = (uint32_t)*hs; j != PF_NONE && !have; j = next[j]) {
						const store_keyrow *r = &rows[j];
						if (r->event == k.event && r->comm == k.comm && r->dso == k.dso && r->sym == k.sym &&
						    r->srcline == k.src && (!(ks & KS_SYM_ADDR) || r->sym || r->addr == k.addr)) {
							row = j;
							have = true;
						}
					}
				if (!have) {
					if (PF_GROW(rows, cap, n + 1))
						goto out;
					if (n + 1 > cap_aux) {
						size_t nc = cap_aux ? 2 * cap_aux : 256;
						uint32_t *a = pf_realloc_array(next, nc, sizeof(uint32_t));
						if (!a)
							goto out;
						next = a;
						if (!(a = pf_realloc_array(stamp, nc, sizeof(uint32_t))))
							goto out;
						stamp = a;
						cap_aux = nc;
					}
					row = n++;
					rows[row] = (store_keyrow){ .event = k.event, .comm = k.comm, .dso = k.dso, .sym = k.sym,
								    .srcline = k.src, .addr = by_addr ? k.addr : UINT64_MAX,
								    .level = fm->level ? fm->level : '.',
								    .self_addr = UINT64_MAX };
					next[row] = hf ? (uint32_t)*hs : PF_NONE;
					stamp[row] = 0;
					*hs = row;
				}
				/* the frame map may have moved: look the slot up again */
				slot = pf_map64_upsert(&fr, fk, &found);
				if (!slot)
					goto out;
				*slot = row + 1;
			}
			store_keyrow *r = &rows[row];
			if (!fm->sym && !(ks & KS_SYM_ADDR) && fm->addr < r->addr)
				r->addr = fm->addr;
			if (v == 0) {
				r->self += s->period;
				r->count += s->count;
				if (!r->self_level)
					r->self_level = fm->level ? fm->level : '.';
				uint64_t a = by_addr ? k.addr : fm->addr;
				if (!fm->sym && a < r->self_addr)
					r->self_addr = a;
			}
			if (stamp[row] != sample_no) {
				stamp[row] = sample_no;
				r->acc += s->period;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (rows[i].addr == UINT64_MAX)
			rows[i].addr = 0;
		if (rows[i].self_addr == UINT64_MAX)
			rows[i].self_addr = 0;
	}
	*out = rows;
	*nout = n;
	rows = NULL;
	rc = 0;
out:
	free(rows);
	free(next);
	free(stamp);
	pf_map64_free(&map);
	pf_map64_free(&fr);
	return rc;
}
