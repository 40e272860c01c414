/*
 * test_concurrency.c - many writers at once, in threads and in processes,
 * and writers SIGKILLed at random moments while others go on.  Real
 * processes and real signals; the checks are what a reader of the log
 * would notice: every record intact, numbers contiguous, each writer's
 * records a gap-free run, nobody kept waiting past the bound.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

TestSuite(concurrency, .fini = tu_cleanup);

/* Text of writer w's i-th record: a header and a filler derived from both,
 * so that any byte out of place shows. */
static size_t make_text(char *buf, size_t cap, unsigned w, unsigned inc, unsigned i)
{
	int n = snprintf(buf, cap, "w%u.%u #%u ", w, inc, i);
	size_t fill = (i * 7 + w) % 90;
	for (size_t k = 0; k < fill && (size_t)n + k < cap; k++)
		buf[n + k] = (char)('a' + (i + w + k) % 26);
	return (size_t)n + fill;
}

static int parse_text(const struct kmsg_record *rec, unsigned *w, unsigned *inc, unsigned *i)
{
	char buf[200], want[200];
	size_t len = rec->text_len < sizeof(buf) - 1 ? rec->text_len : sizeof(buf) - 1;
	memcpy(buf, rec->text, len);
	buf[len] = 0;
	if (sscanf(buf, "w%u.%u #%u ", w, inc, i) != 3)
		return 0;
	return make_text(want, sizeof(want), *w, *inc, *i) == rec->text_len &&
	       memcmp(want, rec->text, rec->text_len) == 0;
}

struct run { unsigned inc; unsigned last; int seen; };

/*
 * Reads the whole log and checks: records intact and well-formed, numbers
 * contiguous but for holes (appends whose writer was killed after it had
 * reserved), each reported exactly as lost, at most max_holes of them;
 * each (writer, incarnation) a gap-free ascending run.  Returns the
 * number of records checked.
 */
static size_t check_log_holes(struct kmsg_log *log, unsigned writers, unsigned max_inc,
			      uint64_t max_holes)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct run *runs = calloc((size_t)writers * max_inc, sizeof(*runs));
	uint64_t prev = 0, holes = 0;
	size_t n = 0;
	int rc;

	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		unsigned w, inc, i;
		cr_assert_eq(rec.damaged, 0, "seq %lu: damaged records before it", (unsigned long)rec.seq);
		if (prev)
			cr_assert_eq(rec.seq, prev + 1 + rec.lost, "numbers contiguous but for holes");
		holes += prev ? rec.lost : 0;
		if (rec.flags & KMSG_GAP)
			break;
		prev = rec.seq;
		cr_assert(parse_text(&rec, &w, &inc, &i), "seq %lu: text is exact: %.*s",
			  (unsigned long)rec.seq, (int)rec.text_len, rec.text);
		cr_assert(w < writers && inc < max_inc);
		struct run *ru = &runs[w * max_inc + inc];
		if (ru->seen)
			cr_assert_eq(i, ru->last + 1, "writer %u.%u: gap-free run (%u after %u)",
				     w, inc, i, ru->last);
		ru->seen = 1;
		ru->last = i;
		n++;
	}
	cr_assert_geq(rc, 0);
	cr_assert_eq(atomic_load(&log->aux->damaged), 0);
	cr_assert_leq(holes, max_holes, "%llu holes", (unsigned long long)holes);
	kmsg_reader_free(r);
	free(runs);
	return n;
}

static size_t check_log(struct kmsg_log *log, unsigned writers, unsigned max_inc)
{
	return check_log_holes(log, writers, max_inc, 0);
}

struct thread_arg { struct kmsg_log *log; unsigned w; unsigned count; };

static void *thread_writer(void *p)
{
	struct thread_arg *a = p;
	char text[200];
	for (unsigned i = 0; i < a->count; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = make_text(text, sizeof(text), a->w, 0, i);
		if (kmsg_log_append(NULL, a->log, &e) != 0)
			return (void *)1;
	}
	return NULL;
}

Test(concurrency, threads_share_one_handle)
{
	struct kmsg_log *log = tu_create("t.log", 32 << 20, 0);
	pthread_t t[4];
	struct thread_arg a[4];
	for (unsigned k = 0; k < 4; k++) {
		a[k] = (struct thread_arg){ log, k, 20000 };
		pthread_create(&t[k], NULL, thread_writer, &a[k]);
	}
	for (unsigned k = 0; k < 4; k++) {
		void *ret;
		pthread_join(t[k], &ret);
		cr_assert_null(ret);
	}
	cr_assert_eq(check_log(log, 4, 1), 80000, "all records kept");
	kmsg_log_close(log);
}

