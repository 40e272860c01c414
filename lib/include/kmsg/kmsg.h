/*
 * kmsg/kmsg.h - the one public header of libkmsg (#include <kmsg/kmsg.h>).
 *
 * libkmsg keeps log records in a memory-mapped, fixed-size file ring in the
 * manner of the Linux printk record buffer: variable-length records with a
 * 64-bit sequence number, two timestamps, syslog facility and level, text and
 * optional KEY=value fields.  Any number of processes append at once without a
 * daemon; readers take no lock and need only read permission.  When space runs
 * out the oldest whole records are evicted.  kmsg(5) describes the file and
 * the guarantees; libkmsg(3) this interface.
 *
 * Conventions: every function that can fail returns an int, 0 (or a count) on
 * success and a negative code on failure: either -errno from a system call, or
 * one of the KMSG_E* codes below.  kmsg_strerror() turns any code into words.
 * Output parameters come first.  The library never prints, never exits, never
 * installs signal handlers and never reads the environment.
 */
#ifndef KMSG_H
#define KMSG_H

#include <kmsg/version.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library is built with hidden visibility; what is declared here is its ABI. */
#pragma GCC visibility push(default)

/* Returns the version of the library the program runs with, "MAJOR.MINOR.PATCH";
 * KMSG_VERSION_STRING (kmsg/version.h) is the one it was compiled against. */
const char *kmsg_version(void);

/* The first 8 bytes of a log file (kmsg(5)); a dump's are gzip's. */
#define KMSG_LOG_MAGIC "KMSGRNG\x1a"

/* Errors of libkmsg's own; system errors are returned as -errno. */
enum {
	KMSG_ENOTLOG   = -1000, /* the file is not a kmsg log (bad magic) */
	KMSG_EVERSION  = -1001, /* a format version or feature this build lacks */
	KMSG_ECORRUPT  = -1002, /* the header is damaged or lies about sizes */
	KMSG_ETOOLONG  = -1003, /* text longer than the log's maximum */
	KMSG_EFIELD    = -1004, /* a field key breaks the key rule, or fields too big */
	KMSG_EPRIO     = -1005, /* facility or level out of range */
	KMSG_EBUSY     = -1006, /* writers stopped mid-append hold the room */
	KMSG_ERDONLY   = -1007, /* the log was opened for reading only */
	KMSG_ESEQ      = -1008, /* the sequence or position space is exhausted */
	KMSG_ESIZE     = -1009, /* a requested log size is out of range */
	KMSG_EINVAL    = -1010, /* an argument is invalid (NULL, bad flag, ...) */
	KMSG_ECHANGED  = -1011, /* the file now holds another log (written over) */
	KMSG_EOLDWRITER = -1012, /* a writer of the older format has the log open,
	                            so it cannot be upgraded to this format yet */
	KMSG_ETOOBIG   = -1013, /* the log is larger than this build can map
	                           (a 32-bit build: less than 4 GiB) */
	KMSG_EOTHERLOG = -1014, /* a kept position is of another log (its
	                           ring id differs) */
	KMSG_EEMPTY    = -1015, /* the file is empty: a log not yet made (or
	                           emptied, as logrotate's copytruncate does) */
	KMSG_ESHORTHDR = -1016, /* the file ends inside a log's header: a log
	                           cut short before its first record */
	KMSG_ESHAREDFS = -1017, /* the log is on a file system whose mappings
	                           other machines do not share (NFS, SMB, FUSE,
	                           ...): see KMSG_OPEN_ONE_HOST */
};

/* Returns a static English description of any code this library returns. */
const char *kmsg_strerror(int code);

/*
 * Structs that grow.  The structs the library fills or reads for its
 * caller (struct kmsg_record, kmsg_stat and kmsg_boot) may gain fields at
 * their end in later versions.  The functions that take them are macros
 * that pass the size of the struct as the caller's header has it on to the
 * function of the same name ending in _sized, so that a program and the
 * library built with different versions of this header still agree: a program built with an
 * older one is given, and is read, the fields it knows; one built with a
 * newer one than the library it runs with gets zeros in the fields the
 * library does not know (0 is "unknown" in every field added).  A size
 * smaller than the first version's is KMSG_EINVAL.  Call them by the
 * macro names; take the _sized function's address to call it through a
 * pointer.  The structs the caller fills for the library (kmsg_entry and
 * the *_opts) carry a version field instead.
 */

/* ------------------------------------------------------------------ */
/* Limits and defaults                                                 */

#define KMSG_DEFAULT_SIZE      (1024u * 1024u) /* bytes, whole file */
#define KMSG_MIN_SIZE          8192u
#define KMSG_FILE_OVERHEAD     4480u  /* bytes of a log file besides its ring:
                                         headers and the auxiliary area */
#define KMSG_MAX_SIZE          (UINT64_C(1) << 46) /* 64 TiB */
#define KMSG_DEFAULT_MAX_TEXT  1024u
#define KMSG_MAX_TEXT_LIMIT    65535u
#define KMSG_MAX_FIELDS_BYTES  4096u  /* all fields of one record together */
#define KMSG_MAX_KEY           64u    /* bytes in one field key */
#define KMSG_NFACILITIES       24     /* kern (0) .. local7 (23) */

/* ------------------------------------------------------------------ */
/* Opening and creating a log                                          */

struct kmsg_log;

/* Flags of kmsg_log_open(). */
enum {
	KMSG_OPEN_READ  = 0,      /* read only: needs read permission only */
	KMSG_OPEN_WRITE = 1 << 0, /* read and append, clear */
	KMSG_OPEN_SYNC  = 1 << 1, /* with WRITE: each append is on stable storage
	                             before kmsg_log_append() returns */
	KMSG_OPEN_ONE_HOST = 1 << 2, /* with WRITE: the caller vouches that only
	                             processes of this one machine write the log,
	                             so a network or FUSE file system is allowed */
};

#define KMSG_CREATE_OPTS_VERSION 1
struct kmsg_create_opts {
	unsigned version;   /* KMSG_CREATE_OPTS_VERSION */
	uint64_t size;      /* whole file in bytes, KMSG_MIN_SIZE..KMSG_MAX_SIZE */
	uint32_t max_text;  /* longest text of one record, 1..KMSG_MAX_TEXT_LIMIT */
	mode_t mode;        /* permission bits of a new file (umask applies) */
	uint64_t first_seq; /* sequence number of the first record, >= 1 */
};
#define KMSG_CREATE_OPTS_INIT \
	{ KMSG_CREATE_OPTS_VERSION, KMSG_DEFAULT_SIZE, KMSG_DEFAULT_MAX_TEXT, 0640, 1 }

/*
 * Opens the log at path.  With KMSG_OPEN_WRITE it is opened for appending.
 * The header is validated (magic, version, checksum, sizes against the file's
 * real size).  A header that fails is taken from its copy at the end of the
 * file, and an inconsistent dynamic part (positions, numbers) is rebuilt
 * from the records: in the file by a writer, in a private copy by a
 * reader, which never writes.  A file that is not a log, or whose two
 * headers are both damaged, is refused with KMSG_ENOTLOG, KMSG_EVERSION or
 * KMSG_ECORRUPT; one larger than this build can map (a 32-bit build: 4 GiB
 * or more) with KMSG_ETOOBIG.  A log cut short (the
 * file ends before its header says) is opened: its missing end reads as
 * empty, and opening it for writing restores the file's size.  An empty
 * file is KMSG_EEMPTY (kmsg_log_create() makes the log in it); one that
 * ends inside the header, KMSG_ESHORTHDR.  For writing, path must be a
 * regular file owned by the caller or root, not reached through a symbolic
 * link (-EPERM, -ELOOP), and on a file system that shares its mappings
 * between the processes that write it: one that other machines can mount
 * too (NFS, SMB, 9p, FUSE, Ceph, ...: kmsg_shared_fs_name()) is
 * KMSG_ESHAREDFS unless flags has KMSG_OPEN_ONE_HOST.  A FIFO or device at
 * path is KMSG_ENOTLOG, never waited on.  *out is set only on success;
 * close it with kmsg_log_close().
 */
int kmsg_log_open(struct kmsg_log **out, const char *path, unsigned flags);

/*
 * The name of the file system holding path ("nfs", "cifs", "fuse", ...) if
 * it is one where processes on other machines can open the same file, each
 * with a mapping of its own: writers there would overwrite each other's
 * records, and their locks would not meet.  NULL for a local file system,
 * or when path cannot be looked at.  The string is static.
 */
const char *kmsg_shared_fs_name(const char *path);

/*
 * Opens the log at path for writing, creating it first if it does not exist.
 * A new file is built fully as an unnamed file in the same directory
 * (O_TMPFILE; where the file system cannot, under a temporary name),
 * preallocated (a full disk fails here, never later), synced, and then linked
 * into place and the directory synced, so no reader ever sees a half-made
 * log, a creator killed half-way leaves nothing behind (or, under a
 * temporary name, a file path.new-RANDOM that the next create of path
 * removes), the new log survives a power cut once this returns, and two
 * racing creators end up sharing one file.  A symlink at path is never followed; an existing
 * file is opened as with kmsg_log_open() and opts is ignored, except that
 * it is refused when it is not a regular file (KMSG_ENOTLOG) or is owned by
 * neither the caller nor root (-EPERM): a file someone else planted at the
 * path is never written to.  An existing empty file (logrotate's
 * copytruncate and create modes leave one) is a log not yet made: the log
 * is made in it, with opts, keeping the file's owner and mode; two writers
 * racing on it make one log (the first makes it under a lock, the other
 * waits for it).  opts may be NULL for the defaults.  flags may add
 * KMSG_OPEN_SYNC and KMSG_OPEN_ONE_HOST (see kmsg_log_open()).
 */
