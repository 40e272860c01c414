/*
 * options.c - the format and filter options of kmsg read and kmsg follow
 * (one popt table, included into both), and the output they set up
 * (out_setup()).  The options follow util-linux 2.42's dmesg: the time
 * formats given become columns in the order given (time_columns() says
 * how they combine), and -r cannot be mixed with the options that change
 * a line.
 */
#define _GNU_SOURCE
#include "output.h"
#include "cursor.h"
#include "grep.h"
#include "matches.h"
#include "colors.h"
#include "when.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <langinfo.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Large enough that writing costs nothing next to rendering. */
#define OUT_BUF_SIZE (1u << 20)

enum {
	OPT_CTIME = 1, OPT_RELTIME, OPT_DELTA, OPT_NOTIME, OPT_TIMEFMT,
	OPT_RAW, OPT_DECODE, OPT_JSON, OPT_OUTPUT, OPT_NOESCAPE, OPT_FIELDS,
	OPT_COLOR, OPT_HUMAN, OPT_NOPAGER, OPT_LEVEL, OPT_FACILITY,
	OPT_KERNEL, OPT_USER, OPT_SINCE, OPT_UNTIL, OPT_MATCH, OPT_QUIET,
	OPT_OUTPUT_FIELDS, OPT_SHOW_CALLER, OPT_SHOW_PID, OPT_FORCE_PREFIX, OPT_UTC,
};

