#!/bin/bash
# tests/cli/fleet.sh — proff push, report --store and diff --store (docs/fleet.md):
# the same profiles pushed to a local store, to one ClickHouse server and to
# two shards behind Distributed tables give report and diff equal to those of
# the files read directly; a simulated fleet of 200 hosts per build with a
# planted 10 % change; faults (a push cut short, a server stopped, a shard
# down, a profile pushed twice); hostile labels and selectors (no SQL
# injection). The servers are plain processes on loopback ports under $TMP,
# stopped by pid at the end, also on failure.
source "$(dirname "$0")/../lib.sh"

case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
export PROFF_CONFIG=/dev/null
unset PROFF_STORE PROFF_CLICKHOUSE_USER PROFF_CLICKHOUSE_PASSWORD
"$PROFF" record -q -o "$TMP/probe.data" true >/dev/null 2>&1 || { skip "fleet (recording does not work here)"; finish; }
W=$TMP/w; mkdir -p "$W"; cd "$W" || exit 1
cc -O1 -g -fno-omit-frame-pointer -o planted "$ROOT/tests/data/stats/planted.c" || { not_ok "build planted.c"; finish; }
# build A and build B (hot_b 10 % heavier), three hosts each.
"$PROFF" record -q -r 3 -c 200000 -g -o a.data ./planted 20000000 100 >/dev/null 2>&1
"$PROFF" record -q -r 3 -c 200000 -g -o b.data ./planted 20000000 110 >/dev/null 2>&1
# a stripped program: its samples and callers are unresolved addresses of
# its own file, a sample's own row at its map-relative address and a
# callchain entry's at its absolute one (as perf shows them): a store keeps
# both addresses of a frame
cc -O1 -fno-omit-frame-pointer -o stripped "$ROOT/tests/data/stats/planted.c" && strip stripped &&
"$PROFF" record -q -c 200000 -g -o s.data ./stripped 4000000 100 >/dev/null 2>&1 &&
"$PROFF" record -q -c 200000 -g -o s2raw.data ./stripped 4000000 100 >/dev/null 2>&1 &&
# the second's samples have both kinds of unresolved frame in some stacks:
# five of them get an outermost caller in no map (a kernel sample's caller
# at 0 has none either, but not in every recording)
python3 "$ROOT/tests/tools/mknomap.py" s2raw.data s2.data || not_ok "record a stripped program"
# three more, pushed only by the fault and hostile-label checks
"$PROFF" record -q -r 3 -c 200000 -g -o x.data ./planted 4000000 100 >/dev/null 2>&1
A="a.data.1 a.data.2 a.data.3"; B="b.data.1 b.data.2 b.data.3"

# same NAME EXPECTED ACTUAL: byte equality
same() { check_same "$@"; }

# push every run with its build's label (one push per build); a run is named by its id
push_all() {
	local url=$1
	"$PROFF" push -q --store "$url" --label build=A $A && "$PROFF" push -q --store "$url" --label build=B $B
}
IDS=""
for f in $A $B; do
	id=$("$PROFF" push --store "$W/ids" "$f" | cut -d' ' -f1)
	IDS="$IDS -e s/$id/${f//./\\.}/"
done
ID1=$("$PROFF" push --store "$W/ids" a.data.1 | cut -d' ' -f1)
# each build's files in the order of their ids: a store's runs are in id
# order, and the group diff of the files in that order sums the runs' means
# in the same order, to the last bit
by_id() { local f; for f in "$@"; do echo "$("$PROFF" push --store "$W/ids" "$f" | cut -d' ' -f1) $f"; done | sort | cut -d' ' -f2 | tr '\n' ' '; }
A_ID=$(by_id $A); B_ID=$(by_id $B)

# the direct answers: a report of one file, the group diff of the files
"$PROFF" report -i a.data.1 -g none >direct.report
"$PROFF" report -i a.data.1 -g none --no-children -s sym,srcline >direct.report2
"$PROFF" diff --children $A_ID -- $B_ID >direct.diff
"$PROFF" diff --metric absolute -s sym $A_ID -- $B_ID >direct.diff2
for f in $A; do "$PROFF" report -i "$f" --json -g none; done >direct.jsons
# flame graphs: build A's files' summed (a report over a store draws its
# profiles' paths together), the group diff's
for f in $A; do "$PROFF" report -i "$f" --flamegraph-srcline --flamegraph "$f.folded"; done
for f in $A; do cat "$f.folded"; done | awk '{c = $NF; $NF = ""; sub(/ $/, ""); s[$0] += c} END {for (k in s) print k, s[k]}' | sort >direct.fg.folded
"$PROFF" diff $A_ID -- $B_ID --flamegraph direct.fgd.folded

