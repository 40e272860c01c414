/*
 * ship_relp.c - kmsg ship's relp://: RELP, each message a "syslog"
 * command that the collector answers with a "rsp" of its TXNR.
 *
 * A message is delivered when the collector answered "200" to its
 * command and to every command before it (rsyslog's imrelp answers once
 * the message is in its queue).  The answers come in the order of the
 * commands, so the oldest message in flight is the one each answer must
 * be for: an answer of another TXNR, a 500, a "serverclose" hint, bytes
 * that are no frame or a frame larger than RSP_MAX end the connection,
 * and the shipper sends again, on a new one, all that was not answered.
 * A collector that took a message and died before its answer gets it
 * twice: duplicates are at most the window.
 *
 * librelp's client is not used: relpCltSendSyslog() (librelp.h, 1.11)
 * says only that a message was queued, and no callback tells which
 * message an answer was for (the library's callbacks are for errors);
 * only a clean close confirms what was sent.  The cursor must move with
 * each answer, so the protocol is spoken here, its frames written and
 * read by libkmsg (kmsg_relp_*).
 *
 * The session: connect, "open" with our offers, its rsp 200 with the
 * collector's, which must offer "syslog"; then messages, at most the
 * window of them unanswered; "close" and its rsp at the end.  TXNRs run
 * from 1 to 999999999 on one connection; the last is kept for the close,
 * after which a new session starts at 1 (kmsg_relp_next_txnr()).
 *
 * With --tls the session runs over TLS (ship_tls.c: the certificate
 * checked as for tls://), as rsyslog's imrelp with tls="on" takes it; the
 * handshake comes between the connect and the "open".
 */
#define _GNU_SOURCE
#include "ship_stream.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <kmsg/kmsg.h>
#include <kmsg/version.h>

/* ship_tls.c's, absent from a kmsg built without GnuTLS */
#pragma weak ship_tls_new
#pragma weak ship_tls_free
#pragma weak ship_tls_handshake
#pragma weak ship_tls_events
#pragma weak ship_tls_pending
#pragma weak ship_tls_write
#pragma weak ship_tls_read

/* The largest frame the collector's answers may be: a rsp is "200 OK",
 * and an open's rsp its offers, well below this. */
#define RSP_MAX 65536
#define HEAD_MAX (9 + 1 + KMSG_RELP_COMMAND_MAX + 1 + 9 + 1)

enum state { CONNECTING, OPENING, READY, CLOSING, DONE };

struct ship_conn {
	struct ship_stream s;
	struct ship_tls *x;      /* --tls: the session, else NULL */
	enum state state;
	uint32_t txnr;           /* the next command's */
	uint32_t open_txnr, close_txnr;
	int want_close;          /* close() was called */
	int renew;               /* closing because the TXNRs are spent */
	size_t have;
	char in[HEAD_MAX + RSP_MAX + 1];
};

static void relp_free(struct ship_conn *c)
{
	if (c == NULL)
		return;
	if (c->x)
		ship_tls_free(c->x);
	ship_stream_free(&c->s);
	free(c);
}

static int relp_open(struct ship_conn **out, const struct ship_target *t, struct ship_err *e)
{
	struct ship_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	if (t->tls && !ship_tls_new) {
		ship_err_set(e, 1, "this kmsg was built without GnuTLS: no RELP over TLS "
			     "(--tls)");
		free(c);
		return -1;
	}
	if (ship_stream_open(&c->s, t, e) < 0) {
		free(c);
		return -1;
	}
	if (t->tls && ship_tls_new(&c->x, &c->s, t, e) < 0) {
		relp_free(c);
		return -1;
	}
	c->state = CONNECTING;
	c->txnr = 1;
	*out = c;
	return 0;
}

static int relp_fd(const struct ship_conn *c)
{
	return c->s.fd;
}

static short relp_events(const struct ship_conn *c)
{
	if (c->state == CONNECTING)
		return c->s.connecting || !c->x ? POLLOUT : ship_tls_events(c->x);
	if (c->x && ship_tls_pending(c->x))
		return ship_tls_events(c->x);
	return (short)(POLLIN | (c->s.off < c->s.len ? POLLOUT : 0));
}

