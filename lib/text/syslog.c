/*
 * syslog.c - syslog's wire formats, the one home of both directions:
 * messages as they arrive on /dev/log or a network socket read into their
 * parts (RFC 5424, RFC 3164 as syslog(3), logger(1), Python and Go send
 * it, or plain text), RFC 5424 structured data walked and unescaped,
 * RFC 6587 octet-counted frames found on a stream, and records written
 * as RFC 5424 or RFC 3164 messages.
 *
 * The parser allocates nothing and copies nothing: every part it finds
 * points into the caller's bytes, which need no NUL and are never read
 * past their length.  Nothing is dropped: what no rule recognises is
 * text.  How ambiguous input is decided (a host or a tag after an RFC
 * 3164 time, the year of a time that has none) is said above the
 * functions that decide it, and in libkmsg(3).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* timegm, tm_gmtoff */
#endif
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "text.h"

#define SYSLOG_MSG_SIZE_1 (offsetof(struct kmsg_syslog_msg, text_len) + sizeof(size_t))

/* RFC 5424's limits of its header fields, in bytes. */
#define HOST_MAX   255
#define APP_MAX    48
#define PROCID_MAX 128
#define MSGID_MAX  32
#define SDNAME_MAX 32
#define TAG_MAX    48  /* a 3164 TAG as long as an APP-NAME may be */
#define TAG3164_OUT 32 /* RFC 3164 4.1.3: a TAG of 32 at most */

static const char months[12][4] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int printusascii(unsigned char c)
{
	return c >= 33 && c <= 126;
}

static int days_in_month(int year, int mon)
{
	static const unsigned char d[12] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	int leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;

	return d[mon] + (mon == 1 && leap);
}

/* n digits at p as a number, or -1 if any is not a digit. */
static int digits(const char *p, int n)
{
	int v = 0;

	while (n--) {
		if (!is_digit(*p))
			return -1;
		v = v * 10 + (*p++ - '0');
	}
	return v;
}

/*
 * "<PRI>" at p: 1 to 3 digits, no leading zero (but "0" itself), at most
 * 191.  Stores the value and returns the bytes it takes, or 0 if p holds
 * none.
 */
static size_t read_pri(int *pri, const char *p, const char *end)
{
	const char *q = p + 1;
	int v = 0, n = 0;

	if (p >= end || *p != '<')
		return 0;
	while (q < end && is_digit(*q) && n < 4) {
		v = v * 10 + (*q++ - '0');
		n++;
	}
	if (n == 0 || n > 3 || q >= end || *q != '>' || v > 191 ||
	    (n > 1 && p[1] == '0'))
		return 0;
	*pri = v;
	return (size_t)(q + 1 - p);
}

/* A PROCID that is a process id: decimal 1..2^31-1, no leading zero; else 0. */
static uint32_t decimal_pid(const char *p, size_t n)
{
	uint64_t v = 0;

	if (!p || n == 0 || n > 10 || *p == '0')
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(p[i]))
			return 0;
		v = v * 10 + (uint64_t)(p[i] - '0');
	}
	return v <= INT32_MAX ? (uint32_t)v : 0;
}

/* ---- RFC 5424 ---------------------------------------------------- */

/*
 * One step through structured data: see kmsg_syslog_sd_next().  With
 * buf NULL values are checked, not copied.  With scan, the data may go
 * on with the rest of a message: a byte other than '[' after an element
 * ends it (0, *pos at that byte) where the public walk finds it malformed.
 */
