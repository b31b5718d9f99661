#!/bin/bash
# completion.sh — the bash completion (completion/proff.bash), sourced as
# bash-completion would: `complete -p proff` names it, and the words it offers
# for a few command lines are the ones proff's option tables and key lists
# give (commands, options, sort keys, compute methods, files).
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac

# complete WORDS...: what bash offers for the last word (an empty string: a
# new word), one a line, sorted
cat >"$TMP/complete.bash" <<'EOF'
[ -f /usr/share/bash-completion/bash_completion ] && source /usr/share/bash-completion/bash_completion
source "$1"; shift
COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
_proff proff "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}" | sort
EOF
complete_words() { bash "$TMP/complete.bash" "$ROOT/completion/proff.bash" "$PROFF" "$@" 2>&1; }

bash -c "source '$ROOT/completion/proff.bash'; complete -p proff" >"$TMP/cp" 2>&1
grep -q 'complete -F _proff proff' "$TMP/cp" && ok "complete -p proff after sourcing" || not_ok "complete -p: $(cat "$TMP/cp")"

complete_words "" >"$TMP/c"
printf 'ab\ncalibrate\nconvert\ndiff\ndprofpp\nhelp\npush\nrecord\nreport\n' >"$TMP/e"
check_same "proff <TAB>: the commands" "$TMP/e" "$TMP/c"
complete_words re >"$TMP/c"
printf 'record\nreport\n' >"$TMP/e"
check_same "proff re<TAB>" "$TMP/e" "$TMP/c"
complete_words help di >"$TMP/c"
printf 'diff\n' >"$TMP/e"
check_same "proff help di<TAB>" "$TMP/e" "$TMP/c"
complete_words report --chi >"$TMP/c"
printf -- '--children\n' >"$TMP/e"
check_same "proff report --chi<TAB>" "$TMP/e" "$TMP/c"
# every option of report's table is offered for "--"
complete_words report -- >"$TMP/c"
"$PROFF" report --list-opts | grep -- '^--' | sort >"$TMP/e"
check_same "proff report --<TAB>: report's long options" "$TMP/e" "$TMP/c"
complete_words record --instrument --st >"$TMP/c"
printf -- '--stats=\n' >"$TMP/e"
check_same "proff record --instrument --st<TAB> (its own table)" "$TMP/e" "$TMP/c"
complete_words diff --stream --stream- >"$TMP/c"
printf -- '--stream-top=\n' >"$TMP/e"
check_same "proff diff --stream --stream-<TAB>" "$TMP/e" "$TMP/c"
# values: sort keys from the key table, compute methods, lists
complete_words report -s "" >"$TMP/c"
"$PROFF" --list-values sort | sort >"$TMP/e"
grep -qx dso "$TMP/e" && grep -qx srcline "$TMP/e" || not_ok "--list-values sort names the keys"
check_same "proff report -s <TAB>: the sort keys" "$TMP/e" "$TMP/c"
complete_words report --sort=dso,sy >"$TMP/c"
printf -- '--sort=dso,sym\n--sort=dso,symbol\n--sort=dso,symbol_from\n--sort=dso,symbol_size\n--sort=dso,symbol_to\n' >"$TMP/e"
check_same "proff report --sort=dso,sy<TAB>: the list's last key" "$TMP/e" "$TMP/c"
complete_words diff -c w >"$TMP/c"
printf 'wdiff:\n' >"$TMP/e"
check_same "proff diff -c w<TAB>" "$TMP/e" "$TMP/c"
complete_words report --color= >"$TMP/c"
printf -- '--color=always\n--color=auto\n--color=never\n' >"$TMP/e"
check_same "proff report --color=<TAB>" "$TMP/e" "$TMP/c"
# anything else: files
touch "$TMP/perf.data.one" "$TMP/perf.data.two"
(cd "$TMP" && complete_words report -i perf.data.) >"$TMP/c"
printf 'perf.data.one\nperf.data.two\n' >"$TMP/e"
check_same "proff report -i perf.data.<TAB>: files" "$TMP/e" "$TMP/c"

# zsh, where installed: the function loads
if command -v zsh >/dev/null; then
	zsh -fc "fpath=('$ROOT/completion' \$fpath); autoload -Uz compinit; compinit -u; autoload -Uz _proff; whence -w _proff" \
		>"$TMP/z" 2>&1 && ok "zsh loads _proff" || not_ok "zsh _proff: $(head -2 "$TMP/z")"
fi
finish
