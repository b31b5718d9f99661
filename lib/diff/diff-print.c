/* diff-print.c — perf diff's text output and proff's JSON for a diff_result.
 *
 * Text: the columns of perf diff (ui_init order: per file the Baseline or
 * compute column, then Formula, then Period / Base period), each rendered
 * into a 70-byte cell as perf does (so longer cells are cut at 69 chars),
 * right-aligned to the header width without -t, then padded to the width;
 * sort-key cells come from the hist layer's printers.
 *
 * Exact traces (pf_profile.exact) add uftrace's call columns after each
 * file's perf columns: the baseline's Calls and Avg total (inclusive time
 * per call), and per other file its Calls and Avg total with their deltas
 * against the baseline (docs/exact.md).
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "proff/diff.h"
#include "proff/util.h"
#include "proff/report.h"

#define CELL 70     /* perf's MAX_COL_WIDTH: the size of a diff cell buffer */

enum col_kind {
	COL_BASELINE, COL_PERIOD, COL_BASE_PERIOD, COL_DELTA, COL_RATIO, COL_WDIFF,
	COL_FORMULA, COL_DELTA_ABS, COL_CYCLES,
	COL_CALLS, COL_CALLS_DELTA, COL_AVG, COL_AVG_DELTA, COL__NR
};

static const struct { const char *name; int width; } col_defs[COL__NR] = {
	[COL_BASELINE]    = { "Baseline", 0 },
	[COL_PERIOD]      = { "Period", 14 },
	[COL_BASE_PERIOD] = { "Base period", 14 },
	[COL_DELTA]       = { "Delta", 7 },
	[COL_DELTA_ABS]   = { "Delta Abs", 7 },
	[COL_RATIO]       = { "Ratio", 14 },
	[COL_WDIFF]       = { "Weighted diff", 14 },
	[COL_FORMULA]     = { "Formula", CELL },
	[COL_CYCLES]      = { "[Program Block Range] Cycles Diff", 70 },
	[COL_CALLS]       = { "Calls", 10 },
	[COL_CALLS_DELTA] = { "Calls Delta", 11 },
	[COL_AVG]         = { "Avg total", 10 },
	[COL_AVG_DELTA]   = { "Avg Delta", 11 },
};

static const int compute_col[DIFF__NR_COMPUTE] = {
	[DIFF_DELTA] = COL_DELTA, [DIFF_DELTA_ABS] = COL_DELTA_ABS, [DIFF_RATIO] = COL_RATIO,
	[DIFF_WDIFF] = COL_WDIFF, [DIFF_CYCLES] = COL_CYCLES,
};

typedef struct col {
	int kind;
	size_t file;
	int width;
	char header[112];      /* right-aligned to width */
} col;

/* the files are exact traces: calls and times per call are known */
static bool result_exact(const diff_result *r)
{
	return r->hists[0] && r->hists[0]->prof->exact;
}

static size_t build_cols(const diff_result *r, const diff_opts *o, col *cols, size_t max)
{
	size_t n = 0;
	bool exact = result_exact(r);
	for (size_t f = 0; f < r->nfiles; f++) {
		int kinds[7], nk = 0;
		kinds[nk++] = f ? compute_col[o->compute] : COL_BASELINE;
		if (o->show_formula && f)
			kinds[nk++] = COL_FORMULA;
		if (o->show_period)
			kinds[nk++] = f ? COL_PERIOD : COL_BASE_PERIOD;
		if (exact) {
			kinds[nk++] = COL_CALLS;
			if (f)
				kinds[nk++] = COL_CALLS_DELTA;
			kinds[nk++] = COL_AVG;
			if (f)
				kinds[nk++] = COL_AVG_DELTA;
		}
		for (int i = 0; i < nk && n < max; i++) {
			col *c = &cols[n++];
			char name[100];
			c->kind = kinds[i];
			c->file = f;
			if (r->nfiles > 2)
				snprintf(name, sizeof(name), "%s/%zu", col_defs[c->kind].name, f);
			else
				snprintf(name, sizeof(name), "%s", col_defs[c->kind].name);
			c->width = col_defs[c->kind].width;
			if ((int)strlen(name) > c->width)
				c->width = (int)strlen(name);
			snprintf(c->header, sizeof(c->header), "%*s", c->width, name);
		}
	}
	return n;
}

