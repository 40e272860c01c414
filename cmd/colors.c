/*
 * colors.c - terminal-colors.d(5), as util-linux's dmesg reads it.
 *
 * WHICH FILES.  The user's directory, $XDG_CONFIG_HOME/terminal-colors.d
 * (or ~/.config/terminal-colors.d), or only when that does not exist or
 * may not be read, /etc/terminal-colors.d: the two are not merged.  With
 * privileges the user lacks (sudo kmsg read: privilege.h), only /etc's:
 * util-linux reads the invoking user's directory as root, and a scheme
 * is sequences sent to the terminal, from a file that user may write,
 * which root's kmsg then opens (a FIFO, a device, a link anywhere).  Its
 * files are named [NAME][@TERM].TYPE, TYPE one of disable, enable and
 * scheme; a file applies when NAME is missing or names the tool and TERM
 * is missing or is $TERM.  kmsg prints dmesg's output, so a user who
 * turned dmesg's colours off expects kmsg to follow: NAME may be kmsg or
 * dmesg.  Of the files of one type that apply, the most specific wins:
 *
 *   kmsg@TERM  51    kmsg  41    dmesg@TERM  31    dmesg  21
 *   @TERM      11    (no name, no terminal)  1
 *
 * (util-linux's scores, 1 + 10 for a terminal + 20 for a name, with a
 * kmsg file above any dmesg file).  Colour is off when the winning
 * .disable outranks the winning .enable; only the scheme file that wins
 * is read.
 *
 * WHEN.  As in dmesg, the .disable and .enable files decide only when no
 * option asked for colour: --color (any value) and -H decide alone.
 * NO_COLOR, TERM=dumb and output that is not a terminal turn colour off
 * before any file is looked at; --color=always turns it on regardless.
 *
 * SCHEME LINES.  "NAME SEQUENCE": NAME ends at the first space, SEQUENCE
 * follows after blanks and ends at a space; what comes after it, blank
 * lines and lines whose first non-blank is '#' are ignored.  A SEQUENCE
 * that starts with a letter is a colour name (colors[] below); any other
 * is put between ESC '[' and 'm' and its backslash escapes (\e, \n, \_
 * for a space, ...) replaced, as util-linux does, so "1;31" is bold red.
 * NAME is one of dmesg's parts: subsys, time, timebreak, alert, crit,
 * err, warn, segfault; other names are left for other tools.
 *
 * WHERE kmsg DIFFERS.  dmesg stops reading a scheme at the first unknown
 * colour name and then misses the file's colours for the first part it
 * prints; kmsg reports each bad line (the file and line named) and skips
 * it alone.  "lightgray", which util-linux's table misspells, is a colour
 * here.  Only the first 64 KiB of a scheme is read, and at most ten
 * problems of a file are reported, so no file can flood the terminal.
 * A line may end in CR LF: the CR is not part of the colour.
 */
#define _GNU_SOURCE
#include "colors.h"
#include "cmd.h"
#include "privilege.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TC_DIRNAME "terminal-colors.d"
#define TC_SYSDIR "/etc/" TC_DIRNAME

/* A scheme file is read up to this size; util-linux's field width. */
#define SCHEME_MAX (64u * 1024)
#define FIELD_MAX 128
#define WARN_MAX 10

static const char *const types[TC_TYPES] = {
	[TC_DISABLE] = "disable", [TC_ENABLE] = "enable", [TC_SCHEME] = "scheme",
};

/* dmesg's names for the parts it colours, by enum kmsg_color. */
static const char *const parts[KMSG_COLOR_COUNT] = {
	[KMSG_COLOR_SUBSYS] = "subsys",     [KMSG_COLOR_TIME] = "time",
	[KMSG_COLOR_TIMEBREAK] = "timebreak", [KMSG_COLOR_ALERT] = "alert",
	[KMSG_COLOR_CRIT] = "crit",         [KMSG_COLOR_ERR] = "err",
	[KMSG_COLOR_WARN] = "warn",         [KMSG_COLOR_SEGFAULT] = "segfault",
};

