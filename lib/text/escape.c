/*
 * escape.c - bytes made safe to print: dmesg's escaping of message text,
 * the inside of a JSON string, and /dev/kmsg's \xHH export.
 *
 * The text escaping is util-linux dmesg's, byte for byte, except where
 * dmesg lets a terminal be fooled:
 *
 *  - \r, \v, \f and the Unicode bidi controls (U+061C, U+200E, U+200F,
 *    U+202A..U+202E, U+2066..U+2069) are escaped: dmesg passes them, and
 *    they can rewrite what a terminal shows.  So are the characters that
 *    show as nothing or as a blank letter, and the line and paragraph
 *    separators (see cp_unsafe()): dmesg passes them too, and with them
 *    one text looks like another, or like two lines.  Unicode
 *    noncharacters are escaped as dmesg does in a UTF-8 locale; unassigned
 *    code points pass (dmesg's view of them depends on the C library's
 *    Unicode version).
 *  - In JSON a NUL does not cut the message short, and bytes that are not
 *    valid UTF-8 are written as the text \xNN.
 *
 * Most text needs no escaping at all: one scan finds the next byte that
 * may, and everything before it is copied as it is.
 */
#include <limits.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "text.h"

/*
 * Length of the valid UTF-8 sequence of more than one byte at s (at most
 * n bytes), its code point in *cp; 0 if there is none.  Overlong forms,
 * surrogates and code points past U+10FFFF are invalid, as for glibc's
 * mbrtowc(), so dmesg and kmsg escape the same bytes.
 */
static inline size_t utf8_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	unsigned c = s[0];
	unsigned lo = 0x80, hi = 0xbf;
	size_t len, i;
	uint32_t v;

	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
		v = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		v = c & 0x0f;
		if (c == 0xe0)
			lo = 0xa0;
		else if (c == 0xed)
			hi = 0x9f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		v = c & 0x07;
		if (c == 0xf0)
			lo = 0x90;
		else if (c == 0xf4)
			hi = 0x8f;
	} else {
		return 0;
	}
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (s[i] & 0x3f);
	}
	*cp = v;
	return len;
}

/*
 * Code points beyond ASCII that are escaped (kmsg(1) lists them): C1
 * controls (terminal commands of their own); bidi controls (they reorder
 * what a terminal shows); the line and paragraph separators U+2028 and
 * U+2029 (a line break to some readers); the format characters that show
 * as nothing (soft hyphen, combining grapheme joiner, Mongolian vowel
 * separator, zero-width space, non-joiner and joiner, word joiner and the
 * invisible operators, the deprecated U+206A..U+206F, BOM, interlinear
 * annotation, shorthand and musical format controls, tags) and the
 * fillers that show as a blank letter (Hangul U+115F, U+1160, U+3164,
 * U+FFA0; Khmer U+17B4, U+17B5): with them one text passes for another;
 * and noncharacters.  Variation selectors pass: emoji and CJK need them,
 * and they change only how the character before them looks.
 */
static inline int cp_unsafe(uint32_t cp)
{
	if (cp < 0xa0)
		return 1;
	if (cp < 0x2000)
		return cp == 0x00ad || cp == 0x034f || cp == 0x061c || cp == 0x115f ||
		       cp == 0x1160 || cp == 0x17b4 || cp == 0x17b5 || cp == 0x180e;
	if (cp < 0x2070)
		return (cp >= 0x200b && cp <= 0x200f) ||
		       (cp >= 0x2028 && cp <= 0x202e) || cp >= 0x2060;
	if (cp < 0xfdd0)
		return cp == 0x3164;
	if (cp <= 0xffff)
		return cp <= 0xfdef || cp == 0xfeff || cp == 0xffa0 ||
		       (cp >= 0xfff9 && cp <= 0xfffb) || cp >= 0xfffe;
	if ((cp & 0xfffe) == 0xfffe)
		return 1;
	return (cp >= 0x1bca0 && cp <= 0x1bca3) || (cp >= 0x1d173 && cp <= 0x1d17a) ||
	       (cp >= 0xe0000 && cp <= 0xe007f);
}

/*
 * Bytes that pass unchanged without a closer look, per output: printable
 * ASCII everywhere, tab in message text, minus JSON's and /dev/kmsg's
 * specials ('"' is 0x22, '\\' is 0x5c).
 */
