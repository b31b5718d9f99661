/* builder.c — profiles built from files that bring their own symbols
 * (pprof, folded stacks) into the profile model: dsos by name, symbols by
 * the reader's key, locations, the stack trie, threads with label sets and
 * samples aggregated by (thread, cpu, stack). See fmt-int.h.
 */
#include "fmt-int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fmt_oom(fmt_build *b)
{
	return proff_err_set(b->err, PROFF_ENOMEM, b->p ? b->p->path : NULL, PROFF_NO_OFFSET, "out of memory");
}

int fmt_err_at(fmt_build *b, uint64_t off, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return proff_err_set(b->err, PROFF_EFORMAT, b->p->path, off, "%s", msg);
}

int fmt_err_line(fmt_build *b, size_t line, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return proff_err_set(b->err, PROFF_EFORMAT, b->p->path, PROFF_NO_OFFSET, "line %zu: %s", line, msg);
}

void fmt_warn(fmt_build *b, const char *fmt, ...)
{
	pf_profile *p = b->p;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	char *w = malloc(strlen(p->path) + strlen(msg) + 3);
	if (!w || PF_GROW(p->warnings, b->cap_warnings, p->nr_warnings + 1) < 0) {
		free(w);
		return;
	}
	sprintf(w, "%s: %s", p->path, msg);
	p->warnings[p->nr_warnings++] = w;
}

int64_t fmt_str(fmt_build *b, const char *s, size_t len)
{
	return pf_strtab_intern(&b->p->strs, s, len);
}

/* perf's generic events by name (perf diff pairs events by type and config) */
static const struct { const char *name; uint32_t type; uint64_t config; } perf_events[] = {
	{ "cycles", 0, 0 }, { "cpu-cycles", 0, 0 }, { "instructions", 0, 1 }, { "cache-references", 0, 2 },
	{ "cache-misses", 0, 3 }, { "branch-instructions", 0, 4 }, { "branches", 0, 4 },
	{ "branch-misses", 0, 5 }, { "bus-cycles", 0, 6 }, { "stalled-cycles-frontend", 0, 7 },
	{ "stalled-cycles-backend", 0, 8 }, { "ref-cycles", 0, 9 },
	{ "cpu-clock", 1, 0 }, { "task-clock", 1, 1 }, { "page-faults", 1, 2 }, { "faults", 1, 2 },
	{ "context-switches", 1, 3 }, { "cs", 1, 3 }, { "cpu-migrations", 1, 4 }, { "migrations", 1, 4 },
	{ "minor-faults", 1, 5 }, { "major-faults", 1, 6 }, { "alignment-faults", 1, 7 },
	{ "emulation-faults", 1, 8 }, { "dummy", 1, 9 },
};

void fmt_event_kind(pf_event *e)
{
	size_t n = strcspn(e->name, ":/");
	for (size_t i = 0; i < sizeof(perf_events) / sizeof(perf_events[0]); i++)
		if (strlen(perf_events[i].name) == n && !strncmp(perf_events[i].name, e->name, n)) {
			e->type = perf_events[i].type;
			e->config = perf_events[i].config;
			return;
		}
	/* another name (pprof's "cpu", "alloc_space"; "folded"): a type no
	 * perf event has, the name's hash as its config, so that the events
	 * of two profiles pair by name */
	e->type = PF_EVENT_TYPE_NAMED;
	e->config = pf_hash_bytes(e->name, strlen(e->name), 0);
}

int fmt_build_init(fmt_build *b, const char *name, const char *event, const char *unit,
		   const pf_load_opts *opts, proff_error *err)
{
	memset(b, 0, sizeof(*b));
	b->err = err;
	b->opts = opts;
	b->last_thread = PF_NONE;
	pf_profile *p = calloc(1, sizeof(*p));
	if (!p)
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	b->p = p;
	p->path = strdup(name);
	p->events = calloc(1, sizeof(*p->events));
	if (!p->path || !p->events || pf_strtab_init(&p->strs) < 0) {
		pf_profile_free(p);
		b->p = NULL;
		return proff_err_set(err, PROFF_ENOMEM, name, PROFF_NO_OFFSET, "out of memory");
	}
	p->nr_events = 1;
	p->events[0].name = strdup(event);
	int64_t u = fmt_str(b, unit, strlen(unit));
	if (!p->events[0].name || u < 0 || PF_GROW(p->nodes, p->cap_nodes, 1) < 0 ||
	    PF_GROW(p->label_sets, b->cap_sets, 2) < 0)
		return fmt_oom(b);
	p->events[0].unit = (uint32_t)u;
	p->nodes[0] = (pf_node){ 0, PF_NONE, 0 };
	p->nr_nodes = 1;
	p->label_sets[0] = p->label_sets[1] = 0;
	p->nr_label_sets = 1;
	return 0;
}

