/*
 * render.c - records as text: dmesg(1)'s lines, dmesg's JSON, the
 * /dev/kmsg export format; and the renderer object that keeps what one
 * record's line needs of the records before it (deltas, reltime).
 *
 * The short output is byte for byte what util-linux dmesg prints for the
 * same record, timestamp formats, decoding, colours and escapes included
 * (escape.c and timefmt.c say where they differ).  Where dmesg is wrong
 * kmsg does not follow it:
 *
 *  - The first reltime line is always absolute (dmesg prints a delta when
 *    it falls in 00:00 on 1 January), and a reltime line one year to the
 *    minute after the previous one is absolute.
 *  - -x decodes every facility (2.38 leaves local0..local7 undecoded, 2.41
 *    decodes them as kmsg does).
 *  - JSON follows dmesg 2.41 (2.38 repeats the file in every "msg" and
 *    computes "pri" wrongly), and an empty document is still valid JSON.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

/* Room for everything in a line that is not text: decode, time, colours. */
#define PREFIX_MAX 256

#define COLOR_RESET     "\033[0m"
#define COLOR_SUBSYS    "\033[33m"
#define COLOR_TIME      "\033[32m"
#define COLOR_TIMEBREAK "\033[32m\033[1m"
#define COLOR_SEGFAULT  "\033[2m\033[31m"

/* dmesg's level colours; emerg has none there either. */
static const char *const level_colors[8] = {
	[1] = "\033[7m\033[31m",
	[2] = "\033[1m\033[31m",
	[3] = "\033[31m",
	[4] = "\033[1m",
};

/* dmesg -x spells warning "warn". */
static const char *const dmesg_levels[8] = {
	"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug",
};

struct kmsg_fmt {
	struct kmsg_fmt_opts opts;
	char *buf;
	size_t cap;

	/* deltas: the since-boot time of the previous record, 0 for none */
	int64_t last_us;

	/* reltime: the local minute of the previous record */
	int have_last_min;
	int last_year, last_yday, last_hour, last_min;

	/* localtime() of one local minute, reused for the records in it */
	struct kmsg__tm_cache tm;

	int json_open; /* the document's opening has been written */
};

/*
 * Makes room for more bytes after p in f's buffer and returns p in the
 * (possibly moved) buffer, or NULL if memory ran out or the text would
 * pass INT_MAX bytes (the return value of kmsg_fmt_record()).
 */
static char *ensure(struct kmsg_fmt *f, char *p, size_t more)
{
	size_t used = (size_t)(p - f->buf);
	size_t cap;
	char *nb;

	if (more > (size_t)INT_MAX - used)
		return NULL;
	if (used + more <= f->cap)
		return p;
	cap = f->cap ? f->cap : 4096;
	while (cap < used + more)
		cap *= 2;
	nb = realloc(f->buf, cap);
	if (nb == NULL)
		return NULL;
	f->buf = nb;
	f->cap = cap;
	return nb + used;
}

/*
 * The time since the previous record, in microseconds, as dmesg's deltas
 * count it; remembers this record's time.  As in dmesg, a previous time of
 * exactly 0 is no previous record: the delta is 0 for the first record and
 * for the one after a record at boot, where every kernel log starts.  A
 * record of kmsg's own never has a since-boot time below a microsecond.
 */
static int64_t take_delta(struct kmsg_fmt *f, int64_t us)
{
	int64_t d = f->last_us != 0 ? us - f->last_us : 0;

	f->last_us = us;
	return d;
}

/* ------------------------------------------------------------------ */
/* The short output                                                    */

/*
 * The length of dmesg's subsystem prefix: text up to and including the
 * first ": " (or ":\t") that has at least one more byte after it; 0 if
 * there is none.  dmesg's search stops at a NUL.
 */
static size_t subsys_len(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len && s[i] != '\0'; i++) {
		if (s[i] == ':' && len - i - 1 >= 2 &&
		    (s[i + 1] == ' ' || s[i + 1] == '\t'))
			return i + 2;
	}
	return 0;
}

