#!/bin/bash
# json.sh — every kind of JSON proff prints (report of sampled profiles with
# every call-graph form, several events and sort keys, an exact trace; diff
# of two and three files; calibrate), the kinds the other tests produce,
# validated against the JSON Schemas of docs/json.md (python3-jsonschema).
# The call graph tree of report --json against the text: the chain ends it
# implies, with their percentages, are the lines of -g folded.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
export PROFF_CONFIG=/dev/null PERF_CONFIG=/dev/null

python3 -c 'import jsonschema' 2>/dev/null || { not_ok "python3-jsonschema is installed (scripts/setup-deps.sh)"; finish; }
W="$TMP/w"; mkdir -p "$W" "$TMP/json"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/calls" "$ROOT/tests/data/report/calls.c" ||
	{ not_ok "build calls.c"; finish; }
if ! can_perf_record; then not_ok "perf record works here"; finish; fi
perf record -q -e cpu-clock -g -o "$W/a.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record a"
perf record -q -e cpu-clock -g -o "$W/b.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record b"
perf record -q -e cpu-clock,task-clock -g -o "$W/two.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record two events"
perf record -q -e cpu-clock -o "$W/flat.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record without -g"
# a stripped program: its rows are unresolved addresses (a diff's "sym": null);
# linked stripped, its build id is not calls' (perf's cache holds calls by its id)
cc -O1 -fno-omit-frame-pointer -pthread -s -o "$W/calls-stripped" "$ROOT/tests/data/report/calls.c" &&
perf record -q -e cpu-clock -g -o "$W/s.data" -- "$W/calls-stripped" >/dev/null 2>&1 || not_ok "record a stripped program"

