#!/bin/bash
# tests/cli/flamegraph.sh — end-to-end tests of `--flamegraph FILE` of proff
# report and proff diff (docs/flamegraph.md) that need no browser and no
# FlameGraph scripts (tests/oracle/flamegraph.sh has those): exact traces
# (widths by time, calls known by construction of fib.c), the embedded
# JSON's sums, --min-width's merged frames, srcline views, and one clear
# error line with a usage exit status for bad names and values.
source "$(dirname "$0")/../lib.sh"
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
BIN=$(dirname "$PROFF")

# the page's JSON: {"kind", "sides", "names", "views": [...]}
page_json() { python3 -c '
import json, re, sys
s = open(sys.argv[1]).read()
m = re.search(r"<script type=\"application/json\" id=\"proff-data\">(.*?)</script>", s, re.S)
print(m.group(1))' "$1"; }

# ---- exact traces: widths by time, calls in the data ---------------------
if [ -s "$BIN/libproff-instrument.so" ] && gcc -O2 -g -finstrument-functions -o "$TMP/fib" "$ROOT/tests/data/instrument/fib.c"; then
	"$PROFF" record --instrument -q -o "$TMP/fib15.trace" -- "$TMP/fib" 15 >/dev/null 2>&1
	"$PROFF" record --instrument -q -o "$TMP/fib16.trace" -- "$TMP/fib" 16 >/dev/null 2>&1
	"$PROFF" report -i "$TMP/fib15.trace" --flamegraph "$TMP/fib.html" 2>"$TMP/err" || { not_ok "exact trace --flamegraph"; cat "$TMP/err"; }
	"$PROFF" report -i "$TMP/fib15.trace" --flamegraph "$TMP/fib.folded"
	"$PROFF" report -i "$TMP/fib15.trace" --no-children -g none --json > "$TMP/fib.json"
	page_json "$TMP/fib.html" > "$TMP/fibpage.json"
	python3 - "$TMP/fibpage.json" "$TMP/fib.json" "$TMP/fib.folded" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
rep = json.load(open(sys.argv[2]))["events"][0]
folded = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[3]))
v = [x for x in d["views"] if x["key"] == "function" and x["order"] == "caller"][0]
names = d["names"]
calls = {}
for i, n in enumerate(v["name"]):
    calls[names[n]] = calls.get(names[n], 0) + v["self_count"][0][i]
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok:
        print("#   " + str(detail)[:1000])
result(d["exact"] and d["unit"] == "ns", "exact trace: the page's unit is ns", (d["exact"], d["unit"]))
result(v["total"][0][0] == rep["total_period"] == folded == d["sides"][0]["total"],
       "exact trace: the root's width is the report's total time (%d ns), as the folded stacks' sum" % folded,
       (v["total"][0][0], rep["total_period"], folded))
# fib(15) makes 2*F(16)-1 = 1973 calls of fib(); main() one
result(calls.get("fib") == 1973 and calls.get("main") == 1, "exact trace: calls in the data (fib 1973, main 1)", calls)
EOF
	"$PROFF" diff "$TMP/fib15.trace" "$TMP/fib16.trace" --flamegraph "$TMP/fibd.folded" 2>"$TMP/err" || { not_ok "exact traces: diff --flamegraph"; cat "$TMP/err"; }
	"$PROFF" diff "$TMP/fib15.trace" -- "$TMP/fib16.trace" --flamegraph "$TMP/fibg.folded" 2>"$TMP/err" &&
		cmp -s "$TMP/fibg.folded" "$TMP/fibd.folded" && ok "diff --flamegraph A -- B: one run a side, as A B" ||
		{ not_ok "diff --flamegraph A -- B: one run a side, as A B"; cat "$TMP/err"; }
	expect_exit "diff --flamegraph of three groups is refused (129)" 129 "$PROFF" diff "$TMP/fib15.trace" -- "$TMP/fib16.trace" -- "$TMP/fib15.trace" --flamegraph "$TMP/fibg.svg"
	"$PROFF" report -i "$TMP/fib16.trace" --flamegraph "$TMP/fib16.folded"
	python3 - "$TMP/fibd.folded" "$TMP/fib.folded" "$TMP/fib16.folded" <<'EOF'
