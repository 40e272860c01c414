/*
 * backlog.c - records kept to be printed newest first (read --reverse).
 *
 * A reader walks a log oldest first, so printing newest first means
 * keeping what was selected until the end.  Kept in memory, that costs
 * as much as the log (4 GiB of RAM for a 4 GiB log): so the backlog
 * keeps the first BACKLOG_MEM bytes in memory and moves everything to an
 * unlinked temporary file past that, and the memory it holds stays
 * bounded by BACKLOG_MEM plus one record whatever the log's size.
 *
 * Entries are written back to back, each followed by its own length, so
 * they are taken back from the end without an index:
 *
 *   struct kmsg_record (text and fields NULL) | text | fields | zero pad
 *   to 8 | uint64_t length of the whole entry, this word included
 */
#define _GNU_SOURCE
#include "output.h"
#include "backlog.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Up to this much stays in memory; a temporary file takes the rest. */
#define BACKLOG_MEM (16u << 20)
/* Once in the file: the size of a write, and of a read back. */
#define BACKLOG_BLOCK (1u << 20)

#define HDR sizeof(struct kmsg_record)

/* The entry's length for a record of text_len + fields_len bytes. */
static size_t entry_len(const struct kmsg_record *rec)
{
	return HDR + ((rec->text_len + rec->fields_len + 7) & ~(size_t)7) + 8;
}

/* Makes room for len bytes in b->buf; 0 or -ENOMEM. */
static int reserve(struct backlog *b, size_t len)
{
	size_t cap = b->cap ? b->cap : 4096;
	unsigned char *p;

	if (len <= b->cap)
		return 0;
	while (cap < len)
		cap *= 2;
	p = realloc(b->buf, cap);
	if (p == NULL)
		return -ENOMEM;
	b->buf = p;
	b->cap = cap;
	return 0;
}

/* An unlinked file in $TMPDIR (or /tmp), readable by no one else. */
static int open_temp(struct backlog *b)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	int fd;

	b->dir = dir && *dir ? dir : "/tmp";
	fd = open(b->dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* a file system without O_TMPFILE: a named file, unlinked at once */
	if (asprintf(&path, "%s/kmsg-reverse.XXXXXX", b->dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd >= 0)
		unlink(path);
	free(path);
	return fd >= 0 ? fd : -errno;
}

/* Appends buf's bytes to the file and empties buf; 0 or -errno. */
static int spill(struct backlog *b)
{
	for (size_t done = 0; done < b->len;) {
		ssize_t n = pwrite(b->fd, b->buf + done, b->len - done,
				   (off_t)(b->file_len + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ENOSPC;
		done += (size_t)n;
	}
	b->file_len += b->len;
	b->len = 0;
	return 0;
}

int backlog_add(struct backlog *b, const struct kmsg_record *rec)
{
	size_t len = entry_len(rec);
	struct kmsg_record hdr = *rec;
	uint64_t word = len;
	unsigned char *p;
	int rc;

	if (!b->in_file && b->len + len > BACKLOG_MEM) {
		int fd = open_temp(b);

		if (fd < 0)
			return b->failed = fd;
		b->fd = fd;
		b->in_file = 1;
	}
	if (b->in_file && b->len > 0 && b->len + len > BACKLOG_BLOCK &&
	    (rc = spill(b)) < 0)
		return b->failed = rc;
	if ((rc = reserve(b, b->len + len)) < 0)
		return rc;
	p = b->buf + b->len;
	hdr.text = NULL;
	hdr.fields = NULL;
	memcpy(p, &hdr, HDR);
	/* a record may have no text or no fields, and NULL for them */
	if (rec->text_len)
		memcpy(p + HDR, rec->text, rec->text_len);
	if (rec->fields_len)
		memcpy(p + HDR + rec->text_len, rec->fields, rec->fields_len);
	memset(p + HDR + rec->text_len + rec->fields_len, 0,
	       len - 8 - HDR - rec->text_len - rec->fields_len);
	memcpy(p + len - 8, &word, 8);
	b->len += len;
	b->count++;
	return 0;
}

/* Reads the file's bytes [from, to) into buf; 0 or -errno. */
static int load(struct backlog *b, uint64_t from, uint64_t to)
{
	size_t len = (size_t)(to - from);
	int rc = reserve(b, len);

	for (size_t done = 0; rc == 0 && done < len;) {
		ssize_t n = pread(b->fd, b->buf + done, len - done, (off_t)(from + done));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			rc = n < 0 ? -errno : -EIO;
		else
			done += (size_t)n;
	}
	b->win = from;
	b->len = len;
	return rc < 0 ? (b->failed = rc) : 0;
}

int backlog_pop(struct backlog *b, struct kmsg_record *rec)
{
	uint64_t word, end;
	unsigned char *p;
	int rc;

	if (b->count == 0)
		return 0;
	if (!b->reading) {
		/* from now on buf is a window on the entries' bytes [win,
		 * win + len): all of them in memory; in a file, the rest
		 * goes there first and the window is loaded as needed */
		if (b->in_file && (rc = spill(b)) < 0)
			return b->failed = rc;
		b->reading = 1;
		b->end = b->in_file ? b->file_len : b->len;
		b->win = b->in_file ? b->end : 0;
		if (b->in_file)
			b->len = 0;
	}
	end = b->end;
	if (b->in_file && end - 8 < b->win &&
	    (rc = load(b, end > BACKLOG_BLOCK ? end - BACKLOG_BLOCK : 0, end)) < 0)
		return rc;
	memcpy(&word, b->buf + (end - 8 - b->win), 8);
	/* the entry as written: a length that does not fit is damage of a
	 * file only this process writes, so a failure of the disk */
	if (word < HDR + 8 || word > end || word % 8)
		return b->failed = -EIO;
	if (b->in_file && end - word < b->win) {
		uint64_t size = word > BACKLOG_BLOCK ? word : BACKLOG_BLOCK;

		if ((rc = load(b, size < end ? end - size : 0, end)) < 0)
			return rc;
	}
	p = b->buf + (end - word - b->win);
	memcpy(rec, p, HDR);
	if (rec->text_len > word || rec->fields_len > word ||
	    entry_len(rec) != word)
		return b->failed = -EIO;
	rec->text = (const char *)p + HDR;
	rec->fields = p + HDR + rec->text_len;
	b->end = end - word;
	b->count--;
	return 1;
}

void backlog_free(struct backlog *b)
{
	if (b->in_file)
		close(b->fd);
	free(b->buf);
	memset(b, 0, sizeof(*b));
}
