/*
 * iter.c - the read path: one record at a time from a position, and
 * finding a position by number or time.  The checks a reader makes
 * (R1-R5) and why they suffice are in the overview at the top of ring.c.
 * A reader stores to the mapping only to pass a stalled writer's block
 * when its handle may write (kmsg__ring_give_up), so read permission on
 * the file is all it needs.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * B1 (ring.c, READER CHECKS): the blocks ahead are copied with pread, in
 * copies of up to BULK_CHUNK bytes, where at least BULK_FROM bytes lie
 * between the reader and the end and a copy's length between head and the
 * reader.  Nearer the end (a follower, mostly) a pread would cost more
 * than the few blocks it copies, and nearer head evictors would pass
 * blocks while they are copied.  A record is at most 64 + 2 * 65535
 * bytes, so a copy made at its position holds it whole.  The buffers are
 * the log handle's spare when no other reader holds it: readers made one
 * after another (a stat, a dump's measuring pass, then its copy) would
 * each pay the pages of a new 512 KiB.  Tests and the fuzzer make copies
 * small (kmsg__reader_bulk()).
 */
#define BULK_CHUNK (256u << 10)
#define BULK_FROM  (64u << 10)

/* The reader's bulk buffers back to its log as the spare (or freed). */
static void bulk_release(struct kmsg_iter *it)
{
	if (it->bulk && it->bulk_chunk == BULK_CHUNK)
		it->bulk = atomic_exchange_explicit(&it->log->bulk_spare, it->bulk,
						    memory_order_acq_rel);
	free(it->bulk);
	it->bulk = it->bulk_seen = NULL;
}

int kmsg__iter_init(struct kmsg_iter *it, struct kmsg_log *log)
{
	memset(it, 0, sizeof(*it));
	it->log = log;
	it->bulk_chunk = BULK_CHUNK;
	it->bulk_from = BULK_FROM;
	it->buf = malloc(log->max_rec);
	return it->buf ? 0 : -ENOMEM;
}

void kmsg__iter_free(struct kmsg_iter *it)
{
	free(it->buf);
	it->buf = NULL;
	bulk_release(it);
}

/* The seek's key no longer applies: numbers missing from here on count
 * from the one it asked for. */
static void unfloor(struct kmsg_iter *it)
{
	it->floored = 0;
	if (it->expect < it->floor_seq)
		it->expect = it->floor_seq;
}

/*
 * H2: has head passed pos since the window w was loaded?  Then *head is
 * where to go on.  A head more than a lap past w's end is either writers
 * that lapped this reader while it was descheduled or a hostile word: the
 * window as it is now, which bounds head by resv, tells which.
 */
static int overtaken_at(const struct kmsg_log *log, uint64_t pos, const struct window *w,
			uint64_t *head)
{
	uint64_t h2 = kmsg__ring_head(log);
	struct window now;

	if (pos >= h2)
		return 0;
	if (h2 <= w->end + log->data_size && h2 % REC_ALIGN == 0) {  /* else a lie: the window's */
		*head = h2;
		return 1;
	}
	if (kmsg__ring_window(log, &now) == 0 && pos < now.head) {
		*head = now.head;
		return 1;
	}
	return 0;
}

static void restart_at_head(struct kmsg_iter *it, uint64_t head)
{
	it->pos = head;
	it->overtaken = 1;
	it->in_damage = 0;
}

/*
 * At the end of the blocks: if numbers are missing between the last record
 * returned and the end (a log cut short, damage at its end, a rebuilt
 * header that kept a larger number, writers that never finished), *rec
 * becomes the KMSG_GAP record that says so, once; returns 1 then, else 0.
 */
static int end_gap(struct kmsg_iter *it, const struct window *w, struct kmsg_record *rec)
{
	uint64_t gap;

	if (it->floored)
		unfloor(it);
	if (!it->expect_known || w->end_seq <= it->expect)
		return 0;
	gap = w->end_seq - it->expect;
	*rec = (struct kmsg_record){
		.seq = w->end_seq,
		.flags = KMSG_GAP | (it->holes && !it->overtaken ? KMSG_UNFINISHED : 0),
		.lost = it->overtaken || it->holes ? gap : 0,
		.damaged = it->overtaken || it->holes ? 0 : gap,
		.seq_id = kmsg__ring_seq_id(it->log),
	};
	it->last_overtaken = it->overtaken;
	it->expect = w->end_seq;
	it->overtaken = 0;
	it->holes = 0;
	it->in_damage = 0;
	return 1;
}

