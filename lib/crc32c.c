/*
 * crc32c.c - CRC-32C with a hardware path.
 *
 * zlib's crc32() costs about 130 ns per 100 bytes here, more than the whole
 * budget of an append; the SSE4.2 crc32 instruction does the same work in
 * under 20 ns.  The instruction path is chosen once, at first use, from
 * cpuid; a slicing-by-8 table serves CPUs without it and other
 * architectures.  Both compute the reflected polynomial 0x82f63b78 with the
 * usual pre- and post-inversion, so a file written on one machine verifies
 * on any other.
 */
#include "crc32c.h"

#include <string.h>

#define POLY 0x82f63b78u

static uint32_t table[8][256];

static void table_init(void)
{
	for (uint32_t n = 0; n < 256; n++) {
		uint32_t c = n;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ POLY : c >> 1;
		table[0][n] = c;
	}
	for (uint32_t n = 0; n < 256; n++)
		for (int k = 1; k < 8; k++)
			table[k][n] = (table[k - 1][n] >> 8) ^
				      table[0][table[k - 1][n] & 0xff];
}

static uint32_t sw_core(uint32_t c, const unsigned char *p, size_t len)
{
	while (len && ((uintptr_t)p & 7)) {
		c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
		len--;
	}
	while (len >= 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		w ^= c;  /* little-endian: the low byte is the first byte */
		c = table[7][w & 0xff] ^ table[6][(w >> 8) & 0xff] ^
		    table[5][(w >> 16) & 0xff] ^ table[4][(w >> 24) & 0xff] ^
		    table[3][(w >> 32) & 0xff] ^ table[2][(w >> 40) & 0xff] ^
		    table[1][(w >> 48) & 0xff] ^ table[0][w >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		c = table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
	return c;
}

static int table_ready;

uint32_t kmsg__crc32c_extend_sw(uint32_t crc, const void *buf, size_t len)
{
	if (!__atomic_load_n(&table_ready, __ATOMIC_ACQUIRE)) {
		/* Idempotent: racing threads write the same values. */
		table_init();
		__atomic_store_n(&table_ready, 1, __ATOMIC_RELEASE);
	}
	return ~sw_core(~crc, buf, len);
}

/* The portable path of kmsg__crc32c_copy_framed(). */
static uint32_t sw_copy_framed(uint32_t crc, const void *pre, size_t pre_len, void *dst,
			       const void *src, size_t len, const void *post, size_t post_len)
{
	/* the copy is summed, not the source, which may change meanwhile */
	if (dst)
		memcpy(dst, src, len);
	crc = kmsg__crc32c_extend_sw(crc, pre, pre_len);
	crc = kmsg__crc32c_extend_sw(crc, dst ? dst : src, len);
	return kmsg__crc32c_extend_sw(crc, post, post_len);
}

#if defined(__x86_64__)
/*
 * The hardware loop, on the inverted register value: len bytes of s folded
 * in, eight at a time, and copied to d on the way unless d is NULL (the
 * reader's copy of a record out of the shared mapping: each word is loaded
 * once, stored and folded in from the same register).
 */
__attribute__((target("sse4.2"), always_inline))
static inline uint64_t hw_run(uint64_t c, const unsigned char *s, unsigned char *d, size_t len)
{
	for (; len >= 8; s += 8, len -= 8) {
		uint64_t w;
		memcpy(&w, s, 8);
		if (d) {
			memcpy(d, &w, 8);
			d += 8;
		}
		c = __builtin_ia32_crc32di(c, w);
	}
	for (; len; len--) {
		if (d)
			*d++ = *s;
		c = __builtin_ia32_crc32qi((uint32_t)c, *s++);
	}
	return c;
}

__attribute__((target("sse4.2")))
static uint32_t hw_extend(uint32_t crc, const void *buf, size_t len)
{
	const unsigned char *p = buf;
	uint64_t c = ~crc;

	/* to a word boundary first: aligned loads from there on */
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
		len--;
	}
	return ~(uint32_t)hw_run(c, p, NULL, len);
}

static uint32_t (*resolve(void))(uint32_t, const void *, size_t)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("sse4.2") ? hw_extend : kmsg__crc32c_extend_sw;
}

__attribute__((target("sse4.2")))
static uint32_t hw_copy_framed(uint32_t crc, const void *pre, size_t pre_len, void *dst,
			       const void *src, size_t len, const void *post, size_t post_len)
{
	uint64_t c = hw_run(~crc, pre, NULL, pre_len);

	c = hw_run(c, src, dst, len);
	return ~(uint32_t)hw_run(c, post, NULL, post_len);
}

uint32_t kmsg__crc32c_copy_framed(uint32_t crc, const void *pre, size_t pre_len,
				  void *dst, const void *src, size_t len,
				  const void *post, size_t post_len)
{
	static uint32_t (*fn)(uint32_t, const void *, size_t, void *, const void *, size_t,
			      const void *, size_t);
	uint32_t (*f)(uint32_t, const void *, size_t, void *, const void *, size_t,
		      const void *, size_t) = __atomic_load_n(&fn, __ATOMIC_RELAXED);

	if (!f) {
		__builtin_cpu_init();
		f = __builtin_cpu_supports("sse4.2") ? hw_copy_framed : sw_copy_framed;
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
	}
	return f(crc, pre, pre_len, dst, src, len, post, post_len);
}

uint32_t kmsg__crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t (*fn)(uint32_t, const void *, size_t);
	uint32_t (*f)(uint32_t, const void *, size_t) =
		__atomic_load_n(&fn, __ATOMIC_RELAXED);

	if (!f) {
		f = resolve();
		__atomic_store_n(&fn, f, __ATOMIC_RELAXED);
	}
	return f(crc, buf, len);
}
#else
uint32_t kmsg__crc32c_extend(uint32_t crc, const void *buf, size_t len)
{
	return kmsg__crc32c_extend_sw(crc, buf, len);
}

uint32_t kmsg__crc32c_copy_framed(uint32_t crc, const void *pre, size_t pre_len,
				  void *dst, const void *src, size_t len,
				  const void *post, size_t post_len)
{
	return sw_copy_framed(crc, pre, pre_len, dst, src, len, post, post_len);
}
#endif
