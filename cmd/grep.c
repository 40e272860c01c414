/*
 * grep.c - the filters of kmsg read and kmsg follow on what a record says
 * and who wrote it: -g/--grep (a PCRE2 pattern on the text, with
 * journalctl's case rule and --case-sensitive) and --pid.  out_setup()
 * builds them, out_match() asks them, so they combine with every other
 * filter, -n's "the last N that match" included.
 *
 * The text is matched as UTF-8 that may be invalid (PCRE2_MATCH_INVALID_UTF):
 * a record's text may hold any bytes, and none of them makes matching fail;
 * no part of a pattern matches an invalid sequence, so a match never spans
 * one.
 */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "output.h"
#include "grep.h"

#include <errno.h>
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_GREP = 1, OPT_CASE, OPT_PID };

struct grep {
	pcre2_code *re;          /* NULL: no -g */
	pcre2_match_data *md;
	uint32_t *pids;          /* --pid, in the order given */
	size_t npids;
};

/* What the options said, for grep_setup(): the last -g wins, as in journalctl. */
static struct {
	char *pattern;
	int case_given, case_sensitive;
	uint32_t *pids;
	size_t npids;
	char err[200];
} given;

static void keep_error(const char *what, const char *arg, const char *why)
{
	if (given.err[0] == '\0')
		snprintf(given.err, sizeof(given.err), "%s %s: %s", what, arg, why);
}

/* journalctl's (systemd's) booleans: 1 yes y true t on, 0 no n false f off. */
static int parse_bool(const char *s)
{
	static const char *const yes[] = { "1", "yes", "y", "true", "t", "on" };
	static const char *const no[] = { "0", "no", "n", "false", "f", "off" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i]))
			return 1;
		if (!strcasecmp(s, no[i]))
			return 0;
	}
	return -1;
}

/* Adds a comma-separated list of decimal pids; -1 if one is not a pid. */
static int add_pids(const char *list)
{
	const char *p = list;

	for (;;) {
		unsigned long long v = 0;
		const char *start = p;
		uint32_t *n;

		while (*p >= '0' && *p <= '9' && v <= UINT32_MAX)
			v = v * 10 + (unsigned)(*p++ - '0');
		if (p == start || v > UINT32_MAX || (*p != ',' && *p != '\0'))
			return -1;
		n = realloc(given.pids, (given.npids + 1) * sizeof(*n));
		if (n == NULL)
			return -ENOMEM;
		given.pids = n;
		given.pids[given.npids++] = (uint32_t)v;
		if (*p == '\0')
			return 0;
		p++;
	}
}

static void on_option(void *state, int val, const char *arg)
{
	int v;

	(void)state;  /* what it was given is its own: see given */
	switch (val) {
	case OPT_GREP:
		/* popt reuses the storage of arg once the next option comes */
		free(given.pattern);
		given.pattern = strdup(arg);
		if (given.pattern == NULL)
			keep_error("--grep", arg, "out of memory");
		break;
	case OPT_CASE:
		v = arg == NULL ? 1 : parse_bool(arg);
		if (v < 0)
			keep_error("--case-sensitive", arg, "not a boolean (yes, no, "
				   "true, false, 1, 0, on, off)");
		given.case_given = 1;
		given.case_sensitive = v > 0;
		break;
	case OPT_PID:
		v = add_pids(arg);
		if (v == -ENOMEM)
			keep_error("--pid", arg, "out of memory");
		else if (v < 0)
			keep_error("--pid", arg, "not a pid or a comma-separated list "
				   "of pids (as 1234 or 1234,5678)");
		break;
	}
}

static const struct cli_option_handler handler = { on_option, NULL };

const struct poptOption grep_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "grep", 'g', POPT_ARG_STRING, NULL, OPT_GREP,
	  "only records whose text matches this PCRE2 pattern (no upper-case "
	  "letter in it: any case)", "PATTERN" },
	{ "case-sensitive", '\0', POPT_ARG_STRING | POPT_ARGFLAG_OPTIONAL, NULL, OPT_CASE,
	  "--grep matches case-sensitively, or not (=no)", "BOOL" },
	{ "pid", '\0', POPT_ARG_STRING, NULL, OPT_PID,
	  "only records written by these processes (repeat or a comma list)",
	  "PID" },
	POPT_TABLEEND
};

