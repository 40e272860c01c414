/*
 * test_ring.c - appending: bounds, fields, wrap-around at the exact ends
 * of the ring, explicit timestamps, clear, counters near overflow, and the
 * takeover of a lock left by a dead writer.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

TestSuite(ring, .fini = tu_cleanup);

static int next_rec(struct kmsg_reader *r, struct kmsg_record *rec)
{
	int n = kmsg_reader_next(r, rec);
	cr_assert_geq(n, 0, "reader: %s", kmsg_strerror(n));
	return n;
}

Test(ring, record_carries_what_was_appended)
{
	struct kmsg_log *log = tu_create("a.log", 65536, 0);
	struct kmsg_field f[2] = {
		{ "CODE_FILE", 0, "main.c", 6 },
		{ "ERRNO", 5, "2\n\0x", 4 },   /* values are bytes, NUL and newline too */
	};
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_field got;
	size_t pos = 0;
	uint64_t seq;
	int64_t before = tu_now_ns(CLOCK_REALTIME), bb = tu_now_ns(CLOCK_BOOTTIME);

	e.facility = 3;
	e.level = 4;
	e.text = "disk on fire";
	e.text_len = 12;
	e.fields = f;
	e.nfields = 2;
	cr_assert_eq(kmsg_log_append(&seq, log, &e), 0);
	cr_assert_eq(seq, 1);

	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 1);
	cr_assert_eq(rec.facility, 3);
	cr_assert_eq(rec.level, 4);
	cr_assert_eq(rec.text_len, 12);
	cr_assert_eq(memcmp(rec.text, "disk on fire", 12), 0);
	cr_assert_eq(rec.pid, (uint32_t)getpid());
	cr_assert_eq(rec.caller, (uint32_t)gettid());
	cr_assert_eq(rec.flags, 0);
	cr_assert(rec.real_ns >= before && rec.real_ns <= tu_now_ns(CLOCK_REALTIME));
	cr_assert(rec.boot_ns >= bb && rec.boot_ns <= tu_now_ns(CLOCK_BOOTTIME));
	cr_assert_neq(rec.boot_id, 0, "the boot id is recorded");
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 1);
	cr_assert_eq(got.key_len, 9);
	cr_assert_eq(memcmp(got.key, "CODE_FILE", 9), 0);
	cr_assert_eq(got.value_len, 6);
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 1);
	cr_assert_eq(got.value_len, 4);
	cr_assert_eq(memcmp(got.value, "2\n\0x", 4), 0);
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 0);
	cr_assert_eq(next_rec(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, too_long_text_is_refused_and_nothing_written)
{
	struct kmsg_log *log = tu_create("b.log", 65536, 100);
	char text[200];
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_stat st;

	memset(text, 'y', sizeof(text));
	e.text = text;
	e.text_len = 100;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0, "exactly the maximum is fine");
	e.text_len = 101;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_ETOOLONG);
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.next_seq, 2, "a refused record takes no sequence number");
	cr_assert_eq(tu_count(log, NULL, NULL), 1);
	kmsg_log_close(log);
}

Test(ring, key_rule_and_field_size_are_checked)
{
	struct kmsg_log *log = tu_create("k.log", 65536, 0);
	const char *bad[] = { "", "lower", "9LEAD", "_LEAD", "A-B", "A B", "Ä" };
	static char big[KMSG_MAX_FIELDS_BYTES];
	struct kmsg_field f = { "OK_KEY_1", 0, "v", 1 };
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	char longkey[KMSG_MAX_KEY + 2];

	e.text = "t";
	e.text_len = 1;
	e.fields = &f;
	e.nfields = 1;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f.key = bad[i];
		f.key_len = strlen(bad[i]);
		if (!f.key_len)
			f.key_len = 0;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD, "key '%s'", bad[i]);
	}
	memset(longkey, 'K', sizeof(longkey));
	f.key = longkey;
	f.key_len = KMSG_MAX_KEY;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0, "a 64-byte key is fine");
	f.key_len = KMSG_MAX_KEY + 1;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD);
	f.key = "BIG";
	f.key_len = 3;
	f.value = big;
	f.value_len = sizeof(big);
	cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD);
	/* Lengths that add up past SIZE_MAX: a sum that wraps would pass the
	 * size check and copy 2^64 - 3 bytes. */
	struct kmsg_field two[2] = { { "A", 1, "v", 1 }, { "B", 1, "v", SIZE_MAX - 6 } };
	e.fields = two;
	e.nfields = 2;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD);
	cr_assert_eq(tu_count(log, NULL, NULL), 2);
	kmsg_log_close(log);
}