/* The text of one diff cell, before alignment. Without -t perf renders the
 * Baseline and compute columns with its colour printers (used even when the
 * output is not a tty): "%*.2f%%", "%+*.2f%%", "%*.6f" and "%14ld", printed
 * whatever the value; with -t it uses the plain printers: "%.2f", "%+4.2F%%",
 * "%14.6F" only if > 0 and "%14ld" only if != 0. */
/* inclusive ns per call of an exact row */
static double avg_total(const hist_entry *e)
{
	return e->nr_events ? (double)e->ex_incl / (double)e->nr_events : 0;
}

/* a time as the report prints it ("1.234 us"; the cell is aligned by the
 * caller), with a sign for deltas */
static void fmt_time(char *buf, double ns, bool sign)
{
	char t[40];
	report_fmt_time(t, sizeof(t), fabs(ns));
	const char *v = t;
	while (*v == ' ')
		v++;
	if (sign)
		snprintf(buf, CELL, "%c%s", ns < 0 ? '-' : '+', v);
	else
		snprintf(buf, CELL, "%s", v);
}

/* The call columns of an exact row: the baseline's (file 0) or file f's
 * with its deltas. Blank where that file lacks the row. */
static void call_cell(const diff_row *row, const col *c, char *buf)
{
	const hist_entry *base = row->dummy ? NULL : row->e;
	const hist_entry *e = c->file ? row->pairs[c->file].e : base;
	if (!e)
		return;
	switch (c->kind) {
	case COL_CALLS:
		snprintf(buf, CELL, "%" PRIu64, e->nr_events);
		break;
	case COL_CALLS_DELTA:
		snprintf(buf, CELL, "%+" PRId64, (int64_t)(e->nr_events - (base ? base->nr_events : 0)));
		break;
	case COL_AVG:
		fmt_time(buf, avg_total(e), false);
		break;
	case COL_AVG_DELTA:
		if (base)
			fmt_time(buf, avg_total(e) - avg_total(base), true);
		break;
	default:
		break;
	}
}

static void cell_text(const diff_result *r, const diff_opts *o, const diff_row *row,
		      const col *c, char *buf)
{
	bool plain = o->field_sep != NULL;
	buf[0] = ' ';
	buf[1] = '\0';
	if (c->kind >= COL_CALLS) {
		call_cell(row, c, buf);
		return;
	}
	if (c->kind == COL_BASELINE) {
		if (row->dummy)
			return;
		if (plain)
			snprintf(buf, CELL, "%.2f", diff_row_baseline_pct(r, row));
		else
			snprintf(buf, CELL, "%*.2f%%", c->width - 1, diff_row_baseline_pct(r, row));
		return;
	}
	const diff_pair *p = c->file ? &row->pairs[c->file] : NULL;
	if (!p || !p->e) {
		if (c->kind == COL_BASE_PERIOD)
			snprintf(buf, CELL, "%" PRIu64, row->period);
		return;
	}
	switch (c->kind) {
	case COL_DELTA:
	case COL_DELTA_ABS:
		if (plain)
			snprintf(buf, CELL, "%+4.2F%%", p->delta);
		else
			snprintf(buf, CELL, "%+*.2f%%", c->width - 1, p->delta);
		break;
	case COL_RATIO:
		if (row->dummy)
			snprintf(buf, CELL, "N/A");
		else if (!plain)
			snprintf(buf, CELL, "%*.6f", c->width, p->ratio);
		else if (p->ratio > 0.0)
			snprintf(buf, CELL, "%14.6F", p->ratio);
		break;
	case COL_WDIFF:
		if (row->dummy)
			snprintf(buf, CELL, "N/A");
		else if (!plain || p->wdiff != 0)
			snprintf(buf, CELL, "%14" PRId64, p->wdiff);
		break;
	case COL_FORMULA:
		switch (o->compute) {
		case DIFF_DELTA:
		case DIFF_DELTA_ABS:
			snprintf(buf, CELL, "(%" PRIu64 " * 100 / %" PRIu64 ") - (%" PRIu64 " * 100 / %" PRIu64 ")",
				 p->e->period, r->totals[c->file], row->period, r->totals[0]);
			break;
		case DIFF_RATIO:
			snprintf(buf, CELL, "%.0F / %.0F", (double)p->e->period, (double)row->period);
			break;
		case DIFF_WDIFF:
			snprintf(buf, CELL, "(%" PRIu64 " * %" PRId64 ") - (%" PRIu64 " * %" PRId64 ")",
				 p->e->period, o->w2, row->period, o->w1);
			break;
		default:
			break;
		}
		break;
	case COL_PERIOD:
		snprintf(buf, CELL, "%" PRIu64, p->e->period);
		break;
	default:
		break;
	}
}

