#!/bin/bash
# tests/cli/zz-fuzz-parsers.sh — bounded libFuzzer runs (10 s each) of the
# other parsers of untrusted files, as part of `make check`: the exact-trace
# reader with its stats / dprofpp / profile conversions, the tmon.out reader,
# the calibration-file parser, the config-file parser and the JIT map
# reader, the kallsyms and kernel module (.ko) readers, the local store's profile reader, the reader of ClickHouse's rows answers (tests/fuzz/run.sh 10 trace dprof calfile config perfmap ksyms store chrows). Normal
# build only (the fuzzer brings its own sanitizers); skipped for the ASan
# rerun and without clang. FUZZ_TIME overrides the length per target. Failing inputs are copied to
# build/fuzz-failures/TARGET/.
source "$(dirname "$0")/../lib.sh"
TARGETS="trace dprof calfile config perfmap ksyms store chrows"
case "$PROFF" in
*asan*) skip "fuzz parsers (run with the normal build only)"; finish;;
esac
if ! command -v clang >/dev/null; then skip "fuzz parsers (no clang)"; finish; fi
FUZZ_OUT="$TMP/fuzz" bash "$ROOT/tests/fuzz/run.sh" "${FUZZ_TIME:-10}" $TARGETS >"$TMP/fuzz.out" 2>&1
rc=$?
for t in $TARGETS; do
	line=$(grep "^fuzz $t:" "$TMP/fuzz.out")
	case "$line" in
	*"no failure") ok "$line";;
	*)
		not_ok "fuzz $t: ${line:-no result}"
		grep -A3 "^fuzz $t:" "$TMP/fuzz.out" | sed 's/^/#   /'
		mkdir -p "$ROOT/build/fuzz-failures/$t"
		cp "$TMP/fuzz/$t"/crash-* "$TMP/fuzz/$t"/leak-* "$TMP/fuzz/$t"/timeout-* "$TMP/fuzz/$t"/oom-* \
			"$ROOT/build/fuzz-failures/$t/" 2>/dev/null;;
	esac
done
[ "$rc" = 0 ] || [ "$rc" = 1 ] || { not_ok "fuzz run.sh exited $rc"; tail -20 "$TMP/fuzz.out" | sed 's/^/#   /'; }
finish
