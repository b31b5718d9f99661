#!/bin/bash
# tests/oracle/diff.sh — `proff diff` against the real `perf diff` on profiles
# recorded here, now: the project's workloads (tests/data/diff/work.c in modes
# A/B, a rebuilt variant whose functions moved, a renamed copy, a stripped
# copy, a C++ program) and programs of the machine (python3, perl, xz, gzip).
# Each check runs both tools with the same options on the same files and
# compares stdout and the exit status byte for byte. The only normalisations
# are the documented differences of docs/compat/diff.md (-b Baseline column,
# thread filters on rows that mix threads).
source "$(dirname "$0")/../lib.sh"

case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
command -v perf >/dev/null || { skip "diff oracle (perf not installed)"; finish; }
can_perf_record || { skip "diff oracle (perf record does not work here)"; finish; }
export PERF_CONFIG=/dev/null PROFF_CONFIG=/dev/null   # no user config on either side
CC=${CC:-cc}
command -v clang >/dev/null && CC=clang

W=$TMP/wl; mkdir -p "$W" "$TMP/wl2"
cp "$ROOT/tests/data/diff/work.c" "$W/work.c"
# Ordinary PLT calls: perf 6.1 looks symbols up in a red-black tree where
# _init, extended over .plt before the PLT entries are added, shadows some PLT
# entries; proff follows the same tree (docs/symbols.md, "Overlapping
# symbols"; every byte of .plt is checked by tests/unit/test_symbol_plt.c).
# Lazily bound: a sample in the resolver's stub (.plt's first 16 bytes) is
# "_init+OFF" in perf's -s srcline (addr2line names no function there).
FLAGS="-g -O1 -fno-omit-frame-pointer"
[ "$CC" = clang ] && FLAGS="$FLAGS -mno-omit-leaf-frame-pointer"
$CC $FLAGS -o "$W/work" "$W/work.c" || { not_ok "build work.c"; finish; }
$CC -g -O2 -fno-omit-frame-pointer -DWORK_EXTRA -o "$TMP/wl2/work" "$W/work.c"
cp "$W/work" "$W/work_renamed"
# stripped copy without PLT stubs: every sample of it stays unresolved
$CC $FLAGS -fno-plt -o "$W/work_np" "$W/work.c" && strip -o "$W/work_stripped" "$W/work_np"
g++ -g -O1 -fno-omit-frame-pointer -o "$W/cxx" "$ROOT/tests/data/diff/cxx.cc"

export WORK_UNIT=${WORK_UNIT:-2500000} CXX_UNIT=${CXX_UNIT:-2500000}
rec() {  # rec OUT [perf record options --] cmd...
	local out=$1; shift
	local ropts=(-e cpu-clock -g)
	if [ "$1" = "--opts" ]; then ropts=($2); shift 2; fi
	perf record -q "${ropts[@]}" -o "$TMP/$out" "$@" >/dev/null 2>&1 </dev/null
	[ -s "$TMP/$out" ] || not_ok "record $out"
}
cd "$W" || exit 1
rec a.data ./work A
rec b.data ./work B
rec c.data ./work B 2
rec ac.data --opts "-e cpu-clock -g --sample-cpu" ./work A
rec bc.data --opts "-e cpu-clock -g --sample-cpu" ./work B
rec a2.data --opts "-e cpu-clock,task-clock -g" ./work A
rec rebuilt.data "$TMP/wl2/work" B
rec renamed.data ./work_renamed B
rec s_a.data --opts "-e cpu-clock" ./work_stripped A
rec s_b.data --opts "-e cpu-clock" ./work_stripped B
rec x_a.data ./cxx A
rec x_b.data ./cxx B
PY='s=0
for i in range(N): s+=len(str(i*i))'
rec py_a.data --opts "-e cpu-clock -g" /usr/bin/python3 -c "N=150000
$PY"
rec py_b.data --opts "-e cpu-clock -g" /usr/bin/python3 -c "N=300000
$PY"
rec pl_a.data perl -e 'my $s=0; for my $i (1..300000) { $s += length("$i" x 3) } print "$s\n"'
rec pl_b.data perl -e 'my %h; for my $i (1..200000) { $h{$i} = $i*2 } print scalar(keys %h), "\n"'
rec ad.data --opts "-e cpu-clock,dummy -g" ./work A
head -c 3000000 /dev/urandom > "$TMP/blob"
rec xz_a.data xz -3 -c -T1 "$TMP/blob"
rec xz_b.data xz -6 -c -T1 "$TMP/blob"
rec gz_a.data gzip -1 -c "$TMP/blob"
rec gz_b.data gzip -9 -c "$TMP/blob"
cd "$TMP" || exit 1

