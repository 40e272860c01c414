#!/bin/bash
# read.sh - kmsg read as users run it.  On dmesg raw text its output is
# compared byte for byte with the real dmesg -F on the same file (util-linux
# 2.38, several time zones); on logs made with kmsg emit, filters, outputs,
# read-clear, gaps and errors are checked against what a user would see.
. "$(dirname "$0")/lib.sh.inc"

find_dmesg

# boot_sec_238: the boot time as dmesg 2.38 adds it to the times of -F
# text, in whole seconds (2.39 and later, and kmsg, keep its microseconds):
# kmsg's, read off the iso time of a record at 0, less its fraction.
printf '<6>[    0.000000] boot\n' >"$T/boot0.txt"
boot_sec_238() {
	local iso
	iso=$(TZ=UTC "$KMSG" read -F "$T/boot0.txt" --time-format iso)
	date -u -d "${iso%%,*}" +%s
}

# same_as_dmesg FILE TZ ARGS...: kmsg read -F FILE ARGS prints exactly what
# dmesg -F FILE ARGS prints.  kmsg is given dmesg 2.38's boot time in whole
# seconds (see boot_sec_238), so that what did not change since is compared
# with the installed 2.38; a second boundary crossed in between means a
# retry.  The locale is C.UTF-8 unless LOCALE_ENV says otherwise
# ("LC_ALL=C", or "" for no locale variable at all).
same_as_dmesg() {
	local file=$1 tz=$2 loc=${LOCALE_ENV-LC_ALL=C.UTF-8} _ bt
	shift 2
	case_ "dmesg $* (TZ=$tz${loc:+ $loc} $(basename "$file"))"
	for _ in 1 2 3; do
		bt=$(boot_sec_238)
		env -i PATH=/usr/bin:/bin HOME="$T" $loc TZ="$tz" \
			"$DMESG" -F "$file" "$@" >"$T/want" 2>/dev/null
		env -i PATH=/usr/bin:/bin HOME="$T" $loc TZ="$tz" \
			KMSG_TEST_BOOT_TIME="$bt.000000" \
			"$KMSG" read -F "$file" "$@" >"$T/got" 2>"$T/got.err"
		cmp -s "$T/want" "$T/got" && break
	done
	# an empty comparison would prove nothing
	[ -s "$T/want" ] || fail "dmesg printed nothing"
	expect_file_eq "$T/want" "$T/got"
}

# ---------------------------------------------------------------------------
# dmesg raw text: every priority, subsystem prefixes, times that widen and go
# backwards, escapes, UTF-8, multi-line messages, empty messages.  No local
# facility (2.38 does not know them) and no \r \v \f or bidi controls (kmsg
# escapes them, dmesg does not): those are checked on their own below.
printf '%b' \
	'<6>[    0.500000] first record\n' \
	'<4>[    1.234567] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n' \
	'<3>[    1.300000] EXT4-fs (sda1): error: bad block\n' \
	'<1>[    2.000000] alert: the machine is on fire\n' \
	'<2>[    2.000001] crit message\n' \
	'<0>[    3.000000] emerg message\n' \
	'<5>[    9.999999] notice a:b: c\n' \
	'<7>[   12.000000] debug with a trailing colon:\n' \
	'<6>[   11.000000] going backwards\n' \
	'<6>[   11.000000] same time\n' \
	'<14>[   25.000000] user.info from userspace\n' \
	'<30>[   26.000000] systemd[1]: Started Journal Service.\n' \
	'<13>[   27.000000] user.notice: x\n' \
	'<84>[   28.000000] authpriv warning\n' \
	'<6>[  150.000000] a.out[123]: segfault at 0 ip 00007f sp 0 error 4\n' \
	'<3>[  151.000000] err with segfault at in it\n' \
	'<4>[99999.999999] last before widening\n' \
	'<6>[100000.000000] widened\n' \
	'<6>[1234567.123456] much later\n' \
	'<6>[   30.000000] back in time by a lot\n' \
	'<6>[   31.000000] tabs\tinside\tthe text\n' \
	'<6>[   33.000000] esc \033[31m red \033[0m, del \177, nul \000 mid, bell \007\n' \
	'<6>[   34.000000] utf8 \303\251 \344\270\255\346\226\207, C1 \302\233\n' \
	'<6>[   35.000000] invalid \377 \303( \342\202 end\342\n' \
	'<6>[   36.000000] usb 1-1: first line\nsecond line\n\tthird: line\n' \
	'<4>[   37.000000] warn one\n\ncont after an empty line\n' \
	'<6>[   41.000000] \n' \
	'<6>[   42.000000] after an empty message\n' \
	'<6>no time at all\n' >"$T/basic.txt"