static int sd_step(struct kmsg_syslog_sd *e, char *buf, size_t size,
		   const char *sd, size_t len, size_t *pos, int scan)
{
	size_t i = *pos, n, o;

	if (i > len)
		return KMSG_EINVAL;
	if (i == len)
		return 0; /* only ever after a ']' (or an empty span) */
	if (sd[i] == ']') {
		if (i == 0)
			return KMSG_ECORRUPT;
		i++;
		if (i == len || sd[i] != '[') {
			if (i < len && !scan)
				return KMSG_ECORRUPT;
			*pos = i;
			return 0;
		}
	}
	if (sd[i] == '[') {
		if (i > 0 && sd[i - 1] != ']')
			return KMSG_ECORRUPT;
		n = ++i;
		while (i < len && i - n < SDNAME_MAX + 1 && printusascii((unsigned char)sd[i]) &&
		       sd[i] != '=' && sd[i] != ']' && sd[i] != '"')
			i++;
		if (i == n || i - n > SDNAME_MAX || i >= len || (sd[i] != ' ' && sd[i] != ']'))
			return KMSG_ECORRUPT;
		e->id = sd + n;
		e->id_len = i - n;
		e->name = NULL;
		e->name_len = 0;
		e->value = NULL;
		e->value_len = 0;
		*pos = i;
		return 1;
	}
	if (sd[i] != ' ' || i == 0)
		return KMSG_ECORRUPT;
	n = ++i;
	while (i < len && i - n < SDNAME_MAX + 1 && printusascii((unsigned char)sd[i]) &&
	       sd[i] != '=' && sd[i] != ']' && sd[i] != '"')
		i++;
	if (i == n || i - n > SDNAME_MAX || len - i < 2 || sd[i] != '=' || sd[i + 1] != '"')
		return KMSG_ECORRUPT;
	e->name = sd + n;
	e->name_len = i - n;
	i += 2;
	o = 0;
	for (;;) {
		char c;

		if (i >= len)
			return KMSG_ECORRUPT;
		c = sd[i++];
		if (c == '"')
			break;
		if (c == ']')
			return KMSG_ECORRUPT;
		if (c == '\\' && i < len && (sd[i] == '"' || sd[i] == '\\' || sd[i] == ']'))
			c = sd[i++];
		if (buf) {
			if (o >= size)
				return KMSG_EINVAL;
			buf[o] = c;
		}
		o++;
	}
	if (i >= len || (sd[i] != ' ' && sd[i] != ']'))
		return KMSG_ECORRUPT;
	e->value = buf;
	e->value_len = o;
	*pos = i;
	return 1;
}

int kmsg_syslog_sd_next(struct kmsg_syslog_sd *e, char *buf, size_t size,
			const char *sd, size_t len, size_t *pos)
{
	if (!e || !buf || !pos || (!sd && len))
		return KMSG_EINVAL;
	return sd_step(e, buf, size, sd, len, pos, 0);
}

/*
 * The end of the structured data that begins at p (a '['), or NULL if it
 * is malformed.
 */
static const char *sd_end(const char *p, const char *end)
{
	struct kmsg_syslog_sd e;
	size_t pos = 0;
	int rc;

	while ((rc = sd_step(&e, NULL, 0, p, (size_t)(end - p), &pos, 1)) == 1)
		;
	return rc == 0 ? p + pos : NULL;
}

/*
 * An RFC 5424 TIMESTAMP (not nil): "YYYY-MM-DDThh:mm:ss[.1-6 digits]"
 * and "Z" or "+hh:mm"/"-hh:mm", nothing else.  Returns 0 and the time,
 * or -1.  A time past what int64_t nanoseconds hold leaves *ns unset and
 * returns 1.
 */
