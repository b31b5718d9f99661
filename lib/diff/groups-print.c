/* groups-print.c — the text and JSON of a diff of groups of runs.
 *
 * Text: a header saying what was tested and how (the test, what a per-run
 * value is, the false discovery rate, the groups and their files, notes on
 * what the runs cannot support), the runs' totals with each group's mean and
 * the delta (as hyperfine prints one number), then one line per row. The
 * row's columns are a table (`gcol`, one kind per column, a cell function
 * each) so that a column can be added without touching the others: per
 * metric (Children then Self with --children), the baseline group's mean,
 * then per compared group the compute method's value, the CI, p, q, the mark
 * of a significant change and, with --power, the runs needed; for exact
 * traces the calls and time per call (the baseline's means, then per group
 * the deltas with their q and mark, the q only with repeated runs); then
 * the keys.
 */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "diff-int.h"
#include "proff/report.h"

#define CELLSZ 96

enum gcol_kind { GC_MEAN, GC_PERIOD, GC_COMPUTE, GC_CI, GC_P, GC_Q, GC_MARK, GC_RUNS,
	/* exact traces: calls and inclusive time per call (groups-calls.c) */
	GC_CALLS, GC_CALLS_DELTA, GC_CALLS_Q, GC_CALLS_MARK, GC_AVG, GC_AVG_DELTA, GC_AVG_Q, GC_AVG_MARK,
	GC__NR };

typedef struct gcol {
	int kind;
	int which;            /* enum diff_which */
	size_t group;
	int width;
	char header[64];   /* name (40) + "/" + a group number */
} gcol;

static const char *const compute_header[DIFF__NR_COMPUTE] = {
	[DIFF_DELTA] = "Delta", [DIFF_DELTA_ABS] = "Delta Abs", [DIFF_RATIO] = "Ratio",
	[DIFF_WDIFF] = "Weighted diff", [DIFF_CYCLES] = "Cycles",
};

static bool absolute(const diff_table *t)
{
	return t->g.metric == DIFF_METRIC_ABSOLUTE;
}

static void fmt_value(const diff_table *t, double v, bool sign, char *buf)
{
	if (!absolute(t))
		snprintf(buf, CELLSZ, sign ? "%+.2f%%" : "%.2f%%", v);
	else if (t->time_unit)
		snprintf(buf, CELLSZ, sign ? "%+.3f" : "%.3f", v * 1e-6);
	else
		snprintf(buf, CELLSZ, sign ? "%+.0f" : "%.0f", v);
}

static void fmt_bound(const diff_table *t, double v, char *buf, size_t len)
{
	if (!absolute(t))
		snprintf(buf, len, "%+.2f", v);
	else if (t->time_unit)
		snprintf(buf, len, "%+.3f", v * 1e-6);
	else
		snprintf(buf, len, "%+.0f", v);
}

static void fmt_p(double p, char *buf)
{
	if (isnan(p))
		buf[0] = '\0';
	else if (p >= 0.001)
		snprintf(buf, CELLSZ, "%.3f", p);
	else
		snprintf(buf, CELLSZ, "%.1e", p);
}

/* what a row's test could not do, in a few letters */
static const char *status_text(const diff_table *t, int status)
{
	if (t->mode == DIFF_MODE_NOISELESS)
		return "no noise";
	switch (status) {
	case STATS_TOO_FEW: return "few runs";
	case STATS_ZERO_VARIANCE: return "zero var";
	default: return "";
	}
}

/* a time per call as the report prints it, without leading blanks, signed for deltas */
static void fmt_ns(double ns, bool sign, char *buf)
{
	char tmp[40];
	if (isnan(ns))
		return;
	report_fmt_time(tmp, sizeof(tmp), fabs(ns));
	const char *v = tmp;
	while (*v == ' ')
		v++;
	snprintf(buf, CELLSZ, "%s%s", !sign ? "" : ns < 0 ? "-" : "+", v);
}

static void calls_cell(const diff_table *t, const diff_trow *row, const gcol *c, char *buf)
{
	const diff_cstat *s = &row->calls[c->group];
	switch (c->kind) {
	case GC_CALLS: snprintf(buf, CELLSZ, "%.*f", t->group_runs[0] > 1 ? 1 : 0, s->calls); break;
	case GC_CALLS_DELTA: snprintf(buf, CELLSZ, "%+.*f", t->group_runs[c->group] > 1 || t->group_runs[0] > 1 ? 1 : 0, s->calls_delta); break;
	case GC_CALLS_Q:
		if (s->calls_q == 0)
			snprintf(buf, CELLSZ, "0");     /* a change without noise */
		else
			fmt_p(s->calls_q, buf);
		break;
	case GC_CALLS_MARK: snprintf(buf, CELLSZ, "%s", s->calls_significant ? "*" : ""); break;
	case GC_AVG: fmt_ns(s->avg, false, buf); break;
	case GC_AVG_DELTA: fmt_ns(s->avg_delta, true, buf); break;
	case GC_AVG_Q: fmt_p(s->avg_q, buf); break;
	case GC_AVG_MARK: snprintf(buf, CELLSZ, "%s", s->avg_significant ? "*" : ""); break;
	default: break;
	}
}

