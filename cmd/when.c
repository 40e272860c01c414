/*
 * when.c - the time expressions of --since and --until, as journalctl and
 * util-linux dmesg take them (see when.h).  Absolute times are local
 * unless they end in " UTC"; spans are counted on the wall clock.
 */
#define _GNU_SOURCE
#include "when.h"
#include "cmd.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define NS_PER_SEC INT64_C(1000000000)

/*
 * Parses a span such as "5s", "1h 30min", "2.5 days" (a number without
 * unit is seconds) into nanoseconds.  Returns 0 or -1.
 */
static int parse_span(int64_t *out, const char *s)
{
	static const struct { const char *name; int64_t ns; } units[] = {
		{ "seconds", NS_PER_SEC }, { "second", NS_PER_SEC },
		{ "sec", NS_PER_SEC }, { "s", NS_PER_SEC },
		{ "minutes", 60 * NS_PER_SEC }, { "minute", 60 * NS_PER_SEC },
		{ "min", 60 * NS_PER_SEC }, { "m", 60 * NS_PER_SEC },
		{ "months", 2629800 * NS_PER_SEC }, { "month", 2629800 * NS_PER_SEC },
		{ "msec", 1000000 }, { "ms", 1000000 },
		{ "hours", 3600 * NS_PER_SEC }, { "hour", 3600 * NS_PER_SEC },
		{ "hr", 3600 * NS_PER_SEC }, { "h", 3600 * NS_PER_SEC },
		{ "days", 86400 * NS_PER_SEC }, { "day", 86400 * NS_PER_SEC },
		{ "d", 86400 * NS_PER_SEC },
		{ "weeks", 604800 * NS_PER_SEC }, { "week", 604800 * NS_PER_SEC },
		{ "w", 604800 * NS_PER_SEC },
		{ "years", 31557600 * NS_PER_SEC }, { "year", 31557600 * NS_PER_SEC },
		{ "y", 31557600 * NS_PER_SEC },
		{ "usec", 1000 }, { "us", 1000 },
		{ "", NS_PER_SEC },
	};
	__int128 total = 0;
	int any = 0;

	for (;;) {
		__int128 whole = 0, frac = 0, scale = 1, v;
		size_t ulen, i;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0')
			break;
		if (!isdigit((unsigned char)*s))
			return -1;
		while (isdigit((unsigned char)*s)) {
			whole = whole * 10 + (*s++ - '0');
			if (whole > INT64_MAX)
				return -1;
		}
		if (*s == '.') {
			s++;
			if (!isdigit((unsigned char)*s))
				return -1;
			for (; isdigit((unsigned char)*s); s++) {
				if (scale < INT64_C(1000000000000000000)) {
					frac = frac * 10 + (*s - '0');
					scale *= 10;
				}
			}
		}
		while (*s == ' ' || *s == '\t')
			s++;
		for (ulen = 0; isalpha((unsigned char)s[ulen]); ulen++)
			;
		for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			if (strlen(units[i].name) == ulen &&
			    strncmp(s, units[i].name, ulen) == 0)
				break;
		}
		if (i == sizeof(units) / sizeof(units[0]))
			return -1;
		s += ulen;
		v = whole * units[i].ns + frac * units[i].ns / scale;
		total += v;
		if (total > INT64_MAX)
			return -1;
		any = 1;
	}
	if (!any)
		return -1;
	*out = (int64_t)total;
	return 0;
}

/* The length of a weekday name (or its abbreviation, any case) and the
 * space after it at the start of s, its number in *wday; 0 if none. */
static size_t weekday_prefix(const char *s, int *wday)
{
	static const char *const days[7][2] = {
		{ "sunday", "sun" }, { "monday", "mon" }, { "tuesday", "tue" },
		{ "wednesday", "wed" }, { "thursday", "thu" }, { "friday", "fri" },
		{ "saturday", "sat" },
	};

	for (int d = 0; d < 7; d++) {
		for (int k = 0; k < 2; k++) {
			size_t n = strlen(days[d][k]);

			if (strncasecmp(s, days[d][k], n) == 0 && s[n] == ' ') {
				*wday = d;
				return n + 1;
			}
		}
	}
	return 0;
}

/* ".digits" at s as nanoseconds; the position after it, or NULL. */
static const char *parse_frac(const char *s, int64_t *ns)
{
	int64_t scale = 100000000;

	*ns = 0;
	if (*s != '.')
		return s;
	s++;
	if (!isdigit((unsigned char)*s))
		return NULL;
	for (; isdigit((unsigned char)*s); s++) {
		*ns += (*s - '0') * scale;
		scale /= 10;
	}
	return s;
}

/*
 * An absolute date and time (see parse_when()) into *ns.  The formats
 * are tried in util-linux's order, two-digit years first.
 */
