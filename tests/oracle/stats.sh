#!/bin/bash
# tests/oracle/stats.sh — lib/stats against scipy and statsmodels (Debian's
# python3-scipy, python3-statsmodels): Welch's t (p, CI, df), Mann-Whitney U
# (exact and normal approximation, with ties), Benjamini-Hochberg q-values,
# the sampling-noise tests of one run per side, power (runs per side), and the
# distributions under them, on random inputs drawn here (seeded, so a failure
# reproduces). p and q agree to 1e-6 relative, interval bounds to 1e-9
# relative. The bootstrap CI of the median difference (proff: the exact
# bootstrap, from binomial tails of order statistics) has no counterpart in
# either library: here the law of a resample's median is enumerated over every
# resample's count vector with its multinomial probability, in exact
# fractions, the difference's law convolved, and its 2.5 % and 97.5 % points
# must be proff's bounds exactly (or where the exact CDF lies within 1e-12 of
# 2.5 %, a neighbour: a double's sum cannot tell those apart).
# Driven through tests/tools/stats-oracle.c, built here against the library.
source "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
if ! $PY -c 'import scipy, statsmodels' 2>/dev/null; then
	not_ok "stats oracle: python3-scipy and python3-statsmodels are needed (scripts/setup-deps.sh installs them)"
	finish
fi
LIBA=$(dirname "$PROFF")/libproff.a
SANFL=""
case $PROFF in *asan*) SANFL="-fsanitize=address,undefined" ;; esac
if ! cc -std=gnu17 -O1 -g $SANFL -I"$ROOT/include" -o "$TMP/so" "$ROOT/tests/tools/stats-oracle.c" "$LIBA" -lm 2>"$TMP/cc.err"; then
	not_ok "build stats-oracle"; sed 's/^/#   /' "$TMP/cc.err" | head; finish
fi

$PY - "$TMP/so" "$ROOT/tests/tools" <<'EOF'
import math, subprocess, sys, warnings
import numpy as np
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.power import tt_ind_solve_power
from statsmodels.stats.proportion import proportions_ztest
from statsmodels.stats.rates import test_poisson_2indep
warnings.filterwarnings("ignore")

rng = np.random.default_rng(20240528)
proc = subprocess.Popen([sys.argv[1]], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

def ask(line):
    proc.stdin.write(line + "\n"); proc.stdin.flush()
    out = proc.stdout.readline()
    if not out:
        raise SystemExit("stats-oracle died on: " + line)
    return [float(x) for x in out.split()]

def lst(v):
    return ",".join(repr(float(x)) for x in v)

def close(a, b, rel, abs_=0.0):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), abs_)

results = {}
def report(name, fails, n, example=None):
    if fails:
        print(f"not ok - {name}: {fails} of {n} differ")
        print(f"#   first: {example}")
    else:
        print(f"ok - {name} ({n} cases)")

# --- distributions -----------------------------------------------------------------
fails, n, ex = 0, 0, None
for _ in range(400):
    a, b = rng.uniform(0.05, 60, 2)
    x = rng.uniform(0, 1)
    got = ask(f"betainc {a!r} {b!r} {x!r}")[0]
    want = stats.beta.cdf(x, a, b)
    n += 1
    if not close(got, want, 1e-9, 1e-300):
        fails += 1; ex = ex or (a, b, x, got, want)
report("incomplete beta vs scipy.stats.beta.cdf (1e-9)", fails, n, ex)

fails, n, ex = 0, 0, None
for _ in range(600):
    df = float(rng.choice([rng.uniform(1, 3), rng.uniform(3, 40), rng.uniform(40, 5000)]))
    t = float(rng.choice([rng.normal(0, 2), rng.normal(0, 20), rng.uniform(-300, 300)]))
    got = ask(f"tsf2 {t!r} {df!r}")[0]
    want = 2 * stats.t.sf(abs(t), df)
    n += 1
    if want > 1e-290 and not close(got, want, 1e-9):
        fails += 1; ex = ex or ("tsf2", t, df, got, want)
    got = ask(f"tcdf {t!r} {df!r}")[0]
    want = stats.t.cdf(t, df)
    if want > 1e-290 and not close(got, want, 1e-9):
        fails += 1; ex = ex or ("tcdf", t, df, got, want)
    p = float(rng.choice([rng.uniform(0, 1), 0.975, 0.995, 10 ** -rng.uniform(1, 12)]))
    got = ask(f"tq {p!r} {df!r}")[0]
    want = stats.t.ppf(p, df)
    # scipy's ppf itself is good to about 1e-9 for fractional df (its cdf at
    # its ppf misses p by that much): proff's t must be as close, or scipy's
    # cdf at it must give p back to 1e-12
    if not (close(got, want, 1e-9) or close(stats.t.cdf(got, df), p, 1e-12)):
        fails += 1; ex = ex or ("tq", p, df, got, want)