# same NAME ARGS...: stdout and exit status of proff diff and perf diff equal
same() {
	local name=$1; shift
	"$PROFF" diff "$@" >"$TMP/p.out" 2>"$TMP/p.err"; echo "[exit=$?]" >>"$TMP/p.out"
	perf diff "$@" >"$TMP/perf.out" 2>/dev/null; echo "[exit=$?]" >>"$TMP/perf.out"
	check_same "diff $name" "$TMP/perf.out" "$TMP/p.out"
}

# --- every compute method, -p, -F, -t, -q, -o, -v on two files ---------------
same default a.data b.data
for c in delta delta-abs ratio wdiff:1,2 wdiff:5,3; do
	same "-c $c -p -F" -c $c -p -F a.data b.data
	same "-c $c -t , -p -F" -c $c -t , -p -F a.data b.data
done
same "-t _ -d work" -t _ -d work a.data b.data
same "-q" -q a.data b.data
same "-o 0" -o 0 a.data b.data
same "-o 0 -c ratio" -o 0 -c ratio a.data b.data
same "-v" -v a.data b.data
same "-v -d work" -v -d work a.data rebuilt.data
same "self" a.data a.data
same "reverse" -d work b.data a.data
same "--compute=ratio --order=0" --compute=ratio --order=0 a.data b.data
same "-pF bundled" -pF a.data b.data
same "one argument (perf.data.old missing)" b.data

# --- three files ------------------------------------------------------------
same "3 files" a.data b.data c.data
same "3 files -c delta -F" -c delta -F a.data b.data c.data
same "3 files -c ratio -p" -c ratio -p a.data b.data c.data
same "3 files -c wdiff:2,1 -F -t ," -c wdiff:2,1 -F -t , a.data b.data c.data
same "3 files -o 2 -d work" -o 2 -d work a.data b.data c.data
same "3 files -o 0" -o 0 a.data b.data c.data

# --- sort keys --------------------------------------------------------------
for s in pid comm dso symbol cpu parent comm,dso,symbol symbol,dso srcline,dso cpu,pid; do
	same "-s $s" -s $s a.data b.data
done
same "-s cpu,dso --cpu 0-1" -s cpu,dso --cpu 0-1 ac.data bc.data
for s in sample period sym,sample dso,period symbol_size dso,symbol_size symbol_size,sym dso_size dso_size,sym cgroup cgroup,dso; do
	same "-s $s" -s $s a.data b.data
done
# srcfile: perf 6.1's diff aborts on it (a double free), so each file's
# column is checked against perf report -s srcfile of that file: Baseline is
# a.data's overhead, Baseline + Delta b.data's (to 0.01), a row per file of either
perf report -i a.data --stdio --no-children -g none -s srcfile -t ';' 2>/dev/null >"$TMP/sf.a"
perf report -i b.data --stdio --no-children -g none -s srcfile -t ';' 2>/dev/null >"$TMP/sf.b"
"$PROFF" diff -s srcfile -t ';' a.data b.data >"$TMP/sf.d" 2>"$TMP/sf.err"
check "diff -s srcfile: perf report -s srcfile of each file" python3 - "$TMP/sf.a" "$TMP/sf.b" "$TMP/sf.d" <<'PYEOF'
import sys
def rep(path):
    out = {}
    for l in open(path):
        if l.startswith("#") or ";" not in l: continue
        pct, name = l.rstrip("\n").split(";", 1)
        out[name] = float(pct.strip().rstrip("%"))
    return out
a, b = rep(sys.argv[1]), rep(sys.argv[2])
rows = {}
for l in open(sys.argv[3]):
    if l.startswith("#") or ";" not in l: continue
    base, delta, name = l.rstrip("\n").split(";", 2)
    rows[name] = (float(base) if base.strip() else None, float(delta.strip().rstrip("%")) if delta.strip() else 0.0)
bad = []
if set(rows) != set(a) | set(b): bad.append("rows %s, files %s" % (sorted(rows), sorted(set(a) | set(b))))
for n, (base, delta) in rows.items():
    if (base is None) != (n not in a) or (base is not None and abs(base - a[n]) > 0.001):
        bad.append("%r: Baseline %s, perf report a.data %s" % (n, base, a.get(n)))
    if n in b and abs((base or 0) + delta - b[n]) > 0.011:
        bad.append("%r: Baseline %s + Delta %s, perf report b.data %s" % (n, base, delta, b[n]))
