#!/bin/bash
# bench/instrument.sh — cost of exact tracing, side by side on the same binary:
# fib(N) built with -finstrument-functions, run
#   plain     no preload: glibc's empty __cyg_profile_func_* hooks
#   floor     a preloaded pair of hooks that only read the TSC (what any
#             timestamping tracer pays at least on this machine); the
#             proff / floor ratio of ns added per call is printed (target 1.25)
#   proff     libproff-instrument.so preloaded (what proff record --instrument runs)
#   counts    the same with PROFF_CLOCK=none (calls and call tree, no timestamps)
#   uftrace   uftrace record (--no-libcall --no-event)
# RUNS times each, interleaved; prints medians, ns added per call against
# plain, the proff/uftrace ratio and bytes per call of each trace.
# Time is CPU time (perf stat task-clock of the whole process tree: robust on
# a shared, loaded machine), or wall time with TIME=wall or without perf.
#
# usage: bench/instrument.sh [BUILD_DIR] [N] [RUNS]   (default build 32 5)
set -u
cd "$(dirname "$0")/.." || exit 2
BUILD=${1:-build}
N=${2:-32}
RUNS=${3:-5}
RT=$(pwd)/$BUILD/libproff-instrument.so
[ -s "$RT" ] || { echo "bench/instrument.sh: $RT missing (make BUILD=$BUILD)" >&2; exit 1; }
command -v uftrace >/dev/null || { echo "bench/instrument.sh: uftrace missing" >&2; exit 1; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proff-bench.XXXXXX")
export TMP N RT
trap 'rm -rf "$TMP"' EXIT

gcc -O2 -finstrument-functions -o "$TMP/fib" tests/data/instrument/fib.c
cat > "$TMP/floor.c" <<'EOF'
#include <stdint.h>
#include <x86intrin.h>
static __thread uint64_t last __attribute__((tls_model("initial-exec")));
void __cyg_profile_func_enter(void *f, void *s) { (void)f; (void)s; last = __rdtsc(); }
void __cyg_profile_func_exit(void *f, void *s) { (void)f; (void)s; last = __rdtsc() - last; }
EOF
gcc -O2 -fPIC -shared -o "$TMP/floor.so" "$TMP/floor.c"

# fib(N) makes 2*F(N+1)-1 calls of fib, plus main
CALLS=$(awk -v n="$N" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print 2 * a }')

now() { date +%s%N; }
MODE=${TIME:-cpu}
if [ "$MODE" = cpu ] && ! perf stat -x, -e task-clock -o /dev/null true >/dev/null 2>&1; then MODE=wall; fi
measure() {  # prints microseconds
	if [ "$MODE" = cpu ]; then
		perf stat -x, -e task-clock -o "$TMP/stat.txt" -- bash -c "$(declare -f "run_$1"); run_$1" >/dev/null 2>&1
		awk -F, '/task-clock/ { printf "%d\n", $1 * 1000 }' "$TMP/stat.txt"
	else
		local t0 t1; t0=$(now); "run_$1"; t1=$(now); echo $(( (t1 - t0) / 1000 ))
	fi
}
run_plain()   { "$TMP/fib" "$N" >/dev/null; }
run_floor()   { LD_PRELOAD="$TMP/floor.so" "$TMP/fib" "$N" >/dev/null; }
run_proff()   { PROFF_OUTPUT="$TMP/fib.trace" LD_PRELOAD="$RT" "$TMP/fib" "$N" >/dev/null; }
run_counts()  { PROFF_CLOCK=none PROFF_OUTPUT="$TMP/counts.trace" LD_PRELOAD="$RT" "$TMP/fib" "$N" >/dev/null; }
run_uftrace() { rm -rf "$TMP/uftrace.data"; uftrace record --no-libcall --no-event -d "$TMP/uftrace.data" "$TMP/fib" "$N" >/dev/null 2>&1; }

declare -A T
for r in $(seq "$RUNS"); do
	for k in plain floor proff counts uftrace; do
		T[$k]="${T[$k]:-} $(measure "$k")"
	done
done
median() { tr ' ' '\n' | grep . | sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "# fib($N): $CALLS calls, $RUNS runs each, median $MODE time; ns/call = (median - plain median) / calls"
printf '%-8s %12s %12s %12s\n' tool median_ms ns_per_call bytes_per_call
plain=$(echo "${T[plain]}" | median)
for k in plain floor proff counts uftrace; do
	m=$(echo "${T[$k]}" | median)
	ns=$(awk -v m="$m" -v p="$plain" -v c="$CALLS" 'BEGIN { printf "%.1f", (m - p) * 1000 / c }')
	case $k in
	proff) b=$(awk -v s="$(stat -c %s "$TMP/fib.trace")" -v c="$CALLS" 'BEGIN { printf "%.1f", s / c }') ;;
	counts) b=$(awk -v s="$(stat -c %s "$TMP/counts.trace")" -v c="$CALLS" 'BEGIN { printf "%.1f", s / c }') ;;
	uftrace) b=$(awk -v s="$(du -sb "$TMP/uftrace.data" | cut -f1)" -v c="$CALLS" 'BEGIN { printf "%.1f", s / c }') ;;
	*) b=- ;;
	esac
	printf '%-8s %12.1f %12s %12s\n' "$k" "$(awk -v m="$m" 'BEGIN { print m / 1000 }')" "$ns" "$b"
	eval "ns_$k=$ns"
done
awk -v p="$ns_proff" -v u="$ns_uftrace" -v f="$ns_floor" 'BEGIN {
	printf "# proff is %.1fx cheaper than uftrace per call; proff above the TSC-read floor: %.1f ns/call\n", u / p, p - f
	printf "# proff / floor: %.2fx (target <= 1.25x); uftrace / proff: %.1fx (target >= 3x)\n", p / f, u / p }'
