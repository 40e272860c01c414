/*
 * filter.c - which records read and follow print: levels, facilities,
 * --since and --until, KEY=value matches and -g/--pid, as out_setup()
 * set them.
 */
#include "output.h"
#include "grep.h"
#include "matches.h"

int out_match(const struct output *o, const struct kmsg_record *rec)
{
	if (rec->flags & KMSG_GAP)  /* no record, only news of missing ones */
		return 0;
	if (!o->filtering)
		return 1;
	/* as in dmesg, text that named no priority passes no -l or -f */
	if (o->prio_filter &&
	    (rec->level >= 8 || !(o->levels >> rec->level & 1) ||
	     rec->facility >= KMSG_NFACILITIES ||
	     !(o->facilities >> rec->facility & 1)))
		return 0;
	if (o->have_since && rec->real_ns < o->since_ns)
		return 0;
	if (o->have_until && rec->real_ns > o->until_ns)
		return 0;
	if (o->matches && !match_test(o->matches, rec))
		return 0;
	return o->grep == NULL || grep_match(o->grep, rec);
}
