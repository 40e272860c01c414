/*
 * syslog.c - libkmsg-syslog.so: syslog(3) as appends to a kmsg log, for a
 * program run with LD_PRELOAD or every program of a machine through
 * /etc/ld.so.preload.  kmsg(1), "PROGRAMS THAT CALL SYSLOG(3)", is the
 * user's side of it; this comment is the contract.
 *
 * WHAT IT REPLACES
 *
 * openlog, closelog, syslog, vsyslog, setlogmask, and __syslog_chk and
 * __vsyslog_chk, which programs built with -D_FORTIFY_SOURCE call
 * instead of the two before them.  These are the only symbols the
 * library exports (preload/syslog.map); libkmsg is linked into it, hidden.
 *
 * WHAT IT KEEPS OF GLIBC'S (misc/syslog.c, 2.36)
 *
 *  - The tag is openlog's ident, the caller's pointer (not a copy: a
 *    program may change the string), else program_invocation_short_name;
 *    closelog forgets it.  openlog(NULL, ...) keeps the tag there was.
 *  - LOG_PID: the pid of the process at each call, so a forked child
 *    names itself: taken at load and again in the child of each fork(2)
 *    (pthread_atfork), not by a getpid(2) per message, which costs
 *    microseconds where system calls are dear (virtual machines).  A
 *    child made without fork(3) (vfork, clone(2), _Fork) that logs
 *    before it executes another program gives its parent's pid.
 *  - The facility of openlog (a valid one other than kern), LOG_USER by
 *    default, for a priority that names none (kern, 0, is none: a program
 *    cannot write as the kernel).  Bits outside facility and level are a
 *    complaint, "syslog: unknown facility/priority: %x", logged first at
 *    the priority glibc gives it (LOG_ERR|LOG_CONS|LOG_PERROR|LOG_PID
 *    taken as a priority: auth.err), then dropped.
 *  - setlogmask: the old mask back, 0 only asks; the mask is tested before
 *    anything is formatted, so a masked call costs a few nanoseconds and
 *    reads none of its arguments.
 *  - errno: as it was on entry for "%m", and again when the call returns.
 *  - LOG_PERROR: "TAG[PID]: message" on standard error, a newline added
 *    unless the message ends with one, in one writev(2); no timestamp.
 *  - LOG_CONS, LOG_NDELAY: see FALLING BACK; LOG_NDELAY opens the log at
 *    openlog, as glibc connects its socket there.  LOG_ODELAY and
 *    LOG_NOWAIT do nothing, as in glibc.
 *
 * THE RECORD
 *
 * What kmsg listen stores for the same message from /dev/log, so that
 * kmsg read shows the two alike: text "TAG[PID]: message" (one newline at
 * its end dropped), the facility and level, SYSLOG_IDENTIFIER=TAG and,
 * with LOG_PID, SYSLOG_PID.  The record's own pid and caller are the
 * process's and the thread's, as for any append.  A facility past local7
 * (24..127, which glibc passes on though no syslogd names it) is stored as
 * user with SYSLOG_FACILITY=N.
 *
 * LONG MESSAGES
 *
 * Nothing is cut to the log's longest text: a longer message is stored in
 * parts, each as long as the log takes, cut between UTF-8 characters,
 * all but the last marked KMSG_FRAGMENT, which readers join back into one
 * line (kmsg emit --split writes the same).  A joined line holds at most
 * KMSG_MAX_TEXT_LIMIT bytes, so a message longer than that is cut there,
 * and its first part says how long it was: SYSLOG_TRUNCATED=N (as kmsg
 * listen marks what it cuts).  LOG_PERROR always shows all of it.
 *
 * THE LOG
 *
 * $KMSG_FILE if set and not empty, else /var/log/kmsg, read once when the
 * library is loaded (a program that clears its environment later keeps
 * it) and never from the environment of a set-user-ID or set-group-ID
 * program (secure_getenv: /etc/ld.so.preload reaches those).  Unlike
 * kmsg(1) there is no per-user default: syslog(3) is the machine's log.
 * It is opened for writing at the first message (or at openlog with
 * LOG_NDELAY), created with the defaults of kmsg emit if missing (its
 * directory is not), and stays open, one descriptor and one mapping,
 * until closelog.  KMSG_ONE_HOST=1 lets it be on a network file system,
 * as for kmsg(1).
 *
 * FALLING BACK
 *
 * When the log cannot be opened (no permission, no directory, not a log,
 * ...), one line on standard error says so and why, once per process
 * (a child forked after it falls back without a word),
 * and the messages go to the real syslog(3) (the next definition, found
 * with dlsym(RTLD_NEXT)), given this library's openlog settings; after
 * closelog the log is tried again.  A message an open log refuses (its
 * stopped writers hold all its room, KMSG_EBUSY) goes there too.  So
 * does glibc's handling of LOG_CONS: the real syslog(3) writes a message
 * it cannot send to /dev/console, and only messages that take that path
 * can fail at all.
 *
 * THREADS, FORK, BLOCKING
 *
 * A call takes no lock: the settings are atomics, the log handle is
 * shared (appends to one handle from many threads are safe), and an
 * append never waits for another writer beyond libkmsg's stall bound
 * (kmsg(5)).  A mutex serialises only the opening and closing of the log,
 * so only calls that find it not open yet wait, for the opening.  Calls
 * under way are counted, so that closelog closes the handle only when
 * none uses it; it waits at most a second for them, then leaves the
 * handle open rather than close it under an append.  After fork(2)
 * libkmsg gives the child's handle a file description of its own
 * (writer.c, FORK); the count and the mutex are made new in the child,
 * where no other thread is.  Not async-signal-safe, as glibc's is not.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <kmsg/kmsg.h>

#define EXPORT __attribute__((visibility("default")))

/* Text formatted on the stack up to this length; longer takes malloc. */
#define STACK_TEXT 2048
/* The longest tag stored as SYSLOG_IDENTIFIER (RFC 5424's APP-NAME and
 * kmsg listen's bound on a header value). */