Test(ring, priority_out_of_range_is_refused)
{
	struct kmsg_log *log = tu_create("p.log", 65536, 0);
	cr_assert_eq(kmsg_log_print(log, 24, 1, "x", 1), KMSG_EPRIO);
	cr_assert_eq(kmsg_log_print(log, -1, 1, "x", 1), KMSG_EPRIO);
	cr_assert_eq(kmsg_log_print(log, 1, 8, "x", 1), KMSG_EPRIO);
	cr_assert_eq(kmsg_log_print(log, 23, 7, "x", 1), 0);
	cr_assert_eq(kmsg_log_print(log, 0, 0, "x", 1), 0);
	kmsg_log_close(log);
}

Test(ring, explicit_timestamps_are_kept)
{
	struct kmsg_log *log = tu_create("t.log", 65536, 0);
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_reader *r;
	struct kmsg_record rec;

	e.flags = KMSG_TIMES;
	e.real_ns = INT64_C(1715513221) * 1000000000 + 123456789;
	e.boot_ns = INT64_C(5) * 1000000000 + 77;
	e.pid = 4242;
	e.text = "imported";
	e.text_len = 8;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.real_ns, e.real_ns);
	cr_assert_eq(rec.boot_ns, e.boot_ns);
	cr_assert_eq(rec.pid, 4242);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/*
 * Drives the ring through many laps with lengths chosen so that records
 * end exactly at the end of the data area, leave less than a record
 * header there (implicit wrap) and leave room for a pad, and checks that
 * every record in the ring reads back with its own text.
 */
Test(ring, wrap_at_exact_ends)
{
	for (int variant = 0; variant < 3; variant++) {
		char name[32];
		snprintf(name, sizeof(name), "w%d.log", variant);
		struct kmsg_log *log = tu_create(name, 8192, 200);
		uint64_t D = log->data_size;   /* 8192 - 384 = 7808 */
		uint64_t expect_seq = 1;
		char text[256];

		for (int i = 0; i < 2000; i++) {
			uint64_t tail = log->hdr->tail % D, room = D - tail;
			size_t len;
			if (variant == 0 && room >= REC_HDR + 8 && room - REC_HDR <= 200)
				len = room - REC_HDR;          /* fill to the exact end */
			else if (variant == 1 && room > REC_HDR + 8 + 48 && room - REC_HDR - 48 <= 200)
				len = room - REC_HDR - 48;      /* leave 48 < 64 bytes */
			else
				len = (size_t)(i * 37 % 200);
			snprintf(text, sizeof(text), "%06d", i);
			memset(text + 6, 'a' + i % 26, sizeof(text) - 6);
			struct kmsg_entry e = KMSG_ENTRY_INIT;
			e.text = text;
			e.text_len = len < 6 ? 6 : len;
			uint64_t seq;
			cr_assert_eq(kmsg_log_append(&seq, log, &e), 0);
			cr_assert_eq(seq, expect_seq++);
		}
		/* every stored record reads back, in order, with its own text */
		struct kmsg_reader *r;
		struct kmsg_record rec;
		uint64_t prev = 0;
		size_t n = 0;
		kmsg_reader_new(&r, log, 0);
		while (next_rec(r, &rec) == 1) {
			char want[7];
			snprintf(want, sizeof(want), "%06d", (int)(rec.seq - 1));
			cr_assert_eq(memcmp(rec.text, want, 6), 0, "seq %lu", (unsigned long)rec.seq);
			for (size_t k = 6; k < rec.text_len; k++)
				cr_assert_eq(rec.text[k], 'a' + (int)((rec.seq - 1) % 26));
			if (prev)
				cr_assert_eq(rec.seq, prev + 1);
			cr_assert_eq(rec.lost + rec.damaged, 0);
			prev = rec.seq;
			n++;
		}
		cr_assert_eq(prev, 2000, "the newest record is there");
		cr_assert_gt(n, 20);
		cr_assert_eq(log->hdr->damaged, 0);
		kmsg_reader_free(r);
		kmsg_log_close(log);
	}
}

Test(ring, maximum_size_records_in_tiny_and_large_rings)
{
	uint64_t sizes[] = { 4096, 64 * 1024, 64 * 1024 * 1024 };
	for (int s = 0; s < 3; s++) {
		char name[32];
		static char text[KMSG_DEFAULT_MAX_TEXT];
		snprintf(name, sizeof(name), "max%d.log", s);
		struct kmsg_log *log = tu_create(name, sizes[s], 0);
		for (int i = 0; i < 300; i++) {
			struct kmsg_entry e = KMSG_ENTRY_INIT;
			memset(text, 'A' + i % 26, sizeof(text));
			e.text = text;
			e.text_len = sizeof(text);
			cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
		}
		uint64_t first, last;
		size_t n = tu_count(log, &first, &last);
		cr_assert_eq(last, 300);
		cr_assert_eq(n, last - first + 1);
		if (s == 2)
			cr_assert_eq(n, 300, "a large ring keeps everything");
		else
			cr_assert_lt(n, 300, "a small ring evicted the oldest");
		kmsg_log_close(log);
	}
}

