#!/bin/bash
# tests/oracle/uftrace.sh — exact profiles of `proff record --instrument`
# against `uftrace record` of the same -finstrument-functions binaries
# (tests/data/instrument/):
#
#  * the whole call tree: `proff report -v -T` against `uftrace graph
#    --demangle=full` (tests/oracle/uftrace_tree.py: every call path with its
#    number of calls, merged over threads and processes, equal);
#  * call counts per function: `proff record --instrument --stats` and
#    `proff report --json` against `uftrace report -f call`;
#  * times, where uftrace's own cost does not dominate them: burn() and
#    burn2() (twice burn's loop) have 20-100 us of work per call and no
#    instrumented callee (the runtimes' costs per call, tens of ns for proff,
#    hundreds for uftrace, are below 1 % of one), and are called alternately,
#    30 times each. The ratio of their shortest calls (total-min) must agree
#    with uftrace's within 20 %, and each shortest call with uftrace's within
#    a factor of 2.5. Shortest calls, because the two runs are separate
#    processes on a shared machine: totals of 30 calls differed by 20x
#    between runs under load (preemption), and a busy machine has slowed a
#    whole run by 1.5x (hence the loose absolute bound); a miss is
#    measured again, up to three times in all;
#  * no resynchronisation: proff's --stats shows no lost exit, no unmatched
#    exit, no dropped event (a jump marker's closed frames are exact; the
#    longjmp case expects them).
#
# The cases the issue lists: static inline / always_inline at -O2 and -O3;
# C++ templates, lambdas, std::sort, std::map, an exception through 10
# frames, 8 std::threads, with and without -fno-omit-frame-pointer; tail
# calls; longjmp out of deep recursion; signal handlers (own stack and
# sigaltstack); fork then exec; dlopen of an instrumented library (from an
# instrumented program and from one that is not). uftrace 0.13 mis-nests
# every call after a longjmp, so that case is compared with uftrace's tree
# of the same program left by a C++ exception instead (tests/data/
# instrument/ljdeep.c built as C++ with -DUSE_THROW): the same calls, the
# same tree.
source "$(dirname "$0")/../lib.sh"

if ! command -v uftrace >/dev/null; then
	not_ok "uftrace is not installed (scripts/setup-deps.sh installs it)"
	finish
fi
SRC=$ROOT/tests/data/instrument
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
TREE=$ROOT/tests/oracle/uftrace_tree.py
FLAGS="-O2 -g -finstrument-functions -pthread"

fib_calls() {  # 2*F(n+1)-1
	awk -v n="$1" 'BEGIN { a = 0; b = 1; for (i = 0; i < n + 1; i++) { t = a + b; a = b; b = t } print 2 * a - 1 }'
}

# uf NAME PROG ARGS...: uftrace record in $TMP/uf.NAME, its graph and reports.
# C names are not demangled: uftrace --demangle=full takes one-letter names
# for builtin types ("a" is "signed char", "f" "float").
uf() {
	local name=$1; shift
	local dm=full
	nm "$TMP/$1" 2>/dev/null | grep -q ' _Z' || dm=no
	(cd "$TMP" && uftrace record --no-libcall --no-event -d "uf.$name" "$@" >/dev/null 2>&1)
	(cd "$TMP" && uftrace graph -d "uf.$name" --demangle=$dm --no-pager 2>/dev/null) > "$TMP/uf.$name.graph"
	(cd "$TMP" && uftrace report -d "uf.$name" -f call --no-pager 2>/dev/null) > "$TMP/uf.$name.calls"
	(cd "$TMP" && uftrace report -d "uf.$name" -f total,total-min,call --no-pager 2>/dev/null) > "$TMP/uf.$name.min"
}

