/*
 * ship_tls.c - kmsg ship's tls:// (RFC 5425: RFC 5424 messages framed by
 * octet counting, over TLS), and the TLS session relp:// --tls uses, with
 * GnuTLS.
 *
 * The collector's certificate must chain to --tls-ca (or to the system's
 * trust store) and hold the name --tls-name gives (the URL's host by
 * default: a DNS name, or an address matched against the certificate's
 * IP addresses).  A certificate refused is a permanent error, said with
 * what is wrong and what to give instead: trying again would meet the
 * same certificate.  --tls-cert and --tls-key give a certificate of our
 * own to a collector that asks for one.
 *
 * Delivered means what it means for tcp://: the collector's TCP
 * acknowledged the bytes.  GnuTLS writes through our push function, which
 * counts the bytes of the stream; when gnutls_record_send() has taken the
 * plaintext up to a message's end, the message gets the stream's count
 * at that moment as its end, and once written less SIOCOUTQ covers that
 * end it is delivered (ship_stream.h).  Until then a message's mark is
 * its end in the plaintext.
 *
 * Everything is non-blocking: the handshake, the writes and the bye are
 * steps that pump() takes as the socket allows.
 */
#define _GNU_SOURCE
#include "ship_stream.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gnutls/gnutls.h>
#include <gnutls/x509.h>

/* GnuTLS's largest record: what one gnutls_record_send() is given. */
#define RECORD_MAX 16384

struct ship_tls {
	gnutls_session_t sess;
	gnutls_certificate_credentials_t cred;
	struct ship_stream *s;
	int handshaken;
	size_t sending;          /* a record_send() that said AGAIN: its size */
	const char *ca_file;     /* NULL: the system's trust store */
	char name[256];          /* the name the certificate must hold */
};

/* The length of gnutls_strerror(rc) without its full stop. */
static int words(int rc)
{
	size_t n = strlen(gnutls_strerror(rc));

	return (int)(n && gnutls_strerror(rc)[n - 1] == '.' ? n - 1 : n);
}

static ssize_t push(gnutls_transport_ptr_t p, const void *buf, size_t n)
{
	struct ship_tls *x = p;
	ssize_t w = send(x->s->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);

	if (w < 0) {
		gnutls_transport_set_errno(x->sess, errno);
		return -1;
	}
	x->s->written += (uint64_t)w;
	return w;
}

static ssize_t pull(gnutls_transport_ptr_t p, void *buf, size_t n)
{
	struct ship_tls *x = p;
	ssize_t r = recv(x->s->fd, buf, n, MSG_DONTWAIT);

	if (r < 0)
		gnutls_transport_set_errno(x->sess, errno);
	return r;
}

void ship_tls_free(struct ship_tls *x)
{
	if (x == NULL)
		return;
	if (x->sess)
		gnutls_deinit(x->sess);
	if (x->cred)
		gnutls_certificate_free_credentials(x->cred);
	free(x);
}

int ship_tls_new(struct ship_tls **out, struct ship_stream *s, const struct ship_target *t,
		 struct ship_err *e)
{
	struct ship_tls *x = calloc(1, sizeof(*x));
	const char *name = t->server_name && *t->server_name ? t->server_name : t->host;
	unsigned char addr[16];
	int rc;

