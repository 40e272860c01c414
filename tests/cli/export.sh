#!/bin/bash
# export.sh - kmsg read -o export and kmsg follow -o export imported by the
# real systemd-journal-remote, and what journalctl --file reads back from
# the journal file compared with what kmsg holds, record by record: every
# field, the times to the microsecond, the boot ids.  journal-remote runs
# in the foreground writing one file in $T: the machine's journal is never
# touched.  Streams are compared through kmsg-export-norm (export_norm.c),
# which checks the format strictly and sorts each entry's fields.
. "$(dirname "$0")/lib.sh.inc"

JR=/lib/systemd/systemd-journal-remote
NORM=${KMSG_EXPORT_NORM:-$(dirname "$KMSG")/tests/kmsg-export-norm}
BOOTS=${KMSG_BOOTS:-$(dirname "$KMSG")/kmsg-boots}
if [ ! -x "$JR" ] || ! command -v journalctl >/dev/null; then
	echo "export: no $JR or journalctl: tools/deps installs systemd-journal-remote" >&2
	exit 1
fi
A=aaaa000011112222 B=aaab000011112222
# this boot's id as records carry it: the first 16 hex digits of boot_id
C=$(tr -d '-' </proc/sys/kernel/random/boot_id | cut -c1-16)

# import STREAM NAME: journal-remote reads STREAM into $T/NAME.journal;
# journalctl's export of it, made comparable, in $T/NAME.back, and
# STREAM's own in $T/NAME.want (a journal keeps a field given twice with
# the same value once: -u on both sides)
import() {
	rm -f "$T/$2.journal"
	"$JR" -o "$T/$2.journal" - <"$1" >"$T/$2.jr" 2>&1 ||
		fail "journal-remote failed on $1: $(head -c 300 "$T/$2.jr")"
	journalctl --file "$T/$2.journal" -o export >"$T/$2.jexp" 2>"$T/$2.jerr" ||
		fail "journalctl --file failed: $(head -c 300 "$T/$2.jerr")"
	"$NORM" -u -x __CURSOR <"$T/$2.jexp" >"$T/$2.back" ||
		fail "journalctl's export of $2 does not parse"
	"$NORM" -u <"$1" >"$T/$2.want" || fail "kmsg's export $1 does not parse"
}
# values NAME FILE: the values of field NAME in a normalised FILE, one a line
values() { sed -n "s/^$1=//p" "$2"; }

"$BOOTS" "$KMSG_FILE" $A 1700000000 3 || fail "kmsg-boots failed"
"$BOOTS" "$KMSG_FILE" $B 1700100000 2 || fail "kmsg-boots failed"
"$KMSG" emit -t app --field FOO=bar hello
"$KMSG" emit -p err "$(printf 'two\nlines')"
"$KMSG" emit -p local3.debug --field "MULTI=$(printf 'a\nb')" --field "TAB=$(printf 'x\ty')" \
	"$(printf 'ctl \001 del \177 c1 \302\205 end')"
"$KMSG" emit -p daemon.warning "$(printf 'not utf-8 \377\376 ünïcode ✓')"
"$KMSG" emit --field EMPTY= --field EMPTY= --field "EQ=a=b" "$(printf 'tab\there')"
"$KMSG" read -o export >"$T/all.export" || fail "read -o export failed"
"$KMSG" read -o json >"$T/all.json"
nrec=$(wc -l <"$T/all.json")

case_ "journal-remote imports every record, and journalctl reads back the same"
import "$T/all.export" all
expect_eq "$nrec" "$(grep -c '^__REALTIME_TIMESTAMP=' "$T/all.back")" "entries in the journal"
expect_file_eq "$T/all.want" "$T/all.back"

case_ "times: the record's to the microsecond, since-boot time as monotonic"
# time_ns and boot_ns of kmsg's JSON, in µs, against the journal's
sed 's/.*"time_ns":\([0-9]*\).*/\1/' "$T/all.json" | while read -r ns; do
	echo $((ns / 1000)); done >"$T/real.want"
values __REALTIME_TIMESTAMP "$T/all.back" >"$T/real.got"
expect_file_eq "$T/real.want" "$T/real.got"
sed 's/.*"boot_ns":\([0-9]*\).*/\1/' "$T/all.json" | while read -r ns; do
	echo $((ns / 1000)); done >"$T/mono.want"
