#!/bin/bash
# tests/cli/perfdata-badinput.sh — malformed perf.data files, made from the
# small real recordings in tests/data/perfdata: truncated at every section
# boundary, corrupted header fields, bad records, corrupt zstd, empty file,
# directory, no permission. Each must give exactly ONE error line naming the
# file (with the byte offset where there is one) and a non-zero exit, never a
# crash or hang; files that are valid (unknown record types) must be read.
# Driven through tests/tools/pdtool.c (built here against the library of the
# build under test) and through `proff report -i`.
source "$(dirname "$0")/../lib.sh"
D=$ROOT/tests/data/perfdata
BUILD_DIR=$(dirname "$PROFF")
LIBS=$(pkg-config --libs libdw libelf libzstd zlib 2>/dev/null || echo -ldw -lelf -lzstd -lz)
SANFL=
case "$BUILD_DIR" in *asan*) SANFL="-fsanitize=address,undefined";; esac
PDTOOL=$TMP/pdtool
if ! cc -std=gnu17 -g -O1 $SANFL -I"$ROOT/include" -o "$PDTOOL" "$ROOT/tests/tools/pdtool.c" \
	"$BUILD_DIR/libproff.a" $LIBS -lstdc++ -lm -lpthread 2>"$TMP/cc.err"; then
	not_ok "build pdtool"; sed 's/^/#   /' "$TMP/cc.err" | head; finish
fi
mkdir -p "$TMP/bad"
python3 - "$D" "$TMP/bad" <<'PY'
import struct, sys, os
src, out = sys.argv[1], sys.argv[2]
b = open(os.path.join(src, 'small.data'), 'rb').read()
def w(name, data): open(os.path.join(out, name), 'wb').write(data)
def patch(data, off, fmt, *v):
    d = bytearray(data); struct.pack_into('<' + fmt, d, off, *v); return bytes(d)
attr_size, a_off, a_sz, d_off, d_sz = struct.unpack_from('<5Q', b, 16)
feats = int.from_bytes(b[72:104], 'little')
bits = [i for i in range(256) if feats >> i & 1]
tab = d_off + d_sz
# truncations at every section boundary (and just inside)
cuts = {'hdr0': 0, 'hdr7': 7, 'hdr15': 15, 'hdr50': 50, 'hdr103': 103, 'ids': a_off, 'attrs-mid': a_off + 60,
        'attrs-end': a_off + a_sz, 'data-mid': d_off + d_sz // 2, 'data-end': tab, 'feattab-mid': tab + 8,
        'feattab-end': tab + 16 * len(bits)}
for j, f in enumerate(bits):
    fo, fs = struct.unpack_from('<QQ', b, tab + 16 * j)
    cuts['feat%d-start' % f] = fo
    cuts['feat%d-mid' % f] = fo + fs // 2 if fs > 1 else fo
for k, v in cuts.items():
    if 0 < v < len(b) or k == 'hdr0':
        w('trunc-' + k + '.data', b[:v])
w('bad-magic.data', b'PERFXXX2' + b[8:])
w('attr-size-0.data', patch(b, 16, 'Q', 0))
w('attr-size-huge.data', patch(b, 16, 'Q', 1 << 40))
w('attrs-offset-past-end.data', patch(b, 24, 'Q', len(b) + 100))
w('ids-offset-past-end.data', patch(b, a_off + 128, 'Q', 1 << 50))
w('data-offset-past-end.data', patch(b, 40, 'Q', len(b) + 1))
w('data-size-past-end.data', patch(b, 48, 'Q', len(b)))
w('feat-offset-past-end.data', patch(b, tab, 'Q', 1 << 60))
w('header-size-bad.data', patch(b, 8, 'Q', 99))
# records: find the first sample and a record in the middle
pos, first_sample = d_off, None
recs = []
while pos < d_off + d_sz:
    t, m, s = struct.unpack_from('<IHH', b, pos)
    recs.append((pos, t, s))
    if t == 9 and first_sample is None: first_sample = pos
    pos += s
