#!/bin/bash
# terminal.sh — proff in a real terminal, as a person uses it: tmux runs it in
# a pane (send-keys, capture-pane) and script(1) gives it a pseudo-terminal
# whose bytes are kept. Checked: the pager appears for long output and not
# for short, quitting it ends proff with status 0, the pager command goes
# through the shell, --no-pager and pager.report; colours are perf's escape
# sequences byte for byte (perf report run on the same file in the same
# kind of terminal); --color and NO_COLOR; with stdout redirected the bytes
# are those of perf's redirected output (no escapes).
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac

for t in tmux script; do
	command -v $t >/dev/null || { not_ok "$t is installed (scripts/setup-deps.sh)"; finish; }
done
W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$W/calls" "$ROOT/tests/data/report/calls.c" ||
	{ not_ok "build calls.c"; finish; }
if ! can_perf_record; then not_ok "perf record works here"; finish; fi
perf record -q -e cpu-clock -g -o "$W/a.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record"

export PROFF_CONFIG=/dev/null PERF_CONFIG=/dev/null TERM=xterm
unset PROFF_PAGER PAGER LESS NO_COLOR
# no progress line in the byte comparisons (a sanitized build takes longer
# than 0.5 s to load); the progress checks set their own delay
export PROFF_PROGRESS_DELAY_MS=3600000

# in_pty CMD: CMD's output as a terminal shows it (script's pseudo-terminal)
in_pty() { script -qec "$1" /dev/null; }
strip_tip() { grep -av '^# (Tip:' ; }

# --- colours: perf's escape sequences, byte for byte --------------------------
n=0
for opts in "--no-children -g none" "--children" "--no-children -g caller" "--no-children -g flat" \
	    "--no-children -g folded" "-n -s dso,sym -g none"; do
	in_pty "perf --no-pager report -i $W/a.data --stdio $opts 2>/dev/null" | strip_tip >"$TMP/perf.tty"
	in_pty "$PROFF --no-pager report -i $W/a.data $opts" | strip_tip >"$TMP/proff.tty"
	check_same "colours on a terminal equal perf's ($opts)" "$TMP/perf.tty" "$TMP/proff.tty"
	n=$((n + $(grep -ac $'\033\\[3[12]m' "$TMP/proff.tty")))
done
[ "$n" -gt 0 ] && ok "the terminal output has coloured percentages ($n)" || not_ok "no colour seen on a terminal"

# redirected: today's bytes (perf's redirected output), no escape at all
perf report -i "$W/a.data" --stdio 2>/dev/null | strip_tip >"$TMP/perf.out"
"$PROFF" report -i "$W/a.data" | strip_tip >"$TMP/proff.out"
check_same "stdout redirected: the bytes of perf's redirected output" "$TMP/perf.out" "$TMP/proff.out"
! grep -q $'\033' "$TMP/proff.out" && ok "stdout redirected: no escape sequence" || not_ok "escapes in redirected output"
"$PROFF" report --color=always -i "$W/a.data" >"$TMP/always.out"
grep -q $'\033\\[31m' "$TMP/always.out" && ok "--color=always colours a redirect" || not_ok "--color=always"
in_pty "$PROFF --no-pager report -i $W/a.data --color=never" >"$TMP/never.tty"
! grep -q $'\033' "$TMP/never.tty" && ok "--color=never on a terminal: no colour" || not_ok "--color=never"
in_pty "NO_COLOR=1 $PROFF --no-pager report -i $W/a.data" >"$TMP/nocolor.tty"
! grep -q $'\033' "$TMP/nocolor.tty" && ok "NO_COLOR on a terminal: no colour" || not_ok "NO_COLOR"
printf '[color]\n\tui = never\n' >"$TMP/never.cfg"
in_pty "PROFF_CONFIG=$TMP/never.cfg $PROFF --no-pager report -i $W/a.data" >"$TMP/cfg.tty"
! grep -q $'\033' "$TMP/cfg.tty" && ok "color.ui = never: no colour" || not_ok "color.ui = never"
expect_exit "--color=sometimes is a usage error" 129 "$PROFF" report --color=sometimes -i "$W/a.data"

