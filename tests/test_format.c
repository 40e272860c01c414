/*
 * test_format.c - rendering records as dmesg does, checked byte for byte
 * against the real util-linux dmesg (run on the same raw text with -F);
 * kmsg's own escapes, JSON, the /dev/kmsg export, fields, and reading
 * dmesg's raw text.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

TestSuite(format, .fini = tu_cleanup);

#define DMESG "/usr/bin/dmesg"
#define NS INT64_C(1000000000)
#define US INT64_C(1000)

/* ------------------------------------------------------------------ */
/* Helpers                                                             */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		cr_assert_not_null(b->p);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_addf(struct buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void buf_addf(struct buf *b, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	cr_assert(n >= 0 && (size_t)n < sizeof(tmp));
	buf_add(b, tmp, (size_t)n);
}

static void buf_free(struct buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

static struct kmsg_fmt *fmt_new(enum kmsg_output out,
				enum kmsg_time_format time, unsigned flags)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f = NULL;
	int r;

	o.output = out;
	o.time = time;
	o.flags = flags;
	r = kmsg_fmt_new(&f, &o);
	cr_assert_eq(r, 0, "kmsg_fmt_new: %s", kmsg_strerror(r));
	return f;
}

static void render(struct buf *b, struct kmsg_fmt *f,
		   const struct kmsg_record *rec)
{
	const char *out = NULL;
	int n = kmsg_fmt_record(&out, f, rec);

	cr_assert_geq(n, 0, "kmsg_fmt_record: %s", kmsg_strerror(n));
	buf_add(b, out, (size_t)n);
}

static void render_end(struct buf *b, struct kmsg_fmt *f)
{
	const char *out = NULL;
	int n = kmsg_fmt_end(&out, f);

	cr_assert_geq(n, 0);
	buf_add(b, out, (size_t)n);
}

static struct kmsg_record mkrec(unsigned fac, unsigned lev, int64_t boot_ns,
				int64_t real_ns, const char *text)
{
	struct kmsg_record r;

	memset(&r, 0, sizeof(r));
	r.facility = fac;
	r.level = lev;
	r.boot_ns = boot_ns;
	r.real_ns = real_ns;
	r.text = text;
	r.text_len = strlen(text);
	return r;
}

/* The whole output (records and end) of n records; a string to free. */
static char *fmt_all(enum kmsg_output out, enum kmsg_time_format time,
		     unsigned flags, const struct kmsg_record *recs, size_t n)
{
	struct kmsg_fmt *f = fmt_new(out, time, flags);
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < n; i++)
		render(&b, f, &recs[i]);
	render_end(&b, f);
	kmsg_fmt_free(f);
	if (b.p == NULL)
		buf_add(&b, "", 0);
	return b.p;
}

static char *fmt_one(enum kmsg_output out, enum kmsg_time_format time,
		     unsigned flags, const struct kmsg_record *rec)
{
	return fmt_all(out, time, flags, rec, 1);
}

#define ASSERT_FMT(want, out, time, flags, rec)                              \
	do {                                                                 \
		char *got_ = fmt_one((out), (time), (flags), (rec));        \
		cr_assert_str_eq(got_, (want));                              \
		free(got_);                                                  \
	} while (0)

/* Every line of in through kmsg_dmesg_parse() and a renderer. */
static void render_input(struct buf *b, const char *in, size_t len,
			 enum kmsg_output out, enum kmsg_time_format time,
			 unsigned flags, int64_t boot_real_ns)
{
	struct kmsg_fmt *f = fmt_new(out, time, flags);
	const char *p = in, *end = in + len, *nl;
	struct kmsg_record rec;
	int r;

	while (p < end) {
		nl = memchr(p, '\n', (size_t)(end - p));
		nl = nl ? nl + 1 : end;
		r = kmsg_dmesg_parse(&rec, p, (size_t)(nl - p), boot_real_ns);
		cr_assert_geq(r, 0, "parse: %s", kmsg_strerror(r));
		if (r == 1)
			render(b, f, &rec);
		p = nl;
	}
	render_end(b, f);
	kmsg_fmt_free(f);
}

/* s with its unprintable bytes as \ooo, for failure messages. */
static char *visible(const char *s, size_t len)
{
	struct buf b = { 0 };
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n')
			buf_add(&b, "\\n\n", 3);
		else if (c >= 0x20 && c < 0x7f)
			buf_add(&b, &c, 1);
		else
			buf_addf(&b, "\\%03o", c);
	}
	if (b.p == NULL)
		buf_add(&b, "", 0);
	return b.p;
}

static void assert_same(const char *what, const struct buf *ours,
			const struct buf *theirs)
{
	size_t i = 0, from, ol, tl;

	while (i < ours->len && i < theirs->len && ours->p[i] == theirs->p[i])
		i++;
	if (i == ours->len && i == theirs->len)
		return;
	from = i > 200 ? i - 200 : 0;
	while (from > 0 && ours->p[from - 1] != '\n')
		from--;
	ol = ours->len - from < 600 ? ours->len - from : 600;
	tl = theirs->len - from < 600 ? theirs->len - from : 600;
	cr_assert_fail("%s: differs at byte %zu (of %zu / %zu)\n"
		       "--- kmsg:\n%s\n--- dmesg:\n%s", what, i, ours->len,
		       theirs->len, visible(ours->p + from, ol),
		       visible(theirs->p + from, tl));
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* ------------------------------------------------------------------ */
/* Running the real dmesg                                              */

/*
 * The boot time dmesg adds to since-boot seconds for -e, -T and iso, in
 * whole seconds: the wall clock minus CLOCK_BOOTTIME (both in us) rounded
 * down, plus the seconds CLOCK_BOOTTIME is ahead of CLOCK_MONOTONIC (time
 * spent suspended).  dmesg computes it when it starts.
 */
static int64_t dmesg_boot_sec(void)
{
	struct timeval now;
	struct timespec bt, mono;
	int64_t d;

	gettimeofday(&now, NULL);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	d = ((int64_t)now.tv_sec * 1000000 + now.tv_usec) -
	    ((int64_t)bt.tv_sec * 1000000 + bt.tv_nsec / 1000);
	d = d >= 0 ? d / 1000000 : -((-d + 999999) / 1000000);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return d + (bt.tv_sec - mono.tv_sec);
}

static int zone_exists(const char *tz)
{
	char path[256];

	if (strcmp(tz, "UTC") == 0)
		return 1;
	snprintf(path, sizeof(path), "/usr/share/zoneinfo/%s", tz);
	return access(path, R_OK) == 0;
}

static void set_tz(const char *tz)
{
	setenv("TZ", tz, 1);
	tzset();
}

/*
 * dmesg -F file args, in a UTF-8 locale (for its view of printable
 * characters), zone tz, and no colour scheme files (HOME is the test
 * directory, NO_COLOR unset).
 */
static void run_dmesg(struct buf *out, const char *file, const char *args,
		      const char *tz)
{
	char cmd[2048], tmp[4096];
	FILE *p;
	size_t n;
	int st;

	snprintf(cmd, sizeof(cmd),
		 "env -i PATH=/usr/bin:/bin HOME=%s LC_ALL=C.UTF-8 TZ=%s "
		 DMESG " -F %s %s", tu_dir(), tz, file, args);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen: %s", strerror(errno));
	while ((n = fread(tmp, 1, sizeof(tmp), p)) > 0)
		buf_add(out, tmp, n);
	st = pclose(p);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "failed: %s", cmd);
}

static void need_dmesg(void)
{
	if (access(DMESG, X_OK) != 0)
		cr_skip_test("no " DMESG);
}

/* Writes the raw text dmesg and kmsg both read, given dmesg's boot time. */
typedef void (*gen_fn)(struct buf *in, int64_t boot_sec);

struct variant {
	const char *args;
	enum kmsg_output out;
	enum kmsg_time_format time;
	unsigned flags;
};

/*
 * Asserts that dmesg -F with v->args and kmsg_dmesg_parse() plus the
 * renderer with v's options print the same bytes for gen's text, in zone
 * tz.  A boot time that moved while dmesg ran (a clock step) means a retry.
 */
static void oracle(gen_fn gen, const struct variant *v, const char *tz)
{
	char file[512], what[256];
	int tries;

	snprintf(file, sizeof(file), "%s", tu_path("dmesg.txt"));
	for (tries = 0;; tries++) {
		struct buf in = { 0 }, theirs = { 0 }, ours = { 0 };
		int64_t boot = dmesg_boot_sec();

		gen(&in, boot);
		write_file(file, in.p, in.len);
		run_dmesg(&theirs, file, v->args, tz);
		if (dmesg_boot_sec() != boot && tries < 5) {
			buf_free(&in);
			buf_free(&theirs);
			continue;
		}
		set_tz(tz);
		render_input(&ours, in.p, in.len, v->out, v->time, v->flags,
			     boot * NS);
		snprintf(what, sizeof(what), "dmesg -F %s (TZ=%s)", v->args, tz);
		assert_same(what, &ours, &theirs);
		buf_free(&in);
		buf_free(&theirs);
		buf_free(&ours);
		return;
	}
}

static void oracle_all(gen_fn gen, const struct variant *v, size_t n,
		       const char *tz)
{
	size_t i;

	for (i = 0; i < n; i++)
		oracle(gen, &v[i], tz);
}

#define NVAR(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ */
/* Oracle tests: since-boot times, decoding, colours, escapes          */

/* Every line has dmesg -r's exact form, so -r prints it back unchanged. */
static const char canon_lines[] =
	"<6>[    0.500000] first record\n"
	"<4>[    1.234567] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
	"<3>[    1.300000] EXT4-fs (sda1): error: bad block\n"
	"<1>[    2.000000] alert: the machine is on fire\n"
	"<2>[    2.000001] crit message\n"
	"<0>[    3.000000] emerg message\n"
	"<5>[    9.999999] notice a:b: c\n"
	"<7>[   12.000000] debug with a trailing colon:\n"
	"<6>[   11.000000] going backwards\n"
	"<6>[   11.000000] same time\n"
	"<14>[   25.000000] user.info from userspace\n"
	"<30>[   26.000000] systemd[1]: Started Journal Service.\n"
	"<13>[   27.000000] user.notice: x\n"
	"<6>[  150.000000] a.out[123]: segfault at 0 ip 00007f sp 0 error 4\n"
	"<3>[  151.000000] err with segfault at in it\n"
	"<4>[99999.999999] last before widening\n"
	"<6>[100000.000000] widened\n"
	"<6>[1234567.123456] much later\n"
	"<6>[   30.000000] back in time by a lot\n"
	"<6>[   31.000000] tabs\tinside\tthe text\n"
	"<6>[   32.000000] colon:\tthen a tab\n"
	"<6>[   33.000000] esc \x1b[31m red \x1b[0m, del \x7f, nul \x00 mid, bell \x07\n"
	"<6>[   34.000000] utf8 \xc3\xa9 \xc3\xbc \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80, C1 \xc2\x9b, nonchar \xef\xbf\xbe\n"
	"<6>[   35.000000] invalid \xff \xc3( \xe2\x82 \xed\xa0\x80 \xf4\x90\x80\x80 \xc0\xaf end\xe2\n"
	"<3>[   38.000000] :leading colon: x\n"
	"<3>[   39.000000] ends in colon space: \n"
	"<6>[   40.000000] [brackets] stay <6> inside\n";