import sys
def side(p):
    return {l.rsplit(" ", 1)[0]: int(l.rsplit(" ", 1)[1]) for l in open(p)}
a, b = side(sys.argv[2]), side(sys.argv[3])
want = {k: (a.get(k, 0), b.get(k, 0)) for k in set(a) | set(b)}
got = {}
for l in open(sys.argv[1]):
    st, x, y = l.rsplit(" ", 2)
    got[st] = (int(x), int(y))
ok = got == want and len(got) > 10
print(("ok - " if ok else "not ok - ") + "exact traces: diff folded is both sides' folded stacks, two columns (%d stacks)" % len(got))
EOF
else
	not_ok "build fib.c with the instrumentation runtime ($BIN/libproff-instrument.so)"
fi

# ---- a sampled profile: minimum width, srclines ------------------------------
if can_perf_record && cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$TMP/calls" "$ROOT/tests/data/report/calls.c"; then
	perf record -q -e cpu-clock -g -o "$TMP/calls.data" -- "$TMP/calls" >/dev/null 2>&1
	"$PROFF" report -i "$TMP/calls.data" --flamegraph "$TMP/calls.html" --min-width 1 --flamegraph-srcline 2>"$TMP/err" ||
		{ not_ok "report --flamegraph --min-width 1 --flamegraph-srcline"; cat "$TMP/err"; }
	page_json "$TMP/calls.html" > "$TMP/callspage.json"
	python3 - "$TMP/callspage.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
tot = d["sides"][0]["total"]
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok:
        print("#   " + str(detail)[:1000])
kinds = sorted((v["key"], v["order"]) for v in d["views"])
result(kinds == [("function", "callee"), ("function", "caller"), ("srcline", "callee"), ("srcline", "caller")],
       "srcline: four views (caller/callee by function and by function+srcline)", kinds)
bad, merged = [], 0
for v in d["views"]:
    n = len(v["parent"])
    kids = [0] * n
    for i in range(1, n):
        kids[v["parent"][i]] += v["total"][0][i]
        if v["merged"][i]:
            merged += 1
        elif v["total"][0][i] * 100 < tot:
            bad.append("%s/%s: %s below 1%%" % (v["key"], v["order"], d["names"][v["name"][i]]))
    for i in range(n):
        if kids[i] + v["self"][0][i] != v["total"][0][i]:
            bad.append("%s/%s: %s: children %d + self %d != %d" % (v["key"], v["order"], d["names"][v["name"][i]],
                       kids[i], v["self"][0][i], v["total"][0][i]))
    if v["total"][0][0] != tot:
        bad.append("root %d, total %d" % (v["total"][0][0], tot))
result(not bad and merged > 0, "--min-width 1: every frame at least 1 %% or a merged one (%d merged); children + self = total" % merged, bad)
sv = [v for v in d["views"] if v["key"] == "srcline" and v["order"] == "caller"][0]
srcs = [d["names"][s] for s in sv["srcline"] if s]
result(any(s.startswith("calls.c:") for s in srcs), "srcline: frames carry their source lines (calls.c:N)", srcs[:10])
EOF
else
	not_ok "record calls.c (perf record needs root or perf_event_paranoid <= 1)"
fi

# ---- bad names and values ------------------------------------------------------
expect_exit "--flamegraph x.png: usage error" 129 "$PROFF" report -i "$TMP/calls.data" --flamegraph "$TMP/x.png"
grep -q 'x.png: the file name must end in .svg, .html or .folded' "$TMP/ee.err" && ok "--flamegraph x.png: says which names work" ||
	{ not_ok "--flamegraph x.png: message"; cat "$TMP/ee.err"; }
