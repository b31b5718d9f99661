/* flamegraph-write.c — writing a built flame graph: the static SVG (the
 * caller view by function, drawn as flamegraph.pl draws it: one <g> per
 * frame with its <title>), the JSON document of every view, and the
 * interactive page around it (the page's CSS and JS: flamegraph-page.c).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flamegraph-int.h"
#include "proff/flamegraph.h"

/* flamegraph.pl's geometry */
#define IMAGE_WIDTH 1200.0
#define XPAD 10.0
#define FRAME_HEIGHT 16.0
#define FONT_SIZE 12.0
#define FONT_WIDTH 0.59
#define YPAD1 (FONT_SIZE * 3)
#define YPAD2 (FONT_SIZE * 2 + 10)

static const char *unit_name(const flamegraph *g)
{
	return g->exact ? "ns" : "samples";
}

/* "1,234,567" (flamegraph.pl's thousands separators) */
static const char *commas(uint64_t v, char *buf, size_t len)
{
	char d[32];
	int n = snprintf(d, sizeof(d), "%llu", (unsigned long long)v), o = 0;
	for (int i = 0; i < n && (size_t)o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = d[i];
	}
	buf[o] = 0;
	return buf;
}

static void xml_text(FILE *out, const char *s, size_t max)
{
	for (size_t i = 0; s[i] && i < max; i++) {
		switch (s[i]) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		default:
			if ((unsigned char)s[i] >= 0x20 || s[i] == '\t')
				fputc(s[i], out);
		}
	}
}

double fg_share(const flamegraph *g, int side, uint64_t v)
{
	return g->total[side] ? (double)v / (double)g->total[side] : 0.0;
}

/* The frame's title in FlameGraph's convention: "NAME (N samples, P%)",
 * a diff's "NAME (N samples, P%; +D%)" with N and P the new side's and D
 * the inclusive change in percentage points. */
void fg_frame_title(const flamegraph *g, const fg_view *v, size_t i, char *buf, size_t len)
{
	const fg_frame *f = &v->frames[i];
	int side = g->nsides - 1;
	char num[48];
	commas(f->total[side], num, sizeof(num));
	const char *name = g->names.strs[f->name];
	if (f->parent == UINT32_MAX) {
		snprintf(buf, len, "all (%s %s, 100%%)", num, unit_name(g));
		return;
	}
	char sl[1024] = "";
	if (f->srcline)
		snprintf(sl, sizeof(sl), " %s", g->names.strs[f->srcline]);
	double pct = 100.0 * fg_share(g, side, f->total[side]);
	if (g->nsides == 1) {
		snprintf(buf, len, "%s%s (%s %s, %.2f%%)", name, sl, num, unit_name(g), pct);
		return;
	}
	double d = pct - 100.0 * fg_share(g, 0, f->total[0]);
	snprintf(buf, len, "%s%s (%s %s, %.2f%%; %s%.2f%%)", name, sl, num, unit_name(g), pct, d > 0 ? "+" : "", d);
}

/* Widths (shares of the total) for a diff's "larger side": a frame is as
 * wide as its larger side's share, and at least as wide as its children
 * and its larger self need, so both shapes fit (for one profile: its share). */
int fg_layout_widths(const flamegraph *g, const fg_view *v, double *w)
{
	double *acc = calloc(v->n + 1, sizeof(double));
	if (!acc)
		return -1;
	for (size_t i = v->n; i-- > 0;) {
		const fg_frame *f = &v->frames[i];
		double mine = 0, self = 0;
		for (int s = 0; s < g->nsides; s++) {
			mine = fmax(mine, fg_share(g, s, f->total[s]));
			self = fmax(self, fg_share(g, s, f->self[s]));
		}
		w[i] = g->nsides == 1 ? mine : fmax(mine, self + acc[i]);
		if (f->parent != UINT32_MAX)
			acc[f->parent] += w[i];
	}
	free(acc);
	return 0;
}

static void hot_colour(const char *name, char *buf, size_t len)
{
	uint64_t h = pf_hash_bytes(name, strlen(name), 7);
	double v1 = (double)(h & 0xffff) / 65535.0, v2 = (double)((h >> 16) & 0xffff) / 65535.0,
	       v3 = (double)((h >> 32) & 0xffff) / 65535.0;
	snprintf(buf, len, "rgb(%d,%d,%d)", 205 + (int)(50 * v3), (int)(230 * v1), (int)(55 * v2));
}

