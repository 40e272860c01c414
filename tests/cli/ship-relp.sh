#!/bin/bash
# ship-relp.sh - kmsg ship to a real rsyslog over RELP (imrelp) and TLS
# (imtcp with gtls, imrelp with tls="on"), on loopback, with a private
# configuration, work directory and output file; and to a RELP server that
# lies (relp-hostile.py).  What a user would notice: every record arrives,
# by its sequence number, through a shipper and a collector each killed
# and started again; duplicates no more than the window; a certificate
# refused at once with words that say what to give, not retried; a
# server that lies never moves the cursor past what it acknowledged.
. "$(dirname "$0")/lib.sh.inc"

have_imrelp() {
	local f
	for f in /usr/lib/*/rsyslog/imrelp.so /usr/lib/rsyslog/imrelp.so; do
		[ -e "$f" ] && return 0
	done
	return 1
}
if [ "$(id -u)" != 0 ] || ! command -v rsyslogd >/dev/null || ! command -v certtool >/dev/null ||
   ! have_imrelp; then
	echo "ship-relp: needs root, rsyslog with imrelp and certtool (tools/deps): skipped" >&2
	exit 0
fi

R=$T/rsyslog
mkdir -p "$R"
rpid=
trap 'kill -KILL $rpid $spid $hpid $wpid 2>/dev/null; rm -rf "$T"' EXIT

# free_port: a TCP port of 127.0.0.1 nobody listens on now
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# listening PORT PID: PID listens on 127.0.0.1:PORT
listening() {
	ss -Hltnp "sport = :$1" 2>/dev/null | grep -q "pid=$2,"
}

# start_rsyslog CONF: rsyslogd in the foreground on CONF (which names
# $R/out), until it listens on $PORT (a port taken by another between
# free_port and the bind: the caller picks another and tries again)
start_rsyslog() {
	rsyslogd -n -f "$1" -i "$R/pid" >>"$R/log" 2>&1 &
	rpid=$!
	local i
	for i in $(seq 600); do
		listening "$PORT" "$rpid" && return 0
		kill -0 "$rpid" 2>/dev/null || break
		sleep 0.05
	done
	kill -KILL "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	return 1
}
stop_rsyslog() {
	kill -"${1:-TERM}" "$rpid" 2>/dev/null
	wait "$rpid" 2>/dev/null
	rm -f "$R/pid"
}

# relp_conf [IMRELP-PARAMETERS]: imrelp on $PORT into $R/out, one raw
# message a line.  The main queue is direct and omfile flushes after each
# message, so that a message imrelp acknowledged is in $R/out (the page
# cache) before the 200 leaves: rsyslog killed loses nothing it acked.
relp_conf() {
	cat >"$R/relp.conf" <<EOF
global(workDirectory="$R")
main_queue(queue.type="Direct")
module(load="imrelp")
input(type="imrelp" port="$PORT" address="127.0.0.1" $*)
template(name="raw" type="string" string="%rawmsg%\n")
*.* action(type="omfile" file="$R/out" template="raw" flushOnTXEnd="on" asyncWriting="off")
EOF
}
# start_relp [IMRELP-PARAMETERS]: a port and rsyslog on it
start_relp() {
	local try
	for try in 1 2 3 4 5; do
		PORT=$(free_port)
		relp_conf "$@"
		start_rsyslog "$R/relp.conf" && return 0
	done
	fail "rsyslog never listened: $(tail -5 "$R/log")"
	return 1
}

# seqs FILE: the seq="N" of each message in FILE, one a line, sorted
seqs() {
	grep -o 'seq="[0-9]*"' "$1" 2>/dev/null | tr -dc '0-9\n' | sort -n
}
# wait_seqs FILE N [SECONDS]: until FILE holds the messages of records 1..N
wait_seqs() {
	local i n=$(( ${3:-60} * 10 ))
	for i in $(seq "$n"); do
		[ "$(seqs "$1" | sort -un | wc -l)" -ge "$2" ] && return 0
		sleep 0.1
	done
	return 1
}
# all_arrived FILE N: each of records 1..N is in FILE
all_arrived() {
	local missing
	missing=$(comm -23 <(seq "$2" | sort) <(seqs "$1" | sort -u) | sort -n | head -5 |
		  tr '\n' ' ')
	if [ -z "$missing" ]; then ok; else
		fail "records missing at the collector: $missing(of $2)"; fi
}
# dups FILE: the messages that arrived more than once
dups() {
	echo $(( $(seqs "$1" | wc -l) - $(seqs "$1" | sort -u | wc -l) ))
}

# write_records FROM TO: appends "record N" for N in FROM..TO, in batches,
# as a writer would while the shipper runs
write_records() {
	local a=$1 b
	while [ "$a" -le "$2" ]; do
		b=$((a + 49)); [ "$b" -gt "$2" ] && b=$2
		seq "$a" "$b" | sed 's/^/record /' | "$KMSG" emit -f - || return 1
		a=$((b + 1))
		sleep 0.02
	done
}

# ship ARGS...: kmsg ship in the background (its stderr in $T/ship.err)
ship() {
	"$KMSG" ship --cursor-file "$T/cursor" --retry-max 1 "$@" 2>>"$T/ship.err" &
	spid=$!
}
cursor_seq() {
	sed -n 's/.*;i=\([0-9]*\);.*/\1/p' "$T/cursor" 2>/dev/null
}

