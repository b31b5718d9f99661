/* cli-flamegraph.c — `--flamegraph FILE` of proff report and proff diff:
 * the options they share, and building and writing the flame graph of one
 * profile or of a baseline and a new profile (lib/output/flamegraph*.c). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "proff/flamegraph.h"

int cli_flamegraph_check(const char *path, const char *min_width, fg_opts *o)
{
	if (fg_format_of(path) < 0) {
		cli_errorf("--flamegraph %s: the file name must end in .svg, .html or .folded (or be - for folded stacks on stdout)",
			   path);
		return EXIT_USAGE;
	}
	if (min_width) {
		char *end;
		errno = 0;
		double v = strtod(min_width, &end);
		if (end == min_width || *end || errno || !(v >= 0 && v < 100)) {
			cli_errorf("--min-width '%s': a percentage from 0 to below 100", min_width);
			return EXIT_USAGE;
		}
		o->min_width = v;
	}
	return 0;
}

int cli_flamegraph(const char *path, pf_profile *const *profs, const uint32_t *evsel, const uint8_t *side,
		   size_t nprofs, int nsides, const fg_opts *o)
{
	flamegraph *g;
	proff_error err;
	proff_err_clear(&err);
	if (fg_new(&g, nsides, o, &err) < 0) {
		cli_error(&err);
		return 1;
	}
	int rc = 0;
	for (size_t f = 0; f < nprofs && !rc; f++)
		if (fg_add_profile(g, side ? side[f] : (int)f, profs[f], evsel[f], o, &err) < 0)
			rc = 1;
	if (!rc && fg_finish(g, &err) < 0)
		rc = 1;
	if (rc) {
		cli_error(&err);
		fg_free(g);
		return 1;
	}
	for (size_t f = 0; f < nprofs; f++) {
		bool none = g->runs ? !g->run_samples[f] : !g->samples[side ? side[f] : f];
		if (none)
			cli_warnf("%s: no samples to draw (after --comms, --pid, --tid, --time, --cpu)", profs[f]->path);
	}
	int fmt = fg_format_of(path);
	FILE *out = strcmp(path, "-") ? fopen(path, "w") : stdout;
	if (!out) {
		cli_errorf("%s: cannot write: %s", path, strerror(errno));
		fg_free(g);
		return 1;
	}
	rc = fmt == FG_SVG ? fg_write_svg(g, out) : fmt == FG_HTML ? fg_write_html(g, out) : fg_write_folded(g, out);
	if (out != stdout ? fclose(out) != 0 : fflush(out) != 0)
		rc = -1;
	if (rc < 0)
		cli_errorf("%s: writing the flame graph failed: %s", path, strerror(errno ? errno : EIO));
	fg_free(g);
	return rc < 0 ? 1 : 0;
}
