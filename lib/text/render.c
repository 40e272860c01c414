/*
 * render.c - records as text: dmesg(1)'s lines, dmesg's JSON, the
 * /dev/kmsg export format, journalctl's JSON record objects; and the
 * renderer object that keeps what one
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
 *
 * The caller column and -J's "caller" key are dmesg 2.40's, shown as it
 * shows them whenever a record carries the kernel's caller
 * (KMSG_KERNEL_CALLER: text of dmesg 2.40, the kernel's /dev/kmsg
 * records); kmsg's own caller, which no dmesg shows, only when asked
 * (KMSG_FMT_CALLER).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* memmem */
#endif
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "text.h"

/* Room for the time columns, and for everything in a line that is not
 * text: decode, time, colours. */
#define TIME_COLUMNS_MAX (64 * (1 + KMSG_FMT_TIMES_MAX))
#define PREFIX_MAX (128 + TIME_COLUMNS_MAX)

#define COLOR_RESET     "\033[0m"

/* dmesg's colours, for the parts kmsg_fmt_opts.colors leaves NULL. */
static const char *const default_colors[KMSG_COLOR_COUNT] = {
	[KMSG_COLOR_SUBSYS]    = "\033[33m",
	[KMSG_COLOR_TIME]      = "\033[32m",
	[KMSG_COLOR_TIMEBREAK] = "\033[32m\033[1m",
	[KMSG_COLOR_ALERT]     = "\033[7m\033[31m",
	[KMSG_COLOR_CRIT]      = "\033[1m\033[31m",
	[KMSG_COLOR_ERR]       = "\033[31m",
	[KMSG_COLOR_WARN]      = "\033[1m",
	[KMSG_COLOR_SEGFAULT]  = "\033[2m\033[31m",
};

/* The colour of each level's text; emerg has none in dmesg either. */
static const int level_colors[8] = {
	-1, KMSG_COLOR_ALERT, KMSG_COLOR_CRIT, KMSG_COLOR_ERR, KMSG_COLOR_WARN,
	-1, -1, -1,
};

/* A level's name as dmesg -x writes it: syslog's, but "warn" for warning.
 * level is 0..7. */
static const char *dmesg_level(int level)
{
	return level == 4 ? "warn" : kmsg_level_name((unsigned)level);
}

struct kmsg_fmt {
	struct kmsg_fmt_opts opts; /* opts.colors point into color_buf */
	char *color_buf;
	size_t color_room;         /* the longest sequence and a reset */
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

