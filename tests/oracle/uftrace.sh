#!/bin/bash
# tests/oracle/uftrace.sh — call counts of `proff record --instrument` against
# `uftrace record` + `uftrace report -f call` on the same -finstrument-functions
# binaries (tests/data/instrument/). fib(N) must also give exactly 2*F(N+1)-1.
# proff's side is read with `proff record --instrument --stats` (the trace
# reader of lib/trace).
#
# uftrace's own limits keep some programs out: it mis-handles longjmp (counts
# drift) and stops recording below depth 1024 (deep recursion); those are
# checked by construction in tests/cli/instrument.sh instead.
source "$(dirname "$0")/../lib.sh"

if ! command -v uftrace >/dev/null; then
	not_ok "uftrace is not installed (scripts/setup-deps.sh installs it)"
	finish
fi
SRC=$ROOT/tests/data/instrument
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
FLAGS="-O2 -g -finstrument-functions -pthread"

# program args... : functions compared
CASES=(
	"fib 24:fib main"
	"threads 8 2000:worker step leaf main"
	"fork:a b c"
	"exceptions:outer mid thrower main"
	"exec:a b"
)

fib_calls() {  # 2*F(n+1)-1
	awk -v n="$1" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print 2 * a - 1 }'
}

for c in "${CASES[@]}"; do
	cmd=${c%%:*} funcs=${c#*:}
	set -- $cmd
	prog=$1; shift
	if [ -f "$SRC/$prog.cc" ]; then
		g++ $FLAGS -o "$TMP/$prog" "$SRC/$prog.cc" || { not_ok "build $prog"; continue; }
	else
		gcc $FLAGS -o "$TMP/$prog" "$SRC/$prog.c" || { not_ok "build $prog"; continue; }
	fi
	(cd "$TMP" && uftrace record --no-libcall --no-event -d "uftrace.$prog" "./$prog" "$@" >/dev/null 2>&1)
	(cd "$TMP" && uftrace report -d "uftrace.$prog" -f call --no-pager 2>/dev/null) > "$TMP/uf.$prog.txt"
	(cd "$TMP" && "$PROFF" record --instrument -q -o "proff.$prog.trace" -- "./$prog" "$@" >/dev/null 2>&1)
	"$PROFF" record --instrument --stats "$TMP/proff.$prog.trace" > "$TMP/pf.$prog.txt" 2>&1
	# the same trace as a profile: proff report's Calls per symbol
	"$PROFF" report -i "$TMP/proff.$prog.trace" --no-children -s sym -g none --json 2>/dev/null |
		jq -r '.events[0].rows[] | "\(.calls) \(.sym)"' > "$TMP/pr.$prog.txt"
	for f in $funcs; do
		u=$(awk -v f="$f" '$2 == f { n += $1 } END { print n + 0 }' "$TMP/uf.$prog.txt")
		p=$(awk -v f="$f" '!/^#/ && $6 == f { n += $1 } END { print n + 0 }' "$TMP/pf.$prog.txt")
		if [ "$u" = "$p" ] && [ "$u" != 0 ]; then
			ok "$prog: $f called $p times (uftrace: $u)"
		else
			not_ok "$prog: $f: proff $p calls, uftrace $u"
		fi
		r=$(awk -v f="$f" '$2 == f { n += $1 } END { print n + 0 }' "$TMP/pr.$prog.txt")
		if [ "$u" = "$r" ] && [ "$u" != 0 ]; then
			ok "$prog: $f: proff report Calls $r (uftrace: $u)"
		else
			not_ok "$prog: $f: proff report Calls $r, uftrace $u"
		fi
	done
	if [ "$prog" = fib ]; then
		want=$(fib_calls "$1")
		p=$(awk '!/^#/ && $6 == "fib" { print $1 }' "$TMP/pf.fib.txt")
		if [ "$p" = "$want" ]; then ok "fib($1): exactly $want calls"; else not_ok "fib($1): $p calls, expected $want"; fi
	fi
done

finish
