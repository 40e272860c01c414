/* dump.c - compressed snapshots of a log.  (Placeholder: being written.) */
#include "internal.h"

#include <errno.h>

int kmsg_dump_write(uint64_t *records, struct kmsg_log *log, int fd, int level)
{
	(void)records; (void)log; (void)fd; (void)level;
	return -ENOSYS;
}

int kmsg_dump_open(struct kmsg_log **out, const char *path)
{
	(void)out; (void)path;
	return -ENOSYS;
}
