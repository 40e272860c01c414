/*
 * test_hostile.c - a co-writer that lies.  Every member of a shared log's
 * group may store anything in the dynamic words, while other writers
 * have the log open and append.  None of them may hang or crash: a walk
 * bounded by the ring's size meets the lie and the writer repairs the
 * header from the records (ring.c, A LYING HEADER), or says
 * KMSG_ECORRUPT.  Each case runs in a child with an alarm, so that a
 * hang fails the test instead of holding up the suite.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

TestSuite(hostile, .fini = tu_cleanup);

#define LOG_SIZE (256 * 1024)
#define LIE_APPENDS 1000

/* Runs fn(arg) in a child that has `seconds` to exit 0. */
static void within(unsigned seconds, void (*fn)(void *), void *arg)
{
	pid_t pid = tu_fork();
	int status;

	cr_assert(pid >= 0);
	if (pid == 0) {
		alarm(seconds);
		fn(arg);
		_exit(0);
	}
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(!WIFSIGNALED(status), "the child died of signal %d (%s)", WTERMSIG(status),
		  WTERMSIG(status) == SIGALRM ? "a hang" : "a crash");
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed (%d)",
		  WEXITSTATUS(status));
}

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "%s\n", what);
		_exit(1);
	}
}

/* The dynamic words as another process sees them: its own mapping. */
static struct kmsg_dyn *other_mapping(const char *path, void **map, size_t *len)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	check(fd >= 0, "the co-writer's open");
	*len = HDR_SIZE;
	*map = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(*map != MAP_FAILED, "the co-writer's mapping");
	close(fd);
	return (struct kmsg_dyn *)((char *)*map + HDR_STATIC);
}

struct lie {
	size_t off;       /* of the word in the dynamic part */
	uint64_t add;     /* added to it */
	uint64_t set;     /* or, if not 0, stored */
};

/*
 * A long-lived writer appends, a co-writer adds to one of the dynamic
 * words, and the long-lived one appends again: it must return, having
 * repaired the header and stored its record, and every record it stored
 * must read back.
 */
static void lie_then_append(void *arg)
{
	const struct lie *l = arg;
	const char *path = tu_path("hostile.log");
	struct kmsg_log *log = tu_create("hostile.log", LOG_SIZE, 0), *rd;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t seq, last = 0, n = 0;
	char text[64];
	void *map;
	size_t len;
	struct kmsg_dyn *d;
	int err;

	/* more than a lap, so that every append evicts */
	for (int i = 0; i < 6000; i++)
		tu_append(log, "a record before the lie, long enough to fill the ring");
	d = other_mapping(path, &map, &len);
	if (l->set)
		atomic_store((_Atomic uint64_t *)((char *)d + l->off), l->set);
	else
		atomic_fetch_add((_Atomic uint64_t *)((char *)d + l->off), l->add);
	munmap(map, len);

	for (int i = 0; i < LIE_APPENDS; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;

		snprintf(text, sizeof(text), "after the lie %d", i);
		e.text = text;
		e.text_len = strlen(text);
		err = kmsg_log_append(&seq, log, &e);
		if (err) {
			fprintf(stderr, "append: %s\n", kmsg_strerror(err));
			_exit(1);
		}
	}
	/* the records after the lie, all of them, from a fresh reader */
	check(kmsg_log_open(&rd, path, 0) == 0, "the reader's open");
	check(kmsg_reader_new(&r, rd, 0) == 0, "the reader");
	while ((err = kmsg_reader_next(r, &rec)) == 1) {
		if (rec.flags & KMSG_GAP)
			continue;
		if (rec.text_len >= 13 && !memcmp(rec.text, "after the lie", 13)) {
			snprintf(text, sizeof(text), "after the lie %lu", (unsigned long)n);
			check(rec.text_len == strlen(text) && !memcmp(rec.text, text, rec.text_len),
			      "a record after the lie out of place");
			n++;
			last = rec.seq;
		}
	}
	check(err == 0, "the reader's end");
	check(n == LIE_APPENDS, "a record after the lie missing");
	check(last == seq, "the last record's number");
	kmsg_reader_free(r);
	kmsg_log_close(rd);
	kmsg_log_close(log);
}

