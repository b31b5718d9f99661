/* cycles.c — hot blocks from branch-stack cycles (`proff diff -c cycles`).
 *
 * Accounting follows perf's documented semantics (hist__account_cycles and
 * the annotation cycles histogram; perf 6.1 itself crashes there):
 *   - a sample is accounted when its newest branch entry has a cycle count;
 *   - entries are walked oldest to newest; entry i closes the basic block
 *     [target of entry i+1, source of entry i] of the symbol holding the
 *     source, with entry i's cycles; the start is kept only when the previous
 *     target is in the same symbol (or is the symbol's entry) and lies before
 *     the source;
 *   - per symbol offset (the block end) perf keeps the aggregate (every
 *     block ending there: cycles_aggr, num_aggr) and the longest block seen
 *     (start, cycles, num, the first 8 cycle values for the sparkline).
 * Blocks are identified by (symbol name, start, end); the cycles diff of a
 * block is avg(new) - avg(old), integer averages of the aggregate.
 * Output: perf's `[Program Block Range] Cycles Diff` table, one row per
 * block present in both profiles, `--cycles-hist` adds the relative stddev
 * of the per-occurrence differences and their sparkline.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stream-int.h"

#define NUM_SPARKS 8
#define MAX_SYM_SPAN ((uint64_t)1 << 18)    /* larger symbols are not accounted (bounds memory) */

typedef struct cyc_hist {
	uint64_t start, cycles, cycles_aggr;
	uint32_t num, num_aggr;
	uint32_t spark[NUM_SPARKS];
	bool have_start;
} cyc_hist;

typedef struct cyc_sym {
	const char *name;
	uint32_t dso;
	uint64_t start, end;       /* map-address space */
	uint64_t period;           /* samples whose ip is in the symbol */
	cyc_hist *ch;              /* end - start slots, NULL until a branch lands here */
} cyc_sym;

struct st_blocks {
	cyc_sym *syms;
	size_t nr, cap;
	pf_map64 index;            /* hash(dso, start) -> index + 1 chain head (see find_sym) */
	uint64_t total_period;
};

static st_blocks *blocks_of(st_side *s)
{
	if (!s->blocks) {
		s->blocks = calloc(1, sizeof(*s->blocks));
		if (s->blocks)
			pf_map64_init(&s->blocks->index);
	}
	return s->blocks;
}

static cyc_sym *find_sym_key(st_blocks *b, uint32_t dso, const st_addr *a);

/* the blocks of a's symbol; a remembers them */
static cyc_sym *find_sym(st_blocks *b, uint32_t dso, const st_addr *a)
{
	if (a->blk)
		return &b->syms[a->blk - 1];
	cyc_sym *y = find_sym_key(b, dso, a);
	if (y)
		((st_addr *)a)->blk = (uint32_t)(y - b->syms) + 1;
	return y;
}

static cyc_sym *find_sym_key(st_blocks *b, uint32_t dso, const st_addr *a)
{
	/* open addressing over the key space: probe consecutive keys */
	uint64_t key = pf_hash64(((uint64_t)dso << 40) ^ a->sym_start);
	for (;; key++) {
		bool found;
		uint64_t *slot = pf_map64_upsert(&b->index, key, &found);
		if (!slot)
			return NULL;
		if (found) {
			cyc_sym *y = &b->syms[*slot];
			if (y->dso == dso && y->start == a->sym_start)
				return y;
			continue;
		}
		if (PF_GROW(b->syms, b->cap, b->nr + 1) < 0)
			return NULL;
		*slot = b->nr;
		cyc_sym *y = &b->syms[b->nr++];
		memset(y, 0, sizeof(*y));
		y->name = a->sym;
		y->dso = dso;
		y->start = a->sym_start;
		y->end = a->sym_end;
		return y;
	}
}

/* address -> (dso, resolved address, absolute ip of the map start) */
static const st_addr *resolve(st_side *s, uint32_t pid, uint64_t ip, uint32_t *dso, uint64_t *maddr,
			      uint64_t *map_start)
{
	const st_map *m;
	const st_addr *a = st_lookup_sym(s, pid, ip, &m);
	if (!m)
		return NULL;
	*dso = m->dso;
	*maddr = st_map_addr(s, m, ip);
	*map_start = m->start;
	return a;
}