static void bad(struct out_given *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Keeps the first error an option gave, for out_setup() to report. */
static void bad(struct out_given *a, const char *fmt, ...)
{
	va_list ap;

	if (a->err[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(a->err, sizeof(a->err), fmt, ap);
	va_end(ap);
}

/* 1 if s (len bytes) is a number too large for dmesg's strtol(). */
static int too_large(const char *s, size_t len)
{
	unsigned long long v = 0;
	size_t i;

	for (i = 0; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (unsigned long long)LONG_MAX / 10)
			return 1;
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > (unsigned long long)LONG_MAX)
			return 1;
	}
	return 0;
}

/*
 * Adds a comma-separated list of facility or level names (or numbers) to
 * *bits.  For levels "err+" also takes every more severe level and "+err"
 * every less severe one (util-linux 2.39's ranges).  A bad item is said
 * as dmesg 2.42 says it, naming the list from that item on (a comma that
 * ends the list is part of the last item there too): "unknown level
 * 'foo,info'", "failed to parse level '...': Numerical result out of
 * range".  Returns 0 or -1.
 */
static int parse_list(struct out_given *a, uint32_t *bits, const char *list, int levels)
{
	const char *what = levels ? "level" : "facility";
	const char *p = list;

	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		int lower = 0, higher = 0, v, i;

		if (end && end[1] == '\0')
			len++, end = NULL;
		if (levels && len > 1 && p[len - 1] == '+') {
			lower = 1;
			len--;
		} else if (levels && len > 1 && p[0] == '+') {
			higher = 1;
			p++;
			len--;
		}
		v = len ? (levels ? kmsg_level_parse(p, len) : kmsg_facility_parse(p, len)) : -1;
		if (v < 0) {
			/* dmesg's words, then what is taken instead */
			const char *hint = levels ?
				"--level takes a list of: emerg, alert, crit, err, "
				"warn, notice, info, debug; err+ or +err for ranges" :
				"--facility takes a list of: kern, user, mail, daemon, "
				"auth, syslog, lpr, news, uucp, cron, authpriv, ftp, "
				"local0..local7";

			if (too_large(p, len) && len && p[0] >= '0' && p[0] <= '9')
				bad(a, "failed to parse %s '%s': %s\nkmsg: %s", what, p,
				    strerror(ERANGE), hint);
			else
				bad(a, "unknown %s '%s'\nkmsg: %s", what, p, hint);
			return -1;
		}
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
static void add_match(struct out_given *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char **m;

	if (eq == NULL || !kmsg_key_valid(arg, (size_t)(eq - arg))) {
		bad(a, "--match %s: not KEY=VALUE with a key of A-Z, 0-9 and _", arg);
		return;
	}
	m = realloc(a->match, (a->nmatch + 1) * sizeof(*m));
	if (m == NULL || (m[a->nmatch] = strdup(arg)) == NULL) {
		if (m)
			a->match = m;
		bad(a, "%s", "out of memory");
		return;
	}
	a->match = m;
	a->nmatch++;
}

/* 1 if the columns are a time of journalctl's -o short-iso and kin. */
static int journal_time(const struct out_given *a)
{
	return a->ntimes == 1 && a->times[0] >= KMSG_TIME_SHORT_ISO &&
	       a->times[0] <= KMSG_TIME_SHORT_UNIX;
}

/*
 * Adds a time format to the columns, unless it is there already.  A time
 * of journalctl's stands alone: a dmesg time format after it replaces
 * it, and -d is held back (out_setup() says it is ignored, or adds it
 * once a dmesg format has replaced that time).
 */
static void add_time(struct out_given *a, unsigned tf)
{
	if (journal_time(a)) {
		if (tf == (KMSG_TIME_MONO | KMSG_TIME_WITH_DELTA)) {
			a->journal_delta = 1;
			return;
		}
		a->ntimes = 0;
	}
	for (size_t i = 0; i < a->ntimes; i++) {
		if (a->times[i] == tf)
			return;
	}
	if (a->ntimes < sizeof(a->times) / sizeof(a->times[0]))
		a->times[a->ntimes++] = tf;
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

static void set_output(struct out_given *a, const char *arg)
{
	for (size_t i = 0; i < sizeof(short_outputs) / sizeof(short_outputs[0]); i++) {
		if (!strcmp(arg, short_outputs[i].name)) {
			a->output = KMSG_OUT_SHORT;
			a->raw = 0;
			/* journalctl's -o is one format: the time formats
			 * before it go, those after it are added */
			a->ntimes = 0;
			a->journal_delta = 0;
			add_time(a, (unsigned)short_outputs[i].time);
			a->short_name = short_outputs[i].name;
			return;
		}
	}
	if (!strcmp(arg, "short")) {
		a->output = KMSG_OUT_SHORT;
		a->raw = 0;
	} else if (!strcmp(arg, "raw")) {
		a->output = KMSG_OUT_SHORT;
		a->raw = 1;
	} else if (!strcmp(arg, "json")) {
		a->output = KMSG_OUT_JSON_LINE;
	} else if (!strcmp(arg, "json-pretty")) {
		a->output = KMSG_OUT_JSON_PRETTY;
	} else if (!strcmp(arg, "json-seq")) {
		a->output = KMSG_OUT_JSON_SEQ;
	} else if (!strcmp(arg, "kmsg")) {
		a->output = KMSG_OUT_KMSG;
	} else if (!strcmp(arg, "export")) {
		a->output = KMSG_OUT_EXPORT;
	} else {
		bad(a, "--output %s: not one of short, raw, json, json-pretty, json-seq, kmsg, export, "
		    "short-iso, short-iso-precise, short-precise, short-monotonic, "
		    "short-unix, cat", arg);
	}
}

static void set_time_format(struct out_given *a, const char *arg)
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
			add_time(a, (unsigned)names[i].time);
			return;
		}
	}
	bad(a, "--time-format %s: not one of delta, reltime, ctime, notime, iso, raw", arg);
}

/*
 * popt calls this for each option of output_options as it comes, so the
 * order of time formats is kept; errors are kept for out_setup().
 */
