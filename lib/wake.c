/*
 * wake.c - waking followers.
 *
 * WAKING FOLLOWERS
 *
 * inotify does not see stores through a mapping, so followers sleep on a
 * futex word (the auxiliary area's wake; a first-format log's at byte
 * 192).  Readers may lack write permission, so they cannot announce
 * themselves in the mapping; instead a follower holds an OFD read lock on
 * the byte LOCK_FOLLOWER, and each writer handle checks for such a lock
 * at most every FOLLOWER_PROBE_NS.  Only a writer that has seen a
 * follower bumps the word and calls FUTEX_WAKE, so with nobody following
 * an append makes no system call.  A new follower caps its sleeps at
 * FOLLOWER_PROBE_NS until every writer must have probed once.  Ordering:
 * the commit (C1, ring.c) before the bump, both sequentially consistent;
 * the follower loads the word, then looks at its next block, then sleeps
 * only if the word is unchanged, so a record committed after its look
 * always changes the word first.
 *
 * A wake that finds nobody asleep (the follower is busy reading, or the
 * "follower" is a reader that took the lock to slow writers down) would
 * cost every append a system call, several times the append.  So a
 * writer handle whose FUTEX_WAKE woke nobody then only bumps the word for
 * the next WAKE_QUIET_NS, and announces that by bumping the deferral
 * count (after the wake [D1]).  A follower that sees the count change
 * caps its sleeps at WAKE_QUIET_NS for twice that long, by its own clock.
 * No follower sleeps through a skipped wake without a cap: a wake that
 * woke nobody means none was asleep then; one that goes to sleep after
 * it loaded the word either after the bump (and so sees the record) or
 * before it (and so FUTEX_WAIT sees the word changed, unless it is past
 * the bump and asleep: then the wake would have found it).  Any sleep
 * that begins after the writer's skip has loaded the count after [D1]
 * [D2], and is capped.  A writer whose wake woke someone wakes at every
 * append again.  So a reader costs writers at most one system call per
 * WAKE_QUIET_NS each, and a follower that was busy when the last records
 * came sees them at most WAKE_QUIET_NS late.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

_Atomic uint32_t *kmsg__wake_word(const struct kmsg_log *log)
{
	return log->version == KMSG_FORMAT_V1 ? &log->dyn1->wake : &log->aux->wake;
}

_Atomic uint32_t *kmsg__wake_deferrals(const struct kmsg_log *log)
{
	return log->version == KMSG_FORMAT_V1 ? &log->dyn1->deferrals : &log->aux->deferrals;
}

/* 1 if some reader is registered as a follower of the log. */
static int followers_present(struct kmsg_log *log)
{
	struct flock fl;

	if (log->follower_registered)
		return 1;
	if (kmsg__ofd_lock(log->fd, F_OFD_GETLK, F_WRLCK, LOCK_FOLLOWER, 1, &fl) < 0)
		return 1;
	return fl.l_type != F_UNLCK;
}

int kmsg__wake_register_follower(struct kmsg_log *log)
{
	int r;

	if (log->follower_registered)
		return 0;
	r = kmsg__ofd_lock(log->fd, F_OFD_SETLK, F_RDLCK, LOCK_FOLLOWER, 1, NULL);
	if (r < 0)
		return r;
	log->follower_registered = 1;
	log->follower_since_ns = kmsg__clock_ns(CLOCK_MONOTONIC);
	return 0;
}

/* Wakes every follower asleep on word; returns how many there were. */
static long futex_wake_all(_Atomic uint32_t *word)
{
	return syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void kmsg__wake_slow(struct kmsg_log *log, int64_t now)
{
	int64_t next = atomic_load_explicit(&log->next_probe_ns, memory_order_relaxed);

	/* Followers: probe now and then; wake only when one exists. */
	if (now >= next || now < next - FOLLOWER_PROBE_NS) {
		atomic_store_explicit(&log->next_probe_ns, now + FOLLOWER_PROBE_NS,
				      memory_order_relaxed);
		atomic_store_explicit(&log->followers, followers_present(log),
				      memory_order_relaxed);
	}
	if (atomic_load_explicit(&log->followers, memory_order_relaxed)) {
		int64_t quiet = atomic_load_explicit(&log->quiet_until_ns, memory_order_relaxed);
		_Atomic uint32_t *word = kmsg__wake_word(log);

		atomic_fetch_add_explicit(word, 1, memory_order_seq_cst);
		/* no system call while a wake woke nobody */
		if (now >= quiet || now < quiet - WAKE_QUIET_NS) {
			if (futex_wake_all(word) == 0) {
				atomic_fetch_add_explicit(kmsg__wake_deferrals(log), 1,
							  memory_order_seq_cst);       /* D1 */
				quiet = now + WAKE_QUIET_NS;
			} else {
				quiet = 0;
			}
			atomic_store_explicit(&log->quiet_until_ns, quiet, memory_order_relaxed);
		}
	}
}
