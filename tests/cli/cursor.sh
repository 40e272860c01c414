#!/bin/bash
# cursor.sh - journalctl's cursors in kmsg read and kmsg follow:
# --show-cursor, --cursor, --after-cursor, --cursor-file, on real logs:
# a reader that keeps a cursor file sees each record once while writers
# write, cursors of another log are refused, evicted records show as a
# gap, numbers handed out again (a copy of the log put back, then a
# reboot) are said, and a cursor file killed mid-write is never torn.
. "$(dirname "$0")/lib.sh.inc"

BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
CUR='^r=[0-9a-f]\{32\};s=[0-9a-f]\{16\};i=[0-9]\+\(;t=[1-9][0-9]*\)\?$'

# cursor_of FILE: the cursor of FILE's "-- cursor: " line
cursor_of() { sed -n 's/^-- cursor: //p' "$1"; }
# untimed: stdin without the cursors' ";t=TIME" (the records' times vary)
untimed() { sed 's/;t=[0-9]*//'; }
# joined FILE: its lines joined by '|', cursors untimed
joined() { untimed <"$1" | paste -sd'|'; }

case_ "--show-cursor: the last line names the log, its numbering and the last record"
for m in one two three four; do "$KMSG" emit "$m"; done
"$KMSG" read -t --show-cursor >"$T/out" 2>"$T/err"
expect_eq "one|two|three|four|-- cursor: " "$(sed 's/\(-- cursor: \).*/\1/' "$T/out" | paste -sd'|')"
c=$(cursor_of "$T/out")
expect_eq 1 "$(grep -c "$CUR" <<<"$c")" "cursor form [$c]"
ring=$("$KMSG" stat | sed -n 's/^ring id: *//p')
ident=$("$KMSG" stat | sed -n 's/^numbering: *\([0-9a-f]*\).*/\1/p')
expect_eq "r=$ring;s=$ident;i=4" "$(untimed <<<"$c")"
t4=$(grep -o ';t=[0-9]*$' <<<"$c")
expect_eq ";t=$("$KMSG" read -o json -n 1 | python3 -c 'import json,sys
print(json.load(sys.stdin)["time_ns"])')" "$t4" "t= is the record's time"
c=$(untimed <<<"$c")
expect_eq "" "$(cat "$T/err")" "stderr"

case_ "--show-cursor's cursor feeds --after-cursor and --cursor"
"$KMSG" emit five
"$KMSG" read -t --after-cursor "$c" >"$T/out"
expect_eq "five" "$(cat "$T/out")"
"$KMSG" read -t --cursor "$c" >"$T/out"
expect_eq "four|five" "$(joined "$T/out")"
"$KMSG" read -t --after-cursor "${c%i=4}i=1" --show-cursor >"$T/out"
expect_eq "two|three|four|five|-- cursor: ${c%i=4}i=5" "$(joined "$T/out")"
# nothing after it: nothing printed, the same cursor shown
"$KMSG" read -t --after-cursor "${c%i=4}i=5" --show-cursor >"$T/out"
expect_eq "-- cursor: ${c%i=4}i=5" "$(cat "$T/out")"
# the time tells the record: a cursor whose time is not its record's
# goes on at the oldest record, and says so
"$KMSG" read -t --after-cursor "${c%i=4}i=4;t=1" >"$T/out" 2>"$T/err"
expect_eq "one|two|three|four|five" "$(joined "$T/out")" "a cursor of another record"
expect_grep "not under its number any more" "$T/err"

case_ "cursors with -n, --reverse, filters and JSON"
"$KMSG" read -t --after-cursor "${c%i=4}i=1" -n 2 --show-cursor >"$T/out"
expect_eq "two|three|-- cursor: ${c%i=4}i=3" "$(joined "$T/out")" "-n: the first N after it"
"$KMSG" read -t --after-cursor "${c%i=4}i=2" --reverse --show-cursor >"$T/out"
expect_eq "five|four|three|-- cursor: ${c%i=4}i=5" "$(joined "$T/out")" "--reverse"
"$KMSG" read -t --after-cursor "${c%i=4}i=1" -g '^th' --show-cursor >"$T/out"
expect_eq "three|-- cursor: ${c%i=4}i=5" "$(joined "$T/out")" \
	"a filter: the cursor passes the records it leaves out"