/* 0 for a record read from text that named no valid priority. */
static int prio_valid(const struct kmsg_record *rec)
{
	return rec->facility < KMSG_NFACILITIES && rec->level < 8;
}

/*
 * Writes the time prefix of the short output at p, space included, and
 * sets *timebreak when it is reltime's absolute form.  Updates the delta
 * and reltime state.
 */
static char *put_time_prefix(struct kmsg_fmt *f, char *p,
			     const struct kmsg_record *rec, int *timebreak)
{
	unsigned flags = f->opts.flags;
	int64_t us = rec->boot_ns / 1000;
	int64_t sec, frac, delta;
	const struct tm *tm;

	switch (f->opts.time) {
	case KMSG_TIME_MONO:
		*p++ = '[';
		p = put_fixed(p, us, 12, 0);
		if (flags & KMSG_FMT_SHOWDELTA) {
			p = PUT_LIT(p, " <");
			p = put_fixed(p, take_delta(f, us), 12, 0);
			*p++ = '>';
		}
		return PUT_LIT(p, "] ");
	case KMSG_TIME_NOTIME:
		if (!(flags & KMSG_FMT_SHOWDELTA))
			return p;
		/* -t -d is the delta alone */
		__attribute__((fallthrough));
	case KMSG_TIME_DELTA:
		p = PUT_LIT(p, "[<");
		p = put_fixed(p, take_delta(f, us), 12, 0);
		return PUT_LIT(p, ">] ");
	case KMSG_TIME_CTIME:
		*p++ = '[';
		tm = kmsg__local_tm(&f->tm, kmsg__floor_div(rec->real_ns, 1000000000));
		p = kmsg__put_ctime(p, tm);
		if (flags & KMSG_FMT_SHOWDELTA) {
			p = PUT_LIT(p, " <");
			p = put_fixed(p, take_delta(f, us), 12, 0);
			*p++ = '>';
		}
		return PUT_LIT(p, "] ");
	case KMSG_TIME_ISO:
		sec = kmsg__floor_div(rec->real_ns, 1000000000);
		frac = rec->real_ns % 1000000000;
		if (frac < 0)
			frac += 1000000000;
		p = kmsg__put_iso(p, kmsg__local_tm(&f->tm, sec), (unsigned)(frac / 1000));
		*p++ = ' ';
		return p;
	case KMSG_TIME_RELTIME:
		tm = kmsg__local_tm(&f->tm, kmsg__floor_div(rec->real_ns, 1000000000));
		delta = take_delta(f, us);
		if (!f->have_last_min || tm->tm_min != f->last_min ||
		    tm->tm_hour != f->last_hour || tm->tm_yday != f->last_yday ||
		    tm->tm_year != f->last_year) {
			*timebreak = 1;
			*p++ = '[';
			p = kmsg__put_month_day_hm(p, tm);
			p = PUT_LIT(p, "] ");
		} else if (delta < 10000000) {
			p = PUT_LIT(p, "[  ");
			p = put_fixed(p, delta, 8, 1);
			p = PUT_LIT(p, "] ");
		} else {
			p = PUT_LIT(p, "[ ");
			p = put_fixed(p, delta, 9, 1);
			p = PUT_LIT(p, "] ");
		}
		f->have_last_min = 1;
		f->last_min = tm->tm_min;
		f->last_hour = tm->tm_hour;
		f->last_yday = tm->tm_yday;
		f->last_year = tm->tm_year;
		return p;
	case KMSG_TIME_RAW:
		/* text that named no priority gets none back */
		if (prio_valid(rec)) {
			*p++ = '<';
			p = put_u64(p, (uint64_t)rec->facility * 8 + rec->level);
			*p++ = '>';
		}
		*p++ = '[';
		p = put_fixed(p, us, 12, 0);
		return PUT_LIT(p, "] ");
	}
	return p;
}

