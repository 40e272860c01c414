/*
 * relp.c - RELP's wire format, the one home of it: frames written and
 * read, a rsp's status, the offers of an "open".
 *
 * A frame is "TXNR SP COMMAND SP DATALEN [SP DATA] LF": TXNR and DATALEN
 * of 1 to 9 digits, COMMAND of 1 to 32 letters, DATA of DATALEN bytes
 * present only when DATALEN is not 0 (librelp's doc/relp.md, and what
 * librelp 1.11's relpframe.c reads and writes).  The client numbers its
 * commands from 1 and the server answers each with a "rsp" of the same
 * TXNR, in the order the commands came; TXNR 0 is the server's hints
 * ("serverclose").  A rsp's DATA is "CODE [SP TEXT] [LF CMDDATA]", 200 for
 * success; the rsp of "open" carries the server's offers as CMDDATA, one
 * "name[=value[,value...]]" a line.
 *
 * The reader trusts nothing of what a server sends: lengths are checked
 * before they are used, digits are counted, DATA is never read past the
 * caller's bytes and a frame larger than the caller's bound is refused
 * without waiting for its bytes.  It keeps no state: the caller keeps the
 * bytes not yet a whole frame and calls again when more come.
 */
#include <stdint.h>
#include <string.h>

#include "text.h"

