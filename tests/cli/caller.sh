#!/bin/bash
# caller.sh - who wrote a record: kmsg read's and kmsg follow's
# --show-caller (dmesg 2.40's "[  T123] " column, and -J's "caller" key)
# and --show-pid, on dmesg 2.40 text read with -F and on logs written by
# kmsg emit; --pid beside them; and the default output, which shows the
# kernel's callers as dmesg 2.40 and later do, and kmsg's own only when
# asked.
#
# dmesg 2.40 is not installed here (2.38 is, and knows no caller): the
# expected bytes of the columns are written from util-linux v2.40's
# sys-utils/dmesg.c.  It prints "[%*s] " after the time, the id
# right-aligned in as many columns as /proc/sys/kernel/pid_max's text has,
# newline counted, when it reads /dev/kmsg (6 for 32768, 8 for 4194304),
# and 5 when it reads a file (-F); in -J a "caller" string member after
# "time".  It reads the column back from -F text after the time.
. "$(dirname "$0")/lib.sh.inc"

IN=$SRC/tests/data/dmesg-2.40-caller.txt

# ---- dmesg 2.40 text read with -F ------------------------------------------

# Each run's arguments, then what kmsg read -F IN ARGS printed and its
# status: tests/cli/expected/read-caller.txt says what a user should see.
# Where kmsg parts from dmesg 2.40 (on purpose, see lib/text/dmesg_parse.c):
# "[ ok] text" stays text, where 2.40 takes "ok" for a caller; "[T77]no
# space" keeps its "n", which 2.40 drops.
runs=(
	""                              # the default: the column, as in dmesg 2.40
	"--show-caller"                 # the column, dmesg -F's width (5)
	"--show-caller -x -t"           # after the decoding, without a time
	"--show-caller -r -l debug"     # raw lines, as dmesg -r prints them
	"--show-caller --show-pid"      # text has no pid: no second column
	"--show-caller -J -l warn"      # -J's "caller", after "time"
	"-J -l warn"                    # without the option: "caller" too
	"--show-caller -o kmsg -l err+" # /dev/kmsg's "caller=" after the flags
)
: >"$T/got"
for args in "${runs[@]}"; do
	# shellcheck disable=SC2086 # the words of one run
	"$KMSG" read -F "$IN" $args >"$T/out" 2>"$T/err"
	printf '== %s (%d)\n' "$args" $? >>"$T/got"
	cat "$T/out" "$T/err" >>"$T/got"
	# dmesg -F -r leaves the last record's newline out, and so does kmsg
	[ -z "$(tail -c 1 "$T/out")" ] || printf '\n(no newline at the end)\n' >>"$T/got"
done
case_ "kmsg read -F of dmesg 2.40 text, each run's output"
expect_file_eq "$EXPECTED/read-caller.txt" "$T/got"

case_ "the -J document with callers is valid JSON, caller after time"
"$KMSG" read -F "$IN" --show-caller -J >"$T/json" 2>"$T/err"
expect_eq 0 $? "status"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["dmesg"]
print(" ".join(r.get("caller", "-") for r in d))
print(" ".join(",".join(r) for r in d[:1] + d[7:8]))' "$T/json" >"$T/n" 2>&1
expect_eq "T0 T0 C1 T1 T345 T1234 T4194303 - - T42 T77
pri,time,caller,msg pri,time,msg" "$(cat "$T/n")" "the callers and the keys"

case_ "the text without the column: what dmesg 2.38 prints for it"
if [ -x /usr/bin/dmesg ] && /usr/bin/dmesg --version 2>/dev/null | grep -q ' 2\.38'; then
	sed 's/^\(<[0-9]*>\[ *[0-9.]*\] \)\[ *[TC][0-9]*\] \{0,1\}/\1/' "$IN" >"$T/plain.txt"
	for args in "" "-x" "-t -l info" "-d"; do
		# shellcheck disable=SC2086
		env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 TZ=UTC /usr/bin/dmesg -F "$T/plain.txt" $args >"$T/want"
		# shellcheck disable=SC2086
		"$KMSG" read -F "$T/plain.txt" $args >"$T/got2"
		[ -s "$T/want" ] || fail "dmesg printed nothing"
		expect_file_eq "$T/want" "$T/got2"
	done
	# -r alone prints the file as it is, caller columns and all, as dmesg
	# -F -r does
	env -i PATH=/usr/bin:/bin LC_ALL=C.UTF-8 TZ=UTC /usr/bin/dmesg -F "$IN" -r >"$T/want"
	"$KMSG" read -F "$IN" -r --show-caller >"$T/got2"
	expect_file_eq "$T/want" "$T/got2"
else
	echo "caller: no util-linux 2.38 dmesg: skipping the comparison with it" >&2
fi

# ---- logs written by kmsg emit ----------------------------------------------

