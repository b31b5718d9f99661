/* keys-branch.c — the branch keys of the sort-key catalogue (keys.c has
 * their entries): perf report -b's dso_from, dso_to, symbol_from,
 * symbol_to, cycles, mispredict, in_tx, abort, srcline_from and
 * srcline_to. A branch-mode profile's
 * sample stands for one branch (pf_node_branch of its stack); a row keeps
 * its first sample's branch (hist_entry.branch), which every key of the
 * row shows. perf's comparators (util/sort.c) are one per key for every
 * stage, read here from the rows themselves: branch rows are few, and
 * some of these comparators are not orders (mispredict), so perf's tree
 * insertions are always replayed (prep_branch). */
#include <stdio.h>
#include <string.h>

#include "keys.h"

/* the branch a row or a row's source shows (NULL: not a branch profile) */
static const pf_branch *src_branch(const hist *h, const hist_key_src *c)
{
	return pf_node_branch(h->prof, c->s->stack);
}
static const pf_branch *row_branch(const hist *h, const hist_entry *e)
{
	if (!h->prof->branches || e->branch >= h->prof->nr_branches)
		return NULL;
	return &h->prof->branches[e->branch];
}
/* what the branch keys read of node x's row: its branch, from the
 * replay's key (a probe of perf's input tree is no row of h->entries) */
#define ROW_OF(c, x) (&(hist_entry){ .branch = full((c), (x))->branch })

void hist_branch_fill(const hist *h, const hist_key_src *c, hist_entry *e)
{
	uint32_t b = c->s->stack < h->prof->cap_node_branch && h->prof->node_branch ?
		     h->prof->node_branch[c->s->stack] : PF_NONE;
	e->branch = b;
}

int hist_branch_prepare(hist *h, int slot, proff_error *err)
{
	if (!h->prof->node_branch)
		return proff_err_set(err, PROFF_EUSAGE, h->prof->path, PROFF_NO_OFFSET,
				     "Invalid --sort key: `%s' (a branch key: the profile is not read in branch mode, -b)",
				     hist_keys[h->keys[slot]].name);
	h->opts.order_replay = true;
	return 0;
}

/* A row's copy showing one end of its branch (from or to): what the
 * catalogue's dso and symbol printers read */
static hist_entry end_row(const hist *h, const hist_entry *e, bool to)
{
	hist_entry x = *e;
	const pf_branch *b = row_branch(h, e);
	if (!b)
		return x;
	const pf_loc *l = &h->prof->locs[to ? b->to : b->from];
	x.dso = l->dso;
	x.sym = l->sym;
	x.addr = l->addr;
	/* perf looks a branch address up in each cpumode's maps in turn: one
	 * no map holds shows the last one tried's level, 'H' (a host's guest
	 * modes) */
	x.level = l->dso == PF_NONE ? 'H' : l->level;
	return x;
}

/* ---- dso_from, dso_to ----------------------------------------------------------- */

static uint64_t end_dso_word(const hist *h, uint32_t loc)
{
	const pf_loc *l = &h->prof->locs[loc];
	if (l->dso == PF_NONE)
		return UINT64_MAX;
	const pf_dso *d = &h->prof->dsos[l->dso];
	return h->opts.verbose ? d->long_name : d->short_name;
}
void hist_w_dso_from(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? end_dso_word(h, b->from) : UINT64_MAX - 1;
	w[1] = 0;
}
void hist_w_dso_to(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? end_dso_word(h, b->to) : UINT64_MAX - 1;
	w[1] = 0;
}
/* perf's _sort__dso_cmp(left's map, right's map): not swapped, unlike dso */
static int64_t dso_end_cmp(const hist *h, const hist_entry *a, const hist_entry *b, bool to)
{
	hist_entry x = end_row(h, a, to), y = end_row(h, b, to);
	const char *nx = hist_dso_name(h, &x), *ny = hist_dso_name(h, &y);
	if (!nx || !ny)
		return !nx && !ny ? 0 : !ny ? -1 : 1;     /* cmp_null(right, left) */
	return strcmp(nx, ny);
}
int hist_k_dso_from_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	int64_t c = dso_end_cmp(h, a, b, false);
	return c < 0 ? -1 : c > 0;
}
int hist_k_dso_to_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	int64_t c = dso_end_cmp(h, a, b, true);
	return c < 0 ? -1 : c > 0;
}
int64_t hist_p_dso_from(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return dso_end_cmp(c->h, ROW_OF(c, li), ROW_OF(c, ri), false);
}
int64_t hist_p_dso_to(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return dso_end_cmp(c->h, ROW_OF(c, li), ROW_OF(c, ri), true);
}
/* perf's hists__calc_col_len: an end's dso counts when its symbol is
 * resolved; an unresolved one makes the column an address wide (16) */