static uint64_t resync(const struct kmsg_iter *it, uint64_t head, uint64_t tail);

/*
 * R4: has the reader waited for the unfinished block at pos long enough?
 * A reader that may write waits as writers do, and then gives the block
 * up as they would (kmsg__ring_give_up): its writer then appends again,
 * so nothing is missed.  One that may not waits far longer, since it can
 * only step over the block on its own.  The shared note of when a writer
 * first saw the block unfinished counts too: a late reader does not wait
 * again.
 */
static int waited_out(struct kmsg_iter *it, uint64_t pos)
{
	const struct kmsg_aux *a = it->log->aux;
	int64_t now = kmsg__clock_ns(CLOCK_BOOTTIME);
	int64_t bound = it->log->flags & KMSG_OPEN_WRITE ? STALL_NS : READ_STALL_NS;

	if (it->wait_pos != pos || !it->wait_since) {
		it->wait_pos = pos;
		it->wait_since = now;
	}
	if (now - it->wait_since >= bound)
		return 1;
	/* (stall_pos 0 is no note: ring.c, stall_expired()) */
	return pos != 0 && atomic_load_explicit(&a->stall_pos, memory_order_acquire) == pos &&
	       kmsg__elapsed_ns(now, atomic_load_explicit(&a->stall_since,
							  memory_order_relaxed)) >= bound;
}

/* R3: the block at pos failed its checks; where the reader goes on. */
static void damaged_at(struct kmsg_iter *it, uint64_t pos, uint64_t end)
{
	uint64_t to = pos + REC_ALIGN;

	/* The first bad block of a stretch: on at the record expected,
	 * wherever it lies after it (see resync()).  Never back: what lies
	 * before pos was read, and a hostile number there (one lower than
	 * a record before it) would send the reader round it for ever. */
	if (!it->in_damage && it->expect_known) {
		uint64_t at = resync(it, pos, end);
		if (at != pos)
			to = at;
	}
	it->in_damage = 1;
	it->pos = to;
}

/*
 * Is the block at phys in the part of a log opened cut short that is
 * mapped as zeros (file.c), while the file has grown since?  A writer that
 * restored the size writes its records there, where this mapping cannot
 * see them: what looks unfinished here may be whole in the file.
 */
static int grown_under_zeros(const struct kmsg_log *log, uint64_t phys)
{
	struct stat st;

	return log->opened_size < log->map_size &&
	       HDR_SIZE + phys + REC_HDR > log->opened_size &&
	       fstat(log->fd, &st) == 0 && (uint64_t)st.st_size > log->opened_size;
}

/* How often one call may go back from past the end before it stops there. */
#define RESYNC_BACKS_MAX 8

void kmsg__iter_bulk(struct kmsg_iter *it, uint32_t chunk, uint32_t from)
{
	bulk_release(it);
	it->bulk_len = 0;
	it->bulk_used = 0;
	it->bulk_chunk = chunk & ~(uint32_t)(REC_ALIGN - 1);
	it->bulk_from = from;
}

/* Copies n bytes of the data area at phys into buf with pread: how many. */
static size_t bulk_copy(const struct kmsg_log *log, unsigned char *buf, size_t n, uint64_t phys)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(log->fd, buf + got, n - got, (off_t)(HDR_SIZE + phys + got));

		if (r <= 0)
			break;
		got += (size_t)r;
	}
	return got;
}

/*
 * Copies the blocks from pos (at phys) twice [B1]: every block the first
 * copy shows committed was committed before the second began, so the
 * second holds it as its writer finished it.  Not past the end, the lap,
 * or the part of the file this view maps (file.c: a log opened cut short).
 */
static void bulk_fill(struct kmsg_iter *it, uint64_t pos, uint64_t phys, const struct window *w)
{
	const struct kmsg_log *log = it->log;
	uint64_t n = it->bulk_chunk;

	it->bulk_len = 0;
	if (!it->bulk) {
		if (n == BULK_CHUNK)
			it->bulk = atomic_exchange_explicit(&it->log->bulk_spare, NULL,
							    memory_order_acq_rel);
		if (!it->bulk)
			it->bulk = malloc(2 * (size_t)n);
		if (!it->bulk)
			return;  /* the mapping serves */
		it->bulk_seen = it->bulk + n;
	}
	if (n > log->data_size - phys)
		n = log->data_size - phys;
	if (n > w->end - pos)
		n = w->end - pos;
	if (log->opened_size < HDR_SIZE + phys + n)
		n = log->opened_size > HDR_SIZE + phys ? log->opened_size - HDR_SIZE - phys : 0;
	n = bulk_copy(log, it->bulk_seen, (size_t)n, phys);
	atomic_thread_fence(memory_order_seq_cst);                             /* B1 */
	it->bulk_len = bulk_copy(log, it->bulk, (size_t)n, phys) & ~(size_t)(REC_ALIGN - 1);
	it->bulk_pos = pos;
	/* H2 for the whole copy, once: a block head had not passed when the
	 * copy was done was not written over while it was made, however
	 * long the reader then takes over the blocks before it. */
	atomic_thread_fence(memory_order_acquire);                             /* H2 */
	it->bulk_head = kmsg__ring_head(log);
}