print("\n".join(bad) if bad else "%d rows" % len(rows))
sys.exit(1 if bad else 0)
PYEOF

# --- filters in both percentage modes --------------------------------------
MAIN=$(perf script -i a.data -F pid,comm 2>/dev/null | awk '$1=="work"{print $2; exit}')
MAINB=$(perf script -i b.data -F pid,comm 2>/dev/null | awk '$1=="work"{print $2; exit}')
HELPER=$(perf script -i a.data -F tid,comm 2>/dev/null | awk '$1=="helper"{print $2; exit}')
echo compute_hot >"$TMP/syms.txt"; echo only_in_b >>"$TMP/syms.txt"
for pct in absolute relative; do
	same "-d work $pct" -d work --percentage $pct a.data b.data
	same "-d work,libc.so.6 -F $pct" -d work,libc.so.6 -F --percentage $pct a.data b.data
	same "-S list $pct" -S compute_hot,compute_mid,only_in_a,only_in_b --percentage $pct a.data b.data
	same "-S one $pct" -S compute_hot -F --percentage $pct a.data b.data
	same "-C helper -s comm,dso,sym $pct" -C helper -s comm,dso,sym --percentage $pct a.data b.data
	same "--pid -s pid,sym $pct" --pid "$MAIN,$MAINB" -s pid,sym --percentage $pct a.data b.data
	same "--tid -s pid,dso,sym $pct" --tid "$HELPER" -s pid,dso,sym --percentage $pct a.data b.data
	same "--cpu 0 $pct" --cpu 0 -d work --percentage $pct ac.data bc.data
done
same "-S file://" -S "file://$TMP/syms.txt" a.data b.data
same "-C work,helper" -C work,helper a.data b.data
same "--cpu 1" --cpu 1 ac.data bc.data
same "--cpu on data without CPU" --cpu 0 a.data b.data
same "--time 0%-50%" --time 0%-50% -d work a.data b.data
same "--time 50%-100%" --time 50%-100% a.data b.data
same "--time 10%/2" --time 10%/2 -d work a.data b.data
T0=$(perf script -i a.data -F time 2>/dev/null | awk 'NR==1{gsub(":","");print $1}')
T1=$(perf script -i b.data -F time 2>/dev/null | awk 'NR==1{gsub(":","");print $1}')
same "--time abs one range" --time "$T0,$(echo "$T0 + 0.2" | bc)" -d work a.data b.data
same "--time abs per file" --time "$T0,$(echo "$T0 + 0.2" | bc):$T1,$(echo "$T1 + 0.2" | bc)" -d work a.data b.data

# --- pairing cases ----------------------------------------------------------
same "rebuilt binary (functions moved)" -d work a.data rebuilt.data
same "renamed binary" -d work,work_renamed a.data renamed.data
same "symbol only in one file" -S only_in_a,only_in_b -p a.data b.data
same "stripped dso" -d work_stripped s_a.data s_b.data
mkdir -p "$TMP/empty-cache"
"$PROFF" diff --buildid-dir "$TMP/empty-cache" -d work_stripped s_a.data s_b.data >"$TMP/p.out" 2>&1
perf --buildid-dir "$TMP/empty-cache" diff -d work_stripped s_a.data s_b.data >"$TMP/perf.out" 2>/dev/null
check_same "diff unresolved addresses of a dso collapse into one row" "$TMP/perf.out" "$TMP/p.out"
same "kernel samples" -d '[kernel.kallsyms]' a.data b.data
same "C++ names" x_a.data x_b.data
same "C++ -s sym" -s sym -p x_a.data x_b.data
same "two events" -d work a2.data b.data
same "two events reversed" -d work b.data a2.data
same "python3" py_a.data py_b.data
same "python3 -s dso" -s dso py_a.data py_b.data
same "perl" pl_a.data pl_b.data
same "xz" -c ratio xz_a.data xz_b.data
same "gzip" gz_a.data gz_b.data
same "gzip vs xz" -s dso,sym gz_a.data xz_a.data
same "event without samples (dummy block)" -d work ad.data b.data

# --- config keys ----------------------------------------------------------------
printf '[diff]\n\torder = 0\n\tcompute = ratio\n[hist]\n\tpercentage = relative\n' >"$TMP/diff.cfg"
export PERF_CONFIG=$TMP/diff.cfg PROFF_CONFIG=$TMP/diff.cfg
same "config diff.order diff.compute hist.percentage" -d work a.data b.data
same "config overridden by options" -d work -o 1 -c delta --percentage absolute a.data b.data
export PERF_CONFIG=/dev/null PROFF_CONFIG=/dev/null

