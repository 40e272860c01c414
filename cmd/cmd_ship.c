/*
 * cmd_ship.c - "kmsg ship": follows a log and forwards every record that
 * passes read's filters to a syslog collector (--to URL), resuming after
 * a restart where delivery stopped (--cursor-file).
 *
 * The ring is the buffer.  The shipper reads records with the library's
 * reader, formats each as one syslog message (kmsg_syslog_format(), with
 * the record's number and the log's ring id in the structured data),
 * queues it to the protocol while the window has room, and keeps of each
 * message in flight only its number and the reader's position after it.
 * When the protocol says records were delivered (ship.h: what that means
 * for each), the delivered position moves on, and with it the cursor file,
 * replaced whole (cursor.c) at most every 200 ms and at the end.  When a
 * connection is lost, the reader goes back to the first record not
 * delivered and reads it again from the log on the next connection: so a
 * record is sent again at most once per lost connection, and after a
 * crash at most the window and the deliveries of the last 200 ms are.
 * Records the writers evicted before they were delivered are counted,
 * said on stderr and sent to the collector as one message of their own.
 *
 * One loop: poll() over a signalfd, the connection's socket and an
 * eventfd that a small waiter thread writes when the log has new records
 * (the library's wait is a futex, which no poll can watch: the thread
 * sleeps on it with a reader of its own, and only when the shipper has
 * read everything and asked it to).  Backoff and the delivery checks are
 * poll's timeout.
 */
#define _GNU_SOURCE
#include "output.h"
#include "cursor.h"
#include "grep.h"
#include "matches.h"
#include "ship.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* Protocols whose files are not built are absent (NULL). */
#pragma weak ship_tls
#pragma weak ship_relp
#pragma weak ship_http

#define DEFAULT_SD_ID "kmsg@32473"
#define DEFAULT_WINDOW 1024
#define DEFAULT_WINDOW_BYTES (1u << 20)
#define MAX_WINDOW 65536
#define BACKOFF_FIRST_MS 500
#define DEFAULT_RETRY_MAX_S 30
/* After SIGTERM: how long what was sent may take to be delivered. */
#define STOP_WAIT_MS 5000
/* The longest the delivery checks wait while nothing changes. */
#define TICK_MAX_MS 500
/* How often the lag is said while the shipper is behind. */
#define LAG_EVERY_NS (INT64_C(60) * 1000000000)
#define NS_PER_MS INT64_C(1000000)
/* How often the cursor file follows the deliveries, at most: what a
 * crash sends again is the window and the deliveries of this long. */
#define CURSOR_EVERY_NS (200 * NS_PER_MS)

enum {
	OPT_TO = 1, OPT_FORMAT, OPT_SD_ID, OPT_HOSTNAME, OPT_WINDOW, OPT_WINDOW_BYTES,
	OPT_RETRY_MAX, OPT_FROM_END, OPT_FILE, OPT_CA, OPT_CERT, OPT_KEY, OPT_SERVER_NAME,
	OPT_TLS,
};

/* What the options said (copies: popt's strings do not last). */
struct ship_opts {
	char *to, *format, *sd_id, *hostname, *window, *window_bytes, *retry_max, *file;
	char *ca, *cert, *key, *server_name;
	int from_end, tls;
};

static void on_option(void *state, int val, const char *arg)
{
	struct ship_opts *o = state;

	switch (val) {
	case OPT_TO:           cli_keep(&o->to, arg); break;
	case OPT_FORMAT:       cli_keep(&o->format, arg); break;
	case OPT_SD_ID:        cli_keep(&o->sd_id, arg); break;
	case OPT_HOSTNAME:     cli_keep(&o->hostname, arg); break;
	case OPT_WINDOW:       cli_keep(&o->window, arg); break;
	case OPT_WINDOW_BYTES: cli_keep(&o->window_bytes, arg); break;
	case OPT_RETRY_MAX:    cli_keep(&o->retry_max, arg); break;
	case OPT_FILE:         cli_keep(&o->file, arg); break;
	case OPT_CA:           cli_keep(&o->ca, arg); break;
	case OPT_CERT:         cli_keep(&o->cert, arg); break;
	case OPT_KEY:          cli_keep(&o->key, arg); break;
	case OPT_SERVER_NAME:  cli_keep(&o->server_name, arg); break;
	case OPT_FROM_END:     o->from_end = 1; break;
	case OPT_TLS:          o->tls = 1; break;
	}
}

static struct cli_option_handler handler = { on_option, NULL };

