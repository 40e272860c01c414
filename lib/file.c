/*
 * file.c - the log as a file: validating and mapping it, making a new
 * one, restoring one cut short, a reader's private header, and upgrading
 * a first-format log in place.  What the bytes mean is layout.h; how
 * writers share them is ring.c.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

_Static_assert(HDR_SIZE + BACKUP_SIZE + AUX_SIZE == KMSG_FILE_OVERHEAD, "kmsg.h's figure");
/* Offsets past 2 GiB pass through off_t (the build defines
 * _FILE_OFFSET_BITS=64 for 32-bit systems). */
_Static_assert(sizeof(off_t) == 8, "a 64-bit off_t");

uint64_t kmsg__map_limit = SIZE_MAX;

/* The bytes of a file that are not ring, by format. */
static uint64_t fixed_bytes(uint32_t version)
{
	return HDR_SIZE + BACKUP_SIZE + (version == KMSG_FORMAT_V1 ? 0 : AUX_SIZE);
}

/*
 * Checks a static header (primary or backup copy): its sizes must agree
 * with each other and the file must be as long as it says, or shorter when
 * short_ok (a file cut short; see kmsg__file_map).  Returns 0, KMSG_ENOTLOG,
 * KMSG_EVERSION or KMSG_ECORRUPT.
 */
static int check_static(const struct kmsg_static *h, uint64_t st_size, int short_ok)
{
	uint64_t min;

	if (memcmp(h->magic, KMSG_LOG_MAGIC, 8) != 0)
		return KMSG_ENOTLOG;
	if (kmsg__hdr_crc(h) != h->header_crc)
		return KMSG_ECORRUPT;
	if ((h->version != KMSG_FORMAT_V1 && h->version != KMSG_FORMAT_VERSION) ||
	    (h->incompat & ~INCOMPAT_KNOWN))
		return KMSG_EVERSION;
	if (h->header_size != HDR_SIZE || h->data_off != HDR_SIZE)
		return KMSG_ECORRUPT;
	min = h->version == KMSG_FORMAT_V1 ? 4096 : KMSG_MIN_SIZE;
	if ((short_ok ? h->file_size < st_size : h->file_size != st_size) ||
	    h->file_size < min || h->file_size > KMSG_MAX_SIZE || h->file_size % 4096)
		return KMSG_ECORRUPT;
	if (h->data_size != h->file_size - fixed_bytes(h->version))
		return KMSG_ECORRUPT;
	if (h->max_text < 1 || h->max_text > KMSG_MAX_TEXT_LIMIT ||
	    h->max_fields != KMSG_MAX_FIELDS_BYTES || h->first_seq == 0 ||
	    h->first_seq > (UINT64_C(1) << 63))
		return KMSG_ECORRUPT;
	if (rec_size(h->max_text, 0) > h->data_size / 2)
		return KMSG_ECORRUPT;
	return 0;
}

/*
 * Maps size bytes of the log.  A file shorter than that (have < size)
 * is only ever mapped for reading: its missing end reads as zeros, as
 * pages a power cut never wrote, instead of raising SIGBUS.
 */
static int map_log(struct kmsg_log *log, uint64_t size, uint64_t have)
{
	int prot = PROT_READ | (log->flags & KMSG_OPEN_WRITE ? PROT_WRITE : 0);
	int r = kmsg__file_mappable(size);
	size_t n = (size_t)size;
	void *m;

	if (r)
		return r;
	if (have >= size) {
		m = mmap(NULL, n, prot, MAP_SHARED, log->fd, 0);
	} else {
		uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t part = (have + page - 1) / page * page;
		m = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			 -1, 0);
		if (m != MAP_FAILED &&
		    mmap(m, (size_t)(part < size ? part : size), PROT_READ,
			 MAP_SHARED | MAP_FIXED, log->fd, 0) == MAP_FAILED) {
			int e = errno;
			munmap(m, n);
			errno = e;
			m = MAP_FAILED;
		}
	}
	/* No room in the address space for it: on a 32-bit build, a log
	 * of more than half of it, where the address space runs out. */
	if (m == MAP_FAILED)
		return errno == ENOMEM && size > kmsg__map_limit / 2 ? KMSG_ETOOBIG : -errno;
	log->map = m;
	log->map_size = size;
	log->opened_size = have;
	return 0;
}

/*
 * Where the file holds bytes at or after data offset phys: the first such
 * offset (data_size if none), and in *until where those bytes end.  All
 * is data where the file system cannot tell.  Holes a writer fills
 * through the mapping hold pages in the cache, which SEEK_DATA reports.
 */
