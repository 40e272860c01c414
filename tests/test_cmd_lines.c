/*
 * test_cmd_lines.c - the line reader every line-by-line input goes
 * through (cmd/lines.c), on its own: input handed over in awkward pieces
 * (a byte at a time, lines split across reads), long lines in pieces or
 * skipped, CR LF, NULs, and the byte after a line.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lines.h"

/* An input that gives at most step bytes per read (0: all there is),
 * then fails with err at the end if err is set. */
struct feed {
	const char *p;
	size_t len, pos, step;
	int err;
};

static ssize_t feed_read(void *ctx, char *buf, size_t n)
{
	struct feed *f = ctx;

	if (f->pos == f->len && f->err)
		return -f->err;
	if (f->step && n > f->step)
		n = f->step;
	if (n > f->len - f->pos)
		n = f->len - f->pos;
	memcpy(buf, f->p + f->pos, n);
	f->pos += n;
	return (ssize_t)n;
}

/*
 * Reads all of in (len bytes) in reads of step bytes and renders what
 * came back as a user would see it: each line in [], NULs as \0, then
 * '$' for a newline, '>' for a piece that goes on, '.' for the end of the
 * input, "(N)" for a line skipped at N bytes, "^c" for the byte after a
 * line with LINES_LOOKAHEAD ("^$" at the end of the input).
 */
static char *render(const char *in, size_t len, size_t step, size_t max, unsigned flags)
{
	struct feed f = { .p = in, .len = len, .step = step };
	struct lines *lr = lines_new(max, flags, feed_read, &f);
	struct line ln;
	char *out;
	size_t outlen;
	FILE *o = open_memstream(&out, &outlen);
	int rc;

	cr_assert_not_null(lr);
	while ((rc = lines_next(lr, &ln)) > 0) {
		putc('[', o);
		for (size_t i = 0; i < ln.len; i++) {
			if (ln.p[i] == '\0')
				fputs("\\0", o);
			else
				putc(ln.p[i], o);
		}
		putc(']', o);
		if (ln.total)
			fprintf(o, "(%llu)", (unsigned long long)ln.total);
		putc(ln.end == LINE_NEWLINE ? '$' : ln.end == LINE_EOF ? '.' : '>', o);
		if ((flags & LINES_LOOKAHEAD) && ln.end == LINE_NEWLINE) {
			int c = lines_next_byte(lr);

			cr_assert_neq(c, LINES_UNREAD, "the byte after a line is known");
			if (c == LINES_END)
				fputs("^$", o);
			else
				fprintf(o, "^%c", c);
		}
	}
	cr_assert_eq(rc, 0, "the end of the input, not an error");
	cr_assert_eq(lines_next(lr, &ln), 0, "and again the end");
	lines_free(lr);
	fclose(o);
	return out;
}

/* The same input must read the same in reads of any size. */
static void expect(const char *in, size_t max, unsigned flags, const char *want)
{
	size_t len = strlen(in);
	static const size_t steps[] = { 0, 1, 2, 3, 7 };

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		char *got = render(in, len, steps[i], max, flags);

		cr_assert_str_eq(got, want, "'%s' read %zu bytes at a time", in, steps[i]);
		free(got);
	}
}

Test(lines, lines_whole_and_split_across_reads)
{
	expect("one\ntwo\nthree\n", 100, 0, "[one]$[two]$[three]$");
	expect("\n\n", 100, 0, "[]$[]$");
}

Test(lines, an_empty_input_has_no_lines)
{
	expect("", 100, 0, "");
	expect("", 100, LINES_LOOKAHEAD | LINES_PIECES, "");
}

Test(lines, a_last_line_without_its_newline_is_a_line)
{
	expect("one\ntwo", 100, 0, "[one]$[two].");
	expect("x", 100, 0, "[x].");
}

Test(lines, cr_lf_loses_the_cr_only_when_asked)
{
	expect("a\r\nb\r\n\r\nc\r", 100, LINES_CRLF, "[a]$[b]$[]$[c\r].");
	expect("a\r\nb\r", 100, 0, "[a\r]$[b\r].");
	expect("a\r\r\n", 100, LINES_CRLF, "[a\r]$");
}

Test(lines, nuls_are_bytes_of_the_line)
{
	static const char in[] = "a\0b\n\0\n";
	char *got = render(in, sizeof(in) - 1, 1, 100, 0);

	cr_assert_str_eq(got, "[a\\0b]$[\\0]$");
	free(got);
}

Test(lines, a_line_of_the_maximum_is_whole_one_past_it_is_not)
{
	/* the maximum counts the bytes before the newline, a CR too */
	expect("12345\n", 5, LINES_PIECES, "[12345]$");
	expect("123456\n", 5, LINES_PIECES, "[12345]>[6]$");
	expect("1234\r\n", 5, LINES_PIECES | LINES_CRLF, "[1234]$");
	expect("12345\r\n", 5, LINES_PIECES | LINES_CRLF, "[12345]>[]$");
	expect("12345", 5, LINES_PIECES, "[12345].");
	expect("123456", 5, LINES_PIECES, "[12345]>[6].");
	expect("1234567890123\nab\n", 5, LINES_PIECES,
	       "[12345]>[67890]>[123]$[ab]$");
}

