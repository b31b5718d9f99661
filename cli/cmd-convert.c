/* cmd-convert.c — `proff convert IN OUT`: a profile written in another
 * format (lib/formats); `proff convert A1 A2 -- B1 B2 -o OUT`: groups of
 * runs (the group syntax of proff diff, cli_groups_split) as one pprof file
 * whose samples carry labels run (the input's name) and group (0 the
 * baseline, 1 ...; only when `--` gives groups), so that other tools, and
 * `proff diff --groups-by group --replicate run`, redo the statistics.
 *
 * IN is anything proff reads (perf.data, an exact trace, pprof, folded
 * stacks; "-" for standard input). OUT's format comes from --to or its
 * name: .pb.gz and .pprof pprof (gzipped), .pb pprof, .folded folded
 * stacks, .data perf.data, .trace.json Chrome's trace event JSON,
 * .speedscope.json speedscope; "-" is standard output (then --to is needed;
 * not for perf.data). The last two need an exact trace (proff record
 * --instrument). docs/formats/interchange.md describes what each keeps.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libelf.h>

#include "cmds.h"
#include "parse-options.h"
#include "proff/formats.h"
#include "proff/symbol.h"
#include "proff/profile.h"
#include "proff/trace.h"

enum out_fmt { OUT_NONE, OUT_PPROF_GZ, OUT_PPROF, OUT_FOLDED, OUT_CHROME, OUT_SPEEDSCOPE, OUT_PERF };

static const struct { const char *name; enum out_fmt f; } fmt_names[] = {
	{ "pprof", OUT_PPROF_GZ }, { "pb.gz", OUT_PPROF_GZ }, { "pb", OUT_PPROF }, { "folded", OUT_FOLDED },
	{ "chrome", OUT_CHROME }, { "trace.json", OUT_CHROME }, { "speedscope", OUT_SPEEDSCOPE },
	{ "perf", OUT_PERF }, { "data", OUT_PERF },
};

/* by the name's ending */
static enum out_fmt fmt_of_name(const char *path)
{
	static const struct { const char *ext; enum out_fmt f; } ext[] = {
		{ ".pb.gz", OUT_PPROF_GZ }, { ".pprof", OUT_PPROF_GZ }, { ".pb", OUT_PPROF },
		{ ".folded", OUT_FOLDED }, { ".folded.txt", OUT_FOLDED }, { ".trace.json", OUT_CHROME },
		{ ".speedscope.json", OUT_SPEEDSCOPE }, { ".data", OUT_PERF },
	};
	size_t n = strlen(path);
	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t e = strlen(ext[i].ext);
		if (n > e && !strcmp(path + n - e, ext[i].ext))
			return ext[i].f;
	}
	return OUT_NONE;
}

typedef struct convert_cli {
	const char *to, *event, *sample_type, *symfs, *kallsyms, *buildid_dir, *output;
	bool lines;
} convert_cli;

#define F(x) offsetof(convert_cli, x)
static const opt_def opts[] = {
	{ 'o', "output", O_STR, F(output), "file", "the output file (needed with several inputs; - for standard output)", 0, NULL, 0 },
	{ 0, "to", O_STR, F(to), "format", "pprof, pb (not compressed), folded, perf, chrome, speedscope (default: OUT's name)", 0, NULL, 0 },
	{ 0, "sample-type", O_STR, F(sample_type), "type", "pprof input: the sample type read (name or index; default the last)", 0, NULL, 0 },
	{ 0, "event", O_STR, F(event), "name", "folded output: the event written (default the first with samples)", 0, NULL, 0 },
	{ 0, "lines", O_BOOL, F(lines), NULL, "pprof output: the locations' source files and lines (from DWARF)", 0, NULL, 0 },
	{ 0, "symfs", O_STR, F(symfs), "dir", "look for files under dir", 0, NULL, 0 },
	{ 0, "kallsyms", O_STR, F(kallsyms), "file", "kernel symbols from file", 0, NULL, 0 },
	{ 0, "buildid-dir", O_STR, F(buildid_dir), "dir", "build-id cache directory (default ~/.debug)", 0, NULL, 0 },
};
#undef F

