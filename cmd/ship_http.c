/*
 * ship_http.c - kmsg ship's http://: the records as Journal Export
 * entries (read -o export, lib/text/export.c), POSTed to
 * systemd-journal-remote's /upload, as systemd-journal-upload sends them.
 *
 * The messages queued while no request is out are the body of the next
 * POST (Content-Type application/vnd.fdo.journal, a Content-Length, on a
 * kept-alive HTTP/1.1 connection); while one is out, the next body fills,
 * so one POST carries what the shipper read while the last was answered,
 * at most the window.  journal-remote answers when it has read the whole
 * body and written its entries to its journal file: 202 (any 2xx) makes
 * every record of that POST delivered.  Another answer, a connection
 * closed before it, or bytes that are no HTTP answer end the connection,
 * and the shipper sends again, on a new one, all that was not answered:
 * a journal-remote killed after writing entries and before its answer
 * gets those entries twice, at most the window.  An answer that says the
 * peer is no journal-remote's /upload (404, 405, 415, 501) is permanent.
 *
 * Answers are read into a fixed buffer: one longer than ANSWER_MAX, or a
 * header block that is not HTTP, ends the connection.
 */
#define _GNU_SOURCE
#include "ship_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* journal-remote's answers are a status line, a few headers and "OK." */
#define ANSWER_MAX 16384

enum state { CONNECTING, READY, POSTING, DONE };

struct ship_conn {
	struct ship_stream s;
	enum state state;
	char host[sizeof(((struct ship_target *)0)->host) + 2 +
		  sizeof(((struct ship_target *)0)->port)]; /* the Host header's */
	/* the next POST's body: the entries queued since the last one left */
	char *body;
	size_t body_len, body_cap;
	uint64_t posted;         /* the batch out (the marks of its messages) */
	uint64_t next;           /* the batch the body is */
	int want_close;
	size_t have;
	char in[ANSWER_MAX + 1];
};

static void http_free(struct ship_conn *c)
{
	if (c == NULL)
		return;
	ship_stream_free(&c->s);
	free(c->body);
	free(c);
}

