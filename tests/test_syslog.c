/*
 * test_syslog.c - syslog's wire formats: messages in the byte forms real
 * senders write (captured from logger(1) of util-linux 2.38.1 and from
 * Python's SysLogHandler on a Unix datagram socket, and the forms of
 * glibc's syslog(3)), structured data, octet-counted frames, and records
 * written as RFC 5424 and RFC 3164 and read back.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "testutil.h"

/* 2026-12-05 16:56:30 UTC, when the logger samples below were taken */
#define NOW_2026_12_05 (INT64_C(1796489790) * 1000000000)

static int64_t utc_ns(int y, int mon, int d, int h, int m, int s)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = m, .tm_sec = s };

	return (int64_t)timegm(&tm) * 1000000000;
}

/* Parses s (n bytes, copied to memory of exactly n so ASan sees any
 * read past it) received at now in UTC; the copy is kept in *keep. */
static int parse_at(struct kmsg_syslog_msg *m, const char *s, size_t n, int64_t now,
		    char **keep)
{
	struct kmsg_syslog_parse_opts o = KMSG_SYSLOG_PARSE_OPTS_INIT;
	char *copy = malloc(n ? n : 1);

	memcpy(copy, s, n);
	*keep = copy;
	o.now_ns = now;
	o.tz = KMSG_SYSLOG_TZ_OFFSET;
	return kmsg_syslog_parse(m, copy, n, &o);
}

#define PARSE(m, lit) parse_at((m), (lit), sizeof(lit) - 1, NOW_2026_12_05, &keep)

static void eq(const char *p, size_t n, const char *want)
{
	if (!want) {
		cr_assert_null(p, "expected nothing, got \"%.*s\"", (int)n, p ? p : "");
		return;
	}
	cr_assert_not_null(p, "expected \"%s\", got nothing", want);
	cr_assert_eq(n, strlen(want), "expected \"%s\", got \"%.*s\"", want, (int)n, p);
	cr_assert(memcmp(p, want, n) == 0, "expected \"%s\", got \"%.*s\"", want, (int)n, p);
}

Test(syslog, logger_default_form)
{
	struct kmsg_syslog_msg m;
	char *keep;

	/* logger -u SOCK -t prog 'plain text' */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 16:56:22 prog: plain text"), KMSG_SYSLOG_3164);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI | KMSG_SYSLOG_HAS_TIME);
	cr_assert_eq(m.facility, 1);
	cr_assert_eq(m.level, 5);
	cr_assert_eq(m.real_ns, utc_ns(2026, 12, 5, 16, 56, 22));
	eq(m.hostname, m.hostname_len, NULL);
	eq(m.app, m.app_len, "prog");
	eq(m.procid, m.procid_len, NULL);
	eq(m.text, m.text_len, "plain text");
	free(keep);

	/* logger -i */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 16:56:22 prog[32466]: with pid"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, "prog");
	eq(m.procid, m.procid_len, "32466");
	cr_assert_eq(m.pid, 32466);
	eq(m.text, m.text_len, "with pid");
	free(keep);

	/* logger -p local3.err */
	cr_assert_eq(PARSE(&m, "<155>Dec  5 16:56:22 tag: err"), KMSG_SYSLOG_3164);
	cr_assert_eq(m.facility, 19);
	cr_assert_eq(m.level, 3);
	eq(m.text, m.text_len, "err");
	free(keep);

	/* logger --prio-prefix '<30>already prio': the inner one is text */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 16:56:22 x: <30>already prio"), KMSG_SYSLOG_3164);
	cr_assert_eq(m.facility * 8 + m.level, 13);
	eq(m.text, m.text_len, "<30>already prio");
	free(keep);
}

