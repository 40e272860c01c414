/*
 * pager.h - the pager read -H pipes its output into.
 */
#ifndef KMSG_PAGER_H
#define KMSG_PAGER_H

#include <sys/types.h>

/* A pager that runs (pid > 0) and the descriptors it took; zero: none. */
struct pager {
	pid_t pid;
	int saved_out, saved_err;
};

/*
 * Starts the pager if standard output is a terminal: PAGER, or less with
 * LESS=FRSX unless LESS is set (dmesg's), none if PAGER is empty or cat
 * or cannot be found.  With privileges the user lacks (priv_elevated()),
 * only /usr/bin/less or /bin/less in its secure mode, whatever PAGER
 * names (see pager.c), and none if neither is there.  Standard output (and standard error, if a
 * terminal) then go into it, and SIGINT and SIGQUIT are ignored until
 * pager_end(): Ctrl-C is the pager's.  Failing to start one is not an
 * error: the output goes to the terminal.
 */
void pager_start(struct pager *p);

/* Closes the pager's pipe (restoring standard output and error) and
 * waits for it to quit.  Nothing if none runs; safe to call twice. */
void pager_end(struct pager *p);

#endif