L=$T/log
"$KMSG" emit -F "$L" --caller 123 --id=456 -t app "from a thread" &&
"$KMSG" emit -F "$L" --caller 123 --id=457 -t app -p user.err "second process, same caller" &&
# kmsg_caller_id() of a writer in another pid namespace: the top bit set
"$KMSG" emit -F "$L" --caller 2147483700 --id=77 -t app "from a container" &&
"$KMSG" emit -F "$L" --caller 4194303 --id=4194303 -t app "the largest ids" ||
	fail "kmsg emit failed: the rest of this test needs it"

# the width dmesg 2.40 gives the column on this machine (see the top)
W=11
[ -r /proc/sys/kernel/pid_max ] && W=$(wc -c </proc/sys/kernel/pid_max)
col() { printf "[%${W}s] " "$1"; }

case_ "a log: the default output has no column"
"$KMSG" read -F "$L" -t >"$T/out" 2>&1
expect_eq "app[456]: from a thread
app[457]: second process, same caller
app[77]: from a container
app[4194303]: the largest ids" "$(cat "$T/out")" "kmsg read -t"

case_ "a log: --show-caller, --show-pid, both, in dmesg 2.40's /dev/kmsg width"
"$KMSG" read -F "$L" -t --show-caller >"$T/out" 2>&1
expect_eq "$(col T123)app[456]: from a thread
$(col T123)app[457]: second process, same caller
$(col P77)app[77]: from a container
$(col T4194303)app[4194303]: the largest ids" "$(cat "$T/out")" "--show-caller"
"$KMSG" read -F "$L" -t --show-pid >"$T/out" 2>&1
expect_eq "$(col P456)app[456]: from a thread
$(col P457)app[457]: second process, same caller
$(col P77)app[77]: from a container
$(col P4194303)app[4194303]: the largest ids" "$(cat "$T/out")" "--show-pid"
"$KMSG" read -F "$L" -t -x --show-caller --show-pid -l err >"$T/out" 2>&1
expect_eq "user  :err   : $(col T123)$(col P457)app[457]: second process, same caller" \
	"$(cat "$T/out")" "-x --show-caller --show-pid"

case_ "a log: the time comes first, then the column"
"$KMSG" read -F "$L" --show-caller -n 1 >"$T/out" 2>&1
expect_eq "$(col T4194303)app[4194303]: the largest ids" \
	"$(sed -n 's/^\[ *[0-9]*\.[0-9]\{6\}\] //p' "$T/out")" "after the time"
"$KMSG" read -F "$L" --show-caller -n 1 -r >"$T/out" 2>&1
expect_eq "$(col T4194303)app[4194303]: the largest ids" \
	"$(sed -n 's/^<13>\[ *[0-9]*\.[0-9]\{6\}\] //p' "$T/out")" "after -r's time"

case_ "a log: --pid with the column"
"$KMSG" read -F "$L" -t --show-caller --show-pid --pid 457,77 >"$T/out" 2>&1
expect_eq "$(col T123)$(col P457)app[457]: second process, same caller
$(col P77)$(col P77)app[77]: from a container" "$(cat "$T/out")" "--pid 457,77"

case_ "a log: -J with --show-caller and --show-pid; without, no new key"
"$KMSG" read -F "$L" -J --show-caller --show-pid >"$T/json" 2>"$T/err"
expect_eq 0 $? "status"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["dmesg"]
print(" ".join("%s/%s" % (r["caller"], r["claimed_pid"]) for r in d))
print(",".join(d[0]))' "$T/json" >"$T/n" 2>&1
expect_eq "T123/456 T123/457 P77/77 T4194303/4194303
pri,time,caller,claimed_pid,msg" "$(cat "$T/n")" "callers, pids and keys"
"$KMSG" read -F "$L" -J >"$T/json" 2>"$T/err"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1]))["dmesg"]
print(" ".join(",".join(r) for r in d))' "$T/json" >"$T/n" 2>&1
expect_eq "pri,time,msg pri,time,msg pri,time,msg pri,time,msg" "$(cat "$T/n")" "-J alone"

case_ "-o json carries pid and caller as numbers, always"
"$KMSG" read -F "$L" -o json --output-fields claimed_pid,caller >"$T/out" 2>&1
expect_eq '{"claimed_pid":456,"caller":123}
{"claimed_pid":457,"caller":123}
{"claimed_pid":77,"caller":2147483700}
{"claimed_pid":4194303,"caller":4194303}' "$(cat "$T/out")" "-o json"
"$KMSG" read -F "$IN" -o json --output-fields caller >"$T/out" 2>&1
expect_eq '{"caller":0}
{"caller":0}
{"caller":2147483649}
{"caller":1}
{"caller":345}
{"caller":1234}
{"caller":4194303}
{"caller":null}
{"caller":null}
{"caller":42}
{"caller":77}' "$(cat "$T/out")" "-o json of 2.40 text: the kernel's numbers, T0 is 0"

