#!/bin/bash
# emit.sh - "kmsg emit" as scripts use it: what ends up in the log (read
# back with "kmsg read -o kmsg"), what the user sees on stderr, exit
# statuses, and that a refused message writes nothing.
. "$(dirname "$0")/lib.sh.inc"

# records [LOG]: the log as "kmsg read -o kmsg" prints it, without the
# sequence number, time and kmsg's " _KEY=value" lines (numbering, times,
# boot, pid, caller): "prio,flags;text", then " KEY=value" lines.
records() {
	"$KMSG" read -o kmsg -F "${1:-$KMSG_FILE}" |
		sed -E '/^ _[A-Z_]+=/d; s/^([0-9]+),[0-9]+,-?[0-9]+,([^;]*);/\1,\2;/'
}
# texts [LOG]: the text of each record, one per line
texts() { records "$@" | sed -n -E 's/^[0-9]+,[^;]*;//p'; }
# nrecords [LOG]: how many records the log holds
nrecords() { records "$@" | grep -c '^[0-9]'; }
fresh() { rm -f "$KMSG_FILE"; }
# want_records WANT...: the log holds exactly these lines (records() form)
want_records() {
	printf '%s\n' "$@" >"$T/want"
	records >"$T/got"
	expect_file_eq "$T/want" "$T/got"
}
# joined [LOG]: the log as read shows it (lines joined), '|' between lines
joined() { "$KMSG" read -t -F "${1:-$KMSG_FILE}" | paste -sd'|'; }
# long N [CHAR]: N bytes of CHAR
long() { head -c "$1" /dev/zero | tr '\0' "${2:-a}"; }

case_ "arguments are one message, joined by single spaces"
fresh
expect_status 0 "$KMSG" emit hello   world
expect_status 0 "$KMSG" emit "a  b" c
want_records "13,-;hello world" "13,-;a  b c"

case_ "an empty argument is an empty record; -e skips it"
fresh
expect_status 0 "$KMSG" emit ""
expect_status 0 "$KMSG" emit -e ""
want_records "13,-;"

case_ "stdin: one record per line, empty lines too, a last line without newline"
fresh
printf 'one\ntwo\n\nfour' | "$KMSG" emit 2>"$T/err"
expect_eq 0 "$?" "exit status"
want_records "13,-;one" "13,-;two" "13,-;" "13,-;four"
expect_eq "" "$(cat "$T/err")" "stderr"

case_ "stdin: -e skips empty lines"
fresh
printf 'one\n\n\ntwo\n\n' | "$KMSG" emit -e
want_records "13,-;one" "13,-;two"

case_ "stdin: bytes are kept as they are, NUL and a CR inside included"
fresh
printf 'x\0y\rz\n' | "$KMSG" emit
want_records '13,-;x\x00y\x0dz'

case_ "stdin: many lines, across read buffers, in order"
fresh
seq 300000 | "$KMSG" emit --log-size 64M
expect_eq 0 "$?" "exit status"
seq 300000 >"$T/want"
texts >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "stdin: each line is written when it arrives, not at end of input"
fresh
"$KMSG" emit -t warm warm-up
{ echo first; sleep 3; echo second; } | "$KMSG" emit &
pid=$!
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
	texts | grep -qx first && break
	sleep 0.1
done
texts >"$T/got"
expect_grep '^first$' "$T/got"
if grep -q '^second$' "$T/got"; then fail "second line before it was sent"; else ok; fi
wait "$pid"

case_ "-f FILE: one record per line of the file; errors name the file"
fresh
printf 'l1\n%s\nl3\n' "$(long 1100)" >"$T/in"
"$KMSG" emit -f "$T/in" 2>"$T/err"
expect_eq 1 "$?" "exit status"
want_records "13,-;l1" "13,-;l3"
expect_eq "kmsg: $T/in:2: message is 1100 bytes, the log's limit is 1024 (--split writes it in parts)" "$(cat "$T/err")"
fresh
expect_status 1 "$KMSG" emit --input "$T/in" -e -p err
want_records "11,-;l1" "11,-;l3"