if [ $have_dmesg = 1 ]; then
	for args in "" -e -T -d -t "-t -d" -r -x "--time-format iso" \
		"--time-format delta" "--time-format ctime" "--time-format reltime" \
		"--time-format notime" "-T -d" "-x -T" "-x -d" "-x -t" \
		"-l err" "-l err,warn" "-l 3,debug" "-f user" "-f kern,daemon,authpriv" \
		"-k" "-u" "-k -x" "-f user -l info" "--color=always" \
		"--color=always -x -d" "--color=always -e" "--color=always -T" \
		"--color=always -t" "--noescape" "-r --noescape" "-L=never" \
		"-e -t" "-r --time-format iso"; do
		# shellcheck disable=SC2086
		same_as_dmesg "$T/basic.txt" UTC $args
	done
	same_as_dmesg "$T/basic.txt" Europe/Berlin -T
	same_as_dmesg "$T/basic.txt" Asia/Kolkata --time-format iso

	# records across the 1 MiB chunks kmsg reads, and one longer than a chunk
	for i in $(seq 1 30000); do
		printf '<%d>[%5d.%06d] record %d of a file larger than one read\n' \
			$(( i % 8 )) $(( i / 7 )) $(( i * 37 % 1000000 )) "$i"
	done >"$T/large.txt"
	{ printf '<6>[    1.000000] '; head -c 3000000 /dev/zero | tr '\0' x;
	  printf '\n<6>[    2.000000] after the long one\n'; } >>"$T/large.txt"
	same_as_dmesg "$T/large.txt" UTC
	same_as_dmesg "$T/large.txt" UTC -r
	same_as_dmesg "$T/large.txt" UTC -x -d

	# A boot log starts at 0: the delta after it is 0, as dmesg counts it
	printf '%b' '<6>[    0.000000] Linux version 6.1.0\n' \
		'<6>[    0.512345] Command line: quiet\n' \
		'<6>[    1.000000] third\n' '<6>[    0.000000] back at 0\n' \
		'<6>[    2.250000] after it\n' >"$T/zero.txt"
	for args in -d "-t -d" "-d -t" "-x -d" "-T -d" "--time-format delta" \
		"--color=always -d"; do
		# shellcheck disable=SC2086
		same_as_dmesg "$T/zero.txt" UTC $args
	done

	# Lines without <N>: at the start of a file they are records of their
	# own, with no priority: not decoded, and left out by -l, -f, -k, -u
	printf '%b' '[    1.000000] no priority first\n' 'second line of it\n' \
		'<6>[    2.000000] kern info\n' '<13>[    3.000000] user notice\n' \
		>"$T/noprio.txt"
	printf '%b' 'plain text first\n' '<5>[    3.000000] notice\n' \
		'<14>[    4.000000] user info\n' >"$T/noprio2.txt"
	for f in noprio.txt noprio2.txt; do
		for args in "" -x -t "-x -t" -d -e "-l notice" "-l info" "-f user" \
			"-f kern" -u -k -r "--color=always" "-x -d"; do
			# shellcheck disable=SC2086
			same_as_dmesg "$T/$f" UTC $args
		done
	done

	# Prefixes that are no valid <N>, read as dmesg reads them both when it
	# uses the priority (-x, -l, -f, colour) and when it does not
	printf '%b' '<6>[    1.000000] valid\n' '<200>[    2.000000] two hundred\n' \
		'<201>[    2.500000] alert level, no facility\n' \
		'<-1>[    3.000000] minus one\n' '<>[    4.000000] empty\n' \
		'< 6>[    6.000000] space before\n' '<abc>[    8.000000] letters\n' \
		'<99999999999999999999>[    9.000000] huge\n' \
		'<1030>[   10.000000] masked to kern.info\n' \
		'<+3>[   11.000000] plus sign\n' '<0>[   12.000000] emerg\n' \
		'<13>[   12.500000] user\n' '<6>[   13.000000] last\n' >"$T/prefix.txt"
	for args in "" -x -t "-x -t" -d "-l info" "-l emerg" "-l alert,err" -k -u \
		"-f kern" "--color=always" "--color=always -x" -r -e; do
		# shellcheck disable=SC2086
		same_as_dmesg "$T/prefix.txt" UTC $args
	done

	# Blank lines after a record keep the indent
	printf '%b' '<6>[    1.000000] x\n\n\n<6>[    2.000000] y\n \n\t\n' \
		'<4>[    3.000000] z\n\n' >"$T/blank.txt"
	for args in "" -x -t -d "-t -d" -e "--color=always"; do
		# shellcheck disable=SC2086
		same_as_dmesg "$T/blank.txt" UTC $args
	done

	# Outside a UTF-8 locale every byte from 0x80 up is escaped, as dmesg
	# does; --noescape passes them
	for loc in LC_ALL=C LC_ALL=POSIX LANG=C ""; do
		for args in "" -x -r -t "--color=always" "-l info" --noescape \
			"-r --noescape"; do
			# shellcheck disable=SC2086
			LOCALE_ENV=$loc same_as_dmesg "$T/basic.txt" UTC $args
		done
	done

	# util-linux 2.39's ranges, against 2.38 given the same levels as a list
	case_ "-l err+ is err and more severe"
	"$KMSG" read -F "$T/basic.txt" -l err+ >"$T/got"
	"$DMESG" -F "$T/basic.txt" -l emerg,alert,crit,err >"$T/want"
	expect_file_eq "$T/want" "$T/got"
	case_ "-l +warn is warn and less severe"
	"$KMSG" read -F "$T/basic.txt" -l +warn >"$T/got"
	"$DMESG" -F "$T/basic.txt" -l warn,notice,info,debug >"$T/want"
	expect_file_eq "$T/want" "$T/got"

	# A bad level or facility is worded as dmesg words it (the same in
	# 2.38 and 2.42): the list from the bad item on; then kmsg says what
	# it takes, on a line of its own
	for args in "-l foo" "-l err,foo,info" "-l err," "-l foo+" \
		"-l 8" "-l 99999999999999999999" "-f bar,user" "-f 24" "-f kern,-1"; do
		case_ "dmesg's words for $args"
		# shellcheck disable=SC2086
		"$DMESG" -F "$T/basic.txt" $args >/dev/null 2>"$T/want"
		# shellcheck disable=SC2086
		"$KMSG" read -F "$T/basic.txt" $args >"$T/out" 2>"$T/err"
		expect_eq 2 $? "status (dmesg's is 1)"
		expect_eq "$(sed 's/^dmesg: /kmsg: /' "$T/want")" "$(head -1 "$T/err")"
		expect_eq "" "$(cat "$T/out")" "stdout"
	done
	# 2.38 has no ranges; 2.42's string_to_bitarray() names "+foo"
	# without its '+'
	case_ "dmesg 2.42's words for -l +foo"
	"$KMSG" read -F "$T/basic.txt" -l +foo 2>&1 >/dev/null | head -1 >"$T/got"
	expect_eq "kmsg: unknown level 'foo'" "$(cat "$T/got")"

	# Wall-clock times around local jumps: DST in Berlin, St John's and Lord
	# Howe (half an hour), the new year; deltas under and over 10 s, a
	# minute boundary, negative and zero deltas, an hour and a day later.
	up=$(cut -d' ' -f1 /proc/uptime)
	boot=$(( $(date +%s) - ${up%.*} ))
	: >"$T/wall.txt"
	i=0
	for anchor in 1901149190 1919293190 1901717990 1899350990 1924988398 1924991998; do
		for off_us in 123456 1500000 9999999 10000001 12500000 35250000 \
			30000000 30000000 69000000 10800000000 14400000000 100800000000; do
			us=$(( (anchor - boot) * 1000000 + off_us ))
			printf '<%d>[%5d.%06d] group %s record %d\n' $(( i % 8 )) \
				$(( us / 1000000 )) $(( us % 1000000 )) "$anchor" $i >>"$T/wall.txt"
			i=$((i + 1))
		done
	done
	for tz in UTC Europe/Berlin America/St_Johns Australia/Lord_Howe Asia/Kolkata; do
		[ "$tz" = UTC ] || [ -e "/usr/share/zoneinfo/$tz" ] || continue
		for args in "" -e -T "-T -d" "--time-format iso" "--color=always -e" \
			"-x -e" -d; do
			# shellcheck disable=SC2086
			same_as_dmesg "$T/wall.txt" "$tz" $args
		done
	done
fi

# ---------------------------------------------------------------------------
# Where dmesg changed since 2.38, kmsg follows util-linux 2.42.  The expected
# bytes are those print_record() and main() of sys-utils/dmesg.c in
# util-linux v2.42.2 print (the installed 2.38 prints the others), with the
# boot time fixed as dmesg's own tests fix it: 1234567890.123456, that is
# 2009-02-13 23:31:30.123456 UTC.

printf '%b' '<6>[    0.000000] zero\n' '<4>[    1.500000] usb 1-1: one and a half\n' \
	'<6>[    2.900000] carry\n' '<3>[   12.750000] twelve\n' \
	'<6>[   12.750001] x\n' >"$T/new.txt"
# new_dmesg ARGS... WANT-LINES...: kmsg read -F new.txt ARGS in UTC prints
# the lines (ARGS is one word, split here).
new_dmesg() {
	local args=$1
	shift
	case_ "as dmesg 2.42: $args"
	# shellcheck disable=SC2086
	TZ=UTC KMSG_TEST_BOOT_TIME=1234567890.123456 \
		"$KMSG" read -F "$T/new.txt" $args >"$T/got" 2>"$T/got.err"
	printf '%s\n' "$@" >"$T/want"
	expect_file_eq "$T/want" "$T/got"
	expect_eq "" "$(cat "$T/got.err")" "stderr"
}

# the boot time's microseconds count (2.39): 0.123456 + 2.9 s is past
# 23:31:33, where 2.38 printed 23:31:32 and ",900000" after the seconds
new_dmesg -T \
	'[Fri Feb 13 23:31:30 2009] zero' \
	'[Fri Feb 13 23:31:31 2009] usb 1-1: one and a half' \
	'[Fri Feb 13 23:31:33 2009] carry' \
	'[Fri Feb 13 23:31:42 2009] twelve' \
	'[Fri Feb 13 23:31:42 2009] x'
