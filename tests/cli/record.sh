#!/bin/bash
# tests/cli/record.sh — end-to-end checks of `proff record` that need no
# oracle: option errors, exit status propagation, the perf.data header it
# writes, perf.data.old, the build-id cache layout (a binary linked with a
# known build-id), -z, SIGINT, a file size limit (write error keeps a readable
# file), hardware-event fallback and the -b error.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
cd "$TMP" || exit 2

# u64 FILE OFFSET: little-endian u64 from the file
u64() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }
fsize() { stat -c %s "$1"; }

expect_exit "no command: usage error" 129 "$PROFF" record
expect_exit "unknown option: usage error" 129 "$PROFF" record --bogus true
expect_exit "unknown event: usage error" 129 "$PROFF" record -e no-such-event true
grep -q "unknown event 'no-such-event'" "$TMP/ee.err" && ok "unknown event named in the message" || not_ok "unknown event message"
expect_exit "-m not a power of two" 129 "$PROFF" record -m 3 true
expect_exit "--call-graph=foo refused" 129 "$PROFF" record --call-graph=foo true
expect_exit "--call-graph=dwarf,70000 refused (max 65528)" 129 "$PROFF" record --call-graph=dwarf,70000 true
expect_exit "--call-graph=dwarf,x refused" 129 "$PROFF" record --call-graph=dwarf,x true
expect_exit "-h" 0 "$PROFF" record -h
grep -q -- '--buildid-dir' "$TMP/ee.out" && ok "-h lists the options" || not_ok "-h output"

if ! "$PROFF" record -q -o probe.data true >/dev/null 2>&1; then
	skip "record (perf_event_open not permitted here)"; finish
fi

export PROFF_BUILDID_DIR=$TMP/cache
have_cc=0
if command -v cc >/dev/null; then
	cat > spin.c <<'CEOF'
#include <stdlib.h>
#include <time.h>
static volatile double sink;
/* ms of CPU time, not of wall time: on a busy host 150 ms of wall time
 * once gave spin no sample */