/* perf's get_percent_color, applied by its diff to the Baseline percentage
 * and to the compute column's value (delta, ratio, weighted diff alike):
 * red from 5 in magnitude, green above 0.5, else no colour (NULL) */
#define DIFF_COLOR_RED "\033[31m"
#define DIFF_COLOR_GREEN "\033[32m"
#define DIFF_COLOR_RESET "\033[m"
static const char *value_color(double v)
{
	if (fabs(v) >= 5.0)
		return DIFF_COLOR_RED;
	if (fabs(v) > 0.5)
		return DIFF_COLOR_GREEN;
	return NULL;
}

/* The colour of a cell as perf's colour printers give it (none with -t,
 * whose plain printers perf uses, nor for the period and formula columns) */
static const char *cell_color(const diff_result *r, const diff_opts *o, const diff_row *row, const col *c)
{
	if (!o->color || o->field_sep)
		return NULL;
	if (c->kind == COL_BASELINE)
		return row->dummy ? NULL : value_color(diff_row_baseline_pct(r, row));
	const diff_pair *p = c->file ? &row->pairs[c->file] : NULL;
	if (!p || !p->e)
		return NULL;
	switch (c->kind) {
	case COL_DELTA:
	case COL_DELTA_ABS:
		return value_color(p->delta);
	case COL_RATIO:
		return row->dummy ? NULL : value_color(p->ratio);
	case COL_WDIFF:
		return row->dummy ? NULL : value_color((double)p->wdiff);
	default:
		return NULL;
	}
}

/* a field-separator character inside names becomes '.' (done by the key printers) */
static char sep_char(const diff_opts *o)
{
	return o->field_sep ? o->field_sep[0] : 0;
}

/* Cells of sort keys whose hist-layer printer differs from perf diff's output
 * (kept here until the hist layer matches): returns true if printed. */
static bool key_cell_override(const diff_result *r, const diff_opts *o, const diff_row *row,
			      int id, int width, char *buf, size_t len)
{
	const hist_entry *e = row->e;
	char sep = sep_char(o);
	if (id == HK_CPU) {
		/* perf: "%*.*d" (zero-padded to the width; -1 when not sampled) */
		snprintf(buf, len, "%*.*d", width, width, e->cpu == PF_NONE ? -1 : (int)e->cpu);
		return true;
	}
	if (id == HK_SYM && o->verbose) {
		/* perf: "%-#*llx %c " with the map address (kernel: the ip), then "[%c] name" */
		char o_ch = '!';
		const pf_profile *p = row->h->prof;
		if (e->dso != PF_NONE)
			o_ch = p->dsos[e->dso].sd ? sym_dso_origin(p->dsos[e->dso].sd) : ' ';
		int n = snprintf(buf, len, "%-#*llx %c [%c] ", 18, (unsigned long long)e->addr, o_ch,
				 e->level ? e->level : '.');
		if (n < 0 || (size_t)n >= len)
			return true;
		const char *nm = hist_sym_name(row->h, e);
		char tmp[40];
		if (!nm) {
			snprintf(tmp, sizeof(tmp), "%#018llx", (unsigned long long)e->addr);
			nm = tmp;
		}
		size_t max = width > n ? (size_t)(width - n) : 0, i;
		for (i = 0; nm[i] && i < max && (size_t)n + 1 < len; i++)
			buf[n++] = (sep && nm[i] == sep) ? '.' : nm[i];
		buf[n] = '\0';
		return true;
	}
	return false;
}

/* header text of a sort key as perf prints it */
static const char *key_header(int id)
{
	if (id == HK_PID)
		return "    Pid:Command";
	return hist_keys[id].header;
}

static void put_sep(const diff_opts *o, bool first, FILE *out)
{
	if (!o->field_sep)
		fputs("  ", out);
	else if (!first)
		fputs(o->field_sep, out);
}

