#!/usr/bin/env python3
"""gen-folded.py — a large synthetic profile as folded stacks, for
bench/pprof.sh (converted to pprof by proff convert):
    gen-folded.py STACKS FUNCTIONS SEED > big.folded
STACKS distinct stacks (lines) of depth 6-40 over FUNCTIONS functions, each
with a count of 1-50 samples; a few threads. Call paths share prefixes the
way programs' do: each frame is mostly one of a few callees of the frame
above it (a fixed random call graph), rarely any function; every function
appears (the profile has FUNCTIONS locations)."""
import random
import sys

n, nf, seed = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
names = ['fn_%05d_%s' % (i, rng.choice(['parse', 'eval', 'emit', 'hash', 'scan', 'copy', 'lock', 'send']))
         for i in range(nf)]
callees = [[rng.randrange(nf) for _ in range(3)] for _ in range(nf)]
roots = [rng.randrange(nf) for _ in range(16)]
threads = ['server-%d/%d' % (1000, 1000 + t) for t in range(8)]
seen = set()
out = sys.stdout
for i in range(nf):      # every function once, under a root
    out.write('%s;%s;%s 1\n' % (threads[0], names[roots[0]], names[i]))
    seen.add((0, roots[0], i))
while len(seen) < n:
    depth = rng.randint(6, 40)
    f = rng.choice(roots)
    st = [f]
    for _ in range(depth - 1):
        f = rng.choice(callees[f]) if rng.random() < 0.97 else rng.randrange(nf)
        st.append(f)
    key = (rng.randrange(len(threads)),) + tuple(st)
    if key in seen:
        continue
    seen.add(key)
    out.write('%s;%s %d\n' % (threads[key[0]], ';'.join(names[x] for x in st), rng.randint(1, 50)))
