/*
 * cmd_kernel.c - "kmsg kernel": the kernel's log (/dev/kmsg) copied into a
 * kmsg log, as klogd copied it into syslog; --follow keeps copying.
 *
 * What a record keeps.  Each record of /dev/kmsg is parsed by the one
 * parser of that format (kmsg_devkmsg_*) and stored with the kernel's
 * facility and level (kern for its own, user for what programs wrote to
 * /dev/kmsg), its text with the \xNN escapes decoded, its since-boot time
 * as the record's since-boot time (so that it prints as dmesg prints it),
 * its dictionary (SUBSYSTEM=, DEVICE=) as fields of those names, and
 * under keys only a trusted ingester stores (KMSG_VOUCHED): _KERNEL_SEQ,
 * the kernel's sequence number; _KERNEL_CALLER, the kernel's caller
 * (T123, C1) when it gives one; _KERNEL_CONT=1 for a record the kernel
 * flags as a fragment ('c'), which is kept as the kernel left it, never
 * joined, as dmesg shows it.  The wall-clock time is the time the record
 * was read for what the kernel logs while kmsg kernel runs; for what was
 * there when it started (the backlog), it is the machine's boot time plus
 * the kernel's time, which runs slow by the time spent suspended: such
 * records carry _KERNEL_TIME_ESTIMATED=1.  The record's pid and caller
 * are kmsg kernel's own, its writer's.
 *
 * Where it goes on.  The position is kept in the log itself, where it
 * survives a reboot and cannot disagree with what was stored: at start,
 * the newest record of the running boot (the boot ids records carry are
 * the kernel's boot_id) that holds _KERNEL_SEQ or _KERNEL_LOST_LAST is
 * found by reading windows backwards from the log's end, each twice as
 * long as the last, so that a restart costs what was written since the
 * last copy, not the log's size.  /dev/kmsg cannot seek to a number:
 * it is read from its first record and what is already stored is
 * passed over.  A boot that has none starts at the kernel's first
 * record.  A lock (an OFD lock on PATH.kernel-lock, beside the log)
 * keeps a second kmsg kernel of the same log out, so that no record is
 * stored twice.
 *
 * What is lost.  /dev/kmsg gives one record per read(), into a buffer
 * that must hold it whole (a short one loses the record: EINVAL); EPIPE
 * says the kernel overwrote records before they were read, and the next
 * read gives the oldest left.  Each gap in the kernel's numbers, from
 * EPIPE or from records overwritten while kmsg kernel did not run, is
 * stored as one record at syslog.warning (the logger's own word, not the
 * kernel's: kmsg read -k leaves it out, as it leaves out what dmesg
 * would not show) that says how many and which, with _KERNEL_LOST,
 * _KERNEL_LOST_FIRST and _KERNEL_LOST_LAST.
 */
#define _GNU_SOURCE
#include "cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEVICE "/dev/kmsg"
#define BOOT_ID_PATH "/proc/sys/kernel/random/boot_id"
/* One record of /dev/kmsg, whole: the kernel formats at most 8 KiB
 * (CONSOLE_EXT_LOG_MAX); a read into less loses the record. */
#define RECORD_MAX (16u * 1024)
/* Records read before the signals are looked at again. */
#define BATCH 1024
/* The first window of the search for where to go on, in records. */
#define RESUME_WINDOW 256
/* The kernel's own: facility syslog, level warning, for a loss. */
#define LOSS_FACILITY 5
#define LOSS_LEVEL 4

enum { OPT_FOLLOW = 1, OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT };

