/* epilogue.c — for tests/oracle/dwarf.sh and tests/tools/mkepilogue.py: a
 * leaf, ep_leaf, that saves rbp and rbx, spins with rbp as a scratch
 * register and pops them before its ret, under ep_mid, whose CFA is rbp +
 * 16 (a frame pointer). mkepilogue.py moves recorded samples of the spin to
 * the ret: there the CFI still says rbp and rbx are saved at CFA-16 and
 * CFA-24, below the stack pointer, outside the stack copy, as in the
 * dynamic linker's _dl_lookup_symbol_x epilogue under _dl_relocate_object.
 * perf's libunwind cannot read rbp there and ends the chain at ep_mid.
 * ep_leaf's layout is fixed: push rbp, push rbx (2 bytes), the spin,
 * pop rbx, pop rbp, ret (the last 3 bytes). */
#include <stdlib.h>

long ep_mid(long n);

__asm__(
	".text\n"
	".globl ep_leaf\n"
	".type ep_leaf, @function\n"
	"ep_leaf:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	push %rbx\n"
	".cfi_def_cfa_offset 24\n"
	".cfi_offset %rbx, -24\n"
	"	mov %rdi, %rbp\n"
	"	xor %eax, %eax\n"
	"1:	lea 1(%rax,%rbp), %rbx\n"
	"	add %rbx, %rax\n"
	"	sub $1, %rbp\n"
	"	jnz 1b\n"
	"	pop %rbx\n"
	".cfi_def_cfa_offset 16\n"
	"	pop %rbp\n"
	".cfi_def_cfa_offset 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size ep_leaf, .-ep_leaf\n"
	"\n"
	".globl ep_mid\n"
	".type ep_mid, @function\n"
	"ep_mid:\n"
	".cfi_startproc\n"
	"	push %rbp\n"
	".cfi_def_cfa_offset 16\n"
	".cfi_offset %rbp, -16\n"
	"	mov %rsp, %rbp\n"
	".cfi_def_cfa_register %rbp\n"
	"	call ep_leaf\n"
	"	pop %rbp\n"
	".cfi_def_cfa %rsp, 8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size ep_mid, .-ep_mid\n");

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 2000;
	long s = 0;
	for (long i = 0; i < n; i++)
		s += ep_mid(100000);
	return s == 42;
}
