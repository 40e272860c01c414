/*
 * test_log.c - creating and opening logs: sizes, safety of creation,
 * validation of hostile files, read-only opening.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "internal.h"
#include "crc32c.h"
#include "testutil.h"

TestSuite(log, .fini = tu_cleanup);

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, buf, len), (ssize_t)len);
	close(fd);
}

Test(log, create_default_size_and_reopen_keeps_records)
{
	struct kmsg_log *log;
	struct kmsg_stat st;
	struct stat sb;
	int r = kmsg_log_create(&log, tu_path("a.log"), NULL, 0);

	cr_assert_eq(r, 0, "%s", kmsg_strerror(r));
	cr_assert_eq(stat(tu_path("a.log"), &sb), 0);
	cr_assert_eq(sb.st_size, KMSG_DEFAULT_SIZE);
	/* preallocated: the blocks are there, so a full disk shows now */
	cr_assert_geq((uint64_t)sb.st_blocks * 512, KMSG_DEFAULT_SIZE);
	cr_assert_eq(tu_append(log, "one"), 1);
	cr_assert_eq(tu_append(log, "two"), 2);
	kmsg_log_close(log);

	cr_assert_eq(kmsg_log_open(&log, tu_path("a.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(tu_append(log, "three"), 3, "sequence numbers continue after reopen");
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(st.first_seq, 1);
	cr_assert_eq(st.next_seq, 4);
	cr_assert_eq(st.max_text, KMSG_DEFAULT_MAX_TEXT);
	kmsg_log_close(log);
}

Test(log, mode_is_0640_under_umask)
{
	struct kmsg_log *log;
	struct stat sb;
	mode_t old = umask(027);
	cr_assert_eq(kmsg_log_create(&log, tu_path("m.log"), NULL, 0), 0);
	umask(old);
	cr_assert_eq(stat(tu_path("m.log"), &sb), 0);
	cr_assert_eq(sb.st_mode & 07777, 0640);
	kmsg_log_close(log);
}

Test(log, sizes_out_of_range_are_refused)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;

	o.size = 2048;
	cr_assert_eq(kmsg_log_create(&log, tu_path("s.log"), &o, 0), KMSG_ESIZE);
	o.size = 4096 * 3 + 100;
	cr_assert_eq(kmsg_log_create(&log, tu_path("s.log"), &o, 0), KMSG_ESIZE);
	o.size = 4096;       /* the first format's smallest: no room for the
	                        second's auxiliary area and a ring */
	cr_assert_eq(kmsg_log_create(&log, tu_path("s.log"), &o, 0), KMSG_ESIZE);
	o.size = KMSG_MIN_SIZE;
	o.max_text = 4000;   /* no room for two such records in 8 KiB */
	cr_assert_eq(kmsg_log_create(&log, tu_path("s.log"), &o, 0), KMSG_ESIZE);
	o.max_text = 0;
	cr_assert_eq(kmsg_log_create(&log, tu_path("s.log"), &o, 0), KMSG_ETOOLONG);
	cr_assert_eq(access(tu_path("s.log"), F_OK), -1, "nothing is left behind");
}

Test(log, smallest_log_works)
{
	struct kmsg_log *log = tu_create("tiny.log", KMSG_MIN_SIZE, 0);
	char text[1024];
	memset(text, 'x', sizeof(text));
	for (int i = 0; i < 50; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = (size_t)(i * 97) % sizeof(text) + 1;
		cr_assert_eq(kmsg_log_append(NULL, log, &e), 0);
	}
	uint64_t first, last;
	size_t n = tu_count(log, &first, &last);
	cr_assert_geq(n, 2);
	cr_assert_eq(last, 50);
	cr_assert_eq(last - first + 1, n);
	kmsg_log_close(log);
}

Test(log, symlink_at_path_is_refused)
{
	struct kmsg_log *log;
	char target[512];
	snprintf(target, sizeof(target), "%s", tu_path("target"));
	cr_assert_eq(symlink(target, tu_path("link.log")), 0);
	cr_assert_eq(kmsg_log_create(&log, tu_path("link.log"), NULL, 0), -ELOOP);
	cr_assert_eq(access(tu_path("target"), F_OK), -1, "the link target was not created");
}

Test(log, foreign_owned_file_is_refused_on_create)
{
	struct kmsg_log *log;
	if (geteuid() != 0)
		cr_skip_test("needs root to give a file away");
	cr_assert_eq(kmsg_log_create(&log, tu_path("f.log"), NULL, 0), 0);
	kmsg_log_close(log);
	cr_assert_eq(chown(tu_path("f.log"), 12345, 12345), 0);
	cr_assert_eq(kmsg_log_create(&log, tu_path("f.log"), NULL, 0), -EPERM);
	/* every open for writing: a file another user owns may be one
	 * planted for root to write through */
	cr_assert_eq(kmsg_log_open(&log, tu_path("f.log"), KMSG_OPEN_WRITE), -EPERM);
	cr_assert_eq(kmsg_log_open(&log, tu_path("f.log"), 0), 0, "reading it is fine");
	kmsg_log_close(log);
}

/* Writing never goes through a symbolic link, nor waits on a FIFO. */
Test(log, open_for_writing_takes_no_link_nor_fifo)
{
	struct kmsg_log *log = tu_create("real.log", 65536, 0);
	kmsg_log_close(log);
	char real[512];

	snprintf(real, sizeof(real), "%s", tu_path("real.log"));
	cr_assert_eq(symlink(real, tu_path("link.log")), 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("link.log"), KMSG_OPEN_WRITE), -ELOOP);
	cr_assert_eq(kmsg_log_create(&log, tu_path("link.log"), NULL, 0), -ELOOP);
	cr_assert_eq(kmsg_log_open(&log, tu_path("link.log"), 0), 0, "reading follows it");
	kmsg_log_close(log);
	cr_assert_eq(mkfifo(tu_path("fifo"), 0600), 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("fifo"), 0), KMSG_ENOTLOG, "no writer: not waited on");
	cr_assert_eq(kmsg_log_open(&log, tu_path("fifo"), KMSG_OPEN_WRITE), KMSG_ENOTLOG);
	cr_assert_eq(kmsg_log_create(&log, tu_path("fifo"), NULL, 0), KMSG_ENOTLOG);
}

