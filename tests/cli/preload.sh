#!/bin/bash
# preload.sh - libkmsg-syslog.so under programs that call syslog(3): a C
# program built plain and fortified (threads, fork, %m and errno, the mask,
# priorities, long messages), compared message for message and byte for
# byte (LOG_PERROR) with glibc's own syslog(3) sending to kmsg listen;
# Python's syslog module; a real daemon (busybox udhcpd) and PAM (runuser);
# a log that cannot be opened (one line, then glibc's syslog(3)); a
# set-user-ID program, which LD_PRELOAD does not reach.  glibc's syslog(3)
# only ever runs in a private mount namespace whose /dev/log is a link to
# a socket in $T: the machine's /dev/log is never used.
. "$(dirname "$0")/lib.sh.inc"

B=$(dirname "$KMSG")
PRELOAD=$B/libkmsg-syslog.so
C=$B/kmsg-syslog-client
CF=$B/kmsg-syslog-client-fortified
for f in "$PRELOAD" "$C" "$CF"; do
	[ -e "$f" ] || { echo "preload: $f is missing: build the targets kmsg-syslog," \
		"kmsg-syslog-client and kmsg-syslog-client-fortified" >&2; exit 1; }
done
PRE=$PRELOAD
if [ "$SANITIZED" = address ]; then
	# the sanitizer's runtime first, as it must be; other programs
	# (python, busybox) are not built with it, and leaks are not theirs
	PRE="$(gcc -print-file-name=libasan.so) $PRELOAD"
	export ASAN_OPTIONS=detect_leaks=0
