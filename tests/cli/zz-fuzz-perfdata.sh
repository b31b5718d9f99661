#!/bin/bash
# tests/cli/zz-fuzz-perfdata.sh — a bounded (30 s) libFuzzer run of the
# perf.data reader (tests/fuzz/run.sh 30 perfdata), as part of `make check`.
# Runs only for the normal build (the fuzzer brings its own sanitizers);
# skipped for the ASan rerun and when clang is missing. FUZZ_TIME overrides
# the length. The other parsers: tests/cli/zz-fuzz-parsers.sh.
source "$(dirname "$0")/../lib.sh"
case "$PROFF" in
*asan*) skip "fuzz perfdata (runs with the normal build only)"; finish;;
esac
if ! command -v clang >/dev/null; then skip "fuzz perfdata (no clang)"; finish; fi
if FUZZ_OUT="$TMP/fuzz" bash "$ROOT/tests/fuzz/run.sh" "${FUZZ_TIME:-30}" perfdata >"$TMP/fuzz.out" 2>&1; then
	ok "$(grep '^fuzz perfdata:' "$TMP/fuzz.out")"
else
	not_ok "fuzz perfdata reader"
	tail -30 "$TMP/fuzz.out" | sed 's/^/#   /'
	mkdir -p "$ROOT/build/fuzz-failures" && cp "$TMP"/fuzz/perfdata/crash-* "$TMP"/fuzz/perfdata/leak-* \
		"$TMP"/fuzz/perfdata/timeout-* "$TMP"/fuzz/perfdata/oom-* "$ROOT/build/fuzz-failures/" 2>/dev/null
fi
finish
