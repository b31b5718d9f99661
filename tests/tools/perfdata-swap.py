#!/usr/bin/env python3
"""perfdata-swap.py IN OUT — convert a little-endian perf.data (file mode) to
big-endian, field by field, the way a big-endian host would have written it:
every u16/u32/u64 byte-swapped, the perf_event_attr bitfield word (and
branch-entry flags) with its bits reversed in each byte, strings and byte
arrays untouched. Used to test the reader's other-endian path (it must decode
the same events from both files). Independent of the C reader on purpose.

Handles the records and features perf 6.1 writes for software-event
recordings (samples with IP/TID/TIME/ADDR/ID/STREAM_ID/CPU/PERIOD/READ/
CALLCHAIN/IDENTIFIER/DATA_SRC, side-band records, ID_INDEX, EVENT_UPDATE,
THREAD_MAP, CPU_MAP, and the usual features); anything else is an error.
"""
import struct, sys

def u(fmt, b, o): return struct.unpack_from('<' + fmt, b, o)
class Out:
    def __init__(s, n): s.b = bytearray(n)
    def put(s, fmt, o, *v): struct.pack_into('>' + fmt, s.b, o, *v)
    def raw(s, o, data): s.b[o:o + len(data)] = data
def revbits(x): return int('{:08b}'.format(x)[::-1], 2)

def swap_attr(src, o, out, size):
    """perf_event_attr at o (size bytes)."""
    out.raw(o, src[o:o + size])
    layout = [(0, 'I'), (4, 'I'), (8, 'Q'), (16, 'Q'), (24, 'Q'), (32, 'Q'), (48, 'I'), (52, 'I'), (56, 'Q'),
              (64, 'Q'), (72, 'Q'), (80, 'Q'), (88, 'I'), (92, 'i'), (96, 'Q'), (104, 'I'), (108, 'H'),
              (110, 'H'), (112, 'I'), (116, 'I'), (120, 'Q'), (128, 'Q')]
    for off, f in layout:
        if off + struct.calcsize(f) <= size:
            out.put(f, o + off, *u(f, src, o + off))
    for i in range(8):   # flags bitfield: same bytes, bit order reversed in each byte
        out.b[o + 40 + i] = revbits(src[o + 40 + i])

