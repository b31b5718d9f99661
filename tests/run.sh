#!/bin/bash
# tests/run.sh — run the whole test suite and print one summary line.
#
#  1. cmocka unit tests, normal build (build/tests/test_*) and ASan+UBSan build
#     (build/asan/tests/test_*), and the ThreadSanitizer build of the tests that
#     use threads (build/tsan/tests/test_*);
#  2. end-to-end tests (tests/cli/*.sh) with build/proff and again with the
#     sanitizer build build/asan/proff;
#  3. oracle tests (tests/oracle/*.sh): proff against perf, dprofpp, uftrace.
#
# Ends with "N passed, N failed" (and skipped); exit status 1 if anything failed.
cd "$(dirname "$0")/.." || exit 2
passed=0; failed=0; skipped=0
LOG=${TEST_LOG:-build/test.log}
mkdir -p build; : > "$LOG"

run_unit() {   # $1 = binary
	local out rc p f
	out=$("$1" 2>&1); rc=$?
	echo "$out" >> "$LOG"
	p=$(echo "$out" | sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	f=$(echo "$out" | sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' | awk '{s+=$1} END {print s+0}')
	if [ "$rc" != 0 ] && [ "$f" = 0 ]; then f=1; fi   # crashed before its summary
	passed=$((passed + p)); failed=$((failed + f))
	printf '%-50s %3d passed, %d failed\n' "$1" "$p" "$f"
	[ "$f" = 0 ] || echo "$out" | grep -E '^\[  (FAILED|  ERROR) |Failure|ERROR' | head -20
}

run_script() {  # $1 = script, $2 = proff binary
	local out rc p f s t0=$SECONDS
	out=$(PROFF="$2" timeout "${TEST_TIMEOUT:-900}" bash "$1" 2>&1); rc=$?
	echo "== $1 ($2)" >> "$LOG"; echo "$out" >> "$LOG"
	p=$(echo "$out" | grep -c '^ok - ')
	f=$(echo "$out" | grep -c '^not ok - ')
	s=$(echo "$out" | grep -c '^skip - ')
	if [ "$rc" != 0 ]; then f=$((f + 1)); echo "$1: exited $rc" >> "$LOG"; fi
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	printf '%-50s %3d passed, %d failed, %d skipped (%ds)\n' "$1 [$(basename "$(dirname "$2")")]" "$p" "$f" "$s" $((SECONDS - t0))
	if [ "$f" != 0 ]; then echo "$out" | grep -A12 '^not ok - ' | head -60; [ "$rc" != 0 ] && echo "$out" | tail -5; fi
	echo "$out" | grep '^skip - ' | head -10
}

for t in build/tests/test_*; do [ -x "$t" ] && run_unit "$t"; done
for t in build/asan/tests/test_*; do [ -x "$t" ] && run_unit "$t"; done
# ThreadSanitizer: any report fails the run
for t in build/tsan/tests/test_*; do [ -x "$t" ] && TSAN_OPTIONS="halt_on_error=1 exitcode=66" run_unit "$t"; done
for s in tests/cli/*.sh; do [ -f "$s" ] && run_script "$s" build/proff; done
for s in tests/cli/*.sh; do [ -f "$s" ] && run_script "$s" build/asan/proff; done
for s in tests/oracle/*.sh; do [ -f "$s" ] && run_script "$s" build/proff; done

echo "see $LOG for the full output"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
