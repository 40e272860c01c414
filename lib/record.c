/*
 * record.c - the record codec: a record's checksum, the checks a record
 * must pass before anything in it is believed, and pad records; and the
 * header's checksum.  The layout is in internal.h and kmsg(5).
 */
#include "internal.h"
#include "crc32c.h"

uint32_t kmsg__rec_crc_body(const void *rec, uint32_t end)
{
	return kmsg__crc32c_extend(0, (const unsigned char *)rec + 24, end - 24);
}

uint32_t kmsg__rec_crc_copy_body(unsigned char *dst, const unsigned char *src, uint32_t end)
{
	uint32_t c = kmsg__crc32c_extend(0, dst + 24, REC_HDR - 24);
	return kmsg__crc32c_copy(c, dst + REC_HDR, src + REC_HDR, end - REC_HDR);
}

uint32_t kmsg__rec_crc_finish(uint32_t body_crc, uint64_t seq, uint64_t pos, uint32_t len)
{
	uint64_t tail[3] = { seq, pos, len };
	return kmsg__crc32c_extend(body_crc, tail, sizeof(tail));
}


/*
 * The header checks of kmsg__rec_check() for a record whose data offset
 * the caller already knows (pos % D is a division; the append path and
 * readers keep offsets instead).
 */
uint64_t kmsg__rec_header_at(const struct kmsg_log *log, uint64_t pos, uint64_t phys,
			    const unsigned char *p)
{
	struct rec_hdr h;
	uint64_t room = log->data_size - phys;

	if (room < REC_HDR)
		return 0;
	memcpy(&h, p, REC_HDR);
	if (h.magic != REC_MAGIC || h.pos != pos || h.len % REC_ALIGN ||
	    h.len < REC_HDR || h.len > room || (h.flags & ~REC_FLAGS_KNOWN))
		return 0;
	if (h.flags & REC_PAD) {
		if (h.len != room || h.text_len || h.fields_len)
			return 0;
	} else {
		if (h.len > log->max_rec || h.text_len > log->max_text ||
		    h.fields_len > KMSG_MAX_FIELDS_BYTES ||
		    rec_size(h.text_len, h.fields_len) != h.len ||
		    (h.prio >> 3) >= KMSG_NFACILITIES)
			return 0;
	}
	return h.len;
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
	len = kmsg__rec_header_at(log, pos, phys, (const unsigned char *)&h);
	if (!len)
		return 0;
	/* A pad's checksum covers its header alone (its lengths are 0). */
	if (kmsg__rec_crc_finish(kmsg__rec_crc_body(p, (uint32_t)rec_size(h.text_len, h.fields_len)),
			   h.seq, h.pos, h.len) != h.crc)
		return 0;
	if (hd)
		*hd = h;
	return len;
}

uint64_t kmsg__rec_check(const struct kmsg_log *log, uint64_t pos,
		      struct rec_hdr *hd)
{
	uint64_t phys = pos % log->data_size;
	return kmsg__rec_check_at(log, pos, phys, log->data + phys, hd);
}

/* A pad at pos filling room bytes to the end of the lap, numbered seq. */
void kmsg__rec_pad(struct rec_hdr *pad, uint64_t pos, uint64_t seq, uint32_t room)
{
	memset(pad, 0, sizeof(*pad));
	pad->len = room;
	pad->seq = seq;
	pad->pos = pos;
	pad->flags = REC_PAD;
	pad->magic = REC_MAGIC;
	/* its checksum covers its header alone (its lengths are 0) */
	pad->crc = kmsg__rec_crc_finish(kmsg__rec_crc_body(pad, REC_HDR), seq, pos, room);
}

uint32_t kmsg__hdr_crc(const void *hdr)
{
	return kmsg__crc32c_extend(0, hdr, HDR_CRC_OFF);
}
