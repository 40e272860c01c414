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
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/*
 * Writes s to stderr with what a terminal would act on (controls, C1 and
 * bidi controls, bytes that are not UTF-8: an escape sequence in a file
 * name or an argument) as \xNN, as the short output escapes a record's
 * text; tabs and newlines stay.
 */
static void put_escaped(const char *s)
{
	char buf[KMSG_TEXT_ESCAPE_SIZE(256)];
	size_t len = strlen(s);

	/* in pieces, so that no message needs memory to be said */
	while (len) {
		size_t n = len < 256 ? len : 256;
		int w;

		/* not inside a UTF-8 sequence, which would come out escaped */
		for (int k = 0; k < 3 && n < len && n > 1 &&
		     ((unsigned char)s[n] & 0xc0) == 0x80; k++)
			n--;
		w = kmsg_text_escape(buf, sizeof(buf), s, n, 0);
		if (w > 0)
			fwrite(buf, 1, (size_t)w, stderr);
		s += n;
		len -= n;
	}
}

/* "kmsg: <what>: <why>" without its newline; what came before on stdout first. */
static void verror(const char *what, const char *fmt, va_list ap)
{
	char *msg = NULL;

	fflush(stdout);
	fputs("kmsg: ", stderr);
	if (what) {
		put_escaped(what);
		fputs(": ", stderr);
	}
	if (vasprintf(&msg, fmt, ap) < 0)
		fputs("(out of memory)", stderr);
	else
		put_escaped(msg);
	free(msg);
}