static void on_option(void *state, int val, const char *arg)
{
	struct out_given *a = state;

	switch (val) {
	case OPT_CTIME:
		add_time(a, KMSG_TIME_CTIME);
		a->conflict = "--ctime";
		break;
	case OPT_RELTIME:
		add_time(a, KMSG_TIME_RELTIME);
		a->conflict = "--reltime";
		break;
	case OPT_DELTA:
		add_time(a, KMSG_TIME_MONO | KMSG_TIME_WITH_DELTA);
		a->conflict = "--show-delta";
		break;
	case OPT_NOTIME:
		add_time(a, KMSG_TIME_NOTIME);
		a->conflict = "--notime";
		break;
	case OPT_TIMEFMT:
		set_time_format(a, arg);
		break;
	case OPT_RAW:
		a->raw = 1;
		break;
	case OPT_DECODE:
		a->decode = 1;
		a->conflict = "--decode";
		break;
	case OPT_JSON:
		a->output = KMSG_OUT_JSON;
		break;
	case OPT_OUTPUT:
		set_output(a, arg);
		break;
	case OPT_OUTPUT_FIELDS:
		/* popt frees arg when it reads the next option */
		free(a->output_fields);
		a->output_fields = strdup(arg);
		if (a->output_fields == NULL)
			bad(a, "%s", "out of memory");
		break;
	case OPT_NOESCAPE:
		a->noescape = 1;
		break;
	case OPT_FIELDS:
		a->fields = 1;
		break;
	case OPT_FORCE_PREFIX:
		a->force_prefix = 1;
		break;
	case OPT_UTC:
		a->utc = 1;
		break;
	case OPT_COLOR:
		a->color_given = 1;
		a->conflict = "--color";
		if (arg == NULL || !strcmp(arg, "auto"))
			a->color = COLOR_AUTO;
		else if (!strcmp(arg, "always"))
			a->color = COLOR_ALWAYS;
		else if (!strcmp(arg, "never"))
			a->color = COLOR_NEVER;
		else
			bad(a, "--color %s: not one of auto, always, never", arg);
		break;
	case OPT_HUMAN:
		a->human = 1;
		add_time(a, KMSG_TIME_RELTIME);
		a->conflict = "--human";
		break;
	case OPT_QUIET:
		a->quiet = 1;
		break;
	case OPT_SHOW_CALLER:
		a->show_caller = 1;
		break;
	case OPT_SHOW_PID:
		a->show_pid = 1;
		break;
	case OPT_NOPAGER:
		a->nopager = 1;
		break;
	case OPT_LEVEL:
		a->flt_lev = 1;
		(void)parse_list(a, &a->levels, arg, 1);
		break;
	case OPT_FACILITY:
		a->flt_fac = 1;
		(void)parse_list(a, &a->facilities, arg, 0);
		break;
	case OPT_KERNEL:
		a->flt_fac = 1;
		a->facilities |= 1;
		break;
	case OPT_USER:
		a->flt_fac = 1;
		a->facilities |= ((UINT32_C(1) << KMSG_NFACILITIES) - 1) & ~UINT32_C(1);
		break;
	case OPT_SINCE:
		a->have_since = 1;
		if (parse_when(&a->since, arg) < 0)
			bad(a, "--since %s: not a time (as \"2024-05-12 11:27:01\", "
			    "\"yesterday\", \"-10min\")", arg);
		break;
	case OPT_UNTIL:
		a->have_until = 1;
		if (parse_when(&a->until, arg) < 0)
			bad(a, "--until %s: not a time (as \"2024-05-12 11:27:01\", "
			    "\"today\", \"-1h\")", arg);
		break;
	case OPT_MATCH:
		add_match(a, arg);
		break;
	}
}

/* bound to the caller's struct output by out_init() */
static struct cli_option_handler handler = { on_option, NULL };

