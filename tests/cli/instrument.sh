#!/bin/bash
# tests/cli/instrument.sh — end-to-end tests of `proff record --instrument` and
# the -finstrument-functions runtime: call counts known by construction of the
# test programs in tests/data/instrument/, across threads, fork, exec,
# longjmp (jump markers), siglongjmp out of signal handlers, C++ exceptions,
# signals, exit paths, SIGKILL and deep recursion; no negative times;
# readable traces; clear errors on damaged files and on programs with no
# instrumented function (also when only a dlopen'ed library is).
source "$(dirname "$0")/../lib.sh"

SRC=$ROOT/tests/data/instrument
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
BIN=$(dirname "$PROFF")
RTA=$BIN/libproff-instrument.a
CFLAGS_I="-O2 -g -finstrument-functions -pthread"

if ! [ -s "$BIN/libproff-instrument.so" ]; then
	not_ok "runtime $BIN/libproff-instrument.so is missing"
	finish
fi

build() {  # build NAME -> $TMP/NAME
	local f=$1 src
	if [ -f "$SRC/$f.cc" ]; then
		g++ $CFLAGS_I -o "$TMP/$f" "$SRC/$f.cc" || return 1
	else
		gcc $CFLAGS_I -o "$TMP/$f" "$SRC/$f.c" || return 1
	fi
}
for p in fib threads fork exec longjmp exceptions deep paths sigjmp; do
	build $p || not_ok "build $p"
done

rec() {  # rec TRACE CMD... (quiet record, exit status kept)
	local out=$1; shift
	"$PROFF" record --instrument -q -o "$out" -- "$@" >"$TMP/rec.out" 2>"$TMP/rec.err"
}

# calls TRACE FUNC [stats options]: the call count of FUNC (0 if absent)
calls() {
	local tr=$1 fn=$2; shift 2
	"$PROFF" record --instrument --stats "$tr" "$@" 2>/dev/null |
		awk -v f="$fn" '!/^#/ && $6 == f { n += $1 } END { print n + 0 }'
}

# expect_calls NAME TRACE FUNC N [stats options]
expect_calls() {
	local name=$1 tr=$2 fn=$3 n=$4; shift 4
	local got; got=$(calls "$tr" "$fn" "$@")
	if [ "$got" = "$n" ]; then ok "$name: $fn called $n times"; else not_ok "$name: $fn called $got times, expected $n"; fi
}

# no_negative NAME TRACE: no negative number in raw and compensated stats
no_negative() {
	local name=$1 tr=$2 bad=0
	for opt in "" --no-compensate; do
		"$PROFF" record --instrument --stats "$tr" $opt >"$TMP/st.txt" 2>&1 || bad=1
		awk '!/^#/ { for (i = 1; i <= 5; i++) if ($i + 0 < 0) exit 1 }' "$TMP/st.txt" || bad=1
	done
	if [ $bad = 0 ]; then ok "$name: no negative times"; else not_ok "$name: negative time or error"; sed 's/^/#   /' "$TMP/st.txt" | head; fi
}

info_field() {  # info_field TRACE REGEX: count of session lines matching
	"$PROFF" record --instrument --info "$1" 2>/dev/null | grep -c -E "$2"
}

# ---- fib: exact count, compactness ------------------------------------------------
rec "$TMP/fib.trace" "$TMP/fib" 20
expect_calls "fib" "$TMP/fib.trace" fib 21891          # 2*F(21)-1
expect_calls "fib" "$TMP/fib.trace" main 1
no_negative "fib" "$TMP/fib.trace"
size=$(stat -c %s "$TMP/fib.trace")
if [ "$size" -le $((21892 * 8)) ]; then ok "fib: trace is at most 8 bytes per call ($size bytes)"; else not_ok "fib: trace has $size bytes for 21892 calls (more than 8 per call)"; fi

# default file name and PROFF_OUTPUT
(cd "$TMP" && "$PROFF" record --instrument -q -- ./fib 10 >/dev/null 2>&1)
expect_calls "default output proff.trace" "$TMP/proff.trace" fib 177
(cd "$TMP" && PROFF_OUTPUT=env.trace "$PROFF" record --instrument -q -- ./fib 10 >/dev/null 2>&1)
expect_calls "PROFF_OUTPUT" "$TMP/env.trace" fib 177

