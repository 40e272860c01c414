/*
 * test_kmsg_parse.c - the /dev/kmsg format read back (lib/text/kmsg_parse.c):
 * the kernel's records, kmsg's own -o kmsg lines read back to the record
 * they came from, bad lines skipped with their reasons, and how long a
 * record handed out stays valid.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

TestSuite(kmsg_parse, .fini = tu_cleanup);

#define BOOT INT64_C(1700000000000000000)

/* Feeds text (lines split at newlines) to p; returns the records handed
 * out, their texts joined by '|' into texts, the reasons of skipped lines
 * by '|' into whys. */
static int feed_all(struct kmsg_devkmsg *p, const char *text, char *texts, char *whys)
{
	struct kmsg_record rec;
	const char *line = text;
	int n = 0, rc;

	texts[0] = whys[0] = '\0';
	for (;;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		rc = kmsg_devkmsg_feed(&rec, p, line, len);
		cr_assert_geq(rc, 0);
		if (rc == 1) {
			strncat(texts, rec.text, rec.text_len);
			strcat(texts, "|");
			n++;
		}
		if (kmsg_devkmsg_skipped(p)) {
			strcat(whys, kmsg_devkmsg_skipped(p));
			strcat(whys, "|");
		}
		if (!nl)
			break;
		line = nl + 1;
	}
	if (kmsg_devkmsg_end(&rec, p) == 1) {
		strncat(texts, rec.text, rec.text_len);
		strcat(texts, "|");
		n++;
	}
	return n;
}

Test(kmsg_parse, a_kernel_record_with_fields_a_caller_and_a_fragment)
{
	struct kmsg_devkmsg *p;
	struct kmsg_record rec;
	struct kmsg_field f;
	size_t pos = 0;

	cr_assert_eq(kmsg_devkmsg_new(&p, BOOT), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&rec, p, "12,7,2500000,c,caller=T42,x=y;a\\x0ab\\x5c", 40), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&rec, p, " SUBSYSTEM=pci\n", 15), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&rec, p, " DEVICE=+pci:0\\x3d1", 19), 0);
	cr_assert_eq(kmsg_devkmsg_end(&rec, p), 1);
	cr_assert_null(kmsg_devkmsg_skipped(p));
	cr_assert_eq(rec.facility, 1);
	cr_assert_eq(rec.level, 4);
	cr_assert_eq(rec.seq, 7);
	cr_assert_eq(rec.boot_ns, INT64_C(2500000000));
	cr_assert_eq(rec.real_ns, BOOT + INT64_C(2500000000), "the kernel's: boot time + since boot");
	cr_assert_eq(rec.caller, 42);
	cr_assert_eq(rec.flags & KMSG_FRAGMENT, KMSG_FRAGMENT);
	cr_assert_eq(rec.text_len, 4);
	cr_assert_eq(memcmp(rec.text, "a\nb\\", 4), 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert_eq(f.value_len, 3);
	cr_assert_eq(memcmp(f.key, "SUBSYSTEM", 9), 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert_eq(f.value_len, 8);
	cr_assert_eq(memcmp(f.value, "+pci:0=1", 8), 0);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 0);
	cr_assert_eq(kmsg_devkmsg_end(&rec, p), 0, "nothing after the end");
	kmsg_devkmsg_free(p);
}

/* A record of a log, written as -o kmsg and read back, renders the same
 * in the JSON record objects, which show every member and field. */
