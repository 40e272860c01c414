#!/bin/bash
# completions.sh - the shell completions cannot drift from the code.  Each
# completion file is loaded into the real shell, which is asked what it
# offers, as a user pressing Tab would be answered:
#
#  - bash: the file is sourced (with bash-completion's helpers, and once
#    without them), COMP_WORDS, COMP_CWORD, COMP_LINE and COMP_POINT are set
#    as bash sets them (words broken at "=" too), and the function that
#    "complete -p kmsg" names is called; COMPREPLY is the answer.
#  - zsh: an interactive "zsh -f" on a pseudo-terminal (the zsh/zpty module)
#    runs compinit with completions/ first in fpath; each line is typed and
#    Tab pressed.  Tab is bound to a completion widget that runs zsh's own
#    _main_complete and then writes an end mark; compadd is wrapped to write
#    every match it is given that fits the word, and nothing is listed or
#    inserted, so the line stays as typed.
#  - fish: "fish --no-config" sources the file and prints "complete -C LINE".
#
# For every subcommand the options offered after "-" must be exactly those
# "kmsg options CMD" prints, short and long forms, plus --help; the
# subcommands offered must be those "kmsg --help" lists; and the values
# offered for --time-format, --output, --color, --level, --facility and
# emit's --priority must be the ones kmsg's own error messages list.  A
# shell that is not installed is skipped, saying so.
. "$(dirname "$0")/lib.sh.inc"

COMP=$SRC/completions
NL=$'\n'

# ---- what the code says --------------------------------------------------