/* util-linux's colour names and what they stand for. */
static const struct { const char *name, *seq; } colors[] = {
	{ "black", "\033[30m" },       { "blink", "\033[5m" },
	{ "blue", "\033[34m" },        { "bold", "\033[1m" },
	{ "brown", "\033[33m" },       { "cyan", "\033[36m" },
	{ "darkgray", "\033[1;30m" },  { "gray", "\033[37m" },
	{ "green", "\033[32m" },       { "halfbright", "\033[2m" },
	{ "lightblue", "\033[1;34m" }, { "lightcyan", "\033[1;36m" },
	{ "lightgray", "\033[37m" },   { "lightgreen", "\033[1;32m" },
	{ "lightmagenta", "\033[1;35m" }, { "lightred", "\033[1;31m" },
	{ "magenta", "\033[35m" },     { "red", "\033[31m" },
	{ "reset", "\033[0m" },        { "reverse", "\033[7m" },
	{ "yellow", "\033[1;33m" },    { "white", "\033[1;37m" },
};

/*
 * The rank of a file named name for kmsg on term (NULL: unset), its type
 * in *type; 0 if it is not a terminal-colors.d file or is for another
 * tool or terminal.  *named: it names kmsg or dmesg.
 */
static int rank_of(const char *name, const char *term, int *type, int *named)
{
	const char *dot = strrchr(name, '.'), *t = dot ? dot + 1 : name;
	const char *at, *end;
	size_t n;
	int rank = 1;

	for (*type = 0; *type < TC_TYPES; (*type)++)
		if (strcmp(t, types[*type]) == 0)
			break;
	if (*type == TC_TYPES)
		return 0;
	*named = 0;
	if (t == name)
		return rank;
	end = dot;
	at = memchr(name, '@', (size_t)(end - name));
	if (at) {
		n = (size_t)(end - at - 1);
		/* "NAME@.TYPE" names no terminal: any one, as in util-linux */
		if (n && (term == NULL || strlen(term) != n || memcmp(at + 1, term, n)))
			return 0;
		rank += 10;
		end = at;
	}
	n = (size_t)(end - name);
	if (n == 4 && memcmp(name, "kmsg", 4) == 0)
		rank += 40;
	else if (n == 5 && memcmp(name, "dmesg", 5) == 0)
		rank += 20;
	else if (n)
		return 0;
	*named = n != 0;
	return rank;
}

/* Ranks the files of dir; -errno if it cannot be opened. */
static int scan_dir(struct term_colors *tc, const char *dir)
{
	const char *term = getenv("TERM");
	char best[NAME_MAX + 1] = "";
	struct dirent *d;
	DIR *dp;

	dp = opendir(dir);
	if (dp == NULL)
		return -errno;
	while ((d = readdir(dp)) != NULL) {
		int type, named, rank;

		if (d->d_name[0] == '.' || (d->d_type != DT_UNKNOWN &&
		    d->d_type != DT_REG && d->d_type != DT_LNK))
			continue;
		rank = rank_of(d->d_name, term, &type, &named);
		if (rank == 0 || rank < tc->rank[type])
			continue;
		tc->rank[type] = rank;
		if (type == TC_SCHEME) {
			snprintf(best, sizeof(best), "%s", d->d_name);
			tc->scheme_named = named;
		}
	}
	closedir(dp);
	if (best[0] && asprintf(&tc->scheme, "%s/%s", dir, best) < 0)
		tc->scheme = NULL;
	return 0;
}

/* /etc/terminal-colors.d, or in the test suite's build the directory
 * that stands for it. */
static const char *system_dir(void)
{
#ifdef KMSG_TEST_HOOKS
	const char *sys = getenv(COLORS_TEST_SYSDIR_ENV);

	if (sys && *sys)
		return sys;
#endif
	return TC_SYSDIR;
}

