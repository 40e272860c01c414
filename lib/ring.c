/*
 * ring.c - the record ring: appending, evicting, recovering, waking.
 *
 * OVERVIEW
 *
 * The file is a 256-byte header, a data area of D bytes used as a ring, and
 * a 128-byte copy of the header's static part at the very end (the first
 * page is the one a power cut is most likely to tear).  kmsg(5) gives every
 * field.
 *
 * Positions are logical 64-bit byte counts that only grow; a position p
 * lies at data offset p % D.  The header holds three of them:
 *
 *	head <= tail <= head + D
 *	[head, tail) holds the stored records, oldest first, back to back;
 *	tail is where the next record goes.
 *
 * A record is a 64-byte header (length, CRC-32C, sequence number, the
 * position it was written at, both timestamps, boot id, pid, caller,
 * lengths, priority, flags, magic), the text, the fields, and zero padding
 * to a multiple of 8.  A record never straddles the end of the data area:
 * when it would, the writer fills the rest of the lap with a pad record (or,
 * when fewer than 64 bytes are left, with nothing: every reader skips such a
 * short remainder implicitly) and starts at the next lap.  Sequence numbers
 * are contiguous in position order; pads take none.
 *
 * RECORD STATES
 *
 *	free       beyond tail, or left by an earlier lap
 *	written    bytes in place beyond tail, seq field not yet stored
 *	committed  seq field stored (release): the record is complete
 *	published  tail moved past it (release): readers may return it
 *	evicted    head moved past it: its bytes may be overwritten
 *
 * WRITER STEPS (under the append lock)
 *
 * The lock is one 64-bit word holding the id of the writer that appends.
 * Each writer handle owns an id and holds an OFD lock on a byte that
 * encodes it (log.c), so the kernel tells any other writer whether the
 * holder is still alive.  A writer builds and checksums its record in a
 * local buffer first; under the lock it only:
 *
 *	W1  evicts: while the record does not fit, head += length of the
 *	    record at head (store head, then a release fence, so that no byte
 *	    of the evicted record changes before the new head is visible);
 *	W2  writes a pad record if the record would cross the end of the
 *	    data area, commits it (pad.seq = next_seq, release) and moves on
 *	    to the next lap;
 *	W3  copies the record to tail and commits it: rec.seq = next_seq
 *	    with a release store, after every other byte;
 *	W4  next_seq = seq + 1;
 *	W5  tail = end of record (release): the publication;
 *	W6  releases the lock (release), then, if followers exist, bumps the
 *	    futex word and wakes them.
 *
 * A writer may die between any two instructions.  The next writer that
 * wants the lock sees that the owner's OFD lock is gone, takes the lock
 * over (compare-and-swap of the dead id to its own) and repairs
 * (kmsg__ring_recover_locked): W1 is complete after each single store of head;
 * bytes written beyond tail but not committed are never visible and get
 * overwritten; a record committed (W3) but not published (W4, W5) is
 * recognised at tail by its sequence number and position and published.
 * So no record is half-visible and no sequence number is used twice or
 * skipped.  A live writer that holds the lock (descheduled, or stopped by
 * SIGSTOP) is waited for up to log->lock_wait_ns, after which append fails
 * with KMSG_EBUSY rather than hang; a dead one costs its successor one
 * fcntl(F_OFD_GETLK) after a short spin.  OFD locks vanish at reboot, so a
 * lock word left by a previous boot is taken over on first use.
 *
 * READER CHECKS (reader.c; no lock, no store to the mapping)
 *
 *	R1  load tail (acquire, pairs with W5); nothing at or beyond it
 *	    is read;
 *	R2  copy the record's bytes; then an acquire fence and load head:
 *	    if head has passed the record, a writer may have overwritten it
 *	    during the copy (pairs with W1's store-then-fence), so the copy
 *	    is discarded and the reader has been overtaken;
 *	R3  check magic, length bounds, position field, CRC: a record that
 *	    fails is damaged (power loss, a hostile edit) and is skipped by
 *	    scanning forward for the next valid record;
 *	R4  an overtaken reader restarts at head and reports the sequence
 *	    gap as lost records; a damaged stretch is reported as damaged.
 *
 * WAKING FOLLOWERS
 *
 * inotify does not see stores through a mapping, so followers sleep on a
 * futex word in the header.  Readers may lack write permission, so they
 * cannot announce themselves in the mapping; instead a follower holds an
 * OFD read lock on the byte LOCK_FOLLOWER, and each writer handle checks
 * for such a lock at most every FOLLOWER_PROBE_NS.  Only a writer that has
 * seen a follower bumps the word and calls FUTEX_WAKE, so with nobody
 * following an append makes no system call beyond that probe.  A new
 * follower caps its sleeps at FOLLOWER_PROBE_NS until every writer must
 * have probed once.  Ordering: W5 (tail) before the bump, both sequentially
 * consistent; the follower loads the word, then tail, then sleeps only if
 * the word is unchanged, so a record published after its check of tail
 * always changes the word first.
 *
 * A wake that finds nobody asleep (the follower is busy reading, or the
 * "follower" is a reader that took the lock to slow writers down) would
 * cost every append a system call, five times the append.  So a writer
 * handle whose FUTEX_WAKE woke nobody then only bumps the word for the
 * next WAKE_QUIET_NS, and announces that by bumping the header's deferral
 * count (after the wake [D1]).  A follower that sees the count change
 * caps its sleeps at WAKE_QUIET_NS for twice that long, by its own clock.
 * No follower sleeps through a skipped wake without a cap: a wake that
 * woke nobody means none was asleep then; one that goes to sleep after it
 * loaded the word either after the bump (and so sees the record, W5
 * before the bump) or before it (and so FUTEX_WAIT sees the word changed,
 * unless it is past the bump and asleep: then the wake would have found
 * it).  Any sleep that begins after the writer's skip has loaded the count
 * after [D1] [D2], and is capped.  A writer whose wake woke someone wakes
 * at every append again.  So a reader costs writers at most one system
 * call per WAKE_QUIET_NS each, and a follower that was busy when the last
 * records came sees them at most WAKE_QUIET_NS late.
 *
 * DURABILITY
 *
 * By default a record is in the page cache when append returns: it
 * survives the death of any process, not a power cut before writeback.
 * With KMSG_OPEN_SYNC append msyncs the record and the header before it
 * returns.  In both modes a power cut leaves a file that opens: the header
 * is rebuilt from the records when it is inconsistent, damaged records are
 * skipped and counted.  A rebuild may hand out again numbers that were
 * lost, so each renews the numbering's identity (log.c, THE NUMBERING'S
 * IDENTITY): a position is an identity and a number.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>


static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

static void take_over(struct kmsg_log *log)
{
	atomic_fetch_add_explicit(&log->hdr->takeovers, 1, memory_order_relaxed);
	kmsg__ring_recover_locked(log);
}

/*
 * Takes the append lock.  Spins briefly (an append holds it for well under
 * a microsecond), then checks whether the holder is alive: a dead holder's
 * lock is taken over at once; a live one is waited for, yielding and then
 * sleeping, up to log->lock_wait_ns, then KMSG_EBUSY.
 */
