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

/* Copies len bytes from src to dst and extends crc over them, in one pass
 * (the reader's copy of a record out of the shared mapping). */
uint32_t kmsg__crc32c_copy(uint32_t crc, void *dst, const void *src, size_t len);

/* The portable table path, exported so tests can compare the two. */
uint32_t kmsg__crc32c_extend_sw(uint32_t crc, const void *buf, size_t len);

#endif
