#!/bin/bash
# colors.sh - terminal-colors.d(5) for kmsg read and kmsg follow: scheme
# files (names, numbers, escapes) and which file wins, .disable and .enable
# on a terminal (script(1) gives one), the options and NO_COLOR over them,
# /etc's directory when the user has none and alone under sudo or pkexec,
# the installed build's deafness to the test's stand-in for /etc, and
# files of any size or garbage.  Colours are compared byte for byte with util-linux 2.38's
# dmesg where it is installed, and with tests/cli/expected/colors-*.txt
# (shown through cat -v, ESC as ^[).
. "$(dirname "$0")/lib.sh.inc"

find_dmesg
have_script=0
command -v script >/dev/null && have_script=1

TD=$XDG_CONFIG_HOME/terminal-colors.d
ETC=$KMSG_TEST_TERMINAL_COLORS_DIR
RAW=$T/raw.txt
printf '%s\n' \
	'<0>[    0.500000] emerg text' \
	'<1>[    1.000000] alert text' \
	'<2>[    2.000000] crit text' \
	'<3>[    3.000000] usb 1-1: device not accepting address' \
	'<4>[    4.000000] warn text' \
	'<5>[    5.000000] notice text' \
	'<6>[    6.250000] app[42]: segfault at 0 ip 0 sp 0 error 4' \
	'<7>[    7.000000] debug text' >"$RAW"

# kread ARGS...: kmsg read -F RAW ARGS, stdout in $T/k, stderr in $T/kerr
kread() { "$KMSG" read -F "$RAW" "$@" >"$T/k" 2>"$T/kerr"; }

# same_as_dmesg ARGS...: kmsg read -F and dmesg -F print the same bytes
same_as_dmesg() {
	[ $have_dmesg = 1 ] || return 0
	kread "$@"
	"$DMESG" -F "$RAW" "$@" >"$T/d" 2>/dev/null
	expect_file_eq "$T/d" "$T/k"
}

# shown FILE: FILE through cat -v, for the expected files
shown() { cat -v "$1"; }

# on_tty CMD...: CMD with a terminal as stdout (TERM=xterm unless set),
# its output without script's CRs in $T/tty
on_tty() {
	TERM=${TERM_FOR_TTY:-xterm} script -qec "$(printf '%q ' "$@")" /dev/null |
		tr -d '\r' >"$T/tty"
}

# colored: 0 if $T/tty holds an escape sequence
colored() { grep -q $'\033' "$T/tty"; }

# expect_color yes|no WHAT CMD...: CMD on a terminal colours or not
expect_color() {
	local want=$1 what=$2 got=no
	shift 2
	on_tty "$@"
	colored && got=yes
	expect_eq "$want" "$got" "colour $what"
}

case_ "no files: dmesg's colours"
kread --color=always
shown "$T/k" >"$T/got"
expect_file_eq "$EXPECTED/colors-default.txt" "$T/got"
same_as_dmesg --color=always

case_ "dmesg.scheme: names, numbers, escapes, comments"
cat >"$TD/dmesg.scheme" <<'EOF'
# dmesg's parts, each a way util-linux takes a colour
time      35
  timebreak lightgreen