int kmsg__ring_lock(struct kmsg_log *log)
{
	_Atomic uint64_t *lock = &log->hdr->lock;
	uint64_t me = log->writer_id, cur = 0;
	int64_t start = 0;

	for (unsigned spins = 0;; spins++) {
		cur = atomic_load_explicit(lock, memory_order_relaxed);
		if (cur == 0) {
			if (atomic_compare_exchange_weak_explicit(lock, &cur, me,
					memory_order_acquire, memory_order_relaxed))
				return 0;
			continue;
		}
		if (spins < 200) {
			/* Back off a little more each time: a spinner that
			 * re-reads the lock word at once steals the cache line
			 * from the holder, which needs it to finish. */
			for (unsigned k = 0; k < (1u << (spins < 6 ? spins : 6)); k++)
				cpu_relax();
			continue;
		}
		/* cur == me is another thread on this handle: alive by
		 * definition (and the kernel would not report our own lock). */
		if (cur != me && !kmsg__log_owner_alive(log, cur)) {
			if (atomic_compare_exchange_strong_explicit(lock, &cur, me,
					memory_order_acquire, memory_order_relaxed)) {
				take_over(log);
				return 0;
			}
			continue;
		}
		int64_t now = kmsg__clock_ns(CLOCK_MONOTONIC);
		if (!start)
			start = now;
		else if (now - start > log->lock_wait_ns)
			return KMSG_EBUSY;
		if (now - start < 1000000) {
			sched_yield();
		} else {
			struct timespec ts = { 0, 100000 };
			nanosleep(&ts, NULL);
		}
		spins = 150;  /* spin a little between liveness checks */
	}
}

