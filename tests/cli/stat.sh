#!/bin/bash
# stat.sh - kmsg stat as users run it: the fields after some records, the
# JSON object, a dump's state, read permission only, and its errors.
. "$(dirname "$0")/lib.sh.inc"

L=$T/log
# value KEY: the value of "KEY:" in $T/out
value() { sed -n "s/^$1: *//p" "$T/out"; }
# jvalue KEY: the value of "KEY" in the JSON object in $T/out
jvalue() { sed -n "s/.*\"$1\":\([^,}]*\).*/\1/p" "$T/out"; }

case_ "a new log"
"$KMSG" emit -F "$L" --log-size 64K "first" ||
	fail "kmsg emit failed: the rest of this test needs it"
expect_status 0 "$KMSG" stat -F "$L"
expect_eq "$L" "$(value path)"
expect_eq "65536 (64.0 KiB)" "$(value 'file size')"
expect_eq "61056 (59.6 KiB)" "$(value 'data size')"
expect_eq "1024" "$(value 'max text')"
expect_eq "1" "$(value records)"
expect_eq "1" "$(value oldest)"
expect_eq "1" "$(value newest)"
expect_eq "2" "$(value next)"
expect_eq "0" "$(value evicted)"
expect_eq "0" "$(value damaged)"
expect_eq "0" "$(value unfinished)"
expect_grep '^ring id: *[0-9a-f]\{32\}$' "$T/out"
expect_grep "^created: *$(date -u +%Y-%m-%d)T[0-9:]*+00:00$" "$T/out"
expect_grep '^used: *72 bytes (0\.1%)$' "$T/out"
# aligned: every value starts in the same column
expect_eq "1" "$(awk -F': *' '{ print index($0, $2) }' "$T/out" | sort -u | wc -l)" "value columns"

case_ "after many records: evictions, clear"
seq -f 'record number %g with some text to fill the ring' 1 3000 | "$KMSG" emit -F "$L"
"$KMSG" clear -F "$L"
"$KMSG" emit -F "$L" "after the clear"
expect_status 0 "$KMSG" stat -F "$L"
expect_eq "3002" "$(value newest)"
expect_eq "3003" "$(value next)"
expect_eq "below 3002" "$(value cleared)"
oldest=$(value oldest) evicted=$(value evicted) records=$(value records)
expect_eq "3002" "$((oldest + records - 1))" "oldest + records - 1"
expect_eq "$((oldest - 1))" "$evicted" "evicted"
[ "$evicted" -gt 0 ] || fail "the ring did not wrap"

case_ "--json"
expect_status 0 "$KMSG" stat -F "$L" --json
expect_eq "1" "$(wc -l <"$T/out" | tr -d ' ')" "lines"
expect_eq "\"$L\"" "$(jvalue path)"
expect_eq '"log"' "$(jvalue kind)"
expect_eq "65536" "$(jvalue file_size)"
expect_eq "$records" "$(jvalue records)"
expect_eq "$oldest" "$(jvalue first_seq)"
expect_eq "3002" "$(jvalue last_seq)"
expect_eq "3003" "$(jvalue next_seq)"
expect_eq "3002" "$(jvalue clear_seq)"
expect_eq "$evicted" "$(jvalue evicted)"
if command -v python3 >/dev/null; then
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["records"] > 0 and len(d["ring_id"]) == 32' "$T/out" ||
		fail "--json is not the JSON expected"
fi

case_ "a dump: the same records, numbers and ring id"
"$KMSG" stat -F "$L" --json >"$T/log.json"
"$KMSG" dump -F "$L" -o "$T/d.gz" || fail "kmsg dump failed"
expect_status 0 "$KMSG" stat -F "$T/d.gz" --json
expect_eq '"dump"' "$(jvalue kind)"
for k in ring_id created_ns records first_seq last_seq next_seq clear_seq evicted max_text \
	 seqnum_id seqnum_id_since prev_seqnum_id; do
	expect_eq "$(sed -n "s/.*\"$k\":\([^,}]*\).*/\1/p" "$T/log.json")" "$(jvalue $k)" "$k"
done