static bool mark_col(int kind)
{
	return kind == GC_MARK || kind == GC_CALLS_MARK || kind == GC_AVG_MARK;
}

static void cell_text(const diff_table *t, const diff_trow *row, const gcol *c, char *buf)
{
	buf[0] = '\0';
	if (c->kind >= GC_CALLS) {
		if (row->calls)
			calls_cell(t, row, c, buf);
		return;
	}
	const diff_gstat *s = &row->stat[c->which][c->group];
	switch (c->kind) {
	case GC_MEAN:
		fmt_value(t, s->mean, false, buf);
		break;
	case GC_PERIOD:
		snprintf(buf, CELLSZ, "%.0f", s->mean_period);
		break;
	case GC_COMPUTE:
		switch (t->o.compute) {
		case DIFF_RATIO:
			if (isnan(s->ratio))
				snprintf(buf, CELLSZ, "N/A");
			else
				snprintf(buf, CELLSZ, "%.6f", s->ratio);
			break;
		case DIFF_WDIFF:
			snprintf(buf, CELLSZ, "%" PRId64, s->wdiff);
			break;
		default:
			fmt_value(t, s->delta, true, buf);
			break;
		}
		break;
	case GC_CI:
		if (s->test.status == STATS_OK) {
			char lo[40], hi[40];
			fmt_bound(t, s->test.ci_low, lo, sizeof(lo));
			fmt_bound(t, s->test.ci_high, hi, sizeof(hi));
			snprintf(buf, CELLSZ, "[%s, %s]", lo, hi);
		}
		break;
	case GC_P:
		if (s->small)
			snprintf(buf, CELLSZ, "small");
		else if (s->test.status == STATS_OK)
			fmt_p(s->test.p, buf);
		else
			snprintf(buf, CELLSZ, "%s", status_text(t, s->test.status));
		break;
	case GC_Q:
		fmt_p(s->q, buf);
		break;
	case GC_MARK:
		snprintf(buf, CELLSZ, "%s", s->significant ? "*" : "");
		break;
	case GC_RUNS:
		if (s->runs_needed > t->g.power_max)
			snprintf(buf, CELLSZ, ">%ld", t->g.power_max);
		else if (s->runs_needed)
			snprintf(buf, CELLSZ, "%ld", s->runs_needed);
		break;
	}
}

/* On a terminal (o.color): a significant row's delta (the compute column)
 * red for an increase, green for a decrease; nothing else is coloured, and
 * nothing with -t */
#define GROUPS_COLOR_RED "\033[31m"
#define GROUPS_COLOR_GREEN "\033[32m"
#define GROUPS_COLOR_RESET "\033[m"
static const char *cell_color(const diff_table *t, const diff_trow *row, const gcol *c)
{
	if (!t->o.color || t->o.field_sep || c->kind != GC_COMPUTE)
		return NULL;
	const diff_gstat *s = &row->stat[c->which][c->group];
	if (!s->significant || s->delta == 0)
		return NULL;
	return s->delta > 0 ? GROUPS_COLOR_RED : GROUPS_COLOR_GREEN;
}

static void add_col(gcol *cols, size_t *n, int kind, int which, size_t group, const diff_table *t)
{
	gcol *c = &cols[(*n)++];
	char name[40] = "";
	c->kind = kind;
	c->which = which;
	c->group = group;
	switch (kind) {
	case GC_MEAN:
		snprintf(name, sizeof(name), "%s", !t->g.children ? "Baseline" : which == DIFF_CHILDREN ? "Children" : "Self");
		break;
	case GC_PERIOD: snprintf(name, sizeof(name), "%s", group ? "Period" : "Base period"); break;
	case GC_COMPUTE: snprintf(name, sizeof(name), "%s", compute_header[t->o.compute]); break;
	case GC_CI: snprintf(name, sizeof(name), "%g%% CI", 100 * t->g.stats.level); break;
	case GC_P: snprintf(name, sizeof(name), "p"); break;
	case GC_Q: snprintf(name, sizeof(name), "q"); break;
	case GC_RUNS: snprintf(name, sizeof(name), "Runs"); break;
	case GC_CALLS: snprintf(name, sizeof(name), "Calls"); break;
	case GC_CALLS_DELTA: snprintf(name, sizeof(name), "Calls Delta"); break;
	case GC_CALLS_Q: snprintf(name, sizeof(name), "Calls q"); break;
	case GC_AVG: snprintf(name, sizeof(name), "Avg total"); break;
	case GC_AVG_DELTA: snprintf(name, sizeof(name), "Avg Delta"); break;
	case GC_AVG_Q: snprintf(name, sizeof(name), "Avg q"); break;
	default: break;
	}
	if (t->ngroups > 2 && group && !mark_col(kind))
		snprintf(c->header, sizeof(c->header), "%s/%zu", name, group);
	else
		snprintf(c->header, sizeof(c->header), "%s", name);
	c->width = (int)strlen(c->header);
}

