#!/bin/bash
# flamegraph.sh — oracle test of proff's flame graphs (docs/flamegraph.md):
#  - against Brendan Gregg's FlameGraph scripts ($FLAMEGRAPH, by default
#    ../shared/tools/FlameGraph beside the checkout; never copied here):
#    `perf script | stackcollapse-perf.pl` equals proff's folded stacks,
#    flamegraph.pl's frames (paths and samples, from the SVG's geometry) equal
#    proff's SVG's, difffolded.pl of the two sides equals proff's diff folded;
#  - against proff report: a name's self samples and its outermost frames'
#    samples in the SVG are the report's Self and Children periods;
#  - the differential cases: a path only the baseline has is drawn, an A/A
#    pair is all grey, the planted change is coloured on its path only
#    (significance: lib/output/flamegraph-sig.c, docs/flamegraph.md);
#  - in headless Chromium (tests/tools/cdp.py, the DevTools protocol over a
#    pipe): the pages load from file:// with no request and no console error,
#    their frames' titles are the SVG's, widths sum to the parent's (less its
#    self), a click zooms, search highlights and reports the matched share,
#    the callee view's first level is the report's Self; screenshots are kept
#    in build/test-artifacts/.
source "$(dirname "$0")/../lib.sh"
FLAMEGRAPH=${FLAMEGRAPH:-$ROOT/../shared/tools/FlameGraph}
ART=$ROOT/build/test-artifacts
SVGT="python3 $ROOT/tests/tools/flamesvg.py"
W="$TMP/w"; mkdir -p "$W" "$ART"

if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
	-o "$W/calls" "$ROOT/tests/data/report/calls.c" 2>"$TMP/cc.err" || { not_ok "build calls.c"; cat "$TMP/cc.err"; finish; }
# the diff's programs share one name (the process name is the graph's first frame)
for v in "base -DOLD_PATH" "new -DPLANTED=1" "aa"; do
	set -- $v
	mkdir -p "$W/$1"
	cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -o "$W/$1/planted" ${2:-} "$ROOT/tests/data/flamegraph/planted.c" ||
		{ not_ok "build planted.c $v"; finish; }
done
rec() { local out=$1; shift; perf record -q -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; return 1; }; }
rec "$W/calls.data" -e cpu-clock -g -- "$W/calls" || not_ok "record calls"
rec "$W/base.data" -e cpu-clock -F 10000 -g -- "$W/base/planted" || not_ok "record base"
rec "$W/new.data" -e cpu-clock -F 10000 -g -- "$W/new/planted" || not_ok "record new"
rec "$W/aa1.data" -e cpu-clock -F 10000 -g -- "$W/aa/planted" || not_ok "record aa1"
rec "$W/aa2.data" -e cpu-clock -F 10000 -g -- "$W/aa/planted" || not_ok "record aa2"

# ---- proff report against proff report's own numbers --------------------
"$PROFF" report -i "$W/calls.data" --flamegraph "$W/calls.svg" --min-width 0 2>"$TMP/err" ||
	{ not_ok "report --flamegraph svg"; cat "$TMP/err"; }
check "svg: root 100 %, percentages of the root, children within parents" $SVGT check "$W/calls.svg"
"$PROFF" report -i "$W/calls.data" --no-children -s sym -g none --json > "$W/self.json"
"$PROFF" report -i "$W/calls.data" --children -s sym -g none --json > "$W/children.json"
$SVGT names "$W/calls.svg" > "$W/names.json"
python3 - "$W/self.json" "$W/children.json" "$W/names.json" <<'EOF' > "$TMP/names.out"
import json, re, sys
rows = lambda p: json.load(open(p))["events"][0]["rows"]
names = json.load(open(sys.argv[3]))
def unique(rs):   # resolved names of one row only (the flame graph merges a name's frames)
    c = {}
    for r in rs:
        c[r["sym"]] = c.get(r["sym"], 0) + 1
    # (unresolved rows print their address: the graph names them by dso)
    return {r["sym"]: r for r in rs if c[r["sym"]] == 1 and not r["sym"].startswith("[")
            and not re.match(r"^(0x)?[0-9a-f]+$", r["sym"])}