void tc_scan(struct term_colors *tc)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	char dir[PATH_MAX];
	int n = -1, rc = -ENOENT;

	if (tc->scanned)
		return;
	tc->scanned = 1;
	/* with privileges the user lacks, not the user's directory */
	if (!priv_elevated() && xdg && *xdg)
		n = snprintf(dir, sizeof(dir), "%s/" TC_DIRNAME, xdg);
	else if (!priv_elevated() && home && *home)
		n = snprintf(dir, sizeof(dir), "%s/.config/" TC_DIRNAME, home);
	if (n > 0 && (size_t)n < sizeof(dir))
		rc = scan_dir(tc, dir);
	if (rc == -ENOENT || rc == -EACCES || rc == -EPERM)
		scan_dir(tc, system_dir());
}

int tc_disabled(const struct term_colors *tc)
{
	return tc->rank[TC_DISABLE] > tc->rank[TC_ENABLE];
}

/* For a message: the first SHOWN bytes of s (n bytes), what is not
 * printable ASCII as \xNN, "..." after a longer one. */
#define SHOWN 40
static void shown(char *out, size_t size, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 8 < size; i++) {
		if (i == SHOWN) {
			memcpy(out + o, "...", 3);
			o += 3;
			break;
		}
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f)
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", c);
	}
	out[o] = '\0';
}

struct scheme_file {
	const char *path;
	unsigned line, warned;
};

