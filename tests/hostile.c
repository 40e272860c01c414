/*
 * hostile.c - a co-writer that lies, at random, while others append, read
 * and follow; then every promise about a lying header is checked.
 *
 *	kmsg-hostile [--seconds N] [--log PATH] [--size BYTES] [--seed N]
 *
 * Library writers append through long-lived handles; a reader reads the
 * log to its end again and again, and a follower waits on the futex and
 * reads what comes.  A mutator process maps the file and rewrites the
 * words every writer shares (struct kmsg_dyn and struct kmsg_aux in
 * layout.h: resv, head, pass_to, the quarantine table, the numbering's
 * identity, the time words, the wake word, ...) with random values, bit
 * flips and adds or subtracts of powers of two, at random intervals.
 *
 * While it lies: no process may crash or hang (a watchdog in the parent
 * measures each append, each read and each wait, and fails an append that
 * takes longer than BOUND_NS, a read or wait longer than READ_BOUND_NS),
 * and every call returns 0 or an error kmsg.h documents for a lying
 * header (KMSG_ECORRUPT, KMSG_EBUSY, KMSG_ESEQ).
 * Exact counts are not checked: the header is being lied about.  After
 * the mutator stops, a writer that opens the log repairs what is broken;
 * then every writer appends CALM records through its old handle, each
 * append must succeed, and a fresh reader must read the log to its end
 * with every record one that a writer wrote whole (its text is checked
 * against what its writer sent) and every calm record among them.
 *
 * It prints the figures and a "N passed, N failed" line; the exit status
 * says too.
 */
#define _GNU_SOURCE
#include <kmsg/kmsg.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "layout.h"

#define WRITERS   3
#define CALM      300                              /* records each writer appends after */
#define BOUND_NS  (INT64_C(2) * 1000 * 1000 * 1000) /* an append */
/* A read: a handle opened for reading only waits 1 s for each writer that
 * looks stopped (kmsg(5)), and lies can make several look so. */
#define READ_BOUND_NS (INT64_C(10) * 1000 * 1000 * 1000)
#define NPROC     (WRITERS + 3)                    /* + reader, follower, mutator */
#define READER    WRITERS
#define FOLLOWER  (WRITERS + 1)
#define MUTATOR   (WRITERS + 2)

struct slot {
	_Atomic int64_t busy_since;  /* CLOCK_MONOTONIC of the call in progress, 0 none */
	_Atomic int64_t max_ns;      /* the longest call */
	_Atomic uint64_t calls, ok, corrupt, busy, eseq, other, bad_text;
	_Atomic int last_other;
};

struct shared {
	struct slot s[NPROC];
	_Atomic int calm;            /* 1: the mutator stopped and a writer repaired */
	_Atomic int stop;
	_Atomic uint64_t mutations;
	_Atomic uint64_t calm_done[WRITERS];
	_Atomic int calm_err[WRITERS];
};

static struct shared *sh;
static const char *log_path;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static uint64_t rnd_state;

