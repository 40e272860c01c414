/*
 * log.c - creating, opening, validating and closing a log file, and the
 * writer registration that lets writers tell a dead lock holder from a
 * live one.  The ring itself (append, recovery) is in ring.c, reading in
 * reader.c.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define BACKUP_SIZE HDR_STATIC

int64_t kmsg__clock_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Moves a descriptor the library keeps off 0, 1 and 2.  A process started
 * with stdin, stdout or stderr closed gets them back from the first open():
 * a log kept there would receive whatever the program prints or read as
 * its input.  Returns the new descriptor (the old one closed), or -errno
 * with fd closed.
 */
int kmsg__fd_off_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	nfd = nfd < 0 ? -errno : nfd;
	close(fd);
	return nfd;
}

/* The first 8 bytes of this boot's random id, 0 if the kernel has none. */
static uint64_t read_boot_id(void)
{
	char buf[64];
	uint64_t id = 0;
	int n = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < len && n < 16; i++) {
		int c = buf[i], v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			continue;
		id = id << 4 | (uint64_t)v;
		n++;
	}
	return id;
}

/*
 * FORK
 *
 * A child after fork() shares its parent's open file descriptions, and
 * OFD locks belong to those.  So the parent's writer lock would live on in
 * the child (a parent that died holding the append lock would look alive
 * for as long as the child lives); a follower lock taken in one of them
 * would be invisible to the other's writers (a writer never sees the
 * locks of its own description); and a child that drops privileges could
 * no longer open the file to get a description of its own.  So at the
 * fork the child handler gives each open handle a description of its
 * own, while the child still has its parent's privileges: it opens
 * /proc/self/fd/N again onto the same descriptor number, maps the log
 * again through it (a mapping holds the description it was made with,
 * and its locks with it, for as long as it exists), registers a writer
 * under a new id and takes the follower lock again.  It finds the
 * handles in a list kept under handles_lock, which the prepare handler
 * takes so that no other thread of the parent is changing the list at
 * the fork.  It calls only what a child of a threaded parent may: open,
 * dup3, close, mmap, fcntl, clock_gettime, getpid, atomics (mmap is not
 * in POSIX's list, but is a plain system call on Linux).  Where /proc is not
 * mounted the open fails; such a handle notices the bumped fork_gen on
 * its next append and registers then, under handles_lock (threads of the
 * child may append at once), with its parent's description.
 */
static _Atomic unsigned fork_gen;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static __thread uint32_t tid_cache;  /* gettid() is a system call */
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static struct kmsg_log *handles;     /* every open handle, under handles_lock */

static int take_writer_id(struct kmsg_log *log);

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

/* The child's half of FORK above, for one handle. */
static void fork_reopen(struct kmsg_log *log)
{
	char path[32];
	int fd;

	self_fd_path(path, log->fd);
	fd = open(path, (log->flags & KMSG_OPEN_WRITE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return;  /* registers on its next append */
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
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
				    .l_start = (off_t)LOCK_FOLLOWER, .l_len = 1 };
		struct timespec ts;

		log->follower_registered = fcntl(log->fd, F_OFD_SETLK, &fl) == 0;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		log->follower_since_ns = ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
	}
	if (log->writer_id)
		take_writer_id(log);
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
	atomic_fetch_add(&fork_gen, 1);
	tid_cache = 0;
	for (struct kmsg_log *log = handles; log; log = log->next_handle)
		fork_reopen(log);
	pthread_mutex_unlock(&handles_lock);
}

uint32_t kmsg__log_tid(void)
{
	if (!tid_cache)
		tid_cache = (uint32_t)gettid();
	return tid_cache;
}
static void install_atfork(void)
{
	pthread_atfork(on_fork_prepare, on_fork_parent, on_fork_child);
}

/* Puts an opened handle on the list FORK walks, or takes it off. */
static void handle_list_add(struct kmsg_log *log)
{
	pthread_mutex_lock(&handles_lock);
	log->next_handle = handles;
	if (handles)
		handles->prev_handle = log;
	handles = log;
	pthread_mutex_unlock(&handles_lock);
}

static void handle_list_remove(struct kmsg_log *log)
{
	pthread_mutex_lock(&handles_lock);
	if (log->prev_handle)
		log->prev_handle->next_handle = log->next_handle;
	else
		handles = log->next_handle;
	if (log->next_handle)
		log->next_handle->prev_handle = log->prev_handle;
	pthread_mutex_unlock(&handles_lock);
}

static int ofd_lock(int fd, int cmd, short type, uint64_t off, struct flock *out)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = (off_t)off, .l_len = 1 };
	if (fcntl(fd, cmd, &fl) < 0)
		return -errno;
	if (out)
		*out = fl;
	return 0;
}

/*
 * Gives the handle a writer id no live writer has, and holds an OFD lock
 * on the byte LOCK_WRITER_BASE + id while the handle is open.  The kernel
 * drops that lock when the process dies (or the machine reboots), which is
 * how another writer learns that the holder of the append lock is gone:
 * it works across PID namespaces, needs no PID, and leaves nothing in the
 * file to go stale.
 */
