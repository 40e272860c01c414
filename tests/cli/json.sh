#!/bin/bash
# json.sh - kmsg read -o json, json-pretty and json-seq as a script or a log
# shipper reads them: every output is parsed by a real JSON parser (Python's
# json module), and the members and fields of each record are checked
# against what was written with kmsg emit: fields (a key given twice),
# non-ASCII text, text and values that are not UTF-8, control characters.
# -J keeps dmesg's document: read.sh checks it.
. "$(dirname "$0")/lib.sh.inc"

command -v python3 >/dev/null || { echo "json: no python3: skipped" >&2; exit 0; }

# results < FILE: "ok WHAT" and "fail WHAT: why" lines of a checker, counted
results() {
	local verdict what
	while read -r verdict what; do
		case_ "$what"
		if [ "$verdict" = ok ]; then ok; else fail "${what#*: }"; fi
	done
}

L=$T/log
"$KMSG" emit -F "$L" -p daemon.warning -t food --field DISH=soup --field HOT=yes \
	--field DISH=stew "warm café" || fail "emit with fields"
printf 'bad \377\376 byte\n' | "$KMSG" emit -F "$L" --field "BIN=$(printf '\303')" ||
	fail "emit of text that is not UTF-8"
printf 'esc \033[31m red\ttab \177 \302\233 q" b\\\n' | "$KMSG" emit -F "$L" --id=42 -p err ||
	fail "emit of control characters"
"$KMSG" emit -F "$L" -p local7.debug "$(printf 'two\nlines')" || fail "emit of two lines"

id=$("$KMSG" stat -F "$L" | sed -n 's/^numbering: *\([0-9a-f]\{16\}\) since.*/\1/p')
boot=$(tr -d - </proc/sys/kernel/random/boot_id | cut -c1-16)

"$KMSG" read -F "$L" -o json >"$T/json" 2>"$T/err"
"$KMSG" read -F "$L" -o json-pretty >"$T/pretty" 2>>"$T/err"
"$KMSG" read -F "$L" -o json-seq >"$T/seq" 2>>"$T/err"
"$KMSG" read -F "$L" -o json --output-fields DISH,text,seq,NONE >"$T/some" 2>>"$T/err"
case_ "the JSON outputs write nothing on stderr"
expect_eq "" "$(cat "$T/err")"

cat >"$T/check.py" <<'EOF'
import datetime, json, os, sys

t = sys.argv[1]
def check(what, cond, why=""):
    print(("ok " if cond else "fail ") + what + ("" if cond else ": " + why))

def lines_of(path):
    objs = []
    with open(path, "rb") as f:
        data = f.read()
    check("json: every record ends in a newline", data.endswith(b"\n"), repr(data[-20:]))
    for n, line in enumerate(data.split(b"\n")[:-1], 1):
        try:
            objs.append(json.loads(line.decode("utf-8")))
        except ValueError as e:
            check("json: line %d parses" % n, False, "%s: %r" % (e, line[:200]))
            return objs
    check("json: each line parses as one object", all(isinstance(o, dict) for o in objs))
    return objs

recs = lines_of(t + "/json")
check("json: four records", len(recs) == 4, str(len(recs)))
members = ["seq", "seq_id", "time_ns", "time", "boot_ns", "boot_id", "claimed_pid",
           "caller", "facility", "facility_name", "level", "level_name", "text"]
want_fields = [
    {"DISH": ["soup", "stew"], "HOT": "yes", "SYSLOG_IDENTIFIER": "food"},
    {"BIN": [0xc3]},
    {"SYSLOG_IDENTIFIER": "root"},
    {},
]
want_text = [
    "food: warm café",
    list(b"bad \xff\xfe byte"),
    'root[42]: esc \x1b[31m red\ttab \x7f \x9b q" b\\',
    "two\nlines",
]
want_prio = [(3, "daemon", 4, "warning"), (1, "user", 5, "notice"),
             (1, "user", 3, "err"), (23, "local7", 7, "debug")]
