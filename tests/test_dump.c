/*
 * test_dump.c - dumps: a dump reads back as exactly the records stored,
 * in order; it stays consistent while another process appends, and when
 * writers overtake it (restarted on a file, refused on a pipe); wrapped
 * and empty logs; damaged, cut-short and foreign files are refused with
 * the right code; a large log is dumped in a few MiB of memory; a dump
 * or a log's bytes arriving on a pipe open, with the bytes a caller took
 * to look at them, and a header claiming more than arrives is refused
 * without allocating or waiting for it; given a directory, a large dump
 * is decompressed into an unlinked file there, and one claiming more
 * than it has room for is refused; a dump taken while a writer is
 * stopped in the middle of an append counts only what it holds and what
 * its readers report missing.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "crc32c.h"
#include "internal.h"
#include "testutil.h"

TestSuite(dump, .fini = tu_cleanup);

/* Dumps log into the file name; returns kmsg_dump_write()'s result. */
static int dump_to(const char *name, struct kmsg_log *log, uint64_t *records, int level)
{
	int fd = open(tu_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int r;

	cr_assert_geq(fd, 0, "open %s: %s", name, strerror(errno));
	r = kmsg_dump_write(records, log, fd, level);
	close(fd);
	return r;
}

/*
 * The log opened again for reading only, as kmsg dump opens it.  A handle
 * that may write passes a writer stalled mid-append after 5 ms, as
 * writers do (kmsg(5)), and the writer appends its record again; that
 * leaves a number with no record, which a dump, an image of the first
 * format, shows as a damaged one.  A loaded machine deschedules a writer
 * that long; these tests are about overtaking, not about that.
 */
static void reopen_to_read(struct kmsg_log **log, const char *name)
{
	kmsg_log_close(*log);
	cr_assert_eq(kmsg_log_open(log, tu_path(name), KMSG_OPEN_READ), 0);
}

static struct kmsg_log *open_dump(const char *name)
{
	struct kmsg_log *d = NULL;
	int r = kmsg_dump_open(&d, tu_path(name));
	cr_assert_eq(r, 0, "dump_open %s: %s", name, kmsg_strerror(r));
	return d;
}

static int next_rec(struct kmsg_reader *r, struct kmsg_record *rec)
{
	int n = kmsg_reader_next(r, rec);
	cr_assert_geq(n, 0, "reader: %s", kmsg_strerror(n));
	return n;
}

/* Both logs hold the same records, field for field, in the same order. */
static size_t expect_same_records(struct kmsg_log *a, struct kmsg_log *b)
{
	struct kmsg_reader *ra, *rb;
	struct kmsg_record x, y;
	size_t n = 0;

	cr_assert_eq(kmsg_reader_new(&ra, a, 0), 0);
	cr_assert_eq(kmsg_reader_new(&rb, b, 0), 0);
	for (;;) {
		int na = next_rec(ra, &x), nb = next_rec(rb, &y);
		cr_assert_eq(na, nb, "record %zu: one log ends before the other", n);
		if (!na)
			break;
		cr_assert_eq(x.seq, y.seq, "record %zu", n);
		cr_assert_eq(x.real_ns, y.real_ns);
		cr_assert_eq(x.boot_ns, y.boot_ns);
		cr_assert_eq(x.boot_id, y.boot_id);
		cr_assert_eq(x.pid, y.pid);
		cr_assert_eq(x.caller, y.caller);
		cr_assert_eq(x.facility, y.facility);
		cr_assert_eq(x.level, y.level);
		cr_assert_eq(x.flags, y.flags);
		cr_assert_eq(x.text_len, y.text_len);
		cr_assert_eq(memcmp(x.text, y.text, x.text_len), 0, "seq %llu text",
			     (unsigned long long)x.seq);
		cr_assert_eq(x.fields_len, y.fields_len);
		cr_assert_eq(memcmp(x.fields, y.fields, x.fields_len), 0);
		cr_assert_eq(y.lost, 0);
		cr_assert_eq(y.damaged, 0);
		n++;
	}
	kmsg_reader_free(ra);
	kmsg_reader_free(rb);
	return n;
}

/* The seq-th record's text: its number and a filler of varying length. */
static size_t text_of(char *buf, size_t cap, uint64_t seq, size_t spread)
{
	int n = snprintf(buf, cap, "record %llu ", (unsigned long long)seq);
	size_t fill = (seq * 37) % spread;
	for (size_t k = 0; k < fill && n + k < cap; k++)
		buf[n + k] = (char)('a' + (seq + k) % 26);
	return (size_t)n + fill;
}

/* The number the next record of log gets. */
static uint64_t next_seq_of(struct kmsg_log *log)
{
	struct kmsg_stat st;

	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	return st.next_seq;
}

static void append_n(struct kmsg_log *log, uint64_t count, size_t spread)
{
	char buf[1100];
	for (uint64_t i = 0; i < count; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		uint64_t seq = next_seq_of(log);
		e.text = buf;
		e.text_len = text_of(buf, sizeof(buf), seq, spread);
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
}

Test(dump, reads_back_exactly_what_was_stored)
{
	struct kmsg_log *log = tu_create("a.log", 64 * 1024, 300);
	struct kmsg_field f[2] = {
		{ "CODE_FILE", 0, "main.c", 6 },
		{ "BLOB", 0, "\0\n\xff=x", 5 },
	};
	char text[300];
	struct kmsg_stat s1, s2;
	uint64_t count = 0;

	for (int i = 0; i < 500; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		size_t len = (size_t)(i * 13) % (sizeof(text) + 1);
		for (size_t k = 0; k < len && k < sizeof(text); k++)
			text[k] = (char)(i + k);  /* every byte value, NUL too */
		e.text = text;
		e.text_len = len < sizeof(text) ? len : sizeof(text);
		e.facility = i % KMSG_NFACILITIES;
		e.level = i % 8;
		e.flags = (i % 5 == 1 ? KMSG_FRAGMENT : 0) | (i % 3 ? KMSG_TIMES : 0) |
			  (i % 7 == 2 ? KMSG_BEGIN : 0);
		e.real_ns = INT64_C(1700000000000000000) + i * INT64_C(1000003);
		e.boot_ns = i * INT64_C(999983);
		e.pid = i % 7 ? 4242 + (uint32_t)i : 0;
		e.caller = (uint32_t)i % 11;
		e.fields = f;
		e.nfields = (size_t)i % 3;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0, "append %d", i);
	}
	cr_assert_eq(kmsg_log_stat(&s1, log), 0);
	cr_assert_eq(kmsg_log_clear(log, s1.first_seq + 10), 0);
	atomic_store(&log->aux->holes, 5);  /* as if 5 appends had never finished */

	cr_assert_eq(dump_to("a.gz", log, &count, -1), 0);
	struct kmsg_log *d = open_dump("a.gz");
	size_t n = expect_same_records(log, d);
	cr_assert_eq(count, n, "the count returned is the records written");
	cr_assert_gt(n, 100, "the ring wrapped but keeps many records");
	cr_assert_lt(n, 500, "the ring wrapped");

	/* The state a reader sees: numbering, clear mark, identity. */
	cr_assert_eq(kmsg_log_stat(&s1, log), 0);
	cr_assert_eq(kmsg_log_stat(&s2, d), 0);
	cr_assert_eq(s2.first_seq, s1.first_seq);
	cr_assert_eq(s2.next_seq, s1.next_seq);
	cr_assert_eq(s2.clear_seq, s1.first_seq + 10);
	cr_assert_eq(s2.evicted, s1.evicted);
	cr_assert_eq(s2.holes, 5);
	cr_assert_eq(s2.max_text, 300);
	cr_assert_eq(s2.created_ns, s1.created_ns);
	cr_assert_eq(memcmp(s2.ring_id, s1.ring_id, 16), 0, "a dump names its log");
	cr_assert_eq(s2.file_size % 4096, 0);
	/* the records' bytes: no more than in the log, which has pads */
	cr_assert_gt(s2.used, 0);
	cr_assert_leq(s2.used, s1.used);

	/* stat from the dump's start alone says the same, but for used */
	{
		struct kmsg_stat s3;
		int fd = open(tu_path("a.gz"), O_RDONLY);
		cr_assert_eq(kmsg_dump_stat_fd(&s3, fd, NULL, 0), 0);
		close(fd);
		cr_assert_eq(s3.first_seq, s2.first_seq);
		cr_assert_eq(s3.next_seq, s2.next_seq);
		cr_assert_eq(s3.clear_seq, s2.clear_seq);
		cr_assert_eq(s3.evicted, s2.evicted);
		cr_assert_eq(s3.holes, s2.holes);
		cr_assert_eq(s3.max_text, s2.max_text);
		cr_assert_eq(s3.file_size, s2.file_size);
		cr_assert_eq(memcmp(s3.ring_id, s2.ring_id, 16), 0);
		cr_assert_geq(s3.used, s2.used, "the room kept, at least what the records take");
	}

	/* Readers of the dump start at the clear mark as on the log. */
	{
		struct kmsg_reader *r;
		struct kmsg_record rec;
		cr_assert_eq(kmsg_reader_new(&r, d, 0), 0);
		cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_CLEARED), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.seq, s1.first_seq + 10);
		kmsg_reader_free(r);
	}
	/* Opened read-only: the dump cannot be appended to. */
	cr_assert_eq(kmsg_log_print(d, 1, 6, "x", 1), KMSG_ERDONLY);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

