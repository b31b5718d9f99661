#!/bin/bash
# options.sh — the one option library (cli/parse-options.c) as every command
# uses it: perf's forms (bundles, --name=value, abbreviations, --no-name,
# "--"), perf's messages and exit status 129, "did you mean" for unknown
# options and commands, -h from the tables. Needs no profile: the errors come
# before any file is read, and a good command line meets a missing file.
source "$(dirname "$0")/../lib.sh"
case $PROFF in /*) ;; *) PROFF=$PWD/$PROFF ;; esac
cd "$TMP" || exit 2
export PROFF_CONFIG=/dev/null PERF_CONFIG=/dev/null

# err_is NAME CODE EXPECTED-STDERR-LINE CMD...: exit CODE, nothing on stdout,
# that line on stderr
err_is() {
	local name=$1 code=$2 line=$3; shift 3
	"$@" >"$TMP/o" 2>"$TMP/e"; local rc=$?
	if [ "$rc" = "$code" ] && [ ! -s "$TMP/o" ] && grep -qxF -- "$line" "$TMP/e"; then
		ok "$name"
	else
		not_ok "$name (exit $rc)"; sed 's/^/#   /' "$TMP/e" | head -8
	fi
}

# did you mean: the nearest option, its help line, no whole usage
err_is "report --chidren: did you mean --children" 129 "  Did you mean --children?" "$PROFF" report --chidren
[ "$(wc -l <"$TMP/e")" -lt 8 ] && ok "... without the whole usage" || not_ok "unknown option printed $(wc -l <"$TMP/e") lines"
grep -q -- '--children  *accumulate' "$TMP/e" && ok "... with the option's help line" || not_ok "help line of the suggestion"
err_is "diff --sortt: did you mean --sort" 129 "  Did you mean --sort?" "$PROFF" diff --sortt x a b
err_is "record --outptu: did you mean --output" 129 "  Did you mean --output?" "$PROFF" record --outptu f true
err_is "record --instrument --stat: did you mean --stats" 129 "  Did you mean --stats?" "$PROFF" record --instrument --sttas f
err_is "calibrate --no-quik: did you mean --no-quick" 129 "  Did you mean --no-quick?" "$PROFF" calibrate --no-quik
err_is "diff --stream --stream-tpo: did you mean --stream-top" 129 "  Did you mean --stream-top?" "$PROFF" diff --stream --stream-tpo 3
err_is "report --colour: the nearest (--color)" 129 "  Did you mean --color?" "$PROFF" report --colour
err_is "an option far from every name: the usage line" 129 " See 'proff report -h' for the options." "$PROFF" report --zzzzzzzz
err_is "unknown short option: perf's message" 129 "  Error: unknown switch \`Z'" "$PROFF" report -Z
err_is "unknown long option: perf's message" 129 "  Error: unknown option \`bogus'" "$PROFF" diff --bogus
err_is "ambiguous abbreviation" 129 "  Error: Ambiguous option: per (could be --percent-limit or --percentage)" "$PROFF" report --per 3
err_is "a value missing: perf's message" 129 "  Error: option \`sort' requires a value" "$PROFF" diff --sort
err_is "a short option's value missing" 129 "  Error: switch \`s' requires a value" "$PROFF" report -s
err_is "a value to a flag" 129 "  Error: option \`quiet' takes no value" "$PROFF" report --quiet=yes
err_is "a number expected" 129 "  Error: switch \`o' expects a numerical value" "$PROFF" diff -o x a b
err_is "a number expected (long)" 129 "  Error: option \`max-stack' expects a numerical value" "$PROFF" report --max-stack lots
err_is "an empty separator (perf's non-empty check)" 129 "  Error: option \`field-separator' requires a non empty argument" "$PROFF" diff --field-separator= a b
err_is "report takes no argument" 129 "  Error: unexpected argument 'stray'" "$PROFF" report stray

# unknown commands: git's message and the nearest command
err_is "proff repotr: the most similar command" 1 "	report" "$PROFF" repotr
grep -q "'repotr' is not a proff command" "$TMP/e" && ok "... named as git names it" || not_ok "unknown command message"
err_is "proff zzzz: no suggestion" 1 "proff: 'zzzz' is not a proff command. See 'proff --help'." "$PROFF" zzzz
! grep -q similar "$TMP/e" && ok "... and no similar command" || not_ok "suggested for zzzz"

# the forms that parse: each command line gets as far as its missing file
reaches_file() {  # NAME CMD...: the error is the missing file (the options parsed)
	local name=$1; shift
	"$@" >"$TMP/o" 2>"$TMP/e"
	grep -q 'nofile' "$TMP/e" && ! grep -q 'Error:' "$TMP/e" && ok "$name" || { not_ok "$name"; sed 's/^/#   /' "$TMP/e" | head -5; }
}
reaches_file "bundled short flags (-qn)" "$PROFF" report -qn -i nofile
reaches_file "a bundled value (-inofile)" "$PROFF" report -q -inofile
reaches_file "--name=value" "$PROFF" report --input=nofile --sort=dso,sym
reaches_file "an abbreviation (--inp)" "$PROFF" report --inp nofile
reaches_file "--no-name of a flag" "$PROFF" report --no-children --no-show-nr-samples -i nofile
reaches_file "-g without a value, then an option" "$PROFF" report -g -i nofile
reaches_file "-g with the next word" "$PROFF" report -g caller -i nofile
reaches_file "-v counted (-vv)" "$PROFF" report -vv -i nofile
reaches_file "diff: bundle -bpF, -o0" "$PROFF" diff -bpF -o0 nofile nofile2
reaches_file "diff: options after the files" "$PROFF" diff nofile nofile2 -c ratio

# -h from the tables, in perf's layout; exit 0 (diff: 129, as perf diff)
for c in report record calibrate "record --instrument" "diff --stream"; do
	# shellcheck disable=SC2086
	"$PROFF" $c -h >"$TMP/h" 2>&1; rc=$?
	want=0; [ "$c" = "diff --stream" ] && want=129
	head -2 "$TMP/h" | grep -q "^ Usage: proff ${c%% *}" && grep -q '^    -h, --help ' "$TMP/h" && [ $rc = $want ] &&
		ok "$c -h: the usage from the table (exit $rc)" || not_ok "$c -h (exit $rc)"
done
# every option of a table is in its -h
"$PROFF" report --list-opts | sed 's/=$//' | grep -- '^--' >"$TMP/opts"
"$PROFF" report -h >"$TMP/h"
miss=$(while read -r o; do grep -qE -- "(^| )$o( |\\[|=|\$)" "$TMP/h" || echo "$o"; done <"$TMP/opts" | tr '\n' ' ')
[ -z "$miss" ] && ok "report -h lists every option of its table" || not_ok "report -h lacks: $miss"
finish