Test(syslog, logger_rfc3164_has_a_host)
{
	struct kmsg_syslog_msg m;
	char *keep;

	cr_assert_eq(PARSE(&m, "<13>Dec  5 16:56:22 vm prog: rfc3164 host"), KMSG_SYSLOG_3164);
	eq(m.hostname, m.hostname_len, "vm");
	eq(m.app, m.app_len, "prog");
	eq(m.text, m.text_len, "rfc3164 host");
	free(keep);

	cr_assert_eq(PARSE(&m, "<13>Dec  5 16:56:22 vm prog[32475]: rfc3164 pid"), KMSG_SYSLOG_3164);
	eq(m.hostname, m.hostname_len, "vm");
	eq(m.app, m.app_len, "prog");
	cr_assert_eq(m.pid, 32475);
	eq(m.text, m.text_len, "rfc3164 pid");
	free(keep);

	/* a host with dots, and a text with colons of its own */
	cr_assert_eq(PARSE(&m, "<13>Dec 05 16:56:22 db-1.example.org cron[7]: a: b: c"),
		     KMSG_SYSLOG_3164);
	eq(m.hostname, m.hostname_len, "db-1.example.org");
	eq(m.app, m.app_len, "cron");
	eq(m.text, m.text_len, "a: b: c");
	free(keep);
}

