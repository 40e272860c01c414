/*
 * test_cmd_source.c - telling what --file holds (cmd/source.c), on its
 * own: a log (by its header, or by the copy at its end when the first
 * page is torn), a dump, dmesg text, and what is none of them, refused
 * by name; text that turns binary part way stops there.
 */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "source.h"
#include "testutil.h"

TestSuite(source, .fini = tu_cleanup);

static const char *file(const char *name, const void *p, size_t n)
{
	const char *path = tu_path(name);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, p, n), (ssize_t)n);
	close(fd);
	return path;
}

Test(source, each_kind_is_told_by_its_bytes)
{
	static const char text[] = "<6>[    0.000000] Linux version 6.1.0\n";
	static const unsigned char gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 };
	struct kmsg_log *log = tu_create("a.log", 1 << 16, 0);
	unsigned char *zeros = calloc(1, 8192);
	struct src s;

	tu_append(log, "one record");
	kmsg_log_close(log);
	cr_assert_eq(src_detect(tu_path("a.log")), SRC_LOG);
	cr_assert_eq(src_detect(file("t", text, sizeof(text) - 1)), SRC_TEXT);
	/* an empty file is a log not yet made, one that is only the start
	 * of the magic a log cut short: the library says which */
	cr_assert_eq(src_detect(file("empty", "", 0)), SRC_LOG, "an empty file");
	cr_assert_eq(src_detect(file("cut", "KMSGR", 5)), SRC_LOG, "a cut magic");
	cr_assert_eq(src_detect(file("kms", "KMS", 3)), SRC_TEXT, "three letters are text");
	cr_assert_eq(src_detect(file("d.gz", gz, sizeof(gz))), SRC_DUMP);
	cr_assert_eq(src_detect(tu_dir()), -EISDIR);
	cr_assert_eq(src_detect(tu_path("missing")), -ENOENT);

	cr_assert_eq(src_open(&s, file("zeros", zeros, 8192)), 0);
	cr_assert_eq(s.kind, SRC_BINARY);
	cr_assert_str_eq(s.what, "holds only NUL bytes");
	src_close(&s);
	memcpy(zeros, "\x7f" "ELF\2\1\1", 7);  /* an ELF header, and zeros */
	cr_assert_eq(src_open(&s, file("elf", zeros, 512)), 0);
	cr_assert_eq(s.kind, SRC_BINARY);
	cr_assert_str_eq(s.what, "is an ELF binary");
	src_close(&s);
	free(zeros);
}

Test(source, a_log_whose_first_page_is_zeroed_is_still_a_log)
{
	struct kmsg_log *log = tu_create("torn.log", 1 << 16, 0);
	static const char page[4096];
	int fd;

	tu_append(log, "one record");
	kmsg_log_close(log);
	fd = open(tu_path("torn.log"), O_WRONLY);
	cr_assert_eq(pwrite(fd, page, sizeof(page), 0), (ssize_t)sizeof(page));
	close(fd);
	cr_assert_eq(src_detect(tu_path("torn.log")), SRC_LOG,
		     "the header's copy at the end names it");
}

Test(source, text_stops_where_it_turns_binary)
{
	size_t n = 3 * SRC_BLOCK;
	char *p = malloc(n), *buf = malloc(n);
	size_t got = 0;
	ssize_t k;
	struct src s;

	for (size_t i = 0; i < n; i++)
		p[i] = i % 64 == 63 ? '\n' : 'a' + (char)(i % 26);
	for (size_t i = 2 * SRC_BLOCK; i < n; i++)
		p[i] = (char)(i * 7 % 9);  /* controls and NULs */
	cr_assert_eq(src_open(&s, file("half", p, n)), 0);
	cr_assert_eq(s.kind, SRC_TEXT);
	while ((k = src_read(&s, buf + got, 1000)) > 0)
		got += (size_t)k;
	cr_assert_eq(k, -EILSEQ, "the binary block is an error, not text");
	/* the block that turned binary may have come back in part before
	 * it was judged: blk_start says where the text ends */
	cr_assert_eq(s.blk_start, 2 * SRC_BLOCK);
	cr_assert(got >= 2 * SRC_BLOCK && got < 3 * SRC_BLOCK, "got %zu", got);
	cr_assert_eq(memcmp(buf, p, 2 * SRC_BLOCK), 0, "every byte before it is returned");
	src_close(&s);
	free(p);
	free(buf);
}

/* What every subcommand says of a --file it does not take. */
Test(source, a_kind_not_taken_is_refused_in_the_same_words, .init = cr_redirect_stderr)
{
	static const unsigned char gz[] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0 };
	struct kmsg_log *log = tu_create("b.log", 1 << 16, 0);
	struct src s;
	char want[1024], dump[512];

	/* tu_path()'s buffer is reused: keep the name */
	snprintf(dump, sizeof(dump), "%s", file("d.gz", gz, sizeof(gz)));
	kmsg_log_close(log);
	cr_assert_eq(src_open_for(&s, tu_path("b.log"), SRC_TAKES_LOG), 0);
	cr_assert_eq(s.kind, SRC_LOG);
	src_close(&s);
	cr_assert_eq(src_open_for(&s, tu_path("missing"), SRC_TAKES_LOG), 1,
		     "left for cli_open_log() to word");
	cr_assert_eq(src_open_for(&s, dump, SRC_TAKES_LOG), -1);
	cr_assert_eq(s.fd, -1, "closed when refused");
	fflush(stderr);
	snprintf(want, sizeof(want), "kmsg: %s: is a kmsg dump; --file takes a kmsg log\n", dump);
	cr_assert_stderr_eq_str(want);
}
