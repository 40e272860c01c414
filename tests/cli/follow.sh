#!/bin/bash
# follow.sh - kmsg follow as users run it: a real follower process in the
# background, real writers (kmsg emit), real signals.  Each check waits for
# the line it expects with a time limit rather than sleeping a fixed time.
. "$(dirname "$0")/lib.sh.inc"

# start_follow ARGS...: kmsg follow in the background, output in $T/f.out
start_follow() {
	# emptied here: the background shell's own redirection may come late
	: >"$T/f.out"
	: >"$T/f.err"
	"$KMSG" follow "$@" >>"$T/f.out" 2>>"$T/f.err" &
	fpid=$!
}

# stop_follow SIGNAL: sends it, checks the follower ends with status 0
stop_follow() {
	local st
	stop_bg $fpid "$1"
	st=$?
	expect_eq 0 $st "exit status after SIG$1"
}

L=$T/log
for i in $(seq 1 20); do echo "line $i"; done | "$KMSG" emit -F "$L" ||
	fail "kmsg emit failed: the rest of this test needs it"

case_ "-n 5: the last five records, then new ones"
start_follow -F "$L" -t -n 5
wait_for "line 20" "$T/f.out" || fail "no history within 5 s"
expect_eq "line 16|line 17|line 18|line 19|line 20" "$(paste -sd'|' "$T/f.out")"
"$KMSG" emit -F "$L" "live one"
wait_for "live one" "$T/f.out" || fail "a new record did not show within 5 s"
stop_follow INT
expect_eq "" "$(cat "$T/f.err")" "stderr"

case_ "default: the last ten"
start_follow -F "$L" -t
wait_for "live one" "$T/f.out" || fail "no history"
expect_eq 10 "$(wc -l <"$T/f.out")" "lines"
expect_eq "line 12" "$(head -1 "$T/f.out")"
stop_follow TERM

case_ "-n 0: only new records"
start_follow -F "$L" -t -n 0
sleep 0.3
"$KMSG" emit -F "$L" "live two"
wait_for "live two" "$T/f.out" || fail "a new record did not show"
expect_eq "live two" "$(cat "$T/f.out")"
stop_follow INT

case_ "-n all after a clear: only what came after it"
"$KMSG" clear -F "$L"
"$KMSG" emit -F "$L" "after clear"
start_follow -F "$L" -t -n all
wait_for "after clear" "$T/f.out" || fail "no history"
expect_eq "after clear" "$(cat "$T/f.out")"
stop_follow INT

case_ "a filter applies to history and new records; -n counts matches"
E=$T/filtered
{ echo "<3>err one"; echo "<3>err two"; echo "<3>err three";
  for i in $(seq 1 30); do echo "<6>info $i"; done; } | "$KMSG" emit -F "$E" --prio-prefix
start_follow -F "$E" -t -n 2 -l err
wait_for "err three" "$T/f.out" || fail "no history"
"$KMSG" emit -F "$E" -p info "info new"
"$KMSG" emit -F "$E" -p err "err new"
wait_for "err new" "$T/f.out" || fail "a new err did not show"
expect_eq "err two|err three|err new" "$(paste -sd'|' "$T/f.out")"
stop_follow INT

case_ "formats: -x -o kmsg"
start_follow -F "$E" -n 1 -o kmsg
wait_for "err new" "$T/f.out" || fail "no history"
expect_grep '^11,[0-9]*,[0-9]*,-;err new$' "$T/f.out"
stop_follow INT

case_ "-J: the document is closed when follow ends"
start_follow -F "$E" -n 1 -J
wait_for "err new" "$T/f.out" || fail "no history"
stop_follow INT
expect_eq "}" "$(tail -1 "$T/f.out")"
expect_grep '"msg": "err new"' "$T/f.out"

case_ "a line written in parts shows once complete"
J=$T/join
"$KMSG" emit -F "$J" start
start_follow -F "$J" -t -n 0
sleep 0.3
"$KMSG" emit -F "$J" --no-newline "first half, "
"$KMSG" emit -F "$J" --cont "second half"
wait_for "second half" "$T/f.out" || fail "the joined line did not show"
expect_eq "first half, second half" "$(cat "$T/f.out")"

