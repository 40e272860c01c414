/*
 * test_damage.c - hostile files.  Images of a real log are damaged at
 * random (flipped bytes, garbage, a lying dynamic header), then opened and
 * read.  Power cuts (pages zeroed, torn, reverted, the file cut short) are
 * kmsg-torn's part (tests/torn.c, run by tests/torn.sh).  Nothing may
 * crash or hang; every record the reader returns must be exactly one that
 * was written; every record whose bytes were not touched must come back;
 * numbering goes on without reuse.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "internal.h"
#include "testutil.h"

TestSuite(damage, .fini = tu_cleanup);

#define LOG_SIZE (64 * 1024)
#define PAGE 4096

static size_t text_of(char *buf, uint64_t seq)
{
	int n = sprintf(buf, "record %lu ", (unsigned long)seq);
	size_t fill = seq * 13 % 150;
	for (size_t k = 0; k < fill; k++)
		buf[n + k] = (char)('A' + (seq + k) % 26);
	return (size_t)n + fill;
}

static void fill(struct kmsg_log *log, uint64_t upto)
{
	char text[256];
	struct kmsg_stat st;
	kmsg_log_stat(&st, log);
	for (uint64_t s = st.next_seq; s <= upto; s++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = text_of(text, s);
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
}

static unsigned char *slurp(const char *path)
{
	unsigned char *buf = malloc(LOG_SIZE);
	int fd = open(path, O_RDONLY);
	cr_assert_eq(pread(fd, buf, LOG_SIZE, 0), LOG_SIZE);
	close(fd);
	return buf;
}

static void spit(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

/* The records of an undamaged image: seq and the file range they occupy. */
struct where { uint64_t seq, off, len; };

static size_t records_of(const unsigned char *img, struct where *out, size_t cap)
{
	const struct kmsg_static *h = (const void *)img;
	const struct kmsg_dyn *d = (const void *)(img + HDR_STATIC);
	uint64_t D = h->data_size, pos = d->head, tail = d->resv_pos;
	size_t n = 0;
	while (pos < tail && n < cap) {
		uint64_t phys = pos % D;
		if (D - phys < REC_HDR) {
			pos += D - phys;
			continue;
		}
		const struct rec_hdr *r = (const void *)(img + HDR_SIZE + phys);
		if (!(r->flags & REC_PAD))
			out[n++] = (struct where){ r->seq, HDR_SIZE + phys, r->len };
		pos += r->len;
	}
	return n;
}

/*
 * Opens the damaged image (writer: rebuilds what it must), reads it all,
 * and checks the promises.  damaged_page[i] says page i was touched.
 */
static void check_image(const char *path, const struct where *w, size_t nw,
			const char *damaged_page, uint64_t newest_written)
{
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char want[256];
	char *seen = calloc(newest_written + 2, 1);
	uint64_t prev = 0, maxseq = 0;
	int rc = kmsg_log_open(&log, path, KMSG_OPEN_WRITE);

	cr_assert_eq(rc, 0, "open after damage: %s", kmsg_strerror(rc));
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		if (rec.flags & KMSG_GAP) {
			cr_assert_geq(rec.seq, prev, "numbers only grow");
			continue;
		}
		cr_assert_gt(rec.seq, prev, "numbers only grow");
		cr_assert_leq(rec.seq, newest_written);
		size_t n = text_of(want, rec.seq);
		cr_assert(rec.text_len == n && memcmp(rec.text, want, n) == 0,
			  "seq %lu comes back exactly as written", (unsigned long)rec.seq);
		seen[rec.seq] = 1;
		prev = maxseq = rec.seq;
	}
	cr_assert_eq(rc, 0);
	for (size_t i = 0; i < nw; i++) {
		int touched = 0;
		for (uint64_t p = w[i].off / PAGE; p <= (w[i].off + w[i].len - 1) / PAGE; p++)
			touched |= damaged_page[p];
		if (!touched)
			cr_assert(seen[w[i].seq], "undamaged record %lu was recovered",
				  (unsigned long)w[i].seq);
	}
	uint64_t seq;
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0,
		     "writes go on after damage");
	cr_assert_gt(seq, maxseq, "no number is reused");
	kmsg_reader_free(r);
	kmsg_log_close(log);
	free(seen);
}

