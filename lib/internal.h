/*
 * internal.h - the handle and the interfaces libkmsg's layers offer each
 * other, lowest first.  Each layer calls only those below it:
 *
 *	os.c       clocks, thread id, boot id, descriptors, locks, 128-bit CAS
 *	record.c   the record codec: checksums, checks, pads, fields
 *	file.c     mapping, validating, creating, upgrading a log file
 *	writer.c   writer registration, liveness, fork
 *	ring.c     reservation, eviction, stalled writers, recovery
 *	wake.c     followers: registering, waking, waiting
 *	append.c   the write path         iter.c  the read path (one record)
 *	                                  join.c  joining fragments into lines
 *	reader.c   the reader object      log.c   open, create, close, stat
 *	dump.c     compressed snapshots (over the reader)
 *
 * The file layout is layout.h; the protocol's overview (states, steps,
 * ordering) is at the top of ring.c; kmsg(5) says the same to users.
 * Functions shared between the sources carry the prefix kmsg__ (two
 * underscores): the static library puts them beside a program's own
 * symbols, and the public ones are kmsg_.
 */
#ifndef KMSG_INTERNAL_H
#define KMSG_INTERNAL_H

#include <kmsg/kmsg.h>
#include "layout.h"
#include "sized.h"

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

struct flock;

/*
 * Thread-local variables of the library: initial-exec, so that the write
 * path reaches them in one instruction, not a call to __tls_get_addr (a
 * position-independent library's default costs more than the rest of the
 * lookup they save).  They are few and small, well within the static TLS
 * space a library loaded with dlopen() may use.
 */
#define KMSG_TLS __thread __attribute__((tls_model("initial-exec")))

/* How long a block may stay unfinished before writers take its writer
 * for stopped (ring.c, STALLED WRITERS): writers then make it a hole, and
 * its writer, if it comes back, appends again. */
#define STALL_NS            (5 * 1000 * 1000)
/* How long a reader that cannot write waits at such a block before it
 * steps over it on its own: its writer does not learn of it, so a record
 * committed later is missed by this reader (not by the next).  Far longer
 * than any writer is descheduled on a loaded machine. */
#define READ_STALL_NS       (1000 * 1000 * 1000)
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
/* The fuzzers' build only: the same paths with waits of microseconds,
 * since many images hold blocks no writer will ever finish, and a
 * second's wait on each would leave the fuzzer idle. */
#undef STALL_NS
#undef READ_STALL_NS
#define STALL_NS            (50 * 1000)
#define READ_STALL_NS       (500 * 1000)
#endif
/* How often a writer looks for followers, and the reader's matching wait. */
#define FOLLOWER_PROBE_NS   (10 * 1000 * 1000)
/* How long a writer whose wake woke nobody only bumps the word. */
#define WAKE_QUIET_NS       (500 * 1000)

struct kmsg_log {
	int fd;
	/* the file's identity when opened: fd still names it?  (A program
	 * may close the descriptor behind the library's back and another
	 * file take its number: writer.c, kmsg__fd_is_log().) */
	uint64_t file_dev, file_ino;
	unsigned flags;           /* KMSG_OPEN_* */
	unsigned version;         /* the format as opened: 1 (read only) or 2 */
	unsigned char *map;
	uint64_t map_size;
	uint64_t opened_size;     /* the file's size when it was mapped */
	int private_hdr;          /* a reader's own copy of a damaged header */
	uint8_t ring_id[16];      /* the ring opened: the file may be written over */
	struct kmsg_static *st;   /* map + 0 */
	struct kmsg_dyn *dyn;     /* map + 128, format 2 */
	struct kmsg_dyn_v1 *dyn1; /* map + 128, format 1 */
	struct kmsg_aux *aux;     /* format 2 */
	unsigned char *data;
	uint64_t data_size;
	uint64_t first_seq;
	uint32_t max_text;
	uint64_t max_rec;         /* largest record the ring takes */
	/* iter.c's bulk buffers (B1) a reader freed, for the next one */
	unsigned char *_Atomic bulk_spare;
	uint64_t batch;           /* eviction runs this far ahead (ring.c) */
	uint64_t boot_id;
	uint32_t pid;
	uint64_t serial;          /* unique among the handles this process opened */

