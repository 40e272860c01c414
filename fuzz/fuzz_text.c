/*
 * fuzz_text.c - the text parsers and renderers: dmesg raw text lines,
 * priorities and <N> prefixes, and every output format and time format of
 * the renderer over the parsed records (fields made from the input too);
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

	/* The first two bytes choose the output, time format and flags, so
	 * the fuzzer explores the combinations instead of paying for all of
	 * them on every input. */
	{
		struct kmsg_fmt_opts o = KMSG_FMT_OPTS_INIT;
		struct kmsg_fmt *f;
		const char *p;
		unsigned sel = size > 1 ? data[0] | data[1] << 8 : 0;
		o.output = (enum kmsg_output)(sel % (KMSG_OUT_JSON_SEQ + 1));
		o.time = (enum kmsg_time_format)(sel / (KMSG_OUT_JSON_SEQ + 1) %
						 (KMSG_TIME_RAW + 1));
		o.flags = sel >> 8 & 0xff;
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
	}
	free(s);
	return 0;
}
