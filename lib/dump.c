/*
 * dump.c - compressed snapshots of a log, and opening them.
 *
 * A dump is one gzip member.  What it decompresses to is a complete kmsg
 * log file of its own, so gunzip and kmsg_log_open() read it as well as
 * kmsg_dump_open() does.  The static header is the source's (same ring id,
 * creation time, max text and first sequence number, so a dump can be tied
 * to the log it came from) with a file and data size of the dump's own.
 * The records keep their sequence numbers, times, boot id, pid, caller,
 * priority, flags, text and fields; only their position field and CRC
 * change for where they now lie.  The counters (evicted, damaged, and
 * the holes of unfinished appends, in the first format's takeovers
 * word) and clear_seq are the source's at the start of the dump.
 *
 * THE LAYOUT, AND WHY
 *
 * gzip is written front to back and a dump never holds more than a batch
 * of records in memory, yet the header, which comes first, names the tail
 * and the next sequence number: both depend on records not read yet.  So
 * the dump fixes them in advance and makes the records fit.  With L the
 * largest record a writer can append to the source:
 *
 *	N  the source's next_seq once the oldest record is in hand: records
 *	   below it are copied, and the dump's next_seq is N (but see THE
 *	   COUNT);
 *	X  the bytes between the source's head and tail then, or, if less,
 *	   what its records below N measure packed, with L for each number
 *	   that may yet become a record (records_need(): so a window that
 *	   claims far more than its records hold makes a dump of their
 *	   size); plus 2L: room for the oldest record, which writers may
 *	   evict just after it was copied, and for the one a writer may be
 *	   publishing with a number below N.  The copied records, packed
 *	   back to back without the source's pads, need at most X bytes (or
 *	   the dump starts again);
 *	D  the dump's data size: at least X and at least 8L (and the file
 *	   size a multiple of 4096);
 *	tail = a multiple of D, head = tail - X.
 *
 * The records lie back to back from head; the rest of the X bytes becomes
 * a pad record to the end of the data area (or, under 64 bytes, the short
 * remainder every reader skips).  Unless the source is damaged, that rest
 * is at most 3L (the 2L above and one pad of the source), within D / 2, so
 * the pad passes every check of a record.  (Readers that copy whole
 * records into a buffer of L bytes take a pad longer than that for a
 * damaged stretch and scan over it; with no record after it they report
 * nothing.  A rest too long even for a pad, left by damaged stretches of
 * the source, stays zeros and is scanned over the same way.)  The D - X
 * bytes before head, at most 8L, are zeros no reader looks at.  tail is
 * the first multiple of D large enough that N - first_seq records could
 * have been written before it, as a log's header must promise.  So the
 * file passes every check of a log; a writer that opens a gunzipped dump
 * rebuilds the dynamic part from the records, as it does for any file
 * last written in another boot.
 *
 * CONSISTENCY
 *
 * Records are copied through an ordinary reader, oldest first, while
 * writers go on appending.  In a full ring every append evicts the oldest
 * record, so the copy starts right at the edge writers eat into: the first
 * batch of records (IN_BUF bytes) is read before anything is compressed,
 * to get ahead of them, and the dump keeps ahead as long as it compresses
 * faster than they write.  A writer that overwrites a record before it is
 * copied shows as lost records in the reader; the dump then starts again
 * (the output truncated back when it is a regular file), a few times at
 * most, then -EAGAIN.  An output that cannot be rewound (a pipe) is left
 * unfinished and -EAGAIN returned at once: its gzip stream has no end, so
 * no reader takes a dump with a hole in it for a whole one.
 *
 * THE COUNT
 *
 * A dump's readers take every number from its first record to N as a
 * record it holds or one it reports missing, and kmsg stat counts them so.
 * A number below N whose append is still in progress when the copy gets
 * there (its writer stopped between its steps) is waited for a while, as
 * a reader that may not write waits, and then left out.  Missing before a
 * later record, it is a gap every reader reports, as the source's do.
 * After the last record, the dump's N is lowered to where its records
 * end: the snapshot ends before the unfinished append rather than claim
 * a record it does not hold.  The plan's measure (records_need()) does it
 * first, for appends unfinished when the dump begins, pipes too.  One
 * that stops after it: the header goes out with the first batch of
 * records, so N is lowered in it while it is still held back; once it is
 * out, the dump starts again with N bounded there when the output can be
 * rewound.  Only a dump to a pipe of more than a batch then keeps N, and
 * its readers report those numbers missing at its end (as damaged:
 * format 1 has no holes).
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define DUMP_ATTEMPTS 4
#define OUT_BUF   (128u * 1024u)  /* compressed bytes per write() */
#define IN_BUF    (1024u * 1024u) /* records gathered per deflate() call */
#define ZERO_BUF  (64u * 1024u)
#define PAGE      4096u

static const unsigned char zeros[ZERO_BUF];

/* The largest record any writer can append to this log. */
static uint64_t largest_record(const struct kmsg_log *log)
{
	uint64_t r = rec_size(log->max_text, KMSG_MAX_FIELDS_BYTES);
	return r < log->max_rec ? r : log->max_rec;
}

/* ---- writing --------------------------------------------------------- */

/* The shape of one attempt at a dump, fixed before its first byte. */
struct plan {
	uint64_t next_seq;   /* N: copy records below it */
	uint64_t span;       /* X: bytes from the dump's head to its tail */
	uint64_t data_size;  /* D */
	uint64_t file_size;
	uint64_t tail;       /* the dump's tail position, a multiple of D */
	struct kmsg_hdr_v1 hdr; /* the dump's header (dumps are of the first format) */
};

/* Sets N, in the plan and its header (whose clear mark is not above it). */
static void plan_next(struct plan *p, uint64_t next, uint64_t clear)
{
	p->next_seq = next;
	atomic_store_explicit(&p->hdr.d.next_seq, next, memory_order_relaxed);
	atomic_store_explicit(&p->hdr.d.clear_seq, clear < next ? clear : next,
			      memory_order_relaxed);
}

/*
 * After the reader found nothing more: is a record below N still on its
 * way?  A block below N may be in the middle of its append, its writer
 * descheduled (a loaded machine does that for milliseconds) or stopped:
 * look again a little later, for as long as a reader that may not write
 * waits for one (READ_STALL_NS); after that the dump ends without it,
 * and says so (its readers see the number missing at the end).
 */