/* Lines dmesg -r would not print back as they are. */
static const char extra_lines[] =
	"<6>[   41.000000] \n"
	"<6>[   41.500000]\n"
	"<6>[   42.000000] after empty messages\n"
	"<6>no time at all\n";

static void gen_canon(struct buf *in, int64_t boot_sec)
{
	(void)boot_sec;
	buf_add(in, canon_lines, sizeof(canon_lines) - 1);
}

static void gen_basic(struct buf *in, int64_t boot_sec)
{
	gen_canon(in, boot_sec);
	buf_add(in, extra_lines, sizeof(extra_lines) - 1);
}

Test(format, oracle_since_boot_times)
{
	static const struct variant v[] = {
		{ "", KMSG_OUT_SHORT, KMSG_TIME_MONO, 0 },
		{ "-d", KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA },
		{ "-t", KMSG_OUT_SHORT, KMSG_TIME_NOTIME, 0 },
		{ "-t -d", KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_SHOWDELTA },
		{ "--time-format delta", KMSG_OUT_SHORT, KMSG_TIME_DELTA, 0 },
	};

	need_dmesg();
	oracle_all(gen_basic, v, NVAR(v), "UTC");
}

Test(format, oracle_decode)
{
	static const struct variant v[] = {
		{ "-x", KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_DECODE },
		{ "-x -t", KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_DECODE },
		{ "-x -d", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_DECODE | KMSG_FMT_SHOWDELTA },
		{ "-x -T", KMSG_OUT_SHORT, KMSG_TIME_CTIME, KMSG_FMT_DECODE },
	};

	need_dmesg();
	oracle_all(gen_basic, v, NVAR(v), "UTC");
}

Test(format, oracle_colors)
{
	static const struct variant v[] = {
		{ "--color=always", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_COLOR },
		{ "--color=always -x -d", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_COLOR | KMSG_FMT_DECODE | KMSG_FMT_SHOWDELTA },
		{ "--color=always -t", KMSG_OUT_SHORT, KMSG_TIME_NOTIME,
		  KMSG_FMT_COLOR },
		{ "--color=always --time-format delta", KMSG_OUT_SHORT,
		  KMSG_TIME_DELTA, KMSG_FMT_COLOR },
		{ "--color=always -e", KMSG_OUT_SHORT, KMSG_TIME_RELTIME,
		  KMSG_FMT_COLOR },
		{ "--color=always -T", KMSG_OUT_SHORT, KMSG_TIME_CTIME,
		  KMSG_FMT_COLOR },
		{ "--color=always --noescape", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_COLOR | KMSG_FMT_NOESCAPE },
	};

	need_dmesg();
	oracle_all(gen_basic, v, NVAR(v), "UTC");
}

Test(format, oracle_noescape_and_raw)
{
	static const struct variant basic[] = {
		{ "--noescape", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_NOESCAPE },
	};
	static const struct variant canon[] = {
		{ "-r", KMSG_OUT_SHORT, KMSG_TIME_RAW, 0 },
		/* raw ignores -x, as dmesg does */
		{ "-r", KMSG_OUT_SHORT, KMSG_TIME_RAW, KMSG_FMT_DECODE },
	};

	need_dmesg();
	oracle_all(gen_basic, basic, NVAR(basic), "UTC");
	oracle_all(gen_canon, canon, NVAR(canon), "UTC");
}

/* A first line without "<N>" (the only place dmesg -F takes one as a record). */
static void gen_no_prefix(struct buf *in, int64_t boot_sec)
{
	(void)boot_sec;
	buf_addf(in, "[    1.000000] no prefix here\n"
		     "<6>[    2.000000] next\n");
}

/* A boot log starts at 0; a second record at 0 later on, too. */
static void gen_boot(struct buf *in, int64_t boot_sec)
{
	(void)boot_sec;
	buf_addf(in, "<6>[    0.000000] Linux version 6.1.0\n"
		     "<6>[    0.512345] Command line: quiet\n"
		     "<6>[    1.000000] third\n"
		     "<6>[    0.000000] back at boot\n"
		     "<6>[    2.250000] after it\n");
}

Test(format, oracle_line_without_priority)
{
	static const struct variant v[] = {
		{ "", KMSG_OUT_SHORT, KMSG_TIME_MONO, 0 },
		{ "-d", KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA },
		{ "--color=always", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_COLOR },
	};

	need_dmesg();
	oracle_all(gen_no_prefix, v, NVAR(v), "UTC");
}

/* ------------------------------------------------------------------ */
/* Oracle tests: wall-clock times in several zones                     */

/*
 * Records around moments where local time jumps: DST changes in Berlin,
 * Lord Howe (a half-hour change) and St John's, the year's end in UTC and
 * in Berlin.  Within each group: deltas under and over 10 s, a minute
 * boundary, a negative and a zero delta, gaps of hours and of a day that
 * leave the minute (and the hour) the same.  Then one record
 * in every month of 2031, on every weekday and on one- and two-digit days.
 */
static void gen_wall(struct buf *in, int64_t boot_sec)
{
	static const int64_t anchors[] = {
		1901149190, /* 2030-03-31 00:59:50 UTC, Berlin to CEST */
		1919293190, /* 2030-10-27 00:59:50 UTC, Berlin to CET */
		1901717990, /* 2030-04-06 14:59:50 UTC, Lord Howe back 30 min */
		1899350990, /* 2030-03-10 05:29:50 UTC, St John's to NDT */
		1924988398, /* 2030-12-31 22:59:58 UTC, Berlin new year */
		1924991998, /* 2030-12-31 23:59:58 UTC, new year */
	};
	static const int64_t offs_us[] = {
		123456, 1500000, 9999999, 10000001, 12500000, 35250000,
		30000000, 30000000, 69000000, 10800000000,
		14400000000,  /* an hour later, same minute */
		100800000000, /* a day later, same hour and minute */
	};
	static const int prios[] = { 6, 4, 3, 14, 30, 1, 2, 7, 5, 0, 6, 6 };
	size_t a, i;
	int m;

	for (a = 0; a < sizeof(anchors) / sizeof(anchors[0]); a++) {
		for (i = 0; i < sizeof(offs_us) / sizeof(offs_us[0]); i++) {
			int64_t us = (anchors[a] - boot_sec) * 1000000 + offs_us[i];

			buf_addf(in, "<%d>[%5lld.%06lld] group %zu: record %zu\n",
				 prios[i], (long long)(us / 1000000),
				 (long long)(us % 1000000), a, i);
		}
	}
	for (m = 0; m < 12; m++) {
		struct tm tm = { 0 };
		int64_t t;

		tm.tm_year = 131;
		tm.tm_mon = m;
		tm.tm_mday = 1 + 2 * m + (m % 3);
		tm.tm_hour = 2 * m;
		tm.tm_min = 5 * m;
		tm.tm_sec = m;
		t = (int64_t)timegm(&tm) - boot_sec;
		buf_addf(in, "<6>[%5lld.%06d] month %d\n", (long long)t,
			 m * 1000 + 7, m + 1);
	}
}

static const struct variant wall_variants[] = {
	{ "-e", KMSG_OUT_SHORT, KMSG_TIME_RELTIME, 0 },
	{ "-T", KMSG_OUT_SHORT, KMSG_TIME_CTIME, 0 },
	{ "-T -d", KMSG_OUT_SHORT, KMSG_TIME_CTIME, KMSG_FMT_SHOWDELTA },
	{ "--time-format iso", KMSG_OUT_SHORT, KMSG_TIME_ISO, 0 },
	{ "--time-format reltime", KMSG_OUT_SHORT, KMSG_TIME_RELTIME, 0 },
	{ "--color=always -e", KMSG_OUT_SHORT, KMSG_TIME_RELTIME,
	  KMSG_FMT_COLOR },
	{ "-x -e", KMSG_OUT_SHORT, KMSG_TIME_RELTIME, KMSG_FMT_DECODE },
	{ "", KMSG_OUT_SHORT, KMSG_TIME_MONO, 0 },
	{ "-d", KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA },
};

static void wall_in_zone(const char *tz)
{
	need_dmesg();
	if (!zone_exists(tz))
		cr_skip_test("no zoneinfo for %s", tz);
	oracle_all(gen_wall, wall_variants, NVAR(wall_variants), tz);
}

Test(format, oracle_wall_clock_utc)
{
	wall_in_zone("UTC");
}

Test(format, oracle_wall_clock_berlin)
{
	wall_in_zone("Europe/Berlin");
}

Test(format, oracle_wall_clock_kolkata)
{
	wall_in_zone("Asia/Kolkata");
}

Test(format, oracle_wall_clock_st_johns)
{
	wall_in_zone("America/St_Johns");
}

Test(format, oracle_wall_clock_lord_howe)
{
	wall_in_zone("Australia/Lord_Howe");
}

Test(format, oracle_ctime_and_iso_of_since_boot_records)
{
	static const struct variant v[] = {
		{ "-T", KMSG_OUT_SHORT, KMSG_TIME_CTIME, 0 },
		{ "--time-format iso", KMSG_OUT_SHORT, KMSG_TIME_ISO, 0 },
		{ "-e", KMSG_OUT_SHORT, KMSG_TIME_RELTIME, 0 },
	};

	need_dmesg();
	oracle_all(gen_basic, v, NVAR(v), "UTC");
	if (zone_exists("Europe/Berlin"))
		oracle_all(gen_basic, v, NVAR(v), "Europe/Berlin");
}

/* ------------------------------------------------------------------ */
/* Oracle tests: multi-line messages and JSON                          */

/*
 * dmesg -F joins a line that does not start with '<' to the record
 * before it; kmsg records carry such text whole.  Continuation lines are
 * indented under the first line's text, except after a NUL.
 */
static const char multi_file[] =
	"<6>[    1.000000] usb 1-1: first line\nsecond line\n\tthird: line\n"
	"<4>[    2.000000] warn one\n\ncont after an empty line\n"
	"<6>[    3.000000] nul after newline\n\0tail\n"
	"<3>[    4.000000] end\n";

#define MREC(lev, sec, lit) { (lev), (sec), (lit), sizeof(lit) - 1 }

static const struct {
	unsigned level;
	int64_t sec;
	const char *text;
	size_t len;
} multi_recs[] = {
	MREC(6, 1, "usb 1-1: first line\nsecond line\n\tthird: line"),
	MREC(4, 2, "warn one\n\ncont after an empty line"),
	MREC(6, 3, "nul after newline\n\0tail"),
	MREC(3, 4, "end"),
};

Test(format, oracle_multi_line_text)
{
	static const struct variant v[] = {
		{ "", KMSG_OUT_SHORT, KMSG_TIME_MONO, 0 },
		{ "-x -d", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_DECODE | KMSG_FMT_SHOWDELTA },
		{ "-t", KMSG_OUT_SHORT, KMSG_TIME_NOTIME, 0 },
		{ "--color=always", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_COLOR },
		{ "-T", KMSG_OUT_SHORT, KMSG_TIME_CTIME, 0 },
	};
	char file[512];
	size_t i, k;

	need_dmesg();
	set_tz("UTC");
	snprintf(file, sizeof(file), "%s", tu_path("multi.txt"));
	write_file(file, multi_file, sizeof(multi_file) - 1);
	for (i = 0; i < NVAR(v); i++) {
		struct buf theirs = { 0 }, ours = { 0 };
		struct kmsg_fmt *f;
		int64_t boot;
		int tries;

		for (tries = 0;; tries++) {
			boot = dmesg_boot_sec();
			run_dmesg(&theirs, file, v[i].args, "UTC");
			if (dmesg_boot_sec() == boot || tries == 5)
				break;
			buf_free(&theirs);
		}
		f = fmt_new(v[i].out, v[i].time, v[i].flags);
		for (k = 0; k < NVAR(multi_recs); k++) {
			struct kmsg_record r = mkrec(0, multi_recs[k].level,
						     multi_recs[k].sec * NS,
						     (boot + multi_recs[k].sec) * NS,
						     "");

			r.text = multi_recs[k].text;
			r.text_len = multi_recs[k].len;
			render(&ours, f, &r);
		}
		kmsg_fmt_free(f);
		assert_same(v[i].args, &ours, &theirs);
		buf_free(&theirs);
		buf_free(&ours);
	}
}

