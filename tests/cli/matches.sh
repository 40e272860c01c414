#!/bin/bash
# matches.sh - kmsg read's and kmsg follow's KEY=value arguments
# (journalctl's matches) and read's --list-values, on a log written by
# kmsg emit with fields, pids, callers and tags: keys that must all match,
# one key twice as either, "+" between groups, the record's members under
# -o json's and journalctl's names, --match and the other filters beside
# them, the usage errors a user sees, and the bounded table of values.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
"$KMSG" emit -F "$L" -t store --id=100 -p user.err --field UNIT=disk "Disk full on /var" &&
"$KMSG" emit -F "$L" -t store --id=100 -p user.info --field UNIT=disk --field CODE=7 \
	"disk check ok" &&
"$KMSG" emit -F "$L" -t net --id=200 -p daemon.warning --field UNIT=net --field UNIT=link \
	"link down" &&
"$KMSG" emit -F "$L" -t net --id=200 -p daemon.info --field UNIT=net "link up" &&
"$KMSG" emit -F "$L" --id=300 --caller=42 -p local0.notice "no tag here" &&
printf 'odd\n' | "$KMSG" emit -F "$L" --id=400 --field "ODD=$(printf 'a\033b\ttwo\nlines \377')" &&
"$KMSG" emit -F "$L" --id=500 --field NOTE=with=equals --field EMPTY= "equals in a value" ||
	fail "kmsg emit failed: the rest of this test needs it"
boot=$(cat /proc/sys/kernel/random/boot_id)

# Each run's arguments, then what kmsg read -t ARGS printed and its status:
# tests/cli/expected/read-matches.txt says what a user should see.
runs=(
	"UNIT=disk"                     # a field
	"UNIT=disk UNIT=net"            # one key twice: either
	"UNIT=disk CODE=7"              # two keys: both
	"UNIT=link"                     # a record with the key twice: either value
	"UNIT=net UNIT=link"            # either, where --match wants both:
	"--match UNIT=net --match UNIT=link"
	"UNIT=disk + claimed_pid=200"          # either group
	"UNIT=disk CODE=7 + UNIT=net PRIORITY=4 + pid=300"
	"SYSLOG_IDENTIFIER=net"         # the tag, as emit -t stores it
	"level=err"                     # members, by -o json's names
	"level=3"
	"level_name=warning"
	"level_name=warn"               # the names -l takes
	"PRIORITY=6"                    # and journalctl's
	"facility=daemon"
	"facility_name=local0"
	"SYSLOG_FACILITY=1"
	"pid=300"
	"claimed_pid=100 claimed_pid=500"
	"caller=42"
	"seq=3"
	"seq=3 seq=5"
	"text=net[200]: link up"
	"MESSAGE=net[200]: link up"
	"MESSAGE=link up"               # the whole text, tag and all
	"NOTE=with=equals"              # the first = ends the key
	"EMPTY="                        # an empty value is a value
	"UNIT="
	"NOPE=1"
	"_BOOT_ID=$boot"                # the whole boot_id, dashes and all
	"_BOOT_ID=0123456789abcdef"
	"UNIT=disk --match CODE=7"      # with the other filters: all of them
	"UNIT=disk UNIT=net -l err+"
	"UNIT=disk UNIT=net -f daemon -g down"
	"UNIT=disk UNIT=net --pid 200"
	"UNIT=disk UNIT=net -n 1"       # the last that match
	"UNIT=disk UNIT=net -n 2 --reverse"
	"-b UNIT=net"                   # -b's optional argument is not the match
	"-b 0 UNIT=net"
	"-g link --case-sensitive UNIT=net"
	"-L UNIT=net"
	"--since=-1h UNIT=net"
	"--until=-1h UNIT=net"
	"-x UNIT=net"
	"--list-values UNIT"            # journalctl -F
	"--list-values UNIT -l err+"
	"--list-values UNIT --reverse"
	"--list-values UNIT CODE=7 + claimed_pid=200" # of the records that match
	"--list-values ODD"             # escaped, one line each
	"--list-values claimed_pid"
	"--list-values pid -n 2"
	"--list-values level_name"
	"--list-values PRIORITY"
	"--list-values facility_name"
	"--list-values SYSLOG_IDENTIFIER"
	"--list-values caller -u --pid 300"
	"--list-values text -g link"
	"--list-values NOPE"
)
: >"$T/got"
for args in "${runs[@]}"; do
	case $args in
	text=*|MESSAGE=*)  # one word with spaces
		"$KMSG" read -F "$L" -t "$args" >"$T/out" 2>"$T/err" ;;
	*)
		# shellcheck disable=SC2086 # the words of one run
		"$KMSG" read -F "$L" -t $args >"$T/out" 2>"$T/err" ;;
	esac
	printf '== %s (%d)\n' "${args//$boot/BOOT_ID}" $? >>"$T/got"
	cat "$T/out" "$T/err" >>"$T/got"