Test(syslog, glibc_forms)
{
	struct kmsg_syslog_msg m;
	char *keep;

	/* syslog(3) on a datagram socket, and on a stream: a NUL after it */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 15:08:24 prog[42]: text"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, "prog");
	cr_assert_eq(m.pid, 42);
	eq(m.text, m.text_len, "text");
	free(keep);
	cr_assert_eq(PARSE(&m, "<13>Dec  5 15:08:24 prog[42]: text\0"), KMSG_SYSLOG_3164);
	eq(m.text, m.text_len, "text");
	free(keep);

	/* glibc 2.36's two spaces after the time, which rsyslog's parser
	 * took for an empty tag (rsyslog#4979, systemd#24540) */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 15:08:24  prog[42]: text"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, "prog");
	eq(m.text, m.text_len, "text");
	free(keep);

	/* an empty ident */
	cr_assert_eq(PARSE(&m, "<13>: text"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, NULL);
	eq(m.text, m.text_len, "text");
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	free(keep);

	/* Go's log/syslog on a Unix socket: LF-terminated, one LF stripped */
	cr_assert_eq(PARSE(&m, "<14>Dec  5 15:08:24 app[123]: go says\n\n"), KMSG_SYSLOG_3164);
	eq(m.text, m.text_len, "go says\n");
	free(keep);

	/* a pid without colon */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 15:08:24 prog[42] text"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, "prog");
	eq(m.text, m.text_len, "text");
	free(keep);

	/* a tag without colon or pid after a time stays in the text */
	cr_assert_eq(PARSE(&m, "<13>Dec  5 15:08:24 prog text"), KMSG_SYSLOG_3164);
	eq(m.app, m.app_len, NULL);
	eq(m.hostname, m.hostname_len, NULL);
	eq(m.text, m.text_len, "prog text");
	free(keep);

	/* a year after the time */
	cr_assert_eq(PARSE(&m, "<13>Jan  2 03:04:05 2024 prog: old"), KMSG_SYSLOG_3164);
	cr_assert(m.flags & KMSG_SYSLOG_HAS_YEAR);
	cr_assert_eq(m.real_ns, utc_ns(2024, 1, 2, 3, 4, 5));
	eq(m.text, m.text_len, "old");
	free(keep);
	/* one past what nanoseconds since 1970 hold is no time */
	cr_assert_eq(PARSE(&m, "<13>Jan  2 03:04:05 4048 prog: x"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	free(keep);
}

Test(syslog, python_and_no_prio)
{
	struct kmsg_syslog_msg m;
	char *keep;

	/* logging.handlers.SysLogHandler(address=SOCK): warning, error */
	cr_assert_eq(PARSE(&m, "<12>py warn\0"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	cr_assert_eq(m.level, 4);
	eq(m.text, m.text_len, "py warn");
	free(keep);
	cr_assert_eq(PARSE(&m, "<11>ValueError: bad\0"), KMSG_SYSLOG_RAW);
	eq(m.app, m.app_len, NULL);
	eq(m.text, m.text_len, "ValueError: bad");
	free(keep);

	/* no PRI: the default, user.notice, and still a header */
	cr_assert_eq(PARSE(&m, "Dec  5 15:08:24 prog[9]: no pri"), KMSG_SYSLOG_3164);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_TIME);
	cr_assert_eq(m.facility, 1);
	cr_assert_eq(m.level, 5);
	eq(m.text, m.text_len, "no pri");
	free(keep);
	cr_assert_eq(PARSE(&m, "just words"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, 0);
	eq(m.text, m.text_len, "just words");
	free(keep);
	cr_assert_eq(PARSE(&m, ""), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.text_len, 0);
	free(keep);
}

Test(syslog, bad_pri_is_all_text)
{
	static const char *const bad[] = {
		"<192>Dec  5 15:08:24 p: x", "<013>Dec  5 15:08:24 p: x",
		"<00>x", "<13 x", "<>x", "<1234>x", "<-1>x", "<13", "<",
	};
	struct kmsg_syslog_msg m;
	char *keep;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(parse_at(&m, bad[i], strlen(bad[i]), NOW_2026_12_05, &keep),
			     KMSG_SYSLOG_RAW, "%s", bad[i]);
		cr_assert_eq(m.flags, 0, "%s", bad[i]);
		eq(m.text, m.text_len, bad[i]);
		free(keep);
	}
	cr_assert_eq(PARSE(&m, "<0>x"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	cr_assert_eq(m.facility, 0);
	free(keep);
	cr_assert_eq(PARSE(&m, "<191>x"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.facility, 23);
	cr_assert_eq(m.level, 7);
	free(keep);
}

Test(syslog, new_year)
{
	struct kmsg_syslog_msg m;
	char *keep;
	const char dec[] = "<13>Dec 31 23:59:59 p: late";
	const char jan[] = "<13>Jan  1 00:00:01 p: early";

	/* a December time received in January is of the year before */
	parse_at(&m, dec, sizeof(dec) - 1, utc_ns(2027, 1, 1, 0, 0, 3), &keep);
	cr_assert_eq(m.real_ns, utc_ns(2026, 12, 31, 23, 59, 59));
	free(keep);
	/* a January one received in December (a sender's clock ahead) after */
	parse_at(&m, jan, sizeof(jan) - 1, utc_ns(2026, 12, 31, 23, 59, 58), &keep);
	cr_assert_eq(m.real_ns, utc_ns(2027, 1, 1, 0, 0, 1));
	free(keep);
	/* Feb 29 of a year that lacks it is no time */
	cr_assert_eq(parse_at(&m, "<13>Feb 29 10:00:00 p: x", 24, utc_ns(2026, 3, 1, 0, 0, 0),
			      &keep), KMSG_SYSLOG_RAW);
	cr_assert_not(m.flags & KMSG_SYSLOG_HAS_TIME);
	free(keep);
}

Test(syslog, offset_and_local_zone)
{
	struct kmsg_syslog_parse_opts o = KMSG_SYSLOG_PARSE_OPTS_INIT;
	struct kmsg_syslog_msg m;
	const char s[] = "<13>Jul  1 12:00:00 p: x";

	o.now_ns = utc_ns(2026, 7, 1, 12, 0, 0);
	o.tz = KMSG_SYSLOG_TZ_OFFSET;
	o.utc_offset = 7200;
	kmsg_syslog_parse(&m, s, sizeof(s) - 1, &o);
	cr_assert_eq(m.real_ns, utc_ns(2026, 7, 1, 10, 0, 0));
	cr_assert_eq(m.utc_offset, 7200);

	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	o.tz = KMSG_SYSLOG_TZ_LOCAL;
	kmsg_syslog_parse(&m, s, sizeof(s) - 1, &o);
	cr_assert_eq(m.real_ns, utc_ns(2026, 7, 1, 10, 0, 0));
	cr_assert_eq(m.utc_offset, 7200);
	unsetenv("TZ");
	tzset();

	o.version = 99;
	cr_assert_eq(kmsg_syslog_parse(&m, s, sizeof(s) - 1, &o), KMSG_EINVAL);
	cr_assert_eq(kmsg_syslog_parse(NULL, s, 1, NULL), KMSG_EINVAL);
}

Test(syslog, logger_rfc5424)
{
	struct kmsg_syslog_msg m;
	char *keep;

	cr_assert_eq(PARSE(&m, "<13>1 2026-12-05T16:56:22.574048+00:00 vm app - - "
			       "[timeQuality tzKnown=\"1\" isSynced=\"0\"] rfc5424 msg"),
		     KMSG_SYSLOG_5424);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI | KMSG_SYSLOG_HAS_TIME | KMSG_SYSLOG_HAS_ZONE);
	cr_assert_eq(m.real_ns, utc_ns(2026, 12, 5, 16, 56, 22) + 574048000);
	eq(m.hostname, m.hostname_len, "vm");
	eq(m.app, m.app_len, "app");
	eq(m.procid, m.procid_len, NULL);
	eq(m.msgid, m.msgid_len, NULL);
	eq(m.sd, m.sd_len, "[timeQuality tzKnown=\"1\" isSynced=\"0\"]");
	eq(m.text, m.text_len, "rfc5424 msg");
	free(keep);

	/* --rfc5424=notq,notime */
	cr_assert_eq(PARSE(&m, "<13>1 - vm app - - - nots"), KMSG_SYSLOG_5424);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	eq(m.sd, m.sd_len, NULL);
	eq(m.text, m.text_len, "nots");
	free(keep);

	/* --msgid ID47 --sd-id exampleSDID@32473 --sd-param ... -i */
	cr_assert_eq(PARSE(&m, "<13>1 2026-12-05T16:56:22.645377+00:00 vm app 32486 ID47 "
			       "[timeQuality tzKnown=\"1\" isSynced=\"0\"][exampleSDID@32473 "
			       "iut=\"3\" ev=\"a\\\"b\\\\c\\]d\"] with sd"), KMSG_SYSLOG_5424);
	eq(m.procid, m.procid_len, "32486");
	cr_assert_eq(m.pid, 32486);
	eq(m.msgid, m.msgid_len, "ID47");
	eq(m.text, m.text_len, "with sd");
	{
		struct kmsg_syslog_sd e;
		char buf[256];
		size_t pos = 0;
		const char *want[][2] = {
			{ "timeQuality", NULL }, { "tzKnown", "1" }, { "isSynced", "0" },
			{ "exampleSDID@32473", NULL }, { "iut", "3" }, { "ev", "a\"b\\c]d" },
		};

		for (size_t i = 0; i < 6; i++) {
			cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), m.sd, m.sd_len,
							 &pos), 1);
			if (!want[i][1]) {
				eq(e.id, e.id_len, want[i][0]);
				cr_assert_null(e.name);
			} else {
				eq(e.name, e.name_len, want[i][0]);
				eq(e.value, e.value_len, want[i][1]);
			}
		}
		eq(e.id, e.id_len, "exampleSDID@32473");
		cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), m.sd, m.sd_len, &pos), 0);
	}
	free(keep);
}

