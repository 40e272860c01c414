/*
 * read.c - kmsg read: print a log as dmesg(1) prints the kernel's, with
 * dmesg's options (output.c); -c clears what was printed, -C only clears.
 *
 * --file may also name a dump made by kmsg dump, or dmesg raw text (what
 * dmesg -r prints): the same options then print exactly what dmesg -F
 * prints for that text.
 */
#define _GNU_SOURCE
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define TEXT_CHUNK (1u << 20)

static const char *file_opt;
static int read_clear, clear_only;

const struct poptOption read_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log to read, or a dump, or dmesg raw text", "PATH" },
	{ "read-clear", 'c', POPT_ARG_NONE, &read_clear, 0,
	  "clear the records printed (needs write permission)", NULL },
	{ "clear", 'C', POPT_ARG_NONE, &clear_only, 0,
	  "clear the log without printing it (as kmsg clear)", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_options, 0,
	  "Format and filter options:", NULL },
	/* dmesg's -w and -W, to say where they went */
	{ "follow", 'w', POPT_ARG_NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, 'w', NULL, NULL },
	{ "follow-new", 'W', POPT_ARG_NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, 'W', NULL, NULL },
	POPT_AUTOHELP
	POPT_TABLEEND
};

/*
 * The machine's boot time as dmesg -F adds it to since-boot seconds, in
 * whole seconds: the wall clock minus CLOCK_BOOTTIME (both in
 * microseconds) rounded down, plus the seconds CLOCK_BOOTTIME is ahead of
 * CLOCK_MONOTONIC (time spent suspended).  dmesg drops the microseconds,
 * so kmsg must too for -T, -e and iso to print the same times.
 */
static int64_t dmesg_boot_ns(void)
{
	struct timeval now;
	struct timespec bt, mono;
	int64_t d;

	gettimeofday(&now, NULL);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	d = ((int64_t)now.tv_sec * 1000000 + now.tv_usec) -
	    ((int64_t)bt.tv_sec * 1000000 + bt.tv_nsec / 1000);
	d = d >= 0 ? d / 1000000 : -((-d + 999999) / 1000000);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	return (d + (bt.tv_sec - mono.tv_sec)) * INT64_C(1000000000);
}

/* One dmesg record of text (its terminating newline included) printed. */
static int text_record(struct output *o, const char *path, const char *p,
		       size_t n, int64_t boot_ns, unsigned flags)
{
	struct kmsg_record rec;
	int rc;

	/* dmesg skips NULs where a record would start */
	while (n > 0 && *p == '\0') {
		p++;
		n--;
	}
	rc = kmsg_dmesg_parse_flags(&rec, p, n, boot_ns, flags);
	if (rc < 0) {
		out_flush(o);
		cli_error(path, "a record with a time out of range skipped");
		return 0;
	}
	if (rc == 0)
		return 0;
	return out_record(o, &rec);
}

/*
 * Prints dmesg raw text from path, read in large chunks.  Records are cut
 * as dmesg -F cuts them: a record ends at a newline followed by '<', so a
 * line that does not start with '<' continues the message before it
 * (multi-line messages), and only the last record loses its final
 * newline.  With -r and no filter the text is printed as it is (escaped),
 * as dmesg -F -r does.  Returns an exit status.
 */
static int read_text(struct output *o, const char *path)
{
	size_t cap = TEXT_CHUNK, len = 0, start = 0, scan = 0;
	int64_t boot_ns = dmesg_boot_ns();
	char *buf = malloc(cap), *nb;
	int fd = -1, eof = 0, rc, status = EXIT_FAIL;
	int verbatim = o->fo.output == KMSG_OUT_SHORT &&
		       o->fo.time == KMSG_TIME_RAW && !o->filtering;
	/* dmesg reads "<N>" only when it prints or filters on it */
	unsigned flags = o->fo.output == KMSG_OUT_SHORT &&
			 o->fo.time != KMSG_TIME_RAW && !o->prio_filter &&
			 !(o->fo.flags & (KMSG_FMT_DECODE | KMSG_FMT_COLOR)) ?
			 KMSG_DMESG_SKIP_PRIO : 0;
	ssize_t n;

	if (buf == NULL) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		cli_error(path, "%s", strerror(errno));
		goto out;
	}
	out_pager_start(o);
	while (!eof) {
		if (start > 0 && (len == cap || start >= cap / 2)) {
			memmove(buf, buf + start, len - start);
			len -= start;
			scan -= start;
			start = 0;
		}
		if (len == cap) {
			/* one record longer than the buffer */
			nb = realloc(buf, cap * 2);
			if (nb == NULL) {
				cli_error(NULL, "out of memory");
				goto out;
			}
			buf = nb;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			out_flush(o);
			cli_error(path, "%s", strerror(errno));
			goto out;
		}
		if (n == 0)
			eof = 1;
		len += (size_t)n;
		if (verbatim) {
			char *nl = memrchr(buf + start, '\n', len - start);

			if (nl != NULL) {
				rc = out_verbatim(o, buf + start,
						  (size_t)(nl + 1 - (buf + start)));
				if (rc < 0) {
					status = out_fail(o, rc);
					goto out;
				}
				start = (size_t)(nl + 1 - buf);
			}
			scan = len;
			continue;
		}
		for (;;) {
			char *nl = memchr(buf + scan, '\n', len - scan);
			size_t i;

			if (nl == NULL) {
				scan = len;
				break;
			}
			i = (size_t)(nl - buf);
			if (i + 1 == len && !eof) {
				scan = i; /* is the next byte a '<'? read on */
				break;
			}
			if (i + 1 < len && buf[i + 1] == '<') {
				rc = text_record(o, path, buf + start, i + 1 - start,
						 boot_ns, flags);
				if (rc < 0) {
					status = out_fail(o, rc);
					goto out;
				}
				start = i + 1;
			}
			scan = i + 1;
		}
	}
	if (start < len) {
		rc = verbatim ? out_verbatim(o, buf + start, len - start) :
		     text_record(o, path, buf + start, len - start, boot_ns, flags);
		if (rc < 0) {
			status = out_fail(o, rc);
			goto out;
		}
	}
	rc = out_end(o);
	if (rc < 0) {
		status = out_fail(o, rc);
		goto out;
	}
	status = EXIT_OK;
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return status;
}

