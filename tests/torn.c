/*
 * torn.c - kmsg-torn: what a power cut can do to a log, done to a copy of
 * a real one, many times over, each time opened and checked.
 *
 *   kmsg-torn [--images N] [--seed S] [--keep DIR] LOG
 *
 * LOG itself is only read.  A copy of it is grown by half a ring of new
 * records, so that an older and a newer state of every page exist, as on a
 * disk that had not written everything back.  Then, N times, a copy of the
 * newer state is damaged the way a power cut can: 4 KiB pages zeroed (never
 * written back), reverted to the older state, or torn at a 512-byte sector
 * (the first sectors new, the rest old); one image in eight is also cut
 * short at a page.  The static header, synced once when the log was made
 * and never written again, keeps its bytes (losing it is test_log.c's
 * case).  Each image is then checked in a child process with a time limit,
 * so a crash or a hang is reported as such:
 *
 *   - it opens read-only, and every record a reader returns is one that
 *     was written (same number, times, identity, text and fields);
 *   - it opens for writing (the first writer after a power cut rebuilds
 *     what it must), and then also: numbers only grow; every gap between
 *     two records returned is reported as lost or damaged, exactly; every
 *     record whose pages the damage did not touch comes back;
 *   - a record can be appended, gets a number never seen before, and
 *     reads back.
 *
 * The last lines are key=value figures.  Exit status 0 if every image
 * passed, 1 if one failed (its image is kept, under --keep DIR or in the
 * scratch directory, which then stays), 2 on bad usage.
 */
#define _GNU_SOURCE
#include "internal.h"
#include "crc32c.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGE 4096
#define SECTOR 512

static const char *progname = "kmsg-torn";

static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", progname);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64*: repeatable from --seed, which a failure report names */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(2685821657736338717);
}

static unsigned char *slurp(const char *path, size_t *len)
{
	struct stat st;
	unsigned char *buf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	buf = malloc((size_t)st.st_size);
	if (!buf)
		die("%s: no memory for a copy of %lld bytes", path, (long long)st.st_size);
	if (pread(fd, buf, (size_t)st.st_size, 0) != st.st_size)
		die("%s: short read", path);
	close(fd);
	*len = (size_t)st.st_size;
	return buf;
}

static void spit(const char *path, const unsigned char *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, buf, len) != (ssize_t)len || close(fd) < 0)
		die("%s: %s", path, strerror(errno));
}

/* ---- what was written: every record of the older and newer state ---- */

struct known { uint64_t seq, digest; };

static struct known *known;
static size_t nknown, known_cap;

/* Everything a reader returns of a record, folded (of its flags, its
 * own, not those that tell of the gap before it): equal digests for one
 * number mean the record came back as written. */
static uint64_t digest(const struct kmsg_record *r)
{
	uint32_t a, b;
	int64_t id[6] = { r->real_ns, r->boot_ns, (int64_t)r->boot_id,
			  (int64_t)r->pid << 32 | r->caller,
			  (int64_t)(r->facility << 16 | r->level << 8 |
				    (r->flags & (KMSG_FRAGMENT | KMSG_BEGIN))),
			  (int64_t)r->text_len };
	a = kmsg__crc32c_extend(0, id, sizeof(id));
	a = kmsg__crc32c_extend(a, r->text, r->text_len);
	b = kmsg__crc32c_extend(~a, r->fields, r->fields_len);
	return (uint64_t)a << 32 | b;
}