int kmsg_log_create(struct kmsg_log **out, const char *path,
		    const struct kmsg_create_opts *opts, unsigned flags);

/*
 * The first 8 bytes of this boot's id (/proc/sys/kernel/random/boot_id),
 * as records carry it in boot_id; 0 if the kernel offers none.
 */
uint64_t kmsg_boot_id(void);

/*
 * The caller id records carry for the thread or process id of this
 * process's pid namespace: id itself in the initial namespace; elsewhere
 * id mixed with the namespace's inode number, with the top bit set (no
 * id of the initial namespace has it), so that two containers writing one
 * log do not continue each other's lines.  Appends with no caller of
 * their own carry the calling thread's.
 */
uint32_t kmsg_caller_id(uint32_t id);

/* Unmaps and closes; NULL is accepted.  Records appended stay in the file. */
void kmsg_log_close(struct kmsg_log *log);

/* What kmsg_log_file_changed() finds. */
enum kmsg_file_change {
	KMSG_FILE_SAME     = 0, /* path is the file the log was opened on */
	KMSG_FILE_GONE     = 1, /* nothing is at path any more */
	KMSG_FILE_REPLACED = 2, /* another file is at path (mv, a new log) */
	KMSG_FILE_RESIZED  = 3, /* the same file, another size than at open:
	                           cut short, or restored by a writer; the
	                           mapping no longer shows all of it */
	KMSG_FILE_REPAIRED = 4, /* the header was damaged when a reader opened
	                           it (it read through a copy of its own) and
	                           a writer has repaired it since */
	KMSG_FILE_REWRITTEN = 5, /* the same file now holds another log (cp or
	                           dd over it): the mapping shows that one */
};

/*
 * Compares the file at path with the one log was opened on, for a
 * long-lived reader (kmsg follow) that wants to notice, as tail -F does,
 * a log that was removed, replaced or resized under it and open it again.
 * Returns a kmsg_file_change, or a negative code if path cannot be looked
 * at for another reason.  Costs a few system calls.  After GONE or
 * REPLACED the old file is still there to read to its end (it stays
 * while mapped); after RESIZED or REWRITTEN it is not: reading through
 * the old mapping may find pages past the file's end.
 */
int kmsg_log_file_changed(struct kmsg_log *log, const char *path);

/* A snapshot of a log's state, as kmsg_log_stat() fills it. */
struct kmsg_stat {
	uint64_t file_size;     /* bytes */
	uint64_t data_size;     /* bytes of the ring itself */
	uint64_t used;          /* bytes the stored records occupy */
	uint32_t max_text;
	uint32_t format_version;
	uint8_t ring_id[16];    /* random, made with the file */
	int64_t created_ns;     /* CLOCK_REALTIME at creation */
	uint64_t first_seq;     /* oldest stored record */
	uint64_t next_seq;      /* the sequence number the next record gets */
	uint64_t clear_seq;     /* records below it are cleared */
	uint64_t evicted;       /* records evicted to make room, ever */
	uint64_t damaged;       /* damaged records writers skipped, ever */
	uint64_t holes;         /* appends whose writer died or was stopped
	                           before finishing, passed over, ever */
	/* The numbering's identity: a sequence number names a record only
	 * with it.  Renewed when numbers may repeat (the first writer of
	 * each boot, and a writer that rebuilt a damaged header); the numbers below
	 * seq_id_since keep their records.  The two identities before it,
	 * 0 if none, resolve older positions: see kmsg(5). */
	uint64_t seq_id;
	uint64_t seq_id_since;  /* the first number given under seq_id */
	uint64_t prev_seq_id;
	uint64_t prev_seq_id_since;
	uint64_t prev2_seq_id;
};

/* Fills *st from the shared header (no lock; values are a near snapshot). */
int kmsg_log_stat_sized(struct kmsg_stat *st, size_t size, struct kmsg_log *log);
#define kmsg_log_stat(st, log) kmsg_log_stat_sized((st), sizeof(struct kmsg_stat), (log))

/* One boot's records in a log, as kmsg_log_boots() finds them. */
struct kmsg_boot {
	uint64_t boot_id;       /* as records carry it (kmsg_boot_id()) */
	uint64_t first_seq;     /* its oldest stored record */
	uint64_t last_seq;      /* its newest record */
	int64_t first_real_ns;  /* their CLOCK_REALTIME times */
	int64_t last_real_ns;
};

/*
 * Fills boots[0..n) with the boots of the records stored in log, newest
 * first: boots[0] is the boot of the newest record, boots[1] the one
 * before it, and so on.  Returns how many it filled, fewer than n when
 * the log holds fewer boots (0 for an empty log), or a negative code.
 * The numbers from first_seq to last_seq are the boot's, though some may
 * have no record (lost, damaged, cleared records count).  Costs O(log n)
 * record reads per boot filled, not the log's size: it relies on the
 * records of one boot lying together, as writers keep them (kmsg(5));
 * in a file where they do not (records given to it by hand), the boots
 * listed may miss records or come twice, and it still ends.  A near
 * snapshot: writers may add records and evict
 * the oldest while it looks.
 */
int kmsg_log_boots_sized(struct kmsg_boot *boots, size_t n, size_t size,
			 struct kmsg_log *log);
#define kmsg_log_boots(boots, n, log) \
	kmsg_log_boots_sized((boots), (n), sizeof(struct kmsg_boot), (log))

/* ------------------------------------------------------------------ */
/* Appending                                                           */

struct kmsg_field {
	const char *key;    /* 1..KMSG_MAX_KEY bytes of [A-Z0-9_], first A-Z */
	size_t key_len;     /* 0: strlen(key) */
	const char *value;  /* any bytes */
	size_t value_len;
};

/*
 * Flags of a record (struct kmsg_entry.flags and struct kmsg_record.flags).
 *
 * Lines in parts: a record with KMSG_FRAGMENT leaves its caller's line
 * open, and the caller's next record continues it, unless that record has
 * KMSG_BEGIN: then the open line ends as it is and a new one begins, as a
 * printk without KERN_CONT does in the kernel.  A thread that writes its
 * own lines (no caller in the entry) needs neither flag on the last part:
 * the library marks each of its records that continues no line the thread
 * left open through that handle with KMSG_BEGIN itself, so that a line a
 * thread or process left open when it died is never continued by a later
 * one that got its id.  A program that writes on behalf of others (kmsg
 * emit, for a shell script) marks every record that does not continue a
 * line with KMSG_BEGIN.  Readers end a line whose caller has not continued
 * it for an hour (since-boot time) as it is, with KMSG_PARTIAL.
 */
enum {
	KMSG_FRAGMENT = 1 << 0, /* the line continues in a later record of the
	                           same caller */
	KMSG_PARTIAL  = 1 << 1, /* (read side, joined lines only) the line was
	                           never completed: what came of it is shown */
	KMSG_TIMES    = 1 << 2, /* (append side) use the entry's timestamps */
	KMSG_BEGIN    = 1 << 3, /* the record begins a new line: a line its
	                           caller left open ends before it */
	KMSG_GAP      = 1 << 4, /* (read side) no record: only the gap before
	                           seq, in lost and damaged (see kmsg_reader_next) */
	KMSG_UNFINISHED = 1 << 5, /* (read side) the numbers in lost are appends
	                           that never finished (their writer died, or was
	                           stopped and passed over, and then appended its
	                           record again), none a record evicted unread */
	KMSG_KERNEL_CALLER = 1 << 6, /* (read side, records parsed from dmesg
	                           text) caller is the kernel's printk caller
	                           id the text showed: a thread id ("T123",
	                           "T0" included) or 0x80000000 + a CPU number
	                           ("C3") */
	KMSG_VOUCHED  = 1 << 7, /* (append side) the entry may hold fields whose
	                           key is _ and a key of the key rule (_PID,
	                           _UID, _GID): the writer says these are facts
	                           the kernel gave it, as a listener on a
	                           socket does with its sender's credentials.
	                           Nothing checks the claim; a reader can trust
	                           it exactly as far as the log's permissions
	                           keep every other writer out (kmsg(5), TRUST) */
};

#define KMSG_ENTRY_VERSION 1
struct kmsg_entry {
	unsigned version;       /* KMSG_ENTRY_VERSION */
	unsigned flags;         /* KMSG_FRAGMENT, KMSG_BEGIN, KMSG_TIMES,
	                           KMSG_VOUCHED */
	int facility;           /* 0..23 */
	int level;              /* 0 (emerg) .. 7 (debug) */
	const char *text;
	size_t text_len;
	const struct kmsg_field *fields;
	size_t nfields;
	uint32_t caller;        /* who continues a fragment; 0: the thread id */
	uint32_t pid;           /* 0: the calling process */
	/* caller and pid, like everything in a record, are what the writer
	 * says: any writer of a log may give any (kmsg(5), Trust) */
	int64_t real_ns;        /* with KMSG_TIMES: CLOCK_REALTIME in ns */
	int64_t boot_ns;        /* with KMSG_TIMES: CLOCK_BOOTTIME in ns */
};
#define KMSG_ENTRY_INIT { KMSG_ENTRY_VERSION, 0, 1, 5, NULL, 0, NULL, 0, 0, 0, 0, 0 }

/*
 * Appends one record.  Either the whole record becomes visible or nothing
 * does.  Text longer than the log's maximum is refused with KMSG_ETOOLONG,
 * a bad key or too many field bytes with KMSG_EFIELD, a facility or level out
 * of range with KMSG_EPRIO; nothing is written then.  On success *seq (if not
 * NULL) gets the record's sequence number.  Never waits for a writer that
 * died, and for one stopped in the middle of an append (SIGSTOP, a
 * debugger) at most the bound in kmsg(5), once: the stopped append is then
 * passed over, and its writer appends its record again when it resumes.
 * KMSG_EBUSY only if stopped writers' blocks leave no room (kmsg(5)).
 */
