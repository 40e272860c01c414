/*
 * test_ring.c - appending: bounds, fields, wrap-around at the exact ends
 * of the ring, explicit timestamps, clear, counters near overflow; and
 * writers that die or stop in the middle of an append, with readers
 * that hold locks to get in their way.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <sys/syscall.h>
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
	cr_assert_eq(rec.caller, kmsg_caller_id((uint32_t)gettid()));
	cr_assert_eq(rec.flags, KMSG_BEGIN, "a thread's own record, continuing no line of its own, begins one");
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

/* Every length of text, with fields and without: the padding and the
 * header around them are each written where they belong, nowhere else. */
Test(ring, every_length_reads_back_exactly)
{
	struct kmsg_log *log = tu_create("len.log", 1 << 20, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char text[80];

	for (size_t n = 0; n < 2 * sizeof(text); n++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		struct kmsg_field f = { "K", 1, text, n % 13 };

		for (size_t k = 0; k < sizeof(text); k++)
			text[k] = (char)('a' + (n + k) % 26);
		/* never 0: a header word zeroed by mistake must show */
		e.facility = (int)(1 + n % (KMSG_NFACILITIES - 1));
		e.level = (int)(1 + n % 7);
		e.text = text;
		e.text_len = n % sizeof(text);
		e.fields = &f;
		e.nfields = n >= sizeof(text);
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	for (size_t n = 0; n < 2 * sizeof(text); n++) {
		struct kmsg_field f;
		size_t at = 0;

		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.facility, 1 + n % (KMSG_NFACILITIES - 1), "length %zu", n);
		cr_assert_eq(rec.level, 1 + n % 7, "length %zu", n);
		cr_assert_eq(rec.text_len, n % sizeof(text), "length %zu", n);
		for (size_t k = 0; k < rec.text_len; k++)
			cr_assert_eq(rec.text[k], (char)('a' + (n + k) % 26), "length %zu", n);
		if (n >= sizeof(text)) {
			cr_assert_eq(kmsg_field_next(&f, &rec, &at), 1);
			cr_assert_eq(f.value_len, n % 13);
		}
		cr_assert_eq(kmsg_field_next(&f, &rec, &at), 0, "length %zu", n);
		cr_assert_eq(rec.lost + rec.damaged, 0);
	}
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

Test(ring, vouched_entry_stores_underscore_keys_others_may_not)
{
	struct kmsg_log *log = tu_create("v.log", 65536, 0);
	struct kmsg_field f[2] = { { "_PID", 0, "42", 2 }, { "SYSLOG_PID", 0, "1", 1 } };
	const char *bad[] = { "_", "__PID", "_pid", "_9", "_A-B" };
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_field got;
	size_t pos = 0;

	e.text = "t";
	e.text_len = 1;
	e.fields = f;
	e.nfields = 2;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD,
		     "a writer that vouches for nothing cannot name _PID");
	e.flags = KMSG_VOUCHED;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f[0].key = bad[i];
		cr_assert_eq(kmsg_log_append(NULL, log, &e), KMSG_EFIELD, "key '%s'", bad[i]);
	}
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 1, "the vouched key reads back");
	cr_assert(got.key_len == 4 && !memcmp(got.key, "_PID", 4));
	cr_assert(got.value_len == 2 && !memcmp(got.value, "42", 2));
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 1);
	cr_assert(got.key_len == 10 && !memcmp(got.key, "SYSLOG_PID", 10));
	cr_assert_eq(kmsg_field_next(&got, &rec, &pos), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 0, "the refused ones wrote nothing");
	kmsg_reader_free(r);
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
		uint64_t D = log->data_size;   /* 8192 - 4480 = 3712 */
		uint64_t expect_seq = 1;
		char text[256];

		for (int i = 0; i < 2000; i++) {
			uint64_t tail = log->dyn->resv_pos % D, room = D - tail;
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
		cr_assert_eq(atomic_load(&log->aux->damaged), 0);
		kmsg_reader_free(r);
		kmsg_log_close(log);
	}
}