static uint64_t data_at(const struct kmsg_log *log, uint64_t phys, uint64_t *until)
{
	const uint64_t D = log->data_size;
	off_t d, h;

	*until = D;
	d = lseek(log->fd, (off_t)(HDR_SIZE + phys), SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? D : phys;  /* ENXIO: none after it */
	if ((uint64_t)d >= HDR_SIZE + D)
		return D;
	h = lseek(log->fd, d, SEEK_HOLE);
	if (h > d && (uint64_t)h < HDR_SIZE + D)
		*until = (uint64_t)h - HDR_SIZE;
	return ((uint64_t)d - HDR_SIZE) & ~(uint64_t)(REC_ALIGN - 1);
}

uint64_t kmsg__scan_look(const struct kmsg_log *log, struct data_scan *s, uint64_t q)
{
	const uint64_t D = log->data_size, phys = q % D, lap = q - phys;
	uint64_t until, next = log->fd < 0 ? phys : data_at(log, phys, &until);

	if (log->fd < 0)
		until = D;
	s->look_at = lap + until;
	return lap + next;
}

/* The handle's view of a mapped log of header s. */
static void set_layout(struct kmsg_log *log, const struct kmsg_static *s)
{
	log->version = s->version;
	log->st = (struct kmsg_static *)log->map;
	log->dyn = (struct kmsg_dyn *)(log->map + HDR_STATIC);
	log->dyn1 = (struct kmsg_dyn_v1 *)(log->map + HDR_STATIC);
	log->data = log->map + HDR_SIZE;
	log->data_size = s->data_size;
	log->aux = s->version == KMSG_FORMAT_V1 ? NULL
		 : (struct kmsg_aux *)(log->data + s->data_size);
	log->first_seq = s->first_seq;
	log->max_text = s->max_text;
	/* The largest record a writer may make: half the ring, and no more
	 * than the longest text with the most fields. */
	log->max_rec = rec_size(log->max_text, KMSG_MAX_FIELDS_BYTES);
	if (log->max_rec > log->data_size / 2)
		log->max_rec = log->data_size / 2 & ~(uint64_t)(REC_ALIGN - 1);
	/* Eviction runs ahead a little (ring.c): a 64th of the ring, at
	 * most 4 KiB, gives head one move per batch of appends. */
	log->batch = (log->data_size / 64 < 4096 ? log->data_size / 64 : 4096) &
		     ~(uint64_t)(REC_ALIGN - 1);
	memcpy(log->ring_id, s->ring_id, sizeof(log->ring_id));
}

/*
 * Restores a file cut short to the size its header gives: the missing end
 * comes back as zeros (holes), the backup header is written again, and the
 * caller rebuilds the dynamic words from the records that survived.  A
 * crafted header can make this grow a file, but to no size its author
 * could not have made with truncate(1).
 */
static int restore_size(int fd, const struct kmsg_static *h)
{
	if (ftruncate(fd, (off_t)h->file_size) < 0)
		return -errno;
	if (pwrite(fd, h, BACKUP_SIZE, (off_t)(h->file_size - BACKUP_SIZE)) != BACKUP_SIZE)
		return -EIO;
	if (fdatasync(fd) < 0)
		return -errno;
	return 0;
}

/* ---- UPGRADE ----------------------------------------------------------- */

/*
 * UPGRADE
 *
 * A first-format log is upgraded by the first writer of this format that
 * opens it.  Its records are second-format records in the committed state
 * (layout.h), so none is rewritten: the file grows by the auxiliary area,
 * and the dynamic words are written anew from the first format's head,
 * tail and next_seq.  Writers of the first format take a one-word lock to
 * append; the upgrade takes it too, as one of them would (a writer id
 * and its OFD lock), so that none appends meanwhile, and does not happen
 * while any of them has the log open (F_OFD_GETLK over their lock bytes
 * finds their registrations): that is KMSG_EOLDWRITER, and the log stays
 * as it was, readable and writable by them.  Afterwards the words they
 * would take (line A of struct kmsg_dyn) say that numbers are exhausted,
 * so a first-format process that kept the log open fails its next append
 * with KMSG_ESEQ and writes nothing.  One that opens the log in the few
 * microseconds between reading its header and taking its lock can still
 * write: if the upgrade sees one registered at its end, it holds the
 * lock for the full second such a writer waits, which makes its open
 * fail.
 *
 * Steps, each safe to be cut short by a power cut: (1) the auxiliary
 * area and the new backup header are written past the old end, which
 * grows the file; a file one area longer than a first-format header
 * says is an upgrade cut short, and is upgraded again from the start;
 * (2) the new dynamic words; (3) the new primary header.  Opened after
 * (2) but before (3) the dynamic words make no sense to either format,
 * and a writer rebuilds them from the records.
 */

/* 1 if a first-format writer other than ours holds a lock. */
static int v1_writers(int fd)
{
	struct flock fl;

	if (kmsg__ofd_lock(fd, F_OFD_GETLK, F_RDLCK, LOCK_WRITER_BASE, LOCK_WRITER_MASK + 1,
			   &fl) < 0)
		return 1;
	return fl.l_type != F_UNLCK;
}

/* Takes the first format's append lock as one of its writers would. */
static int v1_lock(int fd, struct kmsg_dyn_v1 *d, uint64_t *id_out)
{
	uint64_t id = 0;
	int64_t start = kmsg__clock_ns(CLOCK_MONOTONIC);

	for (int tries = 0;; tries++) {
		if (tries == 64)
			return KMSG_EBUSY;
		id = atomic_fetch_add(&d->writer_ids, 1) + 1;
		if ((id & LOCK_WRITER_MASK) == 0 || id == atomic_load(&d->lock))
			continue;
		if (kmsg__ofd_lock(fd, F_OFD_SETLK, F_WRLCK,
				   LOCK_WRITER_BASE + (id & LOCK_WRITER_MASK), 1, NULL) == 0)
			break;
	}
	*id_out = id;
	for (;;) {
		uint64_t cur = atomic_load(&d->lock);
		struct flock fl;

		if (cur == 0 ||
		    (kmsg__ofd_lock(fd, F_OFD_GETLK, F_WRLCK,
				    LOCK_WRITER_BASE + (cur & LOCK_WRITER_MASK), 1, &fl) == 0 &&
		     fl.l_type != F_WRLCK)) {
			if (atomic_compare_exchange_strong(&d->lock, &cur, id))
				return 0;
			continue;
		}
		if (kmsg__clock_ns(CLOCK_MONOTONIC) - start > 100 * 1000 * 1000)
			return KMSG_EOLDWRITER;  /* a live first-format writer holds it */
		kmsg__nap(100 * 1000);
	}
}

static void v1_unlock(int fd, struct kmsg_dyn_v1 *d, uint64_t id)
{
	uint64_t cur = id;

	atomic_compare_exchange_strong(&d->lock, &cur, 0);
	kmsg__ofd_lock(fd, F_OFD_SETLK, F_UNLCK, LOCK_WRITER_BASE + (id & LOCK_WRITER_MASK), 1,
		       NULL);
}

/*
 * The first format's end as its readers take it: a record committed at
 * tail by a writer that died before publishing it is published (its
 * number is next_seq, or next_seq - 1 when only the tail's store was
 * left).  data is the ring of D bytes.
 */
static void v1_end(const struct kmsg_log *v1, uint64_t head, uint64_t *tail, uint64_t *next)
{
	for (;;) {
		uint64_t pos = ring_norm(v1, *tail), len;
		struct rec_hdr r;

		if (pos + REC_HDR - head > v1->data_size)
			break;
		len = kmsg__rec_check(v1, pos, &r);
		if (!len)
			break;
		if (r.flags & REC_PAD) {
			if (r.seq != *next && r.seq + 1 != *next)
				break;
		} else if (r.seq == *next) {
			(*next)++;
		} else if (r.seq + 1 != *next) {
			break;
		}
		if (pos + len - head > v1->data_size)
			break;
		*tail = pos + len;
	}
}

static int upgrade_v1(int fd, const struct kmsg_static *s1, uint64_t have)
{
	struct kmsg_log v1 = { .fd = fd, .flags = KMSG_OPEN_WRITE };
	struct kmsg_static s2 = *s1;
	struct kmsg_aux *aux = NULL;
	struct kmsg_dyn_v1 *d1;
	struct kmsg_dyn dyn2;
	uint64_t id = 0, head, tail, next, clear, new_size = s1->file_size + AUX_SIZE, evicted = 0;
	int r, sane;

	r = map_log(&v1, s1->file_size, s1->file_size);
	if (r < 0)
		return r;
	set_layout(&v1, s1);
	d1 = v1.dyn1;
	/* Asked first, so that a log a first-format writer has open is
	 * left exactly as it is; and again under the lock, for one that
	 * opened it meanwhile. */
	if (v1_writers(fd)) {
		r = KMSG_EOLDWRITER;
		goto out;
	}
	r = v1_lock(fd, d1, &id);
	if (r < 0)
		goto out;
	if (v1_writers(fd)) {
		r = KMSG_EOLDWRITER;
		goto out;
	}
	head = atomic_load(&d1->head);
	tail = atomic_load(&d1->tail);
	next = atomic_load(&d1->next_seq);
	clear = atomic_load(&d1->clear_seq);
	sane = head <= tail && tail - head <= v1.data_size && head % REC_ALIGN == 0 &&
	       tail % REC_ALIGN == 0 && tail < POS_LIMIT && next >= s1->first_seq &&
	       next - s1->first_seq <= tail / REC_HDR + v1.data_size / REC_HDR + 1;
	if (sane)
		v1_end(&v1, head, &tail, &next);
	/* The second format keeps a header's room free before head (a
	 * block never ends within 64 bytes of a later lap's head): the
	 * first format's fullest rings lose their oldest record or two,
	 * evicted as an append would have. */
	while (sane && tail - head > v1.data_size - REC_HDR) {
		struct rec_hdr rh;
		uint64_t at = ring_norm(&v1, head), len = kmsg__rec_check(&v1, at, &rh);

		if (!len || at + len > tail) {
			sane = 0;  /* left for the rebuild */
			break;
		}
		head = at + len;
		evicted += !(rh.flags & REC_PAD);
	}

	/* (1) the auxiliary area and the backup, past the old end */
	aux = calloc(1, sizeof(*aux));
	if (!aux) {
		r = -ENOMEM;
		goto out;
	}
	atomic_store(&aux->boot_id, atomic_load(&d1->boot_id));
	atomic_store(&aux->pass_to, sane ? head : 0);
	atomic_store(&aux->clear_seq, sane && clear <= next ? clear : s1->first_seq);
	atomic_store(&aux->evicted, atomic_load(&d1->evicted) + evicted);
	atomic_store(&aux->damaged, atomic_load(&d1->damaged));
	atomic_store(&aux->holes, atomic_load(&d1->takeovers));
	atomic_store(&aux->ident[0].boot, atomic_load(&d1->boot_id));
	atomic_store(&aux->ident[0].id, atomic_load(&d1->seq_id));
	atomic_store(&aux->ident[0].since, atomic_load(&d1->seq_id_since));
	atomic_store(&aux->ident[0].prev_id, atomic_load(&d1->prev_seq_id));
	atomic_store(&aux->ident[0].prev_since, atomic_load(&d1->prev_seq_id_since));
	atomic_store(&aux->ident[0].prev2_id, atomic_load(&d1->prev2_seq_id));
	s2.version = KMSG_FORMAT_VERSION;
	s2.incompat |= INCOMPAT_KNOWN;
	s2.file_size = new_size;
	s2.header_crc = kmsg__hdr_crc(&s2);
	if (pwrite(fd, aux, AUX_SIZE, (off_t)(HDR_SIZE + s1->data_size)) != AUX_SIZE ||
	    pwrite(fd, &s2, BACKUP_SIZE, (off_t)(new_size - BACKUP_SIZE)) != BACKUP_SIZE ||
	    fsync(fd) < 0) {
		r = errno ? -errno : -EIO;
		goto out;
	}

	/* (2) the dynamic words: line A poisoned for the first format's
	 * writers, the reservation and head from its tail and head (an
	 * insane state is left for the rebuild) */
	memset(&dyn2, 0, sizeof(dyn2));
	atomic_store(&dyn2.v1_lock, id);
	atomic_store(&dyn2.v1_tail, UINT64_MAX);
	atomic_store(&dyn2.v1_next, UINT64_MAX);
	if (sane) {
		atomic_store(&dyn2.resv_pos, tail);
		atomic_store(&dyn2.resv_seq, (next - s1->first_seq) << RESV_OWNER_BITS | OWNER_NONE);
		atomic_store(&dyn2.head, head);
		atomic_store(&dyn2.head_seq, next);
		{
			/* the oldest record's number, if it is there */
			struct rec_hdr rh;
			if (head < tail && kmsg__rec_check(&v1, ring_norm(&v1, head), &rh))
				atomic_store(&dyn2.head_seq, rh.seq);
		}
	} else {
		atomic_store(&dyn2.resv_pos, 1);  /* off its 8-byte grid: rebuilt */
	}
	/* All but the lock word (128), which stays ours until v1_unlock()
	 * at the end: until then a first-format writer waits. */
	memcpy(v1.map + HDR_STATIC + 8, (unsigned char *)&dyn2 + 8, sizeof(dyn2) - 8);
	if (msync(v1.map, HDR_SIZE, MS_SYNC) < 0) {
		r = -errno;
		goto out;
	}

	/* (3) the primary header */
	if (pwrite(fd, &s2, HDR_STATIC, 0) != HDR_STATIC || fdatasync(fd) < 0) {
		r = errno ? -errno : -EIO;
		goto out;
	}
	/* A first-format writer that opened meanwhile waits for the lock:
	 * hold it for as long as it would wait, so that its open fails. */
	if (v1_writers(fd))
		kmsg__nap(1100 * 1000 * 1000 - 1);
	r = 0;
out:
	if (id)
		v1_unlock(fd, d1, id);
	free(aux);
	munmap(v1.map, v1.map_size);
	(void)have;
	return r;
}

/* ---- opening ---------------------------------------------------------- */

static int private_header(struct kmsg_log *log, const struct kmsg_static *s);

int kmsg__file_read_static(int fd, struct kmsg_static *h, uint64_t *size)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return KMSG_ENOTLOG;
	*size = (uint64_t)st.st_size;
	if (*size == 0)
		return KMSG_EEMPTY;
	if (*size < HDR_STATIC) {
		/* A log cut inside its header: at least half its magic, and
		 * nothing that is not the magic, is no text of anyone's. */
		char m[8];
		ssize_t n = pread(fd, m, 8, 0);

		return n >= 4 && !memcmp(m, KMSG_LOG_MAGIC, (size_t)n) ? KMSG_ESHORTHDR
								       : KMSG_ENOTLOG;
	}
	if (pread(fd, h, HDR_STATIC, 0) != HDR_STATIC)
		return -EIO;
	return check_static(h, *size, 1);
}

