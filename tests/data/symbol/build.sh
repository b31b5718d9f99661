#!/bin/sh
# build.sh OUTDIR — build the symbolizer test binaries from the sources next
# to this script: prog (C, -O1 -g), prog.stripped (same, all symbols and
# debug info removed, build-id kept), prog.other (a different build-id),
# progpp and shapes (C++), file1 (a hand-written DWARF 5 line table),
# units (eight compile units) and units.z (the same, debug sections
# compressed).
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
# eight compile units of one function each, and a main calling them
i=1
mains=""
while [ $i -le 8 ]; do
	printf 'int unit%d(int x)\n{\n\tint s = x;\n\tfor (int k = 0; k < x; k++)\n\t\ts += k * %d;\n\treturn s;\n}\n' $i $i > "$out/unit$i.c"
	mains="$mains int unit$i(int); s += unit$i(argc);"
	i=$((i + 1))
done
printf 'int main(int argc, char **argv)\n{\n\tint s = 0;\n\t(void)argv;%s\n\treturn s;\n}\n' "$mains" > "$out/units.c"
$CC -O1 -g -o "$out/units" "$out/units.c" "$out"/unit[1-8].c
$CC -O1 -g -gz=zlib -o "$out/units.z" "$out/units.c" "$out"/unit[1-8].c