"$KMSG" read -o json --after-cursor "${c%i=4}i=3" >"$T/out"
expect_eq "four|five" "$(python3 -c 'import json,sys
print("|".join(json.loads(l)["text"] for l in sys.stdin))' <"$T/out")" "-o json"

case_ "a dump keeps the log's ring id and numbering: the same cursors read it"
"$KMSG" dump -o "$T/dump.gz" 2>/dev/null
"$KMSG" read -t -F "$T/dump.gz" --after-cursor "${c%i=4}i=3" --show-cursor >"$T/out"
expect_eq "four|five|-- cursor: ${c%i=4}i=5" "$(joined "$T/out")"

case_ "malformed cursors are usage errors naming what is wrong"
bad() {
	expect_status 2 "$KMSG" read --after-cursor "$1"
	expect_grep "$2" "$T/err"
	expect_grep "Try 'kmsg read --help'" "$T/err"
}
bad "" "no 'r='"
bad "x=1" "no 'r='"
bad "r=12;s=0123456789abcdef;i=1" "r= takes the log's ring id: 32 hexadecimal digits"
bad "r=${ring%?}g;s=$ident;i=1" "r= takes the log's ring id"
bad "r=$ring" "no ';s='"
bad "r=$ring;s=12;i=1" "s= takes the numbering's identity: 16 hexadecimal digits"
bad "r=$ring;s=$ident" "no ';i='"
bad "r=$ring;s=$ident;i=" "i= takes a sequence number"
bad "r=$ring;s=$ident;i=-1" "i= takes a sequence number"
bad "r=$ring;s=$ident;i=99999999999999999999" "i= is out of range"
bad "r=$ring;s=$ident;i=1;x=2" "';x=2' after the sequence number"
bad "r=$ring;s=$ident;i=1;t=" "t= takes the record's time in ns: decimal digits"
bad "r=$ring;s=$ident;i=1;t=0" "t= is out of range"
bad "r=$ring;s=$ident;i=1;t=9223372036854775808" "t= is out of range"
bad "r=$ring;s=$ident;i=1;t=5;i=2" "';i=2' after the time"
bad "r=$ring;s=$ident;i=1 " "i= takes a sequence number"
expect_status 2 "$KMSG" follow --cursor "r=1"
expect_grep "Try 'kmsg follow --help'" "$T/err"

case_ "options that say where to start, or keep a position, do not combine"
expect_status 2 "$KMSG" read --cursor "$c" --after-cursor "$c"
expect_grep "give one of them" "$T/err"
expect_status 2 "$KMSG" read --cursor "$c" --cursor-file "$T/cf"
expect_status 2 "$KMSG" read -c --show-cursor
expect_grep "clear mark" "$T/err"
expect_status 2 "$KMSG" read --list-boots --show-cursor
expect_status 2 "$KMSG" follow -n 3 --after-cursor "$c"
expect_grep "a cursor already says where to start" "$T/err"
printf '<6>[    1.000000] text\n' >"$T/dmesg.txt"
expect_status 1 "$KMSG" read -F "$T/dmesg.txt" --show-cursor
expect_grep "no sequence numbers" "$T/err"

case_ "a cursor of another log is refused, naming both ring ids"
KMSG_FILE=$T/other "$KMSG" emit other
oring=$(KMSG_FILE=$T/other "$KMSG" stat | sed -n 's/^ring id: *//p')
expect_status 1 env KMSG_FILE="$T/other" "$KMSG" read --after-cursor "$c"
expect_grep "the cursor is of another log (ring id $ring; this log's is $oring)" "$T/err"
expect_eq "" "$(cat "$T/out")" "nothing printed"
expect_status 1 env KMSG_FILE="$T/other" "$KMSG" follow --after-cursor "$c"
expect_grep "the cursor is of another log" "$T/err"

