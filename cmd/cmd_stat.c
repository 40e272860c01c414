/*
 * cmd_stat.c - kmsg stat: the state of a log (or of a dump): sizes, identity,
 * the records it holds, and what it lost.  Needs read permission only.
 */
#define _GNU_SOURCE
#include "source.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *file_opt;
static int json;

const struct poptOption stat_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log, or a dump made by kmsg dump (-: standard input)", "PATH" },
	{ "json", 'J', POPT_ARG_NONE, &json, 0,
	  "print one JSON object", NULL },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

/* 1048576 as "1.0 MiB", for the human output only. */
static void human_size(char *buf, size_t size, uint64_t v)
{
	char words[32];

	cli_size_words(words, sizeof(words), v);
	if (v < 1024)
		snprintf(buf, size, "%s", words);
	else
		snprintf(buf, size, "%llu (%s)", (unsigned long long)v, words);
}

/* s escaped for a JSON string, valid whatever its bytes; NULL if out of memory. */
static char *json_escaped(const char *s)
{
	size_t len = strlen(s);
	char *buf = malloc(KMSG_JSON_ESCAPE_SIZE(len));

	if (buf && kmsg_json_escape(buf, KMSG_JSON_ESCAPE_SIZE(len), s, len, 0) < 0) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/*
 * s as error messages show it (kmsg_text_escape()), and a newline as \x0a
 * too, so that a name cannot end the line and start another; NULL if out
 * of memory.
 */
static char *text_escaped(const char *s)
{
	size_t len = strlen(s), nl = 0, size = KMSG_TEXT_ESCAPE_SIZE(len);
	char *buf = malloc(size), *out;
	int n;

	if (buf == NULL || (n = kmsg_text_escape(buf, size, s, len, 0)) < 0) {
		free(buf);
		return NULL;
	}
	for (int i = 0; i < n; i++)
		nl += buf[i] == '\n';
	if (nl == 0)
		return buf;
	out = malloc((size_t)n + 3 * nl + 1);
	if (out) {
		char *o = out;

		for (int i = 0; i < n; i++) {
			if (buf[i] == '\n') {
				memcpy(o, "\\x0a", 4);
				o += 4;
			} else {
				*o++ = buf[i];
			}
		}
		*o = '\0';
	}
	free(buf);
	return out;
}

/*
 * For a log cut short, what the file still holds: its bytes, and the
 * records a reader gets from it, so that stat and read agree.
 */
struct cut {
	uint64_t present;    /* 0: not cut short */
	uint64_t readable;
};

static int count_readable(uint64_t *n, struct kmsg_log *log)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int rc = kmsg_reader_new(&r, log, 0);

	*n = 0;
	if (rc < 0)
		return rc;
	while ((rc = kmsg_reader_next(r, &rec)) == 1)
		if (!(rec.flags & KMSG_GAP))
			(*n)++;
	kmsg_reader_free(r);
	return rc < 0 ? rc : 0;
}

