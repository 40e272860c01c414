/*
 * reader.c - the reader object of the public interface: an iterator
 * (iter.c) with a joiner over it when lines are wanted (join.c), and
 * waiting for new records (the follower's side of wake.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct kmsg_reader {
	struct kmsg_iter it;
	struct kmsg_joiner *join;  /* NULL without KMSG_READER_JOIN */
	unsigned flags;
	uint32_t deferrals_seen;   /* the deferral count at the last wait */
	int64_t deferral_seen_ns;  /* CLOCK_MONOTONIC when it last changed */
};

int kmsg_reader_new(struct kmsg_reader **out, struct kmsg_log *log, unsigned flags)
{
	struct kmsg_reader *r;
	int err;

	if (!out || !log || (flags & ~(unsigned)(KMSG_READER_JOIN | KMSG_READER_ORDER)))
		return KMSG_EINVAL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->flags = flags;
	err = kmsg__iter_init(&r->it, log);
	if (!err && (flags & KMSG_READER_JOIN))
		err = kmsg__join_new(&r->join, flags);
	if (!err)
		err = kmsg__iter_seek(&r->it, KMSG_SEEK_OLDEST);
	if (err == KMSG_ECORRUPT) {
		/* A header only a writer can repair: the reader exists, and
		 * says so at its first read. */
		r->it.pos = kmsg__ring_head(log);
		err = 0;
	}
	if (err) {
		kmsg_reader_free(r);
		return err;
	}
	*out = r;
	return 0;
}

void kmsg_reader_free(struct kmsg_reader *r)
{
	if (!r)
		return;
	kmsg__join_free(r->join);
	kmsg__iter_free(&r->it);
	free(r);
}

uint64_t kmsg_reader_position(const struct kmsg_reader *r)
{
	uint64_t p;

	if (!r)
		return 0;
	if (r->it.expect_known) {
		p = r->it.expect;
	} else {
		struct window w;
		p = kmsg__ring_window(r->it.log, &w) == 0 ? w.end_seq : 0;
	}
	if (r->join)
		kmsg__join_position(r->join, &p);
	return p;
}

static int reader_next(struct kmsg_reader *r, struct kmsg_record *rec)
{
	if (r->join)
		return kmsg__join_next(r->join, &r->it, rec);
	return kmsg__iter_next(&r->it, rec);
}

int kmsg_reader_next_sized(struct kmsg_reader *r, struct kmsg_record *rec, size_t size)
{
	struct kmsg_record mine;
	int rc;

	if (!r || !rec || size < KMSG__RECORD_SIZE_1)
		return KMSG_EINVAL;
	if (size == sizeof(mine))
		return reader_next(r, rec);
	rc = reader_next(r, &mine);
	if (rc == 1)
		kmsg__put_sized(rec, size, &mine, sizeof(mine));
	return rc;
}

void kmsg_reader_flush(struct kmsg_reader *r, int64_t older_than_real_ns)
{
	if (r && r->join)
		kmsg__join_flush(r->join, older_than_real_ns);
}

/* A seek forgets the lines a joining reader held open or back. */
static int seeked(struct kmsg_reader *r, int err)
{
	if (!err && r->join)
		kmsg__join_drop(r->join);
	return err;
}

int kmsg_reader_seek(struct kmsg_reader *r, enum kmsg_whence whence)
{
	if (!r)
		return KMSG_EINVAL;
	return seeked(r, kmsg__iter_seek(&r->it, whence));
}

int kmsg_reader_seek_seq(struct kmsg_reader *r, uint64_t seq)
{
	if (!r)
		return KMSG_EINVAL;
	return seeked(r, kmsg__iter_seek_seq(&r->it, seq));
}

int kmsg_reader_seek_time(struct kmsg_reader *r, int64_t real_ns)
{
	if (!r)
		return KMSG_EINVAL;
	return seeked(r, kmsg__iter_seek_time(&r->it, real_ns));
}

