#!/bin/bash
# boots.sh - kmsg read on a log that spans boots, as journalctl is used:
# -b, --list-boots, the line between boots, -n, --reverse.  The records of
# two earlier boots are written by kmsg-boots (tests/boots.c) as their
# writers would have, those of this boot by kmsg emit.
. "$(dirname "$0")/lib.sh.inc"

BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
A=aaaa000011112222 B=aaab000011112222
# this boot's id as records carry it: the first 16 hex digits of boot_id
C=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-16)

"$BOOTS" "$KMSG_FILE" $A 1700000000 3 || fail "kmsg-boots failed"
"$BOOTS" "$KMSG_FILE" $B 1700100000 4 || fail "kmsg-boots failed"
"$KMSG" emit one
"$KMSG" emit -p err bad
"$KMSG" emit two

# read ARGS...: kmsg read ARGS, its output in $T/out, joined by '|' in $got
read_() {
	"$KMSG" read "$@" >"$T/out" 2>"$T/err"
	got=$(paste -sd'|' "$T/out")
}
a() { echo "boot $A record $1"; }
b() { echo "boot $B record $1"; }

case_ "a line where another boot's records begin"
sed "s/@C@/$C/" "$EXPECTED/read-boots.txt" >"$T/want"
"$KMSG" read -t >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "-q and -r print no such line"
read_ -q -t
expect_eq "$(a 0)|$(a 1)|$(a 2)|$(b 0)|$(b 1)|$(b 2)|$(b 3)|one|bad|two" "$got"
read_ -r
expect_eq 0 "$(grep -c -- '-- Boot' "$T/out")" "boot lines with -r"
read_ -J
expect_eq 0 "$(grep -c -- '-- Boot' "$T/out")" "boot lines in JSON"

case_ "deltas and reltime never span two boots"
read_ -d
expect_grep "^\[    1.000000 <    0.000000>\] $(b 0)\$" "$T/out"
expect_grep "<    0.000000>\] one\$" "$T/out"
expect_grep "^\[    1.500000 <    0.500000>\] $(b 1)\$" "$T/out"
read_ -e
expect_grep "^\[Nov16 02:00\] $(b 0)\$" "$T/out"
expect_grep "^\[  +0.500000\] $(b 1)\$" "$T/out"

case_ "--list-boots"
read_ --list-boots
expect_eq "IDX BOOT ID          FIRST ENTRY                 LAST ENTRY                  RECORDS" \
	"$(sed -n 1p "$T/out")"
expect_eq " -2 $A Tue 2023-11-14 22:13:20 UTC Tue 2023-11-14 22:13:22 UTC       3" \
	"$(sed -n 2p "$T/out")"
expect_eq " -1 $B Thu 2023-11-16 02:00:00 UTC Thu 2023-11-16 02:00:03 UTC       4" \
	"$(sed -n 3p "$T/out")"
expect_grep "^  0 $C [A-Z][a-z][a-z] 20[0-9-]* [0-9:]* UTC [A-Z].* UTC       3\$" "$T/out"
expect_eq 4 "$(wc -l <"$T/out")" "lines"

case_ "-b by offset and by id"
read_ -t -b -1
expect_eq "$(b 0)|$(b 1)|$(b 2)|$(b 3)" "$got" "-b -1"
read_ -t --boot -2
expect_eq "$(a 0)|$(a 1)|$(a 2)" "$got" "--boot -2"
read_ -t -b 1
expect_eq "$(a 0)|$(a 1)|$(a 2)" "$got" "-b 1 (the oldest)"
read_ -t -b 2
expect_eq "$(b 0)|$(b 1)|$(b 2)|$(b 3)" "$got" "-b 2"
read_ -t -b
expect_eq "one|bad|two" "$got" "-b"
read_ -t -b 0
expect_eq "one|bad|two" "$got" "-b 0"
read_ -t --boot=-0
expect_eq "one|bad|two" "$got" "--boot=-0"
read_ -t -b aaab
expect_eq "$(b 0)|$(b 1)|$(b 2)|$(b 3)" "$got" "-b aaab"
read_ -t -b AAAA0000-1111-2222-3333-444455556666
expect_eq "$(a 0)|$(a 1)|$(a 2)" "$got" "-b with a whole boot_id"
read_ -t -b "$C" -l err
expect_eq "bad" "$got" "-b this boot's id, with a filter"

case_ "-b errors"
expect_status 1 "$KMSG" read -b -3
expect_grep "no boot -3: the log holds 3 boots" "$T/err"
expect_status 1 "$KMSG" read -b 4
expect_status 1 "$KMSG" read -b aaa
expect_grep "more than one boot's id begins with aaa" "$T/err"
expect_status 1 "$KMSG" read -b 123456789
expect_grep "no boot with an id beginning with 123456789" "$T/err"
expect_status 2 "$KMSG" read -b zz
expect_grep "'zz' is neither an offset nor a boot id" "$T/err"
expect_status 2 "$KMSG" read -c -b
expect_status 2 "$KMSG" read --list-boots -C

