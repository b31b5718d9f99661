#!/bin/bash
# report-summary.sh — oracle test: proff report's summaries of a perf.data
# file (--stats: the records of each type and each event's samples; --tasks:
# the threads as a fork tree; --mmaps: with each one's maps) against perf
# report's, on files recorded here:
# a forking, threaded program, python3 (many forks), two events, a
# compressed recording (-z), a short system-wide one (-a) and a pipe
# recording on stdin.
source "$(dirname "$0")/../lib.sh"

W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/calls" "$ROOT/tests/data/report/calls.c" 2>"$TMP/cc.err" ||
	{ not_ok "build calls.c"; cat "$TMP/cc.err"; finish; }
if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
rec() { local out=$1; shift; perf record -q -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; return 1; }; }
rec "$W/calls.data" -e cpu-clock -g -- "$W/calls" || not_ok "record calls"
rec "$W/two.data" -e cpu-clock,task-clock -- "$W/calls" || not_ok "record calls, two events"
rec "$W/py.data" -e cpu-clock -- python3 -c 'import subprocess
for i in range(20): subprocess.run(["true"])' || not_ok "record python3"
files="$W/calls.data $W/two.data $W/py.data"
if rec "$W/z.data" -z -e cpu-clock -- "$W/calls"; then files="$files $W/z.data"; else skip "perf record -z (no zstd here)"; fi
if rec "$W/sys.data" -a -e cpu-clock -- sleep 0.2; then files="$files $W/sys.data"; else skip "perf record -a"; fi

for f in $files; do
	for o in --stats --tasks --mmaps; do
		perf report -i "$f" $o >"$TMP/perf.out" 2>/dev/null
		"$PROFF" report -i "$f" $o >"$TMP/proff.out" 2>"$TMP/proff.err"
		grep -q . "$TMP/perf.out" || not_ok "perf report $o printed something: $(basename "$f")"
		check_same "report $o: $(basename "$f")" "$TMP/perf.out" "$TMP/proff.out"
	done
done
# a pipe recording (perf record -o -: ATTR and the other header records in
# the stream) read from stdin
perf record -q -o - -e cpu-clock -- "$W/calls" 2>/dev/null >"$W/pipe.data"
for o in --stats --tasks --mmaps; do
	perf report -i - $o <"$W/pipe.data" >"$TMP/perf.out" 2>/dev/null
	"$PROFF" report -i - $o <"$W/pipe.data" >"$TMP/proff.out" 2>"$TMP/proff.err"
	grep -q . "$TMP/perf.out" || not_ok "perf report $o printed something: stdin"
	check_same "report $o: a pipe recording on stdin" "$TMP/perf.out" "$TMP/proff.out"
done
# a file that is not perf.data: one line naming it, non-zero exit
printf 'not a perf.data file at all\n' >"$W/bad.data"
for o in --stats --tasks --mmaps; do
	"$PROFF" report -i "$W/bad.data" $o >"$TMP/proff.out" 2>"$TMP/proff.err"
	rc=$?
	[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/proff.err")" = 1 ] && grep -q "bad.data" "$TMP/proff.err" &&
		ok "report $o of a bad file: one error line, exit $rc" ||
		{ not_ok "report $o of a bad file: one error line (rc $rc)"; sed 's/^/#   /' "$TMP/proff.err"; }
done
finish
