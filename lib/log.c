/*
 * log.c - the log handle of the public interface: opening, creating,
 * closing, noticing a file changed under it, and its state in numbers.
 * It puts the layers together: the file (file.c), the writer's
 * registration (writer.c), the ring's state (ring.c).
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static pthread_once_t cpu_once = PTHREAD_ONCE_INIT;

/* Handles' serial numbers: what a thread remembers of one (ring.c) is
 * never taken for another's opened at the same address later. */
static _Atomic uint64_t serials;

static int open_fd(struct kmsg_log **out, int fd, unsigned flags)
{
	struct kmsg_log *log = calloc(1, sizeof(*log));
	int r, repair;

	pthread_once(&cpu_once, kmsg__cpu_init);

	if (!log)
		return -ENOMEM;
	log->fd = fd;
	log->flags = flags;
	log->serial = atomic_fetch_add(&serials, 1) + 1;
	if ((flags & KMSG_OPEN_WRITE) && !(flags & KMSG_OPEN_ONE_HOST) && kmsg__shared_fs(fd)) {
		free(log);
		return KMSG_ESHAREDFS;
	}
	/* A look at a header that is not clean may have caught a log being
	 * made in place (file.c, MAKING IN PLACE): its maker is waited for
	 * before this open repairs, rebuilds or refuses anything. */
	{
		struct kmsg_static h;
		uint64_t have;

		r = kmsg__file_read_static(fd, &h, &have);
		if ((r < 0 || h.file_size != have) && (r = kmsg__file_wait_maker(fd)) < 0) {
			free(log);
			return r;
		}
	}
	r = kmsg__file_map(log, &repair);
	if (r < 0) {
		free(log);
		return r;
	}
	{
		struct stat st;

		if (fstat(fd, &st) == 0) {
			log->file_dev = (uint64_t)st.st_dev;
			log->file_ino = (uint64_t)st.st_ino;
		}
	}
	log->boot_id = kmsg__read_boot_id();
	log->pid = (uint32_t)getpid();
	if (flags & KMSG_OPEN_WRITE) {
		r = kmsg__writer_register(log);
		if (r < 0)
			goto fail;
		/* A header that cannot be trusted is rebuilt from the records
		 * (ring.c, ENTERING A BOOT); the rest of entering this boot
		 * is done here too, so that the first append is quick. */
		if (repair || !kmsg__ring_sane(log, log->map + HDR_STATIC))
			kmsg__ring_rebuild(log);
		r = kmsg__ring_enter_boot(log);
		if (r < 0)
			goto fail;
	} else if (repair || !kmsg__ring_sane(log, log->map + HDR_STATIC)) {
		/* A reader cannot repair the file, nor wait for a writer to:
		 * it reads through a header of its own. */
		r = kmsg__file_private_header(log);
		if (r < 0)
			goto fail;
		kmsg__ring_rebuild(log);
		kmsg__file_seal(log);
	}
	kmsg__handles_add(log);
	*out = log;
	return 0;
fail:
	kmsg__file_unmap(log);
	free(log);
	return r;
}

/* For dump.c: a decompressed dump is opened from its memfd. */
int kmsg__log_open_fd(struct kmsg_log **out, int fd, unsigned flags)
{
	return open_fd(out, fd, flags);
}

#define OPEN_FLAGS (KMSG_OPEN_WRITE | KMSG_OPEN_SYNC | KMSG_OPEN_ONE_HOST)

/* An existing file at the log path must be a regular file of ours (or root's)
 * to be written; *empty says whether it is a log not yet made. */
static int check_existing(int fd, int *empty)
{
	struct stat st;
	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return KMSG_ENOTLOG;
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -EPERM;
	*empty = st.st_size == 0;
	return 0;
}

/*
 * Opens the file at path as a log would be opened: for writing, never
 * through a symbolic link (-ELOOP) and only a regular file of ours or
 * root's; never blocking on a FIFO someone planted there (it is no log).
 * Returns the descriptor, off stdio, or a negative code; *empty as in
 * check_existing() (reading: 0).
 */
