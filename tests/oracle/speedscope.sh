#!/bin/bash
# tests/oracle/speedscope.sh — speedscope (the npm package, installed here
# from the npm registry into build/npm/) loads proff's speedscope file of an
# exact trace in headless Chromium: the page imports it as a speedscope file,
# reports no error and shows the profile of every thread by its name
# ("prog PID/TID", from proff report of the trace). A damaged copy of the
# same file must be reported as failing, which shows the check can fail.
# The profile reaches speedscope as its own command-line tool hands it over:
# a script calling speedscope.loadFileFromBase64, named in the page's
# #localProfilePath.
source "$(dirname "$0")/../lib.sh"

SS_VERSION=1.25.0
for tool in npm node chromium gcc; do
	command -v $tool >/dev/null || { not_ok "$tool is not installed (scripts/setup-deps.sh installs it)"; finish; }
done
NPM_DIR=$ROOT/build/npm/speedscope-$SS_VERSION
SS=$NPM_DIR/node_modules/speedscope/dist/release/index.html
if [ ! -f "$SS" ]; then
	mkdir -p "$NPM_DIR"
	if ! npm install --prefix "$NPM_DIR" --no-audit --no-fund --loglevel=error "speedscope@$SS_VERSION" >"$TMP/npm.log" 2>&1; then
		not_ok "npm install speedscope@$SS_VERSION"; sed 's/^/#   /' "$TMP/npm.log" | tail -5; finish
	fi
fi
[ -f "$SS" ] || { not_ok "speedscope's page not found after npm install ($SS)"; finish; }
RT=$(dirname "$PROFF")/libproff-instrument.so
[ -s "$RT" ] || { not_ok "no instrumentation runtime next to $PROFF"; finish; }
PROFF=$(cd "$(dirname "$PROFF")" && pwd)/$(basename "$PROFF")
W=$TMP/w; mkdir -p "$W"

chrome_pid=
trap '[ -n "$chrome_pid" ] && kill "$chrome_pid" 2>/dev/null; rm -rf "$TMP"' EXIT

# load FILE.json NAME: the page's DOM after speedscope imported the file (dom.html), console in console.txt
load() {
	python3 - "$1" "$2" "$W/load.js" <<'PY'
import base64, json, sys
data = open(sys.argv[1], 'rb').read()
open(sys.argv[3], 'w').write('speedscope.loadFileFromBase64(%s, %s)' %
                             (json.dumps(sys.argv[2]), json.dumps(base64.b64encode(data).decode())))
PY
	rm -rf "$W/chrome"
	timeout -k 5 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
		--disable-component-update --disable-sync --no-first-run --user-data-dir="$W/chrome" \
		--enable-logging=stderr --v=0 --virtual-time-budget=10000 \
		--dump-dom "file://$SS#localProfilePath=$W/load.js" > "$W/dom.html" 2> "$W/chrome.err" &
	chrome_pid=$!
	wait "$chrome_pid"
	local rc=$?
	chrome_pid=
	grep 'CONSOLE' "$W/chrome.err" | sed 's/^.*CONSOLE[^]]*\] //' > "$W/console.txt"
	return $rc
}

# failed FILE.json: why speedscope did not take it (empty: it did)
failed() {
	if grep -q 'Failed to load\|Uncaught\|Error:' "$W/console.txt"; then grep -m1 'Failed to load\|Uncaught\|Error:' "$W/console.txt"
	elif grep -q 'Something went wrong' "$W/dom.html"; then echo "the page says: Something went wrong"
	elif ! grep -q 'Importing as speedscope json file' "$W/console.txt"; then echo "no import (not read as a speedscope file)"
	fi
}

gcc -O2 -g -finstrument-functions -pthread -o "$W/threads" "$ROOT/tests/data/instrument/threads.c" || { not_ok "build threads.c"; finish; }
(cd "$W" && "$PROFF" record --instrument -q -o threads.trace -- ./threads 3 20 >/dev/null 2>&1) || { not_ok "record threads"; finish; }
"$PROFF" convert "$W/threads.trace" "$W/threads.speedscope.json" || { not_ok "convert to speedscope"; finish; }
# the profiles' names: "prog PID/TID" of each thread of the trace (the
# process's pid from the trace's session, the threads' from proff report)
pid=$("$PROFF" record --instrument --info "$W/threads.trace" | sed -n 's/^session [0-9a-f]* pid \([0-9]*\) .*/\1/p')
"$PROFF" report -i "$W/threads.trace" -s tid -g none -q --no-children |
	awk -v pid="$pid" 'NF >= 1 { split($NF, t, ":"); print t[2] " " pid "/" t[1] }' | sort -u > "$W/names.txt"
n=$(wc -l < "$W/names.txt")

if load "$W/threads.speedscope.json" threads.speedscope.json; then
	why=$(failed)
	if [ -z "$why" ]; then ok "speedscope $SS_VERSION imports proff's file without error"
	else not_ok "speedscope $SS_VERSION imports proff's file: $why"; fi
	missing=0
	while read -r name; do
		grep -qF "$name" "$W/dom.html" || { missing=$((missing + 1)); echo "#   not shown: $name"; }
	done < "$W/names.txt"
	if [ "$n" -ge 2 ] && [ $missing = 0 ] && grep -q "(1/$n)" "$W/dom.html"; then
		ok "speedscope shows the $n threads' profiles by name ($(tr '\n' ',' < "$W/names.txt" | sed 's/,$//'))"
	else
		not_ok "speedscope shows the threads' profiles ($n expected, $missing missing)"
		sed 's/></>\n</g' "$W/dom.html" | grep -i 'span' | head -5 | sed 's/^/#   /'
	fi
	title=$(sed -n 's:.*<title>\(.*\)</title>.*:\1:p' "$W/dom.html")
	[ "$title" = "threads.trace - speedscope" ] && ok "speedscope's title names the trace" || not_ok "speedscope's title: '$title'"
else
	not_ok "headless chromium with speedscope (exit $?)"; tail -3 "$W/chrome.err" | sed 's/^/#   /'
fi

# the control: the same file with one event's frame changed must fail
python3 - "$W/threads.speedscope.json" "$W/bad.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ev = next(p for p in d['profiles'] if len(p['events']) > 4)['events']
ev[2]['frame'] = (ev[2]['frame'] + 1) % len(d['shared']['frames'])
json.dump(d, open(sys.argv[2], 'w'))
PY
if load "$W/bad.json" bad.json; then
	why=$(failed)
	if [ -n "$why" ]; then ok "a damaged file is reported by speedscope ($why)"
	else not_ok "a damaged file passed the check"; fi
else
	not_ok "headless chromium with speedscope, damaged file"
fi
finish