/*
 * dmesg 2.38 -F -J repeats the rest of the file in each "msg", so each
 * record is compared in a file of its own, with no newline after it
 * (which would be part of the message).  2.38 also gets "pri" wrong for
 * facilities other than kern, so -J without -x uses kern only; the
 * layout is 2.41's, which 2.38 shares.
 */
Test(format, oracle_json_one_record_files)
{
	static const char *const lines[] = {
		"<6>[    1.500000] hello world",
		"<0>[123456.000001] big time",
		"<7>[    0.000010] quote \" backslash \\ tab \t bell \x07 esc \x1b[0m cr \r ff \f bs \b",
		"<3>[    2.000000] utf8 \xc3\xa9 \xe4\xb8\xad\xe6\x96\x87 \xf0\x9f\x98\x80",
		"<4>[    3.000000] usb 1-1: subsystem text",
	};
	static const char *const decoded[] = {
		"<14>[    1.000000] user info",
		"<30>[    2.000000] daemon info",
		"<84>[    3.000000] authpriv warning",
		"<89>[    4.000000] ftp alert",
	};
	char file[512];
	size_t i;

	need_dmesg();
	snprintf(file, sizeof(file), "%s", tu_path("one.txt"));
	for (i = 0; i < NVAR(lines) + NVAR(decoded); i++) {
		const char *line = i < NVAR(lines) ? lines[i]
						   : decoded[i - NVAR(lines)];
		int pass, npass = i < NVAR(lines) ? 2 : 1;

		for (pass = 0; pass < npass; pass++) {
			unsigned flags = pass == 0 && npass == 2 ? 0
								 : KMSG_FMT_DECODE;
			struct buf theirs = { 0 }, ours = { 0 };

			write_file(file, line, strlen(line));
			run_dmesg(&theirs, file, flags ? "-J -x" : "-J", "UTC");
			render_input(&ours, line, strlen(line), KMSG_OUT_JSON,
				     KMSG_TIME_MONO, flags, 0);
			assert_same(line, &ours, &theirs);
			buf_free(&theirs);
			buf_free(&ours);
		}
	}
}

/* ------------------------------------------------------------------ */
/* Where kmsg differs from dmesg on purpose                            */

Test(format, terminal_controls_dmesg_passes_are_escaped)
{
	struct kmsg_record r = mkrec(0, 6, NS, 0,
		"cr\r vt\v ff\f rlo\xe2\x80\xae lri\xe2\x81\xa6 pdi\xe2\x81\xa9 "
		"lrm\xe2\x80\x8e alm\xd8\x9c nnbsp\xe2\x80\xaf");

	ASSERT_FMT("[    1.000000] cr\\x0d vt\\x0b ff\\x0c rlo\\xe2\\x80\\xae "
		   "lri\\xe2\\x81\\xa6 pdi\\xe2\\x81\\xa9 lrm\\xe2\\x80\\x8e "
		   "alm\\xd8\\x9c nnbsp\xe2\x80\xaf\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, &r);
}

Test(format, noescape_passes_every_byte)
{
	static const char text[] = "esc\x1b[1m cr\r rlo\xe2\x80\xae bad\xff nul\0end";
	struct kmsg_record r = mkrec(0, 6, NS, 0, "");
	char *got;

	r.text = text;
	r.text_len = sizeof(text) - 1;
	got = fmt_one(KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_NOESCAPE, &r);
	cr_assert_eq(memcmp(got, text, sizeof(text) - 1), 0);
	cr_assert_eq(got[sizeof(text) - 1], '\n');
	free(got);
}

Test(format, reltime_first_record_is_absolute_even_at_new_year)
{
	/* 2031-01-01 00:00:30 UTC: dmesg takes it for "same minute" */
	struct kmsg_record r[2] = {
		mkrec(0, 6, 5 * NS, INT64_C(1924992030) * NS, "a"),
		mkrec(0, 6, 6 * NS, INT64_C(1924992031) * NS, "b"),
	};
	char *got;

	set_tz("UTC");
	got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_RELTIME, 0, r, 2);
	cr_assert_str_eq(got, "[Jan 1 00:00] a\n[  +1.000000] b\n");
	free(got);
}

Test(format, reltime_a_year_later_is_absolute)
{
	/* 2030-05-09 10:00:00 and 2031-05-09 10:00:05 UTC: same day of year */
	struct kmsg_record r[2] = {
		mkrec(0, 6, 5 * NS, INT64_C(1904551200) * NS, "a"),
		mkrec(0, 6, 6 * NS, INT64_C(1936087205) * NS, "b"),
	};
	char *got;

	set_tz("UTC");
	got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_RELTIME, 0, r, 2);
	cr_assert_str_eq(got, "[May 9 10:00] a\n[May 9 10:00] b\n");
	free(got);
}

Test(format, delta_after_a_record_at_time_zero)
{
	struct kmsg_record r[3] = {
		mkrec(0, 6, 0, 0, "a"),
		mkrec(0, 6, 1500 * 1000 * US, 0, "b"),
		mkrec(0, 6, 1400 * 1000 * US, 0, "c"),
	};
	char *got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA,
			    r, 3);

	/* as in dmesg: a previous time of 0 is no previous record */
	cr_assert_str_eq(got, "[    0.000000 <    0.000000>] a\n"
			      "[    1.500000 <    0.000000>] b\n"
			      "[    1.400000 <   -0.100000>] c\n");
	free(got);
}

/*
 * The time columns of several time formats, as util-linux 2.42's dmesg
 * prints them (print_record() in sys-utils/dmesg.c of v2.42.2: each
 * column followed by a space, in the order given, one delta for all, the
 * colour around them all; the installed 2.38 prints one format only).
 */
static char *fmt_columns(enum kmsg_time_format first, unsigned flags,
			 const unsigned *more, unsigned nmore,
			 const struct kmsg_record *recs, size_t n)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f = NULL;
	struct buf b = { 0 };

	o.time = first;
	o.flags = flags;
	o.ntimes = nmore;
	memcpy(o.times, more, nmore * sizeof(*more));
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	for (size_t i = 0; i < n; i++)
		render(&b, f, &recs[i]);
	kmsg_fmt_free(f);
	buf_add(&b, "", 0);
	return b.p;
}

#define T0 (INT64_C(1715513221) * NS + 234567 * US) /* 2024-05-12 11:27:01 UTC */

Test(format, time_columns_in_the_order_given)
{
	static const unsigned ctime_iso[] = { KMSG_TIME_CTIME, KMSG_TIME_ISO };
	static const unsigned delta[] = { KMSG_TIME_DELTA };
	static const unsigned mono[] = { KMSG_TIME_MONO };
	struct kmsg_record r[2] = {
		mkrec(0, 6, 1500000 * US, T0, "a"),
		mkrec(0, 6, 4000000 * US, T0 + 2500000 * US, "b"),
	};
	char *got;

	set_tz("UTC");
	/* --time-format raw --time-format ctime --time-format iso */
	got = fmt_columns(KMSG_TIME_MONO, 0, ctime_iso, 2, r, 2);
	cr_assert_str_eq(got,
		"[    1.500000] [Sun May 12 11:27:01 2024] 2024-05-12T11:27:01,234567+00:00 a\n"
		"[    4.000000] [Sun May 12 11:27:03 2024] 2024-05-12T11:27:03,734567+00:00 b\n");
	free(got);
	/* --time-format iso --time-format delta */
	got = fmt_columns(KMSG_TIME_ISO, 0, delta, 1, r, 2);
	cr_assert_str_eq(got,
		"2024-05-12T11:27:01,234567+00:00 [<    0.000000>] a\n"
		"2024-05-12T11:27:03,734567+00:00 [<    2.500000>] b\n");
	free(got);
	/* --time-format iso -d: 2.38 ignored -d, 2.40 and later add it */
	{
		static const unsigned mono_delta[] = { KMSG_TIME_MONO | KMSG_TIME_WITH_DELTA };

		got = fmt_columns(KMSG_TIME_ISO, 0, mono_delta, 1, r, 2);
		cr_assert_str_eq(got,
			"2024-05-12T11:27:01,234567+00:00 [    1.500000 <    0.000000>] a\n"
			"2024-05-12T11:27:03,734567+00:00 [    4.000000 <    2.500000>] b\n");
		free(got);
	}
	/* -T -d --time-format raw: the delta inside ctime's brackets */
	got = fmt_columns(KMSG_TIME_CTIME, KMSG_FMT_SHOWDELTA | KMSG_FMT_DECODE, mono, 1, r, 2);
	cr_assert_str_eq(got,
		"kern  :info  : [Sun May 12 11:27:01 2024 <    0.000000>] [    1.500000] a\n"
		"kern  :info  : [Sun May 12 11:27:03 2024 <    2.500000>] [    4.000000] b\n");
	free(got);
}

Test(format, time_columns_with_reltime)
{
	static const unsigned ctime_delta[] = { KMSG_TIME_CTIME | KMSG_TIME_WITH_DELTA };
	static const unsigned mono[] = { KMSG_TIME_MONO };
	struct kmsg_record r[3] = {
		mkrec(0, 6, 1500000 * US, T0, "a"),
		mkrec(0, 3, 4000000 * US, T0 + 2500000 * US, "b"),
		mkrec(0, 6, 5000000 * US, T0 + 3500000 * US, "x\ny"),
	};
	char *got;

	set_tz("UTC");
	/* --time-format reltime --time-format delta --time-format ctime */
	got = fmt_columns(KMSG_TIME_RELTIME, 0, ctime_delta, 1, r, 2);
	cr_assert_str_eq(got,
		"[May12 11:27] [Sun May 12 11:27:01 2024 <    0.000000>] a\n"
		"[  +2.500000] [Sun May 12 11:27:03 2024 <    2.500000>] b\n");
	free(got);
	/* -e --time-format raw in colour: one colour around both columns,
	 * timebreak's when reltime's is absolute */
	got = fmt_columns(KMSG_TIME_RELTIME, KMSG_FMT_COLOR, mono, 1, r, 2);
	cr_assert_str_eq(got,
		"\033[32m\033[1m[May12 11:27] [    1.500000] \033[0ma\n"
		"\033[32m[  +2.500000] [    4.000000] \033[0m\033[31mb\033[0m\n");
	free(got);
	/* -p: with reltime among them, the later lines of a text show a
	 * zero delta in place of all the columns; without, all of them */
	got = fmt_columns(KMSG_TIME_RELTIME, KMSG_FMT_FORCE_PREFIX, mono, 1, r + 2, 1);
	cr_assert_str_eq(got, "[May12 11:27] [    5.000000] x\n[  +0.000000] y\n");
	free(got);
	got = fmt_columns(KMSG_TIME_MONO, KMSG_FMT_FORCE_PREFIX, ctime_delta, 1, r + 2, 1);
	cr_assert_str_eq(got, "[    5.000000] [Sun May 12 11:27:04 2024 <    0.000000>] x\n"
			      "[    5.000000] [Sun May 12 11:27:04 2024 <    0.000000>] y\n");
	free(got);
}

