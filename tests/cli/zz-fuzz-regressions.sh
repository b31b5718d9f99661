#!/bin/bash
# tests/cli/zz-fuzz-regressions.sh — inputs that broke proff's parsers of
# untrusted files (found by the libFuzzer targets of tests/fuzz/ or while
# writing them), replayed through the CLI of the build under test (normal and
# ASan/UBSan): bad input gives one error line naming the file, what is wrong
# and the byte offset, and a non-zero exit; valid but extreme input is read.
# Never a crash, a sanitizer report or a silent misreading.
source "$(dirname "$0")/../lib.sh"
PD=$ROOT/tests/data/perfdata/small.data

# expect_err NAME REGEX CMD...: exit status 1..125 (not a signal), exactly one
# stderr line, matching REGEX
expect_err() {
	local name=$1 re=$2; shift 2
	"$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
	local n; n=$(wc -l <"$TMP/err")
	if [ "$rc" -ge 1 ] && [ "$rc" -le 125 -o "$rc" = 255 ] && [ "$n" = 1 ] && grep -Eq "$re" "$TMP/err"; then
		ok "$name"
	else
		not_ok "$name (exit $rc, $n stderr lines)"; head -5 "$TMP/err" | sed 's/^/#   /'
	fi
}

# ---- config file (lib/util/config.c) ----
cfg() { PROFF_CONFIG="$1" "$PROFF" diff "$PD" "$PD"; }
{ printf '[report]\n\tchildren = '; head -c 2000 /dev/zero | tr '\0' x; printf '\n\tx = 1\n'; } >"$TMP/long.cfg"
expect_err "config: a 2000-byte line is an error, not split into two lines" \
	"^proff: $TMP/long.cfg: line 2: longer than 1023 bytes \(at byte offset 9\)$" cfg "$TMP/long.cfg"
printf '[diff]\n\torder = 1\n\tcom\0pute = ratio\n' >"$TMP/nul.cfg"
expect_err "config: a NUL byte is an error at its line" \
	"^proff: $TMP/nul.cfg: line 3: NUL byte \(at byte offset 18\)$" cfg "$TMP/nul.cfg"
{ printf '[diff]\n[%s]\nk = v\n' "$(head -c 200 /dev/zero | tr '\0' s)"; } >"$TMP/sec.cfg"
expect_err "config: a 200-byte section name is an error" \
	"^proff: $TMP/sec.cfg: line 2: section name longer than 127 bytes \(at byte offset 7\)$" cfg "$TMP/sec.cfg"
{ printf '[diff]\n%s = 1\n' "$(head -c 300 /dev/zero | tr '\0' k)"; } >"$TMP/key.cfg"
expect_err "config: a 300-byte key is an error" \
	"^proff: $TMP/key.cfg: line 2: key 'diff\.k+\.\.\.' longer than 255 bytes \(at byte offset 7\)$" cfg "$TMP/key.cfg"
{ printf '[diff]\n'; yes '# a comment line of forty bytes ........' | head -c 1100000; } >"$TMP/big.cfg"
expect_err "config: a file over 1 MiB is an error" \
	"^proff: $TMP/big.cfg: config file larger than 1048576 bytes \(at byte offset 1048576\)$" cfg "$TMP/big.cfg"
{ printf '[diff]\n'; yes '# a comment line of forty bytes ........' | head -c 1000000; printf '\n\torder = x\n'; } >"$TMP/mid.cfg"
expect_err "config: a key after 1 MB of comments is read" "bad config value for 'diff.order' in $TMP/mid.cfg line 24393 \\('x': not an order\\)\$" cfg "$TMP/mid.cfg"
printf '[diff]\n\torder = 1   # a comment\n' >"$TMP/good.cfg"
if cfg "$TMP/good.cfg" >/dev/null 2>"$TMP/err" && ! [ -s "$TMP/err" ]; then ok "config: a valid file is read"; else not_ok "config: a valid file is read"; fi

