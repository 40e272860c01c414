/*
 * reader.c - lock-free reading: iterating, seeking, joining fragments,
 * waiting for new records.  The checks a reader makes (R1-R4) and why they
 * suffice are in the overview at the top of ring.c.  A reader never stores
 * to the mapping, so read permission on the file is all it needs.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


#define JOIN_SLOTS  64        /* callers with a line in progress */
#define JOIN_MAX    65535u    /* a joined line longer than this, in text or in
                                 fields, is cut into parts */
#define QUEUE_MAX   4096      /* lines held back behind open ones (ORDER) */
#define QUEUE_BYTES (1u << 20) /* their text and fields together */

/*
 * A line of a joining reader: one being joined, one waiting in the queue
 * to be returned, or the one returned last (whose buffers back the
 * record's pointers).  rec is the first record's header; its text and
 * fields pointers are set only when the line is returned.  The key that
 * orders lines is rec.seq, the number of their first record.
 */
struct line {
	struct kmsg_record rec;
	uint64_t last;           /* number of its last record */
	char *text;
	size_t len, cap;
	unsigned char *fields;
	size_t flen, fcap;
};

struct pending {
	int used;
	uint32_t caller;
	uint64_t boot_id;
	struct line l;
};

struct kmsg_reader {
	struct kmsg_log *log;
	uint32_t deferrals_seen;   /* the header's count at the last wait */
	int64_t deferral_seen_ns;  /* CLOCK_MONOTONIC when it last changed */
	unsigned flags;
	uint64_t pos;            /* logical position of the next record */
	uint64_t expect;         /* its sequence number */
	int expect_known;        /* 0 only for a log too damaged to tell */
	int overtaken;           /* restarted at head since the last record */
	int in_damage;           /* skipping a damaged stretch */
	unsigned char *buf;      /* copy of the current record */
	uint64_t at_pos, at_phys; /* a position and its data offset (ring_phys_near) */

	/* joining */
	struct pending slots[JOIN_SLOTS];
	int nused;               /* slots in use: none means nothing to scan */
	int64_t flush_before;
	/* Lines complete (or given up on) and not yet returned: a ring of
	 * QUEUE_MAX, oldest key first with KMSG_READER_ORDER, else in the
	 * order they were completed.  Slots keep their buffers for reuse. */
	struct line *queue;
	unsigned qhead, qlen, qcap;  /* qcap grows to QUEUE_MAX as needed */
	size_t qbytes;
	struct line scratch;     /* a lone record on its way into the queue */
	struct line out;         /* the line returned last */
};

