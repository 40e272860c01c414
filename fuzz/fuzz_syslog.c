/*
 * fuzz_syslog.c - syslog's wire formats: any bytes parsed as a message
 * (in memory of exactly their length, so that ASan sees a read past it),
 * every part found inside the input, its structured data walked to the
 * end without a complaint, the input walked as structured data and as
 * octet-counted frames; then a record made of what was parsed written as
 * RFC 5424 and RFC 3164, into buffers of every size the answer allows,
 * and the RFC 5424 message read back to the same text (less the tag it
 * begins with, which the header carries), pid and values.
 */
#include <kmsg/kmsg.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "text/text.h"

#define CHECK(c) do { if (!(c)) __builtin_trap(); } while (0)

static void inside(const char *p, size_t n, const char *lo, size_t size)
{
	if (!p) {
		CHECK(n == 0);
		return;
	}
	CHECK(p >= lo && n <= size && (size_t)(p - lo) <= size - n);
}

/* Walks sd (len bytes) with a value buffer of exactly len bytes; the
 * last return.  Every value lies in the buffer, every name in sd. */
static int walk(const char *sd, size_t len, size_t *params)
{
	struct kmsg_syslog_sd e;
	char *buf = malloc(len ? len : 1);
	size_t pos = 0, last = 0;
	int rc;

	*params = 0;
	while ((rc = kmsg_syslog_sd_next(&e, buf, len, sd, len, &pos)) == 1) {
		CHECK(pos > last && pos <= len);
		last = pos;
		inside(e.id, e.id_len, sd, len);
		CHECK(e.id_len >= 1 && e.id_len <= 32);
		if (e.name) {
			inside(e.name, e.name_len, sd, len);
			inside(e.value, e.value_len, buf, len);
			(*params)++;
		}
	}
	free(buf);
	return rc;
}

/* A record of the parsed message: its text and pid, and two fields whose
 * values are input bytes, one under a key too long for a PARAM-NAME. */
