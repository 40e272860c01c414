#!/bin/bash
# listen.sh - "kmsg listen" as syslog's senders reach it: the real logger(1),
# Python's SysLogHandler, glibc's syslog(3) on a /dev/log of a private mount
# namespace, senders that lie, garbage, a flood; what each stored is read
# back with "kmsg read -o json".  The machine's own /dev/log is never
# touched: the socket is always in $T, or bind-mounted in a namespace.
. "$(dirname "$0")/lib.sh.inc"

S=$T/log.sock
L=$T/log

# start_listen ARGS...: kmsg listen in the background on $S into $L (a
# 16 MiB log, room for the flood), until its first line says it listens
start_listen() {
	: >"$T/l.err"
	"$KMSG" listen --socket "$S" -F "$L" --log-size 16M "$@" 2>>"$T/l.err" &
	lpid=$!
	wait_for "listening on" "$T/l.err" || fail "the listener never said it listens: $(cat "$T/l.err")"
}
# stop_listen: SIGTERM; the listener ends with status 0 and its counts
stop_listen() {
	local st
	stop_bg $lpid TERM
	st=$?
	expect_eq 0 $st "exit status after SIGTERM"
	expect_grep "received [0-9]*, stored" "$T/l.err"
}
# field SELECTOR KEY: KEY of the last record whose text contains SELECTOR
# (the record's members and fields are looked up once per SELECTOR, kept
# in a file, as field runs in a subshell: a Python start is slow on a busy
# machine)
field() {
	local rec v
	rec=$T/rec.$(printf '%s' "$1" | cksum | cut -d' ' -f1)
	if [ ! -s "$rec" ]; then
		"$KMSG" read -F "$L" -o json | python3 -c '
import json, sys
last = None
for line in sys.stdin:
    r = json.loads(line)
    t = r["text"]
    if isinstance(t, list):  # text that is no UTF-8: its bytes
        t = r["text"] = bytes(t).decode("latin-1")
    if sys.argv[1] in t:
        last = r
for k, v in (last or {}).items():
    print("%s\t%s" % (k, v))' "$1" >"$rec"
	fi
	v=$(awk -F'\t' -v k="$2" '$1 == k { sub(/^[^\t]*\t/, ""); print; f = 1 } END { if (!f) print "<none>" }' "$rec")
	printf '%s\n' "$v"
}
# send BYTES...: each argument as one datagram to $S (Python escapes)
send() {
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for a in sys.argv[2:]:
    s.sendto(a.encode("latin-1").decode("unicode_escape").encode("latin-1"), sys.argv[1])' "$S" "$@"
}

start_listen

case_ "logger's default form: the tag, no pid; the time is the receive time"
logger -u "$S" "plain logger"
expect_eq "user" "$(field 'plain logger' facility_name)" "facility"
expect_eq "notice" "$(field 'plain logger' level_name)" "level"
expect_eq "$(id -un)" "$(field 'plain logger' SYSLOG_IDENTIFIER)" "SYSLOG_IDENTIFIER"
expect_eq "$(id -un): plain logger" "$(field 'plain logger' text)" "text"
expect_eq "$(id -u)" "$(field 'plain logger' _UID)" "_UID"
expect_eq "$(id -g)" "$(field 'plain logger' _GID)" "_GID"

case_ "logger --rfc3164 -i -t: host, tag and its pid, which the kernel's pid matches"
logger -u "$S" --rfc3164 -i -t mytag -p local3.err "rfc3164 message"
expect_eq "local3" "$(field 'rfc3164 message' facility_name)" "facility"
expect_eq "err" "$(field 'rfc3164 message' level_name)" "level"
expect_eq "mytag" "$(field 'rfc3164 message' SYSLOG_IDENTIFIER)" "SYSLOG_IDENTIFIER"
expect_eq "$(hostname)" "$(field 'rfc3164 message' SYSLOG_HOSTNAME)" "SYSLOG_HOSTNAME"
p=$(field 'rfc3164 message' _PID)
expect_eq "$p" "$(field 'rfc3164 message' SYSLOG_PID)" "SYSLOG_PID of an honest logger"
expect_eq "$p" "$(field 'rfc3164 message' claimed_pid)" "the record's pid"
expect_eq "mytag[$p]: rfc3164 message" "$(field 'rfc3164 message' text)" "text"

