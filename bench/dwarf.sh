#!/bin/bash
# bench/dwarf.sh — proff report vs perf report --stdio on a --call-graph
# dwarf profile of >= 100k samples (tests/data/dwarf/work.c, two threads, at
# 20 kHz, 2 KB stack copies; about 280 K samples and 650 MB, sized so that
# perf report finishes in a minute or two), generated once into
# build/bench/dwarf2.data. perf unwinds every sample's stack again with each
# report; proff unwinds each with libdwfl, keeping a process's modules and
# CFI across samples, on two threads (docs/design.md).
# Targets (issue #26): >= 10x faster, identical output, peak RSS <= 1/4.
source "$(dirname "$0")/lib.sh"

D="$BENCH_DIR/dwarf2.data"
samples() { perf report -i "$1" --stdio --no-children -g none 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\)\(.\).*/\1\2/p'; }
if [ ! -s "$D" ]; then
	echo "  generating $D (about 40 s of recording)..."
	gcc -O2 -g -fomit-frame-pointer -pthread -o "$BENCH_DIR/dwarf-work" "$ROOT/tests/data/dwarf/work.c" || exit 1
	iter=${DWARF_ITER:-220000}
	for try in 1 2; do
		perf record -q -e cpu-clock -F 20000 --call-graph dwarf,2048 -o "$D" -- \
			"$BENCH_DIR/dwarf-work" $iter >/dev/null 2>&1 || { echo "bench: perf record failed" >&2; exit 1; }
		# the target is set for at least 100 K samples: a faster machine
		# takes fewer for the same work, so the work grows to 150 K
		n=$(samples "$D" | awk '{ v = $1 + 0; if ($1 ~ /K$/) v *= 1000; if ($1 ~ /M$/) v *= 1000000; print int(v / 1000) }')
		[ "$try" = 1 ] && [ -n "$n" ] && [ "$n" -lt 100 ] && [ -z "${DWARF_ITER:-}" ] || break
		iter=$((iter * 150 / (n > 0 ? n : 1)))
		echo "  $n K samples: again with $iter iterations..."
	done
fi
nsamp=$(samples "$D")
echo "  profile: $D ($(du -h "$D" | cut -f1), $nsamp samples)"

bench_pair() {   # bench_pair LABEL TARGET_RATIO OPTS...
	local label=$1 target=$2; shift 2
	perf report --no-inline -i "$D" --stdio "$@" 2>/dev/null | grep -v '^# (Tip' > "$BENCH_DIR/perf.out"
	"$PROFF" report --no-inline -i "$D" "$@" 2>/dev/null | grep -v '^# (Tip' > "$BENCH_DIR/proff.out"
	if cmp -s "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out"; then same="identical output"; else same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out" | grep -c '^[<>]') lines)"; fi
	# the same command line for both: --no-inline (perf's inline frames
	# would cost it addr2line runs; here the rows are the same either way)
	measure_pair "perf report --no-inline --stdio $*" "proff report --no-inline $*" $((6 + $#)) perf report --no-inline -i "$D" --stdio "$@" \
		"$PROFF" report --no-inline -i "$D" "$@"
	local pt=$MED_A pr=$RSS_A ft=$MED_B fr=$RSS_B
	echo "  dwarf report $label: proff ${ft}s, perf ${pt}s, ratio $(ratio "$pt" "$ft")x (target ${target}x); RSS proff ${fr} MB, perf ${pr} MB (1/$(ratio "$pr" "$fr")); $same"
	# proff's default, --inline (its inline lookups in the DWARF of each
	# frame's binary), for the record: what a user who types no option waits
	measure "proff report $* (default --inline)" "$PROFF" report -i "$D" "$@"
	echo "  dwarf report $label, proff's default --inline: ${MED_S}s, $(ratio "$pt" "$MED_S")x perf's --no-inline"
}

RUNS=${RUNS:-3}
bench_pair "children" 10
bench_pair "--no-children" 10 --no-children
