#!/usr/bin/env python3
"""mkbranch.py - add synthetic branch stacks (with cycles) to a perf.data file.

Usage: mkbranch.py IN OUT [--seed N] [--cycles-scale X] [--flags-mix] [--types]

IN: a file-mode, little-endian, uncompressed perf.data recorded with -g
(e.g. `perf record -e cpu-clock -g`). OUT is the same file as if recorded with
`perf record -b`: PERF_SAMPLE_BRANCH_STACK in every attr's sample_type,
branch_sample_type ANY, a branch stack in every sample (after the callchain,
newest entry first, {from, to, flags} with the cycle count in flags bits
4-19), and the HEADER_BRANCH_STACK feature bit (empty section; the feature
table after the data section is rebuilt and its payloads moved).

The branches are plausible, not exact: each one jumps near a frame of the
program itself (below 0x700000000000, not the shared libraries) in the
sample's callchain (leaf first), with repeats so that perf's loop removal
has work; cycles are a deterministic function of the seed and the addresses,
so proff and perf read exactly the same input and tests can recompute every
expected value from `perf script -F brstacksym`. --flags-mix: some branches
mispredicted (about 1 in 5), some aborted (1 in 11), the rest predicted, by
the same hash; --types: branch types recorded (conditional, unconditional,
indirect, call, return, by the same hash). Python 3 standard library.
"""
import hashlib
import struct
import sys

PERF_MAGIC = b'PERFILE2'
S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, \
    S_STREAM_ID, S_RAW, S_BRANCH_STACK = [1 << i for i in range(12)]
S_IDENTIFIER = 1 << 16
BRANCH_ANY = 1 << 3
FEAT_BRANCH_STACK = 15
REC_SAMPLE = 9
CTX_USER = (1 << 64) - 512
CTX_MAX = (1 << 64) - 4095


def die(msg):
    sys.stderr.write('mkbranch: error: %s\n' % msg)
    sys.exit(1)


def h64(*vals):
    d = hashlib.blake2b(digest_size=8)
    for v in vals:
        d.update(struct.pack('<Q', v & ((1 << 64) - 1)))
    return struct.unpack('<Q', d.digest())[0]


