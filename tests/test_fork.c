/*
 * test_fork.c - a handle used across fork(): the child's own registration
 * (a dead parent never looks alive through its child), threads of a child
 * appending at once, a follower forked off a writer's handle, a child that
 * dropped its privileges.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "testutil.h"

TestSuite(fork, .fini = tu_cleanup);

static int wait_exit(pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static int append_text(struct kmsg_log *log, const char *text, uint64_t *seq)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;

	e.text = text;
	e.text_len = strlen(text);
	return kmsg_log_append(seq, log, &e);
}

Test(fork, a_parent_dead_mid_append_is_passed_at_once_while_its_child_lives)
{
	struct kmsg_log *log = tu_create("p.log", 65536, 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	char path[512];
	int ready[2], forked[2];
	struct { pid_t child; unsigned owner; } said;

	snprintf(path, sizeof(path), "%s", tu_path("p.log"));
	tu_append(log, "first");
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(forked), 0);
	pid_t parent = tu_fork();
	if (parent == 0) {
		/* A writer that forks a child, which lives on (it never
		 * writes), and then dies in the middle of an append: its
		 * block reserved and marked, never committed. */
		struct kmsg_log *w;
		struct rec_hdr *blk;
		uint64_t rpos, seq;
		unsigned prev;

		if (kmsg_log_open(&w, path, KMSG_OPEN_WRITE) || tu_append(w, "parent") != 2)
			_exit(1);
		said.child = fork();
		if (said.child == 0) {
			/* fork() has returned here: the child handler has
			 * given the handle a description of its own */
			if (write(forked[1], "f", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		{
			char c;
			if (read(forked[0], &c, 1) != 1)
				_exit(1);
		}
		said.owner = w->owner;
		if (kmsg__ring_reserve(w, rec_size(5, 0), &blk, &rpos, &seq, &prev) != 0)
			_exit(1);
		blk->len = (uint32_t)rec_size(5, 0);
		blk->seq = seq;
		blk->owner = (uint8_t)w->owner;
		blk->boot_id = w->boot_id;
		if (kmsg__ring_mark(w, blk, rpos) != 0)
			_exit(1);
		if (write(ready[1], &said, sizeof(said)) != sizeof(said))
			_exit(1);
		kill(getpid(), SIGKILL);
	}
	cr_assert_eq(read(ready[0], &said, sizeof(said)), sizeof(said));
	cr_assert_eq(wait_exit(parent), 128 + SIGKILL);
	cr_assert_eq(kill(said.child, 0), 0, "the child lives on");
	/* The child registered under an id of its own, and its mapping no
	 * longer holds the parent's description: the parent is dead. */
	cr_assert_eq(kmsg__writer_alive(log, said.owner, kmsg_boot_id()), 0,
		     "the dead parent's lock lives on in its child");

	uint64_t seq;
	int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
	int rc = append_text(log, "after the parent", &seq);
	cr_assert_eq(rc, 0, "%s", kmsg_strerror(rc));
	cr_assert_eq(seq, 4, "number 3 went to the block the parent never finished");
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, 2);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, 4);
	cr_assert_eq(rec.lost, 1, "the unfinished append counted exactly");
	int64_t waited = tu_now_ns(CLOCK_MONOTONIC) - t0;
	kmsg_reader_free(r);
	kill(said.child, SIGKILL);
	waitpid(said.child, NULL, 0);
	cr_assert_lt(waited, 500 * 1000 * 1000, "waited %lld ns", (long long)waited);
	kmsg_log_close(log);
}

#define THREADS 4
#define EACH 2000

static struct kmsg_log *shared;

static void *appender(void *arg)
{
	char text[32];

	for (int i = 0; i < EACH; i++) {
		snprintf(text, sizeof(text), "t%ld-%d", (long)(intptr_t)arg, i);
		if (append_text(shared, text, NULL))
			return (void *)1;
	}
	return NULL;
}

