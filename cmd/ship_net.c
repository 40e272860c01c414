/*
 * ship_net.c - kmsg ship's plain protocols: tcp:// (RFC 5424 framed by
 * octet counting, RFC 6587), udp:// (one message a datagram, RFC 5426)
 * and unix:PATH (one message a datagram to a local syslog socket).
 *
 * What "delivered" means differs, and each says it in its promise:
 *
 * - tcp: a message is delivered once all its bytes were written to the
 *   socket and the collector's TCP acknowledged them: the bytes written
 *   less what SIOCOUTQ says is still in the send queue (unsent, or sent
 *   and not acknowledged) covers its end.  The collector's kernel has the
 *   bytes then; a collector killed before it read them from its socket
 *   loses them, which no plain TCP sender can see (RELP can).
 * - udp: delivered once send(2) took the datagram: nothing tells whether
 *   it arrived.  An ICMP "port unreachable" for an earlier datagram shows
 *   as ECONNREFUSED on a later send: the collector is down, the
 *   connection counts as lost and what was not sent is sent again later.
 * - unix: delivered once the receiver's queue took the datagram (a full
 *   queue is EAGAIN: waited for, never dropped).
 *
 * A connection holds the messages not yet delivered, bounded by the
 * window the target gives: tcp keeps the bytes not yet written and the
 * ends of the messages written and not yet acknowledged; the datagram
 * protocols keep the datagrams not yet sent.
 */
#define _GNU_SOURCE
#include "cmd.h"
#include "ship.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* RFC 5426: no UDP datagram is longer than 65535 - 8 - 20 bytes. */
#define UDP_MAX 65507
/* What a local datagram socket takes, on Linux's default limits. */
#define UNIX_MAX (64 * 1024 - 512)
/* What a tcp collector may send back (nothing, but it is read and
 * dropped so that its socket buffer does not fill) per pump. */
#define DRAIN_MAX 65536

/* One message queued: its record's number and, for tcp, where its frame
 * ends in the stream (bytes since the connection began). */
struct msg {
	uint64_t seq;
	uint64_t end;
	size_t len;      /* datagrams: its length in buf */
};

struct ship_conn {
	int fd;
	int kind;                /* SOCK_STREAM (tcp) or SOCK_DGRAM */
	int connecting;          /* tcp: connect() in progress */
	int closed;              /* close() was called: pump() says done */
	size_t max_dgram;        /* datagrams: the longest sent whole */
	size_t window_msgs, window_bytes;
	/* bytes not yet written: tcp's frames, or the datagrams one after
	 * another; buf[off..len) */
	char *buf;
	size_t off, len, cap;
	/* the messages not yet delivered, oldest first: a ring of
	 * window_msgs entries */
	struct msg *q;
	size_t head, n;
	size_t unsent;           /* datagrams: q's last unsent are not sent yet */
	uint64_t written;        /* tcp: bytes written since the connect */
	size_t bytes;            /* message bytes queued and not delivered */
	uint64_t cut;            /* datagrams cut to max_dgram */
};

static struct ship_conn *conn_new(const struct ship_target *t, int kind, struct ship_err *e)
{
	struct ship_conn *c = calloc(1, sizeof(*c));

	if (c)
		c->q = calloc(t->window_msgs, sizeof(*c->q));
	if (c == NULL || c->q == NULL) {
		free(c);
		ship_err_set(e, 0, "out of memory");
		return NULL;
	}
	c->fd = -1;
	c->kind = kind;
	c->window_msgs = t->window_msgs;
	c->window_bytes = t->window_bytes;
	return c;
}

static void net_free(struct ship_conn *c)
{
	if (c == NULL)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c->q);
	free(c);
}

/*
 * A socket of type (SOCK_STREAM, SOCK_DGRAM) connecting to t's host and
 * port, non-blocking: the first address that takes the connect() (for a
 * stream, one in progress counts).  The name is resolved here, blocking:
 * the collector's name is given once and a resolver is usually at hand.
 */
static int inet_connect(struct ship_conn *c, const struct ship_target *t, int type,
			struct ship_err *e)
{
	struct addrinfo hints = { .ai_socktype = type, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *ai = NULL;
	int rc = getaddrinfo(t->host, t->port, &hints, &ai), err = 0;