new_dmesg '--time-format iso' \
	'2009-02-13T23:31:30,123456+00:00 zero' \
	'2009-02-13T23:31:31,623456+00:00 usb 1-1: one and a half' \
	'2009-02-13T23:31:33,023456+00:00 carry' \
	'2009-02-13T23:31:42,873456+00:00 twelve' \
	'2009-02-13T23:31:42,873457+00:00 x'
# time formats are columns in the order given (2.40), one delta for all
# (0 after the record at 0, as dmesg counts); 2.38 kept the last format,
# and -d made -e the delta format alone and was ignored with iso
new_dmesg '-e -d' \
	'[Feb13 23:31] [    0.000000 <    0.000000>] zero' \
	'[  +0.000000] [    1.500000 <    0.000000>] usb 1-1: one and a half' \
	'[  +1.400000] [    2.900000 <    1.400000>] carry' \
	'[  +9.850000] [   12.750000 <    9.850000>] twelve' \
	'[  +0.000001] [   12.750001 <    0.000001>] x'
new_dmesg '-T -e' \
	'[Fri Feb 13 23:31:30 2009] [Feb13 23:31] zero' \
	'[Fri Feb 13 23:31:31 2009] [  +0.000000] usb 1-1: one and a half' \
	'[Fri Feb 13 23:31:33 2009] [  +1.400000] carry' \
	'[Fri Feb 13 23:31:42 2009] [  +9.850000] twelve' \
	'[Fri Feb 13 23:31:42 2009] [  +0.000001] x'
new_dmesg '--time-format iso -d' \
	'2009-02-13T23:31:30,123456+00:00 [    0.000000 <    0.000000>] zero' \
	'2009-02-13T23:31:31,623456+00:00 [    1.500000 <    0.000000>] usb 1-1: one and a half' \
	'2009-02-13T23:31:33,023456+00:00 [    2.900000 <    1.400000>] carry' \
	'2009-02-13T23:31:42,873456+00:00 [   12.750000 <    9.850000>] twelve' \
	'2009-02-13T23:31:42,873457+00:00 [   12.750001 <    0.000001>] x'
new_dmesg '--time-format raw --time-format ctime --time-format iso' \
	'[    0.000000] [Fri Feb 13 23:31:30 2009] 2009-02-13T23:31:30,123456+00:00 zero' \
	'[    1.500000] [Fri Feb 13 23:31:31 2009] 2009-02-13T23:31:31,623456+00:00 usb 1-1: one and a half' \
	'[    2.900000] [Fri Feb 13 23:31:33 2009] 2009-02-13T23:31:33,023456+00:00 carry' \
	'[   12.750000] [Fri Feb 13 23:31:42 2009] 2009-02-13T23:31:42,873456+00:00 twelve' \
	'[   12.750001] [Fri Feb 13 23:31:42 2009] 2009-02-13T23:31:42,873457+00:00 x'
# the delta format joins the seconds since boot, or else ctime
new_dmesg '--time-format iso --time-format delta --time-format ctime -x' \
	'kern  :info  : 2009-02-13T23:31:30,123456+00:00 [Fri Feb 13 23:31:30 2009 <    0.000000>] zero' \
	'kern  :warn  : 2009-02-13T23:31:31,623456+00:00 [Fri Feb 13 23:31:31 2009 <    0.000000>] usb 1-1: one and a half' \
	'kern  :info  : 2009-02-13T23:31:33,023456+00:00 [Fri Feb 13 23:31:33 2009 <    1.400000>] carry' \
	'kern  :err   : 2009-02-13T23:31:42,873456+00:00 [Fri Feb 13 23:31:42 2009 <    9.850000>] twelve' \
	'kern  :info  : 2009-02-13T23:31:42,873457+00:00 [Fri Feb 13 23:31:42 2009 <    0.000001>] x'
new_dmesg '--time-format delta --time-format raw --time-format ctime' \
	'[    0.000000 <    0.000000>] [Fri Feb 13 23:31:30 2009] zero' \
	'[    1.500000 <    0.000000>] [Fri Feb 13 23:31:31 2009] usb 1-1: one and a half' \
	'[    2.900000 <    1.400000>] [Fri Feb 13 23:31:33 2009] carry' \
	'[   12.750000 <    9.850000>] [Fri Feb 13 23:31:42 2009] twelve' \
	'[   12.750001 <    0.000001>] [Fri Feb 13 23:31:42 2009] x'
# -d joins ctime; each format given once makes one column
new_dmesg '-d -T -d --time-format ctime' \
	'[Fri Feb 13 23:31:30 2009 <    0.000000>] zero' \
	'[Fri Feb 13 23:31:31 2009 <    0.000000>] usb 1-1: one and a half' \
	'[Fri Feb 13 23:31:33 2009 <    1.400000>] carry' \
	'[Fri Feb 13 23:31:42 2009 <    9.850000>] twelve' \
	'[Fri Feb 13 23:31:42 2009 <    0.000001>] x'
# notime leaves no column, or with a delta the delta alone (2.42; 2.38
# printed -T's for -t -T)
new_dmesg '-t -T --time-format iso' zero 'usb 1-1: one and a half' carry twelve x
new_dmesg '-t -e' zero 'usb 1-1: one and a half' carry twelve x
new_dmesg '--time-format delta -t' \
	'[<    0.000000>] zero' '[<    0.000000>] usb 1-1: one and a half' \
	'[<    1.400000>] carry' '[<    9.850000>] twelve' '[<    0.000001>] x'
# raw is the seconds since boot (2.41), a column of its own beside -d's
new_dmesg '--time-format raw -d' \
	'[    0.000000] [    0.000000 <    0.000000>] zero' \
	'[    1.500000] [    1.500000 <    0.000000>] usb 1-1: one and a half' \
	'[    2.900000] [    2.900000 <    1.400000>] carry' \
	'[   12.750000] [   12.750000 <    9.850000>] twelve' \
	'[   12.750001] [   12.750001 <    0.000001>] x'
new_dmesg '-T -t -d' \
	'[<    0.000000>] zero' '[<    0.000000>] usb 1-1: one and a half' \
	'[<    1.400000>] carry' '[<    9.850000>] twelve' '[<    0.000001>] x'
# the time columns in one colour, timebreak's when reltime's is absolute;
# deltas count from the record before, shown or not (2.41)
new_dmesg '-e --time-format raw --color=always -l info' \
	$'\e[32m\e[1m[Feb13 23:31] [    0.000000] \e[0mzero' \
	$'\e[32m[  +1.400000] [    2.900000] \e[0mcarry' \
	$'\e[32m[  +0.000001] [   12.750001] \e[0mx'
new_dmesg '-d -l warn,err' \
	'[    1.500000 <    0.000000>] usb 1-1: one and a half' \
	'[   12.750000 <    9.850000>] twelve'

# ---------------------------------------------------------------------------
# Where kmsg deliberately differs from dmesg 2.38

case_ "-x decodes the local facilities (as dmesg 2.41)"
printf '<150>[    1.000000] local2 info\n' >"$T/local.txt"
"$KMSG" read -F "$T/local.txt" -x >"$T/got"
expect_eq "local2:info  : [    1.000000] local2 info" "$(cat "$T/got")"

