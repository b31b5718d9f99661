#!/bin/bash
# bench/branch.sh — `proff report` vs `perf report --stdio` in branch mode
# (perf report -b, the default for a file with branch stacks) on a large
# profile with synthetic branch stacks: the stream workload
# (tests/data/stream/before) recorded with -g at 10 kHz, branch stacks added
# by the project's tests/tools/mkbranch.py and by mkbrstack.py
# (MKBRSTACK=path, default ../shared/tools of the project's parent; skipped
# if absent), generated once into build/bench/branch_GEN.data (the
# recording shared with bench/stream.sh). Per generator: median times, peak
# RSS, whether the outputs are identical, and the ratio; the same for
# --branch-history (Children) and --branch-history --no-children. Last line:
#   branch: proff X.XXs, perf Y.YYs, ratio Zx
source "$(dirname "$0")/lib.sh"

MKBRSTACK=${MKBRSTACK:-$ROOT/../shared/tools/mkbrstack.py}
GENS=(mkbranch)
if [ -f "$MKBRSTACK" ]; then GENS=(mkbrstack mkbranch)
else echo "  mkbrstack: skipped (mkbrstack.py not found, set MKBRSTACK)"; fi

w="$BENCH_DIR/streamwl"
mkdir -p "$w"
if [ ! -s "$w/a.data" ]; then
	gcc -O0 -g -fno-omit-frame-pointer -fcf-protection=none -o "$w/work" "$ROOT"/tests/data/stream/before/*.c || exit 1
	perf record -q -e cpu-clock -F 10000 -g -o "$w/a.data" "$w/work" "${STREAM_BENCH_N:-1000000}" >/dev/null 2>&1 || exit 1
fi
strip_tip() { grep -v '^# (Tip:'; }
line=""
for GEN in "${GENS[@]}"; do
	F="$BENCH_DIR/branch_$GEN.data"
	if [ ! -s "$F" ]; then
		echo "  generating $F..."
		if [ "$GEN" = mkbrstack ]; then python3 "$MKBRSTACK" "$w/a.data" "$F" >/dev/null || exit 1
		else python3 "$ROOT/tests/tools/mkbranch.py" "$w/a.data" "$F" --seed 1 || exit 1; fi
	fi
	echo "  -- $GEN: $F ($(du -hL "$F" | cut -f1), $(perf report -i "$F" --stdio 2>/dev/null | sed -n 's/^# Samples: //p' | head -1))"
	measure "perf report --stdio (branch mode)" perf report -i "$F" --stdio; pt=$MED_S; prss=$RSS_MB
	measure "proff report (branch mode)" "$PROFF" report -i "$F"; ft=$MED_S; frss=$RSS_MB
	perf report -i "$F" --stdio 2>/dev/null | strip_tip >"$BENCH_DIR/perf.out"
	"$PROFF" report -i "$F" 2>/dev/null | strip_tip >"$BENCH_DIR/proff.out"
	if cmp -s "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out"; then same="identical output"
	else same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out" | grep -c '^[<>]') lines)"; fi
	line="branch: proff ${ft}s, perf ${pt}s, ratio $(ratio "$pt" "$ft")x; RSS ${frss} / ${prss} MB; $same"
	echo "  $GEN $line"
	# --branch-history (Children, perf's default) and --no-children: the
	# branch stacks as callchains
	for BHM in "" --no-children; do
		BH=(--branch-history $BHM)
		measure "perf report --stdio ${BH[*]}" perf report -i "$F" --stdio "${BH[@]}"; bpt=$MED_S; bprss=$RSS_MB
		measure "proff report ${BH[*]}" "$PROFF" report -i "$F" "${BH[@]}"; bft=$MED_S; bfrss=$RSS_MB
		perf report -i "$F" --stdio "${BH[@]}" 2>/dev/null | strip_tip >"$BENCH_DIR/perf.out"
		"$PROFF" report -i "$F" "${BH[@]}" 2>/dev/null | strip_tip >"$BENCH_DIR/proff.out"
		if cmp -s "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out"; then same="identical output"
		else same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out" | grep -c '^[<>]') lines)"; fi
		echo "  $GEN ${BH[*]}: proff ${bft}s, perf ${bpt}s, ratio $(ratio "$bpt" "$bft")x; RSS ${bfrss} / ${bprss} MB; $same"
	done
done
echo "$line"
