/*
 * source.c - the input given with --file (see source.h): a log, a dump,
 * dmesg text, or something none of them that is refused by name; text is
 * checked block by block as it is read, so a binary tail is not printed.
 */
#define _GNU_SOURCE
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Bytes plain text has next to none of, dmesg's included (dmesg -r
 * escapes its own): NUL and the C0 controls but backspace, tab, newline,
 * VT, FF, CR and ESC (colours).  Random bytes are 1 in 10 of them, an
 * executable mostly NULs; a message with a NUL in it is not binary.
 */
static const unsigned char odd_byte[256] = {
	[0x00 ... 0x07] = 1, [0x0e ... 0x1a] = 1, [0x1c ... 0x1f] = 1,
};

/*
 * NULL if the block (n bytes, bad of them odd, nul of them NUL) is text:
 * not all NUL, and no more than 1 in 16 odd bytes (of at least 256, so
 * that a short text with a stray NUL passes).  Else what it looks like,
 * by its magic if it is the input's first block.
 */
static const char *block_binary(const unsigned char *p, size_t n, size_t bad,
				size_t nul, int first)
{
	if (n == 0 || (nul < n && bad * 16 <= (n > 256 ? n : 256)))
		return NULL;
	if (nul == n)
		return "holds only NUL bytes";
	if (!first)
		return "is binary data";
	if (n >= 4 && memcmp(p, "\x7f" "ELF", 4) == 0)
		return "is an ELF binary";
	if (n >= 6 && memcmp(p, "\xfd" "7zXZ\0", 6) == 0)
		return "is xz-compressed (decompress it first)";
	if (n >= 4 && memcmp(p, "\x28\xb5\x2f\xfd", 4) == 0)
		return "is zstd-compressed (decompress it first)";
	if (n >= 10 && memcmp(p, "BZh", 3) == 0 && memcmp(p + 4, "1AY&SY", 6) == 0)
		return "is bzip2-compressed (decompress it first)";
	return "is binary data";
}

static const char *first_block_binary(const unsigned char *p, size_t n)
{
	size_t bad = 0, nul = 0;

	for (size_t i = 0; i < n; i++) {
		bad += odd_byte[p[i]];
		nul += p[i] == 0;
	}
	return block_binary(p, n, bad, nul, 1);
}

/*
 * Up to n bytes from fd (at off, or where it is if off < 0), once at least
 * least of them came, or fewer at its end: a live pipe is not waited on
 * for more than least.
 */
static ssize_t read_least(int fd, unsigned char *p, size_t n, size_t least, off_t off)
{
	size_t got = 0;

	while (got < least) {
		ssize_t k = off < 0 ? read(fd, p + got, n - got)
				    : pread(fd, p + got, n - got, off + (off_t)got);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			break;
		got += (size_t)k;
	}
	return (ssize_t)got;
}

/* A regular file whose last 128 bytes begin as a log header's copy does. */
static int backup_magic(int fd, const struct stat *st)
{
	unsigned char m[8];

	return st->st_size >= 4096 && st->st_size % 4096 == 0 &&
	       read_least(fd, m, 8, 8, st->st_size - 128) == 8 && memcmp(m, KMSG_LOG_MAGIC, 8) == 0;
}

int src_open(struct src *s, const char *path)
{
	unsigned char first[SRC_BLOCK];
	struct stat st;
	ssize_t n;
	size_t pre = 0;  /* bytes of a FIFO read before the look proper */

	int is_stdin = strcmp(path, "-") == 0;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->name = path;
	if (is_stdin) {
		s->name = "standard input";
		if (isatty(STDIN_FILENO))
			return -ENOTTY;
		/* "<&-": what would be read is /dev/null's nothing, which
		 * must not pass for an empty input */
		if (cli_stdin_closed())
			return -EBADF;
		s->fd = fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
	} else {
		/* not blocked in open() by a FIFO with no writer (below) */
		s->fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	}
	if (s->fd < 0 || fstat(s->fd, &st) < 0)
		goto fail;
	if (S_ISDIR(st.st_mode)) {
		errno = EISDIR;
		goto fail;
	}
	/* A FIFO named by path is read only if a writer has it open: one
	 * someone planted would hold the reader for ever.  With no writer,
	 * a read that does not wait finds its end; with one, no bytes yet. */
	if (!is_stdin && S_ISFIFO(st.st_mode)) {
		ssize_t k = read(s->fd, s->head, SRC_BLOCK);

		if (k == 0 || (k < 0 && errno != EAGAIN)) {
			errno = k == 0 ? ENXIO : errno;
			goto fail;
		}
		pre = k > 0 ? (size_t)k : 0;
	}
	if (!is_stdin && fcntl(s->fd, F_SETFL, fcntl(s->fd, F_GETFL) & ~O_NONBLOCK) < 0)
		goto fail;
	/* A regular file is looked at in place; anything else, and standard
	 * input (read from where it is), only by taking its first bytes,
	 * which src_read() then hands back. */
	s->stream = is_stdin || !S_ISREG(st.st_mode);
	/* a stream: enough for the magic numbers, and what came with them */
	n = s->stream ? read_least(s->fd, s->head + pre, SRC_BLOCK - pre,
				   pre < sizeof(KMSG_LOG_MAGIC) - 1 ?
				   sizeof(KMSG_LOG_MAGIC) - 1 - pre : 0, -1)
		      : read_least(s->fd, first, SRC_BLOCK, SRC_BLOCK, 0);
	if (n < 0) {
		errno = (int)-n;
		goto fail;
	}
	n += (ssize_t)pre;
	s->empty = n == 0;
	if (s->stream)
		s->head_len = (size_t)n;
	else
		memcpy(s->head, first, (size_t)n); /* looked at, not handed back */
	/* A regular file that is empty, or nothing but at least half the
	 * magic, is a log not made yet or cut short: the library says which. */
	if ((n >= 8 && memcmp(s->head, KMSG_LOG_MAGIC, 8) == 0) ||
	    (!s->stream && (n == 0 || (n >= 4 && n < 8 &&
				       memcmp(s->head, KMSG_LOG_MAGIC, (size_t)n) == 0))))
		s->kind = SRC_LOG;
	else if (!s->stream && backup_magic(s->fd, &st))
		s->kind = SRC_LOG;  /* its first page torn: the library reads the copy */
	else if (n >= 2 && s->head[0] == 0x1f && s->head[1] == 0x8b)
		s->kind = SRC_DUMP;
	else if ((s->what = first_block_binary(s->head, (size_t)n)) != NULL)
		s->kind = SRC_BINARY;
	else
		s->kind = SRC_TEXT;
	return 0;
fail:
	n = -errno;
	src_close(s);
	return (int)n;
}

