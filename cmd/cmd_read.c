/*
 * cmd_read.c - kmsg read: print a log as dmesg(1) prints the kernel's, with
 * dmesg's options (options.c); -c clears what was printed, -C only clears.
 *
 * --file may also name a dump made by kmsg dump, or dmesg raw text (what
 * dmesg -r prints): the same options then print exactly what dmesg -F
 * prints for that text.  "-" is standard input, which like any pipe is
 * told apart by its first bytes (source.c's src_open()).
 */
#define _GNU_SOURCE
#include "output.h"
#include "source.h"
#include "lines.h"
#include "cursor.h"
#include "grep.h"
#include "matches.h"
#include "selection.h"
#include "when.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *file_opt, *kmsg_file_opt;
static int read_clear, clear_only;

const struct poptOption read_options[] = {
	{ "file", 'F', POPT_ARG_STRING, &file_opt, 0,
	  "the log to read, or a dump, or dmesg raw text (-: standard input)",
	  "PATH" },
	{ "kmsg-file", 'K', POPT_ARG_STRING, &kmsg_file_opt, 0,
	  "read records in the /dev/kmsg format, as -o kmsg writes them or cat "
	  "/dev/kmsg saves them (-: standard input)", "FILE" },
	{ "read-clear", 'c', POPT_ARG_NONE, &read_clear, 0,
	  "clear the records printed (needs write permission)", NULL },
	{ "clear", 'C', POPT_ARG_NONE, &clear_only, 0,
	  "clear the log without printing it (as kmsg clear)", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)selection_options, 0,
	  "Which records (journalctl's options):", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)cursor_options, 0,
	  "Cursors (journalctl's options):", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_options, 0,
	  "Format and filter options:", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)output_pager_options, 0,
	  NULL, NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)grep_options, 0,
	  "Text and writer filters:", NULL },
	{ NULL, '\0', POPT_ARG_INCLUDE_TABLE, (void *)match_options, 0,
	  "Values:", NULL },
	/* dmesg's -w and -W, to say where they went */
	{ "follow", 'w', POPT_ARG_NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, 'w', NULL, NULL },
	{ "follow-new", 'W', POPT_ARG_NONE | POPT_ARGFLAG_DOC_HIDDEN, NULL, 'W', NULL, NULL },
	CLI_HELP_H
	POPT_AUTOHELP
	POPT_TABLEEND
};

/*
 * The bounds of one record of dmesg text, so that no input makes the
 * buffers grow without end: dmesg's own records are at most about 1 KiB,
 * one longer than either bound is printed cut short there (a word on
 * stderr), the rest of it skipped up to the next record.  4 MiB of text
 * renders in at most 16 MiB; 64 Ki lines add at most 64 Ki indents.
 * Lines come from the reader in pieces of at most TEXT_CHUNK.
 */
#define TEXT_RECORD_MAX (4u << 20)
#define TEXT_LINES_MAX  65536u
#define TEXT_CHUNK      (1u << 20)

struct text_in {
	struct output *o;
	struct src *s;
	int64_t boot_ns;
	unsigned flags;     /* of kmsg_dmesg_parse_flags() */
	/* the record being read, when it is more than one line */
	char *rec;
	size_t rec_len, rec_cap;
	uint64_t rec_off;   /* where it starts in the input */
	size_t lines;       /* its newlines */
	int skipping;       /* it was printed cut short: the rest is skipped */
};

/* One dmesg record of text (its terminating newline included) printed. */
static int text_record(struct text_in *t, const char *p, size_t n)
{
	struct kmsg_record rec;
	int rc;

	/* dmesg skips NULs where a record would start */
	while (n > 0 && *p == '\0') {
		p++;
		n--;
	}
	rc = kmsg_dmesg_parse_flags(&rec, p, n, t->boot_ns, t->flags);
	if (rc < 0) {
		out_flush(t->o);
		cli_error(t->s->name, "a record with a time out of range skipped");
		return 0;
	}
	if (rc == 0)
		return 0;
	return out_record(t->o, &rec);
}

