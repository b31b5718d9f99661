#!/bin/bash
# tests/oracle/jit.sh — JIT code named from /tmp/perf-PID.map, against perf
# 6.1 on the same recordings: anonymous executable mappings (private
# //anon and shared /dev/zero) of tests/data/jit/jit.c become "[JIT] tid
# PID" with the map file's symbols. The map file is written by the test
# after the recording, in the forms perf reads (clean, with lines of other
# forms, missing, a directory, owned by another user, with and without -f);
# --symfs finds a copy of it under DIR. Then python3.12 -X perf (pyenv's,
# where it exists) under --call-graph dwarf.
source "$(dirname "$0")/../lib.sh"

command -v perf >/dev/null || { skip "jit oracle (no perf)"; finish; }
command -v gcc >/dev/null || { skip "jit oracle (no gcc)"; finish; }
[ "$(uname -m)" = x86_64 ] || { skip "jit oracle (x86-64 code)"; finish; }
can_perf_record || { skip "jit oracle (perf record does not work here)"; finish; }

W="$TMP/w"; mkdir -p "$W"
gcc -O2 -o "$W/jit" "$ROOT/tests/data/jit/jit.c" 2>"$TMP/cc.err" || { not_ok "build jit.c"; sed 's/^/#   /' "$TMP/cc.err"; finish; }
perf record -q -e cpu-clock -g -o "$W/jit.data" "$W/jit" 150 "$W/pid" >/dev/null 2>"$TMP/rec.err" ||
	{ not_ok "record jit"; sed 's/^/#   /' "$TMP/rec.err"; finish; }
read -r pid a b c < "$W/pid"
MAP=/tmp/perf-$pid.map
trap 'rm -rf "$MAP"' EXIT

strip() { grep -v '^# (Tip:'; }
# Rows without graphs, and the graphs of the JIT rows (--dsos): the order of
# tied branches elsewhere (page faults of 1 sample each) is no JIT matter
cmp_jit() {   # cmp_jit NAME [OPTS...]: perf report vs proff report with the map file as it is now
	local name=$1; shift
	perf report -i "$W/jit.data" --stdio "$@" 2>/dev/null | strip > "$TMP/perf.out"
	"$PROFF" report -i "$W/jit.data" --stdio "$@" 2>"$TMP/proff.err" | strip > "$TMP/proff.out"
	check_same "jit: $name ${*:-(default)}" "$TMP/perf.out" "$TMP/proff.out"
}
hex() { printf '%x' $((0x$1 + ${2:-0})); }

# clean: one line per function
printf '%s 9 first_fn\n%s 9 py::second:file.py\n%s 9 third in /dev/zero\n' "$a" "$b" "$c" > "$MAP"
cmp_jit clean -g none
cmp_jit clean --no-children -g none
# Children mode with --dsos: perf gives a row the filter verdict of the
# first sample that adds it (the sample's own ip), so a caller of the JIT
# code without a map (0xc3 here) is shown or not by sample order; proff
# shows a row when any of its samples passes (docs/compat/report.md). Every
# row perf prints is proff's, with the same values; proff's other rows are
# frames of JIT samples' callchains, or a JIT function whose first sample in
# the file was an interrupt taken in it (perf then hides the row)
perf report -i "$W/jit.data" --stdio -g none --dsos "[JIT] tid $pid" 2>/dev/null | grep -v '^#' | grep . > "$TMP/perf.rows"
"$PROFF" report -i "$W/jit.data" --stdio -g none --dsos "[JIT] tid $pid" 2>/dev/null | grep -v '^#' | grep . > "$TMP/proff.rows"
missing=$(grep -cvxFf "$TMP/proff.rows" "$TMP/perf.rows")
extra=$(grep -vxFf "$TMP/perf.rows" "$TMP/proff.rows" | grep -cvE ' 0\.00%  jit  *\[[.k]\] 0x|  jit  *\[\.\] (first_fn|py::second:file\.py|third in /dev/zero)$')
if [ "$missing" = 0 ] && [ "$extra" = 0 ] && grep -q first_fn "$TMP/proff.rows"; then
	ok "jit: clean --dsos [JIT] tid in Children mode: perf's rows, and callers only besides"
else
	not_ok "jit: clean --dsos [JIT] tid in Children mode ($missing of perf's rows missing, $extra other rows)"
	diff "$TMP/perf.rows" "$TMP/proff.rows" | sed 's/^/#   /'
fi
cmp_jit clean --no-children --dsos "[JIT] tid $pid"
cmp_jit clean --no-children -s dso,sym -g none
grep -q 'JIT\] tid' "$TMP/proff.out" && ok "jit: [JIT] tid rows" || not_ok "jit: [JIT] tid rows"
[ ! -s "$TMP/proff.err" ] && ok "jit: a clean map gives no warning" || { not_ok "jit: a clean map gives no warning"; sed 's/^/#   /' "$TMP/proff.err"; }

