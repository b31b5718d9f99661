#!/bin/bash
# tests/oracle/inline.sh — inlined frames (`proff report --inline`, the
# default, and --no-inline) against perf 6.1 on recordings made here: a C++
# program with inlined templates (tests/data/dwarf/inline.cpp) and a C one
# (work.c), -O2 -g without frame pointers, --call-graph dwarf and fp.
# What matches perf is compared in full (the C recording in every mode); the
# corners that do not yet are in docs/compat/report.md ("Inlined frames").
source "$(dirname "$0")/../lib.sh"

command -v perf >/dev/null || { skip "inline oracle (no perf)"; finish; }
command -v gcc >/dev/null && command -v g++ >/dev/null || { skip "inline oracle (no gcc/g++)"; finish; }
can_perf_record || { skip "inline oracle (perf record does not work here)"; finish; }

W="$TMP/w"; mkdir -p "$W"
g++ -O2 -g -fomit-frame-pointer -o "$W/inl" "$ROOT/tests/data/dwarf/inline.cpp" 2>"$TMP/cc.err" &&
gcc -O2 -g -fomit-frame-pointer -pthread -o "$W/work" "$ROOT/tests/data/dwarf/work.c" 2>>"$TMP/cc.err" ||
	{ not_ok "build workloads"; sed 's/^/#   /' "$TMP/cc.err"; finish; }
rec() {   # rec OUT PERF-RECORD-OPTS... -- CMD...
	local out=$1; shift
	perf record -q -e cpu-clock -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { sed 's/^/#   /' "$TMP/rec.err"; return 1; }
}
rec "$W/i.data" --call-graph dwarf -F 8000 -- "$W/inl" 60 || not_ok "record inline.cpp (dwarf)"
rec "$W/ifp.data" -g -F 8000 -- "$W/inl" 60 || not_ok "record inline.cpp (fp)"
rec "$W/c.data" --call-graph dwarf -F 8000 -- "$W/work" 6000 || not_ok "record work.c (dwarf)"