static void account(cyc_hist *ch, uint64_t start, uint64_t offset, unsigned cycles, bool have_start)
{
	cyc_hist *c = &ch[offset];
	c->num_aggr++;
	c->cycles_aggr += cycles;
	if (!have_start && c->have_start)
		return;
	if (c->num) {
		if (have_start && (!c->have_start || c->start > start)) {
			c->have_start = false;
			c->cycles = 0;
			c->num = 0;
		} else if (have_start && c->start < start) {
			return;
		}
	}
	if (c->num < NUM_SPARKS)
		c->spark[c->num] = cycles;
	c->have_start = have_start;
	c->start = start;
	c->cycles += cycles;
	c->num++;
}

int st_account_cycles(st_side *s, const pd_sample *sm)
{
	st_blocks *b = blocks_of(s);
	if (!b)
		return -1;
	/* the symbol of the sample: the Baseline column */
	uint32_t dso;
	uint64_t maddr, mstart;
	b->total_period += sm->period;
	const st_addr *sa = resolve(s, sm->pid, sm->ip, &dso, &maddr, &mstart);
	if (sa && sa->sym) {
		cyc_sym *y = find_sym(b, dso, sa);
		if (!y)
			return -1;
		y->period += sm->period;
	}
	if (!sm->nr_branches || !((sm->branches[0].flags >> 4) & 0xffff))
		return 0;
	s->any_cycles = true;
	for (uint64_t k = sm->nr_branches; k-- > 0;) {
		const pd_branch_entry *e = &sm->branches[k];
		unsigned cycles = (unsigned)((e->flags >> 4) & 0xffff);
		if (!cycles)
			continue;
		/* the previous target first: a lookup may move the addresses
		 * (a new one grows the array), so fa is looked up last */
		bool have_to = k + 1 < sm->nr_branches, to_found = false;
		uint64_t pto = have_to ? sm->branches[k + 1].to : 0;
		uint32_t td = 0;
		uint64_t taddr = 0, tstart, to_sym_start = 0;
		const char *to_sym = NULL;
		if (have_to) {
			const st_addr *ta = resolve(s, sm->pid, pto, &td, &taddr, &tstart);
			if (ta) {
				to_found = true;
				to_sym = ta->sym;
				to_sym_start = ta->sym_start;
			}
		}
		uint32_t fd;
		uint64_t faddr, fstart;
		const st_addr *fa = resolve(s, sm->pid, e->from, &fd, &faddr, &fstart);
		if (!fa || !fa->sym)
			continue;
		uint64_t saddr = 0;
		if (have_to) {
			bool same = to_found && td == fd && to_sym == fa->sym && to_sym_start == fa->sym_start;
			if (same || pto == fa->sym_start + fstart)
				saddr = to_found ? taddr : 0;
		}
		if (faddr < fa->sym_start || faddr >= fa->sym_end || fa->sym_end - fa->sym_start > MAX_SYM_SPAN)
			continue;
		if (saddr && (saddr < fa->sym_start || saddr >= fa->sym_end))
			continue;
		if (saddr >= faddr)
			saddr = 0;
		cyc_sym *y = find_sym(b, fd, fa);
		if (!y)
			return -1;
		if (!y->ch) {
			y->ch = calloc(y->end - y->start, sizeof(cyc_hist));
			if (!y->ch)
				return -1;
		}
		account(y->ch, saddr ? saddr - y->start : 0, faddr - y->start, cycles, saddr != 0);
	}
	return 0;
}

int st_blocks_finish(st_side *s)
{
	return blocks_of(s) ? 0 : PROFF_ENOMEM;
}

void st_blocks_free(st_side *s)
{
	st_blocks *b = s->blocks;
	if (!b)
		return;
	for (size_t i = 0; i < b->nr; i++)
		free(b->syms[i].ch);
	free(b->syms);
	pf_map64_free(&b->index);
	free(b);
	s->blocks = NULL;
}

/* ---- report --------------------------------------------------------------- */

typedef struct row {
	const cyc_sym *base, *pair;
	uint64_t off;              /* block end (offset), UINT64_MAX: symbol row without block */
	int64_t diff;
	double pct;
	const st_side *bs, *ps;
} row;

