#!/bin/bash
# bench/run.sh — `make bench`: every benchmark, side by side with its peer
# (perf, dprofpp, uftrace), medians and ratios printed. Large inputs are
# generated under build/bench on first use (not committed) and reused.
cd "$(dirname "$0")/.." || exit 2
status=0
# one benchmark a line, so that adding one is a one-line change
BENCHES=(
	bench/report.sh
	bench/dwarf.sh
	bench/diff.sh
	bench/diff-groups.sh
	bench/stream.sh
	bench/branch.sh
	bench/record.sh
	bench/instrument.sh
	bench/dprofpp.sh
	bench/flamegraph.sh
	bench/pprof.sh
	bench/fleet.sh
)
for b in "${BENCHES[@]}"; do
	[ -f "$b" ] || continue
	echo "== $b"
	bash "$b" || status=1
	echo
done
exit $status