int kmsg_log_append(uint64_t *seq, struct kmsg_log *log,
		    const struct kmsg_entry *entry);

/* Shorthand: one complete line of text at facility and level, now. */
int kmsg_log_print(struct kmsg_log *log, int facility, int level,
		   const char *text, size_t text_len);

/*
 * Marks every record below seq as cleared (as dmesg -C does for the kernel);
 * readers that start at KMSG_SEEK_CLEARED skip them.  The mark only moves
 * forward; seq beyond the next sequence number is clamped to it.  Sequence
 * numbers are never reused.  Needs a log opened for writing.
 */
int kmsg_log_clear(struct kmsg_log *log, uint64_t seq);

/* ------------------------------------------------------------------ */
/* Reading                                                             */

/*
 * One record as a reader returns it.  The pointers point into the reader's
 * own buffer and stay valid until the reader's next call.
 */
struct kmsg_record {
	uint64_t seq;
	int64_t real_ns;        /* CLOCK_REALTIME when written */
	int64_t boot_ns;        /* CLOCK_BOOTTIME when written */
	uint64_t boot_id;       /* first 8 bytes of the writer's boot id */
	uint32_t pid;
	uint32_t caller;
	int facility;           /* 0..23, or KMSG_PRIO_NONE */
	int level;              /* 0..7, or KMSG_PRIO_NONE */
	unsigned flags;         /* KMSG_FRAGMENT, KMSG_BEGIN, KMSG_PARTIAL, KMSG_GAP,
	                           KMSG_UNFINISHED, KMSG_KERNEL_CALLER */
	const char *text;       /* not NUL-terminated; may hold any bytes */
	size_t text_len;
	const unsigned char *fields; /* walk with kmsg_field_next() */
	size_t fields_len;
	uint64_t lost;          /* records evicted unread, or appends never
	                           finished, just before this one */
	uint64_t damaged;       /* damaged records skipped just before this one */
	uint64_t seq_id;        /* the numbering seq is of (kmsg_stat.seq_id) */
};

/*
 * Walks the fields of a record: *pos starts at 0; each call stores the next
 * field in *f and returns 1, or returns 0 at the end and KMSG_ECORRUPT if the
 * field area is malformed (which a record that passed its checksum is not).
 */
int kmsg_field_next_sized(struct kmsg_field *f, const struct kmsg_record *rec,
			  size_t size, size_t *pos);
#define kmsg_field_next(f, rec, pos) \
	kmsg_field_next_sized((f), (rec), sizeof(struct kmsg_record), (pos))

/*
 * Returns 1 if key (len bytes) follows the key rule, else 0.  Keys that
 * begin with _ are not in it: as in journald, they are kept for what the
 * kernel vouches for (_PID, _UID, _GID of a socket's sender), which only
 * a trusted ingester records (an entry with KMSG_VOUCHED), so that no
 * writer's field takes their name.  kmsg_field_next() returns both kinds.
 */
int kmsg_key_valid(const char *key, size_t len);

/*
 * Returns 1 if a record may hold key (len bytes): one of the key rule, or
 * _ before one (what an entry with KMSG_VOUCHED records); else 0.  For
 * programs that name fields to read, such as a list of fields to show.
 */
int kmsg_key_stored_valid(const char *key, size_t len);

struct kmsg_reader;

/* Flags of kmsg_reader_new(). */
enum {
	KMSG_READER_JOIN  = 1 << 0, /* return whole lines: fragments are joined
	                               per caller (see kmsg_reader_next) */
	KMSG_READER_ORDER = 1 << 1, /* with JOIN: return lines in the order they
	                               began, not the order they were completed */
};

/*
 * A new reader of log, positioned at the oldest stored record.  A joining
 * reader holds at most 64 callers' open lines and, with KMSG_READER_ORDER,
 * at most 4096 lines or 1 MiB of text and fields held back behind an open
 * line; past either bound the oldest open line is returned as it is
 * (KMSG_PARTIAL), so memory stays bounded whatever the log holds.  A
 * reader 64 KiB or more behind the end (and 256 KiB or more ahead of the
 * oldest record) copies the records ahead of it with pread(2), 256 KiB at
 * a time, in two buffers of that size; freed, it leaves them to the log
 * handle for its next reader, and kmsg_log_close() frees them.  It reads
 * through the mapping elsewhere.
 */
int kmsg_reader_new(struct kmsg_reader **out, struct kmsg_log *log,
		    unsigned flags);
void kmsg_reader_free(struct kmsg_reader *r);

enum kmsg_whence {
	KMSG_SEEK_OLDEST,  /* the oldest stored record */
	KMSG_SEEK_CLEARED, /* the oldest record not cleared */
	KMSG_SEEK_END,     /* after the newest record: only new ones follow */
};

/*
 * Moves the reader; pending fragments of a joining reader are dropped.
 * After any seek the reader knows the number of the record it expects
 * first, so writers that overtake it before its first read show as lost
 * records on the first record it returns.
 */
int kmsg_reader_seek(struct kmsg_reader *r, enum kmsg_whence whence);

/*
 * Moves the reader to the first stored record whose sequence number is
 * >= seq (the oldest one if seq is older, the end if it is newer).  The
 * reader expects seq itself: records from seq on that are gone when it
 * reads (evicted, damaged) are reported as lost on the first record, so a
 * position kept from an earlier read (a consumer's) never hides a loss.
 * KMSG_SEEK_CLEARED and the other seeks expect the record they land on.
 */
int kmsg_reader_seek_seq(struct kmsg_reader *r, uint64_t seq);

/*
 * Moves the reader to the first stored record written at or after real_ns
 * (CLOCK_REALTIME), and makes it step over the records before that one
 * whose time is earlier.  No record at or after real_ns is passed over,
 * also where times go back (a wall clock stepped back, a writer stopped
 * between reading the clock and appending, records given their own
 * times): writers note where their times leave order, and the seek reads
 * every record up to that point and bisects the rest, in O(log n) record
 * reads (kmsg(5), Timestamps).  Records after the first one returned are
 * in log order, so where times went back some are earlier than real_ns:
 * a caller that wants only later ones compares each record's real_ns.
 */
int kmsg_reader_seek_time(struct kmsg_reader *r, int64_t real_ns);

/*
 * Returns the next record: 1 and *rec filled, 0 if there is none yet, or a
 * negative code.  A reader overtaken by writers continues at the oldest
 * record and reports how many it lost in rec->lost; damaged records are
 * skipped and counted in rec->damaged.  Records missing where no record
 * follows them (the end of a log cut short, or damaged at its end) are
 * returned as a record flagged KMSG_GAP: no text, no fields, seq the
 * number the next record will have, the count in lost or damaged.  Every
 * gap is reported once, in one of these two ways.  An append whose writer
 * died or was passed over before finishing counts as lost; where every
 * number of a gap is such an append, the record says so (KMSG_UNFINISHED).
 * KMSG_ECHANGED if the file was written over with another log since it
 * was opened, or if it was opened cut short (its missing end read as
 * zeros) and a writer has restored its size since: open it again to read
 * what that writer wrote there (kmsg_log_file_changed() tells which).
 *
 * Never sleeps for new records.  At an append still in progress with
 * records after it, it waits for that append (microseconds), and for a
 * writer stopped in the middle of one at most the bound in kmsg(5) (a
 * handle opened for reading only: one second); then a handle that may
 * write passes it over as writers do, and one that may not steps over it
 * as lost.  Only that passing over stores to the log; a handle opened for
 * reading only never writes.
 *
 * A joining reader holds back fragments until their caller's line is
 * complete (see KMSG_FRAGMENT and KMSG_BEGIN) and returns the joined line,
 * with the sequence number and times of its first fragment; a line never
 * mixes two callers' text, and a line of more than 65535 bytes of text or
 * of fields is returned in parts marked KMSG_PARTIAL (so a joining reader
 * holds at most that much per caller).  Without KMSG_READER_ORDER lines come as
 * they are completed (what a live follower wants); with it, in the order
 * they began, other records waiting behind an open line.  Use
 * kmsg_reader_flush() to have incomplete lines returned too.
 */
int kmsg_reader_next_sized(struct kmsg_reader *r, struct kmsg_record *rec, size_t size);
#define kmsg_reader_next(r, rec) \
	kmsg_reader_next_sized((r), (rec), sizeof(struct kmsg_record))

/*
 * For a joining reader: from now on kmsg_reader_next() also returns the
 * pending incomplete lines whose first fragment was written before
 * older_than_real_ns (INT64_MAX: all of them), marked KMSG_PARTIAL.
 */
void kmsg_reader_flush(struct kmsg_reader *r, int64_t older_than_real_ns);

/*
 * The lowest sequence number the reader has not returned yet: every record
 * below it was returned (alone or as part of a line), none from it on.
 * For a joining reader this is the first fragment of the oldest line still
 * open, or of a line held back behind it; kmsg_log_clear() with it clears
 * exactly what was returned.
 */
uint64_t kmsg_reader_position(const struct kmsg_reader *r);

/*
 * Blocks until a record newer than the reader's position exists, or
 * timeout_ms passes (-1: no limit).  Returns 1 when there is something to
 * read, 0 on timeout, -EINTR if a signal arrived.  Writers wake waiters
 * through a futex in the shared mapping, so the wake-up takes microseconds.
 * On a log cut short under the mapping (kmsg_log_file_changed() says
 * KMSG_FILE_RESIZED) no writer can wake it: it then looks every 100 ms
 * instead of sleeping, and the caller should open the log again.  On a
 * log whose header was damaged when it was opened (the reader reads a
 * copy of its own, which shows no record written since), a writer's wake
 * returns 1: that writer has repaired the header, which
 * kmsg_log_file_changed() then says (KMSG_FILE_REPAIRED).
 */
