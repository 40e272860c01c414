/*
 * kmsgfile.c - kmsg read -K: records in the /dev/kmsg format, as dmesg -K
 * reads them: what kmsg read -o kmsg writes (which reads back as the log
 * it came from), what cat /dev/kmsg saves, dmesg -K's NUL-separated
 * records, or the kernel's /dev/kmsg itself up to its end.  The parsing
 * is libkmsg's (kmsg_devkmsg_*); this file streams the input through it
 * in chunks, so memory stays bounded whatever the size of the input.
 */
#define _GNU_SOURCE
#include "output.h"
#include "source.h"
#include "lines.h"
#include "when.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* The longest line taken whole: a record of kmsg's longest text (64 KiB)
 * escaped is 256 KiB.  A longer one is cut short there. */
#define KF_LINE_MAX (1u << 20)
/* Skipped lines named one by one; past that they are counted. */
#define KF_REPORT_MAX 10

struct kmsg_in {
	struct output *o;
	struct kmsg_devkmsg *p;
	struct src s;
	int dev;              /* a character device: a record per read() */
	int lost_said;
	uint64_t line;        /* the number of the line being read, from 1 */
	uint64_t skipped;
};

/* Says that the line being read was skipped, and why. */
static void skipped(struct kmsg_in *k, const char *why)
{
	if (++k->skipped > KF_REPORT_MAX)
		return;
	out_flush(k->o);
	cli_error(k->s.name, "line %llu: %s: skipped", (unsigned long long)k->line, why);
}

/* One line (n bytes, no newline) to the parser, and the record it ended
 * (if any) to the output.  0 or a negative code. */
static int feed_one(struct kmsg_in *k, const char *p, size_t n)
{
	struct kmsg_record rec;
	const char *why;
	int rc = kmsg_devkmsg_feed(&rec, k->p, p, n);

	if (rc < 0)
		return rc;
	why = kmsg_devkmsg_skipped(k->p);
	if (rc == 1 && (rc = out_record(k->o, &rec)) < 0)
		return rc;
	if (why)
		skipped(k, why);
	return 0;
}

/* A line, which may hold NULs: dmesg -K's files end each record with one.
 * The parser is given each NUL at the start of what follows it. */
static int feed_line(struct kmsg_in *k, const char *p, size_t n)
{
	const char *nul;
	size_t from = 0;
	int rc;

	while ((nul = memchr(p + from, '\0', n - from)) != NULL) {
		rc = feed_one(k, p, (size_t)(nul - p));
		if (rc < 0)
			return rc;
		n -= (size_t)(nul - p);
		p = nul;
		from = 1;
	}
	return feed_one(k, p, n);
}

/*
 * Up to n bytes of the input: src_read(), or for /dev/kmsg one record,
 * and 0 at its end (it would block).  Records the
 * kernel overwrote before they were read are said to be lost, once.
 */
static ssize_t in_read(void *ctx, char *buf, size_t n)
{
	struct kmsg_in *k = ctx;
	ssize_t r;

	if (!k->dev) {
		/* what was printed goes out while a live pipe is quiet */
		if (src_idle(&k->s))
			(void)out_flush(k->o);
		return src_read(&k->s, buf, n);
	}
	for (;;) {
		r = read(k->s.fd, buf, n);
		if (r >= 0)
			return r;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN)
			return 0;
		if (errno != EPIPE)
			return -errno;
		if (!k->lost_said) {
			out_flush(k->o);
			cli_error(k->s.name, "records lost: the kernel overwrote "
				  "them before they were read");
			k->lost_said = 1;
		}
	}
}