Test(lines, a_long_line_skipped_comes_with_its_length)
{
	expect("12345\n", 5, 0, "[12345]$");
	expect("123456\nab\n", 5, 0, "[12345](6)$[ab]$");
	expect("1234567890123\nab", 5, 0, "[12345](13)$[ab].");
	expect("1234567890\r\n", 5, LINES_CRLF, "[12345](10)$");
	expect("1234567890\r\n", 5, 0, "[12345](11)$");
	expect("12345678", 5, 0, "[12345](8).");
	expect("ab\n123456\n", 5, LINES_LOOKAHEAD, "[ab]$^1[12345](6)$^$");
}

Test(lines, a_piece_does_not_cut_a_utf8_sequence_when_asked)
{
	/* é is c3 a9, € is e2 82 ac: each would straddle the 5th byte */
	expect("1234\xc3\xa9xy\n", 5, LINES_PIECES | LINES_UTF8,
	       "[1234]>[\xc3\xa9xy]$");
	expect("123\xe2\x82\xac\n", 5, LINES_PIECES | LINES_UTF8,
	       "[123]>[\xe2\x82\xac]$");
	expect("1234\xc3\xa9xy\n", 5, LINES_PIECES, "[1234\xc3]>[\xa9xy]$");
	/* a sequence that ends at the maximum is whole */
	expect("123\xc3\xa9z\n", 5, LINES_PIECES | LINES_UTF8, "[123\xc3\xa9]>[z]$");
}

Test(lines, utf8_cut_keeps_whole_sequences)
{
	cr_assert_eq(utf8_cut("ab", 2), 2);
	cr_assert_eq(utf8_cut("a\xc3", 2), 1);
	cr_assert_eq(utf8_cut("a\xc3\xa9", 3), 3);
	cr_assert_eq(utf8_cut("a\xf0\x9f\x98", 4), 1);
	cr_assert_eq(utf8_cut("a\xf0\x9f\x98\x80", 5), 5);
	cr_assert_eq(utf8_cut("a\xa9\xa9\xa9", 4), 4, "stray continuation bytes stay");
	cr_assert_eq(utf8_cut("\xe2\x82", 2), 2, "never nothing");
}

Test(lines, the_byte_after_a_line_is_known_before_it_is_given)
{
	expect("<6>a\n cont\n<5>b\n", 100, LINES_LOOKAHEAD,
	       "[<6>a]$^ [ cont]$^<[<5>b]$^$");
	expect("a\nb", 100, LINES_LOOKAHEAD, "[a]$^b[b].");
}

Test(lines, a_line_is_given_as_soon_as_its_newline_is_read)
{
	/* an interactive input: no read past the line before giving it */
	struct feed f = { .p = "one\ntwo\n", .len = 8, .step = 4 };
	struct lines *lr = lines_new(100, 0, feed_read, &f);
	struct line ln;

	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(f.pos, 4, "one read of the 4 bytes the first line took");
	cr_assert_eq(lines_next_byte(lr), LINES_UNREAD);
	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.off, 4, "the second line's place in the input");
	lines_free(lr);
}

Test(lines, a_read_error_comes_after_the_lines_before_it)
{
	struct feed f = { .p = "one\ntw", .len = 6, .err = EIO };
	struct lines *lr = lines_new(100, 0, feed_read, &f);
	struct line ln;

	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.len, 3);
	cr_assert_eq(lines_next(lr, &ln), -EIO);
	lines_free(lr);
}

Test(lines, a_long_line_across_many_chunks_keeps_its_place)
{
	/* 3 MiB of 'x' then a line: longer than the buffer itself */
	size_t n = 3u << 20;
	char *in = malloc(n + 4);
	struct feed f = { .p = in, .len = n + 4 };
	struct lines *lr;
	struct line ln;

	memset(in, 'x', n);
	memcpy(in + n, "\nab\n", 4);
	lr = lines_new(1000, 0, feed_read, &f);
	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.total, n);
	cr_assert_eq(ln.len, 1000);
	cr_assert_eq(ln.off, 0);
	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.len, 2);
	cr_assert_eq(memcmp(ln.p, "ab", 2), 0);
	cr_assert_eq(ln.off, n + 1, "the line after it is where it is in the input");
	cr_assert_eq(lines_next(lr, &ln), 0);
	lines_free(lr);
	free(in);
}

Test(lines, a_batch_holds_the_whole_lines_read_together_up_to_the_maximum)
{
	/* read at once: as many whole lines as fit in the maximum */
	struct feed f = { .p = "ab\ncd\nef\ngh", .len = 11 };
	struct lines *lr = lines_new(6, LINES_BATCH | LINES_PIECES, feed_read, &f);
	struct line ln;

	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.len, 5);
	cr_assert_eq(memcmp(ln.p, "ab\ncd", 5), 0);
	cr_assert_eq(ln.end, LINE_NEWLINE);
	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.len, 2);
	cr_assert_eq(memcmp(ln.p, "ef", 2), 0);
	cr_assert_eq(lines_next(lr, &ln), 1);
	cr_assert_eq(ln.end, LINE_EOF);
	cr_assert_eq(memcmp(ln.p, "gh", 2), 0);
	cr_assert_eq(lines_next(lr, &ln), 0);
	lines_free(lr);
	/* a byte at a time, the same bytes, line by line */
	char *got = render("ab\ncd\nef\ngh", 11, 1, 6, LINES_BATCH);

	cr_assert_str_eq(got, "[ab]$[cd]$[ef]$[gh].");
	free(got);
	/* a line too long for a batch is a line of its own */
	expect("ab\n12345678\n", 6, LINES_BATCH | LINES_PIECES, "[ab]$[123456]>[78]$");
}