static int worth_waiting(const struct kmsg_reader *r, uint64_t n, int64_t *since)
{
	int64_t now = kmsg__clock_ns(CLOCK_MONOTONIC);

	if (kmsg_reader_position(r) >= n)
		return 0;
	if (!*since)
		*since = now;
	else if (now - *since > READ_STALL_NS)
		return 0;
	kmsg__nap(50000);
	return 1;
}

/*
 * Measures the records after the first one (numbered first_seq, len
 * bytes) and below *next: *next is lowered past numbers at the end that
 * are no records yet (appends in progress, or never finished: the dump
 * then ends before them, for an output that cannot be rewound too), and
 * the bytes they need, packed, are returned, with room for each number in
 * between that may still become a record (one a reader stepped over
 * unfinished).  Damage and eviction give nothing back.  So a source whose
 * window claims far more than its records hold (damage, a hostile header,
 * a sparse file that claims terabytes) gives a dump the size of its
 * records.  UINT64_MAX if the records cannot be read.
 */
static uint64_t records_need(struct kmsg_log *log, uint64_t first_seq, uint32_t first_len,
			     uint64_t *next, uint64_t big)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t bytes = first_len, maybe = 0, upto = first_seq + 1;
	int64_t waiting = 0;
	int more;

	if (kmsg_reader_new(&r, log, 0) != 0)
		return UINT64_MAX;
	if (kmsg_reader_seek_seq(r, first_seq + 1) != 0) {
		kmsg_reader_free(r);
		return UINT64_MAX;
	}
	for (;;) {
		more = kmsg_reader_next(r, &rec);
		if (more == 0 && worth_waiting(r, *next, &waiting))
			continue;
		if (more != 1 || rec.seq >= *next)
			break;
		if (rec.flags & KMSG_GAP) {
			/* at the end: damage stays the dump's to report */
			if (!(rec.flags & KMSG_UNFINISHED))
				upto = rec.seq;
			continue;
		}
		if (rec.flags & KMSG_UNFINISHED)
			maybe += rec.lost;
		bytes += rec_size(rec.text_len, rec.fields_len);
		upto = rec.seq + 1;
	}
	kmsg_reader_free(r);
	if (more < 0)
		return UINT64_MAX;
	/* Lowered only past appends in progress (nothing came) or never
	 * finished: numbers the reader lost when writers overtook it are
	 * the copy's to find gone, and start again over. */
	if (upto < *next && (more == 0 || (rec.flags & KMSG_UNFINISHED)))
		*next = upto;
	if (maybe > (UINT64_MAX - bytes) / big)
		return UINT64_MAX;
	return bytes + maybe * big;
}

/*
 * Reads the source's state and fixes the dump's size and header; called
 * once the oldest record has been read, so that N is above it.  N is at
 * most cap (UINT64_MAX: no bound).  Returns 0, KMSG_ESIZE when the dump
 * would be larger than a log may be, or KMSG_ECORRUPT for numbers no
 * writer could have left.
 */
