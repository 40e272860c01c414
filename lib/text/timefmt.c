/*
 * timefmt.c - wall-clock times as dmesg writes them: -T's ctime form, the
 * iso form and reltime's absolute form, and journalctl's short forms, from
 * a localtime() (or gmtime(), --utc) looked up once per minute.
 *
 * Month and day names are always English, whatever the locale, and the
 * ISO zone offset carries its sign for offsets between -01:00 and 0
 * (dmesg loses it there).
 */
#include <string.h>
#include <time.h>

#include "text.h"

static const char wday_names[7][3] = {
	"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
};

static const char month_names[12][3] = {
	"Jan", "Feb", "Mar", "Apr", "May", "Jun",
	"Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
};

/*
 * localtime() of sec, or gmtime() for a cache set to UTC.  A local minute lasts 60 seconds and has one UTC
 * offset (zones change offset on a minute of local time), so the result
 * is kept and reused for the other seconds of that minute.  A leap second
 * (tm_sec 60, in the "right/" zones) lies past the minute's 60 seconds and
 * is always looked up.
 */
const struct tm *kmsg__local_tm(struct kmsg__tm_cache *c, int64_t sec)
{
	time_t t = (time_t)sec;

	if (c->have && sec >= c->base && sec - c->base < 60) {
		c->tm.tm_sec = (int)(sec - c->base);
		return &c->tm;
	}
	if ((c->utc ? gmtime_r(&t, &c->tm) : localtime_r(&t, &c->tm)) == NULL) {
		memset(&c->tm, 0, sizeof(c->tm));
		c->tm.tm_mday = 1;
		c->tm.tm_year = 70;
		c->have = 0;
		return &c->tm;
	}
	c->have = 1;
	c->base = sec - c->tm.tm_sec;
	return &c->tm;
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
char *kmsg__put_ctime(char *p, const struct tm *tm)
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

/* "%Y-%m-%dT%H:%M:%S", the year as "%4ld". */
static char *put_iso_date_time(char *p, const struct tm *tm)
{
	char year[24];

	p = put_padded(p, year,
		       (size_t)(put_i64(year, (int64_t)tm->tm_year + 1900) - year), 4);
	*p++ = '-';
	p = put_2d(p, (unsigned)tm->tm_mon + 1);
	*p++ = '-';
	p = put_2d(p, (unsigned)tm->tm_mday);
	*p++ = 'T';
	return put_hms(p, tm, 1);
}

/* sep and six digits of microseconds. */
static char *put_usec(char *p, char sep, unsigned usec)
{
	*p++ = sep;
	p = put_2d(p, usec / 10000);
	p = put_2d(p, usec / 100 % 100);
	return put_2d(p, usec % 100);
}

/* The UTC offset of tm as "+hh:mm", its sign kept below an hour. */
static char *put_offset(char *p, const struct tm *tm)
{
	long off = tm->tm_gmtoff;
	unsigned mins;

	*p++ = off < 0 ? '-' : '+';
	mins = (unsigned)((off < 0 ? -off : off) / 60);
	p = put_2d(p, mins / 60 % 100);
	*p++ = ':';
	return put_2d(p, mins % 60);
}

/* "%Y-%m-%dT%H:%M:%S,uuuuuu+hh:mm" as dmesg's ISO format (year %4ld). */
char *kmsg__put_iso(char *p, const struct tm *tm, unsigned usec)
{
	p = put_iso_date_time(p, tm);
	p = put_usec(p, ',', usec);
	return put_offset(p, tm);
}

char *kmsg__put_iso_short(char *p, const struct tm *tm, long usec)
{
	p = put_iso_date_time(p, tm);
	if (usec >= 0)
		p = put_usec(p, '.', (unsigned)usec);
	return put_offset(p, tm);
}

char *kmsg__put_syslog_time(char *p, const struct tm *tm, long usec)
{
	p = put_str(p, month_names[tm->tm_mon], 3);
	*p++ = ' ';
	p = put_2d(p, (unsigned)tm->tm_mday);
	*p++ = ' ';
	p = put_hms(p, tm, 1);
	if (usec >= 0)
		p = put_usec(p, '.', (unsigned)usec);
	return p;
}

/* strftime "%b%e %H:%M" in the C locale. */
char *kmsg__put_month_day_hm(char *p, const struct tm *tm)
{
	p = put_str(p, month_names[tm->tm_mon], 3);
	p = put_mday(p, tm->tm_mday);
	*p++ = ' ';
	return put_hms(p, tm, 0);
}

/* "%Y-%m-%dT%H:%M:%S.nnnnnnnnnZ" of ns since the epoch, in UTC. */
char *kmsg__put_iso_utc_ns(char *p, int64_t ns)
{
	int64_t sec = kmsg__floor_div(ns, 1000000000);
	unsigned frac = (unsigned)(ns - sec * 1000000000);
	time_t t = (time_t)sec;
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm)); /* cannot happen for an int64_t of ns */
	p = put_iso_date_time(p, &tm);
	*p++ = '.';
	p = put_2d(p, frac / 10000000);
	p = put_2d(p, frac / 100000 % 100);
	p = put_2d(p, frac / 1000 % 100);
	p = put_2d(p, frac / 10 % 100);
	*p++ = (char)('0' + frac % 10);
	*p++ = 'Z';
	return p;
}

int kmsg_fmt_time(char *buf, size_t size, int64_t real_ns, enum kmsg_time_format tf,
		  unsigned flags)
{
	struct kmsg__tm_cache c = { .utc = (flags & KMSG_FMT_UTC) != 0 };
	int64_t sec = kmsg__floor_div(real_ns, 1000000000);
	unsigned usec = (unsigned)((real_ns - sec * 1000000000) / 1000);
	char tmp[64], *p = tmp;
	const struct tm *tm;

	if (buf == NULL || (flags & ~(unsigned)KMSG_FMT_UTC))
		return KMSG_EINVAL;
	tm = kmsg__local_tm(&c, sec);
	switch (tf) {
	case KMSG_TIME_CTIME:
		p = kmsg__put_ctime(p, tm);
		break;
	case KMSG_TIME_ISO:
		p = kmsg__put_iso(p, tm, usec);
		break;
	case KMSG_TIME_SHORT_ISO:
	case KMSG_TIME_SHORT_ISO_PRECISE:
		p = kmsg__put_iso_short(p, tm, tf == KMSG_TIME_SHORT_ISO ? -1 : (long)usec);
		break;
	case KMSG_TIME_SHORT_PRECISE:
		p = kmsg__put_syslog_time(p, tm, (long)usec);
		break;
	case KMSG_TIME_SHORT_UNIX:
		p = put_i64(p, sec);
		p = put_usec(p, '.', usec);
		break;
	default:
		return KMSG_EINVAL;
	}
	if ((size_t)(p - tmp) >= size)
		return KMSG_EINVAL;
	memcpy(buf, tmp, (size_t)(p - tmp));
	buf[p - tmp] = '\0';
	return (int)(p - tmp);
}
