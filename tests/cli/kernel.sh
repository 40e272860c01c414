#!/bin/bash
# kernel.sh - "kmsg kernel" copying the kernel's log into a kmsg log.
#
# Two halves.  The first feeds kmsg-test a file of /dev/kmsg records in
# the device's place (KMSG_TEST_KERNEL_DEVICE, with KMSG_TEST_KERNEL_BOOT_ID
# for another boot): escapes, dictionaries, callers, fragments, records
# overwritten before they were read (EPIPE), where a second run goes on, a
# new boot, a log that evicted what was copied, a missing device.  The
# second reads this machine's real /dev/kmsg, read only but for a few
# records of its own written to it (each open of /dev/kmsg may write ten
# before the kernel's rate limit): what kmsg read prints of the copy is
# what dmesg prints of the same records; runs one after the other, a copier
# killed with SIGKILL and two at once neither skip nor duplicate.  Never a
# clear, never a console level.  Without a readable /dev/kmsg that half is
# skipped, and counted as skipped.
. "$(dirname "$0")/lib.sh.inc"

skipped=0
skip() { skipped=$((skipped + 1)); echo "kernel: skipped: $*" >&2; }
export -n KMSG_TEST_KERNEL_BOOT_ID KMSG_TEST_KERNEL_DEVICE

# fake FILE ARGS...: kmsg kernel with FILE standing for /dev/kmsg
fake() {
	local dev=$1; shift
	KMSG_TEST_KERNEL_DEVICE=$dev "$KMSG" kernel "$@"
}
# seqs LOG: the _KERNEL_SEQ values of LOG, one a line
seqs() { "$KMSG" read -F "$1" -o kmsg | sed -n 's/^ _KERNEL_SEQ=//p'; }
# contiguous LOG: the kernel numbers in LOG rise by one, none twice
contiguous() {
	seqs "$1" | awk 'NR > 1 && $1 != prev + 1 { print "after " prev " comes " $1; bad = 1 }
		{ prev = $1 } END { exit bad }'
}

L=$T/fake.log
printf '%s\n' '6,0,1000,-;plain' \
	'6,1,2000,-,caller=T123;a\x0ab\x5cc\x1b' ' SUBSYSTEM=pci' ' DEVICE=+pci:0000:00:01.0' \
	'4,2,3000000,c,caller=C1;frag' '14,3,4000000,-;user wrote this' >"$T/dev1"

case_ "a backlog copied: text, dictionary, caller, fragment, facility"
expect_status 0 fake "$T/dev1" -F "$L"
expect_grep "copying the kernel's log from its first record" "$T/err"
expect_grep "copied 4, already stored 0, lost 0" "$T/err"
"$KMSG" read -F "$L" -o kmsg >"$T/k"
printf '%s\n' '6,1,1000,-;plain' ' _KERNEL_SEQ=0' ' _KERNEL_TIME_ESTIMATED=1' \
	'6,2,2000,-;a\x0ab\x5cc\x1b' ' SUBSYSTEM=pci' ' DEVICE=+pci:0000:00:01.0' \
	' _KERNEL_SEQ=1' ' _KERNEL_CALLER=T123' ' _KERNEL_TIME_ESTIMATED=1' \
	'4,3,3000000,-;frag' ' _KERNEL_SEQ=2' ' _KERNEL_CALLER=C1' ' _KERNEL_CONT=1' \
	' _KERNEL_TIME_ESTIMATED=1' \
	'14,4,4000000,-;user wrote this' ' _KERNEL_SEQ=3' ' _KERNEL_TIME_ESTIMATED=1' >"$T/want"
grep -v '^ _[A-Z]*\(_NS\|_ID\|_PID\)=\|^ _CALLER=' "$T/k" >"$T/got"
expect_file_eq "$T/want" "$T/got"
# the escapes are the bytes they stand for
"$KMSG" read -F "$L" -o json | python3 -c '
import json, sys
r = [json.loads(l) for l in sys.stdin][1]
print(repr(r["text"]), r["facility_name"], r["level_name"])' >"$T/got"
expect_eq "'a\\nb\\\\c\\x1b' kern info" "$(cat "$T/got")" "text of record 1"
# dmesg's views of them: kernel records only, decoded
"$KMSG" read -F "$L" -k -x >"$T/got"
printf '%s\n' 'kern  :info  : [    0.001000] plain' \
	'kern  :info  : [    0.002000] a' '                              b\c\x1b' \
	'kern  :warn  : [    3.000000] frag' >"$T/want"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -F "$L" -u -r >"$T/got"