static size_t build_cols(const diff_table *t, gcol *cols)
{
	size_t n = 0;
	int order[2] = { DIFF_CHILDREN, DIFF_SELF };
	int nw = t->g.children ? 2 : 1;
	for (int wi = 0; wi < nw; wi++) {
		int w = t->g.children ? order[wi] : DIFF_SELF;
		for (size_t g = 0; g < t->ngroups; g++) {
			if (!g) {
				add_col(cols, &n, GC_MEAN, w, g, t);
				if (t->o.show_period)
					add_col(cols, &n, GC_PERIOD, w, g, t);
				continue;
			}
			add_col(cols, &n, GC_COMPUTE, w, g, t);
			if (t->o.show_period)
				add_col(cols, &n, GC_PERIOD, w, g, t);
			add_col(cols, &n, GC_CI, w, g, t);
			add_col(cols, &n, GC_P, w, g, t);
			add_col(cols, &n, GC_Q, w, g, t);
			add_col(cols, &n, GC_MARK, w, g, t);
			if (t->g.power && t->mode == DIFF_MODE_RUNS)
				add_col(cols, &n, GC_RUNS, w, g, t);
		}
	}
	if (!t->exact)
		return n;
	for (size_t g = 0; g < t->ngroups; g++) {
		if (!g) {
			add_col(cols, &n, GC_CALLS, DIFF_SELF, g, t);
			add_col(cols, &n, GC_AVG, DIFF_SELF, g, t);
			continue;
		}
		bool tested = t->mode == DIFF_MODE_RUNS;
		add_col(cols, &n, GC_CALLS_DELTA, DIFF_SELF, g, t);
		if (tested) {
			add_col(cols, &n, GC_CALLS_Q, DIFF_SELF, g, t);
			add_col(cols, &n, GC_CALLS_MARK, DIFF_SELF, g, t);
		}
		add_col(cols, &n, GC_AVG_DELTA, DIFF_SELF, g, t);
		if (tested) {
			add_col(cols, &n, GC_AVG_Q, DIFF_SELF, g, t);
			add_col(cols, &n, GC_AVG_MARK, DIFF_SELF, g, t);
		}
	}
	return n;
}

/* a key's cell: the name with the separator replaced, as perf's repsep */
static void key_cell(const diff_table *t, const diff_trow *row, int k, char *buf, size_t len)
{
	const diff_key *d = &row->keys[k];
	switch (t->keys[k]) {
	case HK_PID:
	case HK_TID:
		snprintf(buf, len, "%7" PRIu64 ":%s", d->n, row->pid_comm ? row->pid_comm : "");
		break;
	case HK_DSO:
		snprintf(buf, len, "%s", d->s ? d->s : "[unknown]");
		break;
	case HK_SYM:
		if (d->s)
			snprintf(buf, len, "[%c] %s", row->level ? row->level : '.', d->s);
		else
			snprintf(buf, len, "[%c] %#018" PRIx64, row->level ? row->level : '.', row->addr);
		break;
	case HK_CPU:
		snprintf(buf, len, "%03d", d->n == PF_NONE ? -1 : (int)d->n);
		break;
	default:
		snprintf(buf, len, "%s", d->s ? d->s : "");
		break;
	}
	if (t->o.field_sep)
		for (char *c = buf; *c; c++)
			if (*c == t->o.field_sep[0])
				*c = '.';
}

static const char *key_header(int id)
{
	return id == HK_PID ? "    Pid:Command" : hist_keys[id].header;
}

/* ---- the header --------------------------------------------------------------------- */

static const char *unit_name(const diff_table *t)
{
	return !absolute(t) ? "%" : t->time_unit ? "ms" : "events";
}

