/*
 * export_norm.c - kmsg-export-norm: reads a Journal Export Format stream
 * (kmsg read -o export, journalctl -o export) on standard input, strictly,
 * and prints each entry as its fields, one "NAME=value" line each, sorted,
 * then an empty line, so that two streams with the same entries compare
 * equal with diff(1) whatever order the fields come in and whichever form
 * (text or binary) a value takes.  Bytes of a value outside printable
 * ASCII, and backslashes, are written \xNN.  tests/cli/export.sh uses it.
 *
 *   kmsg-export-norm [-u] [-x NAME]... < STREAM
 *
 * -x leaves out the fields named NAME (journalctl's __CURSOR); -u prints
 * a field given more than once with the same value in an entry once, as
 * a journal file keeps it.  Exit
 * status 0; 1 with the reason on stderr if the stream breaks the format:
 * a binary value cut short or not ended by a newline, a field without a
 * name, an entry not ended by an empty line (the last one included).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char **lines;
static size_t nlines, cap;
static const char *excluded[16];
static size_t nexcluded;
static unsigned long entry = 1;
static int uniq;

static void die(const char *why)
{
	fprintf(stderr, "kmsg-export-norm: entry %lu: %s\n", entry, why);
	exit(1);
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Keeps NAME=value (value escaped) for the entry being read. */
static void add(const char *name, size_t nlen, const unsigned char *v, size_t vlen)
{
	char *s, *p;

	for (size_t i = 0; i < nexcluded; i++) {
		if (strlen(excluded[i]) == nlen && memcmp(excluded[i], name, nlen) == 0)
			return;
	}
	if (nlen == 0)
		die("a field without a name");
	if (nlines == cap) {
		cap = cap ? 2 * cap : 64;
		lines = realloc(lines, cap * sizeof(*lines));
		if (lines == NULL)
			die("out of memory");
	}
	p = s = malloc(nlen + 4 * vlen + 2);
	if (s == NULL)
		die("out of memory");
	memcpy(p, name, nlen);
	p += nlen;
	*p++ = '=';
	for (size_t i = 0; i < vlen; i++) {
		if (v[i] >= 0x20 && v[i] < 0x7f && v[i] != '\\')
			*p++ = (char)v[i];
		else
			p += sprintf(p, "\\x%02x", v[i]);
	}
	*p = '\0';
	lines[nlines++] = s;
}

static void end_entry(void)
{
	qsort(lines, nlines, sizeof(*lines), cmp);
	for (size_t i = 0; i < nlines; i++) {
		if (!uniq || i == 0 || strcmp(lines[i], lines[i - 1]) != 0)
			puts(lines[i]);
	}
	for (size_t i = 0; i < nlines; i++)
		free(lines[i]);
	putchar('\n');
	nlines = 0;
	entry++;
}

int main(int argc, char **argv)
{
	char *line = NULL;
	size_t lcap = 0;
	ssize_t n;
	int open = 0;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-u") == 0) {
			uniq = 1;
		} else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc && nexcluded < 16) {
			excluded[nexcluded++] = argv[++i];
		} else {
			fprintf(stderr, "usage: kmsg-export-norm [-u] [-x NAME]... < STREAM\n");
			return 2;
		}
	}
	while ((n = getline(&line, &lcap, stdin)) > 0) {
		char *eq;

		if (line[n - 1] != '\n')
			die("a line without its newline at the end of the stream");
		if (n == 1) {
			if (!open)
				die("an empty line where an entry should begin");
			end_entry();
			open = 0;
			continue;
		}
		open = 1;
		eq = memchr(line, '=', (size_t)n - 1);
		if (eq) {
			add(line, (size_t)(eq - line), (unsigned char *)eq + 1,
			    (size_t)(n - 2 - (eq - line)));
		} else {
			unsigned char le[8], *v;
			uint64_t len = 0;

			if (fread(le, 1, 8, stdin) != 8)
				die("a binary value without its length");
			for (int i = 7; i >= 0; i--)
				len = len << 8 | le[i];
			if (len > (64u << 20))
				die("a binary value longer than 64 MiB");
			v = malloc(len + 1);
			if (v == NULL)
				die("out of memory");
			if (fread(v, 1, len + 1, stdin) != len + 1)
				die("a binary value cut short");
			if (v[len] != '\n')
				die("a binary value not ended by a newline");
			add(line, (size_t)n - 1, v, len);
			free(v);
		}
	}
	if (open)
		die("the last entry is not ended by an empty line");
	free(line);
	return ferror(stdout) || fflush(stdout) ? 1 : 0;
}