case_ "kmsg follow --show-caller --pid: new records as they come"
"$KMSG" follow -F "$L" -t --show-caller --pid 900 -n 0 >"$T/follow" 2>&1 &
fpid=$!
sleep 0.3
"$KMSG" emit -F "$L" --caller 901 --id=999 -t app "not this one"
"$KMSG" emit -F "$L" --caller 901 --id=900 -t app "followed"
wait_for "followed" "$T/follow" || fail "follow printed no record: $(cat "$T/follow")"
kill "$fpid" 2>/dev/null
wait "$fpid" 2>/dev/null
expect_eq "$(col T901)app[900]: followed" "$(cat "$T/follow")" "what follow printed"

case_ "--show-caller and --show-pid where they have no place: bad usage"
for cmd in read follow; do
	expect_status 2 "$KMSG" $cmd -F "$L" -o json --show-caller
	expect_eq "kmsg: --show-caller: not with -o json, json-pretty, json-seq or export, whose records always have pid and caller" \
		"$(head -1 "$T/err")" "$cmd -o json"
	expect_eq "Try 'kmsg $cmd --help' for more information." "$(tail -1 "$T/err")" "$cmd's hint"
done
expect_status 2 "$KMSG" read -F "$L" -o kmsg --show-pid
expect_grep "^kmsg: --show-pid: not with -o kmsg: the /dev/kmsg format has no place for a pid\$" "$T/err"

case_ "--help lists the options"
"$KMSG" read --help >"$T/help"
expect_grep "--show-caller" "$T/help"
expect_grep "--show-pid" "$T/help"

# ---- emit --caller: only a caller the writer could be -----------------------

case_ "emit --caller: another user's process, a gone one or another namespace's id is refused"
if [ "$(id -u)" != 0 ] || ! command -v useradd >/dev/null || ! command -v setpriv >/dev/null; then
	echo "caller: not root, or no useradd or setpriv: skipping the checks across users" >&2
else
	U=kmsg-caller-$$-$RANDOM
	useradd -r -M -N -s /usr/sbin/nologin "$U" || fail "useradd $U"
	trap 'userdel "$U" 2>/dev/null; rm -rf "$T"' EXIT
	uid=$(id -u "$U") gid=$(id -g "$U")
	as_user() { setpriv --reuid="$uid" --regid="$gid" --clear-groups "$@"; }
	S=$T/shared.log
	chmod 755 "$T"
	"$KMSG" emit -F "$S" "made by root" && chmod 666 "$S" || fail "the shared log"
	# a root process (a shell, say) with a line open
	sleep 60 & rootpid=$!
	"$KMSG" emit -F "$S" --caller "$rootpid" --no-newline "root: removing "
	rule="a writer names only a process or thread of its own real uid, or a label from 4194304 to 2147483647 that no process can have (root names any)"
	expect_status 1 as_user "$KMSG" emit -F "$S" --caller "$rootpid" --cont "nothing"
	expect_eq "kmsg: --caller: process $rootpid is another user's (uid 0): $rule" \
		"$(cat "$T/err")" "--cont under root's process"
	expect_status 1 as_user "$KMSG" emit -F "$S" --caller "$rootpid" "ends root's line"
	kill "$rootpid"; wait "$rootpid" 2>/dev/null
	expect_status 1 as_user "$KMSG" emit -F "$S" --caller "$rootpid" --cont "nothing"
	expect_eq "kmsg: --caller: no process $rootpid is running: a line left open under the id of a process that is gone cannot be shown to be this user's; $rule" \
		"$(cat "$T/err")" "--cont under a gone process"
	expect_status 1 as_user "$KMSG" emit -F "$S" --caller 2147483700 "x"
	expect_grep "^kmsg: --caller: 2147483700 has the top bit set" "$T/err"
	# root's line is as root left it: open, no one else's words in it
	"$KMSG" read -F "$S" -t >"$T/out" 2>&1
	expect_eq "made by root
root: removing " "$(cat "$T/out")" "the log"
	# a process of the user's own, and a label, pair up as before
	setpriv --reuid="$uid" --regid="$gid" --clear-groups sleep 60 & mine=$!
	sleep 0.2
	as_user "$KMSG" emit -F "$S" --caller "$mine" --no-newline "mine: a " &&
	as_user "$KMSG" emit -F "$S" --caller "$mine" --cont "b" &&
	as_user "$KMSG" emit -F "$S" --caller 5000000 --no-newline "label: c " &&
	as_user "$KMSG" emit -F "$S" --caller 5000000 --cont "d" || fail "the user's own callers were refused"
	kill "$mine"; wait "$mine" 2>/dev/null
	"$KMSG" read -F "$S" -t >"$T/out" 2>&1
	expect_eq "made by root
root: removing 
mine: a b
label: c d" "$(cat "$T/out")" "the user's lines"
fi

finish