case_ "logger --rfc5424 with structured data: SD params become fields"
logger -u "$S" --rfc5424 --msgid ID47 --sd-id x@32473 \
	--sd-param 'k="v \"q\" \\ \]"' --sd-param 'Other-Name="2"' "rfc5424 message"
expect_eq 'v "q" \ ]' "$(field 'rfc5424 message' X_K)" "X_K, unescaped"
expect_eq "2" "$(field 'rfc5424 message' X_OTHER_NAME)" "X_OTHER_NAME"
expect_eq "ID47" "$(field 'rfc5424 message' SYSLOG_MSGID)" "SYSLOG_MSGID"
expect_eq "1" "$(field 'rfc5424 message' TIMEQUALITY_TZKNOWN)" "logger's own timeQuality"
expect_eq "<none>" "$(field 'rfc5424 message' SYSLOG_RAW)" "parsed, so no SYSLOG_RAW"
case $(field 'rfc5424 message' SYSLOG_TIMESTAMP) in
	20[0-9][0-9]-[01][0-9]-[0-3][0-9]T*) ok ;;
	*) fail "SYSLOG_TIMESTAMP: $(field 'rfc5424 message' SYSLOG_TIMESTAMP)" ;;
esac

case_ "Python's SysLogHandler: <PRI>text and a NUL"
python3 -c '
import logging, logging.handlers, sys
h = logging.handlers.SysLogHandler(address=sys.argv[1])
log = logging.getLogger("t")
log.addHandler(h)
log.error("python handler message")' "$S"
expect_eq "python handler message" "$(field 'python handler message' text)" "text, NUL gone"
expect_eq "err" "$(field 'python handler message' level_name)" "level"
expect_eq "<none>" "$(field 'python handler message' SYSLOG_RAW)" "a PRI and text is no garbage"

case_ "a sender that lies: the pid it claims is a field, the record's is the kernel's"
real=$(python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"<13>Dec  5 15:08:24 liar[1]: lying message", sys.argv[1])
print(os.getpid())' "$S")
expect_eq "$real" "$(field 'lying message' claimed_pid)" "the record's pid"
expect_eq "$real" "$(field 'lying message' _PID)" "_PID"
expect_eq "1" "$(field 'lying message' SYSLOG_PID)" "SYSLOG_PID, the claim"
# the facts can be named for output as the claims can
expect_eq "{\"SYSLOG_PID\":\"1\",\"_PID\":\"$real\"}" \
	"$("$KMSG" read -F "$L" -o json --output-fields _PID,SYSLOG_PID --grep 'lying message')" \
	"--output-fields _PID,SYSLOG_PID"
expect_eq "liar" "$(field 'lying message' SYSLOG_IDENTIFIER)" "SYSLOG_IDENTIFIER"
case_ "a sender cannot make a _ field: structured data named _PID is no _PID"
real=$(python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"<13>1 - - app 1 - [_ PID=\"1\"][x PID=\"1\"] sd liar", sys.argv[1])
print(os.getpid())' "$S")
expect_eq "$real" "$(field 'sd liar' _PID)" "_PID"
expect_eq "1" "$(field 'sd liar' SD___PID)" "the _ element's key"

case_ "kern from userspace is user, as the kernel and logger have it"
send '<3>kern claim'
expect_eq "user" "$(field 'kern claim' facility_name)" "facility"
expect_eq "err" "$(field 'kern claim' level_name)" "level"

case_ "garbage is kept as its bytes, marked SYSLOG_RAW"
send 'binary\x00with\x01NULs\xff garbage' '<999>not a pri' 'no pri at all, no form'
expect_eq 'binary\x00with\x01NULs\xff garbage' "$("$KMSG" read -F "$L" -t | grep binary)" "raw text"
expect_eq "1" "$(field 'garbage' SYSLOG_RAW)" "SYSLOG_RAW"
expect_eq "<999>not a pri" "$(field 'not a pri' text)" "a bad PRI is text"
expect_eq "1" "$(field 'not a pri' SYSLOG_RAW)" "SYSLOG_RAW"
expect_eq "1" "$(field 'no form' SYSLOG_RAW)" "SYSLOG_RAW"