# a store names a diff's runs by their ids, in id order: the lines that list
# runs or their values are compared as sets of words. The level of a caller
# row that has no map ([unknown], an address) is the level of the sample that
# made the row first, as perf shows it (docs/compat/report.md); a store keeps
# no order of the files' samples, so that one letter is not compared. Nor is
# the level of a diff's unresolved row by symbol alone (an address where the
# symbol is): a store's row takes it from the first profile in its order
# that has the row, of either side (docs/fleet.md), the file's diff from
# each side's own (a startup sample in the kernel with callers in no map
# made one side's [k] and the other's [.] in a recording of make check)
sort_runs() { python3 -c '
import re, sys
for l in sys.stdin:
    if re.match(r"#  \[[0-9]\] ([0-9]+ runs|[0-9.]+ [0-9.]+)", l):
        l = " ".join(sorted(l.split())) + "\n"
    l = re.sub(r"(\[unknown\] +)\[[.k]\] ((0x)?[0-9a-f]+)( |$)", r"\1[?] \2\4", l)
    l = re.sub(r"(\s)\[[.k]\] ((0x)?[0-9a-f]{16,18})$", r"\1[?] \2", l)
    sys.stdout.write(l)'; }

# compare STORE_URL NAME: the store's answers against the direct ones
compare() {
	local url=$1 name=$2
	"$PROFF" report --store "$url" --where id=$ID1 --where build=A >r1 2>r1.err
	same "$name: report of one profile = the file's report" direct.report r1
	"$PROFF" report --store "$url" --where id=$ID1 --where build=A --no-children -s sym,srcline >r2 2>r2.err
	same "$name: report --no-children -s sym,srcline = the file's" direct.report2 r2
	"$PROFF" diff --store "$url" --children build=A -- build=B 2>d1.err | sed $IDS | sort_runs >d1
	sort_runs <direct.diff >direct.diff.s
	same "$name: diff --children build=A -- build=B = the files' group diff" direct.diff.s d1
	"$PROFF" diff --store "$url" --metric absolute -s sym build=A -- build=B 2>d2.err | sed $IDS | sort_runs >d2
	sort_runs <direct.diff2 >direct.diff2.s
	same "$name: diff --metric absolute -s sym = the files' group diff" direct.diff2.s d2
	# flame graphs of a store: the same call paths as the files'; the page
	# the same from every store (its runs named by their ids)
	"$PROFF" report --store "$url" --where build=A --flamegraph-srcline --flamegraph fg_r.folded 2>fg.err
	sort fg_r.folded >fg_r.s
	same "$name: report --flamegraph = the files' flame graphs summed" direct.fg.folded fg_r.s
	"$PROFF" diff --store "$url" build=A -- build=B --flamegraph fg_d.folded 2>fg.err
	same "$name: diff --flamegraph = the files' group diff's" direct.fgd.folded fg_d.folded
	"$PROFF" diff --store "$url" build=A -- build=B --flamegraph fg_d.html 2>fg.err
	if [ "$name" = local ]; then
		cp fg_d.html local.fg.html
		grep -q '"file":"'"${ID1}"'"' fg_d.html && ok "$name: diff --flamegraph page names its runs by id" || not_ok "$name: diff --flamegraph page names its runs by id"
	else
		same "$name: diff --flamegraph page = the local store's" local.fg.html fg_d.html
	fi
	# a report over three profiles: every row's Self and Children the sums of the files' rows
	"$PROFF" report --store "$url" --where build=A --json >r3.json 2>r3.err
	python3 - direct.jsons r3.json <<'EOF' >sum.out 2>&1 && ok "$name: report over three profiles = the sums of the files' rows" || { not_ok "$name: report over three profiles = the sums of the files' rows"; head -5 sum.out | sed 's/^/#   /'; }
import json, sys
dec = json.JSONDecoder()
text = open(sys.argv[1]).read()
want, tot, i = {}, 0, 0
while i < len(text):
    if text[i].isspace():
        i += 1
        continue
    doc, i = dec.raw_decode(text, i)
    ev = doc["events"][0]
    tot += ev["total_period"]
    for r in ev["rows"]:
        k = (r["comm"], r["dso"], r["sym"])
        s = want.setdefault(k, [0, 0, 0])
        s[0] += r["self_period"]; s[1] += r["children_period"]; s[2] += r["samples"]
got = json.load(open(sys.argv[2]))["events"][0]
assert got["total_period"] == tot, (got["total_period"], tot)
have = {(r["comm"], r["dso"], r["sym"]): [r["self_period"], r["children_period"], r["samples"]] for r in got["rows"]}
bad = [(k, have.get(k), want.get(k)) for k in sorted(set(have) | set(want)) if have.get(k) != want.get(k)]
assert not bad, bad[:4]
print(len(have), "rows")
EOF
}

# compare_stripped STORE_URL NAME: the stripped program's rows (unresolved
# addresses) from the store as from the file, Self and Children
compare_stripped() {
	local url=$1 name=$2 m k
	"$PROFF" push -q --store "$url" --label build=S s.data && "$PROFF" push -q --store "$url" --label build=S2 s2.data ||
		not_ok "$name: push of the stripped program's profiles"
	for m in --children --no-children; do
		for k in comm,dso,sym comm,dso,sym,srcline; do
			# (sort_runs: a mapless caller's level is its first sample's, below)
			"$PROFF" report -i s.data $m -s $k -g none 2>&1 | sort_runs >stripped.direct
			"$PROFF" report --store "$url" --where build=S $m -s $k 2>&1 | sort_runs >stripped.store
			same "$name: a stripped program's unresolved rows ($m -s $k) = the file's" stripped.direct stripped.store
		done
		# a diff by symbol alone: every dso's unresolved frames are one
		# row, which shows the level and lowest address of its samples'
		# own frames without Children (callers without a map, at 0, [k]
		# from a kernel sample, make no row there), of all with Children
		for k in sym dso,sym; do
			"$PROFF" diff $m --metric absolute -s $k s.data -- s2.data 2>&1 | sort_runs >stripped.direct
			"$PROFF" diff --store "$url" $m --metric absolute -s $k build=S -- build=S2 2>&1 |
				sed -e "s/$S_ID/s.data/" -e "s/$S2_ID/s2.data/" | sort_runs >stripped.store
			same "$name: a stripped program's diff ($m --metric absolute -s $k) = the file's" stripped.direct stripped.store
		done
	done
}
# by symbol alone, every unresolved frame is one row, and its Children
# count a sample once although its stack has frames in a map and one in
# none: the sum of the periods of perf script's samples with an unknown frame
if command -v perf >/dev/null; then
	want=$(perf script -i s2.data -F period,ip,sym 2>/dev/null | awk 'BEGIN { RS = "" } /\[unknown\]/ { s += $1 } END { printf "%.3f", s / 1e6 }')
	have=$("$PROFF" diff --children --metric absolute -s sym s2.data -- s2.data 2>&1 | awk '/^ .*\] (0x[0-9a-f]+|0+)$/ { print $1 }')
	[ -n "$want" ] && [ "$have" = "$want" ] && ok "a diff's unresolved row counts a sample with mapped and unmapped frames once (Children $have ms)" ||
		not_ok "a diff's unresolved row counts a sample with mapped and unmapped frames once: $have ms, perf script's samples $want ms"
else
	skip "a diff's unresolved row's Children against perf script (no perf)"
fi
S_ID=$("$PROFF" push --store "$W/ids" s.data | cut -d' ' -f1); S2_ID=$("$PROFF" push --store "$W/ids" s2.data | cut -d' ' -f1)
grep -q '\[\.\] 0x00000000' <("$PROFF" report -i s.data -g none) && grep -q '\[\.\] 0x00007f\|\[\.\] 0x000055\|\[\.\] 0x000056' <("$PROFF" report -i s.data -g none) \
	&& ok "the stripped program's report has rows at map-relative and at absolute addresses" \
	|| not_ok "the stripped program's report has rows at map-relative and at absolute addresses"

# --- the local store ----------------------------------------------------------------
push_all "$W/local" && ok "local: push of six profiles" || not_ok "local: push of six profiles"
compare "$W/local" local
"$PROFF" push --store "$W/local" --label build=A a.data.1 >again.out 2>&1
grep -q "already stored" again.out && [ "$(ls "$W/local/profiles" | wc -l)" = 6 ] && ok "local: a second push of a profile stores nothing" || not_ok "local: a second push of a profile stores nothing"
"$PROFF" report --store "$W/local" --where build=A --json >again.json
cmp -s again.json r3.json && ok "local: a profile pushed twice is counted once" || not_ok "local: a profile pushed twice is counted once"
compare_stripped "$W/local" local

# --- bad input --------------------------------------------------------------------------
bad() {
	local name=$1 code=$2 re=$3; shift 3
	"$PROFF" "$@" >b.out 2>b.err; local rc=$?
	if [ "$rc" = "$code" ] && [ ! -s b.out ] && grep -qE -e "$re" b.err && [ "$(grep -c . b.err)" -le 2 ]; then
		ok "bad input: $name"
	else
		not_ok "bad input: $name (exit $rc, expected $code)"; head -3 b.err b.out | sed 's/^/#   /'
	fi
}
bad "--where without --store" 129 "give --store" report --where build=A
bad "a selector without operator" 129 "no operator" report --store "$W/local" --where build
bad "a bad time" 129 "is no time" report --store "$W/local" --where "time>=yesterday"
bad "< on a label" 129 "compare times only" report --store "$W/local" --where "build<2"
bad "a bad regex" 129 "bad regular expression" report --store "$W/local" --where "host=~(("
bad "no such store" 1 "no proff store here" report --store "$W/nowhere" --where build=A
bad "nothing matches" 1 "no stored profile matches" report --store "$W/local" --where build=Z
bad "one selector for a diff" 129 "two selectors" diff --store "$W/local" build=A
bad "a selector matching nothing" 1 "matches selector 2" diff --store "$W/local" build=A -- build=Z
bad "a filter a store does not keep" 129 "--comms is not available" report --store "$W/local" --where build=A --comms planted
bad "a differential flame graph of three selectors" 129 "compares two selectors, not 3" diff --store "$W/local" --flamegraph x.html build=A -- build=B -- build=A
bad "a flame graph of a selector matching nothing" 1 "matches selector 2" diff --store "$W/local" --flamegraph x.html build=A -- build=Z
bad "a flame graph file of no known kind" 129 "flamegraph" report --store "$W/local" --where build=A --flamegraph x.png
bad "sort key a store does not keep" 129 "a store keeps comm, dso, sym, srcline" report --store "$W/local" --where build=A -s pid
bad "credentials in the URL" 129 "credentials do not go in the URL" push --store clickhouse://u:secret@127.0.0.1:1/db a.data.1
grep -q secret b.err && not_ok "a password given in a URL is never printed" || ok "a password given in a URL is never printed"
bad "label with a control character" 129 "control character" push --store "$W/local" --label "x=a$(printf '\001')b" a.data.1
# (a value of 1 MB cannot pass through argv: 128 KiB per argument; test_store takes one through the API)
head -c 100000 /dev/zero | tr '\0' x >big.txt
bad "a 100 KB label value" 129 "longer than the limit" push --store "$W/local" --label "big=$(cat big.txt)" a.data.1
bad "a reserved label key" 129 "reserved" push --store "$W/local" --label time2=x --label id=y a.data.1
printf 'proff-profile\t4\nid\t0123\n' >"$W/local/profiles/0123456789abcdef0123456789abcdef.prof"
bad "a damaged profile file" 1 "0123456789abcdef0123456789abcdef.prof: line 2: an id is 32 hex digits" report --store "$W/local" --where build=A
printf 'proff-profile\t2\nid\t0123456789abcdef0123456789abcdef\n' >"$W/local/profiles/0123456789abcdef0123456789abcdef.prof"
bad "a profile stored by an older proff (version 2)" 1 "0123456789abcdef0123456789abcdef.prof: line 1: a profile stored by an older proff .*push the profiles again" report --store "$W/local" --where build=A
printf 'proff-profile\t3\nid\t0123456789abcdef0123456789abcdef\n' >"$W/local/profiles/0123456789abcdef0123456789abcdef.prof"
bad "a profile stored by an older proff (version 3)" 1 "0123456789abcdef0123456789abcdef.prof: line 1: a profile stored by an older proff .version 3.*push the profiles again" report --store "$W/local" --where build=A
rm -f "$W/local/profiles/0123456789abcdef0123456789abcdef.prof"
mkdir -p "$W/old/profiles"; printf 'proff store 1\n' >"$W/old/PROFF-STORE"
bad "a store of an older proff" 1 "an older proff .*push the profiles again into a new store" report --store "$W/old" --where build=A

# --- hostile labels (local; the ClickHouse part below) ------------------------------------
EVIL="x'; DROP TABLE proff_samples; --"
"$PROFF" push -q --store "$W/hostile" --label "evil=$EVIL" --label 'path=C:\dir\"q"' b.data.1 &&
"$PROFF" push -q --store "$W/hostile" --label evil=plain --label 'path=plain' b.data.2 || not_ok "hostile labels pushed"
"$PROFF" report --store "$W/hostile" --where "evil=$EVIL" --json >h1.json && grep -q '"samples"' h1.json &&
"$PROFF" report --store "$W/hostile" --where 'path=C:\dir\"q"' --json >h2.json && cmp -s h1.json h2.json &&
"$PROFF" report -i b.data.1 -g none --json | sed 1d >h0.json && sed 1d h1.json | cmp -s - h0.json \
	&& ok "local: quotes and backslashes stored and matched literally (one profile)" || not_ok "local: quotes and backslashes stored and matched literally (one profile)"

# --- ClickHouse -------------------------------------------------------------------------
if ! command -v clickhouse-server >/dev/null; then
	skip "ClickHouse (clickhouse-server is not installed: scripts/setup-deps.sh)"
	finish
fi
source "$ROOT/tests/tools/clickhouse.sh"
trap 'ch_stop_all; rm -rf "$TMP"' EXIT
CH_SHARDS="s1 s2"
ch_plan
ch_spawn "$TMP/ch" one; ch_spawn "$TMP/ch" s1; ch_spawn "$TMP/ch" s2
ch_wait one && ch_wait s1 && ch_wait s2 || { not_ok "ClickHouse servers start"; finish; }
ok "ClickHouse: three servers started (one alone, two shards)"
ONE=clickhouse://127.0.0.1:$CH_HTTP_one/fleet
CL=clickhouse://127.0.0.1:$CH_HTTP_s1/fleet
ch_sql one "CREATE DATABASE fleet" && ch_sql s1 "CREATE DATABASE fleet" && ch_sql s2 "CREATE DATABASE fleet"
"$PROFF" push --store "clickhouse://127.0.0.1:$CH_HTTP_s2/fleet" --init local &&
"$PROFF" push --store "$CL" --init proff_fleet && ok "ClickHouse: --init local on a shard, --init CLUSTER on the first" || not_ok "ClickHouse: --init"

push_all "$ONE" && ok "one server: push of six profiles" || not_ok "one server: push of six profiles"
# the tables of an older proff (samples, no key rows): refused, for a push and a query
ch_sql one "CREATE DATABASE old" && ch_sql one "CREATE TABLE old.proff_samples (day Date, id String) ENGINE = MergeTree PARTITION BY day ORDER BY id"
bad "ClickHouse: the tables of an older proff (query)" 1 "older proff's .*push the profiles again into a new database" report --store "clickhouse://127.0.0.1:$CH_HTTP_one/old" --where build=A
"$PROFF" push -q --store "clickhouse://127.0.0.1:$CH_HTTP_one/old" a.data.1 >old.out 2>old.err; rc=$?
[ $rc = 1 ] && grep -q "older proff's" old.err && [ "$(ch_sql one "SELECT count() FROM system.tables WHERE database = 'old'")" = 1 ] \
	&& ok "ClickHouse: the tables of an older proff (push): refused, nothing added" || { not_ok "ClickHouse: the tables of an older proff (push) (exit $rc)"; head -3 old.err | sed 's/^/#   /'; }
compare "$ONE" "one server"
compare_stripped "$ONE" "one server"
# stacks of a proff that kept one address an unresolved frame (no ip column): refused
ch_sql one "CREATE DATABASE old2" && ch_sql one "CREATE TABLE old2.proff_samples (day Date, id String) ENGINE = MergeTree PARTITION BY day ORDER BY id" &&
ch_sql one "CREATE TABLE old2.proff_keyrows (day Date, id String) ENGINE = MergeTree PARTITION BY day ORDER BY id" &&
ch_sql one "CREATE TABLE old2.proff_stacks (stack UInt64, addr Array(UInt64)) ENGINE = ReplacingMergeTree ORDER BY stack"
bad "ClickHouse: stacks of an older proff (no ip column)" 1 "older proff's .proff_stacks without ip.*push the profiles again into a new database" report --store "clickhouse://127.0.0.1:$CH_HTTP_one/old2" --where build=A
# key rows of a proff that kept one level a row (no self_level column): refused
ch_sql one "CREATE DATABASE old3" && ch_sql one "CREATE TABLE old3.proff_samples (day Date, id String) ENGINE = MergeTree PARTITION BY day ORDER BY id" &&
ch_sql one "CREATE TABLE old3.proff_keyrows (day Date, id String, level String) ENGINE = MergeTree PARTITION BY day ORDER BY id" &&
ch_sql one "CREATE TABLE old3.proff_stacks (stack UInt64, addr Array(UInt64), ip Array(UInt64)) ENGINE = ReplacingMergeTree ORDER BY stack"
bad "ClickHouse: key rows of an older proff (no self_level column)" 1 "older proff's .proff_keyrows without self_level.*push the profiles again into a new database" report --store "clickhouse://127.0.0.1:$CH_HTTP_one/old3" --where build=A
push_all "$CL" && ok "two shards: push of six profiles" || not_ok "two shards: push of six profiles"
compare "$CL" "two shards"
compare_stripped "$CL" "two shards"
n1=$(ch_sql s1 "SELECT count() FROM fleet.proff_samples_local"); n2=$(ch_sql s2 "SELECT count() FROM fleet.proff_samples_local")
[ "${n1:-0}" -gt 0 ] && [ "${n2:-0}" -gt 0 ] && ok "two shards: each holds part of the samples ($n1 + $n2 rows)" || not_ok "two shards: each holds part of the samples ($n1 + $n2 rows)"

# a profile pushed twice: counted once
"$PROFF" push --store "$ONE" --label build=A a.data.1 2>&1 | grep -q "already stored" && ok "one server: a second push stores nothing" || not_ok "one server: a second push stores nothing"
"$PROFF" report --store "$ONE" --where build=A --json >again.json
cmp -s again.json <(sed '1s/"file":"[^"]*"/"file":"X"/' r3.json | sed "1s|\"file\":\"X\"|\"file\":\"$ONE\"|") && ok "one server: a profile pushed twice is counted once" || not_ok "one server: a profile pushed twice is counted once"

# a push cut short after its samples (the connection lost): nothing visible, the retry completes
"$PROFF" report --store "$ONE" --where build=A --json >before.json
PROFF_STORE_STOP_AFTER=samples "$PROFF" push --store "$ONE" --label build=A --label host=h9 x.data.1 >cut.out 2>cut.err; rc=$?
[ $rc = 1 ] && grep -q "not stored (nothing of it is visible" cut.err && grep -q "push it again: x.data.1" cut.err \
	&& ok "a push cut short: exit 1, says what to push again" || { not_ok "a push cut short: exit 1, says what to push again (exit $rc)"; head -3 cut.err | sed 's/^/#   /'; }
"$PROFF" report --store "$ONE" --where build=A --json >after.json
cmp -s before.json after.json && ok "a push cut short: nothing half stored" || not_ok "a push cut short: nothing half stored"
# (sort_runs: a mapless caller's level is its first sample's, above)
"$PROFF" push -q --store "$ONE" --label build=A --label host=h9 x.data.1 2>retry.err &&
	"$PROFF" report --store "$ONE" --where host=h9 -g none 2>>retry.err | sort_runs >h9.txt &&
	"$PROFF" report -i x.data.1 -g none | sort_runs >b3.txt && cmp -s b3.txt h9.txt && ok "a push cut short: the retry stores it whole, once" ||
	{ not_ok "a push cut short: the retry stores it whole, once"; head -3 retry.err | sed 's/^/#   /'; diff b3.txt h9.txt | head -6 | sed 's/^/#   /'; }

# the server stopped: a clear error; started again on its data, the push completes
ch_stop one
"$PROFF" push --store "$ONE" --label build=C x.data.2 >down.out 2>down.err; rc=$?
[ $rc = 1 ] && grep -q "cannot reach the server" down.err && grep -q "push it again: x.data.2" down.err && ok "server stopped: push fails clearly" || not_ok "server stopped: push fails clearly (exit $rc)"
"$PROFF" report --store "$ONE" --where build=A >down.out 2>down.err; rc=$?
[ $rc = 1 ] && [ ! -s down.out ] && grep -q "cannot reach the server" down.err && ok "server stopped: a query fails clearly, prints nothing" || not_ok "server stopped: a query fails clearly (exit $rc)"
ch_start "$TMP/ch" one && "$PROFF" push -q --store "$ONE" --label build=C x.data.2 2>restart.err &&
	"$PROFF" report --store "$ONE" --where build=C -g none 2>>restart.err | sort_runs >c.txt &&
	"$PROFF" report -i x.data.2 -g none | sort_runs >a2.txt && cmp -s a2.txt c.txt \
	&& ok "server restarted: the push completes" ||
	{ not_ok "server restarted: the push completes"; head -3 restart.err | sed 's/^/#   /'; diff a2.txt c.txt 2>&1 | head -6 | sed 's/^/#   /'; }

# one shard down: a clear error, no answer from half the data
ch_stop s2
"$PROFF" diff --store "$CL" build=A -- build=B >sd.out 2>sd.err; rc=$?
[ $rc = 1 ] && [ ! -s sd.out ] && grep -qE "the server answered|cannot reach" sd.err && ok "a shard down: the query fails clearly, prints nothing" || { not_ok "a shard down: the query fails clearly (exit $rc)"; head -3 sd.err | sed 's/^/#   /'; }
ch_start "$TMP/ch" s2 && "$PROFF" diff --store "$CL" --children build=A -- build=B 2>back.err | sed $IDS | sort_runs >d1 && cmp -s direct.diff.s d1 \
	&& ok "the shard back: the same answer as before" || { not_ok "the shard back: the same answer as before"; head -3 back.err | sed 's/^/#   /'; diff direct.diff.s d1 | head -10 | sed 's/^/#   /'; }

# hostile labels and selectors on ClickHouse: stored and matched literally, no injection
HOS=clickhouse://127.0.0.1:$CH_HTTP_one/hostile
ch_sql one "CREATE DATABASE hostile"
"$PROFF" push -q --store "$HOS" --label "evil=$EVIL" --label 'path=C:\dir\"q"' b.data.1 &&
"$PROFF" push -q --store "$HOS" --label evil=plain --label path=plain b.data.2 || not_ok "ClickHouse: hostile labels pushed"
"$PROFF" report --store "$HOS" --where "evil=$EVIL" --json | sed 1d >ch1.json && sed 1d h1.json | cmp -s - ch1.json &&
"$PROFF" report --store "$HOS" --where 'path=C:\dir\"q"' --json | sed 1d | cmp -s - ch1.json \
	&& ok "ClickHouse: quotes, backslashes and '; DROP TABLE stored and matched literally" || not_ok "ClickHouse: quotes, backslashes and '; DROP TABLE stored and matched literally"
"$PROFF" report --store "$HOS" --where "evil=plain' OR '1'='1" >inj.out 2>inj.err; rc=$?
[ $rc = 1 ] && grep -q "no stored profile matches" inj.err && ok "ClickHouse: an injected OR matches nothing" || not_ok "ClickHouse: an injected OR matches nothing (exit $rc)"
"$PROFF" report --store "$HOS" --where "evil=~DROP TABLE" --json | sed 1d | cmp -s - ch1.json && ok "ClickHouse: a regex matched inside a hostile value" || not_ok "ClickHouse: a regex matched inside a hostile value"
"$PROFF" report --store "$HOS" --where "path=~x' OR 1=1 OR 'y" >inj.out 2>inj.err; rc=$?
[ $rc = 1 ] && grep -q "no stored profile matches" inj.err && ok "ClickHouse: an injected regex matches nothing" || not_ok "ClickHouse: an injected regex matches nothing (exit $rc)"
[ "$(ch_sql one "SELECT count() FROM system.tables WHERE database = 'hostile' AND name LIKE 'proff_%'")" = 5 ] &&
	[ "$(ch_sql one "SELECT count() FROM hostile.proff_profiles")" = 2 ] && ok "ClickHouse: every table still there, both profiles kept (no injection)" || not_ok "ClickHouse: every table still there (no injection)"

# --- a simulated fleet: 200 hosts per build, hot_b 10 % heavier in build B ---------------------------
# (statistics over many pushes: the normal build's run; the sanitizer run has checked the code paths above)
case "$PROFF" in
*asan*) skip "fleet of 400 hosts (run with the normal build only)"; ch_stop_all; finish;;
esac
"$PROFF" record -q -c 200000 -g -o src.data ./planted 60000000 100 >/dev/null 2>&1
"$PROFF" convert src.data src.folded >/dev/null 2>&1 || not_ok "convert the fleet's source recording"
mkdir -p hosts
python3 "$ROOT/tests/tools/fleet_hosts.py" src.folded hosts a 200 600 1 &&
python3 "$ROOT/tests/tools/fleet_hosts.py" src.folded hosts b 200 600 2 hot_b 1.1 || not_ok "fleet files made"
"$PROFF" push -q --store "$W/fleet" --label build=A hosts/a-*.folded && "$PROFF" push -q --store "$W/fleet" --label build=B hosts/b-*.folded &&
"$PROFF" push -q --store "$ONE" --label build=FA hosts/a-*.folded && "$PROFF" push -q --store "$ONE" --label build=FB hosts/b-*.folded \
	&& ok "fleet: 400 host profiles pushed to the local store and ClickHouse" || not_ok "fleet: 400 host profiles pushed"
