#define _GNU_SOURCE
#include "testutil.h"
#include "internal.h"

#include <criterion/criterion.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char dir[256];
static char path[512];

const char *tu_dir(void)
{
	if (!dir[0]) {
		const char *t = getenv("TMPDIR");
		snprintf(dir, sizeof(dir), "%s/kmsg-test-XXXXXX", t && *t ? t : "/tmp");
		cr_assert_not_null(mkdtemp(dir), "mkdtemp");
	}
	return dir;
}

const char *tu_path(const char *name)
{
	snprintf(path, sizeof(path), "%s/%s", tu_dir(), name);
	return path;
}

void tu_cleanup(void)
{
	char cmd[300];
	if (!dir[0])
		return;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	dir[0] = 0;
}

struct kmsg_log *tu_create(const char *name, uint64_t size, uint32_t max_text)
{
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	struct kmsg_log *log = NULL;
	int r;

	o.size = size;
	if (max_text)
		o.max_text = max_text;
	r = kmsg_log_create(&log, tu_path(name), &o, 0);
	cr_assert_eq(r, 0, "create %s: %s", name, kmsg_strerror(r));
	return log;
}

uint64_t tu_append(struct kmsg_log *log, const char *text)
{
	struct kmsg_entry e = KMSG_ENTRY_INIT;
	uint64_t seq = 0;
	int r;

	e.level = 6;
	e.text = text;
	e.text_len = strlen(text);
	r = kmsg_log_append(&seq, log, &e);
	cr_assert_eq(r, 0, "append: %s", kmsg_strerror(r));
	return seq;
}

size_t tu_count(struct kmsg_log *log, uint64_t *first, uint64_t *last)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	size_t n = 0;
	int rc;

	cr_assert_eq(kmsg_reader_new(&r, log, 0), 0);
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		if (rec.flags & KMSG_GAP)
			continue;
		if (n == 0 && first)
			*first = rec.seq;
		if (last)
			*last = rec.seq;
		n++;
	}
	cr_assert_eq(rc, 0, "reader: %s", kmsg_strerror(rc));
	kmsg_reader_free(r);
	return n;
}

double tu_stress_seconds(void)
{
	const char *e = getenv("KMSG_STRESS_SECONDS");
	if (e && *e)
		return atof(e);
#ifdef KMSG_STRESS_SECONDS
	return KMSG_STRESS_SECONDS;
#else
	return 2;
#endif
}

int64_t tu_now_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

pid_t tu_fork(void)
{
	pid_t parent = getpid(), pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)  /* it died before the line above */
			_exit(127);
	}
	return pid;
}

void tu_pretend_reboot(struct kmsg_log *log)
{
	struct kmsg_aux *a = log->aux;

	atomic_store(&a->boot_id, atomic_load(&a->boot_id) ^ 1);
	atomic_store(&a->ident[atomic_load(&a->id_slot) & 1].boot,
		     atomic_load(&a->ident[atomic_load(&a->id_slot) & 1].boot) ^ 1);
}
