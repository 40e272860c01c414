#!/bin/bash
# ship-http.sh - kmsg ship --to http://: Journal Export entries POSTed to
# a real systemd-journal-remote --listen-http on loopback, in the
# foreground, writing one journal file in $T (the machine's journal is
# never touched).  What a user would notice: the journal holds the same
# entries as read -o export, fields and times included; journal-remote
# SIGKILLed while writers append and started again loses nothing that
# kmsg counted delivered, and the cursor never leads what journal-remote
# answered for; SIGTERM ends the shipper with 0.
. "$(dirname "$0")/lib.sh.inc"

JR=/lib/systemd/systemd-journal-remote
NORM=${KMSG_EXPORT_NORM:-$(dirname "$KMSG")/tests/kmsg-export-norm}
if [ ! -x "$JR" ] || ! command -v journalctl >/dev/null; then
	echo "ship-http: no $JR or journalctl: tools/deps installs systemd-journal-remote" >&2
	exit 1
fi
JRPID= SHPID=
trap 'kill -9 $JRPID $SHPID 2>/dev/null; rm -rf "$T"' EXIT

# jr_start FILE: journal-remote listening on 127.0.0.1:$PORT, into
# $T/FILE.journal; a port another program holds makes it try another
jr_start() {
	local try i
	for try in 1 2 3 4 5 6 7 8; do
		[ -n "${PORT:-}" ] || PORT=$((20000 + RANDOM % 30000))
		"$JR" --listen-http="127.0.0.1:$PORT" --split-mode=none \
			-o "$T/$1.journal" >>"$T/jr.log" 2>&1 &
		JRPID=$!
		for i in $(seq 200); do
			if ! kill -0 "$JRPID" 2>/dev/null; then
				break
			fi
			if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
				return 0
			fi
			sleep 0.05
		done
		kill -9 "$JRPID" 2>/dev/null
		wait "$JRPID" 2>/dev/null
		PORT=
	done
	fail "journal-remote did not start: $(tail -3 "$T/jr.log")"
	return 1
}

# jr_kill: journal-remote SIGKILLed
jr_kill() {
	kill -9 "$JRPID"
	wait "$JRPID" 2>/dev/null
	JRPID=
}

# seqs FILE...: the KMSG_SEQ of the entries in the journal files, sorted,
# each once
seqs() {
	local args=() f
	for f in "$@"; do args+=(--file "$f"); done
	journalctl "${args[@]}" -o export 2>/dev/null | "$NORM" -u 2>/dev/null |
		sed -n 's/^KMSG_SEQ=//p' | sort -n -u
}

# wait_seqs N FILE...: until 1..N are all in the files (60 s at most)
wait_seqs() {
	local n=$1 i
	shift
	for i in $(seq 600); do
		[ "$(seqs "$@" | awk -v n="$n" '$1 >= 1 && $1 <= n' | wc -l)" -eq "$n" ] && return 0
		sleep 0.1
	done
	return 1
}

# ship_start ARGS...: the shipper in the background, stderr to $T/ship.err
ship_start() {
	"$KMSG" ship "$@" 2>>"$T/ship.err" &
	SHPID=$!
}

last_seq() { "$KMSG" stat | awk '/^newest:/ { print $2 }'; }

"$KMSG" emit --log-size 4M --field N=1 "$(printf 'first\nrecord')" || fail "emit failed"
"$KMSG" emit -p daemon.err --field "BIN=$(printf 'a\001b')" second
"$KMSG" emit -t app "ünïcode ✓"

case_ "usage"
expect_status 2 "$KMSG" ship --to http://127.0.0.1:1 --format rfc3164
expect_grep 'sends RFC 5424 only' "$T/err"

case_ "the journal holds what read -o export prints"
jr_start remote || { finish; exit; }
ship_start --to "http://127.0.0.1:$PORT" --cursor-file "$T/cur" --retry-max 1
wait_for 'caught up' "$T/ship.err" || fail "never caught up: $(cat "$T/ship.err")"
wait_seqs 3 "$T/remote.journal" || fail "the three records did not arrive"
journalctl --file "$T/remote.journal" -o export | "$NORM" -u -x __CURSOR >"$T/got"
"$KMSG" read -o export | "$NORM" -u >"$T/want"
expect_file_eq "$T/want" "$T/got"
expect_grep "i=3;" "$T/cur"

case_ "journal-remote killed while writers append, then back: none lost"
seq 1 3000 | sed 's/^/record /' | "$KMSG" emit -t w &
W=$!
sleep 0.3
jr_kill
sleep 0.3
jr_start remote2
wait "$W"
last=$(last_seq)
wait_seqs "$last" "$T/remote.journal" "$T/remote2.journal" ||
	fail "$((last - $(seqs "$T/remote.journal" "$T/remote2.journal" | wc -l))) of 1..$last missing"
expect_grep 'trying again' "$T/ship.err"
n1=$(journalctl --file "$T/remote.journal" -o cat 2>/dev/null | grep -c '^w: record')
n2=$(journalctl --file "$T/remote2.journal" -o cat 2>/dev/null | grep -c '^w: record')
echo "ship-http: journal-remote SIGKILLed mid-stream: 0 of $last lost, $((n1 + n2 - 3000)) sent twice" >&2
[ $((n1 + n2 - 3000)) -le 1024 ] || fail "$((n1 + n2 - 3000)) sent twice: more than the window"

case_ "SIGTERM: exit 0, the cursor names the last record"
stop_bg "$SHPID" TERM
expect_eq 0 $? "exit status after SIGTERM"
SHPID=
expect_grep "i=$last;" "$T/cur"

case_ "started again from the cursor: only what is new"
"$KMSG" emit after
ship_start --to "http://127.0.0.1:$PORT" --cursor-file "$T/cur"
wait_seqs $((last + 1)) "$T/remote.journal" "$T/remote2.journal" || fail "the new record did not arrive"
stop_bg "$SHPID" TERM
SHPID=
expect_eq 1 "$(journalctl --file "$T/remote2.journal" -o cat | grep -c '^after$')" "the new record, once"
expect_eq 0 "$(journalctl --file "$T/remote2.journal" -o cat | grep -c '^app: ünïcode ✓$')" \
	"an old record sent again"

case_ "not a journal-remote: the answer said, permanent"
python3 - "$T/fake.port" <<'EOF' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.send_response(415); self.send_header("Content-Length", "3"); self.end_headers()
        self.wfile.write(b"no\n")
    def log_message(self, *a): pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.handle_request()
EOF
FAKE=$!
wait_for . "$T/fake.port" || fail "the fake server did not start"
expect_status 1 "$KMSG" ship --to "http://127.0.0.1:$(cat "$T/fake.port")" --cursor-file "$T/cur2"
expect_grep "answered 415 no (is this systemd-journal-remote --listen-http?)" "$T/err"
kill "$FAKE" 2>/dev/null
wait "$FAKE" 2>/dev/null

jr_kill
finish