case_ "--cursor-file: absent, the whole log; then only what is new; unchanged when nothing is"
cf=$T/cf
"$KMSG" read -t --cursor-file "$cf" >"$T/out"
expect_eq "one|two|three|four|five" "$(joined "$T/out")"
expect_eq "${c%i=4}i=5" "$(untimed <"$cf")" "the file"
ino=$(stat -c %i "$cf")
"$KMSG" read -t --cursor-file "$cf" >"$T/out"
expect_eq "" "$(cat "$T/out")" "nothing new"
expect_eq "$ino" "$(stat -c %i "$cf")" "the file left as it was"
"$KMSG" emit six
"$KMSG" read -t --cursor-file "$cf" >"$T/out"
expect_eq "six" "$(cat "$T/out")" "only what is new"
expect_eq "${c%i=4}i=6" "$(untimed <"$cf")" "the file"
expect_eq "" "$(ls "$T" | grep 'cf.tmp')" "no temporary file left"
expect_eq 644 "$(umask 022; rm -f "$T/m.cf"; "$KMSG" read --cursor-file "$T/m.cf" >/dev/null
	stat -c %a "$T/m.cf")" "a new cursor file's mode, as umask leaves it"
chmod 600 "$T/m.cf"
"$KMSG" emit seven
"$KMSG" read --cursor-file "$T/m.cf" >/dev/null
expect_eq 600 "$(stat -c %a "$T/m.cf")" "a replaced cursor file keeps its mode"
printf 'r=1\n' >"$T/badcf"
expect_status 1 "$KMSG" read --cursor-file "$T/badcf"
expect_grep "badcf: not a cursor file (r= takes" "$T/err"
expect_grep "remove it" "$T/err"

case_ "a cursor file with terminal escapes after the cursor: shown as \\xHH, never sent as they are"
printf '%s;\033]0;title\007\033[2J\n' "$c" >"$T/esc.cf"
expect_status 1 "$KMSG" read --cursor-file "$T/esc.cf"
expect_grep "';\\\\x1b]0;title\\\\x07\\\\x1b\[2J' after the sequence number" "$T/err"
expect_eq 0 "$(tr -d '\n' <"$T/err" | tr -cd '\000-\037\177' | wc -c)" "control bytes on stderr"

case_ "--cursor-file: a FIFO, a device or a directory is refused at once, and left as it is"
mkfifo "$T/fifo.cf"
expect_status 1 timeout 10 "$KMSG" read --cursor-file "$T/fifo.cf"
expect_grep "fifo.cf: not a regular file (a FIFO)" "$T/err"
expect_eq p "$(stat -c %A "$T/fifo.cf" | cut -c1)" "still a FIFO"
expect_status 1 "$KMSG" read --cursor-file /dev/null
expect_grep "/dev/null: not a regular file (a device)" "$T/err"
expect_eq "" "$(grep 'remove it' "$T/err")" "no advice to remove a device"
expect_status 1 "$KMSG" read --cursor-file "$T"
expect_grep "not a regular file (a directory)" "$T/err"

case_ "--cursor-file that is a symbolic link: refused before reading, the link and its target untouched"
"$KMSG" read --cursor-file "$T/target.cf" >/dev/null
cp "$T/target.cf" "$T/target.before"
ln -s target.cf "$T/link.cf"
"$KMSG" emit linked
expect_status 1 "$KMSG" read -t --cursor-file "$T/link.cf"
expect_eq "" "$(cat "$T/out")" "nothing printed"
expect_grep "link.cf: is a symbolic link; kmsg neither writes through a link nor replaces one" "$T/err"
expect_file_eq "$T/target.before" "$T/target.cf"
[ -L "$T/link.cf" ] && ok || fail "the link replaced"

case_ "--cursor-file in a directory where it cannot be replaced: said before reading"
expect_status 1 "$KMSG" read -t --cursor-file "$T/none/c"
expect_eq "" "$(cat "$T/out")" "nothing printed that the cursor would not remember"
expect_grep "none/c: cannot keep the cursor file: no file can be made in $T/none" "$T/err"

case_ "a script reading with --cursor-file while writers write sees every record once"
L=$T/busy
writer() {
	for i in $(seq 1 60); do
		printf '%s-%d-a\n%s-%d-b\n' "$1" "$i" "$1" "$i" | KMSG_FILE=$L "$KMSG" emit
	done
}
KMSG_FILE=$L "$KMSG" emit start
writer w1 & p1=$!
writer w2 & p2=$!
: >"$T/seen"
while kill -0 $p1 2>/dev/null || kill -0 $p2 2>/dev/null; do
	KMSG_FILE=$L "$KMSG" read -t --cursor-file "$T/busy.cf" >>"$T/seen" ||
		fail "read --cursor-file failed"