static int relp_room(const struct ship_conn *c, size_t len)
{
	/* the last TXNR is the close's */
	return c->state == READY && !c->want_close && c->txnr < KMSG_RELP_TXNR_MAX &&
	       len <= KMSG_RELP_DATALEN_MAX && ship_stream_room(&c->s, len);
}

/* Queues the frame of command with the next TXNR; returns that TXNR, or 0
 * with *e filled. */
static uint32_t send_command(struct ship_conn *c, const char *command, const void *data,
			     size_t len, struct ship_err *e)
{
	uint32_t txnr = c->txnr;
	int n = !strcmp(command, "open") ?
		kmsg_relp_format_open(NULL, 0, txnr, "kmsg," KMSG_VERSION_STRING) :
		kmsg_relp_format(NULL, 0, txnr, command, data, len);
	char *p;

	if (n < 0) {
		ship_err_set(e, 0, "%s", kmsg_strerror(n));
		return 0;
	}
	p = ship_stream_reserve(&c->s, (size_t)n);
	if (p == NULL) {
		ship_err_set(e, 0, "out of memory");
		return 0;
	}
	if (!strcmp(command, "open"))
		kmsg_relp_format_open(p, (size_t)n, txnr, "kmsg," KMSG_VERSION_STRING);
	else
		kmsg_relp_format(p, (size_t)n, txnr, command, data, len);
	c->s.len += (size_t)n;
	c->txnr = kmsg_relp_next_txnr(txnr);
	return txnr;
}

static int relp_queue(struct ship_conn *c, const void *msg, size_t len, uint64_t seq,
		      struct ship_err *e)
{
	uint32_t txnr;

	if (!relp_room(c, len)) {
		ship_err_set(e, 0, "queued past the window");
		return -1;
	}
	txnr = send_command(c, "syslog", msg, len, e);
	if (txnr == 0)
		return -1;
	ship_stream_track(&c->s, seq, txnr, len);
	return 0;
}

/* The open's rsp: 0 (the session is up), or -1 with *e filled. */
static int opened(struct ship_conn *c, const struct kmsg_relp_frame *f, struct ship_err *e)
{
	const char *text = "", *offers = NULL;
	size_t tl = 0, ol = 0;
	int code = kmsg_relp_rsp(&text, &tl, &offers, &ol, f->data, f->data_len);

	if (code != 200) {
		ship_err_set(e, 0, "the collector refused the session: %d %.*s", code,
			     code < 0 ? 0 : (int)(tl > 80 ? 80 : tl), text);
		return -1;
	}
	if (!kmsg_relp_offer(offers, ol, "relp_version", NULL)) {
		ship_err_set(e, 0, "the collector's answer to open has no relp_version");
		return -1;
	}
	if (!kmsg_relp_offer(offers, ol, "commands", "syslog")) {
		ship_err_set(e, 1, "the collector does not take syslog messages over "
			     "RELP (it offers no commands=syslog); configure its input for "
			     "syslog (rsyslog: imrelp)");
		return -1;
	}
	c->state = READY;
	return 0;
}

/* One frame from the collector: 0, 1 (the close was answered), or -1
 * with *e filled. */
static int answer(struct ship_conn *c, const struct kmsg_relp_frame *f, uint64_t *delivered,
		  struct ship_err *e)
{
	struct ship_msg *m;
	const char *text = "";
	size_t tl = 0;
	int code;

	if (f->txnr == 0) {
		if (!strcmp(f->command, "serverclose")) {
			ship_err_set(e, 0, "the collector closed the session");
			return -1;
		}
		return 0;  /* a hint we do not know: hints need no answer */
	}
	if (strcmp(f->command, "rsp")) {
		ship_err_set(e, 0, "the collector sent a '%s' command, which a client "
			     "never gets", f->command);
		return -1;
	}
	if (c->state == OPENING) {
		if (f->txnr != c->open_txnr)
			goto wrong;
		return opened(c, f, e);
	}
	m = ship_stream_oldest(&c->s);
	if (m == NULL) {
		if (c->state == CLOSING && f->txnr == c->close_txnr) {
			c->state = DONE;
			return 1;
		}
		goto wrong;
	}
	if (m->mark != f->txnr)
		goto wrong;
	code = kmsg_relp_rsp(&text, &tl, NULL, NULL, f->data, f->data_len);
	if (code != 200) {
		ship_err_set(e, 0, "the collector refused record %llu: %d %.*s",
			     (unsigned long long)m->seq, code,
			     code < 0 ? 0 : (int)(tl > 80 ? 80 : tl), text);
		return -1;
	}
	ship_stream_pop(&c->s, delivered);
	return 0;
wrong:
	m = ship_stream_oldest(&c->s);
	ship_err_set(e, 0, "the collector answered transaction %u, where %llu was due",
		     f->txnr,
		     (unsigned long long)(c->state == OPENING ? c->open_txnr :
					  m ? m->mark : c->close_txnr));
	return -1;
}

