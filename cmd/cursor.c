/*
 * cursor.c - journalctl's cursors for kmsg read and kmsg follow:
 * --show-cursor, --cursor, --after-cursor and --cursor-file.
 *
 * A cursor names a log and a place in it, as text a script can keep:
 *
 *   r=RING;s=IDENTITY;i=SEQ[;t=TIME]
 *
 * RING is the log's ring id (32 hex digits, kmsg stat's "ring id"),
 * IDENTITY the numbering's identity the number is of (16 hex digits), SEQ
 * the sequence number (decimal) of the last record read, and TIME its
 * wall-clock time in nanoseconds, when the cursor knows it (not for a line
 * joined from parts, whose time is its first part's): it tells the record
 * where the identities cannot (renewed too often since, a copy put back).  A dump keeps
 * its log's ring id and identities, so a cursor of a log reads its dumps
 * and the other way round.  Where the number is in the log now is
 * libkmsg's kmsg_log_position_resolve(): the numbering may have been
 * renewed since, and numbers handed out again (kmsg(5)).
 *
 * A cursor file is replaced, never written in place: the new text goes
 * to a temporary file beside it, which is synced and renamed over it, and
 * the directory is synced; so a crash at any moment leaves the old cursor
 * or the new one, whole.  It is neither read nor replaced if it is a
 * symbolic link or another user's (cli_replaceable()): a cursor file kept
 * in /tmp by root must not be one another user planted there.
 */
#define _GNU_SOURCE
#include "output.h"
#include "cursor.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_SHOW = 1, OPT_AT, OPT_AFTER, OPT_FILE };

/* What the options asked for (copies: popt's strings do not last). */
static struct {
	int show, starts;
	char *at, *after, *file;
} given;

static void on_option(void *state, int val, const char *arg)
{
	(void)state;  /* what it was given is its own: see given */
	switch (val) {
	case OPT_SHOW:
		given.show = 1;
		break;
	case OPT_AT:
		cli_keep(&given.at, arg);
		given.starts++;
		break;
	case OPT_AFTER:
		cli_keep(&given.after, arg);
		given.starts++;
		break;
	case OPT_FILE:
		cli_keep(&given.file, arg);
		given.starts++;
		break;
	}
}

static const struct cli_option_handler handler = { on_option, NULL };

const struct poptOption cursor_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "show-cursor", '\0', POPT_ARG_NONE, NULL, OPT_SHOW,
	  "at the end, print the cursor of the last record read: "
	  "\"-- cursor: CURSOR\", the one line that begins so", NULL },
	{ "cursor", '\0', POPT_ARG_STRING, NULL, OPT_AT,
	  "start at the record the cursor names", "CURSOR" },
	{ "after-cursor", '\0', POPT_ARG_STRING, NULL, OPT_AFTER,
	  "start after the record the cursor names", "CURSOR" },
	{ "cursor-file", '\0', POPT_ARG_STRING, NULL, OPT_FILE,
	  "start after the cursor in FILE if it exists; at the end, replace "
	  "it with the cursor of the last record read", "FILE" },
	POPT_TABLEEND
};

/* Reads n hex digits at s into id (n / 2 bytes); 0, or -1 if not hex. */
static int parse_hex(uint8_t *id, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int c = tolower((unsigned char)s[i]);
		int v = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

		if (v < 0)
			return -1;
		id[i / 2] = (uint8_t)(i % 2 ? id[i / 2] | v : v << 4);
	}
	return 0;
}

/* The length of s up to ';' or its end. */
static size_t part_len(const char *s)
{
	return strcspn(s, ";");
}

/* The value of key (p, n bytes) as a decimal number: NULL, or why not. */
static const char *parse_decimal(uint64_t *out, const char *p, size_t n, const char *key,
				 const char *what)
{
	static char why[80];
	int rc = cli_parse_u64(out, p, n, UINT64_MAX);

	if (rc == 0)
		return NULL;
	if (rc == -ERANGE)
		snprintf(why, sizeof(why), "%s is out of range", key);
	else
		snprintf(why, sizeof(why), "%s takes %s: decimal digits", key, what);
	return why;
}

/*
 * Parses text (len bytes, a NUL after them) as a cursor into *pos
 * (pos->next is the number it names, not the one after).  Returns NULL,
 * or what is wrong with it, in words (static).
 */
