/*
 * ring.c - the ring: reserving room for a record, evicting the oldest
 * blocks, passing writers that stopped or died in the middle of an
 * append, entering a new boot, and the numbering's identity.
 *
 * OVERVIEW
 *
 * The file (layout.h, kmsg(5)) is a static header, the dynamic words, a
 * data area of D bytes used as a ring, an auxiliary area and a copy of
 * the static header.  Positions are logical 64-bit byte counts that only
 * grow; position p lies at data offset p % D.
 *
 * BLOCKS
 *
 * The ring is a run of blocks, back to back.  A block is a record (a
 * 64-byte header, the text, the fields, zero padding to 8 bytes) or a pad
 * (a header alone, whose length says where the next block starts).  A
 * reservation is one record and at most one pad before it; it takes one
 * sequence number, which its pad carries too, so numbers grow by one
 * from reservation to reservation along the positions.  A record never
 * crosses the end of the data area; a pad may.  Fewer than 64 bytes left
 * at the end of a lap hold no block: everyone steps over them.
 *
 *	head, head_seq   the oldest block not evicted, and its number
 *	resv             where the next reservation begins, the number it
 *	                 gets, and the owner of the newest one (16 bytes)
 *	pass_to          how far evictors passed blocks that had no header
 *
 *	head <= resv.pos <= head + D - 64, and [head, resv.pos) is blocks.
 *
 * BLOCK STATES
 *
 * A block's tag (header bytes 16..23) is its own position with a state
 * in the low three bits.  Bytes not tagged with the position they lie at
 * are not (yet) a block's header: the tag is what makes a block known.
 *
 *	unmarked    reserved, header not written (or never: its writer died,
 *	            or a power cut lost it)
 *	RESERVED    header complete, text and fields on their way
 *	COMMITTED   complete; the tag's last change
 *	HOLE        given up by an evictor before its commit
 *	RELEASED    given up, and its writer has let go of it
 *
 * A record of the first format is a committed block.
 *
 * The first block of a log, at position 0, starts with the tag a new
 * file holds, 0, which reads as committed at 0 before its writer has
 * marked it.  There alone a tag of 0 is taken for committed only if the
 * block is whole: its checksum loaded (acquire) before the rest is right
 * and the tag is still 0 after, which, as the checksum is stored after
 * the mark (W6 after M1), is the commit; otherwise the block is
 * unmarked (kmsg__ring_first_committed()).  A reader that took it for
 * damage would skip the first record of a new log, and an evictor would
 * pass its stalled writer without a quarantine.
 *
 * WRITER STEPS (append.c and the functions below)
 *
 *	W1  build: check the entry, measure the record, read the clock.
 *	W2  place: load resv [A2]; find where the record goes, after a pad
 *	    over the end of the lap or over quarantined stretches, and so
 *	    where the reservation ends.
 *	W3  evict until head >= end - D + 64 (EVICTION).
 *	W4  reserve: resv from (pos, seq, prev) to (end, seq + 1, me) by one
 *	    16-byte compare-and-swap [A1]; if it fails, W2 again.
 *	W5  mark: store the header but its tag and checksum, then exchange
 *	    the tag to pos|RESERVED [M1] (a pad is stored whole and tagged
 *	    committed the same way, first); then load pass_to [M2]: past the
 *	    block means an evictor passed it while it had no tag: release it
 *	    and go back to W2.
 *	W6  copy the text and fields, summing the checksum; store it
 *	    (release: an untagged block whose checksum is right is damage
 *	    only if its tag is the same after the checksum is loaded [D1,
 *	    D2], tag_damaged()).
 *	W7  commit: tag from RESERVED to COMMITTED by compare-and-swap [C1];
 *	    if it fails an evictor made it a HOLE: release it, back to W2.
 *	W8  wake followers (wake.c).
 *
 * A writer stores only inside its own reservation, and changes shared
 * words only by compare-and-swap from values it read: one that stops
 * anywhere and resumes much later cannot move shared state backwards,
 * and nobody else writes where it may still write (QUARANTINE).  So no
 * writer waits for another, but for the bound below, once.
 *
 * EVICTION
 *
 * An evictor walks from head.  A committed block is passed by its length
 * (counted as evicted if it is a record), a HOLE or RELEASED one too.  An
 * unfinished block (RESERVED, or unmarked below resv) is waited for, at
 * most STALL_NS from when any writer first saw it there (stall_pos,
 * stall_since), unless its writer is dead; then it is passed as a hole:
 *
 *	RESERVED  tag to HOLE by compare-and-swap [C2]: exactly one of C1
 *	          and C2 succeeds, so the block is a record or a hole, never
 *	          a record its writer was told failed, or the reverse.
 *	unmarked  the stretch up to the next tagged block (or resv) is
 *	          passed: pass_to is raised past it [E1], then the stretch
 *	          is looked at again for tags [E2], and a tag found is
 *	          handled as above.  M1-M2 and E1-E2 are both sequentially
 *	          consistent (a Dekker pair): the evictor sees the tag, or
 *	          the writer sees pass_to, or both; either way a hole.
 *
 * Head and head_seq then move by one 16-byte compare-and-swap [H1].
 * Evictors run log->batch bytes ahead of need, so that head moves once a
 * batch, not at every append.
 *
 * STALLED WRITERS AND QUARANTINE
 *
 * A writer stopped (SIGSTOP, a debugger, a cgroup freezer) with a block
 * reserved is passed as above, but it may resume at any time and write
 * the rest of its block before it learns that it was passed.  So the
 * stretch it may still write is quarantined: an entry in the auxiliary
 * area's table, written before head passes it [Q1, before H1].  A
 * reservation in a later lap steps over a quarantined stretch with a pad
 * and never ends within 64 bytes before one, so that the pad always has
 * room.  No reservation placed before an entry existed can reach its
 * stretch: until head passes the stalled block every reservation ends
 * 64 bytes before the block's next lap (W3), and a writer loads head
 * (acquire) before the table [Q2]; every change to the table bumps qgen
 * before that H1, so a thread may reuse the table as it loaded it at the
 * same qgen (qlist_load()).  An entry is lifted once every writer
 * it waits for is done (its block committed or released) or dead, and at
 * the next boot; and at once if its stretch holds a block of a later lap,
 * which no reservation can have put there since: the entry was made from
 * a stale look (an evictor descheduled between its check of head and its
 * entry).  A dead writer (its lock gone, or of an earlier boot)
 * needs no entry: it is passed at once.  With the table full a stalled
 * stretch is passed without an entry; a writer resuming in it writes
 * into a block of a later lap, which its tag and checksum then show as
 * damaged.  That takes more than NQUAR writers stopped mid-append.
 *
 * Each writer handle holds an OFD write lock on bytes of its owner id
 * (writer.c); the kernel drops it when the process dies.  A reader can
 * take read locks only, which the liveness test does not count, so it
 * can neither fake a live writer nor hide one.  A dead writer's last
 * stores come before its lock goes, and the kernel's own locking orders
 * that release before a test that finds the lock gone; so such a test
 * loads the block's tag once more [L1]: a block its writer marked or
 * committed after the first look, and then died (an emit that finished
 * and exited while a reader was descheduled), is looked at again, not
 * taken for a hole.  An unmarked block's writer is known from the
 * reservation after it (its prev_owner and boot, which a pad names as a
 * record does; resv's owner for the newest),
 * which names the stretch's first writer only if the stretch is one
 * reservation: the numbers tell (one missing before the next); else any
 * live writer may be its writer.
 *
 * READER CHECKS (iter.c; no lock; no store to the mapping, but that a
 * reader whose handle may write passes a stalled block as a writer would)
 *
 *	R1  load resv (its number half, the position half, the number half
 *	    again: equal halves mean one state) and head.
 *	R2  at a position below resv, load the tag (acquire, pairs with C1
 *	    and M1).  Committed: copy the block, then an acquire fence and
 *	    load head [H2]: head past the block means a writer may have
 *	    overwritten it while it was copied (pairs with H1, which comes
 *	    before W4 and every store of a new block), so the copy is
 *	    discarded and the reader was overtaken.
 *	B1  (instead of R2's loads, where the end is far and head is not
 *	    near) copy the blocks
 *	    ahead with pread, twice, a full fence between the two copies: a
 *	    block the first copy shows committed was committed (C1) before
 *	    the fence, so before the second copy loaded any of its bytes,
 *	    and the second copy holds it as its writer left it (the fence
 *	    after the load that saw C1 is the acquire).  That second copy is
 *	    then the reader's copy, checked by R3 as in R2, and by H2 once
 *	    for the whole copy: head loaded just after it (acquire fence)
 *	    not past a block means nobody wrote over it while it was copied,
 *	    however long the reader takes to reach it afterwards.  A block
 *	    the first copy does not show committed, or that either copy
 *	    does not hold whole, is read as in R2.  (One copy would not do:
 *	    the kernel's copy may load a block's bytes in any order, so
 *	    could see its commit and not its text.)  A pread needs no page
 *	    table entry for the pages it copies, which a read of a whole
 *	    large log through the mapping spends much of its time making.
 *	R3  check the length, tag and checksum: a block that fails is
 *	    damaged, and the reader goes on at the next block whose number
 *	    follows.
 *	R4  unfinished: wait as an evictor does (at most STALL_NS; a reader
 *	    that may not write, READ_STALL_NS; not at all for a dead writer,
 *	    after L1), then step over it as a hole.
 *	R5  numbers missing between two records are reported: lost (the
 *	    reader was overtaken, or a writer never finished) or damaged.
 *
 * TIME ORDER
 *
 * A seek by time bisects, which needs records in order of their wall
 * times.  They nearly are, since a writer reads the clock before it
 * reserves (W1); times go back when the wall clock is stepped back, when
 * a writer stops between reading it and reserving, when a passed writer
 * appends again with its first times, and when a caller gives its own.
 * Writers keep three words in the auxiliary area, all read by every
 * append and written rarely:
 *
 *	wall_mark    a wall time, TIME_SLACK_NS (S) below one a record had,
 *	             even; its low bit (PENDING) marks a lowering that
 *	             time_break does not cover yet; 0: unset (a new log, a
 *	             zeroed area)
 *	lowered      bumped at every lowering
 *	time_break   records that begin below it may be out of order
 *
 *	T1  before W4: load lowered (acquire), then wall_mark; if the
 *	    record's time t is more than 2S past the mark, raise it to
 *	    t - S by compare-and-swap, keeping PENDING (once an S at most
 *	    while the clock runs).  An unset mark is set with PENDING.
 *	T2  after W5: load lowered and wall_mark (sequentially consistent,
 *	    as W4 and M1 before them).  PENDING set: T3.  t below the mark
 *	    (or none): set it to t - S with PENDING, then T3.  lowered
 *	    changed since T1, or t more than 2S past the mark (lowered
 *	    since T1): T4.  All before the commit (C1).
 *	T3  complete a lowering: bump lowered, T4, clear PENDING by
 *	    compare-and-swap from the value it completed (else again).  Any
 *	    writer that sees PENDING does it: the lowering's writer may have
 *	    died or stopped.
 *	T4  load resv (sequentially consistent) and raise time_break to
 *	    its position: past every block reserved before.
 *
 * Claim: of two committed records that begin at or above time_break (as
 * a reader loads it after seeing both), E before R, t_E <= t_R + 2S.
 * After E's T1 the mark is >= t_E - 2S.  Take a lowering L of the mark
 * between E's T1 and R's T2.  R's T2 sees L's value or a later one; had
 * it PENDING, R would have covered itself (T3), so L was completed, by a
 * T3 that bumped lowered and loaded resv after L and before R's T2
 * loaded the mark.  If that load came after E's W4, time_break passes E.
 * If before, the bump came before E's W4 too: E's T1 loaded lowered
 * before it (or it saw L's value, which is no lowering after its T1),
 * and E's T2 after it, so E covered itself (T4).  So no lowering lies
 * between E's T1 and R's T2, R loads a mark >= t_E - 2S, and t_R >= it.
 *
 * So a seek by time reads from the oldest record up to time_break (all
 * of it while the mark is unset or PENDING), and bisects the rest for a
 * time 2S before the one asked for; a reader looks again if time_break
 * or the bit changed while it bisected (T2-T4 come before C1, which it
 * loaded).  A record still being appended when the seek looks, before
 * where it starts, is not seen by it.
 *
 * DURABILITY
 *
 * By default a record is in the page cache when append returns: it
 * survives the death of any process, not a power cut before writeback.
 * With KMSG_OPEN_SYNC append msyncs the record and the header words
 * before it returns.  In both modes a power cut leaves a file that opens
 * (ENTERING A BOOT).
 *
 * ENTERING A BOOT
 *
 * The dynamic state belongs to the boot in aux.boot_id.  A writer that
 * finds another boot there (the first after a reboot, or after a
 * rebuild) brings the state into its own before it reserves: the
 * numbering's identity is renewed, then records the header page did not
 * know of (written back after it, before a power cut) are taken in by
 * walking from resv, at most RECOVER_WALK of them, and the boot word is
 * set.  Every step is idempotent or a compare-and-swap from what was
 * read, so writers that arrive together all do it and none waits for
 * another.  The walk's end goes into resv with no owner (the old boot's
 * are dead), but not once the gate is open: a writer of this boot may
 * have reserved by then, and its id must stay (B1: it opens the gate
 * before it reserves; the walk loads resv, then the gate).  A block an
 * earlier boot's writer marked but never committed is a hole (its
 * writer is dead); an unmarked stretch of an earlier boot is counted as
 * damaged, since nothing tells how many appends it was.  A header that
 * fails its checks is rebuilt from the records by the writer that opens
 * the log (one scan).
 *
 * A LYING HEADER
 *
 * Every writer of a shared log (every member of its group) may store
 * anything in the dynamic words and the auxiliary area at any time, and
 * a writer that has had the log open for long trusts them no more than
 * one that opens it now.  So no walk is longer than the ring:
 *
 *	- an evictor takes head and resv from one look (head, resv, head
 *	  again: the same head, aligned, at most resv and at most D - 64
 *	  behind it, as W3 keeps them), and walks no further than that resv,
 *	  at most D / 8 steps; each lap looks again, and laps that move
 *	  nothing for EVICT_NS (twenty STALL_NS) end it;
 *	- W2 takes a resv off the 8-byte grid, or with a number more than
 *	  its position allows (each number takes 64 bytes at least, so
 *	  numbers never run out before positions), or a head outside
 *	  [end + 64 - D, resv], for such a look too; so does a writer whose
 *	  reservations are passed again and again (pass_to past resv makes
 *	  every mark look passed); a rebuild takes no record whose number
 *	  its position does not allow for the newest;
 *	- a reader's window puts head at most a ring behind resv (R1), and
 *	  every scan for a mark or a record ends within a ring of its start;
 *	  entering a boot takes in at most RECOVER_WALK records.
 *
 * A writer that meets such a look checks the words as an opening writer
 * does (two equal readings that fail, kmsg__ring_sane()), rebuilds them
 * from the records if they fail (one scan of the data), enters its boot
 * again, and goes on with its append; at the LIES_MAX-th look in one
 * append it fails with KMSG_ECORRUPT.  The checks cost the fast path a
 * test of resv's grid, no more: head's range and the number's bound are
 * one compare each, in place of the tests for eviction and for the end
 * of the numbers; the rest runs only in the slow path, or once a walk
 * has gone past its length.  What a liar can still do is what a store
 * into the file can: send records where readers do not look until the
 * next repair, evict or damage records, and make appends fail while it
 * goes on lying; the checksum finds torn and scribbled records, but it
 * is no seal against a forged one.
 *
 * THE NUMBERING'S IDENTITY
 *
 * A sequence number names a record only together with the numbering it
 * was given in.  Within a boot numbers never repeat.  A power cut can
 * lose the last numbers handed out (their records and the header's words
 * never reached the disk) and a writer then hands them out again; so the
 * identity is renewed whenever a writer enters a boot: a new 64-bit id,
 * valid from the number resv had (since).  Records below that number
 * keep their numbers, and under the new id they mean what they meant
 * under the old.  The two identities before it are kept, so that a
 * consumer's position (id, seq) resolves:
 *
 *	id == current                  seq names the same record
 *	id == prev,  seq < since       the same record
 *	id == prev2, seq < both sinces the same record
 *	otherwise                      renumbered: what was there is lost
 *
 * The identities live in two slots; id_slot says which is current.  A
 * renewal writes the other slot whole, from the current one and resv, and
 * then switches id_slot by compare-and-swap [N1]; a reader loads id_slot,
 * the slot, and id_slot again [N2].  The new id is derived from the old
 * one, the boot id and the ring id alone, so writers renewing at once
 * write the same bytes.  A log of the first format has the identity of
 * its header (log.c of that release), or an implicit one from its ring id.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* At most this many records are taken in when entering a boot. */
