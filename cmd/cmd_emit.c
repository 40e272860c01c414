/*
 * cmd_emit.c - "kmsg emit": append messages to the log, with logger(1)'s habits.
 *
 * The message is the arguments joined by spaces or, without arguments, one
 * record per line of stdin (or of -f FILE, "-" for stdin).  Everything the
 * user can get wrong on the command line is checked before the log is
 * opened, so a mistake never creates a log nor writes part of a batch; a
 * missing log is created (emit is the one subcommand that creates).  Input
 * is read in large chunks and split in place (lines.c), and the log is
 * opened once, so a pipe of a million lines costs one append per line and
 * nothing else.
 *
 * For the man page, where emit deliberately differs from logger 2.38:
 *
 *  - No tag by default: "kmsg emit hello" stores "hello", as a dmesg line,
 *    not "user: hello".  -t TAG stores "TAG: msg" and the field
 *    SYSLOG_IDENTIFIER=TAG (what journald stores for logger's messages);
 *    -i without -t uses the login name as the tag, as logger does.  An
 *    empty tag (-t '') means no tag at all, -i or not (the pid is in every
 *    record anyway), where logger writes "[pid]: msg".
 *  - -f has the long name --input: --file/-F names the log, as it does for
 *    every kmsg subcommand (dmesg's -F/--file).  A message on the command
 *    line together with -f is an error, where logger warns and, despite its
 *    warning, logs the command line and ignores the file.
 *  - logger's options for syslog servers, sockets and wire formats (-n,
 *    -P, -T, -d, -u, --rfc3164, --rfc5424, --sd-*, --msgid, --journald,
 *    --octet-count, --socket-errors, --no-act) and its -S/--size are
 *    errors that name what kmsg offers instead: a migrated "logger -n HOST
 *    msg" must not be stored as something else.  kmsg's own options that
 *    have no logger twin use long names only (--no-newline, --log-size).
 *  - The longest text is a property of the log (1024 bytes by default, as
 *    logger's default --size), set when it is made (--max-text).  A longer
 *    message is an error and is not written, where logger truncates a long
 *    argument and splits a long stdin line into several messages; with
 *    --split kmsg too writes it in parts, which readers join back into one
 *    line (up to 64 KiB).
 *  - An empty message given as an argument ("kmsg emit ''") is written as
 *    an empty record (logger writes nothing).  -e skips it.
 *  - A NUL byte on stdin is kept in the record (logger ends the message
 *    there); records hold any bytes and readers escape them.  A line that
 *    ends in CR LF loses the CR, as a line ending.
 *  - -p accepts numeric facilities ("1.3") and a bare number as
 *    facility * 8 + level up to 191, where logger takes only 0..7.
 *  - --prio-prefix applies to a message given as arguments too (logger
 *    ignores it there).  Like logger, a prefix naming facility 0 (kern)
 *    takes the -p facility (user by default): kern is never stored.
 *  - -s echoes the stored text ("TAG[pid]: msg"), not logger's whole
 *    syslog line with "<13>" and a date; a line left open is echoed
 *    without its newline, so the terminal shows the line as it will be
 *    joined.  A failed echo (stderr full) makes the exit status 1.
 *  - --no-newline and --cont have no logger equivalent: see struct script.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "lines.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The longest line of input taken whole.  It must hold the longest text a
 * log can have (KMSG_MAX_TEXT_LIMIT, plus a "<N>" prefix and the CR of a
 * CR LF) so that only lines that are too long anyway are longer.
 */
#define STREAM_LINE_MAX ((1u << 20) - 1)
_Static_assert(STREAM_LINE_MAX >= KMSG_MAX_TEXT_LIMIT + sizeof("<191>\r") - 1,
	       "a line the log can take must be read whole");
/* stderr's buffer with -s: the echo costs no system call per line. */
#define ECHO_BUF   (1u << 16)
/* How far back --cont looks for the line it continues. */
#define CONT_SEARCH_MAX (1u << 20)  /* records */

/* popt values: every option is returned by value and handled in one loop. */
enum {
	OPT_PRIORITY = 1, OPT_TAG, OPT_PID, OPT_ID, OPT_INPUT, OPT_SKIP_EMPTY,
	OPT_STDERR, OPT_PRIO_PREFIX, OPT_FIELD, OPT_FILE, OPT_LOG_SIZE,
	OPT_MAX_TEXT, OPT_SYNC, OPT_NO_NEWLINE, OPT_CONT, OPT_CALLER, OPT_SPLIT,
	OPT_LOGGER,  /* + i: logger_only[i], an option kmsg does not have */
};

/*
 * logger's options kmsg lacks, each refused with what to use instead;
 * emit_options holds them (hidden from --help) in this order.
 */
static const char *const logger_instead[] = {
	"kmsg writes a log file, not to a syslog server: give the log with "
	"--file (and use logger for a server); to leave a line open, the "
	"option is --no-newline",                                       /* -n */
	"kmsg writes a log file, not to a syslog server",               /* -P */
	"kmsg writes a log file, not to a syslog server",               /* -T */
	"kmsg writes a log file, not to a syslog server",               /* -d */
	"kmsg writes a log file, not to a socket: give it with --file", /* -u */
	"kmsg writes a log file, not to a socket: its errors are always reported",
	"kmsg stores records, not syslog lines: read -o kmsg gives them with their fields",
	"kmsg stores records, not syslog lines: read -o kmsg gives them with their fields",
	"kmsg stores records, not syslog lines",                        /* --octet-count */
	"store it as a field: --field MSGID=...",                       /* --msgid */
	"structured data goes in fields: --field KEY=VALUE",            /* --sd-id */
	"structured data goes in fields: --field KEY=VALUE",            /* --sd-param */
	"fields go in --field KEY=VALUE, one option each",              /* --journald */
	"kmsg has no dry run; write to a scratch log with --file",      /* --no-act */
	"logger's longest message is a property of a kmsg log, set when it "
	"is made: --max-text N (kmsg stat shows it); the log's own size is "
	"--log-size",                                                   /* -S */
};