void kmsg__ring_unlock(struct kmsg_log *log)
{
	atomic_store_explicit(&log->hdr->lock, 0, memory_order_release);
}

/*
 * Completes the steps a dead writer may have left undone: publishes every
 * record (and pad) committed at tail but not yet published.  A committed
 * record is recognised by its position field, its sequence number (next_seq,
 * or next_seq - 1 when W4 was done and W5 not) and its checksum.
 */
void kmsg__ring_recover_locked(struct kmsg_log *log)
{
	struct kmsg_hdr *h = log->hdr;
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t next = atomic_load_explicit(&h->next_seq, memory_order_relaxed);
	uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);

	for (;;) {
		uint64_t pos = ring_norm(log, tail), len;
		struct rec_hdr hd;
		const struct rec_hdr *r = &hd;

		if (pos + REC_HDR - head > log->data_size)
			break;  /* would run into the oldest record */
		len = kmsg__rec_check(log, pos, &hd);
		if (!len)
			break;
		/* seq + 1 == next: the writer died between W4 and W5.  No
		 * older record can sit at tail with that number, because a
		 * record is shorter than the ring. */
		if (r->flags & REC_PAD) {
			if (r->seq != next && r->seq + 1 != next)
				break;
		} else if (r->seq == next) {
			next++;
		} else if (r->seq + 1 != next) {
			break;
		}
		if (pos + len - head > log->data_size)
			break;
		tail = pos + len;
		atomic_store_explicit(&h->next_seq, next, memory_order_relaxed);
		atomic_store_explicit(&h->tail, tail, memory_order_release);
	}
}

/*
 * W1: frees room so that [tail, end) fits within one ring length of head.
 * A record at head that does not check out (damage) is stepped over in
 * 8-byte steps until a valid record or tail is reached, counted once.
 */