static const cyc_sym *pair_sym(const st_side *ps, const st_side *bs, const cyc_sym *y)
{
	const st_blocks *pb = ps->blocks;
	const char *dname = bs->dsos[y->dso].sname;
	for (size_t i = 0; pb && i < pb->nr; i++) {
		const cyc_sym *z = &pb->syms[i];
		if (z->name && y->name && !strcmp(z->name, y->name) && !strcmp(ps->dsos[z->dso].sname, dname))
			return z;
	}
	return NULL;
}

static int row_cmp(const void *pa, const void *pb)
{
	const row *a = pa, *b = pb;
	if (a->pct != b->pct)
		return a->pct > b->pct ? -1 : 1;
	if (a->base != b->base) {
		int c = strcmp(a->base->name, b->base->name);
		if (c)
			return c;
		return a->base < b->base ? -1 : 1;
	}
	int64_t x = llabs(a->diff), y = llabs(b->diff);
	if (x != y)
		return x > y ? -1 : 1;
	return a->off < b->off ? -1 : a->off > b->off;
}

static void range_text(const st_side *s, const cyc_sym *y, const cyc_hist *c, uint64_t off, int64_t diff,
		       bool offsets, char *buf, size_t len)
{
	char l1[256], l2[256];
	sym_dso *sd = offsets ? NULL : s->dsos[y->dso].sd;
	if (sd) {
		sym_srcline_str(sd, y->start + c->start, false, l1, sizeof(l1));
		sym_srcline_str(sd, y->start + off, false, l2, sizeof(l2));
	}
	if (sd && strcmp(l1, "??:0") && strcmp(l2, "??:0"))
		snprintf(buf, len, "[%s -> %s] %4lld", l1, l2, (long long)diff);
	else
		snprintf(buf, len, "[%7llx -> %7llx] %4lld", (unsigned long long)c->start,
			 (unsigned long long)off, (long long)diff);
}

static void hist_text(const cyc_hist *a, const cyc_hist *b, char *buf, size_t len)
{
	static const char *ticks[8] = { "\u2581", "\u2582", "\u2583", "\u2584", "\u2585", "\u2586", "\u2587", "\u2588" };
	uint64_t v[NUM_SPARKS];
	int n = 0;
	for (uint32_t i = 0; i < b->num && i < a->num && i < NUM_SPARKS; i++)
		v[n++] = (uint64_t)llabs((long long)b->spark[i] - (long long)a->spark[i]);
	buf[0] = 0;
	bool nonzero = false;
	for (int i = 0; i < n; i++)
		nonzero |= v[i] != 0;
	if (n < 2 || !nonzero)
		return;
	double mean = 0, m2 = 0;
	for (int i = 0; i < n; i++) {
		double d = (double)v[i] - mean;
		mean += d / (i + 1);
		m2 += d * ((double)v[i] - mean);
	}
	double sd = sqrt(m2 / (n - 1) / n);
	double rel = mean ? 100.0 * sd / mean : 0;
	uint64_t mn = UINT64_MAX, mx = 0;
	for (int i = 0; i < n; i++) {
		if (v[i] < mn)
			mn = v[i];
		if (v[i] > mx)
			mx = v[i];
	}
	uint64_t step = (mx - mn) / 8;
	if (!step)
		step = 1;
	size_t o = (size_t)snprintf(buf, len, "\u00b1%5.1f%% ", rel);
	for (int i = 0; i < n && o < len; i++) {
		uint64_t idx = (v[i] - mn) / step;
		o += (size_t)snprintf(buf + o, len - o, "%s", ticks[idx > 7 ? 7 : idx]);
	}
	for (int i = n; i < NUM_SPARKS && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, " ");
}

/* display width of UTF-8 text */
static int width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static bool changed_func(const st_match_opts *mo, const char *name)
{
	if (!mo || !mo->changed_funcs || !name)
		return false;
	for (const char *const *f = mo->changed_funcs; *f; f++)
		if (!strcmp(*f, name))
			return true;
	return false;
}

