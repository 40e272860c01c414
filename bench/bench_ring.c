/*
 * bench_ring.c - the cost of libkmsg's append and read paths, against an
 * O_APPEND write(2) of the same line to a plain file.
 *
 * Each figure is a median over many samples; one sample times a batch of
 * BATCH operations with CLOCK_MONOTONIC and divides, so the clock's own
 * cost (about 25 ns here) is spread over the batch.  Rings are warmed by
 * one full lap first: the figures are the steady state, not first-touch
 * page faults (reported separately as append_cold_ns_per_record).
 *
 * With two writers the figure that matters is each append's own cost while
 * another process appends at the same time (append2_ns_p50); the
 * reservation word then moves between the two cores on every append, and
 * cacheline_handoff_ns (two threads passing one cache line back and forth)
 * is what one such move costs on this machine.
 *
 * A writer stopped in the middle of an append (SIGSTOP with its block
 * reserved) costs another writer one wait, when its eviction reaches the
 * block: stopped_wait_ms is that longest append, and stopped_p99_ns the
 * other appends' p99 around it, against append_single_p99_ns, the same
 * loop with nobody stopped (each append timed on its own in both).
 *
 * Usage: kmsg-bench [--quick] [--dir DIR] [--syslog]
 * --syslog also times syslog(3) of the same message to the syslogd at
 * /dev/log (bench/run starts one in a private mount namespace).
 * The rings go in DIR, else in a directory made in $TMPDIR (or /tmp).
 * Every file the run makes is removed when it ends, however it ends
 * (done, failed, or SIGINT, SIGTERM, SIGHUP), and so is the directory if
 * it was made for the run; a DIR given keeps everything else in it.
 * The last lines are key=value figures.
 */
#define _GNU_SOURCE
#include <kmsg/kmsg.h>
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <syslog.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static int quick, with_syslog;
static char dir[1024];

/*
 * The files a run can leave in dir, as full paths made once at the start,
 * so that removing them takes nothing a signal handler may not call.
 */
static const char *const file_names[] = {
	"ring-64k.log", "ring-1m.log", "ring-64m.log", "ring-1g.log", "ring-4g.log",
	"plain.log", "two.log", "iter.log",
};
#define NFILES (sizeof(file_names) / sizeof(file_names[0]))
static char file_paths[NFILES][1100];
static int made_dir;   /* dir was made for this run: remove it too */
static pid_t owner;    /* the process that cleans up (not a forked writer) */

/* Removes whatever this run may have made; only unlink and rmdir, so a
 * signal handler may call it. */
static void remove_files(void)
{
	if (getpid() != owner)
		return;
	for (size_t i = 0; i < NFILES; i++)
		if (file_paths[i][0])
			unlink(file_paths[i]);
	if (made_dir)
		rmdir(dir);
}

static void on_signal(int sig)
{
	remove_files();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Makes sure remove_files() runs on exit() and on the usual signals. */
static void clean_up_at_exit(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa = { .sa_handler = on_signal };

	owner = getpid();
	for (size_t i = 0; i < NFILES; i++)
		snprintf(file_paths[i], sizeof(file_paths[i]), "%s/%s", dir, file_names[i]);
	atexit(remove_files);
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[n / 2];
}

static double pct(double *v, size_t n, double p)
{
	qsort(v, n, sizeof(*v), cmp_d);
	return v[(size_t)(p * (double)(n - 1))];
}

static const char msg[] = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcde\n";
#define MSG_LEN 64

static void die(const char *what, int err)
{
	fprintf(stderr, "kmsg-bench: %s: %s\n", what, kmsg_strerror(err));
	exit(1);
}

static struct kmsg_log *fresh(const char *name, uint64_t size)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;
	char path[1100];
	int r;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
	o.size = size;
	r = kmsg_log_create(&log, path, &o, 0);
	if (r)
		die(path, r);
	return log;
}

/* Per-append cost of one batch, in ns, on a warmed ring. */
static double append_batch(struct kmsg_log *log)
{
	int64_t t0 = now_ns();
	for (int i = 0; i < BATCH; i++) {
		int r = kmsg_log_print(log, 1, 6, msg, MSG_LEN - 1);
		if (r)
			die("append", r);
	}
	return (double)(now_ns() - t0) / BATCH;
}

/* Appends one lap's worth; returns ns per record (includes first-touch faults). */
static double warm(struct kmsg_log *log, uint64_t size)
{
	uint64_t n = size / 128 + 1;  /* a 63-byte message is a 128-byte record */
	int64_t t0 = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		int r = kmsg_log_print(log, 1, 6, msg, MSG_LEN - 1);
		if (r)
			die("append", r);
	}
	return (double)(now_ns() - t0) / (double)n;
}