Test(format, time_columns_refused_where_they_make_no_sense)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f = NULL;

	o.ntimes = 1;
	o.times[0] = KMSG_TIME_RAW;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.times[0] = KMSG_TIME_ISO | KMSG_TIME_WITH_DELTA;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.times[0] = KMSG_TIME_SHORT_UNIX + 1;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.times[0] = KMSG_TIME_ISO;
	o.ntimes = KMSG_FMT_TIMES_MAX + 1;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	/* a version 3 struct has no columns: what follows it is not read */
	o.version = 3;
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	kmsg_fmt_free(f);
}

Test(format, oracle_delta_after_a_record_at_time_zero)
{
	static const struct variant v[] = {
		{ "-d", KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA },
		{ "-t -d", KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_SHOWDELTA },
		{ "-e -d", KMSG_OUT_SHORT, KMSG_TIME_DELTA, 0 },
		{ "-x -d", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		  KMSG_FMT_SHOWDELTA | KMSG_FMT_DECODE },
	};

	need_dmesg();
	oracle_all(gen_boot, v, NVAR(v), "UTC");
}

Test(format, decode_names_every_facility)
{
	struct kmsg_record r[3] = {
		mkrec(16, 3, NS, 0, "local"),
		mkrec(10, 5, NS, 0, "long name"),
		mkrec(23, 7, NS, 0, "last"),
	};
	char *got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_DECODE,
			    r, 3);

	cr_assert_str_eq(got, "local0:err   : [    1.000000] local\n"
			      "authpriv:notice: [    1.000000] long name\n"
			      "local7:debug : [    1.000000] last\n");
	free(got);
}

Test(format, out_of_range_priority_is_not_decoded)
{
	struct kmsg_record r = mkrec(40, 6, NS, 0, "odd");

	ASSERT_FMT("[    1.000000] odd\n", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		   KMSG_FMT_DECODE, &r);
}

Test(format, iso_offset_just_west_of_utc_keeps_its_sign)
{
	/* dmesg prints +00:30 for this zone */
	struct kmsg_record r = mkrec(0, 6, NS, INT64_C(1900000000) * NS + 5000,
				     "x");

	set_tz("ABC+0:30");
	ASSERT_FMT("2030-03-17T17:16:40,000005-00:30 x\n", KMSG_OUT_SHORT,
		   KMSG_TIME_ISO, 0, &r);
}

Test(format, negative_since_boot_times)
{
	struct kmsg_record r[2] = {
		mkrec(0, 6, -5500 * 1000 * US, 0, "before boot"),
		mkrec(0, 6, -250 * 1000 * US, 0, "just before"),
	};
	char *got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, r, 2);

	cr_assert_str_eq(got, "[   -5.500000] before boot\n"
			      "[   -0.250000] just before\n");
	free(got);
}

Test(format, times_use_microseconds_rounded_down)
{
	struct kmsg_record r[2] = {
		mkrec(0, 6, 1000000999, INT64_C(1900000000) * NS + 999, "a"),
		mkrec(0, 6, 1500000000, INT64_C(1900000000) * NS + 500000999, "b"),
	};
	char *got;

	got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_SHOWDELTA, r, 2);
	cr_assert_str_eq(got, "[    1.000000 <    0.000000>] a\n"
			      "[    1.500000 <    0.500000>] b\n");
	free(got);
	set_tz("UTC");
	got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_ISO, 0, r, 2);
	cr_assert_str_eq(got, "2030-03-17T17:46:40,000000+00:00 a\n"
			      "2030-03-17T17:46:40,500000+00:00 b\n");
	free(got);
}

/*
 * ctime against the C library's own strftime(), over a leap second in a
 * zone that counts them, forwards and backwards.
 */
Test(format, ctime_follows_localtime_over_a_leap_second)
{
	static const int steps[] = { -61, -60, -1, 0, 1, 2, -2, 59, 60, 61, -30 };
	struct kmsg_fmt *f;
	struct buf ours = { 0 }, want = { 0 };
	int64_t t, leap = 0;
	size_t i;

	if (!zone_exists("right/UTC"))
		cr_skip_test("no right/UTC zone");
	set_tz("right/UTC");
	for (t = INT64_C(1483228800); t < INT64_C(1483228800) + 60; t++) {
		time_t tt = (time_t)t;
		struct tm tm;

		cr_assert_not_null(localtime_r(&tt, &tm));
		if (tm.tm_sec == 60) {
			leap = t;
			break;
		}
	}
	cr_assert_neq(leap, 0, "no leap second at the end of 2016");
	f = fmt_new(KMSG_OUT_SHORT, KMSG_TIME_CTIME, 0);
	for (i = 0; i < NVAR(steps); i++) {
		time_t tt = (time_t)(leap + steps[i]);
		struct kmsg_record r = mkrec(0, 6, NS, (int64_t)tt * NS + 999, "x");
		char s[64];
		struct tm tm;

		localtime_r(&tt, &tm);
		strftime(s, sizeof(s), "[%a %b %e %H:%M:%S %Y] x\n", &tm);
		buf_add(&want, s, strlen(s));
		render(&ours, f, &r);
	}
	kmsg_fmt_free(f);
	cr_assert_str_eq(ours.p, want.p);
	cr_assert_not_null(strstr(ours.p, "23:59:60 2016"));
	buf_free(&ours);
	buf_free(&want);
}

/* ------------------------------------------------------------------ */
/* Short output details                                                */

Test(format, empty_text_is_an_empty_line_and_skips_deltas)
{
	struct kmsg_record r[3] = {
		mkrec(0, 6, 1 * NS, 0, "a"),
		mkrec(0, 6, 5 * NS, 0, ""),
		mkrec(0, 6, 2 * NS, 0, "b"),
	};
	char *got = fmt_all(KMSG_OUT_SHORT, KMSG_TIME_DELTA, 0, r, 3);

	cr_assert_str_eq(got, "[<    0.000000>] a\n\n[<    1.000000>] b\n");
	free(got);
}

Test(format, raw_with_color_colors_the_whole_prefix)
{
	struct kmsg_record r = mkrec(16, 3, NS, 0, "usb: x");

	ASSERT_FMT("\033[32m<131>[    1.000000] \033[0m\033[33musb: \033[0m"
		   "\033[31mx\033[0m\n",
		   KMSG_OUT_SHORT, KMSG_TIME_RAW,
		   KMSG_FMT_COLOR | KMSG_FMT_DECODE, &r);
}

Test(format, many_newlines_are_each_indented)
{
	static char text[1000];
	struct kmsg_record r = mkrec(0, 6, NS, 0, "");
	char *got;
	size_t i;

	memset(text, '\n', sizeof(text));
	r.text = text;
	r.text_len = sizeof(text);
	got = fmt_one(KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_DECODE, &r);
	/* 30 columns of prefix; every newline is followed by 30 spaces, the
	 * last one too, as in dmesg */
	cr_assert_eq(strlen(got), 30 + 1000 * 31 + 1);
	cr_assert_eq(strncmp(got + 30, "\n                              \n", 32), 0);
	for (i = 0; i < 1000; i++)
		cr_assert_eq(got[30 + 31 * i], '\n');
	free(got);
}

Test(format, long_invalid_text_is_fully_escaped)
{
	static char text[KMSG_MAX_TEXT_LIMIT];
	struct kmsg_record r = mkrec(0, 6, NS, 0, "");
	char *got;

	memset(text, 0xff, sizeof(text));
	r.text = text;
	r.text_len = sizeof(text);
	got = fmt_one(KMSG_OUT_SHORT, KMSG_TIME_NOTIME, 0, &r);
	cr_assert_eq(strlen(got), 4 * sizeof(text) + 1);
	cr_assert_eq(strncmp(got + 4 * (sizeof(text) - 1), "\\xff\n", 6), 0);
	free(got);
}

/* ------------------------------------------------------------------ */
/* Fields                                                              */

/* Appends one field entry: little-endian u16 length, then "KEY=value". */
static size_t add_field(unsigned char *area, size_t pos, const char *kv,
			size_t len)
{
	area[pos] = (unsigned char)(len & 0xff);
	area[pos + 1] = (unsigned char)(len >> 8);
	memcpy(area + pos + 2, kv, len);
	return pos + 2 + len;
}

#define ADD_FIELD(area, pos, lit) add_field((area), (pos), (lit), sizeof(lit) - 1)

static unsigned char field_area[256];

static struct kmsg_record rec_with_fields(const char *text)
{
	struct kmsg_record r = mkrec(3, 6, 1234567890, 0, text);
	size_t n = 0;

	n = ADD_FIELD(field_area, n, "SUBSYSTEM=usb");
	n = ADD_FIELD(field_area, n, "DEVICE=c189:1");
	n = ADD_FIELD(field_area, n, "WEIRD=a\nb\tc\x1b\\ \xc3\xa9");
	r.fields = field_area;
	r.fields_len = n;
	return r;
}