int cli_error(const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(what, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAIL;
}

int cli_lib_error(const char *what, int code)
{
	return cli_error(what, "%s", kmsg_strerror(code));
}

int cli_usage_error(const char *cmd, const char *what, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verror(what, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'kmsg %s --help' for more information.\n", cmd);
	return EXIT_USAGE;
}

int cli_popt_error(poptContext con, const char *cmd, int rc)
{
	const char *why;

	/* popt's own words, in the tool's */
	switch (rc) {
	case POPT_ERROR_NOARG:     why = "needs an argument"; break;
	case POPT_ERROR_BADOPT:    why = "unknown option"; break;
	case POPT_ERROR_BADNUMBER: why = "not a number"; break;
	case POPT_ERROR_OVERFLOW:  why = "number out of range"; break;
	default:                   why = poptStrerror(rc); break;
	}
	return cli_usage_error(cmd, poptBadOption(con, POPT_BADOPTION_NOALIAS), "%s", why);
}

void cli_on_option(poptContext con, enum poptCallbackReason reason,
		   const struct poptOption *opt, const char *arg, const void *data)
{
	const struct cli_option_handler *h = data;

	(void)con;
	/* popt calls a table's callback before and after the table too */
	if (reason == POPT_CALLBACK_REASON_OPTION)
		h->fn(h->state, opt->val, arg);
}

void cli_help(poptContext con)
{
	poptPrintHelp(con, stdout, 0);
	exit(EXIT_OK);
}

int cli_parse_args(poptContext con, const char *cmd, const char *const **args)
{
	int rc;

	while ((rc = poptGetNextOpt(con)) > 0)
		if (rc == CLI_OPT_H)
			cli_help(con);
	if (rc < -1)
		return cli_popt_error(con, cmd, rc);
	if (args) {
		*args = poptGetArgs(con);
		return 0;
	}
	if (poptPeekArg(con))
		return cli_usage_error(cmd, NULL, "unexpected argument '%s'", poptPeekArg(con));
	return 0;
}

int cli_parse_options(poptContext con, const char *cmd)
{
	return cli_parse_args(con, cmd, NULL);
}

int cli_parse_log_options(poptContext con, const char *cmd, const char *const *file_opt,
			  const char **path)
{
	int status = cli_parse_options(con, cmd);

	if (status != 0)
		return status;
	*path = cli_log_path(*file_opt);
	return *path ? 0 : EXIT_FAIL;
}

int cli_path_given(const char *cmd, const char *opt, const char *path, const char *std)
{
	if (*path)
		return 0;
	return cli_usage_error(cmd, opt, "an empty path: give a file, or - for standard %s",
			       std);
}

const char *cli_log_path(const char *file_opt)
{
	static char buf[PATH_MAX];
	const char *env, *home;

	if (file_opt) {
		if (*file_opt)
			return file_opt;
		cli_error("--file", "an empty path: give the log's path (or leave "
			  "--file out for the default log)");
		return NULL;
	}
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

/* Syncs the directory that holds dir, so that a name just made in it
 * survives a power cut (the library syncs the log's own directory). */
static void sync_parent(char *dir)
{
	char *slash = strrchr(dir, '/');
	int fd;

	if (!slash)
		return;
	*slash = 0;
	fd = open(slash == dir ? "/" : dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*slash = '/';
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

/*
 * mkdir -p of path's parent directories, mode 0700 (a user's state
 * directory is nobody else's business), each new one synced into its
 * parent.  Returns 0, or -errno after saying which directory could not
 * be made.
 */
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
		if (mkdir(dir, 0700) == 0) {
			sync_parent(dir);
		} else if (errno != EEXIST) {
			int e = errno;
			cli_error(dir, "cannot make the log's directory: %s", strerror(e));
			return -e;
		}
		*p = '/';
	}
	return 0;
}

void cli_ring_hex(char *buf, const uint8_t id[16])
{
	for (int i = 0; i < 16; i++)
		snprintf(buf + 2 * i, 3, "%02x", id[i]);
}

void cli_keep(char **to, const char *arg)
{
	free(*to);
	*to = arg ? strdup(arg) : NULL;
}

const char *cli_dir_of(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		return ".";
	if (slash == path)
		return "/";
	if ((size_t)(slash - path) >= size)
		return NULL;
	memcpy(buf, path, (size_t)(slash - path));
	buf[slash - path] = '\0';
	return buf;
}

int cli_parse_u64(uint64_t *v, const char *s, size_t n, uint64_t max)
{
	uint64_t x = 0;
	int over = 0;

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned)(unsigned char)s[i] - '0';

		if (d > 9)
			return -EINVAL;
		if (x > (max - d) / 10 || max < d)
			over = 1;  /* the rest must still be digits */
		else
			x = x * 10 + d;
	}
	if (over)
		return -ERANGE;
	*v = x;
	return 0;
}

static volatile sig_atomic_t *write_stop;

void cli_write_stop_on(volatile sig_atomic_t *flag)
{
	write_stop = flag;
}

/* Stopping: may fd take a write now, or before a second has passed since
 * the first time this was asked? */
static int writable_in_time(int fd)
{
	static int64_t deadline;
	int64_t now = cli_now_ns(CLOCK_MONOTONIC);
	struct pollfd pf = { .fd = fd, .events = POLLOUT };

	if (!deadline)
		deadline = now + INT64_C(1000000000);
	for (;;) {
		int ms = now < deadline ? (int)((deadline - now + 999999) / 1000000) : 0;
		int r = poll(&pf, 1, ms);

		if (r > 0)
			return 1;
		if (r == 0 || errno != EINTR)
			return 0;
		now = cli_now_ns(CLOCK_MONOTONIC);
	}
}

int cli_write_all(int fd, const char *p, size_t n)
{
	while (n > 0) {
		size_t chunk = n;
		ssize_t w;

		/* stopping: in pieces a pipe with room takes whole, so that
		 * no write blocks past the deadline */
		if (write_stop && *write_stop) {
			if (!writable_in_time(fd))
				return -EINTR;
			if (chunk > PIPE_BUF)
				chunk = PIPE_BUF;
		}
		w = write(fd, p, chunk);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* "<path>.tmp-XXXXXX" in t->name, the Xs random: 0 or -ENAMETOOLONG. */
static int temp_name(struct cli_temp *t, const char *path)
{
	static const char digits[] = "0123456789abcdefghijklmnopqrstuvwxyz";
	unsigned char r[6];
	char sfx[7];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r)) {
		uint64_t x = (uint64_t)cli_now_ns(CLOCK_MONOTONIC) ^ ((uint64_t)getpid() << 32);

		memcpy(r, &x, sizeof(r));
	}
	for (size_t i = 0; i < sizeof(r); i++)
		sfx[i] = digits[r[i] % 36];
	sfx[6] = '\0';
	if (snprintf(t->name, sizeof(t->name), "%s.tmp-%s", path, sfx) >= (int)sizeof(t->name))
		return -ENAMETOOLONG;
	return 0;
}

/* dflt less the umask: a new file's mode. */
static mode_t new_mode(mode_t dflt)
{
	mode_t mask = umask(0);

	umask(mask);
	return dflt & ~mask;
}

int cli_replaceable(const char *path, mode_t dflt, mode_t *mode)
{
	struct stat st;

	if (lstat(path, &st) < 0) {
		if (errno != ENOENT)
			return -errno;
		*mode = new_mode(dflt);
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -ENODEV;
	/* what another user made is theirs, wherever it is: in a sticky
	 * directory (/tmp) above all, where it may be planted to be written */
	if (st.st_uid != geteuid() && st.st_uid != 0)
		return -EPERM;
	if (S_ISDIR(st.st_mode))
		return -EISDIR;
	/* never setuid, setgid or sticky: those were given to a file, not
	 * to the name; and root's file is not the user's to copy */
	*mode = st.st_uid == geteuid() ? st.st_mode & 0777 : new_mode(dflt);
	return 0;
}

int cli_temp_beside(struct cli_temp *t, const char *path)
{
	char dirbuf[PATH_MAX];
	const char *dir = cli_dir_of(path, dirbuf, sizeof(dirbuf));
	mode_t mode;
	int err;

	t->fd = -1;
	t->name[0] = '\0';
	if (dir == NULL)
		return -ENAMETOOLONG;
	err = cli_replaceable(path, 0600, &mode);
	if (err < 0)
		return err;
	t->fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (t->fd >= 0)
		return 0;
	/* a file system without unnamed files (or an old kernel, which
	 * takes O_TMPFILE for O_DIRECTORY): a named one */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	if (snprintf(t->name, sizeof(t->name), "%s.tmp-XXXXXX", path) >= (int)sizeof(t->name))
		return -ENAMETOOLONG;
	t->fd = mkostemp(t->name, O_CLOEXEC);
	if (t->fd < 0) {
		t->name[0] = '\0';
		return -errno;
	}
	return 0;
}

void cli_temp_drop(struct cli_temp *t)
{
	if (t->fd >= 0)
		close(t->fd);
	t->fd = -1;
	if (t->name[0])
		unlink(t->name);
	t->name[0] = '\0';
}

/*
 * Gives the unnamed file t a name beside path: through the descriptor
 * (which needs CAP_DAC_READ_SEARCH), else through /proc.  0 or -errno.
 */
static int name_temp(struct cli_temp *t, const char *path)
{
	char proc[64];
	int err = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", t->fd);
	for (int tries = 0; tries < 100; tries++) {
		err = temp_name(t, path);
		if (err < 0)
			break;
		if (linkat(t->fd, "", AT_FDCWD, t->name, AT_EMPTY_PATH) == 0 ||
		    (errno != EEXIST &&
		     linkat(AT_FDCWD, proc, AT_FDCWD, t->name, AT_SYMLINK_FOLLOW) == 0))
			return 0;
		err = -errno;
		if (err != -EEXIST)
			break;
	}
	t->name[0] = '\0';
	return err;
}

int cli_replace(struct cli_temp *t, const char *path, mode_t dflt)
{
	char dirbuf[PATH_MAX];
	const char *dir = cli_dir_of(path, dirbuf, sizeof(dirbuf));
	mode_t mode = 0;
	int dfd, err;

	/* asked again: what is at path now may not be what was there when
	 * the file was begun (a follower keeps its cursor file for hours) */
	err = cli_replaceable(path, dflt, &mode);
	if (err == 0 && (fchmod(t->fd, mode) < 0 || fsync(t->fd) < 0))
		err = -errno;
	if (err == 0 && dir == NULL)
		err = -ENAMETOOLONG;
	if (err == 0 && !t->name[0])
		err = name_temp(t, path);
	if (err == 0 && rename(t->name, path) < 0)
		err = -errno;
	if (err == 0)
		t->name[0] = '\0';  /* path's now */
	if (close(t->fd) < 0 && err == 0)
		err = -errno;
	t->fd = -1;
	if (err) {
		cli_temp_drop(t);
		return err;
	}
	/* the rename itself must reach the disk too */
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	if (fsync(dfd) < 0 && errno != EINVAL)
		err = -errno;
	close(dfd);
	return err;
}

int cli_open_special(const char *path)
{
	struct stat st;
	int fd = -1;

	/* a FIFO's reader may be starting beside us (cat fifo & kmsg ...):
	 * a while to come, not for ever */
	for (int tries = 0; fd < 0; tries++) {
		if (lstat(path, &st) < 0)
			return -errno;
		if (S_ISLNK(st.st_mode))
			return -ELOOP;
		if (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode))
			return S_ISDIR(st.st_mode) ? -EISDIR : -ENODEV;
		/* checked before the open too: opening a device may act */
		if (st.st_uid != geteuid() && st.st_uid != 0)
			return -EPERM;
		fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		if (fd < 0 && (errno != ENXIO || !S_ISFIFO(st.st_mode)))
			return -errno;
		if (fd < 0 && tries == CLI_SPECIAL_WAIT_S * 10)
			return -ENXIO;
		if (fd < 0)
			nanosleep(&(struct timespec){ .tv_nsec = 100000000 }, NULL);
	}
	if (fstat(fd, &st) < 0 ||
	    (!S_ISFIFO(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) ||
	    (st.st_uid != geteuid() && st.st_uid != 0)) {
		close(fd);
		return -EAGAIN;  /* another file put there since the lstat() */
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int cli_output_error(const char *path, int err, const char *special)
{
	struct stat st;
	const char *kind = "neither a regular file nor a directory";
	int sock = 0;

	switch (err) {
	case -ELOOP:
		return cli_error(path, "is a symbolic link; kmsg neither writes through "
				 "a link nor replaces one: give the path of the file itself");
	case -EPERM:
		return cli_error(path, "owned by another user; refusing to write to it or "
				 "replace it: give a path of your own (remove the file first "
				 "if it is not wanted)");
	case -EISDIR:
		return cli_error(path, "is a directory; give a file's path");
	case -ENODEV:
		if (lstat(path, &st) == 0) {
			sock = S_ISSOCK(st.st_mode);
			kind = S_ISFIFO(st.st_mode) ? "a FIFO" : S_ISCHR(st.st_mode) ?
			       "a character device" : S_ISBLK(st.st_mode) ? "a block device" :
			       sock ? "a socket" : kind;
		}
		return cli_error(path, "is %s; %s", kind, special && !sock ? special :
				 "kmsg puts a file of its own there only in place of a "
				 "regular file: give another path");
	case -ENXIO:
		return cli_error(path, "a FIFO that no process opened for reading within "
				 "%d seconds; start its reader first", CLI_SPECIAL_WAIT_S);
	case -EAGAIN:
		return cli_error(path, "replaced by another file while it was opened; "
				 "refusing to write to it");
	}
	return cli_error(path, "%s", strerror(-err));
}

int cli_one_host(void)
{
	const char *v = getenv("KMSG_ONE_HOST");

	return v && *v && strcmp(v, "0") != 0;
}

struct kmsg_log *cli_open_log(const char *path, unsigned flags,
			      const struct kmsg_create_opts *create)
{
	struct kmsg_log *log = NULL;
	char dir[PATH_MAX];
	int r;

	/* the user's word that no other machine writes this log */
	if ((flags & KMSG_OPEN_WRITE) && cli_one_host())
		flags |= KMSG_OPEN_ONE_HOST;
	if (create) {
		r = kmsg_log_create(&log, path, create, flags);
		if (r == -ENOENT) {
			r = make_parents(path);
			if (r < 0)
				return NULL;
			r = kmsg_log_create(&log, path, create, flags);
		}
	} else {
		r = kmsg_log_open(&log, path, flags);
	}
	if (r == 0)
		return log;
	switch (r) {
	case KMSG_EEMPTY:
		cli_error(path, "is empty: a log not yet made, or one emptied in place "
			  "(logrotate's copytruncate and create modes do that: see ROTATION "
			  "in kmsg(5)); the next 'kmsg emit' makes the log in it");
		break;
	case KMSG_ESHORTHDR:
		cli_error(path, "%s, so no record is in it (a copy that stopped early?); "
			  "give the log's path with --file", kmsg_strerror(r));
		break;
	case KMSG_ESHAREDFS: {
		const char *fs = kmsg_shared_fs_name(path);

		cli_error(path, "is on %s, a file system other machines can share: "
			  "writers there would each map a copy of their own and overwrite "
			  "each other's records; keep a log per machine on a local file "
			  "system (and ship it to a collector), or, if only this machine "
			  "ever writes it, set KMSG_ONE_HOST=1", fs ? fs : "a network file system");
		break;
	}
	case -ENOENT:
		cli_error(path, "no such log; 'kmsg emit' creates it, or give another "
			  "with --file");
		break;
	case -EACCES:
		if (create && access(path, F_OK) < 0 && errno == ENOENT) {
			const char *d = cli_dir_of(path, dir, sizeof(dir));

			cli_error(path, "cannot create the log: no write permission in "
				  "its directory %s", d ? d : path);
		} else {
			cli_error(path, "permission denied%s", flags & KMSG_OPEN_WRITE ?
				  " (writing needs write permission on the log)" : "");
		}
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
		/* Both copies of the header failed their checks: the records
		 * may well be intact, so nothing here advises to replace it. */
		cli_error(path, "%s, in both copies (at the start and at the end "
			  "of the file); kmsg will not guess its layout.  Keep the "
			  "file (its records are still in it, as kmsg(5) describes) "
			  "and log to another with --file", kmsg_strerror(r));
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

int cli_parse_new_log(struct kmsg_create_opts *co, const char *cmd, const char *log_size,
		      const char *max_text)
{
	const char *s = log_size;
	uint64_t need, v;

	if (max_text) {
		char *end;
		unsigned long long n;

		errno = 0;
		n = *max_text >= '0' && *max_text <= '9' ? strtoull(max_text, &end, 10) : 0;
		if (n == 0 || errno || *end || n > KMSG_MAX_TEXT_LIMIT)
			return cli_usage_error(cmd, "--max-text", "'%s' is not a length from 1 "
					       "to %u bytes", max_text, KMSG_MAX_TEXT_LIMIT);
		co->max_text = (uint32_t)n;
	}
	if (!log_size)
		return 0;
	/* The smallest log whose ring holds two records of the longest text
	 * (the library's rule), in whole pages. */
	need = 2 * ((64 + (uint64_t)co->max_text + 7) & ~UINT64_C(7)) + KMSG_FILE_OVERHEAD;

	need = (need + 4095) & ~UINT64_C(4095);
	if (need < KMSG_MIN_SIZE)
		need = KMSG_MIN_SIZE;
	if (cli_parse_size(&v, s) < 0)
		return cli_usage_error(cmd, "--log-size", "'%s' is not a size: a number "
				       "with an optional K, M, G or T suffix", s);
	if (v % 4096)
		return cli_usage_error(cmd, "--log-size", "'%s' must be a multiple of "
				       "4 KiB (4096 bytes), as 4K, 64K or 1M", s);
	if (v < need)
		return cli_usage_error(cmd, "--log-size", "'%s' is too small: a log with "
				       "texts of up to %u bytes needs at least %lluK", s,
				       co->max_text, (unsigned long long)need / 1024);
	if (v > KMSG_MAX_SIZE)
		return cli_usage_error(cmd, "--log-size", "'%s' is too large: a log is "
				       "at most 64T", s);
	co->size = v;
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

uint64_t cli_cut_short(const char *path, const struct kmsg_stat *st)
{
	struct stat sb;

	if (!strcmp(path, "-") || stat(path, &sb) < 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size >= st->file_size)
		return 0;
	cli_error(path, "cut short: the file has %llu of the %llu bytes its header "
		  "gives; the records that were in the rest are lost (the next "
		  "writer restores the size)", (unsigned long long)sb.st_size,
		  (unsigned long long)st->file_size);
	return (uint64_t)sb.st_size;
}

void cli_progress_init(struct cli_progress *p, const char *what)
{
	memset(p, 0, sizeof(*p));
	p->what = what;
	p->tty = isatty(STDERR_FILENO);
	p->start_ns = cli_now_ns(CLOCK_MONOTONIC);
	p->next_ns = p->start_ns + 500000000;
}

void cli_size_words(char *buf, size_t n, uint64_t v)
{
	static const char *unit[] = { "bytes", "KiB", "MiB", "GiB", "TiB" };
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", d, unit[u]);
}

void cli_progress(void *arg, uint64_t done, uint64_t total)
{
	struct cli_progress *p = arg;
	char a[32], b[32];
	int64_t now;

	if (!p->tty || !total)
		return;
	now = cli_now_ns(CLOCK_MONOTONIC);
	if (now < p->next_ns)
		return;
	p->next_ns = now + 100000000;
	cli_size_words(a, sizeof(a), done);
	cli_size_words(b, sizeof(b), total);
	fprintf(stderr, "\rkmsg: %s: %3u%% (%s of %s)\033[K", p->what,
		(unsigned)(done >= total ? 100 : done * 100 / total), a, b);
	fflush(stderr);
	p->shown = 1;
}

void cli_progress_end(struct cli_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = 0;
}

int64_t cli_now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int stdout_was_closed, stdin_was_closed;

/*
 * SIGBUS: an access to a page of a mapped file past its end.  Every file
 * the tool maps is a log or a dump, whose mapping the library reads and
 * writes with every length checked, so such a fault is the file cut short
 * under it: a page of zeros goes where the missing one was mapped, the
 * access goes on, and the fault is noted for cli_file_cut() or
 * cli_bus_cut().  Any other SIGBUS is the crash it always is.
 */
static volatile sig_atomic_t bus_cuts;
static uintptr_t page_size;

static void on_bus(int sig, siginfo_t *si, void *ctx)
{
	(void)ctx;
	if (si->si_code == BUS_ADRERR && si->si_addr && page_size) {
		void *page = (void *)((uintptr_t)si->si_addr & ~(page_size - 1));

		if (mmap(page, page_size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == page) {
			bus_cuts = 1;
			return;
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

int cli_bus_cut(void)
{
	int cut = bus_cuts;

	bus_cuts = 0;
	return cut;
}

int cli_file_cut(const char *path, const char *what)
{
	struct stat sb;

	if (!bus_cuts)
		return 0;
	bus_cuts = 0;
	if (stat(path, &sb) == 0)
		cli_error(path, "cut short while it was %s: another process truncated the "
			  "file to %llu bytes; what lay past that is lost to this command",
			  what, (unsigned long long)sb.st_size);
	else
		cli_error(path, "cut short while it was %s: another process truncated "
			  "or removed the file", what);
	return 1;
}

void cli_init(void)
{
	struct sigaction sa;

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
		if (fd == STDIN_FILENO)
			stdin_was_closed = 1;
		if (open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY) != fd)
			_exit(EXIT_FAIL);
	}
	signal(SIGPIPE, SIG_IGN);
	page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_bus;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
	atexit(check_stdout);
}

int cli_stdin_closed(void)
{
	return stdin_was_closed;
}

int cli_need_stdout(void)
{
	if (!stdout_was_closed)
		return 0;
	return cli_error(NULL, "standard output is closed: the output would be lost "
			 "(give the command a file or a pipe to write to)");
}

void cli_exit_if_epipe(int err)
{
	if (err == EPIPE)
		_exit(EXIT_OK);
}

void cli_say(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kmsg %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
}
