/*
 * latency.c - kmsg-latency: how long a line takes from the writer to the
 * output of a follower (`kmsg follow`, `busybox logread -f`, `tail -f` on
 * a plain file), and what the follower costs while nothing is written.
 *
 * Follow latency.  The follower runs as a child with its stdout on a pipe
 * that this program reads.  Each sample writes one ~64-byte message that
 * carries a token of its own ("lat <i> ...") and waits until a line holding
 * that token comes out of the pipe.  The time runs from just before the
 * write (kmsg_log_print(), syslog(3), or write(2) to an O_APPEND file) to
 * just after the read(2) that delivered the line, so it includes the
 * writer's own cost, the follower's wake-up and formatting, and one pipe
 * hop back to us.  Before each sample we sleep a random 0.2-2 ms, so the
 * follower has gone back to sleep, as a watcher in a terminal would be:
 * the figure is a cold wake-up, not a busy loop catching the next record.
 * Lines may carry a prefix (a timestamp, a host name); only the token is
 * matched.  Every wait is bounded (WAIT_MS); a lost line is an error.
 * A follower that polls rather than sleeps until woken shows its polling
 * period instead: each sample is written just after the previous line came
 * out, that is just after the follower's last look, so it waits the whole
 * period (busybox 1.35's logread -f sleeps 1 s), the worst case, where a
 * writer at a random moment would see half of it on average.
 *
 * Idle cost.  With --idle S the follower is then left alone for S seconds,
 * and its CPU time (/proc/PID/task/TID/schedstat, first field) and context
 * switches (voluntary and involuntary, /proc/PID/task/TID/status) over that
 * time are reported, summed over its threads.  A follower that sleeps until
 * something is written shows about nothing; one that polls shows its period.
 *
 * The targets:
 *   kmsg     creates the log at --log (1 MiB) and runs
 *            `KMSG follow -F LOG -n 0 -t`, KMSG from --kmsg (default: the
 *            kmsg next to this program, else kmsg on PATH)
 *   logread  runs `busybox logread -f`; a `busybox syslogd -n -C` must
 *            already listen on /dev/log (messages go there by syslog(3),
 *            user.notice)
 *   tail     runs GNU `tail -n 0 -f FILE` on the plain file --file
 * Followers get LC_ALL=C and NO_COLOR=1.  Without --log or --file the file
 * is made in a directory of its own in $TMPDIR (or /tmp), and both are
 * removed when the run ends, however it ends: done, failed, or stopped by
 * SIGINT, SIGTERM or SIGHUP (which also end the follower).
 *
 * Usage: kmsg-latency --target kmsg|logread|tail [--samples N] [--idle S]
 *                     [--kmsg PATH] [--log PATH] [--file PATH] [--quick]
 * --samples defaults to 2000 (--quick: 200); --idle to 0 (no idle run).
 * The last lines printed are key=value figures, e.g.
 * follow_latency_kmsg_p50_us=16.2 and idle_kmsg_wakeups=0.
 * Exit status: 0 done, 1 failure at run time, 2 bad usage.
 */
#define _GNU_SOURCE
#include <kmsg/kmsg.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#define WAIT_MS 5000          /* the longest any one line may take */
#define READY_RETRY_MS 50     /* between readiness markers */
#define MSG_LEN 64            /* bytes of a sample's text, newline aside */
#define LINE_MAX_BYTES 65536  /* our line buffer; longer lines are dropped */

enum target { T_KMSG, T_LOGREAD, T_TAIL };
static const char *const target_names[] = { "kmsg", "logread", "tail" };

static enum target target;
static pid_t follower = -1;
static int out_fd = -1;         /* read end of the follower's stdout */
static struct kmsg_log *klog;   /* target kmsg */
static int file_fd = -1;        /* target tail */
static char temp_dir[PATH_MAX];       /* a directory we made and must remove, or "" */
static char temp_path[PATH_MAX + 32]; /* a file in it we must remove, or "" */
static pid_t owner;              /* this process, not a child before its exec */

static char buf[LINE_MAX_BYTES];
static size_t buf_len;

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/*
 * Ends the follower: SIGTERM, then SIGKILL if it has not gone within two
 * seconds, and reaps it.  Safe to call when there is none.
 */
