#!/bin/bash
# reference-matrix.sh — the engine against the reference path (#29): the
# same inputs through `--engine=reference` (lib/hist/reference.c,
# lib/diff/reference.c: what Self, Children and the diff pairing mean, in
# plain code) and through the engine under each of its tunings (one
# thread; two threads wherever it can, files read in two halves; perf's
# row order always replayed), compared byte for byte. The engine is
# checked against perf 6.1 by tests/oracle/report.sh and diff.sh; a
# difference here is a bug in one of the two paths.
#
# Inputs: a frame-pointer -g recording of tests/data/report/calls.c (two
# threads and a forked child, libc and kernel frames, recursion), a second
# one to diff with it, a recording whose callchains end in garbage
# addresses 2^63 apart (tests/data/report/garbage.c: perf's input tree
# then makes two rows of one key, the reference's walk must too), and an
# exact trace (proff record --instrument).
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
W="$TMP/w"; mkdir -p "$W"

TUNINGS="threads=1 threads=2 threads=2,replay"
# the sanitizers' build: both paths' memory, against the engine's threaded
# tuning only (a third of the runs; the normal build runs them all)
case $PROFF in *asan*) TUNINGS="threads=2" ;; esac

# same CMD NAME INPUTS... -- ARGS...: CMD's output with --engine=reference
# and with each engine tuning equal, byte for byte
same() {
	local cmd=$1 name=$2; shift 2
	local args=() ref="$W/ref.out" bad=""
	while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
	shift
	args+=("$@")
	if ! "$PROFF" "$cmd" "${args[@]}" --engine=reference >"$ref" 2>"$W/ref.err"; then
		not_ok "$name: the reference path fails"; sed 's/^/#   /' "$W/ref.err" | head -5
		return
	fi
	if ! grep -qE '%|"self"' "$ref"; then
		not_ok "$name: the reference path prints no row"; head -20 "$ref" | cut -c1-200 | sed 's/^/#   /'
		return
	fi
	for k in $TUNINGS; do
		"$PROFF" "$cmd" "${args[@]}" --engine="$k" >"$W/eng.out" 2>"$W/eng.err"
		if ! cmp -s "$ref" "$W/eng.out"; then
			bad="$bad $k"
			diff -u "$ref" "$W/eng.out" | head -20 | cut -c1-200 | sed "s/^/#   [$k] /"
		fi
	done
	[ -z "$bad" ] && ok "$name" || not_ok "$name: the engine differs with$bad"
}

if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
rec() { local out=$1; shift; perf record -q -o "$out" "$@" >/dev/null 2>"$W/rec.err" || { sed 's/^/#   /' "$W/rec.err"; return 1; }; }
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$W/calls" \
	"$ROOT/tests/data/report/calls.c" 2>"$W/cc.err" || { not_ok "build calls.c"; sed 's/^/#   /' "$W/cc.err"; finish; }
rec "$W/a.data" -e cpu-clock -g -- "$W/calls" && rec "$W/b.data" -e cpu-clock -g -- "$W/calls" ||
	{ not_ok "record calls"; finish; }

# report: sort keys (the default is comm,dso,sym) x modes
for s in "" "-s sym" "-s dso,sym" "-s pid" "-s srcline"; do
	for m in "-g none" "--no-children -g none" "-g caller" "-g callee" "--no-children --stdio -g graph,0.5,caller"; do
		# shellcheck disable=SC2086
		same report "report calls ${s:-(default keys)} $m" -i "$W/a.data" -- $s $m
	done
done
same report "report calls: filters (--comms calls --dsos calls, relative)" -i "$W/a.data" -- \
	--comms calls --dsos calls --percentage relative
same report "report calls: --max-stack 3, -n" -i "$W/a.data" -- --max-stack 3 -n -g caller
same report "report calls: -s parent -p leaf_" -i "$W/a.data" -- -s parent,sym -p '^leaf_' -g none
same report "report calls: --json" -i "$W/a.data" -- --json

