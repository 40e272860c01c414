/*
 * lines.c - input read line by line (see lines.h).
 *
 * One buffer of max + LINES_CHUNK bytes.  Lines are found in place and
 * handed out as pointers into it; what is left of the buffer when no
 * whole line is (at most a line of max bytes, and its newline when the
 * byte after it is awaited) is moved to the front before the next read,
 * so a read always has a chunk of room and a million short lines cost a
 * memchr() each and a read() per chunk.  A line longer than max is never
 * held whole: it goes out in pieces, or its first max bytes stay at the
 * front of the buffer while the rest is read past and counted.
 */
#define _GNU_SOURCE
#include "lines.h"

#include <stdlib.h>
#include <string.h>

/* Room for one read(): large, so reading costs next to nothing. */
#define LINES_CHUNK (1u << 20)

struct lines {
	lines_read_fn *read;
	void *ctx;
	unsigned flags;
	size_t max, cap;
	char *buf;
	size_t start, len;  /* buf[start, len) is read and not yet given */
	size_t scan;        /* no newline in buf[start, scan) */
	uint64_t base;      /* where buf[0] is in the input (but see skipping) */
	int eof;            /* read() said the input ends at buf[len] */
	int next;           /* lines_next_byte() */
	/* A line longer than max being skipped (without LINES_PIECES): its
	 * first max bytes at buf[0, max), what came after counted and
	 * dropped, the rest read to buf[max] on.  base moves on by what is
	 * dropped, so it stays right for the bytes after the head. */
	int skipping;
	uint64_t total;     /* its bytes so far */
	uint64_t head_off;  /* where it starts in the input */
	int cr;             /* the last byte counted was a CR */
};

struct lines *lines_new(size_t max, unsigned flags, lines_read_fn *read, void *ctx)
{
	struct lines *lr;

	if (max == 0 || max > SIZE_MAX / 2)
		return NULL;
	lr = calloc(1, sizeof(*lr));
	if (lr == NULL)
		return NULL;
	lr->read = read;
	lr->ctx = ctx;
	lr->flags = flags;
	lr->max = max;
	/* a line of max bytes and its newline, and a chunk after them */
	lr->cap = max + 1 + LINES_CHUNK;
	lr->buf = malloc(lr->cap);
	if (lr->buf == NULL) {
		free(lr);
		return NULL;
	}
	lr->next = LINES_UNREAD;
	return lr;
}

void lines_free(struct lines *lr)
{
	if (lr == NULL)
		return;
	free(lr->buf);
	free(lr);
}

int lines_next_byte(const struct lines *lr)
{
	return lr->next;
}

size_t utf8_cut(const char *s, size_t n)
{
	size_t k = n;

	/* back over continuation bytes to the start of the last sequence */
	while (k > 0 && n - k < 3 && ((unsigned char)s[k - 1] & 0xc0) == 0x80)
		k--;
	if (k > 0 && (unsigned char)s[k - 1] >= 0xc0) {
		unsigned char c = (unsigned char)s[k - 1];
		size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;

		if (n - (k - 1) < want)
			return k - 1 ? k - 1 : n;
	}
	return n;
}

/* What is left from start, moved to the front of the buffer. */
static void to_front(struct lines *lr)
{
	memmove(lr->buf, lr->buf + lr->start, lr->len - lr->start);
	lr->len -= lr->start;
	lr->scan -= lr->start;
	lr->base += lr->start;
	lr->start = 0;
}

/* lines_next_byte() once a line was given up to start. */
static int byte_after(const struct lines *lr)
{
	return lr->start < lr->len ? (unsigned char)lr->buf[lr->start] :
	       lr->eof ? LINES_END : LINES_UNREAD;
}

/*
 * Reads on after buf[len]: 0, or read()'s error.  The caller has taken
 * every whole line, so what is left from start is at most max + 1 bytes
 * and, moved to the front, leaves a chunk of room.  A long line's head
 * stays where it is (len is then at most max + 1 already).
 */
static int fill(struct lines *lr)
{
	ssize_t n;

	if (!lr->skipping && lr->start > 0 && lr->cap - lr->len < LINES_CHUNK)
		to_front(lr);
	n = lr->read(lr->ctx, lr->buf + lr->len, lr->cap - lr->len);
	if (n < 0)
		return (int)n;
	if (n == 0)
		lr->eof = 1;
	lr->len += (size_t)n;
	return 0;
}

