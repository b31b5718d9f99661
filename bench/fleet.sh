#!/bin/bash
# bench/fleet.sh — the fleet store (docs/fleet.md): a simulated fleet of
# HOSTS host profiles (half build A, half build B with one function 10 %
# heavier), resampled per host from a real recording (proff itself reporting
# a profile of tests/data/stats/planted.c, -g: a program with symbols and
# deep stacks); then
#   - ingest: proff push of every host file into the local store and into
#     ClickHouse (one server started here): samples and rows per second, and
#     bytes ClickHouse stores per sample after compression;
#   - the fleet diff `proff diff --store URL build=A -- build=B`, on
#     ClickHouse, on the local store, and `proff diff A1..An -- B1..Bn` of
#     the same files read directly: medians, ratios; the same with
#     `--replicate host` (the profiles are pushed PER_HOST to a host label)
#     and with keys no key rows are kept for (`-s comm,dso,sym,srcline`:
#     the samples are read; SLOW_RUNS runs, 1 by default).
# Target (issue #32): ClickHouse's diff over 1,000 profiles <= 3 s and >= 5x
# faster than reading the files. HOSTS=1000 SAMPLES=4000 by default.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/tools/clickhouse.sh"
HOSTS=${HOSTS:-1000}
SAMPLES=${SAMPLES:-4000}
RUNS=${RUNS:-3}
SLOW_RUNS=${SLOW_RUNS:-1}
PER_HOST=${PER_HOST:-10}
command -v clickhouse-server >/dev/null || { echo "  clickhouse-server is not installed (scripts/setup-deps.sh)"; exit 1; }
export PROFF_CONFIG=/dev/null
F=$BENCH_DIR/fleet
SRC=$F/src-top.folded
mkdir -p "$F"
if [ ! -s "$SRC" ]; then
	echo "  recording the source profile (proff report of a planted.c profile, 30 times, -g)..."
	cc -O1 -g -fno-omit-frame-pointer -o "$F/planted" "$ROOT/tests/data/stats/planted.c" &&
	"$PROFF" record -q -c 100000 -g -o "$F/planted.data" "$F/planted" 20000000 100 >/dev/null 2>&1 &&
	"$PROFF" record -q -F 4000 -g -o "$F/src.data" -- sh -c "for i in \$(seq 30); do '$PROFF' report -i '$F/planted.data' >/dev/null; '$PROFF' report -i '$F/planted.data' --no-children -s sym,srcline >/dev/null; done" >/dev/null 2>&1 &&
	"$PROFF" convert "$F/src.data" "$F/src.folded" >/dev/null || { echo "  recording failed"; exit 1; }
	# a service's profile has thousands of distinct stacks, not the
	# hundreds of thousands of this recording's deep recursions: its
	# 5,000 heaviest stacks (hosts of one build share most of them)
	sort -t' ' -k2,2nr "$F/src.folded" | head -5000 >"$SRC"
fi
H=$F/hosts-$HOSTS-$SAMPLES
if [ ! -d "$H" ]; then
	mkdir -p "$H.tmp"
	# the planted change: the source's hottest function with a name (not an
	# unresolved [dso] frame), 10 % heavier in B
	hot=$(awk '{n = split($1, f, ";"); if (f[n] !~ /^\[/) w[f[n]] += $2} END {for (k in w) if (w[k] > m) {m = w[k]; h = k}; print h}' "$SRC")
	python3 "$ROOT/tests/tools/fleet_hosts.py" "$SRC" "$H.tmp" a $((HOSTS / 2)) "$SAMPLES" 1 &&
	python3 "$ROOT/tests/tools/fleet_hosts.py" "$SRC" "$H.tmp" b $((HOSTS / 2)) "$SAMPLES" 2 "$hot" 1.1 &&
	echo "$hot" >"$H.tmp/planted" && mv "$H.tmp" "$H" || exit 1
fi
echo "  fleet: $HOSTS host profiles of $SAMPLES samples ($(du -sh "$H" | cut -f1) of folded stacks), planted: $(cat "$H/planted")"

CHD=$(mktemp -d "$BENCH_DIR/ch.XXXXXX")
trap 'ch_stop_all; rm -rf "$CHD"' EXIT
ch_start "$CHD" bench || exit 1
ch_sql bench "CREATE DATABASE fleet" >/dev/null
URL=clickhouse://127.0.0.1:$CH_HTTP_bench/fleet
LOCAL=$CHD/local