const struct poptOption output_options[] = {
	CLI_OPTION_HANDLER(&handler),
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
	  "json-pretty, json-seq (RFC 7464), kmsg (the /dev/kmsg format), "
	  "export (the journal's, for systemd-journal-remote); "
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
	  "the caller each writer gave (its word, not a fact): dmesg 2.40's "
	  "caller column (T123, a thread) and -J key", NULL },
	{ "show-pid", '\0', POPT_ARG_NONE, NULL, OPT_SHOW_PID,
	  "the process id each writer gave (its word: claimed_pid): a column "
	  "(P456) and -J key", NULL },
	{ "quiet", 'q', POPT_ARG_NONE, NULL, OPT_QUIET,
	  "no \"-- Boot ID --\" line where the records of another boot begin", NULL },
	POPT_TABLEEND
};

/* read's -H and -P: only read pages its output. */
const struct poptOption output_pager_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "human", 'H', POPT_ARG_NONE, NULL, OPT_HUMAN,
	  "human-readable output: reltime, colour and a pager", NULL },
	{ "nopager", 'P', POPT_ARG_NONE, NULL, OPT_NOPAGER,
	  "do not pipe the output into a pager", NULL },
	POPT_TABLEEND
};

/* follow's -H: the same without a pager, which a follower never has. */
const struct poptOption output_human_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "human", 'H', POPT_ARG_NONE, NULL, OPT_HUMAN,
	  "human-readable output: reltime and colour", NULL },
	POPT_TABLEEND
};


/*
 * Colour for the short output: --color, else a terminal that wants it and
 * has not been told otherwise in terminal-colors.d (tc: scanned here when
 * it decides).
 */
static int want_color(const struct out_given *a, struct term_colors *tc)
{
	const char *nc = getenv("NO_COLOR"), *term = getenv("TERM");

	switch (a->color) {
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
	if (a->color_given || a->human)
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
	if (tc_read_scheme(tc) < 0)
		return cli_error(NULL, "out of memory");
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

/* The time columns being resolved: KMSG_TIME_* | KMSG_TIME_WITH_DELTA. */
struct tcols {
	unsigned v[12];
	size_t n;
};

/* The place of the first column tf, or -1. */
static int tc_find(const struct tcols *t, unsigned tf)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->v[i] == tf)
			return (int)i;
	}
	return -1;
}

/* Takes the column tf out, if it is there. */
static void tc_remove(struct tcols *t, unsigned tf)
{
	int i = tc_find(t, tf);

	if (i < 0)
		return;
	memmove(&t->v[i], &t->v[i + 1], (t->n - (size_t)i - 1) * sizeof(t->v[0]));
	t->n--;
}

/* The delta format given with MONO (or else CTIME) becomes that one's
 * " <delta>"; 1 if it did. */
static int tc_join_delta(struct tcols *t, unsigned delta_tf, unsigned into)
{
	int i;

	if (tc_find(t, delta_tf) < 0 || tc_find(t, into) < 0)
		return 0;
	tc_remove(t, delta_tf);
	i = tc_find(t, into);
	t->v[i] |= KMSG_TIME_WITH_DELTA;
	return 1;
}

/*
 * The time columns of the short output from the time formats given, as
 * dmesg 2.42 combines them: each format once, in the order given (none
 * given: the seconds since boot).  -t (notime) leaves no column, or with
 * -d or the delta format only the delta; -d's seconds with delta join -T
 * as "[ctime <delta>]"; the delta format joins the seconds since boot,
 * or else -T, the same way.  Everything else is a column of its own.
 */