/* The table entry of logger_instead[i], hidden from --help. */
#define LOGGER_OPT(i, name, letter, flags) \
	{ name, letter, (flags) | POPT_ARGFLAG_DOC_HIDDEN, NULL, OPT_LOGGER + (i), NULL, NULL }

const struct poptOption emit_options[] = {
	{ "priority", 'p', POPT_ARG_STRING, NULL, OPT_PRIORITY,
	  "facility.level, level or number (default user.notice)", "PRIO" },
	{ "tag", 't', POPT_ARG_STRING, NULL, OPT_TAG,
	  "prefix each message with \"TAG: \" and store SYSLOG_IDENTIFIER=TAG", "TAG" },
	{ NULL, 'i', POPT_ARG_NONE, NULL, OPT_PID,
	  "add this command's PID to the tag: \"TAG[PID]: msg\"", NULL },
	{ "id", '\0', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_ID,
	  "add ID (or this command's PID) to the tag and store it as the pid", "ID" },
	{ "input", 'f', POPT_ARG_STRING, NULL, OPT_INPUT,
	  "one message per line of FILE (- or default: stdin)", "FILE" },
	{ "skip-empty", 'e', POPT_ARG_NONE, NULL, OPT_SKIP_EMPTY,
	  "do not write empty messages", NULL },
	{ "stderr", 's', POPT_ARG_NONE, NULL, OPT_STDERR,
	  "echo each message to stderr as well", NULL },
	{ "prio-prefix", '\0', POPT_ARG_NONE, NULL, OPT_PRIO_PREFIX,
	  "a leading <N> on a message sets its priority", NULL },
	{ "field", '\0', POPT_ARG_STRING, NULL, OPT_FIELD,
	  "attach a field to each message (repeatable)", "KEY=VALUE" },
	{ "split", '\0', POPT_ARG_NONE, NULL, OPT_SPLIT,
	  "write a message longer than the log's limit in parts, joined again "
	  "when read (logger splits too)", NULL },
	CLI_NEW_LOG_OPTIONS(OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT),
	{ "sync", '\0', POPT_ARG_NONE, NULL, OPT_SYNC,
	  "each message is on stable storage before the next is written", NULL },
	{ "no-newline", '\0', POPT_ARG_NONE, NULL, OPT_NO_NEWLINE,
	  "leave the (last) line open: a later --cont of this script continues it", NULL },
	{ "cont", '\0', POPT_ARG_NONE, NULL, OPT_CONT,
	  "continue the line this script left open with --no-newline", NULL },
	{ "caller", '\0', POPT_ARG_STRING, NULL, OPT_CALLER,
	  "the identity lines are written and continued under, instead of the "
	  "script's: a process of this user's, or a label from 4194304", "ID" },
	LOGGER_OPT(0, "server", 'n', POPT_ARG_STRING),
	LOGGER_OPT(1, "port", 'P', POPT_ARG_STRING),
	LOGGER_OPT(2, "tcp", 'T', POPT_ARG_NONE),
	LOGGER_OPT(3, "udp", 'd', POPT_ARG_NONE),
	LOGGER_OPT(4, "socket", 'u', POPT_ARG_STRING),
	LOGGER_OPT(5, "socket-errors", 0, POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL),
	LOGGER_OPT(6, "rfc3164", 0, POPT_ARG_NONE),
	LOGGER_OPT(7, "rfc5424", 0, POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL),
	LOGGER_OPT(8, "octet-count", 0, POPT_ARG_NONE),
	LOGGER_OPT(9, "msgid", 0, POPT_ARG_STRING),
	LOGGER_OPT(10, "sd-id", 0, POPT_ARG_STRING),
	LOGGER_OPT(11, "sd-param", 0, POPT_ARG_STRING),
	LOGGER_OPT(12, "journald", 0, POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL),
	LOGGER_OPT(13, "no-act", 0, POPT_ARG_NONE),
	LOGGER_OPT(14, "size", 'S', POPT_ARG_STRING),
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

/* The command line, parsed.  Strings come from poptGetOptArg(): ours to free. */
struct emit_opts {
	char *priority, *tag, *id, *input, *file, *log_size, *max_text, *caller;
	char **fields;          /* KEY=VALUE words, argc entries of room */
	size_t nfields;
	int log_pid, skip_empty, echo, prio_prefix, sync, no_newline, cont, split;
};

/*
 * Who "the same script" is, so that --no-newline and a later --cont pair
 * up (kmsg(1) tells users the same).  Each kmsg emit is a process of its
 * own; the library joins fragments per caller id.  The identity that lasts
 * from one call to the next is the shell that runs them, the parent, with
 * two refinements:
 *
 *  - A shell may run its last command in place of itself (bash -c, zsh,
 *    busybox sh, a subshell, "exec"): that emit's parent is then the outer
 *    shell, but its own pid is the script's.  --cont therefore looks for
 *    an open line of its own pid first (one written since this process
 *    started, by a child of what it was before the exec), then of its
 *    parent.
 *  - A pid is reused once its process is gone: a line counts as open only
 *    if it was written after the process holding that pid now started, so
 *    a dead script's open line is never continued by a stranger.
 *
 * Every record a script writes other than a continuation begins a new
 * line (KMSG_BEGIN), as printk does without KERN_CONT: the siblings under
 * one xargs -P each start their own, and a plain emit closes the line its
 * script left open.
 */
struct script {
	uint32_t caller;       /* the identity records are written under */
	int continues;         /* the first message continues an open line */
	int no_line;           /* --cont, but no line is open */
};

/* What every message needs, set up once; only text, priority and flags vary. */
struct emitter {
	struct kmsg_log *log;
	const char *path;         /* for errors of the log itself */
	struct kmsg_entry entry;  /* fields, caller and pid preset */
	int facility, level;      /* from -p */
	uint32_t max_text;        /* the log's limit */
	char *text;               /* the tag prefix, then room for max_text bytes */
	size_t prefix_len;        /* "TAG: " or "TAG[pid]: " at the start of text */
	int skip_empty, prio_prefix, echo, split;
	int fragment_last;        /* --no-newline: the run's last message stays open */
	int continues;            /* the next message continues the script's line */
	int no_line;              /* say, at the first message, that --cont found none */
	const struct kmsg_field *fields; /* the tag's and --field's */
	size_t nfields;
	int tag_field;            /* the last field is the tag's SYSLOG_IDENTIFIER */
	int refused;              /* some message was not written */
};

/* Outcomes of emit_message(). */
enum { MSG_OK = 0, MSG_REFUSED = 1, MSG_FATAL = -1 };

/*
 * Prints "kmsg: NAME:LINE: why" for a message read from a stream, or
 * "kmsg: why" for the one given as arguments (name NULL).
 */
static void msg_error(const char *name, unsigned long long lineno,
		      const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msg_error(const char *name, unsigned long long lineno,
		      const char *fmt, ...)
{
	char why[512], where[4096 + 32];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	if (name == NULL) {
		cli_error(NULL, "%s", why);
		return;
	}
	snprintf(where, sizeof(where), "%s:%llu", name, lineno);
	cli_error(where, "%s", why);
}

/* Reports a message of len stored bytes that the log cannot take. */
static void too_long(struct emitter *em, const char *name,
		     unsigned long long lineno, unsigned long long len)
{
	msg_error(name, lineno, "message is %llu bytes%s, the log's limit is %" PRIu32
		  " (--split writes it in parts)",
		  len, em->prefix_len ? " with its tag" : "", em->max_text);
	em->refused = 1;
}

/* Appends one record; MSG_OK, or MSG_FATAL/MSG_REFUSED after saying why. */
static int append(struct emitter *em, const char *name, unsigned long long lineno)
{
	int r = kmsg_log_append(NULL, em->log, &em->entry);

	switch (r) {
	case 0:
		break;
	case KMSG_ETOOLONG:
		/* The text fits (checked before); with the fields the record
		 * does not fit in this (small) log's ring. */
		msg_error(name, lineno, "message of %zu bytes with its fields is too big "
			  "for this log's ring; a log made with a larger --log-size "
			  "takes it", em->entry.text_len);
		em->refused = 1;
		return MSG_REFUSED;
	default:
		cli_lib_error(em->path, r);
		return MSG_FATAL;
	}
	/* A log truncated under us takes appends into pages that are no
	 * longer the file's: this one may be lost, and so would the rest. */
	if (cli_file_cut(em->path, "written")) {
		msg_error(name, lineno, "this message may not be in the log, and the rest "
			  "of the input is not written: append them again once the log "
			  "is whole (the next writer restores its size)");
		return MSG_FATAL;
	}
	if (em->echo) {
		fwrite(em->entry.text, 1, em->entry.text_len, stderr);
		if (!(em->entry.flags & KMSG_FRAGMENT))
			putc('\n', stderr);
	}
	return MSG_OK;
}

/*
 * Writes part of a message (text, len bytes): the whole of it, or with
 * --split a piece of a longer one.  start says it begins the message
 * (which then gets the tag and the priority prefix handled, and begins a
 * line unless it continues the script's open one); end says the message
 * ends with it.  last says it is the run's last message.  Returns MSG_OK
 * (written or skipped by -e), MSG_REFUSED after reporting a message the
 * log cannot take (the caller goes on with the next one), or MSG_FATAL
 * after reporting an error no later message can escape.
 */
static int emit_part(struct emitter *em, const char *name, unsigned long long lineno,
		     const char *text, size_t len, int start, int end, int last)
{
	struct kmsg_entry *e = &em->entry;
	size_t prefix = 0;

	if (start) {
		e->facility = em->facility;
		e->level = em->level;
		if (em->prio_prefix) {
			int fac, lev;
			size_t n = kmsg_prio_prefix(&fac, &lev, text, len);
			if (n) {
				/* logger's rule: <N> without a facility (kern) keeps
				 * -p's, which is never kern either. */
				e->facility = fac ? fac : em->facility;
				e->level = lev;
				text += n;
				len -= n;
			}
		}
		if (len == 0 && end && em->skip_empty)
			return MSG_OK;
		if (em->no_line) {
			cli_error("--cont", "no line left open by this script (with "
				  "--no-newline) to continue; the message is written as a "
				  "line of its own");
			em->no_line = 0;
		}
		/* A continuation carries neither the tag nor its field: the
		 * start of the line has them. */
		if (!em->continues)
			prefix = em->prefix_len;
		if (prefix + len > em->max_text && !em->split) {
			too_long(em, name, lineno, (unsigned long long)prefix + len);
			return MSG_REFUSED;
		}
		e->flags = em->continues ? 0 : KMSG_BEGIN;
		e->fields = em->fields;
		e->nfields = em->nfields - (em->continues && em->tag_field);
		em->continues = 0;
	}
	for (;;) {
		size_t room = em->max_text - prefix, n = len;
		int r, more;

		if (n > room)
			n = utf8_cut(text, room);
		more = n < len || !end;
		if (prefix) {
			memcpy(em->text + prefix, text, n);
			e->text = em->text;
			e->text_len = prefix + n;
		} else {
			e->text = text;
			e->text_len = n;
		}
		if (more || (last && em->fragment_last))
			e->flags |= KMSG_FRAGMENT;
		r = append(em, name, lineno);
		if (r != MSG_OK)
			return r;
		/* Later parts continue the line, without the tag. */
		e->flags = 0;
		e->fields = NULL;
		e->nfields = 0;
		prefix = 0;
		text += n;
		len -= n;
		if (!len)
			return MSG_OK;
	}
}

static int emit_message(struct emitter *em, const char *name,
			unsigned long long lineno, const char *line,
			size_t len, int last)
{
	return emit_part(em, name, lineno, line, len, 1, 1, last);
}

/* Where emit_stream() reads: fd, the echo shown before a read may block. */
struct stream_in {
	int fd, echo;
};

static ssize_t stream_read(void *ctx, char *buf, size_t n)
{
	struct stream_in *in = ctx;
	ssize_t r;

	if (in->echo)
		fflush(stderr);
	do
		r = read(in->fd, buf, n);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : r;
}

/*
 * Writes one record per line read from fd (name is for messages: "stdin"
 * or the file's name).  A line that ends in CR LF loses the CR.  A line
 * longer than STREAM_LINE_MAX can only be too long: it is counted and
 * reported, never split, unless --split asks to write it in parts.  With
 * --no-newline the last line is held back until end of input shows that
 * it is the last.  The input is read to its end even after a refused line;
 * only a MSG_FATAL error or a read error stops it.  Returns 0, or -1 after
 * reporting.
 */
static int emit_stream(struct emitter *em, int fd, const char *name)
{
	struct stream_in in = { fd, em->echo };
	struct lines *lr = lines_new(STREAM_LINE_MAX, LINES_CRLF |
				     (em->split ? LINES_PIECES : 0) |
				     (em->fragment_last ? LINES_LOOKAHEAD : 0),
				     stream_read, &in);
	struct line ln;
	unsigned long long lineno = 0;
	int r, in_line = 0; /* --split: a long line is being written */

	if (lr == NULL) {
		cli_error(name, "%s", strerror(ENOMEM));
		return -1;
	}
	while ((r = lines_next(lr, &ln)) > 0) {
		int begins = !in_line, last = ln.end == LINE_EOF ||
			   (ln.end == LINE_NEWLINE && lines_next_byte(lr) == LINES_END);

		lineno += begins;
		in_line = ln.end == LINE_GOES_ON;
		if (ln.total) {
			/* its "<N>" is not stored */
			size_t prio = em->prio_prefix ?
				      kmsg_prio_prefix(NULL, NULL, ln.p, ln.len) : 0;
			too_long(em, name, lineno, ln.total - prio + em->prefix_len);
		} else if (emit_part(em, name, lineno, ln.p, ln.len, begins, !in_line,
				     last) == MSG_FATAL) {
			break;
		}
	}
	if (r < 0)
		cli_error(name, "read error: %s", strerror(-r));
	lines_free(lr);
	return r == 0 ? 0 : -1;
}

/*
 * Writes the message given as arguments, joined by single spaces.
 * Returns what emit_message() does.
 */
static int emit_args(struct emitter *em, const char **args)
{
	size_t len = 0, n = 0;
	char *joined, *p;
	int r;

	for (n = 0; args[n]; n++)
		len += strlen(args[n]) + (n ? 1 : 0);
	if (n == 1)
		return emit_message(em, NULL, 0, args[0], len, 1);
	joined = malloc(len + 1);
	if (joined == NULL) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		return MSG_FATAL;
	}
	p = joined;
	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(args[i]);
		if (i)
			*p++ = ' ';
		memcpy(p, args[i], l);
		p += l;
	}
	r = emit_message(em, NULL, 0, joined, len, 1);
	free(joined);
	return r;
}

