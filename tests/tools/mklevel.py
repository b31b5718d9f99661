#!/usr/bin/env python3
"""mklevel.py - one unmapped address met first in kernel, then in user context.

Usage: mklevel.py IN OUT

IN: a file-mode, little-endian, uncompressed perf.data recorded with -g
(e.g. `perf record -e cpu-clock -g`). OUT is the same file with two of its
samples rewritten in place (same sizes, so every offset stays valid):

  A, the first sample with a callchain of at least three entries: a kernel
    sample (misc KERNEL) whose ip and every frame are X = 0x1234, an address
    no map covers;
  B, the last such sample: a user sample (misc USER) at ip X whose callers
    are G = 0xdfdfdfdf00000000, another unmapped address.

perf prints a row's level ([k] or [.]) from the sample that created it, and
a callchain entry without a map keeps the level of the sample (its cpumode),
not of the address: so G's Children row is [.] although X was first met in
kernel context. Python 3 standard library.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import PerfData, S_CALLCHAIN, S_IP, MISC_KERNEL, MISC_USER, CONTEXT_KERNEL, CONTEXT_USER  # noqa: E402

X, G = 0x1234, 0xdfdfdfdf00000000


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    pd = PerfData(sys.argv[1], 'mklevel', S_CALLCHAIN | S_IP)
    picks = []
    for pos, misc in pd.samples():
        nr, = struct.unpack_from('<Q', pd.buf, pos + pd.cc_pos)
        if nr >= 3:
            picks.append((pos, misc, nr))
    if len(picks) < 2:
        sys.exit('mklevel: fewer than two samples with three callchain entries')

    def rewrite(rec, mode, ip, context, frames):
        pos, old_misc, nr = rec
        struct.pack_into('<H', pd.buf, pos + 4, (old_misc & ~7) | mode)
        struct.pack_into('<Q', pd.buf, pos + pd.ip_pos, ip)
        chain = [context] + frames + [frames[-1]] * (nr - 1 - len(frames))
        pd.set_chain(pos, chain[:nr])

    rewrite(picks[0], MISC_KERNEL, X, CONTEXT_KERNEL, [X])
    rewrite(picks[-1], MISC_USER, X, CONTEXT_USER, [X, G])
    pd.write(sys.argv[2])


main()