/*
 * The block at pos in the second bulk copy, if the first copy shows it
 * committed and the copy holds it whole; else NULL, and the reader looks
 * at it in the mapping (R2).  Copies again where the reader has left the
 * last copy and the end is far, or where a block that a copy from its
 * position would hold goes past the copy's end; any other length is left
 * to R3, so that a hostile one cannot make every step of the reader a
 * copy.
 */
static const unsigned char *bulk_block(struct kmsg_iter *it, uint64_t pos, uint64_t phys,
				       const struct window *w)
{
	uint64_t off = pos - it->bulk_pos, tag;
	struct rec_hdr h;

	if (pos < it->bulk_pos || off + REC_HDR > it->bulk_len) {
		/* Nor within a copy's length of head: writers evict there, and
		 * would pass the first blocks while they are copied (a reader
		 * racing an evicting writer from the oldest record, as a dump
		 * of a full ring does, would then be overtaken every time). */
		if (w->end - pos < it->bulk_from || !it->bulk_chunk ||
		    pos - w->head < it->bulk_chunk)
			return NULL;
		bulk_fill(it, pos, phys, w);
		off = 0;
		if (it->bulk_len < REC_HDR)
			return NULL;
	}
	memcpy(&tag, it->bulk_seen + off + offsetof(struct rec_hdr, tag), sizeof(tag));
	if (tag != pos || pos < it->bulk_head)
		return NULL;
	memcpy(&h, it->bulk + off, REC_HDR);
	if (off + h.len > it->bulk_len) {
		/* a copy from pos would hold it: a record's length, within
		 * the lap (no record crosses its end), the window and the
		 * part of the file this view maps */
		if (off == 0 || h.len > it->log->max_rec || h.len > it->bulk_chunk ||
		    w->end - pos < it->bulk_from || pos - w->head < it->bulk_chunk ||
		    h.len > w->end - pos ||
		    phys + h.len > it->log->data_size ||
		    HDR_SIZE + phys + h.len > it->log->opened_size)
			return NULL;
		bulk_fill(it, pos, phys, w);
		return bulk_block(it, pos, phys, w);  /* at 0 now: once */
	}
	it->bulk_used++;
	return it->bulk + off;
}

