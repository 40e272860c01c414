# bash completion for kmsg(1)                             -*- shell-script -*-
#
# Static on purpose: completing runs no program.  tests/cli/completions.sh
# checks that each subcommand's options here are exactly what
# "kmsg options CMD" prints (plus --help), that the subcommands are those
# of "kmsg --help", and that the value lists are those kmsg accepts; so when
# an option changes in cmd/*.c, change it here too.
#
# Works with bash-completion (installed as
# share/bash-completion/completions/kmsg) or sourced on its own.

_kmsg_commands='emit read follow ship clear dump stat listen kernel'
_kmsg_all_commands="$_kmsg_commands help options"
_kmsg_facilities='kern user mail daemon auth syslog lpr news uucp cron authpriv
	ftp local0 local1 local2 local3 local4 local5 local6 local7'
_kmsg_levels='emerg alert crit err warn notice info debug'

# The format and filter options read and follow share (cmd/output.c).
_kmsg_output_opts='-T --ctime -e --reltime -d --show-delta -t --notime
	--time-format -r --raw -x --decode -J --json -o --output --output-fields
	--noescape -p --force-prefix --utc
	--fields -L --color -H --human -l --level -f --facility
	-k --kernel -u --userspace --since --until --match -q --quiet
	--show-caller --show-pid'
# The text and writer filters read and follow share (cmd/grep.c).
_kmsg_grep_opts='-g --grep --case-sensitive --pid'
# journalctl's cursors, in read and follow (cmd/cursor.c).
_kmsg_cursor_opts='--show-cursor --cursor --after-cursor --cursor-file'

# The word lists below are split here, with IFS set: the user's may be any.

# _kmsg_words WORDS...: COMPREPLY gets the WORDS that start with $cur
_kmsg_words()
{
	local IFS=$' \t\n'
	COMPREPLY=($(compgen -W "$*" -- "$cur"))
}

# _kmsg_list WORDS...: completes the last item of a comma-separated list
# with the WORDS not in it yet
_kmsg_list()
{
	local IFS=$' \t\n' head='' w words=''
	[[ $cur == *,* ]] && head=${cur%,*},
	# shellcheck disable=SC2048 # split on purpose
	for w in $*; do
		[[ ,$head == *,$w,* ]] || words+=" $w"
	done
	COMPREPLY=($(compgen -P "$head" -W "$words" -- "${cur##*,}"))
}

# -p: facility.level (kern is never stored: not offered) or a level alone
_kmsg_priority()
{
	local IFS=$' \t\n' f facs=''
	if [[ $cur == *.* ]]; then
		COMPREPLY=($(compgen -P "${cur%%.*}." -W "$_kmsg_levels" -- "${cur#*.}"))
		return
	fi
	for f in $_kmsg_facilities; do
		[[ $f == kern ]] || facs+=" $f."
	done
	COMPREPLY=($(compgen -W "$facs $_kmsg_levels" -- "$cur"))
	# "user." is not a whole word yet
	[[ " ${COMPREPLY[*]} " == *". "* ]] && compopt -o nospace 2>/dev/null
	return 0
}

_kmsg_files()
{
	if declare -F _filedir >/dev/null; then
		_filedir
	else
		local IFS=$'\n'
		compopt -o filenames 2>/dev/null
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}