static void build_tables_free(fmt_build *b)
{
	pf_map64_free(&b->dso_of_name);
	pair_table_free(&b->sym_tab);
	u32x2_table_free(&b->node_tab);
	pair_table_free(&b->comm_tab);
	pair_table_free(&b->thread_tab);
	pair_table_free(&b->sample_tab);
	pf_map64_free(&b->set_of_hash);
	free(b->phash);
	b->phash = NULL;
	free(b->path_locs);
	free(b->path_nodes);
	free(b->path_hash);
	b->path_locs = b->path_nodes = b->path_hash = NULL;
	b->path_len = b->cap_path = 0;
	free(b->set_next);
	b->set_next = NULL;
	free(b->base_of);
	b->base_of = NULL;
}

void fmt_build_abort(fmt_build *b)
{
	build_tables_free(b);
	pf_profile_free(b->p);
	b->p = NULL;
}

/* An array's slack handed back once it stops growing */
static void fit(void **arr, size_t *cap, size_t n, size_t esz)
{
	if (!*arr || n >= *cap)
		return;
	void *q = pf_realloc_array(*arr, n ? n : 1, esz);
	if (q) {
		*arr = q;
		*cap = n ? n : 1;
	}
}

pf_profile *fmt_build_finish(fmt_build *b)
{
	pf_profile *p = b->p;
	build_tables_free(b);
	pf_event *e = &p->events[0];
	fmt_event_kind(e);
	e->total_period = 0;
	e->nr_samples = 0;
	/* callchains: a stack of more than one frame somewhere (a profile of
	 * leaves only, as perf record without -g, has no Children) */
	e->has_callchain = false;
	for (size_t i = 0; i < p->nr_samples; i++) {
		e->total_period += p->samples[i].period;
		e->nr_samples += p->samples[i].count;
		e->has_callchain |= p->nodes[p->samples[i].stack].depth > 1;
	}
	fit((void **)&p->samples, &p->cap_samples, p->nr_samples, sizeof(*p->samples));
	fit((void **)&p->nodes, &p->cap_nodes, p->nr_nodes, sizeof(*p->nodes));
	fit((void **)&p->locs, &p->cap_locs, p->nr_locs, sizeof(*p->locs));
	fit((void **)&p->seq, &p->cap_seq, p->nr_seq, sizeof(*p->seq));
	if (p->nr_label_sets == 1 && !p->nr_labels) {
		free(p->label_sets);
		p->label_sets = NULL;
		p->nr_label_sets = 0;
		free(p->thread_labels);
		p->thread_labels = NULL;
	}
	b->p = NULL;
	return p;
}

/* ---- dsos, symbols, locations, the trie ------------------------------------------ */

static enum sym_dso_kind kind_of(const char *name)
{
	if (!strncmp(name, "[kernel.kallsyms]", 17) || !strcmp(name, "[kernel]") || !strcmp(name, "[guest.kernel.kallsyms]"))
		return SYM_DSO_KERNEL;
	if (!strcmp(name, "[vdso]") || !strcmp(name, "[vsyscall]") || !strcmp(name, "[vdso32]"))
		return SYM_DSO_VDSO;
	size_t n = strlen(name);
	if (n > 3 && !strcmp(name + n - 3, ".ko"))
		return SYM_DSO_MODULE;
	if (name[0] == '[' && name[n - 1] == ']' && strcmp(name, "[unknown]") &&
	    strcmp(name, "[heap]") && strcmp(name, "[stack]"))
		return SYM_DSO_MODULE;     /* perf's "[module]" names */
	if (name[0] == '[' || !strncmp(name, "//anon", 6) || !strncmp(name, "/memfd:", 7))
		return SYM_DSO_ANON;
	return SYM_DSO_USER;
}