done
wait $p1 $p2
KMSG_FILE=$L "$KMSG" read -t --cursor-file "$T/busy.cf" >>"$T/seen"
expect_eq 241 "$(wc -l <"$T/seen")" "records seen"
expect_eq "" "$(sort "$T/seen" | uniq -d | head -3)" "records seen twice"
for w in w1 w2; do
	expect_eq "" "$(for i in $(seq 1 60); do for s in a b; do
		grep -qx "$w-$i-$s" "$T/seen" || echo "$w-$i-$s"; done; done | head -3)" \
		"records of $w never seen"
done
# in the order written
expect_eq "" "$(grep '^w1' "$T/seen" | sort -t- -k2,2n -k3,3 -c 2>&1)" "w1 in order"

case_ "records evicted after the cursor show as a gap"
S=$T/small
KMSG_FILE=$S "$KMSG" emit --log-size 16K first
KMSG_FILE=$S "$KMSG" read --cursor-file "$T/small.cf" >/dev/null
seq 1 400 | KMSG_FILE=$S "$KMSG" emit
KMSG_FILE=$S "$KMSG" read -t --cursor-file "$T/small.cf" >"$T/out" 2>"$T/err"
first=$(head -1 "$T/out")
expect_grep "^kmsg: $((first - 1)) records lost before seq $((first + 1)):" "$T/err"
expect_eq 400 "$(tail -1 "$T/out")" "the newest record"
expect_eq "i=401" "$(grep -o 'i=[0-9]*' "$T/small.cf")" "the cursor file"

case_ "numbers handed out again (a copy of the log put back, then a reboot) are said"
R=$T/restored
KMSG_FILE=$R "$KMSG" emit a
cp "$R" "$T/backup"
KMSG_FILE=$R "$KMSG" emit b
KMSG_FILE=$R "$KMSG" emit c
KMSG_FILE=$R "$KMSG" read -t --cursor-file "$T/r.cf" >/dev/null
expect_grep ';i=3;' "$T/r.cf"
cp "$T/backup" "$R"  # the log as it was after "a": its next number is 2 again
# the next boot's first writer renews the numbering from 2 on
"$BOOTS" "$R" bbbb000011112222 1700000000 1 || fail "kmsg-boots failed"
KMSG_FILE=$R "$KMSG" read -t --cursor-file "$T/r.cf" >"$T/out" 2>"$T/err"
expect_eq "boot bbbb000011112222 record 0" "$(cat "$T/out")" "going on at 2, the new record 2"
expect_grep "numbers from 2 on were handed out again since the cursor was made" "$T/err"
expect_grep "going on there, at the first number not certainly read" "$T/err"
expect_grep "s=$(KMSG_FILE=$R "$KMSG" stat | sed -n 's/^numbering: *\([0-9a-f]*\).*/\1/p');i=2;" \
	"$T/r.cf"
# a numbering the log no longer knows (three reboots since): the time of
# the cursor's record finds it; without it, nothing tells: the oldest
old=$(cat "$T/r.cf")
for b in cccc cccd ccce; do
	"$BOOTS" "$R" ${b}000011112222 1700001000 1 || fail "kmsg-boots failed"
done
KMSG_FILE=$R "$KMSG" read -q -t --after-cursor "$old" >"$T/out" 2>"$T/err"
expect_eq "" "$(cat "$T/err")" "nothing said: the record is where it was"
expect_eq "boot cccc000011112222 record 0|boot cccd000011112222 record 0|boot ccce000011112222 record 0" \
	"$(joined "$T/out")" "only the records after it"
KMSG_FILE=$R "$KMSG" read -t --after-cursor "$(untimed <<<"$old")" >"$T/out" 2>"$T/err"
expect_grep "nothing tells where it is (its numbering s=" "$T/err"
expect_grep "going on at the oldest record, 1" "$T/err"
expect_eq "a" "$(head -1 "$T/out")" "from the oldest"
# renewed only once since: the number still names the same record
KMSG_FILE=$R "$KMSG" read -t --cursor-file "$T/r.cf" >/dev/null 2>&1
"$BOOTS" "$R" dddd000011112222 1700002000 1 || fail "kmsg-boots failed"
KMSG_FILE=$R "$KMSG" read -t --cursor-file "$T/r.cf" >"$T/out" 2>"$T/err"
expect_eq "boot dddd000011112222 record 0" "$(cat "$T/out")" "after a reboot"
expect_eq "" "$(cat "$T/err")" "nothing said after an ordinary reboot"