/*
 * Prints the records of log that are not cleared (or from --since on):
 * whole lines, fragments joined, the incomplete lines at the end shown as
 * they are.  Gaps (records lost to writers or damaged) are reported on
 * stderr where they occur.  With clear, marks as cleared every record up
 * to the last one printed (or filtered out), never one written after it.
 * Returns an exit status.
 */
static int read_log(struct output *o, struct kmsg_log *log, const char *path,
		    int clear)
{
	struct kmsg_reader *r = NULL;
	struct kmsg_record rec;
	struct kmsg_stat st;
	int rc, status = EXIT_FAIL, flushed = 0, any = 0;

	rc = kmsg_log_stat(&st, log);
	if (rc == 0)
		rc = kmsg_reader_new(&r, log, KMSG_READER_JOIN);
	if (rc == 0)
		rc = o->have_since ? kmsg_reader_seek_time(r, o->since_ns)
				   : kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	if (rc < 0) {
		cli_lib_error(path, rc);
		goto out;
	}
	out_pager_start(o);
	for (;;) {
		rc = kmsg_reader_next(r, &rec);
		if (rc < 0) {
			out_flush(o);
			cli_lib_error(path, rc);
			goto out;
		}
		if (rc == 0) {
			/* the end: now the lines still waiting for their end */
			if (flushed)
				break;
			kmsg_reader_flush(r, INT64_MAX);
			flushed = 1;
			continue;
		}
		any = 1;
		OUT_GAPS(o, &rec);
		/* a time seek may land before the clear mark */
		if (o->have_since && rec.seq < st.clear_seq)
			continue;
		rc = out_record(o, &rec);
		if (rc < 0) {
			status = out_fail(o, rc);
			goto out;
		}
	}
	rc = out_end(o);
	if (rc < 0) {
		status = out_fail(o, rc);
		goto out;
	}
	if (clear && any) {
		/* the reader's position is one past the last record it
		 * returned: a record written since is above it and stays */
		rc = kmsg_log_clear(log, kmsg_reader_position(r));
		if (rc < 0) {
			cli_lib_error(path, rc);
			goto out;
		}
	}
	status = EXIT_OK;
out:
	kmsg_reader_free(r);
	return status;
}

int cmd_read(int argc, const char **argv)
{
	poptContext con = poptGetContext("kmsg read", argc, argv, read_options, 0);
	struct output o = { .saved_out = -1, .saved_err = -1 };
	struct kmsg_log *log = NULL;
	const char *path;
	int rc, kind, status = EXIT_FAIL, setup = 0;

	while ((rc = poptGetNextOpt(con)) > 0) {
		fprintf(stderr, "kmsg read: -%c: use 'kmsg follow' (-n all for "
			"dmesg -w, -n 0 for dmesg -W)\n", rc);
		status = EXIT_USAGE;
		goto out;
	}
	if (rc < -1) {
		status = cli_popt_error(con, "read", rc);
		goto out;
	}
	if (poptPeekArg(con)) {
		fprintf(stderr, "kmsg read: unexpected argument '%s'\n"
			"Try 'kmsg read --help' for more information.\n",
			poptPeekArg(con));
		status = EXIT_USAGE;
		goto out;
	}
	if (read_clear && clear_only) {
		fprintf(stderr, "kmsg read: --read-clear and --clear cannot be "
			"used together\n");
		status = EXIT_USAGE;
		goto out;
	}
	status = out_setup(&o, "read", 0);
	setup = 1;
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	path = cli_log_path(file_opt);
	if (path == NULL)
		goto out;
	if (clear_only) {
		const char *sub[] = { "clear", "--file", path, NULL };

		status = cmd_clear(3, sub);
		goto out;
	}

	kind = src_detect(path);
	if (kind == -EISDIR) {
		cli_error(path, "is a directory");
		goto out;
	}
	if (kind < 0) {
		/* cli_open_log() words the error as every subcommand does */
		log = cli_open_log(path, read_clear ? KMSG_OPEN_WRITE : 0, 0, 0);
		if (log == NULL)
			goto out;
		kind = SRC_LOG;
	}
	if (read_clear && kind != SRC_LOG) {
		cli_error(path, "is %s, which cannot be cleared",
			  kind == SRC_DUMP ? "a kmsg dump" : "not a kmsg log");
		goto out;
	}
	switch (kind) {
	case SRC_TEXT:
		status = read_text(&o, path);
		goto out;
	case SRC_DUMP:
		rc = kmsg_dump_open(&log, path);
		if (rc < 0) {
			cli_lib_error(path, rc);
			goto out;
		}
		break;
	default:
		if (log == NULL)
			log = cli_open_log(path, read_clear ? KMSG_OPEN_WRITE : 0, 0, 0);
		if (log == NULL)
			goto out;
	}
	status = read_log(&o, log, path, read_clear);
out:
	if (setup)
		out_free(&o);
	kmsg_log_close(log);
	poptFreeContext(con);
	return status;
}