uint32_t fmt_dso(fmt_build *b, const char *name, size_t len, const uint8_t *bid, size_t bid_len)
{
	pf_profile *p = b->p;
	int64_t lid = fmt_str(b, name, len);
	if (lid < 0)
		return PF_NONE;
	uint64_t v;
	if (pf_map64_get(&b->dso_of_name, (uint64_t)lid, &v))
		return (uint32_t)v;
	const char *ln = pf_str(p, (uint32_t)lid);
	const char *slash = strrchr(ln, '/');
	const char *sn = ln[0] != '[' && slash && slash[1] ? slash + 1 : ln;
	int64_t sid = fmt_str(b, sn, strlen(sn));
	if (sid < 0 || PF_GROW(p->dsos, p->cap_dsos, p->nr_dsos + 1) < 0)
		return PF_NONE;
	pf_dso *d = &p->dsos[p->nr_dsos];
	memset(d, 0, sizeof(*d));
	d->long_name = (uint32_t)lid;
	d->short_name = (uint32_t)sid;
	d->kind = kind_of(ln);
	if (bid_len > sizeof(d->build_id))
		bid_len = sizeof(d->build_id);
	if (bid_len)
		memcpy(d->build_id, bid, bid_len);
	d->build_id_size = (uint8_t)bid_len;
	uint64_t *slot = pf_map64_upsert(&b->dso_of_name, (uint64_t)lid, NULL);
	if (!slot)
		return PF_NONE;
	*slot = p->nr_dsos;
	return (uint32_t)p->nr_dsos++;
}

uint32_t fmt_sym(fmt_build *b, uint32_t dso, uint64_t key, uint32_t name, uint64_t start, uint64_t end,
		 bool *made)
{
	pf_profile *p = b->p;
	int inserted;
	uint32_t *slot = pair_table_find(&b->sym_tab, dso, key, 1, &inserted);
	if (made)
		*made = false;
	if (!slot)
		return PF_NONE;
	if (!inserted)
		return *slot;
	if (PF_GROW(p->syms, p->cap_syms, p->nr_syms + 1) < 0)
		return PF_NONE;
	p->syms[p->nr_syms] = (pf_sym){ dso, name, start, end };
	*slot = (uint32_t)p->nr_syms;
	if (made)
		*made = true;
	return (uint32_t)p->nr_syms++;
}

uint32_t fmt_loc(fmt_build *b, uint32_t dso, uint32_t sym, uint64_t addr, uint64_t ip, char level,
		 uint32_t srcline)
{
	pf_profile *p = b->p;
	if (p->nr_locs >= PF_NONE - 1 || PF_GROW(p->locs, p->cap_locs, p->nr_locs + 1) < 0)
		return PF_NONE;
	p->locs[p->nr_locs] = (pf_loc){ .addr = addr, .ip = ip, .dso = dso, .sym = sym,
					.srcline = srcline, .level = level };
	return (uint32_t)p->nr_locs++;
}

/* The trie's table is keyed by (parent, location) but hashed by the whole
 * path, as the perf.data loader's (lib/model/profile.c): a path's hashes
 * follow from its locations alone, so the slots of all its frames are
 * fetched before the first is found (a lookup is a cache miss in a table
 * of millions of nodes; with the parent's id in the hash each waited for
 * the one before). A prefix shared with the path before is not looked up
 * again. */
static inline uint32_t path_hash(uint32_t parent_hash, uint32_t loc)
{
	return (uint32_t)u32x2_hash(parent_hash, loc);
}

#define PREFETCH_AHEAD 16