static int make_plan(struct plan *p, struct kmsg_log *log, uint64_t cap,
		     const struct kmsg_record *first)
{
	struct kmsg_hdr_v1 *h = &p->hdr;
	struct kmsg_stat ids;
	struct window w;
	uint64_t head, tail, need, laps, clear, big = largest_record(log), d;
	int err;

	/* Every number below N belongs to a block before this end. */
	err = kmsg__ring_window(log, &w);
	if (err)
		return err;
	p->next_seq = w.end_seq < cap ? w.end_seq : cap;
	head = w.head;
	tail = w.end;
	clear = log->version == KMSG_FORMAT_V1
		? atomic_load_explicit(&log->dyn1->clear_seq, memory_order_acquire)
		: atomic_load_explicit(&log->aux->clear_seq, memory_order_acquire);
	if (p->next_seq < log->first_seq || tail >= POS_LIMIT)
		return KMSG_ECORRUPT;

	p->span = tail - head;
	if (first) {
		uint64_t bound = records_need(log, first->seq,
					      (uint32_t)rec_size(first->text_len, first->fields_len),
					      &p->next_seq, big);
		if (bound < p->span)
			p->span = bound;
	}
	p->span = (p->span + 2 * big + REC_ALIGN - 1) & ~(uint64_t)(REC_ALIGN - 1);
	d = p->span > 8 * big ? p->span : 8 * big;
	if (d > KMSG_MAX_SIZE - HDR_SIZE - BACKUP_SIZE)
		return KMSG_ESIZE;
	p->file_size = (HDR_SIZE + d + BACKUP_SIZE + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	p->data_size = p->file_size - HDR_SIZE - BACKUP_SIZE;

	/* A log's header promises at least REC_HDR bytes of positions per
	 * sequence number handed out. */
	if (p->next_seq - log->first_seq > (UINT64_C(1) << 55))
		return KMSG_ECORRUPT;
	need = (p->next_seq - log->first_seq) * REC_HDR;
	/* One lap more than that: kmsg_dump_open() moves tail back to the
	 * end of the last record, by less than a lap. */
	laps = need / p->data_size + 2;
	p->tail = laps * p->data_size;
	if (p->tail >= POS_LIMIT)
		return KMSG_ECORRUPT;

	memset(h, 0, sizeof(*h));
	memcpy(&h->s, log->st, HDR_STATIC);
	h->s.version = KMSG_FORMAT_V1;
	h->s.file_size = p->file_size;
	h->s.data_size = p->data_size;
	h->s.header_crc = kmsg__hdr_crc(&h->s);
	atomic_store_explicit(&h->d.head, p->tail - p->span, memory_order_relaxed);
	atomic_store_explicit(&h->d.tail, p->tail, memory_order_relaxed);
	plan_next(p, p->next_seq, clear);
	{
		struct kmsg_stat st;
		kmsg_log_stat(&st, (struct kmsg_log *)log);
		atomic_store_explicit(&h->d.evicted, st.evicted, memory_order_relaxed);
		atomic_store_explicit(&h->d.damaged, st.damaged, memory_order_relaxed);
		atomic_store_explicit(&h->d.takeovers, st.holes, memory_order_relaxed);
	}
	/* The numbering's identity goes with the records: a position kept
	 * from the log resolves in its dump. */
	memset(&ids, 0, sizeof(ids));
	kmsg__ring_numbering(log, &ids);
	atomic_store_explicit(&h->d.seq_id, ids.seq_id, memory_order_relaxed);
	atomic_store_explicit(&h->d.seq_id_since, ids.seq_id_since, memory_order_relaxed);
	atomic_store_explicit(&h->d.prev_seq_id, ids.prev_seq_id, memory_order_relaxed);
	atomic_store_explicit(&h->d.prev_seq_id_since, ids.prev_seq_id_since, memory_order_relaxed);
	atomic_store_explicit(&h->d.prev2_seq_id, ids.prev2_seq_id, memory_order_relaxed);
	return 0;
}

struct gz_out {
	z_stream z;
	int fd;
	unsigned char *out;     /* OUT_BUF */
	unsigned char *in;      /* IN_BUF: records waiting for deflate() */
	size_t in_len;
	uint64_t written;       /* uncompressed bytes so far */
	/* What precedes the records, held back until the first batch of
	 * them has been read: the header and the zeros before head. */
	const struct kmsg_hdr_v1 *lead_hdr;
	uint64_t lead_zeros;
	const struct kmsg_dump_opts *opts;  /* the progress callback */
	int rewindable;         /* the output can be wound back for another attempt */
	uint64_t total;         /* uncompressed bytes the dump will have */
};

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -EIO;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Compresses n bytes (Z_FINISH: and ends the stream), writing what comes out. */
static int deflate_bytes(struct gz_out *g, const void *p, size_t n, int flush)
{
	g->z.next_in = (unsigned char *)(uintptr_t)p;
	g->z.avail_in = (uInt)n;
	for (;;) {
		int zr, err;
		size_t have;

		g->z.next_out = g->out;
		g->z.avail_out = OUT_BUF;
		zr = deflate(&g->z, flush);
		if (zr == Z_STREAM_ERROR)
			return KMSG_EINVAL;
		have = OUT_BUF - g->z.avail_out;
		err = write_all(g->fd, g->out, have);
		if (err)
			return err;
		if (flush == Z_FINISH ? zr == Z_STREAM_END
				      : g->z.avail_in == 0 && g->z.avail_out != 0)
			break;
	}
	g->written += n;
	return 0;
}

static int deflate_zeros(struct gz_out *g, uint64_t n)
{
	int err = 0;
	while (!err && n > 0) {
		size_t k = n < ZERO_BUF ? (size_t)n : ZERO_BUF;
		err = deflate_bytes(g, zeros, k, Z_NO_FLUSH);
		n -= k;
	}
	return err;
}

/* Compresses the batch of records, after the header if it is still due. */
static int flush_in(struct gz_out *g)
{
	int err = 0;

	if (g->lead_hdr) {
		const struct kmsg_hdr_v1 *h = g->lead_hdr;
		g->lead_hdr = NULL;
		err = deflate_bytes(g, h, HDR_SIZE, Z_NO_FLUSH);
		if (!err)
			err = deflate_zeros(g, g->lead_zeros);
	}
	if (!err && g->in_len)
		err = deflate_bytes(g, g->in, g->in_len, Z_NO_FLUSH);
	g->in_len = 0;
	if (!err && g->opts->progress)
		g->opts->progress(g->opts->progress_arg, g->written, g->total);
	return err;
}

static int put_bytes(struct gz_out *g, const void *p, size_t n)
{
	int err = flush_in(g);
	return err ? err : deflate_bytes(g, p, n, Z_NO_FLUSH);
}

static int put_zeros(struct gz_out *g, uint64_t n)
{
	int err = flush_in(g);
	return err ? err : deflate_zeros(g, n);
}

/* Lays rec out as a record of the dump at position pos, in g->in. */
static int put_record(struct gz_out *g, const struct kmsg_record *rec, uint64_t pos,
		      uint32_t len)
{
	struct rec_hdr h;
	unsigned char *p;
	int err;

	if (IN_BUF - g->in_len < len && (err = flush_in(g)))
		return err;
	p = g->in + g->in_len;
	memset(&h, 0, sizeof(h));
	h.len = len;
	h.seq = rec->seq;
	h.tag = pos;
	h.real_ns = rec->real_ns;
	h.boot_ns = rec->boot_ns;
	h.boot_id = rec->boot_id;
	h.pid = rec->pid;
	h.caller = rec->caller;
	h.text_len = (uint16_t)rec->text_len;
	h.fields_len = (uint16_t)rec->fields_len;
	h.prio = (uint8_t)(rec->facility << 3 | rec->level);
	h.flags = (rec->flags & KMSG_FRAGMENT ? REC_FRAGMENT : 0) |
		  (rec->flags & KMSG_BEGIN ? REC_BEGIN : 0);
	h.owner = REC_MAGIC & 0xff;      /* a record of the first format */
	h.spare = REC_MAGIC >> 8;
	memcpy(p, &h, REC_HDR);
	memcpy(p + REC_HDR, rec->text, rec->text_len);
	memcpy(p + REC_HDR + rec->text_len, rec->fields, rec->fields_len);
	memset(p + REC_HDR + rec->text_len + rec->fields_len, 0,
	       len - (REC_HDR + rec->text_len + rec->fields_len));
	h.crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(p, len), h.seq, pos, rec_lenword(&h));
	memcpy(p + 4, &h.crc, sizeof(h.crc));
	g->in_len += len;
	return 0;
}

/*
 * One attempt: reads the oldest record, fixes the plan (N at most *cap),
 * writes the whole stream.  Returns 0 and the count of records, 1 to
 * start again: when writers overtook the copy, or when numbers below N
 * never came and the header that claims them is out (*cap is then
 * lowered to the first of them); or an error.
 */