case_ "too long for the log: stored cut, with how long it was"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
s.sendto(b"<13>longtag: long message " + b"a" * 3000, sys.argv[1])
s.sendto(b"<13>hugetag: huge message " + b"b" * 99974, sys.argv[1])' "$S"
expect_eq 3026 "$(field 'long message' SYSLOG_TRUNCATED)" "the length it had"
expect_eq 1024 "$(field 'long message' text | tr -d '\n' | wc -c)" "text cut to the longest"
expect_eq 100000 "$(field 'huge message' SYSLOG_TRUNCATED)" "a datagram past 64 KiB (MSG_TRUNC)"

case_ "more structured data than a record's fields take: the rest counted"
python3 -c '
import socket, sys
sd = b"".join(b"[e%d p=\"%s\"]" % (i, b"v" * 100) for i in range(200))
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"<13>1 - - app - - " + sd + b" many params", sys.argv[1])' "$S"
expect_eq "$(printf 'v%.0s' $(seq 100))" "$(field 'many params' E0_P)" "the first parameter"
d=$(field 'many params' SYSLOG_FIELDS_DROPPED)
kept=$(grep -c '^E[0-9]*_P' "$T/rec.$(printf '%s' 'many params' | cksum | cut -d' ' -f1)")
expect_eq 200 "$((d + kept))" "kept $kept and dropped $d of 200"