#define RECOVER_WALK 65536

/* An eviction that moves nothing for this long meets a header that lies
 * (LYING HEADER): stalled blocks hold it up STALL_NS each, far less. */
#define EVICT_NS (100 * 1000 * 1000)

/* A writer that meets such a header looks at it (and repairs it) at most
 * this many times in one append before it gives up with KMSG_ECORRUPT;
 * evictions that leave head short, lap after lap, count as one. */
#define LIES_MAX 3
#define SHORT_EVICTS_MAX 256

/* ---- time order (TIME ORDER) -------------------------------------------- */

/* t - S as a mark: even (the low bit is MARK_PENDING), never the unset 0. */
static int64_t mark_of(int64_t t)
{
	int64_t m = t < INT64_MIN + TIME_SLACK_NS ? INT64_MIN : t - TIME_SLACK_NS;

	m &= ~(int64_t)MARK_PENDING;
	return m ? m : -2;
}

/* time_break to at least where the next reservation begins now [T4]. */
static void cover_reserved(struct kmsg_log *log)
{
	_Atomic uint64_t *tb = &log->aux->time_break;
	uint64_t end = atomic_load_explicit(&log->dyn->resv_pos, memory_order_seq_cst);
	uint64_t cur = atomic_load_explicit(tb, memory_order_relaxed);

	while (cur < end &&
	       !atomic_compare_exchange_weak_explicit(tb, &cur, end, memory_order_seq_cst,
						      memory_order_relaxed))
		;
}

/*
 * T3: completes the lowering pending in the mark m: bumps lowered, covers
 * what is reserved, and clears the bit (any writer may, and the first
 * that sees the bit does: the lowering's writer may have died).
 */
static void complete_lowering(struct kmsg_log *log, int64_t m)
{
	_Atomic int64_t *mark = &log->aux->wall_mark;

	while (m & MARK_PENDING) {
		atomic_fetch_add_explicit(&log->aux->lowered, 1, memory_order_seq_cst);
		cover_reserved(log);
		if (atomic_compare_exchange_strong_explicit(mark, &m, m & ~(int64_t)MARK_PENDING,
							    memory_order_seq_cst,
							    memory_order_seq_cst))
			return;
	}
}

void kmsg__time_raise(struct kmsg_log *log, int64_t real_ns)
{
	_Atomic int64_t *mark = &log->aux->wall_mark;
	int64_t cur = atomic_load_explicit(mark, memory_order_relaxed);

	/* A pending lowering stays pending; an unset mark is set as a
	 * lowering, so that the records from before it are covered. */
	while ((cur == 0 || time_ahead(real_ns, cur)) &&
	       !atomic_compare_exchange_weak_explicit(mark, &cur,
						      mark_of(real_ns) |
						      (cur ? cur & MARK_PENDING : MARK_PENDING),
						      memory_order_seq_cst, memory_order_relaxed))
		;
}

void kmsg__time_break(struct kmsg_log *log, int64_t real_ns, int64_t m)
{
	_Atomic int64_t *mark = &log->aux->wall_mark;

	/* Below the mark (or none): this record lowers it, and the writers
	 * after it, reading the clock it read, then do not break. */
	while (!(m & MARK_PENDING) && (m == 0 || real_ns < m)) {
		if (atomic_compare_exchange_weak_explicit(mark, &m, mark_of(real_ns) | MARK_PENDING,
							  memory_order_seq_cst,
							  memory_order_seq_cst)) {
			m = mark_of(real_ns) | MARK_PENDING;
			break;
		}
	}
	if (m & MARK_PENDING)
		complete_lowering(log, m);
	else
		cover_reserved(log);  /* far above it, or it was lowered since T1 */
}

/* ---- small helpers ------------------------------------------------------ */

/* The remembered offset of kmsg__ring_phys() (internal.h), per thread. */
KMSG_TLS struct kmsg__phys_cache kmsg__phys_cache;

/*
 * A pair of words a 16-byte compare-and-swap changes together, as one
 * state [R1]: every change of the pair changes word a (the number half of
 * resv; head's position), so two equal loads of a around the load of b
 * saw no change between them.  A hostile file may change them for ever:
 * after a few tries what was read is as good as any.
 */
static void pair_load(const _Atomic uint64_t *a, const _Atomic uint64_t *b,
		      uint64_t *va, uint64_t *vb)
{
	for (int tries = 0;; tries++) {
		uint64_t a1 = atomic_load_explicit(a, memory_order_acquire);
		uint64_t v = atomic_load_explicit(b, memory_order_acquire);
		uint64_t a2 = atomic_load_explicit(a, memory_order_acquire);
		if (a1 == a2 || tries == 8) {
			*va = a2;
			*vb = v;
			return;
		}
	}
}

static void resv_load(const struct kmsg_log *log, uint64_t *pos, uint64_t *sw)
{
	pair_load(&log->dyn->resv_seq, &log->dyn->resv_pos, sw, pos);
}

static void head_load(const struct kmsg_log *log, uint64_t *pos, uint64_t *seq)
{
	pair_load(&log->dyn->head, &log->dyn->head_seq, pos, seq);
}

static uint64_t load_tag(const struct kmsg_log *log, uint64_t phys)
{
	return __atomic_load_n(&ring_block(log, phys)->tag, __ATOMIC_ACQUIRE);
}

/* ---- windows ------------------------------------------------------------ */

/*
 * A format-1 log's end: the tail, and the number the record there will
 * have.  Its writers stored next_seq before tail, so once tail is loaded
 * (acquire) next_seq is at least one past the last published record,
 * and one more when a writer is between the two stores (or died there):
 * its record then sits committed at tail with the number next_seq - 1.
 */
