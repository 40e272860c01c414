/*
 * selection.c - which records kmsg read prints, as journalctl chooses
 * them: one boot (-b), the last N that pass the filters (-n), newest
 * first (--reverse); and the list of a log's boots (--list-boots).
 *
 * Finding a boot or the last N costs what is printed, not the log's size:
 * boots are found by bisection (kmsg_log_boots()), the last N by a seek
 * by number that looks further back only where filters drop records
 * (out_last_start(), which kmsg follow -n shares).
 */
#define _GNU_SOURCE
#include "output.h"
#include "selection.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { OPT_BOOT = 1, OPT_LIST_BOOTS, OPT_LINES, OPT_REVERSE };

/* What the options asked for; sel_setup() hands it to its caller's struct.
 * The arguments are copies: popt's own do not outlive the next option. */
static struct {
	int boot, list_boots, reverse;
	char *boot_arg, *lines_arg;
	char *joined[4];  /* sel_join_boot_arg()'s "--boot=-1" strings */
} given;

static void on_option(void *state, int val, const char *arg)
{
	(void)state;  /* what it was given is its own: see given */
	switch (val) {
	case OPT_BOOT:
		given.boot = 1;
		cli_keep(&given.boot_arg, arg);
		break;
	case OPT_LIST_BOOTS:
		given.list_boots = 1;
		break;
	case OPT_LINES:
		cli_keep(&given.lines_arg, arg ? arg : "");
		break;
	case OPT_REVERSE:
		given.reverse = 1;
		break;
	}
}

static const struct cli_option_handler handler = { on_option, NULL };

const struct poptOption selection_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "boot", 'b', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_BOOT,
	  "only the records of one boot: 0 (or none) the newest, -1 the one "
	  "before, 1 the oldest, or a prefix of its id", "ID|OFFSET" },
	{ "list-boots", '\0', POPT_ARG_NONE, NULL, OPT_LIST_BOOTS,
	  "list the boots in the log: offset, id, first and last time, records",
	  NULL },
	{ "lines", 'n', POPT_ARG_STRING, NULL, OPT_LINES,
	  "only the last N records that pass the filters", "N" },
	{ "reverse", '\0', POPT_ARG_NONE, NULL, OPT_REVERSE,
	  "newest records first", NULL },
	POPT_TABLEEND
};

/* How -b's argument reads: an offset (-1, 0, +2, 3) or an id prefix. */
static int parse_boot(struct selection *sel, const char *cmd, const char *arg)
{
	const char *p = arg ? arg : "0";
	int sign = *p == '-' || *p == '+';
	size_t digits = strspn(p + sign, "0123456789");

	/* journalctl's offsets: a number with a sign, or of a few digits
	 * (no one keeps 10000 boots); anything longer is an id */
	if (digits > 0 && (sign || digits <= 4) && p[sign + digits] == '\0') {
		errno = 0;
		sel->boot_offset = strtol(p, NULL, 10);
		if (errno || sel->boot_offset < -100000 || sel->boot_offset > 100000)
			return cli_usage_error(cmd, "--boot", "'%s': no log holds that many boots",
					       arg);
		return 0;
	}
	sel->boot_by_id = 1;
	for (; *p; p++) {
		if (*p == '-')
			continue;  /* as /proc/sys/kernel/random/boot_id writes it */
		if (!isxdigit((unsigned char)*p))
			return cli_usage_error(cmd, "--boot", "'%s' is neither an offset "
					       "nor a boot id in hex", arg);
		/* records carry the first 16 digits of the id */
		if (sel->id_len < 16)
			sel->id_prefix[sel->id_len++] = (char)tolower((unsigned char)*p);
	}
	if (sel->id_len == 0)
		return cli_usage_error(cmd, "--boot", "'%s' is neither an offset nor a "
				       "boot id in hex", arg);
	return 0;
}