Test(ring, maximum_size_records_in_tiny_and_large_rings)
{
	uint64_t sizes[] = { KMSG_MIN_SIZE, 64 * 1024, 64 * 1024 * 1024 };
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

/*
 * Every number takes 64 bytes of positions at least, so numbers run out
 * only after positions (below): a counter pushed near the end of its
 * space in a small log is a lie, which the writer repairs, numbering on
 * from its records; nothing wraps, and no number is handed out twice.
 */
Test(ring, sequence_numbers_near_the_end_of_their_space)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;
	uint64_t seq;

	o.size = 65536;
	o.first_seq = UINT64_C(1) << 63;
	cr_assert_eq(kmsg_log_create(&log, tu_path("n.log"), &o, 0), 0);
	cr_assert_eq(tu_append(log, "big"), UINT64_C(1) << 63);
	atomic_store(&log->dyn->resv_seq, (RESV_SEQ_MAX - 2) << RESV_OWNER_BITS);
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
	cr_assert_eq(seq, (UINT64_C(1) << 63) + 1);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, UINT64_C(1) << 63);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, (UINT64_C(1) << 63) + 1);
	cr_assert_eq(rec.damaged, 0);
	cr_assert_eq(next_rec(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, positions_far_into_the_64_bit_space)
{
	struct kmsg_log *log = tu_create("pos.log", 8192, 0);
	uint64_t D = log->data_size;
	/* An empty ring whose positions have run for ~2^62 bytes, not on a lap boundary. */
	uint64_t far = (POS_LIMIT - 20 * D) / 8 * 8 + 8 * 7;
	atomic_store(&log->dyn->head, far);
	atomic_store(&log->dyn->resv_pos, far);
	for (int i = 0; i < 300; i++)
		tu_append(log, "far far away, far far away");
	uint64_t first, last;
	size_t n = tu_count(log, &first, &last);
	cr_assert_eq(last, 300);
	cr_assert_eq(n, last - first + 1);
	kmsg_log_close(log);
}

/* ---- writers that die or stop mid-append ------------------------------ */

/* How far a writer got into its append (the steps W4-W7 of ring.c). */
enum stage { RESERVED_ONLY, MARKED, COPIED, COMMITTED };

/* An append taken step by step, as the append path takes it. */
struct half {
	struct rec_hdr *blk;
	uint64_t rpos, seq, len;
	unsigned prev;
	const char *text;
	int64_t real_ns;
};

/* Takes the append in h from stage done on through stage. */
static void half_step(struct kmsg_log *w, struct half *h, enum stage done, enum stage stage)
{
	struct rec_hdr *blk = h->blk;
	size_t tl = strlen(h->text);

	if (done < MARKED && stage >= MARKED) {
		blk->len = (uint32_t)h->len;
		blk->seq = h->seq;
		blk->boot_id = w->boot_id;
		blk->real_ns = h->real_ns;
		blk->text_len = (uint16_t)tl;
		blk->prio = 1 << 3 | 6;
		blk->owner = (uint8_t)w->owner;
		blk->prev_owner = (uint8_t)h->prev;
		cr_assert_eq(kmsg__ring_mark(w, blk, h->rpos), 0);
	}
	if (done < COPIED && stage >= COPIED) {
		memcpy((unsigned char *)blk + REC_HDR, h->text, tl);
		memset((unsigned char *)blk + REC_HDR + tl, 0, h->len - REC_HDR - tl);
		blk->crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(blk, (uint32_t)h->len),
						h->seq, h->rpos, rec_lenword(blk));
	}
	if (done < COMMITTED && stage >= COMMITTED)
		cr_assert_eq(kmsg__ring_commit(blk, h->rpos), 0);
}

/* Reserves for text (stamped real_ns) and takes the append through stage. */
static void half_begin(struct kmsg_log *w, struct half *h, const char *text, int64_t real_ns,
		       enum stage stage)
{
	h->text = text;
	h->real_ns = real_ns;
	h->len = rec_size(strlen(text), 0);
	cr_assert_eq(kmsg__ring_reserve(w, h->len, &h->blk, &h->rpos, &h->seq, &h->prev), 0);
	half_step(w, h, RESERVED_ONLY, stage);
}

/*
 * In the calling process: an append stopped after stage, with the
 * record's text in a block the way the append path leaves it.  Returns
 * the block's position.
 */
static uint64_t half_append(struct kmsg_log *w, enum stage stage, const char *text,
			    struct rec_hdr **out, uint64_t *seq_out)
{
	struct half h;

	half_begin(w, &h, text, 0, stage);
	if (out)
		*out = h.blk;
	if (seq_out)
		*seq_out = h.seq;
	return h.rpos;
}

/* The first block in the ring that is marked but not committed. */
static struct rec_hdr *first_unfinished(struct kmsg_log *log)
{
	uint64_t p = atomic_load(&log->dyn->head), end = atomic_load(&log->dyn->resv_pos);