# monotonic clock
rec "$TMP/mono.trace" "$TMP/fib" 15
"$PROFF" record --instrument -q --clock monotonic -o "$TMP/mono.trace" -- "$TMP/fib" 15 >/dev/null 2>&1
expect_calls "clock monotonic" "$TMP/mono.trace" fib 1973
check "clock monotonic: header says 1000 MHz" grep -q "clock 1000.000 MHz" <("$PROFF" record --instrument --info "$TMP/mono.trace")

# no clock: counts and call tree only, still exact
"$PROFF" record --instrument -q --clock none -o "$TMP/none.trace" -- "$TMP/fib" 15 >/dev/null 2>&1
expect_calls "clock none" "$TMP/none.trace" fib 1973
"$PROFF" record --instrument -q --clock none -o "$TMP/none2.trace" -- "$TMP/longjmp" >/dev/null 2>&1
expect_calls "clock none, longjmp" "$TMP/none2.trace" rec 1000

# static linking with libproff-instrument.a, no proff record
if gcc $CFLAGS_I -o "$TMP/fib_static" "$SRC/fib.c" "$RTA" -ldl 2>"$TMP/cc.err"; then
	(cd "$TMP" && PROFF_OUTPUT=static.trace ./fib_static 12 >/dev/null)
	expect_calls "static runtime (.a)" "$TMP/static.trace" fib 465
else
	not_ok "link with libproff-instrument.a"; sed 's/^/#   /' "$TMP/cc.err" | head -5
fi

# ---- threads ---------------------------------------------------------------------------
rec "$TMP/thr.trace" "$TMP/threads" 40 500
expect_calls "threads" "$TMP/thr.trace" worker 40
expect_calls "threads" "$TMP/thr.trace" step 20000
expect_calls "threads" "$TMP/thr.trace" leaf 40000
n=$("$PROFF" record --instrument --info "$TMP/thr.trace" | sed -n 's/.* \([0-9]*\) threads.*/\1/p')
if [ "$n" = 41 ]; then ok "threads: 41 threads in the trace"; else not_ok "threads: $n threads, expected 41"; fi
no_negative "threads" "$TMP/thr.trace"
# small buffers: many flushes from many threads interleave in one file
"$PROFF" record --instrument -q --buffer 64K -o "$TMP/thr2.trace" -- "$TMP/threads" 8 20000 >/dev/null 2>&1
expect_calls "threads, 64K buffers" "$TMP/thr2.trace" leaf 320000
s=$("$PROFF" record --instrument --stats "$TMP/thr2.trace" | sed -n 's/.*synthetic exits \([0-9]*\), synthetic entries \([0-9]*\).*/\1 \2/p')
if [ "$s" = "0 0" ]; then ok "threads, 64K buffers: no resynchronisation needed"; else not_ok "threads, 64K buffers: synthetic exits/entries $s"; fi

# ---- fork ---------------------------------------------------------------------------------
rec "$TMP/fork.trace" "$TMP/fork"
if [ "$(info_field "$TMP/fork.trace" '^session')" = 2 ]; then ok "fork: two sessions"; else not_ok "fork: expected two sessions"; fi
check "fork: child session marked forked" grep -q " forked " <("$PROFF" record --instrument --info "$TMP/fork.trace")
expect_calls "fork" "$TMP/fork.trace" a 3
expect_calls "fork" "$TMP/fork.trace" b 5
expect_calls "fork" "$TMP/fork.trace" c 2
cpid=$("$PROFF" record --instrument --info "$TMP/fork.trace" | awk '/ forked / { print $4 }')
expect_calls "fork: --pid child" "$TMP/fork.trace" b 5 --pid "$cpid"
expect_calls "fork: --pid child" "$TMP/fork.trace" a 0 --pid "$cpid"

