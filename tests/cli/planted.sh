#!/bin/bash
# planted.sh - root writing where another user planted something: in a
# sticky, world-writable directory (as /tmp), a user of the test's own
# leaves a FIFO, a symbolic link or a setuid file where root's dump -o or
# --cursor-file goes; nothing of root's may reach them, nor take their
# mode.  Each case runs with fs.protected_symlinks, protected_regular and
# protected_fifos off (0) and on (1, 2, 2): kmsg's rules must not lean on
# them.  Needs root; the sysctl values are put back at exit.
. "$(dirname "$0")/lib.sh.inc"

if [ "$(id -u)" != 0 ]; then
	echo "planted: not run as root: skipped (the cases need root and a user to make)" >&2
	finish
	exit
fi
for tool in useradd userdel setpriv; do
	if ! command -v "$tool" >/dev/null; then
		echo "planted: no $tool: skipped" >&2
		finish
		exit
	fi
done

U=kmsgplant$$
SYSCTLS="protected_symlinks protected_regular protected_fifos"
declare -A saved
for s in $SYSCTLS; do
	saved[$s]=$(cat "/proc/sys/fs/$s")
done
readers=
cleanup() {
	local s
	# the readers left blocked on a FIFO, if a case stopped early
	for s in $readers; do
		kill "$s" 2>/dev/null
		wait "$s" 2>/dev/null
	done
	for s in $SYSCTLS; do
		[ -n "${saved[$s]}" ] && echo "${saved[$s]}" >"/proc/sys/fs/$s"
	done
	userdel "$U" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
if ! useradd -M -N -r -s /usr/sbin/nologin "$U"; then
	echo "planted: cannot make the user $U: skipped" >&2
	finish
	exit
fi
uid=$(id -u "$U")
gid=$(id -g "$U")

# as_mallory CMD...: CMD as the test's unprivileged user
as_mallory() { setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"; }

# protect SYMLINKS REGULAR FIFOS: sets the three sysctls; 1 if /proc/sys
# takes no writes here
protect() {
	echo "$1" >/proc/sys/fs/protected_symlinks 2>/dev/null &&
	echo "$2" >/proc/sys/fs/protected_regular 2>/dev/null &&
	echo "$3" >/proc/sys/fs/protected_fifos 2>/dev/null
}

# mode_of FILE: "owner octal-mode"
mode_of() { stat -c '%U %a' "$1"; }

umask 022
chmod 755 "$T"
D=$T/sticky
L=$T/log
"$KMSG" emit -F "$L" "root's secret"
chmod 640 "$L"
cur=$("$KMSG" read -F "$L" --show-cursor | sed -n 's/^-- cursor: //p')
"$KMSG" emit -F "$L" "after the cursor"
echo "root's own" >"$T/root-file"
sum=$(cksum <"$T/root-file")
mkfifo -m 600 "$T/root-fifo"

for p in "0 0 0" "1 2 2"; do
	if ! protect $p; then
		echo "planted: cannot set fs.protected_* to $p: that round skipped" >&2
		continue
	fi
	P="protected_symlinks, _regular, _fifos $p"
	rm -rf "$D"
	mkdir "$D"
	chmod 1777 "$D"

	case_ "$P: a FIFO another user planted at -o, with a reader, gets nothing"
	as_mallory mkfifo -m 600 "$D/s.gz"
	# setpriv itself, not the function: $! must be the reader
	setpriv --reuid="$uid" --regid="$gid" --clear-groups \
		sh -c 'exec cat "$1" >"$2"' sh "$D/s.gz" "$D/stolen" &
	reader=$!
	readers+=" $reader"
	expect_status 1 timeout 20 "$KMSG" dump -F "$L" -o "$D/s.gz"
	expect_grep "s.gz: is a FIFO; -o writes into a FIFO or a device only with --special" "$T/err"
	expect_status 1 timeout 20 "$KMSG" dump -F "$L" -o "$D/s.gz" --special
	expect_grep "s.gz: owned by another user; refusing to write to it or replace it" "$T/err"
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
	expect_eq 0 "$(stat -c %s "$D/stolen")" "the bytes the planted FIFO's reader got"
	expect_eq fifo "$(stat -c %F "$D/s.gz")" "the planted FIFO"

	case_ "$P: a symbolic link another user planted at -o is neither written through nor replaced"
	as_mallory ln -s "$T/root-file" "$D/y.gz"
	as_mallory ln -s /dev/null "$D/n.gz"
	as_mallory ln -s "$T/root-fifo" "$D/f.gz"
	timeout 20 cat "$T/root-fifo" >"$T/from-root-fifo" &
	reader=$!
	readers+=" $reader"
	for o in y.gz n.gz f.gz; do
		for special in "" --special; do
			expect_status 1 timeout 20 "$KMSG" dump -F "$L" -o "$D/$o" $special
			expect_grep "$o: is a symbolic link; kmsg neither writes through a link nor replaces one" "$T/err"
		done
		[ -L "$D/$o" ] && ok || fail "$o: the planted link replaced"
	done
	kill "$reader" 2>/dev/null
	wait "$reader" 2>/dev/null
	expect_eq "$sum" "$(cksum <"$T/root-file")" "root's file the link points to"
	expect_eq 0 "$(stat -c %s "$T/from-root-fifo")" "the bytes through the link to root's FIFO"

	case_ "$P: a 06777 file another user planted at -o keeps root's dump out"
	as_mallory sh -c 'echo planted >"$1" && chmod 6777 "$1"' sh "$D/m.gz"
	expect_status 1 "$KMSG" dump -F "$L" -o "$D/m.gz"
	expect_grep "m.gz: owned by another user; refusing to write to it or replace it" "$T/err"
	expect_eq "$U 6777" "$(mode_of "$D/m.gz")" "the planted file"
	expect_eq planted "$(tr -cd 'a-z\n' <"$D/m.gz" | head -c 40)" "the planted file's content"

	case_ "$P: a 06777 cursor file another user planted is neither read nor replaced"
	as_mallory sh -c 'printf "%s\n" "$2" >"$1" && chmod 6777 "$1"' sh "$D/c.cf" "$cur"
	expect_status 1 "$KMSG" read -F "$L" -t --cursor-file "$D/c.cf"
	expect_grep "c.cf: owned by another user; refusing to write to it or replace it" "$T/err"
	expect_eq "" "$(cat "$T/out")" "what was read"
	expect_eq "$U 6777" "$(mode_of "$D/c.cf")" "the planted cursor file"

	case_ "$P: a symbolic link another user planted as --cursor-file"
	"$KMSG" read -F "$L" --cursor-file "$T/root.cf" >/dev/null
	cp "$T/root.cf" "$T/root.cf.before"
	as_mallory ln -s "$T/root.cf" "$D/l.cf"
	expect_status 1 "$KMSG" read -F "$L" -t --cursor-file "$D/l.cf"
	expect_grep "l.cf: is a symbolic link; kmsg neither writes through a link" "$T/err"
	[ -L "$D/l.cf" ] && ok || fail "the planted link replaced"
	expect_file_eq "$T/root.cf.before" "$T/root.cf"

	case_ "$P: clear and read -c refuse a log another user made, and a link planted to root's log"
	"$KMSG" emit -F "$D/theirs.log" "theirs"
	chown "$uid:$gid" "$D/theirs.log"
	as_mallory ln -s "$L" "$D/root.log"
	lsum=$(cksum <"$L")
	tsum=$(cksum <"$D/theirs.log")
	for c in clear "read -c"; do
		expect_status 1 "$KMSG" $c -F "$D/theirs.log"
		expect_grep "theirs.log: owned by another user; refusing to write to it" "$T/err"
		expect_status 1 "$KMSG" $c -F "$D/root.log"
		expect_grep "root.log: is a symbolic link; kmsg does not follow links to its log" "$T/err"
	done
	expect_eq "$tsum" "$(cksum <"$D/theirs.log")" "the other user's log"
	expect_eq "$lsum" "$(cksum <"$L")" "root's log the link points to"

	case_ "$P: nothing of root's in the sticky directory is setuid, setgid or world-writable"
	expect_eq "" "$(find "$D" -mindepth 1 -user 0 \( -perm /6000 -o -perm -002 \) ! -type l)" "such files"

	case_ "$P: root's own files in the sticky directory: made and replaced, root's modes"
	expect_status 0 "$KMSG" dump -F "$L" -o "$D/new.gz"
	expect_eq "root 640" "$(mode_of "$D/new.gz")" "a new dump"
	echo old >"$D/own.gz"
	chmod 6640 "$D/own.gz"
	expect_status 0 "$KMSG" dump -F "$L" -o "$D/own.gz"
	expect_eq "root 640" "$(mode_of "$D/own.gz")" "root's 06640 file replaced"
	expect_status 0 "$KMSG" read -F "$L" --cursor-file "$D/new.cf"
	expect_status 0 "$KMSG" read -F "$L" --cursor-file "$D/new.cf"
	expect_eq "root 644" "$(mode_of "$D/new.cf")" "a cursor file"
	expect_eq "" "$(ls "$D" | grep tmp-)" "temporary files left"
done

finish
