#!/bin/bash
# tests/oracle/system.sh — system-wide recordings (`perf record -a -g`)
# against perf 6.1 on the same files: every process of the machine, the
# idle task, kernel frames outside the recorded kernel map.
#
# A short -a recording of a small workload is compared as it is (report
# modes, diff of two). A busy test machine has few idle samples of its own,
# so tests/tools/mkidle.py turns half the kernel samples of a -g recording
# into the idle task's (pid 0: perf names it "swapper") and ends their
# chains in start_kernel / x86_64_start_kernel, which lie in .init.text,
# beyond the kernel map perf records (perf stretches that map over the
# kallsyms text symbols once it loads them).
source "$(dirname "$0")/../lib.sh"

command -v perf >/dev/null || { skip "system oracle (no perf)"; finish; }
can_perf_record || { skip "system oracle (perf record does not work here)"; finish; }
perf record -q -a -e cpu-clock -o "$TMP/probe-a.data" true >/dev/null 2>&1 ||
	{ skip "system oracle (perf record -a does not work here)"; finish; }

W="$TMP/w"; mkdir -p "$W"
rec() { local out=$1; shift; perf record -q -e cpu-clock -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { sed 's/^/#   /' "$TMP/rec.err"; return 1; }; }
work='i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; ls -R /usr/share/doc >/dev/null'
rec "$W/a1.data" -a -g -F 499 -- sh -c "$work" || not_ok "record -a"
rec "$W/a2.data" -a -g -F 499 -- sh -c "$work" || not_ok "record -a again"

strip_tip() { grep -v '^# (Tip:' | sed 's/--\[\.\.\.\] (inlined)$/--[...]/'; }
cmp_report() {   # cmp_report NAME FILE OPTS...
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" --stdio "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "system $name: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}
# cmp_report_graph NAME FILE OPTS...: like cmp_report; where the two differ,
# they are compared again with the sibling branches of equal percentage in one
# order (tests/tools/graph_ties.py): a machine's other processes (gcc's
# stripped cc1 during a build) bring unresolved frames beside named ones under
# one node, where perf's order of tied siblings follows the samples' arrival
# (docs/compat/report.md); every line, number and branch must still be equal.
cmp_report_graph() {
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" --stdio "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	if cmp -s "$TMP/perf.out" "$TMP/proff.out"; then ok "system $name: $(basename "$file") $*"; return; fi
	python3 "$ROOT/tests/tools/graph_ties.py" < "$TMP/perf.out" > "$TMP/perf.canon"
	python3 "$ROOT/tests/tools/graph_ties.py" < "$TMP/proff.out" > "$TMP/proff.canon"
	DIFF_LINES=30 check_same "system $name: $(basename "$file") $* (tied sibling branches in another order)" \
		"$TMP/perf.canon" "$TMP/proff.canon"
}
cmp_report "-a" "$W/a1.data" --no-children -g none
cmp_report "-a" "$W/a1.data" --no-children -s pid,sym -g none
cmp_report_graph "-a" "$W/a1.data" --no-children -s comm,dso
cmp_report "-a" "$W/a1.data" -g none
perf diff "$W/a1.data" "$W/a2.data" 2>/dev/null | strip_tip > "$TMP/perf.out"
"$PROFF" diff "$W/a1.data" "$W/a2.data" 2>/dev/null | strip_tip > "$TMP/proff.out"
check_same "system: diff of two -a recordings" "$TMP/perf.out" "$TMP/proff.out"

# the idle task and .init.text
rec "$W/g.data" -g -- sh -c "$work" || not_ok "record -g"
sk=$(awk '$3 == "start_kernel" { print $1; exit }' /proc/kallsyms)
xk=$(awk '$3 == "x86_64_start_kernel" { print $1; exit }' /proc/kallsyms)
init=()
if [ -n "$sk" ] && [ -n "$xk" ] && [ "$sk" != 0000000000000000 ]; then
	init=("$(printf '%x' $((0x$sk + 0x20)))" "$(printf '%x' $((0x$xk + 0x30)))")
fi
if python3 "$ROOT/tests/tools/mkidle.py" "$W/g.data" "$W/idle.data" "${init[@]}" 2>"$TMP/mk.err"; then
	cmp_report "idle task" "$W/idle.data" --no-children -s pid,sym -g none
	grep -q ' 0:swapper ' "$TMP/proff.out" && ok "system: pid 0 is swapper" || not_ok "system: pid 0 is swapper"
	cmp_report_graph "idle task" "$W/idle.data"
	cmp_report_graph "idle task" "$W/idle.data" --no-children -s comm,dso,sym -g caller
	if [ ${#init[@]} = 2 ]; then
		grep -q 'start_kernel$' "$TMP/proff.out" && ok "system: .init.text frames named" || not_ok "system: .init.text frames named"
	else
		skip "system: .init.text frames (no start_kernel in /proc/kallsyms)"
	fi
	perf diff -s comm,sym "$W/idle.data" "$W/g.data" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" diff -s comm,sym "$W/idle.data" "$W/g.data" 2>/dev/null | strip_tip > "$TMP/proff.out"
	check_same "system: diff -s comm,sym with the idle task" "$TMP/perf.out" "$TMP/proff.out"
else
	not_ok "mkidle.py"; sed 's/^/#   /' "$TMP/mk.err"
fi
finish