Test(format, fields_on_lines_of_their_own)
{
	struct kmsg_record r = rec_with_fields("usb 1-1: new device");

	ASSERT_FMT("[    1.234567] usb 1-1: new device\n"
		   "               SUBSYSTEM=usb\n"
		   "               DEVICE=c189:1\n"
		   "               WEIRD=a\\x0ab\\x09c\\x1b\\ \xc3\xa9\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_FIELDS, &r);
	ASSERT_FMT("usb 1-1: new device\n"
		   " SUBSYSTEM=usb\n"
		   " DEVICE=c189:1\n"
		   " WEIRD=a\\x0ab\\x09c\\x1b\\ \xc3\xa9\n",
		   KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_FIELDS, &r);
	ASSERT_FMT("[    1.234567] usb 1-1: new device\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, &r);
}

Test(format, fields_of_an_empty_message)
{
	struct kmsg_record r = rec_with_fields("");

	r.fields_len = 15;
	ASSERT_FMT("\n SUBSYSTEM=usb\n", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		   KMSG_FMT_FIELDS, &r);
}

Test(format, malformed_fields_are_reported)
{
	static const unsigned char bad[] = { 200, 0, 'A', '=', 'b' };
	struct kmsg_record r = mkrec(0, 6, NS, 0, "x");
	struct kmsg_fmt *f = fmt_new(KMSG_OUT_KMSG, KMSG_TIME_MONO, 0);
	const char *out;

	r.fields = bad;
	r.fields_len = sizeof(bad);
	cr_assert_eq(kmsg_fmt_record(&out, f, &r), KMSG_ECORRUPT);
	kmsg_fmt_free(f);
}

/* ------------------------------------------------------------------ */
/* /dev/kmsg export                                                    */

Test(format, kmsg_export_format)
{
	struct kmsg_record r = rec_with_fields("usb\\1-1: caf\xc3\xa9\ttab\nnl \x7f");

	r.seq = 42;
	ASSERT_FMT("30,42,1234567,-;usb\\x5c1-1: caf\\xc3\\xa9\\x09tab\\x0anl \\x7f\n"
		   " SUBSYSTEM=usb\n"
		   " DEVICE=c189:1\n"
		   " WEIRD=a\\x0ab\\x09c\\x1b\\x5c \\xc3\\xa9\n",
		   KMSG_OUT_KMSG, KMSG_TIME_CTIME,
		   KMSG_FMT_COLOR | KMSG_FMT_DECODE | KMSG_FMT_NOESCAPE, &r);
}

Test(format, kmsg_export_marks_fragments)
{
	struct kmsg_record r = mkrec(1, 5, 7 * NS, 0, "part one ");

	r.seq = 18446744073709551615u;
	r.flags = KMSG_FRAGMENT;
	ASSERT_FMT("13,18446744073709551615,7000000,c;part one \n",
		   KMSG_OUT_KMSG, KMSG_TIME_MONO, 0, &r);
	r.flags = KMSG_PARTIAL;
	r.text_len = 0;
	ASSERT_FMT("13,18446744073709551615,7000000,-;\n",
		   KMSG_OUT_KMSG, KMSG_TIME_MONO, 0, &r);
}

Test(format, fields_survive_a_real_log)
{
	struct kmsg_log *log = tu_create("fields.log", 65536, 0);
	struct kmsg_field flds[2] = {
		{ "SUBSYSTEM", 0, "usb", 3 },
		{ "DEVICE", 0, "+usb:1-1\n", 9 },
	};
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_reader *rd;
	struct kmsg_record rec;
	uint64_t seq = 0;
	char want[512];
	char *got;
	int r;

	e.flags = KMSG_TIMES;
	e.facility = 3;
	e.level = 6;
	e.text = "usb 1-1: hello";
	e.text_len = strlen(e.text);
	e.fields = flds;
	e.nfields = 2;
	e.boot_ns = 1234567890;
	e.real_ns = INT64_C(1700000000) * NS;
	r = kmsg_log_append(&seq, log, &e);
	cr_assert_eq(r, 0, "append: %s", kmsg_strerror(r));
	cr_assert_eq(kmsg_reader_new(&rd, log, 0), 0);
	cr_assert_eq(kmsg_reader_next(rd, &rec), 1);

	got = fmt_one(KMSG_OUT_KMSG, KMSG_TIME_MONO, 0, &rec);
	/* a record of a log names its numbering, as kmsg_log_stat() does */
	struct kmsg_stat st;
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_neq(st.seq_id, 0);
	cr_assert_eq(rec.seq_id, st.seq_id);
	/* and the rest the kernel's format has no place for */
	snprintf(want, sizeof(want), "30,%llu,1234567,-;usb 1-1: hello\n"
		 " SUBSYSTEM=usb\n DEVICE=+usb:1-1\\x0a\n _SEQNUM_ID=%016llx\n"
		 " _REALTIME_NS=1700000000000000000\n _BOOTTIME_NS=1234567890\n"
		 " _BOOT_ID=%016llx\n _CLAIMED_PID=%u\n _CALLER=%u\n",
		 (unsigned long long)seq, (unsigned long long)st.seq_id,
		 (unsigned long long)rec.boot_id, rec.pid, rec.caller);
	cr_assert_str_eq(got, want);
	free(got);
	got = fmt_one(KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_FIELDS, &rec);
	cr_assert_str_eq(got, "[    1.234567] usb 1-1: hello\n"
			      "               SUBSYSTEM=usb\n"
			      "               DEVICE=+usb:1-1\\x0a\n");
	free(got);
	kmsg_reader_free(rd);
	kmsg_log_close(log);
}

/* ------------------------------------------------------------------ */
/* JSON                                                                */

Test(format, json_document_layout)
{
	struct kmsg_record r[2] = {
		mkrec(0, 6, NS, 0, "one"),
		mkrec(1, 6, 123456 * NS + 500 * 1000 * US, 0, "two"),
	};
	struct kmsg_fmt *f = fmt_new(KMSG_OUT_JSON, KMSG_TIME_CTIME, 0);
	struct buf b = { 0 };
	const char *out;
	int n, i;

	/* every call ends a line, so a follower shows each record at once */
	for (i = 0; i < 2; i++) {
		n = kmsg_fmt_record(&out, f, &r[i]);
		cr_assert_gt(n, 0);
		cr_assert_eq(out[n - 1], '\n');
		buf_add(&b, out, (size_t)n);
	}
	render_end(&b, f);
	cr_assert_str_eq(b.p,
		"{\n"
		"   \"dmesg\": [\n"
		"      {\n"
		"         \"pri\": 6,\n"
		"         \"time\":     1.000000,\n"
		"         \"msg\": \"one\"\n"
		"      },{\n"
		"         \"pri\": 14,\n"
		"         \"time\": 123456.500000,\n"
		"         \"msg\": \"two\"\n"
		"      }\n"
		"   ]\n"
		"}\n");
	/* after the end a new document begins */
	buf_free(&b);
	render(&b, f, &r[0]);
	cr_assert_eq(strncmp(b.p, "{\n   \"dmesg\": [\n      {\n", 24), 0);
	buf_free(&b);
	kmsg_fmt_free(f);
}

Test(format, json_decode_and_bad_priority)
{
	struct kmsg_record r[2] = {
		mkrec(16, 4, NS, 0, "a"),
		mkrec(40, 4, NS, 0, "b"),
	};
	char *got = fmt_all(KMSG_OUT_JSON, KMSG_TIME_MONO, KMSG_FMT_DECODE, r, 2);

	cr_assert_str_eq(got,
		"{\n"
		"   \"dmesg\": [\n"
		"      {\n"
		"         \"fac\": \"local0\",\n"
		"         \"pri\": \"warn\",\n"
		"         \"time\":     1.000000,\n"
		"         \"msg\": \"a\"\n"
		"      },{\n"
		"         \"time\":     1.000000,\n"
		"         \"msg\": \"b\"\n"
		"      }\n"
		"   ]\n"
		"}\n");
	free(got);
}

Test(format, json_with_no_records_is_still_json)
{
	char *got = fmt_all(KMSG_OUT_JSON, KMSG_TIME_MONO, 0, NULL, 0);

	cr_assert_str_eq(got, "{\n   \"dmesg\": [\n   ]\n}\n");
	free(got);
}

Test(format, json_string_escapes)
{
	static const char text[] =
		"q\"b\\s/\x01\x1f\b\t\n\f\r\x7f\xc2\x9b\xe2\x80\xae\xf0\x9f\xbf\xbe"
		"\xc3\xa9\xf0\x9f\x98\x80\xff\xc3(\0end";
	static const char want[] =
		"\"msg\": \"q\\\"b\\\\s/\\u0001\\u001f\\b\\t\\n\\f\\r\\u007f"
		"\\u009b\\u202e\\ud83f\\udffe\xc3\xa9\xf0\x9f\x98\x80\\\\xff"
		"\\\\xc3(\\u0000end\"\n";
	struct kmsg_record r = mkrec(0, 6, NS, 0, "");
	char *got;
	const char *msg;

	r.text = text;
	r.text_len = sizeof(text) - 1;
	got = fmt_one(KMSG_OUT_JSON, KMSG_TIME_MONO, 0, &r);
	msg = strstr(got, "\"msg\": ");
	cr_assert_not_null(msg);
	cr_assert_eq(strncmp(msg, want, sizeof(want) - 1), 0, "%s", msg);
	free(got);
}

Test(format, json_noescape_keeps_only_what_json_needs)
{
	struct kmsg_record r = mkrec(0, 6, NS, 0,
				     "del\x7f c1\xc2\x9b rlo\xe2\x80\xae bad\xff \x1b");
	char *got = fmt_one(KMSG_OUT_JSON, KMSG_TIME_MONO, KMSG_FMT_NOESCAPE, &r);

	cr_assert_not_null(strstr(got, "\"msg\": \"del\x7f c1\xc2\x9b rlo\xe2\x80\xae"
				       " bad\\\\xff \\u001b\"\n"), "%s", got);
	free(got);
}

/* ------------------------------------------------------------------ */
/* Renderer arguments                                                  */

Test(format, bad_options_are_refused)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f = NULL;

	cr_assert_eq(kmsg_fmt_new(NULL, &o), KMSG_EINVAL);
	o.version = 0;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.version = KMSG_FMT_OPTS_VERSION + 1;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.version = KMSG_FMT_OPTS_VERSION;
	o.flags = 1u << 20;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.flags = 0;
	o.time = (enum kmsg_time_format)99;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	o.time = KMSG_TIME_MONO;
	o.output = (enum kmsg_output)7;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	cr_assert_null(f);
}

/* out (n bytes) is the string literal want */
#define OUT_EQ(want) \
	cr_assert(n == (int)sizeof(want) - 1 && memcmp(out, want, (size_t)n) == 0, \
		  "%.*s", n, out)

/* kmsg_fmt_opts.colors: a sequence per part, dmesg's for NULL, none for "". */
Test(format, colors_from_the_options)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_record err = mkrec(0, 3, NS, 0, "usb 1-1: bad");
	struct kmsg_record seg = mkrec(0, 6, NS, 0, "a[1]: segfault at 0");
	struct kmsg_fmt *f = NULL;
	const char *out = NULL;
	int n;

	o.flags = KMSG_FMT_COLOR;
	o.colors[KMSG_COLOR_TIME] = "";
	o.colors[KMSG_COLOR_ERR] = "\033[1;31m";
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	/* the copies serve: the caller's strings may go */
	o.colors[KMSG_COLOR_ERR] = "x";
	n = kmsg_fmt_record(&out, f, &err);
	cr_assert_gt(n, 0);
	OUT_EQ("[    1.000000] \033[33musb 1-1: \033[0m"
	       "\033[1;31mbad\033[0m\n");
	n = kmsg_fmt_record(&out, f, &seg);
	OUT_EQ("[    1.000000] \033[33ma[1]: \033[0m"
	       "\033[2m\033[31msegfault at 0\033[0m\n");
	kmsg_fmt_free(f);
}

/* A program built with version 1's struct, which ends before colors. */
Test(format, colors_version_1)
{
	struct kmsg_fmt_opts_v1 {
		unsigned version;
		enum kmsg_output output;
		enum kmsg_time_format time;
		unsigned flags;
	} *v1 = malloc(sizeof(*v1));
	struct kmsg_record err = mkrec(0, 3, NS, 0, "bad");
	struct kmsg_fmt *f = NULL;
	const char *out = NULL;
	int n;

	*v1 = (struct kmsg_fmt_opts_v1){ 1, KMSG_OUT_SHORT, KMSG_TIME_MONO,
					 KMSG_FMT_COLOR };
	cr_assert_eq(kmsg_fmt_new(&f, (const struct kmsg_fmt_opts *)v1), 0);
	free(v1);
	n = kmsg_fmt_record(&out, f, &err);
	OUT_EQ("\033[32m[    1.000000] \033[0m\033[31mbad\033[0m\n");
	kmsg_fmt_free(f);
}

Test(format, colors_too_long_are_refused)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f = NULL;
	char *big = malloc(KMSG_FMT_COLOR_MAX + 2);

	memset(big, 'x', KMSG_FMT_COLOR_MAX + 1);
	big[KMSG_FMT_COLOR_MAX + 1] = '\0';
	o.flags = KMSG_FMT_COLOR;
	o.colors[KMSG_COLOR_WARN] = big;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	cr_assert_null(f);
	big[KMSG_FMT_COLOR_MAX] = '\0';
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	kmsg_fmt_free(f);
	free(big);
}

