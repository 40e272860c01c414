/*
 * export.c - records in the Journal Export Format, the stream
 * systemd-journal-remote imports and journalctl -o export writes
 * (systemd's JOURNAL_EXPORT_FORMATS): one entry a record, each field a
 * line "NAME=value", or "NAME", a newline, the value's length as a
 * little-endian 64-bit number, the value and a newline where the value is
 * not plain text; an empty line ends each entry, the last one too.
 *
 * What journal-remote (systemd 252) does with the stream decides what
 * every entry carries:
 *
 *  - An entry without __REALTIME_TIMESTAMP is dropped, one without
 *    __MONOTONIC_TIMESTAMP or _BOOT_ID takes the previous entry's: every
 *    entry has all three.  A realtime outside the journal's range (0, or
 *    before 1970) is refused with the entry: it is written as 1 µs.
 *  - A field name that is not 1..64 of [A-Z0-9_], not beginning with a
 *    digit, is dropped without a word.  kmsg's key rule is the journal's,
 *    so a record's fields keep their names; the "_" keys only a writer
 *    that vouches stores (_PID, _UID, _GID: KMSG_VOUCHED) are the
 *    journal's trusted fields of the same names and mean the same.  A
 *    _BOOT_ID among them would replace the entry's boot: it is written
 *    as KMSG_VOUCHED_BOOT_ID.  A key no journal name can be (a vouched
 *    key of 65 bytes: _ and 64 of the key rule) is left out and counted.
 *  - An entry of more than 1024 fields is skipped (read from a file) or
 *    ends the connection (over HTTP): past EXPORT_FIELDS_MAX of a
 *    record's own the rest are left out and counted, in
 *    KMSG_FIELDS_LEFT_OUT.  (A record holds at most 1024, of 4 bytes
 *    each, in KMSG_MAX_FIELDS_BYTES.)
 *
 * The record's own members become fields under names no writer's field
 * of the journal has: MESSAGE, PRIORITY and SYSLOG_FACILITY as journald
 * stores them, KMSG_SEQ and KMSG_SEQ_ID (the numbering), KMSG_CLAIMED_PID
 * (the writer's word, never _PID) and KMSG_CALLER.  Records carry the
 * first 8 bytes of their boot id; the journal's is 16: the first half is
 * the record's, the second half made from it (the same boot always gets
 * the same id, marked as an RFC 4122 variant).  No __CURSOR: the format
 * leaves it to journal files, and journal-remote ignores it.
 */
#include <stdint.h>
#include <string.h>

#include "text.h"

/* A record's own fields written at most; with the entry's own some 12
 * and the count of those left out, under journal-remote's 1024. */
#define EXPORT_FIELDS_MAX 1000

/* Room for every line but the text's and the fields'. */
#define EXPORT_FIXED_ROOM 512

/*
 * 1 if a value must take the binary form: it holds a control character
 * (C0 but tab, DEL, C1) or is not valid UTF-8.  Where journalctl -o
 * export writes the text form, so does this, so the two can be compared
 * byte for byte.
 */
static int needs_binary(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	int high = 0;

	for (size_t i = 0; i < len; i++) {
		if ((u[i] < 0x20 && u[i] != '\t') || u[i] == 0x7f)
			return 1;
		/* C1 controls are U+0080..U+009F: 0xC2 0x80..0x9F */
		if (u[i] == 0xc2 && i + 1 < len && u[i + 1] < 0xa0)
			return 1;
		high |= u[i] >= 0x80;
	}
	return high && !kmsg__utf8_valid(s, len);
}

/* One field, in the form its value needs.  Needs len + value_len + 11. */
static char *put_field(char *p, const char *name, size_t len,
		       const char *value, size_t value_len)
{
	p = put_str(p, name, len);
	if (!needs_binary(value, value_len)) {
		*p++ = '=';
		p = put_str(p, value, value_len);
	} else {
		*p++ = '\n';
		for (int i = 0; i < 8; i++)
			*p++ = (char)((uint64_t)value_len >> (8 * i) & 0xff);
		p = put_str(p, value, value_len);
	}
	*p++ = '\n';
	return p;
}

/* "NAME=" and a number, its line.  Needs strlen(name) + 22. */
static char *put_num(char *p, const char *name, uint64_t v)
{
	p = put_cstr(p, name);
	*p++ = '=';
	p = put_u64(p, v);
	*p++ = '\n';
	return p;
}

