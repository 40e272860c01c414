/*
 * kmsg_parse.c - the /dev/kmsg record format read back into records: what
 * the kernel's /dev/kmsg gives (cat /dev/kmsg) and what kmsg read -o kmsg
 * writes, as dmesg -K reads it.
 *
 * A record is a header line, "PRIO,SEQ,USEC,FLAGS[,ITEM...];TEXT", and the
 * lines after it that begin with a space, " KEY=VALUE", each byte below
 * 0x20, from 0x7f up and '\' written as \xHH.  Keys that begin with '_'
 * are no field (a field's key begins with a capital): they carry what the
 * kernel's format has no place for and -o kmsg writes under them (see
 * render.c) - the numbering's identity, the exact times, the boot id, the
 * pid and the caller - so that a log read back from that text prints as the log.
 *
 * A record is complete only when the line after its last field comes,
 * so the parser holds one record back: each line fed may hand out the
 * record before it.  The record handed out and the one being read live in
 * two buffers that swap, so what was handed out stays valid until the
 * next call.  Lines that are not of the format are skipped and said to
 * be (kmsg_devkmsg_skipped()), with the fields after a skipped header;
 * the lines after a header that begin with a space are its dictionary,
 * and one that is no field kmsg can take is left out without a word, as
 * dmesg reads none of them.  Records may be NUL-separated, as dmesg -K
 * reads them (util-linux 2.40): then every line up to the next NUL is
 * the record's, and blanks before a header are passed over.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

/* One record's bytes: its text, then its fields as kmsg_field_next() walks
 * them (a 16-bit length, then KEY=VALUE). */
struct devkmsg_rec {
	struct kmsg_record rec;
	char *buf;
	size_t cap, text_len, fields_len;
	int have_real;
};

struct kmsg_devkmsg {
	int64_t boot_real_ns;
	struct devkmsg_rec r[2];
	int cur;            /* r[cur] is the record being read */
	int pending;        /* r[cur] holds a header */
	int skipping;       /* the last header was bad: its fields go too */
	int framed;         /* records are NUL-separated, as dmesg -K reads */
	int chunk_start;    /* a NUL came: the next line is a header */
	const char *why;    /* why the last line fed was skipped, or NULL */
};

/* Bytes of fields one record may carry here; more are skipped. */
#define DEVKMSG_FIELDS_MAX (1u << 20)

int kmsg_devkmsg_new(struct kmsg_devkmsg **out, int64_t boot_real_ns)
{
	struct kmsg_devkmsg *p;

	if (out == NULL)
		return KMSG_EINVAL;
	p = calloc(1, sizeof(*p));
	if (p == NULL)
		return -ENOMEM;
	p->boot_real_ns = boot_real_ns;
	*out = p;
	return 0;
}

void kmsg_devkmsg_free(struct kmsg_devkmsg *p)
{
	if (p == NULL)
		return;
	free(p->r[0].buf);
	free(p->r[1].buf);
	free(p);
}

const char *kmsg_devkmsg_skipped(const struct kmsg_devkmsg *p)
{
	return p ? p->why : NULL;
}

/* Room for more bytes in r's buffer; 0 or -ENOMEM. */
static int reserve(struct devkmsg_rec *r, size_t more)
{
	size_t used = r->text_len + r->fields_len, cap;
	char *nb;

	if (used + more <= r->cap)
		return 0;
	cap = r->cap ? r->cap : 256;
	while (cap < used + more)
		cap *= 2;
	nb = realloc(r->buf, cap);
	if (nb == NULL)
		return -ENOMEM;
	r->buf = nb;
	r->cap = cap;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * Copies s (n bytes) to d with each \xHH turned into its byte; a '\' not
 * followed by that stays as it is (the kernel never writes one).
 * Returns the bytes written, at most n.
 */
static size_t unescape(char *d, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		int hi, lo;

		if (s[i] == '\\' && n - i >= 4 && s[i + 1] == 'x' &&
		    (hi = hexval(s[i + 2])) >= 0 && (lo = hexval(s[i + 3])) >= 0) {
			d[o++] = (char)(hi << 4 | lo);
			i += 3;
		} else {
			d[o++] = s[i];
		}
	}
	return o;
}

/* A decimal number of at most max from *p to end (or an optional '-' if
 * neg is not NULL); 0, or -1 if there is none or it is too large. */
static int number(const char **p, const char *end, uint64_t max, uint64_t *v, int *neg)
{
	const char *q = *p;

	*v = 0;
	if (neg) {
		*neg = q < end && *q == '-';
		q += *neg;
	}
	if (q == end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++) {
		unsigned d = (unsigned)(*q - '0');

		if (*v > (max - d) / 10)
			return -1;
		*v = *v * 10 + d;
	}
	*p = q;
	return 0;
}

/* 1 to 16 hexadecimal digits (s, n bytes) as a number; 0 or -1. */
static int hex64(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (n == 0 || n > 16)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = hexval(s[i]);

		if (d < 0)
			return -1;
		*v = *v << 4 | (unsigned)d;
	}
	return 0;
}

