/* diff-groups.h — `proff diff A1 A2 -- B1 B2`: what cmd-diff.c hands to the
 * groups' pipeline (cli/cmd-diff-groups.c) once the command line is read. */
#ifndef PROFF_CLI_DIFF_GROUPS_H
#define PROFF_CLI_DIFF_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/diff.h"
#include "proff/profile.h"

/* --fail-on-regression found a significant regression: distinct from the
 * usage (129) and error (255, 1) statuses */
#define EXIT_REGRESSION 3

typedef struct diff_groups_run {
	const char *const *paths;     /* [nruns]: the runs' names */
	const char *const *files;     /* [nruns]: the file each run reads (NULL: paths) */
	const uint32_t *group;        /* [nruns] */
	size_t nruns;
	pf_load_opts *load;           /* [nruns]: each file's load options */
	const hist_opts *ho;
	const diff_opts *o;
	const diff_group_opts *g;
	bool json;
	bool srclines;                /* the plan's srcline stage before each hist (hist_srclines) */
	size_t par;                   /* files loaded at once (0: one per CPU) */
} diff_groups_run;

/* Load every run (a few at a time; each profile freed once its rows are in
 * the tables), compute, print. Returns the exit status. */
int cmd_diff_groups(const diff_groups_run *d);

/* `--replicate LABEL` / `--groups-by LABEL` on files (labelled pprof, as
 * proff convert A1 A2 -- B1 B2 -o F writes it): each file's samples split
 * into runs, one per (groups-by value, replicate value) its samples have,
 * in the order first met; a run's group is its groups-by value's rank
 * (numbers in numeric order, else by name; the first the baseline), or
 * without --groups-by its file's group. Each run reads its file with
 * pf_load_opts.label_is set to its values. */
typedef struct label_runs {
	size_t n;
	char **names;                 /* [n]: the replicate value (else FILE or FILE:LABEL=VALUE) */
	const char **files;           /* [n] */
	uint32_t *group;              /* [n] */
	pf_load_opts *load;           /* [n] */
	char **vals;                  /* [2n]: each run's replicate and groups-by values (owned) */
} label_runs;
/* 0, or the exit status after one line on stderr */
int diff_label_runs(const char *const *files, const uint32_t *file_group, size_t nfiles, const pf_load_opts *lo,
		    const char *replicate, const char *groups_by, label_runs *out);
void label_runs_free(label_runs *r);

#endif
