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
	const char *const *paths;     /* [nruns] */
	const uint32_t *group;        /* [nruns] */
	size_t nruns;
	pf_load_opts *load;           /* [nruns]: each file's load options */
	const hist_opts *ho;
	const diff_opts *o;
	const diff_group_opts *g;
	bool json;
	size_t par;                   /* files loaded at once (0: one per CPU) */
} diff_groups_run;

/* Load every run (a few at a time; each profile freed once its rows are in
 * the tables), compute, print. Returns the exit status. */
int cmd_diff_groups(const diff_groups_run *d);

#endif
