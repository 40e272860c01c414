/*
 * test_export.c - the Journal Export Format renderer (lib/text/export.c,
 * KMSG_OUT_EXPORT) on records made by hand: what journal-remote would
 * refuse or misread never comes out of it.  tests/cli/export.sh imports
 * real logs with the real journal-remote.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include <kmsg/kmsg.h>

/* Renders rec with a new export renderer; the text stays until the next
 * call (the renderer is kept). */
static struct kmsg_fmt *f;

static void setup(void)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;

	o.output = KMSG_OUT_EXPORT;
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
}

static void teardown(void)
{
	kmsg_fmt_free(f);
}

TestSuite(export, .init = setup, .fini = teardown);

static const char *render(const struct kmsg_record *rec, int *len)
{
	const char *out;

	*len = kmsg_fmt_record(&out, f, rec);
	cr_assert_gt(*len, 0, "render: %d", *len);
	return out;
}

static struct kmsg_record rec(const char *text)
{
	struct kmsg_record r;

	memset(&r, 0, sizeof(r));
	r.seq = 7;
	r.real_ns = INT64_C(1700000000123456789);
	r.boot_ns = INT64_C(5000001999);
	r.boot_id = UINT64_C(0xaaaa000011112222);
	r.facility = 3;
	r.level = 4;
	r.text = text;
	r.text_len = strlen(text);
	return r;
}

/* 1 if the n bytes at s hold line (its newline included) at a line's start */
static int has_line(const char *s, int n, const char *line)
{
	size_t l = strlen(line);

	for (const char *p = s; p + l <= s + n; p++) {
		if ((p == s || p[-1] == '\n') && memcmp(p, line, l) == 0)
			return 1;
	}
	return 0;
}

static size_t add_field(unsigned char *area, size_t pos, const char *kv, size_t len)
{
	area[pos] = (unsigned char)(len & 0xff);
	area[pos + 1] = (unsigned char)(len >> 8);
	memcpy(area + pos + 2, kv, len);
	return pos + 2 + len;
}

Test(export, an_entry_has_times_boot_and_members)
{
	struct kmsg_record r = rec("hello");
	int n;
	const char *s;

	r.seq_id = UINT64_C(0x0123456789abcdef);
	r.pid = 42;
	r.caller = 43;
	s = render(&r, &n);
	cr_assert(has_line(s, n, "__REALTIME_TIMESTAMP=1700000000123456\n"));
	cr_assert(has_line(s, n, "__MONOTONIC_TIMESTAMP=5000001\n"));
	cr_assert(has_line(s, n, "MESSAGE=hello\n"));
	cr_assert(has_line(s, n, "PRIORITY=4\n"));
	cr_assert(has_line(s, n, "SYSLOG_FACILITY=3\n"));
	cr_assert(has_line(s, n, "KMSG_SEQ=7\n"));
	cr_assert(has_line(s, n, "KMSG_SEQ_ID=0123456789abcdef\n"));
	cr_assert(has_line(s, n, "KMSG_CLAIMED_PID=42\n"));
	cr_assert(has_line(s, n, "KMSG_CALLER=T43\n"));
	cr_assert(!has_line(s, n, "_PID="), "the writer's word is never _PID");
	cr_assert(has_line(s, n, "_BOOT_ID=aaaa000011112222"));
	cr_assert(n >= 2 && s[n - 1] == '\n' && s[n - 2] == '\n', "ends in an empty line");
}

Test(export, the_boot_id_is_128_bits_and_stable)
{
	struct kmsg_record a = rec("a"), b = rec("b"), c = rec("c");
	char ida[64], idb[64], idc[64];
	const char *s, *p;
	int n;

	c.boot_id = UINT64_C(0xaaab000011112222);
	s = render(&a, &n);
	p = memmem(s, (size_t)n, "_BOOT_ID=", 9);
	cr_assert_not_null(p);
	memcpy(ida, p + 9, 33);
	s = render(&b, &n);
	memcpy(idb, memmem(s, (size_t)n, "_BOOT_ID=", 9) + 9, 33);
	s = render(&c, &n);
	memcpy(idc, memmem(s, (size_t)n, "_BOOT_ID=", 9) + 9, 33);
	cr_assert_eq(ida[32], '\n');
	cr_assert_eq(memcmp(ida, idb, 32), 0, "one boot, one id");
	cr_assert_neq(memcmp(ida + 16, idc + 16, 16), 0, "another boot, another second half");
	cr_assert(strchr("89ab", ida[16]), "RFC 4122's variant: %c", ida[16]);
	for (int i = 0; i < 32; i++)
		cr_assert(strchr("0123456789abcdef", ida[i]));
}

