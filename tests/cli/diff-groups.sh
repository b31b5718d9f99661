#!/bin/bash
# tests/cli/diff-groups.sh — `proff diff A1 A2 -- B1 B2`: the command line
# and its bad input (one line naming the file or the problem, a non-zero exit
# status, nothing on stdout), the text's header and columns, the --json
# schema of docs/json.md, three groups, the statistics options without `--`
# (every file its own group), exact traces (no sampling noise), record -r.
# The numbers themselves are checked against scipy in tests/oracle/diff-stats.sh.
source "$(dirname "$0")/../lib.sh"

case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
"$PROFF" record -q -o "$TMP/probe.data" true >/dev/null 2>&1 || { skip "diff groups (recording does not work here)"; finish; }
export PROFF_CONFIG=/dev/null
W=$TMP/w; mkdir -p "$W"; cd "$W" || exit 1
cc -O1 -g -fno-omit-frame-pointer -o planted "$ROOT/tests/data/stats/planted.c" || { not_ok "build planted.c"; finish; }
# B: hot_b 50 % heavier, its share 33 % -> 43 %; about 700 samples a run
"$PROFF" record -q -r 3 -c 200000 -g -o a.data ./planted 20000000 100 >/dev/null 2>&1
"$PROFF" record -q -r 3 -c 200000 -g -o b.data ./planted 20000000 150 >/dev/null 2>&1
"$PROFF" record -q -r 2 -e task-clock -c 200000 -o t.data ./planted 6000000 100 >/dev/null 2>&1
[ -s a.data.3 ] && [ -s b.data.3 ] && [ ! -e a.data.4 ] && [ -s t.data.2 ] && ok "record -r 3: FILE.1 .. FILE.3" || not_ok "record -r 3: FILE.1 .. FILE.3"
A="a.data.1 a.data.2 a.data.3"; B="b.data.1 b.data.2 b.data.3"
head -c 5000 /dev/urandom >garbage.data

# bad FILE ARGS...: exit status CODE, stdout empty, one line on stderr matching RE
bad() {
	local name=$1 code=$2 re=$3; shift 3
	"$PROFF" diff "$@" >"$TMP/b.out" 2>"$TMP/b.err"; local rc=$?
	if [ "$rc" = "$code" ] && [ ! -s "$TMP/b.out" ] && grep -qE -e "$re" "$TMP/b.err" && [ "$(grep -c . "$TMP/b.err")" -le 3 ]; then
		ok "bad input: $name"
	else
		not_ok "bad input: $name (exit $rc, expected $code)"; head -5 "$TMP/b.err" "$TMP/b.out" | sed 's/^/#   /'
	fi
}
bad "'--' first" 129 "'--' before any file" -- $A $B
bad "'--' last" 129 "'--' after the last file" $A --
bad "empty group" 129 "an empty group" $A -- -- $B
bad "--fdr 2" 129 "--fdr 2" --fdr 2 $A -- $B
bad "--fdr x" 129 "--fdr x" --fdr x $A -- $B
bad "--test foo" 129 "--test foo" --test foo $A -- $B
bad "--metric foo" 129 "--metric foo" --metric foo $A -- $B
bad "--min-share -1" 129 "--min-share" --min-share -1 $A -- $B
bad "--fail-on-regression 1x" 129 "--fail-on-regression 1x" --fail-on-regression 1x $A -- $B
bad "--fail-on-regression %" 129 "--fail-on-regression" --fail-on-regression % $A -- $B
bad "-F with groups" 129 "formula" -F $A -- $B
bad "-o beyond the groups" 255 "Order option out of limit" -o 2 $A -- $B
bad "an unreadable file" 255 "garbage.data" $A -- b.data.1 garbage.data
bad "a missing file" 255 "nonexistent.data" $A -- nonexistent.data b.data.1
bad "groups of different events" 255 "t.data.1: events \(task-clock\) differ from those of a.data.1 \(cpu-clock\)" $A -- t.data.1 t.data.2

