/* output.c — the proff calibrate table (one row per measurement with
 * Average and Std.Dev. as in LTTng's calibrate table, plus Min, Median, the
 * average in TSC cycles and the runs kept) and its JSON form. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "proff/calibrate.h"

static bool any_counter_supported(const cal_result *r)
{
	for (size_t k = 0; k < r->ncounters; k++)
		if (r->counter_supported[k])
			return true;
	return false;
}

void cal_print_table(FILE *f, const cal_result *r)
{
	fprintf(f, "# proff calibrate: %u runs per measurement, pinned to CPU %d", r->runs, r->cpu);
	if (r->tsc_hz > 0)
		fprintf(f, ", TSC %.3f MHz", r->tsc_hz / 1e6);
	fprintf(f, ", workloads built with %s\n", r->cc);
	if (r->ncounters) {
		fprintf(f, "# counters (per operation, below each row where counted):\n");
		for (size_t k = 0; k < r->ncounters; k++)
			fprintf(f, "#   %-24s %s\n", r->counters[k]->name,
				r->counter_supported[k] ? "counted" : r->counter_why[k][0] ? r->counter_why[k] : "<not supported>");
	}
	fprintf(f, "# times in ns per operation (CPU time); runs = kept/total\n#\n");
	fprintf(f, "# %-10s %-18s %-7s %12s %10s %12s %12s %10s %7s\n", "group", "measurement", "per",
		"Average", "Std.Dev.", "Min", "Median", "cycles", "runs");
	bool counted = any_counter_supported(r);
	for (size_t i = 0; i < r->nrows; i++) {
		const cal_result_row *w = &r->rows[i];
		if (!w->measured) {
			fprintf(f, "  %-10s %-18s %-7s (not measured: %s)\n", w->group, w->name, w->per, w->note);
			continue;
		}
		char cyc[32] = "-", runs[32];
		if (r->tsc_hz > 0)
			snprintf(cyc, sizeof(cyc), "%.1f", w->ns.avg * r->tsc_hz / 1e9);
		snprintf(runs, sizeof(runs), "%u/%u", w->kept, w->kept + w->discarded);
		fprintf(f, "  %-10s %-18s %-7s %12.2f %10.2f %12.2f %12.2f %10s %7s\n", w->group, w->name,
			w->per, w->ns.avg, w->ns.stddev, w->ns.min, w->ns.median, cyc, runs);
		if (w->note[0])   /* a remark on a measured row, e.g. the parts of a sum */
			fprintf(f, "  %-10s   # %s\n", "", w->note);
		if (!counted || w->counters_na)
			continue;
		for (size_t k = 0; k < r->ncounters; k++) {
			if (!r->counter_supported[k])
				continue;
			const cal_counter_result *cr = &w->counters[k];
			if (cr->supported)
				fprintf(f, "  %-10s   %-24s %12.2f %10.2f %12.2f %12.2f\n", "",
					r->counters[k]->name, cr->per_op.avg, cr->per_op.stddev, cr->per_op.min,
					cr->per_op.median);
			else
				fprintf(f, "  %-10s   %-24s %12s\n", "", r->counters[k]->name,
					cr->why[0] ? cr->why : "<not counted>");
		}
	}
	if (r->o_full_ns > 0)
		fprintf(f, "#\n# compensation (medians): o_in %.2f ns, o_full %.2f ns per call; "
			   "proff runtime %.2f ns per call over idle hooks %.2f ns\n",
			r->o_in_ns, r->o_full_ns, r->call_ns, r->idle_ns);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.4f", v);
	else
		fputs("null", f);
}

static void json_summary(FILE *f, const cal_summary *s)
{
	fprintf(f, "{\"avg\": ");
	json_num(f, s->avg);
	fprintf(f, ", \"stddev\": ");
	json_num(f, s->stddev);
	fprintf(f, ", \"min\": ");
	json_num(f, s->min);
	fprintf(f, ", \"median\": ");
	json_num(f, s->median);
	fprintf(f, ", \"max\": ");
	json_num(f, s->max);
	fprintf(f, ", \"n\": %zu}", s->n);
}

void cal_print_json(FILE *f, const cal_result *r)
{
	fprintf(f, "{\n  \"schema\": \"proff-calibrate/1\",\n  \"cpu\": %d,\n  \"runs\": %u,\n  \"tsc_hz\": ", r->cpu, r->runs);
	json_num(f, r->tsc_hz);
	fprintf(f, ",\n  \"cc\": ");
	json_str(f, r->cc);
	fprintf(f, ",\n  \"counters\": [");
	for (size_t k = 0; k < r->ncounters; k++) {
		fprintf(f, "%s\n    {\"name\": ", k ? "," : "");
		json_str(f, r->counters[k]->name);
		fprintf(f, ", \"supported\": %s", r->counter_supported[k] ? "true" : "false");
		if (!r->counter_supported[k]) {
			fprintf(f, ", \"why\": ");
			json_str(f, r->counter_why[k][0] ? r->counter_why[k] : "<not supported>");
		}
		fputc('}', f);
	}
	fprintf(f, "%s],\n  \"measurements\": [", r->ncounters ? "\n  " : "");
	for (size_t i = 0; i < r->nrows; i++) {
		const cal_result_row *w = &r->rows[i];
		fprintf(f, "%s\n    {\"group\": ", i ? "," : "");
		json_str(f, w->group);
		fprintf(f, ", \"name\": ");
		json_str(f, w->name);
		fprintf(f, ", \"per\": ");
		json_str(f, w->per);
		fprintf(f, ", \"measured\": %s", w->measured ? "true" : "false");
		if (w->note[0]) {
			fprintf(f, ", \"note\": ");
			json_str(f, w->note);
		}
		if (w->measured) {
			fprintf(f, ", \"ops\": %llu, \"kept\": %u, \"discarded\": %u,\n     \"ns\": ",
				(unsigned long long)w->ops, w->kept, w->discarded);
			json_summary(f, &w->ns);
			if (r->tsc_hz > 0) {
				cal_summary cy = w->ns;
				double k = r->tsc_hz / 1e9;
				cy.avg *= k, cy.stddev *= k, cy.min *= k, cy.median *= k, cy.max *= k;
				fprintf(f, ",\n     \"tsc_cycles\": ");
				json_summary(f, &cy);
			}
			if (!w->counters_na && r->ncounters) {
				fprintf(f, ",\n     \"counters\": {");
				for (size_t k = 0; k < r->ncounters; k++) {
					const cal_counter_result *cr = &w->counters[k];
					fprintf(f, "%s", k ? ", " : "");
					json_str(f, r->counters[k]->name);
					fprintf(f, ": ");
					if (cr->supported)
						json_summary(f, &cr->per_op);
					else
						json_str(f, cr->why[0] ? cr->why : "<not counted>");
				}
				fputc('}', f);
			}
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"calibration\": {\"o_in_ns\": ");
	json_num(f, r->o_in_ns);
	fprintf(f, ", \"o_full_ns\": ");
	json_num(f, r->o_full_ns);
	fprintf(f, ", \"call_ns\": ");
	json_num(f, r->call_ns);
	fprintf(f, ", \"idle_ns\": ");
	json_num(f, r->idle_ns);
	fprintf(f, ", \"start_ns\": ");
	json_num(f, r->start_ns);
	fprintf(f, "}\n}\n");
}
