/*
 * listen_send.c - the senders of bench/listen: P processes, each sending
 * N syslog datagrams to a unix socket as fast as it takes them (blocking
 * sends: the receiver's queue is the only brake, as for syslog(3)).
 *
 * Usage: listen_send SOCKET P N.  Every message has the same length, so
 * that a file of them tells its count by its size; each is distinct
 * ("bench[k]: message k i"), so that a loss or a duplicate shows.
 * Exits 0 when every send succeeded, 1 after saying which failed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

static int sender(const char *path, int k, long n)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char msg[128];
	int fd = socket(AF_UNIX, SOCK_DGRAM, 0);

	strncpy(sa.sun_path, path, sizeof(sa.sun_path) - 1);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "listen_send: %s: %s\n", path, strerror(errno));
		return 1;
	}
	for (long i = 0; i < n; i++) {
		int len = snprintf(msg, sizeof(msg),
				   "<14>bench[%d]: message %d %09ld, served in 12 ms, status 200 OK",
				   k, k, i);
		while (send(fd, msg, (size_t)len, 0) < 0) {
			if (errno != EINTR) {
				fprintf(stderr, "listen_send: send: %s\n", strerror(errno));
				return 1;
			}
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	int procs, st, bad = 0;
	long n;

	if (argc != 4 || (procs = atoi(argv[2])) < 1 || procs > 9 || (n = atol(argv[3])) < 1) {
		fprintf(stderr, "usage: listen_send SOCKET PROCS(1-9) N\n");
		return 2;
	}
	for (int k = 0; k < procs; k++) {
		pid_t pid = fork();
		if (pid < 0) {
			perror("listen_send: fork");
			return 1;
		}
		if (pid == 0)
			_exit(sender(argv[1], k, n));
	}
	while (wait(&st) > 0)
		bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	return bad;
}