case_ "-u includes the local facilities"
expect_eq "[    1.000000] local2 info" "$("$KMSG" read -F "$T/local.txt" -u)"

case_ "carriage return and bidi controls are escaped"
printf '<6>[    1.000000] a\rb \342\200\256x\n' >"$T/cr.txt"
expect_eq '[    1.000000] a\x0db \xe2\x80\xaex' "$("$KMSG" read -F "$T/cr.txt")"

case_ "--noescape passes them"
"$KMSG" read -F "$T/cr.txt" --noescape >"$T/got"
printf '[    1.000000] a\rb \342\200\256x\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "a prefix with no '>' after its number is text (dmesg 2.41)"
printf '<6 >[    7.000000] x\n<6[    5.000000] y\n' >"$T/noclose.txt"
"$KMSG" read -F "$T/noclose.txt" -x >"$T/got"
printf '[    0.000000] 6 >[    7.000000] x\n[    0.000000] 6[    5.000000] y\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"
case_ "a prefix with no '>' at all keeps its text"
"$KMSG" read -F "$T/noclose.txt" -t >"$T/got"
printf 'x\n6[    5.000000] y\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "JSON of text without a priority has no \"pri\""
printf '%b' 'plain text first\n' '<5>[    3.000000] notice\n' >"$T/noprio2.txt"
"$KMSG" read -F "$T/noprio2.txt" -J >"$T/got"
printf '{\n   "dmesg": [\n      {\n         "time":     0.000000,\n         "msg": "plain text first"\n      },{\n         "pri": 5,\n         "time":     3.000000,\n         "msg": "notice"\n      }\n   ]\n}\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "dmesg text from a pipe"
"$KMSG" read -F "$T/basic.txt" -x >"$T/want"
"$KMSG" read -F /dev/stdin -x <"$T/basic.txt" >"$T/got"
expect_file_eq "$T/want" "$T/got"
# shellcheck disable=SC2002 # a pipe, not a file, on purpose
cat "$T/basic.txt" | "$KMSG" read -F /dev/stdin -x >"$T/got"
expect_file_eq "$T/want" "$T/got"

# ---------------------------------------------------------------------------
# What --file refuses, and the bounds on what it reads

case_ "/dev/zero is refused at once, in bounded memory"
start=$(date +%s%N)
kib=$(peak_kib timeout 10 "$KMSG" read -F /dev/zero)
expect_eq "kmsg: /dev/zero: holds only NUL bytes; --file takes a kmsg log, a kmsg dump or dmesg text" "$(cat "$T/err")"
expect_eq "" "$(cat "$T/out")" "output"
small_enough "$kib" 65536
expect_eq 1 "$(( ($(date +%s%N) - start) / 1000000 < 5000 ))" "done within 5 s"
expect_status 1 timeout 10 "$KMSG" read -F /dev/zero

case_ "a 200 MB file of NULs is refused"
truncate -s 200M "$T/zeros"
expect_status 1 "$KMSG" read -F "$T/zeros"
expect_grep "zeros: holds only NUL bytes; --file takes a kmsg log, a kmsg dump or dmesg text" "$T/err"
expect_eq "" "$(cat "$T/out")" "output"

case_ "an executable is refused"
expect_status 1 "$KMSG" read -F "$KMSG"
expect_grep ": is an ELF binary; --file takes" "$T/err"
expect_eq "" "$(cat "$T/out")" "output"

case_ "random bytes are refused, from a file and from a pipe"
head -c 65536 /dev/urandom >"$T/random"
expect_status 1 "$KMSG" read -F "$T/random"
expect_grep "random: is binary data; --file takes" "$T/err"
expect_status 1 sh -c '"$0" read -F - <"$1"' "$KMSG" "$T/random"
expect_grep "^kmsg: standard input: is binary data; --file takes" "$T/err"
expect_eq "" "$(cat "$T/out")" "output"

case_ "compressed text says so"
gzip -c "$T/basic.txt" >"$T/basic.txt.gz"
if command -v xz >/dev/null; then
	xz -c "$T/basic.txt" >"$T/basic.txt.xz"
	expect_status 1 "$KMSG" read -F "$T/basic.txt.xz"
	expect_grep "is xz-compressed (decompress it first)" "$T/err"
fi

case_ "text with a NUL and control bytes in a message is still text"
"$KMSG" read -F "$T/basic.txt" >"$T/want"
expect_grep 'nul \\x00 mid, bell \\x07' "$T/want"
"$KMSG" read -F - <"$T/basic.txt" >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "text that turns binary stops there, after what came before"
# the first 4 KiB block is text, the one with the zeros in it is not
{ cat "$T/basic.txt" "$T/basic.txt" "$T/basic.txt" "$T/basic.txt"
  head -c 100000 /dev/zero; } >"$T/then-zeros"
expect_status 1 "$KMSG" read -F "$T/then-zeros"
expect_grep "then-zeros: is binary data from byte 4096 on, not dmesg text: stopped there" "$T/err"
expect_grep "after an empty message" "$T/out"
expect_status 1 sh -c 'cat "$1" /dev/zero | timeout 10 "$0" read -F -' "$KMSG" "$T/then-zeros"
expect_grep "standard input: .* from byte 4096 on, not dmesg text: stopped there" "$T/err"

case_ "a record longer than 4 MiB is cut short, with a word on stderr"
{ printf '<6>[    1.000000] '; head -c $((64 << 20)) /dev/zero | tr '\0' x
  printf '\n<6>[    2.000000] after the long one\n'; } >"$T/huge.txt"
kib=$(peak_kib "$KMSG" read -F "$T/huge.txt")
expect_eq "kmsg: $T/huge.txt: the record at byte 0 has more than 4 MiB: printed cut short, the rest skipped" "$(cat "$T/err")"
expect_eq 2 "$(wc -l <"$T/out")" "lines"
expect_eq $(( 15 + (4 << 20) - 18 )) "$(head -1 "$T/out" | tr -d '\n' | wc -c)" "first line's length"
expect_eq "[    2.000000] after the long one" "$(tail -1 "$T/out")"
small_enough "$kib" 102400

case_ "a first line of exactly 4 MiB, then a line of the same record (crashed: memcpy of -1 bytes)"
{ printf '[    1.000000] '; head -c $(( (4 << 20) - 15 )) /dev/zero | tr '\0' x
  printf '\n[    2.0] more of it\n'; } >"$T/exact4m.txt"
expect_status 0 "$KMSG" read -F "$T/exact4m.txt"
expect_eq "kmsg: $T/exact4m.txt: the record at byte 0 has more than 4 MiB: printed cut short, the rest skipped" "$(cat "$T/err")"
expect_eq 1 "$(wc -l <"$T/out")" "lines"
expect_status 0 sh -c 'cat "$1" | "$0" read -F -' "$KMSG" "$T/exact4m.txt"
expect_eq 1 "$(wc -l <"$T/out")" "lines"

case_ "a record of more than 65536 lines is cut short"
{ printf '<6>[    1.000000] first\n'; yes ' more' | head -n 70000
  printf '<6>[    2.000000] next\n'; } >"$T/lines.txt"
expect_status 0 "$KMSG" read -F "$T/lines.txt" -x
expect_grep "lines.txt: the record at byte 0 has more than 65536 lines: printed cut short, the rest skipped" "$T/err"
expect_eq 65537 "$(wc -l <"$T/out")" "lines"
expect_eq "kern  :info  : [    2.000000] next" "$(tail -1 "$T/out")"