/*
 * journalctl's rule: a pattern with an upper-case letter in it (anywhere,
 * even in an escape such as \S) matches case-sensitively.  1, 0, or -1
 * when the pattern is not UTF-8, which compiling it then reports.
 */
static int has_upper(const char *pattern)
{
	pcre2_code *upper;
	pcre2_match_data *md;
	int err, rc;
	PCRE2_SIZE off;

	upper = pcre2_compile((PCRE2_SPTR)"\\p{Lu}", PCRE2_ZERO_TERMINATED,
			      PCRE2_UTF | PCRE2_MATCH_INVALID_UTF, &err, &off, NULL);
	if (upper == NULL)
		return -1;
	md = pcre2_match_data_create_from_pattern(upper, NULL);
	rc = md ? pcre2_match(upper, (PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED,
			      0, 0, md, NULL) : PCRE2_ERROR_NOMEMORY;
	pcre2_match_data_free(md);
	pcre2_code_free(upper);
	return rc >= 0 ? 1 : rc == PCRE2_ERROR_NOMATCH ? 0 : -1;
}

/* Compiles -g's pattern into g; EXIT_USAGE after saying why it is invalid. */
static int compile(struct grep *g, const char *cmd)
{
	uint32_t flags = PCRE2_UTF | PCRE2_MATCH_INVALID_UTF;
	PCRE2_UCHAR why[160];
	PCRE2_SIZE off;
	int err;

	if (given.case_given ? !given.case_sensitive : has_upper(given.pattern) == 0)
		flags |= PCRE2_CASELESS;
	g->re = pcre2_compile((PCRE2_SPTR)given.pattern, PCRE2_ZERO_TERMINATED,
			      flags, &err, &off, NULL);
	if (g->re == NULL) {
		if (pcre2_get_error_message(err, why, sizeof(why)) < 0)
			snprintf((char *)why, sizeof(why), "PCRE2 error %d", err);
		return cli_usage_error(cmd, NULL, "--grep '%s': %s at offset %zu",
				       given.pattern, (const char *)why, (size_t)off);
	}
	/* JIT is only faster; without it (no JIT here) matching still works */
	pcre2_jit_compile(g->re, PCRE2_JIT_COMPLETE);
	g->md = pcre2_match_data_create_from_pattern(g->re, NULL);
	if (g->md == NULL)
		return cli_error(NULL, "out of memory");
	return 0;
}

int grep_setup(struct grep **out, const char *cmd)
{
	struct grep *g;
	int rc;

	*out = NULL;
	if (given.err[0])
		return cli_usage_error(cmd, NULL, "%s", given.err);
	if (given.pattern == NULL && given.npids == 0)
		return 0;
	g = calloc(1, sizeof(*g));
	if (g == NULL)
		return cli_error(NULL, "out of memory");
	g->pids = given.pids;
	g->npids = given.npids;
	given.pids = NULL;
	given.npids = 0;
	rc = given.pattern ? compile(g, cmd) : 0;
	free(given.pattern);
	given.pattern = NULL;
	if (rc != 0) {
		grep_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

void grep_free(struct grep *g)
{
	if (g == NULL)
		return;
	pcre2_match_data_free(g->md);
	pcre2_code_free(g->re);
	free(g->pids);
	free(g);
}

int grep_match(const struct grep *g, const struct kmsg_record *rec)
{
	if (g->npids) {
		size_t i = 0;

		while (i < g->npids && g->pids[i] != rec->pid)
			i++;
		if (i == g->npids)
			return 0;
	}
	/* a text of no bytes still matches a pattern such as ^$ */
	return g->re == NULL ||
	       pcre2_match(g->re, (PCRE2_SPTR)(rec->text ? rec->text : ""),
			   rec->text_len, 0, 0, g->md, NULL) >= 0;
}
