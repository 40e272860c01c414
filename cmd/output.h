/*
 * output.h - what kmsg read and kmsg follow share: dmesg's format and
 * filter options (one popt table, included into both; options.c), the
 * record filter (filter.c), the buffered writing of rendered records to
 * standard output (sink.c, through a pager for -H: pager.c) and the
 * reports of records missing between them (gaps.c).
 */
#ifndef KMSG_OUTPUT_H
#define KMSG_OUTPUT_H

#include "cmd.h"
#include "pager.h"

#include <stdint.h>
#include <string.h>
#include <sys/types.h>

/*
 * The format and filter options: -e -T -d -t -r -x -J -o --time-format
 * --noescape --fields -L -H -P -l -f -k -u --since --until --match -q.  A popt
 * callback records them in order (the time formats become columns in the
 * order given, as in dmesg 2.40 and later) in the struct output that
 * out_init() bound, and out_setup() turns them into the output.
 */
extern const struct poptOption output_options[];
/* -H with the pager and -P (read), or -H alone (follow): the same callback. */
extern const struct poptOption output_pager_options[];
extern const struct poptOption output_human_options[];

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

/* What the options asked for, as the callback saw them, in order; all
 * zeros is none given (the default time and output). */
struct out_given {
	/* the time formats, each once, in the order given: KMSG_TIME_*,
	 * or'ed with KMSG_TIME_WITH_DELTA for -d's and -T -d's */
	unsigned times[12];
	size_t ntimes;
	const char *short_name; /* the -o that set a journalctl time, for -d */
	int journal_delta;      /* -d given after it */
	int raw, decode, noescape, fields, human, nopager, quiet;
	int show_caller, show_pid;
	int force_prefix, utc;
	enum kmsg_output output;
	enum color_mode color;
	int color_given;
	uint32_t levels, facilities;
	int flt_lev, flt_fac;
	int have_since, have_until;
	int64_t since, until;
	char **match;
	size_t nmatch;
	char *output_fields;  /* --output-fields, for the JSON records */
	const char *conflict; /* an option -r cannot be used with */
	char err[512];        /* the first bad option, for out_setup() */
};

struct output {
	struct out_given given; /* the options, until out_setup() */
	struct kmsg_fmt_opts fo;
	struct kmsg_fmt *fmt;
	char *esc;            /* out_verbatim()'s escaped text */
	size_t esc_cap;
	char *colors[KMSG_COLOR_COUNT]; /* a scheme's, fo.colors points at them */

	/* the filter; all bits set when not filtering on it */
	uint32_t levels;      /* bit n: level n passes */
	uint32_t facilities;  /* bit n: facility n passes */
	int prio_filter;      /* a bit is clear above (-l, -f, -k, -u) */
	int filtering;        /* that, or any of the below */
	int64_t since_ns, until_ns; /* CLOCK_REALTIME, inclusive */
	int have_since, have_until;
	struct matches *matches; /* --match and the KEY=value arguments
	                            (matches.c); NULL: none */
	struct grep *grep;    /* -g and --pid (grep.c); NULL when not given */
	struct values *values; /* read --list-values (matches.c): list, not print */

	/* standard output */
	char *buf;
	size_t len, cap;
	size_t fill;          /* written out at this much (sink.c); 0: not yet decided */
	int pager;            /* -H and no -P: page when stdout is a terminal */
	struct pager pg;

	/* boots (short output): the boot of the last record printed */
	int quiet;            /* -q: no "-- Boot ID --" line between boots */
	int have_boot;
	uint64_t last_boot;

	/* gaps not yet reported (out_gaps) */
	struct gap_count {
		uint64_t n, gaps, last_seq;
		int at_end;   /* the last gap had no record after it */
	} held_lost, held_unfinished, held_damaged;
	int64_t gap_next_ns;  /* CLOCK_MONOTONIC: when a line may be printed */
};

/*
 * Makes o empty and the one the output options are parsed into: call it
 * before popt parses them, and out_free() at the end, whatever happened
 * in between.
 */
void out_init(struct output *o);

/*
 * Checks and applies the options parsed into o with output_options: builds the
 * renderer and the filter, with the matches words gives (the arguments
 * left after the options, NULL-terminated; NULL for none) and read's
 * --list-values.  follow is nonzero for kmsg follow (never a pager).  On
 * bad usage prints why ("kmsg <cmd>: ...") and returns EXIT_USAGE;
 * EXIT_FAIL if memory runs out; else 0.  Warnings dmesg gives (-d with
 * iso) go to stderr.
 */
