#!/usr/bin/env python3
"""mkidle.py - samples of the idle task (pid 0), as `perf record -a` has them.

Usage: mkidle.py IN OUT [INIT_ADDR...]

IN: a file-mode, little-endian, uncompressed perf.data recorded with -g
(e.g. `perf record -e cpu-clock -g`). OUT is the same file with every other
kernel-mode sample (cpumode KERNEL) rewritten in place as the idle task's:
pid and tid 0 (a busy test machine seldom has idle samples of its own).
Each INIT_ADDR (hex, kernel addresses outside the recorded kernel map, such
as the .init.text symbols start_kernel and x86_64_start_kernel an idle CPU's
chain ends in) replaces one of the outermost kernel frames of those samples'
callchains, outermost last. Sizes stay the same, so every offset stays
valid. Python 3 standard library.
"""
import os
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pdfile import PerfData, S_CALLCHAIN, S_TID, MISC_KERNEL, CONTEXT_MAX  # noqa: E402


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    init = [int(a, 16) for a in sys.argv[3:]]
    pd = PerfData(sys.argv[1], 'mkidle', S_CALLCHAIN | S_TID)
    nk = changed = 0
    for pos, misc in pd.samples():
        if misc & 7 != MISC_KERNEL:
            continue
        nk += 1
        if nk % 2:
            continue
        struct.pack_into('<II', pd.buf, pos + pd.tid_pos, 0, 0)
        cc = pd.chain(pos)
        nr = len(cc)
        # the kernel part: from the first context word to the next one
        kend = 1
        while kend < nr and cc[kend] < CONTEXT_MAX:
            kend += 1
        if init and kend - 1 > len(init) + 1:
            for j, a in enumerate(reversed(init)):
                cc[kend - 1 - j] = a
            pd.set_chain(pos, cc)
        changed += 1
    if not changed:
        sys.exit('mkidle: no kernel-mode sample to rewrite')
    pd.write(sys.argv[2])


main()
