#!/bin/bash
# bench/srcline-full.sh — `-s srcline` on the large bench profile with perf
# let run to completion (17-22 minutes here, hence not part of `make bench`,
# which stops perf at 20x proff's time): the time ratio, whether the
# outputs agree, and the peak memory of each side. perf does its DWARF work
# in addr2line child processes, so its side is sampled as a process group
# (every SAMPLE_S seconds from /proc/PID/smaps_rollup): perf's own RSS, the
# group's RSS summed, and the group's PSS summed (shared pages counted
# once). proff's peak RSS is GNU time's. Run: `bash bench/srcline-full.sh`
# (after bench/report.sh has generated build/bench/mix_a.data).
source "$(dirname "$0")/lib.sh"
A="$BENCH_DIR/mix_a.data"
SAMPLE_S=${SAMPLE_S:-2}
OPTS=(--no-children -g none -s srcline)
if [ ! -s "$A" ]; then
	echo "bench/srcline-full.sh: $A is missing: run bench/report.sh first" >&2
	exit 2
fi

# group_peak CMD... — run CMD in a process group of its own, sampling it;
# sets G_SECS, G_OWN_MB (CMD's own peak RSS), G_RSS_MB, G_PSS_MB
group_peak() {
	local own=0 rss=0 pss=0 s e
	s=$(date +%s.%N)
	python3 -c 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])' "$@" \
		>"$BENCH_DIR/full.out" 2>/dev/null &
	local pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		local r=0 p=0 q a b
		for q in $(pgrep -g "$pid"); do
			read -r a b < <(awk '/^Rss:/ {r = $2} /^Pss:/ {p = $2} END {print r + 0, p + 0}' \
				"/proc/$q/smaps_rollup" 2>/dev/null)
			r=$((r + ${a:-0})); p=$((p + ${b:-0}))
			[ "$q" = "$pid" ] && [ "${a:-0}" -gt "$own" ] && own=${a:-0}
		done
		[ "$r" -gt "$rss" ] && rss=$r
		[ "$p" -gt "$pss" ] && pss=$p
		sleep "$SAMPLE_S"
	done
	wait "$pid"
	e=$(date +%s.%N)
	G_SECS=$(awk -v a="$s" -v b="$e" 'BEGIN { printf "%.0f", b - a }')
	G_OWN_MB=$(awk -v k="$own" 'BEGIN { printf "%.1f", k / 1024 }')
	G_RSS_MB=$(awk -v k="$rss" 'BEGIN { printf "%.1f", k / 1024 }')
	G_PSS_MB=$(awk -v k="$pss" 'BEGIN { printf "%.1f", k / 1024 }')
}

measure "proff report ${OPTS[*]}" "$PROFF" report -i "$A" "${OPTS[@]}"
ft=$MED_S fr=$RSS_MB
"$PROFF" report -i "$A" "${OPTS[@]}" 2>/dev/null | grep -v '^# (Tip' > "$BENCH_DIR/proff-full.out"
echo "  perf report --stdio ${OPTS[*]}, to completion (sampled every ${SAMPLE_S} s)..."
group_peak perf report -i "$A" --stdio "${OPTS[@]}"
grep -v '^# (Tip' "$BENCH_DIR/full.out" > "$BENCH_DIR/perf-full.out"
ndiff=$(diff "$BENCH_DIR/perf-full.out" "$BENCH_DIR/proff-full.out" | grep -c '^<')
nlines=$(wc -l < "$BENCH_DIR/perf-full.out")
echo "  perf: ${G_SECS} s; peak RSS: perf's process ${G_OWN_MB} MB, with its helpers ${G_RSS_MB} MB summed, ${G_PSS_MB} MB PSS"
echo "  proff: ${ft} s, peak RSS ${fr} MB"
echo "  time ratio $(ratio "$G_SECS" "$ft")x (target 20x); RSS 1/$(ratio "$G_OWN_MB" "$fr") of perf's process, 1/$(ratio "$G_RSS_MB" "$fr") of perf with its helpers (1/$(ratio "$G_PSS_MB" "$fr") by PSS); target 1/4"
echo "  outputs: $ndiff of $nlines lines differ (docs/compat/report.md lists the known one)"
