/*
 * ship_stream.c - the parts of kmsg ship's protocols over a TCP stream
 * that do not depend on what travels in it (ship_stream.h).
 */
#define _GNU_SOURCE
#include "ship_stream.h"

#include <errno.h>
#include <linux/sockios.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

void ship_err_set(struct ship_err *e, int permanent, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	e->permanent = permanent;
}

int ship_stream_open(struct ship_stream *s, const struct ship_target *t, struct ship_err *e)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
	struct addrinfo *ai = NULL;
	int rc, err = 0, one = 1;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->window_msgs = t->window_msgs ? t->window_msgs : 128;
	s->window_bytes = t->window_bytes ? t->window_bytes : (size_t)1 << 20;
	s->q = calloc(s->window_msgs, sizeof(*s->q));
	if (s->q == NULL) {
		ship_err_set(e, 0, "out of memory");
		return -1;
	}
	rc = getaddrinfo(t->host, t->port, &hints, &ai);
	if (rc != 0) {
		ship_err_set(e, 0, "%s", rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		goto fail;
	}
	for (struct addrinfo *a = ai; a; a = a->ai_next) {
		int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
				a->ai_protocol);

		if (fd < 0) {
			err = errno;
			continue;
		}
		if (connect(fd, a->ai_addr, a->ai_addrlen) == 0 || errno == EINPROGRESS) {
			s->fd = fd;
			s->connecting = 1;
			break;
		}
		err = errno;
		close(fd);
	}
	freeaddrinfo(ai);
	if (s->fd < 0) {
		ship_err_set(e, 0, "%s", strerror(err ? err : EADDRNOTAVAIL));
		goto fail;
	}
	setsockopt(s->fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	setsockopt(s->fd, IPPROTO_TCP, TCP_KEEPIDLE, &(int){ 60 }, sizeof(int));
	setsockopt(s->fd, IPPROTO_TCP, TCP_KEEPINTVL, &(int){ 10 }, sizeof(int));
	setsockopt(s->fd, IPPROTO_TCP, TCP_KEEPCNT, &(int){ 6 }, sizeof(int));
	return 0;
fail:
	free(s->q);
	s->q = NULL;
	return -1;
}

void ship_stream_free(struct ship_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	free(s->q);
	s->buf = NULL;
	s->q = NULL;
}

int ship_stream_connected(struct ship_stream *s, short revents, struct ship_err *e)
{
	int err = 0;
	socklen_t l = sizeof(err);

	if (!s->connecting)
		return 1;
	if (!(revents & (POLLOUT | POLLERR | POLLHUP)))
		return 0;
	if (getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &l) < 0)
		err = errno;
	if (err) {
		ship_err_set(e, 0, "%s", strerror(err));
		return -1;
	}
	s->connecting = 0;
	return 1;
}

int ship_stream_room(const struct ship_stream *s, size_t len)
{
	if (s->fd < 0 || s->connecting || s->n >= s->window_msgs)
		return 0;
	/* one message alone may be larger than the byte window */
	return s->n == 0 || s->bytes + len <= s->window_bytes;
}

char *ship_stream_reserve(struct ship_stream *s, size_t n)
{
	size_t cap;
	char *b;

	if (s->off && s->off == s->len)
		s->off = s->len = 0;
	if (s->len + n <= s->cap)
		return s->buf + s->len;
	if (s->off) {
		memmove(s->buf, s->buf + s->off, s->len - s->off);
		s->len -= s->off;
		s->off = 0;
		if (s->len + n <= s->cap)
			return s->buf + s->len;
	}
	cap = s->cap ? s->cap : 65536;
	while (cap < s->len + n)
		cap *= 2;
	b = realloc(s->buf, cap);
	if (b == NULL)
		return NULL;
	s->buf = b;
	s->cap = cap;
	return s->buf + s->len;
}

void ship_stream_track(struct ship_stream *s, uint64_t seq, uint64_t mark, size_t len)
{
	struct ship_msg *m = &s->q[(s->head + s->n++) % s->window_msgs];

	m->seq = seq;
	m->mark = mark;
	m->len = len;
	s->bytes += len;
}

struct ship_msg *ship_stream_oldest(struct ship_stream *s)
{
	return s->n ? &s->q[s->head] : NULL;
}

void ship_stream_pop(struct ship_stream *s, uint64_t *delivered)
{
	struct ship_msg *m = &s->q[s->head];

	*delivered = m->seq;
	s->bytes -= m->len;
	s->head = (s->head + 1) % s->window_msgs;
	s->n--;
}

int ship_stream_write(struct ship_stream *s, struct ship_err *e)
{
	while (s->off < s->len) {
		ssize_t n = send(s->fd, s->buf + s->off, s->len - s->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			ship_err_set(e, 0, "%s", strerror(errno));
			return -1;
		}
		s->off += (size_t)n;
		s->written += (uint64_t)n;
	}
	return 0;
}

int ship_stream_acked(const struct ship_stream *s, uint64_t *acked, struct ship_err *e)
{
	int outq;

	if (ioctl(s->fd, SIOCOUTQ, &outq) < 0) {
		ship_err_set(e, 1, "SIOCOUTQ: %s", strerror(errno));
		return -1;
	}
	*acked = s->written - (uint64_t)outq;
	return 0;
}

int ship_stream_read(struct ship_stream *s, char *buf, size_t size, size_t *have,
		     struct ship_err *e)
{
	while (*have < size) {
		ssize_t n = recv(s->fd, buf + *have, size - *have, MSG_DONTWAIT);

		if (n == 0)
			return 1;
		if (n < 0) {
			if (errno == EAGAIN || errno == EINTR)
				return 0;
			ship_err_set(e, 0, "%s", strerror(errno));
			return -1;
		}
		*have += (size_t)n;
	}
	return 0;
}