/* gunzip's output is a log file: it opens, reads, and takes appends. */
Test(dump, gunzipped_dump_is_a_log_file)
{
	struct kmsg_log *log = tu_create("a.log", 64 * 1024, 0), *g;
	struct kmsg_stat st;
	char buf[65536];
	gzFile z;
	FILE *f;
	int n;
	uint64_t seq;

	append_n(log, 3000, 200);
	atomic_store(&log->aux->holes, 7);  /* as if 7 appends had never finished */
	cr_assert_eq(dump_to("a.gz", log, NULL, 1), 0);

	z = gzopen(tu_path("a.gz"), "rb");
	cr_assert_not_null(z);
	f = fopen(tu_path("plain.log"), "wb");
	cr_assert_not_null(f);
	while ((n = gzread(z, buf, sizeof(buf))) > 0)
		cr_assert_eq(fwrite(buf, 1, (size_t)n, f), (size_t)n);
	cr_assert_eq(n, 0);
	gzclose(z);
	cr_assert_eq(fclose(f), 0);

	cr_assert_eq(kmsg_log_open(&g, tu_path("plain.log"), KMSG_OPEN_READ), 0);
	expect_same_records(log, g);
	cr_assert_eq(kmsg_log_stat(&st, g), 0);
	cr_assert_eq(st.holes, 7, "the count of unfinished appends goes with the records");
	kmsg_log_close(g);

	/* A writer continues the numbering where the log was at the dump
	 * (and upgrades the image to its format, counts and all). */
	cr_assert_eq(kmsg_log_open(&g, tu_path("plain.log"), KMSG_OPEN_WRITE), 0);
	seq = tu_append(g, "after the dump");
	cr_assert_eq(seq, next_seq_of(log));
	cr_assert_eq(kmsg_log_stat(&st, g), 0);
	cr_assert_eq(st.holes, 7);
	kmsg_log_close(g);
	kmsg_log_close(log);
}

