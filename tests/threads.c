/*
 * threads.c - threads of one process sharing one handle: appends from
 * several threads, then a reader checks each thread's records.  A plain
 * program (no Criterion) so that it also runs under ThreadSanitizer, which
 * cannot follow Criterion's process sandbox; cross-process sharing is
 * beyond TSan and is covered by kmsg-stress and test_concurrency.
 */
#include <kmsg/kmsg.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 4
#define PER_THREAD 20000

static struct kmsg_log *log_;

static void *writer(void *arg)
{
	unsigned t = (unsigned)(uintptr_t)arg;
	char text[64];
	for (unsigned i = 0; i < PER_THREAD; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = (size_t)snprintf(text, sizeof(text), "t%u %u", t, i);
		e.caller = t + 1;
		if (kmsg_log_append(NULL, log_, &e) != 0)
			return (void *)1;
	}
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/kmsg-threads-XXXXXX", path[64];
	struct kmsg_create_opts o = KMSG_CREATE_OPTS_INIT;
	pthread_t th[THREADS];
	unsigned next[THREADS] = { 0 };
	int failed = 0, passed = 0;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/log", dir);
	o.size = 16 << 20;
	if (kmsg_log_create(&log_, path, &o, 0))
		return 1;
	for (unsigned t = 0; t < THREADS; t++)
		pthread_create(&th[t], NULL, writer, (void *)(uintptr_t)t);
	for (unsigned t = 0; t < THREADS; t++) {
		void *r;
		pthread_join(th[t], &r);
		r ? failed++ : passed++;
	}

	struct kmsg_reader *rd;
	struct kmsg_record rec;
	uint64_t prev = 0, n = 0;
	kmsg_reader_new(&rd, log_, 0);
	while (kmsg_reader_next(rd, &rec) == 1) {
		unsigned t, i;
		char buf[64];
		memcpy(buf, rec.text, rec.text_len < 63 ? rec.text_len : 63);
		buf[rec.text_len < 63 ? rec.text_len : 63] = 0;
		if (sscanf(buf, "t%u %u", &t, &i) != 2 || t >= THREADS || i != next[t] ||
		    (prev && rec.seq != prev + 1) || rec.caller != t + 1) {
			fprintf(stderr, "threads: record %lu out of place: %s\n",
				(unsigned long)rec.seq, buf);
			failed++;
			break;
		}
		next[t]++;
		prev = rec.seq;
		n++;
	}
	n == THREADS * PER_THREAD ? passed++ : failed++;
	kmsg_reader_free(rd);
	kmsg_log_close(log_);
	unlink(path);
	rmdir(dir);
	printf("threads: %lu records from %d threads checked\n", (unsigned long)n, THREADS);
	printf("threads: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