static const unsigned char pass_text[256] = {
	['\t'] = 1, [0x20 ... 0x7e] = 1,
};
static const unsigned char pass_field[256] = {
	[0x20 ... 0x7e] = 1,
};
static const unsigned char pass_json[256] = {
	[0x20 ... 0x21] = 1, [0x23 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};
static const unsigned char pass_kmsg[256] = {
	[0x20 ... 0x5b] = 1, [0x5d ... 0x7e] = 1,
};

#define ONES  UINT64_C(0x0101010101010101)
#define HIGHS UINT64_C(0x8080808080808080)

enum pass_kind { PASS_TEXT, PASS_FIELD, PASS_JSON, PASS_KMSG };

/*
 * Nonzero if any of the 8 bytes in x may need a closer look: a byte below
 * 0x20 or from 0x7f up, and for JSON '"' and '\\', for /dev/kmsg '\\'.
 * Never zero when such a byte is there; may be nonzero for a tab.
 */
static inline uint64_t word_special(uint64_t x, enum pass_kind kind)
{
	uint64_t m = ((x - ONES * 0x20) & ~x) | x | (x + ONES);
	uint64_t q;

	if (kind == PASS_JSON || kind == PASS_KMSG) {
		q = x ^ (ONES * '\\');
		m |= (q - ONES) & ~q;
	}
	if (kind == PASS_JSON) {
		q = x ^ (ONES * '"');
		m |= (q - ONES) & ~q;
	}
	return m & HIGHS;
}

/*
 * The index of the first byte from i on that pass[] does not let through,
 * or len; eight bytes at a time while they are all plain.
 */
static inline size_t scan_plain(const unsigned char *s, size_t i, size_t len,
				const unsigned char *pass, enum pass_kind kind)
{
	uint64_t x;
	size_t stop;

	for (;;) {
		while (len - i >= 8) {
			memcpy(&x, s + i, 8);
			if (word_special(x, kind))
				break;
			i += 8;
		}
		stop = len - i >= 8 ? i + 8 : len;
		while (i < stop && pass[s[i]])
			i++;
		if (i < stop || i == len)
			return i;
	}
}

#ifdef __SSE2__
/*
 * One bit per byte of v (bit 0 the first) that the pass[] table of kind
 * does not let through: exactly those, unlike word_special().  As signed
 * bytes, everything from 0x80 up is below 0x20.
 */
static inline unsigned vec_special(__m128i v, enum pass_kind kind)
{
	__m128i m = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
				 _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));

	if (kind == PASS_TEXT)
		m = _mm_andnot_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\t')), m);
	if (kind == PASS_JSON || kind == PASS_KMSG)
		m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
	if (kind == PASS_JSON)
		m = _mm_or_si128(m, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
	return (unsigned)_mm_movemask_epi8(m);
}

/* One bit per byte of v from lo to hi, as signed bytes. */
static inline unsigned vec_range(__m128i v, signed char lo, signed char hi)
{
	return (unsigned)_mm_movemask_epi8(
		_mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8((char)(lo - 1))),
			      _mm_cmplt_epi8(v, _mm_set1_epi8((char)(hi + 1)))));
}

/* One bit per byte of v that is c. */
static inline unsigned vec_eq(__m128i v, signed char c)
{
	return (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8((char)c)));
}

/*
 * One bit per byte of v that may be copied as it is: the bytes pass[] of
 * kind lets through, and with utf8 also the bytes of whole UTF-8
 * sequences that need no closer look, those whose every form is valid
 * and printable: two bytes led by 0xc3..0xcc, 0xce..0xd7 or 0xd9..0xdf
 * (U+00C0 to U+07FF but C1 controls, soft hyphen, the U+034x block with
 * the combining grapheme joiner and the U+06xx block with U+061C), three
 * led by 0xe1, 0xe3..0xec or 0xee (U+1000-1FFF, U+3000-CFFF, U+E000-EFFF:
 * most scripts, CJK among them), but for 0xe1 and 0xe3 not with 0x85,
 * 0x9e or 0xa0 next (the blocks of the Hangul and Khmer fillers and the
 * Mongolian vowel separator): none of it is a character cp_unsafe()
 * names, a surrogate or a noncharacter.  Other sequences, and one not
 * whole within v, are left to the scalar path.  Leads before byte from
 * are not counted, so that a continuation byte there never passes for
 * part of one.
 */
