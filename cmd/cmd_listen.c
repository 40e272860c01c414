/*
 * cmd_listen.c - "kmsg listen": a syslog socket (/dev/log), datagram or
 * stream, whose messages are appended to the log.
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
 *
 * A stream socket (--stream, or one systemd passes) is served by the same
 * loop: each connection is non-blocking, read once a wake so that none
 * starves the others, into a buffer of its own of one longest frame, so
 * that memory is bounded by the number of connections (CONN_MAX), however
 * the clients behave.  Its framing (RFC 6587) is told by its first byte,
 * as rsyslog tells it: a digit begins octet counting ("LEN SP MSG"),
 * anything else messages that end at a LF or a NUL.  A frame that does
 * not fit is never held whole: a line longer than FRAME_MAX is stored cut
 * and the rest of it is skipped up to its end; an octet count past
 * FRAME_MAX, or no count where one is due, is bad framing, and the
 * connection is read as lines from there, as rsyslog does.  The kernel
 * attaches its sender's credentials to each write on a stream too
 * (SO_PASSCRED), and no read joins two writers' bytes: a frame is the
 * process's whose write began it.
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
/* Datagrams one recvmmsg takes: more than the socket's queue holds
 * (net.unix.max_dgram_qlen, 10 by default), so that one call empties it.
 * The senders the reads wake then wait for the call's end, not each
 * read's: on a busy machine a woken sender takes the CPU from the
 * listener at the end of each system call.  Each datagram has a buffer
 * that any fits; their pages are touched only as far as the datagrams
 * reach. */
#define VLEN 16
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
/* The longest frame a stream connection holds whole: a datagram's. */
#define FRAME_MAX (64u * 1024)
/* A connection's buffer: a frame, and its octet count before it. */
#define CONN_BUF (FRAME_MAX + 16)
/* Connections served at once; when all are taken, the one silent
 * longest gives its place to a new one if it has been silent this long
 * (ms); else the new one is refused. */
#define CONN_MAX 64
#define CONN_IDLE_MS 1000
/* The epoll data of the socket and the signalfd; a connection's is its
 * slot + CONN_BASE. */
enum { EV_SOCK, EV_SIGNAL, CONN_BASE };

enum { OPT_SOCKET = 1, OPT_STREAM, OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT };

const struct poptOption listen_options[] = {
	{ "socket", 'u', POPT_ARG_STRING, NULL, OPT_SOCKET,
	  "the socket to bind (default /dev/log, when no one listens there)",
	  "PATH" },
	{ "stream", '\0', POPT_ARG_NONE, NULL, OPT_STREAM,
	  "bind a stream socket (SOCK_STREAM) rather than a datagram one", NULL },
	CLI_NEW_LOG_OPTIONS(OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT),
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

struct listen_opts {
	char *socket, *file, *log_size, *max_text;
	int stream;
};

/* What the listener did, for its log lines on stderr. */
struct counts {
	uint64_t received, stored, truncated, unparsed, failed;
	/* a stream's: connections accepted, closed for a newcomer, times
	 * newcomers had to wait (all taken); frames that broke their
	 * framing, lines stored cut */
	uint64_t connections, evicted, refused, badframes, longlines;
};

enum { FRAMING_NEW, FRAMING_OCTET, FRAMING_LINE };

/* One connection to a stream socket. */
struct conn {
	int fd;                 /* -1: the slot is free */
	int framing;            /* FRAMING_*: told by the first byte */
	char *buf;              /* CONN_BUF bytes: a frame begun, from buf[0] */
	size_t len;
	uint64_t cut;           /* a line longer than FRAME_MAX, whose first
	                           FRAME_MAX bytes buf holds: its length so
	                           far, the rest being skipped; else 0 */
	struct ucred cred;      /* of the write in which buf's frame began */
	struct ucred peer;      /* SO_PEERCRED: who connected */
	uint64_t active_ms;     /* when bytes last came */
};

struct listener {
	struct kmsg_log *log;
	const char *path;       /* the log's */
	uint32_t max_text;
	struct counts n;
	char *buf;              /* VLEN datagrams of DGRAM_MAX bytes */
	char *text;             /* DGRAM_MAX bytes: a record's text */
	char *sdbuf;            /* DGRAM_MAX bytes: SD values unescaped */
	char *keys;             /* MAX_FIELDS keys of KMSG_MAX_KEY bytes */
	int stream;             /* the socket is SOCK_STREAM */
	int ep;                 /* the epoll the connections join */
	char *spill;            /* CONN_BUF bytes: what a cut line reads */
	struct conn conns[CONN_MAX];
	size_t nconns;
	uint64_t paused_ms;     /* when accepting stopped (all taken), or 0 */
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
		case OPT_STREAM:   o->stream = 1; free(arg); break;
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
	if (l->stream)
		say("%s: connections %" PRIu64 " (open %zu), closed for a newcomer %"
		    PRIu64 ", waits %" PRIu64 ", bad framing %" PRIu64
		    ", lines cut %" PRIu64, when, l->n.connections, l->nconns,
		    l->n.evicted, l->n.refused, l->n.badframes, l->n.longlines);
}

/* Whether the nth time of a thing a flood repeats is said: the first
 * ten, then every ten thousandth. */
static int worth_saying(uint64_t n)
{
	return n <= 10 || n % 10000 == 0;
}

/* ---- the socket --------------------------------------------------------- */

/*
 * The socket systemd passed (sd_listen_fds(3)'s protocol: LISTEN_PID is
 * this process, LISTEN_FDS the count from fd 3): fd 3, or -1 when none
 * was passed, or -2 after saying why it cannot be used.  *stream tells
 * its type, as the kernel has it.
 */
static int activated_socket(int *stream)
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
	    (type != SOCK_DGRAM && type != SOCK_STREAM) || domain != AF_UNIX) {
		cli_error("LISTEN_FDS", "the socket passed is not a unix datagram or "
			  "stream socket");
		return -2;
	}
	*stream = type == SOCK_STREAM;
	/* (systemd's is listening already: this only sets the backlog) */
	if (*stream && listen(3, SOMAXCONN) < 0) {
		cli_error("LISTEN_FDS", "listen: %s", strerror(errno));
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
 * died): 1 if so, 0 if someone does, -errno if it cannot be told.  The
 * socket may be of either type: a datagram connect to a stream socket
 * fails with EPROTOTYPE, and the stream one is tried.
 */
static int stale(const struct sockaddr_un *sa)
{
	static const int types[] = { SOCK_DGRAM, SOCK_STREAM };
	int r = -EPROTOTYPE;

	for (size_t i = 0; i < 2 && r == -EPROTOTYPE; i++) {
		int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

		if (fd < 0)
			return -errno;
		r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
		/* EAGAIN: a stream listener's backlog is full; it lives */
		r = r == 0 || errno == EAGAIN ? 0 : errno == ECONNREFUSED ? 1 : -errno;
		close(fd);
	}
	return r;
}

/*
 * Binds a datagram socket at path (a listening stream socket if stream),
 * mode 0666 (anyone may log, as on /dev/log), taking the place of a stale
 * socket of ours or root's and of nothing else.  Returns the socket, or
 * -1 after saying why not; *bound gets the inode bound, for the unlink
 * at the end.
 */