static size_t dso_end_width(const hist *h, const hist_entry *e, bool to)
{
	hist_entry x = end_row(h, e, to);
	if (x.sym == PF_NONE)
		return h->opts.dsos.n ? 0 : 16;
	return strlen(hist_dso_name(h, &x));
}
size_t hist_k_dso_from_width(const hist *h, const hist_entry *e) { return dso_end_width(h, e, false); }
size_t hist_k_dso_to_width(const hist *h, const hist_entry *e) { return dso_end_width(h, e, true); }
int hist_k_dso_from_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	hist_entry x = end_row(h, e, false);
	return hist_key_dso_print(h, &x, buf, len, width, pad, sep);
}
int hist_k_dso_to_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	hist_entry x = end_row(h, e, true);
	return hist_key_dso_print(h, &x, buf, len, width, pad, sep);
}
void hist_v_dso_from(const hist *h, const hist_entry *e, hist_key_value *v)
{
	hist_entry x = end_row(h, e, false);
	v->s = hist_dso_name(h, &x);
}
void hist_v_dso_to(const hist *h, const hist_entry *e, hist_key_value *v)
{
	hist_entry x = end_row(h, e, true);
	v->s = hist_dso_name(h, &x);
}

/* ---- symbol_from, symbol_to ----------------------------------------------------- */

/* perf's sort__sym_from_cmp: unresolved ends by raw address, else
 * _sort__sym_cmp (symbol bounds; no dso) */
static void end_sym_words(const hist *h, uint32_t loc, uint64_t w[2])
{
	const pf_loc *l = &h->prof->locs[loc];
	if (l->sym == PF_NONE) {
		w[0] = l->ip;
		w[1] = 0;
	} else {
		w[0] = h->prof->syms[l->sym].start;
		w[1] = h->prof->syms[l->sym].end | (1ULL << 63);
	}
}
void hist_w_sym_from(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	if (b)
		end_sym_words(h, b->from, w);
	else
		w[0] = w[1] = UINT64_MAX;
}
void hist_w_sym_to(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	if (b)
		end_sym_words(h, b->to, w);
	else
		w[0] = w[1] = UINT64_MAX;
}
static int64_t sym_end_cmp(const hist *h, const hist_entry *a, const hist_entry *b, bool to)
{
	const pf_branch *x = row_branch(h, a), *y = row_branch(h, b);
	if (!x || !y)
		return !x && !y ? 0 : !x ? -1 : 1;
	const pf_loc *l = &h->prof->locs[to ? x->to : x->from];
	const pf_loc *r = &h->prof->locs[to ? y->to : y->from];
	if (l->sym == PF_NONE && r->sym == PF_NONE)
		return (int64_t)(r->ip - l->ip);
	if (l->sym == PF_NONE || r->sym == PF_NONE)
		return l->sym == PF_NONE ? -1 : 1;        /* cmp_null(left, right) */
	if (l->sym == r->sym)
		return 0;
	const pf_sym *sl = &h->prof->syms[l->sym], *sr = &h->prof->syms[r->sym];
	if (sl->start != sr->start)
		return (int64_t)(sr->start - sl->start);
	return (int64_t)(sr->end - sl->end);
}
int hist_k_sym_from_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	int64_t c = sym_end_cmp(h, a, b, false);
	return c < 0 ? -1 : c > 0;
}
int hist_k_sym_to_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	int64_t c = sym_end_cmp(h, a, b, true);
	return c < 0 ? -1 : c > 0;
}
int64_t hist_p_sym_from(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return sym_end_cmp(c->h, ROW_OF(c, li), ROW_OF(c, ri), false);
}
int64_t hist_p_sym_to(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return sym_end_cmp(c->h, ROW_OF(c, li), ROW_OF(c, ri), true);
}
/* perf's hists__calc_col_len: a resolved end as the symbol column (its
 * name, -v's address and origin); an unresolved one an address wide
 * (16 + 4 + 2, -v or not) */
static size_t sym_end_width(const hist *h, const hist_entry *e, bool to)
{
	hist_entry x = end_row(h, e, to);
	return x.sym == PF_NONE ? 16 + 4 + 2 : hist_key_sym_width(h, &x);
}
size_t hist_k_sym_from_width(const hist *h, const hist_entry *e) { return sym_end_width(h, e, false); }
size_t hist_k_sym_to_width(const hist *h, const hist_entry *e) { return sym_end_width(h, e, true); }
/* an unresolved end's address is printed whole, past a column sized
 * without -v's address (perf's) */
