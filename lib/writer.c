/*
 * writer.c - who writes: owner ids, the locks that tell a live writer
 * from a dead one, and what a fork does to them.
 *
 * OWNERS
 *
 * A writer handle has an owner id, 1..254, which its reservations carry
 * (ring.c): the reserved block's header, and the reservation word for the
 * newest.  While the handle is open it holds an OFD write lock on one of
 * the LOCK_OWNER_SPAN bytes at LOCK_OWNER_BASE + id * LOCK_OWNER_SPAN; the
 * kernel drops it when the process dies and at every reboot.  The
 * writer with an id is alive if any write lock is held in its span, which
 * F_OFD_GETLK asked for a read lock reports (read locks do not conflict
 * with a read lock).  So a reader, which can take read locks only, can
 * neither make a dead writer look alive nor a live one dead.  It can
 * block a byte against registration: then the writer tries other ids,
 * then shares an id (another byte of a span: the id is then alive while
 * either lives, which only keeps quarantines longer), and in the end
 * registers as OWNER_SHARED, which every test takes for alive.  A writer
 * never waits to register, and no reader can make it fail.
 *
 * FORK
 *
 * A child after fork() shares its parent's open file descriptions, and
 * OFD locks belong to those: the parent's lock would live on in the child
 * (a parent that died mid-append would look alive for as long as the
 * child lives); a follower lock taken in one would be invisible to the
 * other's writers (a writer never sees the locks of its own description);
 * and a child that drops privileges could no longer open the file to get
 * a description of its own.  So at the fork the child handler gives each
 * open handle a description of its own, while the child still has its
 * parent's privileges: it opens /proc/self/fd/N again onto the same
 * descriptor number, maps the log again through it (a mapping holds the
 * description it was made with, and its locks with it, for as long as it
 * exists), registers under a new owner id and takes the follower lock
 * again.  It finds the handles in a list kept under handles_lock, which
 * the prepare handler takes so that no other thread of the parent is
 * changing the list at the fork.  It calls only what a child of a
 * threaded parent may: open, dup3, close, mmap, fcntl, clock_gettime,
 * getpid, atomics (mmap is not in POSIX's list, but is a plain system
 * call on Linux).  Where /proc is not mounted yet the open fails; such a
 * handle notices the bumped fork_gen on its next append and tries again
 * then, under handles_lock (threads of the child may append at once).
 * Where the open is refused (the parent dropped privileges before the
 * fork) the child shares the parent's description (share_description()):
 * neither can see the other's lock then, so the child writes as
 * OWNER_SHARED, always alive, and takes the parent's id for alive too.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

_Atomic unsigned kmsg__fork_gen;  /* bumped in every fork child */
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmsg_log *handles;     /* every open handle, under handles_lock */

static uint64_t span_of(unsigned owner)
{
	return LOCK_OWNER_BASE + (uint64_t)owner * LOCK_OWNER_SPAN;
}

/*
 * Does a quarantine entry of this boot wait for id?  Its writer died or
 * is stopped in the middle of an append; a new writer under the same id
 * would keep the entry (and the blocks it names) alive for as long as it
 * lives, so such an id is taken only when no other is free.
 */
static int id_quarantined(const struct kmsg_log *log, unsigned id)
{
	if (log->private_hdr || !atomic_load_explicit(&log->aux->qactive, memory_order_acquire))
		return 0;
	for (int i = 0; i < NQUAR; i++) {
		const struct kmsg_quar *q = &log->aux->quar[i];

		if (atomic_load_explicit(&q->state, memory_order_acquire) == QUAR_ACTIVE &&
		    atomic_load_explicit(&q->owner, memory_order_relaxed) == id &&
		    atomic_load_explicit(&q->boot, memory_order_relaxed) == log->boot_id)
			return 1;
	}
	return 0;
}

/*
 * Takes an owner id and its lock on the handle's own description: only
 * async-signal-safe calls, for the fork child handler too.
 */