int kmsg__log_register_writer(struct kmsg_log *log)
{
	if (log->writer_id) {
		/* A forked child: get an open file description of its own,
		 * so the parent's lock is not taken for ours. */
		char self[64];
		int fd;
		snprintf(self, sizeof(self), "/proc/self/fd/%d", log->fd);
		fd = open(self, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		fd = kmsg__fd_off_stdio(fd);
		if (fd < 0)
			return fd;
		close(log->fd);
		log->fd = fd;
		log->follower_registered = 0;
	}
	return take_writer_id(log);
}

/*
 * The id part of kmsg__log_register_writer(), on the handle's own description:
 * only async-signal-safe calls, for the fork child handler.
 */
static int take_writer_id(struct kmsg_log *log)
{
	for (int tries = 0; tries < 64; tries++) {
		uint64_t id = atomic_fetch_add(&log->hdr->writer_ids, 1) + 1;
		int r;
		/* Never the id in the lock word: kmsg__ring_lock takes a lock
		 * word holding its own id for another thread of this
		 * handle and waits, so a stale word left with this id
		 * (a hostile or reverted header) would block every
		 * append for the full wait. */
		if ((id & LOCK_WRITER_MASK) == 0 || id == atomic_load(&log->hdr->lock))
			continue;
		r = ofd_lock(log->fd, F_OFD_SETLK, F_WRLCK,
			     LOCK_WRITER_BASE + (id & LOCK_WRITER_MASK), NULL);
		if (r == 0) {
			log->writer_id = id;
			log->pid = (uint32_t)getpid();
			atomic_store(&log->fork_gen, atomic_load(&fork_gen));
			return 0;
		}
		if (r != -EAGAIN && r != -EACCES)
			return r;
	}
	return KMSG_EBUSY;
}

/*
 * Registers the handle afresh if a fork since its registration left it
 * without (FORK above: no /proc); threads of a child may ask at once.
 */
int kmsg__log_writer_ready(struct kmsg_log *log)
{
	unsigned gen = atomic_load_explicit(&fork_gen, memory_order_relaxed);
	int r = 0;

	if (atomic_load_explicit(&log->fork_gen, memory_order_acquire) == gen)
		return 0;
	pthread_mutex_lock(&handles_lock);
	if (atomic_load(&log->fork_gen) != gen)
		r = kmsg__log_register_writer(log);
	pthread_mutex_unlock(&handles_lock);
	return r;
}

/*
 * 1 if the writer with this id still has its log open, 0 if it is gone.
 * A live writer holds a write lock on its byte, and a write lock
 * excludes every other lock there; so a read lock there (anyone who may
 * read the file can take one) means the writer is gone.
 */
int kmsg__log_owner_alive(struct kmsg_log *log, uint64_t writer_id)
{
	struct flock fl = { .l_type = F_WRLCK };
	if (ofd_lock(log->fd, F_OFD_GETLK, F_WRLCK,
		     LOCK_WRITER_BASE + (writer_id & LOCK_WRITER_MASK), &fl) < 0)
		return 1; /* cannot tell: assume alive, the wait bound still holds */
	return fl.l_type == F_WRLCK;
}

/* 1 if some reader is registered as a follower of the log. */
int kmsg__log_followers_present(struct kmsg_log *log)
{
	struct flock fl = { .l_type = F_WRLCK };
	if (log->follower_registered)
		return 1;
	if (ofd_lock(log->fd, F_OFD_GETLK, F_WRLCK, LOCK_FOLLOWER, &fl) < 0)
		return 1;
	return fl.l_type != F_UNLCK;
}

int kmsg__log_register_follower(struct kmsg_log *log)
{
	int r;
	if (log->follower_registered)
		return 0;
	r = ofd_lock(log->fd, F_OFD_SETLK, F_RDLCK, LOCK_FOLLOWER, NULL);
	if (r < 0)
		return r;
	log->follower_registered = 1;
	log->follower_since_ns = kmsg__clock_ns(CLOCK_MONOTONIC);
	return 0;
}

/*
 * Checks a static header (primary or backup copy): its sizes must agree
 * with each other and the file must be as long as it says, or shorter when
 * short_ok (a file cut short; see open_fd).  Returns 0, KMSG_ENOTLOG,
 * KMSG_EVERSION or KMSG_ECORRUPT.
 */
static int check_static(const struct kmsg_hdr *h, uint64_t st_size, int short_ok)
{
	uint64_t max_rec;

	if (memcmp(h->magic, KMSG_MAGIC, 8) != 0)
		return KMSG_ENOTLOG;
	if (kmsg__hdr_crc(h) != h->header_crc)
		return KMSG_ECORRUPT;
	if (h->version != KMSG_FORMAT_VERSION || (h->incompat & ~INCOMPAT_KNOWN))
		return KMSG_EVERSION;
	if (h->header_size != HDR_SIZE || h->data_off != HDR_SIZE)
		return KMSG_ECORRUPT;
	if ((short_ok ? h->file_size < st_size : h->file_size != st_size) ||
	    h->file_size < KMSG_MIN_SIZE ||
	    h->file_size > KMSG_MAX_SIZE || h->file_size % 4096)
		return KMSG_ECORRUPT;
	if (h->data_size != h->file_size - HDR_SIZE - BACKUP_SIZE)
		return KMSG_ECORRUPT;
	if (h->max_text < 1 || h->max_text > KMSG_MAX_TEXT_LIMIT ||
	    h->max_fields != KMSG_MAX_FIELDS_BYTES || h->first_seq == 0)
		return KMSG_ECORRUPT;
	max_rec = rec_size(h->max_text, 0);
	if (max_rec > h->data_size / 2)
		return KMSG_ECORRUPT;
	return 0;
}

/*
 * Maps the whole log.  A file shorter than its header says (have < size)
 * is only ever mapped for reading: its missing end reads as zeros, as
 * pages a power cut never wrote, instead of raising SIGBUS.
 */
static int map_log(struct kmsg_log *log, uint64_t size, uint64_t have)
{
	int prot = PROT_READ | (log->flags & KMSG_OPEN_WRITE ? PROT_WRITE : 0);
	void *m;

	if (have >= size) {
		m = mmap(NULL, size, prot, MAP_SHARED, log->fd, 0);
		if (m == MAP_FAILED)
			return -errno;
	} else {
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t part = (have + page - 1) / page * page;
		m = mmap(NULL, size, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
		if (m == MAP_FAILED)
			return -errno;
		if (mmap(m, part < size ? part : size, PROT_READ, MAP_SHARED | MAP_FIXED,
			 log->fd, 0) == MAP_FAILED) {
			int e = -errno;
			munmap(m, size);
			return e;
		}
	}
	log->map = m;
	log->map_size = size;
	log->opened_size = have;
	log->hdr = m;
	log->data = (unsigned char *)m + HDR_SIZE;
	return 0;
}

/*
 * Gives an existing log the incompatible features this build writes
 * (records marked REC_BEGIN), so that an older reader refuses it with
 * KMSG_EVERSION rather than take those records for damage.  The primary
 * copy first, then the backup: a power cut between the two leaves the
 * backup with the old bits, which the next writer upgrades again.  Called
 * with the append lock held.
 */
static void upgrade_features(struct kmsg_log *log)
{
	struct kmsg_hdr *h = log->hdr;

	if ((h->incompat & INCOMPAT_KNOWN) == INCOMPAT_KNOWN)
		return;
	h->incompat |= INCOMPAT_KNOWN;
	h->header_crc = kmsg__hdr_crc(h);
	msync(log->map, HDR_STATIC, MS_SYNC);
	memcpy(log->map + log->map_size - BACKUP_SIZE, h, BACKUP_SIZE);
	msync(log->map + ((log->map_size - BACKUP_SIZE) & ~(uint64_t)4095),
	      4096, MS_SYNC);
}

/*
 * THE NUMBERING'S IDENTITY
 *
 * A sequence number names a record only together with the numbering it
 * was given in.  Within a boot numbers never repeat: every writer sees the
 * same pages.  A power cut can lose the last numbers handed out (their
 * records and the header's next_seq never reached the disk), and the
 * rebuild then hands them out again for other records; so can damage that
 * forces a rebuild.  So every rebuild by a writer renews the identity:
 * a new random 64-bit id, valid from the number the rebuild continues at
 * (seq_id_since).  The records below that number are the ones that were
 * there before, and keep their numbers: under the new id they mean what
 * they meant under the old.  The header keeps the two identities before
 * the current one, so that a consumer's position (id, seq) resolves:
 *
 *	id == current                  seq names the same record
 *	id == prev,  seq < since       the same record
 *	id == prev2, seq < both sinces the same record
 *	otherwise                      renumbered: what was there is lost
 *
 * A rebuild follows every reboot (the header cannot be trusted after a
 * power cut), so the identity changes at each boot's first writer, even
 * when nothing was lost.  A log made before the identity existed has the
 * implicit one, from its ring id, until a writer stores it.
 *
 * Stores (under the append lock): prev2, prev_since, prev, since, then
 * the id last (release) [N1].  Loads: the id (acquire), the rest, the id
 * again; a changed id means a renewal was under way: read again [N2].
 */
static uint64_t implicit_seq_id(const struct kmsg_hdr *h)
{
	uint64_t id;

	memcpy(&id, h->ring_id, sizeof(id));
	return id ? id : 1;
}

uint64_t kmsg__log_seq_id(const struct kmsg_hdr *h)
{
	uint64_t id = atomic_load_explicit(&h->seq_id, memory_order_acquire);   /* N2 */

	return id ? id : implicit_seq_id(h);
}

void kmsg__log_numbering(const struct kmsg_hdr *h, struct numbering *n)
{
	for (int tries = 0;; tries++) {
		uint64_t id = atomic_load_explicit(&h->seq_id, memory_order_acquire); /* N2 */

		n->since = atomic_load_explicit(&h->seq_id_since, memory_order_relaxed);
		n->prev_id = atomic_load_explicit(&h->prev_seq_id, memory_order_relaxed);
		n->prev_since = atomic_load_explicit(&h->prev_seq_id_since, memory_order_relaxed);
		n->prev2_id = atomic_load_explicit(&h->prev2_seq_id, memory_order_relaxed);
		atomic_thread_fence(memory_order_acquire);
		/* a hostile file may change it for ever: after a few tries,
		 * what was read is as good as any */
		if (atomic_load_explicit(&h->seq_id, memory_order_relaxed) == id || tries == 3) {
			n->id = id;
			break;
		}
	}
	if (n->id == 0) {
		n->id = implicit_seq_id(h);
		n->since = h->first_seq;
		n->prev_id = n->prev_since = n->prev2_id = 0;
	}
}

void kmsg__log_stat_numbering(struct kmsg_stat *st, const struct kmsg_hdr *h)
{
	struct numbering n;

	kmsg__log_numbering(h, &n);
	st->seq_id = n.id;
	st->seq_id_since = n.since;
	st->prev_seq_id = n.prev_id;
	st->prev_seq_id_since = n.prev_since;
	st->prev2_seq_id = n.prev2_id;
}

/*
 * A new identity from next_seq on, the current one becoming the previous.
 * Called with the append lock held, after a rebuild.
 */
static void renew_numbering(struct kmsg_log *log)
{
	struct kmsg_hdr *h = log->hdr;
	struct numbering n;
	uint64_t id = 0;

	kmsg__log_numbering(h, &n);
	while (id == 0 || id == n.id || id == n.prev_id)
		if (getrandom(&id, sizeof(id), 0) != sizeof(id))
			id = (uint64_t)kmsg__clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 40) ^ n.id;
	atomic_store_explicit(&h->prev2_seq_id, n.prev_id, memory_order_relaxed);
	atomic_store_explicit(&h->prev_seq_id_since, n.since, memory_order_relaxed);
	atomic_store_explicit(&h->prev_seq_id, n.id, memory_order_relaxed);
	atomic_store_explicit(&h->seq_id_since, atomic_load(&h->next_seq), memory_order_relaxed);
	atomic_store_explicit(&h->seq_id, id, memory_order_release);                /* N1 */
}

/* Is the dynamic part of the header one a reader can work from? */
/*
 * Is the dynamic part of header h (the log's own, or a copy read from its
 * file) one a reader can work from?  It must also admit what
 * rebuild_dynamic() leaves: a next_seq kept larger than the newest record
 * (the records in between lost), within one ring's worth of numbers.
 */
static int dynamic_sane(const struct kmsg_log *log, const struct kmsg_hdr *h)
{
	uint64_t head = atomic_load(&h->head), tail = atomic_load(&h->tail);
	uint64_t next = atomic_load(&h->next_seq), clear = atomic_load(&h->clear_seq);
	const uint64_t most = log->data_size / REC_HDR + 1;

	/* Every record takes at least REC_HDR bytes of positions, so more
	 * numbers than that cannot have been handed out. */
	if (!(head <= tail && tail - head <= log->data_size &&
	      head % REC_ALIGN == 0 && tail % REC_ALIGN == 0 &&
	      tail < (UINT64_C(1) << 62) && next >= h->first_seq &&
	      next - h->first_seq <= tail / REC_HDR + most && clear <= next))
		return 0;
	/* The oldest record, if it is intact, must fit the numbering: older
	 * than next_seq by no more records than one ring could hold. */
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

/*
 * Rebuilds head, tail and next_seq from the records themselves, for a
 * header that was lost or is inconsistent (a power cut that wrote back the
 * data but not the header page, or the reverse).  Each record carries the
 * position it was written at, so one pass over the data finds the newest
 * run of valid records.  Called with the append lock held.
 */
static void rebuild_dynamic(struct kmsg_log *log)
{
	struct kmsg_hdr *h = log->hdr;
	const uint64_t D = log->data_size;
	uint64_t best_seq = 0, best_end = 0, found = 0, head;

	for (uint64_t phys = 0; phys + REC_HDR <= D; phys += REC_ALIGN) {
		const struct rec_hdr *m = (const void *)(log->data + phys);
		struct rec_hdr r;
		uint64_t len, at = m->pos;
		if (m->magic != REC_MAGIC || at % D != phys || at >= (UINT64_C(1) << 62))
			continue;
		len = kmsg__rec_check(log, at, &r);
		if (!len || (r.flags & REC_PAD))
			continue;
		if (!found || r.seq > best_seq) {
			best_seq = r.seq;
			best_end = r.pos + len;
		}
		found = 1;
		phys += len - REC_ALIGN;
	}
	uint64_t old_next = atomic_load(&h->next_seq), old_tail = atomic_load(&h->tail);
	uint64_t old_clear = atomic_load(&h->clear_seq);
	if (!found) {
		/* No record survived: keep the header's numbering if it is
		 * believable (so no number is handed out twice), else start
		 * over. */
		if (old_tail % REC_ALIGN || old_tail >= (UINT64_C(1) << 62) ||
		    old_next < h->first_seq || old_next - h->first_seq > old_tail / REC_HDR) {
			old_tail = 0;
			old_next = h->first_seq;
		}
		/* next_seq before tail: a reader that sees the new tail
		 * must not pair it with the old number (see end_seq()). */
		atomic_store(&h->next_seq, old_next);
		atomic_store(&h->clear_seq, old_next);
		atomic_store(&h->head, old_tail);
		atomic_store(&h->tail, old_tail);
		return;
	}
	/* Head: the oldest valid record within one ring length of the end,
	 * so that readers start on a record, not in the middle of one. */
	uint64_t window = best_end > D ? best_end - D : 0;
	head = best_end;
	for (uint64_t phys = 0; phys + REC_HDR <= D; phys += REC_ALIGN) {
		const struct rec_hdr *m = (const void *)(log->data + phys);
		struct rec_hdr r;
		uint64_t len, at = m->pos;
		if (m->magic != REC_MAGIC || at % D != phys || at < window || at >= best_end)
			continue;
		len = kmsg__rec_check(log, at, &r);
		if (!len)
			continue;
		if (r.pos < head)
			head = r.pos;
		phys += len - REC_ALIGN;
	}
	/* The newest records may be the ones lost (a file cut short, a
	 * power cut that kept the header page and not the last data pages):
	 * a believable larger number from the header wins, leaving a gap
	 * readers report, and the records in it are counted as damaged so
	 * that kmsg stat shows them too. */
	if (old_next > best_seq + 1 && old_next - best_seq <= log->data_size / REC_HDR + 1) {
		atomic_store(&h->next_seq, old_next);
		atomic_fetch_add(&h->damaged, old_next - best_seq - 1);
	} else {
		atomic_store(&h->next_seq, best_seq + 1);
	}
	/* A clear mark past the numbers handed out cannot be: damage, so
	 * nothing is taken as cleared (hiding records would be worse than
	 * showing cleared ones again); one past what survived is clamped. */
	if (old_clear > old_next)
		atomic_store(&h->clear_seq, h->first_seq);
	else if (old_clear > atomic_load(&h->next_seq))
		atomic_store(&h->clear_seq, atomic_load(&h->next_seq));
	/* next_seq before tail, as above. */
	atomic_store(&h->head, head);
	atomic_store(&h->tail, best_end);
}

/*
 * For a reader of a log whose header is damaged (the first page torn or
 * zeroed by a power cut, a hostile edit): the header page becomes a
 * private copy, given the backup's static part when the primary's failed
 * its checks, and the dynamic part is rebuilt from the records there, as
 * a writer would rebuild it in the file.  The file is not touched.  The
 * copy no longer follows writers; kmsg_log_file_changed() says when a
 * writer has repaired the file, so that a follower can open it again.
 */
static int private_header(struct kmsg_log *log, const struct kmsg_hdr *backup)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (mmap(log->map, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
		 log->fd, 0) == MAP_FAILED)
		return -errno;
	if (backup)
		memcpy(log->map, backup, HDR_STATIC);
	rebuild_dynamic(log);
	mprotect(log->map, page, PROT_READ);
	log->private_hdr = 1;
	return 0;
}

/*
 * Restores a file cut short to the size its header gives: the missing end
 * comes back as zeros (holes), the backup header is written again, and the
 * caller rebuilds the dynamic header from the records that survived.  A
 * crafted header can make this grow a file, but to no size its author
 * could not have made with truncate(1).
 */
static int restore_size(int fd, const struct kmsg_hdr *h)
{
	if (ftruncate(fd, (off_t)h->file_size) < 0)
		return -errno;
	if (pwrite(fd, h, BACKUP_SIZE, (off_t)(h->file_size - BACKUP_SIZE)) != BACKUP_SIZE)
		return -EIO;
	if (fdatasync(fd) < 0)
		return -errno;
	return 0;
}

static int open_fd(struct kmsg_log **out, int fd, unsigned flags)
{
	struct kmsg_log *log;
	struct stat st;
	struct kmsg_hdr primary, backup;
	uint64_t have;
	int r, r2, use_backup = 0, cut_short = 0;

	/* before any registration: a fork from now on is seen (FORK) */
	pthread_once(&atfork_once, install_atfork);
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return KMSG_ENOTLOG;
	have = (uint64_t)st.st_size;
	if (have < HDR_SIZE) {
		/* Tell an empty or foreign small file from a cut-short log. */
		char m[8];
		return pread(fd, m, 8, 0) == 8 && !memcmp(m, KMSG_MAGIC, 8)
			? KMSG_ECORRUPT : KMSG_ENOTLOG;
	}
	if (pread(fd, &primary, HDR_STATIC, 0) != HDR_STATIC)
		return -EIO;
	/* A file shorter than its header says lost its end (a copy that
	 * stopped, a file system that kept the size but not the data): its
	 * records up to the cut are still good.  Longer is never innocent. */
	r = check_static(&primary, have, 1);
	if (r == 0 && primary.file_size > have) {
		cut_short = 1;
	} else if (r) {
		/* The first page may be the one a power cut zeroed or tore. */
		if (have < KMSG_MIN_SIZE ||
		    pread(fd, &backup, BACKUP_SIZE, st.st_size - BACKUP_SIZE) != BACKUP_SIZE)
			return r;
		r2 = check_static(&backup, have, 0);
		if (r2 == 0)
			use_backup = 1;
		else
			return r == KMSG_ENOTLOG ? r2 : r;
	}
	if (cut_short && (flags & KMSG_OPEN_WRITE)) {
		r = restore_size(fd, &primary);
		if (r < 0)
			return r;
		have = primary.file_size;
	}

	log = calloc(1, sizeof(*log));
	if (!log)
		return -ENOMEM;
	log->fd = fd;
	log->flags = flags;
	r = map_log(log, use_backup ? backup.file_size : primary.file_size, have);
	if (r < 0) {
		free(log);
		return r;
	}
	{
		const struct kmsg_hdr *s = use_backup ? &backup : &primary;
		log->data_size = s->data_size;
		log->max_text = s->max_text;
		/* The largest record a writer may make: half the ring, and
		 * no more than the longest text with the most fields. */
		log->max_rec = rec_size(log->max_text, KMSG_MAX_FIELDS_BYTES);
		if (log->max_rec > log->data_size / 2)
			log->max_rec = log->data_size / 2 & ~(uint64_t)(REC_ALIGN - 1);
	}
	memcpy(log->ring_id, (use_backup ? &backup : &primary)->ring_id, sizeof(log->ring_id));
	log->boot_id = read_boot_id();
	log->pid = (uint32_t)getpid();
	log->lock_wait_ns = INT64_C(1000) * 1000 * 1000;

	if (flags & KMSG_OPEN_WRITE) {
		int repair = use_backup || cut_short;
		if (use_backup)
			memcpy(log->map, &backup, HDR_STATIC);
		r = kmsg__log_register_writer(log);
		if (r < 0)
			goto fail;
		r = kmsg__ring_lock(log);
		if (r < 0)
			goto fail;
		/* The first writer after a reboot cannot trust the header:
		 * a power cut may have kept data pages and lost the header's
		 * latest state, or the reverse.  It rebuilds from the records
		 * (one pass over the ring, once per boot). */
		if (repair || !dynamic_sane(log, log->hdr) ||
		    atomic_load(&log->hdr->boot_id) != log->boot_id) {
			rebuild_dynamic(log);
			renew_numbering(log);
			atomic_store(&log->hdr->boot_id, log->boot_id);
		}
		/* A writer that died before publishing what it committed. */
		kmsg__ring_recover_locked(log);
		upgrade_features(log);
		kmsg__ring_unlock(log);
	} else if (use_backup || !dynamic_sane(log, log->hdr)) {
		/* A reader cannot repair the file, nor wait for a writer to:
		 * it reads through a header of its own. */
		r = private_header(log, use_backup ? &backup : NULL);
		if (r)
			goto fail;
	}
	handle_list_add(log);
	*out = log;
	return 0;
fail:
	munmap(log->map, log->map_size);
	free(log);
	return r;
}

/* For dump.c: a decompressed dump is opened from its memfd. */
int kmsg__log_open_fd(struct kmsg_log **out, int fd, unsigned flags)
{
	return open_fd(out, fd, flags);
}

int kmsg_log_open(struct kmsg_log **out, const char *path, unsigned flags)
{
	int fd, r;

	if (!out || !path || (flags & ~(unsigned)(KMSG_OPEN_WRITE | KMSG_OPEN_SYNC)))
		return KMSG_EINVAL;
	fd = open(path, (flags & KMSG_OPEN_WRITE ? O_RDWR : O_RDONLY) | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	fd = kmsg__fd_off_stdio(fd);
	if (fd < 0)
		return fd;
	r = open_fd(out, fd, flags);
	if (r < 0)
		close(fd);
	return r;
}

/* Fills a fresh static header and the initial dynamic state. */
static void init_header(struct kmsg_hdr *h, const struct kmsg_create_opts *o)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, KMSG_MAGIC, 8);
	h->version = KMSG_FORMAT_VERSION;
	h->header_size = HDR_SIZE;
	h->file_size = o->size;
	h->data_off = HDR_SIZE;
	h->data_size = o->size - HDR_SIZE - BACKUP_SIZE;
	h->max_text = o->max_text;
	h->max_fields = KMSG_MAX_FIELDS_BYTES;
	if (getrandom(h->ring_id, sizeof(h->ring_id), 0) != sizeof(h->ring_id)) {
		/* No entropy source: the id needs only to tell logs apart. */
		uint64_t t = (uint64_t)kmsg__clock_ns(CLOCK_REALTIME) ^ ((uint64_t)getpid() << 32);
		memcpy(h->ring_id, &t, 8);
	}
	h->created_ns = kmsg__clock_ns(CLOCK_REALTIME);
	h->first_seq = o->first_seq;
	h->incompat = INCOMPAT_KNOWN;
	h->header_crc = kmsg__hdr_crc(h);
	atomic_store(&h->next_seq, o->first_seq);
	atomic_store(&h->clear_seq, o->first_seq);
	/* Made in this boot and empty: nothing for the first writer to
	 * rebuild (the scan of a 4 GiB ring took seconds). */
	atomic_store(&h->boot_id, read_boot_id());
	atomic_store(&h->seq_id_since, o->first_seq);
	atomic_store(&h->seq_id, implicit_seq_id(h));
}

