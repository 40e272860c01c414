/*
 * dmesg_parse.c - dmesg's raw text (what dmesg -r prints) read back into
 * records, as dmesg -F reads it, and the machine's boot time as dmesg -F
 * adds it to since-boot seconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* CLOCK_BOOTTIME */
#endif
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "text.h"

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
 * Reads dmesg 2.40's caller column, "[" spaces ("T" or "C") digits "]",
 * from p (at the '['): the kernel's caller id, a thread id or 0x80000000
 * plus a CPU number, into *caller.  Returns the position after the ']' and
 * one space after it, or NULL if the text is not such a column.  dmesg
 * takes any "[ ...]" there for one (and drops the byte after it): text
 * such as "[ ok] done" stays text here.
 */
static const char *parse_caller(const char *p, const char *end, uint32_t *caller)
{
	uint32_t v = 0, cpu;
	const char *d;

	for (p++; p < end && *p == ' '; p++)
		;
	if (p == end || (*p != 'T' && *p != 'C'))
		return NULL;
	cpu = *p++ == 'C' ? 0x80000000u : 0;
	for (d = p; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (0x7fffffffu - (uint32_t)(*p - '0')) / 10)
			return NULL;
		v = v * 10 + (uint32_t)(*p - '0');
	}
	if (p == d || p == end || *p != ']')
		return NULL;
	*caller = cpu | v;
	p++;
	return p < end && *p == ' ' ? p + 1 : p;
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
 * time stays text, where dmesg drops the '['.  The caller column of dmesg
 * 2.40 and later after it is read as parse_caller() says.
 */
static int dmesg_parse(struct kmsg_record *rec, const char *line,
		       size_t len, int64_t boot_real_ns, unsigned flags)
{
	const char *p, *end, *q;
	unsigned fac = KMSG_PRIO_NONE, lev = KMSG_PRIO_NONE;
	int range = 0, has_caller = 0;
	uint32_t caller = 0;
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
	/* dmesg 2.40 and later print the kernel's caller after the time */
	if (end - p >= 4 && p[0] == '[' && (q = parse_caller(p, end, &caller)) != NULL) {
		p = q;
		has_caller = 1;
	}
	if ((ns > 0 && boot_real_ns > INT64_MAX - ns) ||
	    (ns < 0 && boot_real_ns < INT64_MIN - ns))
		return KMSG_EINVAL;

	memset(rec, 0, sizeof(*rec));
	rec->facility = fac;
	rec->level = lev;
	rec->boot_ns = ns;
	rec->real_ns = boot_real_ns + ns;
	if (has_caller) {
		rec->caller = caller;
		rec->flags = KMSG_KERNEL_CALLER;
	}
	rec->text = p;
	rec->text_len = (size_t)(end - p);
	return 1;
}

int kmsg_dmesg_parse_sized(struct kmsg_record *rec, size_t size, const char *line,
			   size_t len, int64_t boot_real_ns, unsigned flags)
{
	struct kmsg_record mine;
	int rc;

	if (rec == NULL || size < KMSG__RECORD_SIZE_1)
		return KMSG_EINVAL;
	if (size == sizeof(mine))
		return dmesg_parse(rec, line, len, boot_real_ns, flags);
	rc = dmesg_parse(&mine, line, len, boot_real_ns, flags);
	if (rc == 1)
		kmsg__put_sized(rec, size, &mine, sizeof(mine));
	return rc;
}

/*
 * The machine's boot time as dmesg -F and -K add it to since-boot times
 * (util-linux 2.39 and later, to the microsecond): the wall clock minus
 * CLOCK_BOOTTIME, plus the time CLOCK_BOOTTIME is ahead of
 * CLOCK_MONOTONIC (time spent suspended), each clock read in whole
 * microseconds.  dmesg 2.38 dropped the boot time's microseconds.
 */
int kmsg_dmesg_boot_time(int64_t *real_ns)
{
	struct timeval now;
	struct timespec bt, mono;
	int64_t d;

	if (real_ns == NULL)
		return KMSG_EINVAL;
	if (gettimeofday(&now, NULL) != 0 ||
	    clock_gettime(CLOCK_BOOTTIME, &bt) != 0)
		return -errno;
	d = ((int64_t)now.tv_sec * 1000000 + now.tv_usec) -
	    ((int64_t)bt.tv_sec * 1000000 + bt.tv_nsec / 1000);
	if (clock_gettime(CLOCK_BOOTTIME, &bt) != 0 ||
	    clock_gettime(CLOCK_MONOTONIC, &mono) != 0)
		return -errno;
	d += ((int64_t)bt.tv_sec * 1000000 + bt.tv_nsec / 1000) -
	     ((int64_t)mono.tv_sec * 1000000 + mono.tv_nsec / 1000);
	*real_ns = d * 1000;
	return 0;
}
