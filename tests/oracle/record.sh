#!/bin/bash
# tests/oracle/record.sh — perf reads what `proff record` writes.
#
# A small workload (two threads, a forked child, an exec, each burning a fixed
# amount of its own CPU time in a function of its own) is recorded by
# `proff record` and by `perf record`; perf report / perf script / perf diff
# must give the same kind of results on both files: symbols, comms, dsos,
# threads, sample counts within tolerance, callchains with -g. Also: exit
# status of failing and killed workloads, SIGINT, -z, -p, -a, several events
# and the before/after flow with a rebuilt binary resolved through the
# build-id cache.
source "$(dirname "$0")/../lib.sh"

if ! command -v perf >/dev/null || ! can_perf_record; then
	skip "record oracle (perf record does not work here)"; finish
fi
command -v cc >/dev/null || { skip "record oracle (no C compiler)"; finish; }

export PROFF_BUILDID_DIR=$TMP/debug
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
W=$TMP/wl
cat > "$TMP/wl.c" <<'CEOF'
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile double sink;
static long MS = 80;

static double cpu_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
#define BURN(ms) do { double t0 = cpu_ms(); while (cpu_ms() - t0 < (ms)) \
	for (int i = 0; i < 20000; i++) sink += i * 1.000001; } while (0)

__attribute__((noinline)) void main_fn(void)   { BURN(MS); }
__attribute__((noinline)) void thread_fn(void) { BURN(MS); }
__attribute__((noinline)) void child_fn(void)  { BURN(MS); }
__attribute__((noinline)) void exec_fn(void)   { BURN(MS); }
#ifdef VERSION_B
__attribute__((noinline)) void only_in_b(void) { BURN(MS); }
#else
__attribute__((noinline)) void only_in_a(void) { BURN(MS); }
#endif

static void *thr(void *arg)
{
	prctl(PR_SET_NAME, (char *)arg);
	thread_fn();
	return NULL;
}

int main(int argc, char **argv)
{
	if (getenv("WL_MS"))
		MS = atol(getenv("WL_MS"));
	if (argc > 1 && !strcmp(argv[1], "execd")) {
		exec_fn();
		return argc > 2 ? atoi(argv[2]) : 0;
	}
	if (argc > 1 && !strcmp(argv[1], "simple")) {
		main_fn();
#ifdef VERSION_B
		only_in_b();
#else
		only_in_a();
#endif
		return 0;
	}
	pthread_t t1, t2;
	pthread_create(&t1, NULL, thr, "worker1");
	pthread_create(&t2, NULL, thr, "worker2");
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_NAME, "child");
		child_fn();
		_exit(0);
	}
	main_fn();
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	waitpid(pid, NULL, 0);
	execl("/proc/self/exe", argv[0], "execd", argc > 1 ? argv[1] : "0", (char *)NULL);
	return 99;
}
CEOF
cc -O2 -g -fno-omit-frame-pointer -o "$W" "$TMP/wl.c" -lpthread || { not_ok "compile workload"; finish; }

# "comm symbol percent" rows of perf report (no children, no callchains)
rows() { perf report -i "$1" --stdio --no-children -g none --sort comm,sym 2>/dev/null |
	 awk '!/^#/ && NF >= 4 { p = $1; sub("%", "", p); print $2, $4, p }'; }
nsamples() { perf script -i "$1" -F tid 2>/dev/null | wc -l; }
ntids() { perf script -i "$1" -F tid 2>/dev/null | sort -u | wc -l; }

cd "$TMP" || exit 2

# ---- the multi-threaded / forking / exec-ing workload, -g ------------------
"$PROFF" record -q -g -o proff.data "$W" 7 2>"$TMP/rec.err"; rc=$?
[ "$rc" = 7 ] && ok "exit status of the exec'd workload is proff's (7)" || not_ok "exit status $rc, expected 7"
perf record -q -g -o perf.data "$W" 7 >/dev/null 2>&1
rows proff.data > proff.rows; rows perf.data > perf.rows
for cs in "wl main_fn" "worker1 thread_fn" "worker2 thread_fn" "child child_fn" "exe exec_fn"; do
	pp=$(awk -v k="$cs" '$1" "$2 == k { print $3 }' proff.rows)
	pf=$(awk -v k="$cs" '$1" "$2 == k { print $3 }' perf.rows)
	if [ -n "$pp" ] && [ -n "$pf" ] && awk -v a="$pp" -v b="$pf" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 8 && a >= 10) }'; then
		ok "perf report: '$cs' at $pp% (perf record: $pf%)"
	else
		not_ok "perf report: '$cs' proff '$pp'% vs perf '$pf'%"; sed 's/^/#   /' proff.rows | head -10
	fi
done
sp=$(nsamples proff.data); sf=$(nsamples perf.data)
if [ "$sp" -gt 0 ] && awk -v a="$sp" -v b="$sf" 'BEGIN { r = a / b; exit !(r > 0.7 && r < 1.4) }'; then
	ok "sample count $sp within tolerance of perf's $sf"