int st_cycles_report(FILE *out, st_side *old, st_side *new_, const st_cycles_opts *co)
{
	st_blocks *ob = old->blocks, *nb = new_->blocks;
	if (!ob || !nb)
		return PROFF_EINTERNAL;
	row *rows = NULL;
	size_t nr = 0, cap = 0;
	for (size_t i = 0; i < ob->nr; i++) {
		const cyc_sym *y = &ob->syms[i];
		if (!y->period || !y->name)
			continue;
		double pct = ob->total_period ? 100.0 * (double)y->period / (double)ob->total_period : 0;
		const cyc_sym *z = pair_sym(new_, old, y);
		size_t first = nr;
		if (z && y->ch && z->ch) {
			uint64_t span = y->end - y->start, zspan = z->end - z->start;
			for (uint64_t off = 0; off < span && off < zspan; off++) {
				const cyc_hist *a = &y->ch[off], *b = &z->ch[off];
				if (!a->num_aggr || !b->num_aggr || !a->num || !b->num || a->start != b->start)
					continue;
				if (PF_GROW(rows, cap, nr + 1) < 0) {
					free(rows);
					return PROFF_ENOMEM;
				}
				rows[nr++] = (row){ y, z, off,
					(int64_t)(b->cycles_aggr / b->num_aggr) - (int64_t)(a->cycles_aggr / a->num_aggr),
					pct, old, new_ };
			}
		}
		if (nr == first) {
			if (PF_GROW(rows, cap, nr + 1) < 0) {
				free(rows);
				return PROFF_ENOMEM;
			}
			rows[nr++] = (row){ y, NULL, UINT64_MAX, 0, pct, old, new_ };
		}
	}
	qsort(rows, nr, sizeof(*rows), row_cmp);
	int wd = (int)strlen("Shared Object"), ws = (int)strlen("Symbol");
	for (size_t i = 0; i < nr; i++) {
		int w = (int)strlen(old->dsos[rows[i].base->dso].sname);
		if (w > wd)
			wd = w;
		w = (int)strlen(rows[i].base->name) + 4;
		if (w > ws)
			ws = w;
	}
	bool hist = co && co->hist;
	const st_match_opts *mo = co ? co->match : NULL;
	char dots[512];
	const char *ev = pd_nr_attrs(old->rd) ? pd_get_attr(old->rd, 0)->name : NULL;
	fprintf(out, "# Event '%s'\n#\n", ev ? ev : "cycles");
	fprintf(out, "# Baseline  %70s", "[Program Block Range] Cycles Diff");
	if (hist)
		fprintf(out, "  %17s", "stddev/Hist");
	fprintf(out, "  %-*s  %-*s\n", wd, "Shared Object", ws, "Symbol");
	memset(dots, '.', sizeof(dots));
	fprintf(out, "# ........  %.70s", dots);
	if (hist)
		fprintf(out, "  %.17s", dots);
	fprintf(out, "  %.*s  %.*s\n#\n", wd, dots, ws, dots);
	for (size_t i = 0; i < nr; i++) {
		const row *r = &rows[i];
		char cell[1024] = "", hcell[256] = "";
		if (r->pair) {
			const cyc_hist *b = &r->pair->ch[r->off];
			range_text(new_, r->pair, b, r->off, r->diff, co && co->offsets, cell, sizeof(cell));
			if (hist)
				hist_text(&r->base->ch[r->off], b, hcell, sizeof(hcell));
		}
		bool chg = changed_func(mo, r->base->name);
		if (!chg && r->pair && mo && mo->srcmap) {
			const char *file;
			unsigned line;
			sym_dso *sd = new_->dsos[r->pair->dso].sd;
			for (uint64_t a = r->pair->ch[r->off].start; sd && a <= r->off && !chg; a++)
				if (sym_srcline(sd, r->pair->start + a, &file, &line) && file &&
				    st_srcmap_line(mo->srcmap, file, line) < 0)
					chg = true;
		}
		char sym[1024];
		enum sym_dso_kind k = old->dsos[r->base->dso].kind;
		snprintf(sym, sizeof(sym), "[%c] %s", k == SYM_DSO_KERNEL || k == SYM_DSO_MODULE ? 'k' : '.',
			 r->base->name);
		fprintf(out, "  %7.2f%%  %70s", r->pct, cell);
		if (hist)
			fprintf(out, "  %s%*s", hcell, 17 - width(hcell), "");
		fprintf(out, "  %-*s  %-*s%s\n", wd, old->dsos[r->base->dso].sname, ws, sym,
			chg ? "  [block changed in new stream]" : "");
	}
	free(rows);
	return ferror(out) ? PROFF_EIO : 0;
}

