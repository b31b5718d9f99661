#!/bin/bash
# man.sh — the manual pages (docs/man/*.scd) against the option tables: every
# option of every table (proff --list-opts, made from the tables) is in its
# command's page, and every option a page documents exists; dprofpp's page
# against its -h. Each page builds with scdoc; -h and --help without a
# terminal print the usage; `proff help CMD` and `proff CMD --help` show the
# page on a terminal.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
MAN="$ROOT/docs/man"

# documented PAGE: the options a page lists (its definition lines: *-x*, *--name*)
documented() {
	grep -E '^\*-' "$MAN/$1.1.scd" | grep -oE '\*--?[A-Za-z0-9][-A-Za-z0-9]*\*' | tr -d '*' | sort -u
}

"$PROFF" --list-opts >"$TMP/tables" || not_ok "proff --list-opts"
# per table: "[record --instrument]" then its options ("--name=" takes a value)
awk '/^\[/{t=substr($0,2,length($0)-2); split(t,w," "); page=w[1]; next} {sub(/=$/,""); print page, $0}' \
	"$TMP/tables" | sort -u >"$TMP/table-opts"
[ "$(wc -l <"$TMP/table-opts")" -gt 100 ] && ok "the tables list their options ($(wc -l <"$TMP/table-opts"))" ||
	not_ok "too few options from --list-opts"

for page in record report diff calibrate convert ab push; do
	documented "proff-$page" >"$TMP/doc.$page"
	awk -v p="$page" '$1 == p {print $2}' "$TMP/table-opts" >"$TMP/tab.$page"
	missing=$(grep -vxF -f "$TMP/doc.$page" "$TMP/tab.$page" | tr '\n' ' ')
	[ -z "$missing" ] && ok "proff-$page(1) documents every option of its tables" ||
		not_ok "proff-$page(1) lacks: $missing"
	# documented but in no table: -h, and --no-X of an --X that is there
	extra=""
	while read -r o; do
		grep -qxF -- "$o" "$TMP/tab.$page" && continue
		[ "$o" = -h ] || [ "$o" = --help ] && continue
		case $o in --no-*) grep -qxF -- "--${o#--no-}" "$TMP/tab.$page" && continue ;; esac
		extra="$extra $o"
	done <"$TMP/doc.$page"
	[ -z "$extra" ] && ok "every option proff-$page(1) documents exists" || not_ok "proff-$page(1) documents unknown:$extra"
done

# the sort keys: proff-report(1)'s SORT KEYS are the catalogue's (lib/hist/keys.c),
# names and aliases, and report -h points there
"$PROFF" --list-values sort | sort -u >"$TMP/keys.cat"
sed -n '/^# SORT KEYS/,/^# CONFIGURATION/p' "$MAN/proff-report.1.scd" | grep -E '^\*' |
	grep -oE '\*[a-z_]+\*' | tr -d '*' | sort -u >"$TMP/keys.man"
[ "$(wc -l <"$TMP/keys.cat")" -ge 9 ] && ok "proff --list-values sort lists the keys ($(wc -l <"$TMP/keys.cat"))" ||
	not_ok "proff --list-values sort lists too few keys"
check_same "proff-report(1)'s SORT KEYS are the catalogue's keys" "$TMP/keys.cat" "$TMP/keys.man"
"$PROFF" report -h 2>&1 | grep -q 'SORT KEYS in proff-report(1)' && ok "report -h names the SORT KEYS" ||
	not_ok "report -h names the SORT KEYS"

# dprofpp keeps Getopt::Std: its page against its -h
"$PROFF" dprofpp -h 2>&1 | grep -oE '^ +-[A-Za-z]' | tr -d ' ' | sort -u >"$TMP/dp.h"
documented proff-dprofpp >"$TMP/dp.doc"
check_same "proff-dprofpp(1) documents exactly dprofpp's -h options" "$TMP/dp.h" "$TMP/dp.doc"

# the global options of proff(1) are the ones proff.c takes
bad=""
for o in --version --help --no-pager --pager --paginate --color --no-color -P -p; do
	grep -E '^\*' "$MAN/proff.1.scd" | grep -qF -- "*$o*" || bad="$bad $o"
done
[ -z "$bad" ] && ok "proff(1) documents the global options" || not_ok "proff(1) lacks:$bad"
"$PROFF" --no-pager --color=never --list-cmds >"$TMP/cmds" && ok "the global options are accepted" || not_ok "global options"
bad=""
for c in $(cat "$TMP/cmds"); do
	[ -f "$MAN/proff-$c.1.scd" ] && grep -qF "*proff-$c*(1)" "$MAN/proff.1.scd" || bad="$bad $c"
done
[ -z "$bad" ] && ok "every command has a page named in proff(1)" || not_ok "no page in proff(1) for:$bad"

# each page builds
if command -v scdoc >/dev/null; then
	bad=""
	for f in "$MAN"/*.scd; do scdoc <"$f" >"$TMP/page.1" 2>"$TMP/scdoc.err" || bad="$bad $(basename "$f")"; done
	[ -z "$bad" ] && ok "scdoc builds every page" || { not_ok "scdoc fails on:$bad"; head -3 "$TMP/scdoc.err" | sed 's/^/#   /'; }
else
	not_ok "scdoc is installed (scripts/setup-deps.sh)"
fi

# -h and --help without a terminal: the usage on stdout
for c in record report calibrate; do
	expect_exit "$c --help without a terminal: usage, status 0" 0 "$PROFF" $c --help
	grep -q "Usage: proff $c" "$TMP/ee.out" && ok "$c --help prints the usage" || not_ok "$c --help prints the usage"
done
expect_exit "diff -h: status 129, as perf diff" 129 "$PROFF" diff -h
grep -q -- '--compute' "$TMP/ee.out" && ok "diff -h lists the options" || not_ok "diff -h output"

# on a terminal, with the page built beside the binary (make doc) or installed
page=$(dirname "$PROFF")/man/man1/proff-report.1
if [ -f "$page" ] && command -v man >/dev/null && command -v script >/dev/null; then
	script -qec "MANPAGER=cat MANWIDTH=80 $PROFF help report" /dev/null >"$TMP/help.tty" 2>&1
	grep -aq 'proff-report - show the Self and Children' "$TMP/help.tty" && ok "proff help report shows the manual page" ||
		{ not_ok "proff help report"; head -5 "$TMP/help.tty" | sed 's/^/#   /'; }
	script -qec "MANPAGER=cat MANWIDTH=80 $PROFF diff --help" /dev/null >"$TMP/help.tty" 2>&1
	grep -aq 'proff-diff - compare profiles' "$TMP/help.tty" && ok "proff diff --help shows the manual page" || not_ok "diff --help"
	script -qec "MANPAGER=cat MANWIDTH=80 $PROFF record --instrument --help" /dev/null >"$TMP/help.tty" 2>&1
	grep -aq 'EXACT TRACES' "$TMP/help.tty" && ok "record --instrument --help shows proff-record(1)" || not_ok "record --instrument --help"
else
	skip "manual pages on a terminal (no $page: make doc)"
fi
finish