static const char *parse_cursor(struct kmsg_position *pos, const char *s, size_t len)
{
	static char why[256];
	const char *end = s + len, *p = s, *why2;
	uint8_t id[8];
	size_t n;
	uint64_t v = 0;

	if (memchr(s, '\0', len))
		return "a NUL byte in it";
	n = part_len(p);
	if (n < 2 || memcmp(p, "r=", 2) != 0)
		return "no 'r=' (the log's ring id) at its start";
	if (n != 2 + 32 || parse_hex(pos->ring_id, p + 2, 32) < 0)
		return "r= takes the log's ring id: 32 hexadecimal digits";
	p += n;
	if (p == end || p[1] != 's' || p + 2 >= end || p[2] != '=')
		return "no ';s=' (the numbering's identity) after the ring id";
	p += 3;
	n = part_len(p);
	if (n != 16 || parse_hex(id, p, 16) < 0)
		return "s= takes the numbering's identity: 16 hexadecimal digits";
	pos->seq_id = 0;
	for (int i = 0; i < 8; i++)
		pos->seq_id = pos->seq_id << 8 | id[i];
	p += n;
	if (p == end || p + 2 >= end || p[1] != 'i' || p[2] != '=')
		return "no ';i=' (the sequence number) after the identity";
	p += 3;
	n = part_len(p);
	if ((why2 = parse_decimal(&pos->next, p, n, "i=", "a sequence number")))
		return why2;
	p += n;
	pos->last_real_ns = 0;
	if (p + 3 <= end && memcmp(p, ";t=", 3) == 0) {
		p += 3;
		n = part_len(p);
		if ((why2 = parse_decimal(&v, p, n, "t=", "the record's time in ns")))
			return why2;
		if (v == 0 || v > INT64_MAX)
			return "t= is out of range";
		pos->last_real_ns = (int64_t)v;
		p += n;
	}
	if (p != end) {
		/* up to 40 bytes of it, all but printable ASCII as \xHH: a cursor file
		 * anyone wrote must not drive the terminal */
		char shown[4 * 40 + 1];
		size_t o = 0;

		for (const char *q = p; q < end && q < p + 40; q++) {
			unsigned char ch = (unsigned char)*q;

			if (ch < 0x20 || ch >= 0x7f || ch == '\\')
				o += (size_t)snprintf(shown + o, sizeof(shown) - o, "\\x%02x", ch);
			else
				shown[o++] = (char)ch;
		}
		shown[o] = '\0';
		snprintf(why, sizeof(why), "'%s' after the %s, where it should end", shown,
			 pos->last_real_ns ? "time" : "sequence number");
		return why;
	}
	return NULL;
}

/* The cursor text of the record before pos->next, into buf. */
static void format_cursor(char *buf, size_t size, const struct kmsg_position *pos)
{
	char ring[33];

	cli_ring_hex(ring, pos->ring_id);
	int n = snprintf(buf, size, "r=%s;s=%016llx;i=%llu", ring,
			 (unsigned long long)pos->seq_id, (unsigned long long)(pos->next - 1));

	if (pos->last_real_ns > 0 && n > 0 && (size_t)n < size)
		snprintf(buf + n, size - (size_t)n, ";t=%lld", (long long)pos->last_real_ns);
}

/*
 * The cursor in --cursor-file's file, if there is one: 1 with *pos
 * filled, 0 if the file does not exist, or -1 after saying why
 * (unreadable, or not a cursor).
 */
