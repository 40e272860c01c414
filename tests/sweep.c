/*
 * sweep.c - kmsg-sweep: one append interrupted after every single
 * instruction, by ptrace single-stepping, and each time checked.
 *
 *   kmsg-sweep [--mode kill|stop] [--path plain|evict|pad|short|first|all]
 *              [--stride N] [--cold] [--others N] [--lap] [--bound-ms MS]
 *
 * A random SIGKILL finds the windows of a protocol only by luck; stepping
 * a writer one instruction at a time and interrupting it at step k, for
 * every k until its append has returned, visits each of them.  For each
 * step a child process opens a fresh copy of a prepared log, appends a
 * warm-up record (so that its registration as a writer is behind it;
 * --cold sweeps that too), stops itself, and is then stepped k
 * instructions into its next append, the swept one, and then:
 *
 *   kill  killed there (SIGKILL).  The log must read back consistent: the
 *         numbers contiguous, no loss or damage reported, the swept record
 *         whole or absent.  Then another writer appends, and its record
 *         gets the next number and reads back.
 *   stop  left stopped there (a ptrace stop holds it as SIGSTOP does)
 *         while another writer appends --others records (with --lap,
 *         more than a lap of them); then it is let go and finishes.
 *         Every record whose append succeeded must be in the log once
 *         (or evicted and counted), the swept one included if its append
 *         succeeded; and no append of the other writer may fail or take
 *         longer than --bound-ms (the protocol's promised bound).
 *
 * The paths (--path) are the ways an append goes, set up by filling the
 * ring before the copy is taken:
 *
 *   plain  room after the tail: no eviction;
 *   evict  a full ring: the append evicts the oldest records first;
 *   pad    too little room before the end of the lap for the record: a
 *          pad record fills it and the record starts the next lap;
 *   short  the record leaves fewer bytes than a record header before the
 *          end of the lap, which every reader skips implicitly;
 *   first  (--cold only) the log's first record, at position 0, where
 *          the new file's zeroed tag reads as committed until it is
 *          marked (ring.c, BLOCK STATES).
 *
 * Every step after a store to the log is visited: a kill can leave the
 * file only in one of the states between two stores, so those steps visit
 * each state a kill can leave (found by stepping the append through once,
 * comparing the file after each instruction).  --stride N also visits
 * every Nth step, from --offset (CI: a different offset each run,
 * printed); 1, the default, visits all.  Tracer and child run on
 * one CPU: a single step is then a switch between two processes on one
 * core (about 40 us in a VM here, three times more across CPUs).  The
 * last lines are key=value figures; exit status 0 if every step passed,
 * 1 if one failed (its log is kept and named), 2 on bad usage.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <sched.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define LOG_SIZE   16384u
#define SWEPT_TEXT 104u          /* a 168-byte record */
#define WARM_TEXT  8u            /* a 72-byte record */

static const char *progname = "kmsg-sweep";
static char dir[] = "/tmp/kmsg-sweep-XXXXXX";
static int keep;

static void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * INT64_C(1000000000) + ts.tv_nsec;
}

static void copy_file(const char *from, const char *to)
{
	static unsigned char buf[LOG_SIZE];
	int in = open(from, O_RDONLY), out;
	ssize_t n;

	if (in < 0)
		die("%s: %s", from, strerror(errno));
	n = read(in, buf, sizeof(buf));
	close(in);
	out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (n != (ssize_t)sizeof(buf) || out < 0 || write(out, buf, (size_t)n) != n)
		die("%s: cannot copy the prepared log", to);
	close(out);
}

static int append_text(struct kmsg_log *log, const char *text, size_t len, uint64_t *seq)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;

	e.text = text;
	e.text_len = len;
	return kmsg_log_append(seq, log, &e);
}

/* The data offset where the next record goes, as a writer sees it. */
static uint64_t tail_phys(struct kmsg_log *log)
{
	uint64_t t = ring_norm(log, atomic_load(&log->dyn->resv_pos));

	return t % log->data_size;
}