	/* writers (writer.c) */
	unsigned owner;           /* OWNER_*, or 0 before registration */
	uint64_t lock_byte;       /* the OFD lock that says we live, 0 if none */
	unsigned kin_owner;       /* an id whose lock is on our own description
	                             (a parent's, after a fork that could not
	                             give us one of our own): alive to us */
	_Atomic unsigned fork_gen; /* fork generation the registration is of */
	/* A handle may be shared by threads: these are atomics. */
	_Atomic int64_t next_probe_ns; /* when to look for followers again */
	_Atomic int followers;    /* a follower was seen at the last probe */
	_Atomic int64_t quiet_until_ns; /* CLOCK_BOOTTIME: no FUTEX_WAKE before */

	/* readers */
	int follower_registered;
	int64_t follower_since_ns;

	/* every open handle, for the fork child handler (writer.c, FORK) */
	struct kmsg_log *next_handle, *prev_handle;
};

/* ---- os.c --------------------------------------------------------------- */

int64_t kmsg__clock_ns(int clock);

/*
 * How long ago since was, at now: for a time read from the file, which
 * may hold any value.  0 for a since later than now (a note of another
 * boot's clock), INT64_MAX at most: never an overflow.
 */
static inline int64_t kmsg__elapsed_ns(int64_t now, int64_t since)
{
	uint64_t d;

	if (since >= now)
		return 0;
	d = (uint64_t)now - (uint64_t)since;
	return d > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)d;
}
/* kmsg_caller_id(), and the calling thread's, remembered. */
uint32_t kmsg__caller_id(uint32_t id);
extern KMSG_TLS uint32_t kmsg__caller_cache;
uint32_t kmsg__caller_slow(void);
void kmsg__caller_forget(void);            /* for a fork child */
void kmsg__lines_forget(void);             /* append.c, for a fork child */

/* The calling thread's caller id (kmsg_caller_id of its gettid()), cached */
static inline uint32_t kmsg__self_caller(void)
{
	return kmsg__caller_cache ? kmsg__caller_cache : kmsg__caller_slow();
}
uint64_t kmsg__read_boot_id(void);
uint64_t kmsg__random64(void);
int kmsg__fd_off_stdio(int fd);         /* never a log on fd 0, 1 or 2 */
/* One OFD lock command on [off, off + len); fills *out when not NULL. */
int kmsg__ofd_lock(int fd, int cmd, short type, uint64_t off, uint64_t len,
		   struct flock *out);
void kmsg__cpu_relax(void);

/*
 * Fetches the cache line at p for writing: in the exclusive state, where
 * a plain prefetch or load would bring it shared, and the store or
 * compare-and-swap that follows would then take a second trip between
 * cores to own it.  PREFETCHW where the CPU has it (os.c checks once).
 */
extern int kmsg__have_prefetchw;
static inline void kmsg__prefetchw(const void *p)
{
#if defined(__x86_64__)
	if (kmsg__have_prefetchw)
		__asm__ __volatile__("prefetchw %0" : : "m"(*(const char *)p));
	else
		__builtin_prefetch(p, 1);
#else
	__builtin_prefetch(p, 1);
#endif
}
void kmsg__cpu_init(void);              /* sets kmsg__have_prefetchw */
/* Sleeps ns (at most a second), for the bounded waits. */
void kmsg__nap(int64_t ns);

/*
 * Compares the 16 bytes at p (16-byte aligned) with *lo, *hi and, if
 * equal, stores nlo, nhi; returns 1.  Else returns 0 with *lo, *hi set
 * to what is there.  Sequentially consistent.  x86-64 (cmpxchg16b) and
 * AArch64 only: the reservation needs it.
 */
static inline int kmsg__cas128(void *p, uint64_t *lo, uint64_t *hi, uint64_t nlo, uint64_t nhi)
{
#if defined(__x86_64__)
	unsigned char ok;
	__asm__ __volatile__("lock cmpxchg16b %1\n\tsete %0"
			     : "=q"(ok), "+m"(*(volatile unsigned __int128 *)p),
			       "+a"(*lo), "+d"(*hi)
			     : "b"(nlo), "c"(nhi)
			     : "memory", "cc");
	return ok;
#elif defined(__aarch64__)
	uint64_t olo, ohi;
	uint32_t fail;
	do {
		__asm__ __volatile__("ldaxp %0, %1, [%2]"
				     : "=&r"(olo), "=&r"(ohi) : "r"(p) : "memory");
		if (olo != *lo || ohi != *hi) {
			__asm__ __volatile__("clrex" ::: "memory");
			*lo = olo;
			*hi = ohi;
			return 0;
		}
		__asm__ __volatile__("stlxp %w0, %2, %3, [%1]"
				     : "=&r"(fail) : "r"(p), "r"(nlo), "r"(nhi) : "memory");
	} while (fail);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 1;
#else
#error "libkmsg needs a 16-byte compare-and-swap (x86-64 or AArch64)"
#endif
}