# pprof (proff convert): a pprof sample read as one raw sample counts
# several events; rows are found by key, each counting its events (the
# same -n column as the perf.data's)
if "$PROFF" convert "$W/a.data" -o "$W/a.pb.gz" 2>"$W/conv.err"; then
	for m in "-n" "-s sym -g none -n" "--no-children -s dso,sym"; do
		# shellcheck disable=SC2086
		same report "report pprof $m" -i "$W/a.pb.gz" -- $m
	done
	"$PROFF" report -i "$W/a.data" -s sym -g none -n -q >"$W/pd.out" 2>&1
	"$PROFF" report -i "$W/a.pb.gz" -s sym -g none -n -q >"$W/pb.out" 2>&1
	check_same "pprof of a perf.data: the same rows and sample counts (-s sym -n, Children)" "$W/pd.out" "$W/pb.out"
else
	not_ok "proff convert a.data -o a.pb.gz"; sed 's/^/#   /' "$W/conv.err"
fi

# diff: compute methods and keys
for c in "" "-c ratio" "-c wdiff:1,2" "-c delta -b" "-s sym" "-s comm,dso -p"; do
	# shellcheck disable=SC2086
	same diff "diff calls ${c:-(default)}" "$W/a.data" "$W/b.data" -- $c
done
same diff "diff calls: three files" "$W/a.data" "$W/b.data" "$W/a.data" -- -c ratio

# garbage callchain frames: perf's walk makes two rows of one key — in
# most recordings (24 to 236 keys in 1 s; some have none: recorded again,
# up to three times; tests/unit/test_reference.c checks it on profiles
# that always have them)
dup_keys() {
	"$PROFF" report -i "$1" -s sym -g none --engine=reference 2>/dev/null | grep '%' |
		awk '{$1 = $2 = ""; print}' | sort | uniq -d | wc -l
}
if [ "$(uname -m)" = x86_64 ] && cc -O1 -g -fno-omit-frame-pointer -o "$W/garbage" \
	"$ROOT/tests/data/report/garbage.c" 2>"$W/cc.err" &&
   rec "$W/g.data" -e cpu-clock -F 10000 -g -- "$W/garbage" 1; then
	dups=$(dup_keys "$W/g.data")
	for _ in 2 3; do
		[ "$dups" -gt 0 ] && break
		rec "$W/g.data" -e cpu-clock -F 10000 -g -- "$W/garbage" 1 && dups=$(dup_keys "$W/g.data")
	done
	[ "$dups" -gt 0 ] && ok "garbage frames: the reference path makes two rows of one key ($dups keys), as perf" ||
		skip "garbage frames: three recordings without two rows of one key (test_reference.c checks the walk)"
	for sm in "-g none" "-g callee --percent-limit 1" "-s sym -g none" "-s sym --no-children" \
		"-s sym --percent-limit 0.1" "-s dso,sym -g caller"; do
		# shellcheck disable=SC2086
		same report "report garbage $sm" -i "$W/g.data" -- $sm
	done
else
	not_ok "build and record tests/data/report/garbage.c"; sed 's/^/#   /' "$W/cc.err"
fi

# an exact trace: report and diff
BIN=$(dirname "$PROFF")
if gcc -O2 -g -finstrument-functions -o "$W/fib" "$ROOT/tests/data/instrument/fib.c" 2>"$W/cc.err" &&
   "$PROFF" record --instrument -q -o "$W/f20.trace" -- "$W/fib" 20 >/dev/null 2>"$W/rec.err" &&
   "$PROFF" record --instrument -q -o "$W/f22.trace" -- "$W/fib" 22 >/dev/null 2>>"$W/rec.err"; then
	for m in "" "--no-children" "-s sym -g caller"; do
		# shellcheck disable=SC2086
		same report "report exact trace ${m:-(default)}" -i "$W/f20.trace" -- $m
	done
	same diff "diff exact traces" "$W/f20.trace" "$W/f22.trace" --
else
	not_ok "build fib.c and record it with --instrument ($BIN)"; sed 's/^/#   /' "$W/cc.err" "$W/rec.err" | head
fi

expect_exit "--engine: an unknown word is a usage error" 129 "$PROFF" report -i "$W/a.data" --engine=fast
finish