/*
 * Makes the prepared log at path for one path of the append: after the
 * child's warm-up record (if not cold) the tail is where that path starts.
 */
static void prepare(const char *path, const char *which, int cold)
{
	struct kmsg_create_opts o = { KMSG_CREATE_OPTS_VERSION, LOG_SIZE, 1024, 0600, 1 };
	static char text[1024];
	struct kmsg_log *log;
	uint64_t d, want, warm = rec_size(WARM_TEXT, 0), rec = rec_size(SWEPT_TEXT, 0);
	int rc;

	unlink(path);
	rc = kmsg_log_create(&log, path, &o, 0);
	if (rc < 0)
		die("%s: %s", path, kmsg_strerror(rc));
	memset(text, 'f', sizeof(text));
	d = log->data_size;
	if (!strcmp(which, "first")) {
		if (!cold)
			die("the path 'first' needs --cold: a warm-up append would take position 0");
		kmsg_log_close(log);
		return;
	}
	if (!strcmp(which, "plain"))
		want = 5 * 200;
	else if (!strcmp(which, "evict"))
		want = d / 2;
	else if (!strcmp(which, "pad"))
		want = d - (rec - 48);      /* room for a header, not the record */
	else if (!strcmp(which, "short"))
		want = d - rec - 40;        /* 40 bytes left after the record */
	else
		die("unknown path '%s' (plain, evict, pad, short, first, all)", which);
	if (!cold)
		want -= warm;
	want &= ~(uint64_t)(REC_ALIGN - 1);
	/* plain: records up to the offset in the first lap; the others: a
	 * lap and more, so that the ring is full and evicts */
	for (int n = 0;; n++) {
		uint64_t t = atomic_load(&log->dyn->resv_pos), phys = tail_phys(log);
		uint64_t dist = (want + d - phys) % d, room = d - phys, s;
		uint64_t h = atomic_load(&log->dyn->head);
		/* eviction runs ahead (ring.c): the swept append evicts only
		 * once the slack it left is used up */
		int evicts = t + (cold ? 0 : warm) + rec + REC_HDR > d + h;

		if (dist == 0 && (!strcmp(which, "plain") || (t >= d && evicts)))
			break;
		if (n > 100000)
			die("cannot set the ring up for '%s'", which);
		if (dist == 0)
			dist = d;
		/* small records: the oldest one at the tail is then smaller
		 * than the swept record, which must evict (but plain) */
		s = dist < room ? dist : room;
		if (s > 128)
			s = 128 - 8 * (uint64_t)(n % 5);  /* sizes vary, so that
				the slack eviction leaves differs from lap to lap */
		/* never leave a gap smaller than a header to fill later */
		if (dist - s > 0 && dist - s < REC_HDR + REC_ALIGN)
			s = s > 2 * REC_HDR + REC_ALIGN ? s - 2 * REC_HDR : REC_HDR;
		rc = append_text(log, text, s - REC_HDR, NULL);
		if (rc < 0)
			die("%s: %s", path, kmsg_strerror(rc));
	}
	{
		uint64_t head = atomic_load(&log->dyn->head), tail = atomic_load(&log->dyn->resv_pos);
		int evicts = tail + (cold ? 0 : warm) + rec + REC_HDR > d + head;

		if (evicts != !!strcmp(which, "plain"))
			die("the ring is not set up for '%s': head %" PRIu64 ", tail %" PRIu64,
			    which, head, tail);
	}
	kmsg_log_close(log);
}

struct result { int rc; uint64_t seq; };

/*
 * The child: opens the copy, appends the warm-up record (unless cold),
 * says its number, stops itself, and then does the swept append and says
 * how it went.
 */
