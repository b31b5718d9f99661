#!/bin/bash
# bench/before-after.sh — one proff binary against another on the same
# inputs, for a change that must not cost speed or memory (a refactoring):
#   BEFORE=/path/to/old/proff [AFTER=build/proff] [RUNS=5] bash bench/before-after.sh
# Each case runs the two binaries in turn (measure_pair: each measured run
# right after a warm-up of its own), prints both medians, the ratio
# before/after (above 1: the new binary is faster) and the peak RSS of each,
# and says whether the outputs are byte-identical (a case whose output
# differs is a behaviour change, not a speed figure). The cases are the
# commands both binaries have: report in its main modes on the report
# bench's profile (build/bench/mix_a.data, made by bench/report.sh's recipe
# when missing) and diff of the groups bench's runs (build/bench/groups,
# made by bench/diff-groups.sh). Not in `make bench` (it needs an old
# binary); the figures go to docs/performance.md.
source "$(dirname "$0")/lib.sh"

BEFORE=${BEFORE:?set BEFORE to the old proff binary (e.g. a worktree of the old commit, built)}
AFTER=${AFTER:-$PROFF}
[ -x "$BEFORE" ] || { echo "bench: $BEFORE is not an executable" >&2; exit 2; }
[ -x "$AFTER" ] || { echo "bench: $AFTER is not an executable" >&2; exit 2; }

M="$BENCH_DIR/mix_a.data"
[ -s "$M" ] || bench_mix_profile "$M" "${MIX_SECONDS:-65}"
G="$BENCH_DIR/groups"
[ -s "$G/a.1" ] && [ -s "$G/b.5" ] || bash "$ROOT/bench/diff-groups.sh" >/dev/null ||
	{ echo "bench: could not make the groups bench's runs" >&2; exit 2; }

status=0
case_pair() {   # case_pair LABEL ARGS... (the same arguments to both binaries)
	local label=$1 same; shift
	"$BEFORE" "$@" > "$BENCH_DIR/before.out" 2>/dev/null
	"$AFTER" "$@" > "$BENCH_DIR/after.out" 2>/dev/null
	if cmp -s "$BENCH_DIR/before.out" "$BENCH_DIR/after.out"; then
		same="identical output"
	else
		same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/before.out" "$BENCH_DIR/after.out" | grep -c '^[<>]') lines)"
		status=1
	fi
	measure_pair "before: $label" "after:  $label" $((1 + $#)) "$BEFORE" "$@" "$AFTER" "$@" || { status=1; return; }
	echo "  $label: before ${MED_A}s, after ${MED_B}s, before/after $(ratio "$MED_A" "$MED_B")x; RSS before ${RSS_A} MB, after ${RSS_B} MB; $same"
}

echo "  before: $BEFORE"
echo "  after:  $AFTER"
case_pair "report (children)" report -i "$M"
case_pair "report --no-children" report --no-children -i "$M"
case_pair "report -s sym,srcline" report --no-children -s sym,srcline -i "$M"
case_pair "report -g caller -s dso,sym" report -g caller -s dso,sym -i "$M"
case_pair "diff of a pair" diff "$G/a.1" "$G/b.1"
case_pair "diff -s dso,sym, 1 + 4 files" diff -s dso,sym "$G/a.1" "$G/b.1" "$G/a.2" "$G/b.2" "$G/a.3"
case_pair "diff -c wdiff:1,1 -s sym" diff -c wdiff:1,1 -s sym "$G/a.1" "$G/b.1"
exit $status