static int parse_absolute(int64_t *ns, const char *s)
{
	static const struct { const char *fmt; int date, secs; } fmts[] = {
		{ "%y-%m-%d %H:%M:%S", 1, 1 }, { "%Y-%m-%d %H:%M:%S", 1, 1 },
		{ "%Y-%m-%dT%H:%M:%S", 1, 1 }, { "%y-%m-%d %H:%M", 1, 0 },
		{ "%Y-%m-%d %H:%M", 1, 0 }, { "%Y-%m-%dT%H:%M", 1, 0 },
		{ "%y-%m-%d", 2, 0 }, { "%Y-%m-%d", 2, 0 },
		{ "%H:%M:%S", 0, 1 }, { "%H:%M", 0, 0 },
		{ "%Y%m%d%H%M%S", 1, 1 },
	};
	char buf[128];
	size_t len = strlen(s);
	int utc = 0, wday = -1;
	time_t now = time(NULL), t;
	struct tm today, tm;

	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len + 1);
	if (len > 4 && strcmp(buf + len - 4, " UTC") == 0) {
		buf[len - 4] = '\0';
		utc = 1;
	}
	s = buf + weekday_prefix(buf, &wday);
	if (utc)
		gmtime_r(&now, &today);
	else
		localtime_r(&now, &today);
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		const char *end;
		int64_t frac = 0;

		tm = today;
		end = strptime(s, fmts[i].fmt, &tm);
		if (end == NULL)
			continue;
		if (fmts[i].secs)
			end = parse_frac(end, &frac);
		if (end == NULL || *end != '\0')
			continue;
		if (!fmts[i].secs)
			tm.tm_sec = 0;
		if (fmts[i].date == 2)
			tm.tm_hour = tm.tm_min = 0;
		tm.tm_isdst = -1;
		t = utc ? timegm(&tm) : mktime(&tm);
		if (t == (time_t)-1 && tm.tm_year != 69)
			return -1;
		if (wday >= 0 && tm.tm_wday != wday)
			return -1;
		if ((int64_t)t > INT64_MAX / NS_PER_SEC - 1 ||
		    (int64_t)t < INT64_MIN / NS_PER_SEC + 1)
			return -1;
		*ns = (int64_t)t * NS_PER_SEC + frac;
		return 0;
	}
	return -1;
}

int parse_when(int64_t *ns, const char *s)
{
	int64_t now = cli_now_ns(CLOCK_REALTIME), span, frac;
	size_t len = strlen(s);
	int days;

	if (!strcmp(s, "now")) {
		*ns = now;
		return 0;
	}
	days = !strcmp(s, "today") ? 0 : !strcmp(s, "yesterday") ? -1 :
	       !strcmp(s, "tomorrow") ? 1 : 2;
	if (days != 2) {
		time_t t = time(NULL);
		struct tm tm;

		localtime_r(&t, &tm);
		tm.tm_mday += days;
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_isdst = -1;
		t = mktime(&tm);
		*ns = (int64_t)t * NS_PER_SEC;
		return 0;
	}
	if (s[0] == '+' || s[0] == '-') {
		if (parse_span(&span, s + 1) < 0)
			return -1;
		*ns = s[0] == '+' ? now + span : now - span;
		return 0;
	}
	if (len > 4 && strcmp(s + len - 4, " ago") == 0) {
		char buf[128];

		if (len - 4 >= sizeof(buf))
			return -1;
		memcpy(buf, s, len - 4);
		buf[len - 4] = '\0';
		if (parse_span(&span, buf) < 0)
			return -1;
		*ns = now - span;
		return 0;
	}
	if (s[0] == '@') {
		char *end;
		long long sec;

		errno = 0;
		sec = strtoll(s + 1, &end, 10);
		if (errno || end == s + 1 || !isdigit((unsigned char)s[1]) ||
		    sec > INT64_MAX / NS_PER_SEC - 1)
			return -1;
		end = (char *)parse_frac(end, &frac);
		if (end == NULL || *end != '\0')
			return -1;
		*ns = (int64_t)sec * NS_PER_SEC + frac;
		return 0;
	}
	return parse_absolute(ns, s);
}

int when_boot_time(int64_t *real_ns)
{
#ifdef WHEN_TEST_BOOT_TIME_ENV
	const char *env = getenv(WHEN_TEST_BOOT_TIME_ENV);

	if (env && *env) {
		char *end;
		long long sec, usec;

		errno = 0;
		sec = strtoll(env, &end, 10);
		if (!errno && *end == '.' && isdigit((unsigned char)end[1])) {
			usec = strtoll(end + 1, &end, 10);
			if (!errno && *end == '\0' && sec >= 0 && usec >= 0 &&
			    usec < 1000000 && sec < INT64_MAX / NS_PER_SEC - 1) {
				*real_ns = (int64_t)sec * NS_PER_SEC + (int64_t)usec * 1000;
				return 0;
			}
		}
	}
#endif
	*real_ns = 0;
	return kmsg_dmesg_boot_time(real_ns);
}
