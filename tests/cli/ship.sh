#!/bin/bash
# ship.sh - kmsg ship into real collectors on loopback: a private rsyslogd
# (imptcp, mmpstrucdata, omfile; its own config, port and work directory,
# in the foreground, loading nothing that touches /dev/log or the kernel's
# log), and python3 receivers for udp:// and unix:.
#
# What a user would notice: every record arrives, by its number, while
# writers append, when the shipper is killed and started again, and when
# the collector is down and back; records a small log evicted while the
# shipper was away are counted, and the collector is told how many and
# which; the structured data parses back byte for byte; a collector that
# stops reading keeps the shipper's memory bounded, and it catches up
# after; a cursor of another log is refused; SIGTERM ends it with 0.
. "$(dirname "$0")/lib.sh.inc"

if ! command -v rsyslogd >/dev/null || ! command -v python3 >/dev/null; then
	echo "ship: no rsyslogd or python3 (tools/deps installs them): skipped" >&2
	exit 0
fi
RSMOD=$(dirname "$(find /usr/lib /usr/lib64 -name imptcp.so -path '*rsyslog*' 2>/dev/null | head -1)")
if [ ! -f "$RSMOD/mmpstrucdata.so" ]; then
	echo "ship: rsyslog has no imptcp or mmpstrucdata: skipped" >&2
	exit 0
fi

RS=$T/rs
mkdir -p "$RS"
RSPID=
SHPID=
trap 'kill -9 $RSPID $SHPID 2>/dev/null; wait 2>/dev/null; rm -rf "$T"' EXIT

# rs_start: rsyslogd in the foreground on 127.0.0.1, on port $PORT (0 the
# first time: the port it took is read back); every message to $RS/out
# as one JSON line of its structured data (mmpstrucdata), text and header
rs_start() {
	cat >"$RS/conf" <<EOF
global(workDirectory="$RS" maxMessageSize="256k"
       parser.escapeControlCharactersOnReceive="off")
module(load="$RSMOD/imptcp")
module(load="$RSMOD/mmpstrucdata")
input(type="imptcp" port="${PORT:-0}" address="127.0.0.1" ruleset="r"
      listenPortFileName="$RS/port")
template(name="j" type="list") {
  constant(value="{\"sd\":") property(name="\$!rfc5424-sd")
  constant(value=",\"msg\":\"") property(name="msg" format="json")
  constant(value="\",\"host\":\"") property(name="hostname" format="json")
  constant(value="\",\"app\":\"") property(name="app-name" format="json")
  constant(value="\",\"pri\":\"") property(name="pri")
  constant(value="\"}\n")
}
ruleset(name="r") {
  action(type="mmpstrucdata" sd_name.lowercase="off")
  action(type="omfile" file="$RS/out" template="j")
}
EOF
	rm -f "$RS/port"
	rsyslogd -n -C -f "$RS/conf" -i "$RS/pid" >>"$RS/log" 2>&1 &
	RSPID=$!
	# the port file is written when the port was 0; a fixed one is
	# tried until it takes a connection
	if [ -z "${PORT:-}" ]; then
		wait_for . "$RS/port" || { fail "rsyslogd did not start: $(tail -3 "$RS/log")"; return 1; }
		PORT=$(cat "$RS/port")
	fi
	python3 -c '
import socket, sys, time
for i in range(400):
    try:
        socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()
        sys.exit(0)
    except OSError:
        time.sleep(0.05)
sys.exit(1)' "$PORT" || { fail "rsyslogd did not listen: $(tail -3 "$RS/log")"; return 1; }
}

# rs_kill: rsyslogd SIGKILLed: what it had taken and not written is lost
rs_kill() {
	kill -9 "$RSPID"
	wait "$RSPID" 2>/dev/null
	RSPID=
}

