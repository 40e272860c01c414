/*
 * gaps.c - the lines on standard error that say how many records a
 * reader lost, or skipped as unfinished or damaged, where they were
 * missing: at most one of each kind a second, the rest added up.
 */
#include "output.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#define NS_PER_SEC INT64_C(1000000000)

/*
 * One line for what c holds: "N [adj ]record(s) verb before seq S", and
 * its forms for several gaps and for records missing at the end.
 */
static void print_gap(struct gap_count *c, const char *adj, const char *verb,
		      const char *why)
{
	unsigned long long n = (unsigned long long)c->n, s = (unsigned long long)c->last_seq;
	const char *pl = n == 1 ? "" : "s";

	if (!c->n)
		return;
	if (c->at_end && c->gaps == 1 && n == 1)
		fprintf(stderr, "kmsg: 1 %srecord %s at the end, seq %llu%s\n",
			adj, verb, s - 1, why);
	else if (c->at_end && c->gaps == 1)
		fprintf(stderr, "kmsg: %llu %srecords %s at the end, seq %llu to %llu%s\n",
			n, adj, verb, s - n, s - 1, why);
	else if (c->gaps == 1)
		fprintf(stderr, "kmsg: %llu %srecord%s %s before seq %llu%s\n",
			n, adj, pl, verb, s, why);
	else
		fprintf(stderr, "kmsg: %llu %srecords %s in %llu gaps, the last before "
			"seq %llu%s\n", n, adj, verb, (unsigned long long)c->gaps, s, why);
	memset(c, 0, sizeof(*c));
}

int64_t out_gaps_flush(struct output *o, int force)
{
	int64_t now;

	if (!o->held_lost.n && !o->held_unfinished.n && !o->held_damaged.n)
		return 0;
	now = cli_now_ns(CLOCK_MONOTONIC);
	if (now < o->gap_next_ns && !force)
		return o->gap_next_ns;
	/* What came before the gap reaches the terminal before the news. */
	out_flush(o);
	print_gap(&o->held_lost, "", "lost", ": the writers overtook this reader");
	print_gap(&o->held_unfinished, "unfinished ", "skipped",
		  ": the writer died, or was stopped and wrote it again later");
	print_gap(&o->held_damaged, "damaged ", "skipped", "");
	o->gap_next_ns = now + NS_PER_SEC;
	return 0;
}

static void hold_gap(struct gap_count *c, uint64_t n, const struct kmsg_record *rec)
{
	if (!n)
		return;
	c->n += n;
	c->gaps++;
	c->last_seq = rec->seq;
	c->at_end = (rec->flags & KMSG_GAP) != 0;
}

void out_gaps(struct output *o, const struct kmsg_record *rec)
{
	hold_gap(rec->flags & KMSG_UNFINISHED ? &o->held_unfinished : &o->held_lost,
		 rec->lost, rec);
	hold_gap(&o->held_damaged, rec->damaged, rec);
	out_gaps_flush(o, 0);
}