int kmsg_reader_wait(struct kmsg_reader *r, int timeout_ms);

/* ------------------------------------------------------------------ */
/* Positions kept across runs (a consumer's cursor)                    */

/*
 * Where a reader was: every record of the log below next was read.  Take
 * ring_id from kmsg_log_stat(), next from kmsg_reader_position() and
 * seq_id from the last record read (rec.seq_id): the identity the numbers
 * were read under, which a renewal since may have replaced; and, when the
 * last record read was numbered next - 1 (not a line joined from parts,
 * whose number is its first part's), its real_ns as last_real_ns.
 */
struct kmsg_position {
	uint8_t ring_id[16];    /* kmsg_stat.ring_id of the log */
	uint64_t seq_id;        /* the numbering next is of */
	uint64_t next;          /* the first number not read */
	int64_t last_real_ns;   /* the time of record next - 1; 0: unknown */
};

/* What kmsg_log_position_resolve() finds. */
enum {
	KMSG_POSITION_SAME       = 0, /* the numbers below next name the
	                                 records that were read */
	KMSG_POSITION_RENUMBERED = 1, /* some of them were handed out again
	                                 (a power cut, a rebuild, a restored
	                                 copy): records read may be lost and
	                                 others never read bear their numbers */
};

/*
 * Where pos is in log now, as kmsg(5) ("The numbering's identity")
 * resolves a kept position: stores in *next the number to go on reading
 * at (for kmsg_reader_seek_seq()) and returns KMSG_POSITION_SAME (*next
 * is pos->next) or KMSG_POSITION_RENUMBERED: *next is then the first
 * number not certainly read: where the numbering began again after pos's
 * identity, or the oldest stored record when log no longer knows that
 * identity (renewed more than twice since: each boot renews it) or when
 * pos lies past the log's end (an older copy of the log put back); records
 * from there on may have been read before.  With last_real_ns, the record
 * now numbered next - 1 decides where it can: the same time, the same
 * numbering (SAME, whatever the identities say); another time, another
 * numbering.  Without it, or with that record gone, a copy put back within
 * one boot goes unnoticed once its writers have handed out pos's numbers
 * again.  KMSG_EOTHERLOG if pos is of
 * another log, KMSG_EINVAL for a NULL argument.  Records below *next that
 * were evicted meanwhile are the reader's to report: kmsg_reader_seek_seq()
 * counts them as lost on the first record.  Reads the header, and with
 * last_real_ns the record numbered next - 1.
 */
int kmsg_log_position_resolve(uint64_t *next, struct kmsg_log *log,
			      const struct kmsg_position *pos);

/* ------------------------------------------------------------------ */
/* Priorities                                                          */

/*
 * Facility and level names as syslog(3), logger(1) and dmesg(1) spell them:
 * facilities kern user mail daemon auth syslog lpr news uucp cron authpriv
 * ftp res0..res3 (12..15) local0..local7; levels emerg alert crit err warning
 * notice info debug.  The *_name functions return NULL out of range.
 */
const char *kmsg_facility_name(unsigned facility);
const char *kmsg_level_name(unsigned level);

/*
 * Parses one facility or level: a name (case-insensitive, with logger's
 * synonyms: security = auth, panic = emerg, error = err, warn = warning)
 * or a decimal number in range.  Returns the value or KMSG_EPRIO.
 */
int kmsg_facility_parse(const char *s, size_t len);
int kmsg_level_parse(const char *s, size_t len);

/*
 * Parses a priority as logger -p takes it: "facility.level", or "level"
 * alone (facility user), or a number N = facility * 8 + level.  Stores the
 * parts and returns 0, or KMSG_EPRIO naming nothing written.  kern is
 * returned as 0; whether to accept it is the caller's choice.
 */
int kmsg_prio_parse(int *facility, int *level, const char *s);

/*
 * If text starts with a "<N>" prefix (N decimal, 0..191), stores its
 * facility and level, returns the prefix length; returns 0 when there is
 * no valid prefix (the text is then a message of its own).
 */
size_t kmsg_prio_prefix(int *facility, int *level, const char *text,
			size_t len);

/* ------------------------------------------------------------------ */
/* Rendering records as text (dmesg's formats)                         */

enum kmsg_time_format {
	KMSG_TIME_MONO,    /* [%5ld.%06ld] seconds since boot (dmesg default) */
	KMSG_TIME_RELTIME, /* Linus's mixed absolute/relative format (-e) */
	KMSG_TIME_CTIME,   /* [Sun May 12 11:27:01 2024] (-T) */
	KMSG_TIME_DELTA,   /* [<    5.077527>] (--time-format delta, -t -d) */
	KMSG_TIME_NOTIME,  /* nothing (-t) */
	KMSG_TIME_ISO,     /* 2024-05-12T11:27:01,234567+00:00 */
	KMSG_TIME_RAW,     /* -r: <N>[%5ld.%06ld] */
	/* journalctl's short outputs (the line's time, no host; they came
	 * after KMSG_FMT_OPTS_VERSION 1 and an older library refuses them) */
	KMSG_TIME_SHORT_ISO,         /* 2024-05-12T11:27:01+02:00 */
	KMSG_TIME_SHORT_ISO_PRECISE, /* 2024-05-12T11:27:01.234567+02:00 */
	KMSG_TIME_SHORT_PRECISE,     /* May 12 11:27:01.234567 */
	KMSG_TIME_SHORT_UNIX,        /* 1715505421.234567 */
};

/* In kmsg_fmt_opts.times: MONO or CTIME with " <delta>" inside its
 * brackets, as KMSG_FMT_SHOWDELTA makes the first time column. */
#define KMSG_TIME_WITH_DELTA 0x100u

enum kmsg_output {
	KMSG_OUT_SHORT, /* dmesg's text lines */
	KMSG_OUT_JSON,  /* {"dmesg":[{"pri":N,"time":T,"msg":"..."},...]} */
	KMSG_OUT_KMSG,  /* /dev/kmsg: prio,seq,ts_usec,flags;text + " K=V" */
	KMSG_OUT_JSON_LINE,   /* one JSON object per record, on one line */
	KMSG_OUT_JSON_PRETTY, /* the same object, one member a line */
	KMSG_OUT_JSON_SEQ,    /* RFC 7464: 0x1E, the one-line object, LF */
	KMSG_OUT_EXPORT,      /* the Journal Export Format (journalctl -o
	                         export), an entry a record: see kmsg(1) */
};

/*
 * The record objects of KMSG_OUT_JSON_LINE, _PRETTY and _SEQ (journalctl's
 * -o json, json-pretty and json-seq) hold every member a record has, under
 * lower-case names no field key can take (keys begin with a capital):
 *
 *   seq            the sequence number
 *   seq_id         the numbering's identity, 16 hexadecimal digits
 *   time_ns        wall-clock time (CLOCK_REALTIME), ns since the epoch
 *   time           the same as ISO 8601 in UTC with nanoseconds,
 *                  "2024-05-12T11:27:01.123456789Z" (exact where a parser
 *                  rounds time_ns, which is above 2^53, to a double)
 *   boot_ns        since-boot time (CLOCK_BOOTTIME), ns
 *   boot_id        the first 8 bytes of the boot id, 16 hexadecimal digits
 *   claimed_pid    the pid the writer gave (see struct kmsg_entry), a
 *                  number; --output-fields takes its old name pid too
 *   caller         the caller id the writer gave, a number
 *   facility, facility_name, level, level_name
 *                  numbers and names ("user", "warning")
 *   text           the message
 *
 * then each field under its own key, in the order of the keys (a key
 * given more than once has an array of its values, in the record's
 * order).  A member the record lacks is null: seq_id, boot_id, claimed_pid
 * and caller when 0 (but the kernel's caller 0, KMSG_KERNEL_CALLER's "T0"),
 * facility and level for text that named no priority.
 * Text and field values that are valid UTF-8 are JSON strings (controls,
 * DEL, C1 and bidi controls and the invisible characters kmsg(1) lists as
 * \uXXXX unless KMSG_FMT_NOESCAPE); any
 * other is an array of its byte values, as journalctl shows binary data.
 * Records end in a newline; kmsg_fmt_end() adds nothing.
 */

enum {
	KMSG_FMT_DECODE   = 1 << 0, /* -x: "%-6s:%-6s: " facility:level */
	KMSG_FMT_SHOWDELTA= 1 << 1, /* -d: add <delta> to MONO and NOTIME */
	KMSG_FMT_COLOR    = 1 << 2, /* dmesg's colours */
	KMSG_FMT_NOESCAPE = 1 << 3, /* pass text bytes through unescaped */
	KMSG_FMT_FIELDS   = 1 << 4, /* short output: fields on lines below */
	KMSG_FMT_ASCII    = 1 << 5, /* short output: every byte >= 0x80 as \xNN,
	                               for a terminal whose charset is not
	                               UTF-8 (JSON stays UTF-8) */
	KMSG_FMT_CALLER   = 1 << 6, /* who wrote the record, as dmesg 2.40
	                               shows the kernel's caller (see
	                               kmsg_fmt_caller()): short output
	                               "[  T123] " after the time, dmesg's
	                               JSON "caller": "T123" after "time",
	                               /dev/kmsg ",caller=T123" after flags;
	                               a record with KMSG_KERNEL_CALLER shows
	                               its caller without it, as dmesg 2.40
	                               and later do */
	KMSG_FMT_PID      = 1 << 7, /* the pid the writer gave: short output
	                               "[  P456] " after the caller, dmesg's
	                               JSON "claimed_pid": 456 after it */
	KMSG_FMT_FORCE_PREFIX = 1 << 8, /* short output: each line of a text
	                               with newlines gets the prefix (dmesg -p);
	                               empty lines are left out */
	KMSG_FMT_NO_TAIL_INDENT = 1 << 9, /* short output: no indent after a
	                               newline that ends a text, as dmesg
	                               prints the kernel's records (dmesg -F
	                               indents it, and so does kmsg without it) */
	KMSG_FMT_UTC      = 1 << 10, /* wall-clock times in UTC, not the local
	                               time zone (journalctl --utc) */
};

