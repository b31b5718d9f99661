#!/bin/bash
# tests/oracle/pprof.sh — pprof profiles against `go tool pprof` (Debian
# golang-go, run offline), both ways:
#   - proff's pprof of a perf.data (proff convert): go tool pprof's -top
#     (flat and cum per function) and -traces (value per stack) equal
#     proff's own report of the perf.data (report --json, convert to folded);
#   - profiles written by Go's runtime/pprof (tests/data/formats/goprof.go):
#     proff report of the CPU profile equals -top; its labels (-s label:phase,
#     --label) equal -tags and -tagfocus; the heap profile's four sample
#     types (--sample-type) each equal -top -sample_index;
#   - proff's pprof of Go's profile again equals Go's -top.
# Comparisons by tests/tools/pprof_cmp.py (exact values, not percentages).
source "$(dirname "$0")/../lib.sh"

if ! command -v go >/dev/null; then
	not_ok "go is not installed (scripts/setup-deps.sh installs golang-go)"
	finish
fi
export GOCACHE="$TMP/gocache" GOPATH="$TMP/gopath" GOPROXY=off GOFLAGS=-mod=mod GOTOOLCHAIN=local HOME=${HOME:-$TMP}
CMP="python3 $ROOT/tests/tools/pprof_cmp.py"
W=$TMP/w; mkdir -p "$W"
pp() { go tool pprof -symbolize=none "$@" 2>"$TMP/pprof.err"; }

cmp_top() {   # NAME PROFILE PROFF-OPTS... -- PPROF-OPTS...
	local name=$1 prof=$2; shift 2
	local popts=() gopts=() seen=0
	for a in "$@"; do
		if [ "$a" = -- ]; then seen=1; elif [ $seen = 0 ]; then popts+=("$a"); else gopts+=("$a"); fi
	done
	pp -top -nodecount=0 -nodefraction=0 "${gopts[@]}" "$prof" > "$W/top.txt" ||
		{ not_ok "$name: go tool pprof -top"; sed 's/^/#   /' "$TMP/pprof.err" | head -5; return; }
	"$PROFF" report -i "$prof" -s sym -g none --json "${popts[@]}" > "$W/proff.json" 2>"$W/proff.err" ||
		{ not_ok "$name: proff report"; sed 's/^/#   /' "$W/proff.err" | head -5; return; }
	if $CMP top "$W/top.txt" "$W/proff.json" > "$W/cmp.out"; then
		ok "$name ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "$name"; sed 's/^/#   /' "$W/cmp.out" | head -20
	fi
}

# ---- perf.data -> pprof -------------------------------------------------------------------
if can_perf_record; then
	cc -O1 -g -fno-omit-frame-pointer -o "$W/work" "$ROOT/tests/data/formats/work.c" || not_ok "build work.c"
	perf record -q -g -e cpu-clock -c 100000 -o "$W/work.data" "$W/work" 8000000 >/dev/null 2>&1 ||
		not_ok "perf record work"
	"$PROFF" convert "$W/work.data" "$W/work.pb.gz" 2>"$W/conv.err" || { not_ok "convert perf.data to pprof"; cat "$W/conv.err"; }
	cmp_top "perf.data -> pprof: -top equals proff report (Self, Children)" "$W/work.pb.gz" -- -unit=ns
	# the source's report, not the pprof's: the same numbers
	pp -top -nodecount=0 -nodefraction=0 -unit=ns "$W/work.pb.gz" > "$W/top.txt"
	"$PROFF" report -i "$W/work.data" -s sym -g none --json > "$W/src.json"
	if $CMP top "$W/top.txt" "$W/src.json" > "$W/cmp.out"; then ok "perf.data -> pprof: -top equals proff report of the perf.data ($(tail -1 "$W/cmp.out"))"
	else not_ok "perf.data -> pprof: -top against the perf.data's report"; sed 's/^/#   /' "$W/cmp.out" | head; fi
	pp -traces -unit=ns "$W/work.pb.gz" > "$W/traces.txt"
	"$PROFF" convert "$W/work.data" "$W/work.folded"
	if $CMP traces "$W/traces.txt" "$W/work.folded" --thread-prefix > "$W/cmp.out"; then
		ok "perf.data -> pprof: -traces equals the perf.data's stacks ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "perf.data -> pprof: -traces"; sed 's/^/#   /' "$W/cmp.out" | head -20
	fi
	# pprof's header: the main binary first, its build id, the event
	pp -top "$W/work.pb.gz" | head -4 > "$W/head.txt"
	bid=$(readelf -n "$W/work" 2>/dev/null | sed -n 's/.*Build ID: //p')
	if grep -q "^File: work$" "$W/head.txt" && grep -q "^Type: cpu-clock$" "$W/head.txt" &&
		{ [ -z "$bid" ] || grep -q "^Build ID: $bid$" "$W/head.txt"; }; then
		ok "perf.data -> pprof: main binary, its build id, sample type"
	else
		not_ok "perf.data -> pprof: header"; sed 's/^/#   /' "$W/head.txt"
	fi
	# the samples' count as sample type "samples"
	pp -top -nodecount=0 -nodefraction=0 -sample_index=samples "$W/work.pb.gz" > "$W/top.txt"
	"$PROFF" report -i "$W/work.data" -s sym -g none --json > "$W/src.json"
	python3 - "$W/src.json" > "$W/src-n.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d['events'][0]['rows']:
    r['self_period'] = r['samples']
    r.pop('children_period', None)