/*
 * Validates the file on log->fd and maps it.  The primary header first; a
 * file shorter than its header says lost its end (a copy that stopped, a
 * file system that kept the size but not the data): its records up to
 * the cut are still good, and a writer restores the size.  Longer is
 * never innocent, but for an upgrade cut short.  A primary header that
 * fails is taken from the backup at the end: the first page is the one a
 * power cut is most likely to tear.
 */
int kmsg__file_map(struct kmsg_log *log, int *repair)
{
	struct kmsg_static primary, backup;
	const struct kmsg_static *s = &primary;
	uint64_t have;
	int r, r2, cut_short = 0, write = log->flags & KMSG_OPEN_WRITE;

	*repair = 0;
	r = kmsg__file_read_static(log->fd, &primary, &have);
	if (r == KMSG_ECORRUPT && have >= HDR_STATIC && primary.version == KMSG_FORMAT_V1 &&
	    check_static(&primary, have - AUX_SIZE, 0) == 0) {
		/* an upgrade cut short: the first format until it is done */
		if (write) {
			r = upgrade_v1(log->fd, &primary, have);
			if (r < 0)
				return r;
			return kmsg__file_map(log, repair);
		}
		have -= AUX_SIZE;
		r = 0;
	}
	if (r == 0 && primary.file_size > have) {
		cut_short = 1;
	} else if (r && r != -EIO && have >= HDR_SIZE) {
		if (have < 4096 ||
		    pread(log->fd, &backup, BACKUP_SIZE, (off_t)(have - BACKUP_SIZE)) != BACKUP_SIZE)
			return r;
		r2 = check_static(&backup, have, 0);
		if (r2)
			return r == KMSG_ENOTLOG ? r2 : r;
		s = &backup;
		*repair = 1;
	} else if (r) {
		return r;
	}
	if (write && s->version == KMSG_FORMAT_V1) {
		if (cut_short || *repair) {
			/* Upgraded from a good header only: restore first. */
			if (cut_short && (r = restore_size(log->fd, s)) < 0)
				return r;
			if (*repair && pwrite(log->fd, s, HDR_STATIC, 0) != HDR_STATIC)
				return -EIO;
		}
		r = upgrade_v1(log->fd, s, s->file_size);
		if (r < 0)
			return r;
		return kmsg__file_map(log, repair);
	}
	if (cut_short && write) {
		r = restore_size(log->fd, s);
		if (r < 0)
			return r;
		have = s->file_size;
		*repair = 1;
	}
	r = map_log(log, s->file_size, have);
	if (r < 0)
		return r;
	set_layout(log, s);
	if (*repair && write) {
		memcpy(log->map, s, HDR_STATIC);  /* the backup made primary again */
	} else if (*repair) {
		/* A reader reads through a header page of its own, given the
		 * backup's static part; the caller rebuilds the rest. */
		r = private_header(log, s);
		if (r < 0) {
			kmsg__file_unmap(log);
			return r;
		}
	}
	if (cut_short && !write)
		*repair = 0;  /* a reader reads what is there */
	return 0;
}

