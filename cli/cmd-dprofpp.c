/* cmd-dprofpp.c — `proff dprofpp [options] [file]`: Devel::DProf-compatible
 * reports (what dprofpp prints) of a tmon.out, or of a proff exact trace
 * (proff record --instrument; recognised by its magic number).
 *
 * Options are parsed like dprofpp's Getopt::Std getopts (bundling, "--" ends
 * options, DPROFPP_OPTS split on white space and parsed first), then the file
 * is read through lib/dprof and the report printed on stdout.
 */
#include <errno.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cmds.h"
#include "proff/dprof.h"
#include "proff/trace.h"
#include "proff/calibrate.h"

extern char **environ;

#define DPROF_COMPAT_VERSION "20110802.00"

static const struct optdef {
	char letter;
	bool arg;
	const char *help;
} optdefs[] = {
	{ 'A', false, "Count autoloaded to *AUTOLOAD." },
	{ 'a', false, "Sort by alphabetic name of subroutines." },
	{ 'd', false, "Reverse sort." },
	{ 'E', false, "Sub times are reported exclusive of child times. (default)" },
	{ 'F', false, "Generate fake exit timestamps for garbled profiles." },
	{ 'f', true,  "Filter all calls matching the pattern." },
	{ 'G', true,  "Group all calls matching the pattern together." },
	{ 'g', true,  "Count only subs who are SUBR or called from SUBR." },
	{ 'H', false, "Display long manual page." },
	{ 'h', false, "Display this short usage message." },
	{ 'I', false, "Sub times are reported inclusive of child times." },
	{ 'l', false, "Sort by number of calls to subroutines." },
	{ 'O', true,  "Specifies maximum number of subroutines to display." },
	{ 'P', false, "Used with -G to pull all other calls together." },
	{ 'p', true,  "Specifies name of script to be profiled." },
	{ 'Q', false, "Used with -p to indicate that dprofpp should quit\n"
		      "                after profiling the script, without interpreting the data." },
	{ 'q', false, "Do not print column headers." },
	{ 'R', false, "Count anonymous subs separately even if from the same package." },
	{ 'r', false, "Use real elapsed time rather than user+system time." },
	{ 'S', false, "Create statistics for all the depths." },
	{ 's', false, "Use system time rather than user+system time." },
	{ 'T', false, "Show call tree." },
	{ 't', false, "Show call tree, compressed." },
	{ 'U', false, "Do not sort subroutines." },
	{ 'u', false, "Use user time rather than user+system time." },
	{ 'V', false, "Print dprofpp's version." },
	{ 'v', false, "Sort by average amount of time spent in subroutines." },
	{ 'z', false, "Sort by user+system time spent in subroutines. (default)" },
};

typedef struct opts {
	bool set[128];
	const char *val[128];
	const char *file;
} opts;

static const struct optdef *find_opt(char c)
{
	for (size_t i = 0; i < sizeof(optdefs) / sizeof(optdefs[0]); i++)
		if (optdefs[i].letter == c)
			return &optdefs[i];
	return NULL;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: proff dprofpp [options] [profile]\n\n");
	for (size_t i = 0; i < sizeof(optdefs) / sizeof(optdefs[0]); i++) {
		char head[32];
		snprintf(head, sizeof(head), "-%c%s", optdefs[i].letter,
			 optdefs[i].letter == 'O' ? " cnt" : optdefs[i].letter == 'g' ? " subr" :
			 optdefs[i].letter == 'p' ? " script" : "");
		fprintf(f, "    %-11s %s\n", head, optdefs[i].help);
	}
	fprintf(f, "\nThe profile defaults to tmon.out; DPROFPP_OPTS is read before the command line.\n");
}

/* Getopt::Std::getopts on argv[0..argc); returns the number of errors and
 * sets *rest to the index of the first non-option argument. */