case_ "-r prints a line of 64 MiB in pieces, as it is"
{ head -c $((64 << 20)) /dev/zero | tr '\0' y; printf '\n<6>[    2.000000] z'; } >"$T/rawline.txt"
kib=$(peak_kib "$KMSG" read -F "$T/rawline.txt" -r)
{ cat "$T/rawline.txt"; echo; } >"$T/want"
expect_file_eq "$T/want" "$T/out"
small_enough "$kib" 102400

# ---------------------------------------------------------------------------
# Standard input and pipes: text, dumps and logs told apart by their bytes

case_ "-F - reads text"
"$KMSG" read -F "$T/basic.txt" -x >"$T/want"
"$KMSG" read -F - -x <"$T/basic.txt" >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "-F - on a terminal is refused"
if command -v script >/dev/null; then
	script -qec "'$KMSG' read -F -" /dev/null >"$T/tty" 2>&1 </dev/null
	expect_grep "kmsg: standard input: is a terminal; --file - reads a kmsg log, a kmsg dump or dmesg text from a pipe" "$T/tty"
fi

case_ "JSON of dmesg text (2.41's schema)"
"$KMSG" read -F "$T/basic.txt" -J >"$T/got"
expect_file_eq "$EXPECTED/read-json.txt" "$T/got"

case_ "JSON with -x names facility and level"
"$KMSG" read -F "$T/basic.txt" -J -x -l err >"$T/got"
expect_file_eq "$EXPECTED/read-json-decode.txt" "$T/got"

case_ "JSON of nothing is an empty document"
printf '' >"$T/empty.txt"
"$KMSG" read -F "$T/empty.txt" -J >"$T/got"
printf '{\n   "dmesg": [\n   ]\n}\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

# ---------------------------------------------------------------------------
# Logs written by kmsg emit

L=$T/log
# shellcheck disable=SC2015 # fail() if any of them fails
"$KMSG" emit -F "$L" -p user.err "an error" &&
"$KMSG" emit -F "$L" -p daemon.warning -t food --field DISH=soup --field HOT=yes "warm" &&
"$KMSG" emit -F "$L" -p local3.info --field DISH=soup "cold soup" &&
"$KMSG" emit -F "$L" -p user.debug "debug" &&
"$KMSG" emit -F "$L" -p auth.crit "critical" &&
printf 'tab\there back\\slash esc\033 caf\303\251 cr\r end\n' | "$KMSG" emit -F "$L" -p user.notice --field 'K=v\x' ||
	fail "kmsg emit failed: the rest of this test needs it"

case_ "default output: since-boot times, one line per record"
"$KMSG" read -F "$L" >"$T/got"
expect_eq 6 "$(wc -l <"$T/got")" "lines"
expect_grep '^\[ *[0-9]*\.[0-9]\{6\}\] an error$' "$T/got"

case_ "-t -x"
"$KMSG" read -F "$L" -t -x >"$T/got"
expect_file_eq "$EXPECTED/read-log-decode.txt" "$T/got"

case_ "a log in the C locale: UTF-8 escaped, JSON kept"
expect_eq 'caf\xc3\xa9' "$(LC_ALL=C "$KMSG" read -F "$L" -t -l notice | grep -o 'caf[^ ]*')"
expect_eq 'caf\xc3\xa9' "$(env -u LC_ALL -u LANG "$KMSG" read -F "$L" -t -l notice | grep -o 'caf[^ ]*')"
expect_eq "$(printf 'caf\303\251')" "$(LC_ALL=C.UTF-8 "$KMSG" read -F "$L" -t -l notice | grep -o 'caf[^ ]*')"
expect_eq "$(printf 'caf\303\251')" "$(LC_ALL=C "$KMSG" read -F "$L" -J -l notice | grep -o 'caf[^ ]*')"

case_ "-o kmsg: /dev/kmsg records, escaped, with fields"
"$KMSG" read -F "$L" -o kmsg | sed 's/^\([0-9]*\),\([0-9]*\),[0-9]*,/\1,\2,TS,/' >"$T/got"
# each record names the numbering its number is of, as kmsg stat does,
# and this boot
id=$("$KMSG" stat -F "$L" | sed -n 's/^numbering: *\([0-9a-f]\{16\}\) since.*/\1/p')
boot=$(tr -d - </proc/sys/kernel/random/boot_id | cut -c1-16)
expect_eq "$(grep -c '^[0-9]' "$T/got")" "$(grep -c "^ _SEQNUM_ID=$id\$" "$T/got")" \
	"records with the numbering's identity $id"
expect_eq "$(grep -c '^[0-9]' "$T/got")" "$(grep -c "^ _BOOT_ID=$boot\$" "$T/got")" \
	"records of this boot"
sed -i -e "s/^ _SEQNUM_ID=$id\$/ _SEQNUM_ID=ID/" -e "s/^ _BOOT_ID=$boot\$/ _BOOT_ID=BOOT/" \
	-e 's/^ _\(REALTIME_NS\|BOOTTIME_NS\|CLAIMED_PID\|CALLER\)=[0-9]*$/ _\1=N/' "$T/got"
expect_file_eq "$EXPECTED/read-kmsg.txt" "$T/got"

case_ "--fields shows fields under their line"
"$KMSG" read -F "$L" -t --fields -l warn >"$T/got"
printf 'food: warm\n DISH=soup\n HOT=yes\n SYSLOG_IDENTIFIER=food\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "-J of a log"
"$KMSG" read -F "$L" -J -l err | sed 's/"time": *[0-9.]*/"time": T/' >"$T/got"
printf '{\n   "dmesg": [\n      {\n         "pri": 11,\n         "time": T,\n         "msg": "an error"\n      }\n   ]\n}\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "-l list"
expect_eq "an error|critical" "$("$KMSG" read -F "$L" -t -l err,crit | paste -sd'|')"
case_ "-l err+ (err and more severe)"
expect_eq "an error|critical" "$("$KMSG" read -F "$L" -t -l err+ | paste -sd'|')"
case_ "-l +info (info and less severe)"
expect_eq "cold soup|debug" "$("$KMSG" read -F "$L" -t -l +info | paste -sd'|')"
case_ "-l by number"
expect_eq "debug" "$("$KMSG" read -F "$L" -t -l 7)"
case_ "-f list"
expect_eq "food: warm|critical" "$("$KMSG" read -F "$L" -t -f daemon,auth | paste -sd'|')"
case_ "-f with -l: both must pass"
expect_eq "critical" "$("$KMSG" read -F "$L" -t -f daemon,auth -l crit)"
case_ "-k: emit never stores kern"
expect_eq "" "$("$KMSG" read -F "$L" -k)"
case_ "-u"
expect_eq 6 "$("$KMSG" read -F "$L" -u | wc -l)"
case_ "--match"
expect_eq "food: warm|cold soup" "$("$KMSG" read -F "$L" -t --match DISH=soup | paste -sd'|')"
case_ "--match twice: both must match"
expect_eq "food: warm" "$("$KMSG" read -F "$L" -t --match DISH=soup --match HOT=yes)"
case_ "--match on a value nobody has"
expect_eq "" "$("$KMSG" read -F "$L" --match DISH=stew)"