Test(syslog, rfc5424_examples_and_bom)
{
	struct kmsg_syslog_msg m;
	char *keep;

	/* RFC 5424 6.5, example 1 (and its BOM) */
	cr_assert_eq(PARSE(&m, "<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 "
			       "- \xef\xbb\xbf'su root' failed for lonvick on /dev/pts/8"),
		     KMSG_SYSLOG_5424);
	cr_assert(m.flags & KMSG_SYSLOG_BOM);
	cr_assert_eq(m.real_ns, utc_ns(2003, 10, 11, 22, 14, 15) + 3000000);
	eq(m.text, m.text_len, "'su root' failed for lonvick on /dev/pts/8");
	free(keep);

	/* example 2: a negative offset */
	cr_assert_eq(PARSE(&m, "<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
			       "%% It's time to make the do-nuts."), KMSG_SYSLOG_5424);
	cr_assert_eq(m.real_ns, utc_ns(2003, 8, 24, 12, 14, 15) + 3000);
	cr_assert_eq(m.utc_offset, -7 * 3600);
	free(keep);

	/* example 4: SD, no MSG */
	cr_assert_eq(PARSE(&m, "<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - "
			       "ID47 [exampleSDID@32473 iut=\"3\" eventSource=\"Application\" "
			       "eventID=\"1011\"][examplePriority@32473 class=\"high\"]"),
		     KMSG_SYSLOG_5424);
	cr_assert_eq(m.text_len, 0);
	eq(m.sd, m.sd_len, "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" "
	   "eventID=\"1011\"][examplePriority@32473 class=\"high\"]");
	free(keep);

	/* the header of RFC 5424 with broken SD: all text, never dropped */
	cr_assert_eq(PARSE(&m, "<13>1 - h a - - [x y=\"1\"]z msg"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI | KMSG_SYSLOG_BAD_SD);
	eq(m.text, m.text_len, "1 - h a - - [x y=\"1\"]z msg");
	free(keep);
	cr_assert_eq(PARSE(&m, "<13>1 - h a - - [x y=\"a]b\"] msg"), KMSG_SYSLOG_RAW);
	cr_assert(m.flags & KMSG_SYSLOG_BAD_SD);
	free(keep);
	cr_assert_eq(PARSE(&m, "<13>1 - h a - - [x y=1] msg"), KMSG_SYSLOG_RAW);
	free(keep);
	/* a bad time, a field too long */
	cr_assert_eq(PARSE(&m, "<13>1 2003-02-29T00:00:00Z h a - - - m"), KMSG_SYSLOG_RAW);
	cr_assert_eq(m.flags, KMSG_SYSLOG_HAS_PRI);
	free(keep);
	cr_assert_eq(PARSE(&m, "<13>1 - h a - 123456789012345678901234567890123 - m"),
		     KMSG_SYSLOG_RAW);
	free(keep);
}

Test(syslog, sd_walk_rejects_malformed)
{
	static const char *const bad[] = {
		"x", "[]", "[a", "[a ]", "[a b]", "[a b=]", "[a b=\"]", "[a b=\"c\"",
		"[a b=\"c\"x]", "[a b=\"c\"] [d]", "[a=b]", "[a \"=\"c\"]",
		"[123456789012345678901234567890123]",
	};
	struct kmsg_syslog_sd e;
	char buf[64];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t pos = 0, n = strlen(bad[i]);
		char *copy = malloc(n);
		int rc;

		memcpy(copy, bad[i], n);
		while ((rc = kmsg_syslog_sd_next(&e, buf, sizeof(buf), copy, n, &pos)) == 1)
			;
		cr_assert_eq(rc, KMSG_ECORRUPT, "%s", bad[i]);
		free(copy);
	}
	{
		size_t pos = 0;
		const char ok[] = "[a b=\"x\\y\"][c]";

		cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), ok, sizeof(ok) - 1, &pos), 1);
		cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), ok, sizeof(ok) - 1, &pos), 1);
		eq(e.value, e.value_len, "x\\y"); /* a backslash before another byte stays */
		cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), ok, sizeof(ok) - 1, &pos), 1);
		eq(e.id, e.id_len, "c");
		cr_assert_eq(kmsg_syslog_sd_next(&e, buf, sizeof(buf), ok, sizeof(ok) - 1, &pos), 0);
	}
}