/* Opens path as k's input; prints why not and returns -1. */
static int in_open(struct kmsg_in *k, const char *path)
{
	struct stat st;
	int rc;

	/* the kernel's /dev/kmsg (device 1,11) gives a record per read()
	 * and blocks at its end: read without waiting, and without looking
	 * at it first */
	if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISCHR(st.st_mode) &&
	    major(st.st_rdev) == 1 && minor(st.st_rdev) == 11) {
		memset(&k->s, 0, sizeof(k->s));
		k->s.name = path;
		k->s.fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		if (k->s.fd < 0 && errno == EPERM) {
			/* the file's mode allows it: the kernel does not */
			cli_error(path, "%s: the kernel lets only CAP_SYSLOG read it "
				  "(kernel.dmesg_restrict): run as root, or read a saved copy",
				  strerror(errno));
			return -1;
		}
		if (k->s.fd < 0) {
			cli_error(path, "%s", strerror(errno));
			return -1;
		}
		k->dev = 1;
		/* from the kernel's clear mark on, as dmesg reads it (a
		 * kernel without it reads all) */
		(void)lseek(k->s.fd, 0, SEEK_DATA);
		return 0;
	}
	rc = src_open(&k->s, path);
	if (rc < 0) {
		cli_error(k->s.name, "%s", rc == -ENOTTY ? "is a terminal; --kmsg-file - "
			  "reads records from a pipe" : src_strerror(rc));
		return -1;
	}
	switch (k->s.kind) {
	case SRC_LOG:
	case SRC_DUMP:
		cli_error(k->s.name, "is a kmsg %s, not /dev/kmsg records: read it "
			  "with --file", k->s.kind == SRC_LOG ? "log" : "dump");
		return -1;
	case SRC_BINARY:
		cli_error(k->s.name, "%s; --kmsg-file takes /dev/kmsg records", k->s.what);
		return -1;
	}
	return 0;
}

int read_kmsg_file(struct output *o, const char *path)
{
	struct kmsg_in k = { .o = o, .s = { .fd = -1 }, .line = 1 };
	struct lines *lr = NULL;
	struct line ln;
	struct kmsg_record rec;
	int64_t boot_ns = 0;
	int ended = 1, rc, status = EXIT_FAIL;  /* ended: at a newline */

	lr = lines_new(KF_LINE_MAX, 0, in_read, &k);
	if (lr == NULL) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	if (in_open(&k, path) < 0)
		goto out;
	/* the kernel's records are dated as dmesg -K dates them; the clocks
	 * cannot fail here, and if they did only those dates would suffer */
	(void)when_boot_time(&boot_ns);
	rc = kmsg_devkmsg_new(&k.p, boot_ns);
	if (rc < 0) {
		cli_lib_error(NULL, rc);
		goto out;
	}
	/* dmesg prints the kernel's records so (not its -F text) */
	rc = out_set_flag(o, KMSG_FMT_NO_TAIL_INDENT);
	if (rc < 0) {
		cli_lib_error(NULL, rc);
		goto out;
	}
	out_pager_start(o);
	while ((rc = lines_next(lr, &ln)) > 0) {
		rc = feed_line(&k, ln.p, ln.len);
		if (rc < 0)
			goto fail;
		if (ln.total) {
			out_flush(o);
			cli_error(k.s.name, "line %llu: longer than 1 MiB: cut short "
				  "there, the rest skipped", (unsigned long long)k.line);
		}
		ended = ln.end == LINE_NEWLINE;
		k.line++;
	}
	if (rc < 0) {
		out_flush(o);
		src_read_error(&k.s, rc, "/dev/kmsg records");
		goto out;
	}
	/* the input's end, after its last newline, is an empty last line */
	if (ended && (rc = feed_line(&k, "", 0)) < 0)
		goto fail;
	rc = kmsg_devkmsg_end(&rec, k.p);
	if (rc == 1)
		rc = out_record(o, &rec);
	if (rc < 0)
		goto fail;
	if (k.skipped > KF_REPORT_MAX) {
		out_flush(o);
		cli_error(k.s.name, "%llu lines skipped in all (the first %d named above)",
			  (unsigned long long)k.skipped, KF_REPORT_MAX);
	}
	rc = out_end(o);
	if (rc < 0)
		goto fail;
	status = EXIT_OK;
	goto out;
fail:
	status = out_fail(o, rc);
out:
	kmsg_devkmsg_free(k.p);
	lines_free(lr);
	src_close(&k.s);
	return status;
}