case_ "--color=always"
"$KMSG" read -F "$L" -t --color=always -l err >"$T/got"
printf '\033[31man error\033[0m\n' >"$T/want"
expect_file_eq "$T/want" "$T/got"
case_ "--color=never and a pipe: no colour"
"$KMSG" read -F "$L" -l err --color=never >"$T/got"
"$KMSG" read -F "$L" -l err >"$T/got2"
if grep -q $'\033' "$T/got" "$T/got2"; then fail "escape sequences without colour"; else ok; fi

if command -v script >/dev/null; then
	# script(1) gives kmsg a terminal as stdout
	case_ "a terminal gets colour"
	TERM=xterm script -qec "$KMSG read -F $L -t -l err" /dev/null >"$T/got" </dev/null
	expect_grep $'\033\\[31man error' "$T/got"
	case_ "NO_COLOR turns automatic colour off"
	TERM=xterm NO_COLOR=1 script -qec "$KMSG read -F $L -t -l err" /dev/null >"$T/got" </dev/null
	if grep -q $'\033' "$T/got"; then fail "colour despite NO_COLOR"; else ok; fi
	case_ "NO_COLOR does not override --color=always"
	TERM=xterm NO_COLOR=1 script -qec "$KMSG read -F $L -t -l err -L=always" /dev/null >"$T/got" </dev/null
	expect_grep $'\033\\[31m' "$T/got"
	case_ "-H pipes through PAGER on a terminal"
	TERM=xterm PAGER='sed s/^/PAGED:/' script -qec "$KMSG read -F $L -H -l err" /dev/null >"$T/got" </dev/null
	expect_grep '^PAGED:.*an error' "$T/got"
	case_ "-H -P: no pager"
	TERM=xterm PAGER='sed s/^/PAGED:/' script -qec "$KMSG read -F $L -H -P -l err" /dev/null >"$T/got" </dev/null
	if grep -q PAGED "$T/got"; then fail "paged despite -P"; else ok; fi
	case_ "-H uses reltime"
	expect_grep '\[[A-Z][a-z][a-z][ 0-9][0-9] [0-9][0-9]:[0-9][0-9]\]' "$T/got"
fi
case_ "-H without a terminal: no pager, no colour"
PAGER='sed s/^/PAGED:/' "$KMSG" read -F "$L" -H -l err >"$T/got"
if grep -q -e PAGED -e $'\033' "$T/got"; then fail "paged or coloured into a file"; else ok; fi

# ---------------------------------------------------------------------------
# --since and --until

S=$T/times
"$KMSG" emit -F "$S" before
sleep 1
mark=$(date '+%Y-%m-%d %H:%M:%S')
mark_epoch=$(date +%s)
sleep 1
"$KMSG" emit -F "$S" after

case_ "--since an absolute date"
expect_eq "after" "$("$KMSG" read -F "$S" -t --since "$mark")"
case_ "--until an absolute date"
expect_eq "before" "$("$KMSG" read -F "$S" -t --until "$mark")"
case_ "--since @epoch"
expect_eq "after" "$("$KMSG" read -F "$S" -t --since "@$mark_epoch")"
case_ "--since -1h"
expect_eq "before|after" "$("$KMSG" read -F "$S" -t --since -1h | paste -sd'|')"
case_ "--since '1 hour ago'"
expect_eq "before|after" "$("$KMSG" read -F "$S" -t --since '1 hour ago' | paste -sd'|')"
case_ "--until -1h"
expect_eq "" "$("$KMSG" read -F "$S" --until -1h)"
case_ "--until before --since is an error, as in journalctl"
expect_status 2 "$KMSG" read -F "$S" --since now --until yesterday
expect_grep "is before --since" "$T/err"
expect_status 2 "$KMSG" follow -F "$S" --since -1min --until -2min
expect_grep "is before --since" "$T/err"
case_ "--since yesterday --until now"
expect_eq "before|after" "$("$KMSG" read -F "$S" -t --since yesterday --until now | paste -sd'|')"
case_ "--since tomorrow"
expect_eq "" "$("$KMSG" read -F "$S" --since tomorrow)"
case_ "--since +5min (the future)"
expect_eq "" "$("$KMSG" read -F "$S" --since +5min)"
case_ "--since does not show cleared records"
"$KMSG" clear -F "$S"
"$KMSG" emit -F "$S" "after the clear"
expect_eq "after the clear" "$("$KMSG" read -F "$S" -t --since -1h)"
case_ "--since on dmesg text"
# one record at boot, one now; --since half-way between.  The machine may
# have booted seconds ago: no time before boot is assumed to exist.
up=$(cut -d' ' -f1 /proc/uptime)
up=${up%.*}
printf '<6>[    0.000000] old\n<6>[%d.000000] new\n' "$up" >"$T/times.txt"
expect_eq "new" "$("$KMSG" read -F "$T/times.txt" -t --since "-$(( up / 2 ))s")"

case_ "--since after the wall clock was stepped back"
# Written on a machine whose clock was 2 hours slow, then an hour fast,
# then stepped back to the right time: the records of each spell are out
# of order with the next, and a seek by time must find them all.
W=$T/stepped
# ctest names the shim; run by hand, it lies in the binary's build tree.
: "${KMSG_WALLSHIFT:=$(dirname "$KMSG")/tests/libkmsg-wallshift.so}"
[ -f "$KMSG_WALLSHIFT" ] || fail "no wall-clock shim at $KMSG_WALLSHIFT (build tests/wallshift.c)"
shifted() { KMSG_WALL_SHIFT=$1 LD_PRELOAD=$KMSG_WALLSHIFT ASAN_OPTIONS=verify_asan_link_order=0 \
	"$KMSG" emit -F "$W" -t "$2"; }
seq 100 | shifted -7200 slow
seq 100 | shifted 3600 fast
seq 1000 | shifted 0 now
expect_eq "1200" "$("$KMSG" read -F "$W" | wc -l)" "records written"
expect_eq "100 fast" "$("$KMSG" read -F "$W" --since +30min -t | cut -d: -f1 | uniq -c | sed 's/^ *//')"
expect_eq "100 fast|1000 now" \
	"$("$KMSG" read -F "$W" --since -30min -t | cut -d: -f1 | uniq -c | sed 's/^ *//' | paste -sd'|')"
expect_eq "100 slow|100 fast|1000 now" \
	"$("$KMSG" read -F "$W" --since -3h -t | cut -d: -f1 | uniq -c | sed 's/^ *//' | paste -sd'|')"
expect_eq "100 fast" "$("$KMSG" read -F "$W" --since +30min --until +2h -t | cut -d: -f1 | uniq -c | sed 's/^ *//')"
case_ "--since after the clock stepped back: follow starts at the same place"
expect_eq "100" "$(timeout 2 "$KMSG" follow -F "$W" --since +30min -t | wc -l)"

# ---------------------------------------------------------------------------
# Read-clear and clear

C=$T/clear
printf 'one\ntwo\n' | "$KMSG" emit -F "$C"
case_ "-c prints"
expect_eq "one|two" "$("$KMSG" read -F "$C" -t -c | paste -sd'|')"
case_ "-c cleared what it printed"
expect_eq "" "$("$KMSG" read -F "$C")"
case_ "a record written after -c shows"
"$KMSG" emit -F "$C" three
expect_eq "three" "$("$KMSG" read -F "$C" -t)"
case_ "-C clears without printing"
expect_status 0 "$KMSG" read -F "$C" -C
expect_eq "" "$(cat "$T/out")"
expect_eq "" "$("$KMSG" read -F "$C")"