Test(dump, wrapped_ring_dumps_only_what_is_stored)
{
	struct kmsg_log *log = tu_create("a.log", 16384, 1000);
	uint64_t count, first = 0, last = 0, dfirst = 0, dlast = 0;
	size_t stored;

	/* many laps, records of every size up to the maximum */
	append_n(log, 20000, 900);
	stored = tu_count(log, &first, &last);
	cr_assert_eq(dump_to("a.gz", log, &count, 9), 0);
	struct kmsg_log *d = open_dump("a.gz");
	cr_assert_eq(expect_same_records(log, d), stored);
	cr_assert_eq(tu_count(d, &dfirst, &dlast), stored);
	cr_assert_eq(count, stored);
	cr_assert_eq(dfirst, first);
	cr_assert_eq(dlast, 20000);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

Test(dump, empty_log)
{
	struct kmsg_log *log = tu_create("a.log", KMSG_MIN_SIZE, 100), *d;
	struct kmsg_stat st;
	uint64_t count = 99;
	struct stat fs;

	cr_assert_eq(dump_to("a.gz", log, &count, -1), 0);
	cr_assert_eq(count, 0);
	d = open_dump("a.gz");
	cr_assert_eq(tu_count(d, NULL, NULL), 0);
	cr_assert_eq(kmsg_log_stat(&st, d), 0);
	cr_assert_eq(st.next_seq, 1);
	cr_assert_eq(st.first_seq, 1);
	cr_assert_eq(st.used, 0);
	kmsg_log_close(d);
	{
		int fd = open(tu_path("a.gz"), O_RDONLY);
		cr_assert_eq(kmsg_dump_stat_fd(&st, fd, NULL, 0), 0);
		close(fd);
		cr_assert_eq(st.first_seq, 1, "no record: first is next");
		cr_assert_eq(st.next_seq, 1);
	}

	/* Records all cleared are still stored, and dumped. */
	tu_append(log, "one");
	tu_append(log, "two");
	cr_assert_eq(kmsg_log_clear(log, 100), 0);
	cr_assert_eq(dump_to("b.gz", log, &count, -1), 0);
	cr_assert_eq(count, 2);
	d = open_dump("b.gz");
	cr_assert_eq(kmsg_log_stat(&st, d), 0);
	cr_assert_eq(st.clear_seq, 3);
	kmsg_log_close(d);
	kmsg_log_close(log);

	/* A dump is sized by what the log holds, not by the log. */
	log = tu_create("big.log", 64 << 20, 0);
	tu_append(log, "alone");
	cr_assert_eq(dump_to("c.gz", log, &count, -1), 0);
	cr_assert_eq(count, 1);
	cr_assert_eq(stat(tu_path("c.gz"), &fs), 0);
	cr_assert_lt(fs.st_size, 1024, "%lld bytes", (long long)fs.st_size);
	d = open_dump("c.gz");
	cr_assert_eq(kmsg_log_stat(&st, d), 0);
	cr_assert_lt(st.file_size, 64 << 10);
	cr_assert_eq(tu_count(d, NULL, NULL), 1);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

Test(dump, bad_arguments)
{
	struct kmsg_log *log = tu_create("a.log", 65536, 0), *d = NULL;

	cr_assert_eq(kmsg_dump_write(NULL, NULL, 1, -1), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_write(NULL, log, -1, -1), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_write(NULL, log, 1, 10), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_write(NULL, log, 1, -2), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_open(NULL, "x"), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_open(&d, tu_path("missing.gz")), -ENOENT);
	cr_assert_null(d);
	kmsg_log_close(log);
}

static void write_file(const char *name, const void *p, size_t n)
{
	int fd = open(tu_path(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
}

static void *read_file(const char *name, size_t *n)
{
	struct stat st;
	int fd = open(tu_path(name), O_RDONLY | O_CLOEXEC);
	void *p;

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &st), 0);
	p = malloc((size_t)st.st_size + 1);
	cr_assert_eq(read(fd, p, (size_t)st.st_size), st.st_size);
	close(fd);
	*n = (size_t)st.st_size;
	return p;
}

static int try_open(const char *name)
{
	struct kmsg_log *d = NULL;
	int r = kmsg_dump_open(&d, tu_path(name));
	if (r == 0)
		kmsg_log_close(d);
	else
		cr_assert_null(d);
	return r;
}

/* gzip-compresses n bytes of p into the file name. */
static void gzip_file(const char *name, const void *p, size_t n)
{
	gzFile z = gzopen(tu_path(name), "wb");
	cr_assert_not_null(z);
	cr_assert_eq(gzwrite(z, p, (unsigned)n), (int)n);
	cr_assert_eq(gzclose(z), Z_OK);
}

Test(dump, damaged_and_foreign_files_are_refused)
{
	struct kmsg_log *log = tu_create("a.log", 65536, 0);
	unsigned char *p, *q;
	size_t n, m;

	append_n(log, 2000, 300);
	cr_assert_eq(dump_to("a.gz", log, NULL, -1), 0);
	p = read_file("a.gz", &n);
	cr_assert_eq(try_open("a.gz"), 0);

	/* cut short anywhere: the header, the records, the trailer */
	size_t cuts[] = { 2, 10, 30, n / 2, n - 9, n - 4, n - 1 };
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		write_file("cut.gz", p, cuts[i]);
		cr_assert_eq(try_open("cut.gz"), KMSG_ECORRUPT, "cut at %zu of %zu", cuts[i], n);
	}
	/* A flipped byte anywhere after the gzip magic is refused, or
	 * changes nothing: a match inside a run of zeros decodes the same
	 * whatever its distance, and that is no damage to the content. */
	for (size_t at = 2; at < n; at += n / 97 + 1) {
		struct kmsg_log *d = NULL;
		int r;
		p[at] ^= 0x20;
		write_file("flip.gz", p, n);
		p[at] ^= 0x20;
		r = kmsg_dump_open(&d, tu_path("flip.gz"));
		if (r == 0) {
			expect_same_records(log, d);
			kmsg_log_close(d);
			continue;
		}
		cr_assert_eq(r, KMSG_ECORRUPT, "byte %zu of %zu flipped: %s", at, n,
			     kmsg_strerror(r));
	}
	/* bytes after the gzip stream */
	q = malloc(n + 8);
	memcpy(q, p, n);
	memcpy(q + n, "trailing", 8);
	write_file("tail.gz", q, n + 8);
	cr_assert_eq(try_open("tail.gz"), KMSG_ECORRUPT);
	free(q);

	/* not gzip at all: empty, text, a log itself */
	write_file("empty", "", 0);
	cr_assert_eq(try_open("empty"), KMSG_ENOTLOG);
	write_file("one", "\x1f", 1);
	cr_assert_eq(try_open("one"), KMSG_ENOTLOG);
	write_file("text", "<6>[    1.000000] hello\n", 24);
	cr_assert_eq(try_open("text"), KMSG_ENOTLOG);
	cr_assert_eq(try_open("a.log"), KMSG_ENOTLOG);

	/* gzip, but no log inside */
	gzip_file("hello.gz", "hello, world\n", 13);
	cr_assert_eq(try_open("hello.gz"), KMSG_ECORRUPT);
	q = read_file("a.log", &m);
	gzip_file("short.gz", q, 1000);  /* a log's first bytes only */
	cr_assert_eq(try_open("short.gz"), KMSG_ECORRUPT);
	free(q);

	/* A valid header claiming 64 KiB over a much longer content (a
	 * gzip bomb): refused without decompressing past the claim. */
	{
		size_t big = 64u << 20;
		unsigned char *b = calloc(1, big);
		gzFile z;
		memcpy(b, log->map, HDR_SIZE);
		z = gzopen(tu_path("bomb.gz"), "wb9");
		cr_assert_not_null(z);
		cr_assert_eq(gzwrite(z, b, (unsigned)big), (int)big);
		gzclose(z);
		free(b);
		cr_assert_eq(try_open("bomb.gz"), KMSG_ECORRUPT);
	}
	free(p);
	kmsg_log_close(log);
}

/* The readable records of a damaged log are dumped; the gaps stay gaps. */
static void expect_same_with_gaps(struct kmsg_log *a, struct kmsg_log *b)
{
	struct kmsg_reader *ra, *rb;
	struct kmsg_record x, y;
	size_t n = 0, gaps = 0;

	cr_assert_eq(kmsg_reader_new(&ra, a, 0), 0);
	cr_assert_eq(kmsg_reader_new(&rb, b, 0), 0);
	for (;;) {
		int na = next_rec(ra, &x), nb = next_rec(rb, &y);
		cr_assert_eq(na, nb, "record %zu: one log ends before the other", n);
		if (!na)
			break;
		cr_assert_eq(x.seq, y.seq, "record %zu", n);
		cr_assert_eq(x.text_len, y.text_len);
		cr_assert_eq(memcmp(x.text, y.text, x.text_len), 0);
		if (n > 0) {
			cr_assert_eq(x.damaged, y.damaged, "the gap before %llu",
				     (unsigned long long)x.seq);
			gaps += y.damaged;
		}
		n++;
	}
	kmsg_reader_free(ra);
	kmsg_reader_free(rb);
	cr_assert_gt(n, 10);
	cr_assert_gt(gaps, 0, "the damage shows in the dump");
}

Test(dump, damaged_log_dumps_what_is_readable)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0), *d;
	uint64_t D;

	append_n(log, 20000, 150);
	D = log->data_size;
	/* a few records hit here and there */
	for (uint64_t off = D / 10; off < D; off += D / 7)
		log->data[off] ^= 0x55;
	cr_assert_eq(dump_to("a.gz", log, NULL, -1), 0);
	d = open_dump("a.gz");
	expect_same_with_gaps(log, d);
	kmsg_log_close(d);

	/* Most of the ring unreadable: more room left over than a pad may
	 * take; the dump still reads as the log does. */
	memset(log->data + D / 8, 0xa5, D * 3 / 4);
	cr_assert_eq(dump_to("b.gz", log, NULL, -1), 0);
	d = open_dump("b.gz");
	expect_same_with_gaps(log, d);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

