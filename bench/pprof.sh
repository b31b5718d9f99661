#!/bin/bash
# bench/pprof.sh — reading a large pprof profile: proff report (Self and
# Children per symbol, no call graphs) against `go tool pprof -top
# -nodecount=0 -nodefraction=0` (flat and cum of every function), side by
# side, medians of RUNS
# runs taken in turn (bench/lib.sh measure_pair), with their peak RSS.
# The profile is generated once into build/bench (not committed):
# bench/gen-folded.py writes PPROF_STACKS distinct stacks (default 300,000,
# 6-40 frames, 1-50 samples each: about 7.6 M samples) over 50,000
# functions, and proff convert makes it a gzipped pprof (50,000 locations).
# Both tools' numbers are compared first (tests/tools/pprof_cmp.py). Ends with
#   pprof: proff X.XXs, go tool pprof Y.YYs, ratio Zx; peak RSS A MB / B MB   (targets >= 5x, <= 1/2)
source "$(dirname "$0")/lib.sh"

if ! command -v go >/dev/null; then
	echo "  go not installed (golang-go): skipped"
	exit 0
fi
PPROF_TOOL=$(go env GOTOOLDIR)/pprof
[ -x "$PPROF_TOOL" ] || { echo "  no pprof tool in $(go env GOTOOLDIR)"; exit 1; }
RUNS=${PPROF_RUNS:-3}
STACKS=${PPROF_STACKS:-300000}
F="$BENCH_DIR/pprof-big-$STACKS.folded"
P="$BENCH_DIR/pprof-big-$STACKS.pb.gz"
if [ ! -s "$P" ]; then
	echo "  generating $P ($STACKS stacks over 50000 functions)..."
	/usr/bin/python3 "$ROOT/bench/gen-folded.py" "$STACKS" 50000 1 > "$F" || { echo "  gen-folded.py failed"; exit 1; }
	"$PROFF" convert "$F" "$P" || { echo "  proff convert failed"; exit 1; }
	rm -f "$F"
fi
"$PROFF" report -i "$P" -s sym -g none --json > "$BENCH_DIR/pprof-proff.json"
read -r samples locs < <(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["events"][0]
print(d["total_period"], len(d["rows"]))' "$BENCH_DIR/pprof-proff.json")
echo "  profile: $P ($(du -h "$P" | cut -f1) gzipped, $STACKS stacks, $samples samples, $locs functions)"

status=0
"$PPROF_TOOL" -top -nodecount=0 -nodefraction=0 -symbolize=none "$P" > "$BENCH_DIR/pprof-go.txt" 2>/dev/null
if python3 "$ROOT/tests/tools/pprof_cmp.py" top "$BENCH_DIR/pprof-go.txt" "$BENCH_DIR/pprof-proff.json" > "$BENCH_DIR/pprof-cmp.txt"; then
	same="same flat and cum ($(tail -1 "$BENCH_DIR/pprof-cmp.txt"))"
else
	same="NUMBERS DIFFER ($(tail -1 "$BENCH_DIR/pprof-cmp.txt"))"; status=1
fi
measure_pair "proff report -s sym -g none" "go tool pprof -top -nodecount=0" 8 \
	"$PROFF" report -i "$P" -s sym -g none \
	"$PPROF_TOOL" -top -nodecount=0 -nodefraction=0 -symbolize=none "$P"
echo "  $same"
printf 'pprof: proff %.2fs, go tool pprof %.2fs, ratio %sx; peak RSS proff %s MB, go tool pprof %s MB (1/%s)\n' \
	"$MED_A" "$MED_B" "$(ratio "$MED_B" "$MED_A")" "$RSS_A" "$RSS_B" "$(ratio "$RSS_B" "$RSS_A")"
exit $status