/* Gives buf[start, end) as a line that ends so (not LINE_GOES_ON). */
static int give(struct lines *lr, struct line *ln, size_t end, int how)
{
	ln->p = lr->buf + lr->start;
	ln->len = end - lr->start;
	ln->end = how;
	ln->off = lr->base + lr->start;
	ln->total = 0;
	if (how == LINE_NEWLINE && (lr->flags & LINES_CRLF) && ln->len &&
	    ln->p[ln->len - 1] == '\r')
		ln->len--;
	lr->start = lr->scan = how == LINE_NEWLINE ? end + 1 : end;
	lr->next = byte_after(lr);
	return 1;
}

/* Gives the first piece of the line at start, which is longer than max. */
static int give_piece(struct lines *lr, struct line *ln)
{
	size_t n = lr->max;

	if (lr->flags & LINES_UTF8)
		n = utf8_cut(lr->buf + lr->start, n);
	ln->p = lr->buf + lr->start;
	ln->len = n;
	ln->end = LINE_GOES_ON;
	ln->off = lr->base + lr->start;
	ln->total = 0;
	lr->start += n;
	if (lr->scan < lr->start)
		lr->scan = lr->start;
	lr->next = (unsigned char)lr->buf[lr->start];
	return 1;
}

/* The line at start is longer than max: its head to the front, the rest
 * to be skipped. */
static void skip_start(struct lines *lr)
{
	if (lr->start > 0)
		to_front(lr);
	lr->skipping = 1;
	lr->head_off = lr->base;
	lr->total = lr->max;
	lr->cr = 0;
	lr->start = lr->scan = lr->max;
}

/*
 * Skipping: counts what is read of the long line.  1 and the line in
 * *ln at its end, or 0 when more must be read.
 */
static int skip_on(struct lines *lr, struct line *ln)
{
	char *nl = memchr(lr->buf + lr->start, '\n', lr->len - lr->start);
	size_t end = nl ? (size_t)(nl - lr->buf) : lr->len;

	if (end > lr->start) {
		lr->total += end - lr->start;
		lr->cr = lr->buf[end - 1] == '\r';
	}
	if (nl && end + 1 == lr->len && !lr->eof && (lr->flags & LINES_LOOKAHEAD)) {
		/* keep the newline, the byte after it is awaited */
		lr->base += end - lr->max;
		lr->buf[lr->max] = '\n';
		lr->start = lr->max;
		lr->len = lr->scan = lr->max + 1;
		return 0;
	}
	if (nl == NULL && !lr->eof) {
		lr->base += lr->len - lr->max;
		lr->start = lr->len = lr->scan = lr->max;
		return 0;
	}
	ln->p = lr->buf;
	ln->len = lr->max;
	ln->end = nl ? LINE_NEWLINE : LINE_EOF;
	ln->off = lr->head_off;
	ln->total = lr->total - (nl && lr->cr && (lr->flags & LINES_CRLF));
	lr->skipping = 0;
	lr->start = lr->scan = nl ? end + 1 : end;
	lr->next = byte_after(lr);
	return 1;
}

int lines_next(struct lines *lr, struct line *ln)
{
	for (;;) {
		char *nl;
		size_t end;
		int rc;

		if (lr->skipping) {
			if (skip_on(lr, ln))
				return 1;
			goto more;
		}
		nl = memchr(lr->buf + lr->scan, '\n', lr->len - lr->scan);
		end = nl ? (size_t)(nl - lr->buf) : lr->len;
		if (nl == NULL)
			lr->scan = lr->len;
		if (end - lr->start > lr->max) {
			if (lr->flags & LINES_PIECES)
				return give_piece(lr, ln);
			skip_start(lr);
			continue;
		}
		if (nl && !(end + 1 == lr->len && !lr->eof && (lr->flags & LINES_LOOKAHEAD))) {
			if (lr->flags & LINES_BATCH) {
				/* the last newline in max bytes from start */
				size_t lim = lr->len - lr->start > lr->max + 1 ?
					     lr->start + lr->max + 1 : lr->len;
				char *last = memrchr(lr->buf + end, '\n', lim - end);

				end = (size_t)(last - lr->buf);
			}
			return give(lr, ln, end, LINE_NEWLINE);
		}
		if (nl)
			lr->scan = end;  /* the byte after it is awaited */
		else if (lr->eof)
			return lr->start < lr->len ? give(lr, ln, lr->len, LINE_EOF) : 0;
more:
		rc = fill(lr);
		if (rc < 0)
			return rc;
	}
}
