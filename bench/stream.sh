#!/bin/bash
# bench/stream.sh — `proff diff --stream` vs `perf diff --stream` on two large
# profiles with synthetic branch stacks: the stream workload
# (tests/data/stream/before) recorded with -g at 10 kHz, branch stacks added
# by the project's tests/tools/mkbranch.py and by the instruction-accurate
# mkbrstack.py (MKBRSTACK=path, default ../shared/tools of the project's
# parent; skipped if absent), generated once into
# build/bench/stream_GEN_{a,b}.data from the same two recordings.
# STREAM_BENCH_GEN=mkbranch or mkbrstack runs that generator alone.
# Per generator: median times, whether the outputs are identical, and the
# ratio (target >= 10x). perf 6.1 dies with SIGSEGV on `-c cycles`, so that
# one is timed for proff alone (its ratio is to perf's --stream time).
# Last lines (the mkbranch one last; alone, only the generator's, unlabelled):
#   stream (mkbrstack): proff X.XXs, perf Y.YYs, ratio Zx
#   stream: proff X.XXs, perf Y.YYs, ratio Zx
source "$(dirname "$0")/lib.sh"

MKBRSTACK=${MKBRSTACK:-$ROOT/../shared/tools/mkbrstack.py}
if [ -n "${STREAM_BENCH_GEN:-}" ]; then GENS=("$STREAM_BENCH_GEN")
elif [ -f "$MKBRSTACK" ]; then GENS=(mkbrstack mkbranch)
else GENS=(mkbranch); echo "  mkbrstack: skipped (mkbrstack.py not found, set MKBRSTACK)"; fi

# proff diff dispatches --stream to cmd_diff_stream; until it does, use the
# test driver built from the same sources
STREAM=("$PROFF" diff)
"$PROFF" diff --stream --stream-top=1 "$BENCH_DIR/none1" "$BENCH_DIR/none2" >/dev/null 2>&1
if [ $? != 255 ]; then
	cc -std=gnu17 -O2 -D_GNU_SOURCE -I"$ROOT/include" -o "$BENCH_DIR/stream-main" "$ROOT/tests/tools/stream-main.c" \
		"$ROOT/cli/cmd-diff-stream.c" "$ROOT/cli/cli-util.c" "$(dirname "$PROFF")/libproff.a" \
		$(pkg-config --libs libdw libelf libzstd zlib 2>/dev/null || echo -ldw -lelf -lzstd -lz) -lstdc++ -lm -lpthread || exit 1
	STREAM=("$BENCH_DIR/stream-main" diff)
fi

gen() {   # GEN in out seed
	if [ "$1" = mkbrstack ]; then
		python3 "$MKBRSTACK" "$2" "$3" --seed "$4" $([ "$4" = 2 ] && echo --func-scale beta=2) >/dev/null
	else
		python3 "$ROOT/tests/tools/mkbranch.py" "$2" "$3" --seed "$4" $([ "$4" = 2 ] && echo --cycles-scale 2)
	fi
}

summary=()
for GEN in "${GENS[@]}"; do
	echo "  -- $GEN"
	if [ "$GEN" = mkbrstack ] && [ ! -f "$MKBRSTACK" ]; then
		echo "  skipped: mkbrstack.py not found (set MKBRSTACK)"; continue
	fi
	A="$BENCH_DIR/stream_${GEN}_a.data"
	B="$BENCH_DIR/stream_${GEN}_b.data"
	if [ ! -s "$A" ] || [ ! -s "$B" ]; then
		echo "  generating $A and $B (about a minute)..."
		w="$BENCH_DIR/streamwl"
		mkdir -p "$w"
		if [ ! -s "$w/a.data" ] || [ ! -s "$w/b.data" ]; then
			gcc -O0 -g -fno-omit-frame-pointer -fcf-protection=none -o "$w/work" "$ROOT"/tests/data/stream/before/*.c || exit 1
			perf record -q -e cpu-clock -F 10000 -g -o "$w/a.data" "$w/work" "${STREAM_BENCH_N:-1000000}" >/dev/null 2>&1 || exit 1
			perf record -q -e cpu-clock -F 10000 -g -o "$w/b.data" "$w/work" "${STREAM_BENCH_N:-1000000}" >/dev/null 2>&1 || exit 1
		fi
		gen "$GEN" "$w/a.data" "$A" 1 || exit 1
		gen "$GEN" "$w/b.data" "$B" 2 || exit 1
	fi
	echo "  profiles: $A ($(du -hL "$A" | cut -f1)), $B ($(du -hL "$B" | cut -f1))"

	RUNS_SAVED=$RUNS
	RUNS=${RUNS_PERF_STREAM:-3}
	measure "perf diff --stream" perf diff --stream "$A" "$B"; pt=$MED_S
	RUNS=$RUNS_SAVED
	measure "proff diff --stream" "${STREAM[@]}" --stream "$A" "$B"; ft=$MED_S
	perf diff --stream "$A" "$B" >"$BENCH_DIR/perf.out" 2>/dev/null
	"${STREAM[@]}" --stream "$A" "$B" >"$BENCH_DIR/proff.out" 2>/dev/null
	if cmp -s "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out"; then same="identical output"
	else same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out" | grep -c '^[<>]') lines)"; fi
	echo "  --stream: proff ${ft}s, perf ${pt}s, ratio $(ratio "$pt" "$ft")x (target 10x); $same"

	measure "proff diff -c cycles --cycles-hist" "${STREAM[@]}" -c cycles --cycles-hist "$A" "$B"; ct=$MED_S
	perf diff -c cycles "$A" "$B" >/dev/null 2>&1
	prc=$?
	echo "  -c cycles: proff ${ct}s ($(ratio "$pt" "$ct")x perf's --stream time); perf exits $prc$([ $prc = 139 ] && echo ' (SIGSEGV, perf 6.1 defect)')"
	label="stream"
	[ "${#GENS[@]}" -gt 1 ] && [ "$GEN" != mkbranch ] && label="stream ($GEN)"
	summary+=("$(printf '%s: proff %.2fs, perf %.2fs, ratio %sx' "$label" "$ft" "$pt" "$(ratio "$pt" "$ft")")")
done
printf '%s\n' "${summary[@]}"