# --- diff's colours: perf diff's on a terminal (Baseline and the compute
# column by value, red from 5, green above 0.5, either sign); -t uncoloured
perf record -q -e cpu-clock -o "$W/b.data" -- "$W/calls" >/dev/null 2>&1 || not_ok "record b"
n=0
for opts in "" "-c delta" "-c ratio" "-c wdiff:1,3" "-p -F" "-t ," "-s dso"; do
	in_pty "perf --no-pager diff $opts $W/a.data $W/b.data 2>/dev/null" >"$TMP/perf.tty"
	in_pty "$PROFF --no-pager diff $opts $W/a.data $W/b.data" >"$TMP/proff.tty"
	check_same "diff: colours on a terminal equal perf's (${opts:-no option})" "$TMP/perf.tty" "$TMP/proff.tty"
	n=$((n + $(grep -ac $'\033\\[3[12]m' "$TMP/proff.tty")))
done
[ "$n" -gt 0 ] && ok "diff: coloured cells on a terminal ($n)" || not_ok "diff: no colour seen on a terminal"
"$PROFF" diff "$W/a.data" "$W/b.data" >"$TMP/diff.out"
in_pty "$PROFF --no-pager diff --color=never $W/a.data $W/b.data" | tr -d '\r' >"$TMP/diff.never"
check_same "diff: redirected = --color=never on a terminal" "$TMP/diff.out" "$TMP/diff.never"
! grep -q $'\033' "$TMP/diff.out" && ok "diff redirected: no escape sequence" || not_ok "diff: escapes in redirected output"

# groups of runs: a significant row's delta red (increase) or green
# (decrease), nothing else; redirected, the same bytes without escapes
cc -O1 -g -fno-omit-frame-pointer -o "$W/planted" "$ROOT/tests/data/stats/planted.c" || not_ok "build planted.c"
"$PROFF" record -q -r 3 -c 200000 -o "$W/ga" "$W/planted" 20000000 100 >/dev/null 2>&1
"$PROFF" record -q -r 3 -c 200000 -o "$W/gb" "$W/planted" 20000000 150 >/dev/null 2>&1
G="$W/ga.1 $W/ga.2 $W/ga.3 -- $W/gb.1 $W/gb.2 $W/gb.3"
# shellcheck disable=SC2086
"$PROFF" diff $G >"$TMP/g.out"
in_pty "$PROFF --no-pager diff $G" | tr -d '\r' >"$TMP/g.tty"
sed 's/\x1b\[[0-9]*m//g' "$TMP/g.tty" >"$TMP/g.stripped"
check_same "groups: the terminal's text without its escapes = the redirected output" "$TMP/g.out" "$TMP/g.stripped"
! grep -q $'\033' "$TMP/g.out" && ok "groups redirected: no escape sequence" || not_ok "groups: escapes in redirected output"
# each row: is it marked significant (a '*' column), its delta's sign, its colour
if python3 - "$TMP/g.tty" <<'EOF2'; then ok "groups: exactly the significant rows' deltas coloured, red up, green down"; else not_ok "groups colours"; fi
import re, sys
rows = [l for l in open(sys.argv[1], encoding="utf-8", errors="replace") if not l.startswith("#") and l.strip()]
seen = {"red": 0, "green": 0}
for l in rows:
    esc = re.findall(r"\x1b\[(3[12])m([^\x1b]*)\x1b\[m", l)
    plain = re.sub(r"\x1b\[[0-9]*m", "", l)
    sig = re.search(r"\s\*\s", plain) is not None
    if not sig:
        assert not esc, ("coloured, not significant", l)
        continue
    assert len(esc) == 1, ("significant, not coloured once", l)
    code, cell = esc[0]
    delta = cell.strip()
    want = "31" if delta.startswith("+") else "32"
    assert code == want, ("wrong colour", l)
    assert plain.split()[1] == delta, ("the colour is not on the delta", l)
    seen["red" if code == "31" else "green"] += 1