/* ---- record.c: the codec ------------------------------------------------- */

/*
 * The checksum of a block: crc32c over bytes 24 up to the end of the
 * padded payload (times, identity, lengths, owner, text, fields, zero
 * padding; for a pad, the header only), then over seq, the position and
 * the first word (length and prev_owner) as three little-endian 64-bit
 * words.  The same in both formats (a format-1 record's prev_owner is 0).
 * All but the last three words is known before a writer reserves.
 */
uint32_t kmsg__rec_crc_body(const void *rec, uint32_t end);
uint32_t kmsg__rec_crc_finish(uint32_t body_crc, uint64_t seq, uint64_t pos, uint32_t lenword);
/* The whole checksum of a block being copied: its header is already at
 * dst, the rest up to end is copied from src as it is summed.  dst NULL:
 * the block at src is summed where it is (a private copy already). */
uint32_t kmsg__rec_crc_copy(unsigned char *dst, const unsigned char *src, uint32_t end,
			   uint64_t seq, uint64_t pos, uint32_t lenword);
/*
 * The header checks of a committed block (record or pad) at logical
 * position pos, data offset phys, for a copy of its header at p: its
 * length if it is plausible, else 0.  No checksum.
 */
uint64_t kmsg__rec_header_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			     const unsigned char *p);
/* The same for a header already copied out of the mapping. */
uint64_t kmsg__rec_header_ok(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			     const struct rec_hdr *h);
/*
 * Checks the committed block at pos whose bytes (in the mapping or a
 * copy) are at p: its length if whole and valid, 0 otherwise.  The
 * header is copied once, checked and used from that copy (a writer may
 * change the mapping between two reads); hd gets that copy if not NULL.
 */
uint64_t kmsg__rec_check_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			    const unsigned char *p, struct rec_hdr *hd);
/* The same for the block at pos in the mapping. */
uint64_t kmsg__rec_check(const struct kmsg_log *log, uint64_t pos, struct rec_hdr *hd);
/*
 * A committed pad block at pos of len bytes, numbered seq.  In format 2
 * it names its writer, the writer of the block before it and its boot,
 * as a record does (ring.c, stretch_owner()); in format 1 none.
 */
void kmsg__rec_pad(struct rec_hdr *pad, uint64_t pos, uint64_t seq, uint32_t len,
		   unsigned owner, unsigned prev_owner, uint64_t boot_id, int v1);
/* The checksum of the static header (bytes 0..123). */
uint32_t kmsg__hdr_crc(const void *hdr);
/* Fields: the bytes they take (KMSG_EFIELD, KMSG_EINVAL), and writing them. */
int kmsg__fields_check(size_t *total, const struct kmsg_entry *e);
void kmsg__fields_put(unsigned char *p, const struct kmsg_entry *e);

/* ---- file.c: the file ---------------------------------------------------- */

/*
 * Validates and maps the log on fd (file.c has the rules), filling the
 * handle's layout fields.  *repair is set when the dynamic part cannot be
 * trusted (the header came from its backup, or the file was cut short
 * and restored).  A format-1 log opened for writing is upgraded to
 * format 2 first.  On failure nothing is left mapped.
 */
int kmsg__file_map(struct kmsg_log *log, int *repair);
void kmsg__file_unmap(struct kmsg_log *log);
/* For a reader of a damaged header: the header page becomes a private,
 * writable copy (the caller fills it, then calls kmsg__file_seal). */
int kmsg__file_private_header(struct kmsg_log *log);
void kmsg__file_seal(struct kmsg_log *log);
/* Makes a new log file at path (file.c, CREATE); *fd is open on it.  With
 * flags' KMSG_OPEN_ONE_HOST it may be on a file system others share. */
int kmsg__file_create(int *fd, const char *path, const struct kmsg_create_opts *o,
		      unsigned flags);