# --- the text ---------------------------------------------------------------------
"$PROFF" diff $A -- $B >g.txt 2>g.err; rc=$?
[ $rc = 0 ] && ok "groups: exit 0" || not_ok "groups: exit 0 (exit $rc)"
for re in "^# Groups of runs:" "^#  \[0\] 3 runs \(baseline\): a.data.1 a.data.2 a.data.3" "^#  \[1\] 3 runs: b.data.1" \
	  "Welch's t-test" "Benjamini-Hochberg over [0-9]+ tests" "q <= 0.05" "^# Event total per run \(ms\):" \
	  "mean [0-9.]+ \+- [0-9.]+, delta [+-][0-9.]+" "^# Baseline +Delta Abs +95% CI +p +q +Shared Object +Symbol" \
	  "\[\.\] hot_b$"; do
	grep -qE -e "$re" g.txt && ok "text: /$re/" || not_ok "text: /$re/"
done
line=$(grep -E '\[\.\] hot_b$' g.txt)
echo "$line" | grep -qE '^ +[0-9.]+% +\+[0-9.]+% +\[[+-][0-9.]+, [+-][0-9.]+\] +[0-9.e+-]+ +[0-9.e+-]+ +\* +planted' \
	&& ok "text: hot_b's row: mean, delta, CI, p, q, mark" || { not_ok "text: hot_b's row: mean, delta, CI, p, q, mark"; echo "#   $line"; }
"$PROFF" diff -q $A -- $B >q.txt
! grep -q '^#' q.txt && grep -q 'hot_b' q.txt && ok "-q: rows only" || not_ok "-q: rows only"
"$PROFF" diff -t '|' $A -- $B | grep 'hot_b' | awk -F'|' '{exit !(NF == 8 && $8 == "[.] hot_b")}' \
	&& ok "-t: one field per column" || not_ok "-t: one field per column"
"$PROFF" diff --significant-only $A -- $B >s.txt
! grep -E '^ ' s.txt | grep -vq ' \* ' && grep -q hot_b s.txt && ok "--significant-only: marked rows only" || not_ok "--significant-only: marked rows only"
"$PROFF" diff --power $A -- $B >p.txt
grep -qE '^# .*Runs +Shared Object' p.txt && grep -q "80% power" p.txt && ok "--power: the Runs column" || not_ok "--power: the Runs column"
"$PROFF" diff --children --metric absolute $A -- $B >c.txt
grep -qE '^# Children +Delta Abs .* Self +Delta Abs' c.txt && grep -qE '\[\.\] caller_b$' c.txt \
	&& ok "--children: Children then Self columns, callers as rows" || not_ok "--children: Children then Self columns, callers as rows"
"$PROFF" diff --test mwu $A -- $B >m.txt
grep -q "Mann-Whitney U" m.txt && grep -q "smallest possible p-value is 0.1" m.txt \
	&& ok "--test mwu: named, and 3 against 3 runs cannot reach q <= 0.05 (said so)" || not_ok "--test mwu: named, and 3 against 3 runs cannot reach q <= 0.05 (said so)"
"$PROFF" diff a.data.1 a.data.2 -- b.data.1 >few.txt
grep -q "Group \[1\] has one run" few.txt && grep -qE 'few runs .*hot_b$' few.txt \
	&& ok "one run against several: 'few runs' on the rows, said in the header" || not_ok "one run against several: 'few runs' on the rows, said in the header"
"$PROFF" diff --fdr 0.1 a.data.1 b.data.1 >one.txt
grep -q "SAMPLING NOISE ONLY" one.txt && grep -q "q <= 0.1" one.txt \
	&& ok "statistics options without '--': each file a group (sampling noise)" || not_ok "statistics options without '--': each file a group (sampling noise)"