# --- usage errors and exit codes (stdout empty, same status) ----------------
same "-o out of limit" -o 2 a.data b.data
same "-c foo" -c foo a.data b.data
same "-c wdiff:0,1" -c wdiff:0,1 a.data b.data
same "--percentage foo" --percentage foo a.data b.data
same "--cycles-hist" --cycles-hist a.data b.data
same "-s foo" -s foo a.data b.data
same "missing file" nonexistent.data b.data
same "-c cycles" -c cycles a.data b.data
"$PROFF" diff -c cycles a.data b.data 2>"$TMP/e.err"
grep -q "a.data: -c cycles needs branch stacks (record with -b)" "$TMP/e.err" && ok "-c cycles message" || not_ok "-c cycles message"

# --- documented differences --------------------------------------------------
# -b: perf renormalises the Baseline column to the matched rows; proff keeps the
# full-profile percentages (the ones the deltas use). Everything else is equal.
bcheck() {
	local name=$1; shift
	"$PROFF" diff -b "$@" >"$TMP/p.out"; perf diff -b "$@" >"$TMP/perf.out" 2>/dev/null
	sed -E 's/^ *[0-9.]+%//' "$TMP/p.out" >"$TMP/p.cut"; sed -E 's/^ *[0-9.]+%//' "$TMP/perf.out" >"$TMP/perf.cut"
	check_same "-b $name: all but the Baseline column" "$TMP/perf.cut" "$TMP/p.cut"
	# every -b row is the row of the full diff (same Baseline, deltas, keys)
	"$PROFF" diff "$@" | grep -v '^#' | tr -s ' ' >"$TMP/nob.out"
	local extra
	extra=$(grep -v '^#' "$TMP/p.out" | tr -s ' ' | grep -cvxF -f "$TMP/nob.out")
	[ "$extra" = 0 ] && ok "-b $name: Baseline = full-profile percentage" || not_ok "-b $name: Baseline = full-profile percentage"
}
bcheck "2 files" a.data b.data
bcheck "3 files -d work" -d work a.data b.data c.data

# -C on rows that mix threads (no comm/pid key): perf shows or hides such a row
# by its first sample, proff shows it if any sample passes. Rows shown by both
# are equal, and proff shows a superset. A row only proff shows may widen a
# column, so the lines are compared without their trailing padding (spaces,
# and the dots of the header's rule).
"$PROFF" diff -C work a.data b.data | sed -E 's/[ .]+$//' >"$TMP/p.out"
perf diff -C work a.data b.data 2>/dev/null | sed -E 's/[ .]+$//' >"$TMP/perf.out"
missing=$(grep -vxF -f "$TMP/p.out" "$TMP/perf.out" | wc -l)
[ "$missing" = 0 ] && ok "-C work mixed rows: perf's rows are a subset" || { not_ok "-C work mixed rows: perf's rows are a subset"; diff "$TMP/perf.out" "$TMP/p.out" | head -10 | sed 's/^/#   /'; }

# --- JSON ---------------------------------------------------------------------
"$PROFF" diff --json -c wdiff:1,2 a.data b.data c.data >"$TMP/d.json"
if python3 - "$TMP/d.json" "$PROFF" <<'EOF'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
assert d["proff_diff"] == 1 and d["compute"] == "wdiff" and d["weights"] == [1, 2]
ev = d["events"][0]
assert ev["event"] == "cpu-clock"
text = subprocess.run([sys.argv[2], "diff", "-t", "|", "-c", "wdiff:1,2", "-p", "a.data", "b.data", "c.data"],
                      capture_output=True, text=True).stdout.splitlines()
rows = [l.split("|") for l in text if not l.startswith("#")]
assert len(rows) == len(ev["rows"]), (len(rows), len(ev["rows"]))
for t, j in zip(rows, ev["rows"]):
    assert t[-1].strip()[4:] == (j["keys"]["sym"] or t[-1].strip()[4:]), (t, j)
    assert (t[1].strip() or "0") == str(j["baseline"]["period"] if j["baseline"] else 0)
    for f in (1, 2):
        p = j["files"][f - 1]
        w = t[2 * f].strip()
        if p is None:
            assert w == ""
        elif j["baseline"] is None:
            assert w == "N/A"
        else:
            # with -t a zero weighted diff is printed blank (as perf)
            assert int(w or 0) == p["wdiff"] == 2 * p["period"] - j["baseline"]["period"]
EOF
then ok "--json rows and values match the text output"; else not_ok "--json rows and values match the text output"; fi
finish
