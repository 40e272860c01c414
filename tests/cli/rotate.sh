#!/bin/bash
# rotate.sh - what operators' tools do to a log file: logrotate (the real
# one, with a private configuration and state file) in its copytruncate and
# create modes, an empty file, a file cut inside its header, a FIFO planted
# where a log is read, and a log on a FUSE file system (bindfs).
. "$(dirname "$0")/lib.sh.inc"

L=$T/app.kmsg

# rotate MODE: logrotate -f over $L alone, MODE copytruncate or create
rotate() {
	cat >"$T/lr.conf" <<EOF
$L {
	rotate 3
	missingok
	nocompress
	$1
}
EOF
	/usr/sbin/logrotate -f -s "$T/lr.state" "$T/lr.conf" 2>"$T/lr.err" ||
		fail "logrotate $1: $(head -c 300 "$T/lr.err")"
}

# start_follow ARGS...: a follower in the background, output in $T/f.*
start_follow() {
	: >"$T/f.out"
	: >"$T/f.err"
	"$KMSG" follow "$@" >>"$T/f.out" 2>>"$T/f.err" &
	FPID=$!
}

if [ ! -x /usr/sbin/logrotate ]; then
	echo "rotate: no logrotate (tools/deps installs it): skipping its cases" >&2
else
	case_ "logrotate copytruncate: the copy holds the old records, the log goes on"
	for i in 1 2 3; do "$KMSG" emit -F "$L" "before $i"; done
	start_follow -F "$L" -t -n all
	wait_for "before 3" "$T/f.out" || fail "the follower did not start"
	rotate copytruncate
	expect_eq 0 "$(stat -c %s "$L")" "size after copytruncate"
	wait_for "cut to 0 bytes" "$T/f.err" || fail "the follower said nothing of the cut"
	expect_status 0 "$KMSG" emit -F "$L" "after the cut"
	expect_status 0 "$KMSG" read -F "$L" -t
	expect_eq "after the cut" "$(cat "$T/out")" "the log made anew"
	expect_status 0 "$KMSG" read -F "$L.1" -t
	expect_eq "before 1
before 2
before 3" "$(cat "$T/out")" "logrotate's copy"
	wait_for "after the cut" "$T/f.out" || fail "the follower did not follow the new log"
	expect_grep "cut to 0 bytes (as logrotate's copytruncate does)" "$T/f.err"
	expect_grep "any after record 3 unshown here" "$T/f.err"
	expect_grep "made anew by a writer" "$T/f.err"
	stop_bg "$FPID" INT >/dev/null

	case_ "logrotate create: the new empty file is made a log by the next writer"
	start_follow -F "$L" -t -n all
	wait_for "after the cut" "$T/f.out" || fail "the follower did not start"
	rotate "create 0640 root root"
	expect_eq "0 640" "$(stat -c '%s %a' "$L")" "logrotate's new file"
	wait_for "replaced by an empty file" "$T/f.err" || fail "the follower said nothing"
	expect_status 0 "$KMSG" emit -F "$L" "after create"
	expect_eq "640" "$(stat -c %a "$L")" "the operator's mode kept"
	expect_status 0 "$KMSG" read -F "$L" -t
	expect_eq "after create" "$(cat "$T/out")" "the new log"
	expect_status 0 "$KMSG" read -F "$L.1" -t
	expect_eq "after the cut" "$(cat "$T/out")" "the renamed log"
	wait_for "after create" "$T/f.out" || fail "the follower did not follow the new log"
	expect_grep "replaced by an empty file (as logrotate's create mode does)" "$T/f.err"
	stop_bg "$FPID" INT >/dev/null
	rm -f "$L".*
fi

case_ "an empty file: read and stat say so, the first writer makes it"
E=$T/empty.kmsg
: >"$E"
chmod 0604 "$E"
expect_status 0 "$KMSG" read -F "$E"
expect_grep "is empty: a log not yet made.*nothing to read" "$T/err"
expect_eq "" "$(cat "$T/out")" "records read"
expect_status 1 "$KMSG" read -c -F "$E"
expect_grep "the next 'kmsg emit' makes the log in it" "$T/err"
expect_status 1 "$KMSG" stat -F "$E"
expect_grep "is empty: a log not yet made" "$T/err"
expect_status 1 "$KMSG" clear -F "$E"
expect_grep "the next 'kmsg emit' makes the log in it" "$T/err"
ino=$(stat -c %i "$E")
expect_status 0 "$KMSG" emit -F "$E" --log-size 64K "first"
expect_eq "$ino 604 65536" "$(stat -c '%i %a %s' "$E")" "the same file, its mode, the size asked"
expect_status 0 "$KMSG" read -F "$E" -t
expect_eq "first" "$(cat "$T/out")"