static int read_5424_time(int64_t *ns, int32_t *off, const char *p, size_t len)
{
	const char *end = p + len;
	int Y, M, D, h, m, s, oh, om;
	int64_t frac = 0, scale = 100000000, secs;
	struct tm tm;

	if (len < 20 || p[4] != '-' || p[7] != '-' || p[10] != 'T' ||
	    p[13] != ':' || p[16] != ':')
		return -1;
	Y = digits(p, 4), M = digits(p + 5, 2), D = digits(p + 8, 2);
	h = digits(p + 11, 2), m = digits(p + 14, 2), s = digits(p + 17, 2);
	if (Y < 0 || M < 1 || M > 12 || D < 1 || D > days_in_month(Y, M - 1) ||
	    h < 0 || h > 23 || m < 0 || m > 59 || s < 0 || s > 59)
		return -1;
	p += 19;
	if (*p == '.') {
		const char *d = ++p;

		while (p < end && is_digit(*p) && p - d < 6) {
			frac += (*p++ - '0') * scale;
			scale /= 10;
		}
		if (p == d || (p < end && is_digit(*p)))
			return -1;
	}
	if (p < end && *p == 'Z' && p + 1 == end) {
		*off = 0;
	} else if (end - p == 6 && (*p == '+' || *p == '-') && p[3] == ':') {
		oh = digits(p + 1, 2);
		om = digits(p + 4, 2);
		if (oh < 0 || oh > 23 || om < 0 || om > 59)
			return -1;
		*off = (oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
	} else {
		return -1;
	}
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = Y - 1900;
	tm.tm_mon = M - 1;
	tm.tm_mday = D;
	tm.tm_hour = h;
	tm.tm_min = m;
	tm.tm_sec = s;
	secs = (int64_t)timegm(&tm) - *off;
	if (secs > INT64_MAX / 1000000000 - 1 || secs < INT64_MIN / 1000000000 + 1)
		return 1;
	*ns = secs * 1000000000 + frac;
	return 0;
}

/*
 * One header field ending in a space: "-" (nil: *f NULL) or 1..max bytes
 * of 33..126.  Returns the position after the space, or NULL.
 */
static const char *header_field(const char **f, size_t *flen, const char *p,
				const char *end, size_t max)
{
	const char *s = p;

	while (p < end && printusascii((unsigned char)*p) && (size_t)(p - s) <= max)
		p++;
	if (p == s || (size_t)(p - s) > max || p >= end || *p != ' ')
		return NULL;
	if (p - s == 1 && *s == '-') {
		*f = NULL;
		*flen = 0;
	} else {
		*f = s;
		*flen = (size_t)(p - s);
	}
	return p + 1;
}

enum { OK_5424 = 0, BAD_HEADER = -1, BAD_SD = -2 };

/* The rest of an RFC 5424 message after "<PRI>1 ", into *m. */
static int parse_5424(struct kmsg_syslog_msg *m, const char *p, const char *end)
{
	const char *ts, *q;
	size_t ts_len;

	if (!(p = header_field(&ts, &ts_len, p, end, 32)) ||
	    !(p = header_field(&m->hostname, &m->hostname_len, p, end, HOST_MAX)) ||
	    !(p = header_field(&m->app, &m->app_len, p, end, APP_MAX)) ||
	    !(p = header_field(&m->procid, &m->procid_len, p, end, PROCID_MAX)) ||
	    !(p = header_field(&m->msgid, &m->msgid_len, p, end, MSGID_MAX)))
		return BAD_HEADER;
	if (ts) {
		int rc = read_5424_time(&m->real_ns, &m->utc_offset, ts, ts_len);

		if (rc < 0)
			return BAD_HEADER;
		if (rc == 0)
			m->flags |= KMSG_SYSLOG_HAS_TIME | KMSG_SYSLOG_HAS_ZONE;
	}
	if (p >= end)
		return BAD_SD;
	if (*p == '-') {
		q = p + 1;
	} else if (*p == '[') {
		if (!(q = sd_end(p, end)))
			return BAD_SD;
		m->sd = p;
		m->sd_len = (size_t)(q - p);
	} else {
		return BAD_SD;
	}
	if (q < end && *q != ' ')
		return BAD_SD;
	if (q < end)
		q++;
	if (end - q >= 3 && (unsigned char)q[0] == 0xef && (unsigned char)q[1] == 0xbb &&
	    (unsigned char)q[2] == 0xbf) {
		q += 3;
		m->flags |= KMSG_SYSLOG_BOM;
	}
	m->text = q;
	m->text_len = (size_t)(end - q);
	m->pid = decimal_pid(m->procid, m->procid_len);
	return OK_5424;
}

/* ---- RFC 3164 ---------------------------------------------------- */

struct tm3164 {
	int mon, day, hour, min, sec, year; /* year 0: none given */
};

/*
 * "Mmm dd hh:mm:ss" at p, the day space-padded ("Dec  5") or not ("Dec
 * 05"), as ctime(3) and syslog(3) write it in the C locale; then, as some
 * devices add, " YYYY" when a space follows the year.  Returns the
 * position after it, or NULL.
 */
static const char *read_3164_time(struct tm3164 *t, const char *p, const char *end)
{
	int mon;

	if (end - p < 15 || p[3] != ' ' || p[6] != ' ' || p[9] != ':' || p[12] != ':')
		return NULL;
	for (mon = 0; mon < 12; mon++)
		if (memcmp(p, months[mon], 3) == 0)
			break;
	if (mon == 12)
		return NULL;
	t->mon = mon;
	t->day = p[4] == ' ' ? digits(p + 5, 1) : digits(p + 4, 2);
	t->hour = digits(p + 7, 2);
	t->min = digits(p + 10, 2);
	t->sec = digits(p + 13, 2);
	t->year = 0;
	if (t->day < 1 || t->day > 31 || t->hour < 0 || t->hour > 23 ||
	    t->min < 0 || t->min > 59 || t->sec < 0 || t->sec > 60)
		return NULL;
	p += 15;
	if (end - p >= 6 && p[0] == ' ' && p[5] == ' ') {
		int y = digits(p + 1, 4);

		if (y >= 1970) {
			t->year = y;
			p += 5;
		}
	}
	return p;
}

/*
 * The year of an RFC 3164 time received at now_s: the one that puts it
 * within six months of now, as a sender's clock is taken to be near the
 * receiver's (a December time received in January is of the year
 * before, a January one received in December of the year after).  Then
 * the time in opts' zone.  Returns 0, or -1 for a day the month lacks.
 */
static int place_3164_time(struct kmsg_syslog_msg *m, const struct tm3164 *t,
			   const struct kmsg_syslog_parse_opts *o)
{
	int64_t now_s, secs;
	time_t tt;
	struct tm nt, tm;
	int year;

	if (o->now_ns) {
		now_s = o->now_ns / 1000000000 - (o->now_ns % 1000000000 < 0);
	} else {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		now_s = ts.tv_sec;
	}
	tt = (time_t)(now_s + (o->tz == KMSG_SYSLOG_TZ_OFFSET ? o->utc_offset : 0));
	if (!(o->tz == KMSG_SYSLOG_TZ_OFFSET ? gmtime_r(&tt, &nt) : localtime_r(&tt, &nt)))
		return -1;
	year = t->year;
	if (!year) {
		year = nt.tm_year + 1900;
		if (t->mon - nt.tm_mon > 6)
			year--;
		else if (nt.tm_mon - t->mon > 6)
			year++;
	}
	if (t->day > days_in_month(year, t->mon))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = year - 1900;
	tm.tm_mon = t->mon;
	tm.tm_mday = t->day;
	tm.tm_hour = t->hour;
	tm.tm_min = t->min;
	tm.tm_sec = t->sec;
	if (o->tz == KMSG_SYSLOG_TZ_OFFSET) {
		secs = (int64_t)timegm(&tm) - o->utc_offset;
		m->utc_offset = o->utc_offset;
	} else {
		tm.tm_isdst = -1;
		tt = mktime(&tm);
		if (tt == (time_t)-1)
			return -1;
		secs = (int64_t)tt;
		m->utc_offset = (int32_t)tm.tm_gmtoff;
	}
	/* a year past 2262 (or a now before 1678) is past what ns hold */
	if (secs > INT64_MAX / 1000000000 - 1 || secs < INT64_MIN / 1000000000 + 1)
		return -1;
	m->real_ns = secs * 1000000000;
	m->flags |= KMSG_SYSLOG_HAS_TIME;
	if (t->year)
		m->flags |= KMSG_SYSLOG_HAS_YEAR;
	return 0;
}

/*
 * A TAG at p in the forms programs write it: "tag: ", "tag[pid]: ",
 * "tag[pid] " (no colon), and the empty ": " of syslog(3) with an empty
 * ident; tag is 1..TAG_MAX bytes of 33..126 but ':', '[' and ']', pid
 * 1..PROCID_MAX of 33..126 but ']'.  One space after the colon belongs
 * to it.  With need_pid (no time before it) only the forms with a [pid]
 * or an empty tag are taken: "word: " alone at the start of text is too
 * often the text's own (Python's "<11>ValueError: ...").  Returns where
 * the text begins, or NULL if p holds no TAG.
 */
static const char *read_tag(struct kmsg_syslog_msg *m, const char *p, const char *end,
			    int need_pid)
{
	const char *s = p, *tag_end, *pid = NULL, *pid_end = NULL;

	while (p < end && p - s <= TAG_MAX && printusascii((unsigned char)*p) &&
	       *p != ':' && *p != '[' && *p != ']')
		p++;
	if (p - s > TAG_MAX || p >= end)
		return NULL;
	tag_end = p;
	if (*p == '[' && p > s) {
		pid = ++p;
		while (p < end && p - pid <= PROCID_MAX && printusascii((unsigned char)*p) &&
		       *p != ']')
			p++;
		if (p == pid || p - pid > PROCID_MAX || p >= end || *p != ']')
			return NULL;
		pid_end = p++;
		if (p < end && *p == ':')
			p++;
		else if (p < end && *p != ' ')
			return NULL;
	} else if (*p == ':') {
		if (need_pid && p > s)
			return NULL;
		p++;
	} else {
		return NULL;
	}
	m->app = tag_end > s ? s : NULL;
	m->app_len = (size_t)(tag_end - s);
	if (pid) {
		m->procid = pid;
		m->procid_len = (size_t)(pid_end - pid);
		m->pid = decimal_pid(pid, m->procid_len);
	}
	if (p < end && *p == ' ')
		p++;
	return p;
}

/* Bytes a host name is made of, as rsyslog reads one: letters, digits, . _ - */
static int host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
	       c == '.' || c == '_' || c == '-';
}