else not_ok "sample count $sp vs perf $sf"; fi
tp=$(ntids proff.data); tf=$(ntids perf.data)
[ "$tp" = "$tf" ] && [ "$tp" -ge 4 ] && ok "every thread and child accounted for ($tp tids, perf $tf)" || not_ok "tids: proff $tp perf $tf"
# dso column: the workload binary, as with perf
dp=$(perf report -i proff.data --stdio --no-children -g none --sort dso 2>/dev/null | awk '!/^#/ && NF { print $2 }' | head -1)
df=$(perf report -i perf.data --stdio --no-children -g none --sort dso 2>/dev/null | awk '!/^#/ && NF { print $2 }' | head -1)
[ -n "$dp" ] && [ "$dp" = "$df" ] && ok "top dso '$dp' as perf" || not_ok "top dso '$dp' vs perf '$df'"
# callchains: thread_fn called from thr, main_fn from main
perf script -i proff.data -F comm,ip,sym 2>/dev/null > script.out
if grep -A1 ' thread_fn$' script.out | grep -q ' thr$' && grep -A1 ' main_fn$' script.out | grep -q ' main$'; then
	ok "perf script shows frame-pointer callchains (thread_fn <- thr, main_fn <- main)"
else not_ok "callchains missing in perf script"; head -20 script.out | sed 's/^/#   /'; fi
# main's row shows main_fn below it: as "--N%--main_fn" when main has other
# children in the samples, as a plain "main_fn" line when it has none (main's
# rows — one per command: child, exe, wl — every branch: main_fn is not always
# among the first four lines of the first)
if perf report -i proff.data --stdio --children -g graph,0 2>/dev/null |
	awk '/\[\.\] main$/ { f = 1; next } /^$/ { f = 0 } f' | grep -q 'main_fn$'; then
	ok "perf report --children builds call graphs"; else not_ok "perf report call graph"; fi
# perf report -D parses every record, header shows the features
perf report -D -i proff.data > dump.out 2>&1; rc=$?
if [ "$rc" = 0 ] && ! grep -qiE 'failed to|invalid|corrupt' dump.out && grep -qE 'SAMPLE events: +[1-9]' dump.out; then
	ok "perf report -D reads every record"; else not_ok "perf report -D"; grep -iE 'failed to|invalid|corrupt' dump.out | head -5; fi
perf report -i proff.data --header-only > hdr.out 2>&1
for f in 'hostname' 'os release' 'arch' 'nrcpus online' 'cpudesc' 'total memory' 'cmdline' "event : name = cpu-clock" 'time of first sample' 'pmu mappings'; do
	grep -q "^# $f" hdr.out && ok "header feature: $f" || not_ok "header feature: $f"
done
if perf buildid-list -i proff.data 2>/dev/null | grep -q "$W"; then ok "BUILD_ID feature lists the workload"; else not_ok "perf buildid-list"; fi
bid=$(perf buildid-list -i proff.data 2>/dev/null | awk -v w="$W" '$2 == w { print $1 }')
if [ -n "$bid" ] && cmp -s "$TMP/debug/.build-id/${bid:0:2}/${bid:2}/elf" "$W"; then
	ok "build-id cache: .build-id/${bid:0:2}/... -> copy of the binary"; else not_ok "build-id cache entry for $W"; fi
[ -f "$TMP/debug/[kernel.kallsyms]/$(perf buildid-list -i proff.data 2>/dev/null | awk '$2 == "[kernel.kallsyms]" { print $1 }')/kallsyms" ] &&
	ok "build-id cache: kallsyms copy" || not_ok "build-id cache: kallsyms"

# ---- perf diff between a perf-recorded and a proff-recorded file ---------
WL_MS=150 perf record -q -o pa.data "$W" simple >/dev/null 2>&1
WL_MS=150 "$PROFF" record -q -o pb.data "$W" simple
perf diff pa.data pb.data > pdiff.out 2>&1
# (d + 0: after sub() d is a string, and "2.32" > "10" compares as text)
if awk '/main_fn/ { found = 1; d = $2; sub("%", "", d); sub("\\+", "", d); d = d + 0; if (d < 0) d = -d; if (d > 10) bad = 1 } END { exit !(found && !bad) }' pdiff.out; then
	ok "perf diff perf.data proff.data: main_fn paired, small delta"; else not_ok "perf diff perf vs proff"; head -20 pdiff.out | sed 's/^/#   /'; fi

# ---- exit status: non-zero, killed ------------------------------------------
WL_MS=20 "$PROFF" record -q -o k.data sh -c "$W simple; kill -KILL \$\$"; rc=$?
[ "$rc" = 137 ] && ok "killed workload: exit 128+9" || not_ok "killed workload exit $rc"
rows k.data | grep -q main_fn && ok "killed workload: profile readable" || not_ok "killed workload profile"