/* 16 lower-case hexadecimal digits of v. */
static char *put_hex16(char *p, uint64_t v)
{
	for (int shift = 60; shift >= 0; shift -= 4)
		*p++ = kmsg__hex_digits[v >> shift & 15];
	return p;
}

/*
 * The second half of the 128-bit boot id of a record of boot id: a fixed
 * function of it (splitmix64's finaliser), with the two top bits of its
 * first byte 10, RFC 4122's variant, as a real boot id has them there.
 */
static uint64_t boot_id_low(uint64_t id)
{
	uint64_t z = id + UINT64_C(0x9e3779b97f4a7c15);

	z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
	z ^= z >> 31;
	return (z & ~(UINT64_C(3) << 62)) | (UINT64_C(1) << 63);
}

/* 1 if key (len bytes) can be a field name of the journal as it is. */
static int journal_name_ok(const char *key, size_t len)
{
	return len <= 64 && kmsg_key_stored_valid(key, len);
}

int kmsg__export_room(size_t *room, const struct kmsg_record *rec)
{
	struct kmsg_field fld;
	size_t pos = 0, r = EXPORT_FIXED_ROOM + rec->text_len + 16;
	int rc;

	while ((rc = kmsg_field_next(&fld, rec, &pos)) == 1) {
		/* KMSG_VOUCHED_BOOT_ID is 12 bytes longer than _BOOT_ID */
		if (fld.key_len + fld.value_len + 24 > SIZE_MAX - r)
			return KMSG_EINVAL;
		r += fld.key_len + fld.value_len + 24;
	}
	if (rc < 0)
		return rc;
	*room = r;
	return 0;
}

char *kmsg__put_export(char *p, const struct kmsg_record *rec)
{
	struct kmsg_field fld;
	size_t pos = 0, written = 0, left_out = 0;
	int64_t us = rec->real_ns / 1000 - (rec->real_ns % 1000 < 0);
	char caller[12];

	p = put_num(p, "__REALTIME_TIMESTAMP", us >= 1 ? (uint64_t)us : 1);
	p = put_num(p, "__MONOTONIC_TIMESTAMP",
		    rec->boot_ns > 0 ? (uint64_t)rec->boot_ns / 1000 : 0);
	p = PUT_LIT(p, "_BOOT_ID=");
	p = put_hex16(p, rec->boot_id);
	p = put_hex16(p, boot_id_low(rec->boot_id));
	*p++ = '\n';
	{
		size_t skip = 0;

		pos = 0;
		while (kmsg_field_next(&fld, rec, &pos) == 1)
			if (fld.key_len == 17 && memcmp(fld.key, "SYSLOG_IDENTIFIER", 17) == 0) {
				skip = kmsg__tag_prefix(rec->text, rec->text_len, fld.value,
							fld.value_len);
				break;
			}
		pos = 0;
		p = put_field(p, "MESSAGE", 7, rec->text + skip, rec->text_len - skip);
	}
	if (rec->level >= 0 && rec->level < 8)
		p = put_num(p, "PRIORITY", (uint64_t)rec->level);
	if (rec->facility >= 0 && rec->facility < KMSG_NFACILITIES)
		p = put_num(p, "SYSLOG_FACILITY", (uint64_t)rec->facility);
	p = put_num(p, "KMSG_SEQ", rec->seq);
	if (rec->seq_id) {
		p = PUT_LIT(p, "KMSG_SEQ_ID=");
		p = put_hex16(p, rec->seq_id);
		*p++ = '\n';
	}
	if (rec->pid)
		p = put_num(p, "KMSG_CLAIMED_PID", rec->pid);
	if (kmsg_fmt_caller(caller, sizeof(caller), rec) > 0)
		p = put_field(p, "KMSG_CALLER", 11, caller, strlen(caller));

	/* the walk kmsg__export_room() made without error */
	while (kmsg_field_next(&fld, rec, &pos) == 1) {
		if (!journal_name_ok(fld.key, fld.key_len) || written == EXPORT_FIELDS_MAX) {
			left_out++;
			continue;
		}
		written++;
		if (fld.key_len == 8 && memcmp(fld.key, "_BOOT_ID", 8) == 0)
			p = put_field(p, "KMSG_VOUCHED_BOOT_ID", 20, fld.value, fld.value_len);
		else
			p = put_field(p, fld.key, fld.key_len, fld.value, fld.value_len);
	}
	if (left_out)
		p = put_num(p, "KMSG_FIELDS_LEFT_OUT", left_out);
	*p++ = '\n';
	return p;
}