/*
 * Adds n bytes (0: the input's end) to the text check; -EILSEQ when a
 * block is binary, s->blk_start then where it starts.
 */
static int check_text(struct src *s, const unsigned char *p, size_t n)
{
	size_t i = 0;

	for (;;) {
		size_t take = SRC_BLOCK - s->blk_len;

		if (take > n - i)
			take = n - i;
		for (size_t end = i + take; i < end; i++) {
			s->blk_bad += odd_byte[p[i]];
			s->blk_nul += p[i] == 0;
		}
		s->blk_len += take;
		/* a block is judged when full, or at the input's end */
		if (s->blk_len == 0 || (s->blk_len < SRC_BLOCK && n > 0))
			return 0;
		s->what = block_binary(p, s->blk_len, s->blk_bad, s->blk_nul, 0);
		if (s->what != NULL)
			return -EILSEQ;
		s->blk_start += s->blk_len;
		s->blk_len = s->blk_bad = s->blk_nul = 0;
		if (i == n)
			return 0;
	}
}

/* At the end of a regular file: whether it is shorter now than where the
 * reading got to (cut short while read), its size then in s->shrunk_to. */
static int src_shrunk(struct src *s)
{
	struct stat st;
	off_t at = lseek(s->fd, 0, SEEK_CUR);

	if (at < 0 || fstat(s->fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size >= at)
		return 0;
	s->shrunk_to = (uint64_t)st.st_size;
	s->shrunk_at = (uint64_t)at;
	return 1;
}

ssize_t src_read(struct src *s, void *buf, size_t n)
{
	ssize_t k;
	int rc;

	if (s->head_pos < s->head_len) {
		k = (ssize_t)(s->head_len - s->head_pos < n ? s->head_len - s->head_pos : n);
		memcpy(buf, s->head + s->head_pos, (size_t)k);
		s->head_pos += (size_t)k;
	} else {
		do
			k = read(s->fd, buf, n);
		while (k < 0 && errno == EINTR);
		if (k < 0)
			return -errno;
		if (k == 0 && n > 0 && src_shrunk(s))
			return -ESTALE;
	}
	if (s->binary)
		return -EILSEQ;
	if (s->kind == SRC_TEXT && (rc = check_text(s, buf, (size_t)k)) < 0) {
		/* what comes before the binary block is still text */
		s->binary = 1;
		if (s->blk_start <= s->off)
			return rc;
		k = (ssize_t)(s->blk_start - s->off);
	}
	s->off += (uint64_t)k;
	return k;
}

int src_idle(const struct src *s)
{
	struct pollfd p = { .fd = s->fd, .events = POLLIN };

	return s->stream && s->head_pos >= s->head_len && poll(&p, 1, 0) == 0;
}

const char *src_strerror(int rc)
{
	if (rc == -EBADF && cli_stdin_closed())
		return "is closed (\"<&-\"): give the input on a pipe or with <FILE";
	if (rc == -ENXIO)
		return "is a FIFO with no writer, which kmsg does not wait for (to read a "
		       "program's output, pipe it in: PROGRAM | kmsg read -F -)";
	return strerror(-rc);
}

void src_read_error(const struct src *s, ssize_t rc, const char *kind)
{
	if (rc == -EILSEQ)
		cli_error(s->name, "%s from byte %llu on, not %s: stopped there", s->what,
			  (unsigned long long)s->blk_start, kind);
	else if (rc == -ESTALE && s->shrunk_at > 0)
		cli_error(s->name, "cut short to %llu bytes while it was read, at byte "
			  "%llu: what was in the rest is lost (read a copy the writer "
			  "leaves alone)", (unsigned long long)s->shrunk_to,
			  (unsigned long long)s->shrunk_at);
	else
		cli_error(s->name, "%s", strerror((int)-rc));
}

int src_detect(const char *path)
{
	struct src s;
	int rc, kind;

	/* A pipe (-F -, -F /dev/stdin) can only be looked at by taking its
	 * bytes, which would then be lost to the reading proper. */
	struct stat st;

	if (strcmp(path, "-") == 0)
		return SRC_TEXT;
	if (stat(path, &st) < 0)
		return -errno;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	if (!S_ISREG(st.st_mode))
		return SRC_TEXT;
	rc = src_open(&s, path);
	kind = s.kind;
	src_close(&s);
	return rc < 0 ? rc : kind;
}

void src_close(struct src *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

void src_dump_damaged(const char *name)
{
	cli_error(name, "damaged or incomplete dump; to read the records before the "
		  "damage, gunzip -c it into a file (gunzip writes what it can before it "
		  "stops) and kmsg read -F that file");
}

/* Where a dump's decompressed copy goes when it is large (kmsg(1),
 * ENVIRONMENT): $TMPDIR, else /tmp, as for read --reverse. */
static const char *src_tmpdir(void)
{
	const char *dir = getenv("TMPDIR");

	return dir && *dir ? dir : "/tmp";
}

/* Words a libkmsg error about a dump or a log copied from a pipe. */
static void src_lib_error(const struct src *s, int rc)
{
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EFBIG || rc == -EACCES ||
	    rc == -EPERM || rc == -EROFS || rc == -ENOENT || rc == -ENOTDIR)
		/* only the copy's file is opened or written by name */
		cli_error(s->name, "cannot %s it into a temporary file in %s: %s (set "
			  "TMPDIR to a writable directory with room for %s)",
			  s->kind == SRC_DUMP ? "decompress" : "copy", src_tmpdir(),
			  strerror(-rc), s->kind == SRC_DUMP ? "the log it holds, whose "
			  "size kmsg stat -F gives" : "the log");
	else if (rc == KMSG_ECORRUPT && s->kind == SRC_DUMP)
		src_dump_damaged(s->name);
	else if (rc == KMSG_ECORRUPT)
		cli_error(s->name, "a damaged log, or one cut short (its header "
			  "claims more bytes than arrived)");
	else
		cli_lib_error(s->name, rc);
}

struct kmsg_log *src_open_log(struct src *s, unsigned flags)
{
	struct kmsg_dump_open_opts o = KMSG_DUMP_OPEN_OPTS_INIT;
	struct kmsg_log *log = NULL;
	int rc;

	if (s->kind == SRC_LOG && !s->stream)
		return cli_open_log(s->name, flags, NULL);
	/* a dump, or a log arriving on a pipe: copied, from the bytes taken
	 * to look at it on, into memory or past 16 MiB a file in TMPDIR */
	o.tmpdir = src_tmpdir();
	rc = kmsg_dump_open_fd_opts(&log, s->fd, s->head + s->head_pos,
				    s->head_len - s->head_pos, &o);
	s->head_pos = s->head_len;
	if (rc < 0) {
		src_lib_error(s, rc);
		return NULL;
	}
	return log;
}

/* The kinds in takes, in words. */
static const char *takes_words(unsigned takes)
{
	switch (takes) {
	case SRC_TAKES_LOG:
		return "a kmsg log";
	case SRC_TAKES_LOG | SRC_TAKES_DUMP:
		return "a kmsg log or a kmsg dump";
	default:
		return "a kmsg log, a kmsg dump or dmesg text";
	}
}

int src_open_for(struct src *s, const char *path, unsigned takes)
{
	const char *what = takes_words(takes);
	int rc = src_open(s, path);

	if (rc == -EISDIR) {
		cli_error(s->name, "is a directory");
		return -1;
	}
	if (rc == -ENOTTY) {
		cli_error(s->name, "is a terminal; --file - reads %s from a pipe", what);
		return -1;
	}
	if (rc < 0 && (strcmp(path, "-") == 0 || rc == -ENXIO)) {
		cli_error(s->name, "%s", src_strerror(rc));
		return -1;
	}
	if (rc < 0)
		return 1;
	if (s->kind != SRC_BINARY && (takes & (1u << s->kind)))
		return 0;
	/* what it is (binary data: what it looks like), and what is taken */
	cli_error(s->name, "%s; --file takes %s",
		  s->kind == SRC_BINARY ? s->what :
		  s->kind == SRC_LOG ? "is a kmsg log" :
		  s->kind == SRC_DUMP ? "is a kmsg dump" :
		  s->empty ? "is empty" : "holds text", what);
	src_close(s);
	return -1;
}
