/*
 * matches.c - journalctl's matches as the arguments of kmsg read and kmsg
 * follow ("kmsg read UNIT=web claimed_pid=42 + level=err"), and read's
 * --list-values KEY, journalctl's -F.  out_setup() builds both,
 * out_match() asks the matches, out_record() hands what passes to the
 * list.
 *
 * A key is a field key (A-Z, 0-9 and _, from a capital letter) or the name
 * of a member of the record as -o json prints it (seq, claimed_pid,
 * level, ...), or journalctl's name for one (PRIORITY, ...): see props[].
 * _PID, _UID and _GID are fields, the kernel's word that a trusted
 * ingester (kmsg listen) stores; never the pid a writer claims.  Words
 * of different keys must all match, words of one key are alternatives,
 * and "+" separates groups of which one must match, as in journalctl.
 *
 * The list keeps each value it printed in a hash table of bounded size
 * (VALUES_MAX_BYTES of values, VALUES_MAX_SLOTS slots): a value is printed
 * the first time it is seen, so the list comes as the log is read; when
 * the table is full it is emptied, said once on stderr, and from then on
 * a value may be printed again.  Memory stays bounded whatever the log.
 */
#define _GNU_SOURCE
#include "output.h"
#include "matches.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* What a key names: a field, or a member of the record. */
enum prop {
	P_FIELD, P_SEQ, P_SEQ_ID, P_BOOT_ID, P_PID, P_CALLER, P_FACILITY,
	P_LEVEL, P_TEXT, P_TIME,
};

/* How a member's value is written: as a number, hex, a name or bytes. */
enum form { F_NUM, F_HEX, F_NAME, F_BYTES };

static const struct {
	const char *name;
	enum prop prop;
	enum form form;
} props[] = {
	/* -o json's names */
	{ "seq", P_SEQ, F_NUM },
	{ "seq_id", P_SEQ_ID, F_HEX },
	{ "boot_id", P_BOOT_ID, F_HEX },
	{ "claimed_pid", P_PID, F_NUM },
	{ "pid", P_PID, F_NUM },  /* its name before */
	{ "caller", P_CALLER, F_NUM },
	{ "facility", P_FACILITY, F_NUM },
	{ "facility_name", P_FACILITY, F_NAME },
	{ "level", P_LEVEL, F_NUM },
	{ "level_name", P_LEVEL, F_NAME },
	{ "text", P_TEXT, F_BYTES },
	/* journalctl's names of the same */
	{ "_BOOT_ID", P_BOOT_ID, F_HEX },
	{ "SYSLOG_FACILITY", P_FACILITY, F_NUM },
	{ "PRIORITY", P_LEVEL, F_NUM },
	{ "MESSAGE", P_TEXT, F_BYTES },
	/* times are ranges: --since and --until */
	{ "time", P_TIME, F_NUM },
	{ "time_ns", P_TIME, F_NUM },
	{ "boot_ns", P_TIME, F_NUM },
};

#define KEYS_WORDS "a field key (A-Z, 0-9 and _, from a capital letter, at " \
	"most 64) or a member: seq, seq_id, boot_id, claimed_pid, caller, " \
	"facility, facility_name, level, level_name, text (or journalctl's " \
	"_BOOT_ID, SYSLOG_FACILITY, PRIORITY, MESSAGE)"

/* One KEY=value word. */
struct term {
	enum prop prop;
	const char *key;      /* the field key (P_FIELD) */
	size_t key_len;
	const char *value;    /* P_FIELD and P_TEXT: the bytes to match; P_CALLER
	                         in --show-caller's form (T123, C3, P77), or NULL */
	size_t value_len;
	uint64_t num;         /* the others: the value */
};

/* Words between "+"s, sorted so that the words of one key are together. */
struct group {
	struct term *t;
	size_t n;
};

struct matches {
	struct term *all;     /* --match: fields every record must have */
	size_t nall;
	struct group *g;      /* the arguments: one group must match */
	size_t ng;
	struct term *terms;
	char **words;         /* copies: the terms point into them */
	size_t nwords;
};