	if (x == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	x->s = s;
	x->ca_file = t->ca_file;
	snprintf(x->name, sizeof(x->name), "%s", name);
	/* GnuTLS says only "Error while reading file": the why first */
	for (int i = 0; i < 3; i++) {
		static const char *const opt[3] = { "--tls-ca", "--tls-cert", "--tls-key" };
		const char *f = i == 0 ? t->ca_file : i == 1 ? t->cert_file : t->key_file;

		if (f && access(f, R_OK) < 0) {
			ship_err_set(e, 1, "%s %s: %s", opt[i], f, strerror(errno));
			goto fail;
		}
	}
	if ((rc = gnutls_certificate_allocate_credentials(&x->cred)) < 0)
		goto gnutls_fail;
	if (t->ca_file) {
		rc = gnutls_certificate_set_x509_trust_file(x->cred, t->ca_file,
							    GNUTLS_X509_FMT_PEM);
		if (rc <= 0) {
			ship_err_set(e, 1, "--tls-ca %s: %.*s; give a file of PEM "
				     "certificates", t->ca_file, rc == 0 ? 20 : words(rc),
				     rc == 0 ? "no certificate in it" : gnutls_strerror(rc));
			goto fail;
		}
	} else if ((rc = gnutls_certificate_set_x509_system_trust(x->cred)) <= 0) {
		ship_err_set(e, 1, "the system's trust store: %.*s; give --tls-ca the CA "
			     "that signed the collector's certificate", rc == 0 ? 20 : words(rc),
			     rc == 0 ? "no certificate in it" : gnutls_strerror(rc));
		goto fail;
	}
	if (t->cert_file || t->key_file) {
		if (!t->cert_file || !t->key_file) {
			ship_err_set(e, 1, "--tls-cert and --tls-key go together: the "
				     "certificate and its private key");
			goto fail;
		}
		rc = gnutls_certificate_set_x509_key_file(x->cred, t->cert_file, t->key_file,
							  GNUTLS_X509_FMT_PEM);
		if (rc < 0) {
			ship_err_set(e, 1, "--tls-cert %s, --tls-key %s: %.*s", t->cert_file,
				     t->key_file, words(rc), gnutls_strerror(rc));
			goto fail;
		}
	}
	if ((rc = gnutls_init(&x->sess, GNUTLS_CLIENT | GNUTLS_NONBLOCK)) < 0 ||
	    (rc = gnutls_set_default_priority(x->sess)) < 0 ||
	    (rc = gnutls_credentials_set(x->sess, GNUTLS_CRD_CERTIFICATE, x->cred)) < 0)
		goto gnutls_fail;
	/* SNI is for names; an address is checked against the certificate's
	 * IP addresses by the verification below */
	if (inet_pton(AF_INET, x->name, addr) != 1 && inet_pton(AF_INET6, x->name, addr) != 1 &&
	    (rc = gnutls_server_name_set(x->sess, GNUTLS_NAME_DNS, x->name,
					 strlen(x->name))) < 0)
		goto gnutls_fail;
	gnutls_session_set_verify_cert(x->sess, x->name, 0);
	gnutls_transport_set_ptr(x->sess, x);
	gnutls_transport_set_push_function(x->sess, push);
	gnutls_transport_set_pull_function(x->sess, pull);
	*out = x;
	return 0;
gnutls_fail:
	ship_err_set(e, 0, "TLS: %.*s", words(rc), gnutls_strerror(rc));
fail:
	ship_tls_free(x);
	return -1;
}

/* What is wrong with the certificate the handshake refused, in words,
 * and what to do: *e, permanent. */
static void refused(struct ship_tls *x, struct ship_err *e)
{
	unsigned st = gnutls_session_get_verify_cert_status(x->sess);
	gnutls_datum_t out = { NULL, 0 };
	char why[160] = "";

	if (gnutls_certificate_verification_status_print(st, GNUTLS_CRT_X509, &out, 0) == 0) {
		static const char lead[] = "The certificate is NOT trusted. ";
		const char *w = (const char *)out.data;
		size_t n;

		if (!strncmp(w, lead, sizeof(lead) - 1))
			w += sizeof(lead) - 1;
		snprintf(why, sizeof(why), "%s", w);
		gnutls_free(out.data);
		n = strlen(why);
		while (n && why[n - 1] == ' ')
			why[--n] = '\0';
	}
	if (st & GNUTLS_CERT_SIGNER_NOT_FOUND) {
		if (x->ca_file)
			ship_err_set(e, 1, "the collector's certificate is not signed by "
				     "--tls-ca %s (%s); give the CA that signed it",
				     x->ca_file, why);
		else
			ship_err_set(e, 1, "the collector's certificate is not signed by "
				     "a CA the system trusts (%s); give --tls-ca the CA that "
				     "signed it", why);
	} else if (st & GNUTLS_CERT_UNEXPECTED_OWNER) {
		ship_err_set(e, 1, "the collector's certificate is not for '%s' (%s); "
			     "give --tls-name the name it holds, or a certificate for '%s' "
			     "to the collector", x->name, why, x->name);
	} else if (st & (GNUTLS_CERT_EXPIRED | GNUTLS_CERT_NOT_ACTIVATED)) {
		ship_err_set(e, 1, "the collector's certificate is out of its dates "
			     "(%s); give the collector a current one, or check this "
			     "machine's clock", why);
	} else {
		ship_err_set(e, 1, "the collector's certificate is refused (%s)", why);
	}
}

/* A GnuTLS error of a step, in *e: 0 for those that only mean "not yet",
 * else -1. */
static int tls_error(struct ship_tls *x, int rc, struct ship_err *e)
{
	if (rc == GNUTLS_E_AGAIN || rc == GNUTLS_E_INTERRUPTED)
		return 0;
	if (rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR) {
		refused(x, e);
	} else if (rc == GNUTLS_E_PREMATURE_TERMINATION || rc == GNUTLS_E_PUSH_ERROR ||
		   rc == GNUTLS_E_PULL_ERROR) {
		ship_err_set(e, 0, "the collector closed the connection%s", x->handshaken ?
			     "" : " during the TLS handshake (is it TLS? does it want "
			     "a certificate of ours, --tls-cert and --tls-key?)");
	} else {
		/* an alert or a broken record: a collector may be set up
		 * anew, so it is tried again (with the shipper's backoff) */
		ship_err_set(e, 0, "TLS: %.*s", words(rc), gnutls_strerror(rc));
	}
	return -1;
}

int ship_tls_handshake(struct ship_tls *x, struct ship_err *e)
{
	int rc;

	if (x->handshaken)
		return 1;
	rc = gnutls_handshake(x->sess);
	if (rc == 0) {
		x->handshaken = 1;
		return 1;
	}
	if (rc < 0 && gnutls_error_is_fatal(rc) == 0 && rc != GNUTLS_E_AGAIN &&
	    rc != GNUTLS_E_INTERRUPTED)
		return 0;  /* a warning alert: go on */
	return tls_error(x, rc, e);
}

short ship_tls_events(const struct ship_tls *x)
{
	return gnutls_record_get_direction(x->sess) ? POLLOUT : POLLIN;
}

int ship_tls_write(struct ship_tls *x, struct ship_err *e)
{
	struct ship_stream *s = x->s;

	while (s->off < s->len) {
		size_t n = x->sending ? x->sending :
			   s->len - s->off < RECORD_MAX ? s->len - s->off : RECORD_MAX;
		ssize_t w = gnutls_record_send(x->sess, s->buf + s->off, n);

		if (w < 0) {
			if (w == GNUTLS_E_AGAIN || w == GNUTLS_E_INTERRUPTED) {
				/* called again with the same bytes */
				x->sending = n;
				return 0;
			}
			return tls_error(x, (int)w, e);
		}
		x->sending = 0;
		s->off += (size_t)w;
	}
	return 0;
}

int ship_tls_pending(const struct ship_tls *x)
{
	return x->sending != 0;
}

int ship_tls_read(struct ship_tls *x, char *buf, size_t size, size_t *have,
		  struct ship_err *e)
{
	while (*have < size) {
		ssize_t r = gnutls_record_recv(x->sess, buf + *have, size - *have);

		if (r == 0)
			return 1;
		if (r < 0)
			return tls_error(x, (int)r, e) == 0 ? 0 : -1;
		*have += (size_t)r;
	}
	return 0;
}

int ship_tls_bye(struct ship_tls *x, struct ship_err *e)
{
	int rc = gnutls_bye(x->sess, GNUTLS_SHUT_WR);

	if (rc == 0)
		return 1;
	return tls_error(x, rc, e);
}

/* ---- tls:// ------------------------------------------------------------ */

struct ship_conn {
	struct ship_stream s;
	struct ship_tls *x;
	uint64_t plain;          /* plaintext bytes queued since the connect */
	size_t marked;           /* the oldest messages whose mark is a stream end */
	int closing, closed;
};

static void tls_free(struct ship_conn *c)
{
	if (c == NULL)
		return;
	ship_tls_free(c->x);
	ship_stream_free(&c->s);
	free(c);
}

static int tls_open(struct ship_conn **out, const struct ship_target *t, struct ship_err *e)
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
	if (ship_tls_new(&c->x, &c->s, t, e) < 0) {
		tls_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

static int tls_fd(const struct ship_conn *c)
{
	return c->s.fd;
}

static short tls_events(const struct ship_conn *c)
{
	if (c->s.connecting)
		return POLLOUT;
	if (!c->x->handshaken || ship_tls_pending(c->x))
		return ship_tls_events(c->x);
	return (short)(POLLIN | (c->s.off < c->s.len ? POLLOUT : 0));
}

static int tls_room(const struct ship_conn *c, size_t len)
{
	return !c->s.connecting && c->x->handshaken && !c->closing && ship_stream_room(&c->s, len);
}

static int tls_queue(struct ship_conn *c, const void *msg, size_t len, uint64_t seq,
		     struct ship_err *e)
{
	char head[24];
	int hl = snprintf(head, sizeof(head), "%zu ", len);
	char *p;

	if (!tls_room(c, len)) {
		ship_err_set(e, 0, "queued past the window");
		return -1;
	}
	p = ship_stream_reserve(&c->s, (size_t)hl + len);
	if (p == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	memcpy(p, head, (size_t)hl);
	memcpy(p + hl, msg, len);
	c->s.len += (size_t)hl + len;
	c->plain += (size_t)hl + len;
	ship_stream_track(&c->s, seq, c->plain, len);
	return 0;
}

static int tls_pump(struct ship_conn *c, short revents, uint64_t *delivered,
		    struct ship_err *e)
{
	uint64_t sent, acked;
	int rc;

	if (c->closed)
		return 1;
	rc = ship_stream_connected(&c->s, revents, e);
	if (rc <= 0)
		return rc;
	rc = ship_tls_handshake(c->x, e);
	if (rc <= 0)
		return rc;
	if (revents & (POLLIN | POLLHUP | POLLERR)) {
		/* a collector sends nothing but its close: read and dropped */
		char sink[4096];
		size_t have = 0;

		do {
			have = 0;
			rc = ship_tls_read(c->x, sink, sizeof(sink), &have, e);
		} while (rc == 0 && have == sizeof(sink));
		if (rc < 0)
			return -1;
		if (rc == 1) {
			ship_err_set(e, 0, "the collector closed the connection");
			return -1;
		}
	}
	if (ship_tls_write(c->x, e) < 0)
		return -1;
	/* the plaintext GnuTLS took is in the stream up to written */
	sent = c->plain - (c->s.len - c->s.off);
	for (size_t i = c->marked; i < c->s.n; i++) {
		struct ship_msg *m = &c->s.q[(c->s.head + i) % c->s.window_msgs];

		if (m->mark > sent)
			break;
		m->mark = c->s.written;
		c->marked++;
	}
	if (c->marked) {
		if (ship_stream_acked(&c->s, &acked, e) < 0)
			return -1;
		while (c->marked && ship_stream_oldest(&c->s)->mark <= acked) {
			ship_stream_pop(&c->s, delivered);
			c->marked--;
		}
	}
	if (c->closing && c->s.n == 0 && c->s.off == c->s.len) {
		rc = ship_tls_bye(c->x, e);
		if (rc == 1)
			c->closed = 1;
		return rc;
	}
	return 0;
}

static void tls_close(struct ship_conn *c)
{
	c->closing = 1;
	if (c->s.connecting || !c->x->handshaken)
		c->closed = 1;
}

const struct ship_proto ship_tls = {
	.scheme = "tls",
	.open = tls_open,
	.fd = tls_fd,
	.events = tls_events,
	.room = tls_room,
	.queue = tls_queue,
	.pump = tls_pump,
	.close = tls_close,
	.free = tls_free,
	.promise = "the collector's TCP acknowledged the TLS records that carry the "
		   "message (its kernel has them; a collector killed before it read "
		   "them loses them)",
	.any_format = 0,
};
