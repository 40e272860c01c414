#!/bin/bash
# man.sh - the manual pages are lint-clean, name the version kmsg --version
# prints, and kmsg(1) documents the tool
# as it is: every subcommand that "kmsg --help" lists has a section and a
# synopsis line, and every option that "kmsg options CMD" prints is the
# tag of an item in CMD's section (or in FORMAT AND FILTER OPTIONS, for the
# commands whose section refers to it), showing an argument exactly when
# the option takes one; and no item documents an option the command does
# not have.
. "$(dirname "$0")/lib.sh.inc"

MAN=$SRC/man
PAGE=$MAN/kmsg.1

case_ "mandoc -Tlint is clean"
if command -v mandoc >/dev/null; then
	for p in kmsg.1 kmsg.5 libkmsg.3; do
		mandoc -Tlint "$MAN/$p" >"$T/lint" 2>&1
		if [ -s "$T/lint" ]; then
			fail "mandoc -Tlint $p: $(head -c 500 "$T/lint")"
		else
			ok
		fi
	done
else
	echo "man: mandoc is not installed: the pages are not linted"
fi

commands=$("$KMSG" --help | awk '/^Commands:/ { on = 1; next }
	on && /^  [a-z]/ { print $1 } on && /^$/ { exit }')
[ -n "$commands" ] || fail "kmsg --help lists no commands"

# section TITLE: the lines of the section (.SH) or subsection (.SS) whose
# title is TITLE, up to the next one of the same or a higher level
section() {
	awk -v title="$1" '
		function name(line) { sub(/^\.S[SH] +/, "", line); gsub(/"/, "", line); return line }
		on && /^\.SH/ { exit }
		on && /^\.SS/ && level == "SS" { exit }
		/^\.S[SH] / && name($0) == title { on = 1; level = substr($0, 2, 2); next }
		on { print }' "$PAGE"
}

# tags: the tags of the items (the line after each .TP) on stdin, with
# fonts and roff escapes taken out: "-p, --priority=prio"
tags() {
	awk 'tp { print; tp = 0 } /^\.TP/ { tp = 1 }' |
		sed -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.B[IR]* //' -e 's/"//g'
}

# kind TAG OPTION: what the tag shows after the option: "optarg" for
# [=arg], "arg" for =arg or " arg", "-" for nothing
kind() {
	local rest=${1#*"$2"}
	case $rest in
	"[="*) echo optarg ;;
	=* | " "[a-zA-Z]*) echo arg ;;
	*) echo - ;;
	esac
}

shared=$(section "FORMAT AND FILTER OPTIONS")
[ -n "$shared" ] || fail "kmsg.1 has no section FORMAT AND FILTER OPTIONS"

for c in $commands; do
	case_ "kmsg $c is documented"
	text=$(section "kmsg $c")
	if [ -z "$text" ]; then
		fail "kmsg.1 has no section .SS \"kmsg $c\""
		continue
	fi
	ok
	grep -q "^\.B kmsg $c\$" "$PAGE" || fail "kmsg.1's SYNOPSIS has no line for kmsg $c"
	case $text in
	*"FORMAT AND FILTER OPTIONS"*) text+=$'\n'$shared ;;
	esac
	tags <<<"$text" >"$T/tags"
	"$KMSG" options "$c" >"$T/options"
	while read -r short long want; do
		# documented as the tag of an item, the long form if it has one
		opt=$long
		[ "$long" = --- ] && opt=$short
		tag=$(grep -E -- "(^|[ ,])$opt($|[]=[ ,|])" "$T/tags" | head -1)
		if [ -z "$tag" ]; then
			fail "kmsg.1 documents no $opt of kmsg $c"
			continue
		fi
		ok
		if [ "$short" != - ] && [ "$long" != --- ]; then
			case $tag in
			"$short, $long"*) ok ;;
			*) fail "kmsg.1: the item of kmsg $c $long should be tagged '$short, $long...': [$tag]" ;;
			esac
		fi
		expect_eq "$want" "$(kind "$tag" "$opt")" "kmsg.1's tag [$tag] for kmsg $c $opt shows an argument"
	done <"$T/options"
	# and no item for an option the command does not have
	grep -oE -- "(^|[ ,])--?[a-zA-Z][a-z-]*" "$T/tags" | tr -d ' ,' | sort -u |
		while read -r opt; do
			awk -v o="$opt" '$1 == o || $2 == o { f = 1 } END { exit !f }' "$T/options" ||
				echo "$opt"
		done >"$T/stale"
	if [ -s "$T/stale" ]; then
		fail "kmsg.1 documents options kmsg $c does not have: $(tr '\n' ' ' <"$T/stale")"
	else
		ok
	fi
done

# The version is written in project() and reaches the tool and the pages
# made for installing (in the build directory, beside the binary) from
# there: their title lines must say what the tool says.
case_ "each installed page's title line names the version kmsg --version prints"
version=$("$KMSG" --version)
for p in kmsg.1 kmsg.5 libkmsg.3; do
	built=$(dirname "$KMSG")/man/$p
	expect_eq "$version" "$(grep -m1 '^\.TH' "$built" | grep -o '"kmsg [^"]*"' | tr -d '"')" \
		"version in $p's .TH"
done

case_ "SEE ALSO"
for ref in 'dmesg (1)' 'logger (1)' 'kmsg (5)' 'libkmsg (3)'; do
	expect_grep "^\.BR $ref" "$PAGE"
done

finish