int kmsg_key_valid(const char *key, size_t len)
{
	if (!key || len < 1 || len > KMSG_MAX_KEY || !(key[0] >= 'A' && key[0] <= 'Z'))
		return 0;
	for (size_t i = 1; i < len; i++) {
		char c = key[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

int kmsg_field_next(struct kmsg_field *f, const struct kmsg_record *rec,
		    size_t *pos)
{
	const unsigned char *p;
	uint16_t l;
	size_t k;

	if (!f || !rec || !pos)
		return KMSG_EINVAL;
	if (*pos >= rec->fields_len)
		return 0;
	if (rec->fields_len - *pos < 2)
		return KMSG_ECORRUPT;
	p = rec->fields + *pos;
	memcpy(&l, p, 2);
	if (l > rec->fields_len - *pos - 2)
		return KMSG_ECORRUPT;
	for (k = 0; k < l && p[2 + k] != '='; k++)
		;
	if (k == l || !kmsg_key_valid((const char *)p + 2, k))
		return KMSG_ECORRUPT;
	f->key = (const char *)p + 2;
	f->key_len = k;
	f->value = (const char *)p + 3 + k;
	f->value_len = l - k - 1;
	*pos += 2 + (size_t)l;
	return 1;
}

static int seek_by(struct kmsg_reader *r, int by_time, uint64_t want_seq,
		   int64_t want_ns, uint64_t expect);

int kmsg_reader_new(struct kmsg_reader **out, struct kmsg_log *log,
		    unsigned flags)
{
	struct kmsg_reader *r;
	int err;

	if (!out || !log || (flags & ~(unsigned)(KMSG_READER_JOIN | KMSG_READER_ORDER)))
		return KMSG_EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->buf = malloc(log->max_rec);
	if (!r->buf) {
		free(r);
		return -ENOMEM;
	}
	r->log = log;
	r->flags = flags;
	r->flush_before = INT64_MIN;
	err = kmsg_reader_seek(r, KMSG_SEEK_OLDEST);
	if (err == KMSG_ECORRUPT) {
		/* A header only a writer can repair: the reader exists, and
		 * says so at its first read. */
		r->pos = atomic_load_explicit(&log->hdr->head, memory_order_relaxed);
		err = 0;
	}
	if (err) {
		kmsg_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

static void drop_pending(struct kmsg_reader *r)
{
	for (int i = 0; i < JOIN_SLOTS; i++)
		r->slots[i].used = 0;
	r->nused = 0;
	r->qhead = r->qlen = 0;
	r->qbytes = 0;
}

static void free_line(struct line *l)
{
	free(l->text);
	free(l->fields);
}

void kmsg_reader_free(struct kmsg_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < JOIN_SLOTS; i++)
		free_line(&r->slots[i].l);
	for (unsigned i = 0; i < r->qcap; i++)
		free_line(&r->queue[i]);
	free(r->queue);
	free_line(&r->scratch);
	free_line(&r->out);
	free(r->buf);
	free(r);
}

static struct line *qat(const struct kmsg_reader *r, unsigned i)
{
	return &r->queue[(r->qhead + i) % r->qcap];
}

uint64_t kmsg_reader_position(const struct kmsg_reader *r)
{
	uint64_t p;

	if (!r)
		return 0;
	p = r->expect_known ? r->expect
	    : atomic_load_explicit(&r->log->hdr->next_seq, memory_order_acquire);
	for (int i = 0; r->nused && i < JOIN_SLOTS; i++)
		if (r->slots[i].used && r->slots[i].l.rec.seq < p)
			p = r->slots[i].l.rec.seq;
	for (unsigned i = 0; i < r->qlen; i++)
		if (qat(r, i)->rec.seq < p)
			p = qat(r, i)->rec.seq;
	return p;
}

/*
 * Loads tail (acquire, R1) and head as a reader may trust them: a tail a
 * writer could not have stored is an error only a writer can repair; a
 * head more than one ring length behind tail is clamped to that length.
 */
static int load_window(const struct kmsg_log *log, uint64_t *head, uint64_t *tail)
{
	const struct kmsg_hdr *h = log->hdr;
	uint64_t t = atomic_load_explicit(&h->tail, memory_order_acquire);
	uint64_t hd = atomic_load_explicit(&h->head, memory_order_acquire);

	if (t % REC_ALIGN || t >= (UINT64_C(1) << 62))
		return KMSG_ECORRUPT;
	if (hd > t || t - hd > log->data_size)
		hd = t > log->data_size ? (t - log->data_size) : 0;
	/* Records sit on 8-byte boundaries; a head off them is damage. */
	hd = (hd + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
	*head = hd;
	*tail = t;
	return 0;
}

/*
 * The number the record at the end of the published ones will have, with
 * the tail it belongs to.  W4 (next_seq) comes before W5 (tail), so once
 * the tail is loaded with acquire (pairs with W5) next_seq is at least one
 * past the last published record, and one more when a writer is between
 * W4 and W5 (or died there): its record then sits committed at tail with
 * the number next_seq - 1.  A tail that moves meanwhile means the pair is
 * not settled; a few tries, then the last pair read.
 */
static int end_seq(const struct kmsg_log *log, uint64_t *tail_out, uint64_t *seq_out)
{
	const struct kmsg_hdr *h = log->hdr;
	uint64_t head, tail = 0, next = 0;

	for (int attempt = 0; attempt < 16; attempt++) {
		struct rec_hdr hd;
		int err = load_window(log, &head, &tail);
		if (err)
			return err;
		next = atomic_load_explicit(&h->next_seq, memory_order_acquire);
		if (atomic_load_explicit(&h->tail, memory_order_acquire) != tail)
			continue;
		/* A pad there carries the number of the record after it. */
		if (kmsg__rec_check(log, ring_norm(log, tail), &hd) && hd.seq + 1 == next)
			next--;
		break;
	}
	*tail_out = tail;
	*seq_out = next;
	return 0;
}

static void restart_at_head(struct kmsg_reader *r, uint64_t head)
{
	r->pos = head;
	r->overtaken = 1;
	r->in_damage = 0;
}

/*
 * At the end of the published records: if numbers are missing between
 * the last record returned and the end (a log cut short, damage at its
 * end, a rebuilt header that kept a larger number), *rec becomes the
 * KMSG_GAP record that says so, once; returns 1 then, else 0.
 */
static int end_gap(struct kmsg_reader *r, uint64_t tail, struct kmsg_record *rec)
{
	uint64_t t, n, gap;

	if (!r->expect_known || end_seq(r->log, &t, &n) < 0 || t != tail || n <= r->expect)
		return 0;
	gap = n - r->expect;
	*rec = (struct kmsg_record){
		.seq = n,
		.flags = KMSG_GAP,
		.lost = r->overtaken ? gap : 0,
		.damaged = r->overtaken ? 0 : gap,
		.seq_id = kmsg__log_seq_id(r->log->hdr),
	};
	r->expect = n;
	r->overtaken = 0;
	r->in_damage = 0;
	return 1;
}

static uint64_t resync(const struct kmsg_reader *r, uint64_t head, uint64_t tail);

/*
 * The unjoined step: the next valid published record, copied into r->buf.
 * Returns 1, or 0 at the end of the published records.
 */
static int next_raw(struct kmsg_reader *r, struct kmsg_record *rec)
{
	struct kmsg_log *log = r->log;
	const struct kmsg_hdr *h = log->hdr;
	const uint64_t D = log->data_size;

	/* The file written over with another log (cp or dd onto it): none
	 * of its records is this log's. */
	if (memcmp(h->ring_id, log->ring_id, sizeof(log->ring_id)) != 0)
		return KMSG_ECHANGED;
	for (;;) {
		uint64_t pos = r->pos, head, tail, len, phys = ring_phys_near(log, &r->at_pos, &r->at_phys, pos);
		uint32_t crc = 0;
		struct rec_hdr hd;
		int err = load_window(log, &head, &tail);                            /* R1 */

		if (err)
			return err;
		if (D - phys < REC_HDR) {      /* the lap ends: no room for a header */
			pos += D - phys;
			phys = 0;
		}
		if (pos > ring_norm(log, tail) && r->expect_known) {
			/* Beyond the end: the end moved back under the reader
			 * (a writer rebuilt the header of a log cut short or
			 * torn, dropping records it had not read). */
			r->pos = resync(r, head, tail);
			r->in_damage = 1;
			continue;
		}
		if (pos >= tail) {
			r->pos = pos;
			return end_gap(r, tail, rec);
		}
		if (pos < head) {
			restart_at_head(r, head);
			continue;
		}
		/* R2: the header, checked before its length is believed, then
		 * the rest, copied and checksummed in one pass. */
		memcpy(r->buf, log->data + phys, REC_HDR);                          /* R2 */
		memcpy(&hd, r->buf, REC_HDR);
		len = kmsg__rec_header_at(log, pos, phys, r->buf);
		if (len && pos + len <= tail) {
			crc = kmsg__rec_crc_copy_body(r->buf, log->data + phys,
						(uint32_t)rec_size(hd.text_len, hd.fields_len));
		} else {
			len = 0;
		}
		atomic_thread_fence(memory_order_acquire);
		{
			uint64_t h2 = atomic_load_explicit(&h->head, memory_order_relaxed);
			if (pos < h2 && h2 <= tail + D) {
				restart_at_head(r, h2);
				continue;
			}
		}
		if (!len || kmsg__rec_crc_finish(crc, hd.seq, hd.pos, hd.len) != hd.crc) { /* R3 */
			uint64_t to = pos + REC_ALIGN;
			/* The first bad record of a stretch: on at the record
			 * expected, wherever it lies (see resync()). */
			if (!r->in_damage && r->expect_known) {
				uint64_t at = resync(r, head, tail);
				if (at != pos)
					to = at;
			}
			r->in_damage = 1;
			r->pos = to;
			continue;
		}
		if (hd.flags & REC_PAD) {
			r->pos = pos + len;
			continue;
		}
		/* A number lower than expected cannot come from writers that
		 * follow the protocol (a hostile header can cause it); the
		 * record is intact, so it is returned, with no gap claimed. */
		{
			uint64_t gap = r->expect_known && hd.seq > r->expect         /* R4 */
				? hd.seq - r->expect : 0;
			/* One assignment of the whole record, not a memset and
			 * then fields: the caller reads it back in wide loads,
			 * which mixed-width stores would stall. */
			*rec = (struct kmsg_record){
				.seq = hd.seq,
				.real_ns = hd.real_ns,
				.boot_ns = hd.boot_ns,
				.boot_id = hd.boot_id,
				.pid = hd.pid,
				.caller = hd.caller,
				.facility = hd.prio >> 3,
				.level = hd.prio & 7,
				.flags = (hd.flags & REC_FRAGMENT ? KMSG_FRAGMENT : 0) |
					 (hd.flags & REC_BEGIN ? KMSG_BEGIN : 0),
				.text = (const char *)r->buf + REC_HDR,
				.text_len = hd.text_len,
				.fields = r->buf + REC_HDR + hd.text_len,
				.fields_len = hd.fields_len,
				.lost = r->overtaken ? gap : 0,
				.damaged = r->overtaken ? 0 : gap,
				/* loaded after the record was read: a renewal
				 * since kept the numbers of the records that
				 * were there (log.c, THE NUMBERING'S IDENTITY) */
				.seq_id = kmsg__log_seq_id(h),
			};
		}
		r->pos = pos + len;
		r->expect = hd.seq + 1;
		r->expect_known = 1;
		r->overtaken = 0;
		r->in_damage = 0;
		return 1;
	}
}

/* ------------------------------------------------------------------ */
/* Joining                                                             */

static int grow(void *pp, size_t *cap, size_t need)
{
	void **p = pp;
	size_t c = *cap ? *cap : 256;
	void *n;
	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	n = realloc(*p, c);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = c;
	return 0;
}

/* Appends rec's text and fields to l, which it now ends. */
static int line_add(struct line *l, const struct kmsg_record *rec)
{
	if (grow(&l->text, &l->cap, l->len + rec->text_len) ||
	    grow(&l->fields, &l->fcap, l->flen + rec->fields_len))
		return -ENOMEM;
	if (rec->text_len)
		memcpy(l->text + l->len, rec->text, rec->text_len);
	if (rec->fields_len)
		memcpy(l->fields + l->flen, rec->fields, rec->fields_len);
	l->len += rec->text_len;
	l->flen += rec->fields_len;
	l->last = rec->seq;
	return 0;
}

/* Makes l a line of rec alone. */
static int line_start(struct line *l, const struct kmsg_record *rec)
{
	l->rec = *rec;
	l->rec.text = NULL;
	l->rec.fields = NULL;
	l->len = l->flen = 0;
	return line_add(l, rec);
}

/*
 * Moves line src into the queue (with KMSG_READER_ORDER at its key's
 * place, else at the end); src gets the free slot's buffers in exchange.
 * The caller makes sure there is room (queue_room()).
 */
static void queue_put(struct kmsg_reader *r, struct line *src)
{
	unsigned i = r->qlen;
	struct line spare = *qat(r, r->qlen);

	if (r->flags & KMSG_READER_ORDER)
		while (i > 0 && qat(r, i - 1)->rec.seq > src->rec.seq)
			i--;
	for (unsigned j = r->qlen; j > i; j--)
		*qat(r, j) = *qat(r, j - 1);
	*qat(r, i) = *src;
	r->qlen++;
	r->qbytes += src->len + src->flen;
	src->text = spare.text;
	src->cap = spare.cap;
	src->fields = spare.fields;
	src->fcap = spare.fcap;
	src->len = src->flen = 0;
}

/* The key of the oldest open line, UINT64_MAX if none. */
static uint64_t oldest_open(const struct kmsg_reader *r, struct pending **which)
{
	uint64_t k = UINT64_MAX;

	*which = NULL;
	for (int i = 0; r->nused && i < JOIN_SLOTS; i++) {
		const struct pending *p = &r->slots[i];
		if (p->used && p->l.rec.seq < k) {
			k = p->l.rec.seq;
			*which = (struct pending *)p;
		}
	}
	return k;
}

/* Ends the open line in p: complete, or given up on (partial). */
static void close_line(struct kmsg_reader *r, struct pending *p, int partial)
{
	p->l.rec.flags = partial ? KMSG_FRAGMENT | KMSG_PARTIAL : 0;
	queue_put(r, &p->l);
	p->used = 0;
	r->nused--;
}

/*
 * Whether the first line in the queue may be returned.  Without ORDER at
 * once.  With ORDER only when no line that began before its last record is
 * still open or waiting behind it: the caller may clear up to
 * kmsg_reader_position(), and a line returned whole must then lie wholly
 * below that mark.  With no line open, every queued line is due.
 */
static int queue_ready(const struct kmsg_reader *r)
{
	struct pending *p;
	uint64_t k;

	if (!r->qlen)
		return 0;
	if (!(r->flags & KMSG_READER_ORDER) || !r->nused)
		return 1;
	k = oldest_open(r, &p);
	if (r->qlen > 1 && qat(r, 1)->rec.seq < k)
		k = qat(r, 1)->rec.seq;
	return qat(r, 0)->last < k;
}

/* Returns the first queued line as *out; its buffers back out's pointers. */
static int queue_pop(struct kmsg_reader *r, struct kmsg_record *out)
{
	struct line *h = qat(r, 0), t = r->out;

	r->out = *h;
	*h = t;
	h->len = h->flen = 0;
	r->qhead = (r->qhead + 1) % r->qcap;
	r->qlen--;
	r->qbytes -= r->out.len + r->out.flen;
	*out = r->out.rec;
	out->text = r->out.text;
	out->text_len = r->out.len;
	out->fields = r->out.fields;
	out->fields_len = r->out.flen;
	return 1;
}

/*
 * Keeps the queue within its bounds: with room for every open line and
 * two more, and QUEUE_BYTES, by giving up on the oldest open lines, which
 * lets what waits behind them go.
 */
static void queue_room(struct kmsg_reader *r)
{
	struct pending *p;

	while (r->nused && (r->qlen + JOIN_SLOTS + 2 > QUEUE_MAX || r->qbytes > QUEUE_BYTES)) {
		oldest_open(r, &p);
		close_line(r, p, 1);
	}
}

/*
 * Room in the queue for want lines (at most QUEUE_MAX), grown in steps:
 * most readers never hold more than a few lines back.  The slots move in
 * queue order, with the buffers of the free ones.
 */
static int queue_reserve(struct kmsg_reader *r, unsigned want)
{
	unsigned cap = r->qcap ? r->qcap : 64;
	struct line *q;

	if (want > QUEUE_MAX)
		want = QUEUE_MAX;
	if (want <= r->qcap)
		return 0;
	while (cap < want)
		cap *= 2;
	if (cap > QUEUE_MAX)
		cap = QUEUE_MAX;
	q = calloc(cap, sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (unsigned i = 0; i < r->qcap; i++)
		q[i] = *qat(r, i);
	free(r->queue);
	r->queue = q;
	r->qhead = 0;
	r->qcap = cap;
	return 0;
}

/* Queues a record that is a line of its own (a whole line, or a gap). */
static int queue_alone(struct kmsg_reader *r, const struct kmsg_record *rec)
{
	if (line_start(&r->scratch, rec) < 0)
		return -ENOMEM;
	queue_put(r, &r->scratch);
	return 0;
}

/*
 * Takes one raw record into the joining state (see KMSG_FRAGMENT and
 * KMSG_BEGIN in kmsg.h): it continues its caller's open line, ends it, or
 * starts a line of its own.  A gap it reports becomes a record of its own
 * at its place, so that the report lands where the records went missing.
 */
static int take(struct kmsg_reader *r, struct kmsg_record *rec)
{
	struct pending *p = NULL, *freeslot = NULL;
	int err;

	/* what this record can add (a gap, a line ended, itself or the
	 * oldest open line), and every open line, which close_due() may end */
	err = queue_reserve(r, r->qlen + JOIN_SLOTS + 3);
	if (err)
		return err;
	if ((rec->lost | rec->damaged) && !(rec->flags & KMSG_GAP) && (r->nused || r->qlen)) {
		struct kmsg_record gap = {
			.seq = rec->seq, .flags = KMSG_GAP,
			.lost = rec->lost, .damaged = rec->damaged,
		};
		err = queue_alone(r, &gap);
		if (err)
			return err;
		rec->lost = rec->damaged = 0;
	}
	if (rec->flags & KMSG_GAP)
		return queue_alone(r, rec);
	for (int i = 0; i < JOIN_SLOTS; i++) {
		struct pending *q = &r->slots[i];
		if (!q->used) {
			if (!freeslot)
				freeslot = q;
		} else if (q->caller == rec->caller && q->boot_id == rec->boot_id) {
			p = q;
		}
	}
	/* A new line begins, or this part would make the line too long
	 * (fragments of empty text can bring fields without end): the open
	 * one ends as it is. */
	if (p && ((rec->flags & KMSG_BEGIN) || p->l.len + rec->text_len > JOIN_MAX ||
		  p->l.flen + rec->fields_len > JOIN_MAX)) {
		close_line(r, p, 1);
		freeslot = p;
		p = NULL;
	}
	if (p) {
		if (line_add(&p->l, rec) < 0)
			return -ENOMEM;
		if (!(rec->flags & KMSG_FRAGMENT))
			close_line(r, p, 0);
	} else if (!(rec->flags & KMSG_FRAGMENT)) {
		err = queue_alone(r, rec);
		if (err)
			return err;
	} else {
		if (!freeslot) {
			/* Too many callers mid-line: the oldest line goes as it is. */
			oldest_open(r, &freeslot);
			close_line(r, freeslot, 1);
		}
		p = freeslot;
		if (line_start(&p->l, rec) < 0)
			return -ENOMEM;
		p->used = 1;
		r->nused++;
		p->caller = rec->caller;
		p->boot_id = rec->boot_id;
	}
	queue_room(r);
	return 0;
}

/* At the end of the records: gives up on the open lines flush asks for. */
static void close_due(struct kmsg_reader *r)
{
	for (;;) {
		struct pending *p;
		oldest_open(r, &p);
		if (!p || p->l.rec.real_ns >= r->flush_before)
			break;
		close_line(r, p, 1);
	}
}

/*
 * The joining step.  The common case, no line open and none waiting, is
 * a raw read straight into *out.
 */
static int next_joined(struct kmsg_reader *r, struct kmsg_record *out)
{
	struct kmsg_record rec;
	int n, err;

	for (;;) {
		if (queue_ready(r))
			return queue_pop(r, out);
		if (!r->nused && !r->qlen) {
			n = next_raw(r, out);
			if (n <= 0 || (out->flags & (KMSG_FRAGMENT | KMSG_GAP)) != KMSG_FRAGMENT)
				return n;
			rec = *out;
		} else {
			n = next_raw(r, &rec);
			if (n < 0)
				return n;
			if (n == 0) {
				close_due(r);
				if (queue_ready(r))
					return queue_pop(r, out);
				return 0;
			}
		}
		err = take(r, &rec);
		if (err)
			return err;
	}
}

int kmsg_reader_next(struct kmsg_reader *r, struct kmsg_record *rec)
{
	if (!r || !rec)
		return KMSG_EINVAL;
	if (r->flags & KMSG_READER_JOIN)
		return next_joined(r, rec);
	return next_raw(r, rec);
}

void kmsg_reader_flush(struct kmsg_reader *r, int64_t older_than_real_ns)
{
	if (r)
		r->flush_before = older_than_real_ns;
}

/* ------------------------------------------------------------------ */
/* Seeking                                                             */

/*
 * The first valid record at or after logical position from and before
 * limit; 0 and *found unset if there is none.  Racing writers can make it
 * miss (the caller re-checks head), never return a torn record.
 */
static int find_record(const struct kmsg_log *log, uint64_t from, uint64_t limit,
		       uint64_t *found, struct rec_hdr *hd)
{
	for (uint64_t p = ring_norm(log, from); p < limit; p = ring_norm(log, p + REC_ALIGN)) {
		const struct rec_hdr *c = (const void *)(log->data + p % log->data_size);
		uint64_t len;
		if (c->magic != REC_MAGIC || c->pos != p)
			continue;
		len = kmsg__rec_check(log, p, hd);
		if (!len)
			continue;
		if (hd->flags & REC_PAD) {
			p += len - REC_ALIGN;
			continue;
		}
		*found = p;
		return 1;
	}
	return 0;
}

/*
 * Bisects [head, tail) by position for the first valid record whose key
 * (seq or real time) is >= want: its position and number, or tail.  Keys
 * grow with position, so O(log n) probes.  Racing writers can make it
 * miss (the caller re-checks head).
 */
static uint64_t bisect(const struct kmsg_log *log, uint64_t head, uint64_t tail,
		       int by_time, uint64_t want_seq, int64_t want_ns, uint64_t *seq)
{
	uint64_t lo = head, hi = tail, best = tail;

	/* Invariant: every record before lo is before the key; the answer
	 * is best or a record in [lo, hi). */
	while (lo < hi) {
		uint64_t mid = lo + ((hi - lo) / 2 & ~(uint64_t)(REC_ALIGN - 1)), at;
		struct rec_hdr hd;
		if (!find_record(log, mid, hi, &at, &hd)) {
			hi = mid;
		} else if (by_time ? hd.real_ns < want_ns : hd.seq < want_seq) {
			lo = at + hd.len;
		} else {
			best = at;
			*seq = hd.seq;
			hi = at;
		}
	}
	return best;
}

/*
 * Where a reader that lost its place should go on: at the first valid
 * record numbered at least the one it expects.  A damaged stretch is then
 * crossed in one step, not 8 bytes at a time; and when a writer rebuilt
 * the header of a log cut short or torn, the reader's position may lie
 * past the new end or inside records written there since, which it finds
 * behind it.  Returns the position (the end if none is found).
 */
static uint64_t resync(const struct kmsg_reader *r, uint64_t head, uint64_t tail)
{
	uint64_t seq;

	return bisect(r->log, head, tail, 0, r->expect, 0, &seq);
}

/*
 * Places the reader at pos, where the record numbered seq is, expecting
 * the number expect (at most seq): numbers between them are gone already,
 * and show on the first record, as lost if evicted (pos is the oldest
 * record), else as damaged (in the middle, or at the end of a log cut
 * short).
 */
static void place(struct kmsg_reader *r, uint64_t pos, uint64_t seq, uint64_t expect,
		  int evicted)
{
	r->pos = pos;
	r->expect = expect < seq ? expect : seq;
	r->expect_known = 1;
	r->overtaken = r->expect < seq && evicted;
	r->in_damage = 0;
	drop_pending(r);
}

/*
 * Bisects [head, tail) by position for the first record whose key (seq or
 * real time) is >= want.  Keys grow with position, so O(log n) probes.
 * The reader then expects that record's number (or, at the end, the next
 * one a writer gives), or expect if that is lower: a reader told where to
 * start by number reports the records from there that are gone.
 */
static int seek_by(struct kmsg_reader *r, int by_time, uint64_t want_seq,
		   int64_t want_ns, uint64_t expect)
{
	const struct kmsg_hdr *h = r->log->hdr;

	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t head, tail, now_tail, best, best_seq = 0, end;
		int err = end_seq(r->log, &tail, &end);

		if (!err)
			err = load_window(r->log, &head, &now_tail);
		if (err)
			return err;
		best = bisect(r->log, head, tail, by_time, want_seq, want_ns, &best_seq);
		if (best == tail)
			best_seq = end;
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&h->head, memory_order_relaxed) <= best) {
			uint64_t first = tail;
			struct rec_hdr hd;
			/* What is missing before the oldest record was evicted;
			 * at the end of records that remain, it was cut. */
			if (expect < best_seq && best < tail)
				find_record(r->log, head, best + 1, &first, &hd);
			place(r, best, best_seq, expect,
			      best < tail ? first == best : head == tail);
			return 0;
		}
	}
	/* Overtaken at every try: start at head, knowing nothing. */
	{
		uint64_t head, tail;
		int err = load_window(r->log, &head, &tail);
		if (err)
			return err;
		place(r, head, 0, 0, 0);
		r->expect_known = 0;
		r->overtaken = 0;
	}
	return 0;
}

int kmsg__ring_oldest(const struct kmsg_log *log, uint64_t *pos, uint64_t *seq)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t head, tail, now_tail, at, end;
		struct rec_hdr hd;
		int err = end_seq(log, &tail, &end);
		if (!err)
			err = load_window(log, &head, &now_tail);
		if (err)
			return err;
		if (!find_record(log, head, tail, &at, &hd)) {
			at = tail;
			hd.seq = end;
		}
		/* not overtaken while looking (pairs with W1's fence) */
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&log->hdr->head, memory_order_relaxed) <= at) {
			*pos = at;
			*seq = hd.seq;
			return 0;
		}
	}
	return 1;
}