static void help_tail(FILE *f)
{
	fprintf(f, "\nIN: perf.data, an exact trace, pprof (.pb.gz), folded stacks; - for standard input\n"
		   "OUT: its format from --to or its name: .pb.gz/.pprof (pprof, gzipped), .pb (pprof),\n"
		   "     .folded (folded stacks), .data (perf.data), .trace.json (Chrome trace events),\n"
		   "     .speedscope.json; - for standard output\n"
		   "Several inputs (groups of runs as in proff diff: A1 A2 -- B1 B2) go into one pprof file\n"
		   "     given with -o; each sample carries the labels run (the input's name) and group\n"
		   "     (0 the baseline, 1 ... when -- separates groups)\n");
}

static const char *const usage_lines[] = {
	"convert [<options>] IN OUT", "convert [<options>] IN... [-- IN... ...] -o OUT", NULL,
};
const po_cmd cmd_convert_opts = {
	"convert", usage_lines, opts, sizeof(opts) / sizeof(opts[0]), PO_CMD_DASHDASH_WORD, help_tail,
};

/* An exact trace as a timeline (Chrome, speedscope) */
static int write_timeline(const char *in, FILE *out, enum out_fmt f, const char *symfs)
{
	proff_trace *t;
	proff_error err;
	proff_err_clear(&err);
	if (proff_trace_open(in, &t, &err) < 0 || proff_trace_symbolize(t, symfs, &err) < 0) {
		cli_error(&err);
		return 1;
	}
	int rc = f == OUT_CHROME ? pf_chrome_write(t, out, &err) : pf_speedscope_write(t, in, out, &err);
	proff_trace_close(t);
	if (rc < 0) {
		cli_error(&err);
		return 1;
	}
	return 0;
}

static int convert(const convert_cli *cp, const char *const *inputs, size_t nin, const uint32_t *group, const char *outp);

/* "A.data" twice would be two runs no label tells apart */
static int check_distinct(const char *const *in, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = 0; j < i; j++)
			if (!strcmp(in[i], in[j])) {
				cli_errorf("convert: %s is given twice: each run's label names one input", in[i]);
				return EXIT_USAGE;
			}
	return 0;
}

/* Several inputs as one pprof file: each loaded, added with its labels
 * (run: its name; group: its group, with groups) and freed; OUT written
 * once every input is in, so a bad one leaves no file behind */