Test(syslog, octet_counted_frames)
{
	/* logger --octet-count: "31 " and the message */
	const char s[] = "31 <13>Dec  5 16:56:22 prog: octet12 <13>next";
	size_t off, n;

	cr_assert_eq(kmsg_syslog_frame(&off, &n, s, sizeof(s) - 1, 8192), 1);
	cr_assert_eq(off, 3);
	cr_assert_eq(n, 31);
	cr_assert(memcmp(s + off, "<13>Dec  5 16:56:22 prog: octet", n) == 0);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, s + 34, sizeof(s) - 1 - 34, 8192), 0);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, s, 2, 8192), 0);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, s, 0, 8192), 0);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, s, 33, 8192), 0);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, "<13>x", 5, 8192), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, "012 x", 5, 8192), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, "12x", 3, 8192), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, "12345678901 ", 12, 8192), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_syslog_frame(&off, &n, "9000 x", 6, 8192), KMSG_ETOOLONG);
	cr_assert_eq(off, 5);
	cr_assert_eq(n, 9000);
}

/* A record with fields, read back from a fresh log. */
static struct kmsg_log *log_;
static struct kmsg_reader *rd;

static void one_record(struct kmsg_record *rec, const char *text, const struct kmsg_field *f,
		       size_t nf, uint32_t pid)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;

	log_ = tu_create("s.log", 65536, 4096);
	e.facility = 3;
	e.level = 4;
	e.text = text;
	e.text_len = strlen(text);
	e.fields = f;
	e.nfields = nf;
	e.pid = pid;
	e.flags = KMSG_TIMES;
	e.real_ns = utc_ns(2026, 12, 5, 15, 8, 24) + 123456789;
	e.boot_ns = 1;
	cr_assert_eq(kmsg_log_append(NULL, log_, &e), 0);
	cr_assert_eq(kmsg_reader_new(&rd, log_, 0), 0);
	cr_assert_eq(kmsg_reader_next(rd, rec), 1);
}