# ---- SIGINT ---------------------------------------------------------------------
WL_MS=5000 "$PROFF" record -q -o int.data "$W" simple & rp=$!
sleep 0.8; kill -INT "$rp"; wait "$rp"; rc=$?
[ "$rc" = 130 ] && ok "SIGINT: exit 130" || not_ok "SIGINT exit $rc"
rows int.data | grep -q main_fn && ok "SIGINT: perf report reads the file" || not_ok "SIGINT file"
perf report -i int.data --header-only 2>/dev/null | grep -q '^# hostname' && ok "SIGINT: features written" || not_ok "SIGINT features"

# ---- -z --------------------------------------------------------------------------
"$PROFF" record -q -z -g -o z.data "$W" 0
rows z.data > z.rows
if grep -q 'worker1 thread_fn' z.rows && grep -q 'exe exec_fn' z.rows; then ok "-z: perf report reads the compressed file"; else not_ok "-z perf report"; fi
perf report -i z.data --header-only 2>/dev/null | grep -q '^# compressed : Zstd' && ok "-z: COMPRESSED feature" || not_ok "-z feature"
perf report -D -i z.data 2>/dev/null | grep -qE 'COMPRESSED events: +[1-9]'  && ok "-z: COMPRESSED records" || not_ok "-z records"

# ---- -p -------------------------------------------------------------------------
WL_MS=4000 "$W" simple & wp=$!
sleep 0.1
"$PROFF" record -q -o p.data -p "$wp" & rp=$!
sleep 0.8; kill -INT "$rp"; wait "$rp"; kill "$wp" 2>/dev/null; wait "$wp" 2>/dev/null
rows p.data | grep -q 'wl main_fn' && ok "-p PID: samples of the attached process resolve" || not_ok "-p"

# ---- -a, --sample-cpu, events -------------------------------------------------------
"$PROFF" record -q -a -o a.data sleep 0.3
[ "$(nsamples a.data)" -gt 0 ] && ok "-a: system-wide samples" || not_ok "-a"
perf script -i a.data -F cpu 2>/dev/null | grep -q '\[0*0\]' && ok "-a: sample cpu recorded" || not_ok "-a cpu"
WL_MS=50 "$PROFF" record -q --sample-cpu -e task-clock -o t.data "$W" simple
perf report -i t.data --stdio 2>/dev/null | grep -q "of event 'task-clock'" && ok "-e task-clock named in perf report" || not_ok "-e task-clock"
perf script -i t.data -F cpu,ip,sym 2>/dev/null | grep -qE '^ *\[[0-9]+\] .*main_fn' && ok "--sample-cpu: perf script -F cpu" || not_ok "--sample-cpu"
WL_MS=50 "$PROFF" record -q -e cpu-clock,task-clock -o two.data "$W" simple
n=$(perf report -i two.data --stdio 2>/dev/null | grep -c "of event '")
[ "$n" = 2 ] && ok "two events: two blocks in perf report" || not_ok "two events ($n)"

# ---- lost samples: a one-page ring buffer at 50 kHz ------------------------------------
WL_MS=150 "$PROFF" record -m 1 -F 50000 -g -o lost.data "$W" 0 2> lost.err
n=$(sed -n 's/.*Lost \([0-9]*\) samples (\([0-9]*\) LOST records.*/\1 \2/p' lost.err)
if [ -z "$n" ]; then
	skip "lost samples (nothing was lost with -m 1 -F 50000 this time)"
else
	set -- $n
	perf report -i lost.data --stdio > lost.out 2>&1
	grep -q "Total Lost Samples: $1\$" lost.out && ok "lost samples: perf report shows the $1 proff reported" || not_ok "lost samples ($1)"
	grep -q "lost $2 chunks" lost.out && ok "lost samples: $2 LOST records seen by perf" || not_ok "LOST records ($2)"
fi

# ---- before / after with a rebuilt binary -------------------------------------------
mkdir -p bin
cc -O2 -g -fno-omit-frame-pointer -o bin/prog "$TMP/wl.c" -lpthread
WL_MS=100 "$PROFF" record -q -o before.data bin/prog simple
cc -O2 -g -fno-omit-frame-pointer -DVERSION_B -o bin/prog.new "$TMP/wl.c" -lpthread && mv bin/prog.new bin/prog
WL_MS=100 "$PROFF" record -q -o after.data bin/prog simple
perf --buildid-dir "$TMP/debug" diff before.data after.data > ba.out 2>&1
if grep -q ' only_in_a' ba.out && grep -q ' only_in_b' ba.out && grep -q ' main_fn' ba.out; then
	ok "before/after: perf diff resolves both sides (only_in_a, only_in_b)"
else not_ok "before/after perf diff"; sed 's/^/#   /' ba.out | head -20; fi
perf --buildid-dir "$TMP/empty" diff before.data after.data > ba2.out 2>&1
if grep -q ' only_in_b' ba2.out && ! grep -q ' only_in_a' ba2.out; then
	ok "before/after: the old side needs the build-id cache (unresolved without it)"
else not_ok "before/after without the cache"; sed 's/^/#   /' ba2.out | head -20; fi
finish