done
case_ "kmsg read KEY=value and --list-values, each run's output"
expect_file_eq "$EXPECTED/read-matches.txt" "$T/got"

case_ "a value listed matches what it was listed from"
while read -r v; do
	expect_eq "$("$KMSG" read -F "$L" -o json --output-fields=seq "claimed_pid=$v" | wc -l)" \
		"$("$KMSG" read -F "$L" -o json --pid "$v" | wc -l)" "records of claimed_pid=$v"
done < <("$KMSG" read -F "$L" --list-values claimed_pid)
bid=$("$KMSG" read -F "$L" --list-values boot_id)
expect_eq 7 "$("$KMSG" read -F "$L" "boot_id=$bid" | wc -l)" "records of boot_id=$bid"

case_ "-o json with matches: valid JSON, only the records that match"
"$KMSG" read -F "$L" -o json --output-fields=seq,pid,UNIT UNIT=net + level=err >"$T/json" &&
	python3 -c 'import json, sys
for l in open(sys.argv[1]): print(json.dumps(json.loads(l), sort_keys=True))' \
	"$T/json" >"$T/parsed"
printf '%s\n' '{"UNIT": "disk", "claimed_pid": 100, "seq": 1}' \
	'{"UNIT": ["net", "link"], "claimed_pid": 200, "seq": 3}' \
	'{"UNIT": "net", "claimed_pid": 200, "seq": 4}' >"$T/want"
expect_file_eq "$T/want" "$T/parsed"

case_ "matches on dmesg text read with -F: the priority is read for them"
printf '<6>[    1.000000] usb 1-1: new device\n<3>[    2.000000] EXT4-fs error\n<14>[    3.000000] user text\n' >"$T/dmesg.txt"
expect_eq "[    2.000000] EXT4-fs error" "$("$KMSG" read -F "$T/dmesg.txt" PRIORITY=3)" "PRIORITY=3"
expect_eq "<14>[    3.000000] user text" "$("$KMSG" read -F "$T/dmesg.txt" -r facility=user)" \
	"facility=user, -r"
expect_eq "info err" "$("$KMSG" read -F - --list-values level_name <"$T/dmesg.txt" | tr '\n' ' ' | sed 's/ $//')" \
	"--list-values level_name of text"

case_ "bad matches: bad usage that names the word"
bad() {  # bad WANT_MESSAGE WORDS...: kmsg read and kmsg follow refuse them
	local want=$1; shift
	for cmd in read follow; do
		expect_status 2 "$KMSG" $cmd -F "$L" "$@"
		expect_eq "$want" "$(head -1 "$T/err")" "$cmd $*"
		expect_eq "Try 'kmsg $cmd --help' for more information." "$(tail -1 "$T/err")" \
			"$cmd $*: the hint"
		[ -s "$T/out" ] && fail "$cmd $* printed records"
	done
}
keys="a field key (A-Z, 0-9 and _, from a capital letter, at most 64) or a member: seq, seq_id, boot_id, claimed_pid, caller, facility, facility_name, level, level_name, text (or journalctl's _BOOT_ID, SYSLOG_FACILITY, PRIORITY, MESSAGE)"
bad "kmsg: unexpected argument 'UNIT': matches are KEY=value (with + between groups)" UNIT
bad "kmsg: unit=net: 'unit' is not $keys" unit=net
bad "kmsg: 9UNIT=x: '9UNIT' is not $keys" 9UNIT=x
bad "kmsg: =x: '' is not $keys" =x
bad "kmsg: _COMM=sh: '_COMM' is not $keys" _COMM=sh
bad "kmsg: UNIT-X=1: 'UNIT-X' is not $keys" UNIT-X=1
bad "kmsg: $(printf 'K%.0s' {1..65})=1: '$(printf 'K%.0s' {1..65})' is not $keys" \
	"$(printf 'K%.0s' {1..65})=1"