static unsigned char *make_log(const char *name, uint64_t upto)
{
	struct kmsg_log *log = tu_create(name, LOG_SIZE, 0);
	fill(log, upto);
	kmsg_log_close(log);
	return slurp(tu_path(name));
}

Test(damage, flipped_bytes_are_detected_not_believed, .timeout = 300)
{
	unsigned char *img = make_log("flip.log", 1200);
	unsigned char *copy = malloc(LOG_SIZE);
	static struct where w[4096];
	size_t nw = records_of(img, w, 4096);
	char path[512];

	snprintf(path, sizeof(path), "%s", tu_path("f.log"));
	srand(7);
	for (int it = 0; it < 300; it++) {
		char touched[LOG_SIZE / PAGE] = { 0 };
		memcpy(copy, img, LOG_SIZE);
		for (int k = 0; k < 1 + rand() % 8; k++) {
			/* anywhere in the data area: the header has its own test */
			size_t off = HDR_SIZE + (size_t)rand() % (LOG_SIZE - HDR_SIZE - HDR_STATIC);
			copy[off] ^= (unsigned char)(1 + rand() % 255);
			touched[off / PAGE] = 1;
		}
		spit(path, copy, LOG_SIZE);
		check_image(path, w, nw, touched, 1200);
	}
	free(copy);
	free(img);
}

/* A header whose checksum is right but whose dynamic part is garbage, and
 * files of random bytes under a valid header: read without crashing. */