static int bind_socket(const char *path, int stream, struct stat *bound)
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
	fd = socket(AF_UNIX, (stream ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC |
		    SOCK_NONBLOCK, 0);
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
	if (stream && listen(fd, SOMAXCONN) < 0) {
		cli_error(path, "listen: %s", strerror(errno));
		goto fail;
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
 * Stores one message, the len bytes at msg (whole is its length before
 * the receive or the framing cut it), from the sender cred names (NULL if
 * the kernel named none).  Never drops it: what cannot be stored as
 * parsed is stored as its bytes.
 */
static void store(struct listener *l, const char *msg, size_t len, uint64_t whole,
		  const struct ucred *cred)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_syslog_msg m;
	struct kmsg_syslog_parse_opts po = KMSG_SYSLOG_PARSE_OPTS_INIT;
	static struct fields fs;
	char when[48], *text = l->text;
	size_t tl = 0, want, sdpos = 0;
	int raw, r;

	memset(&fs, 0, offsetof(struct fields, nums));
	l->n.received++;
	kmsg_syslog_parse(&m, msg, len, &po);
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
			(size_t)snprintf(fs.nums[4], sizeof(fs.nums[4]), "%" PRIu64, whole) };
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
		e.text = msg;
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

/* Room for the credentials of a message and nothing else: descriptors
 * sent along do not fit, and the kernel closes them (MSG_CTRUNC). */
union control {
	struct cmsghdr align;
	char buf[CMSG_SPACE(sizeof(struct ucred))];
};

/* The credentials a received message carries, or NULL; descriptors
 * sent along are no message, and are closed. */
static const struct ucred *credentials(struct msghdr *mh)
{
	const struct ucred *cred = NULL;

	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len >= CMSG_LEN(sizeof(struct ucred)))
			cred = (const struct ucred *)(void *)CMSG_DATA(c);
		else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS)
			for (int *p = (int *)(void *)CMSG_DATA(c);
			     (char *)(p + 1) <= (char *)c + c->cmsg_len; p++)
				close(*p);
	}
	return cred;
}

/*
 * Reads every datagram waiting (a batch at most), VLEN a call, each
 * stored at once.  0, or -1 after saying why the socket failed.
 */
static int drain(struct listener *l, int fd, const char *name)
{
	static union control ctl[VLEN];
	struct mmsghdr mm[VLEN];
	struct iovec iov[VLEN];

	for (int done = 0; done < BATCH;) {
		int n;

		for (int i = 0; i < VLEN; i++) {
			iov[i] = (struct iovec){ l->buf + (size_t)i * DGRAM_MAX, DGRAM_MAX };
			mm[i].msg_hdr = (struct msghdr){ .msg_iov = &iov[i], .msg_iovlen = 1,
				.msg_control = ctl[i].buf, .msg_controllen = sizeof(ctl[i].buf) };
		}
		/* MSG_TRUNC: each msg_len is the datagram's length, even
		 * past its buffer */
		n = recvmmsg(fd, mm, VLEN, MSG_DONTWAIT | MSG_TRUNC | MSG_CMSG_CLOEXEC, NULL);
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			cli_error(name, "recvmmsg: %s", strerror(errno));
			return -1;
		}
		for (int i = 0; i < n; i++) {
			size_t len = mm[i].msg_len, got = len < DGRAM_MAX - 1 ? len : DGRAM_MAX - 1;

			/* a datagram cut short says nothing more; stored as far
			 * as it came */
			store(l, iov[i].iov_base, got,
			      (mm[i].msg_hdr.msg_flags & MSG_TRUNC) || len >= DGRAM_MAX ? len : got,
			      credentials(&mm[i].msg_hdr));
		}
		/* fewer than asked: the queue was empty */
		if (n < VLEN)
			return 0;
		done += n;
	}
	return 0;
}

/* ---- a stream's connections ---------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Where a line ends (a LF, or a NUL as glibc's syslog(3) ends a message
 * on a stream) in the len bytes at p, or NULL. */
static const char *line_end(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] == '\n' || p[i] == '\0')
			return p + i;
	return NULL;
}

/* Says that connection c broke its framing (why), the first times. */
static void bad_framing(struct listener *l, const struct conn *c, const char *why)
{
	if (worth_saying(++l->n.badframes))
		say("connection of pid %ld (uid %ld): %s: bad framing; read as lines "
		    "from there", (long)c->peer.pid, (long)c->peer.uid, why);
}

