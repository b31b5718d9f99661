#!/bin/bash
# bench/diff-groups.sh — the groups diff against perf diff: `proff diff A1 ..
# A10 -- B1 .. B10` (statistics for every row) of ten runs a side of the
# many-DSO workload bench/diff.sh records, against `perf diff A1 B1` of one
# pair of the same files (target: at most 2x perf's time), and the
# statistics alone over 100 K rows of 10 runs a side (target: under 50 ms;
# bench/stats-rows.c, wall and CPU). The runs are generated once into
# build/bench/groups/ (not committed): bench/diff.sh's workload with 2 rounds
# instead of 24 (GROUPS_BENCH_ITERS), a few seconds of CPU and 80-100 K samples
# each on a quiet host (on a busy one the same work takes more CPU time and
# more samples), so that 20 of them take minutes, not hours; every run still
# holds the gcc, python3 and xz binaries' and libraries' symbols, the fixed
# cost a file adds; perf diff's pair is two of the same files.
# The runs also go through one labelled pprof file (proff convert, then the
# diff split by the labels), timed against the files' diff.
# Last line:
#   diff-groups: proff 10v10 X.XXs, perf pair Y.YYs, ratio Z (target <= 2); statistics 100K rows W ms wall,
#   --test mwu M ms (target < 50; proff diff's default --min-share); every row tested: ...
source "$(dirname "$0")/lib.sh"

G=$BENCH_DIR/groups
N=${GROUPS_RUNS:-10}
mkdir -p "$G"
make_mix_run() {   # the workload of bench/diff.sh, one run of variant $2 into $1
	local out=$1 v=$2 w="$BENCH_DIR/diffwl" iters=${GROUPS_BENCH_ITERS:-2}
	mkdir -p "$w"
	[ -f "$w/src.c" ] || cp "$ROOT/tests/data/diff/work.c" "$w/src.c"
	[ -f "$w/blob" ] || head -c 4000000 /dev/urandom > "$w/blob"
	local py="import json,re; [json.dumps({str(i):[i,str(i)*3]}) for i in range(60000)]; [re.sub('a+','b','caaat'*20) for i in range(20000)]"
	[ "$v" = b ] && py="import json,re; [json.dumps({str(i):[i,str(i)*2]}) for i in range(90000)]; sorted(str(i) for i in range(200000))"
	cat > "$w/mix_$v.sh" <<EOS
#!/bin/sh
i=0
while [ \$i -lt $iters ]; do
  i=\$((i + 1))
  gcc -O$([ "$v" = b ] && echo 1 || echo 2) -c $w/src.c -o /dev/null
  python3 -c "$py"
  xz -$([ "$v" = b ] && echo 4 || echo 2) -T1 -c $w/blob > /dev/null
done
EOS
	perf record -q -F 20000 -g -e cpu-clock -o "$out" -- sh "$w/mix_$v.sh" >/dev/null 2>&1
}
for ((i = 1; i <= N; i++)); do
	for v in a b; do
		f=$G/$v.$i
		[ -s "$f" ] && continue
		echo "  generating $f (a few seconds of CPU)..."
		make_mix_run "$f.tmp" $v && mv "$f.tmp" "$f"
	done
done
[ -n "${GROUPS_GENERATE_ONLY:-}" ] && exit 0
AS=(); BS=()
for ((i = 1; i <= N; i++)); do AS+=("$G/a.$i"); BS+=("$G/b.$i"); done
echo "  runs: $N a side, $(du -shL "$G" | cut -f1) in all"

measure_pair "perf diff a.1 b.1" "proff diff a.1 .. a.$N -- b.1 .. b.$N" 4 \
	perf diff "$G/a.1" "$G/b.1" \
	"$PROFF" diff "${AS[@]}" -- "${BS[@]}"