#define TAG_FIELD_MAX 255
/* glibc's priority for its complaint about bad bits: INTERNALLOG. */
#define INTERNALLOG (LOG_ERR | LOG_CONS | LOG_PERROR | LOG_PID)

int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen,
		    const char *fmt, va_list ap);

/* ---- state ----------------------------------------------------------- */

static const char *_Atomic tag;          /* openlog's ident, or NULL */
static _Atomic int options;              /* openlog's LOG_* options */
static _Atomic int facility = LOG_USER;  /* shifted, as LOG_USER is */
static _Atomic int mask = 0xff;

static pthread_once_t setup_once = PTHREAD_ONCE_INIT;
static char path[PATH_MAX];              /* the log, fixed at load */
static int path_error;                   /* a $KMSG_FILE too long for path */
static unsigned open_flags = KMSG_OPEN_WRITE;

static pthread_mutex_t open_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmsg_log *_Atomic log_h;   /* the open log, or NULL */
static _Atomic unsigned users;           /* calls between log_get and log_put */
static _Atomic int unopenable;           /* the last try failed: fall back */
static _Atomic int said;                 /* the one line on stderr is out */
static _Atomic long self_pid;            /* getpid(), at load and each fork */
static _Atomic unsigned settings_gen = 1;/* bumped by openlog and closelog */
static unsigned real_gen;                /* what the real openlog was given
					    (under open_lock) */

static void (*real_openlog)(const char *, int, int);
static void (*real_closelog)(void);
static void (*real_syslog)(int, const char *, ...);

static void on_fork_child(void)
{
	atomic_store(&self_pid, (long)getpid());
	/* Only the forking thread lives on, and it is in none of these. */
	atomic_store(&users, 0);
	pthread_mutex_init(&open_lock, NULL);
}

static void setup(void)
{
	const char *env = secure_getenv("KMSG_FILE"), *one = secure_getenv("KMSG_ONE_HOST");

	if (!env || !*env)
		env = "/var/log/kmsg";
	if (strlen(env) < sizeof(path))
		memcpy(path, env, strlen(env) + 1);
	else
		path_error = -ENAMETOOLONG;  /* said when the log is opened */
	if (one && *one && strcmp(one, "0") != 0)
		open_flags |= KMSG_OPEN_ONE_HOST;
	atomic_store(&self_pid, (long)getpid());
	real_openlog = (void (*)(const char *, int, int))dlsym(RTLD_NEXT, "openlog");
	real_closelog = (void (*)(void))dlsym(RTLD_NEXT, "closelog");
	real_syslog = (void (*)(int, const char *, ...))dlsym(RTLD_NEXT, "syslog");
	pthread_atfork(NULL, NULL, on_fork_child);
}