	while (p < end) {
		struct rec_hdr *b;

		p = ring_norm(log, p);
		b = ring_block(log, p % log->data_size);
		if (tag_pos(b->tag) != p)
			return NULL;
		if (tag_state(b->tag) != ST_COMMITTED)
			return b;
		p += b->len;
	}
	return NULL;
}

/* A child that opens the log, appends one record, then dies after stage. */
static void die_mid_append(const char *path, enum stage stage)
{
	pid_t pid = tu_fork();
	int st;

	if (pid == 0) {
		struct kmsg_log *w;
		if (kmsg_log_open(&w, path, KMSG_OPEN_WRITE))
			_exit(1);
		tu_append(w, "before");
		half_append(w, stage, "never finished", NULL, NULL);
		kill(getpid(), SIGKILL);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
}

Test(ring, a_writer_dead_at_any_stage_is_a_hole_passed_at_once)
{
	for (int stage = RESERVED_ONLY; stage <= COPIED; stage++) {
		char name[32];
		snprintf(name, sizeof(name), "dead%d.log", stage);
		struct kmsg_log *log = tu_create(name, 65536, 0);
		struct kmsg_reader *r;
		struct kmsg_record rec;
		struct kmsg_stat st;
		int64_t t0, took;

		tu_append(log, "first");
		die_mid_append(tu_path(name), stage);
		if (stage != RESERVED_ONLY) {
			struct rec_hdr *b = first_unfinished(log);
			cr_assert_not_null(b);
			cr_assert_eq(kmsg__writer_alive(log, b->owner, b->boot_id), 0);
		}
		/* Readers step over it (its writer is dead: at once), and
		 * the numbers go on after it. */
		t0 = tu_now_ns(CLOCK_MONOTONIC);
		cr_assert_eq(tu_append(log, "after"), 4);
		cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.seq, 2);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.seq, 4, "stage %d", stage);
		cr_assert_str_eq(rec.text[0] == 'a' ? "after" : "?", "after");
		cr_assert_eq(rec.lost, 1, "the unfinished append is counted exactly");
		cr_assert(rec.flags & KMSG_UNFINISHED, "and said to be one");
		cr_assert_eq(rec.damaged, 0);
		took = tu_now_ns(CLOCK_MONOTONIC) - t0;
		cr_assert_lt(took, 1000 * 1000 * 1000, "took %lld ns", (long long)took);
		kmsg_reader_free(r);
		/* A lap later it is passed as a hole, not waited for either. */
		for (int i = 0; i < 2000; i++)
			tu_append(log, "a lap and more of records after the dead writer's");
		kmsg_log_stat(&st, log);
		cr_assert_eq(st.holes, 1);
		cr_assert_eq(st.damaged, 0);
		cr_assert_eq(atomic_load(&log->aux->qactive), 0, "no quarantine for the dead");
		kmsg_log_close(log);
	}
}

