/*
 * record.c - the record codec: a block's checksum, the checks a committed
 * block must pass before anything in it is believed, pad blocks, the
 * fields area, and the static header's checksum.  The layout is in
 * layout.h and kmsg(5); which states a block goes through is ring.c's.
 */
#include "internal.h"
#include "crc32c.h"

/* The checksum covers a block from byte 24 (its times) on, and then
 * these three words, which are not known until it is reserved. */
#define CRC_FROM 24u
struct crc_tail { uint64_t w[3]; };

static struct crc_tail crc_tail(uint64_t seq, uint64_t pos, uint32_t lenword)
{
	return (struct crc_tail){ { seq, pos, lenword } };
}

uint32_t kmsg__rec_crc_body(const void *rec, uint32_t end)
{
	return kmsg__crc32c_extend(0, (const unsigned char *)rec + CRC_FROM, end - CRC_FROM);
}

uint32_t kmsg__rec_crc_copy(unsigned char *dst, const unsigned char *src, uint32_t end,
			   uint64_t seq, uint64_t pos, uint32_t lenword)
{
	struct crc_tail t = crc_tail(seq, pos, lenword);

	return kmsg__crc32c_copy_framed(0, (dst ? dst : src) + CRC_FROM, REC_HDR - CRC_FROM,
					dst ? dst + REC_HDR : NULL, src + REC_HDR,
					end - REC_HDR, t.w, sizeof(t.w));
}

uint32_t kmsg__rec_crc_finish(uint32_t body_crc, uint64_t seq, uint64_t pos, uint32_t lenword)
{
	struct crc_tail t = crc_tail(seq, pos, lenword);

	return kmsg__crc32c_extend(body_crc, t.w, sizeof(t.w));
}

/*
 * A committed block is a record, which never crosses the end of the
 * data area, or a pad.  In format 1 a pad fills its lap to the end; in
 * format 2 it may also step over a quarantined stretch (ring.c), across
 * the end of a lap, but never over more than the ring.
 */
uint64_t kmsg__rec_header_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			     const unsigned char *p)
{
	struct rec_hdr h;

	memcpy(&h, p, REC_HDR);
	return kmsg__rec_header_ok(log, pos, phys, &h);
}

uint64_t kmsg__rec_header_ok(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			     const struct rec_hdr *h)
{
	uint64_t room = log->data_size - phys;

	if (room < REC_HDR)
		return 0;
	if (h->tag != pos || h->len % REC_ALIGN || h->len < REC_HDR ||
	    (h->flags & ~REC_FLAGS_KNOWN))
		return 0;
	if (log->version == KMSG_FORMAT_V1 &&
	    ((h->owner | (unsigned)h->spare << 8) != REC_MAGIC || h->prev_owner))
		return 0;
	if (h->flags & REC_PAD) {
		if (h->text_len || h->fields_len)
			return 0;
		if (log->version == KMSG_FORMAT_V1 ? h->len != room : h->len > log->data_size)
			return 0;
	} else {
		if (h->len > room || h->len > log->max_rec || h->text_len > log->max_text ||
		    h->fields_len > KMSG_MAX_FIELDS_BYTES ||
		    rec_size(h->text_len, h->fields_len) != h->len ||
		    (h->prio >> 3) >= KMSG_NFACILITIES ||
		    h->seq == UINT64_MAX)  /* none is (RESV_SEQ_MAX); one more wraps */
			return 0;
	}
	return h->len;
}

uint64_t kmsg__rec_check_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			    const unsigned char *p, struct rec_hdr *hd)
{
	struct rec_hdr h;
	uint64_t len;

	/* One copy of the header, checked and then used: p may be the
	 * mapping, where a writer (or a hostile one) can change the
	 * lengths between two reads. */
	memcpy(&h, p, REC_HDR);
	len = kmsg__rec_header_ok(log, pos, phys, &h);
	if (!len)
		return 0;
	/* A pad's checksum covers its header alone (its lengths are 0). */
	if (kmsg__rec_crc_finish(kmsg__rec_crc_body(p, (uint32_t)rec_size(h.text_len, h.fields_len)),
				 h.seq, pos, rec_lenword(&h)) != h.crc)
		return 0;
	if (hd)
		*hd = h;
	return len;
}

uint64_t kmsg__rec_check(const struct kmsg_log *log, uint64_t pos, struct rec_hdr *hd)
{
	uint64_t phys = pos % log->data_size;
	return kmsg__rec_check_at(log, pos, phys, log->data + phys, hd);
}

