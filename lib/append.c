/*
 * append.c - the write path: one record from an entry, in the steps W1-W8
 * of the overview at the top of ring.c; and clearing.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * A record's two timestamps from one clock read.  Reading CLOCK_REALTIME
 * and CLOCK_BOOTTIME costs two vDSO calls, a third of an append.  Their
 * difference changes only when the wall clock is stepped (both run at the
 * same rate, and both advance across suspend), so each thread re-reads it
 * every WALL_REFRESH_NS and otherwise adds it to CLOCK_BOOTTIME.  A step
 * of the wall clock shows in records at most that long after it happened.
 */
#define WALL_REFRESH_NS 1000000

static KMSG_TLS int64_t wall_offset, wall_until;

static void now_times(int64_t *real_ns, int64_t *boot_ns)
{
	int64_t b = kmsg__clock_ns(CLOCK_BOOTTIME);

	if (b >= wall_until || b < wall_until - WALL_REFRESH_NS) {
		int64_t r = kmsg__clock_ns(CLOCK_REALTIME), b2 = kmsg__clock_ns(CLOCK_BOOTTIME);
		wall_offset = r - (b + (b2 - b) / 2);
		b = b2;
		wall_until = b + WALL_REFRESH_NS;
	}
	*boot_ns = b;
	*real_ns = b + wall_offset;
}

/*
 * The handles through which this thread left a line open (their serials;
 * 0: a free slot).  A record of the thread's own caller id that continues
 * no open line of its own begins a new one (REC_BEGIN): an open line under
 * that id is then another's, of a thread or process that had the id
 * before and died mid-line, and ends as it is instead of taking this
 * record in.  A thread with lines open through more handles than this at
 * once begins the next part of one of them as a line of its own.
 */
#define OPEN_LINES 4
static KMSG_TLS uint64_t open_lines[OPEN_LINES];
static KMSG_TLS unsigned open_count, open_next;

/* Does this thread have a line open through log? (its slot, or -1) */
static int own_line(const struct kmsg_log *log)
{
	for (int i = 0; open_count && i < OPEN_LINES; i++)
		if (open_lines[i] == log->serial)
			return i;
	return -1;
}

/* After an append of this thread's own: its line through log is open
 * (fragment) or not; slot is own_line()'s answer from before. */
static void note_line(const struct kmsg_log *log, int slot, int fragment)
{
	if (fragment && slot < 0) {
		for (int i = 0; open_count < OPEN_LINES && i < OPEN_LINES; i++)
			if (!open_lines[i])
				slot = i;
		if (slot < 0)
			slot = (int)(open_next++ % OPEN_LINES);  /* the oldest goes */
		else
			open_count++;
		open_lines[slot] = log->serial;
	} else if (!fragment && slot >= 0) {
		open_lines[slot] = 0;
		open_count--;
	}
}

void kmsg__lines_forget(void)
{
	memset(open_lines, 0, sizeof(open_lines));
	open_count = 0;
}

/* msync wants page-aligned start addresses. */
static void sync_range(const void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(page - 1);
	msync((void *)a, len + ((uintptr_t)addr - a), MS_SYNC);
}