/* A process of its own that opens path and appends writer w's count
 * records (thread_writer); exits 0 when all were appended. */
static pid_t fork_writer(const char *path, unsigned w, unsigned count)
{
	pid_t pid = tu_fork();

	if (pid == 0) {
		struct kmsg_log *l;
		if (kmsg_log_open(&l, path, KMSG_OPEN_WRITE))
			_exit(1);
		struct thread_arg a = { l, w, count };
		_exit(thread_writer(&a) ? 1 : 0);
	}
	return pid;
}

Test(concurrency, processes_with_their_own_mappings)
{
	struct kmsg_log *log = tu_create("p.log", 32 << 20, 0);
	char path[512];
	pid_t pid[4];
	snprintf(path, sizeof(path), "%s", tu_path("p.log"));
	for (unsigned k = 0; k < 4; k++)
		pid[k] = fork_writer(path, k, 20000);
	for (unsigned k = 0; k < 4; k++) {
		int st;
		waitpid(pid[k], &st, 0);
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	cr_assert_eq(check_log(log, 4, 1), 80000);
	struct kmsg_stat st;
	kmsg_log_stat(&st, log);
	cr_assert_eq(st.next_seq, 80001);
	kmsg_log_close(log);
}

#define KW 4          /* writer slots */
#define MAX_INC 4096  /* incarnations per slot */

struct shared {
	_Atomic int64_t max_wait_ns;   /* longest single append seen */
	_Atomic uint64_t appends;
};

static void kill_writer(const char *path, unsigned w, unsigned inc, struct shared *sh)
{
	struct kmsg_log *l;
	char text[200];
	if (kmsg_log_open(&l, path, KMSG_OPEN_WRITE))
		_exit(1);
	for (unsigned i = 0;; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = make_text(text, sizeof(text), w, inc, i);
		int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
		int r = kmsg_log_append(NULL, l, &e);
		int64_t dt = tu_now_ns(CLOCK_MONOTONIC) - t0;
		if (r != 0)
			_exit(2);
		int64_t m = atomic_load(&sh->max_wait_ns);
		while (dt > m && !atomic_compare_exchange_weak(&sh->max_wait_ns, &m, dt))
			;
		atomic_fetch_add(&sh->appends, 1);
	}
}

/*
 * Four writers append in tight loops (so a kill usually lands inside an
 * append, often between its reservation and its commit) while the parent SIGKILLs one at random
 * every few milliseconds and starts a new incarnation in its place.
 */
Test(concurrency, writers_killed_at_random_points, .timeout = 600)
{
	struct kmsg_log *log = tu_create("k.log", 256 * 1024, 0);
	struct shared *sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	char path[512];
	pid_t pid[KW];
	unsigned inc[KW] = { 0 };
	unsigned kills = 0;
	int64_t end = tu_now_ns(CLOCK_MONOTONIC) + (int64_t)(tu_stress_seconds() * 1e9);

	snprintf(path, sizeof(path), "%s", tu_path("k.log"));
	srand((unsigned)getpid());
	for (unsigned w = 0; w < KW; w++) {
		pid[w] = tu_fork();
		if (pid[w] == 0)
			kill_writer(path, w, 0, sh);
	}
	while (tu_now_ns(CLOCK_MONOTONIC) < end) {
		struct timespec ts = { 0, (rand() % 3000 + 200) * 1000L };
		nanosleep(&ts, NULL);
		unsigned w = (unsigned)rand() % KW;
		int st;
		kill(pid[w], SIGKILL);
		waitpid(pid[w], &st, 0);
		cr_assert(WIFSIGNALED(st), "writer %u exited %d on its own", w, WEXITSTATUS(st));
		kills++;
		if (++inc[w] >= MAX_INC)
			break;
		pid[w] = tu_fork();
		if (pid[w] == 0)
			kill_writer(path, w, inc[w], sh);
	}
	for (unsigned w = 0; w < KW; w++) {
		kill(pid[w], SIGKILL);
		waitpid(pid[w], NULL, 0);
	}
	/* one more append proves nobody left the log wedged */
	tu_append(log, "w0.4095 #0 ");
	size_t checked = check_log_holes(log, KW, MAX_INC, kills + KW);
	struct kmsg_stat st;
	kmsg_log_stat(&st, log);
	int64_t max_wait = atomic_load(&sh->max_wait_ns);
	fprintf(stderr, "kill test: %u kills survived, %lu appends, %zu records checked, "
		"%lu unfinished appends passed, longest append %.3f ms\n", kills,
		(unsigned long)atomic_load(&sh->appends), checked,
		(unsigned long)st.holes, max_wait / 1e6);
	cr_assert_gt(kills, 10);
	cr_assert_lt(max_wait, 500 * 1000 * 1000, "a writer waited for a dead one");
	kmsg_log_close(log);
}

/*
 * A writer whose wakes find the follower busy stops waking it for a while
 * (ring.c, WAKING FOLLOWERS).  The follower must still see the last record
 * of each burst at once, not at the end of its own timeout.
 */
Test(concurrency, a_busy_follower_sees_the_last_record_of_a_burst_at_once, .timeout = 120)
{
	struct kmsg_log *log = tu_create("busy.log", 4 << 20, 0);
	const int rounds = 200;
	int ready[2], seen[2];
	char path[512];

	snprintf(path, sizeof(path), "%s", tu_path("busy.log"));
	cr_assert_eq(pipe(ready), 0);
	cr_assert_eq(pipe(seen), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *ro;
		struct kmsg_reader *r;
		struct kmsg_record rec;
		int got = 0;
		if (kmsg_log_open(&ro, path, KMSG_OPEN_READ) || kmsg_reader_new(&r, ro, 0))
			_exit(2);
		kmsg_reader_wait(r, 30);  /* a follower, known to every writer */
		if (write(ready[1], "x", 1) != 1)
			_exit(2);
		while (got < rounds) {
			int rc;
			while ((rc = kmsg_reader_next(r, &rec)) == 1)
				if (rec.text_len == 4 && !memcmp(rec.text, "last", 4)) {
					got++;
					if (write(seen[1], "x", 1) != 1)
						_exit(2);
				}
			if (rc < 0)
				_exit(2);
			if (got == rounds)
				break;
			/* a wake missed shows as this timeout */
			if (kmsg_reader_wait(r, 10000) == 0)
				_exit(1);
		}
		_exit(0);
	}
	char c;
	cr_assert_eq(read(ready[0], &c, 1), 1);
	usleep(30 * 1000);
	int64_t worst = 0;
	for (int i = 0; i < rounds; i++) {
		for (int k = 0; k < 200; k++)
			tu_append(log, "burst");
		tu_append(log, "last");
		int64_t t0 = tu_now_ns(CLOCK_MONOTONIC);
		cr_assert_eq(read(seen[0], &c, 1), 1, "the follower ended");
		int64_t t = tu_now_ns(CLOCK_MONOTONIC) - t0;
		if (t > worst)
			worst = t;
	}
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %#x", st);
	/* the bound is WAKE_QUIET_NS; a loaded machine may add to it, but a
	 * missed wake would take the follower's full timeout (10 s) */
	cr_assert_lt(worst, INT64_C(2000000000), "the last record came %lld ns late",
		     (long long)worst);
	kmsg_log_close(log);
}

/* Numbers given to appends that were passed (ring.c, EVICTION) in log,
 * quiet now: those evicted since, and those the blocks still hold, which
 * a reader from the oldest reports as lost. */
static uint64_t holes_in(struct kmsg_log *log)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;
	uint64_t holes;
	int rc;

	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	holes = st.holes;
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		cr_assert_eq(rec.damaged, 0);
		holes += rec.lost;
	}
	cr_assert_eq(rc, 0);
	kmsg_reader_free(r);
	return holes;
}

