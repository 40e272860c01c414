#!/bin/bash
# dump.sh - kmsg dump as users run it: to a file with -o, to a pipe, what
# it refuses (a terminal, a dump, a missing log), and that what it writes
# reads back with kmsg read, kmsg stat and gunzip.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
seq -f 'line %g' 1 200 | "$KMSG" emit -F "$L" -p daemon.warning &&
"$KMSG" emit -F "$L" --field CODE=42 "with a field" ||
	fail "kmsg emit failed: the rest of this test needs it"
"$KMSG" read -F "$L" -r >"$T/want"

case_ "-o writes a dump that reads as the log"
expect_status 0 "$KMSG" dump -F "$L" -o "$T/a.gz"
expect_eq "" "$(cat "$T/out" "$T/err")" "dump's output"
"$KMSG" read -F "$T/a.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -F "$L" --fields >"$T/want-fields"
"$KMSG" read -F "$T/a.gz" --fields >"$T/got-fields"
expect_file_eq "$T/want-fields" "$T/got-fields"

case_ "the dump is a gzip stream of a log file"
expect_status 0 gzip -t "$T/a.gz"
gzip -dc "$T/a.gz" >"$T/plain.log"
"$KMSG" read -F "$T/plain.log" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "-o: mode 0640 less the umask, no temporary file left"
expect_eq "640" "$(umask 022; "$KMSG" dump -F "$L" -o "$T/m.gz"; stat -c %a "$T/m.gz")"
expect_eq "600" "$(umask 077; "$KMSG" dump -F "$L" -o "$T/n.gz"; stat -c %a "$T/n.gz")"
expect_eq "" "$(ls "$T" | grep tmp-)" "temporary files"

case_ "-o replaces an existing file"
echo old >"$T/old.gz"
expect_status 0 "$KMSG" dump -F "$L" -o "$T/old.gz"
"$KMSG" read -F "$T/old.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "-o over a file of one's own keeps its permission bits, never setuid or setgid"
echo old >"$T/suid.gz"
chmod 6750 "$T/suid.gz"
expect_status 0 "$KMSG" dump -F "$L" -o "$T/suid.gz"
expect_eq 750 "$(stat -c %a "$T/suid.gz")" "the new file's mode"

case_ "-o naming the log itself, or a link to it, is refused and the log kept"
cp "$L" "$T/self.k"
ln "$T/self.k" "$T/self-hard.k"
ln -s self.k "$T/self-sym.k"
for o in "$T/self.k" "$T/self-hard.k" "$T/self-sym.k"; do
	expect_status 1 "$KMSG" dump -F "$T/self.k" -o "$o"
	expect_grep "is the log being dumped" "$T/err"
done
"$KMSG" read -F "$T/self.k" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "-o onto a FIFO: refused, unless --special, which writes into it and leaves it in place"
mkfifo "$T/fifo"
ln -s fifo "$T/fifo-link"
expect_status 1 "$KMSG" dump -F "$L" -o "$T/fifo"
expect_grep "fifo: is a FIFO; -o writes into a FIFO or a device only with --special" "$T/err"
timeout 20 cat "$T/fifo" >"$T/from-fifo" &
expect_status 0 "$KMSG" dump -F "$L" -o "$T/fifo" --special
wait
"$KMSG" read -F "$T/from-fifo" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"
expect_status 1 "$KMSG" dump -F "$L" -o "$T/fifo-link" --special
expect_grep "fifo-link: is a symbolic link; kmsg neither writes through a link" "$T/err"
expect_eq "fifo symbolic link" "$(stat -c %F "$T/fifo" "$T/fifo-link" | tr '\n' ' ' |
	sed 's/ $//')" "the FIFO and its link"

case_ "-o --special onto a FIFO nobody reads: refused after a while, not blocked for ever"
start=$(date +%s)
expect_status 1 timeout 60 "$KMSG" dump -F "$L" -o "$T/fifo" --special
expect_grep "fifo: a FIFO that no process opened for reading within 5 seconds; start its reader first" "$T/err"
[ $(( $(date +%s) - start )) -lt 30 ] && ok || fail "took $(( $(date +%s) - start )) s"

case_ "-o '' is an error, not standard output"
expect_status 2 "$KMSG" dump -F "$L" -o ''
expect_grep "an empty path" "$T/err"
expect_eq "" "$(cat "$T/out")" "standard output"

case_ "a dump interrupted or killed half-way leaves no file behind"
seq -f 'a longer line, to fill a larger log with, number %g' 1 400000 |
	"$KMSG" emit -F "$T/big.k" --log-size 32M || fail "kmsg emit of the large log"
