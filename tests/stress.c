/*
 * stress.c - writers killed, stopped and restarted at random moments while
 * followers read; then every promise is checked.
 *
 *	kmsg-stress [--seconds N] [--long] [--kmsg PATH] [--log PATH] [--size BYTES]
 *
 * Library writers append in tight loops (one of them forks a child that
 * appends through the inherited handle after every 64 records); with
 * --kmsg, `kmsg emit` processes read lines from feeder processes through
 * pipes.  The parent SIGKILLs a
 * random writer (and starts a new incarnation in its place) or SIGSTOPs it
 * for up to 20 ms, every few milliseconds.  Followers sleep on the log's
 * futex and account for every sequence number: seen, or reported lost.
 *
 * At the end it checks: every stored record passes its checksum and has
 * the exact text its writer sent; sequence numbers are contiguous but for
 * the holes killed writers left, at most one per kill, and nothing is
 * damaged (in the file, nor as the followers are told); each writer
 * incarnation's surviving records form a gap-free run (a stopped writer
 * that was passed appends again); no append waited
 * longer than the bound (1 s); each follower saw or was told about every
 * record.  It prints
 * the figures and a "N passed, N failed" line; the exit status says too.
 * --long runs for 10 minutes (about 10,000 kills and stops on 2 cores).
 */
#define _GNU_SOURCE
#include <kmsg/kmsg.h>

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LIB_WRITERS 3
#define EMITTERS    2
#define FOLLOWERS   2
#define MAX_SLOTS   (LIB_WRITERS + EMITTERS)
#define FORK_SLOT   MAX_SLOTS  /* the text slot of writer 0's forked children */
#define FORK_EVERY  64         /* writer 0 forks after every 64 records */
#define FORK_RECORDS 16        /*   a child that appends 16 through its handle */
#define MAX_INC     65536
#define BOUND_NS    (INT64_C(1000) * 1000 * 1000)

struct follower_stats {
	_Atomic uint64_t seen, lost, damaged, bad, first, last;
	_Atomic int done;
};

struct shared {
	_Atomic int64_t max_wait_ns;
	_Atomic uint64_t appends, busy, errors, forks;
	struct follower_stats fol[FOLLOWERS];
	_Atomic int stop_followers;
};