static inline unsigned vec_pass(__m128i v, enum pass_kind kind, int utf8,
				unsigned from)
{
	unsigned ok = ~vec_special(v, kind) & 0xffff;
	unsigned cont, l2, l3, need, blocks;

	if (!utf8 || _mm_movemask_epi8(v) == 0)
		return ok;
	/* as signed bytes: 0x80..0xbf are those below -64, 0xc3 is -61,
	 * 0xcd -51, 0xe1 -31, 0x85 -123, 0x9e -98, 0xa0 -96 */
	cont = (unsigned)_mm_movemask_epi8(_mm_cmplt_epi8(v, _mm_set1_epi8(-64)));
	l2 = ((vec_range(v, -61, -41) & ~vec_eq(v, -51)) | vec_range(v, -39, -33)) &
	     ~0u << from;
	blocks = (unsigned)_mm_movemask_epi8(_mm_or_si128(
		_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(-123)),
			     _mm_cmpeq_epi8(v, _mm_set1_epi8(-98))),
		_mm_cmpeq_epi8(v, _mm_set1_epi8(-96))));
	l3 = (((vec_eq(v, -31) | vec_eq(v, -29)) & ~(blocks >> 1)) |
	      vec_range(v, -28, -20) | vec_eq(v, -18)) & ~0u << from;
	need = (l2 | l3) << 1 | l3 << 2;
	ok |= (cont & need) | (l2 & cont >> 1) | (l3 & cont >> 1 & cont >> 2);
	return ok & 0xffff;
}
#endif

/*
 * Copies the bytes from s[i] on that pass[] lets through to *pp, up to the
 * first one it does not let through, or len; returns that byte's index
 * and moves *pp past the copy.  same says how many bytes just before *pp
 * are the bytes just before s + i, copied as they were.
 *
 * With vec (and SSE2), 16 bytes are tested and stored at a time, so a
 * store may reach past the copy, but never past the room the bytes from i
 * on need at one byte each; the last few bytes of the text are taken as
 * the last 16 of it, stored over the copy they end, where same allows.
 * With utf8 too, the UTF-8 sequences vec_pass() knows to be printable are
 * copied as part of the run (as the scalar caller would copy them).
 * Without vec, eight bytes at a time and then memcpy(): the scalar path,
 * which the fuzzer holds the vector path to.
 */
static inline size_t copy_plain(char **pp, const unsigned char *s, size_t i,
				size_t len, size_t same, const unsigned char *pass,
				enum pass_kind kind, int vec, int utf8)
{
	char *p = *pp;
	size_t j;

#ifdef __SSE2__
	if (vec) {
		size_t i0 = i, r;
		__m128i v;
		unsigned m;

		while (len - i >= 16) {
			v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
			_mm_storeu_si128((__m128i *)(void *)p, v);
			m = ~vec_pass(v, kind, utf8, 0) & 0xffff;
			j = m ? (size_t)__builtin_ctz(m) : 16;
			i += j;
			p += j;
			/* Stopped before a sequence cut by the end of v, or
			 * before a byte to look at: the next 16 start there,
			 * and only that byte goes to the caller. */
			if (j == 0) {
				*pp = p;
				return i;
			}
		}
		r = len - i;
		if (r == 0 || (len >= 16 && same + (i - i0) >= 16 - r)) {
			if (r) {
				v = _mm_loadu_si128((const __m128i *)(const void *)(s + len - 16));
				_mm_storeu_si128((__m128i *)(void *)(p - (16 - r)), v);
				m = (~vec_pass(v, kind, utf8, 16 - (unsigned)r) & 0xffff) >> (16 - r);
				r = m ? (size_t)__builtin_ctz(m) : r;
			}
			*pp = p + r;
			return i + r;
		}
	}
#else
	(void)vec;
	(void)same;
#endif
	(void)utf8;
	j = scan_plain(s, i, len, pass, kind);
	*pp = put_str(p, (const char *)s + i, j - i);
	return j;
}

