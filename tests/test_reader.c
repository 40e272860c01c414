/*
 * test_reader.c - reading without a lock: overrun readers and their lost
 * count, seeking, joining fragments per caller, waiting for new records
 * (futex wake-ups across processes, on a read-only mapping), and the
 * promise that an append makes no system call when nobody follows.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

TestSuite(reader, .fini = tu_cleanup);

static int next_rec(struct kmsg_reader *r, struct kmsg_record *rec)
{
	int n = kmsg_reader_next(r, rec);
	cr_assert_geq(n, 0, "reader: %s", kmsg_strerror(n));
	return n;
}

Test(reader, overrun_reader_is_told_exactly_how_many_it_lost)
{
	struct kmsg_log *log = tu_create("o.log", 8192, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;

	for (int i = 0; i < 10; i++)
		tu_append(log, "early");
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 1);
	cr_assert_eq(rec.lost, 0);
	/* writers lap the reader several times */
	for (int i = 0; i < 1000; i++)
		tu_append(log, "a record that pushes the reader out of the ring");
	kmsg_log_stat(&st, log);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, st.first_seq, "continues at the oldest record");
	cr_assert_eq(rec.lost, st.first_seq - 2, "lost %lu", (unsigned long)rec.lost);
	cr_assert_eq(rec.flags & KMSG_UNFINISHED, 0, "evicted unread, not unfinished");
	uint64_t n = 1;
	while (next_rec(r, &rec) == 1) {
		cr_assert_eq(rec.lost, 0);
		n++;
	}
	cr_assert_eq(n, st.next_seq - st.first_seq);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, seek_by_sequence_and_time)
{
	struct kmsg_log *log = tu_create("s.log", 1 << 20, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char text[64];

	for (int i = 1; i <= 5000; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		snprintf(text, sizeof(text), "rec %d %.*s", i, i % 40, "........................................");
		e.text = text;
		e.text_len = strlen(text);
		e.flags = KMSG_TIMES;
		e.real_ns = INT64_C(1000000000000) + (int64_t)i * 1000;
		e.boot_ns = i;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	kmsg_reader_new(&r, log, 0);
	uint64_t probes[] = { 1, 2, 777, 2500, 4999, 5000 };
	for (size_t i = 0; i < 6; i++) {
		cr_assert_eq(kmsg_reader_seek_seq(r, probes[i]), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.seq, probes[i]);
		cr_assert_eq(kmsg_reader_seek_time(r, INT64_C(1000000000000) + (int64_t)probes[i] * 1000 - 500), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		cr_assert_eq(rec.seq, probes[i], "time seek to %lu", (unsigned long)probes[i]);
	}
	cr_assert_eq(kmsg_reader_seek_seq(r, 5001), 0);
	cr_assert_eq(next_rec(r, &rec), 0, "past the newest: nothing yet");
	tu_append(log, "new");
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 5001);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_END), 0);
	cr_assert_eq(next_rec(r, &rec), 0);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_OLDEST), 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 1);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/* The numbers of the records at or after t from where a seek by time
 * puts r, or (scan) from the oldest record: as a caller filtering by time
 * sees them. */
static size_t records_since(struct kmsg_reader *r, int64_t t, int scan, uint64_t *seqs,
			    size_t max)
{
	struct kmsg_record rec;
	size_t n = 0;

	cr_assert_eq(scan ? kmsg_reader_seek(r, KMSG_SEEK_OLDEST) : kmsg_reader_seek_time(r, t), 0);
	while (next_rec(r, &rec) == 1)
		if (rec.real_ns >= t && n < max)
			seqs[n++] = rec.seq;
	return n;
}

