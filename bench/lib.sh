# bench/lib.sh — helpers for the side-by-side benchmarks: run a command N
# times, report the median wall time and the peak RSS, print ratios.
# Benchmarks use the normal (non-sanitized) build.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PROFF=${PROFF:-$ROOT/build/proff}
BENCH_DIR=${BENCH_DIR:-$ROOT/build/bench}
RUNS=${RUNS:-5}
mkdir -p "$BENCH_DIR"

# timed CMD...: one run of CMD, its output discarded, its stderr in
# $BENCH_DIR/.err; sets T (wall seconds, from bash's microsecond clock:
# time(1)'s %e counts hundredths, a tenth of a run of 0.1 s) and R (peak
# RSS in KB, time(1)'s %M). Non-zero when CMD fails.
timed() {
	local t0=$EPOCHREALTIME
	/usr/bin/time -f '%M' -o "$BENCH_DIR/.time" "$@" >/dev/null 2>"$BENCH_DIR/.err" || return 1
	local t1=$EPOCHREALTIME
	T=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')
	R=$(tail -1 "$BENCH_DIR/.time")
}

# measure NAME CMD... -> sets MED_S (median seconds) and RSS_MB (max of peak RSS)
measure() {
	local name=$1; shift
	local times=() rss=0 i t r
	for ((i = 0; i < RUNS; i++)); do
		timed "$@" || {
			echo "bench: '$name' failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2; MED_S=nan; RSS_MB=nan; return 1; }
		t=$T r=$R
		times+=("$t")
		[ "$r" -gt "$rss" ] && rss=$r
	done
	MED_S=$(median "${times[@]}")
	RSS_MB=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k/1024}')
	printf '  %-44s median %7.3f s  peak RSS %8s MB  (%d runs)\n' "$name" "$MED_S" "$RSS_MB" "$RUNS"
}

# measure_pair NAME_A NAME_B N_A CMD_A... CMD_B... -> MED_A, RSS_A, MED_B,
# RSS_B: the two commands in turn, each measured run right after a
# warm-up run of its own (A A' B B' A A' ...; the primed runs count). On
# this VM memory freed a second or two ago is handed back to the host, so a
# run that follows another program's (or a pause) starts on cold memory;
# the warm-up gives each measured run the warm memory of a run just before,
# and taking the runs in turn spreads both commands' samples over the same
# minutes of a host whose speed drifts (one command's few seconds after the
# other's minute sampled one moment of the host). N_A: how many of the
# arguments after the names are CMD_A.
measure_pair() {
	local na=$1 nb=$2 n=$3; shift 3
	local -a ca=("${@:1:n}") cb=("${@:n+1}")
	local ta=() tb=() ra=0 rb=0 i t r side
	for ((i = 0; i < RUNS; i++)); do
		for side in a b; do
			if [ $side = a ]; then set -- "${ca[@]}"; else set -- "${cb[@]}"; fi
			"$@" >/dev/null 2>&1     # warm-up, not measured
			timed "$@" || {
				echo "bench: '$([ $side = a ] && echo "$na" || echo "$nb")' failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2
				MED_A=nan; MED_B=nan; RSS_A=nan; RSS_B=nan; return 1; }
			t=$T r=$R
			if [ $side = a ]; then ta+=("$t"); [ "$r" -gt "$ra" ] && ra=$r; else tb+=("$t"); [ "$r" -gt "$rb" ] && rb=$r; fi
		done
	done
	MED_A=$(median "${ta[@]}"); MED_B=$(median "${tb[@]}")
	RSS_A=$(awk -v k="$ra" 'BEGIN {printf "%.1f", k/1024}'); RSS_B=$(awk -v k="$rb" 'BEGIN {printf "%.1f", k/1024}')
	printf '  %-44s median %7.3f s  peak RSS %8s MB  (%d runs, each after a warm-up, in turn with the next)\n' "$na" "$MED_A" "$RSS_A" "$RUNS"
	printf '  %-44s median %7.3f s  peak RSS %8s MB  (%d runs, each after a warm-up, in turn with the one above)\n' "$nb" "$MED_B" "$RSS_B" "$RUNS"
}

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

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

# bench_mix_profile OUT SECONDS — the report bench's large many-DSO profile
# (gcc + python3 + sort at 20 kHz with -g), for benchmarks other than
# bench/report.sh that read the same file (bench/report.sh makes it with
# the same recipe when it runs first)
bench_mix_profile() {
	local out=$1 secs=$2 w="$BENCH_DIR/mixwl"
	mkdir -p "$w"
	cp "$ROOT/tests/data/report/calls.c" "$w/src.c"
	seq 1 200000 | sed 's/$/ lorem ipsum/' > "$w/words"
	cat > "$w/mix.sh" <<EOS
#!/bin/sh
end=\$(( \$(date +%s) + $secs ))
while [ \$(date +%s) -lt \$end ]; do
  gcc -O2 -c $w/src.c -o /dev/null
  python3 -c "import json,re; [json.dumps({str(i):[i,str(i)*3]}) for i in range(60000)]; [re.sub('a+','b','caaat'*20) for i in range(20000)]"
  sort -R $w/words > /dev/null
done
EOS
	perf record -q -F 20000 -g -e cpu-clock -o "$out" -- sh "$w/mix.sh" >/dev/null 2>&1
}