/*
 * Parses a decimal number 1..max (a pid, a caller id or a text length;
 * 0 would mean "the library's default" for the ids, so it is refused).
 */
static int parse_number(uint32_t *out, const char *s, uint32_t max)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > max)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/*
 * When process pid started, in CLOCK_BOOTTIME nanoseconds (field 22 of
 * /proc/PID/stat, in clock ticks), rounded down to a tick; -1 if unknown.
 */
static int64_t proc_start_ns(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long ticks;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return -1;
	buf[n] = 0;
	/* after the command name, which may hold spaces and parentheses */
	p = strrchr(buf, ')');
	if (!p)
		return -1;
	for (int field = 2; field < 22; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return -1;
	}
	if (sscanf(p + 1, "%llu", &ticks) != 1)
		return -1;
	return (int64_t)(ticks / (unsigned long long)hz) * 1000000000 +
	       (int64_t)(ticks % (unsigned long long)hz) * (1000000000 / hz);
}

/* The first id no process or thread can have (the kernel's PID_MAX_LIMIT
 * on 64-bit systems), and the first with the top bit, which caller ids of
 * other pid namespaces have (kmsg_caller_id()): --caller's labels lie
 * between them. */
#define PID_LIMIT    (1u << 22)
#define CALLER_OTHER 0x80000000u
#define CALLER_RULE  "a writer names only a process or thread of its own real " \
	"uid, or a label from 4194304 to 2147483647 that no process can have " \
	"(root names any)"