int diff_print_text(const diff_result *r, const diff_opts *o, const char *event_name,
		    const char *const *paths, bool first, FILE *out)
{
	col cols[3 * 64];
	size_t ncols = build_cols(r, o, cols, sizeof(cols) / sizeof(cols[0]));
	int last_key = -1;
	for (int k = 0; k < r->nkeys; k++)
		if (!r->key_elided[k])
			last_key = k;

	if (!o->quiet)
		fprintf(out, "%s# Event '%s'\n#\n", first ? "" : "\n", event_name);
	if (o->verbose || (r->nfiles > 2 && !o->quiet)) {
		fputs("# Data files:\n", out);
		for (size_t f = 0; f < r->nfiles; f++)
			fprintf(out, "#  [%zu] %s %s\n", f, paths[f], f ? "" : "(Baseline)");
		fputs("#\n", out);
	}

	if (!o->quiet) {
		bool fst = true;
		fputs("# ", out);
		for (size_t i = 0; i < ncols; i++) {
			if (!fst)
				fputs(o->field_sep ? o->field_sep : "  ", out);
			fst = false;
			fputs(cols[i].header, out);
		}
		for (int k = 0; k < r->nkeys; k++) {
			if (r->key_elided[k])
				continue;
			if (!fst)
				fputs(o->field_sep ? o->field_sep : "  ", out);
			fst = false;
			int w = (int)r->key_width[k];
			fprintf(out, "%-*.*s", w, w, key_header(r->keys[k]));
		}
		fputc('\n', out);
		if (!o->field_sep) {
			fst = true;
			fputs("# ", out);
			for (size_t i = 0; i < ncols; i++) {
				if (!fst)
					fputs("  ", out);
				fst = false;
				for (int j = 0; j < cols[i].width; j++)
					fputc('.', out);
			}
			for (int k = 0; k < r->nkeys; k++) {
				if (r->key_elided[k])
					continue;
				if (!fst)
					fputs("  ", out);
				fst = false;
				for (size_t j = 0; j < r->key_width[k]; j++)
					fputc('.', out);
			}
			fputc('\n', out);
			fputs("#\n", out);
		}
	}

	char cell[CELL], line[4096];
	for (size_t i = 0; i < r->nrows; i++) {
		const diff_row *row = &r->rows[i];
		if (row->filtered)
			continue;
		bool fst = true;
		for (size_t c = 0; c < ncols; c++) {
			put_sep(o, fst, out);
			fst = false;
			cell_text(r, o, row, &cols[c], cell);
			const char *color = cell_color(r, o, row, &cols[c]);
			int n;
			if (color)
				fputs(color, out);
			if (o->field_sep)
				n = fprintf(out, "%s", cell);
			else
				n = fprintf(out, "%*s", cols[c].width, cell);
			if (color)
				fputs(DIFF_COLOR_RESET, out);
			if (n < cols[c].width)
				fprintf(out, "%-*s", cols[c].width - n, " ");
		}
		for (int k = 0; k < r->nkeys; k++) {
			if (r->key_elided[k])
				continue;
			put_sep(o, fst, out);
			fst = false;
			int id = r->keys[k];
			/* perf leaves some cells (symbol, srcline) unpadded when last */
			bool pad = k != last_key || hist_keys[id].pad_last;
			/* a row not in the baseline is perf's dummy entry: its keys,
			 * no samples (the sample and period keys print 0) */
			hist_entry shown = *row->e;
			if (row->dummy)
				shown.period = shown.period_acc = shown.nr_events = 0;
			if (!key_cell_override(r, o, row, id, (int)r->key_width[k], line, sizeof(line)))
				hist_keys[id].print(row->h, &shown, line, sizeof(line), (int)r->key_width[k], pad, sep_char(o));
			else if (pad)
				snprintf(line + strlen(line), sizeof(line) - strlen(line), "%-*s",
					 (int)(r->key_width[k] > strlen(line) ? r->key_width[k] - strlen(line) : 0), "");
			fputs(line, out);
		}
		fputc('\n', out);
	}
	if (ferror(out))
		return PROFF_EIO;
	return 0;
}

/* ---- JSON ------------------------------------------------------------------------ */


void diff_json_begin(const diff_opts *o, const char *const *paths, size_t nfiles,
		     const char *sort_spec, FILE *out)
{
	fputs("{\"proff_diff\":1,\"files\":[", out);
	for (size_t f = 0; f < nfiles; f++) {
		fputs(f ? "," : "", out);
		pf_json_str(out, paths[f]);
	}
	fprintf(out, "],\"compute\":\"%s\"", diff_compute_name(o->compute));
	if (o->compute == DIFF_WDIFF)
		fprintf(out, ",\"weights\":[%" PRId64 ",%" PRId64 "]", o->w1, o->w2);
	fprintf(out, ",\"order\":%u,\"percentage\":\"%s\",\"baseline_only\":%s,\"sort\":",
		o->order, o->relative ? "relative" : "absolute", o->baseline_only ? "true" : "false");
	pf_json_str(out, sort_spec);
	fputs(",\"schema\":\"proff-diff/1\",\"events\":[", out);
}