fi
root=0
[ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && root=1

# pl LOG CMD...: CMD with the preload, writing LOG
pl() { local log=$1; shift; KMSG_FILE=$log LD_PRELOAD=$PRE "$@"; }

# recs LOG: a line a record (lines joined): text (newlines as \n),
# facility, level, SYSLOG_IDENTIFIER, SYSLOG_PID, the record's pid,
# SYSLOG_TRUNCATED, SYSLOG_FACILITY, tab-separated, "-" for none
recs() {
	"$KMSG" read -F "$1" -o json | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    t = r["text"]
    if isinstance(t, list):
        t = bytes(t).decode("latin-1")
    print("\t".join(str(x) for x in [t.replace("\n", "\\n"), r.get("facility_name"),
        r.get("level_name"), r.get("SYSLOG_IDENTIFIER", "-"), r.get("SYSLOG_PID", "-"),
        r.get("claimed_pid"), r.get("SYSLOG_TRUNCATED", "-"), r.get("SYSLOG_FACILITY", "-")]))'
}
# col N: the Nth column of recs' lines
col() { cut -f"$1"; }

# in_ns CMD...: CMD in a private mount namespace whose /dev is a tmpfs with
# null, zero and urandom of the machine's, and /dev/log a link to $S
S=$T/log.sock
in_ns() {
	mkdir -p "$T/hostdev"
	unshare -m --propagation private bash -c '
		mount --rbind /dev "$1" && mount -t tmpfs kmsgtest /dev || exit 99
		for n in null zero urandom; do : >/dev/$n; mount --bind "$1/$n" /dev/$n || exit 99; done
		ln -s "$2" /dev/log
		shift 2
		exec "$@"' in_ns "$T/hostdev" "$S" "$@"
}
# start_listen LOG: kmsg listen on $S into LOG (glibc's syslog(3) sends there)
start_listen() {
	: >"$T/l.err"
	"$KMSG" listen --socket "$S" -F "$1" 2>>"$T/l.err" &
	lpid=$!
	wait_for "listening on" "$T/l.err" || fail "the listener never said it listens: $(cat "$T/l.err")"
}
stop_listen() { stop_bg $lpid TERM >/dev/null; }
trap '[ -n "${lpid:-}" ] && kill $lpid 2>/dev/null; rm -rf "$T"' EXIT

# ---------------------------------------------------------------------------
case_ "a plain program: tag, LOG_PID, facility, level, %m, errno kept"
L=$T/plain.log
pl "$L" "$C" open ptag pid 128 log 6 "plain one" log 11 "plain two" \
	errno 2 "opening" vlog 6 "through vsyslog" >"$T/out" 2>"$T/err"
expect_eq 0 $? "exit status (3: errno changed): $(cat "$T/out" "$T/err")"
recs "$L" >"$T/r"
p=$(head -1 "$T/r" | col 6)
printf '%s\n' "ptag[$p]: plain one	local0	info	ptag	$p	$p	-	-" \
	"ptag[$p]: plain two	user	err	ptag	$p	$p	-	-" \
	"ptag[$p]: opening: No such file or directory	local0	err	ptag	$p	$p	-	-" \
	"ptag[$p]: through vsyslog	local0	info	ptag	$p	$p	-	-" >"$T/want"
expect_file_eq "$T/want" "$T/r"
expect_eq "" "$(cat "$T/err")" "nothing on stderr without LOG_PERROR"

case_ "fortified: the program calls __syslog_chk and __vsyslog_chk, the preload takes them"
nm -D "$CF" >"$T/nm"
expect_grep " U __syslog_chk" "$T/nm"
expect_grep " U __vsyslog_chk" "$T/nm"
nm -D "$C" >"$T/nm.plain"
grep -q "__syslog_chk" "$T/nm.plain" && fail "the plain client calls __syslog_chk"
L=$T/fortified.log
pl "$L" "$CF" open ftag 0 0 log 6 "fortified one" errno 13 "denied" vlog 5 "fortified v" \
	>"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | col 1-3 >"$T/r"
printf '%s\n' "ftag: fortified one	user	info" "ftag: denied: Permission denied	user	err" \
	"ftag: fortified v	user	notice" >"$T/want"
expect_file_eq "$T/want" "$T/r"
nm -D --defined-only "$PRELOAD" | awk '{ print $3 }' | sort >"$T/exports"
printf '%s\n' __syslog_chk __vsyslog_chk closelog openlog setlogmask syslog vsyslog | sort >"$T/want"
expect_file_eq "$T/want" "$T/exports"

case_ "8 threads x 1000 messages: every one stored, once"
L=$T/threads.log
"$KMSG" emit -F "$L" --log-size 8M "start" || fail "emit"
pl "$L" "$C" open th 0 0 threads 8 1000 >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | col 1 | grep '^th: thread [0-7] message [0-9]*$' >"$T/r"
expect_eq 8000 "$(wc -l <"$T/r")" "messages stored"
expect_eq 8000 "$(sort -u "$T/r" | wc -l)" "distinct messages"
for t in 0 7; do
	expect_eq 1000 "$(grep -c "^th: thread $t message" "$T/r")" "thread $t's"
done

case_ "fork: the child's LOG_PID is the child's, with and without threads logging"
L=$T/fork.log
"$KMSG" emit -F "$L" --log-size 8M "start" || fail "emit"
pl "$L" "$C" open fk pid 0 log 6 "parent before" fork "the child" log 6 "parent after" \
	fork-threads "the child of a threaded parent" >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" >"$T/r"
c1=$(sed -n 's/^child //p' "$T/out" | head -1)
c2=$(sed -n 's/^child //p' "$T/out" | sed -n 2p)
pp=$(grep "^fk\[[0-9]*\]: parent before" "$T/r" | col 6)
expect_eq "fk[$c1]: the child	$c1	$c1" "$(grep ': the child	' "$T/r" | col 1,5,6)" "first child"
expect_eq "fk[$c2]: the child of a threaded parent	$c2	$c2" \
	"$(grep ': the child of a threaded' "$T/r" | col 1,5,6)" "second child"
expect_eq "fk[$pp]: parent after" "$(grep ': parent after' "$T/r" | col 1)" "the parent after"
[ "$pp" != "$c1" ] && [ -n "$c1" ] && ok || fail "parent $pp, child $c1"

case_ "setlogmask: the old mask back; masked calls format nothing (an invalid pointer)"
L=$T/mask.log
pl "$L" "$C" open mk 0 0 mask 24 log 7 "debug masked" log 3 "err kept" log 4 "warning kept" \
	log 6 "info masked" masked mask 0 mask 255 log 7 "debug again" >"$T/out" 2>&1
expect_eq 0 $? "exit status (a crash: the masked message was formatted): $(cat "$T/out")"
printf '%s\n' "old mask 0xff" "old mask 0x18" "old mask 0x18" >"$T/want"
expect_file_eq "$T/want" "$T/out"
recs "$L" | col 1 >"$T/r"
printf '%s\n' "mk: err kept" "mk: warning kept" "mk: debug again" >"$T/want"
expect_file_eq "$T/want" "$T/r"

case_ "priorities: bits outside complained of as glibc does; kern is the default facility"
L=$T/prio.log
pl "$L" "$C" open bp 0 128 log $((0x400 | 6)) "bad bits" log 3 "kern given" \
	log $((30 << 3 | 6)) "facility 30" >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | col 1-3,8 >"$T/r"
printf '%s\n' "bp: syslog: unknown facility/priority: 406	auth	err	-" \
	"bp: bad bits	local0	info	-" "bp: kern given	local0	err	-" \
	"bp: facility 30	user	info	30" >"$T/want"
expect_file_eq "$T/want" "$T/r"

case_ "a message longer than the log takes: in parts joined back; past 64 KiB cut, and said"
L=$T/long.log
"$KMSG" emit -F "$L" --log-size 4M "start" || fail "emit"
pl "$L" "$C" open lg 0 0 long 3000 long 70000 >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | grep '^lg: ' >"$T/r"
digits() { awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "%d", i % 10 }'; }
expect_eq "lg: $(digits 3000)" "$(sed -n 1p "$T/r" | col 1)" "3000 bytes, whole"
expect_eq "-" "$(sed -n 1p "$T/r" | col 7)" "not cut"
expect_eq "lg: $(digits 65531)" "$(sed -n 2p "$T/r" | col 1)" "70000 bytes, cut at 64 KiB"
expect_eq 70004 "$(sed -n 2p "$T/r" | col 7)" "SYSLOG_TRUNCATED: the whole length"
expect_eq 2 "$(wc -l <"$T/r")" "two lines"

case_ "LOG_PERROR and fd 2 closed; a log that fills and evicts"
L=$T/small.log
"$KMSG" emit -F "$L" --log-size 64K "start" || fail "emit"
pl "$L" "$C" open c2 perror 0 close-stderr log 6 "stderr closed" threads 1 3000 >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | col 1 >"$T/r"
expect_eq "c2: thread 0 message 2999" "$(tail -1 "$T/r")" "the newest"
"$KMSG" stat -F "$L" >"$T/stat"
grep -q "^evicted: *0$" "$T/stat" && fail "nothing evicted: $(cat "$T/stat")" || ok

case_ "set-uid to nobody after openlog(LOG_NDELAY): the log opened before stays written"
L=$T/setuid.log
pl "$L" "$C" open su ndelay 0 setuid log 6 "after setuid" >"$T/out" 2>"$T/err"
expect_eq 0 $? "exit status: $(cat "$T/out" "$T/err")"
expect_eq "su: after setuid" "$(recs "$L" | col 1)" "stored"
expect_eq "" "$(cat "$T/err")" "no complaint"

case_ "a program killed in the middle of its calls: the log goes on"
L=$T/killed.log
"$KMSG" emit -F "$L" --log-size 1M "start" || fail "emit"
(KMSG_FILE=$L LD_PRELOAD=$PRE exec "$C" open kl 0 0 threads 4 10000000 >/dev/null 2>&1) &
kp=$!
i=0
while [ "$("$KMSG" stat -F "$L" | sed -n 's/^next: *//p')" -lt 1000 ] && [ $i -lt 400 ]; do
	sleep 0.05; i=$((i + 1))
done
kill -KILL $kp; wait $kp 2>/dev/null
pl "$L" "$C" open kl 0 0 log 6 "after the kill" >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
expect_eq "kl: after the kill" "$("$KMSG" read -F "$L" | tail -1 | sed 's/^\[[ 0-9.]*\] //')" "read"

case_ "Python's syslog module"
L=$T/python.log
pl "$L" python3 -c '
import syslog
syslog.openlog("py", syslog.LOG_PID, syslog.LOG_DAEMON)
syslog.syslog(syslog.LOG_WARNING, "from python, 100%s")
syslog.closelog()
syslog.syslog("after closelog")' >"$T/out" 2>&1
expect_eq 0 $? "exit status: $(cat "$T/out")"
recs "$L" | col 1-4 | sed -E 's/\[[0-9]+\]/[PID]/' >"$T/r"
# after closelog Python calls openlog again, with its ident and LOG_USER
printf '%s\n' "py[PID]: from python, 100%s	daemon	warning	py" \
	"-c: after closelog	user	info	-c" >"$T/want"
expect_file_eq "$T/want" "$T/r"

case_ "PAM through runuser: a real program's modules log"
if [ "$root" = 1 ] && [ -e /etc/pam.d/runuser ]; then
	L=$T/pam.log
	pl "$L" runuser -u nobody -- true >"$T/out" 2>&1
	expect_eq 0 $? "exit status: $(cat "$T/out")"
	recs "$L" | col 1-4 >"$T/r"
	expect_grep "^runuser: pam_unix(runuser:session): session opened for user nobody.*	authpriv	info	runuser$" "$T/r"
else
	echo "preload: not root or no /etc/pam.d/runuser: PAM not tried" >&2
fi

case_ "a daemon: busybox udhcpd -f -S, fortified, in a private network namespace"
if [ "$root" = 1 ] && command -v busybox >/dev/null && unshare -n true 2>/dev/null; then
	L=$T/udhcpd.log
	printf '%s\n' "start 10.99.0.10" "end 10.99.0.20" "interface lo" \
		"lease_file $T/leases" "pidfile $T/udhcpd.pid" >"$T/udhcpd.conf"
	: >"$T/leases"
	nm -D "$(command -v busybox)" | grep -q " U __syslog_chk" && ok ||
		echo "preload: this busybox is not fortified" >&2
	KMSG_FILE=$L LD_PRELOAD=$PRE unshare -n sh -c \
		'ip link set lo up 2>/dev/null; exec busybox udhcpd -f -S "$1"' sh "$T/udhcpd.conf" \
		>"$T/d.out" 2>&1 &
	dp=$!
	i=0
	until "$KMSG" read -F "$L" 2>/dev/null | grep -q 'udhcpd\[[0-9]*\]: started'; do
		i=$((i + 1)); [ $i -ge 400 ] && break; sleep 0.05
	done
	kill -TERM $dp 2>/dev/null; wait $dp
	recs "$L" >"$T/r"
	up=$(grep ': started, v' "$T/r" | col 6)
	expect_grep "^udhcpd\[$up\]: started, v[0-9.]*	daemon	info	udhcpd	$up	$up	" "$T/r"
	expect_grep "^udhcpd\[$up\]: received SIGTERM	daemon	info	" "$T/r"
else
	echo "preload: not root, no busybox or no unshare -n: the daemon not tried" >&2
fi

# ---------------------------------------------------------------------------
# glibc's own syslog(3), in the namespace, is the reference from here on.
if [ "$root" != 1 ]; then
	echo "preload: not root or no unshare -m: nothing compared with glibc's syslog(3)," \
	     "the fallback, the default log and set-user-ID not tried" >&2
	finish
	exit
fi

# the same steps under the preload and under glibc: stderr byte for byte,
# and what each stored (kmsg listen for glibc's) message for message
steps=(open ptag pid,perror 0 log 6 one log 6 $'two\n' log 6 $'three\n\n'
       fmt 6 'percent %s %%' x errno 13 denied masked open - perror 0 log 6 "ident kept"
       log $((0x400 | 6)) "bad bits" log 3 "kern given" close open - perror 128
       log 6 "after closelog" open "" perror 0 log 6 "empty ident")
for prog in "$C" "$CF"; do
	n=$(basename "$prog")
	case_ "LOG_PERROR and the records of $n: as glibc's syslog(3) writes and sends them"
	rm -f "$T/a.log" "$T/b.log"
	pl "$T/a.log" "$prog" "${steps[@]}" >"$T/a.out" 2>"$T/a.err"
	expect_eq 0 $? "exit status under the preload"
	start_listen "$T/b.log"
	in_ns "$prog" "${steps[@]}" >"$T/b.out" 2>"$T/b.err"
	expect_eq 0 $? "exit status with glibc's syslog(3): $(cat "$T/b.err")"
	stop_listen
	sed -E 's/\[[0-9]+\]/[PID]/' "$T/a.err" >"$T/a.norm"
	sed -E 's/\[[0-9]+\]/[PID]/' "$T/b.err" >"$T/b.norm"
	expect_file_eq "$T/b.norm" "$T/a.norm"
	# "three" ends in two newlines, the complaint of bad bits is a line
	expect_eq 12 "$(wc -l <"$T/a.err")" "lines on stderr"
	# the empty ident (": text") is no tag to kmsg listen's parser
	recs "$T/a.log" | grep -v '^: ' | col 1-4 | sed -E 's/\[[0-9]+\]/[PID]/' >"$T/a.r"
	recs "$T/b.log" | grep -v 'empty ident' | col 1-4 | sed -E 's/\[[0-9]+\]/[PID]/' >"$T/b.r"
	expect_file_eq "$T/b.r" "$T/a.r"
done

case_ "a log that cannot be opened: one line on stderr, then glibc's syslog(3)"
start_listen "$T/fb.log"
KMSG_FILE=$T/no/such/dir/log LD_PRELOAD=$PRE in_ns "$C" open fb pid,perror 0 \
	log 6 "fallback one" log 3 "fallback two" >"$T/out" 2>"$T/err"
expect_eq 0 $? "exit status: $(cat "$T/out")"
stop_listen
expect_eq 1 "$(grep -c "^libkmsg-syslog: cannot open the log '$T/no/such/dir/log': No such file or directory; syslog(3) messages of kmsg-syslog-client\[[0-9]*\] go to the system's syslog instead" "$T/err")" "the one line"
expect_eq "fb[PID]: fallback one|fb[PID]: fallback two" \
	"$(grep -v '^libkmsg-syslog' "$T/err" | sed -E 's/\[[0-9]+\]/[PID]/' | paste -sd'|')" \
	"LOG_PERROR once each"
recs "$T/fb.log" | col 1-4 | sed -E 's/\[[0-9]+\]/[PID]/' >"$T/r"
printf '%s\n' "fb[PID]: fallback one	user	info	fb" "fb[PID]: fallback two	user	err	fb" >"$T/want"
expect_file_eq "$T/want" "$T/r"
[ -e "$T/no" ] && fail "a directory was made" || ok

case_ "set-uid to nobody before the first message: cannot open, falls back"
L=$T/lazy.log
"$KMSG" emit -F "$L" "start" || fail "emit"
KMSG_FILE=$L LD_PRELOAD=$PRE in_ns "$C" open lz 0 0 setuid log 6 "lazy after setuid" \
	>"$T/out" 2>"$T/err"
expect_eq 0 $? "exit status: $(cat "$T/out")"
expect_grep "^libkmsg-syslog: cannot open the log '$L': Permission denied" "$T/err"
expect_eq "start" "$(recs "$L" | col 1 | paste -sd'|')" "nothing stored as nobody"

case_ "without KMSG_FILE: /var/log/kmsg (a tmpfs of the namespace), made if missing"
in_ns bash -c 'mount -t tmpfs kmsgtest /var/log || exit 99
	env -u KMSG_FILE LD_PRELOAD="$1" "$2" open df 0 0 log 6 "default log" || exit 1
	"$3" read -F /var/log/kmsg' in_ns "$PRE" "$C" "$KMSG" >"$T/out" 2>"$T/err"
expect_eq 0 $? "exit status: $(cat "$T/err")"
expect_eq "df: default log" "$(sed 's/^\[[ 0-9.]*\] //' "$T/out")" "read back"

case_ "a set-user-ID program: LD_PRELOAD does not reach it (kmsg(1) says so)"
mkdir "$T/pub" && chmod 0711 "$T" && chmod 0755 "$T/pub"
cp "$C" "$T/pub/client" && chmod 4755 "$T/pub/client"
start_listen "$T/suid-listen.log"
KMSG_FILE=$T/pub/suid.log LD_PRELOAD=$PRE in_ns setpriv --reuid 65534 --regid 65534 \
	--clear-groups "$T/pub/client" ids open sd 0 0 log 6 "from set-uid" >"$T/out" 2>"$T/err"
st=$?
stop_listen
if [ "$(cat "$T/out")" = "euid 0" ]; then
	expect_eq 0 $st "exit status: $(cat "$T/err")"
	[ -e "$T/pub/suid.log" ] && fail "the preload wrote the log of a set-uid program" || ok
	expect_eq "sd: from set-uid" "$(recs "$T/suid-listen.log" | col 1)" "glibc's syslog(3) sent it"
else
	echo "preload: $T is mounted nosuid ($(cat "$T/out")): set-uid not tried" >&2
fi

case_ "/etc/ld.so.preload (of the namespace) reaches set-uid programs: KMSG_FILE is not theirs"
mkdir "$T/up" "$T/wk" "$T/etc"
# (not under a sanitizer: its runtime would have to come before the preload)
if [ "$(cat "$T/out")" = "euid 0" ] && [ -z "$SANITIZED" ] &&
   mount -t overlay -o lowerdir=/etc,upperdir="$T/up",workdir="$T/wk" kmsgtest "$T/etc" 2>/dev/null; then
	umount "$T/etc"
	# /etc an overlay with an ld.so.preload, /var/log a tmpfs: both the namespace's
	in_ns bash -c 'mount -t overlay -o lowerdir=/etc,upperdir="$1/up",workdir="$1/wk" kmsgtest /etc &&
		mount -t tmpfs kmsgtest /var/log || exit 99
		echo "$2" >/etc/ld.so.preload
		KMSG_FILE=$1/pub/chosen.log setpriv --reuid 65534 --regid 65534 --clear-groups \
			"$1/pub/client" open sd 0 0 log 6 "set-uid, machine-wide" || exit 1
		rm /etc/ld.so.preload
		"$3" read -F /var/log/kmsg' in_ns "$T" "$PRELOAD" "$KMSG" >"$T/out" 2>"$T/err"
	expect_eq 0 $? "exit status: $(cat "$T/err")"
	expect_eq "sd: set-uid, machine-wide" "$(sed 's/^\[[ 0-9.]*\] //' "$T/out")" "in /var/log/kmsg"
	[ -e "$T/pub/chosen.log" ] && fail "a set-uid program took KMSG_FILE from its caller" || ok
else
	echo "preload: no set-uid, a sanitizer or no overlay file system: /etc/ld.so.preload not tried" >&2
fi

finish