static void warn_line(struct scheme_file *sf, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* "kmsg: 'PATH' line N: ...: line ignored", ten at most per file. */
static void warn_line(struct scheme_file *sf, const char *fmt, ...)
{
	char why[400];
	va_list ap;

	if (++sf->warned > WARN_MAX) {
		if (sf->warned == WARN_MAX + 1)
			cli_error(NULL, "'%s': more bad lines, not reported", sf->path);
		return;
	}
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	cli_error(NULL, "'%s' line %u: %s: line ignored", sf->path, sf->line, why);
}

/*
 * The sequence a scheme gives as s (n bytes, 1 to FIELD_MAX) as a new
 * string: a colour name's, or util-linux's "\033[" s "m" with s's
 * backslash escapes replaced.  NULL for an unknown name (*unknown set)
 * or when memory runs out.
 */
static char *sequence_of(const char *s, size_t n, int *unknown)
{
	static const char esc_from[] = "abefnrtv\\_#?";
	static const char esc_to[] = "\a\b\033\f\n\r\t\v\\ #?";
	char *seq, *o;

	*unknown = 0;
	if (s[0] != '\\' && isalpha((unsigned char)s[0])) {
		for (size_t i = 0; i < sizeof(colors) / sizeof(colors[0]); i++)
			if (strlen(colors[i].name) == n && !memcmp(colors[i].name, s, n))
				return strdup(colors[i].seq);
		*unknown = 1;
		return NULL;
	}
	seq = o = malloc(n + 4);
	if (seq == NULL)
		return NULL;
	memcpy(o, "\033[", 2);
	o += 2;
	for (size_t i = 0; i < n; i++) {
		const char *e;

		/* an escape util-linux does not know stays as it is */
		if (s[i] == '\\' && i + 1 < n &&
		    (e = strchr(esc_from, s[i + 1])) != NULL) {
			*o++ = esc_to[e - esc_from];
			i++;
		} else {
			*o++ = s[i];
		}
	}
	*o++ = 'm';
	*o = '\0';
	return seq;
}

/* One line of a scheme (len bytes at p, no newline).  0 or -ENOMEM. */
static int scheme_line(struct term_colors *tc, struct scheme_file *sf,
		       const char *p, size_t len)
{
	const char *end = p + len, *name, *val;
	size_t nlen, vlen;
	char show[SHOWN * 4 + 8];
	int part, unknown;
	char *seq;

	/* a file written with CR LF line ends */
	if (p < end && end[-1] == '\r')
		end--;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	if (p == end || *p == '#')
		return 0;
	if (memchr(p, '\0', (size_t)(end - p))) {
		warn_line(sf, "holds a NUL byte");
		return 0;
	}
	name = p;
	while (p < end && *p != ' ')
		p++;
	nlen = (size_t)(p - name);
	while (p < end && isspace((unsigned char)*p))
		p++;
	val = p;
	while (p < end && *p != ' ')
		p++;
	vlen = (size_t)(p - val);
	shown(show, sizeof(show), name, nlen);
	if (nlen > FIELD_MAX || vlen > FIELD_MAX) {
		warn_line(sf, "'%s': %s longer than %d bytes", show,
			  nlen > FIELD_MAX ? "a name" : "its colour is", FIELD_MAX);
		return 0;
	}
	if (vlen == 0) {
		warn_line(sf, "'%s': no colour after the name (NAME COLOUR, "
			  "separated by a space)", show);
		return 0;
	}
	for (part = 0; part < KMSG_COLOR_COUNT; part++)
		if (strlen(parts[part]) == nlen && !memcmp(parts[part], name, nlen))
			break;
	if (part == KMSG_COLOR_COUNT) {
		/* a scheme for every tool names other tools' parts */
		if (tc->scheme_named)
			warn_line(sf, "'%s': not one of dmesg's names (subsys, time, "
				  "timebreak, alert, crit, err, warn, segfault)", show);
		return 0;
	}
	seq = sequence_of(val, vlen, &unknown);
	if (seq == NULL && unknown) {
		shown(show, sizeof(show), val, vlen);
		warn_line(sf, "'%s': not a colour name (black, red, green, brown, "
			  "blue, magenta, cyan, gray, bold, reverse, ...) or "
			  "numbers (as 1;31)", show);
		return 0;
	}
	if (seq == NULL)
		return -ENOMEM;
	free(tc->seq[part]);
	tc->seq[part] = seq;
	return 0;
}

int tc_read_scheme(struct term_colors *tc)
{
	struct scheme_file sf = { .path = tc->scheme };
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc = 0;

	if (tc->scheme == NULL)
		return 0;
	/* no wait on a FIFO: a scheme is a regular file */
	fd = open(tc->scheme, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		cli_error(NULL, "'%s': %s: colours as dmesg's", tc->scheme, strerror(errno));
		return 0;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		cli_error(NULL, "'%s': not a regular file: colours as dmesg's", tc->scheme);
		goto out;
	}
	buf = malloc(SCHEME_MAX + 1);
	if (buf == NULL) {
		rc = -ENOMEM;
		goto out;
	}
	while (len <= SCHEME_MAX &&
	       (n = read(fd, buf + len, SCHEME_MAX + 1 - len)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			cli_error(NULL, "'%s': %s: colours as dmesg's", tc->scheme,
				  strerror(errno));
			goto out;
		}
		len += (size_t)n;
	}
	if (len > SCHEME_MAX) {
		cli_error(NULL, "'%s': longer than %u KiB: the rest is ignored",
			  tc->scheme, SCHEME_MAX / 1024);
		len = SCHEME_MAX;
		/* the line cut in two goes too */
		while (len > 0 && buf[len - 1] != '\n')
			len--;
	}
	for (size_t pos = 0; pos < len && rc == 0; ) {
		char *nl = memchr(buf + pos, '\n', len - pos);
		size_t end = nl ? (size_t)(nl - buf) : len;

		sf.line++;
		rc = scheme_line(tc, &sf, buf + pos, end - pos);
		pos = end + 1;
	}
out:
	free(buf);
	close(fd);
	return rc;
}

void tc_free(struct term_colors *tc)
{
	free(tc->scheme);
	for (int i = 0; i < KMSG_COLOR_COUNT; i++)
		free(tc->seq[i]);
	memset(tc, 0, sizeof(*tc));
}