bad "kmsg: +: '+' goes between two groups of KEY=value matches (either group passes), not first" + UNIT=net
bad "kmsg: +: '+' goes between two groups of KEY=value matches (either group passes), not last" UNIT=net +
bad "kmsg: +: '+' goes between two groups of KEY=value matches (either group passes), once" UNIT=net + + UNIT=disk
bad "kmsg: pid=abc: not a pid (a decimal number)" pid=abc
bad "kmsg: claimed_pid=4294967296: not a pid (a decimal number)" claimed_pid=4294967296
bad "kmsg: seq=-1: not a sequence number (a decimal number)" seq=-1
bad "kmsg: caller=: not a caller id (a decimal number)" caller=
bad "kmsg: level=loud: not a level (emerg, alert, crit, err, warning, notice, info, debug, or 0 to 7)" level=loud
bad "kmsg: PRIORITY=8: not a level (emerg, alert, crit, err, warning, notice, info, debug, or 0 to 7)" PRIORITY=8
bad "kmsg: facility=kernel: not a facility (kern, user, mail, daemon, auth, syslog, lpr, news, uucp, cron, authpriv, ftp, local0..local7, or 0 to 23)" facility=kernel
bad "kmsg: boot_id=123: not a boot id: 16 hex digits as -o json shows it, or the 32 of /proc/sys/kernel/random/boot_id" boot_id=123
bad "kmsg: seq_id=xyz: not 16 hex digits, as -o json and kmsg stat show it" seq_id=xyz
bad "kmsg: time=2026-12-05: times are ranges: use --since and --until (or seq= for one record)" time=2026-12-05
bad "kmsg: boot_ns=1: times are ranges: use --since and --until (or seq= for one record)" boot_ns=1
bad "kmsg: --match unit=x: not KEY=VALUE with a key of A-Z, 0-9 and _" --match unit=x UNIT=net

case_ "bad --list-values: bad usage that names it"
expect_status 2 "$KMSG" read -F "$L" --list-values unit
expect_eq "kmsg: --list-values: 'unit' is not $keys" "$(head -1 "$T/err")" "a bad key"
expect_status 2 "$KMSG" read -F "$L" --list-values time_ns
expect_eq "kmsg: --list-values: times are ranges: use --since and --until (or seq= for one record)" \
	"$(head -1 "$T/err")" "a time"
expect_status 2 "$KMSG" read -F "$L" --list-values UNIT -o json
expect_eq "kmsg: --list-values: prints one value a line: not with -J or -o json, json-pretty, json-seq, kmsg" \
	"$(head -1 "$T/err")" "with -o json"
for other in -c -C --list-boots; do
	expect_status 2 "$KMSG" read -F "$L" --list-values UNIT $other
	expect_grep "^kmsg: --list-values: cannot be used with --" "$T/err"
done
expect_status 2 "$KMSG" follow -F "$L" --list-values UNIT
expect_grep "^kmsg: --list-values: unknown option" "$T/err"

case_ "--help and the manual name the matches"
expect_eq "Usage: kmsg read [OPTION...] [KEY=value...]" "$("$KMSG" read --help | head -1)" "read's usage"
expect_eq "Usage: kmsg follow [OPTION...] [KEY=value...]" "$("$KMSG" follow --help | head -1)" \
	"follow's usage"
expect_grep "list-values=KEY" <("$KMSG" read --help)

case_ "kmsg follow KEY=value: history and new records, matched alike"
"$KMSG" follow -F "$L" -t -n 2 UNIT=net + PRIORITY=3 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for "net\[200\]: link up" "$T/f.out" || fail "no history within 5 s"
"$KMSG" emit -F "$L" --field UNIT=web "web record"
"$KMSG" emit -F "$L" -p user.err "an error"
"$KMSG" emit -F "$L" --field UNIT=net "net again"
wait_for "net again" "$T/f.out" || fail "a new matching record did not show"
stop_bg $fpid INT
expect_eq 0 $? "follow's status"
printf '%s\n' "net[200]: link down" "net[200]: link up" "an error" "net again" >"$T/want"
expect_file_eq "$T/want" "$T/f.out"

case_ "matches across boots: _BOOT_ID and boot_id by what -o json and --list-boots show"
BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
M=$T/boots
A=aaaa000011112222 B=aaab000011112222
C=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-16)
"$BOOTS" "$M" $A 1700000000 3 && "$BOOTS" "$M" $B 1700100000 2 &&
	"$KMSG" emit -F "$M" "this boot" || fail "writing the boots failed"
expect_eq "$A|$B|$C" "$("$KMSG" read -F "$M" --list-values boot_id | paste -sd'|')" \
	"--list-values boot_id"
expect_eq "boot $B record 0|boot $B record 1|this boot" \
	"$("$KMSG" read -F "$M" -q -t _BOOT_ID=$B + boot_id=$C | paste -sd'|')" "two boots"
expect_eq "boot $A record 2" "$("$KMSG" read -F "$M" -t -b 1 -n 1 _BOOT_ID=$A | paste -sd'|')" \
	"with -b and -n"
expect_eq "" "$("$KMSG" read -F "$M" -t -b 1 _BOOT_ID=$B)" "with -b of another boot"
expect_eq "$("$KMSG" read -F "$M" -q -t -b 0)" \
	"$("$KMSG" read -F "$M" -q -t "_BOOT_ID=$(cat /proc/sys/kernel/random/boot_id)")" \
	"the whole boot_id is this boot"