Test(fork, threads_of_a_child_appending_at_once_lose_nothing, .timeout = 60)
{
	struct kmsg_log *log = tu_create("t.log", 4 << 20, 0);

	tu_append(log, "before the fork");
	pid_t pid = tu_fork();
	if (pid == 0) {
		/* the child's first appends come from several threads at once */
		pthread_t t[THREADS];
		int bad = 0;
		shared = log;
		for (long i = 0; i < THREADS; i++)
			pthread_create(&t[i], NULL, appender, (void *)i);
		for (int i = 0; i < THREADS; i++) {
			void *r;
			pthread_join(t[i], &r);
			bad |= r != NULL;
		}
		_exit(bad);
	}
	/* the parent appends meanwhile through the same handle */
	for (int i = 0; i < EACH; i++) {
		char text[32];
		snprintf(text, sizeof(text), "p-%d", i);
		cr_assert_eq(append_text(log, text, NULL), 0);
	}
	cr_assert_eq(wait_exit(pid), 0);

	/* every record there once, numbers contiguous, none overwritten */
	static char seen[THREADS + 1][EACH];
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t n = 0, last = 0;
	memset(seen, 0, sizeof(seen));
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while (kmsg_reader_next(r, &rec) == 1) {
		char text[32];
		long who;
		int i;
		cr_assert_eq(rec.lost + rec.damaged, 0);
		cr_assert(n == 0 || rec.seq == last + 1);
		last = rec.seq;
		n++;
		snprintf(text, sizeof(text), "%.*s", (int)rec.text_len, rec.text);
		if (sscanf(text, "t%ld-%d", &who, &i) == 2 && who >= 0 && who < THREADS &&
		    i >= 0 && i < EACH)
			seen[who][i]++;
		else if (sscanf(text, "p-%d", &i) == 1 && i >= 0 && i < EACH)
			seen[THREADS][i]++;
		else
			cr_assert_str_eq(text, "before the fork");
	}
	kmsg_reader_free(r);
	cr_assert_eq(n, 1 + (THREADS + 1) * EACH);
	for (int w = 0; w <= THREADS; w++)
		for (int i = 0; i < EACH; i++)
			cr_assert_eq(seen[w][i], 1, "writer %d record %d seen %d times", w, i,
				     seen[w][i]);
	kmsg_log_close(log);
}

/*
 * Waits until process pid is asleep (its state in /proc is S): a process
 * that does nothing but go to sleep is then asleep where it meant to be.
 * Bounded, for a machine however loaded.
 */
