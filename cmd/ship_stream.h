/*
 * ship_stream.h - what kmsg ship's protocols over a TCP stream share: a
 * non-blocking connect, the bytes not yet written, and the messages in
 * flight (oldest first, each with its record's number and a mark the
 * protocol gives it: where it ends in the stream for tls and tcp, its
 * TXNR for relp).  The protocols (ship_tls.c, ship_relp.c) keep one in
 * their connection and decide, each in its own way, when a message is
 * delivered.
 */
#ifndef KMSG_SHIP_STREAM_H
#define KMSG_SHIP_STREAM_H

#include <stddef.h>
#include <stdint.h>

#include "ship.h"

struct ship_msg {
	uint64_t seq;   /* the record's number */
	uint64_t mark;  /* the protocol's: an end in the stream, a TXNR */
	size_t len;     /* the message's bytes, framing not counted */
};

struct ship_stream {
	int fd;
	int connecting;          /* connect() in progress */
	/* bytes not yet written: buf[off..len) */
	char *buf;
	size_t off, len, cap;
	/* the messages queued and not yet delivered: a ring of window_msgs */
	struct ship_msg *q;
	size_t head, n;
	size_t window_msgs, window_bytes;
	size_t bytes;            /* their bytes */
	uint64_t written;        /* bytes written to the socket since connect */
};

/*
 * Starts a connection to t's host and port: resolved here (blocking),
 * then the first address that takes a non-blocking connect(), with
 * keepalives that find a collector gone silent in minutes.  0, or -1 with
 * *e filled (never permanent: a collector down or a name that does not
 * resolve may be back later).  ship_stream_free() undoes it.
 */
int ship_stream_open(struct ship_stream *s, const struct ship_target *t, struct ship_err *e);
void ship_stream_free(struct ship_stream *s);

/* While connecting: 1 once the connection is up, 0 while it is not yet
 * (revents say nothing), -1 with *e filled if it failed. */
int ship_stream_connected(struct ship_stream *s, short revents, struct ship_err *e);

/* Whether a message of len bytes fits the window now. */
int ship_stream_room(const struct ship_stream *s, size_t len);

/* Room for n more bytes at buf + len, or NULL (out of memory); the
 * caller writes them and adds n to len. */
char *ship_stream_reserve(struct ship_stream *s, size_t n);

/* Puts a message in flight (the caller checked the window). */
void ship_stream_track(struct ship_stream *s, uint64_t seq, uint64_t mark, size_t len);

/* The oldest message in flight, or NULL. */
struct ship_msg *ship_stream_oldest(struct ship_stream *s);

/* Takes the oldest message off, delivered: *delivered gets its seq. */
void ship_stream_pop(struct ship_stream *s, uint64_t *delivered);

/* Writes what the socket takes of buf.  0, or -1 with *e filled. */
int ship_stream_write(struct ship_stream *s, struct ship_err *e);

/* Bytes of the stream the collector's TCP acknowledged: written less
 * what SIOCOUTQ says is unsent or unacknowledged.  0, or -1. */
int ship_stream_acked(const struct ship_stream *s, uint64_t *acked, struct ship_err *e);

/* Reads what the collector sent into buf (of size, holding *have bytes)
 * up to its end: 1 if the collector closed the connection, 0, or -1
 * with *e filled. */
int ship_stream_read(struct ship_stream *s, char *buf, size_t size, size_t *have,
		     struct ship_err *e);

/*
 * A TLS session over a stream (ship_tls.c, with GnuTLS; absent from a
 * kmsg built without it, when ship_tls_new is NULL): tls:// and relp://
 * --tls.  The certificate is checked as t says (--tls-ca, --tls-name);
 * one refused is a permanent error that says what to give instead.
 */
struct ship_tls;
int ship_tls_new(struct ship_tls **x, struct ship_stream *s, const struct ship_target *t,
		 struct ship_err *e);
void ship_tls_free(struct ship_tls *x);
/* Once connected: 1 when the handshake is done, 0 while it goes on
 * (ship_tls_events() says what to wait for), -1 with *e filled. */
int ship_tls_handshake(struct ship_tls *x, struct ship_err *e);
short ship_tls_events(const struct ship_tls *x);
/* 1 while a record is half written (poll for ship_tls_events()). */
int ship_tls_pending(const struct ship_tls *x);
/* ship_stream_write() and ship_stream_read() through TLS. */
int ship_tls_write(struct ship_tls *x, struct ship_err *e);
int ship_tls_read(struct ship_tls *x, char *buf, size_t size, size_t *have,
		  struct ship_err *e);
/* The closing alert: 1 once sent, 0 while it waits, -1. */
int ship_tls_bye(struct ship_tls *x, struct ship_err *e);

#endif
