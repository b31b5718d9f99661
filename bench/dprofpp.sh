#!/bin/bash
# bench/dprofpp.sh — proff dprofpp vs dprofpp on a large tmon.out: a Perl
# program making about 1.5 million sub calls (3.1 million marks) under
# Devel::DProf, generated once into build/bench/dprof-big.tmon (not committed).
# Checks that both print the same report, then times both (median of RUNS)
# for the default table and -S, and ends with
#   dprofpp: proff X.XXs, dprofpp Y.YYs, ratio Zx          (target >= 10x)
source "$(dirname "$0")/lib.sh"

if ! command -v dprofpp >/dev/null || ! perl -e 'require Devel::DProf' 2>/dev/null; then
	echo "  dprofpp not installed (libdevel-dprof-perl): skipped"
	exit 0
fi
RUNS=${DPROF_RUNS:-3}
T="$BENCH_DIR/dprof-big.tmon"
CALLS=${DPROF_TOP_CALLS:-60000}   # each top() makes 25 more calls
if [ ! -s "$T" ]; then
	echo "  generating $T ($((CALLS * 26)) sub calls under perl -d:DProf)..."
	w="$BENCH_DIR/dprofwl"; mkdir -p "$w"
	cat > "$w/big.pl" <<EOS
sub leaf { \$_[0] + 1 }
sub mid { my \$s = 0; \$s += leaf(\$_) for 1 .. 4; \$s }
sub top { my \$s = 0; \$s += mid(\$_) for 1 .. 5; \$s }
my \$t = 0; \$t += top() for 1 .. $CALLS;
EOS
	(cd "$w" && perl -d:DProf big.pl >/dev/null && mv tmon.out "$T") || { echo "  perl -d:DProf failed"; exit 1; }
fi
echo "  profile: $T ($(du -h "$T" | cut -f1), $(wc -l < "$T") lines)"

status=0
pair() {   # pair OPTS... -> sets PT FT
	dprofpp "$@" "$T" > "$BENCH_DIR/dprofpp.out" 2>/dev/null
	"$PROFF" dprofpp "$@" "$T" > "$BENCH_DIR/proff.out" 2>/dev/null
	if cmp -s "$BENCH_DIR/dprofpp.out" "$BENCH_DIR/proff.out"; then same="identical output"; else same="OUTPUT DIFFERS"; status=1; fi
	measure "dprofpp $*" dprofpp "$@" "$T"; PT=$MED_S
	measure "proff dprofpp $*" "$PROFF" dprofpp "$@" "$T"; FT=$MED_S
	echo "  dprofpp $*: proff ${FT}s, dprofpp ${PT}s, ratio $(ratio "$PT" "$FT")x; $same"
}
pair -S
pair
printf 'dprofpp: proff %.2fs, dprofpp %.2fs, ratio %sx\n' "$FT" "$PT" "$(ratio "$PT" "$FT")"
exit $status