static int take_owner(struct kmsg_log *log)
{
	uint64_t start = atomic_fetch_add_explicit(&log->aux->writer_ids, 1, memory_order_relaxed);
	uint64_t rnd = (start + 1) * UINT64_C(0x9e3779b97f4a7c15) ^ (uint64_t)getpid();
	int r;

	/* A span of our own, the first byte of a free id (one no stalled
	 * append names, first) ... */
	for (unsigned i = 0; i < 2 * OWNER_MAX; i++) {
		unsigned id = 1 + (unsigned)((start + i) % OWNER_MAX);

		if (i < OWNER_MAX && id_quarantined(log, id))
			continue;
		r = kmsg__ofd_lock(log->fd, F_OFD_SETLK, F_WRLCK, span_of(id), 1, NULL);
		if (r == 0) {
			log->owner = id;
			log->lock_byte = span_of(id);
			goto done;
		}
		if (r != -EAGAIN && r != -EACCES)
			return r;
	}
	/* ... else another byte of some id's span, shared with its owner. */
	for (unsigned i = 0; i < 64; i++) {
		unsigned id;
		uint64_t byte;

		rnd = rnd * UINT64_C(6364136223846793005) + 1442695040888963407u;
		id = 1 + (unsigned)((rnd >> 33) % OWNER_MAX);
		byte = span_of(id) + 1 + (rnd >> 20) % (LOCK_OWNER_SPAN - 1);
		r = kmsg__ofd_lock(log->fd, F_OFD_SETLK, F_WRLCK, byte, 1, NULL);
		if (r == 0) {
			log->owner = id;
			log->lock_byte = byte;
			goto done;
		}
		if (r != -EAGAIN && r != -EACCES)
			return r;
	}
	/* Every byte taken, or held against us: a writer nobody can tell
	 * dead, which costs only longer quarantines if it stops. */
	log->owner = OWNER_SHARED;
	log->lock_byte = 0;
done:
	log->pid = (uint32_t)getpid();
	atomic_store(&log->fork_gen, atomic_load(&kmsg__fork_gen));
	return 0;
}

/* "/proc/self/fd/" and fd, without snprintf (not async-signal-safe). */
static void self_fd_path(char *buf, int fd)
{
	char digits[12];
	int n = 0;

	memcpy(buf, "/proc/self/fd/", 14);
	buf += 14;
	do
		digits[n++] = (char)('0' + fd % 10);
	while ((fd /= 10) > 0);
	while (n)
		*buf++ = digits[--n];
	*buf = '\0';
}

/*
 * A forked child that cannot have a description of its own (it may no
 * longer open the file: its parent dropped privileges) shares its
 * parent's, and with it the parent's lock, which neither can see:
 * F_OFD_GETLK never reports one's own description's locks.  So the child
 * writes as OWNER_SHARED, which every test takes for alive, and takes the
 * parent's id for alive itself (kin_owner).  Async-signal-safe.
 */
static void share_description(struct kmsg_log *log)
{
	if (log->owner && log->owner != OWNER_SHARED)
		log->kin_owner = log->owner;
	if (log->owner)
		log->owner = OWNER_SHARED;
	log->lock_byte = 0;
	log->pid = (uint32_t)getpid();
	atomic_store(&log->fork_gen, atomic_load(&kmsg__fork_gen));
}

int kmsg__fd_is_log(const struct kmsg_log *log, int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (uint64_t)st.st_dev == log->file_dev &&
	       (uint64_t)st.st_ino == log->file_ino;
}

