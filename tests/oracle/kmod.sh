#!/bin/bash
# tests/oracle/kmod.sh — kernel modules' symbols and a guest's samples,
# against perf 6.1 on fixtures made here.
#
# The test host's kernel may have no modules and run no guest, so neither
# perf nor proff would meet one in a recording made here. A real
# `perf record -e cpu-clock -g` recording is rewritten by
# tests/tools/mkkmod.py: a module's MMAP is added (pid -1, as perf record
# writes one per module), named by its path under /lib/modules/RELEASE or as
# "[mymod]", and every other kernel sample's ip (and first kernel frame)
# moved into its .text; or a third of the samples become a guest's (cpumode
# guest kernel / guest user). The module is a C file compiled here with
# gcc -c (an ET_REL object, as a .ko is), under --symfs DIR/lib/modules/;
# a --kallsyms file names it with kallsyms' "\t[mymod]" lines. perf report
# reads every file; proff's report must print the same bytes.
source "$(dirname "$0")/../lib.sh"

command -v perf >/dev/null || { skip "kmod oracle (no perf)"; finish; }
command -v gcc >/dev/null || { skip "kmod oracle (no gcc)"; finish; }
can_perf_record || { skip "kmod oracle (perf record does not work here)"; finish; }

W="$TMP/w"; mkdir -p "$W"
perf record -q -e cpu-clock -g -o "$W/rec.data" -- \
	sh -c 'for i in $(seq 60); do cat /proc/self/status >/dev/null; done' >/dev/null 2>"$TMP/rec.err" ||
	{ not_ok "kmod: perf record"; sed 's/^/#   /' "$TMP/rec.err"; finish; }

# the module: four functions in .text, one of them local
cat > "$W/mod.c" <<'C'
int mod_counter;
__attribute__((noinline)) int mod_spin(int n) { int s = 0; for (int i = 0; i < n; i++) s += i * mod_counter; return s; }
__attribute__((noinline)) int mod_work(int n) { return mod_spin(n) + mod_spin(n / 2); }
static __attribute__((noinline)) int mod_local(int n) { return mod_work(n) * 3; }
int mod_entry(int n) { return mod_local(n) + 1; }
C
gcc -c -O1 -o "$W/mod.o" "$W/mod.c" || { not_ok "kmod: gcc -c"; finish; }
R=$(perf report -i "$W/rec.data" --header-only 2>/dev/null | sed -n 's/^# os release : //p')
[ -n "$R" ] || R=$(uname -r)
KO=/lib/modules/$R/kernel/drivers/mymod.ko
S="$W/symfs"; mkdir -p "$S$(dirname "$KO")"
cp "$W/mod.o" "$S$KO"
ln -s /usr "$S/usr"      # the recording's programs and libraries, as they are
BAD="$W/bad"; mkdir -p "$BAD$(dirname "$KO")"
echo "not an ELF file" > "$BAD$KO"
ln -s /usr "$BAD/usr"

