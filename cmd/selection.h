/*
 * selection.h - which records read prints, as journalctl chooses them:
 * -b, --list-boots, -n and --reverse (selection.c); and the last N that
 * pass the filters, which follow -n shares.
 */
#ifndef KMSG_SELECTION_H
#define KMSG_SELECTION_H

#include "backlog.h"

struct output;

/* read's -b, --list-boots, -n and --reverse: sel_setup() takes them. */
extern const struct poptOption selection_options[];

struct selection {
	int active;            /* -b, -n or --reverse: read through sel_*() */
	int list_boots, reverse, boot, have_lines, boot_by_id;
	uint64_t lines;
	long boot_offset;      /* -b N: 0 the newest, -1 before it, 1 the oldest */
	char id_prefix[16];    /* -b ID: lower-case hex digits, no dashes */
	size_t id_len;
	uint64_t to;           /* the last number to print */
	int cursor;            /* a cursor gives the start: cursor_from, and
	                          -n N means the first N from there on */
	uint64_t cursor_from, printed;
	struct backlog held;   /* --reverse: the records to print */
};

/*
 * popt takes an optional argument only when it does not begin with '-',
 * yet "-b -1" is how journalctl names the boot before the newest: returns
 * a copy of argv (argc adjusted) in which -b or --boot followed by a
 * negative offset is one argument, "--boot=-1".  Free the copy with
 * free(), the strings it made with sel_free().  NULL if out of memory.
 */
const char **sel_join_boot_arg(int *argc, const char **argv);

/*
 * Fills *sel from the options parsed with selection_options.  On bad
 * usage prints why ("kmsg <cmd>: ...") and returns EXIT_USAGE; else 0.
 */
int sel_setup(struct selection *sel, const char *cmd);

/*
 * Places r where the selection starts, among the records read prints
 * (not cleared): at the first record of the boot -b names, or at the
 * first of the last N that pass o's filters (in that boot, with -b), or
 * as read without them (--reverse alone).  Costs O(log n) record reads
 * per boot looked at, plus the records -n spans.  With sel->cursor the
 * start is sel->cursor_from instead (within the boot, with -b) and -n
 * counts from there, as journalctl's cursors do.  st is the log's state
 * as read began.  Returns 0, or EXIT_FAIL after saying why (no such boot).
 */
int sel_seek(struct selection *sel, struct kmsg_reader *r, struct kmsg_log *log,
	     const struct output *o, const struct kmsg_stat *st, const char *path);

/*
 * Prints rec as out_record() does, or with --reverse keeps a copy for
 * sel_end().  Returns 0, 1 when rec is past the selection (the reading
 * may stop: nothing after it is selected), or -errno as out_record().
 */
int sel_record(struct selection *sel, struct output *o, const struct kmsg_record *rec);

/*
 * Prints what --reverse kept, newest first, and frees it; 0 or -errno.
 * When keeping them failed for want of a temporary file (sel_record() or
 * sel_end() returned its error), sel_said() says so in the user's terms.
 */
int sel_end(struct selection *sel, struct output *o);

/* After a failure of sel_record() or sel_end(): says why if it was the
 * temporary file of --reverse, and returns 1; else 0, nothing said. */
int sel_said(const struct selection *sel);

/* Frees what sel holds (after a failure; sel_end() frees it too). */
void sel_free(struct selection *sel);

/*
 * kmsg read --list-boots: one line per boot of log, oldest first, with
 * its offset (0 the newest), id, first and last wall-clock time and the
 * numbers of its records, under a header, as journalctl --list-boots.
 * Returns an exit status.
 */
int sel_list_boots(struct output *o, struct kmsg_log *log, const char *path);

/*
 * The last n records are the last n lines r returns that pass the filter,
 * a line written in parts counting once, from its first part.  Looks back
 * from end over ever larger windows (n, 4n, 16n, ... records) until one
 * holds more than n such lines (its first may have begun before it) or
 * reaches floor; stores the sequence number to start at in *start (floor
 * when there are fewer).  Each look
 * is a seek and a read, so finding them costs at most a few reads of the
 * part of the log they span.  Returns 0, or a negative code of the
 * reader (-ENOMEM).
 */
int out_last_start(uint64_t *start, struct kmsg_reader *r, const struct output *o,
		   uint64_t n, uint64_t floor, uint64_t end);

#endif
