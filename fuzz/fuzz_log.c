/*
 * fuzz_log.c - a log file image from the fuzzer, opened and read.
 *
 * The input is the file.  Its static header is made valid (magic, sizes,
 * checksum) unless the first byte says otherwise, so the fuzzer spends its
 * time on what a damaged or hostile ring holds rather than on header
 * checksums: of the second format, or with bit 2 of the first byte of the
 * first (which opening for writing then upgrades).  The image is opened
 * read-only and read to the end, seeked by sequence and time, then opened
 * for writing (which repairs) and appended to.  Nothing may crash, hang
 * or read out of bounds.
 *
 * More bits of the first byte do to the file what a writer with write
 * permission, a power cut or a bad disk can: 8 cuts it short (to a size
 * the second byte chooses), 16 punches holes in the pages the third
 * byte's bits choose (so that scans step over them), and 32 rewrites 16
 * bytes at an offset the last bytes choose while the first reader is in
 * the middle of the records (lengths changed under a reader).  With 64 the
 * readers copy the blocks ahead of them in small copies (ring.c, B1; the
 * fifth byte chooses the size) from wherever the end is, as a reader of a
 * large log does far from its end; else they read from the mapping alone,
 * as near the end.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

/* A change to the file while it is read: 16 bytes at off, after the
 * reader returned `after` records; done once. */
struct under {
	int fd;
	int after;
	off_t off;
	unsigned char bytes[16];
};

/* The size of the readers' bulk copies (B1), 0 for none. */
static uint32_t bulk_chunk;

static void read_all(struct kmsg_log *log, unsigned flags, int seeks, struct under *u)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	/* Each record takes a header's room, and positions only grow but
	 * where the head passes the reader (once here: the one change under
	 * it): a reader that returns more goes round, which is a hang. */
	uint64_t most = 2 * (log->data_size / REC_HDR + 1), n = 0;

	if (kmsg_reader_new(&r, log, flags))
		return;
	kmsg__reader_bulk(r, bulk_chunk, 0);
	for (int i = 0; kmsg_reader_next(r, &rec) == 1; i++) {
		if (++n > most)
			abort();
		struct kmsg_field f;
		size_t pos = 0;
		while (kmsg_field_next(&f, &rec, &pos) == 1)
			;
		if (u && u->after == i) {
			if (pwrite(u->fd, u->bytes, sizeof(u->bytes), u->off) < 0)
				abort();
			u->after = -1;
		}
	}
	kmsg_reader_flush(r, INT64_MAX);
	while (kmsg_reader_next(r, &rec) == 1)
		if (++n > most)
			abort();
	/* A seek over a damaged ring scans its garbage: once per image
	 * state is enough to cover it, and keeps executions fast. */
	if (!seeks)
		goto out;
	kmsg_reader_seek_seq(r, 3);
	kmsg_reader_next(r, &rec);
	kmsg_reader_seek_time(r, 1000);
	kmsg_reader_next(r, &rec);
	kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	kmsg_reader_next(r, &rec);
	{
		/* bisections whose key need not be monotone in a hostile
		 * file: they must still end */
		struct kmsg_boot boots[8];
		kmsg_log_boots(boots, 8, log);
	}
out:
	kmsg_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int v1 = size && (data[0] & 4);
	size_t least = v1 ? 4096 : KMSG_MIN_SIZE;
	size_t fsize = size < least ? least : (size + 4095) / 4096 * 4096;
	static char path[64];
	static int fd = -1;
	struct kmsg_log *log;
	unsigned char *img;
	struct under u = { .after = -1 };
	off_t cut = 0;

	if (fsize > (1 << 20))
		return 0;
	bulk_chunk = size > 4 && (data[0] & 64) ? 64 + 8 * (uint32_t)data[4] : 0;
	img = calloc(1, fsize);
	memcpy(img, data, size);
	if (size == 0 || !(data[0] & 1)) {
		struct kmsg_static *h = (void *)img;
		memcpy(h->magic, KMSG_LOG_MAGIC, 8);
		h->version = v1 ? KMSG_FORMAT_V1 : KMSG_FORMAT_VERSION;
		h->header_size = HDR_SIZE;
		h->incompat = 0;
		h->file_size = fsize;
		h->data_off = HDR_SIZE;
		h->data_size = fsize - HDR_SIZE - HDR_STATIC - (v1 ? 0 : AUX_SIZE);
		h->max_fields = KMSG_MAX_FIELDS_BYTES;
		h->max_text = 1 + h->max_text % 1024;
		if (h->first_seq == 0)
			h->first_seq = 1;
		h->header_crc = kmsg__crc32c_extend(0, h, HDR_CRC_OFF);
		if (data[0] & 2)
			memcpy(img + fsize - HDR_STATIC, img, HDR_STATIC);
	}
	/* One memfd for the whole run, resized and rewritten per input: a
	 * new memfd per input cost more than the rest of the run together. */
	if (fd < 0) {
		fd = memfd_create("fuzz", 0);
		if (fd < 0)
			abort();
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) || ftruncate(fd, (off_t)fsize) ||
	    pwrite(fd, img, fsize, 0) != (ssize_t)fsize)
		abort();
	if (size > 3 && (data[0] & 8))
		cut = (off_t)(fsize * data[1] / 256) & ~(off_t)4095;
	if (size > 3 && (data[0] & 16)) {
		for (unsigned page = 1; page * 4096 < fsize; page++)
			if (data[2] >> (page % 8) & 1)
				fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					  (off_t)page * 4096, 4096);
	}
	if (size > 24 && (data[0] & 32)) {
		u.fd = fd;
		u.after = data[3] % 64;
		u.off = (off_t)((data[size - 1] | data[size - 2] << 8 | (size_t)data[size - 3] << 16) %
				fsize);
		memcpy(u.bytes, data + size - 19, sizeof(u.bytes));
	}
	if (cut && ftruncate(fd, cut))
		abort();
	if (kmsg_log_open(&log, path, 0) == 0) {
		struct kmsg_stat st;
		kmsg_log_stat(&st, log);
		read_all(log, 0, 1, u.after >= 0 ? &u : NULL);
		read_all(log, KMSG_READER_JOIN, 0, NULL);
		kmsg_log_close(log);
	}
	if (kmsg_log_open(&log, path, KMSG_OPEN_WRITE) == 0) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = "fuzz";
		e.text_len = 4;
		for (int i = 0; i < 3; i++)
			kmsg_log_append(NULL, log, &e);
		read_all(log, 0, 1, NULL);
		kmsg_log_close(log);
	}
	free(img);
	return 0;
}
