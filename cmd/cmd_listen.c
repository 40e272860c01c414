/*
 * cmd_listen.c - "kmsg listen": a syslog datagram socket (/dev/log) whose
 * messages are appended to the log.
 *
 * The listener is the one writer of its log that the kernel vouches for:
 * the sender's pid, uid and gid come with each datagram (SO_PASSCRED), and
 * are stored as the record's pid and as the fields _PID, _UID and _GID
 * (KMSG_VOUCHED); what the message says of itself (its tag, the [pid]
 * after it, its host, time, RFC 5424 structured data) is stored apart,
 * in SYSLOG_* fields, as the sender's word.
 *
 * It must never make a sender wait: /dev/log's queue holds about ten
 * datagrams, and a stalled listener hangs every program that logs.  So
 * one loop over the socket and a signalfd, each wake reading datagrams
 * until the socket is empty (a bounded batch, so that a signal is seen
 * in a flood), each into one fixed buffer that any datagram fits
 * (MSG_TRUNC is checked all the same), each appended at once: appends
 * do not wait for other writers, so the buffer is all the memory used,
 * whatever the senders do.  Nothing is dropped: what is not syslog is
 * stored as its bytes, a message longer than the log's longest text is
 * stored cut, with a field that says how long it was.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* The longest datagram on a unix socket is below 64 KiB on Linux's
 * default limits (wmem_max); one byte more shows what is longer. */
#define DGRAM_MAX (64u * 1024 + 1)
/* Datagrams read before the signals are looked at again. */
#define BATCH 1024
/* The receive queue asked for, so that a burst waits in the kernel
 * rather than at the sender (SO_RCVBUFFORCE as root, else up to
 * rmem_max). */
#define RCVBUF (8 << 20)
/* The longest value taken from a header field of a message (host, tag,
 * procid, msgid: RFC 5424 allows at most 255 bytes for any). */
#define HDR_VALUE_MAX 255
/* The most fields one record gets (credentials, header, SD params). */
#define MAX_FIELDS 128
#define DEFAULT_SOCKET "/dev/log"

enum { OPT_SOCKET = 1, OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT };

const struct poptOption listen_options[] = {
	{ "socket", 'u', POPT_ARG_STRING, NULL, OPT_SOCKET,
	  "the datagram socket to bind (default /dev/log, when no one listens there)",
	  "PATH" },
	CLI_NEW_LOG_OPTIONS(OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT),
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

struct listen_opts {
	char *socket, *file, *log_size, *max_text;
};

/* What the listener did, for its log lines on stderr. */
struct counts {
	uint64_t received, stored, truncated, unparsed, failed;
};

struct listener {
	struct kmsg_log *log;
	const char *path;       /* the log's */
	uint32_t max_text;
	struct counts n;
	char *buf;              /* DGRAM_MAX bytes */
	char *sdbuf;            /* DGRAM_MAX bytes: SD values unescaped */
	char *keys;             /* MAX_FIELDS keys of KMSG_MAX_KEY bytes */
};

static void take(char **dst, char *arg)
{
	free(*dst);
	*dst = arg;
}

static int parse_options(struct listen_opts *o, poptContext con)
{
	int rc;

	while ((rc = poptGetNextOpt(con)) > 0) {
		char *arg = poptGetOptArg(con);
		switch (rc) {
		case OPT_SOCKET:   take(&o->socket, arg); break;
		case OPT_FILE:     take(&o->file, arg); break;
		case OPT_LOG_SIZE: take(&o->log_size, arg); break;
		case OPT_MAX_TEXT: take(&o->max_text, arg); break;
		case CLI_OPT_H:    cli_help(con);
		default:           free(arg); break;
		}
	}
	if (rc < -1)
		return cli_popt_error(con, "listen", rc);
	if (poptPeekArg(con))
		return cli_usage_error("listen", poptPeekArg(con), "takes no arguments");
	return 0;
}

/* Prints "kmsg listen: ..." on stderr: what the daemon does. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("kmsg listen: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}

static void say_counts(const struct listener *l, const char *when)
{
	struct kmsg_stat st;
	char evicted[48] = "";

	if (kmsg_log_stat(&st, l->log) == 0)
		snprintf(evicted, sizeof(evicted), ", log evicted %" PRIu64, st.evicted);
	say("%s: received %" PRIu64 ", stored %" PRIu64 ", truncated %" PRIu64
	    ", unparsed %" PRIu64 ", failed %" PRIu64 "%s", when, l->n.received,
	    l->n.stored, l->n.truncated, l->n.unparsed, l->n.failed, evicted);
}

/* ---- the socket --------------------------------------------------------- */

/*
 * The socket systemd passed (sd_listen_fds(3)'s protocol: LISTEN_PID is
 * this process, LISTEN_FDS the count from fd 3): fd 3, or -1 when none
 * was passed, or -2 after saying why it cannot be used.
 */
static int activated_socket(void)
{
	const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
	int type = 0, domain = 0;
	socklen_t len = sizeof(int);
	char self[24];

	if (pid == NULL || fds == NULL)
		return -1;
	snprintf(self, sizeof(self), "%ld", (long)getpid());
	if (strcmp(pid, self) != 0)
		return -1;
	unsetenv("LISTEN_PID");
	unsetenv("LISTEN_FDS");
	unsetenv("LISTEN_FDNAMES");
	if (strcmp(fds, "1") != 0) {
		cli_error("LISTEN_FDS", "'%s': kmsg listen takes one socket", fds);
		return -2;
	}
	if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    getsockopt(3, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    type != SOCK_DGRAM || domain != AF_UNIX) {
		cli_error("LISTEN_FDS", "the socket passed is not a unix datagram socket");
		return -2;
	}
	fcntl(3, F_SETFD, FD_CLOEXEC);
	fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
	return 3;
}

/* SO_PASSCRED, which must be on before a datagram is sent to count, and
 * a receive queue as large as we may have. */
static int tune(int fd, const char *name)
{
	int one = 1, size = RCVBUF;

	if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one)) < 0)
		return cli_error(name, "SO_PASSCRED: %s", strerror(errno));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
	return 0;
}

/*
 * Whether a socket at path is one nobody listens on (a listener that
 * died): 1 if so, 0 if someone does, -errno if it cannot be told.
 */
static int stale(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	r = r == 0 ? 0 : errno == ECONNREFUSED ? 1 : -errno;
	close(fd);
	return r;
}

/*
 * Binds a datagram socket at path, mode 0666 (anyone may log, as on
 * /dev/log), taking the place of a stale socket of ours or root's and of
 * nothing else.  Returns the socket, or -1 after saying why not; *ino
 * gets the inode bound, for the unlink at the end.
 */
static int bind_socket(const char *path, struct stat *bound)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		cli_error(path, "the path is longer than a socket's %zu bytes",
			  sizeof(sa.sun_path) - 1);
		return -1;
	}
	memcpy(sa.sun_path, path, strlen(path));
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || tune(fd, path) != 0) {
		if (fd < 0)
			cli_error(path, "socket: %s", strerror(errno));
		goto fail;
	}
	for (int tries = 0;; tries++) {
		/* the mode at birth, with no moment at a wider or narrower one */
		old = umask(0111);
		r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
		umask(old);
		if (r == 0)
			break;
		if (errno != EADDRINUSE || tries > 0) {
			cli_error(path, "bind: %s", strerror(errno));
			goto fail;
		}
		/* the rules of cli_replaceable() for a socket: no link, no
		 * other kind of file, nothing another user made */
		if (lstat(path, &st) < 0) {
			cli_error(path, "%s", strerror(errno));
			goto fail;
		}
		if (S_ISLNK(st.st_mode)) {
			cli_error(path, "is a symbolic link (to a syslog daemon's socket?): "
				  "not replaced; give --socket PATH");
			goto fail;
		}
		if (!S_ISSOCK(st.st_mode)) {
			cli_error(path, "exists and is no socket: not replaced");
			goto fail;
		}
		if (st.st_uid != geteuid() && st.st_uid != 0) {
			cli_error(path, "is another user's socket: not replaced");
			goto fail;
		}
		r = stale(&sa);
		if (r == 0) {
			cli_error(path, "another listener owns the socket (a syslog "
				  "daemon, systemd-journald?): give --socket PATH");
			goto fail;
		}
		if (r < 0) {
			cli_error(path, "cannot tell whether someone listens: %s",
				  strerror(-r));
			goto fail;
		}
		if (unlink(path) < 0 && errno != ENOENT) {
			cli_error(path, "a stale socket that cannot be removed: %s",
				  strerror(errno));
			goto fail;
		}
		say("replaced the stale socket '%s'", path);
	}
	if (lstat(path, bound) < 0)
		memset(bound, 0, sizeof(*bound));
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	return -1;
}