report("Student's t: two-sided tail, CDF and quantile vs scipy.stats.t (1e-9; quantile: or scipy's CDF at it 1e-12)", fails, n, ex)

fails, n, ex = 0, 0, None
for _ in range(300):
    p = float(rng.choice([rng.uniform(0, 1), 10 ** -rng.uniform(1, 300)]))
    got = ask(f"normq {p!r}")[0]
    want = stats.norm.ppf(p)
    n += 1
    if not close(got, want, 1e-12):
        fails += 1; ex = ex or (p, got, want)
report("normal quantile vs scipy.stats.norm.ppf (1e-12)", fails, n, ex)

fails, n, ex = 0, 0, None
for _ in range(400):
    df = rng.uniform(2, 200); ncp = rng.uniform(-12, 12); t = rng.uniform(-15, 15)
    got = ask(f"nct {t!r} {df!r} {ncp!r}")[0]
    want = stats.nct.cdf(t, df, ncp)
    n += 1
    if not close(got, want, 1e-7, 1e-12):
        fails += 1; ex = ex or (t, df, ncp, got, want)
report("noncentral t CDF vs scipy.stats.nct.cdf (1e-7, 1e-12 absolute)", fails, n, ex)

# --- Welch ---------------------------------------------------------------------------
fails, n, ex = 0, 0, None
for _ in range(1500):
    na, nb = rng.integers(2, 31, 2)
    kind = rng.integers(0, 4)
    if kind == 0:
        a = rng.normal(10, 1, na); b = rng.normal(10, 1, nb)
    elif kind == 1:
        a = rng.normal(10, 0.01, na); b = rng.normal(10.5, 0.3, nb)       # tiny p
    elif kind == 2:
        a = rng.exponential(1, na); b = rng.exponential(3, nb)
    else:
        a = np.round(rng.normal(3, 1, na), 2); b = np.round(rng.normal(3.2, 0.1, nb), 2)
    out = ask(f"welch {lst(a)} {lst(b)}")
    r = stats.ttest_ind(b, a, equal_var=False)
    va, vb = np.var(a, ddof=1) / na, np.var(b, ddof=1) / nb
    df = (va + vb) ** 2 / (va ** 2 / (na - 1) + vb ** 2 / (nb - 1))
    d = b.mean() - a.mean()
    half = stats.t.ppf(0.975, df) * math.sqrt(va + vb)
    n += 1
    ok = (out[0] == 0 and close(out[1], r.pvalue, 1e-6, 1e-300) and close(out[4], r.statistic, 1e-9)
          and close(out[5], df, 1e-9) and close(out[2] - out[6], -half, 1e-7)
          and close(out[3] - out[6], half, 1e-7) and close(out[6], d, 1e-9, 1e-12))
    if not ok:
        fails += 1; ex = ex or (list(a), list(b), out, r.pvalue, df, d - half, d + half)
report("Welch's t-test: p (1e-6), t, df (1e-9), 95% CI half-width (1e-7) vs scipy.stats.ttest_ind(equal_var=False)", fails, n, ex)

out = ask("welch 1,1,1 2,2,2")
print(("ok" if out[0] == 2 and math.isnan(out[1]) else "not ok") +
      " - Welch: zero variance on both sides gives no p-value (scipy: t = inf)")
out = ask("welch 1 2,3,4")
print(("ok" if out[0] == 1 and math.isnan(out[1]) else "not ok") + " - Welch: one run on a side gives no p-value")