static void child(const char *path, int cold, int out)
{
	static char text[SWEPT_TEXT];
	struct kmsg_log *log;
	struct result r = { 0, 0 };

	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
		_exit(100);
	if (kmsg_log_open(&log, path, KMSG_OPEN_WRITE) < 0)
		_exit(101);
	if (!cold && append_text(log, "warm-up!", WARM_TEXT, &r.seq) < 0)
		_exit(102);
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(103);
	memset(text, 's', sizeof(text));
	memcpy(text, "swept", 5);
	raise(SIGSTOP);
	r.rc = append_text(log, text, sizeof(text), &r.seq);
	if (write(out, &r, sizeof(r)) != sizeof(r))
		_exit(104);
	_exit(0);
}

struct seen {
	uint64_t first, last, count, lost;
	int swept, after, bad;   /* swept: the swept record's number, 0 if absent */
	uint64_t swept_seq;
	char why[200];
};

/*
 * Reads the whole log as a new reader does and checks it: contiguous
 * numbers, nothing reported lost or damaged, no record but those written.
 */
static void scan(const char *path, struct seen *s, uint64_t expect_lost)
{
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t lost = 0;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = kmsg_log_open(&log, path, KMSG_OPEN_READ);
	if (rc == 0)
		rc = kmsg_reader_new(&r, log, 0);
	if (rc < 0) {
		snprintf(s->why, sizeof(s->why), "cannot read it: %s", kmsg_strerror(rc));
		s->bad = 1;
		return;
	}
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		lost += rec.lost + rec.damaged;
		if (rec.damaged && !s->bad) {
			snprintf(s->why, sizeof(s->why), "%" PRIu64 " damaged before seq %"
				 PRIu64, rec.damaged, rec.seq);
			s->bad = 1;
		}
		if (rec.flags & KMSG_GAP)
			continue;
		if (s->count && rec.seq != s->last + 1 + rec.lost && !s->bad) {
			snprintf(s->why, sizeof(s->why), "seq %" PRIu64 " after %" PRIu64
				 " with %" PRIu64 " reported lost", rec.seq, s->last, rec.lost);
			s->bad = 1;
		}
		if (!s->count)
			s->first = rec.seq;
		s->last = rec.seq;
		s->count++;
		if (rec.text_len == SWEPT_TEXT && !memcmp(rec.text, "swept", 5)) {
			s->swept++;
			s->swept_seq = rec.seq;
		} else if (rec.text_len >= 5 && !memcmp(rec.text, "other", 5)) {
			s->after++;
		} else if (rec.text_len != WARM_TEXT && rec.text_len && rec.text[0] != 'f' &&
			   !s->bad) {
			snprintf(s->why, sizeof(s->why), "a record nobody wrote, seq %" PRIu64,
				 rec.seq);
			s->bad = 1;
		}
	}
	if (rc < 0 && !s->bad) {
		snprintf(s->why, sizeof(s->why), "reading: %s", kmsg_strerror(rc));
		s->bad = 1;
	}
	s->lost = lost;
	if (lost > expect_lost && !s->bad) {
		snprintf(s->why, sizeof(s->why), "%" PRIu64 " records reported lost", lost);
		s->bad = 1;
	}
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

struct figures {
	uint64_t steps, failed, other_appends, other_failed, holes;
	int64_t other_max_ns, recover_max_ns;
};