static int window_v1(const struct kmsg_log *log, struct window *w)
{
	const struct kmsg_dyn_v1 *d = log->dyn1;

	for (int attempt = 0;; attempt++) {
		uint64_t t = atomic_load_explicit(&d->tail, memory_order_acquire);
		uint64_t hd = atomic_load_explicit(&d->head, memory_order_acquire);
		uint64_t next = atomic_load_explicit(&d->next_seq, memory_order_acquire);
		struct rec_hdr r;

		if (t % REC_ALIGN || t >= POS_LIMIT)
			return KMSG_ECORRUPT;
		if (atomic_load_explicit(&d->tail, memory_order_acquire) != t && attempt < 16)
			continue;
		if (hd > t || t - hd > log->data_size)
			hd = t > log->data_size ? t - log->data_size : 0;
		if (kmsg__rec_check(log, ring_norm(log, t), &r) && r.seq + 1 == next)
			next--;
		w->head = (hd + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
		w->end = t;
		w->end_seq = next;
		w->head_seq = UINT64_MAX;  /* kept by no word of format 1 */
		w->end_owner = OWNER_NONE;
		w->end_boot = 0;
		return 0;
	}
}

uint64_t kmsg__ring_head(const struct kmsg_log *log)
{
	if (log->version == KMSG_FORMAT_V1)
		return atomic_load_explicit(&log->dyn1->head, memory_order_acquire);
	return atomic_load_explicit(&log->dyn->head, memory_order_acquire);
}

int kmsg__ring_window(const struct kmsg_log *log, struct window *w)
{
	uint64_t hs, sw;

	if (log->version == KMSG_FORMAT_V1)
		return window_v1(log, w);
	resv_load(log, &w->end, &sw);
	head_load(log, &w->head, &hs);
	if (w->end % REC_ALIGN || w->end >= POS_LIMIT)
		return KMSG_ECORRUPT;
	/* A head that no writer could have left: one lap behind the end. */
	w->head_seq = hs;
	if (w->head > w->end || w->end - w->head > log->data_size || w->head % REC_ALIGN) {
		w->head = w->end > log->data_size ? w->end - log->data_size : 0;
		w->head_seq = UINT64_MAX;
	}
	w->end_seq = rs_seq(log, sw);
	w->end_owner = rs_owner(sw);
	/* The newest reservation's writer is of the boot the dynamic state
	 * is of: this one only if a writer of this boot has entered it. */
	w->end_boot = atomic_load_explicit(&log->aux->boot_id, memory_order_acquire);
	return 0;
}

/* ---- finding blocks ----------------------------------------------------- */

/*
 * The first position in [from, to) that holds a tagged header (any state)
 * with a plausible length, or to.  Steps of 8 bytes: it looks across
 * unmarked or damaged stretches, which are short but for damage.  Every
 * caller's to is less than a ring past from (A LYING HEADER).
 */
static uint64_t next_mark(const struct kmsg_log *log, uint64_t from, uint64_t to,
			  struct rec_hdr *hd)
{
	const uint64_t D = log->data_size;
	struct data_scan sc;

	kmsg__scan_start(&sc, from);
	for (uint64_t q = from; q < to; q += REC_ALIGN) {
		uint64_t phys, tag;

		if ((q = kmsg__scan_on(log, &sc, q)) >= to)
			break;
		phys = q % D;
		if (D - phys < REC_HDR) {
			q += D - phys - REC_ALIGN;
			continue;
		}
		tag = load_tag(log, phys);
		if (tag_pos(tag) != q ||
		    (q == 0 && tag == 0 && !kmsg__ring_first_committed(log)))
			continue;  /* (a new log's first block, unmarked: BLOCK STATES) */
		memcpy(hd, log->data + phys, REC_HDR);
		if (hd->len >= REC_HDR && hd->len % REC_ALIGN == 0 && hd->len <= D &&
		    tag_pos(hd->tag) == q)
			return q;
	}
	return to;
}

/*
 * Is the block at pos, whose tag was loaded as `tag` (not marking pos), a
 * record that was whole, its tag alone damaged?  A record's checksum
 * covers its position (not the tag word), and its writer stores it after
 * the mark (W6 after M1).  So the checksum is loaded first [D1, pairs
 * with W6's release], and the tag again after the body [D2]: a tag
 * still as it was means no writer marked the block, and a checksum that
 * is right is then damage, not a writer to wait for.  (A writer that
 * marked and committed it since the first look leaves a tag that has
 * changed: not damage.)  A pad is written whole before its mark, so a
 * pad cannot tell.
 */
static int tag_damaged(const struct kmsg_log *log, uint64_t pos, uint64_t phys, uint64_t tag)
{
	const struct rec_hdr *b = ring_block(log, phys);
	uint32_t crc = __atomic_load_n(&b->crc, __ATOMIC_ACQUIRE);                  /* D1 */
	struct rec_hdr h;
	uint64_t len;

	memcpy(&h, log->data + phys, REC_HDR);
	h.tag = pos;
	len = kmsg__rec_header_at(log, pos, phys, (const unsigned char *)&h);
	if (!len || (h.flags & REC_PAD) ||
	    kmsg__rec_crc_finish(kmsg__rec_crc_body(log->data + phys,
						    (uint32_t)rec_size(h.text_len, h.fields_len)),
				 h.seq, pos, rec_lenword(&h)) != crc)
		return 0;
	return load_tag(log, phys) == tag;                                          /* D2 */
}

int kmsg__ring_first_committed(const struct kmsg_log *log)
{
	const struct rec_hdr *b = ring_block(log, 0);
	uint32_t crc = __atomic_load_n(&b->crc, __ATOMIC_ACQUIRE);                  /* D1 */
	struct rec_hdr h;
	uint64_t len;

	memcpy(&h, log->data, REC_HDR);
	h.tag = 0;
	len = kmsg__rec_header_at(log, 0, 0, (const unsigned char *)&h);
	if (!len)
		return 0;
	/* A pad is stored whole before its tag: whole, it is as good as
	 * committed (it holds no record, and its writer's record follows
	 * it with a tag of its own). */
	if (!(h.flags & REC_PAD) &&
	    kmsg__rec_crc_finish(kmsg__rec_crc_body(log->data,
						    (uint32_t)rec_size(h.text_len, h.fields_len)),
				 h.seq, 0, rec_lenword(&h)) != crc)
		return 0;
	return load_tag(log, 0) == 0;                                               /* D2 */
}

/*
 * The owner of an unmarked stretch [p, y) holding `blocks` reservations:
 * the block at y names the writer of the block before it (prev_owner),
 * and resv the writer of the newest.  Known only for a single
 * reservation; several are taken for live (OWNER_SHARED).
 */
static void stretch_owner(uint64_t y, const struct window *w, const struct rec_hdr *at_y,
			  uint64_t blocks, unsigned *owner, uint64_t *boot)
{
	if (y < w->end) {
		/* A pad names its boot too; one from a build before pads
		 * did says 0, which would make a live writer look dead. */
		*owner = at_y->prev_owner;
		*boot = at_y->boot_id || !(at_y->flags & REC_PAD) ? at_y->boot_id : w->end_boot;
	} else {
		*owner = w->end_owner;
		*boot = w->end_boot;
	}
	if (blocks != 1 && *owner != OWNER_NONE)
		*owner = OWNER_SHARED;
}

/* ---- stalls -------------------------------------------------------------- */

/*
 * Has the unfinished block at pos been so since STALL_NS ago?  The first
 * writer to see it there notes when (stall_pos, stall_since; best effort:
 * a race between two notes costs at most another STALL_NS); mine is when
 * this caller first saw it.
 */
static int stall_expired(struct kmsg_log *log, uint64_t pos, int64_t mine, int64_t now)
{
	struct kmsg_aux *a = log->aux;

	if (now - mine >= STALL_NS)
		return 1;
	/* stall_pos 0 is no note (a new log's, or one entering a boot), so
	 * a block at 0 is timed by each writer alone */
	if (pos == 0 || atomic_load_explicit(&a->stall_pos, memory_order_acquire) != pos) {
		if (log->flags & KMSG_OPEN_WRITE) {
			atomic_store_explicit(&a->stall_since, now, memory_order_relaxed);
			atomic_store_explicit(&a->stall_pos, pos, memory_order_release);
		}
		return 0;
	}
	return kmsg__elapsed_ns(now, atomic_load_explicit(&a->stall_since,
							 memory_order_relaxed)) >= STALL_NS;
}

/* ---- quarantine ---------------------------------------------------------- */

/*
 * qactive counts the entries in use, so that the fast path can skip the
 * table when it is 0: it may count too many, never too few.  So it goes
 * up before an entry becomes active and down after one stops being: a
 * process killed in between leaves it one too high (appends then take
 * the slow path, a few nanoseconds more, until a rebuild resets the
 * table), never an active entry the fast path would not see.  qgen is bumped after every
 * change (qlist_load()).
 */
static void quar_changed(struct kmsg_log *log, int delta)
{
	if (delta < 0)
		atomic_fetch_sub_explicit(&log->aux->qactive, 1, memory_order_release);
	atomic_fetch_add_explicit(&log->aux->qgen, 1, memory_order_release);
}

/*
 * Is there a whole committed block of a lap after q at q's place (phys)?
 * Its checksum, which covers its position, must be right: a word that
 * only looks like such a tag (a stopped writer's timestamp, say) is not
 * one, and taking it for one would lift a live writer's entry.
 */
static int later_block_at(const struct kmsg_log *log, uint64_t q, uint64_t phys)
{
	uint64_t t = tag_pos(load_tag(log, phys));

	return t > q && t < POS_LIMIT && t % log->data_size == phys && kmsg__rec_check(log, t, NULL);
}

/*
 * Does [pos, end) hold a block of a later lap anywhere?  No reservation
 * reaches a quarantined stretch (QUARANTINE), so one that does names a
 * stretch that was written over before its entry was made: an evictor
 * descheduled between its look at the head and its entry
 * (pass_unmarked()) can make one, up to a ring long, from the unmarked
 * run it saw.  Every 8 bytes, as a block of the later lap may start
 * anywhere in it.
 */
static int reused_since(const struct kmsg_log *log, uint64_t pos, uint64_t end)
{
	const uint64_t D = log->data_size;
	struct data_scan sc;

	kmsg__scan_start(&sc, pos);
	for (uint64_t q = pos; q < end; q += REC_ALIGN) {
		uint64_t phys;

		if ((q = kmsg__scan_on(log, &sc, q)) >= end)
			break;
		phys = q % D;
		if (D - phys < REC_HDR) {
			q += D - phys - REC_ALIGN;
			continue;
		}
		if (later_block_at(log, q, phys))
			return 1;
	}
	return 0;
}

/*
 * May the entry go?  Once the boot changed, or its stretch holds blocks
 * of a later lap (an entry made from a stale look), or every block in it
 * is done: committed or released, or its writer dead, and the unmarked
 * rest's writer dead.  An entry is written before head passes its
 * stretch (Q1 before H1), so one still ahead of head is kept like any.
 */
static int quar_done(const struct kmsg_log *log, const struct kmsg_quar *q)
{
	uint64_t pos = atomic_load_explicit(&q->pos, memory_order_relaxed);
	uint64_t end = pos + atomic_load_explicit(&q->len, memory_order_relaxed);
	uint64_t boot = atomic_load_explicit(&q->boot, memory_order_relaxed);
	unsigned owner = atomic_load_explicit(&q->owner, memory_order_relaxed);
	uint32_t blocks = atomic_load_explicit(&q->blocks, memory_order_relaxed), seen = 0;
	const uint64_t D = log->data_size;

	if (boot != log->boot_id)
		return 1;
	/* A stretch of whole blocks within a lap, as every reservation is
	 * (a pad and a record may take nearly all of it): anything else is
	 * not one a writer made. */
	if (pos % REC_ALIGN || (end - pos) % REC_ALIGN || end == pos ||
	    end - pos > D - REC_HDR || end >= POS_LIMIT)
		return 1;
	for (uint64_t p = pos; p < end;) {
		uint64_t phys = p % D, tag;
		struct rec_hdr hd;

		if (D - phys < REC_HDR) {
			p += D - phys;
			continue;
		}
		tag = load_tag(log, phys);
		if (later_block_at(log, p, phys))
			return 1;  /* reused: the entry was made from a stale look */
		if (tag_pos(tag) != p || (tag == 0 && !kmsg__ring_committed(log, p, tag))) {
			/* unmarked: its writer has not come back, or the
			 * entry is stale and p lies within a later block */
			if (kmsg__writer_alive(log, owner, boot))
				return reused_since(log, p, end);
			p = next_mark(log, p + REC_ALIGN, end, &hd);
			continue;
		}
		memcpy(&hd, log->data + phys, REC_HDR);
		if (hd.len < REC_HDR || hd.len % REC_ALIGN || hd.len > D)
			return 1;  /* not a header a writer of ours left */
		if ((tag_state(tag) == ST_RESERVED || tag_state(tag) == ST_HOLE) &&
		    kmsg__writer_alive(log, hd.owner, hd.boot_id))
			return 0;
		if (!(hd.flags & REC_PAD))
			seen++;
		p += hd.len;
	}
	/* Unmarked reservations whose writers are unknown: wait for them to
	 * mark themselves (they release at once when they come back). */
	return owner != OWNER_SHARED || seen >= blocks;
}

/* Lifts every entry that may go; returns how many are left. */
static unsigned quar_sweep(struct kmsg_log *log)
{
	unsigned left = 0;

	for (int i = 0; i < NQUAR; i++) {
		struct kmsg_quar *q = &log->aux->quar[i];
		uint32_t st = QUAR_ACTIVE;

		if (atomic_load_explicit(&q->state, memory_order_acquire) != QUAR_ACTIVE)
			continue;
		if (quar_done(log, q) &&
		    atomic_compare_exchange_strong_explicit(&q->state, &st, QUAR_FREE,
							    memory_order_acq_rel,
							    memory_order_relaxed))
			quar_changed(log, -1);
		else
			left++;
	}
	return left;
}

/*
 * Quarantines [pos, pos + len) of `blocks` reservations, waiting for
 * owner (of its only reservation, OWNER_SHARED for several) [Q1].
 */
static void quar_add(struct kmsg_log *log, uint64_t pos, uint64_t len, uint64_t blocks,
		     unsigned owner, uint64_t boot)
{
	struct kmsg_aux *a = log->aux;

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < NQUAR; i++) {
			struct kmsg_quar *q = &a->quar[i];
			uint32_t st = atomic_load_explicit(&q->state, memory_order_acquire);

			if (st == QUAR_ACTIVE &&
			    atomic_load_explicit(&q->pos, memory_order_relaxed) == pos) {
				/* another evictor's, which may not have
				 * bumped qgen yet: this one's H1 must come
				 * after a bump (qlist_load()) */
				quar_changed(log, 0);
				return;
			}
		}
		for (int i = 0; i < NQUAR; i++) {
			struct kmsg_quar *q = &a->quar[i];
			uint32_t st = QUAR_FREE;

			if (!atomic_compare_exchange_strong_explicit(&q->state, &st, QUAR_FILLING,
								     memory_order_acq_rel,
								     memory_order_relaxed))
				continue;
			atomic_store_explicit(&q->pos, pos, memory_order_relaxed);
			atomic_store_explicit(&q->len, (uint32_t)len, memory_order_relaxed);
			atomic_store_explicit(&q->blocks, (uint32_t)blocks, memory_order_relaxed);
			atomic_store_explicit(&q->boot, boot, memory_order_relaxed);
			atomic_store_explicit(&q->owner, (uint16_t)owner, memory_order_relaxed);
			atomic_fetch_add_explicit(&a->qactive, 1, memory_order_release);
			atomic_store_explicit(&q->state, QUAR_ACTIVE, memory_order_release); /* Q1 */
			quar_changed(log, 1);
			return;
		}
		/* Full: make room from entries that may go, then try again. */
		if (quar_sweep(log) >= NQUAR)
			break;
	}
	/* No room: passed without an entry (QUARANTINE). */
}

