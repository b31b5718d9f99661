#!/usr/bin/env python3
"""boot_law.py — the exact bootstrap law of the difference of two medians,
enumerated independently of proff, for the statistics oracles
(tests/oracle/stats.sh, tests/oracle/diff-stats.sh).

Resampling n values with replacement, a resample is a count vector (how often
each of the sorted values is drawn: C(2n-1, n) of them) with multinomial
probability n! / prod(c!) / n^n; its median follows from the counts. Summed
in exact fractions this is the law of a resample's median over the values'
indices; the difference of the two groups' medians, whose resamples are
independent, is their convolution. proff computes the same law from binomial
tails of order statistics (lib/stats/bootstrap.c) and searches its
percentiles without listing it; here it is listed whole.
"""
import math
from fractions import Fraction

_laws = {}


def index_law(n):
    """{(lo, hi): probability}: the resample's median is the mean of the
    sorted values lo and hi (0-based; equal for odd n); enumerated up to
    10 values, by cells above"""
    if n in _laws:
        return _laws[n]
    if n > 10:
        _laws[n] = index_law_cells(n)
        return _laws[n]
    law = {}
    lo_k, hi_k = (n - 1) // 2, n // 2
    fact = [math.factorial(i) for i in range(n + 1)]

    def rec(i, left, counts):
        if i == n - 1:
            counts = counts + [left]
            run, lo, hi = 0, None, None
            for j, c in enumerate(counts):
                run += c
                if lo is None and run > lo_k:
                    lo = j
                if run > hi_k:
                    hi = j
                    break
            mult = fact[n]
            for c in counts:
                mult //= fact[c]
            law[(lo, hi)] = law.get((lo, hi), 0) + mult
            return
        for c in range(left + 1):
            rec(i + 1, left - c, counts + [c])

    rec(0, n, [])
    _laws[n] = {k: Fraction(v, n ** n) for k, v in law.items()}
    return _laws[n]


def index_law_cells(n):
    """the same law by the multinomial of five cells: A draws below index
    i, B on i, M strictly between i and j, D on j, E above j; the median's
    order statistics lo_k and hi_k fall on i and j when A <= lo_k < A + B
    and A + B + M <= hi_k < A + B + M + D (for i = j both in [A, A + B))"""
    lo_k, hi_k = (n - 1) // 2, n // 2
    f = [math.factorial(t) for t in range(n + 1)]
    law = {}
    for i in range(n):
        for j in range(i, n):
            tot = 0
            for a in range(lo_k + 1):
                for b in range(max(1, lo_k + 1 - a), n - a + 1):
                    if i == j:
                        if hi_k >= a + b:
                            continue
                        e = n - a - b
                        if i == n - 1 and e:
                            continue
                        tot += f[n] // (f[a] * f[b] * f[e]) * i ** a * (n - i - 1) ** e
                        continue
                    for m in range(n - a - b + 1):
                        if a + b + m > hi_k:
                            break
                        for d in range(max(1, hi_k + 1 - a - b - m), n - a - b - m + 1):
                            e = n - a - b - m - d
                            tot += (f[n] // (f[a] * f[b] * f[m] * f[d] * f[e]) *
                                    i ** a * (j - i - 1) ** m * (n - j - 1) ** e)
            if tot:
                law[(i, j)] = Fraction(tot, n ** n)
    return law


def value_law(x):
    """{median value: probability} for the values x"""
    x = sorted(float(v) for v in x)
    out = {}
    for (i, j), p in index_law(len(x)).items():
        v = (x[i] + x[j]) / 2
        out[v] = out.get(v, 0) + p
    return out


def diff_law(a, b):
    """(sorted values of median(b*) - median(a*), P(D < v), P(D <= v))"""
    la, lb = value_law(a), value_law(b)
    d = {}
    for vb, pb in lb.items():
        for va, pa in la.items():
            d[vb - va] = d.get(vb - va, 0) + pa * pb
    keys = sorted(d)
    below, upto, c = [], [], Fraction(0)
    for k in keys:
        below.append(c)
        c += d[k]
        upto.append(c)
    return keys, below, upto


def interval(a, b, alpha=Fraction(1, 40)):
    """the percentile interval: the smallest v with P(D <= v) >= alpha, the
    largest with P(D >= v) >= alpha; with each the list of values whose
    tail lies within 1e-12 of alpha (a double's sum cannot tell them apart
    from the answer)"""
    keys, below, upto = diff_law(a, b)
    tol = Fraction(1, 10 ** 12)
    lo = next(k for k, u in zip(keys, upto) if u >= alpha)
    hi = next(k for k, b_ in zip(reversed(keys), reversed(below)) if 1 - b_ >= alpha)
    near_lo = [k for k, b_, u in zip(keys, below, upto) if abs(u - alpha) <= tol or abs(b_ - alpha) <= tol]
    near_hi = [k for k, b_, u in zip(keys, below, upto) if abs(1 - b_ - alpha) <= tol or abs(1 - u - alpha) <= tol]
    return lo, hi, near_lo, near_hi