int kmsg__iter_next(struct kmsg_iter *it, struct kmsg_record *rec)
{
	struct kmsg_log *log = it->log;
	const uint64_t D = log->data_size;
	int backs = 0;

	/* The file written over with another log (cp or dd onto it), or
	 * upgraded to another format: none of its records is this view's. */
	if (memcmp(log->st->ring_id, log->ring_id, sizeof(log->ring_id)) != 0 ||
	    (!log->private_hdr && log->st->version != log->version))
		return KMSG_ECHANGED;
	for (;;) {
		struct window w;
		uint64_t pos = it->pos, len, phys, tag;
		uint32_t crc = 0;
		struct rec_hdr hd;
		const unsigned char *src, *base;
		int err = kmsg__ring_window(log, &w);                                 /* R1 */

		if (err)
			return err;
		phys = kmsg__ring_phys(log, pos);
		if (D - phys < REC_HDR) {      /* the lap ends: no room for a header */
			pos += D - phys;
			phys = 0;
		}
		if (pos > w.end && pos > ring_norm(log, w.end) && it->expect_known) {
			/* Beyond the end: the end moved back under the reader
			 * (a writer rebuilt the header of a log cut short or
			 * torn, dropping records it had not read).  Blocks
			 * that lead past the end again and again (a hostile
			 * file) would send it back for ever: after a few
			 * times it goes to the end, the rest counted there. */
			it->pos = ++backs > RESYNC_BACKS_MAX ? w.end : resync(it, w.head, w.end);
			it->in_damage = 1;
			continue;
		}
		if (pos >= w.end) {
			it->pos = pos;
			return end_gap(it, &w, rec);
		}
		if (pos < w.head) {
			restart_at_head(it, w.head);
			continue;
		}
		src = bulk_block(it, pos, phys, &w);                                  /* B1 */
		tag = src ? pos : __atomic_load_n(&ring_block(log, phys)->tag, __ATOMIC_ACQUIRE); /* R2 */
		if (!kmsg__ring_committed(log, pos, tag)) {
			uint64_t seq = 0;
			int st;

			if (grown_under_zeros(log, phys))
				return KMSG_ECHANGED;  /* open it again to see it */
			st = kmsg__ring_unfinished(log, pos, &w,
						       it->expect_known ? it->expect : UINT64_MAX,
						       &len, &seq);

			if (st == KMSG__BLOCK_AGAIN)
				continue;
			if (st == KMSG__BLOCK_WAIT && waited_out(it, pos)) {
				if ((log->flags & KMSG_OPEN_WRITE) && it->gave_up != pos + 1) {
					it->gave_up = pos + 1;
					/* the number at pos, if the reader knows
					 * it: not once overtaken (expect is then
					 * the last record returned, laps behind),
					 * nor past a hole or damage */
					kmsg__ring_give_up(log, pos,
							   it->expect_known && !it->overtaken &&
							   !it->holes && !it->in_damage &&
							   !it->floored ? it->expect : UINT64_MAX);
					continue;  /* now a hole, or committed */
				}
				st = KMSG__BLOCK_HOLE;
			}
			if (st == KMSG__BLOCK_WAIT) {
				/* In progress: a writer finishes in microseconds,
				 * or is stopped and is waited for as writers do.
				 * With nothing after it there is nothing to miss:
				 * the caller may wait for it (kmsg_reader_wait). */
				if (!len || pos + len >= w.end) {
					it->pos = pos;
					return 0;
				}
				kmsg__nap(20000);
				continue;
			}
			{
				uint64_t h2;
				if (overtaken_at(log, pos, &w, &h2)) {
					restart_at_head(it, h2);
					continue;
				}
			}
			if (st == KMSG__BLOCK_HOLE && len && pos + len <= w.end) {
				/* R4: a writer that never finished: its number
				 * shows as lost at the next record. */
				it->pos = pos + len;
				it->holes = 1;
				continue;
			}
			damaged_at(it, pos, w.end);
			continue;
		}
		/* R2: the header, checked before its length is believed, then
		 * the rest, copied and checksummed in one pass; a bulk copy is
		 * private already, and is checksummed where it is. */
		memcpy(&hd, src ? src : log->data + phys, REC_HDR);
		base = src ? src : it->buf;
		if (!src)
			memcpy(it->buf, &hd, REC_HDR);
		len = kmsg__rec_header_ok(log, pos, phys, &hd);
		if (len && pos + len <= w.end && !(hd.flags & REC_PAD)) {
			crc = kmsg__rec_crc_copy(src ? NULL : it->buf, src ? src : log->data + phys,
						 (uint32_t)rec_size(hd.text_len, hd.fields_len),
						 hd.seq, pos, rec_lenword(&hd));
		} else if (len && pos + len <= w.end && (hd.flags & REC_PAD)) {
			/* a pad ends inside its reservation, so before the
			 * end: one past it is damage, not a way past it */
			crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(base, REC_HDR),
						   hd.seq, pos, rec_lenword(&hd));
		} else {
			len = 0;
		}
		atomic_thread_fence(memory_order_acquire);                             /* H2 */
		{
			uint64_t h2;
			/* (a bulk copy's H2 was made when it was copied) */
			if (!src && overtaken_at(log, pos, &w, &h2)) {
				restart_at_head(it, h2);
				continue;
			}
		}
		if (!len || crc != hd.crc) {                                           /* R3 */
			damaged_at(it, pos, w.end);
			continue;
		}
		if (hd.flags & REC_PAD) {
			it->pos = pos + len;
			continue;
		}
		if (it->floored) {
			if (pos < it->floor_end &&
			    (hd.seq < it->floor_seq || hd.real_ns < it->floor_ns)) {
				/* Before the seek's key: in progress when it
				 * looked, and not this reader's. */
				it->pos = pos + len;
				if (hd.seq >= it->expect)
					it->expect = hd.seq + 1;
				it->holes = 0;
				it->in_damage = 0;
				continue;
			}
			unfloor(it);
		}
		/* A number lower than expected cannot come from writers that
		 * follow the protocol (a hostile header can cause it); the
		 * record is intact, so it is returned, with no gap claimed. */
		{
			uint64_t gap = it->expect_known && hd.seq > it->expect         /* R5 */
				? hd.seq - it->expect : 0;
			int lost = it->overtaken || it->holes;
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
					 (hd.flags & REC_BEGIN ? KMSG_BEGIN : 0) |
					 (gap && it->holes && !it->overtaken ? KMSG_UNFINISHED : 0),
				.text = (const char *)base + REC_HDR,
				.text_len = hd.text_len,
				.fields = base + REC_HDR + hd.text_len,
				.fields_len = hd.fields_len,
				.lost = lost ? gap : 0,
				.damaged = lost ? 0 : gap,
				/* loaded after the record was read: a renewal
				 * since kept the numbers of the records that
				 * were there (ring.c, THE NUMBERING'S IDENTITY) */
				.seq_id = kmsg__ring_seq_id(log),
			};
		}
		it->last_overtaken = it->overtaken && rec->lost;
		it->pos = pos + len;
		it->expect = hd.seq + 1;
		it->expect_known = 1;
		it->overtaken = 0;
		it->holes = 0;
		it->in_damage = 0;
		return 1;
	}
}

