#!/bin/bash
# tests/oracle/diff-calls.sh — the Calls and Avg total columns of `proff diff`
# of exact traces, against uftrace's call counts of the same binary run the
# same way (`uftrace report -f call`) and against each trace's own `proff
# report --json` (calls, avg_total_ns, which the report prints to 0.1 ns):
#
#  * two files (perf diff's layout): per function the baseline's Calls, the
#    new file's Calls, Calls Delta = the difference of uftrace's counts, in
#    the text (-t) and in --json; each file's avg_total_ns and the delta
#    equal the reports' values;
#  * groups of runs (A1 A2 -- B1 B2): every run's calls and avg in --json
#    equal that run's report, the group means uftrace's counts, the calls
#    that differ deterministically between the groups significant (q 0),
#    the unchanged ones not;
#  * A/A groups (the same program and arguments on both sides): no call
#    count significant.
# threads.c's calls are known by construction (worker = N, step = N*I,
# leaf = 2*N*I), which uftrace confirms.
source "$(dirname "$0")/../lib.sh"

if ! command -v uftrace >/dev/null; then
	not_ok "uftrace is not installed (scripts/setup-deps.sh installs it)"
	finish
fi
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
SRC=$ROOT/tests/data/instrument
cd "$TMP" || exit 1
if ! gcc -O2 -g -finstrument-functions -pthread -o threads "$SRC/threads.c" 2>cc.err; then
	not_ok "build threads.c"; sed 's/^/#   /' cc.err | head -5; finish
fi

# uftrace's calls per function of `threads ARGS` (file uf.NAME: CALLS FUNC)
ufcalls() {
	local name=$1; shift
	uftrace record --no-libcall --no-event -d "ud.$name" ./threads "$@" >/dev/null 2>&1
	uftrace report -d "ud.$name" -f call --no-pager 2>/dev/null |
		awk '$1 ~ /^[0-9]+$/ { print $1, $2 }' > "uf.$name"
}
rec() {  # rec FILE ARGS...: a trace, and its report's calls and avg per function
	local f=$1; shift
	"$PROFF" record --instrument -q -o "$f.trace" -- ./threads "$@" >/dev/null 2>&1
	"$PROFF" report -i "$f.trace" --no-children -s sym -g none --json 2>/dev/null |
		jq -r '.events[0].rows[] | "\(.sym) \(.calls) \(.avg_total_ns)"' | sort > "$f.rep"
}
ufcalls old 4 500
ufcalls new 4 800
rec a1 4 500; rec a2 4 500; rec a3 4 500
rec b1 4 800; rec b2 4 800
FUNCS="main worker step leaf"
for f in $FUNCS; do
	grep -q " $f\$" uf.old && grep -q " $f\$" uf.new || { not_ok "uftrace has no calls of $f"; finish; }
done

# ---- two files: text (-t) --------------------------------------------------------------------
"$PROFF" diff a1.trace b1.trace -s sym -t ';' > two.txt 2>two.err
# columns: Baseline;Calls;Avg total;Delta Abs;Calls;Calls Delta;Avg total;Avg Delta;Symbol
hdr=$(grep '^# Baseline' two.txt | tr -d ' ')
if [ "$hdr" = "#Baseline;Calls;Avgtotal;DeltaAbs;Calls;CallsDelta;Avgtotal;AvgDelta;Symbol" ]; then
	ok "two traces: the header has Calls, Avg total and their deltas after each file's perf columns"
else
	not_ok "two traces: header '$hdr'"