commands=$("$KMSG" --help | awk '/^Commands:/ { on = 1; next }
	on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$commands" ] || fail "kmsg --help lists no commands"
# the ones with options of their own; help and options take a command name
table_commands=$(for c in $commands; do "$KMSG" options "$c" >/dev/null 2>&1 && echo "$c"; done)
[ "$(echo "$table_commands" | wc -l)" -lt "$(echo "$commands" | wc -l)" ] ||
	fail "kmsg --help lists no command without options (help, options)"

# options_of CMD: one option a line, short and long forms, from the binary
options_of() {
	"$KMSG" options "$1" | while read -r short long _; do
		[ "$short" != - ] && printf '%s\n' "$short"
		[ "$long" != --- ] && printf '%s\n' "$long"
	done
	printf '%s\n' --help
}

# accepted OPTION: the values kmsg's error message for a bad one lists
# ("not one of a, b, c", or after dmesg's words "--level takes a list of:
# a, b; ..."), one a line, with "local0..local7" spelt out
accepted() {
	"$KMSG" read "$1=%bad%" 2>&1 >/dev/null | grep -m1 -e 'not one of' -e 'list of:' |
		sed -e 's/.*not one of //' -e 's/.*list of: //' \
		    -e 's/[;)].*//' -e 's/, */\n/g' |
		while read -r v; do
			if [[ $v =~ ^([a-z]+)([0-9]+)\.\.([a-z]+)([0-9]+)$ ]]; then
				for ((i = BASH_REMATCH[2]; i <= BASH_REMATCH[4]; i++)); do
					echo "${BASH_REMATCH[1]}$i"
				done
			else
				echo "$v"
			fi
		done
}

time_formats=$(accepted --time-format)
outputs=$(accepted --output)
colors=$(accepted --color)
levels=$(accepted --level)
facilities=$(accepted --facility)
for v in time_formats outputs colors levels facilities; do
	[ "$(echo "${!v}" | wc -l)" -ge 3 ] ||
		fail "could not read the accepted $v from kmsg: [${!v}]"
done
# in a list, what is already in it is not offered again
levels_but_err=$(echo "$levels" | grep -vx err)
facilities_but_kern=$(echo "$facilities" | grep -vx kern)
# emit -p: "facility." (kern is never stored, so not offered) or a level
priorities=$(echo "$facilities" | grep -vx kern | sed 's/$/./'; echo "$levels")

mkdir "$T/files"
: >"$T/files/log-one"

# ---- the questions -------------------------------------------------------

# Each line is a command line with the cursor at its end; check_answers
# below says what each must get.
queries=("kmsg ")
for c in $table_commands; do
	queries+=("kmsg $c -")
done
queries+=(
	"kmsg read --time-format "
	"kmsg follow --time-format "
	"kmsg read --output "
	"kmsg follow -o "
	"kmsg read --color="
	"kmsg follow --color="
	"kmsg read --level "
	"kmsg follow -l err,"
	"kmsg read -f "
	"kmsg follow --facility kern,"
	"kmsg emit -p "
	"kmsg emit --priority daemon."
	"kmsg read --since "
	"kmsg read -F $T/files/log-"
	"kmsg emit --input $T/files/log-"
	"kmsg help "
	"kmsg options "
)

# sorted SET: the lines of SET, sorted, each once, empty lines dropped
sorted() { printf '%s\n' "$1" | sed '/^$/d' | LC_ALL=C sort -u; }

# expect_set WHAT WANT GOT: two sets of lines are equal
expect_set() {
	local want got
	want=$(sorted "$2")
	got=$(sorted "$3")
	if [ "$want" = "$got" ]; then ok; else
		fail "$1: missing [$(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ' ')]" \
		     "extra [$(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ' ')]"
	fi
}

# options in an answer: fish offers "--color=" beside "--color"
as_options() { sed -e 's/\t.*//' -e 's/=$//' <<<"$1"; }
# values in an answer: without what is before the value in the word
# ("--color=auto", "err,warn", "daemon.info")
as_values() { sed -e 's/\t.*//' -e 's/^.*[=,.]\(.\)/\1/' <<<"$1"; }

# check_answers SHELL FILE: FILE holds one answer per query, each ending
# in a line @@END@@
check_answers() {
	local sh=$1 i=0 a='' got=() line
	case_ "$sh: the answers"
	while IFS= read -r line; do
		if [ "$line" = @@END@@ ]; then
			got+=("$a")
			a=
		else
			a+=$line$NL
		fi
	done <"$2"
	if [ ${#got[@]} != ${#queries[@]} ]; then
		fail "$sh answered ${#got[@]} of ${#queries[@]} questions: $(head -c 300 "$2")"
		return
	fi
	case_ "$sh: subcommands"
	expect_set "$sh: 'kmsg <Tab>'" "$commands" "$(as_values "${got[0]}")"
	for c in $table_commands; do
		i=$((i + 1))
		case_ "$sh: options of kmsg $c"
		expect_set "$sh: 'kmsg $c -<Tab>' against 'kmsg options $c'" \
			"$(options_of "$c")" "$(as_options "${got[i]}")"
	done
	case_ "$sh: option values"
	for want in time_formats time_formats outputs outputs colors colors \
		    levels levels_but_err facilities facilities_but_kern \
		    priorities levels; do
		i=$((i + 1))
		expect_set "$sh: '${queries[i]}<Tab>'" "${!want}" "$(as_values "${got[i]}")"
	done
	i=$((i + 1))
	# each time offered is one kmsg takes
	for v in $(as_values "${got[i]}"); do
		if "$KMSG" read -F "$T/log" --since "$v" >/dev/null 2>&1; then ok; else
			fail "$sh: '${queries[i]}' offers '$v', which kmsg read refuses"; fi
	done
	[ -n "$(as_values "${got[i]}")" ] || fail "$sh: nothing offered for '${queries[i]}'"
	for i in $((i + 1)) $((i + 2)); do
		case "${got[i]}" in
		*log-one*) ok ;;
		*) fail "$sh: '${queries[i]}<Tab>' offers no file: [${got[i]}]" ;;
		esac
	done
	for i in $((i + 1)) $((i + 2)); do
		case_ "$sh: ${queries[i]}<Tab>"
		expect_set "$sh: '${queries[i]}<Tab>'" "$table_commands" "$(as_values "${got[i]}")"
	done
}

"$KMSG" emit -F "$T/log" "a record" || fail "kmsg emit failed"
printf '%s\n' "${queries[@]}" >"$T/queries"

# The shells run with a home of their own: fish makes its directories there.
mkdir "$T/home"
shell=(env HOME="$T/home" XDG_CONFIG_HOME="$T/home/.config"
	XDG_DATA_HOME="$T/home/.local/share" XDG_CACHE_HOME="$T/home/.cache")

# ---- bash ------------------------------------------------------------------

cat >"$T/ask.bash" <<'EOF'
# bash ask.bash COMPLETION_FILE [BASH_COMPLETION] < queries
set -f
[ -n "$2" ] && . "$2"
. "$1"
fn=$(complete -p kmsg 2>/dev/null)
fn=${fn#*-F }
fn=${fn%% *}
[ -n "$fn" ] || { echo "no 'complete -F FUNCTION kmsg' after sourcing $1" >&2; exit 1; }
while IFS= read -r line; do
	words=()
	for w in $line; do
		# bash breaks words at "=" too (COMP_WORDBREAKS)
		while [[ $w == *=* ]]; do
			words+=("${w%%=*}" "=")
			w=${w#*=}
		done
		[ -n "$w" ] && words+=("$w")
	done
	[[ $line == *[[:blank:]] ]] && words+=("")
	COMP_WORDS=("${words[@]}")
	COMP_CWORD=$((${#words[@]} - 1))
	COMP_LINE=$line
	COMP_POINT=${#line}
	COMP_TYPE=9
	COMP_KEY=9
	COMPREPLY=()
	"$fn" kmsg "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD - 1]}"
	printf '%s\n' "${COMPREPLY[@]}"
	echo @@END@@
done
EOF

BC=
for f in /usr/share/bash-completion/bash_completion /etc/bash_completion; do
	[ -r "$f" ] && { BC=$f; break; }
done
if [ -n "$BC" ]; then
	"${shell[@]}" bash --norc --noprofile "$T/ask.bash" "$COMP/kmsg.bash" "$BC" \
		<"$T/queries" >"$T/bash.out" 2>"$T/bash.err"
	check_answers "bash (bash-completion)" "$T/bash.out"
else
	echo "completions: bash-completion is not installed: checking plain bash only"
fi
"${shell[@]}" bash --norc --noprofile "$T/ask.bash" "$COMP/kmsg.bash" \
	<"$T/queries" >"$T/bash-plain.out" 2>"$T/bash.err"
check_answers "bash (plain)" "$T/bash-plain.out"

# ---- zsh -------------------------------------------------------------------

cat >"$T/ask.zsh" <<'EOF'
# zsh -f ask.zsh COMPLETION_DIR OUT < queries
zmodload zsh/zpty zsh/zselect || exit 3
dir=$1 out=$2 setup=$2.setup
: >$out
cat >$setup <<SETUP
PS1= RPS1= PS2=
unsetopt beep
bindkey -e
fpath=(${(q)dir} \$fpath)
autoload -Uz compinit && compinit -u -D
compadd() {
  local a suffix= next=0
  for a in "\$@"; do
    [[ \$a == (-|--) ]] && break
    # a question (-O, -A, -D) adds nothing: pass it on
    [[ \$a == -[OAD]* ]] && { builtin compadd "\$@"; return; }
    # the suffix (-S .) is part of what the user gets
    (( next )) && { suffix=\$a; next=0; continue }
    [[ \$a == -S ]] && next=1
    [[ \$a == -S?* ]] && suffix=\${a#-S}
  done
  local -a hits
  builtin compadd -O hits "\$@"
  (( \$#hits )) && print -rl -- \${^hits}\$suffix >> ${(q)out}
  builtin compadd "\$@"
}
_ask_complete() {
  _main_complete
  compstate[list]= compstate[insert]=
  print -r -- @@END@@ >> ${(q)out}
}
zle -C ask-complete complete-word _ask_complete
bindkey '^I' ask-complete
# ready when the line editor is: what is typed before it starts is read
# by the terminal's cooked mode, where ^U kills it
zle-line-init() {
  print -r -- @@END@@ >> ${(q)out}
  zle -D zle-line-init
}
zle -N zle-line-init
SETUP
zpty z env TERM=xterm zsh -f -i || exit 3
zpty -w z "source ${(q)setup}"
# wait_for N: until the file has N end marks (10 s at most)
wait_for() {
  local i junk
  local -a lines marks
  for i in {1..1000}; do
    while zpty -rt z junk 2>/dev/null; do :; done
    lines=("${(@f)$(<$out)}")
    marks=(${(M)lines:#@@END@@})
    (( $#marks >= $1 )) && return 0
    zselect -t 1
  done
  return 1
}
wait_for 1 || { print -u2 "zsh did not start"; exit 4 }
n=1
while IFS= read -r q; do
  zpty -w -n z "$q"$'\t'
  n=$((n + 1))
  wait_for $n || { print -u2 "zsh gave no answer to: $q"; exit 5 }
  zpty -w -n z $'\C-u'
done
zpty -d z
# the first mark was zsh's being ready
sed -i 1d $out
EOF

if command -v zsh >/dev/null; then
	case_ "asking zsh"
	"${shell[@]}" timeout 120 zsh -f "$T/ask.zsh" "$COMP" "$T/zsh.out" <"$T/queries" 2>"$T/zsh.err" ||
		fail "asking zsh failed: $(head -c 300 "$T/zsh.err")"
	check_answers zsh "$T/zsh.out"
else
	echo "completions: zsh is not installed: its completion is not checked"
fi

# ---- fish ------------------------------------------------------------------

if command -v fish >/dev/null; then
	case_ "asking fish"
	"${shell[@]}" fish --no-config -c 'source $argv[1]
		for q in $argv[2..]
			complete -C"$q"
			echo @@END@@
		end' "$COMP/kmsg.fish" "${queries[@]}" >"$T/fish.out" 2>"$T/fish.err" ||
		fail "asking fish failed: $(head -c 300 "$T/fish.err")"
	check_answers fish "$T/fish.out"
else
	echo "completions: fish is not installed: its completion is not checked"
fi

finish