__attribute__((noinline)) void spin_fn(long ms)
{
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	do {
		for (int i = 0; i < 10000; i++) sink += i;
		clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	} while ((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000 < ms);
}
int main(int argc, char **argv) { spin_fn(argc > 1 ? atol(argv[1]) : 100); return argc > 2 ? atoi(argv[2]) : 0; }
CEOF
	BID=0123456789abcdef0123456789abcdef01234567
	cc -O1 -fno-omit-frame-pointer -Wl,--build-id=0x$BID -o spin spin.c && have_cc=1
fi

# ---- exit status ---------------------------------------------------------------
expect_exit "workload exit status propagated" 3 "$PROFF" record -q -o e.data sh -c 'exit 3'
expect_exit "workload killed by SIGTERM: 128+15" 143 "$PROFF" record -q -o e.data sh -c 'kill -TERM $$'
expect_exit "command not found: 127" 127 "$PROFF" record -q -o e.data ./no-such-command
grep -q "cannot run './no-such-command': No such file or directory" "$TMP/ee.err" && ok "command not found message" || not_ok "command not found message"
expect_exit "-p of a missing process" 1 "$PROFF" record -q -o e.data -p 999999999
grep -q "no such process" "$TMP/ee.err" && ok "-p missing process message" || not_ok "-p message"

# ---- header ------------------------------------------------------------------
"$PROFF" record -q -o h.data sh -c 'i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done'
[ "$(head -c 8 h.data)" = PERFILE2 ] && ok "magic PERFILE2" || not_ok "magic"
[ "$(u64 h.data 8)" = 104 ] && [ "$(u64 h.data 16)" = 144 ] && ok "header size 104, attr_size 144 (attr VER7 + ids)" || not_ok "header sizes"
doff=$(u64 h.data 40); dsz=$(u64 h.data 48)
[ "$dsz" -gt 0 ] && [ $((doff + dsz)) -lt "$(fsize h.data)" ] && ok "data section, then the feature table" || not_ok "data section ($doff+$dsz)"
feat=$(u64 h.data 72)
[ $(( (feat >> 3) & 1 )) = 1 ] && [ $(( (feat >> 12) & 1 )) = 1 ] && [ $(( (feat >> 21) & 1 )) = 1 ] &&
	ok "features HOSTNAME, EVENT_DESC, SAMPLE_TIME" || not_ok "feature bits $feat"

# ---- perf.data / perf.data.old ------------------------------------------------------
mkdir -p d && (cd d && "$PROFF" record -q true && cp perf.data first && "$PROFF" record -q true)
[ -f d/perf.data ] && cmp -s d/first d/perf.data.old && ok "default perf.data; the previous one renamed perf.data.old" || not_ok "perf.data.old"

if [ $have_cc = 1 ]; then
	# ---- build-id cache layout -----------------------------------------------------
	"$PROFF" record -q -o b.data ./spin 150
	entry="$TMP/cache/${TMP#/}/spin/$BID"
	[ -f "$entry/elf" ] && cmp -s "$entry/elf" spin && ok "cache: <dir>/<abs path>/<build-id>/elf is a copy" || not_ok "cache entry $entry"
	[ "$(readlink "$TMP/cache/.build-id/01/23456789abcdef0123456789abcdef01234567")" = "../../${TMP#/}/spin/$BID" ] &&
		ok "cache: .build-id/01/2345... -> ../../<abs path>/<build-id>" || not_ok "cache link"
	od -An -v -tx1 b.data | tr -d ' \n' | grep -q "$BID" && ok "BUILD_ID feature holds the build-id" || not_ok "BUILD_ID in file"
	rm -rf "$TMP/cache2"
	# only binaries with samples are cached: 50 ms of wall time on a busy
	# machine gave spin no sample once
	"$PROFF" record -q --buildid-dir "$TMP/cache2" -o b2.data ./spin 250
	[ -f "$TMP/cache2/${TMP#/}/spin/$BID/elf" ] && ok "--buildid-dir" || not_ok "--buildid-dir"
	rm -rf "$TMP/cache3"
	PROFF_BUILDID_DIR=$TMP/cache3 "$PROFF" record -q -N -o b3.data ./spin 50
	[ ! -e "$TMP/cache3" ] && ok "-N: no cache" || not_ok "-N"
	expect_exit "exit status with samples" 5 "$PROFF" record -q -o b4.data ./spin 50 5

	# ---- -z ------------------------------------------------------------------------------
	"$PROFF" record -q -g -o u.data ./spin 300
	"$PROFF" record -q -g -z -o z.data ./spin 300
	zf=$(u64 z.data 72)
	[ $(( (zf >> 27) & 1 )) = 1 ] && ok "-z: COMPRESSED feature" || not_ok "-z feature"
	[ "$(fsize z.data)" -lt $(( $(fsize u.data) / 2 )) ] && ok "-z: smaller file ($(fsize z.data) < $(fsize u.data) bytes)" || not_ok "-z size"

	# ---- SIGINT ------------------------------------------------------------------------
	"$PROFF" record -q -o int.data ./spin 5000 & rp=$!
	sleep 0.5; kill -INT $rp; wait $rp; rc=$?
	[ "$rc" = 130 ] && ok "SIGINT: exit 130" || not_ok "SIGINT exit $rc"
	[ "$(u64 int.data 48)" -gt 0 ] && [ "$(u64 int.data 72)" != 0 ] && ok "SIGINT: data and features written" || not_ok "SIGINT file"

	# ---- write error: file size limit -------------------------------------------------
	(ulimit -f 64; "$PROFF" record -o full.data -g ./spin 1500 > full.out 2> full.err); rc=$?
	[ "$rc" = 1 ] && ok "write error: exit 1" || not_ok "write error exit $rc"
	grep -q 'write failed' full.err && grep -q 'readable' full.err && ok "write error: clear message" || { not_ok "write error message"; sed 's/^/#   /' full.err; }
	doff=$(u64 full.data 40); dsz=$(u64 full.data 48)
	[ "$dsz" -gt 0 ] && [ $((doff + dsz)) = "$(fsize full.data)" ] && ok "write error: header rewritten with the data kept ($dsz bytes)" || not_ok "write error header ($doff+$dsz vs $(fsize full.data))"
	# every record of the data section is whole
	if python3 - full.data "$doff" "$dsz" <<'PYEOF'
import struct, sys
d = open(sys.argv[1], 'rb').read(); o = int(sys.argv[2]); e = o + int(sys.argv[3])
while o < e:
    t, m, s = struct.unpack_from('<IHH', d, o)
    if s < 8: sys.exit(1)
    o += s
sys.exit(0 if o == e else 1)
PYEOF
	then ok "write error: data section holds whole records only"; else not_ok "write error: records cut"; fi
fi

# ---- fallbacks and errors ---------------------------------------------------------------
"$PROFF" record -q -e cycles -o c.data true 2> c.err; rc=$?
if [ "$rc" = 0 ]; then
	if grep -q "falling back to 'cpu-clock'" c.err; then ok "cycles unsupported: falls back to cpu-clock with a notice"
	else ok "cycles supported here (no fallback needed)"; fi
else not_ok "cycles: exit $rc"; fi
"$PROFF" record -q -b -o br.data true 2> br.err; rc=$?
if [ "$rc" = 0 ]; then ok "-b: branch stacks available here"
elif grep -q "branch stack sampling (-b) is not available" br.err; then ok "-b: clear error without LBR"
else not_ok "-b: exit $rc"; sed 's/^/#   /' br.err; fi
# ---- no permission: an unprivileged user (root only can switch to one) --------------
# perf_event_paranoid >= 1 refuses system-wide recording to unprivileged users;
# >= 2 limits them to user space: the message names the value and the way out.
par=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null)
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && [ -n "$par" ] && [ "$par" -ge 1 ] &&
   cp "$PROFF" "$TMP/proff-unpriv" && chmod 755 "$TMP" "$TMP/proff-unpriv"; then
	mkdir -p "$TMP/np" && chmod 777 "$TMP/np"
	HOME=$TMP/np setpriv --reuid=nobody --regid=nogroup --clear-groups \
		"$TMP/proff-unpriv" record -a -o "$TMP/np/a.data" true > np.out 2> np.err; rc=$?
	[ "$rc" = 1 ] && ok "no permission: exit 1" || not_ok "no permission: exit $rc"
	[ "$(wc -l < np.err)" = 1 ] && ok "no permission: one line" || { not_ok "no permission: $(wc -l < np.err) lines"; sed 's/^/#   /' np.err; }
	grep -q "no permission to open event 'cpu-clock' (Permission denied): kernel.perf_event_paranoid is $par; .*sysctl -w kernel.perf_event_paranoid=0.*-a needs 0 or less" np.err &&
		ok "no permission: message names perf_event_paranoid=$par and the fix" || { not_ok "no permission message"; sed 's/^/#   /' np.err; }
	[ ! -s "$TMP/np/a.data" ] || [ "$(head -c 8 "$TMP/np/a.data")" = PERFILE2 ] && ok "no permission: no half-written file" || not_ok "no permission: stray file"
	if [ "$par" -ge 2 ]; then
		HOME=$TMP/np setpriv --reuid=nobody --regid=nogroup --clear-groups \
			"$TMP/proff-unpriv" record -o "$TMP/np/u.data" sh -c 'i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done' > npu.out 2> npu.err; rc=$?
		[ "$rc" = 0 ] && grep -q "perf_event_paranoid is $par: recording user space only ('cpu-clock:u')" npu.err &&
			[ "$(head -c 8 "$TMP/np/u.data")" = PERFILE2 ] &&
			ok "paranoid $par, unprivileged: user-space-only recording with a notice" ||
			{ not_ok "unprivileged user-space recording (exit $rc)"; sed 's/^/#   /' npu.err; }
	fi
else
	skip "no-permission error (needs root, setpriv and perf_event_paranoid >= 1)"
fi
finish
