#!/bin/bash
# config.sh — the config files against perf: proff reads perf's own file
# ($PERF_CONFIG / ~/.perfconfig: [report], [diff], [call-graph], [hist]) and
# prints what perf prints with it; proff's file ($PROFF_CONFIG) wins; a bad
# value gets perf's "bad config value" message, with the file and line, and
# the default, as perf; a malformed file is said once.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac

W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/calls" "$ROOT/tests/data/report/calls.c" ||
	{ not_ok "build calls.c"; finish; }
if ! can_perf_record; then not_ok "perf record works here"; finish; fi
perf record -q -e cpu-clock -g -o "$W/a.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record a"
perf record -q -e cpu-clock -g -o "$W/b.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record b"
strip_tip() { grep -v '^# (Tip:' ; }

# with_perf_config NAME CONFIG-TEXT ARGS...: perf and proff read the same perf
# config file (proff's own file empty); stdout equal
with_perf_config() {
	local name=$1 cfg=$2; shift 2
	printf "$cfg" >"$TMP/perf.cfg"
	PERF_CONFIG="$TMP/perf.cfg" perf report -i "$W/a.data" --stdio "$@" 2>/dev/null | strip_tip >"$TMP/perf.out"
	PERF_CONFIG="$TMP/perf.cfg" PROFF_CONFIG=/dev/null "$PROFF" report -i "$W/a.data" "$@" 2>"$TMP/err" | strip_tip >"$TMP/proff.out"
	check_same "perf's config: $name" "$TMP/perf.out" "$TMP/proff.out"
}
with_perf_config "report.children = false" '[report]\n\tchildren = false\n' -g none
with_perf_config "call-graph.print-type = flat, threshold = 3" '[call-graph]\n\tprint-type = flat\n\tthreshold = 3\n' --no-children
with_perf_config "call-graph.print-type = graph, order = callee, threshold = 1" '[call-graph]\n\tprint-type = graph\n\torder = callee\n\tthreshold = 1\n' --no-children -s sym
with_perf_config "call-graph.order = callee with children" '[call-graph]\n\torder = callee\n\tthreshold = 2\n' --children -s sym
with_perf_config "call-graph.print-limit = 2" '[call-graph]\n\tprint-limit = 2\n\tprint-type = flat\n' --no-children
with_perf_config "report.percent-limit = 5" '[report]\n\tpercent-limit = 5\n'
with_perf_config "hist.percentage = relative with -d" '[hist]\n\tpercentage = relative\n' --no-children -g none -d calls
with_perf_config "the command line wins over the file" '[report]\n\tchildren = false\n[call-graph]\n\tprint-type = flat\n' --children -g graph

# the diff keys from perf's file
printf '[diff]\n\tcompute = ratio\n\torder = 0\n' >"$TMP/perf.cfg"
PERF_CONFIG="$TMP/perf.cfg" perf diff "$W/a.data" "$W/b.data" 2>/dev/null >"$TMP/perf.out"
PERF_CONFIG="$TMP/perf.cfg" PROFF_CONFIG=/dev/null "$PROFF" diff "$W/a.data" "$W/b.data" 2>/dev/null >"$TMP/proff.out"
check_same "perf's config: diff.compute = ratio, diff.order = 0" "$TMP/perf.out" "$TMP/proff.out"

# proff's own file wins over perf's
printf '[report]\n\tchildren = false\n' >"$TMP/perf.cfg"
printf '[report]\n\tchildren = true\n' >"$TMP/proff.cfg"
perf report -i "$W/a.data" --stdio --children -g none 2>/dev/null | strip_tip >"$TMP/perf.out"
PERF_CONFIG="$TMP/perf.cfg" PROFF_CONFIG="$TMP/proff.cfg" "$PROFF" report -i "$W/a.data" -g none | strip_tip >"$TMP/proff.out"
check_same "proff's file wins over perf's" "$TMP/perf.out" "$TMP/proff.out"
# only the sections proff knows are taken from perf's file
printf '[color]\n\tui = always\n' >"$TMP/perf.cfg"
PERF_CONFIG="$TMP/perf.cfg" PROFF_CONFIG=/dev/null "$PROFF" report -i "$W/a.data" -g none >"$TMP/proff.out"
! grep -q $'\033' "$TMP/proff.out" && ok "perf's [color] is not proff's" || not_ok "perf's [color] was read"

