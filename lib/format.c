/*
 * format.c - records as text: dmesg(1)'s lines, dmesg's JSON, the /dev/kmsg
 * export format; and dmesg's raw text read back into records.
 *
 * The short output is byte for byte what util-linux dmesg prints for the
 * same record, timestamp formats, decoding, colours and escapes included.
 * Where dmesg is wrong kmsg does not follow it:
 *
 *  - \r, \v, \f and the Unicode bidi controls (U+061C, U+200E, U+200F,
 *    U+202A..U+202E, U+2066..U+2069) are escaped: dmesg passes them, and
 *    they can rewrite what a terminal shows.  Unicode noncharacters are
 *    escaped as dmesg does in a UTF-8 locale; unassigned code points pass
 *    (dmesg's view of them depends on the C library's Unicode version).
 *  - The first reltime line is always absolute (dmesg prints a delta when
 *    it falls in 00:00 on 1 January), and a reltime line one year to the
 *    minute after the previous one is absolute.
 *  - -x decodes every facility (2.38 leaves local0..local7 undecoded, 2.41
 *    decodes them as kmsg does).
 *  - The ISO zone offset carries its sign for offsets between -01:00 and 0.
 *  - Month and day names are always English, whatever the locale.
 *  - JSON follows dmesg 2.41 (2.38 repeats the file in every "msg" and
 *    computes "pri" wrongly); a NUL does not cut the message short, bytes
 *    that are not valid UTF-8 are written as the text \xNN, and an empty
 *    document is still valid JSON.
 *
 * Numbers and names are written by hand: printf() per record caps the
 * renderer near 11 M records/s, this reaches several times that.
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

#include "kmsg.h"

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

static const char wday_names[7][3] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};

static const char month_names[12][3] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static const char hex_digits[] = "0123456789abcdef";

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

enum esc_mode {
	ESC_TEXT,  /* message text: tab and newline pass */
	ESC_FIELD, /* a field on its own line: tab and newline escaped too */
	ESC_NONE,  /* KMSG_FMT_NOESCAPE */
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
	int have_tm;
	int64_t tm_base;
	struct tm tm;

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

static char *put_str(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

#define PUT_LIT(p, lit) put_str((p), (lit), sizeof(lit) - 1)

static char *put_cstr(char *p, const char *s)
{
	return put_str(p, s, strlen(s));
}

static char *put_2d(char *p, unsigned v)
{
	memcpy(p, digit_pairs + 2 * v, 2);
	return p + 2;
}

/* v in decimal, no padding. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	char *t = tmp + sizeof(tmp);

	while (v >= 100) {
		t -= 2;
		memcpy(t, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		t -= 2;
		memcpy(t, digit_pairs + 2 * v, 2);
	} else {
		*--t = (char)('0' + v);
	}
	return put_str(p, t, (size_t)(tmp + sizeof(tmp) - t));
}

static char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, -(uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* s left-aligned in width columns (as printf's %-*s). */
static char *put_left(char *p, const char *s, size_t width)
{
	size_t len = strlen(s);

	p = put_str(p, s, len);
	if (len < width) {
		memset(p, ' ', width - len);
		p += width - len;
	}
	return p;
}

/* s right-aligned in width columns (as printf's %*s). */
static char *put_padded(char *p, const char *s, size_t len, size_t width)
{
	if (len < width) {
		memset(p, ' ', width - len);
		p += width - len;
	}
	return put_str(p, s, len);
}

/*
 * us microseconds as seconds with six decimals, right-aligned in width
 * columns, with a '+' before values >= 0 if plus: the text printf's
 * "%*.06f" / "%+*.06f" gives for us / 1e6.  dmesg's "%5ld.%06ld" is the
 * same text for width 12.  Integer arithmetic gives exactly the digits the
 * double would round to.
 */
static char *put_fixed(char *p, int64_t us, size_t width, int plus)
{
	uint64_t a = us < 0 ? -(uint64_t)us : (uint64_t)us;
	uint64_t sec = a / 1000000, v = sec;
	unsigned frac = (unsigned)(a % 1000000);
	size_t ndig = 1, len;
	char *d;

	/* Straight into p, digits written backwards: this runs once per
	 * line, and a scratch buffer cost two small memcpy calls. */
	while (v >= 10) {
		v /= 10;
		ndig++;
	}
	len = ndig + 7 + (us < 0 || plus);
	for (; len < width; width--)
		*p++ = ' ';
	if (us < 0)
		*p++ = '-';
	else if (plus)
		*p++ = '+';
	d = p + ndig;
	for (v = sec; v >= 100; v /= 100) {
		d -= 2;
		memcpy(d, digit_pairs + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(d - 2, digit_pairs + 2 * v, 2);
	else
		d[-1] = (char)('0' + v);
	p += ndig;
	*p++ = '.';
	p = put_2d(p, frac / 10000);
	p = put_2d(p, frac / 100 % 100);
	return put_2d(p, frac % 100);
}

static char *put_hex(char *p, unsigned char c)
{
	p[0] = '\\';
	p[1] = 'x';
	p[2] = hex_digits[c >> 4];
	p[3] = hex_digits[c & 15];
	return p + 4;
}

/* ------------------------------------------------------------------ */
/* Escaping                                                            */

/*
 * Length of the valid UTF-8 sequence of more than one byte at s (at most
 * n bytes), its code point in *cp; 0 if there is none.  Overlong forms,
 * surrogates and code points past U+10FFFF are invalid, as for glibc's
 * mbrtowc(), so dmesg and kmsg escape the same bytes.
 */
static size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return len;
}

/*
 * Code points beyond ASCII that are escaped: C1 controls (terminal
 * commands of their own), bidi controls (they reorder what a terminal
 * shows) and noncharacters.
 */
static int cp_unsafe(uint32_t cp)
{
	if (cp < 0xa0)
		return 1;
	if (cp == 0x061c || cp == 0x200e || cp == 0x200f)
		return 1;
	if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069))
		return 1;
	if ((cp >= 0xfdd0 && cp <= 0xfdef) || (cp & 0xfffe) == 0xfffe)
		return 1;
	return 0;
}