static int by_seq(const void *x, const void *y)
{
	const struct known *a = x, *b = y;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static const struct known *find_known(uint64_t seq)
{
	struct known k = { seq, 0 };
	return bsearch(&k, known, nknown, sizeof(k), by_seq);
}

static void learn(const char *path)
{
	struct kmsg_log *log;
	struct kmsg_reader *r;
	struct kmsg_record rec;
	int rc = kmsg_log_open(&log, path, 0);

	if (rc)
		die("%s: %s", path, kmsg_strerror(rc));
	if ((rc = kmsg_reader_new(&r, log, 0)))
		die("%s: %s", path, kmsg_strerror(rc));
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		const struct known *k;
		if (rec.flags & KMSG_GAP)
			continue;
		k = nknown ? find_known(rec.seq) : NULL;
		if (k) {
			if (k->digest != digest(&rec))
				die("%s: record %llu differs between two states of the copy",
				    path, (unsigned long long)rec.seq);
			continue;
		}
		if (nknown == known_cap) {
			known_cap = known_cap ? 2 * known_cap : 4096;
			known = realloc(known, known_cap * sizeof(*known));
			if (!known)
				die("no memory");
		}
		/* in order: a reader returns growing numbers, and the newer
		 * state only adds numbers above the older state's */
		known[nknown++] = (struct known){ rec.seq, digest(&rec) };
	}
	if (rc < 0)
		die("%s: reading: %s", path, kmsg_strerror(rc));
	qsort(known, nknown, sizeof(*known), by_seq);
	kmsg_reader_free(r);
	kmsg_log_close(log);
}

/* Where each record of the newer state lies in the file. */
struct where { uint64_t seq, off, len; };

static struct where *records_of(const unsigned char *img, size_t *n)
{
	const struct kmsg_static *h = (const void *)img;
	const struct kmsg_dyn *d = (const void *)(img + HDR_STATIC);
	uint64_t D = h->data_size, pos = d->head, tail = d->resv_pos;
	struct where *w = malloc((D / REC_HDR + 1) * sizeof(*w));
	size_t k = 0;

	if (!w)
		die("no memory");
	while (pos < tail) {
		uint64_t phys = pos % D;
		const struct rec_hdr *r = (const void *)(img + HDR_SIZE + phys);
		if (D - phys < REC_HDR) {
			pos += D - phys;
			continue;
		}
		if (r->tag != pos || r->len < REC_HDR)
			die("the grown copy is not a clean ring at position %llu",
			    (unsigned long long)pos);
		if (!(r->flags & REC_PAD))
			w[k++] = (struct where){ r->seq, HDR_SIZE + phys, r->len };
		pos += r->len;
	}
	*n = k;
	return w;
}

/* Appends records until half the ring is new: every page then has an
 * older and a newer state, and the ring has likely wrapped. */
static void grow(const char *path)
{
	struct kmsg_log *log;
	struct kmsg_stat st;
	char text[400];
	uint64_t added = 0;
	int rc = kmsg_log_open(&log, path, KMSG_OPEN_WRITE);

	if (rc)
		die("%s: opening the copy for writing: %s", path, kmsg_strerror(rc));
	kmsg_log_stat(&st, log);
	for (uint64_t i = 0; added < st.data_size / 2; i++) {
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		char val[32];
		struct kmsg_field f = { "TORN_I", 6, val, 0 };
		size_t n = (size_t)snprintf(text, sizeof(text), "torn %llu ", (unsigned long long)i);
		for (size_t fill = i * 37 % 300; fill > 0 && n < sizeof(text); fill--)
			text[n] = (char)('a' + (i + n) % 26), n++;
		e.text = text;
		e.text_len = n < st.max_text ? n : st.max_text;
		e.level = (int)(i % 8);
		if (i % 5 == 0) {
			f.value_len = (size_t)snprintf(val, sizeof(val), "%llu", (unsigned long long)i);
			e.fields = &f;
			e.nfields = 1;
		}
		if ((rc = kmsg_log_append(NULL, log, &e)))
			die("%s: appending to the copy: %s", path, kmsg_strerror(rc));
		added += rec_size(e.text_len, e.nfields ? 2 + 7 + f.value_len : 0);
	}
	kmsg_log_close(log);
}

/* ---- one image ---- */

struct result {
	char why[512];          /* empty when the image passed */
	uint64_t ro_returned;   /* records a read-only reader returned */
	uint64_t returned;      /* records returned after a writer opened it */
	uint64_t untouched;     /* records the damage did not touch ... */
	uint64_t recovered;     /* ... and how many of them came back */
	uint64_t reported;      /* records reported lost or damaged */
};

static void fail(struct result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->why, sizeof(res->why), fmt, ap);
	va_end(ap);
	_exit(1);
}