static int check_opts(const struct kmsg_create_opts *o)
{
	if (o->version != KMSG_CREATE_OPTS_VERSION || o->first_seq == 0 ||
	    o->first_seq > (UINT64_C(1) << 63))
		return KMSG_EINVAL;
	if (o->size < KMSG_MIN_SIZE || o->size > KMSG_MAX_SIZE || o->size % 4096)
		return KMSG_ESIZE;
	if (o->max_text < 1 || o->max_text > KMSG_MAX_TEXT_LIMIT)
		return KMSG_ETOOLONG;
	if (rec_size(o->max_text, 0) > (o->size - HDR_SIZE - BACKUP_SIZE) / 2)
		return KMSG_ESIZE;
	return 0;
}

/*
 * Makes a complete log under a temporary name beside path; on success *fd
 * is open on it and *tmp holds its name.
 */
/* The directory part of path, "." if it has none, into dir (dirsz bytes). */
static int dir_of(char *dir, size_t dirsz, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 1;

	if (slash == path)
		n = 1;
	if (n >= dirsz)
		return -ENAMETOOLONG;
	memcpy(dir, slash ? path : ".", n);
	dir[n] = '\0';
	return 0;
}

/*
 * Makes the new file in path's directory as an unnamed file (O_TMPFILE),
 * so that a creator killed half-way leaves nothing behind; tmp becomes
 * its /proc/self/fd name, for link().  Where the file system cannot (or
 * /proc is missing), a named file "path.new-RANDOM" instead, which a
 * killed creator leaves behind.
 */