case_ "glibc's syslog(3) on /dev/log of a private mount namespace"
if [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	echo "listen: not root or no unshare -m: syslog(3) not tried" >&2
else
	# a tmpfs on /dev of the namespace only when the machine has no
	# /dev/log to bind over (a container): the real one is never touched
	unshare -m --propagation private sh -c '
		if [ ! -e /dev/log ]; then mount -t tmpfs kmsgtest /dev || exit 1; : >/dev/log; fi
		mount --bind "$1" /dev/log || exit 1
		exec python3 -c "
import ctypes
libc = ctypes.CDLL(None)
libc.openlog(b\"glibctag\", 0x01, 8 * 16)  # LOG_PID, LOG_LOCAL0
libc.syslog(6, b\"%s\", b\"glibc syslog message\")
libc.closelog()"' sh "$S" || fail "syslog(3) in the namespace failed"
	expect_eq "glibctag" "$(field 'glibc syslog message' SYSLOG_IDENTIFIER)" "SYSLOG_IDENTIFIER"
	expect_eq "local0" "$(field 'glibc syslog message' facility_name)" "facility"
	expect_eq "info" "$(field 'glibc syslog message' level_name)" "level"
	p=$(field 'glibc syslog message' _PID)
	expect_eq "$p" "$(field 'glibc syslog message' SYSLOG_PID)" "LOG_PID's pid, the sender's"
	[ -e /dev/log ] && fail "the machine has a /dev/log after the test, which it had not"
fi

case_ "a flood: 4 senders, 50,000 datagrams, no sender waits, every one stored"
before=$("$KMSG" read -F "$L" -o json | wc -l)
python3 - "$S" >"$T/flood" <<'EOF'
import os, socket, sys, time
N, K = 4, 12500
kids = []
for k in range(N):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        # a listener that stalled would make sends wait, then fail here
        s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, (2).to_bytes(8, "little") + bytes(8))
        errors, worst = 0, 0.0
        for i in range(K):
            t = time.monotonic()
            try:
                s.sendto(b"<14>flood[%d]: flood %d %d" % (k, k, i), sys.argv[1])
            except OSError:
                errors += 1
            worst = max(worst, time.monotonic() - t)
        os.write(w, b"%d %.3f\n" % (errors, worst))
        os._exit(0)
    os.close(w)
    kids.append((pid, r))
for pid, r in kids:
    os.waitpid(pid, 0)
    print(os.read(r, 100).decode().strip())
EOF
errors=$(awk '{ s += $1 } END { print s }' "$T/flood")
worst=$(awk '{ if ($2 > w) w = $2 } END { print w }' "$T/flood")
expect_eq 0 "$errors" "send errors (SO_SNDTIMEO 2 s)"
echo "listen: flood: 50000 datagrams sent, send errors $errors, longest send ${worst}s" >&2
# the listener reads what is queued before the records are counted
kill -USR1 $lpid
wait_for "so far: received" "$T/l.err"
n=0
for i in $(seq 100); do
	n=$("$KMSG" read -F "$L" -o json | grep -c '"text":"flood\[')
	[ "$n" -ge 50000 ] && break
	sleep 0.1
done
expect_eq 50000 "$n" "flood records stored"
expect_eq 50000 "$("$KMSG" read -F "$L" -o json | grep -o '"text":"flood[^"]*"' | sort -u | wc -l)" \
	"distinct flood records"
echo "listen: flood: stored $n" >&2

case_ "SIGUSR1: the counts so far; SIGTERM: status 0"
stop_listen
[ -e "$S" ] && fail "the socket is left behind"

case_ "a planted file, a link, a live socket at the path are never replaced"
echo planted >"$S"
expect_status 1 "$KMSG" listen --socket "$S" -F "$L"
expect_grep "no socket: not replaced" "$T/err"
expect_eq planted "$(cat "$S")" "the planted file"
rm -f "$S"
ln -s "$T/elsewhere" "$S"
expect_status 1 "$KMSG" listen --socket "$S" -F "$L"
expect_grep "is a symbolic link" "$T/err"
[ -L "$S" ] && ok || fail "the link was replaced"
rm -f "$S"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print("bound", flush=True)
time.sleep(30)' "$S" >"$T/live" &
live=$!
wait_for bound "$T/live"
expect_status 1 "$KMSG" listen --socket "$S" -F "$L"
expect_grep "another listener owns" "$T/err"
kill $live; wait $live 2>/dev/null

case_ "another user's stale socket is not replaced"
if [ "$(id -u)" = 0 ]; then
	# a sticky directory everyone writes, as /tmp, where one plants a socket
	chmod 0711 "$T"
	mkdir -m 1777 "$T/pub"
	python3 -c '
import os, socket, sys
os.setgid(65534)
os.setuid(65534)
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$T/pub/log.sock"
	expect_status 1 "$KMSG" listen --socket "$T/pub/log.sock" -F "$L"
	expect_grep "another user's socket: not replaced" "$T/err"
	[ -S "$T/pub/log.sock" ] && ok || fail "nobody's socket was removed"
else
	echo "listen: not root: another user's socket not tried" >&2
fi

case_ "without --socket, /dev/log (of a private mount namespace here)"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	# a tmpfs on the namespace's /dev: the machine's /dev/log is never seen
	unshare -m --propagation private sh -c '
		mount -t tmpfs kmsgtest /dev && mknod -m 666 /dev/null c 1 3 || exit 1
		"$1" listen -F "$2" 2>"$3" &
		i=0; while [ ! -S /dev/log ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		logger "on the default socket"
		kill -TERM $!; wait $!' sh "$KMSG" "$L" "$T/d.err" ||
		fail "listen on /dev/log: $(cat "$T/d.err")"
	expect_grep "listening on '/dev/log'" "$T/d.err"
	expect_eq "$(id -un): on the default socket" "$(field 'on the default socket' text)" "text"
else
	echo "listen: not root or no unshare -m: the default socket not tried" >&2
fi

case_ "a stale socket (its listener died) is replaced; the socket is 0666"
rm -f "$S"
python3 -c '
import socket, sys
socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).bind(sys.argv[1])' "$S"
start_listen
expect_grep "replaced the stale socket" "$T/l.err"
expect_eq "srw-rw-rw-" "$(stat -c %A "$S")" "mode"
logger -u "$S" "after stale"
expect_eq "$(id -un): after stale" "$(field 'after stale' text)" "text"
stop_listen

# start_activated dgram|stream: kmsg listen as systemd starts it, given a
# socket of that type bound at $S on fd 3 (sd_listen_fds(3))
start_activated() {
	rm -f "$S"
	python3 - "$S" "$KMSG" "$L" "$1" 2>"$T/l.err" <<'EOF' &
import os, socket, sys
stream = sys.argv[4] == "stream"
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM if stream else socket.SOCK_DGRAM)
s.bind(sys.argv[1])
if stream:
    s.listen()
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)
os.environ["LISTEN_FDS"] = "1"
os.environ["LISTEN_PID"] = str(os.getpid())
os.execv(sys.argv[2], [sys.argv[2], "listen", "-F", sys.argv[3]])
EOF
	lpid=$!
	wait_for "listening on" "$T/l.err" || fail "no start: $(cat "$T/l.err")"
}

case_ "socket activation: LISTEN_FDS names the socket on fd 3"
start_activated dgram
expect_grep "the socket systemd passed'," "$T/l.err"
logger -u "$S" "activated message"
expect_eq "$(id -un): activated message" "$(field 'activated message' text)" "text"
stop_listen

# ---- a stream socket ------------------------------------------------------

# stored TEXT: until a record whose text has TEXT is in the log (a stream's
# frames are stored when the listener reads them, after the client ends)
stored() {
	local i
	for i in $(seq 200); do
		"$KMSG" read -F "$L" -t 2>/dev/null | grep -qF -- "$1" && return 0
		sleep 0.1
	done
	fail "no record with '$1' stored"
	return 1
}
# stream BYTES...: one connection to $S, each argument written (Python
# escapes) as one write, 20 ms apart; prints the client's pid
stream() {
	python3 -c '
import os, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
for a in sys.argv[2:]:
    s.sendall(a.encode("latin-1").decode("unicode_escape").encode("latin-1"))
    time.sleep(0.02)
print(os.getpid())' "$S" "$@"
}

case_ "--stream: logger's LF framing and its --octet-count"
rm -f "$S"
start_listen --stream
expect_grep "listening on '$S' (stream)" "$T/l.err"
logger -u "$S" -i -t streamtag "stream lf message"
logger -u "$S" --octet-count -t streamtag "stream octet message"
stored "stream octet message"
expect_eq "streamtag[$(field 'stream lf message' _PID)]: stream lf message" \
	"$(field 'stream lf message' text)" "text, LF gone, the kernel's pid logger's"
expect_eq "streamtag: stream octet message" "$(field 'stream octet message' text)" "octet-counted text"
expect_eq "$(id -u)" "$(field 'stream octet message' _UID)" "_UID"

case_ "a stream's frames: several in one write, one across writes, NUL-ended, empty lines"
pid=$(stream '<13>one write A\n<14>one write B\x00\n\n<15>split ' 'across ' 'writes\n' \
	'no end at the close')
stored "no end at the close"
expect_eq "$pid" "$(field 'one write A' _PID)" "_PID, the client's"
expect_eq "info" "$(field 'one write B' level_name)" "the NUL-ended frame's level"
expect_eq "split across writes" "$(field 'split across' text)" "a frame over three writes"
expect_eq "$pid" "$(field 'split across' claimed_pid)" "its pid"
expect_eq "<none>" "$(field 'no end at the close' SYSLOG_TRUNCATED)" "a last line without LF is whole"
expect_eq 4 "$("$KMSG" read -F "$L" -o json | grep -c "\"_PID\":\"$pid\"")" "records, no empty one"