Test(format, defaults_and_bad_records)
{
	struct kmsg_record r = mkrec(0, 6, NS, 0, "x");
	struct kmsg_fmt *f = NULL;
	const char *out = NULL;
	int n;

	cr_assert_eq(kmsg_fmt_new(&f, NULL), 0);
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(n, 17);
	cr_assert_eq(memcmp(out, "[    1.000000] x\n", 17), 0);
	cr_assert_eq(kmsg_fmt_end(&out, f), 0);
	cr_assert_eq(kmsg_fmt_record(NULL, f, &r), KMSG_EINVAL);
	cr_assert_eq(kmsg_fmt_record(&out, NULL, &r), KMSG_EINVAL);
	cr_assert_eq(kmsg_fmt_record(&out, f, NULL), KMSG_EINVAL);
	r.text = NULL;
	cr_assert_eq(kmsg_fmt_record(&out, f, &r), KMSG_EINVAL);
	kmsg_fmt_free(f);
	kmsg_fmt_free(NULL);
}

/* ------------------------------------------------------------------ */
/* kmsg_dmesg_parse                                                    */

static struct kmsg_record parse_ok(const char *line, int64_t boot_real_ns)
{
	struct kmsg_record r;
	int rc = kmsg_dmesg_parse(&r, line, strlen(line), boot_real_ns);

	cr_assert_eq(rc, 1, "\"%s\": %d", line, rc);
	return r;
}

static void assert_text(const struct kmsg_record *r, const char *want)
{
	cr_assert_eq(r->text_len, strlen(want), "\"%.*s\"", (int)r->text_len,
		     r->text);
	cr_assert_eq(memcmp(r->text, want, r->text_len), 0, "\"%.*s\"",
		     (int)r->text_len, r->text);
}

Test(format, parse_dmesg_r_lines)
{
	static const char line[] = "<14>[ 1234.567890] hello world\n";
	struct kmsg_record r = parse_ok(line, 1000 * NS);

	cr_assert_eq(r.facility, 1);
	cr_assert_eq(r.level, 6);
	cr_assert_eq(r.boot_ns, 1234567890000);
	cr_assert_eq(r.real_ns, 1000 * NS + 1234567890000);
	cr_assert_eq(r.text, line + 19, "text points into the line");
	assert_text(&r, "hello world");
	cr_assert_eq(r.fields_len, 0);
	cr_assert_eq(r.flags, 0);
}

Test(format, parse_optional_parts)
{
	struct kmsg_record r;

	r = parse_ok("<3>no time", 7 * NS);
	cr_assert_eq(r.level, 3);
	cr_assert_eq(r.boot_ns, 0);
	cr_assert_eq(r.real_ns, 7 * NS);
	assert_text(&r, "no time");

	/* no priority at all, as in dmesg */
	r = parse_ok("[    2.000000] plain dmesg", 0);
	cr_assert_eq(r.facility, KMSG_PRIO_NONE);
	cr_assert_eq(r.level, KMSG_PRIO_NONE);
	cr_assert_eq(r.boot_ns, 2 * NS);
	assert_text(&r, "plain dmesg");

	r = parse_ok("just text", 0);
	assert_text(&r, "just text");
	cr_assert_eq(r.boot_ns, 0);

	r = parse_ok("<6>[    1.000000] ", 0);
	cr_assert_eq(r.text_len, 0);
	r = parse_ok("<6>", 0);
	cr_assert_eq(r.text_len, 0);
	r = parse_ok("<6>[12]  two spaces", 0);
	cr_assert_eq(r.boot_ns, 12 * NS);
	assert_text(&r, " two spaces");
}

/*
 * dmesg 2.40 and later print the kernel's caller after the time:
 * "[%*s] " with the id right-aligned (sys-utils/dmesg.c of v2.40), and
 * read it back from -F text after the time: "[", spaces, T or C, the
 * number, "]".  The expected values are written from that source: the
 * dmesg installed here (2.38) knows no caller.
 */
Test(format, parse_caller_column)
{
	struct kmsg_record r;
	char name[12];

	r = parse_ok("<6>[    1.234567] [  T123] hello", 0);
	cr_assert_eq(r.caller, 123);
	cr_assert_eq(r.flags, KMSG_KERNEL_CALLER);
	cr_assert_eq(r.boot_ns, 1234567000);
	assert_text(&r, "hello");
	cr_assert_eq(kmsg_fmt_caller(name, sizeof(name), &r), 4);
	cr_assert_str_eq(name, "T123");

	/* a CPU, in the kernel's encoding; and the idle task, T0 */
	r = parse_ok("<4>[    2.000000] [    C3] irq", 0);
	cr_assert_eq(r.caller, 0x80000003u);
	cr_assert_eq(kmsg_fmt_caller(name, sizeof(name), &r), 2);
	cr_assert_str_eq(name, "C3");
	r = parse_ok("<6>[    0.000000] [    T0] Linux version", 0);
	cr_assert_eq(r.caller, 0);
	cr_assert_eq(r.flags, KMSG_KERNEL_CALLER);
	cr_assert_eq(kmsg_fmt_caller(name, sizeof(name), &r), 2);
	cr_assert_str_eq(name, "T0");
	assert_text(&r, "Linux version");

	/* no padding, no time, no priority: still the column */
	r = parse_ok("<6>[T4194303]x", 0);
	cr_assert_eq(r.caller, 4194303);
	assert_text(&r, "x");
	r = parse_ok("[ T9] t", 0);
	cr_assert_eq(r.caller, 9);
	assert_text(&r, "t");

	/* what is not the column stays text, and the record has no caller */
	static const char *const text[] = {
		"<6>[    1.000000] [ ok] done", "<6>[    1.000000] [T] x",
		"<6>[    1.000000] [T12 x", "<6>[    1.000000] [T2147483648] x",
		"<6>[    1.000000] [X12] x", "<6>[    1.000000] [T-1] x",
		"<6>[    1.000000] [T1x] y", "<6>[    1.000000] [T1",
	};
	for (size_t i = 0; i < sizeof(text) / sizeof(text[0]); i++) {
		r = parse_ok(text[i], 0);
		cr_assert_eq(r.flags, 0, "%s", text[i]);
		cr_assert_eq(r.caller, 0, "%s", text[i]);
		assert_text(&r, text[i] + 18);
		cr_assert_eq(kmsg_fmt_caller(name, sizeof(name), &r), 0);
		cr_assert_str_eq(name, "");
	}
	/* the largest thread id the kernel's encoding leaves */
	r = parse_ok("[    1.000000] [T2147483647] x", 0);
	cr_assert_eq(r.caller, 0x7fffffffu);
}

/* What the caller column and -J's key show for each kind of caller. */
Test(format, caller_column)
{
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_record r = { .boot_ns = 1234567000, .facility = 1, .level = 6,
				 .text = "hi", .text_len = 2, .pid = 456,
				 .caller = 123 };
	struct kmsg_fmt *f;
	const char *out;
	char name[12];
	int n;

	o.flags = KMSG_FMT_CALLER;
	o.caller_width = 6;
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(n, (int)strlen("[    1.234567] [  T123] hi\n"));
	cr_assert_eq(memcmp(out, "[    1.234567] [  T123] hi\n", (size_t)n), 0, "%.*s", n, out);
	/* a writer of another pid namespace: its pid there, not the hash */
	r.caller = kmsg_caller_id(77) | 0x80000000u;
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(memcmp(out, "[    1.234567] [  P456] hi\n", (size_t)n), 0, "%.*s", n, out);
	/* no caller: no column, as dmesg 2.40 */
	r.caller = 0;
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(memcmp(out, "[    1.234567] hi\n", (size_t)n), 0, "%.*s", n, out);
	kmsg_fmt_free(f);

	/* wider than the width: not cut; the pid column after the caller */
	o.flags = KMSG_FMT_CALLER | KMSG_FMT_PID;
	o.caller_width = 3;
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	r.caller = 4194303;
	r.pid = 7;
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(memcmp(out, "[    1.234567] [T4194303] [ P7] hi\n", (size_t)n), 0,
		     "%.*s", n, out);
	kmsg_fmt_free(f);

	o.caller_width = 17;
	cr_assert_eq(kmsg_fmt_new(&f, &o), KMSG_EINVAL);
	cr_assert_eq(kmsg_fmt_caller(name, 4, &r), KMSG_EINVAL);

	/* a version 1 struct has no caller_width: 5, dmesg -F's ... */
	struct { unsigned v; enum kmsg_output out; enum kmsg_time_format t;
		 unsigned flags; } v1 = { 1, KMSG_OUT_SHORT, KMSG_TIME_NOTIME,
					  KMSG_FMT_CALLER };
	cr_assert_eq(kmsg_fmt_new(&f, (const struct kmsg_fmt_opts *)(void *)&v1), 0);
	r.caller = 5;
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(memcmp(out, "[   T5] hi\n", (size_t)n), 0, "%.*s", n, out);
	kmsg_fmt_free(f);

	/* nor a version 2 struct, which ends after colors */
	struct { unsigned v; enum kmsg_output out; enum kmsg_time_format t;
		 unsigned flags; const char *colors[KMSG_COLOR_COUNT]; } v2 =
		{ 2, KMSG_OUT_SHORT, KMSG_TIME_NOTIME, KMSG_FMT_CALLER, { NULL } };
	cr_assert_eq(kmsg_fmt_new(&f, (const struct kmsg_fmt_opts *)(void *)&v2), 0);
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(memcmp(out, "[   T5] hi\n", (size_t)n), 0, "%.*s", n, out);
	kmsg_fmt_free(f);
}

static struct kmsg_record parse_flags_ok(const char *line, unsigned flags)
{
	struct kmsg_record r;
	int rc = kmsg_dmesg_parse_flags(&r, line, strlen(line), 0, flags);

	cr_assert_eq(rc, 1, "\"%s\": %d", line, rc);
	return r;
}

/* What dmesg 2.38 reads in a prefix when it prints or filters on it. */
Test(format, parse_reads_bad_prefixes_as_dmesg)
{
	static const struct {
		const char *line;
		unsigned fac, lev;
		const char *text;
	} c[] = {
		/* facility beyond local7: none; the level stays (colours) */
		{ "<200>[    1.000000] x", KMSG_PRIO_NONE, 0, "x" },
		{ "<201>[    1.000000] x", KMSG_PRIO_NONE, 1, "x" },
		{ "<-1>[    1.000000] x", KMSG_PRIO_NONE, 7, "x" },
		/* glibc's LOG_FAC() masks the number */
		{ "<1030>[    1.000000] x", 0, 6, "x" },
		{ "< 6>[    1.000000] x", 0, 6, "x" },
		{ "<+14>[    1.000000] x", 1, 6, "x" },
		/* no number: no priority, the text after the '<' */
		{ "<>[    1.000000] x", KMSG_PRIO_NONE, KMSG_PRIO_NONE,
		  ">[    1.000000] x" },
		{ "<abc> x", KMSG_PRIO_NONE, KMSG_PRIO_NONE, "abc> x" },
		{ "<99999999999999999999>[    1.000000] x", KMSG_PRIO_NONE,
		  KMSG_PRIO_NONE, "99999999999999999999>[    1.000000] x" },
		/* no '>' after the number: as dmesg 2.41 */
		{ "<6 >[    1.000000] x", KMSG_PRIO_NONE, KMSG_PRIO_NONE,
		  "6 >[    1.000000] x" },
		{ "<6[    1.000000] x", KMSG_PRIO_NONE, KMSG_PRIO_NONE,
		  "6[    1.000000] x" },
		/* what only looks like a time stays text */
		{ "<6>[abc] x", 0, 6, "[abc] x" },
		{ "<6>[12.] x", 0, 6, "[12.] x" },
		{ "<6>[ 1.5 x", 0, 6, "[ 1.5 x" },
		{ "<6>[-1.0] x", 0, 6, "[-1.0] x" },
	};
	struct kmsg_record r;
	size_t i;

	for (i = 0; i < NVAR(c); i++) {
		r = parse_flags_ok(c[i].line, 0);
		cr_assert_eq(r.facility, c[i].fac, "%s: facility %u", c[i].line,
			     r.facility);
		cr_assert_eq(r.level, c[i].lev, "%s: level %u", c[i].line, r.level);
		assert_text(&r, c[i].text);
	}
}