static int getopts(opts *o, int argc, char **argv, int *rest)
{
	int errs = 0, i = 0;
	const char *cur = NULL;   /* letters left in the current bundle */
	while (i < argc) {
		char c;
		const char *restp;
		if (cur) {
			c = cur[0];
			restp = cur + 1;
		} else {
			const char *a = argv[i];
			if (a[0] != '-' || a[1] == '\0')
				break;
			if (!strcmp(a, "--")) {
				i++;
				break;
			}
			c = a[1];
			restp = a + 2;
		}
		const struct optdef *d = (unsigned char)c < 128 ? find_opt(c) : NULL;
		if (d && d->arg) {
			i++;
			cur = NULL;
			const char *v = restp;
			if (!*restp) {
				if (i >= argc) {
					errs++;
					v = NULL;
				} else {
					v = argv[i++];
				}
			}
			o->set[(int)c] = v != NULL;
			o->val[(int)c] = v;
			continue;
		}
		if (d) {
			o->set[(int)c] = true;
			o->val[(int)c] = "1";
		} else {
			fprintf(stderr, "Unknown option: %c\n", c);
			errs++;
		}
		if (*restp) {
			cur = restp;
		} else {
			cur = NULL;
			i++;
		}
	}
	*rest = i;
	return errs;
}

static bool truthy(const opts *o, char c)
{
	const char *v = o->val[(int)c];
	return o->set[(int)c] && v && *v && strcmp(v, "0") != 0;
}

static void warn_cb(void *ctx, const char *msg)
{
	(void)ctx;
	fputs(msg, stderr);
}

static int run_profiler(const char *script)
{
	/* $Config{startperl} -d:DProf, then the script split on white space */
	char *copy = strdup(script);
	if (!copy)
		return -1;
	char *argv[256];
	int n = 0;
	argv[n++] = "perl";
	argv[n++] = "-d:DProf";
	for (char *t = strtok(copy, " \t\n"); t && n < 254; t = strtok(NULL, " \t\n"))
		argv[n++] = t;
	argv[n] = NULL;
	pid_t pid;
	int rc = posix_spawnp(&pid, "perl", NULL, NULL, argv, environ);
	if (rc) {
		cli_errorf("dprofpp: cannot run perl: %s", strerror(rc));
		free(copy);
		return -1;
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		cli_errorf("dprofpp: Failed: perl -d:DProf %s", script);
		free(copy);
		return -1;
	}
	free(copy);
	return 0;
}

/* A proff trace (proff record --instrument) instead of a tmon.out? */
static bool is_proff_trace(const char *path)
{
	unsigned char m[4];
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t n = fread(m, 1, 4, f);
	fclose(f);
	uint32_t magic = (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24;
	return n == 4 && magic == PROFF_TRACE_MAGIC;
}

static int read_trace(const char *path, const dprof_build_opts *bo, dprof_model **m, proff_error *err)
{
	proff_trace *t;
	int rc = proff_trace_open(path, &t, err);
	if (rc < 0)
		return rc;
	proff_error serr;
	proff_err_clear(&serr);
	if (proff_trace_symbolize(t, NULL, &serr) < 0)
		cli_warnf("%s: no symbols: %s", path, serr.msg);
	/* overheads measured by proff calibrate instead of the start-up estimate */
	const char *cal = getenv(CAL_FILE_ENV);
	if (cal && *cal && (rc = cal_file_apply(cal, t, err)) < 0) {
		proff_trace_close(t);
		return rc;
	}
	rc = proff_trace_to_dprof(t, bo, true, m, err);
	proff_trace_quality q;
	if (rc == 0 && proff_trace_quality_get(t, &q, err) == 0) {
		cli_trace_quality_warn(path, &q);
		proff_trace_quality_free(&q);
	}
	proff_trace_close(t);
	return rc;
}

static int name_width(void)
{
	struct winsize ws;
	if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 80)
		return 34 + ws.ws_col - 79;
	return 34;
}

