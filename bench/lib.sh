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

# bounded NAME TARGET PROFF_SECONDS CMD... — for a peer far slower than proff:
# run CMD once with a limit of TARGET x proff's time (at least 10 s). Sets
# BOUND to the ratio when it finishes in time, or to "> TARGETx" when it is
# stopped at the limit (proff is then at least TARGET times faster: a lower
# bound, measured). BOUND_OUT is the peer's output when it finished.
bounded() {
	local name=$1 target=$2 ft=$3; shift 3
	local limit s e rc
	limit=$(awk -v t="$ft" -v k="$target" 'BEGIN { l = t * k; if (l < 10) l = 10; printf "%.0f", l }')
	s=$(date +%s.%N)
	# its own process group, so the helpers it started (addr2line) stop too
	python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])' "$@" \
		>"$BENCH_DIR/bounded.out" 2>/dev/null &
	local pid=$! stopped=0
	while kill -0 "$pid" 2>/dev/null; do
		if awk -v a="$s" -v b="$(date +%s.%N)" -v l="$limit" 'BEGIN { exit !(b - a >= l) }'; then
			kill -KILL -- -"$pid" 2>/dev/null
			stopped=1
			break
		fi
		sleep 0.2
	done
	wait "$pid" 2>/dev/null; rc=$?
	e=$(awk -v a="$s" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
	BOUND_OUT=""
	if [ "$stopped" = 1 ]; then
		BOUND="> ${target}x (stopped unfinished at ${e}s, ${target}x proff's ${ft}s)"
	else
		BOUND="$(ratio "$e" "$ft")x (finished in ${e}s)"
		BOUND_OUT="$BENCH_DIR/bounded.out"
	fi
	printf '  %-44s %s\n' "$name" "$BOUND"
}
