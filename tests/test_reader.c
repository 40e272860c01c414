/*
 * test_reader.c - reading without a lock: overrun readers and their lost
 * count, seeking, joining fragments per caller, waiting for new records
 * (futex wake-ups across processes, on a read-only mapping), and the
 * promise that an append makes no system call when nobody follows.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
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

static void frag(struct kmsg_log *log, uint32_t caller, const char *text, int more)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.caller = caller;
	e.text = text;
	e.text_len = strlen(text);
	e.flags = more ? KMSG_FRAGMENT : 0;
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
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

	pid_t pid = fork();
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
		_exit(worst < 50 * 1000 * 1000 ? 0 : 4);
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

/*
 * Lets the process make no system call but exit: any other kills it with
 * SIGSYS.  (Strict mode would also forbid rdtsc, which the vDSO clocks use.)
 */
static int forbid_syscalls(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/*
 * With no follower, appends make no system call: the child forbids itself
 * every call but exit and appends a burst shorter than the follower probe
 * interval.
 */
Test(reader, append_makes_no_system_call_without_followers)
{
	struct kmsg_log *log = tu_create("n.log", 1 << 20, 0);
	pid_t pid = fork();
	if (pid == 0) {
		tu_append(log, "warm up: probes for followers once");
		if (forbid_syscalls() != 0)
			syscall(SYS_exit, 2);
		for (int i = 0; i < 1000; i++)
			if (kmsg_log_print(log, 1, 6, "quiet", 5) != 0)
				syscall(SYS_exit, 3);
		syscall(SYS_exit, 0);
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st), "killed by signal %d: an append made a system call",
		  WIFSIGNALED(st) ? WTERMSIG(st) : 0);
	cr_assert_eq(WEXITSTATUS(st), 0);
	cr_assert_geq(tu_count(log, NULL, NULL), 1001);
	kmsg_log_close(log);
}