static void evict_until(struct kmsg_log *log, uint64_t end)
{
	struct kmsg_hdr *h = log->hdr;
	const uint64_t D = log->data_size;
	uint64_t head = atomic_load_explicit(&h->head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&h->tail, memory_order_relaxed);
	uint64_t evicted = 0, damaged = 0, phys;
	int in_damage = 0;

	if (end - head <= D)
		return;
	phys = ring_phys_near(log, &log->head_at, &log->head_phys, head);
	while (end - head > D) {
		uint64_t len;
		if (D - phys < REC_HDR) {
			head += D - phys;  /* the short remainder of a lap */
			phys = 0;
			continue;
		}
		if (head >= tail) {
			head = tail;
			break;
		}
		/* The record is going: its header tells how far to skip, its
		 * checksum does not matter (and would double the cost). */
		len = kmsg__rec_header_at(log, head, phys, log->data + phys);
		if (len) {
			if (!(((const struct rec_hdr *)(log->data + phys))->flags & REC_PAD))
				evicted++;
			in_damage = 0;
		} else {
			if (!in_damage)
				damaged++;
			in_damage = 1;
			len = REC_ALIGN;
		}
		head += len;
		phys += len;
		if (phys == D)
			phys = 0;
	}
	if (head > tail)
		head = tail;
	atomic_store_explicit(&h->head, head, memory_order_relaxed);
	/* No byte of an evicted record may change before readers can see
	 * that it was evicted (pairs with the readers' fence-then-load):
	 * a release fence orders this store before the stores that follow. */
	atomic_thread_fence(memory_order_release);
	/* Under the lock: plain stores, no locked instruction on the hot line. */
	if (evicted)
		atomic_store_explicit(&h->evicted, evicted +
			atomic_load_explicit(&h->evicted, memory_order_relaxed), memory_order_relaxed);
	if (damaged)
		atomic_store_explicit(&h->damaged, damaged +
			atomic_load_explicit(&h->damaged, memory_order_relaxed), memory_order_relaxed);
}

/* Writes a pad record at pos that fills the lap to its end, committed. */
static void write_pad(struct kmsg_log *log, uint64_t pos, uint64_t phys, uint64_t seq)
{
	struct rec_hdr *r = (void *)(log->data + phys);
	struct rec_hdr pad;

	kmsg__rec_pad(&pad, pos, seq, (uint32_t)(log->data_size - phys));
	memcpy((unsigned char *)r + 16, (unsigned char *)&pad + 16, REC_HDR - 16);
	memcpy(r, &pad, 8);
	__atomic_store_n(&r->seq, seq, __ATOMIC_RELEASE);
}

/*
 * A record's two timestamps from one clock read.  Reading CLOCK_REALTIME
 * and CLOCK_BOOTTIME costs two vDSO calls, a third of an append.  Their
 * difference changes only when the wall clock is stepped (both run at the
 * same rate, and both advance across suspend), so each thread re-reads it
 * every WALL_REFRESH_NS and otherwise adds it to CLOCK_BOOTTIME.  A step
 * of the wall clock shows in records at most that long after it happened.
 */
#define WALL_REFRESH_NS 1000000

static __thread int64_t wall_offset, wall_until;

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

static int check_fields(size_t *total, const struct kmsg_entry *e)
{
	size_t sum = 0;
	for (size_t i = 0; i < e->nfields; i++) {
		const struct kmsg_field *f = &e->fields[i];
		size_t kl;
		if (!f->key || (!f->value && f->value_len))
			return KMSG_EINVAL;
		kl = f->key_len ? f->key_len : strlen(f->key);
		if (!kmsg_key_valid(f->key, kl))
			return KMSG_EFIELD;
		/* each term bounded first: a caller's lengths near SIZE_MAX
		 * must not wrap the sum into a small one */
		if (kl > KMSG_MAX_FIELDS_BYTES || f->value_len > KMSG_MAX_FIELDS_BYTES)
			return KMSG_EFIELD;
		sum += 2 + kl + 1 + f->value_len;
		if (sum > KMSG_MAX_FIELDS_BYTES)
			return KMSG_EFIELD;
	}
	*total = sum;
	return 0;
}

static void put_fields(unsigned char *p, const struct kmsg_entry *e)
{
	for (size_t i = 0; i < e->nfields; i++) {
		const struct kmsg_field *f = &e->fields[i];
		size_t kl = f->key_len ? f->key_len : strlen(f->key);
		uint16_t l = (uint16_t)(kl + 1 + f->value_len);
		memcpy(p, &l, 2);
		memcpy(p + 2, f->key, kl);
		p[2 + kl] = '=';
		if (f->value_len)
			memcpy(p + 3 + kl, f->value, f->value_len);
		p += 2 + l;
	}
}