static uint64_t rnd(void)
{
	uint64_t x = rnd_state += UINT64_C(0x9e3779b97f4a7c15);

	x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

static void call_begin(struct slot *s)
{
	atomic_store(&s->busy_since, now_ns());
}

static void call_end(struct slot *s)
{
	int64_t t = now_ns() - atomic_load(&s->busy_since), m = atomic_load(&s->max_ns);

	while (t > m && !atomic_compare_exchange_weak(&s->max_ns, &m, t))
		;
	atomic_store(&s->busy_since, 0);
	atomic_fetch_add(&s->calls, 1);
}

/* A record's text: who wrote it, its count, and filler that follows from
 * both, so that a reader can tell a record written whole from a torn one. */
static size_t text_of(char *buf, const char *kind, int w, uint64_t n)
{
	int k = sprintf(buf, "%s w%d n%llu ", kind, w, (unsigned long long)n);
	size_t fill = (n * 7 + (uint64_t)w * 13) % 180;

	for (size_t i = 0; i < fill; i++)
		buf[k + i] = (char)('a' + (n + (uint64_t)w + i) % 26);
	return (size_t)k + fill;
}

/* Is text one that text_of() makes?  Sets *calm, *w, *n. */
static int text_valid(const char *text, size_t len, int *calm, int *w, uint64_t *n)
{
	char buf[512], kind[8];
	unsigned long long nn;
	int ww, used;

	if (len >= sizeof(buf))
		return 0;
	memcpy(buf, text, len);
	buf[len] = 0;
	if (sscanf(buf, "%7s w%d n%llu %n", kind, &ww, &nn, &used) != 3 || ww < 0 || ww >= WRITERS)
		return 0;
	if (strcmp(kind, "lie") && strcmp(kind, "calm"))
		return 0;
	if (text_of(buf, kind, ww, nn) != len || memcmp(buf, text, len))
		return 0;
	*calm = !strcmp(kind, "calm");
	*w = ww;
	*n = nn;
	return 1;
}

static void count_err(struct slot *s, int err)
{
	if (err == 0)
		atomic_fetch_add(&s->ok, 1);
	else if (err == KMSG_ECORRUPT)
		atomic_fetch_add(&s->corrupt, 1);
	else if (err == KMSG_EBUSY)
		atomic_fetch_add(&s->busy, 1);
	else if (err == KMSG_ESEQ)
		atomic_fetch_add(&s->eseq, 1);
	else {
		atomic_fetch_add(&s->other, 1);
		atomic_store(&s->last_other, err);
	}
}

static void writer(int w)
{
	struct slot *s = &sh->s[w];
	struct kmsg_log *log;
	char text[512];
	uint64_t n = 0;
	int err;

	if ((err = kmsg_log_open(&log, log_path, KMSG_OPEN_WRITE)) < 0) {
		fprintf(stderr, "kmsg-hostile: writer %d: open: %s\n", w, kmsg_strerror(err));
		_exit(2);
	}
	while (!atomic_load(&sh->calm)) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;

		e.text = text;
		e.text_len = text_of(text, "lie", w, n++);
		call_begin(s);
		err = kmsg_log_append(NULL, log, &e);
		call_end(s);
		count_err(s, err);
	}
	/* the same handle, after the repair */
	for (uint64_t c = 0; c < CALM; c++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;

		e.text = text;
		e.text_len = text_of(text, "calm", w, c);
		call_begin(s);
		err = kmsg_log_append(NULL, log, &e);
		call_end(s);
		count_err(s, err);
		if (err) {
			atomic_store(&sh->calm_err[w], err);
			break;
		}
		atomic_store(&sh->calm_done[w], c + 1);
	}
	kmsg_log_close(log);
	_exit(0);
}

/* Reads to the end, again and again, through one handle (read-only). */
static void reader(int follow)
{
	struct slot *s = &sh->s[follow ? FOLLOWER : READER];
	struct kmsg_log *log;
	struct kmsg_reader *r = NULL;
	struct kmsg_record rec;
	int err;

	if ((err = kmsg_log_open(&log, log_path, 0)) < 0) {
		fprintf(stderr, "kmsg-hostile: reader: open: %s\n", kmsg_strerror(err));
		_exit(2);
	}
	while (!atomic_load(&sh->stop)) {
		int calm, w;
		uint64_t n;

		if (!r && kmsg_reader_new(&r, log, 0) < 0)
			_exit(2);
		call_begin(s);
		err = kmsg_reader_next(r, &rec);
		call_end(s);
		if (err == 1) {
			if (!(rec.flags & KMSG_GAP) && !text_valid(rec.text, rec.text_len, &calm, &w, &n))
				atomic_fetch_add(&s->bad_text, 1);
			continue;
		}
		count_err(s, err == KMSG_ECHANGED ? 0 : err);
		if (err < 0)
			usleep(1000);  /* a lie the next append repairs */
		if (err == 0 && follow) {
			call_begin(s);
			kmsg_reader_wait(r, 100);
			call_end(s);
			continue;
		}
		/* at the end, or an error: from the oldest again */
		kmsg_reader_free(r);
		r = NULL;
		if (err == KMSG_ECHANGED) {
			kmsg_log_close(log);
			if (kmsg_log_open(&log, log_path, 0) < 0)
				_exit(2);
		}
	}
	if (r)
		kmsg_reader_free(r);
	kmsg_log_close(log);
	_exit(0);
}