def branches_for(ips, seed, scale, mix=False, types=False):
    """ips: the callchain; returns [(from, to, flags)] newest first."""
    user = []
    seen_user = False
    for ip in ips:
        if ip >= CTX_MAX:
            seen_user = ip == CTX_USER
            continue
        if seen_user and 0x10000 <= ip < 0x700000000000:   # the program, not the libraries
            user.append(ip)
    if not user:
        return []
    # the path depends on the addresses only; the seed changes the cycles.
    # Enough entries that perf's callchain part (shortened by the number of
    # entries kept) never reaches the libc start-up frames.
    n = 24 + h64(user[0]) % 8
    out = []
    for i in range(n):
        f = min(i // 8, len(user) - 1)
        base = user[f]
        k = h64(base, i // 2)                # pairs of equal entries: loops
        frm = base + (k % 24)
        to = base - 8 - (k >> 8) % 40
        cycles = 1 + int((h64(seed, frm, i) % 40) * scale)
        cycles = max(1, min(cycles, 0xffff))
        flags = (cycles << 4) | 2
        if mix:
            r = h64(seed, to, i, 7)
            if r % 5 == 0:
                flags = (flags & ~2) | 1                 # mispredicted
            if r % 11 == 0:
                flags |= 8                               # aborted
        if types:   # COND, UNCOND, IND, CALL, RET (PERF_BR_*), by the same hash
            flags |= (1, 1, 2, 3, 4, 6)[h64(seed, frm, to, 3) % 6] << 20
        out.append((frm, to, flags))
    return out


def main(argv):
    args = argv[1:]
    seed, scale, mix, types = 1, 1.0, False, False
    pos = []
    i = 0
    while i < len(args):
        if args[i] == '--seed':
            seed = int(args[i + 1]); i += 2
        elif args[i] == '--cycles-scale':
            scale = float(args[i + 1]); i += 2
        elif args[i] == '--flags-mix':
            mix = True; i += 1
        elif args[i] == '--types':
            types = True; i += 1
        else:
            pos.append(args[i]); i += 1
    if len(pos) != 2:
        die('usage: mkbranch.py IN OUT [--seed N] [--cycles-scale X] [--flags-mix] [--types]')
    buf = bytearray(open(pos[0], 'rb').read())
    if buf[:8] != PERF_MAGIC:
        die('%s: not a little-endian file-mode perf.data' % pos[0])
    hsize, attr_size = struct.unpack_from('<QQ', buf, 8)
    a_off, a_size, d_off, d_size = struct.unpack_from('<QQQQ', buf, 24)
    feats = list(struct.unpack_from('<4Q', buf, 72))
    if a_size % attr_size:
        die('attr section size')
    stypes = []
    for off in range(a_off, a_off + a_size, attr_size):
        st = struct.unpack_from('<Q', buf, off + 24)[0]
        if st & (S_READ | S_RAW):
            die('READ/RAW samples are not handled')
        if st & S_BRANCH_STACK:
            die('already has branch stacks')
        stypes.append(st)
        struct.pack_into('<Q', buf, off + 24, st | S_BRANCH_STACK)
        struct.pack_into('<Q', buf, off + 72, BRANCH_ANY)
    if len(set(stypes)) != 1:
        die('events with different sample_type are not handled')
    st = stypes[0]
    # feature table and payloads
    bits = [b for b in range(256) if feats[b // 64] >> (b % 64) & 1]
    tab = d_off + d_size
    sections = {}
    for n, b in enumerate(bits):
        o, s = struct.unpack_from('<QQ', buf, tab + 16 * n)
        sections[b] = bytes(buf[o:o + s])
    # data records
    out = bytearray()
    p, end = d_off, d_off + d_size
    while p < end:
        rtype, misc, size = struct.unpack_from('<IHH', buf, p)
        if size < 8 or p + size > end:
            die('bad record at %d' % p)
        rec = bytes(buf[p:p + size])
        if rtype == REC_SAMPLE:
            q = 8
            for bit, width in ((S_IDENTIFIER, 8), (S_IP, 8), (S_TID, 8), (S_TIME, 8), (S_ADDR, 8),
                               (S_ID, 8), (S_STREAM_ID, 8), (S_CPU, 8), (S_PERIOD, 8)):
                if st & bit:
                    q += width
            ips = []
            if st & S_CALLCHAIN:
                nr = struct.unpack_from('<Q', rec, q)[0]
                ips = list(struct.unpack_from('<%dQ' % nr, rec, q + 8))
                q += 8 + 8 * nr
            br = branches_for(ips, seed, scale, mix, types)
            blob = struct.pack('<Q', len(br)) + b''.join(struct.pack('<QQQ', *e) for e in br)
            rec = rec[:q] + blob + rec[q:]
            if len(rec) > 0xffff:
                die('record too large')
            rec = rec[:6] + struct.pack('<H', len(rec)) + rec[8:]
        out += rec
        p += size
    new_d_size = len(out)
    feats[FEAT_BRANCH_STACK // 64] |= 1 << (FEAT_BRANCH_STACK % 64)
    sections[FEAT_BRANCH_STACK] = b''
    bits = sorted(sections)
    body = bytearray(buf[:d_off]) + out
    tab = len(body)
    payload_at = tab + 16 * len(bits)
    table = bytearray()
    payloads = bytearray()
    for b in bits:
        table += struct.pack('<QQ', payload_at + len(payloads), len(sections[b]))
        payloads += sections[b]
    body += table + payloads
    struct.pack_into('<QQ', body, 40, d_off, new_d_size)
    struct.pack_into('<4Q', body, 72, *feats)
    open(pos[1], 'wb').write(body)


if __name__ == '__main__':
    main(sys.argv)
