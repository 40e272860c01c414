/*
 * test_prio.c - facility and level names, logger-style priorities, and
 * "<N>" prefixes.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "testutil.h"

static int fac(const char *s)
{
	return kmsg_facility_parse(s, strlen(s));
}

static int lev(const char *s)
{
	return kmsg_level_parse(s, strlen(s));
}

Test(prio, names_as_syslog_spells_them)
{
	static const char *const f[KMSG_NFACILITIES] = {
		"kern", "user", "mail", "daemon", "auth", "syslog", "lpr",
		"news", "uucp", "cron", "authpriv", "ftp", "res0", "res1",
		"res2", "res3", "local0", "local1", "local2", "local3",
		"local4", "local5", "local6", "local7",
	};
	static const char *const l[8] = {
		"emerg", "alert", "crit", "err", "warning", "notice", "info",
		"debug",
	};
	unsigned i;

	for (i = 0; i < KMSG_NFACILITIES; i++)
		cr_assert_str_eq(kmsg_facility_name(i), f[i]);
	for (i = 0; i < 8; i++)
		cr_assert_str_eq(kmsg_level_name(i), l[i]);
	cr_assert_null(kmsg_facility_name(KMSG_NFACILITIES));
	cr_assert_null(kmsg_facility_name(~0u));
	cr_assert_null(kmsg_level_name(8));
}

Test(prio, every_name_parses_back_to_its_number)
{
	unsigned i;

	for (i = 0; i < KMSG_NFACILITIES; i++)
		cr_assert_eq(fac(kmsg_facility_name(i)), (int)i);
	for (i = 0; i < 8; i++)
		cr_assert_eq(lev(kmsg_level_name(i)), (int)i);
}

Test(prio, names_ignore_case_and_accept_logger_synonyms)
{
	cr_assert_eq(fac("LOCAL7"), 23);
	cr_assert_eq(fac("Daemon"), 3);
	cr_assert_eq(fac("security"), 4);
	cr_assert_eq(fac("SECURITY"), 4);
	cr_assert_eq(lev("INFO"), 6);
	cr_assert_eq(lev("panic"), 0);
	cr_assert_eq(lev("error"), 3);
	cr_assert_eq(lev("warn"), 4);
	cr_assert_eq(lev("Warning"), 4);
}

Test(prio, numbers_in_range)
{
	cr_assert_eq(fac("0"), 0);
	cr_assert_eq(fac("23"), 23);
	cr_assert_eq(fac("007"), 7);
	cr_assert_eq(lev("7"), 7);
	cr_assert_eq(fac("24"), KMSG_EPRIO);
	cr_assert_eq(lev("8"), KMSG_EPRIO);
	cr_assert_eq(fac("99999999999999999999"), KMSG_EPRIO);
}

Test(prio, rubbish_is_refused)
{
	cr_assert_eq(fac(""), KMSG_EPRIO);
	cr_assert_eq(fac("mark"), KMSG_EPRIO);  /* glibc's internal name */
	cr_assert_eq(lev("none"), KMSG_EPRIO);  /* glibc's internal name */
	cr_assert_eq(fac("use"), KMSG_EPRIO);
	cr_assert_eq(fac("users"), KMSG_EPRIO);
	cr_assert_eq(fac(" user"), KMSG_EPRIO);
	cr_assert_eq(fac("-1"), KMSG_EPRIO);
	cr_assert_eq(fac("+1"), KMSG_EPRIO);
	cr_assert_eq(lev("6x"), KMSG_EPRIO);
	cr_assert_eq(kmsg_facility_parse(NULL, 3), KMSG_EPRIO);
	cr_assert_eq(kmsg_level_parse(NULL, 0), KMSG_EPRIO);
}

Test(prio, length_bounds_the_name)
{
	cr_assert_eq(kmsg_facility_parse("userland", 4), 1);
	cr_assert_eq(kmsg_level_parse("info.x", 4), 6);
	cr_assert_eq(kmsg_facility_parse("user", 3), KMSG_EPRIO);
	cr_assert_eq(kmsg_level_parse("67", 1), 6);
}