/* Reads the whole log; every record must be one that was written. */
static void read_genuine(struct kmsg_log *log, struct result *res, int strict,
			 uint64_t *returned, char *seen, uint64_t seen_base, uint64_t *maxseq)
{
	struct kmsg_reader *r;
	struct kmsg_record rec;
	uint64_t prev = 0;
	int rc;

	if ((rc = kmsg_reader_new(&r, log, 0)))
		fail(res, "a new reader: %s", kmsg_strerror(rc));
	while ((rc = kmsg_reader_next(r, &rec)) == 1) {
		const struct known *k;
		if (rec.flags & KMSG_GAP) {
			/* Numbers missing at the end: prev + 1 .. seq - 1. */
			if (strict && prev && rec.seq - prev - 1 != rec.lost + rec.damaged)
				fail(res, "records %llu..%llu are missing but %llu were reported",
				     (unsigned long long)prev + 1, (unsigned long long)rec.seq - 1,
				     (unsigned long long)(rec.lost + rec.damaged));
			if (strict && prev) {
				res->reported += rec.lost + rec.damaged;
				prev = rec.seq - 1;
			}
			continue;
		}
		k = find_known(rec.seq);
		if (!k)
			fail(res, "record %llu was never written", (unsigned long long)rec.seq);
		if (k->digest != digest(&rec))
			fail(res, "record %llu does not read back as written",
			     (unsigned long long)rec.seq);
		if (strict) {
			if (prev && rec.seq <= prev)
				fail(res, "record %llu after %llu: numbers went back",
				     (unsigned long long)rec.seq, (unsigned long long)prev);
			if (prev && rec.seq - prev - 1 != rec.lost + rec.damaged)
				fail(res, "records %llu..%llu are missing but %llu were reported",
				     (unsigned long long)prev + 1, (unsigned long long)rec.seq - 1,
				     (unsigned long long)(rec.lost + rec.damaged));
			if (prev)
				res->reported += rec.lost + rec.damaged;
			if (rec.seq >= seen_base)
				seen[rec.seq - seen_base] = 1;
			prev = rec.seq;
			if (rec.seq > *maxseq)
				*maxseq = rec.seq;
		}
		(*returned)++;
	}
	if (rc < 0)
		fail(res, "reading: %s", kmsg_strerror(rc));
	kmsg_reader_free(r);
}

