#!/bin/bash
# report.sh — oracle test: `proff report` against `perf report --stdio` on
# the same perf.data files, over a matrix of options (Children/Self, sort
# keys, filters, percentages, call-graph modes). Both outputs must be equal
# except the random "(Tip: ...)" line, which is dropped from both.
source "$(dirname "$0")/../lib.sh"

W="$TMP/w"; mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread \
	-o "$W/calls" "$ROOT/tests/data/report/calls.c" 2>"$TMP/cc.err" ||
	{ not_ok "build calls.c"; cat "$TMP/cc.err"; finish; }
if ! can_perf_record; then
	not_ok "perf record works here (needs root or perf_event_paranoid <= 1)"
	finish
fi
rec() { local out=$1; shift; perf record -q -o "$out" "$@" >/dev/null 2>"$TMP/rec.err" || { cat "$TMP/rec.err"; return 1; }; }
rec "$W/calls.data" -e cpu-clock -g -- "$W/calls" || not_ok "record calls"
rec "$W/calls-cpu.data" -e cpu-clock -g --sample-cpu -- "$W/calls" || not_ok "record calls --sample-cpu"
rec "$W/calls-nocg.data" -e cpu-clock -- "$W/calls" || not_ok "record calls without -g"
rec "$W/py.data" -e cpu-clock -g -- python3 -c 'import json; s=0
for i in range(150000): s += len(json.dumps({"a": i, "b": [i, i*2]}))' || not_ok "record python3"
rec "$W/perl.data" -e cpu-clock -g -- perl -e 'my %h; for my $i (1..200000) { $h{$i % 1000} .= "x" x ($i % 7); } print scalar(keys %h), "\n"' || not_ok "record perl"
head -c 3000000 /dev/urandom > "$W/rand.bin"
rec "$W/xz.data" -e cpu-clock -g -- xz -T1 -6 -k -c "$W/rand.bin" || not_ok "record xz"

