/*
 * fuzz_text.c - the text parsers and renderers: dmesg raw text lines,
 * priorities and <N> prefixes, and every output format and time format of
 * the renderer over the parsed records (fields made from the input too);
 * the same input as /dev/kmsg records, rendered, and each written back as
 * /dev/kmsg text and read again to the same bytes;
 * and each escaper's vector fast path against its scalar path, byte for
 * byte, in buffers of exactly the room each promises to need.
 */
#include <kmsg/kmsg.h>
#include "text/text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * fast and scalar, each writing at a_ or b_ (buffers of exactly room
 * bytes, so that ASan sees a store past the room), write the same bytes.
 */
#define SAME_BOTH_WAYS(room, fast, scalar) do {				\
	char *a_ = malloc((room) ? (room) : 1);				\
	char *b_ = malloc((room) ? (room) : 1);				\
	char *ea_ = (fast), *eb_ = (scalar);				\
	if (ea_ - a_ != eb_ - b_ || (size_t)(ea_ - a_) > (room) ||	\
	    memcmp(a_, b_, (size_t)(ea_ - a_)) != 0)			\
		__builtin_trap();					\
	free(a_);							\
	free(b_);							\
} while (0)

/*
 * The escapers' fast paths give what their scalar paths give.  The first
 * byte picks the mode, the rest is the text, taken from each of its first
 * 17 bytes on so that every alignment and tail length is seen.
 */
static void escapers_agree(const uint8_t *data, size_t size)
{
	unsigned sel = size ? data[0] : 0;
	enum esc_mode mode = (enum esc_mode)(sel % 3);
	int ascii = sel >> 2 & 1, noesc = sel >> 3 & 1;
	size_t indent = sel >> 4;

	for (size_t off = 1; off <= 17 && off <= size; off++) {
		const char *t = (const char *)data + off;
		size_t len = size - off, nl = kmsg__count_newlines(t, len);
		size_t room = 4 * len + nl * indent;

		SAME_BOTH_WAYS(room, kmsg__put_text(a_, t, len, indent, mode, ascii),
			       kmsg__put_text_scalar(b_, t, len, indent, mode, ascii));
		SAME_BOTH_WAYS(6 * len, kmsg__put_json_text(a_, t, len, noesc),
			       kmsg__put_json_text_scalar(b_, t, len, noesc));
		SAME_BOTH_WAYS(4 * len, kmsg__put_kmsg_text(a_, t, len),
			       kmsg__put_kmsg_text_scalar(b_, t, len));
	}
}

/*
 * Reads /dev/kmsg text s (n bytes) that holds one record, and renders it
 * with k; its length, the text in *out (k's).  Traps unless it is one.
 */
static int read_back(const char **out, struct kmsg_fmt *k, const char *s, size_t n)
{
	struct kmsg_devkmsg *p;
	struct kmsg_record rec;
	const char *line = s, *end = s + n;
	int records = 0, len = -1;

	if (kmsg_devkmsg_new(&p, 1700000000LL * 1000000000) != 0)
		__builtin_trap();
	while (line < end) {
		const char *nl = memchr(line, '\n', (size_t)(end - line));
		size_t l = nl ? (size_t)(nl - line) : (size_t)(end - line);

		if (kmsg_devkmsg_feed(&rec, p, line, l) != 0 || kmsg_devkmsg_skipped(p))
			__builtin_trap();
		line += l + 1;
	}
	if (kmsg_devkmsg_end(&rec, p) == 1) {
		records++;
		len = kmsg_fmt_record(out, k, &rec);
	}
	kmsg_devkmsg_free(p);
	if (records != 1)
		__builtin_trap();
	return len;
}

/*
 * The /dev/kmsg parser over the input, each record rendered by f; and the
 * round trip: each record written as /dev/kmsg text reads back as a
 * record that is written the same, byte for byte.
 */