const char **sel_join_boot_arg(int *argc, const char **argv)
{
	const char **v = calloc((size_t)*argc + 1, sizeof(*v));
	size_t joined = 0;
	int n = 0, i;

	if (v == NULL)
		return NULL;
	for (i = 0; i < *argc && strcmp(argv[i], "--") != 0; i++) {
		const char *next = i + 1 < *argc ? argv[i + 1] : "";
		size_t digits = strspn(next + (next[0] == '-'), "0123456789");
		char *j;

		if ((strcmp(argv[i], "-b") && strcmp(argv[i], "--boot")) || next[0] != '-' ||
		    digits == 0 || next[1 + digits] != '\0' ||
		    joined == sizeof(given.joined) / sizeof(given.joined[0])) {
			v[n++] = argv[i];
			continue;
		}
		if (asprintf(&j, "--boot=%s", next) < 0) {
			free(v);
			return NULL;
		}
		given.joined[joined++] = j;
		v[n++] = j;
		i++;
	}
	for (; i < *argc; i++)  /* after "--": not options */
		v[n++] = argv[i];
	*argc = n;
	return v;
}

int sel_setup(struct selection *sel, const char *cmd)
{
	memset(sel, 0, sizeof(*sel));
	sel->to = UINT64_MAX;
	sel->list_boots = given.list_boots;
	sel->reverse = given.reverse;
	sel->boot = given.boot;
	if (given.lines_arg) {
		const char *s = given.lines_arg;
		int rc = cli_parse_u64(&sel->lines, s, strlen(s), UINT64_MAX);

		if (rc == -ERANGE)
			return cli_usage_error(cmd, "--lines", "'%s' is more than any log "
					       "holds: leave -n out for every record", s);
		if (rc < 0)
			return cli_usage_error(cmd, "--lines", "'%s' is not a number", s);
		sel->have_lines = 1;
	}
	if (sel->boot && parse_boot(sel, cmd, given.boot_arg) != 0)
		return EXIT_USAGE;
	sel->active = sel->boot || sel->have_lines || sel->reverse;
	return 0;
}

void sel_free(struct selection *sel)
{
	cli_keep(&given.boot_arg, NULL);
	cli_keep(&given.lines_arg, NULL);
	for (size_t i = 0; i < sizeof(given.joined) / sizeof(given.joined[0]); i++)
		cli_keep(&given.joined[i], NULL);
	backlog_free(&sel->held);
}

/* Every boot of log, newest first, into *out (to free); their number or a code. */
static int all_boots(struct kmsg_boot **out, struct kmsg_log *log)
{
	size_t cap = 16;

	for (;;) {
		struct kmsg_boot *b = malloc(cap * sizeof(*b));
		int n;

		if (b == NULL)
			return -ENOMEM;
		n = kmsg_log_boots(b, cap, log);
		if (n < 0 || (size_t)n < cap) {
			*out = b;
			if (n < 0)
				free(b);
			return n;
		}
		free(b);
		cap *= 4;
	}
}

/* "%016llx" of a boot id: its first 16 hex digits, as records carry them. */
static void boot_hex(char buf[17], uint64_t id)
{
	snprintf(buf, 17, "%016llx", (unsigned long long)id);
}

/*
 * The boot -b names, into *b, and whether it is the newest (whose records
 * may still be growing).  Prints why not and returns EXIT_FAIL, or 0.
 */
static int find_boot(struct kmsg_boot *b, int *newest, const struct selection *sel,
		     struct kmsg_log *log, const char *path)
{
	struct kmsg_boot *all = NULL;
	long want = sel->boot_offset;
	int n, found = -1, status = EXIT_FAIL;