case_ "-f FILE: a missing file is an error and creates no log"
fresh
expect_status 1 "$KMSG" emit -f "$T/nonexistent"
expect_grep "$T/nonexistent" "$T/err"
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "-f FILE and a message exclude each other"
fresh
expect_status 2 "$KMSG" emit -f "$T/in" hello
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "priorities: names, numbers, synonyms, case; default user.notice"
fresh
for p in local3.warning LOCAL0.INFO 1.3 190 err user.error user.warn security.panic \
	 daemon.debug 13; do
	"$KMSG" emit -p "$p" "$p" || fail "-p $p: exit status $?"
done
"$KMSG" emit --priority mail.crit long-option
want_records "156,-;local3.warning" "134,-;LOCAL0.INFO" "11,-;1.3" "190,-;190" \
	"11,-;err" "11,-;user.error" "12,-;user.warn" "32,-;security.panic" \
	"31,-;daemon.debug" "13,-;13" "18,-;long-option"

case_ "priorities: kern is never stored, it becomes user (as /dev/kmsg does)"
fresh
"$KMSG" emit -p kern.err a
"$KMSG" emit -p 0 b
"$KMSG" emit -p kern.info c
want_records "11,-;a" "8,-;b" "14,-;c"

case_ "priorities: a bad one is an error that writes nothing"
fresh
for p in foo.bar user.8 user. .err 192 local8.info ""; do
	expect_status 1 "$KMSG" emit -p "$p" x
done
expect_eq "kmsg: unknown priority 'foo.bar': use facility.level, e.g. user.notice; see kmsg(1)" \
	"$("$KMSG" emit -p foo.bar x 2>&1)"
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"
"$KMSG" emit ok
expect_status 1 "$KMSG" emit -p nope x
expect_status 2 "$KMSG" emit x -p
expect_status 2 "$KMSG" emit --no-such-option x
expect_grep "no-such-option" "$T/err"
want_records "13,-;ok"

case_ "--prio-prefix: <N> sets the priority; without a facility -p's is kept"
fresh
printf '<3>hi\n<0>k\n<189>x\n<999>big\nplain\n<3>\n' |
	"$KMSG" emit --prio-prefix -p local1.info
want_records "139,-;hi" "136,-;k" "189,-;x" "142,-;<999>big" "142,-;plain" "139,-;"
fresh
printf '<3>x\n<0>y\n<14>z\n' | "$KMSG" emit --prio-prefix
want_records "11,-;x" "8,-;y" "14,-;z"
fresh
printf '<3>\nx\n' | "$KMSG" emit --prio-prefix -e
want_records "13,-;x"
fresh
"$KMSG" emit --prio-prefix '<12>from args'
printf '<3>no prefix option\n' | "$KMSG" emit
want_records "12,-;from args" "13,-;<3>no prefix option"

case_ "-t TAG: \"TAG: msg\" and the field SYSLOG_IDENTIFIER"
fresh
"$KMSG" emit -t myscript started
"$KMSG" emit --tag=other -p err failed
printf 'l1\nl2\n' | "$KMSG" emit -t t2
"$KMSG" emit -t '' untagged
want_records "13,-;myscript: started" " SYSLOG_IDENTIFIER=myscript" \
	"11,-;other: failed" " SYSLOG_IDENTIFIER=other" \
	"13,-;t2: l1" " SYSLOG_IDENTIFIER=t2" "13,-;t2: l2" " SYSLOG_IDENTIFIER=t2" \
	"13,-;untagged"

