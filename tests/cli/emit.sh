#!/bin/bash
# emit.sh - "kmsg emit" as scripts use it: what ends up in the log (read
# back with "kmsg read -o kmsg"), what the user sees on stderr, exit
# statuses, and that a refused message writes nothing.
. "$(dirname "$0")/lib.sh.inc"

# records [LOG]: the log as "kmsg read -o kmsg" prints it, without the
# sequence number and time: "prio,flags;text", then " KEY=value" lines.
records() {
	"$KMSG" read -o kmsg -F "${1:-$KMSG_FILE}" |
		sed -E 's/^([0-9]+),[0-9]+,-?[0-9]+,([^;]*);/\1,\2;/'
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

case_ "stdin: bytes are kept as they are, NUL and CR included"
fresh
printf 'x\0y\r\n' | "$KMSG" emit
want_records '13,-;x\x00y\x0d'

case_ "stdin: many lines, across read buffers, in order"
fresh
seq 300000 | "$KMSG" emit --size 64M
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
expect_eq "kmsg: $T/in:2: message is 1100 bytes, the log's limit is 1024" "$(cat "$T/err")"
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
kmsg: stdin:2: message is 2000 bytes, the log's limit is 1024" "$(cat "$T/err")" "echo then error"
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

case_ "too long: an error with the limit, exit 1, nothing written"
fresh
"$KMSG" emit start
expect_status 1 "$KMSG" emit "$(long 1025)"
expect_eq "kmsg: message is 1025 bytes, the log's limit is 1024" "$(cat "$T/err")"
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
printf '%s\n' "kmsg: stdin:2: message is 1500 bytes, the log's limit is 1024" \
	"kmsg: stdin:4: message is 3000000 bytes, the log's limit is 1024" \
	"kmsg: stdin:6: message is 2000 bytes, the log's limit is 1024" >"$T/want"
expect_file_eq "$T/want" "$T/err"

case_ "-n / --cont: a script's line is completed later, another process between"
fresh
cat >"$T/cont.sh" <<EOF
"$KMSG" emit -n "checking foo... "
"$KMSG" emit "meanwhile"
"$KMSG" emit --cont -n "still "
"$KMSG" emit --cont "ok"
EOF
bash "$T/cont.sh"
texts | sort >"$T/got"
printf '%s\n' "checking foo... still ok" "meanwhile" >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "-n / --cont: two scripts at once, each line whole, never mixed"
fresh
for s in A B; do
	cat >"$T/$s.sh" <<EOF
for i in 1 2 3 4 5; do
	"$KMSG" emit -n "$s\$i:"
	sleep 0.0\$((RANDOM % 5))
	"$KMSG" emit --cont -n "$s-mid:"
	"$KMSG" emit --cont "$s-end"
done
EOF
done
bash "$T/A.sh" & bash "$T/B.sh" & wait
texts | sort >"$T/got"
for s in A B; do for i in 1 2 3 4 5; do echo "$s$i:$s-mid:$s-end"; done; done >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "-n / --cont: two subshells interleaved"
fresh
# The ": " keeps the --cont from being a subshell's last command, which
# bash runs in place of the subshell (kmsg(1) tells to use --caller there).
( "$KMSG" emit -n "left-"; sleep 0.4; "$KMSG" emit --cont "done"; : ) &
( sleep 0.2; "$KMSG" emit -n "right-"; sleep 0.4; "$KMSG" emit --cont "done"; : ) &
wait
texts | sort >"$T/got"
printf '%s\n' "left-done" "right-done" >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "-n / --cont: one script's open line is never joined with another's"
fresh
bash -c "\"$KMSG\" emit -n 'A-open '; :"
bash -c "\"$KMSG\" emit --cont 'B-line'; :"
texts >"$T/got"
expect_grep '^B-line$' "$T/got"
if grep -q 'A-open B-line' "$T/got"; then fail "lines of two scripts joined"; else ok; fi

case_ "-n with stdin: the last line stays open"
fresh
printf 'l1\nl2\n' | "$KMSG" emit -n -s 2>"$T/err"
"$KMSG" emit -s --cont " +end" 2>>"$T/err"
want_records "13,-;l1" "13,-;l2 +end"
printf 'l1\nl2 +end\n' >"$T/want"
expect_file_eq "$T/want" "$T/err"

case_ "--caller ID pairs -n and --cont of unrelated processes"
fresh
bash -c "\"$KMSG\" emit --caller 4242 -n 'from '"
bash -c "\"$KMSG\" emit --caller 4343 'other'"
bash -c "\"$KMSG\" emit --caller 4242 'elsewhere'"
texts | sort >"$T/got"
printf '%s\n' "from elsewhere" "other" >"$T/want"
expect_file_eq "$T/want" "$T/got"
expect_status 2 "$KMSG" emit --caller abc x
expect_status 2 "$KMSG" emit --caller 0 x

case_ "a missing log is created: --size, mode 0640 under umask 022, parents"
rm -rf "$T/new"
(umask 022; "$KMSG" emit -F "$T/new/a/log" --size 64K first)
expect_eq 0 "$?" "exit status"
expect_eq "640 65536" "$(stat -c '%a %s' "$T/new/a/log")" "mode and size"
expect_eq "first" "$(texts "$T/new/a/log")"
(umask 022; "$KMSG" emit --file "$T/new/a/log" --size 1M second)
expect_eq "65536" "$(stat -c '%s' "$T/new/a/log")" "size of an existing log"
(umask 077; "$KMSG" emit -F "$T/new/b.log" --size=1M x)
expect_eq "600 1048576" "$(stat -c '%a %s' "$T/new/b.log")" "mode under umask 077"
expect_status 2 "$KMSG" emit -F "$T/new/c.log" --size 12Q x
expect_eq no "$([ -e "$T/new/c.log" ] && echo yes || echo no)" "log created"
expect_status 1 "$KMSG" emit -F "$T/new/c.log" --size 1K x
expect_eq no "$([ -e "$T/new/c.log" ] && echo yes || echo no)" "log created"

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
expect_status 1 "$KMSG" emit -f "$T"
expect_grep "read error" "$T/err"
"$KMSG" emit </dev/null
expect_eq 0 "$?" "exit status of empty input"
want_records "13,-;echoed"

case_ "kmsg options emit lists the options for completions"
"$KMSG" options emit >"$T/out"
for o in "-p --priority arg" "-t --tag arg" " - --id optarg" "-f --input arg" \
	 "-e --skip-empty -" "-s --stderr -" " - --prio-prefix -" " - --field arg" \
	 "-F --file arg" " - --size arg" " - --sync -" "-n --no-newline -" \
	 " - --cont -" " - --caller arg"; do
	expect_grep "^$o\$" "$T/out"
done

finish