static void prio_ok(const char *s, int want_fac, int want_lev)
{
	int f = -1, l = -1;

	cr_assert_eq(kmsg_prio_parse(&f, &l, s), 0, "\"%s\" refused", s);
	cr_assert_eq(f, want_fac, "\"%s\": facility %d", s, f);
	cr_assert_eq(l, want_lev, "\"%s\": level %d", s, l);
}

static void prio_bad(const char *s)
{
	int f = -7, l = -7;

	cr_assert_eq(kmsg_prio_parse(&f, &l, s), KMSG_EPRIO, "\"%s\"", s);
	cr_assert_eq(f, -7, "\"%s\" wrote the facility", s);
	cr_assert_eq(l, -7, "\"%s\" wrote the level", s);
}

Test(prio, logger_p_forms)
{
	prio_ok("user.info", 1, 6);
	prio_ok("local0.debug", 16, 7);
	prio_ok("Mail.Err", 2, 3);
	prio_ok("security.warn", 4, 4);
	prio_ok("daemon.panic", 3, 0);
	prio_ok("3.4", 3, 4);
	prio_ok("local7.7", 23, 7);
	/* a level alone goes to facility user, as with logger -p */
	prio_ok("notice", 1, 5);
	prio_ok("ERROR", 1, 3);
}

Test(prio, kern_is_returned_for_the_caller_to_judge)
{
	prio_ok("kern.err", 0, 3);
	prio_ok("kern.emerg", 0, 0);
}

Test(prio, a_bare_number_is_facility_times_8_plus_level)
{
	prio_ok("14", 1, 6);
	prio_ok("6", 0, 6);
	prio_ok("0", 0, 0);
	prio_ok("191", 23, 7);
	prio_ok("131", 16, 3);
}

Test(prio, bad_priorities_write_nothing)
{
	prio_bad("");
	prio_bad("192");
	prio_bad("user.");
	prio_bad(".info");
	prio_bad("user.info.x");
	prio_bad("bogus");
	prio_bad("daemon.bogus");
	prio_bad("bogus.info");
	prio_bad("user.8");
	prio_bad("24.info");
	prio_bad("user info");
	prio_bad("-1");
	cr_assert_eq(kmsg_prio_parse(NULL, NULL, "user.info"), KMSG_EPRIO);
}

static void prefix_ok(const char *s, size_t want_len, int want_fac,
		      int want_lev)
{
	int f = -1, l = -1;

	cr_assert_eq(kmsg_prio_prefix(&f, &l, s, strlen(s)), want_len,
		     "\"%s\"", s);
	cr_assert_eq(f, want_fac, "\"%s\": facility %d", s, f);
	cr_assert_eq(l, want_lev, "\"%s\": level %d", s, l);
}

static void prefix_none(const char *s, size_t len)
{
	int f = -7, l = -7;

	cr_assert_eq(kmsg_prio_prefix(&f, &l, s, len), 0, "\"%.*s\"",
		     (int)len, s);
	cr_assert_eq(f, -7);
	cr_assert_eq(l, -7);
}

Test(prio, prefix_gives_facility_and_level)
{
	prefix_ok("<6>hello", 3, 0, 6);
	prefix_ok("<14>hello", 4, 1, 6);
	prefix_ok("<131>x", 5, 16, 3);
	prefix_ok("<191>", 5, 23, 7);
	prefix_ok("<0>", 3, 0, 0);
	prefix_ok("<06>leading zero", 4, 0, 6);
	prefix_ok("<6><3>only the first", 3, 0, 6);
}

Test(prio, no_prefix_leaves_the_text_alone)
{
	prefix_none("<192>x", 6);
	prefix_none("<>x", 3);
	prefix_none("<6", 2);
	prefix_none("<6 >x", 5);
	prefix_none("6>x", 3);
	prefix_none("< 6>x", 5);
	prefix_none("<-1>x", 5);
	prefix_none("<+6>x", 5);
	prefix_none("<99999999999999999999999>x", 26);
	prefix_none("plain text", 10);
	prefix_none("", 0);
	/* the length bounds the prefix too */
	prefix_none("<6>x", 2);
	cr_assert_eq(kmsg_prio_prefix(NULL, NULL, NULL, 5), 0);
}
