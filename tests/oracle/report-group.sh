#!/bin/bash
# report-group.sh — oracle test: `proff report` of files with event groups
# (perf record -e '{a,b}') against `perf report --stdio`: perf's group
# output (one report per group, every member's overhead side by side, the
# default for such a file), --no-group (each event apart), Self and
# Children, -n and --show-total-period, a named group of three events.
source "$(dirname "$0")/../lib.sh"

W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
	-o "$W/calls" "$ROOT/tests/data/report/calls.c" 2>"$TMP/cc.err" ||
	{ not_ok "build calls.c"; cat "$TMP/cc.err"; finish; }
if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
rec() { local out=$1; shift; perf record -q -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; return 1; }; }
rec "$W/grp.data" -e '{cpu-clock,task-clock}' -- "$W/calls" || not_ok "record a group"
rec "$W/grpg.data" -g -e '{cpu-clock,task-clock}' -- "$W/calls" || not_ok "record a group with -g"
rec "$W/named.data" -e 'grp1{cpu-clock,task-clock,page-faults}' -- "$W/calls" || not_ok "record a named group of three"
# two file-local functions named spin, one in the executable, one in a
# library: a member's rows are paired with the leader's by dso and address
# (perf's sort__sym_cmp), not by name (tests/data/report/twins.c)
cc -O1 -g -fPIC -shared -DTWIN_LIB -o "$W/libtwin.so" "$ROOT/tests/data/report/twins.c" 2>"$TMP/cc.err" &&
cc -O1 -g -o "$W/twins" "$ROOT/tests/data/report/twins.c" -L"$W" -ltwin -Wl,-rpath,"$W" 2>>"$TMP/cc.err" ||
	{ not_ok "build twins.c"; cat "$TMP/cc.err"; }
rec "$W/twins.data" -e '{cpu-clock,task-clock}' -- "$W/twins" || not_ok "record a group of twins"

strip_tip() { grep -v '^# (Tip:'; }
cmp_report() {   # cmp_report NAME FILE OPTS...
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	grep -q '%' "$TMP/perf.out" || not_ok "perf report printed rows: $name"
	DIFF_LINES=30 check_same "report $name: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}

cmp_report "group" "$W/grp.data" --no-children -g none
cmp_report "group, comm" "$W/grp.data" -s comm
cmp_report "group -n --show-total-period" "$W/grp.data" -n --show-total-period -s sym
cmp_report "group -q" "$W/grp.data" -q --group
cmp_report "--no-group" "$W/grp.data" --no-group
cmp_report "group graph" "$W/grpg.data" --no-children
cmp_report "group children" "$W/grpg.data" --children -g none
cmp_report "group children -n" "$W/grpg.data" --children -g none -n --show-total-period
cmp_report "group children, sym" "$W/grpg.data" --children -g none -s sym
cmp_report "group dso,sym -n" "$W/grpg.data" --no-children -s dso,sym -n
cmp_report "--no-group children" "$W/grpg.data" --no-group --no-children -g none
cmp_report "named group of three" "$W/named.data" --no-children -g none
cmp_report "named group of three, graph" "$W/named.data"
cmp_report "group, two symbols of one name" "$W/twins.data" -s sym
cmp_report "group, two symbols of one name, --no-children" "$W/twins.data" -s sym --no-children
[ "$(perf report -i "$W/twins.data" --stdio -s sym 2>/dev/null | grep -c '\] spin$')" = 2 ] &&
	ok "group twins: perf shows two spin rows" || not_ok "group twins: perf shows two spin rows"
# Children with call graphs: rows of equal leader Children and Self may
# stand otherwise than in perf's tree, which the members' rows change
# (docs/compat/report.md); every row is perf's, with perf's values
perf report -i "$W/grpg.data" --stdio 2>/dev/null | grep '%  [a-z]' | sort >"$TMP/perf.rows"
"$PROFF" report -i "$W/grpg.data" 2>/dev/null | grep '%  [a-z]' | sort >"$TMP/proff.rows"
[ -s "$TMP/perf.rows" ] && cmp -s "$TMP/perf.rows" "$TMP/proff.rows" &&
	ok "report group children graph: perf's rows and values ($(wc -l <"$TMP/perf.rows") rows)" ||
	{ not_ok "report group children graph: perf's rows and values"; diff "$TMP/perf.rows" "$TMP/proff.rows" | head -10 | sed 's/^/#   /'; }
finish