static int open_new(int *fd, char *tmp, size_t tmpsz, const char *path, mode_t mode)
{
	char dir[4096];
	uint64_t rnd = 0;

	if (dir_of(dir, sizeof(dir), path) == 0 && access("/proc/self/fd", X_OK) == 0) {
		*fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, mode & 07777);
		if (*fd >= 0) {
			*fd = kmsg__fd_off_stdio(*fd);
			if (*fd < 0)
				return *fd;
			snprintf(tmp, tmpsz, "/proc/self/fd/%d", *fd);
			return 1;
		}
	}
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		rnd = (uint64_t)kmsg__clock_ns(CLOCK_MONOTONIC) ^ (uint64_t)getpid();
	if ((size_t)snprintf(tmp, tmpsz, "%s.new-%016llx", path,
			     (unsigned long long)rnd) >= tmpsz)
		return -ENAMETOOLONG;
	*fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (*fd < 0)
		return -errno;
	*fd = kmsg__fd_off_stdio(*fd);
	if (*fd < 0) {
		unlink(tmp);
		return *fd;
	}
	return 0;
}

/* Removes the named temporary file of open_new(), if it made one. */
static void unlink_new(const char *tmp)
{
	if (strncmp(tmp, "/proc/self/fd/", 14) != 0)
		unlink(tmp);
}