/* What a thread writes: to the FIFO at path, or to fd if path is NULL;
 * left is what it could not write, the reader having stopped. */
struct feeder { const char *path; const void *p; size_t n; int fd; size_t left; };

static void *feed_fifo(void *arg)
{
	struct feeder *f = arg;
	int fd = f->path ? open(f->path, O_WRONLY | O_CLOEXEC) : f->fd;
	const char *p = f->p;
	size_t n = f->n;
	while (fd >= 0 && n > 0) {
		ssize_t w = write(fd, p, n);
		if (w <= 0)
			break;  /* the reader stopped reading: EPIPE */
		p += w;
		n -= (size_t)w;
	}
	if (fd >= 0)
		close(fd);
	f->left = n;
	return NULL;
}

/* kmsg_dump_open() on a FIFO (no size to check first) with contents p;
 * *left (if not NULL) gets the bytes it never read. */
static int open_through_fifo(struct kmsg_log **d, const void *p, size_t n, size_t *left)
{
	struct feeder f = { NULL, p, n, -1, 0 };
	pthread_t t;
	int r;

	f.path = strdup(tu_path("fifo"));
	unlink(f.path);
	cr_assert_eq(mkfifo(f.path, 0600), 0);
	pthread_create(&t, NULL, feed_fifo, &f);
	r = kmsg_dump_open(d, f.path);
	/* it opened the FIFO: the feeder has met a reader, and its end
	 * (EPIPE, SIGPIPE being ignored) */
	pthread_join(t, NULL);
	free((void *)f.path);
	if (left)
		*left = f.left;
	return r;
}

/* count records appended to a new log "a.log", dumped to "a.gz", read back. */
static unsigned char *new_dump(struct kmsg_log **log, uint64_t count, size_t *n)
{
	*log = tu_create("a.log", 65536, 0);
	signal(SIGPIPE, SIG_IGN);
	append_n(*log, count, 100);
	cr_assert_eq(dump_to("a.gz", *log, NULL, -1), 0);
	return read_file("a.gz", n);
}

/*
 * Through a pipe the gzip trailer cannot be read first: a content longer
 * than its header claims is cut off at the claim and refused.
 */
Test(dump, read_from_a_fifo_and_bomb_refused)
{
	struct kmsg_log *log, *d = NULL;
	size_t n;
	unsigned char *p = new_dump(&log, 500, &n);

	cr_assert_eq(open_through_fifo(&d, p, n, NULL), 0);
	expect_same_records(log, d);
	kmsg_log_close(d);
	free(p);

	{
		/* not zeros: whole, it would take 512 MiB of memory */
		size_t big = 512u << 20;
		unsigned char *b = malloc(big);
		gzFile z;
		memset(b, 'A', big);
		memcpy(b, log->map, HDR_SIZE);  /* claims 64 KiB */
		z = gzopen(tu_path("bomb.gz"), "wb1");
		cr_assert_eq(gzwrite(z, b, (unsigned)big), (int)big);
		gzclose(z);
		free(b);
	}
	p = read_file("bomb.gz", &n);
	d = NULL;
	size_t left;
	cr_assert_eq(open_through_fifo(&d, p, n, &left), KMSG_ECORRUPT);
	cr_assert_null(d);
	cr_assert_gt(left, n / 2, "it stopped at the claimed size, not at the end "
		     "(%zu of %zu bytes left unread)", left, n);
	free(p);
	kmsg_log_close(log);
}

/* ---- from a descriptor ---------------------------------------------------- */

/*
 * kmsg_dump_open_fd() on a pipe carrying p, the first `taken` bytes read
 * from it first, as a tool does to see what arrives.
 */
static int open_fd_through_pipe(struct kmsg_log **d, const unsigned char *p,
				size_t n, size_t taken)
{
	struct feeder f = { NULL, p, n, -1, 0 };
	unsigned char head[64];
	pthread_t t;
	int fds[2], r;
	size_t got = 0;

	cr_assert_leq(taken, sizeof(head));
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	f.fd = fds[1];
	pthread_create(&t, NULL, feed_fifo, &f);
	while (got < taken) {
		ssize_t k = read(fds[0], head + got, taken - got);
		cr_assert_gt(k, 0);
		got += (size_t)k;
	}
	r = kmsg_dump_open_fd(d, fds[0], head, taken);
	close(fds[0]);  /* a feeder still writing gets EPIPE */
	pthread_join(t, NULL);
	return r;
}