# ---- exec -----------------------------------------------------------------------------------
rec "$TMP/exec.trace" "$TMP/exec"
if [ "$(info_field "$TMP/exec.trace" '^session')" = 2 ]; then ok "exec: two sessions"; else not_ok "exec: expected two sessions"; fi
check "exec: first session ended by exec" grep -q "end exec" <("$PROFF" record --instrument --info "$TMP/exec.trace")
expect_calls "exec" "$TMP/exec.trace" a 2
expect_calls "exec" "$TMP/exec.trace" b 4
expect_calls "exec" "$TMP/exec.trace" main 2

# ---- longjmp, exceptions, deep recursion -------------------------------------------------------
rec "$TMP/lj.trace" "$TMP/longjmp"
expect_calls "longjmp" "$TMP/lj.trace" rec 1000
expect_calls "longjmp" "$TMP/lj.trace" jump 100
expect_calls "longjmp" "$TMP/lj.trace" after 1
s=$("$PROFF" record --instrument --stats "$TMP/lj.trace" | sed -n 's/.*synthetic exits \([0-9]*\).*/\1/p')
if [ "$s" = 1100 ]; then ok "longjmp: 1100 skipped exits resynchronised"; else not_ok "longjmp: $s synthetic exits, expected 1100"; fi
# all of them at jump markers (exact), none found missing later
check "longjmp: the 1100 closed by jump markers, no lost exit" grep -q "^# anomalies: longjmp 1100, open at end 0, lost exit 0," \
	<("$PROFF" record --instrument --stats "$TMP/lj.trace" 2>/dev/null)
# after() runs in main once the jumps are done: main's child, not rec's
"$PROFF" report -i "$TMP/lj.trace" -T -q > "$TMP/lj.tree" 2>"$TMP/lj.err"
check "longjmp: after is main's child" grep -q "^ .* 1  +- after$" "$TMP/lj.tree"
check "longjmp: no warning" test ! -s "$TMP/lj.err" -o -z "$(grep -v clamped "$TMP/lj.err")"
no_negative "longjmp" "$TMP/lj.trace"

# siglongjmp out of a profiling-timer handler that often interrupts a hook:
# the abandoned hook must not stop the thread's tracing
timeout 60 "$PROFF" record --instrument -q -o "$TMP/sj.trace" -- "$TMP/sigjmp" >/dev/null 2>&1
expect_calls "siglongjmp out of handlers" "$TMP/sj.trace" after 7
expect_calls "siglongjmp out of handlers" "$TMP/sj.trace" main 1
# spin() is entered right after each jump: a tick there can abandon its
# entry hook, an event the runtime then counts as dropped
n=$(calls "$TMP/sj.trace" spin)
if [ "$n" -ge 1 ] && [ "$n" -le 10 ]; then ok "siglongjmp out of handlers: spin called $n of 10 times"; else not_ok "siglongjmp out of handlers: spin called $n times"; fi
check "siglongjmp out of handlers: no lost exit" grep -q "lost exit 0, before trace 0, unmatched exit 0" \
	<("$PROFF" record --instrument --stats "$TMP/sj.trace" 2>/dev/null)

rec "$TMP/exc.trace" "$TMP/exceptions"
expect_calls "C++ exceptions" "$TMP/exc.trace" outer 100
expect_calls "C++ exceptions" "$TMP/exc.trace" mid 500   # demangled, no parameters (as perf prints)
expect_calls "C++ exceptions" "$TMP/exc.trace" thrower 100
no_negative "C++ exceptions" "$TMP/exc.trace"

# an exception through C code built without -fexceptions: middle()'s exits
# never come; found missing by frame address, counted and warned about,
# the tree still right (uftrace 0.13 nests each round under the last)
if gcc -O2 -g -finstrument-functions -c -o "$TMP/lostexit_c.o" "$SRC/lostexit_c.c" &&
   g++ -O2 -g -finstrument-functions -o "$TMP/lostexit" "$SRC/lostexit.cc" "$TMP/lostexit_c.o"; then
	rec "$TMP/le.trace" "$TMP/lostexit"
	expect_calls "lost exits" "$TMP/le.trace" middle 50
	expect_calls "lost exits" "$TMP/le.trace" after 50
	"$PROFF" report -i "$TMP/le.trace" -T -q > "$TMP/le.tree" 2>"$TMP/le.err"
	check "lost exits: tree main > {middle > thrower, after}" python3 - "$TMP/le.tree" <<'EOF2'