#define FRAME_SIZE_1 (offsetof(struct kmsg_relp_frame, data_len) + sizeof(size_t))

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int is_alpha(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* Writes v in decimal at p (room for 10 digits); returns the digits. */
static size_t put_u32(char *p, uint32_t v)
{
	char tmp[10];
	size_t n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/* Copies n bytes into the part of buf (size) at *at that exists. */
static void put(char *buf, size_t size, size_t *at, const void *s, size_t n)
{
	if (*at < size)
		memcpy(buf + *at, s, n < size - *at ? n : size - *at);
	*at += n;
}

int kmsg_relp_format(char *buf, size_t size, uint32_t txnr, const char *command,
		     const void *data, size_t len)
{
	char num[10];
	size_t at = 0, clen;

	if ((!buf && size) || !command || (!data && len) || txnr > KMSG_RELP_TXNR_MAX ||
	    len > KMSG_RELP_DATALEN_MAX)
		return KMSG_EINVAL;
	clen = strlen(command);
	if (clen == 0 || clen > KMSG_RELP_COMMAND_MAX)
		return KMSG_EINVAL;
	for (size_t i = 0; i < clen; i++)
		if (!is_alpha(command[i]))
			return KMSG_EINVAL;
	put(buf, size, &at, num, put_u32(num, txnr));
	put(buf, size, &at, " ", 1);
	put(buf, size, &at, command, clen);
	put(buf, size, &at, " ", 1);
	put(buf, size, &at, num, put_u32(num, (uint32_t)len));
	if (len) {
		put(buf, size, &at, " ", 1);
		put(buf, size, &at, data, len);
	}
	put(buf, size, &at, "\n", 1);
	return (int)at;
}

int kmsg_relp_format_open(char *buf, size_t size, uint32_t txnr, const char *software)
{
	/* Version 0 is what librelp 1.11 itself offers and accepts: it
	 * answers with the lower of the two. */
	static const char head[] = "relp_version=0\nrelp_software=";
	static const char tail[] = "\ncommands=syslog";
	char offers[sizeof(head) + 256 + sizeof(tail)];
	size_t n = 0, slen;

	if (!software)
		software = "libkmsg";
	slen = strlen(software);
	if (slen == 0 || slen > 255 || memchr(software, '\n', slen))
		return KMSG_EINVAL;
	memcpy(offers, head, sizeof(head) - 1);
	n += sizeof(head) - 1;
	memcpy(offers + n, software, slen);
	n += slen;
	memcpy(offers + n, tail, sizeof(tail) - 1);
	n += sizeof(tail) - 1;
	return kmsg_relp_format(buf, size, txnr, "open", offers, n);
}

uint32_t kmsg_relp_next_txnr(uint32_t txnr)
{
	return txnr >= KMSG_RELP_TXNR_MAX ? 0 : txnr + 1;
}

/*
 * A number of 1 to 9 digits at buf[*i], ended by a byte that is no digit.
 * 1 with the value, 0 when the bytes end first, KMSG_ECORRUPT.
 */
static int read_number(uint32_t *v, const char *buf, size_t len, size_t *i)
{
	size_t start = *i;
	uint32_t n = 0;

	while (*i < len && is_digit(buf[*i])) {
		if (*i - start == 9)
			return KMSG_ECORRUPT;
		n = n * 10 + (uint32_t)(buf[(*i)++] - '0');
	}
	if (*i == len)
		return 0;
	if (*i == start)
		return KMSG_ECORRUPT;
	*v = n;
	return 1;
}

int kmsg_relp_parse_sized(struct kmsg_relp_frame *out, size_t size, size_t *used,
			  const char *buf, size_t len, size_t max)
{
	struct kmsg_relp_frame f;
	size_t i = 0, clen = 0;
	uint32_t dlen;
	int rc;

	if (!out || size < FRAME_SIZE_1 || !used || (!buf && len))
		return KMSG_EINVAL;
	memset(&f, 0, sizeof(f));
	if ((rc = read_number(&f.txnr, buf, len, &i)) <= 0)
		return rc;
	if (buf[i++] != ' ')
		return KMSG_ECORRUPT;
	while (i < len && is_alpha(buf[i])) {
		if (clen == KMSG_RELP_COMMAND_MAX)
			return KMSG_ECORRUPT;
		f.command[clen++] = buf[i++];
	}
	if (i == len)
		return 0;
	if (clen == 0 || buf[i++] != ' ')
		return KMSG_ECORRUPT;
	f.command_len = clen;
	if ((rc = read_number(&dlen, buf, len, &i)) <= 0)
		return rc;
	if (dlen == 0) {
		if (buf[i] != '\n')
			return KMSG_ECORRUPT;
		i++;
	} else {
		if (buf[i] != ' ')
			return KMSG_ECORRUPT;
		i++;
		/* refused before its bytes are waited for: a hostile
		 * DATALEN costs the caller nothing */
		if (dlen > max)
			return KMSG_ETOOLONG;
		if (len - i <= dlen)
			return 0;
		f.data = buf + i;
		f.data_len = dlen;
		i += dlen;
		if (buf[i++] != '\n')
			return KMSG_ECORRUPT;
	}
	*used = i;
	kmsg__put_sized(out, size, &f, sizeof(f));
	return 1;
}

int kmsg_relp_rsp(const char **text, size_t *text_len, const char **cmddata,
		  size_t *cmddata_len, const char *data, size_t len)
{
	const char *lf;
	int code;

	if (!data && len)
		return KMSG_EINVAL;
	if (len < 3 || !is_digit(data[0]) || !is_digit(data[1]) || !is_digit(data[2]) ||
	    data[0] == '0' || (len > 3 && data[3] != ' ' && data[3] != '\n'))
		return KMSG_ECORRUPT;
	code = (data[0] - '0') * 100 + (data[1] - '0') * 10 + (data[2] - '0');
	data += 3;
	len -= 3;
	if (len && *data == ' ') {
		data++;
		len--;
	}
	lf = memchr(data, '\n', len);
	if (text) {
		*text = data;
		*text_len = lf ? (size_t)(lf - data) : len;
	}
	if (cmddata) {
		*cmddata = lf ? lf + 1 : data + len;
		*cmddata_len = lf ? len - (size_t)(lf + 1 - data) : 0;
	}
	return code;
}

int kmsg_relp_offer(const char *offers, size_t len, const char *name, const char *value)
{
	size_t nlen, vlen = value ? strlen(value) : 0;

	if (!name || (!offers && len))
		return KMSG_EINVAL;
	nlen = strlen(name);
	while (len) {
		const char *lf = memchr(offers, '\n', len);
		size_t line = lf ? (size_t)(lf - offers) : len;

		if (line >= nlen && memcmp(offers, name, nlen) == 0 &&
		    (line == nlen || offers[nlen] == '=')) {
			const char *v = offers + nlen + 1, *end = offers + line;

			if (!value)
				return 1;
			/* the values, comma-separated */
			while (v <= end && line > nlen) {
				const char *comma = memchr(v, ',', (size_t)(end - v));
				size_t n = comma ? (size_t)(comma - v) : (size_t)(end - v);

				if (n == vlen && memcmp(v, value, n) == 0)
					return 1;
				if (!comma)
					break;
				v = comma + 1;
			}
		}
		if (!lf)
			break;
		len -= line + 1;
		offers = lf + 1;
	}
	return 0;
}