mkdir "$T/k"
for sig in INT TERM KILL; do
	# (a command run with & in a script ignores SIGINT unless told)
	env --default-signal=INT "$KMSG" dump -F "$T/big.k" -o "$T/k/big.gz" --level 9 &
	pid=$!
	# until it has its new file open (unnamed, or big.gz.tmp-XXXXXX)
	for _ in $(seq 1000); do
		ls -l "/proc/$pid/fd" 2>/dev/null | grep -q -- "$T/k/" && break
		sleep 0.01
	done
	kill -"$sig" "$pid"
	wait "$pid"
	expect_eq "" "$(ls -A "$T/k")" "files left by a dump stopped by SIG$sig"
	rm -f "$T/k/"*
done

case_ "to a pipe"
"$KMSG" dump -F "$L" | cat >"$T/p.gz"
expect_eq "0" "${PIPESTATUS[0]}" "dump's status"
"$KMSG" read -F "$T/p.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"
"$KMSG" dump -F "$L" | gzip -dc | cmp -s - "$T/plain.log" ||
	fail "a dump to a pipe differs from one to a file"

case_ "to a regular file on standard output"
"$KMSG" dump -F "$L" >"$T/s.gz"
"$KMSG" read -F "$T/s.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "a reader that goes away early is no error"
"$KMSG" dump -F "$L" | head -c 10 >/dev/null
expect_eq "0" "${PIPESTATUS[0]}" "dump's status"

case_ "-v reports records and bytes"
expect_status 0 "$KMSG" dump -F "$L" -v -o "$T/v.gz"
expect_eq "kmsg: dump: 201 records, $(stat -c %s "$T/v.gz") bytes" "$(cat "$T/err")"

case_ "KMSG_FILE names the log when --file does not"
KMSG_FILE=$L "$KMSG" dump >"$T/k.gz"
"$KMSG" read -F "$T/k.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "refuses to write to a terminal"
if command -v script >/dev/null; then
	script -qec "'$KMSG' dump -F '$L'" /dev/null >"$T/tty" 2>&1
	expect_eq "1" "$?" "status on a terminal"
	expect_grep "refusing to write a binary dump to a terminal; use -o FILE or a pipe" "$T/tty"
	# nothing but the message reached the terminal
	expect_eq "1" "$(tr -d '\r' <"$T/tty" | grep -c .)" "lines on the terminal"
	script -qec "'$KMSG' dump -F '$L' -o '$T/t.gz'" /dev/null >"$T/tty" 2>&1
	expect_eq "0" "$?" "status with -o on a terminal"
	"$KMSG" read -F "$T/t.gz" -r >"$T/got"
	expect_file_eq "$T/want" "$T/got"
else
	echo "skipped: no script(1) for a terminal" >&2
fi

case_ "a missing log"
expect_status 1 "$KMSG" dump -F "$T/nonexistent" -o "$T/x.gz"
expect_grep "^kmsg: $T/nonexistent: no such log" "$T/err"
[ -e "$T/x.gz" ] && fail "a failed dump left its output"
expect_eq "" "$(ls "$T" | grep tmp-)" "temporary files"

case_ "a dump through a pipe reads back (kmsg read -F -, kmsg stat -F -)"
"$KMSG" dump -F "$L" | "$KMSG" read -F - -r >"$T/got"
expect_file_eq "$T/want" "$T/got"
expect_eq "201" "$("$KMSG" dump -F "$L" | "$KMSG" stat -F - | sed -n 's/^records: *//p')"

case_ "a log on standard input is dumped"
# shellcheck disable=SC2002 # a pipe, not a file, on purpose
cat "$L" | "$KMSG" dump -F - | "$KMSG" read -F - -r >"$T/got"
expect_file_eq "$T/want" "$T/got"
expect_status 1 "$KMSG" dump -F /dev/zero -o "$T/x.gz"
expect_grep "^kmsg: /dev/zero: holds only NUL bytes; --file takes a kmsg log" "$T/err"

case_ "a dump is not dumped again"
expect_status 1 "$KMSG" dump -F "$T/a.gz" -o "$T/x.gz"
expect_grep ": is a kmsg dump; --file takes a kmsg log" "$T/err"

case_ "an output that cannot be written"
expect_status 1 "$KMSG" dump -F "$L" -o "$T/no/such/dir/x.gz"
expect_grep "^kmsg: $T/no/such/dir/x.gz: No such file or directory" "$T/err"
if [ -w /dev/full ]; then
	expect_status 1 sh -c '"$0" dump -F "$1" >/dev/full' "$KMSG" "$L"
	expect_grep "No space left on device" "$T/err"
fi

case_ "--level"
expect_status 0 "$KMSG" dump -F "$L" --level 9 -o "$T/9.gz"
"$KMSG" read -F "$T/9.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "bad usage"
expect_status 2 "$KMSG" dump -F "$L" --level 0
expect_status 2 "$KMSG" dump -F "$L" --level 10
expect_status 2 "$KMSG" dump -F "$L" extra
expect_status 2 "$KMSG" dump --no-such-option

