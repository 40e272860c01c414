/*
 * cmd_dump.c - kmsg dump: write a compressed snapshot of a log, readable
 * offline with kmsg read --file, kmsg stat --file, or gunzip.
 *
 * The dump goes to standard output (never to a terminal) or, with -o, to
 * a new file beside FILE that takes its place once complete, so a failed
 * dump never leaves a half file under the name asked for.  FILE is never
 * another user's, nor a symbolic link (cli_replaceable()): a dump run as
 * root into /tmp must not go where another user planted a file for it.
 * A device or a FIFO is written into only with --special, as standard
 * output is.
 *
 * It compresses at zlib's level 1 unless told otherwise: on a log of short
 * records level 6 takes four times the CPU for a dump 6% smaller, and a
 * dump that copies faster than writers write is one that completes.
 */
#define _GNU_SOURCE
#include "source.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *file_opt, *output_opt;
static int verbose, special, level = 1;

const struct poptOption dump_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log to dump (read permission is enough; -: standard input)", "PATH" },
	{ "output", 'o', POPT_ARG_STRING, &output_opt, 0,
	  "write the dump to FILE instead of standard output", "FILE" },
	{ "special", '\0', POPT_ARG_NONE, &special, 0,
	  "-o may name a FIFO or a device of your own or root's: write into it", NULL },
	{ "level", '\0', POPT_ARG_INT, &level, 0,
	  "compression level, 1 (fastest, the default) to 9 (smallest)", "N" },
	{ "verbose", 'v', POPT_ARG_NONE, &verbose, 0,
	  "report the records and bytes written on standard error", NULL },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

/* Words for what kmsg_dump_write() returns that the user can act on. */
static void report_dump_error(const char *log_path, const char *out_name, int r)
{
	switch (r) {
	case -EAGAIN:
		cli_error(log_path, "writers overwrote records faster than the dump "
			  "could copy them; try again, or dump to a file");
		break;
	case -ENOSPC:
	case -EDQUOT:
	case -EFBIG:
	case -EIO:
	case -EBADF:
		cli_error(out_name, "%s", strerror(-r));
		break;
	default:
		cli_lib_error(log_path, r);
	}
}

/* Whether st (the file -o names) is the log being dumped, from path
 * through s: its dump would take the log's place. */
static int is_the_log(const struct stat *st, const char *path, const struct src *s)
{
	struct stat in;

	if (s->fd >= 0 && !s->stream ? fstat(s->fd, &in) != 0 :
	    strcmp(path, "-") == 0 || stat(path, &in) != 0)
		return 0;
	return st->st_dev == in.st_dev && st->st_ino == in.st_ino;
}

/*
 * Opens -o's file: a new file that takes its place once complete
 * (cli_temp_beside()), unless it is the log itself; with --special, a
 * device or a FIFO is written into instead, as standard output is
 * (cli_open_special()), never a terminal.  Returns the descriptor (*tmp
 * set for a new file), or -1 after saying why not.
 */
static int open_output(struct cli_temp *tmp, int *have_tmp, const char *name,
		       const char *path, const struct src *s)
{
	struct stat st;
	int fd, rc;

	if (stat(name, &st) == 0 && S_ISREG(st.st_mode) && is_the_log(&st, path, s)) {
		cli_error(name, "is the log being dumped: the dump would take its place "
			  "and its records would be lost; give -o another file");
		return -1;
	}
	rc = cli_temp_beside(tmp, name);
	if (rc == -ENODEV && special) {
		fd = cli_open_special(name);
		if (fd < 0) {
			cli_output_error(name, fd, NULL);
			return -1;
		}
		if (isatty(fd)) {
			close(fd);
			cli_error(name, "is a terminal; refusing to write a binary dump to "
				  "it: use -o FILE or a pipe");
			return -1;
		}
		return fd;
	}
	if (rc < 0) {
		cli_output_error(name, rc, "-o writes into a FIFO or a device only with "
				 "--special (or give -o - and redirect standard output)");
		return -1;
	}
	*have_tmp = 1;
	return tmp->fd;
}