/* The child's half of FORK above, for one handle. */
static void fork_reopen(struct kmsg_log *log)
{
	char path[32];
	int fd;

	self_fd_path(path, log->fd);
	fd = open(path, (log->flags & KMSG_OPEN_WRITE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0 && (errno == EACCES || errno == EPERM)) {
		share_description(log);
		return;
	}
	if (fd < 0)
		return;  /* registers on its next append (no /proc yet) */
	if (!kmsg__fd_is_log(log, fd)) {
		/* The program closed the handle's descriptor and another
		 * file took its number: never mapped over the log.  The
		 * inherited mapping still holds the parent's description,
		 * and is shared as when the file cannot be opened. */
		close(fd);
		share_description(log);
		return;
	}
	if (dup3(fd, log->fd, O_CLOEXEC) < 0) {
		close(fd);
		return;
	}
	close(fd);
	/* A reader's private header page or zero-filled missing end is
	 * not the file's: such a mapping is left as it is (it holds no
	 * writer lock; a writer's mapping is always the whole file). */
	if (!log->private_hdr && log->opened_size >= log->map_size &&
	    mmap(log->map, log->map_size,
		 PROT_READ | (log->flags & KMSG_OPEN_WRITE ? PROT_WRITE : 0),
		 MAP_SHARED | MAP_FIXED, log->fd, 0) == MAP_FAILED)
		return;  /* only for want of memory: the handle registers later */
	if (log->follower_registered) {
		log->follower_registered =
			kmsg__ofd_lock(log->fd, F_OFD_SETLK, F_RDLCK, LOCK_FOLLOWER, 1, NULL) == 0;
		log->follower_since_ns = kmsg__clock_ns(CLOCK_MONOTONIC);
	}
	if (log->owner)
		take_owner(log);
}

static void on_fork_prepare(void)
{
	pthread_mutex_lock(&handles_lock);
}

static void on_fork_parent(void)
{
	pthread_mutex_unlock(&handles_lock);
}

static void on_fork_child(void)
{
	atomic_fetch_add(&kmsg__fork_gen, 1);
	kmsg__caller_forget();
	kmsg__lines_forget();
	for (struct kmsg_log *log = handles; log; log = log->next_handle)
		fork_reopen(log);
	pthread_mutex_unlock(&handles_lock);
}

static void install_atfork(void)
{
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

void kmsg__handles_add(struct kmsg_log *log)
{
	/* before any registration: a fork from now on is seen (FORK) */
	pthread_once(&atfork_once, install_atfork);
	pthread_mutex_lock(&handles_lock);
	log->next_handle = handles;
	if (handles)
		handles->prev_handle = log;
	handles = log;
	pthread_mutex_unlock(&handles_lock);
}

void kmsg__handles_remove(struct kmsg_log *log)
{
	pthread_mutex_lock(&handles_lock);
	if (log->prev_handle)
		log->prev_handle->next_handle = log->next_handle;
	else if (handles == log)
		handles = log->next_handle;
	if (log->next_handle)
		log->next_handle->prev_handle = log->prev_handle;
	pthread_mutex_unlock(&handles_lock);
}

int kmsg__writer_register(struct kmsg_log *log)
{
	pthread_once(&atfork_once, install_atfork);
	if (log->owner) {
		/* A forked child without /proc at the fork: get an open file
		 * description of its own now, so the parent's lock is not
		 * taken for ours. */
		char self[64];
		int fd;

		snprintf(self, sizeof(self), "/proc/self/fd/%d", log->fd);
		fd = open(self, O_RDWR | O_CLOEXEC);
		if (fd >= 0 && !kmsg__fd_is_log(log, fd)) {
			close(fd);  /* another file took the number (fork_reopen()) */
			fd = -1;
		}
		if (fd < 0) {
			/* Without /proc, or without the right to open the
			 * file: the parent's description it is. */
			share_description(log);
			return 0;
		}
		fd = kmsg__fd_off_stdio(fd);
		if (fd < 0)
			return fd;
		close(log->fd);
		log->fd = fd;
		log->follower_registered = 0;
	}
	return take_owner(log);
}

int kmsg__writer_ready_slow(struct kmsg_log *log)
{
	unsigned gen = atomic_load_explicit(&kmsg__fork_gen, memory_order_relaxed);
	int r = 0;

	pthread_mutex_lock(&handles_lock);
	if (atomic_load(&log->fork_gen) != gen)
		r = kmsg__writer_register(log);
	pthread_mutex_unlock(&handles_lock);
	return r;
}

int kmsg__writer_alive(const struct kmsg_log *log, unsigned owner, uint64_t boot)
{
	struct flock fl;

	if (boot != log->boot_id || owner == OWNER_NONE || owner > OWNER_SHARED)
		return 0;
	if (owner == OWNER_SHARED || owner == log->owner || owner == log->kin_owner)
		return 1;  /* our own description's locks are invisible to us */
	if (kmsg__ofd_lock(log->fd, F_OFD_GETLK, F_RDLCK, span_of(owner), LOCK_OWNER_SPAN, &fl) < 0)
		return 1;  /* cannot tell: alive, the bounds still hold */
	/* no lock, as asked of this descriptor: of the log's file, unless
	 * the program closed it and another file took its number */
	return fl.l_type != F_UNLCK || !kmsg__fd_is_log(log, log->fd);
}

int kmsg__writers_alive(const struct kmsg_log *log, uint64_t boot)
{
	struct flock fl;

	if (boot != log->boot_id)
		return 0;
	if (log->owner != OWNER_NONE)
		return 1;  /* our own locks are invisible to us (other threads) */
	/* Every id's span but OWNER_SHARED's, which holds no lock: a writer
	 * that could take none is seen only where its id is named. */
	if (kmsg__ofd_lock(log->fd, F_OFD_GETLK, F_RDLCK, span_of(OWNER_NONE + 1),
			   (uint64_t)OWNER_MAX * LOCK_OWNER_SPAN, &fl) < 0)
		return 1;
	return fl.l_type != F_UNLCK || !kmsg__fd_is_log(log, log->fd);  /* as above */
}