static void print_test(const diff_table *t, FILE *out)
{
	const char *what = absolute(t) ? (t->time_unit ? "period (ms)" : "period (events)")
				       : "share of the run's event total (%)";
	double lvl = 100 * t->g.stats.level;
	fprintf(out, "# Per-run value of a row: its %s%s; a row absent from a run counts 0.\n", what,
		t->g.children ? ", Self and Children" : "");
	switch (t->mode) {
	case DIFF_MODE_RUNS:
		if (t->g.stats.test == STATS_MWU)
			fprintf(out, "# Test: Mann-Whitney U of each group's runs against the baseline's, two-sided (exact\n"
				     "# for up to 8 runs on a side without ties, normal approximation otherwise); %g%% CI\n"
				     "# of the difference of the medians by the exact bootstrap (no random draws).\n",
				lvl);
		else
			fprintf(out, "# Test: Welch's t-test of each group's runs against the baseline's, two-sided;\n"
				     "# %g%% CI of the difference of the means.\n", lvl);
		break;
	case DIFF_MODE_SAMPLING:
		fprintf(out, "# SAMPLING NOISE ONLY: one run per group. Test: %s on effective sample\n"
			     "# counts (a row's period over the run's mean sample period), %g%% Wald CI. Run-to-run\n"
			     "# variation is not judged: that needs repeated runs (proff record -r N, proff ab).\n",
			absolute(t) ? "z-test of Poisson sums" : "two-proportion z-test", lvl);
		break;
	default:
		fprintf(out, "# Exact traces, one run per group: no sampling noise to judge, and run-to-run\n"
			     "# variation needs repeated runs (proff record -r N, proff ab): no row is tested.\n");
		break;
	}
	if (t->mode != DIFF_MODE_NOISELESS) {
		fprintf(out, "# Multiple comparisons: Benjamini-Hochberg over %zu tests; * marks a significant change,\n"
			     "# q <= %g.", t->ntests, t->g.fdr);
		if (t->g.min_share > 0)
			fprintf(out, " Rows under %g%% of the total (mean of both groups' runs) are not\n"
				     "# tested ('small'; --min-share).", t->g.min_share);
		fputc('\n', out);
	}
	if (t->exact) {
		fputs("# Calls: mean calls per run; Avg total: mean inclusive time per call over the runs\n"
		      "# with calls; deltas against the baseline group's means.", out);
		if (t->mode == DIFF_MODE_RUNS)
			fprintf(out, " Each tested with the same test on\n"
				     "# the per-run values, Benjamini-Hochberg over its own column (%zu and %zu tests);\n"
				     "# calls equal in every run of each group but different between them: q 0.",
				t->ntests_calls, t->ntests_avg);
		fputc('\n', out);
	}
	if (t->mode == DIFF_MODE_RUNS && t->g.stats.test == STATS_WELCH)
		for (size_t g = 0; g < t->ngroups; g++)
			if (t->group_runs[g] < 2)
				fprintf(out, "# Group [%zu] has one run: Welch's t-test needs two or more in every group\n"
					     "# (rows show 'few runs'; one run in every group gives the sampling-noise test).\n", g);
	if (t->min_p > t->g.fdr)
		fprintf(out, "# With these runs the smallest possible p-value is %.3g: no row can be significant\n"
			     "# at q <= %g; more runs are needed.\n", t->min_p, t->g.fdr);
	if (t->g.power && t->mode == DIFF_MODE_RUNS)
		fprintf(out, "# Runs: runs per group for %g%% power to detect the observed delta (t-test at level %g).\n",
			100 * t->g.power_target, t->g.fdr);
}

/* the runs' totals, each group's mean with its CI, the delta of the means */
static void print_totals(const diff_table *t, FILE *out)
{
	double sc = t->time_unit ? 1e-6 : 1;
	const char *unit = t->time_unit ? "ms" : "events";
	int dec = t->time_unit ? 3 : 0;
	fprintf(out, "# Event total per run (%s):\n", unit);
	for (size_t g = 0; g < t->ngroups; g++) {
		const diff_gstat *s = &t->total[g];
		size_t f = t->group_first[g], n = t->group_runs[g];
		fprintf(out, "#  [%zu]", g);
		for (size_t r = f; r < f + n; r++)
			fprintf(out, " %.*f", dec, (double)t->totals[r] * sc);
		fprintf(out, "  mean %.*f", dec, s->mean * sc);
		if (n >= 2) {
			double half = stats_t_quantile(0.5 + t->g.stats.level / 2, (double)(n - 1)) * s->sd / sqrt((double)n);
			fprintf(out, " +- %.*f", dec, half * sc);
		}
		if (g) {
			fprintf(out, ", delta %+.*f (%+.2f%%)", dec, s->delta * sc,
				t->total[0].mean > 0 ? 100 * s->delta / t->total[0].mean : 0.0);
			if (s->test.status == STATS_OK)
				fprintf(out, " [%+.*f, %+.*f], p %.2g", dec, s->test.ci_low * sc, dec, s->test.ci_high * sc,
					s->test.p);
		}
		fputc('\n', out);
	}
	if (t->ngroups && t->group_runs[0] >= 2)
		fprintf(out, "#  (mean +- half its %g%% CI; delta of the means, [its CI], p: %s)\n",
			100 * t->g.stats.level,
			t->mode != DIFF_MODE_RUNS ? "the sampling-noise test" :
			t->g.stats.test == STATS_MWU ? "Mann-Whitney U, CI of the median difference" : "Welch's t-test");
}