/*
 * At load, where the environment is the program's as it started; and
 * before, when another library's constructor logs before this one's.
 */
__attribute__((constructor)) static void set_up(void)
{
	pthread_once(&setup_once, setup);
}

/* ---- the log --------------------------------------------------------- */

/* The one line a process gets when its log cannot be opened. */
static void say_unopenable(int rc)
{
	char line[PATH_MAX + 512];
	int n;

	if (atomic_exchange(&said, 1))
		return;
	n = snprintf(line, sizeof(line),
		     "libkmsg-syslog: cannot open the log '%s': %s; syslog(3) messages "
		     "of %s[%ld] go to the system's syslog instead (set KMSG_FILE to a "
		     "log it may write)\n", path_error ? "$KMSG_FILE" : path, kmsg_strerror(rc),
		     program_invocation_short_name, (long)getpid());
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
}

/*
 * Opens the log unless it is open or failed since the last closelog.
 * Returns 1 if it is open now, 0 if the caller is to fall back.
 */
static int log_open(void)
{
	struct kmsg_log *l;
	int rc, ok;

	pthread_mutex_lock(&open_lock);
	if (atomic_load(&log_h)) {
		ok = 1;
	} else if (atomic_load(&unopenable)) {
		ok = 0;
	} else {
		rc = path_error ? path_error : kmsg_log_create(&l, path, NULL, open_flags);
		ok = rc == 0;
		if (ok)
			atomic_store(&log_h, l);
		else {
			atomic_store(&unopenable, 1);
			say_unopenable(rc);
		}
	}
	pthread_mutex_unlock(&open_lock);
	return ok;
}

/*
 * The open log, counted as in use until log_put(); NULL when the caller
 * is to fall back.  The count goes up before the pointer is read, and
 * closelog clears the pointer before it reads the count (both
 * sequentially consistent): a call either sees no log or is counted.
 */
static struct kmsg_log *log_get(void)
{
	for (;;) {
		struct kmsg_log *l;

		atomic_fetch_add(&users, 1);
		if ((l = atomic_load(&log_h)) != NULL)
			return l;
		atomic_fetch_sub(&users, 1);
		if (!log_open())
			return NULL;
	}
}

static void log_put(void)
{
	atomic_fetch_sub(&users, 1);
}

/* ---- falling back ---------------------------------------------------- */

/*
 * The real syslog(3), given this library's openlog settings first when
 * they changed: pri's facility is already set, and text is the message
 * alone (the real one adds tag and pid).  LOG_PERROR is this library's
 * own, done before, so the real one is not given it.
 */
static void fall_back(int pri, const char *text)
{
	unsigned gen = atomic_load(&settings_gen);

	if (!real_syslog || !real_openlog)
		return;
	if (gen != __atomic_load_n(&real_gen, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&open_lock);
		if (real_gen != gen) {
			real_openlog(atomic_load(&tag), atomic_load(&options) & ~LOG_PERROR,
				     atomic_load(&facility));
			__atomic_store_n(&real_gen, gen, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&open_lock);
	}
	real_syslog(pri, "%s", text);
}

/* ---- one message ----------------------------------------------------- */

/*
 * Where to cut text, which goes on past room bytes, so that no UTF-8
 * character is split: room, or up to three bytes less.  Text that is not
 * UTF-8 there is cut at room.
 */
static size_t utf8_cut(const char *text, size_t room)
{
	size_t k = room;

	while (k > 0 && room - k < 3 && ((unsigned char)text[k] & 0xc0) == 0x80)
		k--;
	return k > 0 && ((unsigned char)text[k] & 0xc0) != 0x80 ? k : room;
}

/*
 * Appends text (len bytes, prefix_len of them the "TAG[PID]: " prefix) in
 * as many parts as the log's longest text needs (LONG MESSAGES); fields
 * go with the first.  0 or what kmsg_log_append() returned.
 */
static int append_parts(struct kmsg_log *l, int fac, int lev, const char *text,
			size_t len, struct kmsg_field *fields, size_t nfields)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_stat st;
	size_t max;
	int rc;

	e.facility = fac;
	e.level = lev;
	e.text = text;
	e.text_len = len;
	e.fields = fields;
	e.nfields = nfields;
	rc = kmsg_log_append(NULL, l, &e);
	if (rc != KMSG_ETOOLONG)
		return rc;
	if ((rc = kmsg_log_stat(&st, l)) < 0)
		return rc;
	max = st.max_text;
	e.flags = KMSG_BEGIN;
	while (len > 0) {
		size_t n = len > max ? utf8_cut(text, max) : len;

		e.text = text;
		e.text_len = n;
		if (n < len)
			e.flags |= KMSG_FRAGMENT;
		if ((rc = kmsg_log_append(NULL, l, &e)) < 0)
			return rc;
		e.flags = 0;
		e.fields = NULL;
		e.nfields = 0;
		text += n;
		len -= n;
	}
	return 0;
}