/*
 * Bytes that pass unchanged without a closer look, per output: printable
 * ASCII everywhere, tab in message text, minus JSON's and /dev/kmsg's
 * specials ('"' is 0x22, '\\' is 0x5c).
 */
static const unsigned char pass_text[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1,
};
static const unsigned char pass_field[256] = {
	[0x20 ... 0x7e] = 1,
};
static const unsigned char pass_json[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};
static const unsigned char pass_kmsg[256] = {
	[0x20 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

enum pass_kind { PASS_TEXT, PASS_JSON, PASS_KMSG };

/*
 * Nonzero if any of the 8 bytes in x may need a closer look: a byte below
 * 0x20 or from 0x7f up, and for JSON '"' and '\\', for /dev/kmsg '\\'.
 * Never zero when such a byte is there; may be nonzero for a tab.
 */
static inline uint64_t word_special(uint64_t x, enum pass_kind kind)
{
	uint64_t m = ((x - ONES * 0x20) & ~x) | x | (x + ONES);
	uint64_t q;

	if (kind != PASS_TEXT) {
		q = x ^ (ONES * '\\');
		m |= (q - ONES) & ~q;
	}
	if (kind == PASS_JSON) {
		q = x ^ (ONES * '"');
		m |= (q - ONES) & ~q;
	}
	return m & HIGHS;
}

/*
 * The index of the first byte from i on that pass[] does not let through,
 * or len; eight bytes at a time while they are all plain.
 */
static inline size_t scan_plain(const unsigned char *s, size_t i, size_t len,
				const unsigned char *pass, enum pass_kind kind)
{
	uint64_t x;
	size_t stop;

	for (;;) {
		while (len - i >= 8) {
			memcpy(&x, s + i, 8);
			if (word_special(x, kind))
				break;
			i += 8;
		}
		stop = len - i >= 8 ? i + 8 : len;
		while (i < stop && pass[s[i]])
			i++;
		if (i < stop || i == len)
			return i;
	}
}

/* Newlines in s, which decide how much room indenting takes. */
static size_t count_newlines(const char *s, size_t len)
{
	const char *end = s + len;
	size_t n = 0;

	while (s < end && (s = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		n++;
		s++;
	}
	return n;
}

/*
 * Writes text as dmesg does: printable ASCII, tab, newline and printable
 * UTF-8 as they are, every other byte as \xNN (see cp_unsafe()); with
 * ascii (a terminal whose charset is not UTF-8) every byte from 0x80 up
 * as \xNN, as dmesg does in such a locale.  A newline is followed by
 * indent spaces, so continuation lines stand under the first line's text,
 * unless a NUL comes next (as in dmesg, which indents a newline at the end
 * of the text too: blank lines after a record keep the indent).  Needs
 * 4 * len + newlines * indent bytes of room.
 */
static char *put_text(char *p, const char *text, size_t len, size_t indent,
		      enum esc_mode mode, int ascii)
{
	const unsigned char *s = (const unsigned char *)text;
	const unsigned char *pass = mode == ESC_FIELD ? pass_field : pass_text;
	size_t i = 0, j, n;
	uint32_t cp;

	while (i < len) {
		j = scan_plain(s, i, len, pass, PASS_TEXT);
		p = put_str(p, text + i, j - i);
		if (j == len)
			break;
		i = j;
		if (s[i] == '\n' && mode != ESC_FIELD) {
			*p++ = '\n';
			if (indent && (i + 1 == len || s[i + 1] != '\0')) {
				memset(p, ' ', indent);
				p += indent;
			}
			i++;
		} else if (mode == ESC_NONE) {
			*p++ = (char)s[i++];
		} else if (s[i] < 0x80 || ascii) {
			p = put_hex(p, s[i++]);
		} else if ((n = utf8_seq(s + i, len - i, &cp)) == 0) {
			p = put_hex(p, s[i++]);
		} else if (cp_unsafe(cp)) {
			for (; n > 0; n--)
				p = put_hex(p, s[i++]);
		} else {
			p = put_str(p, text + i, n);
			i += n;
		}
	}
	return p;
}

/* \uXXXX, and a surrogate pair for code points past the BMP. */
static char *put_json_u(char *p, uint32_t cp)
{
	if (cp > 0xffff) {
		cp -= 0x10000;
		p = put_json_u(p, 0xd800 | cp >> 10);
		return put_json_u(p, 0xdc00 | (cp & 0x3ff));
	}
	p[0] = '\\';
	p[1] = 'u';
	p[2] = hex_digits[cp >> 12 & 15];
	p[3] = hex_digits[cp >> 8 & 15];
	p[4] = hex_digits[cp >> 4 & 15];
	p[5] = hex_digits[cp & 15];
	return p + 6;
}

/*
 * Writes text as the inside of a JSON string, as dmesg 2.41 does (\" \\
 * \b \t \n \f \r, \u00xx for other controls); further, unless noesc, DEL,
 * C1, bidi controls and noncharacters as \uXXXX, which any JSON reader
 * turns back into the same characters.  Bytes that are not UTF-8 cannot
 * be in a JSON string: each is written as the six characters "\\xNN",
 * which read as the text \xNN the other outputs show.  Needs 6 * len bytes.
 */
static char *put_json_text(char *p, const char *text, size_t len, int noesc)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, j, n;
	uint32_t cp;
	unsigned char c;

	while (i < len) {
		j = scan_plain(s, i, len, pass_json, PASS_JSON);
		p = put_str(p, text + i, j - i);
		if (j == len)
			break;
		i = j;
		c = s[i];
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			i++;
		} else if (c < 0x20) {
			*p++ = '\\';
			switch (c) {
			case '\b': *p++ = 'b'; break;
			case '\t': *p++ = 't'; break;
			case '\n': *p++ = 'n'; break;
			case '\f': *p++ = 'f'; break;
			case '\r': *p++ = 'r'; break;
			default:
				p = put_json_u(p - 1, c);
				break;
			}
			i++;
		} else if (c == 0x7f) {
			if (noesc)
				*p++ = (char)c;
			else
				p = put_json_u(p, c);
			i++;
		} else if ((n = utf8_seq(s + i, len - i, &cp)) == 0) {
			*p++ = '\\';
			p = put_hex(p, c);
			i++;
		} else {
			if (!noesc && cp_unsafe(cp))
				p = put_json_u(p, cp);
			else
				p = put_str(p, text + i, n);
			i += n;
		}
	}
	return p;
}

/*
 * Writes bytes as /dev/kmsg does: < 0x20, >= 0x7f and backslash as \xHH,
 * the rest as they are.  Needs 4 * len bytes.
 */
static char *put_kmsg_text(char *p, const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, j;

	while (i < len) {
		j = scan_plain(s, i, len, pass_kmsg, PASS_KMSG);
		p = put_str(p, text + i, j - i);
		if (j == len)
			break;
		p = put_hex(p, s[j]);
		i = j + 1;
	}
	return p;
}

/* ------------------------------------------------------------------ */
/* Times                                                               */

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;

	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/*
 * localtime() of sec.  A local minute lasts 60 seconds and has one UTC
 * offset (zones change offset on a minute of local time), so the result
 * is kept and reused for the other seconds of that minute.  A leap second
 * (tm_sec 60, in the "right/" zones) lies past the minute's 60 seconds and
 * is always looked up.
 */
static const struct tm *local_tm(struct kmsg_fmt *f, int64_t sec)
{
	time_t t = (time_t)sec;

	if (f->have_tm && sec >= f->tm_base && sec - f->tm_base < 60) {
		f->tm.tm_sec = (int)(sec - f->tm_base);
		return &f->tm;
	}
	if (localtime_r(&t, &f->tm) == NULL) {
		memset(&f->tm, 0, sizeof(f->tm));
		f->tm.tm_mday = 1;
		f->tm.tm_year = 70;
		f->have_tm = 0;
		return &f->tm;
	}
	f->have_tm = 1;
	f->tm_base = sec - f->tm.tm_sec;
	return &f->tm;
}

/* " 2" or "12": strftime's %e. */
static char *put_mday(char *p, int d)
{
	if (d < 10) {
		*p++ = ' ';
		*p++ = (char)('0' + d);
		return p;
	}
	return put_2d(p, (unsigned)d);
}

static char *put_hms(char *p, const struct tm *tm, int seconds)
{
	p = put_2d(p, (unsigned)tm->tm_hour);
	*p++ = ':';
	p = put_2d(p, (unsigned)tm->tm_min);
	if (seconds) {
		*p++ = ':';
		p = put_2d(p, (unsigned)tm->tm_sec);
	}
	return p;
}

/* strftime "%a %b %e %H:%M:%S %Y" in the C locale. */
static char *put_ctime(char *p, const struct tm *tm)
{
	p = put_str(p, wday_names[tm->tm_wday], 3);
	*p++ = ' ';
	p = put_str(p, month_names[tm->tm_mon], 3);
	*p++ = ' ';
	p = put_mday(p, tm->tm_mday);
	*p++ = ' ';
	p = put_hms(p, tm, 1);
	*p++ = ' ';
	return put_i64(p, (int64_t)tm->tm_year + 1900);
}

/* "%Y-%m-%dT%H:%M:%S,uuuuuu+hh:mm" as dmesg's ISO format (year %4ld). */
static char *put_iso(char *p, const struct tm *tm, unsigned usec)
{
	char year[24];
	long off = tm->tm_gmtoff;
	unsigned mins;

	p = put_padded(p, year,
		       (size_t)(put_i64(year, (int64_t)tm->tm_year + 1900) - year), 4);
	*p++ = '-';
	p = put_2d(p, (unsigned)tm->tm_mon + 1);
	*p++ = '-';
	p = put_2d(p, (unsigned)tm->tm_mday);
	*p++ = 'T';
	p = put_hms(p, tm, 1);
	*p++ = ',';
	p = put_2d(p, usec / 10000);
	p = put_2d(p, usec / 100 % 100);
	p = put_2d(p, usec % 100);
	*p++ = off < 0 ? '-' : '+';
	mins = (unsigned)((off < 0 ? -off : off) / 60);
	p = put_2d(p, mins / 60 % 100);
	*p++ = ':';
	return put_2d(p, mins % 60);
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
		p = put_ctime(p, local_tm(f, floor_div(rec->real_ns, 1000000000)));
		if (flags & KMSG_FMT_SHOWDELTA) {
			p = PUT_LIT(p, " <");
			p = put_fixed(p, take_delta(f, us), 12, 0);
			*p++ = '>';
		}
		return PUT_LIT(p, "] ");
	case KMSG_TIME_ISO:
		sec = floor_div(rec->real_ns, 1000000000);
		frac = rec->real_ns % 1000000000;
		if (frac < 0)
			frac += 1000000000;
		p = put_iso(p, local_tm(f, sec), (unsigned)(frac / 1000));
		*p++ = ' ';
		return p;
	case KMSG_TIME_RELTIME:
		tm = local_tm(f, floor_div(rec->real_ns, 1000000000));
		delta = take_delta(f, us);
		if (!f->have_last_min || tm->tm_min != f->last_min ||
		    tm->tm_hour != f->last_hour || tm->tm_yday != f->last_yday ||
		    tm->tm_year != f->last_year) {
			*timebreak = 1;
			*p++ = '[';
			p = put_str(p, month_names[tm->tm_mon], 3);
			p = put_mday(p, tm->tm_mday);
			*p++ = ' ';
			p = put_hms(p, tm, 0);
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
		p = put_text(p, fld.key, fld.key_len, 0, mode, ascii);
		*p++ = '=';
		p = put_text(p, fld.value, fld.value_len, 0, mode, ascii);
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
	room = 4 * len + 64;
	if (indent)
		room += count_newlines(text, len) * indent;
	p = ensure(f, p, room);
	if (p == NULL)
		return -ENOMEM;

	if (color) {
		sub = subsys_len(text, len);
		if (sub) {
			p = PUT_LIT(p, COLOR_SUBSYS);
			p = put_text(p, text, sub, indent, mode, ascii);
			p = PUT_LIT(p, COLOR_RESET);
			text += sub;
			len -= sub;
		}
		lc = rec->level < 8 ? level_colors[rec->level] : NULL;
		if (lc == NULL && memmem(text, len, "segfault at", 11) != NULL)
			lc = COLOR_SEGFAULT;
		if (lc)
			p = put_cstr(p, lc);
		p = put_text(p, text, len, indent, mode, ascii);
		if (lc)
			p = PUT_LIT(p, COLOR_RESET);
	} else {
		p = put_text(p, text, len, indent, mode, ascii);
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
		p = put_json_text(p, rec->text, len,
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
		p = put_kmsg_text(p, rec->text, len);
	*p++ = '\n';
	while ((rc = kmsg_field_next(&fld, rec, &pos)) == 1) {
		p = ensure(f, p, 4 * (fld.key_len + fld.value_len) + 3);
		if (p == NULL)
			return -ENOMEM;
		*p++ = ' ';
		p = put_kmsg_text(p, fld.key, fld.key_len);
		*p++ = '=';
		p = put_kmsg_text(p, fld.value, fld.value_len);
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
		*p++ = hex_digits[(rec->seq_id >> shift) & 15];
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

/* ------------------------------------------------------------------ */
/* Reading dmesg's raw text                                            */

/*
 * Parses "[" spaces [-] seconds [. fraction] "]" from p (just after the
 * '[') into *ns; returns the position after the ']', or NULL if the text
 * is not such a time.  The fraction is a decimal fraction ("1.5" is one
 * and a half seconds; dmesg would read 5 microseconds), ns precision.
 * *range is set if the time does not fit in int64_t nanoseconds.
 */
static const char *parse_time(const char *p, const char *end, int64_t *ns,
			      int *range)
{
	int neg = 0;
	int64_t sec = 0, frac = 0, scale = 100000000;
	const char *d;

	while (p < end && *p == ' ')
		p++;
	if (p < end && *p == '-') {
		neg = 1;
		p++;
	}
	d = p;
	while (p < end && *p >= '0' && *p <= '9') {
		if (sec > (INT64_MAX / 1000000000 - 9) / 10) {
			*range = 1;
			return NULL;
		}
		sec = sec * 10 + (*p++ - '0');
	}
	if (p == d)
		return NULL;
	if (p < end && *p == '.') {
		d = ++p;
		while (p < end && *p >= '0' && *p <= '9') {
			frac += (*p++ - '0') * scale;
			scale /= 10;
		}
		if (p == d)
			return NULL;
	}
	if (p >= end || *p != ']')
		return NULL;
	*ns = sec * 1000000000 + frac;
	if (neg)
		*ns = -*ns;
	return p + 1;
}

/*
 * Reads "<N>" at the start of a record as dmesg reads it when it uses the
 * priority: N as strtol() takes it (blanks, a sign, digits), facility
 * (N & 0x3f8) >> 3 and level N & 7, as glibc's LOG_FAC() and LOG_PRI();
 * a facility past local7 is none.  Without a number, or with anything but
 * '>' after it (2.38 then drops that byte and keeps the number; 2.41 fixed
 * it so), there is no priority and the text starts after the '<'.  Returns
 * where the text starts.
 */
static const char *read_prio(const char *p, const char *end, unsigned *fac,
			     unsigned *lev)
{
	const char *q = p + 1, *d;
	int neg = 0;
	unsigned long v = 0, limit;

	while (q < end && (*q == ' ' || (*q >= '\t' && *q <= '\r')))
		q++;
	if (q < end && (*q == '+' || *q == '-'))
		neg = *q++ == '-';
	limit = (unsigned long)LONG_MAX + (unsigned long)neg;
	for (d = q; q < end && *q >= '0' && *q <= '9'; q++) {
		unsigned digit = (unsigned)(*q - '0');

		if (v > (limit - digit) / 10)
			return p + 1; /* ERANGE: strtol() fails */
		v = v * 10 + digit;
	}
	if (q == d || q == end || *q != '>')
		return p + 1;
	if (neg)
		v = -v; /* two's complement, as the long it is in dmesg */
	*fac = (unsigned)(v & 0x3f8) >> 3;
	*lev = (unsigned)(v & 7);
	if (*fac >= KMSG_NFACILITIES)
		*fac = KMSG_PRIO_NONE;
	return q + 1;
}

/*
 * One record of dmesg -r text into a record: see kmsg.h.  dmesg's own
 * reading is followed where it is a rule, not an accident: without
 * KMSG_DMESG_SKIP_PRIO the "<N>" is read as read_prio() says; with it,
 * everything up to the first '>' (or NUL) is dropped, as dmesg does when
 * it prints no priority, unless the record has neither, where dmesg
 * would print an empty line for it: the priority reading is used then.
 * The time is read if '[' is followed by a space or a digit, as dmesg
 * reads it, its fraction as a decimal fraction ("1.5" is one and a half
 * seconds: dmesg would read 5 microseconds); text that only looks like a
 * time stays text, where dmesg drops the '['.
 */
int kmsg_dmesg_parse_flags(struct kmsg_record *rec, const char *line,
			   size_t len, int64_t boot_real_ns, unsigned flags)
{
	const char *p, *end, *q;
	unsigned fac = KMSG_PRIO_NONE, lev = KMSG_PRIO_NONE;
	int range = 0;
	int64_t ns = 0;

	if (rec == NULL || (line == NULL && len) || (flags & ~KMSG_DMESG_SKIP_PRIO))
		return KMSG_EINVAL;
	if (len && line[len - 1] == '\n')
		len--;
	if (len == 0)
		return 0;
	end = line + len;
	p = line;
	if (*p == '<') {
		q = NULL;
		if (flags & KMSG_DMESG_SKIP_PRIO) {
			for (q = p + 1; q < end && *q != '>' && *q != '\0'; q++)
				;
			q = q < end ? q + 1 : NULL;
		}
		p = q ? q : read_prio(p, end, &fac, &lev);
	}
	if (end - p >= 2 && p[0] == '[' &&
	    (p[1] == ' ' || (p[1] >= '0' && p[1] <= '9'))) {
		q = parse_time(p + 1, end, &ns, &range);
		if (range)
			return KMSG_EINVAL;
		if (q != NULL) {
			p = q;
			if (p < end && *p == ' ')
				p++;
		}
	}
	if ((ns > 0 && boot_real_ns > INT64_MAX - ns) ||
	    (ns < 0 && boot_real_ns < INT64_MIN - ns))
		return KMSG_EINVAL;

	memset(rec, 0, sizeof(*rec));
	rec->facility = fac;
	rec->level = lev;
	rec->boot_ns = ns;
	rec->real_ns = boot_real_ns + ns;
	rec->text = p;
	rec->text_len = (size_t)(end - p);
	return 1;
}

int kmsg_dmesg_parse(struct kmsg_record *rec, const char *line, size_t len,
		     int64_t boot_real_ns)
{
	return kmsg_dmesg_parse_flags(rec, line, len, boot_real_ns, 0);
}
