/*
 * matches.h - journalctl's KEY=value matches of read and follow, and
 * read's --list-values (matches.c).
 */
#ifndef KMSG_MATCHES_H
#define KMSG_MATCHES_H

#include "cmd.h"

struct output;

/* read's --list-values KEY. */
extern const struct poptOption match_options[];

struct matches;
struct values;

/*
 * Builds journalctl's matches from words (KEY=value and "+", NULL-
 * terminated, or NULL) and the nfields --match KEY=VALUE strings fields
 * (checked by the option); neither: *m is NULL.  A bad word is bad usage:
 * prints why, naming it, and returns EXIT_USAGE; EXIT_FAIL if memory runs
 * out; else 0.
 */
int match_parse(struct matches **m, const char *const *words,
		const char *const *fields, size_t nfields, const char *cmd);

/* 1 if rec has every --match field and passes one group of the words
 * (every key of it). */
int match_test(const struct matches *m, const struct kmsg_record *rec);

/* 1 if the matches look at the facility or level (m may be NULL). */
int match_prio(const struct matches *m);

/* Frees what match_parse() made (NULL: nothing). */
void match_free(struct matches *m);

/*
 * popt gives an option whose argument is optional (-b, --color,
 * --case-sensitive) the next word unless it begins with '-', so that
 * "kmsg read -b _PID=1" would take _PID=1 for a boot.  Where such an
 * option of table is followed by a match (a word with '=', or "+"), it
 * is replaced in argv by its form with the default argument ("--boot=0").
 */
void match_protect_args(int argc, const char **argv, const struct poptOption *table);

/*
 * The list --list-values asked for into *v (NULL when not given).  A key
 * that is neither a field key nor a member is bad usage: prints why and
 * returns EXIT_USAGE; EXIT_FAIL if memory runs out; else 0.
 */
int values_setup(struct values **v, const char *cmd);

/* 1 if the list is of the facility or level (v may be NULL). */
int values_prio(const struct values *v);

/*
 * Prints each value of the key rec has that the list has not printed
 * yet, one a line, escaped as the short output escapes text (a newline as
 * \x0a).  0 or -errno as out_record().
 */
int values_add(struct values *v, struct output *o, const struct kmsg_record *rec);

/* Frees what values_setup() made (NULL: nothing) and the option's copy. */
void values_free(struct values *v);

#endif
