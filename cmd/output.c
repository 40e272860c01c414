/*
 * output.c - what kmsg read and kmsg follow share: dmesg's format and
 * filter options, the filter itself, telling a log from a dump or dmesg
 * text, and writing rendered records to standard output fast.
 *
 * Records are rendered by libkmsg (kmsg_fmt_record(), byte for byte what
 * util-linux dmesg prints) into one large buffer written with write(2)
 * when it fills: a record costs a memcpy, not a stdio call, which keeps
 * kmsg read near the speed of cat.  The options follow util-linux 2.38's
 * dmesg: the last time format given wins, -d then turns it into its delta
 * form, and -r cannot be mixed with the options that change a line.
 */
#define _GNU_SOURCE
#include "output.h"
#include "grep.h"
#include "matches.h"
#include "colors.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Large enough that writing costs nothing next to rendering. */
#define OUT_BUF_SIZE (1u << 20)

#define NS_PER_SEC INT64_C(1000000000)

enum {
	OPT_CTIME = 1, OPT_RELTIME, OPT_DELTA, OPT_NOTIME, OPT_TIMEFMT,
	OPT_RAW, OPT_DECODE, OPT_JSON, OPT_OUTPUT, OPT_NOESCAPE, OPT_FIELDS,
	OPT_COLOR, OPT_HUMAN, OPT_NOPAGER, OPT_LEVEL, OPT_FACILITY,
	OPT_KERNEL, OPT_USER, OPT_SINCE, OPT_UNTIL, OPT_MATCH, OPT_QUIET,
	OPT_OUTPUT_FIELDS, OPT_SHOW_CALLER, OPT_SHOW_PID, OPT_FORCE_PREFIX, OPT_UTC,
};

enum color_mode { COLOR_AUTO, COLOR_ALWAYS, COLOR_NEVER };

/* What the options asked for, as the callback saw them, in order. */
static struct {
	int time;            /* enum kmsg_time_format */
	int delta, raw, decode, noescape, fields, human, nopager, quiet;
	int show_caller, show_pid;
	int force_prefix, utc;
	const char *short_name; /* the -o that set a journalctl time, for -d */
	enum kmsg_output output;
	enum color_mode color;
	int color_given;
	uint32_t levels, facilities;
	int flt_lev, flt_fac;
	int have_since, have_until;
	int64_t since, until;
	char **match;
	size_t nmatch;
	char *output_fields;  /* --output-fields, for the JSON records */
	const char *conflict; /* an option -r cannot be used with */
	char err[300];        /* the first bad option, for out_setup() */
} args = {
	.time = KMSG_TIME_MONO,
	.output = KMSG_OUT_SHORT,
};

static void bad(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keeps the first error an option gave, for out_setup() to report. */
static void bad(const char *fmt, ...)
{
	va_list ap;

	if (args.err[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(args.err, sizeof(args.err), fmt, ap);
	va_end(ap);
}

/*
 * Adds a comma-separated list of facility or level names (or numbers) to
 * *bits.  For levels "err+" also takes every more severe level and "+err"
 * every less severe one (util-linux 2.39's ranges).  Returns 0 or -1.
 */
static int parse_list(uint32_t *bits, const char *list, int levels)
{
	const char *p = list;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int lower = 0, higher = 0, v, i;

		if (levels && len > 1 && p[len - 1] == '+') {
			lower = 1;
			len--;
		} else if (levels && len > 1 && p[0] == '+') {
			higher = 1;
			p++;
			len--;
		}
		if (len == 0)
			return -1;
		v = levels ? kmsg_level_parse(p, len) : kmsg_facility_parse(p, len);
		if (v < 0)
			return -1;
		*bits |= UINT32_C(1) << v;
		for (i = 0; lower && i < v; i++)
			*bits |= UINT32_C(1) << i;
		for (i = v + 1; higher && i < 8; i++)
			*bits |= UINT32_C(1) << i;
		if (!end)
			return 0;
		p = end + 1;
	}
}

/* Keeps a --match KEY=VALUE; the key must be one a field can have. */
static void add_match(const char *arg)
{
	const char *eq = strchr(arg, '=');
	char **m;

	if (eq == NULL || !kmsg_key_valid(arg, (size_t)(eq - arg))) {
		bad("--match %s: not KEY=VALUE with a key of A-Z, 0-9 and _", arg);
		return;
	}
	m = realloc(args.match, (args.nmatch + 1) * sizeof(*m));
	if (m == NULL || (m[args.nmatch] = strdup(arg)) == NULL) {
		if (m)
			args.match = m;
		bad("%s", "out of memory");
		return;
	}
	args.match = m;
	args.nmatch++;
}

/* journalctl's short outputs: the time of a dmesg line in their forms */
static const struct { const char *name; int time; } short_outputs[] = {
	{ "short-iso", KMSG_TIME_SHORT_ISO },
	{ "short-iso-precise", KMSG_TIME_SHORT_ISO_PRECISE },
	{ "short-precise", KMSG_TIME_SHORT_PRECISE },
	{ "short-monotonic", KMSG_TIME_MONO },
	{ "short-unix", KMSG_TIME_SHORT_UNIX },
	{ "cat", KMSG_TIME_NOTIME },
};

static void set_output(const char *arg)
{
	for (size_t i = 0; i < sizeof(short_outputs) / sizeof(short_outputs[0]); i++) {
		if (!strcmp(arg, short_outputs[i].name)) {
			args.output = KMSG_OUT_SHORT;
			args.raw = 0;
			args.time = short_outputs[i].time;
			args.short_name = short_outputs[i].name;
			return;
		}
	}
	if (!strcmp(arg, "short")) {
		args.output = KMSG_OUT_SHORT;
		args.raw = 0;
	} else if (!strcmp(arg, "raw")) {
		args.output = KMSG_OUT_SHORT;
		args.raw = 1;
	} else if (!strcmp(arg, "json")) {
		args.output = KMSG_OUT_JSON_LINE;
	} else if (!strcmp(arg, "json-pretty")) {
		args.output = KMSG_OUT_JSON_PRETTY;
	} else if (!strcmp(arg, "json-seq")) {
		args.output = KMSG_OUT_JSON_SEQ;
	} else if (!strcmp(arg, "kmsg")) {
		args.output = KMSG_OUT_KMSG;
	} else {
		bad("--output %s: not one of short, raw, json, json-pretty, json-seq, kmsg, "
		    "short-iso, short-iso-precise, short-precise, short-monotonic, "
		    "short-unix, cat", arg);
	}
}

static void set_time_format(const char *arg)
{
	static const struct { const char *name; int time; } names[] = {
		{ "delta", KMSG_TIME_DELTA }, { "reltime", KMSG_TIME_RELTIME },
		{ "ctime", KMSG_TIME_CTIME }, { "notime", KMSG_TIME_NOTIME },
		{ "iso", KMSG_TIME_ISO },
		/* dmesg 2.41: "raw" is the default seconds since boot */
		{ "raw", KMSG_TIME_MONO },
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i].name)) {
			args.time = names[i].time;
			return;
		}
	}
	bad("--time-format %s: not one of delta, reltime, ctime, notime, iso, raw", arg);
}