/*
 * The rest of a message after its PRI (if any) as RFC 3164, into *m.
 * After a time, a word of host-name bytes followed by a space is the
 * HOST only when a TAG follows it (logger --rfc3164 "vm prog: ..."); a
 * word that is itself a TAG ("prog:", "prog[42]:") is one, as syslog(3)
 * sends no host.  Returns the format found.
 */
static int parse_3164(struct kmsg_syslog_msg *m, const char *p, const char *end,
		      const struct kmsg_syslog_parse_opts *o)
{
	struct tm3164 t;
	const char *q, *text;
	int timed = 0;

	q = read_3164_time(&t, p, end);
	if (q && (q == end || *q == ' ') && place_3164_time(m, &t, o) == 0) {
		timed = 1;
		while (q < end && *q == ' ') /* glibc 2.36 wrote two */
			q++;
		p = q;
	}
	text = read_tag(m, p, end, !timed);
	if (!text && timed) {
		const char *h = p;

		while (h < end && h - p <= HOST_MAX && host_char(*h))
			h++;
		if (h > p && h - p <= HOST_MAX && h < end && *h == ' ' &&
		    (text = read_tag(m, h + 1, end, 0)) != NULL) {
			m->hostname = p;
			m->hostname_len = (size_t)(h - p);
		}
	}
	if (!text) {
		m->app = m->procid = NULL;
		m->app_len = m->procid_len = 0;
		m->pid = 0;
		text = p;
	}
	m->text = text;
	m->text_len = (size_t)(end - text);
	return timed || text != p ? KMSG_SYSLOG_3164 : KMSG_SYSLOG_RAW;
}