uint32_t fmt_path(fmt_build *b, const uint32_t *locs, size_t n)
{
	pf_profile *p = b->p;
	if (n >= b->cap_path) {
		size_t cap = n + 1 > 2 * b->cap_path ? n + 1 : 2 * b->cap_path;
		uint32_t *l = pf_realloc_array(b->path_locs, cap, sizeof(*l));
		if (l)
			b->path_locs = l;
		uint32_t *nd = l ? pf_realloc_array(b->path_nodes, cap, sizeof(*nd)) : NULL;
		if (nd)
			b->path_nodes = nd;
		uint32_t *hs = nd ? pf_realloc_array(b->path_hash, cap, sizeof(*hs)) : NULL;
		if (!hs)
			return PF_NONE;
		b->path_hash = hs;
		b->cap_path = cap;
	}
	size_t k = 0;
	while (k < n && k < b->path_len && b->path_locs[k] == locs[k])
		k++;
	uint32_t node = k ? b->path_nodes[k - 1] : 0;
	uint32_t h = k ? b->path_hash[k - 1] : 0;
	for (size_t i = k; i < n; i++) {
		h = path_hash(h, locs[i]);
		b->path_hash[i] = h;
	}
	for (size_t i = k; i < n && i < k + PREFETCH_AHEAD; i++)
		if (b->node_tab.cap)
			__builtin_prefetch(&b->node_tab.s[b->path_hash[i] & (b->node_tab.cap - 1)], 1);
	for (size_t i = k; i < n; i++) {
		if (i + PREFETCH_AHEAD < n && b->node_tab.cap)
			__builtin_prefetch(&b->node_tab.s[b->path_hash[i + PREFETCH_AHEAD] & (b->node_tab.cap - 1)], 1);
		/* room first: every slot's node has its hash when the table grows */
		if (p->nr_nodes >= PF_NONE - 1 || PF_GROW(p->nodes, p->cap_nodes, p->nr_nodes + 1) < 0 ||
		    PF_GROW(b->phash, b->cap_phash, p->nr_nodes + 1) < 0) {
			b->path_len = 0;
			return PF_NONE;
		}
		int inserted;
		uint32_t *slot = u32x2_table_find_h(&b->node_tab, node, locs[i], b->path_hash[i], b->phash, 1, &inserted);
		if (!slot) {
			b->path_len = 0;
			return PF_NONE;
		}
		if (inserted) {
			uint32_t id = (uint32_t)p->nr_nodes++;
			p->nodes[id] = (pf_node){ node, locs[i], p->nodes[node].depth + 1 };
			b->phash[id] = b->path_hash[i];
			*slot = id;
		}
		node = *slot;
		b->path_locs[i] = locs[i];
		b->path_nodes[i] = node;
	}
	b->path_len = n;
	return node;
}

/* ---- label sets, threads, samples ---------------------------------------------------- */

static int label_cmp(const void *x, const void *y)
{
	const pf_label *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->value < b->value ? -1 : a->value > b->value;
}

uint32_t fmt_label_set(fmt_build *b, pf_label *labels, size_t n)
{
	pf_profile *p = b->p;
	if (!n)
		return 0;
	qsort(labels, n, sizeof(*labels), label_cmp);
	uint64_t h = 0x1abe1;
	for (size_t i = 0; i < n; i++)
		h = pf_hash64(h ^ ((uint64_t)labels[i].key << 32 | labels[i].value));
	uint64_t v;
	if (pf_map64_get(&b->set_of_hash, h, &v)) {
		for (uint32_t s = (uint32_t)v; s != PF_NONE; s = b->set_next[s]) {
			uint32_t at = p->label_sets[s];
			if (p->label_sets[s + 1] - at != n)
				continue;
			size_t i = 0;
			while (i < n && p->labels[at + i].key == labels[i].key && p->labels[at + i].value == labels[i].value)
				i++;
			if (i == n)
				return s;
		}
	}
	uint32_t s = (uint32_t)p->nr_label_sets;
	if (p->nr_labels + n >= PF_NONE || s >= PF_NONE - 2 ||
	    PF_GROW(p->labels, b->cap_labels, p->nr_labels + n) < 0 ||
	    PF_GROW(p->label_sets, b->cap_sets, (size_t)s + 2) < 0 ||
	    PF_GROW(b->set_next, b->cap_set_next, (size_t)s + 1) < 0)
		return PF_NONE;
	memcpy(p->labels + p->nr_labels, labels, n * sizeof(*labels));
	p->nr_labels += n;
	p->label_sets[s + 1] = (uint32_t)p->nr_labels;
	p->nr_label_sets++;
	bool found;
	uint64_t *slot = pf_map64_upsert(&b->set_of_hash, h, &found);
	if (!slot)
		return PF_NONE;
	b->set_next[s] = found ? (uint32_t)*slot : PF_NONE;
	*slot = s;
	return s;
}