static int http_open(struct ship_conn **out, const struct ship_target *t, struct ship_err *e)
{
	struct ship_conn *c = calloc(1, sizeof(*c));

	if (c == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	if (ship_stream_open(&c->s, t, e) < 0) {
		free(c);
		return -1;
	}
	snprintf(c->host, sizeof(c->host), strchr(t->host, ':') ? "[%s]:%s" : "%s:%s",
		 t->host, t->port);
	c->state = CONNECTING;
	c->next = 1;
	*out = c;
	return 0;
}

static int http_fd(const struct ship_conn *c)
{
	return c->s.fd;
}

static short http_events(const struct ship_conn *c)
{
	if (c->state == CONNECTING)
		return POLLOUT;
	return (short)(POLLIN | (c->s.off < c->s.len ? POLLOUT : 0));
}

static int http_room(const struct ship_conn *c, size_t len)
{
	return (c->state == READY || c->state == POSTING) && !c->want_close &&
	       ship_stream_room(&c->s, len);
}

static int http_queue(struct ship_conn *c, const void *msg, size_t len, uint64_t seq,
		      struct ship_err *e)
{
	if (!http_room(c, len)) {
		ship_err_set(e, 0, "queued past the window");
		return -1;
	}
	if (c->body_len + len > c->body_cap) {
		size_t cap = c->body_cap ? c->body_cap : 65536;
		char *b;

		while (cap < c->body_len + len)
			cap *= 2;
		b = realloc(c->body, cap);
		if (b == NULL) {
			ship_err_set(e, 0, "out of memory");
			return -1;
		}
		c->body = b;
		c->body_cap = cap;
	}
	memcpy(c->body + c->body_len, msg, len);
	c->body_len += len;
	ship_stream_track(&c->s, seq, c->next, len);
	return 0;
}

/* Sends the body as the next POST: 0, or -1 with *e filled. */
static int post(struct ship_conn *c, struct ship_err *e)
{
	char head[sizeof(c->host) + 160];
	int hl = snprintf(head, sizeof(head), "POST /upload HTTP/1.1\r\nHost: %s\r\n"
			  "Content-Type: application/vnd.fdo.journal\r\n"
			  "Content-Length: %zu\r\n\r\n", c->host, c->body_len);
	char *p = ship_stream_reserve(&c->s, (size_t)hl + c->body_len);

	if (p == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	memcpy(p, head, (size_t)hl);
	memcpy(p + hl, c->body, c->body_len);
	c->s.len += (size_t)hl + c->body_len;
	c->body_len = 0;
	c->posted = c->next++;
	c->state = POSTING;
	return 0;
}

/*
 * The value of header name (with its colon) in the header block h (len
 * bytes, lines ending in CRLF), its length in *vl; NULL if absent.
 */
static const char *header(const char *h, size_t len, const char *name, size_t *vl)
{
	size_t nl = strlen(name);

	for (const char *line = h; line < h + len;) {
		const char *end = memmem(line, (size_t)(h + len - line), "\r\n", 2);

		if (end == NULL)
			end = h + len;
		if ((size_t)(end - line) >= nl && strncasecmp(line, name, nl) == 0) {
			const char *v = line + nl;

			while (v < end && (*v == ' ' || *v == '\t'))
				v++;
			*vl = (size_t)(end - v);
			return v;
		}
		line = end + 2;
	}
	return NULL;
}

/*
 * Takes one whole answer from c->in, if there is one: 1 if it took one,
 * 0 if more must come, -1 with *e filled.  eof: the collector closed the
 * connection, which ends an answer without a Content-Length.
 */
static int take_answer(struct ship_conn *c, int eof, uint64_t *delivered,
		       struct ship_err *e)
{
	const char *hend = memmem(c->in, c->have, "\r\n\r\n", 4), *v;
	size_t hlen, vl, blen, whole;
	unsigned long long cl = 0;
	int code, closes = 0;
	char *endp;

	if (hend == NULL) {
		if (c->have == ANSWER_MAX)
			goto too_long;
		return 0;
	}
	hlen = (size_t)(hend - c->in) + 4;
	if (hlen < 12 || memcmp(c->in, "HTTP/1.", 7) != 0 || c->in[8] != ' ' ||
	    c->in[9] < '1' || c->in[9] > '5' || c->in[10] < '0' || c->in[10] > '9' ||
	    c->in[11] < '0' || c->in[11] > '9') {
		ship_err_set(e, 0, "the collector sent bytes that are no HTTP answer");
		return -1;
	}
	code = (c->in[9] - '0') * 100 + (c->in[10] - '0') * 10 + (c->in[11] - '0');
	v = header(c->in, hlen - 2, "Connection:", &vl);
	closes = v && vl >= 5 && strncasecmp(v, "close", 5) == 0;
	v = header(c->in, hlen - 2, "Content-Length:", &vl);
	if (v) {
		cl = strtoull(v, &endp, 10);
		if (endp == v || cl > ANSWER_MAX) {
			if (endp == v)
				ship_err_set(e, 0, "the collector's answer has a bad "
					     "Content-Length");
			else
				goto too_long;
			return -1;
		}
		blen = (size_t)cl;
	} else if (code < 200 || code == 204 || code == 304) {
		blen = 0;
	} else if (eof) {
		blen = c->have - hlen;  /* the body ends with the connection */
	} else {
		if (c->have == ANSWER_MAX)
			goto too_long;
		return 0;
	}
	whole = hlen + blen;
	if (whole > ANSWER_MAX)
		goto too_long;
	if (c->have < whole) {
		if (eof) {
			ship_err_set(e, 0, "the collector closed the connection in the middle "
				     "of its answer");
			return -1;
		}
		return 0;
	}
	if (code >= 100 && code < 200)
		goto taken;  /* an interim answer: the real one follows */
	if (c->state != POSTING) {
		ship_err_set(e, 0, "the collector answered %d to no request", code);
		return -1;
	}
	if (code < 200 || code > 299) {
		int body = (int)(blen > 120 ? 120 : blen);

		while (body && (c->in[hlen + body - 1] == '\n' || c->in[hlen + body - 1] == '\r'))
			body--;
		ship_err_set(e, code == 404 || code == 405 || code == 415 || code == 501,
			     "the collector answered %d %.*s%s", code, body, c->in + hlen,
			     code == 404 || code == 405 || code == 415 || code == 501 ?
			     " (is this systemd-journal-remote --listen-http?)" : "");
		return -1;
	}
	while (ship_stream_oldest(&c->s) && ship_stream_oldest(&c->s)->mark == c->posted)
		ship_stream_pop(&c->s, delivered);
	c->state = READY;
	if (closes) {
		c->have = 0;
		ship_err_set(e, 0, "the collector closes the connection after each answer");
		return -1;
	}
taken:
	memmove(c->in, c->in + whole, c->have - whole);
	c->have -= whole;
	return 1;
too_long:
	ship_err_set(e, 0, "the collector's answer is longer than %d bytes", ANSWER_MAX);
	return -1;
}

/* Reads and takes the collector's answers: 0, or -1 with *e filled. */
static int read_answers(struct ship_conn *c, uint64_t *delivered, struct ship_err *e)
{
	int eof = ship_stream_read(&c->s, c->in, ANSWER_MAX, &c->have, e), rc;

	if (eof < 0)
		return -1;
	while ((rc = take_answer(c, eof, delivered, e)) == 1)
		;
	if (rc < 0)
		return -1;
	if (eof) {
		ship_err_set(e, 0, c->state == POSTING ? "the collector closed the connection "
			     "before it answered" : "the collector closed the connection");
		return -1;
	}
	return 0;
}

static int http_pump(struct ship_conn *c, short revents, uint64_t *delivered,
		     struct ship_err *e)
{
	int rc;

	if (c->state == DONE)
		return 1;
	if (c->state == CONNECTING) {
		rc = ship_stream_connected(&c->s, revents, e);
		if (rc <= 0)
			return rc;
		c->state = READY;
	}
	if (revents & (POLLIN | POLLHUP | POLLERR) || c->state == POSTING) {
		if (read_answers(c, delivered, e) < 0)
			return c->want_close && c->s.n == 0 ? 1 : -1;
	}
	if (c->state == READY && c->body_len && post(c, e) < 0)
		return -1;
	if (c->state == READY && c->want_close && c->s.n == 0) {
		c->state = DONE;
		return 1;
	}
	return ship_stream_write(&c->s, e);
}

static void http_close(struct ship_conn *c)
{
	c->want_close = 1;
}

const struct ship_proto ship_http = {
	.scheme = "http",
	.open = http_open,
	.fd = http_fd,
	.events = http_events,
	.room = http_room,
	.queue = http_queue,
	.pump = http_pump,
	.close = http_close,
	.free = http_free,
	.promise = "systemd-journal-remote answered 202 to the POST that carried it: "
		   "it wrote the entry to its journal file (not necessarily to disk)",
	.any_format = 0,
	.export_entries = 1,
};
