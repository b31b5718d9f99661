#!/bin/bash
# tests/cli/convert-groups.sh — `proff convert A1 A2 A3 -- B1 B2 B3 -o F.pb.gz`:
# groups of runs as one pprof file whose samples carry the labels run (the
# input's name) and group (0 the baseline), and back:
#   - go tool pprof (the oracle) reads the file: -raw shows both labels on
#     every sample, the six (run, group) pairs and nothing else; -tagfocus
#     run=^X$ -top equals proff report of X alone (flat and cum per
#     function); -tags gives each run's and each group's total as the
#     sources' reports do;
#   - proff report -s label:run of the file: each run's total;
#   - proff diff --groups-by group --replicate run F.pb.gz prints what
#     proff diff A1 A2 A3 -- B1 B2 B3 prints (text, --json, --children,
#     other keys and tests), and --replicate run alone on two such files;
#   - one input with -o equals `convert IN OUT`;
#   - bad input: usage errors, inputs of different events, formats without
#     labels, an input given twice or with its own run label, a missing
#     input (no output left), the diff's label errors.
source "$(dirname "$0")/../lib.sh"

case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
"$PROFF" record -q -o "$TMP/probe.data" true >/dev/null 2>&1 || { skip "convert groups (recording does not work here)"; finish; }
export PROFF_CONFIG=/dev/null
W=$TMP/w; mkdir -p "$W"; cd "$W" || exit 1
cc -O1 -g -fno-omit-frame-pointer -o planted "$ROOT/tests/data/stats/planted.c" || { not_ok "build planted.c"; finish; }
# B: hot_b 50 % heavier; a few hundred samples a run
"$PROFF" record -q -r 3 -c 200000 -g -o a.data ./planted 12000000 100 >/dev/null 2>&1
"$PROFF" record -q -r 3 -c 200000 -g -o b.data ./planted 12000000 150 >/dev/null 2>&1
"$PROFF" record -q -e task-clock -c 200000 -o t.data ./planted 3000000 100 >/dev/null 2>&1
[ -s a.data.3 ] && [ -s b.data.3 ] && [ -s t.data ] || { not_ok "record the runs"; finish; }
A="a.data.1 a.data.2 a.data.3"; B="b.data.1 b.data.2 b.data.3"

"$PROFF" convert $A -- $B -o all.pb.gz 2>conv.err && [ -s all.pb.gz ] && ok "convert A1 A2 A3 -- B1 B2 B3 -o all.pb.gz" ||
	{ not_ok "convert A1 A2 A3 -- B1 B2 B3 -o all.pb.gz"; sed 's/^/#   /' conv.err; }

# ---- go tool pprof, the oracle ------------------------------------------------------------
if command -v go >/dev/null; then
	export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local HOME=${HOME:-$TMP}
	pp() { go tool pprof -symbolize=none "$@" 2>"$TMP/pprof.err"; }
	pp -raw all.pb.gz > raw.txt || not_ok "go tool pprof -raw"
	# every sample (a values line) has one line with its string labels, holding group and run
	python3 - raw.txt > pairs.txt <<'PY' || not_ok "-raw: a sample without both labels"
import re, sys
lines = open(sys.argv[1]).read().split('\n')
i = lines.index(next(l for l in lines if l.startswith('Samples:'))) + 2
pairs, nsamples, bad = set(), 0, 0
while i < len(lines) and not lines[i].startswith('Locations'):
    if re.match(r'^ +[0-9]+ +[0-9]+: ', lines[i]):
        nsamples += 1
        labels = ' '.join(l for l in lines[i + 1:i + 3] if not re.match(r'^ +[0-9]+ +[0-9]+: ', l))
        g = re.search(r'group:\[([^]]*)\]', labels)
        r = re.search(r'run:\[([^]]*)\]', labels)
        if not g or not r:
            bad += 1
        else:
            pairs.add((r.group(1), g.group(1)))
    i += 1
for p in sorted(pairs):
    print(p[0], p[1])
sys.exit(1 if bad or not nsamples else 0)
PY
	printf '%s 0\n' $A > want.txt; printf '%s 1\n' $B >> want.txt
	check_same "go tool pprof -raw: every sample labelled, the six (run, group) pairs" want.txt pairs.txt
	# each run alone: -tagfocus run=^X$ equals proff report of X
	for r in $A $B; do
		re="^$(echo "$r" | sed 's/\./\\./g')\$"
		pp -top -nodecount=0 -nodefraction=0 -unit=ns -tagfocus="run=$re" all.pb.gz > top.txt
		"$PROFF" report -i "$r" -s sym -g none --json > src.json
		if python3 "$ROOT/tests/tools/pprof_cmp.py" top top.txt src.json > cmp.out; then
			ok "-tagfocus run=$r -top equals proff report -i $r ($(tail -1 cmp.out))"
		else
			not_ok "-tagfocus run=$r -top against proff report -i $r"; sed 's/^/#   /' cmp.out | head
		fi
	done
	# -tags: each run's and each group's total, as the sources' reports give them
	pp -tags -unit=ns all.pb.gz > tags.txt
	for r in $A $B; do "$PROFF" report -i "$r" --json | jq -r --arg r "$r" '"\($r) \(.events[0].total_period)"'; done > want.txt
	awk '{ s[$1 ~ /^a/ ? 0 : 1] += $2 } END { print "0", s[0]; print "1", s[1] }' want.txt >> want.txt
	python3 - tags.txt > got.txt <<'PY'
