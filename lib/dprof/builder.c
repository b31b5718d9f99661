/* builder.c — turns enter/exit/goto/unwind events into the dprofpp model.
 *
 * This is dprofpp's parsestack()/exitstamp()/add_to_tree() computation redone
 * in C, with the same order of floating point operations so that the numbers
 * printed later are identical: a running overhead total (over_per_call per
 * mark plus buffer-flush time) is subtracted from every timestamp; exclusive
 * time = inclusive minus the children's inclusive; inclusive time is only
 * counted for the outermost activation of a recursive sub; -g restricts
 * counting to one sub and what it calls; -S merges every activation into a
 * call tree keyed by name. Any event source (tmon.out, proff traces) can
 * drive it; see proff/dprof.h.
 */
#include "proff/dprof.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct frame {
	uint32_t name;
	uint32_t deep;          /* -S node of this activation */
	double t_enter;         /* enter time, overhead removed */
	double kids;            /* children's inclusive time (dprofpp @tstack) */
} frame;

typedef struct thread_state {
	uint64_t tid;
	frame *stack;
	size_t n, cap;
	long long in;           /* -T/-t indentation */
} thread_state;

/* (parent node, name) -> child node, with deletion (backward shift). */
typedef struct kidmap {
	uint64_t *keys;         /* 0 = empty; key = parent << 32 | name, parent >= 1 or name >= 1 */
	uint32_t *vals;
	size_t cap, len;
} kidmap;

struct dprof_builder {
	dprof_build_opts o;
	proff_error err;
	pf_strtab names;
	/* per name id */
	uint64_t *calls;
	double *times, *ctimes;
	long long *outer;
	uint8_t *seen;
	int8_t *gmatch;         /* -G match cache: -1 unknown, 0, 1 */
	size_t ncap;
	uint32_t *order;
	size_t norder, ordcap;

	thread_state *threads;
	size_t nthreads, thcap;
	size_t last_thread;

	double hz, opc, overhead, dprof_stamp;
	double run_sel, run_real;
	uint32_t write_id, g_id;
	bool g_set, group_set;
	regex_t group_re;
	long long in_level;

	/* -t state */
	long long l_in, repcnt;
	uint32_t l_name;

	/* -S */
	dprof_node *nodes;
	size_t nnodes, nodecap;
	uint32_t free_nodes;
	kidmap kids;
	uint32_t *work;         /* move_keys work list (pairs) */
	size_t workcap;

	char xs_version[128];
};