case_ "a follower started on an empty file waits for it to be made"
: >"$E"
start_follow -F "$E" -t
wait_for "waiting for a writer to make it" "$T/f.err" || fail "nothing said: $(cat "$T/f.err")"
"$KMSG" emit -F "$E" "made while followed"
wait_for "made while followed" "$T/f.out" || fail "the follower missed the new log"
stop_bg "$FPID" INT >/dev/null

case_ "writers racing on an empty file make one log and keep every record"
: >"$E"
for w in 1 2 3 4 5 6 7 8; do
	(for i in $(seq 25); do "$KMSG" emit -F "$E" "w$w $i" || exit 1; done) &
done
bad=0
for w in 1 2 3 4 5 6 7 8; do wait %$w || bad=$((bad + 1)); done
expect_eq 0 "$bad" "writers that failed"
expect_status 0 "$KMSG" read -F "$E" -t
expect_eq 200 "$(sort -u "$T/out" | wc -l)" "distinct records"
expect_eq 200 "$(wc -l <"$T/out")" "records"

case_ "a file cut inside the magic is a cut log, not text"
for n in 4 5 6 7; do
	head -c "$n" <<<"KMSGRNG" >"$T/cut$n"
	expect_status 1 "$KMSG" read -F "$T/cut$n"
	expect_grep "ends inside a log's header" "$T/err"
	expect_status 1 "$KMSG" stat -F "$T/cut$n"
	expect_grep "ends inside a log's header" "$T/err"
done
# three letters are no sign of a log: read as dmesg text
printf 'KMS' >"$T/cut3"
expect_status 0 "$KMSG" read -F "$T/cut3" -t
expect_eq "KMS" "$(cat "$T/out")"

case_ "a FIFO with no writer is refused at once, not waited on"
mkfifo "$T/fifo"
for sub in "read -F" "stat -F" "follow -F" "read -K" "dump -F"; do
	# shellcheck disable=SC2086 # the subcommand and its option
	expect_status 1 timeout 20 "$KMSG" $sub "$T/fifo"
	if grep -q "FIFO with no writer\|not a kmsg log\|not a live log" "$T/err"; then ok; else
		fail "$sub on a FIFO: $(head -c 300 "$T/err")"; fi
done
# a FIFO with a writer is read, as a pipe is
(printf '<6>[    1.000000] through a fifo\n' >"$T/fifo") &
sleep 0.2
expect_status 0 timeout 20 "$KMSG" read -F "$T/fifo" -t
expect_eq "through a fifo" "$(cat "$T/out")"
wait

case_ "a log on a FUSE file system: writers refuse it, readers read it"
if [ "$(id -u)" != 0 ] || [ ! -x /usr/bin/bindfs ] || [ ! -c /dev/fuse ]; then
	echo "rotate: not root, or no bindfs or /dev/fuse: skipping the FUSE cases" >&2
else
	mkdir "$T/under" "$T/fuse"
	"$KMSG" emit -F "$T/under/log" "written below"
	if bindfs --no-allow-other "$T/under" "$T/fuse" 2>"$T/bindfs.err"; then
		expect_status 1 "$KMSG" emit -F "$T/fuse/log" "through fuse"
		expect_grep "is on fuse, a file system other machines can share" "$T/err"
		expect_grep "KMSG_ONE_HOST=1" "$T/err"
		expect_status 1 "$KMSG" emit -F "$T/fuse/new" "a new log there"
		expect_grep "is on fuse" "$T/err"
		[ -e "$T/under/new" ] && fail "a refused log was made anyway"
		expect_status 1 "$KMSG" clear -F "$T/fuse/log"
		expect_grep "is on fuse" "$T/err"
		expect_status 0 "$KMSG" read -F "$T/fuse/log" -t
		expect_eq "written below" "$(cat "$T/out")" "reading stays allowed"
		KMSG_ONE_HOST=1 expect_status 0 "$KMSG" emit -F "$T/fuse/log" "one host"
		expect_status 0 "$KMSG" read -F "$T/under/log" -t
		expect_eq "written below
one host" "$(cat "$T/out")" "KMSG_ONE_HOST=1 lets it write"
		fusermount3 -u "$T/fuse" 2>/dev/null || umount "$T/fuse"
	else
		fail "bindfs could not mount: $(head -c 300 "$T/bindfs.err")"
	fi
fi

finish