assert seen["red"] + seen["green"] > 0, "no significant row"
print(seen, file=sys.stderr)
EOF2

# --- progress ------------------------------------------------------------------
# PROFF_PROGRESS_DELAY_MS=0: the line from the start of the load (else after
# 0.5 s, more than this small file takes)
in_pty "PROFF_PROGRESS_DELAY_MS=0 $PROFF --no-pager report -i $W/a.data --no-children -g none" >"$TMP/pg.tty"
grep -aq "proff: reading $W/a.data" "$TMP/pg.tty" && ok "progress line on a terminal's stderr" || not_ok "progress line"
grep -aq $'\r\033\[K# To display' "$TMP/pg.tty" && ok "progress line erased before the output" || not_ok "progress erased"
PROFF_PROGRESS_DELAY_MS=0 "$PROFF" report -i "$W/a.data" >/dev/null 2>"$TMP/pg.err"
[ ! -s "$TMP/pg.err" ] && ok "no progress when stderr is not a terminal" || not_ok "progress on a redirect"
in_pty "PROFF_PROGRESS_DELAY_MS=0 $PROFF --no-pager report -q -i $W/a.data" >"$TMP/pgq.tty"
! grep -aq "proff: reading" "$TMP/pgq.tty" && ok "-q: no progress" || not_ok "-q progress"
in_pty "PROFF_PROGRESS_DELAY_MS=60000 $PROFF --no-pager report -i $W/a.data" >"$TMP/pgd.tty"
! grep -aq "proff: reading" "$TMP/pgd.tty" && ok "a load shorter than the delay shows no progress" || not_ok "progress on a short load"

# --- the pager ------------------------------------------------------------------
# the pager command runs through the shell (PAGER='less -S' style)
in_pty "PROFF_PAGER='sed s/^/paged:/' $PROFF report -i $W/a.data --no-children -g none" >"$TMP/p.tty"
grep -aq '^paged:# Overhead' "$TMP/p.tty" && ok "PROFF_PAGER runs through the shell" || not_ok "PROFF_PAGER"
in_pty "PAGER='sed s/^/paged:/' $PROFF report -i $W/a.data --no-children -g none" >"$TMP/p.tty"
grep -aq '^paged:' "$TMP/p.tty" && ok "PAGER is used" || not_ok "PAGER"
in_pty "PAGER='sed s/^/paged:/' $PROFF --no-pager report -i $W/a.data --no-children -g none" >"$TMP/p.tty"
! grep -aq '^paged:' "$TMP/p.tty" && grep -aq '^# Overhead' "$TMP/p.tty" && ok "proff --no-pager" || not_ok "proff --no-pager"
in_pty "PAGER='sed s/^/paged:/' $PROFF report --no-pager -i $W/a.data --no-children -g none" >"$TMP/p.tty"
! grep -aq '^paged:' "$TMP/p.tty" && ok "report --no-pager" || not_ok "report --no-pager"
printf '[pager]\n\treport = false\n' >"$TMP/nopager.cfg"
in_pty "PROFF_CONFIG=$TMP/nopager.cfg PAGER='sed s/^/paged:/' $PROFF report -i $W/a.data --no-children -g none" >"$TMP/p.tty"
! grep -aq '^paged:' "$TMP/p.tty" && ok "pager.report = false" || not_ok "pager.report = false"
printf '[pager]\n\treport = sed s/^/cfg:/\n' >"$TMP/cmdpager.cfg"
in_pty "PROFF_CONFIG=$TMP/cmdpager.cfg $PROFF report -i $W/a.data --no-children -g none" >"$TMP/p.tty"
grep -aq '^cfg:' "$TMP/p.tty" && ok "pager.report = COMMAND" || not_ok "pager.report = COMMAND"
PAGER='sed s/^/paged:/' "$PROFF" report -i "$W/a.data" -g none >"$TMP/p.out"
! grep -q '^paged:' "$TMP/p.out" && ok "no pager when stdout is not a terminal" || not_ok "paged a redirect"