/* For dump.c: did the last record's gap come from being overtaken? */
int kmsg__reader_overtaken(const struct kmsg_reader *r)
{
	return r->it.last_overtaken;
}

uint64_t kmsg__reader_bulk(struct kmsg_reader *r, uint32_t chunk, uint32_t from)
{
	uint64_t used = r->it.bulk_used;

	kmsg__iter_bulk(&r->it, chunk, from);
	return used;
}

/* How often a wait looks again where it cannot sleep on the wake word. */
#define WAIT_POLL_NS (100 * 1000000LL)

int kmsg_reader_wait(struct kmsg_reader *r, int timeout_ms)
{
	struct kmsg_log *log;
	_Atomic uint32_t *word, *deferral_word;
	uint32_t first;
	int64_t deadline = 0;
	int err;

	if (!r)
		return KMSG_EINVAL;
	log = r->it.log;
	word = kmsg__wake_word(log);
	deferral_word = kmsg__wake_deferrals(log);
	err = kmsg__wake_register_follower(log);
	if (err < 0)
		return err;
	if (timeout_ms >= 0)
		deadline = kmsg__clock_ns(CLOCK_MONOTONIC) + (int64_t)timeout_ms * 1000000;
	first = atomic_load_explicit(word, memory_order_seq_cst);
	for (;;) {
		uint32_t seen = atomic_load_explicit(word, memory_order_seq_cst);
		uint32_t deferrals = atomic_load_explicit(deferral_word, memory_order_seq_cst); /* D2 */
		int64_t now = kmsg__clock_ns(CLOCK_MONOTONIC), wait_ns = INT64_MAX;
		struct timespec ts, *tsp = NULL;
		long rc;

		if (kmsg__iter_ready(&r->it))
			return 1;
		if (r->join && kmsg__join_ready(r->join))
			return 1;
		/* Opened on a damaged header, the reader reads its own copy
		 * of it, which shows no record written since: a writer's wake
		 * means that writer has repaired the file's (log.c,
		 * kmsg_log_file_changed()), so it is news to the caller. */
		if (log->private_hdr && seen != first)
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
		/* A writer may have stopped waking for a while (wake.c,
		 * WAKING FOLLOWERS): sleep in short steps until it is over. */
		if (deferrals != r->deferrals_seen) {
			r->deferrals_seen = deferrals;
			r->deferral_seen_ns = now;
		}
		if (now - r->deferral_seen_ns < 2 * WAKE_QUIET_NS && wait_ns > WAKE_QUIET_NS)
			wait_ns = WAKE_QUIET_NS;
		/* A block in progress at our place (its writer may be stopped):
		 * look again once it may be passed (ring.c, R4). */
		if (r->it.wait_pos == r->it.pos && r->it.wait_since && wait_ns > STALL_NS / 4)
			wait_ns = STALL_NS / 4;
		if (wait_ns != INT64_MAX) {
			ts.tv_sec = wait_ns / 1000000000;
			ts.tv_nsec = wait_ns % 1000000000;
			tsp = &ts;
		}
		rc = syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT, seen, tsp, NULL, 0);
		if (rc < 0 && errno == EINTR)
			return -EINTR;
		/* The word cannot be slept on: the file was cut short under
		 * the mapping, whose pages past its end are then read-only
		 * zeros the kernel refuses as a futex (EFAULT), or a filter
		 * (seccomp) refuses futex itself (ENOSYS, EPERM).  No writer
		 * can wake us then, and failing at once would make every
		 * caller spin, or end a follower that polling keeps working:
		 * sleep in WAIT_POLL_NS steps instead. */
		if (rc < 0 && errno != EAGAIN && errno != ETIMEDOUT) {
			if (wait_ns > WAIT_POLL_NS)
				wait_ns = WAIT_POLL_NS;
			ts.tv_sec = wait_ns / 1000000000;
			ts.tv_nsec = wait_ns % 1000000000;
			if (nanosleep(&ts, NULL) < 0 && errno == EINTR)
				return -EINTR;
		}
	}
}
