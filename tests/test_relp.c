/*
 * test_relp.c - RELP's frames: written as librelp writes them, read as a
 * server (rsyslog's imrelp, librelp 1.11) sends them, and read from a
 * hostile server: garbage, a huge DATALEN, too many digits, a frame cut
 * anywhere.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#define MAX 65536

/* Parses s (n bytes copied to memory of exactly n, so that ASan sees a
 * read past it). */
static int parse(struct kmsg_relp_frame *f, size_t *used, const char *s, size_t n)
{
	char *copy = malloc(n ? n : 1);
	int rc;

	memcpy(copy, s, n);
	rc = kmsg_relp_parse(f, used, copy, n, MAX);
	if (rc == 1 && f->data) {
		cr_assert(f->data >= copy && f->data + f->data_len <= copy + n);
		f->data = s + (f->data - copy);
	}
	free(copy);
	return rc;
}

#define PARSE(f, used, lit) parse((f), (used), (lit), sizeof(lit) - 1)

Test(relp, format_frames)
{
	char buf[128];

	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 7, "syslog", "<13>1 - x", 9), 21);
	cr_assert(memcmp(buf, "7 syslog 9 <13>1 - x\n", 21) == 0);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 3, "close", NULL, 0), 10);
	cr_assert(memcmp(buf, "3 close 0\n", 10) == 0);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 999999999, "close", NULL, 0), 18);
	cr_assert(memcmp(buf, "999999999 close 0\n", 18) == 0);
}

Test(relp, format_reports_the_room_it_needs)
{
	char buf[8];

	memset(buf, 'Z', sizeof(buf));
	cr_assert_eq(kmsg_relp_format(buf, 5, 12, "syslog", "hello", 5), 18);
	cr_assert(memcmp(buf, "12 sy", 5) == 0);
	cr_assert_eq(buf[5], 'Z', "wrote past size");
	cr_assert_eq(kmsg_relp_format(NULL, 0, 1, "syslog", "x", 1), 13);
}

Test(relp, format_refuses_what_no_frame_carries)
{
	char buf[64];

	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 1000000000, "syslog", "x", 1),
		     KMSG_EINVAL);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 1, "sys log", "x", 1), KMSG_EINVAL);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 1, "", "x", 1), KMSG_EINVAL);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 1,
				      "abcdefghijklmnopqrstuvwxyzabcdefg", NULL, 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_relp_format(buf, sizeof(buf), 1, "syslog", "x",
				      (size_t)KMSG_RELP_DATALEN_MAX + 1), KMSG_EINVAL);
}

Test(relp, open_offers_as_librelp_reads_them)
{
	static const char want[] = "1 open 55 relp_version=0\nrelp_software=kmsg,0.1.0\n"
				   "commands=syslog\n";
	char buf[256];

	cr_assert_eq(kmsg_relp_format_open(buf, sizeof(buf), 1, "kmsg,0.1.0"),
		     (int)sizeof(want) - 1);
	cr_assert(memcmp(buf, want, sizeof(want) - 1) == 0, "got %.*s",
		  (int)sizeof(want) - 1, buf);
	cr_assert_eq(kmsg_relp_format_open(buf, sizeof(buf), 1, "two\nlines"), KMSG_EINVAL);
}

Test(relp, txnr_ends_the_session_at_the_ninth_digit)
{
	cr_assert_eq(kmsg_relp_next_txnr(1), 2);
	cr_assert_eq(kmsg_relp_next_txnr(999999998), 999999999);
	cr_assert_eq(kmsg_relp_next_txnr(999999999), 0);
}