# pf NAME PROG ARGS...: proff record --instrument to $TMP/pf.NAME.trace, its tree, stats and rows
pf() {
	local name=$1; shift
	(cd "$TMP" && "$PROFF" record --instrument -q -o "pf.$name.trace" -- "$@" >/dev/null 2>&1)
	"$PROFF" report -v -i "$TMP/pf.$name.trace" -T > "$TMP/pf.$name.tree" 2>/dev/null
	"$PROFF" record --instrument --stats "$TMP/pf.$name.trace" > "$TMP/pf.$name.stats" 2>/dev/null
	"$PROFF" report -i "$TMP/pf.$name.trace" --no-children -s sym -g none --json 2>/dev/null |
		jq -r '.events[0].rows[] | "\(.calls) \(.min_total_ns) \(.sym) \(.avg_total_ns * .calls)"' > "$TMP/pf.$name.rows"
}

# same_tree NAME UFNAME [--strip-top FUNC]: the whole call tree
same_tree() {
	if python3 "$TREE" "$TMP/uf.$2.graph" "$TMP/pf.$1.tree" "${@:3}" > "$TMP/tree.out" 2>&1; then
		ok "$1: call tree equals uftrace's ($(cat "$TMP/tree.out"))"
	else
		not_ok "$1: call tree differs from uftrace's"; sed 's/^/#   /' "$TMP/tree.out" | cut -c1-300 | head -20
	fi
}

# same_calls NAME UFNAME FUNC...: calls per function, --stats and report
same_calls() {
	local name=$1 ufn=$2; shift 2
	for f in "$@"; do
		u=$(awk -v f="$f" '$2 == f { n += $1 } END { print n + 0 }' "$TMP/uf.$ufn.calls")
		p=$(awk -v f="$f" '!/^#/ && $6 == f { n += $1 } END { print n + 0 }' "$TMP/pf.$name.stats")
		r=$(awk -v f="$f" '$3 == f { n += $1 } END { print n + 0 }' "$TMP/pf.$name.rows")
		if [ "$u" = "$p" ] && [ "$u" = "$r" ] && [ "$u" != 0 ]; then
			ok "$name: $f called $p times (uftrace: $u; proff report Calls: $r)"
		else
			not_ok "$name: $f: proff --stats $p calls, report $r, uftrace $u"
		fi
	done
}

# clean NAME [ANOMALY=N ...]: no lost or unmatched exit, no dropped event
# (and the anomalies named have the counts given)
clean() {
	local name=$1; shift
	local line; line=$(grep '^# anomalies:' "$TMP/pf.$name.stats")
	local want="lost exit 0, before trace 0, unmatched exit 0, dropped 0"
	for kv in "$@"; do
		if ! grep -q "${kv%%=*} ${kv#*=}," <<<"$line"; then
			not_ok "$name: expected ${kv%%=*} ${kv#*=}: $line"; return
		fi
	done
	if grep -q "$want" <<<"$line"; then ok "$name: no resynchronisation ($line)"; else not_ok "$name: $line"; fi
}

# ns of uftrace's "12.345 us" (fields $1 $2 of a line)
UF_NS='function ns(v, u) { return u == "s" ? v * 1e9 : u == "ms" ? v * 1e6 : u == "us" ? v * 1e3 : v }'