# seqs FILE: the record numbers in rsyslog's output, one a line, sorted,
# each once
seqs() {
	python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    try:
        sd = json.loads(line)["sd"]
    except Exception:
        continue
    e = sd.get("kmsg@32473", {}) if isinstance(sd, dict) else {}
    if "seq" in e:
        print(e["seq"])' "$1" 2>/dev/null | sort -n -u
}

# wait_seqs FIRST LAST [SECONDS]: until every number FIRST..LAST is in
# $RS/out (60 s at most: a busy machine); 1 if not
wait_seqs() {
	local i n=$(( ${3:-60} * 10 ))
	for ((i = 0; i < n; i++)); do
		[ "$(seqs "$RS/out" | awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b' | wc -l)" \
		  -eq $(($2 - $1 + 1)) ] && return 0
		sleep 0.1
	done
	return 1
}

# missing FIRST LAST: how many of FIRST..LAST are not in $RS/out
missing() {
	echo $(( $2 - $1 + 1 - $(seqs "$RS/out" | awk -v a="$1" -v b="$2" '$1 >= a && $1 <= b' | wc -l) ))
}

# ship_start ARGS...: the shipper in the background, stderr to $T/ship.err
ship_start() {
	"$KMSG" ship "$@" 2>>"$T/ship.err" &
	SHPID=$!
}

# write N [TAG]: N records from one process
write() {
	seq 1 "$1" | sed "s/^/record /" | "$KMSG" emit -t "${2:-w}" || fail "emit failed"
}

# last_seq: the newest record's number
last_seq() {
	"$KMSG" stat | awk '/^newest:/ { print $2 }'
}

"$KMSG" emit --log-size 4M -t w first || fail "emit failed"

case_ usage
expect_status 2 "$KMSG" ship
expect_grep 'to URL names the collector' "$T/err"
expect_status 2 "$KMSG" ship --to ftp://x:1
expect_grep "not a collector's URL" "$T/err"
expect_status 2 "$KMSG" ship --to tcp://127.0.0.1:1 --format rfc3164
expect_grep 'sends RFC 5424 only' "$T/err"
expect_status 2 "$KMSG" ship --to tcp://127.0.0.1:1 --sd-id 'bad id'
expect_grep 'an SD-ID is NAME@NUMBER' "$T/err"
expect_status 2 "$KMSG" ship --to tcp://127.0.0.1:1 -o json
expect_grep 'kmsg ship sends syslog' "$T/err"

case_ down_at_start
# nothing listens yet: the shipper says so and tries again
rs_start || { finish; exit; }
rs_kill
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur" --retry-max 1
wait_for 'trying again' "$T/ship.err" || fail "no retry said: $(cat "$T/ship.err")"
rs_start
wait_for 'connected' "$T/ship.err" || fail "not connected: $(cat "$T/ship.err")"
wait_seqs 1 1 || fail "record 1 did not arrive"

