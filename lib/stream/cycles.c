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

static cyc_sym *find_sym(st_blocks *b, uint32_t dso, const st_addr *a)
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
	const st_map *m = st_find_any_map(s, pid, ip);
	if (!m)
		return NULL;
	*dso = m->dso;
	*maddr = st_map_addr(s, m, ip);
	*map_start = m->start;
	return st_resolve(s, m->dso, *maddr);
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
		uint32_t fd;
		uint64_t faddr, fstart;
		const st_addr *fa = resolve(s, sm->pid, e->from, &fd, &faddr, &fstart);
		if (!fa || !fa->sym)
			continue;
		uint64_t saddr = 0;
		if (k + 1 < sm->nr_branches) {
			uint64_t pto = sm->branches[k + 1].to;
			uint32_t td;
			uint64_t taddr, tstart;
			const st_addr *ta = resolve(s, sm->pid, pto, &td, &taddr, &tstart);
			bool same = ta && td == fd && ta->sym == fa->sym && ta->sym_start == fa->sym_start;
			if (same || pto == fa->sym_start + fstart)
				saddr = ta ? taddr : 0;
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