# a pager that quits early (as a user quitting less): proff ends quietly, 0
in_pty "PROFF_PAGER='head -n 2' $PROFF report -D -i $W/a.data; echo \"[rc=\$?]\"" >"$TMP/q.tty"
grep -aq '^\[rc=0\]' "$TMP/q.tty" && ok "pager gone before the end: exit status 0" || { not_ok "pager gone: status"; tail -3 "$TMP/q.tty" | sed 's/^/#   /'; }
! grep -aqi 'error\|broken pipe' "$TMP/q.tty" && ok "pager gone before the end: no message" || not_ok "pager gone: message"

# in tmux, with less: long output waits in less, q ends it with status 0;
# short output is shown and proff ends without a key (less -F)
SOCK="proff-test-$$"
tm() { tmux -L "$SOCK" "$@"; }
trap 'tmux -L "$SOCK" kill-server 2>/dev/null; rm -rf "$TMP"' EXIT
wait_file() { for _ in $(seq 1 300); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
tm new-session -d -s long -x 120 -y 30 "cd $TMP && $PROFF report -i $W/a.data; echo \$? > $TMP/long.rc; sleep 60"
for _ in $(seq 1 150); do     # less's prompt, once the report is loaded
	tm capture-pane -p -t long >"$TMP/long.screen"
	tail -n 1 "$TMP/long.screen" | grep -q '^:' && break
	sleep 0.1
done
if [ ! -s "$TMP/long.rc" ] && [ "$(grep -c . "$TMP/long.screen")" -ge 25 ] && tail -n 1 "$TMP/long.screen" | grep -q '^:'; then
	ok "long output: less shows the first screen and waits"
else
	not_ok "long output: less waits"; sed 's/^/#   /' "$TMP/long.screen" | tail -5
fi
tm capture-pane -e -p -t long | grep -q $'\033\\[31m' && ok "colours reach the terminal through less (LESS=FRX)" || not_ok "colours through less"
tm send-keys -t long q
wait_file "$TMP/long.rc" && [ "$(cat "$TMP/long.rc")" = 0 ] && ok "q in less: proff ends with status 0" ||
	not_ok "q in less: status $(cat "$TMP/long.rc" 2>/dev/null)"
tm new-session -d -s short -x 120 -y 40 "cd $TMP && $PROFF report -i $W/a.data -q -g none --percent-limit 10; echo \$? > $TMP/short.rc; sleep 60"
wait_file "$TMP/short.rc" && [ "$(cat "$TMP/short.rc")" = 0 ] && ok "short output: no key needed, status 0" || not_ok "short output waited"
tm capture-pane -p -t short | grep -q '%' && ok "short output: on the screen" || not_ok "short output shown"
# the progress line in a pane: drawn, then gone from the screen
tm new-session -d -s prog -x 150 -y 40 "cd $TMP && PROFF_PROGRESS_DELAY_MS=0 $PROFF --no-pager report -i $W/a.data -g none --percent-limit 10; echo \$? > $TMP/prog.rc; sleep 60"
wait_file "$TMP/prog.rc"
tm capture-pane -p -t prog >"$TMP/prog.screen"
grep -q '% ' "$TMP/prog.screen" && ! grep -q 'proff: reading' "$TMP/prog.screen" && ok "progress gone from the screen after the load" ||
	{ not_ok "progress gone"; sed 's/^/#   /' "$TMP/prog.screen" | head -5; }
finish
