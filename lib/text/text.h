/*
 * text.h - the text layer's own interface: escaping (escape.c) and time
 * formats (timefmt.c), used by the renderers (render.c).  The layer needs
 * nothing of the library but the public header: it turns records into
 * text and dmesg's text back into records (dmesg_parse.c), and knows
 * nothing of files or rings.
 *
 * Writers take p with room enough (each says how much) and return the
 * end of what they wrote, not NUL-terminated.
 */
#ifndef KMSG_TEXT_H
#define KMSG_TEXT_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <kmsg/kmsg.h>
#include "numbers.h"
#include "../sized.h"

/* ---- escape.c ---- */

enum esc_mode {
	ESC_TEXT,  /* message text: tab and newline pass */
	ESC_FIELD, /* a field on its own line: tab and newline escaped too */
	ESC_NONE,  /* KMSG_FMT_NOESCAPE */
};

/* Newlines in s, which decide how much room indenting takes. */
size_t kmsg__count_newlines(const char *s, size_t len);

/*
 * text as dmesg prints it (see escape.c), each newline followed by indent
 * spaces.  Needs 4 * len + newlines * indent bytes.
 */
char *kmsg__put_text(char *p, const char *text, size_t len, size_t indent,
		     enum esc_mode mode, int ascii);

/* text as the inside of a JSON string.  Needs 6 * len bytes. */
char *kmsg__put_json_text(char *p, const char *text, size_t len, int noesc);

/* 1 if text is valid UTF-8 throughout (as put_json_text() judges). */
int kmsg__utf8_valid(const char *text, size_t len);

/* text as /dev/kmsg escapes it.  Needs 4 * len bytes. */
char *kmsg__put_kmsg_text(char *p, const char *text, size_t len);

/*
 * The same three without the vector fast path: the reference the fuzzer
 * holds the others to, byte for byte.
 */
char *kmsg__put_text_scalar(char *p, const char *text, size_t len,
			    size_t indent, enum esc_mode mode, int ascii);
char *kmsg__put_json_text_scalar(char *p, const char *text, size_t len,
				 int noesc);
char *kmsg__put_kmsg_text_scalar(char *p, const char *text, size_t len);

/* ---- timefmt.c ---- */

/* a / b rounded toward minus infinity (b > 0). */
static inline int64_t kmsg__floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* localtime() (gmtime() if utc) of the last minute looked up, kept for
 * the next. */
struct kmsg__tm_cache {
	int utc;
	int have;
	int64_t base; /* the first second of the minute in tm */
	struct tm tm;
};

/* localtime() of sec, through c; a date in 1970 if it cannot be had. */
const struct tm *kmsg__local_tm(struct kmsg__tm_cache *c, int64_t sec);

/* strftime "%a %b %e %H:%M:%S %Y" in the C locale (dmesg -T). */
char *kmsg__put_ctime(char *p, const struct tm *tm);

/* "%Y-%m-%dT%H:%M:%S,uuuuuu+hh:mm", dmesg's iso format. */
char *kmsg__put_iso(char *p, const struct tm *tm, unsigned usec);

/* "%Y-%m-%dT%H:%M:%S.nnnnnnnnnZ": ns since the epoch in UTC.  29 bytes. */
char *kmsg__put_iso_utc_ns(char *p, int64_t ns);

/* strftime "%b%e %H:%M" in the C locale: reltime's absolute form. */
char *kmsg__put_month_day_hm(char *p, const struct tm *tm);

/*
 * journalctl's short times: "%b %d %H:%M:%S" in the C locale (short,
 * short-precise) and "%Y-%m-%dT%H:%M:%S" then "+hh:mm" (short-iso), each
 * with ".uuuuuu" after the seconds when usec >= 0.  64 bytes at most.
 */
char *kmsg__put_syslog_time(char *p, const struct tm *tm, long usec);
char *kmsg__put_iso_short(char *p, const struct tm *tm, long usec);

/* ---- export.c ---- */

/*
 * The room kmsg__put_export() needs for rec, in *room: 0, or
 * KMSG_ECORRUPT (malformed fields) or KMSG_EINVAL (too big to count).
 */
/*
 * The length of the "TAG: " or "TAG[PID]: " that text begins with, where
 * TAG is the record's tag (its SYSLOG_IDENTIFIER), else 0.  kmsg emit -t,
 * kmsg listen and the syslog(3) preload keep the tag in the text too, as
 * dmesg shows a line; a syslog header and the journal's own field carry it
 * already, so syslog.c and export.c leave it out of the message.
 */
size_t kmsg__tag_prefix(const char *text, size_t len, const char *tag, size_t tag_len);
int kmsg__export_room(size_t *room, const struct kmsg_record *rec);

/* rec as one entry of the Journal Export Format, its empty line included. */
char *kmsg__put_export(char *p, const struct kmsg_record *rec);

#endif /* KMSG_TEXT_H */
