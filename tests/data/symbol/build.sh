#!/bin/sh
# build.sh OUTDIR — build the symbolizer test binaries from the sources next
# to this script: prog (C, -O1 -g), prog.stripped (same, all symbols and
# debug info removed, build-id kept), prog.other (a different build-id),
# progpp and shapes (C++), file1 (a hand-written DWARF 5 line table).
# Called by tests/unit/test_symbol.c; binaries are never committed.
set -eu
src=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
CC=${CC_FOR_TESTS:-cc}
CXX=${CXX_FOR_TESTS:-c++}
$CC -O1 -g -fno-omit-frame-pointer -fcf-protection=none -Wl,--build-id=sha1 -o "$out/prog" "$src/prog.c"
strip --strip-all -o "$out/prog.stripped" "$out/prog"
$CC -O1 -g -fcf-protection=none -DOTHER_BUILD=1 -Wl,--build-id=sha1 -o "$out/prog.other" "$src/prog.c" -Wl,--defsym,proff_other_build=0
$CXX -O1 -g -Wl,--build-id=sha1 -o "$out/progpp" "$src/progpp.cpp"
$CXX -O1 -g -Wl,--build-id=sha1 -o "$out/shapes" "$src/shapes.cpp"
$CC -o "$out/file1" "$src/file1.s"