static int dump_once(uint64_t *count, uint64_t *cap, struct gz_out *g, struct kmsg_log *log)
{
	struct kmsg_reader *r = NULL;
	struct kmsg_record rec;
	struct plan p;
	uint64_t used = 0, head, n = 0, last = 0, upto = 0;
	int64_t waiting = 0;
	int err, more;

	err = kmsg_reader_new(&r, log, 0);
	if (err)
		goto out;
	/* The oldest record first, N after it: a reader overtaken before
	 * its first record does not count a loss, so a plan made before
	 * could find every record below N gone. */
	more = kmsg_reader_next(r, &rec);
	err = more < 0 ? more : make_plan(&p, log, *cap, more && !(rec.flags & KMSG_GAP) ? &rec : NULL);
	g->total = p.file_size;
	if (err)
		goto out;
	head = p.tail - p.span;
	g->lead_hdr = &p.hdr;
	g->lead_zeros = p.data_size - p.span;
	for (;; more = kmsg_reader_next(r, &rec)) {
		uint32_t len;

		if (more < 0) {
			err = more;
			goto out;
		}
		if (more == 0) {
			if (last + 1 >= p.next_seq)
				break;
			if (worth_waiting(r, p.next_seq, &waiting))
				continue;
			break;
		}
		/* Overtaken: a record was evicted before it was copied.  A
		 * gap left by writers that never finished is no such loss:
		 * the dump shows it as its source does. */
		if (rec.lost && kmsg__reader_overtaken(r)) {
			err = 1;
			goto out;
		}
		if (rec.flags & KMSG_GAP) {
			/* at the end: damage is the source's to report, and
			 * the dump's; appends that never finished are not */
			if (!(rec.flags & KMSG_UNFINISHED))
				upto = rec.seq;
			continue;
		}
		if (rec.seq >= p.next_seq)
			break;
		len = (uint32_t)rec_size(rec.text_len, rec.fields_len);
		if (len > p.span - used) {
			/* Only numbers no writer hands out lead here. */
			err = 1;
			goto out;
		}
		err = put_record(g, &rec, head + used, len);
		if (err)
			goto out;
		used += len;
		n++;
		last = rec.seq;
		upto = last + 1;
		if (last + 1 == p.next_seq)
			break;
	}
	/* Numbers below N after the last record that never became records
	 * (appends in progress, or never finished) are not the dump's to
	 * claim: the snapshot ends before them.  The header says so if it
	 * is still to be written, or after a start again on an output that
	 * can be rewound; a pipe keeps them, and the dump's readers report
	 * them missing at its end. */
	if (n && upto < p.next_seq) {
		if (g->lead_hdr) {
			plan_next(&p, upto, atomic_load_explicit(&p.hdr.d.clear_seq,
								 memory_order_relaxed));
		} else if (g->rewindable) {
			*cap = upto;
			err = 1;
			goto out;
		}
	}
	/* The unused part of the span: a pad to the end of the data area,
	 * if it is short enough to be one (see the overview). */
	if (p.span - used >= REC_HDR && p.span - used <= p.data_size / 2) {
		struct rec_hdr pad;

		kmsg__rec_pad(&pad, head + used, p.next_seq, (uint32_t)(p.span - used), 0, 0, 0, 1);
		err = put_bytes(g, &pad, REC_HDR);
		used += REC_HDR;
	}
	if (!err)
		err = put_zeros(g, p.span - used);
	if (!err)
		err = put_bytes(g, &p.hdr, BACKUP_SIZE);
	if (!err)
		err = deflate_bytes(g, NULL, 0, Z_FINISH);
	if (!err && g->written != p.file_size)
		err = -EIO;  /* a bug, never a dump that lies about its size */
	if (!err)
		*count = n;
out:
	g->lead_hdr = NULL;  /* p goes out of scope */
	kmsg_reader_free(r);
	return err;
}

/*
 * Where the output may be wound back to for another attempt: -1 if it
 * cannot be (not a regular file).  With O_APPEND every write goes to the
 * end, wherever the offset is: the end is where the dump starts.
 */
static off_t rewind_point(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return -1;
	return fl & O_APPEND ? st.st_size : lseek(fd, 0, SEEK_CUR);
}

/*
 * The contract is kmsg.h's.  An attempt overtaken by writers is written
 * again over itself when the output is a regular file; any other output
 * gets -EAGAIN at once, its gzip stream left without an end.
 */
int kmsg_dump_write(uint64_t *records, struct kmsg_log *log, int fd, int level)
{
	struct kmsg_dump_opts o = KMSG_DUMP_OPTS_INIT;

	o.level = level;
	return kmsg_dump_write_opts(records, log, fd, &o);
}

