#!/bin/bash
# tests/cli/architecture.sh — the layer rules and recipes of docs/architecture.md,
# checked on the built library and the sources:
#  * the library never prints on its own and never exits: no object of
#    libproff.a refers to stdout, stderr, printf, puts, putchar, perror, exit,
#    abort or err/warn; _exit only in the two members where a forked child ends;
#  * the library never calls the CLI (cli_*, cmd_*, po_* symbols);
#  * every public header compiles on its own;
#  * every command of cli/proff.c's commands[] has cli/cmd-NAME.c, an option
#    table in option_tables[] (dprofpp: Getopt::Std's, its own) and a manual page;
#  * every input format of enum pf_format is named in docs/architecture.md;
#  * no lib/**/*.c is over 1,500 lines (a new subsystem goes in a new file);
#  * commands never call cmd_* of another command (cli/cmd-NAME*.c calls
#    cmd_NAME* only; the other CLI files none): a command that ends in
#    another's work calls that work's function (ab: diff_cli_run).
source "$(dirname "$0")/../lib.sh"
BUILD_DIR=$(dirname "$PROFF")
LIB=$BUILD_DIR/libproff.a
DOC=$ROOT/docs/architecture.md
if [ ! -f "$LIB" ]; then not_ok "architecture: $LIB not found"; finish; fi
[ -f "$DOC" ] || { not_ok "architecture: docs/architecture.md is missing"; finish; }

# undefined symbols per member: "member symbol"
nm -A -u "$LIB" 2>/dev/null | awk '{ m = $1; sub(/:$/, "", m); sub(/^.*:/, "", m); print m, $NF }' > "$TMP/undef.txt"
n=$(wc -l < "$TMP/undef.txt")
if [ "$n" -lt 100 ]; then not_ok "architecture: nm saw only $n undefined symbols in $LIB"; finish; fi
# the sanitizers' builds refer to their own runtimes; the symbols below are
# the C library's either way
grep -wE 'stdout|stderr|printf|puts|putchar|perror|exit|abort|err|errx|warn|warnx|vprintf' "$TMP/undef.txt" |
	grep -vE '^[^ ]+ (__ubsan|__asan|__tsan)' > "$TMP/prints.txt"
if [ -s "$TMP/prints.txt" ]; then
	not_ok "architecture: the library prints or exits on its own"; sed 's/^/#   /' "$TMP/prints.txt" | head -20
else
	ok "architecture: no library object refers to stdout, stderr, printf, exit, abort, err/warn ($n undefined symbols read)"
fi
awk '$2 == "_exit" { print $1 }' "$TMP/undef.txt" | sort -u > "$TMP/exit.txt"
if grep -qvxE 'workload\.o|measure\.o' "$TMP/exit.txt"; then
	not_ok "architecture: _exit outside a forked child: $(tr '\n' ' ' < "$TMP/exit.txt")"
else
	ok "architecture: _exit only where a forked child ends ($(tr '\n' ' ' < "$TMP/exit.txt"))"
fi
grep -E ' (cli_|cmd_|po_)' "$TMP/undef.txt" > "$TMP/cli.txt"
if [ -s "$TMP/cli.txt" ]; then
	not_ok "architecture: the library calls the CLI"; sed 's/^/#   /' "$TMP/cli.txt" | head
else
	ok "architecture: the library calls no CLI function"
fi

# each public header on its own
CC=${CC:-cc}
bad=0; nh=0
for h in "$ROOT"/include/proff/*.h; do
	nh=$((nh + 1))
	if ! printf '#include "proff/%s"\n' "$(basename "$h")" |
		$CC -std=gnu17 -D_GNU_SOURCE -fsyntax-only -Wall -Wextra -I "$ROOT/include" -I "$BUILD_DIR/gen" -x c - 2>"$TMP/h.err"; then
		not_ok "architecture: include/proff/$(basename "$h") does not compile on its own"; sed 's/^/#   /' "$TMP/h.err" | head -5
		bad=1
	fi
done
[ "$bad" = 0 ] && [ "$nh" -gt 10 ] && ok "architecture: each of the $nh public headers compiles on its own"

# commands: the table, their files, option tables and manual pages
sed -n '/^static const struct cmd_struct commands\[\]/,/^};/p' "$ROOT/cli/proff.c" |
	sed -n 's/^[[:space:]]*{ "\([a-z]*\)",.*/\1/p' > "$TMP/cmds.txt"
