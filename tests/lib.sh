# tests/lib.sh — helpers for the shell test scripts (end-to-end and oracle).
# Each script sources this, calls ok/not_ok/skip per check, then `finish`.
# Output lines: "ok - NAME", "not ok - NAME", "skip - NAME (reason)"; the
# runner (tests/run.sh) counts them.

set -u
PROFF=${PROFF:-build/proff}
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TMP=$(mktemp -d "${TMPDIR:-/tmp}/proff-test.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
_fails=0

ok()     { echo "ok - $*"; }
not_ok() { echo "not ok - $*"; _fails=$((_fails + 1)); }
skip()   { echo "skip - $*"; }

# check NAME CMD...: ok if CMD exits 0
check() { local name=$1; shift; if "$@" >"$TMP/check.out" 2>&1; then ok "$name"; else not_ok "$name"; sed 's/^/#   /' "$TMP/check.out" | head -40; fi; }

# check_same NAME FILE_EXPECTED FILE_ACTUAL: byte equality, shows a diff on failure
check_same() {
	if cmp -s "$2" "$3"; then ok "$1"; else not_ok "$1"; diff -u "$2" "$3" | head -${DIFF_LINES:-40} | sed 's/^/#   /'; fi
}

# expect_exit NAME CODE CMD...: ok if CMD exits with CODE
expect_exit() {
	local name=$1 code=$2; shift 2
	"$@" >"$TMP/ee.out" 2>"$TMP/ee.err"; local rc=$?
	if [ "$rc" = "$code" ]; then ok "$name"; else not_ok "$name (exit $rc, expected $code)"; head -5 "$TMP/ee.err" | sed 's/^/#   /'; fi
}

# need_root_perf: perf record works here (root, software events)
can_perf_record() { perf record -q -e cpu-clock -o "$TMP/.probe.data" true >/dev/null 2>&1; }

finish() { exit 0; }