bad, n = [], 0
for sym, r in unique(rows(sys.argv[1])).items():
    n += 1
    got = names.get(sym, {"self": 0})["self"]
    if got != r["self_period"]:
        bad.append("%s: self %d in the graph, %d in the report" % (sym, got, r["self_period"]))
for sym, r in unique(rows(sys.argv[2])).items():
    n += 1
    got = names.get(sym, {"outer": 0})["outer"]
    if got != r["children_period"]:
        bad.append("%s: outermost frames %d in the graph, Children %d in the report" % (sym, got, r["children_period"]))
print("compared %d" % n)
print("\n".join(bad))
EOF
if [ "$(grep -vc '^compared' "$TMP/names.out")" = 1 ] && ! grep -q '^compared 0$' "$TMP/names.out" && [ -z "$(sed 1d "$TMP/names.out")" ]; then
	ok "svg: every name's self and outermost frames are proff report's Self and Children periods ($(head -1 "$TMP/names.out") rows)"
else
	not_ok "svg: names against proff report"; sed 's/^/#   /' "$TMP/names.out" | head -20
fi

# ---- FlameGraph -----------------------------------------------------------
if [ ! -x "$FLAMEGRAPH/stackcollapse-perf.pl" ]; then
	skip "- FlameGraph comparisons: no FlameGraph scripts at $FLAMEGRAPH (set FLAMEGRAPH=dir)"
else
	for f in calls new; do
		perf script -i "$W/$f.data" 2>/dev/null | perl "$FLAMEGRAPH/stackcollapse-perf.pl" > "$W/$f.sc.folded"
		"$PROFF" report -i "$W/$f.data" --flamegraph "$W/$f.folded"
		check_same "folded stacks = perf script | stackcollapse-perf.pl ($f.data)" "$W/$f.sc.folded" "$W/$f.folded"
	done
	perl "$FLAMEGRAPH/flamegraph.pl" --minwidth 0 "$W/calls.sc.folded" > "$W/calls.fg.svg" 2>/dev/null
	$SVGT paths "$W/calls.fg.svg" > "$W/fg.paths"
	$SVGT paths "$W/calls.svg" > "$W/proff.paths"
	if [ -s "$W/fg.paths" ]; then
		check_same "svg frames (paths and samples) = flamegraph.pl's ($(wc -l < "$W/fg.paths") paths)" "$W/fg.paths" "$W/proff.paths"
	else
		not_ok "flamegraph.pl drew nothing"
	fi
	perf script -i "$W/base.data" 2>/dev/null | perl "$FLAMEGRAPH/stackcollapse-perf.pl" > "$W/base.sc.folded"
	perl "$FLAMEGRAPH/difffolded.pl" "$W/base.sc.folded" "$W/new.sc.folded" | LC_ALL=C sort > "$W/dd.folded"
	"$PROFF" diff "$W/base.data" "$W/new.data" --flamegraph "$W/diff.folded"
	check_same "diff folded stacks = difffolded.pl of both sides" "$W/dd.folded" "$W/diff.folded"
fi

# ---- differential cases -----------------------------------------------------
"$PROFF" diff "$W/base.data" "$W/new.data" --flamegraph "$W/diff.svg" --min-width 0 2>"$TMP/err" ||
	{ not_ok "diff --flamegraph svg"; cat "$TMP/err"; }
"$PROFF" diff "$W/base.data" "$W/new.data" --flamegraph "$W/diff.html" 2>"$TMP/err" ||
	{ not_ok "diff --flamegraph html"; cat "$TMP/err"; }
"$PROFF" diff "$W/aa1.data" "$W/aa2.data" --flamegraph "$W/aa.svg" --min-width 0 2>"$TMP/err" ||
	{ not_ok "diff --flamegraph A/A svg"; cat "$TMP/err"; }