tables=$(sed -n '/^static const struct po_cmd \*const option_tables\[\]/,/^};/p' "$ROOT/cli/proff.c")
nc=$(wc -l < "$TMP/cmds.txt")
[ "$nc" -ge 8 ] || not_ok "architecture: only $nc commands read from cli/proff.c"
while read -r c; do
	miss=""
	[ -f "$ROOT/cli/cmd-$c.c" ] || miss="$miss cli/cmd-$c.c"
	[ -f "$ROOT/docs/man/proff-$c.1.scd" ] || miss="$miss docs/man/proff-$c.1.scd"
	if [ "$c" != dprofpp ]; then
		grep -q "&cmd_${c}_opts" <<<"$tables" || miss="$miss option_tables[]"
		grep -q "^const po_cmd cmd_${c}_opts" "$ROOT/cli/cmd-$c.c" 2>/dev/null || miss="$miss cmd_${c}_opts"
	fi
	if [ -z "$miss" ]; then ok "architecture: command $c has its file, option table and manual page"
	else not_ok "architecture: command $c lacks:$miss"; fi
done < "$TMP/cmds.txt"

# input formats
sed -n '/^enum pf_format {/,/^};/p' "$ROOT/include/proff/formats.h" |
	sed -n 's/^[[:space:]]*\(PF_FORMAT_[A-Z]*\).*/\1/p' | grep -v UNKNOWN > "$TMP/fmts.txt"
nf=$(wc -l < "$TMP/fmts.txt")
declare -A doc_name=([PF_FORMAT_PERF]="perf.data" [PF_FORMAT_TRACE]="exact trace" [PF_FORMAT_PPROF]="pprof" [PF_FORMAT_FOLDED]="folded stacks")
while read -r f; do
	name=${doc_name[$f]:-}
	if [ -z "$name" ]; then not_ok "architecture: input format $f is new: name it in docs/architecture.md and here"
	elif grep -q "$name" "$DOC"; then ok "architecture: input format $f ($name) is in docs/architecture.md"
	else not_ok "architecture: input format $f ($name) is not in docs/architecture.md"; fi
done < "$TMP/fmts.txt"
[ "$nf" -ge 4 ] || not_ok "architecture: only $nf input formats read from include/proff/formats.h"

# commands call no other command's cmd_* (no forged argv between commands)
: > "$TMP/xcalls.txt"
ncli=0
for f in "$ROOT"/cli/*.c; do
	b=$(basename "$f" .c)
	[ "$b" = proff ] && continue       # the command table
	ncli=$((ncli + 1))
	own=""
	case "$b" in cmd-*) own=${b#cmd-}; own=${own%%-*} ;; esac
	# calls, outside comments and definitions
	grep -nE '\<cmd_[a-z_]+\(' "$f" | grep -vE '^[0-9]+:[[:space:]]*(\*|/\*|//)' |
		grep -vE '^[0-9]+:(int|bool|static int|static bool) cmd_' |
		grep -oE '^[0-9]+:|\<cmd_[a-z_]+\(' | paste -d' ' - - 2>/dev/null |
		while read -r ln fn; do
			fn=${fn%(}
			if [ -z "$own" ] || { [ "$fn" != "cmd_$own" ] && [ "${fn#cmd_${own}_}" = "$fn" ]; }; then
				echo "cli/$b.c:${ln%:} calls $fn"
			fi
		done >> "$TMP/xcalls.txt"
done
if [ "$ncli" -lt 10 ]; then not_ok "architecture: only $ncli CLI files read"
elif [ -s "$TMP/xcalls.txt" ]; then
	not_ok "architecture: a command calls another command's cmd_*"; sed 's/^/#   /' "$TMP/xcalls.txt" | head
else ok "architecture: no command calls another command's cmd_* ($ncli CLI files read)"; fi

# file sizes: no library file over 1,500 lines
find "$ROOT/lib" -name '*.c' -exec wc -l {} + | awk '$2 != "total" && $1 > 1500 { sub(/^.*\/lib\//, "lib/", $2); print $2 " (" $1 " lines)" }' > "$TMP/long.txt"
nlib=$(find "$ROOT/lib" -name '*.c' | wc -l)
if [ "$nlib" -lt 50 ]; then not_ok "architecture: only $nlib library files found under lib/"
elif [ -s "$TMP/long.txt" ]; then not_ok "architecture: library files over 1,500 lines: $(tr '\n' ' ' < "$TMP/long.txt")"
else ok "architecture: each of the $nlib lib/**/*.c files has at most 1,500 lines"; fi
finish
