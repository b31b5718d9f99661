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
import struct
import sys

CONTEXT_USER = 0xfffffffffffffe00
MISC_USER = 2
NOMAP = 0x1000
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    [1 << i for i in range(10)]
S_IDENTIFIER = 1 << 16
KNOWN = S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | S_IDENTIFIER


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__.split('\n\n')[1])
    want = int(sys.argv[3]) if len(sys.argv) == 4 else 5
    buf = bytearray(open(sys.argv[1], 'rb').read())
    if buf[:8] != b'PERFILE2':
        sys.exit('mknomap: %s: not a little-endian perf.data file' % sys.argv[1])
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    types = set()
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        types.add(struct.unpack_from('<Q', buf, a + 24)[0])   # perf_event_attr.sample_type
    if len(types) != 1:
        sys.exit('mknomap: one sample_type expected, found %d' % len(types))
    st = types.pop()
    if st & ~KNOWN or not st & S_CALLCHAIN or not st & S_IP:
        sys.exit('mknomap: sample_type %#x not supported' % st)
    cc_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                               S_STREAM_ID | S_CPU | S_PERIOD)).count('1')
    done = 0
    pos, end = data_off, data_off + data_size
    while pos + 8 <= end and done < want:
        typ, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            sys.exit('mknomap: record size %d at offset %d' % (size, pos))
        if typ == 9 and misc & 7 == MISC_USER:
            nr, = struct.unpack_from('<Q', buf, pos + cc_pos)
            chain = struct.unpack_from('<%dQ' % nr, buf, pos + cc_pos + 8)
            if nr >= 4 and chain[0] == CONTEXT_USER and all(x < CONTEXT_USER for x in chain[1:]):
                struct.pack_into('<Q', buf, pos + cc_pos + 8 * nr, NOMAP)
                done += 1
        pos += size
    if done < want:
        sys.exit('mknomap: %d user samples with three callers, %d wanted' % (done, want))
    open(sys.argv[2], 'wb').write(buf)


main()
