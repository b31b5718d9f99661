# bench/lib.sh — helpers for the side-by-side benchmarks: run a command N
# times, report the median wall time and the peak RSS, print ratios.
# Benchmarks use the normal (non-sanitized) build.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFF=${PROFF:-$ROOT/build/proff}
BENCH_DIR=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"

# measure NAME CMD... -> sets MED_S (median seconds) and RSS_MB (max of peak RSS)
measure() {
	local name=$1; shift
	local times=() rss=0 i t r
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f '%e %M' -o "$BENCH_DIR/.time" "$@" >/dev/null 2>"$BENCH_DIR/.err" || {
			echo "bench: '$name' failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2; MED_S=nan; RSS_MB=nan; return 1; }
		read -r t r < <(tail -1 "$BENCH_DIR/.time")
		times+=("$t")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	MED_S=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}')
	RSS_MB=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k/1024}')
	printf '  %-44s median %7.3f s  peak RSS %8s MB  (%d runs)\n' "$name" "$MED_S" "$RSS_MB" "$RUNS"
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "inf" }'; }