/*
 * The parts of the short output KMSG_FMT_COLOR colours, by dmesg's names
 * for them in terminal-colors.d(5) scheme files: the time, the time of
 * -H's first line of a minute or after a pause ("timebreak"), the
 * subsystem prefix ("usb 1-1: "), the text of an alert, crit, err or warn
 * record, and a "segfault at" in a record of another level.  A record of
 * level emerg, notice, info or debug has no colour, as in dmesg.
 */
enum kmsg_color {
	KMSG_COLOR_SUBSYS, KMSG_COLOR_TIME, KMSG_COLOR_TIMEBREAK,
	KMSG_COLOR_ALERT, KMSG_COLOR_CRIT, KMSG_COLOR_ERR, KMSG_COLOR_WARN,
	KMSG_COLOR_SEGFAULT,
	KMSG_COLOR_COUNT
};

/* The longest sequence kmsg_fmt_opts.colors may hold, NUL not counted. */
#define KMSG_FMT_COLOR_MAX 256

/*
 * Version 2 added colors, version 3 caller_width, version 4 ntimes and
 * times; a program built with an older struct (which ends before them)
 * still passes its version and gets dmesg's colours, caller_width 0 and
 * one time column.
 */
#define KMSG_FMT_OPTS_VERSION 4
struct kmsg_fmt_opts {
	unsigned version;              /* KMSG_FMT_OPTS_VERSION */
	enum kmsg_output output;
	enum kmsg_time_format time;
	unsigned flags;                /* KMSG_FMT_* */
	/* since version 2: the sequence that starts each part's colour
	 * (indexed by enum kmsg_color; "\033[0m" ends it); NULL for dmesg's
	 * own, "" for none.  kmsg_fmt_new() copies them. */
	const char *colors[KMSG_COLOR_COUNT];
	/* since version 3: KMSG_FMT_CALLER and KMSG_FMT_PID in the short
	 * output are "[%*s] ", the name right-aligned in this many columns,
	 * at most 16 (0: 5, dmesg -F's width) */
	unsigned caller_width;
	/* since version 4: more time columns of the short output after the
	 * one of time, in this order, as dmesg 2.40 and later print several
	 * time formats given together: times[0..ntimes-1] (ntimes at most
	 * KMSG_FMT_TIMES_MAX), each a KMSG_TIME_* but RAW, or'ed with
	 * KMSG_TIME_WITH_DELTA for MONO and CTIME.  Every column of a line
	 * shows the same delta. */
	unsigned ntimes;
	unsigned times[7];
};
#define KMSG_FMT_TIMES_MAX 7
#define KMSG_FMT_OPTS_INIT \
	{ KMSG_FMT_OPTS_VERSION, KMSG_OUT_SHORT, KMSG_TIME_MONO, 0, { NULL }, 0, 0, { 0 } }

/*
 * The caller of rec as KMSG_FMT_CALLER shows it, written into buf (size
 * bytes, 12 are always enough) with a NUL: "T<id>" for a thread id, which
 * is what records of this machine's initial pid namespace carry (kmsg
 * emit's: the shell that ran it); "C<n>" for a CPU number, as the kernel's
 * text shows it (KMSG_KERNEL_CALLER); for a writer in another pid
 * namespace, whose caller is a number made from its thread id there and
 * the namespace, which names nobody here: "P<pid>", its process id in
 * that namespace.  Returns the length, 0 (buf "") for a record that
 * carries no caller, or KMSG_EINVAL (buf too small).
 */
int kmsg_fmt_caller_sized(char *buf, size_t size, const struct kmsg_record *rec,
			  size_t rec_size);
#define kmsg_fmt_caller(buf, size, rec) \
	kmsg_fmt_caller_sized((buf), (size), (rec), sizeof(struct kmsg_record))

/*
 * A wall-clock time (real_ns, CLOCK_REALTIME nanoseconds) alone, as the
 * records show it in the time format tf: KMSG_TIME_CTIME ("Sun May 12
 * 11:27:01 2024"), KMSG_TIME_ISO ("2024-05-12T11:27:01,234567+02:00"),
 * KMSG_TIME_SHORT_ISO ("2024-05-12T11:27:01+02:00"),
 * KMSG_TIME_SHORT_ISO_PRECISE, KMSG_TIME_SHORT_PRECISE ("May 12
 * 11:27:01.234567") or KMSG_TIME_SHORT_UNIX ("1715505221.234567", not
 * padded); in the local time zone, or in UTC with flags KMSG_FMT_UTC (the
 * one flag it takes).  Written into buf (size bytes, 48 are always
 * enough) with a NUL.  Returns the length, or KMSG_EINVAL for another
 * format or flag, or buf too small.
 */
int kmsg_fmt_time(char *buf, size_t size, int64_t real_ns, enum kmsg_time_format tf,
		  unsigned flags);

struct kmsg_fmt;

/*
 * A renderer; it keeps the state deltas and reltime need between records.
 * opts NULL: the defaults.  Returns 0, -ENOMEM, or KMSG_EINVAL for an
 * unknown version, output, time format or flag, or a colour sequence
 * longer than KMSG_FMT_COLOR_MAX.
 */
int kmsg_fmt_new(struct kmsg_fmt **out, const struct kmsg_fmt_opts *opts);
void kmsg_fmt_free(struct kmsg_fmt *f);

/*
 * Renders one record, newline included, into the renderer's buffer: *out
 * points at it until the next call.  Returns the length, -ENOMEM,
 * KMSG_EINVAL (bad arguments) or KMSG_ECORRUPT (malformed fields).
 * Times are taken from the record: boot_ns for since-boot times and deltas,
 * real_ns for reltime, ctime and iso (local time zone, as localtime(3)).
 * KMSG_FMT_SHOWDELTA applies to MONO, NOTIME and CTIME (dmesg -T -d) and
 * is ignored by RELTIME, ISO and RAW; RAW ignores DECODE and the time
 * columns of times; NOTIME with more columns is none of its own; deltas
 * are the time since the record rendered before, and 0
 * after a record at since-boot time 0, as in dmesg; the /dev/kmsg
 * output ignores the time format and NOESCAPE.  Non-printable bytes and
 * invalid UTF-8 are written as \xNN unless KMSG_FMT_NOESCAPE.  dmesg's
 * JSON (KMSG_OUT_JSON) always uses since-boot time, as dmesg does; its
 * first call also emits the opening, each record's closing brace comes
 * with the next record or with kmsg_fmt_end(), so every chunk ends in a
 * newline.  The JSON record objects ignore the time format and every flag
 * but NOESCAPE.
 */
int kmsg_fmt_record_sized(const char **out, struct kmsg_fmt *f,
			  const struct kmsg_record *rec, size_t size);
#define kmsg_fmt_record(out, f, rec) \
	kmsg_fmt_record_sized((out), (f), (rec), sizeof(struct kmsg_record))
int kmsg_fmt_end(const char **out, struct kmsg_fmt *f);

/*
 * A record not shown (left out by a filter) that the deltas after it still
 * count from, as dmesg 2.41 and later count them: the next record's delta
 * is the time since rec.  Returns 0, or KMSG_EINVAL for NULL arguments.
 */
int kmsg_fmt_skip(struct kmsg_fmt *f, const struct kmsg_record *rec);

/*
 * Limits the members and fields of the JSON record objects to keys, a
 * comma-separated list of member names (see KMSG_OUT_JSON_LINE) and field
 * keys, in any order; NULL shows every one again.  The list is copied.
 * Returns 0, -ENOMEM, or KMSG_EINVAL (the renderer left as it was) for an
 * empty list, an empty item, or an item that is neither a member name nor
 * a valid field key.  Other outputs ignore it.
 */
int kmsg_fmt_set_keys(struct kmsg_fmt *f, const char *keys);

/*
 * The room kmsg_text_escape() needs for len bytes of text: four bytes for
 * each (\xNN), and the NUL.
 */
#define KMSG_TEXT_ESCAPE_SIZE(len) (4 * (size_t)(len) + 1)

/*
 * Writes text (len bytes, NULs allowed) as the short output prints a
 * record's text, as dmesg does, into buf and ends it with a NUL; buf holds
 * size bytes, at least KMSG_TEXT_ESCAPE_SIZE(len).  Printable ASCII, tab,
 * newline and printable UTF-8 stay as they are; every other byte (controls,
 * DEL, bytes that are not valid UTF-8, C1 and bidi controls, and the
 * invisible and line-breaking characters kmsg(1) lists) becomes \xNN.
 * flags: KMSG_FMT_ASCII (a terminal whose character set is not UTF-8:
 * every byte from 0x80 up as \xNN too) or KMSG_FMT_NOESCAPE (the bytes as
 * they are), or 0.  Newlines are not indented.  Returns the length
 * written, NUL not counted, or KMSG_EINVAL (bad arguments, buf too small,
 * or text of more than about 500 MB, whose escaped length would not fit
 * an int).
 */
int kmsg_text_escape(char *buf, size_t size, const char *text, size_t len,
		     unsigned flags);

/*
 * The room kmsg_json_escape() needs for len bytes of text: six bytes for
 * each, and the NUL.
 */
#define KMSG_JSON_ESCAPE_SIZE(len) (6 * (size_t)(len) + 1)