/* The bounds of --list-values' table: 16 MiB of values, 8 MiB of slots. */
#define VALUES_MAX_BYTES (16u << 20)
#define VALUES_MAX_SLOTS (1u << 20)

struct values {
	const char *name;     /* the key as given, for messages */
	enum prop prop;
	enum form form;
	const char *key;      /* P_FIELD */
	size_t key_len;
	uint64_t *slots;      /* hash << 32 | offset in arena + 1; 0: empty */
	size_t nslots, used;
	char *arena;          /* each value: its length (4 bytes) and bytes */
	size_t alen, acap;
	int emptied;          /* the table was full once: said so */
};

/* --list-values, as the callback saw it: a copy (popt reuses its own). */
static char *list_key;
static int list_nomem;

static void on_option(void *state, int val, const char *arg)
{
	(void)state;  /* what it was given is its own */
	(void)val;    /* --list-values alone */
	free(list_key);
	list_key = strdup(arg);
	list_nomem = list_key == NULL;
}

static const struct cli_option_handler handler = { on_option, NULL };

const struct poptOption match_options[] = {
	CLI_OPTION_HANDLER(&handler),
	{ "list-values", '\0', POPT_ARG_STRING, NULL, 1,
	  "list the distinct values of a field or member among the records "
	  "that pass the filters (journalctl -F)", "KEY" },
	POPT_TABLEEND
};

/* ------------------------------------------------------------------ */
/* Words                                                               */

/*
 * Where key (len bytes) is in props[], or -1 for a field key, or -2 for
 * neither.
 */
static int find_key(const char *key, size_t len)
{
	for (size_t i = 0; i < sizeof(props) / sizeof(props[0]); i++) {
		if (strlen(props[i].name) == len && memcmp(props[i].name, key, len) == 0)
			return (int)i;
	}
	return kmsg_key_valid(key, len) ? -1 : -2;
}

/*
 * An id as -o json prints it, 16 hex digits; for a boot id also the 32 of
 * /proc/sys/kernel/random/boot_id, dashes and all, of which records keep
 * the first 16.  -1 if s is neither.
 */
static int parse_id(uint64_t *v, const char *s, int boot)
{
	uint64_t n = 0;
	size_t digits = 0;

	for (; *s; s++) {
		if (*s == '-' && boot)
			continue;
		if (!isxdigit((unsigned char)*s))
			return -1;
		if (digits++ < 16)
			n = n << 4 | (uint64_t)(isdigit((unsigned char)*s) ? *s - '0' :
						tolower((unsigned char)*s) - 'a' + 10);
	}
	if (digits != 16 && !(boot && digits == 32))
		return -1;
	*v = n;
	return 0;
}

/*
 * The value of word (KEY=value, key being props[i]) into t.  On a bad one
 * says why, naming the word, and returns EXIT_USAGE.
 */
static int parse_value(struct term *t, int i, const char *word, const char *value,
		       const char *cmd)
{
	int v;

	switch (props[i].prop) {
	case P_CALLER:
		/* the column --show-caller prints, or the number -o json does */
		if (value[0] == 'T' || value[0] == 'C' || value[0] == 'P') {
			uint64_t n;

			if (cli_parse_u64(&n, value + 1, strlen(value + 1), UINT32_MAX))
				return cli_usage_error(cmd, word, "not a caller: T, C or P and "
						       "a number as --show-caller shows it, or "
						       "the number -o json shows");
			t->value = value;
			t->value_len = strlen(value);
			return 0;
		}
		/* fall through */
	case P_SEQ:
	case P_PID:
		if (cli_parse_u64(&t->num, value, strlen(value), props[i].prop == P_SEQ ? UINT64_MAX : UINT32_MAX))
			return cli_usage_error(cmd, word, "not a %s (a decimal number)",
					       props[i].prop == P_SEQ ? "sequence number" :
					       props[i].prop == P_PID ? "pid" : "caller id");
		return 0;
	case P_SEQ_ID:
	case P_BOOT_ID:
		if (parse_id(&t->num, value, props[i].prop == P_BOOT_ID))
			return cli_usage_error(cmd, word, "not %s", props[i].prop == P_BOOT_ID ?
					       "a boot id: 16 hex digits as -o json shows it, or "
					       "the 32 of /proc/sys/kernel/random/boot_id" :
					       "16 hex digits, as -o json and kmsg stat show it");
		return 0;
	case P_FACILITY:
		v = kmsg_facility_parse(value, strlen(value));
		if (v < 0)
			return cli_usage_error(cmd, word, "not a facility (kern, user, mail, "
					       "daemon, auth, syslog, lpr, news, uucp, cron, "
					       "authpriv, ftp, local0..local7, or 0 to 23)");
		t->num = (uint64_t)v;
		return 0;
	case P_LEVEL:
		v = kmsg_level_parse(value, strlen(value));
		if (v < 0)
			return cli_usage_error(cmd, word, "not a level (emerg, alert, crit, "
					       "err, warning, notice, info, debug, or 0 to 7)");
		t->num = (uint64_t)v;
		return 0;
	case P_TEXT:
		t->value = value;
		t->value_len = strlen(value);
		return 0;
	case P_FIELD:
	case P_TIME:
		break;
	}
	return cli_usage_error(cmd, word, "not a key with a value to match");
}