case_ "an incomplete line shows after the fragment wait (2 s)"
"$KMSG" emit -F "$J" --no-newline "left open"
sleep 0.5
if grep -q "left open" "$T/f.out"; then fail "shown before its wait"; else ok; fi
wait_for "left open" "$T/f.out" || fail "never shown"
stop_follow INT

case_ "overtaken by writers: says how many records were lost, carries on"
S=$T/small
"$KMSG" emit -F "$S" --log-size 8K "first"
start_follow -F "$S" -t -n all
wait_for "first" "$T/f.out" || fail "no history"
kill -STOP $fpid
seq 1 500 | "$KMSG" emit -F "$S"
kill -CONT $fpid
wait_for "^500$" "$T/f.out" || fail "did not catch up"
expect_grep "kmsg: [0-9]* records lost before seq [0-9]*: the writers overtook this reader" "$T/f.err"
lost=$(sed -n 's/kmsg: \([0-9]*\) records lost.*/\1/p' "$T/f.err")
shown=$(grep -c '^[0-9]*$' "$T/f.out")
expect_eq 500 $(( lost + shown )) "lost + shown"
"$KMSG" emit -F "$S" "after the loss"
wait_for "after the loss" "$T/f.out" || fail "stopped after the loss"
stop_follow INT

case_ "a closed pipe ends follow quietly, even with nothing new to write"
timeout 10 "$KMSG" follow -F "$L" -n 1 2>"$T/err" | head -1 >/dev/null
expect_eq "0" "${PIPESTATUS[0]}" "exit status (124: still running after 10 s)"
expect_eq "" "$(cat "$T/err")" "stderr"

case_ "SIGHUP ends follow quietly"
start_follow -F "$L" -n 0
sleep 0.2
stop_follow HUP

case_ "one stop signal at any moment ends follow at once, while a writer appends"
# sent once (stop_bg sends again, which would hide a signal missed between
# the follower's look at its flags and its sleep); SIGTERM, which a
# background job does not start with ignored
for i in $(seq 10); do
	start_follow -F "$L" -n 1
	wait_for . "$T/f.out" || fail "round $i: no history"
	( for j in $(seq 20); do "$KMSG" emit -F "$L" "round $i $j"; done ) &
	wpid=$!
	sleep "0.0$((RANDOM % 10))$((RANDOM % 10))"
	kill -TERM $fpid
	for j in $(seq 60); do
		state=$(sed 's/.*) //' "/proc/$fpid/stat" 2>/dev/null | cut -c1)
		{ [ -z "$state" ] || [ "$state" = Z ]; } && break
		sleep 0.05
	done
	if [ -n "$state" ] && [ "$state" != Z ]; then
		fail "round $i: still running 3 s after one SIGTERM"
		kill -KILL $fpid
	fi
	wait $fpid
	expect_eq 0 $? "round $i: exit status"
	wait $wpid
done

case_ "overtaken before its first line: -n 0 reports the loss"
O=$T/over
"$KMSG" emit -F "$O" --log-size 8K "old"
start_follow -F "$O" -t -n 0
sleep 0.5
kill -STOP $fpid
seq 1 300 | "$KMSG" emit -F "$O"
kill -CONT $fpid
wait_for "^300$" "$T/f.out" || fail "did not catch up"
stop_follow INT
lost=$(sed -n 's/kmsg: \([0-9]*\) records\{0,1\} lost.*/\1/p' "$T/f.err" | awk '{ s += $1 } END { print s + 0 }')
shown=$(grep -c '^[0-9]*$' "$T/f.out")
expect_eq 300 $(( ${lost:-0} + shown )) "lost + shown (stderr: $(head -c 200 "$T/f.err"))"

case_ "losses are added up: at most one line a second, the count right"
B=$T/busy
"$KMSG" emit -F "$B" --log-size 8K "start"
start_follow -F "$B" -t -n 0
sleep 0.5
end=$(( $(date +%s) + 3 ))
i=0
while [ "$(date +%s)" -lt $end ]; do
	kill -STOP $fpid
	seq 1 200 | "$KMSG" emit -F "$B"
	kill -CONT $fpid
	i=$((i + 1))
	sleep 0.05