static const struct poptOption own_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "to", '\0', POPT_ARG_STRING, NULL, OPT_TO,
	  "the collector: tcp://HOST:PORT, tls://HOST:PORT, udp://HOST:PORT, "
	  "relp://HOST:PORT, unix:PATH (a datagram socket), http://HOST:PORT", "URL" },
	{ "format", '\0', POPT_ARG_STRING, NULL, OPT_FORMAT,
	  "rfc5424 (default) or rfc3164 (udp and unix only)", "FORMAT" },
	{ "sd-id", '\0', POPT_ARG_STRING, NULL, OPT_SD_ID,
	  "the SD-ID of the record's structured data (default kmsg@32473; "
	  "give your own enterprise number)", "NAME@PEN" },
	{ "hostname", '\0', POPT_ARG_STRING, NULL, OPT_HOSTNAME,
	  "the HOSTNAME sent (default this machine's name)", "NAME" },
	{ "window", '\0', POPT_ARG_STRING, NULL, OPT_WINDOW,
	  "records sent and not yet delivered, at most (default 1024)", "N" },
	{ "window-bytes", '\0', POPT_ARG_STRING, NULL, OPT_WINDOW_BYTES,
	  "bytes of them, at most (default 1M)", "SIZE" },
	{ "retry-max", '\0', POPT_ARG_STRING, NULL, OPT_RETRY_MAX,
	  "the longest wait between attempts to connect (default 30)", "SECONDS" },
	{ "from-end", '\0', POPT_ARG_NONE, NULL, OPT_FROM_END,
	  "with no cursor, ship only records written from now on (default: from "
	  "the oldest record in the log)", NULL },
	{ "file", 'F', POPT_ARG_STRING, NULL, OPT_FILE,
	  "the log to ship (default $KMSG_FILE, else the user's log)", "PATH" },
	{ "tls", '\0', POPT_ARG_NONE, NULL, OPT_TLS,
	  "relp:// over TLS", NULL },
	{ "tls-ca", '\0', POPT_ARG_STRING, NULL, OPT_CA,
	  "TLS: the certificates that may sign the collector's", "FILE" },
	{ "tls-cert", '\0', POPT_ARG_STRING, NULL, OPT_CERT,
	  "TLS: this sender's certificate", "FILE" },
	{ "tls-key", '\0', POPT_ARG_STRING, NULL, OPT_KEY,
	  "TLS: its private key", "FILE" },
	{ "tls-name", '\0', POPT_ARG_STRING, NULL, OPT_SERVER_NAME,
	  "TLS: the name the collector's certificate must hold (default its host)",
	  "NAME" },
	POPT_TABLEEND
};

const struct poptOption ship_options[] = {
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)own_options, 0,
	  "Shipping:", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)cursor_options, 0,
	  "Cursors (journalctl's options):", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_options, 0,
	  "Filters (read's; --utc sends times in UTC; the format options are "
	  "refused):", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_human_options, 0,
	  NULL, NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)grep_options, 0,
	  "Text and writer filters:", NULL },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

/* A message formatted and not yet queued: the record's, or the news of
 * records lost before it. */
struct pending {
	char *buf;
	size_t len, cap;
	uint64_t seq;
	int64_t real_ns;
	struct kmsg_position after;  /* where reading stands after it */
};

/* A message queued and not yet delivered. */
struct flight {
	uint64_t seq;
	int64_t real_ns;
	struct kmsg_position after;
};

/* The waiter thread: sleeps on the log's futex for the shipper. */
struct waiter {
	struct kmsg_log *log;    /* a handle of its own */
	struct kmsg_reader *r;
	int arm[2];              /* the shipper writes where it is, 8 bytes */
	int efd;                 /* written when records are there */
	int armed;               /* the shipper's: asked and not yet answered */
	int started;
	pthread_t t;
	atomic_int stop;         /* waiter_stop(): end now */
};

struct shipper {
	const char *path, *url;
	struct kmsg_log *log;
	struct kmsg_reader *r;
	uint8_t ring_id[16];
	struct output *o;
	struct cursor *cur;
	struct kmsg_syslog_fmt_opts fo;
	struct kmsg_fmt *exp;    /* the protocol takes Journal Export entries */

	const struct ship_proto *proto;
	struct ship_target t;
	struct ship_conn *conn;
	int up;                  /* room() said yes since the connect */
	int closing;             /* close() called at the end */
	int64_t retry_at;        /* CLOCK_MONOTONIC: the next connect */
	int backoff_ms, retry_max_ms;
	int tick_ms;

	struct pending held[2];
	size_t nheld;
	struct flight *fl;       /* a ring of t.window_msgs entries */
	size_t fl_head, fl_n;
	struct kmsg_position delivered;  /* every record below .next is done */
	int have_delivered;
	int caught_up;           /* said since the last connect */
	int at_end;              /* the reader has nothing more now */

	uint64_t high;           /* the highest number queued, +1 */
	uint64_t n_delivered, n_resent, n_lost, n_cut, n_sent;
	int64_t lag_said_ns;
	struct waiter w;
};