int kmsg_reader_seek(struct kmsg_reader *r, enum kmsg_whence whence)
{
	uint64_t tail, seq;
	int err;

	if (!r)
		return KMSG_EINVAL;
	switch (whence) {
	case KMSG_SEEK_OLDEST: {
		uint64_t at;
		err = kmsg__ring_oldest(r->log, &at, &seq);
		if (err == 1)
			return seek_by(r, 0, 0, 0, UINT64_MAX);
		if (err)
			return err;
		place(r, at, seq, seq, 0);
		return 0;
	}
	case KMSG_SEEK_END:
		err = end_seq(r->log, &tail, &seq);
		if (err)
			return err;
		place(r, tail, seq, seq, 0);
		return 0;
	case KMSG_SEEK_CLEARED:
		/* Records evicted before the seek are not this reader's. */
		return seek_by(r, 0, atomic_load_explicit(&r->log->hdr->clear_seq,
							  memory_order_acquire), 0, UINT64_MAX);
	default:
		return KMSG_EINVAL;
	}
}

int kmsg_reader_seek_seq(struct kmsg_reader *r, uint64_t seq)
{
	if (!r)
		return KMSG_EINVAL;
	return seek_by(r, 0, seq, 0, seq);
}

int kmsg_reader_seek_time(struct kmsg_reader *r, int64_t real_ns)
{
	if (!r)
		return KMSG_EINVAL;
	return seek_by(r, 1, 0, real_ns, UINT64_MAX);
}