Test(ring, clear_moves_forward_and_never_reuses_numbers)
{
	struct kmsg_log *log = tu_create("c.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;

	for (int i = 0; i < 5; i++)
		tu_append(log, "before");
	cr_assert_eq(kmsg_log_clear(log, 6), 0);
	cr_assert_eq(kmsg_log_clear(log, 3), 0, "moving back is ignored, not an error");
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.clear_seq, 6);
	cr_assert_eq(tu_append(log, "after"), 6, "numbers continue across clear");
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_CLEARED), 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 6);
	cr_assert_eq(next_rec(r, &rec), 0);
	/* clearing beyond the newest clamps to it */
	cr_assert_eq(kmsg_log_clear(log, 1000), 0);
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.clear_seq, 7);
	cr_assert_eq(tu_count(log, NULL, NULL), 6, "clear hides, it does not delete");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, sequence_numbers_near_the_end_of_their_space)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;
	uint64_t seq;

	o.size = 65536;
	o.first_seq = UINT64_C(1) << 63;
	cr_assert_eq(kmsg_log_create(&log, tu_path("n.log"), &o, 0), 0);
	cr_assert_eq(tu_append(log, "big"), UINT64_C(1) << 63);
	/* Push the counter to the last two numbers there are. */
	atomic_store(&log->hdr->next_seq, UINT64_MAX - 2);
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
	cr_assert_eq(seq, UINT64_MAX - 2);
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
	cr_assert_eq(seq, UINT64_MAX - 1);
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), KMSG_ESEQ,
		     "the last number is never handed out, nothing wraps to 0");
	struct kmsg_reader *r;
	struct kmsg_record rec;
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, UINT64_C(1) << 63);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, UINT64_MAX - 2);
	cr_assert_eq(rec.damaged, UINT64_MAX - 2 - (UINT64_C(1) << 63) - 1,
		     "a jump in numbering is reported, not hidden");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, positions_far_into_the_64_bit_space)
{
	struct kmsg_log *log = tu_create("pos.log", 8192, 0);
	uint64_t D = log->data_size;
	/* An empty ring whose positions have run for ~2^62 bytes, not on a lap boundary. */
	uint64_t far = ((UINT64_C(1) << 62) - 5 * D) / 8 * 8 + 8 * 7;
	atomic_store(&log->hdr->head, far);
	atomic_store(&log->hdr->tail, far);
	for (int i = 0; i < 300; i++)
		tu_append(log, "far far away, far far away");
	uint64_t first, last;
	size_t n = tu_count(log, &first, &last);
	cr_assert_eq(last, 300);
	cr_assert_eq(n, last - first + 1);
	kmsg_log_close(log);
}

/* A child that registers as a writer, takes the lock, scribbles beyond the
 * tail as an append in progress would, and dies. */
static void die_holding_lock(const char *path, int commit)
{
	pid_t pid = tu_fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		struct kmsg_log *log;
		if (kmsg_log_open(&log, path, KMSG_OPEN_WRITE))
			_exit(1);
		if (commit) {
			/* Append a record, then undo W4 and W5 and die with
			 * the lock: the record is committed, not published. */
			uint64_t tail = log->hdr->tail, next = log->hdr->next_seq;
			tu_append(log, "committed by the dead");
			atomic_store(&log->hdr->lock, log->writer_id);
			atomic_store(&log->hdr->tail, tail);
			atomic_store(&log->hdr->next_seq, next);
		} else {
			atomic_store(&log->hdr->lock, log->writer_id);
			memset(log->data + log->hdr->tail % log->data_size, 0x5a, 100);
		}
		kill(getpid(), SIGKILL);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFSIGNALED(st));
}

