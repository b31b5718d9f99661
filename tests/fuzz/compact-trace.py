#!/usr/bin/env python3
# compact-trace.py DIR — for every DIR/*.trace (an exact trace), write
# DIR/small-NAME.trace: the same records with each maps record cut down to
# its executable mappings. Seeds for tests/fuzz/fuzz_trace.c, so that
# mutations land on events and record headers more often than on maps text.
import glob, os, struct, sys

for f in glob.glob(os.path.join(sys.argv[1], '*.trace')):
    if os.path.basename(f).startswith('small-'):
        continue
    b, out, off = open(f, 'rb').read(), b'', 0
    while off + 24 <= len(b):
        m, t, v, sz, tid, sess = struct.unpack_from('<IHHIIQ', b, off)
        if sz < 24 or off + sz > len(b):
            break
        rec = b[off:off + sz]
        if t == 2:   # PTR_MAPS: u64 ts, then /proc/self/maps text
            lines = [l for l in rec[32:].split(b'\n') if len(l.split()) > 1 and b'x' in l.split()[1]]
            pl = rec[24:32] + b''.join(l + b'\n' for l in lines)
            rec = struct.pack('<IHHIIQ', m, t, v, 24 + len(pl), tid, sess) + pl
        out += rec
        off += sz
    open(os.path.join(os.path.dirname(f), 'small-' + os.path.basename(f)), 'wb').write(out)