static void done(void)
{
	kmsg_reader_free(rd);
	kmsg_log_close(log_);
	tu_cleanup();
}

Test(syslog, format_5424_round_trip, .fini = done)
{
	const char *tricky = "q\"uo\\te]s \xc3\xa9t\xc3\xa9\nline two";
	const char *longkey = "A_KEY_OF_FORTY_BYTES_AND_THEN_SOME_MORE_";
	struct kmsg_field f[] = {
		{ "SYSLOG_IDENTIFIER", 0, "myapp", 5 },
		{ "VALUE", 0, tricky, strlen(tricky) },
		{ longkey, 0, "v", 1 },
	};
	struct kmsg_syslog_fmt_opts o = KMSG_SYSLOG_FMT_OPTS_INIT;
	struct kmsg_syslog_msg m;
	struct kmsg_syslog_sd e;
	struct kmsg_record rec;
	uint8_t ring[16];
	char small[8], buf[1024], v[512];
	size_t pos = 0;
	int n;

	for (int i = 0; i < 16; i++)
		ring[i] = (uint8_t)(0xa0 + i);
	one_record(&rec, tricky, f, 3, 4242);
	o.flags = KMSG_SYSLOG_FMT_UTC | KMSG_SYSLOG_FMT_BOM;
	o.hostname = "host name";
	o.sd_id = "kmsg@32473";
	o.ring_id = ring;
	n = kmsg_syslog_format(small, sizeof(small), &rec, &o);
	cr_assert_gt(n, (int)sizeof(small));
	cr_assert_eq(small[sizeof(small) - 1], '\0');
	cr_assert_eq(kmsg_syslog_format(buf, n + 1, &rec, &o), n);
	cr_assert_eq(strlen(buf), (size_t)n);
	{
		const char *head = "<28>1 2026-12-05T15:08:24.123456Z host_name myapp 4242 - "
				   "[kmsg@32473 seq=\"1\" seqid=\"";

		cr_assert(strncmp(buf, head, strlen(head)) == 0, "%s", buf);
	}
	cr_assert_not_null(strstr(buf, " ring=\"a0a1a2a3a4a5a6a7a8a9aaabacadaeaf\""), "%s", buf);

	cr_assert_eq(kmsg_syslog_parse(&m, buf, (size_t)n, NULL), KMSG_SYSLOG_5424, "%s", buf);
	cr_assert(m.flags & KMSG_SYSLOG_BOM);
	eq(m.text, m.text_len, tricky);
	eq(m.app, m.app_len, "myapp");
	cr_assert_eq(m.pid, 4242);
	cr_assert_eq(m.real_ns, utc_ns(2026, 12, 5, 15, 8, 24) + 123456000);
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.id, e.id_len, "kmsg@32473");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.name, e.name_len, "seq");
	eq(e.value, e.value_len, "1");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.name, e.name_len, "seqid");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.name, e.name_len, "ring");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.name, e.name_len, "SYSLOG_IDENTIFIER");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	eq(e.name, e.name_len, "VALUE");
	eq(e.value, e.value_len, tricky);
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 1);
	/* 40 bytes: the first 23, '_' and the FNV-1a hash of all 40 */
	cr_assert_eq(e.name_len, 32);
	cr_assert(memcmp(e.name, "A_KEY_OF_FORTY_BYTES_AN_", 24) == 0);
	eq(e.value, e.value_len, "v");
	cr_assert_eq(kmsg_syslog_sd_next(&e, v, sizeof(v), m.sd, m.sd_len, &pos), 0);

	/* without SD, host and app: nil values; no text: no MSG */
	o = (struct kmsg_syslog_fmt_opts)KMSG_SYSLOG_FMT_OPTS_INIT;
	o.flags = KMSG_SYSLOG_FMT_UTC;
	rec.text_len = 0;
	rec.fields_len = 0;
	rec.pid = 0;
	n = kmsg_syslog_format(buf, sizeof(buf), &rec, &o);
	cr_assert_str_eq(buf, "<28>1 2026-12-05T15:08:24.123456Z - - - - -");
	cr_assert_eq(kmsg_syslog_parse(&m, buf, (size_t)n, NULL), KMSG_SYSLOG_5424);
	cr_assert_eq(kmsg_syslog_format(NULL, 0, &rec, &o), n);
}

