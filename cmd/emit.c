/*
 * emit.c - "kmsg emit": append messages to the log, with logger(1)'s habits.
 *
 * The message is the arguments joined by spaces or, without arguments, one
 * record per line of stdin (or of -f FILE).  Everything the user can get
 * wrong on the command line is checked before the log is opened, so a
 * mistake never creates a log nor writes part of a batch; a missing log is
 * created (emit is the one subcommand that creates).  Input is read with
 * read(2) into one large buffer and split in place, and the log is opened
 * once, so a pipe of a million lines costs one append per line and nothing
 * else.
 *
 * For the man page, where emit deliberately differs from logger 2.38:
 *
 *  - No tag by default: "kmsg emit hello" stores "hello", as a dmesg line,
 *    not "user: hello".  -t TAG stores "TAG: msg" and the field
 *    SYSLOG_IDENTIFIER=TAG (what journald stores for logger's messages);
 *    -i without -t uses the login name as the tag, as logger does.  An
 *    empty tag (-t '') means no tag, where logger writes ": msg".
 *  - -f has the long name --input: --file/-F names the log, as it does for
 *    every kmsg subcommand (dmesg's -F/--file).  A message on the command
 *    line together with -f is an error, where logger warns and, despite its
 *    warning, logs the command line and ignores the file.
 *  - --size is the size of a log created because it was missing, not
 *    logger's longest message: the longest text is a property of the log
 *    (1024 bytes by default, as logger's default --size).
 *  - A message longer than the log's limit is an error and is not written,
 *    where logger splits a long stdin line into several messages and
 *    truncates a long argument.
 *  - An empty message given as an argument ("kmsg emit ''") is written as
 *    an empty record (logger writes nothing); it is how a script ends a line
 *    left open by -n ("kmsg emit --cont ''").  -e skips it.
 *  - A NUL byte on stdin is kept in the record (logger ends the message
 *    there); records hold any bytes and readers escape them.
 *  - -p accepts numeric facilities ("1.3") and a bare number as
 *    facility * 8 + level up to 191, where logger takes only 0..7.
 *  - --prio-prefix applies to a message given as arguments too (logger
 *    ignores it there).  Like logger, a prefix naming facility 0 (kern)
 *    takes the -p facility (user by default): kern is never stored.
 *  - -s echoes the stored text ("TAG[pid]: msg"), not logger's whole
 *    syslog line with "<13>" and a date; a fragment (-n) is echoed without
 *    its newline, so the terminal shows the line as it will be joined.
 *    A failed echo (stderr closed or full) makes the exit status 1.
 *  - -n and --cont have no logger equivalent: see continuation_caller().
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Input buffer.  It must hold a whole line of the longest text a log can
 * have (KMSG_MAX_TEXT_LIMIT, plus a "<N>" prefix and the newline) so that
 * only lines that are too long anyway ever fill it; 1 MiB amortises the
 * read(2) calls to nothing.
 */
#define STREAM_BUF (1u << 20)
_Static_assert(STREAM_BUF > KMSG_MAX_TEXT_LIMIT + sizeof("<191>\n"),
	       "a line the log can take must fit in the input buffer");
/* stderr's buffer with -s: the echo costs no system call per line. */
#define ECHO_BUF   (1u << 16)

