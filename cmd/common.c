/*
 * common.c - what every subcommand needs: finding and opening the log,
 * reporting errors in one format, parsing sizes, and checking that stdout
 * was really written.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void cli_error(const char *what, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("kmsg: ", stderr);
	if (what)
		fprintf(stderr, "%s: ", what);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_lib_error(const char *what, int code)
{
	cli_error(what, "%s", kmsg_strerror(code));
}

int cli_popt_error(poptContext con, const char *cmd, int rc)
{
	fprintf(stderr, "kmsg %s: %s: %s\n", cmd,
		poptBadOption(con, POPT_BADOPTION_NOALIAS), poptStrerror(rc));
	fprintf(stderr, "Try 'kmsg %s --help' for more information.\n", cmd);
	return EXIT_USAGE;
}

int cli_parse_options(poptContext con, const char *cmd)
{
	int rc;

	while ((rc = poptGetNextOpt(con)) > 0)
		;
	if (rc < -1)
		return cli_popt_error(con, cmd, rc);
	if (poptPeekArg(con)) {
		fprintf(stderr, "kmsg %s: unexpected argument '%s'\n"
			"Try 'kmsg %s --help' for more information.\n",
			cmd, poptPeekArg(con), cmd);
		return EXIT_USAGE;
	}
	return 0;
}

const char *cli_log_path(const char *file_opt)
{
	static char buf[PATH_MAX];
	const char *env, *home;

	if (file_opt && *file_opt)
		return file_opt;
	env = getenv("KMSG_FILE");
	if (env && *env)
		return env;
	if (geteuid() == 0)
		return "/var/log/kmsg";
	env = getenv("XDG_STATE_HOME");
	if (env && *env == '/') {
		if ((size_t)snprintf(buf, sizeof(buf), "%s/kmsg/log", env) < sizeof(buf))
			return buf;
	} else if ((home = getenv("HOME")) && *home == '/') {
		if ((size_t)snprintf(buf, sizeof(buf), "%s/.local/state/kmsg/log", home) < sizeof(buf))
			return buf;
	}
	cli_error(NULL, "no log file: use --file PATH or set KMSG_FILE (HOME is not set)");
	return NULL;
}

/* mkdir -p of path's parent directories, mode 0700 for a user's state dir. */
static int make_parents(const char *path)
{
	char dir[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, n + 1);
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

struct kmsg_log *cli_open_log(const char *path, unsigned flags, int create,
			      uint64_t size)
{
	struct kmsg_log *log = NULL;
	int r;

	if (create) {
		struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
		o.size = size ? size : KMSG_DEFAULT_SIZE;
		r = kmsg_log_create(&log, path, &o, flags);
		if (r == -ENOENT) {
			r = make_parents(path);
			if (r == 0)
				r = kmsg_log_create(&log, path, &o, flags);
		}
	} else {
		r = kmsg_log_open(&log, path, flags);
	}
	if (r == 0)
		return log;
	switch (r) {
	case -ENOENT:
		cli_error(path, "no such log%s", create ? " (and its directory could not be made)" :
			  "; 'kmsg emit' creates it, or give another with --file");
		break;
	case -EACCES:
		cli_error(path, "permission denied%s", flags & KMSG_OPEN_WRITE ?
			  " (writing needs write permission on the log)" : "");
		break;
	case -ELOOP:
		cli_error(path, "is a symbolic link; kmsg does not follow links to its log "
			  "(give the real path with --file)");
		break;
	case -EPERM:
		cli_error(path, "owned by another user; refusing to write to it "
			  "(remove it if it is not yours, or give another log with --file)");
		break;
	case KMSG_ENOTLOG:
		cli_error(path, "%s; refusing to touch it (give the log's path with --file)",
			  kmsg_strerror(r));
		break;
	case KMSG_ECORRUPT:
		cli_error(path, "%s; nothing in it can be trusted (move it aside: "
			  "'kmsg emit' then makes a new log)", kmsg_strerror(r));
		break;
	case KMSG_EVERSION:
		cli_error(path, "%s (read it with the kmsg that wrote it)", kmsg_strerror(r));
		break;
	case KMSG_ESIZE:
		cli_error(path, "%s", kmsg_strerror(r));
		break;
	default:
		cli_lib_error(path, r);
	}
	return NULL;
}

int cli_parse_size(uint64_t *out, const char *s)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	if (!s || !*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -1;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	case 't': case 'T': shift = 40; end++; break;
	case 0: break;
	default: return -1;
	}
	if (shift && (!strcmp(end, "iB") || !strcmp(end, "B")))
		end += strlen(end);
	if (*end)
		return -1;
	if (shift && v > (UINT64_MAX >> shift))
		return -1;
	*out = (uint64_t)v << shift;
	return 0;
}

static void check_stdout(void)
{
	int err = 0;

	if (fflush(stdout) != 0 || ferror(stdout))
		err = errno ? errno : EIO;
	if (!err && fclose(stdout) != 0)
		err = errno;
	if (!err || err == EPIPE)
		return;
	fprintf(stderr, "kmsg: write error on standard output: %s\n", strerror(err));
	_exit(EXIT_FAIL);
}

static int stdout_was_closed;

void cli_init(void)
{
	/* Before anything opens a file: a descriptor among 0-2 that the
	 * caller left closed ("2>&-", a daemon's children) would go to the
	 * next file opened, and a log there would take our output as
	 * records, or be read as our input.  /dev/null fills the hole; if
	 * even that fails there is no safe way on, nor a stderr to say so. */
	for (int fd = STDIN_FILENO; fd <= STDERR_FILENO; fd++) {
		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		if (fd == STDOUT_FILENO)
			stdout_was_closed = 1;
		if (open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
			_exit(EXIT_FAIL);
	}
	signal(SIGPIPE, SIG_IGN);
	atexit(check_stdout);
}

int cli_need_stdout(void)
{
	if (!stdout_was_closed)
		return 0;
	cli_error(NULL, "standard output is closed: the output would be lost "
		  "(give the command a file or a pipe to write to)");
	return EXIT_FAIL;
}

void cli_exit_if_epipe(int err)
{
	if (err == EPIPE)
		_exit(EXIT_OK);
}