/*
 * Stores every whole frame at the front of c's buffer, and keeps what
 * follows, the beginning of a frame, at its front; a frame that began
 * before this read is c->cred's, one that begins in it cred's.  A line
 * that fills the buffer without ending is stored cut when it ends
 * (c->cut).
 */
static void frames(struct listener *l, struct conn *c, const struct ucred *cred)
{
	size_t pos = 0;

	while (pos < c->len) {
		const char *p = c->buf + pos, *end;
		size_t n = c->len - pos, off, mlen;
		int r;

		if (c->framing == FRAMING_NEW)
			c->framing = p[0] >= '1' && p[0] <= '9' ? FRAMING_OCTET : FRAMING_LINE;
		if (c->framing == FRAMING_OCTET) {
			/* a LF or NUL some senders put between frames */
			if (p[0] == '\n' || p[0] == '\0') {
				pos++;
				continue;
			}
			r = kmsg_syslog_frame(&off, &mlen, p, n, FRAME_MAX);
			if (r == 0)
				break;
			if (r == 1) {
				store(l, p + off, mlen, mlen, &c->cred);
				pos += off + mlen;
				c->cred = *cred;
				continue;
			}
			/* a count no frame this long has, or none: rsyslog
			 * reads on as lines, and so nothing is lost */
			bad_framing(l, c, r == KMSG_ETOOLONG ?
				    "an octet count past 64 KiB" : "no octet count");
			c->framing = FRAMING_LINE;
		}
		end = line_end(p, n);
		if (end != NULL) {
			if (end > p)  /* no empty records of "\n\n" or "\n\0" */
				store(l, p, (size_t)(end - p), (uint64_t)(end - p), &c->cred);
			pos += (size_t)(end - p) + 1;
			c->cred = *cred;
			continue;
		}
		if (n >= FRAME_MAX) {
			/* its first FRAME_MAX bytes stay, the rest is skipped */
			if (worth_saying(++l->n.longlines))
				say("connection of pid %ld (uid %ld): a line longer than %u "
				    "bytes: stored cut when it ends, the rest skipped",
				    (long)c->peer.pid, (long)c->peer.uid, FRAME_MAX);
			memmove(c->buf, p, FRAME_MAX);
			c->cut = n;
			c->len = FRAME_MAX;
			return;
		}
		break;
	}
	c->len -= pos;
	memmove(c->buf, c->buf + pos, c->len);
}

/* Closes connection c, storing what it left begun: an unterminated line
 * as a message (a sender's last may have no LF), a frame cut short by the
 * close as far as it came, with the length it announced. */
static void conn_close(struct listener *l, struct conn *c)
{
	size_t off, mlen;

	if (c->cut)
		store(l, c->buf, c->len, c->cut, &c->cred);
	else if (c->len && c->framing == FRAMING_OCTET &&
		 kmsg_syslog_frame(&off, &mlen, c->buf, c->len, FRAME_MAX) == 0 &&
		 memchr(c->buf, ' ', c->len) != NULL) {
		off = (size_t)((const char *)memchr(c->buf, ' ', c->len) - c->buf) + 1;
		store(l, c->buf + off, c->len - off, strtoull(c->buf, NULL, 10), &c->cred);
	} else if (c->len)
		store(l, c->buf, c->len, c->len, &c->cred);
	close(c->fd);
	free(c->buf);
	*c = (struct conn){ .fd = -1 };
	l->nconns--;
}

/*
 * Reads what connection c has (one read: the others get their turn) and
 * stores the frames it completes; at its end, or an error, closes it.
 * Returns 1 if bytes came, else 0.
 */