/* Opens the log as another writer and appends n records, timing each. */
static int others(const char *path, int n, int64_t bound_ms, struct figures *f,
		  uint64_t *seqs, char *why, size_t whylen)
{
	struct kmsg_log *log;
	char text[64];
	int64_t t0 = now_ns(), t;
	int rc, bad = 0;

	rc = kmsg_log_open(&log, path, KMSG_OPEN_WRITE);
	t = now_ns() - t0;
	if (t > f->other_max_ns)
		f->other_max_ns = t;
	if (rc < 0) {
		snprintf(why, whylen, "another writer cannot open it: %s", kmsg_strerror(rc));
		f->other_failed++;
		return 1;
	}
	for (int i = 0; i < n; i++) {
		int len = snprintf(text, sizeof(text), "other %d", i);

		t0 = now_ns();
		rc = append_text(log, text, (size_t)len, &seqs[i]);
		t = now_ns() - t0;
		f->other_appends++;
		if (t > f->other_max_ns)
			f->other_max_ns = t;
		if (rc < 0) {
			f->other_failed++;
			if (!bad++)
				snprintf(why, whylen, "another writer's append %d failed after "
					 "%.1f ms: %s", i, t / 1e6, kmsg_strerror(rc));
			/* the rest would wait as long: one failure says it */
			for (; i < n; i++)
				seqs[i] = 0;
			break;
		} else if (t > bound_ms * 1000000 && !bad++) {
			snprintf(why, whylen, "another writer's append %d took %.1f ms "
				 "(bound %" PRId64 " ms)", i, t / 1e6, bound_ms);
		}
	}
	kmsg_log_close(log);
	return bad;
}

/*
 * One step: the child stepped k instructions into its append, then killed
 * or stopped.  Returns 1 if the child had finished before step k (the
 * sweep is over), 0 otherwise; *failed set if a check failed.
 */
/*
 * Starts a child on a fresh copy of tmpl and waits until it has stopped
 * itself before the swept append; *warm gets the number of the record
 * before that append.  Returns the child, *fd the pipe it reports on.
 */
static pid_t spawn(const char *tmpl, const char *copy, int cold, uint64_t base,
		   struct result *warm, int *fd)
{
	int p[2], st;
	pid_t pid;

	copy_file(tmpl, copy);
	if (pipe(p) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		close(p[0]);
		child(copy, cold, p[1]);
	}
	close(p[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFSTOPPED(st))
		die("the child did not stop before its append (status %#x)", st);
	if (read(p[0], warm, sizeof(*warm)) != sizeof(*warm))
		die("the child said nothing before its append");
	if (cold)
		warm->seq = base;  /* the last record before the swept one */
	*fd = p[0];
	return pid;
}

/* Runs the child one instruction on; returns 1 if it has ended. */
static int single_step(pid_t pid)
{
	int st, sig = 0;

	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, pid, NULL, (void *)(long)sig) < 0)
			die("PTRACE_SINGLESTEP: %s", strerror(errno));
		if (waitpid(pid, &st, 0) != pid)
			die("waitpid: %s", strerror(errno));
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return 1;
		/* a signal other than the trap of a step: deliver it */
		if (WIFSTOPPED(st) && WSTOPSIG(st) != SIGTRAP) {
			sig = WSTOPSIG(st);
			continue;
		}
		return 0;
	}
}

/*
 * Stores to the log, seen from outside: the file as it was after the
 * last step, compared after each step with what it is now.  A kill can
 * leave the file only in one of the states between two stores, so
 * stopping just after each store (and at step 0) visits every state a
 * kill can leave.  Counting stores rather than instructions keeps the
 * visit exact when a run takes another branch than the last (a clock
 * re-read, a look for followers: both depend on the time).
 */
struct watch {
	const unsigned char *map;
	unsigned char before[LOG_SIZE];
	uint64_t stores;
};

static void watch_open(struct watch *w, const char *copy)
{
	int fd = open(copy, O_RDONLY);

	w->map = fd < 0 ? MAP_FAILED : mmap(NULL, LOG_SIZE, PROT_READ, MAP_SHARED, fd, 0);
	if (w->map == MAP_FAILED)
		die("%s: cannot map it: %s", copy, strerror(errno));
	close(fd);
	memcpy(w->before, w->map, LOG_SIZE);
	w->stores = 0;
}

/* single_step(), counting a store if the file changed. */
static int watched_step(pid_t pid, struct watch *w)
{
	if (single_step(pid))
		return 1;
	if (memcmp(w->before, w->map, LOG_SIZE)) {
		memcpy(w->before, w->map, LOG_SIZE);
		w->stores++;
	}
	return 0;
}