import re, sys
rows = [re.sub(r"^ *[0-9.]+ [a-z]+ +[0-9.]+ [a-z]+ +", "", l.rstrip()) for l in open(sys.argv[1]) if not l.startswith("#")]
want = ["1  main", "50  +- middle", "50  |  +- thrower", "50  +- after"]
assert rows == want, rows
EOF2
	check "lost exits: report warns, naming middle" grep -q "le.trace: 50 calls never returned in the trace .*most in middle (50)" "$TMP/le.err"
	check "lost exits: --stats counts them" grep -q "^#   lost exit: middle (50)" <("$PROFF" record --instrument --stats "$TMP/le.trace" 2>/dev/null)
	"$PROFF" dprofpp "$TMP/le.trace" >/dev/null 2>"$TMP/le.dp.err"
	check "lost exits: dprofpp warns, naming middle" grep -q "le.trace: 50 calls never returned in the trace .*most in middle (50)" "$TMP/le.dp.err"
	# diff warns as report does, once per file (the two files' lines, then groups of runs)
	cp "$TMP/le.trace" "$TMP/le2.trace"
	"$PROFF" diff "$TMP/le.trace" "$TMP/le2.trace" >/dev/null 2>"$TMP/le.diff.err"
	check "lost exits: diff warns for the baseline" grep -q "le.trace: 50 calls never returned in the trace .*most in middle (50)" "$TMP/le.diff.err"
	check "lost exits: diff warns for the new file" grep -q "le2.trace: 50 calls never returned in the trace .*most in middle (50)" "$TMP/le.diff.err"
	"$PROFF" diff "$TMP/le.trace" -- "$TMP/le2.trace" >/dev/null 2>"$TMP/le.groups.err"
	n=$(grep -c "calls never returned in the trace .*most in middle (50)" "$TMP/le.groups.err")
	if [ "$n" = 2 ]; then ok "lost exits: diff A -- B warns once per file"; else not_ok "lost exits: diff A -- B: $n warnings, expected 2"; fi
	no_negative "lost exits" "$TMP/le.trace"
else
	not_ok "build the lost-exit program"
fi

rec "$TMP/deep.trace" "$TMP/deep" 150000
expect_calls "deep recursion" "$TMP/deep.trace" down 150001
no_negative "deep recursion" "$TMP/deep.trace"

# ---- exit paths and signals ----------------------------------------------------------------------
for m in "exit 3 exit 3" "_exit 4 _exit 4" "abort 134 signal 6" "segv 139 signal 11" "term 143 signal 15"; do
	set -- $m
	mode=$1 code=$2; shift 2
	rec "$TMP/p_$mode.trace" "$TMP/paths" "$mode" 10; rc=$?
	if [ "$rc" = "$code" ]; then ok "$mode: exit status $code passed on"; else not_ok "$mode: exit status $rc, expected $code"; fi
	expect_calls "$mode" "$TMP/p_$mode.trace" work 10
	check "$mode: session end recorded as '$*'" grep -q "end $*" <("$PROFF" record --instrument --info "$TMP/p_$mode.trace")
done
rec "$TMP/p_handler.trace" "$TMP/paths" handler 10
expect_calls "signal handler" "$TMP/p_handler.trace" handler 10
expect_calls "signal handler" "$TMP/p_handler.trace" work 20
no_negative "signal handler" "$TMP/p_handler.trace"

"$PROFF" record --instrument -q --buffer 64K -o "$TMP/kill.trace" -- "$TMP/paths" kill 300000 >/dev/null 2>&1; rc=$?
if [ "$rc" = 137 ]; then ok "SIGKILL: exit status 137"; else not_ok "SIGKILL: exit status $rc"; fi
n=$(calls "$TMP/kill.trace" work)
if [ "$n" -gt 0 ] && [ "$n" -le 300000 ]; then ok "SIGKILL: trace readable up to the last flush ($n of 300000 calls)"; else not_ok "SIGKILL: $n calls of work"; fi