n=0
emit() {  # emit NAME CMD...: CMD's stdout kept as a JSON to validate
	n=$((n + 1))
	if "$@" >"$TMP/json/$n.json" 2>"$TMP/json/$n.err"; then
		echo "$1 ${*:2}" >"$TMP/json/$n.cmd"
	else
		not_ok "$* (exit $?)"; head -3 "$TMP/json/$n.err" | sed 's/^/#   /'; rm -f "$TMP/json/$n.json"
	fi
}
emit "$PROFF" report -i "$W/a.data" --json
emit "$PROFF" report -i "$W/a.data" --json --no-children
emit "$PROFF" report -i "$W/a.data" --json --no-children -g none -s pid,comm,dso,sym
emit "$PROFF" report -i "$W/a.data" --json --no-children -g fractal -s sym
emit "$PROFF" report -i "$W/a.data" --json -g caller,0.5,3 -s dso,sym
emit "$PROFF" report -i "$W/a.data" --json --no-children -g folded -s sym,srcline -v
emit "$PROFF" report -i "$W/a.data" --json --no-children -s parent,sym --percent-limit 5
emit "$PROFF" report -i "$W/a.data" --json -d calls --percentage relative
emit "$PROFF" report -i "$W/two.data" --json --no-children
emit "$PROFF" report -i "$W/flat.data" --json
emit "$PROFF" diff --json "$W/a.data" "$W/b.data"
emit "$PROFF" diff --json -c wdiff:1,2 -s comm,dso,sym "$W/a.data" "$W/b.data" "$W/a.data"
emit "$PROFF" diff --json -c ratio -b --percentage relative -d calls "$W/a.data" "$W/b.data"
# groups of runs (the a/b recordings twice: no noise, every test's members)
emit "$PROFF" diff --json "$W/a.data" "$W/a.data" -- "$W/b.data" "$W/b.data"
emit "$PROFF" diff --json --children --power --test mwu -c wdiff:1,2 --fail-on-regression 50% "$W/a.data" "$W/b.data" -- "$W/b.data" "$W/a.data"
emit "$PROFF" diff --json -c ratio "$W/a.data" -- "$W/b.data"
emit "$PROFF" diff --json "$W/s.data" "$W/s.data"
emit "$PROFF" diff --json "$W/s.data" -- "$W/s.data"
for f in $(grep -l '"sym":null,"level":"[.k]","addr":"0x[0-9a-f]*"' "$TMP"/json/*.json); do cat "${f%.json}.cmd"; echo; done |
	grep -q 'diff --json .*/s.data .*/s.data' && ok "a diff's unresolved rows: \"sym\": null with level and addr" ||
	not_ok "a diff's unresolved rows: \"sym\": null with level and addr"
# a flame graph page's embedded data
flame_json() {  # flame_json PAGE CMD...: the page's proff-data, kept as a JSON to validate
	local page=$1; shift
	n=$((n + 1))
	if "$@" >/dev/null 2>"$TMP/json/$n.err" && python3 -c '
import re, sys
m = re.search(r"<script type=\"application/json\" id=\"proff-data\">(.*?)</script>", open(sys.argv[1]).read(), re.S)
sys.stdout.write(m.group(1))' "$page" >"$TMP/json/$n.json"; then
		echo "$1 ${*:2}" >"$TMP/json/$n.cmd"
	else
		not_ok "$* (flame graph data)"; head -3 "$TMP/json/$n.err" | sed 's/^/#   /'; rm -f "$TMP/json/$n.json"
	fi
}
flame_json "$W/r.html" "$PROFF" report -i "$W/a.data" --flamegraph "$W/r.html"
flame_json "$W/rs.html" "$PROFF" report -i "$W/a.data" --flamegraph "$W/rs.html" --flamegraph-srcline
flame_json "$W/d.html" "$PROFF" diff "$W/a.data" "$W/b.data" --flamegraph "$W/d.html"
flame_json "$W/dg.html" "$PROFF" diff "$W/a.data" "$W/b.data" -- "$W/b.data" "$W/a.data" --flamegraph "$W/dg.html"
emit "$PROFF" calibrate --quick -q --only timer -r 1 -t '' --json
# an exact trace
printf '#include <stdio.h>\nstatic int f(int n) { return n < 2 ? n : f(n - 1) + f(n - 2); }\nint main(void) { printf("%%d\\n", f(18)); return 0; }\n' >"$W/fib.c"
if cc -O1 -g -finstrument-functions -o "$W/fib" "$W/fib.c" &&
	PROFF_RUNTIME="$(dirname "$PROFF")/libproff-instrument.so" "$PROFF" record --instrument -q -o "$W/fib.trace" -- "$W/fib" >/dev/null 2>&1; then
	emit "$PROFF" report -i "$W/fib.trace" --json
	emit "$PROFF" report -i "$W/fib.trace" --json --no-children -g none
	emit "$PROFF" diff --json "$W/fib.trace" "$W/fib.trace"
else
	not_ok "an exact trace to report"
fi

# every JSON against the schema docs/json.md gives for its "schema"
if python3 - "$ROOT/docs/json.md" "$TMP/json" >"$TMP/validate.out" 2>&1 <<'EOF'
import glob, json, os, re, sys
import jsonschema
md = open(sys.argv[1]).read()
schemas = {}
for block in re.findall(r"```json\n(.*?)```", md, re.S):
    s = json.loads(block)
    jsonschema.Draft202012Validator.check_schema(s)
    schemas[s["$id"]] = s
assert set(schemas) == {"proff-report/2", "proff-diff/1", "proff-diff-groups/1", "proff-calibrate/1",
                        "proff-flamegraph/1"}, sorted(schemas)
bad = 0
seen = set()
for path in sorted(glob.glob(os.path.join(sys.argv[2], "*.json")), key=lambda p: int(os.path.basename(p)[:-5])):
    cmd = open(path[:-5] + ".cmd").read().strip()
    try:
        d = json.load(open(path))
        v = jsonschema.Draft202012Validator(schemas[d["schema"]])
        errs = sorted(v.iter_errors(d), key=lambda e: list(e.path))
        seen.add(d["schema"])
    except Exception as e:  # not JSON, no schema
        errs = [e]
    for e in errs[:3]:
        print(f"# {cmd}: {getattr(e, 'message', e)} at {list(getattr(e, 'path', []))}")
    print(("ok - " if not errs else "not ok - ") + "JSON matches docs/json.md: " + cmd.split("/")[-1][:90])
    bad += bool(errs)
# the sym of an unresolved address, and address 0, in the documented form
for path in glob.glob(os.path.join(sys.argv[2], "*.json")):
    d = json.load(open(path))
    for ev in d.get("events", []):
        for r in ev.get("rows", []):
            s = r.get("sym")
            if isinstance(s, str) and s.startswith("0x") and not re.fullmatch(r"0x[0-9a-f]{16}", s):
                print(f"not ok - unresolved sym {s!r} is not 0x + 16 hex digits"); bad += 1
print("ok - every schema was exercised" if seen == set(schemas) else f"not ok - schemas not exercised: {set(schemas) - seen}")
sys.exit(0)
EOF
then cat "$TMP/validate.out"; else not_ok "the validator ran"; sed 's/^/#   /' "$TMP/validate.out" | head -20; fi

# the call graph tree against the text: the chain ends it implies (a node's
# period less its children's) are -g folded,0's lines
for opts in "--no-children -s sym" "--no-children -s dso,sym -g caller" "--children -s sym"; do
	# shellcheck disable=SC2086
	"$PROFF" report -i "$W/a.data" --json $opts -g graph,0 >"$TMP/tree.json"
	# shellcheck disable=SC2086
	"$PROFF" report -i "$W/a.data" -q $opts -g folded,0 | grep -v '^ ' | grep . | sort >"$TMP/folded.txt"
	python3 - "$TMP/tree.json" <<'EOF' | sort >"$TMP/tree.txt"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["events"][0]
total = ev["total_period"]
def walk(n, path):
    p = path + [n["name"]]
    hit = n["period"] - sum(c["period"] for c in n.get("children", []))
    if hit > 0:
        print("%.2f%% %s" % (hit * 100.0 / total, ";".join(p)))
    for c in n.get("children", []):
        walk(c, p)
for r in ev["rows"]:
    for n in r.get("callchain", []):
        walk(n, [])
EOF
	[ -s "$TMP/folded.txt" ] || not_ok "folded text ($opts)"
	check_same "report --json callchain tree = the text graph's chains ($opts)" "$TMP/folded.txt" "$TMP/tree.txt"
done
finish