"$PROFF" report -i "$W/base.data" --flamegraph "$W/base.pf.folded"
"$PROFF" report -i "$W/new.data" --flamegraph "$W/new.pf.folded"
$SVGT frames "$W/diff.svg" > "$W/diff.frames.json"
$SVGT frames "$W/aa.svg" > "$W/aa.frames.json"
sig=$(sed -n 's/.*"sig_total":\(.\).*/\1/p' "$W/diff.html" | head -1)
python3 - "$W/diff.frames.json" "$W/base.pf.folded" "$W/new.pf.folded" "$W/aa.frames.json" "$sig" <<'EOF'
import json, sys
fr = json.load(open(sys.argv[1]))
def paths(p):   # inclusive period per call path, from a side's folded stacks
    acc = {}
    for line in open(p):
        st, n = line.rsplit(" ", 1)
        parts = st.split(";")
        acc["all"] = acc.get("all", 0) + int(n)
        for i in range(1, len(parts) + 1):
            k = "all;" + ";".join(parts[:i])
            acc[k] = acc.get(k, 0) + int(n)
    return acc
base, new = paths(sys.argv[2]), paths(sys.argv[3])
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and detail:
        print("#   " + detail[:2000])
old = [f for f in fr if f["name"] == "old_path"]
result(old and all(f["w"] > 0 and "only0" in f["class"] and f["samples"] == 0 and f["delta"] < 0 for f in old),
       "diff svg: the path only the baseline has (old_path) is drawn, dashed, 0 new samples, negative delta",
       json.dumps(old))
bad = []
for f in fr:
    if f["depth"] == 0:
        continue
    b, n = base.get(f["path"], 0), new.get(f["path"], 0)
    want = 100.0 * n / new["all"] - 100.0 * b / base["all"]
    if f["samples"] != n or "%.2f" % f["delta"] != "%.2f" % want and "%+.2f" % f["delta"] != "%+.2f" % want:
        bad.append("%s: %d samples, %+.2f%%; the sides' folded stacks say %d, %+.2f%%" % (f["path"], f["samples"], f["delta"], n, want))
result(not bad and len(fr) > 5, "diff svg: every frame's new samples and inclusive delta from the two sides' stacks (%d frames)" % len(fr), "; ".join(bad))
grey = "rgb(200,200,200)"
if sys.argv[5] != "{":
    result(False, "the diff page has significance data (sig_total)")
else:
    aa = json.load(open(sys.argv[4]))
    col = [f["title"] for f in aa if f["depth"] > 0 and f["fill"] != grey]
    result(not col, "A/A pair: every frame grey (%d frames)" % len(aa), "; ".join(col))
    # the planted change is planted() spinning 3x longer: planted and its
    # spin must be coloured, every other frame grey. Not judged: planted's
    # ancestors (the whole program on both sides, ~100 %: their share cannot
    # change, lib/output/flamegraph-sig.c) and the frames below planted;spin
    # (interrupts that landed in it, a few samples each, grow with its time
    # but are not the change).
    planted = "all;planted;__libc_start_call_main;main;planted"
    on_path = lambda f: f["path"] in (planted, planted + ";spin")
    below = lambda f: f["path"].startswith(planted + ";") or planted.startswith(f["path"])
    judged = [f for f in fr if f["depth"] > 0 and "old_path" not in f["path"] and (on_path(f) or not below(f))]
    wrong = [f["path"] + ": " + f["title"] for f in judged if (f["fill"] != grey) != on_path(f)]
    path = [f for f in fr if on_path(f)]
    uncoloured = [f["path"] for f in path if f["fill"] == grey]
    result(not uncoloured and len(path) == 2, "planted change: planted and its spin are coloured", "; ".join(uncoloured))
    # "grey elsewhere" holds where steady() (the unchanged control) took the
    # same CPU time in both runs: one run per side cannot tell a host that
    # ran one run slower from a slower steady() (this shared host has run the
    # same program 2x slower from one run to the next)
    st = lambda side: side.get("all;planted;__libc_start_call_main;main;steady", 0)
    speed = st(new) / st(base) if st(base) else 0
    if 0.9 <= speed <= 1.1:
        result(not wrong, "planted change: grey off its path (steady() took %.2fx the baseline's CPU time)" % speed, "; ".join(wrong))
    else:
        print("skip - planted change: grey off its path: steady() took %.2fx the baseline's CPU time in the new run (the host's speed changed; one run per side cannot separate that)" % speed)
EOF