/*
 * The real uid of process or thread pid of this pid namespace, from the
 * Uid line of /proc/PID/status; -1 if there is no such process here.
 */
static long long proc_uid(uint32_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long long uid;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%" PRIu32 "/status", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* the name before it shows a newline escaped */
	p = strstr(buf, "\nUid:");
	if (p == NULL || sscanf(p + 5, "%llu", &uid) != 1)
		return -1;
	return (long long)uid;
}

/*
 * Whether this process may write under --caller id, whose open line it
 * would continue or end: only as a caller it could be.  Root names any.
 * Another user names a live process or thread of its own real uid, whose
 * lines count only from when it started (the id may have been another
 * user's before: the check the script's own identity gets), or a label
 * no process id can be.  An id of no live process is refused: the line a
 * process left open when it died cannot be shown to be the writer's.
 * Sets *since_ns for the line looked for; returns 0, or EXIT_FAIL after
 * saying why.
 */
static int check_caller(int64_t *since_ns, uint32_t id)
{
	uid_t me = getuid();
	long long uid;
	int64_t start;

	*since_ns = INT64_MIN;
	if (me == 0 || geteuid() == 0 || (id >= PID_LIMIT && id < CALLER_OTHER))
		return 0;
	if (id >= CALLER_OTHER)
		return cli_error("--caller", "%" PRIu32 " has the top bit set, which only "
				 "writers of other pid namespaces have: " CALLER_RULE, id);
	uid = proc_uid(id);
	if (uid < 0)
		return cli_error("--caller", "no process %" PRIu32 " is running: a line "
				 "left open under the id of a process that is gone cannot "
				 "be shown to be this user's; " CALLER_RULE, id);
	if (uid != (long long)me)
		return cli_error("--caller", "process %" PRIu32 " is another user's (uid "
				 "%lld): " CALLER_RULE, id, uid);
	start = proc_start_ns((pid_t)id);
	*since_ns = start < 0 ? INT64_MIN : start;
	return 0;
}