expect_exit "--min-width -1: usage error" 129 "$PROFF" report -i "$TMP/calls.data" --flamegraph "$TMP/x.svg" --min-width -1
expect_exit "--min-width abc: usage error" 129 "$PROFF" diff "$TMP/calls.data" "$TMP/calls.data" --flamegraph "$TMP/x.svg" --min-width abc
expect_exit "diff --flamegraph of three files: usage error" 129 "$PROFF" diff "$TMP/calls.data" "$TMP/calls.data" "$TMP/calls.data" --flamegraph "$TMP/x.svg"
expect_exit "report --flamegraph --dsos: usage error (rows, not paths)" 129 "$PROFF" report -i "$TMP/calls.data" --flamegraph "$TMP/x.svg" --dsos calls
expect_exit "diff --flamegraph --symbols: usage error (rows, not paths)" 129 "$PROFF" diff "$TMP/calls.data" "$TMP/calls.data" --flamegraph "$TMP/x.svg" -S main
expect_exit "--flamegraph into a missing directory: error" 1 "$PROFF" report -i "$TMP/calls.data" --flamegraph "$TMP/no/such/dir/x.svg"
grep -q 'no/such/dir/x.svg: cannot write' "$TMP/ee.err" && ok "--flamegraph into a missing directory: names the file" ||
	{ not_ok "--flamegraph into a missing directory: message"; cat "$TMP/ee.err"; }
expect_exit "--flamegraph of a missing profile: error" 1 "$PROFF" report -i "$TMP/missing.data" --flamegraph "$TMP/x.svg"
# ---- groups of runs: the groups' test on each frame's per-run values ------------------
# planted.c (tests/data/stats): B makes hot_b 50 % heavier. 6 runs of A (an A/A
# split of 3 against 3), 4 of B, each about 0.3 s (shorter runs are mostly
# start-up, whose frames vary from run to run). Every frame's p and q against
# scipy's Welch and statsmodels' BH of the per-run values in the page's JSON.
# The A/A check looks at the program's own frames: the kernel's and ld.so's
# vary from run to run beyond what 3 runs a side can judge on a busy host
# (docs/statistics.md), and the oracle checks their q all the same.
if cc -O1 -g -fno-omit-frame-pointer -o "$TMP/planted" "$ROOT/tests/data/stats/planted.c" &&
   "$PROFF" record -q -r 6 -c 200000 -g -o "$TMP/pa.data" "$TMP/planted" 60000000 100 >/dev/null 2>&1 &&
   "$PROFF" record -q -r 4 -c 200000 -g -o "$TMP/pb.data" "$TMP/planted" 60000000 150 >/dev/null 2>&1 &&
   [ -s "$TMP/pb.data.4" ] && [ -s "$TMP/pa.data.6" ]; then
	"$PROFF" diff "$TMP"/pa.data.{1,2,3,4} -- "$TMP"/pb.data.{1,2,3,4} --flamegraph "$TMP/g.html" 2>"$TMP/err" ||
		{ not_ok "diff --flamegraph A1 .. A4 -- B1 .. B4"; cat "$TMP/err"; }
	"$PROFF" diff "$TMP"/pa.data.{1,2,3} -- "$TMP"/pa.data.{4,5,6} --flamegraph "$TMP/aa.html" 2>"$TMP/err" ||
		{ not_ok "diff --flamegraph A/A groups"; cat "$TMP/err"; }
	"$PROFF" diff "$TMP"/pa.data.{1,2,3,4} -- "$TMP"/pb.data.{1,2,3,4} --metric absolute --fdr 0.1 --flamegraph "$TMP/gabs.html" 2>"$TMP/err" ||
		{ not_ok "diff --flamegraph groups --metric absolute"; cat "$TMP/err"; }
	page_json "$TMP/g.html" > "$TMP/g.json"
	page_json "$TMP/aa.html" > "$TMP/aa.json"
	page_json "$TMP/gabs.html" > "$TMP/gabs.json"
	/usr/bin/python3 - "$TMP/g.json" "$TMP/aa.json" "$TMP/gabs.json" <<'EOF'
import json, math, sys, warnings
import numpy as np
warnings.filterwarnings("ignore")   # scipy on constant values (the root's 100 %): NaN, as proff's untested
from scipy import stats
from statsmodels.stats.multitest import multipletests
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok:
        print("#   " + str(detail)[:1500])
def close(x, y):
    return x is not None and abs(x - y) <= 1e-6 * max(abs(y), 1e-300)

