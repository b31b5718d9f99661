#!/bin/bash
# tests/cli/formats.sh — pprof and folded stacks end to end (lib/formats,
# proff convert):
#   - round trips: perf.data -> pprof -> proff report is the perf.data's
#     report (every event, many option sets); an exact trace -> pprof -> report
#     keeps every column but the per-call ones; folded -> pprof -> folded is
#     the identity; pprof -> pprof keeps the report;
#   - formats are known by content, from files and standard input (a pipe, a
#     redirected file, a slow writer; perf.data's pipe stream still works);
#   - bad input: truncated and corrupt gzip and protobuf, huge declared
#     lengths, string indices out of range, unknown and repeated ids,
#     negative values, folded lines without a count, negative, fractional,
#     overflowing or two counts, empty frames: one error line naming the file
#     and the byte offset (pprof) or the line (folded), a non-zero exit;
#   - proff convert's usage errors.
# go tool pprof and stackcollapse-perf.pl are the oracles of
# tests/oracle/pprof.sh and tests/oracle/folded.sh.
source "$(dirname "$0")/../lib.sh"
D=$ROOT/tests/data
W=$TMP/w; mkdir -p "$W"
strip() { sed '/^# (Tip/d'; }
trim_end() { python3 -c 'import sys; l = sys.stdin.read().split("\n")
while l and l[-1] in ("", "#"): l.pop()
print("\n".join(l))'; }

# ---- perf.data -> pprof -> report ---------------------------------------------------------
for f in small small-z small-pipe small-be; do
	"$PROFF" convert "$D/perfdata/$f.data" "$W/$f.pb.gz" 2>"$W/err" || { not_ok "convert $f.data"; cat "$W/err"; continue; }
	for opts in "" "--no-children" "-s dso,sym" "-s pid,comm,dso,sym -g none" "-s tid,sym --no-children -g caller" \
		"-n -g folded" "-g fractal,0.5,callee" "--percent-limit 2" "--comms sh" "-q -s sym --no-children"; do
		"$PROFF" report -i "$D/perfdata/$f.data" $opts 2>&1 | strip > "$W/a.txt"
		"$PROFF" report -i "$W/$f.pb.gz" $opts 2>&1 | strip > "$W/b.txt"
		check_same "perf.data -> pprof -> report: $f.data ${opts:-(defaults)}" "$W/a.txt" "$W/b.txt"
	done
done
# two events: each sample type's report is that event's part of the perf.data's
"$PROFF" convert "$D/perfdata/small-two.data" "$W/two.pb"
"$PROFF" report -i "$D/perfdata/small-two.data" | strip > "$W/a.txt"
for e in cpu-clock task-clock; do
	awk -v e="$e" '/^# Samples/ { on = index($0, "event '"'"'" e "'"'"'") > 0 } on' "$W/a.txt" | trim_end > "$W/a-$e.txt"
	"$PROFF" report -i "$W/two.pb" --sample-type "$e" | strip | sed -n '/^# Samples/,$p' | trim_end > "$W/b-$e.txt"
	check_same "two events -> pprof (not gzipped) -> report --sample-type $e: that event's report" "$W/a-$e.txt" "$W/b-$e.txt"
done
n=$(python3 -c 'import gzip,sys; d=open(sys.argv[1],"rb").read(); print(d[:2] == b"\x1f\x8b")' "$W/two.pb")
[ "$n" = False ] && ok ".pb is not compressed" || not_ok ".pb is not compressed"
n=$(python3 -c 'import sys; d=open(sys.argv[1],"rb").read(); print(d[:2] == b"\x1f\x8b")' "$W/small.pb.gz")
[ "$n" = True ] && ok ".pb.gz is gzip" || not_ok ".pb.gz is gzip"

# pprof -> pprof keeps the report
"$PROFF" convert "$W/small.pb.gz" "$W/again.pprof"
"$PROFF" report -i "$W/small.pb.gz" | strip > "$W/a.txt"
"$PROFF" report -i "$W/again.pprof" | strip | sed 's/again\.pprof/small.pb.gz/' > "$W/b.txt"
check_same "pprof -> pprof (.pprof) -> report unchanged" "$W/a.txt" "$W/b.txt"

# ---- an exact trace -> pprof ---------------------------------------------------------------
RT=$(dirname "$PROFF")/libproff-instrument.so
if [ -s "$RT" ] && command -v gcc >/dev/null; then
	gcc -O2 -g -finstrument-functions -pthread -o "$W/threads" "$D/instrument/threads.c" &&
		"$PROFF" record --instrument -q -o "$W/t.trace" -- "$W/threads" 3 500 >/dev/null 2>&1
	"$PROFF" convert "$W/t.trace" "$W/t.pb.gz" || not_ok "convert an exact trace"
	for opts in "" "--no-children -s sym" "-s tid,sym -g none"; do
		# the per-call columns (times, calls, avg/min/max) are the trace's alone
		"$PROFF" report -i "$W/t.trace" $opts --json | jq -c '.events[].rows[] | del(.calls, .self_ns, .total_ns, .avg_total_ns, .min_total_ns, .max_total_ns)' > "$W/a.txt"
		"$PROFF" report -i "$W/t.pb.gz" $opts --json | jq -c '.events[].rows[]' > "$W/b.txt"
		if [ -s "$W/a.txt" ]; then check_same "exact trace -> pprof -> report rows: ${opts:-(defaults)}" "$W/a.txt" "$W/b.txt"
		else not_ok "exact trace report"; fi
	done
	ev=$("$PROFF" report -i "$W/t.pb.gz" --json | jq -r '.events[0].event')
	[ "$ev" = exact-time ] && ok "exact trace -> pprof: event exact-time" || not_ok "exact trace -> pprof: event $ev"
else
	skip "exact trace -> pprof (no runtime or gcc)"
fi

# ---- folded -------------------------------------------------------------------------------
"$PROFF" convert "$D/formats/small.folded" "$W/s.pb.gz" && "$PROFF" convert "$W/s.pb.gz" "$W/s.folded"
check_same "folded -> pprof -> folded is the identity" "$D/formats/small.folded" "$W/s.folded"
"$PROFF" convert --to pb "$D/formats/small.folded" - | "$PROFF" convert - - --to folded > "$W/s2.folded"
# source lines: a folded frame has none (perf's ??:0), the same in every file,
# so two files whose functions come in other orders pair by function
printf 'main;a;b 10\nmain;c 5\n[unknown];x 3\n' >"$W/l1.folded"
printf '[unknown];x 4\nmain;c 6\nmain;a;b 9\n' >"$W/l2.folded"
"$PROFF" report -i "$W/l1.folded" -s srcline --no-children -g none -q | awk 'NF' >"$W/l1.src"
printf '   100.00%%  ??:0\n' | check_same "folded: every frame's source line is ??:0" - "$W/l1.src"
"$PROFF" diff -s sym,srcline "$W/l1.folded" "$W/l2.folded" | grep -v '^#' | awk 'NF' >"$W/l12.diff"
[ "$(wc -l <"$W/l12.diff")" = 3 ] && [ "$(awk '$1 ~ /%$/ && $2 ~ /^[-+][0-9.]+%$/ && $NF == "??:0"' "$W/l12.diff" | wc -l)" = 3 ] \
	&& ok "folded: diff -s sym,srcline pairs the functions of two files" \
	|| { not_ok "folded: diff -s sym,srcline pairs the functions of two files"; sed 's/^/#   /' "$W/l12.diff"; }
check_same "folded -> pprof -> folded through standard input and output" "$D/formats/small.folded" "$W/s2.folded"
"$PROFF" report -i "$D/formats/small.folded" -s comm,pid,tid,dso,sym -g none --no-children -q | sed 's/  */ /g' > "$W/r.txt"
if grep -q '^ 34\.88% server 101:server 101:server \[unknown\] \[\.\] deflate$' "$W/r.txt" &&
	grep -q '^ 5\.48% server 100:server 100:server \[kernel.kallsyms\] \[k\] ksys_write$' "$W/r.txt" &&
	grep -q ' libc.so.6 \[\.\] \[libc.so.6\]$' "$W/r.txt"; then
	ok "folded: thread prefix, kernel frames, a dso's unresolved frame"
else
	not_ok "folded: report"; sed 's/^/#   /' "$W/r.txt"
fi
printf 'main;a;b 10\nmain;a 5\n\nmain;c 1\r\n' > "$W/plain.folded"
"$PROFF" report -i "$W/plain.folded" -g none --json | jq -r '.events[0].rows[] | "\(.comm) \(.sym) \(.self_period) \(.children_period)"' > "$W/r.txt"
printf '%s\n' "[unknown] main 0 16" "[unknown] a 5 15" "[unknown] b 10 10" "[unknown] c 1 1" > "$W/want.txt"
check_same "folded without a thread prefix, blank lines and CRLF" "$W/want.txt" "$W/r.txt"
"$PROFF" convert "$W/plain.folded" - --to folded > "$W/p2.folded"
printf '%s\n' "main;a 5" "main;a;b 10" "main;c 1" > "$W/want.txt"
check_same "folded without threads written back without a prefix, sorted" "$W/want.txt" "$W/p2.folded"
gzip -c "$D/formats/small.folded" > "$W/s.folded.gz"
"$PROFF" report -i "$W/s.folded.gz" | strip | sed 's/s\.folded\.gz/small.folded/' > "$W/a.txt"
"$PROFF" report -i "$D/formats/small.folded" | strip > "$W/b.txt"
check_same "gzipped folded stacks are read" "$W/b.txt" "$W/a.txt"

# ---- standard input -------------------------------------------------------------------------
"$PROFF" report -i "$W/small.pb.gz" | strip > "$W/a.txt"
cat "$W/small.pb.gz" | "$PROFF" report -i - | strip > "$W/b.txt"
check_same "pprof from a pipe" "$W/a.txt" "$W/b.txt"
"$PROFF" report -i - < "$W/small.pb.gz" | strip > "$W/b.txt"
check_same "pprof from a redirected file" "$W/a.txt" "$W/b.txt"
(sleep 0.3; head -c 5 "$W/small.pb.gz"; sleep 0.3; tail -c +6 "$W/small.pb.gz") | "$PROFF" report -i - | strip > "$W/b.txt"
check_same "pprof from a slow writer" "$W/a.txt" "$W/b.txt"
"$PROFF" report -i "$D/formats/small.folded" | strip > "$W/a.txt"
cat "$D/formats/small.folded" | "$PROFF" report -i - | strip | sed 's/(stdin)/x/' > "$W/b.txt"
sed 's|'"$D"'/formats/small.folded|x|' "$W/a.txt" > "$W/a2.txt"
check_same "folded from a pipe" "$W/a2.txt" "$W/b.txt"
"$PROFF" report -i "$D/perfdata/small-pipe.data" | strip > "$W/a.txt"
cat "$D/perfdata/small-pipe.data" | "$PROFF" report -i - | strip > "$W/b.txt"
check_same "perf.data's pipe stream from a pipe (nothing consumed by the format check)" "$W/a.txt" "$W/b.txt"
"$PROFF" report -i - < "$D/perfdata/small.data" | strip > "$W/b.txt"
"$PROFF" report -i "$D/perfdata/small.data" | strip > "$W/a.txt"
check_same "perf.data as a redirected file" "$W/a.txt" "$W/b.txt"

# ---- -> perf.data ---------------------------------------------------------------------------
# the raw samples in their order, threads, maps, callchains: perf report and
# proff report of the written file print the source's report
for f in small small-be small-two; do
	"$PROFF" convert "$D/perfdata/$f.data" "$W/rt-$f.data" 2>"$W/err" || { not_ok "convert $f.data to perf.data"; cat "$W/err"; continue; }
	for opts in "" "-s pid,sym" "--no-children -s dso,sym" "-g fractal,0.5,callee" "-s tid,dso,sym -n"; do
		"$PROFF" report -i "$D/perfdata/$f.data" $opts 2>&1 | strip > "$W/a.txt"
		"$PROFF" report -i "$W/rt-$f.data" $opts 2>&1 | strip > "$W/b.txt"
		check_same "perf.data -> perf.data -> proff report: $f.data ${opts:-(defaults)}" "$W/a.txt" "$W/b.txt"
	done
	if command -v perf >/dev/null; then
		# the kernel's map keeps the recorded _text address as its pgoff:
		# a reader relocates its kallsyms by it (the lowest sampled
		# address there moved every kernel symbol by that much)
		ktext() { perf script -i "$1" --show-mmap-events 2>/dev/null | sed -n 's/.*MMAP -1\/0: .* @ \(0x[0-9a-f]*\)\]: x \[kernel.kallsyms\]_text$/\1/p' | sort -u; }
		want=$(ktext "$D/perfdata/$f.data"); have=$(ktext "$W/rt-$f.data")
		[ -n "$want" ] && [ "$have" = "$want" ] && ok "perf.data -> perf.data: $f.data's kernel map at _text $want" ||
			not_ok "perf.data -> perf.data: $f.data's kernel map at _text ${want:-none}, written ${have:-none}"
		for opts in "" "--no-children -s dso,sym" "-s pid,sym -g caller"; do
			perf report -i "$D/perfdata/$f.data" --stdio $opts 2>/dev/null | grep -v '^# (Tip' > "$W/a.txt"
			perf report -i "$W/rt-$f.data" --stdio $opts 2>/dev/null | grep -v '^# (Tip' > "$W/b.txt"
			check_same "perf.data -> perf.data -> perf report: $f.data ${opts:-(defaults)}" "$W/a.txt" "$W/b.txt"
		done
	fi
done
expect_exit "perf.data output of folded stacks (names without binaries) is refused" 1 \
	"$PROFF" convert "$D/formats/small.folded" "$W/x.data"
grep -q 'function name without its binary' "$TMP/ee.err" && ok "... saying why" || not_ok "perf.data of folded: message"
expect_exit "perf.data output to standard output is refused" 129 "$PROFF" convert --to perf "$D/perfdata/small.data" -

# ---- proff diff across formats -----------------------------------------------------------
"$PROFF" diff "$D/perfdata/small.data" "$W/small.pb.gz" > "$W/d.txt" 2>"$W/err"
n=$(grep -c '^ *[0-9.]*% *+0\.00% ' "$W/d.txt"); bad=$(grep -v '^#' "$W/d.txt" | grep -c '%' )
if [ "$n" -gt 10 ] && [ "$n" = "$bad" ]; then ok "diff perf.data against its pprof: $n rows, every delta +0.00%"
else not_ok "diff perf.data against its pprof ($n of $bad rows +0.00%)"; head -20 "$W/d.txt" | sed 's/^/#   /'; cat "$W/err"; fi
"$PROFF" diff "$D/formats/small.folded" "$W/s.pb.gz" > "$W/d.txt"
n=$(grep -c '^ *[0-9.]*% *+0\.00% ' "$W/d.txt")
[ "$n" = 8 ] && ok "diff folded against its pprof: 8 rows, every delta +0.00%" || { not_ok "diff folded against pprof ($n rows)"; sed 's/^/#   /' "$W/d.txt"; }
"$PROFF" diff --sample-type samples "$W/small.pb.gz" "$W/small.pb.gz" > "$W/d.txt"
grep -q "^# Event 'samples'" "$W/d.txt" && ok "diff --sample-type" || { not_ok "diff --sample-type"; head -3 "$W/d.txt"; }

# ---- labels on profiles without them -------------------------------------------------------
"$PROFF" report -i "$D/perfdata/small.data" -s label:x,comm -g none -q | sed 's/ *$//' > "$W/r.txt"
if grep -q '^ *100\.00% *100\.00% *\[none\] *sh$' "$W/r.txt"; then ok "-s label:NAME on a perf.data: one [none] row"
else not_ok "-s label:NAME on a perf.data"; sed 's/^/#   /' "$W/r.txt" | head; fi
expect_exit "--label on a perf.data is an error" 1 "$PROFF" report -i "$D/perfdata/small.data" --label a=b
expect_exit "-s label without a name is an error" 129 "$PROFF" report -i "$W/small.pb.gz" -s label
expect_exit "two label keys are an error" 1 "$PROFF" report -i "$W/small.pb.gz" -s label:a,label:b
expect_exit "--sample-type that the profile lacks" 1 "$PROFF" report -i "$W/small.pb.gz" --sample-type nope

# ---- bad input ----------------------------------------------------------------------------------
mkdir -p "$W/bad"
"$PROFF" convert --to pb "$D/formats/small.folded" "$W/ok.pb"
python3 - "$W/ok.pb" "$W/small.pb.gz" "$W/bad" <<'PY'
import gzip, os, sys
ok, okgz, out = open(sys.argv[1], 'rb').read(), open(sys.argv[2], 'rb').read(), sys.argv[3]
def w(name, data): open(os.path.join(out, name), 'wb').write(data)
def varint(v):
    b = bytearray()
    while True:
        c = v & 0x7f; v >>= 7
        if v: b.append(c | 0x80)
        else: b.append(c); return bytes(b)
def field(num, payload): return varint(num << 3 | 2) + varint(len(payload)) + payload
def vfield(num, v): return varint(num << 3) + varint(v)
def strs(*ss): return b''.join(field(6, s.encode()) for s in ('',) + ss)
vt = field(1, vfield(1, 1) + vfield(2, 2))                        # sample type ("samples", "count")
fn = field(5, vfield(1, 1) + vfield(2, 3))                        # function 1 named "main"
loc = field(4, vfield(1, 1) + field(4, vfield(1, 1)))             # location 1: a line of function 1
smp = field(2, field(1, varint(1)) + field(2, varint(5)))         # sample: location 1, value 5
good = vt + fn + loc + smp + strs('samples', 'count', 'main')
w('OK-hand.pb', good)
w('trunc-gzip.pb.gz', okgz[:len(okgz) // 2])
bad = bytearray(okgz); 
for i in range(20, min(60, len(bad) - 10)): bad[i] ^= 0x55
w('corrupt-gzip.pb.gz', bytes(bad))
w('gzip-trailing-junk.pb.gz', okgz + b'junk')
w('trunc-proto.pb', ok[:len(ok) * 2 // 3])
w('trunc-proto-in-gzip.pb.gz', gzip.compress(ok[:len(ok) - 3]))
w('huge-length.pb', vt + varint(2 << 3 | 2) + varint(1 << 40) + b'\0' * 8)
w('string-out-of-range.pb', vt + field(5, vfield(1, 1) + vfield(2, 999)) + loc + smp + strs('samples', 'count'))
w('sample-type-string-out-of-range.pb', field(1, vfield(1, 77) + vfield(2, 2)) + fn + loc + smp + strs('samples', 'count', 'main'))
w('dup-location-id.pb', vt + fn + loc + loc + smp + strs('samples', 'count', 'main'))
w('location-id-0.pb', vt + fn + field(4, field(4, vfield(1, 1))) + smp + strs('samples', 'count', 'main'))
w('unknown-location.pb', vt + fn + loc + field(2, field(1, varint(7)) + field(2, varint(5))) + strs('samples', 'count', 'main'))
w('unknown-function.pb', vt + fn + field(4, vfield(1, 1) + field(4, vfield(1, 9))) + smp + strs('samples', 'count', 'main'))
w('unknown-mapping.pb', vt + fn + field(4, vfield(1, 1) + vfield(2, 4) + field(4, vfield(1, 1))) + smp + strs('samples', 'count', 'main'))
w('negative-value.pb', vt + fn + loc + field(2, field(1, varint(1)) + field(2, varint((1 << 64) - 5))) + strs('samples', 'count', 'main'))
w('values-mismatch.pb', vt + fn + loc + field(2, field(1, varint(1)) + field(2, varint(5) + varint(6))) + strs('samples', 'count', 'main'))
w('no-sample-types.pb', fn + loc + smp + strs('samples', 'count', 'main'))
w('no-empty-string.pb', vt + fn + loc + smp + b''.join(field(6, s.encode()) for s in ('x', 'samples', 'count', 'main')))
w('bad-wire-type.pb', vt + varint(2 << 3 | 3) + b'\0' * 4)
w('garbage-sample.pb', vt + fn + loc + field(2, b'\xff\xff\xff') + strs('samples', 'count', 'main'))
w('sum-overflow.pb', vt + fn + loc + field(2, field(1, varint(1)) + field(2, varint((1 << 63) - 1))) * 3 + strs('samples', 'count', 'main'))
# folded
w('no-count.folded', b'a;b;c 10\na;b;c\n')
w('negative-count.folded', b'a;b 10\na;b -5\n')
w('overflow-count.folded', b'a;b 184467440737095516150\n')
w('fraction-count.folded', b'a;b 1.5\n')
w('two-counts.folded', b'a;b 1 2\n')
w('empty-frame.folded', b'a;b 1\na;;b 2\n')
w('count-only.folded', b'a 1\n 5\n')
w('sum-overflow.folded', b'a 18446744073709551615\na 1\n')
PY
for f in "$W"/bad/*; do
	n=$(basename "$f")
	case "$n" in
	OK-*) expect_exit "valid: $n" 0 "$PROFF" report -i "$f"; continue;;
	esac
	timeout 20 "$PROFF" report -i "$f" >"$W/out" 2>"$W/err"; rc=$?
	lines=$(grep -c . "$W/err")
	if [ "$rc" = 0 ] || [ "$rc" -ge 124 ] || grep -q 'Sanitizer\|runtime error' "$W/err"; then
		not_ok "bad input $n: exit $rc"; head -3 "$W/err" | sed 's/^/#   /'; continue
	fi
	if [ "$lines" != 1 ] || ! grep -qF "$n" "$W/err"; then
		not_ok "bad input $n: want one error line naming the file"; head -3 "$W/err" | sed 's/^/#   /'; continue
	fi
	case "$n" in
	*.folded) grep -q ': line [0-9]' "$W/err" || { not_ok "bad input $n: no line"; cat "$W/err"; continue; };;
	*) grep -q 'byte offset [0-9]' "$W/err" || { not_ok "bad input $n: no byte offset"; cat "$W/err"; continue; };;
	esac
	ok "bad input $n: $(sed 's/^proff: //' "$W/err" | cut -c1-110)"
done

# ---- convert's usage --------------------------------------------------------------------------
expect_exit "convert: unknown --to" 129 "$PROFF" convert --to nope "$W/small.pb.gz" "$W/x"
expect_exit "convert: an output name without a known ending" 129 "$PROFF" convert "$W/small.pb.gz" "$W/x.bin"
expect_exit "convert: standard output without --to" 129 "$PROFF" convert "$W/small.pb.gz" -
expect_exit "convert: one argument" 129 "$PROFF" convert "$W/small.pb.gz"
expect_exit "convert: a timeline of a sampled profile" 1 "$PROFF" convert "$D/perfdata/small.data" "$W/x.trace.json"
expect_exit "convert: a missing input" 1 "$PROFF" convert "$W/nonexistent.data" "$W/x.folded"
expect_exit "convert: an unwritable output" 1 "$PROFF" convert "$W/small.pb.gz" "$W/no/such/dir/x.folded"
finish