/*
 * Writes the record's fields one per line, each indented and escaped so
 * that a field can never pass for a message line.  Returns the new end, or
 * NULL with *err set.
 */
static char *put_fields(struct kmsg_fmt *f, char *p,
			const struct kmsg_record *rec, size_t indent, int *err)
{
	enum esc_mode mode = (f->opts.flags & KMSG_FMT_NOESCAPE) ? ESC_NONE
								  : ESC_FIELD;
	int ascii = (f->opts.flags & KMSG_FMT_ASCII) != 0;
	struct kmsg_field fld;
	size_t pos = 0;
	int rc;

	while ((rc = kmsg_field_next(&fld, rec, &pos)) == 1) {
		p = ensure(f, p, indent + 4 * (fld.key_len + fld.value_len) + 2);
		if (p == NULL) {
			*err = -ENOMEM;
			return NULL;
		}
		memset(p, ' ', indent);
		p += indent;
		p = kmsg__put_text(p, fld.key, fld.key_len, 0, mode, ascii);
		*p++ = '=';
		p = kmsg__put_text(p, fld.value, fld.value_len, 0, mode, ascii);
		*p++ = '\n';
	}
	if (rc < 0) {
		*err = rc;
		return NULL;
	}
	return p;
}

/*
 * One line (or several, for text with newlines) of dmesg's output:
 * [decode] [time] text, with dmesg's colours.  An empty text is an empty
 * line with no prefix, and leaves deltas alone, as in dmesg.
 */
static int render_short(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	unsigned flags = f->opts.flags;
	enum esc_mode mode = (flags & KMSG_FMT_NOESCAPE) ? ESC_NONE : ESC_TEXT;
	int color = (flags & KMSG_FMT_COLOR) != 0;
	int ascii = (flags & KMSG_FMT_ASCII) != 0;
	int timebreak = 0, err = 0;
	const char *text = rec->text;
	size_t len = rec->text_len, indent = 0, sub, room;
	const char *lc;
	char *p;

	p = ensure(f, f->buf, PREFIX_MAX);
	if (p == NULL)
		return -ENOMEM;
	if (len == 0) {
		*p++ = '\n';
		indent = 1;
		goto fields;
	}

	if ((flags & KMSG_FMT_DECODE) && f->opts.time != KMSG_TIME_RAW &&
	    prio_valid(rec)) {
		p = put_left(p, kmsg_facility_name(rec->facility), 6);
		*p++ = ':';
		p = put_left(p, dmesg_levels[rec->level], 6);
		p = PUT_LIT(p, ": ");
	}
	indent = (size_t)(p - f->buf);

	if (color) {
		char tb[128];
		char *te = put_time_prefix(f, tb, rec, &timebreak);

		if (te != tb) {
			p = put_cstr(p, timebreak ? COLOR_TIMEBREAK : COLOR_TIME);
			p = put_str(p, tb, (size_t)(te - tb));
			p = PUT_LIT(p, COLOR_RESET);
			indent += (size_t)(te - tb);
		}
	} else {
		char *ts = p;

		p = put_time_prefix(f, p, rec, &timebreak);
		indent += (size_t)(p - ts);
	}

	if (len > (size_t)INT_MAX / 8)
		return -ENOMEM;
	/* Counting the newlines is a pass over the text: short text gets
	 * room for a newline in every byte instead, some KiB at most. */
	room = 4 * len + 64;
	if (indent)
		room += (len <= 256 ? len : kmsg__count_newlines(text, len)) * indent;
	p = ensure(f, p, room);
	if (p == NULL)
		return -ENOMEM;

	if (color) {
		sub = subsys_len(text, len);
		if (sub) {
			p = PUT_LIT(p, COLOR_SUBSYS);
			p = kmsg__put_text(p, text, sub, indent, mode, ascii);
			p = PUT_LIT(p, COLOR_RESET);
			text += sub;
			len -= sub;
		}
		lc = rec->level < 8 ? level_colors[rec->level] : NULL;
		if (lc == NULL && memmem(text, len, "segfault at", 11) != NULL)
			lc = COLOR_SEGFAULT;
		if (lc)
			p = put_cstr(p, lc);
		p = kmsg__put_text(p, text, len, indent, mode, ascii);
		if (lc)
			p = PUT_LIT(p, COLOR_RESET);
	} else {
		p = kmsg__put_text(p, text, len, indent, mode, ascii);
	}
	*p++ = '\n';

fields:
	if ((flags & KMSG_FMT_FIELDS) && rec->fields_len) {
		p = put_fields(f, p, rec, indent ? indent : 1, &err);
		if (p == NULL)
			return err;
	}
	return (int)(p - f->buf);
}

