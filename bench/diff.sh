#!/bin/bash
# bench/diff.sh — proff diff vs perf diff on two large many-DSO profiles
# (gcc + python3 + xz loops recorded at 20 kHz with -g; together >= 1 M
# samples), generated once into build/bench/diff_{a,b}.data (not committed).
# Checks the outputs are identical, prints median times, peak RSS and the
# ratios against the targets: >= 10x (default keys), >= 20x (-s srcline),
# peak RSS <= 1/4 of perf's. Last line:
#   diff: proff X.XXs, perf Y.YYs, ratio Zx; RSS proff A MB, perf B MB
source "$(dirname "$0")/lib.sh"

make_mix() {   # make_mix OUT ITERATIONS VARIANT (a fixed amount of work, ~1.2 s CPU each)
	local out=$1 iters=$2 v=$3 w="$BENCH_DIR/diffwl"
	mkdir -p "$w"
	cp "$ROOT/tests/data/diff/work.c" "$w/src.c"
	head -c 4000000 /dev/urandom > "$w/blob"
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

A="$BENCH_DIR/diff_a.data"
B="$BENCH_DIR/diff_b.data"
for v in a b; do
	f="$BENCH_DIR/diff_$v.data"
	if [ ! -s "$f" ]; then
		echo "  generating $f (about 30 s of CPU)..."
		make_mix "$f" "${DIFF_BENCH_ITERS:-24}" $v
	fi
done
na=$(perf report -i "$A" --stdio --no-children -g none 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\)\(.\).*/\1\2/p')
nb=$(perf report -i "$B" --stdio --no-children -g none 2>/dev/null | sed -n 's/^# Samples: \([0-9]*\)\(.\).*/\1\2/p')
echo "  profiles: $A ($(du -h "$A" | cut -f1), $na samples), $B ($(du -h "$B" | cut -f1), $nb samples)"

# measure2 NAME OUT CMD... -> MED_S (median wall s), MED_CPU (median user+sys s), RSS_MB (max peak RSS)
# The machine is shared: CPU time is the steadier figure, wall time is what a user waits.
measure2() {   # the first run's stdout is kept in OUT (compared afterwards)
	local name=$1 out=$2; shift 2
	local walls=() cpus=() rss=0 i e u s r
	for ((i = 0; i < RUNS; i++)); do
		/usr/bin/time -f '%e %U %S %M' -o "$BENCH_DIR/.time" "$@" >"$out" 2>"$BENCH_DIR/.err" || {
			echo "bench: '$name' failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2; MED_S=nan; MED_CPU=nan; RSS_MB=nan; return 1; }
		read -r e u s r < <(tail -1 "$BENCH_DIR/.time")
		walls+=("$e"); cpus+=("$(awk -v a="$u" -v b="$s" 'BEGIN{print a+b}')")
		[ "$r" -gt "$rss" ] && rss=$r
		out=/dev/null
	done
	med() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
	MED_S=$(med "${walls[@]}"); MED_CPU=$(med "${cpus[@]}")
	RSS_MB=$(awk -v k="$rss" 'BEGIN {printf "%.1f", k/1024}')
	printf '  %-44s median wall %7.3f s  cpu %7.3f s  peak RSS %8s MB  (%d runs)\n' "$name" "$MED_S" "$MED_CPU" "$RSS_MB" "$RUNS"
}

LAST=""
bench_pair() {   # bench_pair LABEL TARGET_RATIO OPTS...
	local label=$1 target=$2; shift 2
	measure2 "perf diff $*" "$BENCH_DIR/perf.out" perf diff "$@" "$A" "$B"; local pt=$MED_S pc=$MED_CPU pr=$RSS_MB
	measure2 "proff diff $*" "$BENCH_DIR/proff.out" "$PROFF" diff "$@" "$A" "$B"; local ft=$MED_S fc=$MED_CPU fr=$RSS_MB
	if cmp -s "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out"; then same="identical output"
	else same="OUTPUT DIFFERS ($(diff "$BENCH_DIR/perf.out" "$BENCH_DIR/proff.out" | grep -c '^[<>]') lines)"; fi
	echo "  diff $label: proff ${ft}s, perf ${pt}s, ratio $(ratio "$pt" "$ft")x (target ${target}x; cpu time ratio $(ratio "$pc" "$fc")x); RSS proff ${fr} MB, perf ${pr} MB (1/$(ratio "$pr" "$fr")); $same"
	[ -z "$LAST" ] && LAST=$(printf 'diff: proff %.2fs, perf %.2fs, ratio %sx; RSS proff %s MB, perf %s MB' \
		"$ft" "$pt" "$(ratio "$pt" "$ft")" "$fr" "$pr")
}

bench_pair "default" 10
# -s srcline: perf runs addr2line for every address and needs far more than
# 20x proff's time on these profiles (it did not finish in 20 minutes), so
# perf is stopped at 20x proff's median time: if it has not finished by then,
# the 20x target is met (a measured lower bound). Output identity for srcline
# is checked on smaller profiles by tests/oracle/diff.sh.
measure2 "proff diff -s srcline" "$BENCH_DIR/proff.out" "$PROFF" diff -s srcline "$A" "$B"; ft=$MED_S
bounded "perf diff -s srcline, limit 20x proff" 20 "$ft" perf diff -s srcline "$A" "$B"
same=""
if [ -n "$BOUND_OUT" ]; then
	if cmp -s "$BOUND_OUT" "$BENCH_DIR/proff.out"; then same="; identical output"; else same="; OUTPUT DIFFERS"; fi
fi
echo "  diff -s srcline: proff ${ft}s, perf $BOUND (target 20x)$same"
echo "$LAST"
