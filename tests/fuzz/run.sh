#!/bin/bash
# tests/fuzz/run.sh [SECONDS] — build the perf.data reader fuzz target with
# clang (-fsanitize=fuzzer,address,undefined) and run it for SECONDS (default
# 60) from a seed corpus of small perf.data files (the committed fixtures,
# plus fresh recordings when perf works here). Exit 0 when no crash was found.
# Crash inputs are left in $FUZZ_OUT (default build/fuzz/) as crash-*.
set -eu
SECS=${1:-60}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${FUZZ_OUT:-$ROOT/build/fuzz}
mkdir -p "$OUT/corpus"
cd "$ROOT"
command -v clang >/dev/null || { echo "run.sh: clang not found" >&2; exit 2; }
SRC="lib/perfdata/reader.c lib/perfdata/reader-sample.c lib/perfdata/features.c lib/perfdata/dump.c lib/util/error.c lib/util/util.c"
clang -std=gnu17 -g -O1 -Iinclude -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -o "$OUT/fuzz_perfdata" tests/fuzz/fuzz_perfdata.c $SRC -lzstd
cp tests/data/perfdata/*.data "$OUT/corpus/" 2>/dev/null || true
if perf record -q -e cpu-clock -c 500000 -o "$OUT/corpus/rec-g.data" -g -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' >/dev/null 2>&1; then
	perf record -q -e cpu-clock -c 500000 -z -o "$OUT/corpus/rec-z.data" -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' >/dev/null 2>&1 || true
fi
cd "$OUT"
rm -f crash-* leak-* timeout-* oom-*
./fuzz_perfdata -max_total_time="$SECS" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
	-print_final_stats=1 corpus 2>fuzz.log || true
tail -12 fuzz.log
bad=$(ls | grep -E '^(crash|leak|timeout|oom)-' | head -3 || true)
if [ -n "$bad" ]; then
	echo "run.sh: fuzzer found failing inputs in $OUT: $bad" >&2
	exit 1
fi
echo "run.sh: no failure in ${SECS}s"