/* ------------------------------------------------------------------ */
/* JSON and /dev/kmsg                                                  */

#define JSON_HEAD "{\n   \"dmesg\": [\n"
#define JSON_IND  "         "

/*
 * One object of dmesg 2.41's -J array.  dmesg writes the closing brace of
 * an object when the next one starts; so does this, so that every call's
 * output ends in a newline and a follower sees each record at once.
 */
static int render_json(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	size_t len = rec->text_len;
	char *p;

	if (len > (size_t)INT_MAX / 8)
		return -ENOMEM;
	p = ensure(f, f->buf, PREFIX_MAX + 6 * len);
	if (p == NULL)
		return -ENOMEM;
	if (!f->json_open) {
		p = PUT_LIT(p, JSON_HEAD "      {\n");
		f->json_open = 1;
	} else {
		p = PUT_LIT(p, "      },{\n");
	}
	if (prio_valid(rec)) {
		if (f->opts.flags & KMSG_FMT_DECODE) {
			p = PUT_LIT(p, JSON_IND "\"fac\": \"");
			p = put_cstr(p, kmsg_facility_name(rec->facility));
			p = PUT_LIT(p, "\",\n" JSON_IND "\"pri\": \"");
			p = put_cstr(p, dmesg_levels[rec->level]);
			p = PUT_LIT(p, "\",\n");
		} else {
			p = PUT_LIT(p, JSON_IND "\"pri\": ");
			p = put_u64(p, (uint64_t)rec->facility * 8 + rec->level);
			p = PUT_LIT(p, ",\n");
		}
	}
	p = PUT_LIT(p, JSON_IND "\"time\": ");
	p = put_fixed(p, rec->boot_ns / 1000, 12, 0);
	p = PUT_LIT(p, ",\n" JSON_IND "\"msg\": \"");
	if (len)
		p = kmsg__put_json_text(p, rec->text, len,
				  (f->opts.flags & KMSG_FMT_NOESCAPE) != 0);
	p = PUT_LIT(p, "\"\n");
	return (int)(p - f->buf);
}

/* prio,seq,ts_usec,flags;text, then " KEY=value" lines and _SEQNUM_ID. */
static int render_kmsg(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	struct kmsg_field fld;
	size_t len = rec->text_len, pos = 0;
	char *p;
	int rc;

	if (len > (size_t)INT_MAX / 8)
		return -ENOMEM;
	p = ensure(f, f->buf, PREFIX_MAX + 4 * len);
	if (p == NULL)
		return -ENOMEM;
	/* /dev/kmsg always names one: text that named none is user.notice,
	 * logger's default */
	p = put_u64(p, prio_valid(rec) ? (uint64_t)rec->facility * 8 + rec->level
				       : 8 + 5);
	*p++ = ',';
	p = put_u64(p, rec->seq);
	*p++ = ',';
	p = put_i64(p, rec->boot_ns / 1000);
	*p++ = ',';
	*p++ = (rec->flags & KMSG_FRAGMENT) ? 'c' : '-';
	*p++ = ';';
	if (len)
		p = kmsg__put_kmsg_text(p, rec->text, len);
	*p++ = '\n';
	while ((rc = kmsg_field_next(&fld, rec, &pos)) == 1) {
		p = ensure(f, p, 4 * (fld.key_len + fld.value_len) + 3);
		if (p == NULL)
			return -ENOMEM;
		*p++ = ' ';
		p = kmsg__put_kmsg_text(p, fld.key, fld.key_len);
		*p++ = '=';
		p = kmsg__put_kmsg_text(p, fld.value, fld.value_len);
		*p++ = '\n';
	}
	if (rc < 0)
		return rc;
	/* The numbering the sequence number is of (records parsed from
	 * text have none), under a key no field can have: keys begin with
	 * a capital letter. */
	if (!rec->seq_id)
		return (int)(p - f->buf);
	p = ensure(f, p, sizeof(" _SEQNUM_ID=") + 17);
	if (p == NULL)
		return -ENOMEM;
	memcpy(p, " _SEQNUM_ID=", 12);
	p += 12;
	for (int shift = 60; shift >= 0; shift -= 4)
		*p++ = kmsg__hex_digits[(rec->seq_id >> shift) & 15];
	*p++ = '\n';
	return (int)(p - f->buf);
}

