/*
 * cursor.h - journalctl's cursors for read and follow: where a reading
 * stopped, kept across runs (cursor.c).
 */
#ifndef KMSG_CURSOR_H
#define KMSG_CURSOR_H

#include "cmd.h"

#include <string.h>

struct output;

/* --show-cursor, --cursor, --after-cursor, --cursor-file: read and follow. */
extern const struct poptOption cursor_options[];

struct cursor {
	int active;             /* any of the options */
	int show;               /* --show-cursor */
	const char *file;       /* --cursor-file */
	int given, at;          /* a start given (at: --cursor, at the record) */
	int have, moved;        /* a position known; records read since the start */
	uint8_t ring_id[16];    /* of the log being read: cur_log() */
	struct kmsg_position start, now; /* as given; where the reading is */
	struct kmsg_position saved;      /* what cur_save() last wrote */
	int64_t saved_ns;       /* when (CLOCK_MONOTONIC), 0: never */
	int64_t every_ns;       /* cur_save()'s interval; 0: a second */
	int save_said;          /* a failure of cur_save() was said */
};

/*
 * Fills *c from the options parsed with cursor_options and reads the
 * cursor file if there is one.  A malformed cursor, or more than one
 * start, is bad usage: prints why and returns EXIT_USAGE; a cursor file
 * that cannot be read or holds no cursor: EXIT_FAIL; else 0.
 */
int cur_setup(struct cursor *c, const char *cmd);

/* Frees the option strings (cur_setup() may not have run). */
void cur_free(struct cursor *c);

/* The start of the line --show-cursor prints; no record's line starts so. */
#define CUR_LINE_PREFIX "-- cursor: "

/*
 * 1 if --show-cursor was given to the command running (from the parsing
 * of its options to cur_free()): then no line of a record may begin with
 * CUR_LINE_PREFIX (sink.c sees to it), else 0.
 */
int cur_line_shown(void);

/*
 * With a start given, stores in *start the number reading starts at in
 * log: that of the cursor's record (--cursor) or the one after it,
 * resolved as kmsg_log_position_resolve() does; numbers handed out again
 * are said on stderr.  Returns 0 (c->given says whether *start was set),
 * or EXIT_FAIL after saying why (a cursor of another log).
 */
int cur_start(struct cursor *c, uint64_t *start, struct kmsg_log *log, const char *path);

/* The ring id of the log records are read from, for the cursors made. */
void cur_log(struct cursor *c, const uint8_t ring_id[16]);

/* Notes that rec was read (printed or passed by the filters) by r, whose
 * position (kmsg_reader_position()) is then asked only if c is active:
 * this runs for every record. */
static inline void cur_note(struct cursor *c, const struct kmsg_record *rec,
			    struct kmsg_reader *r)
{
	uint64_t next;

	if (!c->active)
		return;
	next = kmsg_reader_position(r);
	memcpy(c->now.ring_id, c->ring_id, sizeof(c->ring_id));
	/* a gap a joining reader makes may carry no numbering */
	if (rec->seq_id || !(rec->flags & KMSG_GAP))
		c->now.seq_id = rec->seq_id;
	c->now.next = next;
	/* the time tells the record only if it is record next - 1's */
	c->now.last_real_ns = rec->seq + 1 == next && !(rec->flags & KMSG_GAP) &&
			      rec->real_ns > 0 ? rec->real_ns : 0;
	c->have = c->moved = 1;
}

/*
 * kmsg follow between records: replaces the cursor file (--cursor-file)
 * if the cursor moved since it was last written and a second (or
 * c->every_ns, set after cur_setup()) has passed,
 * so that a follower killed (SIGKILL, a power cut) leaves a cursor at
 * most a second behind, not the one it started from.  Call it only with
 * every record read written out.  Returns when (CLOCK_MONOTONIC ns) to
 * call it again for a move not yet written, INT64_MAX if none.  A failure
 * is said once; cur_end() tries again.
 */
int64_t cur_save(struct cursor *c);

/*
 * At the end of a reading: prints "-- cursor: CURSOR" on stdout
 * (--show-cursor; the one line that begins so) and replaces the cursor file (--cursor-file; left as
 * it is when nothing was read).  Returns an exit status.
 */
int cur_end(struct cursor *c, struct output *o);

#endif