case_ "-i and --id: \"TAG[PID]: msg\""
fresh
"$KMSG" emit -t T -i with-pid
"$KMSG" emit -t T --id=4242 with-id
"$KMSG" emit --id -t T not-eaten
"$KMSG" emit -i no-tag
texts >"$T/got"
expect_eq 4 "$(wc -l <"$T/got")" "records"
expect_grep '^T\[[0-9][0-9]*\]: with-pid$' "$T/got"
expect_grep '^T\[4242\]: with-id$' "$T/got"
expect_grep '^T\[[0-9][0-9]*\]: not-eaten$' "$T/got"
# logger's default tag for -i: the login name
expect_grep '^[^[:space:]]*\[[0-9][0-9]*\]: no-tag$' "$T/got"
fresh
expect_status 2 "$KMSG" emit --id=abc x
expect_status 2 "$KMSG" emit --id= x
expect_status 2 "$KMSG" emit --id=0 x
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "-s: each stored message is echoed to stderr as well"
fresh
"$KMSG" emit -s -t T hi there 2>"$T/err"
expect_eq "T: hi there" "$(cat "$T/err")" "stderr"
printf 'a\n\nb\n' | "$KMSG" emit --stderr -e 2>"$T/err"
printf 'a\nb\n' >"$T/want"
expect_file_eq "$T/want" "$T/err"
printf 'ok\n%s\n' "$(long 2000)" | "$KMSG" emit -s 2>"$T/err"
expect_eq "ok
kmsg: stdin:2: message is 2000 bytes, the log's limit is 1024 (--split writes it in parts)" "$(cat "$T/err")" "echo then error"
want_records "13,-;T: hi there" " SYSLOG_IDENTIFIER=T" "13,-;a" "13,-;b" "13,-;ok"

case_ "--field KEY=VALUE: fields on every record"
fresh
"$KMSG" emit --field FOO=bar --field EMPTY= --field 'SP=a b=c' one
printf 'x\ny\n' | "$KMSG" emit --field UNIT=backup
want_records "13,-;one" " FOO=bar" " EMPTY=" " SP=a b=c" \
	"13,-;x" " UNIT=backup" "13,-;y" " UNIT=backup"
fresh
"$KMSG" emit -t T --field SYSLOG_IDENTIFIER=mine x
want_records "13,-;T: x" " SYSLOG_IDENTIFIER=mine"

case_ "--field: a bad key names the rule and writes nothing; no '=' is bad usage"
fresh
for f in foo=bar 1ABC=x A-B=x =x "$(long 65 A)=x"; do
	expect_status 1 "$KMSG" emit --field "$f" x
	expect_grep "A-Z, 0-9 and _" "$T/err"
done
expect_status 2 "$KMSG" emit --field NOEQUALS x
expect_grep "KEY=VALUE" "$T/err"
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"
expect_status 1 "$KMSG" emit --field "BIG=$(long 5000)" x
expect_grep "4096" "$T/err"
expect_eq 0 "$(nrecords)" "records after too big fields"

case_ "--field: keys beginning with _ are the kernel's facts, which emit cannot claim"
fresh
for f in _PID=1 _UID=0 _GID=0 _X=y; do
	expect_status 1 "$KMSG" emit --field "$f" x
	expect_eq "kmsg: --field: bad key '${f%%=*}': keys beginning with _ name facts the kernel vouches for, which only a trusted ingester records (kmsg(5), Trust); what a writer says is under a key from A-Z" \
		"$(cat "$T/err")" "--field $f"
done
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "too long: an error with the limit, exit 1, nothing written"
fresh
"$KMSG" emit start
expect_status 1 "$KMSG" emit "$(long 1025)"
expect_eq "kmsg: message is 1025 bytes, the log's limit is 1024 (--split writes it in parts)" "$(cat "$T/err")"
expect_status 1 "$KMSG" emit -t T "$(long 1022)"
expect_grep "message is 1025 bytes with its tag, the log's limit is 1024" "$T/err"
expect_status 0 "$KMSG" emit "$(long 1024 b)"
expect_status 0 "$KMSG" emit -t T "$(long 1021 c)"
want_records "13,-;start" "13,-;$(long 1024 b)" "13,-;T: $(long 1021 c)" " SYSLOG_IDENTIFIER=T"