case_ "-n: the last N records that pass the filters"
read_ -t -n 3
expect_eq "one|bad|two" "$got" "-n 3"
read_ -t -q -n 4
expect_eq "$(b 3)|one|bad|two" "$got" "-n 4"
read_ -t -n 1 -l err
expect_eq "bad" "$got" "-n 1 -l err"
read_ -t -n 5 -l err
expect_eq "bad" "$got" "fewer than N pass"
read_ -t -n 2 -b -1
expect_eq "$(b 2)|$(b 3)" "$got" "-n 2 -b -1"
read_ -t -n 100 -b -2
expect_eq "$(a 0)|$(a 1)|$(a 2)" "$got" "-n beyond the boot"
read_ -n 0
expect_eq "" "$got" "-n 0"
read_ -J -n 2
python3 -m json.tool "$T/out" >/dev/null && ok || fail "-J -n 2: not JSON: $got"
expect_eq 2 "$(grep -c '"msg"' "$T/out")" "records in -J -n 2"
expect_status 2 "$KMSG" read -n x
expect_grep "'x' is not a number" "$T/err"
expect_status 2 "$KMSG" read -n 99999999999999999999
expect_grep "is more than any log holds: leave -n out for every record" "$T/err"

case_ "--reverse"
read_ -t --reverse -n 3
expect_eq "two|bad|one" "$got" "--reverse -n 3"
read_ -t --reverse -n 4
expect_eq "two|bad|one|-- Boot $B --|$(b 3)" "$got" "--reverse across a boot"
"$KMSG" read -q -t >"$T/fwd"
"$KMSG" read -q -t --reverse >"$T/rev"
expect_eq "$(tac "$T/fwd")" "$(cat "$T/rev")" "--reverse is the whole log backwards"
read_ -t --reverse -b -2
expect_eq "$(a 2)|$(a 1)|$(a 0)" "$got" "--reverse -b -2"

case_ "--reverse of a line left open (a record without fields)"
"$KMSG" emit -F "$T/open.log" "whole"
"$KMSG" emit -F "$T/open.log" --no-newline "open"
"$KMSG" read -F "$T/open.log" -t --reverse >"$T/out" 2>"$T/err" || fail "status $?: $(cat "$T/err")"
expect_eq "open|whole" "$(paste -sd'|' "$T/out")" "--reverse"

case_ "--reverse of a big log holds what it keeps in a file, not in memory"
# 400,000 records of 100 bytes: 60 MiB kept, of which 16 MiB in memory
seq 400000 | sed 's/$/ padding the record to about a hundred bytes of text, as a long log line is/' |
	"$KMSG" emit -F "$T/big" --log-size=128M
fwd_kib=$(peak_kib "$KMSG" read -F "$T/big" -t)
mv "$T/out" "$T/fwd"
rev_kib=$(peak_kib "$KMSG" read -F "$T/big" -t --reverse)
expect_eq "" "$(tac "$T/fwd" | cmp - "$T/out" 2>&1)" "--reverse of 400,000 records is the log backwards"
expect_eq 400000 "$(wc -l <"$T/out")" "records printed"
# the log's mapped pages count in both; what --reverse keeps, only in one
small_enough "$((rev_kib - fwd_kib))" 32768
TMPDIR=$T/none expect_status 1 "$KMSG" read -F "$T/big" --reverse
expect_grep "cannot keep the records to print in a temporary file in $T/none: No such file or directory (set TMPDIR" "$T/err"
TMPDIR=$T/none expect_status 0 "$KMSG" read --reverse  # a small log needs no file

case_ "kmsg follow says where another boot begins too, -n as before"
"$KMSG" follow -t -n 4 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for '^two$' "$T/f.out" || fail "follow printed nothing"
stop_bg $fpid INT
expect_eq "$(b 3)|-- Boot $C --|one|bad|two" "$(paste -sd'|' "$T/f.out")"
"$KMSG" follow -q -t -n 2 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for '^two$' "$T/f.out" || fail "follow printed nothing"
stop_bg $fpid INT
expect_eq "bad|two" "$(paste -sd'|' "$T/f.out")" "follow -q -n 2"

case_ "a dump keeps its boots; dmesg text has none"
"$KMSG" dump -o "$T/d.gz"
read_ -F "$T/d.gz" -t -b -1
expect_eq "$(b 0)|$(b 1)|$(b 2)|$(b 3)" "$got" "-b -1 of a dump"
printf '<6>[    1.000000] text\n' >"$T/text"
expect_status 1 "$KMSG" read -F "$T/text" -n 1
expect_grep "is dmesg text" "$T/err"

case_ "cleared records stay cleared"
"$KMSG" clear
read_ -t -n 5
expect_eq "" "$got" "-n after clear"
read_ -t -b -1
expect_eq "" "$got" "-b -1 after clear"
"$KMSG" emit three
read_ -t -n 5
expect_eq "three" "$got" "-n after clear and a new record"
read_ --list-boots
expect_eq 4 "$(wc -l <"$T/out")" "--list-boots lists cleared boots too"

finish