Test(ring, a_read_lock_on_a_dead_writers_bytes_does_not_keep_it_alive)
{
	struct kmsg_log *log = tu_create("rl.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int held[2];
	char c;

	tu_append(log, "first");
	kmsg_log_close(log);
	die_mid_append(tu_path("rl.log"), MARKED);
	/* Anyone who may read the log can take read locks, over every
	 * writer's bytes at once: another process does, and holds them. */
	cr_assert_eq(pipe(held), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *ro;
		struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
				    .l_start = (off_t)LOCK_OWNER_BASE,
				    .l_len = (off_t)(LOCK_OWNER_SPAN * 256) };
		if (kmsg_log_open(&ro, tu_path("rl.log"), KMSG_OPEN_READ) ||
		    fcntl(ro->fd, F_OFD_SETLK, &fl) || write(held[1], "h", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(held[0], &c, 1), 1);
	cr_assert_eq(kmsg_log_open(&log, tu_path("rl.log"), KMSG_OPEN_READ), 0);
	struct rec_hdr *b = first_unfinished(log);
	cr_assert_not_null(b);
	cr_assert_eq(kmsg__writer_alive(log, b->owner, b->boot_id), 0,
		     "the dead writer was taken for alive");
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(next_rec(r, &rec), 1, "the hole at the end is reported");
	cr_assert_eq(rec.flags, KMSG_GAP | KMSG_UNFINISHED, "an unfinished append, said so");
	cr_assert_eq(rec.lost, 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(ring, a_reader_locking_every_writer_byte_cannot_stop_a_new_writer)
{
	struct kmsg_log *log = tu_create("blk.log", 65536, 0), *ro, *w;

	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&ro, tu_path("blk.log"), KMSG_OPEN_READ), 0);
	struct flock fl = { .l_type = F_RDLCK, .l_whence = SEEK_SET,
			    .l_start = (off_t)LOCK_WRITER_BASE, .l_len = 0 };
	cr_assert_eq(fcntl(ro->fd, F_OFD_SETLK, &fl), 0);
	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	pid_t pid = tu_fork();
	if (pid == 0) {
		/* another process: the reader's locks are not its own */
		if (kmsg_log_open(&w, tu_path("blk.log"), KMSG_OPEN_WRITE) != 0)
			_exit(1);
		for (int i = 0; i < 100; i++)
			if (tu_append(w, "written all the same") == 0)
				_exit(2);
		_exit(w->owner == OWNER_SHARED ? 0 : 3);
	}
	int st;
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	cr_assert_lt(tu_now_ns(CLOCK_MONOTONIC) - t0, 1000 * 1000 * 1000);
	kmsg_log_close(ro);
	cr_assert_eq(kmsg_log_open(&log, tu_path("blk.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(tu_count(log, NULL, NULL), 100);
	kmsg_log_close(log);
}

Test(ring, a_reservation_left_by_a_previous_boot_is_a_hole)
{
	struct kmsg_log *log = tu_create("pb.log", 65536, 0);
	struct rec_hdr *blk;

	tu_append(log, "first");
	half_append(log, MARKED, "from before the reboot", &blk, NULL);
	blk->boot_id ^= 1;  /* its writer was of another boot */
	tu_pretend_reboot(log);
	cr_assert_eq(kmsg__writer_alive(log, blk->owner, blk->boot_id), 0,
		     "a writer of another boot is dead, whatever its id");
	cr_assert_eq(tu_append(log, "after the reboot"), 3);
	uint64_t first, last;
	cr_assert_eq(tu_count(log, &first, &last), 2);
	cr_assert_eq(last, 3);
	kmsg_log_close(log);
}

/*
 * Lets the stopped writer pid go on (a byte on go_fd), which must end
 * well; then appends more laps: its late stores hit nothing, so nothing
 * is damaged and every record there reads back, numbers contiguous.
 */
static void go_on_and_check(struct kmsg_log *log, pid_t pid, int go_fd, int appends)
{
	struct kmsg_stat s;
	uint64_t first, last;
	int st;

	cr_assert_eq(write(go_fd, "g", 1), 1);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	for (int i = 0; i < appends; i++)
		tu_append(log, "after it went on");
	kmsg_log_stat(&s, log);
	cr_assert_eq(s.damaged, 0);
	size_t n = tu_count(log, &first, &last);
	cr_assert_eq(n, last - first + 1, "every record there reads back, no gap");
}

/*
 * A writer stopped with its block marked and half copied, while others
 * append more than a lap: they wait for it once, at most the bound, then
 * pass it; its stretch is not reused while it may still write there; when
 * it goes on, its commit fails, and every record of the others is intact.
 */
Test(ring, a_stopped_writer_is_passed_once_and_cannot_scribble, .timeout = 60)
{
	struct kmsg_log *log = tu_create("st.log", 16384, 0);
	int go[2], done[2];

	cr_assert_eq(pipe(go), 0);
	cr_assert_eq(pipe(done), 0);
	tu_append(log, "first");
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *w;
		struct rec_hdr *blk;
		uint64_t rpos, seq;
		char c = 0;

		if (kmsg_log_open(&w, tu_path("st.log"), KMSG_OPEN_WRITE))
			_exit(1);
		rpos = half_append(w, MARKED, "stopped", &blk, &seq);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		/* "resumed": the rest of its stores, into its own stretch */
		memset((unsigned char *)blk + REC_HDR, 'S', blk->len - REC_HDR);
		c = (char)kmsg__ring_commit(blk, rpos);
		_exit(c == 1 ? 0 : 3);  /* the commit must fail: it was passed */
	}
	char c;
	cr_assert_eq(read(done[0], &c, 1), 1);
	/* The child holds its reservation, as if stopped, from here on.
	 * (How long the others wait is kmsg-sweep's and kmsg-bench's to
	 * measure; here only that they never fail, nor hang.) */
	int64_t worst = 0;
	for (int i = 0; i < 1000; i++) {
		int64_t t0 = tu_now_ns(CLOCK_MONOTONIC), t;
		tu_append(log, "others go on while it is stopped");
		t = tu_now_ns(CLOCK_MONOTONIC) - t0;
		if (t > worst)
			worst = t;
	}
	cr_assert_lt(worst, 1000 * 1000 * 1000, "waited %lld ns", (long long)worst);
	cr_assert_eq(atomic_load(&log->aux->qactive), 1, "its stretch is quarantined");
	go_on_and_check(log, pid, go[1], 1000);
	struct kmsg_stat s;
	kmsg_log_stat(&s, log);
	cr_assert_eq(s.holes, 1);
	cr_assert_eq(atomic_load(&log->aux->qactive), 0, "released once it let go");
	kmsg_log_close(log);
}

/*
 * A writer stopped right after its reservation's compare-and-swap, before
 * it stored anything, where its large record needed a pad to the end of
 * the lap: the stretch it may still write is the pad and the record,
 * more than half the ring.  Others append laps past it: the stretch stays
 * quarantined for as long as the writer lives, so when it goes on, its
 * pad and its mark land where nothing else is, and every record of the
 * others reads back.
 */
Test(ring, a_writer_stopped_before_its_pad_keeps_its_whole_stretch_quarantined, .timeout = 60)
{
	const uint32_t big = 5000;
	struct kmsg_log *log = tu_create("padq.log", 16384, big);
	const uint64_t D = log->data_size, len = rec_size(big, 0);
	int ready[2], go[2];
	char c;

	/* appends until the rest of the lap is too short for the record
	 * and long enough for a pad of more than a sixth of the ring */
	for (;;) {
		uint64_t room = D - atomic_load(&log->dyn->resv_pos) % D;
		if (room < len && room > D / 6)
			break;
		tu_append(log, "filling the lap up to where a pad is needed");
	}
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *w;
		uint64_t pos, sw, room, seq;
		if (kmsg_log_open(&w, tu_path("padq.log"), KMSG_OPEN_WRITE) || kmsg__writer_ready(w))
			_exit(1);
		/* W3 alone: head over the committed blocks to where the
		 * reservation needs it, a ring less 64 bytes before its end */
		pos = atomic_load(&w->dyn->resv_pos);
		sw = atomic_load(&w->dyn->resv_seq);
		room = D - pos % D;
		seq = rs_seq(w, sw);
		{
			uint64_t h = atomic_load(&w->dyn->head), hs = atomic_load(&w->dyn->head_seq);
			uint64_t p = h, s = hs;

			while (p + D < pos + room + len + REC_HDR) {
				const struct rec_hdr *b = ring_block(w, p % D);

				if (D - p % D < REC_HDR) {
					p += D - p % D;
					continue;
				}
				if (b->tag != p)
					_exit(5);
				s = b->flags & REC_PAD ? b->seq : b->seq + 1;
				p += b->len;
			}
			if (p > h && !kmsg__cas128(&w->dyn->head, &h, &hs, p, s))
				_exit(5);
		}
		/* W4 alone: the pair moved past the pad and the record */
		if (!kmsg__cas128(&w->dyn->resv_pos, &pos, &sw, pos + room + len,
				  rs_make(w, seq + 1, w->owner)))
			_exit(2);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		/* goes on: its pad, then its record's mark, which finds that
		 * it was passed */
		struct rec_hdr pad, *dst = ring_block(w, pos % D);
		kmsg__rec_pad(&pad, pos, seq, (uint32_t)room, w->owner, rs_owner(sw), w->boot_id, 0);
		memcpy(dst, &pad, REC_HDR);
		struct rec_hdr *blk = ring_block(w, 0);
		memset(blk, 0, REC_HDR);
		blk->len = (uint32_t)len;
		blk->seq = seq;
		blk->owner = (uint8_t)w->owner;
		blk->boot_id = w->boot_id;
		_exit(kmsg__ring_mark(w, blk, pos + room) == 1 ? 0 : 4);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);
	for (int i = 0; i < 800; i++) {
		tu_append(log, "others go on, lap after lap");
		cr_assert(i < 50 || atomic_load(&log->aux->qactive) == 1,
			  "the stopped writer's stretch was let go after %d appends", i);
	}
	go_on_and_check(log, pid, go[1], 800);
	kmsg_log_close(log);
}

/*
 * A writer stopped after its reservation and before its mark, where the
 * next writer's record needed a pad to the end of the lap: the only thing
 * that names the stopped writer is that pad (its prev_owner and boot).
 * Others append laps past it: it is a live writer's block, waited for
 * and passed as a hole (never counted as damage from an earlier boot),
 * and when it goes on its mark finds it was passed, so it writes nothing
 * where others now are.
 */
Test(ring, a_writer_stopped_before_its_mark_is_known_by_the_pad_after_it, .timeout = 60)
{
	static char big[3001];
	const char *mine = "stopped before its mark";
	struct kmsg_log *log = tu_create("padafter.log", 16384, sizeof(big));
	const uint64_t D = log->data_size, small = rec_size(strlen(mine), 0);
	int ready[2], go[2];
	char c;

	memset(big, 'b', sizeof(big) - 1);
	/* room for the stopped writer's block, and then too little for big */
	for (;;) {
		uint64_t room = D - atomic_load(&log->dyn->resv_pos) % D;
		if (room >= small + REC_HDR && room - small < rec_size(sizeof(big) - 1, 0))
			break;
		tu_append(log, "filling");
	}
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *w;
		struct rec_hdr *blk;
		uint64_t rpos, seq;
		unsigned prev;

		if (kmsg_log_open(&w, tu_path("padafter.log"), KMSG_OPEN_WRITE) ||
		    kmsg__writer_ready(w) ||
		    kmsg__ring_reserve(w, small, &blk, &rpos, &seq, &prev) != 0)
			_exit(1);
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		memset(blk, 0, REC_HDR);
		blk->len = (uint32_t)small;
		blk->seq = seq;
		blk->owner = (uint8_t)w->owner;
		blk->prev_owner = (uint8_t)prev;
		blk->boot_id = w->boot_id;
		_exit(kmsg__ring_mark(w, blk, rpos) == 1 ? 0 : 3);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);
	uint64_t before = atomic_load(&log->dyn->resv_pos);
	tu_append(log, big);
	cr_assert_gt(atomic_load(&log->dyn->resv_pos) - before, rec_size(sizeof(big) - 1, 0),
		     "the record took a pad to the end of the lap");
	for (int i = 0; i < 800; i++)
		tu_append(log, "others go on, lap after lap");
	struct kmsg_stat s;
	kmsg_log_stat(&s, log);
	cr_assert_eq(s.damaged, 0, "a live writer's block taken for an earlier boot's");
	cr_assert_eq(s.holes, 1);
	cr_assert_eq(atomic_load(&log->aux->qactive), 1, "its block is quarantined");
	go_on_and_check(log, pid, go[1], 800);
	kmsg_log_close(log);
}

/*
 * An evictor descheduled between its last look at the head and its entry
 * in the quarantine table makes the entry from a stale look: the stretch
 * it names (here nearly the whole ring, an unmarked run up to resv as it
 * was) has been written over by later laps since.  Such an entry must
 * not keep the ring from every append: the next reservation that meets
 * it sees the later laps' blocks in it and lifts it.  The stretch starts
 * in the middle of a record of the later lap, where no tag is.
 */
Test(ring, a_quarantine_entry_made_from_a_stale_look_is_lifted_not_kept)
{
	struct kmsg_log *log = tu_create("stale.log", 65536, 0);
	const uint64_t D = log->data_size;
	struct kmsg_aux *a = log->aux;
	uint64_t pos;

	for (int i = 0; i < 3000; i++)
		tu_append(log, "three laps and more of records to write over");
	/* a position a lap behind head, 8 bytes into a block of today */
	pos = atomic_load(&log->dyn->head) - D + 8;
	atomic_store(&a->quar[0].pos, pos);
	atomic_store(&a->quar[0].len, (uint32_t)(D - 2 * REC_HDR));
	atomic_store(&a->quar[0].blocks, 40);
	atomic_store(&a->quar[0].boot, log->boot_id);
	atomic_store(&a->quar[0].owner, OWNER_SHARED);
	atomic_store(&a->quar[0].state, QUAR_ACTIVE);
	atomic_fetch_add(&a->qactive, 1);
	atomic_fetch_add(&a->qgen, 1);
	for (int i = 0; i < 3000; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = "after the stale entry";
		e.text_len = strlen(e.text);
		int r = kmsg_log_append(NULL, log, &e);
		cr_assert_eq(r, 0, "append %d: %s", i, kmsg_strerror(r));
	}
	cr_assert_eq(atomic_load(&a->qactive), 0, "the stale entry is still there");
	uint64_t first, last;
	size_t n = tu_count(log, &first, &last);
	cr_assert_eq(n, last - first + 1, "every record there reads back");
}

/*
 * A writer stopped after it stored its header but before its mark: the
 * words of that header are anything (here a timestamp that reads as the
 * tag of a block a few laps on, at the very place it lies).  Its stretch
 * stays quarantined while others append laps: only a whole block of a
 * later lap, checksum and all, proves an entry stale.
 */
Test(ring, a_stopped_writers_header_that_looks_like_a_later_block_keeps_its_quarantine,
     .timeout = 60)
{
	struct kmsg_log *log = tu_create("lookalike.log", 16384, 0);
	const uint64_t D = log->data_size;
	const char *mine = "stopped after its header";
	const uint64_t len = rec_size(strlen(mine), 0);
	int ready[2], go[2];
	char c;

	tu_append(log, "first");
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *w;
		struct rec_hdr *blk;
		uint64_t rpos, seq;
		unsigned prev;

		if (kmsg_log_open(&w, tu_path("lookalike.log"), KMSG_OPEN_WRITE) ||
		    kmsg__writer_ready(w) || kmsg__ring_reserve(w, len, &blk, &rpos, &seq, &prev))
			_exit(1);
		/* W5's header stores, not yet the mark; real_ns (bytes 24..31)
		 * is where a block at rpos + 8 would have its tag */
		blk->len = (uint32_t)len;
		blk->prev_owner = (uint8_t)prev;
		blk->seq = seq;
		blk->real_ns = (int64_t)(rpos + 8 + 5 * D);
		blk->boot_id = w->boot_id;
		blk->owner = (uint8_t)w->owner;
		if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(2);
		_exit(kmsg__ring_mark(w, blk, rpos) == 1 ? 0 : 3);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);
	for (int i = 0; i < 2000; i++) {
		tu_append(log, "others go on, lap after lap");
		cr_assert(i < 400 || atomic_load(&log->aux->qactive) == 1,
			  "the stopped writer's stretch was let go after %d appends", i);
	}
	go_on_and_check(log, pid, go[1], 400);
	kmsg_log_close(log);
}

/*
 * fcntl(2) for the library in this program: a test may act at the moment
 * a liveness test asks the kernel about a writer's lock, which is between
 * a reader's look at a block and its verdict on it.
 */
static void (*before_liveness)(void);

int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	unsigned long arg;

	va_start(ap, cmd);
	arg = va_arg(ap, unsigned long);
	va_end(ap);
	if (cmd == F_OFD_GETLK && before_liveness &&
	    ((struct flock *)arg)->l_start >= (off_t)LOCK_OWNER_BASE) {
		void (*f)(void) = before_liveness;
		before_liveness = NULL;
		f();
	}
	return (int)syscall(SYS_fcntl, fd, cmd, arg);
}