int kmsg_dump_write_opts(uint64_t *records, struct kmsg_log *log, int fd,
			 const struct kmsg_dump_opts *opts)
{
	struct gz_out g;
	uint64_t count = 0, cap = UINT64_MAX;
	off_t start;
	int err, zinit = 0, level;

	if (!log || fd < 0 || !opts || opts->version != KMSG_DUMP_OPTS_VERSION ||
	    opts->level < Z_DEFAULT_COMPRESSION || opts->level > Z_BEST_COMPRESSION)
		return KMSG_EINVAL;
	level = opts->level;
	memset(&g, 0, sizeof(g));
	g.opts = opts;
	g.fd = fd;
	g.out = malloc(OUT_BUF);
	g.in = malloc(IN_BUF);
	if (!g.out || !g.in) {
		err = -ENOMEM;
		goto out;
	}
	/* windowBits 15 + 16: a gzip header and trailer around deflate. */
	if (deflateInit2(&g.z, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = -ENOMEM;
		goto out;
	}
	zinit = 1;
	start = rewind_point(fd);
	g.rewindable = start >= 0;
	for (int attempt = 0;; attempt++) {
		err = dump_once(&count, &cap, &g, log);
		if (err <= 0)
			goto out;
		if (start < 0 || attempt + 1 == DUMP_ATTEMPTS) {
			err = -EAGAIN;
			goto out;
		}
		if (lseek(fd, start, SEEK_SET) < 0 || ftruncate(fd, start) < 0) {
			err = -errno;
			goto out;
		}
		deflateReset(&g.z);
		g.in_len = 0;
		g.written = 0;
	}
out:
	if (zinit)
		deflateEnd(&g.z);
	free(g.out);
	free(g.in);
	if (!err && records)
		*records = count;
	return err;
}

/* ---- opening --------------------------------------------------------- */

struct gz_in {
	z_stream z;
	int fd;
	const unsigned char *head; /* bytes the caller read from fd already */
	size_t head_len;
	unsigned char *buf;  /* IN_BUF of compressed input */
	int eof;
};

/* Up to n bytes of input: the head first, then fd.  0 at its end, or -errno. */
static ssize_t in_read(struct gz_in *g, unsigned char *p, size_t n)
{
	ssize_t k;

	if (g->head_len) {
		k = (ssize_t)(n < g->head_len ? n : g->head_len);
		memcpy(p, g->head, (size_t)k);
		g->head += k;
		g->head_len -= (size_t)k;
		return k;
	}
	do
		k = read(g->fd, p, n);
	while (k < 0 && errno == EINTR);
	return k < 0 ? -errno : k;
}

/* n bytes of input, fewer only at its end; or -errno. */
static ssize_t in_read_full(struct gz_in *g, unsigned char *p, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = in_read(g, p + got, n - got);

		if (k < 0)
			return k;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/*
 * Sets up g to read the input (head, then fd), with its buffer and *chunk
 * (both IN_BUF), and reads its first two bytes into first, for the gzip
 * magic.  Returns how many there were (fewer only at the end), or an
 * error; the caller frees g->buf and *chunk either way.
 */
static ssize_t in_begin(struct gz_in *g, int fd, const void *head, size_t head_len,
			unsigned char **chunk, unsigned char first[2])
{
	memset(g, 0, sizeof(*g));
	g->fd = fd;
	g->head = head;
	g->head_len = head_len;
	g->buf = malloc(IN_BUF);
	*chunk = malloc(IN_BUF);
	if (!g->buf || !*chunk)
		return -ENOMEM;
	return in_read_full(g, first, 2);
}

/*
 * Decompresses up to n bytes into p.  Returns the count (less than n only
 * at the end of the gzip member), KMSG_ECORRUPT for a damaged or cut-short
 * stream, or -errno.
 */
static ssize_t inflate_some(struct gz_in *g, unsigned char *p, size_t n, int *ended)
{
	g->z.next_out = p;
	g->z.avail_out = (uInt)n;
	while (g->z.avail_out > 0 && !*ended) {
		int zr;

		if (g->z.avail_in == 0 && !g->eof) {
			ssize_t k = in_read(g, g->buf, IN_BUF);
			if (k < 0)
				return k;
			if (k == 0)
				g->eof = 1;
			g->z.next_in = g->buf;
			g->z.avail_in = (uInt)k;
		}
		zr = inflate(&g->z, Z_NO_FLUSH);
		if (zr == Z_STREAM_END) {
			*ended = 1;
		} else if (zr == Z_MEM_ERROR) {
			return -ENOMEM;
		} else if (zr == Z_BUF_ERROR) {
			if (g->eof)
				return KMSG_ECORRUPT;  /* cut short */
		} else if (zr != Z_OK) {
			return KMSG_ECORRUPT;
		}
	}
	return (ssize_t)(n - g->z.avail_out);
}

static int all_zero(const unsigned char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && memcmp(p, p + 1, n - 1) == 0);
}

/*
 * Writes the non-zero pages of buf at off, each run of them with one
 * pwrite(); zero pages stay holes that take no memory.
 */
static int put_sparse(int fd, const unsigned char *buf, size_t n, uint64_t off)
{
	size_t i = 0;

	while (i < n) {
		size_t run = 0, w = 0;

		while (i < n && all_zero(buf + i, n - i < PAGE ? n - i : PAGE))
			i += n - i < PAGE ? n - i : PAGE;
		while (i + run < n && !all_zero(buf + i + run, n - i - run < PAGE ? n - i - run : PAGE))
			run += n - i - run < PAGE ? n - i - run : PAGE;
		while (w < run) {
			ssize_t r = pwrite(fd, buf + i + w, run - w, (off_t)(off + i + w));
			if (r < 0 && errno == EINTR)
				continue;
			if (r <= 0)
				return r < 0 ? -errno : -EIO;
			w += (size_t)r;
		}
		i += run;
	}
	return 0;
}

/*
 * The gzip trailer of a regular file holds the content's size modulo 2^32:
 * a dump whose header claims another size is refused before anything is
 * decompressed.
 */
static int isize_matches(int fd, uint64_t size)
{
	struct stat st;
	unsigned char t[4];

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < 18)
		return 1;
	if (pread(fd, t, 4, st.st_size - 4) != 4)
		return 1;
	return ((uint32_t)t[0] | (uint32_t)t[1] << 8 | (uint32_t)t[2] << 16 |
		(uint32_t)t[3] << 24) == (uint32_t)size;
}

/*
 * n bytes (at most IN_BUF) of the copy at off into p, fewer only at its
 * end (a regular file or a memfd: one pread() gives them all); or -errno.
 * The copy is looked at this way, never mapped: pages of a mapping that
 * are touched count in the process's memory, a dump of gigabytes all of
 * them.
 */
static ssize_t pread_copy(int fd, unsigned char *p, size_t n, uint64_t off)
{
	ssize_t k = pread(fd, p, n, (off_t)off);

	return k < 0 ? -errno : k;
}

/* A window of IN_BUF bytes on the copy's data area, read as needed. */
struct data_win {
	int fd;
	unsigned char *buf;
	uint64_t from, len;  /* the data bytes buf holds */
};

/* The n bytes (n <= IN_BUF) of the data area at phys, or NULL if they
 * cannot be read. */
static const unsigned char *win_at(struct data_win *w, uint64_t phys, size_t n)
{
	ssize_t k;

	if (phys >= w->from && phys + n <= w->from + w->len)
		return w->buf + (phys - w->from);
	k = pread_copy(w->fd, w->buf, IN_BUF, HDR_SIZE + phys);
	if (k < (ssize_t)n)
		return NULL;
	w->from = phys;
	w->len = (uint64_t)k;
	return w->buf;
}

/*
 * Moves the tail of a decompressed dump back from the end of its window
 * to the end of its last record, so that the pad kmsg_dump_write() filled
 * the rest with lies outside: readers never step over it and the used
 * bytes are the records'.  Walks record headers from head through a
 * window of buf's IN_BUF bytes (a few hundred per microsecond); leaves a
 * header it cannot follow for open to judge.
 */
