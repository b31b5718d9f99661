/* proff/reference.h — the reference path: what a report's rows and a
 * diff's pairs MEAN, in short plain code apart from the engine
 * (lib/hist/reference.c, lib/diff/reference.c). Read these to learn what
 * Self, Children and perf diff's pairing are; the engine (hist_build,
 * diff_compute) computes the same, fast (threads, split passes, caches),
 * and must give output byte-identical to this path: `proff report
 * --engine=reference` and `proff diff --engine=reference` run it, and
 * tests/cli/reference-matrix.sh compares the two. Slow on purpose: for
 * debugging and tests, not for big profiles. */
#ifndef PROFF_REFERENCE_H
#define PROFF_REFERENCE_H

#include <stddef.h>
#include <stdint.h>

#include "proff/diff.h"
#include "proff/error.h"
#include "proff/hist.h"
#include "proff/profile.h"

/* The rows of event evsel of prof by opts' sort keys, as hist_build makes
 * them (the engine's tuning fields of opts — split_min, order_early,
 * drop_sequence — are ignored). May make srclines in prof. Free with
 * hist_free; sort and print as hist_build's. */
int hist_build_reference(pf_profile *prof, uint32_t evsel, const hist_opts *opts, hist **out, proff_error *err);

/* perf diff's pairing and compute of hists[0] (baseline) with the others,
 * as diff_compute does; the same result, freed with diff_result_free. */
int diff_compute_reference(const hist *const *hists, size_t nfiles, const diff_opts *o, diff_result **out,
			   proff_error *err);

#endif
