#!/bin/sh
# torn.sh KMSG KMSG_TORN - power-cut images of logs that kmsg emit wrote:
# a small ring, 1000 images, and a larger one with many pages, 200 images.
# kmsg-torn (tests/torn.c) does the damage and the checks; this script
# makes real logs for it and asserts its figures.
set -eu
KMSG=$1 TORN=$2
T=$(mktemp -d "${TMPDIR:-/tmp}/kmsg-torn-sh-XXXXXX")
trap 'rm -rf "$T"' EXIT

# Lines of every length up to a few hundred bytes, several priorities,
# and fields, as scripts write them.
awk 'BEGIN { for (i = 0; i < 3000; i++) { s = "line " i " "; for (k = 0; k < i % 211; k++) s = s "x"; print s } }' >"$T/lines"
"$KMSG" emit -F "$T/small" --log-size 64K -f "$T/lines"
"$KMSG" emit -F "$T/small" --log-size 64K -p daemon.err -t torn --field=TORN_RUN=1 "last words"
"$KMSG" emit -F "$T/large" --log-size 4M -f "$T/lines"

status=0
check() { # check LOG IMAGES
	"$TORN" --images "$2" "$1" >"$T/out" || status=1
	cat "$T/out"
	grep -qx "images=$2" "$T/out" || { echo "torn.sh: not all $2 images ran" >&2; status=1; }
	grep -qx "failed=0" "$T/out" || status=1
	# the checks must have had records to check
	grep -q '^untouched_recovered=[1-9]' "$T/out" || { echo "torn.sh: no record recovered" >&2; status=1; }
	grep -q '^cut_short=[1-9]' "$T/out" || { echo "torn.sh: no image was cut short" >&2; status=1; }
}
check "$T/small" 1000
check "$T/large" 200
exit $status
