#!/bin/bash
# security.sh - the log as a shared and possibly hostile file: a planted
# file at the log path, a user with read permission only, and every byte a
# message can hold reaching a terminal only escaped, in every output
# format of read and follow.  (Symbolic links: emit.sh; lying headers:
# test_log.c, test_damage.c and kmsg-torn; clearing rights: clear.sh;
# files another user planted where kmsg writes: planted.sh.)
. "$(dirname "$0")/lib.sh.inc"

L=$T/log

# as_user CMD...: runs CMD as the unprivileged user nobody (root may write
# anything, so the permission checks need another user)
as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# on_tty CMD: runs the shell command CMD with a terminal as its output
# (script(1)), output post-processing off so that the bytes seen are the
# bytes kmsg wrote; output in $T/tty
on_tty() {
	TERM=xterm NO_COLOR=1 script -qec "stty -opost; $1" /dev/null </dev/null >"$T/tty"
}

# terminal_safe FILE: no byte a terminal acts on, other than newline and
# tab: no C0 control, DEL, C1 control, invalid UTF-8 or bidi control
terminal_safe() {
	local bad
	if LC_ALL=C grep -q -P '[\x00-\x08\x0b-\x1f\x7f]' "$1"; then
		bad=$(LC_ALL=C grep -a -o -P '[\x00-\x08\x0b-\x1f\x7f].{0,20}' "$1" | head -1 | od -c | head -2)
		fail "a control byte reaches the terminal: $bad"
	elif ! iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1; then
		fail "invalid UTF-8 reaches the terminal"
	elif LC_ALL=C grep -q -P '\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]' "$1"; then
		fail "a C1 or bidi control reaches the terminal"
	else
		ok
	fi
}

# ---------------------------------------------------------------------------
case_ "a file planted at the log path by another user is not written"
mkdir -p "$T/planted"
"$KMSG" emit -F "$T/planted/log" "theirs"
chown 12345:12345 "$T/planted/log"
sum=$(cksum <"$T/planted/log")
expect_status 1 "$KMSG" emit -F "$T/planted/log" "ours"
expect_grep "owned by another user; refusing to write to it (remove it" "$T/err"
expect_eq "$sum" "$(cksum <"$T/planted/log")" "the planted file"
case_ "reading another user's log is fine"
expect_eq "theirs" "$("$KMSG" read -F "$T/planted/log" -t)"

case_ "another user's log is not cleared: clear and read -c refuse as emit does"
expect_status 1 "$KMSG" clear -F "$T/planted/log"
expect_grep "owned by another user; refusing to write to it (remove it" "$T/err"
expect_status 1 "$KMSG" read -F "$T/planted/log" -c
expect_grep "owned by another user; refusing to write to it (remove it" "$T/err"
expect_eq "" "$(cat "$T/out")" "what read -c printed"
expect_eq "$sum" "$(cksum <"$T/planted/log")" "the other user's log"

case_ "a symbolic link to a log is not cleared through: clear and read -c refuse as emit does"
"$KMSG" emit -F "$T/linked" "kept"
ln -s linked "$T/link"
sum=$(cksum <"$T/linked")
expect_status 1 "$KMSG" clear -F "$T/link"
expect_grep "link: is a symbolic link; kmsg does not follow links to its log" "$T/err"
expect_status 1 "$KMSG" read -F "$T/link" -c
expect_grep "link: is a symbolic link; kmsg does not follow links to its log" "$T/err"
expect_eq "" "$(cat "$T/out")" "what read -c printed"
expect_eq "$sum" "$(cksum <"$T/linked")" "the log the link points to"
expect_eq "kept" "$("$KMSG" read -F "$T/linked" -t)" "the records after the refused clears"

case_ "a file that is not a log is left alone, with the fix in the message"
printf 'something else entirely\n%.0s' $(seq 300) >"$T/other"
sum=$(cksum <"$T/other")
expect_status 1 "$KMSG" emit -F "$T/other" x
expect_grep "not a kmsg log file; refusing to touch it (give the log's path with --file)" "$T/err"
expect_status 1 "$KMSG" clear -F "$T/other"
expect_eq "$sum" "$(cksum <"$T/other")" "the other file"

case_ "a log whose header lies about its sizes is refused, with what to do"
"$KMSG" emit -F "$T/lying" --log-size 64K "x"
# the data size field (offset 40), in both copies of the header; the
# header checksum then no longer matches either
printf '\377\377\377\377' | dd of="$T/lying" bs=1 seek=40 conv=notrunc 2>/dev/null
printf '\377\377\377\377' | dd of="$T/lying" bs=1 seek=$((65536 - 128 + 40)) conv=notrunc 2>/dev/null
expect_status 1 "$KMSG" read -F "$T/lying"
expect_grep "log header is damaged or inconsistent with the file, in both copies" "$T/err"
# never advice that loses the records: keep the file
expect_grep "Keep the file" "$T/err"
if grep -q -i "move it aside\|remove\|delete" "$T/err"; then fail "advice that loses records"; else ok; fi
expect_status 1 "$KMSG" emit -F "$T/lying" y
expect_status 1 "$KMSG" follow -F "$T/lying"

