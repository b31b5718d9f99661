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
	expect_exit "diff --flamegraph of groups of runs (--) is refused, not ignored (129)" 129 "$PROFF" diff "$TMP/fib15.trace" -- "$TMP/fib16.trace" --flamegraph "$TMP/fibg.svg"
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
finish
