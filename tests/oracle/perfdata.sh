#!/bin/bash
# tests/oracle/perfdata.sh — the perf.data reader against perf itself, on
# fresh recordings of several kinds (file, -z, pipe, pipe -z, two events,
# tracepoint + cpu-clock, --sample-cpu -d, group leader sampling, -k mono,
# perf stat record, and a big-endian conversion):
#  * every sample (time pid tid period), in delivery order == perf script
#  * record total == perf report -D "TOTAL events"
#  * header text == perf report --header-only -I (minus "captured on")
# Driven through tests/tools/pdtool.c built against the library under test.
source "$(dirname "$0")/../lib.sh"
if ! can_perf_record; then skip "perfdata oracle (perf record does not work here)"; finish; fi
BUILD_DIR=$(dirname "$PROFF")
LIBS=$(pkg-config --libs libdw libelf libzstd zlib 2>/dev/null || echo -ldw -lelf -lzstd -lz)
PDTOOL=$TMP/pdtool
if ! cc -std=gnu17 -O2 -I"$ROOT/include" -o "$PDTOOL" "$ROOT/tests/tools/pdtool.c" "$BUILD_DIR/libproff.a" \
	$LIBS -lstdc++ -lm -lpthread 2>"$TMP/cc.err"; then
	not_ok "build pdtool"; sed 's/^/#   /' "$TMP/cc.err" | head; finish
fi
cd "$TMP" || exit 1
LOOP='i=0; while [ $i -lt 40000 ]; do i=$((i+1)); done; sh -c "i=0; while [ \$i -lt 20000 ]; do i=\$((i+1)); done"'
rec() { local out=$1; shift; perf record -q "$@" -o "$out" -- sh -c "$LOOP" >/dev/null 2>&1; }
recp() { local out=$1; shift; perf record -q "$@" -o - -- sh -c "$LOOP" 2>/dev/null >"$out"; }
rec g.data -e cpu-clock -c 100000 -g
rec z.data -e cpu-clock -c 100000 -g -z
recp p.data -e cpu-clock -c 100000 -g
recp pz.data -e cpu-clock -c 100000 -g -z
rec two.data -e cpu-clock,task-clock -c 100000
rec tp.data -e sched:sched_switch -e cpu-clock -c 100000
recp tpp.data -e sched:sched_switch -e cpu-clock -c 100000
rec cpu.data -e cpu-clock -F 2000 --sample-cpu -d
rec grp.data -e '{cpu-clock,task-clock}:S'
rec clk.data -e cpu-clock -c 100000 -k mono
rec bm.data -e cpu-clock -c 100000 -g --buildid-mmap
perf stat record -o stat.data -e cpu-clock,task-clock -- sh -c "$LOOP" >/dev/null 2>&1
python3 "$ROOT/tests/tools/perfdata-swap.py" g.data be.data || not_ok "perfdata-swap.py"

samples_perf() {
	perf script -G -i "$1" -F pid,tid,time,period --ns 2>/dev/null |
		awk '/^ *[0-9]+\// {split($1,a,"/"); t=$2; gsub("[:.]","",t); printf "%s %s %s %s\n", t, a[1], a[2], $3}'
}
for f in g z p pz two tp tpp cpu grp clk stat bm be; do
	[ -s $f.data ] || { skip "$f.data (recording failed)"; continue; }
	src=$f.data; [ $f = be ] && src=g.data
	samples_perf $src > $f.want
	"$PDTOOL" samples $f.data 2>$f.err | awk '{printf "%s %s %s %s\n", $1, $2, $3, $5}' > $f.got
	if [ -s $f.want ] || [ $f = stat ]; then check_same "samples in order == perf script: $f" $f.want $f.got
	else skip "samples $f (perf script printed nothing)"; fi
	want=$(perf report -D -i $src 2>/dev/null | sed -n 's/^ *TOTAL events: *//p')
	got=$("$PDTOOL" check $f.data | sed -n 's/^records \([0-9]*\).*/\1/p')
	if [ "$want" = "$got" ]; then ok "record total == perf -D: $f ($got)"; else not_ok "record total $f: perf $want, proff $got"; fi
	if [ $f != be ]; then
		perf report -i $f.data --header-only -I 2>/dev/null | grep -v '^# captured on' > $f.hwant
		"$PDTOOL" header $f.data -I | grep -v '^# captured on' > $f.hgot
		check_same "header == perf --header-only -I: $f" $f.hwant $f.hgot
	fi
done
# leader sampling (PERF_SAMPLE_READ, group): one sample per member with the
# counter delta as period, attributed to the member's event — as perf script
if [ -s grp.data ]; then
	perf script -i grp.data -F time,period,event --ns 2>/dev/null |
		awk '{t=$1; gsub("[:.]","",t); e=$3; sub(":$","",e); print t, $2, e}' > grp.ewant
	"$PDTOOL" check grp.data | sed -n 's/^event \([0-9]*\) \(.*\)/\1 \2/p' > grp.names
	"$PDTOOL" samples grp.data | awk 'NR==FNR {n[$1]=$2; next} {print $1, $5, n[$6]}' grp.names - > grp.egot
	check_same "group read samples with event names == perf script" grp.ewant grp.egot
fi
# dump: the record lines of perf report -D (MMAP/MMAP2 incl. the build-id
# form, COMM, FORK, EXIT, SAMPLE with callchains) == pd_dump's, as a set
for f in g bm cpu; do
	[ -s $f.data ] || continue
	perf report -D -i $f.data 2>/dev/null | grep -E '^([0-9]+ )+0x[0-9a-f]+ \[|^\.\.\. FP chain|^\.\.\.\.\. ' | grep -v 'PERF_RECORD_\(CPU_MAP\|FINISHED_INIT\|ID_INDEX\|EVENT_UPDATE\|THREAD_MAP\|FINISHED_ROUND\)' | sort > $f.dwant
	"$PDTOOL" dump $f.data | grep -E '^([0-9]+ )+0x[0-9a-f]+ \[|^\.\.\. FP chain|^\.\.\.\.\. ' | grep -v 'PERF_RECORD_\(CPU_MAP\|FINISHED_INIT\|ID_INDEX\|EVENT_UPDATE\|THREAD_MAP\|FINISHED_ROUND\)' | sort > $f.dgot
	check_same "dump record lines == perf report -D: $f" $f.dwant $f.dgot
done
# stdin streaming gives the same samples as the saved pipe file
"$PDTOOL" samples - < p.data | awk '{printf "%s %s %s %s\n", $1, $2, $3, $5}' > p.stdin
check_same "stdin stream == pipe file" p.got p.stdin
# big-endian: full dump identical to the little-endian original
"$PDTOOL" dump g.data > g.dump; "$PDTOOL" dump be.data > be.dump
check_same "big-endian dump == little-endian dump" g.dump be.dump
finish