int kmsg_syslog_parse_sized(struct kmsg_syslog_msg *out, size_t size, const char *buf,
			    size_t len, const struct kmsg_syslog_parse_opts *opts)
{
	static const struct kmsg_syslog_parse_opts defaults = KMSG_SYSLOG_PARSE_OPTS_INIT;
	const struct kmsg_syslog_parse_opts *o = opts ? opts : &defaults;
	struct kmsg_syslog_msg m;
	const char *p = buf, *end = buf + len;
	size_t n;
	int pri;

	if (!out || size < SYSLOG_MSG_SIZE_1 || (!buf && len) ||
	    o->version != KMSG_SYSLOG_PARSE_OPTS_VERSION ||
	    (o->tz != KMSG_SYSLOG_TZ_LOCAL && o->tz != KMSG_SYSLOG_TZ_OFFSET) ||
	    o->facility < 0 || o->facility >= KMSG_NFACILITIES || o->level < 0 || o->level > 7)
		return KMSG_EINVAL;
	memset(&m, 0, sizeof(m));
	m.facility = o->facility;
	m.level = o->level;
	if (len && (end[-1] == '\0' || end[-1] == '\n'))
		end--;
	if ((n = read_pri(&pri, p, end)) != 0) {
		m.flags |= KMSG_SYSLOG_HAS_PRI;
		m.facility = pri >> 3;
		m.level = pri & 7;
		p += n;
	} else if (p < end && *p == '<') {
		m.format = KMSG_SYSLOG_RAW;
		goto raw;
	}
	if (end - p >= 2 && p[0] == '1' && p[1] == ' ') {
		int rc = parse_5424(&m, p + 2, end);

		if (rc == OK_5424) {
			m.format = KMSG_SYSLOG_5424;
			goto out;
		}
		/* kept whole: a header of RFC 5424's that is not one is text */
		memset(&m.real_ns, 0, sizeof(m) - offsetof(struct kmsg_syslog_msg, real_ns));
		m.flags &= KMSG_SYSLOG_HAS_PRI;
		if (rc == BAD_SD)
			m.flags |= KMSG_SYSLOG_BAD_SD;
		m.format = KMSG_SYSLOG_RAW;
		goto raw;
	}
	m.format = parse_3164(&m, p, end, o);
	goto out;
raw:
	m.text = p;
	m.text_len = (size_t)(end - p);
out:
	kmsg__put_sized(out, size, &m, sizeof(m));
	return m.format;
}