int kmsg__file_check_opts(const struct kmsg_create_opts *o);
/* The static header of the file on fd, checked as at open, with its size. */
int kmsg__file_read_static(int fd, struct kmsg_static *h, uint64_t *size);
/* MAKING IN PLACE (file.c): makes the log in the empty file on fd, unless
 * another maker did first; 0, KMSG_EBUSY or -errno. */
int kmsg__file_make_in(int fd, const struct kmsg_create_opts *o);
/* Waits while a maker holds the file on fd (at most a few seconds): 0, or
 * KMSG_EBUSY if one still does. */
int kmsg__file_wait_maker(int fd);
/* The name of fd's file system if other machines can share the file
 * (kmsg_shared_fs_name()), else NULL. */
const char *kmsg__shared_fs(int fd);

/*
 * The largest file this build maps whole: SIZE_MAX, the most a size_t
 * can say (on a 32-bit build, less than 4 GiB; a log of 64 TiB fits a
 * 64-bit one).  A test lowers it to play a 32-bit build.
 */
extern uint64_t kmsg__map_limit;

/*
 * 0 if a file of size bytes can be mapped whole, else KMSG_ETOOBIG: every
 * size read from a file or asked for is checked with it before it becomes
 * a size_t, so that a log too large for the address space is refused,
 * never mapped cut to size_t and read as other bytes.
 */
static inline int kmsg__file_mappable(uint64_t size)
{
	return size <= kmsg__map_limit ? 0 : KMSG_ETOOBIG;
}

/* ---- writer.c: who writes ------------------------------------------------ */

/* Gives the handle an owner id and the lock that says it lives. */
int kmsg__writer_register(struct kmsg_log *log);
extern _Atomic unsigned kmsg__fork_gen;
int kmsg__writer_ready_slow(struct kmsg_log *log);

/* 0 once the handle is registered in this process (FORK in writer.c). */
static inline int kmsg__writer_ready(struct kmsg_log *log)
{
	if (atomic_load_explicit(&log->fork_gen, memory_order_acquire) ==
	    atomic_load_explicit(&kmsg__fork_gen, memory_order_relaxed))
		return 0;
	return kmsg__writer_ready_slow(log);
}
/* 1 if the writer with this owner id may be alive in boot, 0 if not. */
/* Does fd name the file log was opened on?  Async-signal-safe. */
int kmsg__fd_is_log(const struct kmsg_log *log, int fd);
int kmsg__writer_alive(const struct kmsg_log *log, unsigned owner, uint64_t boot);
/* 1 if any writer of boot may be alive: for a block whose writer's id is
 * not known. */
int kmsg__writers_alive(const struct kmsg_log *log, uint64_t boot);
/* Puts an opened handle on the list the fork handler walks, or off it. */
void kmsg__handles_add(struct kmsg_log *log);
void kmsg__handles_remove(struct kmsg_log *log);

/* ---- ring.c: the ring ---------------------------------------------------- */

/*
 * What a reader may read: head, the end (the newest reservation's end,
 * or a format-1 log's tail) and the number the block there will get,
 * and the owner of the newest reservation.  A window no writer could
 * have left gives KMSG_ECORRUPT.
 */
struct window {
	uint64_t head, end, end_seq;
	uint64_t head_seq;       /* the number at head; UINT64_MAX if unknown */
	unsigned end_owner;      /* the newest reservation's writer */
	uint64_t end_boot;       /*   and its boot */
};
int kmsg__ring_window(const struct kmsg_log *log, struct window *w);
/*
 * pos % data_size.  That is a 64-bit division, dearer than the rest of a
 * block's checks; positions move forward through a lap, so a remembered
 * offset plus the distance is the answer until the lap ends.  Per thread.
 */
struct kmsg__phys_cache { uint64_t d, at, off; };
extern KMSG_TLS struct kmsg__phys_cache kmsg__phys_cache;

static inline uint64_t kmsg__ring_phys(const struct kmsg_log *log, uint64_t pos)
{
	struct kmsg__phys_cache *c = &kmsg__phys_cache;

	if (c->d == log->data_size && pos >= c->at && pos - c->at < c->d - c->off)
		return c->off + (pos - c->at);
	c->d = log->data_size;
	c->at = pos;
	c->off = pos % log->data_size;
	return c->off;
}
/* resv_seq: the number (less first_seq) and the newest reserver's owner. */
static inline uint64_t rs_seq(const struct kmsg_log *log, uint64_t w)
{
	return log->first_seq + (w >> RESV_OWNER_BITS);
}

