#!/bin/bash
# tests/cli/fleet-kill.sh — the ClickHouse server killed (SIGKILL) while files are
# being pushed one after another: every push either says it stored its file or names
# it to push again; after a restart the store holds every file said stored (and at
# most the one whose marker was committed as the server died), nothing half stored
# (the report equals the local store's report of the marked files), and pushing the
# rest again completes the store, each file counted once. The server is a plain
# process under $TMP (tests/tools/clickhouse.sh), stopped by pid at the end.
source "$(dirname "$0")/../lib.sh"

case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
export PROFF_CONFIG=/dev/null
unset PROFF_STORE PROFF_CLICKHOUSE_USER PROFF_CLICKHOUSE_PASSWORD
command -v clickhouse-server >/dev/null || { skip "server killed mid-push (clickhouse-server is not installed)"; finish; }
case "$PROFF" in
*asan*) skip "server killed mid-push (run with the normal build only)"; finish;;
esac
"$PROFF" record -q -o "$TMP/probe.data" true >/dev/null 2>&1 || { skip "server killed mid-push (recording does not work here)"; finish; }
W=$TMP/w; mkdir -p "$W/hosts"; cd "$W" || exit 1
cc -O1 -g -fno-omit-frame-pointer -o planted "$ROOT/tests/data/stats/planted.c" || { not_ok "build planted.c"; finish; }
"$PROFF" record -q -c 200000 -g -o src.data ./planted 20000000 100 >/dev/null 2>&1 && "$PROFF" convert src.data src.folded >/dev/null 2>&1 &&
	python3 "$ROOT/tests/tools/fleet_hosts.py" src.folded hosts h 60 300 7 || { not_ok "fleet files made"; finish; }

source "$ROOT/tests/tools/clickhouse.sh"
trap 'ch_stop_all; rm -rf "$TMP"' EXIT
ch_start "$TMP/ch" k || { not_ok "ClickHouse server starts"; finish; }
ch_sql k "CREATE DATABASE fleet" >/dev/null
URL=clickhouse://127.0.0.1:$CH_HTTP_k/fleet
"$PROFF" push -q --store "$URL" --init server || not_ok "--init server"

# one push per file, the server killed partway
( for f in hosts/*.folded; do
	if "$PROFF" push --store "$URL" --label build=K "$f" >>stored.out 2>>push.err; then echo "$f" >>stored; else echo "$f" >>failed; fi
  done ) &
loop=$!
for i in $(seq 1 600); do [ -f stored ] && [ "$(wc -l <stored)" -ge 15 ] && break; sleep 0.05; done
eval "kill -9 \$CH_PID_k; wait \$CH_PID_k" 2>/dev/null
wait "$loop"
ns=$(wc -l <stored 2>/dev/null || echo 0); nf=$(wc -l <failed 2>/dev/null || echo 0)
[ "$ns" -ge 15 ] && [ "$nf" -gt 0 ] && [ $((ns + nf)) = 60 ] && ok "killed mid-push: $ns files stored, $nf named to push again" ||
	{ not_ok "killed mid-push: $ns stored, $nf failed"; head -3 push.err | sed 's/^/#   /'; }
grep -q "push it again" push.err && ! grep -v -e "cannot reach the server" -e "not stored" -e "push it again" -e "the server answered" push.err | grep -q . \
	&& ok "killed mid-push: every failure says what to push again" || { not_ok "killed mid-push: the failures' messages"; head -5 push.err | sed 's/^/#   /'; }

eval "CH_PID_k="
ch_start "$TMP/ch" k || { not_ok "ClickHouse restarts on its data"; finish; }
# a push whose marker the server committed as it died may have been told it failed:
# the store holds every file said stored, and at most that one more
"$PROFF" push --store "$W/idstore" hosts/*.folded | awk '{sub(":", "", $2); print $1, $2}' >ids.txt
ch_sql k "SELECT DISTINCT id FROM fleet.proff_profiles FORMAT TabSeparated" | sort >marked
cut -d' ' -f1 stored.out | sort >said
extra=$(comm -13 said marked | wc -l); lost=$(comm -23 said marked | wc -l)
[ "$lost" = 0 ] && [ "$extra" -le 1 ] && ok "after the restart: every file said stored is there ($extra more, at most the one in flight)" ||
	not_ok "after the restart: $lost files said stored are missing, $extra more than said"
"$PROFF" push -q --store "$W/local" --label build=K $(grep -F -f marked ids.txt | cut -d' ' -f2)
"$PROFF" report --store "$URL" --where build=K --json | sed 1d >ch.json
"$PROFF" report --store "$W/local" --where build=K --json | sed 1d >local.json
[ -s ch.json ] && cmp -s ch.json local.json && ok "after the restart: nothing half stored (the report = the local store's of the marked files)" ||
	{ not_ok "after the restart: nothing half stored"; diff ch.json local.json | head -5 | sed 's/^/#   /'; }
"$PROFF" push -q --store "$URL" --label build=K $(cat failed) && "$PROFF" push -q --store "$W/local" --label build=K hosts/*.folded &&
"$PROFF" push -q --store "$URL" --label build=K hosts/*.folded || not_ok "the retry's pushes"
"$PROFF" report --store "$URL" --where build=K --json | sed 1d >ch.json
"$PROFF" report --store "$W/local" --where build=K --json | sed 1d >local.json
n=$(ch_sql k "SELECT uniqExact(id) FROM fleet.proff_profiles")
cmp -s ch.json local.json && [ "$n" = 60 ] && ok "the retry completes the store: 60 profiles, each counted once" ||
	not_ok "the retry completes the store ($n profiles)"
ch_stop_all
finish
