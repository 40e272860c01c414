#!/bin/bash
# clear.sh - kmsg clear as users run it: what read and follow show after
# it, what it refuses and why.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
printf 'old one\nold two\n' | "$KMSG" emit -F "$L" ||
	fail "kmsg emit failed: the rest of this test needs it"

case_ "clear, then read shows nothing"
expect_status 0 "$KMSG" clear -F "$L"
expect_eq "" "$(cat "$T/out")" "clear's output"
expect_eq "" "$("$KMSG" read -F "$L")"

case_ "records written after a clear show"
"$KMSG" emit -F "$L" "new one"
expect_eq "new one" "$("$KMSG" read -F "$L" -t)"

case_ "clearing again keeps nothing"
"$KMSG" clear -F "$L"
"$KMSG" clear -F "$L"
expect_eq "" "$("$KMSG" read -F "$L")"
"$KMSG" emit -F "$L" "newer"
expect_eq "newer" "$("$KMSG" read -F "$L" -t)"

case_ "KMSG_FILE names the log when --file does not"
KMSG_FILE=$L "$KMSG" clear
expect_eq "" "$("$KMSG" read -F "$L")"

case_ "read -C is clear"
"$KMSG" emit -F "$L" "to be cleared"
expect_status 0 "$KMSG" read -F "$L" -C
expect_eq "" "$("$KMSG" read -F "$L")"

case_ "a missing log"
expect_status 1 "$KMSG" clear -F "$T/nonexistent"
expect_grep "no such log" "$T/err"
[ -e "$T/nonexistent" ] && fail "clear created a log"

case_ "dmesg text cannot be cleared"
printf '<6>[    1.000000] text\n' >"$T/text.txt"
expect_status 1 "$KMSG" clear -F "$T/text.txt"
expect_grep "cannot be cleared" "$T/err"

case_ "a dump cannot be cleared"
echo x | gzip >"$T/d.gz"
expect_status 1 "$KMSG" clear -F "$T/d.gz"
expect_grep "kmsg dump, which cannot be cleared" "$T/err"

# as_user CMD...: runs CMD as an unprivileged user (root is let write
# anything), or as ourselves when we are not root
as_user() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups "$@"
	else
		"$@"
	fi
}
if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
	case_ "clearing needs write permission"
	chmod 755 "$T"
	"$KMSG" emit -F "$L" "kept"
	chmod 444 "$L"
	expect_status 1 as_user "$KMSG" clear -F "$L"
	expect_grep "permission denied" "$T/err"
	expect_eq "kept" "$("$KMSG" read -F "$L" -t)"
	case_ "read -c needs it too, and prints nothing without it"
	expect_status 1 as_user "$KMSG" read -F "$L" -c
	expect_eq "" "$(cat "$T/out")"
	expect_grep "permission denied" "$T/err"
	case_ "reading needs read permission only"
	expect_status 0 as_user "$KMSG" read -F "$L" -t
	expect_eq "kept" "$(cat "$T/out")"
	chmod 644 "$L"
	chmod 700 "$T"
fi

case_ "bad usage"
expect_status 2 "$KMSG" clear --bogus
expect_status 2 "$KMSG" clear -F "$L" extra

finish