int out_setup(struct output *o, const char *cmd, int follow, const char *const *words);

/*
 * Adds a KMSG_FMT_* flag of the short output to the renderer's options (a
 * new renderer, before the first record).  0 or a negative code.
 */
int out_set_flag(struct output *o, unsigned flag);

/*
 * A new renderer for o->fo in place of o->fmt (left as it was on
 * failure), with no state of the records before: after a change of
 * o->fo, or where records of another boot begin.  0 or -ENOMEM.
 */
int out_renew_fmt(struct output *o);

/* Frees what out_init() and out_setup() made; ends the pager if one
 * runs.  o is bound to the options no longer. */
void out_free(struct output *o);

/*
 * The input is dmesg text (-F): the caller and pid columns take dmesg
 * -F's width, not the one of a log's records.  Call before the first
 * record.  0 or -ENOMEM.
 */
int out_text_input(struct output *o);

/* 1 if rec passes the level, facility, time and field filters, else 0. */
int out_match(const struct output *o, const struct kmsg_record *rec);

/*
 * Renders rec into the output buffer if it passes the filter (with
 * --list-values: hands it to the list), writing the buffer out when it
 * fills.  Returns 0, or -errno of a failed write or
 * allocation; see out_fail().
 */
int out_record(struct output *o, const struct kmsg_record *rec);

/*
 * Writes text (n bytes of whole lines, the last newline optional) as
 * dmesg -F -r prints a file: as it is, but escaped as the short output
 * escapes (unless --noescape), ending in a newline; unless ends_line is
 * 0 and the text does not end in one: a piece of a line that goes on
 * (cut where no UTF-8 sequence is split).  0 or -errno.
 */
int out_verbatim(struct output *o, const char *p, size_t n, int ends_line);

/* Writes the string s as it is (no escaping); 0 or -errno as out_record(). */
int out_text(struct output *o, const char *s);

/* Writes out everything buffered.  Returns 0 or -errno. */
int out_flush(struct output *o);

/* Ends the document (JSON's closing) and flushes.  Returns 0 or -errno. */
int out_end(struct output *o);

/*
 * Starts the pager if -H asked for one and stdout is a terminal (PAGER, or
 * less with LESS=FRSX unless LESS is set).  Failing to start one is not an
 * error: the output goes to the terminal.
 */
void out_pager_start(struct output *o);

/*
 * The end after a failed write or render: a closed pipe (EPIPE) is a quiet
 * exit with status 0, anything else is reported; returns EXIT_FAIL.
 */
int out_fail(struct output *o, int err);

/*
 * Reports on stderr the records a reader lost or skipped just before rec
 * (rec->lost, rec->damaged, or a KMSG_GAP record), after flushing what was
 * printed before them so the line lands in place on a terminal.  At most
 * one line of each kind a second: gaps that come faster are added up and
 * reported together by a later call or by out_gaps_flush().  Call it
 * through OUT_GAPS(), which costs nothing when there is no gap.
 */
void out_gaps(struct output *o, const struct kmsg_record *rec);
#define OUT_GAPS(o, rec) \
	do { if ((rec)->lost | (rec)->damaged) out_gaps((o), (rec)); } while (0)

/*
 * Reports the gaps out_gaps() held back, if any, when a line is allowed
 * again or force says so (at the end).  Returns 0, or while something is
 * still held, when it may be printed (CLOCK_MONOTONIC ns).
 */
int64_t out_gaps_flush(struct output *o, int force);

/* How long a line begun in parts may wait for its end before it is shown
 * as it is (follow), or left for a later read (read -c): 2 s. */
#define OUT_FRAGMENT_WAIT_NS (INT64_C(2) * 1000 * 1000 * 1000)


/*
 * kmsg read -K (kmsgfile.c): prints through o the records in the
 * /dev/kmsg format at path ("-": standard input; a character device such
 * as /dev/kmsg is read up to its end), streamed in bounded memory.  Lines
 * not of the format are skipped, the first ten named on stderr with
 * their line numbers and the rest counted.  Returns an exit status.
 */
int read_kmsg_file(struct output *o, const char *path);

#endif