expect_eq '<14>[    4.000000] user wrote this' "$(cat "$T/got")" "kmsg read -u -r"

case_ "a second run goes on after the last record stored"
expect_status 0 fake "$T/dev1" -F "$L"
expect_grep "going on after the kernel's record 3" "$T/err"
expect_grep "copied 0, already stored 4" "$T/err"
{ cat "$T/dev1"; printf '%s\n' '6,4,5000000,-;four' '6,5,6000000,-;five'; } >"$T/dev2"
expect_status 0 fake "$T/dev2" -F "$L"
expect_grep "copied 2, already stored 4, lost 0" "$T/err"
expect_eq "0 1 2 3 4 5" "$(seqs "$L" | paste -sd' ')" "kernel numbers stored"

case_ "records overwritten while no copier ran: one record says which"
printf '%s\n' '6,9,9000000,-;nine' '6,10,9100000,-;ten' >"$T/dev3"
expect_status 0 fake "$T/dev3" -F "$L"
expect_grep "3 kernel records lost before they were read (numbers 6-8)" "$T/err"
"$KMSG" read -F "$L" -x -t | tail -3 >"$T/got"
printf '%s\n' 'syslog:warn  : kmsg kernel: 3 kernel records lost before they were read (numbers 6-8)' \
	'kern  :info  : nine' 'kern  :info  : ten' >"$T/want"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -F "$L" -o kmsg | grep '^ _KERNEL_LOST' >"$T/got"
printf '%s\n' ' _KERNEL_LOST=3' ' _KERNEL_LOST_FIRST=6' ' _KERNEL_LOST_LAST=8' >"$T/want"
expect_file_eq "$T/want" "$T/got"
# kmsg read -k is dmesg -k: the kernel's, not the copier's word
expect_eq 0 "$("$KMSG" read -F "$L" -k | grep -c 'lost before')" "loss records in -k"

case_ "EPIPE: the kernel overwrote records while they were read"
printf '%s\n' '6,11,9200000,-;eleven' 'EPIPE' '6,15,9300000,-;fifteen' >"$T/dev4"
expect_status 0 fake "$T/dev4" -F "$L"
expect_grep "3 kernel records lost before they were read (numbers 12-14)" "$T/err"
expect_grep "copied 2, already stored 0, lost 3 (in 1 gaps)" "$T/err"
# a loss already stored is not stored again
expect_status 0 fake "$T/dev4" -F "$L"
expect_grep "going on after the kernel's record 15" "$T/err"
expect_eq 2 "$("$KMSG" read -F "$L" | grep -c 'lost before')" "loss records"

case_ "a new boot starts again at the kernel's first record"
printf '%s\n' '6,0,100,-;new boot zero' '6,1,200,-;new boot one' >"$T/dev5"
KMSG_TEST_KERNEL_BOOT_ID=aaaa000011112222 expect_status 0 fake "$T/dev5" -F "$L"
expect_grep "boot aaaa000011112222: copying the kernel's log from its first record" "$T/err"
expect_grep "copied 2, already stored 0, lost 0" "$T/err"

case_ "text longer than the log takes: cut, with its length"
printf '%s\n' "6,0,100,-;$(printf '%040d' 0)" >"$T/dev6"
expect_status 0 fake "$T/dev6" -F "$T/short.log" --max-text 16
expect_eq "$(printf '%016d' 0)" "$("$KMSG" read -F "$T/short.log" -t)" "cut text"
expect_grep '^ _KERNEL_TRUNCATED=40$' <("$KMSG" read -F "$T/short.log" -o kmsg)

case_ "a log that evicted what was copied of this boot: none comes twice"
E=$T/evict.log
for i in $(seq 0 49); do printf '6,%d,%d,-;old kernel record %d\n' $i $((i * 1000)) $i; done >"$T/dev7"
expect_status 0 fake "$T/dev7" -F "$E" --log-size 16K
for i in $(seq 300); do echo "filler $i"; done | "$KMSG" emit -F "$E"
expect_eq 0 "$(seqs "$E" | wc -l)" "kernel records left after the flood"
expect_status 0 fake "$T/dev7" -F "$E"
expect_grep "no record of the kernel's left" "$T/err"
expect_grep "copied 0, already stored 50" "$T/err"