/* ---- one message --------------------------------------------------------- */

struct fields {
	struct kmsg_field f[MAX_FIELDS];
	size_t n, bytes;
	unsigned dropped;
	char nums[6][24];
};

/* Adds a field if the record has room for it; counts it dropped if not. */
static void add(struct fields *fs, const char *key, const char *value, size_t len)
{
	size_t kl = strlen(key), need = 2 + kl + 1 + len;

	/* room is kept for SYSLOG_SD_DROPPED and SYSLOG_TRUNCATED */
	if (fs->n >= MAX_FIELDS - 2 || fs->bytes + need > KMSG_MAX_FIELDS_BYTES - 64) {
		fs->dropped++;
		return;
	}
	fs->f[fs->n++] = (struct kmsg_field){ key, kl, value, len };
	fs->bytes += need;
}

static void add_num(struct fields *fs, int slot, const char *key, uint64_t v)
{
	int len = snprintf(fs->nums[slot], sizeof(fs->nums[slot]), "%" PRIu64, v);
	add(fs, key, fs->nums[slot], (size_t)len);
}

static void add_part(struct fields *fs, const char *key, const char *v, size_t len)
{
	if (v != NULL)
		add(fs, key, v, len < HDR_VALUE_MAX ? len : HDR_VALUE_MAX);
}

/*
 * The key of an SD parameter: the SD-ID's name (before any '@'), '_' and
 * the PARAM-NAME, in upper case, each byte outside [A-Z0-9_] as '_',
 * "SD_" before it when it would not begin with a letter, cut at
 * KMSG_MAX_KEY bytes.  key has KMSG_MAX_KEY + 1 bytes.
 */
static void sd_key(char *key, const struct kmsg_syslog_sd *e)
{
	size_t n = 0, idl = e->id_len;
	const char *at = memchr(e->id, '@', e->id_len);

	if (at != NULL)
		idl = (size_t)(at - e->id);
	if (!(idl > 0 && ((e->id[0] >= 'a' && e->id[0] <= 'z') ||
			  (e->id[0] >= 'A' && e->id[0] <= 'Z'))))
		n = (size_t)sprintf(key, "SD_");
	for (size_t i = 0; i < idl + 1 + e->name_len && n < KMSG_MAX_KEY; i++) {
		char c = i < idl ? e->id[i] : i == idl ? '_' : e->name[i - idl - 1];
		if (c >= 'a' && c <= 'z')
			c = (char)(c - 'a' + 'A');
		else if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
			c = '_';
		key[n++] = c;
	}
	key[n] = '\0';
}

/* The message's own time, as RFC 3339 in the offset it was written in. */
static size_t format_time(char *out, size_t size, const struct kmsg_syslog_msg *m)
{
	time_t t = (time_t)(m->real_ns / 1000000000 + m->utc_offset);
	int32_t off = m->utc_offset < 0 ? -m->utc_offset : m->utc_offset;
	struct tm tm;
	int n;

	if (m->real_ns < 0 || gmtime_r(&t, &tm) == NULL)
		return 0;
	n = snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%06d%c%02d:%02d",
		     tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min,
		     tm.tm_sec, (int)(m->real_ns % 1000000000 / 1000),
		     m->utc_offset < 0 ? '-' : '+', off / 3600, off / 60 % 60);
	return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

