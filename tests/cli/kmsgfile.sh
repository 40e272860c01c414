#!/bin/bash
# kmsgfile.sh - kmsg read -K (records in the /dev/kmsg format) and -p
# (--force-prefix).  The kernel's records, one a file, print as dmesg
# 2.38.1 prints them when it reads that record as /dev/kmsg: the expected
# output was made so (see oracle() below, which also checks it live when
# it can: root, unshare and dmesg).  A log read back from its -o kmsg
# output prints as the log in every format; bad lines are skipped and
# named; memory stays bounded.
. "$(dirname "$0")/lib.sh.inc"

# The kernel's records (one a file, as the oracle takes them): text of
# several lines, an empty one among them, fields, a fragment,
# escapes, a time past a day.
mkdir "$T/k"
printf '12,1,1000000,-;usb 1-1: first line\\x0asecond line\\x0a\\x0a  third: indented\\x0a\n' >"$T/k/lines"
printf '3,7,2500000,-;\\x0a\\x0a\n' >"$T/k/allnl"
# (no caller: 2.38 shows none, 2.40 and later a column, checked below)
printf '6,8,3000000,-;pci 0000:00:01.0: BAR 0\\x0a  more: detail\\x0aend\n SUBSYSTEM=pci\n DEVICE=+pci:0000:00:01.0\n' >"$T/k/fields"
printf '4,9,4000000,c;segfault at 0\\x0aline two\n' >"$T/k/cont"
printf '0,10,5000000,-;tab\\x09esc\\x1b\\x0anext\\x5c \\xc3\\xa9t\\xc3\\xa9\n' >"$T/k/esc"
printf '30,11,99999999999,-;daemon: big\\x0atime\n' >"$T/k/big"
CASES="lines allnl fields cont esc big"
# Not -r nor -J: 2.38 computes their priority wrongly (read.sh).
OPTS=("" "-p" "-x" "-p -x" "-p -d" "-p -t" "-p -x -t" "-p --time-format delta"
      "-p --color=always -x" "--color=always" "-p --noescape" "-p -d --color=always")
# and with the time of this machine's boot, checked live only
OPTS_LIVE=("-p -e" "-p -T" "-p --time-format iso" "-p --color=always -e" "-e")

# each CMD: CMD FILE OPTS for every case and option set, under a title line
each() {
	local c o
	shift 0
	for o in "${OPTS[@]}"; do
		for c in $CASES; do
			echo "== $c $o"
			"$@" "$T/k/$c" $o 2>&1
		done
	done
}
kmsg_k() { local f=$1; shift; "$KMSG" read -K "$f" "$@"; }
# dmesg reading FILE as /dev/kmsg, in a mount namespace of its own
oracle() { local f=$1; shift; unshare -m sh -c 'mount --bind "$0" /dev/kmsg && exec dmesg "$@"' "$f" "$@"; }

case_ "the kernel's records print as dmesg 2.38 prints them"
each kmsg_k >"$T/got"
expect_file_eq "$EXPECTED/read-kmsgfile-dmesg.txt" "$T/got"

if [ "$(id -u)" = 0 ] && command -v dmesg >/dev/null && command -v unshare >/dev/null &&
   unshare -m true 2>/dev/null; then
	case_ "the same, dmesg live"
	each oracle >"$T/want"
	expect_file_eq "$T/want" "$T/got"
	# kmsg given 2.38's boot time in whole seconds (2.39 and later, and
	# kmsg, keep its microseconds): read off the iso time of a record at 0
	printf '<6>[    0.000000] boot\n' >"$T/boot0.txt"
	iso=$(TZ=UTC "$KMSG" read -F "$T/boot0.txt" --time-format iso)
	OPTS=("${OPTS_LIVE[@]}")
	each oracle >"$T/want"
	KMSG_TEST_BOOT_TIME=$(date -u -d "${iso%%,*}" +%s).000000 each kmsg_k >"$T/got"
	expect_file_eq "$T/want" "$T/got"
else
	echo "kmsgfile: no root, unshare or dmesg: the live check with dmesg skipped" >&2
fi

case_ "an empty --kmsg-file is a usage error"
expect_status 2 "$KMSG" read -K ''
expect_grep "^kmsg: --kmsg-file: an empty path" "$T/err"

case_ "the records of a file, one after the other, and standard input"
for c in $CASES; do cat "$T/k/$c"; done >"$T/all"
"$KMSG" read -K "$T/all" -x >"$T/got"
expect_eq "$(for c in $CASES; do "$KMSG" read -K "$T/k/$c" -x; done)" "$(cat "$T/got")"
expect_eq "$(cat "$T/got")" "$("$KMSG" read -K - -x <"$T/all")" "-K -"
# dmesg -K's files: each record ends in a NUL
tr '\n' '\0' <"$T/all" | sed 's/\x00 /\n /g; s/\x00/\n\x00/g' >"$T/nul"
expect_eq "$(cat "$T/got")" "$("$KMSG" read -K "$T/nul" -x 2>&1)" "records ended by NULs"
expect_eq "$(printf '12,1,1000000,-;a\r\n6,2,2000000,-;b\r\n SUBSYSTEM=x\r\n' | "$KMSG" read -K - -t --fields)" \
	"$(printf 'a\nb\n SUBSYSTEM=x')" "CRLF line ends"