int cmd_dump(int argc, const char **argv)
{
	poptContext con = poptGetContext("kmsg dump", argc, argv, dump_options, 0);
	struct kmsg_log *log = NULL;
	struct src src = { .fd = -1 };
	struct cli_temp tmp = { .fd = -1 };
	const char *path, *out_name = "standard output";
	uint64_t records = 0;
	int rc, fd = STDOUT_FILENO, have_tmp = 0, status = EXIT_FAIL;
	off_t start = -1, end;

	status = cli_parse_options(con, "dump");
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	if (level < 1 || level > 9) {
		status = cli_usage_error("dump", "--level", "%d is not a level from 1 to 9",
					 level);
		goto out;
	}
	if (output_opt && cli_path_given("dump", "--output", output_opt, "output") != 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (special && !output_opt) {
		status = cli_usage_error("dump", "--special", "says what -o may name: give "
					 "-o FILE too");
		goto out;
	}
	if (output_opt && !strcmp(output_opt, "-"))
		output_opt = NULL;
	if (!output_opt && cli_need_stdout() != 0)
		goto out;
	if (!output_opt && isatty(STDOUT_FILENO)) {
		cli_error(NULL, "refusing to write a binary dump to a terminal; "
			  "use -o FILE or a pipe");
		goto out;
	}
	path = cli_log_path(file_opt);
	if (path == NULL)
		goto out;
	rc = src_open_for(&src, path, SRC_TAKES_LOG);
	if (rc < 0)
		goto out;
	/* a log on a pipe is copied first; cli_open_log() words the errors */
	log = rc == 1 ? cli_open_log(path, KMSG_OPEN_READ, NULL) :
	      src_open_log(&src, KMSG_OPEN_READ);
	if (log == NULL)
		goto out;

	if (output_opt) {
		out_name = output_opt;
		fd = open_output(&tmp, &have_tmp, output_opt, path, &src);
		if (fd < 0)
			goto out;
	} else {
		/* where a regular file on stdout starts, for -v's count */
		start = lseek(fd, 0, SEEK_CUR);
	}
	{
		struct kmsg_dump_opts dopts = KMSG_DUMP_OPTS_INIT;
		struct cli_progress prog;

		cli_progress_init(&prog, "dump");
		dopts.level = level;
		dopts.progress = cli_progress;
		dopts.progress_arg = &prog;
		rc = kmsg_dump_write_opts(&records, log, fd, &dopts);
		cli_progress_end(&prog);
	}
	if (rc == -EPIPE)
		cli_exit_if_epipe(EPIPE);  /* the reader went away: quietly */
	if (rc < 0) {
		report_dump_error(path, out_name, rc);
		goto out;
	}
	if (have_tmp) {
		/* on disk under its own name before it takes FILE's */
		end = lseek(fd, 0, SEEK_END);
		rc = cli_replace(&tmp, output_opt, 0640);
		fd = STDOUT_FILENO;
		have_tmp = 0;
		if (rc < 0) {
			cli_output_error(out_name, rc, NULL);
			goto out;
		}
	} else {
		end = start >= 0 ? lseek(fd, 0, SEEK_CUR) : -1;
		if (fd != STDOUT_FILENO) {
			rc = close(fd);
			fd = STDOUT_FILENO;
			if (rc < 0) {
				cli_error(out_name, "%s", strerror(errno));
				goto out;
			}
		}
	}
	if (verbose) {
		if (end >= 0)
			fprintf(stderr, "kmsg: dump: %llu records, %lld bytes\n",
				(unsigned long long)records, (long long)(end - (start > 0 ? start : 0)));
		else
			fprintf(stderr, "kmsg: dump: %llu records\n", (unsigned long long)records);
	}
	status = EXIT_OK;
out:
	if (have_tmp)
		cli_temp_drop(&tmp);
	else if (fd != STDOUT_FILENO)
		close(fd);
	src_close(&src);
	kmsg_log_close(log);
	poptFreeContext(con);
	return status;
}