/* One caller whose open line may be continued: who, and since when a
 * line of it counts (in this boot). */
struct candidate {
	uint32_t caller;
	int64_t since_ns;      /* CLOCK_BOOTTIME; INT64_MIN: any time */
	int found;             /* its newest record was seen */
	int open;              /* and it left the line open */
	uint64_t seq;          /* that record's number */
};

/*
 * Finds, for each candidate (at most 2), its newest record in the log
 * written in this boot since the candidate started, and whether it leaves
 * a line open.  Looks back from the end over ever larger windows (256,
 * 2048, ... records), so the usual case, a --cont right after its
 * --no-newline, reads a few records; it stops where the records are older
 * than every candidate still looked for, or after CONT_SEARCH_MAX.
 * Returns 0, or a library error.
 */
static int find_open_lines(struct kmsg_log *log, struct candidate *c, size_t nc)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;
	uint64_t window = 256, upto, from, boot = kmsg_boot_id();
	int rc = kmsg_log_stat(&st, log);

	if (rc < 0 || (rc = kmsg_reader_new(&r, log, 0)) < 0)
		return rc;
	upto = st.next_seq;
	for (;;) {
		struct candidate newest[2] = { { 0 } };
		int64_t oldest_ns = INT64_MAX, since = INT64_MAX;

		from = upto - st.first_seq > window ? upto - window : st.first_seq;
		rc = kmsg_reader_seek_seq(r, from);
		while (rc == 0 && (rc = kmsg_reader_next(r, &rec)) == 1 && rec.seq < upto) {
			rc = 0;
			if ((rec.flags & KMSG_GAP) || rec.boot_id != boot)
				continue;
			if (rec.boot_ns < oldest_ns)
				oldest_ns = rec.boot_ns;
			for (size_t i = 0; i < nc && i < 2; i++) {
				if (c[i].found || rec.caller != c[i].caller ||
				    rec.boot_ns < c[i].since_ns)
					continue;
				newest[i].found = 1;
				newest[i].open = (rec.flags & KMSG_FRAGMENT) != 0;
				newest[i].seq = rec.seq;
			}
		}
		if (rc < 0)
			break;
		rc = 0;
		for (size_t i = 0; i < nc && i < 2; i++) {
			if (newest[i].found && !c[i].found)
				c[i] = (struct candidate){ c[i].caller, c[i].since_ns, 1,
							   newest[i].open, newest[i].seq };
			if (!c[i].found && c[i].since_ns < since)
				since = c[i].since_ns;
		}
		if (since == INT64_MAX || oldest_ns < since || from == st.first_seq ||
		    st.next_seq - from >= CONT_SEARCH_MAX)
			break;
		upto = from;
		window *= 8;
	}
	kmsg_reader_free(r);
	return rc;
}

/*
 * Decides the identity records are written under and whether the first
 * message continues an open line (see struct script).  Returns 0, or
 * EXIT_FAIL after reporting an error of the log.
 */