static int sym_end_print(const hist *h, const hist_entry *e, bool to, char *buf, size_t len, int width, bool pad,
			 char sep)
{
	hist_entry x = end_row(h, e, to);
	if (x.sym != PF_NONE)
		return hist_key_sym_print(h, &x, buf, len, width, pad, sep);
	int n = hist_key_sym_print(h, &x, buf, len, (int)len - 1, false, sep);
	if (pad && n < width && (size_t)width < len) {
		memset(buf + n, ' ', (size_t)(width - n));
		n = width;
		buf[n] = '\0';
	}
	return n;
}
int hist_k_sym_from_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return sym_end_print(h, e, false, buf, len, width, pad, sep);
}
int hist_k_sym_to_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return sym_end_print(h, e, true, buf, len, width, pad, sep);
}
void hist_v_sym_from(const hist *h, const hist_entry *e, hist_key_value *v)
{
	hist_entry x = end_row(h, e, false);
	v->s = hist_sym_name(h, &x);
}
void hist_v_sym_to(const hist *h, const hist_entry *e, hist_key_value *v)
{
	hist_entry x = end_row(h, e, true);
	v->s = hist_sym_name(h, &x);
}

/* ---- cycles, mispredict, in_tx, abort: the flags ----------------------------------- */

static uint32_t row_flags(const hist *h, const hist_entry *e)
{
	const pf_branch *b = row_branch(h, e);
	return b ? b->flags : 0;
}
static int put_left(char *buf, size_t len, const char *s, int width)
{
	int n = snprintf(buf, len, "%-*s", width, s);
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}

void hist_w_cycles(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? pf_branch_cycles(b) : UINT64_MAX;
	w[1] = 0;
}
static unsigned row_cycles(const hist *h, const hist_entry *e) { return (row_flags(h, e) >> 4) & 0xffff; }
int hist_k_cycles_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	unsigned x = row_cycles(h, a), y = row_cycles(h, b);
	return x < y ? -1 : x > y;
}
int64_t hist_p_cycles(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	/* perf: left's cycles less right's */
	return (int64_t)row_cycles(c->h, ROW_OF(c, li)) - (int64_t)row_cycles(c->h, ROW_OF(c, ri));
}
int hist_k_cycles_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	unsigned cy = row_cycles(h, e);
	char tmp[16];
	snprintf(tmp, sizeof(tmp), "%u", cy);
	return put_left(buf, len, cy ? tmp : "-", width);
}
void hist_v_cycles(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = row_cycles(h, e); }

/* mispredict: perf's comparator tells only equal (0) from not (1) */
void hist_w_mispredict(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? b->flags & (PF_BR_MISPRED | PF_BR_PREDICTED) : UINT64_MAX;
	w[1] = 0;
}
static uint32_t row_mp(const hist *h, const hist_entry *e) { return row_flags(h, e) & (PF_BR_MISPRED | PF_BR_PREDICTED); }
int hist_k_mispredict_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	uint32_t x = row_mp(h, a), y = row_mp(h, b);
	return x < y ? -1 : x > y;
}
int64_t hist_p_mispredict(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return row_mp(c->h, ROW_OF(c, li)) != row_mp(c->h, ROW_OF(c, ri));
}
static const char *mispredict_text(const hist *h, const hist_entry *e)
{
	uint32_t f = row_mp(h, e);
	return f & PF_BR_PREDICTED ? "N" : f & PF_BR_MISPRED ? "Y" : "N/A";
}
int hist_k_mispredict_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_left(buf, len, mispredict_text(h, e), width);
}
void hist_v_mispredict(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = mispredict_text(h, e); }