/*
 * Waits until the writers pid[] have evicted the record numbered seq: a
 * reader still there is lapped.  However loaded the machine, they get
 * there long before the bound, unless they failed.
 */
static void wait_evicted(struct kmsg_log *log, uint64_t seq, const pid_t *pid, unsigned n)
{
	int64_t deadline = tu_now_ns(CLOCK_MONOTONIC) + INT64_C(120) * 1000000000;
	struct kmsg_stat st;

	for (;;) {
		cr_assert_eq(kmsg_log_stat(&st, log), 0);
		if (st.first_seq > seq)
			return;
		for (unsigned k = 0; k < n; k++)
			cr_assert_eq(waitpid(pid[k], NULL, WNOHANG), 0, "writer %u ended early", k);
		cr_assert_lt(tu_now_ns(CLOCK_MONOTONIC), deadline, "the writers appended nothing");
		nanosleep(&(struct timespec){ 0, 1000000 }, NULL);
	}
}

/*
 * A reader that copies the blocks ahead of it with pread (B1 in ring.c),
 * here in copies of 1 KiB and wherever the end is, while two writer
 * processes append and lap it again and again: a block that was being
 * committed while a copy was taken must be read from the mapping, never
 * from that copy, so every record it returns is exact and in order, and
 * everything else is counted as lost (overtaken), never as damaged.
 *
 * An append stopped between its reservation and its commit for longer
 * than the bound (a writer descheduled on a loaded machine, or the reader
 * waiting for it) is passed: its number is lost, and its writer appends
 * the record again under a new one.  So the writers' last record has the
 * number 2 * per_writer + 1 (the test's own record first) plus those
 * holes, on a quiet machine none.
 */