"$KMSG" emit --log-size 16M "record 0" >/dev/null 2>&1
: >"$T/ship.err"

# ---- RELP: every record, through kills of both ends ----------------------
case_ "relp: records written while shipping all arrive"
start_relp || { finish; exit; }
write_records 1 400 &
wpid=$!
ship --to "relp://127.0.0.1:$PORT" --window 16
wait $wpid
wait_seqs "$R/out" 401 || fail "not all 401 records arrived: $(seqs "$R/out" | sort -u | wc -l)"
all_arrived "$R/out" 401
expect_eq 0 "$(dups "$R/out")" "duplicates with nothing killed"

case_ "relp: the shipper killed and started again"
# A shipper killed resends what it delivered after its cursor file was
# last saved (at most a second's deliveries) and what was in flight (at
# most the window, 16 here): no more, and nothing lost.
write_records 401 1200 &
wpid=$!
for k in 1 2; do
	sleep 0.3
	kill -KILL $spid; wait $spid 2>/dev/null
	sleep 0.3  # what was on the wire reaches the file
	c=$(cursor_seq)
	unsaved=$(seqs "$R/out" | sort -u | awk -v c="${c:-0}" '$1 > c' | wc -l)
	before=$(dups "$R/out")
	ship --to "relp://127.0.0.1:$PORT" --window 16
	wait_for "connected" "$T/ship.err"
	n=$(seqs "$R/out" | sort -un | tail -1)
	wait_seqs "$R/out" "$n" || fail "kill $k: records lost"
	sleep 0.5
	d=$(( $(dups "$R/out") - before ))
	if [ "$d" -le $((unsaved + 16)) ]; then ok; else
		fail "kill $k: $d duplicates, more than the $unsaved delivered after the cursor ($c) and the window"; fi
	: >"$T/ship.err"
done
wait $wpid
wait_seqs "$R/out" 1201 || fail "not all records arrived after the shipper's kills"
all_arrived "$R/out" 1201

case_ "relp: rsyslog killed and started again"
: >"$R/out.before"
write_records 1201 2000 &
wpid=$!
sleep 0.3
stop_rsyslog KILL
sleep 0.5
start_rsyslog "$R/relp.conf" || fail "rsyslog did not start again on $PORT"
wait $wpid
wait_seqs "$R/out" 2001 || fail "not all records arrived after rsyslog's kill: $(seqs "$R/out" | sort -u | wc -l)"
all_arrived "$R/out" 2001
expect_grep "the collector closed\|Connection refused\|Connection reset" "$T/ship.err"

case_ "relp: SIGTERM closes the session and saves the cursor"
stop_bg $spid TERM
expect_eq 0 $? "exit status after SIGTERM"
expect_eq 2001 "$(cursor_seq)" "cursor after a clean stop (record 2000 is seq 2001)"
stop_rsyslog

# ---- TLS: a test CA, a collector's certificate, one of ours --------------
C=$T/ca
mkdir -p "$C"
certtool --generate-privkey --key-type=ecdsa --outfile "$C/ca-key.pem" 2>/dev/null
printf 'cn = "kmsg test CA"\nca\ncert_signing_key\nexpiration_days = 30\n' >"$C/ca.tmpl"
certtool --generate-self-signed --load-privkey "$C/ca-key.pem" --template "$C/ca.tmpl" \
	--outfile "$C/ca.pem" 2>/dev/null