case_ "-c in a loop while two writers emit: every record read exactly once"
R=$T/race
"$KMSG" emit -F "$R" --log-size 4M start
( for i in $(seq 1 40); do seq $(( (i - 1) * 100 + 1 )) $(( i * 100 )) | "$KMSG" emit -F "$R"; done ) &
writer1=$!
( for i in $(seq 1 40); do seq $(( (i - 1) * 100 + 1 )) $(( i * 100 )) | sed s/^/b/ | "$KMSG" emit -F "$R"; done ) &
writer2=$!
: >"$T/collected"
while kill -0 $writer1 2>/dev/null || kill -0 $writer2 2>/dev/null; do
	"$KMSG" read -F "$R" -t -c >>"$T/collected"
done
wait $writer1 $writer2
"$KMSG" read -F "$R" -t -c >>"$T/collected"
# sorted, duplicates kept: a record read twice shows as a repeated line
grep -v start "$T/collected" | sort >"$T/got"
{ seq 1 4000; seq 1 4000 | sed s/^/b/; } | sort >"$T/want"
expect_file_eq "$T/want" "$T/got"

# ---------------------------------------------------------------------------
# Gaps, pipes, errors

case_ "damaged records are reported, not hidden"
D=$T/damaged
printf 'first\nsecond-marker\nthird\n' | "$KMSG" emit -F "$D"
off=$(grep -obUa 'second-marker' "$D" | head -1 | cut -d: -f1)
printf 'X' | dd of="$D" bs=1 seek="$off" conv=notrunc status=none
"$KMSG" read -F "$D" -t >"$T/got" 2>"$T/err"
expect_eq "first|third" "$(paste -sd'|' "$T/got")"
expect_eq "kmsg: 1 damaged record skipped before seq 3" "$(cat "$T/err")"

case_ "an append that never finished is reported as such, not as damage or overtaking"
U=$T/unfinished
printf 'a\nb\nc\n' | "$KMSG" emit -F "$U"
# The second record (72 bytes from the data's start, at 256) given up:
# its tag (header bytes 16..23, kmsg(5)) in the state HOLE, 2, as an
# evictor leaves the block of a writer that died before its commit.
printf '\112' | dd of="$U" bs=1 seek=$((256 + 72 + 16)) conv=notrunc status=none
"$KMSG" read -F "$U" -t >"$T/got" 2>"$T/err"
expect_eq "a|c" "$(paste -sd'|' "$T/got")"
expect_eq "kmsg: 1 unfinished record skipped before seq 3: the writer died, or was stopped and wrote it again later" "$(cat "$T/err")"

case_ "a flipped byte in the header: read recovers every record from its copy"
H=$T/flipped
seq 1 300 | "$KMSG" emit -F "$H" --log-size 64K
sum=$(cksum <"$H")
"$KMSG" read -F "$H" -t >"$T/want"
printf '\377' | dd of="$H" bs=1 seek=44 conv=notrunc status=none
sum=$(cksum <"$H")
"$KMSG" read -F "$H" -t >"$T/got" 2>"$T/err"
expect_eq 0 $? "exit status (stderr: $(head -c 200 "$T/err"))"
expect_file_eq "$T/want" "$T/got"
expect_eq "$sum" "$(cksum <"$H")" "a reader leaves the file as it is"
"$KMSG" stat -F "$H" >"$T/out" 2>&1
expect_grep "^records: *300$" "$T/out"

case_ "a cut-short log: read says so, and stat and read agree"
X=$T/cutshort
seq 1 20000 | "$KMSG" emit -F "$X" --log-size 1M
truncate -s 300000 "$X"
n=$("$KMSG" read -F "$X" -t 2>"$T/err" | wc -l)
expect_grep "cut short: the file has 300000 of the 1048576 bytes" "$T/err"
expect_grep "damaged records skipped at the end" "$T/err"
"$KMSG" stat -F "$X" >"$T/out" 2>/dev/null
expect_grep "of which $n readable" "$T/out"
missing=$(sed -n 's/kmsg: \([0-9]*\) damaged records skipped at the end.*/\1/p' "$T/err")
total=$(sed -n 's/^records: *\([0-9]*\),.*/\1/p' "$T/out")
expect_eq "$total" $(( n + missing )) "readable + reported = stat's records"
"$KMSG" emit -F "$X" "after the repair"
"$KMSG" stat -F "$X" >"$T/out"
expect_grep "^damaged: *$missing$" "$T/out"

case_ "a repaired cut-short log is whole again: counted once, no rebuild at every open"
Y=$T/repaired
seq 1 2000 | "$KMSG" emit -F "$Y" --log-size 64K
truncate -s 8192 "$Y"
"$KMSG" emit -F "$Y" "the repair"
d1=$("$KMSG" stat -F "$Y" | sed -n 's/^damaged: *//p')
for i in 1 2 3; do "$KMSG" read -F "$Y" -c >/dev/null 2>"$T/err$i"; done
"$KMSG" clear -F "$Y"
expect_eq "$d1" "$("$KMSG" stat -F "$Y" | sed -n 's/^damaged: *//p')" "damaged after reads and a clear"
expect_grep "damaged records skipped" "$T/err1"
expect_eq "" "$(cat "$T/err2" "$T/err3")" "the gap said again by later read -c"
# twenty writers at once: none waits for a rebuild, none fails
for i in $(seq 20); do "$KMSG" emit -F "$Y" "w$i" & done 2>"$T/err"; wait
expect_eq "" "$(cat "$T/err")" "writers' errors"
expect_eq 20 "$("$KMSG" read -F "$Y" -t | grep -c '^w[0-9]*$')" "records of the twenty"

case_ "one flipped byte in the clear mark hides nothing"
Z=$T/clearflip
seq 1 100 | "$KMSG" emit -F "$Z" --log-size 64K
printf '\377' | dd of="$Z" bs=1 seek=161 conv=notrunc status=none
expect_eq 100 "$("$KMSG" read -F "$Z" | wc -l)" "records shown by a reader"
"$KMSG" emit -F "$Z" "after"
expect_eq 101 "$("$KMSG" read -F "$Z" | wc -l)" "records shown after a writer came"

case_ "a log whose first bytes are zeroed is read through its copy"
M=$T/nomagic
seq 1 100 | "$KMSG" emit -F "$M" --log-size 64K
dd if=/dev/zero of="$M" bs=128 count=1 conv=notrunc status=none
expect_eq 100 "$("$KMSG" read -F "$M" | wc -l)" "records"
expect_grep "^records: *100$" <("$KMSG" stat -F "$M")

case_ "a closed pipe (| head) is a quiet exit 0"
P=$T/pipe
seq 1 50000 | "$KMSG" emit -F "$P" --log-size 8M
"$KMSG" read -F "$P" 2>"$T/err" | head -1 >/dev/null
expect_eq "0" "${PIPESTATUS[0]}" "exit status"
expect_eq "" "$(cat "$T/err")" "stderr"

if [ -w /dev/full ]; then
	case_ "a full disk is an error"
	"$KMSG" read -F "$P" >/dev/full 2>"$T/err"
	expect_eq 1 $? "exit status"
	expect_grep "kmsg: write error: No space left on device" "$T/err"
fi