/*
 * The key of a word, checked: the index in props[], -1 for a field.  On a
 * bad one says why, naming what, and returns -2.
 */
static int check_key(const char *what, const char *key, size_t len, const char *cmd)
{
	int i = find_key(key, len);

	/* the kernel's word, as kmsg listen stores it: a record a writer
	 * appended itself has none (kmsg(5), Trust) */
	if (len == 4 && (memcmp(key, "_PID", 4) == 0 || memcmp(key, "_UID", 4) == 0 ||
			 memcmp(key, "_GID", 4) == 0))
		return -1;
	if (i == -2) {
		cli_usage_error(cmd, what, "'%.*s' is not %s", (int)len, key, KEYS_WORDS);
		return -2;
	}
	if (i >= 0 && props[i].prop == P_TIME) {
		cli_usage_error(cmd, what, "times are ranges: use --since and --until "
				"(or seq= for one record)");
		return -2;
	}
	return i;
}

/* Words of a group in key order: members first, then fields by key. */
static int cmp_term(const void *a, const void *b)
{
	const struct term *x = a, *y = b;
	size_t n;
	int c;

	if (x->prop != y->prop)
		return x->prop < y->prop ? -1 : 1;
	if (x->prop != P_FIELD)
		return 0;
	n = x->key_len < y->key_len ? x->key_len : y->key_len;
	c = memcmp(x->key, y->key, n);
	return c ? c : (x->key_len > y->key_len) - (x->key_len < y->key_len);
}

static int same_key(const struct term *x, const struct term *y)
{
	return x->prop == y->prop && (x->prop != P_FIELD ||
		(x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0));
}

void match_free(struct matches *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->nwords; i++)
		free(m->words[i]);
	free(m->words);
	free(m->terms);
	free(m->g);
	free(m);
}

/* Out of memory while building: said, EXIT_FAIL. */
static int no_memory(struct matches *m)
{
	match_free(m);
	return cli_error(NULL, "out of memory");
}

/* A copy of word kept in m, for the terms to point into; NULL if out of memory. */
static char *keep_word(struct matches *m, const char *word)
{
	char *copy = strdup(word);

	if (copy)
		m->words[m->nwords++] = copy;
	return copy;
}

/* The value of a hex digit, or -1. */
static int hex_digit(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* 1 if s holds a \xHH escape. */
static int has_escape(const char *s)
{
	for (; (s = strstr(s, "\\x")) != NULL; s++)
		if (hex_digit(s[2]) >= 0 && hex_digit(s[3]) >= 0)
			return 1;
	return 0;
}

/* Undoes s's \xHH escapes in place; the length of the bytes left. */
static size_t unescape(char *s)
{
	size_t o = 0;

	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '\\' && s[i + 1] == 'x' && hex_digit(s[i + 2]) >= 0 &&
		    hex_digit(s[i + 3]) >= 0) {
			s[o++] = (char)(hex_digit(s[i + 2]) << 4 | hex_digit(s[i + 3]));
			i += 3;
		} else {
			s[o++] = s[i];
		}
	}
	return o;
}

