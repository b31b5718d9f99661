#!/usr/bin/env python3
"""mkkmod.py - kernel-module and guest samples in a real perf.data, as perf
record writes them on a host with modules or guests.

Usage: mkkmod.py IN OUT MODE ARG...
  mkkmod.py IN OUT module FILENAME START LEN ADDR...
      adds a kernel module's MMAP (pid -1, cpumode KERNEL, FILENAME such as
      "[name]" or "/lib/modules/RELEASE/.../name.ko", START, LEN in hex) after
      the kernel's MMAP; every other kernel-mode sample's ip and first kernel
      frame become one of the ADDRs (hex, in turn), but for the earliest
      kernel sample (perf reads kallsyms' module lines when it first meets
      the kernel's own map).
  mkkmod.py IN OUT guest ADDR...
      every third kernel-mode sample becomes a guest kernel sample (cpumode
      GUEST_KERNEL, its callchain's context word PERF_CONTEXT_GUEST_KERNEL,
      ip and first frame one of the ADDRs in turn); every third user-mode
      sample a guest user sample (GUEST_USER, PERF_CONTEXT_GUEST_USER).

IN: a file-mode, little-endian, uncompressed perf.data recorded with -g (e.g.
`perf record -e cpu-clock -g`). An added record shifts the feature sections;
every offset in the header and the feature table moves with it. Python 3
standard library.
"""
import struct
import sys

S_IP, S_TID, S_TIME, S_ADDR, S_READ, S_CALLCHAIN, S_ID, S_CPU, S_PERIOD, S_STREAM_ID = \
    [1 << i for i in range(10)]
S_IDENTIFIER = 1 << 16
KNOWN = S_IP | S_TID | S_TIME | S_ADDR | S_CALLCHAIN | S_ID | S_CPU | S_PERIOD | S_STREAM_ID | S_IDENTIFIER
MISC_KERNEL, MISC_USER, MISC_GUEST_KERNEL, MISC_GUEST_USER = 1, 2, 4, 5
CTX_KERNEL, CTX_USER = 2**64 - 128, 2**64 - 512
CTX_GUEST_KERNEL, CTX_GUEST_USER = 2**64 - 2176, 2**64 - 2560
CONTEXT_MAX = 0xfffffffffffff001


def die(msg):
    sys.exit('mkkmod: ' + msg)


def add_header_build_id(buf, tab, feat_bits, fname, build_id):
    """One entry more in HEADER_BUILD_ID (feature bit 2): header (type 0,
    misc KERNEL | BUILD_ID_SIZE, size), pid -1, 20 bytes of id, its size and
    3 reserved, the name NUL-padded to 64 bytes; the sections after it move."""
    if not feat_bits & 1 << 2:
        die('no build-id table in the header')
    idx = bin(feat_bits & 3).count('1')
    off, size = struct.unpack_from('<QQ', buf, tab + 16 * idx)
    name = fname.encode() + b'\0'
    name += b'\0' * (-len(name) % 64)
    body = struct.pack('<i', -1) + build_id.ljust(20, b'\0') + struct.pack('<BBH', len(build_id), 0, 0) + name
    ent = struct.pack('<IHH', 0, MISC_KERNEL | 1 << 15, 8 + len(body)) + body
    at = off + size
    buf[at:at] = ent
    struct.pack_into('<Q', buf, tab + 16 * idx + 8, size + len(ent))
    for i in range(bin(feat_bits).count('1')):
        o, = struct.unpack_from('<Q', buf, tab + 16 * i)
        if o >= at and i != idx:
            struct.pack_into('<Q', buf, tab + 16 * i, o + len(ent))