/*
 * Syncs path's directory, so that the name a new log was just given
 * survives a power cut too.  A directory that cannot be opened or synced
 * (some file systems refuse) leaves the name to the next writeback.
 */
static void sync_dir_of(const char *path)
{
	char dir[4096];
	int fd;

	if (dir_of(dir, sizeof(dir), path) < 0)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

static int build_new(int *fd, char *tmp, size_t tmpsz, const char *path,
		     const struct kmsg_create_opts *o)
{
	struct kmsg_hdr h;
	int r;

	r = open_new(fd, tmp, tmpsz, path, o->mode);
	if (r < 0)
		return r;
	r = posix_fallocate(*fd, 0, (off_t)o->size);
	if (r) {
		r = -r;
		goto fail;
	}
	init_header(&h, o);
	if (pwrite(*fd, &h, HDR_SIZE, 0) != HDR_SIZE ||
	    pwrite(*fd, &h, BACKUP_SIZE, (off_t)(o->size - BACKUP_SIZE)) != BACKUP_SIZE ||
	    fsync(*fd) < 0) {
		r = errno ? -errno : -EIO;
		goto fail;
	}
	return 0;
fail:
	close(*fd);
	unlink_new(tmp);
	return r;
}

/* An existing file at the log path must be a regular file of ours (or root's). */
static int check_existing(int fd)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return KMSG_ENOTLOG;
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -EPERM;
	return 0;
}