subsys 1;44
alert reverse
crit \e[5
err lightred
warn 4 and a comment-less tail
segfault halfbright
EOF
kread --color=always
shown "$T/k" >"$T/got"
expect_file_eq "$EXPECTED/colors-scheme.txt" "$T/got"
expect_eq "" "$(cat "$T/kerr")" "stderr"
for args in "--color=always" "--color=always -x" "--color=always -d" \
	    "--color=always -t" "-H -P --color=always"; do
	# shellcheck disable=SC2086
	same_as_dmesg $args
done

case_ "kmsg.scheme wins over dmesg.scheme, the terminal's over both"
echo "err 32" >"$TD/kmsg.scheme"
echo "err 33" >"$TD/dmesg@xterm.scheme"
TERM=xterm kread --color=always
expect_grep $'\033\[32mdevice' "$T/k"
grep -q $'\033\[35m' "$T/k" && fail "dmesg.scheme's time colour mixed in: one file is read"
echo "err 34" >"$TD/kmsg@xterm.scheme"
TERM=xterm kread --color=always
expect_grep $'\033\[34mdevice' "$T/k"
TERM=vt100 kread --color=always
expect_grep $'\033\[32mdevice' "$T/k"
rm -f "$TD"/*

case_ "a scheme for every tool: its names for other tools are no error"
printf 'header 1\nerr 36\n' >"$TD/scheme"
kread --color=always
expect_grep $'\033\[36mdevice' "$T/k"
expect_eq "" "$(cat "$T/kerr")" "stderr"
printf 'err 31\n' >"$TD/@xterm.scheme"
TERM=xterm kread --color=always
expect_grep $'\033\[31mdevice' "$T/k"
rm -f "$TD"/*

case_ "bad lines: each named and skipped, the others apply"
printf 'err\tred\nerror red\nwarn purple\ncrit\nsubsys %0200d\n\0 x\nalert 7\r\ntime 36\n' 0 \
	>"$TD/dmesg.scheme"
kread --color=always
expect_eq 0 $? "exit status"
sed "s|$TD|TD|" "$T/kerr" >"$T/got"
expect_file_eq "$EXPECTED/colors-bad-lines.txt" "$T/got"
expect_grep $'\033\[36m\[    1' "$T/k"
expect_grep $'\033\[7malert text' "$T/k"
rm -f "$TD"/*

case_ "a scheme of garbage: 64 KiB read, ten lines reported"
head -c 1048576 /dev/urandom >"$TD/kmsg.scheme"
kread --color=always
expect_eq 0 $? "exit status"
expect_grep "kmsg.scheme': longer than 64 KiB: the rest is ignored" "$T/kerr"
expect_grep "kmsg.scheme': more bad lines, not reported" "$T/kerr"
expect_eq 12 "$(wc -l <"$T/kerr")" "lines on stderr"
expect_eq 8 "$(grep -c $'\033\[0m' "$T/k")" "records coloured"
rm -f "$TD"/*

case_ "a scheme that is a FIFO or a device: no wait, dmesg's colours"
# a FIFO is passed over as util-linux passes it; a link to a device is read
mkfifo "$TD/kmsg.scheme"
timeout 10 "$KMSG" read -F "$RAW" --color=always >"$T/k" 2>"$T/kerr"
expect_eq 0 $? "exit status"
shown "$T/k" >"$T/got"
expect_file_eq "$EXPECTED/colors-default.txt" "$T/got"
rm -f "$TD"/*
ln -s /dev/zero "$TD/kmsg.scheme"
timeout 10 "$KMSG" read -F "$RAW" --color=always >"$T/k" 2>"$T/kerr"
expect_eq 0 $? "exit status"
expect_grep "kmsg.scheme': not a regular file: colours as dmesg's" "$T/kerr"
shown "$T/k" >"$T/got"
expect_file_eq "$EXPECTED/colors-default.txt" "$T/got"
rm -f "$TD"/*

case_ "scheme files with colour off: not read"
printf 'bogus\n' >"$TD/kmsg.scheme"
kread --color=never
expect_eq "" "$(cat "$T/kerr")" "stderr with --color=never"
kread -J
expect_eq "" "$(cat "$T/kerr")" "stderr with -J"
rm -f "$TD"/*

if [ $have_script = 1 ]; then
	case_ "disable and enable on a terminal"
	expect_color yes "with no file" "$KMSG" read -F "$RAW"
	touch "$TD/dmesg.disable"
	expect_color no "with dmesg.disable" "$KMSG" read -F "$RAW"
	if [ $have_dmesg = 1 ]; then
		expect_color no "of dmesg with dmesg.disable" "$DMESG" -F "$RAW"
	fi
	expect_color yes "with --color=always" "$KMSG" read -F "$RAW" --color=always
	# dmesg's rule: an option asking for colour decides alone
	expect_color yes "with -L" "$KMSG" read -F "$RAW" -L
	expect_color yes "with --color=auto" "$KMSG" read -F "$RAW" --color=auto
	expect_color yes "with -H" "$KMSG" read -F "$RAW" -H -P
	if [ $have_dmesg = 1 ]; then
		expect_color yes "of dmesg -L with dmesg.disable" "$DMESG" -F "$RAW" -L
	fi
	touch "$TD/kmsg.enable"
	expect_color yes "with kmsg.enable over dmesg.disable" "$KMSG" read -F "$RAW"
	touch "$TD/kmsg@xterm.disable"
	expect_color no "with kmsg@xterm.disable" "$KMSG" read -F "$RAW"
	TERM_FOR_TTY=vt100 expect_color yes "on vt100" "$KMSG" read -F "$RAW"
	rm -f "$TD"/*
	touch "$TD/disable" "$TD/dmesg.enable"
	expect_color yes "with disable and dmesg.enable" "$KMSG" read -F "$RAW"
	touch "$TD/@xterm.disable"
	expect_color yes "with @xterm.disable and dmesg.enable" "$KMSG" read -F "$RAW"
	rm -f "$TD"/*
	touch "$TD/enable"
	NO_COLOR=1 expect_color no "with NO_COLOR and enable" "$KMSG" read -F "$RAW"
	TERM_FOR_TTY=dumb expect_color no "with TERM=dumb and enable" "$KMSG" read -F "$RAW"
	rm -f "$TD"/*

	case_ "/etc/terminal-colors.d: only when the user has no directory"
	mkdir -p "$ETC"
	touch "$ETC/dmesg.disable"
	echo "err 36" >"$ETC/kmsg.scheme"
	expect_color yes "with the user's empty directory" "$KMSG" read -F "$RAW"
	rmdir "$TD"
	expect_color no "with /etc's dmesg.disable" "$KMSG" read -F "$RAW"
	kread --color=always
	expect_grep $'\033\[36mdevice' "$T/k"
	mkdir "$TD"
	kread --color=always
	expect_grep $'\033\[31mdevice' "$T/k"
	rm -rf "$ETC"
fi

case_ "under sudo or pkexec: the user's directory is not read, /etc's is"
# a scheme the invoking user wrote would reach the terminal from root's
# kmsg (and a FIFO or device there be opened by it): only /etc's counts
echo "err 32" >"$TD/kmsg.scheme"
mkdir -p "$ETC"
echo "err 36" >"$ETC/kmsg.scheme"
for who in SUDO_UID=1000 SUDO_USER=someone PKEXEC_UID=1000; do
	env "$who" "$KMSG" read -F "$RAW" --color=always >"$T/k" 2>"$T/kerr"
	expect_grep $'\033\[36mdevice' "$T/k"
done
rm -f "$ETC/kmsg.scheme"
SUDO_UID=1000 "$KMSG" read -F "$RAW" --color=always >"$T/k"
shown "$T/k" >"$T/got"
expect_file_eq "$EXPECTED/colors-default.txt" "$T/got"
# and not under sudo, the user's as before
kread --color=always
expect_grep $'\033\[32mdevice' "$T/k"
rm -rf "$ETC" "$TD"/*

case_ "the installed build honours no test variable"
# KMSG_TEST_TERMINAL_COLORS_DIR is the test build's alone (kmsg-test):
# the kmsg that is installed reads the real /etc/terminal-colors.d
if [ -n "${KMSG_RELEASE:-}" ] && [ ! -e /etc/terminal-colors.d ]; then
	mkdir -p "$ETC"
	echo "err 36" >"$ETC/kmsg.scheme"
	rmdir "$TD"
	"$KMSG" read -F "$RAW" --color=always >"$T/k"
	expect_grep $'\033\[36mdevice' "$T/k"
	"$KMSG_RELEASE" read -F "$RAW" --color=always >"$T/k"
	shown "$T/k" >"$T/got"
	expect_file_eq "$EXPECTED/colors-default.txt" "$T/got"
	if strings "$KMSG_RELEASE" | grep -q KMSG_TEST_; then
		fail "the installed build holds a KMSG_TEST_ name: $(strings "$KMSG_RELEASE" | grep KMSG_TEST_ | head -3 | paste -sd' ')"
	else
		ok
	fi
	mkdir "$TD"
	rm -rf "$ETC"
fi

case_ "kmsg follow: the scheme too"
L=$T/log
"$KMSG" emit -F "$L" -p user.err "disk on fire" ||
	fail "kmsg emit failed: the rest of this test needs it"
echo "err 1;35" >"$TD/kmsg.scheme"
"$KMSG" follow -F "$L" -n all --color=always >"$T/f.out" 2>"$T/f.err" &
fpid=$!
wait_for 'fire' "$T/f.out" || fail "follow printed nothing"
stop_bg $fpid INT
expect_grep $'\033\[1;35mdisk on fire' "$T/f.out"
if [ $have_script = 1 ]; then
	touch "$TD/dmesg.disable"
	# follow ends by the INT timeout sends it after a second
	on_tty timeout -s INT 1 "$KMSG" follow -F "$L" -n all
	expect_grep 'fire' "$T/tty"
	colored && fail "follow coloured with dmesg.disable"
fi
rm -f "$TD"/*

finish
