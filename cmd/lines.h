/*
 * lines.h - input read line by line, in large chunks and bounded memory
 * (lines.c): kmsg emit's stdin, read -F's dmesg text and read -K's
 * /dev/kmsg records all come through this one reader.
 */
#ifndef KMSG_LINES_H
#define KMSG_LINES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Where the reader gets its input: up to n (> 0) bytes into buf.  Returns
 * their number, 0 at the end of the input, or a negative code, which
 * lines_next() hands back as it is.  src_read(), read(2) on a descriptor
 * and a character device giving one record per read() all fit.
 */
typedef ssize_t lines_read_fn(void *ctx, char *buf, size_t n);

/* What a caller asks of lines_new(). */
enum {
	/* A line longer than the maximum comes in pieces of the maximum,
	 * each but the last flagged LINE_GOES_ON.  Without it such a line
	 * comes once, when its end is read: its first bytes and its length
	 * (struct line's total), the rest skipped. */
	LINES_PIECES    = 1 << 0,
	/* A piece ends before a UTF-8 sequence it would cut (utf8_cut()). */
	LINES_UTF8      = 1 << 1,
	/* A line that ends in CR LF loses the CR (not one that ends at the
	 * end of the input: it has no line ending). */
	LINES_CRLF      = 1 << 2,
	/* A line that ends in a newline comes only once the byte after it
	 * is read, or the end of the input: lines_next_byte() tells which.
	 * (Without it a line comes as soon as its newline is read, which an
	 * interactive input needs.) */
	LINES_LOOKAHEAD = 1 << 3,
	/* For a caller that passes text through: whole lines read together
	 * come as one (p then holds several, with the newlines between
	 * them), up to max bytes.  Not with LINES_CRLF nor LINES_LOOKAHEAD. */
	LINES_BATCH     = 1 << 4,
};

/* How a line given by lines_next() ends. */
enum line_end {
	LINE_GOES_ON,   /* a piece of a longer line (LINES_PIECES): more follows */
	LINE_NEWLINE,   /* at a newline, which is p[len] (without LINES_CRLF) */
	LINE_EOF,       /* at the end of the input, which has no newline there */
};

/* A line, or a piece of one, as lines_next() gives it. */
struct line {
	const char *p;    /* its bytes, NULs included; valid until the next call */
	size_t len;       /* their number, the line ending not counted */
	int end;          /* enum line_end */
	uint64_t off;     /* where p[0] is in the input */
	/* 0, or (without LINES_PIECES) for a line longer than the maximum
	 * its whole length, the line ending not counted: p then holds its
	 * first bytes, len of them (the maximum), the rest was skipped */
	uint64_t total;
};

struct lines;

/*
 * A reader of the input read() gives (ctx passed to it), in lines of at
 * most max bytes (1 or more; a CR before the newline counts): see the
 * LINES_* flags for a longer one.  Its buffer is max plus 1 MiB, made
 * now.  Returns NULL if memory runs out.
 */
struct lines *lines_new(size_t max, unsigned flags, lines_read_fn *read, void *ctx);

/*
 * The next line into *ln: 1, or 0 at the end of the input (and at every
 * call after it), or the negative code read() failed with (the lines
 * before the failure were all given).  A last line without a newline is
 * a line all the same (LINE_EOF); an empty input, or one that ends in a
 * newline, gives no empty line after it.
 */
int lines_next(struct lines *lr, struct line *ln);

/* lines_next_byte() when the byte after the line is not known. */
#define LINES_END    (-1)   /* the input ends there */
#define LINES_UNREAD (-2)   /* not read yet (never with LINES_LOOKAHEAD) */

/*
 * The byte after the line lines_next() gave last (0 to 255), LINES_END
 * or LINES_UNREAD.  Reads nothing: with LINES_LOOKAHEAD the reader has
 * read it before giving a line that ends in a newline.
 */
int lines_next_byte(const struct lines *lr);

/* Frees what lines_new() made (NULL: nothing). */
void lines_free(struct lines *lr);

/*
 * How much of the n bytes at s to take so as not to cut a UTF-8 sequence:
 * n less an incomplete sequence at their end, or n if that would leave
 * nothing (the bytes are then not text to keep whole).
 */
size_t utf8_cut(const char *s, size_t n);

#endif