int kmsg_log_create(struct kmsg_log **out, const char *path,
		    const struct kmsg_create_opts *opts, unsigned flags)
{
	struct kmsg_create_opts defaults = KMSG_CREATE_OPTS_INIT;
	const struct kmsg_create_opts *o = opts ? opts : &defaults;
	char tmp[4096];
	int fd, r;

	if (!out || !path || (flags & ~(unsigned)(KMSG_OPEN_WRITE | KMSG_OPEN_SYNC)))
		return KMSG_EINVAL;
	flags |= KMSG_OPEN_WRITE;
	for (int attempt = 0; attempt < 8; attempt++) {
		fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0 && (fd = kmsg__fd_off_stdio(fd)) < 0)
			return fd;
		if (fd >= 0) {
			r = check_existing(fd);
			if (r == 0)
				r = open_fd(out, fd, flags);
			if (r < 0)
				close(fd);
			return r;
		}
		if (errno != ENOENT)
			return errno == ELOOP ? -ELOOP : -errno;
		/* The options matter only for a new file. */
		r = check_opts(o);
		if (r < 0)
			return r;
		r = build_new(&fd, tmp, sizeof(tmp), path, o);
		if (r < 0)
			return r;
		/* link() fails if another creator won the race: use theirs.
		 * For /proc/self/fd/N, linkat() must follow the link. */
		if (linkat(AT_FDCWD, tmp, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) {
			unlink_new(tmp);
			sync_dir_of(path);
			r = open_fd(out, fd, flags);
			if (r < 0)
				close(fd);
			return r;
		}
		r = -errno;
		close(fd);
		unlink_new(tmp);
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

int kmsg_log_file_changed(struct kmsg_log *log, const char *path)
{
	struct stat now, ours;

	if (!log || !path)
		return KMSG_EINVAL;
	if (stat(path, &now) < 0)
		return errno == ENOENT ? KMSG_FILE_GONE : -errno;
	if (fstat(log->fd, &ours) < 0)
		return -errno;
	if (now.st_dev != ours.st_dev || now.st_ino != ours.st_ino)
		return KMSG_FILE_REPLACED;
	if ((uint64_t)ours.st_size != log->opened_size)
		return KMSG_FILE_RESIZED;
	{
		struct kmsg_hdr h;
		if (pread(log->fd, &h, HDR_SIZE, 0) != HDR_SIZE)
			return KMSG_FILE_SAME;  /* cannot tell */
		/* The same inode rewritten with another log (cp over it). */
		if (check_static(&h, (uint64_t)ours.st_size, 0) == 0 &&
		    memcmp(h.ring_id, log->ring_id, sizeof(h.ring_id)) != 0)
			return KMSG_FILE_REWRITTEN;
		/* A header this reader had to rebuild for itself is whole in
		 * the file again: a writer repaired it. */
		if (log->private_hdr && check_static(&h, (uint64_t)ours.st_size, 0) == 0 &&
		    dynamic_sane(log, &h))
			return KMSG_FILE_REPAIRED;
	}
	return KMSG_FILE_SAME;
}

uint64_t kmsg_boot_id(void)
{
	return read_boot_id();
}

void kmsg_log_close(struct kmsg_log *log)
{
	if (!log)
		return;
	handle_list_remove(log);
	munmap(log->map, log->map_size);
	close(log->fd);  /* drops the writer and follower locks */
	free(log);
}

int kmsg_log_stat(struct kmsg_stat *st, struct kmsg_log *log)
{
	const struct kmsg_hdr *h;
	int n;

	if (!st || !log)
		return KMSG_EINVAL;
	h = log->hdr;
	memset(st, 0, sizeof(*st));
	st->file_size = log->map_size;
	st->data_size = log->data_size;
	st->max_text = log->max_text;
	st->format_version = h->version;
	memcpy(st->ring_id, h->ring_id, sizeof(st->ring_id));
	st->created_ns = h->created_ns;
	st->next_seq = atomic_load(&h->next_seq);
	st->clear_seq = atomic_load(&h->clear_seq);
	st->evicted = atomic_load(&h->evicted);
	st->damaged = atomic_load(&h->damaged);
	st->takeovers = atomic_load(&h->takeovers);
	kmsg__log_stat_numbering(st, h);
	{
		uint64_t head = atomic_load(&h->head), tail = atomic_load(&h->tail);
		st->used = tail >= head ? tail - head : 0;
	}
	/* The oldest record's number is in the record, not the header. */
	{
		uint64_t pos;
		n = kmsg__ring_oldest(log, &pos, &st->first_seq);
		if (n == 1)
			st->first_seq = st->next_seq;  /* writers overtook us */
	}
	return n < 0 ? n : 0;
}