/* A signed decimal number that is all of s (n bytes); 0 or -1. */
static int whole_i64(const char *s, size_t n, int64_t *v)
{
	const char *p = s;
	uint64_t u;
	int neg;

	if (number(&p, s + n, (uint64_t)INT64_MAX, &u, &neg) < 0 || p != s + n)
		return -1;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

/*
 * The header line: "PRIO,SEQ,USEC,FLAGS[,ITEM...];TEXT".  Items after the
 * flags are the kernel's to add: caller=T<id> (a thread) and caller=C<n>
 * (a CPU) are read as KMSG_KERNEL_CALLER, others passed over.
 * Returns 0, -ENOMEM, or 1 with p->why set for a line that is not one.
 */
static int header(struct kmsg_devkmsg *p, struct devkmsg_rec *r, const char *line,
		  size_t len)
{
	const char *s = line, *end = line + len, *semi = memchr(line, ';', len);
	uint64_t prio, seq, usec;
	int neg;

	if (semi == NULL) {
		p->why = "not a record (PRIO,SEQ,USEC,FLAGS;TEXT) nor a field (\" KEY=VALUE\")";
		return 1;
	}
	if (number(&s, semi, 191, &prio, NULL) < 0 || s == semi || *s++ != ',') {
		p->why = "no priority (0 to 191) where a record begins";
		return 1;
	}
	if (number(&s, semi, UINT64_MAX, &seq, NULL) < 0 || s == semi || *s++ != ',') {
		p->why = "no sequence number after the priority";
		return 1;
	}
	/* dmesg 2.40 reads a header without flags ("6,1,2;x") too */
	if (number(&s, semi, (uint64_t)INT64_MAX / 1000, &usec, &neg) < 0 ||
	    (s != semi && *s != ',')) {
		p->why = "no time (microseconds since boot) after the sequence number";
		return 1;
	}
	if (s != semi)
		s++;
	memset(&r->rec, 0, sizeof(r->rec));
	r->text_len = r->fields_len = 0;
	r->have_real = 0;
	r->rec.facility = (unsigned)prio >> 3;
	r->rec.level = (unsigned)prio & 7;
	r->rec.seq = seq;
	r->rec.boot_ns = (neg ? -(int64_t)usec : (int64_t)usec) * 1000;
	/* the flags: 'c' continues a line, the rest are the kernel's */
	for (; s < semi && *s != ','; s++) {
		if (*s == 'c')
			r->rec.flags |= KMSG_FRAGMENT;
	}
	while (s < semi) {
		const char *item = ++s, *e = memchr(item, ',', (size_t)(semi - item));
		uint64_t id;

		if (e == NULL)
			e = semi;
		/* the kernel's caller: a thread, or a CPU (the top bit) */
		if (e - item > 8 && memcmp(item, "caller=", 7) == 0 &&
		    (item[7] == 'T' || item[7] == 'C')) {
			const char *q = item + 8;

			if (number(&q, e, 0x7fffffff, &id, NULL) == 0 && q == e) {
				r->rec.caller = (uint32_t)id | (item[7] == 'C' ? 0x80000000u : 0);
				r->rec.flags |= KMSG_KERNEL_CALLER;
			}
		}
		s = e;
	}
	semi++;
	if (reserve(r, (size_t)(end - semi)) < 0)
		return -ENOMEM;
	r->text_len = unescape(r->buf, semi, (size_t)(end - semi));
	return 0;
}

/*
 * A field line (" KEY=VALUE", the space gone): a field of the record, or
 * one of the _KEYs -o kmsg writes.  0, -ENOMEM, or with p->why set 1 for
 * a line that is no field, 2 for one past the room for fields.
 */
static int field(struct kmsg_devkmsg *p, struct devkmsg_rec *r, const char *s, size_t len)
{
	const char *eq = memchr(s, '=', len);
	size_t klen, vlen, need;
	char key[KMSG_MAX_KEY + 1];
	uint64_t u;
	int64_t i;
	char *d;

	if (eq == NULL) {
		p->why = "a field line without '=' (\" KEY=VALUE\")";
		return 1;
	}
	/* keys are letters, digits and '_': nothing to unescape in one
	 * that is valid */
	klen = (size_t)(eq - s);
	vlen = len - klen - 1;
	if (klen > 1 && klen <= KMSG_MAX_KEY && s[0] == '_') {
		memcpy(key, s, klen);
		key[klen] = '\0';
		if (!strcmp(key, "_SEQNUM_ID") && hex64(eq + 1, vlen, &u) == 0)
			r->rec.seq_id = u;
		else if (!strcmp(key, "_BOOT_ID") && hex64(eq + 1, vlen, &u) == 0)
			r->rec.boot_id = u;
		/* _PID: the same claim, as kmsg wrote it before it kept that
		 * name for the kernel's word */
		else if ((!strcmp(key, "_CLAIMED_PID") || !strcmp(key, "_PID")) &&
			 whole_i64(eq + 1, vlen, &i) == 0 && i >= 0 && i <= UINT32_MAX)
			r->rec.pid = (uint32_t)i;
		else if (!strcmp(key, "_CALLER") && whole_i64(eq + 1, vlen, &i) == 0 &&
			 i >= 0 && i <= UINT32_MAX) {
			/* kmsg's own id, over the header's form of it */
			r->rec.caller = (uint32_t)i;
			r->rec.flags &= ~(unsigned)KMSG_KERNEL_CALLER;
		}
		else if (!strcmp(key, "_REALTIME_NS") && whole_i64(eq + 1, vlen, &i) == 0) {
			r->rec.real_ns = i;
			r->have_real = 1;
		} else if (!strcmp(key, "_BOOTTIME_NS") && whole_i64(eq + 1, vlen, &i) == 0) {
			r->rec.boot_ns = i;
		} else {
			p->why = "a _KEY kmsg does not know, or a bad value for it";
			return 1;
		}
		return 0;
	}
	if (!kmsg_key_valid(s, klen)) {
		p->why = "a field key that is not A-Z, 0-9 and _ (first A-Z), "
			 "of at most 64 bytes";
		return 1;
	}
	need = 2 + klen + 1 + vlen;
	if (need - 2 > UINT16_MAX || r->fields_len + need > DEVKMSG_FIELDS_MAX) {
		p->why = "a field past the room a record has for fields";
		return 2;
	}
	if (reserve(r, need) < 0)
		return -ENOMEM;
	d = r->buf + r->text_len + r->fields_len + 2;
	memcpy(d, s, klen + 1);
	need = 2 + klen + 1 + unescape(d + klen + 1, eq + 1, vlen);
	{
		uint16_t l = (uint16_t)(need - 2);

		memcpy(d - 2, &l, 2);
	}
	r->fields_len += need;
	return 0;
}

/* Hands out the record being read (r[cur]): 1, and the buffers swap. */
static int hand_out(struct kmsg_record *rec, size_t size, struct kmsg_devkmsg *p)
{
	struct devkmsg_rec *r = &p->r[p->cur];

	r->rec.text = r->text_len ? r->buf : "";
	r->rec.text_len = r->text_len;
	r->rec.fields = r->fields_len ? (const unsigned char *)r->buf + r->text_len : NULL;
	r->rec.fields_len = r->fields_len;
	if (!r->have_real) {
		/* the kernel's records: the time of this machine's boot
		 * plus the time since it, as dmesg -K computes it */
		int64_t b = r->rec.boot_ns, base = p->boot_real_ns;

		r->rec.real_ns = (b > 0 && base > INT64_MAX - b) ||
				 (b < 0 && base < INT64_MIN - b) ? base : base + b;
	}
	kmsg__put_sized(rec, size, &r->rec, sizeof(r->rec));
	p->cur ^= 1;
	p->pending = 0;
	return 1;
}

/* What dmesg's isspace() passes over before a NUL-separated record. */
static int blank(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

int kmsg_devkmsg_feed_sized(struct kmsg_record *rec, size_t size, struct kmsg_devkmsg *p,
			    const char *line, size_t len)
{
	int handed = 0, rc;

	if (rec == NULL || size < KMSG__RECORD_SIZE_1 || p == NULL || (line == NULL && len))
		return KMSG_EINVAL;
	p->why = NULL;
	if (len && line[len - 1] == '\n')
		len--;
	if (len && line[len - 1] == '\r')
		len--;
	/* a NUL ends a record, as in dmesg -K's files: every line up to
	 * the next is the record's */
	if (len && line[0] == '\0') {
		while (len && line[0] == '\0')
			line++, len--;
		p->framed = 1;
		p->chunk_start = 1;
	}
	if (p->chunk_start) {
		while (len && blank(line[0]))
			line++, len--;
		if (len == 0)
			return 0;
		p->chunk_start = 0;
		goto header;
	}
	if (len == 0)
		return 0;
	if (line[0] == ' ') {
		if (p->skipping)
			return 0; /* a field of a record skipped */
		if (!p->pending) {
			p->why = "a field line with no record before it";
			return 0;
		}
		rc = field(p, &p->r[p->cur], line + 1, len - 1);
		/* a line of the record's dictionary, which dmesg never
		 * reads: one kmsg cannot take as a field is left out quietly
		 * (but for the bound on memory, which is said) */
		if (rc == 1)
			p->why = NULL;
		return rc < 0 ? rc : 0;
	}
	/* dmesg reads no more than the first line of a record: the others
	 * are its own (its dictionary), never another record */
	if (p->framed && (p->pending || p->skipping))
		return 0;
header:
	if (p->pending)
		handed = hand_out(rec, size, p);
	rc = header(p, &p->r[p->cur], line, len);
	if (rc < 0)
		return rc;
	p->pending = rc == 0;
	p->skipping = rc == 1;
	return handed;
}

int kmsg_devkmsg_end_sized(struct kmsg_record *rec, size_t size, struct kmsg_devkmsg *p)
{
	if (rec == NULL || size < KMSG__RECORD_SIZE_1 || p == NULL)
		return KMSG_EINVAL;
	p->why = NULL;
	p->skipping = 0;
	return p->pending ? hand_out(rec, size, p) : 0;
}