/*
 * Per-append cost, median of batches, with a follower registered that
 * never sleeps: one busy reading, or any reader that took the follower's
 * lock to slow writers down.  A wake then finds nobody to wake.
 */
static double append_awake_follower(size_t samples)
{
	struct kmsg_log *log = fresh("follower.log", 1u << 20), *ro;
	struct kmsg_reader *r;
	char path[1100];
	double *v = malloc(samples * sizeof(double)), m;
	int rc;

	snprintf(path, sizeof(path), "%s/follower.log", dir);
	rc = kmsg_log_open(&ro, path, KMSG_OPEN_READ);
	if (rc == 0)
		rc = kmsg_reader_new(&r, ro, 0);
	if (rc == 0)
		rc = kmsg_reader_wait(r, 0) < 0 ? -1 : 0;  /* registers it */
	if (rc)
		die("a follower", rc);
	warm(log, 1u << 20);
	usleep(20 * 1000);  /* past every writer's probe for followers */
	for (size_t s = 0; s < samples; s++)
		v[s] = append_batch(log);
	m = median(v, samples);
	free(v);
	kmsg_reader_free(r);
	kmsg_log_close(ro);
	kmsg_log_close(log);
	unlink(path);
	return m;
}

static double write_p50(size_t samples)
{
	char path[1100];
	double *v = malloc(samples * sizeof(*v));
	snprintf(path, sizeof(path), "%s/plain.log", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
	if (fd < 0) {
		perror("kmsg-bench: plain.log");
		exit(1);
	}
	for (size_t s = 0; s < samples; s++) {
		int64_t t0 = now_ns();
		for (int i = 0; i < BATCH; i++)
			if (write(fd, msg, MSG_LEN) != MSG_LEN) {
				perror("kmsg-bench: write");
				exit(1);
			}
		v[s] = (double)(now_ns() - t0) / BATCH;
		if (s % 1024 == 1023 && ftruncate(fd, 0) < 0)
			break;  /* keep the file small; truncation is outside the samples */
	}
	close(fd);
	unlink(path);
	double m = median(v, samples);
	free(v);
	return m;
}

/*
 * Two processes append n records each at once.  Returns the wall time per
 * record; *p50 and *p99 are each append's own cost (batches of BATCH, as
 * above), the mean of the two writers' figures.
 */
static double append2(const char *name, uint64_t n, double *p50, double *p99)
{
	char path[1100];
	struct kmsg_log *log = fresh(name, 64u << 20);
	int go[2], res[2];
	pid_t pid[2];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	warm(log, 64u << 20);
	if (pipe(go) < 0 || pipe(res) < 0)
		exit(1);
	for (int k = 0; k < 2; k++) {
		pid[k] = fork();
		if (pid[k] == 0) {
			size_t ns = (size_t)(n / BATCH);
			double *v = malloc(ns * sizeof(*v)), fig[2];
			struct kmsg_log *l;
			char c;
			if (!v || kmsg_log_open(&l, path, KMSG_OPEN_WRITE))
				_exit(1);
			close(go[1]);
			if (read(go[0], &c, 1) < 0)  /* start together */
				_exit(1);
			for (size_t s = 0; s < ns; s++)
				v[s] = append_batch(l);
			fig[1] = pct(v, ns, 0.99);
			fig[0] = median(v, ns);
			if (write(res[1], fig, sizeof(fig)) != sizeof(fig))
				_exit(1);
			_exit(0);
		}
	}
	close(go[0]);
	close(res[1]);
	usleep(20000);
	int64_t t0 = now_ns();
	close(go[1]);
	*p50 = *p99 = 0;
	for (int k = 0; k < 2; k++) {
		double fig[2];
		if (read(res[0], fig, sizeof(fig)) != sizeof(fig)) {
			fprintf(stderr, "kmsg-bench: a writer failed\n");
			exit(1);
		}
		*p50 += fig[0] / 2;
		*p99 += fig[1] / 2;
	}
	double per = (double)(now_ns() - t0) / (double)(2 * (n / BATCH * BATCH));
	for (int k = 0; k < 2; k++) {
		int st;
		waitpid(pid[k], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			fprintf(stderr, "kmsg-bench: writer failed\n");
			exit(1);
		}
	}
	close(res[0]);
	kmsg_log_close(log);
	unlink(path);
	return per;
}

/* One cache line passed between two threads on two CPUs: ns per pass. */
static _Atomic int ball;

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);  /* best effort */
}

