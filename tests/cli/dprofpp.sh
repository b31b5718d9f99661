#!/bin/bash
# dprofpp.sh — `proff dprofpp` end to end on the committed tmon.out fixtures
# (run with the normal and the ASan+UBSan build): the same text as dprofpp for
# a few option sets, and clean errors for a damaged file.
source "$(dirname "$0")/../lib.sh"

D="$ROOT/tests/data/dprof"
for f in test1.tmon.out old.tmon.out goto_die_anon.tmon.out; do
	for opts in "" "-T" "-S" "-l -O 5" "-a -v"; do
		# shellcheck disable=SC2086
		dprofpp $opts "$D/$f" > "$TMP/ref.out" 2>/dev/null
		# shellcheck disable=SC2086
		"$PROFF" dprofpp $opts "$D/$f" > "$TMP/out" 2>"$TMP/err"
		check_same "dprofpp $opts $f" "$TMP/ref.out" "$TMP/out"
	done
done
head -c 300 "$D/test1.tmon.out" > "$TMP/cut.out"
printf 'garbage line\n' >> "$TMP/cut.out"
"$PROFF" dprofpp "$TMP/cut.out" > /dev/null 2>"$TMP/err"; rc=$?
if [ "$rc" != 0 ] && grep -q 'cut.out' "$TMP/err" && [ "$(wc -l < "$TMP/err")" = 1 ]; then
	ok "damaged tmon.out: one error line, non-zero exit"
else
	not_ok "damaged tmon.out: one error line, non-zero exit (rc=$rc)"; head -3 "$TMP/err" | sed 's/^/#   /'
fi
finish