# lines of other forms: perf reads some its own way (0x prefixes, tabs,
# leading blanks, a last line without newline loses its last byte), skips
# others (names of 2 bytes or less, no name): the same symbols, one warning
{
	echo "garbage line"
	echo ""
	echo "zz"
	printf '0x%s 0x4 hex_prefixed\n' "$a"
	printf '%s\t2\ttabbed_fn\n' "$(hex "$a" 4)"
	printf '%s 9 ab\n' "$(hex "$a" 6)"
	printf '  %s 9 second_spaced\n' "$b"
	printf '%s 0 zero_sized\n' "$(hex "$c" 6)"
	printf '%s 3 third_no_newline' "$c"
} > "$MAP"
cmp_jit garbage -g none
cmp_jit garbage --no-children --dsos "[JIT] tid $pid"
cmp_jit garbage --no-children -s sym -g none
if [ "$(grep -c 'lines are not "START SIZE name"' "$TMP/proff.err")" = 1 ] && grep -q "$MAP: 8 of 9 lines" "$TMP/proff.err"; then
	ok "jit: lines not of the map's form warned once with a count"
else
	not_ok "jit: lines not of the map's form warned once with a count"; sed 's/^/#   /' "$TMP/proff.err"
fi

# no map file, a directory in its place: addresses, as perf
rm -f "$MAP"
cmp_jit missing --no-children -g none
mkdir "$MAP"
cmp_jit directory --no-children -g none
grep -q "$MAP: not a regular file" "$TMP/proff.err" && ok "jit: a directory in the map's place is said" ||
	{ not_ok "jit: a directory in the map's place is said"; sed 's/^/#   /' "$TMP/proff.err"; }
rmdir "$MAP"

# owned by another user than root: perf 6.1 reads it all the same (older
# perfs ignored it); proff too, and says so
printf '%s 9 first_fn\n%s 9 second_fn\n%s 9 third_fn\n' "$a" "$b" "$c" > "$MAP"
if [ "$(id -u)" = 0 ] && chown nobody "$MAP" 2>/dev/null; then
	cmp_jit "other owner" --no-children -g none
	grep -q "$MAP: owned by uid [0-9]*, neither root nor you" "$TMP/proff.err" && ok "jit: a map of another user is said" ||
		{ not_ok "jit: a map of another user is said"; sed 's/^/#   /' "$TMP/proff.err"; }
	chown root "$MAP"
else
	skip "jit: map of another user (needs root)"
fi

# --symfs DIR: the copy under DIR/tmp is read (perf reads /tmp only: the
# expected output is perf's with that copy in /tmp; under a symfs neither
# reads the kernel's symbols unless --kallsyms names them; the libraries and
# the build-id cache, which --symfs moves to DIR/.debug, are linked in)
mkdir -p "$W/symfs/tmp"
ln -s /usr "$W/symfs/usr"
[ -d "${HOME:-/nonexistent}/.debug" ] && ln -s "$HOME/.debug" "$W/symfs/.debug"
printf '%s 9 symfs_first\n%s 9 symfs_second\n%s 9 symfs_third\n' "$a" "$b" "$c" > "$W/symfs$MAP"
cp "$W/symfs$MAP" "$MAP"
perf report -i "$W/jit.data" --stdio --no-children -g none 2>/dev/null | strip > "$TMP/perf.out"
printf '%s 9 not_this\n' "$a" > "$MAP"
"$PROFF" report -i "$W/jit.data" --stdio --no-children -g none --symfs "$W/symfs" \
	--kallsyms /proc/kallsyms 2>/dev/null | strip > "$TMP/proff.out"
check_same "jit: --symfs DIR reads DIR/tmp/perf-PID.map" "$TMP/perf.out" "$TMP/proff.out"

# diff of the recording against itself with the map: pairs the JIT rows
printf '%s 9 first_fn\n%s 9 second_fn\n%s 9 third_fn\n' "$a" "$b" "$c" > "$MAP"
perf diff "$W/jit.data" "$W/jit.data" 2>/dev/null | strip > "$TMP/perf.out"
"$PROFF" diff "$W/jit.data" "$W/jit.data" 2>/dev/null | strip > "$TMP/proff.out"
check_same "jit: diff" "$TMP/perf.out" "$TMP/proff.out"