Test(dump, open_fd_with_the_bytes_already_read)
{
	struct kmsg_log *log, *d = NULL;
	size_t n;
	unsigned char *p = new_dump(&log, 300, &n);

	for (size_t taken = 0; taken <= 40; taken += 20) {
		cr_assert_eq(open_fd_through_pipe(&d, p, n, taken), 0);
		expect_same_records(log, d);
		kmsg_log_close(d);
	}
	free(p);

	/* the log file's own bytes (cat LOG |) are copied as they come */
	p = read_file("a.log", &n);
	cr_assert_eq(open_fd_through_pipe(&d, p, n, 8), 0);
	expect_same_records(log, d);
	kmsg_log_close(d);
	/* cut short: refused, not opened as a log with a hole */
	d = NULL;
	cr_assert_eq(open_fd_through_pipe(&d, p, n - 4096, 8), KMSG_ECORRUPT);
	cr_assert_null(d);
	/* neither gzip nor a log */
	cr_assert_eq(open_fd_through_pipe(&d, (const unsigned char *)"hello\n", 6, 2),
		     KMSG_ENOTLOG);
	cr_assert_eq(kmsg_dump_open_fd(&d, -1, NULL, 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_dump_open_fd(&d, 0, NULL, 3), KMSG_EINVAL);
	free(p);
	kmsg_log_close(log);
}

static long max_rss_kib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * A header that claims 64 TiB and a few bytes after it: refused once the
 * input shows it is short, with no memory taken for the claim; a gzip
 * stream that ends short is refused at its end, while the pipe is still
 * open, not when the writer goes away.
 */
Test(dump, a_header_claiming_more_than_arrives)
{
	struct kmsg_log *log = tu_create("a.log", 65536, 0), *d = NULL;
	static unsigned char raw[HDR_SIZE + (1u << 20)];
	unsigned char gz[8192];
	struct kmsg_hdr_v1 h;
	z_stream z;
	long rss0 = max_rss_kib();
	int fds[2];

	signal(SIGPIPE, SIG_IGN);
	memcpy(&h, log->map, HDR_SIZE);
	h.s.file_size = KMSG_MAX_SIZE;
	h.s.header_crc = kmsg__crc32c_extend(0, &h, HDR_CRC_OFF);
	memcpy(raw, &h, HDR_SIZE);
	memset(raw + HDR_SIZE, 'x', sizeof(raw) - HDR_SIZE);

	cr_assert_eq(open_fd_through_pipe(&d, raw, sizeof(raw), 8), KMSG_ECORRUPT);
	cr_assert_null(d);

	memset(&z, 0, sizeof(z));
	cr_assert_eq(deflateInit2(&z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	z.next_in = raw;
	z.avail_in = HDR_SIZE + 4096;
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	cr_assert_eq(write(fds[1], gz, sizeof(gz) - z.avail_out),
		     (ssize_t)(sizeof(gz) - z.avail_out));
	deflateEnd(&z);
	/* the write end stays open: one that waited for more would hang
	 * until the test's timeout */
	cr_assert_eq(kmsg_dump_open_fd(&d, fds[0], NULL, 0), KMSG_ECORRUPT);
	close(fds[0]);
	close(fds[1]);
	cr_assert_lt(max_rss_kib() - rss0, 32 * 1024, "memory grew by %ld KiB",
		     max_rss_kib() - rss0);
	kmsg_log_close(log);
}

/* What the copy of the dump opened as d is: "/memfd:..." or a path. */
static const char *copy_is(const struct kmsg_log *d, char *buf, size_t size)
{
	char link[64];
	ssize_t k;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", d->fd);
	k = readlink(link, buf, size - 1);
	cr_assert_gt(k, 0);
	buf[k] = '\0';
	return buf;
}

/*
 * Given a directory, a dump whose header claims more than mem_max is
 * decompressed into an unlinked file there, not into memory, and reads
 * as the log; one within mem_max stays in memory; a header that claims
 * more than the directory's file system has free (64 TiB) is refused
 * with -ENOSPC, and a directory that is not there with its -ENOENT.
 */
Test(dump, a_large_copy_goes_to_the_directory_given)
{
	struct kmsg_dump_open_opts o = KMSG_DUMP_OPEN_OPTS_INIT;
	struct kmsg_log *log, *d = NULL;
	static unsigned char raw[HDR_SIZE + 4096];
	struct kmsg_hdr_v1 h;
	struct stat st;
	char dir[PATH_MAX], what[PATH_MAX];
	size_t n;
	unsigned char *p = new_dump(&log, 300, &n);
	int fd, fds[2];

	free(p);
	snprintf(dir, sizeof(dir), "%s", tu_dir());
	o.tmpdir = dir;
	o.mem_max = 0;
	fd = open(tu_path("a.gz"), O_RDONLY | O_CLOEXEC);
	cr_assert_eq(kmsg_dump_open_fd_opts(&d, fd, NULL, 0, &o), 0);
	close(fd);
	cr_assert_eq(fstat(d->fd, &st), 0);
	cr_assert_eq(st.st_nlink, 0, "the copy is unlinked");
	cr_assert_eq(strncmp(copy_is(d, what, sizeof(what)), dir, strlen(dir)), 0,
		     "the copy is %s, not in %s", what, dir);
	expect_same_records(log, d);
	kmsg_log_close(d);

	o.mem_max = 1u << 20;
	fd = open(tu_path("a.gz"), O_RDONLY | O_CLOEXEC);
	cr_assert_eq(kmsg_dump_open_fd_opts(&d, fd, NULL, 0, &o), 0);
	close(fd);
	cr_assert_eq(strncmp(copy_is(d, what, sizeof(what)), "/memfd:", 7), 0,
		     "the copy is %s", what);
	expect_same_records(log, d);
	kmsg_log_close(d);

	o.mem_max = 0;
	memcpy(&h, log->map, HDR_SIZE);
	h.s.file_size = KMSG_MAX_SIZE;
	h.s.header_crc = kmsg__crc32c_extend(0, &h, HDR_CRC_OFF);
	memcpy(raw, &h, HDR_SIZE);
	memset(raw + HDR_SIZE, 'x', sizeof(raw) - HDR_SIZE);
	cr_assert_eq(pipe2(fds, O_CLOEXEC), 0);
	cr_assert_eq(write(fds[1], raw, sizeof(raw)), (ssize_t)sizeof(raw));
	close(fds[1]);
	d = NULL;
	cr_assert_eq(kmsg_dump_open_fd_opts(&d, fds[0], NULL, 0, &o), -ENOSPC);
	cr_assert_null(d);
	close(fds[0]);

	fd = open(tu_path("a.gz"), O_RDONLY | O_CLOEXEC);
	snprintf(dir, sizeof(dir), "%s", tu_path("no-such-dir"));
	cr_assert_eq(kmsg_dump_open_fd_opts(&d, fd, NULL, 0, &o), -ENOENT);
	o.version = 0;
	cr_assert_eq(kmsg_dump_open_fd_opts(&d, fd, NULL, 0, &o), KMSG_EINVAL);
	close(fd);
	kmsg_log_close(log);
}

/* ---- while writers write ---------------------------------------------- */

/* A child that appends to path until killed, sleeping pause_ns between. */
static pid_t start_writer(const char *path, long pause_ns)
{
	pid_t pid = tu_fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct kmsg_log *w;
		char buf[200];
		struct timespec ts = { 0, pause_ns };
		/* never outlive a test that failed before stop_writer() */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		if (kmsg_log_open(&w, path, KMSG_OPEN_WRITE))
			_exit(1);
		for (uint64_t i = 0;; i++) {
			struct kmsg_entry e = KMSG_ENTRY_INIT;
			e.text = buf;
			e.text_len = text_of(buf, sizeof(buf), i, 150);
			if (kmsg_log_append(NULL, w, &e))
				_exit(2);
			if (pause_ns)
				nanosleep(&ts, NULL);
		}
	}
	return pid;
}

static void stop_writer(pid_t pid)
{
	int st;
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st), "the writer failed: status %d", st);
}