# A log of two earlier boots and this one, with fields, pids, callers,
# lines of several lines, escapes and a line written in two parts.
BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
L=$T/log
"$BOOTS" "$L" aaaa000011112222 1700000000 3 || fail "kmsg-boots failed"
"$BOOTS" "$L" aaab000011112222 1700100000 2 || fail "kmsg-boots failed"
"$KMSG" emit -F "$L" -p err "an error"
"$KMSG" emit -F "$L" -t food --field DISH=soup --field DISH=stew --field 'NOTE=a\b' "warm"
"$KMSG" emit -F "$L" --id=4242 -p local0.debug "$(printf 'first\nsecond\n  third: x')"
"$KMSG" emit -F "$L" "$(printf 'tab\there esc\033 caf\303\251 bad\377 cr\r back\\slash')"
"$KMSG" emit -F "$L" --caller=77 --no-newline "part one, "
"$KMSG" emit -F "$L" --caller=77 --cont "part two"
"$KMSG" emit -F "$L" ""

case_ "read -o kmsg then read -K: the same output in every format"
"$KMSG" read -F "$L" -o kmsg >"$T/rt.k" || fail "read -o kmsg"
RT=("-o json" "-o json-pretty" "-o json-seq" "-o kmsg" "" "-x" "-r" "-T" "-e" "-d"
    "--time-format iso" "-t" "-J" "-x -J" "--fields" "-p" "-p -x -e" "-q" "-L always"
    "-l err+" "-f local0" "--match DISH=stew" "--since @1700100000 --until @1700100001"
    "-g SECOND" "--pid 4242" "-o json --output-fields seq,pid,DISH")
for o in "${RT[@]}"; do
	"$KMSG" read -F "$L" $o >"$T/want" 2>&1
	"$KMSG" read -K "$T/rt.k" $o >"$T/got" 2>&1
	CASE="read -o kmsg then read -K $o"
	expect_file_eq "$T/want" "$T/got"
done
case_ "the JSON of both holds the numbering, times, boot ids and pids"
"$KMSG" read -K "$T/rt.k" -o json >"$T/j"
expect_eq 5 "$(grep -c '"boot_id":"aaa[ab]000011112222"' "$T/j")" "records of the two earlier boots"
expect_eq 1 "$(grep -c '"claimed_pid":4242' "$T/j")" "the record of pid 4242"
expect_eq 1 "$(grep -c '"time":"2023-11-14T22:13:20.000000000Z"' "$T/j")" "an earlier boot's wall-clock time"
"$KMSG" read -K "$T/rt.k" -o json | python3 -c '
import json, sys
recs = [json.loads(l) for l in sys.stdin]
assert all(r["seq_id"] and r["time_ns"] and r["seq"] for r in recs), recs
print(len(recs))' >"$T/n" 2>"$T/err" || fail "python: $(cat "$T/err")"
expect_eq 11 "$(cat "$T/n")" "records parsed by a JSON parser"

# dmesg -K as util-linux 2.42 reads a file (print_kmsg_file() and
# parse_kmsg_record() of sys-utils/dmesg.c in v2.42.2): records that end in
# a NUL, of which the first line is read and the rest is the record's own,
# a header without flags, and the caller column it prints for each record
# with a caller, "[%*s] " as wide as /proc/sys/kernel/pid_max's text with
# its newline (11 without it), and JSON's "caller" after "time"
printf '%b' '6,0,0,-,caller=T1;first\n SUBSYSTEM=usb\n DEVICE=c189:1\n\0' \
	'\n 4,1,1500000,-,caller=C2;second\nmore of it\n lower=case\n\0' \
	'30,2,2250000;third\n' >"$T/nul42"
w=$(wc -c </proc/sys/kernel/pid_max 2>/dev/null || echo 11)
case_ "dmesg 2.42 -K: NUL-separated records, their other lines, the caller column"
"$KMSG" read -K "$T/nul42" >"$T/got" 2>"$T/err"
printf '[    0.000000] [%*s] first\n[    1.500000] [%*s] second\n[    2.250000] third\n' \
	"$w" T1 "$w" C2 >"$T/want"
expect_file_eq "$T/want" "$T/got"
expect_eq "" "$(cat "$T/err")" "nothing said of the records' own lines"
"$KMSG" read -K "$T/nul42" -r >"$T/got"
printf '<6>[    0.000000] [%*s] first\n<4>[    1.500000] [%*s] second\n<30>[    2.250000] third\n' \
	"$w" T1 "$w" C2 >"$T/want"