# same_times NAME PROG: burn2/burn shortest-call ratio within 20 % of
# uftrace's, each shortest call within a factor of 2.5 of uftrace's. A shared
# machine can slow every call of one function in one run (seen on CI: burn2's
# 30 shortest calls 3x burn's in both tools' runs; on two vCPUs that share a
# core, a call that runs beside another thread's burn is slower), so a miss
# re-records both (uftrace, then proff) up to four times. A shortest call is the least disturbed
# one, so each function's is the shortest over the attempts so far (in each
# tool): one slowed run of either function then costs nothing.
same_times() {
	local name=$1 prog=$2 try pb pb2 ub ub2 pr ur good b b2 c c2
	pb=0 pb2=0 ub=0 ub2=0
	least() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > 0 && (b <= 0 || a < b)) ? a : b }'; }
	for try in 1 2 3 4 5; do
		if [ "$try" -gt 1 ]; then uf "$name" "$prog"; pf "$name" "$prog"; fi
		# uftrace report -f total,total-min,call: TOTAL UNIT MIN UNIT CALLS NAME
		read -r c c2 < <(awk "$UF_NS"' $6 == "burn" { b = ns($3, $4) } $6 == "burn2" { b2 = ns($3, $4) }
			END { print b + 0, b2 + 0 }' "$TMP/uf.$name.min")
		# proff rows: CALLS MIN NAME TOTAL
		read -r b b2 < <(awk '$3 == "burn" { b = $2 } $3 == "burn2" { b2 = $2 } END { print b + 0, b2 + 0 }' "$TMP/pf.$name.rows")
		ub=$(least "$c" "$ub"); ub2=$(least "$c2" "$ub2"); pb=$(least "$b" "$pb"); pb2=$(least "$b2" "$pb2")
		pr=$(awk -v a="$pb2" -v b="$pb" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
		ur=$(awk -v a="$ub2" -v b="$ub" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }')
		good=$(awk -v p="$pr" -v u="$ur" -v b="$pb" -v b2="$pb2" -v c="$ub" -v c2="$ub2" 'BEGIN {
			print (u > 0 && p > 0.8 * u && p < 1.2 * u && c > 0 && b > c / 2.5 && b < c * 2.5 &&
			       c2 > 0 && b2 > c2 / 2.5 && b2 < c2 * 2.5) ? 1 : 0 }')
		[ "$good" = 1 ] && break
	done
	local att=""; [ "$try" -gt 1 ] && att=", attempt $try"
	if awk -v p="$pr" -v u="$ur" 'BEGIN { exit !(u > 0 && p > 0.8 * u && p < 1.2 * u) }'; then
		ok "$name: burn2/burn shortest calls $pr, uftrace $ur (within 20 %$att)"
	else
		not_ok "$name: burn2/burn shortest calls: proff $pb2 / $pb ns, uftrace $ub2 / $ub ns (not within 20 %, the shortest of 5 attempts)"
	fi
	for f in "burn $pb $ub" "burn2 $pb2 $ub2"; do
		set -- $f
		if awk -v p="$2" -v u="$3" 'BEGIN { exit !(u > 0 && p > u / 2.5 && p < u * 2.5) }'; then
			ok "$name: $1 shortest call $2 ns, uftrace $3 ns (within a factor of 2.5$att)"
		else
			not_ok "$name: $1 shortest call $2 ns, uftrace $3 ns (not within a factor of 2.5, the shortest of 5 attempts)"
		fi
	done
}

build() {  # build OUT SRC [flags...]
	local out=$1 src=$2; shift 2
	local cc=gcc; case $src in *.cc) cc=g++;; esac
	$cc $FLAGS "$@" -o "$TMP/$out" "$SRC/$src" -ldl 2>"$TMP/cc.err" ||
		{ not_ok "build $out"; sed 's/^/#   /' "$TMP/cc.err" | head -5; return 1; }
}

# ---- the programs of tests/cli/instrument.sh: counts, and now trees ------------------
build fib fib.c && { uf fib ./fib 24; pf fib ./fib 24
	same_tree fib fib; same_calls fib fib fib main; clean fib
	want=$(fib_calls 24); p=$(awk '!/^#/ && $6 == "fib" { print $1 }' "$TMP/pf.fib.stats")
	if [ "$p" = "$want" ]; then ok "fib(24): exactly $want calls"; else not_ok "fib(24): $p calls, expected $want"; fi; }
build threads threads.c && { uf threads ./threads 8 2000; pf threads ./threads 8 2000
	same_tree threads threads; same_calls threads threads worker step leaf main; clean threads; }
build fork fork.c && { uf fork ./fork; pf fork ./fork
	same_tree fork fork; same_calls fork fork a b c; clean fork; }
build exceptions exceptions.cc && { uf exceptions ./exceptions; pf exceptions ./exceptions
	same_tree exceptions exceptions; same_calls exceptions exceptions outer mid thrower main; clean exceptions; }