/*
 * The dump in name holds a run of records with contiguous numbers, none
 * damaged, from no older than oldest_before to no newer than next_after,
 * and at least up to the newest of next_before.
 */
static void expect_consistent(const char *name, uint64_t oldest_before,
			      uint64_t next_before, uint64_t next_after, uint64_t count)
{
	struct kmsg_log *d = open_dump(name);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t first = 0, prev = 0, n = 0;

	cr_assert_eq(kmsg_reader_new(&r, d, 0), 0);
	while (next_rec(r, &rec) == 1) {
		cr_assert_eq(rec.lost + rec.damaged, 0, "a gap before %llu: %llu lost, %llu damaged",
			     (unsigned long long)rec.seq, (unsigned long long)rec.lost,
			     (unsigned long long)rec.damaged);
		if (n == 0)
			first = rec.seq;
		else
			cr_assert_eq(rec.seq, prev + 1, "numbers contiguous");
		prev = rec.seq;
		n++;
	}
	kmsg_reader_free(r);
	cr_assert_eq(n, count);
	cr_assert_gt(n, 0);
	cr_assert_geq(first, oldest_before);
	cr_assert_geq(prev + 1, next_before, "every record there at the start is in");
	cr_assert_leq(prev + 1, next_after);
	kmsg_log_close(d);
}

Test(dump, consistent_while_another_process_appends, .timeout = 120)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0);
	struct kmsg_stat before, after;
	pid_t w;

	append_n(log, 20000, 150);  /* full: every append evicts */
	reopen_to_read(&log, "a.log");
	w = start_writer(tu_path("a.log"), 20000);
	/* 20 dumps during which the writer wrote: on a loaded machine it may
	 * not run during every one, and those prove nothing.  A dump the
	 * writer overtook four times running is refused (-EAGAIN, as kmsg.h
	 * says), which a sanitizer build beside other jobs can meet: a few
	 * are let pass, never a torn one. */
	for (int i = 0, overlapped = 0, refused = 0; overlapped < 20; i++) {
		uint64_t count;
		cr_assert_lt(i, 2000, "the writer wrote during %d of %d dumps", overlapped, i);
		cr_assert_eq(kmsg_log_stat(&before, log), 0);
		int r = dump_to("a.gz", log, &count, 1);
		if (r == -EAGAIN && ++refused <= 10)
			continue;
		cr_assert_eq(r, 0, "dump %d: %s (%d refused before)", i, kmsg_strerror(r),
			     refused - (r == -EAGAIN));
		cr_assert_eq(kmsg_log_stat(&after, log), 0);
		overlapped += after.next_seq > before.next_seq;
		expect_consistent("a.gz", before.first_seq, before.next_seq, after.next_seq,
				  count);
	}
	stop_writer(w);
	kmsg_log_close(log);
}

/* A writer as fast as it goes: a dump is consistent or -EAGAIN, never torn. */
Test(dump, overtaken_dump_is_restarted_or_refused, .timeout = 120)
{
	struct kmsg_log *log = tu_create("a.log", 65536, 0);
	struct kmsg_stat before, after;
	int ok = 0, again = 0;
	pid_t w;

	append_n(log, 2000, 150);
	reopen_to_read(&log, "a.log");
	w = start_writer(tu_path("a.log"), 0);
	for (int i = 0; i < 50; i++) {
		uint64_t count;
		int r;
		cr_assert_eq(kmsg_log_stat(&before, log), 0);
		r = dump_to("a.gz", log, &count, 9);
		cr_assert_eq(kmsg_log_stat(&after, log), 0);
		if (r == -EAGAIN) {
			again++;
			continue;
		}
		cr_assert_eq(r, 0, "%s", kmsg_strerror(r));
		expect_consistent("a.gz", before.first_seq, before.next_seq, after.next_seq,
				  count);
		ok++;
	}
	stop_writer(w);
	cr_log_info("fast writer: %d dumps whole, %d refused", ok, again);
	kmsg_log_close(log);
}

/*
 * A dump stopped in the middle (SIGSTOP) while the ring turns over under
 * it is started again: the file holds one whole, consistent dump, after
 * what it held before (the output is opened O_APPEND: a restart winds
 * back to where the dump began, not to the offset, which is 0).
 */