BASE=ffffffffc0000000
sym() { nm "$W/mod.o" | awk -v s="$1" '$3 == s { print $1 }'; }
hex() { printf '%x' $((16#$BASE + 16#$1 + $2)); }
TEXT=$(readelf -SW "$W/mod.o" | awk '{ for (i = 1; i < NF; i++) if ($i == ".text") print $(i + 4) }')
# inside mod_spin, mod_local, mod_work; past the last function (.text's end)
ADDRS="$(hex "$(sym mod_spin)" 16) $(hex "$(sym mod_local)" 4) $(hex "$(sym mod_work)" 2) $(hex "$TEXT" 48)"
# kallsyms: the running kernel's (for the kernel's own samples) and the
# module's lines as /proc/kallsyms has them
{
	cat /proc/kallsyms
	for f in mod_spin mod_work mod_local mod_entry; do
		t=T; [ $f = mod_local ] && t=t
		printf '%s %s %s\t[mymod]\n' "$(hex "$(sym $f)" 0)" $t $f
	done
} > "$W/kallsyms"
{ head -100 "$W/kallsyms"; echo "garbage line"; echo "zz T nothex"; tail -n +101 "$W/kallsyms"; } > "$W/kallsyms.bad"

MK="python3 $ROOT/tests/tools/mkkmod.py"
$MK "$W/rec.data" "$W/modp.data" module "$KO" $BASE 1000 $ADDRS || not_ok "kmod: mkkmod.py module path"
$MK "$W/rec.data" "$W/modb.data" module "[mymod]" $BASE 1000 $ADDRS || not_ok "kmod: mkkmod.py module [name]"
# the same module loaded elsewhere (a diff's second file)
ADDRS2=$(for a in $ADDRS; do printf '%x ' $((16#$a + 0x100000)); done)
$MK "$W/rec.data" "$W/modp2.data" module "$KO" ffffffffc0100000 1000 $ADDRS2 || not_ok "kmod: mkkmod.py module elsewhere"
$MK "$W/rec.data" "$W/guest.data" guest ffffffff81001010 ffffffff81002020 ffffffff81003030 ||
	not_ok "kmod: mkkmod.py guest"

strip_tip() { grep -v '^# (Tip:'; }
cmp_report() {   # cmp_report FILE OPTS...
	local file=$1; shift
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" --stdio "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "kmod: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}
# the fixtures hold what they should: perf itself names the module's symbols
perf report -i "$W/modp.data" --stdio --no-children -s dso,sym --kallsyms "$W/kallsyms" --symfs "$S" 2>/dev/null |
	grep -q '\[mymod\] *\[k\] mod_spin' && ok "kmod: perf reads the fixture's module" ||
	not_ok "kmod: perf reads the fixture's module"

K=(--kallsyms "$W/kallsyms")
# the module's path: its .ko under --symfs, else kallsyms' lines, else addresses
cmp_report "$W/modp.data"
cmp_report "$W/modp.data" --no-children -s dso,sym -v
cmp_report "$W/modp.data" "${K[@]}" -s dso,sym
cmp_report "$W/modp.data" "${K[@]}" --no-children -v
cmp_report "$W/modp.data" "${K[@]}" --symfs "$S"
cmp_report "$W/modp.data" "${K[@]}" --symfs "$S" -s dso,sym -g caller
cmp_report "$W/modp.data" "${K[@]}" --symfs "$S" --no-children -s dso,sym -v --dsos "[kernel.kallsyms],$KO"
cmp_report "$W/modp.data" --symfs "$S" -s dso,sym
cmp_report "$W/modp.data" "${K[@]}" --symfs "$S" -s dso,sym,symbol_size,dso_size --no-children -g none
# "[mymod]": no path to read, kallsyms' lines
cmp_report "$W/modb.data" -s dso,sym
cmp_report "$W/modb.data" "${K[@]}"
cmp_report "$W/modb.data" "${K[@]}" --symfs "$S" --no-children -s dso,sym -v --dsos "[kernel.kallsyms],[mymod]"

# a diff of two files whose module lies at two addresses: one .ko, two maps
perf diff "${K[@]}" --symfs "$S" "$W/modp.data" "$W/modp2.data" 2>/dev/null | strip_tip > "$TMP/perf.out"
"$PROFF" diff "${K[@]}" --symfs "$S" "$W/modp.data" "$W/modp2.data" 2>/dev/null | strip_tip > "$TMP/proff.out"
check_same "kmod: diff of a module at two addresses (its .ko)" "$TMP/perf.out" "$TMP/proff.out"
grep -q 'mod_local' "$TMP/perf.out" && ok "kmod: perf's diff names the module's functions" ||
	not_ok "kmod: perf's diff names the module's functions"

# bad input: a .ko that is not ELF, kallsyms lines that are not, a module
# with no file: perf's output, and one warning each
cmp_report "$W/modp.data" "${K[@]}" --symfs "$BAD" -s dso,sym
n=$(grep -c "$KO: not an ELF file" "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning for a .ko that is not ELF" ||
	{ not_ok "kmod: one warning for a .ko that is not ELF ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }
cmp_report "$W/modp.data" --kallsyms "$W/kallsyms.bad" --no-children -s dso,sym
n=$(grep -c 'kallsyms.bad: 2 lines are not "ADDRESS TYPE NAME"' "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning with a count for kallsyms' garbage lines" ||
	{ not_ok "kmod: one warning with a count for kallsyms' garbage lines ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }
cmp_report "$W/modp.data" --no-children -s dso,sym
n=$(grep -c "not found.*$KO" "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning for a module whose file is not found" ||
	{ not_ok "kmod: one warning for a module whose file is not found ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }

# compressed modules (.ko.xz, .ko.gz: how distributions ship them): perf
# reads them decompressed, and so does proff; no kallsyms file is given, so
# the names come from the .ko only. perf 6.1 takes a .ko.zst for no module
# (a dso of that name, addresses only): so does proff
for z in xz gz zst; do
	case $z in xz) zc="xz -c";; zst) zc="zstd -q -c";; gz) zc="gzip -c";; esac
	command -v "${zc%% *}" >/dev/null || { skip "kmod: .ko.$z (no ${zc%% *})"; continue; }
	$zc "$W/mod.o" > "$S$KO.$z"
	$MK "$W/rec.data" "$W/mod$z.data" module "$KO.$z" $BASE 1000 $ADDRS || { not_ok "kmod: mkkmod.py module .ko.$z"; continue; }
	cmp_report "$W/mod$z.data" --symfs "$S" --no-children -s dso,sym -v
	if [ $z != zst ] && ! grep -q "mymod.ko.$z .* m \\[k\\] mod_spin" "$TMP/perf.out"; then
		not_ok "kmod: perf names the .ko.$z module's functions"
	fi
done
cmp_report "$W/modxz.data" --symfs "$S" -s dso,sym -g caller --no-children --dsos "[mymod]"
# a compressed module that does not decompress: one warning, kallsyms' names
mkdir -p "$BAD$(dirname "$KO")"; head -c 100 "$S$KO.xz" > "$BAD$KO.xz"
cmp_report "$W/modxz.data" "${K[@]}" --symfs "$BAD" -s dso,sym
n=$(grep -c "$KO.xz: not an xz file that decompresses" "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning for a .ko.xz cut short" ||
	{ not_ok "kmod: one warning for a .ko.xz cut short ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }

# a module whose build id was recorded (in the header's build-id table, as
# perf record writes it, or in its MMAP2 with --buildid-mmap): perf looks for
# its .ko in the build-id cache first (origin B), then at its path, and
# takes neither where the build id differs
ld -r --build-id=sha1 -o "$W/bid.ko" "$W/mod.o" &&
	sed 's/mod_/other_/g' "$W/mod.c" > "$W/other.c" && gcc -c -O1 -o "$W/other.o" "$W/other.c" &&
	ld -r --build-id=sha1 -o "$W/other.ko" "$W/other.o" || { not_ok "kmod: ld -r --build-id"; finish; }
BID=$(readelf -n "$W/bid.ko" | awk '/Build ID/ { print $3 }')
cache() {   # cache DIR FILE [old]: FILE as the module's copy in a build-id cache
	mkdir -p "$1/.build-id/${BID:0:2}"
	if [ "${3:-}" = old ]; then
		cp "$2" "$1/.build-id/${BID:0:2}/${BID:2}"
	else
		mkdir -p "$1$KO/$BID" && cp "$2" "$1$KO/$BID/elf" && ln -s "../..$KO/$BID" "$1/.build-id/${BID:0:2}/${BID:2}"
	fi
}
cache "$W/c.good" "$W/bid.ko"; cache "$W/c.other" "$W/other.ko"; cache "$W/c.old" "$W/bid.ko" old
mkdir -p "$W/c.none" "$W/s.good$(dirname "$KO")" "$W/s.other$(dirname "$KO")"
cp "$W/bid.ko" "$W/s.good$KO"; cp "$W/other.ko" "$W/s.other$KO"
$MK --build-id="$BID" "$W/rec.data" "$W/modh.data" module "$KO" $BASE 1000 $ADDRS ||
	not_ok "kmod: mkkmod.py module with a build id"
$MK --build-id="$BID" --build-id-mmap2 "$W/rec.data" "$W/modm.data" module "$KO" $BASE 1000 $ADDRS ||
	not_ok "kmod: mkkmod.py module's MMAP2 with a build id"
perf buildid-list -i "$W/modh.data" 2>/dev/null | grep -q "^$BID $KO\$" &&
	ok "kmod: perf buildid-list reads the module's build id" ||
	not_ok "kmod: perf buildid-list reads the module's build id"
cmp_cache() {   # cmp_cache CACHE FILE OPTS...: perf --buildid-dir CACHE report, proff report --buildid-dir CACHE
	local c=$1 file=$2; shift 2
	perf --buildid-dir "$c" report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report --buildid-dir "$c" -i "$file" --stdio "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "kmod: cache $(basename "$c") $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}
V=(--no-children -s dso,sym -v -g none)
cmp_cache "$W/c.good" "$W/modh.data" "${V[@]}"
grep -q ' B \[k\] mod_spin' "$TMP/perf.out" && ok "kmod: perf reads the module's .ko from the build-id cache" ||
	not_ok "kmod: perf reads the module's .ko from the build-id cache"
cmp_cache "$W/c.good" "$W/modh.data"
cmp_cache "$W/c.good" "$W/modh.data" -s dso,sym -g caller
cmp_cache "$W/c.good" "$W/modm.data" "${V[@]}"
cmp_cache "$W/c.old" "$W/modh.data" "${V[@]}"
cmp_cache "$W/c.good" "$W/modh.data" --symfs "$W/s.other" "${V[@]}"
cmp_cache "$W/c.other" "$W/modh.data" --symfs "$W/s.good" "${V[@]}"
grep -q ' K \[k\] mod_spin' "$TMP/perf.out" && ok "kmod: perf takes the .ko at its path when the cache's differs" ||
	not_ok "kmod: perf takes the .ko at its path when the cache's differs"
cmp_cache "$W/c.none" "$W/modh.data" --symfs "$W/s.other" "${K[@]}" "${V[@]}"
n=$(grep -c "s.other$KO: build id [0-9a-f]*, not the recorded $BID" "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning for a .ko whose build id differs" ||
	{ not_ok "kmod: one warning for a .ko whose build id differs ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }
cmp_cache "$W/c.other" "$W/modm.data" --symfs "$W/s.other" "${V[@]}"
# a compressed module: the cache's copy is the compressed file, read
# decompressed as the module's name says
if command -v xz >/dev/null; then
	xz -c "$W/bid.ko" > "$W/bid.ko.xz"
	mkdir -p "$W/c.xz/.build-id/${BID:0:2}" "$W/c.xz$KO.xz/$BID"
	cp "$W/bid.ko.xz" "$W/c.xz$KO.xz/$BID/elf"
	ln -s "../..$KO.xz/$BID" "$W/c.xz/.build-id/${BID:0:2}/${BID:2}"
	$MK --build-id="$BID" "$W/rec.data" "$W/modhxz.data" module "$KO.xz" $BASE 1000 $ADDRS ||
		not_ok "kmod: mkkmod.py .ko.xz module with a build id"
	cmp_cache "$W/c.xz" "$W/modhxz.data" "${V[@]}"
fi
# a diff of two files whose module's .ko is in the cache
perf --buildid-dir "$W/c.good" diff "$W/modh.data" "$W/modm.data" 2>/dev/null | strip_tip > "$TMP/perf.out"
"$PROFF" diff --buildid-dir "$W/c.good" "$W/modh.data" "$W/modm.data" 2>/dev/null | strip_tip > "$TMP/proff.out"
check_same "kmod: diff, the module's .ko from the build-id cache" "$TMP/perf.out" "$TMP/proff.out"

# a guest's samples in a host's file: perf report leaves them out
cmp_report "$W/guest.data"
cmp_report "$W/guest.data" --no-children -s comm,dso,sym,overhead_guest_sys,overhead_guest_us -g none
cmp_report "$W/guest.data" -s sym,overhead_sys,overhead_guest_sys,overhead_guest_us -g caller
n=$(grep -c 'samples are a guest' "$TMP/proff.err")
[ "$n" = 1 ] && ok "kmod: one warning for a guest's samples" ||
	{ not_ok "kmod: one warning for a guest's samples ($n)"; sed 's/^/#   /' "$TMP/proff.err"; }
finish
