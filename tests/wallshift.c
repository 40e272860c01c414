/*
 * wallshift.c - libkmsg-wallshift.so, an LD_PRELOAD shim that moves the
 * wall clock of one process: CLOCK_REALTIME (and its coarse variant) read
 * through clock_gettime() is KMSG_WALL_SHIFT seconds (signed) off the
 * machine's, every other clock as it is.  Tests use it to write records as
 * a machine whose clock was fast, slow or stepped back would, without
 * touching the machine's clock:
 *
 *   KMSG_WALL_SHIFT=3600 LD_PRELOAD=build/tests/libkmsg-wallshift.so kmsg emit x
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <time.h>

int clock_gettime(clockid_t clock, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	const char *shift;
	int r;

	if (!real)
		real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	r = real(clock, ts);
	if (r == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) &&
	    (shift = getenv("KMSG_WALL_SHIFT")) != NULL)
		ts->tv_sec += strtol(shift, NULL, 10);
	return r;
}