Test(damage, hostile_dynamic_header_and_garbage_data, .timeout = 300)
{
	unsigned char *img = make_log("h.log", 800);
	unsigned char *copy = malloc(LOG_SIZE);
	char path[512];

	snprintf(path, sizeof(path), "%s", tu_path("hh.log"));
	srand(3);
	for (int it = 0; it < 400; it++) {
		struct kmsg_static *h = (void *)copy;
		struct kmsg_dyn *d = (void *)(copy + HDR_STATIC);
		struct kmsg_aux *a;
		memcpy(copy, img, LOG_SIZE);
		a = (void *)(copy + HDR_SIZE + h->data_size);
		if (it % 2) {
			for (size_t k = HDR_SIZE; k < LOG_SIZE - HDR_STATIC; k++)
				copy[k] = (unsigned char)rand();
		}
		uint64_t vals[] = { 0, 8, h->data_size, h->data_size - 8, UINT64_MAX,
				    UINT64_MAX - 7, (uint64_t)rand() * 8, UINT64_C(1) << 62,
				    5 /* off the 8-byte grid */ };
		const int nv = sizeof(vals) / sizeof(vals[0]);
		atomic_store(&d->head, vals[rand() % nv]);
		atomic_store(&d->head_seq, vals[rand() % nv]);
		atomic_store(&d->resv_pos, vals[rand() % nv]);
		atomic_store(&d->resv_seq, vals[rand() % nv]);
		atomic_store(&a->pass_to, vals[rand() % nv]);
		if (it % 5 == 0) {
			/* stalled writers' quarantines that claim the ring */
			atomic_store(&a->qactive, NQUAR);
			for (int q = 0; q < NQUAR; q++) {
				atomic_store(&a->quar[q].state, QUAR_ACTIVE);
				atomic_store(&a->quar[q].pos, vals[rand() % nv]);
				atomic_store(&a->quar[q].len, (uint32_t)rand());
				atomic_store(&a->quar[q].boot, kmsg_boot_id());
				atomic_store(&a->quar[q].owner, OWNER_SHARED);
			}
		}
		spit(path, copy, LOG_SIZE);

		struct kmsg_log *log;
		struct kmsg_reader *r;
		struct kmsg_record rec;
		int rc;
		/* A reader first: it must not crash or loop forever. */
		if (kmsg_log_open(&log, path, 0) == 0) {
			cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
			for (int k = 0; k < 100000 && (rc = kmsg_reader_next(r, &rec)) == 1; k++)
				;
			kmsg_reader_seek_seq(r, 500);
			kmsg_reader_seek_time(r, 0);
			kmsg_reader_free(r);
			kmsg_log_close(log);
		}
		/* Then a writer, which must make it usable again. */
		rc = kmsg_log_open(&log, path, KMSG_OPEN_WRITE);
		cr_assert_eq(rc, 0, "%s", kmsg_strerror(rc));
		uint64_t s1, s2;
		rc = kmsg_log_append(&s1, log, &(struct kmsg_entry)KMSG_ENTRY_INIT);
		cr_assert_eq(rc, 0, "append after hostile header: %s", kmsg_strerror(rc));
		cr_assert_eq(kmsg_log_append(&s2, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
		cr_assert_eq(s2, s1 + 1);
		uint64_t first, last;
		tu_count(log, &first, &last);
		cr_assert_eq(last, s2, "it %d: the new records read back (last %lu s2 %lu head %lu end %lu)", it, (unsigned long)last, (unsigned long)s2, (unsigned long)log->dyn->head, (unsigned long)log->dyn->resv_pos);
		kmsg_log_close(log);
	}
	free(copy);
	free(img);
}

/*
 * A file that claims terabytes and holds a few KiB: a real header for
 * that size, the records of a small log at the start of the data, a
 * dynamic header that says the ring is all but full, and holes.  Readers
 * and writers scan for records across the holes; they must cost what the
 * file holds (a day of 8-byte steps before), and find the records.
 */
Test(damage, a_sparse_file_claiming_terabytes_costs_what_it_holds, .timeout = 120)
{
	struct kmsg_log *small = tu_create("small.log", 1 << 20, 0), *log;
	struct kmsg_static h;
	struct kmsg_dyn d;
	static unsigned char data[16384];
	const uint64_t sizes[] = { UINT64_C(1) << 44, (UINT64_C(1) << 44) - 4096,
				   UINT64_C(1) << 40 };
	uint64_t size = 0, D, first, last;
	int sfd = open(tu_path("small.log"), O_RDONLY), fd;
	int64_t t0;
	double took;
	size_t n;

	for (int i = 0; i < 20; i++)
		tu_append(small, "a record before the holes");
	kmsg_log_close(small);
	cr_assert(pread(sfd, &h, sizeof(h), 0) == sizeof(h));
	cr_assert(pread(sfd, &d, sizeof(d), HDR_STATIC) == sizeof(d));
	cr_assert(pread(sfd, data, sizeof(data), HDR_SIZE) == sizeof(data));
	close(sfd);

	fd = open(tu_path("sparse.log"), O_RDWR | O_CREAT | O_TRUNC, 0644);
	cr_assert(fd >= 0);
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && !size; i++)
		if (ftruncate(fd, (off_t)sizes[i]) == 0)
			size = sizes[i];
	cr_assert(size, "no file system here takes a file of a TiB");
	D = size - HDR_SIZE - BACKUP_SIZE - AUX_SIZE;
	h.file_size = size;
	h.data_size = D;
	h.header_crc = kmsg__hdr_crc(&h);
	atomic_store(&d.resv_pos, D - 65536);
	cr_assert(pwrite(fd, &h, sizeof(h), 0) == sizeof(h));
	cr_assert(pwrite(fd, &d, sizeof(d), HDR_STATIC) == sizeof(d));
	cr_assert(pwrite(fd, data, sizeof(data), HDR_SIZE) == sizeof(data));
	cr_assert(pwrite(fd, &h, sizeof(h), (off_t)(size - BACKUP_SIZE)) == sizeof(h));
	close(fd);

	t0 = tu_now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(kmsg_log_open(&log, tu_path("sparse.log"), KMSG_OPEN_READ), 0);
	n = tu_count(log, &first, &last);
	kmsg_log_close(log);
	took = (double)(tu_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	cr_log_info("read of %llu GiB claimed: %.3f s", (unsigned long long)(size >> 30), took);
	cr_assert_eq(n, 20, "records found: %zu", n);
	cr_assert_eq(first, 1);
	cr_assert_eq(last, 20);

	t0 = tu_now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(kmsg_log_open(&log, tu_path("sparse.log"), KMSG_OPEN_WRITE), 0);
	tu_append(log, "a record after them");
	n = tu_count(log, &first, &last);
	kmsg_log_close(log);
	took = (double)(tu_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	cr_log_info("open for writing, append, read: %.3f s", took);
	cr_assert_eq(n, 21, "records found after an append: %zu", n);

	/* A dump is as large as the records, not the window they claim. */
	{
		struct kmsg_log *dump;
		uint64_t dumped = 0;
		struct stat st;
		int out = open(tu_path("sparse.dump"), O_WRONLY | O_CREAT | O_TRUNC, 0644);

		t0 = tu_now_ns(CLOCK_MONOTONIC);
		cr_assert_eq(kmsg_log_open(&log, tu_path("sparse.log"), KMSG_OPEN_READ), 0);
		cr_assert_eq(kmsg_dump_write(&dumped, log, out, 6), 0);
		kmsg_log_close(log);
		close(out);
		took = (double)(tu_now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
		cr_assert_eq(stat(tu_path("sparse.dump"), &st), 0);
		cr_log_info("dump: %.3f s, %lld bytes", took, (long long)st.st_size);
		cr_assert_eq(dumped, 21);
		cr_assert_eq(kmsg_dump_open(&dump, tu_path("sparse.dump")), 0);
		n = tu_count(dump, &first, &last);
		cr_assert_eq(n, 21, "records in the dump: %zu", n);
		cr_assert_lt(st.st_size, 65536, "a dump of 21 short records");
		kmsg_log_close(dump);
	}
}

/*
 * A power cut that zeroes the first page takes the header (restored from
 * its copy at the end of the file) and the records that lay in the rest
 * of the page with it: a reader that may not write must say that they are
 * gone, not start at the first record left as if nothing were missing.
 * The page's zeroed tags are those of blocks never marked; a reader of
 * the boot after the cut (the records' boot is over) calls them damaged,
 * one of the same boot (the page zeroed by a hand, not a cut) lost, as
 * appends whose writers died: gone, either way.
 */
static void read_zeroed_first_page(int later_boot, uint64_t *first, uint64_t *shown,
				   uint64_t *lost, uint64_t *damaged)
{
	const char *name = later_boot ? "p0-later.log" : "p0-same.log";
	struct kmsg_log *log = tu_create(name, 1 << 20, 0);
	static const unsigned char zeros[4096];
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int fd;

	*first = *shown = *lost = *damaged = 0;
	for (int i = 0; i < 200; i++)
		tu_append(log, "a record of a few dozen bytes, as dmesg has");
	kmsg_log_close(log);
	fd = open(tu_path(name), O_WRONLY);
	cr_assert(pwrite(fd, zeros, sizeof(zeros), 0) == sizeof(zeros));
	close(fd);

	cr_assert_eq(kmsg_log_open(&log, tu_path(name), KMSG_OPEN_READ), 0);
	if (later_boot)
		log->boot_id ^= 1;  /* the reader comes after the reboot */
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while (kmsg_reader_next(r, &rec) == 1) {
		*damaged += rec.damaged;
		*lost += rec.lost;
		if (rec.flags & KMSG_GAP)
			continue;
		if (!*first)
			*first = rec.seq;
		(*shown)++;
	}
	kmsg_reader_free(r);
	kmsg_log_close(log);
	cr_assert_gt(*first, 1, "the first page held records");
}

Test(damage, records_of_a_zeroed_first_page_are_reported_damaged)
{
	uint64_t first, shown, lost, damaged;

	read_zeroed_first_page(1, &first, &shown, &lost, &damaged);
	cr_assert_eq(damaged, first - 1, "records 1..%llu gone, %llu reported damaged",
		     (unsigned long long)first - 1, (unsigned long long)damaged);
	cr_assert_eq(shown + damaged, 200);

	read_zeroed_first_page(0, &first, &shown, &lost, &damaged);
	cr_assert_eq(lost + damaged, first - 1,
		     "in the same boot: records 1..%llu gone, %llu reported lost, %llu damaged",
		     (unsigned long long)first - 1, (unsigned long long)lost,
		     (unsigned long long)damaged);
	cr_assert_eq(shown + lost + damaged, 200, "%llu shown, %llu lost, %llu damaged",
		     (unsigned long long)shown, (unsigned long long)lost, (unsigned long long)damaged);
}

/*
 * A record whose number, checksummed like any other, is lower than the
 * one before it (a writer with write permission can forge one), and
 * damage right after it: the reader looks ahead for the number it
 * expects, never back at what it has read (it went round those records
 * for ever, printing them again and again).  The same with the top
 * number, which no writer gives and one more than which is 0.
 */
static void forge_seq_then_damage(const char *name, uint64_t forged)
{
	struct kmsg_log *log = tu_create(name, LOG_SIZE, 0);
	struct where w[16];
	struct kmsg_reader *r;
	struct kmsg_record rec;
	unsigned char *img;
	uint64_t returned = 0, last = 0;
	size_t n;

	fill(log, 14);
	kmsg_log_close(log);
	img = slurp(tu_path(name));
	n = records_of(img, w, 16);
	cr_assert_eq(n, 14);
	{
		struct rec_hdr *hd = (void *)(img + w[9].off);
		hd->seq = forged;
		hd->crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(hd, rec_size(hd->text_len,
									     hd->fields_len)),
					       hd->seq, hd->tag, rec_lenword(hd));
		img[w[10].off + REC_HDR] ^= 0x40;  /* record 11's text: its checksum fails */
	}
	spit(tu_path(name), img, LOG_SIZE);
	free(img);

	cr_assert_eq(kmsg_log_open(&log, tu_path(name), KMSG_OPEN_READ), 0);
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while (kmsg_reader_next(r, &rec) == 1 && returned < 1000) {
		returned++;
		if (!(rec.flags & KMSG_GAP))
			last = rec.seq;
	}
	kmsg_reader_free(r);
	kmsg_log_close(log);
	cr_assert_leq(returned, 16, "%s: the reader ends (%llu records and gaps returned)",
		      name, (unsigned long long)returned);
	cr_assert_eq(last, 14, "%s: the records after the damage come back", name);
}

Test(damage, a_forged_lower_number_does_not_send_the_reader_round)
{
	forge_seq_then_damage("low.log", 1);
	forge_seq_then_damage("top.log", UINT64_MAX);
}

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define KMSG_TEST_ASAN 1
#endif
#endif
#if !defined(__SANITIZE_ADDRESS__) && !defined(KMSG_TEST_ASAN)
/*
 * mmap, while guard_maps is set: a shared file mapping gets a page no one
 * may touch right after it, so that a read past its end faults instead of
 * reading whatever lies there (the auxiliary area and the header's copy
 * are too short to stop a length of 128 KiB).  Not under ASan, whose own
 * mmap this would replace.
 */
static atomic_int guard_maps;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (atomic_load(&guard_maps) && fd >= 0 && !addr && (flags & MAP_SHARED)) {
		size_t whole = (len + 4095) / 4096 * 4096 + 4096;
		void *base = (void *)syscall(SYS_mmap, NULL, whole, PROT_NONE,
					     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (base == MAP_FAILED)
			return base;
		return (void *)syscall(SYS_mmap, base, len, prot, flags | MAP_FIXED, fd, off);
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

struct rewriter {
	const char *path;
	atomic_int stop;
	uint64_t rewrites;
};

/* A writer with write permission that rewrites the lengths of records
 * (block length, text and fields lengths) to the largest values, and
 * after a moment back, over and over, in its own mapping of the file. */
static void *rewrite_lengths(void *arg)
{
	struct rewriter *w = arg;
	int fd = open(w->path, O_RDWR);
	static struct { struct rec_hdr *h; uint32_t len; uint16_t tl, fl; } saved[8192];
	struct stat st;
	unsigned char *map;
	uint64_t D;

	cr_assert(fd >= 0 && fstat(fd, &st) == 0);
	map = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	cr_assert(map != MAP_FAILED);
	D = ((struct kmsg_static *)map)->data_size;
	while (!atomic_load(&w->stop)) {
		size_t n = 0;

		for (uint64_t phys = 0; phys + REC_HDR <= D && n < 8192; phys += REC_ALIGN) {
			struct rec_hdr *h = (void *)(map + HDR_SIZE + phys);
			uint64_t tag = __atomic_load_n(&h->tag, __ATOMIC_RELAXED);

			if (tag % D != phys || h->len < REC_HDR || h->len > 4096)
				continue;
			saved[n].h = h;
			saved[n].len = h->len;
			saved[n].tl = h->text_len;
			saved[n].fl = h->fields_len;
			phys += h->len - REC_ALIGN;
			h->text_len = 0xffff;
			h->fields_len = 0xffff;
			h->len = REC_LEN_MAX & ~7u;
			n++;
		}
		w->rewrites += n;
		usleep(200);
		while (n--) {
			saved[n].h->len = saved[n].len;
			saved[n].h->text_len = saved[n].tl;
			saved[n].h->fields_len = saved[n].fl;
		}
		usleep(200);
	}
	munmap(map, (size_t)st.st_size);
	close(fd);
	return NULL;
}

Test(damage, lengths_rewritten_under_a_reader_never_read_past_the_mapping, .timeout = 120)
{
	struct kmsg_log *log = tu_create("len.log", 256 << 10, 0);
	struct rewriter w = { .path = tu_path("len.log") };
	uint64_t records = 0, damaged = 0, passes = 0;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	pthread_t t;
	int64_t until;

	/* a ring gone round, so that records lie up to the data's end */
	for (int i = 0; i < 6000; i++)
		tu_append(log, "a record whose lengths will be rewritten under its reader");
	kmsg_log_close(log);

	atomic_store(&guard_maps, 1);
	cr_assert_eq(kmsg_log_open(&log, w.path, KMSG_OPEN_READ), 0);
	cr_assert_eq(pthread_create(&t, NULL, rewrite_lengths, &w), 0);
	until = tu_now_ns(CLOCK_MONOTONIC) + (int64_t)(tu_stress_seconds() * 1e9);
	while (tu_now_ns(CLOCK_MONOTONIC) < until) {
		cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
		while (kmsg_reader_next(r, &rec) == 1) {
			damaged += rec.damaged;
			if (rec.flags & KMSG_GAP)
				continue;
			cr_assert_eq(rec.text_len, strlen("a record whose lengths will be "
							  "rewritten under its reader"));
			records++;
		}
		kmsg_reader_free(r);
		passes++;
	}
	atomic_store(&w.stop, 1);
	pthread_join(t, NULL);
	kmsg_log_close(log);
	cr_log_info("%llu passes, %llu records whole, %llu damaged, %llu rewrites",
		    (unsigned long long)passes, (unsigned long long)records,
		    (unsigned long long)damaged, (unsigned long long)w.rewrites);
	cr_assert_gt(w.rewrites, 1000);
	cr_assert_gt(damaged, 0, "the reader met rewritten lengths");
	cr_assert_gt(records, 0);
}
#endif

/*
 * A follower that opened a log whose header was zeroed reads a copy of
 * its own, which shows nothing written since: a writer's repair and its
 * records must still wake it (it slept for good), and the path then says
 * KMSG_FILE_REPAIRED, so that it opens the log again.
 */
Test(damage, a_follower_of_a_zeroed_header_is_woken_by_the_repair, .timeout = 60)
{
	struct kmsg_log *log = tu_create("zh.log", 1 << 20, 0);
	static const unsigned char zeros[4096];
	struct kmsg_reader *r;
	struct kmsg_record rec;
	pid_t pid;
	int fd, rc, status;

	for (int i = 0; i < 50; i++)
		tu_append(log, "before the damage");
	kmsg_log_close(log);
	fd = open(tu_path("zh.log"), O_WRONLY);
	cr_assert(pwrite(fd, zeros, sizeof(zeros), 0) == sizeof(zeros));
	close(fd);
	cr_assert_eq(kmsg_log_open(&log, tu_path("zh.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	kmsg_reader_seek(r, KMSG_SEEK_END);
	while (kmsg_reader_next(r, &rec) == 1)
		;
	pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *w;

		usleep(300 * 1000);  /* the follower asleep by then */
		if (kmsg_log_open(&w, tu_path("zh.log"), KMSG_OPEN_WRITE) != 0 ||
		    kmsg_log_append(NULL, w, &(struct kmsg_entry)KMSG_ENTRY_INIT) != 0)
			_exit(1);
		_exit(0);
	}
	rc = kmsg_reader_wait(r, 10000);
	cr_assert_eq(rc, 1, "woken by the writer that repaired the header (%d)", rc);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the writer appended");
	cr_assert_eq(kmsg_log_file_changed(log, tu_path("zh.log")), KMSG_FILE_REPAIRED);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}