# bad values: perf's message with file and line, the default, status as perf
export PERF_CONFIG=/dev/null
printf '[report]\n\t# a comment\n\tchildren = maybe\n' >"$TMP/bad.cfg"
PROFF_CONFIG="$TMP/bad.cfg" "$PROFF" report -i "$W/a.data" -g none 2>"$TMP/err" | strip_tip >"$TMP/proff.out"; rc=${PIPESTATUS[0]}
PERF_CONFIG="$TMP/bad.cfg" perf report -i "$W/a.data" --stdio -g none 2>"$TMP/perf.err" | strip_tip >"$TMP/perf.out"
check_same "report.children = maybe: perf's output (the default)" "$TMP/perf.out" "$TMP/proff.out"
grep -q "bad config value for 'report.children'" "$TMP/perf.err" || not_ok "perf says bad config value (oracle)"
grep -q "^proff: bad config value for 'report.children' in $TMP/bad.cfg line 3 ('maybe': not a boolean), ignoring...\$" "$TMP/err" &&
	[ "$rc" = 0 ] && ok "report.children = maybe: perf's message with file and line, status 0" ||
	{ not_ok "report.children = maybe message (rc $rc)"; sed 's/^/#   /' "$TMP/err"; }
printf '[report]\n\tpercent-limit = lots\n' >"$TMP/bad.cfg"
PROFF_CONFIG="$TMP/bad.cfg" "$PROFF" report -i "$W/a.data" -g none >/dev/null 2>"$TMP/err"
grep -q "bad config value for 'report.percent-limit' in $TMP/bad.cfg line 2" "$TMP/err" && ok "report.percent-limit = lots: bad config value" ||
	not_ok "report.percent-limit = lots"
printf '[color]\n\tui = sometimes\n' >"$TMP/bad.cfg"
PROFF_CONFIG="$TMP/bad.cfg" "$PROFF" report -i "$W/a.data" -g none >/dev/null 2>"$TMP/err"
grep -q "bad config value for 'color.ui' in $TMP/bad.cfg line 2" "$TMP/err" && ok "color.ui = sometimes: bad config value" ||
	not_ok "color.ui = sometimes"
printf '[diff]\n\torder = x\n' >"$TMP/bad.cfg"
PROFF_CONFIG="$TMP/bad.cfg" "$PROFF" diff "$W/a.data" "$W/b.data" >"$TMP/proff.out" 2>"$TMP/err"; rc=$?
grep -qx "proff: bad config value for 'diff.order' in $TMP/bad.cfg line 2 ('x': not an order)" "$TMP/err" &&
	[ "$(wc -l <"$TMP/err")" = 1 ] && [ "$rc" = 255 ] && [ ! -s "$TMP/proff.out" ] &&
	ok "diff.order = x: one line with file and line, status 255" ||
	{ not_ok "diff.order = x (rc $rc)"; sed 's/^/#   /' "$TMP/err"; }
# a malformed file: said once, the report goes on as perf's does
printf '[report\n\tchildren = false\n' >"$TMP/bad.cfg"
PROFF_CONFIG="$TMP/bad.cfg" "$PROFF" report -i "$W/a.data" -g none >/dev/null 2>"$TMP/err"; rc=$?
[ "$rc" = 0 ] && [ "$(grep -c "bad.cfg.*line 1" "$TMP/err")" = 1 ] && ok "a malformed file: one message naming file and line, status 0" ||
	{ not_ok "malformed file (rc $rc)"; sed 's/^/#   /' "$TMP/err"; }
finish