for i, r in enumerate(recs[:4]):
    w = "json: record %d " % (i + 1)
    check(w + "members in order, then the fields by key",
          list(r) == members + sorted(want_fields[i]), str(list(r)))
    check(w + "seq", r.get("seq") == i + 1, str(r.get("seq")))
    check(w + "seq_id is the numbering kmsg stat shows",
          r.get("seq_id") == os.environ["SEQ_ID"], str(r.get("seq_id")))
    check(w + "boot_id is this boot's", r.get("boot_id") == os.environ["BOOT_ID"],
          str(r.get("boot_id")))
    ns = r.get("time_ns")
    iso = datetime.datetime.fromtimestamp(ns // 10**9, datetime.timezone.utc) \
        .strftime("%Y-%m-%dT%H:%M:%S") + ".%09dZ" % (ns % 10**9)
    check(w + "time is time_ns in UTC with nanoseconds", r.get("time") == iso,
          "%s vs %s" % (r.get("time"), iso))
    check(w + "boot_ns is a time since boot", isinstance(r.get("boot_ns"), int)
          and 0 < r["boot_ns"] < ns, str(r.get("boot_ns")))
    check(w + "caller", isinstance(r.get("caller"), int) and r["caller"] > 0)
    check(w + "facility and level", (r.get("facility"), r.get("facility_name"),
          r.get("level"), r.get("level_name")) == want_prio[i], str(r))
    check(w + "text", r.get("text") == want_text[i], repr(r.get("text")))
    check(w + "fields", {k: v for k, v in r.items() if k not in members}
          == want_fields[i], str(r))
check("json: --id gives the claimed pid", recs[2].get("claimed_pid") == 42,
      str(recs[2].get("claimed_pid")))
check("json: a pid of its own otherwise", isinstance(recs[0].get("claimed_pid"), int)
      and recs[0]["claimed_pid"] not in (0, 42))
raw = open(t + "/json", "rb").read()
check("json: no raw control byte but the newlines", not any(
      b < 0x20 and b != 0x0a or b == 0x7f for b in raw), repr(raw))
check("json: DEL and C1 escaped", b"\\u007f \\u009b" in raw)

# json-pretty: a stream of objects, read as a JSON text stream is
dec = json.JSONDecoder()
text = open(t + "/pretty", encoding="utf-8").read()
pretty, pos = [], 0
try:
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            break
        o, pos = dec.raw_decode(text, pos)
        pretty.append(o)
    check("json-pretty: the stream parses", True)
except ValueError as e:
    check("json-pretty: the stream parses", False, str(e))
check("json-pretty: the same records as json", pretty == recs)
check("json-pretty: one member a line", text.count("\n") ==
      sum(len(r) + 2 for r in recs), str(text.count("\n")))

# json-seq (RFC 7464): RS, a JSON text, LF, for each record
data = open(t + "/seq", "rb").read()
parts = data.split(b"\x1e")
check("json-seq: starts with RS", parts[0] == b"", repr(data[:10]))
check("json-seq: each text ends in LF", all(p.endswith(b"\n") for p in parts[1:]))
try:
    seq = [json.loads(p) for p in parts[1:]]
except ValueError as e:
    seq = []
    check("json-seq: each text parses", False, str(e))
check("json-seq: the same records as json", seq == recs)

some = lines_of(t + "/some")
check("--output-fields: only the keys named, a field the record lacks left out",
      [list(o) for o in some] == [["seq", "text", "DISH"]] + [["seq", "text"]] * 3,
      str(some))
check("--output-fields: values as without it", some[0]["DISH"] == ["soup", "stew"]
      and some[1]["text"] == want_text[1])
EOF
results < <(SEQ_ID=$id BOOT_ID=$boot python3 "$T/check.py" "$T" 2>&1 ||
	echo "fail the checker: ran to its end")

case_ "--output-fields with a name that is neither a member nor a key"
expect_status 2 "$KMSG" read -F "$L" -o json --output-fields text,bogus
expect_grep "'text,bogus': not a list of member names" "$T/err"
expect_status 2 "$KMSG" read -F "$L" -o json --output-fields ""
case_ "--output-fields followed by another option keeps its own list"
"$KMSG" read -F "$L" -o json --output-fields seq --until now >"$T/out" 2>"$T/err"
expect_eq 0 $? "status"
expect_eq '{"seq":1}' "$(head -1 "$T/out")" "the first record"
case_ "--output-fields with an output that has no keys"
expect_status 2 "$KMSG" read -F "$L" --output-fields text
expect_grep "only with -o json" "$T/err"
case_ "-o with a bad value names every format"
expect_status 2 "$KMSG" read -F "$L" -o yaml
expect_grep "not one of short, raw, json, json-pretty, json-seq, kmsg" "$T/err"

case_ "-o json of an empty log prints nothing"
"$KMSG" emit -F "$T/empty" -p info x >/dev/null
"$KMSG" read -F "$T/empty" -C
expect_eq "" "$("$KMSG" read -F "$T/empty" -o json)"

case_ "-J --fields: dmesg's objects with the fields, in order, a key twice"
"$KMSG" read -F "$L" -J --fields >"$T/got"
python3 -m json.tool "$T/got" >/dev/null && ok || fail "-J --fields is not JSON: $(head -c 300 "$T/got")"
expect_eq '["DISH=soup", "HOT=yes", "DISH=stew", "SYSLOG_IDENTIFIER=food"]' \
	"$(python3 -c 'import json, sys
print(json.dumps(json.load(open(sys.argv[1]))["dmesg"][0]["fields"]))' "$T/got")" "the first record's fields"
# without --fields, not a byte more than dmesg's document
"$KMSG" read -F "$L" -J >"$T/got"
expect_eq 0 "$(grep -c '"fields"' "$T/got")" "fields in -J without --fields"

case_ "dmesg text: no numbering, pid or boot id; no priority is null"
printf '[    1.000000] no priority\n<6>[    1.500000] from dmesg\n' >"$T/dmesg.txt"
"$KMSG" read -F "$T/dmesg.txt" -o json --output-fields seq_id,boot_id,claimed_pid,facility,level_name,text,boot_ns >"$T/got"
printf '%s\n' \
	'{"seq_id":null,"boot_ns":1000000000,"boot_id":null,"claimed_pid":null,"facility":null,"level_name":null,"text":"no priority"}' \
	'{"seq_id":null,"boot_ns":1500000000,"boot_id":null,"claimed_pid":null,"facility":0,"level_name":"info","text":"from dmesg"}' >"$T/want"
expect_file_eq "$T/want" "$T/got"

case_ "the pid a writer gives is named a claim in every output, never _PID"
P=$T/claims.log
"$KMSG" emit -F "$P" --id=1 -t init "I am init"
"$KMSG" read -F "$P" -o json --output-fields claimed_pid >"$T/got"
expect_eq '{"claimed_pid":1}' "$(cat "$T/got")" "-o json"
# pid, the name before, still selects the member, under its new name
"$KMSG" read -F "$P" -o json --output-fields pid >"$T/got"
expect_eq '{"claimed_pid":1}' "$(cat "$T/got")" "--output-fields pid"
"$KMSG" read -F "$P" -J --show-pid >"$T/got"
expect_eq 1 "$(python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))["dmesg"][0]["claimed_pid"])' "$T/got")" "-J --show-pid"
"$KMSG" read -F "$P" -o kmsg >"$T/got"
expect_grep '^ _CLAIMED_PID=1$' "$T/got"
for o in json json-pretty json-seq kmsg; do
	"$KMSG" read -F "$P" -o $o >"$T/got"
	if grep -qE '(^|[^A-Z])_PID=|"pid"' "$T/got"; then fail "-o $o: $(cat "$T/got")"; else ok; fi
done
# -o kmsg text reads back with the claim, and so does that of kmsg 0.1
"$KMSG" read -K "$T/got" -o json --output-fields claimed_pid >"$T/back"
expect_eq '{"claimed_pid":1}' "$(cat "$T/back")" "-o kmsg read back"
sed 's/_CLAIMED_PID=/_PID=/' "$T/got" >"$T/old"
"$KMSG" read -K "$T/old" -o json --output-fields claimed_pid >"$T/back"
expect_eq '{"claimed_pid":1}' "$(cat "$T/back")" "the older _PID= read back"
"$KMSG" read -F "$P" claimed_pid=1 -t >"$T/got" 2>&1
expect_eq "init[1]: I am init" "$(cat "$T/got")" "the match claimed_pid=1"
# _PID is the kernel's word, which a record the writer appended has not:
# the claim never passes for it
expect_status 0 "$KMSG" read -F "$P" _PID=1
expect_eq "" "$(cat "$T/out")" "the match _PID=1"
expect_status 0 "$KMSG" read -F "$P" --list-values _PID
expect_eq "" "$(cat "$T/out")" "--list-values _PID"

case_ "follow -o json: each record as it comes, one object a line"
: >"$T/f.out"
"$KMSG" follow -F "$L" -n 1 -o json >>"$T/f.out" 2>"$T/f.err" &
fpid=$!
for _ in $(seq 100); do [ -s "$T/f.out" ] && break; sleep 0.05; done
"$KMSG" emit -F "$L" --field K=v "followed"
for _ in $(seq 100); do [ "$(wc -l <"$T/f.out")" -ge 2 ] && break; sleep 0.05; done
stop_bg $fpid TERM
expect_eq 2 "$(python3 -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if json.loads(l)))' "$T/f.out")" "objects followed"
expect_grep '"text":"followed","K":"v"}$' "$T/f.out"

finish