	if (rc != 0) {
		/* a name that does not resolve now may later (DNS down) */
		ship_err_set(e, 0, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -1;
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				a->ai_protocol);

		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 ||
		    (type == SOCK_STREAM && errno == EINPROGRESS)) {
			c->fd = fd;
			c->connecting = type == SOCK_STREAM;
			break;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (c->fd < 0) {
		ship_err_set(e, 0, "%s", strerror(err ? err : EADDRNOTAVAIL));
		return -1;
	}
	return 0;
}

static int tcp_open(struct ship_conn **out, const struct ship_target *t, struct ship_err *e)
{
	struct ship_conn *c = conn_new(t, SOCK_STREAM, e);
	int one = 1;

	if (c == NULL)
		return -1;
	if (inet_connect(c, t, SOCK_STREAM, e) < 0) {
		net_free(c);
		return -1;
	}
	/* a collector gone without a word (its machine off) shows within
	 * minutes, not the two hours of the default */
	setsockopt(c->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPIDLE, &(int){ 60 }, sizeof(int));
	setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPINTVL, &(int){ 10 }, sizeof(int));
	setsockopt(c->fd, IPPROTO_TCP, TCP_KEEPCNT, &(int){ 6 }, sizeof(int));
	*out = c;
	return 0;
}

static int dgram_open(struct ship_conn **out, const struct ship_target *t, struct ship_err *e)
{
	struct ship_conn *c;

	if (!strcmp(t->scheme, "udp")) {
		c = conn_new(t, SOCK_DGRAM, e);
		if (c == NULL)
			return -1;
		c->max_dgram = UDP_MAX;
		if (inet_connect(c, t, SOCK_DGRAM, e) < 0) {
			net_free(c);
			return -1;
		}
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		c = conn_new(t, SOCK_DGRAM, e);
		if (c == NULL)
			return -1;
		c->max_dgram = UNIX_MAX;
		memcpy(sa.sun_path, t->path, strnlen(t->path, sizeof(sa.sun_path) - 1));
		c->fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			ship_err_set(e, 0, "%s", strerror(errno));
			net_free(c);
			return -1;
		}
	}
	*out = c;
	return 0;
}

static int net_fd(const struct ship_conn *c)
{
	return c->fd;
}

static short net_events(const struct ship_conn *c)
{
	if (c->kind == SOCK_STREAM)
		/* POLLIN for the collector's close, which ends the connection */
		return (short)(POLLIN | (c->connecting || c->off < c->len ? POLLOUT : 0));
	return c->unsent ? POLLOUT : 0;
}

static int net_room(const struct ship_conn *c, size_t len)
{
	if (c->fd < 0 || c->connecting || c->n >= c->window_msgs)
		return 0;
	/* one message alone may be larger than the byte window */
	return c->n == 0 || c->bytes + len <= c->window_bytes;
}

/* Makes room for n more bytes at the end of c->buf; 0 or -1. */
static int reserve(struct ship_conn *c, size_t n)
{
	if (c->off && c->off == c->len)
		c->off = c->len = 0;
	if (c->len + n <= c->cap)
		return 0;
	if (c->off) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
		if (c->len + n <= c->cap)
			return 0;
	}
	size_t cap = c->cap ? c->cap : 65536;
	while (cap < c->len + n)
		cap *= 2;
	char *b = realloc(c->buf, cap);
	if (b == NULL)
		return -1;
	c->buf = b;
	c->cap = cap;
	return 0;
}

static int net_queue(struct ship_conn *c, const void *msg, size_t len, uint64_t seq,
		     struct ship_err *e)
{
	struct msg *m;
	char head[24];
	size_t hl = 0;

	if (c->n >= c->window_msgs) {
		ship_err_set(e, 0, "queued past the window");
		return -1;
	}
	if (c->kind == SOCK_DGRAM && len > c->max_dgram) {
		/* never silently: the shipper's stderr says it (see cut) */
		len = c->max_dgram;
		c->cut++;
	}
	if (c->kind == SOCK_STREAM)
		hl = (size_t)snprintf(head, sizeof(head), "%zu ", len);
	if (reserve(c, hl + len) < 0) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	memcpy(c->buf + c->len, head, hl);
	memcpy(c->buf + c->len + hl, msg, len);
	c->len += hl + len;
	m = &c->q[(c->head + c->n++) % c->window_msgs];
	m->seq = seq;
	m->len = len;
	m->end = c->written + (c->len - c->off);
	c->bytes += len;
	if (c->kind == SOCK_DGRAM)
		c->unsent++;
	return 0;
}