/* ---- hot blocks (--hot-blocks[=N]) ----------------------------------------
 *
 * A hot block is a (shared object, symbol, printed range) of one side: the
 * blocks above (one per block end, its longest start) whose ranges print the
 * same ("hot.c:12 -> hot.c:13", or the offsets without line info / with -v)
 * are one hot block, their aggregated cycles and counts summed. Its Sampled
 * Cycles% is its cycles / the side's cycles over all blocks x 100, its Avg
 * Cycles the integer average per occurrence. The top N blocks of a side are
 * paired with the other side's block of the same symbol and range; with a
 * source map the new block's lines are mapped to old lines first, and an end
 * on a changed line matches any old line ("through a change"). */

typedef struct hblock {
	const cyc_sym *y;          /* the symbol of the hottest constituent (name, dso) */
	const char *dname;
	char *range;               /* printed range, without brackets */
	const char *path_s, *path_e;   /* DWARF file names of start and end, NULL: offsets */
	unsigned line_s, line_e;
	uint64_t start, end;       /* offsets of the hottest constituent */
	uint64_t hot;              /* its cycles (picks the hottest constituent) */
	uint64_t cycles, num;
	double pct;
	bool changed;              /* new side: touches a changed line, or its function is changed */
} hblock;

typedef struct hside {
	hblock *b;
	size_t nr;
	uint64_t total;
} hside;

