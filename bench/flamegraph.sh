#!/bin/bash
# bench/flamegraph.sh — flame graphs of the report bench's large profile
# (build/bench/mix_a.data, >= 1 M samples): proff writing the interactive
# page (default --min-width 0.1), the static SVG and the folded stacks;
# the page's size; headless Chromium's time to render it (navigation to the
# load event, the page's script included: it draws during the load); and
# FlameGraph's flamegraph.pl beside them, on the same folded stacks and as
# the whole `perf script | stackcollapse-perf.pl | flamegraph.pl` pipeline.
# Targets: written in <= 1 s, <= 5 MB, rendered in <= 2 s.
source "$(dirname "$0")/lib.sh"
FLAMEGRAPH=${FLAMEGRAPH:-$ROOT/../shared/tools/FlameGraph}

A="$BENCH_DIR/mix_a.data"
if [ ! -s "$A" ]; then
	echo "  generating $A (about 70 s of recording)..."
	bench_mix_profile "$A" "${MIX_SECONDS:-65}"
fi
echo "  profile: $A ($(du -h "$A" | cut -f1))"
H="$BENCH_DIR/flame.html"

measure "proff report --flamegraph x.html" "$PROFF" report -i "$A" --flamegraph "$H"; ht=$MED_S; hr=$RSS_MB
# its CPU time too (user + sys): on a shared machine the wall time waits for other work
cpu=()
for ((i = 0; i < RUNS; i++)); do
	/usr/bin/time -f '%U %S' -o "$BENCH_DIR/.time" "$PROFF" report -i "$A" --flamegraph "$H" >/dev/null 2>&1
	cpu+=("$(awk '{ printf "%.2f", $1 + $2 }' "$BENCH_DIR/.time")")
done
hc=$(median "${cpu[@]}")
size=$(stat -c %s "$H")
measure "proff report --flamegraph x.svg" "$PROFF" report -i "$A" --flamegraph "$BENCH_DIR/flame.svg"; st=$MED_S
measure "proff report --flamegraph x.folded" "$PROFF" report -i "$A" --flamegraph "$BENCH_DIR/flame.folded"; ft=$MED_S
measure "proff report --no-children -g none (load + report)" "$PROFF" report -i "$A" --no-children -g none; rt=$MED_S

# Chromium: the median of the runs' navigation-to-load times
render=()
for ((i = 0; i < RUNS; i++)); do
	echo "document.querySelectorAll('#fg g.f').length" |
		python3 "$ROOT/tests/tools/cdp.py" "$H" "$BENCH_DIR/cdp.json" >/dev/null 2>"$BENCH_DIR/cdp.err" ||
		{ echo "bench: chromium failed:"; tail -3 "$BENCH_DIR/cdp.err"; break; }
	render+=("$(python3 -c 'import json,sys; print("%.3f" % (json.load(open(sys.argv[1]))["load_ms"] / 1000))' "$BENCH_DIR/cdp.json")")
done
frames=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0])' "$BENCH_DIR/cdp.json" 2>/dev/null)
rmed=$( [ ${#render[@]} -gt 0 ] && median "${render[@]}" || echo nan)
printf '  %-44s median %7.3f s  (%d runs, %s frames drawn)\n' "chromium: load and draw the page" "$rmed" "${#render[@]}" "$frames"

if [ -x "$FLAMEGRAPH/flamegraph.pl" ]; then
	measure "flamegraph.pl of the folded stacks" perl "$FLAMEGRAPH/flamegraph.pl" "$BENCH_DIR/flame.folded"; pt=$MED_S
	bounded "perf script | stackcollapse | flamegraph.pl" 100 "$ht" \
		sh -c "perf script -i '$A' 2>/dev/null | perl '$FLAMEGRAPH/stackcollapse-perf.pl' | perl '$FLAMEGRAPH/flamegraph.pl' > '$BENCH_DIR/fg.svg'"
	pipe=$BOUND
else
	pt=nan; pipe="(no FlameGraph scripts at $FLAMEGRAPH)"
fi
verdict() { awk -v v="$1" -v t="$2" 'BEGIN { print (v + 0 <= t + 0 && v != "nan") ? "met" : "NOT MET" }'; }
mb=$(awk -v b="$size" 'BEGIN { printf "%.2f", b / 1048576 }')
echo "  flame graph: written in ${ht}s (target 1 s: $(verdict "$ht" 1); CPU ${hc}s on two threads), ${mb} MB of HTML (target 5 MB: $(verdict "$mb" 5)), rendered in ${rmed}s (target 2 s: $(verdict "$rmed" 2)); peak RSS ${hr} MB"
echo "  the same report's load alone (--no-children -g none): ${rt}s; SVG ${st}s; folded (every stack) ${ft}s"
echo "  flamegraph.pl on proff's folded stacks: ${pt}s ($(ratio "$pt" "$st")x proff's SVG); the perf script pipeline: $pipe"
