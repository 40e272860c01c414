/*
 * syslog_calls.c - times syslog(3) calls, for bench/syslog-preload: the
 * same program with libkmsg-syslog.so preloaded and without (then to
 * whatever listens on /dev/log).
 *
 * Usage: kmsg-syslog-calls N         N calls of a 64-byte message;
 *                                    prints "ns_per_call=X"
 *        kmsg-syslog-calls --reader  binds a datagram socket at /dev/log
 *                                    and reads it until killed
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

static int reader(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	static char buf[65536];
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	unlink(a.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		perror("kmsg-syslog-calls: /dev/log");
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (;;)
		(void)recv(fd, buf, sizeof(buf), 0);
}

int main(int argc, char **argv)
{
	struct timespec a, b;
	long n;

	if (argc == 2 && !strcmp(argv[1], "--reader"))
		return reader();
	if (argc != 2 || (n = atol(argv[1])) <= 0) {
		fprintf(stderr, "usage: kmsg-syslog-calls N | --reader\n");
		return 2;
	}
	openlog("bench", 0, LOG_USER);
	/* the opening of the log or socket is not timed */
	syslog(LOG_INFO, "warming up %d", 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long i = 0; i < n; i++)
		syslog(LOG_INFO, "a message of sixty-four bytes, as bench/run's: %010ld", i);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("ns_per_call=%.1f\n",
	       ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (double)n);
	return 0;
}