"$PROFF" diff --store "$W/fleet" --metric absolute -s sym build=A -- build=B >fleet.txt 2>fleet.err
line=$(grep -E '\[\.\] hot_b$' fleet.txt)
echo "$line" | grep -qE ' \* ' && ok "fleet: hot_b's 10 % is significant across 200 hosts per build" || { not_ok "fleet: hot_b significant"; echo "#   $line"; }
# the rows whose samples never pass through hot_b did not change: none of
# them is significant (a row with samples under hot_b, an interrupt taken in
# it, did grow, and may be)
python3 - src.folded fleet.txt <<'EOF' >other.out 2>&1 && ok "fleet: no row outside hot_b's stacks is significant (absolute periods; $(tail -1 other.out))" || { not_ok "fleet: no row outside hot_b's stacks is significant"; sed 's/^/#   /' other.out | head -5; }
import re, sys
under, outside = set(), set()
for line in open(sys.argv[1]):
    stack = line.rsplit(" ", 1)[0].split(";")
    leaf = re.sub(r"_\[k\]$", "", stack[-1])
    (under if "hot_b" in stack else outside).add(leaf)
unchanged = outside - under
bad = []
for line in open(sys.argv[2]):
    m = re.search(r"\[[.k]\] (.+)$", line)
    if line.startswith(" ") and m and " * " in line and m.group(1) in unchanged:
        bad.append(m.group(1))
