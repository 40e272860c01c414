/*
 * grep.h - the filters of read and follow on a record's text and writer:
 * -g/--grep, --case-sensitive and --pid (grep.c).
 */
#ifndef KMSG_GREP_H
#define KMSG_GREP_H

#include "cmd.h"

/* -g/--grep, --case-sensitive and --pid: read and follow include them. */
extern const struct poptOption grep_options[];

struct grep;

/*
 * Builds the filters the options of grep_options asked for into *g (NULL
 * when none was given).  An invalid pattern or pid is bad usage: prints
 * why ("kmsg: --grep '(': missing closing parenthesis at offset 1") and
 * returns EXIT_USAGE; EXIT_FAIL if memory runs out; else 0.
 */
int grep_setup(struct grep **g, const char *cmd);

/* 1 if rec's pid is one --pid names and its text matches -g, else 0. */
int grep_match(const struct grep *g, const struct kmsg_record *rec);

/* Frees what grep_setup() made (NULL: nothing). */
void grep_free(struct grep *g);

#endif
