/* flamegraph-page.c — the interactive page's CSS and JS, kept as the files
 * lib/output/flamegraph-page.css and lib/output/flamegraph-page.js (so they
 * read, diff and lint as what they are) and embedded here at build time by
 * the assembler's .incbin, each followed by a NUL. The paths are relative
 * to the top of the checkout, where every build runs; the Makefile makes
 * this object depend on both files.
 */
#include "flamegraph-int.h"

__asm__(".section .rodata\n"
	".global fg_page_css\n"
	".type fg_page_css, @object\n"
	"fg_page_css:\n"
	".incbin \"lib/output/flamegraph-page.css\"\n"
	".byte 0\n"
	".global fg_page_js\n"
	".type fg_page_js, @object\n"
	"fg_page_js:\n"
	".incbin \"lib/output/flamegraph-page.js\"\n"
	".byte 0\n"
	".previous\n");