/* The words a co-writer may store to: every 8-byte word of the dynamic
 * part and of the auxiliary area's used lines (its 4-byte words come in
 * pairs within them). */
static void mutator(uint64_t seed, uint64_t data_size)
{
	int fd = open(log_path, O_RDWR | O_CLOEXEC);
	size_t len = HDR_SIZE + data_size + AUX_SIZE;
	unsigned char *map;
	_Atomic uint64_t *words[(HDR_SIZE - HDR_STATIC) / 8 + 2432 / 8];
	size_t nw = 0;

	if (fd < 0)
		_exit(2);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		_exit(2);
	for (size_t off = HDR_STATIC; off < HDR_SIZE; off += 8)
		words[nw++] = (_Atomic uint64_t *)(map + off);
	for (size_t off = 0; off < 2432; off += 8)
		words[nw++] = (_Atomic uint64_t *)(map + HDR_SIZE + data_size + off);
	rnd_state = seed;
	while (!atomic_load(&sh->stop)) {
		uint64_t pick = rnd(), r = rnd();
		_Atomic uint64_t *wd;

		/* most lies at the words every append uses */
		if (pick % 2)
			wd = &((struct kmsg_dyn *)(map + HDR_STATIC))->resv_pos + (pick >> 8) % 4;
		else
			wd = words[(pick >> 8) % nw];
		switch (r % 6) {
		case 0:
			atomic_store(wd, rnd());
			break;
		case 1:
			atomic_fetch_xor(wd, UINT64_C(1) << (r >> 8) % 64);
			break;
		case 2:
			atomic_fetch_add(wd, UINT64_C(1) << (r >> 8) % 64);
			break;
		case 3:
			atomic_fetch_sub(wd, UINT64_C(1) << (r >> 8) % 64);
			break;
		case 4:
			atomic_fetch_add(wd, (uint64_t)(int64_t)(int8_t)(r >> 8) * 8);
			break;
		default:
			atomic_store(wd, 0);
			break;
		}
		atomic_fetch_add(&sh->mutations, 1);
		/* at random intervals: a burst, or a pause that lets
		 * writers repair and go on */
		if (rnd() % 4)
			usleep((useconds_t)(rnd() % 2000));
		else
			usleep((useconds_t)(rnd() % 50000));
	}
	_exit(0);
}

static int failures, passes;

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("%s: ", ok ? "pass" : "FAIL");
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	if (ok)
		passes++;
	else
		failures++;
}

static pid_t spawn(void (*fn)(int), int arg)
{
	pid_t pid = fork();

	if (pid == 0)
		fn(arg);
	return pid;
}

static void run_writer(int w) { writer(w); }
static void run_reader(int follow) { reader(follow); }

/* Watches every process until cond() or until one hangs or dies;
 * returns 0, or -1 after a failure. */
static int watch(pid_t *pids, int n, int64_t until, int (*cond)(void))
{
	while (now_ns() < until && !(cond && cond())) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);

		if (pid > 0 && WIFSIGNALED(status)) {
			for (int i = 0; i < n; i++)
				if (pids[i] == pid)
					check(0, "process %d died of signal %d", i, WTERMSIG(status));
			return -1;
		}
		if (pid > 0) {
			for (int i = 0; i < n; i++)
				if (pids[i] == pid)
					pids[i] = 0;
		}
		for (int i = 0; i < NPROC; i++) {
			int64_t b = atomic_load(&sh->s[i].busy_since);

			int64_t bound = i < WRITERS ? BOUND_NS : READ_BOUND_NS;

			if (b && now_ns() - b > bound) {
				check(0, "process %d: one call has taken more than %lld ms", i,
				      (long long)(bound / 1000000));
				return -1;
			}
		}
		usleep(20000);
	}
	return 0;
}