/* n (at most 4) bytes as they are: too few for a call to memcpy(). */
static inline char *put_few(char *p, const unsigned char *s, size_t n)
{
	for (size_t k = 0; k < n; k++)
		p[k] = (char)s[k];
	return p + n;
}

/* Newlines in s, which decide how much room indenting takes. */
size_t kmsg__count_newlines(const char *s, size_t len)
{
	const char *end = s + len;
	size_t n = 0;

	while (s < end && (s = memchr(s, '\n', (size_t)(end - s))) != NULL) {
		n++;
		s++;
	}
	return n;
}

/*
 * Writes text as dmesg does: printable ASCII, tab, newline and printable
 * UTF-8 as they are, every other byte as \xNN (see cp_unsafe()); with
 * ascii (a terminal whose charset is not UTF-8) every byte from 0x80 up
 * as \xNN, as dmesg does in such a locale.  A newline is followed by
 * indent spaces, so continuation lines stand under the first line's text,
 * unless a NUL comes next (as in dmesg, which indents a newline at the end
 * of the text too: blank lines after a record keep the indent).  Needs
 * 4 * len + newlines * indent bytes of room.  vec as for copy_plain().
 */
static inline char *put_text(char *p, const char *text, size_t len,
			     size_t indent, enum esc_mode mode, int ascii, int vec)
{
	const unsigned char *s = (const unsigned char *)text;
	const unsigned char *pass = mode == ESC_FIELD ? pass_field : pass_text;
	enum pass_kind kind = mode == ESC_FIELD ? PASS_FIELD : PASS_TEXT;
	size_t i = 0, j, n, same = 0;
	uint32_t cp;

	while (i < len) {
		j = copy_plain(&p, s, i, len, same, pass, kind, vec, !ascii);
		same += j - i;
		if (j == len)
			break;
		i = j;
		if (s[i] == '\n' && mode != ESC_FIELD) {
			*p++ = '\n';
			same++;
			if (indent && (i + 1 == len || s[i + 1] != '\0')) {
				memset(p, ' ', indent);
				p += indent;
				same = 0;
			}
			i++;
		} else if (mode == ESC_NONE) {
			*p++ = (char)s[i++];
			same++;
		} else if (s[i] < 0x80 || ascii) {
			p = put_hex(p, s[i++]);
			same = 0;
		} else if ((n = utf8_seq(s + i, len - i, &cp)) == 0) {
			p = put_hex(p, s[i++]);
			same = 0;
		} else if (cp_unsafe(cp)) {
			for (; n > 0; n--)
				p = put_hex(p, s[i++]);
			same = 0;
		} else {
			p = put_few(p, s + i, n);
			i += n;
			same += n;
		}
	}
	return p;
}

char *kmsg__put_text(char *p, const char *text, size_t len, size_t indent,
		     enum esc_mode mode, int ascii)
{
	return put_text(p, text, len, indent, mode, ascii, 1);
}

char *kmsg__put_text_scalar(char *p, const char *text, size_t len,
			    size_t indent, enum esc_mode mode, int ascii)
{
	return put_text(p, text, len, indent, mode, ascii, 0);
}

/* \uXXXX, and a surrogate pair for code points past the BMP. */
static char *put_json_u(char *p, uint32_t cp)
{
	if (cp > 0xffff) {
		cp -= 0x10000;
		p = put_json_u(p, 0xd800 | cp >> 10);
		return put_json_u(p, 0xdc00 | (cp & 0x3ff));
	}
	p[0] = '\\';
	p[1] = 'u';
	p[2] = kmsg__hex_digits[cp >> 12 & 15];
	p[3] = kmsg__hex_digits[cp >> 8 & 15];
	p[4] = kmsg__hex_digits[cp >> 4 & 15];
	p[5] = kmsg__hex_digits[cp & 15];
	return p + 6;
}

/*
 * Writes text as the inside of a JSON string, as dmesg 2.41 does (\" \\
 * \b \t \n \f \r, \u00xx for other controls); further, unless noesc, DEL,
 * C1 and what cp_unsafe() names as \uXXXX, which any JSON reader
 * turns back into the same characters.  Bytes that are not UTF-8 cannot
 * be in a JSON string: each is written as the six characters "\\xNN",
 * which read as the text \xNN the other outputs show.  Needs 6 * len bytes.
 */