static void json_key(FILE *out, const diff_result *r, const diff_row *row, int k)
{
	const diff_key *d = &row->keys[k];
	const hist_entry *e = row->e;
	pf_json_str(out, hist_keys[r->keys[k]].name);
	fputc(':', out);
	switch (r->keys[k]) {
	case HK_PID:
	case HK_TID:
		fprintf(out, "%" PRIu64, d->n);
		break;
	case HK_CPU:
		if (e->cpu == PF_NONE)
			fputs("null", out);
		else
			fprintf(out, "%" PRIu64, d->n);
		break;
	case HK_SYM:
		pf_json_str(out, d->s);
		fprintf(out, ",\"level\":\"%c\"", e->level ? e->level : '.');
		if (!d->s)
			fprintf(out, ",\"addr\":\"%#" PRIx64 "\"", e->addr);
		break;
	default:
		pf_json_str(out, d->s);
		break;
	}
}

/* an exact row's calls and inclusive time (ns), and against the baseline's
 * entry (NULL: the baseline lacks the row, or this is the baseline) the deltas */
static void json_calls(FILE *out, const hist_entry *e, const hist_entry *base)
{
	fprintf(out, ",\"calls\":%" PRIu64 ",\"total_ns\":%" PRIu64 ",\"avg_total_ns\":", e->nr_events, e->ex_incl);
	pf_json_num(out, avg_total(e));
	if (!base)
		return;
	fprintf(out, ",\"calls_delta\":%" PRId64 ",\"avg_total_delta_ns\":", (int64_t)(e->nr_events - base->nr_events));
	pf_json_num(out, avg_total(e) - avg_total(base));
}

void diff_json_event(const diff_result *r, const diff_opts *o, const char *event_name,
		     uint32_t type, uint64_t config, bool first, FILE *out)
{
	fputs(first ? "" : ",", out);
	fputs("{\"event\":", out);
	pf_json_str(out, event_name);
	fprintf(out, ",\"type\":%u,\"config\":%" PRIu64 ",\"totals\":[", type, config);
	for (size_t f = 0; f < r->nfiles; f++) {
		const hist *h = r->hists[f];
		fputs(f ? "," : "", out);
		if (!h) {
			fputs("null", out);
			continue;
		}
		fprintf(out, "{\"period\":%" PRIu64 ",\"non_filtered_period\":%" PRIu64 ",\"used\":%" PRIu64 "}",
			h->total_period, h->total_non_filtered_period, r->totals[f]);
	}
	fputs("],\"rows\":[", out);
	bool fst = true, exact = result_exact(r);
	for (size_t i = 0; i < r->nrows; i++) {
		const diff_row *row = &r->rows[i];
		if (row->filtered)
			continue;
		fputs(fst ? "\n" : ",\n", out);
		fst = false;
		fputs("{\"keys\":{", out);
		for (int k = 0; k < r->nkeys; k++) {
			if (k)
				fputc(',', out);
			json_key(out, r, row, k);
		}
		fprintf(out, "},\"in_baseline\":%s,\"baseline\":", row->dummy ? "false" : "true");
		if (row->dummy) {
			fputs("null", out);
		} else {
			fprintf(out, "{\"period\":%" PRIu64 ",\"percent\":", row->period);
			pf_json_num(out, diff_row_baseline_pct(r, row));
			if (exact)
				json_calls(out, row->e, NULL);
			fputc('}', out);
		}
		fputs(",\"files\":[", out);
		for (size_t f = 1; f < r->nfiles; f++) {
			const diff_pair *p = &row->pairs[f];
			fputs(f > 1 ? "," : "", out);
			if (!p->e) {
				fputs("null", out);
				continue;
			}
			fprintf(out, "{\"file\":%zu,\"period\":%" PRIu64 ",\"percent\":", f, p->e->period);
			pf_json_num(out, diff_pair_pct(r, f, p));
			fputs(",\"delta\":", out);
			pf_json_num(out, p->delta);
			fputs(",\"ratio\":", out);
			if (row->dummy)
				fputs("null", out);
			else
				pf_json_num(out, p->ratio);
			fputs(",\"wdiff\":", out);
			if (o->compute == DIFF_WDIFF && !row->dummy)
				fprintf(out, "%" PRId64, p->wdiff);
			else
				fputs("null", out);
			if (exact)
				json_calls(out, p->e, row->dummy ? NULL : row->e);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("]}", out);
}

void diff_json_end(FILE *out)
{
	fputs("]}\n", out);
}