build exec exec.c && { uf exec ./exec; pf exec ./exec
	same_tree exec exec; same_calls exec exec a b; clean exec; }

# ---- instrumented functions the compiler inlines: their hooks run in the caller's frame ----
for o in -O2 -O3; do
	n=inline$o
	build "$n" inline.c "$o" && { uf "$n" "./$n"; pf "$n" "./$n"
		same_tree "$n" "$n"; same_calls "$n" "$n" work sq twice clamp leaf burn burn2; clean "$n"
		same_times "$n" "./$n"; }
done

# ---- C++: templates, lambdas, std::sort, std::map, exceptions, 8 threads ------------------
for fp in "" -fno-omit-frame-pointer; do
	n=cxx${fp:+-fp}
	build "$n" cxx.cc $fp && { uf "$n" "./$n"; pf "$n" "./$n"
		same_tree "$n" "$n"; same_calls "$n" "$n" work descend; clean "$n"
		same_times "$n" "./$n"
		# the standard library's functions are far apart: bytes per call
		size=$(stat -c %s "$TMP/pf.$n.trace"); calls=$(awk '/^# proff trace/ { print $9 }' "$TMP/pf.$n.stats")
		if [ "$size" -le $((calls * 8)) ]; then ok "$n: trace is at most 8 bytes per call ($size bytes, $calls calls)"
		else not_ok "$n: trace has $size bytes for $calls calls (more than 8 per call)"; fi; }
done

# ---- tail calls ---------------------------------------------------------------------------
build tailcall tailcall.c && { uf tailcall ./tailcall; pf tailcall ./tailcall
	same_tree tailcall tailcall; same_calls tailcall tailcall first second third even odd; clean tailcall; }

# ---- longjmp out of deep recursion (uftrace: the exception twin) ---------------------------
if build ljdeep ljdeep.c && g++ $FLAGS -x c++ -DUSE_THROW -o "$TMP/ljdeep-throw" "$SRC/ljdeep.c"; then
	uf ljdeep-throw ./ljdeep-throw; pf ljdeep ./ljdeep
	same_tree ljdeep ljdeep-throw; same_calls ljdeep ljdeep-throw rec leave after main
	# every frame the 20 jumps left (200 + 1 each) closed at its jump marker
	clean ljdeep longjmp=4020
fi

# ---- signal handlers: on the thread's stack and on an alternate stack ----------------------
build signal signal.c && { uf signal ./signal; pf signal ./signal
	same_tree signal signal; same_calls signal signal poke on_usr1 on_usr2 work; clean signal; }

# ---- fork, then exec in the child --------------------------------------------------------
build forkexec forkexec.c && { uf forkexec ./forkexec; pf forkexec ./forkexec
	same_tree forkexec forkexec; same_calls forkexec forkexec before in_child image2 after; clean forkexec; }

# ---- dlopen of an instrumented library, from an instrumented program and from a plain one ----
if gcc -O2 -g -finstrument-functions -fPIC -shared -o "$TMP/plugin.so" "$SRC/plugin.c" &&
   build dlopen dlopen.c && gcc -O2 -g -o "$TMP/dlopen-plain" "$SRC/dlopen.c" -ldl; then
	uf dlopen ./dlopen ./plugin.so; pf dlopen ./dlopen ./plugin.so
	same_tree dlopen dlopen; same_calls dlopen dlopen plugin_fn plugin_leaf main; clean dlopen
	# uftrace refuses a program that is not instrumented ("Can't find 'mcount'
	# symbol"): the plain program's tree is uftrace's of the instrumented one
	# without its main
	pf dlopen-plain ./dlopen-plain ./plugin.so
	same_tree dlopen-plain dlopen --strip-top main; same_calls dlopen-plain dlopen plugin_fn plugin_leaf
	clean dlopen-plain
else
	not_ok "build the dlopen programs"
fi

finish