/* red for growth, blue for shrinkage, by |d| / max; grey when a test found
 * the change within chance */
static void diff_colour(double d, double max, const fg_sig *sig, char *buf, size_t len)
{
	if (sig && sig->tested && !sig->significant) {
		snprintf(buf, len, "rgb(200,200,200)");
		return;
	}
	double x = max > 0 ? fmin(fabs(d) / max, 1.0) : 0;
	int c = (int)(210 * (1 - x));
	if (d > 0)
		snprintf(buf, len, "rgb(255,%d,%d)", c, c);
	else if (d < 0)
		snprintf(buf, len, "rgb(%d,%d,255)", c, c);
	else
		snprintf(buf, len, "rgb(255,255,255)");
}

static double inclusive_delta(const flamegraph *g, const fg_frame *f)
{
	return 100.0 * (fg_share(g, 1, f->total[1]) - fg_share(g, 0, f->total[0]));
}

int fg_write_svg(const flamegraph *g, FILE *out)
{
	const fg_view *v = fg_get_view(g, FG_BY_FUNCTION, FG_CALLER);
	if (!v || !v->n)
		return -1;
	double *w = malloc(v->n * sizeof(double)), *x = malloc(v->n * sizeof(double)),
	       *next = malloc(v->n * sizeof(double));
	if (!w || !x || !next || fg_layout_widths(g, v, w) < 0) {
		free(w); free(x); free(next);
		return -1;
	}
	double scale = w[0] > 0 ? (IMAGE_WIDTH - 2 * XPAD) / w[0] : 0;
	double height = (v->max_depth + 1) * FRAME_HEIGHT + YPAD1 + YPAD2;
	double maxd = 0;
	for (size_t i = 1; g->nsides == 2 && i < v->n; i++)
		if (!v->sig_total[i].tested || v->sig_total[i].significant)
			maxd = fmax(maxd, fabs(inclusive_delta(g, &v->frames[i])));
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<!-- written by proff: docs/flamegraph.md -->\n"
		"<style type=\"text/css\">text { font-family:Verdana; font-size:%.0fpx; fill:rgb(0,0,0); } "
		"#title { text-anchor:middle; font-size:%.0fpx; } .only0 rect { stroke:rgb(0,0,160); stroke-dasharray:2,1; }</style>\n"
		"<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"rgb(245,245,238)\"/>\n"
		"<text id=\"title\" x=\"%.0f\" y=\"%.0f\">",
		IMAGE_WIDTH, height, IMAGE_WIDTH, height, FONT_SIZE, FONT_SIZE + 5, IMAGE_WIDTH, height,
		IMAGE_WIDTH / 2, FONT_SIZE * 2);
	xml_text(out, g->title, SIZE_MAX);
	fputs("</text>\n", out);
	if (g->nsides == 2) {
		fprintf(out, "<text id=\"subtitle\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">", IMAGE_WIDTH / 2,
			FONT_SIZE * 3.4);
		xml_text(out, g->paths[0], 400);
		fputs(" \xe2\x86\x92 ", out);
		xml_text(out, g->paths[1], 400);
		fputs(v->sig_total[0].tested ? "" : " (no significance test made: every change coloured)", out);
		fputs("</text>\n", out);
	}
	fputs("<g id=\"frames\">\n", out);
	char title[6000], colour[40];
	for (size_t i = 0; i < v->n; i++) {
		const fg_frame *f = &v->frames[i];
		if (f->parent == UINT32_MAX) {
			x[i] = XPAD;
		} else {
			x[i] = next[f->parent];
			next[f->parent] += w[i] * scale;
		}
		next[i] = x[i];
		double y = height - YPAD2 - (f->depth + 1) * FRAME_HEIGHT + 1;
		double wd = w[i] * scale;
		const char *name = g->names.strs[f->name];
		if (g->nsides == 2)
			diff_colour(inclusive_delta(g, f), maxd, &v->sig_total[i], colour, sizeof(colour));
		else
			hot_colour(name, colour, sizeof(colour));
		bool only0 = g->nsides == 2 && f->count[1] == 0 && f->total[1] == 0;
		fg_frame_title(g, v, i, title, sizeof(title));
		fprintf(out, "<g%s><title>", only0 ? " class=\"only0\"" : "");
		xml_text(out, title, SIZE_MAX);
		fprintf(out, "</title><rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\" rx=\"2\" ry=\"2\"/>",
			x[i], y, wd, FRAME_HEIGHT - 1, colour);
		int chars = (int)(wd / (FONT_SIZE * FONT_WIDTH));
		fprintf(out, "<text x=\"%.2f\" y=\"%.1f\">", x[i] + 3, y + FRAME_HEIGHT / 2 + 3);
		size_t len = strlen(name);
		if (chars >= 3) {
			if ((size_t)chars < len) {
				xml_text(out, name, (size_t)chars - 2);
				fputs("..", out);
			} else {
				xml_text(out, name, len);
			}
		}
		fputs("</text></g>\n", out);
	}
	fputs("</g>\n</svg>\n", out);
	free(w);
	free(x);
	free(next);
	return ferror(out) ? -1 : 0;
}

