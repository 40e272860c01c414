/*
 * sink.c - rendered records to standard output, fast: libkmsg renders
 * each record (kmsg_fmt_record(), byte for byte what util-linux dmesg
 * prints) into one large buffer, written with write(2) when it fills, so
 * a record costs a memcpy, not a stdio call.
 */
#define _GNU_SOURCE
#include "output.h"
#include "cursor.h"
#include "matches.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int out_flush(struct output *o)
{
	int rc;

	if (o->len == 0)
		return 0;
	rc = cli_write_all(STDOUT_FILENO, o->buf, o->len);
	o->len = 0;
	return rc;
}

/*
 * How much the buffer holds before it is written, decided at the first
 * output (after the pager, if any, took standard output).  Into a pipe, a
 * write of more than the pipe holds waits for its reader to drain it, and
 * that reader then waits while the next buffer is rendered: the two take
 * turns, and a read into a pipe took twice its time to /dev/null.  So the
 * pipe is grown to the buffer's size (Linux lets any process grow one to
 * 1 MiB; where a user's pipes already hold too much it refuses, and the
 * pipe stays as it is) and written a quarter of its size at a time, which
 * its reader drains while the next quarter is rendered.
 */
static void out_fit(struct output *o)
{
	struct stat st;
	int size;

	o->fill = o->cap;
	if (fstat(STDOUT_FILENO, &st) != 0 || !S_ISFIFO(st.st_mode))
		return;
	(void)fcntl(STDOUT_FILENO, F_SETPIPE_SZ, (int)o->cap);
	size = fcntl(STDOUT_FILENO, F_GETPIPE_SZ);
	if (size >= 4096 && (size_t)size / 4 < o->fill)
		o->fill = (size_t)size / 4;
}

/* Appends n bytes to the buffer, writing it out first if they do not fit. */
static int out_put(struct output *o, const char *p, size_t n)
{
	int rc;

	if (!o->fill)
		out_fit(o);
	if (o->len + n > o->fill) {
		rc = out_flush(o);
		if (rc < 0)
			return rc;
		if (n > o->cap)
			return cli_write_all(STDOUT_FILENO, p, n);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/*
 * Where the records of another boot begin in the short output: a line
 * that says so (journalctl's), but for -r, whose lines are read back as
 * dmesg text; and a new renderer, so that no delta or reltime difference
 * is taken across the boots (since-boot times of two boots have no
 * common origin).  0 or -errno.
 */
static int new_boot(struct output *o, const struct kmsg_record *rec)
{
	char line[64];
	int rc;

	if (!o->quiet && o->fo.time != KMSG_TIME_RAW) {
		snprintf(line, sizeof(line), "-- Boot %016llx --\n",
			 (unsigned long long)rec->boot_id);
		rc = out_text(o, line);
		if (rc < 0)
			return rc;
	}
	return out_renew_fmt(o);
}

/* Past the SGR sequences (colours) at p, before end: a terminal shows none. */
static const char *past_sgr(const char *p, const char *end)
{
	while (end - p >= 3 && p[0] == '\033' && p[1] == '[') {
		const char *q = p + 2;

		while (q < end && ((*q >= '0' && *q <= '9') || *q == ';'))
			q++;
		if (q == end || *q != 'm')
			break;
		p = q + 1;
	}
	return p;
}

/*
 * Appends text (n bytes of rendered lines) with the '-' that begins a
 * line "-- cursor: " (after its colours, if any) written \x2d, as the
 * text escapes any byte: with --show-cursor the cursor's line is then the
 * only one that begins so, whatever the records say and however the
 * output ends.  0 or -errno.
 */
static int put_unlike_cursor(struct output *o, const char *text, size_t n)
{
	static const char prefix[] = CUR_LINE_PREFIX;
	const char *p = text, *end = text + n;
	int rc;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *next = nl ? nl + 1 : end, *s = past_sgr(p, next);

		if ((size_t)(next - s) >= sizeof(prefix) - 1 &&
		    memcmp(s, prefix, sizeof(prefix) - 1) == 0) {
			rc = out_put(o, p, (size_t)(s - p));
			if (rc == 0)
				rc = out_put(o, "\\x2d", 4);
			if (rc < 0)
				return rc;
			p = s + 1;
		}
		rc = out_put(o, p, (size_t)(next - p));
		if (rc < 0)
			return rc;
		p = next;
	}
	return 0;
}

int out_record(struct output *o, const struct kmsg_record *rec)
{
	const char *text;
	int n;

	if (!out_match(o, rec)) {
		/* dmesg 2.41's deltas: from the record before, shown or not */
		(void)kmsg_fmt_skip(o->fmt, rec);
		return 0;
	}
	if (o->values)
		return values_add(o->values, o, rec);
	if (o->fo.output == KMSG_OUT_SHORT && o->have_boot && rec->boot_id != o->last_boot &&
	    (n = new_boot(o, rec)) < 0)
		return n;
	o->have_boot = 1;
	o->last_boot = rec->boot_id;
	n = kmsg_fmt_record(&text, o->fmt, rec);
	if (n < 0)
		return n == KMSG_ECORRUPT ? 0 : n;
	if (cur_line_shown())
		return put_unlike_cursor(o, text, (size_t)n);
	return out_put(o, text, (size_t)n);
}

int out_text(struct output *o, const char *s)
{
	return out_put(o, s, strlen(s));
}

int out_verbatim(struct output *o, const char *p, size_t n, int ends_line)
{
	size_t len = n && p[n - 1] == '\n' ? n - 1 : n;
	size_t need = KMSG_TEXT_ESCAPE_SIZE(len) + 1;
	int rc;

	if (need > o->esc_cap) {
		char *b = realloc(o->esc, need);

		if (b == NULL)
			return -ENOMEM;
		o->esc = b;
		o->esc_cap = need;
	}
	rc = kmsg_text_escape(o->esc, o->esc_cap, p, len,
			      o->fo.flags & (KMSG_FMT_NOESCAPE | KMSG_FMT_ASCII));
	if (rc < 0)
		return rc == KMSG_EINVAL ? -E2BIG : rc;
	/* the line's newline, or one it lacks at the end of the input;
	 * none for a piece of a line that goes on */
	if (ends_line || len < n)
		o->esc[rc++] = '\n';
	return out_put(o, o->esc, (size_t)rc);
}

int out_end(struct output *o)
{
	const char *text;
	int n = kmsg_fmt_end(&text, o->fmt), rc;

	if (n < 0)
		return n;
	rc = out_put(o, text, (size_t)n);
	if (rc == 0)
		rc = out_flush(o);
	return rc;
}

int out_fail(struct output *o, int err)
{
	if (err < 0)
		err = -err;
	pager_end(&o->pg);
	if (err == EPIPE)
		_exit(EXIT_OK);
	if (err == ENOMEM)
		cli_error(NULL, "out of memory");
	else
		cli_error("write error", "%s", strerror(err));
	return EXIT_FAIL;
}


void out_pager_start(struct output *o)
{
	if (o->pager)
		pager_start(&o->pg);
}