static void *catcher(void *arg)
{
	long rounds = (long)arg;
	pin(1);
	for (long i = 0; i < rounds; i++) {
		while (atomic_load_explicit(&ball, memory_order_acquire) != 1)
			;
		atomic_store_explicit(&ball, 0, memory_order_release);
	}
	return NULL;
}

static double handoff(long rounds)
{
	pthread_t t;
	pin(0);
	pthread_create(&t, NULL, catcher, (void *)rounds);
	int64_t t0 = now_ns();
	for (long i = 0; i < rounds; i++) {
		atomic_store_explicit(&ball, 1, memory_order_release);
		while (atomic_load_explicit(&ball, memory_order_acquire) != 0)
			;
	}
	double per = (double)(now_ns() - t0) / (double)(2 * rounds);
	pthread_join(t, NULL);
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int c = 0; c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof(all), &all);
	return per;
}

/* syslog(3) of the same message to the syslogd at /dev/log: p50 per call. */
static double syslog_p50(size_t samples)
{
	double *v = malloc(samples * sizeof(*v));
	openlog("kmsg-bench", LOG_NDELAY, LOG_USER);
	for (size_t s = 0; s < samples; s++) {
		int64_t t0 = now_ns();
		for (int i = 0; i < 8; i++)
			syslog(LOG_NOTICE, "%.*s", MSG_LEN - 1, msg);
		v[s] = (double)(now_ns() - t0) / 8;
	}
	closelog();
	double m = median(v, samples);
	free(v);
	return m;
}

/* Opening a log of this size, read-only and for writing: median us. */
static void open_times(const char *path, double *ro_us, double *rw_us)
{
	double a[31], b[31];
	for (int i = 0; i < 31; i++) {
		struct kmsg_log *l;
		int64_t t0 = now_ns();
		if (kmsg_log_open(&l, path, 0))
			die("open", -1);
		a[i] = (double)(now_ns() - t0) / 1000;
		kmsg_log_close(l);
		t0 = now_ns();
		if (kmsg_log_open(&l, path, KMSG_OPEN_WRITE))
			die("open", -1);
		b[i] = (double)(now_ns() - t0) / 1000;
		kmsg_log_close(l);
	}
	*ro_us = median(a, 31);
	*rw_us = median(b, 31);
}

/* Seeking by time to near the newest record of a full ring: median us. */
static double seek_time_near_end(struct kmsg_log *log)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;
	double v[101];

	kmsg_log_stat(&st, log);
	if (kmsg_reader_new(&r, log, 0) || kmsg_reader_seek_seq(r, st.next_seq - 100) ||
	    kmsg_reader_next(r, &rec) != 1)
		die("seek", -1);
	for (int i = 0; i < 101; i++) {
		int64_t t0 = now_ns();
		if (kmsg_reader_seek_time(r, rec.real_ns + i))
			die("seek", -1);
		v[i] = (double)(now_ns() - t0) / 1000;
	}
	kmsg_reader_free(r);
	return median(v, 101);
}

static double iterate(uint64_t n, double *seek_us)
{
	/* 1 M records of 64 bytes are 128 MiB of ring. */
	uint64_t size = ((n * 128 + n / 8) / 4096 + 64) * 4096;
	struct kmsg_log *log = fresh("iter.log", size);
	char path[1100];
	struct kmsg_reader *r;
	struct kmsg_record rec;
	double best = 1e30;

	for (uint64_t i = 0; i < n; i++)
		if (kmsg_log_print(log, 1, 6, msg, MSG_LEN - 1))
			die("append", -1);
	if (kmsg_reader_new(&r, log, 0))
		die("reader", -1);
	for (int round = 0; round < 3; round++) {
		uint64_t got = 0, sum = 0;
		kmsg_reader_seek(r, KMSG_SEEK_OLDEST);
		int64_t t0 = now_ns();
		while (kmsg_reader_next(r, &rec) == 1) {
			got++;
			sum += rec.text_len;
		}
		double per = (double)(now_ns() - t0) / (double)got;
		if (got != n || sum != n * (MSG_LEN - 1)) {
			fprintf(stderr, "kmsg-bench: read %lu of %lu records\n",
				(unsigned long)got, (unsigned long)n);
			exit(1);
		}
		if (per < best)
			best = per;
	}
	/* seeking near the end by sequence number, as follow -n and --since do */
	int64_t t0 = now_ns();
	for (int i = 0; i < 100; i++)
		kmsg_reader_seek_seq(r, n - 10 - (uint64_t)i);
	*seek_us = (double)(now_ns() - t0) / 100 / 1000;
	kmsg_reader_free(r);
	kmsg_log_close(log);
	snprintf(path, sizeof(path), "%s/iter.log", dir);
	unlink(path);
	return best;
}