	if (!sel->boot_by_id && want <= 0) {
		/* only as far back as asked: -b costs one bisection a boot */
		all = malloc((size_t)(1 - want) * sizeof(*all));
		n = all ? kmsg_log_boots(all, (size_t)(1 - want), log) : -ENOMEM;
	} else {
		n = all_boots(&all, log);
	}
	if (n < 0) {
		cli_lib_error(path, n);
		goto out;
	}
	if (sel->boot_by_id) {
		for (int i = 0; i < n; i++) {
			char hex[17];

			boot_hex(hex, all[i].boot_id);
			if (memcmp(hex, sel->id_prefix, sel->id_len) != 0)
				continue;
			if (found >= 0) {
				cli_error(path, "more than one boot's id begins with %.*s: "
					  "give more of it (kmsg read --list-boots)",
					  (int)sel->id_len, sel->id_prefix);
				goto out;
			}
			found = i;
		}
		if (found < 0)
			cli_error(path, "no boot with an id beginning with %.*s "
				  "(kmsg read --list-boots)", (int)sel->id_len, sel->id_prefix);
	} else if (want <= 0 && -want < n) {
		found = (int)-want;
	} else if (want > 0 && want <= n) {
		found = n - (int)want;
	} else {
		cli_error(path, "no boot %+ld: the log holds %d boot%s "
			  "(kmsg read --list-boots)", want, n, n == 1 ? "" : "s");
	}
	if (found < 0)
		goto out;
	*b = all[found];
	*newest = found == 0;
	status = 0;
out:
	free(all);
	return status;
}

int sel_seek(struct selection *sel, struct kmsg_reader *r, struct kmsg_log *log,
	     const struct output *o, const struct kmsg_stat *st, const char *path)
{
	uint64_t from = st->clear_seq > st->first_seq ? st->clear_seq : st->first_seq;
	uint64_t end = st->next_seq, start, b_first = 0;
	int rc;

	if (sel->boot) {
		struct kmsg_boot b;
		int newest;

		if (find_boot(&b, &newest, sel, log, path) != 0)
			return EXIT_FAIL;
		b_first = b.first_seq;
		if (b.first_seq > from)
			from = b.first_seq;
		if (!newest) {
			sel->to = b.last_seq;
			if (b.last_seq < end)
				end = b.last_seq + 1;
		}
	}
	if (sel->cursor) {
		/* from the cursor, evicted records reported: no floor of
		 * the oldest stored record */
		from = sel->cursor_from;
		if (sel->boot && b_first > from)
			from = b_first;
	}
	if (!sel->have_lines && !sel->boot && !sel->cursor) {
		rc = o->have_since ? kmsg_reader_seek_time(r, o->since_ns)
				   : kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	} else {
		start = from;
		if (from >= end || (sel->have_lines && sel->lines == 0))
			start = end;  /* nothing to print: a seek to the end */
		else if (sel->cursor)
			;  /* the first N from there: sel_record() counts */
		else if (sel->have_lines && (rc = out_last_start(&start, r, o, sel->lines,
							       from, end)) < 0)
			goto fail;
		if (start >= end)
			sel->to = start - 1 < sel->to ? start - 1 : sel->to;
		rc = kmsg_reader_seek_seq(r, start);
	}
	if (rc == 0)
		return 0;
fail:
	return cli_lib_error(path, rc);
}

int sel_record(struct selection *sel, struct output *o, const struct kmsg_record *rec)
{
	if (rec->seq > sel->to && !(rec->flags & KMSG_GAP))
		return 1;
	if (sel->cursor && sel->have_lines && out_match(o, rec)) {
		if (sel->printed == sel->lines)
			return 1;
		sel->printed++;
	}
	if (!sel->reverse)
		return out_record(o, rec);
	return out_match(o, rec) ? backlog_add(&sel->held, rec) : 0;
}

int sel_end(struct selection *sel, struct output *o)
{
	struct kmsg_record rec;
	int rc;

	while ((rc = backlog_pop(&sel->held, &rec)) > 0 && (rc = out_record(o, &rec)) == 0)
		;
	if (rc < 0)
		return rc;
	sel_free(sel);
	return 0;
}

