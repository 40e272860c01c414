/*
 * cmd_follow.c - kmsg follow: as tail -f (or dmesg -w) for a log: the last
 * records, then every new one the moment it is written, with all of kmsg
 * read's formats and filters.
 *
 * The follower sleeps on the log's futex (kmsg_reader_wait()), so a new
 * record wakes it within microseconds and an idle log costs nothing.  The
 * only timed wake is for fragments: a line whose end has not come is
 * shown as it is FRAGMENT_WAIT_MS after its first part was written (a
 * writer that died mid-line must not hide it for ever).  When writers
 * overtake the follower it says on stderr how many records it lost and
 * carries on.  SIGINT, SIGTERM and SIGHUP end it quietly with status 0,
 * after closing a JSON document; so does a closed output pipe.
 *
 * As tail -F, it keeps to the log's path.  inotify tells a watcher thread
 * when the file or its name changes (removed, renamed, replaced, resized,
 * written over), and the thread wakes the main one with SIGURG; so an
 * idle follower still sleeps.  Where inotify cannot watch, the path is
 * looked at every CHECK_MS instead.  Appends through the mapping raise no
 * inotify event, so once records come the path is also looked at
 * CHECK_MS later (a writer may have repaired a damaged header).
 */
#define _GNU_SOURCE
#include "output.h"
#include "source.h"
#include "cursor.h"
#include "grep.h"
#include "matches.h"
#include "selection.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_LINES 10
#define CHECK_MS 1000 /* how often the path is looked at, as tail -F does */
#define STOPPED (-1)  /* follow_loop(): a signal asked for the end */
/* After inotify's word, the path is looked at this much later: a cp(1)
 * over the log truncates it first, and a look then would see no log. */
#define SETTLE_NS (100 * 1000000LL)

static const char *file_opt, *lines_opt;
static int fail_missing;

const struct poptOption follow_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log to follow", "PATH" },
	{ "lines", 'n', POPT_ARG_STRING, &lines_opt, 0,
	  "first print the last N records (default 10; all: every record "
	  "not cleared; 0: only new ones)", "N|all" },
	{ "fail-missing", '\0', POPT_ARG_NONE, &fail_missing, 0,
	  "fail at once if the log does not exist, instead of waiting for it", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)cursor_options, 0,
	  "Cursors (journalctl's options):", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_options, 0,
	  "Format and filter options:", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_human_options, 0,
	  NULL, NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)grep_options, 0,
	  "Text and writer filters:", NULL },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

static volatile sig_atomic_t stop, news, waiting;
static sigjmp_buf wake;  /* in wait_for(), while waiting is set */

/*
 * The path's watch: an inotify descriptor with a watch on the directory
 * (for the log's name) and one on the file.  fd, dir_wd and name are set
 * before the watcher thread starts and stay; file_wd and active belong to
 * the main thread.  Not active (inotify cannot watch here, or the thread
 * did not start): the path is polled.
 */
static struct {
	int fd, dir_wd, file_wd, active;
	const char *name;  /* the log's name in its directory */
	pthread_t main;
} watch = { -1, -1, -1, 0, NULL, 0 };

/*
 * SIGINT, SIGTERM, SIGHUP (stop) and the watcher thread's SIGURG (news:
 * the path changed).  A flag alone could come between wait_for()'s look
 * at the flags and its sleep, which would then last until a writer
 * appends; so a handler that finds the process waiting jumps out of the
 * wait (see there).
 */
static void on_signal(int sig)
{
	if (sig == SIGURG)
		news = 1;
	else
		stop = 1;
	if (waiting) {
		waiting = 0;
		siglongjmp(wake, 1);
	}
}

/*
 * Every wait of the follower: for records in r (kmsg_reader_wait()), or
 * with r NULL a nap, of at most timeout_ms (-1: none for records).
 * Returns what kmsg_reader_wait() does (0 for a nap), or -EINTR at once
 * if a signal set stop or news, whenever it came.  The futex has no
 * signal mask to swap in as it goes to sleep (ppoll's way of closing the
 * window between the test and the sleep), so the handler jumps back here:
 * out of a leaf that keeps nothing across the jump, and out of the
 * library's wait, which holds no lock and no memory.
 */
