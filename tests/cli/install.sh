#!/bin/bash
# install.sh — `make install PREFIX=/usr DESTDIR=<a temporary root>` and `make
# uninstall`: the installed proff runs, finds its instrumentation runtime
# through its own prefix (no PROFF_RUNTIME) and records an exact trace, finds
# its manual pages, the completion is where bash-completion looks, and a
# program builds against libproff with the installed pkg-config file.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
BUILD=$(dirname "$PROFF")
D="$TMP/root"
unset PROFF_RUNTIME

# -o all: install what this build made, without remaking it with other flags
if make --no-print-directory -C "$ROOT" -o all install BUILD="$BUILD" PREFIX=/usr DESTDIR="$D" >"$TMP/make.out" 2>&1; then
	ok "make install PREFIX=/usr DESTDIR=..."
else
	not_ok "make install"; tail -5 "$TMP/make.out" | sed 's/^/#   /'; finish
fi
for f in usr/bin/proff usr/lib/proff/libproff-instrument.so usr/lib/proff/libproff-instrument.a \
	 usr/lib/libproff.a usr/lib/pkgconfig/proff.pc usr/include/proff/profile.h \
	 usr/share/man/man1/proff.1 usr/share/man/man1/proff-report.1 usr/share/man/man1/proff-diff.1 \
	 usr/share/bash-completion/completions/proff usr/share/zsh/site-functions/_proff; do
	[ -f "$D/$f" ] || not_ok "installed: /$f"
done
ok "the files are installed"
P="$D/usr/bin/proff"
"$P" --version | grep -q '^proff version' && ok "the installed proff runs" || not_ok "installed proff --version"

# the runtime, found through the prefix (../lib/proff next to bin/proff)
printf '#include <stdio.h>\nstatic int f(int n) { return n < 2 ? n : f(n - 1) + f(n - 2); }\nint main(void) { printf("%%d\\n", f(15)); return 0; }\n' >"$TMP/fib.c"
if cc -O1 -finstrument-functions -o "$TMP/fib" "$TMP/fib.c"; then
	(cd "$TMP" && "$P" record --instrument -q -o "$TMP/fib.trace" -- ./fib >"$TMP/fib.out" 2>"$TMP/fib.err")
	if [ -s "$TMP/fib.trace" ] && "$P" record --instrument --stats "$TMP/fib.trace" | grep -qE '  f( |$)'; then
		ok "installed proff records with its installed runtime"
	else
		not_ok "record --instrument with the installed runtime"; head -3 "$TMP/fib.err" | sed 's/^/#   /'
	fi
else
	not_ok "cc -finstrument-functions"
fi

# the manual page, through the prefix's share/man
if command -v man >/dev/null; then
	script -qec "MANPAGER=cat MANWIDTH=80 $P help diff" /dev/null >"$TMP/help.tty" 2>&1
	grep -aq 'proff-diff - compare profiles' "$TMP/help.tty" && ok "the installed proff shows its installed manual page" ||
		not_ok "installed man page"
	MANPATH="$D/usr/share/man" man -w proff-report >/dev/null 2>&1 && ok "man finds proff-report(1) under the prefix" ||
		not_ok "man -w proff-report"
fi

# completion where bash-completion loads it from
bash -c "source '$D/usr/share/bash-completion/completions/proff'; complete -p proff" 2>/dev/null | grep -q _proff &&
	ok "the installed completion loads" || not_ok "installed completion"

# a program against the library, through pkg-config
cat >"$TMP/use.c" <<'EOF'
#include <stdio.h>
#include "proff/config.h"
int main(void)
{
	proff_config *c = pf_config_new();
	proff_error e;
	proff_err_clear(&e);
	if (!c || pf_config_load_default(c, &e) < 0)
		return 1;
	printf("%s\n", pf_config_get(c, "nosuch.key") ? "set" : "unset");
	pf_config_free(c);
	return 0;
}
EOF
if PKG_CONFIG_PATH="$D/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" pkg-config --exists proff; then
	flags=$(PKG_CONFIG_PATH="$D/usr/lib/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$D" pkg-config --cflags --libs --static proff)
	# a sanitized build's library needs the sanitizers' runtime
	nm "$D/usr/lib/libproff.a" 2>/dev/null | grep -q __asan_ && flags="$flags -fsanitize=address,undefined"
	# shellcheck disable=SC2086
	if cc -o "$TMP/use" "$TMP/use.c" $flags 2>"$TMP/cc.err" && PROFF_CONFIG=/dev/null "$TMP/use" | grep -qx unset; then
		ok "a program builds and runs against libproff (pkg-config proff)"
	else
		not_ok "build against libproff"; head -5 "$TMP/cc.err" | sed 's/^/#   /'
	fi
else
	not_ok "pkg-config finds proff.pc"
fi

make --no-print-directory -C "$ROOT" -o all uninstall BUILD="$BUILD" PREFIX=/usr DESTDIR="$D" >"$TMP/make.out" 2>&1 ||
	not_ok "make uninstall"
left=$(find "$D" -type f | sed "s|^$D||")
[ -z "$left" ] && ok "make uninstall removes every installed file" || not_ok "left after uninstall: $left"
finish