static void time_columns(struct kmsg_fmt_opts *fo, const struct out_given *a)
{
	const unsigned mono_delta = KMSG_TIME_MONO | KMSG_TIME_WITH_DELTA;
	struct tcols t = { .n = a->ntimes };

	memcpy(t.v, a->times, a->ntimes * sizeof(t.v[0]));
	if (t.n == 0)
		t.v[t.n++] = KMSG_TIME_MONO;
	if (a->journal_delta && !journal_time(a) && tc_find(&t, mono_delta) < 0)
		t.v[t.n++] = mono_delta;
	if (tc_find(&t, KMSG_TIME_NOTIME) >= 0) {
		int delta = tc_find(&t, mono_delta) >= 0 ||
			    tc_find(&t, KMSG_TIME_DELTA) >= 0;

		t.v[0] = delta ? KMSG_TIME_DELTA : KMSG_TIME_NOTIME;
		t.n = 1;
	}
	if (tc_find(&t, KMSG_TIME_CTIME) >= 0)
		(void)tc_join_delta(&t, mono_delta, KMSG_TIME_CTIME);
	if (!tc_join_delta(&t, KMSG_TIME_DELTA, KMSG_TIME_MONO))
		(void)tc_join_delta(&t, KMSG_TIME_DELTA, KMSG_TIME_CTIME);

	fo->time = (enum kmsg_time_format)(t.v[0] & ~KMSG_TIME_WITH_DELTA);
	if (t.v[0] & KMSG_TIME_WITH_DELTA)
		fo->flags |= KMSG_FMT_SHOWDELTA;
	fo->ntimes = 0;
	for (size_t i = 1; i < t.n && fo->ntimes < KMSG_FMT_TIMES_MAX; i++)
		fo->times[fo->ntimes++] = t.v[i];
}

void out_init(struct output *o)
{
	memset(o, 0, sizeof(*o));
	handler.state = &o->given;
}