static int convert_runs(const char *const *in, size_t n, const uint32_t *group, bool groups, const char *outp,
			const pf_load_opts *lo, const pf_write_opts *wo)
{
	int rc = check_distinct(in, n);
	if (rc)
		return rc;
	pf_pprof_writer *w = NULL;
	proff_error err;
	proff_err_clear(&err);
	if (pf_pprof_writer_new(wo, &w, &err) < 0) {
		cli_error(&err);
		return 1;
	}
	/* the runs' binaries are mostly the same ones: their symbol tables read
	 * once for all, as proff diff does (kernel symbols stay per file) */
	pf_load_opts rlo = *lo;
	sym_opts so = {
		.symfs = lo->symfs, .buildid_dir = lo->buildid_dir, .demangle = true,
		.demangle_params = lo->demangle_params, .inline_frames = lo->inline_frames,
	};
	sym_ctx *shared = NULL;
	proff_error serr = { 0 };
	elf_version(EV_CURRENT);
	if (sym_ctx_new(&so, &shared, &serr) == 0)
		rlo.shared_syms = shared;      /* else each file its own */
	for (size_t i = 0; i < n && !rc; i++) {
		pf_profile *prof = NULL;
		if (pf_profile_load(in[i], &rlo, &prof, &err) < 0) {
			cli_error(&err);
			rc = 1;
			break;
		}
		for (size_t k = 0; k < prof->nr_warnings; k++)
			cli_warnf("%s", prof->warnings[k]);
		/* group as text: pprof readers drop a numeric label of value 0 (the
		 * encoding leaves it out), which the baseline's would be */
		char gs[16];
		snprintf(gs, sizeof(gs), "%u", group ? group[i] : 0);
		const pf_extra_label lab[2] = { { "run", in[i], 0 }, { "group", gs, 0 } };
		if (pf_pprof_writer_add(w, prof, lab, groups ? 2 : 1, &err) < 0) {
			cli_error(&err);
			rc = 1;
		}
		pf_profile_free(prof);
	}
	FILE *out = stdout;
	if (!rc && strcmp(outp, "-") && !(out = fopen(outp, "w"))) {
		cli_errorf("%s: cannot create: %m", outp);
		rc = 1;
	}
	if (!rc && pf_pprof_writer_finish(w, out, &err) < 0) {
		if (err.code == PROFF_EIO)
			snprintf(err.file, sizeof(err.file), "%s", outp);
		cli_error(&err);
		rc = 1;
	}
	if (!rc && out != stdout && fclose(out) != 0) {
		cli_errorf("%s: cannot write: %m", outp);
		rc = 1;
	} else if (rc && out && out != stdout) {
		fclose(out);
	}
	pf_pprof_writer_free(w);
	sym_ctx_free(shared);
	return rc;
}

/* IN OUT, or IN... [-- IN...] -o OUT: the inputs (pos compacted to them),
 * their groups (NULL without `--`) and OUT; 0 or the exit status */
static int convert_words(const convert_cli *c, char **pos, int *npos, uint32_t **group, bool *seps, const char **outp)
{
	*seps = false;
	for (int i = 0; i < *npos; i++)
		*seps |= !pos[i];
	if (c->output || *seps) {
		if (!c->output)
			return po_error(&cmd_convert_opts, po_find(&cmd_convert_opts, "output", 'o'),
					"convert: groups of runs (A1 A2 -- B1 B2) go into the file given with -o OUT");
		int rc = cli_groups_split("convert", pos, npos, group, seps);
		if (rc)
			return rc;
		if (!*npos)
			return po_error(&cmd_convert_opts, NULL, "convert needs an input file (- for standard input)");
		*outp = c->output;
		return 0;
	}
	if (*npos > 2)
		return po_error(&cmd_convert_opts, po_find(&cmd_convert_opts, "output", 'o'),
				"convert: %d inputs need -o OUT (proff convert A1 A2 -- B1 B2 -o OUT.pb.gz)", *npos);
	if (*npos != 2)
		return po_error(&cmd_convert_opts, NULL, "convert needs an input and an output file (- for standard input/output)");
	*outp = pos[1];
	*npos = 1;
	return 0;
}

int cmd_convert(int argc, char **argv)
{
	convert_cli c = { 0 };
	char **pos = calloc((size_t)argc + 1, sizeof(char *));
	int npos = 0, st;
	if (!pos)
		return 1;
	if (!po_parse(&cmd_convert_opts, &c, argc, argv, pos, &npos, &st)) {
		free(pos);
		return st;
	}
	uint32_t *group = NULL;
	bool seps = false;
	const char *outp = NULL;
	if ((st = convert_words(&c, pos, &npos, &group, &seps, &outp)) != 0) {
		free(group);
		free(pos);
		return st;
	}
	st = convert(&c, (const char *const *)pos, (size_t)npos, seps ? group : NULL, outp);
	free(group);
	free(pos);
	return st;
}