/* popt values: every option is returned by value and handled in one loop. */
enum {
	OPT_PRIORITY = 1, OPT_TAG, OPT_PID, OPT_ID, OPT_INPUT, OPT_SKIP_EMPTY,
	OPT_STDERR, OPT_PRIO_PREFIX, OPT_FIELD, OPT_FILE, OPT_SIZE, OPT_SYNC,
	OPT_NO_NEWLINE, OPT_CONT, OPT_CALLER,
};

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
	  "one message per line of FILE (default: stdin)", "FILE" },
	{ "skip-empty", 'e', POPT_ARG_NONE, NULL, OPT_SKIP_EMPTY,
	  "do not write empty messages", NULL },
	{ "stderr", 's', POPT_ARG_NONE, NULL, OPT_STDERR,
	  "echo each message to stderr as well", NULL },
	{ "prio-prefix", '\0', POPT_ARG_NONE, NULL, OPT_PRIO_PREFIX,
	  "a leading <N> on a message sets its priority", NULL },
	{ "field", '\0', POPT_ARG_STRING, NULL, OPT_FIELD,
	  "attach a field to each message (repeatable)", "KEY=VALUE" },
	{ "file", 'F', POPT_ARG_STRING, NULL, OPT_FILE,
	  "the log (default $KMSG_FILE, else the user's log)", "PATH" },
	{ "size", '\0', POPT_ARG_STRING, NULL, OPT_SIZE,
	  "size of the log if it must be created (K, M, G suffixes; default 1M)", "SIZE" },
	{ "sync", '\0', POPT_ARG_NONE, NULL, OPT_SYNC,
	  "each message is on stable storage before the next is written", NULL },
	{ "no-newline", 'n', POPT_ARG_NONE, NULL, OPT_NO_NEWLINE,
	  "leave the (last) line open: a later --cont continues it", NULL },
	{ "cont", '\0', POPT_ARG_NONE, NULL, OPT_CONT,
	  "continue the line this script left open with -n", NULL },
	{ "caller", '\0', POPT_ARG_STRING, NULL, OPT_CALLER,
	  "who continues lines, instead of the parent process (implies --cont)", "ID" },
	POPT_AUTOHELP
	POPT_TABLEEND
};

/* The command line, parsed.  Strings come from poptGetOptArg(): ours to free. */
struct emit_opts {
	char *priority, *tag, *id, *input, *file, *size, *caller;
	char **fields;          /* KEY=VALUE words, argc entries of room */
	size_t nfields;
	int log_pid, skip_empty, echo, prio_prefix, sync, no_newline, cont;
};