int out_setup(struct output *o, const char *cmd, int follow, const char *const *words)
{
	const struct out_given *a = &o->given;
	struct kmsg_fmt_opts fo = KMSG_FMT_OPTS_INIT;
	struct term_colors tc = { 0 };
	int json_records = a->output == KMSG_OUT_JSON_LINE ||
			   a->output == KMSG_OUT_JSON_PRETTY ||
			   a->output == KMSG_OUT_JSON_SEQ;
	int rc = 0;

	if (a->err[0])
		return cli_usage_error(cmd, NULL, "%s", a->err);
	/* journalctl's rule: no record could be in between */
	if (a->have_since && a->have_until && a->since > a->until)
		return cli_usage_error(cmd, "--until", "is before --since: no record is "
				       "both; give the earlier time to --since");
	if (a->raw && a->output == KMSG_OUT_SHORT && a->conflict)
		return cli_usage_error(cmd, "--raw", "cannot be used with %s", a->conflict);

	fo.output = a->output;
	if (a->decode)
		fo.flags |= KMSG_FMT_DECODE;
	if (a->noescape)
		fo.flags |= KMSG_FMT_NOESCAPE;
	/* -J's objects are dmesg's, which has no fields: --fields adds them */
	if (a->fields && a->output == KMSG_OUT_JSON)
		fo.flags |= KMSG_FMT_FIELDS;
	if (a->output == KMSG_OUT_SHORT) {
		if (a->raw)
			fo.time = KMSG_TIME_RAW;
		else
			time_columns(&fo, a);
		if (!a->raw && a->journal_delta && journal_time(a))
			cli_error("--show-delta", "ignored with -o %s", a->short_name);
		if (a->fields)
			fo.flags |= KMSG_FMT_FIELDS;
		if (a->force_prefix)
			fo.flags |= KMSG_FMT_FORCE_PREFIX;
		if (a->utc)
			fo.flags |= KMSG_FMT_UTC;
		if (!a->noescape && !utf8_locale())
			fo.flags |= KMSG_FMT_ASCII;
		/* -r lines are dmesg -r's, which has no colours */
		if (!a->raw && want_color(a, &tc)) {
			fo.flags |= KMSG_FMT_COLOR;
			rc = scheme_colors(o, &tc);
			for (int i = 0; i < KMSG_COLOR_COUNT; i++)
				fo.colors[i] = o->colors[i];
		}
		tc_free(&tc);
		if (rc != 0)
			return rc;
		o->pager = a->human && !a->nopager && !follow;
	}
	if ((json_records || a->output == KMSG_OUT_EXPORT) &&
	    (a->show_caller || a->show_pid))
		return cli_usage_error(cmd, a->show_caller ? "--show-caller" : "--show-pid",
				       "not with -o json, json-pretty, json-seq or export, "
				       "whose records always have pid and caller");
	if (a->output == KMSG_OUT_EXPORT && cur_line_shown())
		return cli_usage_error(cmd, "--show-cursor", "not with -o export: its line "
				       "would break the stream journal-remote reads; keep "
				       "the cursor with --cursor-file");
	if (a->output == KMSG_OUT_KMSG && a->show_pid)
		return cli_usage_error(cmd, "--show-pid", "not with -o kmsg: the "
				       "/dev/kmsg format has no place for a pid");
	if (a->show_caller)
		fo.flags |= KMSG_FMT_CALLER;
	if (a->show_pid)
		fo.flags |= KMSG_FMT_PID;
	/* the kernel's callers are shown without being asked for */
	fo.caller_width = pid_max_width();
	o->fo = fo;
	o->quiet = a->quiet;
	rc = kmsg_fmt_new(&o->fmt, &fo);
	if (rc < 0)
		return cli_lib_error(NULL, rc);
	if (a->output_fields) {
		if (!json_records)
			return cli_usage_error(cmd, "--output-fields", "only with -o json, "
					       "json-pretty or json-seq");
		rc = kmsg_fmt_set_keys(o->fmt, a->output_fields);
		if (rc == KMSG_EINVAL)
			return cli_usage_error(cmd, "--output-fields", "'%s': not a list of "
					       "member names (seq, seq_id, time_ns, time, "
					       "boot_ns, boot_id, pid, caller, facility, "
					       "facility_name, level, level_name, text) and "
					       "field keys (A-Z, 0-9 and _)",
					       a->output_fields);
		if (rc < 0)
			return cli_lib_error(NULL, rc);
	}

	o->levels = a->flt_lev ? a->levels : 0xff;
	o->facilities = a->flt_fac ? a->facilities : UINT32_MAX;
	o->have_since = a->have_since;
	o->since_ns = a->since;
	o->have_until = a->have_until;
	o->until_ns = a->until;
	o->prio_filter = a->flt_lev || a->flt_fac;
	rc = grep_setup(&o->grep, cmd);
	if (rc == 0)
		rc = match_parse(&o->matches, words, (const char *const *)a->match,
				 a->nmatch, cmd);
	if (rc == 0)
		rc = values_setup(&o->values, cmd);
	if (rc != 0)
		return rc;
	if (o->values && a->output != KMSG_OUT_SHORT)
		return cli_usage_error(cmd, "--list-values", "prints one value a line: "
				       "not with -J or -o json, json-pretty, json-seq, kmsg");
	o->filtering = o->prio_filter || o->have_since || o->have_until ||
		       o->matches || o->grep;

	o->cap = OUT_BUF_SIZE;
	o->buf = malloc(o->cap);
	if (o->buf == NULL)
		return cli_error(NULL, "out of memory");
	return 0;
}

int out_renew_fmt(struct output *o)
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
	return out_renew_fmt(o);
}

int out_text_input(struct output *o)
{
	if (o->fo.output != KMSG_OUT_SHORT || o->fo.caller_width == 5)
		return 0;
	/* dmesg -F pads the caller to the width of SHRT_MAX's digits */
	o->fo.caller_width = 5;
	return out_renew_fmt(o);
}

void out_free(struct output *o)
{
	pager_end(&o->pg);
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
	for (size_t i = 0; i < o->given.nmatch; i++)
		free(o->given.match[i]);
	free(o->given.match);
	o->given.match = NULL;
	o->given.nmatch = 0;
	free(o->given.output_fields);
	o->given.output_fields = NULL;
	if (handler.state == &o->given)
		handler.state = NULL;
}