static uint32_t new_thread(fmt_build *b, uint32_t pid, uint32_t tid, uint32_t comm, uint32_t set, uint32_t base)
{
	pf_profile *p = b->p;
	if (p->nr_threads >= PF_NONE - 1 || PF_GROW(p->threads, b->cap_threads, p->nr_threads + 1) < 0 ||
	    PF_GROW(p->thread_labels, b->cap_thread_labels, p->nr_threads + 1) < 0 ||
	    PF_GROW(b->base_of, b->cap_base_of, p->nr_threads + 1) < 0)
		return PF_NONE;
	uint32_t t = (uint32_t)p->nr_threads++;
	p->threads[t] = (pf_thread){ pid, tid, comm };
	p->thread_labels[t] = set;
	b->base_of[t] = base == PF_NONE ? t : base;
	return t;
}

uint32_t fmt_thread(fmt_build *b, uint32_t pid, uint32_t tid, uint32_t comm, uint32_t set)
{
	if (b->last_thread != PF_NONE && b->last_key[0] == pid && b->last_key[1] == tid &&
	    b->last_key[2] == comm && b->last_key[3] == set)
		return b->last_thread;
	int inserted;
	uint32_t *slot = pair_table_find(&b->comm_tab, comm, (uint64_t)tid << 32 | pid, 1, &inserted);
	if (!slot)
		return PF_NONE;
	uint32_t base;
	if (inserted) {
		base = new_thread(b, pid, tid, comm, set, PF_NONE);
		*slot = base;
		if (base == PF_NONE)
			return PF_NONE;
	} else {
		base = *slot;
	}
	uint32_t t = base;
	if (b->p->thread_labels[base] != set) {
		slot = pair_table_find(&b->thread_tab, set, base, 1, &inserted);
		if (!slot)
			return PF_NONE;
		if (inserted)
			*slot = new_thread(b, pid, tid, comm, set, base);
		t = *slot;
		if (t == PF_NONE)
			return PF_NONE;
	}
	b->last_key[0] = pid;
	b->last_key[1] = tid;
	b->last_key[2] = comm;
	b->last_key[3] = set;
	b->last_thread = t;
	return t;
}

static int sample_new(fmt_build *b, uint32_t thread, uint32_t cpu, uint32_t stack, uint32_t *id)
{
	pf_profile *p = b->p;
	if (p->nr_samples >= PF_NONE - 1 || PF_GROW(p->samples, p->cap_samples, p->nr_samples + 1) < 0)
		return -1;
	const pf_thread *t = &p->threads[thread];
	p->samples[p->nr_samples] = (pf_sample){ .evsel = 0, .thread = thread, .pid = t->pid, .tid = t->tid,
						 .comm = t->comm, .cpu = cpu, .stack = stack };
	*id = (uint32_t)p->nr_samples++;
	return 0;
}

int fmt_sample(fmt_build *b, uint32_t thread, uint32_t cpu, uint32_t stack, uint64_t period, uint64_t count)
{
	pf_profile *p = b->p;
	int inserted;
	uint32_t *slot = pair_table_find(&b->sample_tab, thread, (uint64_t)cpu << 32 | stack, 1, &inserted);
	if (!slot)
		return fmt_oom(b);
	uint32_t id = *slot;
	if (inserted) {
		if (sample_new(b, thread, cpu, stack, &id) < 0)
			return fmt_oom(b);
		/* the slot again: nothing above touched the table */
		*pair_table_find(&b->sample_tab, thread, (uint64_t)cpu << 32 | stack, 0, NULL) = id;
	}
	pf_sample *s = &p->samples[id];
	if (period > UINT64_MAX - s->period)
		return FMT_OVERFLOW;     /* the caller says where */
	s->period += period;
	/* a full count is continued in another sample of the same key (the
	 * model's rule: consumers sum) */
	while (count > UINT32_MAX - s->count) {
		count -= UINT32_MAX - s->count;
		s->count = UINT32_MAX;
		if (sample_new(b, thread, cpu, stack, &id) < 0)
			return fmt_oom(b);
		*pair_table_find(&b->sample_tab, thread, (uint64_t)cpu << 32 | stack, 0, NULL) = id;
		s = &p->samples[id];
	}
	s->count += (uint32_t)count;
	if (b->opts && b->opts->keep_sequence) {
		if (PF_GROW(p->seq, p->cap_seq, p->nr_seq + 1) < 0 || pf_seq_push(p, id, thread, period) < 0)
			return fmt_oom(b);
	}
	b->raw++;
	return 0;
}