if command -v script >/dev/null; then
	case_ "long work shows progress on a terminal, and only there"
	# level 9 of 32 MiB: about a second, past the half second before the
	# first line is drawn
	M=$T/m.log
	seq -f 'record %g of the test log, with some text to make it long enough' 1 300000 |
		"$KMSG" emit -F "$M" --log-size 32M
	script -qec "\"$KMSG\" dump -F \"$M\" --level 9 -o \"$T/m.gz\"" /dev/null >"$T/tty"
	expect_grep "kmsg: dump: *[0-9]*% ([0-9.]* MiB of 32.0 MiB)" "$T/tty"
	"$KMSG" dump -F "$M" --level 9 -o "$T/m2.gz" 2>"$T/err"
	expect_eq "" "$(cat "$T/err")" "stderr when it is not a terminal"
	expect_eq "$("$KMSG" read -F "$M" | wc -l)" "$("$KMSG" read -F "$T/m2.gz" | wc -l)" "the dump"

	case_ "stat of a dump, from its header and first record, agrees with the log"
	"$KMSG" stat -F "$T/m2.gz" >"$T/dstat"
	"$KMSG" stat -F "$M" >"$T/lstat"
	for k in records oldest newest next cleared evicted "ring id"; do
		expect_eq "$(grep "^$k:" "$T/lstat")" "$(grep "^$k:" "$T/dstat")" "$k"
	done
fi

case_ "damaged and cut-short dumps are refused by read and stat"
head -c 100 "$T/a.gz" >"$T/cut.gz"
expect_status 1 "$KMSG" read -F "$T/cut.gz"
expect_status 1 "$KMSG" stat -F "$T/cut.gz"
expect_grep "^kmsg: $T/cut.gz: damaged or incomplete dump" "$T/err"

case_ "the records of a dump cut short are read as its error says: gunzip -c, read -F"
head -c $(($(stat -c %s "$T/a.gz") - 1)) "$T/a.gz" >"$T/cut1.gz"
expect_status 1 "$KMSG" read -F "$T/cut1.gz"
expect_grep "gunzip -c it into a file" "$T/err"
gunzip -c "$T/cut1.gz" >"$T/cut1.log" 2>/dev/null
"$KMSG" read -F "$T/cut1.log" -r >"$T/got" 2>/dev/null
expect_file_eq "$T/want" "$T/got"

case_ "a dump of a large log is read in a few MiB, its copy in TMPDIR"
# 256 MiB logs, one with 90 MiB of records and one with ten: each dump is
# read in about the memory of a dump of a few records, its copy of more
# than 16 MiB in a file in TMPDIR (inflated into memory, the fuller one
# took 90 MiB more)
seq -f 'a record of a log copied off a small device, number %09g' 1 700000 |
	"$KMSG" emit -F "$T/full.k" --log-size 256M &&
seq -f 'one of few records, number %g' 1 10 | "$KMSG" emit -F "$T/few.k" --log-size 256M ||
	fail "kmsg emit of the 256 MiB logs"
mkdir "$T/tmp"
base=$(peak_kib "$KMSG" read -F "$T/a.gz")
for k in full few; do
	"$KMSG" dump -F "$T/$k.k" --level 1 -o "$T/$k.gz"
	rss=$(TMPDIR=$T/tmp peak_kib "$KMSG" read -F "$T/$k.gz" -r)
	small_enough "$((rss - base))" 24000
	"$KMSG" read -F "$T/$k.k" -r | cmp -s - "$T/out" ||
		fail "read -F of the dump of the $k log differs from the log's"
	rss=$(TMPDIR=$T/tmp peak_kib "$KMSG" stat -F "$T/$k.gz")
	small_enough "$((rss - base))" 8000
done
rm -f "$T/out" "$T/full.k" "$T/few.k"
expect_eq "" "$(ls -A "$T/tmp")" "files left in TMPDIR"

case_ "a TMPDIR that cannot take a large dump's copy is named, with the fix"
TMPDIR=$T/no-such-dir expect_status 1 "$KMSG" read -F "$T/full.gz"
expect_eq "kmsg: $T/full.gz: cannot decompress it into a temporary file in $T/no-such-dir: \
No such file or directory (set TMPDIR to a writable directory with room for the log it \
holds, whose size kmsg stat -F gives)" "$(cat "$T/err")"
# a small one stays in memory and needs none
TMPDIR=$T/no-such-dir "$KMSG" read -F "$T/a.gz" -r >"$T/got"
expect_file_eq "$T/want" "$T/got"

finish