case_ stream_and_kills
# writers append while the shipper is SIGKILLed and started again: every
# record arrives, by number (the cursor lags deliveries; never leads them)
write 3000 &
W=$!
sleep 0.3
kill -9 "$SHPID"; wait "$SHPID" 2>/dev/null
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur" --retry-max 1
sleep 0.2
kill -9 "$SHPID"; wait "$SHPID" 2>/dev/null
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur" --retry-max 1
wait "$W"
last=$(last_seq)
wait_seqs 1 "$last" || fail "$(missing 1 "$last") of 1..$last missing after shipper kills"
dups=$(python3 -c '
import json, sys, collections
c = collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    try: c[json.loads(line)["sd"]["kmsg@32473"]["seq"]] += 1
    except Exception: pass
print(sum(v - 1 for v in c.values()))' "$RS/out")
echo "ship: after two SIGKILLs of the shipper: 0 lost of $last, $dups sent twice" >&2

case_ collector_down
# the collector SIGKILLed once all it had is written, records written
# while it is down (KMSG_TEST_SHIP_DOWN seconds, default 2: a minute or
# more by hand), then back: all arrive, and the shipper's memory stayed
# as it was
rs_kill
rss0=$(awk '/VmRSS/ { print $2 }' "/proc/$SHPID/status")
peak=$rss0
for i in $(seq $(( ${KMSG_TEST_SHIP_DOWN:-2} * 2 ))); do
	write 500
	r=$(awk '/VmRSS/ { print $2 }' "/proc/$SHPID/status")
	[ "$r" -gt "$peak" ] && peak=$r
	sleep 0.5
done
if [ -z "$SANITIZED" ]; then
	[ $((peak - rss0)) -lt 4096 ] && ok ||
		fail "shipper's memory grew by $((peak - rss0)) KiB while the collector was down"
fi
rs_start
last=$(last_seq)
wait_seqs 1 "$last" || fail "$(missing 1 "$last") records missing after the collector came back"
expect_grep 'trying again' "$T/ship.err"

case_ collector_killed_mid_stream
# TCP's promise is the collector's kernel: what rsyslog had taken into
# its socket buffer or queue and not written when killed is lost, and
# only that.  The figure is printed; nothing not yet acknowledged is lost
first=$(( $(last_seq) + 1 ))
write 5000 &
W=$!
sleep 0.2
rs_kill
wait "$W"
rs_start
last=$(last_seq)
wait_seqs "$last" "$last" || fail "the last record did not arrive after rsyslog came back"
m=$(missing "$first" "$last")
echo "ship: rsyslog SIGKILLed mid-stream: $m of $((last - first + 1)) records lost in it" >&2

case_ stop
# SIGTERM: exits 0 once what it sent is delivered; the cursor names the last
stop_bg "$SHPID" TERM
expect_eq 0 $? "exit status after SIGTERM"
SHPID=
expect_grep "i=$last;" "$T/cur"

case_ evicted
# a small log laps the shipper while it is down: the records evicted are
# counted on stderr and sent as one message with how many and which
export KMSG_FILE=$T/small
"$KMSG" emit --log-size 64K -t s start || fail "emit failed"
: >"$T/ship.err"
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur2"
wait_for 'caught up' "$T/ship.err" || fail "not caught up: $(cat "$T/ship.err")"
stop_bg "$SHPID" TERM
SHPID=
write 3000 s
oldest=$("$KMSG" stat | awk '/^oldest:/ { print $2 }')
last=$(last_seq)
want=$((oldest - 2))   # records 2..oldest-1 were never shipped
: >"$T/ship.err"
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur2"
wait_for 'caught up' "$T/ship.err" || fail "not caught up after the lap"
expect_grep "$want records evicted before they were shipped (numbers 2-$((oldest - 1)))" "$T/ship.err"
# the collector's copy: one message with the count and the numbers
n=$(grep -c "\"lost\": \"$want\", \"first\": \"2\", \"last\": \"$((oldest - 1))\"" "$RS/out")
expect_eq 1 "$n" "messages about the evicted records at the collector"
stop_bg "$SHPID" TERM
SHPID=

case_ other_log
# the cursor of the big log given with the small one: refused, never applied
expect_status 1 "$KMSG" ship --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur"
expect_grep 'the cursor is of another log' "$T/err"

case_ tricky_values
# fields and a text with '"', '\', ']', UTF-8 and a newline: mmpstrucdata
# gives them back byte for byte, the text as one message
export KMSG_FILE=$T/log
: >"$RS/out"
v=$'a"b\\c]d é\nx'
"$KMSG" emit -t tricky --field "K1=$v" --field 'K2=]' "$v" || fail "emit failed"
last=$(last_seq)
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur"
wait_seqs "$last" "$last" || fail "the tricky record did not arrive"
stop_bg "$SHPID" TERM
SHPID=
V="$v" python3 -c '
import json, os, sys
v = os.environ["V"]
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    e = r["sd"]["kmsg@32473"]
    if e.get("SYSLOG_IDENTIFIER") != "tricky":
        continue
    assert e["K1"] == v, ("K1", e["K1"])
    assert e["K2"] == "]", ("K2", e["K2"])
    assert r["msg"] == v, ("msg", r["msg"])  # the header carries the tag
    assert r["app"] == "tricky", r["app"]
    print("ok")' "$RS/out" >"$T/tricky" 2>&1
expect_eq ok "$(cat "$T/tricky")" "tricky values back from mmpstrucdata"

case_ stalled_collector
# rsyslog stopped (SIGSTOP): its socket buffer fills, the shipper's
# memory stays bounded while 20000 records wait in the log; after SIGCONT
# it catches up
first=$(( $(last_seq) + 1 ))
ship_start --to "tcp://127.0.0.1:$PORT" --cursor-file "$T/cur"
wait_for 'caught up' "$T/ship.err"
kill -STOP "$RSPID"
rss0=$(awk '/VmRSS/ { print $2 }' "/proc/$SHPID/status")
peak=$rss0
yes 'a record of some length, to fill the collector socket buffer quickly ....................' |
	head -20000 | "$KMSG" emit -t stall || fail "emit failed"
for i in $(seq 30); do
	r=$(awk '/VmRSS/ { print $2 }' "/proc/$SHPID/status")
	[ "$r" -gt "$peak" ] && peak=$r
	sleep 0.1
done
if [ -z "$SANITIZED" ]; then
	[ $((peak - rss0)) -lt 8192 ] && ok ||
		fail "shipper's memory grew by $((peak - rss0)) KiB while the collector was stopped"
	echo "ship: collector stopped, 20000 records waiting: the shipper's RSS $rss0 -> $peak KiB" >&2
fi
kill -CONT "$RSPID"
last=$(last_seq)
wait_seqs "$first" "$last" || fail "$(missing "$first" "$last") records missing after SIGCONT"
stop_bg "$SHPID" TERM
SHPID=

case_ udp
# one datagram a record; rfc3164 allowed
cat >"$T/rx.py" <<'EOF'
import socket, sys
kind = sys.argv[1]
if kind == "udp":
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    open(sys.argv[2] + ".port", "w").write(str(s.getsockname()[1]))
else:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(sys.argv[2] + ".sock")
    open(sys.argv[2] + ".port", "w").write("ready")
s.settimeout(30)
out = open(sys.argv[2], "wb")
while True:
    try:
        d = s.recv(70000)
    except socket.timeout:
        break
    out.write(d.replace(b"\n", b"\\n") + b"\n")
    out.flush()
EOF
export KMSG_FILE=$T/u
"$KMSG" emit --log-size 1M -t u one || fail "emit failed"
"$KMSG" emit -t u "$(printf 'two\nlines')" || fail "emit failed"
python3 "$T/rx.py" udp "$T/udp" &
RX=$!
wait_for . "$T/udp.port"
ship_start --to "udp://127.0.0.1:$(cat "$T/udp.port")" --format rfc3164
wait_for 'two#012lines' "$T/udp" || fail "no datagram: $(cat "$T/udp")"
expect_grep '^<13>.* u\[[0-9]*\]: one$' "$T/udp"
expect_grep ' u\[[0-9]*\]: two#012lines$' "$T/udp"
stop_bg "$SHPID" TERM
SHPID=
kill "$RX" 2>/dev/null; wait "$RX" 2>/dev/null

case_ unix
python3 "$T/rx.py" unix "$T/ux" &
RX=$!
wait_for . "$T/ux.port"
ship_start --to "unix:$T/ux.sock"
wait_for 'seq="2"' "$T/ux" || fail "no datagram: $(cat "$T/ux")"
expect_grep '^<13>1 .* u [0-9]* - \[.*\] two\\nlines$' "$T/ux"
stop_bg "$SHPID" TERM
SHPID=
kill "$RX" 2>/dev/null; wait "$RX" 2>/dev/null

finish