static void wait_asleep(pid_t pid)
{
	int64_t deadline = tu_now_ns(CLOCK_MONOTONIC) + INT64_C(20) * 1000000000;
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (;;) {
		FILE *f = fopen(path, "r");
		size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		const char *paren;

		if (f)
			fclose(f);
		buf[n] = 0;
		/* the name, in parentheses, may hold anything but ends at the
		 * last one */
		paren = strrchr(buf, ')');
		cr_assert(paren && paren[1] == ' ', "%s: %s", path, buf);
		if (paren[2] == 'S')
			return;
		cr_assert_lt(tu_now_ns(CLOCK_MONOTONIC), deadline, "process %d never slept",
			     (int)pid);
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

Test(fork, a_follower_forked_off_a_writers_handle_is_woken, .timeout = 30)
{
	struct kmsg_log *log = tu_create("f.log", 65536, 0);
	int ready[2], done[2];

	tu_append(log, "first");
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(done), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_reader *r;
		struct kmsg_record rec;
		int64_t t0, took;
		if (kmsg_reader_new(&r, log, 0))
			_exit(1);
		while (kmsg_reader_next(r, &rec) == 1)
			;
		/* a follower now; past the time every writer must have
		 * probed for it, after which it sleeps without a limit */
		kmsg_reader_wait(r, 200);
		if (write(ready[1], "x", 1) != 1)
			_exit(1);
		t0 = tu_now_ns(CLOCK_MONOTONIC);
		int rc = kmsg_reader_wait(r, 10000);
		took = tu_now_ns(CLOCK_MONOTONIC) - t0;
		if (write(done[1], &took, sizeof(took)) != sizeof(took))
			_exit(1);
		_exit(rc == 1 ? 0 : 2);
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	/* asleep in its wait, not about to look at the log: it must be woken */
	wait_asleep(pid);
	/* the parent's writer, probing for followers, finds the child's */
	tu_append(log, "wake up");
	int64_t took;
	cr_assert_eq(read(done[0], &took, sizeof(took)), sizeof(took));
	cr_assert_eq(wait_exit(pid), 0, "the follower was not woken");
	cr_assert_lt(took, INT64_C(2000000000), "woken after %lld ns", (long long)took);
	kmsg_log_close(log);
}

Test(fork, a_child_that_dropped_privileges_appends_through_its_handle)
{
	if (geteuid() != 0)
		cr_skip_test("needs root, to drop privileges");
	struct kmsg_log *log = tu_create("u.log", 65536, 0);
	/* root's log, which user nobody may not open */
	cr_assert_eq(chmod(tu_path("u.log"), 0600), 0);
	tu_append(log, "root's");
	pid_t pid = tu_fork();
	if (pid == 0) {
		uint64_t seq;
		if (setgid(65534) || setuid(65534))
			_exit(3);
		_exit(append_text(log, "nobody's", &seq) == 0 && seq == 2 ? 0 : 1);
	}
	cr_assert_eq(wait_exit(pid), 0);
	cr_assert_eq(tu_count(log, NULL, NULL), 2);
	kmsg_log_close(log);
}

/*
 * A program that closes every descriptor after it opened the log (a
 * daemon going to the background) and opens another file, which takes
 * the log's number: a child it forks must not map that file as the log,
 * nor write into it; it appends to the log through the mapping it has.
 */
Test(fork, a_descriptor_closed_behind_the_handle_is_not_taken_for_the_log)
{
	struct kmsg_log *log = tu_create("c.log", 65536, 0);
	static char victim[8192];
	char back[sizeof(victim)];
	int fd, vfd = -1;

	tu_append(log, "before");
	memset(victim, 'v', sizeof(victim));
	fd = log->fd;
	cr_assert_eq(close(fd), 0);
	vfd = open(tu_path("victim"), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(vfd, 0);
	if (vfd != fd) {
		cr_assert_eq(dup2(vfd, fd), fd);
		close(vfd);
	}
	cr_assert_eq(write(fd, victim, sizeof(victim)), (ssize_t)sizeof(victim));
	pid_t pid = tu_fork();
	if (pid == 0) {
		uint64_t seq;
		_exit(append_text(log, "the child's", &seq) == 0 && seq == 2 ? 0 : 1);
	}
	cr_assert_eq(wait_exit(pid), 0);
	cr_assert_eq(pread(fd, back, sizeof(back), 0), (ssize_t)sizeof(back));
	cr_assert(memcmp(back, victim, sizeof(victim)) == 0, "the other file was written");
	tu_append(log, "after");
	cr_assert_eq(tu_count(log, NULL, NULL), 3);
	close(fd);
	log->fd = open(tu_path("c.log"), O_RDONLY | O_CLOEXEC);  /* for the close */
	kmsg_log_close(log);
}

/*
 * A daemon opens the log, drops its privileges, then forks: the child may
 * no longer open the file, so it cannot have a description of its own,
 * and parent and child share one, whose locks neither can see.  Each must
 * still take the other for alive: a child stalled in the middle of an
 * append is then waited for and quarantined, not passed at once as a dead
 * writer's block, and when it goes on it cannot write over the parent's
 * newer records.
 */
Test(fork, a_daemon_that_dropped_privileges_and_forked_tells_its_child_alive, .timeout = 60)
{
	if (geteuid() != 0)
		cr_skip_test("needs root, to drop privileges");
	struct kmsg_log *log = tu_create("d.log", 16384, 0);
	cr_assert_eq(chmod(tu_path("d.log"), 0600), 0);
	kmsg_log_close(log);
	int ready[2], go[2];
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(go), 0);
	pid_t daemon = tu_fork();
	if (daemon == 0) {
		struct kmsg_log *d;
		char c = 0;
		if (kmsg_log_open(&d, tu_path("d.log"), KMSG_OPEN_WRITE) ||
		    append_text(d, "the daemon's first", NULL) || setgid(65534) || setuid(65534))
			_exit(10);
		unsigned parent_owner = d->owner;
		/* a change of credentials clears it: set again */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		pid_t child = fork();
		if (child == 0) {
			struct rec_hdr *blk;
			uint64_t rpos, seq, len = rec_size(8, 0);
			unsigned prev;
			/* gone with the daemon, however that ends: a child
			 * left waiting would hold the runner's pipes */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(21);
			close(ready[0]);
			close(go[1]);
			if (kmsg__writer_ready(d) ||
			    !kmsg__writer_alive(d, parent_owner, d->boot_id))
				_exit(11);  /* the parent taken for dead */
			if (kmsg__ring_reserve(d, len, &blk, &rpos, &seq, &prev))
				_exit(12);
			if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
				_exit(13);
			/* goes on, long after it was passed: its stores must
			 * land where nothing else is written */
			blk->len = (uint32_t)len;
			blk->seq = seq;
			blk->owner = (uint8_t)d->owner;
			blk->boot_id = d->boot_id;
			blk->prev_owner = (uint8_t)prev;
			if (kmsg__ring_mark(d, blk, rpos) == 0) {
				memset((unsigned char *)blk + REC_HDR, 'S', len - REC_HDR);
				if (kmsg__ring_commit(blk, rpos) == 0)
					_exit(14);  /* a passed block committed */
			}
			_exit(0);
		}
		close(ready[1]);
		close(go[0]);
		if (read(ready[0], &c, 1) != 1) {
			/* the child ended before it was ready: why */
			int st;
			_exit(waitpid(child, &st, 0) == child && WIFEXITED(st) ? WEXITSTATUS(st) : 15);
		}
		unsigned child_owner = (unsigned)(atomic_load(&d->dyn->resv_seq) & 0xff);
		if (!kmsg__writer_alive(d, child_owner, d->boot_id))
			_exit(16);  /* the child taken for dead */
		/* three laps past the child's block: it is waited for once,
		 * then passed and quarantined */
		for (int i = 0; i < 600; i++)
			if (append_text(d, "the daemon goes on", NULL))
				_exit(17);
		if (atomic_load(&d->aux->qactive) != 1)
			_exit(18);
		if (write(go[1], &c, 1) != 1)
			_exit(19);
		int st;
		if (waitpid(child, &st, 0) != child || !WIFEXITED(st))
			_exit(20);
		if (WEXITSTATUS(st))
			_exit(WEXITSTATUS(st));
		_exit(0);
	}
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	int status = wait_exit(daemon);
	cr_assert_eq(status, 0, "status %d (11: the child took its parent for dead; "
		     "16: the parent took its child for dead; 14: a passed block was committed)",
		     status);
	/* every record there reads back whole, none damaged */
	cr_assert_eq(kmsg_log_open(&log, tu_path("d.log"), KMSG_OPEN_READ), 0);
	struct kmsg_reader *r;
	struct kmsg_record rec;
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	uint64_t n = 0;
	while (kmsg_reader_next(r, &rec) == 1) {
		cr_assert_eq(rec.damaged, 0, "seq %llu", (unsigned long long)rec.seq);
		if (rec.flags & KMSG_GAP)
			break;
		cr_assert_eq(rec.text_len, 18);
		cr_assert_eq(memcmp(rec.text, "the daemon goes on", 18), 0);
		n++;
	}
	cr_assert_gt(n, 50);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}
