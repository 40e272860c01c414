/*
 * position.c - where a reader was, kept across runs (a consumer's cursor),
 * and where that is in the log now.
 *
 * A sequence number names a record only together with its numbering's
 * identity (kmsg(5), "The numbering's identity"): a power cut or a rebuild
 * can make writers hand the same numbers out again.  The log keeps the
 * current identity and the two before it, with where each later one
 * began, which tells whether a kept number still names what it named;
 * and where the identity alone cannot tell (renewed too often since, or
 * the log put back from an older copy), the time of the last record read,
 * compared with the record now under its number, can.
 */
#include <kmsg/kmsg.h>

#include <string.h>

/* The smaller of a and b, where 0 in b means "none". */
static uint64_t min_since(uint64_t a, uint64_t b)
{
	return b != 0 && b < a ? b : a;
}

/*
 * Compares the record numbered seq with the time a position kept of it:
 * 1 the same record, 0 another one, -1 no record has that number now
 * (evicted, lost, never written) or it cannot be read: no answer.
 */
static int same_record(struct kmsg_log *log, uint64_t seq, int64_t real_ns)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int rc = kmsg_reader_new(&r, log, 0), same = -1;

	if (rc < 0)
		return -1;
	if (kmsg_reader_seek_seq(r, seq) == 0 && kmsg_reader_next(r, &rec) == 1 &&
	    rec.seq == seq && !(rec.flags & KMSG_GAP))
		same = rec.real_ns == real_ns;
	kmsg_reader_free(r);
	return same;
}

/*
 * Resolves pos against log as kmsg(5) says: under the current identity
 * the number means what it meant (unless it lies past the log's end);
 * under the one before only if it is not above where the current one
 * began; under the one before that only if it is not above where either
 * later one began.  Anything else was numbered again, and the first
 * number not certainly read is the lowest of the beginnings after pos's
 * identity (for an identity the log no longer knows, its oldest record).
 * The last record's time, where kept, overrides both ways: the same time
 * under its number means the same numbering, another time another one.
 */
int kmsg_log_position_resolve(uint64_t *next, struct kmsg_log *log,
			      const struct kmsg_position *pos)
{
	struct kmsg_stat st;
	uint64_t certain;
	int rc, same = -1;

	if (next == NULL || log == NULL || pos == NULL)
		return KMSG_EINVAL;
	rc = kmsg_log_stat(&st, log);
	if (rc < 0)
		return rc;
	if (memcmp(pos->ring_id, st.ring_id, sizeof(st.ring_id)) != 0)
		return KMSG_EOTHERLOG;
	if (pos->last_real_ns != 0 && pos->next > 0)
		same = same_record(log, pos->next - 1, pos->last_real_ns);
	if (same == 1) {
		*next = pos->next;
		return KMSG_POSITION_SAME;
	}
	if (pos->seq_id == st.seq_id) {
		/* Past the end, or another record under the number: an older
		 * copy put back, whose writers hand the numbers after its end
		 * out again; where that end was, nothing tells. */
		if (pos->next > st.next_seq || same == 0) {
			*next = st.first_seq;
			return KMSG_POSITION_RENUMBERED;
		}
		*next = pos->next;
		return KMSG_POSITION_SAME;
	}
	/* the records read are the numbers below next: all of them must lie
	 * below where each later identity began */
	if (pos->seq_id != 0 && pos->seq_id == st.prev_seq_id) {
		certain = st.seq_id_since;
	} else if (pos->seq_id != 0 && pos->seq_id == st.prev2_seq_id) {
		certain = min_since(st.seq_id_since, st.prev_seq_id_since);
	} else {
		*next = st.first_seq;
		return KMSG_POSITION_RENUMBERED;
	}
	if (pos->next <= certain && same != 0) {
		*next = pos->next;
		return KMSG_POSITION_SAME;
	}
	*next = pos->next <= certain ? st.first_seq : certain;
	return KMSG_POSITION_RENUMBERED;
}