static void check_image(const char *path, const struct where *w, size_t nw,
			const char *touched, struct result *res)
{
	struct kmsg_log *log;
	struct kmsg_record rec;
	struct kmsg_reader *r;
	uint64_t base = nw ? w[0].seq : 0, maxseq = 0, seq, dummy = 0;
	char *seen = calloc(nw ? w[nw - 1].seq - base + 1 : 1, 1);
	const char *text = "written after the power cut";
	int rc;

	rc = kmsg_log_open(&log, path, 0);
	if (rc)
		fail(res, "read-only open: %s", kmsg_strerror(rc));
	read_genuine(log, res, 0, &res->ro_returned, NULL, 0, &dummy);
	kmsg_log_close(log);

	rc = kmsg_log_open(&log, path, KMSG_OPEN_WRITE);
	if (rc)
		fail(res, "open for writing: %s", kmsg_strerror(rc));
	read_genuine(log, res, 1, &res->returned, seen, base, &maxseq);
	for (size_t i = 0; i < nw; i++) {
		int hit = 0;
		for (uint64_t p = w[i].off / PAGE; p <= (w[i].off + w[i].len - 1) / PAGE; p++)
			hit |= touched[p];
		if (hit)
			continue;
		res->untouched++;
		if (!seen[w[i].seq - base])
			fail(res, "record %llu was not touched but did not come back",
			     (unsigned long long)w[i].seq);
		res->recovered++;
	}

	{
		struct kmsg_entry e = KMSG_ENTRY_INIT;
		e.text = text;
		e.text_len = strlen(text) < log->max_text ? strlen(text) : log->max_text;
		if ((rc = kmsg_log_append(&seq, log, &e)))
			fail(res, "appending after the damage: %s", kmsg_strerror(rc));
		if (seq <= maxseq)
			fail(res, "the new record got number %llu, already used",
			     (unsigned long long)seq);
		if ((rc = kmsg_reader_new(&r, log, 0)) || (rc = kmsg_reader_seek_seq(r, seq)))
			fail(res, "seeking the new record: %s", kmsg_strerror(rc));
		if (kmsg_reader_next(r, &rec) != 1 || rec.seq != seq ||
		    rec.text_len != e.text_len || memcmp(rec.text, text, e.text_len))
			fail(res, "the new record %llu does not read back", (unsigned long long)seq);
		kmsg_reader_free(r);
	}
	kmsg_log_close(log);
	free(seen);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "images", required_argument, NULL, 'n' },
		{ "seed", required_argument, NULL, 's' },
		{ "keep", required_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *usage = "usage: kmsg-torn [--images N] [--seed S] [--keep DIR] LOG\n";
	long images = 1000;
	uint64_t seed = 1;
	const char *keep = NULL, *src;
	char dir[256], older_path[300], newer_path[300], img_path[300];
	unsigned char *older, *newer, *copy;
	size_t size, size2, nw, pages;
	struct where *w;
	struct result *res;
	long failed = 0, cuts = 0;
	uint64_t ro = 0, returned = 0, untouched = 0, recovered = 0, reported = 0;
	int c;

	while ((c = getopt_long(argc, argv, "n:s:k:h", opts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'n':
			images = strtol(optarg, &end, 10);
			if (*end || images < 1)
				die("--images wants a count of 1 or more, not '%s'", optarg);
			break;
		case 's':
			seed = strtoull(optarg, &end, 10);
			if (*end)
				die("--seed wants a number, not '%s'", optarg);
			break;
		case 'k':
			keep = optarg;
			break;
		case 'h':
			fputs(usage, stdout);
			return 0;
		default:
			fputs(usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(usage, stderr);
		return 2;
	}
	src = argv[optind];

	snprintf(dir, sizeof(dir), "%s/kmsg-torn-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(dir))
		die("scratch directory: %s", strerror(errno));
	snprintf(older_path, sizeof(older_path), "%s/older", dir);
	snprintf(newer_path, sizeof(newer_path), "%s/newer", dir);
	snprintf(img_path, sizeof(img_path), "%s/image", dir);

	/* The older state is the log as a writer leaves it (a writer's open
	 * repairs a copy taken mid-write); the newer one has half a ring
	 * more.  The log must open as it is first: this tool damages logs,
	 * it does not take broken ones. */
	{
		struct kmsg_log *log;
		int rc = kmsg_log_open(&log, src, 0);
		if (rc)
			die("%s: %s", src, kmsg_strerror(rc));
		kmsg_log_close(log);
	}
	older = slurp(src, &size);
	spit(older_path, older, size);
	free(older);
	grow(older_path);  /* a writer's state, and records even if LOG had none */
	older = slurp(older_path, &size);
	spit(newer_path, older, size);
	grow(newer_path);
	newer = slurp(newer_path, &size2);
	if (size2 != size || size % PAGE)
		die("%s: the copy changed size", src);
	learn(older_path);
	learn(newer_path);
	w = records_of(newer, &nw);
	pages = size / PAGE;
	copy = malloc(size);
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (!copy || res == MAP_FAILED)
		die("no memory");

	for (long it = 0; it < images; it++) {
		char *touched = calloc(pages, 1), what[256];
		size_t len = size, wl = 0;
		pid_t pid;
		int status;

		rng_state = seed * 1000003 + (uint64_t)it + 1;
		memcpy(copy, newer, size);
		for (int k = 0, n = 1 + (int)(rnd() % 4); k < n; k++) {
			size_t p = rnd() % pages, kind = rnd() % 3;
			size_t from = p == 0 ? HDR_STATIC : 0;
			size_t to = p == pages - 1 ? PAGE - HDR_STATIC : PAGE;
			if (kind == 0) {
				memset(copy + p * PAGE + from, 0, to - from);
				wl += (size_t)snprintf(what + wl, sizeof(what) - wl, " zeroed %zu", p);
			} else if (kind == 1) {
				memcpy(copy + p * PAGE + from, older + p * PAGE + from, to - from);
				wl += (size_t)snprintf(what + wl, sizeof(what) - wl, " reverted %zu", p);
			} else {
				size_t cut = (rnd() % (PAGE / SECTOR)) * SECTOR;
				if (cut < from)
					cut = from;
				if (cut < to)
					memcpy(copy + p * PAGE + cut, older + p * PAGE + cut, to - cut);
				wl += (size_t)snprintf(what + wl, sizeof(what) - wl, " torn %zu@%zu", p, cut);
			}
			if (memcmp(copy + p * PAGE, newer + p * PAGE, PAGE))
				touched[p] = 1;
			if (wl >= sizeof(what))
				wl = sizeof(what) - 1;
		}
		if (pages > 1 && rnd() % 8 == 0) {
			size_t keep_pages = 1 + rnd() % (pages - 1);
			len = keep_pages * PAGE;
			memset(touched + keep_pages, 1, pages - keep_pages);
			snprintf(what + wl, sizeof(what) - wl, " cut at %zu", keep_pages);
			cuts++;
		}
		/* A power cut means a reboot, and the first writer after one
		 * knows it by the boot id (the dynamic state's and the
		 * numbering's; in an auxiliary area the cut kept). */
		{
			struct kmsg_static *h = (struct kmsg_static *)copy;
			struct kmsg_aux *a = (struct kmsg_aux *)(copy + HDR_SIZE + h->data_size);
			if (len >= HDR_SIZE + h->data_size + AUX_SIZE) {
				atomic_store(&a->boot_id, 1);
				atomic_store(&a->ident[0].boot, 1);
				atomic_store(&a->ident[1].boot, 1);
			}
		}
		spit(img_path, copy, len);

		memset(res, 0, sizeof(*res));
		pid = fork();
		if (pid < 0)
			die("fork: %s", strerror(errno));
		if (pid == 0) {
			alarm(60 + (unsigned)(size >> 24));
			check_image(img_path, w, nw, touched, res);
			_exit(0);
		}
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid: %s", strerror(errno));
		if (WIFSIGNALED(status))
			snprintf(res->why, sizeof(res->why), "%s",
				 WTERMSIG(status) == SIGALRM ? "hung (no answer within the time limit)"
							     : strsignal(WTERMSIG(status)));
		else if (WEXITSTATUS(status) && !res->why[0])
			snprintf(res->why, sizeof(res->why), "exit status %d", WEXITSTATUS(status));
		if (res->why[0]) {
			char kept[600];
			snprintf(kept, sizeof(kept), "%s/failed-%ld", keep ? keep : dir, it);
			spit(kept, copy, len);
			fprintf(stderr, "%s: image %ld (seed %llu; pages%s): %s; kept as %s\n",
				progname, it, (unsigned long long)seed, what, res->why, kept);
			failed++;
		}
		ro += res->ro_returned;
		returned += res->returned;
		untouched += res->untouched;
		recovered += res->recovered;
		reported += res->reported;
		free(touched);
	}

	unlink(older_path);
	unlink(newer_path);
	unlink(img_path);
	if (!failed)
		rmdir(dir);
	printf("kmsg-torn: %s (%zu bytes, %zu records in the newer state): "
	       "%ld images, %ld cut short, %ld passed, %ld failed\n",
	       src, size, nw, images, cuts, images - failed, failed);
	printf("images=%ld\nfailed=%ld\ncut_short=%ld\nrecords_returned=%llu\n"
	       "records_returned_readonly=%llu\nuntouched_records=%llu\n"
	       "untouched_recovered=%llu\nreported_lost_or_damaged=%llu\n",
	       images, failed, cuts, (unsigned long long)returned, (unsigned long long)ro,
	       (unsigned long long)untouched, (unsigned long long)recovered,
	       (unsigned long long)reported);
	free(copy);
	free(newer);
	free(older);
	free(w);
	free(known);
	return failed ? 1 : 0;
}