print(json.dumps(d))
PY
	if $CMP top "$W/top.txt" "$W/src-n.json" --self-only > "$W/cmp.out"; then
		ok "perf.data -> pprof: sample type 'samples' holds the sample counts ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "perf.data -> pprof: samples"; sed 's/^/#   /' "$W/cmp.out" | head
	fi
else
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
fi

# ---- Go's runtime/pprof ---------------------------------------------------------------------
cp "$ROOT/tests/data/formats/goprof.go" "$W/"
if (cd "$W" && go build -o goprof goprof.go) 2>"$TMP/go.err" && (cd "$W" && ./goprof cpu.pprof heap.pprof); then
	cmp_top "Go CPU profile: proff report equals -top" "$W/cpu.pprof" -- -unit=ns
	cmp_top "Go CPU profile, --label phase=parse: equals -tagfocus" "$W/cpu.pprof" --label phase=parse -- -unit=ns -tagfocus=phase=parse
	for key in phase; do
		pp -tags -unit=ns "$W/cpu.pprof" > "$W/tags.txt"
		"$PROFF" report -i "$W/cpu.pprof" -s "label:$key" -g none --json > "$W/proff.json"
		if $CMP tags "$W/tags.txt" "$key" "$W/proff.json" > "$W/cmp.out"; then
			ok "Go CPU profile: -s label:$key equals -tags ($(tail -1 "$W/cmp.out"))"
		else
			not_ok "Go CPU profile: -s label:$key"; sed 's/^/#   /' "$W/cmp.out" | head
		fi
	done
	pp -tags -unit=B "$W/heap.pprof" > "$W/tags.txt"
	"$PROFF" report -i "$W/heap.pprof" --sample-type inuse_space -s label:bytes -g none --json > "$W/proff.json"
	if $CMP tags "$W/tags.txt" bytes "$W/proff.json" > "$W/cmp.out"; then
		ok "Go heap profile: -s label:bytes (numeric label) equals -tags ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "Go heap profile: -s label:bytes"; sed 's/^/#   /' "$W/cmp.out" | head
	fi
	for t in alloc_objects alloc_space inuse_objects inuse_space; do
		u=; case $t in *space) u=-unit=B;; esac
		cmp_top "Go heap profile, --sample-type $t: equals -top -sample_index=$t" "$W/heap.pprof" --sample-type "$t" -- -sample_index="$t" $u
	done
	cmp_top "Go heap profile, sample type by index (1): equals -sample_index=1" "$W/heap.pprof" --sample-type 1 -- -sample_index=1 -unit=B
	ev=$("$PROFF" report -i "$W/heap.pprof" -g none --json | jq -r '.events[0].event')
	if [ "$ev" = inuse_space ]; then ok "Go heap profile: the default sample type is the last (inuse_space)"
	else not_ok "Go heap profile: default sample type is $ev, expected inuse_space"; fi
	# Go's profile as perf.data: perf report finds the functions in the
	# binary the mapping names, with pprof's flat values (pprof prints a
	# whole percentage as "100%", perf as "100.00%": both as %.2f)
	if command -v perf >/dev/null && "$PROFF" convert "$W/cpu.pprof" "$W/go.data" 2>"$W/err"; then
		perf report -i "$W/go.data" --stdio --no-children -s sym -g none -F overhead,sym 2>/dev/null |
			awk '$3 ~ /^main\./ { printf "%s %.2f%%\n", $3, $1 + 0 }' | sort > "$W/a.txt"
		pp -top -nodecount=0 -nodefraction=0 "$W/cpu.pprof" |
			awk '$6 ~ /^main\./ && $1 != "0" { printf "%s %.2f%%\n", $6, $2 + 0 }' | sort > "$W/b.txt"
		if [ -s "$W/a.txt" ]; then check_same "Go CPU profile -> perf.data: perf report's Self of main.* equals pprof's flat%" "$W/b.txt" "$W/a.txt"
		else not_ok "Go CPU profile -> perf.data: perf report shows no main.*"; fi
	else
		not_ok "Go CPU profile -> perf.data"; cat "$W/err" 2>/dev/null
	fi
	# Go's profile through proff's writer: still what Go wrote
	"$PROFF" convert "$W/cpu.pprof" "$W/cpu2.pb.gz" || not_ok "convert Go's profile"
	pp -top -nodecount=0 -nodefraction=0 -unit=ns "$W/cpu.pprof" | sed -n '/flat%/,$p' > "$W/a.txt"
	pp -top -nodecount=0 -nodefraction=0 -unit=ns "$W/cpu2.pb.gz" | sed -n '/flat%/,$p' > "$W/b.txt"
	check_same "Go CPU profile -> proff -> pprof: -top unchanged" "$W/a.txt" "$W/b.txt"
	pp -tags -unit=ns "$W/cpu.pprof" > "$W/a.txt"
	pp -tags -unit=ns "$W/cpu2.pb.gz" > "$W/b.txt"
	check_same "Go CPU profile -> proff -> pprof: labels unchanged" "$W/a.txt" "$W/b.txt"
	for t in alloc_space inuse_objects; do
		"$PROFF" convert --sample-type $t "$W/heap.pprof" "$W/heap-$t.pb.gz"
		pp -top -nodecount=0 -nodefraction=0 -sample_index=$t "$W/heap.pprof" | sed -n '/flat%/,$p' > "$W/a.txt"
		pp -top -nodecount=0 -nodefraction=0 "$W/heap-$t.pb.gz" | sed -n '/flat%/,$p' > "$W/b.txt"
		check_same "Go heap profile --sample-type $t -> proff -> pprof: -top unchanged" "$W/a.txt" "$W/b.txt"
	done
else
	not_ok "build and run goprof.go"; sed 's/^/#   /' "$TMP/go.err" | head
fi
finish