static inline char *put_json_text(char *p, const char *text, size_t len,
				  int noesc, int vec)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, j, n, same = 0;
	uint32_t cp;
	unsigned char c;

	while (i < len) {
		j = copy_plain(&p, s, i, len, same, pass_json, PASS_JSON, vec, 1);
		same += j - i;
		if (j == len)
			break;
		i = j;
		c = s[i];
		if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
			i++;
			same = 0;
		} else if (c < 0x20) {
			*p++ = '\\';
			switch (c) {
			case '\b': *p++ = 'b'; break;
			case '\t': *p++ = 't'; break;
			case '\n': *p++ = 'n'; break;
			case '\f': *p++ = 'f'; break;
			case '\r': *p++ = 'r'; break;
			default:
				p = put_json_u(p - 1, c);
				break;
			}
			i++;
			same = 0;
		} else if (c == 0x7f) {
			if (noesc) {
				*p++ = (char)c;
				same++;
			} else {
				p = put_json_u(p, c);
				same = 0;
			}
			i++;
		} else if ((n = utf8_seq(s + i, len - i, &cp)) == 0) {
			*p++ = '\\';
			p = put_hex(p, c);
			i++;
			same = 0;
		} else {
			if (!noesc && cp_unsafe(cp)) {
				p = put_json_u(p, cp);
				same = 0;
			} else {
				p = put_few(p, s + i, n);
				same += n;
			}
			i += n;
		}
	}
	return p;
}

int kmsg__utf8_valid(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, n;
	uint32_t cp;

	while (i < len) {
		if (s[i] < 0x80) {
			i++;
			continue;
		}
		n = utf8_seq(s + i, len - i, &cp);
		if (n == 0)
			return 0;
		i += n;
	}
	return 1;
}

char *kmsg__put_json_text(char *p, const char *text, size_t len, int noesc)
{
	return put_json_text(p, text, len, noesc, 1);
}

char *kmsg__put_json_text_scalar(char *p, const char *text, size_t len, int noesc)
{
	return put_json_text(p, text, len, noesc, 0);
}

/*
 * Writes bytes as /dev/kmsg does: < 0x20, >= 0x7f and backslash as \xHH,
 * the rest as they are.  Needs 4 * len bytes.
 */
static inline char *put_kmsg_text(char *p, const char *text, size_t len, int vec)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, j;

	while (i < len) {
		j = copy_plain(&p, s, i, len, 0, pass_kmsg, PASS_KMSG, vec, 0);
		if (j == len)
			break;
		p = put_hex(p, s[j]);
		i = j + 1;
	}
	return p;
}

char *kmsg__put_kmsg_text(char *p, const char *text, size_t len)
{
	return put_kmsg_text(p, text, len, 1);
}

char *kmsg__put_kmsg_text_scalar(char *p, const char *text, size_t len)
{
	return put_kmsg_text(p, text, len, 0);
}

/* The public face of put_text() for message text: see kmsg.h. */
int kmsg_text_escape(char *buf, size_t size, const char *text, size_t len,
		     unsigned flags)
{
	char *end;

	if (buf == NULL || (text == NULL && len) ||
	    (flags & ~(KMSG_FMT_NOESCAPE | KMSG_FMT_ASCII)) ||
	    len > ((size_t)INT_MAX - 1) / 4 || size < KMSG_TEXT_ESCAPE_SIZE(len))
		return KMSG_EINVAL;
	end = len ? kmsg__put_text(buf, text, len, 0,
				   flags & KMSG_FMT_NOESCAPE ? ESC_NONE : ESC_TEXT,
				   (flags & KMSG_FMT_ASCII) != 0) : buf;
	*end = '\0';
	return (int)(end - buf);
}

/* The public face of put_json_text(): see kmsg.h. */
int kmsg_json_escape(char *buf, size_t size, const char *text, size_t len,
		     unsigned flags)
{
	char *end;

	if (buf == NULL || (text == NULL && len) || (flags & ~KMSG_FMT_NOESCAPE) ||
	    len > ((size_t)INT_MAX - 1) / 6 || size < KMSG_JSON_ESCAPE_SIZE(len))
		return KMSG_EINVAL;
	end = len ? kmsg__put_json_text(buf, text, len, flags != 0) : buf;
	*end = '\0';
	return (int)(end - buf);
}
