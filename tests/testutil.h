/* testutil.h - fixtures shared by the test programs. */
#ifndef KMSG_TESTUTIL_H
#define KMSG_TESTUTIL_H

#include <kmsg/kmsg.h>

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A fresh directory under $TMPDIR (or /tmp), removed with its files by tu_cleanup(). */
const char *tu_dir(void);
/* A path inside tu_dir(). */
const char *tu_path(const char *name);
void tu_cleanup(void);

/* Creates a log of size bytes (max_text 1024 unless given) and opens it for writing. */
struct kmsg_log *tu_create(const char *name, uint64_t size, uint32_t max_text);

/* Appends text at user.info and returns its sequence number (asserts success). */
uint64_t tu_append(struct kmsg_log *log, const char *text);

/* Reads every record now in log from the oldest: count, and the first and
 * last one's seq (gaps the reader reports are not records). */
size_t tu_count(struct kmsg_log *log, uint64_t *first, uint64_t *last);

/*
 * fork() for a test: the child is killed when the test's process ends, so
 * a test that fails half-way never leaves a child behind holding the
 * runner's pipes open (the runner then waits for ever).
 */
pid_t tu_fork(void);

/*
 * Makes the log's state look as the first writer after a reboot finds it:
 * its dynamic words and its numbering's identity of another boot.
 */
void tu_pretend_reboot(struct kmsg_log *log);

/* clock_gettime(clock) in nanoseconds. */
int64_t tu_now_ns(int clock);

/* Stress duration in seconds: KMSG_STRESS_SECONDS from the build, or $KMSG_STRESS_SECONDS. */
double tu_stress_seconds(void);

#endif
