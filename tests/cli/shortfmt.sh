#!/bin/bash
# shortfmt.sh - journalctl's names as -o values (short-iso,
# short-iso-precise, short-precise, short-monotonic, short-unix, cat) and
# --utc, on records of fixed wall-clock times written by kmsg-boots; date(1)
# says what each time must be, in several time zones.
. "$(dirname "$0")/lib.sh.inc"

BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
A=aaaa000011112222
# records at 1700000000 + I, since boot 1 + I / 2 s: "boot A record I"
"$BOOTS" "$KMSG_FILE" $A 1700000000 3 || fail "kmsg-boots failed"

# want FORMAT: the three records' lines with date +FORMAT times
want() {
	local i
	for i in 0 1 2; do
		echo "$(LC_ALL=C date -d @$((1700000000 + i)) +"$1") boot $A record $i"
	done
}

for tz in UTC Asia/Kolkata America/St_Johns Europe/Berlin; do
	export TZ=$tz
	case_ "-o short-iso in $tz"
	expect_eq "$(want %Y-%m-%dT%H:%M:%S%:z)" "$("$KMSG" read -o short-iso)"
	case_ "-o short-iso-precise in $tz"
	expect_eq "$(want %Y-%m-%dT%H:%M:%S.000000%:z)" "$("$KMSG" read -o short-iso-precise)"
	case_ "-o short-precise in $tz"
	expect_eq "$(want '%b %d %H:%M:%S.000000')" "$("$KMSG" read -o short-precise)"
	case_ "-o short-unix in $tz"
	expect_eq "$(want %s.000000)" "$("$KMSG" read -o short-unix)"
	case_ "--utc in $tz: the times of TZ=UTC"
	for o in "-o short-iso" "-o short-iso-precise" "-o short-precise" "-T" "-e" \
		 "--time-format iso" "-x -o short-iso" "--list-boots"; do
		expect_eq "$(TZ=UTC "$KMSG" read $o)" "$("$KMSG" read $o --utc)" "$o --utc"
	done
done
export TZ=UTC

case_ "microseconds, from a record of an exact time read back with -K"
rec=$(printf '6,9,1500000,-;exact\n _SEQNUM_ID=00000000000000aa\n _REALTIME_NS=1700000000123456789\n _BOOTTIME_NS=1500000999\n')
expect_eq "2023-11-14T22:13:20.123456+00:00 exact" "$(echo "$rec" | "$KMSG" read -K - -o short-iso-precise)"
expect_eq "Nov 14 22:13:20.123456 exact" "$(echo "$rec" | "$KMSG" read -K - -o short-precise)"
expect_eq "1700000000.123456 exact" "$(echo "$rec" | "$KMSG" read -K - -o short-unix)"
expect_eq "2023-11-15T03:43:20.123456+05:30 exact" \
	"$(echo "$rec" | TZ=Asia/Kolkata "$KMSG" read -K - -o short-iso-precise)"

case_ "-o short-monotonic is the time since boot; -o cat the text alone"
expect_eq "$("$KMSG" read)" "$("$KMSG" read -o short-monotonic)"
expect_eq "$("$KMSG" read -t)" "$("$KMSG" read -o cat)"
expect_eq "[    1.500000] boot $A record 1" "$("$KMSG" read -o short-monotonic | sed -n 2p)"

case_ "the last time format wins, -o names included"
expect_eq "$("$KMSG" read -T)" "$("$KMSG" read -o short-iso -T)"
expect_eq "$("$KMSG" read -o short-iso)" "$("$KMSG" read -T -o short-iso)"
expect_eq "$("$KMSG" read -r)" "$("$KMSG" read -o short-iso -r)"

case_ "-d is ignored with the wall-clock ones, and said to be"
"$KMSG" read -o short-unix -d >"$T/out" 2>"$T/err"
expect_eq "$("$KMSG" read -o short-unix)" "$(cat "$T/out")"
expect_eq "kmsg: --show-delta: ignored with -o short-unix" "$(cat "$T/err")"

case_ "what -o took before is unchanged"
for o in short raw json json-pretty json-seq kmsg; do
	expect_status 0 "$KMSG" read -o $o
done
expect_status 2 "$KMSG" read -o short-full
expect_grep "not one of short, raw, json, json-pretty, json-seq, kmsg, export, short-iso, short-iso-precise, short-precise, short-monotonic, short-unix, cat" "$T/err"

finish