Test(dump, restarted_after_being_overtaken, .timeout = 120)
{
	struct kmsg_log *log = tu_create("a.log", 4 << 20, 1000);
	struct kmsg_stat before, after;
	static const char prefix[] = "what the file held before\n";
	unsigned char *p;
	size_t n;
	int fds[2], st;
	uint64_t count = 0;
	pid_t child;

	append_n(log, 20000, 900);
	/* text that compresses badly, so that the dump takes a while */
	for (int i = 0; i < 8000; i++) {
		char buf[1000];
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (char)(rand() & 0xff);
		cr_assert_eq(kmsg_log_print(log, 1, 6, buf, sizeof(buf)), 0);
	}
	cr_assert_eq(kmsg_log_stat(&before, log), 0);
	write_file("out", prefix, sizeof(prefix) - 1);
	cr_assert_eq(pipe(fds), 0);
	child = tu_fork();
	cr_assert_geq(child, 0);
	if (child == 0) {
		int fd = open(tu_path("out"), O_WRONLY | O_APPEND);
		int r = kmsg_dump_write(&count, log, fd, 9);
		if (write(fds[1], &count, sizeof(count)) != sizeof(count))
			_exit(3);
		_exit(r == 0 ? 0 : 1);
	}
	/* Stop it once it is writing records (random text does not
	 * compress: the output grows with them). */
	for (;;) {
		struct stat s;
		if (stat(tu_path("out"), &s) == 0 && s.st_size > (1 << 20))
			break;
		cr_assert_eq(waitpid(child, &st, WNOHANG), 0, "the dump ended before it was stopped");
		usleep(200);
	}
	kill(child, SIGSTOP);
	append_n(log, 40000, 900);  /* several laps */
	kill(child, SIGCONT);
	cr_assert_eq(waitpid(child, &st, 0), child);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "dump failed: status %d", st);
	cr_assert_eq(read(fds[0], &count, sizeof(count)), sizeof(count));
	cr_assert_eq(kmsg_log_stat(&after, log), 0);

	p = read_file("out", &n);
	cr_assert_gt(n, sizeof(prefix) - 1);
	cr_assert_eq(memcmp(p, prefix, sizeof(prefix) - 1), 0, "what was there is kept");
	write_file("a.gz", p + sizeof(prefix) - 1, n - (sizeof(prefix) - 1));
	free(p);
	/* Every record there when the dump began was overwritten, so the
	 * dump is of a later moment: after the laps. */
	expect_consistent("a.gz", before.next_seq, after.next_seq, after.next_seq, count);
	kmsg_log_close(log);
}

struct drain { int fd; const char *path; };

static void *drain_pipe(void *arg)
{
	struct drain *d = arg;
	int out = open(d->path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	char buf[65536];
	ssize_t n;
	while ((n = read(d->fd, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(out);
	return NULL;
}

struct dumper { struct kmsg_log *log; int fd; int result; uint64_t count; };

static void *dump_thread(void *arg)
{
	struct dumper *d = arg;
	d->result = kmsg_dump_write(&d->count, d->log, d->fd, 1);
	close(d->fd);
	return NULL;
}

/* Dumps log through a pipe into the file name, as `kmsg dump | cat > name`
 * would: the dump's result and count. */
static struct dumper dump_through_pipe(struct kmsg_log *log, const char *name)
{
	struct dumper du = { log, -1, -1, 0 };
	struct drain dr = { -1, strdup(tu_path(name)) };
	pthread_t t1, t2;
	int fds[2];

	cr_assert_eq(pipe(fds), 0);
	dr.fd = fds[0];
	du.fd = fds[1];
	pthread_create(&t2, NULL, drain_pipe, &dr);
	pthread_create(&t1, NULL, dump_thread, &du);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	close(fds[0]);
	free((void *)dr.path);
	return du;
}

Test(dump, to_a_pipe)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0);
	struct dumper du;

	append_n(log, 20000, 150);
	du = dump_through_pipe(log, "p.gz");
	cr_assert_eq(du.result, 0, "%s", kmsg_strerror(du.result));
	struct kmsg_log *d = open_dump("p.gz");
	cr_assert_eq(expect_same_records(log, d), du.count);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

/*
 * A pipe cannot be wound back: a dump overtaken while it waits on a full
 * pipe fails with -EAGAIN and leaves a stream that nothing accepts.
 */
Test(dump, overtaken_on_a_pipe_is_refused, .timeout = 120)
{
	struct kmsg_log *log = tu_create("a.log", 8 << 20, 1000);
	struct dumper du = { log, -1, -1, 0 };
	struct drain dr;
	pthread_t t1, t2;
	int fds[2], queued = 0, size;

	/* text that does not compress: the dump's output fills the pipe
	 * long before its reader is through the log */
	for (int i = 0; i < 10000; i++) {
		char buf[1000];
		for (size_t k = 0; k < sizeof(buf); k++)
			buf[k] = (char)(rand() & 0xff);
		cr_assert_eq(kmsg_log_print(log, 1, 6, buf, sizeof(buf)), 0);
	}
	cr_assert_eq(pipe(fds), 0);
	size = fcntl(fds[1], F_GETPIPE_SZ);
	du.fd = fds[1];
	pthread_create(&t1, NULL, dump_thread, &du);
	/* Wait for the pipe to fill (a part-filled page of the first
	 * write counts as a full slot): the dump is then blocked mid-way. */
	for (int i = 0; i < 20000 && queued < size / 2; i++) {
		usleep(100);
		cr_assert_eq(ioctl(fds[0], FIONREAD, &queued), 0);
	}
	cr_assert_geq(queued, size / 2, "the dump did not fill the pipe");
	usleep(50000);
	append_n(log, 20000, 900);  /* turn the ring over under it */
	dr.fd = fds[0];
	dr.path = strdup(tu_path("p.gz"));
	pthread_create(&t2, NULL, drain_pipe, &dr);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	close(fds[0]);
	cr_assert_eq(du.result, -EAGAIN, "%s", kmsg_strerror(du.result));
	cr_assert_eq(try_open("p.gz"), KMSG_ECORRUPT, "a torn dump never opens");
	free((void *)dr.path);
	kmsg_log_close(log);
}

/* ---- memory ------------------------------------------------------------ */

static long maxrss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/*
 * Dumping a 64 MiB log grows the peak resident size by a few MiB at most:
 * the log's own pages are resident before (this process wrote them), so
 * the growth is what the dump allocates.
 */
Test(dump, memory_is_bounded, .timeout = 120)
{
	struct kmsg_log *log = tu_create("a.log", 64 << 20, 0), *d;
	uint64_t count = 0;
	long before, grown;
	int fd;

	append_n(log, 800000, 64);
	before = maxrss_kib();
	fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	cr_assert_eq(kmsg_dump_write(&count, log, fd, 1), 0);
	close(fd);
	grown = maxrss_kib() - before;
	cr_log_info("64 MiB log: %llu records, peak RSS grew %ld KiB",
		    (unsigned long long)count, grown);
	cr_assert_gt(count, 400000);
	cr_assert_lt(grown, 4 * 1024, "peak RSS grew by %ld KiB", grown);

	/* Opened, it is as large as the records in it, and the pages
	 * not written hold no memory. */
	cr_assert_eq(dump_to("a.gz", log, NULL, 1), 0);
	d = open_dump("a.gz");
	{
		struct stat st;
		struct kmsg_stat ks;
		cr_assert_eq(kmsg_log_stat(&ks, log), 0);
		cr_assert_eq(fstat(d->fd, &st), 0);
		cr_log_info("its dump opened: %lld bytes, %lld in memory; the log uses %llu",
			    (long long)st.st_size, (long long)st.st_blocks * 512,
			    (unsigned long long)ks.used);
		cr_assert_leq((uint64_t)st.st_size, ks.used + (64 << 10));
		cr_assert_leq((uint64_t)st.st_blocks * 512, (uint64_t)st.st_size);
	}
	cr_assert_eq(tu_count(d, NULL, NULL), count);
	kmsg_log_close(d);
	kmsg_log_close(log);
}

/*
 * stat of a dump inflates only its start: a header that puts the first
 * record far from it (a bomb could then inflate for ever) is refused.
 */
Test(dump, stat_of_a_hostile_dump_is_bounded)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0), *d;
	struct kmsg_stat st;
	unsigned char *img;
	struct kmsg_hdr_v1 *h;
	size_t n;
	int fd;

	append_n(log, 20000, 50);  /* full: the dump's data area is about 1 MiB */
	cr_assert_eq(dump_to("a.gz", log, NULL, 1), 0);
	d = open_dump("a.gz");
	n = d->map_size;
	img = malloc(n);
	memcpy(img, d->map, n);
	kmsg_log_close(d);
	h = (struct kmsg_hdr_v1 *)img;
	/* the dynamic part is not under the header's checksum */
	atomic_store(&h->d.tail, h->s.data_size * 1000);
	atomic_store(&h->d.head, h->s.data_size * 1000 - 64);  /* at the data's far end */
	gzip_file("b.gz", img, n);
	fd = open(tu_path("b.gz"), O_RDONLY);
	cr_assert_eq(kmsg_dump_stat_fd(&st, fd, NULL, 0), KMSG_ECORRUPT);
	close(fd);
	free(img);
	kmsg_log_close(log);
}

/*
 * A child that opens the log and reserves room for a record, marks it,
 * and stops itself (SIGSTOP) before it commits: an append stopped between
 * its steps, its writer alive.  Returns once it is stopped.
 */
static pid_t stop_mid_append(const char *path)
{
	pid_t pid = tu_fork();
	int st;

	if (pid == 0) {
		struct kmsg_log *w;
		struct rec_hdr *blk;
		uint64_t rpos, seq, len = rec_size(7, 0);
		unsigned prev;

		if (kmsg_log_open(&w, path, KMSG_OPEN_WRITE) || kmsg__writer_ready(w) ||
		    kmsg__ring_reserve(w, len, &blk, &rpos, &seq, &prev))
			_exit(1);
		blk->len = (uint32_t)len;
		blk->seq = seq;
		blk->boot_id = w->boot_id;
		blk->text_len = 7;
		blk->prio = 1 << 3 | 6;
		blk->owner = (uint8_t)w->owner;
		blk->prev_owner = (uint8_t)prev;
		if (kmsg__ring_mark(w, blk, rpos))
			_exit(2);
		raise(SIGSTOP);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &st, WUNTRACED), pid);
	cr_assert(WIFSTOPPED(st), "the writer did not stop: status %#x", st);
	return pid;
}