case_ "stdin: a bad line is reported with its number, the others are written"
fresh
{ echo ok1; long 1500; echo; echo ok3; long 3000000 b; echo; echo ok5; long 2000 c; } |
	"$KMSG" emit 2>"$T/err"
expect_eq 1 "$?" "exit status"
want_records "13,-;ok1" "13,-;ok3" "13,-;ok5"
printf '%s (--split writes it in parts)\n' \
	"kmsg: stdin:2: message is 1500 bytes, the log's limit is 1024" \
	"kmsg: stdin:4: message is 3000000 bytes, the log's limit is 1024" \
	"kmsg: stdin:6: message is 2000 bytes, the log's limit is 1024" >"$T/want"
expect_file_eq "$T/want" "$T/err"

case_ "--no-newline / --cont: a script's line is completed later, in parts"
fresh
cat >"$T/cont.sh" <<EOF
"$KMSG" emit --no-newline "checking foo... "
"$KMSG" emit --cont --no-newline "still "
"$KMSG" emit --cont "ok"
EOF
bash "$T/cont.sh"
expect_eq "checking foo... still ok" "$(texts)"

case_ "a shell's last command, run in its place, ends the line it left open"
fresh
for sh in bash zsh "busybox sh" dash; do
	$sh -c "\"$KMSG\" emit --no-newline '$sh-open '; \"$KMSG\" emit '$sh-plain'"
done
# read -c leaves a line still open; these are ended, so all show at once
"$KMSG" read -F "$KMSG_FILE" -c -o kmsg | sed -n -E 's/^[0-9]+,[0-9]+,[0-9]+,//p' >"$T/got"
for sh in bash zsh "busybox sh" dash; do
	printf 'c;%s-open \n-;%s-plain\n' "$sh" "$sh"
done >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "a plain message from the script ends its open line, as printk does"
fresh
cat >"$T/cont.sh" <<EOF
"$KMSG" emit --no-newline "checking foo... "
"$KMSG" emit "meanwhile"
"$KMSG" emit --cont "ok"
EOF
bash "$T/cont.sh" 2>"$T/err"
expect_eq 0 $? "exit status"
expect_eq "checking foo... |meanwhile|ok" "$(joined)"
expect_grep "no line left open by this script" "$T/err"

case_ "every shell and form joins a script's two parts"
# The second emit is each shell's last command: many run it in place of
# themselves (exec), so its parent is no longer the script.
for sh in bash dash zsh "busybox sh"; do
	command -v ${sh%% *} >/dev/null || { fail "$sh is not installed (tools/deps installs it)"; continue; }
	fresh
	$sh -c "\"$KMSG\" emit --no-newline 'c-one '; \"$KMSG\" emit --cont 'c-two'"
	$sh -c "\"$KMSG\" emit --no-newline 'x-one '; exec \"$KMSG\" emit --cont 'x-two'"
	$sh -c "( \"$KMSG\" emit --no-newline 's-one '; \"$KMSG\" emit --cont 's-two' )"
	$sh -c "( \"$KMSG\" emit --no-newline 'b-one '; \"$KMSG\" emit --cont 'b-two' ) & wait"
	$sh -c "echo 'p-one ' | \"$KMSG\" emit --no-newline; echo p-two | \"$KMSG\" emit --cont"
	printf '"%s" emit --no-newline "f-one "\n"%s" emit --cont "f-two"\n' "$KMSG" "$KMSG" >"$T/f.sh"
	$sh "$T/f.sh"
	expect_eq "c-one c-two|x-one x-two|s-one s-two|b-one b-two|p-one p-two|f-one f-two" \
		"$(joined)" "lines of $sh"
done