static inline unsigned rs_owner(uint64_t w)
{
	return (unsigned)(w & ((1u << RESV_OWNER_BITS) - 1));
}

static inline uint64_t rs_make(const struct kmsg_log *log, uint64_t seq, unsigned owner)
{
	return (seq - log->first_seq) << RESV_OWNER_BITS | owner;
}

/* The general reservation (ring.c, W2-W4, and the pad's W5). */
int kmsg__ring_reserve_slow(struct kmsg_log *log, uint64_t len, struct rec_hdr **blk,
			    uint64_t *rpos, uint64_t *seq, unsigned *prev_owner);

/*
 * A reservation of len bytes for one record: on success the record goes
 * at *rpos (its header at *blk) with number *seq, and the pad before it,
 * if any, is written.  The caller writes the record (kmsg__ring_mark,
 * then commit).  Returns 0, KMSG_ESEQ, KMSG_EBUSY, or 1 if the
 * reservation was passed before it was marked (start again).
 *
 * Inline here is the common case only: room before the end of the lap,
 * no quarantined stretch anywhere, no eviction due; W2-W4 as ring.c
 * has them, in a few instructions.  Everything else is the slow path's.
 */
static inline int kmsg__ring_reserve(struct kmsg_log *log, uint64_t len, struct rec_hdr **blk,
				     uint64_t *rpos, uint64_t *seq, unsigned *prev_owner)
{
	const uint64_t D = log->data_size;
	uint64_t pos, sw, phys, end;
	unsigned char *at;

	/* the reservation's line, owned before it is read: the
	 * compare-and-swap then finds it here (one trip between cores) */
	kmsg__prefetchw(&log->dyn->resv_pos);
	pos = atomic_load_explicit(&log->dyn->resv_pos, memory_order_acquire);      /* A2 */
	sw = atomic_load_explicit(&log->dyn->resv_seq, memory_order_acquire);
	/* A compare-and-swap that fails hands back the words as they are,
	 * with their line owned here: another writer won, try right after
	 * it.  Anything but the common case is the slow path's. */
	for (int tries = 0; tries < 4; tries++) {
		phys = kmsg__ring_phys(log, pos);
		end = pos + len;
		at = log->data + phys;
		/* a number more than the positions allow is a lie, and
		 * below POS_LIMIT - 2 * D none reaches RESV_SEQ_MAX */
		if (D - phys < len || (sw >> RESV_OWNER_BITS) > pos / REC_HDR + D / REC_HDR + 1 ||
		    pos >= POS_LIMIT - 2 * D || pos % REC_ALIGN ||  /* a lie */
		    /* head must be in [end + 64 - D, pos]: eviction due, or a lie */
		    (end + REC_HDR > D &&
		     atomic_load_explicit(&log->dyn->head, memory_order_acquire) -
		     (end + REC_HDR - D) > D - REC_HDR - len) ||
		    atomic_load_explicit(&log->aux->qactive, memory_order_acquire))      /* Q2 */
			break;
		if (kmsg__cas128(&log->dyn->resv_pos, &pos, &sw, end,
				 rs_make(log, rs_seq(log, sw) + 1, log->owner))) {          /* A1 */
			/* the record's first line, fetched while its header is
			 * put together: the stores to it, and the locked
			 * instructions after those, then do not wait as long */
			kmsg__prefetchw(at);
			*blk = (struct rec_hdr *)at;
			*rpos = pos;
			*seq = rs_seq(log, sw);
			*prev_owner = rs_owner(sw);
			return 0;
		}
	}
	return kmsg__ring_reserve_slow(log, len, blk, rpos, seq, prev_owner);
}
/* For a writer passed again and again: the dynamic words checked, and
 * rebuilt if they lie (ring.c, A LYING HEADER). */
void kmsg__ring_recheck(struct kmsg_log *log);
/* The slow half of kmsg__ring_mark(). */
void kmsg__ring_release_passed(struct rec_hdr *blk, uint64_t rpos);

/*
 * W5 (ring.c): publishes the header at blk (position rpos) as the
 * reservation's mark (RESERVED) and checks that no evictor passed it
 * unmarked: 0, or 1 if one did (the block is released; start again).
 * Inline, with W7, for the write path: a call costs as much as a check.
 */