static int trim_tail(int fd, uint64_t size, unsigned char *buf)
{
	struct kmsg_hdr_v1 h;
	struct data_win w = { fd, buf, 0, 0 };
	const unsigned char *p;
	uint64_t D = size - HDR_SIZE - BACKUP_SIZE, head, tail, pos, end;
	ssize_t k = pread_copy(fd, (unsigned char *)&h, HDR_SIZE, 0);

	if (k < 0)
		return (int)k;
	if (k != HDR_SIZE)
		return 0;
	head = atomic_load_explicit(&h.d.head, memory_order_relaxed);
	tail = atomic_load_explicit(&h.d.tail, memory_order_relaxed);
	if (h.s.version != KMSG_FORMAT_V1 || h.s.data_size != D || head > tail || tail - head > D ||
	    head % REC_ALIGN || tail % REC_ALIGN || tail >= (UINT64_C(1) << 62))
		return 0;
	end = pos = head;
	while (pos < tail) {
		uint64_t phys = pos % D;
		struct rec_hdr r;

		if (D - phys < REC_HDR) {
			pos += D - phys;
			continue;
		}
		p = win_at(&w, phys, REC_HDR);
		if (!p)
			break;
		memcpy(&r, p, REC_HDR);
		if ((r.owner | (unsigned)r.spare << 8) != REC_MAGIC || r.tag != pos || r.len < REC_HDR ||
		    r.len % REC_ALIGN || r.len > D - phys || r.len > tail - pos)
			break;
		pos += r.len;
		if (!(r.flags & REC_PAD))
			end = pos;
	}
	/* What kmsg_dump_write() leaves after the records: a pad up to tail,
	 * or zeros where a pad would be too long.  Anything else is some
	 * other file's business: its tail stays. */
	if (pos < tail) {
		uint64_t phys = pos % D, n = tail - pos;

		if (n > D - phys)
			return 0;
		for (uint64_t at = phys; at < phys + n;) {
			size_t take = phys + n - at < IN_BUF ? (size_t)(phys + n - at) : IN_BUF;

			p = win_at(&w, at, take);
			if (!p || !all_zero(p, take))
				return 0;
			at += take;
		}
	}
	if (end == tail)
		return 0;
	k = pwrite(fd, &end, sizeof(end), (off_t)offsetof(struct kmsg_hdr_v1, d.tail));
	return k == (ssize_t)sizeof(end) ? 0 : k < 0 ? -errno : -EIO;
}

/* The log header's own checks, before its size claim is believed. */
static int header_ok(const struct kmsg_hdr_v1 *h)
{
	return memcmp(h->s.magic, KMSG_LOG_MAGIC, 8) == 0 &&
	       kmsg__hdr_crc(&h->s) == h->s.header_crc &&
	       h->s.file_size >= 4096 && h->s.file_size <= KMSG_MAX_SIZE &&
	       h->s.file_size % PAGE == 0;
}

/*
 * The header of the input, whose first n bytes are in first: decompressed
 * when gz (first holds the gzip magic), else read as it comes (a log
 * file's bytes).  Checked before its size claim is believed: 0, or
 * KMSG_ECORRUPT, or -errno.
 */
static int take_header(struct kmsg_hdr_v1 *h, struct gz_in *g, int gz,
		       const unsigned char *first, size_t n)
{
	int ended = 0;
	ssize_t k;

	if (gz) {
		memcpy(g->buf, first, n);
		g->z.next_in = g->buf;
		g->z.avail_in = (uInt)n;
		k = inflate_some(g, (unsigned char *)h, HDR_SIZE, &ended);
		if (k < 0)
			return (int)k;
		/* (a stream that ends with the header is short of any log) */
		return k == HDR_SIZE && !ended && header_ok(h) &&
		       isize_matches(g->fd, h->s.file_size) ? 0 : KMSG_ECORRUPT;
	}
	k = in_read_full(g, (unsigned char *)h + n, HDR_SIZE - n);
	if (k < 0)
		return (int)k;
	memcpy(h, first, n);
	return n + (size_t)k == HDR_SIZE && header_ok(h) ? 0 : KMSG_ECORRUPT;
}

/*
 * Where a log of size bytes (its header's claim) is decompressed or
 * copied, into *out: a memfd when the caller named no directory or the
 * size is within mem_max; else an unnamed file in the directory, refused
 * with -ENOSPC before a byte is written when the size is more than its
 * file system has free, and ready to be opened as a log.
 */
static int make_copy(int *out, uint64_t size, const struct kmsg_dump_open_opts *o)
{
	struct statvfs vfs;
	char *path;
	int fd;

	if (!o->tmpdir || size <= o->mem_max) {
		fd = memfd_create("kmsg-dump", MFD_CLOEXEC);
		goto done;
	}
	fd = open(o->tmpdir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		/* no O_TMPFILE there: a named file, unlinked at once */
		path = malloc(strlen(o->tmpdir) + sizeof("/kmsg-dump.XXXXXX"));
		if (!path)
			return -ENOMEM;
		strcpy(path, o->tmpdir);
		strcat(path, "/kmsg-dump.XXXXXX");
		fd = mkostemp(path, O_CLOEXEC);
		if (fd >= 0)
			unlink(path);
		free(path);
	}
	/* Holes stay holes: a dump takes about the bytes of its records, a
	 * little less than its size, which bounds what it may claim. */
	if (fd >= 0 && fstatvfs(fd, &vfs) == 0 && vfs.f_frsize &&
	    vfs.f_bavail < size / vfs.f_frsize) {
		close(fd);
		return -ENOSPC;
	}
done:
	if (fd < 0)
		return -errno;
	fd = kmsg__fd_off_stdio(fd);  /* it becomes the log's descriptor */
	if (fd < 0)
		return fd;
	*out = fd;
	return 0;
}

/*
 * The rest of a dump after its header, decompressed into fd (size bytes
 * in all, as the header claims), then the end of the stream and of the
 * input: content beyond the claim is never written.  0 or an error.
 */