static void stop_follower(void)
{
	int64_t deadline;

	if (follower <= 0)
		return;
	kill(follower, SIGTERM);
	deadline = now_ns() + 2000000000;
	while (waitpid(follower, NULL, WNOHANG) == 0) {
		if (now_ns() > deadline) {
			kill(follower, SIGKILL);
			waitpid(follower, NULL, 0);
			break;
		}
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	follower = -1;
}

/* Leaves the machine as we found it: no follower, no file of ours. */
static void cleanup(void)
{
	stop_follower();
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1;
	kmsg_log_close(klog);
	klog = NULL;
	if (file_fd >= 0)
		close(file_fd);
	file_fd = -1;
	if (temp_path[0])
		unlink(temp_path);
	temp_path[0] = '\0';
	if (temp_dir[0])
		rmdir(temp_dir);
	temp_dir[0] = '\0';
}

/*
 * SIGINT, SIGTERM, SIGHUP: the follower and our files must not outlive us.
 * Only calls a signal handler may make; then dies of the same signal.
 */
static void on_signal(int sig)
{
	if (getpid() == owner) {
		if (follower > 0)
			kill(follower, SIGTERM);
		if (temp_path[0])
			unlink(temp_path);
		if (temp_dir[0])
			rmdir(temp_dir);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Reports a run-time failure ("kmsg-latency: <what>"), cleans up, exits 1. */
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("kmsg-latency: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	cleanup();
	exit(1);
}

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("kmsg-latency: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nusage: kmsg-latency --target kmsg|logread|tail [--samples N] "
	      "[--idle SECONDS]\n"
	      "                    [--kmsg PATH] [--log PATH] [--file PATH] "
	      "[--quick]\n", stderr);
	exit(2);
}

/* Parses a whole non-negative decimal number no larger than max. */
static long parse_count(const char *opt, const char *s, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		usage_error("%s %s: not a number from 0 to %ld", opt, s, max);
	return v;
}

/*
 * A file name for this run in a new directory in $TMPDIR (or /tmp), made
 * with mkdtemp so that nobody else can have planted a file or a symlink
 * there; both are remembered for removal.
 */
static const char *make_temp_path(const char *name)
{
	const char *dir = getenv("TMPDIR");

	if (dir == NULL || *dir == '\0')
		dir = "/tmp";
	snprintf(temp_dir, sizeof(temp_dir), "%s/kmsg-latency-XXXXXX", dir);
	if (mkdtemp(temp_dir) == NULL) {
		int e = errno;

		temp_dir[0] = '\0';
		die("cannot make a directory in %s: %s", dir, strerror(e));
	}
	snprintf(temp_path, sizeof(temp_path), "%s/%s", temp_dir, name);
	return temp_path;
}

/*
 * The kmsg binary to run when --kmsg is not given: the one built next to
 * this program (the build directory), else whatever kmsg is on PATH.
 */
static const char *default_kmsg(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
	char *slash;

	if (n > 0) {
		path[n] = '\0';
		slash = strrchr(path, '/');
		if (slash && (size_t)(slash - path) + sizeof("/kmsg") <= sizeof(path)) {
			strcpy(slash, "/kmsg");
			if (access(path, X_OK) == 0)
				return path;
		}
	}
	return "kmsg";
}

/*
 * Runs argv with stdout on a new pipe whose read end becomes out_fd.  An
 * exec failure is passed back through a close-on-exec pipe, so that a
 * missing program is reported as such rather than as a silent follower.
 */
static void spawn(char *const argv[], const char *hint)
{
	int out[2], err[2], e = 0;
	ssize_t n;

	if (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	follower = fork();
	if (follower < 0)
		die("fork: %s", strerror(errno));
	if (follower == 0) {
		if (dup2(out[1], STDOUT_FILENO) >= 0)
			execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(out[1]);
	close(err[1]);
	do
		n = read(err[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(err[0]);
	out_fd = out[0];
	if (n == (ssize_t)sizeof(e)) {
		waitpid(follower, NULL, 0);
		follower = -1;
		if (e == ENOENT)
			die("%s not found: %s", argv[0], hint);
		die("cannot run %s: %s", argv[0], strerror(e));
	}
}

/*
 * Reads the follower's output until a line containing token arrives or
 * WAIT_MS passes.  Returns 1 with *at set to when the read that delivered
 * the line returned, or 0 on timeout; lines without the token are passed
 * over.  A follower that ends is fatal.  With stop_ms the wait is cut
 * short after that many milliseconds instead (readiness retries).  The
 * line found stays in matched (NUL-terminated) until the next call.
 */
static char matched[LINE_MAX_BYTES + 1];

static int wait_line(const char *token, int64_t *at, int stop_ms)
{
	int64_t deadline = now_ns() + (int64_t)(stop_ms ? stop_ms : WAIT_MS) * 1000000;
	size_t scan = 0;

	for (;;) {
		char *nl;

		/* The lines already in the buffer come first. */
		while ((nl = memchr(buf + scan, '\n', buf_len - scan)) != NULL) {
			char *line = buf + scan;
			int found;

			*nl = '\0';
			found = strstr(line, token) != NULL;
			scan = (size_t)(nl - buf) + 1;
			if (found) {
				memcpy(matched, line, (size_t)(nl - line) + 1);
				memmove(buf, buf + scan, buf_len - scan);
				buf_len -= scan;
				return 1;
			}
		}
		memmove(buf, buf + scan, buf_len - scan);
		buf_len -= scan;
		scan = 0;
		if (buf_len == sizeof(buf))
			buf_len = 0; /* a line longer than we keep: not ours */

		int64_t left = deadline - now_ns();
		struct pollfd p = { .fd = out_fd, .events = POLLIN };
		int r;
		ssize_t n;

		if (left <= 0)
			return 0;
		r = poll(&p, 1, (int)((left + 999999) / 1000000));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			die("poll: %s", strerror(errno));
		if (r == 0)
			continue;
		n = read(out_fd, buf + buf_len, sizeof(buf) - buf_len);
		*at = now_ns();
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			die("reading the %s follower's output: %s",
			    target_names[target], strerror(errno));
		if (n == 0) {
			int st = 0;

			waitpid(follower, &st, 0);
			follower = -1;
			if (WIFEXITED(st))
				die("%s: the follower ended with status %d "
				    "(its messages, if any, are above)",
				    target_names[target], WEXITSTATUS(st));
			die("%s: the follower was killed by signal %d",
			    target_names[target], WTERMSIG(st));
		}
		buf_len += (size_t)n;
	}
}

/* Writes one message (text without newline) the target's own way. */
static void emit(const char *text, size_t len)
{
	char line[MSG_LEN + 64];
	int r;

	switch (target) {
	case T_KMSG:
		r = kmsg_log_print(klog, LOG_USER >> 3, LOG_NOTICE, text, len);
		if (r < 0)
			die("appending to the log: %s", kmsg_strerror(r));
		break;
	case T_LOGREAD:
		syslog(LOG_NOTICE, "%.*s", (int)len, text);
		break;
	case T_TAIL:
		memcpy(line, text, len);
		line[len] = '\n';
		if (write(file_fd, line, len + 1) != (ssize_t)(len + 1))
			die("writing to %s: %s", temp_path[0] ? temp_path : "the file",
			    strerror(errno));
		break;
	}
}

/*
 * Waits until the follower shows what is written.  A follower starts at
 * the end of what it finds, so a marker written before it got there is
 * never shown: markers are written again every READY_RETRY_MS until one
 * comes out, and then the rest are read, so no stale line is left ahead
 * of the first sample.
 */
static void wait_ready(void)
{
	int64_t deadline = now_ns() + (int64_t)WAIT_MS * 1000000, at;
	char text[96], token[64];
	const char *p;
	int n, seen = -1;

	snprintf(token, sizeof(token), "ready %ld.", (long)getpid());
	for (n = 0; seen < 0 && now_ns() < deadline; n++) {
		int len = snprintf(text, sizeof(text), "kmsg-latency ready %ld.%d.",
				   (long)getpid(), n);

		emit(text, (size_t)len);
		if (wait_line(token, &at, READY_RETRY_MS)) {
			p = strstr(matched, token) + strlen(token);
			seen = atoi(p);
		}
	}
	if (seen < 0)
		die("%s: the follower showed nothing within %d ms: "
		    "is it following the right %s?", target_names[target],
		    WAIT_MS, target == T_LOGREAD ? "syslogd buffer" : "file");
	if (seen == n - 1)
		return;
	snprintf(token, sizeof(token), "ready %ld.%d.", (long)getpid(), n - 1);
	if (!wait_line(token, &at, 0))
		die("%s: readiness marker %d lost", target_names[target], n - 1);
}

/* CPU time (ns) and context switches of every thread of pid, summed. */
static void proc_usage(pid_t pid, uint64_t *cpu_ns, uint64_t *switches)
{
	char path[320], line[256];
	struct dirent *d;
	DIR *dir;

	*cpu_ns = *switches = 0;
	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	dir = opendir(path);
	if (dir == NULL)
		die("%s: %s", path, strerror(errno));
	while ((d = readdir(dir)) != NULL) {
		unsigned long long v;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/schedstat",
			 (long)pid, d->d_name);
		f = fopen(path, "r");
		if (f == NULL || fscanf(f, "%llu", &v) != 1)
			die("%s: cannot read it (a kernel without "
			    "CONFIG_SCHED_INFO?)", path);
		fclose(f);
		*cpu_ns += v;
		snprintf(path, sizeof(path), "/proc/%ld/task/%s/status",
			 (long)pid, d->d_name);
		f = fopen(path, "r");
		if (f == NULL)
			die("%s: %s", path, strerror(errno));
		while (fgets(line, sizeof(line), f)) {
			if (sscanf(line, "voluntary_ctxt_switches: %llu", &v) == 1 ||
			    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &v) == 1)
				*switches += v;
		}
		fclose(f);
	}
	closedir(dir);
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* A small xorshift: the sleeps need spread, not quality. */
static uint64_t next_random(void)
{
	static uint64_t s;

	if (s == 0)
		s = (uint64_t)now_ns() ^ ((uint64_t)getpid() << 32) ^ 1;
	s ^= s << 13;
	s ^= s >> 7;
	s ^= s << 17;
	return s;
}

/*
 * Checks that a syslog daemon takes datagrams on /dev/log: syslog(3)
 * drops messages quietly when none does, which would only show as
 * a timeout.
 */
static void check_syslogd(void)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		int e = errno;

		close(fd);
		die("/dev/log: %s: start 'busybox syslogd -n -C' first "
		    "(the bench script does, in a private mount namespace)",
		    strerror(e));
	}
	close(fd);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "target", required_argument, NULL, 'T' },
		{ "samples", required_argument, NULL, 's' },
		{ "idle", required_argument, NULL, 'i' },
		{ "kmsg", required_argument, NULL, 'k' },
		{ "log", required_argument, NULL, 'l' },
		{ "file", required_argument, NULL, 'f' },
		{ "quick", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	const char *target_opt = NULL, *kmsg_path = NULL, *log_path = NULL;
	const char *file_path = NULL, *name;
	long samples = -1, idle = 0;
	int quick = 0, c;
	int64_t *lat = NULL;
	uint64_t cpu0 = 0, cpu1 = 0, sw0 = 0, sw1 = 0;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (c) {
		case 'T': target_opt = optarg; break;
		case 's': samples = parse_count("--samples", optarg, 100000000); break;
		case 'i': idle = parse_count("--idle", optarg, 86400); break;
		case 'k': kmsg_path = optarg; break;
		case 'l': log_path = optarg; break;
		case 'f': file_path = optarg; break;
		case 'q': quick = 1; break;
		case 'h':
			printf("usage: kmsg-latency --target kmsg|logread|tail "
			       "[--samples N] [--idle SECONDS]\n"
			       "                    [--kmsg PATH] [--log PATH] "
			       "[--file PATH] [--quick]\n");
			return 0;
		default:
			usage_error("bad option");
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (target_opt == NULL)
		usage_error("--target is required");
	if (!strcmp(target_opt, "kmsg"))
		target = T_KMSG;
	else if (!strcmp(target_opt, "logread"))
		target = T_LOGREAD;
	else if (!strcmp(target_opt, "tail"))
		target = T_TAIL;
	else
		usage_error("--target %s: not kmsg, logread or tail", target_opt);
	if (samples < 0)
		samples = quick ? 200 : 2000;
	name = target_names[target];

	/* We read from the follower, never write to it; a closed stdout of
	 * our own must not kill us before the follower is cleaned up. */
	signal(SIGPIPE, SIG_IGN);
	owner = getpid();
	{
		struct sigaction sa = { .sa_handler = on_signal };

		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	setenv("LC_ALL", "C", 1);
	setenv("NO_COLOR", "1", 1);

	switch (target) {
	case T_KMSG: {
		struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
		int r;

		if (log_path == NULL)
			log_path = make_temp_path("follow.log");
		o.size = 1024 * 1024;
		r = kmsg_log_create(&klog, log_path, &o, 0);
		if (r < 0) {
			temp_path[0] = '\0'; /* not ours to remove */
			die("'%s': %s", log_path, kmsg_strerror(r));
		}
		if (kmsg_path == NULL)
			kmsg_path = default_kmsg();
		char *av[] = { (char *)kmsg_path, "follow", "-F", (char *)log_path,
			       "-n", "0", "-t", NULL };
		spawn(av, "build it, or name it with --kmsg PATH");
		break;
	}
	case T_LOGREAD: {
		char *av[] = { "busybox", "logread", "-f", NULL };

		check_syslogd();
		openlog("kmsg-latency", LOG_NDELAY, LOG_USER);
		spawn(av, "install busybox (the bench script does)");
		break;
	}
	case T_TAIL: {
		char *av[] = { "tail", "-n", "0", "-f", NULL, NULL };

		if (file_path == NULL)
			file_path = make_temp_path("tail.txt");
		file_fd = open(file_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
		if (file_fd < 0) {
			int e = errno;

			temp_path[0] = '\0';
			die("'%s': %s", file_path, strerror(e));
		}
		av[4] = (char *)file_path;
		spawn(av, "install GNU coreutils");
		break;
	}
	}

	wait_ready();

	if (samples > 0) {
		lat = malloc((size_t)samples * sizeof(*lat));
		if (lat == NULL)
			die("out of memory for %ld samples", samples);
	}
	for (long i = 0; i < samples; i++) {
		char text[MSG_LEN + 1], token[32];
		int64_t t0, t1 = 0;
		int tl, len;

		/* Let the follower fall asleep again, as it would be between
		 * the lines a real program writes. */
		nanosleep(&(struct timespec){ 0, 200000 +
			  (long)(next_random() % 1800001) }, NULL);
		tl = snprintf(token, sizeof(token), "lat %ld ", i);
		len = snprintf(text, sizeof(text), "%s%.*s", token, MSG_LEN - tl,
			       "the quick brown fox jumps over the lazy dog 0123456789abcdefgh");
		t0 = now_ns();
		emit(text, (size_t)len);
		if (!wait_line(token, &t1, 0))
			die("%s: sample %ld: its line did not come out within "
			    "%d ms", name, i, WAIT_MS);
		lat[i] = t1 - t0;
	}

	if (idle > 0) {
		proc_usage(follower, &cpu0, &sw0);
		sleep((unsigned)idle);
		if (waitpid(follower, NULL, WNOHANG) != 0) {
			follower = -1;
			die("%s: the follower ended during the idle time", name);
		}
		proc_usage(follower, &cpu1, &sw1);
	}
	cleanup();

	if (samples > 0) {
		size_t n = (size_t)samples;

		qsort(lat, n, sizeof(*lat), cmp_i64);
		printf("%s: %zu samples, write to line out of the follower's "
		       "pipe: p50 %.1f us, p99 %.1f us, max %.1f us\n", name, n,
		       lat[n / 2] / 1e3, lat[(n - 1) * 99 / 100] / 1e3,
		       lat[n - 1] / 1e3);
	}
	if (idle > 0)
		printf("%s: idle %ld s: follower on CPU %.2f ms, %" PRIu64
		       " context switches\n", name, idle, (cpu1 - cpu0) / 1e6,
		       sw1 - sw0);
	if (samples > 0) {
		size_t n = (size_t)samples;

		printf("follow_latency_%s_p50_us=%.1f\n", name, lat[n / 2] / 1e3);
		printf("follow_latency_%s_p99_us=%.1f\n", name,
		       lat[(n - 1) * 99 / 100] / 1e3);
		printf("follow_latency_%s_max_us=%.1f\n", name, lat[n - 1] / 1e3);
		printf("follow_latency_%s_samples=%zu\n", name, n);
	}
	if (idle > 0) {
		printf("idle_%s_cpu_ms=%.2f\n", name, (cpu1 - cpu0) / 1e6);
		printf("idle_%s_wakeups=%" PRIu64 "\n", name, sw1 - sw0);
		printf("idle_seconds=%ld\n", idle);
	}
	free(lat);
	/* A full disk or a closed pipe must not pass for a complete report. */
	if (fflush(stdout) != 0 || ferror(stdout) || fclose(stdout) != 0) {
		if (errno == EPIPE)
			return 0;
		fprintf(stderr, "kmsg-latency: writing the report: %s\n",
			strerror(errno));
		return 1;
	}
	return 0;
}