pt=$MED_A; ft=$MED_B
PROFF_TIMING=1 "$PROFF" diff "${AS[@]}" -- "${BS[@]}" 2>"$BENCH_DIR/groups.timing" >"$BENCH_DIR/groups.out"
rows=$(grep -c '^ ' "$BENCH_DIR/groups.out")
echo "  proff's rows: $rows; phases: $(tr '\n' ';' <"$BENCH_DIR/groups.timing" | sed 's/proff: timing: //g; s/  */ /g')"

# the same runs as one labelled pprof (proff convert A.. -- B.. -o F) and split
# again by its labels (proff diff --groups-by group --replicate run F): the
# convert's time and size, and the split diff (one read to find the runs, one
# per run) against the files' diff; both print the same rows
F=$BENCH_DIR/groups.pb.gz
/usr/bin/time -f '%e %M' -o "$BENCH_DIR/.time" "$PROFF" convert "${AS[@]}" -- "${BS[@]}" -o "$F" 2>"$BENCH_DIR/.err" ||
	{ echo "bench: proff convert of the runs failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2; }
read -r ct cr < "$BENCH_DIR/.time"
echo "  proff convert a.1 .. a.$N -- b.1 .. b.$N -o groups.pb.gz: $ct s, peak RSS $((cr / 1024)) MB, $(du -k "$F" | cut -f1) KB"
measure_pair "proff diff a.1 .. a.$N -- b.1 .. b.$N" "proff diff --groups-by group --replicate run F" $((2 * N + 3)) \
	"$PROFF" diff "${AS[@]}" -- "${BS[@]}" \
	"$PROFF" diff --groups-by group --replicate run "$F"
cmp -s <("$PROFF" diff "${AS[@]}" -- "${BS[@]}" 2>&1) <("$PROFF" diff --groups-by group --replicate run "$F" 2>&1) &&
	same=same || same=DIFFERENT
printf 'diff-groups-pprof: convert %.2fs, split diff %.2fs vs files %.2fs, ratio %s; output %s\n' \
	"$ct" "$MED_B" "$MED_A" "$(awk -v a="$MED_B" -v b="$MED_A" 'BEGIN { printf "%.2f", a / b }')" "$same"

cc -O2 -std=gnu17 -I"$ROOT/include" -D_GNU_SOURCE -o "$BENCH_DIR/stats-rows" "$ROOT/bench/stats-rows.c" \
	"$(dirname "$PROFF")/libproff.a" $(pkg-config --libs libdw libelf libzstd zlib libprotobuf-c libcurl 2>/dev/null || echo -ldw -lelf -lzstd -lz -lprotobuf-c -lcurl) -lstdc++ -lm -lpthread
# proff diff's default (rows under 0.1 % of the total are not tested), then
# every row tested (--min-share 0), the worst case
echo "  statistics, proff diff's default --min-share 0.1:"
STATS_ROWS_MIN_SHARE=0.1 "$BENCH_DIR/stats-rows" 100000 10 7 | tee "$BENCH_DIR/stats-rows-default.out"
echo "  statistics, every row tested (--min-share 0):"
"$BENCH_DIR/stats-rows" 100000 10 7 | tee "$BENCH_DIR/stats-rows.out"
wall() { awk -v t="$1" '$1 == t {for (i = 1; i <= NF; i++) if ($i == "wall,") print $(i-2)}' "$2"; }
printf 'diff-groups: proff 10v10 %.2fs, perf pair %.2fs, ratio %s (target <= 2); statistics 100K rows %s ms wall, --test mwu %s ms (target < 50); every row tested: %s ms, --test mwu %s ms\n' \
	"$ft" "$pt" "$(awk -v a="$ft" -v b="$pt" 'BEGIN { printf "%.2f", a / b }')" \
	"$(wall welch "$BENCH_DIR/stats-rows-default.out")" "$(wall mwu "$BENCH_DIR/stats-rows-default.out")" \
	"$(wall welch "$BENCH_DIR/stats-rows.out")" "$(wall mwu "$BENCH_DIR/stats-rows.out")"