static int find_script(struct script *s, struct kmsg_log *log, const char *path,
		       uint32_t caller_opt, int64_t caller_since, int cont)
{
	struct candidate c[2];
	size_t nc = 0;
	pid_t self = getpid(), parent = getppid();
	int rc;

	memset(s, 0, sizeof(*s));
	/* --caller's id is of this pid namespace, as the script's own is */
	s->caller = kmsg_caller_id(caller_opt ? caller_opt : (uint32_t)parent);
	if (caller_opt) {
		if (!cont)
			return 0;
		c[nc++] = (struct candidate){ s->caller, caller_since, 0, 0 };
	} else {
		/* Its own pid first: a shell may have run this emit in its
		 * place.  Usually nothing of it is found in the newest few
		 * hundred records, all older than this process: a few
		 * microseconds. */
		int64_t start = proc_start_ns(self);
		c[nc++] = (struct candidate){ kmsg_caller_id((uint32_t)self), start < 0 ? INT64_MIN : start, 0, 0 };
		if (cont) {
			int64_t pstart = proc_start_ns(parent);
			c[nc++] = (struct candidate){ kmsg_caller_id((uint32_t)parent),
						      pstart < 0 ? INT64_MIN : pstart, 0, 0 };
		}
	}
	rc = find_open_lines(log, c, nc);
	if (rc < 0)
		return cli_lib_error(path, rc);
	for (size_t i = 0; i < nc; i++) {
		if (c[i].open) {
			struct kmsg_stat st;
			/* --cont continues it; any other message is written
			 * under the same identity, so that it ends it */
			s->caller = c[i].caller;
			s->continues = cont;
			if (cont && kmsg_log_stat(&st, log) == 0 && st.next_seq - c[i].seq > 4096)
				cli_error("--cont", "the line was left open %llu records ago: "
					  "kmsg read holds at most 4096 lines behind an open one, "
					  "and shows its parts apart", (unsigned long long)
					  (st.next_seq - c[i].seq));
			return 0;
		}
	}
	s->no_line = cont;  /* said with the first message, if one comes */
	return 0;
}

/*
 * The tag -i uses when -t gives none: the login name, as logger does,
 * falling back to the effective user's name; NULL if neither is known.
 */
static const char *default_tag(void)
{
	const char *name = getlogin();
	struct passwd *pw;

	if (name && *name)
		return name;
	pw = getpwuid(geteuid());
	return pw && pw->pw_name && *pw->pw_name ? pw->pw_name : NULL;
}

/*
 * popt would take the word after a bare "--id" as its optional argument
 * ("kmsg emit --id hello" would log id "hello" and no message), where
 * getopt and so logger take one only from "--id=ID".  So a bare "--id"
 * before "--" is rewritten as "-i", which means the same.  (A literal tag
 * or priority "--id" would be rewritten too; nobody writes that.)
 */
static const char **fix_argv(int argc, const char **argv)
{
	const char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i, dashdash = 0;

	if (v == NULL)
		return NULL;
	v[0] = argv[0];
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			dashdash = 1;
		v[i] = !dashdash && !strcmp(argv[i], "--id") ? "-i" : argv[i];
	}
	return v;
}

/* Frees what parse_options() stored. */
static void free_opts(struct emit_opts *o)
{
	free(o->priority);
	free(o->tag);
	free(o->id);
	free(o->input);
	free(o->file);
	free(o->log_size);
	free(o->max_text);
	free(o->caller);
	for (size_t i = 0; i < o->nfields; i++)
		free(o->fields[i]);
	free(o->fields);
}

/* Replaces *slot with arg: the last of a repeated option wins. */
static void take(char **slot, char *arg)
{
	free(*slot);
	*slot = arg;
}

/* The usage error for logger_instead[i], an option of logger's. */
static int logger_option(int i)
{
	char opt[40] = "";

	for (const struct poptOption *o = emit_options; o->longName || o->shortName; o++) {
		if (o->val != OPT_LOGGER + i)
			continue;
		if (o->shortName)
			snprintf(opt, sizeof(opt), "-%c/--%s", o->shortName, o->longName);
		else
			snprintf(opt, sizeof(opt), "--%s", o->longName);
	}
	return cli_usage_error("emit", opt, "logger's option, not kmsg's: %s",
			       logger_instead[i]);
}

/*
 * Runs popt over the command line into *o.  Returns 0, or EXIT_USAGE after
 * popt's message.  The message words stay in con.
 */
static int parse_options(struct emit_opts *o, poptContext con, int argc)
{
	int rc;

	o->fields = calloc((size_t)argc + 1, sizeof(*o->fields));
	if (o->fields == NULL)
		return cli_error(NULL, "%s", strerror(ENOMEM));
	poptSetOtherOptionHelp(con, "[OPTION...] [MESSAGE...]");
	while ((rc = poptGetNextOpt(con)) > 0) {
		char *arg = poptGetOptArg(con);
		switch (rc) {
		case OPT_PRIORITY:    take(&o->priority, arg); break;
		case OPT_TAG:         take(&o->tag, arg); break;
		case OPT_PID:         o->log_pid = 1; break;
		case OPT_ID:          o->log_pid = 1; take(&o->id, arg); break;
		case OPT_INPUT:       take(&o->input, arg); break;
		case OPT_SKIP_EMPTY:  o->skip_empty = 1; break;
		case OPT_STDERR:      o->echo = 1; break;
		case OPT_PRIO_PREFIX: o->prio_prefix = 1; break;
		case OPT_FIELD:       o->fields[o->nfields++] = arg; break;
		case OPT_FILE:        take(&o->file, arg); break;
		case OPT_LOG_SIZE:    take(&o->log_size, arg); break;
		case OPT_MAX_TEXT:    take(&o->max_text, arg); break;
		case OPT_SYNC:        o->sync = 1; break;
		case OPT_NO_NEWLINE:  o->no_newline = 1; break;
		case OPT_CONT:        o->cont = 1; break;
		case OPT_CALLER:      take(&o->caller, arg); break;
		case OPT_SPLIT:       o->split = 1; break;
		case CLI_OPT_H:       cli_help(con);
		default:
			free(arg);
			if (rc >= OPT_LOGGER)
				return logger_option(rc - OPT_LOGGER);
			break;
		}
	}
	if (rc < -1)
		return cli_popt_error(con, "emit", rc);
	return 0;
}