case_ "xargs -P: siblings of one parent each keep their own line"
fresh
printf 'x%d\n' 1 2 3 4 5 6 | xargs -P 6 -I{} "$KMSG" emit --no-newline "{} "
"$KMSG" read -t | sort >"$T/got"
printf 'x%d \n' 1 2 3 4 5 6 >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "two scripts at once: each line whole, never mixed"
fresh
for s in A B; do
	cat >"$T/$s.sh" <<EOF
for i in 1 2 3 4 5; do
	"$KMSG" emit --no-newline "$s\$i:"
	sleep 0.0\$((RANDOM % 5))
	"$KMSG" emit --cont --no-newline "$s-mid:"
	"$KMSG" emit --cont "$s-end"
done
EOF
done
bash "$T/A.sh" & bash "$T/B.sh" & wait
"$KMSG" read -t | sort >"$T/got"
for s in A B; do for i in 1 2 3 4 5; do echo "$s$i:$s-mid:$s-end"; done; done >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "two subshells interleaved, each ending with its --cont"
fresh
( "$KMSG" emit --no-newline "left-"; sleep 0.4; "$KMSG" emit --cont "done" ) &
( sleep 0.2; "$KMSG" emit --no-newline "right-"; sleep 0.4; "$KMSG" emit --cont "done" ) &
wait
expect_eq "left-done|right-done" "$(joined)"

case_ "one script's open line is never continued by another"
fresh
bash -c "\"$KMSG\" emit --no-newline 'A-open '; :"
bash -c "\"$KMSG\" emit --cont 'B-line'; :" 2>"$T/err"
expect_eq "A-open |B-line" "$(joined)"
expect_grep "no line left open" "$T/err"