# a binary gone since the recording (and not in the build-id cache: -N; a
# build-id of its own, -O1): addresses, as perf prints them, and said once
# on stderr
gcc -O1 -pthread -o "$W/gone" "$ROOT/tests/data/dwarf/work.c" 2>/dev/null &&
if perf record -q -N -e cpu-clock -g -o "$W/gone.data" "$W/gone" 3000 >/dev/null 2>&1; then
	rm -f "$W/gone"
	perf report -i "$W/gone.data" --stdio --no-children -g none 2>/dev/null | strip > "$TMP/perf.out"
	"$PROFF" report -i "$W/gone.data" --stdio --no-children -g none 2>"$TMP/proff.err" | strip > "$TMP/proff.out"
	check_same "jit: a binary that is gone" "$TMP/perf.out" "$TMP/proff.out"
	if [ "$(grep -c 'binar[a-z]* with samples not found' "$TMP/proff.err")" = 1 ] && grep -q "1 binary .*$W/gone" "$TMP/proff.err"; then
		ok "jit: a binary not found is said once"
	else
		not_ok "jit: a binary not found is said once"; sed 's/^/#   /' "$TMP/proff.err"
	fi
else
	not_ok "record a binary to remove"
fi

# python3.12 -X perf writes its own map (py::function:file); its frames
# are reached by unwinding with DWARF (pyenv's build has no frame pointers)
PY=$(ls /root/.pyenv/versions/3.12*/bin/python3.12 2>/dev/null | head -1)
if [ -n "$PY" ] && [ -x "$PY" ]; then
	perf record -q -e cpu-clock --call-graph dwarf -F 1000 -o "$W/py.data" "$PY" -X perf -c 'import json
def f(n):
    s = 0
    for i in range(n): s += len(json.dumps({"a": i}))
    return s
f(20000)' >/dev/null 2>"$TMP/rec.err" || not_ok "record python3.12 -X perf"
	perf report -i "$W/py.data" --stdio --no-children --no-inline 2>/dev/null | strip > "$TMP/perf.out"
	"$PROFF" report --no-inline -i "$W/py.data" --stdio --no-children 2>/dev/null | strip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "jit: python3.12 -X perf --call-graph dwarf" "$TMP/perf.out" "$TMP/proff.out"
	grep -q 'py::' "$TMP/proff.out" && ok "jit: python3.12's py:: frames named" || not_ok "jit: python3.12's py:: frames named"
	pypid=$(perf report -i "$W/py.data" --stdio -F pid -s pid 2>/dev/null | grep -o '^ *[0-9]*' | head -1 | tr -d ' ')
	[ -n "$pypid" ] && rm -f "/tmp/perf-$pypid.map"
else
	skip "jit: python3.12 -X perf (no pyenv python3.12 here)"
fi

# python3.13 -X perf_jit writes jit-PID.dump; perf inject --jit turns it
# into /tmp/jitted-PID-N.so ELF files and MMAP2 records of them, read as
# any ELF. Children rows (where the py:: frames are), with perf's frame
# "0xffffffffffffffff" at some chains' ends (docs/symbols.md)
PY=$(ls /root/.pyenv/versions/3.13*/bin/python3.13 2>/dev/null | head -1)
if [ -n "$PY" ] && [ -x "$PY" ]; then
	perf record -q -k 1 -e cpu-clock --call-graph dwarf -F 500 -o "$W/pj.data" "$PY" -X perf_jit -c 'import json
def f(n):
    s = 0
    for i in range(n): s += len(json.dumps({"a": i}))
    return s
f(15000)' >/dev/null 2>"$TMP/rec.err" || not_ok "record python3.13 -X perf_jit"
	pjpid=$(perf report -i "$W/pj.data" --stdio -F pid -s pid 2>/dev/null | grep -o '^ *[0-9]*' | head -1 | tr -d ' ')
	if perf inject --jit -i "$W/pj.data" -o "$W/pji.data" 2>"$TMP/inj.err"; then
		perf report -i "$W/pji.data" --stdio --no-inline -g none 2>/dev/null | strip > "$TMP/perf.out"
		"$PROFF" report --no-inline -i "$W/pji.data" --stdio -g none 2>/dev/null | strip > "$TMP/proff.out"
		check_same "jit: perf inject --jit of python3.13 -X perf_jit (jitted-PID-N.so)" "$TMP/perf.out" "$TMP/proff.out"
		grep -q 'jitted-.*py::' "$TMP/proff.out" && ok "jit: jitted-PID-N.so py:: rows" || not_ok "jit: jitted-PID-N.so py:: rows"
	else
		not_ok "perf inject --jit"; sed 's/^/#   /' "$TMP/inj.err"
	fi
	[ -n "$pjpid" ] && rm -f /tmp/jitted-"$pjpid"-*.so "/tmp/jit-$pjpid.dump" "/tmp/perf-$pjpid.map"
else
	skip "jit: python3.13 -X perf_jit (no pyenv python3.13 here)"
fi
finish
