/*
 * os.c - what libkmsg asks of the system: clocks, caller ids, the
 * boot id, random numbers, descriptors kept off 0-2, OFD locks, short
 * naps.  Nothing here knows the file format.
 */
#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int64_t kmsg__clock_ns(int clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

KMSG_TLS uint32_t kmsg__caller_cache;  /* gettid() is a system call */

/* The inode of this process's pid namespace, 0 for the initial one (whose
 * inode is fixed, PROC_PID_INIT_INO) or when /proc does not tell; -1 not
 * looked up yet (again after a fork, whose child may be in another). */
static _Atomic int64_t pid_ns = -1;

uint32_t kmsg__caller_id(uint32_t id)
{
	int64_t ns = atomic_load_explicit(&pid_ns, memory_order_relaxed);

	if (ns < 0) {
		struct stat st;
		ns = stat("/proc/self/ns/pid", &st) == 0 && st.st_ino != 0xEFFFFFFCu
		     ? (int64_t)st.st_ino : 0;
		atomic_store_explicit(&pid_ns, ns, memory_order_relaxed);
	}
	if (ns == 0)
		return id;
	return (id ^ ((uint32_t)ns * 0x9E3779B1u)) | 0x80000000u;
}

uint32_t kmsg__caller_slow(void)
{
	kmsg__caller_cache = kmsg__caller_id((uint32_t)gettid());
	return kmsg__caller_cache;
}

void kmsg__caller_forget(void)
{
	kmsg__caller_cache = 0;
	atomic_store_explicit(&pid_ns, -1, memory_order_relaxed);
}

/* The first 8 bytes of this boot's random id, 0 if the kernel has none. */
uint64_t kmsg__read_boot_id(void)
{
	char buf[64];
	uint64_t id = 0;
	int n = 0;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t len;

	if (fd < 0)
		return 0;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	for (ssize_t i = 0; i < len && n < 16; i++) {
		int c = buf[i], v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else
			continue;
		id = id << 4 | (uint64_t)v;
		n++;
	}
	return id;
}

uint64_t kmsg__random64(void)
{
	uint64_t r;

	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == sizeof(r))
		return r;
	/* No entropy yet (early boot): what only needs to differ, differs. */
	r = (uint64_t)kmsg__clock_ns(CLOCK_MONOTONIC) * UINT64_C(0x9e3779b97f4a7c15);
	return r ^ ((uint64_t)getpid() << 32) ^ (uint64_t)kmsg__clock_ns(CLOCK_REALTIME);
}

/*
 * Moves a descriptor the library keeps off 0, 1 and 2.  A process started
 * with stdin, stdout or stderr closed gets them back from the first open():
 * a log kept there would receive whatever the program prints or read as
 * its input.  Returns the new descriptor (the old one closed), or -errno
 * with fd closed.
 */
int kmsg__fd_off_stdio(int fd)
{
	int nfd;

	if (fd < 0 || fd > STDERR_FILENO)
		return fd;
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	nfd = nfd < 0 ? -errno : nfd;
	close(fd);
	return nfd;
}

int kmsg__ofd_lock(int fd, int cmd, short type, uint64_t off, uint64_t len, struct flock *out)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = (off_t)off, .l_len = (off_t)len };
	if (fcntl(fd, cmd, &fl) < 0)
		return -errno;
	if (out)
		*out = fl;
	return 0;
}

int kmsg__have_prefetchw;

void kmsg__cpu_init(void)
{
#if defined(__x86_64__)
	unsigned a, b, c, d;

	/* CPUID 0x80000001: ECX bit 8, PREFETCHW (3DNowPrefetch) */
	__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000000u), "c"(0));
	if (a >= 0x80000001u) {
		__asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(0x80000001u), "c"(0));
		kmsg__have_prefetchw = (c >> 8) & 1;
	}
#endif
}

void kmsg__cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

void kmsg__nap(int64_t ns)
{
	struct timespec ts = { 0, ns > 999999999 ? 999999999 : ns };

	if (ns <= 0)
		sched_yield();
	else
		nanosleep(&ts, NULL);
}