/*
 * Turns the --field words into out[0..] (room is left after them for the
 * tag's field), checking each against the library's key rule.  Returns 0,
 * EXIT_USAGE for a word without "=", or EXIT_FAIL for a bad key.
 */
static int build_fields(struct kmsg_field *out, const struct emit_opts *o)
{
	for (size_t i = 0; i < o->nfields; i++) {
		const char *w = o->fields[i], *eq = strchr(w, '=');
		if (eq == NULL)
			return cli_usage_error("emit", "--field", "'%s': use KEY=VALUE", w);
		if (*w == '_')
			return cli_error("--field", "bad key '%.*s': keys beginning with _ "
					 "name facts the kernel vouches for, which only a "
					 "trusted ingester records (kmsg(5), Trust); what a "
					 "writer says is under a key from A-Z",
					 (int)(eq - w), w);
		if (!kmsg_key_valid(w, (size_t)(eq - w)))
			return cli_error("--field", "bad key '%.*s': a key is 1 to %u "
					 "characters of A-Z, 0-9 and _, starting with a letter A-Z",
					 (int)(eq - w), w, KMSG_MAX_KEY);
		out[i] = (struct kmsg_field){ w, (size_t)(eq - w), eq + 1, strlen(eq + 1) };
	}
	return 0;
}

/* True if one of the n fields has the key. */
static int has_field(const struct kmsg_field *f, size_t n, const char *key)
{
	for (size_t i = 0; i < n; i++)
		if (f[i].key_len == strlen(key) && !memcmp(f[i].key, key, f[i].key_len))
			return 1;
	return 0;
}

/*
 * The bytes the fields take in a record: each its KEY=value and a 2-byte
 * length.  EXIT_FAIL after saying so if that is over the library's limit.
 */
static int check_field_bytes(const struct kmsg_field *f, size_t n, int tagged)
{
	size_t sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += 2 + f[i].key_len + 1 + f[i].value_len;
	if (sum <= KMSG_MAX_FIELDS_BYTES)
		return 0;
	return cli_error("--field", "the fields take %zu bytes in a record (each its "
			 "KEY=VALUE and 2 bytes of length%s); the limit is %u", sum,
			 tagged ? ", the tag's SYSLOG_IDENTIFIER included" : "",
			 KMSG_MAX_FIELDS_BYTES);
}

/*
 * After opening an existing log: --log-size and --max-text only shape a
 * log being made; say so when they differ from what the log has (the
 * messages are written all the same).
 */
static void note_ignored(struct kmsg_log *log, const char *path,
			 const struct emit_opts *o, const struct kmsg_create_opts *co)
{
	struct kmsg_stat st;

	if ((!o->log_size && !o->max_text) || kmsg_log_stat(&st, log) < 0)
		return;
	if (o->log_size && st.file_size != co->size)
		cli_error(path, "--log-size %s is ignored: the log exists, and its size "
			  "(%llu bytes) was fixed when it was made", o->log_size,
			  (unsigned long long)st.file_size);
	if (o->max_text && st.max_text != co->max_text)
		cli_error(path, "--max-text %s is ignored: the log exists, and its "
			  "longest text (%u bytes) was fixed when it was made",
			  o->max_text, st.max_text);
}

