/* cmd-convert.c — `proff convert IN OUT`: a profile written in another
 * format (lib/formats).
 *
 * IN is anything proff reads (perf.data, an exact trace, pprof, folded
 * stacks; "-" for standard input). OUT's format comes from --to or its
 * name: .pb.gz and .pprof pprof (gzipped), .pb pprof, .folded folded
 * stacks, .data perf.data, .trace.json Chrome's trace event JSON,
 * .speedscope.json speedscope; "-" is standard output (then --to is needed;
 * not for perf.data). The last two need an exact trace (proff record
 * --instrument). docs/formats/interchange.md describes what each keeps.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "proff/formats.h"
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

static void usage(FILE *f)
{
	fprintf(f, "\n Usage: proff convert [<options>] IN OUT\n\n"
		   "    IN: perf.data, an exact trace, pprof (.pb.gz), folded stacks; - for standard input\n"
		   "    OUT: its format from --to or its name: .pb.gz/.pprof (pprof, gzipped), .pb (pprof),\n"
		   "         .folded (folded stacks), .data (perf.data), .trace.json (Chrome trace events),\n"
		   "         .speedscope.json; - for standard output\n\n"
		   "    --to FORMAT            pprof, pb (not compressed), folded, perf, chrome, speedscope\n"
		   "    --sample-type TYPE     pprof input: the sample type read (name or index; default the last)\n"
		   "    --event NAME           folded output: the event written (default the first with samples)\n"
		   "    --lines                pprof output: the locations' source files and lines (from DWARF)\n"
		   "    --symfs DIR            look for files under DIR\n"
		   "    --kallsyms FILE        kernel symbols from FILE\n"
		   "    --buildid-dir DIR      build-id cache directory (default ~/.debug)\n"
		   "    -h, --help             this help\n\n");
}

enum { O_TO = 256, O_SAMPLE_TYPE, O_EVENT, O_LINES, O_SYMFS, O_KALLSYMS, O_BUILDID_DIR };

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

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "to", required_argument, NULL, O_TO },
		{ "sample-type", required_argument, NULL, O_SAMPLE_TYPE },
		{ "event", required_argument, NULL, O_EVENT },
		{ "lines", no_argument, NULL, O_LINES },
		{ "symfs", required_argument, NULL, O_SYMFS },
		{ "kallsyms", required_argument, NULL, O_KALLSYMS },
		{ "buildid-dir", required_argument, NULL, O_BUILDID_DIR },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *to = NULL, *event = NULL;
	pf_load_opts lo;
	pf_load_opts_init(&lo);
	lo.split_load = true;
	pf_write_opts wo = { .evsel = -1 };
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case O_TO: to = optarg; break;
		case O_SAMPLE_TYPE: lo.sample_type = optarg; break;
		case O_EVENT: event = optarg; break;
		case O_LINES: wo.lines = true; break;
		case O_SYMFS: lo.symfs = optarg; break;
		case O_KALLSYMS: lo.kallsyms = optarg; break;
		case O_BUILDID_DIR: lo.buildid_dir = optarg; break;
		case 'h': usage(stdout); return 0;
		default:
			if (optopt)
				cli_errorf("unknown or incomplete option '-%c'", optopt);
			else
				cli_errorf("unknown option '%s'", argv[optind - 1]);
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (argc - optind != 2) {
		cli_errorf("convert needs an input and an output file (- for standard input/output)");
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *in = argv[optind], *outp = argv[optind + 1];
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