/*
 * Writes text (len bytes, NULs allowed) as the inside of a JSON string,
 * without the quotes, into buf and ends it with a NUL; buf holds size
 * bytes, at least KMSG_JSON_ESCAPE_SIZE(len).  The result is valid JSON
 * for any bytes, escaped as the JSON output of kmsg_fmt_record() escapes a
 * message: '"', '\\' and controls as JSON requires; DEL, C1 and bidi
 * controls, the invisible characters kmsg(1) lists and noncharacters as
 * \uXXXX (unless flags is
 * KMSG_FMT_NOESCAPE); each byte that is not part of valid UTF-8 as the
 * text \xNN (the JSON characters "\\xNN").  flags is 0 or
 * KMSG_FMT_NOESCAPE.  Returns the length written, NUL not counted, or
 * KMSG_EINVAL (bad arguments, buf too small, or text of more than about
 * 350 MB, whose escaped length would not fit an int).
 */
int kmsg_json_escape(char *buf, size_t size, const char *text, size_t len,
		     unsigned flags);

/*
 * Parses one record of dmesg raw text ("<N>[ seconds.fraction] text", as
 * dmesg -r prints; the "<N>" and the time are each optional; the fraction
 * is a decimal fraction) into *rec, whose text points into line.  The
 * "<N>" is read as dmesg reads it: N's facility beyond local7, or no
 * valid "<N>" at all, leaves the record's facility (and without a number,
 * its level) KMSG_PRIO_NONE; the renderer then prints no priority for it
 * and dmesg's level and facility filters leave it out.  A record without
 * a time is at time 0.  boot_ns is the time given, real_ns is
 * boot_real_ns + boot_ns: pass the machine's boot time as dmesg -F
 * computes it (kmsg_dmesg_boot_time()) to match its output.  The caller
 * column dmesg 2.40 and later print after the time ("[  T123] " or
 * "[    C3] ") is taken out of the text into caller, with the flag
 * KMSG_KERNEL_CALLER.  Returns 1 for a record, 0 for a line that holds
 * none (empty), or KMSG_EINVAL.
 */
#define kmsg_dmesg_parse(rec, line, len, boot_real_ns) \
	kmsg_dmesg_parse_sized((rec), sizeof(struct kmsg_record), (line), (len), (boot_real_ns), 0)

#define KMSG_PRIO_NONE 0xffu /* facility or level of text that named none */

/* Flags of kmsg_dmesg_parse_flags(). */
enum {
	KMSG_DMESG_SKIP_PRIO = 1 << 0, /* drop "<...>" unread, as dmesg does
	                                  when it prints no priority: no -x,
	                                  -r, colour, JSON or level/facility
	                                  filter (priority then NONE) */
};

/* kmsg_dmesg_parse() with flags; 0 is kmsg_dmesg_parse(). */
int kmsg_dmesg_parse_sized(struct kmsg_record *rec, size_t size, const char *line,
			   size_t len, int64_t boot_real_ns, unsigned flags);
#define kmsg_dmesg_parse_flags(rec, line, len, boot_real_ns, flags) \
	kmsg_dmesg_parse_sized((rec), sizeof(struct kmsg_record), (line), (len), (boot_real_ns), (flags))

/*
 * Stores in *real_ns the machine's boot time (wall clock, ns since the
 * epoch) as dmesg -F and -K compute it to turn since-boot seconds into
 * dates: to the microsecond (util-linux 2.39 and later; 2.38 dropped the
 * microseconds), and moved on by the time the machine spent suspended.
 * Passed to kmsg_dmesg_parse(), it makes -T, reltime and iso print what
 * dmesg -F prints for the same text.  Returns 0, KMSG_EINVAL for a NULL
 * argument, or -errno if a clock cannot be read.
 */
int kmsg_dmesg_boot_time(int64_t *real_ns);

/*
 * Reading the /dev/kmsg record format: the kernel's (cat /dev/kmsg), and
 * what kmsg_fmt_record() writes for KMSG_OUT_KMSG, whose " _KEY=VALUE"
 * lines (_SEQNUM_ID, _REALTIME_NS, _BOOTTIME_NS, _BOOT_ID, _PID, _CALLER) give
 * back what a record of a log has beyond the kernel's format, so that
 * those records read back print as the log does.  A record is a header
 * line "PRIO,SEQ,USEC,FLAGS[,caller=T<id>][,...];TEXT" and the " KEY=VALUE"
 * lines after it, \xHH escapes undone.  A record without _REALTIME_NS
 * (the kernel's) is at boot_real_ns plus its time since boot, as dmesg -K
 * dates it (kmsg_dmesg_boot_time()).
 */
struct kmsg_devkmsg;

/* A parser; 0, -ENOMEM or KMSG_EINVAL.  Free it with kmsg_devkmsg_free(). */
int kmsg_devkmsg_new(struct kmsg_devkmsg **out, int64_t boot_real_ns);
void kmsg_devkmsg_free(struct kmsg_devkmsg *p);

/*
 * Feeds one line (len bytes, its newline optional; an empty line is
 * passed over).  A record is complete when the line after it comes, so
 * the call returns 1 and fills *rec with the record this line ended, 0
 * when it ended none, or -ENOMEM or KMSG_EINVAL.  *rec points into the
 * parser and stays valid until the next call.  A line that begins with
 * NULs ends the record before it, as the NUL after each record of dmesg
 * -K's files does: from then on every line up to the next such line is
 * part of the record before, a header needs no newline before it and
 * blanks before it are passed over.  FLAGS may be left out ("6,1,2;x"),
 * as dmesg reads it.  A line after a header that begins with a space is
 * its dictionary: one that is no valid field is left out quietly.  Any
 * other line that is not of the format is skipped, and with a header the
 * field lines after it: kmsg_devkmsg_skipped() then says why.  Memory stays bounded
 * by the longest line and 1 MiB of fields per record (a field past that
 * is skipped).
 */
int kmsg_devkmsg_feed_sized(struct kmsg_record *rec, size_t size, struct kmsg_devkmsg *p,
			    const char *line, size_t len);
#define kmsg_devkmsg_feed(rec, p, line, len) \
	kmsg_devkmsg_feed_sized((rec), sizeof(struct kmsg_record), (p), (line), (len))

/* At the end of the input: 1 and the last record in *rec, or 0. */
int kmsg_devkmsg_end_sized(struct kmsg_record *rec, size_t size, struct kmsg_devkmsg *p);
#define kmsg_devkmsg_end(rec, p) \
	kmsg_devkmsg_end_sized((rec), sizeof(struct kmsg_record), (p))

/*
 * Why the line given to the last kmsg_devkmsg_feed() was skipped, in
 * words ("no priority (0 to 191) where a record begins"), or NULL if it
 * was not.  A static string.
 */
const char *kmsg_devkmsg_skipped(const struct kmsg_devkmsg *p);

/* ------------------------------------------------------------------ */
/* Appending printf's way                                              */

/*
 * kmsg_log_print() with the text made by vsnprintf(3) from fmt: one
 * complete line at facility and level, now.  One newline that ends the
 * text is dropped, as syslog daemons drop the one syslog(3) callers
 * habitually end with.  The text is formatted on the stack, or, past
 * 1 KiB, into memory allocated for the call; text longer than the log's
 * maximum is refused with KMSG_ETOOLONG and nothing is written, as
 * kmsg_log_print() refuses it (no truncation).  errno is as it was on
 * entry when the call returns, whatever it returns, so that "%m" (which
 * glibc's printf expands to strerror(errno)) and the caller's own errno
 * survive the call, as with syslog(3).  Returns 0 or what
 * kmsg_log_append() returns; -ENOMEM, or KMSG_EINVAL for a NULL argument
 * or a format vsnprintf() refuses.  Thread-safe as kmsg_log_append() is.
 */