case_ "a copy of the log put back within one boot: the cursor lies past its end"
Q=$T/q
KMSG_FILE=$Q "$KMSG" emit a
cp "$Q" "$T/qbackup"
KMSG_FILE=$Q "$KMSG" emit b
KMSG_FILE=$Q "$KMSG" read --cursor-file "$T/q.cf" >/dev/null
cp "$T/qbackup" "$Q"
KMSG_FILE=$Q "$KMSG" emit d  # number 2 again, under the same numbering
KMSG_FILE=$Q "$KMSG" read -t --cursor-file "$T/q.cf" >"$T/out" 2>"$T/err"
expect_eq "a|d" "$(joined "$T/out")" "from the oldest: d is not missed"
expect_grep "going on at the oldest record, 1" "$T/err"

case_ "kmsg follow: starts at a cursor, and keeps one when a signal ends it"
F=$T/fol
KMSG_FILE=$F "$KMSG" emit f1
KMSG_FILE=$F "$KMSG" emit f2
KMSG_FILE=$F "$KMSG" read --cursor-file "$T/f.cf" >/dev/null
KMSG_FILE=$F "$KMSG" emit f3
KMSG_FILE=$F "$KMSG" follow -t --cursor-file "$T/f.cf" --show-cursor >"$T/fout" 2>"$T/ferr" &
fp=$!
wait_for '^f3$' "$T/fout" || fail "follow did not start after the cursor"
KMSG_FILE=$F "$KMSG" emit f4
KMSG_FILE=$F "$KMSG" emit --no-newline "open"
wait_for '^f4$' "$T/fout"
stop_bg $fp INT
expect_eq 0 $? "status after SIGINT"
expect_eq "f3|f4|open|-- cursor: " "$(sed 's/\(-- cursor: \).*/\1/' "$T/fout" | paste -sd'|')" \
	"the line left open shown before the cursor"
expect_grep ';i=5;' "$T/f.cf"
KMSG_FILE=$F "$KMSG" emit f5
KMSG_FILE=$F "$KMSG" follow -t --cursor-file "$T/f.cf" >"$T/fout" 2>"$T/ferr" &
fp=$!
wait_for '^f5$' "$T/fout" || fail "follow did not go on from the cursor file"
stop_bg $fp TERM
expect_eq "f5" "$(cat "$T/fout")" "after SIGTERM: only the new record"
expect_grep ';i=6;' "$T/f.cf"

case_ "kmsg follow killed by SIGKILL: its cursor file is at most a second behind"
KMSG_FILE=$F "$KMSG" follow -t --cursor-file "$T/f.cf" >"$T/fout" 2>"$T/ferr" &
fp=$!
sleep 0.5
for i in 7 8 9; do KMSG_FILE=$F "$KMSG" emit "f$i"; done
wait_for '^f9$' "$T/fout" || fail "follow did not show the new records"
for _ in $(seq 40); do grep -q ';i=9;' "$T/f.cf" && break; sleep 0.1; done
kill -KILL $fp; wait $fp 2>/dev/null
expect_grep ';i=9;' "$T/f.cf"
KMSG_FILE=$F "$KMSG" emit f10
KMSG_FILE=$F "$KMSG" read -t --cursor-file "$T/f.cf" >"$T/out"
expect_eq "f10" "$(cat "$T/out")" "the next reading after the kill: only what is new"
expect_eq "" "$(ls "$T" | grep 'f.cf.tmp')" "temporary files left"

case_ "follow --cursor-file ends on SIGINT while a writer floods it faster than its output"
# it shows what was written when the signal came, not what comes after:
# else a writer faster than the pipe kept it going for ever
Fl=$T/flood
KMSG_FILE=$Fl "$KMSG" emit --log-size 16M start
KMSG_FILE=$Fl "$KMSG" follow -n 0 --cursor-file "$T/flood.cf" 2>"$T/ferr" |
	(while read -r _; do :; done) &