static void format_back(const struct kmsg_syslog_msg *m, const uint8_t *data, size_t size)
{
	struct kmsg_syslog_fmt_opts o = KMSG_SYSLOG_FMT_OPTS_INIT;
	struct kmsg_syslog_msg back;
	struct kmsg_record rec;
	unsigned char fields[2 * (2 + 48 + 1 + 64)];
	static const char *const keys[2] = { "SYSLOG_IDENTIFIER", "A_VERY_LONG_KEY_NAME_OF_MORE_THAN_32_BYTES" };
	static const uint8_t ring[16] = { 1, 2, 3 };
	size_t flen = 0, vl = size < 64 ? size : 64;
	char *buf;
	int n;

	for (int i = 0; i < 2; i++) {
		size_t kl = strlen(keys[i]);
		uint16_t l = (uint16_t)(kl + 1 + vl);

		memcpy(fields + flen, &l, 2);
		memcpy(fields + flen + 2, keys[i], kl);
		fields[flen + 2 + kl] = '=';
		memcpy(fields + flen + 3 + kl, data, vl);
		flen += 2 + l;
	}
	memset(&rec, 0, sizeof(rec));
	rec.seq = 7;
	rec.seq_id = 0x1234;
	rec.real_ns = m->real_ns;
	rec.pid = m->pid;
	rec.facility = m->facility;
	rec.level = m->level;
	rec.text = m->text;
	rec.text_len = m->text_len;
	rec.fields = fields;
	rec.fields_len = flen;

	for (int fmt = 0; fmt < 2; fmt++) {
		o.format = fmt ? KMSG_SYSLOG_3164 : KMSG_SYSLOG_5424;
		o.flags = KMSG_SYSLOG_FMT_UTC | (size & 1 ? KMSG_SYSLOG_FMT_BOM : 0);
		o.hostname = m->hostname_len ? "h st\x7f" : NULL;
		o.sd_id = "kmsg@32473";
		o.ring_id = ring;
		n = kmsg_syslog_format(NULL, 0, &rec, &o);
		CHECK(n > 0);
		buf = malloc((size_t)n + 1);
		CHECK(kmsg_syslog_format(buf, (size_t)n + 1, &rec, &o) == n);
		CHECK(buf[n] == '\0');
		{
			/* a smaller buffer: the same bytes, cut, and a NUL */
			size_t k = (size_t)n / 2 + 1;
			char *small = malloc(k);

			CHECK(kmsg_syslog_format(small, k, &rec, &o) == n);
			CHECK(small[k - 1] == '\0' && memcmp(small, buf, k - 1) == 0);
			free(small);
		}
		if (fmt == 0) {
			/* the message is the text but for the tag it begins
			 * with, which the header carries */
			size_t skip = kmsg__tag_prefix(m->text, m->text_len, (const char *)data, vl);
			const char *t = m->text + skip;
			size_t tl = m->text_len - skip;
			int bom_in_text = tl >= 3 && memcmp(t, "\xef\xbb\xbf", 3) == 0;
			int cut_end = tl && (t[tl - 1] == '\n' || t[tl - 1] == '\0');
			size_t params;

			CHECK(kmsg_syslog_parse(&back, buf, (size_t)n, NULL) == KMSG_SYSLOG_5424);
			CHECK(back.pid == m->pid);
			if (!bom_in_text && !cut_end)
				CHECK(back.text_len == tl && (!tl || memcmp(back.text, t, tl) == 0));
			CHECK(walk(back.sd, back.sd_len, &params) == 0);
			CHECK(params == 5);
		} else {
			/* one line: no byte of it a control but tab */
			for (int i = 0; i < n; i++)
				CHECK((unsigned char)buf[i] >= 0x20 || buf[i] == '\t');
		}
		free(buf);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kmsg_syslog_parse_opts o = KMSG_SYSLOG_PARSE_OPTS_INIT;
	struct kmsg_syslog_msg m;
	char *s = malloc(size ? size : 1);
	size_t off, len, params;
	int rc;

	memcpy(s, data, size);
	o.now_ns = INT64_C(1796489790) * 1000000000;
	if (size && (data[0] & 1)) {
		o.tz = KMSG_SYSLOG_TZ_OFFSET;
		o.utc_offset = (int32_t)(data[0] >> 1) * 900 - 14 * 3600;
	}
	rc = kmsg_syslog_parse(&m, s, size, &o);
	CHECK(rc >= KMSG_SYSLOG_RAW && rc <= KMSG_SYSLOG_5424 && rc == m.format);
	CHECK(m.facility >= 0 && m.facility < KMSG_NFACILITIES && m.level >= 0 && m.level <= 7);
	inside(m.hostname, m.hostname_len, s, size);
	inside(m.app, m.app_len, s, size);
	inside(m.procid, m.procid_len, s, size);
	inside(m.msgid, m.msgid_len, s, size);
	inside(m.sd, m.sd_len, s, size);
	inside(m.text, m.text_len, s, size);
	CHECK(m.hostname_len <= 255 && m.app_len <= 48 && m.procid_len <= 128 && m.msgid_len <= 32);
	if (m.format == KMSG_SYSLOG_RAW && !(m.flags & KMSG_SYSLOG_HAS_PRI))
		CHECK(m.text == s && m.text_len + 1 >= size);
	if (m.sd)
		CHECK(walk(m.sd, m.sd_len, &params) == 0);

	/* any bytes as structured data, and as frames: an answer, no more */
	rc = walk(s, size, &params);
	CHECK(rc == 0 || rc == KMSG_ECORRUPT);
	for (size_t at = 0; at < size;) {
		rc = kmsg_syslog_frame(&off, &len, s + at, size - at, 1024);
		if (rc != 1)
			break;
		CHECK(off >= 2 && off <= 11 && len <= size - at - off);
		at += off + len;
	}

	format_back(&m, data, size);
	free(s);
	return 0;
}