certtool --generate-privkey --key-type=ecdsa --outfile "$C/other-key.pem" 2>/dev/null
certtool --generate-self-signed --load-privkey "$C/other-key.pem" --template "$C/ca.tmpl" \
	--outfile "$C/other-ca.pem" 2>/dev/null
certtool --generate-privkey --key-type=ecdsa --outfile "$C/srv-key.pem" 2>/dev/null
printf 'cn = "collector.test"\ndns_name = "collector.test"\nip_address = "127.0.0.1"\ntls_www_server\nsigning_key\nencryption_key\nexpiration_days = 30\n' >"$C/srv.tmpl"
certtool --generate-certificate --load-privkey "$C/srv-key.pem" --load-ca-certificate "$C/ca.pem" \
	--load-ca-privkey "$C/ca-key.pem" --template "$C/srv.tmpl" --outfile "$C/srv.pem" 2>/dev/null
certtool --generate-privkey --key-type=ecdsa --outfile "$C/clt-key.pem" 2>/dev/null
printf 'cn = "kmsg shipper"\ntls_www_client\nsigning_key\nexpiration_days = 30\n' >"$C/clt.tmpl"
certtool --generate-certificate --load-privkey "$C/clt-key.pem" --load-ca-certificate "$C/ca.pem" \
	--load-ca-privkey "$C/ca-key.pem" --template "$C/clt.tmpl" --outfile "$C/clt.pem" 2>/dev/null
[ -s "$C/srv.pem" ] && [ -s "$C/clt.pem" ] || fail "certtool made no certificates"

# imtcp with the gtls driver takes port 0 and says which port it got
cat >"$R/tls.conf" <<EOF
global(workDirectory="$R" DefaultNetstreamDriverCAFile="$C/ca.pem"
       DefaultNetstreamDriverCertFile="$C/srv.pem" DefaultNetstreamDriverKeyFile="$C/srv-key.pem")
module(load="imtcp" StreamDriver.Name="gtls" StreamDriver.Mode="1" StreamDriver.AuthMode="anon")
input(type="imtcp" port="0" address="127.0.0.1" listenPortFileName="$R/tls.port")
template(name="raw" type="string" string="%rawmsg%\n")
*.* action(type="omfile" file="$R/tls.out" template="raw")
EOF
rm -f "$R/tls.port"
rsyslogd -n -f "$R/tls.conf" -i "$R/pid" >>"$R/log" 2>&1 &
rpid=$!
for i in $(seq 600); do [ -s "$R/tls.port" ] && break; sleep 0.05; done
PORT=$(cat "$R/tls.port" 2>/dev/null)
for i in $(seq 600); do listening "$PORT" "$rpid" && break; sleep 0.05; done

case_ "tls: the CA that signed the collector's certificate"
rm -f "$T/cursor"
ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/ca.pem"
wait_seqs "$R/tls.out" 2001 || fail "not all records arrived over TLS: $(seqs "$R/tls.out" | sort -u | wc -l)"
all_arrived "$R/tls.out" 2001
stop_bg $spid TERM
expect_eq 0 $? "exit status after SIGTERM"

case_ "tls: a CA that did not sign it is refused, once"
rm -f "$T/cursor"
expect_status 1 timeout 20 "$KMSG" ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/other-ca.pem"
expect_grep "tls://127.0.0.1:$PORT: the collector's certificate is not signed by --tls-ca $C/other-ca.pem (.*); give the CA that signed it" "$T/err"
expect_eq 1 "$(grep -c '^kmsg ship:' "$T/err")" "lines said (one: no retry)"

case_ "tls: a name the certificate does not hold is refused"
expect_status 1 timeout 20 "$KMSG" ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/ca.pem" \
	--tls-name elsewhere.test
expect_grep "the collector's certificate is not for 'elsewhere.test' (.*); give --tls-name the name it holds" "$T/err"
expect_status 1 timeout 20 "$KMSG" ship --to "tls://localhost:$PORT" --tls-ca "$C/ca.pem"
expect_grep "not for 'localhost'" "$T/err"

case_ "tls: the name it holds, given"
rm -f "$T/cursor"
: >"$T/ship.err"
ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/ca.pem" --tls-name collector.test
wait_for "caught up" "$T/ship.err" || fail "no 'caught up': $(cat "$T/ship.err")"
stop_bg $spid TERM