static void w_flag(const hist *h, const hist_key_src *c, uint64_t w[2], uint32_t bit)
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? (b->flags & bit) != 0 : UINT64_MAX;
	w[1] = 0;
}
void hist_w_in_tx(const hist *h, const hist_key_src *c, uint64_t w[2]) { w_flag(h, c, w, PF_BR_IN_TX); }
void hist_w_abort(const hist *h, const hist_key_src *c, uint64_t w[2]) { w_flag(h, c, w, PF_BR_ABORT); }
static int row_bit(const hist *h, const hist_entry *e, uint32_t bit) { return (row_flags(h, e) & bit) != 0; }
int hist_k_in_tx_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return row_bit(h, a, PF_BR_IN_TX) - row_bit(h, b, PF_BR_IN_TX);
}
int hist_k_abort_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return row_bit(h, a, PF_BR_ABORT) - row_bit(h, b, PF_BR_ABORT);
}
int64_t hist_p_in_tx(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return row_bit(c->h, ROW_OF(c, li), PF_BR_IN_TX) - row_bit(c->h, ROW_OF(c, ri), PF_BR_IN_TX);
}
int64_t hist_p_abort(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	return row_bit(c->h, ROW_OF(c, li), PF_BR_ABORT) - row_bit(c->h, ROW_OF(c, ri), PF_BR_ABORT);
}
int hist_k_in_tx_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_left(buf, len, row_bit(h, e, PF_BR_IN_TX) ? "T" : ".", width);
}
int hist_k_abort_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_left(buf, len, row_bit(h, e, PF_BR_ABORT) ? "A" : ".", width);
}
void hist_v_in_tx(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = (uint64_t)row_bit(h, e, PF_BR_IN_TX); }
void hist_v_abort(const hist *h, const hist_entry *e, hist_key_value *v) { v->n = (uint64_t)row_bit(h, e, PF_BR_ABORT); }

/* ---- srcline_from, srcline_to ------------------------------------------------------ */

/* the srcline of a row's branch end (made before the rows: hist_srclines
 * makes the branches' sources' too) */
static const char *end_srcline(const hist *h, const hist_entry *e, bool to)
{
	const pf_branch *b = row_branch(h, e);
	uint32_t sl = b ? h->prof->locs[to ? b->to : b->from].srcline : PF_NONE;
	return sl != PF_NONE ? pf_str(h->prof, sl) : "";
}
void hist_w_srcline_from(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? h->prof->locs[b->from].srcline : UINT64_MAX;
	w[1] = 0;
}
void hist_w_srcline_to(const hist *h, const hist_key_src *c, uint64_t w[2])
{
	const pf_branch *b = src_branch(h, c);
	w[0] = b ? h->prof->locs[b->to].srcline : UINT64_MAX;
	w[1] = 0;
}
int hist_k_srcline_from_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(end_srcline(h, a, false), end_srcline(h, b, false));
}
int hist_k_srcline_to_cmp(const hist *h, const hist_entry *a, const hist_entry *b)
{
	return strcmp(end_srcline(h, a, true), end_srcline(h, b, true));
}
/* perf 6.1: strcmp(right's, left's), computed on first use (lazy: the
 * column is as wide as the values computed when the rows were output) */
int64_t hist_p_srcline_from(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	replay_mark(c, slot, li, ri);
	return strcmp(end_srcline(c->h, ROW_OF(c, ri), false), end_srcline(c->h, ROW_OF(c, li), false));
}
int64_t hist_p_srcline_to(const replay_ctx *c, int slot, int stage, uint32_t li, uint32_t ri)
{
	replay_mark(c, slot, li, ri);
	return strcmp(end_srcline(c->h, ROW_OF(c, ri), true), end_srcline(c->h, ROW_OF(c, li), true));
}
size_t hist_k_srcline_from_width(const hist *h, const hist_entry *e) { return strlen(end_srcline(h, e, false)); }
size_t hist_k_srcline_to_width(const hist *h, const hist_entry *e) { return strlen(end_srcline(h, e, true)); }
static int put_cut(char *buf, size_t len, const char *s, int width)
{
	/* perf: "%-*.*s" — cut to the column and padded */
	int n = snprintf(buf, len, "%-*.*s", width, width, s);
	return n < 0 ? 0 : (size_t)n >= len ? (int)len - 1 : n;
}
/* Did perf compute the row's value of the key named `name` (perf's
 * order's lazy_known bit of its slot)? perf prints what it has */
static bool computed(const hist *h, const hist_entry *e, const char *name)
{
	const hist_key_def *k = hist_key_find(name);
	for (int i = 0; k && i < h->nkeys; i++)
		if (h->keys[i] == k->id)
			return (e->lazy_known >> i) & 1;
	return true;
}
int hist_k_srcline_from_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_cut(buf, len, computed(h, e, "srcline_from") ? end_srcline(h, e, false) : "(null)", width);
}
int hist_k_srcline_to_print(const hist *h, const hist_entry *e, char *buf, size_t len, int width, bool pad, char sep)
{
	return put_cut(buf, len, computed(h, e, "srcline_to") ? end_srcline(h, e, true) : "(null)", width);
}
void hist_v_srcline_from(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = end_srcline(h, e, false); }
void hist_v_srcline_to(const hist *h, const hist_entry *e, hist_key_value *v) { v->s = end_srcline(h, e, true); }