/* An empty file (logrotate's copytruncate, or create) is a log not yet
 * made: readers say so, the first writer makes it in the same inode. */
Test(log, empty_file_is_made_by_the_first_writer)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log;
	struct stat before, after;
	uint64_t seq;

	write_file(tu_path("e.log"), "", 0);
	cr_assert_eq(chmod(tu_path("e.log"), 0604), 0);
	cr_assert_eq(stat(tu_path("e.log"), &before), 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("e.log"), 0), KMSG_EEMPTY);
	cr_assert_eq(kmsg_log_open(&log, tu_path("e.log"), KMSG_OPEN_WRITE), KMSG_EEMPTY,
		     "an open without the options of a new log does not make one");
	o.size = 65536;
	cr_assert_eq(kmsg_log_create(&log, tu_path("e.log"), &o, 0), 0);
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
	cr_assert_eq(seq, 1);
	kmsg_log_close(log);
	cr_assert_eq(stat(tu_path("e.log"), &after), 0);
	cr_assert_eq(after.st_ino, before.st_ino, "the same file");
	cr_assert_eq(after.st_mode & 07777, 0604, "its mode kept");
	cr_assert_eq(after.st_size, 65536, "the size asked for");
	cr_assert_eq(kmsg_log_open(&log, tu_path("e.log"), 0), 0);
	cr_assert_eq(tu_count(log, NULL, NULL), 1);
	kmsg_log_close(log);
}

static void *empty_racer(void *arg)
{
	struct kmsg_log *log;
	int r = kmsg_log_create(&log, arg, NULL, 0);
	if (r == 0) {
		for (int i = 0; i < 50; i++)
			tu_append(log, "racer");
		kmsg_log_close(log);
	}
	return (void *)(intptr_t)r;
}

/* Writers racing on one empty file make one log between them, and lose
 * no record to a second making. */
Test(log, racing_writers_on_an_empty_file_make_one_log)
{
	for (int round = 0; round < 20; round++) {
		pthread_t t[8];
		struct kmsg_log *log;
		char path[512];

		snprintf(path, sizeof(path), "%s", tu_path("race.log"));
		unlink(path);
		write_file(path, "", 0);
		for (int i = 0; i < 8; i++)
			pthread_create(&t[i], NULL, empty_racer, path);
		for (int i = 0; i < 8; i++) {
			void *r;
			pthread_join(t[i], &r);
			cr_assert_eq((intptr_t)r, 0, "round %d: every writer opens", round);
		}
		cr_assert_eq(kmsg_log_open(&log, path, 0), 0);
		cr_assert_eq(tu_count(log, NULL, NULL), 400, "round %d: every record kept", round);
		kmsg_log_close(log);
	}
}

static void *racer(void *arg)
{
	struct kmsg_log *log;
	int r = kmsg_log_create(&log, arg, NULL, 0);
	if (r == 0) {
		tu_append(log, "racer");
		kmsg_log_close(log);
	}
	return (void *)(intptr_t)r;
}

Test(log, racing_creators_share_one_file)
{
	pthread_t t[8];
	char path[512];
	struct kmsg_log *log;

	snprintf(path, sizeof(path), "%s", tu_path("race.log"));
	for (int i = 0; i < 8; i++)
		pthread_create(&t[i], NULL, racer, path);
	for (int i = 0; i < 8; i++) {
		void *ret;
		pthread_join(t[i], &ret);
		cr_assert_eq((intptr_t)ret, 0);
	}
	cr_assert_eq(kmsg_log_open(&log, path, 0), 0);
	cr_assert_eq(tu_count(log, NULL, NULL), 8, "every creator's record is in the one file");
	kmsg_log_close(log);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) -eq 1", tu_dir());
	cr_assert_eq(system(cmd), 0, "only the log is left in the directory");
}

Test(log, not_a_log_is_refused)
{
	struct kmsg_log *log;
	char junk[8192];
	memset(junk, 'A', sizeof(junk));
	write_file(tu_path("junk"), junk, sizeof(junk));
	cr_assert_eq(kmsg_log_open(&log, tu_path("junk"), 0), KMSG_ENOTLOG);
	write_file(tu_path("empty"), junk, 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("empty"), 0), KMSG_EEMPTY);
	/* a leading part of the magic, and nothing else: a log cut short */
	write_file(tu_path("cut"), KMSG_LOG_MAGIC, 5);
	cr_assert_eq(kmsg_log_open(&log, tu_path("cut"), 0), KMSG_ESHORTHDR);
	write_file(tu_path("text"), "KMSGx", 5);
	cr_assert_eq(kmsg_log_open(&log, tu_path("text"), 0), KMSG_ENOTLOG);
	write_file(tu_path("three"), "KMS", 3);
	cr_assert_eq(kmsg_log_open(&log, tu_path("three"), 0), KMSG_ENOTLOG,
		     "three letters are no sign of a log");
	cr_assert_eq(kmsg_log_open(&log, tu_dir(), 0), KMSG_ENOTLOG);
	cr_assert_eq(kmsg_log_open(&log, tu_path("missing"), 0), -ENOENT);
}