Test(reader, seek_by_time_passes_over_nothing_where_times_go_back)
{
	struct kmsg_log *log = tu_create("t.log", 1 << 20, 0);
	struct kmsg_reader *r;
	const int64_t base = INT64_C(1700000000000000000), ms = 1000000, hour = 3600000 * ms;
	static uint64_t want[4000], got[4000];
	int64_t t = base;

	/* A clock an hour fast for a spell, then stepped back; writers that
	 * stopped 10 s between reading the clock and appending; records
	 * given old times; in order again after each. */
	for (int i = 1; i <= 3300; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		t += ms;
		e.text = "x";
		e.text_len = 1;
		e.flags = KMSG_TIMES;
		e.real_ns = i >= 1000 && i < 1200 ? t + hour
			  : i % 500 == 0 ? t - 10000 * ms
			  : i == 2500 ? base - hour : t;
		e.boot_ns = i;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	kmsg_reader_new(&r, log, 0);
	/* at, just before and just after the times of records 1, 8, 15, ... */
	for (int i = 1; i <= 3300; i += 7) {
		struct kmsg_record rec;
		cr_assert_eq(kmsg_reader_seek_seq(r, (uint64_t)i), 0);
		cr_assert_eq(next_rec(r, &rec), 1);
		for (int64_t d = -1; d <= 1; d++) {
			int64_t probe = rec.real_ns + d;
			size_t nw = records_since(r, probe, 1, want, 4000);
			size_t ng = records_since(r, probe, 0, got, 4000);
			cr_assert_eq(ng, nw, "since record %d%+lld ns: %zu records, %zu wanted",
				     i, (long long)d, ng, nw);
			cr_assert_arr_eq(got, want, nw * sizeof(want[0]));
		}
	}
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, a_lowering_whose_writer_died_is_completed_by_the_next_writer)
{
	struct kmsg_log *log = tu_create("d.log", 1 << 20, 0);
	struct kmsg_reader *r;
	const int64_t base = INT64_C(1700000000000000000), ms = 1000000, hour = 3600000 * ms;
	static uint64_t want[2000], got[2000];
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	int64_t m;

	e.text = "x";
	e.text_len = 1;
	e.flags = KMSG_TIMES;
	for (int i = 1; i <= 1000; i++) {
		e.real_ns = base + i * ms;
		e.boot_ns = i;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	/* The clock stepped back an hour; the first writer after the step
	 * lowered the mark and died before it raised the break. */
	m = atomic_load(&log->aux->wall_mark);
	cr_assert(m != 0 && !(m & MARK_PENDING), "the mark kept: %lld", (long long)m);
	atomic_store(&log->aux->wall_mark, (base - hour - 1000 * ms) | MARK_PENDING);
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(records_since(r, base + 500 * ms, 0, got, 2000), 501,
		     "a seek while the lowering is pending reads it all");
	for (int i = 1; i <= 1000; i++) {
		e.real_ns = base - hour + i * ms;
		e.boot_ns = 1000 + i;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	m = atomic_load(&log->aux->wall_mark);
	cr_assert_eq(m & MARK_PENDING, 0, "the next writer completed the lowering");
	for (int64_t probe = base - hour - 10 * ms; probe < base + 1100 * ms; probe += 7 * ms) {
		size_t nw = records_since(r, probe, 1, want, 2000);
		size_t ng = records_since(r, probe, 0, got, 2000);
		cr_assert_eq(ng, nw, "since %+lld ms: %zu records, %zu wanted",
			     (long long)((probe - base) / ms), ng, nw);
		cr_assert_arr_eq(got, want, nw * sizeof(want[0]));
		if (probe > base - hour + 1100 * ms && probe < base - 10 * ms)
			probe = base - 10 * ms;
	}
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/* Appends text for caller with flags (KMSG_FRAGMENT, KMSG_BEGIN). */
static void append_as(struct kmsg_log *log, uint32_t caller, const char *text, unsigned flags)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.caller = caller;
	e.text = text;
	e.text_len = strlen(text);
	e.flags = flags;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
}

static void frag(struct kmsg_log *log, uint32_t caller, const char *text, int more)
{
	append_as(log, caller, text, more ? KMSG_FRAGMENT : 0);
}

Test(reader, fragments_are_joined_per_caller)
{
	struct kmsg_log *log = tu_create("j.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;

	frag(log, 100, "checking disks: ", 1);
	frag(log, 200, "B says hello", 0);
	frag(log, 300, "C starts ", 1);
	frag(log, 100, "sda ", 1);
	frag(log, 300, "and C ends", 0);
	frag(log, 100, "sdb done", 0);
	frag(log, 400, "D never finishes", 1);

	/* Raw reading shows each fragment as it is. */
	cr_assert_eq(tu_count(log, NULL, NULL), 7);

	kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.text_len, strlen("B says hello"));
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.text_len, strlen("C starts and C ends"));
	cr_assert_eq(memcmp(rec.text, "C starts and C ends", rec.text_len), 0);
	cr_assert_eq(rec.seq, 3, "a joined line has its first fragment's number");
	cr_assert_eq(rec.flags, 0);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(memcmp(rec.text, "checking disks: sda sdb done", rec.text_len), 0);
	cr_assert_eq(rec.text_len, strlen("checking disks: sda sdb done"));
	cr_assert_eq(rec.seq, 1);
	cr_assert_eq(next_rec(r, &rec), 0, "D's line is held until it completes");
	kmsg_reader_flush(r, INT64_MAX);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(memcmp(rec.text, "D never finishes", rec.text_len), 0);
	cr_assert_eq(rec.flags, KMSG_FRAGMENT | KMSG_PARTIAL);
	cr_assert_eq(next_rec(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/* Appends text as this thread's own (no caller in the entry). */
static void own(struct kmsg_log *log, const char *text, int more)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.text = text;
	e.text_len = strlen(text);
	e.flags = more ? KMSG_FRAGMENT : 0;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
}

/* The next joined line is text, with flags. */
static void expect_line(struct kmsg_reader *r, const char *text, unsigned flags)
{
	struct kmsg_record rec;
	cr_assert_eq(next_rec(r, &rec), 1, "expected \"%s\"", text);
	cr_assert_eq(rec.text_len, strlen(text), "\"%.*s\" for \"%s\"", (int)rec.text_len,
		     rec.text, text);
	cr_assert_eq(memcmp(rec.text, text, rec.text_len), 0);
	cr_assert_eq(rec.flags & (KMSG_PARTIAL | KMSG_FRAGMENT), flags, "flags of \"%s\"", text);
}

Test(reader, a_line_left_open_by_a_dead_writer_is_not_continued_by_its_ids_next_owner)
{
	struct kmsg_log *log = tu_create("reuse.log", 1 << 20, 0);
	struct kmsg_reader *r;

	/* A process that had this thread's id, in this boot, died mid-line
	 * (written here under the id it had). */
	append_as(log, kmsg_caller_id((uint32_t)gettid()), "stale part ", KMSG_FRAGMENT);
	/* This thread's own lines: the first does not continue it. */
	own(log, "fresh line", 0);
	own(log, "own parts ", 1);
	own(log, "joined", 0);
	kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	expect_line(r, "stale part ", KMSG_FRAGMENT | KMSG_PARTIAL);
	expect_line(r, "fresh line", 0);
	expect_line(r, "own parts joined", 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, a_line_left_open_for_an_hour_ends_as_it_is)
{
	struct kmsg_log *log = tu_create("age.log", 1 << 20, 0);
	const int64_t min = INT64_C(60) * 1000000000;
	const struct { const char *text; int64_t at; unsigned flags; } parts[] = {
		{ "slow step... ", 0, KMSG_FRAGMENT },
		{ "done after 59 minutes", 59 * min, 0 },
		{ "a script of a reused id... ", 60 * min, KMSG_FRAGMENT },
		{ "not its end", 121 * min + 1, 0 },
	};
	struct kmsg_reader *r;

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.caller = 4242;
		e.text = parts[i].text;
		e.text_len = strlen(parts[i].text);
		e.flags = parts[i].flags | KMSG_TIMES;
		e.real_ns = INT64_C(1700000000000000000) + parts[i].at;
		e.boot_ns = 1000 + parts[i].at;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	expect_line(r, "slow step... done after 59 minutes", 0);
	expect_line(r, "a script of a reused id... ", KMSG_FRAGMENT | KMSG_PARTIAL);
	expect_line(r, "not its end", 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, a_line_of_fragments_bringing_only_fields_is_cut_into_parts)
{
	/* A writer (or a hostile file) that never ends a line and gives
	 * each part 4,000 bytes of fields made the joiner's buffer grow
	 * without end (1.5 GiB on a 512 MiB ring). */
	struct kmsg_log *log = tu_create("f.log", 4 << 20, 0);
	static char value[4000];
	struct kmsg_field f = { "BULK", 4, value, sizeof(value) };
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	size_t fields = 0, parts = 0, biggest = 0;

	memset(value, 'v', sizeof(value));
	e.flags = KMSG_FRAGMENT;
	e.caller = 77;
	e.fields = &f;
	e.nfields = 1;
	for (int i = 0; i < 500; i++)
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	cr_assert_eq(kmsg_reader_new(&r, log, KMSG_READER_JOIN), 0);
	kmsg_reader_flush(r, INT64_MAX);
	while (next_rec(r, &rec) == 1) {
		fields += rec.fields_len;
		biggest = rec.fields_len > biggest ? rec.fields_len : biggest;
		parts++;
	}
	cr_assert_leq(biggest, 65535, "a part of %zu bytes of fields", biggest);
	cr_assert_eq(fields, 500 * (2 + 5 + sizeof(value)), "every field comes once");
	cr_assert_geq(parts, 500 * (2 + 5 + sizeof(value)) / 65535);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, many_callers_mid_line_never_mix)
{
	struct kmsg_log *log = tu_create("m.log", 1 << 20, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char t[32];
	/* 100 callers, more than the joiner holds at once, three parts each */
	for (int part = 0; part < 3; part++)
		for (int c = 1; c <= 100; c++) {
			snprintf(t, sizeof(t), "%s%d", part == 0 ? "c" : "-", c);
			frag(log, (uint32_t)c, t, part < 2);
		}
	kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	kmsg_reader_flush(r, INT64_MAX);
	size_t parts = 0;
	while (next_rec(r, &rec) == 1) {
		char want[16];
		int len = snprintf(want, sizeof(want), "%u", rec.caller);
		/* every piece of text in the line belongs to its caller */
		const char *p = rec.text, *end = rec.text + rec.text_len;
		while (p < end) {
			cr_assert(*p == 'c' || *p == '-');
			p++;
			cr_assert(end - p >= len && memcmp(p, want, (size_t)len) == 0,
				  "line of caller %u: %.*s", rec.caller, (int)rec.text_len, rec.text);
			p += len;
		}
		parts++;
	}
	cr_assert_geq(parts, 100);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, read_and_clear_loses_nothing_written_meanwhile)
{
	struct kmsg_log *log = tu_create("rc.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t last = 0;

	for (int i = 0; i < 5; i++)
		tu_append(log, "x");
	kmsg_reader_new(&r, log, 0);
	kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	while (next_rec(r, &rec) == 1) {
		last = rec.seq;
		if (rec.seq == 3)
			tu_append(log, "written while reading");  /* seq 6 */
		if (rec.seq == 5)
			break;  /* the reader stops here */
	}
	kmsg_log_clear(log, last + 1);
	kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, 6, "the record written meanwhile is still there");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, wait_times_out_and_wakes_on_new_record)
{
	struct kmsg_log *log = tu_create("w.log", 65536, 0);
	struct kmsg_reader *r;
	kmsg_reader_new(&r, log, 0);
	kmsg_reader_seek(r, KMSG_SEEK_END);
	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	cr_assert_eq(kmsg_reader_wait(r, 50), 0);
	cr_assert_geq(tu_now_ns(CLOCK_MONOTONIC) - t0, 45 * 1000000);
	tu_append(log, "now");
	cr_assert_eq(kmsg_reader_wait(r, 1000), 1);
	cr_assert_eq(kmsg_reader_wait(r, 0), 1, "stays ready until read");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/*
 * A follower in another process, with only read permission, sleeps on the
 * futex; a writer process appends; the follower must see each record soon.
 * Latencies are measured from the record's own timestamp.
 */
Test(reader, follower_in_another_process_is_woken_quickly, .timeout = 60)
{
	struct kmsg_log *log = tu_create("f.log", 1 << 20, 0);
	char path[512];
	int pfd[2];
	snprintf(path, sizeof(path), "%s", tu_path("f.log"));
	cr_assert_eq(chmod(path, 0444), 0);
	cr_assert_eq(pipe(pfd), 0);

	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *ro;
		struct kmsg_reader *r;
		struct kmsg_record rec;
		int64_t worst = 0, sum = 0;
		int got = 0;
		if (kmsg_log_open(&ro, path, KMSG_OPEN_READ) || kmsg_reader_new(&r, ro, 0))
			_exit(2);
		kmsg_reader_seek(r, KMSG_SEEK_END);
		if (write(pfd[1], "r", 1) != 1)
			_exit(2);
		while (got < 200) {
			int n = kmsg_reader_wait(r, 5000);
			if (n <= 0)
				_exit(3);
			struct timespec ts;
			while (kmsg_reader_next(r, &rec) == 1) {
				clock_gettime(CLOCK_BOOTTIME, &ts);
				int64_t lat = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec - rec.boot_ns;
				if (got >= 10 && lat > worst)  /* the first ones may meet the probe interval */
					worst = lat;
				if (got >= 10)
					sum += lat;
				got++;
			}
		}
		printf("follower: 190 wake-ups, mean %ld us, worst %ld us\n",
		       (long)(sum / 190 / 1000), (long)(worst / 1000));
		/* Woken by each record, not by the 5 s timeout: bench's
		 * kmsg-latency measures how soon (microseconds). */
		_exit(worst < 1000 * 1000 * 1000 ? 0 : 4);
	}
	char c;
	cr_assert_eq(read(pfd[0], &c, 1), 1);
	for (int i = 0; i < 200; i++) {
		struct timespec ts = { 0, 2 * 1000 * 1000 };
		nanosleep(&ts, NULL);  /* let the follower fall asleep each time */
		tu_append(log, "tick");
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 0, "follower exit %d", WEXITSTATUS(st));
	kmsg_log_close(log);
}

#ifdef SYS_fcntl64
#define SYS_FCNTL SYS_fcntl64
#else
#define SYS_FCNTL SYS_fcntl
#endif
/* The low half of a system call's second argument. */
#define ARG1_LOW (offsetof(struct seccomp_data, args[1]) + \
		  (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0))

/*
 * Lets the process make no system call but exit and a writer's look for
 * followers (an F_OFD_GETLK, wake.c): any other kills it with SIGSYS.
 * (Strict mode would also forbid rdtsc, which the vDSO clocks use.)
 */
static int forbid_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 6, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 5, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_FCNTL, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG1_LOW),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, F_OFD_GETLK, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * With no follower, appends make no system call but the writer's look for
 * followers, once a FOLLOWER_PROBE_NS: the child forbids itself every
 * other call but exit, appends a burst and counts the looks (each sets
 * the next one's time).  A quiet machine runs the burst between two
 * looks; a loaded one may stretch it over a few, never more than the
 * burst's length allows.
 */
Test(reader, append_makes_no_system_call_without_followers)
{
	struct kmsg_log *log = tu_create("n.log", 1 << 20, 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		int64_t due, end;
		int looks = 0;

		tu_append(log, "warm up: probes for followers once");
		due = atomic_load(&log->next_probe_ns);
		if (forbid_syscalls() != 0)
			syscall(SYS_exit, 2);
		for (int i = 0; i < 1000; i++) {
			int64_t next = atomic_load(&log->next_probe_ns);

			if (kmsg_log_print(log, 1, 6, "quiet", 5) != 0)
				syscall(SYS_exit, 3);
			looks += atomic_load(&log->next_probe_ns) != next;
		}
		/* the appends' clock, read after the last one's */
		end = tu_now_ns(CLOCK_BOOTTIME);
		syscall(SYS_exit, looks <= (end >= due ? 1 + (end - due) / FOLLOWER_PROBE_NS : 0)
					  ? 0 : 4);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st), "killed by signal %d: an append made a system call",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_neq(WEXITSTATUS(st), 4, "looked for followers more often than once an interval");
	cr_assert_eq(WEXITSTATUS(st), 0);
	cr_assert_geq(tu_count(log, NULL, NULL), 1001);
	kmsg_log_close(log);
}

/* frag() with KMSG_BEGIN: a record that starts a new line. */
static void begin(struct kmsg_log *log, uint32_t caller, const char *text, int more)
{
	append_as(log, caller, text, KMSG_BEGIN | (more ? KMSG_FRAGMENT : 0));
}

/* The text of the next joined line, asserted to exist. */
static const char *next_text(struct kmsg_reader *r, struct kmsg_record *rec)
{
	static char buf[256];
	cr_assert_eq(next_rec(r, rec), 1, "another line");
	cr_assert_lt(rec->text_len, sizeof(buf));
	memcpy(buf, rec->text, rec->text_len);
	buf[rec->text_len] = 0;
	return buf;
}

Test(reader, a_new_line_ends_the_open_one_as_printk_does)
{
	struct kmsg_log *log = tu_create("b.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;

	/* xargs -P children of one parent, each leaving a line open */
	begin(log, 7, "x1 ", 1);
	begin(log, 7, "x2 ", 1);
	begin(log, 7, "x3 ", 1);
	/* a script: a line left open, then a plain message, then a
	 * continuation that has no line to continue */
	begin(log, 8, "checking... ", 1);
	begin(log, 8, "meanwhile", 0);
	frag(log, 8, "ok", 0);
	/* and the ordinary case still joins */
	begin(log, 9, "one ", 1);
	frag(log, 9, "two", 0);

	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	kmsg_reader_flush(r, INT64_MAX);
	cr_assert_str_eq(next_text(r, &rec), "x1 ");
	cr_assert_eq(rec.flags & KMSG_PARTIAL, KMSG_PARTIAL, "ended before its end came");
	cr_assert_str_eq(next_text(r, &rec), "x2 ");
	cr_assert_str_eq(next_text(r, &rec), "x3 ");
	cr_assert_str_eq(next_text(r, &rec), "checking... ");
	cr_assert_str_eq(next_text(r, &rec), "meanwhile");
	cr_assert_str_eq(next_text(r, &rec), "ok");
	cr_assert_str_eq(next_text(r, &rec), "one two");
	cr_assert_eq(rec.flags & KMSG_PARTIAL, 0);
	cr_assert_eq(next_rec(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, ordered_lines_come_where_they_began)
{
	struct kmsg_log *log = tu_create("ord.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t prev_ns = 0;

	frag(log, 1, "A-begins ", 1);
	frag(log, 2, "B whole", 0);
	frag(log, 3, "C-begins ", 1);
	frag(log, 1, "A-ends", 0);
	frag(log, 4, "D whole", 0);
	frag(log, 3, "C-ends", 0);

	/* Without ORDER: as they complete, the follower's view. */
	kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	cr_assert_str_eq(next_text(r, &rec), "B whole");
	cr_assert_str_eq(next_text(r, &rec), "A-begins A-ends");
	cr_assert_str_eq(next_text(r, &rec), "D whole");
	cr_assert_str_eq(next_text(r, &rec), "C-begins C-ends");
	kmsg_reader_free(r);

	/* With ORDER: where they began, so times never go backwards. */
	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	const char *want[] = { "A-begins A-ends", "B whole", "C-begins C-ends", "D whole" };
	for (int i = 0; i < 4; i++) {
		cr_assert_str_eq(next_text(r, &rec), want[i]);
		cr_assert_geq((uint64_t)rec.boot_ns, prev_ns, "time order");
		prev_ns = (uint64_t)rec.boot_ns;
	}
	cr_assert_eq(next_rec(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, an_open_line_holds_back_what_follows_and_the_clear_mark)
{
	struct kmsg_log *log = tu_create("hold.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;

	tu_append(log, "before");                  /* 1 */
	frag(log, 5, "E-long ", 1);               /* 2 */
	frag(log, 6, "F-begins ", 1);             /* 3: straddles nothing yet */
	tu_append(log, "behind both");             /* 4 */
	frag(log, 6, "F-ends", 0);                /* 5: F complete, but E still open */

	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	/* what read -c does: lines younger than the wait stay open */
	kmsg_reader_flush(r, INT64_MIN);
	cr_assert_str_eq(next_text(r, &rec), "before");
	cr_assert_eq(next_rec(r, &rec), 0, "everything after the open line waits");
	cr_assert_eq(kmsg_reader_position(r), 2, "the mark stays at the open line");

	/* the line completes later; a reader from the mark sees it whole */
	frag(log, 5, "E-ends", 0);                /* 6 */
	cr_assert_str_eq(next_text(r, &rec), "E-long E-ends");
	cr_assert_str_eq(next_text(r, &rec), "F-begins F-ends");
	cr_assert_str_eq(next_text(r, &rec), "behind both");
	cr_assert_eq(next_rec(r, &rec), 0);
	cr_assert_eq(kmsg_reader_position(r), 7);
	kmsg_reader_free(r);

	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	cr_assert_eq(kmsg_reader_seek_seq(r, 2), 0);
	cr_assert_str_eq(next_text(r, &rec), "E-long E-ends");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, an_open_line_holds_back_a_bounded_amount)
{
	struct kmsg_log *log = tu_create("bound.log", 8 << 20, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char text[1001];
	size_t n = 0;

	memset(text, 'z', 1000);
	text[1000] = 0;
	frag(log, 5, "never ends ", 1);
	for (int i = 0; i < 3000; i++)  /* 3 MB behind it */
		tu_append(log, text);
	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.flags & KMSG_PARTIAL, KMSG_PARTIAL, "given up on, in its place");
	cr_assert_eq(rec.seq, 1);
	while (next_rec(r, &rec) == 1)
		n++;
	cr_assert_eq(n, 3000);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, overtaken_before_its_first_record_says_so)
{
	struct kmsg_log *log = tu_create("first.log", 8192, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;
	uint64_t want;

	for (int i = 0; i < 20; i++)
		tu_append(log, "old");
	/* follow -n 0: from the end; writers lap it before it reads */
	kmsg_reader_new(&r, log, 0);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_END), 0);
	want = kmsg_reader_position(r);
	cr_assert_eq(want, 21);
	for (int i = 0; i < 500; i++)
		tu_append(log, "a record that pushes the reader out of the ring");
	kmsg_log_stat(&st, log);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq, st.first_seq);
	cr_assert_eq(rec.lost, st.first_seq - want, "lost %lu of the new records",
		     (unsigned long)rec.lost);
	/* the same after a seek by number (follow -n N, read from the mark) */
	cr_assert_eq(kmsg_reader_seek_seq(r, st.next_seq - 3), 0);
	for (int i = 0; i < 500; i++)
		tu_append(log, "a record that pushes the reader out of the ring");
	kmsg_log_stat(&st, log);
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.seq + 0, st.first_seq);
	cr_assert_eq(rec.lost, st.first_seq - (st.next_seq - 500 - 3));
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

Test(reader, records_missing_at_the_end_are_reported)
{
	struct kmsg_log *log = tu_create("end.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t s;

	for (int i = 0; i < 10; i++)
		s = tu_append(log, "record");
	/* the last three destroyed, as a power cut leaves a torn end: seen
	 * from the next boot (in this one, unmarked blocks could still be
	 * on their way from a live writer) */
	{
		uint64_t head = log->dyn->head, pos = head;
		for (uint64_t q = 1; q <= 7; q++)
			pos += ((struct rec_hdr *)(log->data + pos % log->data_size))->len;
		memset(log->data + pos % log->data_size, 0, log->dyn->resv_pos - pos);
		tu_pretend_reboot(log);
	}
	kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	for (int i = 0; i < 7; i++)
		cr_assert_str_eq(next_text(r, &rec), "record");
	cr_assert_eq(next_rec(r, &rec), 1);
	cr_assert_eq(rec.flags, KMSG_GAP);
	cr_assert_eq(rec.damaged, 3);
	cr_assert_eq(rec.seq, s + 1, "the number the next record gets");
	cr_assert_eq(next_rec(r, &rec), 0, "reported once");
	s = tu_append(log, "after");
	cr_assert_str_eq(next_text(r, &rec), "after");
	cr_assert_eq(rec.damaged + rec.lost, 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/*
 * A reader that opened the log cut short sees its missing end as zeros.
 * A writer that opens the log restores its size and appends where those
 * zeros are mapped: the reader cannot see those records through its
 * mapping, and must not take them for unfinished appends (a second's
 * wait, then reported lost).  It is told to open the log again at once.
 */
Test(reader, a_reader_of_a_log_cut_short_is_told_when_a_writer_restores_it)
{
	struct kmsg_log *log = tu_create("regrow.log", 65536, 0), *r_log, *w;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	const uint64_t D = log->data_size;
	char path[1024];
	int rc;

	snprintf(path, sizeof(path), "%s", tu_path("regrow.log"));
	/* resv well past the first 8 KiB of the data area */
	do
		tu_append(log, "a record to fill the ring with");
	while (atomic_load(&log->dyn->resv_pos) % D < 16384 ||
	       atomic_load(&log->dyn->resv_pos) % D > 40000);
	kmsg_log_close(log);
	cr_assert_eq(truncate(path, 8192), 0);

	cr_assert_eq(kmsg_log_open(&r_log, path, 0), 0);
	cr_assert_eq(kmsg_reader_new(&r, r_log, 0), 0);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_END), 0);
	cr_assert_eq(kmsg_log_open(&w, path, KMSG_OPEN_WRITE), 0);
	/* the writer took in what survived in the first 8 KiB and goes on
	 * from there, past it, where the reader maps zeros */
	for (int i = 0; i < 400; i++)
		tu_append(w, "written where the reader maps zeros");
	cr_assert_gt(atomic_load(&w->dyn->resv_pos) % D, 16384);

	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	int n = 0;
	while ((rc = kmsg_reader_next(r, &rec)) == 1)
		n++;
	int64_t took = tu_now_ns(CLOCK_MONOTONIC) - t0;
	cr_assert_eq(rc, KMSG_ECHANGED, "after %d records got %d (%s)", n, rc,
		     rc < 0 ? kmsg_strerror(rc) : "the end");
	cr_assert_lt(took, 500 * 1000 * 1000, "waited %lld ms", (long long)(took / 1000000));
	cr_assert_eq(kmsg_log_file_changed(r_log, path), KMSG_FILE_RESIZED);
	kmsg_reader_free(r);
	kmsg_log_close(r_log);
	kmsg_log_close(w);
}

/* Appends n records at boot, given times; returns the last one's seq. */
static uint64_t append_in_boot(struct kmsg_log *log, uint64_t boot, int n, int64_t real_ns)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	uint64_t seq = 0;

	log->boot_id = boot;  /* as a writer of that boot would be */
	e.flags = KMSG_TIMES;
	e.text = "in a boot";
	e.text_len = strlen(e.text);
	for (int i = 0; i < n; i++) {
		e.real_ns = real_ns + i;
		e.boot_ns = 1000 + i;
		cr_assert_eq(kmsg_log_append(&seq, log, &e), 0);
	}
	return seq;
}

Test(reader, boots_are_listed_newest_first_with_their_first_and_last_records)
{
	struct kmsg_log *log = tu_create("boots.log", 65536, 0);
	struct kmsg_boot b[4];
	uint64_t a_last, b_last, c_last;

	cr_assert_eq(kmsg_log_boots(b, 4, log), 0, "an empty log has no boot");
	a_last = append_in_boot(log, 0xa1, 5, 100);
	b_last = append_in_boot(log, 0xb2, 1, 200);
	c_last = append_in_boot(log, 0xc3, 7, 300);
	cr_assert_eq(kmsg_log_boots(b, 4, log), 3);
	cr_assert_eq(b[0].boot_id, 0xc3);
	cr_assert_eq(b[0].first_seq, b_last + 1);
	cr_assert_eq(b[0].last_seq, c_last);
	cr_assert_eq(b[0].first_real_ns, 300);
	cr_assert_eq(b[0].last_real_ns, 306);
	cr_assert_eq(b[1].boot_id, 0xb2);
	cr_assert_eq(b[1].first_seq, b_last);
	cr_assert_eq(b[1].last_seq, b_last, "a boot of one record");
	cr_assert_eq(b[2].boot_id, 0xa1);
	cr_assert_eq(b[2].first_seq, a_last - 4);
	cr_assert_eq(b[2].last_seq, a_last);
	cr_assert_eq(kmsg_log_boots(b, 1, log), 1, "only as many as asked for");
	cr_assert_eq(b[0].boot_id, 0xc3);
	kmsg_log_close(log);
}

Test(reader, the_oldest_boot_starts_at_the_oldest_record_left)
{
	struct kmsg_log *log = tu_create("evicted.log", 8192, 0);
	struct kmsg_boot b[4];
	uint64_t first, last;

	/* far more than the ring holds: the first boot's start is evicted */
	append_in_boot(log, 0xa1, 500, 100);
	last = append_in_boot(log, 0xb2, 20, 200);
	tu_count(log, &first, NULL);
	cr_assert_eq(kmsg_log_boots(b, 4, log), 2);
	cr_assert_eq(b[1].boot_id, 0xa1);
	cr_assert_eq(b[1].first_seq, first);
	cr_assert_eq(b[0].last_seq, last);
	cr_assert_eq(b[0].first_seq, last - 19);
	/* and when the newest boot is all there is */
	append_in_boot(log, 0xb2, 500, 300);
	cr_assert_eq(kmsg_log_boots(b, 4, log), 1);
	kmsg_log_close(log);
}

/*
 * Structs that grow (kmsg.h): a program built with a later header, whose
 * record, stat and boot structs have fields this library lacks, gets
 * every field this library knows as a program of its own version does,
 * and zeros in the rest (here filled with 0xaa first); one built with a
 * header older than the first version is refused, not written past.  The
 * later structs are this version's with fields after it, passed with
 * their size to the _sized functions as the macros of that header would.
 */
struct later_record { struct kmsg_record r; uint64_t added[3]; };
struct later_stat { struct kmsg_stat s; uint64_t added[2]; };
struct later_boot { struct kmsg_boot b; uint64_t added; };

static int all_zero(const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		if (c[i])
			return 0;
	return 1;
}

static void same_record(const struct kmsg_record *x, const struct kmsg_record *y)
{
	cr_assert(x->seq == y->seq && x->real_ns == y->real_ns && x->boot_ns == y->boot_ns &&
		  x->boot_id == y->boot_id && x->pid == y->pid && x->caller == y->caller &&
		  x->facility == y->facility && x->level == y->level && x->flags == y->flags &&
		  x->lost == y->lost && x->damaged == y->damaged && x->seq_id == y->seq_id);
	cr_assert(x->text_len == y->text_len && memcmp(x->text, y->text, x->text_len) == 0);
	cr_assert(x->fields_len == y->fields_len &&
		  (!x->fields_len || memcmp(x->fields, y->fields, x->fields_len) == 0));
}

Test(reader, a_program_of_a_later_header_gets_what_this_library_knows_and_zeros)
{
	struct kmsg_log *log = tu_create("grow.log", 1 << 16, 0);
	struct kmsg_reader *a, *b;
	struct kmsg_record rec;
	struct later_record later;
	struct kmsg_stat st;
	struct later_stat lst;
	struct kmsg_boot boot[2];
	struct later_boot lboot[2];
	struct kmsg_field f;
	const char *out1, *out2;
	struct kmsg_fmt *fmt;
	char copy[256];
	size_t pos = 0;
	int n1, n2;

	tu_append(log, "first");
	tu_append(log, "second");
	cr_assert_eq(kmsg_reader_new(&a, log, 0), 0);
	cr_assert_eq(kmsg_reader_new(&b, log, 0), 0);
	for (int i = 0; i < 2; i++) {
		memset(&later, 0xaa, sizeof(later));
		cr_assert_eq(kmsg_reader_next(a, &rec), 1);
		cr_assert_eq(kmsg_reader_next_sized(b, &later.r, sizeof(later)), 1);
		same_record(&later.r, &rec);
		cr_assert(all_zero(later.added, sizeof(later.added)));
		cr_assert_eq(kmsg_field_next_sized(&f, &later.r, sizeof(later), &pos), 0);
	}
	cr_assert_eq(kmsg_fmt_new(&fmt, NULL), 0);
	n1 = kmsg_fmt_record(&out1, fmt, &rec);
	cr_assert(n1 > 0 && (size_t)n1 < sizeof(copy));
	memcpy(copy, out1, (size_t)n1);
	kmsg_fmt_free(fmt);
	cr_assert_eq(kmsg_fmt_new(&fmt, NULL), 0);
	n2 = kmsg_fmt_record_sized(&out2, fmt, &later.r, sizeof(later));
	cr_assert(n2 == n1 && memcmp(copy, out2, (size_t)n1) == 0,
		  "a later record renders as this version's");
	kmsg_fmt_free(fmt);

	memset(&lst, 0xaa, sizeof(lst));
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(kmsg_log_stat_sized(&lst.s, sizeof(lst), log), 0);
	cr_assert(lst.s.next_seq == st.next_seq && lst.s.first_seq == st.first_seq &&
		  lst.s.seq_id == st.seq_id && lst.s.prev2_seq_id == st.prev2_seq_id &&
		  memcmp(lst.s.ring_id, st.ring_id, sizeof(st.ring_id)) == 0);
	cr_assert(all_zero(lst.added, sizeof(lst.added)));

	memset(lboot, 0xaa, sizeof(lboot));
	cr_assert_eq(kmsg_log_boots(boot, 2, log), 1);
	cr_assert_eq(kmsg_log_boots(NULL, 0, log), 0, "no room asked, none needed");
	cr_assert_eq(kmsg_log_boots_sized(&lboot[0].b, 2, sizeof(lboot[0]), log), 1);
	cr_assert(lboot[0].b.boot_id == boot[0].boot_id &&
		  lboot[0].b.first_seq == boot[0].first_seq &&
		  lboot[0].b.last_seq == boot[0].last_seq &&
		  lboot[0].b.first_real_ns == boot[0].first_real_ns &&
		  lboot[0].b.last_real_ns == boot[0].last_real_ns);
	cr_assert(all_zero(&lboot[0].added, sizeof(lboot[0].added)));
	cr_assert_eq(lboot[1].added, 0xaaaaaaaaaaaaaaaaull, "nothing past what it filled");

	/* older than the first version: refused, nothing written */
	memset(&rec, 0x55, sizeof(rec));
	cr_assert_eq(kmsg_reader_next_sized(a, &rec, offsetof(struct kmsg_record, seq_id)),
		     KMSG_EINVAL);
	cr_assert_eq(((unsigned char *)&rec)[0], 0x55);
	cr_assert_eq(kmsg_log_stat_sized(&st, 8, log), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_boots_sized(boot, 2, 8, log), KMSG_EINVAL);
	kmsg_reader_free(a);
	kmsg_reader_free(b);
	kmsg_log_close(log);
}

/* Every record of r from the oldest, as bytes to compare: number, flags,
 * gap counts, times, text and fields. */
static size_t stream_of(struct kmsg_reader *r, char *out, size_t cap, uint64_t *damaged)
{
	struct kmsg_record rec;
	size_t at = 0;

	*damaged = 0;
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_OLDEST), 0);
	while (next_rec(r, &rec) == 1) {
		int w = snprintf(out + at, cap - at, "%llu %x %llu %llu %lld %lld %zu %zu|",
				 (unsigned long long)rec.seq, rec.flags,
				 (unsigned long long)rec.lost, (unsigned long long)rec.damaged,
				 (long long)rec.real_ns, (long long)rec.boot_ns, rec.text_len,
				 rec.fields_len);
		cr_assert(w > 0 && (size_t)w + rec.text_len + rec.fields_len < cap - at);
		*damaged += rec.damaged;
		at += (size_t)w;
		memcpy(out + at, rec.text, rec.text_len);
		at += rec.text_len;
		memcpy(out + at, rec.fields, rec.fields_len);
		at += rec.fields_len;
	}
	return at;
}

/*
 * A reader copies the blocks ahead of it with pread where the end is far
 * (B1 in ring.c) and reads them from the mapping elsewhere: both ways give
 * the same records, in a ring lapped several times, with records of every
 * size (some longer than a copy), fields, pads at the laps' ends, and a
 * stretch of damage.
 */
Test(reader, copies_ahead_and_the_mapping_give_the_same_records)
{
	struct kmsg_log *log = tu_create("bulk.log", 1 << 20, 8192);
	static char text[8192], want[4 << 20], got[4 << 20];
	/* copies of these sizes, and the least share of the records each
	 * takes from them: a record longer than a copy is read from the
	 * mapping (at most 8 KiB here, most 64 to 364 bytes), and so is what
	 * lies within a copy's length of head (a quarter of the ring for
	 * the largest) */
	const uint32_t chunks[] = { 256 << 10, 4096, 1024, 200 };
	const double share[] = { 0.6, 0.9, 0.6, 0.05 };
	struct kmsg_reader *r;
	struct kmsg_stat st;
	uint64_t damaged, d, used;
	size_t n;

	for (unsigned i = 0; i < 12000; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		struct kmsg_field f = { "N", 1, text, i % 40 };
		size_t len = (i * 7919u) % (i % 50 == 0 ? 8000u : 300u);

		for (size_t k = 0; k < len; k++)
			text[k] = (char)('a' + (i + k) % 26);
		e.text = text;
		e.text_len = len;
		e.fields = &f;
		e.nfields = i % 3 == 0;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_gt(st.evicted, 0, "lapped");
	/* damage in the middle: a record's text byte flipped */
	log->data[(kmsg__ring_head(log) + (512 << 10)) % log->data_size + REC_HDR + 3] ^= 1;

	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	kmsg__reader_bulk(r, 0, 0);
	n = stream_of(r, want, sizeof(want), &damaged);
	cr_assert_gt(n, 512 << 10);
	cr_assert_eq(damaged, 1, "the flipped record is counted");
	cr_assert_eq(kmsg__reader_bulk(r, chunks[0], 0), 0, "none taken from copies");
	for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]); c++) {
		cr_assert_eq(stream_of(r, got, sizeof(got), &d), n, "copies of %u bytes", chunks[c]);
		cr_assert_eq(memcmp(got, want, n), 0, "copies of %u bytes", chunks[c]);
		used = kmsg__reader_bulk(r, c + 1 < sizeof(chunks) / sizeof(chunks[0]) ?
					     chunks[c + 1] : 256 << 10, 64 << 10);
		cr_assert_gt((double)used, share[c] * (double)(st.next_seq - st.first_seq),
			     "copies of %u bytes: %llu taken", chunks[c], (unsigned long long)used);
	}
	/* the default */
	cr_assert_eq(stream_of(r, got, sizeof(got), &d), n);
	cr_assert_eq(memcmp(got, want, n), 0);
	cr_assert_gt(kmsg__reader_bulk(r, 256 << 10, 64 << 10), 0);
	/* but not begun within 64 KiB of the end (a follower's few records) */
	cr_assert_eq(kmsg_reader_seek_seq(r, st.next_seq - 10), 0);
	for (int k = 0; k < 10; k++)
		cr_assert_eq(next_rec(r, &(struct kmsg_record){ 0 }), 1);
	cr_assert_eq(kmsg__reader_bulk(r, 0, 0), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}
