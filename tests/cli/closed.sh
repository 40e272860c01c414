#!/bin/bash
# closed.sh - kmsg run with standard input, output or error closed, as
# daemons, cron jobs and "cmd 2>&-" run it.  The first file a process opens
# takes the lowest free descriptor: a log that landed on 0, 1 or 2 would
# take kmsg's own output as records, or be read as its input.  Nothing here
# may change a log except the records asked for.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
"$KMSG" emit -F "$L" --log-size 64K first || fail "kmsg emit failed: the rest needs it"
printf 'r%d\n' $(seq 1 200) | "$KMSG" emit -F "$L"

# records: the log as "seq;text" lines, read with every descriptor open
records() { "$KMSG" read -F "$L" -o kmsg | sed -n -E 's/^[0-9]+,([0-9]+),[0-9]+,[^;]*;/\1;/p'; }
# snapshot, then unchanged WHAT or added WANT: the log holds what it held at
# the snapshot, or that plus one record with the next number and text WANT
snapshot() { records >"$T/before"; }
added() {
	local n
	n=$(tail -1 "$T/before" | cut -d';' -f1)
	{ cat "$T/before"; echo "$((n + 1));$1"; } >"$T/want"
	records >"$T/after"
	if cmp -s "$T/want" "$T/after"; then ok; else
		fail "the log should hold one more record, '$1':"; diff "$T/want" "$T/after" | head -5 >&2; fi
}
unchanged() {
	records >"$T/after"
	if cmp -s "$T/before" "$T/after"; then ok; else
		fail "$1 changed the log:"; diff "$T/before" "$T/after" | head -5 >&2; fi
}

case_ "emit -s with stderr closed: the record is stored, the echo goes nowhere"
snapshot
"$KMSG" emit -F "$L" -s echoed 2>&-
expect_eq 0 $? "exit status"
added echoed

case_ "an error with stderr closed leaves the log alone"
snapshot
"$KMSG" emit -F "$L" "$(head -c 2000 /dev/zero | tr '\0' x)" 2>&-
expect_eq 1 $? "exit status"
"$KMSG" emit -F "$L" -p nonsense x 2>&-
expect_eq 1 $? "exit status"
unchanged "emit's error messages"

case_ "emit with stdout closed succeeds"
snapshot
"$KMSG" emit -F "$L" quiet >&-
expect_eq 0 $? "exit status"
added quiet

case_ "emit with stdin closed writes no record, and says why"
# (logger reads its own socket then, which the kernel gives fd 0, and hangs)
snapshot
"$KMSG" emit -F "$L" <&- 2>"$T/err"
expect_eq 1 $? "exit status"
unchanged "emit <&-"
expect_grep "standard input: is closed" "$T/err"
"$KMSG" emit -F "$L" "as an argument" <&-
expect_eq 0 $? "a message given as an argument needs no input"

case_ "read -c with stdout closed: an error, nothing cleared"
snapshot
"$KMSG" read -F "$L" -c >&- 2>"$T/err"
expect_eq 1 $? "exit status"
expect_grep "standard output is closed" "$T/err"
unchanged "read -c >&-"
expect_eq "$(wc -l <"$T/before")" "$("$KMSG" read -F "$L" | wc -l)" "records still shown by read"

case_ "read, stat, dump, follow with stdout closed say so"
for cmd in read stat dump; do
	"$KMSG" $cmd -F "$L" >&- 2>"$T/err"
	expect_eq 1 $? "exit status of $cmd"
	expect_grep "standard output is closed" "$T/err"
done
timeout 5 "$KMSG" follow -F "$L" >&- 2>"$T/err"
expect_eq 1 $? "exit status of follow"
expect_grep "standard output is closed" "$T/err"
unchanged "read, stat, dump and follow"

case_ "read with stderr closed prints the log and leaves it alone"
snapshot
"$KMSG" read -F "$L" -t 2>&- >"$T/out"
expect_eq 0 $? "exit status"
expect_eq "$(wc -l <"$T/before")" "$(wc -l <"$T/out")" "lines"
unchanged "read 2>&-"

case_ "all three closed: emit still stores exactly its message"
snapshot
"$KMSG" emit -F "$L" -s -t tag all-closed <&- >&- 2>&-
expect_eq 0 $? "exit status"
added "tag: all-closed"

case_ "a shell that execs kmsg with stderr closed"
snapshot
bash -c "exec 2>&-; exec \"$KMSG\" emit -F \"$L\" -s from-exec"
added from-exec

case_ "a new log made with stderr closed is a log"
"$KMSG" emit -F "$T/new" --log-size 16K -s fresh 2>&-
expect_eq "fresh" "$("$KMSG" read -F "$T/new" -t | head -c 200)"


case_ "reading standard input that is closed: an error, not an empty input"
for args in "read -F -" "read -K -" "dump -F -" "stat -F -"; do
	"$KMSG" $args <&- >"$T/out" 2>"$T/err"
	expect_eq 1 $? "exit status of $args <&-"
	expect_grep "standard input: is closed" "$T/err"
done
bash -c "exec <&-; exec \"$KMSG\" read -K -" >"$T/out" 2>"$T/err"
expect_eq 1 $? "exit status of a shell that execs read -K - with stdin closed"
expect_grep "standard input: is closed" "$T/err"
"$KMSG" read -K - </dev/null >"$T/out" 2>"$T/err"
expect_eq 0 $? "an empty standard input is no error"

finish