static void watch_close(struct watch *w)
{
	munmap((void *)w->map, LOG_SIZE);
}

/* Steps a child through its whole append: how many steps and stores. */
static uint64_t trace_stores(const char *tmpl, const char *copy, int cold, uint64_t *stores)
{
	static struct watch w;
	struct result warm;
	uint64_t n = 1;
	int fd;
	pid_t pid = spawn(tmpl, copy, cold, 0, &warm, &fd);

	watch_open(&w, copy);
	while (!watched_step(pid, &w))
		n++;
	*stores = w.stores;
	watch_close(&w);
	close(fd);
	return n;
}

/*
 * One visit: a child stepped k instructions into its append, or (store
 * not 0) until just after its store-th store to the log, then killed or
 * stopped and the log checked.  Returns 1 if the child finished first
 * (the sweep is over), 0 otherwise, with *failed set if a check failed.
 */
static int step(const char *tmpl, const char *copy, uint64_t k, uint64_t store,
		int stop_mode, int cold, uint64_t base, int nothers, int64_t bound_ms,
		struct figures *f, int *failed, char *why, size_t whylen)
{
	static struct watch w;
	struct result warm, done = { -1, 0 };
	struct seen s;
	uint64_t seqs[4096];
	int p[1], st, ended = 0;
	pid_t pid = spawn(tmpl, copy, cold, base, &warm, &p[0]);

