/* report.c — matching hot streams of two profiles and printing them.
 *
 * Matching is perf's callchain_cnode_matched: entries compared in lockstep,
 * entries without a srcline skipped, every compared entry must match and both
 * streams must end together; each old stream takes the first new stream (in
 * slot order) that matches, a new stream may be taken several times.
 * With a source map (--before/--after) an entry of the new side matches when
 * its line maps back to the old line, or maps to a changed line (-1): such a
 * pair is "changed" and reported in its own section with '*' on the changed
 * entries; --changed-func NAME marks the entries of NAME the same way.
 * The printed layout is perf 6.1's (stream.c, plain printf, %35s columns).
 */
#include <string.h>

#include "stream-int.h"

static const char *base_name(const char *p)
{
	const char *b = p ? strrchr(p, '/') : NULL;
	return b ? b + 1 : p;
}

static bool func_changed(const st_match_opts *mo, const char *sym)
{
	if (!mo || !mo->changed_funcs || !sym)
		return false;
	for (const char *const *f = mo->changed_funcs; *f; f++)
		if (!strcmp(*f, sym))
			return true;
	return false;
}

static bool same_sym(const st_call *a, const st_call *b)
{
	if (!a->sym || !b->sym)
		return a->sym == b->sym;
	return !strcmp(a->sym, b->sym);
}

/* 1 match, 0 no match, 2 match through a change */
static int entry_match(const st_call *b, const st_call *p, const st_match_opts *mo)
{
	if (func_changed(mo, p->sym) && same_sym(b, p))
		return 2;
	if (mo && mo->srcmap && p->path && b->path && same_sym(b, p)) {
		long ml = st_srcmap_line(mo->srcmap, p->path, p->line);
		if (ml > 0)
			return (unsigned long)ml == b->line && !strcmp(base_name(b->path), base_name(p->path)) ? 1 : 0;
		if (ml == -1 || ml == -2)
			return 2;
	}
	return strcmp(b->srcline, p->srcline) == 0 ? 1 : 0;
}

static int streams_match(const st_stream *bs, st_stream *ps, const st_match_opts *mo, bool mark)
{
	size_t j = 0;
	int match = 0;
	bool changed = false;
	for (size_t i = 0; i < bs->nr_calls; i++) {
		if (j >= ps->nr_calls)
			return 0;
		const st_call *b = &bs->calls[i], *p = &ps->calls[j];
		if (!b->srcline || !p->srcline) {
			j++;
			continue;
		}
		match = entry_match(b, p, mo);
		if (!match)
			return 0;
		if (match == 2) {
			changed = true;
			if (mark)
				ps->call_changed[j] = true;
		}
		j++;
	}
	if (j < ps->nr_calls)
		return 0;
	if (!match)
		return 0;
	return changed ? 2 : 1;
}

void st_match(st_side *old, st_side *new_, const st_match_opts *mo)
{
	for (size_t i = 0; i < old->nr_streams; i++) {
		st_stream *bs = &old->streams[i];
		bs->pair = -1;
		bs->changed = false;
		/* the first exact match (perf's rule); failing that, the first
		 * match through changed lines */
		int best = -1, bestm = 0;
		for (size_t j = 0; j < new_->nr_streams && bestm != 1; j++) {
			int m = streams_match(bs, &new_->streams[j], mo, false);
			if (m && (!bestm || m < bestm)) {
				best = (int)j;
				bestm = m;
			}
		}
		if (best < 0)
			continue;
		st_stream *ps = &new_->streams[best];
		bs->pair = best;
		ps->pair = (int)i;
		if (bestm == 2) {
			bs->changed = ps->changed = true;
			streams_match(bs, ps, mo, true);
		}
	}
}

static void sym_name(const st_call *c, char *buf, size_t len, bool star)
{
	if (c->sym) {
		if (c->srcline)
			snprintf(buf, len, "%s %s%s", c->sym, c->srcline, star ? "*" : "");
		else
			snprintf(buf, len, "%s%s", c->sym, star ? "*" : "");
	} else {
		snprintf(buf, len, "%#llx%s", (unsigned long long)c->ip, star ? "*" : "");
	}
}

static void head(const st_stream *st, char *buf, size_t len)
{
	snprintf(buf, len, "cycles: %lld, hits: %.2f%%", (long long)st->cycles, st->percent);
}

static void print_pair(FILE *out, int idx, const st_stream *bs, const st_stream *ps)
{
	char b1[512], b2[512], c1[512], c2[512];
	fprintf(out, "\nhot chain pair %d:\n", idx);
	head(bs, b1, sizeof(b1));
	head(ps, b2, sizeof(b2));
	fprintf(out, "%35s\t%35s\n", b1, b2);
	fprintf(out, "%35s\t%35s\n", "---------------------------", "--------------------------");
	size_t j = 0;
	for (size_t i = 0; i < bs->nr_calls; i++, j++) {
		if (j >= ps->nr_calls)
			return;
		sym_name(&bs->calls[i], c1, sizeof(c1), false);
		sym_name(&ps->calls[j], c2, sizeof(c2), ps->changed && ps->call_changed[j]);
		fprintf(out, "%35s\t%35s\n", c1, c2);
	}
}

static void print_chain(FILE *out, int idx, const st_stream *st, bool right)
{
	char b[512], c[512];
	fprintf(out, "\nhot chain %d:\n", idx);
	head(st, b, sizeof(b));
	if (right) {
		fprintf(out, "%35s\t%35s\n", "", b);
		fprintf(out, "%35s\t%35s\n", "", "--------------------------");
	} else {
		fprintf(out, "%35s\n", b);
		fprintf(out, "%35s\n", "--------------------------");
	}
	for (size_t i = 0; i < st->nr_calls; i++) {
		sym_name(&st->calls[i], c, sizeof(c), false);
		if (right)
			fprintf(out, "%35s\t%35s\n", "", c);
		else
			fprintf(out, "%35s\n", c);
	}
}

int st_report(FILE *out, st_side *old, st_side *new_, const st_report_opts *ro)
{
	double lim = ro ? ro->percent_limit : 0;
	int idx = 0;
	fprintf(out, "[ Matched hot streams ]\n");
	for (size_t i = 0; i < old->nr_streams; i++) {
		st_stream *bs = &old->streams[i];
		if (bs->pair < 0 || bs->changed || bs->percent < lim)
			continue;
		print_pair(out, ++idx, bs, &new_->streams[bs->pair]);
	}
	if (ro && ro->source_section) {
		idx = 0;
		fprintf(out, "\n[ Hot chains in old perf data but source line changed (*) in new perf data ]\n");
		for (size_t i = 0; i < old->nr_streams; i++) {
			st_stream *bs = &old->streams[i];
			if (bs->pair < 0 || !bs->changed || bs->percent < lim)
				continue;
			print_pair(out, ++idx, bs, &new_->streams[bs->pair]);
		}
	}
	idx = 0;
	fprintf(out, "\n[ Hot streams in old perf data only ]\n");
	for (size_t i = 0; i < old->nr_streams; i++) {
		st_stream *bs = &old->streams[i];
		if (bs->pair >= 0 || bs->percent < lim)
			continue;
		print_chain(out, ++idx, bs, false);
	}
	idx = 0;
	fprintf(out, "\n[ Hot streams in new perf data only ]\n");
	for (size_t i = 0; i < new_->nr_streams; i++) {
		st_stream *ps = &new_->streams[i];
		if (ps->pair >= 0 || ps->percent < lim)
			continue;
		print_chain(out, ++idx, ps, true);
	}
	return ferror(out) ? PROFF_EIO : 0;
}