int cmd_emit(int argc, const char **argv)
{
	struct emit_opts o = { 0 };
	struct emitter em = { 0 };
	struct kmsg_entry init = KMSG_ENTRY_INIT;
	struct kmsg_create_opts co = KMSG_CREATE_OPTS_INIT;
	struct kmsg_field *fields = NULL;
	struct script script;
	const char **args, **av = NULL;
	const char *path, *tag = NULL, *input_name = "stdin";
	poptContext con = NULL;
	uint32_t id = 0, caller = 0;
	int64_t caller_since = INT64_MIN;
	size_t nfields = 0;
	int status = EXIT_FAIL, in_fd = -1, r;

	av = fix_argv(argc, argv);
	if (av == NULL) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		goto out;
	}
	con = poptGetContext("kmsg emit", argc, av, emit_options, 0);
	if (con == NULL) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		goto out;
	}
	status = parse_options(&o, con, argc);
	if (status)
		goto out;
	status = EXIT_USAGE;
	args = poptGetArgs(con);

	/* Everything the user can get wrong, before the log is touched. */
	em.entry = init;
	em.facility = 1;
	em.level = 5;
	if (o.priority && kmsg_prio_parse(&em.facility, &em.level, o.priority) < 0) {
		cli_error(NULL, "unknown priority '%s': use facility.level, e.g. user.notice; "
			  "see kmsg(1)", o.priority);
		status = EXIT_FAIL;
		goto out;
	}
	/* As the kernel does for /dev/kmsg: kern is for the kernel alone. */
	if (em.facility == 0)
		em.facility = 1;
	if (o.id && parse_number(&id, o.id, UINT32_MAX) < 0) {
		status = cli_usage_error("emit", "--id", "'%s' is not a process id (a number "
					 "from 1)", o.id);
		goto out;
	}
	if (o.caller && parse_number(&caller, o.caller, UINT32_MAX) < 0) {
		status = cli_usage_error("emit", "--caller", "'%s' is not a caller id (a "
					 "number from 1)", o.caller);
		goto out;
	}
	if (caller && (status = check_caller(&caller_since, caller)) != 0)
		goto out;
	if ((status = cli_parse_new_log(&co, "emit", o.log_size, o.max_text)) != 0)
		goto out;
	status = EXIT_USAGE;
	if (o.input && cli_path_given("emit", "--input", o.input, "input") != 0)
		goto out;
	if (o.input && args) {
		status = cli_usage_error("emit", NULL, "a message and --input FILE exclude "
					 "each other");
		goto out;
	}
	fields = calloc(o.nfields + 1, sizeof(*fields));
	if (fields == NULL) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		status = EXIT_FAIL;
		goto out;
	}
	status = build_fields(fields, &o);
	if (status)
		goto out;
	/* An empty tag is no tag, -i or not. */
	tag = o.tag ? (*o.tag ? o.tag : NULL) : (o.log_pid ? default_tag() : NULL);
	/* The tag's field comes last, unless an explicit --field
	 * SYSLOG_IDENTIFIER wins over it. */
	nfields = o.nfields;
	if (tag && !has_field(fields, o.nfields, "SYSLOG_IDENTIFIER")) {
		fields[nfields++] = (struct kmsg_field){ "SYSLOG_IDENTIFIER",
			strlen("SYSLOG_IDENTIFIER"), tag, strlen(tag) };
		em.tag_field = 1;
	}
	em.fields = fields;
	em.nfields = nfields;
	status = check_field_bytes(em.fields, nfields, em.tag_field);
	if (status)
		goto out;
	status = EXIT_FAIL;

	if (o.input && strcmp(o.input, "-") != 0) {
		struct stat sb;

		in_fd = open(o.input, O_RDONLY | O_CLOEXEC);
		if (in_fd < 0) {
			cli_error(o.input, "%s", strerror(errno));
			goto out;
		}
		if (fstat(in_fd, &sb) == 0 && S_ISDIR(sb.st_mode)) {
			cli_error(o.input, "is a directory");
			goto out;
		}
		input_name = o.input;
	} else if (!args && cli_stdin_closed()) {
		/* "<&-": what would be read is /dev/null's nothing, which
		 * must not pass for an input without messages */
		cli_error("standard input", "is closed (\"<&-\"): give the message "
			  "as arguments, or the messages on a pipe or with <FILE");
		goto out;
	}

	path = cli_log_path(o.file);
	if (path == NULL)
		goto out;
	em.path = path;
	em.log = cli_open_log(path, KMSG_OPEN_WRITE | (o.sync ? KMSG_OPEN_SYNC : 0), &co);
	if (em.log == NULL)
		goto out;
	note_ignored(em.log, path, &o, &co);
	{
		struct kmsg_stat st;
		r = kmsg_log_stat(&st, em.log);
		if (r < 0) {
			cli_lib_error(path, r);
			goto out;
		}
		em.max_text = st.max_text;
	}

	{
		/* "TAG: " or "TAG[PID]: " before each message's text */
		char pid[16] = "";
		size_t tl = tag ? strlen(tag) : 0;
		if (tag && o.log_pid)
			snprintf(pid, sizeof(pid), "[%" PRIu32 "]", id ? id : (uint32_t)getpid());
		em.prefix_len = tag ? tl + strlen(pid) + 2 : 0;
		if (em.prefix_len >= em.max_text) {
			cli_error("--tag", "the tag takes %zu of the log's %u bytes of text",
				  em.prefix_len, em.max_text);
			goto out;
		}
		em.text = malloc(em.max_text);
		if (em.text == NULL) {
			cli_error(NULL, "%s", strerror(ENOMEM));
			goto out;
		}
		if (tag) {
			memcpy(em.text, tag, tl);
			memcpy(em.text + tl, pid, strlen(pid));
			memcpy(em.text + em.prefix_len - 2, ": ", 2);
		}
	}

	if (find_script(&script, em.log, path, caller, caller_since, o.cont) != 0)
		goto out;
	em.entry.caller = script.caller;
	em.entry.pid = id;
	em.continues = script.continues;
	em.no_line = script.no_line;
	em.skip_empty = o.skip_empty;
	em.prio_prefix = o.prio_prefix;
	em.fragment_last = o.no_newline;
	em.echo = o.echo;
	em.split = o.split;
	/* Nothing was printed yet, so stderr's buffering may still change. */
	if (em.echo)
		setvbuf(stderr, NULL, _IOFBF, ECHO_BUF);

	if (args)
		r = emit_args(&em, args) == MSG_FATAL ? -1 : 0;
	else
		r = emit_stream(&em, in_fd >= 0 ? in_fd : STDIN_FILENO, input_name);
	status = r < 0 || em.refused ? EXIT_FAIL : EXIT_OK;
	/* The echo was asked for: losing it is a failure (it cannot be told). */
	if (em.echo && (fflush(stderr) != 0 || ferror(stderr)))
		status = EXIT_FAIL;
out:
	kmsg_log_close(em.log);
	if (in_fd >= 0)
		close(in_fd);
	free(em.text);
	free(fields);
	free_opts(&o);
	if (con)
		poptFreeContext(con);
	free(av);
	return status;
}
