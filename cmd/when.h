/*
 * when.h - the time expressions of --since and --until.
 */
#ifndef KMSG_WHEN_H
#define KMSG_WHEN_H

#include <stdint.h>

/*
 * Parses a time as dmesg's and journalctl's --since and --until take it:
 * "now", "today", "yesterday", "tomorrow", "@SECONDS", "+SPAN", "-SPAN",
 * "SPAN ago" (SPAN as "1h 30min", "5s", "2 days"), or an absolute local
 * date and time: "[WEEKDAY ]YYYY-MM-DD[ HH:MM[:SS[.frac]]]" (or T between
 * date and time, or "YY-MM-DD"), "HH:MM[:SS]" (today), optionally
 * followed by " UTC".  Stores CLOCK_REALTIME nanoseconds; returns 0 or -1.
 */
int parse_when(int64_t *ns, const char *s);

#ifdef KMSG_TEST_HOOKS
/* Stands for the machine's boot time in the test suite's build of the
 * tool (never the one installed): "SECONDS.MICROSECONDS". */
#define WHEN_TEST_BOOT_TIME_ENV "KMSG_TEST_BOOT_TIME"
#endif

/*
 * The boot time dmesg adds to the since-boot times of text (-F) and
 * /dev/kmsg records (-K), in CLOCK_REALTIME nanoseconds:
 * kmsg_dmesg_boot_time()'s, or in the tests' build the one
 * WHEN_TEST_BOOT_TIME_ENV gives, as dmesg's own tests fix theirs.  0, or
 * a negative code (*real_ns 0).
 */
int when_boot_time(int64_t *real_ns);

#endif