/* The tag a record's text begins with (kmsg emit -t, kmsg listen) is the
 * header's, and is not sent twice; a text that only looks like it is. */
Test(syslog, format_leaves_the_tag_to_the_header, .fini = done)
{
	static const struct { const char *text, *msg; } cases[] = {
		{ "myapp: hello", "myapp[42]: hello" },
		{ "myapp[42]: hello", "myapp[42]: hello" },
		{ "myapp[]: hello", "myapp[42]: myapp[]: hello" },
		{ "myapplet: hello", "myapp[42]: myapplet: hello" },
		{ "myapp:hello", "myapp[42]: myapp:hello" },
		{ "myapp: ", "myapp[42]: " },
		{ "other: hello", "myapp[42]: other: hello" },
	};
	struct kmsg_field f[] = { { "SYSLOG_IDENTIFIER", 0, "myapp", 5 } };

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kmsg_syslog_fmt_opts o = KMSG_SYSLOG_FMT_OPTS_INIT;
		struct kmsg_record rec;
		char buf[256], want[256];

		one_record(&rec, cases[i].text, f, 1, 42);
		o.format = KMSG_SYSLOG_3164;
		o.flags = KMSG_SYSLOG_FMT_UTC;
		kmsg_syslog_format(buf, sizeof(buf), &rec, &o);
		snprintf(want, sizeof(want), "<28>Dec  5 15:08:24 %s", cases[i].msg);
		cr_assert_str_eq(buf, want, "text \"%s\"", cases[i].text);
		o.format = KMSG_SYSLOG_5424;
		kmsg_syslog_format(buf, sizeof(buf), &rec, &o);
		cr_assert(strstr(buf, " myapp 42 - -") != NULL, "%s", buf);
		kmsg_reader_free(rd);
		kmsg_log_close(log_);
		tu_cleanup();
	}
	rd = NULL;
	log_ = NULL;
}

Test(syslog, format_3164_keeps_one_line, .fini = done)
{
	struct kmsg_field f[] = { { "SYSLOG_IDENTIFIER", 0, "my:app[x]", 9 } };
	struct kmsg_syslog_fmt_opts o = KMSG_SYSLOG_FMT_OPTS_INIT;
	struct kmsg_syslog_parse_opts po = KMSG_SYSLOG_PARSE_OPTS_INIT;
	struct kmsg_syslog_msg m;
	struct kmsg_record rec;
	char buf[256];
	int n;

	one_record(&rec, "two\nlines\ttab\x7f", f, 1, 42);
	o.format = KMSG_SYSLOG_3164;
	o.flags = KMSG_SYSLOG_FMT_UTC;
	o.hostname = "vm";
	n = kmsg_syslog_format(buf, sizeof(buf), &rec, &o);
	cr_assert_str_eq(buf, "<28>Dec  5 15:08:24 vm my_app_x_[42]: two#012lines\ttab#177");
	po.now_ns = NOW_2026_12_05;
	po.tz = KMSG_SYSLOG_TZ_OFFSET;
	cr_assert_eq(kmsg_syslog_parse(&m, buf, (size_t)n, &po), KMSG_SYSLOG_3164);
	eq(m.hostname, m.hostname_len, "vm");
	eq(m.app, m.app_len, "my_app_x_");
	cr_assert_eq(m.pid, 42);
	cr_assert_eq(m.real_ns, utc_ns(2026, 12, 5, 15, 8, 24));

	/* no host, no tag: glibc's form with an empty ident */
	o.hostname = NULL;
	rec.fields_len = 0;
	rec.pid = 0;
	kmsg_syslog_format(buf, sizeof(buf), &rec, &o);
	cr_assert_str_eq(buf, "<28>Dec  5 15:08:24 : two#012lines\ttab#177");

	o.format = 7;
	cr_assert_eq(kmsg_syslog_format(buf, sizeof(buf), &rec, &o), KMSG_EINVAL);
}
