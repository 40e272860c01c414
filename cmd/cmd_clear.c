/*
 * cmd_clear.c - kmsg clear: mark every record written so far as cleared, as
 * dmesg -C does for the kernel's buffer.  Nothing is deleted: readers
 * start after the mark (kmsg read, follow -n all), and kmsg stat and
 * readers that ask for the oldest record still see the rest.
 */
#include "source.h"

#include <errno.h>

#include <stdio.h>

static const char *file_opt;

const struct poptOption clear_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log to clear (needs write permission)", "PATH" },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

int cmd_clear(int argc, const char **argv)
{
	poptContext con = poptGetContext("kmsg clear", argc, argv, clear_options, 0);
	struct kmsg_log *log = NULL;
	struct kmsg_stat st;
	const char *path;
	int rc, kind, status = EXIT_FAIL;

	status = cli_parse_log_options(con, "clear", &file_opt, &path);
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	/* say what the file is rather than "not a kmsg log file" */
	kind = src_detect(path);
	if (kind == -EISDIR) {
		cli_error(path, "is a directory");
		goto out;
	}
	if (kind == SRC_DUMP || kind == SRC_TEXT || kind == SRC_BINARY) {
		cli_error(path, "is %s, which cannot be cleared",
			  kind == SRC_DUMP ? "a kmsg dump" : "not a kmsg log");
		goto out;
	}
	log = cli_open_log(path, KMSG_OPEN_WRITE, NULL);
	if (log == NULL)
		goto out;
	rc = kmsg_log_stat(&st, log);
	if (rc == 0)
		rc = kmsg_log_clear(log, st.next_seq);
	if (rc < 0) {
		cli_lib_error(path, rc);
		goto out;
	}
	status = EXIT_OK;
out:
	kmsg_log_close(log);
	poptFreeContext(con);
	return status;
}