case_ "the kernel's log of the boot before: kmsg read -k -b -1"
BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
expect_status 0 fake "$T/dev1" -F "$T/boots.log"
"$KMSG" read -F "$T/boots.log" -k >"$T/want"
# then the machine booted again: its first records
"$BOOTS" "$T/boots.log" aaab000011112222 1900000000 2 || fail "kmsg-boots failed"
"$KMSG" read -F "$T/boots.log" -k -b -1 >"$T/got"
expect_file_eq "$T/want" "$T/got"
expect_eq "" "$("$KMSG" read -F "$T/boots.log" -k -b 0)" "kernel records of the new boot"

case_ "a log with this boot's records whole but no copy: from the first record"
"$KMSG" emit -F "$T/emitted.log" "written before any copy"
expect_status 0 fake "$T/dev7" -F "$T/emitted.log"
expect_grep "copying the kernel's log from its first record" "$T/err"
expect_grep "copied 50, already stored 0" "$T/err"

case_ "SIGKILL in the middle of a backlog: the next run completes it, none twice"
awk 'BEGIN { for (i = 0; i < 100000; i++) printf "6,%d,%d,-;backlog %d\n", i, i * 10, i }' \
	>"$T/dev8"
KMSG_TEST_KERNEL_DEVICE=$T/dev8 "$KMSG" kernel -F "$T/killed.log" --log-size 32M 2>/dev/null &
kpid=$!
sleep 0.2
{ kill -KILL $kpid; wait $kpid; } 2>/dev/null
expect_status 0 fake "$T/dev8" -F "$T/killed.log" --log-size 32M
expect_eq "100000 0 99999" "$(seqs "$T/killed.log" | awk 'NR == 1 { f = $1 } { l = $1 }
	END { print NR, f, l }')" "kernel records stored, first, last"
contiguous "$T/killed.log" && ok || fail "kernel numbers are not contiguous after a SIGKILL"

case_ "no /dev/kmsg: a clear error, and no log made"
expect_status 1 fake "$T/none" -F "$T/never.log"
expect_grep "no such device: the kernel's log is not here (in a container?)" "$T/err"
[ -e "$T/never.log" ] && fail "a log was made without a kernel log to copy" || ok
expect_status 2 "$KMSG" kernel extra
expect_grep "takes no arguments" "$T/err"

# ---- the real /dev/kmsg ---------------------------------------------------------
find_dmesg
if ! dd if=/dev/kmsg of=/dev/null bs=16384 count=1 2>/dev/null; then
	skip "/dev/kmsg is missing or cannot be read here: the real kernel's half"
	printf 'kernel: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
	[ "$failed" = 0 ]
	exit
fi
tag=kmsgtest-$$-$RANDOM
# kwrite TEXT...: each TEXT a record of the kernel's log, user.notice
kwrite() { local t; for t in "$@"; do printf '<13>%s: %s\n' "$tag" "$t" >/dev/kmsg; done; }
R=$T/real.log

case_ "the kernel's own records, printed as dmesg prints them"
kwrite 'back\slash' "$(printf 'tab\there esc\033[1m')" "del$(printf '\177') end"
expect_status 0 "$KMSG" kernel -F "$R"
if [ "$have_dmesg" = 1 ]; then
	# (2.38's -r writes facility + level for a record not of kern:
	# kmsg(1) says where 2.38 differs)
	for opts in "" "-x" "-r -k" "-t" "-k" "-u -x" "-l warn,err" "-f kern,user -x" \
		"--noescape" "-k -x -t"; do
		# the copy made again after dmesg read: it holds every record
		# dmesg printed, and what the kernel logged since after them
		$DMESG $opts >"$T/d" 2>&1
		"$KMSG" kernel -F "$R" 2>/dev/null
		"$KMSG" read -F "$R" $opts >"$T/k" 2>&1
		if python3 - "$T/d" "$T/k" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read().splitlines()
# the copier's word on what the kernel overwrote before it was read (the
# ring of a machine up for long) is no record of the kernel's
k = [l for l in open(sys.argv[2], 'rb').read().splitlines()
     if b'kmsg kernel: ' not in l or b'lost before' not in l]
# records overwritten since the first copy may be missing from dmesg's
# front; new ones may follow in the copy: dmesg's lines stand whole,
# in order, together, in what kmsg prints (none, where the kernel's ring
# holds none of these)
ok = any(k[i:i + len(d)] == d for i in range(len(k) - len(d) + 1))
sys.exit(0 if ok else 1)
PY
		then ok; else
			fail "kmsg read $opts is not what dmesg $opts prints:"
			diff "$T/d" "$T/k" | head -10 >&2
		fi
	done
	$DMESG -u | grep "$tag" >"$T/d"
	"$KMSG" read -F "$R" -u | grep "$tag" >"$T/k"
	expect_file_eq "$T/d" "$T/k"
