#!/bin/bash
# bench/stats-aa.sh — the false-positive rate of `proff diff A.. -- B..` when
# nothing changed (the A/A experiment of docs/statistics.md): SETS sets of 10
# runs of tests/data/stats/planted.c (version A only; proff record at 10 kHz,
# -g), every one of the 126 splits 5 against 5 of each set diffed with the
# defaults (Welch, BH at q <= 0.05, --min-share 0.1), then with --metric
# absolute and --test mwu. Prints, per set and in all, the splits with any
# significant row and the significant rows among the row tests. Also one run
# against one (the sampling-noise test) over the 45 pairs of each set,
# restricted to the program's own rows (-d planted) and over all rows.
#   SETS=3 UNIT=40000000 bash bench/stats-aa.sh
source "$(dirname "$0")/lib.sh"
SETS=${SETS:-3}
UNIT=${UNIT:-40000000}
W=$BENCH_DIR/aa
mkdir -p "$W"
cc -O1 -g -fno-omit-frame-pointer -o "$W/planted" "$ROOT/tests/data/stats/planted.c" || exit 1
for ((s = 1; s <= SETS; s++)); do
	for ((i = 1; i <= 10; i++)); do
		[ -s "$W/s$s.$i" ] || "$PROFF" record -q -c 100000 -g -o "$W/s$s.$i" "$W/planted" "$UNIT" 100 >/dev/null 2>&1
	done
done
cd "$W" || exit 1
python3 - "$PROFF" "$SETS" <<'EOF'
import itertools, json, subprocess, sys
proff, sets = sys.argv[1], int(sys.argv[2])
def diff(args):
    out = subprocess.run([proff, "diff", "--json"] + args, capture_output=True, text=True).stdout
    ev = json.loads(out)["events"][0]
    sig = sum(r["self"][1]["significant"] for r in ev["rows"])
    return sig, ev["tests"]
for label, extra in (("welch, shares", []), ("welch, absolute", ["--metric", "absolute"]), ("mwu, shares", ["--test", "mwu"])):
    tot_s = tot_any = tot_tests = tot_splits = 0
    for s in range(1, sets + 1):
        runs = [f"s{s}.{i}" for i in range(1, 11)]
        n_any = n_sig = n_tests = n = 0
        for a in itertools.combinations(range(10), 5):
            if 0 not in a:
                continue                      # each split once
            b = [i for i in range(10) if i not in a]
            sig, tests = diff(extra + [runs[i] for i in a] + ["--"] + [runs[i] for i in b])
            n += 1; n_sig += sig; n_tests += tests; n_any += sig > 0
        print(f"  {label:16s} set {s}: {n_any} of {n} splits with a significant row; {n_sig} of {n_tests} row tests")
        tot_any += n_any; tot_s += n_sig; tot_tests += n_tests; tot_splits += n
    print(f"  {label:16s} all: {tot_any} of {tot_splits} splits ({100.0 * tot_any / tot_splits:.1f} %); "
          f"{tot_s} of {tot_tests} row tests ({100.0 * tot_s / max(tot_tests, 1):.2f} %)")
for label, extra in (("one run, -d planted", ["-d", "planted"]), ("one run, all rows", [])):
    n_any = n = n_sig = n_tests = 0
    for s in range(1, sets + 1):
        for i, j in itertools.combinations(range(1, 11), 2):
            sig, tests = diff(extra + [f"s{s}.{i}", "--", f"s{s}.{j}"])
            n += 1; n_sig += sig; n_tests += tests; n_any += sig > 0
    print(f"  {label:20s}: {n_any} of {n} pairs with a significant row; {n_sig} of {n_tests} row tests")
EOF