static int inflate_body(int fd, struct gz_in *g, uint64_t size, unsigned char *chunk)
{
	uint64_t off = HDR_SIZE;
	unsigned char byte;
	int ended = 0, err;
	ssize_t n;

	while (off < size && !ended) {
		/* page-aligned chunks, so that zero pages become holes */
		size_t want = IN_BUF - (size_t)(off % PAGE);

		if (want > size - off)
			want = (size_t)(size - off);
		n = inflate_some(g, chunk, want, &ended);
		if (n < 0)
			return (int)n;
		err = put_sparse(fd, chunk, (size_t)n, off);
		if (err)
			return err;
		off += (uint64_t)n;
	}
	/* Exactly size bytes, then the end of the stream and of the file.
	 * A stream that ended short is refused at once, not at the input's
	 * end. */
	if (!ended) {
		n = inflate_some(g, chunk, 1, &ended);
		if (n < 0)
			return (int)n;
		if (n > 0 || !ended)
			return KMSG_ECORRUPT;
	}
	if (off != size || g->z.avail_in != 0)
		return KMSG_ECORRUPT;
	n = in_read(g, &byte, 1);
	if (n != 0)
		return n < 0 ? (int)n : KMSG_ECORRUPT;
	return 0;
}

/*
 * The bytes of a log file after its header copied into fd, up to the
 * size its header claims and not a byte further: input that ends before
 * it is refused.  0 or an error.
 */
static int copy_body(int fd, struct gz_in *g, uint64_t size, unsigned char *chunk)
{
	for (uint64_t off = HDR_SIZE; off < size;) {
		size_t want = IN_BUF - (size_t)(off % PAGE);
		ssize_t k;
		int err;

		if (want > size - off)
			want = (size_t)(size - off);
		k = in_read_full(g, chunk, want);
		if (k < 0)
			return (int)k;
		if ((size_t)k != want)
			return KMSG_ECORRUPT;  /* claims more than arrived */
		err = put_sparse(fd, chunk, want, off);
		if (err)
			return err;
		off += want;
	}
	return 0;
}

/*
 * One implementation under kmsg_dump_open() and kmsg_dump_open_fd*(): the
 * input (head, then fd) is decompressed, or with raw_ok copied if it is a
 * log file's bytes, into a copy (make_copy(): memory or a file of o's
 * directory; holes where it is zero) that grows only as the input
 * arrives, never past what the header claims, and is opened as a
 * read-only log.
 */
static int open_input(struct kmsg_log **out, int fd, const void *head,
		      size_t head_len, int raw_ok, const struct kmsg_dump_open_opts *o)
{
	struct gz_in g;
	struct kmsg_hdr_v1 h;
	unsigned char first[8], *chunk = NULL;
	size_t first_len = 2;
	int cfd = -1, zinit = 0, err;
	ssize_t n;

	/* Tell a foreign file from a damaged dump by the gzip magic. */
	n = in_begin(&g, fd, head, head_len, &chunk, first);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	if (n == 2 && first[0] == 0x1f && first[1] == 0x8b) {
		if (inflateInit2(&g.z, 15 + 16) != Z_OK) {
			err = -ENOMEM;
			goto out;
		}
		zinit = 1;
	} else if (n == 2 && raw_ok) {
		n = in_read_full(&g, first + 2, sizeof(first) - 2);
		if (n < 0) {
			err = (int)n;
			goto out;
		}
		if ((size_t)n != sizeof(first) - 2 ||
		    memcmp(first, KMSG_LOG_MAGIC, sizeof(first)) != 0) {
			err = KMSG_ENOTLOG;
			goto out;
		}
		first_len = sizeof(first);
	} else {
		err = KMSG_ENOTLOG;
		goto out;
	}
	/* The header first: its size claim bounds everything after it, and
	 * a log this build could not map is refused before a byte is copied. */
	err = take_header(&h, &g, zinit, first, first_len);
	if (!err)
		err = kmsg__file_mappable(h.s.file_size);
	if (!err)
		err = make_copy(&cfd, h.s.file_size, o);
	if (!err)
		err = put_sparse(cfd, (unsigned char *)&h, HDR_SIZE, 0);
	if (!err)
		err = zinit ? inflate_body(cfd, &g, h.s.file_size, chunk)
			    : copy_body(cfd, &g, h.s.file_size, chunk);
	if (err)
		goto out;
	/* Zero pages at the end were never written: the size is set now,
	 * once the input has shown it holds that much. */
	if (ftruncate(cfd, (off_t)h.s.file_size) < 0) {
		err = -errno;
		goto out;
	}
	err = trim_tail(cfd, h.s.file_size, chunk);
	if (err)
		goto out;
	err = kmsg__log_open_fd(out, cfd, KMSG_OPEN_READ);
	if (err == KMSG_ENOTLOG)
		err = KMSG_ECORRUPT;  /* a gzip stream, but no log inside */
	if (!err)
		cfd = -1;  /* the log's now */
out:
	if (zinit)
		inflateEnd(&g.z);
	if (cfd >= 0)
		close(cfd);
	free(g.buf);
	free(chunk);
	return err;
}

/* The contract is kmsg.h's; path may be a pipe. */
int kmsg_dump_open(struct kmsg_log **out, const char *path)
{
	struct kmsg_dump_open_opts o = KMSG_DUMP_OPEN_OPTS_INIT;
	int fd, err;

	if (!out || !path)
		return KMSG_EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = open_input(out, fd, NULL, 0, 0, &o);
	close(fd);
	return err;
}

/* The contract is kmsg.h's. */
int kmsg_dump_open_fd(struct kmsg_log **out, int fd, const void *head,
		      size_t head_len)
{
	return kmsg_dump_open_fd_opts(out, fd, head, head_len, NULL);
}

/* The contract is kmsg.h's. */
int kmsg_dump_open_fd_opts(struct kmsg_log **out, int fd, const void *head,
			   size_t head_len, const struct kmsg_dump_open_opts *opts)
{
	struct kmsg_dump_open_opts o = KMSG_DUMP_OPEN_OPTS_INIT;

	if (!out || fd < 0 || (head == NULL && head_len) ||
	    (opts && opts->version != KMSG_DUMP_OPEN_OPTS_VERSION))
		return KMSG_EINVAL;
	return open_input(out, fd, head, head_len, 1, opts ? opts : &o);
}