/* The first n bytes of the record gathered printed cut short, and said so. */
static int text_cut(struct text_in *t, size_t n, const char *why)
{
	int rc = text_record(t, t->rec, n);

	if (rc == 0 && (rc = out_flush(t->o)) == 0)
		cli_error(t->s->name, "the record at byte %llu has more than %s: "
			  "printed cut short, the rest skipped",
			  (unsigned long long)t->rec_off, why);
	return rc;
}

/* n bytes more of the record (n fits in TEXT_RECORD_MAX + 1 with it). */
static int text_gather(struct text_in *t, const char *p, size_t n)
{
	if (t->rec_len + n > t->rec_cap) {
		size_t cap = t->rec_cap ? t->rec_cap : 65536;
		char *b;

		while (cap < t->rec_len + n)
			cap *= 2;
		if (cap > TEXT_RECORD_MAX + 1)
			cap = TEXT_RECORD_MAX + 1;
		b = realloc(t->rec, cap);
		if (b == NULL)
			return -ENOMEM;
		t->rec = b;
		t->rec_cap = cap;
	}
	memcpy(t->rec + t->rec_len, p, n);
	t->rec_len += n;
	return 0;
}

/*
 * One line of dmesg text (or a piece of a long one), next being the byte
 * after it, added to the record it belongs to, which is printed when it
 * ends.  A record of one line is printed from where it was read; only a
 * longer one is gathered.
 */
static int text_line(struct text_in *t, const struct line *ln, int next)
{
	int nl = ln->end == LINE_NEWLINE, rc;
	int ends = ln->end == LINE_EOF || (nl && (next == '<' || next == LINES_END));
	size_t n = ln->len + nl;

	if (t->skipping) {
		t->skipping = !ends;
		t->lines = 0;
		return 0;
	}
	if (t->rec_len == 0)
		t->rec_off = ln->off;
	t->lines += nl;
	/* the record gathered is never more than TEXT_RECORD_MAX bytes: one
	 * whose text (its newline too, when it goes on) would be more is cut
	 * there */
	if (t->rec_len + ln->len > TEXT_RECORD_MAX ||
	    (!ends && t->rec_len + n > TEXT_RECORD_MAX)) {
		rc = text_gather(t, ln->p, TEXT_RECORD_MAX - t->rec_len);
		if (rc == 0)
			rc = text_cut(t, TEXT_RECORD_MAX, "4 MiB");
	} else if (nl && next != '<' && t->lines == TEXT_LINES_MAX) {
		rc = text_gather(t, ln->p, n);
		if (rc == 0)
			rc = text_cut(t, t->rec_len, "65536 lines");
	} else if (ends) {
		rc = t->rec_len ? text_gather(t, ln->p, n) : 0;
		if (rc == 0)
			rc = t->rec_len ? text_record(t, t->rec, t->rec_len) :
			     text_record(t, ln->p, n);
		t->rec_len = 0;
		t->lines = 0;
		return rc;
	} else {
		return text_gather(t, ln->p, n);
	}
	t->skipping = !ends;
	t->rec_len = 0;
	t->lines = 0;
	return rc;
}

/* The input's next bytes, what was printed written out first when they
 * are not there yet (a live pipe): its errors come back at the end. */
static ssize_t text_read(void *ctx, char *buf, size_t n)
{
	struct text_in *t = ctx;

	if (src_idle(t->s))
		(void)out_flush(t->o);
	return src_read(t->s, buf, n);
}

/*
 * Prints dmesg raw text from s, read in large chunks.  Records are cut as
 * dmesg -F cuts them: a record ends at a newline followed by '<', so a
 * line that does not start with '<' continues the message before it
 * (multi-line messages), and only the last record loses its final
 * newline; see TEXT_RECORD_MAX for records too long.  With -r and no
 * filter the text is printed as it is (escaped), as dmesg -F -r does, a
 * long line in pieces.  Text that turns binary stops the reading with an
 * error.  Returns an exit status.
 */