case_ "tls: the options' files checked first"
expect_status 1 "$KMSG" ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/nothing.pem"
expect_grep "tls-ca $C/nothing.pem: No such file or directory" "$T/err"
expect_status 1 "$KMSG" ship --to "tls://127.0.0.1:$PORT" --tls-ca "$C/ca.tmpl"
expect_grep "no certificate in it" "$T/err"
stop_rsyslog

case_ "relp --tls: imrelp with tls=\"on\" and our certificate"
: >"$R/out"
start_relp tls=\"on\" tls.caCert=\"$C/ca.pem\" tls.myCert=\"$C/srv.pem\" \
	tls.myPrivKey=\"$C/srv-key.pem\" tls.authMode=\"certvalid\" || { finish; exit; }
rm -f "$T/cursor"
ship --to "relp://127.0.0.1:$PORT" --tls --tls-ca "$C/ca.pem" --tls-cert "$C/clt.pem" \
	--tls-key "$C/clt-key.pem"
wait_seqs "$R/out" 2001 || fail "not all records arrived over RELP and TLS: $(seqs "$R/out" | sort -u | wc -l)"
all_arrived "$R/out" 2001
stop_bg $spid TERM
expect_status 1 timeout 20 "$KMSG" ship --to "relp://127.0.0.1:$PORT" --tls \
	--tls-ca "$C/other-ca.pem"
expect_grep "not signed by --tls-ca" "$T/err"
stop_rsyslog

# ---- a RELP server that lies ---------------------------------------------
# start_hostile MODE...: relp-hostile.py on a free port ($HPORT), its acks
# in $T/acks; the cursor file and acks of before gone
start_hostile() {
	rm -f "$T/cursor" "$T/acks" "$T/hport"
	python3 "$SRC/tests/cli/relp-hostile.py" "$T/hport" "$T/acks" "$@" &
	hpid=$!
	for i in $(seq 600); do [ -s "$T/hport" ] && break; sleep 0.05; done
	HPORT=$(cat "$T/hport")
}

case_ "relp: a hostile server never moves the cursor past what it acked"
start_hostile garbage huge wrongtxnr cut \
	refuse serverclose garbage huge
: >"$T/ship.err"
ship --to "relp://127.0.0.1:$HPORT" --window 16
# every hostile mode met at least once: eight connections
for i in $(seq 800); do
	[ "$(grep -c 'trying again' "$T/ship.err")" -ge 8 ] && break
	sleep 0.05
done
peak=$(sed -n 's/^VmHWM:[[:space:]]*\([0-9]*\) kB/\1/p' "/proc/$spid/status")
stop_bg $spid TERM
for w in "no RELP frame" "longer than 64 KiB" "answered transaction" "closed the connection" \
	 "refused record [0-9]*: 500 queue full" "closed the session"; do
	expect_grep "$w" "$T/ship.err"
done
acked_max=$(sort -n "$T/acks" | tail -1)
cur=$(cursor_seq)
if [ -n "$cur" ] && [ "$cur" -le "$acked_max" ]; then ok; else
	fail "cursor at $cur, past the last record acked ($acked_max)"; fi
# the cursor follows the acks: each connection acked records 1..3 of it
# anew from where the last stopped
if [ "$cur" -ge 3 ]; then ok; else fail "cursor at $cur: the acks were not followed"; fi
# 4 MiB claimed and sent: the shipper held none of it
small_enough "$peak" 30000
kill $hpid; wait $hpid 2>/dev/null

case_ "relp: a session's last TXNR closes it, and a new one goes on"
start_hostile good
: >"$T/ship.err"
KMSG_TEST_RELP_TXNR=999999990 ship --to "relp://127.0.0.1:$HPORT" --window 4
wait_for "caught up" "$T/ship.err" 60 || fail "never caught up: $(cat "$T/ship.err")"
stop_bg $spid TERM
expect_grep "transaction numbers are spent; a new session begins" "$T/ship.err"
expect_grep "^close 999999999$" "$T/acks"
expect_eq "" "$(seq 2001 | sort | comm -23 - <(grep -v close "$T/acks" | sort -u) | head -3)" \
	"records not acked"
kill $hpid; wait $hpid 2>/dev/null

case_ "relp: a server that never answers holds the window, no more"
start_hostile silent
expect_status 0 timeout --preserve-status -s TERM 3 "$KMSG" ship --to "relp://127.0.0.1:$HPORT" --window 16 \
	--cursor-file "$T/cursor"
expect_eq "" "$(cursor_seq)" "cursor with nothing acked"
kill $hpid; wait $hpid 2>/dev/null

finish