/*
 * Inflates and drops n bytes; 0, or KMSG_ECORRUPT if the stream ends
 * first, or -errno.
 */
static int inflate_skip(struct gz_in *g, uint64_t n, unsigned char *chunk, int *ended)
{
	while (n > 0) {
		size_t want = n < IN_BUF ? (size_t)n : IN_BUF;
		ssize_t k = inflate_some(g, chunk, want, ended);
		if (k < 0)
			return (int)k;
		if ((size_t)k != want)
			return KMSG_ECORRUPT;
		n -= want;
	}
	return 0;
}

/*
 * The contract is kmsg.h's.  The first record lies near the start of the
 * data area (see THE LAYOUT above: the dump's head is D - X, and D exceeds
 * X by at most 8L and a page), so this inflates a few KiB of any dump.
 */
static int dump_stat(struct kmsg_stat *st, int fd, const void *head, size_t head_len)
{
	struct gz_in g;
	struct kmsg_hdr_v1 h;
	struct kmsg_log fake;
	struct rec_hdr rh;
	unsigned char first[2], *chunk = NULL, *rec = NULL;
	uint64_t D, hd, tl, phys;
	int zinit = 0, ended = 0, err;
	ssize_t n;

	if (!st || fd < 0 || (head == NULL && head_len))
		return KMSG_EINVAL;
	n = in_begin(&g, fd, head, head_len, &chunk, first);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	if (n != 2 || first[0] != 0x1f || first[1] != 0x8b) {
		err = KMSG_ENOTLOG;
		goto out;
	}
	if (inflateInit2(&g.z, 15 + 16) != Z_OK) {
		err = -ENOMEM;
		goto out;
	}
	zinit = 1;
	memcpy(g.buf, first, 2);
	g.z.next_in = g.buf;
	g.z.avail_in = 2;
	n = inflate_some(&g, (unsigned char *)&h, HDR_SIZE, &ended);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	D = h.s.data_size;
	hd = atomic_load(&h.d.head);
	tl = atomic_load(&h.d.tail);
	if (n != HDR_SIZE || !header_ok(&h) || h.s.version != KMSG_FORMAT_V1 ||
	    !isize_matches(fd, h.s.file_size) ||
	    D != h.s.file_size - HDR_SIZE - BACKUP_SIZE || h.s.max_text < 1 ||
	    h.s.max_text > KMSG_MAX_TEXT_LIMIT || hd > tl || tl - hd > D || hd % REC_ALIGN) {
		err = KMSG_ECORRUPT;
		goto out;
	}
	memset(st, 0, sizeof(*st));
	st->file_size = h.s.file_size;
	st->data_size = D;
	st->used = tl - hd;
	st->max_text = h.s.max_text;
	st->format_version = h.s.version;
	memcpy(st->ring_id, h.s.ring_id, sizeof(st->ring_id));
	st->created_ns = h.s.created_ns;
	st->next_seq = atomic_load(&h.d.next_seq);
	st->clear_seq = atomic_load(&h.d.clear_seq);
	st->evicted = atomic_load(&h.d.evicted);
	st->damaged = atomic_load(&h.d.damaged);
	st->holes = atomic_load(&h.d.takeovers);  /* as log.c reads a first-format log */
	memset(&fake, 0, sizeof(fake));
	fake.version = KMSG_FORMAT_V1;
	fake.dyn1 = &h.d;
	fake.first_seq = h.s.first_seq;
	memcpy(fake.ring_id, h.s.ring_id, sizeof(fake.ring_id));
	kmsg__ring_numbering(&fake, st);
	st->first_seq = st->next_seq;
	/* The oldest record's number is in the record: skip to it. */
	phys = hd % D;
	if (D - phys < REC_HDR || hd == tl)
		goto done;  /* no record: an empty dump */
	fake.data_size = D;
	fake.max_text = h.s.max_text;
	fake.max_rec = rec_size(h.s.max_text, KMSG_MAX_FIELDS_BYTES);
	if (fake.max_rec > D / 2)
		fake.max_rec = D / 2 & ~(uint64_t)(REC_ALIGN - 1);
	/* The writer puts head within 8L and a page of the start; a header
	 * that says otherwise would have this inflate without bound. */
	if (phys > 8 * largest_record(&fake) + 2 * PAGE) {
		err = KMSG_ECORRUPT;
		goto out;
	}
	rec = malloc(fake.max_rec);
	err = rec ? inflate_skip(&g, phys, chunk, &ended) : -ENOMEM;
	if (err)
		goto out;
	n = inflate_some(&g, rec, REC_HDR, &ended);
	if (n != REC_HDR) {
		err = n < 0 ? (int)n : KMSG_ECORRUPT;
		goto out;
	}
	memcpy(&rh, rec, REC_HDR);
	if (!(rh.flags & REC_PAD) && rh.len > REC_HDR && rh.len <= fake.max_rec) {
		n = inflate_some(&g, rec + REC_HDR, rh.len - REC_HDR, &ended);
		if (n != (ssize_t)(rh.len - REC_HDR)) {
			err = n < 0 ? (int)n : KMSG_ECORRUPT;
			goto out;
		}
	}
	/* A pad or zeros where the first record would be: none was copied. */
	if (kmsg__rec_check_at(&fake, hd, phys, rec, &rh) && !(rh.flags & REC_PAD))
		st->first_seq = rh.seq;
	else if ((rh.owner | (unsigned)rh.spare << 8) == REC_MAGIC && !(rh.flags & REC_PAD))
		err = KMSG_ECORRUPT;
	if (err)
		goto out;
done:
	err = 0;
out:
	if (zinit)
		inflateEnd(&g.z);
	free(g.buf);
	free(chunk);
	free(rec);
	return err;
}

int kmsg_dump_stat_fd_sized(struct kmsg_stat *st, size_t size, int fd, const void *head,
			    size_t head_len)
{
	struct kmsg_stat mine;
	int rc;

	if (!st || size < KMSG__STAT_SIZE_1)
		return KMSG_EINVAL;
	rc = dump_stat(&mine, fd, head, head_len);
	kmsg__put_sized(st, size, &mine, sizeof(mine));
	return rc;
}
