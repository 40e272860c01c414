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

#endif