static int read_text(struct output *o, struct src *s)
{
	int verbatim = o->fo.output == KMSG_OUT_SHORT &&
		       o->fo.time == KMSG_TIME_RAW && !o->filtering && !o->values &&
		       !(o->fo.flags & KMSG_FMT_FORCE_PREFIX);
	/* a record ends at a newline before '<': the byte after a line must
	 * be known; printed verbatim, the text goes through in runs of
	 * lines, and a piece must not cut a character */
	struct text_in t = { .o = o, .s = s };
	struct lines *lr = lines_new(TEXT_CHUNK, LINES_PIECES | (verbatim ?
				     LINES_BATCH | LINES_UTF8 : LINES_LOOKAHEAD),
				     text_read, &t);
	struct line ln;
	int rc, status = EXIT_FAIL;

	/* the clocks cannot fail here; if they did, times since boot
	 * would still be right */
	(void)when_boot_time(&t.boot_ns);
	/* dmesg reads "<N>" only when it prints or filters on it */
	if (o->fo.output == KMSG_OUT_SHORT && o->fo.time != KMSG_TIME_RAW &&
	    !o->prio_filter && !(o->fo.flags & (KMSG_FMT_DECODE | KMSG_FMT_COLOR)) &&
	    !match_prio(o->matches) && !values_prio(o->values))
		t.flags = KMSG_DMESG_SKIP_PRIO;
	if (lr == NULL || out_text_input(o) < 0) {
		cli_error(NULL, "out of memory");
		goto out;
	}
	out_pager_start(o);
	while ((rc = lines_next(lr, &ln)) > 0) {
		rc = verbatim ? out_verbatim(o, ln.p, ln.len + (ln.end == LINE_NEWLINE),
					     ln.end != LINE_GOES_ON) :
		     text_line(&t, &ln, lines_next_byte(lr));
		if (rc < 0) {
			status = out_fail(o, rc);
			goto out;
		}
	}
	if (rc < 0) {
		out_flush(o);
		src_read_error(s, rc, "dmesg text");
		goto out;
	}
	rc = out_end(o);
	if (rc < 0) {
		status = out_fail(o, rc);
		goto out;
	}
	status = EXIT_OK;
out:
	lines_free(lr);
	free(t.rec);
	return status;
}

/*
 * Prints the records of log that are not cleared (or from --since on):
 * whole lines, fragments joined, the incomplete lines at the end shown as
 * they are.  Gaps (records lost to writers or damaged) are reported on
 * stderr where they occur.  With clear, marks as cleared every record up
 * to the last one printed (or filtered out), never one written after it,
 * and leaves a line begun in the last OUT_FRAGMENT_WAIT_NS, and all after
 * it, to the next read -c.  log_file says log is a log file (not a copy
 * of one): one cut short is then said to be.  A cursor given starts the
 * reading there (cleared records still left out); the cursor of the end
 * is made of the last record read, printed or filtered out.  Returns an
 * exit status.
 */
static int read_log(struct output *o, struct selection *sel, struct cursor *cur,
		    struct kmsg_log *log, const char *path, int clear, int log_file)
{
	struct kmsg_reader *r = NULL;
	struct kmsg_record rec;
	struct kmsg_stat st;
	uint64_t start = 0;
	int rc, status = EXIT_FAIL, flushed = 0, any = 0;