Test(kmsg_parse, a_record_written_as_kmsg_reads_back_as_itself)
{
	struct kmsg_fmt_opts ko = KMSG_FMT_OPTS_INIT, jo = KMSG_FMT_OPTS_INIT;
	unsigned char fields[64];
	struct kmsg_record rec = { 0 }, back;
	struct kmsg_fmt *k, *j;
	struct kmsg_devkmsg *p;
	const char *out;
	char *kmsg_text, *want, *line;
	int n;
	uint16_t l = 9;

	memcpy(fields, &l, 2);
	memcpy(fields + 2, "DISH=soup", 9);
	l = 11;
	memcpy(fields + 11, &l, 2);
	memcpy(fields + 13, "NOTE=a\\b\n\033c", 11);
	rec.seq = 99;
	rec.seq_id = UINT64_C(0x8d8426cc52e15d1f);
	rec.real_ns = INT64_C(1700000000123456789);
	rec.boot_ns = INT64_C(30339734411550);
	rec.boot_id = UINT64_C(0xb33dbf2db7284d82);
	rec.pid = 4242;
	rec.caller = 0x80000005u;
	rec.facility = 16;
	rec.level = 7;
	rec.text = "caf\xc3\xa9 \xff tab\there\nline two\\";
	rec.text_len = strlen(rec.text);
	rec.fields = fields;
	rec.fields_len = 24;

	ko.output = KMSG_OUT_KMSG;
	jo.output = KMSG_OUT_JSON_LINE;
	cr_assert_eq(kmsg_fmt_new(&k, &ko), 0);
	cr_assert_eq(kmsg_fmt_new(&j, &jo), 0);
	n = kmsg_fmt_record(&out, k, &rec);
	cr_assert_gt(n, 0);
	kmsg_text = strndup(out, (size_t)n);
	n = kmsg_fmt_record(&out, j, &rec);
	want = strndup(out, (size_t)n);

	cr_assert_eq(kmsg_devkmsg_new(&p, 0), 0);
	for (line = strtok(kmsg_text, "\n"); line; line = strtok(NULL, "\n"))
		cr_assert_eq(kmsg_devkmsg_feed(&back, p, line, strlen(line)), 0,
			     "one record: nothing handed out before the end (%s)", line);
	cr_assert_eq(kmsg_devkmsg_end(&back, p), 1);
	n = kmsg_fmt_record(&out, j, &back);
	cr_assert_eq((size_t)n, strlen(want));
	cr_assert_eq(memcmp(out, want, (size_t)n), 0, "got %.*s\nwant %s", n, out, want);
	free(kmsg_text);
	free(want);
	kmsg_fmt_free(k);
	kmsg_fmt_free(j);
	kmsg_devkmsg_free(p);
}

Test(kmsg_parse, bad_lines_are_skipped_with_a_reason_and_a_bad_records_fields_with_it)
{
	struct kmsg_devkmsg *p;
	char texts[512], whys[2048];

	cr_assert_eq(kmsg_devkmsg_new(&p, BOOT), 0);
	cr_assert_eq(feed_all(p, " K=early\n"
			      "6,1,0,-;one\n"
			      "not a record\n"
			      "192,2,0,-;prio too big\n"
			      " OF_THE_BAD=1\n"
			      "6,x,0,-;bad seq\n"
			      "6,3,1.5,-;bad time\n"
			      "6,4,0,-;four\n"
			      " lower=case\n"
			      " NOEQUALS\n"
			      " _UNKNOWN=1\n"
			      " _PID=-1\n"
			      " GOOD=yes\n"
			      "\n"
			      "6,5,0,-;five", texts, whys), 3);
	cr_assert_str_eq(texts, "one|four|five|");
	cr_assert_str_eq(whys,
		"a field line with no record before it|"
		"not a record (PRIO,SEQ,USEC,FLAGS;TEXT) nor a field (\" KEY=VALUE\")|"
		"no priority (0 to 191) where a record begins|"
		"no sequence number after the priority|"
		"no time (microseconds since boot) after the sequence number|");
	kmsg_devkmsg_free(p);
}

/*
 * What dmesg -K reads (util-linux v2.42.2's print_kmsg_file() and
 * parse_kmsg_record()): records that each end in a NUL, of which it reads
 * the first line after any blanks and leaves the rest unread, and a
 * header without flags.
 */