int diff_table_print_text(const diff_table *t, const char *event_name, const char *const *paths,
			  bool first, FILE *out)
{
	gcol cols[2 * 64 * 8 + 64 * 6 + 2];
	if (t->ngroups > 64)
		return PROFF_EUSAGE;
	size_t ncols = build_cols(t, cols);
	char cell[CELLSZ], line[4096];
	const diff_opts *o = &t->o;
	const char *sep = o->field_sep;

	/* widths over the printed rows */
	for (size_t i = 0; i < t->nrows; i++) {
		if (!t->rows[i].shown)
			continue;
		for (size_t c = 0; c < ncols; c++) {
			cell_text(t, &t->rows[i], &cols[c], cell);
			int w = (int)strlen(cell);
			if (w > cols[c].width)
				cols[c].width = w;
		}
	}

	if (!o->quiet) {
		fprintf(out, "%s# Event '%s'\n#\n", first ? "" : "\n", event_name);
		fputs("# Groups of runs:\n", out);
		for (size_t g = 0; g < t->ngroups; g++) {
			fprintf(out, "#  [%zu] %zu run%s%s:", g, t->group_runs[g], t->group_runs[g] == 1 ? "" : "s",
				g ? "" : " (baseline)");
			for (size_t r = t->group_first[g]; r < t->group_first[g] + t->group_runs[g]; r++)
				fprintf(out, " %s%s", paths[r], t->have_run[r] ? "" : " (no such event)");
			fputc('\n', out);
		}
		fputs("#\n", out);
		print_test(t, out);
		fputs("#\n", out);
		print_totals(t, out);
		fputs("#\n", out);
		/* column headers */
		bool fst = true;
		fputs("# ", out);
		for (size_t c = 0; c < ncols; c++) {
			if (!fst)
				fputs(sep ? sep : "  ", out);
			fst = false;
			if (sep)
				fputs(cols[c].header, out);
			else
				fprintf(out, "%*s", cols[c].width, cols[c].header);
		}
		for (int k = 0; k < t->nkeys; k++) {
			if (!fst)
				fputs(sep ? sep : "  ", out);
			fst = false;
			int w = (int)t->key_width[k];
			if (sep || k == t->nkeys - 1)
				fputs(key_header(t->keys[k]), out);
			else
				fprintf(out, "%-*s", w, key_header(t->keys[k]));
		}
		fputc('\n', out);
		if (!sep) {
			fst = true;
			fputs("# ", out);
			for (size_t c = 0; c < ncols; c++) {
				if (!fst)
					fputs("  ", out);
				fst = false;
				for (int j = 0; j < cols[c].width; j++)
					fputc(mark_col(cols[c].kind) ? ' ' : '.', out);
			}
			for (int k = 0; k < t->nkeys; k++) {
				if (!fst)
					fputs("  ", out);
				fst = false;
				for (size_t j = 0; j < t->key_width[k]; j++)
					fputc('.', out);
			}
			fputs("\n#\n", out);
		}
		fprintf(out, "# Values in %s%s.\n#\n", unit_name(t),
			absolute(t) && t->time_unit ? " (deltas and CIs too)" : absolute(t) ? "" : " of the run's total; deltas and CIs in percentage points");
	}

	for (size_t i = 0; i < t->nrows; i++) {
		const diff_trow *row = &t->rows[i];
		if (!row->shown)
			continue;
		bool fst = true;
		fputs(sep ? "" : "  ", out);
		for (size_t c = 0; c < ncols; c++) {
			if (!fst)
				fputs(sep ? sep : "  ", out);
			fst = false;
			cell_text(t, row, &cols[c], cell);
			const char *color = cell_color(t, row, &cols[c]);
			if (color)
				fputs(color, out);
			if (sep)
				fputs(cell, out);
			else if (mark_col(cols[c].kind))
				fprintf(out, "%-*s", cols[c].width, cell);
			else
				fprintf(out, "%*s", cols[c].width, cell);
			if (color)
				fputs(GROUPS_COLOR_RESET, out);
		}
		for (int k = 0; k < t->nkeys; k++) {
			if (!fst)
				fputs(sep ? sep : "  ", out);
			fst = false;
			key_cell(t, row, k, line, sizeof(line));
			if (sep || k == t->nkeys - 1)
				fputs(line, out);
			else
				fprintf(out, "%-*s", (int)t->key_width[k], line);
		}
		fputc('\n', out);
	}
	if (ferror(out))
		return PROFF_EIO;
	return 0;
}