	if (store) {
		watch_open(&w, copy);
		while (w.stores < store && !(ended = watched_step(pid, &w)))
			;
		watch_close(&w);
	} else {
		for (uint64_t i = 0; i < k && !ended; i++)
			ended = single_step(pid);
	}
	if (ended) {
		if (read(p[0], &done, sizeof(done)) < 0)
			die("the child's pipe: %s", strerror(errno));
		close(p[0]);
		return 1;
	}
	f->steps++;
	*failed = 0;
	if (!stop_mode) {
		int64_t t0;
		uint64_t seq, hole;
		struct kmsg_log *log;
		int rc;

		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		close(p[0]);
		/* Killed after it reserved, the append leaves its number to a
		 * hole, which readers count as one lost record (ring.c,
		 * R4); else the record is whole or absent. */
		scan(copy, &s, 1);
		if (s.bad) {
			snprintf(why, whylen, "after the kill: %s", s.why);
			*failed = 1;
			return 0;
		}
		hole = s.lost;
		if (s.swept > 1 || (s.swept && (s.swept_seq != warm.seq + 1 || hole)) ||
		    s.last != warm.seq + (uint64_t)s.swept) {
			snprintf(why, whylen, "after the kill: last seq %" PRIu64 ", warm-up %"
				 PRIu64 ", swept record %d times, %" PRIu64 " lost", s.last,
				 warm.seq, s.swept, hole);
			*failed = 1;
			return 0;
		}
		/* the next writer: numbers on, after the record or the hole */
		t0 = now_ns();
		rc = kmsg_log_open(&log, copy, KMSG_OPEN_WRITE);
		if (rc == 0)
			rc = append_text(log, "other", 5, &seq);
		if (rc == 0)
			kmsg_log_close(log);
		t0 = now_ns() - t0;
		if (t0 > f->recover_max_ns)
			f->recover_max_ns = t0;
		if (rc < 0) {
			snprintf(why, whylen, "the next writer: %s", kmsg_strerror(rc));
			*failed = 1;
			return 0;
		}
		scan(copy, &s, hole);
		if (s.bad || s.after != 1 || s.last != seq || s.swept > 1 || s.lost != hole ||
		    (s.swept && s.swept_seq != warm.seq + 1) ||
		    seq != warm.seq + 1 + (uint64_t)s.swept + hole) {
			snprintf(why, whylen, "after the next writer: %s", s.bad ? s.why :
				 "the numbers do not follow on from the warm-up record");
			*failed = 1;
		}
		if (hole)
			f->holes++;
		return 0;
	}
	/* stop: the child holds still while another writer appends */
	if (others(copy, nothers, bound_ms, f, seqs, why, whylen))
		*failed = 1;
	if (ptrace(PTRACE_DETACH, pid, NULL, NULL) < 0)
		die("PTRACE_DETACH: %s", strerror(errno));
	kill(pid, SIGCONT);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the swept child did not finish (status %#x)", st);
	if (read(p[0], &done, sizeof(done)) != sizeof(done))
		die("the swept child said nothing after its append");
	close(p[0]);
	{
		/* records that more than a lap of others evicted are counted,
		 * not reported lost: a new reader starts at the oldest */
		scan(copy, &s, 0);
		if (s.bad && !*failed) {
			snprintf(why, whylen, "after the stop: %s", s.why);
			*failed = 1;
		}
		if (!*failed && done.rc == 0 && done.seq >= s.first && s.swept != 1) {
			snprintf(why, whylen, "the swept append returned seq %" PRIu64
				 " but the log holds it %d times", done.seq, s.swept);
			*failed = 1;
		}
		if (!*failed) {
			uint64_t want = 0;

			for (int i = 0; i < nothers; i++)
				want += seqs[i] >= s.first;
			if (s.after != (int)want) {
				snprintf(why, whylen, "%" PRIu64 " of the other writer's records "
					 "should be there, %d are", want, s.after);
				*failed = 1;
			}
		}
	}
	return 0;
}

static void cleanup(void)
{
	char cmd[64];

	if (keep)
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s: could not remove %s\n", progname, dir);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "mode", required_argument, NULL, 'm' },
		{ "path", required_argument, NULL, 'p' },
		{ "stride", required_argument, NULL, 's' },
		{ "cold", no_argument, NULL, 'c' },
		{ "others", required_argument, NULL, 'o' },
		{ "lap", no_argument, NULL, 'l' },
		{ "bound-ms", required_argument, NULL, 'b' },
		{ "offset", required_argument, NULL, 'O' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *all[] = { "plain", "evict", "pad", "short", "first" };
	const char *mode = "kill", *paths = "all";
	long stride = 1, nothers = 5, bound_ms = 10, offset = 0;
	cpu_set_t cpu;
	int cold = 0, lap = 0, c, stop_mode, status = 0;
	struct figures f = { 0 };
	uint64_t nstores = 0;
	int64_t t0 = now_ns();

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'm': mode = optarg; break;
		case 'p': paths = optarg; break;
		case 's': stride = strtol(optarg, NULL, 10); break;
		case 'c': cold = 1; break;
		case 'o': nothers = strtol(optarg, NULL, 10); break;
		case 'l': lap = 1; break;
		case 'b': bound_ms = strtol(optarg, NULL, 10); break;
		case 'O':
			offset = !strcmp(optarg, "random") ? -1 : strtol(optarg, NULL, 10);
			break;
		case 'h':
			printf("usage: %s [--mode kill|stop] [--path plain|evict|pad|short|first|all]\n"
			       "       [--stride N] [--offset N|random] [--cold] [--others N] [--lap]\n"
			       "       [--bound-ms MS]\n",
			       progname);
			return 0;
		default:
			return 2;
		}
	}
	if (offset < 0)
		offset = (long)(now_ns() / 1000 % stride);
	if (optind != argc || stride < 1 || offset >= stride || nothers < 1 || nothers > 4096 || bound_ms < 1 ||
	    (strcmp(mode, "kill") && strcmp(mode, "stop"))) {
		fprintf(stderr, "%s: bad usage (see --help)\n", progname);
		return 2;
	}
	stop_mode = !strcmp(mode, "stop");
	setvbuf(stdout, NULL, _IOLBF, 0);
	c = sched_getcpu();
	CPU_ZERO(&cpu);
	CPU_SET(c < 0 ? 0 : c, &cpu);
	sched_setaffinity(0, sizeof(cpu), &cpu);
	printf("%s: stride %ld from step %ld\n", mode, stride, offset);
	if (lap)
		nothers = (long)(LOG_SIZE / rec_size(8, 0)) + 20;
	if (!mkdtemp(dir))
		die("mkdtemp: %s", strerror(errno));
	atexit(cleanup);
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		char tmpl[64], copy[64], why[256];
		uint64_t k, path_steps = 0, path_failed = 0, base, total, nat, ai;
		int shorter;