/* Writes "TAG[PID]: " into buf (room for it all); returns its length. */
static size_t format_prefix(char *buf, size_t room, const char *t, size_t tl, long pid)
{
	size_t n = tl < room ? tl : room;

	memcpy(buf, t, n);
	if (pid > 0 && room - n >= 24)
		n += (size_t)snprintf(buf + n, room - n, "[%ld]", pid);
	if (room - n >= 2) {
		buf[n++] = ':';
		buf[n++] = ' ';
	}
	return n;
}

/*
 * The one path of every entry point: flag is __vsyslog_chk's (> 0: the
 * fortified checks of %n), -1 for the unfortified calls.
 */
static void log_message(int pri, int flag, const char *fmt, va_list ap)
{
	int saved = errno, opts, fac, lev, n, rc = 0;
	char stack[STACK_TEXT], *buf = stack, pidbuf[24], facbuf[24], lenbuf[24];
	const char *t;
	size_t tl, prefix, len, size = sizeof(stack), stored, whole;
	long pid = 0;
	struct kmsg_field fields[4];
	size_t nf = 0;
	struct kmsg_log *l;
	va_list again;

	pthread_once(&setup_once, setup);
	if (pri & ~(LOG_PRIMASK | LOG_FACMASK)) {
		syslog(INTERNALLOG, "syslog: unknown facility/priority: %x", pri);
		pri &= LOG_PRIMASK | LOG_FACMASK;
	}
	if (!(LOG_MASK(LOG_PRI(pri)) & atomic_load_explicit(&mask, memory_order_relaxed)))
		goto out;
	if (!(pri & LOG_FACMASK))
		pri |= atomic_load_explicit(&facility, memory_order_relaxed);
	opts = atomic_load_explicit(&options, memory_order_relaxed);
	fac = LOG_FAC(pri);
	lev = LOG_PRI(pri);
	t = atomic_load_explicit(&tag, memory_order_relaxed);
	if (!t)
		t = program_invocation_short_name;
	tl = strlen(t);
	if (opts & LOG_PID)
		pid = atomic_load_explicit(&self_pid, memory_order_relaxed);

	/* the prefix fits the stack when the tag is not absurd; the
	 * message after it, formatted twice if it does not */
	if (tl + 32 > size) {
		size = tl + 32 + STACK_TEXT;
		if (!(buf = malloc(size))) {
			buf = stack;
			size = sizeof(stack);
		}
	}
	prefix = format_prefix(buf, size, t, tl, pid);
	va_copy(again, ap);
	errno = saved;
	n = flag >= 0 ? __vsnprintf_chk(buf + prefix, size - prefix, flag, size - prefix, fmt, ap)
		      : vsnprintf(buf + prefix, size - prefix, fmt, ap);
	if (n < 0)
		n = 0;  /* a format vsnprintf refuses: the prefix alone */
	whole = prefix + (size_t)n;
	if (whole >= size) {
		char *big = malloc(whole + 1);

		if (big) {
			memcpy(big, buf, prefix);
			errno = saved;
			if (flag >= 0)
				n = __vsnprintf_chk(big + prefix, whole + 1 - prefix, flag,
						    whole + 1 - prefix, fmt, again);
			else
				n = vsnprintf(big + prefix, whole + 1 - prefix, fmt, again);
			if (buf != stack)
				free(buf);
			buf = big;
			size = whole + 1;
			if (n < 0 || prefix + (size_t)n != whole)
				whole = prefix + (n > 0 ? (size_t)n : 0);
		}
	}
	va_end(again);
	len = whole < size ? whole : size - 1;  /* without memory: what fits */

	if (opts & LOG_PERROR) {
		/* up to a NUL in the message, as glibc's "%s" writes it */
		struct iovec iov[2] = { { buf, strnlen(buf, len) }, { (char *)"\n", 1 } };
		int nl = len > 0 && buf[len - 1] == '\n';
		(void)!writev(STDERR_FILENO, iov, nl ? 1 : 2);
	}

	/* the record's text: one newline at the end is the caller's habit */
	stored = len;
	if (stored > prefix && buf[stored - 1] == '\n')
		stored--;
	if (tl > 0) {
		fields[nf++] = (struct kmsg_field){ "SYSLOG_IDENTIFIER", 17, t,
						    tl < TAG_FIELD_MAX ? tl : TAG_FIELD_MAX };
	}
	if (pid > 0)
		fields[nf++] = (struct kmsg_field){ "SYSLOG_PID", 10, pidbuf,
			(size_t)snprintf(pidbuf, sizeof(pidbuf), "%ld", pid) };
	if (fac >= KMSG_NFACILITIES) {
		fields[nf++] = (struct kmsg_field){ "SYSLOG_FACILITY", 15, facbuf,
			(size_t)snprintf(facbuf, sizeof(facbuf), "%d", fac) };
		fac = LOG_FAC(LOG_USER);
	}
	if (stored > KMSG_MAX_TEXT_LIMIT || len < whole) {
		fields[nf++] = (struct kmsg_field){ "SYSLOG_TRUNCATED", 16, lenbuf,
			(size_t)snprintf(lenbuf, sizeof(lenbuf), "%zu", whole) };
		if (stored > KMSG_MAX_TEXT_LIMIT)
			stored = utf8_cut(buf, KMSG_MAX_TEXT_LIMIT);
	}

	if ((l = log_get()) != NULL) {
		rc = append_parts(l, fac, lev, buf, stored, fields, nf);
		log_put();
	}
	if (!l || rc < 0) {
		buf[len] = '\0';
		fall_back(pri, buf + prefix);
	}
	if (buf != stack)
		free(buf);
out:
	errno = saved;
}

