#!/bin/bash
# sudo.sh - read -H's pager with privileges the user lacks (sudo kmsg read,
# as SUDO_UID, SUDO_USER or PKEXEC_UID say): PAGER is not run, no less
# found on PATH either, and /usr/bin/less runs in its secure mode (seen in
# its environment while it runs, and by its ! command, which must not run
# a shell), on a terminal script(1) gives.  Without them, the user's PAGER
# and less run as before: the same steps then show what the privileged
# run must not do.
. "$(dirname "$0")/lib.sh.inc"

if ! command -v script >/dev/null || [ ! -x /usr/bin/less ]; then
	echo "sudo.sh: skipped: needs script(1) and /usr/bin/less"
	exit 0
fi

RAW=$T/long.txt
for i in $(seq 1 300); do printf '[%5d.000000] line %d of a long log\n' "$i" "$i"; done >"$RAW"
mkdir "$T/bin"
# a PAGER, a less first on PATH and an input preprocessor: each leaves a
# mark if it runs, and shows the text so that the run goes on
for f in pager less lessopen; do
	printf '#!/bin/sh\n: >"%s/%s-ran"\n' "$T" "$f" >"$T/bin/$f"
	chmod +x "$T/bin/$f"
done
printf 'exec cat\n' >>"$T/bin/pager"
printf 'exec cat\n' >>"$T/bin/less"

# descendants PID: the processes under PID, one a line
descendants() {
	local c
	for c in $(pgrep -P "$1"); do
		echo "$c"
		descendants "$c"
	done
}

# keys FORMAT ARGS...: typed on the terminal (nothing once it is gone)
keys() { (printf "$@" >&3) 2>/dev/null; }

# paged ENV...: kmsg read -H of the long log with ENV, on a terminal, with
# PAGER (PAGER_FOR_TEST if set, none if that is "unset"), PATH and
# LESSOPEN pointing at the marks; while the pager runs, its environment
# goes to $T/env (none if no less ran), then it is sent "!" and a shell
# command that would leave $T/shell-ran, then q
paged() {
	local pager=(PAGER="$T/bin/pager")
	case ${PAGER_FOR_TEST-default} in
	default) ;;
	unset) pager=(-u PAGER) ;;
	*) pager=(PAGER="$PAGER_FOR_TEST") ;;
	esac
	rm -f "$T"/*-ran "$T/env" "$T/keys"
	mkfifo "$T/keys"
	env "${pager[@]}" "$@" PATH="$T/bin:$PATH" \
		LESSOPEN="|-$T/bin/lessopen %s" TERM=xterm \
		script -qfc "'$KMSG' read -F '$RAW' -H" /dev/null <"$T/keys" >"$T/tty" 2>&1 &
	local spid=$! lpid= i
	exec 3>"$T/keys"
	for ((i = 0; i < 200; i++)); do
		for p in $(descendants $spid); do
			if [ "$(cat /proc/"$p"/comm 2>/dev/null)" = less ]; then
				lpid=$p
			fi
		done
		[ -n "$lpid" ] && grep -q 'line 2 of' "$T/tty" && break
		{ [ -e "$T/pager-ran" ] || [ -e "$T/less-ran" ]; } && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	if [ -n "$lpid" ]; then
		tr '\0' '\n' <"/proc/$lpid/environ" >"$T/env" 2>/dev/null
		keys '!: >%s/shell-ran\r' "$T"
		sleep 0.5
		keys '\rq'
		sleep 0.3
		keys 'q'
	fi
	exec 3>&-
	for ((i = 0; i < 100; i++)); do
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 $spid 2>/dev/null; then
		fail "the pager did not quit: $(tail -c 200 "$T/tty" | cat -v)"
		kill $spid 2>/dev/null
	fi
	wait $spid 2>/dev/null
}

# ran WHAT: 0 if WHAT's mark is there
ran() { [ -e "$T/$1-ran" ]; }

case_ "as the user: PAGER runs"
paged
ran pager && ok || fail "PAGER did not run: the test cannot see a pager run"

case_ "as the user: the less on PATH runs"
PAGER_FOR_TEST=unset paged
ran less && ok || fail "the less first on PATH did not run"

case_ "as the user: the system's less runs its ! command"
# (PATH without the test's less: what the privileged run takes)
rm "$T/bin/less"
PAGER_FOR_TEST=unset paged
[ -s "$T/env" ] || fail "no less ran"
ran shell && ok || fail "less's ! did not run: the test cannot see a shell run"
cp "$T/bin/pager" "$T/bin/less"

for who in SUDO_UID=1000 SUDO_USER=someone PKEXEC_UID=1000; do
	case_ "with $who: PAGER, PATH's less and LESSOPEN are not run"
	paged "$who" LESSSECURE_ALLOW=shell,pipe LESSKEYIN="$T/lesskey"
	ran pager && fail "PAGER ran"
	ran less && fail "the less on PATH ran"
	ran lessopen && fail "LESSOPEN ran"
	ok

	case_ "with $who: /usr/bin/less in its secure mode, and its ! refused"
	if [ -s "$T/env" ]; then
		expect_grep '^LESSSECURE=1$' "$T/env"
		expect_grep '^LESS=FRSX$' "$T/env"
		expect_grep '^LESSKEYIN=/dev/null$' "$T/env"
		grep -q '^LESSOPEN=' "$T/env" && fail "LESSOPEN reached less"
		grep -q '^LESSSECURE_ALLOW=' "$T/env" && fail "LESSSECURE_ALLOW reached less"
		ran shell && fail "less's ! ran a shell"
		ok
	else
		fail "no less ran: $(tail -c 200 "$T/tty" | cat -v)"
	fi
done

case_ "with SUDO_UID, no PAGER and the system's less first on PATH: its secure mode"
# where the user's own run above ran less's ! command
mv "$T/bin/less" "$T/bin/not-less"
PAGER_FOR_TEST=unset paged SUDO_UID=1000
mv "$T/bin/not-less" "$T/bin/less"
expect_grep '^LESSSECURE=1$' "$T/env"
ran shell && fail "less's ! ran a shell"
ran lessopen && fail "LESSOPEN ran"

case_ "with SUDO_UID and PAGER=cat or empty: no pager"
for p in cat ''; do
	PAGER_FOR_TEST=$p paged SUDO_UID=1000
	[ -s "$T/env" ] && fail "a less ran with PAGER='$p'"
	expect_grep 'line 300 of' "$T/tty"
done

echo "sudo: $passed passed, $failed failed"
[ "$failed" = 0 ]
