/* crc32c.h - CRC-32C (Castagnoli), the checksum of every record and header. */
#ifndef KMSG_CRC32C_H
#define KMSG_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/*
 * Extends crc (0 to start) over len bytes of buf.  The value is the standard
 * CRC-32C (iSCSI, ext4): kmsg__crc32c_extend(0, "123456789", 9) == 0xe3069283.
 * Uses the SSE4.2 crc32 instruction where the CPU has it, a table otherwise.
 */
uint32_t kmsg__crc32c_extend(uint32_t crc, const void *buf, size_t len);

/*
 * Extends crc over pre_len bytes of pre, then copies len bytes from src to
 * dst extending it over them in the same pass, then over post_len bytes of
 * post: the reader's copy of a record out of the shared mapping, with the
 * words before and after that its checksum covers, in one call (it makes
 * one for every record it reads).  dst NULL: src is summed, not copied.
 */
uint32_t kmsg__crc32c_copy_framed(uint32_t crc, const void *pre, size_t pre_len,
				  void *dst, const void *src, size_t len,
				  const void *post, size_t post_len);

/* The portable table path, exported so tests can compare the two. */
uint32_t kmsg__crc32c_extend_sw(uint32_t crc, const void *buf, size_t len);

#endif
