#!/bin/bash
# demo-fleet.sh — `make demo-fleet`: two versions of examples/shapes.c recorded
# on a simulated fleet (each version run on several "hosts"), pushed to a
# ClickHouse server started here (a plain process on a loopback port, its
# data under build/demo-fleet, stopped at the end) and to a local store,
# then reported and compared across hosts (docs/fleet.md).
set -e
cd "$(dirname "$0")/.."
PROFF=${PROFF:-build/proff}
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
OUT=${DEMO_DIR:-build/demo-fleet}
HOSTS=${HOSTS:-4}
rm -rf "$OUT"
mkdir -p "$OUT/v1" "$OUT/v2"
export PROFF_CONFIG=/dev/null
CFLAGS="-O1 -g -fno-omit-frame-pointer"
cc $CFLAGS -DVERSION=1 examples/shapes.c -o "$OUT/v1/shapes"
cc $CFLAGS -DVERSION=2 examples/shapes.c -o "$OUT/v2/shapes"

echo "== recording version 1 and version 2 on $HOSTS hosts each"
for h in $(seq 1 "$HOSTS"); do
	"$PROFF" record -q -e cpu-clock -g -o "$OUT/v1-web-$h.data" -- "$OUT/v1/shapes" 200 >/dev/null 2>&1
	"$PROFF" record -q -e cpu-clock -g -o "$OUT/v2-web-$h.data" -- "$OUT/v2/shapes" 200 >/dev/null 2>&1
done

source tests/tools/clickhouse.sh
trap 'ch_stop_all' EXIT
echo "== starting clickhouse-server (data in $OUT/ch)"
ch_start "$PWD/$OUT/ch" demo
ch_sql demo "CREATE DATABASE fleet" >/dev/null
URL=clickhouse://127.0.0.1:$CH_HTTP_demo/fleet

echo
echo "== proff push --store $URL --label build=1 --label host=web-N v1-web-N.data"
for h in $(seq 1 "$HOSTS"); do
	"$PROFF" push --store "$URL" --label build=1 --label host=web-$h "$OUT/v1-web-$h.data"
	"$PROFF" push --store "$URL" --label build=2 --label host=web-$h "$OUT/v2-web-$h.data"
done
echo "== pushing one again changes nothing:"
"$PROFF" push --store "$URL" --label build=1 "$OUT/v1-web-1.data"

echo
echo "== proff report --store $URL --where build=2 --where 'host=~^web-' --no-children"
"$PROFF" report --store "$URL" --where build=2 --where 'host=~^web-' --no-children --percent-limit 1

echo
echo "== proff diff --store $URL --replicate host --significant-only build=1 -- build=2"
"$PROFF" diff --store "$URL" --replicate host --significant-only build=1 -- build=2

echo
echo "== its differential flame graph: proff diff --store $URL --replicate host --flamegraph $OUT/fleet.html build=1 -- build=2"
"$PROFF" diff --store "$URL" --replicate host --flamegraph "$OUT/fleet.html" build=1 -- build=2 &&
	echo "   $OUT/fleet.html: open it in a browser (each frame's change tested across the hosts)"

echo
echo "== the same diff from a local store directory ($OUT/store)"
for h in $(seq 1 "$HOSTS"); do
	"$PROFF" push -q --store "$OUT/store" --label build=1 --label host=web-$h "$OUT/v1-web-$h.data"
	"$PROFF" push -q --store "$OUT/store" --label build=2 --label host=web-$h "$OUT/v2-web-$h.data"
done
"$PROFF" diff --store "$OUT/store" --replicate host -q --significant-only build=1 -- build=2
echo
echo "== done: clickhouse-server stopped; its data is in $OUT/ch"