done
"$KMSG" emit -F "$B" "the end"
wait_for "the end" "$T/f.out" || fail "never caught up"
sleep 1.2
stop_follow INT
lines=$(grep -c "lost" "$T/f.err")
[ "$lines" -le 6 ] && [ "$lines" -ge 1 ] && ok ||
	fail "$lines lines about losses in about 3 s after $i overtakings: $(head -3 "$T/f.err")"
lost=$(sed -n 's/kmsg: \([0-9]*\) records\{0,1\} lost.*/\1/p' "$T/f.err" | awk '{ s += $1 } END { print s + 0 }')
shown=$(grep -c '^[0-9]*$' "$T/f.out")
expect_eq $(( i * 200 )) $(( ${lost:-0} + shown )) "lost + shown"

case_ "one record lost is one record"
printf '%s\n' x >/dev/null
G=$T/one
"$KMSG" emit -F "$G" --log-size 12K --max-text 3000 first
start_follow -F "$G" -t -n 0
sleep 0.5
kill -STOP $fpid
for i in 1 2 3; do "$KMSG" emit -F "$G" "$(head -c 2900 /dev/zero | tr '\0' a)"; done
kill -CONT $fpid
sleep 0.5
stop_follow INT
expect_grep "^kmsg: 1 record lost before seq" "$T/f.err"

case_ "a log that does not exist yet is waited for"
W=$T/later
start_follow -F "$W" -t -n all
sleep 0.3
expect_grep "no such log yet; waiting for it" "$T/f.err"
"$KMSG" emit -F "$W" "it is here"
wait_for "it is here" "$T/f.out" || fail "the new log was not followed"
stop_follow INT
expect_status 1 "$KMSG" follow -F "$T/nonexistent" --fail-missing
expect_grep "no such log" "$T/err"

case_ "a log that appears as cp(1) makes it (empty first, then filled) is waited for"
# cp creates the file empty and then writes it: the follower waiting for
# the log must go on waiting while what is there is not a log yet, as it
# does after a log went away (it failed with status 1: "not a kmsg log
# file; refusing to touch it", from open_followed()'s first open).
"$KMSG" emit -F "$T/appear.src" "copied in"
W2=$T/appear
start_follow -F "$W2" -t -n all
sleep 0.3
: >"$W2"
sleep 0.5
cat "$T/appear.src" >"$W2"
wait_for "copied in" "$T/f.out" 5 || fail "the log copied in was not followed: $(cat "$T/f.err")"
if kill -0 $fpid 2>/dev/null; then stop_follow INT; else
	wait $fpid; fail "the follower ended by itself, status $?"; fi

case_ "a log removed and made again, or replaced, is followed on"
R=$T/renew
"$KMSG" emit -F "$R" "first log"
start_follow -F "$R" -t -n all
wait_for "first log" "$T/f.out" || fail "no history"
rm "$R"
sleep 1.5
expect_grep "removed; waiting for it to come back" "$T/f.err"
"$KMSG" emit -F "$R" "second log"
wait_for "second log" "$T/f.out" || fail "the log made again was not followed"
"$KMSG" emit -F "$T/other" "third log"
mv "$T/other" "$R"
wait_for "third log" "$T/f.out" || fail "the log moved in was not followed"
expect_grep "replaced by another file; another log: following it from its oldest record" "$T/f.err"
expect_grep "back; another log: following it from its oldest record" "$T/f.err"
# the same log moved away and back: on where it was, nothing twice
mv "$R" "$T/aside"
sleep 1.5
"$KMSG" emit -F "$T/aside" "fourth, written while away"
mv "$T/aside" "$R"
wait_for "fourth" "$T/f.out" || fail "the log moved back was not followed"
expect_grep "back; the same log: going on where it was" "$T/f.err"
"$KMSG" emit -F "$R" "fifth"
wait_for "fifth" "$T/f.out" || fail "went quiet"
stop_follow INT
expect_eq "first log|second log|third log|fourth, written while away|fifth" "$(paste -sd'|' "$T/f.out")"
expect_eq 2 "$(grep -c "waiting for it to come back" "$T/f.err")" "one word for each of the two removals"
expect_eq 0 "$(grep -c "no such log yet" "$T/f.err")" "and no other"