/*
 * Appends n records to a warmed 1 MiB ring, timing each on its own, with
 * a writer stopped in the middle of an append (stopped) or not.  Returns
 * the longest append in ms; *p99 is the p99 of the others, in ns.
 */
static double lone_appends(int stopped, size_t n, double *p99)
{
	const char *name = stopped ? "stopped.log" : "alone.log";
	struct kmsg_log *log = fresh(name, 1u << 20);
	double *v = malloc(n * sizeof(*v)), worst = 0;
	char path[1100];
	pid_t pid = 0;
	size_t at = 0;
	int st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	warm(log, 1u << 20);
	if (stopped) {
		pid = fork();
		if (pid == 0) {
			/* W4 and W5 of an append, then stopped as by Ctrl-Z */
			struct kmsg_log *w;
			struct rec_hdr *blk;
			uint64_t rpos, seq, len = rec_size(MSG_LEN - 1, 0);
			unsigned prev;

			if (kmsg_log_open(&w, path, KMSG_OPEN_WRITE) ||
			    kmsg__ring_reserve(w, len, &blk, &rpos, &seq, &prev))
				_exit(1);
			blk->len = (uint32_t)len;
			blk->prev_owner = (uint8_t)prev;
			blk->seq = seq;
			blk->boot_id = w->boot_id;
			blk->owner = (uint8_t)w->owner;
			if (kmsg__ring_mark(w, blk, rpos))
				_exit(1);
			raise(SIGSTOP);
			_exit(0);
		}
		if (pid < 0 || waitpid(pid, &st, WUNTRACED) != pid || !WIFSTOPPED(st)) {
			fprintf(stderr, "kmsg-bench: the writer to stop did not stop\n");
			exit(1);
		}
	}
	for (size_t i = 0; i < n; i++) {
		int64_t t0 = now_ns();
		int r = kmsg_log_print(log, 1, 6, msg, MSG_LEN - 1);
		double t = (double)(now_ns() - t0);

		if (r)
			die("append beside a stopped writer", r);
		if (t > worst) {
			if (worst > 0)
				v[at++] = worst;
			worst = t;
		} else {
			v[at++] = t;
		}
	}
	*p99 = pct(v, at, 0.99);
	free(v);
	if (pid > 0) {
		kill(pid, SIGKILL);
		kill(pid, SIGCONT);
		waitpid(pid, NULL, 0);
	}
	kmsg_log_close(log);
	unlink(path);
	return worst / 1e6;
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");
	char template[1024];
	size_t samples;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--syslog"))
			with_syslog = 1;
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			snprintf(dir, sizeof(dir), "%s", argv[++i]);
		else {
			fprintf(stderr, "usage: kmsg-bench [--quick] [--dir DIR] [--syslog]\n");
			return 2;
		}
	}
	if (!dir[0]) {
		snprintf(template, sizeof(template), "%s/kmsg-bench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(template)) {
			perror("kmsg-bench: mkdtemp");
			return 1;
		}
		snprintf(dir, sizeof(dir), "%s", template);
		made_dir = 1;
	}
	clean_up_at_exit();
	samples = quick ? 2000 : 200000;

	/* ring sizes for the flatness check: 64 KiB to 4 GiB */
	const uint64_t sizes[] = { 64u << 10, 1u << 20, 64u << 20, 1u << 30, UINT64_C(4) << 30 };
	const char *names[] = { "64k", "1m", "64m", "1g", "4g" };
	enum { NSIZES = 5 };
	int nsizes = quick ? 2 : NSIZES;
	double p50[NSIZES], p99[NSIZES], cold[NSIZES], ro_us[NSIZES], rw_us[NSIZES];
	double seek_t[NSIZES];
	struct kmsg_log *rings[NSIZES];
	double *v[NSIZES];
	for (int i = 0; i < nsizes; i++) {
		char name[32];
		snprintf(name, sizeof(name), "ring-%s.log", names[i]);
		rings[i] = fresh(name, sizes[i]);
		cold[i] = warm(rings[i], sizes[i]);
		v[i] = malloc(samples * sizeof(double));
	}
	/* The sizes take turns, batch by batch, so that whatever else the
	 * machine does falls on all of them alike and the ratio holds. */
	for (size_t s = 0; s < samples; s++)
		for (int i = 0; i < nsizes; i++)
			v[i][s] = append_batch(rings[i]);
	for (int i = 0; i < nsizes; i++) {
		char path[1100];
		p99[i] = pct(v[i], samples, 0.99);
		p50[i] = median(v[i], samples);
		free(v[i]);
		seek_t[i] = seek_time_near_end(rings[i]);
		kmsg_log_close(rings[i]);
		snprintf(path, sizeof(path), "%s/ring-%s.log", dir, names[i]);
		open_times(path, &ro_us[i], &rw_us[i]);
		unlink(path);
		printf("append, %-4s ring: p50 %6.1f ns  p99 %6.1f ns  (first lap %.1f ns/record); "
		       "open %.1f us (write %.1f us); seek by time near the end %.1f us\n",
		       names[i], p50[i], p99[i], cold[i], ro_us[i], rw_us[i], seek_t[i]);
	}
	double w = write_p50(samples);
	printf("write(2) O_APPEND, 64 B: p50 %.1f ns\n", w);
	double sl = with_syslog ? syslog_p50(quick ? 500 : 20000) : 0;
	if (with_syslog)
		printf("syslog(3) to syslogd, 64 B: p50 %.1f ns\n", sl);
	double a2p50, a2p99;
	double a2 = append2("two.log", quick ? 20000 : 2000000, &a2p50, &a2p99);
	printf("append, 2 writer processes at once: p50 %.1f ns, p99 %.1f ns per append; "
	       "%.1f ns per record (wall)\n", a2p50, a2p99, a2);
	/* three laps of the 1 MiB ring: the stopped block is met once */
	double alone_p99, stop_p99, alone_max, stop_max;
	alone_max = lone_appends(0, quick ? 30000 : 3 * 16384, &alone_p99);
	stop_max = lone_appends(1, quick ? 30000 : 3 * 16384, &stop_p99);
	printf("append beside a writer stopped mid-append: the one wait %.2f ms, p99 of the "
	       "others %.1f ns (nobody stopped: longest %.2f ms, p99 %.1f ns)\n",
	       stop_max, stop_p99, alone_max, alone_p99);
	double ho = handoff(quick ? 100000 : 2000000);
	printf("one cache line passed between two CPUs: %.1f ns\n", ho);
	double seek_us;
	double it = iterate(quick ? 20000 : 1000000, &seek_us);
	printf("iterate %s records: %.1f ns per record; seek by sequence %.1f us\n",
	       quick ? "20 k" : "1 M", it, seek_us);

	double maxp = p50[0], minp = p50[0];
	for (int i = 1; i < nsizes; i++) {
		if (p50[i] > maxp) maxp = p50[i];
		if (p50[i] < minp) minp = p50[i];
	}
	/* 1 MiB is the default size: the headline figure */
	{
		double f = append_awake_follower(quick ? 200 : 20000);

		printf("append, a follower registered that never sleeps: p50 %.1f ns "
		       "(%.1fx alone)\n", f, f / p50[1]);
		printf("append_awake_follower_ns_p50=%.1f\n", f);
	}
	printf("append_ns_p50=%.1f\n", p50[1]);
	printf("append_ns_p99=%.1f\n", p99[1]);
	printf("append2_ns_p50=%.1f\n", a2p50);
	printf("append2_ns_p99=%.1f\n", a2p99);
	printf("append2_ns_per_record=%.1f\n", a2);
	printf("cacheline_handoff_ns=%.1f\n", ho);
	printf("stopped_wait_ms=%.2f\n", stop_max);
	printf("stopped_p99_ns=%.1f\n", stop_p99);
	printf("append_single_p99_ns=%.1f\n", alone_p99);
	printf("append_single_max_ms=%.2f\n", alone_max);
	printf("write_ns_p50=%.1f\n", w);
	printf("append_speedup_vs_write=%.1f\n", w / p50[1]);
	if (with_syslog) {
		printf("syslog_ns_p50=%.1f\n", sl);
		printf("append_speedup_vs_syslog=%.1f\n", sl / p50[1]);
	}
	for (int i = 0; i < nsizes; i++) {
		printf("append_ns_p50_%s=%.1f\n", names[i], p50[i]);
		printf("open_us_%s=%.1f\n", names[i], ro_us[i]);
		printf("open_write_us_%s=%.1f\n", names[i], rw_us[i]);
		printf("seek_time_us_%s=%.1f\n", names[i], seek_t[i]);
	}
	printf("append_flatness_max_over_min=%.2f\n", maxp / minp);
	printf("iterate_ns_per_record=%.1f\n", it);
	printf("seek_seq_us=%.1f\n", seek_us);
	return 0;
}
