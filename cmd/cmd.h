/*
 * cmd.h - what the kmsg tool's subcommands share.  Each subcommand is one
 * file, cmd/<name>.c, with an entry point cmd_<name>() and its popt table;
 * main.c holds the table of subcommands.  Only cmd/ prints and exits.
 */
#ifndef KMSG_CMD_H
#define KMSG_CMD_H

#include <kmsg/kmsg.h>

#include <limits.h>
#include <popt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

/* Exit statuses. */
enum { EXIT_OK = 0, EXIT_FAIL = 1, EXIT_USAGE = 2 };

struct kmsg_cmd {
	const char *name;
	int (*fn)(int argc, const char **argv);
	const char *summary;
	const struct poptOption *options; /* for help, completions and their tests */
};

/* Subcommands, one file each. */
int cmd_emit(int argc, const char **argv);
int cmd_read(int argc, const char **argv);
int cmd_clear(int argc, const char **argv);
int cmd_follow(int argc, const char **argv);
int cmd_dump(int argc, const char **argv);
int cmd_stat(int argc, const char **argv);
int cmd_listen(int argc, const char **argv);
int cmd_kernel(int argc, const char **argv);
extern const struct poptOption emit_options[];
extern const struct poptOption read_options[];
extern const struct poptOption clear_options[];
extern const struct poptOption follow_options[];
extern const struct poptOption dump_options[];
extern const struct poptOption stat_options[];
extern const struct poptOption listen_options[];
extern const struct poptOption kernel_options[];

/* The subcommand table (main.c), ending with a NULL name. */
extern const struct kmsg_cmd kmsg_commands[];

/* ---- common.c ---------------------------------------------------------- */

/*
 * Prints "kmsg: <what>: <why>" to stderr (what may be NULL) and returns
 * EXIT_FAIL, the status of a command that stops there.
 */