	rc = kmsg_log_stat(&st, log);
	if (rc == 0)
		rc = kmsg_reader_new(&r, log, KMSG_READER_JOIN | KMSG_READER_ORDER);
	if (rc == 0) {
		cur_log(cur, st.ring_id);
		if (cur_start(cur, &start, log, path) != 0)
			goto out;
		if (cur->given && start < st.clear_seq)
			start = st.clear_seq;
		sel->cursor = cur->given;
		sel->cursor_from = start;
	}
	/* A consumer (read -c) from the mark it left: records evicted since
	 * before it could see them are reported as lost; so is a cursor. */
	if (rc == 0 && sel->active) {
		if (sel_seek(sel, r, log, o, &st, path) != 0)
			goto out;
	} else if (rc == 0) {
		rc = cur->given ? kmsg_reader_seek_seq(r, start) :
		     o->have_since ? kmsg_reader_seek_time(r, o->since_ns) :
		     clear ? kmsg_reader_seek_seq(r, st.clear_seq) :
		     kmsg_reader_seek(r, KMSG_SEEK_CLEARED);
	}
	if (rc < 0) {
		cli_lib_error(path, rc);
		goto out;
	}
	if (log_file)
		cli_cut_short(path, &st);
	out_pager_start(o);
	for (;;) {
		rc = kmsg_reader_next(r, &rec);
		if (rc < 0) {
			out_flush(o);
			cli_lib_error(path, rc);
			goto out;
		}
		if (cli_file_cut(path, "read")) {
			out_flush(o);
			goto out;
		}
		if (rc == 0) {
			/* The end: now the lines still waiting for their end.
			 * -c leaves a line begun in the last moments (and what
			 * came after it) for the next read -c, which then sees
			 * it whole: it is neither printed nor cleared now. */
			if (flushed)
				break;
			kmsg_reader_flush(r, clear ? cli_now_ns(CLOCK_REALTIME) - OUT_FRAGMENT_WAIT_NS
					  : INT64_MAX);
			flushed = 1;
			continue;
		}
		any = 1;
		OUT_GAPS(o, &rec);
		/* a time seek may land before the clear mark */
		if (o->have_since && rec.seq < st.clear_seq)
			continue;
		rc = sel->active ? sel_record(sel, o, &rec) : out_record(o, &rec);
		if (rc == 1)
			break;  /* past the selection */
		if (rc < 0) {
			status = sel_said(sel) ? EXIT_FAIL : out_fail(o, rc);
			goto out;
		}
		cur_note(cur, &rec, r);
	}
	out_gaps_flush(o, 1);
	rc = sel_end(sel, o);
	if (rc == 0)
		rc = out_end(o);
	if (rc < 0) {
		status = sel_said(sel) ? EXIT_FAIL : out_fail(o, rc);
		goto out;
	}
	if (clear && any) {
		/* the reader's position is one past the last record it
		 * returned: a record written since is above it and stays */
		rc = kmsg_log_clear(log, kmsg_reader_position(r));
		if (rc < 0) {
			cli_lib_error(path, rc);
			goto out;
		}
	}
	status = cur_end(cur, o);
out:
	kmsg_reader_free(r);
	return status;
}