values __MONOTONIC_TIMESTAMP "$T/all.back" >"$T/mono.got"
expect_file_eq "$T/mono.want" "$T/mono.got"
expect_eq "1700000000000000 1000000" \
	"$(values __REALTIME_TIMESTAMP "$T/all.back" | head -1) $(values __MONOTONIC_TIMESTAMP "$T/all.back" | head -1)" \
	"kmsg-boots' first record"
# journalctl's own reading of the dates, in UTC
expect_eq "2023-11-14T22:13:20+0000" \
	"$(journalctl --file "$T/all.journal" -o short-iso --utc -n 1000 | sed -n '1s/ .*//p')" "journalctl's date"

case_ "boot ids: 128 bits, the record's 64 first, the same boot the same id"
values _BOOT_ID "$T/all.back" | cut -c1-16 | uniq >"$T/boots.got"
printf '%s\n' $A $B "$C" >"$T/boots.want"
expect_file_eq "$T/boots.want" "$T/boots.got"
expect_eq 3 "$(values _BOOT_ID "$T/all.back" | sort -u | grep -c '^[0-9a-f]\{32\}$')" "distinct 32-digit ids"
expect_eq "" "$(values _BOOT_ID "$T/all.back" | cut -c17 | grep -v '[89ab]')" "RFC 4122 variant"
# journalctl -b takes them: the three boots, their records
expect_eq 3 "$(journalctl --file "$T/all.journal" --list-boots 2>/dev/null | grep -c '^ *-\?[0-9]')" "journalctl --list-boots"
expect_eq 2 "$(journalctl --file "$T/all.journal" -b "$B$(values _BOOT_ID "$T/all.back" | sed -n 4p | cut -c17-)" -o cat | wc -l)" \
	"journalctl -b of the second boot"

case_ "messages as they were written, binary ones included"
{
	for i in 0 1 2; do echo "boot $A record $i"; done
	for i in 0 1; do echo "boot $B record $i"; done
	echo "hello"  # "app: hello", whose tag is SYSLOG_IDENTIFIER's
	printf 'two\nlines\n'
	printf 'ctl \001 del \177 c1 \302\205 end\n'
	printf 'not utf-8 \377\376 ünïcode ✓\n'
	printf 'tab\there\n'
} >"$T/cat.want"
journalctl --file "$T/all.journal" -o cat -a >"$T/cat.got"
expect_file_eq "$T/cat.want" "$T/cat.got"
# the binary form where journalctl uses it: a newline, controls, no UTF-8
expect_eq 3 "$(grep -a -c '^MESSAGE$' "$T/all.export")" "messages in the binary form"
expect_eq 1 "$(grep -a -c '^MULTI$' "$T/all.export")" "fields in the binary form"
expect_grep '^TAB=x\\x09y$' "$T/all.back"
expect_grep "^TAB=x	y\$" "$T/all.export"

case_ "priority, facility, fields, kmsg's own members"
expect_eq "two lines" "$(journalctl --file "$T/all.journal" -p err..err -o cat | paste -sd' ')" "journalctl -p err"
expect_eq "ctl " "$(journalctl --file "$T/all.journal" --facility=local3 -o cat -a | cut -c1-4)" "--facility"
expect_eq "6 1" "$(values PRIORITY "$T/all.back" | sed -n 1p) $(values SYSLOG_FACILITY "$T/all.back" | sed -n 1p)" "user.info"
expect_grep "^SYSLOG_IDENTIFIER=app\$" "$T/all.back"
expect_grep "^FOO=bar\$" "$T/all.back"
expect_grep "^MULTI=a\\\\x0ab\$" "$T/all.back"
expect_grep "^EQ=a=b\$" "$T/all.back"
expect_grep "^EMPTY=\$" "$T/all.back"
expect_eq "$(seq "$nrec" | tr '\n' ' ')" "$(values KMSG_SEQ "$T/all.back" | tr '\n' ' ')" "KMSG_SEQ"
expect_eq 0 "$(grep -c '^_PID=' "$T/all.back")" "no trusted _PID for a writer's word"
expect_grep "^KMSG_CLAIMED_PID=[0-9]" "$T/all.back"
expect_eq "hello" "$(journalctl --file "$T/all.journal" SYSLOG_IDENTIFIER=app -o cat)" "a match on a field, the tag not in the message"