void kmsg__rec_pad(struct rec_hdr *pad, uint64_t pos, uint64_t seq, uint32_t len,
		   unsigned owner, unsigned prev_owner, uint64_t boot_id, int v1)
{
	memset(pad, 0, sizeof(*pad));
	pad->len = len;
	pad->seq = seq;
	pad->tag = pos;
	pad->flags = REC_PAD;
	pad->owner = (uint8_t)(v1 ? REC_MAGIC & 0xff : owner);
	pad->spare = (uint8_t)(v1 ? REC_MAGIC >> 8 : 0);
	pad->prev_owner = v1 ? 0 : prev_owner & 0xff;
	pad->boot_id = v1 ? 0 : boot_id;
	pad->crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(pad, REC_HDR), seq, pos,
					rec_lenword(pad));
}

uint32_t kmsg__hdr_crc(const void *hdr)
{
	return kmsg__crc32c_extend(0, hdr, HDR_CRC_OFF);
}

/* ---- fields: KEY=value pairs, each a 16-bit length and its bytes -------- */

int kmsg_key_valid(const char *key, size_t len)
{
	if (!key || len < 1 || len > KMSG_MAX_KEY || !(key[0] >= 'A' && key[0] <= 'Z'))
		return 0;
	for (size_t i = 1; i < len; i++) {
		char c = key[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'))
			return 0;
	}
	return 1;
}

int kmsg_key_stored_valid(const char *key, size_t len)
{
	if (key && len > 1 && key[0] == '_')
		return kmsg_key_valid(key + 1, len - 1);
	return kmsg_key_valid(key, len);
}

/* A key an entry may give: of the key rule, or, for what a trusted
 * ingester vouches for (KMSG_VOUCHED), _ before one. */
static int key_stored_valid(const char *key, size_t len, int vouched)
{
	return vouched ? kmsg_key_stored_valid(key, len) : kmsg_key_valid(key, len);
}

int kmsg__fields_check(size_t *total, const struct kmsg_entry *e)
{
	size_t sum = 0;

	for (size_t i = 0; i < e->nfields; i++) {
		const struct kmsg_field *f = &e->fields[i];
		size_t kl;
		if (!f->key || (!f->value && f->value_len))
			return KMSG_EINVAL;
		kl = f->key_len ? f->key_len : strlen(f->key);
		if (!key_stored_valid(f->key, kl, (e->flags & KMSG_VOUCHED) != 0))
			return KMSG_EFIELD;
		/* each term bounded first: a caller's lengths near SIZE_MAX
		 * must not wrap the sum into a small one */
		if (kl > KMSG_MAX_FIELDS_BYTES || f->value_len > KMSG_MAX_FIELDS_BYTES)
			return KMSG_EFIELD;
		sum += 2 + kl + 1 + f->value_len;
		if (sum > KMSG_MAX_FIELDS_BYTES)
			return KMSG_EFIELD;
	}
	*total = sum;
	return 0;
}

void kmsg__fields_put(unsigned char *p, const struct kmsg_entry *e)
{
	for (size_t i = 0; i < e->nfields; i++) {
		const struct kmsg_field *f = &e->fields[i];
		size_t kl = f->key_len ? f->key_len : strlen(f->key);
		uint16_t l = (uint16_t)(kl + 1 + f->value_len);
		memcpy(p, &l, 2);
		memcpy(p + 2, f->key, kl);
		p[2 + kl] = '=';
		if (f->value_len)
			memcpy(p + 3 + kl, f->value, f->value_len);
		p += 2 + l;
	}
}

int kmsg_field_next_sized(struct kmsg_field *f, const struct kmsg_record *rec, size_t size,
			  size_t *pos)
{
	const unsigned char *p;
	uint16_t l;
	size_t k;

	/* a caller's record of a later version begins with this one */
	if (!f || !rec || !pos || size < KMSG__RECORD_SIZE_1)
		return KMSG_EINVAL;
	if (*pos >= rec->fields_len)
		return 0;
	if (rec->fields_len - *pos < 2)
		return KMSG_ECORRUPT;
	p = rec->fields + *pos;
	memcpy(&l, p, 2);
	if (l > rec->fields_len - *pos - 2)
		return KMSG_ECORRUPT;
	for (k = 0; k < l && p[2 + k] != '='; k++)
		;
	if (k == l || !key_stored_valid((const char *)p + 2, k, 1))
		return KMSG_ECORRUPT;
	f->key = (const char *)p + 2;
	f->key_len = k;
	f->value = (const char *)p + 3 + k;
	f->value_len = l - k - 1;
	*pos += 2 + (size_t)l;
	return 1;
}
