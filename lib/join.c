/*
 * join.c - joining fragments into lines: a record marked KMSG_FRAGMENT
 * leaves its caller's line open, and the caller's next record continues
 * it, unless that one begins a new line (KMSG_BEGIN).  The joiner keeps
 * the open lines of up to JOIN_SLOTS callers and, for KMSG_READER_ORDER,
 * the lines waiting behind them, all within fixed bounds, and takes its
 * records from an iterator (iter.c).  What a line is, to users, is in
 * kmsg.h (KMSG_FRAGMENT, kmsg_reader_next).
 */
#include "internal.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#define JOIN_SLOTS  64        /* callers with a line in progress */
#define JOIN_MAX    65535u    /* a joined line longer than this, in text or in
                                 fields, is cut into parts */
#define QUEUE_MAX   4096      /* lines held back behind open ones (ORDER) */
#define QUEUE_BYTES (1u << 20) /* their text and fields together */
/* A line its caller left open this long (since-boot time of its last
 * part) ends as it is: a caller id its writer died with may have gone to
 * another since, whose record must not be taken in (kmsg.h, KMSG_BEGIN). */
#define JOIN_AGE_NS ((int64_t)3600 * 1000000000)

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
	int64_t last_ns;         /* and its since-boot time */
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

struct kmsg_joiner {
	unsigned flags;          /* KMSG_READER_* */
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

void kmsg__join_drop(struct kmsg_joiner *j)
{
	for (int i = 0; i < JOIN_SLOTS; i++)
		j->slots[i].used = 0;
	j->nused = 0;
	j->qhead = j->qlen = 0;
	j->qbytes = 0;
}

static void free_line(struct line *l)
{
	free(l->text);
	free(l->fields);
}

static struct line *qat(const struct kmsg_joiner *j, unsigned i)
{
	return &j->queue[(j->qhead + i) % j->qcap];
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
	l->last_ns = rec->boot_ns;
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
static void queue_put(struct kmsg_joiner *j, struct line *src)
{
	unsigned i = j->qlen;
	struct line spare = *qat(j, j->qlen);

	if (j->flags & KMSG_READER_ORDER)
		while (i > 0 && qat(j, i - 1)->rec.seq > src->rec.seq)
			i--;
	for (unsigned k = j->qlen; k > i; k--)
		*qat(j, k) = *qat(j, k - 1);
	*qat(j, i) = *src;
	j->qlen++;
	j->qbytes += src->len + src->flen;
	src->text = spare.text;
	src->cap = spare.cap;
	src->fields = spare.fields;
	src->fcap = spare.fcap;
	src->len = src->flen = 0;
}

/* The key of the oldest open line, UINT64_MAX if none. */
static uint64_t oldest_open(const struct kmsg_joiner *j, struct pending **which)
{
	uint64_t k = UINT64_MAX;

	*which = NULL;
	for (int i = 0; j->nused && i < JOIN_SLOTS; i++) {
		const struct pending *p = &j->slots[i];
		if (p->used && p->l.rec.seq < k) {
			k = p->l.rec.seq;
			*which = (struct pending *)p;
		}
	}
	return k;
}

/* Ends the open line in p: complete, or given up on (partial). */
static void close_line(struct kmsg_joiner *j, struct pending *p, int partial)
{
	p->l.rec.flags = partial ? KMSG_FRAGMENT | KMSG_PARTIAL : 0;
	queue_put(j, &p->l);
	p->used = 0;
	j->nused--;
}

/*
 * Whether the first line in the queue may be returned.  Without ORDER at
 * once.  With ORDER only when no line that began before its last record is
 * still open or waiting behind it: the caller may clear up to
 * kmsg_reader_position(), and a line returned whole must then lie wholly
 * below that mark.  With no line open, every queued line is due.
 */
static int queue_ready(const struct kmsg_joiner *j)
{
	struct pending *p;
	uint64_t k;

	if (!j->qlen)
		return 0;
	if (!(j->flags & KMSG_READER_ORDER) || !j->nused)
		return 1;
	k = oldest_open(j, &p);
	if (j->qlen > 1 && qat(j, 1)->rec.seq < k)
		k = qat(j, 1)->rec.seq;
	return qat(j, 0)->last < k;
}

/* Returns the first queued line as *out; its buffers back out's pointers. */
static int queue_pop(struct kmsg_joiner *j, struct kmsg_record *out)
{
	struct line *h = qat(j, 0), t = j->out;

	j->out = *h;
	*h = t;
	h->len = h->flen = 0;
	j->qhead = (j->qhead + 1) % j->qcap;
	j->qlen--;
	j->qbytes -= j->out.len + j->out.flen;
	*out = j->out.rec;
	out->text = j->out.text;
	out->text_len = j->out.len;
	out->fields = j->out.fields;
	out->fields_len = j->out.flen;
	return 1;
}

/*
 * Keeps the queue within its bounds: with room for every open line and
 * two more, and QUEUE_BYTES, by giving up on the oldest open lines, which
 * lets what waits behind them go.
 */
static void queue_room(struct kmsg_joiner *j)
{
	struct pending *p;

	while (j->nused && (j->qlen + JOIN_SLOTS + 2 > QUEUE_MAX || j->qbytes > QUEUE_BYTES)) {
		oldest_open(j, &p);
		close_line(j, p, 1);
	}
}

/*
 * Room in the queue for want lines (at most QUEUE_MAX), grown in steps:
 * most readers never hold more than a few lines back.  The slots move in
 * queue order, with the buffers of the free ones.
 */
static int queue_reserve(struct kmsg_joiner *j, unsigned want)
{
	unsigned cap = j->qcap ? j->qcap : 64;
	struct line *q;

	if (want > QUEUE_MAX)
		want = QUEUE_MAX;
	if (want <= j->qcap)
		return 0;
	while (cap < want)
		cap *= 2;
	if (cap > QUEUE_MAX)
		cap = QUEUE_MAX;
	q = calloc(cap, sizeof(*q));
	if (!q)
		return -ENOMEM;
	for (unsigned i = 0; i < j->qcap; i++)
		q[i] = *qat(j, i);
	free(j->queue);
	j->queue = q;
	j->qhead = 0;
	j->qcap = cap;
	return 0;
}

/* Has l's caller left it open longer than JOIN_AGE_NS before rec? */
static int too_old(const struct line *l, const struct kmsg_record *rec)
{
	return rec->boot_ns > l->last_ns &&
	       (uint64_t)rec->boot_ns - (uint64_t)l->last_ns > (uint64_t)JOIN_AGE_NS;
}

/* Queues a record that is a line of its own (a whole line, or a gap). */
static int queue_alone(struct kmsg_joiner *j, const struct kmsg_record *rec)
{
	if (line_start(&j->scratch, rec) < 0)
		return -ENOMEM;
	queue_put(j, &j->scratch);
	return 0;
}

/*
 * Takes one raw record into the joining state (see KMSG_FRAGMENT and
 * KMSG_BEGIN in kmsg.h): it continues its caller's open line, ends it, or
 * starts a line of its own.  A gap it reports becomes a record of its own
 * at its place, so that the report lands where the records went missing.
 */
static int take(struct kmsg_joiner *j, struct kmsg_record *rec)
{
	struct pending *p = NULL, *freeslot = NULL;
	int err;

	/* what this record can add (a gap, a line ended, itself or the
	 * oldest open line), and every open line, which close_due() may end */
	err = queue_reserve(j, j->qlen + JOIN_SLOTS + 3);
	if (err)
		return err;
	if ((rec->lost | rec->damaged) && !(rec->flags & KMSG_GAP) && (j->nused || j->qlen)) {
		struct kmsg_record gap = {
			.seq = rec->seq, .flags = KMSG_GAP | (rec->flags & KMSG_UNFINISHED),
			.lost = rec->lost, .damaged = rec->damaged,
		};
		err = queue_alone(j, &gap);
		if (err)
			return err;
		rec->lost = rec->damaged = 0;
		rec->flags &= ~(unsigned)KMSG_UNFINISHED;
	}
	if (rec->flags & KMSG_GAP)
		return queue_alone(j, rec);
	for (int i = 0; i < JOIN_SLOTS; i++) {
		struct pending *q = &j->slots[i];
		if (!q->used) {
			if (!freeslot)
				freeslot = q;
		} else if (q->caller == rec->caller && q->boot_id == rec->boot_id) {
			p = q;
		}
	}
	/* A new line begins, the open one is too old to go on, or this part
	 * would make it too long (fragments of empty text can bring fields
	 * without end): the open one ends as it is. */
	if (p && ((rec->flags & KMSG_BEGIN) || too_old(&p->l, rec) ||
		  p->l.len + rec->text_len > JOIN_MAX || p->l.flen + rec->fields_len > JOIN_MAX)) {
		close_line(j, p, 1);
		freeslot = p;
		p = NULL;
	}
	if (p) {
		if (line_add(&p->l, rec) < 0)
			return -ENOMEM;
		if (!(rec->flags & KMSG_FRAGMENT))
			close_line(j, p, 0);
	} else if (!(rec->flags & KMSG_FRAGMENT)) {
		err = queue_alone(j, rec);
		if (err)
			return err;
	} else {
		if (!freeslot) {
			/* Too many callers mid-line: the oldest line goes as it is. */
			oldest_open(j, &freeslot);
			close_line(j, freeslot, 1);
		}
		p = freeslot;
		if (line_start(&p->l, rec) < 0)
			return -ENOMEM;
		p->used = 1;
		j->nused++;
		p->caller = rec->caller;
		p->boot_id = rec->boot_id;
	}
	queue_room(j);
	return 0;
}

/* At the end of the records: gives up on the open lines flush asks for. */
static void close_due(struct kmsg_joiner *j)
{
	for (;;) {
		struct pending *p;
		oldest_open(j, &p);
		if (!p || p->l.rec.real_ns >= j->flush_before)
			break;
		close_line(j, p, 1);
	}
}

/*
 * The joining step.  The common case, no line open and none waiting, is
 * a raw read straight into *out.
 */
int kmsg__join_next(struct kmsg_joiner *j, struct kmsg_iter *it, struct kmsg_record *out)
{
	struct kmsg_record rec;
	int n, err;

	for (;;) {
		if (queue_ready(j))
			return queue_pop(j, out);
		if (!j->nused && !j->qlen) {
			n = kmsg__iter_next(it, out);
			if (n <= 0 || (out->flags & (KMSG_FRAGMENT | KMSG_GAP)) != KMSG_FRAGMENT)
				return n;
			rec = *out;
		} else {
			n = kmsg__iter_next(it, &rec);
			if (n < 0)
				return n;
			if (n == 0) {
				close_due(j);
				if (queue_ready(j))
					return queue_pop(j, out);
				return 0;
			}
		}
		err = take(j, &rec);
		if (err)
			return err;
	}
}


int kmsg__join_new(struct kmsg_joiner **out, unsigned flags)
{
	struct kmsg_joiner *j = calloc(1, sizeof(*j));

	if (!j)
		return -ENOMEM;
	j->flags = flags;
	j->flush_before = INT64_MIN;
	*out = j;
	return 0;
}

void kmsg__join_free(struct kmsg_joiner *j)
{
	if (!j)
		return;
	for (int i = 0; i < JOIN_SLOTS; i++)
		free_line(&j->slots[i].l);
	for (unsigned i = 0; i < j->qcap; i++)
		free_line(&j->queue[i]);
	free(j->queue);
	free_line(&j->scratch);
	free_line(&j->out);
	free(j);
}

void kmsg__join_position(const struct kmsg_joiner *j, uint64_t *p)
{
	for (int i = 0; j->nused && i < JOIN_SLOTS; i++)
		if (j->slots[i].used && j->slots[i].l.rec.seq < *p)
			*p = j->slots[i].l.rec.seq;
	for (unsigned i = 0; i < j->qlen; i++)
		if (qat(j, i)->rec.seq < *p)
			*p = qat(j, i)->rec.seq;
}

int kmsg__join_ready(const struct kmsg_joiner *j)
{
	return queue_ready(j);
}

void kmsg__join_flush(struct kmsg_joiner *j, int64_t older_than_real_ns)
{
	j->flush_before = older_than_real_ns;
}