"$PROFF" diff a.data.1 b.data.1 >plain.txt
! grep -q "Groups of runs" plain.txt && grep -q "^# Baseline  Delta Abs  Shared Object" plain.txt \
	&& ok "without '--' and statistics options: perf diff's output" || not_ok "without '--' and statistics options: perf diff's output"
"$PROFF" diff $A -- $B -- a.data.1 a.data.2 >three.txt
grep -qE "^# Baseline +Delta Abs/1 .* Delta Abs/2 .* q/2" three.txt && grep -q "\[2\] 2 runs" three.txt \
	&& ok "three groups: /1 and /2 columns" || not_ok "three groups: /1 and /2 columns"

# --- JSON (docs/json.md) ------------------------------------------------------------------
"$PROFF" diff --json --children --power --fail-on-regression 50% $A -- $B >g.json
if python3 - g.json <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
st = d["statistics"]
assert st["test"] == "welch" and st["fdr"] == 0.05 and st["metric"] == "share" and st["children"] is True
assert st["confidence"] == 0.95 and st["min_share"] == 0.1
assert [len(g["files"]) for g in st["groups"]] == [3, 3]
assert st["fail_on_regression"] == {"threshold": 50, "relative": True}
ev = d["events"][0]
assert ev["event"] == "cpu-clock" and ev["test"] == "welch" and ev["unit"] == "percent"
assert len(ev["runs"]) == 6 and all(r["total"] > 0 and r["samples"] > 0 for r in ev["runs"])
assert ev["tests"] >= 3 and ev["total"][1]["status"] == "ok"
rows = {r["keys"]["sym"]: r for r in ev["rows"]}
b = rows["hot_b"]
for which in ("self", "children"):
    g0, g1 = b[which]
    assert len(g0["runs"]) == 3 and len(g1["runs"]) == 3
    assert abs(g0["mean"] - sum(g0["runs"]) / 3) < 1e-9
    assert abs(g1["delta"] - (g1["mean"] - g0["mean"])) < 1e-9
    lo, hi = g1["ci"]
    assert lo < g1["delta"] < hi and 0 < g1["p"] <= 1 and g1["p"] <= g1["q"] <= 1
    assert g1["significant"] == (g1["q"] <= 0.05) and g1["status"] == "ok" and "regression" in g1
small = [r for r in ev["rows"] if r["self"][1]["status"] == "small"]
assert small and all(r["self"][1]["p"] is None and r["self"][1]["q"] is None for r in small)
assert isinstance(ev["regressions"], int)
EOF
then ok "--json: the documented fields"; else not_ok "--json: the documented fields"; fi

# --- exact traces: no sampling noise --------------------------------------------------------
BIN=$(dirname "$PROFF")
if [ -s "$BIN/libproff-instrument.so" ] && cc -O1 -g -finstrument-functions -o fib "$ROOT/tests/data/instrument/fib.c" 2>/dev/null; then
	for i in 1 2 3; do "$PROFF" record --instrument -q -o fib.$i.trace -- ./fib >/dev/null 2>&1; done
	"$PROFF" diff fib.1.trace -- fib.2.trace >tr1.txt 2>&1; rc1=$?
	"$PROFF" diff fib.1.trace fib.2.trace -- fib.3.trace fib.1.trace >tr2.txt 2>&1; rc2=$?
	if [ $rc1 = 0 ] && grep -q "no sampling noise" tr1.txt && grep -q "no noise" tr1.txt && ! grep -q ' \* ' tr1.txt; then
		ok "traces, one run per side: no test (no sampling noise), said on the rows"
	else not_ok "traces, one run per side: no test (no sampling noise), said on the rows"; head -20 tr1.txt | sed 's/^/#   /'; fi
	[ $rc2 = 0 ] && grep -q "Welch" tr2.txt && ok "traces, repeated runs: tested" || not_ok "traces, repeated runs: tested"
else
	not_ok "traces: build fib.c with the instrumentation runtime"
fi
finish
