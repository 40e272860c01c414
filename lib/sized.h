/*
 * sized.h - the structs that grow (kmsg.h, "Structs that grow"): what the
 * library does with the size a caller's header gave it.  Shared by the
 * core and the text layer, and depends on nothing of either.
 */
#ifndef KMSG_SIZED_H
#define KMSG_SIZED_H

#include <stddef.h>
#include <string.h>

/* Their first versions' sizes, below which a caller's struct is refused. */
#define KMSG__RECORD_SIZE_1 (offsetof(struct kmsg_record, seq_id) + sizeof(uint64_t))
#define KMSG__STAT_SIZE_1   (offsetof(struct kmsg_stat, prev2_seq_id) + sizeof(uint64_t))
#define KMSG__BOOT_SIZE_1   (offsetof(struct kmsg_boot, last_real_ns) + sizeof(int64_t))

/*
 * A struct the library filled (mine, n bytes: its sizeof) given to a
 * caller's of size bytes: the fields both know, and zeros in those the
 * caller's has beyond the library's.
 */
static inline void kmsg__put_sized(void *dst, size_t size, const void *mine, size_t n)
{
	memcpy(dst, mine, size < n ? size : n);
	if (size > n)
		memset((char *)dst + n, 0, size - n);
}

#endif