static int writers_calm(void)
{
	for (int w = 0; w < WRITERS; w++)
		if (atomic_load(&sh->calm_done[w]) < CALM && !atomic_load(&sh->calm_err[w]))
			return 0;
	return 1;
}

int main(int argc, char **argv)
{
	double seconds = 2;
	uint64_t size = 256 * 1024, seed = (uint64_t)now_ns();
	const char *path = NULL;
	char tmp[] = "/tmp/kmsg-hostile-XXXXXX", pathbuf[64];
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;
	struct kmsg_stat st;
	pid_t pids[NPROC] = { 0 };
	int err, dead = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--seconds") && i + 1 < argc)
			seconds = atof(argv[++i]);
		else if (!strcmp(argv[i], "--log") && i + 1 < argc)
			path = argv[++i];
		else if (!strcmp(argv[i], "--size") && i + 1 < argc)
			size = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: kmsg-hostile [--seconds N] [--log PATH] "
					"[--size BYTES] [--seed N]\n");
			return 2;
		}
	}
	if (!path) {
		if (!mkdtemp(tmp))
			return 2;
		snprintf(pathbuf, sizeof(pathbuf), "%s/hostile.log", tmp);
		path = pathbuf;
	}
	log_path = path;
	o.size = size;
	o.max_text = 512;
	if ((err = kmsg_log_create(&log, path, &o, 0)) < 0) {
		fprintf(stderr, "kmsg-hostile: %s: %s\n", path, kmsg_strerror(err));
		return 2;
	}
	kmsg_log_stat(&st, log);
	kmsg_log_close(log);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return 2;
	printf("kmsg-hostile: %s, %.1f s, seed %llu\n", path, seconds, (unsigned long long)seed);
	fflush(stdout);

	for (int w = 0; w < WRITERS; w++)
		pids[w] = spawn(run_writer, w);
	pids[READER] = spawn(run_reader, 0);
	pids[FOLLOWER] = spawn(run_reader, 1);
	pids[MUTATOR] = fork();
	if (pids[MUTATOR] == 0)
		mutator(seed, size - HDR_SIZE - AUX_SIZE - BACKUP_SIZE);

	/* the lies */
	dead = watch(pids, NPROC, now_ns() + (int64_t)(seconds * 1e9), NULL) < 0;
	if (!dead) {
		int status;

		/* the mutator stops; a writer that opens the log repairs it */
		kill(pids[MUTATOR], SIGTERM);
		waitpid(pids[MUTATOR], &status, 0);
		pids[MUTATOR] = 0;
		if ((err = kmsg_log_open(&log, path, KMSG_OPEN_WRITE)) < 0) {
			check(0, "a writer opens the log after the lies: %s", kmsg_strerror(err));
			dead = 1;
		} else {
			kmsg_log_close(log);
		}
	}
	if (!dead) {
		atomic_store(&sh->calm, 1);
		dead = watch(pids, NPROC, now_ns() + 60 * INT64_C(1000000000), writers_calm) < 0;
	}
	atomic_store(&sh->stop, 1);
	for (int i = 0; i < NPROC; i++) {
		int status;

		if (!pids[i])
			continue;
		if (dead)
			kill(pids[i], SIGKILL);
		if (waitpid(pids[i], &status, 0) == pids[i] && WIFSIGNALED(status) && !dead)
			check(0, "process %d died of signal %d", i, WTERMSIG(status));
	}

	/* the figures */
	printf("mutations %llu\n", (unsigned long long)atomic_load(&sh->mutations));
	for (int i = 0; i < NPROC - 1; i++) {
		struct slot *s = &sh->s[i];

		printf("%s %d: calls %llu ok %llu corrupt %llu busy %llu eseq %llu other %llu "
		       "(last %d) bad text %llu, longest %.1f ms\n",
		       i < WRITERS ? "writer" : i == READER ? "reader" : "follower", i,
		       (unsigned long long)s->calls, (unsigned long long)s->ok,
		       (unsigned long long)s->corrupt, (unsigned long long)s->busy,
		       (unsigned long long)s->eseq, (unsigned long long)s->other, s->last_other,
		       (unsigned long long)s->bad_text, (double)s->max_ns / 1e6);
	}
	if (dead)
		goto out;
	for (int i = 0; i < NPROC - 1; i++) {
		check(!sh->s[i].other, "process %d: every call returned 0 or a documented error", i);
		check(!sh->s[i].bad_text, "process %d: no record read was torn or not written", i);
	}
	/* Lies that move head and resv together to the end of the position
	 * space leave a log that is sane and used up (kmsg(5)): only made
	 * anew would it take records again. */
	{
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		struct kmsg_dyn d;

		if (fd >= 0 && pread(fd, &d, sizeof(d), HDR_STATIC) == (ssize_t)sizeof(d))
			printf("at the end: resv %#llx %#llx, head %#llx %#llx\n",
			       (unsigned long long)d.resv_pos, (unsigned long long)d.resv_seq,
			       (unsigned long long)d.head, (unsigned long long)d.head_seq);
		if (fd >= 0 && atomic_load(&d.resv_pos) >= POS_LIMIT - 2 * size) {
			int eseq = 1;

			for (int w = 0; w < WRITERS; w++)
				eseq &= sh->calm_err[w] == KMSG_ESEQ;
			check(eseq, "the lies used up the positions: every writer says KMSG_ESEQ");
			close(fd);
			goto out;
		}
		if (fd >= 0)
			close(fd);
	}
	for (int w = 0; w < WRITERS; w++)
		check(atomic_load(&sh->calm_done[w]) == CALM,
		      "writer %d: its %d appends after the repair succeeded (%llu, %s)", w, CALM,
		      (unsigned long long)sh->calm_done[w],
		      sh->calm_err[w] ? kmsg_strerror(sh->calm_err[w]) : "no error");

	/* a fresh reader, from the oldest record to the end */
	{
		struct kmsg_reader *r;
		struct kmsg_record rec;
		uint64_t seen[WRITERS] = { 0 }, next[WRITERS] = { 0 }, records = 0, bad = 0;
		int in_order = 1;

		if ((err = kmsg_log_open(&log, path, 0)) < 0 || (err = kmsg_reader_new(&r, log, 0)) < 0) {
			check(0, "the last reader's open: %s", kmsg_strerror(err));
			goto out;
		}
		while ((err = kmsg_reader_next(r, &rec)) == 1) {
			int calm, w;
			uint64_t n;

			if (rec.flags & KMSG_GAP)
				continue;
			records++;
			if (!text_valid(rec.text, rec.text_len, &calm, &w, &n)) {
				bad++;
				continue;
			}
			if (!calm)
				continue;
			/* the calm records that survive eviction: each
			 * writer's last ones, in order, none missing */
			if (seen[w] && n != next[w]) {
				if (in_order)
					printf("writer %d: calm record %llu (seq %llu, lost %llu, "
					       "damaged %llu) after %llu\n", w,
					       (unsigned long long)n, (unsigned long long)rec.seq,
					       (unsigned long long)rec.lost,
					       (unsigned long long)rec.damaged,
					       (unsigned long long)next[w] - 1);
				in_order = 0;
			}
			seen[w]++;
			next[w] = n + 1;
		}
		check(err == 0, "the last reader reads to the end (%s)",
		      err ? kmsg_strerror(err) : "ok");
		check(!bad, "the last reader: every record written whole (%llu of %llu not)",
		      (unsigned long long)bad, (unsigned long long)records);
		check(in_order, "the last reader: each writer's calm records in order, none missing");
		for (int w = 0; w < WRITERS; w++)
			check(next[w] == CALM && seen[w] > 0,
			      "the last reader: writer %d's calm records up to its last (%llu read)",
			      w, (unsigned long long)seen[w]);
		kmsg_reader_free(r);
		kmsg_log_close(log);
	}
out:
	printf("%d passed, %d failed\n", passes, failures + dead);
	if (path == pathbuf && !failures && !dead) {
		unlink(path);
		rmdir(tmp);
	}
	return failures || dead ? 1 : 0;
}