void kmsg__file_unmap(struct kmsg_log *log)
{
	if (log->map)
		munmap(log->map, log->map_size);
	log->map = NULL;
}

/*
 * For a reader of a log whose header is damaged (the first page torn or
 * zeroed by a power cut, a hostile edit): the header page becomes a
 * private copy, with the static header s, which the caller then fills
 * with rebuilt dynamic words.  The file is not touched.
 */
static int private_header(struct kmsg_log *log, const struct kmsg_static *s)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct kmsg_static keep = *s;

	if (mmap(log->map, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED,
		 log->fd, 0) == MAP_FAILED)
		return -errno;
	memcpy(log->map, &keep, HDR_STATIC);
	log->private_hdr = 1;
	return 0;
}

int kmsg__file_private_header(struct kmsg_log *log)
{
	struct kmsg_static s;

	if (log->private_hdr)
		return 0;
	memcpy(&s, log->map, HDR_STATIC);
	return private_header(log, &s);
}

void kmsg__file_seal(struct kmsg_log *log)
{
	mprotect(log->map, (size_t)sysconf(_SC_PAGESIZE), PROT_READ);
}

/* ---- CREATE ------------------------------------------------------------ */

int kmsg__file_check_opts(const struct kmsg_create_opts *o)
{
	if (o->version != KMSG_CREATE_OPTS_VERSION || o->first_seq == 0 ||
	    o->first_seq > (UINT64_C(1) << 63))
		return KMSG_EINVAL;
	if (o->size < KMSG_MIN_SIZE || o->size > KMSG_MAX_SIZE || o->size % 4096)
		return KMSG_ESIZE;
	if (kmsg__file_mappable(o->size))
		return KMSG_ETOOBIG;  /* before a file no one here could open is made */
	if (o->max_text < 1 || o->max_text > KMSG_MAX_TEXT_LIMIT)
		return KMSG_ETOOLONG;
	if (rec_size(o->max_text, 0) > (o->size - fixed_bytes(KMSG_FORMAT_VERSION)) / 2)
		return KMSG_ESIZE;
	return 0;
}

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
 * /proc is missing), a named file "path.new-RANDOM" instead, write-locked
 * at LOCK_CREATING for as long as its creator lives: a killed creator
 * leaves it behind, and the next create removes it (remove_stale_new()).
 */