def main(inp, outp):
    b = open(inp, 'rb').read()
    if b[:8] != b'PERFILE2' or u('Q', b, 8)[0] != 104:
        sys.exit('perfdata-swap: %s: not a little-endian file-mode perf.data' % inp)
    out = Out(len(b)); out.raw(0, b)
    out.put('Q', 0, u('Q', b, 0)[0])
    for i in range(1, 13): out.put('Q', 8 * i, u('Q', b, 8 * i)[0])
    attr_size, a_off, a_sz, d_off, d_sz = u('5Q', b, 16)
    feats = int.from_bytes(b[72:104], 'little')
    attrs = []
    for i in range(a_sz // attr_size):
        o = a_off + i * attr_size
        asz = u('I', b, o + 4)[0] or 64
        swap_attr(b, o, out, asz)
        ids_off, ids_sz = u('QQ', b, o + asz)
        out.put('QQ', o + asz, ids_off, ids_sz)
        for k in range(ids_sz // 8): out.put('Q', ids_off + 8 * k, *u('Q', b, ids_off + 8 * k))
        st, = u('Q', b, o + 24); rf, = u('Q', b, o + 32); fl, = u('Q', b, o + 40)
        attrs.append((st, rf, fl >> 18 & 1, [u('Q', b, ids_off + 8 * k)[0] for k in range(ids_sz // 8)]))
    st, rf, sid_all, _ = attrs[0]
    def q(o, n=1):
        for k in range(n): out.put('Q', o + 8 * k, *u('Q', b, o + 8 * k))
    def d(o, n=1):
        for k in range(n): out.put('I', o + 4 * k, *u('I', b, o + 4 * k))
    def trailer(o, size):
        n = sum(1 for bit in (1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16) if st & bit)
        p = o + size - 8 * n
        for bit in (1 << 1, 1 << 2, 1 << 6, 1 << 9, 1 << 7, 1 << 16):
            if st & bit:
                if bit in (1 << 1, 1 << 7): d(p, 2)
                else: q(p)
                p += 8
    def sample(o, size):
        p = o + 8
        for bit in range(0, 25):
            if not st & (1 << bit) and not (bit == 16 and False): continue
        order = [16, 0, 1, 2, 3, 6, 9, 7, 8, 4, 5, 15]
        for bit in [16, 0, 1, 2, 3, 6, 9, 7, 8, 4, 5]:
            if not st & (1 << bit): continue
            if bit in (1, 7): d(p, 2); p += 8
            elif bit == 4:   # READ
                if rf & 8:
                    nr, = u('Q', b, p); n = 1 + (rf & 1 != 0) + (rf & 2 != 0) + nr * (1 + (rf & 4 != 0) + (rf & 16 != 0))
                else:
                    n = 1 + sum(1 for m in (1, 2, 4, 16) if rf & m)
                q(p, n); p += 8 * n
            elif bit == 5:   # CALLCHAIN
                nr, = u('Q', b, p); q(p, nr + 1); p += 8 * (nr + 1)
            else: q(p); p += 8
        rest = st & ~sum(1 << x for x in [16, 0, 1, 2, 3, 6, 9, 7, 8, 4, 5, 15])
        if rest: sys.exit('perfdata-swap: unsupported sample_type bits 0x%x' % rest)
        if st & (1 << 15): q(p); p += 8
    pos, end = d_off, d_off + d_sz
    while pos + 8 <= end:
        t, m, s = u('IHH', b, pos)
        out.put('IHH', pos, t, m, s)
        if s < 8: sys.exit('perfdata-swap: bad record at %d' % pos)
        o = pos + 8
        if t == 9: sample(pos, s)
        elif t in (1, 10):
            d(o, 2); q(o + 8, 3)
            if t == 10:
                if not m & (1 << 14): d(o + 32, 2); q(o + 40, 2)
                d(o + 56, 2)
        elif t == 3: d(o, 2)
        elif t in (4, 7): d(o, 4); q(o + 16)
        elif t == 2: q(o, 2)
        elif t == 13: q(o)
        elif t in (5, 6): q(o, 3)
        elif t == 69: q(o, (s - 8) // 8)
        elif t == 78:
            q(o, 2); ut, = u('Q', b, o)
            if ut == 2: q(o + 16)
            elif ut == 4: sys.exit('perfdata-swap: EVENT_UPDATE CPUS not supported')
        elif t == 73:
            q(o); nr, = u('Q', b, o)
            for k in range(nr): q(o + 8 + 24 * k)
        elif t == 74:
            ty, = u('H', b, o); out.put('H', o, ty)
            if ty == 0:
                nr, = u('H', b, o + 2); out.put('H', o + 2, nr)
                for k in range(nr): out.put('H', o + 4 + 2 * k, *u('H', b, o + 4 + 2 * k))
            elif ty == 2: out.put('HH', o + 4, *u('HH', b, o + 4))
            else: sys.exit('perfdata-swap: CPU_MAP mask form not supported')
        elif t in (68, 82): pass
        elif t == 79: q(o, min(5, (s - 8) // 8))
        else: sys.exit('perfdata-swap: record type %d not supported' % t)
        if t < 64 and t != 9 and sid_all: trailer(pos, s)
        pos += s
    # feature table + features
    tab = d_off + d_sz
    bits = [i for i in range(256) if feats >> i & 1]
    for j, f in enumerate(bits):
        fo, fs = u('QQ', b, tab + 16 * j); out.put('QQ', tab + 16 * j, fo, fs)
        p = fo
        def string(p):
            n, = u('I', b, p); out.put('I', p, n); return p + 4 + n
        def strlist(p):
            n, = u('I', b, p); out.put('I', p, n); p += 4
            for _ in range(n): p = string(p)
            return p, n
        if f == 2:
            while p < fo + fs:
                t, m, s = u('IHH', b, p); out.put('IHH', p, t, m, s); d(p + 8); p += s
        elif f in (3, 4, 5, 6, 8, 9): string(p)
        elif f == 7: d(p, 2)
        elif f in (10, 23, 24): q(p)
        elif f == 11: strlist(p)
        elif f == 12:
            nr, asz = u('II', b, p); d(p, 2); p += 8
            for _ in range(nr):
                swap_attr(b, p, out, asz); p += asz
                nid, = u('I', b, p); d(p); p = string(p + 4); q(p, nid); p += 8 * nid
        elif f == 13:
            p, _ = strlist(p); p, _ = strlist(p)
            ncpu = u('I', b, [o for (i, o) in [(k, u('QQ', b, tab + 16 * jj)[0]) for jj, k in enumerate(bits)] if i == 7][0])[0] \
                if 7 in bits else 0
            if p + 8 * ncpu <= fo + fs:
                d(p, 2 * ncpu); p += 8 * ncpu
                if p + 4 <= fo + fs:
                    p, _ = strlist(p)
                    if p + 4 * ncpu <= fo + fs: d(p, ncpu)
        elif f == 14:
            nr, = u('I', b, p); d(p); p += 4
            for _ in range(nr): d(p); q(p + 4, 2); p = string(p + 20)
        elif f == 16:
            nr, = u('I', b, p); d(p); p += 4
            for _ in range(nr): d(p); p = string(p + 4)
        elif f == 20:
            ver, cnt = u('II', b, p); d(p, 2); p += 8
            for _ in range(cnt):
                d(p, 4); p += 16
                for _ in range(3): p = string(p)
        elif f == 21: q(p, 2)
        elif f == 22: q(p, fs // 8)
        elif f in (25, 26, 31, 28):
            if fs != 4 or u('I', b, p)[0] != 0: sys.exit('perfdata-swap: non-empty feature %d not supported' % f)
            d(p)
        elif f == 27: d(p, 5)
        else: sys.exit('perfdata-swap: feature %d not supported' % f)
    open(outp, 'wb').write(out.b)

if __name__ == '__main__':
    if len(sys.argv) != 3: sys.exit('usage: perfdata-swap.py IN OUT')
    main(sys.argv[1], sys.argv[2])