static const char *bname(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static int hb_cmp_key(const void *pa, const void *pb)
{
	const hblock *a = pa, *b = pb;
	int c = strcmp(a->dname, b->dname);
	if (!c)
		c = strcmp(a->y->name, b->y->name);
	if (!c)
		c = strcmp(a->range, b->range);
	return c;
}

static int hb_cmp_hot(const void *pa, const void *pb)
{
	const hblock *a = pa, *b = pb;
	if (a->cycles != b->cycles)
		return a->cycles > b->cycles ? -1 : 1;
	return hb_cmp_key(pa, pb);
}

static void hside_free(hside *h)
{
	for (size_t i = 0; i < h->nr; i++)
		free(h->b[i].range);
	free(h->b);
	h->b = NULL;
	h->nr = 0;
}

/* does [start, end] of y (new side) touch a line the source map calls changed? */
static bool touches_changed(const st_side *s, const cyc_sym *y, uint64_t start, uint64_t end, st_srcmap *sm)
{
	sym_dso *sd = s->dsos[y->dso].sd;
	const char *file;
	unsigned line;
	for (uint64_t a = start; sd && sm && a <= end; a++)
		if (sym_srcline(sd, y->start + a, &file, &line) && file && st_srcmap_line(sm, file, line) < 0)
			return true;
	return false;
}

/* The hot blocks of a side, sorted hottest first. is_new: compute `changed`. */
static int hside_build(const st_side *s, bool offsets, const st_match_opts *mo, bool is_new, hside *h)
{
	const st_blocks *bl = s->blocks;
	size_t cap = 0;
	memset(h, 0, sizeof(*h));
	for (size_t i = 0; bl && i < bl->nr; i++) {
		const cyc_sym *y = &bl->syms[i];
		if (!y->ch || !y->name)
			continue;
		sym_dso *sd = offsets ? NULL : s->dsos[y->dso].sd;
		for (uint64_t off = 0; off < y->end - y->start; off++) {
			const cyc_hist *c = &y->ch[off];
			if (!c->num_aggr)
				continue;
			if (PF_GROW(h->b, cap, h->nr + 1) < 0)
				goto oom;
			hblock *b = &h->b[h->nr];
			memset(b, 0, sizeof(*b));
			b->y = y;
			b->dname = s->dsos[y->dso].sname;
			b->start = c->start;
			b->end = off;
			b->hot = b->cycles = c->cycles_aggr;
			b->num = c->num_aggr;
			char l1[256], l2[256], buf[600];
			buf[0] = 0;
			if (sd) {
				const char *f1, *f2;
				unsigned n1, n2;
				if (sym_srcline(sd, y->start + c->start, &f1, &n1) && f1 &&
				    sym_srcline(sd, y->start + off, &f2, &n2) && f2) {
					sym_srcline_str(sd, y->start + c->start, false, l1, sizeof(l1));
					sym_srcline_str(sd, y->start + off, false, l2, sizeof(l2));
					if (strcmp(l1, "??:0") && strcmp(l2, "??:0")) {
						snprintf(buf, sizeof(buf), "%s -> %s", l1, l2);
						b->path_s = f1;
						b->path_e = f2;
						b->line_s = n1;
						b->line_e = n2;
					}
				}
			}
			if (!buf[0])
				snprintf(buf, sizeof(buf), "%7llx -> %7llx", (unsigned long long)c->start,
					 (unsigned long long)off);
			b->range = strdup(buf);
			if (!b->range)
				goto oom;
			if (is_new)
				b->changed = changed_func(mo, y->name) ||
					     (mo && touches_changed(s, y, c->start, off, mo->srcmap));
			h->total += c->cycles_aggr;
			h->nr++;
		}
	}
	/* merge the blocks printed alike */
	if (h->nr)
		qsort(h->b, h->nr, sizeof(*h->b), hb_cmp_key);
	size_t o = 0;
	for (size_t i = 0; i < h->nr; i++) {
		if (o && !hb_cmp_key(&h->b[o - 1], &h->b[i])) {
			hblock *d = &h->b[o - 1], *x = &h->b[i];
			d->cycles += x->cycles;
			d->num += x->num;
			d->changed |= x->changed;
			if (x->hot > d->hot) {
				free(d->range);
				*d = (hblock){ x->y, x->dname, x->range, x->path_s, x->path_e, x->line_s, x->line_e,
					       x->start, x->end, x->hot, d->cycles, d->num, 0, d->changed };
			} else {
				free(x->range);
			}
			continue;
		}
		h->b[o++] = h->b[i];
	}
	h->nr = o;
	for (size_t i = 0; i < h->nr; i++)
		h->b[i].pct = h->total ? 100.0 * (double)h->b[i].cycles / (double)h->total : 0;
	if (h->nr)
		qsort(h->b, h->nr, sizeof(*h->b), hb_cmp_hot);
	return 0;
oom:
	hside_free(h);
	return PROFF_ENOMEM;
}

/* One end of a new block against one end of an old block: 0 same, 1 through
 * a change (the new line is changed, or its file is gone from the before
 * tree), -1 different. */
static int end_match(const char *op, unsigned ol, const char *np, unsigned nl, st_srcmap *sm)
{
	if (strcmp(bname(op), bname(np)))
		return -1;
	long ml = sm ? st_srcmap_line(sm, np, nl) : 0;
	if (ml == -1 || ml == -2)
		return 1;
	if (ml > 0)
		return (unsigned long)ml == ol ? 0 : -1;
	return nl == ol ? 0 : -1;
}

/* old block o vs new block n: -1 no pair, else the number of ends paired
 * through a change (0: exact) */
static int pair_score(const hblock *o, const hblock *n, st_srcmap *sm)
{
	if (strcmp(o->y->name, n->y->name))
		return -1;
	if (!o->path_s || !n->path_s)
		return !o->path_s && !n->path_s && o->start == n->start && o->end == n->end ? 0 : -1;
	if (!sm)
		return strcmp(o->range, n->range) ? -1 : 0;
	int a = end_match(o->path_s, o->line_s, n->path_s, n->line_s, sm);
	int b = end_match(o->path_e, o->line_e, n->path_e, n->line_e, sm);
	if (a < 0 || b < 0 || a + b > 1)   /* one end at least must be the same line */
		return -1;
	return a + b;
}

/* The block of `other` paired with x (x old when x_old): the lowest score,
 * then the same shared object name, then the same offsets, then the hottest
 * (other is sorted hottest first). */
static const hblock *find_pair(const hblock *x, const hside *other, bool x_old, st_srcmap *sm, int *score)
{
	const hblock *best = NULL;
	int bs = 0, bsame = 0;
	for (size_t i = 0; i < other->nr; i++) {
		const hblock *z = &other->b[i];
		int sc = x_old ? pair_score(x, z, sm) : pair_score(z, x, sm);
		if (sc < 0)
			continue;
		int same = 2 * !strcmp(z->dname, x->dname) + (z->start == x->start && z->end == x->end);
		if (!best || sc < bs || (sc == bs && same > bsame)) {
			best = z;
			bs = sc;
			bsame = same;
		}
	}
	*score = bs;
	return best;
}

static void hb_table(FILE *out, const st_side *s, const hside *me, const hside *other, bool is_old,
		     unsigned top, const st_match_opts *mo)
{
	size_t n = me->nr < top ? me->nr : top;
	const char *o = is_old ? "New" : "Old";
	char h3[64], h4[64], h5[64], dots[512];
	snprintf(h3, sizeof(h3), "%s Stream Diff(cycles%%,cycles)", o);
	snprintf(h4, sizeof(h4), "%s Stream Sampled Cycles%%", o);
	snprintf(h5, sizeof(h5), "%s Stream Avg Cycles", o);
	int w3 = (int)strlen(h3), w4 = (int)strlen(h4), w5 = (int)strlen(h5);
	int wr = (int)strlen("[Program Block Range]"), wd = (int)strlen("Shared Object"), ws = (int)strlen("Symbol");
	for (size_t i = 0; i < n; i++) {
		const hblock *b = &me->b[i];
		int w = (int)strlen(b->range) + 2;
		if (w > wr)
			wr = w;
		w = (int)strlen(b->dname);
		if (w > wd)
			wd = w;
		w = (int)strlen(b->y->name) + 4;
		if (w > ws)
			ws = w;
	}
	memset(dots, '.', sizeof(dots));
	fprintf(out, "# Output based on %s perf data:\n#\n", is_old ? "old" : "new");
	fprintf(out, "# Sampled Cycles%%  Avg Cycles  %s  %s  %s  %-*s  %-*s  %s\n", h3, h4, h5, wr,
		"[Program Block Range]", wd, "Shared Object", "Symbol");
	fprintf(out, "# %.15s  %.10s  %.*s  %.*s  %.*s  %.*s  %.*s  %.*s\n#\n", dots, dots, w3, dots, w4, dots,
		w5, dots, wr, dots, wd, dots, ws, dots);
	for (size_t i = 0; i < n; i++) {
		const hblock *b = &me->b[i];
		int score;
		const hblock *p = find_pair(b, other, is_old, mo ? mo->srcmap : NULL, &score);
		uint64_t avg = b->num ? b->cycles / b->num : 0;
		char c3[96] = "", c4[32] = "", c5[32] = "", rng[640], sym[600];
		if (p) {
			uint64_t pavg = p->num ? p->cycles / p->num : 0;
			double d = p->pct - b->pct;
			if (fabs(d) < 0.005)
				d = 0;
			snprintf(c3, sizeof(c3), "(%.2f%%, %lld)", d, (long long)pavg - (long long)avg);
			snprintf(c4, sizeof(c4), "%.2f%%", p->pct);
			snprintf(c5, sizeof(c5), "%llu", (unsigned long long)pavg);
		}
		const hblock *nb = is_old ? p : b;   /* the new side's block */
		bool chg = changed_func(mo, b->y->name) || (p && score > 0) || (nb && nb->changed);
		snprintf(rng, sizeof(rng), "[%s]", b->range);
		enum sym_dso_kind k = s->dsos[b->y->dso].kind;
		snprintf(sym, sizeof(sym), "[%c] %s", k == SYM_DSO_KERNEL || k == SYM_DSO_MODULE ? 'k' : '.',
			 b->y->name);
		fprintf(out, "  %14.2f%%  %10llu  %*s  %*s  %*s  %-*s  %-*s  %-*s%s\n", b->pct,
			(unsigned long long)avg, w3, c3, w4, c4, w5, c5, wr, rng, wd, b->dname,
			chg ? ws : 0, sym, chg ? "  [block changed in new stream]" : "");
	}
}

int st_hot_blocks_report(FILE *out, st_side *old, st_side *new_, const st_cycles_opts *co)
{
	if (!old->blocks || !new_->blocks)
		return PROFF_EINTERNAL;
	bool offsets = co && co->offsets;
	const st_match_opts *mo = co ? co->match : NULL;
	unsigned top = co && co->hot_blocks ? co->hot_blocks : 5;
	hside ho, hn;
	if (hside_build(old, offsets, mo, false, &ho) < 0)
		return PROFF_ENOMEM;
	if (hside_build(new_, offsets, mo, true, &hn) < 0) {
		hside_free(&ho);
		return PROFF_ENOMEM;
	}
	hb_table(out, old, &ho, &hn, true, top, mo);
	fputc('\n', out);
	hb_table(out, new_, &hn, &ho, false, top, mo);
	hside_free(&ho);
	hside_free(&hn);
	return ferror(out) ? PROFF_EIO : 0;
}