mid = recs[len(recs) // 2][0]
w('record-size-0.data', patch(b, mid + 6, 'H', 0))
w('record-size-4.data', patch(b, mid + 6, 'H', 4))
last = recs[-1][0]
w('record-past-end.data', patch(b, last + 6, 'H', 0xfff8))
# callchain nr of the first sample (sample_type IP|TID|TIME|CALLCHAIN|...: nr after 3 u64)
w('callchain-nr-huge.data', patch(b, first_sample + 8 + 24, 'Q', 1 << 61))
w('callchain-nr-past.data', patch(b, first_sample + 8 + 24, 'Q', 9000))
# unknown record types are skipped: valid
w('OK-unknown-type.data', patch(b, mid, 'I', 200))
w('OK-unknown-kernel-type.data', patch(b, mid, 'I', 40))
# data size 0 = interrupted recording: warning, still read
w('OK-data-size-0.data', patch(b, 48, 'Q', 0)[:tab])
w('OK-data-size-0-partial.data', patch(b, 48, 'Q', 0)[:tab - 5])
# corrupt zstd in the -z file
z = open(os.path.join(src, 'small-z.data'), 'rb').read()
zd_off, zd_sz = struct.unpack_from('<QQ', z, 40)
pos = zd_off
while pos < zd_off + zd_sz:
    t, m, s = struct.unpack_from('<IHH', z, pos)
    if t == 81: break
    pos += s
zz = bytearray(z)
for i in range(pos + 8, pos + s): zz[i] ^= 0x5a
w('zstd-corrupt.data', bytes(zz))
zz = bytearray(z); zz[pos + 8: pos + 12] = b'\0\0\0\0'
w('zstd-bad-magic.data', bytes(zz))
# pipe file truncated inside a record
p = open(os.path.join(src, 'small-pipe.data'), 'rb').read()
w('pipe-trunc.data', p[:len(p) // 2 + 3])
w('pipe-no-attr.data', p[:16])
w('empty.data', b'')
PY
mkdir -p "$TMP/bad/a-directory.data"

one_error() {  # NAME FILE [CMD...]: exit != 0, exactly one stderr line naming the file
	local name=$1 f=$2; shift 2
	timeout 20 "$@" >"$TMP/out" 2>"$TMP/err"; local rc=$?
	local lines; lines=$(grep -c . "$TMP/err")
	if [ "$rc" = 124 ]; then not_ok "$name: hang"; return; fi
	if [ "$rc" -ge 128 ] || [ "$rc" = 0 ] || grep -q 'Sanitizer\|runtime error' "$TMP/err"; then
		not_ok "$name: exit $rc"; head -5 "$TMP/err" | sed 's/^/#   /'; return; fi
	if [ "$lines" != 1 ] || ! grep -qF "$(basename "$f")" "$TMP/err"; then
		not_ok "$name: want one error line naming the file"; head -5 "$TMP/err" | sed 's/^/#   /'; return; fi
	case "$(basename "$f")" in
	a-directory*|noperm*|pipe-no-attr*) ;;
	*) if ! grep -q 'byte offset [0-9]' "$TMP/err"; then
		not_ok "$name: no byte offset"; sed 's/^/#   /' "$TMP/err"; return; fi;;
	esac
	ok "$name"
}

have_report=0
"$PROFF" report -i "$D/small.data" >/dev/null 2>&1 && have_report=1
for f in "$TMP"/bad/*; do
	n=$(basename "$f")
	case "$n" in
	OK-*)
		timeout 20 "$PDTOOL" check "$f" >"$TMP/out" 2>"$TMP/err"; rc=$?
		if [ "$rc" = 0 ] && grep -q '^records' "$TMP/out" && ! grep -q 'Sanitizer\|runtime error' "$TMP/err"; then
			ok "valid: $n"; else not_ok "valid: $n (exit $rc)"; head -3 "$TMP/err" | sed 's/^/#   /'; fi
		[ $have_report = 1 ] && expect_exit "proff report valid: $n" 0 "$PROFF" report -i "$f"
		;;
	*)
		one_error "pdtool: $n" "$f" "$PDTOOL" check "$f"
		[ $have_report = 1 ] && one_error "proff report: $n" "$f" "$PROFF" report -i "$f"
		;;
	esac
done
grep -q 'data size field is 0' "$TMP/err" 2>/dev/null || true
timeout 20 "$PDTOOL" check "$TMP/bad/OK-data-size-0.data" >/dev/null 2>"$TMP/err"
if grep -q 'data size field is 0' "$TMP/err"; then ok "data size 0 warns"; else not_ok "data size 0 warns"; fi

# stdin pipe: truncated stream
one_error "pipe stdin truncated" "stdin" sh -c "\"$PDTOOL\" check - < \"$TMP/bad/pipe-trunc.data\""
# no permission (as an unprivileged user when run as root)
cp "$D/small.data" "$TMP/noperm.data"; chmod 000 "$TMP/noperm.data"; chmod 755 "$TMP"
if [ "$(id -u)" = 0 ]; then
	if command -v setpriv >/dev/null; then
		chmod 755 "$PDTOOL"
		one_error "no permission" "$TMP/noperm.data" setpriv --reuid=65534 --regid=65534 --clear-groups "$PDTOOL" check "$TMP/noperm.data"
	else
		skip "no permission (running as root, no setpriv)"
	fi
else
	one_error "no permission" "$TMP/noperm.data" "$PDTOOL" check "$TMP/noperm.data"
fi
finish