size_t diff_table_print_regressions(const diff_table *t, const char *event_name, FILE *out)
{
	size_t n = 0;
	char line[4096], v[CELLSZ], b[CELLSZ];
	for (size_t i = 0; i < t->nrows; i++) {
		const diff_trow *row = &t->rows[i];
		int w;
		size_t g;
		if (!diff_trow_regression(t, row, &w, &g))
			continue;
		if (!n++)
			fprintf(out, "#\n# Regressions in '%s' (significant increases above %g%s):\n", event_name,
				t->g.fail_threshold, t->g.fail_relative ? "%" : absolute(t) ? (t->time_unit ? " ms" : "") : " pp");
		const diff_gstat *s = &row->stat[w][g];
		fmt_value(t, s->delta, true, v);
		fmt_value(t, row->stat[w][0].mean, false, b);
		fprintf(out, "#   %s%s", t->g.children ? (w == DIFF_CHILDREN ? "Children " : "Self ") : "", v);
		if (t->ngroups > 2)
			fprintf(out, " (group %zu)", g);
		fprintf(out, " from %s, q %.2g:", b, s->q);
		for (int k = 0; k < t->nkeys; k++) {
			key_cell(t, row, k, line, sizeof(line));
			fprintf(out, " %s", line);
		}
		fputc('\n', out);
	}
	return n;
}

/* ---- JSON ------------------------------------------------------------------------------ */


static const char *test_name(const diff_table *t)
{
	if (t->mode == DIFF_MODE_SAMPLING)
		return absolute(t) ? "poisson-sums" : "two-proportions";
	if (t->mode == DIFF_MODE_NOISELESS)
		return "none";
	return t->g.stats.test == STATS_MWU ? "mwu" : "welch";
}

static const char *status_name(int st)
{
	switch (st) {
	case STATS_OK: return "ok";
	case STATS_TOO_FEW: return "too few runs";
	case STATS_ZERO_VARIANCE: return "zero variance";
	default: return "?";
	}
}

void diff_table_json_begin(const diff_opts *o, const diff_group_opts *g, const char *const *paths,
			   size_t nruns, const uint32_t *group, const char *sort_spec, FILE *out)
{
	fputs("{\"proff_diff\":1,\"files\":[", out);
	for (size_t r = 0; r < nruns; r++) {
		fputs(r ? "," : "", out);
		pf_json_str(out, paths[r]);
	}
	fprintf(out, "],\"compute\":\"%s\"", diff_compute_name(o->compute));
	if (o->compute == DIFF_WDIFF)
		fprintf(out, ",\"weights\":[%" PRId64 ",%" PRId64 "]", o->w1, o->w2);
	fprintf(out, ",\"order\":%u,\"percentage\":\"%s\",\"baseline_only\":%s,\"sort\":",
		o->order, o->relative ? "relative" : "absolute", o->baseline_only ? "true" : "false");
	pf_json_str(out, sort_spec);
	fprintf(out, ",\"statistics\":{\"test\":\"%s\",\"metric\":\"%s\",\"confidence\":",
		g->stats.test == STATS_MWU ? "mwu" : "welch", g->metric == DIFF_METRIC_ABSOLUTE ? "absolute" : "share");
	pf_json_num(out, g->stats.level);
	fputs(",\"fdr\":", out);
	pf_json_num(out, g->fdr);
	fputs(",\"min_share\":", out);
	pf_json_num(out, g->min_share);
	fprintf(out, ",\"children\":%s", g->children ? "true" : "false");
	if (g->stats.test == STATS_MWU)
		fputs(",\"bootstrap\":\"exact\"", out);
	if (g->fail_on) {
		fputs(",\"fail_on_regression\":{\"threshold\":", out);
		pf_json_num(out, g->fail_threshold);
		fprintf(out, ",\"relative\":%s}", g->fail_relative ? "true" : "false");
	}
	fputs(",\"groups\":[", out);
	for (size_t r = 0; r < nruns; r++) {
		bool start = !r || group[r] != group[r - 1];
		if (start)
			fprintf(out, "%s{\"group\":%u,\"files\":[", r ? "]}," : "", group[r]);
		else
			fputc(',', out);
		pf_json_str(out, paths[r]);
	}
	fputs("]}]},\"schema\":\"proff-diff-groups/1\",\"events\":[", out);
}