int cli_error(const char *what, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* cli_error() with the words of a libkmsg code as the why. */
int cli_lib_error(const char *what, int code);

/*
 * Bad usage of subcommand cmd: prints "kmsg: <what>: <why>" and the line
 * "Try 'kmsg CMD --help' for more information.", returns EXIT_USAGE.
 */
int cli_usage_error(const char *cmd, const char *what, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * Reports a popt parse error ("kmsg: --priority: needs an argument") as a
 * usage error and returns EXIT_USAGE.
 */
int cli_popt_error(poptContext con, const char *cmd, int rc);

/*
 * dmesg's and logger's -h: every subcommand's table includes it (hidden,
 * popt's own --help lists the option), and its parse loop calls
 * cli_help() when popt returns CLI_OPT_H.
 */
#define CLI_OPT_H 'h'
#define CLI_HELP_H \
	{ NULL, 'h', POPT_ARG_NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, CLI_OPT_H, NULL, NULL },
/* Prints the subcommand's help to stdout and exits with status 0. */
void cli_help(poptContext con) __attribute__((noreturn));

/*
 * The options of a table shared between subcommands (format, filters,
 * cursors, ...) go through a handler, which is given each option's val
 * and argument (NULL for a flag) as popt parses it, with the state the
 * handler names: the caller's struct the options are parsed into, bound
 * before parsing, or NULL for a module that keeps what it was given
 * itself.  popt's argument does not outlive the next option, so a
 * handler that keeps it copies it.  The table's first entry is
 * CLI_OPTION_HANDLER(&h).
 */
struct cli_option_handler {
	void (*fn)(void *state, int val, const char *arg);
	void *state;
};
void cli_on_option(poptContext con, enum poptCallbackReason reason,
		   const struct poptOption *opt, const char *arg, const void *data);
#define CLI_OPTION_HANDLER(h) \
	{ NULL, '\0', POPT_ARG_CALLBACK, (void *)cli_on_option, 0, (const char *)(h), NULL }

/*
 * Parses the options of a subcommand that takes no other arguments:
 * returns 0, or EXIT_USAGE after saying what is wrong.
 */
int cli_parse_options(poptContext con, const char *cmd);
/*
 * The same for a subcommand that works on one log and takes nothing else
 * (clear, stat), which then needs its path: *path is set to
 * cli_log_path() of *file_opt, the --file option as parsed.  Returns 0,
 * or the exit status after saying why not.
 */
int cli_parse_log_options(poptContext con, const char *cmd, const char *const *file_opt,
			  const char **path);
/*
 * For an option that names a file, or "-" for standard input or output
 * (std: "input", "output"): EXIT_USAGE after saying so if path is empty,
 * else 0.
 */
int cli_path_given(const char *cmd, const char *opt, const char *path, const char *std);

/*
 * The same for a subcommand that takes arguments: stores them in *args
 * (NULL-terminated, NULL for none; they live as long as con).
 */
int cli_parse_args(poptContext con, const char *cmd, const char *const **args);

/*
 * The log a subcommand works on: the --file option if given, else
 * $KMSG_FILE, else /var/log/kmsg for root and $XDG_STATE_HOME/kmsg/log
 * (~/.local/state/kmsg/log) for other users.  Returns a string that lives
 * as long as the process; NULL (after printing why) if none can be found
 * or --file is empty.
 */
const char *cli_log_path(const char *file_opt);

/* The directory part of path into buf ("." when there is none, "/" for a
 * path just under the root); NULL if it does not fit in size bytes. */
const char *cli_dir_of(const char *path, char *buf, size_t size);

/*
 * The decimal number s (n bytes, digits only) into *v: 0, -EINVAL for
 * no digits or another byte, -ERANGE for a number above max.
 */
int cli_parse_u64(uint64_t *v, const char *s, size_t n, uint64_t max);

/*
 * Writes all of p (n bytes) to fd, through EINTR; 0 or -errno.  Once the
 * flag given to cli_write_stop_on() is set, what fd does not take within
 * a second of the first write after that is given up: -EINTR.
 */
int cli_write_all(int fd, const char *p, size_t n);

/*
 * kmsg follow's stop: when *flag is set (by a stop signal), writes get a
 * second in all, not for ever, so that a reader of the output that
 * stopped reading cannot keep the signal from ending the command.
 */
void cli_write_stop_on(volatile sig_atomic_t *flag);

/* A file being made to take another's place (cli_temp_beside()). */
struct cli_temp {
	int fd;
	char name[PATH_MAX];  /* "" while it has none */
};

/*
 * Whether kmsg may put a file of its own at path (cli_temp_beside() and
 * cli_replace() ask): 0 if nothing is there, or a regular file of the
 * user's own (or of root's), with *mode the new file's: the old one's
 * permission bits if it was the user's own (never setuid, setgid or
 * sticky), else dflt less the umask.  Otherwise -ELOOP (a symbolic link,
 * which is neither followed nor replaced), -EPERM (a file of another
 * user's: planted, in a sticky directory, for the user to write), -ENODEV
 * (a FIFO, a device or a socket), -EISDIR, or -errno of lstat().
 */
int cli_replaceable(const char *path, mode_t dflt, mode_t *mode);

/*
 * A new file beside path, to take its place once complete (cli_replace()),
 * its owner's alone until then; refused as cli_replaceable() says, before
 * anything is made.  Where the file system can (O_TMPFILE) it has no name
 * until cli_replace() gives it one, so a command interrupted or killed
 * half-way leaves nothing behind; elsewhere it is "<path>.tmp-XXXXXX",
 * made exclusively, which cli_temp_drop() removes.  Returns 0 with t->fd
 * open, or -errno.
 */
int cli_temp_beside(struct cli_temp *t, const char *path);

/* Gives the file up: closed, and removed if it has a name. */
void cli_temp_drop(struct cli_temp *t);

/*
 * Puts the complete file t in path's place, if cli_replaceable() still
 * allows: given the mode it says, synced, renamed over path (after a name
 * beside it, for a file that has none yet), and the directory synced, so
 * that after a crash path is the old file or the new one, whole.  Gives t
 * up, on failure too.  Returns 0 or -errno.
 */
int cli_replace(struct cli_temp *t, const char *path, mode_t dflt);

/* How long cli_open_special() waits for a FIFO's reader. */
#define CLI_SPECIAL_WAIT_S 5

/*
 * Opens path, a FIFO or a device the user asked to write into (never a
 * regular file: those are replaced), for writing: not through a symbolic
 * link, only if it is the user's own or root's, and a FIFO only once a
 * reader has it open (CLI_SPECIAL_WAIT_S seconds at most).  Returns the
 * descriptor, blocking, or -ELOOP, -EPERM, -ENODEV (a socket or a regular
 * file), -EISDIR, -ENXIO (no reader came), -EAGAIN (another file put
 * there meanwhile), or -errno.
 */
int cli_open_special(const char *path);

/*
 * Says why path cannot be written (err from cli_replaceable(),
 * cli_temp_beside(), cli_replace() or cli_open_special()), with what to
 * do; special, if not NULL, is the fix for a FIFO or a device.  Returns
 * EXIT_FAIL.
 */
int cli_output_error(const char *path, int err, const char *special);

/*
 * Opens the log at path: for reading (flags 0) or writing.  With create
 * (not NULL), a missing log (and its missing parent directories) is
 * created with those options, and an empty file made a log.  Writing
 * takes KMSG_OPEN_ONE_HOST from cli_one_host().  Prints the error and
 * returns NULL on failure.
 */
/* Whether KMSG_ONE_HOST (set, not 0) says that only this machine writes
 * the logs it is given: kmsg(1), ENVIRONMENT. */
int cli_one_host(void);

struct kmsg_log *cli_open_log(const char *path, unsigned flags,
			      const struct kmsg_create_opts *create);

/*
 * Parses a size: a number with an optional K, M, G or T suffix (powers of
 * 1024; KiB, MiB, ... are accepted too).  Returns 0 and stores it, or -1.
 */
int cli_parse_size(uint64_t *out, const char *s);

/*
 * Parses the options of a log a command makes if it is missing into co:
 * --max-text max_text (1 to KMSG_MAX_TEXT_LIMIT bytes), then --log-size
 * log_size (a size as cli_parse_size() takes it that a log can have, with
 * room for texts of the longest length); either may be NULL, which keeps
 * co's.  Returns 0, or EXIT_USAGE after saying, for command cmd, what is
 * wrong and what would do.
 */
int cli_parse_new_log(struct kmsg_create_opts *co, const char *cmd, const char *log_size,
		      const char *max_text);

/* The popt entries of the log a writing command names and makes if it is
 * missing (cli_parse_new_log()), each giving its val to the callback. */
#define CLI_NEW_LOG_OPTIONS(file_val, log_size_val, max_text_val) \
	{ "file", 'F', POPT_ARG_STRING, NULL, (file_val), \
	  "the log (default $KMSG_FILE, else the user's log)", "PATH" }, \
	{ "log-size", '\0', POPT_ARG_STRING, NULL, (log_size_val), \
	  "size of the log if it must be made (K, M, G suffixes; default 1M)", "SIZE" }, \
	{ "max-text", '\0', POPT_ARG_STRING, NULL, (max_text_val), \
	  "longest text of the log if it must be made (default 1024)", "BYTES" }

/*
 * Call first thing: descriptors 0-2 that were closed are opened on
 * /dev/null, so that no file kmsg opens lands on them; SIGPIPE is ignored
 * so that a closed pipe is an EPIPE error we can end on quietly; and
 * stdout's final flush is checked at exit (a full disk is an error,
 * util-linux close_stdout style).
 */
void cli_init(void);

/*
 * For a subcommand about to print what the user asked for: EXIT_FAIL
 * after saying why if standard output was closed when kmsg started (it
 * then goes to /dev/null, and "kmsg read -c >&-" would clear what nobody
 * saw), else 0.
 */
int cli_need_stdout(void);

/* Whether standard input was closed when kmsg started (it reads
 * /dev/null since): "-" then names no input. */
int cli_stdin_closed(void);

/*
 * For the log at path, described by st: if the file is shorter than its
 * header says (a copy that stopped, a disk that lost its end), says so on
 * stderr once and returns the bytes the file holds; else 0.  A pipe ("-")
 * is never cut short here (reading one refuses that already).
 */
uint64_t cli_cut_short(const char *path, const struct kmsg_stat *st);

/*
 * Has a file mapped here been cut short under the mapping since the last
 * call (another process truncated the log while it was read or written)?
 * cli_init() takes the SIGBUS such a file raises as news, not a crash:
 * the missing page reads as zeros from then on (which the library takes
 * for damage or an end) and what is written there goes nowhere.  If it
 * was, says so for path on stderr, with what for the work that was cut
 * ("read", "written"), and returns 1; else 0.
 */
int cli_file_cut(const char *path, const char *what);
/* The same question, asked quietly: 1 if so (and forgotten), else 0.
 * Async-signal state only: safe to ask after any access. */
int cli_bus_cut(void);

/*
 * A progress line for long work, on stderr and only when stderr is a
 * terminal: "kmsg: WHAT: 45% (480.0 MiB of 1.0 GiB)", first drawn half a
 * second into the work and redrawn at most ten times a second.
 * cli_progress() fits the library's progress callbacks (arg: the struct);
 * cli_progress_end() wipes the line.
 */
struct cli_progress {
	const char *what;
	int tty, shown;
	int64_t start_ns, next_ns;
};
void cli_progress_init(struct cli_progress *p, const char *what);
void cli_progress(void *p, uint64_t done, uint64_t total);
void cli_progress_end(struct cli_progress *p);

/* *to becomes a copy of arg (NULL: none), what it held freed: option
 * callbacks keep their arguments so, popt's own not outliving the next
 * option.  Out of memory, it becomes NULL, as for an option not given. */
void cli_keep(char **to, const char *arg);

/* A ring id (kmsg_stat.ring_id) as kmsg stat shows it: 32 lower-case
 * hex digits and a NUL, into buf. */
void cli_ring_hex(char *buf, const uint8_t id[16]);

/* v bytes in words: "512 bytes", "480.0 MiB". */
void cli_size_words(char *buf, size_t n, uint64_t v);

/* clock_gettime(clock) in nanoseconds. */
int64_t cli_now_ns(clockid_t clock);

/* Ends quietly (status 0) if err is EPIPE: the reader went away. */
void cli_exit_if_epipe(int err);

/* A daemon's word on what it does (listen, kernel): "kmsg CMD: ..." and a
 * newline on stderr, flushed at once. */
void cli_say(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* kmsg ship (cmd_ship.c): the log's records to a collector (ship.h). */
int cmd_ship(int argc, const char **argv);
extern const struct poptOption ship_options[];

#endif