/* ---- JSON ------------------------------------------------------------------------ */

/* A JSON string; '<' and '>' escaped so the text never closes the page's
 * <script> element. */
static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
	fputc('"', out);
}

static void json_u32s(FILE *out, const char *key, const fg_view *v, size_t off)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t i = 0; i < v->n; i++) {
		uint32_t x = *(const uint32_t *)((const char *)&v->frames[i] + off);
		if (x == UINT32_MAX)
			fprintf(out, i ? ",-1" : "-1");
		else
			fprintf(out, i ? ",%u" : "%u", x);
	}
	fputc(']', out);
}

static void json_u64s(FILE *out, const flamegraph *g, const char *key, const fg_view *v, size_t off)
{
	fprintf(out, ",\"%s\":[", key);
	for (int s = 0; s < g->nsides; s++) {
		fputs(s ? ",[" : "[", out);
		for (size_t i = 0; i < v->n; i++) {
			const uint64_t *x = (const uint64_t *)((const char *)&v->frames[i] + off);
			fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)x[s]);
		}
		fputc(']', out);
	}
	fputc(']', out);
}

static void json_num(FILE *out, double d, bool comma)
{
	if (comma)
		fputc(',', out);
	if (isfinite(d))
		fprintf(out, "%.12g", d);
	else
		fputs("null", out);
}

static void json_sig(FILE *out, const char *key, const fg_sig *sig, size_t n)
{
	fprintf(out, ",\"%s\":", key);
	bool any = false;
	for (size_t i = 0; i < n; i++)
		any |= sig[i].tested;
	if (!any) {
		fputs("null", out);
		return;
	}
	static const char *const cols[] = { "significant", "p", "q", "lo", "hi" };
	fputc('{', out);
	for (size_t c = 0; c < 5; c++) {
		fprintf(out, "%s\"%s\":[", c ? "," : "", cols[c]);
		for (size_t i = 0; i < n; i++) {
			const fg_sig *s = &sig[i];
			if (!s->tested) {
				fputs(i ? ",null" : "null", out);
				continue;
			}
			switch (c) {
			case 0: fprintf(out, i ? ",%d" : "%d", s->significant ? 1 : 0); break;
			case 1: json_num(out, s->p, i); break;
			case 2: json_num(out, s->q, i); break;
			case 3: json_num(out, s->lo, i); break;
			default: json_num(out, s->hi, i); break;
			}
		}
		fputc(']', out);
	}
	fputc('}', out);
}

/* groups of runs: a view's per-run values, one array per run */
static void json_runs(FILE *out, const char *key, const uint64_t *v, size_t nruns, size_t n)
{
	fprintf(out, ",\"%s\":[", key);
	for (size_t r = 0; r < nruns; r++) {
		fputs(r ? ",[" : "[", out);
		for (size_t i = 0; i < n; i++)
			fprintf(out, i ? ",%llu" : "%llu", (unsigned long long)v[i * nruns + r]);
		fputc(']', out);
	}
	fputc(']', out);
}

