/*
 * test_cmd_when.c - the time expressions of --since and --until (cmd/when.c),
 * on their own.  Each test sets the time zone it means (a POSIX TZ string,
 * which needs no tzdata), so none depends on the machine's.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdlib.h>
#include <time.h>

#include "when.h"

#define S INT64_C(1000000000)

static void zone(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

static int64_t when(const char *s)
{
	int64_t ns = 0;

	cr_assert_eq(parse_when(&ns, s), 0, "'%s' is a time", s);
	return ns;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * S + ts.tv_nsec;
}

Test(when, absolute_times_in_utc_and_in_the_local_zone)
{
	zone("UTC0");
	/* date -u -d '2024-05-12 11:27:01' +%s: 1715513221 */
	cr_assert_eq(when("2024-05-12 11:27:01"), 1715513221 * S);
	cr_assert_eq(when("2024-05-12T11:27:01.25"), 1715513221 * S + S / 4);
	cr_assert_eq(when("24-05-12 11:27"), 1715513220 * S, "two-digit years are 20YY");
	cr_assert_eq(when("2024-05-12"), (1715513221 - 11 * 3600 - 27 * 60 - 1) * S);
	cr_assert_eq(when("20240512112701"), 1715513221 * S);
	cr_assert_eq(when("sunday 2024-05-12 11:27:01"), 1715513221 * S);
	cr_assert_eq(when("Sun 2024-05-12 11:27:01"), 1715513221 * S);

	/* Central European summer time, two hours ahead of UTC then */
	zone("CET-1CEST,M3.5.0,M10.5.0/3");
	cr_assert_eq(when("2024-05-12 11:27:01"), (1715513221 - 2 * 3600) * S);
	cr_assert_eq(when("2024-05-12 11:27:01 UTC"), 1715513221 * S,
		     "' UTC' overrides the zone");
	/* and in winter, one */
	cr_assert_eq(when("2024-01-12 11:27:01"), (1705058821 - 3600) * S);
}

Test(when, seconds_since_the_epoch)
{
	cr_assert_eq(when("@0"), 0);
	cr_assert_eq(when("@1715513221"), 1715513221 * S);
	cr_assert_eq(when("@1715513221.000000001"), 1715513221 * S + 1);
}

Test(when, relative_times_count_from_now)
{
	int64_t before = now_ns(), t, after;

	t = when("-10min");
	after = now_ns();
	cr_assert(t >= before - 600 * S && t <= after - 600 * S);
	t = when("1h 30min ago");
	cr_assert(t >= before - 5400 * S && t <= now_ns() - 5400 * S);
	t = when("+2.5 days");
	cr_assert(t >= before + 216000 * S && t <= now_ns() + 216000 * S);
	t = when("now");
	cr_assert(t >= before && t <= now_ns());
}

Test(when, today_and_yesterday_are_local_midnights)
{
	time_t sec;
	struct tm tm;

	zone("XST-5");  /* five hours east of UTC, no summer time */
	sec = (time_t)(when("today") / S);
	localtime_r(&sec, &tm);
	cr_assert(tm.tm_hour == 0 && tm.tm_min == 0 && tm.tm_sec == 0);
	cr_assert_eq(when("today") - when("yesterday"), 86400 * S);
	cr_assert_eq(when("tomorrow") - when("today"), 86400 * S);
	cr_assert_leq(when("today"), now_ns());
	cr_assert_gt(when("tomorrow"), now_ns());
}

Test(when, what_is_not_a_time_is_refused)
{
	static const char *const bad[] = {
		"", " ", "soon", "10 parsecs ago", "-", "+", "@", "@x", "@1.", "@-5",
		"2024-13-45", "2024-05-12 25:00", "monday 2024-05-12",
		"2024-05-12 11:27:01 GMT", "ago", "1h30", "1.h",
		"@99999999999999999999", "+99999999999 years", "-99999999999999999999s",
	};
	int64_t ns = 42;

	zone("UTC0");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(parse_when(&ns, bad[i]), -1, "'%s' is refused", bad[i]);
	cr_assert_eq(ns, 42, "nothing is stored for a refused time");
}