# --- Mann-Whitney U --------------------------------------------------------------------
fails, n, ex = 0, 0, None
nexact = nasym = 0
for _ in range(800):
    na, nb = int(rng.integers(1, 12)), int(rng.integers(1, 40))
    if rng.integers(0, 2):
        na, nb = nb, na
    if rng.integers(0, 3) == 0:
        a = rng.integers(0, 6, na).astype(float); b = rng.integers(0, 6, nb).astype(float) + 1   # ties
    else:
        a = rng.normal(0, 1, na); b = rng.normal(rng.uniform(0, 2), 1, nb)
    out = ask(f"mwu {lst(a)} {lst(b)}")
    if np.all(np.concatenate([a, b]) == a[0]):
        n += 1
        if out[0] != 2:
            fails += 1; ex = ex or ("all equal", out)
        continue
    method = "exact" if out[5] == 1 else "asymptotic"
    nexact += method == "exact"; nasym += method == "asymptotic"
    r = stats.mannwhitneyu(b, a, alternative="two-sided", method=method)
    want_exact = (min(na, nb) <= 8 and len(np.unique(np.concatenate([a, b]))) == na + nb)
    n += 1
    if not (out[0] == 0 and close(out[1], r.pvalue, 1e-6, 1e-300) and close(out[4], r.statistic, 1e-12)
            and (method == "exact") == want_exact):
        fails += 1; ex = ex or (list(a), list(b), out, r.pvalue, r.statistic, method, want_exact)
report(f"Mann-Whitney U: U and p (1e-6) vs scipy.stats.mannwhitneyu, exact {nexact} / normal approximation {nasym}, "
       "exact where scipy's 'auto' picks it", fails, n, ex)

# the exact bootstrap CI of the median difference, groups of 1 to 10 runs,
# against the law enumerated in fractions (tests/tools/boot_law.py)
sys.path.insert(0, sys.argv[2])
import boot_law
def boot_ok(a, b, got_lo, got_hi):
    lo, hi, near_lo, near_hi = boot_law.interval(a, b)
    return (got_lo == lo or got_lo in near_lo) and (got_hi == hi or got_hi in near_hi), lo, hi
fails, n, ex = 0, 0, None
for _ in range(400):
    na, nb = int(rng.integers(1, 11)), int(rng.integers(1, 11))
    kind = rng.integers(0, 3)
    if kind == 0:
        a = rng.normal(10, 1, na); b = rng.normal(10.5, 1, nb)
    elif kind == 1:
        a = np.round(rng.normal(3, 1, na), 1); b = np.round(rng.normal(3.2, 1, nb), 1)   # ties
    else:
        a = rng.exponential(1, na); b = rng.exponential(2, nb)
    out = ask(f"mwu {lst(a)} {lst(b)}")
    if out[0] != 0:
        continue
    ok, lo, hi = boot_ok(a, b, out[2], out[3])
    n += 1
    if not ok:
        fails += 1; ex = ex or (list(a), list(b), out[2:4], lo, hi)
report("MWU exact bootstrap CI: bounds = the 2.5 % and 97.5 % points of the enumerated law (fractions)", fails, n, ex)
# larger groups (11 to 20 runs: proff's laws of 66 points and more are sorted
# by qsort, from 18 runs its lightest points are left out), the law by the
# multinomial of cells (boot_law.index_law_cells, checked here against the
# enumeration for 1 to 8 values)
same = all({k: v for k, v in boot_law.index_law_cells(m).items() if v} == boot_law.index_law(m) for m in range(1, 9))
fails, n, ex = 0, 0, None
for _ in range(24):
    na, nb = int(rng.integers(11, 21)), int(rng.integers(11, 21))
    a = rng.normal(10, 1, na); b = rng.exponential(1, nb) + 9.5
    out = ask(f"mwu {lst(a)} {lst(b)}")
    ok, lo, hi = boot_ok(a, b, out[2], out[3])
    n += 1
    if not ok:
        fails += 1; ex = ex or (list(a), list(b), out[2:4], lo, hi)
report("MWU exact bootstrap CI, 11 to 20 runs a side: the law by cells (= the enumeration for 1 to 8: "
       f"{same})", fails + (not same), n, ex)
a = "1.5,2.25,3,4.75,5"; b = "2,3.5,4,6.25,7"
o1 = ask(f"mwu {a} {b}"); o2 = ask(f"mwu {a} {b}")
print(("ok" if o1 == o2 else "not ok") + " - MWU bootstrap CI reproducible")

# smallest possible p of MWU (exact): 2 / C(n, k)
fails = 0
for na, nb in [(2, 2), (3, 3), (5, 5), (4, 7), (8, 30)]:
    got = ask(f"minp mwu {na} {nb}")[0]
    a = np.arange(na, dtype=float); b = np.arange(na, na + nb, dtype=float)
    want = stats.mannwhitneyu(b, a, method="exact").pvalue
    fails += not close(got, want, 1e-12)