assert "hot_a" in unchanged and "hot_c" in unchanged, "hot_a, hot_c not in the source"
assert not bad, bad
print(len(unchanged), "rows outside hot_b's stacks")
EOF
"$PROFF" diff --store "$ONE" --metric absolute -s sym build=FA -- build=FB >fleet-ch.txt 2>&1
diff <(grep -v '^#  \[' fleet.txt) <(grep -v '^#  \[' fleet-ch.txt) >/dev/null && ok "fleet: ClickHouse's diff = the local store's" || { not_ok "fleet: ClickHouse's diff = the local store's"; diff <(grep -v '^#  \[' fleet.txt) <(grep -v '^#  \[' fleet-ch.txt) | head -5 | sed 's/^/#   /'; }
# --replicate of a label: every profile of a group in one run (no host label
# in folded files: the run "[none]"), the runs' sums made by proff from each
# profile's key rows on ClickHouse, by the local store from its files
"$PROFF" diff --store "$W/fleet" --replicate host --children build=A -- build=B >rep.txt 2>rep.err
"$PROFF" diff --store "$ONE" --replicate host --children build=FA -- build=FB >rep-ch.txt 2>&1
grep -q 'hot_b' rep.txt && diff <(grep -v '^#  \[' rep.txt) <(grep -v '^#  \[' rep-ch.txt) >/dev/null && ok "fleet: --replicate host --children: ClickHouse's diff = the local store's" || { not_ok "fleet: --replicate host --children: ClickHouse's diff = the local store's"; diff <(grep -v '^#  \[' rep.txt) <(grep -v '^#  \[' rep-ch.txt) | head -5 | sed 's/^/#   /'; }
# (at an FDR of Q, an A/A comparison, where every null hypothesis holds,
# shows a false discovery in up to Q of the runs by construction: the
# check asks for 1 %, so that it fails in at most 1 run in 100, not 5)
"$PROFF" diff --store "$W/fleet" --metric absolute --fdr 0.01 -s sym build=A 'id=~^[0-7]' -- build=A 'id=~^[89a-f]' >aa.txt 2>aa.err
n=$(grep -E '^ ' aa.txt | grep -c ' \* ')
grep -q 'hot_b' aa.txt && [ "$n" = 0 ] && ok "fleet: an A/A split of build A's hosts shows nothing significant" || { not_ok "fleet: A/A split ($n significant)"; head -3 aa.err | sed 's/^/#   /'; }
ch_stop_all
finish
