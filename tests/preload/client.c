/*
 * client.c - a program that logs through syslog(3) as programs do, for
 * tests/cli/preload.sh, which runs it with and without libkmsg-syslog.so.
 * Built twice: plain, and with -D_FORTIFY_SOURCE=2 -O2, where <syslog.h>
 * turns syslog() and vsyslog() into __syslog_chk() and __vsyslog_chk().
 *
 * The arguments are steps, done in order:
 *   open IDENT OPTS FAC  openlog(); OPTS a comma list of pid, perror, cons,
 *                        ndelay (or -), FAC a facility number (0: none);
 *                        IDENT "-" is NULL
 *   log PRI TEXT         syslog(PRI, "%s", TEXT)
 *   vlog PRI TEXT        the same through vsyslog()
 *   fmt PRI FMT ARG      syslog(PRI, FMT, ARG): FMT takes one string
 *   errno E TEXT         errno = E; syslog(LOG_ERR, "TEXT: %m"); fails
 *                        (exit 3) unless errno is E after the call
 *   mask M               setlogmask(M), the old mask printed
 *   masked               with the mask at LOG_UPTO(LOG_ERR), a debug
 *                        message with an invalid pointer for its "%s":
 *                        only a call that formats before it tests the
 *                        mask reads it (and crashes)
 *   threads N M          N threads each log M messages "thread T message I"
 *   fork TEXT            a child logs TEXT and prints "child PID" on
 *                        stdout; the parent waits for it
 *   fork-threads TEXT    the same while 4 other threads are logging
 *   close                closelog()
 *   setuid               become nobody (65534)
 *   long N               one message of N bytes ("0123456789" repeated)
 *   close-stderr         close(2)
 *   print TEXT           TEXT on stdout
 *   ids                  "euid N" on stdout
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stdout, "client: %s\n", what);
	fflush(stdout);
	exit(3);
}

static int options(const char *s)
{
	int o = 0;

	if (strstr(s, "pid"))
		o |= LOG_PID;
	if (strstr(s, "perror"))
		o |= LOG_PERROR;
	if (strstr(s, "cons"))
		o |= LOG_CONS;
	if (strstr(s, "ndelay"))
		o |= LOG_NDELAY;
	return o;
}

static void vlog(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsyslog(pri, fmt, ap);
	va_end(ap);
}

struct worker {
	int id, n;
	volatile int *stop;
};

static void *work(void *arg)
{
	struct worker *w = arg;

	for (int i = 0; w->n ? i < w->n : !*w->stop; i++)
		syslog(LOG_INFO, "thread %d message %d", w->id, i);
	return NULL;
}

static void do_fork(const char *text, int busy)
{
	pthread_t th[4];
	struct worker w[4];
	volatile int stop = 0;
	pid_t pid;
	int st;

	for (int i = 0; busy && i < 4; i++) {
		w[i] = (struct worker){ 100 + i, 0, &stop };
		if (pthread_create(&th[i], NULL, work, &w[i]))
			die("pthread_create");
	}
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		syslog(LOG_NOTICE, "%s", text);
		printf("child %ld\n", (long)getpid());
		fflush(stdout);
		_exit(0);
	}
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
		die("the child failed");
	stop = 1;
	for (int i = 0; busy && i < 4; i++)
		pthread_join(th[i], NULL);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *s = argv[i];
#define ARG(k) (i + (k) < argc ? argv[i + (k)] : (die("missing argument"), ""))
		if (!strcmp(s, "open")) {
			const char *id = ARG(1);
			openlog(strcmp(id, "-") ? id : NULL, options(ARG(2)), atoi(ARG(3)));
			i += 3;
		} else if (!strcmp(s, "log")) {
			syslog(atoi(ARG(1)), "%s", ARG(2));
			i += 2;
		} else if (!strcmp(s, "vlog")) {
			vlog(atoi(ARG(1)), "%s", ARG(2));
			i += 2;
		} else if (!strcmp(s, "fmt")) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
			syslog(atoi(ARG(1)), ARG(2), ARG(3));
#pragma GCC diagnostic pop
			i += 3;
		} else if (!strcmp(s, "errno")) {
			int e = atoi(ARG(1));
			errno = e;
			syslog(LOG_ERR, "%s: %m", ARG(2));
			if (errno != e)
				die("errno changed by syslog()");
			i += 2;
		} else if (!strcmp(s, "mask")) {
			printf("old mask %#x\n", setlogmask(atoi(ARG(1))));
			i += 1;
		} else if (!strcmp(s, "masked")) {
			int old = setlogmask(LOG_UPTO(LOG_ERR));
			syslog(LOG_DEBUG, "%s", (const char *)16);
			vlog(LOG_DEBUG, "%s", (const char *)16);
			setlogmask(old);
		} else if (!strcmp(s, "threads")) {
			int n = atoi(ARG(1)), m = atoi(ARG(2));
			pthread_t *th = calloc((size_t)n, sizeof(*th));
			struct worker *w = calloc((size_t)n, sizeof(*w));
			if (!th || !w)
				die("calloc");
			for (int t = 0; t < n; t++) {
				w[t] = (struct worker){ t, m, NULL };
				if (pthread_create(&th[t], NULL, work, &w[t]))
					die("pthread_create");
			}
			for (int t = 0; t < n; t++)
				pthread_join(th[t], NULL);
			free(th);
			free(w);
			i += 2;
		} else if (!strcmp(s, "fork") || !strcmp(s, "fork-threads")) {
			do_fork(ARG(1), s[4] == '-');
			i += 1;
		} else if (!strcmp(s, "close")) {
			closelog();
		} else if (!strcmp(s, "setuid")) {
			if (setgid(65534) || setuid(65534))
				die("setuid");
		} else if (!strcmp(s, "long")) {
			size_t n = (size_t)atol(ARG(1));
			char *m = malloc(n + 1);
			if (!m)
				die("malloc");
			for (size_t k = 0; k < n; k++)
				m[k] = (char)('0' + k % 10);
			m[n] = 0;
			syslog(LOG_INFO, "%s", m);
			free(m);
			i += 1;
		} else if (!strcmp(s, "close-stderr")) {
			close(2);
		} else if (!strcmp(s, "ids")) {
			printf("euid %ld\n", (long)geteuid());
		} else if (!strcmp(s, "print")) {
			printf("%s\n", ARG(1));
			i += 1;
		} else {
			die("unknown step");
		}
	}
	return fflush(stdout) ? 1 : 0;
}