	/* the JSON record objects: what kmsg_fmt_set_keys() left of them */
	unsigned members;        /* 1 << enum member, of those shown */
	int all_fields;          /* every field shown, else those of keyv */
	char *keys;              /* the list, copied; keyv points into it */
	struct key_ref { const char *s; size_t len; } *keyv;
	size_t nkeys;
	struct sorted_field { struct kmsg_field f; size_t idx; } *sorted;
	size_t sorted_cap;
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
 * Writes one time column of the short output at p, space included: tf
 * (a KMSG_TIME_*), with " <delta>" for MONO and CTIME when with_delta
 * (NOTIME with it is DELTA), delta the microseconds since the record
 * before.  Sets *timebreak when it is reltime's absolute form, and
 * updates the reltime state.  64 bytes at most.
 */
static char *put_time_column(struct kmsg_fmt *f, char *p, const struct kmsg_record *rec,
			     unsigned tf, int with_delta, int64_t delta, int *timebreak)
{
	int64_t us = rec->boot_ns / 1000;
	int64_t sec, frac;
	const struct tm *tm;
	char tb_unix[24];

	switch ((enum kmsg_time_format)tf) {
	case KMSG_TIME_MONO:
		*p++ = '[';
		p = put_fixed(p, us, 12, 0);
		if (with_delta) {
			p = PUT_LIT(p, " <");
			p = put_fixed(p, delta, 12, 0);
			*p++ = '>';
		}
		return PUT_LIT(p, "] ");
	case KMSG_TIME_NOTIME:
		if (!with_delta)
			return p;
		/* -t -d is the delta alone */
		__attribute__((fallthrough));
	case KMSG_TIME_DELTA:
		p = PUT_LIT(p, "[<");
		p = put_fixed(p, delta, 12, 0);
		return PUT_LIT(p, ">] ");
	case KMSG_TIME_CTIME:
		*p++ = '[';
		tm = kmsg__local_tm(&f->tm, kmsg__floor_div(rec->real_ns, 1000000000));
		p = kmsg__put_ctime(p, tm);
		if (with_delta) {
			p = PUT_LIT(p, " <");
			p = put_fixed(p, delta, 12, 0);
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
	case KMSG_TIME_SHORT_ISO:
	case KMSG_TIME_SHORT_ISO_PRECISE:
	case KMSG_TIME_SHORT_PRECISE:
		sec = kmsg__floor_div(rec->real_ns, 1000000000);
		frac = (rec->real_ns - sec * 1000000000) / 1000;
		tm = kmsg__local_tm(&f->tm, sec);
		if (tf == KMSG_TIME_SHORT_PRECISE)
			p = kmsg__put_syslog_time(p, tm, (long)frac);
		else
			p = kmsg__put_iso_short(p, tm, tf == KMSG_TIME_SHORT_ISO ?
						-1 : (long)frac);
		*p++ = ' ';
		return p;
	case KMSG_TIME_SHORT_UNIX:
		/* journalctl's "%10llu.%06llu" */
		sec = kmsg__floor_div(rec->real_ns, 1000000000);
		frac = (rec->real_ns - sec * 1000000000) / 1000;
		p = put_padded(p, tb_unix, (size_t)(put_i64(tb_unix, sec) - tb_unix), 10);
		*p++ = '.';
		p = put_2d(p, (unsigned)(frac / 10000));
		p = put_2d(p, (unsigned)(frac / 100 % 100));
		p = put_2d(p, (unsigned)(frac % 100));
		*p++ = ' ';
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
 * Writes the time columns of the short output at p, each followed by a
 * space (TIME_COLUMNS_MAX bytes at most), and sets *timebreak when one
 * is reltime's absolute form.  As in dmesg 2.40 and later, every column
 * of a line shows the one delta, the time since the record rendered
 * before; -r's form is the whole prefix.
 */
static char *put_time_prefix(struct kmsg_fmt *f, char *p,
			     const struct kmsg_record *rec, int *timebreak)
{
	int64_t us = rec->boot_ns / 1000;
	int64_t delta = take_delta(f, us);

	p = put_time_column(f, p, rec, f->opts.time,
			    (f->opts.flags & KMSG_FMT_SHOWDELTA) != 0, delta, timebreak);
	if (f->opts.time == KMSG_TIME_RAW)
		return p;
	for (unsigned i = 0; i < f->opts.ntimes; i++)
		p = put_time_column(f, p, rec, f->opts.times[i] & ~KMSG_TIME_WITH_DELTA,
				    (f->opts.times[i] & KMSG_TIME_WITH_DELTA) != 0,
				    delta, timebreak);
	return p;
}

/* 1 if one of the time columns is reltime. */
static int has_reltime(const struct kmsg_fmt *f)
{
	if (f->opts.time == KMSG_TIME_RELTIME)
		return 1;
	for (unsigned i = 0; i < f->opts.ntimes; i++) {
		if (f->opts.times[i] == KMSG_TIME_RELTIME)
			return 1;
	}
	return 0;
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

int kmsg_fmt_caller_sized(char *buf, size_t size, const struct kmsg_record *rec,
			  size_t rec_size)
{
	char tmp[12], *p = tmp;

	if (buf == NULL || rec == NULL || size == 0 || rec_size < KMSG__RECORD_SIZE_1)
		return KMSG_EINVAL;
	if (rec->flags & KMSG_KERNEL_CALLER) {
		/* the kernel's encoding: the top bit marks a CPU */
		*p++ = rec->caller & 0x80000000u ? 'C' : 'T';
		p = put_u64(p, rec->caller & 0x7fffffffu);
	} else if (rec->caller == 0 ||
		   ((rec->caller & 0x80000000u) && rec->pid == 0)) {
		*p = '\0';
	} else if (rec->caller & 0x80000000u) {
		/* kmsg_caller_id() of another pid namespace */
		*p++ = 'P';
		p = put_u64(p, rec->pid);
	} else {
		*p++ = 'T';
		p = put_u64(p, rec->caller);
	}
	if ((size_t)(p - tmp) >= size)
		return KMSG_EINVAL;
	memcpy(buf, tmp, (size_t)(p - tmp));
	buf[p - tmp] = '\0';
	return (int)(p - tmp);
}

/* 1 if rec's caller is shown: the kernel's always, as dmesg 2.40 shows it. */
static int show_caller(const struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	return (f->opts.flags & KMSG_FMT_CALLER) || (rec->flags & KMSG_KERNEL_CALLER);
}

/*
 * The caller and pid columns of the short output, as dmesg 2.40 writes
 * its caller column: "[%*s] ", the name right-aligned in caller_width
 * columns (wider names are not cut); none for a record without one.
 * Needs 2 * 32 bytes.
 */
static char *put_who(const struct kmsg_fmt *f, char *p, const struct kmsg_record *rec)
{
	unsigned width = f->opts.caller_width ? f->opts.caller_width : 5;
	char name[12];
	size_t n;

	for (int col = 0; col < 2; col++) {
		if (col == 0 && show_caller(f, rec)) {
			int len = kmsg_fmt_caller(name, sizeof(name), rec);

			n = len > 0 ? (size_t)len : 0;
		} else if (col == 1 && (f->opts.flags & KMSG_FMT_PID) && rec->pid)
			name[0] = 'P', n = (size_t)(put_u64(name + 1, rec->pid) - name);
		else
			continue;
		if (n == 0)
			continue;
		*p++ = '[';
		for (size_t i = n; i < width; i++)
			*p++ = ' ';
		p = put_str(p, name, n);
		p = PUT_LIT(p, "] ");
	}
	return p;
}

/* Writes s (n bytes) in colour c; "" as c's sequence: no colour. */
static char *put_color(const struct kmsg_fmt *f, char *p, int c,
		       const char *s, size_t n)
{
	const char *seq = f->opts.colors[c];

	p = put_cstr(p, seq);
	p = put_str(p, s, n);
	return *seq ? PUT_LIT(p, COLOR_RESET) : p;
}

/*
 * Text of rec (len bytes of it from text) as the short output writes it,
 * with dmesg's colours when they are asked for: the subsystem prefix,
 * then the rest in the level's colour.  Each newline is followed by
 * indent spaces, but one that ends the text with KMSG_FMT_NO_TAIL_INDENT.  Needs 4 * len + 64 bytes and the indents.
 */
static char *put_colored_text(struct kmsg_fmt *f, char *p, const struct kmsg_record *rec,
			      const char *text, size_t len, size_t indent)
{
	unsigned flags = f->opts.flags;
	enum esc_mode mode = (flags & KMSG_FMT_NOESCAPE) ? ESC_NONE : ESC_TEXT;
	int ascii = (flags & KMSG_FMT_ASCII) != 0;
	size_t last_nl = (flags & KMSG_FMT_NO_TAIL_INDENT) && indent && len &&
			 text[len - 1] == '\n';
	size_t sub;
	int lc;

	if (!(flags & KMSG_FMT_COLOR)) {
		p = kmsg__put_text(p, text, len - last_nl, indent, mode, ascii);
		if (last_nl)
			*p++ = '\n';
		return p;
	}
	sub = subsys_len(text, len);
	if (sub) {
		p = put_cstr(p, f->opts.colors[KMSG_COLOR_SUBSYS]);
		p = kmsg__put_text(p, text, sub, indent, mode, ascii);
		if (*f->opts.colors[KMSG_COLOR_SUBSYS])
			p = PUT_LIT(p, COLOR_RESET);
		text += sub;
		len -= sub;
	}
	lc = rec->level < 8 ? level_colors[rec->level] : -1;
	if (lc < 0 && memmem(text, len, "segfault at", 11) != NULL)
		lc = KMSG_COLOR_SEGFAULT;
	if (lc >= 0)
		p = put_cstr(p, f->opts.colors[lc]);
	p = kmsg__put_text(p, text, len - last_nl, indent, mode, ascii);
	if (last_nl)
		*p++ = '\n';
	if (lc >= 0 && *f->opts.colors[lc])
		p = PUT_LIT(p, COLOR_RESET);
	return p;
}

/*
 * dmesg -p (util-linux 2.39 and later): each line of a text with
 * newlines gets the prefix of the first, which f->buf holds up to p:
 * the decoding up to decode_len, the time up to time_end, then the
 * caller and pid columns.  As in dmesg, reltime's later lines show a
 * delta of 0 in its place, and empty lines are left out.  Returns the
 * end, newline included, or NULL when memory runs out.
 */
static char *put_prefixed_lines(struct kmsg_fmt *f, char *p, const struct kmsg_record *rec,
				size_t decode_len, size_t time_end, int timebreak)
{
	static const char zero[] = "[  +0.000000] ";
	size_t plen = (size_t)(p - f->buf), off = 0;
	int reltime = has_reltime(f), first = 1;

	while (off < rec->text_len) {
		const char *s = rec->text + off;
		const char *nl = memchr(s, '\n', rec->text_len - off);
		size_t n = nl ? (size_t)(nl - s) : rec->text_len - off;

		off += n + 1;
		if (n == 0)
			continue;
		/* the prefix, a zero delta in colour, the text: f->buf may move */
		p = ensure(f, p, plen + sizeof(zero) + 4 * n + 64 + 3 * f->color_room);
		if (p == NULL)
			return NULL;
		if (!first && !reltime) {
			*p++ = '\n';
			p = put_str(p, f->buf, plen);
		} else if (!first) {
			*p++ = '\n';
			p = put_str(p, f->buf, decode_len);
			if (f->opts.flags & KMSG_FMT_COLOR)
				p = put_color(f, p, timebreak ? KMSG_COLOR_TIMEBREAK :
					      KMSG_COLOR_TIME, zero, sizeof(zero) - 1);
			else
				p = PUT_LIT(p, zero);
			p = put_str(p, f->buf + time_end, plen - time_end);
		}
		first = 0;
		p = put_colored_text(f, p, rec, s, n, 0);
	}
	*p++ = '\n';
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
	int color = (flags & KMSG_FMT_COLOR) != 0;
	int timebreak = 0, err = 0;
	const char *text = rec->text;
	size_t len = rec->text_len, indent = 0, decode_len, time_end, room;
	char *p;

	p = ensure(f, f->buf, PREFIX_MAX + f->color_room);
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
		p = put_left(p, dmesg_level(rec->level), 6);
		p = PUT_LIT(p, ": ");
	}
	indent = decode_len = (size_t)(p - f->buf);

	if (color) {
		char tb[TIME_COLUMNS_MAX];
		char *te = put_time_prefix(f, tb, rec, &timebreak);

		if (te != tb) {
			p = put_color(f, p, timebreak ? KMSG_COLOR_TIMEBREAK :
						       KMSG_COLOR_TIME, tb,
				      (size_t)(te - tb));
			indent += (size_t)(te - tb);
		}
	} else {
		char *ts = p;

		p = put_time_prefix(f, p, rec, &timebreak);
		indent += (size_t)(p - ts);
	}
	time_end = (size_t)(p - f->buf);
	if ((flags & (KMSG_FMT_CALLER | KMSG_FMT_PID)) || (rec->flags & KMSG_KERNEL_CALLER)) {
		char *ws = p;

		p = put_who(f, p, rec);
		indent += (size_t)(p - ws);
	}

	if (len > (size_t)INT_MAX / 8)
		return -ENOMEM;
	if ((flags & KMSG_FMT_FORCE_PREFIX) && memchr(text, '\n', len)) {
		p = put_prefixed_lines(f, p, rec, decode_len, time_end, timebreak);
		if (p == NULL)
			return -ENOMEM;
		goto fields;
	}
	/* Counting the newlines is a pass over the text: short text gets
	 * room for a newline in every byte instead, some KiB at most. */
	room = 4 * len + 64 + 2 * f->color_room;
	if (indent)
		room += (len <= 256 ? len : kmsg__count_newlines(text, len)) * indent;
	p = ensure(f, p, room);
	if (p == NULL)
		return -ENOMEM;
	p = put_colored_text(f, p, rec, text, len, indent);
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
	int fields = (f->opts.flags & KMSG_FMT_FIELDS) && rec->fields_len;
	char *p;

	if (len > (size_t)INT_MAX / 8 || rec->fields_len > (size_t)INT_MAX / 16)
		return -ENOMEM;
	/* a field escapes to 6 bytes a byte at most, with its quotes, '='
	 * and separator within the 3 bytes of key and value lengths */
	p = ensure(f, f->buf, PREFIX_MAX + 6 * len + (fields ? 8 * rec->fields_len : 0));
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
			p = put_cstr(p, dmesg_level(rec->level));
			p = PUT_LIT(p, "\",\n");
		} else {
			p = PUT_LIT(p, JSON_IND "\"pri\": ");
			p = put_u64(p, (uint64_t)rec->facility * 8 + rec->level);
			p = PUT_LIT(p, ",\n");
		}
	}
	p = PUT_LIT(p, JSON_IND "\"time\": ");
	p = put_fixed(p, rec->boot_ns / 1000, 12, 0);
	if (show_caller(f, rec)) {
		char name[12];

		/* dmesg 2.40's key, only for a record with a caller */
		if (kmsg_fmt_caller(name, sizeof(name), rec) > 0) {
			p = PUT_LIT(p, ",\n" JSON_IND "\"caller\": \"");
			p = put_cstr(p, name);
			*p++ = '"';
		}
	}
	if ((f->opts.flags & KMSG_FMT_PID) && rec->pid) {
		p = PUT_LIT(p, ",\n" JSON_IND "\"claimed_pid\": ");
		p = put_u64(p, rec->pid);
	}
	p = PUT_LIT(p, ",\n" JSON_IND "\"msg\": \"");
	if (len)
		p = kmsg__put_json_text(p, rec->text, len,
				  (f->opts.flags & KMSG_FMT_NOESCAPE) != 0);
	*p++ = '"';
	if (fields) {
		/* dmesg has no fields: --fields adds them (a kmsg key) as
		 * "KEY=value" strings, in order, as the short output lists
		 * them; a key may come twice */
		struct kmsg_field fl;
		size_t pos = 0;
		int rc, n = 0;

		p = PUT_LIT(p, ",\n" JSON_IND "\"fields\": [");
		while ((rc = kmsg_field_next(&fl, rec, &pos)) == 1) {
			if (n++)
				p = PUT_LIT(p, ", ");
			*p++ = '"';
			p = kmsg__put_json_text(p, fl.key, fl.key_len, 0);
			*p++ = '=';
			p = kmsg__put_json_text(p, fl.value, fl.value_len,
					  (f->opts.flags & KMSG_FMT_NOESCAPE) != 0);
			*p++ = '"';
		}
		if (rc < 0)
			return rc;
		*p++ = ']';
	}
	*p++ = '\n';
	return (int)(p - f->buf);
}

/* v as 16 hexadecimal digits, the form of ids (seq_id, boot_id). */
static char *put_hex64(char *p, uint64_t v)
{
	for (int shift = 60; shift >= 0; shift -= 4)
		*p++ = kmsg__hex_digits[(v >> shift) & 15];
	return p;
}

/* prio,seq,ts_usec,flags;text, then " KEY=value" lines and kmsg's own
 * " _KEY=value" lines. */
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
	if ((f->opts.flags & KMSG_FMT_CALLER) || (rec->flags & KMSG_KERNEL_CALLER)) {
		char name[12];

		/* where the kernel puts its caller (CONFIG_PRINTK_CALLER);
		 * the kernel's own is always there, to be read back */
		if (kmsg_fmt_caller(name, sizeof(name), rec) > 0) {
			p = PUT_LIT(p, ",caller=");
			p = put_cstr(p, name);
		}
	}
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
	/* What the kernel's format has no place for, under keys no field
	 * can have (keys begin with a capital letter), so that the records
	 * read back (kmsg_parse.c) print as the log: the numbering the
	 * sequence number is of and the exact times, which records parsed
	 * from text have none of, the boot id, the pid and kmsg's caller id
	 * (in the first line, where the kernel writes its own, it would
	 * break the parsers of what kmsg wrote before). */
	p = ensure(f, p, 6 * 40);
	if (p == NULL)
		return -ENOMEM;
	if (rec->seq_id) {
		p = PUT_LIT(p, " _SEQNUM_ID=");
		p = put_hex64(p, rec->seq_id);
		p = PUT_LIT(p, "\n _REALTIME_NS=");
		p = put_i64(p, rec->real_ns);
		p = PUT_LIT(p, "\n _BOOTTIME_NS=");
		p = put_i64(p, rec->boot_ns);
		*p++ = '\n';
	}
	if (rec->boot_id) {
		p = PUT_LIT(p, " _BOOT_ID=");
		p = put_hex64(p, rec->boot_id);
		*p++ = '\n';
	}
	if (rec->pid) {
		p = PUT_LIT(p, " _CLAIMED_PID=");
		p = put_u64(p, rec->pid);
		*p++ = '\n';
	}
	if (rec->caller && !(rec->flags & KMSG_KERNEL_CALLER)) {
		p = PUT_LIT(p, " _CALLER=");
		p = put_u64(p, rec->caller);
		*p++ = '\n';
	}
	return (int)(p - f->buf);
}

/* ------------------------------------------------------------------ */
/* JSON record objects (journalctl's -o json and its kin)              */

/* The members, in the order they are written; see kmsg.h. */
enum member {
	M_SEQ, M_SEQ_ID, M_TIME_NS, M_TIME, M_BOOT_NS, M_BOOT_ID, M_PID,
	M_CALLER, M_FACILITY, M_FACILITY_NAME, M_LEVEL, M_LEVEL_NAME, M_TEXT,
	M_COUNT
};

static const char *const member_names[M_COUNT] = {
	"seq", "seq_id", "time_ns", "time", "boot_ns", "boot_id", "claimed_pid",
	"caller", "facility", "facility_name", "level", "level_name", "text",
};

#define ALL_MEMBERS ((1u << M_COUNT) - 1)

/* Where an object is being written: its separators depend on both. */
struct jw {
	char *p;
	int pretty;
	int first;
};

/*
 * The separator before a member and its key, escaped (field keys come
 * from the record).  Needs 6 * len + 16 bytes.
 */
static void jw_key(struct jw *w, const char *key, size_t len)
{
	char *p = w->p;

	if (w->first)
		p = w->pretty ? PUT_LIT(p, "{\n    \"") : PUT_LIT(p, "{\"");
	else
		p = w->pretty ? PUT_LIT(p, ",\n    \"") : PUT_LIT(p, ",\"");
	w->first = 0;
	p = kmsg__put_json_text(p, key, len, 0);
	w->p = w->pretty ? PUT_LIT(p, "\": ") : PUT_LIT(p, "\":");
}

/* 16 hexadecimal digits in quotes, or null for 0.  Needs 18 bytes. */
static char *put_json_hex64(char *p, uint64_t v)
{
	if (v == 0)
		return PUT_LIT(p, "null");
	*p++ = '"';
	p = put_hex64(p, v);
	*p++ = '"';
	return p;
}

/* A number, or null for 0 (no pid, no caller).  Needs 20 bytes. */
static char *put_json_u64_or_null(char *p, uint64_t v)
{
	return v ? put_u64(p, v) : PUT_LIT(p, "null");
}

/* A name in quotes, or null.  Needs strlen(name) + 2 bytes. */
static char *put_json_name(char *p, const char *name)
{
	if (name == NULL)
		return PUT_LIT(p, "null");
	*p++ = '"';
	p = put_cstr(p, name);
	*p++ = '"';
	return p;
}

/*
 * Bytes as a JSON string if they are valid UTF-8, else as an array of
 * their values (journalctl's form for binary data).  Needs 6 * len + 2.
 */
static char *put_json_bytes(char *p, const char *s, size_t len, int noesc)
{
	if (kmsg__utf8_valid(s, len)) {
		*p++ = '"';
		if (len)
			p = kmsg__put_json_text(p, s, len, noesc);
		*p++ = '"';
		return p;
	}
	*p++ = '[';
	for (size_t i = 0; i < len; i++) {
		if (i)
			*p++ = ',';
		p = put_u64(p, (unsigned char)s[i]);
	}
	*p++ = ']';
	return p;
}

/* Fields by key, then by their place in the record. */
static int cmp_sorted_field(const void *a, const void *b)
{
	const struct sorted_field *x = a, *y = b;
	size_t n = x->f.key_len < y->f.key_len ? x->f.key_len : y->f.key_len;
	int c = memcmp(x->f.key, y->f.key, n);

	if (c)
		return c;
	if (x->f.key_len != y->f.key_len)
		return x->f.key_len < y->f.key_len ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* 1 if the field key (len bytes) is to be shown. */
static int field_shown(const struct kmsg_fmt *f, const char *key, size_t len)
{
	if (f->all_fields)
		return 1;
	for (size_t i = 0; i < f->nkeys; i++) {
		if (f->keyv[i].len == len && memcmp(f->keyv[i].s, key, len) == 0)
			return 1;
	}
	return 0;
}

/*
 * The record's fields as members, sorted by key into f->sorted first so
 * that a key given several times becomes one member with an array of its
 * values.  Returns the number of fields, or a negative error.
 */
static long sort_fields(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	struct kmsg_field fld;
	size_t pos = 0, n = 0;
	int rc;

	while ((rc = kmsg_field_next(&fld, rec, &pos)) == 1) {
		if (!field_shown(f, fld.key, fld.key_len))
			continue;
		if (n == f->sorted_cap) {
			size_t cap = f->sorted_cap ? 2 * f->sorted_cap : 16;
			struct sorted_field *ns = realloc(f->sorted, cap * sizeof(*ns));

			if (ns == NULL)
				return -ENOMEM;
			f->sorted = ns;
			f->sorted_cap = cap;
		}
		f->sorted[n].f = fld;
		f->sorted[n].idx = n;
		n++;
	}
	if (rc < 0)
		return rc;
	if (n > 1) /* f->sorted is still NULL for a record with none */
		qsort(f->sorted, n, sizeof(*f->sorted), cmp_sorted_field);
	return (long)n;
}

static int same_key(const struct kmsg_field *a, const struct kmsg_field *b)
{
	return a->key_len == b->key_len && memcmp(a->key, b->key, a->key_len) == 0;
}

/*
 * One record as one JSON object: on one line (json), one member a line
 * (json-pretty), or on one line after an RS byte (json-seq, RFC 7464).
 * Every call's text is one whole record, newline included.
 */
static int render_json_record(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	int noesc = (f->opts.flags & KMSG_FMT_NOESCAPE) != 0;
	int prio = prio_valid(rec);
	unsigned m = f->members;
	struct jw w = { .pretty = f->opts.output == KMSG_OUT_JSON_PRETTY, .first = 1 };
	long nf;

	if (rec->text_len > (size_t)INT_MAX / 8 || rec->fields_len > (size_t)INT_MAX / 8)
		return -ENOMEM;
	nf = sort_fields(f, rec);
	if (nf < 0)
		return (int)nf;
	/* the members but the text take some 500 bytes at most */
	w.p = ensure(f, f->buf, 1024 + 6 * rec->text_len);
	if (w.p == NULL)
		return -ENOMEM;
	if (f->opts.output == KMSG_OUT_JSON_SEQ)
		*w.p++ = '\x1e';
	for (unsigned i = 0; i < M_COUNT; i++) {
		if (!(m >> i & 1))
			continue;
		jw_key(&w, member_names[i], strlen(member_names[i]));
		switch ((enum member)i) {
		case M_SEQ:
			w.p = put_u64(w.p, rec->seq);
			break;
		case M_SEQ_ID:
			w.p = put_json_hex64(w.p, rec->seq_id);
			break;
		case M_TIME_NS:
			w.p = put_i64(w.p, rec->real_ns);
			break;
		case M_TIME:
			*w.p++ = '"';
			w.p = kmsg__put_iso_utc_ns(w.p, rec->real_ns);
			*w.p++ = '"';
			break;
		case M_BOOT_NS:
			w.p = put_i64(w.p, rec->boot_ns);
			break;
		case M_BOOT_ID:
			w.p = put_json_hex64(w.p, rec->boot_id);
			break;
		case M_PID:
			w.p = put_json_u64_or_null(w.p, rec->pid);
			break;
		case M_CALLER:
			/* the kernel's T0 (its idle task) is a caller */
			w.p = rec->flags & KMSG_KERNEL_CALLER ? put_u64(w.p, rec->caller)
				: put_json_u64_or_null(w.p, rec->caller);
			break;
		case M_FACILITY:
			w.p = prio ? put_u64(w.p, rec->facility) : PUT_LIT(w.p, "null");
			break;
		case M_FACILITY_NAME:
			w.p = put_json_name(w.p, prio ? kmsg_facility_name(rec->facility) : NULL);
			break;
		case M_LEVEL:
			w.p = prio ? put_u64(w.p, rec->level) : PUT_LIT(w.p, "null");
			break;
		case M_LEVEL_NAME:
			w.p = put_json_name(w.p, prio ? kmsg_level_name(rec->level) : NULL);
			break;
		case M_TEXT:
			w.p = put_json_bytes(w.p, rec->text, rec->text_len, noesc);
			break;
		case M_COUNT:
			break;
		}
	}
	for (size_t i = 0; i < (size_t)nf; ) {
		const struct kmsg_field *k = &f->sorted[i].f;
		size_t j = i + 1, room = 6 * k->key_len + 24;

		while (j < (size_t)nf && same_key(&f->sorted[j].f, k))
			j++;
		for (size_t v = i; v < j; v++)
			room += 6 * f->sorted[v].f.value_len + 4;
		w.p = ensure(f, w.p, room);
		if (w.p == NULL)
			return -ENOMEM;
		jw_key(&w, k->key, k->key_len);
		if (j - i > 1)
			*w.p++ = '[';
		for (size_t v = i; v < j; v++) {
			if (v > i)
				w.p = w.pretty ? PUT_LIT(w.p, ", ") : PUT_LIT(w.p, ",");
			w.p = put_json_bytes(w.p, f->sorted[v].f.value,
					     f->sorted[v].f.value_len, noesc);
		}
		if (j - i > 1)
			*w.p++ = ']';
		i = j;
	}
	if (w.first)
		w.p = PUT_LIT(w.p, "{}\n");
	else
		w.p = w.pretty ? PUT_LIT(w.p, "\n}\n") : PUT_LIT(w.p, "}\n");
	return (int)(w.p - f->buf);
}

/* One entry of the Journal Export Format (export.c). */
static int render_export(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	size_t room;
	int rc = kmsg__export_room(&room, rec);
	char *p;

	if (rc < 0)
		return rc;
	p = ensure(f, f->buf, room);
	if (p == NULL)
		return -ENOMEM;
	return (int)(kmsg__put_export(p, rec) - f->buf);
}

/* 1 if s (len bytes) is one of member_names, its index in *i. */
static int member_index(unsigned *i, const char *s, size_t len)
{
	/* claimed_pid's name before the writer's word was told from the
	 * kernel's by name */
	if (len == 3 && memcmp(s, "pid", 3) == 0) {
		*i = M_PID;
		return 1;
	}
	for (*i = 0; *i < M_COUNT; (*i)++) {
		if (strlen(member_names[*i]) == len &&
		    memcmp(member_names[*i], s, len) == 0)
			return 1;
	}
	return 0;
}

int kmsg_fmt_set_keys(struct kmsg_fmt *f, const char *keys)
{
	struct key_ref *kv = NULL;
	size_t nkeys = 0, n = 0;
	unsigned members = 0, i;
	char *copy, *s;

	if (f == NULL)
		return KMSG_EINVAL;
	if (keys == NULL) {
		free(f->keys);
		free(f->keyv);
		f->keys = NULL;
		f->keyv = NULL;
		f->nkeys = 0;
		f->members = ALL_MEMBERS;
		f->all_fields = 1;
		return 0;
	}
	for (const char *c = keys; *c; c++)
		n += *c == ',';
	copy = strdup(keys);
	kv = calloc(n + 1, sizeof(*kv));
	if (copy == NULL || kv == NULL) {
		free(copy);
		free(kv);
		return -ENOMEM;
	}
	for (s = copy;;) {
		char *end = strchrnul(s, ',');
		size_t len = (size_t)(end - s);

		if (member_index(&i, s, len)) {
			members |= 1u << i;
		} else if (kmsg_key_stored_valid(s, len)) {
			kv[nkeys].s = s;
			kv[nkeys].len = len;
			nkeys++;
		} else {
			free(copy);
			free(kv);
			return KMSG_EINVAL;
		}
		if (*end == '\0')
			break;
		s = end + 1;
	}
	free(f->keys);
	free(f->keyv);
	f->keys = copy;
	f->keyv = kv;
	f->nkeys = nkeys;
	f->members = members;
	f->all_fields = 0;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The renderer                                                        */

#define FMT_FLAGS (KMSG_FMT_DECODE | KMSG_FMT_SHOWDELTA | KMSG_FMT_COLOR | \
		   KMSG_FMT_NOESCAPE | KMSG_FMT_FIELDS | KMSG_FMT_ASCII | \
		   KMSG_FMT_CALLER | KMSG_FMT_PID | KMSG_FMT_FORCE_PREFIX | \
		   KMSG_FMT_NO_TAIL_INDENT | KMSG_FMT_UTC)


/*
 * Points f->opts.colors at copies of the sequences it names (dmesg's own
 * for NULL) in one block, and sets the room a colour takes.  Returns 0;
 * -1 with color_buf NULL when memory ran out, with it set (to be freed)
 * for a sequence longer than KMSG_FMT_COLOR_MAX.
 */
static int set_colors(struct kmsg_fmt *f)
{
	const char **c = f->opts.colors;
	size_t total = 0, len[KMSG_COLOR_COUNT];
	char *p;

	for (int i = 0; i < KMSG_COLOR_COUNT; i++) {
		if (c[i] == NULL)
			c[i] = default_colors[i];
		len[i] = strnlen(c[i], KMSG_FMT_COLOR_MAX + 1);
		total += len[i] + 1;
	}
	p = f->color_buf = malloc(total);
	if (p == NULL)
		return -1;
	for (int i = 0; i < KMSG_COLOR_COUNT; i++) {
		if (len[i] > KMSG_FMT_COLOR_MAX)
			return -1;
		memcpy(p, c[i], len[i] + 1);
		c[i] = p;
		p += len[i] + 1;
		if (len[i] + sizeof(COLOR_RESET) > f->color_room)
			f->color_room = len[i] + sizeof(COLOR_RESET);
	}
	return 0;
}

/* 1 if the time columns of opts (version 4) are ones the short output has. */
static int times_valid(const struct kmsg_fmt_opts *opts)
{
	if (opts->ntimes > KMSG_FMT_TIMES_MAX)
		return 0;
	for (unsigned i = 0; i < opts->ntimes; i++) {
		unsigned tf = opts->times[i] & ~KMSG_TIME_WITH_DELTA;

		if (tf > KMSG_TIME_SHORT_UNIX || tf == KMSG_TIME_RAW ||
		    ((opts->times[i] & KMSG_TIME_WITH_DELTA) &&
		     tf != KMSG_TIME_MONO && tf != KMSG_TIME_CTIME))
			return 0;
	}
	return 1;
}

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
	if (opts->version < 1 || opts->version > KMSG_FMT_OPTS_VERSION ||
	    (unsigned)opts->output > KMSG_OUT_EXPORT ||
	    (unsigned)opts->time > KMSG_TIME_SHORT_UNIX || (opts->flags & ~FMT_FLAGS) ||
	    (opts->version >= 3 && opts->caller_width > 16) ||
	    (opts->version >= 4 && !times_valid(opts)))
		return KMSG_EINVAL;
	f = calloc(1, sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	/* an older struct ends before the members it did not have yet:
	 * read no further */
	if (opts->version == 1)
		memcpy(&f->opts, opts, offsetof(struct kmsg_fmt_opts, colors));
	else if (opts->version == 2)
		memcpy(&f->opts, opts, offsetof(struct kmsg_fmt_opts, caller_width));
	else if (opts->version == 3)
		memcpy(&f->opts, opts, offsetof(struct kmsg_fmt_opts, ntimes));
	else
		f->opts = *opts;
	f->opts.version = KMSG_FMT_OPTS_VERSION;
	f->tm.utc = (opts->flags & KMSG_FMT_UTC) != 0;
	if (set_colors(f) < 0) {
		int rc = f->color_buf ? KMSG_EINVAL : -ENOMEM;

		free(f->color_buf);
		free(f);
		return rc;
	}
	f->members = ALL_MEMBERS;
	f->all_fields = 1;
	*out = f;
	return 0;
}

void kmsg_fmt_free(struct kmsg_fmt *f)
{
	if (f == NULL)
		return;
	free(f->buf);
	free(f->color_buf);
	free(f->keys);
	free(f->keyv);
	free(f->sorted);
	free(f);
}

/*
 * Renders rec; *out points at the text (not NUL-terminated) until the next
 * call.  Returns its length, -ENOMEM, KMSG_EINVAL for bad arguments, or
 * KMSG_ECORRUPT if rec's field area is malformed.
 */
int kmsg_fmt_record_sized(const char **out, struct kmsg_fmt *f,
			  const struct kmsg_record *rec, size_t size)
{
	int n;

	/* a caller's record of a later version begins with this one */
	if (out == NULL || f == NULL || rec == NULL || size < KMSG__RECORD_SIZE_1 ||
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
	case KMSG_OUT_JSON_LINE:
	case KMSG_OUT_JSON_PRETTY:
	case KMSG_OUT_JSON_SEQ:
		n = render_json_record(f, rec);
		break;
	case KMSG_OUT_EXPORT:
		n = render_export(f, rec);
		break;
	default:
		n = render_short(f, rec);
		break;
	}
	if (n >= 0)
		*out = f->buf;
	return n;
}

int kmsg_fmt_skip(struct kmsg_fmt *f, const struct kmsg_record *rec)
{
	if (f == NULL || rec == NULL)
		return KMSG_EINVAL;
	f->last_us = rec->boot_ns / 1000;
	return 0;
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
