/* cli-store.h — the store's side of report and diff (cli/cli-store.c) and
 * the store opened with the CLI's credentials (environment, config file). */
#ifndef PROFF_CLI_STORE_H
#define PROFF_CLI_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proff/diff.h"
#include "proff/flamegraph.h"
#include "proff/report.h"
#include "proff/store.h"

/* 0, or the exit status after a message (129: a usage error) */
int cli_store_open(const char *url, bool create, store **out);
/* Exit statuses */
int cli_store_report(const char *url, char *const *where, size_t nwhere, const hist_opts *ho,
		     const report_fmt *fmt, bool children, bool json);
int cli_store_diff(const char *url, const char *replicate, char *const *words, const uint32_t *group, size_t nwords,
		   const hist_opts *ho, const diff_opts *o, const diff_group_opts *g, bool json);
/* --flamegraph of a store's profiles: words are selectors, group[i] the
 * selector word i belongs to (NULL: one selector, report); nsides 1 (a
 * report's flame graph) or 2 (a diff's: the first selector's replicates
 * against the second's) */
int cli_store_flamegraph(const char *url, const char *replicate, char *const *words, const uint32_t *group,
			 size_t nwords, int nsides, const char *path, fg_opts *fo);

#endif