expect_file_eq "$T/want" "$T/got"
# the text's later lines indented past the caller column, or with -p the
# time and the caller again on each
printf '6,8,3000000,-,caller=T42;pci 0000:00:01.0: BAR 0\\x0a  more: detail\\x0aend\n' >"$T/caller42"
"$KMSG" read -K "$T/caller42" >"$T/got"
printf '[    3.000000] [%*s] pci 0000:00:01.0: BAR 0\n%*s  more: detail\n%*send\n' \
	"$w" T42 $((15 + w + 3)) '' $((15 + w + 3)) '' >"$T/want"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -K "$T/caller42" -p -d >"$T/got"
printf '[    3.000000 <    0.000000>] [%*s] %s\n' "$w" T42 'pci 0000:00:01.0: BAR 0' \
	"$w" T42 '  more: detail' "$w" T42 end >"$T/want"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -K "$T/nul42" -x >"$T/got"
printf 'kern  :info  : [    0.000000] [%*s] first\nkern  :warn  : [    1.500000] [%*s] second\ndaemon:info  : [    2.250000] third\n' \
	"$w" T1 "$w" C2 >"$T/want"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -K "$T/nul42" -J >"$T/got"
printf '%s\n' '{' '   "dmesg": [' '      {' '         "pri": 6,' \
	'         "time":     0.000000,' '         "caller": "T1",' '         "msg": "first"' \
	'      },{' '         "pri": 4,' '         "time":     1.500000,' '         "caller": "C2",' \
	'         "msg": "second"' '      },{' '         "pri": 30,' '         "time":     2.250000,' \
	'         "msg": "third"' '      }' '   ]' '}' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "bad lines are skipped and named, the records around them printed"
printf '6,1,1000000,-;one\nnot a record\n6,x,2000000,-;bad seq\n FIELD=of the bad one\n6,3,3000000,-;three\n lower=case\n  \n _NOPE=1\n6,4,4000000,-;four\n' |
	"$KMSG" read -K - -t --fields >"$T/out" 2>"$T/err"
expect_eq 0 "$?" "exit status"
expect_eq "$(printf 'one\nthree\nfour')" "$(cat "$T/out")"
expect_eq "kmsg: standard input: line 2: not a record (PRIO,SEQ,USEC,FLAGS;TEXT) nor a field (\" KEY=VALUE\"): skipped
kmsg: standard input: line 3: no sequence number after the priority: skipped" "$(cat "$T/err")"
printf ' K=v\n999,1,0,-;x\n6,2,0,-;ok\n' | "$KMSG" read -K - -t >"$T/out" 2>"$T/err"
expect_eq "ok" "$(cat "$T/out")"
expect_grep "line 1: a field line with no record before it: skipped" "$T/err"
expect_grep "line 2: no priority (0 to 191) where a record begins: skipped" "$T/err"
for i in $(seq 25); do echo "garbage $i"; done | "$KMSG" read -K - >"$T/out" 2>"$T/err"
expect_eq 11 "$(wc -l <"$T/err")" "ten bad lines named, then a count"
expect_eq "kmsg: standard input: 25 lines skipped in all (the first 10 named above)" "$(tail -1 "$T/err")"

case_ "a line longer than 1 MiB is cut short there"
{ printf '6,1,0,-;'; head -c 1200000 /dev/zero | tr '\0' a; printf '\n6,2,0,-;next\n'; } |
	"$KMSG" read -K - -t >"$T/out" 2>"$T/err"
expect_eq "kmsg: standard input: line 1: longer than 1 MiB: cut short there, the rest skipped" "$(cat "$T/err")"
expect_eq "1048568 next" "$(head -1 "$T/out" | tr -d '\n' | wc -c) $(tail -1 "$T/out")"

case_ "memory stays bounded whatever the size of the input"
if [ -x /usr/bin/time ]; then
	awk 'BEGIN { for (i = 0; i < 400000; i++)
		printf "6,%d,%d,-;a record of some length, number %d, to fill the file\n SUBSYSTEM=x\n", i, i, i }' >"$T/big.k"
	# against the same binary reading one record: a sanitizer build
	# starts at 20 MiB on some machines, a plain one at 2-3 MiB
	printf '6,1,1,-;one\n' >"$T/one.k"
	/usr/bin/time -f %M "$KMSG" read -K "$T/one.k" -x >/dev/null 2>"$T/rss"
	base=$(tail -1 "$T/rss")
	/usr/bin/time -f %M "$KMSG" read -K "$T/big.k" -x >/dev/null 2>"$T/rss"
	rss=$(tail -1 "$T/rss")
	[ $((rss - base)) -lt 12000 ] && ok ||
		fail "read -K of $(du -m "$T/big.k" | cut -f1) MiB took $rss KiB, $base KiB for one record"