# perf 6.1 prints fractal mode's remaining-hits line "[...]" from a symbol it
# mallocs without clearing: its "inlined" flag is heap garbage, so the line
# sometimes reads "[...] (inlined)" (docs/compat/report.md); that suffix is
# dropped before comparing
strip_tip() { grep -v '^# (Tip:' | sed 's/--\[\.\.\.\] (inlined)$/--[...]/'; }
cmp_report() {   # cmp_report NAME FILE OPTS...
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	DIFF_LINES=30 check_same "report $name: $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}

# cmp_report_split NAME FILE OPTS...: like cmp_report, but a row perf prints
# twice (its known walk quirk with `sym` before any dso key: an unresolved
# row of 3+1 samples, docs/compat/report.md) may be one row in proff's report,
# whose overhead is the sum of perf's two (to 0.02 for rounding); every other
# line is the same, in the same order.
cmp_report_split() {
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip > "$TMP/perf.out"
	"$PROFF" report -i "$file" "$@" 2>"$TMP/proff.err" | strip_tip > "$TMP/proff.out"
	if cmp -s "$TMP/perf.out" "$TMP/proff.out"; then ok "report $name: $(basename "$file") $*"; return; fi
	if python3 - "$TMP/perf.out" "$TMP/proff.out" > "$TMP/split.out" 2>&1 <<'PY'
import re, sys
row = re.compile(r"^ +([0-9.]+)%  (.*)$")
def rows(path):
    return [(row.match(l), l) for l in open(path).read().split("\n")]
perf, proff = rows(sys.argv[1]), rows(sys.argv[2])
def keys(rs):
    out = {}
    for m, _ in rs:
        if m: out.setdefault(m.group(2), []).append(float(m.group(1)))
    return out
pk, fk = keys(perf), keys(proff)
split = [k for k, v in pk.items() if len(v) == 2 and len(fk.get(k, [])) == 1]
if not split: sys.exit("no row of perf's printed twice where proff prints it once")
for k in split:
    if abs(sum(pk[k]) - fk[k][0]) > 0.02:
        sys.exit("%s: perf %s, proff %s" % (k, pk[k], fk[k]))
rest = lambda rs: [l for m, l in rs if not (m and m.group(2) in split)]
if rest(perf) != rest(proff): sys.exit("other lines differ")
print("; ".join("%s: perf %s, proff %s" % (k.strip(), pk[k], fk[k]) for k in split))
PY
	then ok "report $name: $(basename "$file") $* (perf's split row: $(cat "$TMP/split.out"))"
	else
		not_ok "report $name: $(basename "$file") $*"; sed 's/^/#   /' "$TMP/split.out"
		diff -u "$TMP/perf.out" "$TMP/proff.out" | head -30 | sed 's/^/#   /'
	fi
}

# Rows tied on every number: proff replays perf's tree insertions, which gives
# perf's order everywhere we have checked except, at times, among the
# garbage-address callchain rows of programs built without frame pointers
# (python3, perl, xz here) in Children mode. For those files the Children
# comparison sorts each run of tied rows first (docs/compat/report.md).
tie_sort() { python3 -c '
import sys, re
lines = sys.stdin.read().split("\n"); out = []; run = []; key = None
pct = re.compile(r"^( +[0-9.]+%){2}")
for l in lines + [""]:
    m = pct.match(l)
    k = m.group(0) if m else None
    if k is not None and k == key:
        run.append(l); continue
    out.extend(sorted(run)); run = [l] if k is not None else []; key = k
    if k is None: out.append(l)
print("\n".join(out[:-1]))'; }
cmp_report_ties() {   # like cmp_report, tied rows compared as sets
	local name=$1 file=$2; shift 2
	perf report -i "$file" --stdio "$@" 2>/dev/null | strip_tip | tie_sort > "$TMP/perf.out"
	"$PROFF" report -i "$file" "$@" 2>"$TMP/proff.err" | strip_tip | tie_sort > "$TMP/proff.out"
	DIFF_LINES=30 check_same "report $name (ties as sets): $(basename "$file") $*" "$TMP/perf.out" "$TMP/proff.out"
}

for f in "$W/calls.data" "$W/py.data" "$W/perl.data" "$W/xz.data"; do
	cmp_report "self, no graph" "$f" --no-children -g none
	cmp_report_split "self by sym" "$f" --no-children -g none -s sym
	cmp_report "children, no graph" "$f" --children -g none
	cmp_report "children by dso,sym" "$f" --children -g none -s dso,sym
done
F="$W/calls.data"
cmp_report "default (children + caller graph)" "$F"
cmp_report "self + callee graph" "$F" --no-children
cmp_report "caller graph by sym" "$F" --no-children -g caller -s sym
cmp_report "fractal" "$F" --no-children -g fractal -s sym
cmp_report "flat" "$F" --no-children -g flat -s sym
cmp_report "folded" "$F" --no-children -g folded -s sym
cmp_report "graph threshold 2" "$F" --no-children -g graph,2,callee
cmp_report "children caller graph sym" "$F" --children -s sym
cmp_report "comm" "$F" --no-children -g none -s comm
cmp_report "dso" "$F" --no-children -g none -s dso
cmp_report "pid" "$F" --no-children -g none -s pid
cmp_report "srcline" "$F" --no-children -g none -s srcline
cmp_report "parent" "$F" --no-children -g none -s parent,sym
cmp_report "dso filter" "$F" --no-children -g none -d calls
cmp_report "dso filter relative" "$F" --no-children -g none -d calls --percentage relative
cmp_report "two dsos" "$F" --no-children -g none -d calls,libc.so.6
cmp_report "comm filter" "$F" --no-children -g none --comms kid
cmp_report "symbol filter" "$F" --no-children -g none -S leaf_hot,leaf_cold
cmp_report "symbol filter relative" "$F" --no-children -g none -S leaf_hot,leaf_cold --percentage relative
cmp_report "percent limit" "$F" --no-children -g none --percent-limit 2
cmp_report "percent limit children" "$F" -g none --percent-limit 5
# --percent-limit sets the callchain threshold too; of it and -g's number,
# the one given last counts (perf's option parsers)
cmp_report "percent limit, graph" "$F" --no-children --percent-limit 0.2
cmp_report "percent limit, then -g threshold" "$F" --no-children --percent-limit 0.2 -g graph,0.5,callee
cmp_report "-g threshold, then percent limit" "$F" --no-children -g graph,0.5,callee --percent-limit 0.2
cmp_report "percent limit, then -g without threshold" "$F" --percent-limit 0.2 -g caller
printf '[report]\n\tpercent-limit = 0.2\n' > "$TMP/limit.cfg"
PERF_CONFIG="$TMP/limit.cfg" PROFF_CONFIG="$TMP/limit.cfg" cmp_report "config report.percent-limit" "$F" --no-children
PERF_CONFIG="$TMP/limit.cfg" PROFF_CONFIG="$TMP/limit.cfg" cmp_report "config report.percent-limit, -g threshold" "$F" --no-children -g graph,0.5,callee
cmp_report "quiet" "$F" --no-children -g none -q
cmp_report "max-stack" "$F" --children -g none --max-stack 3
# --max-stack 0: no callchain at all (Children = Self, no graph)
cmp_report "max-stack 0" "$F" --max-stack 0
cmp_report "max-stack 0, self" "$F" --max-stack 0 --no-children
cmp_report "max-stack 0 by parent,sym" "$F" --max-stack 0 -s parent,sym
# print_limit (-g TYPE,MIN,LIMIT,...): at most LIMIT children per level, and
# LIMIT frames of the single path at the top (its children still printed)
cmp_report "graph print_limit" "$F" -g graph,0.5,2
cmp_report "graph print_limit, self callee" "$F" --no-children -g graph,0.5,1,callee
cmp_report "graph print_limit by sym" "$F" --no-children -g graph,0.5,2,caller -s sym
cmp_report "fractal print_limit callee" "$F" -g fractal,0.5,2,callee
cmp_report "fractal print_limit, self" "$F" --no-children -g fractal,0.5,3,callee
cmp_report "flat print_limit" "$F" --no-children -g flat,0.5,2
cmp_report "folded print_limit" "$F" --no-children -g folded,0.5,2
cmp_report "time 20%-60%" "$F" --no-children -g none --time 20%-60%
cmp_report "cpu 0" "$W/calls-cpu.data" --no-children -g none -C 0
cmp_report "cpu key" "$W/calls-cpu.data" --no-children -g none -s cpu,sym
cmp_report "no callchains" "$W/calls-nocg.data"
cmp_report "verbose self" "$F" -v --no-children -g none -s dso,sym
cmp_report "verbose children graph" "$F" -v
cmp_report "sample counts (-n)" "$F" -n --no-children -g none
cmp_report "srcline after sym" "$F" --no-children -g none -s sym,srcline
# the Source:Line column is as wide as the srclines perf computed (compared)
# by the time each row entered its output tree: rows of two samples or more,
# rows sharing their symbol; python3's report has hundreds of rows of one
# sample, user and kernel, of which perf prints the longer ones cut
cmp_report "srcline after dso,sym" "$F" --no-children -g none -s dso,sym,srcline
cmp_report_split "srcline after sym" "$W/py.data" --no-children -g none -s sym,srcline
# srcfile: the file of the srcline, empty where there is none (kernel,
# unresolved, "??:0"); perf computes it while comparing, like srcline
cmp_report "srcfile" "$F" --no-children -g none -s srcfile
cmp_report "srcfile after sym" "$F" --no-children -g none -s sym,srcfile
cmp_report "srcfile before sym (padded when not last)" "$F" --no-children -g none -s srcfile,sym
cmp_report "srcfile after dso" "$F" --no-children -g none -s dso,srcfile
cmp_report "srcline and srcfile" "$F" --no-children -g none -s srcline,srcfile
cmp_report "srcfile" "$W/py.data" --no-children -g none -s srcfile
cmp_report_split "srcfile after sym" "$W/py.data" --no-children -g none -s sym,srcfile
# sample, period: perf's columns as keys (they split no row; perf orders
# by overhead first, then by the keys)
cmp_report "sample" "$F" --no-children -g none -s sample
cmp_report "sym,sample" "$F" --no-children -g none -s sym,sample
cmp_report "sample,sym (right-aligned, not last)" "$F" --no-children -g none -s sample,sym
cmp_report "comm,sample,dso" "$F" --no-children -g none -s comm,sample,dso
cmp_report "period" "$F" --no-children -g none -s period
cmp_report "sym,period" "$F" --no-children -g none -s sym,period
cmp_report "sym,sample children" "$F" --children -g none -s sym,sample
cmp_report "dso,period graph" "$F" -s dso,period
# (not on py.data: python3's garbage-address rows of one map-relative address
# in two maps are one row or two, as docs/compat/report.md says, now and then)
# -n and --show-total-period: the Samples and Period columns, shown once
# when -s names sample or period too
cmp_report "-n -s sym,sample" "$F" -n --no-children -g none -s sym,sample
cmp_report "--show-total-period children" "$F" --show-total-period --children -g none
cmp_report "--show-total-period -n graph" "$F" --show-total-period -n --no-children
cmp_report "--show-total-period -s sym,period" "$F" --show-total-period --no-children -g none -s sym,period
# the overhead keys: perf's percent columns as keys; the sort order is not
# prefixed with Overhead (Self) when the spec names an overhead key, nor
# with Children when it names overhead_children; sys/usr split the Self
# period by the samples' cpumode (kernel and user samples in these files)
for ch in --no-children --children; do
	cmp_report "overhead_sys,overhead_us,sym" "$F" $ch -g none -s overhead_sys,overhead_us,sym
	cmp_report "sym,overhead_us (sorted by sym)" "$F" $ch -g none -s sym,overhead_us
	cmp_report "sym,overhead_children,overhead" "$F" $ch -g none -s sym,overhead_children,overhead
	cmp_report "comm,overhead_sys,dso" "$F" $ch -g none -s comm,overhead_sys,dso
	cmp_report "overhead_guest_sys,overhead_guest_us,sym" "$F" $ch -g none -s overhead_guest_sys,overhead_guest_us,sym
done
cmp_report "overhead_sys,sym graph" "$F" -s overhead_sys,sym
cmp_report "overhead_children,sym caller graph" "$F" --children -g caller -s overhead_children,sym
cmp_report "dso,overhead_children" "$F" --children -g none -s dso,overhead_children
cmp_report "overhead,comm percentage relative" "$F" --no-children -g none -s overhead,comm,sym --percentage relative --comms calls
cmp_report "overhead_us,dso,sym" "$W/xz.data" --no-children -g none -s overhead_us,dso,sym
# -F: perf's strict field order (the fields' columns in order, then the
# --sort keys they lack; rows sorted by --sort, then the fields; no
# Overhead/Children column but as a field), Self and Children
cmp_report "-F overhead,sym" "$F" -F overhead,sym --no-children -g none
cmp_report "-F overhead,sym children" "$F" -F overhead,sym --children -g none
cmp_report "-F overhead_children,overhead,comm,sym graph" "$F" -F overhead_children,overhead,comm,sym --children
cmp_report "-F comm,sym children graph" "$F" -F comm,sym --children
cmp_report "-F sym,overhead,sample -s dso" "$F" -F sym,overhead,sample -s dso --no-children -g none
cmp_report "-F dso,overhead -s sym" "$F" -F dso,overhead -s sym --no-children -g none
cmp_report "-F overhead,sample,period,overhead_sys,overhead_us,dso,sym" "$F" -F overhead,sample,period,overhead_sys,overhead_us,dso,sym --no-children -g none
cmp_report "-F overhead_children,overhead,sym -s dso" "$F" -F overhead_children,overhead,sym --children -g none -s dso
cmp_report "-F overhead,sym -s symbol" "$F" -F overhead,sym -s symbol --no-children -g none
cmp_report "-F overhead,comm,dso,sym graph" "$F" -F overhead,comm,dso,sym --no-children
# time: rows per --time-quantum slot of the samples' times (Self mode;
# perf's Children count a sample once per callchain frame in a time row,
# docs/compat/report.md: there proff's Children of a -s time row must be
# its Self, perf's Self column)
cmp_report "time" "$F" --no-children -g none -s time
cmp_report "time graph" "$F" --no-children -s time
cmp_report "time,sym 10ms" "$F" --no-children -g none -s time,sym --time-quantum 10ms
cmp_report "comm,time 1s" "$F" --no-children -g none -s comm,time --time-quantum 1s
cmp_report "sym,time 50000000 (ns)" "$F" --no-children -g none -s sym,time --time-quantum 50000000
cmp_report "dso,time 20ms" "$W/xz.data" --no-children -g none -s dso,time --time-quantum 20ms
cmp_report "-F overhead,time,sym" "$F" --no-children -g none -F overhead,time,sym --time-quantum 10ms
perf report -i "$F" --stdio --no-children -g none -s time 2>/dev/null | grep '%' | awk '{print $2, $1}' | sort >"$TMP/perf.self"
"$PROFF" report -i "$F" --children -g none -s time 2>/dev/null | grep '%' | awk '{print $3, $1}' | sort >"$TMP/proff.children"
[ -s "$TMP/perf.self" ] && cmp -s "$TMP/perf.self" "$TMP/proff.children" &&
	ok "report time children: each row's Children is perf's Self of its slot ($(wc -l <"$TMP/perf.self") slots)" ||
	{ not_ok "report time children: Children = perf's Self per slot"; diff "$TMP/perf.self" "$TMP/proff.children" | head -10 | sed 's/^/#   /'; }
for q in 0 10xs -5ms; do
	"$PROFF" report -i "$F" -s time --time-quantum "$q" >/dev/null 2>"$TMP/proff.err"; rc=$?
	[ "$rc" != 0 ] && grep -q "time quantum" "$TMP/proff.err" && ok "--time-quantum $q refused (exit $rc)" ||
		{ not_ok "--time-quantum $q refused (rc $rc)"; sed 's/^/#   /' "$TMP/proff.err"; }
done
# on a terminal perf colours the percent keys and fields as its Overhead
# column: perf on a pseudo-terminal (script(1)), proff with --color=always
if command -v script >/dev/null; then
	for o in "-s overhead_sys,overhead_us,sym --no-children" "-F overhead_children,overhead,overhead_sys,sym --children"; do
		script -qc "perf --no-pager report -i $F --stdio -g none $o" "$TMP/tty.out" >/dev/null 2>&1
		tr -d '\r' <"$TMP/tty.out" | grep '%  ' >"$TMP/perf.out"
		"$PROFF" report -i "$F" -g none $o --color=always 2>/dev/null | grep '%  ' >"$TMP/proff.out"
		grep -q $'\033' "$TMP/perf.out" || not_ok "perf coloured its rows on a pseudo-terminal: $o"
		check_same "report colours: $o" "$TMP/perf.out" "$TMP/proff.out"
	done
else
	skip "report colours (no script(1))"
fi
"$PROFF" report -i "$F" -F +sym >/dev/null 2>"$TMP/proff.err"; rc=$?
[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/proff.err")" = 1 ] && ok "-F +sym (not supported): one error line, exit $rc" ||
	{ not_ok "-F +sym: one error line (rc $rc)"; sed 's/^/#   /' "$TMP/proff.err"; }
# symbol_size, and the IPC columns perf report adds to a sort naming
# "symbol" (ipc_null: a row per symbol, "-" without branch stacks)
cmp_report "symbol (IPC columns)" "$F" --no-children -g none -s symbol
cmp_report "symbol_size" "$F" --no-children -g none -s symbol_size
cmp_report "symbol_size graph" "$F" -s symbol_size
cmp_report "symbol_size children" "$F" --children -g none -s symbol_size
cmp_report "dso,symbol_size" "$F" --no-children -g none -s dso,symbol_size
cmp_report "comm,symbol_size,sym" "$F" --no-children -g none -s comm,symbol_size,sym
cmp_report "dso,symbol graph" "$F" --no-children -s dso,symbol
cmp_report "symbol_size" "$W/py.data" --no-children -g none -s symbol_size
# (Children on python3's garbage frames: unresolved rows merge or split
# otherwise than perf's, now and then, docs/compat/report.md: the C recording)
cmp_report "symbol,dso children" "$F" --children -g none -s symbol,dso
# dso_size: the size of the row's map (the kernel's after perf's fixup to
# its symbols' extent); rows of equal size are one
cmp_report "dso_size" "$F" --no-children -g none -s dso_size
cmp_report "dso_size children" "$F" --children -g none -s dso_size
cmp_report "dso_size graph" "$F" -s dso_size
cmp_report "dso,dso_size" "$F" --no-children -g none -s dso,dso_size
cmp_report "dso_size,sym" "$F" --no-children -g none -s dso_size,sym
cmp_report "dso_size" "$W/py.data" --no-children -g none -s dso_size
cmp_report "dso_size children" "$W/py.data" --children -g none -s dso_size
cmp_report "dso_size,sym" "$W/py.data" --no-children -g none -s dso_size,sym
# cgroup: "N/A" for samples without a cgroup id (a recording without
# --all-cgroups); one with them is refused, one line naming the file
cmp_report "cgroup" "$F" --no-children -g none -s cgroup
cmp_report "cgroup,dso" "$F" --no-children -g none -s cgroup,dso
cmp_report "dso,cgroup (unpadded last)" "$F" --no-children -g none -s dso,cgroup
cmp_report "cgroup graph" "$F" -s cgroup
cmp_report "comm,cgroup,sym children" "$F" --children -g none -s comm,cgroup,sym
if rec "$W/cg.data" --all-cgroups -e cpu-clock -- "$W/calls"; then
	"$PROFF" report -i "$W/cg.data" -s cgroup >/dev/null 2>"$TMP/proff.err"
	rc=$?
	[ "$rc" != 0 ] && [ "$(wc -l <"$TMP/proff.err")" = 1 ] && grep -q "cg.data.*cgroup" "$TMP/proff.err" &&
		ok "report -s cgroup of an --all-cgroups recording: refused, one line" ||
		{ not_ok "report -s cgroup of an --all-cgroups recording: refused, one line (rc $rc)"; sed 's/^/#   /' "$TMP/proff.err"; }
else
	skip "perf record --all-cgroups"
fi
perf report -i "$F" --stdio -s ipc_null >"$TMP/perf.out" 2>&1
"$PROFF" report -i "$F" -s ipc_null >"$TMP/proff.out" 2>"$TMP/proff.err"
rc=$?
[ "$rc" = 129 ] && grep -q 'sort by key' "$TMP/perf.out" && [ ! -s "$TMP/proff.out" ] &&
	grep -q "ipc_null" "$TMP/proff.err" && ok "report -s ipc_null: an error, as perf's usage" ||
	not_ok "report -s ipc_null: an error, as perf's usage (rc $rc)"

# one unmapped address met first in kernel context, then as a user sample's
# ip (tests/tools/mklevel.py rewrites two samples of calls.data): a row's
# level is its first sample's cpumode, and an unmapped callchain entry keeps
# the sample's level — not the level the address was first seen with
if python3 "$ROOT/tests/tools/mklevel.py" "$W/calls.data" "$W/level.data" 2>"$TMP/mklevel.err"; then
	cmp_report "unmapped address under two cpumodes" "$W/level.data"
	cmp_report "unmapped address under two cpumodes, no graph" "$W/level.data" --children -g none
	cmp_report "unmapped address under two cpumodes, self" "$W/level.data" --no-children -g none
	check "the crafted rows are there ([k] 0x1234, [.] 0xdfdfdfdf00000000)" bash -c \
		"grep -q '\[k\] 0x0000000000001234' '$TMP/proff.out' &&
		 '$PROFF' report -i '$W/level.data' -g none | grep -q '\[\.\] 0xdfdfdfdf00000000'"
else
	not_ok "tests/tools/mklevel.py on calls.data"; sed 's/^/#   /' "$TMP/mklevel.err"
fi

# no sample left after filtering: a recording of CPU 0 only, reported for CPU 1
if rec "$W/cpu0.data" -e cpu-clock -C 0 --sample-cpu -- taskset -c 0 "$W/calls"; then
	cmp_report "no samples kept (-C 1 of a CPU 0 recording)" "$W/cpu0.data" --no-children -g none -C 1
	"$PROFF" report -i "$W/cpu0.data" -C 1 >/dev/null 2>"$TMP/e0.err"; rc=$?
	check "no samples kept: exit 0 and perf's message" bash -c "[ $rc = 0 ] && grep -q 'data has no samples!' '$TMP/e0.err'"
else
	not_ok "record cpu0.data"
fi

# callchains ending in garbage addresses more than 2^63 apart (a fake
# frame-pointer chain): perf's input tree then holds two rows of one address
# at times, each with part of its samples, and its collapse merges some
# (docs/design.md, tree mode); the same rows, sums and order. 3 s at 10 kHz:
# more raw samples than the pass needs to run on two threads (20,000), so
# the caller-order reports take that path and the callee graph and
# --no-children the one-thread one
if [ "$(uname -m)" = x86_64 ] && cc -O1 -g -fno-omit-frame-pointer -o "$W/garbage" "$ROOT/tests/data/report/garbage.c" 2>"$TMP/cc.err" &&
   rec "$W/garbage.data" -e cpu-clock -F 10000 -g -- "$W/garbage" 3; then
	cmp_report "garbage callchains" "$W/garbage.data"
	cmp_report "garbage callchains, no graph" "$W/garbage.data" -g none
	cmp_report "garbage callchains by sym" "$W/garbage.data" -g none -s sym
	cmp_report "garbage callchains, callee graph" "$W/garbage.data" -g callee --percent-limit 1
	cmp_report "garbage callchains, percent limit 0.1 (graph threshold)" "$W/garbage.data" --percent-limit 0.1
	cmp_report "garbage callchains, self" "$W/garbage.data" --no-children
else
	not_ok "build and record tests/data/report/garbage.c"; sed 's/^/#   /' "$TMP/cc.err"
fi

# a process renamed after its first samples: -s pid shows the last comm (perf's thread comm)
cat > "$W/rename.py" <<'PY'
import ctypes, time
def burn(s):
    t = time.process_time()
    while time.process_time() - t < s:
        pass
burn(0.15)
ctypes.CDLL(None).prctl(15, b"renamed", 0, 0, 0)
burn(0.15)
PY
if rec "$W/rename.data" -e cpu-clock -g -- python3 "$W/rename.py"; then
	cmp_report "pid key after a rename" "$W/rename.data" --no-children -g none -s pid
	check "pid key after a rename: the last comm" grep -q ':renamed' "$TMP/proff.out"
else
	not_ok "record rename.data"
fi
finish