static int convert(const convert_cli *cp, const char *const *inputs, size_t nin, const uint32_t *group, const char *outp)
{
	const convert_cli c = *cp;
	const char *in = inputs[0];
	const char *to = c.to, *event = c.event;
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.split_load = true;
	lo.sample_type = c.sample_type;
	lo.symfs = c.symfs;
	lo.kallsyms = c.kallsyms;
	lo.buildid_dir = c.buildid_dir;
	pf_write_opts wo = { .evsel = -1 };
	wo.lines = c.lines;
	enum out_fmt f = OUT_NONE;
	if (to) {
		for (size_t i = 0; i < sizeof(fmt_names) / sizeof(fmt_names[0]); i++)
			if (!strcmp(fmt_names[i].name, to))
				f = fmt_names[i].f;
		if (f == OUT_NONE) {
			cli_errorf("--to %s: not a format (pprof, pb, folded, perf, chrome, speedscope)", to);
			return EXIT_USAGE;
		}
	} else if ((f = fmt_of_name(outp)) == OUT_NONE) {
		cli_errorf("%s: which format? Name it .pb.gz, .pprof, .pb, .folded, .data, .trace.json or .speedscope.json, or give --to",
			   outp);
		return EXIT_USAGE;
	}
	wo.gzip = f == OUT_PPROF_GZ;
	if (nin > 1 || group) {
		if (f != OUT_PPROF_GZ && f != OUT_PPROF) {
			cli_errorf("convert: %zu inputs go into one pprof file whose samples carry each run's label; "
				   "%s cannot carry labels (write .pb.gz, .pprof or .pb)", nin,
				   f == OUT_FOLDED ? "folded stacks" : f == OUT_PERF ? "perf.data" : "a timeline");
			return EXIT_USAGE;
		}
		return convert_runs(inputs, nin, group, group != NULL, outp, &lo, &wo);
	}
	/* perf.data: every raw sample in its order (perf's orders read it) */
	lo.keep_sequence = f == OUT_PERF;
	bool timeline = f == OUT_CHROME || f == OUT_SPEEDSCOPE;
	if (timeline && !pf_is_trace_file(in)) {
		cli_errorf("%s: Chrome trace and speedscope output are timelines of an exact trace "
			   "(proff record --instrument); this is a sampled profile", in);
		return 1;
	}
	pf_profile *prof = NULL;
	proff_error err;
	proff_err_clear(&err);
	if (!timeline) {
		if (pf_profile_load(in, &lo, &prof, &err) < 0) {
			cli_error(&err);
			return 1;
		}
		for (size_t i = 0; i < prof->nr_warnings; i++)
			cli_warnf("%s", prof->warnings[i]);
		if (event) {
			for (size_t i = 0; i < prof->nr_events && wo.evsel < 0; i++)
				if (!strcmp(prof->events[i].name, event))
					wo.evsel = (int)i;
			if (wo.evsel < 0) {
				cli_errorf("%s: --event %s: no such event", in, event);
				pf_profile_free(prof);
				return 1;
			}
		}
	}
	if (f == OUT_PERF) {
		int rc = 0;
		if (!strcmp(outp, "-")) {
			cli_errorf("perf.data output needs a file name, not -");
			rc = EXIT_USAGE;
		} else if (pf_perfdata_write(prof, outp, &err) < 0) {
			cli_error(&err);
			rc = 1;
		}
		pf_profile_free(prof);
		return rc;
	}
	FILE *out = stdout;
	if (strcmp(outp, "-") && !(out = fopen(outp, "w"))) {
		cli_errorf("%s: cannot create: %m", outp);
		pf_profile_free(prof);
		return 1;
	}
	int rc = 0;
	if (timeline) {
		rc = write_timeline(in, out, f, lo.symfs);
	} else {
		int r = f == OUT_FOLDED ? pf_folded_write(prof, out, &wo, &err) : pf_pprof_write(prof, out, &wo, &err);
		if (r < 0) {
			if (err.code == PROFF_EIO)
				snprintf(err.file, sizeof(err.file), "%s", outp);
			cli_error(&err);
			rc = 1;
		}
	}
	if (out != stdout && fclose(out) != 0 && !rc) {
		cli_errorf("%s: cannot write: %m", outp);
		rc = 1;
	}
	pf_profile_free(prof);
	return rc;
}