static void json_runs(FILE *out, const diff_table *t, const diff_trow *row, int w, size_t g)
{
	fputs(",\"runs\":[", out);
	for (size_t r = t->group_first[g]; r < t->group_first[g] + t->group_runs[g]; r++) {
		fputs(r > t->group_first[g] ? "," : "", out);
		if (row)
			pf_json_num(out, diff_table_value(t, row, w, r));
		else
			fprintf(out, "%" PRIu64, t->totals[r]);
	}
	fputc(']', out);
}

static void json_gstat(FILE *out, const diff_table *t, const diff_trow *row, int w, size_t g)
{
	const diff_gstat *s = row ? &row->stat[w][g] : &t->total[g];
	fprintf(out, "%s{\"group\":%zu,\"mean\":", g ? "," : "", g);
	pf_json_num(out, s->mean);
	fputs(",\"mean_period\":", out);
	pf_json_num(out, s->mean_period);
	fputs(",\"sd\":", out);
	pf_json_num(out, s->sd);
	json_runs(out, t, row, w, g);
	if (g) {
		fputs(",\"delta\":", out);
		pf_json_num(out, s->delta);
		if (row) {
			fputs(",\"ratio\":", out);
			pf_json_num(out, s->ratio);
			if (t->o.compute == DIFF_WDIFF)
				fprintf(out, ",\"wdiff\":%" PRId64, s->wdiff);
		}
		fprintf(out, ",\"status\":\"%s\",\"ci\":", t->mode == DIFF_MODE_NOISELESS ? "not tested" :
			row && row->stat[w][g].small ? "small" : status_name(s->test.status));
		if (s->test.status == STATS_OK) {
			fputc('[', out);
			pf_json_num(out, s->test.ci_low);
			fputc(',', out);
			pf_json_num(out, s->test.ci_high);
			fputc(']', out);
		} else {
			fputs("null", out);
		}
		fputs(",\"estimate\":", out);
		pf_json_num(out, s->test.delta);
		fputs(",\"p\":", out);
		pf_json_num(out, s->test.status == STATS_OK ? s->test.p : NAN);
		if (row) {
			fputs(",\"q\":", out);
			pf_json_num(out, s->q);
			fprintf(out, ",\"significant\":%s", s->significant ? "true" : "false");
			if (t->g.power && s->runs_needed)
				fprintf(out, ",\"runs_needed\":%ld", s->runs_needed);
			if (t->g.fail_on) {
				int rw;
				size_t rg;
				bool reg = diff_trow_regression(t, row, &rw, &rg) && rw == w && rg == g;
				fprintf(out, ",\"regression\":%s", reg ? "true" : "false");
			}
		}
		if (t->g.stats.test == STATS_MWU && t->mode == DIFF_MODE_RUNS && s->test.status == STATS_OK)
			fprintf(out, ",\"exact\":%s", s->test.exact ? "true" : "false");
	}
	fputc('}', out);
}

/* exact traces: a row's calls (avg false) or inclusive ns per call (avg
 * true) per group: mean, sd, the runs' values, and against the baseline
 * the delta, the test's status and CI, p, q */