/* Prints "kmsg ship: URL: ..." on stderr: what the daemon does. */
static void say(const struct shipper *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void say(const struct shipper *s, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kmsg ship: %s: ", s->url);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- the waiter thread -------------------------------------------------- */

/*
 * Waits for "arm" words (the number the shipper reads next), and for each
 * sleeps until the log has a record from that number on, then writes the
 * eventfd.  Ends when the pipe closes.  Its reader and handle are its
 * own: nothing of the shipper's is touched.
 */
static void *waiter_main(void *arg)
{
	struct waiter *w = arg;
	uint64_t at, one = 1;

	while (read(w->arm[0], &at, sizeof(at)) == (ssize_t)sizeof(at)) {
		int rc = kmsg_reader_seek_seq(w->r, at);

		while (rc == 0 || (rc == -EINTR && !atomic_load(&w->stop)))
			rc = kmsg_reader_wait(w->r, -1);
		if (atomic_load(&w->stop))
			break;
		/* an error wakes the shipper too: its own read says what */
		if (write(w->efd, &one, sizeof(one)) < 0)
			break;
	}
	return NULL;
}

/* SIGUSR2 interrupts the waiter's sleep at the end (waiter_stop()). */
static void on_wake(int sig)
{
	(void)sig;
}

static int waiter_start(struct waiter *w, const char *path)
{
	sigset_t all, old;
	int rc;

	w->arm[0] = w->arm[1] = w->efd = -1;
	rc = kmsg_log_open(&w->log, path, 0);
	if (rc == 0)
		rc = kmsg_reader_new(&w->r, w->log, 0);
	if (rc < 0)
		return rc;
	if (pipe2(w->arm, O_CLOEXEC) < 0 ||
	    (w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
		return -errno;
	/* the thread takes no signal but SIGUSR2, which ends its sleep at
	 * the end: the others are the signalfd's */
	sigaction(SIGUSR2, &(struct sigaction){ .sa_handler = on_wake }, NULL);
	sigfillset(&all);
	sigdelset(&all, SIGUSR2);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&w->t, NULL, waiter_main, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return -rc;
	w->started = 1;
	return 0;
}

/*
 * Ends the waiter and frees what it has: its pipe closed (for a thread
 * waiting for a word), SIGUSR2 (for one asleep on the futex) sent until
 * it has ended, as a signal that comes just before it goes to sleep is
 * not seen by the sleep.
 */
static void waiter_stop(struct waiter *w)
{
	if (w->started) {
		atomic_store(&w->stop, 1);
		close(w->arm[1]);
		w->arm[1] = -1;
		for (;;) {
			struct timespec ts;

			pthread_kill(w->t, SIGUSR2);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 20 * 1000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			if (pthread_timedjoin_np(w->t, NULL, &ts) == 0)
				break;
		}
	}
	for (int i = 0; i < 2; i++)
		if (w->arm[i] >= 0)
			close(w->arm[i]);
	if (w->efd >= 0)
		close(w->efd);
	kmsg_reader_free(w->r);
	kmsg_log_close(w->log);
}

/* Asks the waiter to say when a record numbered at or more is there. */
static void waiter_arm(struct waiter *w, uint64_t at)
{
	if (w->armed)
		return;
	if (write(w->arm[1], &at, sizeof(at)) == (ssize_t)sizeof(at))
		w->armed = 1;
}

/* ---- positions and the cursor ------------------------------------------- */

/* Where reading stands after rec, which r just returned. */
static struct kmsg_position after(const struct shipper *s, const struct kmsg_record *rec)
{
	struct kmsg_position p = { .next = kmsg_reader_position(s->r) };

	memcpy(p.ring_id, s->ring_id, sizeof(p.ring_id));
	p.seq_id = rec->seq_id ? rec->seq_id : s->delivered.seq_id;
	p.last_real_ns = rec->seq + 1 == p.next && !(rec->flags & KMSG_GAP) &&
			 rec->real_ns > 0 ? rec->real_ns : 0;
	return p;
}

/* Every record below p.next is delivered (or passed by the filters). */
static void delivered_to(struct shipper *s, const struct kmsg_position *p)
{
	s->delivered = *p;
	s->have_delivered = 1;
	s->cur->now = *p;
	s->cur->have = s->cur->moved = 1;
}

/*
 * A record read that sends nothing (filtered, a gap): the position after
 * it goes with the last message not yet delivered, or is delivered at
 * once when none is.
 */
static void passed(struct shipper *s, const struct kmsg_position *p)
{
	if (s->nheld)
		s->held[s->nheld - 1].after = *p;
	else if (s->fl_n)
		s->fl[(s->fl_head + s->fl_n - 1) % s->t.window_msgs].after = *p;
	else
		delivered_to(s, p);
}

/* ---- formatting ----------------------------------------------------------- */

/* rec as a Journal Export entry into m (read -o export's); 0 or a
 * negative code. */
static int hold_entry(struct shipper *s, struct pending *m, const struct kmsg_record *rec)
{
	const char *text;
	int n = kmsg_fmt_record(&text, s->exp, rec);

	if (n >= 0 && (size_t)n > m->cap) {
		char *b = realloc(m->buf, (size_t)n);

		if (b == NULL)
			return -ENOMEM;
		m->buf = b;
		m->cap = (size_t)n;
	}
	if (n > 0)
		memcpy(m->buf, text, (size_t)n);
	return n;
}

/* Formats rec into a new held message; 0 or -ENOMEM. */
static int hold(struct shipper *s, const struct kmsg_record *rec,
		const struct kmsg_syslog_fmt_opts *fo, const struct kmsg_position *p)
{
	struct pending *m = &s->held[s->nheld];
	int n = s->exp ? hold_entry(s, m, rec) : kmsg_syslog_format(m->buf, m->cap, rec, fo);

	if (n >= 0 && (size_t)n >= m->cap && !s->exp) {
		size_t cap = (size_t)n + 1 > 4096 ? (size_t)n + 1 : 4096;
		char *b = realloc(m->buf, cap);

		if (b == NULL)
			return -ENOMEM;
		m->buf = b;
		m->cap = cap;
		n = kmsg_syslog_format(m->buf, m->cap, rec, fo);
	}
	if (n < 0)
		return n;
	m->len = (size_t)n;
	m->seq = rec->seq;
	m->real_ns = rec->real_ns;
	m->after = *p;
	s->nheld++;
	return 0;
}

/*
 * The news that records first..last (n of them) went missing before they
 * were shipped, as a message of its own at number last (a number no
 * record will bear now): syslog.warning from "kmsg", its structured data
 * naming how many and which instead of a record's number.
 */
static int hold_lost(struct shipper *s, uint64_t n, uint64_t damaged, uint64_t first,
		     uint64_t last, const struct kmsg_position *p)
{
	struct kmsg_syslog_fmt_opts fo = s->fo;
	struct kmsg_record rec;
	struct pending *m;
	char text[200], sd[200], ring[33];
	size_t tl, sl;
	char *dash;
	int rc;

	memset(&rec, 0, sizeof(rec));
	tl = (size_t)snprintf(text, sizeof(text), "kmsg ship: %" PRIu64 " records evicted "
			      "before they were shipped (numbers %" PRIu64 "-%" PRIu64 ")",
			      n - damaged, first, last);
	if (damaged)
		tl = (size_t)snprintf(text, sizeof(text), "kmsg ship: %" PRIu64 " records "
				      "evicted before they were shipped, %" PRIu64 " damaged "
				      "(numbers %" PRIu64 "-%" PRIu64 ")", n - damaged, damaged,
				      first, last);
	rec.text = text;
	rec.text_len = tl;
	rec.facility = 5;  /* syslog: the shipper's own word */
	rec.level = 4;
	rec.seq = last;
	rec.real_ns = cli_now_ns(CLOCK_REALTIME);
	rec.pid = (uint32_t)getpid();
	/* an export entry's boot and since-boot time: the shipper's own */
	rec.boot_id = kmsg_boot_id();
	rec.boot_ns = cli_now_ns(CLOCK_BOOTTIME);
	fo.app = "kmsg";
	fo.sd_id = NULL;
	rc = hold(s, &rec, &fo, p);
	if (rc < 0 || s->fo.format != KMSG_SYSLOG_5424 || !s->fo.sd_id || s->exp)
		return rc;
	/* "<PRI>1 TS HOST APP PROCID MSGID - MSG": the "-" after the
	 * sixth space becomes the element */
	m = &s->held[s->nheld - 1];
	dash = m->buf;
	for (int i = 0; i < 6 && dash; i++) {
		dash = memchr(dash, ' ', m->len - (size_t)(dash - m->buf));
		if (dash)
			dash++;
	}
	if (dash == NULL || *dash != '-')
		return 0;
	cli_ring_hex(ring, s->ring_id);
	sl = (size_t)snprintf(sd, sizeof(sd), "[%s lost=\"%" PRIu64 "\" first=\"%" PRIu64
			      "\" last=\"%" PRIu64 "\" ring=\"%s\"]", s->fo.sd_id, n, first, last,
			      ring);
	if (m->len + sl + 1 > m->cap) {
		char *b = realloc(m->buf, m->len + sl + 1);

		if (b == NULL)
			return -ENOMEM;
		dash = b + (dash - m->buf);
		m->buf = b;
		m->cap = m->len + sl + 1;
	}
	memmove(dash + sl, dash + 1, m->len - (size_t)(dash + 1 - m->buf) + 1);
	memcpy(dash, sd, sl);
	m->len += sl - 1;
	return 0;
}

/*
 * Reads the next record into held messages: the news of records lost
 * before it, then the record if it passes the filters.  Returns 1 if one
 * was read, 0 at the end of the log for now, or a negative code.
 */
static int read_one(struct shipper *s)
{
	struct kmsg_record rec;
	struct kmsg_position p;
	int rc = kmsg_reader_next(s->r, &rec);

	if (rc <= 0)
		return rc;
	p = after(s, &rec);
	if (rec.lost || rec.damaged) {
		uint64_t n = rec.lost + rec.damaged;
		uint64_t first = rec.seq >= n ? rec.seq - n : 0, last = rec.seq - 1;
		struct kmsg_position at = p;

		s->n_lost += rec.lost;
		say(s, "%" PRIu64 " records evicted before they were shipped%s (numbers %"
		    PRIu64 "-%" PRIu64 "); the collector is sent a message saying so",
		    n, rec.damaged ? " or damaged" : "", first, last);
		/* delivered, the news covers the numbers up to the record */
		at.next = rec.seq;
		at.last_real_ns = 0;
		rc = hold_lost(s, n, rec.damaged, first, last, &at);
		if (rc < 0)
			return rc;
	}
	if (!out_match(s->o, &rec)) {
		passed(s, &p);
		return 1;
	}
	rc = hold(s, &rec, &s->fo, &p);
	return rc < 0 ? rc : 1;
}

/* ---- the connection ------------------------------------------------------ */

static void drop_conn(struct shipper *s)
{
	if (s->conn)
		s->proto->free(s->conn);
	s->conn = NULL;
	s->up = 0;
	s->closing = 0;
}

/* The next attempt after a failure: the backoff, doubled each time up to
 * --retry-max, with a quarter of it random so that many shippers that
 * lost one collector do not all come back at once. */
static int next_backoff(struct shipper *s)
{
	int ms = s->backoff_ms;
	int jitter = ms / 4 ? (int)(random() % (ms / 4 + 1)) - ms / 8 : 0;

	s->backoff_ms = ms * 2 > s->retry_max_ms ? s->retry_max_ms : ms * 2;
	ms += jitter;
	s->retry_at = cli_now_ns(CLOCK_MONOTONIC) + ms * NS_PER_MS;
	return ms;
}

static void say_retry(struct shipper *s, const char *why)
{
	int ms = next_backoff(s);

	if (ms >= 1000)
		say(s, "%s; trying again in %d s", why, (ms + 500) / 1000);
	else
		say(s, "%s; trying again in %.1f s", why, ms / 1000.0);
}

/*
 * The connection is lost (or never came): what was not delivered is
 * read again from the log for the next one.  0, or a negative code of
 * the reader.
 */
static int lost_conn(struct shipper *s, const struct ship_err *e)
{
	drop_conn(s);
	s->fl_n = 0;
	s->nheld = 0;
	s->at_end = 0;
	s->caught_up = 0;
	if (e->permanent) {
		say(s, "%s", e->msg);
		return -EPROTO;
	}
	say_retry(s, e->msg);
	/* what was read and not delivered is read again */
	return kmsg_reader_seek_seq(s->r, s->delivered.next);
}

static int try_connect(struct shipper *s)
{
	struct ship_err e = { "", 0 };

	if (s->proto->open(&s->conn, &s->t, &e) == 0)
		return 0;
	s->conn = NULL;
	if (e.permanent) {
		say(s, "%s", e.msg);
		return -EPROTO;
	}
	say_retry(s, e.msg);
	return 0;
}

/* Takes what the protocol says it delivered. */
static void take_delivered(struct shipper *s, uint64_t seq)
{
	while (s->fl_n && s->fl[s->fl_head].seq <= seq) {
		delivered_to(s, &s->fl[s->fl_head].after);
		s->fl_head = (s->fl_head + 1) % s->t.window_msgs;
		s->fl_n--;
		s->n_delivered++;
		s->tick_ms = 1;
	}
}

/*
 * Queues held messages, and reads records into new ones, while the window
 * has room; the protocol's pump() runs once per batch, not per message.
 * 0, 1 with *e filled (the connection lost), or a negative code of the
 * reader.
 */
static int fill(struct shipper *s, struct ship_err *e)
{
	size_t queued = 0;

	for (;;) {
		struct pending *m;
		struct flight *f;
		uint64_t delivered = UINT64_MAX;
		int rc;

		if (s->nheld == 0) {
			rc = read_one(s);
			if (rc < 0)
				return rc;
			if (rc == 1)
				continue;
			s->at_end = 1;
		}
		m = &s->held[0];
		if (s->nheld && s->fl_n < s->t.window_msgs &&
		    s->proto->room(s->conn, m->len)) {
			if (!s->up) {
				s->up = 1;
				s->backoff_ms = BACKOFF_FIRST_MS;
				say(s, "connected");
			}
			if (s->proto->queue(s->conn, m->buf, m->len, m->seq, e) < 0)
				return 1;
			if (m->seq < s->high)
				s->n_resent++;
			else
				s->high = m->seq + 1;
			s->n_sent++;
			queued++;
			f = &s->fl[(s->fl_head + s->fl_n++) % s->t.window_msgs];
			f->seq = m->seq;
			f->real_ns = m->real_ns;
			f->after = m->after;
			/* the two buffers change places: each keeps its memory */
			if (--s->nheld) {
				struct pending t = s->held[0];

				s->held[0] = s->held[1];
				s->held[1] = t;
			}
			continue;
		}
		/* the window is full, or the log read to its end: what was
		 * queued goes out, and what that delivers makes room */
		if (!queued)
			return 0;
		queued = 0;
		if (s->proto->pump(s->conn, 0, &delivered, e) < 0)
			return 1;
		if (delivered != UINT64_MAX)
			take_delivered(s, delivered);
		if (s->at_end && s->nheld == 0)
			return 0;
	}
}

/* ---- lag ----------------------------------------------------------------- */

static void say_lag(struct shipper *s, const char *why)
{
	struct kmsg_stat st;
	uint64_t behind = 0;
	double secs = 0;
	int64_t oldest = s->fl_n ? s->fl[s->fl_head].real_ns :
			 s->nheld ? s->held[0].real_ns : 0;

	if (kmsg_log_stat(&st, s->log) == 0 && st.next_seq > s->delivered.next)
		behind = st.next_seq - s->delivered.next;
	if (behind && oldest > 0)
		secs = (double)(cli_now_ns(CLOCK_REALTIME) - oldest) / 1e9;
	if (secs < 0)
		secs = 0;  /* a clock stepped back since the record */
	say(s, "%s%" PRIu64 " records behind, %.1f s; delivered %" PRIu64 ", sent again %"
	    PRIu64 ", lost before shipping %" PRIu64 "%s", why, behind, secs, s->n_delivered,
	    s->n_resent, s->n_lost, s->conn && s->up ? "" : "; not connected");
	s->lag_said_ns = cli_now_ns(CLOCK_MONOTONIC);
}

/* ---- the loop ------------------------------------------------------------ */

#define STOPPED_OK 0

/*
 * Ships until SIGTERM or SIGINT (then waits up to STOP_WAIT_MS for what
 * was sent to be delivered, and returns EXIT_OK), or a failure that
 * trying again cannot mend (EXIT_FAIL, said).
 */
static int ship_loop(struct shipper *s, int sfd)
{
	int64_t stop_at = 0;
	int stopping = 0;

	s->tick_ms = 1;
	s->lag_said_ns = cli_now_ns(CLOCK_MONOTONIC);
	for (;;) {
		struct pollfd pf[3] = {
			{ .fd = sfd, .events = POLLIN },
			{ .fd = s->w.efd, .events = POLLIN },
			{ .fd = -1 },
		};
		struct ship_err e = { "", 0 };
		int64_t now = cli_now_ns(CLOCK_MONOTONIC), due = INT64_MAX, save_due;
		int rc, timeout;

		if (!s->conn && !stopping && now >= s->retry_at) {
			if (try_connect(s) < 0)
				return EXIT_FAIL;
		}
		if (s->conn && !stopping) {
			rc = fill(s, &e);
			if (rc == 1) {
				if (lost_conn(s, &e) < 0)
					return EXIT_FAIL;
				continue;
			}
			if (rc < 0)
				return cli_lib_error(s->path, rc);
		}
		if (cli_bus_cut())
			return cli_error(s->path, "cut short under the shipper; it goes on "
					 "where it was when started again");
		if (s->proto->cut && s->conn) {
			uint64_t n = s->proto->cut(s->conn);

			if (n) {
				s->n_cut += n;
				say(s, "%" PRIu64 " messages longer than a datagram takes were "
				    "cut to fit (%" PRIu64 " so far)", n, s->n_cut);
			}
		}
		if (s->at_end && s->fl_n == 0 && s->nheld == 0 && s->up && !s->caught_up) {
			s->caught_up = 1;
			say(s, "caught up");
		}
		save_due = cur_save(s->cur);
		if (stopping) {
			if (!s->conn || now >= stop_at)
				return STOPPED_OK;
			if (s->fl_n == 0 && !s->closing) {
				s->closing = 1;
				s->proto->close(s->conn);
			}
		}
		/* what to wait for */
		if (s->at_end && s->nheld == 0 && !stopping)
			waiter_arm(&s->w, kmsg_reader_position(s->r));
		if (s->conn) {
			pf[2].fd = s->proto->fd(s->conn);
			pf[2].events = s->proto->events(s->conn);
			if (s->fl_n || s->closing)
				due = now + s->tick_ms * NS_PER_MS;
		} else if (!stopping) {
			due = s->retry_at;
		}
		if (save_due < due)
			due = save_due;
		if (stopping && stop_at < due)
			due = stop_at;
		if (!s->caught_up && s->lag_said_ns + LAG_EVERY_NS < due)
			due = s->lag_said_ns + LAG_EVERY_NS;
		timeout = due == INT64_MAX ? -1 : due <= now ? 0 :
			  (int)((due - now + NS_PER_MS - 1) / NS_PER_MS);
		rc = poll(pf, 3, timeout);
		if (rc < 0 && errno != EINTR)
			return cli_error("poll", "%s", strerror(errno));
		now = cli_now_ns(CLOCK_MONOTONIC);
		if (rc > 0 && (pf[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				if (si.ssi_signo == SIGUSR1) {
					say_lag(s, "");
				} else if (si.ssi_signo == SIGHUP) {
					/* a new collector address, or one back:
					 * connect again now */
					if (!s->conn)
						s->retry_at = now;
					s->backoff_ms = BACKOFF_FIRST_MS;
				} else if (!stopping) {
					stopping = 1;
					stop_at = now + STOP_WAIT_MS * NS_PER_MS;
				}
			}
		}
		if (rc > 0 && (pf[1].revents & POLLIN)) {
			uint64_t v;

			if (read(s->w.efd, &v, sizeof(v)) > 0) {
				s->w.armed = 0;
				s->at_end = 0;
			}
		}
		if (s->conn) {
			uint64_t delivered = UINT64_MAX;
			short rev = rc > 0 ? pf[2].revents : 0;
			uint64_t before = s->n_delivered;

			rc = s->proto->pump(s->conn, rev, &delivered, &e);
			if (rc < 0 && s->closing)
				return STOPPED_OK;  /* all was delivered: the close ends it */
			if (rc < 0) {
				if (lost_conn(s, &e) < 0)
					return EXIT_FAIL;
				continue;
			}
			if (delivered != UINT64_MAX)
				take_delivered(s, delivered);
			if (rc == 1 && s->closing)
				return STOPPED_OK;
			/* acknowledgements raise no event: looked for soon
			 * after progress, then less and less often */
			if (s->n_delivered == before && s->tick_ms < TICK_MAX_MS)
				s->tick_ms = s->tick_ms * 2 < SHIP_TICK_MS ? s->tick_ms * 2 :
					     s->tick_ms < SHIP_TICK_MS ? SHIP_TICK_MS :
					     s->tick_ms * 2;
		}
		if (!s->caught_up && now >= s->lag_said_ns + LAG_EVERY_NS)
			say_lag(s, "behind: ");
	}
}

/* ---- setup --------------------------------------------------------------- */

static const struct ship_proto *find_proto(const char *scheme)
{
	const struct ship_proto *all[] = { &ship_tcp, &ship_udp, &ship_unix, &ship_tls,
					   &ship_relp, &ship_http };

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (all[i] && all[i]->scheme && !strcmp(all[i]->scheme, scheme))
			return all[i];
	return NULL;
}

/* Parses --to into s->t; EXIT_USAGE after saying what is wrong, or 0. */
static int parse_url(struct shipper *s, const char *url)
{
	static const char *const schemes[] = { "tcp", "tls", "udp", "relp", "unix", "http" };
	static const char *const ports[] = { "514", "6514", "514", "2514", "", "19532" };
	const char *rest, *colon, *host;
	size_t hl, i;

	s->t.scheme = NULL;
	for (i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i]);

		if (!strncmp(url, schemes[i], n) && url[n] == ':') {
			s->t.scheme = schemes[i];
			break;
		}
	}
	if (s->t.scheme == NULL)
		return cli_usage_error("ship", "--to", "'%s': not a collector's URL: "
				       "tcp://HOST:PORT, tls://HOST:PORT, udp://HOST:PORT, "
				       "relp://HOST:PORT, unix:PATH or http://HOST:PORT", url);
	rest = url + strlen(s->t.scheme) + 1;
	if (!strcmp(s->t.scheme, "unix")) {
		if (!strncmp(rest, "//", 2))
			rest += 2;
		if (!*rest || strlen(rest) >= sizeof(s->t.path))
			return cli_usage_error("ship", "--to", "'%s': %s", url, *rest ?
					       "the socket's path is too long" :
					       "no socket path: unix:/PATH");
		strcpy(s->t.path, rest);
		goto found;
	}
	if (strncmp(rest, "//", 2))
		return cli_usage_error("ship", "--to", "'%s': %s://HOST:PORT", url, s->t.scheme);
	rest += 2;
	host = rest;
	if (*rest == '[') {
		const char *end = strchr(rest, ']');

		if (end == NULL)
			return cli_usage_error("ship", "--to", "'%s': no ']' after the "
					       "IPv6 address", url);
		host = rest + 1;
		hl = (size_t)(end - host);
		colon = end[1] == ':' ? end + 1 : end[1] ? end : NULL;
		if (colon && *colon != ':')
			return cli_usage_error("ship", "--to", "'%s': ':PORT' or nothing "
					       "after ']'", url);
	} else {
		colon = strchr(rest, ':');
		hl = colon ? (size_t)(colon - rest) : strlen(rest);
	}
	if (colon && strchr(colon, '/') && colon[strcspn(colon, "/")] == '/' &&
	    strcmp(s->t.scheme, "http"))
		return cli_usage_error("ship", "--to", "'%s': no path after the port", url);
	if (hl == 0 || hl >= sizeof(s->t.host))
		return cli_usage_error("ship", "--to", "'%s': %s", url, hl ? "the host "
				       "name is too long" : "no host");
	memcpy(s->t.host, host, hl);
	s->t.host[hl] = '\0';
	if (colon) {
		size_t pl = strcspn(colon + 1, "/");

		if (pl == 0 || pl >= sizeof(s->t.port))
			return cli_usage_error("ship", "--to", "'%s': no port after ':'", url);
		memcpy(s->t.port, colon + 1, pl);
		s->t.port[pl] = '\0';
	} else {
		strcpy(s->t.port, ports[i]);
	}
found:
	s->proto = find_proto(s->t.scheme);
	if (s->proto == NULL) {
		cli_error("ship", "--to '%s': %s:// is not built into this kmsg (see "
			  "kmsg(1), SHIP)", url, s->t.scheme);
		return EXIT_USAGE;
	}
	return 0;
}

/* Whether sd_id is an SD-ID of RFC 5424 that is no IANA one: 1 to 32
 * bytes of ASCII 33..126 but '=', ' ', ']' and '"', with an '@'. */
static int sd_id_ok(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n > 32 || !strchr(id, '@') || id[0] == '@' || id[n - 1] == '@')
		return 0;
	for (const char *p = id; *p; p++)
		if (*p < 33 || *p > 126 || *p == '=' || *p == ']' || *p == '"')
			return 0;
	return 1;
}

/* The read options that shape the text printed: no meaning for ship. */
static const char *format_option(const struct out_given *g)
{
	if (g->ntimes)
		return "a time format";
	if (g->raw || g->decode || g->noescape || g->fields || g->human || g->output ||
	    g->color_given || g->show_caller || g->show_pid || g->force_prefix ||
	    g->output_fields)
		return "a format option";
	return NULL;
}

static int setup(struct shipper *s, struct ship_opts *so, char *host, size_t hsize)
{
	uint64_t v;
	const char *bad;

	if (so->to == NULL)
		return cli_usage_error("ship", NULL, "--to URL names the collector: "
				       "tcp://HOST:PORT, udp://HOST:PORT, unix:PATH, ...");
	s->url = so->to;
	if (parse_url(s, so->to))
		return EXIT_USAGE;
	s->fo.format = KMSG_SYSLOG_5424;
	if (so->format && !strcmp(so->format, "rfc3164"))
		s->fo.format = KMSG_SYSLOG_3164;
	else if (so->format && strcmp(so->format, "rfc5424"))
		return cli_usage_error("ship", "--format", "'%s': rfc5424 or rfc3164",
				       so->format);
	if (s->fo.format == KMSG_SYSLOG_3164 && !s->proto->any_format)
		return cli_usage_error("ship", "--format", "%s:// sends RFC 5424 only; "
				       "rfc3164 goes to udp:// or unix:", s->t.scheme);
	s->fo.sd_id = so->sd_id ? so->sd_id : DEFAULT_SD_ID;
	if (!sd_id_ok(s->fo.sd_id))
		return cli_usage_error("ship", "--sd-id", "'%s': an SD-ID is NAME@NUMBER, "
				       "1 to 32 printable ASCII bytes without '=', ']', '\"' "
				       "or space (NUMBER: your IANA enterprise number)",
				       s->fo.sd_id);
	if (so->hostname) {
		if (!*so->hostname)
			return cli_usage_error("ship", "--hostname", "an empty name");
		s->fo.hostname = so->hostname;
	} else if (gethostname(host, hsize - 1) == 0) {
		host[hsize - 1] = '\0';
		s->fo.hostname = host;
	}
	s->t.window_msgs = DEFAULT_WINDOW;
	s->t.window_bytes = DEFAULT_WINDOW_BYTES;
	if (so->window) {
		if (cli_parse_u64(&v, so->window, strlen(so->window), MAX_WINDOW) < 0 || !v)
			return cli_usage_error("ship", "--window", "'%s': a number of records, "
					       "1 to %d", so->window, MAX_WINDOW);
		s->t.window_msgs = (size_t)v;
	}
	if (so->window_bytes) {
		if (cli_parse_size(&v, so->window_bytes) < 0 || v < 1024 || v > (1u << 30))
			return cli_usage_error("ship", "--window-bytes", "'%s': a size from "
					       "1K to 1G", so->window_bytes);
		s->t.window_bytes = (size_t)v;
	}
	s->retry_max_ms = DEFAULT_RETRY_MAX_S * 1000;
	if (so->retry_max) {
		if (cli_parse_u64(&v, so->retry_max, strlen(so->retry_max), 86400) < 0 || !v)
			return cli_usage_error("ship", "--retry-max", "'%s': seconds, 1 to "
					       "86400", so->retry_max);
		s->retry_max_ms = (int)v * 1000;
	}
	s->backoff_ms = BACKOFF_FIRST_MS < s->retry_max_ms ? BACKOFF_FIRST_MS : s->retry_max_ms;
	s->t.ca_file = so->ca;
	s->t.cert_file = so->cert;
	s->t.key_file = so->key;
	s->t.server_name = so->server_name;
	if (so->tls && strcmp(s->t.scheme, "relp"))
		return cli_usage_error("ship", "--tls", "is for relp://; tls:// is TCP "
				       "with TLS");
	s->t.tls = so->tls || !strcmp(s->t.scheme, "tls");
	bad = format_option(&s->o->given);
	if (bad)
		return cli_usage_error("ship", NULL, "%s of read was given: kmsg ship sends "
				       "syslog messages (--format says which)", bad);
	if (s->o->given.utc)
		s->fo.flags |= KMSG_SYSLOG_FMT_UTC;
	if (s->proto->export_entries) {
		struct kmsg_fmt_opts eo = KMSG_FMT_OPTS_INIT;
		int rc;

		eo.output = KMSG_OUT_EXPORT;
		rc = kmsg_fmt_new(&s->exp, &eo);
		if (rc < 0)
			return cli_lib_error(NULL, rc);
	}
	return 0;
}

/* Where shipping starts: the cursor's, else the oldest record or, with
 * --from-end, the end. */
static int position(struct shipper *s, int from_end)
{
	uint64_t at = 0;
	int rc;

	if (cur_start(s->cur, &at, s->log, s->path) != 0)
		return EXIT_FAIL;
	if (s->cur->given) {
		struct kmsg_position p = s->cur->now;

		/* the cursor's record is the last delivered */
		p.next = at;
		s->delivered = p;
		s->have_delivered = 1;
		rc = kmsg_reader_seek_seq(s->r, at);
	} else {
		rc = kmsg_reader_seek(s->r, from_end ? KMSG_SEEK_END : KMSG_SEEK_OLDEST);
		s->delivered.next = kmsg_reader_position(s->r);
		memcpy(s->delivered.ring_id, s->ring_id, sizeof(s->ring_id));
	}
	if (rc < 0)
		return cli_lib_error(s->path, rc);
	return 0;
}

int cmd_ship(int argc, const char **argv)
{
	struct ship_opts so = { 0 };
	struct output o;
	struct cursor cur;
	struct shipper s;
	struct kmsg_stat st;
	poptContext con;
	const char *const *words;
	char host[256];
	sigset_t sigs;
	int status, sfd = -1, rc;

	/* blocked from the start: a SIGTERM while the log is opened waits
	 * for the loop, which ends cleanly, instead of killing the process */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGHUP);
	sigaddset(&sigs, SIGUSR1);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	memset(&s, 0, sizeof(s));
	s.w.arm[0] = s.w.arm[1] = s.w.efd = -1;
	memset(&cur, 0, sizeof(cur));
	out_init(&o);
	handler.state = &so;
	s.o = &o;
	s.cur = &cur;
	s.fo = (struct kmsg_syslog_fmt_opts)KMSG_SYSLOG_FMT_OPTS_INIT;
	match_protect_args(argc, argv, ship_options);
	con = poptGetContext("kmsg ship", argc, argv, ship_options, 0);
	poptSetOtherOptionHelp(con, "--to URL [OPTION...] [KEY=value...]");
	status = cli_parse_args(con, "ship", &words);
	if (status != 0)
		goto out;
	status = setup(&s, &so, host, sizeof(host));
	if (status != 0)
		goto out;
	status = cur_setup(&cur, "ship");
	if (status != 0)
		goto out;
	cur.every_ns = CURSOR_EVERY_NS;
	if (cur.given && so.from_end) {
		status = cli_usage_error("ship", "--from-end", "a cursor already says where "
					 "to start: give one or the other");
		goto out;
	}
	status = out_setup(&o, "ship", 1, words);
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	s.path = cli_log_path(so.file);
	if (s.path == NULL)
		goto out;
	if (!strcmp(s.path, "-")) {
		cli_error("standard input", "kmsg ship needs a live log file, not a pipe");
		goto out;
	}
	s.log = cli_open_log(s.path, 0, NULL);
	if (s.log == NULL)
		goto out;
	rc = kmsg_reader_new(&s.r, s.log, 0);
	if (rc == 0)
		rc = kmsg_log_stat(&st, s.log);
	if (rc < 0) {
		cli_lib_error(s.path, rc);
		goto out;
	}
	memcpy(s.ring_id, st.ring_id, sizeof(s.ring_id));
	cur_log(&cur, st.ring_id);
	s.fo.ring_id = s.ring_id;
	status = position(&s, so.from_end);
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	s.fl = calloc(s.t.window_msgs, sizeof(*s.fl));
	if (s.fl == NULL) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	rc = waiter_start(&s.w, s.path);
	if (rc < 0) {
		cli_error(s.path, "cannot wait for new records: %s", rc < -1000 ?
			  kmsg_strerror(rc) : strerror(-rc));
		goto out;
	}
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	if (sfd < 0) {
		cli_error("signalfd", "%s", strerror(errno));
		goto out;
	}
	srandom((unsigned)(getpid() ^ cli_now_ns(CLOCK_MONOTONIC)));
	status = ship_loop(&s, sfd);
	if (status == STOPPED_OK) {
		if (s.fl_n)
			say(&s, "stopping with %zu records sent and not confirmed delivered: "
			    "they are sent again next time", s.fl_n);
		status = cur_end(&cur, &o);
	} else {
		/* what was delivered stays delivered */
		cur_end(&cur, &o);
	}
out:
	waiter_stop(&s.w);
	if (sfd >= 0)
		close(sfd);
	if (s.conn)
		s.proto->free(s.conn);
	free(s.fl);
	kmsg_fmt_free(s.exp);
	for (size_t i = 0; i < 2; i++)
		free(s.held[i].buf);
	kmsg_reader_free(s.r);
	kmsg_log_close(s.log);
	out_free(&o);
	cur_free(&cur);
	handler.state = NULL;
	free(so.to);
	free(so.format);
	free(so.sd_id);
	free(so.hostname);
	free(so.window);
	free(so.window_bytes);
	free(so.retry_max);
	free(so.file);
	free(so.ca);
	free(so.cert);
	free(so.key);
	free(so.server_name);
	poptFreeContext(con);
	return status;
}