Test(export, times_journal_remote_would_refuse_are_moved_into_range)
{
	struct kmsg_record r = rec("old");
	int n;
	const char *s;

	r.real_ns = -5;
	r.boot_ns = -1;
	s = render(&r, &n);
	cr_assert(has_line(s, n, "__REALTIME_TIMESTAMP=1\n"));
	cr_assert(has_line(s, n, "__MONOTONIC_TIMESTAMP=0\n"));
	r.real_ns = 999;
	s = render(&r, &n);
	cr_assert(has_line(s, n, "__REALTIME_TIMESTAMP=1\n"));
}

Test(export, values_that_are_no_plain_text_take_the_binary_form)
{
	static const char *const binary[] = {
		"two\nlines", "nul\0x", "esc\x1b", "del\x7f", "c1 \xc2\x85", "bad \xff",
		"cut \xc3",
	};
	static const size_t lens[] = { 9, 5, 4, 4, 5, 5, 5 };

	for (size_t i = 0; i < sizeof(binary) / sizeof(binary[0]); i++) {
		struct kmsg_record r = rec("");
		char want[64];
		const char *s;
		int n;

		r.text = binary[i];
		r.text_len = lens[i];
		s = render(&r, &n);
		memcpy(want, "\nMESSAGE\n", 9);
		for (int b = 0; b < 8; b++)
			want[9 + b] = (char)(b == 0 ? lens[i] : 0);
		memcpy(want + 17, binary[i], lens[i]);
		want[17 + lens[i]] = '\n';
		cr_assert_not_null(memmem(s, (size_t)n, want, 18 + lens[i]), "value %zu", i);
	}
	{
		struct kmsg_record r = rec("tab\there ünï ✓");
		const char *s;
		int n;

		s = render(&r, &n);
		cr_assert(has_line(s, n, "MESSAGE=tab\there ünï ✓\n"));
	}
}

Test(export, fields_keep_their_keys_and_the_vouched_boot_id_is_renamed)
{
	unsigned char area[256];
	struct kmsg_record r = rec("x");
	size_t pos = 0;
	const char *s;
	int n;

	pos = add_field(area, pos, "UNIT=web", 8);
	pos = add_field(area, pos, "_PID=12", 7);
	pos = add_field(area, pos, "_BOOT_ID=ffff", 13);
	pos = add_field(area, pos, "MULTI=a\nb", 9);
	pos = add_field(area, pos, "EMPTY=", 6);
	r.fields = area;
	r.fields_len = pos;
	s = render(&r, &n);
	cr_assert(has_line(s, n, "UNIT=web\n"));
	cr_assert(has_line(s, n, "_PID=12\n"), "kmsg listen's word, vouched: journald's");
	cr_assert(has_line(s, n, "KMSG_VOUCHED_BOOT_ID=ffff\n"));
	cr_assert(!has_line(s, n, "_BOOT_ID=ffff"), "the entry's boot is never replaced");
	cr_assert_not_null(memmem(s, (size_t)n, "\nMULTI\n\x03\0\0\0\0\0\0\0a\nb\n", 17));
	cr_assert(has_line(s, n, "EMPTY=\n"));
}

Test(export, a_key_no_journal_name_can_be_and_fields_past_1000_are_counted)
{
	static unsigned char area[8192];
	struct kmsg_record r = rec("x");
	size_t pos = 0;
	const char *s;
	int n, count = 0;
	char key[70];

	memset(key, 'A', sizeof(key));
	key[0] = '_';
	key[65] = '=';
	pos = add_field(area, pos, key, 66);              /* a vouched key of 65 bytes */
	pos = add_field(area, pos, "X=1\nINJECTED", 12);   /* one that would smuggle a line */
	for (int i = 0; i < 1010; i++)
		pos = add_field(area, pos, "B=", 2);
	r.fields = area;
	r.fields_len = pos;
	s = render(&r, &n);
	for (const char *p = s; (p = memmem(p, (size_t)(s + n - p), "\nB=\n", 4)); p += 3)
		count++;
	cr_assert_not_null(memmem(s, (size_t)n, "\nX\n\x0a\0\0\0\0\0\0\0" "1\nINJECTED\n", 22),
			   "the newline in the value: binary form, framed by its length");
	cr_assert_eq(count, 999, "fields written after X: %d", count);
	cr_assert(has_line(s, n, "KMSG_FIELDS_LEFT_OUT=12\n"));
	cr_assert(!has_line(s, n, "_AAAA"));
}

Test(export, no_priority_for_text_that_named_none)
{
	struct kmsg_record r = rec("x");
	const char *s;
	int n;

	r.facility = KMSG_PRIO_NONE;
	r.level = KMSG_PRIO_NONE;
	s = render(&r, &n);
	cr_assert(!has_line(s, n, "PRIORITY="));
	cr_assert(!has_line(s, n, "SYSLOG_FACILITY="));
	cr_assert(has_line(s, n, "__REALTIME_TIMESTAMP="));
}