/* ------------------------------------------------------------------ */
/* The renderer                                                        */

#define FMT_FLAGS (KMSG_FMT_DECODE | KMSG_FMT_SHOWDELTA | KMSG_FMT_COLOR | \
		   KMSG_FMT_NOESCAPE | KMSG_FMT_FIELDS | KMSG_FMT_ASCII)

/*
 * A renderer for opts (NULL: the defaults).  Unknown versions, outputs,
 * time formats or flags are refused with KMSG_EINVAL.
 */
int kmsg_fmt_new(struct kmsg_fmt **out, const struct kmsg_fmt_opts *opts)
{
	static const struct kmsg_fmt_opts dflt = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f;

	if (out == NULL)
		return KMSG_EINVAL;
	if (opts == NULL)
		opts = &dflt;
	if (opts->version != KMSG_FMT_OPTS_VERSION ||
	    (unsigned)opts->output > KMSG_OUT_KMSG ||
	    (unsigned)opts->time > KMSG_TIME_RAW || (opts->flags & ~FMT_FLAGS))
		return KMSG_EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	f->opts = *opts;
	*out = f;
	return 0;
}

void kmsg_fmt_free(struct kmsg_fmt *f)
{
	if (f == NULL)
		return;
	free(f->buf);
	free(f);
}

/*
 * Renders rec; *out points at the text (not NUL-terminated) until the next
 * call.  Returns its length, -ENOMEM, KMSG_EINVAL for bad arguments, or
 * KMSG_ECORRUPT if rec's field area is malformed.
 */
int kmsg_fmt_record(const char **out, struct kmsg_fmt *f,
		    const struct kmsg_record *rec)
{
	int n;

	if (out == NULL || f == NULL || rec == NULL ||
	    (rec->text == NULL && rec->text_len) ||
	    (rec->fields == NULL && rec->fields_len))
		return KMSG_EINVAL;
	switch (f->opts.output) {
	case KMSG_OUT_JSON:
		n = render_json(f, rec);
		break;
	case KMSG_OUT_KMSG:
		n = render_kmsg(f, rec);
		break;
	default:
		n = render_short(f, rec);
		break;
	}
	if (n >= 0)
		*out = f->buf;
	return n;
}

/*
 * Ends the output: for JSON the closing text (a whole empty document if no
 * record came), afterwards a new document starts; nothing for the others.
 */
int kmsg_fmt_end(const char **out, struct kmsg_fmt *f)
{
	static const char tail[] = "      }\n   ]\n}\n";
	static const char empty[] = JSON_HEAD "   ]\n}\n";

	if (out == NULL || f == NULL)
		return KMSG_EINVAL;
	if (f->opts.output != KMSG_OUT_JSON) {
		*out = "";
		return 0;
	}
	if (f->json_open) {
		f->json_open = 0;
		*out = tail;
		return (int)sizeof(tail) - 1;
	}
	*out = empty;
	return (int)sizeof(empty) - 1;
}