/* Without -x, -l, -f, colour or JSON dmesg drops "<...>" unread. */
Test(format, parse_skip_prio_drops_the_prefix_unread)
{
	struct kmsg_record r;

	r = parse_flags_ok("<>[    4.000000] x", KMSG_DMESG_SKIP_PRIO);
	cr_assert_eq(r.boot_ns, 4 * NS);
	assert_text(&r, "x");
	r = parse_flags_ok("<6 >[    4.000000] x", KMSG_DMESG_SKIP_PRIO);
	cr_assert_eq(r.boot_ns, 4 * NS);
	assert_text(&r, "x");
	cr_assert_eq(r.facility, KMSG_PRIO_NONE);
	r = parse_flags_ok("<6>[    4.000000] x", KMSG_DMESG_SKIP_PRIO);
	assert_text(&r, "x");
	/* a NUL ends the prefix too */
	cr_assert_eq(kmsg_dmesg_parse_flags(&r, "<6\0>x", 5, 0,
					    KMSG_DMESG_SKIP_PRIO), 1);
	assert_text(&r, ">x");
	/* no '>' at all: dmesg prints an empty line; the text is kept */
	r = parse_flags_ok("<6[    5.000000] x", KMSG_DMESG_SKIP_PRIO);
	assert_text(&r, "6[    5.000000] x");
	cr_assert_eq(kmsg_dmesg_parse_flags(&r, "x", 1, 0, 1u << 7), KMSG_EINVAL);
}