static int open_path(const char *path, unsigned flags, int *empty)
{
	int w = flags & KMSG_OPEN_WRITE, fd, r;

	*empty = 0;
	fd = open(path, (w ? O_RDWR | O_NOFOLLOW : O_RDONLY) | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return errno == ELOOP && w ? -ELOOP : -errno;
	fd = kmsg__fd_off_stdio(fd);
	if (fd < 0 || !w)
		return fd;
	r = check_existing(fd, empty);
	if (r < 0) {
		close(fd);
		return r;
	}
	return fd;
}

int kmsg_log_open(struct kmsg_log **out, const char *path, unsigned flags)
{
	int fd, r, empty;

	if (!out || !path || (flags & ~(unsigned)OPEN_FLAGS))
		return KMSG_EINVAL;
	fd = open_path(path, flags, &empty);
	if (fd < 0)
		return fd;
	r = open_fd(out, fd, flags);
	if (r < 0)
		close(fd);
	return r;
}

int kmsg_log_create(struct kmsg_log **out, const char *path,
		    const struct kmsg_create_opts *opts, unsigned flags)
{
	struct kmsg_create_opts defaults = KMSG_CREATE_OPTS_INIT;
	const struct kmsg_create_opts *o = opts ? opts : &defaults;
	int fd, r;

	if (!out || !path || (flags & ~(unsigned)OPEN_FLAGS))
		return KMSG_EINVAL;
	flags |= KMSG_OPEN_WRITE;
	for (int attempt = 0; attempt < 8; attempt++) {
		int empty;

		fd = open_path(path, flags, &empty);
		if (fd >= 0) {
			/* The options matter only for a log not yet made. */
			r = 0;
			if (empty && !(flags & KMSG_OPEN_ONE_HOST) && kmsg__shared_fs(fd))
				r = KMSG_ESHAREDFS;
			if (empty && r == 0 && (r = kmsg__file_check_opts(o)) == 0)
				r = kmsg__file_make_in(fd, o);
			if (r == 0)
				r = open_fd(out, fd, flags);
			if (r < 0)
				close(fd);
			return r;
		}
		if (fd != -ENOENT)
			return fd;
		r = kmsg__file_check_opts(o);
		if (r < 0)
			return r;
		r = kmsg__file_create(&fd, path, o, flags);
		if (r == 0) {
			r = open_fd(out, fd, flags);
			if (r < 0)
				close(fd);
			return r;
		}
		if (r != -EEXIST)
			return r;
	}
	return -EEXIST;
}

int kmsg_log_file_changed(struct kmsg_log *log, const char *path)
{
	struct stat now, ours;
	struct {
		struct kmsg_static s;
		unsigned char dyn[HDR_SIZE - HDR_STATIC];
	} h;

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
	if (pread(log->fd, &h, HDR_SIZE, 0) != HDR_SIZE)
		return KMSG_FILE_SAME;  /* cannot tell */
	{
		struct kmsg_static s;
		uint64_t size;
		int ok = kmsg__file_read_static(log->fd, &s, &size) == 0 &&
			 s.file_size == size;

		/* The same inode rewritten with another log (cp over it). */
		if (ok && memcmp(h.s.ring_id, log->ring_id, sizeof(log->ring_id)) != 0)
			return KMSG_FILE_REWRITTEN;
		/* A header this reader had to rebuild for itself is whole in
		 * the file again: a writer repaired it. */
		if (log->private_hdr && ok && h.s.version == log->version &&
		    kmsg__ring_sane(log, h.dyn))
			return KMSG_FILE_REPAIRED;
	}
	return KMSG_FILE_SAME;
}

uint64_t kmsg_boot_id(void)
{
	return kmsg__read_boot_id();
}

uint32_t kmsg_caller_id(uint32_t id)
{
	return kmsg__caller_id(id);
}

void kmsg_log_close(struct kmsg_log *log)
{
	if (!log)
		return;
	kmsg__handles_remove(log);
	kmsg__file_unmap(log);
	close(log->fd);  /* drops the writer and follower locks */
	free(atomic_load(&log->bulk_spare));
	free(log);
}

static int log_stat(struct kmsg_stat *st, struct kmsg_log *log)
{
	struct window w;
	uint64_t pos;
	int n;

	memset(st, 0, sizeof(*st));
	st->file_size = log->map_size;
	st->data_size = log->data_size;
	st->max_text = log->max_text;
	st->format_version = log->version;
	memcpy(st->ring_id, log->st->ring_id, sizeof(st->ring_id));
	st->created_ns = log->st->created_ns;
	if (log->version == KMSG_FORMAT_V1) {
		const struct kmsg_dyn_v1 *d = log->dyn1;
		st->clear_seq = atomic_load(&d->clear_seq);
		st->evicted = atomic_load(&d->evicted);
		st->damaged = atomic_load(&d->damaged);
		/* its dead writers' appends, taken over: finished or not,
		 * the same event as a hole (a dump keeps holes there) */
		st->holes = atomic_load(&d->takeovers);
	} else {
		const struct kmsg_aux *a = log->aux;
		st->clear_seq = atomic_load(&a->clear_seq);
		st->evicted = atomic_load(&a->evicted);
		st->damaged = atomic_load(&a->damaged);
		st->holes = atomic_load(&a->holes);
	}
	kmsg__ring_numbering(log, st);
	/* The oldest record's number is in the record, not the header, and
	 * is found after the end was loaded: writers that evicted past that
	 * end meanwhile would make it the greater, and next - first wrap.
	 * The end is loaded again then (a few times; then the two agree). */
	for (int tries = 0;; tries++) {
		n = kmsg__ring_window(log, &w);
		if (n < 0)
			return n;
		st->next_seq = w.end_seq;
		st->used = w.end - w.head;
		n = kmsg__ring_oldest(log, &pos, &st->first_seq);
		if (n == 1)
			st->first_seq = st->next_seq;  /* writers overtook us */
		if (n < 0 || st->first_seq <= st->next_seq)
			break;
		if (tries == 8) {
			st->first_seq = st->next_seq;
			break;
		}
	}
	return n < 0 ? n : 0;
}

int kmsg_log_stat_sized(struct kmsg_stat *st, size_t size, struct kmsg_log *log)
{
	struct kmsg_stat mine;
	int rc;

	if (!st || !log || size < KMSG__STAT_SIZE_1)
		return KMSG_EINVAL;
	rc = log_stat(&mine, log);
	kmsg__put_sized(st, size, &mine, sizeof(mine));
	return rc;
}