/* ---- placing a reservation ---------------------------------------------- */

struct place {
	uint64_t start;  /* where the reservation begins (after a short remainder) */
	uint64_t rpos;   /* where the record goes; a pad fills [start, rpos) */
	uint64_t end;
};

/* A quarantined stretch, as an active entry gives it. */
struct qstretch {
	uint64_t pos, len;
	uint64_t phys;  /* pos % D: no division per look */
	int idx;        /* the entry in the table */
};

/* The quarantined stretches. */
struct qlist {
	int n;
	struct qstretch q[NQUAR];
};

/*
 * The quarantined stretches as this thread last loaded them, and the qgen
 * it loaded them at: while a stopped writer's stretch stays quarantined,
 * every reservation takes the slow path, and loading the whole table
 * each time (NQUAR entries, 32 lines) made each append half again as
 * slow.  Every change to the table bumps qgen after it, and before head
 * moves past what it quarantined (Q1, then quar_changed(), then H1; an
 * evictor that finds another's entry bumps it too); a reserver loads
 * head, then qgen, then the table [Q2].  So a list loaded at the qgen
 * read now lacks no entry that the head read now depends on.  Only short
 * lists are kept: thread-local space stays small.
 */
#define QCACHE_N 4
struct qcache {
	uint64_t serial;        /* the handle it is of (log->serial), 0 none */
	uint32_t gen;
	int n;
	struct qstretch q[QCACHE_N];
};
static KMSG_TLS struct qcache qcache;

/* The table's active entries into ql; gen is qgen, loaded before [Q2]. */
static void qlist_load(const struct kmsg_log *log, struct qlist *ql, uint32_t gen)
{
	struct qcache *c = &qcache;

	ql->n = 0;
	if (!atomic_load_explicit(&log->aux->qactive, memory_order_acquire))
		return;
	if (c->serial == log->serial && c->gen == gen) {
		ql->n = c->n;
		for (int i = 0; i < c->n; i++)
			ql->q[i] = c->q[i];
		return;
	}
	for (int i = 0; i < NQUAR; i++) {
		const struct kmsg_quar *q = &log->aux->quar[i];
		struct qstretch *e = &ql->q[ql->n];

		if (atomic_load_explicit(&q->state, memory_order_acquire) != QUAR_ACTIVE)
			continue;
		e->pos = atomic_load_explicit(&q->pos, memory_order_relaxed);
		e->len = atomic_load_explicit(&q->len, memory_order_relaxed);
		e->idx = i;
		/* a stretch no writer made (quar_done() lifts it) is not
		 * stepped over: it could put records off their 8-byte grid */
		if (e->pos % REC_ALIGN || e->len % REC_ALIGN || !e->len ||
		    e->len > log->data_size - REC_HDR)
			continue;
		e->phys = e->pos % log->data_size;
		ql->n++;
	}
	c->serial = 0;
	if (ql->n <= QCACHE_N) {
		c->n = ql->n;
		for (int i = 0; i < ql->n; i++)
			c->q[i] = ql->q[i];
		c->gen = gen;
		c->serial = log->serial;
	}
}

/*
 * Where [p, p + len) runs into a quarantined stretch (or ends within 64
 * bytes before one) in a lap after it was quarantined: the end of that
 * stretch, the first place to try next; 0 if nowhere.  *which is the
 * list's index of the stretch.
 */
static uint64_t quar_conflict(const struct kmsg_log *log, const struct qlist *ql,
			      uint64_t p, uint64_t len, int *which)
{
	const uint64_t D = log->data_size;

	for (int i = 0; i < ql->n; i++) {
		uint64_t qp = ql->q[i].pos, ql_ = ql->q[i].len, base;

		base = p - kmsg__ring_phys(log, p) + ql->q[i].phys;
		for (int k = -1; k <= 1; k++) {
			uint64_t q;

			if (k < 0 && base < D)
				continue;
			q = base + (uint64_t)((int64_t)k * (int64_t)D);
			if (q <= qp || q > p + len + D)
				continue;
			if (p + len > q - REC_HDR && p < q + ql_) {
				*which = i;
				return q + ql_;
			}
		}
	}
	return 0;
}

/* Lifts entry idx, made from a stale look (place()), if it is still the
 * stretch [pos, pos + len): 1 if it is gone. */
static int quar_lift_stale(struct kmsg_log *log, int idx, uint64_t pos, uint64_t len)
{
	struct kmsg_quar *q = &log->aux->quar[idx];
	uint32_t st = QUAR_ACTIVE;

	if (atomic_load_explicit(&q->state, memory_order_acquire) != QUAR_ACTIVE)
		return 1;
	if (atomic_load_explicit(&q->pos, memory_order_relaxed) != pos ||
	    atomic_load_explicit(&q->len, memory_order_relaxed) != len)
		return 1;  /* changed since the list was loaded: qgen moved */
	if (atomic_compare_exchange_strong_explicit(&q->state, &st, QUAR_FREE,
						    memory_order_acq_rel, memory_order_relaxed))
		quar_changed(log, -1);
	return 1;
}

/* Lifts entry idx if it may go (quar_done): 1 if it is gone. */
static int quar_try_lift(struct kmsg_log *log, int idx)
{
	struct kmsg_quar *q = &log->aux->quar[idx];
	uint32_t st = QUAR_ACTIVE;

	if (atomic_load_explicit(&q->state, memory_order_acquire) != QUAR_ACTIVE)
		return 1;
	if (!quar_done(log, q))
		return 0;
	if (atomic_compare_exchange_strong_explicit(&q->state, &st, QUAR_FREE,
						    memory_order_acq_rel, memory_order_relaxed))
		quar_changed(log, -1);
	return 1;
}

/*
 * W2: where a record of len bytes goes when the reservation begins at
 * pos.  Returns 0, or KMSG_EBUSY when quarantined stretches leave it no
 * room in a lap (stopped writers' blocks fill the ring).
 */
static int place(struct kmsg_log *log, struct qlist *ql, uint64_t pos,
		 uint64_t len, struct place *pl)
{
	const uint64_t D = log->data_size;
	uint64_t r, phys = kmsg__ring_phys(log, pos);

	/* the short remainder of a lap is nobody's block */
	pl->start = D - phys < REC_HDR ? pos + (D - phys) : pos;
	phys = D - phys < REC_HDR ? 0 : phys;
	r = pl->start;
	for (int guard = 0;; guard++) {
		uint64_t room = D - phys, q;
		int which;

		/* no room in a lap from the start: quarantined stretches
		 * (stopped writers' blocks) take the rest */
		if (guard > 2 * NQUAR + 4 || r + len - pl->start > D - REC_HDR ||
		    r - pl->start > REC_LEN_MAX)
			return KMSG_EBUSY;
		if (room < len) {
			r += room;  /* the pad covers the end of the lap */
			phys = 0;
			continue;
		}
		if (ql->n && (q = quar_conflict(log, ql, r, len, &which)) != 0) {
			/* A writer that is done with its stretch, or dead,
			 * frees it here, when a lap reaches it.  A stretch
			 * whose later lap the previous reservation already
			 * reached, or ended within 64 bytes before (pos, not
			 * the start past a short remainder), was not
			 * quarantined when reservations reached it: every
			 * reservation placed after an entry exists ends 64
			 * bytes before it.  Its entry was made from a stale
			 * look (an evictor stopped between its look and
			 * quar_add(), after others passed the stretch and
			 * lifted theirs); it protects nothing, and kept it
			 * would refuse every reservation from here. */
			if (log->flags & KMSG_OPEN_WRITE &&
			    (r == pl->start && pos + REC_HDR > q - ql->q[which].len
				 ? quar_lift_stale(log, ql->q[which].idx, ql->q[which].pos,
						   ql->q[which].len)
				 : quar_try_lift(log, ql->q[which].idx))) {
				ql->q[which] = ql->q[--ql->n];
				continue;
			}
			r = ring_norm(log, q);
			phys = r % D;
			continue;
		}
		break;
	}
	/* A pad needs a header's worth of room; a record always leaves a
	 * header's worth before a quarantined stretch, and the end of a lap
	 * with less is the short remainder everyone steps over. */
	if (r != pl->start && r - pl->start < REC_HDR)
		return KMSG_EBUSY;  /* cannot happen: every block ends 64 bytes early */
	pl->rpos = r;
	pl->end = r + len;
	return 0;
}

/* ---- eviction ------------------------------------------------------------ */