int cmd_read(int argc, const char **argv)
{
	const char **args = sel_join_boot_arg(&argc, argv);
	poptContext con;
	struct output o;
	struct kmsg_log *log = NULL;
	struct src src = { .fd = -1 };
	struct selection sel = { 0 };
	struct cursor cur = { 0 };
	const char *path;
	const char *const *words;
	int rc, status = EXIT_FAIL;

	out_init(&o);
	if (args)
		match_protect_args(argc, args, read_options);
	con = poptGetContext("kmsg read", argc, args ? args : argv, read_options, 0);
	poptSetOtherOptionHelp(con, "[OPTION...] [KEY=value...]");
	while ((rc = poptGetNextOpt(con)) > 0) {
		if (rc == CLI_OPT_H)
			cli_help(con);
		status = cli_usage_error("read", rc == 'w' ? "-w" : "-W", "use 'kmsg follow' "
					 "(-n all for dmesg -w, -n 0 for dmesg -W)");
		goto out;
	}
	if (rc < -1) {
		status = cli_popt_error(con, "read", rc);
		goto out;
	}
	words = poptGetArgs(con);
	if (read_clear && clear_only) {
		status = cli_usage_error("read", NULL, "--read-clear and --clear cannot be "
					 "used together");
		goto out;
	}
	if (kmsg_file_opt &&
	    cli_path_given("read", "--kmsg-file", kmsg_file_opt, "input") != 0) {
		status = EXIT_USAGE;
		goto out;
	}
	if (kmsg_file_opt && (file_opt || read_clear || clear_only)) {
		status = cli_usage_error("read", "--kmsg-file", "cannot be used with %s",
					 file_opt ? "--file" : read_clear ? "--read-clear" :
					 "--clear");
		goto out;
	}
	status = sel_setup(&sel, "read");
	if (status != 0)
		goto out;
	if (kmsg_file_opt && (sel.active || sel.list_boots)) {
		status = cli_usage_error("read", "--kmsg-file", "has no boots to list nor "
					 "an end to count back from: --boot, --list-boots, "
					 "--lines and --reverse read a log or a dump");
		goto out;
	}
	status = cur_setup(&cur, "read");
	if (status != 0)
		goto out;
	if ((read_clear || clear_only) && cur.active) {
		status = cli_usage_error("read", NULL, "--read-clear and --clear keep their "
					 "own position, the clear mark: they cannot be used "
					 "with the cursor options");
		goto out;
	}
	if (kmsg_file_opt && cur.active) {
		status = cli_usage_error("read", "--kmsg-file", "cannot be used with the "
					 "cursor options: a cursor names a place in a log");
		goto out;
	}
	if (sel.list_boots && cur.active) {
		status = cli_usage_error("read", NULL, "--list-boots cannot be used with the "
					 "cursor options");
		goto out;
	}
	if ((read_clear || clear_only) && (sel.active || sel.list_boots)) {
		status = cli_usage_error("read", NULL, "--read-clear and --clear cannot be "
					 "used with --boot, --list-boots, --lines or --reverse");
		goto out;
	}
	if (!clear_only) {
		status = cli_need_stdout();
		if (status != 0)
			goto out;
	}
	status = out_setup(&o, "read", 0, words);
	if (status != 0)
		goto out;
	if (o.values && (read_clear || clear_only || sel.list_boots)) {
		status = cli_usage_error("read", "--list-values", "cannot be used with %s",
					 sel.list_boots ? "--list-boots" : read_clear ?
					 "--read-clear" : "--clear");
		goto out;
	}
	if (kmsg_file_opt) {
		status = read_kmsg_file(&o, kmsg_file_opt);
		goto out;
	}
	status = EXIT_FAIL;
	path = cli_log_path(file_opt);
	if (path == NULL)
		goto out;
	if (clear_only) {
		const char *sub[] = { "clear", "--file", path, NULL };

		status = cmd_clear(3, sub);
		goto out;
	}

	rc = src_open_for(&src, path, SRC_TAKES_LOG | SRC_TAKES_DUMP | SRC_TAKES_TEXT);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		/* cli_open_log() words the error as every subcommand does */
		log = cli_open_log(path, read_clear ? KMSG_OPEN_WRITE : 0, NULL);
		if (log == NULL)
			goto out;
		src.kind = SRC_LOG;
	}
	if (read_clear && (src.kind != SRC_LOG || src.stream)) {
		cli_error(src.name, "is %s, which cannot be cleared",
			  src.kind == SRC_DUMP ? "a kmsg dump" :
			  src.kind == SRC_LOG ? "a copy of a log" : "not a kmsg log");
		goto out;
	}
	if (src.kind == SRC_LOG && src.empty && !read_clear) {
		/* A log not yet made holds no record: read as nothing, as
		 * dmesg reads an empty file, but never in silence. */
		cli_error(src.name, "is empty: a log not yet made, or one emptied in place "
			  "(logrotate's copytruncate and create modes do that: see ROTATION "
			  "in kmsg(5)); nothing to read");
		status = read_text(&o, &src);
		goto out;
	}
	switch (src.kind) {
	case SRC_TEXT:
		if (sel.active || sel.list_boots) {
			cli_error(src.name, "is dmesg text, which has no boots nor an end "
				  "to count back from: --boot, --list-boots, --lines and "
				  "--reverse read a log or a dump");
			goto out;
		}
		if (cur.active) {
			cli_error(src.name, "is dmesg text, which has no sequence numbers: "
				  "the cursor options read a log or a dump");
			goto out;
		}
		status = read_text(&o, &src);
		goto out;
	default:
		if (log == NULL)
			log = src_open_log(&src, read_clear ? KMSG_OPEN_WRITE : 0);
		if (log == NULL)
			goto out;
	}
	if (sel.list_boots)
		status = sel_list_boots(&o, log, src.name);
	else
		status = read_log(&o, &sel, &cur, log, src.name, read_clear,
				  src.kind == SRC_LOG && !src.stream);
out:
	sel_free(&sel);
	cur_free(&cur);
	src_close(&src);
	out_free(&o);
	kmsg_log_close(log);
	poptFreeContext(con);
	free(args);
	return status;
}
