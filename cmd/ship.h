/*
 * ship.h - kmsg ship's protocols: how a record, formatted as a syslog
 * message, reaches a collector, and when it counts as delivered.
 *
 * cmd_ship.c follows the log and keeps the cursor; a protocol (one file
 * each: ship_net.c for tcp, udp and unix, ship_tls.c, ship_relp.c) owns
 * one connection: its framing, its socket and what "delivered" means for
 * it.  The ring is the buffer: a protocol holds at most the messages of
 * its window (those queued and not yet delivered), and when a connection
 * fails the shipper reads those records again from the log and sends them
 * on a new one.  Every call is non-blocking; the shipper polls fd() for
 * events() in its one loop.
 */
#ifndef KMSG_SHIP_H
#define KMSG_SHIP_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

/* Where --to points: tcp://HOST:PORT, tls://..., udp://..., relp://...,
 * unix:PATH (a datagram socket), http://HOST:PORT. */
struct ship_target {
	const char *scheme;     /* "tcp", "tls", "udp", "relp", "unix", "http" */
	char host[256];         /* a name or address; empty for unix */
	char port[16];          /* a number or service name; empty for unix */
	char path[108];         /* unix: the socket's path */
	/* TLS (tls://, and relp:// with --tls): files named by the options */
	const char *ca_file, *cert_file, *key_file;
	const char *server_name; /* the name the certificate must hold (default host) */
	int tls;                /* tls://, or relp:// with --tls */
	/* The window: room() says no once this many messages, or this many
	 * bytes of them (framing not counted), are queued and not yet
	 * delivered.  Never 0 (the shipper's --window and its byte bound). */
	size_t window_msgs, window_bytes;
};

/* One connection; opaque to the shipper. */
struct ship_conn;

/* A protocol's error: a message for the shipper to print, and whether
 * trying again later may help (a collector down) or never will (a
 * certificate refused, a name that does not resolve is retried). */
struct ship_err {
	char msg[256];
	int permanent;
};

/* Fills *e (ship_stream.c); the shipper puts the collector's URL before
 * the message. */
void ship_err_set(struct ship_err *e, int permanent, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

struct ship_proto {
	const char *scheme;
	/*
	 * Starts a connection to t.  Returns 0 with *c set (it may still be
	 * connecting: fd()/events() say what to wait for), or -1 with *e
	 * filled.
	 */
	int (*open)(struct ship_conn **c, const struct ship_target *t, struct ship_err *e);
	/* The descriptor to poll and the events to poll it for now. */
	int (*fd)(const struct ship_conn *c);
	short (*events)(const struct ship_conn *c);
	/* Whether a message of len bytes may be queued now: the window
	 * (bytes and messages not yet delivered) has room, and the
	 * connection is up. */
	int (*room)(const struct ship_conn *c, size_t len);
	/* Queues one message (the formatted record, without framing; the
	 * protocol frames it) of record number seq; seqs queued only grow.
	 * Copies what it keeps.  0, or -1 with *e filled (connection lost). */
	int (*queue)(struct ship_conn *c, const void *msg, size_t len, uint64_t seq,
		     struct ship_err *e);
	/*
	 * Does the work revents allow: sends queued bytes, reads the
	 * collector's answers.  *delivered becomes the number of the last
	 * record delivered, every record queued before it delivered too
	 * (left alone while none is).  0, or -1 with *e filled: the
	 * connection is lost and must be freed; what was queued and not
	 * delivered is sent again on the next one.  Besides after the
	 * events polled for, the shipper calls it with revents 0 after each
	 * queue() and at least every SHIP_TICK_MS while anything queued is
	 * undelivered (TCP's acknowledgements raise no event to poll for).
	 */
	int (*pump)(struct ship_conn *c, short revents, uint64_t *delivered, struct ship_err *e);
	/* Starts a clean close (RELP's close, TLS's bye): pump() then
	 * returns 1 once it is done. */
	void (*close)(struct ship_conn *c);
	void (*free)(struct ship_conn *c);
	/*
	 * What "delivered" promises, for --help, the manual and the log:
	 * e.g. "the collector's kernel acknowledged the bytes (TCP)".
	 */
	const char *promise;
	/* 1 if --format rfc3164 may be sent (udp, unix); 0: RFC 5424 only. */
	int any_format;
	/* NULL, or the number of messages cut to fit since the last call
	 * (a datagram's limit): the shipper says so on stderr, as a message
	 * is never cut silently. */
	uint64_t (*cut)(struct ship_conn *c);
	/* 1: the messages are Journal Export entries (read -o export), not
	 * syslog messages (http, for systemd-journal-remote). */
	int export_entries;
};

/* How often, at least, pump() is called while records are in flight. */
#define SHIP_TICK_MS 20

/* The protocols: cmd_ship.c finds those built into the tool (a protocol
 * whose file is not built, such as http without its library, is absent:
 * the shipper's references to them are weak). */
extern const struct ship_proto ship_tcp, ship_udp, ship_unix, ship_tls, ship_relp, ship_http;

#endif
