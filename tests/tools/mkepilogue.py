#!/usr/bin/env python3
"""mkepilogue.py - move `--call-graph dwarf` samples of a leaf's body to its ret.

Usage: mkepilogue.py IN OUT BINARY LEAF_ADDR LEAF_SIZE [COUNT]

IN: a file-mode, little-endian, uncompressed perf.data recorded with
`perf record --call-graph dwarf` of BINARY (tests/data/dwarf/epilogue.c),
whose function at LEAF_ADDR (hex, its file address; LEAF_SIZE bytes) is
`push %rbp; push %rbx; BODY; pop %rbx; pop %rbp; ret` with CFA = rsp + 24
in BODY. The first COUNT (default 3) samples whose ip is in BODY are
rewritten in place as if taken at the ret: ip there, rbx and rbp popped
from the stack, rsp 16 bytes up, the stack copy 16 bytes shorter (its
first 16 bytes dropped, the dynamic size less 16). At the ret the leaf's
CFI still names rbp's and rbx's save slots, now below the stack pointer,
outside the copy. Sizes stay the same. Prints the number of samples
rewritten. Python 3 standard library.
"""
import struct
import sys

S_IDENTIFIER = 1 << 16
# IP TID TIME ADDR ID STREAM_ID CPU PERIOD, in the record's order
ORDER = [1 << 0, 1 << 1, 1 << 2, 1 << 3, 1 << 6, 1 << 9, 1 << 7, 1 << 8]
S_IP, S_READ, S_CALLCHAIN, S_RAW, S_BRANCH_STACK, S_REGS_USER, S_STACK_USER = \
    1 << 0, 1 << 4, 1 << 5, 1 << 10, 1 << 11, 1 << 12, 1 << 13
R_BX, R_BP, R_SP, R_IP = 1, 6, 7, 8
MMAP2, SAMPLE = 10, 9


def fail(msg):
    sys.exit('mkepilogue: ' + msg)


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__.split('\n\n')[1])
    src, dst, binary = sys.argv[1:4]
    leaf, size = int(sys.argv[4], 16), int(sys.argv[5], 16)
    count = int(sys.argv[6]) if len(sys.argv) > 6 else 3
    body = (leaf + 2, leaf + size - 3)
    ret = leaf + size - 1
    buf = bytearray(open(src, 'rb').read())
    if buf[:8] != b'PERFILE2':
        fail('%s: not a little-endian perf.data file' % src)
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    types = set()
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        st, = struct.unpack_from('<Q', buf, a + 24)
        if st & S_STACK_USER:
            types.add((st, struct.unpack_from('<Q', buf, a + 80)[0]))
    if len(types) != 1:
        fail('one event with user stacks expected, found %d' % len(types))
    (st, regmask), = types
    if st & (S_READ | S_RAW | S_BRANCH_STACK) or not st & S_REGS_USER or not st & S_IP:
        fail('sample_type %#x not handled' % st)
    regidx = {r: bin(regmask & ((1 << r) - 1)).count('1') for r in (R_BX, R_BP, R_SP, R_IP)}
    if any(not regmask & (1 << r) for r in regidx):
        fail('sample_regs_user %#x lacks bx, bp, sp or ip' % regmask)
    maps = []           # (start, end, pgoff) of BINARY
    done = 0
    off, end = data_off, data_off + data_size
    while off + 8 <= end and done < count:
        typ, misc, rsize = struct.unpack_from('<IHH', buf, off)
        if rsize < 8:
            fail('record at %#x: size %d' % (off, rsize))
        if typ == MMAP2:
            start, length, pgoff = struct.unpack_from('<3Q', buf, off + 16)
            name = bytes(buf[off + 72:off + rsize]).split(b'\0')[0].decode(errors='replace')
            if name == binary:
                maps.append((start, start + length, pgoff))
        elif typ == SAMPLE:
            p = off + 8
            if st & S_IDENTIFIER:
                p += 8
            ip_at = None
            for bit in ORDER:
                if st & bit:
                    if bit == S_IP:
                        ip_at = p
                    p += 8
            if st & S_CALLCHAIN:
                nr, = struct.unpack_from('<Q', buf, p)
                p += 8 + 8 * nr
            abi, = struct.unpack_from('<Q', buf, p)
            p += 8
            regs_at = p
            if abi:
                p += 8 * bin(regmask).count('1')
            ssize, = struct.unpack_from('<Q', buf, p)
            stack_at = p + 8
            dyn_at = stack_at + ssize
            ip, = struct.unpack_from('<Q', buf, ip_at)
            fileaddr = next((ip - s + g for s, e, g in maps if s <= ip < e), None)
            if abi and ssize and fileaddr is not None and body[0] <= fileaddr < body[1]:
                dyn, = struct.unpack_from('<Q', buf, dyn_at)
                if dyn >= 32:
                    stack = bytes(buf[stack_at:stack_at + dyn])
                    rbx, rbp = struct.unpack_from('<2Q', stack, 0)
                    new_ip = ip - fileaddr + ret
                    sp, = struct.unpack_from('<Q', buf, regs_at + 8 * regidx[R_SP])
                    struct.pack_into('<Q', buf, ip_at, new_ip)
                    for r, v in ((R_IP, new_ip), (R_SP, sp + 16), (R_BX, rbx), (R_BP, rbp)):
                        struct.pack_into('<Q', buf, regs_at + 8 * regidx[r], v)
                    buf[stack_at:stack_at + ssize] = stack[16:] + bytes(ssize - (dyn - 16))
                    struct.pack_into('<Q', buf, dyn_at, dyn - 16)
                    done += 1
        off += rsize
    open(dst, 'wb').write(buf)
    print(done)


if __name__ == '__main__':
    main()