static int finish_go[2];
static pid_t finisher;

/* The writer finishes its append and exits, its lock going with it. */
static void finish_and_exit(void)
{
	int st;

	cr_assert_eq(write(finish_go[1], "g", 1), 1);
	cr_assert_eq(waitpid(finisher, &st, 0), finisher);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
}

/*
 * A reader finds a block unfinished, and before it asks whether the
 * writer lives, the writer commits it and exits (an emit that ends while
 * the reader is descheduled): the record is read, not taken for a hole.
 */
Test(ring, a_writer_that_commits_and_exits_while_a_reader_looks_is_read)
{
	for (int stage = RESERVED_ONLY; stage <= COPIED; stage++) {
		char name[32];
		snprintf(name, sizeof(name), "fin%d.log", stage);
		struct kmsg_log *log = tu_create(name, 65536, 0), *ro;
		struct kmsg_reader *r;
		struct kmsg_record rec;
		int ready[2];
		char c;

		tu_append(log, "first");
		cr_assert_eq(pipe(ready), 0);
		cr_assert_eq(pipe(finish_go), 0);
		finisher = tu_fork();
		if (finisher == 0) {
			struct kmsg_log *w;
			struct half h;

			if (kmsg_log_open(&w, tu_path(name), KMSG_OPEN_WRITE))
				_exit(1);
			half_begin(w, &h, "committed, then gone", 0, stage);
			if (write(ready[1], "r", 1) != 1 || read(finish_go[0], &c, 1) != 1)
				_exit(2);
			half_step(w, &h, stage, COMMITTED);
			_exit(0);
		}
		cr_assert_eq(read(ready[0], &c, 1), 1);
		cr_assert_eq(kmsg_log_open(&ro, tu_path(name), KMSG_OPEN_READ), 0);
		cr_assert_eq(kmsg_reader_new(&r, ro, 0), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		before_liveness = finish_and_exit;
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_null(before_liveness, "stage %d: the reader never asked", stage);
		cr_assert_eq(rec.flags & KMSG_GAP, 0, "stage %d: taken for a hole", stage);
		cr_assert_eq(rec.seq, 2);
		cr_assert_eq(rec.lost, 0);
		cr_assert_eq(rec.damaged, 0);
		cr_assert_eq(rec.text_len, strlen("committed, then gone"));
		kmsg_reader_free(r);
		kmsg_log_close(ro);
		kmsg_log_close(log);
		close(ready[0]);
		close(ready[1]);
		close(finish_go[0]);
		close(finish_go[1]);
	}
}

/*
 * A seek to a number, to the clear mark, to the oldest record or to a
 * time, while the record that answers it is still being written, and one
 * written after it is already committed: the reader starts at the one in
 * progress, reads it once it is committed, and then the next; it neither
 * skips it nor reports it as missing.  Records before the seek's key that
 * were in progress too are not shown.
 */
Test(ring, a_seek_lands_on_an_append_still_in_progress)
{
	enum { BY_SEQ, BY_CLEAR, BY_OLDEST, BY_TIME };
	const int64_t t_before = INT64_C(1000000000000), t_mid = 2 * t_before;

	for (int how = BY_SEQ; how <= BY_TIME; how++) {
		for (int stage = RESERVED_ONLY; stage <= COPIED; stage++) {
			char name[32];
			snprintf(name, sizeof(name), "seek%d%d.log", how, stage);
			struct kmsg_log *log = tu_create(name, 65536, 0), *w, *ro;
			struct kmsg_entry e = KMSG_ENTRY_INIT;
			struct kmsg_reader *r;
			struct kmsg_record rec;
			struct half early, mid;

			cr_assert_eq(kmsg_log_open(&w, tu_path(name), KMSG_OPEN_WRITE), 0);
			e.flags = KMSG_TIMES;
			e.real_ns = t_before / 2;
			e.text = "done";
			e.text_len = 4;
			if (how != BY_OLDEST)
				cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
			half_begin(w, &early, "in progress, before the key", t_before, stage);
			half_begin(log, &mid, "in progress, the key", t_mid, stage);
			e.real_ns = 3 * t_before;
			e.text = "after";
			e.text_len = 5;
			cr_assert_eq(kmsg_log_append(NULL, w, &e), 0);
			if (how == BY_CLEAR)
				cr_assert_eq(kmsg_log_clear(log, mid.seq), 0);

			cr_assert_eq(kmsg_log_open(&ro, tu_path(name), KMSG_OPEN_READ), 0);
			cr_assert_eq(kmsg_reader_new(&r, ro, 0), 0);
			switch (how) {
			case BY_SEQ:
				cr_assert_eq(kmsg_reader_seek_seq(r, mid.seq), 0);
				break;
			case BY_CLEAR:
				cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_CLEARED), 0);
				break;
			case BY_OLDEST:
				cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_OLDEST), 0);
				break;
			case BY_TIME:
				cr_assert_eq(kmsg_reader_seek_time(r, t_mid - 1), 0);
				break;
			}
			/* both finish after the seek, before the reader reads */
			half_step(w, &early, stage, COMMITTED);
			half_step(log, &mid, stage, COMMITTED);
			if (how == BY_OLDEST) {
				cr_assert_eq(next_rec(r, &rec), 1);
				cr_assert_eq(rec.seq, early.seq, "how %d stage %d", how, stage);
			}
			cr_assert_eq(next_rec(r, &rec), 1);
			cr_assert_eq(rec.seq, mid.seq, "how %d stage %d: seq %llu", how, stage,
				     (unsigned long long)rec.seq);
			cr_assert_eq(rec.lost + rec.damaged, 0, "how %d stage %d", how, stage);
			cr_assert_eq(rec.real_ns, t_mid);
			cr_assert_eq(next_rec(r, &rec), 1);
			cr_assert_eq(rec.seq, mid.seq + 1);
			cr_assert_eq(rec.lost + rec.damaged, 0);
			cr_assert_eq(next_rec(r, &rec), 0);
			kmsg_reader_free(r);
			kmsg_log_close(ro);
			kmsg_log_close(w);
			kmsg_log_close(log);
		}
	}
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
