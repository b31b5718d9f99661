#!/bin/bash
# tests/oracle/folded.sh — folded stacks as FlameGraph's stackcollapse-perf.pl
# writes them (../shared/tools/FlameGraph, the field's own script) read by
# proff: `perf script | stackcollapse-perf.pl --tid --kernel` of a perf.data
# gives the Self/Children report of the perf.data itself —
#   - every resolved (comm, pid, tid, symbol) row's Self and Children periods
#     equal proff report's of the perf.data (which tests/oracle/report.sh
#     holds to perf report);
#   - the rows of the program's functions print the percentages perf report
#     prints for them;
# and proff's own folded output of the perf.data is stackcollapse-perf.pl's
# (--tid --kernel), stack for stack, where perf resolved every frame.
source "$(dirname "$0")/../lib.sh"

FG=${FLAMEGRAPH:-$ROOT/../shared/tools/FlameGraph}
if [ ! -f "$FG/stackcollapse-perf.pl" ]; then
	not_ok "stackcollapse-perf.pl not found in $FG (set FLAMEGRAPH)"
	finish
fi
if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
W=$TMP/w; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -o "$W/work" "$ROOT/tests/data/formats/work.c" || { not_ok "build work.c"; finish; }
perf record -q -g -e cpu-clock -c 100000 -o "$W/work.data" "$W/work" 8000000 >/dev/null 2>&1 || { not_ok "perf record"; finish; }
perf script -i "$W/work.data" -F comm,pid,tid,time,period,event,ip,sym,dso 2>/dev/null |
	perl "$FG/stackcollapse-perf.pl" --tid --kernel > "$W/work.folded"
[ -s "$W/work.folded" ] || { not_ok "stackcollapse-perf.pl wrote nothing"; finish; }

rows() {   # FILE OPTS...: "comm pid tid sym self children" per resolved row
	# (summed by name: folded stacks have names only, two dsos' _start are one)
	"$PROFF" report -i "$1" -s comm,pid,tid,sym -g none --json "${@:2}" |
		jq -r '.events[0].rows[] | select(.sym | test("^(0x[0-9a-f]+|0+|\\[.*\\])$") | not) |
			"\(.comm) \(.pid) \(.tid) \(.sym) \(.self_period) \(.children_period // 0)"' |
		awk '{ k = $1 " " $2 " " $3 " " $4; s[k] += $5; c[k] += $6 } END { for (k in s) print k, s[k], c[k] }' | sort
}
for mode in --children --no-children; do
	rows "$W/work.data" $mode > "$W/a.txt"
	rows "$W/work.folded" $mode > "$W/b.txt"
	if [ -s "$W/a.txt" ]; then
		check_same "stackcollapse-perf.pl's stacks read as folded: the perf.data's rows ($mode, $(wc -l < "$W/a.txt") rows)" "$W/a.txt" "$W/b.txt"
	else
		not_ok "no rows in the perf.data's report"
	fi
done

# perf report's own percentages for the program's functions
for mode in --children --no-children; do
	perf report -i "$W/work.data" --stdio -s sym -g none $mode 2>/dev/null |
		grep -E ' \[\.\] (leaf_a|leaf_b|mid|rec|main)$' | sed 's/  */ /g' > "$W/perf.txt"
	"$PROFF" report -i "$W/work.folded" -s sym -g none $mode |
		grep -E ' \[\.\] (leaf_a|leaf_b|mid|rec|main)$' | sed 's/  */ /g' > "$W/proff.txt"
	if [ "$(wc -l < "$W/perf.txt")" -ge 2 ]; then
		check_same "folded: perf report's percentages of the program's functions ($mode)" \
			<(sort "$W/perf.txt") <(sort "$W/proff.txt")
	else
		not_ok "perf report shows the program's functions ($mode)"
	fi
done

# the other way: proff's folded output against stackcollapse-perf.pl's, for
# the stacks whose frames perf resolved (unresolved ones are named
# differently: stackcollapse-perf.pl "[dso]" per frame, proff per address)
"$PROFF" convert "$W/work.data" "$W/proff.folded" || not_ok "convert perf.data to folded"
resolved() { grep -v '\[' "$1" | grep -v ';0x' | sort; }
resolved "$W/work.folded" > "$W/a.txt"
resolved "$W/proff.folded" > "$W/b.txt"
if [ "$(wc -l < "$W/a.txt")" -ge 5 ]; then
	check_same "proff convert to folded equals stackcollapse-perf.pl --tid --kernel ($(wc -l < "$W/a.txt") stacks)" "$W/a.txt" "$W/b.txt"
else
	not_ok "stackcollapse-perf.pl resolved too few stacks"
fi
finish