static struct shared *sh;
static const char *log_path, *kmsg_bin;
static int failures, checks;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void check(int ok, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
	va_list ap;
	checks++;
	if (ok)
		return;
	failures++;
	va_start(ap, fmt);
	fputs("stress: FAIL: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The text of writer slot w, incarnation inc, record i: the filler is
 * derived from all three, so any byte out of place shows. */
static size_t make_text(char *buf, size_t cap, unsigned w, unsigned inc, unsigned i)
{
	int n = snprintf(buf, cap, "w%u.%u #%u ", w, inc, i);
	size_t fill = (i * 7 + w * 3 + inc) % 120;
	for (size_t k = 0; k < fill && (size_t)n + k < cap - 1; k++)
		buf[n + k] = (char)('a' + (i + w + k) % 26);
	return (size_t)n + fill;
}

static int text_ok(const struct kmsg_record *rec, unsigned *w, unsigned *inc, unsigned *i)
{
	char buf[300], want[300];
	size_t len = rec->text_len < sizeof(buf) - 1 ? rec->text_len : sizeof(buf) - 1;
	memcpy(buf, rec->text, len);
	buf[len] = 0;
	if (sscanf(buf, "w%u.%u #%u ", w, inc, i) != 3)
		return 0;
	return make_text(want, sizeof(want), *w, *inc, *i) == rec->text_len &&
	       !memcmp(want, rec->text, rec->text_len);
}

/* Appends record i of writer w, incarnation inc; 0, or 1 to try again. */
static int append_one(struct kmsg_log *log, unsigned w, unsigned inc, unsigned i)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	char text[300];

	e.text = text;
	e.text_len = make_text(text, sizeof(text), w, inc, i);
	int64_t t0 = now_ns();
	int r = kmsg_log_append(NULL, log, &e);
	int64_t dt = now_ns() - t0;
	int64_t m = atomic_load(&sh->max_wait_ns);
	while (dt > m && !atomic_compare_exchange_weak(&sh->max_wait_ns, &m, dt))
		;
	if (r == KMSG_EBUSY) {
		/* within the bound, but the record was not written: the
		 * same number again, so that the run stays whole */
		atomic_fetch_add(&sh->busy, 1);
		return 1;
	}
	if (r) {
		atomic_fetch_add(&sh->errors, 1);
		_exit(2);
	}
	atomic_fetch_add(&sh->appends, 1);
	return 0;
}

/*
 * A library writer.  Writer 0 also forks, after every FORK_EVERY records:
 * a child appends FORK_RECORDS through the handle it inherited (the fork
 * handler gives it a description and an owner id of its own) while the
 * parent goes on; a parent killed or stopped meanwhile must not take the
 * child's appends with it, nor the child the parent's.
 */
static void lib_writer(unsigned w, unsigned inc)
{
	struct kmsg_log *log;
	if (kmsg_log_open(&log, log_path, KMSG_OPEN_WRITE))
		_exit(1);
	for (unsigned i = 0;; i++) {
		if (append_one(log, w, inc, i)) {
			i--;
			continue;
		}
		if (w != 0 || i % FORK_EVERY != FORK_EVERY - 1)
			continue;
		uint64_t n = atomic_fetch_add(&sh->forks, 1);
		if (n >= MAX_INC)
			continue;  /* every child's text must be its own */
		pid_t c = fork();
		if (c == 0) {
			for (unsigned j = 0; j < FORK_RECORDS; j++)
				if (append_one(log, FORK_SLOT, (unsigned)n, j))
					j--;
			_exit(0);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
}

/* An emitter incarnation: `kmsg emit` reading a pipe that a feeder fills. */
static void start_emitter(unsigned w, unsigned inc, pid_t *emit_pid, pid_t *feed_pid)
{
	int p[2];
	if (pipe(p) < 0)
		exit(1);
	*emit_pid = fork();
	if (*emit_pid == 0) {
		dup2(p[0], 0);
		close(p[0]);
		close(p[1]);
		execl(kmsg_bin, "kmsg", "emit", "-F", log_path, (char *)NULL);
		_exit(127);
	}
	*feed_pid = fork();
	if (*feed_pid == 0) {
		char text[300];
		close(p[0]);
		signal(SIGPIPE, SIG_DFL);
		for (unsigned i = 0;; i++) {
			size_t n = make_text(text, sizeof(text) - 1, w, inc, i);
			text[n++] = '\n';
			if (write(p[1], text, n) != (ssize_t)n)
				_exit(0);
		}
	}
	close(p[0]);
	close(p[1]);
}

static void follower(int k)
{
	struct follower_stats *st = &sh->fol[k];
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t prev = 0;
	unsigned said_damage = 0;

	if (kmsg_log_open(&log, log_path, 0) || kmsg_reader_new(&r, log, 0))
		_exit(1);
	kmsg_reader_seek(r, KMSG_SEEK_END);
	while (!atomic_load(&sh->stop_followers)) {
		int n = kmsg_reader_wait(r, 100);
		if (n < 0 && n != -EINTR)
			_exit(2);
		while (kmsg_reader_next(r, &rec) == 1) {
			unsigned w, inc, i;
			/* Every number from the one the seek expected is seen or
			 * reported, the first record's included. */
			if (!prev)
				atomic_store(&st->first, rec.seq - rec.lost - rec.damaged);
			else if (rec.seq != prev + 1 + rec.lost + rec.damaged)
				atomic_fetch_add(&st->bad, 1);
			atomic_fetch_add(&st->lost, rec.lost);
			atomic_fetch_add(&st->damaged, rec.damaged);
			if (rec.damaged && said_damage++ < 4) {
				/* what the reader met, for the one who reads the
				 * failure: where, and what the log held then */
				struct kmsg_stat ls;
				int sr = kmsg_log_stat(&ls, log);
				fprintf(stderr,
					"follower %d: told of %lu damaged before seq %lu%s "
					"(the last seen %lu; lost %lu with it); the log then: "
					"oldest %lu, next %lu, %lu damaged by writers ever\n",
					k, (unsigned long)rec.damaged, (unsigned long)rec.seq,
					rec.flags & KMSG_GAP ? " (at the end: no record)" : "",
					(unsigned long)prev, (unsigned long)rec.lost,
					sr ? 0UL : (unsigned long)ls.first_seq,
					sr ? 0UL : (unsigned long)ls.next_seq,
					sr ? 0UL : (unsigned long)ls.damaged);
			}
			if (rec.flags & KMSG_GAP) {  /* no record: numbers up to seq - 1 */
				prev = rec.seq - 1;
				atomic_store(&st->last, prev);
				continue;
			}
			if (!text_ok(&rec, &w, &inc, &i))
				atomic_fetch_add(&st->bad, 1);
			atomic_fetch_add(&st->seen, 1);
			atomic_store(&st->last, rec.seq);
			prev = rec.seq;
		}
	}
	atomic_store(&st->done, 1);
	_exit(0);
}

struct run { unsigned last; int seen; };

/*
 * Reads the log from its oldest record.  A writer killed in the middle of
 * an append leaves a hole, which a reader reports as lost: at most one
 * per kill (max_holes), never damage, and the numbers are contiguous but
 * for them.
 */
static uint64_t check_log(unsigned slots, uint64_t max_holes)
{
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct run *runs = calloc((size_t)(FORK_SLOT + 1) * MAX_INC, sizeof(*runs));
	uint64_t prev = 0, n = 0, holes = 0;
	int rc;

	check(kmsg_log_open(&log, log_path, 0) == 0, "open for the final check");
	kmsg_reader_new(&r, log, 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		unsigned w, inc, i;
		check(rec.damaged == 0, "seq %lu: %lu damaged before it",
		      (unsigned long)rec.seq, (unsigned long)rec.damaged);
		if (prev)
			check(rec.seq == prev + 1 + rec.lost, "seq %lu follows %lu with %lu lost",
			      (unsigned long)rec.seq, (unsigned long)prev, (unsigned long)rec.lost);
		holes += prev ? rec.lost : 0;
		if (rec.flags & KMSG_GAP) {
			rc = 0;
			break;  /* the newest appends never finished */
		}
		prev = rec.seq;
		if (!text_ok(&rec, &w, &inc, &i) || (w >= slots && w != FORK_SLOT) ||
		    inc >= MAX_INC) {
			check(0, "seq %lu: text not as written: %.*s", (unsigned long)rec.seq,
			      (int)rec.text_len, rec.text);
			continue;
		}
		struct run *ru = &runs[(size_t)w * MAX_INC + inc];
		if (ru->seen)
			check(i == ru->last + 1, "writer %u.%u: %u after %u", w, inc, i, ru->last);
		ru->seen = 1;
		ru->last = i;
		n++;
	}
	check(rc == 0, "reader ended with %s", kmsg_strerror(rc));
	check(holes <= max_holes, "%lu holes from %lu kills", (unsigned long)holes,
	      (unsigned long)max_holes);
	struct kmsg_stat st;
	kmsg_log_stat(&st, log);
	check(st.damaged == 0, "writers skipped %lu damaged records", (unsigned long)st.damaged);
	kmsg_reader_free(r);
	kmsg_log_close(log);
	free(runs);
	return n;
}

int main(int argc, char **argv)
{
	double seconds = 5;
	uint64_t size = 256 * 1024;
	char tmpl[] = "/tmp/kmsg-stress-XXXXXX", pathbuf[600];
	const char *env = getenv("KMSG_STRESS_SECONDS");

	if (env && *env)
		seconds = atof(env);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--long"))
			seconds = 600;
		else if (!strcmp(argv[i], "--kmsg") && i + 1 < argc)
			kmsg_bin = argv[++i];
		else if (!strcmp(argv[i], "--log") && i + 1 < argc)
			log_path = argv[++i];
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: kmsg-stress [--seconds N] [--long] [--kmsg PATH] "
				"[--log PATH] [--size BYTES]\n");
			return 2;
		}
	}
	if (!log_path) {
		if (!mkdtemp(tmpl)) {
			perror("stress: mkdtemp");
			return 1;
		}
		snprintf(pathbuf, sizeof(pathbuf), "%s/log", tmpl);
		log_path = pathbuf;
	}
	unlink(log_path);
	{
		struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
		struct kmsg_log *log;
		o.size = size;
		int r = kmsg_log_create(&log, log_path, &o, 0);
		if (r) {
			fprintf(stderr, "stress: %s: %s\n", log_path, kmsg_strerror(r));
			return 1;
		}
		kmsg_log_close(log);
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	signal(SIGPIPE, SIG_IGN);

	unsigned slots = LIB_WRITERS + (kmsg_bin ? EMITTERS : 0);
	pid_t pid[MAX_SLOTS], feed[MAX_SLOTS] = { 0 }, fol[FOLLOWERS];
	unsigned inc[MAX_SLOTS] = { 0 };
	unsigned long kills = 0, stops = 0;

	for (int k = 0; k < FOLLOWERS; k++)
		if ((fol[k] = fork()) == 0)
			follower(k);
	usleep(50 * 1000);  /* followers registered before the first record */
	for (unsigned w = 0; w < slots; w++) {
		if (w < LIB_WRITERS) {
			if ((pid[w] = fork()) == 0)
				lib_writer(w, 0);
		} else {
			start_emitter(w, 0, &pid[w], &feed[w]);
		}
	}
	srand((unsigned)getpid());
	int64_t end = now_ns() + (int64_t)(seconds * 1e9);
	while (now_ns() < end) {
		struct timespec ts = { 0, (rand() % 2800 + 200) * 1000L };
		nanosleep(&ts, NULL);
		unsigned w = (unsigned)rand() % slots;
		if (rand() % 10 < 3) {
			/* stopped at a random point, perhaps mid-append */
			struct timespec st = { 0, (rand() % 20000) * 1000L };
			kill(pid[w], SIGSTOP);
			nanosleep(&st, NULL);
			kill(pid[w], SIGCONT);
			stops++;
			continue;
		}
		int status;
		kill(pid[w], SIGKILL);
		waitpid(pid[w], &status, 0);
		check(WIFSIGNALED(status), "writer %u ended by itself (status %d)", w,
		      WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		if (feed[w]) {
			kill(feed[w], SIGKILL);
			waitpid(feed[w], NULL, 0);
		}
		kills++;
		if (++inc[w] >= MAX_INC)
			break;
		if (w < LIB_WRITERS) {
			if ((pid[w] = fork()) == 0)
				lib_writer(w, inc[w]);
		} else {
			start_emitter(w, inc[w], &pid[w], &feed[w]);
		}
	}
	for (unsigned w = 0; w < slots; w++) {
		kill(pid[w], SIGKILL);
		waitpid(pid[w], NULL, 0);
		if (feed[w]) {
			kill(feed[w], SIGKILL);
			waitpid(feed[w], NULL, 0);
		}
	}
	usleep(300 * 1000);  /* followers catch up */
	atomic_store(&sh->stop_followers, 1);
	for (int k = 0; k < FOLLOWERS; k++) {
		int status;
		waitpid(fol[k], &status, 0);
		check(WIFEXITED(status) && WEXITSTATUS(status) == 0, "follower %d exited badly", k);
	}

	uint64_t checked = check_log(slots, kills + slots);
	for (int k = 0; k < FOLLOWERS; k++) {
		struct follower_stats *f = &sh->fol[k];
		uint64_t span = f->last ? f->last - f->first + 1 : 0;
		check(f->bad == 0, "follower %d saw %lu records out of order or altered", k,
		      (unsigned long)f->bad);
		check(f->seen + f->lost + f->damaged == span,
		      "follower %d: saw %lu + lost %lu + damaged %lu != %lu records in its span", k,
		      (unsigned long)f->seen, (unsigned long)f->lost, (unsigned long)f->damaged,
		      (unsigned long)span);
		/* Nothing damages this file: damage a follower reports is an
		 * append in progress it misjudged. */
		check(f->damaged == 0, "follower %d was told of %lu damaged records", k,
		      (unsigned long)f->damaged);
		printf("follower %d: saw %lu records, told of %lu lost\n", k,
		       (unsigned long)f->seen, (unsigned long)f->lost);
	}
	double max_wait = (double)atomic_load(&sh->max_wait_ns);
	check(max_wait <= BOUND_NS * 1.2, "an append waited %.1f ms, over the bound", max_wait / 1e6);
	check(sh->errors == 0, "%lu appends failed", (unsigned long)sh->errors);
	printf("stress: %.0f s, %lu kills, %lu stops, %lu forks, %lu library appends (%lu busy), "
	       "%lu records checked, longest append %.1f ms\n", seconds, kills, stops,
	       (unsigned long)sh->forks, (unsigned long)sh->appends, (unsigned long)sh->busy,
	       (unsigned long)checked, max_wait / 1e6);
	if (log_path == pathbuf) {
		unlink(log_path);
		rmdir(tmpl);
	}
	printf("stress: %d passed, %d failed\n", checks - failures, failures);
	return failures ? 1 : 0;
}