case_ "a connection a forked child writes on too: each message is its writer's"
python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"<13>written by the parent\n")
kid = os.fork()
if kid == 0:
    s.sendall(b"<13>written by the child\n")
    os._exit(0)
os.waitpid(kid, 0)
print(os.getpid(), kid)' "$S" >"$T/pids"
read -r parent kid <"$T/pids"
stored "written by the child"
expect_eq "$parent" "$(field 'written by the parent' _PID)" "the parent's _PID"
expect_eq "$kid" "$(field 'written by the child' _PID)" "the child's _PID, not the connector's"

case_ "octet counting: a frame with LFs in it, then a count too short, a lying one"
python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
for m in (b"<13>octet one\nwith a LF\n", b"<13>octet two ends here"):
    s.sendall(b"%d %s" % (len(m), m))
    time.sleep(0.02)
# 9 bytes of a longer message; then a count no message has
s.sendall(b"9 <13>short by far\n")
s.sendall(b"99999999999 <13>huge lie\n<13>after the lie\n")' "$S"
stored "after the lie"
expect_eq 'octet one\nwith a LF' "$("$KMSG" read -F "$L" -o json | grep -o '"text":"octet one[^"]*"' | sed 's/^"text":"//;s/"$//')" \
	"a frame's own LFs (the last one ends the message, as on a datagram)"
expect_eq "octet two ends here" "$(field 'octet two' text)" "the second frame"
expect_eq "short" "$("$KMSG" read -F "$L" -t | grep -x 'short')" "a short count's frame: what it counted"
expect_grep "no octet count: bad framing; read as lines" "$T/l.err"
expect_eq " by far" "$("$KMSG" read -F "$L" -t | grep -x ' by far')" "what followed, as a line: nothing lost"
expect_eq "after the lie" "$(field 'after the lie' text)" "the line after a lying count"
expect_eq "1" "$(field 'huge lie' SYSLOG_RAW)" "the lying frame kept as its bytes"

case_ "a connection closed mid-frame: what came is stored, with the length announced"
stream '100 <13>cut by the close' >/dev/null
stored "cut by the close"
expect_eq 100 "$(field 'cut by the close' SYSLOG_TRUNCATED)" "SYSLOG_TRUNCATED"

case_ "a 10 MB line without LF: stored cut at the longest text, memory bounded, said once"
hwm() { awk '/^VmHWM/ { print $2 }' "/proc/$lpid/status"; }
before=$(hwm)
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"<13>longline: " + b"z" * (10 << 20))
s.sendall(b"\n<13>after the long line\n")' "$S"
stored "after the long line"
expect_eq $((14 + (10 << 20))) "$(field 'longline' SYSLOG_TRUNCATED)" "the line's length"
expect_eq 1024 "$(field 'longline' text | tr -d '\n' | wc -c)" "text cut to the longest"
expect_eq 1 "$(grep -c 'a line longer than 65536 bytes' "$T/l.err")" "said once"
if [ -z "$SANITIZED" ]; then
	grow=$(( $(hwm) - before ))
	[ "$grow" -lt 4096 ] && ok || fail "the listener's peak grew by $grow KiB for one long line"
