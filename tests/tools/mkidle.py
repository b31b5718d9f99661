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
import struct
import sys

CONTEXT_MAX = 0xfffffffffffff001
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    [1 << i for i in range(10)]
S_IDENTIFIER = 1 << 16
KNOWN = S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | S_IDENTIFIER
MISC_KERNEL = 1


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__.split('\n\n')[1])
    init = [int(a, 16) for a in sys.argv[3:]]
    buf = bytearray(open(sys.argv[1], 'rb').read())
    if buf[:8] != b'PERFILE2':
        sys.exit('mkidle: %s: not a little-endian perf.data file' % sys.argv[1])
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    types = set()
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        types.add(struct.unpack_from('<Q', buf, a + 24)[0])
    if len(types) != 1:
        sys.exit('mkidle: one sample_type expected, found %d' % len(types))
    st = types.pop()
    if st & ~KNOWN or not st & S_CALLCHAIN or not st & S_TID:
        sys.exit('mkidle: sample_type %#x not supported' % st)
    tid_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP)).count('1')
    cc_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                               S_STREAM_ID | S_CPU | S_PERIOD)).count('1')
    pos, end = data_off, data_off + data_size
    nk = changed = 0
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            sys.exit('mkidle: record size %d at offset %d' % (size, pos))
        if typ == 9 and misc & 7 == MISC_KERNEL:
            nk += 1
            if nk % 2 == 0:
                struct.pack_into('<II', buf, pos + tid_pos, 0, 0)
                nr, = struct.unpack_from('<Q', buf, pos + cc_pos)
                cc = list(struct.unpack_from('<%dQ' % nr, buf, pos + cc_pos + 8))
                # the kernel part: from the first context word to the next one
                k = [i for i in range(1, nr) if cc[i] < CONTEXT_MAX]
                kend = 1
                while kend < nr and cc[kend] < CONTEXT_MAX:
                    kend += 1
                if init and kend - 1 > len(init) + 1:
                    for j, a in enumerate(reversed(init)):
                        cc[kend - 1 - j] = a
                    struct.pack_into('<%dQ' % nr, buf, pos + cc_pos + 8, *cc)
                changed += 1
        pos += size
    if not changed:
        sys.exit('mkidle: no kernel-mode sample to rewrite')
    open(sys.argv[2], 'wb').write(buf)


main()