def main():
    build_id, in_mmap2 = None, False
    while len(sys.argv) > 1 and sys.argv[1].startswith('--build-id'):
        opt = sys.argv.pop(1)
        if opt == '--build-id-mmap2':
            in_mmap2 = True
        elif opt.startswith('--build-id='):
            build_id = bytes.fromhex(opt.split('=', 1)[1])
            if not 0 < len(build_id) <= 20:
                die('a build id has 1 to 20 bytes')
        else:
            die('unknown option ' + opt)
    if len(sys.argv) < 4:
        sys.exit(__doc__.split('\n\n')[1])
    buf = bytearray(open(sys.argv[1], 'rb').read())
    mode = sys.argv[3]
    if buf[:8] != b'PERFILE2':
        die('%s: not a little-endian perf.data file' % sys.argv[1])
    attr_size, = struct.unpack_from('<Q', buf, 16)
    attrs_off, attrs_size, data_off, data_size = struct.unpack_from('<4Q', buf, 24)
    types, id_all = set(), False
    for a in range(attrs_off, attrs_off + attrs_size, attr_size):
        types.add(struct.unpack_from('<Q', buf, a + 24)[0])
        flags, = struct.unpack_from('<Q', buf, a + 40)
        id_all = bool(flags & (1 << 18))
    if len(types) != 1:
        die('one sample_type expected, found %d' % len(types))
    st = types.pop()
    if st & ~KNOWN or not st & S_CALLCHAIN:
        die('sample_type %#x not supported' % st)
    ip_pos = 8 + 8 * bin(st & S_IDENTIFIER).count('1')
    cc_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID | S_TIME | S_ADDR | S_ID |
                               S_STREAM_ID | S_CPU | S_PERIOD)).count('1')
    trailer = 8 * bin(st & (S_TID | S_TIME | S_ID | S_STREAM_ID | S_CPU | S_IDENTIFIER)).count('1') \
        if id_all else 0
    pos, end = data_off, data_off + data_size
    if mode == 'module':
        fname, start, length = sys.argv[4], int(sys.argv[5], 16), int(sys.argv[6], 16)
        addrs = [int(a, 16) for a in sys.argv[7:]]
    elif mode == 'guest':
        addrs = [int(a, 16) for a in sys.argv[4:]]
    else:
        die('mode %s: module or guest' % mode)
    if not addrs:
        die('no address')
    # perf loads kallsyms (and a module's lines with it) at the first sample,
    # in time order, that meets the kernel's own map: a module's samples
    # before it stay unresolved. The earliest kernel sample is left as it is.
    time_pos = 8 + 8 * bin(st & (S_IDENTIFIER | S_IP | S_TID)).count('1')
    t_first = None
    if st & S_TIME:
        while pos + 8 <= end:
            typ, misc, size = struct.unpack_from('<IHH', buf, pos)
            if size < 8:
                die('record size %d at offset %d' % (size, pos))
            if typ == 9 and misc & 7 == MISC_KERNEL:
                t, = struct.unpack_from('<Q', buf, pos + time_pos)
                t_first = t if t_first is None else min(t, t_first)
            pos += size
        pos = data_off
    nk = nu = changed = 0
    insert_at = kmap_trailer = None
    while pos + 8 <= end:
        typ, misc, size = struct.unpack_from('<IHH', buf, pos)
        if size < 8:
            die('record size %d at offset %d' % (size, pos))
        if typ == 1 and insert_at is None and misc & 7 == MISC_KERNEL:
            insert_at = pos + size
            kmap_trailer = bytes(buf[pos + size - trailer:pos + size])
        if typ == 9 and misc & 7 in (MISC_KERNEL, MISC_USER):
            nr, = struct.unpack_from('<Q', buf, pos + cc_pos)
            cc = list(struct.unpack_from('<%dQ' % nr, buf, pos + cc_pos + 8))
            kernel = misc & 7 == MISC_KERNEL
            n = nk = nk + kernel
            if not kernel:
                n = nu = nu + 1
            early = t_first is not None and struct.unpack_from('<Q', buf, pos + time_pos)[0] <= t_first
            if mode == 'module' and kernel and n % 2 == 0 and nr >= 2 and cc[0] == CTX_KERNEL and not early:
                a = addrs[(n // 2) % len(addrs)]
                cc[1] = a
                struct.pack_into('<Q', buf, pos + ip_pos, a)
            elif mode == 'guest' and n % 3 == 0 and nr >= 2:
                gctx = CTX_GUEST_KERNEL if kernel else CTX_GUEST_USER
                misc = (misc & ~7) | (MISC_GUEST_KERNEL if kernel else MISC_GUEST_USER)
                struct.pack_into('<H', buf, pos + 4, misc)
                for i in range(nr):
                    if cc[i] == CTX_KERNEL:
                        cc[i] = CTX_GUEST_KERNEL
                    elif cc[i] == CTX_USER:
                        cc[i] = CTX_GUEST_USER
                if kernel:
                    a = addrs[(n // 3) % len(addrs)]
                    cc[1] = a
                    struct.pack_into('<Q', buf, pos + ip_pos, a)
            else:
                pos += size
                continue
            struct.pack_into('<%dQ' % nr, buf, pos + cc_pos + 8, *cc)
            changed += 1
        pos += size
    if not changed:
        die('no sample to rewrite')
    if mode == 'module':
        if insert_at is None:
            die('no kernel MMAP')
        name = fname.encode() + b'\0'
        name += b'\0' * (-len(name) % 8)
        if build_id is not None and in_mmap2:
            # MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID: size, 3 reserved
            # bytes and 20 of id in place of maj, min, ino, ino_generation
            ident = struct.pack('<BBH', len(build_id), 0, 0) + build_id.ljust(20, b'\0')
            rec = struct.pack('<IIQQQ', 0xffffffff, 0, start, length, 0) + ident + \
                struct.pack('<II', 5, 2) + name + kmap_trailer     # PROT_READ|EXEC, MAP_PRIVATE
            rec = struct.pack('<IHH', 10, MISC_KERNEL | 1 << 14, 8 + len(rec)) + rec
        else:
            rec = struct.pack('<IIQQQ', 0xffffffff, 0, start, length, 0) + name + kmap_trailer
            rec = struct.pack('<IHH', 1, MISC_KERNEL, 8 + len(rec)) + rec
        buf[insert_at:insert_at] = rec
        n = len(rec)
        struct.pack_into('<Q', buf, 48, data_size + n)
        # the feature table: (offset, size) per feature bit, after the data
        feat_bits = int.from_bytes(buf[72:104], 'little')
        tab = data_off + data_size + n
        nfeat = bin(feat_bits).count('1')
        for i in range(nfeat):
            off, = struct.unpack_from('<Q', buf, tab + 16 * i)
            struct.pack_into('<Q', buf, tab + 16 * i, off + n)
        if build_id is not None and not in_mmap2:
            add_header_build_id(buf, tab, feat_bits, fname, build_id)
    open(sys.argv[2], 'wb').write(buf)


main()
