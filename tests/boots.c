/*
 * boots.c - kmsg-boots: appends records to a log as a writer of another
 * boot would, for tests of reading logs that span boots (kmsg read -b,
 * --list-boots, the boot lines).  A real log gets such records only from
 * a machine that rebooted.
 *
 *   kmsg-boots LOG BOOT_ID SECONDS COUNT [SIZE]
 *
 * Creates LOG (SIZE bytes, default 1 MiB) if it does not exist, and
 * appends COUNT records of boot BOOT_ID (hex, as records carry it) at
 * user.info, "boot BOOT_ID record I", record I written at wall-clock time
 * SECONDS + I (Unix time) and since-boot time 1 + I / 2 seconds.  Exit
 * status 0, or 1 with the library's error on stderr, 2 on bad usage.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	struct kmsg_create_opts opts = KMSG_CREATE_OPTS_INIT;
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	struct kmsg_log *log;
	char text[128];
	long long secs, count;
	int rc;

	if (argc < 5 || argc > 6) {
		fprintf(stderr, "usage: kmsg-boots LOG BOOT_ID SECONDS COUNT [SIZE]\n");
		return 2;
	}
	secs = atoll(argv[3]);
	count = atoll(argv[4]);
	if (argc == 6)
		opts.size = strtoull(argv[5], NULL, 0);
	rc = kmsg_log_create(&log, argv[1], &opts, 0);
	if (rc < 0) {
		fprintf(stderr, "kmsg-boots: %s: %s\n", argv[1], kmsg_strerror(rc));
		return 1;
	}
	/* what a writer of that boot has; its first append brings the log
	 * into the boot, as after a reboot */
	log->boot_id = strtoull(argv[2], NULL, 16);
	e.flags = KMSG_TIMES | KMSG_BEGIN;
	e.facility = 1;
	e.level = 6;
	for (long long i = 0; i < count && rc >= 0; i++) {
		e.text_len = (size_t)snprintf(text, sizeof(text), "boot %s record %lld",
					      argv[2], i);
		e.text = text;
		e.real_ns = (secs + i) * 1000000000LL;
		e.boot_ns = 1000000000LL + i * 500000000LL;
		rc = kmsg_log_append(NULL, log, &e);
	}
	if (rc < 0)
		fprintf(stderr, "kmsg-boots: %s: %s\n", argv[1], kmsg_strerror(rc));
	kmsg_log_close(log);
	return rc < 0 ? 1 : 0;
}
