#!/bin/bash
# branch.sh — oracle test: `proff report` in branch mode (perf report -b:
# rows of branches, the default when every event has branch stacks) against
# `perf report --stdio` on the same files. Branch stacks are synthetic (no
# LBR on the test machines): the project's tests/tools/mkbranch.py and, when
# present, mkbrstack.py (MKBRSTACK=path, default ../shared/tools of the
# project's parent) add them to a -g recording of tests/data/stream/before.
# Outputs must be equal but for the "(Tip: ...)" line.
source "$(dirname "$0")/../lib.sh"

command -v perf >/dev/null || { skip "branch oracle (no perf)"; finish; }
command -v gcc >/dev/null || { skip "branch oracle (no gcc)"; finish; }
command -v python3 >/dev/null || { skip "branch oracle (no python3)"; finish; }
can_perf_record || { skip "branch oracle (perf record does not work here)"; finish; }

gcc -O0 -g -fno-omit-frame-pointer -fcf-protection=none -o "$TMP/w" "$ROOT"/tests/data/stream/before/*.c 2>"$TMP/gcc.err" ||
	{ not_ok "build workload"; sed 's/^/#   /' "$TMP/gcc.err"; finish; }
perf record -q -e cpu-clock -F 4000 -g -o "$TMP/a.data" "$TMP/w" 100000 >/dev/null 2>&1 || { not_ok "perf record"; finish; }

# perf 6.1 prints fractal mode's remaining-hits line "[...]" from a symbol it
# mallocs without clearing: at random "[...] (inlined)" (docs/compat/report.md);
# that suffix is masked (with --branch-history the line's counts follow it)
strip_tip() { grep -v '^# (Tip:' | sed 's/--\[\.\.\.\] (inlined)\( (calltrace)\)\{0,1\}$/--[...]\1/'; }
cmp_report() {   # cmp_report FILE OPTS...
	local file=$1; shift
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "branch report: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}

MKBRSTACK=${MKBRSTACK:-$ROOT/../shared/tools/mkbrstack.py}
gens=(mkbranch)
python3 "$ROOT/tests/tools/mkbranch.py" "$TMP/a.data" "$TMP/mkbranch.data" --seed 1 ||
	{ not_ok "mkbranch.py"; finish; }
if [ -f "$MKBRSTACK" ]; then
	if python3 "$MKBRSTACK" "$TMP/a.data" "$TMP/mkbrstack.data" >/dev/null 2>&1; then
		gens+=(mkbrstack)
	else
		not_ok "mkbrstack.py"
	fi
else
	skip "branch mode vs perf on mkbrstack.py data (not found; set MKBRSTACK)"
fi

for g in "${gens[@]}"; do
	F=$TMP/$g.data
	# 1. the default: branch mode, perf's default keys; -b; the usual report
	cmp_report "$F"
	cmp_report "$F" -b
	cmp_report "$F" --no-branch-stack
	cmp_report "$F" --no-branch-stack --no-children -s dso,sym
	# no Children or callchains in branch mode, even asked for
	cmp_report "$F" --children -g
	# 2. the branch keys, alone and together, and with the usual ones
	cmp_report "$F" -s dso_from,dso_to,cycles
	cmp_report "$F" -s cycles,dso_from
	cmp_report "$F" -s dso_to
	cmp_report "$F" -s in_tx
	cmp_report "$F" -s abort
	cmp_report "$F" -s comm,dso_to,in_tx,abort
	cmp_report "$F" -s cpu,dso_from
	cmp_report "$F" -b -s pid,dso_to
	cmp_report "$F" -s sym,dso_to,cycles
	cmp_report "$F" -s dso,sym
	cmp_report "$F" -n -v
	# the plain sym key in branch mode: its address is the target's raw ip (perf's he->ip)
	cmp_report "$F" -s dso,sym -v --percent-limit 0
	cmp_report "$F" -q --percent-limit 2
	cmp_report "$F" --comms w
	# mispredict: perf's comparator is no order (0 equal, 1 not), so its
	# input tree's walks split rows of one value; replayed (tree mode)
	cmp_report "$F" -s mispredict
	cmp_report "$F" -s comm,dso_to,mispredict,cycles
	cmp_report "$F" -s sym,mispredict,cycles
	# srclines of the branches' ends (perf computes them while comparing:
	# the columns are as wide as the values it computed, and a value never
	# computed prints "(null)")
	cmp_report "$F" -s srcline_from,srcline_to
	cmp_report "$F" -s srcline_from
	cmp_report "$F" -s srcline_to
	cmp_report "$F" -s dso_from,srcline_from,cycles
	cmp_report "$F" -s srcline_to,mispredict
done

# 4. --branch-history: each row's callchain is its samples' branch stacks
# (loops removed, each branch's target and source with perf's
# predicted/cycles/iter counts) then what perf leaves of the callchain;
# nodes by address ("sym file:line"); Children (perf's default, caller
# order: a chain entry's row keyed by perf's callchain srcline) and not
# (lean: each path once, over the two generators' data)
F=$TMP/mkbranch.data
[ -f "$TMP/mkbrstack.data" ] && F=$TMP/mkbrstack.data     # mispredicted branches
cmp_report "$F" --branch-history
cmp_report "$F" --branch-history --no-children -g graph,0.5,3,callee,branch
F=$TMP/mkbranch.data
cmp_report "$F" --branch-history -g callee -s sym -n
cmp_report "$F" --branch-history -s pid,dso,sym --percent-limit 1 -g fractal,0.5,caller,count
cmp_report "$F" --branch-history --no-children -g folded,0,caller
cmp_report "$F" --branch-history --no-children -g flat,0
# mispredicted, aborted and typed branches (perf's predicted/abort shares and
# its branch type statistics: COND_BWD, CALL, RET, ... at a target)
if python3 "$ROOT/tests/tools/mkbranch.py" "$TMP/a.data" "$TMP/mix.data" --seed 1 --flags-mix --types; then
	cmp_report "$TMP/mix.data" --branch-history
else
	not_ok "mkbranch.py --flags-mix --types"
fi
expect_exit "--branch-history without branch stacks exits 1" 1 "$PROFF" report -i "$TMP/a.data" --branch-history
if grep -q "Selected --branch-history but no branch data" "$TMP/ee.err"; then ok "--branch-history error message"
else not_ok "--branch-history error message"; sed 's/^/#   /' "$TMP/ee.err" | head -3; fi
# --max-stack cuts the branch stack and the callchain (perf's)
cmp_report "$TMP/mkbranch.data" --branch-history --max-stack 5
# what is not done is refused with one line: other keys
expect_exit "--branch-history -s srcfile exits 129" 129 "$PROFF" report -i "$TMP/mkbranch.data" --branch-history -s srcfile,sym

# a pipe: branch mode with -b (perf has no header feature to go by there)
if perf inject -i "$TMP/mkbranch.data" -o - > "$TMP/br.pipe" 2>/dev/null; then
	perf report -i - --stdio -b < "$TMP/br.pipe" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i - -b < "$TMP/br.pipe" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	check_same "branch report: a pipe, -b" "$TMP/perf.out" "$TMP/proff.out"
	# --branch-history on a pipe: perf prints no branch counts there (no
	# header feature) and no Children
	perf report -i - --stdio --branch-history < "$TMP/br.pipe" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i - --branch-history < "$TMP/br.pipe" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	check_same "branch report: a pipe, --branch-history" "$TMP/perf.out" "$TMP/proff.out"
else
	not_ok "perf inject -o - (a pipe of the branch data)"
fi

# 3. errors: branch keys without branch stacks, -b without them
expect_exit "a branch key without branch stacks exits 129" 129 "$PROFF" report -i "$TMP/a.data" -s dso_from
if grep -q "Invalid --sort key: \`dso_from'" "$TMP/ee.err"; then ok "branch key error message"
else not_ok "branch key error message"; sed 's/^/#   /' "$TMP/ee.err" | head -3; fi
expect_exit "-b without branch stacks exits 1" 1 "$PROFF" report -i "$TMP/a.data" -b
if grep -q "Selected -b but no branch data" "$TMP/ee.err"; then ok "-b error message"
else not_ok "-b error message"; sed 's/^/#   /' "$TMP/ee.err" | head -3; fi
# perf 6.1 adds its IPC columns to a sort naming a symbol key in branch
# mode and crashes on them (any data with cycles): proff refuses
expect_exit "-s symbol_from in branch mode exits 129" 129 "$PROFF" report -i "$TMP/mkbranch.data" -s symbol_from
# a branch stack whose entry count runs past its record: one line naming
# the file, the problem and the byte offset; exit 1
python3 - "$TMP/mkbranch.data" "$TMP/bad.data" > "$TMP/bad.off" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
off, size = struct.unpack_from('<QQ', d, 40)
p = off
while p < off + size:
    t, misc, sz = struct.unpack_from('<IHH', d, p)
    if t == 9:   # a sample whose branch stack ends the record: its nr made 1000
        for q in range(p + 8, p + sz - 8, 8):
            nr = struct.unpack_from('<Q', d, q)[0]
            if 0 < nr <= 64 and q + 8 + nr * 24 == p + sz:
                struct.pack_into('<Q', d, q, 1000)
                open(sys.argv[2], 'wb').write(d)
                print(q + 8)
                sys.exit(0)
    p += sz
sys.exit(1)
PY
if [ -s "$TMP/bad.data" ]; then
	expect_exit "a branch stack past its record's end exits 1" 1 "$PROFF" report -i "$TMP/bad.data"
	if [ "$(wc -l < "$TMP/ee.err")" = 1 ] &&
	   grep -q "^proff: $TMP/bad.data: SAMPLE branch stack nr 1000 does not fit in the record (at byte offset $(cat "$TMP/bad.off"))" "$TMP/ee.err"; then
		ok "the bad branch stack's error line"
	else
		not_ok "the bad branch stack's error line"; sed 's/^/#   /' "$TMP/ee.err" | head -3
	fi
else
	not_ok "make a branch stack past its record's end"
fi
finish