/* What imrelp (librelp 1.11) answered on loopback, byte for byte. */
Test(relp, the_servers_answers)
{
	static const char open_rsp[] =
		"1 rsp 93 200 OK\nrelp_version=0\n"
		"relp_software=librelp,1.11.0,http://librelp.adiscon.com\n"
		"commands=syslog\n";
	struct kmsg_relp_frame f;
	const char *text, *cmd;
	size_t used, tl, cl;

	cr_assert_eq(PARSE(&f, &used, open_rsp), 1);
	cr_assert_eq(used, sizeof(open_rsp) - 1);
	cr_assert_eq(f.txnr, 1);
	cr_assert_str_eq(f.command, "rsp");
	cr_assert_eq(f.data_len, 93);
	cr_assert_eq(kmsg_relp_rsp(&text, &tl, &cmd, &cl, f.data, f.data_len), 200);
	cr_assert(tl == 2 && memcmp(text, "OK", 2) == 0);
	cr_assert_eq(kmsg_relp_offer(cmd, cl, "relp_version", NULL), 1);
	cr_assert_eq(kmsg_relp_offer(cmd, cl, "commands", "syslog"), 1);
	cr_assert_eq(kmsg_relp_offer(cmd, cl, "commands", "sys"), 0);
	cr_assert_eq(kmsg_relp_offer(cmd, cl, "relp_softwar", NULL), 0);

	cr_assert_eq(PARSE(&f, &used, "2 rsp 6 200 OK\n3 rsp"), 1);
	cr_assert_eq(used, 15);
	cr_assert_eq(f.txnr, 2);
	cr_assert_eq(PARSE(&f, &used, "0 serverclose 0\n"), 1);
	cr_assert_eq(f.txnr, 0);
	cr_assert_str_eq(f.command, "serverclose");
	cr_assert_null(f.data);
	cr_assert_eq(used, 16);
	/* the rsp of "close": no data at all */
	cr_assert_eq(PARSE(&f, &used, "2 rsp 0\n0 serverclose 0\n"), 1);
	cr_assert(f.txnr == 2 && used == 8 && f.data_len == 0);
}

Test(relp, rsp_codes)
{
	const char *text;
	size_t tl;

	cr_assert_eq(kmsg_relp_rsp(&text, &tl, NULL, NULL, "500 queue full", 14), 500);
	cr_assert(tl == 10 && memcmp(text, "queue full", 10) == 0);
	cr_assert_eq(kmsg_relp_rsp(NULL, NULL, NULL, NULL, "200", 3), 200);
	cr_assert_eq(kmsg_relp_rsp(NULL, NULL, NULL, NULL, "20", 2), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_relp_rsp(NULL, NULL, NULL, NULL, "2000 OK", 7), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_relp_rsp(NULL, NULL, NULL, NULL, "OK 200", 6), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_relp_rsp(NULL, NULL, NULL, NULL, "", 0), KMSG_ECORRUPT);
}

Test(relp, a_frame_cut_anywhere_asks_for_more)
{
	static const char s[] = "12 rsp 6 200 OK\n";
	struct kmsg_relp_frame f;
	size_t used = 99;

	for (size_t n = 0; n < sizeof(s) - 1; n++) {
		cr_assert_eq(parse(&f, &used, s, n), 0, "cut at %zu", n);
		cr_assert_eq(used, 99, "stored at %zu", n);
	}
	cr_assert_eq(parse(&f, &used, s, sizeof(s) - 1), 1);
}

Test(relp, garbage_is_refused)
{
	static const char *const bad[] = {
		"x", " 1 rsp 0\n", "1  rsp 0\n", "1 rsp 0 \n", "1 rsp 0x", "1 r5p 0\n",
		"1 rsp 3 200X", "1 rsp 3 200\r\n", "1234567890 rsp 0\n", "1 rsp 1234567890 ",
		"1 abcdefghijklmnopqrstuvwxyzabcdefg 0\n", "1 rsp -1\n", "-1 rsp 0\n",
		"1 rsp  3 200\n", "1 \n",
	};
	struct kmsg_relp_frame f;
	size_t used;

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		cr_assert_eq(parse(&f, &used, bad[i], strlen(bad[i])), KMSG_ECORRUPT,
			     "took \"%s\"", bad[i]);
}

Test(relp, a_huge_datalen_is_refused_before_its_bytes)
{
	struct kmsg_relp_frame f;
	size_t used;

	cr_assert_eq(PARSE(&f, &used, "1 rsp 999999999 "), KMSG_ETOOLONG);
	cr_assert_eq(PARSE(&f, &used, "1 rsp 65537 "), KMSG_ETOOLONG);
	/* the bound itself is allowed: the frame is waited for */
	cr_assert_eq(PARSE(&f, &used, "1 rsp 65536 "), 0);
}
