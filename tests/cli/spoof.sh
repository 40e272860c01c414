#!/bin/bash
# spoof.sh - output that could pass for something else: kmsg stat's
# "path:" line with a file name that holds terminal sequences or a
# newline, and record lines that could pass for --show-cursor's, in every
# output format, with colours, fields and lines after the first.
. "$(dirname "$0")/lib.sh.inc"

case_ "stat: the path escaped as error messages escape it"
# an OSC sequence (a window title) and a newline that would start a line
N=$T/$'log\e]0;owned\a\nrecords:     999'
"$KMSG" emit -F "$N" --log-size 64K "first" ||
	fail "kmsg emit failed: the rest of this case needs it"
expect_status 0 "$KMSG" stat -F "$N"
grep -q $'[\e\a]' "$T/out" && fail "a control character reached the output"
expect_eq "path:        $T/log\\x1b]0;owned\\x07\\x0arecords:     999" \
	"$(grep '^path:' "$T/out")"
expect_eq "records:     1" "$(grep '^records:' "$T/out")"
# as the errors say it
"$KMSG" stat -F "$N.missing" 2>"$T/err"
expect_grep 'log\\x1b]0;owned\\x07' "$T/err"

case_ "--show-cursor: no record's line passes for the cursor's"
L=$T/log
FAKE='-- cursor: r=00000000000000000000000000000000;s=0000000000000000;i=1'
"$KMSG" emit -F "$L" -- "$FAKE"
"$KMSG" emit -F "$L" -p user.err -- "$FAKE"
"$KMSG" emit -F "$L" "a record of two lines"$'\n'"$FAKE"
"$KMSG" emit -F "$L" --field "K=x"$'\n'"$FAKE" "fields"
"$KMSG" emit -F "$L" "the last"
# cursor_lines FILE: its lines that begin, after any colours, as the cursor's
cursor_lines() { grep -c $'^\(\e\[[0-9;]*m\)*-- cursor: ' "$1"; }
for args in "-t" "-o cat" "-t -x" "-r" "" "-x" "--fields -t" "-o kmsg" \
	    "-J" "-o json" "-t --color=always" "-t --noescape"; do
	# shellcheck disable=SC2086
	"$KMSG" read -F "$L" $args --show-cursor >"$T/out" 2>"$T/err"
	expect_eq 1 "$(cursor_lines "$T/out")" "lines like the cursor's with '$args'"
	expect_eq "-- cursor: r=" "$(tail -1 "$T/out" | cut -c1-13)" "the last line with '$args'"
	grep -q ';i=1$' <<<"$(tail -1 "$T/out")" && fail "the fake cursor is last with '$args'"
done
# the record still reads as it was written: \x2d is the dash dmesg escapes
"$KMSG" read -F "$L" -t --show-cursor >"$T/out"
expect_eq "\x2d${FAKE#-}" "$(head -1 "$T/out")"
# without --show-cursor the text is dmesg's, as it is
"$KMSG" read -F "$L" -t >"$T/out"
expect_eq "$FAKE" "$(head -1 "$T/out")"

case_ "follow --show-cursor: the same"
"$KMSG" follow -F "$L" -n all -t --show-cursor >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for 'the last' "$T/f.out" || fail "follow printed nothing"
stop_bg $fpid INT
expect_eq 1 "$(cursor_lines "$T/f.out")" "lines like the cursor's"
expect_eq "-- cursor: r=" "$(tail -1 "$T/f.out" | cut -c1-13)" "the last line"

echo "spoof: $passed passed, $failed failed"
[ "$failed" = 0 ]
