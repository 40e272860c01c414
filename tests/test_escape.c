/*
 * test_escape.c - the escapers' vector fast path gives, byte for byte,
 * what their scalar path gives, on text built from the pieces that matter
 * to it: runs of plain ASCII, printable UTF-8 of two and three bytes,
 * sequences it must leave to the scalar path (C1 and bidi controls, the
 * invisible characters and fillers and their neighbours in the blocks the
 * fast path knows, surrogates, overlong forms, four-byte characters,
 * noncharacters), bytes
 * that are not UTF-8, and each output's specials; at every start and end,
 * so that every alignment and tail length is seen.  Each escaper writes
 * into a buffer of exactly the room it promises to need (ASan, in the
 * sanitizer build, sees a store past it).  fuzz_text does the same on
 * what the fuzzer makes up.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
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
	/* U+034F, U+034E; U+115F, U+1100; U+17B4, U+17B0; U+180E, U+1820;
	 * U+3164, U+3131, U+3042; U+2028, U+200B, U+FEFF, U+E0041, U+00AD */
	"\xcd\x8f", "\xcd\x8e", "\xe1\x85\x9f", "\xe1\x84\x80",
	"\xe1\x9e\xb4", "\xe1\x9e\xb0", "\xe1\xa0\x8e", "\xe1\xa0\xa0",
	"\xe3\x85\xa4", "\xe3\x84\xb1", "\xe3\x81\x82", "\xe2\x80\xa8",
	"\xe2\x80\x8b", "\xef\xbb\xbf", "\xf3\xa0\x81\x81", "\xc2\xad",
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

/* Each UTF-8 sequence in t (NUL-separated, ending in an empty one) through
 * put_text() and put_json_text(): escaped (\xNN a byte; \uXXXX) or not. */
static void check_each(const char *t, int escaped)
{
	for (; *t; t += strlen(t) + 1) {
		size_t len = strlen(t);
		char out[256], json[64], want[64] = "";
		char *e;

		for (size_t i = 0; i < len; i++)
			snprintf(want + 4 * i, sizeof(want) - 4 * i, "\\x%02x", (unsigned char)t[i]);
		/* long enough for the vector path, with the sequence inside */
		for (size_t pad = 0; pad <= 20; pad += 20) {
			char in[64], exp[128];

			snprintf(in, sizeof(in), "%.*s%s%.*s", (int)pad, "01234567890123456789",
				 t, (int)pad, "abcdefghijabcdefghij");
			snprintf(exp, sizeof(exp), "%.*s%s%.*s", (int)pad, "01234567890123456789",
				 escaped ? want : t, (int)pad, "abcdefghijabcdefghij");
			e = kmsg__put_text(out, in, strlen(in), 0, ESC_TEXT, 0);
			cr_assert_eq((size_t)(e - out), strlen(exp), "%s", want);
			cr_assert(memcmp(out, exp, strlen(exp)) == 0, "%s", want);
		}
		e = kmsg__put_json_text(json, t, len, 0);
		*e = '\0';
		if (escaped)
			cr_assert(strncmp(json, "\\u", 2) == 0, "%s in JSON: %s", want, json);
		else
			cr_assert_str_eq(json, t, "%s in JSON", want);
	}
}

Test(escape, invisible_and_line_breaking_characters_are_escaped)
{
	/* U+2028, U+2029; U+00AD, U+034F, U+180E, U+200B..U+200D,
	 * U+2060..U+2064, U+206A, U+206F, U+FEFF, U+FFF9, U+FFFB, U+1BCA0,
	 * U+1D173, U+E0001, U+E0041, U+E007F; U+115F, U+1160, U+17B4,
	 * U+17B5, U+3164, U+FFA0; and the bidi controls as before */
	check_each("\xe2\x80\xa8\0\xe2\x80\xa9\0\xc2\xad\0\xcd\x8f\0"
		   "\xe1\xa0\x8e\0\xe2\x80\x8b\0\xe2\x80\x8c\0\xe2\x80\x8d\0"
		   "\xe2\x81\xa0\0\xe2\x81\xa1\0\xe2\x81\xa4\0\xe2\x81\xaa\0"
		   "\xe2\x81\xaf\0\xef\xbb\xbf\0\xef\xbf\xb9\0\xef\xbf\xbb\0"
		   "\xf0\x9b\xb2\xa0\0\xf0\x9d\x85\xb3\0\xf3\xa0\x80\x81\0"
		   "\xf3\xa0\x81\x81\0\xf3\xa0\x81\xbf\0\xe1\x85\x9f\0"
		   "\xe1\x85\xa0\0\xe1\x9e\xb4\0\xe1\x9e\xb5\0\xe3\x85\xa4\0"
		   "\xef\xbe\xa0\0\xe2\x80\x8e\0\xe2\x80\xae\0\xe2\x81\xa6\0\xd8\x9c\0", 1);
}

Test(escape, their_printable_neighbours_are_not)
{
	/* U+00AC, U+00AE, U+034E, U+0350, U+115E, U+1161, U+17B3, U+17B6,
	 * U+180D (a variation selector), U+180F, U+2027, U+202F, U+205F,
	 * U+2070, U+3163, U+3165, U+FE0F (the emoji selector), U+FEFE, U+FF9F,
	 * U+FFA1, U+FFF8, U+FFFC, U+1BC9F, U+1BCA4, U+1D172, U+1D17B,
	 * U+E0100 (an ideographic variation selector) */
	check_each("\xc2\xac\0\xc2\xae\0\xcd\x8e\0\xcd\x90\0\xe1\x85\x9e\0"
		   "\xe1\x85\xa1\0\xe1\x9e\xb3\0\xe1\x9e\xb6\0\xe1\xa0\x8d\0"
		   "\xe1\xa0\x8f\0\xe2\x80\xa7\0\xe2\x80\xaf\0\xe2\x81\x9f\0"
		   "\xe2\x81\xb0\0\xe3\x85\xa3\0\xe3\x85\xa5\0\xef\xb8\x8f\0"
		   "\xef\xbb\xbe\0\xef\xbe\x9f\0\xef\xbe\xa1\0\xef\xbf\xb8\0"
		   "\xef\xbf\xbc\0\xf0\x9b\xb2\x9f\0\xf0\x9b\xb2\xa4\0"
		   "\xf0\x9d\x85\xb2\0\xf0\x9d\x85\xbb\0\xf3\xa0\x84\x80\0", 0);
}