fi
expect_eq 3 "$("$KMSG" read -F "$R" -u | grep -c "$tag")" "records written, copied once"
contiguous "$R" && ok || fail "kernel numbers of the copy are not contiguous"

case_ "kernel.dmesg_restrict: a user without CAP_SYSLOG is told what to change"
if [ "$(cat /proc/sys/kernel/dmesg_restrict 2>/dev/null)" = 1 ] && [ "$(id -u)" = 0 ] &&
	command -v setpriv >/dev/null; then
	mkdir -m 777 "$T/nobody"
	expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$KMSG" kernel -F "$T/nobody/log"
	expect_grep "needs root or CAP_SYSLOG (kernel.dmesg_restrict is 1): run as root" "$T/err"
	[ -e "$T/nobody/log" ] && fail "a log was made by a copier that cannot read" || ok
else
	skip "kernel.dmesg_restrict is not 1, or no root and setpriv to drop it"
fi

case_ "kmsg kernel --follow: killed with SIGKILL, then started again"
F=$T/follow.log
"$KMSG" kernel --follow -F "$F" 2>"$T/f.err" &
fpid=$!
wait_for "following the kernel's log" "$T/f.err" || fail "never said it follows: $(cat "$T/f.err")"
kwrite live-1 live-2 live-3
for i in $(seq 200); do
	[ "$("$KMSG" read -F "$F" | grep -c "$tag: live-")" = 3 ] && break
	sleep 0.05
done
expect_eq 3 "$("$KMSG" read -F "$F" | grep -c "$tag: live-")" "records copied live"
# what is logged while it follows is stamped with the time read
"$KMSG" read -F "$F" -o kmsg | grep -A5 "$tag: live-1" | grep -c '_KERNEL_TIME_ESTIMATED' >"$T/got"
expect_eq 0 "$(cat "$T/got")" "a record copied live marked as estimated"

case_ "two copiers of one log: the second refused"
expect_status 1 "$KMSG" kernel -F "$F"
expect_grep "another kmsg kernel (pid $fpid) copies the kernel's log into it" "$T/err"
kill -USR1 $fpid
wait_for "so far: read" "$T/f.err" || fail "SIGUSR1 said nothing"
{ kill -KILL $fpid; wait $fpid; } 2>/dev/null
kwrite dead-1 dead-2
expect_status 0 "$KMSG" kernel -F "$F"
expect_grep "going on after the kernel's record" "$T/err"
expect_eq 2 "$("$KMSG" read -F "$F" | grep -c "$tag: dead-")" "records logged while none ran"
expect_eq 3 "$("$KMSG" read -F "$F" | grep -c "$tag: live-")" "records copied before the kill"
contiguous "$F" && ok || fail "kernel numbers are not contiguous after a SIGKILL"

case_ "SIGTERM ends a follower with status 0 and its counts"
"$KMSG" kernel --follow -F "$F" 2>"$T/f.err" &
fpid=$!
wait_for "following the kernel's log" "$T/f.err" || fail "never said it follows: $(cat "$T/f.err")"
kwrite term-1
stop_bg $fpid TERM
expect_eq 0 $? "exit status after SIGTERM"
expect_grep "Terminated: read" "$T/f.err"
expect_eq 1 "$("$KMSG" read -F "$F" | grep -c "$tag: term-1")" "the record logged before SIGTERM"
contiguous "$F" && ok || fail "kernel numbers are not contiguous after SIGTERM"

case_ "SIGHUP: the log's path opened anew after it was moved away"
H=$T/hup.log
"$KMSG" kernel --follow -F "$H" 2>"$T/h.err" &
fpid=$!
wait_for "following the kernel's log" "$T/h.err" || fail "never said it follows: $(cat "$T/h.err")"
mv "$H" "$H.old"
kill -HUP $fpid
wait_for "SIGHUP: reopened" "$T/h.err" || fail "SIGHUP said nothing: $(cat "$T/h.err")"
kwrite hup-1
for i in $(seq 200); do
	"$KMSG" read -F "$H" 2>/dev/null | grep -q "$tag: hup-1" && break
	sleep 0.05
done
stop_bg $fpid TERM
expect_eq "1 0" "$("$KMSG" read -F "$H" | grep -c "$tag: hup-1") $("$KMSG" read -F "$H.old" |
	grep -c "$tag: hup-1")" "the record logged after SIGHUP, in the new log and the old"

printf 'kernel: %d passed, %d failed, %d skipped\n' "$passed" "$failed" "$skipped"
[ "$failed" = 0 ]