# ---- tmon.out (lib/dprof/tmon.c) ----
printf '#fOrTyTwO\n$hz=1e300;\nPART2\n& 2 main bar\n+ 2\n- 2\n' >"$TMP/bighz.tmon.out"
expect_err "tmon.out: \$hz=1e300 is an error at its line (was undefined behaviour in -S)" \
	"^proff: $TMP/bighz.tmon.out: header: \\\$hz=1e\+300 is not a plausible clock rate .*\(at byte offset 10\)$" \
	"$PROFF" dprofpp -S "$TMP/bighz.tmon.out"
printf '#fOrTyTwO\n$hz=100; $over_tests=nan;\nPART2\n' >"$TMP/nan.tmon.out"
expect_err "tmon.out: a nan header number is an error" \
	"^proff: $TMP/nan.tmon.out: cannot parse header line .*\(at byte offset 10\)$" "$PROFF" dprofpp "$TMP/nan.tmon.out"

# ---- exact traces (lib/trace, lib/model/trace-model.c) ----
python3 - "$TMP" <<'PY'
import struct, sys
def rec(t, payload, tid=0, sess=7):
    return struct.pack('<IHHIIQ', 0x52544650, t, 1, 24 + len(payload), tid, sess) + payload
def varint(v):
    out = b''
    while v >= 0x80:
        out += bytes([(v & 0x7f) | 0x80]); v >>= 7
    return out + bytes([v])
def session(tps):
    exe, cmd = b'/bin/prog', b'prog\0'
    return struct.pack('<IIQQQQQQQIIQIIII', 2, 0, tps, 1000, 0, 1000, 1024, 2048, 10, 42, 1, 0, 65536,
                       len(exe), len(cmd), 0) + exe + cmd
def events(evs, tid=42):
    return rec(4, struct.pack('<QQQQII', 1000, 0x400100, 0x7fff0000, 0, 0, 0) + b''.join(evs), tid)
# a call of 2^62 ticks at 1000 ticks/s: 4.6e24 ns
huge = [varint(0) + varint(0) + varint(0), varint((1 << 62) << 1 | 1) + varint(0) + varint(0)]
open(sys.argv[1] + '/huge-call.trace', 'wb').write(rec(1, session(1000)) + events(huge))
PY
if "$PROFF" report -i "$TMP/huge-call.trace" --stdio >"$TMP/out" 2>"$TMP/err" &&
	grep -q 'Event count (approx.): 18446744073709551615' "$TMP/out" && ! [ -s "$TMP/err" ]; then
	ok "trace: a call of 2^62 ticks at 1000 Hz reads as a profile (period saturated at 2^64-1 ns)"
else
	not_ok "trace: a call of 2^62 ticks at 1000 Hz reads as a profile"; head -5 "$TMP/err" | sed 's/^/#   /'
fi

# ---- perf.data loader (lib/model/profile.c) ----
# A HEADER_BUILD_ID record inside the data section grows the header's
# build-id table while samples are read; the loader kept a pointer to the
# old table (use after free, found by fuzz_perfdata). Read to the end, with
# the reader's one warning (the file named once).
BR=$ROOT/tests/fuzz/regress/perfdata/build-id-record-moves-table
if "$PROFF" report -i "$BR" --stdio >"$TMP/out" 2>"$TMP/err" && grep -q '^ *[0-9.]*% ' "$TMP/out" &&
	[ "$(wc -l <"$TMP/err")" = 1 ] && grep -Eq "^proff: warning: [^:]*build-id-record-moves-table: 2 samples with an unknown sample id were skipped$" "$TMP/err"; then
	ok "perf.data: a build-id record in the data section is read (the table it grows is not kept by address)"
else
	not_ok "perf.data: a build-id record in the data section"; head -5 "$TMP/err" | sed 's/^/#   /'
fi
finish