static int wait_for(struct kmsg_reader *r, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	int rc = 0;

	if (sigsetjmp(wake, 1))
		return -EINTR;
	waiting = 1;
	if (stop || news) {
		waiting = 0;
		return -EINTR;
	}
	if (r)
		rc = kmsg_reader_wait(r, timeout_ms);
	else
		nanosleep(&ts, NULL);
	waiting = 0;
	return rc;
}

/*
 * Reads the inotify events there are; returns 1 if one of them is about
 * the log (its file, or its name in the directory).
 */
static int read_events(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	int about = 0;
	ssize_t n;

	while ((n = read(watch.fd, buf, sizeof(buf))) > 0) {
		for (char *p = buf; p < buf + n;) {
			const struct inotify_event *ev = (const void *)p;

			if (ev->wd != watch.dir_wd ||
			    (ev->len && !strcmp(ev->name, watch.name)))
				about = 1;
			p += sizeof(*ev) + ev->len;
		}
	}
	return about;
}

/*
 * The watcher thread.  Sleeps until the reader of our output pipe goes
 * away (the write end then reports POLLERR), then ends the process: the
 * follower itself may be asleep on the futex for hours and would only
 * notice at its next write.  And when inotify says the path changed, it
 * wakes the main thread.
 */
static void *watcher(void *arg)
{
	struct pollfd p[2] = {
		{ .fd = *(int *)arg ? STDOUT_FILENO : -1, .events = 0 },
		{ .fd = watch.fd, .events = POLLIN },
	};

	for (;;) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			return NULL;
		}
		if (p[0].revents & (POLLERR | POLLHUP | POLLNVAL))
			_exit(EXIT_OK);
		if ((p[1].revents & POLLIN) && read_events())
			pthread_kill(watch.main, SIGURG);
	}
	return NULL;
}

/*
 * Starts watching the directory of path with inotify, quietly leaving
 * watch.fd -1 (the path is polled then) where that fails.
 */
static void watch_start(const char *path)
{
	static char buf[4096];
	const char *slash = strrchr(path, '/'), *dir = cli_dir_of(path, buf, sizeof(buf));

	watch.name = slash ? slash + 1 : path;
	if (!dir || !*watch.name)
		return;
	watch.fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (watch.fd < 0)
		return;
	watch.dir_wd = inotify_add_watch(watch.fd, dir, IN_CREATE | IN_DELETE |
					 IN_MOVED_FROM | IN_MOVED_TO | IN_ONLYDIR);
	if (watch.dir_wd < 0) {
		close(watch.fd);
		watch.fd = -1;
	}
	watch.active = watch.fd >= 0;
}

/*
 * Watches the file now at path, in place of the one before: its
 * size, its content written over (cp, dd: both write(2)), its removal
 * or rename.  The watch goes where the path leads, so a new file there
 * is watched.  If that fails, the path is polled from now on.
 */
static void watch_file(const char *path)
{
	if (!watch.active)
		return;
	if (watch.file_wd >= 0)
		inotify_rm_watch(watch.fd, watch.file_wd);
	watch.file_wd = inotify_add_watch(watch.fd, path, IN_MODIFY | IN_ATTRIB |
					  IN_DELETE_SELF | IN_MOVE_SELF);
	if (watch.file_wd < 0) {
		/* the thread goes on draining what still comes */
		inotify_rm_watch(watch.fd, watch.dir_wd);
		watch.active = 0;
	}
}

/*
 * Installs the handler (no SA_RESTART: the wait must return -EINTR; each
 * signal blocks the others while it is handled), starts the path's watch
 * and, when stdout is a pipe or socket or there is a watch, the watcher
 * thread, which blocks these signals so that they reach the main thread.
 * SIGBUS keeps cli_init()'s handler: a page cut off under the mapping
 * reads as zeros, and drain() and try_open() look at cli_bus_cut().
 */
