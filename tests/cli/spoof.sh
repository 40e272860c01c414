#!/bin/bash
# spoof.sh - output that could pass for something else: kmsg stat's
# "path:" line with a file name that holds terminal sequences or a
# newline, and the record lines that could pass for --show-cursor's.
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

echo "spoof: $passed passed, $failed failed"
[ "$failed" = 0 ]