case_ "every entry ends in an empty line, the last one too; any zone, any locale"
expect_eq '\n\n' "$(tail -c 2 "$T/all.export" | od -An -c | tr -d ' ')" "the stream's end"
TZ=Asia/Kathmandu LC_ALL=C "$KMSG" read -o export >"$T/zone.export"
expect_file_eq "$T/all.export" "$T/zone.export"
LANG=de_DE.UTF-8 LC_ALL= TZ=right/UTC "$KMSG" read -o export >"$T/zone.export"
expect_file_eq "$T/all.export" "$T/zone.export"

case_ "a record of 1024 fields: the last ones counted, the entry imported"
args=()
for i in $(seq 1024); do args+=(--field A=); done
KMSG_FILE=$T/many "$KMSG" emit "${args[@]}" many
KMSG_FILE=$T/many "$KMSG" read -o export >"$T/many.export"
import "$T/many.export" many
expect_file_eq "$T/many.want" "$T/many.back"
expect_eq 24 "$(values KMSG_FIELDS_LEFT_OUT "$T/many.back")" "fields left out"
expect_eq many "$(journalctl --file "$T/many.journal" -o cat)" "the entry"

case_ "a long text"
head -c 60000 /dev/zero | tr '\0' x >"$T/long.txt"
KMSG_FILE=$T/long "$KMSG" emit --max-text 65535 --log-size 1M "$(cat "$T/long.txt")"
KMSG_FILE=$T/long "$KMSG" read -o export >"$T/long.export"
import "$T/long.export" long
expect_file_eq "$T/long.want" "$T/long.back"
journalctl --file "$T/long.journal" -o cat -a | tr -d '\n' >"$T/long.got"
expect_file_eq "$T/long.txt" "$T/long.got"

case_ "follow -o export: each record as it comes, every entry ended"
KMSG_FILE=$T/f.log "$KMSG" emit first
KMSG_FILE=$T/f.log "$KMSG" follow -n all -o export >"$T/f.export" 2>"$T/f.err" &
fpid=$!
wait_for '^KMSG_SEQ=1$' "$T/f.export" || fail "follow printed no entry: $(cat "$T/f.err")"
KMSG_FILE=$T/f.log "$KMSG" emit -p crit "$(printf 'second\nrecord')"
KMSG_FILE=$T/f.log "$KMSG" emit --field K=v third
wait_for '^KMSG_SEQ=3$' "$T/f.export" || fail "follow did not print the third record"
wait_for '^K=v$' "$T/f.export" || fail "follow did not print the third record's field"
stop_bg $fpid TERM
import "$T/f.export" f
expect_eq "first second record third" "$(journalctl --file "$T/f.journal" -o cat -a | tr '\n' ' ' | sed 's/ $//')" "followed records"
KMSG_FILE=$T/f.log "$KMSG" read -o export >"$T/f.read"
"$NORM" -u <"$T/f.read" >"$T/f.readn"
expect_file_eq "$T/f.readn" "$T/f.back"

case_ "kmsg listen's _PID, _UID and _GID become journald's trusted fields"
KMSG_FILE=$T/l.log "$KMSG" listen --socket "$T/l.sock" 2>"$T/l.err" &
lpid=$!
wait_for "listening on" "$T/l.err" || fail "kmsg listen never listened: $(cat "$T/l.err")"
logger -u "$T/l.sock" -t lt --id=4242 "from logger"
for i in $(seq 400); do
	KMSG_FILE=$T/l.log "$KMSG" read -t 2>/dev/null | grep -q "from logger" && break
	sleep 0.05
done
stop_bg $lpid TERM
KMSG_FILE=$T/l.log "$KMSG" read -o export >"$T/l.export"
import "$T/l.export" l
expect_file_eq "$T/l.want" "$T/l.back"
expect_grep "^_UID=$(id -u)\$" "$T/l.back"
expect_grep "^_PID=[1-9][0-9]*\$" "$T/l.back"
expect_grep "^SYSLOG_PID=4242\$" "$T/l.back"
expect_eq "from logger" \
	"$(journalctl --file "$T/l.journal" _UID="$(id -u)" SYSLOG_IDENTIFIER=lt -o cat)" "a match on _UID"

case_ "what export cannot carry is refused"
expect_status 2 "$KMSG" read -o export --show-cursor
expect_grep "show-cursor" "$T/err"
expect_status 2 "$KMSG" read -o export --show-pid

finish