Test(kmsg_parse, nul_separated_records_keep_their_lines_and_say_nothing)
{
	static const char in[] =
		"5,0,0,-,caller=T0;line zero\n"
		"\0" "10,1,1000000,-,caller=T1;new\nline\n"
		"\0" "20,2,2000000;two\ntwo\n lines\n SUBSYSTEM=usb\n"
		"\0\n \t30,3,3000000,c;three\n"
		"\0" "6,4,4000000,-;four\n";
	struct kmsg_devkmsg *p;
	struct kmsg_record rec;
	const char *line = in, *end = in + sizeof(in) - 1;
	char texts[256] = "";
	int n = 0, rc;

	cr_assert_eq(kmsg_devkmsg_new(&p, BOOT), 0);
	/* fed as kmsg read -K feeds it: lines, a NUL starting the next */
	while (line < end) {
		const char *nl = memchr(line + 1, '\n', (size_t)(end - line - 1));
		const char *nul = memchr(line + 1, '\0', (size_t)(end - line - 1));
		const char *stop = nl && (!nul || nl < nul) ? nl + 1 : nul ? nul : end;

		rc = kmsg_devkmsg_feed(&rec, p, line, (size_t)(stop - line));
		cr_assert_geq(rc, 0);
		cr_assert_null(kmsg_devkmsg_skipped(p), "skipped: %.*s",
			       (int)(stop - line), line);
		if (rc == 1) {
			strncat(texts, rec.text, rec.text_len);
			strcat(texts, "|");
			n++;
			if (n == 3) {
				cr_assert_eq(rec.boot_ns, 2000000 * INT64_C(1000));
				cr_assert_eq(rec.level, 4);
				cr_assert_eq(rec.facility, 2);
				cr_assert_eq(rec.fields_len, 2 + sizeof("SUBSYSTEM=usb") - 1);
			}
		}
		line = stop;
	}
	cr_assert_eq(kmsg_devkmsg_end(&rec, p), 1);
	strncat(texts, rec.text, rec.text_len);
	cr_assert_eq(rec.seq, 4);
	cr_assert_str_eq(texts, "line zero|new|two|three|four");
	kmsg_devkmsg_free(p);
}

Test(kmsg_parse, fields_past_a_mebibyte_are_skipped)
{
	struct kmsg_devkmsg *p;
	struct kmsg_record rec;
	char *line = malloc(60002);
	int skipped = 0;

	memcpy(line, " K=", 3);
	memset(line + 3, 'v', 59999);
	cr_assert_eq(kmsg_devkmsg_new(&p, 0), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&rec, p, "6,1,0,-;x", 9), 0);
	for (int i = 0; i < 20; i++) {
		cr_assert_eq(kmsg_devkmsg_feed(&rec, p, line, 60002), 0);
		skipped += kmsg_devkmsg_skipped(p) != NULL;
	}
	cr_assert_eq(skipped, 3, "17 fields of 60 KB fit in 1 MiB");
	cr_assert_eq(kmsg_devkmsg_end(&rec, p), 1);
	cr_assert_eq(rec.fields_len, 17 * 60003); /* a length, K, '=', the value */
	kmsg_devkmsg_free(p);
	free(line);
}

Test(kmsg_parse, a_record_handed_out_stays_valid_until_the_next_call)
{
	struct kmsg_devkmsg *p;
	struct kmsg_record a, b;

	cr_assert_eq(kmsg_devkmsg_new(&p, 0), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&a, p, "6,1,0,-;first", 13), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&a, p, "6,2,0,-;second record", 21), 1);
	cr_assert_eq(a.text_len, 5);
	cr_assert_eq(memcmp(a.text, "first", 5), 0, "the record the line ended");
	cr_assert_eq(kmsg_devkmsg_feed(&b, p, "6,3,0,-;third", 13), 1);
	cr_assert_eq(memcmp(b.text, "second record", 13), 0);
	cr_assert_eq(kmsg_devkmsg_end(&b, p), 1);
	cr_assert_eq(memcmp(b.text, "third", 5), 0);
	cr_assert_eq(kmsg_devkmsg_feed(&b, NULL, "x", 1), KMSG_EINVAL);
	cr_assert_eq(kmsg_devkmsg_new(NULL, 0), KMSG_EINVAL);
	kmsg_devkmsg_free(p);
	kmsg_devkmsg_free(NULL);
}