fp=
for _ in $(seq 200); do
	fp=$(pgrep -f "follow -n 0 --cursor-file $T/flood.cf" | head -1)
	[ -n "$fp" ] && break
	sleep 0.1
done
[ -n "$fp" ] || fail "the follower did not start"
(yes flood | KMSG_FILE=$Fl "$KMSG" emit 2>/dev/null) &
wp=$!
sleep 1
start=$(date +%s%N)
# sent again each second: one that comes before the handler is set is lost
for i in $(seq 200); do
	[ $((i % 10)) = 1 ] && kill -INT "$fp" 2>/dev/null
	kill -0 "$fp" 2>/dev/null || break
	sleep 0.1
done
kill -0 "$fp" 2>/dev/null && fail "the follower still ran 20 s after SIGINT"
kill "$wp" 2>/dev/null; pkill -f "^yes flood$"; kill "$fp" 2>/dev/null; wait
expect_grep ';i=[0-9]*;' "$T/flood.cf"
echo "cursor.sh: the flooded follower ended $(( ($(date +%s%N) - start) / 1000000 )) ms after SIGINT" >&2

case_ "a cursor file is never torn: kill -9 at any moment leaves the old cursor or the new"
K=$T/kill
KMSG_FILE=$K "$KMSG" emit k0
torn=0 valid=0
for i in $(seq 1 40); do
	KMSG_FILE=$K "$KMSG" emit "k$i"
	KMSG_FILE=$K "$KMSG" read --cursor-file "$T/k.cf" >/dev/null 2>&1 &
	kp=$!
	# anywhere from before the start to after the end of the write
	sleep "0.00$((RANDOM % 10))"
	kill -9 $kp 2>/dev/null
	wait $kp 2>/dev/null
	[ -e "$T/k.cf" ] || continue
	if grep -q "$CUR" "$T/k.cf" && [ "$(wc -l <"$T/k.cf")" = 1 ]; then
		valid=$((valid + 1))
	else
		torn=$((torn + 1))
	fi
done
expect_eq 0 "$torn" "torn cursor files"
KMSG_FILE=$K "$KMSG" emit kend
KMSG_FILE=$K "$KMSG" read -t --cursor-file "$T/k.cf" >"$T/out" 2>"$T/err"
expect_eq 0 $? "the file read afterwards"
expect_eq "kend" "$(tail -1 "$T/out")" "the newest record"
[ "$valid" -gt 0 ] || echo "cursor: no read finished before its kill (the machine is slow)"
# and at each step of the write for certain: strace holds the reader in a
# system call (the temporary file's fsync, the rename, the directory's
# fsync) while it is killed
if command -v strace >/dev/null && strace -qq -o /dev/null true 2>/dev/null; then
	step() { # WANT INJECT...: kill -9 while held; the file must hold WANT's cursor
		local want=$1 sp kp n=0; shift
		KMSG_FILE=$K "$KMSG" emit "more"
		strace -f -qq -o /dev/null "$@" env KMSG_FILE="$K" "$KMSG" read \
			--cursor-file "$T/k.cf" >/dev/null 2>&1 &
		sp=$!
		# the reader is held for 5 s where it was asked; 0.5 s gets it there
		sleep 0.5
		kp=$(pgrep -P $sp kmsg || pgrep -P "$(pgrep -P $sp | head -1)" kmsg)
		kill -9 $kp
		wait $sp 2>/dev/null
		expect_eq 1 "$(grep -c "$CUR" "$T/k.cf")" "a whole cursor after kill -9 in $*"
		expect_grep ";i=$want;" "$T/k.cf"
	}
	KMSG_FILE=$K "$KMSG" read --cursor-file "$T/k.cf" >/dev/null
	n=$(grep -o 'i=[0-9]*' "$T/k.cf" | cut -c3-)
	step $n -e trace=fsync -e inject=fsync:delay_enter=5s:when=1
	step $n -e trace=rename -e inject=rename:delay_enter=5s:when=1
	step $((n + 3)) -e trace=fsync -e inject=fsync:delay_enter=5s:when=2
else
	echo "cursor: strace cannot trace here: the kills at each step of the write are skipped"
fi

finish