# ---- in the browser ---------------------------------------------------------
if ! command -v "${CHROMIUM:-chromium}" >/dev/null; then
	not_ok "chromium is installed (scripts/setup-deps.sh)"
	finish
fi
"$PROFF" report -i "$W/calls.data" --flamegraph "$W/calls.html" --min-width 0 2>"$TMP/err" ||
	{ not_ok "report --flamegraph html"; cat "$TMP/err"; }
python3 "$ROOT/tests/tools/cdp.py" "$W/calls.html" "$W/page.json" "$ART/flamegraph-report.png" <<'EOF' 2>"$TMP/cdp.err" ||
Array.from(document.querySelectorAll('#fg g.f > title')).map(t => t.textContent)
----
(() => {
	const D = window.proffFlame.data, V = D.views.find(v => v.key === 'function' && v.order === 'caller');
	const w = {}, kids = {}, n = {};
	document.querySelectorAll('#fg g.f').forEach(g => { w[+g.dataset.i] = +g.querySelector('rect').getAttribute('width'); });
	for (const i in w) { const p = V.parent[i]; if (p >= 0) { kids[p] = (kids[p] || 0) + w[i]; n[p] = (n[p] || 0) + 1; } }
	const scale = w[0] / V.total[0][0], bad = [];
	for (const i in w) {
		const self = V.self[0][i] * scale;
		if (Math.abs((kids[i] || 0) + self - w[i]) > 0.006 * ((n[i] || 0) + 2))
			bad.push(D.names[V.name[i]] + ': ' + w[i] + ' wide, children ' + (kids[i] || 0) + ' + self ' + self);
	}
	return { root: w[0], chart: +document.getElementById('fg').getAttribute('width'), bad: bad };
})()
----
(() => {
	const before = document.querySelectorAll('#fg g.f').length;
	const t = g => g.querySelector('title').textContent, wd = g => +g.querySelector('rect').getAttribute('width');
	const g = Array.from(document.querySelectorAll('#fg g.f')).filter(g => t(g).startsWith('main ')).sort((a, b) => wd(b) - wd(a))[0];
	const title = t(g);
	g.querySelector('rect').dispatchEvent(new MouseEvent('click', { bubbles: true }));
	const z = Array.from(document.querySelectorAll('#fg g.f')).find(x => t(x) === title && !x.classList.contains('anc'));
	const r = { title: title, before: before, after: document.querySelectorAll('#fg g.f').length,
		x: +z.querySelector('rect').getAttribute('x'), w: wd(z), chart: +document.getElementById('fg').getAttribute('width'),
		anc: Array.from(document.querySelectorAll('#fg g.anc')).map(t), reset_enabled: !document.getElementById('reset').disabled };
	document.getElementById('reset').click();
	r.reset = document.querySelectorAll('#fg g.f').length;
	return r;
})()
----
(() => {
	const s = document.getElementById('search');
	s.value = 'leaf_';
	s.dispatchEvent(new Event('input'));
	return { titles: Array.from(document.querySelectorAll('#fg g.m > title')).map(t => t.textContent),
		matched: document.getElementById('matched').textContent };
})()
----
(() => {
	const o = document.getElementById('order');
	o.value = 'callee';
	o.dispatchEvent(new Event('change'));
	const V = window.proffFlame.data.views.find(v => v.key === 'function' && v.order === 'callee');
	return Array.from(document.querySelectorAll('#fg g.f')).filter(g => V.parent[+g.dataset.i] === 0)
		.map(g => g.querySelector('title').textContent);
})()
----
(() => {
	const l = document.getElementById('layout');
	l.value = 'icicle';
	l.dispatchEvent(new Event('change'));
	const y = Array.from(document.querySelectorAll('#fg g.f rect')).map(r => +r.getAttribute('y'));
	const root = +document.querySelector('#fg g.f[data-i="0"] rect').getAttribute('y');
	return { root: root, min: Math.min(...y), max: Math.max(...y) };
})()
EOF
	{ not_ok "chromium: load the report page"; sed 's/^/#   /' "$TMP/cdp.err" | tail -5; }