/* The file's first 32 KiB survive: a reader reads what is there, a
 * writer gives the file its size back and goes on numbering. */
Test(log, log_cut_short_is_read_and_restored)
{
	struct kmsg_log *log = tu_create("t.log", 65536, 0);
	uint64_t first, last, seq;
	struct stat st;
	size_t n;

	for (int i = 0; i < 1000; i++)
		tu_append(log, "a record that makes the ring wrap a few times over");
	kmsg_log_close(log);
	cr_assert_eq(truncate(tu_path("t.log"), 32768), 0);

	cr_assert_eq(kmsg_log_open(&log, tu_path("t.log"), 0), 0, "read-only open of a cut file");
	n = tu_count(log, &first, &last);
	cr_assert(n > 100 && n < 1000, "the records before the cut are read (%zu)", n);
	kmsg_log_close(log);
	cr_assert_eq(stat(tu_path("t.log"), &st), 0);
	cr_assert_eq(st.st_size, 32768, "a reader never changes the file");

	cr_assert_eq(kmsg_log_open(&log, tu_path("t.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(stat(tu_path("t.log"), &st), 0);
	cr_assert_eq(st.st_size, 65536, "a writer restores the size");
	cr_assert_geq(tu_count(log, NULL, NULL), n, "restoring loses nothing readable");
	cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry)KMSG_ENTRY_INIT), 0);
	cr_assert_gt(seq, last);
	cr_assert_eq(seq, 1001, "the header kept the numbering: no number is reused");
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path("t.log"), 0), 0, "and it opens cleanly after");
	kmsg_log_close(log);

	/* Too short to hold the header: nothing to go on. */
	cr_assert_eq(truncate(tu_path("t.log"), 100), 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("t.log"), 0), KMSG_ESHORTHDR);
	cr_assert_eq(kmsg_log_open(&log, tu_path("t.log"), KMSG_OPEN_WRITE), KMSG_ESHORTHDR);
}

/* Longer than its header says is not damage a log can suffer. */
Test(log, log_longer_than_its_header_is_refused)
{
	struct kmsg_log *log = tu_create("g.log", 65536, 0);
	kmsg_log_close(log);
	cr_assert_eq(truncate(tu_path("g.log"), 65536 + 4096), 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("g.log"), 0), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_log_open(&log, tu_path("g.log"), KMSG_OPEN_WRITE), KMSG_ECORRUPT);
}

Test(log, header_that_lies_about_sizes_is_refused)
{
	struct kmsg_log *log = tu_create("h.log", 65536, 0);
	struct kmsg_static h;
	int fd;
	kmsg_log_close(log);

	/* A data size bigger than the file, with a checksum made to match:
	 * both copies of the header say it, so nothing can be believed. */
	fd = open(tu_path("h.log"), O_RDWR);
	cr_assert_eq(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	h.data_size *= 4;
	h.header_crc = kmsg__crc32c_extend(0, &h, HDR_CRC_OFF);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, 0), HDR_STATIC);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, 65536 - HDR_STATIC), HDR_STATIC);
	close(fd);
	cr_assert_eq(kmsg_log_open(&log, tu_path("h.log"), 0), KMSG_ECORRUPT);
	cr_assert_eq(kmsg_log_open(&log, tu_path("h.log"), KMSG_OPEN_WRITE), KMSG_ECORRUPT);
}

Test(log, newer_format_version_is_refused)
{
	struct kmsg_log *log = tu_create("v.log", 65536, 0);
	struct kmsg_static h;
	int fd;
	kmsg_log_close(log);
	fd = open(tu_path("v.log"), O_RDWR);
	cr_assert_eq(pread(fd, &h, sizeof(h), 0), (ssize_t)sizeof(h));
	h.version = 99;
	h.header_crc = kmsg__crc32c_extend(0, &h, HDR_CRC_OFF);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, 0), HDR_STATIC);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, 65536 - HDR_STATIC), HDR_STATIC);
	close(fd);
	cr_assert_eq(kmsg_log_open(&log, tu_path("v.log"), 0), KMSG_EVERSION);
}