case_ "the numbering's identity: shown, and the same in every record"
"$KMSG" stat -F "$L" >"$T/out"
id=$(sed -n 's/^numbering: *\([0-9a-f]\{16\}\) since [0-9]*$/\1/p' "$T/out")
[ -n "$id" ] && ok || fail "no numbering line: $(cat "$T/out")"
expect_eq "\"$id\"" "$(sed -n 's/.*"seqnum_id":\("[^"]*"\).*/\1/p' "$T/log.json")" "in --json"
expect_eq 0 "$("$KMSG" read -F "$L" -o kmsg | grep '^ _SEQNUM_ID=' | grep -vc "=$id\$")" \
	"records of another numbering"

case_ "a dump through a pipe (-F -)"
"$KMSG" dump -F "$L" | "$KMSG" stat -F - --json >"$T/out"
expect_eq "0" "${PIPESTATUS[1]}" "stat's status"
expect_eq '"dump"' "$(jvalue kind)"
for k in ring_id records first_seq next_seq; do
	expect_eq "$(sed -n "s/.*\"$k\":\([^,}]*\).*/\1/p" "$T/log.json")" "$(jvalue $k)" "$k"
done

case_ "a log through a pipe (-F -)"
# shellcheck disable=SC2002 # a pipe, not a file, on purpose
cat "$L" | "$KMSG" stat -F - --json >"$T/out"
expect_eq '"log"' "$(jvalue kind)"
for k in ring_id file_size records first_seq next_seq clear_seq evicted; do
	expect_eq "$(sed -n "s/.*\"$k\":\([^,}]*\).*/\1/p" "$T/log.json")" "$(jvalue $k)" "$k"
done
head -c 4096 "$L" | "$KMSG" stat -F - >"$T/out" 2>"$T/err"
expect_grep "^kmsg: standard input: a damaged log, or one cut short" "$T/err"

case_ "binary input is refused"
expect_status 1 "$KMSG" stat -F /dev/zero
expect_eq "kmsg: /dev/zero: holds only NUL bytes; --file takes a kmsg log or a kmsg dump" "$(cat "$T/err")"

case_ "an empty log"
"$KMSG" emit -F "$T/empty" --log-size 16K -p user.info "x" >/dev/null 2>&1
"$KMSG" clear -F "$T/empty"
expect_status 0 "$KMSG" stat -F "$T/empty"
expect_eq "1" "$(value records)"
expect_eq "below 2" "$(value cleared)"

case_ "read permission is enough"
chmod 0444 "$L"
expect_status 0 "$KMSG" stat -F "$L"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 0644 "$L"; chmod 0755 "$T"
	expect_status 0 setpriv --reuid=65534 --regid=65534 --clear-groups "$KMSG" stat -F "$L"
	expect_eq "3002" "$(value newest)"
	chmod 0600 "$L"
	expect_status 1 setpriv --reuid=65534 --regid=65534 --clear-groups "$KMSG" stat -F "$L"
	expect_grep "permission denied" "$T/err"
fi

case_ "a missing log"
expect_status 1 "$KMSG" stat -F "$T/nonexistent"
expect_grep "^kmsg: $T/nonexistent: no such log" "$T/err"
[ -e "$T/nonexistent" ] && fail "stat created a log"

case_ "not a log"
printf 'hello\n' >"$T/text"
expect_status 1 "$KMSG" stat -F "$T/text"
expect_grep "^kmsg: $T/text: holds text; --file takes a kmsg log or a kmsg dump" "$T/err"
echo x | gzip >"$T/x.gz"
expect_status 1 "$KMSG" stat -F "$T/x.gz"
expect_grep "^kmsg: $T/x.gz: damaged or incomplete dump" "$T/err"

case_ "--json with a path that is not UTF-8"
# byte 0xff cannot be in a JSON string: it is written as the text \xff
P=$T/$'log-\xff-"q"'
"$KMSG" emit -F "$P" --log-size 16K "x" || fail "kmsg emit failed"
expect_status 0 "$KMSG" stat -F "$P" --json
if command -v python3 >/dev/null; then
	python3 -m json.tool "$T/out" >/dev/null 2>"$T/json.err" ||
		fail "--json is not valid JSON: $(cat "$T/json.err")"
	expect_eq "$T/log-\xff-\"q\"" "$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["path"])' "$T/out")" "path"
else
	expect_grep '"path":"[^"]*log-\\\\xff-\\"q\\""' "$T/out"
fi

case_ "bad usage"
expect_status 2 "$KMSG" stat -F "$L" extra
expect_status 2 "$KMSG" stat --bogus

finish