static void devkmsg(const char *s, size_t size, struct kmsg_fmt *f)
{
	struct kmsg_fmt_opts ko = KMSG_FMT_OPTS_INIT;
	struct kmsg_fmt *k, *k2;
	struct kmsg_devkmsg *p;
	struct kmsg_record rec;
	const char *line = s, *end = s + size, *t1, *t2;

	ko.output = KMSG_OUT_KMSG;
	if (kmsg_fmt_new(&k, &ko) != 0 || kmsg_fmt_new(&k2, &ko) != 0 ||
	    kmsg_devkmsg_new(&p, 1700000000LL * 1000000000) != 0)
		__builtin_trap();
	for (;;) {
		const char *nl = line <= end ? memchr(line, '\n', (size_t)(end - line)) : NULL;
		size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
		int rc = line <= end ? kmsg_devkmsg_feed(&rec, p, line, len)
				     : kmsg_devkmsg_end(&rec, p);
		int n1, n2;
		char *copy;

		if (rc < 0)
			__builtin_trap();
		if (rc == 1) {
			kmsg_fmt_record(&t1, f, &rec);
			n1 = kmsg_fmt_record(&t1, k, &rec);
			if (n1 < 0)
				__builtin_trap();
			copy = malloc((size_t)n1 + 1);
			memcpy(copy, t1, (size_t)n1);
			n2 = read_back(&t2, k2, copy, (size_t)n1);
			if (n2 != n1 || memcmp(copy, t2, (size_t)n1) != 0)
				__builtin_trap();
			free(copy);
		}
		if (line > end)
			break;
		line += len + 1;
	}
	kmsg_devkmsg_free(p);
	kmsg_fmt_free(k);
	kmsg_fmt_free(k2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	int fac, lvl;
	unsigned char fields[300];
	size_t flen = 0;

	memcpy(s, data, size);
	s[size] = 0;
	escapers_agree(data, size);
	kmsg_prio_parse(&fac, &lvl, s);
	kmsg_prio_prefix(&fac, &lvl, s, size);
	kmsg_facility_parse(s, size);
	kmsg_level_parse(s, size);

	/* fields: up to 3 entries of "KEY=<bytes of the input>" */
	for (int i = 0; i < 3 && size > 0; i++) {
		size_t vl = size < 60 ? size : 60;
		uint16_t l = (uint16_t)(4 + vl);
		memcpy(fields + flen, &l, 2);
		memcpy(fields + flen + 2, "K_1=", 4);
		memcpy(fields + flen + 6, data, vl);
		flen += 2 + l;
	}

	/* The first three bytes choose the output, time format and flags, so
	 * the fuzzer explores the combinations instead of paying for all of
	 * them on every input. */
	{
		struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
		struct kmsg_fmt *f;
		const char *p;
		unsigned sel = size > 2 ? data[0] | data[1] << 8 | (unsigned)data[2] << 16 :
			       size > 1 ? data[0] | data[1] << 8 : 0;
		o.output = (enum kmsg_output)(sel % (KMSG_OUT_EXPORT + 1));
		o.time = (enum kmsg_time_format)(sel / (KMSG_OUT_EXPORT + 1) %
						 (KMSG_TIME_SHORT_UNIX + 1));
		o.flags = sel >> 8 & 0x7ff;
		o.caller_width = sel >> 4 & 0xf;
		if (kmsg_fmt_new(&f, &o) == 0) {
			const char *line = s, *end = s + size;
			while (line < end) {
				const char *nl = memchr(line, '\n', (size_t)(end - line));
				size_t len = nl ? (size_t)(nl - line) : (size_t)(end - line);
				struct kmsg_record rec;
				if (kmsg_dmesg_parse(&rec, line, len, 1700000000LL * 1000000000) == 1) {
					rec.fields = fields;
					rec.fields_len = flen;
					kmsg_fmt_record(&p, f, &rec);
				}
				line += len + 1;
			}
			kmsg_fmt_end(&p, f);
			kmsg_fmt_free(f);
		}
		/* the same renderer options over the input as /dev/kmsg text */
		if (kmsg_fmt_new(&f, &o) == 0) {
			devkmsg(s, size, f);
			kmsg_fmt_free(f);
		}
	}
	free(s);
	return 0;
}
