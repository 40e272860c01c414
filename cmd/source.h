/*
 * source.h - the input given with --file: telling a kmsg log, a dump,
 * dmesg text and anything else apart from its first bytes, reading it
 * with the text checked as it comes, and opening a log or dump from it.
 * Every subcommand that takes --file opens it here.
 */
#ifndef KMSG_SOURCE_H
#define KMSG_SOURCE_H

#include "cmd.h"

#include <stdint.h>
#include <sys/types.h>

/* What a file given with --file holds, from its first bytes. */
enum src_kind {
	SRC_LOG,    /* a kmsg log: "KMSGRNG\x1a" */
	SRC_DUMP,   /* a kmsg dump: gzip magic 1f 8b */
	SRC_TEXT,   /* dmesg raw text, "<N>[ s.us] msg" lines, or nothing */
	SRC_BINARY, /* none of these (src_open() only): see source.c's rule */
};

/*
 * Looks at the start of path (and at its end, where a log keeps a copy of
 * its header for when the first page is torn); what is not a regular file
 * (a pipe, "-") is text, unread: its bytes would be lost to the reading proper (see
 * src_open() for commands that read such input).  Returns its kind, or
 * -errno if it cannot be opened or read, or is a directory (nothing
 * printed: callers report through cli_open_log() so every subcommand
 * words the error alike).
 */
int src_detect(const char *path);

/*
 * Input is read in blocks of this size to tell text from binary: the
 * first one decides what the input is, and text stops at the first
 * later one that is binary.
 */
#define SRC_BLOCK 4096u

/*
 * A --file input being read: a path, or "-" for standard input.  What is
 * not a regular file (a pipe, a FIFO, a socket, a character device) is
 * told apart by the bytes read from it first, which are kept in head and
 * handed back first by src_read().
 */
struct src {
	const char *name;    /* for messages: the path, or "standard input" */
	int fd;
	int kind;            /* enum src_kind */
	int stream;          /* not a regular file: head holds its first bytes */
	int empty;           /* nothing at all to read */
	const char *what;    /* SRC_BINARY: what it looks like */
	unsigned char head[SRC_BLOCK];
	size_t head_len, head_pos;
	/* the text check of the block being read */
	uint64_t off;        /* bytes src_read() returned */
	uint64_t blk_start;  /* where the block starts in the input */
	size_t blk_len, blk_bad, blk_nul;
	int binary;          /* a block was binary: the reading ends there */
	/* -ESTALE from src_read(): the file was cut short to shrunk_to
	 * bytes while read, when shrunk_at bytes of it had been read */
	uint64_t shrunk_to, shrunk_at;
};

/*
 * Opens path ("-": standard input, refused with -ENOTTY on a terminal,
 * -EBADF if it was closed)
 * and tells what it holds.  Returns 0, or -errno (-EISDIR for a
 * directory) with nothing printed: callers word it (see src_detect()).
 */
int src_open(struct src *s, const char *path);

/*
 * Reads up to n bytes of the input, head first; for text, also checks
 * each block: the bytes before a binary one are returned, then -EILSEQ
 * (src_read() may have returned the start of that block when it came in
 * pieces), s->blk_start saying where it starts, s->what what it looks
 * like.  0 at the end; -ESTALE at the end of a regular file cut short
 * under the reader (what was in the rest is lost: see shrunk_to), which
 * src_read_error() words.
 */
ssize_t src_read(struct src *s, void *buf, size_t n);

/*
 * 1 if the next src_read() would wait: a stream with no bytes there yet
 * (a live pipe).  A reader that prints as it goes writes out what it
 * has first, so that it shows as it comes, not when the input ends.
 */
int src_idle(const struct src *s);

/* What src_open()'s error rc means, in words: strerror(), but for a
 * standard input closed when kmsg started, what to do. */
const char *src_strerror(int rc);

/*
 * Says why src_read() (or a reader over s) failed with rc: a binary block
 * where kind ("dmesg text") was expected, s cut short while it was read,
 * or the system's words.
 */
void src_read_error(const struct src *s, ssize_t rc, const char *kind);

/* What a subcommand takes with --file: a mask of these. */
enum {
	SRC_TAKES_LOG  = 1u << SRC_LOG,
	SRC_TAKES_DUMP = 1u << SRC_DUMP,
	SRC_TAKES_TEXT = 1u << SRC_TEXT,
};

/*
 * Every subcommand's way into --file: opens path as src_open() does and
 * checks that it holds one of the kinds in takes (SRC_TAKES_*).  Returns
 * 0 with s open; -1 after saying why not, in the same words for every
 * subcommand (a directory, a terminal, a closed standard input, binary
 * data, or a kind it does not take: "NAME: is a kmsg dump; --file takes a
 * kmsg log"); 1 when path cannot be opened at all (missing, unreadable):
 * the caller then opens it with cli_open_log(), which words that as for a
 * log.
 */
int src_open_for(struct src *s, const char *path, unsigned takes);

/* Says that the dump name is damaged or cut short, and how the records
 * before the damage can still be read. */
void src_dump_damaged(const char *name);

/* Closes the input (standard input too).  Safe to call twice. */
void src_close(struct src *s);

/*
 * The input as a log, read only: a log file opened in place (flags are
 * kmsg_log_open()'s), a dump or a log arriving on a pipe through
 * kmsg_dump_open_fd().  Prints why not and returns NULL on failure.
 */
struct kmsg_log *src_open_log(struct src *s, unsigned flags);

#endif