/* ---- RFC 6587 octet counting -------------------------------------- */

int kmsg_syslog_frame(size_t *off, size_t *msg_len, const char *buf, size_t len,
		      size_t max)
{
	uint64_t v = 0;
	size_t i = 0;

	if (!off || !msg_len || (!buf && len))
		return KMSG_EINVAL;
	if (len == 0)
		return 0;
	if (buf[0] < '1' || buf[0] > '9')
		return KMSG_ECORRUPT;
	while (i < len && is_digit(buf[i])) {
		if (i == 10)
			return KMSG_ECORRUPT;
		v = v * 10 + (uint64_t)(buf[i++] - '0');
	}
	if (i == len)
		return i > 10 ? KMSG_ECORRUPT : 0;
	if (buf[i] != ' ')
		return KMSG_ECORRUPT;
	i++;
	if (v > max || v > SIZE_MAX - i) {
		*off = i;
		*msg_len = v > SIZE_MAX - i ? SIZE_MAX - i : (size_t)v;
		return KMSG_ETOOLONG;
	}
	if (len - i < v)
		return 0;
	*off = i;
	*msg_len = (size_t)v;
	return 1;
}

/* ---- Formatting --------------------------------------------------- */

/* Output into a bounded buffer that counts what it could not hold. */
struct out {
	char *buf;
	size_t size, len;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->len < o->size) {
		size_t room = o->size - o->len;

		memcpy(o->buf + o->len, s, n < room ? n : room);
	}
	o->len += n;
}