/* Drops the oldest message of the queue: delivered. */
static void pop(struct ship_conn *c, uint64_t *delivered)
{
	struct msg *m = &c->q[c->head];

	*delivered = m->seq;
	c->bytes -= m->len;
	c->head = (c->head + 1) % c->window_msgs;
	c->n--;
}

static int tcp_pump(struct ship_conn *c, short revents, uint64_t *delivered,
		    struct ship_err *e)
{
	int outq;

	if (c->closed)
		return 1;  /* called once all was delivered: nothing to wait for */
	if (c->connecting) {
		int err = 0;
		socklen_t l = sizeof(err);

		if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
			return 0;
		if (getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
			err = errno;
		if (err) {
			ship_err_set(e, 0, "%s", strerror(err));
			return -1;
		}
		c->connecting = 0;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		char sink[4096];
		size_t got = 0;
		ssize_t n;

		while (got < DRAIN_MAX && (n = recv(c->fd, sink, sizeof(sink), MSG_DONTWAIT)) > 0)
			got += (size_t)n;
		if (got < DRAIN_MAX) {
			if (n == 0) {
				ship_err_set(e, 0, "the collector closed the connection");
				return -1;
			}
			if (errno != EAGAIN && errno != EINTR) {
				ship_err_set(e, 0, "%s", strerror(errno));
				return -1;
			}
		}
	}
	while (c->off < c->len) {
		ssize_t n = send(c->fd, c->buf + c->off, c->len - c->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				break;
			ship_err_set(e, 0, "%s", strerror(errno));
			return -1;
		}
		c->off += (size_t)n;
		c->written += (uint64_t)n;
	}
	if (c->n == 0)
		return 0;
	if (ioctl(c->fd, SIOCOUTQ, &outq) < 0) {
		ship_err_set(e, 1, "SIOCOUTQ: %s", strerror(errno));
		return -1;
	}
	/* the stream up to written - outq is in the collector's kernel */
	while (c->n && c->q[c->head].end <= c->written - (uint64_t)outq)
		pop(c, delivered);
	return 0;
}

static int dgram_pump(struct ship_conn *c, short revents, uint64_t *delivered,
		      struct ship_err *e)
{
	(void)revents;
	if (c->closed)
		return 1;
	while (c->unsent) {
		struct msg *m = &c->q[c->head];
		size_t len = m->len < c->max_dgram ? m->len : c->max_dgram;
		ssize_t n = send(c->fd, c->buf + c->off, len, MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR || errno == ENOBUFS)
				return 0;  /* a full queue: POLLOUT says when */
			if (errno == EMSGSIZE && c->max_dgram > 2048) {
				/* a socket limit below ours: cut to what RFC
				 * 5426 says every receiver takes */
				c->max_dgram = 2048;
				c->cut++;
				continue;
			}
			ship_err_set(e, 0, "%s", strerror(errno));
			return -1;
		}
		c->off += m->len;
		c->unsent--;
		pop(c, delivered);
	}
	if (c->off == c->len)
		c->off = c->len = 0;
	return 0;
}

static void net_close(struct ship_conn *c)
{
	c->closed = 1;
	if (c->kind == SOCK_STREAM && c->fd >= 0 && !c->connecting)
		shutdown(c->fd, SHUT_WR);
}

static uint64_t net_cut(struct ship_conn *c)
{
	uint64_t n = c->cut;

	c->cut = 0;
	return n;
}

const struct ship_proto ship_tcp = {
	.scheme = "tcp",
	.open = tcp_open,
	.fd = net_fd,
	.events = net_events,
	.room = net_room,
	.queue = net_queue,
	.pump = tcp_pump,
	.close = net_close,
	.free = net_free,
	.promise = "the collector's TCP acknowledged the bytes (its kernel has them; "
		   "a collector killed before it read them loses them)",
	.any_format = 0,
};

const struct ship_proto ship_udp = {
	.scheme = "udp",
	.open = dgram_open,
	.fd = net_fd,
	.events = net_events,
	.room = net_room,
	.queue = net_queue,
	.pump = dgram_pump,
	.close = net_close,
	.free = net_free,
	.cut = net_cut,
	.promise = "the datagram was sent (UDP says nothing of its arrival)",
	.any_format = 1,
};

const struct ship_proto ship_unix = {
	.scheme = "unix",
	.open = dgram_open,
	.fd = net_fd,
	.events = net_events,
	.room = net_room,
	.queue = net_queue,
	.pump = dgram_pump,
	.close = net_close,
	.free = net_free,
	.cut = net_cut,
	.promise = "the receiver's socket queue took the datagram",
	.any_format = 1,
};