case_ "a missing log"
expect_status 1 "$KMSG" read -F "$T/nonexistent"
expect_grep "no such log" "$T/err"
case_ "a missing default log"
expect_status 1 env KMSG_FILE="$T/nope" "$KMSG" read
expect_grep "nope" "$T/err"
if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
	case_ "an unreadable log"
	cp "$L" "$T/secret"
	chmod 000 "$T/secret"
	chmod 755 "$T"
	if [ "$(id -u)" = 0 ]; then
		# root reads anything: be nobody
		expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups \
			"$KMSG" read -F "$T/secret"
	else
		expect_status 1 "$KMSG" read -F "$T/secret"
	fi
	chmod 700 "$T"
	expect_grep "permission denied" "$T/err"
fi
case_ "-c on dmesg text cannot clear"
expect_status 1 "$KMSG" read -F "$T/basic.txt" -c
expect_grep "cannot be cleared" "$T/err"
case_ "a gzip file that is no dump"
echo hello | gzip >"$T/notadump.gz"
expect_status 1 "$KMSG" read -F "$T/notadump.gz"
expect_grep "notadump.gz" "$T/err"
if "$KMSG" dump -F "$L" >"$T/dump.gz" 2>/dev/null && [ -s "$T/dump.gz" ]; then
	case_ "a dump reads as its log"
	"$KMSG" read -F "$L" >"$T/want"
	"$KMSG" read -F "$T/dump.gz" >"$T/got"
	expect_file_eq "$T/want" "$T/got"

	case_ "a dump through a pipe reads as its log (-F - and -F /dev/stdin)"
	"$KMSG" dump -F "$L" | "$KMSG" read -F - >"$T/got"
	expect_eq 0 "${PIPESTATUS[1]}" "read's status"
	expect_file_eq "$T/want" "$T/got"
	"$KMSG" dump -F "$L" | "$KMSG" read -F /dev/stdin >"$T/got"
	expect_file_eq "$T/want" "$T/got"
	"$KMSG" read -F - <"$T/dump.gz" >"$T/got"
	expect_file_eq "$T/want" "$T/got"
	"$KMSG" dump -F "$L" | "$KMSG" read -F - -J -x >"$T/got"
	"$KMSG" read -F "$L" -J -x >"$T/want-json"
	expect_file_eq "$T/want-json" "$T/got"

	case_ "a dump cut short on a pipe is refused"
	head -c 300 "$T/dump.gz" | "$KMSG" read -F - >"$T/got" 2>"$T/err"
	expect_eq 1 "${PIPESTATUS[1]}" "read's status"
	expect_grep "^kmsg: standard input: damaged or incomplete dump; to read the records" \
		"$T/err"
	expect_eq "" "$(cat "$T/got")" "output"
fi

case_ "a log through a pipe reads as the log"
"$KMSG" read -F "$L" >"$T/want"
# shellcheck disable=SC2002 # a pipe, not a file, on purpose
cat "$L" | "$KMSG" read -F - >"$T/got"
expect_file_eq "$T/want" "$T/got"
"$KMSG" read -F - <"$L" >"$T/got"
expect_file_eq "$T/want" "$T/got"

case_ "a log cut short on a pipe is refused"
head -c 8192 "$L" | "$KMSG" read -F - >"$T/got" 2>"$T/err"
expect_eq 1 "${PIPESTATUS[1]}" "read's status"
expect_eq "kmsg: standard input: a damaged log, or one cut short (its header claims more bytes than arrived)" "$(cat "$T/err")"

case_ "a log on a pipe cannot be cleared"
expect_status 1 sh -c '"$0" read -F - -c <"$1"' "$KMSG" "$L"
expect_grep "kmsg: standard input: is a copy of a log, which cannot be cleared" "$T/err"

case_ "read -F - and -K - from a live pipe print each record as the next one comes"
# not when the input ends (it waited for a whole first block, then for
# its output buffer to fill)
( printf '<6>[    1.000000] first\n<6>[    2.000000] second\n'; sleep 4 ) |
	"$KMSG" read -F - >"$T/live" 2>&1 &
wait_for "first" "$T/live" 2 || fail "-F -: nothing printed 2 s into a live pipe"
( printf '6,1,5,-;one\n6,2,6,-;two\n'; sleep 4 ) | "$KMSG" read -K - >"$T/livek" 2>&1 &
wait_for "one" "$T/livek" 2 || fail "-K -: nothing printed 2 s into a live pipe"
wait
expect_eq "first|second" "$(sed 's/.*] //' "$T/live" | paste -sd'|')"
expect_eq "one|two" "$(sed 's/.*] //' "$T/livek" | paste -sd'|')"

case_ "-n counts lines: a message written in parts is one, shown whole"
# (the last N record numbers held only the message's last part)
"$KMSG" emit -F "$T/parts" --max-text 64 "first message"
head -c 200 /dev/zero | tr '\0' y | "$KMSG" emit -F "$T/parts" --split
"$KMSG" read -F "$T/parts" -t -n 1 >"$T/out"
expect_eq 200 "$(tr -d '\n' <"$T/out" | wc -c)" "read -n 1: the whole message"
"$KMSG" read -F "$T/parts" -t -n 2 >"$T/out"
expect_eq "first message" "$(head -1 "$T/out")" "read -n 2"
timeout 1 "$KMSG" follow -F "$T/parts" -t -n 1 >"$T/out"
expect_eq 200 "$(tr -d '\n' <"$T/out" | wc -c)" "follow -n 1: the whole message"

case_ "bad usage exits 2"
expect_status 2 "$KMSG" read --no-such-option
expect_status 2 "$KMSG" read -F "$L" extra
expect_status 2 "$KMSG" read -F "$L" -r -T
expect_grep "cannot be used with --ctime" "$T/err"
expect_status 2 "$KMSG" read -F "$L" -l bogus
expect_grep "bogus" "$T/err"
expect_status 2 "$KMSG" read -F "$L" -f nofacility
expect_status 2 "$KMSG" read -F "$L" --time-format week
expect_status 2 "$KMSG" read -F "$L" -o xml
expect_status 2 "$KMSG" read -F "$L" --color=sometimes
expect_status 2 "$KMSG" read -F "$L" --match lower=x
expect_status 2 "$KMSG" read -F "$L" --since "next tuesday-ish"
expect_status 2 "$KMSG" read -F "$L" -c -C
case_ "a log truncated while it is read: an error that says so, not a crash"
C=$T/cutread
seq 1 300000 | "$KMSG" emit -F "$C" --log-size 16M
( "$KMSG" read -F "$C" 2>"$T/cut.err"; echo "status $?" >>"$T/cut.err" ) |
	( head -c 65536 >/dev/null; echo >"$T/cut.begun"; sleep 1; cat >/dev/null ) &
rpid=$!
wait_for "" "$T/cut.begun"  # the reader is in the middle of the log
truncate -s 8192 "$C"
wait $rpid
expect_grep "^status 1$" "$T/cut.err"
expect_grep "cut short while it was read: another process truncated the file to 8192 bytes" "$T/cut.err"

case_ "dmesg's -w points to kmsg follow"
expect_status 2 "$KMSG" read -F "$L" -w
expect_grep "kmsg follow" "$T/err"

case_ "the options listed for completions"
"$KMSG" options read >"$T/got"
expect_grep '^-F --file arg$' "$T/got"
expect_grep '^-c --read-clear -$' "$T/got"

finish