static void putc_(struct out *o, char c)
{
	put(o, &c, 1);
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

static void putf(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void putf(struct out *o, const char *fmt, ...)
{
	char tmp[64];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		put(o, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * A header field of RFC 5424 (or a 3164 HOST or TAG): at most max bytes,
 * each outside 33..126, and each of also (if not NULL), as '_'; nothing
 * as "-" (or, with no_nil, nothing).
 */
static void put_token(struct out *o, const char *s, size_t n, size_t max,
		      const char *also, int no_nil)
{
	if (!s || n == 0) {
		if (!no_nil)
			putc_(o, '-');
		return;
	}
	if (n > max)
		n = max;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		putc_(o, printusascii(c) && !(also && strchr(also, c)) ? (char)c : '_');
	}
}

/* FNV-1a, 32 bits: a short stable name for a key too long to be one. */
static uint32_t fnv1a(const char *s, size_t n)
{
	uint32_t h = 2166136261u;

	while (n--) {
		h ^= (unsigned char)*s++;
		h *= 16777619u;
	}
	return h;
}

/*
 * A field key as a PARAM-NAME: bytes outside 33..126 and '=', ']', '"'
 * as '_'; a key of more than 32 bytes as its first 23, '_' and the
 * FNV-1a hash of the whole key in 8 hexadecimal digits (32 bytes, and
 * two long keys that begin alike stay apart).
 */
static void put_param_name(struct out *o, const char *k, size_t n)
{
	if (n == 0) {
		putc_(o, '_');
	} else if (n <= SDNAME_MAX) {
		put_token(o, k, n, SDNAME_MAX, "=]\"", 1);
	} else {
		put_token(o, k, 23, 23, "=]\"", 1);
		putf(o, "_%08x", fnv1a(k, n));
	}
}

static void put_param_value(struct out *o, const char *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '"' || v[i] == '\\' || v[i] == ']')
			putc_(o, '\\');
		putc_(o, v[i]);
	}
}

/* Valid UTF-8 (no overlongs, no surrogates) with a byte >= 0x80. */
static int utf8_not_ascii(const unsigned char *s, size_t n)
{
	int high = 0;

	for (size_t i = 0; i < n;) {
		unsigned c = s[i], need, min, cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		high = 1;
		if (c >= 0xc2 && c <= 0xdf)
			need = 1, min = 0x80, cp = c & 0x1f;
		else if (c >= 0xe0 && c <= 0xef)
			need = 2, min = 0x800, cp = c & 0x0f;
		else if (c >= 0xf0 && c <= 0xf4)
			need = 3, min = 0x10000, cp = c & 0x07;
		else
			return 0;
		if (n - i <= need)
			return 0;
		for (unsigned k = 1; k <= need; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += need + 1;
	}
	return high;
}

/* The record's time broken down as opts ask; returns 0 or -1. */
static int record_tm(struct tm *tm, long *usec, const struct kmsg_record *r, int utc)
{
	int64_t s = r->real_ns / 1000000000, ns = r->real_ns % 1000000000;
	time_t t;

	if (ns < 0) {
		ns += 1000000000;
		s--;
	}
	t = (time_t)s;
	*usec = (long)(ns / 1000);
	return (utc ? gmtime_r(&t, tm) : localtime_r(&t, tm)) ? 0 : -1;
}

size_t kmsg__tag_prefix(const char *text, size_t len, const char *tag, size_t tag_len)
{
	size_t i = tag_len;

	if (!tag_len || len <= tag_len + 1 || memcmp(text, tag, tag_len) != 0)
		return 0;
	if (text[i] == '[') {
		size_t d = ++i;

		while (i < len && text[i] >= '0' && text[i] <= '9')
			i++;
		if (i == d || i >= len || text[i++] != ']')
			return 0;
	}
	return i + 1 < len && text[i] == ':' && text[i + 1] == ' ' ? i + 2 : 0;
}

int kmsg_syslog_format_sized(char *buf, size_t size, const struct kmsg_record *rec,
			     size_t rec_size, const struct kmsg_syslog_fmt_opts *opts)
{
	static const struct kmsg_syslog_fmt_opts defaults = KMSG_SYSLOG_FMT_OPTS_INIT;
	const struct kmsg_syslog_fmt_opts *o = opts ? opts : &defaults;
	struct out out = { buf, size, 0 };
	struct kmsg_record r;
	struct kmsg_field f;
	const char *app = o->app;
	size_t app_len = app ? strlen(app) : 0, pos = 0;
	int pri, rc, utc = !!(o->flags & KMSG_SYSLOG_FMT_UTC);
	struct tm tm;
	long usec;

	if ((!buf && size) || !rec || rec_size < KMSG__RECORD_SIZE_1 ||
	    o->version != KMSG_SYSLOG_FMT_OPTS_VERSION ||
	    (o->format != KMSG_SYSLOG_5424 && o->format != KMSG_SYSLOG_3164) ||
	    (o->flags & ~(unsigned)(KMSG_SYSLOG_FMT_UTC | KMSG_SYSLOG_FMT_BOM)))
		return KMSG_EINVAL;
	kmsg__put_sized(&r, sizeof(r), rec, rec_size < sizeof(r) ? rec_size : sizeof(r));
	if ((!r.text && r.text_len) || (!r.fields && r.fields_len))
		return KMSG_EINVAL;
	while ((rc = kmsg_field_next(&f, &r, &pos)) == 1) {
		if (f.key_len == 17 && memcmp(f.key, "SYSLOG_IDENTIFIER", 17) == 0) {
			size_t skip = kmsg__tag_prefix(r.text, r.text_len, f.value, f.value_len);

			app = f.value;
			app_len = f.value_len;
			r.text += skip;
			r.text_len -= skip;
			break;
		}
	}
	if (rc < 0)
		return rc;
	if (r.facility >= 0 && r.facility < KMSG_NFACILITIES && r.level >= 0 && r.level <= 7)
		pri = r.facility * 8 + r.level;
	else
		pri = 13;
	if (record_tm(&tm, &usec, &r, utc) < 0)
		return KMSG_EINVAL;

	if (o->format == KMSG_SYSLOG_3164) {
		putf(&out, "<%d>%s %2d %02d:%02d:%02d ", pri, months[tm.tm_mon], tm.tm_mday,
		     tm.tm_hour, tm.tm_min, tm.tm_sec);
		if (o->hostname && *o->hostname) {
			put_token(&out, o->hostname, strlen(o->hostname), HOST_MAX, NULL, 1);
			putc_(&out, ' ');
		}
		put_token(&out, app, app_len, TAG3164_OUT, ":[]", 1);
		if (r.pid)
			putf(&out, "[%" PRIu32 "]", r.pid);
		put(&out, ": ", 2);
		for (size_t i = 0; i < r.text_len; i++) {
			unsigned char c = (unsigned char)r.text[i];

			if ((c < 0x20 && c != '\t') || c == 0x7f)
				putf(&out, "#%03o", c);
			else
				putc_(&out, (char)c);
		}
	} else {
		putf(&out, "<%d>1 %04d-%02d-%02dT%02d:%02d:%02d.%06ld", pri, tm.tm_year + 1900,
		     tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, usec);
		if (utc || tm.tm_gmtoff == 0) {
			putc_(&out, 'Z');
		} else {
			long g = tm.tm_gmtoff < 0 ? -tm.tm_gmtoff : tm.tm_gmtoff;

			putf(&out, "%c%02ld:%02ld", tm.tm_gmtoff < 0 ? '-' : '+', g / 3600,
			     g / 60 % 60);
		}
		putc_(&out, ' ');
		put_token(&out, o->hostname, o->hostname ? strlen(o->hostname) : 0, HOST_MAX,
			  NULL, 0);
		putc_(&out, ' ');
		put_token(&out, app, app_len, APP_MAX, NULL, 0);
		if (r.pid)
			putf(&out, " %" PRIu32 " - ", r.pid);
		else
			puts_(&out, " - - ");
		if (o->sd_id && *o->sd_id) {
			putc_(&out, '[');
			put_token(&out, o->sd_id, strlen(o->sd_id), SDNAME_MAX, "=]\"", 0);
			putf(&out, " seq=\"%" PRIu64 "\"", r.seq);
			if (r.seq_id)
				putf(&out, " seqid=\"%016" PRIx64 "\"", r.seq_id);
			if (o->ring_id) {
				puts_(&out, " ring=\"");
				for (int i = 0; i < 16; i++)
					putf(&out, "%02x", o->ring_id[i]);
				putc_(&out, '"');
			}
			pos = 0;
			while ((rc = kmsg_field_next(&f, &r, &pos)) == 1) {
				putc_(&out, ' ');
				put_param_name(&out, f.key, f.key_len);
				put(&out, "=\"", 2);
				put_param_value(&out, f.value, f.value_len);
				putc_(&out, '"');
			}
			if (rc < 0)
				return rc;
			putc_(&out, ']');
		} else {
			putc_(&out, '-');
		}
		if (r.text_len) {
			putc_(&out, ' ');
			if ((o->flags & KMSG_SYSLOG_FMT_BOM) &&
			    utf8_not_ascii((const unsigned char *)r.text, r.text_len))
				put(&out, "\xef\xbb\xbf", 3);
			put(&out, r.text, r.text_len);
		}
	}
	if (out.len > INT_MAX)
		return KMSG_ETOOLONG;
	if (size)
		buf[out.len < size ? out.len : size - 1] = '\0';
	return (int)out.len;
}