static int raise_pass_to(struct kmsg_log *log, uint64_t to)
{
	uint64_t cur = atomic_load_explicit(&log->aux->pass_to, memory_order_seq_cst);

	while (cur < to &&
	       !atomic_compare_exchange_weak_explicit(&log->aux->pass_to, &cur, to,
						      memory_order_seq_cst,
						      memory_order_seq_cst))
		;                                                            /* E1 */
	return 0;
}

struct walk {
	int force;              /* pass an unfinished block without waiting */
	uint64_t need, ahead;   /* pass all before need, and committed blocks
	                           that end by ahead (evict()) */
	uint64_t h, hseq;       /* head when the walk began */
	uint64_t p, seq;        /* the block it is at, and its number */
	uint64_t evicted, holes, damaged;
	int64_t wait_since;     /* when this walk first met an unfinished block */
	uint64_t wait_pos;
};

enum { STEP_ON, STEP_WAIT, STEP_AGAIN, STEP_STOP };

/* The head is where the walk began: no other evictor has moved it. */
static int head_still(const struct kmsg_log *log, const struct walk *k)
{
	return atomic_load_explicit(&log->dyn->head, memory_order_acquire) == k->h;
}

/* Is the unfinished block at k->p one to pass now? */
static int may_pass(struct kmsg_log *log, struct walk *k, unsigned owner, uint64_t boot)
{
	int64_t now;

	if (!kmsg__writer_alive(log, owner, boot))
		return 1;
	now = kmsg__clock_ns(CLOCK_BOOTTIME);
	if (k->wait_pos != k->p || !k->wait_since) {
		k->wait_pos = k->p;
		k->wait_since = now;
	}
	return stall_expired(log, k->p, k->wait_since, now);
}

/*
 * Passes the unmarked stretch [k->p, y) of `blocks` reservations, whose
 * writer (of the only one) is owner: E1, then a second look [E2]; what
 * got a tag meanwhile is left to the walk's next step.
 */
static void pass_unmarked(struct kmsg_log *log, struct walk *k, uint64_t y, uint64_t yseq,
			  uint64_t blocks, unsigned owner, uint64_t boot, int alive)
{
	struct rec_hdr hd;
	uint64_t m;

	if (alive) {
		raise_pass_to(log, y);                                              /* E1 */
		m = next_mark(log, k->p, y, &hd);                                   /* E2 */
		if (m < y) {
			/* A writer came back and marked its block at m: the
			 * stretch before it is what stays unmarked. */
			yseq = hd.seq;
			blocks = yseq > k->seq ? yseq - k->seq : 1;
			y = m;
			if (blocks != 1 && owner != OWNER_NONE)
				owner = OWNER_SHARED;
			else if (blocks == 1)
				owner = hd.prev_owner;
		}
		if (y > k->p)
			quar_add(log, k->p, y - k->p, blocks, owner, boot);
		k->holes += y > k->p ? blocks : 0;
	} else if (boot != log->boot_id) {
		k->damaged += blocks;  /* lost at a crash */
	} else {
		k->holes += blocks;
	}
	k->p = y;
	k->seq = yseq;
}

/*
 * One step of the walk at k->p, below resv (w->end): passes one block or
 * stretch (STEP_ON), or says to wait for an unfinished one (STEP_WAIT),
 * or that what it read changed under it (STEP_AGAIN).
 */
static int walk_step(struct kmsg_log *log, struct walk *k, const struct window *w)
{
	const uint64_t D = log->data_size;
	uint64_t phys = kmsg__ring_phys(log, k->p), tag = load_tag(log, phys), blen;
	struct rec_hdr hd;
	unsigned st = tag_state(tag);

	/* the first block of a new log, not yet marked (BLOCK STATES) */
	int first = k->p == 0 && tag == 0 && !kmsg__ring_first_committed(log);

	if (k->p >= k->need && (tag != k->p || first || k->p >= k->ahead))
		return STEP_STOP;  /* ahead of need: committed blocks only */
	if (tag == k->p && !first) {
		/* The common case, a committed block: its length, flags and
		 * number, each loaded once (after the tag: acquire), are all
		 * the walk needs; a length no writer stores is damage,
		 * below. */
		const struct rec_hdr *b = ring_block(log, phys);
		uint64_t len = __atomic_load_n((const uint32_t *)b, __ATOMIC_RELAXED) & 0xffffff;
		uint64_t seq = __atomic_load_n(&b->seq, __ATOMIC_RELAXED);
		unsigned flags = __atomic_load_n(&b->flags, __ATOMIC_RELAXED);

		if (len >= REC_HDR && len % REC_ALIGN == 0 && k->p + len <= w->end &&
		    !(flags & ~REC_FLAGS_KNOWN) &&
		    (flags & REC_PAD ? len <= D : len <= D - phys && len <= log->max_rec)) {
			if (k->p >= k->need && k->p + len > k->ahead)
				return STEP_STOP;
			if (flags & REC_PAD) {
				k->seq = seq;
			} else {
				k->evicted++;
				k->seq = seq + 1;
			}
			k->p += len;
			return STEP_ON;
		}
	}
	if (tag_pos(tag) == k->p && st <= ST_RELEASED && !first) {
		memcpy(&hd, log->data + phys, REC_HDR);
		blen = hd.len;
		if (st == ST_COMMITTED) {
			blen = kmsg__rec_header_ok(log, k->p, phys, &hd);
			if (k->p >= k->need && (!blen || k->p + blen > k->ahead))
				return STEP_STOP;
			if (blen && k->p + blen <= w->end) {
				if (hd.flags & REC_PAD) {
					k->seq = hd.seq;
				} else {
					k->evicted++;
					k->seq = hd.seq + 1;
				}
				k->p += blen;
				return STEP_ON;
			}
		} else if (blen >= REC_HDR && blen % REC_ALIGN == 0 && blen <= D &&
			   k->p + blen <= w->end && (st != ST_RESERVED || blen <= log->max_rec)) {
			if (st == ST_RESERVED) {
				uint64_t want = tag;
				/* not alive: C2 fails if it committed first (L1) */
				int alive = kmsg__writer_alive(log, hd.owner, hd.boot_id);

				if (alive && !k->force && !may_pass(log, k, hd.owner, hd.boot_id))
					return STEP_WAIT;
				if (!head_still(log, k))
					return STEP_AGAIN;
				if (!__atomic_compare_exchange_n(&ring_block(log, phys)->tag, &want,
								 k->p | ST_HOLE, 0,
								 __ATOMIC_SEQ_CST,
								 __ATOMIC_SEQ_CST))          /* C2 */
					return STEP_AGAIN;  /* committed or released meanwhile */
				st = ST_HOLE;
			}
			if (st == ST_HOLE && kmsg__writer_alive(log, hd.owner, hd.boot_id))
				quar_add(log, k->p, blen, 1, hd.owner, hd.boot_id);
			k->holes++;
			k->seq = hd.seq + 1;
			k->p += blen;
			return STEP_ON;
		}
		/* A tag with a header no writer of ours leaves: damage. */
		k->damaged++;
		k->p = next_mark(log, k->p + REC_ALIGN, w->end, &hd);
		k->seq = k->p < w->end ? hd.seq : w->end_seq;
		return STEP_ON;
	}
	if (!first && (tag_pos(tag) == k->p || tag_damaged(log, k->p, phys, tag))) {
		/* A header with a state no writer stores, or a whole record
		 * whose tag alone is damaged. */
		k->damaged++;
		k->p = next_mark(log, k->p + REC_ALIGN, w->end, &hd);
		k->seq = k->p < w->end ? hd.seq : w->end_seq;
		return STEP_ON;
	}
	/* Unmarked: up to the next tagged block, or resv. */
	{
		uint64_t y = next_mark(log, k->p + REC_ALIGN, w->end, &hd), yseq, blocks, boot;
		unsigned owner;
		int alive;

		yseq = y < w->end ? hd.seq : w->end_seq;
		blocks = yseq > k->seq && yseq - k->seq <= (y - k->p) / REC_HDR + 1
			? yseq - k->seq : 0;
		stretch_owner(y, w, &hd, blocks, &owner, &boot);
		if (!blocks)
			owner = OWNER_SHARED;  /* numbers do not add up: any writer */
		alive = blocks ? kmsg__writer_alive(log, owner, boot) : kmsg__writers_alive(log, boot);
		if (alive && !k->force && !may_pass(log, k, owner, boot))
			return STEP_WAIT;
		if (!alive && load_tag(log, phys) != tag)                           /* L1 */
			return STEP_AGAIN;
		if (!head_still(log, k))
			return STEP_AGAIN;
		pass_unmarked(log, k, y, yseq, blocks ? blocks : 1, owner, boot, alive);
		return STEP_ON;
	}
}

/*
 * One look at head and resv that writers could have left [W3]: head
 * loaded before resv is at most resv, head loaded after it is at most a
 * ring less 64 bytes behind it, and the two heads are one (a head that
 * moves between them is looked at again, a few times: writers move it
 * once a batch).  KMSG_ECORRUPT for any other look (LYING HEADER); a
 * walk from that head to that resv is then shorter than a ring.
 */
static int walk_look(const struct kmsg_log *log, struct walk *k, struct window *w)
{
	const uint64_t D = log->data_size;

	for (int tries = 0;; tries++) {
		uint64_t sw, h2, hs2;

		head_load(log, &k->h, &k->hseq);
		resv_load(log, &w->end, &sw);
		head_load(log, &h2, &hs2);
		if ((h2 != k->h || hs2 != k->hseq) && tries < 8)
			continue;
		if (h2 != k->h || (k->h | w->end) % REC_ALIGN || k->h > w->end ||
		    w->end - k->h > D - REC_HDR || w->end >= POS_LIMIT)
			return KMSG_ECORRUPT;
		w->end_seq = rs_seq(log, sw);
		w->end_owner = rs_owner(sw);
		w->end_boot = atomic_load_explicit(&log->aux->boot_id, memory_order_acquire);
		return 0;
	}
}

/*
 * W3: moves head to at least need (never past resv), passing what it
 * must as described under EVICTION, and on over the committed blocks
 * that end by ahead: eviction runs a little ahead, so that head moves
 * once for several appends, but never evicts a record before its time
 * for it.  Waits for an unfinished block at most STALL_NS.  Returns 0
 * (head is at need, or nothing before resv is left to pass), or
 * KMSG_ECORRUPT: the words are not ones writers leave, or the walk did
 * not end within its bound (LYING HEADER).
 */