/* Prints st; 0, or -ENOMEM with nothing printed. */
static int print_stat(const char *path, int is_dump, const struct kmsg_stat *st,
		      const struct cut *cut)
{
	char id[33], created[64], sz[64], dsz[64], *epath;
	uint64_t records = st->next_seq - st->first_seq;
	double pct = st->data_size ? 100.0 * (double)st->used / (double)st->data_size : 0;

	cli_ring_hex(id, st->ring_id);
	/* ISO 8601 in the local time zone, to the second */
	kmsg_fmt_time(created, sizeof(created), st->created_ns, KMSG_TIME_SHORT_ISO, 0);

	if (json) {
		char *jpath = json_escaped(path);

		if (jpath == NULL)
			return -ENOMEM;
		printf("{\"path\":\"%s\"", jpath);
		free(jpath);
		printf(",\"kind\":\"%s\",\"format_version\":%u,"
		       "\"file_size\":%llu,\"data_size\":%llu,\"max_text\":%u,"
		       "\"ring_id\":\"%s\",\"created\":\"%s\",\"created_ns\":%lld,"
		       "\"created_sec\":%lld,\"created_nsec\":%lld,"
		       "\"records\":%llu,\"first_seq\":%llu,\"last_seq\":",
		       is_dump ? "dump" : "log", st->format_version,
		       (unsigned long long)st->file_size, (unsigned long long)st->data_size,
		       st->max_text, id, created, (long long)st->created_ns,
		       (long long)(st->created_ns / 1000000000), (long long)(st->created_ns % 1000000000),
		       (unsigned long long)records, (unsigned long long)st->first_seq);
		if (records)
			printf("%llu", (unsigned long long)(st->next_seq - 1));
		else
			printf("null");
		if (cut->present)
			printf(",\"cut_short\":true,\"bytes_present\":%llu,\"readable\":%llu",
			       (unsigned long long)cut->present,
			       (unsigned long long)cut->readable);
		printf(",\"next_seq\":%llu,\"clear_seq\":%llu,\"evicted\":%llu,"
		       "\"damaged\":%llu,\"unfinished\":%llu,\"used\":%llu,"
		       "\"used_percent\":%.1f,\"seqnum_id\":\"%016llx\",\"seqnum_id_since\":%llu,"
		       "\"prev_seqnum_id\":",
		       (unsigned long long)st->next_seq, (unsigned long long)st->clear_seq,
		       (unsigned long long)st->evicted, (unsigned long long)st->damaged,
		       (unsigned long long)st->holes, (unsigned long long)st->used, pct,
		       (unsigned long long)st->seq_id, (unsigned long long)st->seq_id_since);
		if (st->prev_seq_id)
			printf("\"%016llx\",\"prev_seqnum_id_since\":%llu",
			       (unsigned long long)st->prev_seq_id,
			       (unsigned long long)st->prev_seq_id_since);
		else
			printf("null,\"prev_seqnum_id_since\":null");
		printf(",\"prev2_seqnum_id\":");
		if (st->prev2_seq_id)
			printf("\"%016llx\"}\n", (unsigned long long)st->prev2_seq_id);
		else
			printf("null}\n");
		return 0;
	}
	human_size(sz, sizeof(sz), st->file_size);
	human_size(dsz, sizeof(dsz), st->data_size);
	epath = text_escaped(path);
	if (epath == NULL)
		return -ENOMEM;
	printf("path:        %s%s\n", epath, is_dump ? " (a dump)" : "");
	free(epath);
	printf("file size:   %s\n", sz);
	if (cut->present)
		printf("cut short:   only %llu bytes are in the file\n",
		       (unsigned long long)cut->present);
	printf("data size:   %s\n", dsz);
	printf("used:        %llu bytes (%.1f%%)\n", (unsigned long long)st->used, pct);
	printf("max text:    %u\n", st->max_text);
	printf("format:      %u\n", st->format_version);
	printf("ring id:     %s\n", id);
	printf("created:     %s\n", created);
	if (cut->present)
		printf("records:     %llu, of which %llu readable: the rest were in "
		       "the part cut off\n", (unsigned long long)records,
		       (unsigned long long)cut->readable);
	else
		printf("records:     %llu\n", (unsigned long long)records);
	if (records) {
		printf("oldest:      %llu\n", (unsigned long long)st->first_seq);
		printf("newest:      %llu\n", (unsigned long long)(st->next_seq - 1));
	} else {
		printf("oldest:      none\n");
		printf("newest:      none\n");
	}
	printf("next:        %llu\n", (unsigned long long)st->next_seq);
	printf("cleared:     below %llu\n", (unsigned long long)st->clear_seq);
	printf("evicted:     %llu\n", (unsigned long long)st->evicted);
	printf("damaged:     %llu\n", (unsigned long long)st->damaged);
	printf("unfinished:  %llu\n", (unsigned long long)st->holes);
	printf("numbering:   %016llx since %llu\n", (unsigned long long)st->seq_id,
	       (unsigned long long)st->seq_id_since);
	if (st->prev_seq_id)
		printf("before it:   %016llx since below %llu%s\n",
		       (unsigned long long)st->prev_seq_id,
		       (unsigned long long)st->prev_seq_id_since,
		       st->prev2_seq_id ? ", and one more" : "");
	return 0;
}

int cmd_stat(int argc, const char **argv)
{
	poptContext con = poptGetContext("kmsg stat", argc, argv, stat_options, 0);
	struct kmsg_log *log = NULL;
	struct kmsg_stat st;
	struct src src = { .fd = -1 };
	struct cut cut = { 0 };
	const char *path;
	int rc, status = EXIT_FAIL;

	status = cli_parse_log_options(con, "stat", &file_opt, &path);
	if (status == 0)
		status = cli_need_stdout();
	if (status != 0)
		goto out;
	status = EXIT_FAIL;
	rc = src_open_for(&src, path, SRC_TAKES_LOG | SRC_TAKES_DUMP);
	if (rc < 0)
		goto out;
	if (rc == 0 && src.kind == SRC_DUMP) {
		/* its header and first record tell all stat says */
		rc = kmsg_dump_stat_fd(&st, src.fd, src.head + src.head_pos,
				       src.head_len - src.head_pos);
		if (rc < 0) {
			if (rc == KMSG_ECORRUPT)
				src_dump_damaged(src.name);
			else
				cli_lib_error(src.name, rc);
			goto out;
		}
		rc = print_stat(src.name, 1, &st, &cut);
		if (rc < 0) {
			cli_lib_error(src.name, rc);
			goto out;
		}
		status = EXIT_OK;
		goto out;
	}
	/* cli_open_log() words a missing or unreadable log */
	log = rc == 1 ? cli_open_log(path, KMSG_OPEN_READ, NULL) :
	      src_open_log(&src, KMSG_OPEN_READ);
	if (log == NULL)
		goto out;
	rc = kmsg_log_stat(&st, log);
	if (rc == 0 && src.kind != SRC_DUMP && (cut.present = cli_cut_short(path, &st)))
		rc = count_readable(&cut.readable, log);
	if (rc < 0) {
		cli_lib_error(path, rc);
		goto out;
	}
	rc = print_stat(src.name ? src.name : path, src.kind == SRC_DUMP, &st, &cut);
	if (rc < 0) {
		cli_lib_error(path, rc);
		goto out;
	}
	status = EXIT_OK;
out:
	src_close(&src);
	kmsg_log_close(log);
	poptFreeContext(con);
	return status;
}
