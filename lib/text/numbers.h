/*
 * numbers.h - the number and string writers of the text layer.
 *
 * Each writes at p, which must have room, and returns the end of what it
 * wrote; nothing is NUL-terminated.  Numbers are written by hand: printf()
 * per record caps a renderer near 11 M records/s, these reach several
 * times that.
 */
#ifndef KMSG_TEXT_NUMBERS_H
#define KMSG_TEXT_NUMBERS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

static const char kmsg__hex_digits[] = "0123456789abcdef";

static const char kmsg__digit_pairs[] =
	"00010203040506070809101112131415161718192021222324"
	"25262728293031323334353637383940414243444546474849"
	"50515253545556575859606162636465666768697071727374"
	"75767778798081828384858687888990919293949596979899";

static inline char *put_str(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

#define PUT_LIT(p, lit) put_str((p), (lit), sizeof(lit) - 1)

static inline char *put_cstr(char *p, const char *s)
{
	return put_str(p, s, strlen(s));
}

/* v (0..99) as two digits. */
static inline char *put_2d(char *p, unsigned v)
{
	memcpy(p, kmsg__digit_pairs + 2 * v, 2);
	return p + 2;
}

/* v in decimal, no padding. */
static inline char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	char *t = tmp + sizeof(tmp);

	while (v >= 100) {
		t -= 2;
		memcpy(t, kmsg__digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		t -= 2;
		memcpy(t, kmsg__digit_pairs + 2 * v, 2);
	} else {
		*--t = (char)('0' + v);
	}
	return put_str(p, t, (size_t)(tmp + sizeof(tmp) - t));
}

static inline char *put_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return put_u64(p, -(uint64_t)v);
	}
	return put_u64(p, (uint64_t)v);
}

/* s left-aligned in width columns (as printf's %-*s). */
static inline char *put_left(char *p, const char *s, size_t width)
{
	size_t len = strlen(s);

	p = put_str(p, s, len);
	if (len < width) {
		memset(p, ' ', width - len);
		p += width - len;
	}
	return p;
}

/* s right-aligned in width columns (as printf's %*s). */
static inline char *put_padded(char *p, const char *s, size_t len, size_t width)
{
	if (len < width) {
		memset(p, ' ', width - len);
		p += width - len;
	}
	return put_str(p, s, len);
}

/*
 * us microseconds as seconds with six decimals, right-aligned in width
 * columns, with a '+' before values >= 0 if plus: the text printf's
 * "%*.06f" / "%+*.06f" gives for us / 1e6.  dmesg's "%5ld.%06ld" is the
 * same text for width 12.  Integer arithmetic gives exactly the digits the
 * double would round to.
 */
static inline char *put_fixed(char *p, int64_t us, size_t width, int plus)
{
	/* 10^1 .. 10^13: seconds of an int64_t count of microseconds have
	 * at most 13 digits */
	static const uint64_t tens[13] = {
		UINT64_C(10), UINT64_C(100), UINT64_C(1000), UINT64_C(10000),
		UINT64_C(100000), UINT64_C(1000000), UINT64_C(10000000),
		UINT64_C(100000000), UINT64_C(1000000000), UINT64_C(10000000000),
		UINT64_C(100000000000), UINT64_C(1000000000000),
		UINT64_C(10000000000000),
	};
	uint64_t a = us < 0 ? -(uint64_t)us : (uint64_t)us;
	uint64_t sec = a / 1000000, v;
	unsigned frac = (unsigned)(a % 1000000);
	size_t ndig = 1, len;
	char *d;

	/* Straight into p, digits written backwards: this runs once per
	 * line, and a scratch buffer cost two small memcpy calls.  The
	 * digits are counted by comparisons, which do not wait on each
	 * other as a chain of divisions does. */
	while (ndig <= 13 && sec >= tens[ndig - 1])
		ndig++;
	len = ndig + 7 + (us < 0 || plus);
	for (; len < width; width--)
		*p++ = ' ';
	if (us < 0)
		*p++ = '-';
	else if (plus)
		*p++ = '+';
	d = p + ndig;
	for (v = sec; v >= 100; v /= 100) {
		d -= 2;
		memcpy(d, kmsg__digit_pairs + 2 * (v % 100), 2);
	}
	if (v >= 10)
		memcpy(d - 2, kmsg__digit_pairs + 2 * v, 2);
	else
		d[-1] = (char)('0' + v);
	p += ndig;
	*p++ = '.';
	p = put_2d(p, frac / 10000);
	p = put_2d(p, frac / 100 % 100);
	return put_2d(p, frac % 100);
}

/* c as the four characters \xNN, lowercase hex. */
static inline char *put_hex(char *p, unsigned char c)
{
	p[0] = '\\';
	p[1] = 'x';
	p[2] = kmsg__hex_digits[c >> 4];
	p[3] = kmsg__hex_digits[c & 15];
	return p + 4;
}

#endif /* KMSG_TEXT_NUMBERS_H */