static int evict(struct kmsg_log *log, uint64_t need, uint64_t ahead)
{
	const uint64_t D = log->data_size;
	struct walk k = { 0 };
	int64_t until = 0;

	for (unsigned idle = 0;; idle++) {
		struct window w;
		uint64_t lo, hi, steps = 0;
		int step = STEP_ON;

		/* Laps that move nothing: waits for stalled blocks (each at
		 * most STALL_NS), or words changing under the walk.  Past
		 * EVICT_NS that is no writer's doing. */
		if (idle && idle % 64 == 0) {
			int64_t now = kmsg__clock_ns(CLOCK_MONOTONIC);

			if (!until)
				until = now + EVICT_NS;
			else if (now > until)
				return KMSG_ECORRUPT;
		}
		if (walk_look(log, &k, &w) < 0)
			return KMSG_ECORRUPT;
		if (k.h >= need)
			return 0;
		k.p = k.h;
		k.seq = k.hseq;
		k.evicted = k.holes = k.damaged = 0;
		k.need = need;
		k.ahead = ahead;
		/* The walk follows each block's length to the next: in a ring
		 * larger than the caches every header would be a miss, one
		 * after the other.  Its lines are contiguous, so they are
		 * asked for all at once (and the records written there soon
		 * find them near). */
		{
			uint64_t from = kmsg__ring_phys(log, k.h);
			uint64_t n = (ahead < w.end ? ahead : w.end) - k.h;

			if (n > 2 * log->batch + REC_HDR)
				n = 2 * log->batch + REC_HDR;
			for (uint64_t o = 0; o < n; o += 64)
				__builtin_prefetch(log->data + (from + o < D ? from + o : from + o - D));
		}
		/* Every step but a stretch's second look (pass_unmarked())
		 * moves on by 8 bytes at least, and w.end is less than a ring
		 * ahead: more steps than that are damage that changes under
		 * the walk. */
		while (k.p < w.end) {
			uint64_t phys = kmsg__ring_phys(log, k.p);
			const struct rec_hdr *b = ring_block(log, phys);
			uint64_t len;

			if (D - phys < REC_HDR) {
				k.p += D - phys;  /* the short remainder of a lap */
				continue;
			}
			/* A committed record, the common case, passed here;
			 * anything else by walk_step(). */
			if (kmsg__ring_committed(log, k.p, load_tag(log, phys)) &&
			    !((len = __atomic_load_n((const uint32_t *)b, __ATOMIC_RELAXED) &
				   0xffffff) % REC_ALIGN) &&
			    len >= REC_HDR && len <= D - phys && len <= log->max_rec &&
			    k.p + len <= (k.p < need ? w.end : ahead) &&
			    __atomic_load_n(&b->flags, __ATOMIC_RELAXED) == 0) {
				k.seq = __atomic_load_n(&b->seq, __ATOMIC_RELAXED) + 1;
				k.evicted++;
				k.p += len;
				continue;
			}
			if (++steps > D / REC_ALIGN)
				return KMSG_ECORRUPT;
			step = walk_step(log, &k, &w);
			if (step != STEP_ON)
				break;
		}
		if (k.p > k.h) {
			lo = k.h;
			hi = k.hseq;
			if (kmsg__cas128(&log->dyn->head, &lo, &hi, k.p, k.seq)) {        /* H1 */
				struct kmsg_aux *a = log->aux;
				if (k.evicted)
					atomic_fetch_add_explicit(&a->evicted, k.evicted, memory_order_relaxed);
				if (k.holes)
					atomic_fetch_add_explicit(&a->holes, k.holes, memory_order_relaxed);
				if (k.damaged)
					atomic_fetch_add_explicit(&a->damaged, k.damaged, memory_order_relaxed);
				idle = 0;
				until = 0;
			}
			if (k.p >= need)
				return 0;
			continue;  /* look again from the head as it is now */
		}
		if (step == STEP_WAIT)
			kmsg__nap(20000);
		else if (step == STEP_ON || step == STEP_STOP)
			return 0;  /* nothing to pass before resv */
	}
}

void kmsg__ring_give_up(struct kmsg_log *log, uint64_t pos, uint64_t seq)
{
	struct walk k = { .force = 1, .p = pos, .seq = seq, .need = UINT64_MAX };
	struct window w;

	if (!(log->flags & KMSG_OPEN_WRITE) || kmsg__ring_window(log, &w) < 0)
		return;
	head_load(log, &k.h, &k.hseq);
	/* A number that is not the block's makes an unmarked stretch look
	 * like several reservations (OWNER_SHARED): an entry no death lifts. */
	if (seq == UINT64_MAX) {
		if (pos != k.h)
			return;  /* the caller steps over it on its own */
		k.seq = k.hseq;
	}
	if (k.h <= pos && pos < w.end)
		walk_step(log, &k, &w);
}

/* ---- the write path ------------------------------------------------------ */

/*
 * A writer met words that writers do not leave (LYING HEADER): checked as
 * an opening writer checks them, and rebuilt from the records if they
 * are broken; then the caller looks again.  KMSG_ECORRUPT once it has
 * met LIES_MAX of them in one append.
 */
static int meet_lie(struct kmsg_log *log, unsigned *lies)
{
	if (++*lies >= LIES_MAX)
		return KMSG_ECORRUPT;
	if (!kmsg__ring_sane(log, log->map + HDR_STATIC)) {
		kmsg__ring_rebuild(log);
		kmsg__ring_enter_boot(log);
	}
	return 0;
}

int kmsg__ring_reserve_slow(struct kmsg_log *log, uint64_t len, struct rec_hdr **blk,
			    uint64_t *rpos, uint64_t *seq, unsigned *prev_owner)
{
	const uint64_t D = log->data_size;
	/* Two plain loads: a torn pair only makes the compare-and-swap fail
	 * and hand back the real one. */
	uint64_t pos = atomic_load_explicit(&log->dyn->resv_pos, memory_order_acquire);  /* A2 */
	uint64_t sw = atomic_load_explicit(&log->dyn->resv_seq, memory_order_acquire);
	struct place pl;
	struct qlist ql;
	unsigned lies = 0, short_evicts = 0;
	int err;

	for (;;) {
		uint64_t h, s = rs_seq(log, sw), lo, hi, need;
		uint32_t gen;

		if (pos >= POS_LIMIT - 2 * D || pos % REC_ALIGN ||
		    (sw >> RESV_OWNER_BITS) > pos / REC_HDR + D / REC_HDR + 1) {
			/* the positions used up, or a lie: a number more than
			 * the positions allow (RESV_SEQ_MAX is more still), a
			 * position off the grid */
			if (pos >= POS_LIMIT - 2 * D &&
			    (lies >= LIES_MAX || kmsg__ring_sane(log, log->map + HDR_STATIC)))
				return KMSG_ESEQ;
			if ((err = meet_lie(log, &lies)) < 0)
				return err;
			pos = atomic_load_explicit(&log->dyn->resv_pos, memory_order_acquire);
			sw = atomic_load_explicit(&log->dyn->resv_seq, memory_order_acquire);
			continue;
		}
		h = atomic_load_explicit(&log->dyn->head, memory_order_acquire);
		if (h > pos || pos - h > D - REC_HDR) {
			/* behind head, or more than a ring ahead: writers that
			 * moved on since pos was loaded, or a lie */
			struct walk k;
			struct window w;

			if (walk_look(log, &k, &w) < 0 && (err = meet_lie(log, &lies)) < 0)
				return err;
			pos = atomic_load_explicit(&log->dyn->resv_pos, memory_order_acquire);
			sw = atomic_load_explicit(&log->dyn->resv_seq, memory_order_acquire);
			continue;
		}
		gen = atomic_load_explicit(&log->aux->qgen, memory_order_acquire);      /* Q2 */
		qlist_load(log, &ql, gen);
		err = place(log, &ql, pos, len, &pl);
		if (err) {
			/* Entries that may go make room; else the ring is full of
			 * stopped writers' blocks. */
			if (quar_sweep(log) < (unsigned)ql.n)
				continue;
			return err;
		}
		need = pl.end + REC_HDR > D ? pl.end + REC_HDR - D : 0;
		if (need > h) {
			/* An eviction that found nothing to pass and left head
			 * short, lap after lap, met words that lie too. */
			if (evict(log, need, need + log->batch) < 0 ||
			    ++short_evicts > SHORT_EVICTS_MAX) {
				if ((err = meet_lie(log, &lies)) < 0)
					return err;
				short_evicts = 0;
			}
			h = atomic_load_explicit(&log->dyn->head, memory_order_acquire);
			if (need > h ||
			    atomic_load_explicit(&log->aux->qgen, memory_order_acquire) != gen) {
				pos = atomic_load_explicit(&log->dyn->resv_pos, memory_order_acquire);
				sw = atomic_load_explicit(&log->dyn->resv_seq, memory_order_acquire);
				continue;  /* place again with what eviction found */
			}
		}
		lo = pos;
		hi = sw;
		if (kmsg__cas128(&log->dyn->resv_pos, &lo, &hi, pl.end,
				 rs_make(log, s + 1, log->owner)))                       /* A1 */
			break;
		pos = lo;
		sw = hi;
	}
	*seq = rs_seq(log, sw);
	*prev_owner = rs_owner(sw);
	*rpos = pl.rpos;
	*blk = ring_block(log, kmsg__ring_phys(log, pl.rpos));
	if (pl.rpos != pl.start) {
		/* The pad first: the reservation's first block is its mark. */
		struct rec_hdr pad;
		uint64_t phys = kmsg__ring_phys(log, pl.start);
		struct rec_hdr *dst = ring_block(log, phys);

		kmsg__rec_pad(&pad, pl.start, *seq, (uint32_t)(pl.rpos - pl.start), log->owner,
			      *prev_owner, log->boot_id, 0);
		memcpy(dst, &pad, 16);
		memcpy((unsigned char *)dst + 24, (unsigned char *)&pad + 24, REC_HDR - 24);
		__atomic_exchange_n(&dst->tag, pl.start, __ATOMIC_SEQ_CST);             /* M1 */
		*prev_owner = log->owner;
		if (atomic_load_explicit(&log->aux->pass_to, memory_order_seq_cst) > pl.start) /* M2 */
			return 1;  /* passed unmarked: the record is not ours to write */
	}
	return 0;
}

void kmsg__ring_recheck(struct kmsg_log *log)
{
	unsigned lies = 0;

	meet_lie(log, &lies);
}

void kmsg__ring_release_passed(struct rec_hdr *b, uint64_t rpos)
{
	uint64_t want = rpos | ST_RESERVED;

	/* Passed while unmarked (EVICTION): let go of it; an evictor that
	 * saw the mark may have made it a HOLE first, which is as good.  Any
	 * other tag is another writer's block here (a resv that lied). */
	if (!__atomic_compare_exchange_n(&b->tag, &want, rpos | ST_RELEASED, 0,
					 __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST) &&
	    want == (rpos | ST_HOLE))
		__atomic_store_n(&b->tag, rpos | ST_RELEASED, __ATOMIC_RELEASE);
}

/* ---- the numbering's identity -------------------------------------------- */