static int open_new(int *fd, char *tmp, size_t tmpsz, const char *path, mode_t mode)
{
	char dir[4096];

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
	if ((size_t)snprintf(tmp, tmpsz, "%s.new-%016llx", path,
			     (unsigned long long)kmsg__random64()) >= tmpsz)
		return -ENAMETOOLONG;
	*fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode & 07777);
	if (*fd < 0)
		return -errno;
	*fd = kmsg__fd_off_stdio(*fd);
	if (*fd < 0) {
		unlink(tmp);
		return *fd;
	}
	kmsg__ofd_lock(*fd, F_OFD_SETLK, F_WRLCK, LOCK_CREATING, 1, NULL);
	return 0;
}

/* A temporary file this old and unlocked has no live creator: one locks
 * it at once after making it. */
#define STALE_NEW_NS (INT64_C(2) * 1000 * 1000 * 1000)

/*
 * Removes the named temporary files "path.new-RANDOM" that creators
 * killed half-way left (open_new()): each one of ours, a regular file,
 * older than STALE_NEW_NS and with no creator's lock on it.  Best effort:
 * what cannot be looked at is left alone.
 */
static void remove_stale_new(const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	size_t blen = strlen(base);
	char dir[4096];
	struct dirent *de;
	DIR *d;

	if (dir_of(dir, sizeof(dir), path) < 0 || !(d = opendir(dir)))
		return;
	while ((de = readdir(d))) {
		const char *n = de->d_name;
		struct stat st, again;
		int fd, hex = 0;

		if (strncmp(n, base, blen) || strncmp(n + blen, ".new-", 5))
			continue;
		while (hex < 16 && isxdigit((unsigned char)n[blen + 5 + hex]))
			hex++;
		if (hex != 16 || n[blen + 5 + 16])
			continue;
		fd = openat(dirfd(d), n, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
		    kmsg__clock_ns(CLOCK_REALTIME) -
		    ((int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec) > STALE_NEW_NS &&
		    kmsg__ofd_lock(fd, F_OFD_SETLK, F_WRLCK, LOCK_CREATING, 1, NULL) == 0 &&
		    fstatat(dirfd(d), n, &again, AT_SYMLINK_NOFOLLOW) == 0 &&
		    again.st_dev == st.st_dev && again.st_ino == st.st_ino)
			unlinkat(dirfd(d), n, 0);
		close(fd);
	}
	closedir(d);
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

/* The bytes a new log starts with: its header page and auxiliary area. */
static void init_new(struct kmsg_static *s, struct kmsg_dyn *d, struct kmsg_aux *a,
		     const struct kmsg_create_opts *o)
{
	uint64_t boot = kmsg__read_boot_id(), id;

	memset(s, 0, sizeof(*s));
	memcpy(s->magic, KMSG_LOG_MAGIC, 8);
	s->version = KMSG_FORMAT_VERSION;
	s->header_size = HDR_SIZE;
	s->file_size = o->size;
	s->data_off = HDR_SIZE;
	s->data_size = o->size - fixed_bytes(KMSG_FORMAT_VERSION);
	s->max_text = o->max_text;
	s->max_fields = KMSG_MAX_FIELDS_BYTES;
	for (int i = 0; i < 2; i++) {
		uint64_t r = kmsg__random64();
		memcpy(s->ring_id + 8 * i, &r, 8);
	}
	s->created_ns = kmsg__clock_ns(CLOCK_REALTIME);
	s->first_seq = o->first_seq;
	s->incompat = INCOMPAT_KNOWN;
	s->header_crc = kmsg__hdr_crc(s);

	memset(d, 0, sizeof(*d));
	atomic_store(&d->v1_tail, UINT64_MAX);
	atomic_store(&d->v1_next, UINT64_MAX);
	atomic_store(&d->head_seq, o->first_seq);

	/* Made in this boot and empty: nothing for the first writer to
	 * take in, and an identity of this boot already. */
	memset(a, 0, sizeof(*a));
	atomic_store(&a->boot_id, boot);
	atomic_store(&a->clear_seq, o->first_seq);
	memcpy(&id, s->ring_id, sizeof(id));
	atomic_store(&a->ident[0].boot, boot);
	atomic_store(&a->ident[0].id, id ? id : 1);
	atomic_store(&a->ident[0].since, o->first_seq);
}

/*
 * CREATE: the whole file is built under no name, preallocated (a full
 * disk fails here, never later) and synced; the caller links it into
 * place.  *fd is open on it, tmp its name for link().
 */
static int build_new(int *fd, char *tmp, size_t tmpsz, const char *path,
		     const struct kmsg_create_opts *o, unsigned flags)
{
	struct {
		struct kmsg_static s;
		struct kmsg_dyn d;
	} hdr;
	struct kmsg_aux *aux = calloc(1, sizeof(*aux));
	int r;

	if (!aux)
		return -ENOMEM;
	r = open_new(fd, tmp, tmpsz, path, o->mode);
	if (r < 0)
		goto out;
	/* refused before it takes room, as an existing log would be */
	if (!(flags & KMSG_OPEN_ONE_HOST) && kmsg__shared_fs(*fd)) {
		r = KMSG_ESHAREDFS;
		goto fail;
	}
	r = posix_fallocate(*fd, 0, (off_t)o->size);
	if (r) {
		r = -r;
		goto fail;
	}
	init_new(&hdr.s, &hdr.d, aux, o);
	if (pwrite(*fd, &hdr, HDR_SIZE, 0) != HDR_SIZE ||
	    pwrite(*fd, aux, AUX_SIZE, (off_t)(HDR_SIZE + hdr.s.data_size)) != AUX_SIZE ||
	    pwrite(*fd, &hdr.s, BACKUP_SIZE, (off_t)(o->size - BACKUP_SIZE)) != BACKUP_SIZE ||
	    fsync(*fd) < 0) {
		r = errno ? -errno : -EIO;
		goto fail;
	}
	r = 0;
	goto out;
fail:
	close(*fd);
	unlink_new(tmp);
out:
	free(aux);
	return r;
}

int kmsg__file_create(int *fd, const char *path, const struct kmsg_create_opts *o,
		      unsigned flags)
{
	char tmp[4096];
	int r;

	remove_stale_new(path);
	r = build_new(fd, tmp, sizeof(tmp), path, o, flags);
	if (r < 0)
		return r;
	/* link() fails if another creator won the race: use theirs.  For
	 * /proc/self/fd/N, linkat() must follow the link. */
	if (linkat(AT_FDCWD, tmp, AT_FDCWD, path, AT_SYMLINK_FOLLOW) == 0) {
		unlink_new(tmp);
		sync_dir_of(path);
		return 0;
	}
	r = -errno;
	close(*fd);
	unlink_new(tmp);
	return r;
}

/* ---- MAKING IN PLACE --------------------------------------------------- */

/*
 * MAKING IN PLACE
 *
 * An empty file at a log's path is a log not yet made: logrotate's
 * copytruncate empties the log in place, its create mode puts an empty
 * file with the operator's owner and mode where the log was, and an
 * operator may make one by hand to choose them.  The first writer makes
 * the log in that file, keeping its inode, owner and mode.
 *
 * Unlike a new file (CREATE), this one is seen by others while it is
 * made.  The maker holds an OFD write lock on byte LOCK_CREATING of the
 * file from before its first byte is written until the log is whole and
 * synced; it writes the auxiliary area and the backup header first and
 * the primary header last.  Anyone who opens the file meanwhile sees it
 * empty, or without a valid header, or with only the backup's: every
 * opener whose look at the header is not clean (kmsg__file_wait_maker())
 * first waits for a maker to finish, then looks again.  So no writer
 * repairs, and no reader rebuilds, a log that is still being made, and of
 * two writers racing on an empty file one makes it and the other finds
 * it made.  Only a writer's open can hold a write lock, so a process with
 * read permission cannot pass for a maker; one holding a read lock on
 * the byte can delay a maker, which then gives up with KMSG_EBUSY after
 * MAKER_WAIT_NS and writes nothing.
 */

/* How long a maker waits for the lock, and an opener for a maker: making
 * is a few writes and an fsync, but a loaded machine or a slow disk can
 * stretch the sync. */
#define MAKER_WAIT_NS (INT64_C(5) * 1000 * 1000 * 1000)

int kmsg__file_wait_maker(int fd)
{
	int64_t start = kmsg__clock_ns(CLOCK_MONOTONIC);

	for (;;) {
		struct flock fl;

		if (kmsg__ofd_lock(fd, F_OFD_GETLK, F_WRLCK, LOCK_CREATING, 1, &fl) < 0 ||
		    fl.l_type != F_WRLCK)
			return 0;
		if (kmsg__clock_ns(CLOCK_MONOTONIC) - start > MAKER_WAIT_NS)
			return KMSG_EBUSY;
		kmsg__nap(1000 * 1000);
	}
}

int kmsg__file_make_in(int fd, const struct kmsg_create_opts *o)
{
	int64_t start = kmsg__clock_ns(CLOCK_MONOTONIC);
	struct {
		struct kmsg_static s;
		struct kmsg_dyn d;
	} hdr;
	struct kmsg_aux *aux;
	struct stat st;
	int r;

	while (kmsg__ofd_lock(fd, F_OFD_SETLK, F_WRLCK, LOCK_CREATING, 1, NULL) < 0) {
		if (errno != EAGAIN && errno != EACCES)
			return -errno;
		if (kmsg__clock_ns(CLOCK_MONOTONIC) - start > MAKER_WAIT_NS)
			return KMSG_EBUSY;
		kmsg__nap(1000 * 1000);
	}
	aux = calloc(1, sizeof(*aux));
	if (!aux) {
		r = -ENOMEM;
		goto out;
	}
	/* Another maker may have made it while this one waited. */
	if (fstat(fd, &st) < 0) {
		r = -errno;
		goto out;
	}
	if (st.st_size != 0) {
		r = 0;
		goto out;
	}
	r = posix_fallocate(fd, 0, (off_t)o->size);
	if (r) {
		r = -r;
		/* nothing half made: the file is empty again */
		if (ftruncate(fd, 0) < 0)
			r = -errno;
		goto out;
	}
	init_new(&hdr.s, &hdr.d, aux, o);
	if (pwrite(fd, aux, AUX_SIZE, (off_t)(HDR_SIZE + hdr.s.data_size)) != AUX_SIZE ||
	    pwrite(fd, &hdr.s, BACKUP_SIZE, (off_t)(o->size - BACKUP_SIZE)) != BACKUP_SIZE ||
	    pwrite(fd, &hdr, HDR_SIZE, 0) != HDR_SIZE || fsync(fd) < 0) {
		r = errno ? -errno : -EIO;
		goto out;
	}
	r = 0;
out:
	kmsg__ofd_lock(fd, F_OFD_SETLK, F_UNLCK, LOCK_CREATING, 1, NULL);
	free(aux);
	return r;
}

/* ---- file systems ------------------------------------------------------- */

/* statfs(2)'s f_type of the file systems where a file can be open on other
 * machines too, each with a page cache of its own (linux/magic.h and the
 * file systems' sources; FUSE covers GlusterFS, sshfs, s3fs and the like,
 * and local ones such as bindfs, whose writes reach the file below by
 * another way than the mapping). */
static const struct {
	unsigned long type;
	const char *name;
} shared_fs[] = {
	{ 0x6969, "nfs" },
	{ 0x517b, "smb" },
	{ 0xfe534d42, "smb2" },
	{ 0xff534d42, "cifs" },
	{ 0x01021997, "9p" },
	{ 0x65735546, "fuse" },
	{ 0x00c36400, "ceph" },
	{ 0x5346414f, "afs" },
	{ 0x6b414653, "afs" },
	{ 0x01161970, "gfs2" },
	{ 0x7461636f, "ocfs2" },
	{ 0x0bd00bd0, "lustre" },
	{ 0x73757245, "coda" },
	{ 0x564c, "ncp" },
	{ 0x13661366, "orangefs" },
	{ 0x47504653, "gpfs" },
	{ 0x19830326, "fhgfs" },
};

const char *kmsg__shared_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return NULL;
	for (size_t i = 0; i < sizeof(shared_fs) / sizeof(shared_fs[0]); i++)
		if ((unsigned long)sf.f_type == shared_fs[i].type)
			return shared_fs[i].name;
	return NULL;
}

const char *kmsg_shared_fs_name(const char *path)
{
	const char *name;
	int fd;

	if (!path)
		return NULL;
	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		char dir[4096];

		/* a log not made yet: where it would be made */
		if (dir_of(dir, sizeof(dir), path) == 0)
			fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	name = kmsg__shared_fs(fd);
	close(fd);
	return name;
}
