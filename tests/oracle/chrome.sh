#!/bin/bash
# tests/oracle/chrome.sh — exact traces as Chrome trace event JSON and as
# speedscope files (proff convert), checked by tests/tools/trace_json_cmp.py:
#   - the same calls and nesting, thread for thread, as `uftrace dump
#     --chrome` of the same -finstrument-functions binary run by uftrace
#     (the field's tool for this format);
#   - the trace's own calls and durations: per function the calls and the
#     summed inclusive time of proff report --no-compensate on the trace
#     (within 1 ns a call: the files keep nanoseconds).
source "$(dirname "$0")/../lib.sh"

if ! command -v uftrace >/dev/null; then
	not_ok "uftrace is not installed (scripts/setup-deps.sh installs it)"
	finish
fi
SRC=$ROOT/tests/data/instrument
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
CMP="python3 $ROOT/tests/tools/trace_json_cmp.py"
W=$TMP/w; mkdir -p "$W"

CASES=("fib 12" "threads 4 50" "deep 40")
for c in "${CASES[@]}"; do
	set -- $c
	prog=$1; shift
	gcc -O2 -g -finstrument-functions -pthread -o "$W/$prog" "$SRC/$prog.c" || { not_ok "build $prog"; continue; }
	(cd "$W" && "$PROFF" record --instrument -q -o "$prog.trace" -- "./$prog" "$@" >/dev/null 2>&1) ||
		{ not_ok "$prog: proff record --instrument"; continue; }
	(cd "$W" && uftrace record --no-libcall --no-event -d "uf.$prog" "./$prog" "$@" >/dev/null 2>&1) ||
		{ not_ok "$prog: uftrace record"; continue; }
	uftrace dump -d "$W/uf.$prog" --chrome > "$W/uf.$prog.json" 2>/dev/null || { not_ok "$prog: uftrace dump --chrome"; continue; }
	"$PROFF" convert "$W/$prog.trace" "$W/$prog.trace.json" 2>"$W/err" || { not_ok "$prog: convert"; cat "$W/err"; continue; }
	"$PROFF" convert "$W/$prog.trace" "$W/$prog.speedscope.json" 2>"$W/err" || { not_ok "$prog: convert to speedscope"; cat "$W/err"; continue; }
	if $CMP structure "$W/$prog.trace.json" "$W/uf.$prog.json" > "$W/cmp.out"; then
		ok "$prog $*: Chrome trace has uftrace's calls and nesting ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "$prog $*: Chrome trace against uftrace dump --chrome"; sed 's/^/#   /' "$W/cmp.out" | head
	fi
	if $CMP structure "$W/$prog.speedscope.json" "$W/uf.$prog.json" > "$W/cmp.out"; then
		ok "$prog $*: speedscope file has uftrace's calls and nesting ($(tail -1 "$W/cmp.out"))"
	else
		not_ok "$prog $*: speedscope against uftrace dump --chrome"; sed 's/^/#   /' "$W/cmp.out" | head
	fi
	"$PROFF" report -i "$W/$prog.trace" --no-compensate --no-children -s sym -g none --json > "$W/r.json"
	for f in "$prog.trace.json" "$prog.speedscope.json"; do
		if $CMP stats "$W/$f" "$W/r.json" > "$W/cmp.out"; then
			ok "$prog $*: $f has the trace's calls and durations ($(tail -1 "$W/cmp.out"))"
		else
			not_ok "$prog $*: $f against proff report"; sed 's/^/#   /' "$W/cmp.out" | head
		fi
	done
done
finish