int kmsg_log_append(uint64_t *seq_out, struct kmsg_log *log, const struct kmsg_entry *e)
{
	size_t fields_len = 0;
	uint64_t len, rpos = 0, seq = 0, head[5];
	int64_t real_ns, boot_ns;
	struct time_look look;
	int err, slot = -1, begin;

	/* W1 */
	if (!log || !e || e->version != KMSG_ENTRY_VERSION ||
	    (e->flags & ~(unsigned)(KMSG_FRAGMENT | KMSG_BEGIN | KMSG_TIMES | KMSG_VOUCHED)) ||
	    (!e->text && e->text_len) || (!e->fields && e->nfields))
		return KMSG_EINVAL;
	if (!(log->flags & KMSG_OPEN_WRITE))
		return KMSG_ERDONLY;
	if (e->facility < 0 || e->facility >= KMSG_NFACILITIES ||
	    e->level < 0 || e->level > 7)
		return KMSG_EPRIO;
	if (e->text_len > log->max_text)
		return KMSG_ETOOLONG;
	if (e->nfields && (err = kmsg__fields_check(&fields_len, e)) != 0)
		return err;
	len = rec_size(e->text_len, fields_len);
	if (len > log->max_rec)
		return KMSG_ETOOLONG;
	err = kmsg__writer_ready(log);
	if (err)
		return err;
	if (e->flags & KMSG_TIMES) {
		real_ns = e->real_ns;
		boot_ns = e->boot_ns;
	} else {
		now_times(&real_ns, &boot_ns);
	}
	if (atomic_load_explicit(&log->aux->boot_id, memory_order_acquire) != log->boot_id) {
		err = kmsg__ring_enter_boot(log);
		if (err)
			return err;
	}

	/* The header's bytes 24..63 (layout.h), in whole words: a wide load
	 * of a local copy just written in narrow parts would stall the
	 * store buffer. */
	head[0] = (uint64_t)real_ns;
	head[1] = (uint64_t)boot_ns;
	head[2] = log->boot_id;
	head[3] = (uint64_t)(e->pid ? e->pid : log->pid) |
		  (uint64_t)(e->caller ? e->caller : kmsg__self_caller()) << 32;
	if (!e->caller)
		slot = own_line(log);
	begin = (e->flags & KMSG_BEGIN) || (!e->caller && slot < 0);
	head[4] = (uint64_t)e->text_len | (uint64_t)fields_len << 16 |
		  (uint64_t)(e->facility << 3 | e->level) << 32 |
		  (uint64_t)((e->flags & KMSG_FRAGMENT ? REC_FRAGMENT : 0) |
			     (begin ? REC_BEGIN : 0)) << 40 |
		  (uint64_t)(log->owner & 0xff) << 48;

	kmsg__time_before(log, real_ns, &look);                                    /* T1 */

	/* W2-W7; a reservation given up by an evictor (its writer was
	 * stopped for longer than the bound) is made again elsewhere, with
	 * the record's own times: no record whose append succeeds is lost. */
	for (int attempt = 0;; attempt++) {
		unsigned prev;
		struct rec_hdr *blk;
		unsigned char *dst;
		uint32_t lenword, crc;
		int r;

		/* Passed again and again: no writer stalls a bound's worth
		 * between its reservation and its commit that often, but a
		 * hostile file can make it look so. */
		if (attempt == 64)
			return KMSG_EBUSY;
		if (attempt && attempt % 16 == 0)
			kmsg__ring_recheck(log);  /* pass_to past resv, say */
		r = kmsg__ring_reserve(log, len, &blk, &rpos, &seq, &prev);
		if (r < 0)
			return r;
		dst = (unsigned char *)blk;
		lenword = (uint32_t)len | (prev & 0xff) << 24;  /* prev_owner */
		__atomic_store_n((uint64_t *)dst, lenword, __ATOMIC_RELAXED);  /* crc 0 */
		__atomic_store_n((uint64_t *)(dst + 8), seq, __ATOMIC_RELAXED);
		memcpy(dst + 24, head, sizeof(head));
		if (r == 1) {
			/* Its pad was passed before it was marked: the record
			 * place is let go of, marked so, for the quarantine. */
			__atomic_store_n(&blk->tag, rpos | ST_RELEASED, __ATOMIC_RELEASE);
			continue;
		}
		if (kmsg__ring_mark(log, blk, rpos))                               /* W5 */
			continue;
		kmsg__time_after(log, real_ns, &look);                             /* T2 */
		/* W6: the padding first, as one word the payload then partly
		 * covers; then the payload; then the checksum, over the body
		 * read back from the block (in the cache; summed here, its
		 * arithmetic overlaps the wait for the payload's stores that
		 * the commit's compare-and-swap makes anyway) */
		if (len > REC_HDR)
			__atomic_store_n((uint64_t *)(dst + len - 8), 0, __ATOMIC_RELAXED);
		if (e->text_len)
			memcpy(dst + REC_HDR, e->text, e->text_len);
		if (fields_len)
			kmsg__fields_put(dst + REC_HDR + e->text_len, e);
		crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(dst, (uint32_t)len), seq, rpos,
					   lenword);
		__atomic_store_n(&blk->crc, crc, __ATOMIC_RELEASE);  /* W6, pairs with D1 */
		if (kmsg__ring_commit(blk, rpos) == 0)                              /* W7 */
			break;
	}

	if (!e->caller)
		note_line(log, slot, (e->flags & KMSG_FRAGMENT) != 0);
	if (log->flags & KMSG_OPEN_SYNC) {
		sync_range(ring_block(log, kmsg__ring_phys(log, rpos)), len);
		sync_range(log->map, HDR_SIZE);
	}
	kmsg__wake_after_append(log, e->flags & KMSG_TIMES ? kmsg__clock_ns(CLOCK_BOOTTIME)
							   : boot_ns);            /* W8 */
	if (seq_out)
		*seq_out = seq;
	return 0;
}

int kmsg_log_print(struct kmsg_log *log, int facility, int level,
		   const char *text, size_t text_len)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.facility = facility;
	e.level = level;
	e.text = text;
	e.text_len = text_len;
	return kmsg_log_append(NULL, log, &e);
}

int kmsg_log_clear(struct kmsg_log *log, uint64_t seq)
{
	struct window w;
	uint64_t cur;
	int err;

	if (!log)
		return KMSG_EINVAL;
	if (!(log->flags & KMSG_OPEN_WRITE))
		return KMSG_ERDONLY;
	err = kmsg__ring_window(log, &w);
	if (err)
		return err;
	if (seq > w.end_seq)
		seq = w.end_seq;
	cur = atomic_load(&log->aux->clear_seq);
	while (cur < seq && !atomic_compare_exchange_weak(&log->aux->clear_seq, &cur, seq))
		;
	if (log->flags & KMSG_OPEN_SYNC)
		sync_range(&log->aux->clear_seq, sizeof(uint64_t));
	return 0;
}