static inline int kmsg__ring_mark(const struct kmsg_log *log, struct rec_hdr *b, uint64_t rpos)
{
	__atomic_exchange_n(&b->tag, rpos | ST_RESERVED, __ATOMIC_SEQ_CST);        /* M1 */
	if (atomic_load_explicit(&log->aux->pass_to, memory_order_seq_cst) <= rpos) /* M2 */
		return 0;
	kmsg__ring_release_passed(b, rpos);
	return 1;
}

/* W7: the commit: 0, or 1 if an evictor gave the block up (start again). */
static inline int kmsg__ring_commit(struct rec_hdr *b, uint64_t rpos)
{
	uint64_t want = rpos | ST_RESERVED;

	if (__atomic_compare_exchange_n(&b->tag, &want, rpos, 0,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))               /* C1 */
		return 0;
	/* An evictor made it a HOLE (C2): this is the writer's last store to
	 * it, after which its quarantine may be lifted.  Any other tag is
	 * another writer's block at the same place (a resv that lied), not
	 * this one's to change. */
	if (want == (rpos | ST_HOLE))
		__atomic_store_n(&b->tag, rpos | ST_RELEASED, __ATOMIC_RELEASE);
	return 1;
}
/*
 * TIME ORDER (ring.c): a record's wall time may lag one reserved before
 * it by up to 2 * TIME_SLACK_NS and still count as in order; one that
 * lags more moves time_break past itself [T1, T2].
 */
#define TIME_SLACK_NS ((int64_t)1000 * 1000 * 1000)

/* wall_mark's low bit: a lowering whose time_break is not raised yet. */
#define MARK_PENDING 1

/* What T1 saw, for T2. */
struct time_look {
	uint64_t lowered;
};
/* The slow halves of T1 and T2 (ring.c). */
void kmsg__time_raise(struct kmsg_log *log, int64_t real_ns);
void kmsg__time_break(struct kmsg_log *log, int64_t real_ns, int64_t mark);

/* Is t more than 2 * TIME_SLACK_NS past mark m (no overflow)? */
static inline int time_ahead(int64_t t, int64_t m)
{
	m &= ~(int64_t)MARK_PENDING;
	return t > m && (uint64_t)t - (uint64_t)m > 2 * (uint64_t)TIME_SLACK_NS;
}

/* T1, before W4: wall_mark >= real_ns - 2 * TIME_SLACK_NS. */
static inline void kmsg__time_before(struct kmsg_log *log, int64_t real_ns,
				     struct time_look *look)
{
	struct kmsg_aux *a = log->aux;
	int64_t m;

	look->lowered = atomic_load_explicit(&a->lowered, memory_order_acquire);     /* T1 */
	m = atomic_load_explicit(&a->wall_mark, memory_order_relaxed);
	if (m == 0 || time_ahead(real_ns, m))
		kmsg__time_raise(log, real_ns);
}

/* T2, after W5 (so after the sequentially consistent W4 and M1). */
static inline void kmsg__time_after(struct kmsg_log *log, int64_t real_ns,
				    const struct time_look *look)
{
	struct kmsg_aux *a = log->aux;
	uint64_t lowered = atomic_load_explicit(&a->lowered, memory_order_seq_cst);  /* T2 */
	int64_t m = atomic_load_explicit(&a->wall_mark, memory_order_seq_cst);

	if (lowered != look->lowered || (m & MARK_PENDING) || m == 0 ||
	    real_ns < m || time_ahead(real_ns, m))
		kmsg__time_break(log, real_ns, m);
}

/* Brings the dynamic state into this boot: a no-op once it is. */
int kmsg__ring_enter_boot(struct kmsg_log *log);
/*
 * Are the dynamic words at dyn (the log's own, or a copy read from its
 * file) ones a reader can work from?  In the log's format.
 */
int kmsg__ring_sane(const struct kmsg_log *log, const void *dyn);
/* Rebuilds the dynamic words from the records (a damaged header). */
void kmsg__ring_rebuild(struct kmsg_log *log);
/* The numbering's identity as readers see it (see kmsg_stat). */
void kmsg__ring_numbering(const struct kmsg_log *log, struct kmsg_stat *st);
uint64_t kmsg__ring_seq_id(const struct kmsg_log *log);
/*
 * The state of the block at pos (< the window's end) for a reader that
 * found no committed block there and expects the number expect there
 * (UINT64_MAX if it cannot tell): KMSG__BLOCK_*, with *len the bytes to
 * step over (0 if unknown yet) and *seq its number if known.
 */
