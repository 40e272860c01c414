/*
 * test_escape.c - the escapers' vector fast path gives, byte for byte,
 * what their scalar path gives, on text built from the pieces that matter
 * to it: runs of plain ASCII, printable UTF-8 of two and three bytes,
 * sequences it must leave to the scalar path (C1 and bidi controls,
 * surrogates, overlong forms, four-byte characters, noncharacters), bytes
 * that are not UTF-8, and each output's specials; at every start and end,
 * so that every alignment and tail length is seen.  Each escaper writes
 * into a buffer of exactly the room it promises to need (ASan, in the
 * sanitizer build, sees a store past it).  fuzz_text does the same on
 * what the fuzzer makes up.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

static const char *const pieces[] = {
	"usb 1-1: new device", "a", "ok, done in 12 ms ", "\xc3\xa9", "\xc3\xaf",
	"\xe5\xad\x98\xe5\x82\xa8", "\xd0\x96", "\xdf\xbf", "\xe1\x80\x80",
	"\xee\x80\x80", "\xec\xbf\xbf", "\xe2\x80\xae", "\xe2\x80\x94", "\xc2\x9b",
	"\xc2\xa0", "\xd8\x9c", "\xd8\xa7", "\xed\xa0\x80", "\xe0\x80\xaf",
	"\xe0\xa4\x85", "\xef\xbf\xbe", "\xef\xbc\x81", "\xf0\x9f\x98\x80",
	"\x80", "\xbf", "\xc3", "\xe5\xad", "\xff", "\xf5\x80\x80\x80", "\t", "\n",
	"\r", "\"", "\\", "\x7f", "\x1b[31m",
};

#define NPIECES (sizeof(pieces) / sizeof(pieces[0]))

/* Text of about n bytes, pieces chosen by a fixed sequence from seed. */
static size_t make_text(char *buf, size_t n, uint32_t seed)
{
	size_t len = 0, k;

	for (;;) {
		seed = seed * 1103515245u + 12345u;
		k = strlen(pieces[(seed >> 8) % NPIECES]);
		if (len + k > n)
			return len;
		memcpy(buf + len, pieces[(seed >> 8) % NPIECES], k);
		len += k;
	}
}

/* Both paths of each escaper over t (len bytes) agree; exact room each. */
static void check_all(const char *t, size_t len)
{
	size_t nl = kmsg__count_newlines(t, len);

	for (int mode = ESC_TEXT; mode <= ESC_NONE; mode++) {
		for (int ascii = 0; ascii <= 1; ascii++) {
			for (size_t indent = 0; indent <= 4; indent += 4) {
				size_t room = 4 * len + nl * indent + !len;
				char *a = malloc(room), *b = malloc(room);
				char *ea = kmsg__put_text(a, t, len, indent, (enum esc_mode)mode, ascii);
				char *eb = kmsg__put_text_scalar(b, t, len, indent, (enum esc_mode)mode, ascii);

				cr_assert_eq(ea - a, eb - b, "text mode %d ascii %d, %zu bytes", mode, ascii, len);
				cr_assert(memcmp(a, b, (size_t)(ea - a)) == 0,
					  "text mode %d ascii %d, %zu bytes", mode, ascii, len);
				free(a);
				free(b);
			}
		}
	}
	for (int noesc = 0; noesc <= 1; noesc++) {
		char *a = malloc(6 * len + !len), *b = malloc(6 * len + !len);
		char *ea = kmsg__put_json_text(a, t, len, noesc);
		char *eb = kmsg__put_json_text_scalar(b, t, len, noesc);

		cr_assert_eq(ea - a, eb - b, "json noesc %d, %zu bytes", noesc, len);
		cr_assert(memcmp(a, b, (size_t)(ea - a)) == 0, "json noesc %d, %zu bytes", noesc, len);
		free(a);
		free(b);
	}
	{
		char *a = malloc(4 * len + !len), *b = malloc(4 * len + !len);
		char *ea = kmsg__put_kmsg_text(a, t, len);
		char *eb = kmsg__put_kmsg_text_scalar(b, t, len);

		cr_assert_eq(ea - a, eb - b, "kmsg, %zu bytes", len);
		cr_assert(memcmp(a, b, (size_t)(ea - a)) == 0, "kmsg, %zu bytes", len);
		free(a);
		free(b);
	}
}

Test(escape, vector_path_matches_scalar_at_every_start_and_end)
{
	char text[96];

	for (uint32_t seed = 1; seed <= 200; seed++) {
		size_t n = make_text(text, sizeof(text), seed);

		for (size_t start = 0; start <= 17 && start <= n; start++)
			for (size_t end = start; end <= n; end++)
				check_all(text + start, end - start);
	}
}

Test(escape, long_runs_of_each_piece)
{
	char text[200];

	for (size_t i = 0; i < NPIECES; i++) {
		size_t k = strlen(pieces[i]), len = 0;

		while (len + k <= sizeof(text)) {
			memcpy(text + len, pieces[i], k);
			len += k;
		}
		for (size_t cut = 0; cut <= len; cut += 7)
			check_all(text + len - cut, cut);
	}
}

Test(escape, printable_utf8_is_copied_as_it_is)
{
	static const char t[] = "p\xc3\xa9riph\xc3\xa9rique \xe5\xad\x98\xe5\x82\xa8 na\xc3\xafve ok";
	char out[4 * sizeof(t)];
	char *e = kmsg__put_text(out, t, sizeof(t) - 1, 0, ESC_TEXT, 0);

	cr_assert_eq((size_t)(e - out), sizeof(t) - 1);
	cr_assert(memcmp(out, t, sizeof(t) - 1) == 0);
	e = kmsg__put_text(out, t, sizeof(t) - 1, 0, ESC_TEXT, 1);
	cr_assert_eq((size_t)(e - out), sizeof(t) - 1 + 3 * 12, "12 bytes from 0x80 up, each \\xNN");
}
