#!/bin/bash
# bench/stream.sh — `proff diff --stream` vs `perf diff --stream` on two large
# profiles with synthetic branch stacks: the stream workload
# (tests/data/stream/before) recorded with -g at 10 kHz, branch stacks added
# by the project's tests/tools/mkbranch.py (STREAM_BENCH_GEN=mkbrstack uses
# the instruction-accurate mkbrstack.py instead: MKBRSTACK=path, default
# ../shared/tools of the project's parent), generated once into
# build/bench/stream_GEN_{a,b}.data. Prints median times, whether the outputs
# are identical, and the ratio (target >= 10x). perf 6.1 dies with SIGSEGV on
# `-c cycles`, so that one is timed for proff alone. Last line:
#   stream: proff X.XXs, perf Y.YYs, ratio Zx
source "$(dirname "$0")/lib.sh"

GEN=${STREAM_BENCH_GEN:-mkbranch}
MKBRSTACK=${MKBRSTACK:-$ROOT/../shared/tools/mkbrstack.py}
if [ "$GEN" = mkbrstack ]; then
	[ -f "$MKBRSTACK" ] || { echo "  skipped: mkbrstack.py not found (set MKBRSTACK)"; exit 0; }
	gen() { python3 "$MKBRSTACK" "$1" "$2" --seed "$3" $([ "$3" = 2 ] && echo --func-scale beta=2) >/dev/null; }
else
	gen() { python3 "$ROOT/tests/tools/mkbranch.py" "$1" "$2" --seed "$3" $([ "$3" = 2 ] && echo --cycles-scale 2); }
fi
A="$BENCH_DIR/stream_${GEN}_a.data"
B="$BENCH_DIR/stream_${GEN}_b.data"
if [ ! -s "$A" ] || [ ! -s "$B" ]; then
	echo "  generating $A and $B (about a minute)..."
	w="$BENCH_DIR/streamwl"
	mkdir -p "$w"
	gcc -O0 -g -fno-omit-frame-pointer -fcf-protection=none -o "$w/work" "$ROOT"/tests/data/stream/before/*.c || exit 1
	perf record -q -e cpu-clock -F 10000 -g -o "$w/a.data" "$w/work" "${STREAM_BENCH_N:-1000000}" >/dev/null 2>&1 || exit 1
	perf record -q -e cpu-clock -F 10000 -g -o "$w/b.data" "$w/work" "${STREAM_BENCH_N:-1000000}" >/dev/null 2>&1 || exit 1
	gen "$w/a.data" "$A" 1 || exit 1
	gen "$w/b.data" "$B" 2 || exit 1
fi
echo "  profiles: $A ($(du -h "$A" | cut -f1)), $B ($(du -h "$B" | cut -f1))"

# proff diff dispatches --stream to cmd_diff_stream; until it does, use the
# test driver built from the same sources
STREAM=("$PROFF" diff)
"$PROFF" diff --stream --stream-top=1 "$BENCH_DIR/none1" "$BENCH_DIR/none2" >/dev/null 2>&1
if [ $? != 255 ]; then
	cc -std=gnu17 -O2 -D_GNU_SOURCE -I"$ROOT/include" -o "$BENCH_DIR/stream-main" "$ROOT/tests/tools/stream-main.c" \
		"$ROOT/cli/cmd-diff-stream.c" "$ROOT/cli/cli-util.c" "$(dirname "$PROFF")/libproff.a" \
		$(pkg-config --libs libdw libelf libzstd 2>/dev/null || echo -ldw -lelf -lzstd) -lstdc++ -lm -lpthread || exit 1
	STREAM=("$BENCH_DIR/stream-main" diff)
fi

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
echo "  -c cycles: proff ${ct}s; perf exits $prc$([ $prc = 139 ] && echo ' (SIGSEGV, perf 6.1 defect)')"
printf 'stream: proff %.2fs, perf %.2fs, ratio %sx\n' "$ft" "$pt" "$(ratio "$pt" "$ft")"