int kmsg_reader_wait(struct kmsg_reader *r, int timeout_ms)
{
	struct kmsg_log *log;
	_Atomic uint32_t *word;
	int64_t deadline = 0;
	int err;

	if (!r)
		return KMSG_EINVAL;
	log = r->log;
	word = &log->hdr->wake;
	err = kmsg__log_register_follower(log);
	if (err < 0)
		return err;
	if (timeout_ms >= 0)
		deadline = kmsg__clock_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000;
	for (;;) {
		uint32_t seen = atomic_load_explicit(word, memory_order_seq_cst);
		uint64_t tail = atomic_load_explicit(&log->hdr->tail, memory_order_seq_cst);
		uint32_t deferrals = atomic_load_explicit(&log->hdr->deferrals,
							  memory_order_seq_cst);          /* D2 */
		int64_t now = kmsg__clock_ns(CLOCK_MONOTONIC), wait_ns = INT64_MAX;
		struct timespec ts, *tsp = NULL;
		long rc;

		if (ring_norm(log, r->pos) < tail)
			return 1;
		if (queue_ready(r))
			return 1;
		if (timeout_ms >= 0) {
			if (now >= deadline)
				return 0;
			wait_ns = deadline - now;
		}
		/* Until every writer has probed for followers once, a writer
		 * may not know to wake us: sleep in probe-sized steps. */
		if (now - log->follower_since_ns < 2 * FOLLOWER_PROBE_NS &&
		    wait_ns > FOLLOWER_PROBE_NS)
			wait_ns = FOLLOWER_PROBE_NS;
		/* A writer may have stopped waking for a while (ring.c,
		 * WAKING FOLLOWERS): sleep in short steps until it is over. */
		if (deferrals != r->deferrals_seen) {
			r->deferrals_seen = deferrals;
			r->deferral_seen_ns = now;
		}
		if (now - r->deferral_seen_ns < 2 * WAKE_QUIET_NS && wait_ns > WAKE_QUIET_NS)
			wait_ns = WAKE_QUIET_NS;
		if (wait_ns != INT64_MAX) {
			ts.tv_sec = wait_ns / 1000000000;
			ts.tv_nsec = wait_ns % 1000000000;
			tsp = &ts;
		}
		rc = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, tsp, NULL, 0);
		if (rc < 0 && errno == EINTR)
			return -EINTR;
	}
}