int kmsg__iter_ready(struct kmsg_iter *it)
{
	struct kmsg_log *log = it->log;
	struct window w;
	uint64_t pos, phys, tag;

	if (kmsg__ring_window(log, &w))
		return 1;  /* let the caller's read say what is wrong */
	pos = ring_norm(log, it->pos);
	if (pos >= w.end)  /* beyond it: the end moved back, which a read resyncs */
		return pos > w.end && pos > ring_norm(log, w.end) && it->expect_known;
	phys = pos % log->data_size;
	tag = __atomic_load_n(&ring_block(log, phys)->tag, __ATOMIC_ACQUIRE);
	if (kmsg__ring_committed(log, pos, tag) || log->version == KMSG_FORMAT_V1 || pos < w.head)
		return 1;
	{
		uint64_t len, seq;
		int st = kmsg__ring_unfinished(log, pos, &w,
					       it->expect_known ? it->expect : UINT64_MAX, &len, &seq);
		return st != KMSG__BLOCK_WAIT || waited_out(it, pos) || (len && pos + len < w.end);
	}
}

/* ------------------------------------------------------------------ */
/* Seeking                                                             */

/*
 * The first committed record at or after logical position from and
 * before limit; 0 and *found unset if there is none.  Racing writers can
 * make it miss (the caller re-checks head), never return a torn record.
 */
