#!/bin/bash
# dprofpp.sh — oracle test: `proff dprofpp OPTS f` against the real
# `dprofpp OPTS f` (Devel::DProf 20110802.00), byte for byte, on the SAME
# tmon.out files: profiles made here with `perl -d:DProf` from the programs in
# tests/data/dprof/ (recursion, many subs, long wrapping names, die/eval, goto
# &sub, AUTOLOAD, anonymous subs, deep trees), the committed fixtures (the
# old-format one included), variants of them with larger overhead figures in
# the header (negative times, cut fields) and cut-short (garbled) copies.
# Also: DPROFPP_OPTS, -p/-Q, and clear errors on malformed input.
source "$(dirname "$0")/../lib.sh"

D="$ROOT/tests/data/dprof"
case $PROFF in /*) ;; *) PROFF="$PWD/$PROFF" ;; esac   # some checks run in other directories
W="$TMP/w"; mkdir -p "$W"

if ! command -v dprofpp >/dev/null || ! perl -e 'require Devel::DProf' 2>/dev/null; then
	skip "dprofpp oracle (install libdevel-dprof-perl)"
	finish
fi

# ---- profiles -------------------------------------------------------------
files=()
for p in "$D"/*.pl; do
	b=$(basename "$p" .pl)
	mkdir -p "$W/run-$b"
	if (cd "$W/run-$b" && perl -d:DProf "$p" >/dev/null 2>&1) && [ -s "$W/run-$b/tmon.out" ]; then
		mv "$W/run-$b/tmon.out" "$W/$b.tmon"
		files+=("$W/$b.tmon")
	else
		not_ok "perl -d:DProf $b.pl"
	fi
done
for f in "$D"/*.tmon.out; do cp "$f" "$W/"; files+=("$W/$(basename "$f")"); done
# known-by-construction variants: bigger overhead figures make times negative
for b in longnames deep recursion; do
	[ -f "$W/$b.tmon" ] || continue
	sed -e 's/^\$over_utime=[-0-9]*; \$over_stime=[-0-9]*; \$over_rtime=[-0-9]*;/$over_utime=7; $over_stime=3; $over_rtime=9;/' \
		"$W/$b.tmon" > "$W/$b-over.tmon"
	files+=("$W/$b-over.tmon")
done

# ---- comparisons ------------------------------------------------------------
cmp_pp() {   # cmp_pp FILE OPTS...
	local f=$1; shift
	dprofpp "$@" "$f" > "$TMP/exp.out" 2>/dev/null; local e1=$?
	"$PROFF" dprofpp "$@" "$f" > "$TMP/act.out" 2>"$TMP/act.err"; local e2=$?
	if [ $e1 = 0 ] && [ $e2 != 0 ]; then
		not_ok "dprofpp $* $(basename "$f") (proff exit $e2)"; head -3 "$TMP/act.err" | sed 's/^/#   /'; return
	fi
	if [ $e1 != 0 ] && [ $e2 = 0 ]; then
		not_ok "dprofpp $* $(basename "$f") (dprofpp failed, proff did not)"; return
	fi
	DIFF_LINES=20 check_same "dprofpp $* $(basename "$f")" "$TMP/exp.out" "$TMP/act.out"
}

single=( "" -a -z -l -v -d -U -E -I "-O 3" "-O 0" "-O 100" -q -r -s -u -T -t -S -R -A -F -P
	"-G main::.*e" "-f main::[a-l]" "-g main::catcher" "-g main::fib" "-g main::level30" "-g main::mid" "-g main::work_17" )
combos=( "-I -d" "-a -d" "-l -d" "-v -I" "-v -d" "-U -R" "-q -O 5" "-S -r" "-S -R" "-S -A" "-T -R" "-t -R"
	"-u -I" "-r -u" "-s -r" "-u -s -r" "-G main::l.* -P" "-G __ANON__ -R" "-G main::burn -A" "-R -v -d -O 40"
	"-g main::catcher -S" "-g main::fib -T" "-g main::level30 -u" "-g main::mid -f l" "-f e -R" "-t -G main::m.*"
	"-I -O 70" "-a -O 200" "-z -E" "-dlz" "-uO 4" "-T -t" "-O -3" "-O 2.5" "-f ." "-G nomatch" "-q -S" )
for f in "${files[@]}"; do
	for o in "${single[@]}"; do
		# shellcheck disable=SC2086
		cmp_pp "$f" $o
	done
	case $(basename "$f") in
	goto_die_anon.tmon.out|tree.tmon|longnames-over.tmon|deep-over.tmon|recursion.tmon|manysubs.tmon)
		for o in "${combos[@]}"; do
			# shellcheck disable=SC2086
			cmp_pp "$f" $o
		done ;;
	esac
done

# cut-short profiles: dprofpp prints the open frames and fails; -F fakes the exits
for b in goto_die_anon deep; do
	[ -f "$W/$b.tmon" ] || continue
	n=$(wc -l < "$W/$b.tmon")
	head -n $((n * 2 / 3)) "$W/$b.tmon" > "$W/$b-cut.tmon"
	for o in "" -F "-F -S" "-F -T" "-F -t" "-F -I" "-G main::burn -F" "-G main::level.* -F -A"; do
		# shellcheck disable=SC2086
		cmp_pp "$W/$b-cut.tmon" $o
	done
done

# DPROFPP_OPTS is parsed first, the command line adds to it
DPROFPP_OPTS="-u -O 5" dprofpp "$W/tree.tmon" > "$TMP/exp.out" 2>/dev/null
DPROFPP_OPTS="-u -O 5" "$PROFF" dprofpp "$W/tree.tmon" > "$TMP/act.out" 2>/dev/null
check_same "DPROFPP_OPTS=-u -O 5" "$TMP/exp.out" "$TMP/act.out"
DPROFPP_OPTS="-I $W/tree.tmon" dprofpp -q > "$TMP/exp.out" 2>/dev/null
DPROFPP_OPTS="-I $W/tree.tmon" "$PROFF" dprofpp -q > "$TMP/act.out" 2>/dev/null
check_same "DPROFPP_OPTS names the file" "$TMP/exp.out" "$TMP/act.out"
(cd "$W/run-tree" && cp ../tree.tmon tmon.out && dprofpp -l > "$TMP/exp.out" 2>/dev/null &&
	"$PROFF" dprofpp -l > "$TMP/act.out" 2>/dev/null)
check_same "default file tmon.out" "$TMP/exp.out" "$TMP/act.out"

# on a terminal wider than 80 columns the Name column grows
if command -v script >/dev/null && [ -f "$W/longnames-over.tmon" ]; then
	script -q -c "stty cols 123; dprofpp '$W/longnames-over.tmon'" /dev/null > "$TMP/exp.out" 2>&1
	script -q -c "stty cols 123; '$PROFF' dprofpp '$W/longnames-over.tmon'" /dev/null > "$TMP/act.out" 2>&1
	check_same "Name column on a 123-column terminal" "$TMP/exp.out" "$TMP/act.out"
else
	skip "terminal width (no script(1))"
fi

# -p runs perl -d:DProf first; -Q stops there
mkdir -p "$W/p" && rm -f "$W/p/tmon.out"
(cd "$W/p" && "$PROFF" dprofpp -p "$D/recursion.pl" -Q >/dev/null 2>&1)
if [ -s "$W/p/tmon.out" ]; then ok "-p script -Q writes tmon.out"; else not_ok "-p script -Q writes tmon.out"; fi
(cd "$W/p" && dprofpp -T > "$TMP/exp.out" 2>/dev/null && "$PROFF" dprofpp -T > "$TMP/act.out" 2>/dev/null)
check_same "-T of the -p profile" "$TMP/exp.out" "$TMP/act.out"
(cd "$W/p" && "$PROFF" dprofpp -p "$D/recursion.pl" -l > "$TMP/act.out" 2>/dev/null)
if grep -q 'main::fib' "$TMP/act.out" && grep -q '^%Time ExclSec' "$TMP/act.out"; then ok "-p script reports"; else not_ok "-p script reports"; fi
expect_exit "-Q without -p is a usage error" 129 "$PROFF" dprofpp -Q "$W/tree.tmon"

# ---- malformed input: one clear error, file and offset, no crash ---------------
bad() {   # bad NAME CONTENT EXPECTED-TEXT
	printf '%b' "$2" > "$W/bad.tmon"
	"$PROFF" dprofpp "$W/bad.tmon" > /dev/null 2> "$TMP/bad.err"; local rc=$?
	if [ $rc = 1 ] && grep -q "bad.tmon" "$TMP/bad.err" && grep -q -- "$3" "$TMP/bad.err"; then
		ok "malformed: $1"
	else
		not_ok "malformed: $1 (exit $rc)"; sed 's/^/#   /' "$TMP/bad.err" | head -3
	fi
}
H='#fOrTyTwO\n$hz=100;\n$XS_VERSION='"'"'DProf 20110802.00'"'"';\n# All values are given in HZ\n$over_utime=0; $over_stime=0; $over_rtime=0;\n$over_tests=10000;\n$rrun_utime=1; $rrun_stime=0; $rrun_rtime=1;\n$total_marks=2\n\nPART2\n'
bad "not a profile" 'hello\n' "Not a perl profile"
bad "empty file" '' "Not a perl profile"
bad "no PART2" '#fOrTyTwO\n$hz=100;\n' "PART2"
bad "no hz" '#fOrTyTwO\n$x=1;\nPART2\n' 'hz'
bad "header garbage" '#fOrTyTwO\n$hz=100;\nthis is not perl\nPART2\n' "header line"
bad "unknown line kind" "$H"'& 2 main f\n+ 2\n? 2\n' "at byte offset"
bad "undefined id" "$H"'+ 7\n' "before its '&' definition"
bad "exit without entry" "$H"'& 2 main f\n- 2\n' "missing an enter time stamp"
bad "bad tick count" "$H"'@ 1 x 2\n' "tick counts"
bad "missing exit" "$H"'& 2 main f\n+ 2\n' "never exited"
bad "empty body line" "$H"'\n' "empty line"
bad "NUL byte" "$H"'+ \00002\n' "NUL"
expect_exit "missing file" 1 "$PROFF" dprofpp "$W/does-not-exist"
expect_exit "unknown option" 129 "$PROFF" dprofpp -Y "$W/tree.tmon"
expect_exit "-O without value" 129 "$PROFF" dprofpp -O
finish
