/*
 * backlog.h - the records read --reverse keeps to print newest first
 * (backlog.c).
 */
#ifndef KMSG_BACKLOG_H
#define KMSG_BACKLOG_H

#include "cmd.h"

/*
 * Records kept to be printed newest first (backlog.c): the first 16 MiB
 * in memory, the rest in an unlinked file in $TMPDIR (or /tmp), so that
 * --reverse over a log of any size holds a bounded amount of memory.
 * Zeroed is empty.
 */
struct backlog {
	unsigned char *buf;    /* the entries in memory, or a window on the file */
	size_t len, cap;
	uint64_t count;        /* entries not yet taken back */
	int fd, in_file, reading;
	uint64_t file_len;     /* bytes in the file */
	uint64_t win, end;     /* taking back: buf holds [win, win + len) of
	                          the entries; those from end on are taken */
	const char *dir;       /* where the file is, for messages */
	int failed;            /* -errno of the temporary file, if it failed */
};

/* Keeps a copy of rec; 0, -ENOMEM, or -errno of the file (also in failed). */
int backlog_add(struct backlog *b, const struct kmsg_record *rec);

/*
 * Takes back the newest entry not yet taken: 1 and *rec (valid until the
 * next call), 0 when none is left, or -errno of the file (also in failed).
 */
int backlog_pop(struct backlog *b, struct kmsg_record *rec);

/* Frees what b holds and closes (so removes) its file. */
void backlog_free(struct backlog *b);

#endif