fi

case_ "usage errors and inputs -K does not take"
expect_status 2 "$KMSG" read -K "$T/all" -F "$L"
expect_grep "kmsg: --kmsg-file: cannot be used with --file" "$T/err"
expect_grep "Try 'kmsg read --help'" "$T/err"
expect_status 2 "$KMSG" read -K "$T/all" -n 3
expect_grep "kmsg: --kmsg-file: has no boots to list" "$T/err"
expect_status 2 "$KMSG" read -K "$T/all" -c
expect_status 1 "$KMSG" read -K "$L"
expect_eq "kmsg: $L: is a kmsg log, not /dev/kmsg records: read it with --file" "$(cat "$T/err")"
expect_status 1 "$KMSG" read -K "$T/none"
expect_eq "kmsg: $T/none: No such file or directory" "$(cat "$T/err")"
expect_status 1 "$KMSG" read -K /dev/zero
expect_grep "holds only NUL bytes; --kmsg-file takes /dev/kmsg records" "$T/err"

case_ "-p on a log (read and follow) and on dmesg text: each line gets the prefix"
"$KMSG" read -F "$L" -p -x -l debug >"$T/got"
expect_eq "local0:debug : [" "$(sed -n 2p "$T/got" | cut -c1-16)" "the second line's prefix"
expect_eq 3 "$(grep -c '^local0:debug : \[ *[0-9]*\.[0-9]*\] ' "$T/got")" "lines with the prefix"
"$KMSG" follow -F "$L" -n all -p -x -l debug >"$T/follow" 2>&1 &
pid=$!
wait_for 'third: x' "$T/follow" || fail "follow -p printed nothing"
kill $pid
wait $pid 2>/dev/null
expect_eq "$(cat "$T/got")" "$(cat "$T/follow")" "kmsg follow -p"
printf '<6>[    1.000000] first\nsecond\n<4>[    2.500000] single\n' >"$T/text"
expect_eq "$(printf '[    1.000000] first\n[    1.000000] second\n[    2.500000] single')" \
	"$("$KMSG" read -F "$T/text" -p)"
expect_eq "$(printf '<6>[    1.000000] first\n<6>[    1.000000] second\n<4>[    2.500000] single')" \
	"$("$KMSG" read -F "$T/text" -p -r)" "-p -r"


case_ "-K and -F of a file cut short while read: said, status 1"
# the reader is held by the pipe (its output far larger than a pipe
# holds) while the file is cut short under it, after its first chunk
awk 'BEGIN { for (i = 1; i <= 300000; i++) printf "6,%d,%d,-;record %d\n", i, i, i }' >"$T/cut0"
cp "$T/cut0" "$T/cut"
"$KMSG" read -K "$T/cut" 2>"$T/err" | { head -c 1000 >/dev/null; truncate -s 1000 "$T/cut"; cat >/dev/null; }
expect_eq 1 "${PIPESTATUS[0]}" "-K: exit status"
expect_grep "cut: cut short to 1000 bytes while it was read" "$T/err"
expect_eq "" "$(grep 'not a record' "$T/err")" "no half line taken for a bad record"
cp "$T/cut0" "$T/cut"
"$KMSG" read -K - <"$T/cut" 2>"$T/err" | { head -c 1000 >/dev/null; truncate -s 1000 "$T/cut"; cat >/dev/null; }
expect_eq 1 "${PIPESTATUS[0]}" "-K -: exit status"
expect_grep "standard input: cut short to 1000 bytes" "$T/err"
awk 'BEGIN { for (i = 1; i <= 300000; i++) printf "<6>[    1.000000] text %d\n", i }' >"$T/cut"
"$KMSG" read -F "$T/cut" 2>"$T/err" | { head -c 1000 >/dev/null; truncate -s 1000 "$T/cut"; cat >/dev/null; }
expect_eq 1 "${PIPESTATUS[0]}" "-F: exit status"
expect_grep "cut: cut short to 1000 bytes while it was read" "$T/err"
cp "$T/cut0" "$T/cut"
expect_status 0 "$KMSG" read -K "$T/cut"
expect_eq 300000 "$(wc -l <"$T/out")" "a file left alone: every record"


case_ "-K /dev/kmsg where the kernel restricts it: says why and what to do"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null &&
	[ "$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)" = 1 ] && [ -r /dev/kmsg ]; then
	expect_status 1 timeout 10 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$KMSG" read -K /dev/kmsg
	expect_grep "/dev/kmsg: Operation not permitted: the kernel lets only CAP_SYSLOG" "$T/err"
else
	echo "kmsgfile: not root with dmesg_restrict=1: the restricted /dev/kmsg is not tried"
fi

finish