/*
 * Stores one datagram of len bytes (whole is its length before the
 * receive cut it) from the sender cred names (NULL if the kernel sent
 * none).  Never drops it: what cannot be stored as parsed is stored as
 * its bytes.
 */
static void store(struct listener *l, size_t len, size_t whole, const struct ucred *cred)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_syslog_msg m;
	struct kmsg_syslog_parse_opts po = KMSG_SYSLOG_PARSE_OPTS_INIT;
	static struct fields fs;
	char when[48], *text = l->buf + DGRAM_MAX;  /* room after the datagram */
	size_t tl = 0, want, sdpos = 0;
	int raw, r;

	memset(&fs, 0, offsetof(struct fields, nums));
	kmsg_syslog_parse(&m, l->buf, len, &po);
	raw = (m.format == KMSG_SYSLOG_RAW && !(m.flags & KMSG_SYSLOG_HAS_PRI)) ||
	      (m.flags & KMSG_SYSLOG_BAD_SD);
	if (cred) {
		add_num(&fs, 0, "_PID", (uint64_t)cred->pid);
		add_num(&fs, 1, "_UID", (uint64_t)cred->uid);
		add_num(&fs, 2, "_GID", (uint64_t)cred->gid);
	}
	if (m.format != KMSG_SYSLOG_RAW) {
		add_part(&fs, "SYSLOG_IDENTIFIER", m.app, m.app_len);
		add_part(&fs, "SYSLOG_PID", m.procid, m.procid_len);
		add_part(&fs, "SYSLOG_HOSTNAME", m.hostname, m.hostname_len);
		add_part(&fs, "SYSLOG_MSGID", m.msgid, m.msgid_len);
		if (m.flags & KMSG_SYSLOG_HAS_TIME) {
			size_t wl = format_time(when, sizeof(when), &m);
			if (wl)
				add(&fs, "SYSLOG_TIMESTAMP", when, wl);
		}
	}
	if (raw)
		add(&fs, "SYSLOG_RAW", "1", 1);
	if (m.sd != NULL && !(m.flags & KMSG_SYSLOG_BAD_SD)) {
		struct kmsg_syslog_sd sd;
		char *sdout = l->sdbuf;
		size_t left = DGRAM_MAX;

		while (fs.n < MAX_FIELDS &&
		       kmsg_syslog_sd_next(&sd, sdout, left, m.sd, m.sd_len, &sdpos) == 1) {
			char *key = l->keys + fs.n * (KMSG_MAX_KEY + 1);
			if (sd.name == NULL)
				continue;
			sd_key(key, &sd);
			add(&fs, key, sd.value, sd.value_len);
			/* the next value goes after this one */
			sdout = (char *)sd.value + sd.value_len;
			left = DGRAM_MAX - (size_t)(sdout - l->sdbuf);
		}
	}
	if (fs.dropped)  /* in the room add() keeps */
		fs.f[fs.n++] = (struct kmsg_field){ "SYSLOG_FIELDS_DROPPED", 21, fs.nums[3],
			(size_t)snprintf(fs.nums[3], sizeof(fs.nums[3]), "%u", fs.dropped) };

	/* the text a dmesg line shows: "TAG[PID]: msg", as kmsg emit -t -i
	 * writes it, or the message as it came */
	if (m.format != KMSG_SYSLOG_RAW && m.app != NULL) {
		size_t al = m.app_len < HDR_VALUE_MAX ? m.app_len : HDR_VALUE_MAX;
		memcpy(text, m.app, al);
		tl = al;
		if (m.procid != NULL && m.procid_len <= HDR_VALUE_MAX) {
			text[tl++] = '[';
			memcpy(text + tl, m.procid, m.procid_len);
			tl += m.procid_len;
			text[tl++] = ']';
		}
		text[tl++] = ':';
		if (m.text_len)
			text[tl++] = ' ';
	}
	want = tl + m.text_len;
	if (m.text_len) {
		size_t room = l->max_text > tl ? l->max_text - tl : 0;
		size_t part = m.text_len < room ? m.text_len : room;
		memcpy(text + tl, m.text, part);
		tl += part;
	}
	if (tl > l->max_text)
		tl = l->max_text;
	if (whole > len || tl < want) {
		/* cut: by the receive or by the log's longest text */
		l->n.truncated++;
		fs.f[fs.n++] = (struct kmsg_field){ "SYSLOG_TRUNCATED", 16, fs.nums[4],
			(size_t)snprintf(fs.nums[4], sizeof(fs.nums[4]), "%zu", whole) };
	}
	if (raw)
		l->n.unparsed++;

	e.flags = KMSG_BEGIN | KMSG_VOUCHED;
	e.facility = m.facility == 0 ? 1 : m.facility;  /* kern is the kernel's */
	e.level = m.level;
	e.text = text;
	e.text_len = tl;
	e.fields = fs.f;
	e.nfields = fs.n;
	/* the record's pid and caller: the sender the kernel names */
	if (cred && cred->pid > 0) {
		e.pid = (uint32_t)cred->pid;
		e.caller = (uint32_t)cred->pid;
	}
	r = kmsg_log_append(NULL, l->log, &e);
	if (r == KMSG_ETOOLONG || r == KMSG_EFIELD) {
		/* what the parse made does not go: the bytes as they came,
		 * cut to the longest text, with the credentials */
		e.nfields = cred ? 3 : 0;
		e.text = l->buf;
		e.text_len = len < l->max_text ? len : l->max_text;
		r = kmsg_log_append(NULL, l->log, &e);
	}
	if (r < 0) {
		if (l->n.failed++ < 10 || l->n.failed % 10000 == 0)
			cli_lib_error(l->path, r);
		return;
	}
	l->n.stored++;
}

