/* test_crc32c.c - the record checksum: standard values, both code paths. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"

Test(crc32c, standard_check_value)
{
	/* The CRC-32C check value every implementation publishes. */
	cr_assert_eq(kmsg__crc32c_extend(0, "123456789", 9), 0xe3069283u);
	cr_assert_eq(kmsg__crc32c_extend_sw(0, "123456789", 9), 0xe3069283u);
}

Test(crc32c, rfc3720_vectors)
{
	unsigned char buf[32];
	memset(buf, 0, sizeof(buf));
	cr_assert_eq(kmsg__crc32c_extend(0, buf, 32), 0x8a9136aau);
	memset(buf, 0xff, sizeof(buf));
	cr_assert_eq(kmsg__crc32c_extend(0, buf, 32), 0x62a8ab43u);
	for (int i = 0; i < 32; i++)
		buf[i] = (unsigned char)i;
	cr_assert_eq(kmsg__crc32c_extend(0, buf, 32), 0x46dd794eu);
}

Test(crc32c, paths_agree_at_every_length_and_alignment)
{
	unsigned char buf[600];
	srand(7);
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (unsigned char)rand();
	for (size_t off = 0; off < 8; off++)
		for (size_t len = 0; len + off <= sizeof(buf); len += 13)
			cr_assert_eq(kmsg__crc32c_extend(0, buf + off, len),
				     kmsg__crc32c_extend_sw(0, buf + off, len),
				     "off %zu len %zu", off, len);
}

Test(crc32c, extending_equals_one_pass)
{
	const char *s = "the quick brown fox jumps over the lazy dog";
	size_t n = strlen(s);
	for (size_t cut = 0; cut <= n; cut++)
		cr_assert_eq(kmsg__crc32c_extend(kmsg__crc32c_extend(0, s, cut), s + cut, n - cut),
			     kmsg__crc32c_extend(0, s, n));
}

/* The reader copies records out of the ring with kmsg__crc32c_copy_framed:
 * the copy must be exact and the CRC the one of the words before, the
 * bytes and the words after, at every length and alignment, chained onto a
 * running CRC. */
Test(crc32c, copy_and_checksum_in_one_pass)
{
	unsigned char src[300], dst[310], pre[40], post[24];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (unsigned char)(i * 131 + 7);
	for (size_t i = 0; i < sizeof(pre); i++)
		pre[i] = (unsigned char)(i * 29 + 1);
	for (size_t i = 0; i < sizeof(post); i++)
		post[i] = (unsigned char)(i * 53 + 3);
	for (size_t off = 0; off < 8; off++)
		for (size_t n = 0; n + off <= 280; n++)
			for (size_t frame = 0; frame <= 24; frame += 12) {
				uint32_t want = kmsg__crc32c_extend_sw(0x12345678, pre, frame + 16);
				want = kmsg__crc32c_extend_sw(want, src + off, n);
				want = kmsg__crc32c_extend_sw(want, post, frame);
				memset(dst, 0xee, sizeof(dst));
				uint32_t c = kmsg__crc32c_copy_framed(0x12345678, pre, frame + 16,
								      dst + off, src + off, n,
								      post, frame);
				cr_assert_eq(c, want, "n %zu off %zu frame %zu", n, off, frame);
				cr_assert_eq(memcmp(dst + off, src + off, n), 0);
				cr_assert_eq(dst[off + n], 0xee, "nothing past the end is written");
			}
}