int kmsg_log_printf(struct kmsg_log *log, int facility, int level,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
int kmsg_log_vprintf(struct kmsg_log *log, int facility, int level,
		     const char *fmt, va_list ap) __attribute__((format(printf, 4, 0)));

/*
 * Appends text (a string, used as it is: no format) with fields given as
 * sd_journal_send(3) gives them, "KEY=value" strings, and a NULL after the
 * last: kmsg_log_send(log, 1, 6, "disk full", "DEVICE=sda", "UNIT=x",
 * NULL).  The key is what comes before the first '=' and must follow the
 * key rule (kmsg_key_valid()); the value is the rest, possibly empty.  A
 * string without '=', or with an invalid key, is KMSG_EFIELD and nothing
 * is written; otherwise as kmsg_log_append() (fields too big together:
 * KMSG_EFIELD; text too long: KMSG_ETOOLONG).  errno is kept as
 * kmsg_log_printf() keeps it.
 */
int kmsg_log_send(struct kmsg_log *log, int facility, int level,
		  const char *text, ...) __attribute__((sentinel));

/* kmsg_log_send() with the n "KEY=value" strings in fields[0..n). */
int kmsg_log_sendv(struct kmsg_log *log, int facility, int level,
		   const char *text, const char *const *fields, size_t n);

/* ------------------------------------------------------------------ */
/* Syslog's wire formats: RFC 3164, RFC 5424, RFC 6587 framing         */

/* What kmsg_syslog_parse() recognised (kmsg_syslog_msg.format). */
enum kmsg_syslog_format {
	KMSG_SYSLOG_RAW  = 0, /* neither: text is all the input after the
	                         PRI (all of it without a valid PRI) */
	KMSG_SYSLOG_3164 = 1, /* BSD syslog, as syslog(3) and logger send it */
	KMSG_SYSLOG_5424 = 2, /* "<PRI>1 TIMESTAMP HOST APP PROCID MSGID SD" */
};

/* kmsg_syslog_msg.flags */
enum {
	KMSG_SYSLOG_HAS_PRI  = 1 << 0, /* a valid "<PRI>" began the input */
	KMSG_SYSLOG_HAS_TIME = 1 << 1, /* real_ns is the message's own time */
	KMSG_SYSLOG_HAS_ZONE = 1 << 2, /* the time named its offset (RFC 5424);
	                                  an RFC 3164 time was placed by the
	                                  caller's rule (kmsg_syslog_parse_opts) */
	KMSG_SYSLOG_BOM      = 1 << 3, /* an RFC 5424 MSG began with the UTF-8
	                                  BOM, which text leaves out */
	KMSG_SYSLOG_BAD_SD   = 1 << 4, /* an RFC 5424 header whose
	                                  STRUCTURED-DATA is malformed or
	                                  missing: kept whole as RAW text */
	KMSG_SYSLOG_HAS_YEAR = 1 << 5, /* an RFC 3164 time with a year after it
	                                  ("Dec  5 15:08:24 2025 "), taken as is */
};

/*
 * One message as kmsg_syslog_parse() reads it.  Every pointer points into
 * the caller's buffer (nothing is allocated or copied) and is NULL when
 * the part is absent or RFC 5424's nil "-"; lengths are in bytes; no part
 * is NUL-terminated.
 */
struct kmsg_syslog_msg {
	int format;             /* enum kmsg_syslog_format */
	unsigned flags;         /* KMSG_SYSLOG_HAS_PRI, ... */
	int facility;           /* 0..23: the PRI's, else the default */
	int level;              /* 0..7 */
	int64_t real_ns;        /* with KMSG_SYSLOG_HAS_TIME, ns since the epoch */
	int32_t utc_offset;     /* seconds east of UTC the time was written in */
	const char *hostname;   size_t hostname_len;
	const char *app;        size_t app_len;    /* APP-NAME, or 3164's TAG */
	const char *procid;     size_t procid_len; /* PROCID, or TAG's [PID] */
	uint32_t pid;           /* procid when decimal 1..2^31-1, else 0 */
	const char *msgid;      size_t msgid_len;
	const char *sd;         size_t sd_len;     /* the raw "[...]..." span,
	                                              for kmsg_syslog_sd_next() */
	const char *text;       size_t text_len;   /* the MSG */
};

/* Time zones of kmsg_syslog_parse_opts.tz. */
enum {
	KMSG_SYSLOG_TZ_LOCAL  = 0, /* the local time zone, as localtime(3) */
	KMSG_SYSLOG_TZ_OFFSET = 1, /* utc_offset seconds east of UTC */
};

#define KMSG_SYSLOG_PARSE_OPTS_VERSION 1
struct kmsg_syslog_parse_opts {
	unsigned version;         /* KMSG_SYSLOG_PARSE_OPTS_VERSION */
	/* The receive time (CLOCK_REALTIME ns) that gives an RFC 3164 time
	 * its year; 0: the clock when called. */
	int64_t now_ns;
	int tz;                   /* KMSG_SYSLOG_TZ_*: where RFC 3164 times are */
	int32_t utc_offset;       /* with KMSG_SYSLOG_TZ_OFFSET */
	int facility, level;      /* for a message without PRI: user.notice */
};
#define KMSG_SYSLOG_PARSE_OPTS_INIT \
	{ KMSG_SYSLOG_PARSE_OPTS_VERSION, 0, KMSG_SYSLOG_TZ_LOCAL, 0, 1, 5 }

/*
 * Parses one syslog message of len bytes at buf (not NUL-terminated; no
 * byte past len is read) into *m, as a listener on /dev/log or a network
 * socket gets it: RFC 5424, RFC 3164 in the forms syslog(3), logger(1),
 * Python and Go send, or anything else as text.  libkmsg(3) says how
 * ambiguous input is decided.  One NUL or LF that ends the input is not
 * part of the text.  A "<PRI>" of 1 to 3 digits without leading zeros, at
 * most 191, gives facility and level; anything else that begins with '<'
 * is no PRI, and the whole input is RAW text; a message without PRI gets
 * opts' facility and level.  An RFC 3164 time (no year, no zone) is put
 * in the year that brings it nearest to opts->now_ns, within six months
 * (a December time received in January is of the year before), and in
 * opts' time zone.  A message whose RFC 5424 header or structured data is
 * malformed is RAW, never dropped.  opts NULL: the defaults.  Returns the
 * format (>= 0), or KMSG_EINVAL (NULL arguments, an unknown version).
 */
int kmsg_syslog_parse_sized(struct kmsg_syslog_msg *m, size_t size, const char *buf,
			    size_t len, const struct kmsg_syslog_parse_opts *opts);
#define kmsg_syslog_parse(m, buf, len, opts) \
	kmsg_syslog_parse_sized((m), sizeof(struct kmsg_syslog_msg), (buf), (len), (opts))

/* One step of kmsg_syslog_sd_next(). */
struct kmsg_syslog_sd {
	const char *id;       size_t id_len;   /* the SD-ID, in the span */
	const char *name;     size_t name_len; /* NULL: the element begins */
	const char *value;    size_t value_len;/* unescaped, in the caller's buf */
};

/*
 * Walks RFC 5424 STRUCTURED-DATA (sd, len bytes: kmsg_syslog_msg.sd): *pos
 * starts at 0.  Each call returns 1 and either an element's beginning in
 * *e (id set, name NULL) or one of its parameters (name and value; id left
 * as the element's call set it), 0 at the end, or KMSG_ECORRUPT for
 * malformed data: an SD-ID or PARAM-NAME not of 1-32 bytes of ASCII 33..126
 * without '=', ' ', ']' and '"', a value not in quotes, an unescaped ']'
 * in a value, anything between elements.  Values are unescaped (\" \\ \]
 * to " \ ]; a backslash before another byte stays) into buf (size bytes:
 * len always suffices; less may give KMSG_EINVAL).  Bytes of values are
 * not checked for UTF-8.
 */
int kmsg_syslog_sd_next(struct kmsg_syslog_sd *e, char *buf, size_t size,
			const char *sd, size_t len, size_t *pos);

/*
 * RFC 6587 octet counting on a stream ("LEN SP MSG"): looks at the len
 * bytes at buf.  Returns 1 when a whole frame is there: its message is at
 * buf + *off, *msg_len bytes, and the frame ends at *off + *msg_len; 0
 * when more bytes are needed (nothing stored); KMSG_ECORRUPT when buf
 * does not begin with a frame (not a digit, a leading zero, no space
 * after at most 10 digits): the stream is of another framing or broken;
 * KMSG_ETOOLONG for a frame longer than max bytes (*msg_len holds its
 * length, so that the caller may skip it).
 */
int kmsg_syslog_frame(size_t *off, size_t *msg_len, const char *buf, size_t len,
		      size_t max);

/* Flags of kmsg_syslog_fmt_opts. */
enum {
	KMSG_SYSLOG_FMT_UTC = 1 << 0, /* times in UTC ("Z"), not local time */
	KMSG_SYSLOG_FMT_BOM = 1 << 1, /* RFC 5424: the BOM before a MSG that is
	                                 valid UTF-8 and not ASCII alone */
};

#define KMSG_SYSLOG_FMT_OPTS_VERSION 1
struct kmsg_syslog_fmt_opts {
	unsigned version;        /* KMSG_SYSLOG_FMT_OPTS_VERSION */
	int format;              /* KMSG_SYSLOG_5424 or KMSG_SYSLOG_3164 */
	unsigned flags;          /* KMSG_SYSLOG_FMT_* */
	const char *hostname;    /* NULL: "-" (3164: none) */
	/* APP-NAME (3164: TAG) of a record without a SYSLOG_IDENTIFIER
	 * field; NULL: "-" (3164: none) */
	const char *app;
	/* RFC 5424: the SD-ID of an element with the record's seq, seq_id,
	 * ring id and fields; NULL: no structured data.  Its enterprise
	 * number is the sender's own (32473 is for documentation). */
	const char *sd_id;
	const uint8_t *ring_id;  /* 16 bytes (kmsg_stat.ring_id), or NULL */
};
#define KMSG_SYSLOG_FMT_OPTS_INIT \
	{ KMSG_SYSLOG_FMT_OPTS_VERSION, KMSG_SYSLOG_5424, 0, NULL, NULL, NULL, NULL }

/*
 * Writes rec as one syslog message (no framing, no newline) into buf of
 * size bytes, NUL-terminated when size > 0, as snprintf(3) does: returns
 * the length the whole message takes (NUL not counted) even when buf is
 * too small, so that a caller can grow it and call again; KMSG_EINVAL for
 * bad arguments.  RFC 5424: "<PRI>1 TIMESTAMP HOST APP PROCID - [SD] MSG",
 * the time to the microsecond; the header fields limited to their RFC
 * lengths and bytes 33..126 (others become '_', an empty one "-"); in the
 * element sd_id: seq, seqid and ring (hexadecimal), then each field as a
 * parameter named by its key (libkmsg(3) says how a key that is no valid
 * PARAM-NAME is mapped), the value with '"', '\' and ']' escaped; MSG is
 * the text as it is, newlines included, but for the "TAG: " or
 * "TAG[PID]: " it begins with when TAG is its SYSLOG_IDENTIFIER field (as
 * kmsg emit -t and kmsg listen store it), which the header carries
 * already.  RFC 3164: "<PRI>Mmm dd hh:mm:ss
 * HOST TAG[PID]: MSG", with each control byte of MSG but tab written as
 * rsyslog writes them, "#" and three octal digits ("#012" for a newline),
 * so that the message stays one line.  A record without priority is sent
 * as user.notice.
 */
int kmsg_syslog_format_sized(char *buf, size_t size, const struct kmsg_record *rec,
			     size_t rec_size, const struct kmsg_syslog_fmt_opts *opts);
#define kmsg_syslog_format(buf, size, rec, opts) \
	kmsg_syslog_format_sized((buf), (size), (rec), sizeof(struct kmsg_record), (opts))

/* ------------------------------------------------------------------ */
/* RELP: frames of the Reliable Event Logging Protocol                 */

/*
 * RELP (librelp's doc/relp.md, as rsyslog's imrelp speaks it): a frame is
 * "TXNR SP COMMAND SP DATALEN [SP DATA] LF".  The client numbers its
 * commands from 1 on each connection; the server answers each with a
 * "rsp" of its TXNR, in order; TXNR 0 carries the server's hints
 * ("serverclose").  These write and read frames; the connection is the
 * caller's.
 */
#define KMSG_RELP_TXNR_MAX    999999999u /* nine digits */
#define KMSG_RELP_DATALEN_MAX 999999999u
#define KMSG_RELP_COMMAND_MAX 32

/*
 * Writes the frame of command (1 to 32 letters) with txnr and the len
 * bytes of data into buf of size bytes: at most size bytes, no NUL.
 * Returns the length the whole frame takes (more than size when it did
 * not fit: call again with room), or KMSG_EINVAL for a txnr or len over
 * the maxima above, or a command that is no word.
 */
int kmsg_relp_format(char *buf, size_t size, uint32_t txnr, const char *command,
		     const void *data, size_t len);

/*
 * kmsg_relp_format() of the "open" command with a client's offers:
 * relp_version=0 (what librelp's servers accept), relp_software=software
 * (NULL: "libkmsg"; one line of 1 to 255 bytes) and commands=syslog.
 */
int kmsg_relp_format_open(char *buf, size_t size, uint32_t txnr, const char *software);

/*
 * The TXNR after txnr, or 0 when txnr is KMSG_RELP_TXNR_MAX: the spec
 * wraps to 1 there, but librelp's servers expect 1000000000, which no
 * frame can carry; a client safe with both ends the session (close) and
 * opens a new one, whose numbers start at 1 again.
 */
uint32_t kmsg_relp_next_txnr(uint32_t txnr);

/* One frame kmsg_relp_parse() found.  data points into the caller's
 * bytes (NULL when DATALEN is 0). */
struct kmsg_relp_frame {
	uint32_t txnr;
	char command[KMSG_RELP_COMMAND_MAX + 1]; /* NUL-terminated */
	size_t command_len;
	const char *data;
	size_t data_len;
};

/*
 * Reads the frame at the start of the len bytes at buf, as a server sent
 * them.  Returns 1 with *f filled and *used the bytes the frame takes; 0
 * when the bytes end before the frame does (nothing stored: call again
 * with more); KMSG_ECORRUPT for bytes that are no frame (a field without
 * its digits or letters, more than 9 digits or 32 letters, no LF at the
 * end): the stream cannot be read on, drop the connection; KMSG_ETOOLONG
 * for a DATALEN over max, found as soon as the header is read, so that a
 * caller never holds more than max bytes and a header for one frame.
 * Nothing is read past len; every length is checked before it is used.
 */
int kmsg_relp_parse_sized(struct kmsg_relp_frame *f, size_t size, size_t *used,
			  const char *buf, size_t len, size_t max);
#define kmsg_relp_parse(f, used, buf, len, max) \
	kmsg_relp_parse_sized((f), sizeof(struct kmsg_relp_frame), (used), (buf), (len), (max))

/*
 * Reads a rsp's DATA (len bytes): "CODE [SP TEXT] [LF CMDDATA]".  Returns
 * the code (100 to 999; 200 is success, 500 an error), or KMSG_ECORRUPT;
 * *text (the server's words) and *cmddata (the offers of an "open"'s
 * rsp) point into data, each may be NULL if not wanted.
 */
int kmsg_relp_rsp(const char **text, size_t *text_len, const char **cmddata,
		  size_t *cmddata_len, const char *data, size_t len);

/*
 * 1 if the offers (len bytes, a rsp's CMDDATA) hold the offer name and,
 * when value is not NULL, value among its comma-separated values
 * ("commands", "syslog"); else 0.
 */
int kmsg_relp_offer(const char *offers, size_t len, const char *name, const char *value);

/* ------------------------------------------------------------------ */
/* Dumps: compressed snapshots readable offline                        */

/*
 * Writes a consistent snapshot of log to fd as a gzip stream, in a fixed
 * amount of memory (about 1.5 MiB) plus the largest record, not the log's
 * size, while writers go on writing.  The snapshot holds every record from the oldest one to the
 * newest at the start of the dump (an append still unfinished after its
 * last record, waited for a second, is left out and not counted: kmsg(5),
 * DUMPS); if writers overwrite records before
 * they are copied, the dump starts again (up to a few times, then -EAGAIN):
 * a regular file is rewound to where the dump began (its end with
 * O_APPEND); an fd that cannot be rewound gets -EAGAIN at once, its stream
 * left without an end so that it never passes for a whole dump.
 * The stream decompresses to a kmsg log file of its own, so
 * kmsg_dump_open() (or gunzip and kmsg_log_open()) reads it.  *records
 * (if not NULL) gets the number of records written.  level is zlib's
 * compression level (-1 for the default).
 */
int kmsg_dump_write(uint64_t *records, struct kmsg_log *log, int fd, int level);

#define KMSG_DUMP_OPTS_VERSION 1
struct kmsg_dump_opts {
	unsigned version;   /* KMSG_DUMP_OPTS_VERSION */
	int level;          /* zlib's compression level, -1 for its default */
	/* If not NULL, called after each batch of records (about 1 MiB) with
	 * the bytes of the dump written so far and the bytes it will have,
	 * uncompressed: for a progress line.  An attempt that starts again
	 * starts again from 0. */
	void (*progress)(void *arg, uint64_t done, uint64_t total);
	void *progress_arg;
};
#define KMSG_DUMP_OPTS_INIT { KMSG_DUMP_OPTS_VERSION, -1, NULL, NULL }

/* kmsg_dump_write() with options. */
int kmsg_dump_write_opts(uint64_t *records, struct kmsg_log *log, int fd,
			 const struct kmsg_dump_opts *opts);

/*
 * Opens a dump made by kmsg_dump_write() for reading, as a read-only log:
 * it is decompressed into memory (a memfd), no more than the dump's header
 * claims (path may be a pipe): as much memory as the log the dump was
 * made of holds, where kmsg_dump_open_fd_opts() with a directory keeps it
 * bounded.  A file that is not a gzip stream gives KMSG_ENOTLOG; one that
 * is damaged or holds no log KMSG_ECORRUPT.
 */
int kmsg_dump_open(struct kmsg_log **out, const char *path);

/*
 * kmsg_dump_open() for what arrives on fd (a pipe, a socket, a FIFO or a
 * file, from its current offset): a dump, or the bytes of a log file
 * itself (cat LOG |), which cannot be mapped where it arrives and is
 * copied into memory as it comes, up to the size its header claims; no
 * byte after that is read.  head holds the head_len bytes the caller has
 * already read from fd to see what it is (NULL if none): they are taken
 * as the first bytes of the input.  Memory grows only as the input
 * arrives (zero pages take none) and never past what the header claims;
 * input that ends before the header's claim is refused with KMSG_ECORRUPT
 * when it ends, without waiting for or allocating the claimed size.  fd
 * is left open.  Input that is neither gives KMSG_ENOTLOG.
 */
int kmsg_dump_open_fd(struct kmsg_log **out, int fd, const void *head,
		      size_t head_len);

#define KMSG_DUMP_OPEN_OPTS_VERSION 1
struct kmsg_dump_open_opts {
	unsigned version;    /* KMSG_DUMP_OPEN_OPTS_VERSION */
	/* Where the decompressed copy of a dump larger than mem_max goes:
	 * an unnamed file in this directory (O_TMPFILE; else a named one,
	 * unlinked at once), which takes disk, not memory; NULL: every
	 * copy in memory, as kmsg_dump_open_fd() does.  The library reads
	 * no environment: a tool passes $TMPDIR (or /tmp) itself. */
	const char *tmpdir;
	/* The largest copy, in bytes of the log its header claims, kept in
	 * memory when tmpdir is given (0: none). */
	uint64_t mem_max;
};
#define KMSG_DUMP_OPEN_OPTS_INIT { KMSG_DUMP_OPEN_OPTS_VERSION, NULL, UINT64_C(16) << 20 }

/*
 * kmsg_dump_open_fd() with options (NULL: the defaults).  With a tmpdir,
 * a dump whose header claims more than mem_max bytes is decompressed into
 * a file there, and the process's memory stays at a few MiB whatever the
 * dump's size: the copy is written and looked at with read(2) and
 * write(2), and a reader copies records out of it (kmsg_reader_next())
 * without keeping its pages.  The file is as large as the header claims,
 * its zeros holes, so it takes about the bytes of the records on disk;
 * one whose claim is more than the directory's file system has free is
 * refused with -ENOSPC before a byte is written.  Errors of the file
 * (-EACCES, -EROFS, -ENOENT, -ENOSPC, -EDQUOT, ...) are returned as they
 * come; the file is gone when the log is closed (or at once on failure).
 */
int kmsg_dump_open_fd_opts(struct kmsg_log **out, int fd, const void *head,
			   size_t head_len, const struct kmsg_dump_open_opts *opts);

/*
 * Fills *st for the dump on fd (head and head_len as for
 * kmsg_dump_open_fd()) from its header and its first record alone, a
 * few KiB of any dump however large, where opening it decompresses it
 * all.  used is the room the dump keeps for its records, a little more
 * than they take.  The rest of the stream is not checked (reading the
 * dump does); a regular file's size is checked against the gzip trailer.
 * KMSG_ENOTLOG for a file that is not gzip, KMSG_ECORRUPT for a damaged
 * header or first record.
 */
int kmsg_dump_stat_fd_sized(struct kmsg_stat *st, size_t size, int fd, const void *head,
			    size_t head_len);
#define kmsg_dump_stat_fd(st, fd, head, head_len) \
	kmsg_dump_stat_fd_sized((st), sizeof(struct kmsg_stat), (fd), (head), (head_len))

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif
#endif /* KMSG_H */
