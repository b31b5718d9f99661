#!/usr/bin/env python3
"""mknomap.py - user samples whose outermost caller is an address no map covers.

Usage: mknomap.py IN OUT [N]

IN: a file-mode, little-endian, uncompressed perf.data recorded with -g
(`proff record -g` or `perf record -g`). OUT is the same file with the first
N (default 5) user samples of at least three user callchain entries rewritten
in place (same sizes, so every offset stays valid): their last callchain entry
becomes NOMAP = 0x1000, an address below every map of a PIE process.

A program without symbols then has samples with both kinds of unresolved
frame: frames in a map (its own code) and a frame in no map. A diff by
symbol alone makes all of them one row, and that row's Children must count
each such sample once. Python 3 standard library.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import PerfData, S_CALLCHAIN, S_IP, MISC_USER, CONTEXT_USER  # noqa: E402

NOMAP = 0x1000


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split('\n\n')[1])
    want = int(sys.argv[3]) if len(sys.argv) == 4 else 5
    pd = PerfData(sys.argv[1], 'mknomap', S_CALLCHAIN | S_IP)
    done = 0
    for pos, misc in pd.samples():
        if done == want:
            break
        cc = pd.chain(pos) if misc & 7 == MISC_USER else []
        if len(cc) >= 4 and cc[0] == CONTEXT_USER and all(x < CONTEXT_USER for x in cc[1:]):
            cc[-1] = NOMAP
            pd.set_chain(pos, cc)
            done += 1
    if done < want:
        sys.exit('mknomap: %d user samples with three callers, %d wanted' % (done, want))
    pd.write(sys.argv[2])


main()