static int conn_read(struct listener *l, struct conn *c)
{
	union control ctl;
	struct iovec iov;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
			     .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf) };
	const struct ucred *cred;
	const char *end;
	ssize_t n;

	/* a cut line's rest goes to the spill, where its end is looked for */
	iov = c->cut ? (struct iovec){ l->spill, CONN_BUF }
		     : (struct iovec){ c->buf + c->len, CONN_BUF - c->len };
	n = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		conn_close(l, c);
		return 0;
	}
	c->active_ms = now_ms();
	cred = credentials(&mh);
	if (cred == NULL)
		cred = &c->peer;
	if (c->len == 0 && !c->cut)
		c->cred = *cred;
	if (!c->cut) {
		c->len += (size_t)n;
		frames(l, c, cred);
		return 1;
	}
	end = line_end(l->spill, (size_t)n);
	if (end == NULL) {
		c->cut += (uint64_t)n;
		return 1;
	}
	c->cut += (uint64_t)(end - l->spill);
	store(l, c->buf, c->len, c->cut, &c->cred);
	c->cut = 0;
	c->len = (size_t)n - (size_t)(end - l->spill) - 1;
	memcpy(c->buf, end + 1, c->len);
	c->cred = *cred;
	frames(l, c, cred);
	return 1;
}

/* Reads what connection c still has (as much as a few reads take), then
 * closes it. */
static void conn_finish(struct listener *l, struct conn *c)
{
	for (int i = 0; i < 16 && conn_read(l, c); i++)
		;
	if (c->fd >= 0)
		conn_close(l, c);
}

/* Watches the stream socket for connections again, or no more (paused:
 * they wait in its backlog, which is the kernel's, and its senders with
 * them). */
static void watch_socket(struct listener *l, int sock, int on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.u64 = EV_SOCK };

	epoll_ctl(l->ep, EPOLL_CTL_MOD, sock, &ev);
	l->paused_ms = on ? 0 : now_ms();
}

/*
 * Accepts the connections waiting on the stream socket sock (a batch at
 * most).  When all CONN_MAX slots are taken, the connection silent
 * longest is closed for a newcomer if it has been silent CONN_IDLE_MS;
 * else the newcomers wait in the socket's backlog, the socket unwatched,
 * until the loop looks again (CONN_IDLE_MS / 10 later).
 */
