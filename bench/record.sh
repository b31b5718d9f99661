#!/bin/bash
# bench/record.sh — what recording costs the workload: proff record vs
# perf record, both at -F 4000 -g (cpu-clock), on the same CPU-bound program
# (a fixed amount of work in a 12-deep call tree, ~1 s, single-threaded).
# Runs are interleaved (plain, proff, perf) RUNS times; medians of:
#   workload time  the program's own elapsed time for its fixed work
#   command time   wall time of the whole command (recorder start/finish included)
#   lost           Total Lost Samples as perf report reads each file
#   size           output file size
# Ends with "record: slowdown proff X%, perf Y%; size proff A KB, perf B KB".
source "$(dirname "$0")/lib.sh"

if ! command -v perf >/dev/null || ! perf record -q -o "$BENCH_DIR/.probe.data" true >/dev/null 2>&1; then
	echo "  perf record does not work here: skipped"; exit 0
fi
W=$BENCH_DIR/recwl
cat > "$W.c" <<'CEOF'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static volatile double sink;
__attribute__((noinline)) static double leaf(long n) { double x = 0; for (long i = 0; i < n; i++) x += i * 1.000001; return x; }
__attribute__((noinline)) static double level(int d, long n)
{
	if (d == 0) return leaf(n);
	double r = level(d - 1, n);      /* work after the call: a real frame per level */
	sink += r;
	return r + (d & 1 ? leaf(n / 8) : 0);
}
int main(int argc, char **argv)
{
	long reps = argc > 1 ? atol(argv[1]) : 400;
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long r = 0; r < reps; r++)
		sink += level(12, 200000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("%.6f\n", (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
	return 0;
}
CEOF
cc -O2 -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$W" "$W.c" || { echo "  cannot compile the workload"; exit 1; }
REPS=${RECORD_REPS:-$("$W" 200 | awk '{ r = int(200 / $1); print r < 1 ? 1 : r }')}
CACHE=$BENCH_DIR/record-debug
export PROFF_BUILDID_DIR=$CACHE
OUT=$BENCH_DIR/record-out
mkdir -p "$OUT"

med() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
now() { date +%s.%N; }
for k in plain proff perf; do : > "$OUT/$k.wl"; : > "$OUT/$k.cmd"; : > "$OUT/$k.lost"; : > "$OUT/$k.size"; : > "$OUT/$k.bps"; done
run() {   # run KIND
	local k=$1 t0 t1
	t0=$(now)
	case $k in
	plain) "$W" "$REPS" > "$OUT/wl.out" ;;
	proff) "$PROFF" record -q -F 4000 -g -o "$OUT/proff.data" -- "$W" "$REPS" > "$OUT/wl.out" ;;
	perf)  perf --buildid-dir "$CACHE" record -q -F 4000 -g -o "$OUT/perf.data" -- "$W" "$REPS" > "$OUT/wl.out" 2>/dev/null ;;
	esac
	t1=$(now)
	cat "$OUT/wl.out" >> "$OUT/$k.wl"
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.6f\n", b - a }' >> "$OUT/$k.cmd"
	if [ "$k" != plain ]; then
		stat -c %s "$OUT/$k.data" | awk '{ printf "%.1f\n", $1 / 1024 }' >> "$OUT/$k.size"
		perf --buildid-dir "$CACHE" report -i "$OUT/$k.data" --stdio --no-children -g none --sort dso \
			--show-nr-samples 2>/dev/null > "$OUT/$k.rep"
		sed -n 's/^# Total Lost Samples: //p' "$OUT/$k.rep" >> "$OUT/$k.lost"
		# bytes per sample: the file size does not depend on how long the run was
		awk -v sz="$(stat -c %s "$OUT/$k.data")" '/^ +[0-9.]+% +[0-9]+ / { n += $2 } END { if (n) printf "%.1f\n", sz / n }' \
			"$OUT/$k.rep" >> "$OUT/$k.bps"
	fi
}
echo "  workload: $W $REPS (fixed work), $RUNS interleaved runs each"
run proff; run perf      # warm the build-id cache and page cache
for k in proff perf; do : > "$OUT/$k.wl"; : > "$OUT/$k.cmd"; : > "$OUT/$k.lost"; : > "$OUT/$k.size"; : > "$OUT/$k.bps"; done
for ((i = 0; i < RUNS; i++)); do run plain; run proff; run perf; done

PW=$(med < "$OUT/plain.wl"); PC=$(med < "$OUT/plain.cmd")
printf '  %-8s %14s %10s %14s %10s %10s %10s %10s\n' "" "workload (s)" "slowdown" "command (s)" "overhead" "lost" "size (KB)" "B/sample"
printf '  %-8s %14.3f %10s %14.3f %10s %10s %10s %10s\n' plain "$PW" - "$PC" - - - -
for k in proff perf; do
	w=$(med < "$OUT/$k.wl"); c=$(med < "$OUT/$k.cmd"); l=$(med < "$OUT/$k.lost"); s=$(med < "$OUT/$k.size"); b=$(med < "$OUT/$k.bps")
	sd=$(awk -v a="$w" -v b="$PW" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
	co=$(awk -v a="$c" -v b="$PC" 'BEGIN { printf "%+.1f%%", (a / b - 1) * 100 }')
	printf '  %-8s %14.3f %10s %14.3f %10s %10s %10s %10s\n' "$k" "$w" "$sd" "$c" "$co" "${l:-0}" "$s" "$b"
	eval "SD_$k=\$sd CO_$k=\$co SZ_$k=\$s BPS_$k=\$b"
done
echo "  ratios proff/perf: command time $(ratio "$(med < "$OUT/proff.cmd")" "$(med < "$OUT/perf.cmd")")x, size $(ratio "$SZ_proff" "$SZ_perf")x"
echo "record: slowdown proff ${SD_proff#+}, perf ${SD_perf#+}; size proff $SZ_proff KB, perf $SZ_perf KB; bytes per sample proff $BPS_proff, perf $BPS_perf"