/* Reads the collector's frames: 0, 1 (done), or -1 with *e filled. */
static int read_answers(struct ship_conn *c, uint64_t *delivered, struct ship_err *e)
{
	int eof = c->x ? ship_tls_read(c->x, c->in, sizeof(c->in), &c->have, e) :
		  ship_stream_read(&c->s, c->in, sizeof(c->in), &c->have, e);
	size_t at = 0;
	int rc = 0;

	if (eof < 0)
		return -1;
	while (rc == 0) {
		struct kmsg_relp_frame f;
		size_t used;
		int got = kmsg_relp_parse(&f, &used, c->in + at, c->have - at, RSP_MAX);

		if (got == 0)
			break;
		if (got < 0) {
			ship_err_set(e, 0, "the collector sent %s", got == KMSG_ETOOLONG ?
				     "an answer longer than 64 KiB" :
				     "bytes that are no RELP frame");
			return -1;
		}
		rc = answer(c, &f, delivered, e);
		at += used;
	}
	memmove(c->in, c->in + at, c->have - at);
	c->have -= at;
	if (rc == 0 && eof) {
		ship_err_set(e, 0, "the collector closed the connection");
		return -1;
	}
	return rc;
}

static int relp_pump(struct ship_conn *c, short revents, uint64_t *delivered,
		     struct ship_err *e)
{
	int rc;

	if (c->state == DONE)
		return 1;
	if (c->state == CONNECTING) {
		rc = ship_stream_connected(&c->s, revents, e);
		if (rc > 0 && c->x)
			rc = ship_tls_handshake(c->x, e);
		if (rc <= 0)
			return rc;
		if (c->want_close) {
			c->state = DONE;
			return 1;
		}
		c->open_txnr = send_command(c, "open", NULL, 0, e);
		if (c->open_txnr == 0)
			return -1;
		c->state = OPENING;
#ifdef KMSG_TEST_HOOKS
		/* tests/cli/ship-relp.sh: the first session's last numbers,
		 * sooner than after a billion messages */
		static int hooked;

		if (!hooked++ && getenv("KMSG_TEST_RELP_TXNR"))
			c->txnr = (uint32_t)strtoul(getenv("KMSG_TEST_RELP_TXNR"), NULL, 10);
#endif
	}
	if (revents & (POLLIN | POLLHUP | POLLERR) || c->have || c->s.n) {
		rc = read_answers(c, delivered, e);
		if (rc != 0) {
			if (rc == 1 && c->renew) {
				ship_err_set(e, 0, "the session's transaction numbers are "
					     "spent; a new session begins");
				return -1;
			}
			return rc;
		}
	}
	if (c->state == READY && c->s.n == 0 &&
	    (c->want_close || c->txnr == KMSG_RELP_TXNR_MAX)) {
		c->renew = !c->want_close;
		c->close_txnr = send_command(c, "close", NULL, 0, e);
		if (c->close_txnr == 0)
			return -1;
		c->state = CLOSING;
	}
	if (c->state == OPENING && c->want_close) {
		c->state = DONE;
		return 1;
	}
	return c->x ? ship_tls_write(c->x, e) : ship_stream_write(&c->s, e);
}

static void relp_close(struct ship_conn *c)
{
	c->want_close = 1;
}

const struct ship_proto ship_relp = {
	.scheme = "relp",
	.open = relp_open,
	.fd = relp_fd,
	.events = relp_events,
	.room = relp_room,
	.queue = relp_queue,
	.pump = relp_pump,
	.close = relp_close,
	.free = relp_free,
	.promise = "the collector answered 200 to the message's RELP command (rsyslog's "
		   "imrelp: the message is in its queue)",
	.any_format = 0,
};