$SVGT frames "$W/calls.svg" > "$W/calls.frames.json"
python3 - "$W/page.json" "$W/calls.frames.json" "$W/self.json" <<'EOF'
import json, re, sys
p = json.load(open(sys.argv[1]))
fr = json.load(open(sys.argv[2]))
selfrows = json.load(open(sys.argv[3]))["events"][0]["rows"]
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and detail:
        print("#   " + str(detail)[:2000])
res = p["results"]
result(not p["requests"], "report page: no network request from file://", p["requests"])
result(not p["errors"], "report page: no console error", p["errors"])
result(sorted(res[0]) == sorted(f["title"] for f in fr),
       "report page: its %d frames' titles are the SVG's (the numbers checked against proff report above)" % len(res[0]),
       sorted(set(res[0]) ^ set(f["title"] for f in fr))[:10])
w = res[1]
result(not w["bad"] and abs(w["root"] - w["chart"]) < 0.01,
       "report page: the root is the chart's whole width, every frame's children and self fill it exactly", w)
z = res[2]
result(abs(z["x"]) < 0.01 and abs(z["w"] - z["chart"]) < 0.01 and z["after"] < z["before"] and z["reset_enabled"]
       and [a.split(" (")[0] for a in z["anc"]] == ["__libc_start_call_main", "calls", "all"] and z["reset"] == z["before"],
       "report page: a click on main zooms (main full width, its ancestors kept, the rest gone; reset restores)", z)
s = res[3]
names = [(f["name"], f) for f in fr]
want = sorted(f["title"] for f in fr if "leaf_" in f["name"])
total = [f for f in fr if f["depth"] == 0][0]["samples"]
def outer_matched(f):
    a = f["parent"]
    while a is not None:
        if "leaf_" in fr[a]["name"]:
            return False
        a = fr[a]["parent"]
    return True
pct = 100.0 * sum(f["samples"] for f in fr if "leaf_" in f["name"] and outer_matched(f)) / total
result(sorted(s["titles"]) == want and s["matched"] == "Matched: %.1f%%" % pct and want,
       "report page: search /leaf_/ highlights its %d frames, %s" % (len(want), s["matched"]), (s, pct))
rows = {}
for r in selfrows:
    rows.setdefault(r["sym"], []).append(r["self_period"])
bad = []
for t in res[4]:
    m = re.match(r"^(.*) \(([\d,]+) samples", t)
    nm, n = m.group(1), int(m.group(2).replace(",", ""))
    if nm in rows and len(rows[nm]) == 1 and not nm.startswith("[") and rows[nm][0] != n:
        bad.append("%s: %d, report Self %d" % (nm, n, rows[nm][0]))
result(not bad and len(res[4]) > 3, "report page: the callee view's first level is proff report's Self (%d frames)" % len(res[4]), bad)
ic = res[5]
result(ic["root"] == ic["min"] and ic["root"] < ic["max"], "report page: icicle puts the root on top", ic)
EOF
python3 "$ROOT/tests/tools/cdp.py" "$W/diff.html" "$W/dpage.json" "$ART/flamegraph-diff.png" <<'EOF' 2>"$TMP/cdp.err" ||
Array.from(document.querySelectorAll('#fg g.f')).map(g => [g.querySelector('title').textContent, g.getAttribute('class'), +g.querySelector('rect').getAttribute('width')])
EOF
	{ not_ok "chromium: load the diff page"; sed 's/^/#   /' "$TMP/cdp.err" | tail -5; }
python3 - "$W/dpage.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
def result(ok, name, detail=""):
    print(("ok - " if ok else "not ok - ") + name)
    if not ok and detail:
        print("#   " + str(detail)[:2000])
result(not p["requests"] and not p["errors"], "diff page: no request, no console error", p)
old = [f for f in p["results"][0] if f[0].startswith("old_path ")]
result(old and all("only0" in f[1] and f[2] > 0 for f in old), "diff page: the baseline-only path is drawn, dashed", old)
EOF
ls "$ART"/flamegraph-report.png "$ART"/flamegraph-diff.png >/dev/null 2>&1 && ok "screenshots kept: build/test-artifacts/flamegraph-{report,diff}.png" ||
	not_ok "screenshots kept"
finish