/* Wakes every follower asleep on word; returns how many there were. */
static long futex_wake_all(_Atomic uint32_t *word)
{
	return syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* msync wants page-aligned start addresses. */
static void sync_range(const void *addr, size_t len)
{
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr & ~(page - 1);
	msync((void *)a, len + ((uintptr_t)addr - a), MS_SYNC);
}

int kmsg_log_append(uint64_t *seq_out, struct kmsg_log *log,
		    const struct kmsg_entry *e)
{
	/* The whole record is built here, outside the lock: the locked part
	 * is eviction, one memcpy and a few stores.  Records of the default
	 * size are built on the stack, larger ones on the heap. */
	unsigned char small[REC_HDR + KMSG_DEFAULT_MAX_TEXT + KMSG_MAX_FIELDS_BYTES]
		__attribute__((aligned(8)));
	unsigned char *buf = small;
	struct rec_hdr *r;
	struct kmsg_hdr *h;
	size_t fields_len = 0;
	uint64_t len, pos, seq, phys;
	uint32_t body_crc;
	int err;

	if (!log || !e || e->version != KMSG_ENTRY_VERSION ||
	    (e->flags & ~(unsigned)(KMSG_FRAGMENT | KMSG_BEGIN | KMSG_TIMES)) ||
	    (!e->text && e->text_len) || (!e->fields && e->nfields))
		return KMSG_EINVAL;
	if (!(log->flags & KMSG_OPEN_WRITE))
		return KMSG_ERDONLY;
	if (e->facility < 0 || e->facility >= KMSG_NFACILITIES ||
	    e->level < 0 || e->level > 7)
		return KMSG_EPRIO;
	if (e->text_len > log->max_text)
		return KMSG_ETOOLONG;
	err = check_fields(&fields_len, e);
	if (err)
		return err;
	len = rec_size(e->text_len, fields_len);
	if (len > log->max_rec)
		return KMSG_ETOOLONG;
	err = kmsg__log_writer_ready(log);
	if (err)
		return err;
	if (len > sizeof(small) && !(buf = malloc(len)))
		return -ENOMEM;
	r = (void *)buf;

	memset(buf, 0, REC_HDR);
	r->len = (uint32_t)len;
	r->magic = REC_MAGIC;
	if (e->flags & KMSG_TIMES) {
		r->real_ns = e->real_ns;
		r->boot_ns = e->boot_ns;
	} else {
		now_times(&r->real_ns, &r->boot_ns);
	}
	r->boot_id = log->boot_id;
	r->pid = e->pid ? e->pid : log->pid;
	r->caller = e->caller ? e->caller : kmsg__log_tid();
	r->text_len = (uint16_t)e->text_len;
	r->fields_len = (uint16_t)fields_len;
	r->prio = (uint8_t)(e->facility << 3 | e->level);
	r->flags = (e->flags & KMSG_FRAGMENT ? REC_FRAGMENT : 0) |
		   (e->flags & KMSG_BEGIN ? REC_BEGIN : 0);
	if (e->text_len)
		memcpy(buf + REC_HDR, e->text, e->text_len);
	put_fields(buf + REC_HDR + e->text_len, e);
	memset(buf + REC_HDR + e->text_len + fields_len, 0,
	       len - (REC_HDR + e->text_len + fields_len));
	body_crc = kmsg__rec_crc_body(buf, (uint32_t)len);

	err = kmsg__ring_lock(log);
	if (err)
		goto out;
	h = log->hdr;
	seq = atomic_load_explicit(&h->next_seq, memory_order_relaxed);
	if (seq == UINT64_MAX) {
		kmsg__ring_unlock(log);
		err = KMSG_ESEQ;
		goto out;
	}
	pos = atomic_load_explicit(&h->tail, memory_order_relaxed);
	if (pos > (UINT64_C(1) << 62)) {
		kmsg__ring_unlock(log);
		err = KMSG_ESEQ;
		goto out;
	}
	phys = ring_phys_near(log, &log->tail_at, &log->tail_phys, pos);
	if (log->data_size - phys < len) {
		/* W2: the record does not fit before the end: next lap. */
		uint64_t lap = pos + (log->data_size - phys);
		evict_until(log, lap + len);
		if (log->data_size - phys >= REC_HDR)
			write_pad(log, pos, phys, seq);
		pos = lap;
		phys = 0;
	} else {
		evict_until(log, pos + len);
	}
	/* W3: everything but seq, then seq as the commit. */
	r->pos = pos;
	r->crc = kmsg__rec_crc_finish(body_crc, seq, pos, (uint32_t)len);
	{
		unsigned char *dst = log->data + phys;
		/* len and crc from registers: reloading the two 4-byte
		 * stores as one 8-byte word would stall store forwarding. */
		uint64_t len_crc = len | (uint64_t)r->crc << 32;
		memcpy(dst + 16, buf + 16, len - 16);
		memcpy(dst, &len_crc, 8);
		__atomic_store_n(&((struct rec_hdr *)dst)->seq, seq, __ATOMIC_RELEASE);
	}
	atomic_store_explicit(&h->next_seq, seq + 1, memory_order_relaxed);  /* W4 */
	atomic_store_explicit(&h->tail, pos + len, memory_order_release);     /* W5 */
	kmsg__ring_unlock(log);                                                      /* W6 */

	if (log->flags & KMSG_OPEN_SYNC) {
		sync_range(log->data + phys, len);
		sync_range(h, HDR_SIZE);
	}
	/* Followers: probe now and then; wake only when one exists. */
	{
		int64_t now = e->flags & KMSG_TIMES ? kmsg__clock_ns(CLOCK_BOOTTIME) : r->boot_ns;
		int64_t next = atomic_load_explicit(&log->next_probe_ns, memory_order_relaxed);
		if (now >= next || now < next - FOLLOWER_PROBE_NS) {
			atomic_store_explicit(&log->next_probe_ns, now + FOLLOWER_PROBE_NS,
					      memory_order_relaxed);
			atomic_store_explicit(&log->followers, kmsg__log_followers_present(log),
					      memory_order_relaxed);
		}
	}
	if (atomic_load_explicit(&log->followers, memory_order_relaxed)) {
		int64_t now = e->flags & KMSG_TIMES ? kmsg__clock_ns(CLOCK_BOOTTIME) : r->boot_ns;
		int64_t quiet = atomic_load_explicit(&log->quiet_until_ns, memory_order_relaxed);

		atomic_fetch_add_explicit(&h->wake, 1, memory_order_seq_cst);
		/* WAKING FOLLOWERS: no system call while a wake woke nobody */
		if (now >= quiet || now < quiet - WAKE_QUIET_NS) {
			if (futex_wake_all(&h->wake) == 0) {
				atomic_fetch_add_explicit(&h->deferrals, 1,
							  memory_order_seq_cst);       /* D1 */
				quiet = now + WAKE_QUIET_NS;
			} else {
				quiet = 0;
			}
			atomic_store_explicit(&log->quiet_until_ns, quiet, memory_order_relaxed);
		}
	}
	if (seq_out)
		*seq_out = seq;
out:
	if (buf != small)
		free(buf);
	return err;
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
	struct kmsg_hdr *h;
	uint64_t cur, next;

	if (!log)
		return KMSG_EINVAL;
	if (!(log->flags & KMSG_OPEN_WRITE))
		return KMSG_ERDONLY;
	h = log->hdr;
	next = atomic_load(&h->next_seq);
	if (seq > next)
		seq = next;
	cur = atomic_load(&h->clear_seq);
	while (cur < seq &&
	       !atomic_compare_exchange_weak(&h->clear_seq, &cur, seq))
		;
	if (log->flags & KMSG_OPEN_SYNC)
		sync_range(h, HDR_SIZE);
	return 0;
}