int fg_write_json(const flamegraph *g, FILE *out)
{
	fprintf(out, "{\"schema\":\"proff-flamegraph/1\",\"kind\":\"%s\",\"title\":", g->nsides == 2 ? "diff" : "report");
	json_str(out, g->title);
	fprintf(out, ",\"unit\":\"%s\",\"exact\":%s,\"event\":", unit_name(g), g->exact ? "true" : "false");
	json_str(out, g->event ? g->event : "");
	fprintf(out, ",\"min_width\":%g,\"sides\":[", g->min_width);
	for (int s = 0; s < g->nsides; s++) {
		fputs(s ? ",{\"file\":" : "{\"file\":", out);
		json_str(out, g->paths[s] ? g->paths[s] : "");
		fprintf(out, ",\"total\":%llu,\"samples\":%llu}", (unsigned long long)g->total[s],
			(unsigned long long)g->samples[s]);
	}
	fputc(']', out);
	if (g->runs) {
		/* groups of runs: each run, and the test the frames' changes had */
		fputs(",\"runs\":[", out);
		for (size_t r = 0; r < g->nruns; r++) {
			fprintf(out, "%s{\"side\":%d,\"file\":", r ? "," : "", g->run_side[r]);
			json_str(out, g->run_paths[r]);
			fprintf(out, ",\"total\":%llu,\"samples\":%llu}", (unsigned long long)g->run_period[r],
				(unsigned long long)g->run_samples[r]);
		}
		fprintf(out, "],\"stats\":{\"test\":\"%s\",\"fdr\":%g,\"level\":%g,\"metric\":\"%s\"}",
			g->stats.test == STATS_MWU ? "mwu" : "welch", g->fdr, g->stats.level,
			g->absolute ? "absolute" : "share");
	}
	fputs(",\"names\":[", out);
	for (size_t i = 0; i < g->names.n; i++) {
		if (i)
			fputc(',', out);
		json_str(out, g->names.strs[i]);
	}
	fputs("],\"views\":[", out);
	for (size_t k = 0; k < g->nviews; k++) {
		const fg_view *v = &g->views[k];
		fprintf(out, "%s\n{\"key\":\"%s\",\"order\":\"%s\",\"frames\":%zu,\"max_depth\":%u", k ? "," : "",
			v->key == FG_BY_SRCLINE ? "srcline" : "function", v->order == FG_CALLEE ? "callee" : "caller",
			v->n, v->max_depth);
		json_u32s(out, "parent", v, offsetof(fg_frame, parent));
		json_u32s(out, "name", v, offsetof(fg_frame, name));
		if (v->key == FG_BY_SRCLINE)
			json_u32s(out, "srcline", v, offsetof(fg_frame, srcline));
		json_u32s(out, "merged", v, offsetof(fg_frame, merged));
		json_u64s(out, g, "total", v, offsetof(fg_frame, total));
		json_u64s(out, g, "self", v, offsetof(fg_frame, self));
		json_u64s(out, g, "count", v, offsetof(fg_frame, count));
		json_u64s(out, g, "self_count", v, offsetof(fg_frame, self_count));
		if (g->nsides == 2) {
			json_sig(out, "sig_total", v->sig_total, v->n);
			json_sig(out, "sig_self", v->sig_self, v->n);
		}
		if (v->nruns) {
			json_runs(out, "run_total", v->run_total, v->nruns, v->n);
			json_runs(out, "run_self", v->run_self, v->nruns, v->n);
		}
		fputc('}', out);
	}
	fputs("]}", out);
	return ferror(out) ? -1 : 0;
}

int fg_write_html(const flamegraph *g, FILE *out)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
	      "style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\n<title>", out);
	xml_text(out, g->title, SIZE_MAX);
	fputs("</title>\n<!-- written by proff: docs/flamegraph.md -->\n<style>\n", out);
	fputs(fg_page_css, out);
	fputs("</style>\n</head>\n<body>\n<script type=\"application/json\" id=\"proff-data\">", out);
	if (fg_write_json(g, out) < 0)
		return -1;
	fputs("</script>\n<script>\n", out);
	fputs(fg_page_js, out);
	fputs("</script>\n</body></html>\n", out);
	return ferror(out) ? -1 : 0;
}
