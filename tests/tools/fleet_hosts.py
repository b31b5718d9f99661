#!/usr/bin/env python3
"""fleet_hosts.py — a simulated fleet for the store tests and the bench: per
host, a folded-stacks profile resampled from a real recording's folded stacks.

    fleet_hosts.py SRC.folded OUTDIR PREFIX NHOSTS SAMPLES SEED [SCALE_FRAME FACTOR]

Each host draws SAMPLES samples (multinomial, weights = the source's counts,
the stacks through SCALE_FRAME scaled by FACTOR: a planted change that also
makes the run longer, so such a host draws SAMPLES times the longer total
over the source's), each
sample worth the source's mean period; a host's speed varies a little (its
periods times a factor around 1), as machines of one fleet do. Writes
OUTDIR/PREFIX-NNNN.folded, one file per host.
"""
import random
import sys


def main():
    src, outdir, prefix = sys.argv[1:4]
    nhosts, nsamples, seed = int(sys.argv[4]), int(sys.argv[5]), int(sys.argv[6])
    scale_frame = sys.argv[7] if len(sys.argv) > 7 else None
    factor = float(sys.argv[8]) if len(sys.argv) > 8 else 1.0
    stacks, weights, orig = [], [], 0.0
    for line in open(src):
        line = line.rstrip("\n")
        if not line:
            continue
        stack, count = line.rsplit(" ", 1)
        w = float(count)
        orig += w
        if scale_frame and scale_frame in stack.split(";"):
            w *= factor
        stacks.append(stack)
        weights.append(w)
    total = sum(weights)
    # the planted change makes the run longer: more samples at the same rate
    nsamples = int(round(nsamples * total / orig))
    unit = 1000000  # a sample's period: 1 ms of cpu-clock
    rng = random.Random(seed)
    cum, acc = [], 0.0
    for w in weights:
        acc += w / total
        cum.append(acc)
    import bisect
    for h in range(nhosts):
        counts = {}
        speed = rng.gauss(1.0, 0.02)
        for _ in range(nsamples):
            i = min(bisect.bisect_left(cum, rng.random()), len(stacks) - 1)
            counts[i] = counts.get(i, 0) + 1
        with open("%s/%s-%04d.folded" % (outdir, prefix, h), "w") as f:
            for i in sorted(counts):
                f.write("%s %d\n" % (stacks[i], int(counts[i] * unit * speed)))


if __name__ == "__main__":
    main()