_kmsg()
{
	local cur prev words cword split=false
	if declare -F _init_completion >/dev/null; then
		_init_completion -s || return
	else
		# No bash-completion: split "--opt=value" here.
		COMPREPLY=()
		words=("${COMP_WORDS[@]}")
		cword=$COMP_CWORD
		cur=${words[cword]}
		prev=${words[cword - 1]}
		if [[ $cur == = && $prev == --* ]]; then
			cur='' split=true
		elif [[ $prev == = && ${words[cword - 2]} == --* ]]; then
			prev=${words[cword - 2]} split=true
		fi
	fi

	if ((cword == 1)); then
		if [[ $cur == -* ]]; then
			_kmsg_words --help --version
		else
			_kmsg_words "$_kmsg_all_commands"
		fi
		return
	fi

	local cmd=${words[1]} opts
	case $cmd in
	emit)
		opts='-p --priority -t --tag -i --id -f --input -e --skip-empty
			-s --stderr --prio-prefix --field --split -F --file --log-size
			--max-text --sync --no-newline --cont --caller' ;;
	read)   opts="-F --file -K --kmsg-file -c --read-clear -C --clear -b --boot --list-boots
			-n --lines --reverse $_kmsg_output_opts -P --nopager
			$_kmsg_grep_opts --list-values $_kmsg_cursor_opts" ;;
	follow) opts="-F --file -n --lines --fail-missing $_kmsg_output_opts
			$_kmsg_grep_opts $_kmsg_cursor_opts" ;;
	ship)   opts="--to --format --sd-id --hostname --window --window-bytes --retry-max
			--from-end -F --file --tls --tls-ca --tls-cert --tls-key --tls-name
			$_kmsg_output_opts $_kmsg_grep_opts $_kmsg_cursor_opts" ;;
	clear)  opts='-F --file' ;;
	dump)   opts='-F --file -o --output --special --level -v --verbose' ;;
	stat)   opts='-F --file -J --json' ;;
	listen) opts='-u --socket --stream -F --file --log-size --max-text' ;;
	kernel) opts='-w --follow -F --file --log-size --max-text' ;;
	help | options)
		((cword == 2)) && _kmsg_words "$_kmsg_commands"
		return ;;
	*)      return ;;
	esac

	# The argument of the option before, if it takes one.
	case $cmd:$prev in
	*:-F | *:--file | *:--cursor-file | read:-K | read:--kmsg-file | emit:-f | emit:--input | \
	dump:-o | dump:--output | listen:-u | listen:--socket | \
	ship:--tls-ca | ship:--tls-cert | ship:--tls-key)
		_kmsg_files
		return ;;
	emit:-p | emit:--priority)
		_kmsg_priority
		return ;;
	emit:--id)
		# a bare --id is -i: only --id=ID takes an argument
		$split && return ;;
	emit:-t | emit:--tag | emit:--field | emit:--log-size | emit:--max-text | emit:--caller | \
	listen:--log-size | listen:--max-text | kernel:--log-size | kernel:--max-text)
		return ;;
	ship:--format)
		_kmsg_words rfc5424 rfc3164
		return ;;
	ship:--to)
		_kmsg_words tcp:// tls:// udp:// relp:// unix: http://
		return ;;
	ship:--sd-id | ship:--hostname | ship:--window | ship:--window-bytes | \
	ship:--retry-max | ship:--tls-name)
		return ;;
	read:--time-format | follow:--time-format)
		_kmsg_words delta reltime ctime notime iso raw
		return ;;
	read:-o | read:--output | follow:-o | follow:--output)
		_kmsg_words short raw json json-pretty json-seq kmsg export short-iso \
			short-iso-precise short-precise short-monotonic short-unix cat
		return ;;
	read:--list-values)
		# the members by -o json's and journalctl's names; field keys are the user's
		_kmsg_words seq seq_id boot_id claimed_pid caller facility facility_name level \
			level_name text _BOOT_ID SYSLOG_FACILITY PRIORITY MESSAGE \
			SYSLOG_IDENTIFIER
		return ;;
	read:--output-fields | follow:--output-fields)
		# the members; field keys are the user's
		_kmsg_list "seq seq_id time_ns time boot_ns boot_id claimed_pid caller facility facility_name level level_name text"
		return ;;
	read:-L | read:--color | follow:-L | follow:--color)
		# optional: without "=" the next word may be another option
		if $split || [[ $cur != -* ]]; then
			_kmsg_words auto always never
			return
		fi ;;
	read:-l | read:--level | follow:-l | follow:--level)
		_kmsg_list "$_kmsg_levels"
		return ;;
	read:-f | read:--facility | follow:-f | follow:--facility)
		_kmsg_list "$_kmsg_facilities"
		return ;;
	read:--since | read:--until | follow:--since | follow:--until)
		_kmsg_words now today yesterday tomorrow
		return ;;
	follow:-n | follow:--lines)
		_kmsg_words all 0 10
		return ;;
	read:-n | read:--lines)
		_kmsg_words 10 20 50
		return ;;
	read:-b | read:--boot)
		# optional: without "=" the next word may be another option
		if $split || [[ $cur != -* ]]; then
			_kmsg_words 0 -1 -2 1
			return
		fi ;;
	dump:--level)
		_kmsg_words 1 2 3 4 5 6 7 8 9
		return ;;
	*:--cursor | *:--after-cursor)
		return ;;
	*:--match | read:-g | read:--grep | follow:-g | follow:--grep | *:--pid)
		return ;;
	read:--case-sensitive | follow:--case-sensitive)
		# optional: without "=" the next word may be another option
		if $split || [[ $cur != -* ]]; then
			_kmsg_words yes no
			return
		fi ;;
	esac
	$split && return

	# emit's words are the message; read's and follow's are KEY=value
	# matches (the user's); the others take no operand.
	if [[ $cur == -* || $cmd != emit ]]; then
		_kmsg_words "$opts" --help
	fi
} &&
	complete -F _kmsg kmsg

# ex: filetype=sh