/* Records without a priority: no decoding, no <N>, no "pri". */
Test(format, records_without_priority)
{
	struct kmsg_record r = mkrec(KMSG_PRIO_NONE, KMSG_PRIO_NONE, NS, 0, "x");
	struct kmsg_record a = mkrec(KMSG_PRIO_NONE, 1, NS, 0, "x");

	ASSERT_FMT("[    1.000000] x\n", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		   KMSG_FMT_DECODE, &r);
	ASSERT_FMT("[    1.000000] x\n", KMSG_OUT_SHORT, KMSG_TIME_RAW, 0, &r);
	ASSERT_FMT("13,0,1000000,-;x\n", KMSG_OUT_KMSG, KMSG_TIME_MONO, 0, &r);
	/* dmesg colours by the level alone */
	ASSERT_FMT("\033[32m[    1.000000] \033[0m\033[7m\033[31mx\033[0m\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_COLOR, &a);
}

/* A terminal whose charset is not UTF-8 gets every byte >= 0x80 escaped. */
Test(format, ascii_escapes_every_byte_from_0x80)
{
	struct kmsg_record r = mkrec(0, 6, NS, 0, "caf\xc3\xa9 \xe4\xb8\xad\x7f\tx");

	ASSERT_FMT("[    1.000000] caf\\xc3\\xa9 \\xe4\\xb8\\xad\\x7f\tx\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, KMSG_FMT_ASCII, &r);
	ASSERT_FMT("[    1.000000] caf\xc3\xa9 \xe4\xb8\xad\\x7f\tx\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, &r);
	/* --noescape wins; JSON stays UTF-8 */
	ASSERT_FMT("[    1.000000] caf\xc3\xa9 \xe4\xb8\xad\x7f\tx\n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO,
		   KMSG_FMT_ASCII | KMSG_FMT_NOESCAPE, &r);
	r.text = "\xc3\xa9";
	r.text_len = 2;
	ASSERT_FMT("{\n   \"dmesg\": [\n      {\n         \"pri\": 6,\n"
		   "         \"time\":     1.000000,\n         \"msg\": \"\xc3\xa9\"\n"
		   "      }\n   ]\n}\n",
		   KMSG_OUT_JSON, KMSG_TIME_MONO, KMSG_FMT_ASCII, &r);
}

Test(format, blank_lines_after_a_record_keep_the_indent)
{
	struct kmsg_record r = mkrec(0, 6, NS, 0, "x\n\n");

	ASSERT_FMT("[    1.000000] x\n               \n               \n",
		   KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, &r);
	r.text = "x\n\0y";
	r.text_len = 4;
	ASSERT_FMT("[    1.000000] x\n\\x00y\n", KMSG_OUT_SHORT, KMSG_TIME_MONO,
		   0, &r);
}

Test(format, parse_fractions_as_decimals)
{
	struct kmsg_record r;

	r = parse_ok("<6>[    1.5] x", 0);
	cr_assert_eq(r.boot_ns, 1500000000);
	r = parse_ok("<6>[    1.123456789999] x", 0);
	cr_assert_eq(r.boot_ns, 1123456789);
	r = parse_ok("<6>[   -5.250000] x", 0);
	cr_assert_eq(r.boot_ns, -5250000000);
}

Test(format, parse_empty_and_bad)
{
	struct kmsg_record r;

	cr_assert_eq(kmsg_dmesg_parse(&r, "", 0, 0), 0);
	cr_assert_eq(kmsg_dmesg_parse(&r, "\n", 1, 0), 0);
	cr_assert_eq(kmsg_dmesg_parse(&r, NULL, 0, 0), 0);
	cr_assert_eq(kmsg_dmesg_parse(NULL, "x", 1, 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_dmesg_parse(&r, NULL, 3, 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_dmesg_parse(&r, "<6>[99999999999.0] x", 20, 0),
		     KMSG_EINVAL);
	cr_assert_eq(kmsg_dmesg_parse(&r, "<6>[9000000000.0] x", 19,
				      INT64_MAX - NS), KMSG_EINVAL);
}

Test(format, parse_then_render_gives_the_line_back)
{
	static const char *const lines[] = {
		"<6>[    1.234567] hello",
		"<131>[123456.000001] local0 error",
		"<0>[    0.000000] zero",
	};
	size_t i;

	for (i = 0; i < NVAR(lines); i++) {
		struct kmsg_record r = parse_ok(lines[i], 0);
		char *got = fmt_one(KMSG_OUT_SHORT, KMSG_TIME_RAW, 0, &r);

		cr_assert_eq(strlen(got), strlen(lines[i]) + 1);
		cr_assert_eq(strncmp(got, lines[i], strlen(lines[i])), 0,
			     "%s", got);
		free(got);
	}
}

Test(format, dmesg_boot_time_keeps_microseconds_as_dmesg_2_39_does)
{
	struct timespec now, mono;
	int64_t boot, expect;
	int fraction = 0;

	/* util-linux 2.39 and later keep the boot time's microseconds
	 * (2.38 dropped them): a whole second every time would be a chance
	 * of one in a million, ten times over */
	for (int i = 0; i < 10; i++) {
		cr_assert_eq(kmsg_dmesg_boot_time(&boot), 0);
		cr_assert_eq(boot % 1000, 0, "finer than microseconds: %lld", (long long)boot);
		fraction |= boot % 1000000000 != 0;
	}
	cr_assert(fraction, "whole seconds: %lld", (long long)boot);
	clock_gettime(CLOCK_REALTIME, &now);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	/* the wall clock less the time since boot, suspended time not counted */
	expect = ((int64_t)now.tv_sec * 1000000000 + now.tv_nsec) -
		 ((int64_t)mono.tv_sec * 1000000000 + mono.tv_nsec);
	cr_assert(llabs(boot - expect) <= INT64_C(100000000),
		  "boot %lld, expected about %lld", (long long)boot, (long long)expect);
	cr_assert_eq(kmsg_dmesg_boot_time(NULL), KMSG_EINVAL);
}

Test(format, json_escape_writes_what_the_json_output_writes)
{
	static const char text[] = "a\"b\\c\n\x01\x7f\xff\xc2\x9b\xe2\x80\xae\xc3\xa9\0z";
	const size_t len = sizeof(text) - 1;
	char buf[KMSG_JSON_ESCAPE_SIZE(sizeof(text))];
	int n = kmsg_json_escape(buf, sizeof(buf), text, len, 0);
	const char *want = "a\\\"b\\\\c\\n\\u0001\\u007f\\\\xff\\u009b\\u202e\xc3\xa9\\u0000z";

	cr_assert_eq(n, (int)strlen(want));
	cr_assert_str_eq(buf, want);
	n = kmsg_json_escape(buf, sizeof(buf), text, len, KMSG_FMT_NOESCAPE);
	cr_assert_str_eq(buf, "a\\\"b\\\\c\\n\\u0001\x7f\\\\xff\xc2\x9b\xe2\x80\xae\xc3\xa9\\u0000z");
	cr_assert_eq(kmsg_json_escape(buf, sizeof(buf), NULL, 0, 0), 0);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(kmsg_json_escape(buf, KMSG_JSON_ESCAPE_SIZE(len) - 1, text, len, 0),
		     KMSG_EINVAL, "a buffer too small for the worst case");
	cr_assert_eq(kmsg_json_escape(buf, sizeof(buf), text, len, KMSG_FMT_COLOR),
		     KMSG_EINVAL);
	cr_assert_eq(kmsg_json_escape(NULL, 10, "x", 1, 0), KMSG_EINVAL);
}

Test(format, text_escape_writes_what_the_short_output_writes)
{
	static const char text[] = "a\tb\nc\x01\x1b[31m\x7f\xff\xc2\x9b\xe2\x80\xae\xc3\xa9\0z";
	const size_t len = sizeof(text) - 1;
	char buf[KMSG_TEXT_ESCAPE_SIZE(sizeof(text))];
	const char *out;
	struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *f;
	struct kmsg_record r = { .text = text, .text_len = len, .facility = 1, .level = 6 };
	int n = kmsg_text_escape(buf, sizeof(buf), text, len, 0);
	const char *want = "a\tb\nc\\x01\\x1b[31m\\x7f\\xff\\xc2\\x9b\\xe2\\x80\\xae\xc3\xa9\\x00z";

	cr_assert_eq(n, (int)strlen(want));
	cr_assert_str_eq(buf, want);
	/* the same bytes as the short output of -t gives the text, whose
	 * continuation line is not indented without a time */
	o.time = KMSG_TIME_NOTIME;
	cr_assert_eq(kmsg_fmt_new(&f, &o), 0);
	n = kmsg_fmt_record(&out, f, &r);
	cr_assert_eq(n, (int)strlen(want) + 1);
	cr_assert(memcmp(out, want, strlen(want)) == 0 && out[n - 1] == '\n');
	kmsg_fmt_free(f);
	n = kmsg_text_escape(buf, sizeof(buf), text, len, KMSG_FMT_ASCII);
	cr_assert_str_eq(buf, "a\tb\nc\\x01\\x1b[31m\\x7f\\xff\\xc2\\x9b\\xe2\\x80\\xae"
			 "\\xc3\\xa9\\x00z");
	n = kmsg_text_escape(buf, sizeof(buf), text, len, KMSG_FMT_NOESCAPE);
	cr_assert_eq(n, (int)len);
	cr_assert(memcmp(buf, text, len) == 0);
	cr_assert_eq(kmsg_text_escape(buf, sizeof(buf), NULL, 0, 0), 0);
	cr_assert_str_eq(buf, "");
	cr_assert_eq(kmsg_text_escape(buf, KMSG_TEXT_ESCAPE_SIZE(len) - 1, text, len, 0),
		     KMSG_EINVAL, "a buffer too small for the worst case");
	cr_assert_eq(kmsg_text_escape(buf, sizeof(buf), text, len, KMSG_FMT_COLOR),
		     KMSG_EINVAL);
	cr_assert_eq(kmsg_text_escape(NULL, 10, "x", 1, 0), KMSG_EINVAL);
}

/* ------------------------------------------------------------------ */
/* JSON record objects                                                 */

Test(format, json_record_has_every_member_then_the_fields_by_key)
{
	struct kmsg_record r = rec_with_fields("usb 1-1: caf\xc3\xa9");

	r.seq = 18446744073709551615u;
	r.seq_id = 0x0123456789abcdefu;
	r.boot_id = 0xfedcba9876543210u;
	r.real_ns = -1; /* before 1970: the date is floored, not truncated */
	r.pid = 4321;
	ASSERT_FMT("{\"seq\":18446744073709551615,\"seq_id\":\"0123456789abcdef\","
		   "\"time_ns\":-1,\"time\":\"1969-12-31T23:59:59.999999999Z\","
		   "\"boot_ns\":1234567890,\"boot_id\":\"fedcba9876543210\","
		   "\"claimed_pid\":4321,\"caller\":null,\"facility\":3,"
		   "\"facility_name\":\"daemon\",\"level\":6,\"level_name\":\"info\","
		   "\"text\":\"usb 1-1: caf\xc3\xa9\",\"DEVICE\":\"c189:1\","
		   "\"SUBSYSTEM\":\"usb\",\"WEIRD\":\"a\\nb\\tc\\u001b\\\\ \xc3\xa9\"}\n",
		   KMSG_OUT_JSON_LINE, KMSG_TIME_CTIME,
		   KMSG_FMT_COLOR | KMSG_FMT_DECODE | KMSG_FMT_FIELDS, &r);
}

Test(format, json_record_forms)
{
	static const char *const kv[] = { "K=2", "A=x", "K=1\x80" };
	struct kmsg_record r = mkrec(1, 5, 2 * NS, 1715513221 * NS + 5, "a\xff");
	unsigned char area[64];
	size_t n = 0;

	for (size_t i = 0; i < sizeof(kv) / sizeof(kv[0]); i++)
		n = add_field(area, n, kv[i], strlen(kv[i]));
	r.fields = area;
	r.fields_len = n;
	r.caller = 7;
	ASSERT_FMT("{\n"
		   "    \"seq\": 0,\n"
		   "    \"seq_id\": null,\n"
		   "    \"time_ns\": 1715513221000000005,\n"
		   "    \"time\": \"2024-05-12T11:27:01.000000005Z\",\n"
		   "    \"boot_ns\": 2000000000,\n"
		   "    \"boot_id\": null,\n"
		   "    \"claimed_pid\": null,\n"
		   "    \"caller\": 7,\n"
		   "    \"facility\": 1,\n"
		   "    \"facility_name\": \"user\",\n"
		   "    \"level\": 5,\n"
		   "    \"level_name\": \"notice\",\n"
		   "    \"text\": [97,255],\n"
		   "    \"A\": \"x\",\n"
		   "    \"K\": [\"2\", [49,128]]\n"
		   "}\n", KMSG_OUT_JSON_PRETTY, KMSG_TIME_MONO, 0, &r);
	r.facility = KMSG_NFACILITIES; /* text that named no priority */
	r.fields_len = 0;
	ASSERT_FMT("\x1e{\"seq\":0,\"seq_id\":null,\"time_ns\":1715513221000000005,"
		   "\"time\":\"2024-05-12T11:27:01.000000005Z\",\"boot_ns\":2000000000,"
		   "\"boot_id\":null,\"claimed_pid\":null,\"caller\":7,\"facility\":null,"
		   "\"facility_name\":null,\"level\":null,\"level_name\":null,"
		   "\"text\":[97,255]}\n", KMSG_OUT_JSON_SEQ, KMSG_TIME_MONO, 0, &r);
}

Test(format, json_record_keys_are_limited)
{
	struct kmsg_record r = rec_with_fields("t");
	struct kmsg_fmt *f = fmt_new(KMSG_OUT_JSON_LINE, KMSG_TIME_MONO, 0);
	struct buf b = { 0 };
	const char *out;

	cr_assert_eq(kmsg_fmt_set_keys(f, "WEIRD,level,NONE,seq"), 0);
	render(&b, f, &r);
	cr_assert_str_eq(b.p, "{\"seq\":0,\"level\":6,\"WEIRD\":\"a\\nb\\tc\\u001b\\\\ \xc3\xa9\"}\n");
	/* a bad list leaves the keys as they were */
	cr_assert_eq(kmsg_fmt_set_keys(f, "seq,bogus"), KMSG_EINVAL);
	cr_assert_eq(kmsg_fmt_set_keys(f, ""), KMSG_EINVAL);
	cr_assert_eq(kmsg_fmt_set_keys(f, "seq,"), KMSG_EINVAL);
	b.len = 0;
	render(&b, f, &r);
	cr_assert_str_eq(b.p, "{\"seq\":0,\"level\":6,\"WEIRD\":\"a\\nb\\tc\\u001b\\\\ \xc3\xa9\"}\n");
	cr_assert_eq(kmsg_fmt_set_keys(f, "NONE"), 0);
	b.len = 0;
	render(&b, f, &r);
	cr_assert_str_eq(b.p, "{}\n");
	cr_assert_eq(kmsg_fmt_set_keys(f, NULL), 0);
	cr_assert_eq(kmsg_fmt_record(&out, f, &r) > 200, 1);
	cr_assert_eq(kmsg_fmt_end(&out, f), 0);
	cr_assert_eq(kmsg_fmt_set_keys(NULL, "seq"), KMSG_EINVAL);
	buf_free(&b);
	kmsg_fmt_free(f);
}

/*
 * A time alone, as stat and programs show one (kmsg_fmt_time): the same
 * bytes as in a record's line, in a POSIX TZ string's zone (no tzdata
 * needed) and in UTC.
 */
Test(format, a_time_alone_in_each_wall_clock_format)
{
	static const struct { enum kmsg_time_format tf; unsigned flags; const char *want; } cases[] = {
		{ KMSG_TIME_SHORT_ISO, 0, "2024-05-12T11:27:01+02:00" },
		{ KMSG_TIME_SHORT_ISO_PRECISE, 0, "2024-05-12T11:27:01.234567+02:00" },
		{ KMSG_TIME_ISO, 0, "2024-05-12T11:27:01,234567+02:00" },
		{ KMSG_TIME_CTIME, 0, "Sun May 12 11:27:01 2024" },
		{ KMSG_TIME_SHORT_PRECISE, 0, "May 12 11:27:01.234567" },
		{ KMSG_TIME_SHORT_UNIX, 0, "1715506021.234567" },
		{ KMSG_TIME_SHORT_ISO, KMSG_FMT_UTC, "2024-05-12T09:27:01+00:00" },
		{ KMSG_TIME_CTIME, KMSG_FMT_UTC, "Sun May 12 09:27:01 2024" },
	};
	/* 2024-05-12 09:27:01.234567891 UTC */
	int64_t ns = INT64_C(1715506021) * 1000000000 + 234567891;
	char buf[48];

	set_tz("CET-1CEST,M3.5.0,M10.5.0/3");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int n = kmsg_fmt_time(buf, sizeof(buf), ns, cases[i].tf, cases[i].flags);

		cr_assert_eq(n, (int)strlen(cases[i].want), "case %zu: %d", i, n);
		cr_assert_str_eq(buf, cases[i].want);
	}
	cr_assert_eq(kmsg_fmt_time(buf, 25, ns, KMSG_TIME_SHORT_ISO, 0), KMSG_EINVAL,
		     "no room for the NUL");
	cr_assert_eq(kmsg_fmt_time(buf, 26, ns, KMSG_TIME_SHORT_ISO, 0), 25);
	cr_assert_eq(kmsg_fmt_time(buf, sizeof(buf), ns, KMSG_TIME_MONO, 0), KMSG_EINVAL,
		     "a time since boot is not a wall-clock time");
	cr_assert_eq(kmsg_fmt_time(buf, sizeof(buf), ns, KMSG_TIME_ISO, KMSG_FMT_DECODE),
		     KMSG_EINVAL);
	/* before 1970: the second is floored, the fraction counts up */
	set_tz("UTC0");
	cr_assert_eq(kmsg_fmt_time(buf, sizeof(buf), -1, KMSG_TIME_SHORT_ISO_PRECISE, 0), 32);
	cr_assert_str_eq(buf, "1969-12-31T23:59:59.999999+00:00");
}

/* The parsers fill a record of a later header as one of theirs, zeros
 * after it (kmsg.h, "Structs that grow"). */
Test(format, parsers_fill_a_later_record_and_zero_the_rest)
{
	struct { struct kmsg_record r; uint64_t added[2]; } later;
	struct kmsg_record rec;
	static const char line[] = "<6>[    1.500000] usb 1-1: new device";
	struct kmsg_devkmsg *p;

	memset(&later, 0xaa, sizeof(later));
	cr_assert_eq(kmsg_dmesg_parse(&rec, line, sizeof(line) - 1, 0), 1);
	cr_assert_eq(kmsg_dmesg_parse_sized(&later.r, sizeof(later), line, sizeof(line) - 1,
					    0, 0), 1);
	cr_assert(later.r.level == rec.level && later.r.facility == rec.facility &&
		  later.r.boot_ns == rec.boot_ns && later.r.text_len == rec.text_len &&
		  later.r.text == rec.text);
	cr_assert(later.added[0] == 0 && later.added[1] == 0);

	memset(&later, 0xaa, sizeof(later));
	cr_assert_eq(kmsg_devkmsg_new(&p, 0), 0);
	cr_assert_eq(kmsg_devkmsg_feed_sized(&later.r, sizeof(later), p, "6,1,5,-;hello", 13), 0);
	cr_assert_eq(kmsg_devkmsg_end_sized(&later.r, sizeof(later), p), 1);
	cr_assert(later.r.seq == 1 && later.r.text_len == 5 &&
		  memcmp(later.r.text, "hello", 5) == 0);
	cr_assert(later.added[0] == 0 && later.added[1] == 0);
	cr_assert_eq(kmsg_dmesg_parse_sized(&rec, 16, line, sizeof(line) - 1, 0, 0),
		     KMSG_EINVAL, "a size below the first version's is refused");
	kmsg_devkmsg_free(p);
}