/*
 * Is the block at pos, whose tag was loaded as pos (committed), really
 * committed?  Always, but at position 0 (BLOCK STATES, the first block):
 * there a new file's zeroed tag reads as committed before any writer has
 * marked the block, and only a whole block whose tag is still 0 after
 * its checksum was loaded is one.  Costs a compare elsewhere.
 */
int kmsg__ring_first_committed(const struct kmsg_log *log);
static inline int kmsg__ring_committed(const struct kmsg_log *log, uint64_t pos, uint64_t tag)
{
	return tag == pos && (pos != 0 || kmsg__ring_first_committed(log));
}
enum { KMSG__BLOCK_WAIT, KMSG__BLOCK_HOLE, KMSG__BLOCK_DAMAGE,
       KMSG__BLOCK_AGAIN /* its tag changed since: look again */ };
int kmsg__ring_unfinished(const struct kmsg_log *log, uint64_t pos, const struct window *w,
			  uint64_t expect, uint64_t *len, uint64_t *seq);
/*
 * For a reader that may write (kmsg read -c): gives up the unfinished
 * block at pos (numbered seq, if known) as an evictor passing it would,
 * so that its writer's commit fails and it appends again; head stays.
 */
void kmsg__ring_give_up(struct kmsg_log *log, uint64_t pos, uint64_t seq);
/* Head alone (acquire), as a reader's check after a copy needs it [H2]. */
uint64_t kmsg__ring_head(const struct kmsg_log *log);

/* Position after an implicit wrap: the end of a lap has no room for a header. */
static inline uint64_t ring_norm(const struct kmsg_log *log, uint64_t pos)
{
	uint64_t phys = pos % log->data_size;
	return log->data_size - phys < REC_HDR ? pos + (log->data_size - phys) : pos;
}

/*
 * Scans of the data area 8 bytes at a time (across damage, or an unmarked
 * stretch) ask the file where its bytes are once they have looked at
 * SCAN_DIRECT bytes, and then once per stretch of bytes: a hole reads as
 * zeros, which are no block, so a sparse file that claims terabytes (a
 * hostile one) costs what it holds, not what it claims.
 */
#define SCAN_DIRECT 4096u
struct data_scan {
	uint64_t look_at;   /* the position at which to ask next */
};

static inline void kmsg__scan_start(struct data_scan *s, uint64_t from)
{
	s->look_at = from + SCAN_DIRECT;
}

/* The slow half of kmsg__scan_on() (file.c). */
uint64_t kmsg__scan_look(const struct kmsg_log *log, struct data_scan *s, uint64_t q);

/* Position q of a scan, or the first one past the hole q lies in. */
static inline uint64_t kmsg__scan_on(const struct kmsg_log *log, struct data_scan *s, uint64_t q)
{
	return q < s->look_at ? q : kmsg__scan_look(log, s, q);
}

/* The record header at pos, as it lies in the mapping. */
static inline struct rec_hdr *ring_block(const struct kmsg_log *log, uint64_t phys)
{
	return (struct rec_hdr *)(log->data + phys);
}

/* ---- log.c, reader.c: for dump.c -------------------------------------- */

/* Opens the log on fd as kmsg_log_open() does; on success the log owns fd. */
int kmsg__log_open_fd(struct kmsg_log **out, int fd, unsigned flags);
/* Did the reader's last record report a gap from being overtaken (not
 * from writers that never finished)? */
int kmsg__reader_overtaken(const struct kmsg_reader *r);
/* kmsg__iter_bulk() of the reader's iterator; returns how many blocks it
 * took from bulk copies since the last call. */
uint64_t kmsg__reader_bulk(struct kmsg_reader *r, uint32_t chunk, uint32_t from);

/* ---- wake.c: followers --------------------------------------------------- */

_Atomic uint32_t *kmsg__wake_word(const struct kmsg_log *log);
_Atomic uint32_t *kmsg__wake_deferrals(const struct kmsg_log *log);
void kmsg__wake_slow(struct kmsg_log *log, int64_t now_boot_ns);

/*
 * W8, after an append: wakes followers if any exist (wake.c, WAKING
 * FOLLOWERS).  Inline, the common case: nobody follows, and the next
 * look for followers is not due.
 */
