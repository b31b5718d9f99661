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
import struct
import sys

CONTEXT_KERNEL = 0xffffffffffffff80
CONTEXT_USER = 0xfffffffffffffe00
MISC_KERNEL, MISC_USER = 1, 2
X, G = 0x1234, 0xdfdfdfdf00000000
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    [1 << i for i in range(10)]
S_IDENTIFIER = 1 << 16
KNOWN = S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | S_IDENTIFIER


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.split('\n\n')[1])
    buf = bytearray(open(sys.argv[1], 'rb').read())
    if buf[:8] != b'PERFILE2':
        sys.exit('mklevel: %s: not a little-endian perf.data file' % sys.argv[1])
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    types = set()
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        types.add(struct.unpack_from('<Q', buf, a + 24)[0])   # perf_event_attr.sample_type
    if len(types) != 1:
        sys.exit('mklevel: one sample_type expected, found %d' % len(types))
    st = types.pop()
    if st & ~KNOWN or not st & S_CALLCHAIN or not st & S_IP:
        sys.exit('mklevel: sample_type %#x not supported' % st)
    cc_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                               S_STREAM_ID | S_CPU | S_PERIOD)).count('1')
    ip_pos = 8 + (8 if st & S_IDENTIFIER else 0)
    picks = []
    pos, end = data_off, data_off + data_size
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            sys.exit('mklevel: record size %d at offset %d' % (size, pos))
        if typ == 9:
            nr, = struct.unpack_from('<Q', buf, pos + cc_pos)
            if nr >= 3:
                picks.append((pos, misc, nr))
        pos += size
    if len(picks) < 2:
        sys.exit('mklevel: fewer than two samples with three callchain entries')

    def rewrite(rec, misc, mode, ip, context, frames):
        pos, old_misc, nr = rec
        struct.pack_into('<H', buf, pos + 4, (old_misc & ~7) | mode)
        struct.pack_into('<Q', buf, pos + ip_pos, ip)
        chain = [context] + frames + [frames[-1]] * (nr - 1 - len(frames))
        struct.pack_into('<%dQ' % nr, buf, pos + cc_pos + 8, *chain[:nr])

    rewrite(picks[0], picks[0][1], MISC_KERNEL, X, CONTEXT_KERNEL, [X])
    rewrite(picks[-1], picks[-1][1], MISC_USER, X, CONTEXT_USER, [X, G])
    open(sys.argv[2], 'wb').write(buf)


main()