static int read_cursor_file(struct kmsg_position *pos, const char *file)
{
	char buf[256];
	const char *why;
	struct stat st;
	ssize_t n;
	/* without waiting: a FIFO would block the open until a writer came;
	 * nor through a link, which would not be replaced at the end */
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);

	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0 && errno == ELOOP) {
		cli_output_error(file, -ELOOP, NULL);
		return -1;
	}
	if (fd < 0) {
		cli_error(file, "cannot read the cursor file: %s", strerror(errno));
		return -1;
	}
	/* a FIFO, a device or a directory is no cursor file, and would be
	 * replaced by one at the end: refused before anything is read */
	if (fstat(fd, &st) < 0) {
		close(fd);
		cli_error(file, "cannot read the cursor file: %s", strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		cli_error(file, "not a regular file (%s): --cursor-file keeps the cursor in "
			  "a file of its own, which it replaces: give another path",
			  S_ISDIR(st.st_mode) ? "a directory" : S_ISFIFO(st.st_mode) ? "a FIFO" :
			  S_ISSOCK(st.st_mode) ? "a socket" : "a device");
		return -1;
	}
	/* another user's cursor would say where to start, and be replaced */
	if (st.st_uid != geteuid() && st.st_uid != 0) {
		close(fd);
		cli_output_error(file, -EPERM, NULL);
		return -1;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0) {
		cli_error(file, "cannot read the cursor file: %s", strerror(errno));
		return -1;
	}
	if ((size_t)n == sizeof(buf) - 1) {
		why = "longer than a cursor";
	} else {
		if (n > 0 && buf[n - 1] == '\n')
			n--;
		buf[n] = '\0';
		why = parse_cursor(pos, buf, (size_t)n);
	}
	if (why == NULL)
		return 1;
	cli_error(file, "not a cursor file (%s): remove it to start as if it did not "
		  "exist", why);
	return -1;
}

/*
 * Whether the cursor file can be replaced at the end: a temporary file
 * made and removed beside it now, so that a reader (a follower above all)
 * does not learn only when it is done that its place cannot be kept.
 * 0, or -1 after saying why.
 */
static int probe_dir(const char *file)
{
	char dirbuf[PATH_MAX];
	const char *dir = cli_dir_of(file, dirbuf, sizeof(dirbuf));
	struct cli_temp t;
	int err = cli_temp_beside(&t, file);

	if (err == 0) {
		cli_temp_drop(&t);
		return 0;
	}
	if (err == -ELOOP || err == -EPERM || err == -ENODEV || err == -EISDIR) {
		cli_output_error(file, err, NULL);
		return -1;
	}
	cli_error(file, "cannot keep the cursor file: no file can be made in %s (%s), "
		  "and the cursor is replaced through one: give a --cursor-file in a "
		  "directory you may write", dir ? dir : "its directory", strerror(-err));
	return -1;
}

int cur_setup(struct cursor *c, const char *cmd)
{
	const char *text = given.at ? given.at : given.after;
	const char *why;

	memset(c, 0, sizeof(*c));
	c->show = given.show;
	c->file = given.file;
	c->active = c->show || given.starts;
	if (given.starts > 1)
		return cli_usage_error(cmd, NULL, "--cursor, --after-cursor and --cursor-file "
				       "each say where to start: give one of them, once");
	if (given.file && !*given.file)
		return cli_usage_error(cmd, "--cursor-file", "an empty path");
	if (text) {
		why = parse_cursor(&c->start, text, strlen(text));
		if (why)
			return cli_usage_error(cmd, given.at ? "--cursor" : "--after-cursor",
					       "'%s': %s (a cursor reads r=RING;s=ID;i=SEQ[;t=TIME], "
					       "as --show-cursor prints it)", text, why);
		c->given = 1;
		c->at = given.at != NULL;
	} else if (given.file) {
		int rc = read_cursor_file(&c->start, given.file);

		if (rc < 0 || probe_dir(given.file) < 0)
			return EXIT_FAIL;
		c->given = rc;
	}
	return 0;
}

int cur_line_shown(void)
{
	return given.show;
}

void cur_free(struct cursor *c)
{
	(void)c;
	given.show = given.starts = 0;
	cli_keep(&given.at, NULL);
	cli_keep(&given.after, NULL);
	cli_keep(&given.file, NULL);
}