# ---- dlopen: a library loaded later is symbolized ------------------------------------------------
if gcc -O2 -g -finstrument-functions -fPIC -shared -o "$TMP/plugin.so" "$SRC/plugin.c" &&
   gcc $CFLAGS_I -o "$TMP/dlopen" "$SRC/dlopen.c" -ldl; then
	rec "$TMP/dl.trace" "$TMP/dlopen" "$TMP/plugin.so"
	expect_calls "dlopen" "$TMP/dl.trace" plugin_fn 3
	expect_calls "dlopen" "$TMP/dl.trace" plugin_leaf 6
else
	not_ok "build dlopen test"
fi

# ---- nothing instrumented: an error, no trace; only a dlopen'ed library instrumented: works ----
printf '#include <stdio.h>\nint main(void) { puts("plain"); return 0; }\n' > "$TMP/plain.c"
gcc -O2 -o "$TMP/plain" "$TMP/plain.c"
expect_exit "not instrumented: non-zero exit" 1 "$PROFF" record --instrument -o "$TMP/plain.trace" -- "$TMP/plain"
check "not instrumented: the error names the binary and -finstrument-functions" \
	grep -q "proff: $TMP/plain: no function is instrumented: .*-finstrument-functions" "$TMP/ee.err"
check "not instrumented: no trace left behind" test ! -e "$TMP/plain.trace"
if gcc -O2 -g -o "$TMP/dlopen_plain" "$SRC/dlopen.c" -ldl; then
	rec "$TMP/dlp.trace" "$TMP/dlopen_plain" "$TMP/plugin.so"
	expect_calls "uninstrumented program, dlopen'ed instrumented library" "$TMP/dlp.trace" plugin_fn 3
	expect_calls "uninstrumented program, dlopen'ed instrumented library" "$TMP/dlp.trace" plugin_leaf 6
	printf '#include <dlfcn.h>\nint main(int c, char **v) { return !dlopen(v[1], RTLD_NOW); }\n' > "$TMP/dlonly.c"
	gcc -O2 -o "$TMP/dlonly" "$TMP/dlonly.c" -ldl
	expect_exit "instrumented library loaded, never called: non-zero exit" 1 \
		"$PROFF" record --instrument -o "$TMP/dlonly.trace" -- "$TMP/dlonly" "$TMP/plugin.so"
	check "instrumented library loaded, never called: the error names the library" \
		grep -q "$TMP/dlonly: no instrumented function ran ($TMP/plugin.so is built with -finstrument-functions" "$TMP/ee.err"
	check "instrumented library loaded, never called: no trace left behind" test ! -e "$TMP/dlonly.trace"
else
	not_ok "build the uninstrumented dlopen program"
fi

# ---- damaged files, usage -----------------------------------------------------------------------
head -c 100000 "$TMP/thr.trace" > "$TMP/cut.trace"
check "truncated trace still reads" "$PROFF" record --instrument --stats "$TMP/cut.trace"
check "truncated trace: reported" grep -q "truncated" <("$PROFF" record --instrument --info "$TMP/cut.trace")
printf 'this is not a trace at all, just text\n' > "$TMP/bad.trace"
expect_exit "not a trace: exit 1" 1 "$PROFF" record --instrument --stats "$TMP/bad.trace"
check "not a trace: message names file and offset" grep -q "bad.trace: not a proff trace.*offset 0" "$TMP/ee.err"
# a record whose size field is too small
python3 - "$TMP/fib.trace" "$TMP/badsize.trace" <<'EOF'
import sys, struct
d = bytearray(open(sys.argv[1], 'rb').read())
off = struct.unpack_from('<I', d, 8)[0]          # second record
struct.pack_into('<I', d, off + 8, 3)
open(sys.argv[2], 'wb').write(d)
EOF
expect_exit "record size too small: exit 1" 1 "$PROFF" record --instrument --stats "$TMP/badsize.trace"
check "record size too small: byte offset in message" grep -q "record size 3 .*offset [1-9]" "$TMP/ee.err"
expect_exit "no command: usage error" 129 "$PROFF" record --instrument
expect_exit "unknown option: usage error" 129 "$PROFF" record --instrument --bogus -- true
expect_exit "missing program: 127" 127 "$PROFF" record --instrument -q -o "$TMP/none.trace" -- "$TMP/does-not-exist"

finish