static void setup_signals(const char *path)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGURG };
	static int pipe_out;
	struct sigaction sa;
	struct stat st;
	sigset_t set, old;
	pthread_t t;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaddset(&set, sigs[i]);
	sa.sa_handler = on_signal;
	sa.sa_mask = set;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	/* a reader of the output that stopped reading must not keep a
	 * stop from ending the follow */
	cli_write_stop_on(&stop);
	watch.main = pthread_self();
	watch_start(path);
	pipe_out = fstat(STDOUT_FILENO, &st) == 0 &&
		   (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
	if (!pipe_out && watch.fd < 0)
		return;
	pthread_sigmask(SIG_BLOCK, &set, &old);
	if (pthread_create(&t, NULL, watcher, &pipe_out) == 0)
		pthread_detach(t);
	else
		watch.active = 0;  /* nothing reads the events: poll the path */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* The cursors of this follow (cursor.c). */
static struct cursor cur;

/* Places r where printing starts: see the -n option, and the cursors
 * (start: where a cursor given says, cleared records left out). */
static int position(struct kmsg_reader *r, struct kmsg_log *log,
		    const struct output *o, int all, uint64_t n, const uint64_t *at)
{
	struct kmsg_stat st;
	uint64_t floor, start;
	int rc = kmsg_log_stat(&st, log);

	if (rc < 0)
		return rc;
	if (at)
		return kmsg_reader_seek_seq(r, *at > st.clear_seq ? *at : st.clear_seq);
	floor = st.clear_seq > st.first_seq ? st.clear_seq : st.first_seq;
	if (all)
		return o->have_since ? kmsg_reader_seek_time(r, o->since_ns)
				     : kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	if (n == 0 || st.next_seq <= floor)
		return kmsg_reader_seek_seq(r, st.next_seq);
	if (n >= st.next_seq - floor)
		return kmsg_reader_seek_seq(r, floor);
	rc = out_last_start(&start, r, o, n, floor, st.next_seq);
	if (rc < 0)
		return rc;
	return kmsg_reader_seek_seq(r, start);
}

/*
 * A write that failed with rc: after a stop signal, -EINTR is output its
 * reader did not take within a second (cli_write_stop_on()), dropped and
 * said once, and the end is STOPPED; else what out_fail() says and returns.
 */
static int write_failed(struct output *o, int rc)
{
	static int said;

	if (!stop || rc != -EINTR)
		return out_fail(o, rc);
	if (!said++)
		cli_error("standard output", "not taken within a second of the stop "
			  "signal: the rest of the output is dropped");
	return STOPPED;
}

/* drain()'s *read_err for a page cut off under the mapping. */
#define READ_CUT 2

/* The log being followed, one a process, shared by the functions below. */
static struct follow {
	const char *path;
	struct kmsg_log *log;
	struct kmsg_reader *r;
	uint8_t ring_id[16];
	uint64_t clear_seq;    /* -n all with --since: records below it are cleared */
	int64_t next_check_ns; /* CLOCK_MONOTONIC: when to look at the path again */
	int cut_short;         /* opened shorter than its header says */
	/* the last record read (not a gap): its numbering, number and time,
	 * for where to go on should the numbering begin again (renumbered()) */
	uint64_t seq_id, last_seq;
	int64_t last_real_ns;
	int damaged;           /* header damage seen since the last read to the end */
} fl;

/*
 * The numbering of the log may have begun again since the last record
 * read (a writer rebuilt a damaged header; a copy of the log was put
 * back): resolves the position after that record, at, as a cursor is
 * resolved (kmsg_log_position_resolve()).  If numbers were handed out
 * again, says so and places the reader at the first number not certainly
 * read (*moved set); else leaves it where it is.  0 or a negative code.
 */
static int renumbered(uint64_t at, int *moved)
{
	struct kmsg_position p = {
		.seq_id = fl.seq_id,
		.next = at,
		.last_real_ns = fl.last_seq + 1 == at ? fl.last_real_ns : 0,
	};
	uint64_t start;
	int rc;

	*moved = 0;
	if (!fl.seq_id)
		return 0;  /* nothing read yet: nothing to place */
	memcpy(p.ring_id, fl.ring_id, sizeof(p.ring_id));
	rc = kmsg_log_position_resolve(&start, fl.log, &p);
	if (rc != KMSG_POSITION_RENUMBERED)
		return rc < 0 ? rc : 0;
	cli_error(fl.path, "numbers from %llu on were handed out again (a writer rebuilt a "
		  "damaged header, or a copy of the log was put back): going on there, so "
		  "records may be printed again", (unsigned long long)start);
	*moved = 1;
	fl.seq_id = 0;
	return kmsg_reader_seek_seq(fl.r, start);
}

/*
 * Prints every record the reader has now, stopping early if a signal asks
 * for the end; unless to_end (a signal came already): then it prints on
 * to the first record numbered to_end or more, which it leaves unprinted,
 * so that writers faster than the output cannot keep it going for ever.
 * Returns 0, or a negative code: of the reader, with *read_err set, or of
 * writing, for out_fail().  A page of the file cut off under the mapping
 * (read as zeros: see setup_signals()) is KMSG_ECHANGED with *read_err
 * READ_CUT: what came from it is not the log's, nothing of it is printed.
 */
static int drain(struct output *o, int *read_err, uint64_t to_end)
{
	struct kmsg_record rec;
	int rc = 0;

	while ((to_end || !stop) && (rc = kmsg_reader_next(fl.r, &rec)) != 0) {
		if (cli_bus_cut()) {
			*read_err = READ_CUT;
			return KMSG_ECHANGED;
		}
		if (rc < 0) {
			*read_err = 1;
			return rc;
		}
		if (to_end && rec.seq >= to_end && !(rec.flags & KMSG_GAP))
			break;
		if (!(rec.flags & KMSG_GAP) && rec.seq_id != fl.seq_id && fl.seq_id) {
			/* another numbering than the last record's: the same
			 * numbers, renewed by a boot's first writer, or new ones */
			int moved;

			rc = renumbered(fl.last_seq + 1, &moved);
			if (rc < 0) {
				*read_err = 1;
				return rc;
			}
			if (moved)
				continue;
		}
		OUT_GAPS(o, &rec);
		rc = rec.seq < fl.clear_seq ? 0 : out_record(o, &rec);
		if (rc < 0)
			return rc;
		cur_note(&cur, &rec, fl.r);
		if (!(rec.flags & KMSG_GAP)) {
			fl.seq_id = rec.seq_id;
			fl.last_seq = rec.seq;
			fl.last_real_ns = rec.real_ns;
		}
	}
	if (cli_bus_cut()) {
		*read_err = READ_CUT;
		return KMSG_ECHANGED;
	}
	return 0;
}

/*
 * Opens fl.path as the followed log, with a joining reader.  At the start
 * (again 0), a log that does not exist is waited for (tail -F's habit)
 * unless fail_now; again, after the log went away or changed, whatever is
 * at the path is waited for until it opens as a log, its first error said
 * once.  Returns 0, or an exit status after saying what is wrong (STOPPED
 * if a signal came while waiting).
 */
/* Whether the path is an empty regular file: a log not yet made. */
static int path_empty(void)
{
	struct stat sb;

	return stat(fl.path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size == 0;
}

/* Closes what try_open() or the loop has open. */
static void close_followed(void)
{
	kmsg_reader_free(fl.r);
	kmsg_log_close(fl.log);
	fl.r = NULL;
	fl.log = NULL;
}

/*
 * Opens fl.path again (after a change) into fl.log and fl.r, and fills
 * *st.  The file may be changing as it is opened (a cp over it under
 * way): a page cut off as it was read (a SIGBUS, read as zeros) gives
 * -EAGAIN, with what was opened closed.
 */
static int try_open(struct kmsg_stat *st)
{
	int rc;

	cli_bus_cut();  /* a cut seen before is not this file's */
	rc = kmsg_log_open(&fl.log, fl.path, KMSG_OPEN_READ);
	if (rc == 0)
		rc = kmsg_reader_new(&fl.r, fl.log, KMSG_READER_JOIN);
	if (rc == 0)
		rc = kmsg_log_stat(st, fl.log);
	if (cli_bus_cut())
		rc = -EAGAIN;
	if (rc < 0)
		close_followed();
	return rc;
}

static int open_followed(int fail_now, int again)
{
	int said = 0, said_err = 0, waited = again, rc = 0;
	int64_t quiet_until = 0;
	struct kmsg_stat st;

	for (;;) {
		int there = access(fl.path, F_OK) == 0 || errno != ENOENT;

		/* at the start, a path that is there is opened below, and
		 * what is wrong with it said at once; but for an empty file,
		 * a log a writer is yet to make, which is waited for as a
		 * missing one is */
		if (!waited && (fail_now || (there && !path_empty())))
			break;
		waited = 1;
		if (there) {
			/* A file that is not a log is said once, with what
			 * the follower does.  An empty one is a log not yet
			 * made: said at the start, and after a change by
			 * check_path(). */
			int64_t now = cli_now_ns(CLOCK_MONOTONIC);

			rc = try_open(&st);
			if (rc == 0)
				break;
			if (rc == KMSG_EEMPTY && !again && !said++)
				cli_error(fl.path, "is empty: a log not yet made; waiting for "
					  "a writer to make it (--fail-missing fails at once "
					  "instead)");
			/* what fills an empty file (cp, a shell's
			 * redirection) may not be a log for a moment: said
			 * only once it has stayed so for 2 s */
			if (rc == KMSG_EEMPTY)
				quiet_until = now + INT64_C(2000000000);
			else if (rc != -EAGAIN && !quiet_until)
				quiet_until = now;
			if (rc != -EAGAIN && rc != KMSG_EEMPTY && now >= quiet_until &&
			    !said_err++) {
				cli_lib_error(fl.path, rc);
				cli_error(fl.path, "waiting for a log there, as it looks every "
					  "%d ms (SIGINT or SIGTERM ends the follow)", CHECK_MS);
			}
		} else if (!again && !said++) {
			cli_error(fl.path, "no such log yet; waiting for it to appear "
				  "(--fail-missing fails at once instead)");
		}
		wait_for(NULL, there && (rc == -EAGAIN || !said_err) ? 50 : CHECK_MS);
		news = 0;  /* the path is looked at anyway */
		if (stop)
			return STOPPED;
	}
	if (!fl.log) {
		if ((fl.log = cli_open_log(fl.path, 0, NULL)) == NULL)
			return EXIT_FAIL;
		rc = kmsg_reader_new(&fl.r, fl.log, KMSG_READER_JOIN);
		if (rc == 0)
			rc = kmsg_log_stat(&st, fl.log);
		if (rc < 0)
			return cli_lib_error(fl.path, rc);
	}
	memcpy(fl.ring_id, st.ring_id, sizeof(fl.ring_id));
	cur_log(&cur, st.ring_id);
	watch_file(fl.path);
	fl.cut_short = cli_cut_short(fl.path, &st) != 0;
	/* where printing starts is -n's (position()), as for a log there
	 * from the start */
	if (said && !again)
		cli_error(fl.path, "appeared; following it");
	return 0;
}

/*
 * Looks at the path when it is due (see next_check()), as tail -F does: a log
 * removed, replaced (mv, a new log) or resized (cut short, restored) is
 * said on stderr and opened again.  The same log (its ring id) goes on
 * from where the follower was, reporting what went missing; another log
 * is followed from its oldest record.  change, if not 0, is a change the
 * reader found itself (KMSG_FILE_REWRITTEN).  Returns 0, or an exit status.
 */
/* Changes check_path() tells apart beside the library's KMSG_FILE_*: the
 * file was emptied or replaced by an empty one, and a writer has made it
 * a log. */
#define KMSG_FILE_MADE 100
/* And: the reader found the header damaged (KMSG_ECORRUPT). */
#define KMSG_FILE_DAMAGED 101

static int check_path(struct output *o, int *read_err, int change)
{
	int64_t now = cli_now_ns(CLOCK_MONOTONIC);
	uint64_t at;
	uint8_t old_id[16];
	int rc, same;

	if (!change) {
		if (now < fl.next_check_ns)
			return 0;
		/* A log opened cut short is looked at every CHECK_MS even
		 * with inotify: its wake word lies past the file's end, where
		 * no writer's wake reaches, so an event the watcher missed
		 * (while its watch was being set again, or late under load)
		 * would leave it asleep for good. */
		fl.next_check_ns = watch.active && !fl.cut_short ? INT64_MAX
					: now + (int64_t)CHECK_MS * 1000000;
		change = kmsg_log_file_changed(fl.log, fl.path);
	}
	if (change <= KMSG_FILE_SAME)
		return 0;  /* unchanged, or cannot tell: keep following */
	/* Damage found again before the reader got to the end: what opens
	 * is no better yet; looked at again after a pause, not said again. */
	if (change == KMSG_FILE_DAMAGED && fl.damaged++) {
		wait_for(NULL, CHECK_MS);
		if (stop)
			return STOPPED;
	}
	/* What the old file still shows first, if it is still there: a file
	 * resized or rewritten in place may now end before the mapping. */
	if (change == KMSG_FILE_GONE || change == KMSG_FILE_REPLACED) {
		kmsg_reader_flush(fl.r, INT64_MAX);
		rc = drain(o, read_err, 0);
		if (rc == 0)
			rc = out_flush(o);
		if (rc < 0)
			return *read_err ? cli_lib_error(fl.path, rc) :
			       write_failed(o, rc);
	}
	at = kmsg_reader_position(fl.r);
	memcpy(old_id, fl.ring_id, sizeof(old_id));
	if (change == KMSG_FILE_GONE)
		cli_error(fl.path, "removed; waiting for it to come back");
	if ((change == KMSG_FILE_RESIZED || change == KMSG_FILE_REPLACED) && path_empty()) {
		/* logrotate's copytruncate, or its create mode: the old
		 * log's records are gone from this path (the copy or the
		 * renamed file has them), and the next writer makes a new
		 * log here */
		char shown[64] = "";

		if (fl.last_seq)
			snprintf(shown, sizeof(shown), " after record %llu",
				 (unsigned long long)fl.last_seq);
		if (change == KMSG_FILE_RESIZED)
			cli_error(fl.path, "cut to 0 bytes (as logrotate's copytruncate "
				  "does): its records are gone from it, any%s unshown here; "
				  "waiting for a writer to make the log anew", shown);
		else
			cli_error(fl.path, "replaced by an empty file (as logrotate's "
				  "create mode does): the old log, with any records%s not "
				  "shown here, is where it was moved to; waiting for a writer "
				  "to make the log anew", shown);
		change = KMSG_FILE_MADE;
	}
	close_followed();
	rc = open_followed(0, 1);
	if (rc)
		return rc;
	/* the new file could not be watched: poll it from now on */
	if (!watch.active)
		fl.next_check_ns = now + (int64_t)CHECK_MS * 1000000;
	same = !memcmp(old_id, fl.ring_id, sizeof(old_id));
	cli_error(fl.path, "%s; %s", change == KMSG_FILE_GONE ? "back" :
		  change == KMSG_FILE_MADE ? "made anew by a writer" :
		  change == KMSG_FILE_DAMAGED && fl.damaged > 1 ? "its header is still damaged" :
		  change == KMSG_FILE_DAMAGED ? "its header was found damaged (a hostile "
		  "store, or a bad disk); read through a copy rebuilt from its records until "
		  "a writer repairs it" :
		  change == KMSG_FILE_REPLACED ? "replaced by another file" :
		  change == KMSG_FILE_REWRITTEN && same ? "its header was written over "
		  "(damaged, or the log copied back over itself)" :
		  change == KMSG_FILE_REWRITTEN ? "written over with another log" :
		  change == KMSG_FILE_REPAIRED ? "its damaged header was repaired by a writer" :
		  "the file changed size (cut short, or restored by a writer)",
		  same ? "the same log: going on where it was" :
		  "another log: following it from its oldest record");
	if (same) {
		int moved;

		/* where it was, unless the numbers were handed out again */
		rc = renumbered(at, &moved);
		if (rc == 0 && !moved)
			rc = kmsg_reader_seek_seq(fl.r, at);
	} else {
		rc = kmsg_reader_seek(fl.r, KMSG_SEEK_OLDEST);
		fl.clear_seq = 0;
		fl.seq_id = 0;
	}
	if (rc < 0)
		return cli_lib_error(fl.path, rc);
	return 0;
}

/*
 * Prints what the reader has and then each new record as it comes, until
 * a signal asks for the end (returns STOPPED) or reading or writing fails
 * (reports it and returns an exit status).
 */
static int follow_loop(struct output *o)
{
	int rc, timed_out = 0, maybe_pending = 1, read_err = 0;
	int64_t activity = cli_now_ns(CLOCK_MONOTONIC), now, save_due;

	fl.next_check_ns = activity + (int64_t)CHECK_MS * 1000000;
	for (;;) {
		int64_t due;
		int timeout;

		/* A log opened cut short shows its missing end as zeros: a
		 * writer that restored the size since has written records
		 * there that this mapping cannot see, and would read as
		 * damage.  So the file is looked at before every read until
		 * it is opened whole. */
		if (fl.cut_short) {
			fl.next_check_ns = 0;
			rc = check_path(o, &read_err, 0);
			if (rc)
				return rc;
		}
		/* After a quiet spell every incomplete line is due; else
		 * those begun more than OUT_FRAGMENT_WAIT_NS ago. */
		kmsg_reader_flush(fl.r, timed_out ? INT64_MAX :
				  cli_now_ns(CLOCK_REALTIME) - OUT_FRAGMENT_WAIT_NS);
		rc = drain(o, &read_err, 0);
		if (rc == 0)
			rc = out_flush(o);
		if (rc == KMSG_ECHANGED && read_err) {
			/* written over under us (the new log from its start),
			 * or restored to its size after we opened it cut
			 * short (on from where we were): the path tells */
			int change = kmsg_log_file_changed(fl.log, fl.path);
			int cut = read_err == READ_CUT;

			read_err = 0;
			rc = out_flush(o);
			if (rc < 0)
				return write_failed(o, rc);
			/* an exit status, or STOPPED while it waited for a log */
			rc = check_path(o, &read_err, change > KMSG_FILE_SAME ? change :
					cut ? KMSG_FILE_RESIZED : KMSG_FILE_REWRITTEN);
			if (rc)
				return rc;
			continue;
		}
		if (rc == KMSG_ECORRUPT && read_err) {
			/* its header damaged under us: opened again, the
			 * reader rebuilds a copy of its own from the records,
			 * until a writer repairs the file's */
			read_err = 0;
			rc = out_flush(o);
			if (rc < 0)
				return write_failed(o, rc);
			rc = check_path(o, &read_err, KMSG_FILE_DAMAGED);
			if (rc)
				return rc;
			continue;
		}
		if (rc < 0 && read_err) {
			out_flush(o);
			return cli_lib_error(fl.path, rc);
		}
		fl.damaged = 0;  /* read to the end: damage seen again is new */
		if (rc < 0)
			return write_failed(o, rc);
		/* all read is written out: the cursor file may move on */
		save_due = cur_save(&cur);
		if (timed_out)
			maybe_pending = 0;
		if (stop)
			return STOPPED;
		/* The next thing due: the path's check (soon if the watcher
		 * says it changed); gaps held back; a fragment among the
		 * records since the last quiet spell. */
		if (news) {
			news = 0;
			now = cli_now_ns(CLOCK_MONOTONIC) + SETTLE_NS;
			if (now < fl.next_check_ns)
				fl.next_check_ns = now;
		}
		due = fl.next_check_ns < save_due ? fl.next_check_ns : save_due;
		now = out_gaps_flush(o, 0);
		if (now && now < due)
			due = now;
		if (maybe_pending && activity + OUT_FRAGMENT_WAIT_NS < due)
			due = activity + OUT_FRAGMENT_WAIT_NS;
		now = cli_now_ns(CLOCK_MONOTONIC);
		timeout = due == INT64_MAX ? -1 :
			  due - now > (int64_t)INT_MAX * 1000000 ? INT_MAX :
			  due > now ? (int)((due - now + 999999) / 1000000) : 0;
		rc = wait_for(fl.r, timeout);
		timed_out = rc == 0 && maybe_pending &&
			    cli_now_ns(CLOCK_MONOTONIC) >= activity + OUT_FRAGMENT_WAIT_NS;
		if (rc == -EINTR)
			continue;  /* stop or news: the top of the loop says which */
		if (rc < 0)
			return cli_lib_error(fl.path, rc);
		if (rc == 1) {
			maybe_pending = 1;
			activity = cli_now_ns(CLOCK_MONOTONIC);
			/* appends raise no inotify event: one look after them */
			if (fl.next_check_ns == INT64_MAX)
				fl.next_check_ns = activity + (int64_t)CHECK_MS * 1000000;
		}
		rc = check_path(o, &read_err, 0);
		if (rc)
			return rc;
	}
}

/*
 * The end of a stopped follow whose last writes failed: output its reader
 * did not take within a second of the stop is dropped (write_failed()),
 * and the stop ends the command as asked, with status 0 (the cursor file
 * keeps its last save, all of it printed); any other error is out_fail()'s.
 */
static int stopped_fail(struct output *o, int rc)
{
	return write_failed(o, rc) == STOPPED ? EXIT_OK : EXIT_FAIL;
}

static int parse_lines(int *all, uint64_t *n, const char *s)
{
	if (!strcmp(s, "all") || !strcmp(s, "+0")) {
		*all = 1;
		return 0;
	}
	return cli_parse_u64(n, s, strlen(s), UINT64_MAX);
}

int cmd_follow(int argc, const char **argv)
{
	poptContext con;
	struct output o;
	int status, all = 0, rc, kind;
	uint64_t n = DEFAULT_LINES, at = 0;
	const char *const *words;

	out_init(&o);
	match_protect_args(argc, argv, follow_options);
	con = poptGetContext("kmsg follow", argc, argv, follow_options, 0);
	poptSetOtherOptionHelp(con, "[OPTION...] [KEY=value...]");
	memset(&fl, 0, sizeof(fl));
	status = cli_parse_args(con, "follow", &words);
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	if (lines_opt && (rc = parse_lines(&all, &n, lines_opt)) < 0) {
		/* as read words it */
		status = cli_usage_error("follow", "--lines", rc == -ERANGE ?
					 "'%s' is more than any log holds: -n all for every "
					 "record" : "'%s' is not a number or 'all'", lines_opt);
		goto out;
	}
	status = cur_setup(&cur, "follow");
	if (status != 0)
		goto out;
	if (cur.given && lines_opt) {
		status = cli_usage_error("follow", "--lines", "a cursor already says where "
					 "to start: give one or the other");
		goto out;
	}
	status = cli_need_stdout();
	if (status != 0)
		goto out;
	status = out_setup(&o, "follow", 1, words);
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	/* --since says where to start, unless -n says it too */
	if (o.have_since && !lines_opt)
		all = 1;
	fl.path = cli_log_path(file_opt);
	if (fl.path == NULL)
		goto out;
	if (!strcmp(fl.path, "-")) {
		cli_error("standard input", "kmsg follow needs a live log file, not a "
			  "pipe; 'kmsg read -F -' reads one");
		goto out;
	}
	kind = src_detect(fl.path);
	if (kind == -EISDIR) {
		cli_error(fl.path, "is a directory");
		goto out;
	}
	if (kind == SRC_DUMP || kind == SRC_TEXT) {
		cli_error(fl.path, "is %s, not a live log: use 'kmsg read'",
			  kind == SRC_DUMP ? "a kmsg dump" : "not a kmsg log");
		goto out;
	}
	setup_signals(fl.path);
	status = open_followed(fail_missing, 0);
	if (status)
		goto stopped;
	status = EXIT_FAIL;
	if (cur_start(&cur, &at, fl.log, fl.path) != 0)
		goto out;
	rc = position(fl.r, fl.log, &o, all, n, cur.given ? &at : NULL);
	if (rc < 0) {
		cli_lib_error(fl.path, rc);
		goto out;
	}
	if (all && o.have_since) {
		struct kmsg_stat st;

		if (kmsg_log_stat(&st, fl.log) == 0)
			fl.clear_seq = st.clear_seq;
	}
	status = follow_loop(&o);
stopped:
	if (status != STOPPED && !stop)
		goto out;
	/* stopped by a signal: what was printed stays as printed; gaps
	 * still held back are said; JSON gets its closing.  A cursor must
	 * not fall inside a line held open: those lines are shown as they
	 * are, so that every record below the cursor was printed. */
	if (cur.active && fl.r) {
		struct kmsg_stat st;
		int read_err = 0;

		kmsg_reader_flush(fl.r, INT64_MAX);
		/* up to what was written when the signal came */
		rc = drain(&o, &read_err, kmsg_log_stat(&st, fl.log) == 0 && st.next_seq ?
				      st.next_seq : UINT64_MAX);
		if (rc < 0 && read_err) {
			out_flush(&o);
			cli_lib_error(fl.path, rc);
			status = EXIT_FAIL;
			goto out;
		}
		if (rc < 0) {
			status = stopped_fail(&o, rc);
			goto out;
		}
	}
	out_gaps_flush(&o, 1);
	rc = out_end(&o);
	if (rc < 0) {
		status = stopped_fail(&o, rc);
		goto out;
	}
	status = cur_end(&cur, &o);
out:
	kmsg_reader_free(fl.r);
	out_free(&o);
	kmsg_log_close(fl.log);
	cur_free(&cur);
	poptFreeContext(con);
	return status;
}