# ---------------------------------------------------------------------------
chmod 755 "$T"
"$KMSG" emit -F "$L" "written by the owner"
chmod 644 "$L"

case_ "read permission only: read works"
expect_status 0 as_user "$KMSG" read -F "$L" -t
expect_eq "written by the owner" "$(cat "$T/out")"

case_ "read permission only: follow sees new records as they come"
: >"$T/f.out"
# setpriv itself, not the function: $! must be the follower
setpriv --reuid=65534 --regid=65534 --clear-groups "$KMSG" follow -F "$L" -t -n 0 \
	>>"$T/f.out" 2>"$T/f.err" &
fpid=$!
for i in $(seq 1 100); do
	"$KMSG" emit -F "$L" "new $i"
	grep -q "new $i" "$T/f.out" && break
	sleep 0.05
done
expect_grep "^new [0-9]*$" "$T/f.out"
stop_bg $fpid TERM
expect_eq 0 $? "follow's exit status"

case_ "read permission only: no writing, no clearing"
expect_status 1 as_user "$KMSG" emit -F "$L" "intruder"
expect_grep "permission denied (writing needs write permission on the log)" "$T/err"
expect_status 1 as_user "$KMSG" clear -F "$L"
expect_status 1 as_user "$KMSG" read -F "$L" -c
if "$KMSG" read -F "$L" -t | grep -q intruder; then fail "the intruder's record is in the log"; else ok; fi
expect_eq "written by the owner" "$("$KMSG" read -F "$L" -t | head -1)" "the oldest record after a refused clear"
chmod 700 "$T"

# ---------------------------------------------------------------------------
# Every byte value but newline (which ends a message on stdin), then valid
# text mixed with invalid UTF-8 and the characters a terminal acts on.
B=$T/bytes
{
	for i in $(seq 0 255); do
		[ "$i" = 10 ] && continue
		printf "\\$(printf %03o "$i")"
	done
	printf '\n'
	printf 'ok: caf\303\251 \346\227\245 | nel \302\205 | csi \302\233 | rlo \342\200\256 | lri \342\201\246 | alm \330\234 | lrm \342\200\216 | overlong \300\257 | surrogate \355\240\200 | cut \342\202 | f5 \365\200\200\200\n'
} | "$KMSG" emit -F "$B"
"$KMSG" emit -F "$B" --field=EVIL=$'\e]0;title\a\e[2J\xe2\x80\xae\xc2\x9b' "with a field"

case_ "every byte: kmsg read's line, exactly"
# printable ASCII and tab as they are, everything else \xHH (as dmesg)
want=
for i in $(seq 0 255); do
	[ "$i" = 10 ] && continue
	if [ "$i" = 9 ] || { [ "$i" -ge 32 ] && [ "$i" -le 126 ]; }; then
		want+=$(printf "\\$(printf %03o "$i")")
	else
		want+=$(printf '\\x%02x' "$i")
	fi
done
on_tty "$KMSG read -F $B -t"
expect_eq "$want" "$(head -1 "$T/tty")" "the line of every byte"
expect_eq 'ok: café 日 | nel \xc2\x85 | csi \xc2\x9b | rlo \xe2\x80\xae | lri \xe2\x81\xa6 | alm \xd8\x9c | lrm \xe2\x80\x8e | overlong \xc0\xaf | surrogate \xed\xa0\x80 | cut \xe2\x82 | f5 \xf5\x80\x80\x80' \
	"$(sed -n 2p "$T/tty")" "valid text kept, the rest escaped"

for fmt in "-t" "-x -T" "--fields" "-o kmsg" "-J" "-r" "--reltime" "-H -P" "-L=always"; do
	case_ "every byte through a terminal: kmsg read $fmt"
	on_tty "$KMSG read -F $B $fmt"
	if [ "$fmt" = -L=always ]; then
		# kmsg's own colour sequences are the only escapes allowed
		sed -i 's/\x1b\[[0-9;]*m//g' "$T/tty"
	fi
	terminal_safe "$T/tty"
	expect_grep "with a field" "$T/tty"
done
for fmt in "-t" "--fields" "-o kmsg" "-J"; do
	case_ "every byte through a terminal: kmsg follow $fmt"
	on_tty "timeout -s INT 1 $KMSG follow -F $B -n all $fmt"
	terminal_safe "$T/tty"
	expect_grep "with a field" "$T/tty"
done

case_ "--noescape is the one way to pass bytes through"
on_tty "$KMSG read -F $B -t --noescape"
if LC_ALL=C grep -q -P '\x1b' "$T/tty"; then ok; else fail "--noescape escaped ESC"; fi

case_ "a file name or an argument reaches an error message escaped"
expect_status 1 "$KMSG" stat -F "$T/x"$'\e[2J\xc2\x9b'"y"
expect_grep 'x\\x1b\[2J\\xc2\\x9by: no such log' "$T/err"
expect_status 2 "$KMSG" read --color=$'\e]0;owned\a'
expect_grep '--color \\x1b\]0;owned\\x07: not one of' "$T/err"
if LC_ALL=C grep -q -P '[\x00-\x08\x0b-\x1f\x7f]' "$T/err"; then
	fail "a control byte reached stderr"
else ok; fi

finish
