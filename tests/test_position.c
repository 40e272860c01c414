/*
 * test_position.c - kmsg_log_position_resolve(): a kept position against
 * the log's numbering as it is now (kmsg(5), "The numbering's identity").
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "testutil.h"

TestSuite(position, .fini = tu_cleanup);

/* The position after reading every record of log: next and the last time. */
static struct kmsg_position read_all(struct kmsg_log *log)
{
	struct kmsg_position pos = { .next = 0 };
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_stat st;

	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	memcpy(pos.ring_id, st.ring_id, sizeof(pos.ring_id));
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while (kmsg_reader_next(r, &rec) == 1) {
		pos.seq_id = rec.seq_id;
		pos.last_real_ns = rec.real_ns;
	}
	pos.next = kmsg_reader_position(r);
	kmsg_reader_free(r);
	return pos;
}

/* The log's numbering renewed from now on, as by the first writer of a boot. */
static void reboot(struct kmsg_log *log, const char *text)
{
	tu_pretend_reboot(log);
	tu_append(log, text);
}

/* Copies the file name in the test directory to the file name_to. */
static void copy_file(const char *name, const char *name_to)
{
	static char buf[1 << 16];
	int in = open(tu_path(name), O_RDONLY), out;
	ssize_t n;

	/* tu_path()'s buffer is one: the second name after the first open */
	out = open(tu_path(name_to), O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(in >= 0 && out >= 0);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(out, buf, (size_t)n), n);
	close(in);
	close(out);
}

Test(position, bad_arguments)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0);
	struct kmsg_position pos = { .next = 1 };
	uint64_t next;

	cr_assert_eq(kmsg_log_position_resolve(NULL, log, &pos), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_position_resolve(&next, NULL, &pos), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_position_resolve(&next, log, NULL), KMSG_EINVAL);
	kmsg_log_close(log);
}

Test(position, another_log_is_refused)
{
	struct kmsg_log *a = tu_create("a.log", 1 << 20, 0), *b = tu_create("b.log", 1 << 20, 0);
	struct kmsg_position pos;
	uint64_t next = 77;

	tu_append(a, "x");
	pos = read_all(a);
	cr_assert_eq(kmsg_log_position_resolve(&next, b, &pos), KMSG_EOTHERLOG);
	cr_assert_eq(next, 77, "nothing stored");
	kmsg_log_close(a);
	kmsg_log_close(b);
}

Test(position, same_numbering_and_renewals_below_the_position)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0);
	struct kmsg_position pos, untimed;
	uint64_t next;

	tu_append(log, "one");
	tu_append(log, "two");
	pos = read_all(log);
	untimed = pos;
	untimed.last_real_ns = 0;
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &pos), KMSG_POSITION_SAME);
	cr_assert_eq(next, 3);
	/* renewed once and twice, from above the position: the numbers stay */
	reboot(log, "three");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &untimed), KMSG_POSITION_SAME);
	cr_assert_eq(next, 3);
	reboot(log, "four");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &untimed), KMSG_POSITION_SAME);
	cr_assert_eq(next, 3);
	/* a third time: the identity is forgotten; only the time tells */
	reboot(log, "five");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &untimed),
		     KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 1, "the oldest record");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &pos), KMSG_POSITION_SAME);
	cr_assert_eq(next, 3);
	/* a time that is not the record's */
	pos.last_real_ns++;
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &pos), KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 1);
	kmsg_log_close(log);
}

Test(position, numbers_handed_out_again)
{
	struct kmsg_log *log = tu_create("a.log", 1 << 20, 0);
	struct kmsg_position pos, untimed;
	uint64_t next;

	tu_append(log, "one");
	copy_file("a.log", "backup");
	tu_append(log, "two");
	tu_append(log, "three");
	pos = read_all(log);
	untimed = pos;
	untimed.last_real_ns = 0;
	kmsg_log_close(log);

	/* the copy put back: within the boot, the position lies past its end */
	copy_file("backup", "a.log");
	cr_assert_eq(kmsg_log_open(&log, tu_path("a.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &untimed),
		     KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 1, "the oldest record: where the copy ended is unknown");
	/* then a reboot renews the numbering from 2: the position's own
	 * identity is now the one before, and 2 and 3 were handed out again */
	reboot(log, "new two");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &untimed),
		     KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 2, "where the numbering began again");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &pos), KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 2, "record 2 is gone: the identities decide");
	tu_append(log, "new three");
	cr_assert_eq(kmsg_log_position_resolve(&next, log, &pos), KMSG_POSITION_RENUMBERED);
	cr_assert_eq(next, 2, "record 3 has another time");
	kmsg_log_close(log);
}
