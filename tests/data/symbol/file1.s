# file1.s — a DWARF 5 line table whose entry 1 (hdr.h) is not the CU's
# primary file (entry 0, file1.c), as in glibc's ld.so: binutils' addr2line
# names rows before the sequence's first DW_LNS_set_file by entry 0 and an
# explicit set_file 1 by entry 1 (tests/unit/test_symbol.c,
# test_dwarf5_initial_file). Built by build.sh.
	.text
	.file 0 "/src" "file1.c"
	.file 1 "hdr.h"
	.file 2 "file1.c"
	.globl	f1
	.type	f1, @function
f1:
	.loc 1 10 0
	nop
	.loc 1 11 0
	nop
	.loc 2 20 0
	nop
	.loc 1 12 0
	nop
	ret
	.size	f1, .-f1
	.globl	main
	.type	main, @function
main:
	.loc 2 30 0
	call	f1
	.loc 2 31 0
	xorl	%eax, %eax
	ret
	.size	main, .-main
	.section	.note.GNU-stack,"",@progbits
