/*
 * position.c - where a reader was, kept across runs (a consumer's cursor),
 * and where that is in the log now.
 *
 * A sequence number names a record only together with its numbering's
 * identity (kmsg(5), "The numbering's identity"): a power cut or a rebuild
 * can make writers hand the same numbers out again.  The log keeps the
 * current identity and the two before it, with where each later one
 * began, which is all that is needed to tell whether a kept number still
 * names what it named.
 */
#include <kmsg/kmsg.h>

#include <string.h>

/* The smaller of a and b, where 0 in b means "none". */
static uint64_t min_since(uint64_t a, uint64_t b)
{
	return b != 0 && b < a ? b : a;
}

/*
 * Resolves pos against log as kmsg(5) says: under the current identity
 * the number means what it meant; under the one before only if it is not
 * above where the current one began; under the one before that only if it
 * is not above where either later one began.  Anything else was numbered
 * again, and the first number not certainly read is the lowest of the
 * beginnings after pos's identity (for an identity the log no longer
 * knows, its oldest record).
 */
int kmsg_log_position_resolve(uint64_t *next, struct kmsg_log *log,
			      const struct kmsg_position *pos)
{
	struct kmsg_stat st;
	uint64_t certain;
	int rc;

	if (next == NULL || log == NULL || pos == NULL)
		return KMSG_EINVAL;
	rc = kmsg_log_stat(&st, log);
	if (rc < 0)
		return rc;
	if (memcmp(pos->ring_id, st.ring_id, sizeof(st.ring_id)) != 0)
		return KMSG_EOTHERLOG;
	if (pos->seq_id == st.seq_id) {
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
	if (pos->next <= certain) {
		*next = pos->next;
		return KMSG_POSITION_SAME;
	}
	*next = certain;
	return KMSG_POSITION_RENUMBERED;
}
