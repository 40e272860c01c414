#!/bin/bash
# grep.sh - kmsg read's and kmsg follow's -g/--grep, --case-sensitive and
# --pid on a log written by kmsg emit: journalctl's case rule, the filters
# combined with the others and with -n, text that is not UTF-8, and the
# usage errors a user sees for a bad pattern or pid.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
"$KMSG" emit -F "$L" -t store --id=100 -p user.err "Disk full on /var" &&
"$KMSG" emit -F "$L" -t store --id=100 -p user.info "disk check ok" &&
"$KMSG" emit -F "$L" -t store --id=200 -p user.err "DISK FULL on /home" &&
"$KMSG" emit -F "$L" -t net --id=300 -p daemon.warning "link down" &&
"$KMSG" emit -F "$L" -t net --id=300 -p daemon.info "link up, disk-less boot" &&
printf 'bytes \377 caf\303\251 a\377b\n' | "$KMSG" emit -F "$L" -t odd --id=400 -p user.notice &&
"$KMSG" emit -F "$L" -t store --id=200 -p user.info "disc spun down" ||
	fail "kmsg emit failed: the rest of this test needs it"

# Each run's arguments, then what kmsg read -t ARGS printed and its status:
# tests/cli/expected/read-grep.txt says what a user should see.
runs=(
	"-g disk"                       # no upper case: any case
	"-g Disk"                       # an upper-case letter: this case only
	"-g \\Sisk"                     # upper case in an escape counts too
	"-g disk --case-sensitive"      # forced on
	"-g Disk --case-sensitive=no"   # forced off
	"-g DISK --case-sensitive=false"
	"-g DISK --case-sensitive=1"
	"-g ^net.*down$"                # anchored: the text begins with the tag
	"-g full -l err"                # with the other filters
	"-g full -f daemon"
	"-g link -x"
	"-g disk -n 1"                  # the last record that matches
	"-g disk -n 2 --reverse"
	"-g disk -b 0 -n 2"
	"--pid 100"
	"--pid 100,300"
	"--pid 100 --pid 400"
	"--pid 200 -g full"
	"--pid 999"
	"-g caf"                        # text that is not UTF-8 is no error
	"-g a.b"                        # but an invalid byte matches nothing
	"-g é"
	"-g nothing-matches"
)
: >"$T/got"
for args in "${runs[@]}"; do
	# shellcheck disable=SC2086 # the words of one run
	"$KMSG" read -F "$L" -t $args >"$T/out" 2>"$T/err"
	printf '== %s (%d)\n' "$args" $? >>"$T/got"
	cat "$T/out" "$T/err" >>"$T/got"
done
case_ "kmsg read -g and --pid, each run's output"
expect_file_eq "$EXPECTED/read-grep.txt" "$T/got"

case_ "-g and --pid in -J: a document with only the records that match"
"$KMSG" read -F "$L" -J -g 'full' --pid 200 >"$T/json" 2>"$T/err"
expect_eq 0 $? "status"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["dmesg"];
print(len(d), d[0]["msg"])' "$T/json" >"$T/n"
expect_eq "1 store[200]: DISK FULL on /home" "$(cat "$T/n")" "the records"

case_ "-g on dmesg text read with -F (dmesg -F's input)"
printf '<6>[    1.000000] usb 1-1: new device\n<3>[    2.000000] EXT4-fs error\n' >"$T/dmesg.txt"
expect_eq "[    2.000000] EXT4-fs error" "$("$KMSG" read -F "$T/dmesg.txt" -g ext4)" "text"

case_ "an invalid pattern: bad usage, PCRE2's words and where"
for cmd in read follow; do
	expect_status 2 "$KMSG" $cmd -F "$L" -g '('
	expect_eq "kmsg: --grep '(': missing closing parenthesis at offset 1" \
		"$(head -1 "$T/err")" "$cmd's message"
	expect_eq "Try 'kmsg $cmd --help' for more information." "$(tail -1 "$T/err")" \
		"$cmd's hint"
	[ -s "$T/out" ] && fail "$cmd printed records for an invalid pattern"
done
expect_status 2 "$KMSG" read -F "$L" -g 'a{2,1}'
expect_grep "^kmsg: --grep 'a{2,1}': numbers out of order in {} quantifier at offset 5\$" "$T/err"

case_ "bad --case-sensitive and --pid values: bad usage that names them"
expect_status 2 "$KMSG" read -F "$L" -g x --case-sensitive=maybe
expect_grep "^kmsg: --case-sensitive maybe: not a boolean" "$T/err"
for bad in x '12,' ,12 -1 4294967296 ''; do
	expect_status 2 "$KMSG" read -F "$L" --pid="$bad"
	expect_grep "^kmsg: --pid $bad: not a pid" "$T/err"
done

case_ "kmsg follow -g --pid: history and new records, filtered alike"
"$KMSG" follow -F "$L" -t -n 1 -g 'dis[ck]' --pid 100,200 >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for "disc spun down" "$T/f.out" || fail "no history within 5 s"
"$KMSG" emit -F "$L" -t store --id=300 "disk of pid 300"
"$KMSG" emit -F "$L" -t net --id=100 "new net record"
"$KMSG" emit -F "$L" -t store --id=100 "new disk record"
wait_for "new disk record" "$T/f.out" || fail "a new matching record did not show"
stop_bg $fpid INT
expect_eq 0 $? "follow's status"
printf '%s\n' "store[200]: disc spun down" "store[100]: new disk record" >"$T/want"
expect_file_eq "$T/want" "$T/f.out"

finish