case_ "replaced by a file that is not a log: waits for a log there"
N=$T/notlog
"$KMSG" emit -F "$N" "a log"
start_follow -F "$N" -t -n all
wait_for "a log" "$T/f.out" || fail "no history"
echo "just text" >"$T/text.tmp"
mv "$T/text.tmp" "$N"
sleep 1.5
expect_grep "not a kmsg log" "$T/f.err"
expect_grep "notlog: waiting for a log there" "$T/f.err"
rm "$N"
"$KMSG" emit -F "$N" "a log again"
wait_for "a log again" "$T/f.out" || fail "did not go on with the new log"
stop_follow INT
expect_eq 1 "$(grep -c "not a kmsg log" "$T/f.err")" "the error said once"

case_ "a log cut short and restored by a writer: follow goes on"
C=$T/cut
seq 1 100 | "$KMSG" emit -F "$C" --log-size 64K
start_follow -F "$C" -t -n 0
sleep 0.3
truncate -s 8K "$C"
"$KMSG" emit -F "$C" "after the repair"
wait_for "after the repair" "$T/f.out" || fail "follow went quiet after the repair"
"$KMSG" emit -F "$C" "and on"
wait_for "and on" "$T/f.out" || fail "follow went quiet after the repair"
stop_follow INT

# follow_then_cut LOG: 500 records, a follower that has shown the last, then
# the file cut to 8 KiB under it.
follow_then_cut() {
    seq 1 500 | "$KMSG" emit -F "$1" --log-size 64K
    start_follow -F "$1" -t -n 1
    wait_for "^500$" "$T/f.out" || fail "no history"
    truncate -s 8192 "$1"
}

case_ "truncated under an idle follower: no crash, and it goes on after the repair"
U=$T/trunc
follow_then_cut "$U"
sleep 1.5
kill -0 $fpid 2>/dev/null && ok || fail "the follower died (SIGBUS?)"
# its wake word now lies past the file's end, where the kernel refuses to
# sleep: it must not spin on it (it did: a core at 100% until the repair)
ticks() { awk '{ print $14 + $15 }' "/proc/$fpid/stat"; }
t0=$(ticks); sleep 1; t1=$(ticks)
expect_eq 1 "$(( (t1 - t0) * 100 / $(getconf CLK_TCK) < 20 ))" \
	"the idle follower of a cut log used $((t1 - t0)) ticks of CPU in 1 s"
"$KMSG" emit -F "$U" "after the cut"
wait_for "after the cut" "$T/f.out" || fail "went quiet; it said: $(head -c 400 "$T/f.err")"
stop_follow INT

case_ "truncated and repaired at once: the records written meanwhile all show"
V=$T/quick
follow_then_cut "$V"; "$KMSG" emit -F "$V" imm1; "$KMSG" emit -F "$V" imm2
"$KMSG" emit -F "$V" later
wait_for "later" "$T/f.out" || fail "went quiet"
stop_follow INT
expect_eq "500|imm1|imm2|later" "$(paste -sd'|' "$T/f.out")"

case_ "records a writer adds past the end of a log the follower opened cut short all show"
# The follower has reopened the log cut short, its missing end mapped as
# zeros; the writer that restores the size then writes there.
W=$T/past
follow_then_cut "$W"
wait_for "cut short" "$T/f.err" || fail "the cut was not noticed"
seq 1 200 | sed 's/^/past /' | "$KMSG" emit -F "$W"
wait_for "^past 200$" "$T/f.out" || fail "went quiet"
stop_follow INT
expect_eq 200 "$(grep -c '^past ' "$T/f.out")" "records after the repair"
expect_eq 0 "$(grep -c 'damaged' "$T/f.err")" "records reported damaged"