static inline void kmsg__wake_after_append(struct kmsg_log *log, int64_t now)
{
	int64_t next = atomic_load_explicit(&log->next_probe_ns, memory_order_relaxed);

	if (now < next && now >= next - FOLLOWER_PROBE_NS &&
	    !atomic_load_explicit(&log->followers, memory_order_relaxed))
		return;
	kmsg__wake_slow(log, now);
}
int kmsg__wake_register_follower(struct kmsg_log *log);

/* ---- iter.c: reading one record at a time -------------------------------- */

struct kmsg_iter {
	struct kmsg_log *log;
	uint64_t pos;            /* logical position of the next block */
	uint64_t expect;         /* the number of the next record */
	int expect_known;        /* 0 only for a log too damaged to tell */
	int overtaken;           /* restarted at head since the last record */
	int in_damage;           /* skipping a damaged stretch */
	uint64_t holes;          /* unfinished appends passed since the last record */
	uint64_t wait_pos;       /* a block in progress met at this position */
	int64_t wait_since;      /*   since (CLOCK_BOOTTIME) */
	int last_overtaken;      /* the last record's gap came from being overtaken */
	uint64_t gave_up;        /* 1 + the block it last gave up (kmsg__ring_give_up) */
	/* After a seek that landed before blocks in progress (seek_by()):
	 * the records before floor_end whose key is below the seek's are
	 * stepped over, and the first gap counts from floor_seq. */
	int floored;
	uint64_t floor_end, floor_seq;
	int64_t floor_ns;
	unsigned char *buf;      /* copy of the current record */
	/* Bulk copies of the blocks ahead, far from the end (B1, ring.c):
	 * bulk_seen is the first copy, bulk the second, both of bulk_len
	 * bytes from position bulk_pos; NULL until first needed. */
	unsigned char *bulk, *bulk_seen; /* bulk_chunk bytes each */
	uint64_t bulk_pos;
	size_t bulk_len;
	uint64_t bulk_head;      /* head just after the copies were made (H2) */
	uint32_t bulk_chunk, bulk_from; /* their sizes, and how far from the end */
	uint64_t bulk_used;      /* blocks taken from the copies (for tests) */
};
int kmsg__iter_init(struct kmsg_iter *it, struct kmsg_log *log);
void kmsg__iter_free(struct kmsg_iter *it);
/* The next record: 1, 0 at the end, or a negative code (iter.c). */
int kmsg__iter_next(struct kmsg_iter *it, struct kmsg_record *rec);
int kmsg__iter_seek(struct kmsg_iter *it, enum kmsg_whence whence);
int kmsg__iter_seek_seq(struct kmsg_iter *it, uint64_t seq);
int kmsg__iter_seek_time(struct kmsg_iter *it, int64_t real_ns);
/* Is a record (or a block to step over) ready at the iterator's position? */
int kmsg__iter_ready(struct kmsg_iter *it);
/* Bulk copies (B1) of chunk bytes where the end is from bytes away or
 * more; chunk 0: none.  For tests and the fuzzer: small copies exercise
 * the boundaries in small logs. */
void kmsg__iter_bulk(struct kmsg_iter *it, uint32_t chunk, uint32_t from);
/* ---- join.c: joining fragments into lines -------------------------------- */

struct kmsg_joiner;
int kmsg__join_new(struct kmsg_joiner **out, unsigned flags);
void kmsg__join_free(struct kmsg_joiner *j);
/* The next line (or lone record, or gap) from the iterator: as
 * kmsg_reader_next() returns. */
int kmsg__join_next(struct kmsg_joiner *j, struct kmsg_iter *it, struct kmsg_record *out);
/* Forgets every open and waiting line (the reader moved). */
void kmsg__join_drop(struct kmsg_joiner *j);
/* The lowest number of a line open or waiting, if below *p. */
void kmsg__join_position(const struct kmsg_joiner *j, uint64_t *p);
/* A line is waiting to be returned. */
int kmsg__join_ready(const struct kmsg_joiner *j);
void kmsg__join_flush(struct kmsg_joiner *j, int64_t older_than_real_ns);

/*
 * The oldest valid record: its position and number (at the end, the end
 * and the number the next record gets).  0, a negative code, or 1 if
 * writers overtook every try.
 */
int kmsg__ring_oldest(const struct kmsg_log *log, uint64_t *pos, uint64_t *seq);

#endif