		if (strcmp(paths, "all") && strcmp(paths, all[i]))
			continue;
		if (!strcmp(all[i], "first") && !cold && !strcmp(paths, "all"))
			continue;  /* a warm-up append would take its place */
		snprintf(tmpl, sizeof(tmpl), "%s/%s", dir, all[i]);
		snprintf(copy, sizeof(copy), "%s/%s.step", dir, all[i]);
		prepare(tmpl, all[i], cold);
		{
			struct seen s;

			scan(tmpl, &s, 0);
			if (s.bad)
				die("%s: the prepared log: %s", tmpl, s.why);
			base = s.last;
		}
		total = trace_stores(tmpl, copy, cold, &nat);
		nstores += nat;
		/* just after each store, then every stride-th step from the
		 * offset until the append has returned */
		for (ai = 1, k = (uint64_t)offset, shorter = 0;; ) {
			int failed = 0, store = ai <= nat;

			why[0] = '\0';
			if (step(tmpl, copy, k, store ? ai : 0, stop_mode, cold, base,
				 (int)nothers, bound_ms, &f, &failed, why, sizeof(why))) {
				/* An append may take a path of fewer stores than
				 * the traced one where time decides (a stall
				 * waited out, the wall-clock mark raised once a
				 * second): the same visit again, and only an
				 * append that ends early every time is wrong. */
				if (store && ++shorter < 3)
					continue;
				if (store)
					die("%s: the append ended before its store %" PRIu64
					    " of %" PRIu64 " in 3 runs", all[i], ai, nat);
				break;
			}
			shorter = 0;
			path_steps++;
			if (failed) {
				char kept[96];

				f.failed++;
				if (path_failed++ < 5) {
					snprintf(kept, sizeof(kept), "%s/%s.fail-%s%" PRIu64, dir,
						 all[i], store ? "store" : "", store ? ai : k);
					rename(copy, kept);
					keep = 1;
					printf("%s: %s %s %" PRIu64 ": %s (log kept: %s)\n", mode,
					       all[i], store ? "after store" : "at step",
					       store ? ai : k, why, kept);
				}
			}
			if (store)
				ai++;
			else
				k += (uint64_t)stride;
		}
		printf("%s: %s: %" PRIu64 " visits: after each of %" PRIu64 " stores to the log, "
		       "and %" PRIu64 " of %" PRIu64 " steps; %" PRIu64 " failed\n", mode, all[i],
		       path_steps, nat, path_steps - nat, total, path_failed);
		if (path_failed)
			status = 1;
	}
	printf("mode=%s\nvisits=%" PRIu64 "\nstores=%" PRIu64 "\nfailed=%" PRIu64 "\n", mode,
	       f.steps, nstores, f.failed);
	if (stop_mode)
		printf("other_appends=%" PRIu64 "\nother_failed=%" PRIu64
		       "\nother_max_ms=%.2f\n", f.other_appends, f.other_failed,
		       f.other_max_ns / 1e6);
	else
		printf("recover_max_ms=%.2f\nholes=%" PRIu64 "\n", f.recover_max_ns / 1e6,
		       f.holes);
	printf("seconds=%.1f\n", (now_ns() - t0) / 1e9);
	if (keep)
		printf("%s: failing logs kept in %s\n", progname, dir);
	return status;
}
