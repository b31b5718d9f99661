# proff.bash — bash completion of proff (installed as
# share/bash-completion/completions/proff; or: source completion/proff.bash).
# The commands and every command's options come from proff itself
# (`proff --list-cmds`, `proff CMD --list-opts`, made from its option
# tables), the values of the options that take words from
# `proff --list-values KIND`; anything else completes file names.

_proff_cache_opts() {   # _proff_cache_opts PROFF CMD...: the options, cached per command
	local key="${*:2}"
	key=${key// /_}
	key=${key//-/_}
	local var="_proff_opts_$key"
	if [ -z "${!var+set}" ]; then
		printf -v "$var" '%s' "$("$1" "${@:2}" --list-opts 2>/dev/null)"
	fi
	printf '%s\n' "${!var}"
}

_proff() {
	local cur prev words cword
	if declare -F _init_completion >/dev/null; then
		_init_completion -n = || return
	else
		cur=${COMP_WORDS[COMP_CWORD]}; prev=${COMP_WORDS[COMP_CWORD-1]}
		words=("${COMP_WORDS[@]}"); cword=$COMP_CWORD
	fi
	local proff=${words[0]} cmd="" i
	for ((i = 1; i < cword; i++)); do
		case ${words[i]} in
		-*) ;;
		*) cmd=${words[i]}; break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--version --help --no-pager --pager --color= --no-color" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$("$proff" --list-cmds 2>/dev/null) help" -- "$cur"))
		fi
		return
	fi
	if [ "$cmd" = help ]; then
		COMPREPLY=($(compgen -W "$("$proff" --list-cmds 2>/dev/null)" -- "$cur"))
		return
	fi
	local sub=("$cmd")
	[ "$cmd" = record ] && [[ " ${words[*]} " == *" --instrument "* ]] && sub=(record --instrument)
	[ "$cmd" = diff ] && [[ " ${words[*]} " == *" --stream "* ]] && sub=(diff --stream)
	# the value of an option: --opt=VALUE or --opt VALUE
	local opt=$prev val=$cur
	if [[ $cur == --*=* ]]; then
		opt=${cur%%=*}; val=${cur#*=}
	fi
	local kind=""
	case "$cmd:$opt" in
	report:-s|report:--sort|diff:-s|diff:--sort) kind=sort ;;
	diff:-c|diff:--compute) kind=compute ;;
	report:-g|report:--call-graph) kind=call-graph ;;
	*:--color) kind=color ;;
	*:--percentage) kind=percentage ;;
	record:-e|record:--event) kind=event ;;
	calibrate:--only) kind=groups ;;
	calibrate:-t|calibrate:--counter) kind=counter ;;
	record:--clock) kind=clock ;;
	esac
	if [ -n "$kind" ]; then
		local words_v
		words_v=$("$proff" --list-values "$kind" 2>/dev/null)
		if [[ $kind == sort || $kind == event || $kind == counter || $kind == call-graph ]] && [[ $val == *,* ]]; then
			# a comma-separated list: complete its last item
			local head=${val%,*},
			COMPREPLY=($(compgen -P "$head" -W "$words_v" -- "${val##*,}"))
		else
			COMPREPLY=($(compgen -W "$words_v" -- "$val"))
		fi
		[[ $cur == --*=* ]] && COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
		return
	fi
	if [[ $cur == -* ]]; then
		local opts
		opts=$(_proff_cache_opts "$proff" "${sub[@]}")
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
		# --opt= takes its value after the '=': no space after it
		[[ ${#COMPREPLY[@]} == 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
		return
	fi
	COMPREPLY=($(compgen -f -- "$cur"))
	compopt -o filenames 2>/dev/null
}
complete -F _proff proff