nsamples=$(cat "$H"/*.folded | awk '{s += NF ? 1 : 0} END {print s}')
ts() { date +%s.%N; }
# push_hosts STORE: every build's files, PER_HOST at a time with a host label
# (host=a-0, a-1, ...): the runs of --replicate host
push_hosts() {
	local b f n=0 files=()
	for b in a b; do
		files=("$H"/$b-*.folded)
		for ((n = 0; n < ${#files[@]}; n += PER_HOST)); do
			"$PROFF" push -q --store "$1" --label build=${b^^} --label host=$b-$((n / PER_HOST)) "${files[@]:n:PER_HOST}" || return 1
		done
	done
}
t0=$(ts); push_hosts "$LOCAL"; t1=$(ts)
push_hosts "$URL"; t2=$(ts)
rows=$(ch_sql bench "SELECT count() FROM fleet.proff_samples")
# the parts of 100 pushes merged, as the server does in the background
# (else its merges run during the queries measured below)
for t in proff_samples proff_keyrows proff_profiles proff_stacks; do ch_sql bench "OPTIMIZE TABLE fleet.$t FINAL" >/dev/null 2>&1; done
bytes=$(ch_sql bench "SELECT sum(data_compressed_bytes) FROM system.columns WHERE database = 'fleet'")
local_bytes=$(du -sb "$LOCAL" | cut -f1)
awk -v s="$nsamples" -v r="$rows" -v a="$t0" -v b="$t1" -v c="$t2" -v by="$bytes" -v lb="$local_bytes" 'BEGIN {
	printf "  ingest, local store: %.2f s, %.0f samples/s (folded lines), %.0f rows/s, %.1f bytes stored per sample\n", b - a, s / (b - a), r / (b - a), lb / s
	printf "  ingest, ClickHouse:  %.2f s, %.0f samples/s, %.0f rows/s (%d sample rows), %.2f bytes per sample after compression (%.1f MB)\n", c - b, s / (c - b), r / (c - b), r, by / s, by / 1e6 }'

# measure_cpu NAME CMD...: median wall (MED_S) and the median CPU time of
# proff (user + sys, MED_CPU) and of the ClickHouse server during the run
# (MED_SRV, from its /proc stat): on a shared host the wall time is mostly
# waiting for a CPU, the CPU times are what the commands cost
measure_cpu() {
	local name=$1; shift
	local w=() c=() v=() i t u sy a b hz
	hz=$(getconf CLK_TCK)
	for ((i = 0; i < RUNS; i++)); do
		a=$(awk '{print $14 + $15}' "/proc/$CH_PID_bench/stat")
		/usr/bin/time -f '%e %U %S' -o "$BENCH_DIR/.time" "$@" >/dev/null 2>"$BENCH_DIR/.err" || {
			echo "bench: '$name' failed:" >&2; tail -3 "$BENCH_DIR/.err" >&2; MED_S=nan; MED_CPU=nan; MED_SRV=nan; return 1; }
		b=$(awk '{print $14 + $15}' "/proc/$CH_PID_bench/stat")
		read -r t u sy < <(tail -1 "$BENCH_DIR/.time")
		w+=("$t"); c+=("$(awk -v u="$u" -v s="$sy" 'BEGIN {print u + s}')"); v+=("$(awk -v a="$a" -v b="$b" -v h="$hz" 'BEGIN {print (b - a) / h}')")
	done
	MED_S=$(median "${w[@]}"); MED_CPU=$(median "${c[@]}"); MED_SRV=$(median "${v[@]}")
	printf '  %-44s median %7.3f s wall, CPU: proff %.2f s, ClickHouse server %.2f s  (%d runs)\n' "$name" "$MED_S" "$MED_CPU" "$MED_SRV" "$RUNS"
}
measure_cpu "ClickHouse: proff diff --store build=A -- build=B" "$PROFF" diff --store "$URL" build=A -- build=B; ch_t=$MED_S; ch_c=$(awk -v a="$MED_CPU" -v b="$MED_SRV" 'BEGIN {print a + b}')
measure_cpu "local store: the same diff" "$PROFF" diff --store "$LOCAL" build=A -- build=B; lo_t=$MED_S; lo_c=$MED_CPU
measure_cpu "files: proff diff A1..A$((HOSTS / 2)) -- B1..B$((HOSTS / 2))" "$PROFF" diff "$H"/a-*.folded -- "$H"/b-*.folded; fi_t=$MED_S; fi_c=$MED_CPU
"$PROFF" diff --store "$URL" build=A -- build=B | grep -v '^#  \[' >"$CHD/ch.txt"
"$PROFF" diff "$H"/a-*.folded -- "$H"/b-*.folded | grep -v '^#  \[' >"$CHD/files.txt"
python3 - "$CHD/ch.txt" "$CHD/files.txt" <<'EOF'
import sys
a = [l for l in open(sys.argv[1]) if not l.startswith('#')]
b = [l for l in open(sys.argv[2]) if not l.startswith('#')]
print("  rows: ClickHouse %d, files %d, %s" % (len(a), len(b), "identical" if sorted(a) == sorted(b) else "DIFFERENT"))
EOF
awk -v c="$ch_t" -v l="$lo_t" -v f="$fi_t" -v cc="$ch_c" -v lc="$lo_c" -v fc="$fi_c" 'BEGIN {
	printf "  fleet diff over the profiles: ClickHouse %.3f s, local store %.3f s, files %.3f s: ClickHouse %.1fx faster than the files (target >= 5x, <= 3 s), local store %.1fx\n", c, l, f, f / c, f / l
	printf "  in CPU time: ClickHouse %.2f s (proff and the server), local store %.2f s, files %.2f s: ClickHouse %.1fx, local store %.1fx\n", cc, lc, fc, fc / cc, fc / lc }'

# --replicate host: one run per host label (PER_HOST profiles summed), the
# files' diff (one run per file) beside it
measure_cpu "ClickHouse: the same diff, --replicate host" "$PROFF" diff --store "$URL" --replicate host build=A -- build=B; chr_t=$MED_S; chr_c=$(awk -v a="$MED_CPU" -v b="$MED_SRV" 'BEGIN {print a + b}')
measure_cpu "local store: the same, --replicate host" "$PROFF" diff --store "$LOCAL" --replicate host build=A -- build=B; lor_t=$MED_S; lor_c=$MED_CPU
awk -v c="$chr_t" -v l="$lor_t" -v f="$fi_t" -v cc="$chr_c" -v lc="$lor_c" -v fc="$fi_c" 'BEGIN {
	printf "  --replicate host: ClickHouse %.3f s, local store %.3f s, files (a run per file) %.3f s: ClickHouse %.1fx faster, local store %.1fx; in CPU %.1fx, %.1fx\n", c, l, f, f / c, f / l, fc / cc, fc / lc }'

# flame graphs: the store hands over its stacks' sums per replicate, the
# files are read; the two folded outputs compared
measure_cpu "ClickHouse: diff --flamegraph (folded)" "$PROFF" diff --store "$URL" --flamegraph "$CHD/fg-ch.folded" build=A -- build=B; chf_t=$MED_S; chf_c=$(awk -v a="$MED_CPU" -v b="$MED_SRV" 'BEGIN {print a + b}')
measure_cpu "files: diff --flamegraph (folded)" "$PROFF" diff --flamegraph "$CHD/fg-files.folded" "$H"/a-*.folded -- "$H"/b-*.folded; fif_t=$MED_S; fif_c=$MED_CPU
cmp -s "$CHD/fg-ch.folded" "$CHD/fg-files.folded" && same=identical || same=DIFFERENT
awk -v c="$chf_t" -v f="$fif_t" -v cc="$chf_c" -v fc="$fif_c" -v s="$same" 'BEGIN {
	printf "  --flamegraph: ClickHouse %.3f s, files %.3f s: %.1fx; in CPU %.1fx; the folded stacks %s\n", c, f, f / c, fc / cc, s }'

# keys without key rows: every selected sample's frames are read
RUNS=$SLOW_RUNS
K=comm,dso,sym,srcline
measure_cpu "ClickHouse: diff -s $K" "$PROFF" diff --store "$URL" -s $K build=A -- build=B; chs_t=$MED_S; chs_c=$(awk -v a="$MED_CPU" -v b="$MED_SRV" 'BEGIN {print a + b}')
measure_cpu "local store: diff -s $K" "$PROFF" diff --store "$LOCAL" -s $K build=A -- build=B; los_t=$MED_S; los_c=$MED_CPU
measure_cpu "files: diff -s $K" "$PROFF" diff -s $K "$H"/a-*.folded -- "$H"/b-*.folded; fis_t=$MED_S; fis_c=$MED_CPU
awk -v c="$chs_t" -v l="$los_t" -v f="$fis_t" -v cc="$chs_c" -v lc="$los_c" -v fc="$fis_c" 'BEGIN {
	printf "  -s comm,dso,sym,srcline (samples read): ClickHouse %.3f s, local store %.3f s, files %.3f s: ClickHouse %.2fx the files, local store %.2fx; in CPU %.2fx, %.2fx\n", c, l, f, f / c, f / l, fc / cc, fc / lc }'
