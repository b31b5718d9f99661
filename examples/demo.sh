#!/bin/bash
# demo.sh — `make demo`: build two versions of examples/shapes.c, record each
# (with `proff record` when it is available, else `perf record`), and show
# what proff reports for them and how they differ; then the same with exact
# traces of -finstrument-functions builds (proff record --instrument).
set -e
cd "$(dirname "$0")/.."
PROFF=${PROFF:-build/proff}
OUT=${DEMO_DIR:-build/demo}
mkdir -p "$OUT/v1" "$OUT/v2"
CFLAGS="-O1 -g -fno-omit-frame-pointer"
# same binary name in two directories: rows pair by dso short name and symbol name
cc $CFLAGS -DVERSION=1 examples/shapes.c -o "$OUT/v1/shapes"
cc $CFLAGS -DVERSION=2 examples/shapes.c -o "$OUT/v2/shapes"

record() {   # record OUTFILE PROGRAM ARGS...
	local out=$1; shift
	if "$PROFF" record -q -e cpu-clock -g -o "$out" -- "$@" >/dev/null 2>"$OUT/record.err"; then
		echo "  recorded $out with proff record"
	else
		perf record -q -e cpu-clock -g -o "$out" -- "$@" >/dev/null 2>>"$OUT/record.err"
		echo "  recorded $out with perf record"
	fi
}

echo "== recording version 1 and version 2 of examples/shapes.c"
record "$OUT/before.data" "$OUT/v1/shapes" 400
record "$OUT/after.data" "$OUT/v2/shapes" 400

echo
echo "== proff report -i before.data --no-children (Self)"
"$PROFF" report -i "$OUT/before.data" --no-children -g none --percent-limit 1
echo
echo "== proff report -i after.data (Children and Self, call graph)"
"$PROFF" report -i "$OUT/after.data" --percent-limit 5 -s sym
echo
echo "== proff diff before.data after.data"
"$PROFF" diff "$OUT/before.data" "$OUT/after.data" || echo "(proff diff not available in this build)"

# the same two versions, measured exactly: -finstrument-functions builds run
# under proff's runtime (calls and times of every function, overhead compensated)
cc $CFLAGS -finstrument-functions -DVERSION=1 examples/shapes.c -o "$OUT/v1/shapes-i"
cc $CFLAGS -finstrument-functions -DVERSION=2 examples/shapes.c -o "$OUT/v2/shapes-i"
if "$PROFF" record --instrument -q -o "$OUT/before.trace" -- "$OUT/v1/shapes-i" 100 >/dev/null 2>"$OUT/record.err" &&
   "$PROFF" record --instrument -q -o "$OUT/after.trace" -- "$OUT/v2/shapes-i" 100 >/dev/null 2>>"$OUT/record.err"; then
	echo
	echo "== proff report -i after.trace --no-children (exact: times and calls per function)"
	"$PROFF" report -i "$OUT/after.trace" --no-children -g none -s sym
	echo
	echo "== proff report -i after.trace --tree (the execution tree)"
	"$PROFF" report -i "$OUT/after.trace" --tree --percent-limit 1
	echo
	echo "== proff diff before.trace after.trace (exclusive time)"
	"$PROFF" diff -s sym "$OUT/before.trace" "$OUT/after.trace"
else
	echo "(proff record --instrument did not run here: $(head -1 "$OUT/record.err"))"
fi