import re, sys
key = None
for l in open(sys.argv[1]):
    m = re.match(r'^ ?(\S+): Total', l)
    if m:
        key = m.group(1)
        continue
    m = re.match(r'^\s+([0-9.]+)ns \(\s*[0-9.]+%\): (.*)$', l)
    if m and key in ('run', 'group'):
        print(m.group(2).strip(), int(float(m.group(1))))
PY
	check_same "go tool pprof -tags: each run's and each group's total" <(sort want.txt) <(sort got.txt)
else
	not_ok "go is not installed (scripts/setup-deps.sh installs golang-go)"
fi

# ---- proff reads it back ------------------------------------------------------------------
for r in $A $B; do "$PROFF" report -i "$r" --json | jq -r --arg r "$r" '"\($r) \(.events[0].total_period)"'; done | sort > want.txt
"$PROFF" report -i all.pb.gz -s label:run --no-children -g none --json | jq -r '.events[0].rows[] | "\(.label) \(.self_period)"' | sort > got.txt
check_same "proff report -s label:run: each run's total" want.txt got.txt

split="--groups-by group --replicate run all.pb.gz"
for opts in "" "--json" "--children --metric absolute" "-s sym --test mwu" "--power -s comm,dso,sym"; do
	"$PROFF" diff $opts $A -- $B > d1.txt 2>&1; r1=$?
	"$PROFF" diff $opts $split > d2.txt 2>&1; r2=$?
	if [ "$r1" = 0 ] && [ "$r2" = 0 ] && grep -q 'hot_b' d1.txt; then
		check_same "diff ${opts:-(defaults)}: the labelled file split by group and run = the files" d1.txt d2.txt
	else
		not_ok "diff ${opts:-(defaults)} (exit $r1, $r2)"; head -3 d1.txt d2.txt | sed 's/^/#   /'
	fi
done
# files as the groups, each split into its runs
"$PROFF" convert $A -o a.pb.gz && "$PROFF" convert $B -o b.pb.gz
"$PROFF" diff $A -- $B > d1.txt 2>&1
"$PROFF" diff --replicate run a.pb.gz -- b.pb.gz > d2.txt 2>&1
check_same "diff --replicate run A.pb.gz -- B.pb.gz = the files" d1.txt d2.txt
"$PROFF" report -i a.pb.gz -s label:group 2>&1 | grep -q '\[none\]' && ok "no '--': no group label" ||
	not_ok "no '--': no group label"

# one input with -o: the same file as IN OUT
"$PROFF" convert a.data.1 -o one.pb && "$PROFF" convert a.data.1 two.pb && cmp -s one.pb two.pb &&
	ok "convert IN -o OUT = convert IN OUT" || not_ok "convert IN -o OUT = convert IN OUT"

# ---- bad input: exit status, one line, no output file ---------------------------------------
bad() {   # NAME CODE RE CMD ARGS...
	local name=$1 code=$2 re=$3; shift 3
	rm -f out.pb.gz
	"$PROFF" "$@" >b.out 2>b.err; local rc=$?
	if [ "$rc" = "$code" ] && [ ! -s b.out ] && [ ! -e out.pb.gz ] && grep -qE -e "$re" b.err; then
		ok "bad input: $name"
	else
		not_ok "bad input: $name (exit $rc, expected $code)"; head -5 b.err b.out | sed 's/^/#   /'
	fi
}
bad "'--' without -o" 129 "go into the file given with -o" convert $A -- $B out.pb.gz
bad "three words without -o" 129 "3 inputs need -o OUT" convert a.data.1 a.data.2 out.pb.gz
bad "'--' first" 129 "convert: '--' before any file" convert -- $A -o out.pb.gz
bad "empty group" 129 "convert: '-- --': an empty group" convert $A -- -- $B -o out.pb.gz
bad "different events" 1 "t.data: events \(task-clock\) differ from those of a.data.1 \(cpu-clock\)" convert $A -- t.data -o out.pb.gz
bad "folded output" 129 "folded stacks cannot carry labels" convert $A -o out.folded
bad "perf.data output" 129 "perf.data cannot carry labels" convert $A -- $B -o out.data
bad "an input twice" 129 "a.data.1 is given twice" convert a.data.1 a.data.1 -o out.pb.gz
bad "an input with its own run label" 1 "all.pb.gz: the profile has a label 'run' of its own" convert all.pb.gz a.data.1 -o out.pb.gz
bad "a missing input" 1 "nonexistent.data" convert $A -- nonexistent.data -o out.pb.gz
bad "diff --groups-by with '--'" 129 "--groups-by group makes the groups" diff --groups-by group all.pb.gz -- all.pb.gz
bad "diff --groups-by of a perf.data" 255 "a.data.1: no label 'group'" diff --groups-by group a.data.1
bad "diff --replicate: one group" 129 "the runs make one group" diff --replicate run a.pb.gz
bad "diff --replicate without a file" 129 "give one" diff --replicate run
finish
