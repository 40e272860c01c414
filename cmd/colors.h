/*
 * colors.h - terminal-colors.d(5) for kmsg read and kmsg follow: whether
 * the user turned dmesg's colours off, and the sequences a scheme file
 * gives them, read as util-linux's dmesg reads them (see colors.c).
 */
#ifndef KMSG_COLORS_H
#define KMSG_COLORS_H

#include <kmsg/kmsg.h>

#ifdef KMSG_TEST_HOOKS
/*
 * Replaces /etc/terminal-colors.d in the test suite's build of the tool
 * (KMSG_TEST_HOOKS; never the one installed): the tests cannot write to
 * /etc.
 */
#define COLORS_TEST_SYSDIR_ENV "KMSG_TEST_TERMINAL_COLORS_DIR"
#endif

enum { TC_DISABLE, TC_ENABLE, TC_SCHEME, TC_TYPES };

struct term_colors {
	int scanned;
	int rank[TC_TYPES];   /* per type: the best file's rank, 0 for none */
	char *scheme;         /* the path of the scheme file that applies */
	int scheme_named;     /* it names kmsg or dmesg: its names are ours */
	char *seq[KMSG_COLOR_COUNT]; /* from the scheme; NULL: dmesg's own */
};

/*
 * Finds the files of terminal-colors.d that apply to kmsg on $TERM: those
 * of the user's directory, or if it does not exist (or may not be read),
 * those of /etc/terminal-colors.d; only /etc's with privileges the user
 * lacks (priv_elevated()).  Reads no file.  Once per tc.
 */
void tc_scan(struct term_colors *tc);

/* 1 if a .disable file outranks every .enable file (tc_scan() first). */
int tc_disabled(const struct term_colors *tc);

/*
 * Reads the scheme file tc_scan() found, if any, into tc->seq.  A bad
 * line is reported on stderr (file and line named) and skipped; at most
 * 64 KiB of the file is read.  Returns 0, or -ENOMEM.
 */
int tc_read_scheme(struct term_colors *tc);

/* Frees what tc holds. */
void tc_free(struct term_colors *tc);

#endif
