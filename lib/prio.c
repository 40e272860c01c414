/*
 * prio.c - syslog facility and level names, and the ways users write a
 * priority: logger's "facility.level", a bare number, a "<N>" prefix.
 */
#include <stddef.h>
#include <string.h>

#include <kmsg/kmsg.h>

static const char *const facility_names[KMSG_NFACILITIES] = {
	"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
	"uucp", "cron", "authpriv", "ftp", "res0", "res1", "res2", "res3",
	"local0", "local1", "local2", "local3",
	"local4", "local5", "local6", "local7",
};

static const char *const level_names[8] = {
	"emerg", "alert", "crit", "err", "warning", "notice", "info", "debug",
};

struct synonym {
	const char *name;
	int value;
};

/* The deprecated spellings glibc's <syslog.h> tables and logger accept. */
static const struct synonym facility_synonyms[] = {
	{ "security", 4 },
};

static const struct synonym level_synonyms[] = {
	{ "panic", 0 },
	{ "error", 3 },
	{ "warn", 4 },
};

const char *kmsg_facility_name(unsigned facility)
{
	return facility < KMSG_NFACILITIES ? facility_names[facility] : NULL;
}

const char *kmsg_level_name(unsigned level)
{
	return level < 8 ? level_names[level] : NULL;
}

static int ascii_lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c + ('a' - 'A') : c;
}

/*
 * True if s (len bytes, not terminated) equals name ignoring ASCII case.
 * ASCII only on purpose: strcasecmp() follows the locale, and a Turkish
 * locale would refuse "INFO".
 */
static int name_eq(const char *s, size_t len, const char *name)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (name[i] == '\0' || ascii_lower((unsigned char)s[i]) != name[i])
			return 0;
	}
	return name[len] == '\0';
}

/* A decimal number of s's len bytes if it is <= max, else -1. */
static int parse_decimal(const char *s, size_t len, int max)
{
	int v = 0;
	size_t i;

	if (len == 0)
		return -1;
	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (s[i] - '0');
		if (v > max)
			return -1;
	}
	return v;
}

/*
 * Looks s up as a number up to n - 1, a name of names[] or a synonym;
 * returns the value or KMSG_EPRIO.
 */
static int parse_one(const char *s, size_t len, const char *const *names,
		     int n, const struct synonym *syn, size_t nsyn)
{
	int i;
	size_t k;

	if (s == NULL || len == 0)
		return KMSG_EPRIO;
	if (s[0] >= '0' && s[0] <= '9') {
		i = parse_decimal(s, len, n - 1);
		return i < 0 ? KMSG_EPRIO : i;
	}
	for (i = 0; i < n; i++) {
		if (name_eq(s, len, names[i]))
			return i;
	}
	for (k = 0; k < nsyn; k++) {
		if (name_eq(s, len, syn[k].name))
			return syn[k].value;
	}
	return KMSG_EPRIO;
}

int kmsg_facility_parse(const char *s, size_t len)
{
	return parse_one(s, len, facility_names, KMSG_NFACILITIES,
			 facility_synonyms,
			 sizeof(facility_synonyms) / sizeof(facility_synonyms[0]));
}

int kmsg_level_parse(const char *s, size_t len)
{
	return parse_one(s, len, level_names, 8, level_synonyms,
			 sizeof(level_synonyms) / sizeof(level_synonyms[0]));
}

/*
 * "facility.level", "level" (facility user, as logger -p has it) or a bare
 * number N = facility * 8 + level.  A bare number is read as N, never as a
 * level: "6" is kern.info, the way a "<6>" prefix reads.  Nothing is
 * stored unless the whole string is valid.
 */
int kmsg_prio_parse(int *facility, int *level, const char *s)
{
	const char *dot;
	size_t len;
	int fac, lev, n;

	if (facility == NULL || level == NULL || s == NULL)
		return KMSG_EPRIO;
	len = strlen(s);
	dot = strchr(s, '.');
	if (dot != NULL) {
		fac = kmsg_facility_parse(s, (size_t)(dot - s));
		lev = kmsg_level_parse(dot + 1, len - (size_t)(dot - s) - 1);
		if (fac < 0 || lev < 0)
			return KMSG_EPRIO;
	} else if (len > 0 && s[0] >= '0' && s[0] <= '9') {
		n = parse_decimal(s, len, KMSG_NFACILITIES * 8 - 1);
		if (n < 0)
			return KMSG_EPRIO;
		fac = n >> 3;
		lev = n & 7;
	} else {
		fac = 1;
		lev = kmsg_level_parse(s, len);
		if (lev < 0)
			return KMSG_EPRIO;
	}
	*facility = fac;
	*level = lev;
	return 0;
}

/*
 * "<N>" with N of one or more decimal digits, 0..191 (leading zeros allowed,
 * as the kernel's parser allows them).  Anything else is no prefix, and the
 * text keeps its '<'.
 */
size_t kmsg_prio_prefix(int *facility, int *level, const char *text,
			size_t len)
{
	size_t i;
	int n = 0;

	if (text == NULL || len < 3 || text[0] != '<')
		return 0;
	for (i = 1; i < len && text[i] >= '0' && text[i] <= '9'; i++) {
		n = n * 10 + (text[i] - '0');
		if (n >= KMSG_NFACILITIES * 8)
			return 0;
	}
	if (i == 1 || i >= len || text[i] != '>')
		return 0;
	if (facility != NULL)
		*facility = n >> 3;
	if (level != NULL)
		*level = n & 7;
	return i + 1;
}