Test(log, zeroed_first_page_is_recovered_from_backup)
{
	struct kmsg_log *log = tu_create("z.log", 65536, 0);
	char zero[4096] = { 0 };
	int fd;
	for (int i = 0; i < 100; i++)
		tu_append(log, "before the power cut, a record of moderate length");
	kmsg_log_close(log);
	fd = open(tu_path("z.log"), O_RDWR);
	cr_assert_eq(pwrite(fd, zero, sizeof(zero), 0), (ssize_t)sizeof(zero));
	close(fd);

	/* A reader reads through a header of its own, and leaves the file
	 * alone; it finds what a writer then finds. */
	{
		struct stat before, after;
		size_t nr;
		uint64_t lr;
		cr_assert_eq(stat(tu_path("z.log"), &before), 0);
		cr_assert_eq(kmsg_log_open(&log, tu_path("z.log"), 0), 0);
		nr = tu_count(log, NULL, &lr);
		cr_assert_eq(lr, 100, "a reader finds the newest record");
		cr_assert_gt(nr, 40, "and those outside the zeroed page (%zu)", nr);
		cr_assert_eq(kmsg_log_file_changed(log, tu_path("z.log")), KMSG_FILE_SAME);
		kmsg_log_close(log);
		cr_assert_eq(stat(tu_path("z.log"), &after), 0);
		cr_assert_eq(before.st_mtim.tv_nsec, after.st_mtim.tv_nsec, "untouched");
		cr_assert_eq(before.st_mtim.tv_sec, after.st_mtim.tv_sec, "untouched");
	}
	/* A writer rebuilds it from the records themselves. */
	cr_assert_eq(kmsg_log_open(&log, tu_path("z.log"), KMSG_OPEN_WRITE), 0);
	uint64_t first, last;
	size_t n = tu_count(log, &first, &last);
	cr_assert_eq(last, 100, "the newest record survives");
	cr_assert_gt(n, 40, "records outside the zeroed page survive (%zu)", n);
	cr_assert_eq(tu_append(log, "after"), 101, "numbering continues, nothing reused");
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path("z.log"), 0), 0, "readers can open it again");
	kmsg_log_close(log);
}