/*
 * popt calls this for each option of output_options as it comes, so the
 * order of time formats is kept; errors are kept for out_setup().
 */
static void on_option(poptContext con, enum poptCallbackReason reason,
		      const struct poptOption *opt, const char *arg,
		      const void *data)
{
	(void)con;
	(void)data;
	if (reason != POPT_CALLBACK_REASON_OPTION)
		return;
	switch (opt->val) {
	case OPT_CTIME:
		args.time = KMSG_TIME_CTIME;
		args.conflict = "--ctime";
		break;
	case OPT_RELTIME:
		args.time = KMSG_TIME_RELTIME;
		args.conflict = "--reltime";
		break;
	case OPT_DELTA:
		args.delta = 1;
		args.conflict = "--show-delta";
		break;
	case OPT_NOTIME:
		args.time = KMSG_TIME_NOTIME;
		args.conflict = "--notime";
		break;
	case OPT_TIMEFMT:
		set_time_format(arg);
		break;
	case OPT_RAW:
		args.raw = 1;
		break;
	case OPT_DECODE:
		args.decode = 1;
		args.conflict = "--decode";
		break;
	case OPT_JSON:
		args.output = KMSG_OUT_JSON;
		break;
	case OPT_OUTPUT:
		set_output(arg);
		break;
	case OPT_OUTPUT_FIELDS:
		/* popt frees arg when it reads the next option */
		free(args.output_fields);
		args.output_fields = strdup(arg);
		if (args.output_fields == NULL)
			bad("%s", "out of memory");
		break;
	case OPT_NOESCAPE:
		args.noescape = 1;
		break;
	case OPT_FIELDS:
		args.fields = 1;
		break;
	case OPT_FORCE_PREFIX:
		args.force_prefix = 1;
		break;
	case OPT_UTC:
		args.utc = 1;
		break;
	case OPT_COLOR:
		args.color_given = 1;
		args.conflict = "--color";
		if (arg == NULL || !strcmp(arg, "auto"))
			args.color = COLOR_AUTO;
		else if (!strcmp(arg, "always"))
			args.color = COLOR_ALWAYS;
		else if (!strcmp(arg, "never"))
			args.color = COLOR_NEVER;
		else
			bad("--color %s: not one of auto, always, never", arg);
		break;
	case OPT_HUMAN:
		args.human = 1;
		args.time = KMSG_TIME_RELTIME;
		args.conflict = "--human";
		break;
	case OPT_QUIET:
		args.quiet = 1;
		break;
	case OPT_SHOW_CALLER:
		args.show_caller = 1;
		break;
	case OPT_SHOW_PID:
		args.show_pid = 1;
		break;
	case OPT_NOPAGER:
		args.nopager = 1;
		break;
	case OPT_LEVEL:
		args.flt_lev = 1;
		if (parse_list(&args.levels, arg, 1) < 0)
			bad("--level %s: not a list of levels (emerg, alert, crit, "
			    "err, warn, notice, info, debug; err+ or +err for ranges)", arg);
		break;
	case OPT_FACILITY:
		args.flt_fac = 1;
		if (parse_list(&args.facilities, arg, 0) < 0)
			bad("--facility %s: not a list of facilities (kern, user, "
			    "mail, daemon, auth, syslog, lpr, news, uucp, cron, "
			    "authpriv, ftp, local0..local7)", arg);
		break;
	case OPT_KERNEL:
		args.flt_fac = 1;
		args.facilities |= 1;
		break;
	case OPT_USER:
		args.flt_fac = 1;
		args.facilities |= ((UINT32_C(1) << KMSG_NFACILITIES) - 1) & ~UINT32_C(1);
		break;
	case OPT_SINCE:
		args.have_since = 1;
		if (parse_when(&args.since, arg) < 0)
			bad("--since %s: not a time (as \"2024-05-12 11:27:01\", "
			    "\"yesterday\", \"-10min\")", arg);
		break;
	case OPT_UNTIL:
		args.have_until = 1;
		if (parse_when(&args.until, arg) < 0)
			bad("--until %s: not a time (as \"2024-05-12 11:27:01\", "
			    "\"today\", \"-1h\")", arg);
		break;
	case OPT_MATCH:
		add_match(arg);
		break;
	}
}

