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


#define JOIN_SLOTS 64        /* callers with a line in progress */
#define JOIN_MAX   65535u    /* a joined line longer than this is cut into parts */

struct pending {
	int used;
	uint32_t caller;
	uint64_t boot_id;
	uint64_t age;            /* order of first fragment, for eviction */
	struct kmsg_record first;
	char *text;
	size_t len, cap;
	unsigned char *fields;
	size_t flen, fcap;
};

struct kmsg_reader {
	struct kmsg_log *log;
	unsigned flags;
	uint64_t pos;            /* logical position of the next record */
	uint64_t expect;         /* its sequence number, if expect_known */
	int expect_known;
	int overtaken;           /* restarted at head since the last record */
	int in_damage;           /* skipping a damaged stretch */
	unsigned char *buf;      /* copy of the current record */
	uint64_t at_pos, at_phys; /* a position and its data offset (ring_phys_near) */

	/* joining */
	struct pending slots[JOIN_SLOTS];
	int nused;               /* slots in use: none means nothing to scan */
	uint64_t age;
	uint64_t carry_lost, carry_damaged;  /* gaps seen on held fragments */
	int64_t flush_before;
	char *line;              /* the joined line returned last */
	size_t line_cap;
	unsigned char *line_fields;
	size_t line_fcap;
	unsigned char *stash;    /* a record held back while a part is returned */
	int stashed;
	struct kmsg_record stash_rec;
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

int kmsg_reader_new(struct kmsg_reader **out, struct kmsg_log *log,
		    unsigned flags)
{
	struct kmsg_reader *r;

	if (!out || !log || (flags & ~(unsigned)KMSG_READER_JOIN))
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
	r->pos = atomic_load_explicit(&log->hdr->head, memory_order_acquire);
	*out = r;
	return 0;
}

static void drop_pending(struct kmsg_reader *r)
{
	for (int i = 0; i < JOIN_SLOTS; i++)
		r->slots[i].used = 0;
	r->nused = 0;
	r->stashed = 0;
	r->carry_lost = r->carry_damaged = 0;
}

void kmsg_reader_free(struct kmsg_reader *r)
{
	if (!r)
		return;
	for (int i = 0; i < JOIN_SLOTS; i++) {
		free(r->slots[i].text);
		free(r->slots[i].fields);
	}
	free(r->line);
	free(r->line_fields);
	free(r->stash);
	free(r->buf);
	free(r);
}

uint64_t kmsg_reader_position(const struct kmsg_reader *r)
{
	if (r->expect_known)
		return r->expect;
	return atomic_load_explicit(&r->log->hdr->next_seq, memory_order_acquire);
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

static void restart_at_head(struct kmsg_reader *r, uint64_t head)
{
	r->pos = head;
	r->overtaken = 1;
	r->in_damage = 0;
}

/*
 * The unjoined step: the next valid published record, copied into r->buf.
 * Returns 1, or 0 at the end of the published records.
 */
static int next_raw(struct kmsg_reader *r, struct kmsg_record *rec)
{
	struct kmsg_log *log = r->log;
	const struct kmsg_hdr *h = log->hdr;
	const uint64_t D = log->data_size;

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
		if (pos >= tail) {
			r->pos = pos;
			return 0;
		}
		if (pos < head) {
			restart_at_head(r, head);
			continue;
		}
		/* R2: the header, checked before its length is believed, then
		 * the rest, copied and checksummed in one pass. */
		memcpy(r->buf, log->data + phys, REC_HDR);                          /* R2 */
		memcpy(&hd, r->buf, REC_HDR);
		len = ring_header_at(log, pos, phys, r->buf);
		if (len && pos + len <= tail) {
			crc = rec_crc_copy_body(r->buf, log->data + phys,
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
		if (!len || rec_crc_finish(crc, hd.seq, hd.pos, hd.len) != hd.crc) { /* R3 */
			r->in_damage = 1;
			r->pos = pos + REC_ALIGN;
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
				.flags = hd.flags & REC_FRAGMENT ? KMSG_FRAGMENT : 0,
				.text = (const char *)r->buf + REC_HDR,
				.text_len = hd.text_len,
				.fields = r->buf + REC_HDR + hd.text_len,
				.fields_len = hd.fields_len,
				.lost = r->overtaken ? gap : 0,
				.damaged = r->overtaken ? 0 : gap,
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

/* Returns the pending line in slot p as *rec (it stays valid until the next
 * call), and frees the slot. */
static int emit_pending(struct kmsg_reader *r, struct pending *p,
			struct kmsg_record *rec, int partial)
{
	if (grow(&r->line, &r->line_cap, p->len + 1) ||
	    grow(&r->line_fields, &r->line_fcap, p->flen + 1))
		return -ENOMEM;
	if (p->len)  /* a line of empty fragments has no text buffer */
		memcpy(r->line, p->text, p->len);
	if (p->flen)
		memcpy(r->line_fields, p->fields, p->flen);
	*rec = p->first;
	rec->text = r->line;
	rec->text_len = p->len;
	rec->fields = r->line_fields;
	rec->fields_len = p->flen;
	rec->flags = partial ? (KMSG_FRAGMENT | KMSG_PARTIAL) : 0;
	p->used = 0;
	r->nused--;
	return 1;
}

static int add_part(struct pending *p, const struct kmsg_record *rec)
{
	if (grow(&p->text, &p->cap, p->len + rec->text_len) ||
	    grow(&p->fields, &p->fcap, p->flen + rec->fields_len))
		return -ENOMEM;
	if (rec->text_len)
		memcpy(p->text + p->len, rec->text, rec->text_len);
	if (rec->fields_len)
		memcpy(p->fields + p->flen, rec->fields, rec->fields_len);
	p->len += rec->text_len;
	p->flen += rec->fields_len;
	return 0;
}

static void stash(struct kmsg_reader *r, const struct kmsg_record *rec)
{
	/* rec points into r->buf; keep a copy of its bytes in r->stash. */
	if (!r->stash)
		r->stash = malloc(r->log->max_rec);
	if (!r->stash)
		return;
	memcpy(r->stash, r->buf, r->log->max_rec);
	r->stash_rec = *rec;
	r->stash_rec.text = (const char *)r->stash + ((const unsigned char *)rec->text - r->buf);
	r->stash_rec.fields = r->stash + (rec->fields - r->buf);
	r->stashed = 1;
}

static void add_carry(struct kmsg_reader *r, struct kmsg_record *rec)
{
	if (r->carry_lost | r->carry_damaged) {
		rec->lost += r->carry_lost;
		rec->damaged += r->carry_damaged;
		r->carry_lost = r->carry_damaged = 0;
	}
}

/*
 * The joining step.  Fragments are held per (caller, boot) until a record
 * of the same caller without KMSG_FRAGMENT completes the line; records of
 * other callers pass meanwhile.  Gaps reported on held records are carried
 * to the next record returned, so none is lost in the count.
 */
static int next_joined(struct kmsg_reader *r, struct kmsg_record *out)
{
	struct kmsg_record rec;
	int n;

	for (;;) {
		struct pending *p = NULL, *freeslot = NULL, *oldest = NULL;

		if (r->stashed) {
			r->stashed = 0;
			rec = r->stash_rec;
		} else if (!r->nused) {
			/* The common case, no line in progress: straight into
			 * *out, and a whole line is done. */
			n = next_raw(r, out);
			if (n <= 0)
				return n;
			if (!(out->flags & KMSG_FRAGMENT)) {
				add_carry(r, out);
				return 1;
			}
			rec = *out;
		} else {
			n = next_raw(r, &rec);
			if (n < 0)
				return n;
			if (n == 0) {
				for (int i = 0; i < JOIN_SLOTS; i++) {
					struct pending *q = &r->slots[i];
					if (q->used && q->first.real_ns < r->flush_before &&
					    (!p || q->age < p->age))
						p = q;
				}
				if (!p)
					return 0;
				n = emit_pending(r, p, out, 1);
				if (n > 0)
					add_carry(r, out);
				return n;
			}
		}
		if (!r->nused && !(rec.flags & KMSG_FRAGMENT)) {
			/* The common case: no line in progress, a whole line. */
			*out = rec;
			add_carry(r, out);
			return 1;
		}
		for (int i = 0; i < JOIN_SLOTS; i++) {
			struct pending *q = &r->slots[i];
			if (!q->used) {
				if (!freeslot)
					freeslot = q;
				continue;
			}
			if (q->caller == rec.caller && q->boot_id == rec.boot_id)
				p = q;
			if (!oldest || q->age < oldest->age)
				oldest = q;
		}
		if (!p && !(rec.flags & KMSG_FRAGMENT)) {
			*out = rec;
			add_carry(r, out);
			return 1;
		}
		if (p && p->len + rec.text_len > JOIN_MAX) {
			/* Too long to join: return what we have as a part. */
			stash(r, &rec);
			n = emit_pending(r, p, out, 1);
			if (n > 0)
				add_carry(r, out);
			return n;
		}
		if (!p) {
			if (!freeslot) {
				/* Too many callers mid-line: the oldest goes out
				 * as it is, this record is taken next time. */
				stash(r, &rec);
				n = emit_pending(r, oldest, out, 1);
				if (n > 0)
					add_carry(r, out);
				return n;
			}
			p = freeslot;
			p->used = 1;
			r->nused++;
			p->caller = rec.caller;
			p->boot_id = rec.boot_id;
			p->age = r->age++;
			p->first = rec;
			p->len = p->flen = 0;
			r->carry_lost += rec.lost;
			r->carry_damaged += rec.damaged;
			p->first.lost = p->first.damaged = 0;
		} else {
			r->carry_lost += rec.lost;
			r->carry_damaged += rec.damaged;
		}
		if (add_part(p, &rec) < 0)
			return -ENOMEM;
		if (!(rec.flags & KMSG_FRAGMENT)) {
			n = emit_pending(r, p, out, 0);
			if (n > 0)
				add_carry(r, out);
			return n;
		}
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

/*
 * The first valid record at or after logical position from and before
 * limit; 0 and *found unset if there is none.  Racing writers can make it
 * miss (the caller re-checks head), never return a torn record.
 */
static int find_record(struct kmsg_reader *r, uint64_t from, uint64_t limit,
		       uint64_t *found, struct rec_hdr *hd)
{
	struct kmsg_log *log = r->log;
	for (uint64_t p = ring_norm(log, from); p < limit; p = ring_norm(log, p + REC_ALIGN)) {
		const struct rec_hdr *c = (const void *)(log->data + p % log->data_size);
		uint64_t len;
		if (c->magic != REC_MAGIC || c->pos != p)
			continue;
		len = ring_check_record(log, p, NULL);
		if (!len)
			continue;
		memcpy(hd, c, REC_HDR);
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
 * Bisects [head, tail) by position for the first record whose key (seq or
 * real time) is >= want.  Keys grow with position, so O(log n) probes.
 */
static int seek_by(struct kmsg_reader *r, int by_time, uint64_t want_seq,
		   int64_t want_ns)
{
	const struct kmsg_hdr *h = r->log->hdr;

	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t head, tail, lo, hi, best;
		int err = load_window(r->log, &head, &tail);

		if (err)
			return err;
		lo = head;
		hi = best = tail;

		/* Invariant: every record before lo is before the key; the
		 * answer is best or a record in [lo, hi). */
		while (lo < hi) {
			uint64_t mid = lo + ((hi - lo) / 2 & ~(uint64_t)(REC_ALIGN - 1)), at;
			struct rec_hdr hd;
			if (!find_record(r, mid, hi, &at, &hd)) {
				hi = mid;
			} else if (by_time ? hd.real_ns < want_ns : hd.seq < want_seq) {
				lo = at + hd.len;
			} else {
				best = at;
				hi = at;
			}
		}
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&h->head, memory_order_relaxed) <= best) {
			r->pos = best;
			r->expect_known = 0;
			r->overtaken = r->in_damage = 0;
			drop_pending(r);
			return 0;
		}
	}
	return kmsg_reader_seek(r, KMSG_SEEK_OLDEST);
}

int kmsg_reader_seek(struct kmsg_reader *r, enum kmsg_whence whence)
{
	const struct kmsg_hdr *h;
	if (!r)
		return KMSG_EINVAL;
	h = r->log->hdr;
	switch (whence) {
	case KMSG_SEEK_OLDEST:
	case KMSG_SEEK_END: {
		uint64_t head, tail;
		int err = load_window(r->log, &head, &tail);
		if (err)
			return err;
		r->pos = whence == KMSG_SEEK_OLDEST ? head : tail;
		break;
	}
	case KMSG_SEEK_CLEARED:
		return kmsg_reader_seek_seq(r, atomic_load_explicit(&h->clear_seq,
						 memory_order_acquire));
	default:
		return KMSG_EINVAL;
	}
	r->expect_known = 0;
	r->overtaken = r->in_damage = 0;
	drop_pending(r);
	return 0;
}

int kmsg_reader_seek_seq(struct kmsg_reader *r, uint64_t seq)
{
	if (!r)
		return KMSG_EINVAL;
	return seek_by(r, 0, seq, 0);
}

int kmsg_reader_seek_time(struct kmsg_reader *r, int64_t real_ns)
{
	if (!r)
		return KMSG_EINVAL;
	return seek_by(r, 1, 0, real_ns);
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
	err = log_register_follower(log);
	if (err < 0)
		return err;
	if (timeout_ms >= 0)
		deadline = clock_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000;
	for (;;) {
		uint32_t seen = atomic_load_explicit(word, memory_order_acquire);
		uint64_t tail = atomic_load_explicit(&log->hdr->tail, memory_order_acquire);
		int64_t now = clock_ns(CLOCK_MONOTONIC), wait_ns = INT64_MAX;
		struct timespec ts, *tsp = NULL;
		long rc;

		if (ring_norm(log, r->pos) < tail)
			return 1;
		if (r->stashed)
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