const struct poptOption kernel_options[] = {
	{ "follow", 'w', POPT_ARG_NONE, NULL, OPT_FOLLOW,
	  "keep copying as the kernel logs, until SIGTERM or SIGINT (the default: "
	  "copy what is there and exit)", NULL },
	CLI_NEW_LOG_OPTIONS(OPT_FILE, OPT_LOG_SIZE, OPT_MAX_TEXT),
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

struct kernel_opts {
	int follow;
	char *file, *log_size, *max_text;
};

/* What was done, for the lines on stderr. */
struct counts {
	uint64_t read, copied, present, lost, losses, unparsed, failed;
};

/* The kernel's log as it is read: /dev/kmsg, or (kmsg-test only) a file
 * of its records standing for it. */
struct source {
	int fd;
	const char *name;
	char *fake;            /* the file's bytes, or NULL */
	size_t fake_len, fake_pos;
};

struct copier {
	struct kmsg_log *log;
	const char *path;
	uint32_t max_text;
	struct kmsg_devkmsg *parser;
	uint64_t next;         /* the kernel's number expected next */
	int64_t since_ns;      /* kernel times before it: not copied (resume()) */
	int live;              /* reading what the kernel logs now, not a backlog */
	struct counts n;
	char *buf;             /* RECORD_MAX + 1 bytes */
};

static int parse_options(struct kernel_opts *o, poptContext con)
{
	int rc;

	while ((rc = poptGetNextOpt(con)) > 0) {
		char *arg = poptGetOptArg(con);
		switch (rc) {
		case OPT_FOLLOW:   o->follow = 1; break;
		case OPT_FILE:     cli_keep(&o->file, arg); break;
		case OPT_LOG_SIZE: cli_keep(&o->log_size, arg); break;
		case OPT_MAX_TEXT: cli_keep(&o->max_text, arg); break;
		case CLI_OPT_H:    cli_help(con);
		}
		free(arg);
	}
	if (rc < -1)
		return cli_popt_error(con, "kernel", rc);
	if (poptPeekArg(con))
		return cli_usage_error("kernel", poptPeekArg(con), "takes no arguments");
	return 0;
}

/* What the copier does, on stderr: "kmsg kernel: ...". */
#define say(...) cli_say("kernel", __VA_ARGS__)

static void say_counts(const struct copier *c, const char *when)
{
	say("%s: read %" PRIu64 ", copied %" PRIu64 ", already stored %" PRIu64
	    ", lost %" PRIu64 " (in %" PRIu64 " gaps), failed %" PRIu64
	    "; next kernel record %" PRIu64, when, c->n.read, c->n.copied, c->n.present,
	    c->n.lost, c->n.losses, c->n.failed, c->next);
}

/* ---- the kernel's side ---------------------------------------------------- */

/* The first line of a small /proc file into buf, without its newline;
 * 0 or -errno. */
static int read_proc(char *buf, size_t size, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/*
 * The running kernel's boot: its boot_id in words into text (37 bytes),
 * and as records carry it (its first 8 bytes) as the return value, 0 if
 * the kernel has none.  kmsg-test takes KMSG_TEST_KERNEL_BOOT_ID (16
 * hexadecimal digits) for another boot.
 */
static uint64_t kernel_boot(char *text, size_t size)
{
#ifdef KMSG_TEST_HOOKS
	const char *fake = getenv("KMSG_TEST_KERNEL_BOOT_ID");

	if (fake && *fake) {
		snprintf(text, size, "%s", fake);
		return strtoull(fake, NULL, 16);
	}
#endif
	if (read_proc(text, size, BOOT_ID_PATH) < 0)
		snprintf(text, size, "(unknown)");
	return kmsg_boot_id();
}

/* Says why /dev/kmsg cannot be read (err from open()), with the fix;
 * returns EXIT_FAIL. */
static int device_error(const char *name, int err)
{
	char devkmsg[32] = "", restrict_[8] = "";

	if (err == ENOENT)
		return cli_error(name, "no such device: the kernel's log is not here (in a "
				 "container?); run kmsg kernel on the host, or give the "
				 "container /dev/kmsg");
	read_proc(devkmsg, sizeof(devkmsg), "/proc/sys/kernel/printk_devkmsg");
	read_proc(restrict_, sizeof(restrict_), "/proc/sys/kernel/dmesg_restrict");
	if ((err == EPERM || err == EACCES) && !strcmp(devkmsg, "off"))
		return cli_error(name, "the kernel lets nobody open it (kernel.printk_devkmsg "
				 "is off): sysctl kernel.printk_devkmsg=ratelimit, or boot "
				 "without printk.devkmsg=off");
	if ((err == EPERM || err == EACCES) && !strcmp(restrict_, "1"))
		return cli_error(name, "reading the kernel's log needs root or CAP_SYSLOG "
				 "(kernel.dmesg_restrict is 1): run as root or with "
				 "CAP_SYSLOG, or sysctl kernel.dmesg_restrict=0");
	if (err == EPERM || err == EACCES)
		return cli_error(name, "%s: run as root or with CAP_SYSLOG", strerror(err));
	return cli_error(name, "%s", strerror(err));
}

/* Opens the kernel's log, non-blocking; 0, or EXIT_FAIL after saying why. */
static int source_open(struct source *s)
{
	s->fd = -1;
	s->name = DEVICE;
#ifdef KMSG_TEST_HOOKS
	/* a file of /dev/kmsg's records, one read each: a record is its
	 * header line and the lines after it that begin with a space; a
	 * line "EPIPE" is that error */
	const char *fake = getenv("KMSG_TEST_KERNEL_DEVICE");

	if (fake && *fake) {
		FILE *f = fopen(fake, "re");
		size_t cap = 1 << 16;

		s->name = fake;
		if (f == NULL)
			return device_error(fake, errno);
		s->fake = malloc(cap);
		while (s->fake && !feof(f)) {
			if (s->fake_len == cap) {
				char *nf = cap < (64u << 20) ? realloc(s->fake, cap *= 2) : NULL;
				if (nf == NULL)
					free(s->fake);
				s->fake = nf;
				if (nf == NULL)
					break;
			}
			s->fake_len += fread(s->fake + s->fake_len, 1, cap - s->fake_len, f);
			if (ferror(f))
				break;
		}
		fclose(f);
		if (s->fake == NULL)
			return cli_error(fake, "cannot be read whole");
		return 0;
	}
#endif
	s->fd = open(DEVICE, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (s->fd < 0)
		return device_error(DEVICE, errno);
	return 0;
}

static void source_close(struct source *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->fake);
}

#ifdef KMSG_TEST_HOOKS
static ssize_t fake_read(struct source *s, char *buf, size_t size)
{
	size_t start = s->fake_pos, end = start;

	if (start >= s->fake_len)
		return -EAGAIN;
	do {
		const char *nl = memchr(s->fake + end, '\n', s->fake_len - end);
		end = nl ? (size_t)(nl - s->fake) + 1 : s->fake_len;
	} while (end < s->fake_len && s->fake[end] == ' ');
	s->fake_pos = end;
	if (end - start == 6 && !memcmp(s->fake + start, "EPIPE\n", 6))
		return -EPIPE;
	if (end - start > size)
		return -EINVAL;
	memcpy(buf, s->fake + start, end - start);
	return (ssize_t)(end - start);
}
#endif

/*
 * One record of the kernel's into buf: its length; -EAGAIN when there is
 * none yet; -EPIPE when the kernel overwrote records before they were
 * read (the next read gives the oldest left); -EINVAL when it did not fit
 * (the record is lost); another -errno.
 */
static ssize_t source_read(struct source *s, char *buf, size_t size)
{
	ssize_t n;

#ifdef KMSG_TEST_HOOKS
	if (s->fake)
		return fake_read(s, buf, size);
#endif
	do
		n = read(s->fd, buf, size);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

/* ---- where to go on --------------------------------------------------------- */

/* The kernel number a record of ours accounts for (a copy's _KERNEL_SEQ, a
 * loss's _KERNEL_LOST_LAST): 1 and *seq, or 0 for another record. */
static int accounted(uint64_t *seq, const struct kmsg_record *rec)
{
	struct kmsg_field f;
	size_t pos = 0;

	while (kmsg_field_next(&f, rec, &pos) == 1) {
		if (f.key[0] != '_' || !((f.key_len == 11 && !memcmp(f.key, "_KERNEL_SEQ", 11)) ||
					 (f.key_len == 17 &&
					  !memcmp(f.key, "_KERNEL_LOST_LAST", 17))))
			continue;
		return cli_parse_u64(seq, f.value, f.value_len, UINT64_MAX - 1) == 0;
	}
	return 0;
}

/*
 * Where to go on for the kernel's boot kboot: c->next, the first kernel
 * number not accounted for in the log (0: none of this boot is, the
 * kernel's first record), and c->since_ns.  The newest record of the
 * boot that accounts for one is looked for in windows back from the
 * log's end.  When none is found but the log has evicted records of this
 * boot, what was copied of it may have been among them: then only the
 * kernel's records logged after the oldest record the log keeps of this
 * boot are taken (since_ns), so that nothing copied before comes twice
 * (a first copy into a log that a busy boot had already filled misses
 * what the kernel logged before that record, and says so).  Returns 1 if a position was found,
 * 0 if not, or a negative code.
 */
static int resume(struct copier *c, uint64_t kboot)
{
	struct kmsg_boot boots[2];
	struct kmsg_reader *r = NULL;
	struct kmsg_record rec;
	struct kmsg_stat st;
	uint64_t hi, lo, win = RESUME_WINDOW, best = 0, seq;
	int n, found = 0, rc;

	c->next = 0;
	c->since_ns = 0;
	n = kmsg_log_boots(boots, 2, c->log);
	if (n <= 0 || boots[0].boot_id != kboot)
		return n < 0 ? n : 0;
	rc = kmsg_reader_new(&r, c->log, 0);
	if (rc < 0)
		return rc;
	for (hi = boots[0].last_seq + 1; !found && hi > boots[0].first_seq; hi = lo, win *= 2) {
		lo = hi - boots[0].first_seq > win ? hi - win : boots[0].first_seq;
		rc = kmsg_reader_seek_seq(r, lo);
		while (rc >= 0 && (rc = kmsg_reader_next(r, &rec)) == 1 && rec.seq < hi) {
			if (!(rec.flags & KMSG_GAP) && rec.boot_id == kboot &&
			    accounted(&seq, &rec) && (!found || seq > best)) {
				best = seq;
				found = 1;
			}
		}
		if (rc < 0)
			goto out;
		if (win > UINT64_MAX / 4)
			break;
	}
	rc = found;
	if (found) {
		c->next = best + 1;
		goto out;
	}
	/* this boot's first number (its first writer renewed the numbering)
	 * is gone: the log evicted records of this boot */
	if (n == 1 && kmsg_log_stat(&st, c->log) == 0 && boots[0].first_seq > st.seq_id_since &&
	    kmsg_reader_seek_seq(r, boots[0].first_seq) == 0 &&
	    kmsg_reader_next(r, &rec) == 1 && rec.boot_id == kboot) {
		struct timespec b, m;

		/* the kernel's times leave out suspended time, the record's
		 * do not: the oldest kernel time that can be after it */
		clock_gettime(CLOCK_BOOTTIME, &b);
		clock_gettime(CLOCK_MONOTONIC, &m);
		c->since_ns = rec.boot_ns - ((int64_t)(b.tv_sec - m.tv_sec) * 1000000000 +
					     (b.tv_nsec - m.tv_nsec));
		if (c->since_ns < 0)
			c->since_ns = 0;
	}
out:
	kmsg_reader_free(r);
	return rc;
}

/* ---- one record ------------------------------------------------------------- */

#define MAX_FIELDS 32

struct fields {
	struct kmsg_field f[MAX_FIELDS];
	size_t n;
	char nums[4][24];
};

/* key_len 0: strlen(key) */
static void add(struct fields *fs, const char *key, size_t key_len, const char *value,
		size_t len)
{
	if (fs->n < MAX_FIELDS)
		fs->f[fs->n++] = (struct kmsg_field){ key, key_len ? key_len : strlen(key),
						      value, len };
}

static void add_num(struct fields *fs, int slot, const char *key, uint64_t v)
{
	int len = snprintf(fs->nums[slot], sizeof(fs->nums[slot]), "%" PRIu64, v);
	add(fs, key, 0, fs->nums[slot], (size_t)len);
}

/* Appends e; counts it, or says why not (the first ten, then one in 10000). */
static int append(struct copier *c, const struct kmsg_entry *e)
{
	int r = kmsg_log_append(NULL, c->log, e);

	if (r < 0 && (c->n.failed++ < 10 || c->n.failed % 10000 == 0))
		cli_lib_error(c->path, r);
	return r;
}

/* Stores the gap from c->next to seq (exclusive): records of the kernel's
 * that were overwritten before they could be read. */
static void store_loss(struct copier *c, uint64_t seq)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct fields fs = { .n = 0 };
	uint64_t first = c->next, last = seq - 1, count = seq - c->next;
	char text[160];
	int len;

	if (count == 1)
		len = snprintf(text, sizeof(text), "kmsg kernel: 1 kernel record lost before "
			       "it was read (number %" PRIu64 ")", first);
	else
		len = snprintf(text, sizeof(text), "kmsg kernel: %" PRIu64 " kernel records "
			       "lost before they were read (numbers %" PRIu64 "-%" PRIu64 ")",
			       count, first, last);
	add_num(&fs, 0, "_KERNEL_LOST", count);
	add_num(&fs, 1, "_KERNEL_LOST_FIRST", first);
	add_num(&fs, 2, "_KERNEL_LOST_LAST", last);
	e.flags = KMSG_BEGIN | KMSG_VOUCHED;
	e.facility = LOSS_FACILITY;
	e.level = LOSS_LEVEL;
	e.text = text;
	e.text_len = (size_t)len;
	e.fields = fs.f;
	e.nfields = fs.n;
	c->n.lost += count;
	c->n.losses++;
	say("%" PRIu64 " kernel record%s lost before %s read (numbers %" PRIu64 "-%" PRIu64 ")",
	    count, count == 1 ? "" : "s", count == 1 ? "it was" : "they were", first, last);
	append(c, &e);
}

/*
 * Stores one record of /dev/kmsg (len bytes at c->buf): a gap before it
 * as a loss, then the record, unless it is already in the log.
 */
static void store(struct copier *c, size_t len)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_record rec;
	struct fields fs = { .n = 0 };
	struct kmsg_field f;
	char caller[12];
	const char *p = c->buf, *end = c->buf + len;
	size_t pos = 0, tl;
	int r = 0;

	while (p < end && r >= 0) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t ll = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		r = kmsg_devkmsg_feed(&rec, c->parser, p, ll);
		p += ll;
	}
	if (r >= 0)
		r = kmsg_devkmsg_end(&rec, c->parser);
	c->n.read++;
	if (r != 1) {
		if (c->n.unparsed++ < 10)
			say("a record the kernel gave is not of its format (%s): '%.*s'",
			    r < 0 ? kmsg_strerror(r) : kmsg_devkmsg_skipped(c->parser)
				? kmsg_devkmsg_skipped(c->parser) : "empty",
			    (int)(len < 200 ? len : 200), c->buf);
		return;
	}
	if (rec.seq < c->next) {
		c->n.present++;
		return;
	}
	if (c->since_ns && rec.boot_ns < c->since_ns) {
		/* copied before, and evicted from the log since (resume()) */
		c->n.present++;
		c->next = rec.seq + 1;
		return;
	}
	if (rec.seq > c->next)
		store_loss(c, rec.seq);

	while (kmsg_field_next(&f, &rec, &pos) == 1)
		if (f.key[0] != '_' && fs.n < MAX_FIELDS - 6)
			add(&fs, f.key, f.key_len, f.value, f.value_len);
	add_num(&fs, 0, "_KERNEL_SEQ", rec.seq);
	if ((rec.flags & KMSG_KERNEL_CALLER) && kmsg_fmt_caller(caller, sizeof(caller), &rec) > 0)
		add(&fs, "_KERNEL_CALLER", 0, caller, strlen(caller));
	if (rec.flags & KMSG_FRAGMENT)
		add(&fs, "_KERNEL_CONT", 0, "1", 1);
	if (!c->live)
		add(&fs, "_KERNEL_TIME_ESTIMATED", 0, "1", 1);
	tl = rec.text_len;
	if (tl > c->max_text) {
		add_num(&fs, 1, "_KERNEL_TRUNCATED", tl);
		tl = c->max_text;
	}
	/* a line as the kernel completed it: never joined to another */
	e.flags = KMSG_BEGIN | KMSG_TIMES | KMSG_VOUCHED;
	e.facility = rec.facility;
	e.level = rec.level;
	e.text = rec.text;
	e.text_len = tl;
	e.fields = fs.f;
	e.nfields = fs.n;
	e.boot_ns = rec.boot_ns;
	e.real_ns = c->live ? cli_now_ns(CLOCK_REALTIME) : rec.real_ns;
	if (append(c, &e) == 0)
		c->n.copied++;
	c->next = rec.seq + 1;
}