strip_tip() { grep -v '^# (Tip:'; }
cmp_report() {   # cmp_report FILE OPTS... (perf and proff with the same options)
	local file=$1; shift
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" --stdio "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "inline report: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}

# perf 6.1 adds inlined frames only to the chains it unwinds (dwarf): a
# frame-pointer recording is the same with the default and --inline
for o in "" "--no-children" "-g caller" "--no-children -g callee" "--no-children -s sym,srcline"; do
	# shellcheck disable=SC2086
	cmp_report "$W/ifp.data" $o
	# shellcheck disable=SC2086
	cmp_report "$W/ifp.data" --inline $o
done
# --no-inline on dwarf recordings: perf's --no-inline
for f in i c; do
	cmp_report "$W/$f.data" --no-inline
	cmp_report "$W/$f.data" --no-inline --no-children -g caller
done
# the C program's dwarf recording with inlined frames: glibc's header
# inlines, and its assembler functions named among their aliases as
# addr2line names them (__GI_madvise, __GI_mprotect, clone3: the last of
# the DWARF subprograms gas wrote for the range). --no-children in full;
# with Children, rows of equal numbers may come out in another order and
# ld.so's dl_main or _dl_start_final (inlined) be split in two rows by perf
# (docs/compat/report.md), so the "(inlined)" rows are compared by dso and
# name, as a set.
# --max-stack N on dwarf recordings: perf cuts the recorded (kernel) part
# as a recorded chain and keeps the N unwound user frames nearest the leaf
# in either order, each with all of its inlined entries
for o in "--max-stack 3 --no-children" "--max-stack 4 --no-children -g caller" "--max-stack 2 --no-children -g caller -s dso,sym"; do
	# shellcheck disable=SC2086
	cmp_report "$W/c.data" $o
done
cmp_report "$W/i.data" --no-inline --max-stack 5
cmp_report "$W/i.data" --no-inline --max-stack 4 --no-children -g caller
inlined_rows() {   # inlined_rows FILE EXCLUDE-RE: the sorted "(inlined)" rows of perf's and proff's reports
	perf report -i "$1" --stdio -g none 2>/dev/null | grep -E '\(inlined\)$' | grep -Ev "$2" | awk '{$1 = $2 = ""; print}' | sort -u > "$TMP/perf.inl"
	"$PROFF" report -i "$1" --stdio -g none 2>/dev/null | grep -E '\(inlined\)$' | grep -Ev "$2" | awk '{$1 = $2 = ""; print}' | sort -u > "$TMP/proff.inl"
	# glibc's assembler aliases (__GI_madvise ...) show where a sample
	# falls in one of those system calls, which a fast machine's
	# recording may not have: the set is compared either way, and says
	# whether it held them
	local aliases="no glibc alias sampled"
	grep -q '__GI_[a-z_0-9]* (inlined)$' "$TMP/perf.inl" && aliases="glibc aliases among them"
	if [ -s "$TMP/perf.inl" ]; then
		check_same "inline: the (inlined) rows of $(basename "$1"), by dso and name ($aliases)" "$TMP/perf.inl" "$TMP/proff.inl"
	else
		not_ok "inline: perf prints inlined rows for $(basename "$1")"
	fi
}
# glibc's assembler aliases need its DWARF (libc6-dbg, scripts/setup-deps.sh):
# installed, it is the running glibc's (by build id)
if [ -e /usr/share/doc/libc6-dbg/copyright ]; then
	libc=$(ldd "$W/work" | awk '$1 ~ /^libc\.so/ { print $3 }')
	bid=$(readelf -n "$libc" 2>/dev/null | awk '/Build ID/ { print $3 }')
	[ -n "$bid" ] && [ -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] &&
		ok "inline: glibc's DWARF is the running glibc's ($libc, build id $bid)" ||
		not_ok "inline: glibc's DWARF is the running glibc's ($libc, build id ${bid:-none}: no /usr/lib/debug file)"
fi
inlined_rows "$W/c.data" '^$'
inlined_rows "$W/i.data" '^$'
# inline.cpp in full: its mix<T> and atoi are C++ functions without a
# linkage name, which binutils' addr2line names by the symbol table at the
# first address perf asks it about (in the samples' order, each chain root
# first with Children, leaf first without): `atoi (inlined)` never shows,
# `mix<double> (inlined)` lacks that address's samples. With Children, the
# inlined rows above (tied rows' order and perf's split rows differ at times)
for o in "--no-children" "--no-children -g caller" "--no-children -s dso,sym"; do
	# shellcheck disable=SC2086
	cmp_report "$W/i.data" $o
done
# the Self rows keep the samples' real symbols and source lines
for f in i c; do
	cmp_report "$W/$f.data" --no-children -g none -s sym,srcline
	cmp_report "$W/$f.data" --inline --no-children -g none -s sym,srcline
done

# the inlined frames are there: every "NAME (inlined)" row perf prints for
# the program's own code (not libc's aliases: docs/compat/report.md) is
# one of proff's, with its Children share
inl_rows() { grep -E '\[\.\] .* \(inlined\)$' | grep -E '  (inl|work) +\[' | sed 's/^ *//; s/ \+/ /g' | sort; }
perf report -i "$W/i.data" --stdio -g none 2>/dev/null | inl_rows > "$TMP/perf.rows"
"$PROFF" report -i "$W/i.data" --stdio -g none 2>/dev/null | inl_rows > "$TMP/proff.rows"
if [ -s "$TMP/perf.rows" ] && [ -s "$TMP/proff.rows" ] &&
   grep -q 'std::sort<.*> (inlined)$' "$TMP/proff.rows"; then
	ok "inline: proff prints inlined frames of inline.cpp (std::sort ...)"
else
	not_ok "inline: proff prints inlined frames of inline.cpp"; head -5 "$TMP/proff.rows" | sed 's/^/#   /'
fi
# names: perf's inlined names of the program's own code are proff's
cut -d' ' -f6- "$TMP/perf.rows" | sort -u > "$TMP/perf.names"
cut -d' ' -f6- "$TMP/proff.rows" | sort -u > "$TMP/proff.names"
missing=$(comm -23 "$TMP/perf.names" "$TMP/proff.names" | head -5)
if [ -z "$missing" ]; then
	ok "inline: every inlined function perf names in inline.cpp, proff names"
else
	not_ok "inline: every inlined function perf names in inline.cpp, proff names"; echo "$missing" | sed 's/^/#   /'
fi
finish