/* ---- the interface ----------------------------------------------------- */

EXPORT void openlog(const char *ident, int option, int fac)
{
	int saved = errno;

	pthread_once(&setup_once, setup);
	if (ident)
		atomic_store(&tag, ident);
	atomic_store(&options, option);
	if (fac != 0 && !(fac & ~LOG_FACMASK))
		atomic_store(&facility, fac);
	atomic_fetch_add(&settings_gen, 1);
	if (option & LOG_NDELAY) {
		struct kmsg_log *l = log_get();
		if (l)
			log_put();
	}
	errno = saved;
}

EXPORT void closelog(void)
{
	struct kmsg_log *l;
	struct timespec t0, t, pause = { 0, 1000000 };
	int saved = errno;

	pthread_once(&setup_once, setup);
	pthread_mutex_lock(&open_lock);
	atomic_store(&tag, NULL);
	atomic_fetch_add(&settings_gen, 1);
	l = atomic_exchange(&log_h, NULL);
	if (l) {
		/* the calls that had it finish their append: a bound of
		 * libkmsg's, far below the second waited */
		clock_gettime(CLOCK_MONOTONIC, &t0);
		while (atomic_load(&users) != 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((int64_t)(t.tv_sec - t0.tv_sec) * 1000000000 + t.tv_nsec - t0.tv_nsec >=
			    1000000000) {
				l = NULL;  /* left open, never closed under one */
				break;
			}
			nanosleep(&pause, NULL);
		}
		kmsg_log_close(l);
	}
	if (atomic_exchange(&unopenable, 0) && real_closelog)
		real_closelog();
	pthread_mutex_unlock(&open_lock);
	errno = saved;
}

EXPORT int setlogmask(int pmask)
{
	return pmask != 0 ? atomic_exchange(&mask, pmask) : atomic_load(&mask);
}

EXPORT void vsyslog(int pri, const char *fmt, va_list ap)
{
	log_message(pri, -1, fmt, ap);
}

EXPORT void syslog(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_message(pri, -1, fmt, ap);
	va_end(ap);
}

EXPORT void __vsyslog_chk(int pri, int flag, const char *fmt, va_list ap)
{
	log_message(pri, flag > 0 ? flag : 0, fmt, ap);
}

EXPORT void __syslog_chk(int pri, int flag, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_message(pri, flag > 0 ? flag : 0, fmt, ap);
	va_end(ap);
}