/* What every message needs, set up once; only text, priority and flags vary. */
struct emitter {
	struct kmsg_log *log;
	const char *path;         /* for errors of the log itself */
	struct kmsg_entry entry;  /* fields, caller and pid preset */
	int facility, level;      /* from -p */
	uint32_t max_text;        /* the log's limit, or KMSG_MAX_TEXT_LIMIT
	                             until log_limit() learnt it */
	int limit_known;
	char *text;               /* the tag prefix, then room for
	                             KMSG_MAX_TEXT_LIMIT bytes */
	size_t prefix_len;        /* "TAG: " or "TAG[pid]: " at the start of text */
	int skip_empty, prio_prefix, echo;
	int fragment_last;        /* -n: the last message of the run is a fragment */
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
	char why[256], where[4096 + 32];
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

/*
 * The log's longest text.  Asked only when a message is too long for the
 * bound we have: kmsg_log_stat() reads the oldest record, which one
 * "kmsg emit msg" of thousands in a script should not pay for.
 */
static uint32_t log_limit(struct emitter *em)
{
	struct kmsg_stat st;

	if (!em->limit_known && kmsg_log_stat(&st, em->log) == 0) {
		em->max_text = st.max_text;
		em->limit_known = 1;
	}
	return em->max_text;
}

/* Reports a message of len stored bytes that the log cannot take. */
static void too_long(struct emitter *em, const char *name,
		     unsigned long long lineno, unsigned long long len)
{
	msg_error(name, lineno, "message is %llu bytes%s, the log's limit is %" PRIu32,
		  len, em->prefix_len ? " with its tag" : "", log_limit(em));
	em->refused = 1;
}

/*
 * Writes one message (line, len bytes, no newline) as one record: strips a
 * "<N>" prefix with --prio-prefix, puts the tag in front, appends, echoes
 * with -s.  last says it is the run's last message (a fragment with -n).
 * Returns MSG_OK (written or skipped by -e), MSG_REFUSED after reporting a
 * message the log cannot take (the caller goes on with the next one), or
 * MSG_FATAL after reporting an error no later message can escape.
 */
static int emit_message(struct emitter *em, const char *name,
			unsigned long long lineno, const char *line,
			size_t len, int last)
{
	struct kmsg_entry *e = &em->entry;
	int r;

	e->facility = em->facility;
	e->level = em->level;
	if (em->prio_prefix) {
		int fac, lev;
		size_t n = kmsg_prio_prefix(&fac, &lev, line, len);
		if (n) {
			/* logger's rule: <N> without a facility (kern) keeps -p's,
			 * which is never kern either. */
			e->facility = fac ? fac : em->facility;
			e->level = lev;
			line += n;
			len -= n;
		}
	}
	if (len == 0 && em->skip_empty)
		return MSG_OK;
	if (em->prefix_len + len > em->max_text) {
		too_long(em, name, lineno, (unsigned long long)em->prefix_len + len);
		return MSG_REFUSED;
	}
	if (em->prefix_len) {
		memcpy(em->text + em->prefix_len, line, len);
		e->text = em->text;
		e->text_len = em->prefix_len + len;
	} else {
		e->text = line;
		e->text_len = len;
	}
	e->flags = last && em->fragment_last ? KMSG_FRAGMENT : 0;

	r = kmsg_log_append(NULL, em->log, e);
	switch (r) {
	case 0:
		break;
	case KMSG_ETOOLONG:
		if (e->text_len > log_limit(em)) {
			too_long(em, name, lineno, e->text_len);
			return MSG_REFUSED;
		}
		/* The text fits; with the fields the record does not fit in
		 * this (small) log's ring. */
		msg_error(name, lineno, "message of %zu bytes with its fields is too big "
			  "for this log; make a bigger log with --size", e->text_len);
		em->refused = 1;
		return MSG_REFUSED;
	case KMSG_EFIELD:
		/* Keys were checked before: the fields are too big together,
		 * for every message alike. */
		cli_error("--field", "the fields together are over the limit of %u bytes",
			  KMSG_MAX_FIELDS_BYTES);
		return MSG_FATAL;
	default:
		cli_lib_error(em->path, r);
		return MSG_FATAL;
	}
	if (em->echo) {
		fwrite(e->text, 1, e->text_len, stderr);
		if (!(e->flags & KMSG_FRAGMENT))
			putc('\n', stderr);
	}
	return MSG_OK;
}

/*
 * Writes one record per line read from fd (name is for messages: "stdin"
 * or the file's name).  A line longer than the buffer can only be too
 * long, so it is counted and reported, never split.  With -n the last line
 * is held back until end of input shows that it is the last.  The input is
 * read to its end even after a refused line; only a MSG_FATAL error or a
 * read error stops it.  Returns 0, or -1 after reporting.
 */
static int emit_stream(struct emitter *em, int fd, const char *name)
{
	char *buf;
	size_t start = 0, end = 0;     /* buf[start..end) is not consumed yet */
	unsigned long long lineno = 0;
	unsigned long long overlong = 0; /* bytes so far of a line too long for buf */
	size_t overlong_prefix = 0;    /* its "<N>", which is not stored */
	int eof = 0, rc = -1;

	buf = malloc(STREAM_BUF);
	if (buf == NULL) {
		cli_error(name, "%s", strerror(ENOMEM));
		return -1;
	}
	for (;;) {
		ssize_t n;
		char *p, *nl;

		/* Whatever was echoed shows before we may block. */
		if (em->echo)
			fflush(stderr);
		n = read(fd, buf + end, STREAM_BUF - end);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			cli_error(name, "read error: %s", strerror(errno));
			goto out;
		}
		if (n == 0)
			eof = 1;
		end += (size_t)n;

		p = buf + start;
		while ((nl = memchr(p, '\n', (size_t)(buf + end - p))) != NULL) {
			int last = eof && nl + 1 == buf + end;
			/* -n: this may be the last line; more input will tell. */
			if (em->fragment_last && !eof && nl + 1 == buf + end &&
			    !(p == buf && end == STREAM_BUF))
				break;
			lineno++;
			if (overlong) {
				too_long(em, name, lineno, overlong + (size_t)(nl - p) -
					 overlong_prefix + em->prefix_len);
				overlong = 0;
			} else if (emit_message(em, name, lineno, p, (size_t)(nl - p), last) == MSG_FATAL) {
				goto out;
			}
			p = nl + 1;
		}
		start = (size_t)(p - buf);

		if (eof) {
			if (start == end && !overlong)
				break;
			/* A last line without its newline is a line all the same. */
			lineno++;
			if (overlong) {
				too_long(em, name, lineno, overlong + (end - start) -
					 overlong_prefix + em->prefix_len);
			} else if (emit_message(em, name, lineno, p, end - start, 1) == MSG_FATAL) {
				goto out;
			}
			break;
		}
		if (start == end) {
			start = end = 0;
		} else if (start == 0 && end == STREAM_BUF) {
			/* A full buffer and no newline: too long, whatever follows. */
			if (!overlong && em->prio_prefix)
				overlong_prefix = kmsg_prio_prefix(NULL, NULL, buf, end);
			overlong += end;
			start = end = 0;
		} else if (end == STREAM_BUF) {
			memmove(buf, buf + start, end - start);
			end -= start;
			start = 0;
		}
	}
	rc = 0;
out:
	free(buf);
	return rc;
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
 * Parses a decimal number 1..UINT32_MAX (a pid or a caller id; 0 would
 * mean "the library's default" to kmsg_log_append, so it is refused).
 */
static int parse_id(uint32_t *out, const char *s)
{
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v == 0 || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/*
 * The caller id that pairs "kmsg emit -n" with a later "kmsg emit --cont".
 * The library joins fragments per caller; each kmsg emit is a new process,
 * so the identity that lasts from one call to the next is the shell that
 * runs them: the parent process.  A plain emit keeps the library's default,
 * its own pid, which no script's pid can equal while that script lives, so
 * it never touches an open line, and two scripts never join each other's
 * lines.  --caller ID names the identity instead (and implies --cont).
 *
 * For the man page: a shell may run the LAST command of a subshell or of
 * "bash -c" in place of itself, without forking; that command's parent is
 * then the outer shell, not the subshell that ran the -n.  In such places
 * give --caller (bash: --caller "$BASHPID" in both calls), or do not end
 * the subshell with the --cont.  Since emit cannot know whether a line is
 * open, a second -n without --cont continues the open line too (printk
 * would start a new one).
 */
static uint32_t continuation_caller(uint32_t caller_opt)
{
	return caller_opt ? caller_opt : (uint32_t)getppid();
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
 * or priority "--id" would be rewritten too; nobody writes that.)  The
 * copy also names the program "kmsg emit" for popt's help.
 */
static const char **fix_argv(int argc, const char **argv)
{
	const char **v = calloc((size_t)argc + 1, sizeof(*v));
	int i, dashdash = 0;

	if (v == NULL)
		return NULL;
	v[0] = "kmsg emit";
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
	free(o->size);
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

/*
 * Runs popt over the command line into *o.  Returns 0, or EXIT_USAGE after
 * popt's message.  The message words stay in con.
 */
static int parse_options(struct emit_opts *o, poptContext con, int argc)
{
	int rc;

	o->fields = calloc((size_t)argc + 1, sizeof(*o->fields));
	if (o->fields == NULL) {
		cli_error("emit", "%s", strerror(ENOMEM));
		return EXIT_FAIL;
	}
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
		case OPT_SIZE:        take(&o->size, arg); break;
		case OPT_SYNC:        o->sync = 1; break;
		case OPT_NO_NEWLINE:  o->no_newline = 1; break;
		case OPT_CONT:        o->cont = 1; break;
		case OPT_CALLER:      take(&o->caller, arg); break;
		default:              free(arg); break;
		}
	}
	if (rc < -1)
		return cli_popt_error(con, "emit", rc);
	return 0;
}

/*
 * Turns the --field words into e->fields (room for nfields + 1, the last
 * for the tag's field), checking each against the library's key rule.
 * Returns 0, EXIT_USAGE for a word without "=", or EXIT_FAIL for a bad key.
 */
static int build_fields(struct kmsg_field *out, size_t *n,
			const struct emit_opts *o)
{
	for (size_t i = 0; i < o->nfields; i++) {
		const char *w = o->fields[i], *eq = strchr(w, '=');
		if (eq == NULL) {
			cli_error("--field", "'%s': use KEY=VALUE", w);
			return EXIT_USAGE;
		}
		if (!kmsg_key_valid(w, (size_t)(eq - w))) {
			cli_error("--field", "bad key '%.*s': a key is 1 to %u characters of "
				  "A-Z, 0-9 and _, starting with a letter A-Z",
				  (int)(eq - w), w, KMSG_MAX_KEY);
			return EXIT_FAIL;
		}
		out[i].key = w;
		out[i].key_len = (size_t)(eq - w);
		out[i].value = eq + 1;
		out[i].value_len = strlen(eq + 1);
	}
	*n = o->nfields;
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

int cmd_emit(int argc, const char **argv)
{
	struct emit_opts o = { 0 };
	struct emitter em = { 0 };
	struct kmsg_entry init = KMSG_ENTRY_INIT;
	struct kmsg_field *fields = NULL;
	const char **args, **av = NULL;
	const char *path, *tag = NULL, *input_name = "stdin";
	poptContext con = NULL;
	uint64_t size = 0;
	uint32_t id = 0, caller = 0;
	size_t nfields = 0;
	int status = EXIT_FAIL, in_fd = -1, r;

	av = fix_argv(argc, argv);
	if (av == NULL) {
		cli_error("emit", "%s", strerror(ENOMEM));
		goto out;
	}
	con = poptGetContext("kmsg emit", argc, av, emit_options, 0);
	if (con == NULL) {
		cli_error("emit", "%s", strerror(ENOMEM));
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
	if (o.id && parse_id(&id, o.id) < 0) {
		cli_error("--id", "'%s' is not a process id (a number from 1)", o.id);
		goto out;
	}
	if (o.caller && parse_id(&caller, o.caller) < 0) {
		cli_error("--caller", "'%s' is not a caller id (a number from 1)", o.caller);
		goto out;
	}
	if (o.size && (cli_parse_size(&size, o.size) < 0 || size == 0)) {
		cli_error("--size", "'%s' is not a size: a number with an optional K, M "
			  "or G suffix", o.size);
		goto out;
	}
	if (o.input && args) {
		cli_error(NULL, "a message and --input FILE exclude each other");
		goto out;
	}
	fields = calloc(o.nfields + 1, sizeof(*fields));
	if (fields == NULL) {
		cli_error("emit", "%s", strerror(ENOMEM));
		status = EXIT_FAIL;
		goto out;
	}
	status = build_fields(fields, &nfields, &o);
	if (status)
		goto out;
	status = EXIT_FAIL;

	if (o.input) {
		in_fd = open(o.input, O_RDONLY | O_CLOEXEC);
		if (in_fd < 0) {
			cli_error(o.input, "%s", strerror(errno));
			goto out;
		}
		input_name = o.input;
	}

	path = cli_log_path(o.file);
	if (path == NULL)
		goto out;
	em.path = path;
	em.log = cli_open_log(path, KMSG_OPEN_WRITE | (o.sync ? KMSG_OPEN_SYNC : 0), 1, size);
	if (em.log == NULL)
		goto out;
	em.max_text = KMSG_MAX_TEXT_LIMIT;

	tag = o.tag ? (*o.tag ? o.tag : NULL) : (o.log_pid ? default_tag() : NULL);
	if (tag || o.log_pid) {
		char pid[16] = "";
		size_t tl = tag ? strlen(tag) : 0;
		if (o.log_pid)
			snprintf(pid, sizeof(pid), "[%" PRIu32 "]", id ? id : (uint32_t)getpid());
		em.prefix_len = tl + strlen(pid) + 2;
		em.text = malloc(em.prefix_len + em.max_text);
		if (em.text == NULL) {
			cli_error("emit", "%s", strerror(ENOMEM));
			goto out;
		}
		memcpy(em.text, tag ? tag : "", tl);
		memcpy(em.text + tl, pid, strlen(pid));
		memcpy(em.text + em.prefix_len - 2, ": ", 2);
	}
	/* An explicit --field SYSLOG_IDENTIFIER wins over the tag's. */
	if (tag && !has_field(fields, nfields, "SYSLOG_IDENTIFIER")) {
		fields[nfields].key = "SYSLOG_IDENTIFIER";
		fields[nfields].key_len = strlen("SYSLOG_IDENTIFIER");
		fields[nfields].value = tag;
		fields[nfields].value_len = strlen(tag);
		nfields++;
	}
	em.entry.fields = nfields ? fields : NULL;
	em.entry.nfields = nfields;
	em.entry.pid = id;
	if (o.no_newline || o.cont || caller)
		em.entry.caller = continuation_caller(caller);
	em.skip_empty = o.skip_empty;
	em.prio_prefix = o.prio_prefix;
	em.fragment_last = o.no_newline;
	em.echo = o.echo;
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
