#!/bin/bash
# report.sh — end-to-end checks of `proff report` (run with the normal and
# the ASan+UBSan build): options that must work, JSON that parses, pipe
# input, several events, the config file, usage errors and bad files.
source "$(dirname "$0")/../lib.sh"

W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/calls" "$ROOT/tests/data/report/calls.c" ||
	{ not_ok "build calls.c"; finish; }
if ! can_perf_record; then not_ok "perf record works here"; finish; fi
perf record -q -e cpu-clock -g -o "$W/a.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record"
perf record -q -e cpu-clock,task-clock -g -o "$W/two.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record two events"
perf record -q -e cpu-clock -g -o - -- "$W/calls" 2>/dev/null > "$W/pipe.data" || not_ok "record to a pipe"

strip_tip() { grep -v '^# (Tip:' ; }
same_as_perf() {  # same_as_perf NAME FILE OPTS...
	local name=$1 f=$2; shift 2
	perf report -i "$f" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$f" "$@" 2>"$TMP/err" | strip_tip > "$TMP/proff.out"
	check_same "$name" "$TMP/perf.out" "$TMP/proff.out"
}

same_as_perf "children report equals perf" "$W/a.data"
same_as_perf "self report equals perf" "$W/a.data" --no-children -g none -s dso,sym
same_as_perf "two events equal perf" "$W/two.data" --no-children -g none
perf report -i - --stdio --no-children -g none < "$W/pipe.data" 2>/dev/null | strip_tip > "$TMP/perf.out"
"$PROFF" report -i - --no-children -g none < "$W/pipe.data" 2>"$TMP/err" | strip_tip > "$TMP/proff.out"
check_same "pipe input (-i -) equals perf" "$TMP/perf.out" "$TMP/proff.out"

"$PROFF" report -i "$W/a.data" --json > "$TMP/j.json" 2>"$TMP/err"
check "--json is valid JSON with rows" python3 -c "
import json,sys; d=json.load(open('$TMP/j.json'))
rows=d['events'][0]['rows']; assert rows and 'children' in rows[0] and 'sym' in rows[0], rows[:1]"
check "-D dumps records" bash -c "'$PROFF' report -i '$W/a.data' -D | grep -q SAMPLE"
check "--header-only prints the header" bash -c "'$PROFF' report -i '$W/a.data' --header-only | grep -q 'os release'"

printf '[report]\n\tchildren = false\n' > "$TMP/cfg"
PROFF_CONFIG="$TMP/cfg" "$PROFF" report -i "$W/a.data" -g none > "$TMP/cfg.out" 2>&1
check "config report.children=false gives the Self layout" grep -q '^# Overhead  Command' "$TMP/cfg.out"

# an exact profile (proff record --instrument) given to proff report
printf '#include <stdio.h>\nstatic int fib(int n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }\nint main(void) { printf("%%d\\n", fib(20)); return 0; }\n' > "$W/fib.c"
if cc -O1 -g -finstrument-functions -o "$W/fib" "$W/fib.c" &&
   "$PROFF" record --instrument -o "$W/fib.trace" -- "$W/fib" >/dev/null 2>&1; then
	"$PROFF" report -i "$W/fib.trace" > "$TMP/trace.out" 2>&1
	# fib(20) makes 2*F(21) - 1 = 21891 calls
	check "report of an exact trace: fib called 21891 times" grep -Eq '^ +21891 .* fib( |$)' "$TMP/trace.out"
else
	not_ok "record an instrumented fib"
fi

expect_exit "unknown option is a usage error (129)" 129 "$PROFF" report --bogus
expect_exit "unknown sort key is a usage error (129)" 129 "$PROFF" report -i "$W/a.data" -s nosuchkey
expect_exit "missing file fails" 1 "$PROFF" report -i "$W/none.data"
"$PROFF" report -i "$W/none.data" 2>"$TMP/err" >/dev/null
check "missing file: one line naming the file" bash -c "[ \$(wc -l < '$TMP/err') = 1 ] && grep -q 'none.data' '$TMP/err'"
head -c 3000 "$W/a.data" > "$W/trunc.data"
"$PROFF" report -i "$W/trunc.data" > /dev/null 2>"$TMP/err"; rc=$?
if [ "$rc" != 0 ] && grep -q 'trunc.data' "$TMP/err" && [ "$(wc -l < "$TMP/err")" -le 2 ]; then
	ok "truncated file: clear error, non-zero exit"
else
	not_ok "truncated file: clear error, non-zero exit (rc=$rc)"; head -3 "$TMP/err" | sed 's/^/#   /'
fi
finish