case_ "--list-values over more values than its table holds: every value, memory bounded"
# 40,000 texts of 1000 bytes, 40 MB of distinct values: past the table's
# 16 MiB it is emptied, said once, and values may come again
B=$T/big
awk 'BEGIN { s = sprintf("%989s", ""); gsub(/ /, "x", s);
	for (i = 0; i < 40000; i++) printf "%09d %s\n", i, s }' |
	"$KMSG" emit -F "$B" --log-size 64M || fail "kmsg emit of the big log failed"
heap=$(dirname "$KMSG")/libkmsg-heapcount.so
[ -z "$SANITIZED" ] || heap=/nonexistent  # see SANITIZED in lib.sh.inc
if [ -f "$heap" ]; then
	HEAPCOUNT_OUT=$T/heap LD_PRELOAD=$heap "$KMSG" read -F "$B" --list-values text \
		>"$T/out" 2>"$T/err"
else
	"$KMSG" read -F "$B" --list-values text >"$T/out" 2>"$T/err"
fi
expect_eq 0 $? "status"
expect_eq 40000 "$(sort -u "$T/out" | wc -l)" "distinct values listed"
[ "$(wc -l <"$T/out")" -ge 40000 ] || fail "fewer lines than values"
expect_eq "kmsg: --list-values: text: more than 786432 values or 16 MiB of them: the list goes on, but a value may now come again (sort -u removes repeats)" \
	"$(cat "$T/err")" "the word on stderr, once"
if [ -f "$heap" ]; then
	peak=$(sed -n 's/^peak_heap_bytes=//p' "$T/heap")
	[ "${peak:-999999999}" -lt $((32 << 20)) ] ||
		fail "peak heap ${peak:-unknown} bytes for 40 MB of values: not bounded"
elif [ -z "$SANITIZED" ]; then
	fail "no $heap (built with the tests): the peak heap is not checked"
fi


case_ "each value --list-values prints selects its records as KEY=value, escapes and all"
for loc in C C.UTF-8; do
	v=$(LC_ALL=$loc "$KMSG" read -F "$L" --list-values ODD)
	expect_eq 'a\x1bb	two\x0alines \xff' "$v" "the escaped value ($loc)"
	expect_eq 6 "$(LC_ALL=$loc "$KMSG" read -F "$L" "ODD=$v" --list-values seq)" \
		"ODD=its value: its record ($loc)"
done
v=$("$KMSG" read -F "$L" --list-values text -g odd)
expect_eq 6 "$("$KMSG" read -F "$L" "text=$v" --list-values seq)" "text=its value: its record"
# the value as written is still matched byte for byte too
"$KMSG" emit -F "$L" --field 'ODD=a\x41' "literal backslash" &&
	"$KMSG" emit -F "$L" --field 'ODD=aA' "decoded"
expect_eq "literal backslash|decoded" "$("$KMSG" read -F "$L" -t 'ODD=a\x41' | paste -sd'|')" \
	"a \\xHH value: either"
expect_eq "decoded" "$("$KMSG" read -F "$L" -t 'ODD=aA')" "no escape: only itself"

case_ "caller= takes the form --show-caller prints, and -o json's number"
printf '<6>[    1.000000] [    C3] from cpu 3\n<6>[    2.000000] [   T42] from task 42\n' >"$T/callers.txt"
# the kernel's callers show by default, as in dmesg 2.40 and later
expect_eq "[   C3] from cpu 3" "$("$KMSG" read -F "$T/callers.txt" -t caller=C3)" "caller=C3 of kernel text"
expect_eq "[  T42] from task 42" "$("$KMSG" read -F "$T/callers.txt" -t caller=T42 + caller=T7)" "caller=T42"
"$KMSG" emit -F "$T/c.log" "mine"
shown=$("$KMSG" read -F "$T/c.log" --show-caller -t | sed 's/^\[ *\([TP][0-9]*\)\] .*/\1/')
num=$("$KMSG" read -F "$T/c.log" -o json --output-fields caller | sed 's/.*"caller":\([0-9]*\).*/\1/')
expect_eq "mine" "$("$KMSG" read -F "$T/c.log" -t "caller=$shown")" "caller=$shown, as --show-caller shows it"
expect_eq "mine" "$("$KMSG" read -F "$T/c.log" -t "caller=$num")" "caller=$num, as -o json shows it"
expect_status 2 "$KMSG" read -F "$T/c.log" caller=Tx
expect_grep "caller=Tx: not a caller: T, C or P and a number" "$T/err"

finish