static void json_calls(FILE *out, const diff_table *t, const diff_trow *row, bool avg)
{
	fprintf(out, ",\"%s\":[", avg ? "avg_total_ns" : "calls");
	for (size_t g = 0; g < t->ngroups; g++) {
		const diff_cstat *s = &row->calls[g];
		const stats_result *r = avg ? &s->avg_test : &s->calls_test;
		fprintf(out, "%s{\"group\":%zu,\"mean\":", g ? "," : "", g);
		pf_json_num(out, avg ? s->avg : s->calls);
		fputs(",\"sd\":", out);
		pf_json_num(out, avg ? s->avg_sd : s->calls_sd);
		fputs(",\"runs\":[", out);
		for (size_t i = 0; i < t->group_runs[g]; i++) {
			size_t run = t->group_first[g] + i;
			uint64_t c = diff_table_calls(t, row, run);
			fputs(i ? "," : "", out);
			if (!avg)
				fprintf(out, "%" PRIu64, c);
			else
				pf_json_num(out, c ? (double)diff_table_incl(t, row, run) / (double)c : NAN);
		}
		fputc(']', out);
		if (g) {
			double q = avg ? s->avg_q : s->calls_q;
			bool tested = t->mode == DIFF_MODE_RUNS && !row->stat[DIFF_SELF][g].small && row->shown;
			fputs(",\"delta\":", out);
			pf_json_num(out, avg ? s->avg_delta : s->calls_delta);
			fprintf(out, ",\"status\":\"%s\",\"ci\":", t->mode == DIFF_MODE_NOISELESS ? "not tested" :
				row->stat[DIFF_SELF][g].small ? "small" : status_name(r->status));
			if (tested && r->status == STATS_OK) {
				fputc('[', out);
				pf_json_num(out, r->ci_low);
				fputc(',', out);
				pf_json_num(out, r->ci_high);
				fputc(']', out);
			} else {
				fputs("null", out);
			}
			fputs(",\"p\":", out);
			pf_json_num(out, tested && r->status == STATS_OK ? r->p : NAN);
			fputs(",\"q\":", out);
			pf_json_num(out, q);
			fprintf(out, ",\"significant\":%s",
				(avg ? s->avg_significant : s->calls_significant) ? "true" : "false");
		}
		fputc('}', out);
	}
	fputc(']', out);
}

void diff_table_json_event(const diff_table *t, const char *event_name, uint32_t type,
			   uint64_t config, bool first, FILE *out)
{
	fputs(first ? "" : ",", out);
	fputs("{\"event\":", out);
	pf_json_str(out, event_name);
	fprintf(out, ",\"type\":%u,\"config\":%" PRIu64 ",\"test\":\"%s\",\"unit\":\"%s\",\"tests\":%zu,\"min_p\":",
		type, config, test_name(t), !absolute(t) ? "percent" : t->time_unit ? "ns" : "events", t->ntests);
	pf_json_num(out, t->min_p);
	fputs(",\"runs\":[", out);
	for (size_t r = 0; r < t->nruns; r++) {
		fprintf(out, "%s{\"group\":%u,\"total\":%" PRIu64 ",\"samples\":%" PRIu64 ",\"has_event\":%s}",
			r ? "," : "", t->group[r], t->totals[r], t->samples[r], t->have_run[r] ? "true" : "false");
	}
	fputs("],\"total\":[", out);
	for (size_t g = 0; g < t->ngroups; g++)
		json_gstat(out, t, NULL, DIFF_SELF, g);
	fputs("],\"rows\":[", out);
	bool fst = true;
	size_t nreg = 0;
	for (size_t i = 0; i < t->nrows; i++) {
		const diff_trow *row = &t->rows[i];
		if (!row->shown)
			continue;
		nreg += diff_trow_regression(t, row, NULL, NULL);
		fputs(fst ? "\n" : ",\n", out);
		fst = false;
		fputs("{\"keys\":{", out);
		for (int k = 0; k < t->nkeys; k++) {
			const diff_key *d = &row->keys[k];
			fputs(k ? "," : "", out);
			pf_json_str(out, hist_keys[t->keys[k]].name);
			fputc(':', out);
			switch (t->keys[k]) {
			case HK_PID:
			case HK_TID: fprintf(out, "%" PRIu64, d->n); break;
			case HK_CPU:
				if (d->n == PF_NONE)
					fputs("null", out);
				else
					fprintf(out, "%" PRIu64, d->n);
				break;
			case HK_SYM:
				pf_json_str(out, d->s);
				fprintf(out, ",\"level\":\"%c\"", row->level ? row->level : '.');
				if (!d->s)
					fprintf(out, ",\"addr\":\"%#" PRIx64 "\"", row->addr);
				break;
			default: pf_json_str(out, d->s); break;
			}
		}
		fprintf(out, "},\"in_baseline\":%s", row->in_baseline ? "true" : "false");
		int order[2] = { DIFF_SELF, DIFF_CHILDREN };
		for (int wi = 0; wi < (t->g.children ? 2 : 1); wi++) {
			int w = order[wi];
			fprintf(out, ",\"%s\":[", w == DIFF_SELF ? "self" : "children");
			for (size_t g = 0; g < t->ngroups; g++)
				json_gstat(out, t, row, w, g);
			fputc(']', out);
		}
		if (row->calls) {
			json_calls(out, t, row, false);
			json_calls(out, t, row, true);
		}
		fputc('}', out);
	}
	fprintf(out, "],\"regressions\":%zu}", nreg);
}

void diff_table_json_end(FILE *out)
{
	fputs("]}\n", out);
}