/*
 * Reads every datagram waiting (a batch at most), each stored at once.
 * 0, or -1 after saying why the socket failed.
 */
static int drain(struct listener *l, int fd, const char *name)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(struct ucred))];
	} ctl;

	for (int i = 0; i < BATCH; i++) {
		struct iovec iov = { l->buf, DGRAM_MAX };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
		const struct ucred *cred = NULL;
		ssize_t n = recvmsg(fd, &mh, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC);
		size_t got;

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			cli_error(name, "recvmsg: %s", strerror(errno));
			return -1;
		}
		l->n.received++;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
			    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred)))
				cred = (const struct ucred *)(void *)CMSG_DATA(c);
			else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
				/* descriptors sent along are no message: closed */
				for (int *p = (int *)(void *)CMSG_DATA(c);
				     (char *)(p + 1) <= (char *)c + c->cmsg_len; p++)
					close(*p);
		}
		got = (size_t)n < DGRAM_MAX ? (size_t)n : DGRAM_MAX;
		/* a datagram cut short says nothing more; stored as far as it came */
		store(l, got > DGRAM_MAX - 1 ? DGRAM_MAX - 1 : got,
		      (mh.msg_flags & MSG_TRUNC) || (size_t)n >= DGRAM_MAX ? (size_t)n : got,
		      cred);
	}
	return 0;
}

/* SIGHUP: the log's path opened anew (after a rotation); the old handle
 * is kept if that fails. */
static void reopen(struct listener *l, const struct kmsg_create_opts *co)
{
	struct kmsg_log *log = cli_open_log(l->path, KMSG_OPEN_WRITE, co);
	struct kmsg_stat st;

	if (log == NULL || kmsg_log_stat(&st, log) < 0) {
		kmsg_log_close(log);
		say("SIGHUP: '%s' not reopened: still appending to the log opened before",
		    l->path);
		return;
	}
	kmsg_log_close(l->log);
	l->log = log;
	l->max_text = st.max_text;
	say("SIGHUP: reopened '%s'", l->path);
}