case_ "a reused pid does not continue a dead script's line"
fresh
# In a pid namespace of its own, the second script is given the first one's
# pid (ns_last_pid), but starts after the first one's line was written.
if unshare -rpfm --mount-proc true 2>/dev/null; then
	unshare -rpfm --mount-proc bash -c "
		bash -c 'echo \$\$ >\"$T/pid\"; \"$KMSG\" emit --no-newline dead-open; :'
		sleep 0.1
		echo \$(( \$(cat \"$T/pid\") - 1 )) >/proc/sys/kernel/ns_last_pid
		bash -c 'echo \$\$ >\"$T/pid2\"; \"$KMSG\" emit --cont stranger; :'
		:" 2>"$T/err"
	expect_eq "$(cat "$T/pid")" "$(cat "$T/pid2")" "the pid was reused"
	expect_eq "dead-open|stranger" "$(joined)"
	expect_grep "no line left open" "$T/err"

	case_ "two pid namespaces' scripts of the same pid never join"
	fresh
	unshare -rpfm --mount-proc bash -c "sleep 0.6; \"$KMSG\" emit --cont B-stranger; :" 2>"$T/err" &
	unshare -rpfm --mount-proc bash -c "\"$KMSG\" emit --no-newline 'A-open '; sleep 1; \"$KMSG\" emit --cont A-cont; :"
	wait
	expect_eq "A-open A-cont|B-stranger" "$(joined)"
else
	fail "unshare cannot make a pid namespace here: the pid reuse cases did not run"
fi

case_ "the tag and -i are not repeated inside a joined line"
fresh
sh -c "\"$KMSG\" emit -t tg -i --no-newline 'F-one '; \"$KMSG\" emit -t tg -i --cont 'F-two'"
"$KMSG" read -F "$KMSG_FILE" -o kmsg >"$T/got"
expect_eq 1 "$(grep -c 'SYSLOG_IDENTIFIER=tg' "$T/got")" "SYSLOG_IDENTIFIER fields"
expect_grep '^[0-9]*,[0-9]*,[0-9]*,-;tg\[[0-9]*\]: F-one F-two$' "$T/got"

case_ "--cont with no open line says so and keeps the message"
fresh
"$KMSG" emit --cont "alone" 2>"$T/err"
expect_eq 0 $? "exit status"
expect_eq "alone" "$(joined)"
expect_grep "kmsg: --cont: no line left open by this script" "$T/err"

case_ "stdin with --no-newline: the last line stays open"
fresh
printf 'l1\nl2\n' | "$KMSG" emit --no-newline -s 2>"$T/err"
"$KMSG" emit -s --cont " +end" 2>>"$T/err"
expect_eq "l1|l2 +end" "$(joined)"
printf 'l1\nl2 +end\n' >"$T/want"
expect_file_eq "$T/want" "$T/err"

case_ "--caller ID pairs --no-newline and --cont of unrelated processes"
fresh
bash -c "\"$KMSG\" emit --caller 4242 --no-newline 'from '" 2>"$T/err"
bash -c "\"$KMSG\" emit --caller 4343 'other'" 2>>"$T/err"
bash -c "\"$KMSG\" emit --caller 4242 --cont 'elsewhere'" 2>>"$T/err"
expect_eq "" "$(cat "$T/err")" "stderr: nothing to say"
expect_eq "from elsewhere|other" "$(joined)"
expect_status 2 "$KMSG" emit --caller abc x
expect_status 2 "$KMSG" emit --caller 0 x

case_ "read -c leaves an open line for the next read -c, which sees it whole"
fresh
"$KMSG" emit before
bash -c "\"$KMSG\" emit --no-newline 'half '; \"$KMSG\" read -c -t >\"$T/c1\"; \"$KMSG\" emit --cont whole"
"$KMSG" read -c -t >"$T/c2"
expect_eq "before" "$(cat "$T/c1")" "first read -c"
expect_eq "half whole" "$(cat "$T/c2")" "second read -c"

case_ "an open line shows where it began, with no negative delta"
fresh
"$KMSG" emit first
"$KMSG" emit --caller 99 --no-newline "never finished "
"$KMSG" emit later
"$KMSG" read -t >"$T/got"
expect_eq "first|never finished |later" "$(paste -sd'|' "$T/got")"
if "$KMSG" read -d | grep -q '<  *-'; then fail "a negative delta: $("$KMSG" read -d)"; else ok; fi

case_ "-n is logger's --server: an error that names --no-newline"
fresh
expect_status 2 "$KMSG" emit -n host message
expect_grep "no-newline" "$T/err"
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "logger's options kmsg lacks are errors that say what to use"
for opt in "--server=h" "-P 514" "-T" "-d" "-u /dev/log" "--rfc5424" "--rfc3164" \
	   "--msgid=x" "--sd-id=x" "--sd-param=x" "--journald" "--octet-count" \
	   "--socket-errors=on" "--no-act" "-S 2048" "--size=2048"; do
	# shellcheck disable=SC2086
	expect_status 2 "$KMSG" emit $opt message
	expect_grep "logger's option, not kmsg's: " "$T/err"
done
expect_eq no "$([ -e "$KMSG_FILE" ] && echo yes || echo no)" "log created"

case_ "--split writes a long message in parts that read back as one line"
fresh
long 3000 q >"$T/long"
"$KMSG" emit --split -t sp "$(cat "$T/long")"
expect_eq 0 $? "exit status"
expect_eq "sp: $(cat "$T/long")" "$("$KMSG" read -t)"
expect_grep "^records: *3$" <("$KMSG" stat)
{ echo short; long 5000 r; echo; echo after; } | "$KMSG" emit --split
expect_eq "short|$(long 5000 r)|after" "$("$KMSG" read -t | tail -3 | paste -sd'|')"
# UTF-8 is never cut inside a character
fresh
printf '%.0s\303\251' $(seq 1 1000) | "$KMSG" emit --split
"$KMSG" read -o kmsg | sed -n -E 's/^[0-9]+,[0-9]+,[0-9]+,[-c];//p' >"$T/parts"
if grep -q '\\xc3$' "$T/parts"; then fail "a part ends inside a character"; else ok; fi

case_ "CR LF line endings lose the CR"
fresh
printf 'dos line\r\nunix line\n' | "$KMSG" emit
want_records "13,-;dos line" "13,-;unix line"

case_ "a missing log is created: --log-size, mode 0640 under umask 022, parents"
rm -rf "$T/new"
(umask 022; "$KMSG" emit -F "$T/new/a/log" --log-size 64K first)
expect_eq 0 "$?" "exit status"
expect_eq "640 65536" "$(stat -c '%a %s' "$T/new/a/log")" "mode and size"
expect_eq "first" "$(texts "$T/new/a/log")"
(umask 077; "$KMSG" emit -F "$T/new/b.log" --log-size=1M x)
expect_eq "600 1048576" "$(stat -c '%a %s' "$T/new/b.log")" "mode under umask 077"

case_ "--log-size and --max-text on an existing log: said, and the message written"
"$KMSG" emit --file "$T/new/a/log" --log-size 1M --max-text 2000 second 2>"$T/err"
expect_eq 0 $? "exit status"
expect_eq "65536" "$(stat -c '%s' "$T/new/a/log")" "size of an existing log"
expect_grep "log-size 1M is ignored: the log exists, and its size (65536 bytes)" "$T/err"
expect_grep "max-text 2000 is ignored" "$T/err"
expect_eq "first|second" "$(joined "$T/new/a/log")"
"$KMSG" emit --file "$T/new/a/log" --log-size 64K third 2>"$T/err"
expect_eq "" "$(cat "$T/err")" "the size it has: nothing to say"

case_ "--max-text makes a log that takes longer messages"
"$KMSG" emit -F "$T/new/big.log" --max-text 4000 "$(long 3000)"
expect_eq 0 $? "exit status"
"$KMSG" stat -F "$T/new/big.log" >"$T/out"
expect_grep "^max text: *4000$" "$T/out"

case_ "bad sizes say what would do, and make nothing"
for s in 12Q 5000 1K 100T abc; do
	expect_status 2 "$KMSG" emit -F "$T/new/c.log" --log-size "$s" x
done
expect_eq no "$([ -e "$T/new/c.log" ] && echo yes || echo no)" "log created"
"$KMSG" emit -F "$T/new/c.log" --log-size 5000 x 2>"$T/err"
expect_grep "must be a multiple of 4 KiB" "$T/err"
"$KMSG" emit -F "$T/new/c.log" --max-text 4000 --log-size 4K x 2>"$T/err"
expect_grep "too small: a log with texts of up to 4000 bytes needs at least 16K" "$T/err"
"$KMSG" emit -F "$T/new/c.log" --max-text 4000 --log-size 16K x
expect_eq 0 $? "the size it named is enough"
rm -f "$T/new/c.log"
"$KMSG" emit -F "$T/new/c.log" --log-size 100T x 2>"$T/err"
expect_grep "too large: a log is at most 64T" "$T/err"
expect_status 2 "$KMSG" emit -F "$T/new/c.log" --max-text 70000 x

case_ "an empty --file and a directory that cannot be made are clear errors"
expect_status 1 "$KMSG" emit -F '' x
expect_grep "empty path" "$T/err"
expect_status 2 "$KMSG" emit -f ''
expect_grep "^kmsg: --input: an empty path" "$T/err"
# a directory one may enter but not write to, as /var/log for a user
mkdir -p "$T/ro"
chmod 755 "$T" "$T/ro"
if [ "$(id -u)" = 0 ]; then
	expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$KMSG" emit -F "$T/ro/sub/log" x
else
	chmod 555 "$T/ro"
	expect_status 1 "$KMSG" emit -F "$T/ro/sub/log" x
fi
chmod 700 "$T"
expect_grep "kmsg: $T/ro/sub: cannot make the log's directory: Permission denied" "$T/err"

case_ "-i with an empty tag adds nothing; the field limit names what counts"
fresh
"$KMSG" emit -i -t '' plain
want_records "13,-;plain"
expect_status 1 "$KMSG" emit -t tag --field "A=$(long 4080)" x
expect_grep "2 bytes of length, the tag's SYSLOG_IDENTIFIER included); the limit is 4096" "$T/err"

case_ "the log path: \$KMSG_FILE, and the user's default"
fresh
"$KMSG" emit via-env
expect_eq "via-env" "$(texts)"
if [ "$(id -u)" != 0 ]; then
	(unset KMSG_FILE; XDG_STATE_HOME=$T/state "$KMSG" emit default-place)
	expect_eq "default-place" "$(texts "$T/state/kmsg/log")"
fi

case_ "a symlink at the log path is refused; so is a file that is not a log"
rm -rf "$T/sl"; mkdir "$T/sl"
ln -s "$T/sl/target" "$T/sl/link"
expect_status 1 "$KMSG" emit -F "$T/sl/link" x
expect_grep "symbolic link" "$T/err"
expect_eq no "$([ -e "$T/sl/target" ] && echo yes || echo no)" "link target created"
"$KMSG" emit -F "$T/sl/real" x
ln -s "$T/sl/real" "$T/sl/link2"
expect_status 1 "$KMSG" emit -F "$T/sl/link2" y
expect_eq "x" "$(texts "$T/sl/real")"
echo "not a log" >"$T/sl/text"
expect_status 1 "$KMSG" emit -F "$T/sl/text" x
expect_grep "not a kmsg log" "$T/err"
expect_eq "not a log" "$(cat "$T/sl/text")" "the file"

case_ "--sync writes as usual"
fresh
expect_status 0 "$KMSG" emit --sync durable
printf 'a\nb\n' | "$KMSG" emit --sync
want_records "13,-;durable" "13,-;a" "13,-;b"

case_ "write errors: a lost -s echo is exit 1; a read error is reported"
fresh
"$KMSG" emit -s echoed 2>/dev/full
expect_eq 1 "$?" "exit status with stderr full"
want_records "13,-;echoed"
# (the process's own memory at address 0 cannot be read: EIO)
expect_status 1 "$KMSG" emit -f /proc/self/mem
expect_grep "read error" "$T/err"
"$KMSG" emit </dev/null
expect_eq 0 "$?" "exit status of empty input"
want_records "13,-;echoed"

case_ "kmsg options emit lists the options for completions"
"$KMSG" options emit >"$T/out"
for o in "-p --priority arg" "-t --tag arg" " - --id optarg" "-f --input arg" \
	 "-e --skip-empty -" "-s --stderr -" " - --prio-prefix -" " - --field arg" \
	 "-F --file arg" " - --log-size arg" " - --max-text arg" " - --sync -" \
	 " - --no-newline -" " - --cont -" " - --caller arg" " - --split -"; do
	expect_grep "^$o\$" "$T/out"
done


case_ "a log truncated under a writer: the rest of the input is not silently lost"
C=$T/cutemit
"$KMSG" emit -F "$C" --log-size 1M "first"
( echo a; sleep 1.5; echo b; sleep 0.5; echo c ) | "$KMSG" emit -F "$C" 2>"$T/cut.err" &
epid=$!
for _ in $(seq 100); do  # the writer has the log open and mapped
	"$KMSG" read -F "$C" 2>/dev/null | grep -q "] a$" && break
	sleep 0.02
done
truncate -s 8192 "$C"
wait $epid
expect_eq 1 "$?" "exit status"
expect_grep "cut short while it was written" "$T/cut.err"
expect_grep "stdin:2: this message may not be in the log, and the rest of the input is not written" "$T/cut.err"

case_ "emit -f DIRECTORY says so"
expect_status 1 "$KMSG" emit -F "$T/dirlog" -f "$T"
expect_grep ": is a directory" "$T/err"

finish