/* One flipped byte in the primary header: the backup holds every record. */
Test(log, reader_recovers_a_flipped_header_byte_from_the_backup)
{
	struct kmsg_log *log = tu_create("flip.log", 65536, 0), *w;
	uint64_t first, last;
	unsigned char c;
	int fd;

	for (int i = 0; i < 200; i++)
		tu_append(log, "a record");
	kmsg_log_close(log);
	fd = open(tu_path("flip.log"), O_RDWR);
	cr_assert_eq(pread(fd, &c, 1, 45), 1);
	c ^= 0x10;  /* in data_size: the checksum no longer matches */
	cr_assert_eq(pwrite(fd, &c, 1, 45), 1);
	close(fd);
	cr_assert_eq(kmsg_log_open(&log, tu_path("flip.log"), 0), 0);
	cr_assert_eq(tu_count(log, &first, &last), 200, "every record");
	cr_assert_eq(first, 1);
	cr_assert_eq(last, 200);
	/* a writer repairs the file; the reader is told */
	cr_assert_eq(kmsg_log_open(&w, tu_path("flip.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(kmsg_log_file_changed(log, tu_path("flip.log")), KMSG_FILE_REPAIRED);
	kmsg_log_close(w);
	kmsg_log_close(log);
}

Test(log, read_only_open_reads_but_cannot_write)
{
	struct kmsg_log *w = tu_create("ro.log", 65536, 0), *r;
	tu_append(w, "hello");
	cr_assert_eq(chmod(tu_path("ro.log"), 0444), 0);
	cr_assert_eq(kmsg_log_open(&r, tu_path("ro.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(tu_count(r, NULL, NULL), 1);
	cr_assert_eq(kmsg_log_print(r, 1, 6, "x", 1), KMSG_ERDONLY);
	cr_assert_eq(kmsg_log_clear(r, 10), KMSG_ERDONLY);
	kmsg_log_close(r);
	kmsg_log_close(w);
}

Test(log, bad_arguments)
{
	struct kmsg_log *log;
	cr_assert_eq(kmsg_log_open(NULL, "x", 0), KMSG_EINVAL);
	cr_assert_eq(kmsg_log_open(&log, "x", 0x100), KMSG_EINVAL);
	cr_assert_str_eq(kmsg_strerror(KMSG_ETOOLONG), "message longer than the log's maximum record size");
	cr_assert_str_eq(kmsg_strerror(-ENOENT), strerror(ENOENT));
}

/*
 * A user with read permission only (run as nobody when we are root):
 * opens, reads and waits on the log, cannot open it for writing.
 */
Test(log, reader_with_read_permission_only)
{
	struct kmsg_log *w;
	char path[512];
	if (geteuid() != 0)
		cr_skip_test("needs root to become another user");
	w = tu_create("perm.log", 65536, 0);
	tu_append(w, "visible to readers");
	snprintf(path, sizeof(path), "%s", tu_path("perm.log"));
	cr_assert_eq(chmod(tu_dir(), 0755), 0);
	cr_assert_eq(chmod(path, 0644), 0);

	pid_t pid = tu_fork();
	if (pid == 0) {
		struct kmsg_log *r;
		struct kmsg_reader *rd;
		struct kmsg_record rec;
		if (setgid(65534) || setuid(65534))
			_exit(10);
		if (kmsg_log_open(&r, path, KMSG_OPEN_WRITE) != -EACCES)
			_exit(11);
		if (kmsg_log_open(&r, path, KMSG_OPEN_READ) != 0)
			_exit(12);
		if (kmsg_reader_new(&rd, r, 0) || kmsg_reader_next(rd, &rec) != 1 ||
		    rec.text_len != strlen("visible to readers"))
			_exit(13);
		/* the futex wait works on a read-only mapping */
		if (kmsg_reader_wait(rd, 2000) != 1)
			_exit(14);
		if (kmsg_reader_next(rd, &rec) != 1 || rec.seq != 2)
			_exit(15);
		_exit(0);
	}
	usleep(100 * 1000);
	tu_append(w, "written while the reader waits");
	int st;
	waitpid(pid, &st, 0);
	cr_assert(WIFEXITED(st));
	cr_assert_eq(WEXITSTATUS(st), 0, "reader as nobody failed at step %d", WEXITSTATUS(st));
	kmsg_log_close(w);
}

/*
 * A program started with stdin, stdout and stderr closed: whatever it then
 * writes to "stderr" must not reach a log the library opened, nor may the
 * log be read as its input.
 */
Test(log, never_kept_on_stdin_stdout_or_stderr)
{
	const char *path = tu_path("stdio");
	struct kmsg_log *w = tu_create("stdio", 64 * 1024, 0), *r;
	int saved[3];
	size_t n;

	tu_append(w, "before");
	kmsg_log_close(w);
	for (int fd = 0; fd < 3; fd++) {
		saved[fd] = fcntl(fd, F_DUPFD, 10);  /* -1 if already closed */
		close(fd);
	}
	cr_assert_eq(kmsg_log_open(&w, path, KMSG_OPEN_WRITE), 0);
	cr_assert_eq(kmsg_log_open(&r, path, KMSG_OPEN_READ), 0);
	/* What a program would print or read on its standard streams. */
	for (int fd = 0; fd < 3; fd++) {
		char c;
		cr_expect_eq(write(fd, "garbage\n", 8), -1);
		cr_expect_eq(read(fd, &c, 1), -1);
	}
	tu_append(w, "after");
	kmsg_log_close(w);
	kmsg_log_close(r);
	for (int fd = 0; fd < 3; fd++) {
		if (saved[fd] >= 0) {
			dup2(saved[fd], fd);
			close(saved[fd]);
		}
	}
	cr_assert_eq(kmsg_log_open(&r, path, KMSG_OPEN_READ), 0);
	n = tu_count(r, NULL, NULL);
	cr_expect_eq(n, 2, "the log holds %zu records, not its two", n);
	kmsg_log_close(r);
}

/* ---- the numbering's identity ---------------------------------------- */

static struct kmsg_stat stat_of(struct kmsg_log *log)
{
	struct kmsg_stat st;
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	return st;
}

/* As the first writer after a reboot finds it: the header from another boot. */
static struct kmsg_log *reopen_after_reboot(struct kmsg_log *log, const char *name)
{
	tu_pretend_reboot(log);
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path(name), KMSG_OPEN_WRITE), 0);
	return log;
}

Test(log, numbering_identity_holds_within_a_boot)
{
	struct kmsg_log *log = tu_create("id.log", 65536, 0);
	struct kmsg_stat a = stat_of(log), b;

	cr_assert_neq(a.seq_id, 0);
	cr_assert_eq(a.seq_id_since, 1);
	cr_assert_eq(a.prev_seq_id, 0);
	tu_append(log, "one");
	kmsg_log_close(log);
	cr_assert_eq(kmsg_log_open(&log, tu_path("id.log"), KMSG_OPEN_WRITE), 0);
	tu_append(log, "two");
	b = stat_of(log);
	cr_assert_eq(b.seq_id, a.seq_id, "a writer of the same boot keeps it");
	cr_assert_eq(b.seq_id_since, 1);
	kmsg_log_close(log);
}

Test(log, numbering_identity_is_renewed_where_numbers_may_repeat)
{
	/* The disk holds five records; five more were handed out (and
	 * forwarded by a consumer) but never reached it: a power cut. */
	struct kmsg_log *log = tu_create("cut.log", 65536, 0);
	for (int i = 0; i < 5; i++)
		tu_append(log, "on disk");
	unsigned char *disk = malloc(log->map_size);
	size_t size = log->map_size;
	memcpy(disk, log->map, size);
	for (int i = 0; i < 5; i++)
		tu_append(log, "lost in the power cut");
	struct kmsg_stat before = stat_of(log);
	cr_assert_eq(before.next_seq, 11);
	memcpy(log->map, disk, size);
	free(disk);

	log = reopen_after_reboot(log, "cut.log");
	uint64_t seq;
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	e.text = "after the reboot";
	e.text_len = strlen(e.text);
	cr_assert_eq(kmsg_log_append(&seq, log, &e), 0);
	cr_assert_eq(seq, 6, "number 6 is handed out again");
	struct kmsg_stat after = stat_of(log);
	cr_assert_neq(after.seq_id, before.seq_id, "so the numbering has a new identity");
	cr_assert_eq(after.seq_id_since, 6);
	cr_assert_eq(after.prev_seq_id, before.seq_id);
	cr_assert_eq(after.prev_seq_id_since, 1);

	/* Readers give it with every record: records below 6 mean under
	 * the new identity what they meant under the old. */
	struct kmsg_reader *r;
	struct kmsg_record rec;
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	int n = 0;
	while (kmsg_reader_next(r, &rec) == 1) {
		cr_assert_eq(rec.seq_id, after.seq_id);
		n++;
	}
	cr_assert_eq(n, 6);
	kmsg_reader_free(r);

	/* A second renewal: the first identity is still known. */
	log = reopen_after_reboot(log, "cut.log");
	struct kmsg_stat third = stat_of(log);
	cr_assert_neq(third.seq_id, after.seq_id);
	cr_assert_eq(third.seq_id_since, 7);
	cr_assert_eq(third.prev_seq_id, after.seq_id);
	cr_assert_eq(third.prev_seq_id_since, 6);
	cr_assert_eq(third.prev2_seq_id, before.seq_id);
	kmsg_log_close(log);
}

Test(log, numbering_identity_of_a_log_made_before_it_existed)
{
	struct kmsg_log *log = tu_create("old.log", 65536, 0);
	tu_append(log, "old");
	/* a log of the first release: no identity in its header */
	memset(log->aux->ident, 0, sizeof(log->aux->ident));
	struct kmsg_stat st = stat_of(log);
	uint64_t implicit;
	memcpy(&implicit, st.ring_id, 8);
	cr_assert_eq(st.seq_id, implicit, "taken from the ring id");
	cr_assert_eq(st.seq_id_since, 1);
	/* a renewal continues from it */
	log = reopen_after_reboot(log, "old.log");
	st = stat_of(log);
	cr_assert_neq(st.seq_id, implicit);
	cr_assert_eq(st.prev_seq_id, implicit);
	cr_assert_eq(st.seq_id_since, 2);
	kmsg_log_close(log);
}

Test(log, a_log_being_made_is_never_seen_half_made_nor_left_behind, .timeout = 60)
{
	/* A creator killed half-way used to leave its full-size temporary
	 * file, path.new-RANDOM; now the file has no name until it is whole. */
	char dir[512];
	snprintf(dir, sizeof(dir), "%s/made", tu_dir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		char path[600];
		struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
		o.size = 16 << 20;
		snprintf(path, sizeof(path), "%s/l.log", dir);
		for (;;) {
			struct kmsg_log *log;
			if (kmsg_log_create(&log, path, &o, 0))
				_exit(1);
			kmsg_log_close(log);
			unlink(path);
		}
	}
	int64_t end = tu_now_ns(CLOCK_MONOTONIC) + INT64_C(500000000);
	int looks = 0, bad = 0;
	while (tu_now_ns(CLOCK_MONOTONIC) < end) {
		DIR *d = opendir(dir);
		struct dirent *de;
		cr_assert_not_null(d);
		while ((de = readdir(d)))
			bad |= strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			       strcmp(de->d_name, "l.log");
		closedir(d);
		looks++;
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(bad, 0, "a file other than the log was seen (%d looks)", looks);
	DIR *d = opendir(dir);
	struct dirent *de;
	int left = 0;
	while ((de = readdir(d)))
		left += strcmp(de->d_name, ".") && strcmp(de->d_name, "..") &&
			strcmp(de->d_name, "l.log");
	closedir(d);
	cr_assert_eq(left, 0, "a killed creator left a file behind");
}

/* Makes dir/name with some bytes, last changed 10 s ago. */
static int old_file(const char *dir, const char *name)
{
	char p[700];
	struct timespec t[2];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	fd = open(p, O_RDWR | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0, "%s", p);
	cr_assert_eq(ftruncate(fd, 1 << 20), 0);
	clock_gettime(CLOCK_REALTIME, &t[0]);
	t[0].tv_sec -= 10;
	t[1] = t[0];
	cr_assert_eq(futimens(fd, t), 0);
	return fd;
}

static int exists_in(const char *dir, const char *name)
{
	char p[700];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return access(p, F_OK) == 0;
}

/*
 * Where O_TMPFILE cannot be used, a creator builds path.new-RANDOM under
 * that name, locked while it lives.  One a killed creator left (no lock)
 * is removed by the next create; one a live creator is building, and
 * files that only look alike, are not.
 */
Test(log, a_temporary_file_a_killed_creator_left_is_removed_by_the_next_create)
{
	char dir[512], path[600];
	int ready[2];
	char c;

	snprintf(dir, sizeof(dir), "%s/stale", tu_dir());
	cr_assert_eq(mkdir(dir, 0700), 0);
	snprintf(path, sizeof(path), "%s/l.log", dir);
	close(old_file(dir, "l.log.new-0123456789abcdef"));
	close(old_file(dir, "l.log.new-12345"));
	close(old_file(dir, "m.log.new-0123456789abcdef"));
	cr_assert_eq(pipe(ready), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		int fd = old_file(dir, "l.log.new-fedcba9876543210");
		if (kmsg__ofd_lock(fd, F_OFD_SETLK, F_WRLCK, LOCK_CREATING, 1, NULL) < 0 ||
		    write(ready[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(ready[0], &c, 1), 1);

	struct kmsg_log *log;
	cr_assert_eq(kmsg_log_create(&log, path, NULL, 0), 0);
	kmsg_log_close(log);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert(!exists_in(dir, "l.log.new-0123456789abcdef"), "a dead creator's file is left");
	cr_assert(exists_in(dir, "l.log.new-fedcba9876543210"), "a live creator's file was removed");
	cr_assert(exists_in(dir, "l.log.new-12345"));
	cr_assert(exists_in(dir, "m.log.new-0123456789abcdef"));
}

/* ---- logs of the first format ------------------------------------------- */

/*
 * Unpacks tests/data/format1.log.gz, a log kmsg 0.1.0 made in the first
 * format: 16 KiB, records 122..302 (the oldest evicted), the last one
 * with the field LAST=yes, cleared below 302.
 */
static void unpack_format1(const char *name)
{
	char src[1024], buf[4096];
	int fd, n;
	gzFile z;

	snprintf(src, sizeof(src), "%s/format1.log.gz", KMSG_TEST_DATA);
	z = gzopen(src, "rb");
	cr_assert_not_null(z, "%s", src);
	fd = open(tu_path(name), O_WRONLY | O_CREAT | O_EXCL, 0644);
	cr_assert_geq(fd, 0);
	while ((n = gzread(z, buf, sizeof(buf))) > 0)
		cr_assert_eq(write(fd, buf, (size_t)n), n);
	cr_assert_eq(n, 0);
	gzclose(z);
	close(fd);
}

/* Every record from the oldest, as "seq text\n" lines into out. */
static size_t records_text(struct kmsg_log *log, char *out, size_t cap)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	size_t n = 0, at = 0;
	int rc;

	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		int w = snprintf(out + at, cap - at, "%llu %.*s\n", (unsigned long long)rec.seq,
				 (int)rec.text_len, rec.text);
		cr_assert(w > 0 && (size_t)w < cap - at);
		cr_assert_eq(rec.lost + rec.damaged, 0, "seq %llu", (unsigned long long)rec.seq);
		at += (size_t)w;
		n++;
	}
	cr_assert_eq(rc, 0);
	kmsg_reader_free(r);
	return n;
}

static char *file_bytes(const char *path, size_t *len)
{
	struct stat sb;
	int fd = open(path, O_RDONLY);
	char *buf;

	cr_assert_geq(fd, 0);
	cr_assert_eq(fstat(fd, &sb), 0);
	buf = malloc((size_t)sb.st_size);
	cr_assert_eq(read(fd, buf, (size_t)sb.st_size), sb.st_size);
	close(fd);
	*len = (size_t)sb.st_size;
	return buf;
}

Test(log, a_first_format_log_is_upgraded_by_its_first_writer_and_keeps_everything)
{
	static char before[65536], after[65536];
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	struct kmsg_field f;
	struct kmsg_stat st;
	size_t pos = 0, n;
	uint64_t seq;
	struct stat sb;

	unpack_format1("v1.log");
	cr_assert_eq(kmsg_log_open(&log, tu_path("v1.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(st.format_version, 1);
	uint64_t seq_id = st.seq_id;
	n = records_text(log, before, sizeof(before));
	cr_assert_eq(n, 181);
	kmsg_log_close(log);

	/* The first writer upgrades it.  The ring was full to its last 48
	 * bytes; the second format keeps 64 free before head, so the
	 * oldest record is evicted (and counted so); every other record
	 * stays as it was, under the same numbering. */
	cr_assert_eq(kmsg_log_open(&log, tu_path("v1.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(st.format_version, KMSG_FORMAT_VERSION);
	cr_assert_eq(st.first_seq, 123);
	cr_assert_eq(st.evicted, 122);
	cr_assert_eq(st.next_seq, 303);
	cr_assert_eq(st.clear_seq, 302);
	{
		/* The same numbering: a position read under the first format's
		 * identity resolves to the same numbers.  (The identity itself
		 * is renewed when the writer enters this boot, unless the image
		 * was made in it: the test must not depend on the machine.) */
		struct kmsg_position kp = { .seq_id = seq_id, .next = 303 };
		uint64_t next = 0;

		memcpy(kp.ring_id, st.ring_id, sizeof(kp.ring_id));
		cr_assert_eq(kmsg_log_position_resolve(&next, log, &kp), KMSG_POSITION_SAME,
			     "the same numbering");
		cr_assert_eq(next, 303);
	}
	cr_assert_eq(records_text(log, after, sizeof(after)), 180);
	cr_assert_str_eq(after, strchr(before, '\n') + 1);
	cr_assert_eq(kmsg_log_print(log, 1, 6, "first of format 2", 17), 0);
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(st.next_seq, 304, "numbers go on from the first format's");
	kmsg_log_close(log);
	cr_assert_eq(stat(tu_path("v1.log"), &sb), 0);
	cr_assert_eq(sb.st_size, 16384 + AUX_SIZE, "grown by the auxiliary area");

	/* Reopened: the second format, the clear mark and the fields kept. */
	cr_assert_eq(kmsg_log_open(&log, tu_path("v1.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	cr_assert_eq(kmsg_reader_seek(r, KMSG_SEEK_CLEARED), 0);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, 302);
	cr_assert_eq(kmsg_field_next(&f, &rec, &pos), 1);
	cr_assert(f.key_len == 4 && memcmp(f.key, "LAST", 4) == 0 && f.value_len == 3);
	cr_assert_eq(kmsg_reader_next(r, &rec), 1);
	cr_assert_eq(rec.seq, 303);
	cr_assert_eq(rec.text_len, 17);
	cr_assert_eq(kmsg_reader_next(r, &rec), 0);
	kmsg_reader_free(r);
	kmsg_log_close(log);

	/* Laps over the old records: all intact, numbers contiguous. */
	cr_assert_eq(kmsg_log_open(&log, tu_path("v1.log"), KMSG_OPEN_WRITE), 0);
	for (int i = 0; i < 1000; i++)
		cr_assert_eq(kmsg_log_append(&seq, log, &(struct kmsg_entry){
			KMSG_ENTRY_VERSION, 0, 1, 6, "a lap over the first format's records",
			37, NULL, 0, 0, 0, 0, 0 }), 0);
	cr_assert_eq(seq, 1303);
	uint64_t first, last;
	n = tu_count(log, &first, &last);
	cr_assert_eq(last, 1303);
	cr_assert_eq(n, last - first + 1);
	kmsg_log_close(log);
}

Test(log, a_first_format_writer_with_the_log_open_defers_the_upgrade)
{
	static char text[65536];
	struct kmsg_log *log;
	struct kmsg_stat st;
	size_t len0, len1;
	int held[2];
	char c;

	unpack_format1("held.log");
	char *orig = file_bytes(tu_path("held.log"), &len0);
	cr_assert_eq(pipe(held), 0);
	pid_t pid = tu_fork();
	if (pid == 0) {
		/* As a writer of the first format registers while it has
		 * the log open: a write lock on its id's byte. */
		int fd = open(tu_path("held.log"), O_RDWR);
		struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
				    .l_start = (off_t)(LOCK_WRITER_BASE + 7), .l_len = 1 };
		if (fd < 0 || fcntl(fd, F_OFD_SETLK, &fl) || write(held[1], "h", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	cr_assert_eq(read(held[0], &c, 1), 1);
	cr_assert_eq(kmsg_log_open(&log, tu_path("held.log"), KMSG_OPEN_WRITE), KMSG_EOLDWRITER);
	char *now = file_bytes(tu_path("held.log"), &len1);
	cr_assert(len1 == len0 && memcmp(orig, now, len0) == 0, "the file was left as it was");
	free(now);
	/* Reading works meanwhile. */
	cr_assert_eq(kmsg_log_open(&log, tu_path("held.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(records_text(log, text, sizeof(text)), 181);
	kmsg_log_close(log);
	/* Once it is gone, the next writer upgrades. */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_eq(kmsg_log_open(&log, tu_path("held.log"), KMSG_OPEN_WRITE), 0);
	cr_assert_eq(kmsg_log_stat(&st, log), 0);
	cr_assert_eq(st.format_version, KMSG_FORMAT_VERSION);
	kmsg_log_close(log);
	free(orig);
}

/*
 * A 32-bit build cannot map a log of 4 GiB or more: such a log is refused
 * with KMSG_ETOOBIG, never mapped cut to size_t and read as other bytes.
 * Played here by lowering the library's mapping limit to a 32-bit size_t's
 * (kmsg(1) says how to run the real 32-bit check by hand), on a sparse
 * log of 5 GiB that holds records: this build reads it, the "32-bit" one
 * refuses to open it, to create one that large, or to open it as a dump.
 */
Test(log, a_log_larger_than_the_address_space_is_refused)
{
	const uint64_t big = UINT64_C(5) << 30, small = 65536;
	struct kmsg_log *log = tu_create("big.log", small, 0);
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_static h;
	unsigned char *aux = malloc(AUX_SIZE);
	uint64_t first, last;
	int fd;

	for (int i = 0; i < 10; i++)
		tu_append(log, "a record in a log of 5 GiB");
	kmsg_log_close(log);
	/* The same log with a data area of 5 GiB less the rest: the records
	 * and positions stay, the auxiliary area and the backup move. */
	fd = open(tu_path("big.log"), O_RDWR);
	cr_assert_geq(fd, 0);
	cr_assert_eq(pread(fd, &h, HDR_STATIC, 0), HDR_STATIC);
	cr_assert_eq(pread(fd, aux, AUX_SIZE, (off_t)(HDR_SIZE + h.data_size)), AUX_SIZE);
	h.file_size = big;
	h.data_size = big - KMSG_FILE_OVERHEAD;
	h.header_crc = kmsg__crc32c_extend(0, &h, HDR_CRC_OFF);
	cr_assert_eq(ftruncate(fd, (off_t)big), 0);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, 0), HDR_STATIC);
	cr_assert_eq(pwrite(fd, aux, AUX_SIZE, (off_t)(HDR_SIZE + h.data_size)), AUX_SIZE);
	cr_assert_eq(pwrite(fd, &h, HDR_STATIC, (off_t)(big - HDR_STATIC)), HDR_STATIC);
	close(fd);
	free(aux);

	cr_assert_eq(kmsg_log_open(&log, tu_path("big.log"), KMSG_OPEN_READ), 0);
	cr_assert_eq(tu_count(log, &first, &last), 10, "this build reads the 5 GiB log");
	kmsg_log_close(log);

	kmsg__map_limit = UINT32_MAX;
	cr_assert_eq(kmsg_log_open(&log, tu_path("big.log"), KMSG_OPEN_READ), KMSG_ETOOBIG);
	cr_assert_eq(kmsg_log_open(&log, tu_path("big.log"), KMSG_OPEN_WRITE), KMSG_ETOOBIG);
	fd = open(tu_path("big.log"), O_RDONLY);
	cr_assert_eq(kmsg_dump_open_fd(&log, fd, NULL, 0), KMSG_ETOOBIG,
		     "its bytes are refused before they are copied");
	close(fd);
	o.size = big;
	cr_assert_eq(kmsg_log_create(&log, tu_path("new.log"), &o, 0), KMSG_ETOOBIG);
	cr_assert_eq(access(tu_path("new.log"), F_OK), -1, "no file is made");
	o.size = 1 << 20;
	cr_assert_eq(kmsg_log_create(&log, tu_path("new.log"), &o, 0), 0,
		     "a log that fits is made");
	kmsg_log_close(log);
	cr_assert_str_eq(kmsg_strerror(KMSG_ETOOBIG),
			 "log larger than this build of kmsg can map (a 32-bit build maps "
			 "less than 4 GiB): read it with a 64-bit kmsg, or make the log smaller");
	kmsg__map_limit = SIZE_MAX;
}