static void conn_accept(struct listener *l, int sock)
{
	for (int i = 0; i < CONN_MAX; i++) {
		struct ucred peer = { .pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1 };
		socklen_t len = sizeof(peer);
		struct epoll_event ev;
		struct conn *c = NULL;
		uint64_t now = now_ms();
		int fd, one = 1;

		for (size_t k = 0; k < CONN_MAX && (c == NULL || c->fd >= 0); k++)
			if (c == NULL || l->conns[k].fd < 0 ||
			    l->conns[k].active_ms < c->active_ms)
				c = &l->conns[k];
		if (c->fd >= 0 && now - c->active_ms < CONN_IDLE_MS) {
			if (worth_saying(++l->n.refused))
				say("%d connections open, none silent for %d ms: new ones "
				    "wait", CONN_MAX, CONN_IDLE_MS);
			watch_socket(l, sock, 0);
			return;
		}
		fd = accept4(sock, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;  /* EAGAIN, or a client gone before its accept */
		getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &len);
		if (c->fd >= 0) {
			if (worth_saying(++l->n.evicted))
				say("%d connections open: the one of pid %ld, silent for %"
				    PRIu64 " ms, closed for pid %ld's", CONN_MAX,
				    (long)c->peer.pid, now - c->active_ms, (long)peer.pid);
			/* what it sent before is kept */
			conn_finish(l, c);
		}
		*c = (struct conn){ .fd = fd, .peer = peer, .cred = peer, .active_ms = now,
				    .buf = malloc(CONN_BUF) };
		ev = (struct epoll_event){ .events = EPOLLIN | EPOLLRDHUP,
					   .data.u64 = CONN_BASE + (uint64_t)(c - l->conns) };
		setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &one, sizeof(one));
		if (c->buf == NULL || epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0) {
			say("pid %ld's connection closed: %s", (long)peer.pid,
			    strerror(c->buf ? errno : ENOMEM));
			close(fd);
			free(c->buf);
			*c = (struct conn){ .fd = -1 };
			continue;
		}
		l->nconns++;
		l->n.connections++;
	}
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
	l.buf = malloc(VLEN * (size_t)DGRAM_MAX);
	l.text = malloc(DGRAM_MAX);
	l.sdbuf = malloc(DGRAM_MAX);
	l.keys = malloc(MAX_FIELDS * (KMSG_MAX_KEY + 1));
	l.ep = -1;
	for (size_t i = 0; i < CONN_MAX; i++)
		l.conns[i].fd = -1;
	if (!l.buf || !l.text || !l.sdbuf || !l.keys) {
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

	sock = o.socket ? -1 : activated_socket(&l.stream);
	if (sock == -2)
		goto out;
	if (sock >= 0) {
		sockname = "the socket systemd passed";
		if (tune(sock, sockname) != 0)
			goto out;
	} else {
		sockname = o.socket ? o.socket : DEFAULT_SOCKET;
		l.stream = o.stream;
		sock = bind_socket(sockname, l.stream, &bound);
		if (sock < 0)
			goto out;
		own = 1;
	}

	if (l.stream && (l.spill = malloc(CONN_BUF)) == NULL) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		goto out;
	}
	ep = l.ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = EV_SOCK };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sock, &ev) < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.u64 = EV_SIGNAL };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) < 0) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}
	say("listening on '%s'%s, appending to '%s' (pid %ld)", sockname,
	    l.stream ? " (stream)" : "", l.path, (long)getpid());

	for (;;) {
		struct epoll_event evs[16];
		int n;

		/* a slot freed, or one may have fallen silent long enough */
		if (l.paused_ms && (l.nconns < CONN_MAX ||
				    now_ms() - l.paused_ms >= CONN_IDLE_MS / 10))
			watch_socket(&l, sock, 1);
		n = epoll_wait(ep, evs, 16, l.paused_ms ? CONN_IDLE_MS / 10 : -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error("epoll_wait", "%s", strerror(errno));
			goto out;
		}
		for (int i = 0; i < n; i++) {
			struct signalfd_siginfo si;
			uint64_t what = evs[i].data.u64;

			if (what >= CONN_BASE) {
				/* (closed earlier in this batch for a newcomer: then
				 * the slot is the newcomer's, and the read finds
				 * nothing or its bytes) */
				if (l.conns[what - CONN_BASE].fd >= 0)
					conn_read(&l, &l.conns[what - CONN_BASE]);
				continue;
			}
			if (what == EV_SOCK) {
				if (l.stream)
					conn_accept(&l, sock);
				else if (drain(&l, sock, sockname) < 0)
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
					for (int b = 0; !l.stream && b < 16 &&
					     drain(&l, sock, sockname) == 0 &&
					     recv(sock, NULL, 0, MSG_DONTWAIT | MSG_PEEK) >= 0; b++)
						;
					/* and what connected before it */
					if (l.stream && !l.paused_ms)
						conn_accept(&l, sock);
					for (size_t c = 0; c < CONN_MAX; c++)
						if (l.conns[c].fd >= 0)
							conn_finish(&l, &l.conns[c]);
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
	for (size_t c = 0; c < CONN_MAX; c++)
		if (l.conns[c].fd >= 0) {
			close(l.conns[c].fd);
			free(l.conns[c].buf);
		}
	if (sock >= 0)
		close(sock);
	if (sfd >= 0)
		close(sfd);
	if (ep >= 0)
		close(ep);
	kmsg_log_close(l.log);
	free(l.buf);
	free(l.text);
	free(l.sdbuf);
	free(l.keys);
	free(l.spill);
	free(o.socket);
	free(o.file);
	free(o.log_size);
	free(o.max_text);
	poptFreeContext(con);
	return status;
}