int cur_start(struct cursor *c, uint64_t *start, struct kmsg_log *log, const char *path)
{
	struct kmsg_position pos = c->start;
	struct kmsg_stat st;
	int rc;

	if (!c->given)
		return 0;
	rc = kmsg_log_stat(&st, log);
	/* the cursor names a record, which the library takes as read:
	 * --cursor starts at it, the others after it */
	if (pos.next == UINT64_MAX)
		pos.last_real_ns = 0;
	else
		pos.next++;
	if (rc == 0)
		rc = kmsg_log_position_resolve(start, log, &pos);
	if (rc == KMSG_POSITION_SAME && c->at)
		*start = c->start.next;
	if (rc == KMSG_EOTHERLOG) {
		char mine[33], theirs[33];

		cli_ring_hex(theirs, c->start.ring_id);
		cli_ring_hex(mine, st.ring_id);
		return cli_error(path, "the cursor is of another log (ring id %s; this "
				 "log's is %s): %s", theirs, mine, c->file ?
				 "remove the cursor file to read this log from its start, "
				 "or give the log it was made for" :
				 "give a cursor this log printed, or the log it was made for");
	}
	if (rc < 0)
		return cli_lib_error(path, rc);
	if (rc == KMSG_POSITION_RENUMBERED) {
		if (*start == st.first_seq)
			cli_error(path, "the cursor's record is not under its number any more, "
				  "or nothing tells where it is (its numbering s=%016llx renewed "
				  "more than twice since, once each boot; numbers handed out "
				  "again; the log put back from an older copy): going on at the "
				  "oldest record, %llu, so records may be printed again",
				  (unsigned long long)pos.seq_id, (unsigned long long)*start);
		else
			cli_error(path, "numbers from %llu on were handed out again since the "
				  "cursor was made (a power cut, a damaged log rebuilt, or a "
				  "copy restored): records it had read may be lost; going on "
				  "there, at the first number not certainly read, so records "
				  "may be printed again", (unsigned long long)*start);
	}
	/* until a record is read, the cursor is the one given */
	c->now = c->start;
	c->now.next = c->start.next + 1;
	c->have = 1;
	return 0;
}

void cur_log(struct cursor *c, const uint8_t ring_id[16])
{
	memcpy(c->ring_id, ring_id, sizeof(c->ring_id));
}

/*
 * Replaces file's content with text, through a file beside it
 * (cli_replace()): a crash leaves the old cursor or the new one.  0, or
 * -errno (the temporary file removed).
 */
static int write_atomic(const char *file, const char *text)
{
	struct cli_temp t;
	int err = cli_temp_beside(&t, file);

	if (err < 0)
		return err;
	err = cli_write_all(t.fd, text, strlen(text));
	if (err < 0) {
		cli_temp_drop(&t);
		return err;
	}
	return cli_replace(&t, file, 0666);
}

/* How often a follower writes its cursor file, at most. */
#define CUR_SAVE_NS (1000 * 1000000LL)

/* Writes the cursor as it is now to the cursor file; 0 or -errno. */
static int save_now(struct cursor *c)
{
	char text[128];
	int rc;

	format_cursor(text, sizeof(text) - 1, &c->now);
	strcat(text, "\n");
	rc = write_atomic(c->file, text);
	if (rc == 0)
		c->saved = c->now;
	return rc;
}

/* 1 if the cursor moved since the cursor file was last written. */
static int unsaved(const struct cursor *c)
{
	return c->file && c->moved && memcmp(&c->saved, &c->now, sizeof(c->now)) != 0;
}

int64_t cur_save(struct cursor *c)
{
	int64_t now, every = c->every_ns ? c->every_ns : CUR_SAVE_NS;
	int rc;

	if (!c->active || !unsaved(c))
		return INT64_MAX;
	now = cli_now_ns(CLOCK_MONOTONIC);
	if (c->saved_ns && now - c->saved_ns < every)
		return c->saved_ns + every;
	rc = save_now(c);
	c->saved_ns = now;
	if (rc < 0 && !c->save_said) {
		cli_error(c->file, "cannot write the cursor file: %s (tried again at the "
			  "end)", strerror(-rc));
		c->save_said = 1;
	}
	return rc == 0 ? INT64_MAX : now + every;
}

int cur_end(struct cursor *c, struct output *o)
{
	char text[128], line[160];
	int rc;

	if (!c->active || !c->have)
		return EXIT_OK;
	if (c->show) {
		format_cursor(text, sizeof(text), &c->now);
		snprintf(line, sizeof(line), CUR_LINE_PREFIX "%s\n", text);
		rc = out_text(o, line);
		if (rc == 0)
			rc = out_flush(o);
		if (rc < 0)
			return out_fail(o, rc);
	}
	/* not again if a follower's last save wrote it already */
	if (unsaved(c) && (rc = save_now(c)) < 0) {
		if (rc == -ELOOP || rc == -EPERM || rc == -ENODEV || rc == -EISDIR)
			return cli_output_error(c->file, rc, NULL);
		return cli_error(c->file, "cannot write the cursor file: %s", strerror(-rc));
	}
	return EXIT_OK;
}