Test(concurrency, a_reader_copying_ahead_while_writers_lap_it_sees_only_exact_records,
     .timeout = 300)
{
	struct kmsg_log *log = tu_create("bulk.log", 256 << 10, 0);
	const unsigned per_writer = 100000;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	unsigned last[2] = { 0, 0 };
	int seen_w[2] = { 0, 0 }, running = 2, rc;
	uint64_t prev, got, lost = 0, first, end, bulk;
	char path[512], text[200];
	pid_t pid[2];

	snprintf(path, sizeof(path), "%s", tu_path("bulk.log"));
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	kmsg__reader_bulk(r, 1024, 0);
	/* The reader has read a record before the writers begin, and they
	 * have lapped it before it reads on: it is overtaken at least once
	 * after its first record, however the processes are scheduled. */
	e.text = text;
	e.text_len = make_text(text, sizeof(text), 2, 0, 0);
	cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	prev = first = rec.seq;
	got = 1;
	for (unsigned k = 0; k < 2; k++)
		pid[k] = fork_writer(path, k, per_writer);
	wait_evicted(log, prev + 1, pid, 2);
	for (;;) {
		while ((rc = kmsg_reader_next(r, &rec)) == 1) {
			unsigned w, inc, i;

			cr_assert_eq(rec.damaged, 0, "seq %llu: counted damaged",
				     (unsigned long long)rec.seq);
			if (rec.flags & KMSG_GAP) {
				/* missing at the end (an append in progress):
				 * the next record carries this number */
				lost += rec.lost;
				prev = rec.seq - 1;
				continue;
			}
			cr_assert_eq(rec.seq, prev + 1 + rec.lost, "numbers in order");
			lost += rec.lost;
			prev = rec.seq;
			cr_assert(parse_text(&rec, &w, &inc, &i), "seq %llu: text is exact: %.*s",
				  (unsigned long long)rec.seq, (int)rec.text_len, rec.text);
			cr_assert(w < 2 && inc == 0, "seq %llu: a writer's",
				  (unsigned long long)rec.seq);
			cr_assert(!seen_w[w] || i > last[w], "writer %u: %u after %u", w, i, last[w]);
			seen_w[w] = 1;
			last[w] = i;
			got++;
		}
		cr_assert_geq(rc, 0, "%s", kmsg_strerror(rc));
		if (!running)
			break;
		for (unsigned k = 0; k < 2; k++) {
			int status;
			if (pid[k] > 0 && waitpid(pid[k], &status, WNOHANG) == pid[k]) {
				cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
				pid[k] = 0;
				running--;
			}
		}
	}
	bulk = kmsg__reader_bulk(r, 1024, 0);
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	end = st.next_seq - 1;
	cr_assert_eq(end, 1 + 2 * per_writer + holes_in(log),
		     "every number an append or an append passed (%llu)", (unsigned long long)end);
	cr_assert_eq(prev, end, "read to the last record");
	cr_assert_eq(got + lost + first - 1, end, "each number read or counted lost");
	cr_assert_gt(lost, 0, "the writers lapped the reader");
	cr_assert_gt(got, 1000);
	cr_assert_gt(bulk, 0, "records taken from bulk copies");
	kmsg_reader_free(r);
	kmsg_log_close(log);
}