const struct poptOption output_options[] = {
	{ NULL, '\0', POPT_ARG_CALLBACK, (void *)on_option, 0, NULL, NULL },
	{ "ctime", 'T', POPT_ARG_NONE, NULL, OPT_CTIME,
	  "human-readable wall-clock time stamps", NULL },
	{ "reltime", 'e', POPT_ARG_NONE, NULL, OPT_RELTIME,
	  "local time and time delta in readable form", NULL },
	{ "show-delta", 'd', POPT_ARG_NONE, NULL, OPT_DELTA,
	  "time since the previous record shown", NULL },
	{ "notime", 't', POPT_ARG_NONE, NULL, OPT_NOTIME,
	  "no time stamps", NULL },
	{ "time-format", '\0', POPT_ARG_STRING, NULL, OPT_TIMEFMT,
	  "time stamps: delta, reltime, ctime, notime, iso or raw", "FORMAT" },
	{ "raw", 'r', POPT_ARG_NONE, NULL, OPT_RAW,
	  "dmesg -r lines: <N>[seconds] text", NULL },
	{ "decode", 'x', POPT_ARG_NONE, NULL, OPT_DECODE,
	  "facility and level as names", NULL },
	{ "json", 'J', POPT_ARG_NONE, NULL, OPT_JSON,
	  "JSON, as dmesg -J", NULL },
	{ "output", 'o', POPT_ARG_STRING, NULL, OPT_OUTPUT,
	  "short, raw, json (an object a line, every member and field), "
	  "json-pretty, json-seq (RFC 7464), kmsg (the /dev/kmsg format); "
	  "journalctl's short-iso, short-iso-precise, short-precise, "
	  "short-monotonic, short-unix, cat",
	  "FORMAT" },
	{ "utc", '\0', POPT_ARG_NONE, NULL, OPT_UTC,
	  "wall-clock times in UTC (-T, -e, iso, short-iso, short-precise)", NULL },
	{ "output-fields", '\0', POPT_ARG_STRING, NULL, OPT_OUTPUT_FIELDS,
	  "only these members and fields in -o json, json-pretty, json-seq",
	  "KEY,..." },
	{ "noescape", '\0', POPT_ARG_NONE, NULL, OPT_NOESCAPE,
	  "print unprintable bytes as they are (unsafe on a terminal)", NULL },
	{ "force-prefix", 'p', POPT_ARG_NONE, NULL, OPT_FORCE_PREFIX,
	  "the time and decoding on each line of a message of several lines",
	  NULL },
	{ "fields", '\0', POPT_ARG_NONE, NULL, OPT_FIELDS,
	  "show each record's KEY=value fields under its line", NULL },
	{ "color", 'L', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_COLOR,
	  "colour: auto (on a terminal unless NO_COLOR is set), always or never",
	  "WHEN" },
	{ "level", 'l', POPT_ARG_STRING, NULL, OPT_LEVEL,
	  "only these levels (err+: err and more severe; +err: err and less)",
	  "LIST" },
	{ "facility", 'f', POPT_ARG_STRING, NULL, OPT_FACILITY,
	  "only these facilities", "LIST" },
	{ "kernel", 'k', POPT_ARG_NONE, NULL, OPT_KERNEL,
	  "only kernel (kern) records", NULL },
	{ "userspace", 'u', POPT_ARG_NONE, NULL, OPT_USER,
	  "only records of other facilities than kern", NULL },
	{ "since", '\0', POPT_ARG_STRING, NULL, OPT_SINCE,
	  "only records written at or after TIME", "TIME" },
	{ "until", '\0', POPT_ARG_STRING, NULL, OPT_UNTIL,
	  "only records written at or before TIME", "TIME" },
	{ "match", '\0', POPT_ARG_STRING, NULL, OPT_MATCH,
	  "only records with this field (repeat: all must match)", "KEY=VALUE" },
	{ "show-caller", '\0', POPT_ARG_NONE, NULL, OPT_SHOW_CALLER,
	  "who wrote each record: dmesg 2.40's caller column (T123, a thread) "
	  "and -J key", NULL },
	{ "show-pid", '\0', POPT_ARG_NONE, NULL, OPT_SHOW_PID,
	  "the process that wrote each record: a column (P456) and -J key",
	  NULL },
	{ "quiet", 'q', POPT_ARG_NONE, NULL, OPT_QUIET,
	  "no \"-- Boot ID --\" line where the records of another boot begin", NULL },
	POPT_TABLEEND
};

/* read's -H and -P: only read pages its output. */
const struct poptOption output_pager_options[] = {
	{ NULL, '\0', POPT_ARG_CALLBACK, (void *)on_option, 0, NULL, NULL },
	{ "human", 'H', POPT_ARG_NONE, NULL, OPT_HUMAN,
	  "human-readable output: reltime, colour and a pager", NULL },
	{ "nopager", 'P', POPT_ARG_NONE, NULL, OPT_NOPAGER,
	  "do not pipe the output into a pager", NULL },
	POPT_TABLEEND
};

/* follow's -H: the same without a pager, which a follower never has. */
const struct poptOption output_human_options[] = {
	{ NULL, '\0', POPT_ARG_CALLBACK, (void *)on_option, 0, NULL, NULL },
	{ "human", 'H', POPT_ARG_NONE, NULL, OPT_HUMAN,
	  "human-readable output: reltime and colour", NULL },
	POPT_TABLEEND
};

/* ------------------------------------------------------------------ */
/* Telling files apart                                                 */

static const char log_magic[8] = "KMSGRNG\x1a";

/*
 * Bytes plain text has next to none of, dmesg's included (dmesg -r
 * escapes its own): NUL and the C0 controls but backspace, tab, newline,
 * VT, FF, CR and ESC (colours).  Random bytes are 1 in 10 of them, an
 * executable mostly NULs; a message with a NUL in it is not binary.
 */
static const unsigned char odd_byte[256] = {
	[0x00 ... 0x07] = 1, [0x0e ... 0x1a] = 1, [0x1c ... 0x1f] = 1,
};