int sel_said(const struct selection *sel)
{
	if (sel->held.failed == 0)
		return 0;
	cli_error("--reverse", "cannot keep the records to print in a temporary file "
		  "in %s: %s (set TMPDIR to a directory with room, or select fewer "
		  "records with -n, -b or --since)", sel->held.dir ? sel->held.dir : "/tmp",
		  strerror(-sel->held.failed));
	return 1;
}

/* A wall-clock time as journalctl --list-boots shows it, local time
 * (UTC with --utc). */
static void list_time(char *buf, size_t size, int64_t ns, int utc)
{
	time_t t = (time_t)(ns >= 0 ? ns / 1000000000 : -((-ns + 999999999) / 1000000000));
	struct tm tm;

	if ((utc ? gmtime_r(&t, &tm) : localtime_r(&t, &tm)) == NULL ||
	    strftime(buf, size, utc ? "%a %Y-%m-%d %H:%M:%S UTC" :
		     "%a %Y-%m-%d %H:%M:%S %Z", &tm) == 0)
		snprintf(buf, size, "@%lld", (long long)t);
}

int sel_list_boots(struct output *o, struct kmsg_log *log, const char *path)
{
	struct kmsg_boot *b = NULL;
	char line[256], first[64], last[64], hex[17];
	int n = all_boots(&b, log), rc = 0, width = 11;
	int utc = (o->fo.flags & KMSG_FMT_UTC) != 0;

	if (n < 0)
		return cli_lib_error(path, n);
	/* columns as wide as their widest time, as journalctl lays them out */
	for (int i = 0; i < n; i++) {
		list_time(first, sizeof(first), b[i].first_real_ns, utc);
		list_time(last, sizeof(last), b[i].last_real_ns, utc);
		if ((int)strlen(first) > width)
			width = (int)strlen(first);
		if ((int)strlen(last) > width)
			width = (int)strlen(last);
	}
	snprintf(line, sizeof(line), "IDX BOOT ID          %-*s %-*s RECORDS\n",
		 width, "FIRST ENTRY", width, "LAST ENTRY");
	rc = out_text(o, line);
	for (int i = n - 1; i >= 0 && rc == 0; i--) {
		list_time(first, sizeof(first), b[i].first_real_ns, utc);
		list_time(last, sizeof(last), b[i].last_real_ns, utc);
		boot_hex(hex, b[i].boot_id);
		snprintf(line, sizeof(line), "%3d %s %-*s %-*s %7llu\n", -i, hex,
			 width, first, width, last,
			 (unsigned long long)(b[i].last_seq - b[i].first_seq + 1));
		rc = out_text(o, line);
	}
	free(b);
	if (rc == 0)
		rc = out_flush(o);
	return rc < 0 ? out_fail(o, rc) : EXIT_OK;
}

int out_last_start(uint64_t *start, struct kmsg_reader *r, const struct output *o,
		   uint64_t n, uint64_t floor, uint64_t end)
{
	uint64_t *ring = NULL, window = n, from, count;
	struct kmsg_record rec;
	int rc = 0;

	if (n >= end - floor) {
		*start = floor;  /* all of them: no need to count */
		return 0;
	}
	ring = malloc(n * sizeof(*ring));
	if (ring == NULL)
		return -ENOMEM;
	for (;;) {
		from = window < end - floor ? end - window : floor;
		rc = kmsg_reader_seek_seq(r, from);
		if (rc < 0)
			goto out;
		count = 0;
		while ((rc = kmsg_reader_next(r, &rec)) > 0 && rec.seq < end) {
			if (out_match(o, &rec))
				ring[count++ % n] = rec.seq;
		}
		if (rc < 0)
			goto out;
		/* the first line read may have begun before the window
		 * (a line written in parts): it is never one of the n */
		if (count > n) {
			*start = ring[count % n];
			break;
		}
		if (from == floor) {
			*start = floor;
			break;
		}
		window = window > UINT64_MAX / 4 ? UINT64_MAX : window * 4;
	}
	rc = 0;
out:
	free(ring);
	return rc;
}
