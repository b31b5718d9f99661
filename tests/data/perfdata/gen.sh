#!/bin/bash
# gen.sh — regenerate the small perf.data fixtures of the perf.data reader
# tests, and the oracle outputs (perf script / perf report) they are checked
# against. Needs perf (root or perf_event_paranoid <= 1) and python3.
#
#   small.data        perf record -e cpu-clock -c 200000 -g      (file mode)
#   small-z.data      same with -z (zstd COMPRESSED records)
#   small-pipe.data   same written to a pipe (-o -)
#   small-two.data    -e cpu-clock,task-clock (two events, IDENTIFIER)
#   small-be.data     small.data converted to big-endian by tests/tools/perfdata-swap.py
#   *.samples.txt     perf script: "time pid tid period" of every sample, time order
#   *.header.txt      perf report --header-only -I
set -eu
cd "$(dirname "$0")"
TOOLS=../../tools
perf record -q -e cpu-clock -c 200000 -g -o small.data -- sh -c 'i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done'
perf record -q -e cpu-clock -c 200000 -g -z -o small-z.data -- sh -c 'i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done'
perf record -q -e cpu-clock -c 200000 -g -o - -- sh -c 'i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done' > small-pipe.data
perf record -q -e cpu-clock,task-clock -c 200000 -o small-two.data -- sh -c 'i=0; while [ $i -lt 60000 ]; do i=$((i+1)); done'
python3 $TOOLS/perfdata-swap.py small.data small-be.data
for f in small small-z small-pipe small-two; do
	perf script -G -i $f.data -F pid,tid,time,period --ns 2>/dev/null |
		awk '/^ *[0-9]+\// {split($1,a,"/"); t=$2; gsub("[:.]","",t); printf "%s %s %s %s\n", t, a[1], a[2], $3}' > $f.samples.txt
	perf report -i $f.data --header-only -I 2>/dev/null | grep -v '^# captured on' > $f.header.txt
	perf report -D -i $f.data 2>/dev/null | sed -n 's/^ *TOTAL events: *//p' > $f.total.txt
done
chmod 644 *.data