#define DYN(f) (offsetof(struct kmsg_dyn, f))

/* The reported one: a long-lived writer spun in the eviction walk. */
Test(hostile, resv_pos_far_ahead)
{
	struct lie l = { DYN(resv_pos), UINT64_C(1) << 52 };
	within(20, lie_then_append, &l);
}

Test(hostile, resv_pos_a_ring_ahead)
{
	struct lie l = { DYN(resv_pos), LOG_SIZE };
	within(20, lie_then_append, &l);
}

Test(hostile, resv_pos_off_the_grid)
{
	struct lie l = { DYN(resv_pos), 4 };
	within(20, lie_then_append, &l);
}

Test(hostile, resv_pos_near_the_limit)
{
	struct lie l = { DYN(resv_pos), UINT64_C(1) << 61 };
	within(20, lie_then_append, &l);
}

Test(hostile, resv_seq_far_ahead)
{
	struct lie l = { DYN(resv_seq), UINT64_C(1) << 60 };
	within(20, lie_then_append, &l);
}

Test(hostile, head_far_ahead)
{
	struct lie l = { DYN(head), UINT64_C(1) << 52 };
	within(20, lie_then_append, &l);
}

Test(hostile, head_far_behind)
{
	struct lie l = { DYN(head), -(UINT64_C(1) << 52) };
	within(20, lie_then_append, &l);
}

Test(hostile, head_seq_far_ahead)
{
	struct lie l = { DYN(head_seq), UINT64_C(1) << 52 };
	within(20, lie_then_append, &l);
}

/* Numbers near the end of their space, which the fast path numbers on
 * from until the space is used up: the repair must not believe them. */
Test(hostile, resv_seq_near_its_end)
{
	struct lie l = { DYN(resv_seq), 0, (RESV_SEQ_MAX - 500) << RESV_OWNER_BITS };
	within(20, lie_then_append, &l);
}

/*
 * A follower that read up to a lying end, far ahead, is beyond the end
 * once a writer has repaired it: the next append must wake it, and its
 * next read find that record, not wait until the writers come round to
 * where the lie had put it.
 */
static void follower_beyond_a_repaired_end(void *arg)
{
	const char *path = tu_path("hostile.log");
	struct kmsg_log *log = tu_create("hostile.log", LOG_SIZE, 0), *rd;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_dyn *d;
	void *map;
	size_t len;
	int err, found = 0;

	(void)arg;
	for (int i = 0; i < 50; i++)
		tu_append(log, "before the lie");
	check(kmsg_log_open(&rd, path, 0) == 0, "the follower's open");
	check(kmsg_reader_new(&r, rd, 0) == 0, "the follower");
	while ((err = kmsg_reader_next(r, &rec)) == 1)
		;
	check(err == 0, "the follower's first read");
	d = other_mapping(path, &map, &len);
	atomic_fetch_add(&d->resv_pos, UINT64_C(1) << 52);
	while ((err = kmsg_reader_next(r, &rec)) == 1)
		;
	atomic_fetch_sub(&d->resv_pos, UINT64_C(1) << 52);
	munmap(map, len);
	tu_append(log, "after the lie");
	check(kmsg_reader_wait(r, 3000) == 1, "the follower was not woken");
	while ((err = kmsg_reader_next(r, &rec)) == 1)
		found |= !(rec.flags & KMSG_GAP) && rec.text_len == 13 &&
			 !memcmp(rec.text, "after the lie", 13);
	check(found, "the follower did not read the record after the lie");
	kmsg_reader_free(r);
	kmsg_log_close(rd);
	kmsg_log_close(log);
}

Test(hostile, follower_beyond_a_repaired_end)
{
	within(20, follower_beyond_a_repaired_end, NULL);
}
