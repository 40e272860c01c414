/*
 * heapcount.c - libkmsg-heapcount.so, an LD_PRELOAD shim that reports the
 * peak heap of a process: the most bytes it held from malloc, calloc,
 * realloc, posix_memalign, aligned_alloc and memalign at any one time.
 *
 *   HEAPCOUNT_OUT=/tmp/peak LD_PRELOAD=build/libkmsg-heapcount.so kmsg read ...
 *
 * writes "peak_heap_bytes=N" to HEAPCOUNT_OUT when the process exits
 * (normally or by SIGINT/SIGTERM/SIGHUP handled with exit, as kmsg does).
 * A "%p" in the name becomes the process id: children inherit the
 * variable, and each must not overwrite the others' figures.
 * Sizes are the usable sizes malloc reports, so the figure is what the
 * allocator really handed out; the log's mapping, stacks and the program
 * image are not heap and are not counted (the peak RSS would count the
 * mapped log pages a reader touched, which are page cache, not memory the
 * reader holds).
 *
 * The real allocator functions are glibc's __libc_* entry points, which
 * need no dlsym (dlsym itself may allocate).
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void __libc_free(void *);

static _Atomic long long cur, peak;

static void account(long long delta)
{
	long long now = atomic_fetch_add(&cur, delta) + delta;
	long long p = atomic_load(&peak);
	while (now > p && !atomic_compare_exchange_weak(&peak, &p, now))
		;
}

void *malloc(size_t n)
{
	void *p = __libc_malloc(n);
	if (p)
		account((long long)malloc_usable_size(p));
	return p;
}

void *calloc(size_t n, size_t m)
{
	void *p = __libc_calloc(n, m);
	if (p)
		account((long long)malloc_usable_size(p));
	return p;
}

void *realloc(void *old, size_t n)
{
	long long before = old ? (long long)malloc_usable_size(old) : 0;
	void *p = __libc_realloc(old, n);
	if (p)
		account((long long)malloc_usable_size(p) - before);
	else if (!n && old)
		account(-before);  /* realloc(p, 0) freed it */
	return p;
}

void free(void *p)
{
	if (p)
		account(-(long long)malloc_usable_size(p));
	__libc_free(p);
}

void *memalign(size_t align, size_t n)
{
	void *p = __libc_memalign(align, n);
	if (p)
		account((long long)malloc_usable_size(p));
	return p;
}

void *aligned_alloc(size_t align, size_t n)
{
	return memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = memalign(align, n);
	if (!p)
		return 12; /* ENOMEM */
	*out = p;
	return 0;
}

__attribute__((destructor))
static void report(void)
{
	const char *path = getenv("HEAPCOUNT_OUT"), *pp;
	char name[4096];
	FILE *f;
	if (!path || !*path)
		return;
	pp = strstr(path, "%p");
	if (pp)
		snprintf(name, sizeof(name), "%.*s%ld%s", (int)(pp - path), path,
			 (long)getpid(), pp + 2);
	else
		snprintf(name, sizeof(name), "%s", path);
	f = fopen(name, "w");
	if (!f)
		return;
	fprintf(f, "peak_heap_bytes=%lld\n", (long long)atomic_load(&peak));
	fclose(f);
}