case_ "another log copied over the followed one: said, and followed from its start"
X=$T/cpa; Y=$T/cpb
"$KMSG" emit -F "$X" a1; "$KMSG" emit -F "$Y" o1; "$KMSG" emit -F "$Y" o2
start_follow -F "$X" -t -n all
wait_for "a1" "$T/f.out" || fail "no history"
cp "$Y" "$X"
"$KMSG" emit -F "$X" d1
wait_for "d1" "$T/f.out" || fail "went quiet"
stop_follow INT
expect_eq "a1|o1|o2|d1" "$(paste -sd'|' "$T/f.out")"
# caught while cp wrote it (cut short, not yet a log), or after
expect_grep "another log: following it from its oldest record" "$T/f.err"

case_ "an idle follower sleeps: it does not poll the path"
# Voluntary context switches of all its threads over 3 s, once the one
# timed wake (the fragment wait, 2 s after the start) is past.  Looking
# at the path once a second would make three.
"$KMSG" emit -F "$T/idle" x
start_follow -F "$T/idle" -n 0
sleep 2.5
switches() { cat /proc/$fpid/task/*/status | awk '/^voluntary_ctxt_switches/ { s += $2 } END { print s }'; }
a=$(switches); sleep 3; b=$(switches)
[ $((b - a)) -le 1 ] && ok || fail "$((b - a)) wake-ups in 3 s"
"$KMSG" emit -F "$T/idle" still-here
wait_for "still-here" "$T/f.out" || fail "no longer follows"
rm "$T/idle"
wait_for "removed" "$T/f.err" || fail "did not notice the log removed"
stop_follow INT

case_ "a stop while waiting for a log cut to nothing under the reading: status 0, no write error"
# The output's reader sleeps, so the follower is still reading the backlog
# when the file is cut to 0 bytes: the next page read is a SIGBUS, and the
# follower waits for a log at the path.  A SIGTERM then must end it as
# every stop does (it said "write error: Operation not permitted": the
# STOPPED of open_followed() taken for a write error).
C=$T/cutzero
"$KMSG" emit -F "$C" --log-size=16M start
seq 1 300000 | "$KMSG" emit -F "$C"
: >"$T/cutzero.err"
{ "$KMSG" follow -F "$C" -n all 2>>"$T/cutzero.err" & echo $! >"$T/cutzero.pid"; wait $!; echo $? >"$T/cutzero.st"; } |
	{ sleep 1; cat >/dev/null; } &
cutpipe=$!
sleep 0.5
: >"$C"
wait_for "waiting for a writer to make the log anew" "$T/cutzero.err" || fail "did not wait for a log: $(cat "$T/cutzero.err")"
kill -TERM "$(cat "$T/cutzero.pid")"
wait $cutpipe
expect_eq 0 "$(cat "$T/cutzero.st")" "exit status after SIGTERM"
grep -q "write error" "$T/cutzero.err" && fail "stderr: $(cat "$T/cutzero.err")" || ok

case_ "SIGTERM ends a follower whose output's reader has stopped reading"
"$KMSG" emit -F "$T/stall" --log-size=16M start
seq 1 300000 | "$KMSG" emit -F "$T/stall"
mkfifo "$T/stall.fifo"
"$KMSG" follow -F "$T/stall" -n all >"$T/stall.fifo" 2>"$T/stall.err" &
spid=$!
exec 7<"$T/stall.fifo"
sleep 1
kill -TERM $spid
sleep 3
state=$(sed 's/.*) //' "/proc/$spid/stat" 2>/dev/null | cut -c1)
{ [ -z "$state" ] || [ "$state" = Z ]; } && ok ||
	fail "still running 3 s after SIGTERM, blocked writing: $(cat /proc/$spid/wchan 2>/dev/null)"
exec 7<&-
wait $spid

case_ "a header zeroed and repaired by a writer while the follower is stopped: nothing lost unsaid"
# dd zeroes the header; the next writer repairs it (a new numbering from
# 1) and writes r1.  The follower, stopped meanwhile, finds the next
# record of another numbering: it must go on where the numbers began
# again, and say so (it went on with r2, r1 lost unsaid).
Z=$T/zeroed
"$KMSG" emit -F "$Z" --log-size=1M start
seq 1 50 | "$KMSG" emit -F "$Z"
start_follow -F "$Z" -n 1
wait_for "50" "$T/f.out" || fail "no history"
kill -STOP $fpid
dd if=/dev/zero of="$Z" bs=4096 count=1 conv=notrunc status=none
"$KMSG" emit -F "$Z" r1
kill -CONT $fpid
sleep 1.5
"$KMSG" emit -F "$Z" r2
wait_for "r2" "$T/f.out" || fail "r2 not followed"
stop_follow TERM
expect_grep "r1" "$T/f.out"
expect_grep "repaired\|written over\|handed out again" "$T/f.err"

case_ "a header zeroed, then repaired by a writer half a second later: followed on"
# The follower looks at the path 100 ms after dd's write and reopens the
# file, whose header it then reads from its own copy; the writer's repair
# (the numbering from 1 again) must reach it: it slept for good, printing
# neither r1 nor the 60 records after it.
Z2=$T/zeroed2
"$KMSG" emit -F "$Z2" --log-size=1M start
seq 1 50 | "$KMSG" emit -F "$Z2"
start_follow -F "$Z2" -n 1
wait_for "50" "$T/f.out" || fail "no history"
dd if=/dev/zero of="$Z2" bs=4096 count=1 conv=notrunc status=none
sleep 0.5
"$KMSG" emit -F "$Z2" r1
seq 2 60 | sed 's/^/r/' | "$KMSG" emit -F "$Z2"
wait_for "r60" "$T/f.out" 5 || fail "deaf after the repair: $(tr '\n' '|' <"$T/f.out") / $(cat "$T/f.err")"
stop_follow TERM
expect_grep "r1\$" "$T/f.out"

case_ "a header damaged under the follower: said, read on, and repaired"
# One 8-byte store a co-writer can make (resv_pos off its 8-byte grid) and
# the futex wake of the followers that goes with an append.
Z3=$T/damaged.log
seq 1 3 | sed 's/^/d/' | "$KMSG" emit -F "$Z3"
start_follow -F "$Z3" -t -n all
wait_for "d3" "$T/f.out" || fail "no history"
python3 - "$Z3" <<'PY'
import ctypes, mmap, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
size = os.fstat(fd).st_size
m = mmap.mmap(fd, size)
resv_pos = struct.unpack_from('<Q', m, 192)[0]
struct.pack_into('<Q', m, 192, resv_pos | 1)
wake = size - 128 - 4096          # the auxiliary area's first word
struct.pack_into('<I', m, wake, struct.unpack_from('<I', m, wake)[0] + 1)
buf = (ctypes.c_char * size).from_buffer(m)
libc = ctypes.CDLL(None)
libc.syscall(202, ctypes.c_void_p(ctypes.addressof(buf) + wake), 1, 2**31 - 1, None, None, 0)
del buf
m.close()
PY
wait_for "its header was found damaged" "$T/f.err" 10 || fail "not said: $(cat "$T/f.err")"
"$KMSG" emit -F "$Z3" d4
wait_for "d4" "$T/f.out" 10 || fail "deaf after the damage: $(cat "$T/f.err")"
expect_grep "repaired by a writer" "$T/f.err"
stop_follow INT
expect_eq "d1 d2 d3 d4" "$(tr '\n' ' ' <"$T/f.out" | sed 's/ $//')" "each record once"

case_ "errors"
expect_status 1 "$KMSG" follow -F - 
expect_grep "needs a live log file" "$T/err"
printf '<6>[    1.000000] text\n' >"$T/text.txt"
expect_status 1 "$KMSG" follow -F "$T/text.txt"
expect_grep "not a live log" "$T/err"
expect_status 2 "$KMSG" follow -F "$L" -n many
expect_grep "'many' is not a number or 'all'" "$T/err"
expect_status 2 "$KMSG" follow -F "$L" -n 99999999999999999999
expect_grep "is more than any log holds" "$T/err"
expect_status 2 "$KMSG" follow -F "$L" extra
expect_status 2 "$KMSG" follow -F "$L" -l nonsense

case_ "the options listed for completions"
"$KMSG" options follow >"$T/got"
expect_grep '^-n --lines arg$' "$T/got"

finish
