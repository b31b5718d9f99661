#!/bin/bash
# tests/fuzz/run.sh [SECONDS] [TARGET...] — build the libFuzzer targets
# (tests/fuzz/fuzz_TARGET.c, clang -fsanitize=fuzzer,address,undefined, via
# tests/fuzz/Makefile) and run each named TARGET for SECONDS (default 60)
# from a seed corpus. Targets (default: all):
#   perfdata  perf.data reader          (committed fixtures + fresh perf recordings)
#   trace     exact-trace reader, stats, dprofpp and profile conversion
#             (traces of tests/data/instrument/ recorded with $PROFF, and
#             truncated / damaged variants of them)
#   dprof     Devel::DProf tmon.out reader (tests/data/dprof/ and variants)
#   calfile   calibration-file parser   (written below)
#   config    config-file parser        (written below)
#   pprof     pprof reader (lib/formats) (profiles proff writes of the committed
#             perf.data and folded fixtures, Go's when go is installed, variants)
#   folded    folded-stacks reader      (the committed fixture and variants)
#   perfmap   JIT map (/tmp/perf-PID.map) reader (written below)
#   ksyms     kallsyms file and kernel module (.ko) reader (written below, and
#             a module gcc compiles when gcc is installed)
#   store     the local store's profile files (written below, and pushed by $PROFF)
#   chrows    a stored key set's rows as ClickHouse answers them (written below)
# Exit 0 when no target found a failure. Failing inputs are left in
# $FUZZ_OUT/TARGET/ (default build/fuzz/) as crash-*, leak-*, timeout-*, oom-*;
# inputs that once broke a parser are kept in tests/fuzz/regress/TARGET/ and
# replayed first by every run (and through the CLI by
# tests/cli/zz-fuzz-regressions.sh);
# the corpus grows in $FUZZ_OUT/TARGET/corpus across runs. Objects are kept in
# $FUZZ_BUILD (default build/fuzz-obj), so only changed sources recompile.
# $PROFF (default build/proff) records the trace seeds; without it (or gcc)
# the trace target starts from its hand-made seeds only.
set -eu
SECS=60
if [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then SECS=$1; shift; fi
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
ALL=$(ls tests/fuzz/fuzz_*.c | sed 's|.*/fuzz_||; s|\.c$||' | tr '\n' ' ')
TARGETS=${*:-$ALL}
OUT=${FUZZ_OUT:-$ROOT/build/fuzz}
FB=${FUZZ_BUILD:-$ROOT/build/fuzz-obj}
PROFF=${PROFF:-$ROOT/build/proff}
case "$PROFF" in /*) ;; *) PROFF=$ROOT/$PROFF;; esac
command -v clang >/dev/null || { echo "run.sh: clang not found" >&2; exit 2; }
for t in $TARGETS; do
	[ -f "tests/fuzz/fuzz_$t.c" ] || { echo "run.sh: no target '$t' (have: $ALL)" >&2; exit 2; }
done

# build (one build at a time per object directory)
mkdir -p "$FB" "$OUT"
bins=""
for t in $TARGETS; do bins="$bins $FB/fuzz_$t"; done
( flock 9; make -s -f tests/fuzz/Makefile FUZZ_BUILD="$FB" -j"$(nproc)" $bins ) 9>"$FB/.lock" \
	|| { echo "run.sh: build failed" >&2; exit 2; }

# ---- seeds -----------------------------------------------------------------------------

truncations() {  # truncations DIR FILE...: each file cut at a few lengths, one byte flipped
	local d=$1 f n b; shift
	for f in "$@"; do
		n=$(stat -c %s "$f"); b=$(basename "$f")
		for cut in 1 24 100 $((n / 2)) $((n - 1)); do
			[ "$cut" -gt 0 ] && [ "$cut" -lt "$n" ] && head -c "$cut" "$f" >"$d/cut$cut-$b"
		done
		if [ "$n" -gt 40 ]; then   # a byte of the second record / line changed
			cp "$f" "$d/flip-$b"
			printf '\377' | dd of="$d/flip-$b" bs=1 seek=$((n / 3)) conv=notrunc status=none
		fi
	done
}

seed_perfdata() {
	cp tests/data/perfdata/*.data "$1/" 2>/dev/null || true
	if perf record -q -e cpu-clock -c 500000 -o "$1/rec-g.data" -g -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' >/dev/null 2>&1; then
		perf record -q -e cpu-clock -c 500000 -z -o "$1/rec-z.data" -- sh -c 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done' >/dev/null 2>&1 || true
	fi
	# branch stacks (the loader's branch mode): synthetic ones on the -g recording
	if [ -f "$1/rec-g.data" ]; then
		python3 tests/tools/mkbranch.py "$1/rec-g.data" "$1/rec-br.data" --seed 1 >/dev/null 2>&1 || true
	fi
	rm -f "$1"/*.data.old
}

seed_trace() {
	local d=$1 w; w=$(mktemp -d)
	# a minimal trace by hand: one MONOTONIC session, a one-line maps record, one
	# events record (main entered and left), the end record
	python3 - "$d/hand.trace" <<'EOF' 2>/dev/null || true
import struct, sys
def rec(t, payload, tid=0, sess=7):
    return struct.pack('<IHHIIQ', 0x52544650, t, 1, 24 + len(payload), tid, sess) + payload
exe, cmd = b'/bin/prog', b'prog\0-x\0'
s = struct.pack('<IIQQQQQQQIIQIIII', 2, 0, 1000000000, 1000, 0, 1000, 1024, 2048, 10, 42, 1, 0, 65536,
                len(exe), len(cmd), 0) + exe + cmd
maps = struct.pack('<Q', 1000) + b'00400000-00401000 r-xp 00000000 08:01 12 /bin/prog\n'
ev = struct.pack('<QQQQII', 1000, 0x400100, 0x7fff0000, 0, 0, 0) + bytes([20, 0, 0, 11, 0, 0])
end = struct.pack('<IiQQ', 1, 0, 2000, 2000)
th = struct.pack('<IIQ16s', 1, 0, 1000, b'prog')
open(sys.argv[1], 'wb').write(rec(1, s) + rec(2, maps) + rec(5, th, 42) + rec(4, ev, 42) + rec(6, end))
EOF
	if [ -x "$PROFF" ] && [ -s "$(dirname "$PROFF")/libproff-instrument.so" ] && command -v gcc >/dev/null; then
		local src=tests/data/instrument cf="-O2 -g -finstrument-functions -pthread"
		gcc $cf -o "$w/fib" $src/fib.c && gcc $cf -o "$w/threads" $src/threads.c &&
			gcc $cf -o "$w/fork" $src/fork.c && gcc $cf -o "$w/longjmp" $src/longjmp.c &&
			gcc $cf -o "$w/deep" $src/deep.c && gcc $cf -o "$w/paths" $src/paths.c || true
		command -v g++ >/dev/null && g++ $cf -o "$w/exceptions" $src/exceptions.cc || true
		rec() { local o=$1; shift; "$PROFF" record --instrument -q -o "$d/$o.trace" "$@" >/dev/null 2>&1 || true; }
		[ -x "$w/fib" ] && { rec fib -- "$w/fib" 4; rec fib-mono --clock monotonic -- "$w/fib" 3; rec fib-none --clock none -- "$w/fib" 3; }
		[ -x "$w/threads" ] && rec threads -- "$w/threads" 2 3
		[ -x "$w/fork" ] && rec fork -- "$w/fork"
		[ -x "$w/longjmp" ] && rec longjmp -- "$w/longjmp"
		[ -x "$w/deep" ] && rec deep -- "$w/deep" 30
		[ -x "$w/paths" ] && rec paths-signal -- "$w/paths" signal 3
		[ -x "$w/exceptions" ] && rec exceptions -- "$w/exceptions"
	fi
	rm -rf "$w"
	python3 tests/fuzz/compact-trace.py "$d" 2>/dev/null || true
	truncations "$d" "$d"/small-*.trace
}

seed_dprof() {
	cp tests/data/dprof/*.tmon.out "$1/"
	truncations "$1" tests/data/dprof/*.tmon.out
}

seed_calfile() {
	cat >"$1/full.cal" <<'EOF'
# proff calibration file
proff-calibration 1
o_in_ns 11.250
o_full_ns 23.500
call_ns 30.125
idle_ns 2.000
start_ns 150000
tsc_hz 2900000000
sample_ns 1500.5
sample_cg_ns 2500.0
sample_hz 4000
cpu 1
# medians of 5 runs, ns per operation:
#   enter+exit hook                        23.500 per call
EOF
	printf 'proff-calibration 1\no_in_ns 0\no_full_ns 0\n' >"$1/min.cal"
	printf 'proff-calibration 1\r\n\to_in_ns 1e1 # c\r\no_full_ns 2E1\nfuture_key x y z\ncpu -1' >"$1/odd.cal"
	printf 'proff-calibration 2\no_in_ns 1\n' >"$1/v2.cal"
}

seed_config() {
	cat >"$1/all.cfg" <<'EOF'
# proff config
[report]
	children = false
	sort = "dso,sym"   # a comment
[diff]
	order = 1
	compute = ratio
[hist]
	percentage = relative
; another comment
[Report "sub"]
	Flag
EOF
	printf '[a]\nb=c\n[d' >"$1/bad.cfg"
	printf 'key = outside\n' >"$1/nosec.cfg"
}

seed_pprof() {
	local d=$1
	if [ -x "$PROFF" ]; then
		"$PROFF" convert --to pb tests/data/formats/small.folded "$d/small-folded.pb" 2>/dev/null || true
		"$PROFF" convert tests/data/formats/small.folded "$d/small-folded.pb.gz" 2>/dev/null || true
		"$PROFF" convert --to pb tests/data/perfdata/small.data "$d/small-data.pb" 2>/dev/null || true
		"$PROFF" convert --to pb tests/data/perfdata/small-two.data "$d/small-two.pb" 2>/dev/null || true
		# groups of runs: the labels run and group on every sample
		"$PROFF" convert --to pb tests/data/perfdata/small.data tests/data/perfdata/small-z.data -- \
			tests/data/perfdata/small-be.data -o "$d/runs.pb" 2>/dev/null || true
	fi
	if command -v go >/dev/null; then
		local w; w=$(mktemp -d)
		cp tests/data/formats/goprof.go "$w/" &&
			(cd "$w" && GOCACHE="$w/cache" GOPATH="$w/gopath" GOPROXY=off go build -o goprof goprof.go &&
				./goprof cpu.pprof heap.pprof && gzip -dc cpu.pprof > "$d/go-cpu.pb" && gzip -dc heap.pprof > "$d/go-heap.pb") \
			>/dev/null 2>&1 || true
		rm -rf "$w"
	fi
	truncations "$d" "$d"/*.pb
}

seed_folded() {
	cp tests/data/formats/small.folded "$1/"
	printf 'main;a;b 10\nmain;a 5\n' > "$1/plain.folded"
	printf 'sh-1/1;f_[k];[libc.so.6];[unknown] 3\nsh-?/2;g [k] 1\n' > "$1/annot.folded"
	truncations "$1" tests/data/formats/small.folded
}

seed_perfmap() {
	printf '7f0000001000 20 py::f:file.py\n7f0000001020 10 LazyCompile:*g a.js:1\n' >"$1/clean.map"
	printf 'garbage\n\nzz\n0x10 0x4 hex\n20\t2\ttab\n30 9 ab\n  40 9 sp\n50 0 zero\n60 3 last' >"$1/odd.map"
	printf -- '-1 -1 neg\nffffffffffffffff 2 wrap\n1 2 \0nul\n' >"$1/edge.map"
}

seed_ksyms() {
	printf 'ffffffff81000000 T _text\nffffffff81000100 t a_fn\nffffffff81000200 W weak\nffffffffc0000000 t mod_fn\t[m]\nffffffffc0000040 T mod_two\t[m]\n' >"$1/clean.kallsyms"
	printf 'garbage\n\nzz T x\n0000000000000000 T zero\nffffffff81000000 t\nffffffffc0000000 T a\t[m\n' >"$1/odd.kallsyms"
	if command -v gcc >/dev/null; then
		printf 'int g;\nint f(int n) { return n * g; }\nstatic int s(int n) { return f(n) + 1; }\nint e(int n) { return s(n); }\n' >"$1/m.c"
		gcc -c -O1 -o "$1/m.ko" "$1/m.c" 2>/dev/null
		rm -f "$1/m.c"
	fi
}

declare -A MAXLEN=([perfdata]=65536 [trace]=32768 [dprof]=16384 [calfile]=70000 [config]=8192 [pprof]=65536 [folded]=16384 [perfmap]=8192 [ksyms]=16384 [store]=65536)
seed_store() {
	printf 'proff-profile\t4\nid\t0123456789abcdef0123456789abcdef\ntime\t1793491200\nstring\tcpu-clock\nstring\tbuild\nstring\tA\\tB\\\\\nstring\tmain\nstring\tprog\nstring\twork\nlabel\t2\t3\nevent\t1\t1\t0\t300\t3\t1\nkeyrow\t10\t0\t0\t5\t4\t0\t0\t.\t0\t.\t100\t300\t1\nkeyrow\t8\t0\t0\t0\t6\t0\t0\t.\t0\t-\t200\t200\t2\nframe\t5\t5\t4\t0\t0\t0\t.\nframe\t5\t5\t6\t0\t0\t0\t.\nframe\t0\t0\t0\t0\t7f00\t7f00\tk\nstack\t00000000000000aa\t1,0\nstack\t00000000000000bb\t2,1,0,1\nsample\t0\t5\t0\t100\t1\nsample\t0\t5\t1\t200\t2\nend\t20\n' >"$1/small.prof"
	printf 'proff-profile\t4\nid\t0123456789abcdef0123456789abcdef\nend\t2\n' >"$1/empty.prof"
	if [ -x "$PROFF" ]; then
		printf 'main;work;leaf 100\nmain;other 5\n[k];x_[k] 7\n' >"$1/in.folded"
		"$PROFF" push -q --store "$1/st" "$1/in.folded" >/dev/null 2>&1 && cp "$1"/st/profiles/*.prof "$1/" 2>/dev/null
		rm -rf "$1/st" "$1/in.folded"
	fi
}

# flags 1 (two keys), pieces of 7 bytes; two rows named, then four records
# (the last of a profile not selected), after the 0xff 0xfe between them
seed_chrows() {
	local z='\0\0\0\0\0\0\0'
	printf "\x01\x07\x01$z\x04libc\x04main\x01.\0$z\x02$z\0\0\x01k\x10$z\xff\xfe" >"$1/two.rows"
	printf "\x01$z\0$z\x64$z\x02$z\x01$z\x05$z\x01$z\x02$z\x07$z\x02$z\x09$z\x01$z" >>"$1/two.rows"
	# flags 15 (four keys, Children, counts), whole pieces; a row twice
	printf "\x0f\xff\x05$z\x01a\x01b\x01c\x01d\x01.\0$z\x05$z\x01a\x01b\x01c\x01d\x01.\0$z" >"$1/twice.rows"
}

# ---- runs ------------------------------------------------------------------------------

fail=0
for t in $TARGETS; do
	d=$OUT/$t
	mkdir -p "$d/corpus" "$d/seeds"
	rm -f "$d"/crash-* "$d"/leak-* "$d"/timeout-* "$d"/oom-* "$d"/seeds/*
	if declare -F "seed_$t" >/dev/null; then "seed_$t" "$d/seeds"; fi
	dict=()
	[ -f "tests/fuzz/$t.dict" ] && dict=(-dict="$ROOT/tests/fuzz/$t.dict")
	reg=()
	[ -d "tests/fuzz/regress/$t" ] && reg=("$ROOT/tests/fuzz/regress/$t")
	"$FB/fuzz_$t" -max_total_time="$SECS" -max_len="${MAXLEN[$t]:-65536}" -timeout=10 -rss_limit_mb=2048 \
		-malloc_limit_mb=512 -print_final_stats=1 -artifact_prefix="$d/" "${dict[@]}" \
		"$d/corpus" "$d/seeds" "${reg[@]}" >"$d/fuzz.log" 2>&1 || true
	runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$d/fuzz.log" | tail -1)
	secs=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$d/fuzz.log" | tail -1)
	bad=$(cd "$d" && ls | grep -E '^(crash|leak|timeout|oom)-' | head -3 | tr '\n' ' ' || true)
	if [ -n "$bad" ]; then
		echo "fuzz $t: FAILED after ${runs:-?} inputs: $bad(in $d)"
		grep -E -m3 'ERROR|SUMMARY|runtime error' "$d/fuzz.log" | sed 's/^/    /' || true
		fail=1
	else
		echo "fuzz $t: ${SECS}s, ${runs:-?} inputs (${secs:-?}/s), corpus $(ls "$d/corpus" | wc -l), no failure"
	fi
done
exit $fail