def check_oracle(d, what, fdr, absolute):
    runs = d["runs"]
    bad = []
    nframes = 0
    for v in d["views"]:
        for col, sig in (("run_total", "sig_total"), ("run_self", "sig_self")):
            vals = np.array(v[col], dtype=float)          # [run][frame]
            if not absolute:
                vals = np.array([100.0 * vals[r] / runs[r]["total"] for r in range(len(runs))])
            a = vals[[r for r in range(len(runs)) if runs[r]["side"] == 0]]
            b = vals[[r for r in range(len(runs)) if runs[r]["side"] == 1]]
            p = []
            for i in range(v["frames"]):
                if len(set(a[:, i])) == 1 and len(set(b[:, i])) == 1:
                    p.append(math.nan)    # no variation on either side: Welch has no test (docs/flamegraph.md)
                    continue
                with np.errstate(all="ignore"):
                    t = stats.ttest_ind(b[:, i], a[:, i], equal_var=False)
                p.append(float(t.pvalue))
            ok_i = [i for i in range(len(p)) if not math.isnan(p[i])]
            q = multipletests([p[i] for i in ok_i], method="fdr_bh")[1] if ok_i else []
            qs = dict(zip(ok_i, q))
            s = v[sig]
            for i in range(v["frames"]):
                nframes += 1
                if i in qs:
                    if not (close(s["p"][i], p[i]) and close(s["q"][i], qs[i]) and
                            s["significant"][i] == (1 if qs[i] <= fdr else 0)):
                        bad.append((v["order"], sig, d["names"][v["name"][i]], s["p"][i], p[i], s["q"][i], qs[i]))
                elif s["p"][i] is not None:
                    bad.append((v["order"], sig, d["names"][v["name"][i]], "untested by scipy", s["p"][i]))
    result(not bad and nframes > 10, "%s: every frame's p and q equal scipy's Welch and statsmodels' BH (%d frames)" % (what, nframes), bad[:5])

g, aa, gabs = (json.load(open(f)) for f in sys.argv[1:4])
result(g["stats"] == {"test": "welch", "fdr": 0.05, "level": 0.95, "metric": "share"} and
       [r["side"] for r in g["runs"]] == [0, 0, 0, 0, 1, 1, 1, 1], "groups: the test and the runs in the page's JSON", (g.get("stats"), g.get("runs")))
check_oracle(g, "groups A/B", 0.05, False)
check_oracle(aa, "groups A/A", 0.05, False)
check_oracle(gabs, "groups A/B --metric absolute --fdr 0.1", 0.1, True)
v = [x for x in g["views"] if x["key"] == "function" and x["order"] == "caller"][0]
names = [g["names"][n] for n in v["name"]]
sig = v["sig_total"]
planted = [i for i, n in enumerate(names) if n in ("hot_b", "caller_b")]
def share(side, i):
    return v["total"][side][i] / g["sides"][side]["total"]
result(len(planted) >= 2 and all(sig["significant"][i] == 1 and share(1, i) > share(0, i) for i in planted),
       "groups A/B: the planted hot_b and its caller caller_b coloured (significant growth)",
       [(names[i], sig["q"][i]) for i in planted])
PROGRAM = {"main", "hot_a", "hot_b", "hot_c", "caller_b"}
grey = []
for vv in aa["views"]:
    for s in ("sig_total", "sig_self"):
        grey += [aa["names"][vv["name"][i]] for i in range(vv["frames"])
                 if vv[s]["significant"][i] == 1 and aa["names"][vv["name"][i]] in PROGRAM]
result(not grey, "groups A/A: every frame of the program grey (no significant change)", grey)
EOF
	"$PROFF" diff "$TMP"/pa.data.{1,2,3,4} -- "$TMP"/pb.data.{1,2,3,4} --flamegraph "$TMP/g.svg" 2>"$TMP/err" &&
		grep -q '<title>hot_b (' "$TMP/g.svg" && ok "groups: the SVG draws" || { not_ok "groups: the SVG"; cat "$TMP/err"; }
else
	skip "groups of runs' flame graph (recording does not work here)"
fi
finish