/* The implicit identity of a log made before identities existed. */
static uint64_t implicit_seq_id(const struct kmsg_log *log)
{
	uint64_t id;

	memcpy(&id, log->ring_id, sizeof(id));
	return id ? id : 1;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* The current slot, read whole [N2]. */
static const struct kmsg_ident *ident_current(const struct kmsg_log *log, struct kmsg_ident *copy)
{
	const struct kmsg_aux *a = log->aux;

	for (int tries = 0;; tries++) {
		uint64_t slot = atomic_load_explicit(&a->id_slot, memory_order_acquire) & 1;
		const struct kmsg_ident *s = &a->ident[slot];

		copy->boot = atomic_load_explicit(&s->boot, memory_order_relaxed);
		copy->id = atomic_load_explicit(&s->id, memory_order_relaxed);
		copy->since = atomic_load_explicit(&s->since, memory_order_relaxed);
		copy->prev_id = atomic_load_explicit(&s->prev_id, memory_order_relaxed);
		copy->prev_since = atomic_load_explicit(&s->prev_since, memory_order_relaxed);
		copy->prev2_id = atomic_load_explicit(&s->prev2_id, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		if ((atomic_load_explicit(&a->id_slot, memory_order_relaxed) & 1) == slot ||
		    tries == 3)
			return s;
	}
}

void kmsg__ring_numbering(const struct kmsg_log *log, struct kmsg_stat *st)
{
	if (log->version == KMSG_FORMAT_V1) {
		const struct kmsg_dyn_v1 *d = log->dyn1;

		for (int tries = 0;; tries++) {
			uint64_t id = atomic_load_explicit(&d->seq_id, memory_order_acquire);

			st->seq_id_since = atomic_load_explicit(&d->seq_id_since, memory_order_relaxed);
			st->prev_seq_id = atomic_load_explicit(&d->prev_seq_id, memory_order_relaxed);
			st->prev_seq_id_since =
				atomic_load_explicit(&d->prev_seq_id_since, memory_order_relaxed);
			st->prev2_seq_id = atomic_load_explicit(&d->prev2_seq_id, memory_order_relaxed);
			atomic_thread_fence(memory_order_acquire);
			if (atomic_load_explicit(&d->seq_id, memory_order_relaxed) == id || tries == 3) {
				st->seq_id = id;
				break;
			}
		}
	} else {
		struct kmsg_ident c;

		ident_current(log, &c);
		st->seq_id = c.id;
		st->seq_id_since = c.since;
		st->prev_seq_id = c.prev_id;
		st->prev_seq_id_since = c.prev_since;
		st->prev2_seq_id = c.prev2_id;
	}
	if (!st->seq_id) {
		st->seq_id = implicit_seq_id(log);
		st->seq_id_since = log->first_seq;
		st->prev_seq_id = st->prev_seq_id_since = st->prev2_seq_id = 0;
	}
}

uint64_t kmsg__ring_seq_id(const struct kmsg_log *log)
{
	uint64_t id;

	if (log->version == KMSG_FORMAT_V1) {
		id = atomic_load_explicit(&log->dyn1->seq_id, memory_order_acquire);
	} else {
		uint64_t slot = atomic_load_explicit(&log->aux->id_slot, memory_order_acquire) & 1;
		id = atomic_load_explicit(&log->aux->ident[slot].id, memory_order_relaxed);
	}
	return id ? id : implicit_seq_id(log);
}

/*
 * A new identity for this boot, valid from since, unless the current one
 * is this boot's already.  Deterministic (OVERVIEW), so writers renewing
 * at once write the same slot with the same bytes.
 */
static void renew_numbering(struct kmsg_log *log, uint64_t since)
{
	struct kmsg_aux *a = log->aux;
	struct kmsg_ident cur;
	const struct kmsg_ident *s = ident_current(log, &cur);
	uint64_t slot = (uint64_t)(s - a->ident), id;
	struct kmsg_ident *t = &a->ident[slot ^ 1];
	uint64_t ring;

	if (cur.boot == log->boot_id && cur.id)
		return;
	if (!cur.id) {
		cur.id = implicit_seq_id(log);
		cur.since = log->first_seq;
	}
	memcpy(&ring, log->ring_id, sizeof(ring));
	id = mix64(ring ^ mix64(cur.id ^ mix64(log->boot_id ^ since)));
	while (id == 0 || id == cur.id || id == cur.prev_id)
		id = mix64(id + 1);
	atomic_store_explicit(&t->boot, log->boot_id, memory_order_relaxed);
	atomic_store_explicit(&t->id, id, memory_order_relaxed);
	atomic_store_explicit(&t->since, since, memory_order_relaxed);
	atomic_store_explicit(&t->prev_id, cur.id, memory_order_relaxed);
	atomic_store_explicit(&t->prev_since, cur.since, memory_order_relaxed);
	atomic_store_explicit(&t->prev2_id, cur.prev_id, memory_order_relaxed);
	atomic_compare_exchange_strong_explicit(&a->id_slot, &slot, slot ^ 1,
						memory_order_acq_rel, memory_order_acquire); /* N1 */
}

/* ---- entering a boot, and rebuilding ------------------------------------ */

/*
 * The first committed block in [from, to) whose number is at least seq,
 * scanning 8 bytes at a time: where the records go on after damage.
 */
static uint64_t next_committed(const struct kmsg_log *log, uint64_t from, uint64_t to,
			       uint64_t seq, struct rec_hdr *hd)
{
	struct data_scan sc;

	kmsg__scan_start(&sc, from);
	for (uint64_t q = from; q < to; q += REC_ALIGN) {
		uint64_t n;

		if ((q = kmsg__scan_on(log, &sc, q)) >= to)
			break;
		n = ring_norm(log, q);

		if (n != q) {
			q = n - REC_ALIGN;
			continue;
		}
		if (load_tag(log, q % log->data_size) == q && kmsg__rec_check(log, q, hd) &&
		    hd->seq >= seq)
			return q;
	}
	return to;
}

/*
 * Takes in the committed blocks at resv that the header did not know of:
 * a power cut may write back data pages and not the header page's latest
 * state.  They lie from resv on, numbered on from resv's number, with
 * damage (pages never written back) between runs of them, stepped over
 * by a short scan.  Head moves to make room for them; then resv, with
 * the owner of the newest reservation none: its writer is of another
 * boot.  At most RECOVER_WALK records or RECOVER_NS, less than a ring.
 */
#define RECOVER_SKIP (64 * 1024)
#define RECOVER_NS   (2 * 1000 * 1000)

static void take_in(struct kmsg_log *log)
{
	const uint64_t D = log->data_size;
	uint64_t pos, sw, p, s, h, hs, need, damaged = 0, first = 0, first_seq = 0;
	int64_t until = kmsg__clock_ns(CLOCK_MONOTONIC) + RECOVER_NS;

	resv_load(log, &pos, &sw);
	head_load(log, &h, &hs);
	/* Another writer entered the boot since ours looked, and may have
	 * reserved since, under its own id, which the compare-and-swaps
	 * below would overwrite with OWNER_NONE (its block then taken for a
	 * dead writer's).  It opened the gate before its reservation, and
	 * resv was loaded (acquire) first: if resv is its, the gate shows
	 * [B1]; if it reserves later, the compare-and-swaps fail. */
	if (atomic_load_explicit(&log->aux->boot_id, memory_order_acquire) == log->boot_id)
		return;
	p = pos;
	s = rs_seq(log, sw);
	for (int n = 0; n < RECOVER_WALK; n++) {
		uint64_t at = ring_norm(log, p), len;
		struct rec_hdr hd;

		if ((n & 1023) == 1023 && kmsg__clock_ns(CLOCK_MONOTONIC) > until)
			break;
		len = kmsg__rec_check(log, at, &hd);
		if (!len || hd.seq != s) {
			uint64_t lim = at + RECOVER_SKIP < pos + D - REC_HDR ? at + RECOVER_SKIP
									    : pos + D - REC_HDR;
			uint64_t q = next_committed(log, at + REC_ALIGN, lim, s, &hd);

			/* the run goes on after damage only with the next
			 * numbers, and by no more than the stretch could hold */
			if (q >= lim || hd.seq - s > (q - at) / REC_HDR + 1)
				break;
			damaged += hd.seq - s;
			s = hd.seq;
			at = q;
			len = hd.len;
		}
		if (at + len - pos > D - REC_HDR)
			break;  /* a ring past where it began: older than resv */
		if (!first && at + len > pos) {
			first = at;
			first_seq = hd.seq;
		}
		if (!(hd.flags & REC_PAD))
			s++;
		p = at + len;
	}
	if (p == pos) {
		uint64_t lo = pos, hi = sw;
		kmsg__cas128(&log->dyn->resv_pos, &lo, &hi, pos, rs_make(log, s, OWNER_NONE));
		return;
	}
	/* Room for what was taken in: the oldest block that survives it, in
	 * what was there before, else in what was taken in. */
	need = p + REC_HDR > D ? p + REC_HDR - D : 0;
	if (need > h) {
		struct rec_hdr hd;
		uint64_t nh = need < pos ? next_committed(log, need, pos, 0, &hd) : pos, ns;

		if (nh < pos) {
			ns = hd.seq;
		} else {
			/* in the run taken in: walk it again to the first block
			 * at or past need */
			nh = first;
			ns = first_seq;
			while (nh < need && nh < p) {
				uint64_t len = kmsg__rec_check(log, nh, &hd);
				if (!len)
					break;
				nh = ring_norm(log, nh + len);
				if (kmsg__rec_check(log, nh, &hd))
					ns = hd.seq;
			}
		}
		{
			uint64_t lo = h, hi = hs;
			if (!kmsg__cas128(&log->dyn->head, &lo, &hi, nh, ns))
				return;  /* another writer took it in */
		}
	}
	{
		uint64_t lo = pos, hi = sw;
		if (kmsg__cas128(&log->dyn->resv_pos, &lo, &hi, p, rs_make(log, s, OWNER_NONE)) &&
		    damaged)
			atomic_fetch_add(&log->aux->damaged, damaged);
	}
}

int kmsg__ring_enter_boot(struct kmsg_log *log)
{
	struct kmsg_aux *a = log->aux;
	uint64_t old = atomic_load_explicit(&a->boot_id, memory_order_acquire), pos, sw;

	if (old == log->boot_id)
		return 0;
	/* resv before the slot: a renewal (and the walk after it) done by
	 * another writer since is then seen, and since is the same for all */
	resv_load(log, &pos, &sw);
	renew_numbering(log, rs_seq(log, sw));
	take_in(log);
	atomic_store_explicit(&a->stall_pos, 0, memory_order_relaxed);
	atomic_compare_exchange_strong_explicit(&a->boot_id, &old, log->boot_id,
						memory_order_acq_rel, memory_order_acquire);
	return 0;
}

/* The first format's dynamic words as a reader can trust them. */
static int sane_v1(const struct kmsg_log *log, const struct kmsg_dyn_v1 *d)
{
	uint64_t head = atomic_load(&d->head), tail = atomic_load(&d->tail);
	uint64_t next = atomic_load(&d->next_seq), clear = atomic_load(&d->clear_seq);
	const uint64_t most = log->data_size / REC_HDR + 1;

	if (!(head <= tail && tail - head <= log->data_size &&
	      head % REC_ALIGN == 0 && tail % REC_ALIGN == 0 &&
	      tail < POS_LIMIT && next >= log->first_seq &&
	      next - log->first_seq <= tail / REC_HDR + most && clear <= next))
		return 0;
	head = ring_norm(log, head);
	if (head < tail) {
		struct rec_hdr r;
		if (!kmsg__rec_check(log, head, &r))
			return 0;  /* head is only ever stored on a record */
		if (!(r.flags & REC_PAD) && (r.seq >= next || next - r.seq > most))
			return 0;
	}
	return 1;
}

/* The format-2 checks, on one reading of the words. */
static int sane_v2(const struct kmsg_log *log, uint64_t head, uint64_t hs, uint64_t end,
		   uint64_t sw, int live)
{
	uint64_t next = rs_seq(log, sw);
	const uint64_t most = log->data_size / REC_HDR + 1;

	if (!(head <= end && end - head <= log->data_size - REC_HDR &&
	      head % REC_ALIGN == 0 && end % REC_ALIGN == 0 && end < POS_LIMIT &&
	      hs >= log->first_seq && hs <= next && next - hs <= most &&
	      (sw >> RESV_OWNER_BITS) < RESV_SEQ_MAX &&
	      next - log->first_seq <= end / REC_HDR + most))
		return 0;
	/* Evictors raise pass_to only over reserved blocks (E1): one past
	 * resv would make every writer's mark look passed (M2). */
	if (live && !log->private_hdr && atomic_load(&log->aux->pass_to) > end)
		return 0;
	/* The oldest block, if it is committed and intact, must fit. */
	head = ring_norm(log, head);
	if (live && head < end) {
		struct rec_hdr r;
		if (kmsg__rec_check(log, head, &r) && r.seq != hs)
			return 0;
	}
	return 1;
}

int kmsg__ring_sane(const struct kmsg_log *log, const void *dyn)
{
	const struct kmsg_dyn *d = dyn;
	int live = dyn == log->map + HDR_STATIC;

	if (log->version == KMSG_FORMAT_V1)
		return sane_v1(log, dyn);
	/* The log's own words change under writers, which no lock stops:
	 * read as pairs, and broken only if they read the same twice (a
	 * state that moves is one writers keep). */
	for (int tries = 0; tries < 8; tries++) {
		uint64_t head, hs, end, sw, h2, hs2, e2, sw2;

		pair_load(&d->head, &d->head_seq, &head, &hs);
		pair_load(&d->resv_seq, &d->resv_pos, &sw, &end);
		if (sane_v2(log, head, hs, end, sw, live))
			return 1;
		if (!live)
			return 0;
		pair_load(&d->head, &d->head_seq, &h2, &hs2);
		pair_load(&d->resv_seq, &d->resv_pos, &sw2, &e2);
		if (h2 == head && hs2 == hs && e2 == end && sw2 == sw)
			return 0;
	}
	return 1;
}

/*
 * The rebuild's scan: the first block at or after data offset *phys whose
 * tag names that offset and that passes its checks.  Leaves *phys at it,
 * its position in *at and its header in *r, and returns its length; 0 at
 * the end of the data area.  The caller steps on from *phys.
 */
static uint64_t next_placed(const struct kmsg_log *log, struct data_scan *sc, uint64_t *phys,
			    uint64_t *at, struct rec_hdr *r)
{
	const uint64_t D = log->data_size;

	for (uint64_t p = *phys; p + REC_HDR <= D; p += REC_ALIGN) {
		uint64_t a, len;

		if ((p = kmsg__scan_on(log, sc, p)) + REC_HDR > D)
			break;
		a = ((const struct rec_hdr *)(log->data + p))->tag;
		if (a % D != p || a >= POS_LIMIT || (len = kmsg__rec_check(log, a, r)) == 0)
			continue;
		*phys = p;
		*at = a;
		return len;
	}
	return 0;
}

/*
 * Rebuilds the dynamic words from the records themselves, for a dynamic
 * part that was lost or is inconsistent (a power cut that wrote back the
 * data but not the header page, or the reverse; a hostile edit).  Each
 * block carries the position it was written at, so one pass over the
 * data finds the newest run.  The result depends on the data alone, so
 * writers that do it at once agree; it is installed by compare-and-swap
 * from what was there.  On a reader's private header it touches only
 * that page.
 */
void kmsg__ring_rebuild(struct kmsg_log *log)
{
	const uint64_t D = log->data_size;
	uint64_t best_seq = 0, best_end = 0, found = 0, head, head_seq, next, window;
	uint64_t old_pos, old_next, old_ok;
	struct data_scan sc;
	struct rec_hdr r;

	if (log->version == KMSG_FORMAT_V1) {
		old_pos = atomic_load(&log->dyn1->tail);
		old_next = atomic_load(&log->dyn1->next_seq);
		old_ok = old_next >= log->first_seq && old_next < UINT64_MAX;
	} else {
		uint64_t sw = atomic_load(&log->dyn->resv_seq);
		old_pos = atomic_load(&log->dyn->resv_pos);
		old_next = rs_seq(log, sw);
		old_ok = (sw >> RESV_OWNER_BITS) < RESV_SEQ_MAX;
	}
	kmsg__scan_start(&sc, 0);
	for (uint64_t phys = 0, at, len; (len = next_placed(log, &sc, &phys, &at, &r)) != 0;) {
		/* The newest record is the one furthest on (positions only
		 * grow), numbering goes on after the highest number: the
		 * two are one record but where resv_seq lied lower, and then
		 * the records written after the lie must stay.  A number
		 * more than the positions up to it could have handed out
		 * came from a lying resv_seq: not believed. */
		if (!(r.flags & REC_PAD) &&
		    r.seq - log->first_seq <= (at + len) / REC_HDR + D / REC_HDR + 1) {
			if (!found || r.seq > best_seq)
				best_seq = r.seq;
			if (!found || at + len > best_end)
				best_end = at + len;
			found = 1;
		}
		phys += r.flags & REC_PAD ? REC_ALIGN : len;
	}
	if (!found) {
		/* No record survived: keep the numbering if it is believable
		 * (so that no number is handed out twice), else start over. */
		if (!old_ok || old_pos % REC_ALIGN || old_pos >= POS_LIMIT ||
		    old_next - log->first_seq > old_pos / REC_HDR) {
			old_pos = 0;
			old_next = log->first_seq;
		}
		head = best_end = old_pos;
		head_seq = next = old_next;
	} else {
		/* Head: the oldest valid record within a ring of the end, so
		 * that readers start on a record. */
		window = best_end > D ? best_end - D + REC_HDR : 0;
		head = best_end;
		head_seq = best_seq + 1;
		kmsg__scan_start(&sc, 0);
		for (uint64_t phys = 0, at, len; (len = next_placed(log, &sc, &phys, &at, &r)) != 0;) {
			if (at < window || at >= best_end) {
				phys += REC_ALIGN;  /* of an older lap */
				continue;
			}
			if (at < head) {
				head = at;
				head_seq = r.seq;
			}
			phys += r.flags & REC_PAD ? REC_ALIGN : len;
		}
		/* A ring that never came round evicted nothing (eviction
		 * begins within a header of the lap's end): its first block
		 * was at 0, numbered first_seq, and numbers missing before
		 * the oldest record found are damage (a zeroed first page),
		 * which readers then report, not numbers never handed out. */
		if (best_end + REC_HDR <= D && head > 0 && head_seq > log->first_seq) {
			head = 0;
			head_seq = log->first_seq;
		}
		/* The newest records may be the ones lost (a power cut that
		 * kept the header and not the last data pages): a believable
		 * larger number from the header wins, leaving a gap readers
		 * report as damaged. */
		next = best_seq + 1;
		if (old_ok && old_next > next && old_next - best_seq <= D / REC_HDR + 1) {
			if (!log->private_hdr)
				atomic_fetch_add(&log->aux->damaged, old_next - next);
			next = old_next;
		}
		/* Numbers no run of blocks up to best_end could have taken
		 * (a lying resv_seq that writers numbered on from) would
		 * fail the checks again, or leave no numbers: the most the
		 * positions allow instead, under the new identity below;
		 * readers report the records above it as out of order. */
		if (next - log->first_seq > best_end / REC_HDR + D / REC_HDR + 1) {
			next = log->first_seq + best_end / REC_HDR;
			if (head_seq > next || next - head_seq > D / REC_HDR + 1)
				head_seq = next;
		}
	}
	if (log->version == KMSG_FORMAT_V1) {
		/* a reader's private page only: writers upgrade first */
		struct kmsg_dyn_v1 *d = log->dyn1;
		atomic_store(&d->next_seq, next);
		atomic_store(&d->head, head);
		atomic_store(&d->tail, best_end);
		if (atomic_load(&d->clear_seq) > next)
			atomic_store(&d->clear_seq, log->first_seq);
		return;
	}
	{
		struct kmsg_dyn *d = log->dyn;
		uint64_t lo = atomic_load(&d->head), hi = atomic_load(&d->head_seq);

		kmsg__cas128(&d->head, &lo, &hi, head, head_seq);
		lo = atomic_load(&d->resv_pos);
		hi = atomic_load(&d->resv_seq);
		kmsg__cas128(&d->resv_pos, &lo, &hi, best_end, rs_make(log, next, OWNER_NONE));
	}
	if (!log->private_hdr) {
		struct kmsg_aux *a = log->aux;
		uint64_t clear = atomic_load(&a->clear_seq);

		atomic_store(&a->pass_to, head);
		/* A clear mark past the numbers handed out cannot be: nothing
		 * is taken as cleared (hiding records would be worse). */
		if (clear > next)
			atomic_store(&a->clear_seq, log->first_seq);
		/* Entries made from the state that is gone mean nothing now:
		 * a writer stopped in it may scribble when it resumes, which
		 * checksums show (a damaged header is already damage). */
		for (int i = 0; i < NQUAR; i++)
			atomic_store(&a->quar[i].state, QUAR_FREE);
		atomic_store(&a->qactive, 0);
		atomic_fetch_add(&a->qgen, 1);
		/* Numbers may repeat now: a new identity, at the next append,
		 * even in the boot the current one was made for. */
		atomic_store(&a->ident[atomic_load(&a->id_slot) & 1].boot, 0);
		atomic_store(&a->boot_id, 0);
	}
}

/* ---- for readers ------------------------------------------------------- */

int kmsg__ring_unfinished(const struct kmsg_log *log, uint64_t pos, const struct window *w,
			  uint64_t expect, uint64_t *len, uint64_t *seq)
{
	const uint64_t D = log->data_size;
	uint64_t phys = pos % D, tag = load_tag(log, phys);
	struct rec_hdr hd;

	*len = 0;
	if (log->version == KMSG_FORMAT_V1)
		return KMSG__BLOCK_DAMAGE;  /* only committed blocks below its tail */
	if (kmsg__ring_committed(log, pos, tag))
		return KMSG__BLOCK_AGAIN;   /* its writer committed it meanwhile */
	if (pos == 0 && tag == 0) {
		/* the first block of a new log, not yet marked, unless its
		 * tag changed since (BLOCK STATES) */
		if (load_tag(log, 0) != 0)
			return KMSG__BLOCK_AGAIN;
	} else if (tag_pos(tag) == pos && tag_state(tag) != ST_COMMITTED &&
	    tag_state(tag) <= ST_RELEASED) {
		memcpy(&hd, log->data + phys, REC_HDR);
		if (hd.len < REC_HDR || hd.len % REC_ALIGN || hd.len > D || pos + hd.len > w->end)
			return KMSG__BLOCK_DAMAGE;
		*len = hd.len;
		*seq = hd.seq;
		if (tag_state(tag) == ST_RESERVED) {
			if (kmsg__writer_alive(log, hd.owner, hd.boot_id))
				return KMSG__BLOCK_WAIT;
			if (load_tag(log, phys) != tag)                             /* L1 */
				return KMSG__BLOCK_AGAIN;
		}
		return KMSG__BLOCK_HOLE;
	} else if (tag_pos(tag) == pos || tag_damaged(log, pos, phys, tag)) {
		return KMSG__BLOCK_DAMAGE;  /* failed its checks, or its tag is hit */
	}
	{
		uint64_t y = next_mark(log, pos + REC_ALIGN, w->end, &hd), boot, yseq, blocks;
		unsigned owner;

		yseq = y < w->end ? hd.seq : w->end_seq;
		/* How many reservations the stretch holds, from the numbers:
		 * the owner known is the last one's, which tells of the
		 * first only if it is the only one. */
		blocks = expect != UINT64_MAX && yseq > expect &&
			 yseq - expect <= (y - pos) / REC_HDR + 1 ? yseq - expect : 0;
		if (blocks != 1)
			blocks = 0;
		stretch_owner(y, w, &hd, blocks, &owner, &boot);
		*len = y - pos;
		*seq = y < w->end ? hd.seq : 0;
		/* Passed by a writer already (E1): its own will not write it,
		 * unless it had marked it first (M1 before E1), which a second
		 * look at the tag, after pass_to, then sees.  What was passed
		 * ends at pass_to or at the first block marked by then, which
		 * a look after pass_to finds: the stretch measured before may
		 * have taken in a block marked and committed since. */
		if (!log->private_hdr) {
			uint64_t to = atomic_load_explicit(&log->aux->pass_to, memory_order_seq_cst);

			/* Blocks begin at multiples of 8: a word off them (a
			 * hostile file) means the same blocks as the next one,
			 * and must not put the reader off the grid. */
			to = to > POS_LIMIT ? POS_LIMIT : (to + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
			if (to > pos) {
				if (__atomic_load_n(&ring_block(log, phys)->tag, __ATOMIC_SEQ_CST) != tag)
					return KMSG__BLOCK_AGAIN;
				y = next_mark(log, pos + REC_ALIGN, y, &hd);
				*len = (y < to ? y : to) - pos;
				*seq = 0;
				return KMSG__BLOCK_HOLE;
			}
		}
		if (blocks ? kmsg__writer_alive(log, owner, boot) : kmsg__writers_alive(log, boot))
			return KMSG__BLOCK_WAIT;
		if (load_tag(log, phys) != tag)                                     /* L1 */
			return KMSG__BLOCK_AGAIN;
		return boot == log->boot_id ? KMSG__BLOCK_HOLE : KMSG__BLOCK_DAMAGE;
	}
}