Test(ring, lock_of_a_dead_writer_is_taken_over_quickly)
{
	struct kmsg_log *log = tu_create("d.log", 65536, 0);
	struct kmsg_stat st;
	char path[512];
	snprintf(path, sizeof(path), "%s", tu_path("d.log"));

	tu_append(log, "first");
	die_holding_lock(path, 0);
	cr_assert_neq(log->hdr->lock, 0, "the dead writer's lock is still set");
	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(tu_append(log, "second"), 2, "the half-written record took no number");
	int64_t waited = tu_now_ns(CLOCK_MONOTONIC) - t0;
	/* taken over as dead, not waited out as a live holder (1 s) */
	cr_assert_lt(waited, 900 * 1000 * 1000, "took over in %ld ns", (long)waited);
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.takeovers, 1);
	uint64_t first, last;
	cr_assert_eq(tu_count(log, &first, &last), 2);
	cr_assert_eq(log->hdr->damaged, 0);
	kmsg_log_close(log);
}

Test(ring, a_read_lock_on_a_dead_writers_byte_does_not_keep_it_alive)
{
	struct kmsg_log *log = tu_create("forged.log", 65536, 0);
	char path[512];
	snprintf(path, sizeof(path), "%s", tu_path("forged.log"));

	tu_append(log, "first");
	die_holding_lock(path, 0);
	/* Anyone who may read the log can take a read lock on the dead
	 * writer's byte, as if it were still there. */
	uint64_t dead = atomic_load(&log->hdr->lock);
	int fd = open(path, O_RDONLY);
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
			    .l_start = (off_t)(LOCK_WRITER_BASE + (dead & LOCK_WRITER_MASK)),
			    .l_len = 1 };
	cr_assert_eq(fcntl(fd, F_OFD_SETLK, &fl), 0, "%s", strerror(errno));
	uint64_t seq;
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.text = "second";
	e.text_len = 6;
	/* taken over, not waited for as live (that ends in KMSG_EBUSY) */
	cr_assert_eq(kmsg_log_append(&seq, log, &e), 0);
	cr_assert_eq(seq, 2);
	struct kmsg_stat st;
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.takeovers, 1);
	close(fd);
	kmsg_log_close(log);
}

Test(ring, committed_record_of_a_dead_writer_is_published)
{
	struct kmsg_log *log = tu_create("e.log", 65536, 0);
	char path[512];
	snprintf(path, sizeof(path), "%s", tu_path("e.log"));

	tu_append(log, "first");
	die_holding_lock(path, 1);
	cr_assert_eq(tu_count(log, NULL, NULL), 1, "not yet visible: unpublished");
	cr_assert_eq(tu_append(log, "third"), 3, "the committed record kept its number");
	struct kmsg_reader *r;
	struct kmsg_record rec;
	kmsg_reader_new(&r, log, 0);
	next_rec(r, &rec);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 2);
	cr_assert_eq(rec.text_len, strlen("committed by the dead"));
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 3);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, lock_left_by_a_previous_boot_does_not_wedge)
{
	struct kmsg_log *log = tu_create("boot.log", 65536, 0);
	/* After a reboot the lock word names a writer no process is. */
	atomic_store(&log->hdr->lock, UINT64_C(0x123456789));
	atomic_store(&log->hdr->boot_id, 1);
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path("boot.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(tu_append(log, "after reboot"), 1);
	kmsg_log_close(log);
}

Test(ring, live_writer_holding_the_lock_gives_busy_not_a_hang, .timeout = 30)
{
	struct kmsg_log *log = tu_create("l.log", 65536, 0);
	int pfd[2];
	cr_assert_eq(pipe(pfd), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *l2;
		if (kmsg_log_open(&l2, tu_path("l.log"), KMSG_OPEN_WRITE))
			_exit(1);
		atomic_store(&l2->hdr->lock, l2->writer_id);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();  /* hold it until killed */
	}
	char c;
	cr_assert_eq(read(pfd[0], &c, 1), 1);
	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(kmsg_log_print(log, 1, 6, "x", 1), KMSG_EBUSY);
	int64_t waited = tu_now_ns(CLOCK_MONOTONIC) - t0;
	/* it waited the bound; that it then gave up (no hang) the test's
	 * timeout shows, whatever the machine's load */
	cr_assert_geq(waited, 900 * 1000 * 1000, "waited %ld ns", (long)waited);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(kmsg_log_print(log, 1, 6, "x", 1), 0, "once it is dead, writing goes on");
	kmsg_log_close(log);
}

Test(ring, sync_mode_appends_and_reads_back)
{
	struct kmsg_log *log = tu_create("sync.log", 65536, 0);
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path("sync.log"), KMSG_OPEN_WRITE | KMSG_OPEN_SYNC), 0);
	for (int i = 0; i < 20; i++)
		tu_append(log, "on stable storage before append returns");
	cr_assert_eq(kmsg_log_clear(log, 5), 0);
	uint64_t first, last;
	cr_assert_eq(tu_count(log, &first, &last), 20);
	cr_assert_eq(last, 20);
	kmsg_log_close(log);
}