static int find_record(const struct kmsg_log *log, uint64_t from, uint64_t limit,
		       uint64_t *found, struct rec_hdr *hd)
{
	struct data_scan sc;

	kmsg__scan_start(&sc, from);
	for (uint64_t p = ring_norm(log, from); p < limit; p = ring_norm(log, p + REC_ALIGN)) {
		const struct rec_hdr *c;
		uint64_t len;

		p = ring_norm(log, kmsg__scan_on(log, &sc, p));
		if (p >= limit)
			break;
		c = (const void *)(log->data + p % log->data_size);

		if (__atomic_load_n(&c->tag, __ATOMIC_ACQUIRE) != p)
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
 * Bisects [head, tail) by position for the first valid record for which
 * at_key() holds (it must hold, if at all, from some record on: keys grow
 * with position), in O(log n) probes: its position, its header in *hd,
 * or tail.  *prev (with its header in *prev_hd) is the last record found
 * before it, which is the one just before it among the records seen;
 * UINT64_MAX if no record was found before it.  Racing writers can make
 * it miss (the caller re-checks head).
 */
static uint64_t bisect_by(const struct kmsg_log *log, uint64_t head, uint64_t tail,
			  int (*at_key)(const struct rec_hdr *hd, const void *arg),
			  const void *arg, struct rec_hdr *hd, uint64_t *prev,
			  struct rec_hdr *prev_hd)
{
	uint64_t lo = head, hi = tail, best = tail;

	*prev = UINT64_MAX;
	/* Invariant: every record before lo is before the key, the last one
	 * found ending at lo; the answer is best or a record in [lo, hi); no
	 * record starts in [hi, best). */
	while (lo < hi) {
		uint64_t mid = lo + ((hi - lo) / 2 & ~(uint64_t)(REC_ALIGN - 1)), at;
		struct rec_hdr c;

		if (!find_record(log, mid, hi, &at, &c)) {
			hi = mid;
		} else if (!at_key(&c, arg)) {
			lo = at + c.len;
			*prev = at;
			*prev_hd = c;
		} else {
			best = at;
			*hd = c;
			hi = at;
		}
	}
	return best;
}

/* The key of a seek: a sequence number or a wall-clock time. */
struct seek_key {
	int by_time;
	uint64_t seq;
	int64_t ns;
};

static int at_seek_key(const struct rec_hdr *hd, const void *arg)
{
	const struct seek_key *k = arg;

	return k->by_time ? hd->real_ns >= k->ns : hd->seq >= k->seq;
}

/*
 * Bisects [head, tail) by position for the first valid record whose key
 * (seq or real time) is >= want: its position and number, or tail.
 *
 * Only committed records are seen: a block in progress (or a hole, or
 * damage) is not, and the one holding the key may be such a block.  So
 * *after is where the blocks that were not records begin, before the
 * answer: the end of the last record found before the key (*after_seq
 * is then the number after it; the caller's value is kept while that is
 * head).  Each probe that found nothing, or a record at or past the key,
 * proved the stretch it looked at free of records; those stretches cover
 * [*after, answer).
 */
static uint64_t bisect(const struct kmsg_log *log, uint64_t head, uint64_t tail,
		       int by_time, uint64_t want_seq, int64_t want_ns, uint64_t *seq,
		       uint64_t *after, uint64_t *after_seq)
{
	struct seek_key k = { by_time, want_seq, want_ns };
	struct rec_hdr hd = { 0 }, prev_hd = { 0 };  /* set when used; -O3 cannot tell */
	uint64_t prev, lo = head;
	uint64_t best = bisect_by(log, head, tail, at_seek_key, &k, &hd, &prev, &prev_hd);

	if (best < tail)
		*seq = hd.seq;
	if (prev != UINT64_MAX) {
		lo = prev + prev_hd.len;
		*after_seq = prev_hd.seq + 1;
	}
	*after = lo < best ? lo : best;
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
static uint64_t resync(const struct kmsg_iter *it, uint64_t head, uint64_t tail)
{
	uint64_t seq, after, after_seq;

	return bisect(it->log, head, tail, 0, it->expect, 0, &seq, &after, &after_seq);
}

/*
 * Places the iterator at pos, where the record numbered seq is, expecting
 * the number expect (at most seq): numbers between them are gone already,
 * and show on the first record, as lost if evicted (pos is the oldest
 * record), else as damaged (in the middle, or at the end of a log cut
 * short).
 */
static void place_at(struct kmsg_iter *it, uint64_t pos, uint64_t seq, uint64_t expect,
		     int evicted)
{
	it->pos = pos;
	it->expect = expect < seq ? expect : seq;
	it->expect_known = 1;
	it->overtaken = it->expect < seq && evicted;
	it->holes = 0;
	it->in_damage = 0;
	it->floored = 0;
}


/*
 * Where a seek by time may bisect from: records that begin below it may
 * be out of time order (ring.c, TIME ORDER), so the seek reads them all.
 * All of the log when no writer kept the order (a log of the first
 * format, a new or zeroed auxiliary area) or a lowering of the mark is
 * not covered yet (its writer is on its way, stopped or dead).
 */
static uint64_t time_break(const struct kmsg_log *log)
{
	uint64_t tb;
	int64_t m;

	if (log->version == KMSG_FORMAT_V1 || !log->aux)
		return UINT64_MAX;
	m = atomic_load_explicit(&log->aux->wall_mark, memory_order_acquire);
	if (m == 0 || (m & MARK_PENDING))
		return UINT64_MAX;  /* unset, or a lowering not covered yet */
	tb = atomic_load_explicit(&log->aux->time_break, memory_order_acquire);
	/* A block begins at a multiple of 8: a word off one (a hostile
	 * file) means the same blocks as the next multiple. */
	return tb > UINT64_MAX - REC_ALIGN ? UINT64_MAX
					   : (tb + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
}

/* want - 2 * TIME_SLACK_NS, the bisection's key for a seek to want. */
static int64_t time_key(int64_t want)
{
	return want < INT64_MIN + 2 * TIME_SLACK_NS ? INT64_MIN : want - 2 * TIME_SLACK_NS;
}

/* The reader steps over records whose key is below the seek's, from
 * where it is placed on, up to end; none is reported missing. */
static void floor_until(struct kmsg_iter *it, uint64_t end, int by_time, uint64_t want_seq,
			int64_t want_ns)
{
	it->floored = 1;
	it->floor_end = end;
	it->floor_seq = by_time ? 0 : want_seq;
	it->floor_ns = by_time ? want_ns : INT64_MIN;
}

/* At head, whatever is there (the oldest block may be an append in
 * progress, which the first record found would leave behind): 0, or 1
 * if writers kept overtaking, or an error. */
static int place_oldest(struct kmsg_iter *it, const struct window *w)
{
	uint64_t at, seq;
	int err;

	if (w->head_seq != UINT64_MAX && it->log->version != KMSG_FORMAT_V1) {
		place_at(it, w->head, w->head_seq, w->head_seq, 0);
		return 0;
	}
	err = kmsg__ring_oldest(it->log, &at, &seq);
	if (err)
		return err;
	place_at(it, at, seq, seq, 0);
	return 0;
}

/*
 * Bisects [head, end) by position for the first record whose key (seq or
 * real time) is >= want.  The iterator then expects that record's number
 * (or, at the end, the next one a writer gives), or expect if that is
 * lower: a reader told where to start by number reports the records from
 * there that are gone.
 *
 * Blocks that were not records when bisect() looked may lie just before
 * that record: appends in progress, one of which may hold the key (a
 * writer that numbered it is still copying it).  The iterator starts at
 * the first of them, so that it waits for them as for any, and steps
 * over the records they become whose key is below the seek's.
 *
 * By time, only the records from time_break on are bisected, for a time
 * 2 * TIME_SLACK_NS earlier (ring.c, TIME ORDER); the iterator starts at
 * the oldest record if any lies below time_break, and steps over every
 * record before the first one at or after want.
 */
static int seek_by(struct kmsg_iter *it, int by_time, uint64_t want_seq, int64_t want_ns,
		   uint64_t expect)
{
	const uint64_t floor_end_time = UINT64_MAX;

	for (int attempt = 0; attempt < 16; attempt++) {
		struct window w, now;
		uint64_t best, best_seq = 0, after, after_seq, from, tb = 0;
		int64_t key = by_time ? time_key(want_ns) : 0;
		int err = kmsg__ring_window(it->log, &w);

		if (err)
			return err;
		from = w.head;
		if (by_time) {
			tb = time_break(it->log);
			if (tb > from)
				from = tb < w.end ? tb : w.end;
		}
		after_seq = w.head_seq;
		best = bisect(it->log, from, w.end, by_time, want_seq, key, &best_seq,
			      &after, &after_seq);
		if (best == w.end)
			best_seq = w.end_seq;
		atomic_thread_fence(memory_order_acquire);
		if (by_time && time_break(it->log) != tb)
			continue;  /* a record it saw broke the order: again */
		if (kmsg__ring_window(it->log, &now) == 0 && now.head <= best) {
			uint64_t first = w.end;
			struct rec_hdr hd;

			if (from > w.head) {
				/* Out of order below time_break: all of it. */
				err = place_oldest(it, &w);
				if (err == 1)
					continue;
				if (err)
					return err;
				floor_until(it, floor_end_time, 1, 0, want_ns);
				return 0;
			}
			/* What is missing before the oldest record was evicted;
			 * at the end of records that remain, it was cut. */
			if (expect < best_seq && best < w.end)
				find_record(it->log, w.head, best + 1, &first, &hd);
			if (after < best && after_seq <= best_seq && now.head <= after &&
			    it->log->version != KMSG_FORMAT_V1) {
				/* Blocks that were not records first: from the
				 * number after the last record before them. */
				place_at(it, after, after_seq, expect,
					 after == w.head && expect < after_seq);
				floor_until(it, by_time ? floor_end_time : best, by_time, want_seq,
					    want_ns);
				return 0;
			}
			place_at(it, best, best_seq, expect,
				 best < w.end ? first == best : w.head == w.end);
			if (by_time)
				floor_until(it, floor_end_time, 1, 0, want_ns);
			return 0;
		}
	}
	/* Overtaken at every try: start at head, knowing nothing. */
	{
		struct window w;
		int err = kmsg__ring_window(it->log, &w);
		if (err)
			return err;
		place_at(it, w.head, 0, 0, 0);
		it->expect_known = 0;
		it->overtaken = 0;
		if (by_time)
			floor_until(it, floor_end_time, 1, 0, want_ns);
	}
	return 0;
}

int kmsg__ring_oldest(const struct kmsg_log *log, uint64_t *pos, uint64_t *seq)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		struct window w, now;
		uint64_t at;
		struct rec_hdr hd;
		int err = kmsg__ring_window(log, &w);

		if (err)
			return err;
		if (!find_record(log, w.head, w.end, &at, &hd)) {
			at = w.end;
			hd.seq = w.end_seq;
		}
		/* not overtaken while looking (pairs with H1) */
		atomic_thread_fence(memory_order_acquire);
		if (kmsg__ring_window(log, &now) == 0 && now.head <= at) {
			*pos = at;
			*seq = hd.seq;
			return 0;
		}
	}
	return 1;
}

int kmsg__iter_seek(struct kmsg_iter *it, enum kmsg_whence whence)
{
	uint64_t clear;
	struct window w;
	int err;

	switch (whence) {
	case KMSG_SEEK_OLDEST:
		err = kmsg__ring_window(it->log, &w);
		if (err)
			return err;
		err = place_oldest(it, &w);
		return err == 1 ? seek_by(it, 0, 0, 0, UINT64_MAX) : err;
	case KMSG_SEEK_END:
		err = kmsg__ring_window(it->log, &w);
		if (err)
			return err;
		place_at(it, w.end, w.end_seq, w.end_seq, 0);
		return 0;
	case KMSG_SEEK_CLEARED:
		/* Records evicted before the seek are not this reader's. */
		clear = it->log->version == KMSG_FORMAT_V1
			? atomic_load_explicit(&it->log->dyn1->clear_seq, memory_order_acquire)
			: atomic_load_explicit(&it->log->aux->clear_seq, memory_order_acquire);
		return seek_by(it, 0, clear, 0, UINT64_MAX);
	default:
		return KMSG_EINVAL;
	}
}

int kmsg__iter_seek_seq(struct kmsg_iter *it, uint64_t seq)
{
	return seek_by(it, 0, seq, 0, seq);
}

int kmsg__iter_seek_time(struct kmsg_iter *it, int64_t real_ns)
{
	return seek_by(it, 1, 0, real_ns, UINT64_MAX);
}

/* ------------------------------------------------------------------ */
/* Boots                                                               */

static int never(const struct rec_hdr *hd, const void *arg)
{
	(void)hd;
	(void)arg;
	return 0;
}

static int of_boot(const struct rec_hdr *hd, const void *arg)
{
	return hd->boot_id == *(const uint64_t *)arg;
}

/*
 * A boot's first writer brings the ring into its boot before it reserves
 * (ring.c), so the records of one boot lie together in position order and
 * the boots follow each other.  The newest record names the newest boot;
 * below the start of boot k, "of boot k + 1" is the key of a bisection
 * ("of boot k + 1 or a newer one" over the whole log, restricted to what
 * lies below), whose answer is where boot k + 1 starts and whose record
 * before the answer is the last of boot k + 2.  So each boot costs one
 * bisection, O(log n) record reads, whatever the log's size.
 */
int kmsg_log_boots_sized(struct kmsg_boot *boots, size_t n, size_t size,
			 struct kmsg_log *log)
{
	size_t k = 0;

	if (!log || (n && !boots) || size < KMSG__BOOT_SIZE_1)
		return KMSG_EINVAL;
	if (n > INT_MAX)
		n = INT_MAX;
	for (int attempt = 0; attempt < 16; attempt++) {
		struct window w, now;
		struct rec_hdr hd = { 0 }, prev_hd = { 0 };  /* as in bisect() */
		uint64_t prev, upper;
		int again = 0, err = kmsg__ring_window(log, &w);

		if (err)
			return err;
		k = 0;
		upper = w.end;
		bisect_by(log, w.head, w.end, never, NULL, &hd, &prev, &prev_hd);
		while (prev != UINT64_MAX && k < n) {
			uint64_t id = prev_hd.boot_id, start;
			struct kmsg_boot b = {
				.boot_id = id,
				.last_seq = prev_hd.seq,
				.last_real_ns = prev_hd.real_ns,
			};

			start = bisect_by(log, w.head, upper, of_boot, &id, &hd, &prev, &prev_hd);
			if (start >= upper) {
				again = 1;  /* overtaken while looking */
				break;
			}
			b.first_seq = hd.seq;
			b.first_real_ns = hd.real_ns;
			/* the caller's elements are size bytes apart */
			kmsg__put_sized((char *)boots + k * size, size, &b, sizeof(b));
			k++;
			upper = start;
		}
		/* not overtaken while looking (pairs with H1) */
		atomic_thread_fence(memory_order_acquire);
		if (!again && kmsg__ring_window(log, &now) == 0 && now.head <= upper)
			return (int)k;
	}
	return (int)k;
}