/*
 * NULL if the block (n bytes, bad of them odd, nul of them NUL) is text:
 * not all NUL, and no more than 1 in 16 odd bytes (of at least 256, so
 * that a short text with a stray NUL passes).  Else what it looks like,
 * by its magic if it is the input's first block.
 */
static const char *block_binary(const unsigned char *p, size_t n, size_t bad,
				size_t nul, int first)
{
	if (n == 0 || (nul < n && bad * 16 <= (n > 256 ? n : 256)))
		return NULL;
	if (nul == n)
		return "holds only NUL bytes";
	if (!first)
		return "is binary data";
	if (n >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
		return "is an ELF binary";
	if (n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0)
		return "is xz-compressed (decompress it first)";
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return "is zstd-compressed (decompress it first)";
	if (n >= 10 && memcmp(p, "BZh", 3) == 0 && memcmp(p + 4, "1AY&SY", 6) == 0)
		return "is bzip2-compressed (decompress it first)";
	return "is binary data";
}

static const char *first_block_binary(const unsigned char *p, size_t n)
{
	size_t bad = 0, nul = 0;

	for (size_t i = 0; i < n; i++) {
		bad += odd_byte[p[i]];
		nul += p[i] == 0;
	}
	return block_binary(p, n, bad, nul, 1);
}

/* n bytes from fd (at off, or where it is if off < 0), fewer at its end. */
static ssize_t read_full(int fd, unsigned char *p, size_t n, off_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = off < 0 ? read(fd, p + got, n - got)
				    : pread(fd, p + got, n - got, off + (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* A regular file whose last 128 bytes begin as a log header's copy does. */
static int backup_magic(int fd, const struct stat *st)
{
	unsigned char m[8];

	return st->st_size >= 4096 && st->st_size % 4096 == 0 &&
	       read_full(fd, m, 8, st->st_size - 128) == 8 && memcmp(m, log_magic, 8) == 0;
}

int src_open(struct src *s, const char *path)
{
	unsigned char first[SRC_BLOCK];
	struct stat st;
	ssize_t n;

	int is_stdin = strcmp(path, "-") == 0;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->name = path;
	if (is_stdin) {
		s->name = "standard input";
		if (isatty(STDIN_FILENO))
			return -ENOTTY;
		/* "<&-": what would be read is /dev/null's nothing, which
		 * must not pass for an empty input */
		if (cli_stdin_closed())
			return -EBADF;
		s->fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		s->fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	/* A regular file is looked at in place; anything else, and standard
	 * input (read from where it is), only by taking its first bytes,
	 * which src_read() then hands back. */
	s->stream = is_stdin || !S_ISREG(st.st_mode);
	n = read_full(s->fd, s->stream ? s->head : first, SRC_BLOCK,
		      s->stream ? -1 : 0);
	if (n < 0) {
		errno = (int)-n;
		goto fail;
	}
	if (s->stream)
		s->head_len = (size_t)n;
	else
		memcpy(s->head, first, (size_t)n); /* looked at, not handed back */
	if (n >= 8 && memcmp(s->head, log_magic, 8) == 0)
		s->kind = SRC_LOG;
	else if (!s->stream && backup_magic(s->fd, &st))
		s->kind = SRC_LOG;  /* its first page torn: the library reads the copy */
	else if (n >= 2 && s->head[0] == 0x1f && s->head[1] == 0x8b)
		s->kind = SRC_DUMP;
	else if ((s->what = first_block_binary(s->head, (size_t)n)) != NULL)
		s->kind = SRC_BINARY;
	else
		s->kind = SRC_TEXT;
	return 0;
fail:
	n = -errno;
	src_close(s);
	return (int)n;
}

/*
 * Adds n bytes (0: the input's end) to the text check; -EILSEQ when a
 * block is binary, s->blk_start then where it starts.
 */
static int check_text(struct src *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (;;) {
		size_t take = SRC_BLOCK - s->blk_len;

		if (take > n - i)
			take = n - i;
		for (size_t end = i + take; i < end; i++) {
			s->blk_bad += odd_byte[p[i]];
			s->blk_nul += p[i] == 0;
		}
		s->blk_len += take;
		/* a block is judged when full, or at the input's end */
		if (s->blk_len == 0 || (s->blk_len < SRC_BLOCK && n > 0))
			return 0;
		s->what = block_binary(p, s->blk_len, s->blk_bad, s->blk_nul, 0);
		if (s->what != NULL)
			return -EILSEQ;
		s->blk_start += s->blk_len;
		s->blk_len = s->blk_bad = s->blk_nul = 0;
		if (i == n)
			return 0;
	}
}

/* At the end of a regular file: whether it is shorter now than where the
 * reading got to (cut short while read), its size then in s->shrunk_to. */
static int src_shrunk(struct src *s)
{
	struct stat st;
	off_t at = lseek(s->fd, 0, SEEK_CUR);

	if (at < 0 || fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= at)
		return 0;
	s->shrunk_to = (uint64_t)st.st_size;
	s->shrunk_at = (uint64_t)at;
	return 1;
}

ssize_t src_read(struct src *s, void *buf, size_t n)
{
	ssize_t k;
	int rc;

	if (s->head_pos < s->head_len) {
		k = (ssize_t)(s->head_len - s->head_pos < n ? s->head_len - s->head_pos : n);
		memcpy(buf, s->head + s->head_pos, (size_t)k);
		s->head_pos += (size_t)k;
	} else {
		do
			k = read(s->fd, buf, n);
		while (k < 0 && errno == EINTR);
		if (k < 0)
			return -errno;
		if (k == 0 && n > 0 && src_shrunk(s))
			return -ESTALE;
	}
	if (s->binary)
		return -EILSEQ;
	if (s->kind == SRC_TEXT && (rc = check_text(s, buf, (size_t)k)) < 0) {
		/* what comes before the binary block is still text */
		s->binary = 1;
		if (s->blk_start <= s->off)
			return rc;
		k = (ssize_t)(s->blk_start - s->off);
	}
	s->off += (uint64_t)k;
	return k;
}

const char *src_strerror(int rc)
{
	if (rc == -EBADF && cli_stdin_closed())
		return "is closed (\"<&-\"): give the input on a pipe or with <FILE";
	return strerror(-rc);
}

void src_read_error(const struct src *s, ssize_t rc, const char *kind)
{
	if (rc == -EILSEQ)
		cli_error(s->name, "%s from byte %llu on, not %s: stopped there", s->what,
			  (unsigned long long)s->blk_start, kind);
	else if (rc == -ESTALE && s->shrunk_at > 0)
		cli_error(s->name, "cut short to %llu bytes while it was read, at byte "
			  "%llu: what was in the rest is lost (read a copy the writer "
			  "leaves alone)", (unsigned long long)s->shrunk_to,
			  (unsigned long long)s->shrunk_at);
	else
		cli_error(s->name, "%s", strerror((int)-rc));
}

int src_detect(const char *path)
{
	struct src s;
	int rc, kind;

	/* A pipe (-F -, -F /dev/stdin) can only be looked at by taking its
	 * bytes, which would then be lost to the reading proper. */
	struct stat st;

	if (strcmp(path, "-") == 0)
		return SRC_TEXT;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return SRC_TEXT;
	rc = src_open(&s, path);
	kind = s.kind;
	src_close(&s);
	return rc < 0 ? rc : kind;
}

void src_close(struct src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/* Words a libkmsg error about a dump or a log copied from a pipe. */
static void src_lib_error(const struct src *s, int rc)
{
	if (rc == KMSG_ECORRUPT && s->kind == SRC_DUMP)
		cli_error(s->name, "damaged or incomplete dump");
	else if (rc == KMSG_ECORRUPT)
		cli_error(s->name, "a damaged log, or one cut short (its header "
			  "claims more bytes than arrived)");
	else
		cli_lib_error(s->name, rc);
}

struct kmsg_log *src_open_log(struct src *s, unsigned flags)
{
	struct kmsg_log *log = NULL;
	int rc;

	if (s->kind == SRC_LOG && !s->stream)
		return cli_open_log(s->name, flags, NULL);
	/* a dump, or a log arriving on a pipe: into memory, from the bytes
	 * taken to look at it on */
	rc = kmsg_dump_open_fd(&log, s->fd, s->head + s->head_pos,
			       s->head_len - s->head_pos);
	s->head_pos = s->head_len;
	if (rc < 0) {
		src_lib_error(s, rc);
		return NULL;
	}
	return log;
}

void src_refuse(const struct src *s, const char *takes)
{
	cli_error(s->name, "%s; --file takes %s", s->what, takes);
}
/* ------------------------------------------------------------------ */
/* Times for --since and --until                                       */

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

/* ------------------------------------------------------------------ */
/* Setting up                                                          */

/*
 * Colour for the short output: --color, else a terminal that wants it and
 * has not been told otherwise in terminal-colors.d (tc: scanned here when
 * it decides).
 */
static int want_color(struct term_colors *tc)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	switch (args.color) {
	case COLOR_ALWAYS:
		return 1;
	case COLOR_NEVER:
		return 0;
	case COLOR_AUTO:
		break;
	}
	if (nc && *nc)
		return 0;
	if (!term || !*term || !strcmp(term, "dumb"))
		return 0;
	if (!isatty(STDOUT_FILENO))
		return 0;
	/* dmesg's rule: the files decide only when no option asked for
	 * colour (-L, --color=auto and -H did) */
	if (args.color_given || args.human)
		return 1;
	tc_scan(tc);
	return !tc_disabled(tc);
}

/*
 * Sets o's colours from the terminal-colors.d scheme for kmsg: o keeps
 * the sequences for every renderer it makes.  0 or EXIT_FAIL (out of
 * memory, said).
 */
static int scheme_colors(struct output *o, struct term_colors *tc)
{
	tc_scan(tc);
	if (tc_read_scheme(tc) < 0) {
		cli_error(NULL, "out of memory");
		return EXIT_FAIL;
	}
	for (int i = 0; i < KMSG_COLOR_COUNT; i++) {
		o->colors[i] = tc->seq[i];
		tc->seq[i] = NULL;
	}
	return 0;
}

/*
 * 1 if the user's locale (LC_ALL, LC_CTYPE, LANG) has the UTF-8 charset,
 * as dmesg decides what it may print as it is; a locale that cannot be
 * set is C, for dmesg too.  The tool itself goes on in the C locale.
 */
static int utf8_locale(void)
{
	int utf8 = setlocale(LC_CTYPE, "") != NULL &&
		   strcmp(nl_langinfo(CODESET), "UTF-8") == 0;

	setlocale(LC_CTYPE, "C");
	return utf8;
}

/*
 * The width of the caller column as dmesg 2.40 pads it for the records of
 * /dev/kmsg: the length of /proc/sys/kernel/pid_max's text, its newline
 * counted (so "32768\n" gives 6, "4194304\n" 8: one more than the digits,
 * as dmesg counts), or 11 when it cannot be read (dmesg's default: the
 * digits of INT_MAX and one).
 */
static unsigned pid_max_width(void)
{
	char buf[24];
	ssize_t n = -1;
	int fd = open("/proc/sys/kernel/pid_max", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	if (n <= 0)
		return 11;
	return (unsigned)strnlen(buf, (size_t)n);
}

int out_setup(struct output *o, const char *cmd, int follow, const char *const *words)
{
	struct kmsg_fmt_opts fo = KMSG_FMT_OPTS_INIT;
	struct term_colors tc = { 0 };
	int json_records = args.output == KMSG_OUT_JSON_LINE ||
			   args.output == KMSG_OUT_JSON_PRETTY ||
			   args.output == KMSG_OUT_JSON_SEQ;
	int rc = 0;

	memset(o, 0, sizeof(*o));
	o->saved_out = o->saved_err = -1;
	if (args.err[0])
		return cli_usage_error(cmd, NULL, "%s", args.err);
	if (args.raw && args.output == KMSG_OUT_SHORT && args.conflict)
		return cli_usage_error(cmd, "--raw", "cannot be used with %s", args.conflict);

	fo.output = args.output;
	fo.time = (enum kmsg_time_format)args.time;
	if (args.decode)
		fo.flags |= KMSG_FMT_DECODE;
	if (args.noescape)
		fo.flags |= KMSG_FMT_NOESCAPE;
	/* -J's objects are dmesg's, which has no fields: --fields adds them */
	if (args.fields && args.output == KMSG_OUT_JSON)
		fo.flags |= KMSG_FMT_FIELDS;
	if (args.output == KMSG_OUT_SHORT) {
		if (args.raw) {
			fo.time = KMSG_TIME_RAW;
		} else if (args.delta) {
			/* dmesg 2.38: -d joins -T and the default time,
			 * is ignored with iso, and replaces the others */
			if (fo.time == KMSG_TIME_MONO || fo.time == KMSG_TIME_CTIME)
				fo.flags |= KMSG_FMT_SHOWDELTA;
			else if (fo.time == KMSG_TIME_ISO)
				cli_error("--show-delta", "ignored with the iso time "
					  "format, as dmesg ignores it");
			else if (fo.time >= KMSG_TIME_SHORT_ISO)
				cli_error("--show-delta", "ignored with -o %s",
					  args.short_name);
			else
				fo.time = KMSG_TIME_DELTA;
		}
		if (args.fields)
			fo.flags |= KMSG_FMT_FIELDS;
		if (args.force_prefix)
			fo.flags |= KMSG_FMT_FORCE_PREFIX;
		if (args.utc)
			fo.flags |= KMSG_FMT_UTC;
		if (!args.noescape && !utf8_locale())
			fo.flags |= KMSG_FMT_ASCII;
		/* -r lines are dmesg -r's, which has no colours */
		if (!args.raw && want_color(&tc)) {
			fo.flags |= KMSG_FMT_COLOR;
			rc = scheme_colors(o, &tc);
			for (int i = 0; i < KMSG_COLOR_COUNT; i++)
				fo.colors[i] = o->colors[i];
		}
		tc_free(&tc);
		if (rc != 0)
			return rc;
		o->pager = args.human && !args.nopager && !follow;
	}
	if (json_records && (args.show_caller || args.show_pid))
		return cli_usage_error(cmd, args.show_caller ? "--show-caller" : "--show-pid",
				       "not with -o json, json-pretty or json-seq, whose "
				       "records always have pid and caller");
	if (args.output == KMSG_OUT_KMSG && args.show_pid)
		return cli_usage_error(cmd, "--show-pid", "not with -o kmsg: the "
				       "/dev/kmsg format has no place for a pid");
	if (args.show_caller)
		fo.flags |= KMSG_FMT_CALLER;
	if (args.show_pid)
		fo.flags |= KMSG_FMT_PID;
	if (args.show_caller || args.show_pid)
		fo.caller_width = pid_max_width();
	o->fo = fo;
	o->quiet = args.quiet;
	rc = kmsg_fmt_new(&o->fmt, &fo);
	if (rc < 0) {
		cli_lib_error(NULL, rc);
		return EXIT_FAIL;
	}
	if (args.output_fields) {
		if (!json_records)
			return cli_usage_error(cmd, "--output-fields", "only with -o json, "
					       "json-pretty or json-seq");
		rc = kmsg_fmt_set_keys(o->fmt, args.output_fields);
		if (rc == KMSG_EINVAL)
			return cli_usage_error(cmd, "--output-fields", "'%s': not a list of "
					       "member names (seq, seq_id, time_ns, time, "
					       "boot_ns, boot_id, pid, caller, facility, "
					       "facility_name, level, level_name, text) and "
					       "field keys (A-Z, 0-9 and _)",
					       args.output_fields);
		if (rc < 0) {
			cli_lib_error(NULL, rc);
			return EXIT_FAIL;
		}
	}

	o->levels = args.flt_lev ? args.levels : 0xff;
	o->facilities = args.flt_fac ? args.facilities : UINT32_MAX;
	o->have_since = args.have_since;
	o->since_ns = args.since;
	o->have_until = args.have_until;
	o->until_ns = args.until;
	o->prio_filter = args.flt_lev || args.flt_fac;
	rc = grep_setup(&o->grep, cmd);
	if (rc == 0)
		rc = match_parse(&o->matches, words, (const char *const *)args.match,
				 args.nmatch, cmd);
	if (rc == 0)
		rc = values_setup(&o->values, cmd);
	if (rc != 0)
		return rc;
	if (o->values && args.output != KMSG_OUT_SHORT)
		return cli_usage_error(cmd, "--list-values", "prints one value a line: "
				       "not with -J or -o json, json-pretty, json-seq, kmsg");
	o->filtering = o->prio_filter || o->have_since || o->have_until ||
		       o->matches || o->grep;

	o->cap = OUT_BUF_SIZE;
	o->buf = malloc(o->cap);
	if (o->buf == NULL) {
		cli_error(NULL, "out of memory");
		return EXIT_FAIL;
	}
	return 0;
}

/* A new renderer for o->fo in place of o->fmt (left as it was on
 * failure), with no state of the records before.  0 or -ENOMEM. */
static int renew_fmt(struct output *o)
{
	struct kmsg_fmt *f;
	int rc = kmsg_fmt_new(&f, &o->fo);

	if (rc < 0)
		return rc;
	kmsg_fmt_free(o->fmt);
	o->fmt = f;
	return 0;
}

int out_set_flag(struct output *o, unsigned flag)
{
	/* the other outputs ignore such flags, and keep their keys */
	if (o->fo.output != KMSG_OUT_SHORT)
		return 0;
	o->fo.flags |= flag;
	return renew_fmt(o);
}

int out_text_input(struct output *o)
{
	if (!(o->fo.flags & (KMSG_FMT_CALLER | KMSG_FMT_PID)))
		return 0;
	/* dmesg -F pads the caller to the width of SHRT_MAX's digits */
	o->fo.caller_width = 5;
	return renew_fmt(o);
}

static void pager_end(struct output *o);

void out_free(struct output *o)
{
	pager_end(o);
	kmsg_fmt_free(o->fmt);
	o->fmt = NULL;
	free(o->esc);
	o->esc = NULL;
	o->esc_cap = 0;
	for (int i = 0; i < KMSG_COLOR_COUNT; i++) {
		free(o->colors[i]);
		o->colors[i] = NULL;
	}
	free(o->buf);
	o->buf = NULL;
	grep_free(o->grep);
	o->grep = NULL;
	match_free(o->matches);
	o->matches = NULL;
	values_free(o->values);
	o->values = NULL;
	for (size_t i = 0; i < args.nmatch; i++)
		free(args.match[i]);
	free(args.match);
	args.match = NULL;
	args.nmatch = 0;
}

/* ------------------------------------------------------------------ */
/* Filtering and writing                                               */

int out_match(const struct output *o, const struct kmsg_record *rec)
{
	if (rec->flags & KMSG_GAP)  /* no record, only news of missing ones */
		return 0;
	if (!o->filtering)
		return 1;
	/* as in dmesg, text that named no priority passes no -l or -f */
	if (o->prio_filter &&
	    (rec->level >= 8 || !(o->levels >> rec->level & 1) ||
	     rec->facility >= KMSG_NFACILITIES ||
	     !(o->facilities >> rec->facility & 1)))
		return 0;
	if (o->have_since && rec->real_ns < o->since_ns)
		return 0;
	if (o->have_until && rec->real_ns > o->until_ns)
		return 0;
	if (o->matches && !match_test(o->matches, rec))
		return 0;
	return o->grep == NULL || grep_match(o->grep, rec);
}

int out_flush(struct output *o)
{
	int rc;

	if (o->len == 0)
		return 0;
	rc = cli_write_all(STDOUT_FILENO, o->buf, o->len);
	o->len = 0;
	return rc;
}

/* Appends n bytes to the buffer, writing it out first if they do not fit. */
static int out_put(struct output *o, const char *p, size_t n)
{
	int rc;

	if (o->len + n > o->cap) {
		rc = out_flush(o);
		if (rc < 0)
			return rc;
		if (n > o->cap)
			return cli_write_all(STDOUT_FILENO, p, n);
	}
	memcpy(o->buf + o->len, p, n);
	o->len += n;
	return 0;
}

/*
 * Where the records of another boot begin in the short output: a line
 * that says so (journalctl's), but for -r, whose lines are read back as
 * dmesg text; and a new renderer, so that no delta or reltime difference
 * is taken across the boots (since-boot times of two boots have no
 * common origin).  0 or -errno.
 */
static int new_boot(struct output *o, const struct kmsg_record *rec)
{
	char line[64];
	int rc;

	if (!o->quiet && o->fo.time != KMSG_TIME_RAW) {
		snprintf(line, sizeof(line), "-- Boot %016llx --\n",
			 (unsigned long long)rec->boot_id);
		rc = out_text(o, line);
		if (rc < 0)
			return rc;
	}
	return renew_fmt(o);
}

int out_record(struct output *o, const struct kmsg_record *rec)
{
	const char *text;
	int n;

	if (!out_match(o, rec))
		return 0;
	if (o->values)
		return values_add(o->values, o, rec);
	if (o->fo.output == KMSG_OUT_SHORT && o->have_boot && rec->boot_id != o->last_boot &&
	    (n = new_boot(o, rec)) < 0)
		return n;
	o->have_boot = 1;
	o->last_boot = rec->boot_id;
	n = kmsg_fmt_record(&text, o->fmt, rec);
	if (n < 0)
		return n == KMSG_ECORRUPT ? 0 : n;
	return out_put(o, text, (size_t)n);
}

int out_text(struct output *o, const char *s)
{
	return out_put(o, s, strlen(s));
}

int out_verbatim(struct output *o, const char *p, size_t n, int ends_line)
{
	size_t len = n && p[n - 1] == '\n' ? n - 1 : n;
	size_t need = KMSG_TEXT_ESCAPE_SIZE(len) + 1;
	int rc;

	if (need > o->esc_cap) {
		char *b = realloc(o->esc, need);

		if (b == NULL)
			return -ENOMEM;
		o->esc = b;
		o->esc_cap = need;
	}
	rc = kmsg_text_escape(o->esc, o->esc_cap, p, len,
			      o->fo.flags & (KMSG_FMT_NOESCAPE | KMSG_FMT_ASCII));
	if (rc < 0)
		return rc == KMSG_EINVAL ? -E2BIG : rc;
	/* the line's newline, or one it lacks at the end of the input;
	 * none for a piece of a line that goes on */
	if (ends_line || len < n)
		o->esc[rc++] = '\n';
	return out_put(o, o->esc, (size_t)rc);
}

int out_end(struct output *o)
{
	const char *text;
	int n = kmsg_fmt_end(&text, o->fmt), rc;

	if (n < 0)
		return n;
	rc = out_put(o, text, (size_t)n);
	if (rc == 0)
		rc = out_flush(o);
	return rc;
}

int out_fail(struct output *o, int err)
{
	if (err < 0)
		err = -err;
	if (err == EPIPE) {
		pager_end(o);
		_exit(EXIT_OK);
	}
	pager_end(o);
	if (err == ENOMEM)
		cli_error(NULL, "out of memory");
	else
		cli_error("write error", "%s", strerror(err));
	return EXIT_FAIL;
}

/*
 * One line for what c holds: "N [adj ]record(s) verb before seq S", and
 * its forms for several gaps and for records missing at the end.
 */
static void print_gap(struct gap_count *c, const char *adj, const char *verb,
		      const char *why)
{
	unsigned long long n = (unsigned long long)c->n, s = (unsigned long long)c->last_seq;
	const char *pl = n == 1 ? "" : "s";

	if (!c->n)
		return;
	if (c->at_end && c->gaps == 1 && n == 1)
		fprintf(stderr, "kmsg: 1 %srecord %s at the end, seq %llu%s\n",
			adj, verb, s - 1, why);
	else if (c->at_end && c->gaps == 1)
		fprintf(stderr, "kmsg: %llu %srecords %s at the end, seq %llu to %llu%s\n",
			n, adj, verb, s - n, s - 1, why);
	else if (c->gaps == 1)
		fprintf(stderr, "kmsg: %llu %srecord%s %s before seq %llu%s\n",
			n, adj, pl, verb, s, why);
	else
		fprintf(stderr, "kmsg: %llu %srecords %s in %llu gaps, the last before "
			"seq %llu%s\n", n, adj, verb, (unsigned long long)c->gaps, s, why);
	memset(c, 0, sizeof(*c));
}

int64_t out_gaps_flush(struct output *o, int force)
{
	int64_t now;

	if (!o->held_lost.n && !o->held_unfinished.n && !o->held_damaged.n)
		return 0;
	now = cli_now_ns(CLOCK_MONOTONIC);
	if (now < o->gap_next_ns && !force)
		return o->gap_next_ns;
	/* What came before the gap reaches the terminal before the news. */
	out_flush(o);
	print_gap(&o->held_lost, "", "lost", ": the writers overtook this reader");
	print_gap(&o->held_unfinished, "unfinished ", "skipped",
		  ": the writer died, or was stopped and wrote it again later");
	print_gap(&o->held_damaged, "damaged ", "skipped", "");
	o->gap_next_ns = now + NS_PER_SEC;
	return 0;
}

static void hold_gap(struct gap_count *c, uint64_t n, const struct kmsg_record *rec)
{
	if (!n)
		return;
	c->n += n;
	c->gaps++;
	c->last_seq = rec->seq;
	c->at_end = (rec->flags & KMSG_GAP) != 0;
}

void out_gaps(struct output *o, const struct kmsg_record *rec)
{
	hold_gap(rec->flags & KMSG_UNFINISHED ? &o->held_unfinished : &o->held_lost,
		 rec->lost, rec);
	hold_gap(&o->held_damaged, rec->damaged, rec);
	out_gaps_flush(o, 0);
}

/* ------------------------------------------------------------------ */
/* The pager                                                           */

/* 1 if the first word of cmd names a program that can be run. */
static int have_command(const char *cmd)
{
	char word[PATH_MAX], path[PATH_MAX];
	const char *dirs = getenv("PATH"), *end;
	size_t n = strcspn(cmd, " \t");

	if (n == 0 || n >= sizeof(word))
		return 0;
	memcpy(word, cmd, n);
	word[n] = '\0';
	if (strchr(word, '/'))
		return access(word, X_OK) == 0;
	if (dirs == NULL)
		dirs = "/usr/bin:/bin";
	for (; *dirs; dirs = *end ? end + 1 : end) {
		end = strchrnul(dirs, ':');
		if ((size_t)snprintf(path, sizeof(path), "%.*s/%s",
				     (int)(end - dirs), end == dirs ? "." : dirs,
				     word) >= sizeof(path))
			continue;
		if (access(path, X_OK) == 0)
			return 1;
	}
	return 0;
}

void out_pager_start(struct output *o)
{
	const char *pager = getenv("PAGER");
	int fds[2];
	pid_t pid;

	if (!o->pager || !isatty(STDOUT_FILENO))
		return;
	if (pager == NULL)
		pager = "less";
	if (!*pager || !strcmp(pager, "cat") || !have_command(pager))
		return;
	if (pipe2(fds, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	if (pid == 0) {
		dup2(fds[0], STDIN_FILENO);
		signal(SIGPIPE, SIG_DFL); /* ours is ignored (cli_init) */
		/* less: quit if one screen, raw colours, no init (dmesg's) */
		setenv("LESS", "FRSX", 0);
		setenv("LV", "-c", 0);
		execl("/bin/sh", "sh", "-c", pager, (char *)NULL);
		_exit(127);
	}
	o->saved_out = dup(STDOUT_FILENO);
	dup2(fds[1], STDOUT_FILENO);
	if (isatty(STDERR_FILENO)) {
		o->saved_err = dup(STDERR_FILENO);
		dup2(fds[1], STDERR_FILENO);
	}
	close(fds[0]);
	close(fds[1]);
	o->pager_pid = pid;
	/* Ctrl-C is the pager's to handle; we finish writing and wait. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
}

/* Closes the pager's pipe (restoring stdout) and waits for it to quit. */
static void pager_end(struct output *o)
{
	if (o->pager_pid <= 0)
		return;
	if (o->saved_out >= 0) {
		dup2(o->saved_out, STDOUT_FILENO);
		close(o->saved_out);
		o->saved_out = -1;
	}
	if (o->saved_err >= 0) {
		dup2(o->saved_err, STDERR_FILENO);
		close(o->saved_err);
		o->saved_err = -1;
	}
	while (waitpid(o->pager_pid, NULL, 0) < 0 && errno == EINTR)
		;
	o->pager_pid = 0;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
}