fi
for f in $FUNCS; do
	u0=$(awk -v f="$f" '$2 == f { print $1 }' uf.old); u1=$(awk -v f="$f" '$2 == f { print $1 }' uf.new)
	line=$(grep -v '^#' two.txt | awk -F';' -v f="$f" '{ s = $9; sub(/^\[\.\] /, "", s); sub(/ +$/, "", s) } s == f')
	IFS=';' read -r _ c0 _ _ c1 cd _ _ _ <<<"$line"
	c0=${c0// /}; c1=${c1// /}; cd=${cd// /}
	want=$(awk -v a="$u0" -v b="$u1" 'BEGIN { printf "%+d", b - a }')
	if [ "$c0" = "$u0" ] && [ "$c1" = "$u1" ] && [ "$cd" = "$want" ]; then
		ok "two traces: $f Calls $c0 -> $c1 ($cd), uftrace $u0 -> $u1"
	else
		not_ok "two traces: $f Calls '$c0' -> '$c1' ('$cd'), uftrace $u0 -> $u1 ($want)"
	fi
done

# ---- two files: --json against uftrace and the reports ----------------------------------------
"$PROFF" diff a1.trace b1.trace -s sym --json 2>/dev/null |
	jq -r '.events[0].rows[] | "\(.keys.sym) \(.baseline.calls) \(.files[0].calls) \(.files[0].calls_delta) \(.baseline.avg_total_ns) \(.files[0].avg_total_ns) \(.files[0].avg_total_delta_ns)"' \
	| sort > two.json.txt
bad=0
for f in $FUNCS; do
	read -r _ c0 c1 cd a0 a1 ad < <(awk -v f="$f" '$1 == f' two.json.txt)
	u0=$(awk -v f="$f" '$2 == f { print $1 }' uf.old); u1=$(awk -v f="$f" '$2 == f { print $1 }' uf.new)
	r0=$(awk -v f="$f" '$1 == f { print $2, $3 }' a1.rep); r1=$(awk -v f="$f" '$1 == f { print $2, $3 }' b1.rep)
	if ! awk -v c0="$c0" -v c1="$c1" -v cd="$cd" -v u0="$u0" -v u1="$u1" -v a0="$a0" -v a1="$a1" -v ad="$ad" \
		-v r0="$r0" -v r1="$r1" 'function near(x, y, e) { return (x - y) ^ 2 <= e ^ 2 }
		BEGIN { split(r0, p, " "); split(r1, q, " ")
			exit !(c0 == u0 && c1 == u1 && cd == u1 - u0 && p[1] == c0 && q[1] == c1 &&
			       near(a0, p[2], 0.0501) && near(a1, q[2], 0.0501) && near(ad, q[2] - p[2], 0.1001)) }'; then
		not_ok "two traces --json: $f calls $c0 $c1 $cd avg $a0 $a1 $ad; uftrace $u0 $u1; reports $r0 / $r1"; bad=1
	fi
done
[ $bad = 0 ] && ok "two traces --json: calls and calls_delta equal uftrace's, avg_total_ns and its delta the reports' (4 functions)"

# ---- groups of runs: per-run values, means, significance ---------------------------------------
"$PROFF" diff a1.trace a2.trace -- b1.trace b2.trace -s sym --json > grp.json 2>/dev/null
bad=0
for f in $FUNCS; do
	u0=$(awk -v f="$f" '$2 == f { print $1 }' uf.old); u1=$(awk -v f="$f" '$2 == f { print $1 }' uf.new)
	row=$(jq -c --arg f "$f" '.events[0].rows[] | select(.keys.sym == $f)' grp.json)
	runs=$(jq -r '[.calls[0].runs[], .calls[1].runs[]] | join(" ")' <<<"$row")
	want="$(awk -v f="$f" '$1 == f { print $2 }' a1.rep) $(awk -v f="$f" '$1 == f { print $2 }' a2.rep) $(awk -v f="$f" '$1 == f { print $2 }' b1.rep) $(awk -v f="$f" '$1 == f { print $2 }' b2.rep)"
	[ "$runs" = "$want" ] || { not_ok "groups: $f per-run calls '$runs', reports '$want'"; bad=1; }
	m=$(jq -r '"\(.calls[0].mean) \(.calls[1].mean) \(.calls[1].delta)"' <<<"$row")
	[ "$m" = "$u0 $u1 $((u1 - u0))" ] || { not_ok "groups: $f mean calls and delta '$m', uftrace $u0 $u1"; bad=1; }
	avgs=$(jq -r '[.avg_total_ns[0].runs[], .avg_total_ns[1].runs[]] | map(tostring) | join(" ")' <<<"$row")
	wavg="$(awk -v f="$f" '$1 == f { print $3 }' a1.rep a2.rep b1.rep b2.rep | tr '\n' ' ')"
	if ! awk -v x="$avgs" -v y="$wavg" 'BEGIN { n = split(x, a, " "); m = split(y, b, " "); if (n != 4 || m != 4) exit 1
		for (i = 1; i <= 4; i++) if ((a[i] - b[i]) ^ 2 > 0.0501 ^ 2) exit 1 }'; then
		not_ok "groups: $f per-run avg '$avgs', reports '$wavg'"; bad=1
	fi
	sig=$(jq -r '.calls[1].significant' <<<"$row")
	if [ "$u0" != "$u1" ]; then wsig=true; else wsig=false; fi
	[ "$sig" = "$wsig" ] || { not_ok "groups: $f calls $u0 -> $u1 significant=$sig, expected $wsig"; bad=1; }
done
[ $bad = 0 ] && ok "groups: per-run calls and avg equal each run's report, mean calls uftrace's, changed calls (step, leaf) significant, unchanged (main, worker) not"
"$PROFF" diff a1.trace a2.trace -- b1.trace b2.trace -s sym > grp.txt 2>/dev/null
if grep -q 'Calls Delta' grp.txt && grep -q 'Avg q' grp.txt && grep -Eq '\+[0-9]+\.0 +0 +\* .*\[\.\] leaf$' grp.txt; then
	ok "groups text: Calls Delta, Calls q (0 for leaf's deterministic change, marked *) and Avg q columns"
else
	not_ok "groups text: the calls columns"; sed 's/^/#   /' grp.txt | tail -8
fi

# ---- A/A: the same program and arguments in both groups ----------------------------------------
"$PROFF" diff a1.trace a2.trace -- a3.trace a1.trace -s sym --json > aa.json 2>/dev/null
n=$(jq '[.events[0].rows[] | select(.calls[1].significant)] | length' aa.json)
d=$(jq '[.events[0].rows[] | select(.calls[1].delta != 0)] | length' aa.json)
if [ "$n" = 0 ] && [ "$d" = 0 ]; then ok "A/A groups: no calls delta, no calls significant"
else not_ok "A/A groups: $d calls deltas, $n significant"; fi

# ---- one run per group: no test, the deltas only ------------------------------------------------
"$PROFF" diff a1.trace -- b1.trace -s sym > one.txt 2>/dev/null
if grep -q 'Calls Delta' one.txt && ! grep -q 'Calls q' one.txt; then
	ok "one run per group: Calls and Avg deltas, no q (no noise to test against)"
else
	not_ok "one run per group: the calls columns"; sed 's/^/#   /' one.txt | tail -6
fi
finish
