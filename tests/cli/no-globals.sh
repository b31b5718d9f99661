#!/bin/bash
# tests/cli/no-globals.sh — the library keeps no mutable global state: no
# object of libproff.a may define a writable data symbol (.data, .bss, their
# subsections, thread-local .tdata/.tbss, or a COMMON block). Read-only tables
# are fine, including the pointer tables the compiler puts in .data.rel.ro
# (writable only while relocating, then read-only; `nm` reports them as "d",
# which is why this reads the section headers with readelf instead).
# The generated protobuf-c code (build/gen) is in the archive and is checked
# too: its descriptors are const.
# On failure it lists "member: symbol (section, size)" for every one found.
source "$(dirname "$0")/../lib.sh"
BUILD_DIR=$(dirname "$PROFF")
LIB=$BUILD_DIR/libproff.a
case "$BUILD_DIR" in
*asan*|*tsan*)   # the sanitizers add writable metadata of their own
	skip "no mutable globals in libproff.a (sanitizer build; the normal build is checked)"; finish ;;
esac
if [ ! -f "$LIB" ]; then not_ok "no mutable globals: $LIB not found"; finish; fi

# one pass over `readelf -SsW`: per archive member, its section table, then its
# symbols; an OBJECT or TLS symbol (or a COMMON one) in a writable section is a
# mutable global, whether static, file-scope or function-local.
scan() {   # $1 = output of readelf -SsW
awk '
/^File: / { member = $2; sub(/^.*\(/, "", member); sub(/\)$/, "", member); delete sname; delete sflag; next }
/^ *\[ *[0-9]+\] / {
	line = $0; match(line, /\[ *[0-9]+\]/); idx = substr(line, RSTART + 1, RLENGTH - 2) + 0
	line = substr(line, RSTART + RLENGTH); n = split(line, f, " ")
	sname[idx] = f[1]; sflag[idx] = (n >= 10) ? f[7] : ""
	next
}
$1 ~ /^[0-9]+:$/ && NF >= 8 && ($4 == "OBJECT" || $4 == "TLS") {
	ndx = $7; name = $8
	if (ndx == "COM") { printf "%s: %s (COMMON, %s bytes)\n", member, name, $3; next }
	if (ndx !~ /^[0-9]+$/) next
	sec = sname[ndx + 0]
	if (sflag[ndx + 0] !~ /W/ || sec ~ /^\.data\.rel\.ro/) next
	printf "%s: %s (%s, %s bytes)\n", member, name, sec, $3
}' "$1"
}
readelf -SsW "$LIB" >"$TMP/elf.txt" 2>"$TMP/elf.err" || { not_ok "readelf $LIB"; head -5 "$TMP/elf.err"; finish; }
scan "$TMP/elf.txt" >"$TMP/globals.txt"

# the scan must have seen the archive: members and symbols read
nmem=$(grep -c '^File: ' "$TMP/elf.txt")
nobj=$(awk '$1 ~ /^[0-9]+:$/ && $4 == "OBJECT"' "$TMP/elf.txt" | wc -l)
if [ "$nmem" -lt 10 ] || [ "$nobj" -lt 10 ]; then
	not_ok "readelf scan of $LIB saw $nmem members, $nobj objects"; finish
fi
ok "readelf scan of $LIB ($nmem members, $nobj data objects)"

if [ -s "$TMP/globals.txt" ]; then
	not_ok "no mutable globals in libproff.a: $(wc -l <"$TMP/globals.txt") found"
	sed 's/^/#   /' "$TMP/globals.txt"
else
	ok "no mutable globals in libproff.a"
fi

# the check itself can fail: an object with a static counter, a thread-local
# and a COMMON block is caught, and one with only const tables is not
cat >"$TMP/bad.c" <<'EOF'
static int counter;
static _Thread_local const char *cursor;
__attribute__((common)) int shared_block;
int bump(const char *s) { const char *old = cursor; cursor = s; shared_block++; return ++counter + (old ? *old : 0); }
EOF
cat >"$TMP/good.c" <<'EOF'
static const char *const names[] = { "a", "b" };
static const int table[] = { 1, 2, 3 };
const char *name(int i) { return names[i & 1] + table[i % 3] * 0; }
EOF
if cc -std=gnu17 -O2 -c "$TMP/bad.c" -o "$TMP/bad.o" && cc -std=gnu17 -O2 -fPIC -c "$TMP/good.c" -o "$TMP/good.o" \
	&& ar rcs "$TMP/probe.a" "$TMP/bad.o" "$TMP/good.o"; then
	readelf -SsW "$TMP/probe.a" >"$TMP/probe.txt"
	scan "$TMP/probe.txt" >"$TMP/probe.out"
	if grep -q 'bad.o: counter ' "$TMP/probe.out" && grep -q 'bad.o: cursor (.tbss' "$TMP/probe.out" \
		&& grep -q 'bad.o: shared_block (COMMON' "$TMP/probe.out" && ! grep -q 'good.o' "$TMP/probe.out"; then
		ok "the scan catches a static, a thread-local and a COMMON block, and passes const tables"
	else
		not_ok "the scan on a probe archive"; sed 's/^/#   /' "$TMP/probe.out"
	fi
else
	not_ok "compile the probe objects"
fi
finish