report("MWU smallest possible p = scipy's p of completely separated groups", fails, 5)

# --- Benjamini-Hochberg -------------------------------------------------------------
fails, n, ex = 0, 0, None
for _ in range(200):
    m = int(rng.integers(1, 400))
    p = rng.uniform(0, 1, m) ** rng.uniform(1, 6)
    p[rng.uniform(0, 1, m) < 0.1] = p[0]          # ties
    nanmask = rng.uniform(0, 1, m) < 0.1
    pin = p.copy(); pin[nanmask] = np.nan
    got = ask("bh " + ",".join("nan" if math.isnan(x) else repr(float(x)) for x in pin))
    want = np.full(m, np.nan)
    if (~nanmask).any():
        want[~nanmask] = multipletests(p[~nanmask], method="fdr_bh")[1]
    n += 1
    if not all(close(g, w, 1e-12, 1e-300) for g, w in zip(got, want)):
        fails += 1; ex = ex or (list(pin)[:10], got[:10], list(want)[:10])
report("Benjamini-Hochberg q-values vs statsmodels multipletests(fdr_bh), NaN p not counted", fails, n, ex)

# --- one run per side ---------------------------------------------------------------
fails, n, ex = 0, 0, None
for _ in range(400):
    na, nb = rng.integers(100, 200000, 2)
    pa = rng.uniform(0, 0.5); pb = pa * rng.uniform(0.8, 1.25)
    xa, xb = rng.binomial(na, pa), rng.binomial(nb, min(pb, 1))
    out = ask(f"prop {xa} {na} {xb} {nb}")
    if xa + xb == 0:
        continue
    z, p = proportions_ztest([xb, xa], [nb, na])
    sa, sb = xa / na, xb / nb
    half = stats.norm.ppf(0.975) * math.sqrt(sa * (1 - sa) / na + sb * (1 - sb) / nb)
    n += 1
    if not (out[0] == 0 and close(out[1], p, 1e-6, 1e-300) and close(out[4], z, 1e-9)
            and close(out[2], sb - sa - half, 1e-9, 1e-15) and close(out[3], sb - sa + half, 1e-9, 1e-15)):
        fails += 1; ex = ex or (xa, na, xb, nb, out, p, z)
report("two-proportion z-test vs statsmodels proportions_ztest; Wald CI", fails, n, ex)

fails, n, ex = 0, 0, None
for _ in range(300):
    xa, xb = rng.integers(1, 50000, 2)
    c = float(rng.choice([250000, 1000000, 1]))
    out = ask(f"pois {xa * c!r} {xa} {xb * c!r} {xb}")
    r = test_poisson_2indep(int(xb), 1, int(xa), 1, method="wald")
    n += 1
    if not (out[0] == 0 and close(out[1], r.pvalue, 1e-6, 1e-300) and close(out[4], r.statistic, 1e-9)):
        fails += 1; ex = ex or (xa, xb, c, out, r.pvalue)
report("Poisson sums with equal sample weights vs statsmodels test_poisson_2indep(wald)", fails, n, ex)

# --- power ----------------------------------------------------------------------------
fails, n, ex = 0, 0, None
for _ in range(150):
    d = float(rng.choice([rng.uniform(0.2, 1), rng.uniform(1, 4), rng.uniform(0.05, 0.2)]))
    alpha = float(rng.choice([0.05, 0.01, 0.1]))
    got = int(ask(f"runs {d!r} 1 1 {alpha!r} 0.8 100000")[0])
    want = max(2, math.ceil(tt_ind_solve_power(effect_size=d, alpha=alpha, power=0.8) - 1e-9))
    n += 1
    if got != want:
        fails += 1; ex = ex or (d, alpha, got, tt_ind_solve_power(effect_size=d, alpha=alpha, power=0.8))
    pw = ask(f"power {d!r} 7 {alpha!r}")[0]
    from statsmodels.stats.power import TTestIndPower
    if not close(pw, TTestIndPower().power(effect_size=d, nobs1=7, alpha=alpha), 1e-7, 1e-12):
        fails += 1; ex = ex or ("power", d, alpha, pw)
report("runs per side for 80% power = ceil of statsmodels tt_ind_solve_power; power at n = 7", fails, n, ex)
proc.stdin.close(); proc.wait()
EOF
finish