/*
 * Reads and stores up to max records: 1 when the kernel has no more
 * (EAGAIN), 0 when max were read, -1 after saying why reading failed.
 */
static int drain(struct copier *c, struct source *s, int max)
{
	for (int i = 0; i < max; i++) {
		ssize_t n = source_read(s, c->buf, RECORD_MAX);

		if (n == -EAGAIN)
			return 1;
		if (n == -EPIPE || n == -EINVAL) {
			/* overwritten, or one too long for the buffer: the
			 * numbers of the next record show how many */
			continue;
		}
		if (n < 0) {
			cli_error(s->name, "read: %s", strerror((int)-n));
			return -1;
		}
		store(c, (size_t)n);
	}
	return 0;
}

/* ---- one copier per log ------------------------------------------------------ */

/*
 * Takes the lock of the log at path, PATH.kernel-lock beside it (an OFD
 * lock, which dies with its holder, over a file that stays), and writes
 * this process's pid in it for the message of the next one.  Returns
 * the lock's descriptor, or -1 after saying why not.
 */
static int lock_log(const char *path)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET };
	char name[PATH_MAX], pid[24] = "";
	struct stat st;
	int fd, n;

	if (snprintf(name, sizeof(name), "%s.kernel-lock", path) >= (int)sizeof(name)) {
		cli_error(path, "the path is too long for the lock beside it");
		return -1;
	}
	fd = open(name, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		cli_error(name, "the lock of kmsg kernel cannot be opened: %s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0)) {
		cli_error(name, "is not a file of the user's own or root's: not used as the "
			  "lock of kmsg kernel; remove it");
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_OFD_SETLK, &fl) < 0) {
		int err = errno;

		n = (int)pread(fd, pid, sizeof(pid) - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		if (err == EAGAIN || err == EACCES)
			cli_error(path, "another kmsg kernel%s%s%s copies the kernel's log into "
				  "it: one at a time (stop that one first)", *pid ? " (pid " : "",
				  pid, *pid ? ")" : "");
		else
			cli_error(name, "lock: %s", strerror(err));
		close(fd);
		return -1;
	}
	n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0)
		(void)0;  /* the pid is for a message only */
	return fd;
}