static int berr(dprof_builder *b, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int berr(dprof_builder *b, int code, const char *fmt, ...)
{
	va_list ap;
	b->err.code = code;
	b->err.offset = PROFF_NO_OFFSET;
	b->err.file[0] = '\0';
	va_start(ap, fmt);
	vsnprintf(b->err.msg, sizeof(b->err.msg), fmt, ap);
	va_end(ap);
	return code;
}

static void bwarn(dprof_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bwarn(dprof_builder *b, const char *fmt, ...)
{
	if (!b->o.warn)
		return;
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	b->o.warn(b->o.warn_ctx, buf);
}

const proff_error *dprof_builder_error(const dprof_builder *b) { return &b->err; }

/* ---- kid map ---- */

static inline uint64_t kid_key(uint32_t parent, uint32_t name)
{
	return ((uint64_t)parent << 32 | name) + 1;   /* never 0 */
}

static int kidmap_grow(kidmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *k = pf_calloc(ncap, sizeof(*k));
	uint32_t *v = pf_calloc(ncap, sizeof(*v));
	if (!k || !v) {
		free(k); free(v);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = pf_hash64(m->keys[i]) & (ncap - 1);
		while (k[j])
			j = (j + 1) & (ncap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys); free(m->vals);
	m->keys = k; m->vals = v; m->cap = ncap;
	return 0;
}

static bool kidmap_get(const kidmap *m, uint64_t key, uint32_t *val)
{
	if (!m->cap)
		return false;
	size_t j = pf_hash64(key) & (m->cap - 1);
	while (m->keys[j]) {
		if (m->keys[j] == key) {
			*val = m->vals[j];
			return true;
		}
		j = (j + 1) & (m->cap - 1);
	}
	return false;
}

static int kidmap_put(kidmap *m, uint64_t key, uint32_t val)
{
	if ((m->len + 1) * 2 > m->cap && kidmap_grow(m) < 0)
		return -1;
	size_t j = pf_hash64(key) & (m->cap - 1);
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	if (!m->keys[j])
		m->len++;
	m->keys[j] = key;
	m->vals[j] = val;
	return 0;
}

static void kidmap_del(kidmap *m, uint64_t key)
{
	if (!m->cap)
		return;
	size_t mask = m->cap - 1, j = pf_hash64(key) & mask;
	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & mask;
	if (!m->keys[j])
		return;
	/* backward-shift deletion */
	size_t i = j;
	for (;;) {
		m->keys[i] = 0;
		size_t k = i;
		for (;;) {
			k = (k + 1) & mask;
			if (!m->keys[k]) {
				m->len--;
				return;
			}
			size_t home = pf_hash64(m->keys[k]) & mask;
			/* can the entry at k move to i? yes unless home lies cyclically in (i, k] */
			if (i <= k ? (home <= i || home > k) : (home <= i && home > k))
				break;
		}
		m->keys[i] = m->keys[k];
		m->vals[i] = m->vals[k];
		i = k;
	}
}

/* ---- nodes ---- */

static int64_t node_new(dprof_builder *b, uint32_t name)
{
	uint32_t id;
	if (b->free_nodes) {
		id = b->free_nodes;
		b->free_nodes = b->nodes[id].next;
	} else {
		if (b->nnodes >= UINT32_MAX - 1)
			return -1;
		if (PF_GROW(b->nodes, b->nodecap, b->nnodes + 1) < 0)
			return -1;
		id = (uint32_t)b->nnodes++;
	}
	memset(&b->nodes[id], 0, sizeof(b->nodes[id]));
	b->nodes[id].name = name;
	return id;
}

static void node_free(dprof_builder *b, uint32_t id)
{
	b->nodes[id].next = b->free_nodes;
	b->nodes[id].first_kid = 0;
	b->nodes[id].count = 0;
	b->free_nodes = id;
}

static int node_link(dprof_builder *b, uint32_t parent, uint32_t kid)
{
	if (kidmap_put(&b->kids, kid_key(parent, b->nodes[kid].name), kid) < 0)
		return -1;
	b->nodes[kid].parent = parent;
	b->nodes[kid].next = b->nodes[parent].first_kid;
	b->nodes[parent].first_kid = kid;
	return 0;
}

/* dprofpp move_keys(): merge all children of src into dst, recursively. */
static int move_keys(dprof_builder *b, uint32_t src, uint32_t dst)
{
	size_t nw = 0;
	if (PF_GROW(b->work, b->workcap, 2) < 0)
		return -1;
	b->work[nw++] = src;
	b->work[nw++] = dst;
	while (nw) {
		uint32_t d = b->work[--nw], s = b->work[--nw];
		uint32_t k = b->nodes[s].first_kid;
		b->nodes[s].first_kid = 0;
		while (k) {
			uint32_t next = b->nodes[k].next;
			kidmap_del(&b->kids, kid_key(s, b->nodes[k].name));
			uint32_t dk;
			if (kidmap_get(&b->kids, kid_key(d, b->nodes[k].name), &dk)) {
				b->nodes[dk].count += b->nodes[k].count;
				b->nodes[dk].incl += b->nodes[k].incl;
				if (b->nodes[k].first_kid) {
					if (PF_GROW(b->work, b->workcap, nw + 2) < 0)
						return -1;
					b->work[nw++] = k;
					b->work[nw++] = dk;
					/* k is freed when its pair is processed */
					b->nodes[k].count = UINT64_MAX;
				} else {
					node_free(b, k);
				}
			} else if (node_link(b, d, k) < 0) {
				return -1;
			}
			k = next;
		}
		if (s != src && b->nodes[s].count == UINT64_MAX)
			node_free(b, s);
	}
	return 0;
}

/* ---- names ---- */

static int ensure_names(dprof_builder *b, size_t n)
{
	if (n <= b->ncap)
		return 0;
	size_t cap = b->ncap, c2;
	size_t want = n < 64 ? 64 : n;
	c2 = cap; if (PF_GROW(b->calls, c2, want) < 0) return -1;
	c2 = cap; if (PF_GROW(b->times, c2, want) < 0) return -1;
	c2 = cap; if (PF_GROW(b->ctimes, c2, want) < 0) return -1;
	c2 = cap; if (PF_GROW(b->outer, c2, want) < 0) return -1;
	c2 = cap; if (PF_GROW(b->seen, c2, want) < 0) return -1;
	c2 = cap; if (PF_GROW(b->gmatch, c2, want) < 0) return -1;
	memset(b->calls + cap, 0, (c2 - cap) * sizeof(*b->calls));
	memset(b->times + cap, 0, (c2 - cap) * sizeof(*b->times));
	memset(b->ctimes + cap, 0, (c2 - cap) * sizeof(*b->ctimes));
	memset(b->outer + cap, 0, (c2 - cap) * sizeof(*b->outer));
	memset(b->seen + cap, 0, (c2 - cap));
	memset(b->gmatch + cap, -1, (c2 - cap));
	b->ncap = c2;
	return 0;
}

int64_t dprof_builder_intern(dprof_builder *b, const char *name, size_t len)
{
	int64_t id = pf_strtab_intern(&b->names, name, len);
	if (id < 0 || ensure_names(b, (size_t)id + 1) < 0)
		return -1;
	return id;
}

const char *dprof_builder_name(const dprof_builder *b, uint32_t id)
{
	return id < b->names.n ? b->names.strs[id] : "";
}

static const char *NM(const dprof_builder *b, uint32_t id) { return b->names.strs[id]; }

/* ---- setup ---- */

dprof_builder *dprof_builder_new(const dprof_build_opts *opts, proff_error *err)
{
	dprof_builder *b = calloc(1, sizeof(*b));
	if (!b) {
		proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
		return NULL;
	}
	b->o = *opts;
	proff_err_clear(&b->err);
	if (pf_strtab_init(&b->names) < 0 || ensure_names(b, 64) < 0)
		goto nomem;
	int64_t w = dprof_builder_intern(b, DPROF_WRITE_NAME, strlen(DPROF_WRITE_NAME));
	if (w < 0)
		goto nomem;
	b->write_id = (uint32_t)w;
	b->g_id = UINT32_MAX;
	if (opts->only_sub) {
		int64_t g = dprof_builder_intern(b, opts->only_sub, strlen(opts->only_sub));
		if (g < 0)
			goto nomem;
		b->g_id = (uint32_t)g;
		b->g_set = true;
	}
	b->in_level = b->g_set ? 0 : 1;
	if (opts->group_re && *opts->group_re && strcmp(opts->group_re, "0") != 0) {
		char eb[256];
		if (dprof_regcomp(&b->group_re, opts->group_re, eb, sizeof(eb)) < 0) {
			proff_err_set(err, PROFF_EUSAGE, NULL, PROFF_NO_OFFSET, "bad -G regular expression '%s': %s",
				      opts->group_re, eb);
			dprof_builder_free(b);
			return NULL;
		}
		b->group_set = true;
	}
	if (opts->deep) {
		int64_t root = node_new(b, 0);   /* node 0: toplevel */
		if (root != 0)
			goto nomem;
	}
	b->hz = 0;
	return b;
nomem:
	proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	dprof_builder_free(b);
	return NULL;
}

void dprof_builder_free(dprof_builder *b)
{
	if (!b)
		return;
	pf_strtab_free(&b->names);
	free(b->calls); free(b->times); free(b->ctimes); free(b->outer);
	free(b->seen); free(b->gmatch); free(b->order);
	for (size_t i = 0; i < b->nthreads; i++)
		free(b->threads[i].stack);
	free(b->threads);
	free(b->nodes);
	free(b->kids.keys); free(b->kids.vals);
	free(b->work);
	if (b->group_set)
		regfree(&b->group_re);
	free(b);
}

void dprof_builder_set_clock(dprof_builder *b, double hz) { b->hz = hz; }
void dprof_builder_set_overhead(dprof_builder *b, double t) { b->opc = t; }
void dprof_builder_set_run_times(dprof_builder *b, double sel, double real) { b->run_sel = sel; b->run_real = real; }
void dprof_builder_set_xs_version(dprof_builder *b, const char *v)
{
	snprintf(b->xs_version, sizeof(b->xs_version), "%s", v ? v : "");
}

static thread_state *get_thread(dprof_builder *b, uint64_t tid)
{
	if (b->last_thread < b->nthreads && b->threads[b->last_thread].tid == tid)
		return &b->threads[b->last_thread];
	for (size_t i = 0; i < b->nthreads; i++)
		if (b->threads[i].tid == tid) {
			b->last_thread = i;
			return &b->threads[i];
		}
	if (PF_GROW(b->threads, b->thcap, b->nthreads + 1) < 0)
		return NULL;
	thread_state *th = &b->threads[b->nthreads];
	memset(th, 0, sizeof(*th));
	th->tid = tid;
	b->last_thread = b->nthreads++;
	return th;
}

static bool group_match(dprof_builder *b, uint32_t name)
{
	if (b->gmatch[name] < 0)
		b->gmatch[name] = regexec(&b->group_re, NM(b, name), 0, NULL, 0) == 0;
	return b->gmatch[name] == 1;
}

static bool ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && memcmp(s + n - m, suf, m) == 0;
}

static void indent(FILE *f, long long n)
{
	for (long long i = 0; i < n; i++)
		fputc(' ', f);
}

/* dprofpp add_to_tree() */
static int add_to_tree(dprof_builder *b, thread_state *th, uint32_t name, double t)
{
	if (th->n < 1)
		return berr(b, PROFF_EFORMAT, "Shorted?! (an exit with no matching entry)");
	frame *f = &th->stack[th->n - 1];
	uint32_t fnode = f->deep;
	if (name != b->nodes[fnode].name && b->o.autoload)
		name = b->nodes[fnode].name;
	uint32_t parent = th->n >= 2 ? th->stack[th->n - 2].deep : 0;
	uint32_t e;
	if (!kidmap_get(&b->kids, kid_key(parent, name), &e)) {
		int64_t ne = node_new(b, name);
		if (ne < 0 || node_link(b, parent, (uint32_t)ne) < 0)
			return berr(b, PROFF_ENOMEM, "out of memory");
		e = (uint32_t)ne;
		fnode = f->deep;
	}
	b->nodes[e].count++;
	b->nodes[e].incl += t - f->t_enter;
	if (move_keys(b, fnode, e) < 0)
		return berr(b, PROFF_ENOMEM, "out of memory");
	node_free(b, fnode);
	return 0;
}

/* dprofpp exitstamp(): pops the frame. */
static int exitstamp(dprof_builder *b, thread_state *th, double t, uint32_t name)
{
	if (!th->n)
		return berr(b, PROFF_EFORMAT, "Garbled profile, missing an enter time stamp");
	frame x = th->stack[--th->n];
	if (x.name != name && b->group_set && group_match(b, name)) {
		if (ends_with(NM(b, x.name), "AUTOLOAD")) {
			if (b->o.autoload)
				name = x.name;
		} else if (b->o.fake_exits) {
			bwarn(b, "Garbled profile, faking exit timestamp:\n\t%s => %s.\n", NM(b, name), NM(b, x.name));
			name = x.name;
		} else {
			if (b->o.out)
				fprintf(b->o.out, "%s\n", NM(b, x.name));
			return berr(b, PROFF_EFORMAT, "Garbled profile, unexpected exit time stamp");
		}
	}
	if (b->o.tree)
		th->in -= 3;
	double c = x.kids;
	double z = t - x.t_enter;
	if (--b->outer[name] == 0)
		b->ctimes[name] += z;
	b->times[name] += z - c;
	if (th->n)
		th->stack[th->n - 1].kids = th->stack[th->n - 1].kids + z;
	return 0;
}

static int do_exit(dprof_builder *b, thread_state *th, uint32_t name, uint32_t ename, double t)
{
	double tt = t - b->overhead;
	int rc;
	if (b->o.deep && (rc = add_to_tree(b, th, ename, tt)) < 0)
		return rc;
	return exitstamp(b, th, tt, name);
}

static void print_t_line(dprof_builder *b)
{
	FILE *f = b->o.out;
	if (!f)
		return;
	indent(f, b->l_in);
	fputs(NM(b, b->l_name), f);
	if (b->repcnt)
		fprintf(f, " (%lldx)", b->repcnt + 1);
	fputc('\n', f);
}

static int do_enter(dprof_builder *b, thread_state *th, uint32_t name, double t)
{
	if (b->o.tree == 'T') {
		if (b->o.out) {
			indent(b->o.out, th->in);
			fputs(NM(b, name), b->o.out);
			fputc('\n', b->o.out);
		}
		th->in += 3;
	} else if (b->o.tree == 't') {
		if (b->l_in == th->in && b->l_name == name) {
			b->repcnt++;
		} else {
			if (b->l_name != 0)
				print_t_line(b);
			b->repcnt = 0;
			b->l_in = th->in;
			b->l_name = name;
		}
		th->in += 3;
	}
	if (!b->seen[name]) {
		/* dprofpp resets both times when it first sees a name entered,
		 * dropping what exits under that name (goto) charged before */
		b->seen[name] = 1;
		b->times[name] = 0;
		b->ctimes[name] = 0;
		if (PF_GROW(b->order, b->ordcap, b->norder + 1) < 0)
			return berr(b, PROFF_ENOMEM, "out of memory");
		b->order[b->norder++] = name;
	}
	b->calls[name]++;
	b->outer[name]++;
	if (PF_GROW(th->stack, th->cap, th->n + 1) < 0)
		return berr(b, PROFF_ENOMEM, "out of memory");
	frame *f = &th->stack[th->n++];
	f->name = name;
	f->t_enter = t - b->overhead;
	f->kids = 0;
	f->deep = 0;
	if (b->o.deep) {
		int64_t nd = node_new(b, name);
		if (nd < 0)
			return berr(b, PROFF_ENOMEM, "out of memory");
		th->stack[th->n - 1].deep = (uint32_t)nd;
	}
	return 0;
}

/* The body of dprofpp's parsestack() loop for one mark. dir: '+', '-', '*'. */
static int mark(dprof_builder *b, int dir, uint64_t tid, uint32_t name, double t)
{
	if (name >= b->names.n)
		return berr(b, PROFF_EINTERNAL, "name id %u out of range", name);
	thread_state *th = get_thread(b, tid);
	if (!th)
		return berr(b, PROFF_ENOMEM, "out of memory");
	if (!b->in_level && name != b->g_id)
		return 0;
	if (dir == '-' || dir == '*') {
		uint32_t ename = dir == '*' ? (th->n ? th->stack[th->n - 1].name : DPROF_NAME_NONE) : name;
		b->overhead += b->opc;
		if (name == b->write_id) {
			b->overhead += t - b->dprof_stamp;
			return 0;
		} else if (b->g_set && ename == b->g_id) {
			b->in_level--;
		}
		int rc = do_exit(b, th, name, ename, t);
		if (rc < 0)
			return rc;
	}
	if (!b->in_level && name != b->g_id)
		return 0;
	if (dir == '+' || dir == '*') {
		if (name == b->write_id) {
			b->dprof_stamp = t;
			return 0;
		} else if (b->g_set && name == b->g_id) {
			b->in_level++;
		}
		b->overhead += b->opc;
		return do_enter(b, th, name, t);
	}
	return 0;
}

int dprof_builder_enter(dprof_builder *b, uint64_t tid, uint32_t name, double t) { return mark(b, '+', tid, name, t); }
int dprof_builder_exit(dprof_builder *b, uint64_t tid, uint32_t name, double t) { return mark(b, '-', tid, name, t); }
int dprof_builder_goto(dprof_builder *b, uint64_t tid, uint32_t name, double t) { return mark(b, '*', tid, name, t); }
int dprof_builder_pause(dprof_builder *b, uint64_t tid, double t) { return mark(b, '+', tid, b->write_id, t); }
int dprof_builder_resume(dprof_builder *b, uint64_t tid, double t) { return mark(b, '-', tid, b->write_id, t); }

int dprof_builder_unwind(dprof_builder *b, uint64_t tid, uint32_t fallback, double t)
{
	thread_state *th = get_thread(b, tid);
	if (!th)
		return berr(b, PROFF_ENOMEM, "out of memory");
	uint32_t name = th->n ? th->stack[th->n - 1].name : fallback;
	return mark(b, '-', tid, name, t);
}

/* ---- finish ---- */

int dprof_builder_finish(dprof_builder *b, double t_end, dprof_model **out, proff_error *err)
{
	*out = NULL;
	if (b->o.tree == 't' || b->o.tree_t_too)
		print_t_line(b);
	for (size_t i = 0; i < b->names.n; i++)
		if (b->outer[i])
			bwarn(b, "%s has %lld unstacked calls in outer\n", NM(b, (uint32_t)i), b->outer[i]);
	size_t open = 0;
	for (size_t i = 0; i < b->nthreads; i++)
		open += b->threads[i].n;
	if (open) {
		if (!b->o.fake_exits) {
			bwarn(b, "Garbled profile is missing some exit time stamps:\n");
			for (size_t i = 0; i < b->nthreads; i++)
				for (size_t j = 0; j < b->threads[i].n; j++)
					if (b->o.out)
						fprintf(b->o.out, "%s\n", NM(b, b->threads[i].stack[j].name));
			return proff_err_set(err, PROFF_EFORMAT, NULL, PROFF_NO_OFFSET,
					     "%zu subroutine(s) never exited (profile cut short?); try -F to fake the exits", open);
		}
		bwarn(b, "Faking %zu exit timestamp(s).\n", open);
		for (size_t i = 0; i < b->nthreads; i++) {
			thread_state *th = &b->threads[i];
			while (th->n) {
				uint32_t name = th->stack[th->n - 1].name;
				double tt = t_end - b->overhead;
				uint32_t deep = th->stack[th->n - 1].deep;
				int rc = exitstamp(b, th, tt, name);
				if (rc == 0 && b->o.deep) {
					/* add_to_tree after the pop: re-push the frame view temporarily */
					th->n++;
					th->stack[th->n - 1].deep = deep;
					rc = add_to_tree(b, th, name, tt);
					th->n--;
				}
				if (rc < 0) {
					*err = b->err;
					return rc;
				}
			}
		}
	}

	dprof_model *m = calloc(1, sizeof(*m));
	if (!m)
		return proff_err_set(err, PROFF_ENOMEM, NULL, PROFF_NO_OFFSET, "out of memory");
	m->names = b->names;
	memset(&b->names, 0, sizeof(b->names));
	m->nnames = m->names.n;
	m->calls = b->calls; b->calls = NULL;
	m->excl = b->times; b->times = NULL;
	m->incl = b->ctimes; b->ctimes = NULL;
	m->order = b->order; b->order = NULL;
	m->norder = b->norder;
	m->hz = b->hz;
	m->overhead = b->overhead;
	m->run_selected = b->run_sel;
	m->run_real = b->run_real;
	m->has_only_sub = b->g_set;
	if (b->g_set) {
		double rt = b->hz ? m->incl[b->g_id] / b->hz : 0;
		m->only_sub_runtime = rt > 0 ? rt : 0;
	}
	if (b->o.deep) {
		m->nodes = b->nodes; b->nodes = NULL;
		m->nnodes = b->nnodes;
	}
	snprintf(m->xs_version, sizeof(m->xs_version), "%s", b->xs_version);
	*out = m;
	return 0;
}

void dprof_model_free(dprof_model *m)
{
	if (!m)
		return;
	pf_strtab_free(&m->names);
	free(m->calls); free(m->excl); free(m->incl); free(m->order); free(m->nodes);
	free(m);
}

int64_t dprof_model_find(const dprof_model *m, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < m->names.n; i++)
		if (m->names.lens[i] == len && memcmp(m->names.strs[i], name, len) == 0)
			return (int64_t)i;
	return -1;
}