/*
 * What kmsg stat and kmsg read make of the dump name: the records stat
 * counts must be the records read shows and the numbers it reports
 * missing.  Returns the records shown; *missing gets the numbers.
 */
static uint64_t stat_and_read_agree(const char *name, uint64_t *missing)
{
	struct kmsg_stat st;
	struct kmsg_log *d = open_dump(name);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t shown = 0, gaps = 0;
	int fd = open(tu_path(name), O_RDONLY | O_CLOEXEC);

	cr_assert_geq(fd, 0);
	cr_assert_eq(kmsg_dump_stat_fd(&st, fd, NULL, 0), 0);
	close(fd);
	cr_assert_eq(kmsg_reader_new(&r, d, 0), 0);
	while (next_rec(r, &rec)) {
		gaps += rec.lost + rec.damaged;
		shown += !(rec.flags & KMSG_GAP);
	}
	kmsg_reader_free(r);
	kmsg_log_close(d);
	cr_assert_eq(st.next_seq - st.first_seq, shown + gaps,
		     "stat counts %llu records, read shows %llu and %llu missing",
		     (unsigned long long)(st.next_seq - st.first_seq),
		     (unsigned long long)shown, (unsigned long long)gaps);
	*missing = gaps;
	return shown;
}

/*
 * A dump taken while a writer is stopped between its reservation and
 * its commit: the dump waits for it a while, then ends without it, and
 * claims no record it does not hold: its count, its records and what
 * its readers report missing agree.  The stopped append the newest, in
 * a dump small enough that its header is still unwritten at the end,
 * and in one large enough that the header went out first; and with
 * records after the stopped one, whose number is then missing (a gap).
 */
Test(dump, a_writer_stopped_mid_append_is_not_counted, .timeout = 60)
{
	static const struct { uint64_t size, before, after; } cases[] = {
		{ 65536, 5, 0 }, { 65536, 5, 2 }, { 8 << 20, 30000, 0 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kmsg_log *log = tu_create("s.log", cases[i].size, 0);
		uint64_t count = 0, missing, shown;
		pid_t pid;

		append_n(log, cases[i].before, 150);
		pid = stop_mid_append(tu_path("s.log"));
		append_n(log, cases[i].after, 150);
		reopen_to_read(&log, "s.log");
		cr_assert_eq(dump_to("s.gz", log, &count, 1), 0);
		shown = stat_and_read_agree("s.gz", &missing);
		cr_assert_eq(shown, count, "case %zu: the dump says it wrote %llu", i,
			     (unsigned long long)count);
		cr_assert_eq(shown, cases[i].before + cases[i].after, "case %zu", i);
		cr_assert_eq(missing, cases[i].after ? 1 : 0, "case %zu", i);
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, NULL, 0), pid);
		kmsg_log_close(log);
		unlink(tu_path("s.log"));
	}
	/* The large one into a pipe, which cannot be wound back: the dump
	 * ends before the stopped append from its header on. */
	{
		struct kmsg_log *log = tu_create("s.log", 8 << 20, 0);
		struct dumper du;
		uint64_t missing, shown;
		pid_t pid;

		append_n(log, 30000, 150);
		pid = stop_mid_append(tu_path("s.log"));
		reopen_to_read(&log, "s.log");
		du = dump_through_pipe(log, "p.gz");
		cr_assert_eq(du.result, 0, "%s", kmsg_strerror(du.result));
		shown = stat_and_read_agree("p.gz", &missing);
		cr_assert_eq(shown, 30000, "through a pipe");
		cr_assert_eq(du.count, 30000);
		cr_assert_eq(missing, 0, "through a pipe: no number claimed past the records");
		kill(pid, SIGKILL);
		cr_assert_eq(waitpid(pid, NULL, 0), pid);
		kmsg_log_close(log);
	}
}
