"""pdfile.py - the perf.data layout the fixture rewriters share (mklevel.py,
mkidle.py, mknomap.py): a file-mode, little-endian, uncompressed perf.data
with one sample_type, its records walked in place. Python 3 standard library.
"""
import struct
import sys

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    [1 << i for i in range(10)]
S_IDENTIFIER = 1 << 16
KNOWN = S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | S_IDENTIFIER
RECORD_SAMPLE = 9
MISC_KERNEL, MISC_USER = 1, 2
CONTEXT_KERNEL = 0xffffffffffffff80
CONTEXT_USER = 0xfffffffffffffe00
CONTEXT_MAX = 0xfffffffffffff001


class PerfData:
    """The file's bytes (buf, to rewrite in place), its sample_type (st) and
    the offsets in a sample record of its ip, tid and callchain."""

    def __init__(self, path, tool, need):
        self.tool = tool
        self.buf = bytearray(open(path, 'rb').read())
        if self.buf[:8] != b'PERFILE2':
            sys.exit('%s: %s: not a little-endian perf.data file' % (tool, path))
        attr_size, = struct.unpack_from('<Q', self.buf, 16)
        attrs_off, attrs_size, self.data_off, self.data_size = struct.unpack_from('<4Q', self.buf, 24)
        types = set()
        for a in range(attrs_off, attrs_off + attrs_size, attr_size):
            types.add(struct.unpack_from('<Q', self.buf, a + 24)[0])   # perf_event_attr.sample_type
        if len(types) != 1:
            sys.exit('%s: one sample_type expected, found %d' % (tool, len(types)))
        st = self.st = types.pop()
        if st & ~KNOWN or (st & need) != need:
            sys.exit('%s: sample_type %#x not supported' % (tool, st))
        self.ip_pos = 8 + (8 if st & S_IDENTIFIER else 0)
        self.tid_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP)).count('1')
        self.cc_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                                        S_STREAM_ID | S_CPU | S_PERIOD)).count('1')

    def samples(self):
        """(offset, misc) of each sample record, in the file's order"""
        pos, end = self.data_off, self.data_off + self.data_size
        while pos + 8 <= end:
            typ, misc, size = struct.unpack_from('<IHH', self.buf, pos)
            if size < 8:
                sys.exit('%s: record size %d at offset %d' % (self.tool, size, pos))
            if typ == RECORD_SAMPLE:
                yield pos, misc
            pos += size

    def chain(self, pos):
        """the callchain of the sample at pos, context words included"""
        nr, = struct.unpack_from('<Q', self.buf, pos + self.cc_pos)
        return list(struct.unpack_from('<%dQ' % nr, self.buf, pos + self.cc_pos + 8))

    def set_chain(self, pos, cc):
        """the callchain rewritten in place (the same length)"""
        struct.pack_into('<%dQ' % len(cc), self.buf, pos + self.cc_pos + 8, *cc)

    def write(self, path):
        open(path, 'wb').write(self.buf)