fi

case_ "silent connections hold no one up; past 64, the one silent longest gives way"
python3 - "$S" >"$T/silent" <<'EOF2' &
import socket, sys, time
conns = []
for i in range(64):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    conns.append(s)
print("connected", flush=True)
time.sleep(60)
EOF2
silent=$!
wait_for connected "$T/silent" || fail "64 silent connections were not made"
# the 65th waits until one of the 64 has been silent a second, then is served
logger -u "$S" "past the silent ones"
stored "past the silent ones"
expect_grep "64 connections open: the one of pid $silent, silent for [0-9]* ms, closed" "$T/l.err"
kill $silent; wait $silent 2>/dev/null

case_ "a stream's counts; many clients at once, none lost"
python3 - "$S" <<'EOF2'
import os, socket, sys
kids = []
for k in range(100):
    pid = os.fork()
    if pid == 0:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        s.sendall(b"".join(b"<13>crowd %d %d\n" % (k, i) for i in range(100)))
        os._exit(0)
    kids.append(pid)
for pid in kids:
    os.waitpid(pid, 0)
EOF2
for i in $(seq 200); do
	n=$("$KMSG" read -F "$L" -t | grep -c '^crowd ')
	[ "$n" -ge 10000 ] && break
	sleep 0.1
done
expect_eq 10000 "$("$KMSG" read -F "$L" -t | grep '^crowd ' | sort -u | wc -l)" "distinct records of 100 clients"

case_ "SIGTERM: a connection made before it, not yet accepted, is read"
# (the signal first, so that the loop sees it before the connection)
kill -STOP $lpid
kill -TERM $lpid
logger -u "$S" "connected before the end"
kill -CONT $lpid
stop_listen
stored "connected before the end"
expect_grep "connections [0-9]* (open 0)" "$T/l.err"
[ -e "$S" ] && fail "the stream socket is left behind"

case_ "socket activation with a stream socket: its type is the kernel's"
start_activated stream
expect_grep "systemd passed' (stream)" "$T/l.err"
logger -u "$S" "activated stream message"
stored "activated stream message"
stop_listen
rm -f "$S"

case_ "usage errors"
expect_status 2 "$KMSG" listen --socket "" -F "$L"
expect_status 2 "$KMSG" listen extra -F "$L"

finish