/* SIGHUP: the log's path opened anew (it was replaced); copying goes on
 * from where it is, into the old log if that fails. */
static void reopen(struct copier *c, const struct kmsg_create_opts *co)
{
	struct kmsg_log *log = cli_open_log(c->path, KMSG_OPEN_WRITE, co);
	struct kmsg_stat st;

	if (log == NULL || kmsg_log_stat(&st, log) < 0) {
		kmsg_log_close(log);
		say("SIGHUP: '%s' not reopened: still copying into the log opened before",
		    c->path);
		return;
	}
	kmsg_log_close(c->log);
	c->log = log;
	c->max_text = st.max_text;
	say("SIGHUP: reopened '%s'", c->path);
}

int cmd_kernel(int argc, const char **argv)
{
	struct kernel_opts o = { 0 };
	struct kmsg_create_opts co = KMSG_CREATE_OPTS_INIT;
	struct copier c = { 0 };
	struct source s = { .fd = -1 };
	struct kmsg_stat st;
	struct epoll_event ev;
	char bootname[40];
	int64_t boot_real = 0;
	uint64_t kboot;
	poptContext con;
	sigset_t sigs;
	int status, sfd = -1, ep = -1, lock = -1, r;

	con = poptGetContext("kmsg kernel", argc, argv, kernel_options, 0);
	if (con == NULL)
		return cli_error(NULL, "%s", strerror(ENOMEM));
	status = parse_options(&o, con);
	if (status)
		goto out;
	if ((status = cli_parse_new_log(&co, "kernel", o.log_size, o.max_text)) != 0)
		goto out;
	status = EXIT_FAIL;
	c.path = cli_log_path(o.file);
	if (c.path == NULL)
		goto out;

	/* the kernel first: where it cannot be read, no log is made */
	if (source_open(&s) != 0)
		goto out;
	kboot = kernel_boot(bootname, sizeof(bootname));
	c.buf = malloc(RECORD_MAX + 1);
	kmsg_dmesg_boot_time(&boot_real);
	r = kmsg_devkmsg_new(&c.parser, boot_real);
	if (c.buf == NULL || r < 0) {
		cli_error(NULL, "%s", strerror(ENOMEM));
		goto out;
	}
	c.log = cli_open_log(c.path, KMSG_OPEN_WRITE, &co);
	if (c.log == NULL)
		goto out;
	r = kmsg_log_stat(&st, c.log);
	if (r < 0) {
		cli_lib_error(c.path, r);
		goto out;
	}
	c.max_text = st.max_text;
	lock = lock_log(c.path);
	if (lock < 0)
		goto out;
	r = resume(&c, kboot);
	if (r < 0) {
		cli_lib_error(c.path, r);
		goto out;
	}
	if (r == 1)
		say("boot %s: going on after the kernel's record %" PRIu64 " in '%s'",
		    bootname, c.next - 1, c.path);
	else if (c.since_ns)
		say("boot %s: no record of the kernel's left in '%s' (evicted): copying "
		    "what the kernel logged since %" PRId64 ".%06" PRId64 " s", bootname,
		    c.path, c.since_ns / 1000000000, c.since_ns % 1000000000 / 1000);
	else
		say("boot %s: copying the kernel's log from its first record into '%s'",
		    bootname, c.path);

	/* the signals come through the loop, read between batches */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGUSR1);
	sigaddset(&sigs, SIGHUP);
	sigprocmask(SIG_BLOCK, &sigs, NULL);
	sfd = signalfd(-1, &sigs, SFD_CLOEXEC | SFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (sfd < 0 || ep < 0) {
		cli_error(sfd < 0 ? "signalfd" : "epoll", "%s", strerror(errno));
		goto out;
	}
	ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = sfd };
	if (epoll_ctl(ep, EPOLL_CTL_ADD, sfd, &ev) < 0 ||
	    (s.fd >= 0 && (ev = (struct epoll_event){ .events = EPOLLIN, .data.fd = s.fd },
			   epoll_ctl(ep, EPOLL_CTL_ADD, s.fd, &ev) < 0))) {
		cli_error("epoll", "%s", strerror(errno));
		goto out;
	}

	for (;;) {
		struct epoll_event evs[2];
		struct signalfd_siginfo si;

		r = drain(&c, &s, BATCH);
		if (r < 0)
			goto out;
		if (r == 1 && !c.live) {
			c.live = 1;  /* the backlog is copied */
			if (o.follow && s.fd >= 0) {
				say_counts(&c, "backlog copied");
				say("following the kernel's log (pid %ld)", (long)getpid());
			}
		}
		if (r == 1 && (!o.follow || s.fd < 0)) {
			say_counts(&c, "done");
			status = EXIT_OK;
			goto out;
		}
		/* after a full batch, only a look at the signals */
		if (epoll_wait(ep, evs, 2, r == 0 ? 0 : -1) < 0 && errno != EINTR) {
			cli_error("epoll_wait", "%s", strerror(errno));
			goto out;
		}
		while (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGUSR1) {
				say_counts(&c, "so far");
				continue;
			}
			if (si.ssi_signo == SIGHUP) {
				reopen(&c, &co);
				continue;
			}
			/* what the kernel logged before the signal is kept */
			for (int b = 0; b < 16 && drain(&c, &s, BATCH) == 0; b++)
				;
			say_counts(&c, strsignal((int)si.ssi_signo));
			status = EXIT_OK;
			goto out;
		}
	}
out:
	if (sfd >= 0)
		close(sfd);
	if (ep >= 0)
		close(ep);
	source_close(&s);
	kmsg_log_close(c.log);
	if (lock >= 0)
		close(lock);
	kmsg_devkmsg_free(c.parser);
	free(c.buf);
	free(o.file);
	free(o.log_size);
	free(o.max_text);
	poptFreeContext(con);
	return status;
}