int cmd_dprofpp(int argc, char **argv)
{
	opts o;
	memset(&o, 0, sizeof(o));
	o.file = "tmon.out";
	int rest;

	const char *env = getenv("DPROFPP_OPTS");
	if (env) {
		char *copy = strdup(env);
		char *eargv[256];
		int en = 0;
		if (!copy) {
			cli_errorf("out of memory");
			return 1;
		}
		for (char *t = strtok(copy, " \t\n\r\f\v"); t && en < 255; t = strtok(NULL, " \t\n\r\f\v"))
			eargv[en++] = t;
		getopts(&o, en, eargv, &rest);   /* errors ignored, as dprofpp does */
		if (rest < en)
			o.file = strdup(eargv[rest]);
		/* values point into copy: keep it for the process lifetime */
	}
	if (getopts(&o, argc - 1, argv + 1, &rest)) {
		cli_errorf("dprofpp: bad option. Try 'proff dprofpp -h' for help.");
		return EXIT_USAGE;
	}
	if (rest < argc - 1)
		o.file = argv[1 + rest];

	if (o.set['h'] || o.set['H']) {
		usage(stdout);
		return 0;
	}
	if (o.set['V']) {
		printf("proff dprofpp version: %s\n", DPROF_COMPAT_VERSION);
		char v[128];
		proff_error err;
		proff_err_clear(&err);
		int rc = dprof_tmon_xs_version(o.file, v, sizeof(v), &err);
		if (rc == 0)
			printf("XS_VERSION: %s\n", v);
		else if (rc != PROFF_ENOENT && rc != PROFF_EIO) {
			cli_error(&err);
			return 1;
		}
		return 0;
	}

	dprof_read_opts ro;
	memset(&ro, 0, sizeof(ro));
	dprof_report_opts rp;
	memset(&rp, 0, sizeof(rp));

	/* sort: the last of -I, -l, -a, -v given wins, -d reverses */
	rp.sort = DPROF_SORT_TIME;
	if (o.set['I']) rp.sort = DPROF_SORT_CTIME;
	if (o.set['l']) rp.sort = DPROF_SORT_CALLS;
	if (o.set['a']) rp.sort = DPROF_SORT_ALPHA;
	if (o.set['v']) rp.sort = DPROF_SORT_AVG;
	rp.reverse = o.set['d'];
	rp.unsorted = truthy(&o, 'U');
	rp.inclusive = o.set['I'];
	rp.count = o.val['O'];
	rp.quiet = truthy(&o, 'q');
	/* three different precedence orders, as in dprofpp */
	rp.clock = o.set['u'] ? DPROF_CLOCK_USER : o.set['r'] ? DPROF_CLOCK_REAL :
		   o.set['s'] ? DPROF_CLOCK_SYS : DPROF_CLOCK_USER_SYS;
	ro.clock = truthy(&o, 'u') ? DPROF_CLOCK_USER : truthy(&o, 's') ? DPROF_CLOCK_SYS :
		   truthy(&o, 'r') ? DPROF_CLOCK_REAL : DPROF_CLOCK_USER_SYS;
	ro.run_clock = truthy(&o, 'r') ? DPROF_CLOCK_REAL : truthy(&o, 's') ? DPROF_CLOCK_SYS :
		       truthy(&o, 'u') ? DPROF_CLOCK_USER : DPROF_CLOCK_USER_SYS;
	rp.filter_re = truthy(&o, 'f') ? o.val['f'] : NULL;
	rp.group_re = truthy(&o, 'G') ? o.val['G'] : NULL;
	rp.group_other = truthy(&o, 'P');
	rp.deep = truthy(&o, 'S');
	rp.tree_only = truthy(&o, 'T') || truthy(&o, 't');
	rp.name_width = name_width();
	rp.warn = warn_cb;

	ro.anon_split = truthy(&o, 'R');
	ro.build.only_sub = o.set['g'] ? o.val['g'] : NULL;
	ro.build.group_re = rp.group_re;
	ro.build.autoload = truthy(&o, 'A');
	ro.build.fake_exits = truthy(&o, 'F');
	ro.build.deep = rp.deep;
	ro.build.tree = truthy(&o, 'T') ? 'T' : truthy(&o, 't') ? 't' : 0;
	ro.build.tree_t_too = truthy(&o, 'T') && truthy(&o, 't');
	ro.build.out = stdout;
	ro.build.warn = warn_cb;

	if (o.set['p']) {
		if (run_profiler(o.val['p']) < 0)
			return 1;
		o.file = "tmon.out";
		if (o.set['Q'])
			return 0;
	} else if (o.set['Q']) {
		cli_errorf("dprofpp: -Q is meaningful only when used with -p");
		return EXIT_USAGE;
	}

	static char obuf[1 << 16];
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));

	proff_error err;
	proff_err_clear(&err);
	dprof_model *m = NULL;
	int rrc;
	if (is_proff_trace(o.file)) {
		/* one wall clock: the time columns are real time */
		if (!o.set['u'] && !o.set['s'])
			rp.clock = DPROF_CLOCK_REAL;
		rrc = read_trace(o.file, &ro.build, &m, &err);
	} else {
		rrc = dprof_read_tmon(o.file, &ro, &m, &err);
	}
	if (rrc < 0) {
		fflush(stdout);
		cli_error(&err);
		return 1;
	}
	int rc = dprof_report(stdout, m, &rp, &err);
	dprof_model_free(m);
	if (rc < 0) {
		fflush(stdout);
		cli_error(&err);
		return 1;
	}
	return 0;
}