int cmd_listen(int argc, const char **argv)
{
	struct listen_opts o = { 0 };
	struct kmsg_create_opts co = KMSG_CREATE_OPTS_INIT;
	struct listener l = { 0 };
	struct stat bound = { 0 };
	struct epoll_event ev;
	struct kmsg_stat st;
	const char *sockname = NULL;
	poptContext con;
	sigset_t sigs;
	int status = EXIT_FAIL, sock = -1, sfd = -1, ep = -1, own = 0, r;

	con = poptGetContext("kmsg listen", argc, argv, listen_options, 0);
	if (con == NULL)
		return cli_error(NULL, "%s", strerror(ENOMEM));
	status = parse_options(&o, con);
	if (status)
		goto out;
	if ((status = cli_parse_new_log(&co, "listen", o.log_size, o.max_text)) != 0)
		goto out;
	status = EXIT_USAGE;
	if (o.socket && cli_path_given("listen", "--socket", o.socket, "socket") != 0)
		goto out;
	status = EXIT_FAIL;

	l.path = cli_log_path(o.file);
	if (l.path == NULL)
		goto out;
	l.buf = malloc(2 * (size_t)DGRAM_MAX);  /* the datagram, then its text */
	l.sdbuf = malloc(DGRAM_MAX);
	l.keys = malloc(MAX_FIELDS * (KMSG_MAX_KEY + 1));
	if (!l.buf || !l.sdbuf || !l.keys) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		goto out;
	}
	l.log = cli_open_log(l.path, KMSG_OPEN_WRITE, &co);
	if (l.log == NULL)
		goto out;
	r = kmsg_log_stat(&st, l.log);
	if (r < 0) {
		cli_lib_error(l.path, r);
		goto out;
	}
	l.max_text = st.max_text;

	/* the signals come through the loop, before the socket can fill */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		cli_error("signalfd", "%s", strerror(errno));
		goto out;
	}

	sock = o.socket ? -1 : activated_socket();
	if (sock == -2)
		goto out;
	if (sock >= 0) {
		sockname = "the socket systemd passed";
		if (tune(sock, sockname) != 0)
			goto out;
	} else {
		sockname = o.socket ? o.socket : DEFAULT_SOCKET;
		sock = bind_socket(sockname, &bound);
		if (sock < 0)
			goto out;
		own = 1;
	}

	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sock };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev) < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	say("listening on '%s', appending to '%s' (pid %ld)", sockname, l.path,
	    (long)getpid());

	for (;;) {
		struct epoll_event evs[2];
		int n = epoll_wait(ep, evs, 2, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("epoll_wait", "%s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			struct signalfd_siginfo si;

			if (evs[i].data.fd == sock) {
				if (drain(&l, sock, sockname) < 0)
					goto out;
				continue;
			}
			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				switch (si.ssi_signo) {
				case SIGUSR1:
					say_counts(&l, "so far");
					break;
				case SIGHUP:
					reopen(&l, &co);
					break;
				default:
					/* what was sent before the signal is kept */
					for (int b = 0; b < 16 && drain(&l, sock, sockname) == 0 &&
					     recv(sock, NULL, 0, MSG_DONTWAIT | MSG_PEEK) >= 0; b++)
						;
					say_counts(&l, strsignal((int)si.ssi_signo));
					status = EXIT_OK;
					goto out;
				}
			}
		}
	}
out:
	if (own && sock >= 0) {
		struct stat now;
		/* the name goes with the listener, if it is still ours */
		if (lstat(sockname, &now) == 0 && now.st_ino == bound.st_ino &&
		    now.st_dev == bound.st_dev)
			unlink(sockname);
	}
	if (sock >= 0)
		close(sock);
	if (sfd >= 0)
		close(sfd);
	if (ep >= 0)
		close(ep);
	kmsg_log_close(l.log);
	free(l.buf);
	free(l.sdbuf);
	free(l.keys);
	free(o.socket);
	free(o.file);
	free(o.log_size);
	free(o.max_text);
	poptFreeContext(con);
	return status;
}