int match_parse(struct matches **out, const char *const *words,
		const char *const *fields, size_t nfields, const char *cmd)
{
	struct matches *m;
	size_t n = 0, nterms = 0;

	*out = NULL;
	while (words && words[n])
		n++;
	if (n == 0 && nfields == 0)
		return 0;
	m = calloc(1, sizeof(*m));
	if (m == NULL)
		return no_memory(m);
	/* a word may bring a second term: its value with \xHH undone */
	m->words = calloc(2 * n + nfields, sizeof(*m->words));
	m->terms = calloc(2 * n + nfields, sizeof(*m->terms));
	m->g = calloc(n + 1, sizeof(*m->g));
	if (m->words == NULL || m->terms == NULL || m->g == NULL)
		return no_memory(m);
	/* --match KEY=VALUE, checked by its option: each a field to have */
	m->all = m->terms;
	for (size_t i = 0; i < nfields; i++) {
		char *copy = keep_word(m, fields[i]), *eq;
		struct term *t = &m->terms[nterms++];

		if (copy == NULL)
			return no_memory(m);
		eq = strchr(copy, '=');
		*t = (struct term){ .prop = P_FIELD, .key = copy, .key_len = (size_t)(eq - copy),
				    .value = eq + 1, .value_len = strlen(eq + 1) };
		m->nall++;
	}
	for (size_t i = 0; i < n; i++) {
		const char *w = words[i];
		char *copy, *eq;
		struct term *t;
		int k;

		if (strcmp(w, "+") == 0) {
			if (i == 0 || i + 1 == n || strcmp(words[i + 1], "+") == 0) {
				match_free(m);
				return cli_usage_error(cmd, "+", "'+' goes between two groups of "
						       "KEY=value matches (either group passes)%s",
						       i == 0 ? ", not first" : i + 1 == n ?
						       ", not last" : ", once");
			}
			m->ng++;
			continue;
		}
		eq = strchr(w, '=');
		if (eq == NULL) {
			match_free(m);
			return cli_usage_error(cmd, NULL, "unexpected argument '%s': matches "
					       "are KEY=value (with + between groups)", w);
		}
		k = check_key(w, w, (size_t)(eq - w), cmd);
		if (k == -2) {
			match_free(m);
			return EXIT_USAGE;
		}
		copy = keep_word(m, w);
		if (copy == NULL)
			return no_memory(m);
		t = &m->terms[nterms++];
		t->prop = k < 0 ? P_FIELD : props[k].prop;
		t->key = copy;
		t->key_len = (size_t)(eq - w);
		if (k < 0) {
			t->value = copy + (eq - w) + 1;
			t->value_len = strlen(t->value);
		} else if ((k = parse_value(t, k, w, copy + (eq - w) + 1, cmd)) != 0) {
			match_free(m);
			return k;
		}
		if (m->g[m->ng].t == NULL)
			m->g[m->ng].t = t;
		m->g[m->ng].n++;
		if ((t->prop == P_FIELD || t->prop == P_TEXT) && has_escape(t->value)) {
			/* --list-values and the short output write a byte they
			 * cannot show as \xHH: the value so written selects the
			 * bytes it stands for too, as another word of the key */
			char *raw = keep_word(m, t->value);

			if (raw == NULL)
				return no_memory(m);
			m->terms[nterms] = *t;
			m->terms[nterms].value = raw;
			m->terms[nterms].value_len = unescape(raw);
			nterms++;
			m->g[m->ng].n++;
		}
	}
	if (n > 0)
		m->ng++;
	for (size_t i = 0; i < m->ng; i++)
		qsort(m->g[i].t, m->g[i].n, sizeof(struct term), cmp_term);
	*out = m;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Matching                                                            */

/* 1 if the record has a priority (text read from dmesg may have none). */
static int has_prio(const struct kmsg_record *rec)
{
	return rec->facility < KMSG_NFACILITIES && rec->level < 8;
}

/*
 * The number of rec's member prop into *num; 0 if rec has none (facility
 * and level of text that named no priority) or prop is not a number.
 */
static int member_num(uint64_t *num, const struct kmsg_record *rec, enum prop prop)
{
	switch (prop) {
	case P_SEQ:
		*num = rec->seq;
		return 1;
	case P_SEQ_ID:
		*num = rec->seq_id;
		return 1;
	case P_BOOT_ID:
		*num = rec->boot_id;
		return 1;
	case P_PID:
		*num = rec->pid;
		return 1;
	case P_CALLER:
		*num = rec->caller;
		return 1;
	case P_FACILITY:
		*num = rec->facility;
		return has_prio(rec);
	case P_LEVEL:
		*num = rec->level;
		return has_prio(rec);
	case P_TEXT:
	case P_FIELD:
	case P_TIME:
		break;
	}
	return 0;
}

/* 1 if rec's member t->prop is t's value. */
static int member_is(const struct term *t, const struct kmsg_record *rec)
{
	uint64_t num;

	if (t->prop == P_TEXT)
		return rec->text_len == t->value_len &&
		       (t->value_len == 0 || memcmp(rec->text, t->value, t->value_len) == 0);
	if (t->prop == P_CALLER && t->value) {
		char name[12];
		int n = kmsg_fmt_caller(name, sizeof(name), rec);

		return n > 0 && (size_t)n == t->value_len && memcmp(name, t->value, (size_t)n) == 0;
	}
	return member_num(&num, rec, t->prop) && num == t->num;
}

/* 1 if rec has a field of the key of t[0..n) with the value of one of them. */
static int field_is(const struct term *t, size_t n, const struct kmsg_record *rec)
{
	struct kmsg_field f;
	size_t pos = 0;

	while (kmsg_field_next(&f, rec, &pos) == 1) {
		if (f.key_len != t->key_len || memcmp(f.key, t->key, f.key_len) != 0)
			continue;
		for (size_t i = 0; i < n; i++) {
			if (f.value_len == t[i].value_len &&
			    memcmp(f.value, t[i].value, f.value_len) == 0)
				return 1;
		}
	}
	return 0;
}

/* 1 if every key of the group has a word that rec matches. */
static int group_matches(const struct group *g, const struct kmsg_record *rec)
{
	for (size_t i = 0, j; i < g->n; i = j) {
		int ok = 0;

		for (j = i + 1; j < g->n && same_key(&g->t[j], &g->t[i]); j++)
			;
		if (g->t[i].prop == P_FIELD) {
			ok = field_is(&g->t[i], j - i, rec);
		} else {
			for (size_t k = i; k < j && !ok; k++)
				ok = member_is(&g->t[k], rec);
		}
		if (!ok)
			return 0;
	}
	return 1;
}

int match_test(const struct matches *m, const struct kmsg_record *rec)
{
	for (size_t i = 0; i < m->nall; i++) {
		if (!field_is(&m->all[i], 1, rec))
			return 0;
	}
	if (m->ng == 0)
		return 1;
	for (size_t i = 0; i < m->ng; i++) {
		if (group_matches(&m->g[i], rec))
			return 1;
	}
	return 0;
}

int match_prio(const struct matches *m)
{
	for (size_t i = 0; m && i < m->nwords; i++) {
		if (m->terms[i].prop == P_FACILITY || m->terms[i].prop == P_LEVEL)
			return 1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* --list-values                                                       */

int values_setup(struct values **out, const char *cmd)
{
	struct values *v;
	int k;

	*out = NULL;
	if (list_nomem)
		return cli_error(NULL, "out of memory");
	if (list_key == NULL)
		return 0;
	k = check_key("--list-values", list_key, strlen(list_key), cmd);
	if (k == -2)
		return EXIT_USAGE;
	v = calloc(1, sizeof(*v));
	if (v == NULL)
		return cli_error(NULL, "out of memory");
	v->name = list_key;
	v->prop = k < 0 ? P_FIELD : props[k].prop;
	v->form = k < 0 ? F_BYTES : props[k].form;
	v->key = list_key;
	v->key_len = strlen(list_key);
	*out = v;
	return 0;
}

int values_prio(const struct values *v)
{
	return v && (v->prop == P_FACILITY || v->prop == P_LEVEL);
}

void values_free(struct values *v)
{
	if (v) {
		free(v->slots);
		free(v->arena);
		free(v);
	}
	free(list_key);
	list_key = NULL;
}

/* FNV-1a: values are short, and any hash of their bytes does. */
static uint32_t hash(const char *p, size_t n)
{
	uint64_t h = UINT64_C(14695981039346656037);

	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)p[i]) * UINT64_C(1099511628211);
	return (uint32_t)(h ^ h >> 32);
}

/* Empties the table (its memory stays for what comes next). */
static void values_empty(struct values *v)
{
	if (v->slots)
		memset(v->slots, 0, v->nslots * sizeof(*v->slots));
	v->used = 0;
	v->alen = 0;
}

/* The slot of p (n bytes, hashed h): the one holding it, or an empty one. */
static uint64_t *slot_of(struct values *v, const char *p, size_t n, uint32_t h)
{
	for (size_t i = h & (v->nslots - 1);; i = (i + 1) & (v->nslots - 1)) {
		uint64_t s = v->slots[i];
		uint32_t len;

		if (s == 0)
			return &v->slots[i];
		if ((uint32_t)(s >> 32) != h)
			continue;
		memcpy(&len, v->arena + (uint32_t)s - 1, sizeof(len));
		if (len == n && memcmp(v->arena + (uint32_t)s - 1 + sizeof(len), p, n) == 0)
			return &v->slots[i];
	}
}

/* Twice the slots (n of them the first time), the values kept; -ENOMEM. */
static int grow_slots(struct values *v, size_t n)
{
	uint64_t *old = v->slots;
	size_t old_n = v->nslots;

	v->slots = calloc(n, sizeof(*v->slots));
	if (v->slots == NULL) {
		v->slots = old;
		return -ENOMEM;
	}
	v->nslots = n;
	for (size_t i = 0; i < old_n; i++) {
		size_t j = (uint32_t)(old[i] >> 32) & (n - 1);

		if (old[i] == 0)
			continue;
		while (v->slots[j])  /* the values are distinct: the first free */
			j = (j + 1) & (n - 1);
		v->slots[j] = old[i];
	}
	free(old);
	return 0;
}

/*
 * 1 if p (n bytes) was not in the table (it is now), 0 if it was, or
 * -ENOMEM.  A table that is full (VALUES_MAX_BYTES of values, or three
 * quarters of VALUES_MAX_SLOTS) is emptied first, said once on stderr.
 */
static int values_insert(struct values *v, struct output *o, const char *p, size_t n)
{
	uint32_t h = hash(p, n), len = (uint32_t)n;
	size_t need = sizeof(len) + n;
	uint64_t *s;

	if (v->slots && *(s = slot_of(v, p, n, h)) != 0)
		return 0;
	if (v->alen + need > VALUES_MAX_BYTES ||
	    (v->nslots == VALUES_MAX_SLOTS && v->used + 1 > VALUES_MAX_SLOTS / 4 * 3)) {
		if (!v->emptied) {
			out_flush(o);
			cli_error("--list-values", "%s: more than %u values or %u MiB of "
				  "them: the list goes on, but a value may now come again "
				  "(sort -u removes repeats)", v->name, VALUES_MAX_SLOTS / 4 * 3,
				  VALUES_MAX_BYTES >> 20);
			v->emptied = 1;
		}
		values_empty(v);
	}
	if (v->nslots == 0 || (v->used + 1 > v->nslots / 4 * 3 && v->nslots < VALUES_MAX_SLOTS)) {
		if (grow_slots(v, v->nslots ? v->nslots * 2 : 1024) < 0)
			return -ENOMEM;
	}
	if (v->alen + need > v->acap) {
		size_t cap = v->acap ? v->acap : 65536;
		char *a;

		while (cap < v->alen + need)
			cap *= 2;
		if (cap > VALUES_MAX_BYTES)
			cap = VALUES_MAX_BYTES;
		a = realloc(v->arena, cap);
		if (a == NULL)
			return -ENOMEM;
		v->arena = a;
		v->acap = cap;
	}
	s = slot_of(v, p, n, h);
	memcpy(v->arena + v->alen, &len, sizeof(len));
	memcpy(v->arena + v->alen + sizeof(len), p, n);
	*s = (uint64_t)h << 32 | (uint64_t)(v->alen + 1);
	v->alen += need;
	v->used++;
	return 1;
}

/*
 * Prints a value on a line of its own, escaped as the short output escapes
 * text, and a newline in it as \x0a, so that a value is always one line.
 */
static int print_value(struct output *o, const char *p, size_t n)
{
	int rc = 0;

	for (;;) {
		const char *nl = memchr(p, '\n', n);
		size_t len = nl ? (size_t)(nl - p) : n;

		rc = out_verbatim(o, p, len, 0);
		if (rc < 0 || nl == NULL)
			break;
		rc = out_text(o, "\\x0a");
		if (rc < 0)
			break;
		p += len + 1;
		n -= len + 1;
	}
	return rc < 0 ? rc : out_text(o, "\n");
}

/* A value made of text: added, and printed if it is new.  0 or -errno. */
static int value_bytes(struct values *v, struct output *o, const char *p, size_t n)
{
	int rc = values_insert(v, o, p, n);

	return rc <= 0 ? rc : print_value(o, p, n);
}

int values_add(struct values *v, struct output *o, const struct kmsg_record *rec)
{
	char buf[32];
	const char *name;
	uint64_t num;
	int rc;

	switch (v->prop) {
	case P_FIELD: {
		struct kmsg_field f;
		size_t pos = 0;

		while ((rc = kmsg_field_next(&f, rec, &pos)) == 1) {
			if (f.key_len == v->key_len && memcmp(f.key, v->key, f.key_len) == 0 &&
			    (rc = value_bytes(v, o, f.value, f.value_len)) < 0)
				return rc;
		}
		return 0;
	}
	case P_TEXT:
		return value_bytes(v, o, rec->text ? rec->text : "", rec->text_len);
	default:
		break;
	}
	if (!member_num(&num, rec, v->prop))
		return 0;  /* null in -o json: no value */
	if (v->form == F_NAME) {
		name = v->prop == P_FACILITY ? kmsg_facility_name((unsigned)num) :
		       kmsg_level_name((unsigned)num);
		return value_bytes(v, o, name, strlen(name));
	}
	/* as -o json shows them: 0 is null there, no value */
	if (num == 0 && v->prop != P_SEQ && v->prop != P_FACILITY && v->prop != P_LEVEL)
		return 0;
	if (v->form == F_HEX)
		snprintf(buf, sizeof(buf), "%016llx", (unsigned long long)num);
	else
		snprintf(buf, sizeof(buf), "%llu", (unsigned long long)num);
	return value_bytes(v, o, buf, strlen(buf));
}

/* 1 if table (or a table it includes) has the long option name. */
static int has_option(const struct poptOption *table, const char *name)
{
	for (const struct poptOption *o = table; o->longName || o->shortName || o->arg; o++) {
		if ((o->argInfo & POPT_ARG_MASK) == POPT_ARG_INCLUDE_TABLE) {
			if (o->arg && has_option(o->arg, name))
				return 1;
		} else if (o->longName && strcmp(o->longName, name) == 0) {
			return 1;
		}
	}
	return 0;
}

void match_protect_args(int argc, const char **argv, const struct poptOption *table)
{
	static const struct { const char *word, *name, *full; } optional[] = {
		{ "-b", "boot", "--boot=0" },
		{ "--boot", "boot", "--boot=0" },
		{ "-L", "color", "--color=auto" },
		{ "--color", "color", "--color=auto" },
		{ "--case-sensitive", "case-sensitive", "--case-sensitive=yes" },
	};

	for (int i = 1; i + 1 < argc && strcmp(argv[i], "--") != 0; i++) {
		if (!strchr(argv[i + 1], '=') && strcmp(argv[i + 1], "+") != 0)
			continue;
		for (size_t k = 0; k < sizeof(optional) / sizeof(optional[0]); k++) {
			if (strcmp(argv[i], optional[k].word) == 0 &&
			    has_option(table, optional[k].name)) {
				argv[i] = optional[k].full;
				break;
			}
		}
	}
}
